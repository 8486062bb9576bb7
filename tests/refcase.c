/* refcase.c -- reference cases for the fidelity tests (see refcase.h). */
#include "refcase.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int refcase_load(const char *path, struct refcase *c, char *msg, size_t msgsz)
{
	memset(c, 0, sizeof *c);
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je);
	if (!root) {
		snprintf(msg, msgsz, "%s:%d: %s", path, je.line, je.text);
		return -1;
	}
	c->root = root;
	c->text = json_string_value(json_object_get(root, "text"));
	c->text_b = json_string_value(json_object_get(root, "text_b"));
	json_t *ids = json_object_get(root, "ids"), *types = json_object_get(root, "token_type_ids");
	if (!c->text || !json_is_array(ids)) {
		snprintf(msg, msgsz, "%s: needs text and ids", path);
		refcase_free(c);
		return -1;
	}
	c->n = (int)json_array_size(ids);
	c->ids = calloc(c->n + 1, sizeof *c->ids);
	c->type_ids = calloc(c->n + 1, sizeof *c->type_ids);
	for (int i = 0; i < c->n; i++) {
		c->ids[i] = (int32_t)json_integer_value(json_array_get(ids, i));
		if (json_is_array(types))
			c->type_ids[i] = (int32_t)json_integer_value(json_array_get(types, i));
	}
	json_t *dec = json_object_get(root, "decoder"), *labels = json_object_get(dec, "labels");
	c->target = json_string_value(json_object_get(root, "target"));
	if (json_is_array(labels)) {
		c->n_labels = (int)json_array_size(labels);
		c->labels = calloc(c->n_labels + 1, sizeof *c->labels);
		for (int i = 0; i < c->n_labels; i++)
			c->labels[i] = (int32_t)json_integer_value(json_array_get(labels, i));
	}
	return 0;
}

void refcase_free(struct refcase *c)
{
	json_decref(c->root);
	free(c->ids);
	free(c->type_ids);
	free(c->labels);
	memset(c, 0, sizeof *c);
}

/* Max |a - b| over a nested array A (depth DEPTH) against flat floats B laid out in the same order;
 * -1 if the shapes disagree. */
static double refcase_maxdiff(json_t *a, const float *b, size_t count)
{
	/* Flatten A iteratively by walking nested arrays. */
	size_t seen = 0;
	double worst = 0;
	json_t *stack[8];
	size_t pos[8];
	int depth = 0;
	stack[0] = a;
	pos[0] = 0;
	while (depth >= 0) {
		json_t *cur = stack[depth];
		if (pos[depth] >= json_array_size(cur)) {
			depth--;
			if (depth >= 0)
				pos[depth]++;
			continue;
		}
		json_t *item = json_array_get(cur, pos[depth]);
		if (json_is_array(item)) {
			if (depth == 7)
				return -1;
			stack[++depth] = item;
			pos[depth] = 0;
			continue;
		}
		if (seen >= count)
			return -1;
		double diff = fabs(json_number_value(item) - (double)b[seen++]);
		if (!(diff <= worst)) /* NaN counts as worst */
			worst = isnan(diff) ? INFINITY : diff;
		pos[depth]++;
	}
	return seen == count ? worst : -1;
}

/* gpt-oss's shared cases give router_topk [L][n][k] and router_logits [L][1][n][E]: the weights are the
 * softmax of the k chosen logits (GptOssTopKRouter), computed here in double. A new reference, or NULL. */
static json_t *refcase_topk_weights(json_t *root, json_t *tk)
{
	json_t *lg = json_object_get(root, "router_logits"), *out = json_array();
	for (size_t l = 0; out && l < json_array_size(tk); l++) {
		json_t *rows = json_array_get(json_array_get(lg, l), 0), *lw = json_array();
		for (size_t i = 0; lw && i < json_array_size(json_array_get(tk, l)); i++) {
			json_t *ks = json_array_get(json_array_get(tk, l), i), *row = json_array_get(rows, i), *w = json_array();
			size_t k = json_array_size(ks);
			double v[64], max = -INFINITY, sum = 0;
			for (size_t j = 0; j < k && j < 64; j++) {
				v[j] = json_number_value(json_array_get(row, (size_t)json_integer_value(json_array_get(ks, j))));
				max = v[j] > max ? v[j] : max;
			}
			for (size_t j = 0; j < k && j < 64; j++)
				sum += (v[j] = exp(v[j] - max));
			for (size_t j = 0; j < k && j < 64; j++)
				json_array_append_new(w, json_real(v[j] / sum));
			json_array_append_new(lw, w);
		}
		json_array_append_new(out, lw);
	}
	return out;
}

