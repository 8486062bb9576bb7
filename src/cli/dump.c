/* dump.c -- JSON and CSV export of a trace (see dump.h). Floats are printed with 9 significant
 * digits, enough to round-trip any float32; exact zeros (masked keys) print as 0. */
#include "cli/dump.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"
#include "engine/lens.h"
#include "engine/lmhead.h"
#include "trace/compare.h"

int dump_parse_format(const char *s)
{
	if (strcmp(s, "json") == 0)
		return DUMP_JSON;
	if (strcmp(s, "csv") == 0)
		return DUMP_CSV;
	return -1;
}

static void dump_float(FILE *out, float v)
{
	if (v == 0.0f)
		fputs(signbit(v) ? "-0" : "0", out);
	else if (!isfinite(v))
		fputs("null", out); /* JSON has no NaN/Inf */
	else
		fprintf(out, "%.9g", v);
}

/* A JSON string literal: quotes, backslashes and control characters escaped; UTF-8 passed through. */
/* The items of a JSON array of strings (or of integers), comma separated. */
static void dump_strings(FILE *out, char *const *s, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			fputs(", ", out);
		jsonout_string(out, s[i]);
	}
}

static void dump_ints(FILE *out, const int32_t *v, int n)
{
	for (int i = 0; i < n; i++)
		fprintf(out, i ? ", %d" : "%d", (int)v[i]);
}

/* A CSV field per RFC 4180: quoted when it holds a comma, quote or line break. */
static void dump_csv_field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			fputc('"', out);
		fputc(*p, out);
	}
	fputc('"', out);
}

/* Rows [rows][cols] as a JSON array of arrays. */
static void dump_matrix(FILE *out, const float *m, int rows, int cols)
{
	fputc('[', out);
	for (int i = 0; i < rows; i++) {
		fputs(i ? ",[" : "[", out);
		for (int j = 0; j < cols; j++) {
			if (j)
				fputc(',', out);
			dump_float(out, m[(size_t)i * cols + j]);
		}
		fputc(']', out);
	}
	fputc(']', out);
}

typedef const float *(*dump_getter)(const struct trace *, int, int);

static void dump_per_head_rows(FILE *out, const struct trace *t, const struct dump_select *sel, dump_getter get,
			       int rows, int cols);

/* Steps *I to the next index below COUNT that selection ONLY keeps (-1 keeps all) and writes FIRST
 * before the first one kept, SEP before each other; false past the end. Every selected-layer or
 * selected-head list of the dump is one such loop: for (int l = -1; dump_next(out, &l, n, only, "[", ",");) */
static bool dump_next(FILE *out, int *i, int count, int only, const char *first, const char *sep)
{
	bool started = *i >= 0;
	do
		++*i;
	while (*i < count && only >= 0 && *i != only);
	if (*i >= count)
		return false;
	fputs(started ? sep : first, out);
	return true;
}

/* [layer][head][n][cols] over the selected layers and heads. */
static void dump_per_head(FILE *out, const struct trace *t, const struct dump_select *sel, dump_getter get,
			  int cols)
{
	dump_per_head_rows(out, t, sel, get, t->n, cols);
}

/* [layer][head][rows][cols] over the selected layers and heads. */
static void dump_per_head_rows(FILE *out, const struct trace *t, const struct dump_select *sel, dump_getter get,
			       int rows, int cols)
{
	fputc('[', out);
	for (int l = -1; dump_next(out, &l, t->n_layers, sel->layer, "\n  [", ",\n  [");) {
		for (int h = -1; dump_next(out, &h, t->n_heads, sel->head, "", ",\n   ");)
			dump_matrix(out, get(t, l, h), rows, cols);
		fputc(']', out);
	}
	fputs("]", out);
}

/* --weights norm: each selected head's ‖f_h(x_j)‖ [layer][head][n], the factor of its raw weights. */
static void dump_vnorms(FILE *out, const struct trace *t, const struct dump_select *sel)
{
	fputs(",\n\"value_vector_norms\": [", out);
	for (int l = -1; dump_next(out, &l, t->n_layers, sel->layer, "[", ", [");) {
		for (int h = -1; dump_next(out, &h, t->n_heads, sel->head, "", ",");) {
			const float *f = trace_vnorm(t, l, h);
			for (int j = 0; j < t->n; j++) {
				fputs(j ? "," : "[", out);
				dump_float(out, f[j]);
			}
			fputs(t->n ? "]" : "[]", out);
		}
		fputc(']', out);
	}
	fputc(']', out);
}

