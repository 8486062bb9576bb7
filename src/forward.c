/* forward.c -- the float32 forward pass of a transformer composed from its family's switches
 * (post-LN BERT, pre-LN GPT-2 and Llama-style decoders, GPT-NeoX's parallel residual, Gemma's
 * sandwich norms), capturing every head's attention probabilities, queries, keys, values and the
 * hidden states. The math follows Hugging Face's eager modeling code operation by operation. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "headsummary.h"
#include "model-internal.h"

/* Scratch buffers for one run; sizes in floats (H hidden, QD/KD query/key widths, I intermediate). */
struct fwd_buf {
	float *x;     /* [n][H] residual stream */
	float *h;     /* [n][H] normalised input of a sub-block */
	float *qkv;   /* [n][QD + 2 KD] projections side by side */
	float *ctx;   /* [n][QD] attention context (heads side by side) */
	float *proj;  /* [n][H] output of the attention (or MLP) projection */
	float *proj2; /* [n][H] MLP output beside the attention output (parallel residual) */
	float *mid;   /* [n][2 I] MLP hidden (gated: gate | up, then the product in the first I) */
	float *cos_g, *sin_g; /* [n][rotary_dim / 2] tables of full-attention layers */
	float *cos_l, *sin_l; /* ... of sliding-window layers */
	float *rel;   /* [2 span][H] DeBERTa's relative embeddings after their LayerNorm (NULL otherwise) */
	float *rel_q, *rel_k; /* [2 span][QD], [2 span][KD] a layer's query/key projections of them */
	float *row;   /* [E] one embedding row */
};

/* The texts of one pass: their rows stacked in the buffers (text i's from row0[i]) so that every
 * linear, norm and element-wise step runs once over all of them; attention runs text by text. */
struct fwd_batch {
	struct trace **t;
	int nb;
	const int *row0; /* [nb] */
	int rows;        /* Σ t[i]->n */
};