/* The routing of a MoE trace against the case's moe_topk and moe_weights (see struct refdiff). */
static void refcase_compare_moe(json_t *root, const struct trace *t, struct refdiff *d)
{
	json_t *tk = json_object_get(root, "moe_topk"), *tw = json_object_get(root, "moe_weights"), *own = NULL;
	if (!tk && (tk = json_object_get(root, "router_topk")))
		tw = own = refcase_topk_weights(root, tk);
	d->moe_topk_mismatches = -1;
	d->moe_weights = -1;
	if (!t->moe_topk || !json_is_array(tk) || !json_is_array(tw)) {
		json_decref(own);
		return;
	}
	int bad = 0;
	double worst = 0;
	size_t k = (size_t)t->moe_k;
	for (int l = 0; l < t->n_layers; l++) {
		json_t *lk = json_array_get(tk, l), *lw = json_array_get(tw, l);
		if (!json_is_array(lk) || !json_is_array(lw)) {
			bad += t->moe_layer[l] ? t->n : 0; /* dense in the case */
			continue;
		}
		if (!t->moe_layer[l] || json_array_size(lk) != (size_t)t->n) {
			bad += t->n;
			continue;
		}
		for (int i = 0; i < t->n; i++)
			for (size_t j = 0; j < k; j++) {
				size_t at = ((size_t)l * t->n + i) * k + j;
				json_t *e = json_array_get(json_array_get(lk, i), j), *w = json_array_get(json_array_get(lw, i), j);
				if (!json_is_integer(e) || json_integer_value(e) != t->moe_topk[at] || !json_is_number(w)) {
					bad++;
					continue;
				}
				double diff = fabs(json_number_value(w) - (double)t->moe_weights[at]);
				worst = diff > worst || isnan(diff) ? (isnan(diff) ? INFINITY : diff) : worst;
			}
	}
	d->moe_topk_mismatches = bad;
	d->moe_weights = worst;
	json_decref(own);
}