static void dump_indices(FILE *out, int count, int only)
{
	fputc('[', out);
	for (int i = -1; dump_next(out, &i, count, only, "", ",");)
		fprintf(out, "%d", i);
	fputc(']', out);
}

/* One bound of a window: a number, or null for none. */
static void dump_bound(FILE *out, const int *w, int layer)
{
	if (w && w[layer] >= 0)
		fprintf(out, "%d", w[layer]);
	else
		fputs("null", out);
}

/* Per layer, the keys a query i may see: i - before .. i + after (null = no limit; after is 0
 * in a causal model). */
static void dump_windows(FILE *out, const struct trace *t)
{
	fputc('[', out);
	for (int l = 0; l < t->n_layers; l++) {
		fputs(l ? ", {\"before\": " : "{\"before\": ", out);
		dump_bound(out, t->win_before, l);
		fputs(", \"after\": ", out);
		if (t->causal)
			fputc('0', out);
		else
			dump_bound(out, t->win_after, l);
		fputc('}', out);
	}
	fputc(']', out);
}

/* The key/value head of each selected query head. */
static void dump_kv_indices(FILE *out, const struct trace *t, int only)
{
	fputc('[', out);
	for (int h = -1; dump_next(out, &h, t->n_heads, only, "", ",");)
		fprintf(out, "%d", trace_kv_head(t, h));
	fputc(']', out);
}

/* Each selected head's change between A and B (compare.h's TV): [layer][head]. */
static void dump_changed(FILE *out, const struct trace *a, const struct trace *b, const struct dump_select *sel,
			 double (*tv)(const struct trace *, const struct trace *, int, int))
{
	for (int l = -1; dump_next(out, &l, a->n_layers, sel->layer, "[", ", [");) {
		for (int h = -1; dump_next(out, &h, a->n_heads, sel->head, "", ", ");)
			dump_float(out, (float)tv(a, b, l, h));
		fputc(']', out);
	}
}

/* What "compare" and its "decoder" both hold, their members indented by IND: B's tokens and ids, the
 * matching rows, each head's change ("changed", its list left open). */
static void dump_json_compare_common(const struct trace *t, const struct trace *b, const struct dump_select *sel,
				     const char *ind, FILE *out)
{
	fputs("\"tokens\": [", out);
	dump_strings(out, b->tokens, b->n);
	fprintf(out, "],\n%s\"ids\": [", ind);
	dump_ints(out, b->ids, b->n);
	fprintf(out, "],\n%s\"common_prefix\": %d, \"matching_rows\": %d,\n%s\"changed\": [", ind, compare_prefix(t, b),
		compare_rows(t, b), ind);
	dump_changed(out, t, b, sel, compare_tv);
}

/* ... of an encoder-decoder, the "decoder" of "compare": B's decoder input, the matching decoder rows, each
 * head's change of self-attention ("changed") and cross-attention ("cross_changed"), B's attentions. */
static void dump_json_compare_decoder(const struct trace *t, const struct trace *b, const struct dump_select *sel,
				      FILE *out)
{
	fputs(",\n \"decoder\": {", out);
	dump_json_compare_common(t, b, sel, "  ", out);
	fputs("],\n  \"cross_changed\": [", out);
	dump_changed(out, t, b, sel, compare_tv_cross);
	fputs("],\n  \"attentions\": ", out);
	dump_per_head(out, b, sel, trace_attn, b->n);
	fputs(",\n  \"cross_attentions\": ", out);
	dump_per_head(out, b, sel, trace_cross_attn, b->n_cross);
	fputc('}', out);
}

/* "compare": the second text's tokens and attentions, the matching rows, each head's change. */
static void dump_json_compare(const struct trace *t, const struct trace *b, const struct dump_select *sel, FILE *out)
{
	fputs(",\n\"compare\": {", out);
	dump_json_compare_common(t, b, sel, " ", out);
	fputs("],\n \"attentions\": ", out);
	dump_per_head(out, b, sel, trace_attn, b->n);
	if (t->decoder && b->decoder) /* only for an encoder-decoder model: the other dumps stay as they were */
		dump_json_compare_decoder(t->decoder, b->decoder, sel, out);
	fputs("}", out);
}

