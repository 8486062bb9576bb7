/* forward.c -- the float32 forward pass of a BERT- or GPT-2-shaped transformer on OpenBLAS,
 * capturing every head's attention probabilities, queries, keys, values and the hidden states.
 * The math follows Hugging Face's BertModel / GPT2Model (eager attention) operation by operation. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model-internal.h"

/* Scratch buffers for one run; sizes in floats. */
struct fwd_buf {
	float *x;    /* [n][hidden] residual stream */
	float *h;    /* [n][hidden] normalised input of a sub-block (pre-LN) */
	float *qkv;  /* [n][3*hidden] q | k | v */
	float *ctx;  /* [n][hidden] attention context (heads side by side) */
	float *proj; /* [n][hidden] output of a projection */
	float *mid;  /* [n][intermediate] MLP hidden */
};

/* y[n][out] = x[n][in] · W + b, with W stored [out][in] (Linear) or [in][out] (Conv1D); LDY is y's row stride. */
static void fwd_linear(const struct model *m, const float *x, int n, int in, int out, const float *w,
		       const float *b, float *y, int ldy)
{
	if (b)
		for (int i = 0; i < n; i++)
			memcpy(y + (size_t)i * ldy, b, out * sizeof(float));
	if (m->fam.linear == LINEAR_OUT_IN)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, out, in, 1.0f, x, in, w, in, b ? 1.0f : 0.0f, y,
			    ldy);
	else
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, out, in, 1.0f, x, in, w, out, b ? 1.0f : 0.0f,
			    y, ldy);
}

/* Row-wise LayerNorm (biased variance, like torch) from X into Y; accumulates in double. */
static void fwd_layernorm(const float *x, float *y, int n, int d, const float *g, const float *b, double eps)
{
	for (int i = 0; i < n; i++) {
		const float *xi = x + (size_t)i * d;
		float *yi = y + (size_t)i * d;
		double mean = 0, var = 0;
		for (int j = 0; j < d; j++)
			mean += xi[j];
		mean /= d;
		for (int j = 0; j < d; j++)
			var += (xi[j] - mean) * (xi[j] - mean);
		var /= d;
		double inv = 1.0 / sqrt(var + eps);
		for (int j = 0; j < d; j++)
			yi[j] = (float)((xi[j] - mean) * inv) * g[j] + (b ? b[j] : 0.0f);
	}
}

static void fwd_activation(enum activation act, float *x, size_t count)
{
	switch (act) {
	case ACT_GELU_ERF:
		for (size_t i = 0; i < count; i++)
			x[i] = 0.5f * x[i] * (1.0f + erff(x[i] * (float)M_SQRT1_2));
		break;
	case ACT_GELU_TANH: {
		const float c = 0.7978845608028654f; /* sqrt(2/pi) */
		for (size_t i = 0; i < count; i++) {
			float v = x[i];
			x[i] = 0.5f * v * (1.0f + tanhf(c * (v + 0.044715f * v * v * v)));
		}
		break;
	}
	case ACT_RELU:
		for (size_t i = 0; i < count; i++)
			x[i] = x[i] > 0 ? x[i] : 0;
		break;
	}
}

/* Softmax of each row of S [n][n] in place; with CAUSAL, keys after the query get exactly 0. */
static void fwd_softmax(float *s, int n, bool causal)
{
	for (int i = 0; i < n; i++) {
		float *row = s + (size_t)i * n;
		int last = causal ? i : n - 1;
		float mx = row[0];
		for (int j = 1; j <= last; j++)
			mx = row[j] > mx ? row[j] : mx;
		float sum = 0;
		for (int j = 0; j <= last; j++) {
			row[j] = expf(row[j] - mx);
			sum += row[j];
		}
		float inv = 1.0f / sum;
		for (int j = 0; j <= last; j++)
			row[j] *= inv;
		for (int j = last + 1; j < n; j++)
			row[j] = 0.0f;
	}
}

/* Self-attention of layer L on input H [n][hidden]; result (after output projection) in B->proj. */
static void fwd_attention(const struct model *m, int l, const float *h, struct fwd_buf *b, struct trace *t)
{
	const struct layer_weights *w = &m->layers[l];
	int n = t->n, H = t->hidden, D = t->head_dim, nh = t->n_heads, ld = 3 * H;
	if (m->fam.fused_qkv) {
		fwd_linear(m, h, n, H, 3 * H, w->qkv_w, w->qkv_b, b->qkv, ld);
	} else {
		fwd_linear(m, h, n, H, H, w->q_w, w->q_b, b->qkv, ld);
		fwd_linear(m, h, n, H, H, w->k_w, w->k_b, b->qkv + H, ld);
		fwd_linear(m, h, n, H, H, w->v_w, w->v_b, b->qkv + 2 * H, ld);
	}
	float scale = 1.0f;
	if (m->scale_attn_weights)
		scale /= sqrtf((float)D);
	if (m->scale_by_inverse_layer)
		scale /= (float)(l + 1);
	for (int hd = 0; hd < nh; hd++) {
		const float *q = b->qkv + hd * D, *k = b->qkv + H + hd * D, *v = b->qkv + 2 * H + hd * D;
		float *tq = (float *)trace_q(t, l, hd), *tk = (float *)trace_k(t, l, hd), *tv = (float *)trace_v(t, l, hd);
		for (int i = 0; i < n; i++) {
			memcpy(tq + (size_t)i * D, q + (size_t)i * ld, D * sizeof(float));
			memcpy(tk + (size_t)i * D, k + (size_t)i * ld, D * sizeof(float));
			memcpy(tv + (size_t)i * D, v + (size_t)i * ld, D * sizeof(float));
		}
		float *p = (float *)trace_attn(t, l, hd); /* scores, then probabilities, in place */
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, D, scale, tq, D, tk, D, 0.0f, p, n);
		fwd_softmax(p, n, m->info.causal);
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, D, n, 1.0f, p, n, tv, D, 0.0f, b->ctx + hd * D, H);
	}
	fwd_linear(m, b->ctx, n, H, H, w->out_w, w->out_b, b->proj, H);
}