void refcase_compare(const struct refcase *c, const struct trace *t, struct refdiff *d)
{
	json_t *root = c->root;
	memset(d, 0, sizeof *d);
	d->ids_equal = c->n == t->n;
	for (int i = 0; d->ids_equal && i < t->n; i++)
		if (c->ids[i] != t->ids[i]) {
			d->ids_equal = false;
			snprintf(d->first_mismatch, sizeof d->first_mismatch, "id %d: expected %d, got %d", i, c->ids[i],
				 t->ids[i]);
		}
	json_t *toks = json_object_get(root, "tokens");
	d->tokens_equal = json_is_array(toks) && (int)json_array_size(toks) == t->n;
	for (int i = 0; d->tokens_equal && i < t->n; i++) {
		const char *s = json_string_value(json_array_get(toks, i));
		if (!s || strcmp(s, t->tokens[i]) != 0) {
			d->tokens_equal = false;
			snprintf(d->first_mismatch, sizeof d->first_mismatch, "token %d: expected '%s', got '%s'", i,
				 s ? s : "?", t->tokens[i]);
		}
	}
	if (!d->ids_equal && !d->first_mismatch[0])
		snprintf(d->first_mismatch, sizeof d->first_mismatch, "expected %d tokens, got %d", c->n, t->n);
	size_t lh = (size_t)t->n_layers * t->n_heads, lkv = (size_t)t->n_layers * t->n_kv_heads, n = t->n;
	size_t qn = lh * n * t->head_dim, kn = lkv * n * t->head_dim;
	json_t *v;
	d->attn = (v = json_object_get(root, "attentions")) ? refcase_maxdiff(v, t->attn, lh * n * n) : -1;
	/* q_rot/k_rot (rotary families) are what the scores use: the trace's q/k; then q/k are the raw
	 * projections, the trace's q_raw/k_raw. Without q_rot, q/k are both. */
	json_t *qr = json_object_get(root, "q_rot"), *kr = json_object_get(root, "k_rot");
	d->q_raw = d->k_raw = -1;
	if (qr && kr) {
		d->q = refcase_maxdiff(qr, t->q, qn);
		d->k = refcase_maxdiff(kr, t->k, kn);
		if ((v = json_object_get(root, "q")))
			d->q_raw = t->q_raw ? refcase_maxdiff(v, t->q_raw, qn) : refcase_maxdiff(v, t->q, qn);
		if ((v = json_object_get(root, "k")))
			d->k_raw = t->k_raw ? refcase_maxdiff(v, t->k_raw, kn) : refcase_maxdiff(v, t->k, kn);
	} else {
		d->q = (v = json_object_get(root, "q")) ? refcase_maxdiff(v, t->q, qn) : -1;
		d->k = (v = json_object_get(root, "k")) ? refcase_maxdiff(v, t->k, kn) : -1;
	}
	d->v = (v = json_object_get(root, "v")) ? refcase_maxdiff(v, t->v, lkv * n * trace_v_dim(t)) : -1;
	d->hidden = (v = json_object_get(root, "hidden_states"))
			    ? refcase_maxdiff(v, t->hidden_states, (size_t)(t->n_layers + 1) * n * t->hidden)
			    : -1;
	refcase_compare_moe(root, t, d);
}

/* Flatten nested array A into OUT (COUNT floats); -1 on a shape mismatch. */
static int refcase_flatten(json_t *a, float *out, size_t count, size_t *seen)
{
	if (!json_is_array(a)) {
		if (*seen >= count || !json_is_number(a))
			return -1;
		out[(*seen)++] = (float)json_number_value(a);
		return 0;
	}
	for (size_t i = 0; i < json_array_size(a); i++)
		if (refcase_flatten(json_array_get(a, i), out, count, seen) < 0)
			return -1;
	return 0;
}

int refcase_hidden(const struct refcase *c, int layer, float *out, size_t count)
{
	json_t *hs = json_object_get(c->root, "hidden_states");
	size_t seen = 0;
	if (!json_is_array(hs) || refcase_flatten(json_array_get(hs, layer), out, count, &seen) < 0)
		return -1;
	return seen == count ? 0 : -1;
}

void refcase_compare_layer(const struct refcase *c, const struct trace *t, int layer, struct refdiff *d)
{
	json_t *root = c->root;
	size_t n = t->n, D = t->head_dim, qn = (size_t)t->n_heads * n * D, kn = (size_t)t->n_kv_heads * n * D;
	json_t *qr = json_object_get(root, "q_rot"), *kr = json_object_get(root, "k_rot");
	json_t *qs = qr ? qr : json_object_get(root, "q"), *ks = kr ? kr : json_object_get(root, "k");
	json_t *at = json_object_get(root, "attentions");
	memset(d, 0, sizeof *d);
	d->q_raw = d->k_raw = d->v = d->hidden = -1;
	d->attn = at ? refcase_maxdiff(json_array_get(at, layer), trace_attn(t, layer, 0), (size_t)t->n_heads * n * n) : -1;
	d->q = qs ? refcase_maxdiff(json_array_get(qs, layer), trace_q(t, layer, 0), qn) : -1;
	d->k = ks ? refcase_maxdiff(json_array_get(ks, layer), t->k + (size_t)layer * kn, kn) : -1;
}