static void fwd_linear(const struct model *m, const float *x, int n, int in, int out, const struct weight *w,
		       const float *b, float *y, int ldy)
{
	weight_linear(m->cache, x, n, in, out, w, m->fam.linear == LINEAR_OUT_IN, b, y, ldy);
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

static void fwd_norm(const struct model *m, const struct norm_weights *nw, const float *x, float *y, int n)
{
	fwd_norm_dim(m, nw, x, y, n, m->info.hidden);
}

/* Column offsets of query head HD, and of key/value head G, in the projection row [q | k | v]. */
static void fwd_head_columns(const struct model *m, int hd, int g, int *q_col, int *k_col, int *v_col)
{
	int D = m->info.head_dim;
	if (m->fam.fused_qkv && m->fam.qkv_layout == QKV_PER_HEAD) { /* GPT-NeoX: [q_h k_h v_h] per head */
		*q_col = hd * 3 * D;
		*k_col = g * 3 * D + D;
		*v_col = g * 3 * D + 2 * D;
	} else {
		*q_col = hd * D;
		*k_col = m->arch.q_dim + g * D;
		*v_col = m->arch.q_dim + m->arch.kv_dim + g * D;
	}
}

static void fwd_gather(float *dst, const float *src, int n, int d, int ld)
{
	for (int i = 0; i < n; i++)
		memcpy(dst + (size_t)i * d, src + (size_t)i * ld, d * sizeof(float));
}

/* The per-head copies, q/k norm and rotary of the text T whose rows start at ROW0. */
static void fwd_project_text(const struct model *m, int l, struct fwd_buf *b, struct trace *t, int row0)
{
	const struct layer_weights *w = &m->layers[l];
	const struct arch *a = &m->arch;
	int n = t->n, D = t->head_dim, QD = a->q_dim, KD = a->kv_dim, ld = QD + 2 * KD;
	const float *qkv = b->qkv + (size_t)row0 * ld;
	bool sliding = a->layer_sliding && a->layer_sliding[l];
	const struct rope *rope = sliding ? &a->rope_local : &a->rope_global;
	size_t at = (size_t)row0 * (a->rotary ? rope->dim / 2 : 0); /* the text's rows of the tables */
	const float *cos_t = (sliding ? b->cos_l : b->cos_g) + at, *sin_t = (sliding ? b->sin_l : b->sin_g) + at;
	for (int hd = 0; hd < t->n_heads; hd++) {
		int qc, kc, vc;
		fwd_head_columns(m, hd, hd / (t->n_heads / t->n_kv_heads), &qc, &kc, &vc);
		float *tq = (float *)trace_q(t, l, hd);
		fwd_gather(tq, qkv + qc, n, D, ld);
		if (t->q_raw)
			memcpy((float *)trace_q_raw(t, l, hd), tq, (size_t)n * D * sizeof(float));
		if (w->q_norm_w)
			ops_rmsnorm(tq, tq, n, D, D, w->q_norm_w, m->fam.norm_offset, m->ln_eps);
		if (a->rotary)
			rope_apply(rope, tq, n, D, cos_t, sin_t);
	}
	for (int g = 0; g < t->n_kv_heads; g++) {
		int qc, kc, vc, first = g * (t->n_heads / t->n_kv_heads); /* a query head reading kv head g */
		fwd_head_columns(m, first, g, &qc, &kc, &vc);
		float *tk = (float *)trace_k(t, l, first), *tv = (float *)trace_v(t, l, first);
		fwd_gather(tk, qkv + kc, n, D, ld);
		fwd_gather(tv, qkv + vc, n, D, ld);
		if (t->k_raw)
			memcpy((float *)trace_k_raw(t, l, first), tk, (size_t)n * D * sizeof(float));
		if (w->k_norm_w)
			ops_rmsnorm(tk, tk, n, D, D, w->k_norm_w, m->fam.norm_offset, m->ln_eps);
		if (a->rotary)
			rope_apply(rope, tk, n, D, cos_t, sin_t);
	}
}

/* Project H into q, k, v, copy them per head into each text's trace, then apply q/k norm and
 * rotary there. */
static void fwd_project(const struct model *m, int l, const float *h, struct fwd_buf *b, const struct fwd_batch *bt)
{
	const struct layer_weights *w = &m->layers[l];
	const struct arch *a = &m->arch;
	int rows = bt->rows, H = m->info.hidden, QD = a->q_dim, KD = a->kv_dim, ld = QD + 2 * KD;
	if (m->fam.fused_qkv) {
		fwd_linear(m, h, rows, H, ld, &w->qkv_w, w->qkv_b, b->qkv, ld);
	} else {
		fwd_linear(m, h, rows, H, QD, &w->q_w, w->q_b, b->qkv, ld);
		fwd_linear(m, h, rows, H, KD, &w->k_w, w->k_b, b->qkv + QD, ld);
		fwd_linear(m, h, rows, H, KD, &w->v_w, w->v_b, b->qkv + QD + KD, ld);
	}
	for (int i = 0; i < bt->nb; i++)
		fwd_project_text(m, l, b, bt->t[i], bt->row0[i]);
}

struct fwd_heads {
	const struct model *m;
	struct trace *t;
	struct fwd_buf *b;
	int l;
	float scale;
	int row0;     /* the text's first row in B */
};

/* Scores, probabilities and context of head HD (each head writes only its own). */
static void fwd_head(void *ctx, int hd, float *scratch)
{
	const struct fwd_heads *c = ctx;
	struct trace *t = c->t;
	int n = t->n, D = t->head_dim, QD = c->m->arch.q_dim, l = c->l;
	const float *q = trace_q(t, l, hd), *k = trace_k(t, l, hd), *v = trace_v(t, l, hd);
	/* scores, then probabilities, in place; a compact trace (long texts) keeps only their summary */
	float *p = t->attn ? (float *)trace_attn(t, l, hd) : scratch;
	if (!p) { /* no memory for it: NaN, which the trace reports, rather than garbage */
		for (int i = 0; i < n; i++)
			for (int j = 0; j < D; j++)
				c->b->ctx[(size_t)(c->row0 + i) * QD + hd * D + j] = NAN;
		return;
	}
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, D, c->scale, q, D, k, D, 0.0f, p, n);
	const struct fwd_buf *b = c->b;
	if (b->rel) /* DeBERTa: the content-to-position and position-to-content terms */
		relpos_add(&c->m->relpos, p, n, D, q, k, b->rel_q + hd * D, b->rel_k + trace_kv_head(t, hd) * D, QD,
			   c->scale);
	if (c->m->arch.softcap > 0)
		ops_softcap(p, (size_t)n * n, c->m->arch.softcap);
	for (int i = 0; i < n; i++) {
		int lo, hi;
		trace_key_range(t, l, i, &lo, &hi);
		ops_softmax_range(p + (size_t)i * n, n, lo, hi);
	}
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, D, n, 1.0f, p, n, v, D, 0.0f,
		    c->b->ctx + (size_t)c->row0 * QD + hd * D, QD);
	if (!t->attn)
		headsummary_record(t, l, hd, p);
}

