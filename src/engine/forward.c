/* forward.c -- the float32 forward pass of a transformer composed from its family's switches
 * (post-LN BERT, pre-LN GPT-2 and Llama-style decoders, GPT-NeoX's parallel residual, Gemma's
 * sandwich norms), capturing every head's attention probabilities, queries, keys, values and the
 * hidden states. The math follows Hugging Face's eager modeling code operation by operation. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine/attnscore.h"
#include "engine/gemm.h"
#include "engine/gemmkern.h"
#include "trace/headsummary.h"
#include "engine/mla.h"
#include "engine/model-internal.h"
#include "base/progress.h"

/* Scratch buffers for one run; sizes in floats (H hidden, QD/KD query/key widths, VD value width (KD but
 * under latent attention), CD context width (QD but under latent attention), I intermediate).
 * A run computes ROWS rows: the tokens R0 .. n-1 of one text (R0 > 0 when a causal model reuses the
 * rows of a text it ran before), or every token of several texts, stacked (corpus mode). */
struct fwd_buf {
	int r0, rows;
	float *x;     /* [n][H] residual stream */
	float *h;     /* [n][H] normalised input of a sub-block */
	float *qkv;   /* [n][QD + KD + VD] projections side by side */
	float *qk_whole; /* [n][QD + KD + VD] q and k after their norm over the whole projection (family qk_norm
	                  * whole: OLMo 2), in qkv's columns; the v columns unused; NULL otherwise */
	float *ctx;   /* [n][CD] attention context (heads side by side) */
	float *mla;   /* [n][mla_scratch] latent attention's intermediate projections (NULL otherwise) */
	float *proj;  /* [n][H] output of the attention (or MLP) projection */
	float *proj2; /* [n][H] MLP output beside the attention output (parallel residual) */
	float *mid;   /* [n][2 I] MLP hidden (gated: gate | up) */
	float *gated; /* [n][I] act(gate) · up of a gated MLP (NULL otherwise) */
	float *cos_g, *sin_g; /* [n][rotary_dim / 2] tables of full-attention layers */
	float *cos_l, *sin_l; /* ... of sliding-window layers */
	float *rel;   /* [2 span][H] DeBERTa's relative embeddings after their LayerNorm (NULL otherwise) */
	float *rel_q, *rel_k; /* [2 span][QD], [2 span][KD] a layer's query/key projections of them */
	float *row;   /* [E] one embedding row */
	int32_t *moe_topk; /* [n][top_k] a MoE layer's experts per row (family mlp moe; NULL otherwise) */
	float *moe_w;      /* [n][top_k] their weights */
};

/* The texts of one pass: their rows stacked in the buffers (text i's from row0[i]) so that every
 * linear, norm and element-wise step runs once over all of them; attention runs text by text. The
 * rotary tables hold each text's positions from the same row0[i]. */
struct fwd_batch {
	struct trace **t;
	int nb;
	const int *row0; /* [nb] */
	const struct fwd_ablate *ab; /* heads whose context is replaced (model-internal.h), or NULL */
};

/* Whether the pass shares its work between its own threads: always where the GEMM library does not
 * thread a call itself, else for models whose matrices span several tiles. */
static bool fwd_own_threads(const struct model *m)
{
	return m->own_threads || !gemm_threads_itself();
}

/* ---- the per-stage clock (only when M->stages is set) ---- */

static double fwd_clock(const struct model *m)
{
	return m->stages ? progress_now() : 0;
}

/* Add the time since *T to stage S and restart *T. */
static void fwd_lap(const struct model *m, enum fwd_stage s, double *t)
{
	if (!m->stages)
		return;
	double now = progress_now();
	m->stages->seconds[s] += now - *t;
	*t = now;
}

const char *fwd_stage_name(enum fwd_stage s)
{
	static const char *const names[FWD_STAGES] = {
		"embed", "q/k/v proj", "scores", "softmax", "PV", "out proj", "norm", "MLP GEMMs", "activation",
		"residual add", "trace writes",
	};
	return s >= 0 && s < FWD_STAGES ? names[s] : "?";
}

/* ---- element-wise passes over ranges, shared between the threads when long enough ---- */

struct fwd_range {
	void (*fn)(void *ctx, size_t lo, size_t hi);
	void *ctx;
	size_t count, grain;
};

static void fwd_range_item(void *ctx, int item, float *scratch)
{
	const struct fwd_range *r = ctx;
	size_t lo = (size_t)item * r->grain, hi = lo + r->grain < r->count ? lo + r->grain : r->count;
	r->fn(r->ctx, lo, hi);
}

/* FN over 0 .. COUNT-1 in pieces of GRAIN (chosen for some tens of microseconds of work: handing a
 * piece to another thread costs a few). Each value is computed the same way whoever takes it. */
static void fwd_for(const struct model *m, size_t count, size_t grain, void (*fn)(void *ctx, size_t lo, size_t hi),
		    void *ctx)
{
	struct fwd_range r = {fn, ctx, count, grain ? grain : 1};
	size_t pieces = (count + r.grain - 1) / r.grain;
	if (pieces <= 1 || pieces > 1u << 30 || !fwd_own_threads(m) || weights_parallel((int)pieces, 0, fwd_range_item, &r) < 0)
		fn(ctx, 0, count);
}

/* Set on the thread running a pass over several texts (forward_run_batch): its linears take W whole. */
static _Thread_local bool fwd_batched;

static void fwd_linear(const struct model *m, const float *x, int n, int in, int out, const struct weight *w,
		       const float *b, float *y, int ldy)
{
	if (fwd_batched)
		weight_linear_whole(m->cache, x, n, in, out, w, m->fam.linear == LINEAR_OUT_IN, b, y, ldy);
	else
		weight_linear(m->cache, x, n, in, out, w, m->fam.linear == LINEAR_OUT_IN, b, y, ldy);
}

/* Linears of the same input X [n][in] (weight_linear_set): one job where the weights are packed,
 * else each on its own, as fwd_linear. */
static void fwd_linear_set(const struct model *m, const float *x, int n, int in, const struct linear_part *parts,
			   int count)
{
	if (fwd_batched)
		for (int k = 0; k < count; k++)
			fwd_linear(m, x, n, in, parts[k].out, parts[k].w, parts[k].b, parts[k].y, parts[k].ldy);
	else
		weight_linear_set(m->cache, x, n, in, m->fam.linear == LINEAR_OUT_IN, parts, count);
}

/* Apply norm N to X [n][d] into Y (may alias X); a missing norm copies. */
static void fwd_norm_dim(const struct model *m, const struct norm_weights *nw, const float *x, float *y, int n, int d)
{
	if (!nw->w) {
		if (x != y)
			memcpy(y, x, (size_t)n * d * sizeof(float));
	} else if (m->fam.norm == NORM_RMS) {
		ops_rmsnorm(x, y, n, d, d, nw->w, m->fam.norm_offset, m->ln_eps);
	} else {
		ops_layernorm(x, y, n, d, nw->w, nw->b, m->ln_eps);
	}
}

struct fwd_norm_job {
	const struct model *m;
	const struct norm_weights *nw;
	const float *x;
	float *y;
	int d;
};

static void fwd_norm_rows(void *ctx, size_t lo, size_t hi)
{
	const struct fwd_norm_job *j = ctx;
	fwd_norm_dim(j->m, j->nw, j->x + lo * j->d, j->y + lo * j->d, (int)(hi - lo), j->d);
}

/* Norm of the N rows of X [n][hidden] into Y, rows shared between the threads. */
static void fwd_norm(const struct model *m, const struct norm_weights *nw, const float *x, float *y, int n)
{
	struct fwd_norm_job j = {m, nw, x, y, m->info.hidden};
	double t = fwd_clock(m);
	fwd_for(m, (size_t)n, 16384 / (size_t)(j.d > 0 ? j.d : 1) + 1, fwd_norm_rows, &j);
	fwd_lap(m, FWD_NORM, &t);
}

/* The final norm's inverse denominator of each of the N rows of X [n][hidden] into OUT [n] (trace.h's
 * final_rstd: the frozen scale of direct logit attribution), before the norm is applied to them. */
static void fwd_final_rstd(const struct model *m, const float *x, int n, float *out)
{
	int d = m->info.hidden;
	for (int r = 0; r < n; r++) {
		const float *v = x + (size_t)r * d;
		double mean = 0, sq = 0;
		if (m->fam.norm != NORM_RMS) {
			for (int j = 0; j < d; j++)
				mean += v[j];
			mean /= d;
		}
		for (int j = 0; j < d; j++)
			sq += (v[j] - mean) * (v[j] - mean);
		out[r] = (float)(1 / sqrt(sq / d + m->ln_eps));
	}
}

struct fwd_add_job {
	float *x;
	const float *y;
};

