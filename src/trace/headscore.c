/* headscore.c -- pattern scores and labels of every head, for the head finder (see headscore.h). */
#include "trace/headscore.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "trace/compare.h"

static const char *const hs_names[HS_COUNT] = {
#define HS_NAME(id, name, help) name,
	HEADSCORES(HS_NAME)
#undef HS_NAME
};
static const char *const hs_help[HS_COUNT] = {
#define HS_HELP(id, name, help) help,
	HEADSCORES(HS_HELP)
#undef HS_HELP
};

const char *headscore_name(enum headscore_kind k)
{
	return k >= 0 && k < HS_COUNT ? hs_names[k] : "?";
}

const char *headscore_help(enum headscore_kind k)
{
	return k >= 0 && k < HS_COUNT ? hs_help[k] : "?";
}

int headscore_by_name(const char *name)
{
	for (int k = 0; k < HS_COUNT; k++)
		if (!strcmp(hs_names[k], name))
			return k;
	return -1;
}

int headscore_is_punct(const struct trace *t, int i)
{
	const char *s = t->tokens[i];
	if (!s || t->special[i])
		return 0;
	size_t n = strlen(s);
	if (n > 2 && s[0] == '#' && s[1] == '#') /* WordPiece continuation */
		s += 2, n -= 2;
	int seen = 0;
	while (n > 0) {
		utf8proc_int32_t cp;
		utf8proc_ssize_t got = utf8proc_iterate((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)n, &cp);
		if (got <= 0)
			return 0;
		s += got, n -= (size_t)got;
		if (cp == 0x120 && !seen) /* GPT-2's byte-level space marker 'Ġ' */
			continue;
		utf8proc_category_t c = utf8proc_category(cp);
		if (c < UTF8PROC_CATEGORY_PC || c > UTF8PROC_CATEGORY_PO)
			return 0;
		seen = 1;
	}
	return seen;
}

/* Weight score names and the label each gives a head. */
static const struct {
	enum headscore_kind k;
	const char *label;
} hs_labels[] = {
	{HS_PREV, "previous"}, {HS_NEXT, "next"},         {HS_SELF, "self"},       {HS_FIRST, "first"},
	{HS_SEP, "[SEP]"},     {HS_PUNCT, "punctuation"}, {HS_DUP, "duplicate"}, {HS_INDUCTION, "induction"},
	{HS_DIAGONAL, "diagonal"}, {HS_EOS, "end token"}, /* cross-attention's: NaN in self-attention */
};