/* A MoE model's routing (Mixtral, OLMoE, Qwen3-MoE), per selected layer and token: its experts
 * ("moe_topk", best first) or their weights as applied ("moe_weights"); null for a dense layer. */
static void dump_moe(FILE *out, const struct trace *t, const struct dump_select *sel, bool weights)
{
	fputs(weights ? ",\n\"moe_weights\": [" : ",\n\"moe_topk\": [", out);
	for (int l = -1; dump_next(out, &l, t->n_layers, sel->layer, "\n  ", ",\n  ");) {
		if (!t->moe_layer[l]) {
			fputs("null", out);
			continue;
		}
		fputc('[', out);
		for (int i = 0; i < t->n; i++) {
			fputs(i ? ", [" : "[", out);
			for (int j = 0; j < t->moe_k; j++) {
				size_t at = ((size_t)l * t->n + i) * t->moe_k + j;
				if (j)
					fputs(", ", out);
				if (weights)
					dump_float(out, t->moe_weights[at]);
				else
					fprintf(out, "%d", (int)t->moe_topk[at]);
			}
			fputc(']', out);
		}
		fputc(']', out);
	}
	fputs("]", out);
}

/* The output head's predictions (lmhead.h): "lm_head" says which head (or why none); with one, "topk" per
 * position (causal: the next token's, MLM: the token's own), "logsumexp" per position (the log-probabilities
 * are logit minus it) and, for a causal head, "surprisal" of
 * each token after the first (nats). One [vocab] row at a time; only the top-k are kept. */
static int dump_predictions(FILE *out, const struct trace *t, const struct dump_select *sel, struct err *e)
{
	enum lmhead_kind kind = lmhead_kind(sel->model);
	fputs(",\n\"lm_head\": {\"kind\": ", out);
	jsonout_string(out, kind == LMHEAD_CAUSAL ? "causal" : kind == LMHEAD_MASKED ? "masked" : "none");
	fputs(", \"about\": ", out);
	jsonout_string(out, lmhead_why(sel->model));
	fputc('}', out);
	if (kind == LMHEAD_NONE)
		return 0;
	struct lmpred *p = lmpred_new(sel->model, t, sel->top_k);
	if (!p)
		return err_set(e, "out of memory");
	fputs(",\n\"topk\": [", out);
	for (int i = 0; i < t->n; i++) {
		const int32_t *ids;
		const float *lp;
		if (lmpred_row(p, i, &ids, &lp, NULL, e) < 0) {
			lmpred_free(p);
			return -1;
		}
		fputs(i ? ",\n  {\"ids\": [" : "\n  {\"ids\": [", out);
		dump_ints(out, ids, lmpred_k(p));
		fputs("], \"logprobs\": [", out);
		for (int j = 0; j < lmpred_k(p); j++) {
			if (j)
				fputs(", ", out);
			dump_float(out, lp[j]);
		}
		fputs("]}", out);
	}
	fputs("],\n\"logsumexp\": [", out); /* what each row's log-probabilities are relative to */
	for (int i = 0; i < t->n; i++) {
		const int32_t *ids;
		const float *lp;
		double lse;
		lmpred_row(p, i, &ids, &lp, &lse, e); /* computed above: cannot fail */
		fputs(i ? ", " : "", out);
		if (isfinite(lse))
			fprintf(out, "%.17g", lse);
		else
			fputs("null", out); /* NaN weights */
	}
	fputs("]", out);
	if (kind == LMHEAD_CAUSAL) {
		fputs(",\n\"surprisal\": [", out);
		for (int i = 1; i < t->n; i++) {
			fputs(i > 1 ? ", " : "", out);
			dump_float(out, lmpred_surprisal(p, i));
		}
		fputs("]", out);
	}
	lmpred_free(p);
	return 0;
}

/* --lens: "logit_lens", per layer 0 .. n_layers (0 = the embedding output) the top LENS_K ids and
 * log-probabilities of every position's residual stream through the final norm and the head (lens.h);
 * then "dla_token" and "dla" [n_layers][n_heads], each head's direct logit attribution there to the next
 * token (or "dla_note": why not). */