/* Self-attention of layer L on input H [n][hidden]; result (after output projection) in B->proj.
 * Heads run one after the other (each sgemm threaded by OpenBLAS), or on our threads for models
 * whose matrices span several tiles. */
static void fwd_attention(const struct model *m, int l, const float *h, struct fwd_buf *b, const struct fwd_batch *bt)
{
	int H = m->info.hidden;
	fwd_project(m, l, h, b, bt);
	if (b->rel) { /* DeBERTa (share_att_key): the layer's own q/k projections of the relative embeddings */
		const struct layer_weights *w = &m->layers[l];
		int rows = 2 * m->relpos.span, QD = m->arch.q_dim, KD = m->arch.kv_dim;
		fwd_linear(m, b->rel, rows, H, QD, &w->q_w, w->q_b, b->rel_q, QD);
		fwd_linear(m, b->rel, rows, H, KD, &w->k_w, w->k_b, b->rel_k, KD);
	}
	for (int i = 0; i < bt->nb; i++) {
		struct trace *t = bt->t[i];
		struct fwd_heads c = {m, t, b, l, m->arch.attn_scale, bt->row0[i]};
		if (m->scale_by_inverse_layer)
			c.scale /= (float)(l + 1);
		size_t scratch = t->attn ? 0 : (size_t)t->n * t->n; /* a compact trace: a head's P per thread */
		if (m->own_threads) {
			if (weights_parallel(t->n_heads, scratch, fwd_head, &c) < 0)
				for (int hd = 0; hd < t->n_heads; hd++)
					fwd_head(&c, hd, NULL);
		} else {
			float *p = scratch ? malloc(scratch * sizeof *p) : NULL;
			for (int hd = 0; hd < t->n_heads; hd++)
				fwd_head(&c, hd, p);
			free(p);
		}
	}
	fwd_linear(m, b->ctx, bt->rows, m->arch.q_dim, H, &m->layers[l].out_w, m->layers[l].out_b, b->proj, H);
}

