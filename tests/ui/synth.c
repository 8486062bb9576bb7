/* synth.c -- deterministic synthetic traces for UI tests (see synth.h). */
#include "synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYNTH_MAX 512

struct tok {
	char s[80];
	bool special;
	int type;
};

static int add(struct tok *t, int n, const char *s, bool special, int type)
{
	if (n >= SYNTH_MAX)
		return n;
	snprintf(t[n].s, sizeof t[n].s, "%s", s);
	t[n].special = special;
	t[n].type = type;
	return n + 1;
}

static int words(struct tok *t, int n, const char *text, enum synth_style style, int type)
{
	bool first = true;
	const char *p = text;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		const char *e = p;
		while (*e && *e != ' ')
			e++;
		char w[64];
		size_t len = (size_t)(e - p) < sizeof w - 3 ? (size_t)(e - p) : sizeof w - 3;
		memcpy(w, p, len);
		w[len] = 0;
		if (style == SYNTH_GPT2) {
			char g[72];
			snprintf(g, sizeof g, "%s%s", first ? "" : "\xc4\xa0", w);
			n = add(t, n, g, false, type);
		} else if (len > 5) {
			/* Split after 4 bytes, moved forward to a character boundary. */
			size_t cut = 4;
			while (cut < len && ((unsigned char)w[cut] & 0xc0) == 0x80)
				cut++;
			char a[72], b[72];
			memcpy(a, w, cut);
			a[cut] = 0;
			snprintf(b, sizeof b, "##%s", w + cut);
			if (cut == len) {
				n = add(t, n, w, false, type);
				first = false;
				p = e;
				continue;
			}
			n = add(t, n, a, false, type);
			n = add(t, n, b, false, type);
		} else {
			n = add(t, n, w, false, type);
		}
		first = false;
		p = e;
	}
	return n;
}

static int32_t synth_id(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return (int32_t)(1000 + h % 29000);
}

/* The score of query I for key J in head H of layer L: head h follows pattern h % 4 (previous token,
 * first token with score FIRST, self, broad). */
static double synth_score(int h, int l, int i, int j, double first)
{
	switch (h % 4) {
	case 0: return -3.0 * fabs((double)(j - (i - 1)));
	case 1: return j == 0 ? first : 0.1 * j;
	case 2: return -2.0 * abs(i - j);
	default: return sin(0.7 * i + 1.3 * j + l);
	}
}

struct trace *synth_trace(const char *text, const char *text_b, int n_layers, int n_heads, enum synth_style style)
{
	struct tok *tk = calloc(SYNTH_MAX, sizeof *tk);
	if (!tk)
		return NULL;
	int n = 0;
	if (style == SYNTH_BERT) {
		n = add(tk, n, "[CLS]", true, 0);
		n = words(tk, n, text, style, 0);
		n = add(tk, n, "[SEP]", true, 0);
		if (text_b) {
			n = words(tk, n, text_b, style, 1);
			n = add(tk, n, "[SEP]", true, 1);
		}
	} else {
		n = words(tk, n, text, style, 0);
	}
	int hd = 4;
	struct trace *t = trace_new(n_layers, n_heads, hd, hd * n_heads, n);
	if (!t) {
		free(tk);
		return NULL;
	}
	snprintf(t->model_name, sizeof t->model_name, "%s", style == SYNTH_BERT ? "synthetic-bert" : "synthetic-gpt2");
	snprintf(t->family, sizeof t->family, "%s", style == SYNTH_BERT ? "bert" : "gpt2");
	t->pieces = style == SYNTH_BERT ? TOKENIZER_PIECES_WORDPIECE : TOKENIZER_PIECES_BYTE_LEVEL;
	t->causal = style == SYNTH_GPT2;
	t->max_positions = SYNTH_MAX;
	for (int i = 0; i < n; i++) {
		t->tokens[i] = strdup(tk[i].s);
		if (!t->tokens[i]) {
			trace_free(t);
			free(tk);
			return NULL;
		}
		t->special[i] = tk[i].special;
		t->type_ids[i] = tk[i].type;
		t->ids[i] = !strcmp(tk[i].s, "[CLS]") ? 101 : !strcmp(tk[i].s, "[SEP]") ? 102 : synth_id(tk[i].s);
	}
	free(tk);
	double *row = malloc((n ? (size_t)n : 1) * sizeof *row);
	if (!row) {
		trace_free(t);
		return NULL;
	}
	for (int l = 0; l < n_layers; l++)
		for (int h = 0; h < n_heads; h++) {
			float *a = t->attn + ((size_t)l * n_heads + h) * (size_t)n * n;
			double sharp = 1.0 + 0.3 * l;
			for (int i = 0; i < n; i++) {
				int last = t->causal ? i : n - 1;
				double mx = -1e30, sum = 0;
				for (int j = 0; j <= last; j++) {
					row[j] = synth_score(h, l, i, j, 3.0) * sharp;
					if (row[j] > mx)
						mx = row[j];
				}
				for (int j = 0; j <= last; j++)
					sum += row[j] = exp(row[j] - mx);
				for (int j = 0; j < n; j++)
					a[(size_t)i * n + j] = j <= last ? (float)(row[j] / sum) : 0.0f;
			}
			for (int i = 0; i < n * hd; i++) {
				size_t o = ((size_t)l * n_heads + h) * (size_t)n * hd + i;
				t->q[o] = (float)sin(0.1 * i + l + h);
				t->k[o] = (float)cos(0.1 * i + l - h);
				t->v[o] = (float)sin(0.2 * i - l);
			}
		}
	free(row);
	return t;
}