static int dump_lens(FILE *out, const struct trace *t, const struct model *m, const struct dump_select *sel,
		     struct err *e)
{
	struct lens *l = lens_new(m, t);
	if (!l)
		return err_set(e, "out of memory");
	fputs(",\n\"logit_lens\": [", out);
	for (int layer = 0; layer <= t->n_layers; layer++) {
		for (int part = 0; part < 2; part++) {
			fprintf(out, part ? "], \"logprobs\": [" : "%s\n  {\"layer\": %d, \"ids\": [", layer ? "," : "", layer);
			for (int i = 0; i < t->n; i++) {
				const int32_t *ids;
				const float *lp;
				if (lens_cell(l, layer, i, &ids, &lp, e) < 0) {
					lens_free(l);
					return -1;
				}
				fputs(i ? ", [" : "[", out);
				for (int j = 0; j < LENS_K; j++) {
					if (j)
						fputs(", ", out);
					if (part)
						dump_float(out, lp[j]);
					else
						fprintf(out, "%d", (int)ids[j]);
				}
				fputc(']', out);
			}
		}
		fputs("]}", out);
	}
	fputs("]", out);
	lens_free(l);
	/* direct logit attribution of every head at one position (lens.h), or why there is none */
	int at = sel->dla_token >= 0 ? sel->dla_token : t->n - 2;
	double *dla = malloc((size_t)t->n_layers * t->n_heads * sizeof *dla);
	struct err why = {{0}};
	if (!dla)
		return err_set(e, "out of memory");
	fprintf(out, ",\n\"dla_token\": %d", at);
	if (lens_dla(m, t, at, dla, &why) < 0) {
		fputs(",\n\"dla_note\": ", out);
		jsonout_string(out, why.msg);
	} else {
		fputs(",\n\"dla\": [", out);
		for (int layer = 0; layer < t->n_layers; layer++) {
			fputs(layer ? ",\n  [" : "\n  [", out);
			for (int h = 0; h < t->n_heads; h++)
				fprintf(out, "%s%.9g", h ? ", " : "", dla[(size_t)layer * t->n_heads + h]);
			fputc(']', out);
		}
		fputs("]", out);
	}
	free(dla);
	return 0;
}

/* --ablate: which heads and how ("ablated", "ablate_mode"), what changed against the clean run ("ablation":
 * its "effect" (ablate.h), per position "top1_changed" and, causal, "surprisal_change" = ablated - clean)
 * and the ablated run's "last_hidden_state" [n][hidden] (what the effect of a model without a head reads). */
static int dump_ablation(FILE *out, const struct trace *t, const struct dump_select *sel, struct err *e)
{
	const struct ablation *a = sel->ablation;
	const struct model *m = sel->ablation_model;
	fputs(",\n\"ablated\": [", out);
	for (int i = 0, k = 0; i < a->n_layers * a->n_heads; i++)
		if (a->mask[i])
			fprintf(out, "%s[%d, %d]", k++ ? ", " : "", i / a->n_heads, i % a->n_heads);
	fputs("],\n\"ablate_mode\": ", out);
	jsonout_string(out, ablation_mode_name(a->mode));
	double effect;
	if (ablation_effect(m, sel->clean, NULL, t, &effect, e) < 0)
		return -1;
	enum lmhead_kind kind = lmhead_kind(m);
	fputs(",\n\"ablation\": {\"effect_metric\": ", out);
	jsonout_string(out, kind == LMHEAD_NONE ? "last_hidden_state_change_norm" : "kl_mean");
	fprintf(out, ", \"effect\": %.17g", effect);
	if (kind != LMHEAD_NONE) {
		struct lmpred *pc = lmpred_new(m, sel->clean, 1), *pa = lmpred_new(m, t, 1);
		int rc = pc && pa ? 0 : err_set(e, "out of memory");
		fputs(", \"top1_changed\": [", out);
		for (int i = 0, k = 0; rc == 0 && i < t->n; i++) {
			const int32_t *ic, *ia;
			const float *lp;
			if (lmpred_row(pc, i, &ic, &lp, NULL, e) < 0 || lmpred_row(pa, i, &ia, &lp, NULL, e) < 0)
				rc = -1;
			else if (ic[0] != ia[0])
				fprintf(out, "%s%d", k++ ? ", " : "", i);
		}
		fputc(']', out);
		if (rc == 0 && kind == LMHEAD_CAUSAL) {
			fputs(", \"surprisal_change\": [", out);
			for (int i = 1; i < t->n; i++) {
				fputs(i > 1 ? ", " : "", out);
				dump_float(out, lmpred_surprisal(pa, i) - lmpred_surprisal(pc, i));
			}
			fputc(']', out);
		}
		lmpred_free(pc);
		lmpred_free(pa);
		if (rc < 0)
			return -1;
	}
	fputs("},\n\"last_hidden_state\": [", out);
	const float *x = trace_hidden(t, t->n_layers);
	for (int i = 0; i < t->n; i++) {
		fputs(i ? ",\n  [" : "\n  [", out);
		for (int d = 0; d < t->hidden; d++) {
			if (d)
				fputs(", ", out);
			dump_float(out, x[(size_t)i * t->hidden + d]);
		}
		fputc(']', out);
	}
	fputc(']', out);
	return 0;
}

