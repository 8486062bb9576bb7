/* lmhead.c -- the output head: bound from the family's lm_head_* / mlm_* roles, applied one hidden row
 * at a time (see lmhead.h). Definitions followed (transformers 4.51):
 *   causal: logits = lm_head(h), h the last hidden state (the final norm already applied); then
 *           Cohere  logits * logit_scale, Granite  logits / logits_scaling, Gemma 2/3
 *           tanh(logits / final_logit_softcapping) * final_logit_softcapping;
 *   masked: BertLMPredictionHead / RobertaLMHead: LayerNorm(act(dense(h))) @ word_embeddings^T + bias.
 * The logits and their logsumexp are summed in float64 (the cases' fp64 checks), so only the hidden
 * row and the MLM transform are float32, as in transformers. */
#include "config.h"

#include "engine/lmhead.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/model-internal.h"
#include "engine/workers.h"

#define LMHEAD_BLOCK 256 /* vocabulary rows per work item */

enum lmhead_kind lmhead_kind(const struct model *m)
{
	return (enum lmhead_kind)m->lm.kind;
}

const char *lmhead_why(const struct model *m)
{
	return m->lm.why;
}

int lmhead_vocab(const struct model *m)
{
	return m->lm.kind == LMHEAD_NONE ? 0 : (int)m->lm.unembed.rows;
}

static int lmhead_none(struct model *m, const char *why)
{
	m->lm.kind = LMHEAD_NONE;
	snprintf(m->lm.why, sizeof m->lm.why, "%s", why);
	return 0;
}

/* Setting S as a number; FALLBACK when the family names no key or config.json has none (or null where
 * the key is there but null: transformers' None, no modifier) and no default applies. */
static int lmhead_number(const struct model *m, const struct hfconfig *c, enum family_setting s, double fallback,
			 double *out, struct err *e)
{
	const struct family *f = &m->fam;
	*out = fallback;
	if (!f->n_keys[s])
		return 0;
	const json_t *root = c->root;
	for (int i = 0; i < f->n_keys[s]; i++) {
		const json_t *v = json_object_get(root, f->keys[s][i]);
		if (v && json_is_null(v) && !hfconfig_has(c, f, s))
			return 0; /* written as null: the modifier is off whatever the default */
	}
	if (!hfconfig_has(c, f, s) && !f->defaults[s])
		return 0;
	return hfconfig_float(c, f, s, out, e);
}

/* The tensor of the head's ROLE under the family's names and prefixes, or NULL. */
static const struct st_tensor *lmhead_find(const struct model *m, enum family_role role)
{
	const struct family *f = &m->fam;
	for (int a = 0; a < f->n_names[role]; a++)
		for (int p = 0; p < f->n_prefixes; p++) {
			char full[600];
			snprintf(full, sizeof full, "%s%s", f->prefixes[p], f->names[role][a]);
			const struct st_tensor *t = st_find(&m->st, full);
			if (t)
				return t;
		}
	return NULL;
}

/* T as a weight used from the mapping: [rows][cols], or a vector as [1][cols]; false when T is absent,
 * of another shape than ROWS x COLS (ROWS 0: a vector of COLS) or not F32/F16/BF16. */
static bool lmhead_weight(struct model *m, const struct st_tensor *t, int64_t rows, int64_t cols, struct weight *w)
{
	memset(w, 0, sizeof *w);
	w->slot = -1;
	if (!t || (t->dtype != ST_F32 && t->dtype != ST_F16 && t->dtype != ST_BF16))
		return false;
	if (rows ? t->ndim != 2 || t->shape[0] != rows || t->shape[1] != cols : t->ndim != 1 || t->shape[0] != cols)
		return false;
	*w = (struct weight){t->data, t->dtype, rows ? rows : 1, cols, NULL, -1, NULL, 0};
	if (t->dtype == ST_F32 && ((uintptr_t)w->data % sizeof(float)) == 0)
		w->f32 = (const float *)(const void *)w->data;
	return rows == 0 || wcache_register(m->cache, w) == 0;
}