/* MLP of layer L on H [n][hidden] into OUT [n][hidden]. */
static void fwd_mlp(const struct model *m, int l, const float *h, struct fwd_buf *b, int n, float *out)
{
	const struct layer_weights *w = &m->layers[l];
	int H = m->info.hidden, inter = m->info.intermediate;
	if (m->fam.mlp == MLP_PLAIN) {
		fwd_linear(m, h, n, H, inter, &w->up_w, w->up_b, b->mid, inter);
		ops_activation(m->act, b->mid, (size_t)n * inter);
	} else {
		/* gate | up side by side in B->mid (rows 2I wide), then act(gate) * up packed to rows inter wide */
		if (weight_present(&w->gate_up_w)) {
			fwd_linear(m, h, n, H, 2 * inter, &w->gate_up_w, NULL, b->mid, 2 * inter);
		} else {
			fwd_linear(m, h, n, H, inter, &w->gate_w, w->gate_b, b->mid, 2 * inter);
			fwd_linear(m, h, n, H, inter, &w->up_w, w->up_b, b->mid + inter, 2 * inter);
		}
		/* in place: row i's product lands at i*inter, never past the row's own gate values */
		ops_gated(m->act, b->mid, b->mid + inter, n, inter, 2 * inter, b->mid);
	}
	fwd_linear(m, b->mid, n, inter, H, &w->down_w, w->down_b, out, H);
}

/* Record the first hidden state holding NaN/Inf: bad weights should be reported, not crash. */
static void fwd_check_finite(struct trace *t, int layer, const float *x, size_t count)
{
	if (t->nonfinite_layer >= 0)
		return;
	for (size_t i = 0; i < count; i++) {
		if (!isfinite(x[i])) {
			t->nonfinite_layer = layer;
			return;
		}
	}
}

/* Embeddings of T's tokens into X [n][hidden]: only the rows of the ids are read (and converted) from
 * the tables. The tables are E wide: where E differs from the hidden size (ELECTRA, ALBERT) the rows
 * go to E_BUF [n][E] for their LayerNorm and then through the projection. ROW is scratch for E floats. */
static void fwd_embed(const struct model *m, struct trace *t, float *x, float *e_buf, float *row)
{
	int E = m->embed_dim, seen = 0;
	float scale = m->arch.embed_scale, *e = weight_present(&m->emb_proj_w) ? e_buf : x;
	for (int i = 0; i < t->n; i++) {
		float *ei = e + (size_t)i * E;
		weight_rows(&m->tok_emb, t->ids[i], 1, ei);
		if (scale > 0)
			for (int j = 0; j < E; j++)
				ei[j] = ei[j] * scale;
		int pos = i;
		if (m->fam.positions_after_pad) /* RoBERTa: pad + 1, pad + 2, ... skipping pad tokens */
			pos = t->ids[i] == m->pad_id ? m->pad_id : m->pad_id + ++seen;
		if (weight_present(&m->pos_emb)) {
			weight_rows(&m->pos_emb, pos, 1, row);
			ops_add(ei, row, E);
		}
		if (weight_present(&m->type_emb)) {
			weight_rows(&m->type_emb, t->type_ids[i], 1, row);
			ops_add(ei, row, E);
		}
	}
	fwd_norm_dim(m, &m->emb_ln, e, e, t->n, E);
	if (weight_present(&m->emb_proj_w))
		fwd_linear(m, e_buf, t->n, E, t->hidden, &m->emb_proj_w, m->emb_proj_b, x, t->hidden);
}

/* One block of layer L on the residual stream B->x (every text's rows). */
static void fwd_block(const struct model *m, int l, struct fwd_buf *b, const struct fwd_batch *bt)
{
	const struct layer_weights *w = &m->layers[l];
	int n = bt->rows;
	size_t nh = (size_t)n * m->info.hidden;
	if (m->fam.block == BLOCK_POST_LN) {
		/* BERT: x = LN1(x + Attn(x)); x = LN2(x + MLP(x)) */
		fwd_attention(m, l, b->x, b, bt);
		ops_add(b->x, b->proj, nh);
		fwd_norm(m, &w->ln1, b->x, b->x, n);
		fwd_mlp(m, l, b->x, b, n, b->proj);
		ops_add(b->x, b->proj, nh);
		fwd_norm(m, &w->ln2, b->x, b->x, n);
		return;
	}
	/* Pre-LN: x += [post_attn](Attn(LN1 x)); x += [post_mlp](MLP(LN2 x)) */
	fwd_norm(m, &w->ln1, b->x, b->h, n);
	fwd_attention(m, l, b->h, b, bt);
	fwd_norm(m, &w->post_attn, b->proj, b->proj, n);
	if (m->arch.parallel_residual) {
		/* GPT-NeoX: x = (mlp(ln2 x) + attn(ln1 x)) + x, both from the same x */
		fwd_norm(m, &w->ln2, b->x, b->h, n);
		fwd_mlp(m, l, b->h, b, n, b->proj2);
		ops_add(b->proj2, b->proj, nh);
		ops_add(b->x, b->proj2, nh);
		return;
	}
	ops_add(b->x, b->proj, nh);
	fwd_norm(m, &w->ln2, b->x, b->h, n);
	fwd_mlp(m, l, b->h, b, n, b->proj);
	fwd_norm(m, &w->post_mlp, b->proj, b->proj, n);
	ops_add(b->x, b->proj, nh);
}