/* --ablation-effect: "ablation_effect" [n_layers][n_heads] and the mode each head was ablated in. */
static void dump_ablation_effect(FILE *out, const struct trace *t, const struct dump_select *sel)
{
	fputs(",\n\"ablation_effect_mode\": ", out);
	jsonout_string(out, ablation_mode_name((enum ablate_mode)sel->ablation_effect_mode));
	fputs(",\n\"ablation_effect\": [", out);
	for (int l = 0; l < t->n_layers; l++) {
		fputs(l ? ",\n  [" : "\n  [", out);
		for (int h = 0; h < t->n_heads; h++) {
			double v = sel->ablation_effect[(size_t)l * t->n_heads + h];
			fputs(h ? ", " : "", out);
			if (isfinite(v))
				fprintf(out, "%.17g", v);
			else
				fputs("null", out);
		}
		fputc(']', out);
	}
	fputc(']', out);
}

/* An encoder-decoder's extras, laid out as the shared reference cases: per layer [layer][n][heads·d] context
 * (CTX of trace T, the selected layers) ... */
static void dump_layers(FILE *out, const struct trace *t, const struct dump_select *sel, const float *ctx, int width)
{
	fputc('[', out);
	for (int l = -1; dump_next(out, &l, t->n_layers, sel->layer, "\n  ", ",\n  ");)
		dump_matrix(out, ctx + (size_t)l * t->n * width, t->n, width);
	fputc(']', out);
}

/* ... T5's position bias [heads][n][n] (the selected heads) and its buckets [n][n] ... */
static void dump_position_bias(FILE *out, const struct trace *t, const struct dump_select *sel)
{
	if (!t->pos_bias)
		return;
	fputs(",\n\"position_bias\": [", out);
	for (int h = -1; dump_next(out, &h, t->n_heads, sel->head, "\n  ", ",\n  ");)
		dump_matrix(out, t->pos_bias + (size_t)h * t->n * t->n, t->n, t->n);
	fputs("],\n\"position_buckets\": [", out);
	for (int i = 0; i < t->n; i++) {
		fputs(i ? ",[" : "[", out);
		dump_ints(out, t->pos_buckets + (size_t)i * t->n, t->n);
		fputc(']', out);
	}
	fputc(']', out);
}

static const float *dump_cross_q(const struct trace *t, int l, int h)
{
	return t->cross_q + ((size_t)l * t->n_heads + h) * (size_t)t->n * t->head_dim;
}
static const float *dump_cross_k(const struct trace *t, int l, int h)
{
	return t->cross_k + ((size_t)l * t->n_heads + h) * (size_t)t->n_cross * t->head_dim;
}
static const float *dump_cross_v(const struct trace *t, int l, int h)
{
	return t->cross_v + ((size_t)l * t->n_heads + h) * (size_t)t->n_cross * t->head_dim;
}

/* ... and the "decoder" object: the decoder's input (the labels shifted right), its causal self-attention,
 * the cross-attention (decoder rows x encoder columns) with its q/k/v, contexts and hidden states. The
 * selection's layer and head apply to the decoder's too (a layer it lacks: none). */