static int lmhead_bind_masked(struct model *m)
{
	struct lm_head *h = &m->lm;
	int64_t H = m->info.hidden, V = m->info.vocab_size;
	enum family_role need[] = {WEIGHT_MLM_DENSE_W, WEIGHT_MLM_DENSE_B, WEIGHT_MLM_LN_W, WEIGHT_MLM_LN_B, WEIGHT_MLM_BIAS};
	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
		if (!lmhead_find(m, need[i])) {
			char why[192];
			snprintf(why, sizeof why, "no masked-LM head: the file has no %s (a base model's export)",
				 m->fam.names[need[i]][0]);
			return lmhead_none(m, why);
		}
	if (!lmhead_weight(m, lmhead_find(m, WEIGHT_MLM_DENSE_W), H, H, &h->dense_w) ||
	    !lmhead_weight(m, lmhead_find(m, WEIGHT_MLM_DENSE_B), 0, H, &h->dense_b) ||
	    !lmhead_weight(m, lmhead_find(m, WEIGHT_MLM_LN_W), 0, H, &h->ln_w) ||
	    !lmhead_weight(m, lmhead_find(m, WEIGHT_MLM_LN_B), 0, H, &h->ln_b) ||
	    !lmhead_weight(m, lmhead_find(m, WEIGHT_MLM_BIAS), 0, V, &h->bias))
		return lmhead_none(m, "no masked-LM head: its tensors' shapes or types do not match config.json");
	h->unembed = m->tok_emb; /* the decoder is tied to the word embeddings */
	h->kind = LMHEAD_MASKED;
	snprintf(h->why, sizeof h->why, "masked LM: dense, activation, LayerNorm, decoder tied to the word embeddings");
	return 0;
}

int lmhead_bind(struct model *m, const struct hfconfig *c, struct err *e)
{
	struct lm_head *h = &m->lm;
	const struct family *f = &m->fam;
	memset(h, 0, sizeof *h);
	h->scale = h->divisor = 1;
	char why[192];
	if (!f->causal) {
		if (!f->n_names[WEIGHT_MLM_DENSE_W]) {
			snprintf(why, sizeof why, "no masked-LM head supported for %s", f->name);
			return lmhead_none(m, why);
		}
		bool tied = true;
		if (hfconfig_bool(c, f, SET_TIE_EMBEDDINGS, &tied, e) < 0)
			return -1;
		if (!tied)
			return lmhead_none(m, "no masked-LM head: its decoder is not tied to the word embeddings (unsupported)");
		if (m->embed_dim != m->info.hidden)
			return lmhead_none(m, "no masked-LM head: the embeddings are narrower than the hidden state");
		h->act = m->act;
		if (f->n_keys[SET_MLM_ACTIVATION] || f->defaults[SET_MLM_ACTIVATION])
			if (model_config_activation(m, c, SET_MLM_ACTIVATION, &h->act, e) < 0)
				return -1;
		return lmhead_bind_masked(m);
	}
	if (!f->n_keys[SET_TIE_EMBEDDINGS] && !f->defaults[SET_TIE_EMBEDDINGS]) {
		snprintf(why, sizeof why, "no output head: the %s family file does not describe one", f->name);
		return lmhead_none(m, why);
	}
	if (m->embed_dim != m->info.hidden)
		return lmhead_none(m, "no output head: the embeddings are narrower than the hidden state");
	if (!f->final_norm_in_trace) {
		snprintf(why, sizeof why, "no output head: %s's last hidden state lacks the final norm", f->name);
		return lmhead_none(m, why);
	}
	bool tied;
	if (hfconfig_bool(c, f, SET_TIE_EMBEDDINGS, &tied, e) < 0 ||
	    lmhead_number(m, c, SET_LOGIT_SCALE, 1, &h->scale, e) < 0 ||
	    lmhead_number(m, c, SET_LOGIT_DIVISOR, 1, &h->divisor, e) < 0 ||
	    lmhead_number(m, c, SET_LOGIT_SOFTCAP, 0, &h->softcap, e) < 0)
		return -1;
	if (h->divisor == 0 || h->softcap < 0)
		return lmhead_none(m, "no output head: config.json's logit scaling is 0 or negative");
	int64_t H = m->info.hidden, V = m->info.vocab_size;
	if (tied) {
		h->unembed = m->tok_emb;
	} else {
		const struct st_tensor *w = lmhead_find(m, WEIGHT_LM_HEAD_W);
		if (!w)
			return lmhead_none(m, f->n_names[WEIGHT_LM_HEAD_W] ? "no output head: tie_word_embeddings is false "
					      "and the file has no lm_head weight" : "no output head: tie_word_embeddings is false and "
					      "the family file names no lm_head tensor");
		if (!lmhead_weight(m, w, V, H, &h->unembed))
			return lmhead_none(m, "no output head: the lm_head weight's shape or type does not match config.json");
	}
	const struct st_tensor *b = lmhead_find(m, WEIGHT_LM_HEAD_B);
	if (b && !tied && !lmhead_weight(m, b, 0, V, &h->bias)) /* GPT-J, Phi: lm_head has a bias */
		return lmhead_none(m, "no output head: the lm_head bias's shape or type does not match config.json");
	h->kind = LMHEAD_CAUSAL;
	int used = snprintf(h->why, sizeof h->why, "causal LM: %s", tied ? "tied to the token embedding" : "lm_head");
	if (weight_present(&h->bias) && used > 0 && used < (int)sizeof h->why)
		used += snprintf(h->why + used, sizeof h->why - used, " with bias");
	if (h->scale != 1 && used > 0 && used < (int)sizeof h->why)
		used += snprintf(h->why + used, sizeof h->why - used, ", logits x %g", h->scale);
	if (h->divisor != 1 && used > 0 && used < (int)sizeof h->why)
		used += snprintf(h->why + used, sizeof h->why - used, ", logits / %g", h->divisor);
	if (h->softcap > 0 && used > 0 && used < (int)sizeof h->why)
		snprintf(h->why + used, sizeof h->why - used, ", soft-capped at %g", h->softcap);
	return 0;
}