static void fwd_add_range(void *ctx, size_t lo, size_t hi)
{
	const struct fwd_add_job *j = ctx;
	ops_add(j->x + lo, j->y + lo, hi - lo);
}

/* X += Y for COUNT values (the residual stream). */
static void fwd_add(const struct model *m, float *x, const float *y, size_t count)
{
	struct fwd_add_job j = {x, y};
	double t = fwd_clock(m);
	fwd_for(m, count, 65536, fwd_add_range, &j);
	fwd_lap(m, FWD_ADD, &t);
}

/* Column offsets of query head HD, and of key/value head G, in the projection row [q | k | v]. */
static void fwd_head_columns(const struct model *m, int hd, int g, int *q_col, int *k_col, int *v_col)
{
	int D = m->info.head_dim, Dv = m->info.v_dim;
	if (m->fam.fused_qkv && m->fam.qkv_layout == QKV_PER_HEAD) { /* GPT-NeoX: [q_h k_h v_h] per head */
		*q_col = hd * 3 * D;
		*k_col = g * 3 * D + D;
		*v_col = g * 3 * D + 2 * D;
	} else if (m->fam.fused_qkv && m->fam.qkv_layout == QKV_GROUPED) {
		/* Falcon: per key/value group [q_0 .. q_{p-1} k v], p = heads / kv_heads */
		int p = m->info.n_heads / m->arch.n_kv_heads;
		*q_col = (hd / p) * (p + 2) * D + (hd % p) * D;
		*k_col = g * (p + 2) * D + p * D;
		*v_col = g * (p + 2) * D + (p + 1) * D;
	} else {
		*q_col = hd * D;
		*k_col = m->arch.q_dim + g * D;
		*v_col = m->arch.q_dim + m->arch.kv_dim + g * Dv;
	}
}

static void fwd_gather(float *dst, const float *src, int n, int d, int ld)
{
	for (int i = 0; i < n; i++)
		memcpy(dst + (size_t)i * d, src + (size_t)i * ld, d * sizeof(float));
}

struct fwd_split {
	const struct model *m;
	const struct layer_weights *w;
	const struct rope *rope;
	const float *cos_t, *sin_t; /* [n][rotary_dim / 2] */
	const float *qkv;           /* [rows][QD + KD + VD] the projections of tokens r0 .. n-1, or NULL: in
				       the trace already (fwd_project_heads) */
	const float *qk_whole;      /* [rows][QD + KD + VD] q, k normalised over the whole projection, or NULL */
	struct trace *t;
	int l, r0;
	bool no_values;             /* v not projected (fwd_project): the trace's values of the layer are NaN */
};

/* Whether layer L applies no rotary (a NoPE layer: q and k are the projections, after any q/k norm). */
static bool fwd_nope(const struct model *m, int l)
{
	return m->arch.layer_nope && m->arch.layer_nope[l];
}

/* Llama 4, after rotary, on ROWS rows of a head's q (IS_Q) or k from token R0 on, in place in X: on the
 * rotary layers the L2 norm (an RMSNorm without gain, eps layer_norm_eps) of q and k; on the NoPE layers
 * the attention temperature of q, × (log(floor((p + 1) / floor_scale) + 1) · attn_scale + 1) for token p,
 * in float32 as Llama4TextAttention computes it. Nothing for other families. */
static void fwd_after_rotary(const struct model *m, int l, bool is_q, float *x, int rows, int d, int r0)
{
	const struct arch *a = &m->arch;
	if (a->qk_l2 && !fwd_nope(m, l))
		ops_rmsnorm(x, x, rows, d, d, m->ones, 0.0f, m->ln_eps);
	if (!is_q || !a->temperature || !fwd_nope(m, l))
		return;
	for (int i = 0; i < rows; i++) {
		float s = logf(floorf(((float)(r0 + i) + 1.0f) / a->floor_scale) + 1.0f) * a->temperature_scale + 1.0f;
		for (int j = 0; j < d; j++)
			x[(size_t)i * d + j] *= s;
	}
}

/* Rotary on X [rows][D] of layer L's heads: on dims rope_offset .. of each row (latent attention: the
 * rope dims after the nope ones, first de-interleaved when its weights pair them (2i, 2i+1)). */
static void fwd_rotate(const struct fwd_split *s, float *x, int rows, int D, const float *cos_t, const float *sin_t)
{
	const struct arch *a = &s->m->arch;
	if (!a->rotary || fwd_nope(s->m, s->l))
		return;
	if (a->rope_deinterleave)
		mla_deinterleave(x + a->rope_offset, rows, D, s->rope->dim);
	rope_apply(s->rope, x + a->rope_offset, rows, D, cos_t, sin_t);
}

/* Item I < n_heads: query head I; else key/value head I - n_heads. Copy it from the projections into
 * the trace, then apply q/k norm and rotary there. */
static void fwd_split_head(void *ctx, int item, float *scratch)
{
	const struct fwd_split *s = ctx;
	const struct model *m = s->m;
	struct trace *t = s->t;
	int D = t->head_dim, Dv = trace_v_dim(t), l = s->l, ld = m->arch.q_dim + m->arch.kv_dim + m->arch.v_dim;
	int group = t->n_heads / t->n_kv_heads;
	int r0 = s->r0, rows = t->n - r0, half = s->rope->dim / 2;
	size_t skip = (size_t)r0 * D, skip_v = (size_t)r0 * Dv; /* the reused rows */
	const float *cos_t = s->cos_t + (size_t)r0 * half, *sin_t = s->sin_t + (size_t)r0 * half;
	int qc, kc, vc;
	if (item < t->n_heads) {
		int hd = item;
		fwd_head_columns(m, hd, hd / group, &qc, &kc, &vc);
		float *tq = (float *)trace_q(t, l, hd) + skip;
		if (s->qkv)
			fwd_gather(tq, s->qkv + qc, rows, D, ld);
		if (t->q_raw)
			memcpy((float *)trace_q_raw(t, l, hd) + skip, tq, (size_t)rows * D * sizeof(float));
		if (s->qk_whole) /* normalised already, over all heads: the raw copy above stays the projection */
			fwd_gather(tq, s->qk_whole + qc, rows, D, ld);
		else if (s->w->q_norm_w && m->fam.qk_norm == QK_NORM_EACH_HEAD) /* StableLM: this head's own gain */
			fwd_norm_dim(m, &(struct norm_weights){s->w->q_norm_w + (size_t)hd * D, NULL}, tq, tq, rows, D);
		else if (s->w->q_norm_w)
			ops_rmsnorm(tq, tq, rows, D, D, s->w->q_norm_w, m->fam.norm_offset, m->ln_eps);
		fwd_rotate(s, tq, rows, D, cos_t, sin_t);
		fwd_after_rotary(m, l, true, tq, rows, D, r0);
		return;
	}
	int g = item - t->n_heads, first = g * group; /* a query head reading kv head g */
	fwd_head_columns(m, first, g, &qc, &kc, &vc);
	float *tk = (float *)trace_k(t, l, first) + skip, *tv = (float *)trace_v(t, l, first) + skip_v;
	if (s->qkv)
		fwd_gather(tk, s->qkv + kc, rows, D, ld);
	if (s->no_values)
		for (size_t j = 0; j < (size_t)rows * Dv; j++)
			tv[j] = NAN;
	else if (s->qkv)
		fwd_gather(tv, s->qkv + vc, rows, Dv, ld);
	if (t->k_raw)
		memcpy((float *)trace_k_raw(t, l, first) + skip, tk, (size_t)rows * D * sizeof(float));
	if (s->qk_whole)
		fwd_gather(tk, s->qk_whole + kc, rows, D, ld);
	else if (s->w->k_norm_w && m->fam.qk_norm == QK_NORM_EACH_HEAD)
		fwd_norm_dim(m, &(struct norm_weights){s->w->k_norm_w + (size_t)g * D, NULL}, tk, tk, rows, D);
	else if (s->w->k_norm_w)
		ops_rmsnorm(tk, tk, rows, D, D, s->w->k_norm_w, m->fam.norm_offset, m->ln_eps);
	fwd_rotate(s, tk, rows, D, cos_t, sin_t);
	fwd_after_rotary(m, l, false, tk, rows, D, r0);
}

/* X → clamp(X, -LIMIT, LIMIT) for COUNT values (torch.clamp: NaN stays NaN). */
static void fwd_clamp(float *x, size_t count, float limit)
{
	for (size_t i = 0; i < count; i++)
		x[i] = x[i] < -limit ? -limit : x[i] > limit ? limit : x[i];
}

/* Q, K and V of one text's rows projected straight into its trace's head-major arrays, the tiles of
 * the packed projections writing each head's columns where the trace keeps them: no copy from the
 * projections' rows into the trace after them (at 512 tokens on the bert-base shape that copy read
 * and wrote 57 MB a pass). Where it cannot (several texts, a layout or a transform of q, k, v
 * before the split into heads, the projections not packed), false, having written nothing. */