static void dump_decoder(FILE *out, const struct trace *enc, const struct dump_select *sel)
{
	const struct trace *t = enc->decoder;
	int width = t->n_heads * t->head_dim;
	fprintf(out, ",\n\"decoder\": {\"layers\": %d, \"tokens\": [", t->n_layers);
	dump_strings(out, t->tokens, t->n);
	fputs("],\n\"ids\": [", out);
	dump_ints(out, t->ids, t->n);
	fputs("],\n\"labels\": [", out);
	const struct trace *lt = t->source ? t->source : t; /* --words: the labels stay the pieces' (as "pieces") */
	if (lt->labels)
		dump_ints(out, lt->labels, lt->n);
	if (t->source) { /* --words: the decoder's pieces and which word each is in, as the encoder's */
		fputs("],\n\"pieces\": [", out);
		dump_strings(out, t->source->tokens, t->source->n);
		fputs("],\n\"piece_word\": [", out);
		for (int i = 0; i < t->source->n; i++)
			fprintf(out, i ? ", %d" : "%d", t->word_of[i]);
	}
	fputs("],\n\"attentions\": ", out);
	dump_per_head(out, t, sel, trace_attn, t->n);
	fputs(",\n\"cross_attentions\": ", out);
	dump_per_head(out, t, sel, trace_cross_attn, t->n_cross);
	fputs(",\n\"q\": ", out);
	dump_per_head(out, t, sel, trace_q, t->head_dim);
	fputs(",\n\"k\": ", out);
	dump_per_head(out, t, sel, trace_k, t->head_dim);
	fputs(",\n\"v\": ", out);
	dump_per_head(out, t, sel, trace_v, t->head_dim);
	fputs(",\n\"cross_q\": ", out);
	dump_per_head(out, t, sel, dump_cross_q, t->head_dim);
	fputs(",\n\"cross_k\": ", out);
	dump_per_head_rows(out, t, sel, dump_cross_k, t->n_cross, t->head_dim);
	fputs(",\n\"cross_v\": ", out);
	dump_per_head_rows(out, t, sel, dump_cross_v, t->n_cross, t->head_dim);
	fputs(",\n\"context\": ", out);
	dump_layers(out, t, sel, t->context, width);
	fputs(",\n\"cross_context\": ", out);
	dump_layers(out, t, sel, t->cross_context, width);
	fputs(",\n\"hidden_states\": [", out);
	for (int l = 0; l <= t->n_layers; l++) {
		fputs(l ? ",\n  " : "\n  ", out);
		dump_matrix(out, trace_hidden(t, l), t->n, t->hidden);
	}
	fputc(']', out);
	dump_position_bias(out, t, sel);
	fputc('}', out);
}

/* An encoder-decoder's trace (the encoder's): its context, hidden states, T5's bias, then the decoder. */
static void dump_encdec(FILE *out, const struct trace *t, const struct dump_select *sel)
{
	fputs(",\n\"context\": ", out);
	dump_layers(out, t, sel, t->context, t->n_heads * trace_v_dim(t));
	fputs(",\n\"hidden_states\": [", out);
	for (int l = 0; l <= t->n_layers; l++) {
		fputs(l ? ",\n  " : "\n  ", out);
		dump_matrix(out, trace_hidden(t, l), t->n, t->hidden);
	}
	fputc(']', out);
	dump_position_bias(out, t, sel);
	dump_decoder(out, t, sel);
}