struct trace *synth_decoder_trace(const char *text, int n_layers, int n_heads, const struct synth_decoder *d)
{
	struct tok *tk = calloc(SYNTH_MAX, sizeof *tk);
	if (!tk)
		return NULL;
	int n = add(tk, 0, "<s>", true, 0);
	const char *p = text;
	while (*p && n < SYNTH_MAX) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		const char *e = strchr(p, ' ');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char w[80];
		snprintf(w, sizeof w, "\xe2\x96\x81%.*s", (int)(len < 60 ? len : 60), p);
		n = add(tk, n, w, false, 0);
		p += len;
	}
	int hd = 4, kv = d->n_kv_heads > 0 ? d->n_kv_heads : n_heads;
	struct trace_shape shape = {n_layers, n_heads, kv, hd, hd * n_heads, n, d->rotary, false, 0, false};
	struct trace *t = trace_new_shaped(&shape);
	double *row = malloc((size_t)n * sizeof *row);
	if (!t || !row) {
		trace_free(t);
		free(row);
		free(tk);
		return NULL;
	}
	snprintf(t->model_name, sizeof t->model_name, "synthetic-llama");
	snprintf(t->family, sizeof t->family, "llama");
	t->causal = true;
	t->max_positions = SYNTH_MAX;
	for (int i = 0; i < n; i++) {
		t->tokens[i] = strdup(tk[i].s);
		t->special[i] = tk[i].special;
		t->ids[i] = i == 0 ? 1 : synth_id(tk[i].s);
	}
	free(tk);
	for (int l = 0; l < n_layers; l++) {
		t->win_before[l] = d->window > 0 ? d->window - 1 : -1;
		for (int h = 0; h < n_heads; h++) {
			float *a = t->attn + ((size_t)l * n_heads + h) * (size_t)n * n;
			for (int i = 0; i < n; i++) {
				int lo, hi;
				trace_key_range(t, l, i, &lo, &hi);
				double mx = -1e30, sum = 0;
				for (int j = lo; j <= hi; j++) {
					double x = synth_score(h, l, i, j, 4.0);
					row[j] = x;
					mx = x > mx ? x : mx;
				}
				for (int j = lo; j <= hi; j++)
					sum += row[j] = exp(row[j] - mx);
				for (int j = 0; j < n; j++)
					a[(size_t)i * n + j] = j >= lo && j <= hi ? (float)(row[j] / sum) : 0.0f;
			}
		}
		/* Projections, then their rotation by position. */
		for (int pass = 0; pass < 2; pass++) {
			int heads = pass ? kv : n_heads;
			float *raw = pass ? (d->rotary ? t->k_raw : t->k) : (d->rotary ? t->q_raw : t->q);
			float *rot = pass ? t->k : t->q;
			for (int h = 0; h < heads; h++)
				for (int i = 0; i < n; i++)
					for (int x = 0; x < hd; x += 2) {
						size_t o = (((size_t)l * heads + h) * n + i) * hd + x;
						double u = sin(0.3 * i + 0.7 * x + l + (pass ? -h : h) + pass);
						double v = cos(0.5 * i - 0.2 * x + l + h);
						raw[o] = (float)u, raw[o + 1] = (float)v;
						double th = d->rotary ? i * pow(100.0, -(double)x / hd) : 0;
						rot[o] = (float)(u * cos(th) - v * sin(th));
						rot[o + 1] = (float)(u * sin(th) + v * cos(th));
					}
			if (pass)
				for (size_t o = 0; o < (size_t)kv * n * hd; o++)
					t->v[(size_t)l * kv * n * hd + o] = (float)sin(0.2 * o - l);
		}
	}
	free(row);
	return t;
}