/* ---- one row ---- */

struct lmhead_job {
	const struct lm_head *h;
	const float *x;     /* [hidden] the head's input */
	const float *bias;  /* [vocab] or NULL */
	float *scratch;     /* [threads][LMHEAD_BLOCK][hidden] */
	int hidden;
	double *logit;      /* [vocab] */
};

typedef double lm_v4 __attribute__((vector_size(32)));

/* From here to the end of the file, the loops over the whole vocabulary for every row: optimized in a
 * debug build too (as gemmkern.c is), as at -O0 each lane's operation goes through memory (the dots
 * were 42 % of check_ablate's instructions under valgrind, the log-sum-exps then 30 %). No
 * contraction: the same bits in either build. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("O2", "fp-contract=off")
#endif

/* DOT[r] = W[r] · X over HIDDEN, for the ROWS rows of W [rows][hidden]: each in four lanes of doubles
 * (lane l adds the products d ≡ l (mod 4) in order, exact in double), the last HIDDEN mod 4 products
 * added to lane 0, then (l0 + l1) + (l2 + l3); four rows at a time, whose sums do not wait on each
 * other. The same operations on either path (a float product is exact in double: fused or not, one
 * rounding), so the same bits. */
static inline __attribute__((always_inline)) void lm_dots(const float *w, int rows, int hidden, const float *x,
							  double *dot)
{
	int r = 0, tail = hidden / 4 * 4;
	for (; r < rows; r += 4) {
		int k = rows - r < 4 ? rows - r : 4;
		const float *wr[4];
		for (int q = 0; q < 4; q++)
			wr[q] = w + (size_t)(r + (q < k ? q : 0)) * hidden; /* past the last row: row R again, unused */
		lm_v4 s[4] = {{0}};
		for (int d = 0; d < tail; d += 4) {
			lm_v4 xv = {x[d], x[d + 1], x[d + 2], x[d + 3]};
#pragma GCC unroll 4
			for (int q = 0; q < 4; q++) {
				lm_v4 wv = {wr[q][d], wr[q][d + 1], wr[q][d + 2], wr[q][d + 3]};
				s[q] += wv * xv;
			}
		}
		for (int q = 0; q < k; q++) {
			double s0 = s[q][0];
			for (int d = tail; d < hidden; d++)
				s0 += (double)wr[q][d] * x[d];
			dot[r + q] = (s0 + s[q][1]) + (s[q][2] + s[q][3]);
		}
	}
}

__attribute__((target("avx2"))) static void lm_dots_avx2(const float *w, int rows, int hidden, const float *x,
							  double *dot)
{
	lm_dots(w, rows, hidden, x, dot);
}

static void lm_dots_generic(const float *w, int rows, int hidden, const float *x, double *dot)
{
	lm_dots(w, rows, hidden, x, dot);
}

/* Logits of the vocabulary rows of block ITEM (the worker's scratch: LMHEAD_BLOCK rows of the matrix as
 * float32). */