static bool fwd_project_heads(const struct model *m, int l, const float *h, const struct fwd_buf *b,
			      const struct fwd_batch *bt, bool no_values)
{
	const struct layer_weights *w = &m->layers[l];
	const struct arch *a = &m->arch;
	const struct trace *t = bt->t[0];
	int D = t->head_dim, QD = a->q_dim, KD = a->kv_dim, n = b->rows;
	if (fwd_batched || bt->nb != 1 || n != t->n - b->r0 || m->fam.attention == ATTENTION_MLA || a->clip_qkv > 0 ||
	    (b->qk_whole && w->q_norm_w) || (m->fam.fused_qkv && m->fam.qkv_layout != QKV_CONCAT) ||
	    trace_v_dim(t) != D || D % 16 != 0 || QD != t->n_heads * D || KD != t->n_kv_heads * D || a->v_dim != KD)
		return false;
	size_t stride = (size_t)t->n * D, skip = (size_t)b->r0 * D; /* a head's rows; the reused ones */
	float *q = (float *)trace_q(t, l, 0) + skip, *k = (float *)trace_k(t, l, 0) + skip;
	float *v = (float *)trace_v(t, l, 0) + skip;
	bool transposed = m->fam.linear == LINEAR_OUT_IN;
	if (m->fam.fused_qkv) {
		const struct gemm_heads qkv = {D, stride, 3, {0, QD, QD + KD}, {q, k, v}, 0};
		const struct linear_part part = {&w->qkv_w, QD + 2 * KD, w->qkv_b, NULL, 0, &qkv};
		return weight_linear_set(m->cache, h, n, m->info.hidden, transposed, &part, 1) == 0;
	}
	const struct gemm_heads hq = {D, stride, 1, {0}, {q}, 0}, hk = {D, stride, 1, {0}, {k}, 0},
				hv = {D, stride, 1, {0}, {v}, 0};
	const struct linear_part parts[] = {{&w->q_w, QD, w->q_b, NULL, 0, &hq},
					    {&w->k_w, KD, w->k_b, NULL, 0, &hk},
					    {&w->v_w, KD, w->v_b, NULL, 0, &hv}};
	return weight_linear_set(m->cache, h, n, m->info.hidden, transposed, parts, no_values ? 2 : 3) == 0;
}

/* Project H into q, k, v, copy them per head into each text's trace (or project them there), then
 * apply q/k norm and rotary there. Without VALUES (the last block of an attention-only pass, whose
 * probabilities are all it keeps), v is not projected where it is a linear of its own (a third of the
 * products that block still runs, a twelfth of a whole block's on the bert-base shape), and the
 * trace's values of the layer are NaN. */
static void fwd_project(const struct model *m, int l, const float *h, struct fwd_buf *b, const struct fwd_batch *bt,
			bool values)
{
	const struct layer_weights *w = &m->layers[l];
	const struct arch *a = &m->arch;
	int n = b->rows, H = m->info.hidden, QD = a->q_dim, KD = a->kv_dim, ld = QD + KD + a->v_dim;
	double clock = fwd_clock(m);
	bool in_trace = false;
	/* not where a fused projection (or MLA's) computes v anyway, or OLMo's clamp reads every column */
	bool no_values = !values && !m->fam.fused_qkv && m->fam.attention != ATTENTION_MLA && !(a->clip_qkv > 0);
	if (fwd_project_heads(m, l, h, b, bt, no_values)) {
		in_trace = true;
	} else if (m->fam.attention == ATTENTION_MLA) {
		mla_project(m, w, h, n, b->mla, b->qkv, ld);
	} else if (m->fam.fused_qkv) {
		fwd_linear(m, h, n, H, ld, &w->qkv_w, w->qkv_b, b->qkv, ld);
	} else {
		const struct linear_part qkv[] = {{&w->q_w, QD, w->q_b, b->qkv, ld, NULL},
						  {&w->k_w, KD, w->k_b, b->qkv + QD, ld, NULL},
						  {&w->v_w, KD, w->v_b, b->qkv + QD + KD, ld, NULL}};
		fwd_linear_set(m, h, n, H, qkv, no_values ? 2 : 3);
	}
	if (a->clip_qkv > 0) /* OLMo: q, k, v clamped as projected, before any norm or rotary */
		fwd_clamp(b->qkv, (size_t)n * ld, a->clip_qkv);
	bool whole = b->qk_whole && w->q_norm_w;
	if (whole) { /* OLMo 2: RMSNorm over all of q (all of k) before the split into heads */
		ops_rmsnorm(b->qkv, b->qk_whole, n, QD, ld, w->q_norm_w, m->fam.norm_offset, m->ln_eps);
		ops_rmsnorm(b->qkv + QD, b->qk_whole + QD, n, KD, ld, w->k_norm_w, m->fam.norm_offset, m->ln_eps);
	}
	fwd_lap(m, FWD_QKV, &clock);
	bool sliding = a->layer_sliding && a->layer_sliding[l];
	const struct rope *rope = sliding ? &a->rope_local : &a->rope_global;
	/* in the trace already, with nothing to do there per head (no raw copies, norms or rotary): done */
	bool per_head = !in_trace || no_values || bt->t[0]->q_raw || bt->t[0]->k_raw || w->q_norm_w || w->k_norm_w ||
			(a->rotary && !fwd_nope(m, l)) || a->qk_l2 || a->temperature;
	for (int i = 0; per_head && i < bt->nb; i++) {
		struct trace *t = bt->t[i];
		size_t at = (size_t)bt->row0[i] * (rope->dim / 2); /* the text's rows of the rotary tables */
		struct fwd_split s = {m, w, rope, (sliding ? b->cos_l : b->cos_g) + at, (sliding ? b->sin_l : b->sin_g) + at,
				      in_trace ? NULL : b->qkv + (size_t)bt->row0[i] * ld,
				      whole ? b->qk_whole + (size_t)bt->row0[i] * ld : NULL, t, l, b->r0, no_values};
		int items = t->n_heads + t->n_kv_heads;
		/* a head's copy is n x head_dim floats: shared between the threads once it is worth a hand-over */
		if (t->n < 32 || !fwd_own_threads(m) || weights_parallel(items, 0, fwd_split_head, &s) < 0)
			for (int it = 0; it < items; it++)
				fwd_split_head(&s, it, NULL);
	}
	fwd_lap(m, FWD_TRACE, &clock);
}

struct fwd_heads {
	const struct model *m;
	struct trace *t;
	struct fwd_buf *b;
	int l;
	double (*secs)[3]; /* [n_heads] seconds in scores, softmax, PV when timed (else NULL) */
	float *ctx;        /* the text's first row of B->ctx */
	const struct fwd_ablate *ab; /* the run's ablation, or NULL */
	bool probabilities_only; /* no context (the last block of an attention-only pass) */
};

/* The one place an ablation acts: head HD's context columns of layer L (ROWS rows, CD apart) recorded
 * as their mean over the rows (AB->record: the clean pass of a mean-ablation) or replaced by zeros /
 * the recorded means. Its attention pattern stays as computed; only what it passes on changes. */
static void fwd_ablate_head(const struct fwd_ablate *ab, int l, int hd, int heads, float *ctx, int rows, int CD,
			    int Dv)
{
	size_t at = (size_t)l * heads + hd;
	if (!ab || !ab->mask[at])
		return;
	if (ab->record) {
		for (int j = 0; j < Dv; j++) {
			double s = 0; /* float32 context values, summed in float64 */
			for (int i = 0; i < rows; i++)
				s += ctx[(size_t)i * CD + hd * Dv + j];
			ab->record[at * Dv + j] = rows > 0 ? (float)(s / rows) : 0.0f;
		}
		return;
	}
	for (int i = 0; i < rows; i++)
		for (int j = 0; j < Dv; j++)
			ctx[(size_t)i * CD + hd * Dv + j] = ab->means ? ab->means[at * Dv + j] : 0.0f;
}