static int dump_json(const struct trace *t, const struct trace *b, const struct model_info *in,
		      const struct dump_select *sel, FILE *out, struct err *e)
{
	struct jsonout_model jm = {in->name, in->family, in->causal, in->n_layers, in->n_heads,
				   t->n_kv_heads > 0 ? t->n_kv_heads : in->n_heads, in->head_dim, in->hidden, in->max_positions};
	fputs("{\"model\": ", out);
	jsonout_model(out, &jm);
	fprintf(out, ", \"vocab_size\": %d, \"rotary\": %s, ", in->vocab_size, t->rotary ? "true" : "false");
	if (t->rotary_interleaved) /* only then: the dumps of the other models stay as they were */
		fputs("\"rotary_pairs\": \"interleaved\", ", out);
	if (trace_v_dim(t) != t->head_dim) /* only then (DeepSeek's latent attention): values are narrower */
		fprintf(out, "\"v_dim\": %d, ", trace_v_dim(t));
	fputs("\"windows\": ", out);
	dump_windows(out, t);
	if (t->nope) { /* only then (SmolLM3): per layer, true where q/k carry no rotary */
		fputs(", \"nope_layers\": [", out);
		for (int l = 0; l < t->n_layers; l++)
			fprintf(out, "%s%s", l ? ", " : "", t->nope[l] ? "true" : "false");
		fputc(']', out);
	}
	if (t->chunk) { /* only then (Llama 4): per layer, the chunk a query's keys must share (null = none) */
		fputs(", \"chunks\": [", out);
		for (int l = 0; l < t->n_layers; l++) {
			fputs(l ? ", " : "", out);
			if (t->chunk[l] > 0)
				fprintf(out, "%d", t->chunk[l]);
			else
				fputs("null", out);
		}
		fputc(']', out);
	}
	if (t->alibi) { /* ALiBi (BLOOM): each head's slope; its scores got + slope · key position */
		fputs(", \"alibi_slopes\": [", out);
		for (int h = 0; h < t->n_heads; h++)
			fprintf(out, h ? ", %.9g" : "%.9g", t->alibi[h]);
		fputc(']', out);
		if (t->alibi_scale != 1.0f) /* Falcon: the bias is alibi_scale · slope · key position */
			fprintf(out, ", \"alibi_scale\": %.9g", t->alibi_scale);
	}
	if (t->sinks) { /* learned sinks (gpt-oss): per layer and head, the logit each row's softmax also ran over */
		fputs(", \"sinks\": [", out);
		for (int l = 0; l < t->n_layers; l++) {
			fputs(l ? ", [" : "[", out);
			for (int h = 0; h < t->n_heads; h++)
				fprintf(out, h ? ", %.9g" : "%.9g", t->sinks[(size_t)l * t->n_heads + h]);
			fputc(']', out);
		}
		fputc(']', out);
	}
	fputs("},\n", out);
	fputs("\"tokens\": [", out);
	dump_strings(out, t->tokens, t->n);
	fputs("],\n\"ids\": [", out);
	dump_ints(out, t->ids, t->n);
	fputs("],\n\"token_type_ids\": [", out);
	dump_ints(out, t->type_ids, t->n);
	fputs("],\n\"special\": [", out);
	for (int i = 0; i < t->n; i++)
		fprintf(out, i ? ", %s" : "%s", t->special[i] ? "true" : "false");
	if (t->source) { /* a trace of words: the words, the pieces and which word each piece is in */
		fputs("],\n\"words\": [", out);
		dump_strings(out, t->tokens, t->n);
		fputs("],\n\"pieces\": [", out);
		dump_strings(out, t->source->tokens, t->source->n);
		fputs("],\n\"piece_word\": [", out);
		for (int i = 0; i < t->source->n; i++)
			fprintf(out, i ? ", %d" : "%d", t->word_of[i]);
	}
	fprintf(out, "],\n\"truncated\": %s,\n\"layer_indices\": ", t->truncated ? "true" : "false");
	dump_indices(out, t->n_layers, sel->layer);
	fputs(",\n\"head_indices\": ", out);
	dump_indices(out, t->n_heads, sel->head);
	fputs(",\n\"kv_head_indices\": ", out);
	dump_kv_indices(out, t, sel->head);
	/* --weights norm (valnorm.h): the attentions are the raw ‖α_ij f_h(x_j)‖, a trace of words' merged */
	bool norm = trace_weights_norm(t);
	if (norm)
		fputs(",\n\"weights\": \"norm\"", out);
	fputs(",\n\"attentions\": ", out);
	dump_per_head(out, t, sel, trace_attn, t->n);
	fputs(",\n\"queries\": ", out);
	dump_per_head(out, t, sel, trace_q, t->head_dim);
	fputs(",\n\"keys\": ", out);
	dump_per_head(out, t, sel, trace_k, t->head_dim);
	fputs(",\n\"values\": ", out);
	dump_per_head(out, t, sel, trace_v, trace_v_dim(t));
	if (t->rotary) {
		fputs(",\n\"queries_before_rotary\": ", out);
		dump_per_head(out, t, sel, trace_q_raw, t->head_dim);
		fputs(",\n\"keys_before_rotary\": ", out);
		dump_per_head(out, t, sel, trace_k_raw, t->head_dim);
	}
	if (t->value_weighted)
		dump_vnorms(out, t, sel);
	if (t->moe_topk) { /* only for a MoE model: the other dumps stay as they were */
		dump_moe(out, t, sel, false);
		dump_moe(out, t, sel, true);
	}
	if (t->decoder) /* only for an encoder-decoder model: the other dumps stay as they were */
		dump_encdec(out, t, sel);
	if (b)
		dump_json_compare(t, b, sel, out);
	if (sel->model && dump_predictions(out, t, sel, e) < 0)
		return -1;
	if (sel->lens && dump_lens(out, t, sel->lens, sel, e) < 0)
		return -1;
	if (sel->ablation && sel->clean && sel->ablation_model && dump_ablation(out, t, sel, e) < 0)
		return -1;
	if (sel->ablation_effect)
		dump_ablation_effect(out, t, sel);
	fputs("}\n", out);
	return 0;
}