static void lmhead_block(void *ctx, int item, int worker)
{
	const struct lmhead_job *j = ctx;
	float *scratch = j->scratch + (size_t)worker * LMHEAD_BLOCK * j->hidden;
	const struct lm_head *h = j->h;
	int64_t r0 = (int64_t)item * LMHEAD_BLOCK, nr = h->unembed.rows - r0;
	if (nr > LMHEAD_BLOCK)
		nr = LMHEAD_BLOCK;
	weight_rows(&h->unembed, r0, nr, scratch);
	double dots[LMHEAD_BLOCK];
	(__builtin_cpu_supports("avx2") ? lm_dots_avx2 : lm_dots_generic)(scratch, (int)nr, j->hidden, j->x, dots);
	for (int64_t r = 0; r < nr; r++) {
		double z = dots[r];
		if (j->bias)
			z += j->bias[r0 + r];
		z = z * h->scale / h->divisor;
		if (h->softcap > 0)
			z = h->softcap * tanh(z / h->softcap);
		j->logit[r0 + r] = z;
	}
}

/* The final norm of the model on X [hidden] into Y (the logit lens's residual streams). */
static void lmhead_final_norm(const struct model *m, const float *x, float *y)
{
	const struct norm_weights *n = &m->final_ln;
	int d = m->info.hidden;
	if (!n->w)
		memcpy(y, x, (size_t)d * sizeof *y);
	else if (m->fam.norm == NORM_RMS)
		ops_rmsnorm(x, y, 1, d, d, n->w, m->fam.norm_offset, m->ln_eps);
	else
		ops_layernorm(x, y, 1, d, n->w, n->b, m->ln_eps);
}

int lmhead_logprobs(const struct model *m, const float *x, bool final_norm, float *lp, double *lse_out, struct err *e)
{
	const struct lm_head *h = &m->lm;
	if (h->kind == LMHEAD_NONE)
		return err_set(e, "%s", h->why);
	int H = m->info.hidden;
	int64_t V = h->unembed.rows;
	float *in = malloc((size_t)H * 5 * sizeof *in); /* [H] input, [H] transform, [3][H] its vectors */
	double *logit = malloc((size_t)V * sizeof *logit);
	float *bias = weight_present(&h->bias) ? malloc((size_t)V * sizeof *bias) : NULL;
	if (!in || !logit || (weight_present(&h->bias) && !bias)) {
		free(in);
		free(logit);
		free(bias);
		return err_set(e, "out of memory");
	}
	if (bias)
		weight_rows(&h->bias, 0, 1, bias);
	memcpy(in, x, (size_t)H * sizeof *in);
	if (final_norm)
		lmhead_final_norm(m, x, in);
	if (h->kind == LMHEAD_MASKED) { /* the transform, in float32 as transformers computes it */
		float *t = in + H, *db = in + 2 * H, *lw = in + 3 * H, *lb = in + 4 * H;
		weight_rows(&h->dense_b, 0, 1, db);
		weight_rows(&h->ln_w, 0, 1, lw);
		weight_rows(&h->ln_b, 0, 1, lb);
		weight_linear(m->cache, in, 1, H, H, &h->dense_w, m->fam.linear == LINEAR_OUT_IN, db, t, H);
		ops_activation(h->act, t, (size_t)H);
		ops_layernorm(t, in, 1, H, lw, lb, m->ln_eps);
	}
	/* The engine's helper threads, not weights_parallel: that one switches OpenBLAS to one thread,
	 * which would change the rounding of a forward pass the explorer's worker runs meanwhile. */
	int blocks = (int)((V + LMHEAD_BLOCK - 1) / LMHEAD_BLOCK);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int threads = cpus < 1 ? 1 : cpus > WORKERS_MAX ? WORKERS_MAX : (int)cpus;
	threads = threads > blocks ? blocks : threads;
	struct lmhead_job j = {h, in, bias, malloc((size_t)threads * LMHEAD_BLOCK * H * sizeof(float)), H, logit};
	if (j.scratch)
		workers_run(threads, blocks, lmhead_block, &j);
	free(bias);
	free(j.scratch);
	if (!j.scratch) {
		free(in);
		free(logit);
		return err_set(e, "out of memory");
	}
	double mx = -INFINITY, sum = 0;
	for (int64_t v = 0; v < V; v++)
		mx = logit[v] > mx ? logit[v] : mx;
	for (int64_t v = 0; v < V; v++)
		sum += exp(logit[v] - mx);
	double lse = mx + log(sum);
	if (lp)
		for (int64_t v = 0; v < V; v++)
			lp[v] = (float)(logit[v] - lse);
	if (lse_out)
		*lse_out = lse;
	free(in);
	free(logit);
	return 0; /* NaN weights give NaN rows: the caller's warning covers them, as it does the attention */
}