/* Scores, probabilities and context of head HD (each head writes only its own). */
static void fwd_head(void *ctx, int hd, float *scratch)
{
	const struct fwd_heads *c = ctx;
	struct trace *t = c->t;
	int n = t->n, D = t->head_dim, QD = c->m->arch.q_dim, l = c->l, r0 = c->b->r0, rows = n - r0;
	int Dv = trace_v_dim(t), CD = c->m->arch.ctx_dim;
	const float *v = trace_v(t, l, hd);
	/* scores, then probabilities, in place; a compact trace (long texts) keeps only their summary */
	float *p = t->attn ? (float *)trace_attn(t, l, hd) : scratch;
	if (!p) { /* no memory for it: NaN, which the trace reports, rather than garbage */
		for (int i = 0; i < rows; i++)
			for (int j = 0; j < Dv; j++)
				c->ctx[(size_t)i * CD + hd * Dv + j] = NAN;
		return;
	}
	double t0 = c->secs ? progress_now() : 0, t1 = 0, t2 = 0;
	p += (size_t)r0 * n; /* the reused queries' rows are there already (never in a compact trace) */
	struct attnscore a; /* the terms the trace holds (what a compact trace recomputes with), and: */
	attnscore_of_trace(&a, t, l, hd);
	a.visible_only = true;
	const struct fwd_buf *b = c->b;
	if (b->rel) { /* DeBERTa: the content-to-position and position-to-content terms */
		a.rel = &c->m->relpos;
		a.rel_q = b->rel_q + hd * D;
		a.rel_k = b->rel_k + trace_kv_head(t, hd) * D;
		a.rel_stride = QD;
	}
	attnscore_logits(&a, r0, n, p);
	if (c->secs)
		t1 = progress_now();
	attnscore_softmax(&a, r0, n, p);
	if (c->secs)
		t2 = progress_now();
	if (!c->probabilities_only) {
		for (int i = r0; i < n;) { /* the context: each block of queries with the keys it sees (attnscore_block) */
			int end, keys = attnscore_block(t, i, &end);
			gemm(false, end - i, Dv, keys, 1.0f, p + (size_t)(i - r0) * n, n, v, Dv, 0.0f,
			     c->ctx + (size_t)(i - r0) * CD + hd * Dv, CD);
			i = end;
		}
		fwd_ablate_head(c->ab, l, hd, t->n_heads, c->ctx, rows, CD, Dv);
	}
	if (!t->attn)
		headsummary_record(t, l, hd, p);
	if (c->secs) {
		c->secs[hd][0] = t1 - t0;
		c->secs[hd][1] = t2 - t1;
		c->secs[hd][2] = progress_now() - t2;
	}
}

/* Share the wall time of the heads (since *T) between the scores, softmax and PV stages in
 * proportion to the threads' time in each. */
static void fwd_heads_lap(const struct model *m, const struct fwd_heads *c, int heads, double *t)
{
	if (!m->stages)
		return;
	double sum[3] = {0, 0, 0}, all = 0, start = *t;
	for (int hd = 0; c->secs && hd < heads; hd++)
		for (int s = 0; s < 3; s++)
			sum[s] += c->secs[hd][s], all += c->secs[hd][s];
	fwd_lap(m, FWD_SCORES, t);
	double wall = *t - start;
	m->stages->seconds[FWD_SCORES] -= wall;
	for (int s = 0; s < 3; s++)
		m->stages->seconds[FWD_SCORES + s] += all > 0 ? wall * sum[s] / all : s == 0 ? wall : 0;
}

struct fwd_vnorm {
	const struct model *m;
	struct trace *t;
	int l, r0;
};

/* ‖f_h(x_j)‖ of head HD for tokens r0 .. n-1 into the trace (Kobayashi et al. 2020): the head's values
 * (what its probabilities multiply, so exact for every family: GQA's shared head, latent attention's
 * narrower v) times the Dv rows of the output projection its context feeds, without the output bias.
 * SCRATCH: Dv * hidden + rows * hidden floats. */
static void fwd_vnorm_head(void *ctx, int hd, float *scratch)
{
	const struct fwd_vnorm *c = ctx;
	const struct model *m = c->m;
	struct trace *t = c->t;
	const struct weight *w = &m->layers[c->l].out_w;
	int H = t->hidden, Dv = trace_v_dim(t), rows = t->n - c->r0;
	float *wh = scratch, *y = scratch + (size_t)Dv * H; /* [Dv][H] or [H][Dv]; [rows][H] */
	bool out_in = m->fam.linear == LINEAR_OUT_IN;
	if (out_in) /* torch Linear [H][CD]: the head's Dv columns */
		weight_cols(w, (int64_t)hd * Dv, Dv, wh);
	else /* GPT-2 Conv1D [CD][H]: its Dv rows */
		weight_rows(w, (int64_t)hd * Dv, Dv, wh);
	const float *v = trace_v(t, c->l, hd) + (size_t)c->r0 * Dv;
	gemm(out_in, rows, H, Dv, 1.0f, v, Dv, wh, out_in ? Dv : H, 0.0f, y, H);
	float *out = (float *)trace_vnorm(t, c->l, hd) + c->r0;
	int i = 0;
	for (; i + 4 <= rows; i += 4) { /* four rows at once: each sums its squares in order as one row alone
					   does, but the four chains of additions no longer wait on one another
					   (a 128-token bert-base forward's norms 14.2-14.6 -> 12.8-13.1 ms) */
		const float *y0 = y + (size_t)i * H, *y1 = y0 + H, *y2 = y1 + H, *y3 = y2 + H;
		double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
		for (int j = 0; j < H; j++) {
			s0 += (double)y0[j] * y0[j];
			s1 += (double)y1[j] * y1[j];
			s2 += (double)y2[j] * y2[j];
			s3 += (double)y3[j] * y3[j];
		}
		out[i] = (float)sqrt(s0), out[i + 1] = (float)sqrt(s1), out[i + 2] = (float)sqrt(s2), out[i + 3] = (float)sqrt(s3);
	}
	for (; i < rows; i++) {
		double s = 0;
		for (int j = 0; j < H; j++)
			s += (double)y[(size_t)i * H + j] * y[(size_t)i * H + j];
		out[i] = (float)sqrt(s);
	}
}

/* Every head's ‖f_h(x_j)‖ of layer L for the computed tokens of T (from R0). */
static void fwd_value_norms(const struct model *m, int l, struct trace *t, int r0)
{
	if (!t->vnorm || r0 >= t->n)
		return;
	size_t scratch = (size_t)trace_v_dim(t) * t->hidden + (size_t)(t->n - r0) * t->hidden;
	struct fwd_vnorm c = {m, t, l, r0};
	if (fwd_own_threads(m) && weights_parallel(t->n_heads, scratch, fwd_vnorm_head, &c) == 0)
		return;
	float *buf = malloc(scratch * sizeof *buf);
	for (int hd = 0; hd < t->n_heads; hd++) {
		if (buf)
			fwd_vnorm_head(&c, hd, buf);
		else /* no memory: NaN, which says so, rather than zeros that look like an answer */
			for (int i = r0; i < t->n; i++)
				((float *)trace_vnorm(t, l, hd))[i] = NAN;
	}
	free(buf);
}

/* Copy the context rows of tokens R0 .. n-1 of layer L (CTX, heads side by side) into DST [n_layers][n][width]
 * (trace.h's context or cross_context); nothing when DST is NULL. */
static void fwd_keep_context(const struct trace *t, int l, const float *ctx, int r0, float *dst)
{
	size_t width = (size_t)t->n_heads * trace_v_dim(t);
	if (dst)
		memcpy(dst + ((size_t)l * t->n + r0) * width, ctx, (size_t)(t->n - r0) * width * sizeof(float));
}

/* Self-attention of layer L on input H [rows][hidden]; result (after output projection) in B->proj, or, with
 * PROBABILITIES_ONLY, nothing past each head's probabilities in the traces (no context, no projection).
 * Heads run one after the other (each sgemm threaded by the GEMM library), or on our threads. */
static void fwd_attention(const struct model *m, int l, const float *h, struct fwd_buf *b, const struct fwd_batch *bt,
			  bool probabilities_only)
{
	int H = m->info.hidden;
	double clock = fwd_clock(m);
	fwd_project(m, l, h, b, bt, !probabilities_only);
	if (b->rel) { /* DeBERTa (share_att_key): the layer's own q/k projections of the relative embeddings */
		const struct layer_weights *w = &m->layers[l];
		int rows = 2 * m->relpos.span, QD = m->arch.q_dim, KD = m->arch.kv_dim;
		fwd_linear(m, b->rel, rows, H, QD, &w->q_w, w->q_b, b->rel_q, QD);
		fwd_linear(m, b->rel, rows, H, KD, &w->k_w, w->k_b, b->rel_k, KD);
	}
	for (int i = 0; i < bt->nb; i++) {
		struct trace *t = bt->t[i];
		struct fwd_heads c = {m, t, b, l, NULL, b->ctx + (size_t)bt->row0[i] * m->arch.ctx_dim, bt->ab,
				      probabilities_only};
		if (m->stages) {
			c.secs = calloc((size_t)t->n_heads, sizeof *c.secs); /* no memory: the heads go untimed */
			clock = progress_now();
		}
		size_t scratch = t->attn ? 0 : (size_t)t->n * t->n; /* a compact trace: a head's P per thread */
		if (fwd_own_threads(m)) {
			if (weights_parallel(t->n_heads, scratch, fwd_head, &c) < 0)
				for (int hd = 0; hd < t->n_heads; hd++)
					fwd_head(&c, hd, NULL);
		} else {
			float *p = scratch ? malloc(scratch * sizeof *p) : NULL;
			for (int hd = 0; hd < t->n_heads; hd++)
				fwd_head(&c, hd, p);
			free(p);
		}
		fwd_heads_lap(m, &c, t->n_heads, &clock);
		free(c.secs);
	}
	if (probabilities_only)
		return;
	for (int i = 0; i < bt->nb; i++) /* an encoder-decoder's trace keeps each layer's context (--dump) */
		fwd_keep_context(bt->t[i], l, b->ctx + (size_t)bt->row0[i] * m->arch.ctx_dim, b->r0, bt->t[i]->context);
	fwd_linear(m, b->ctx, b->rows, m->arch.ctx_dim, H, &m->layers[l].out_w, m->layers[l].out_b, b->proj, H);
	fwd_lap(m, FWD_OUT_PROJ, &clock);
	for (int i = 0; i < bt->nb; i++)
		fwd_value_norms(m, l, bt->t[i], b->r0);
	fwd_lap(m, FWD_TRACE, &clock);
}