/* Cells of the case's position_buckets [n][n] (KEY of OBJ) that differ from T's; -1 when absent. */
static int refcase_buckets(json_t *obj, const struct trace *t)
{
	json_t *b = json_object_get(obj, "position_buckets");
	if (!b)
		return -1;
	if (!t->pos_buckets || (int)json_array_size(b) != t->n)
		return t->n * t->n + 1;
	int bad = 0;
	for (int i = 0; i < t->n; i++)
		for (int j = 0; j < t->n; j++)
			bad += json_integer_value(json_array_get(json_array_get(b, i), j)) != t->pos_buckets[(size_t)i * t->n + j];
	return bad;
}

static double refcase_opt(json_t *obj, const char *key, const float *have, size_t count)
{
	json_t *v = json_object_get(obj, key);
	if (!v)
		return -1;
	return have ? refcase_maxdiff(v, have, count) : 1e30;
}

void refcase_compare_decoder(const struct refcase *c, const struct trace *enc, const struct trace *t,
			     struct refdiff_decoder *d)
{
	json_t *root = c->root, *o = json_object_get(root, "decoder");
	memset(d, 0, sizeof *d);
	json_t *ids = json_object_get(o, "ids"), *toks = json_object_get(o, "tokens");
	d->ids_equal = t && json_is_array(ids) && (int)json_array_size(ids) == t->n;
	d->tokens_equal = t && json_is_array(toks) && (int)json_array_size(toks) == t->n;
	d->labels_equal = t && t->labels && c->n_labels == t->n;
	for (int i = 0; d->ids_equal && i < t->n; i++)
		if (json_integer_value(json_array_get(ids, i)) != t->ids[i]) {
			d->ids_equal = false;
			snprintf(d->first_mismatch, sizeof d->first_mismatch, "decoder id %d: expected %lld, got %d", i,
				 (long long)json_integer_value(json_array_get(ids, i)), t->ids[i]);
		}
	for (int i = 0; d->tokens_equal && i < t->n; i++) {
		const char *s = json_string_value(json_array_get(toks, i));
		if (!s || strcmp(s, t->tokens[i]) != 0) {
			d->tokens_equal = false;
			snprintf(d->first_mismatch, sizeof d->first_mismatch, "decoder token %d: expected '%s', got '%s'", i,
				 s ? s : "?", t->tokens[i]);
		}
	}
	for (int i = 0; d->labels_equal && i < c->n_labels; i++)
		d->labels_equal = c->labels[i] == t->labels[i];
	if (!t) {
		d->attn = d->cross_attn = d->q = d->hidden = 1e30;
		return;
	}
	size_t L = t->n_layers, H = t->n_heads, n = t->n, ne = t->n_cross, D = t->head_dim;
	d->attn = refcase_opt(o, "attentions", t->attn, L * H * n * n);
	d->cross_attn = refcase_opt(o, "cross_attentions", t->cross_attn, L * H * n * ne);
	d->q = refcase_opt(o, "q", t->q, L * H * n * D);
	d->k = refcase_opt(o, "k", t->k, L * H * n * D);
	d->v = refcase_opt(o, "v", t->v, L * H * n * D);
	d->cross_q = refcase_opt(o, "cross_q", t->cross_q, L * H * n * D);
	d->cross_k = refcase_opt(o, "cross_k", t->cross_k, L * H * ne * D);
	d->cross_v = refcase_opt(o, "cross_v", t->cross_v, L * H * ne * D);
	d->context = refcase_opt(o, "context", t->context, L * n * H * D);
	d->cross_context = refcase_opt(o, "cross_context", t->cross_context, L * n * H * D);
	d->hidden = refcase_opt(o, "hidden_states", t->hidden_states, (L + 1) * n * t->hidden);
	d->pos_bias = refcase_opt(o, "position_bias", t->pos_bias, H * n * n);
	size_t en = enc->n;
	d->enc_context = refcase_opt(root, "context", enc->context, (size_t)enc->n_layers * en * H * D);
	d->enc_pos_bias = refcase_opt(root, "position_bias", enc->pos_bias, H * en * en);
	int be = refcase_buckets(root, enc), bd = refcase_buckets(o, t);
	d->bucket_mismatches = be < 0 && bd < 0 ? -1 : (be > 0 ? be : 0) + (bd > 0 ? bd : 0);
}