void lmhead_topk(const float *lp, int vocab, int k, int32_t *ids, float *best)
{
	int have = 0;
	for (int v = 0; v < vocab; v++) {
		float x = lp[v];
		if (have == k && !(x > best[k - 1]))
			continue; /* not better than the last kept: a tie keeps the lower id, seen first */
		int at = have < k ? have++ : k - 1;
		while (at > 0 && x > best[at - 1]) {
			best[at] = best[at - 1];
			ids[at] = ids[at - 1];
			at--;
		}
		best[at] = x;
		ids[at] = v;
	}
}

/* ---- per-text cache ---- */

struct lmpred {
	const struct model *m;
	const struct trace *t;
	int k, vocab;
	bool *done;      /* [n] */
	int32_t *ids;    /* [n][k] */
	float *lp;       /* [n][k] */
	double *lse;     /* [n] */
	float *next;     /* [n] log-probability of row i's target (causal: token i + 1; MLM: token i), or NAN */
	int *rank;       /* [n] the target's rank in row i (1 = the best; ties by the lower id), 0 = none */
	float *row;      /* [vocab] one row's log-probabilities, reused */
};

struct lmpred *lmpred_new(const struct model *m, const struct trace *t, int k)
{
	struct lmpred *p = calloc(1, sizeof *p);
	int n = t->n > 0 ? t->n : 1, vocab = lmhead_vocab(m);
	if (!p)
		return NULL;
	p->m = m;
	p->t = t;
	p->vocab = vocab;
	p->k = k < 1 ? 1 : vocab > 0 && k > vocab ? vocab : k;
	p->done = calloc((size_t)n, sizeof *p->done);
	p->ids = calloc((size_t)n * p->k, sizeof *p->ids);
	p->lp = calloc((size_t)n * p->k, sizeof *p->lp);
	p->lse = calloc((size_t)n, sizeof *p->lse);
	p->next = calloc((size_t)n, sizeof *p->next);
	p->rank = calloc((size_t)n, sizeof *p->rank);
	if (!p->done || !p->ids || !p->lp || !p->lse || !p->next || !p->rank) {
		lmpred_free(p);
		return NULL;
	}
	return p;
}

void lmpred_free(struct lmpred *p)
{
	if (!p)
		return;
	free(p->done);
	free(p->ids);
	free(p->lp);
	free(p->lse);
	free(p->next);
	free(p->rank);
	free(p->row);
	free(p);
}

int lmpred_k(const struct lmpred *p)
{
	return p->k;
}

int lmpred_row(struct lmpred *p, int i, const int32_t **ids, const float **lp, double *lse, struct err *e)
{
	const struct trace *t = p->t;
	if (lmhead_kind(p->m) == LMHEAD_NONE)
		return err_set(e, "%s", lmhead_why(p->m));
	if (i < 0 || i >= t->n)
		return err_set(e, "token %d: the text has tokens 0..%d", i, t->n - 1);
	if (t->source || t->hidden != p->m->info.hidden || !t->hidden_states)
		return err_set(e, "predictions need the model's own trace of tokens");
	if (!p->done[i]) {
		if (!p->row && !(p->row = malloc((size_t)p->vocab * sizeof *p->row)))
			return err_set(e, "out of memory");
		const float *x = trace_hidden(t, t->n_layers) + (size_t)i * t->hidden;
		if (lmhead_logprobs(p->m, x, false, p->row, &p->lse[i], e) < 0)
			return -1;
		lmhead_topk(p->row, p->vocab, p->k, p->ids + (size_t)i * p->k, p->lp + (size_t)i * p->k);
		bool causal = lmhead_kind(p->m) == LMHEAD_CAUSAL;
		int32_t want = causal ? i + 1 < t->n ? t->ids[i + 1] : -1 : t->ids[i];
		p->next[i] = want >= 0 && want < p->vocab ? p->row[want] : NAN;
		p->rank[i] = 0;
		if (want >= 0 && want < p->vocab) {
			int above = 0;
			for (int v = 0; v < p->vocab; v++)
				above += p->row[v] > p->row[want] || (p->row[v] == p->row[want] && v < want);
			p->rank[i] = above + 1;
		}
		p->done[i] = true;
	}
	*ids = p->ids + (size_t)i * p->k;
	*lp = p->lp + (size_t)i * p->k;
	if (lse)
		*lse = p->lse[i];
	return 0;
}