/* Cross-attention of decoder layer L (an encoder-decoder's decoder stack) on input H [rows][hidden]; result
 * (after its output projection) in B->proj. Queries come from H, keys and values from the encoder's last
 * hidden state (the trace's encoder); every query sees every encoder token, without bias or mask. The
 * scores run the one pipeline (attnscore.h) with n_keys set. */
static void fwd_cross(const struct model *m, int l, const float *h, struct fwd_buf *b, const struct fwd_batch *bt)
{
	const struct layer_weights *w = &m->layers[l];
	int H = m->info.hidden, QD = m->arch.q_dim, D = m->info.head_dim;
	double clock = fwd_clock(m);
	fwd_linear(m, h, b->rows, H, QD, &w->xq_w, w->xq_b, b->qkv, QD);
	for (int i = 0; i < bt->nb; i++) {
		struct trace *t = bt->t[i];
		const struct trace *enc = t->encoder;
		int n = t->n, ne = t->n_cross, r0 = b->r0;
		const float *src = trace_hidden(enc, enc->n_layers); /* [ne][H] */
		float *kv = malloc((size_t)2 * (ne > 0 ? ne : 1) * QD * sizeof *kv), *ctx = b->ctx + (size_t)bt->row0[i] * QD;
		if (!kv) { /* no memory: NaN, which the trace reports, rather than garbage */
			for (size_t j = 0; j < (size_t)(n - r0) * QD; j++)
				ctx[j] = NAN;
			continue;
		}
		fwd_linear(m, src, ne, H, QD, &w->xk_w, w->xk_b, kv, QD);
		fwd_linear(m, src, ne, H, QD, &w->xv_w, w->xv_b, kv + (size_t)ne * QD, QD);
		for (int hd = 0; hd < t->n_heads; hd++) {
			size_t lh = (size_t)l * t->n_heads + hd;
			float *q = t->cross_q + lh * n * D, *k = t->cross_k + lh * ne * D, *v = t->cross_v + lh * ne * D;
			float *p = t->cross_attn + lh * n * ne;
			fwd_gather(q + (size_t)r0 * D, b->qkv + (size_t)bt->row0[i] * QD + hd * D, n - r0, D, QD);
			fwd_gather(k, kv + hd * D, ne, D, QD);
			fwd_gather(v, kv + (size_t)ne * QD + hd * D, ne, D, QD);
			struct attnscore a = {.t = t, .layer = l, .n = n, .d = D, .q = q, .k = k,
					      .scale = t->score_scale[l], .n_keys = ne};
			attnscore_probs(&a, r0, n, p + (size_t)r0 * ne);
			gemm(false, n - r0, D, ne, 1.0f, p + (size_t)r0 * ne, ne, v, D, 0.0f, ctx + hd * D, QD);
		}
		fwd_keep_context(t, l, ctx, r0, t->cross_context);
		free(kv);
	}
	fwd_linear(m, b->ctx, b->rows, QD, H, &w->xo_w, w->xo_b, b->proj, H);
	fwd_lap(m, FWD_OUT_PROJ, &clock);
}

/* T5's relative position bias of T's stack into T->pos_bias [heads][n][n] and its buckets into
 * T->pos_buckets [n][n] (allocated here): rel = key − query; the encoder's buckets are bidirectional (half
 * of them for keys after the query), the decoder's causal (keys before it); distances below half the
 * buckets exact, the rest log-spaced up to max_distance, in float32 as T5Attention._relative_position_bucket
 * computes them. -1 when out of memory. */
static int fwd_t5_bias(const struct model *m, struct trace *t)
{
	int n = t->n, heads = t->n_heads, nb = m->rel_buckets;
	bool bidirectional = !m->is_decoder;
	if (!t->pos_bias)
		t->pos_bias = malloc((size_t)heads * n * n * sizeof *t->pos_bias + 1);
	if (!t->pos_buckets)
		t->pos_buckets = malloc((size_t)n * n * sizeof *t->pos_buckets + 1);
	float *table = malloc((size_t)nb * heads * sizeof *table);
	if (!t->pos_bias || !t->pos_buckets || !table) {
		free(table);
		return -1;
	}
	weight_rows(&m->rel_bias, 0, nb, table);
	int half = bidirectional ? nb / 2 : nb, exact = half / 2;
	float span = (float)log((double)m->rel_max_distance / exact); /* math.log, then a float32 divisor */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			int rel = j - i, bucket = 0;
			if (bidirectional) {
				bucket = rel > 0 ? half : 0;
				rel = rel < 0 ? -rel : rel;
			} else {
				rel = rel < 0 ? -rel : 0;
			}
			if (rel < exact) {
				bucket += rel;
			} else {
				int large = exact + (int)(logf((float)rel / (float)exact) / span * (float)(half - exact));
				bucket += large < half - 1 ? large : half - 1;
			}
			t->pos_buckets[(size_t)i * n + j] = bucket;
			for (int h = 0; h < heads; h++)
				t->pos_bias[((size_t)h * n + i) * n + j] = table[(size_t)bucket * heads + h];
		}
	free(table);
	return 0;
}

struct fwd_act_job {
	enum activation act;
	float *x;           /* plain: values in place */
	const float *gate;  /* gated: rows STRIDE apart, gate | up */
	int count, stride;  /* gated: values per row */
	float *out;         /* gated: [n][count] */
};

static void fwd_act_range(void *ctx, size_t lo, size_t hi)
{
	const struct fwd_act_job *j = ctx;
	if (j->gate)
		ops_gated(j->act, j->gate + lo * j->stride, j->gate + lo * j->stride + j->count, (int)(hi - lo), j->count,
			  j->stride, j->out + lo * j->count);
	else
		ops_activation(j->act, j->x + lo, hi - lo);
}

/* MLP of layer L on H [n][hidden] into OUT [n][hidden]. */
static void fwd_mlp(const struct model *m, int l, const float *h, struct fwd_buf *b, int n, float *out)
{
	const struct layer_weights *w = &m->layers[l];
	int H = m->info.hidden, inter = m->info.intermediate;
	double t = fwd_clock(m);
	const float *down_in = b->mid;
	if (moe_layer(m, l)) { /* a mixture of experts (moe.c); its routing goes to the trace after the block */
		(void)moe_forward(m, l, h, n, out, b->moe_topk, b->moe_w);
		fwd_lap(m, FWD_MLP_GEMM, &t);
		return;
	}
	if (m->fam.mlp == MLP_PLAIN) {
		fwd_linear(m, h, n, H, inter, &w->up_w, w->up_b, b->mid, inter);
		fwd_lap(m, FWD_MLP_GEMM, &t);
		struct fwd_act_job j = {m->act, b->mid, NULL, 0, 0, NULL};
		fwd_for(m, (size_t)n * inter, 8192, fwd_act_range, &j);
	} else {
		/* gate | up side by side in B->mid (rows 2I wide), then act(gate) * up into B->gated */
		if (weight_present(&w->gate_up_w)) {
			fwd_linear(m, h, n, H, 2 * inter, &w->gate_up_w, NULL, b->mid, 2 * inter);
		} else {
			const struct linear_part gate_up[] = {{&w->gate_w, inter, w->gate_b, b->mid, 2 * inter, NULL},
							      {&w->up_w, inter, w->up_b, b->mid + inter, 2 * inter, NULL}};
			fwd_linear_set(m, h, n, H, gate_up, 2);
		}
		fwd_lap(m, FWD_MLP_GEMM, &t);
		struct fwd_act_job j = {m->act, NULL, b->mid, inter, 2 * inter, b->gated};
		fwd_for(m, (size_t)n, 8192 / (size_t)(inter > 0 ? inter : 1) + 1, fwd_act_range, &j);
		down_in = b->gated;
	}
	fwd_lap(m, FWD_ACTIVATION, &t);
	fwd_linear(m, down_in, n, inter, H, &w->down_w, w->down_b, out, H);
	fwd_lap(m, FWD_MLP_GEMM, &t);
}