void headscore_head(const struct trace *t, int layer, int head, const float *a, const bool *punct,
		   struct headscore *out)
{
	int n = t->n;
	memset(out, 0, sizeof *out);
	out->layer = layer;
	out->head = head;
	double sum[HS_COUNT] = {0};
	int rows[HS_COUNT] = {0};
	int has_sep = 0, has_punct = 0;
	for (int j = 1; j < n; j++)
		has_sep |= t->special[j];
	for (int j = 0; j < n; j++)
		has_punct |= punct[j];
	double norm_sum = 0;
	int norm_rows = 0;
	for (int i = 0; i < n; i++) {
		const float *r = a + (size_t)i * n;
		if (i >= 1)
			sum[HS_PREV] += r[i - 1], rows[HS_PREV]++;
		if (i + 1 < n)
			sum[HS_NEXT] += r[i + 1], rows[HS_NEXT]++;
		sum[HS_SELF] += r[i], rows[HS_SELF]++;
		int lo, hi;
		trace_key_range(t, layer, i, &lo, &hi);
		if (lo == 0) /* a sliding window can hide the first token */
			sum[HS_FIRST] += r[0], rows[HS_FIRST]++;
		if (t->sinks) /* the learned sink's share: what the row's keys did not get */
			sum[HS_SINK] += trace_sink_share(t, r), rows[HS_SINK]++;
		else if (lo == 0)
			sum[HS_SINK] += r[0], rows[HS_SINK]++;
		double sep = 0, on_punct = 0, ent = 0, dist = 0, dup = 0, ind = 0;
		int any_dup = 0, any_ind = 0;
		for (int j = 0; j < n; j++) {
			double p = r[j];
			if (j > 0 && t->special[j])
				sep += p;
			if (punct[j])
				on_punct += p;
			if (p > 0)
				ent -= p * log(p);
			dist += p * abs(i - j);
			if (j < i && t->ids[j] == t->ids[i])
				dup += p, any_dup = 1;
			/* j is a target when the token before it is an earlier copy of token i. */
			if (j >= 1 && j < i && t->ids[j - 1] == t->ids[i])
				ind += p, any_ind = 1;
		}
		sum[HS_SEP] += sep, rows[HS_SEP]++;
		sum[HS_PUNCT] += on_punct, rows[HS_PUNCT]++;
		sum[HS_ENTROPY] += ent, rows[HS_ENTROPY]++;
		sum[HS_DISTANCE] += dist, rows[HS_DISTANCE]++;
		if (any_dup)
			sum[HS_DUP] += dup, rows[HS_DUP]++;
		if (any_ind)
			sum[HS_INDUCTION] += ind, rows[HS_INDUCTION]++;
		int visible = hi - lo + 1;
		if (visible > 1)
			norm_sum += ent / log(visible), norm_rows++;
	}
	for (int k = 0; k < HS_COUNT; k++)
		out->s[k] = rows[k] ? sum[k] / rows[k] : NAN;
	if (!has_sep)
		out->s[HS_SEP] = NAN;
	if (!has_punct)
		out->s[HS_PUNCT] = NAN;
	out->entropy_norm = norm_rows ? norm_sum / norm_rows : 0;

	headscore_label(out, n > 0 && t->special[0], t->causal);
}

void headscore_label(struct headscore *h, bool first_special, bool causal)
{
	/* The strongest weight pattern holding at least half the weight, else "broad". */
	double best = 0.5;
	const char *label = "";
	for (size_t l = 0; l < sizeof hs_labels / sizeof *hs_labels; l++) {
		double v = h->s[hs_labels[l].k];
		if (!isnan(v) && v >= best) {
			best = v;
			label = hs_labels[l].label;
			if (hs_labels[l].k == HS_FIRST && first_special)
				label = causal ? "BOS" : "[CLS]"; /* a decoder's attention sink */
		}
	}
	if (!*label && h->entropy_norm >= 0.75)
		label = "broad";
	snprintf(h->label, sizeof h->label, "%s", label);
}

bool headscore_cross_only(int k)
{
	return k == HS_DIAGONAL || k == HS_MONOTONIC || k == HS_EOS || k == HS_MAX;
}

bool headscore_for_cross(int k)
{
	return headscore_cross_only(k) || k == HS_FIRST || k == HS_PUNCT || k == HS_ENTROPY;
}

int headscore_cross_end(const struct trace *dec)
{
	const struct trace *src = dec->encoder;
	if (!src)
		return -1;
	for (int j = src->n - 1; j >= 0 && dec->labels; j--) /* a special token the target ends with too: </s> */
		for (int i = 0; i < dec->n && src->special[j]; i++)
			if (dec->labels[i] == src->ids[j])
				return j;
	for (int j = src->n - 1; j >= 0; j--)
		if (src->special[j])
			return j;
	return -1;
}