float lmpred_surprisal(struct lmpred *p, int i)
{
	const int32_t *ids;
	const float *lp;
	struct err e = {{0}};
	if (lmhead_kind(p->m) != LMHEAD_CAUSAL || i < 1 || i >= p->t->n || lmpred_row(p, i - 1, &ids, &lp, NULL, &e) < 0)
		return NAN;
	return -p->next[i - 1];
}

int lmpred_target(struct lmpred *p, int i, int32_t *id, float *lp, int *rank, struct err *e)
{
	const int32_t *ids;
	const float *best;
	if (lmpred_row(p, i, &ids, &best, NULL, e) < 0)
		return -1;
	bool causal = lmhead_kind(p->m) == LMHEAD_CAUSAL;
	*id = causal ? i + 1 < p->t->n ? p->t->ids[i + 1] : -1 : p->t->ids[i];
	*lp = p->next[i];
	*rank = p->rank[i];
	return 0;
}

/* ---- many rows at once ---- */

int lmhead_logprobs_rows(const struct model *m, const float *x, int n, float *lp, double *lse, struct err *e)
{
	const struct lm_head *h = &m->lm;
	if (h->kind == LMHEAD_NONE)
		return err_set(e, "%s", h->why);
	if (n <= 0)
		return 0;
	int H = m->info.hidden, V = (int)h->unembed.rows;
	size_t rows = (size_t)n;
	float *in = malloc(rows * H * sizeof *in), *vec = malloc((size_t)H * 3 * sizeof *vec);
	float *z = malloc(rows * V * sizeof *z); /* [n][vocab] float32 logits, as a matrix product gives them */
	double *d = malloc((size_t)V * sizeof *d);
	float *bias = weight_present(&h->bias) ? malloc((size_t)V * sizeof *bias) : NULL;
	float *t = h->kind == LMHEAD_MASKED ? malloc(rows * H * sizeof *t) : NULL;
	int rc = 0;
	if (!in || !vec || !z || !d || (weight_present(&h->bias) && !bias) || (h->kind == LMHEAD_MASKED && !t)) {
		rc = err_set(e, "out of memory for %d rows of %d logits", n, V);
		goto done;
	}
	if (bias)
		weight_rows(&h->bias, 0, 1, bias);
	if (h->kind == LMHEAD_MASKED) { /* the transform, as lmhead_logprobs computes it, on every row */
		weight_rows(&h->dense_b, 0, 1, vec);
		weight_rows(&h->ln_w, 0, 1, vec + H);
		weight_rows(&h->ln_b, 0, 1, vec + 2 * H);
		weight_linear(m->cache, x, n, H, H, &h->dense_w, m->fam.linear == LINEAR_OUT_IN, vec, t, H);
		ops_activation(h->act, t, (size_t)n * H);
		ops_layernorm(t, in, n, H, vec + H, vec + 2 * H, m->ln_eps);
	} else {
		memcpy(in, x, (size_t)n * H * sizeof *in);
	}
	weight_linear(m->cache, in, n, H, V, &h->unembed, true, bias, z, V);
	for (int i = 0; i < n; i++) {
		const float *zi = z + (size_t)i * V;
		double mx = -INFINITY, sum = 0;
		for (int v = 0; v < V; v++) {
			double y = (double)zi[v] * h->scale / h->divisor;
			d[v] = h->softcap > 0 ? h->softcap * tanh(y / h->softcap) : y;
			mx = d[v] > mx ? d[v] : mx;
		}
		for (int v = 0; v < V; v++)
			sum += exp(d[v] - mx);
		double s = mx + log(sum);
		if (lp)
			for (int v = 0; v < V; v++)
				lp[(size_t)i * V + v] = (float)(d[v] - s);
		if (lse)
			lse[i] = s;
	}
done:
	free(in);
	free(vec);
	free(z);
	free(d);
	free(bias);
	free(t);
	return rc;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