/* Row POS of a computed sinusoid table (family position sinusoid, M2M100's SinusoidalPositionalEmbedding) into
 * ROW [E]: sin(POS f_i) for i < E/2, then cos of the same angles, f_i = exp(-i ln(10000) / (E/2 - 1)), each step
 * in float32 as torch computes the table; the row of PAD (-1 = none) is zero. An odd E leaves its last value 0. */
static void fwd_sinusoid(int pos, int pad, int E, float *row)
{
	int half = E / 2;
	memset(row, 0, (size_t)E * sizeof *row);
	if (pos == pad || half < 2)
		return;
	float step = (float)(log(10000.0) / (half - 1)); /* math.log(10000) / (half - 1), a float32 scalar */
	for (int i = 0; i < half; i++) {
		float angle = (float)pos * expf((float)i * -step);
		row[i] = sinf(angle);
		row[half + i] = cosf(angle);
	}
}

/* Embeddings of T's tokens into X [n][hidden]: only the rows of the ids are read (and converted) from
 * the tables. The tables are E wide: where E differs from the hidden size (ELECTRA, ALBERT) the rows
 * go to E_BUF [n][E] for their LayerNorm and then through the projection. ROW is scratch for E floats. */
static void fwd_embed(const struct model *m, struct trace *t, int r0, float *x, float *e_buf, float *row)
{
	int E = m->embed_dim, seen = 0, rows = t->n - r0;
	float scale = m->arch.embed_scale, *e = weight_present(&m->emb_proj_w) ? e_buf : x;
	for (int i = r0; i < t->n; i++) {
		float *ei = e + (size_t)(i - r0) * E;
		weight_rows(&m->tok_emb, t->ids[i], 1, ei);
		if (scale > 0)
			for (int j = 0; j < E; j++)
				ei[j] = ei[j] * scale;
		int pos = i + m->fam.position_offset; /* OPT reads row i + 2 */
		if (m->fam.positions_after_pad) /* RoBERTa: pad + 1, pad + 2, ... skipping pad tokens */
			pos = t->ids[i] == m->pad_id ? m->pad_id : m->pad_id + ++seen;
		if (weight_present(&m->pos_emb)) {
			weight_rows(&m->pos_emb, pos, 1, row);
			ops_add(ei, row, E);
		} else if (m->fam.position == POS_SINUSOID) {
			fwd_sinusoid(pos, m->fam.positions_after_pad ? m->pad_id : -1, E, row);
			ops_add(ei, row, E);
		}
		if (weight_present(&m->type_emb)) {
			weight_rows(&m->type_emb, t->type_ids[i], 1, row);
			ops_add(ei, row, E);
		}
	}
	fwd_norm_dim(m, &m->emb_ln, e, e, rows, E);
	if (weight_present(&m->emb_proj_w))
		fwd_linear(m, e_buf, rows, E, t->hidden, &m->emb_proj_w, m->emb_proj_b, x, t->hidden);
}

/* Granite: a residual branch's COUNT values times residual_multiplier before they are added (a float32
 * product, as torch's). Nothing for other families. */
static void fwd_residual_scale(const struct model *m, float *y, size_t count)
{
	float s = m->arch.residual_scale;
	if (s > 0)
		for (size_t i = 0; i < count; i++)
			y[i] *= s;
}

/* One block of layer L on the residual stream B->x (every text's rows). */
static void fwd_block(const struct model *m, int l, struct fwd_buf *b, const struct fwd_batch *bt)
{
	const struct layer_weights *w = &m->layers[l];
	int n = b->rows;
	size_t nh = (size_t)n * m->info.hidden;
	if (m->fam.block == BLOCK_POST_LN) {
		/* BERT: x = LN1(x + Attn(x)); x = LN2(x + MLP(x)) */
		fwd_attention(m, l, b->x, b, bt, false);
		fwd_add(m, b->x, b->proj, nh);
		fwd_norm(m, &w->ln1, b->x, b->x, n);
		if (m->is_decoder) { /* BART, Marian: x = XLN(x + Cross(x)) */
			fwd_cross(m, l, b->x, b, bt);
			fwd_add(m, b->x, b->proj, nh);
			fwd_norm(m, &w->xln, b->x, b->x, n);
		}
		fwd_mlp(m, l, b->x, b, n, b->proj);
		fwd_add(m, b->x, b->proj, nh);
		fwd_norm(m, &w->ln2, b->x, b->x, n);
		return;
	}
	/* Pre-LN: x += [post_attn](Attn(LN1 x)); x += [post_mlp](MLP(LN2 x)) */
	fwd_norm(m, &w->ln1, b->x, b->h, n);
	fwd_attention(m, l, b->h, b, bt, false);
	if (m->fam.block == BLOCK_PARALLEL_ONE_NORM) {
		/* GPT-J, Phi, Cohere: x = (attn(ln1 x) + mlp(ln1 x)) + x, the MLP reading the same normed x */
		fwd_mlp(m, l, b->h, b, n, b->proj2);
		fwd_add(m, b->proj2, b->proj, nh);
		fwd_add(m, b->x, b->proj2, nh);
		return;
	}
	fwd_norm(m, &w->post_attn, b->proj, b->proj, n);
	if (m->arch.parallel_residual) {
		/* GPT-NeoX: x = (mlp(ln2 x) + attn(ln1 x)) + x, both from the same x */
		fwd_norm(m, &w->ln2, b->x, b->h, n);
		fwd_mlp(m, l, b->h, b, n, b->proj2);
		fwd_add(m, b->proj2, b->proj, nh);
		fwd_add(m, b->x, b->proj2, nh);
		return;
	}
	fwd_residual_scale(m, b->proj, nh);
	fwd_add(m, b->x, b->proj, nh);
	if (m->is_decoder) { /* T5, mBART, ...: x += Cross(XLN x) */
		fwd_norm(m, &w->xln, b->x, b->h, n);
		fwd_cross(m, l, b->h, b, bt);
		fwd_add(m, b->x, b->proj, nh);
	}
	fwd_norm(m, &w->ln2, b->x, b->h, n);
	fwd_mlp(m, l, b->h, b, n, b->proj);
	fwd_norm(m, &w->post_mlp, b->proj, b->proj, n);
	fwd_residual_scale(m, b->proj, nh);
	fwd_add(m, b->x, b->proj, nh);
}

/* The last block L of an attention-only pass: its queries, keys and probabilities into the traces, and
 * nothing after them (values where a linear of their own, context, output projection, MLP, final norm),
 * which no result of the pass reads. */
static void fwd_last_attention(const struct model *m, int l, struct fwd_buf *b, const struct fwd_batch *bt)
{
	if (m->fam.block == BLOCK_POST_LN) {
		fwd_attention(m, l, b->x, b, bt, true);
		return;
	}
	fwd_norm(m, &m->layers[l].ln1, b->x, b->h, b->rows); /* every pre-LN block starts so (fwd_block) */
	fwd_attention(m, l, b->h, b, bt, true);
}

/* Buffers for ROWS computed rows (R0 = the first computed token of a single text), rotary tables of N
 * rows (the single text's every position, or the stacked texts' rows). */