void headscore_cross_head(const struct trace *dec, int layer, int head, const float *a, const bool *punct, int end,
			  struct headscore *out)
{
	int n = dec->n, m = dec->n_cross;
	memset(out, 0, sizeof *out);
	out->layer = layer;
	out->head = head;
	for (int k = 0; k < HS_COUNT; k++)
		out->s[k] = NAN;
	if (n < 1 || m < 1)
		return;
	int has_punct = 0;
	for (int j = 0; j < m; j++)
		has_punct |= punct[j];
	int w = m / 10 > 1 ? m / 10 : 1; /* the band's half-width */
	double first = 0, on_punct = 0, ent = 0, eos = 0, diag = 0, mx = 0, norm = 0;
	int forward = 0, prev_arg = -1;
	for (int i = 0; i < n; i++) {
		const float *r = a + (size_t)i * m;
		double d = n > 1 ? (double)i * (m - 1) / (n - 1) : 0, e = 0; /* the rescaled diagonal */
		int arg = 0;
		first += r[0];
		for (int j = 0; j < m; j++) {
			double p = r[j];
			if (punct[j])
				on_punct += p;
			if (p > 0)
				e -= p * log(p);
			if (fabs(j - d) <= w)
				diag += p;
			if (r[j] > r[arg])
				arg = j;
		}
		mx += r[arg];
		ent += e;
		if (m > 1)
			norm += e / log(m);
		if (end >= 0)
			eos += r[end];
		if (i > 0 && arg >= prev_arg)
			forward++;
		prev_arg = arg;
	}
	out->s[HS_FIRST] = first / n;
	out->s[HS_PUNCT] = has_punct ? on_punct / n : NAN;
	out->s[HS_ENTROPY] = ent / n;
	out->s[HS_DIAGONAL] = diag / n;
	out->s[HS_MONOTONIC] = n > 1 ? (double)forward / (n - 1) : NAN;
	out->s[HS_EOS] = end >= 0 ? eos / n : NAN;
	out->s[HS_MAX] = mx / n;
	out->entropy_norm = m > 1 ? norm / n : 0;
	headscore_label(out, false, false); /* "first": the source's first token, whatever it is */
}

int headscore_cross_all(const struct trace *dec, struct headscore *out)
{
	if (!dec->encoder || !dec->cross_attn)
		return -1;
	bool *punct = headscore_punct_flags(dec->encoder);
	if (!punct)
		return -1;
	int end = headscore_cross_end(dec);
	for (int l = 0; l < dec->n_layers; l++)
		for (int h = 0; h < dec->n_heads; h++)
			headscore_cross_head(dec, l, h, trace_cross_attn(dec, l, h), punct, end,
					     out + (size_t)l * dec->n_heads + h);
	free(punct);
	return 0;
}

bool *headscore_punct_flags(const struct trace *t)
{
	bool *p = malloc((size_t)(t->n > 0 ? t->n : 1) * sizeof *p);
	if (p)
		for (int i = 0; i < t->n; i++)
			p[i] = headscore_is_punct(t, i);
	return p;
}

int headscore_all(const struct trace *t, struct headscore *out)
{
	if (t->scores) { /* a compact trace: recorded by the forward pass while the heads existed */
		memcpy(out, t->scores, (size_t)t->n_layers * t->n_heads * sizeof *out);
		return 0;
	}
	bool *punct = headscore_punct_flags(t);
	if (!punct)
		return -1;
	for (int l = 0; l < t->n_layers; l++)
		for (int h = 0; h < t->n_heads; h++)
			headscore_head(t, l, h, trace_attn(t, l, h), punct, out + (size_t)l * t->n_heads + h);
	free(punct);
	return 0;
}

void headscore_changed(const struct trace *a, const struct trace *b, struct headscore *out)
{
	for (int l = 0; l < a->n_layers; l++)
		for (int h = 0; h < a->n_heads; h++)
			out[(size_t)l * a->n_heads + h].s[HS_CHANGED] = compare_tv(a, b, l, h);
}

/* Does head A come before head B when sorting by K? NaN last, then layer/head order. */
static int hs_before(const struct headscore *s, int a, int b, enum headscore_kind k, int ascending)
{
	double x = s[a].s[k], y = s[b].s[k];
	if (isnan(x) != isnan(y))
		return !isnan(x);
	if (!isnan(x) && x != y)
		return ascending ? x < y : x > y;
	return a < b;
}

void headscore_sort(const struct headscore *s, int *idx, int n, enum headscore_kind k, int ascending)
{
	/* Insertion sort: a model has at most a few thousand heads, and it needs no global state
	 * (qsort has no context argument). */
	for (int i = 1; i < n; i++) {
		int v = idx[i], j = i;
		for (; j > 0 && hs_before(s, v, idx[j - 1], k, ascending); j--)
			idx[j] = idx[j - 1];
		idx[j] = v;
	}
}