static int fwd_alloc(const struct model *m, int n, struct fwd_buf *b)
{
	const struct arch *a = &m->arch;
	size_t H = m->info.hidden, inter = m->info.intermediate, half = a->rotary ? a->rope_global.dim / 2 : 1;
	memset(b, 0, sizeof *b);
	b->x = malloc(n * H * sizeof(float));
	b->h = malloc(n * H * sizeof(float));
	b->qkv = malloc(n * (size_t)(a->q_dim + 2 * a->kv_dim) * sizeof(float));
	b->ctx = malloc(n * (size_t)a->q_dim * sizeof(float));
	b->proj = malloc(n * H * sizeof(float));
	b->proj2 = malloc(n * H * sizeof(float));
	size_t mid = 2 * inter > (size_t)m->embed_dim ? 2 * inter : (size_t)m->embed_dim; /* also the embeddings' scratch */
	b->mid = malloc(n * mid * sizeof(float));
	b->cos_g = malloc(n * half * sizeof(float));
	b->sin_g = malloc(n * half * sizeof(float));
	b->cos_l = malloc(n * half * sizeof(float));
	b->sin_l = malloc(n * half * sizeof(float));
	bool rel_ok = true;
	b->row = malloc((m->embed_dim > 0 ? (size_t)m->embed_dim : 1) * sizeof(float));
	if (weight_present(&m->rel_emb)) {
		size_t rows = 2 * (size_t)m->relpos.span;
		b->rel = malloc(rows * H * sizeof(float));
		b->rel_q = malloc(rows * (size_t)a->q_dim * sizeof(float));
		b->rel_k = malloc(rows * (size_t)a->kv_dim * sizeof(float));
		rel_ok = b->rel && b->rel_q && b->rel_k;
		if (rel_ok) { /* the encoder's LayerNorm of the table, once per run (norm_rel_ebd) */
			weight_rows(&m->rel_emb, 0, (int64_t)rows, b->rel);
			fwd_norm(m, &m->rel_ln, b->rel, b->rel, (int)rows);
		}
	}
	return b->x && b->h && b->qkv && b->ctx && b->proj && b->proj2 && b->mid && b->cos_g && b->sin_g && b->cos_l &&
			       b->sin_l && b->row && rel_ok
		       ? 0
		       : -1;
}

static void fwd_free(struct fwd_buf *b)
{
	free(b->x);
	free(b->h);
	free(b->qkv);
	free(b->ctx);
	free(b->proj);
	free(b->proj2);
	free(b->mid);
	free(b->cos_g);
	free(b->sin_g);
	free(b->cos_l);
	free(b->sin_l);
	free(b->rel);
	free(b->rel_q);
	free(b->rel_k);
	free(b->row);
}