static int fwd_alloc(const struct model *m, int n, int rows_in, int r0, struct fwd_buf *b)
{
	const struct arch *a = &m->arch;
	size_t rows = (size_t)rows_in, H = m->info.hidden, inter = m->info.intermediate, half = a->rotary ? a->rope_global.dim / 2 : 1;
	if (a->rotary && (size_t)a->rope_local.dim / 2 > half)
		half = a->rope_local.dim / 2;
	memset(b, 0, sizeof *b);
	b->r0 = r0;
	b->rows = rows;
	b->x = malloc(rows * H * sizeof(float));
	b->h = malloc(rows * H * sizeof(float));
	b->qkv = malloc(rows * (size_t)(a->q_dim + a->kv_dim + a->v_dim) * sizeof(float));
	b->ctx = malloc(rows * (size_t)a->ctx_dim * sizeof(float));
	if (m->fam.qk_norm == QK_NORM_WHOLE)
		b->qk_whole = malloc(rows * (size_t)(a->q_dim + a->kv_dim + a->v_dim) * sizeof(float));
	if (m->fam.attention == ATTENTION_MLA)
		b->mla = malloc(rows * mla_scratch(m) * sizeof(float));
	b->proj = malloc(rows * H * sizeof(float));
	b->proj2 = malloc(rows * H * sizeof(float));
	size_t mid = 2 * inter > (size_t)m->embed_dim ? 2 * inter : (size_t)m->embed_dim; /* also the embeddings' scratch */
	b->mid = malloc(rows * mid * sizeof(float));
	b->gated = m->fam.mlp == MLP_PLAIN ? NULL : malloc(rows * inter * sizeof(float));
	b->cos_g = malloc(n * half * sizeof(float));
	b->sin_g = malloc(n * half * sizeof(float));
	b->cos_l = malloc(n * half * sizeof(float));
	b->sin_l = malloc(n * half * sizeof(float));
	bool rel_ok = true;
	b->row = malloc((m->embed_dim > 0 ? (size_t)m->embed_dim : 1) * sizeof(float));
	bool moe_ok = true;
	if (m->moe.n_experts > 0) {
		b->moe_topk = malloc(rows * (size_t)m->moe.top_k * sizeof *b->moe_topk);
		b->moe_w = malloc(rows * (size_t)m->moe.top_k * sizeof *b->moe_w);
		moe_ok = b->moe_topk && b->moe_w;
	}
	if (weight_present(&m->rel_emb)) {
		size_t span2 = 2 * (size_t)m->relpos.span;
		b->rel = malloc(span2 * H * sizeof(float));
		b->rel_q = malloc(span2 * (size_t)a->q_dim * sizeof(float));
		b->rel_k = malloc(span2 * (size_t)a->kv_dim * sizeof(float));
		rel_ok = b->rel && b->rel_q && b->rel_k;
		if (rel_ok) { /* the encoder's LayerNorm of the table, once per run (norm_rel_ebd) */
			weight_rows(&m->rel_emb, 0, (int64_t)span2, b->rel);
			fwd_norm(m, &m->rel_ln, b->rel, b->rel, (int)span2);
		}
	}
	return b->x && b->h && b->qkv && (b->qk_whole || m->fam.qk_norm != QK_NORM_WHOLE) &&
			       (b->mla || m->fam.attention != ATTENTION_MLA) && b->ctx && b->proj && b->proj2 && b->mid && (b->gated || m->fam.mlp == MLP_PLAIN) && b->cos_g && b->sin_g && b->cos_l &&
			       b->sin_l && b->row && rel_ok && moe_ok
		       ? 0
		       : -1;
}

static void fwd_free(struct fwd_buf *b)
{
	free(b->x);
	free(b->h);
	free(b->qkv);
	free(b->qk_whole);
	free(b->mla);
	free(b->ctx);
	free(b->proj);
	free(b->proj2);
	free(b->mid);
	free(b->gated);
	free(b->cos_g);
	free(b->sin_g);
	free(b->cos_l);
	free(b->sin_l);
	free(b->rel);
	free(b->rel_q);
	free(b->rel_k);
	free(b->row);
	free(b->moe_topk);
	free(b->moe_w);
}

/* Layer L's routing of the buffer rows from ROW (tokens R0 .. n-1 of T) into T's trace (a MoE layer). */
static void fwd_trace_moe(const struct model *m, const struct fwd_buf *b, int l, int row, struct trace *t, int r0)
{
	if (!moe_layer(m, l) || !t->moe_topk)
		return;
	size_t k = (size_t)t->moe_k, at = ((size_t)l * t->n + r0) * k, count = (size_t)(t->n - r0) * k;
	memcpy(t->moe_topk + at, b->moe_topk + (size_t)row * k, count * sizeof *t->moe_topk);
	memcpy(t->moe_weights + at, b->moe_w + (size_t)row * k, count * sizeof *t->moe_weights);
}

/* Buffers for the computed rows of the texts of BT (from token R0 of a single text) and each text's
 * rotary tables; -1 with E set. */
static int fwd_prepare(const struct model *m, const struct fwd_batch *bt, int r0, struct fwd_buf *b, struct err *e)
{
	const struct arch *a = &m->arch;
	int last = bt->nb - 1, n = bt->row0[last] + bt->t[last]->n; /* rows of the tables */
	if (fwd_alloc(m, n, n - r0, r0, b) < 0)
		return err_set(e, "out of memory for %d tokens", n);
	for (int i = 0; a->rotary && i < bt->nb; i++) { /* each text's positions start at 0 */
		size_t hg = a->rope_global.dim / 2, hl = a->rope_local.dim / 2, at = (size_t)bt->row0[i];
		if (rope_tables(&a->rope_global, bt->t[i]->n, b->cos_g + at * hg, b->sin_g + at * hg, e) < 0 ||
		    rope_tables(&a->rope_local, bt->t[i]->n, b->cos_l + at * hl, b->sin_l + at * hl, e) < 0)
			return -1;
	}
	return 0;
}

void forward_advise(const struct trace *t)
{
#ifdef MADV_HUGEPAGE
	size_t lh = (size_t)t->n_layers * t->n_heads, lkv = (size_t)t->n_layers * t->n_kv_heads, n = (size_t)t->n;
	struct {
		const void *p;
		size_t bytes;
	} a[] = {
		{t->attn, lh * n * n * sizeof(float)},
		{t->q, lh * n * t->head_dim * sizeof(float)},
		{t->k, lkv * n * t->head_dim * sizeof(float)},
		{t->v, lkv * n * trace_v_dim(t) * sizeof(float)},
		{t->hidden_states, (size_t)(t->n_layers + 1) * n * t->hidden * sizeof(float)},
	};
	const uintptr_t huge = 2u << 20;
	for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
		uintptr_t lo = ((uintptr_t)a[i].p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)a[i].p + a[i].bytes) & ~(huge - 1);
		if (a[i].p && hi > lo)
			(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
	}
#else
	(void)t;
#endif
}

int forward_layer(const struct model *m, struct trace *t, int layer, const float *x_in, struct err *e)
{
	int n = t->n;
	size_t nh = (size_t)n * t->hidden;
	struct fwd_buf b;
	int rc = 0;
	if (layer < 0 || layer >= t->n_layers || n == 0)
		return err_set(e, "no layer %d", layer);
	if (!t->hidden_states)
		return err_set(e, "the trace keeps no hidden states");
	if (fwd_own_threads(m))
		weights_threads_begin();
	struct fwd_batch bt = {&t, 1, (const int[]){0}, NULL};
	if (fwd_prepare(m, &bt, 0, &b, e) < 0) {
		rc = -1;
	} else {
		memcpy(b.x, x_in, nh * sizeof(float));
		fwd_block(m, layer, &b, &bt);
		fwd_trace_moe(m, &b, layer, 0, t, 0);
		if (layer == t->n_layers - 1 && m->fam.final_norm_in_trace) {
			fwd_final_rstd(m, b.x, n, t->final_rstd);
			fwd_norm(m, &m->final_ln, b.x, b.x, n);
		}
		memcpy((float *)trace_hidden(t, layer + 1), b.x, nh * sizeof(float));
	}
	fwd_free(&b);
	if (fwd_own_threads(m))
		weights_threads_end();
	return rc;
}

/* Whether rotary table ROPE gives positions 0 .. R0-1 (those a run of LEN tokens had) the same
 * angles at LEN tokens as COS_T, SIN_T give. */
static bool fwd_rope_same(const struct rope *rope, int len, int r0, const float *cos_t, const float *sin_t)
{
	size_t half = rope->dim / 2, rows = (size_t)(len < r0 ? len : r0), count = (size_t)len * (half ? half : 1);
	float *c = malloc(count * sizeof *c), *s = malloc(count * sizeof *s);
	struct err e = {{0}};
	bool same = len > 0 && c && s && rope_tables(rope, len, c, s, &e) == 0 &&
		    memcmp(c, cos_t, rows * half * sizeof *c) == 0 && memcmp(s, sin_t, rows * half * sizeof *s) == 0;
	free(c);
	free(s);
	return same;
}

bool forward_rope_reusable(const struct model *m, int n, int r0, int len_a, int len_b)
{
	if (!m->arch.rotary || r0 == 0)
		return true;
	const struct rope *ropes[2] = {&m->arch.rope_global, &m->arch.rope_local};
	bool same = true;
	for (int i = 0; i < 2 && same; i++) {
		size_t count = (size_t)n * (ropes[i]->dim / 2 ? ropes[i]->dim / 2 : 1);
		float *c = malloc(count * sizeof *c), *s = malloc(count * sizeof *s);
		struct err e = {{0}};
		same = c && s && rope_tables(ropes[i], n, c, s, &e) == 0 && fwd_rope_same(ropes[i], len_a, r0, c, s) &&
		       fwd_rope_same(ropes[i], len_b, r0, c, s);
		free(c);
		free(s);
	}
	return same;
}

/* The layers an ablated pass of T computes: from the first layer with a marked head (*SKIP; the blocks
 * below are AB->clean's, when that is a full trace of the same tokens) up to the last such layer (*LAST =
 * its block + 1) when the pass only records means (the blocks above would not be read). */