static void dump_csv(const struct trace *t, const struct trace *b, const struct dump_select *sel, FILE *out)
{
	/* cross-attention: rows are T's tokens (the decoder's), columns its encoder's */
	bool cross = sel->stack == 2 && t->encoder;
	const struct trace *kt = cross ? t->encoder : t, *kb = cross && b ? b->encoder : b; /* B's keys likewise */
	fputs(b ? "layer,head,query_index,key_index,query_token,key_token,weight,weight_b,difference\n"
		: "layer,head,query_index,key_index,query_token,key_token,weight\n", out);
	for (int l = -1; dump_next(out, &l, t->n_layers, sel->layer, "", "");) {
		for (int h = -1; dump_next(out, &h, t->n_heads, sel->head, "", "");) {
			const float *a = cross ? trace_cross_attn(t, l, h) : trace_attn(t, l, h);
			const float *pb = !b ? NULL : cross ? trace_cross_attn(b, l, h) : trace_attn(b, l, h);
			for (int i = 0; i < t->n; i++) {
				for (int j = 0; j < kt->n; j++) {
					fprintf(out, "%d,%d,%d,%d,", l, h, i, j);
					dump_csv_field(out, t->tokens[i]);
					fputc(',', out);
					dump_csv_field(out, kt->tokens[j]);
					fputc(',', out);
					dump_float(out, a[(size_t)i * kt->n + j]);
					if (b && i < b->n && j < kb->n) {
						float wb = pb[(size_t)i * kb->n + j];
						fputc(',', out);
						dump_float(out, wb);
						fputc(',', out);
						dump_float(out, wb - a[(size_t)i * kt->n + j]);
					} else if (b) {
						fputs(",,", out);
					}
					fputc('\n', out);
				}
			}
		}
	}
}

int dump_write(const struct trace *t, const struct model_info *info, enum dump_format fmt,
	       const struct dump_select *sel, FILE *out, struct err *e)
{
	return dump_write_compare(t, NULL, info, fmt, sel, out, e);
}

int dump_write_compare(const struct trace *t, const struct trace *b, const struct model_info *info,
		       enum dump_format fmt, const struct dump_select *sel, FILE *out, struct err *e)
{
	if (sel->stack) { /* --dump csv --stack decoder|cross: the decoder's trace, as it is (B's beside it) */
		if (fmt != DUMP_CSV)
			return err_set(e, "--stack applies to --dump csv (--dump json holds every stack)");
		if (!t->decoder || (b && !b->decoder))
			return err_set(e, "--stack %s: %s is not an encoder-decoder model", sel->stack == 2 ? "cross" : "decoder",
				       t->model_name);
		t = t->decoder;
		b = b ? b->decoder : NULL;
	}
	if (sel->layer >= t->n_layers)
		return err_set(e, "--layer %d: the model has layers 0..%d", sel->layer, t->n_layers - 1);
	if (sel->head >= t->n_heads)
		return err_set(e, "--head %d: the model has heads 0..%d", sel->head, t->n_heads - 1);
	/* A long text's attention is recomputed head by head and would fill the disk: above the trace
	 * budget (as text, several times its bytes), the user picks the heads. */
	double heads = (sel->layer >= 0 ? 1.0 : t->n_layers) * (sel->head >= 0 ? 1.0 : t->n_heads);
	double bytes = 4.0 * heads * t->n * t->n * (b ? 2 : 1);
	if ((trace_compact(t) || (b && trace_compact(b))) && bytes > trace_budget())
		return err_set(e, "the attention of %d heads over %d tokens is %.1f GB as float32 (more as text): choose "
			       "heads with --layer and --head, or raise ATTNSCOPE_TRACE_BUDGET", (int)heads, t->n, bytes / 1e9);
	if (fmt == DUMP_JSON) {
		if (dump_json(t, b, info, sel, out, e) < 0)
			return -1;
	} else
		dump_csv(t, b, sel, out);
	if (fflush(out) != 0 || ferror(out))
		return err_set(e, "write error on output");
	return 0;
}