static void fwd_mlp(const struct model *m, int l, const float *h, struct fwd_buf *b, int n)
{
	const struct layer_weights *w = &m->layers[l];
	int H = m->info.hidden, inter = m->info.intermediate;
	fwd_linear(m, h, n, H, inter, w->up_w, w->up_b, b->mid, inter);
	fwd_activation(m->act, b->mid, (size_t)n * inter);
	fwd_linear(m, b->mid, n, inter, H, w->down_w, w->down_b, b->proj, H);
}

static void fwd_add(float *x, const float *y, size_t count)
{
	for (size_t i = 0; i < count; i++)
		x[i] += y[i];
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

static void fwd_embed(const struct model *m, struct trace *t, float *x)
{
	int H = t->hidden;
	for (int i = 0; i < t->n; i++) {
		float *xi = x + (size_t)i * H;
		const float *te = m->tok_emb + (size_t)t->ids[i] * H, *pe = m->pos_emb + (size_t)i * H;
		for (int j = 0; j < H; j++)
			xi[j] = te[j] + pe[j];
		if (m->type_emb) {
			const float *ty = m->type_emb + (size_t)t->type_ids[i] * H;
			for (int j = 0; j < H; j++)
				xi[j] += ty[j];
		}
	}
	if (m->emb_ln_w)
		fwd_layernorm(x, x, t->n, H, m->emb_ln_w, m->emb_ln_b, m->ln_eps);
}

int forward_run(const struct model *m, struct trace *t, const volatile int *cancel, struct err *e)
{
	int n = t->n, H = t->hidden, inter = m->info.intermediate;
	if (n == 0)
		return 0;
	if (n > m->info.max_positions)
		return err_set(e, "%d tokens exceed the model's %d positions", n, m->info.max_positions);
	struct fwd_buf b;
	size_t nh = (size_t)n * H;
	b.x = malloc(nh * sizeof(float));
	b.h = malloc(nh * sizeof(float));
	b.qkv = malloc(3 * nh * sizeof(float));
	b.ctx = malloc(nh * sizeof(float));
	b.proj = malloc(nh * sizeof(float));
	b.mid = malloc((size_t)n * inter * sizeof(float));
	int rc = 0;
	if (!b.x || !b.h || !b.qkv || !b.ctx || !b.proj || !b.mid) {
		rc = err_set(e, "out of memory for %d tokens", n);
		goto done;
	}
	fwd_embed(m, t, b.x);
	memcpy((float *)trace_hidden(t, 0), b.x, nh * sizeof(float));
	fwd_check_finite(t, 0, b.x, nh);
	for (int l = 0; l < t->n_layers; l++) {
		if (cancel && *cancel) {
			rc = err_set(e, "cancelled");
			goto done;
		}
		const struct layer_weights *w = &m->layers[l];
		if (m->fam.block == BLOCK_PRE_LN) {
			/* GPT-2: x += Attn(LN1(x)); x += MLP(LN2(x)) */
			fwd_layernorm(b.x, b.h, n, H, w->ln1_w, w->ln1_b, m->ln_eps);
			fwd_attention(m, l, b.h, &b, t);
			fwd_add(b.x, b.proj, nh);
			fwd_layernorm(b.x, b.h, n, H, w->ln2_w, w->ln2_b, m->ln_eps);
			fwd_mlp(m, l, b.h, &b, n);
			fwd_add(b.x, b.proj, nh);
		} else {
			/* BERT: x = LN1(x + Attn(x)); x = LN2(x + MLP(x)) */
			fwd_attention(m, l, b.x, &b, t);
			fwd_add(b.x, b.proj, nh);
			fwd_layernorm(b.x, b.x, n, H, w->ln1_w, w->ln1_b, m->ln_eps);
			fwd_mlp(m, l, b.x, &b, n);
			fwd_add(b.x, b.proj, nh);
			fwd_layernorm(b.x, b.x, n, H, w->ln2_w, w->ln2_b, m->ln_eps);
		}
		/* HF reports the last hidden state after the final LayerNorm (GPT-2's ln_f). */
		if (l == t->n_layers - 1 && m->final_ln_w)
			fwd_layernorm(b.x, b.x, n, H, m->final_ln_w, m->final_ln_b, m->ln_eps);
		memcpy((float *)trace_hidden(t, l + 1), b.x, nh * sizeof(float));
		fwd_check_finite(t, l + 1, b.x, nh);
	}
done:
	free(b.x);
	free(b.h);
	free(b.qkv);
	free(b.ctx);
	free(b.proj);
	free(b.mid);
	return rc;
}