static void fwd_ablate_span(const struct model *m, const struct trace *t, const struct fwd_ablate *ab, int *skip,
			    int *last)
{
	int L = m->info.n_layers, NH = m->info.n_heads, first = L, top = -1;
	for (int i = 0; i < L * NH; i++)
		if (ab->mask[i]) {
			first = first < i / NH ? first : i / NH;
			top = i / NH;
		}
	const struct trace *c = ab->clean;
	bool same = c && t->attn && c->attn && c->n == t->n && c->n_layers == L && c->n_heads == NH &&
		    c->hidden == t->hidden && (!t->vnorm || c->vnorm) && (!t->moe_topk || c->moe_topk) &&
		    (!t->q_raw || c->q_raw);
	for (int i = 0; same && i < t->n; i++)
		same = c->ids[i] == t->ids[i] && c->type_ids[i] == t->type_ids[i];
	*skip = same ? (first < L - 1 ? first : L - 1) : 0;
	if (ab->record && top >= 0)
		*last = top + 1;
}

/* Layers 0 .. SKIP-1 of clean trace C into T (the rows an ablated pass would compute the same), and C's
 * residual stream entering block SKIP into X [n][hidden]. */
static void fwd_ablate_copy(struct trace *t, const struct trace *c, int skip, float *x)
{
	size_t n = (size_t)t->n, H = (size_t)t->hidden, D = (size_t)t->head_dim, Dv = (size_t)trace_v_dim(t);
	size_t qh = (size_t)skip * t->n_heads * n, kh = (size_t)skip * t->n_kv_heads * n;
	memcpy(t->attn, c->attn, qh * n * sizeof *t->attn);
	memcpy(t->q, c->q, qh * D * sizeof *t->q);
	memcpy(t->k, c->k, kh * D * sizeof *t->k);
	memcpy(t->v, c->v, kh * Dv * sizeof *t->v);
	if (t->q_raw) {
		memcpy(t->q_raw, c->q_raw, qh * D * sizeof *t->q_raw);
		memcpy(t->k_raw, c->k_raw, kh * D * sizeof *t->k_raw);
	}
	if (t->vnorm)
		memcpy(t->vnorm, c->vnorm, qh * sizeof *t->vnorm);
	if (t->moe_topk) {
		memcpy(t->moe_topk, c->moe_topk, (size_t)skip * n * t->moe_k * sizeof *t->moe_topk);
		memcpy(t->moe_weights, c->moe_weights, (size_t)skip * n * t->moe_k * sizeof *t->moe_weights);
	}
	memcpy(t->hidden_states, c->hidden_states, (size_t)skip * n * H * sizeof *t->hidden_states);
	memcpy(x, trace_hidden(c, skip), n * H * sizeof *x);
	if (c->nonfinite_layer >= 0 && c->nonfinite_layer < skip)
		t->nonfinite_layer = c->nonfinite_layer;
}

/* The pass over the NB texts T (a single one from token R0 when R0 > 0: its earlier rows are there). */
static int fwd_pass(const struct model *m, struct trace **t, int nb, int r0, const struct fwd_ablate *ab,
		    const volatile int *cancel, struct err *e)
{
	int H = m->info.hidden, rows = 0;
	if (nb != 1 || r0 < 0 || r0 >= t[0]->n || !m->fam.causal)
		r0 = 0;
	int *row0 = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *row0);
	if (!row0)
		return err_set(e, "out of memory");
	for (int i = 0; i < nb; i++) {
		if (t[i]->n > m->info.max_positions) {
			free(row0);
			return err_set(e, "%d tokens exceed the model's %d positions", t[i]->n, m->info.max_positions);
		}
		row0[i] = rows;
		rows += t[i]->n;
	}
	if (rows == 0) {
		free(row0);
		return 0;
	}
	if (ab) /* an ablated run computes every row: rows kept from another run may differ */
		r0 = 0;
	/* Traces without hidden states (model_prepare's for an aggregate) take attention only: the pass ends
	 * at the last block's probabilities. A decoder reads its encoder's last state, an ablation the
	 * clean run's states: both need them. */
	bool attn_only = !t[0]->hidden_states;
	for (int i = 1; i < nb; i++)
		if (!t[i]->hidden_states != attn_only) {
			free(row0);
			return err_set(e, "texts of one pass must all keep their hidden states, or none");
		}
	if ((attn_only && (ab || m->is_decoder)) || (m->is_decoder && t[0]->encoder && !t[0]->encoder->hidden_states)) {
		free(row0);
		return err_set(e, "this pass needs the hidden states its traces do not keep");
	}
	int skip = 0, last = m->info.n_layers; /* blocks 0 .. skip-1 copied from AB->clean; none after block last-1 */
	if (ab && nb == 1)
		fwd_ablate_span(m, t[0], ab, &skip, &last);
	struct fwd_batch bt = {t, nb, row0, ab};
	struct fwd_buf b;
	int rc = 0, reused_nonfinite = r0 ? t[0]->nonfinite_layer : -1;
	if (fwd_own_threads(m)) /* OpenBLAS single-threaded for the whole pass: its idle workers spin */
		weights_threads_begin();
	fwd_batched = nb > 1;
	if (fwd_prepare(m, &bt, r0, &b, e) < 0) {
		rc = -1;
		goto done;
	}
	for (int i = 0; i < nb && weight_present(&m->rel_bias); i++) /* T5: the stack's bias, once for every layer */
		if (fwd_t5_bias(m, t[i]) < 0) {
			rc = err_set(e, "out of memory for %d tokens", t[i]->n);
			goto done;
		}
	double clock = fwd_clock(m);
	/* text i's computed rows: tokens r0 .. n-1, at row0[i] in the buffers and r0 in its trace */
	for (int i = 0; i < nb; i++) {
		forward_advise(t[i]);
		t[i]->nonfinite_layer = -1; /* the computed tokens' first, then the earlier of it and the reused ones' */
		if (skip == 0)
			fwd_embed(m, t[i], r0, b.x + (size_t)row0[i] * H, b.mid + (size_t)row0[i] * m->embed_dim, b.row);
	}
	if (skip > 0) /* the clean run's layers up to the first ablated head, and its residual stream there */
		fwd_ablate_copy(t[0], ab->clean, skip, b.x);
	fwd_lap(m, FWD_EMBED, &clock);
	for (int l = skip; l <= last; l++) {
		bool tail = attn_only && l == m->info.n_layers; /* the last block's attention alone */
		if (l > skip) {
			if (cancel && *cancel) {
				rc = err_set(e, "cancelled");
				goto done;
			}
			if (tail) {
				fwd_last_attention(m, l - 1, &b, &bt);
				break; /* nothing of the residual stream is recorded */
			}
			fwd_block(m, l - 1, &b, &bt);
			/* HF reports the last hidden state after the final norm (GPT-2's ln_f, Llama's norm). */
			if (l == m->info.n_layers && m->fam.final_norm_in_trace) {
				for (int i = 0; i < nb; i++)
					fwd_final_rstd(m, b.x + (size_t)row0[i] * H, t[i]->n - r0, t[i]->final_rstd + r0);
				fwd_norm(m, &m->final_ln, b.x, b.x, b.rows);
			}
			clock = fwd_clock(m);
		}
		/* layer l's hidden states (0 = embeddings), checked as they are kept: the first layer holding
		 * NaN/Inf recorded, so that bad weights are reported, not a crash */
		for (int i = 0; i < nb; i++) {
			size_t nh = (size_t)(t[i]->n - r0) * H;
			float *keep = attn_only ? NULL : (float *)trace_hidden(t[i], l) + (size_t)r0 * H;
			if (l > 0)
				fwd_trace_moe(m, &b, l - 1, row0[i], t[i], r0);
			if (!ops_copy_finite(keep, b.x + (size_t)row0[i] * H, nh) && t[i]->nonfinite_layer < 0)
				t[i]->nonfinite_layer = l;
		}
		fwd_lap(m, FWD_TRACE, &clock);
	}
	if (reused_nonfinite >= 0 && (t[0]->nonfinite_layer < 0 || reused_nonfinite < t[0]->nonfinite_layer))
		t[0]->nonfinite_layer = reused_nonfinite;
	if (m->stages)
		m->stages->runs++;
done:
	fwd_batched = false;
	fwd_free(&b);
	free(row0);
	if (fwd_own_threads(m))
		weights_threads_end();
	return rc;
}

int forward_run_from(const struct model *m, struct trace *t, int r0, const volatile int *cancel, struct err *e)
{
	return fwd_pass(m, &t, 1, r0, NULL, cancel, e);
}

int forward_run(const struct model *m, struct trace *t, const volatile int *cancel, struct err *e)
{
	return fwd_pass(m, &t, 1, 0, NULL, cancel, e);
}

int forward_run_batch(const struct model *m, struct trace **t, int nb, const volatile int *cancel, struct err *e)
{
	return nb > 0 ? fwd_pass(m, t, nb, 0, NULL, cancel, e) : 0;
}

int forward_run_ablated(const struct model *m, struct trace *t, const struct fwd_ablate *ab, const volatile int *cancel,
			struct err *e)
{
	return fwd_pass(m, &t, 1, 0, ab, cancel, e);
}