int forward_layer(const struct model *m, struct trace *t, int layer, const float *x_in, struct err *e)
{
	int n = t->n;
	size_t nh = (size_t)n * t->hidden;
	struct fwd_buf b;
	int rc = 0;
	if (layer < 0 || layer >= t->n_layers || n == 0)
		return err_set(e, "no layer %d", layer);
	if (m->own_threads)
		weights_threads_begin();
	if (fwd_alloc(m, n, &b) < 0) {
		rc = err_set(e, "out of memory for %d tokens", n);
	} else if (m->arch.rotary && (rope_tables(&m->arch.rope_global, n, b.cos_g, b.sin_g, e) < 0 ||
				      rope_tables(&m->arch.rope_local, n, b.cos_l, b.sin_l, e) < 0)) {
		rc = -1;
	} else {
		memcpy(b.x, x_in, nh * sizeof(float));
		fwd_block(m, layer, &b, &(struct fwd_batch){&t, 1, (int[]){0}, n});
		if (layer == t->n_layers - 1 && m->fam.final_norm_in_trace)
			fwd_norm(m, &m->final_ln, b.x, b.x, n);
		memcpy((float *)trace_hidden(t, layer + 1), b.x, nh * sizeof(float));
	}
	fwd_free(&b);
	if (m->own_threads)
		weights_threads_end();
	return rc;
}

int forward_run(const struct model *m, struct trace *t, const volatile int *cancel, struct err *e)
{
	return forward_run_batch(m, &t, 1, cancel, e);
}

int forward_run_batch(const struct model *m, struct trace **t, int nb, const volatile int *cancel, struct err *e)
{
	int H = m->info.hidden, rows = 0, rc = 0;
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
	struct fwd_batch bt = {t, nb, row0, rows};
	struct fwd_buf b;
	if (m->own_threads) /* OpenBLAS single-threaded for the whole pass: its idle workers spin */
		weights_threads_begin();
	if (fwd_alloc(m, rows, &b) < 0) {
		rc = err_set(e, "out of memory for %d tokens", rows);
		goto done;
	}
	for (int i = 0; i < nb; i++) { /* each text's positions start at 0 */
		const struct arch *a = &m->arch;
		size_t hg = a->rotary ? (size_t)a->rope_global.dim / 2 : 0, hl = a->rotary ? (size_t)a->rope_local.dim / 2 : 0;
		if (a->rotary && t[i]->n > 0 &&
		    (rope_tables(&a->rope_global, t[i]->n, b.cos_g + row0[i] * hg, b.sin_g + row0[i] * hg, e) < 0 ||
		     rope_tables(&a->rope_local, t[i]->n, b.cos_l + row0[i] * hl, b.sin_l + row0[i] * hl, e) < 0)) {
			rc = -1;
			goto done;
		}
		size_t at = (size_t)row0[i] * H, nh = (size_t)t[i]->n * H;
		fwd_embed(m, t[i], b.x + at, b.mid + (size_t)row0[i] * m->embed_dim, b.row);
		memcpy((float *)trace_hidden(t[i], 0), b.x + at, nh * sizeof(float));
		fwd_check_finite(t[i], 0, b.x + at, nh);
	}
	for (int l = 0; l < m->info.n_layers; l++) {
		if (cancel && *cancel) {
			rc = err_set(e, "cancelled");
			goto done;
		}
		fwd_block(m, l, &b, &bt);
		/* HF reports the last hidden state after the final norm (GPT-2's ln_f, Llama's norm). */
		if (l == m->info.n_layers - 1 && m->fam.final_norm_in_trace)
			fwd_norm(m, &m->final_ln, b.x, b.x, rows);
		for (int i = 0; i < nb; i++) {
			size_t at = (size_t)row0[i] * H, nh = (size_t)t[i]->n * H;
			memcpy((float *)trace_hidden(t[i], l + 1), b.x + at, nh * sizeof(float));
			fwd_check_finite(t[i], l + 1, b.x + at, nh);
		}
	}
done:
	fwd_free(&b);
	free(row0);
	if (m->own_threads)
		weights_threads_end();
	return rc;
}
