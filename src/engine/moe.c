/* moe.c -- the mixture-of-experts MLP (moe.h): its config.json settings, its weights, and the block in
 * float32 as transformers' sparse MoE blocks compute it (MixtralSparseMoeBlock, OlmoeSparseMoeBlock,
 * Qwen3MoeSparseMoeBlock): router logits through the gate Linear, softmax over the experts in float32,
 * torch.topk, optional renormalisation, then per expert in increasing index its tokens' gated MLP times
 * their weight, added (index_add_) into a zero output. gpt-oss (GptOssMLP): the router Linear has a bias,
 * torch.topk takes the k largest logits and a softmax turns those k into the weights; its experts are
 * MXFP4 (mxfp4.h), decoded by tiles only when a token is routed to them, and compute the clamped SwiGLU
 * of GptOssExperts with the interleaved gate/up columns and biases. */
#include "engine/moe.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model-internal.h"

#define MOE_MAX_EXPERTS 4096

/* mlp_only_layers (Qwen3-MoE): the layers listed stay dense; an index that names no layer changes nothing
 * (transformers asks only whether a layer's index is in the list). */
static int moe_dense_list(struct model *m, const struct hfconfig *c, struct err *e)
{
	const json_t *list = hfconfig_json(c, &m->fam, SET_MOE_DENSE_LAYERS);
	if (!list)
		return 0;
	if (!json_is_array(list))
		return err_set(e, "%s: \"%s\" must be a list of layer indices", c->path, m->fam.keys[SET_MOE_DENSE_LAYERS][0]);
	for (size_t i = 0; i < json_array_size(list); i++) {
		const json_t *v = json_array_get(list, i);
		if (!json_is_integer(v))
			return err_set(e, "%s: %s[%zu] is not a layer index", c->path, m->fam.keys[SET_MOE_DENSE_LAYERS][0], i);
		if (json_integer_value(v) >= 0 && json_integer_value(v) < m->info.n_layers)
			m->moe.layer_moe[json_integer_value(v)] = false;
	}
	return 0;
}

/* moe_layers (Llama 4): when given, exactly the layers listed route (the step rule no longer applies). */
static int moe_listed_layers(struct model *m, const struct hfconfig *c, struct err *e)
{
	const json_t *list = hfconfig_json(c, &m->fam, SET_MOE_LAYERS);
	if (!list)
		return 0;
	if (!json_is_array(list))
		return err_set(e, "%s: \"%s\" must be a list of layer indices", c->path, m->fam.keys[SET_MOE_LAYERS][0]);
	for (int l = 0; l < m->info.n_layers; l++)
		m->moe.layer_moe[l] = false;
	for (size_t i = 0; i < json_array_size(list); i++) {
		const json_t *v = json_array_get(list, i);
		if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= m->info.n_layers)
			return err_set(e, "%s: %s[%zu] is not a layer index (0 .. %d)", c->path, m->fam.keys[SET_MOE_LAYERS][0],
				       i, m->info.n_layers - 1);
		m->moe.layer_moe[json_integer_value(v)] = true;
	}
	return 0;
}

/* DeepSeek-V3's settings (router sigmoid_groups): n_group, topk_group, routed_scaling_factor,
 * n_shared_experts, and first_k_dense_replace (the layers before it dense; moe_layer_freq, which
 * transformers does not read, neither). */
static int moe_groups_read(struct model *m, const struct hfconfig *c, struct err *e)
{
	const struct family *f = &m->fam;
	struct moe_config *moe = &m->moe;
	long groups, keep, shared, dense;
	double scale;
	if (hfconfig_int(c, f, SET_MOE_GROUPS, 1, moe->n_experts, &groups, e) < 0 ||
	    hfconfig_int(c, f, SET_MOE_TOPK_GROUPS, 1, groups, &keep, e) < 0 ||
	    hfconfig_float(c, f, SET_MOE_ROUTED_SCALE, &scale, e) < 0 ||
	    hfconfig_int(c, f, SET_MOE_SHARED_EXPERTS, 0, 64, &shared, e) < 0 ||
	    hfconfig_int(c, f, SET_MOE_FIRST_DENSE, 0, 1L << 20, &dense, e) < 0)
		return -1;
	int per = moe->n_experts / (int)groups;
	/* transformers scores a group by the top 2 of its experts and picks top_k among the kept groups */
	if (moe->n_experts % groups || per < 2 || moe->top_k > per * keep)
		return err_set(e, "%s: %d experts in %ld groups with %ld kept cannot give the top %d (each group needs "
			       "at least 2 experts)", c->path, moe->n_experts, groups, keep, moe->top_k);
	if (!(scale > 0 && scale < 1e6))
		return err_set(e, "%s: routed_scaling_factor %g is not a positive factor", c->path, scale);
	moe->n_group = (int)groups;
	moe->topk_group = (int)keep;
	moe->routed_scale = (float)scale;
	moe->shared_inter = (int)shared * moe->inter;
	for (int l = 0; l < m->info.n_layers; l++) /* DeepseekV3DecoderLayer: the MoE from first_k_dense_replace on */
		moe->layer_moe[l] = moe->layer_moe[l] && l >= dense;
	return 0;
}

/* gpt-oss: the experts are read as MXFP4 only when quantization_config says so (a checkpoint saved
 * dequantized has BF16 gate_up_proj/down_proj instead, which attnscope does not read: refused by name);
 * swiglu_limit. */
static int moe_mxfp4_config(struct model *m, const struct hfconfig *c, struct err *e)
{
	const json_t *q = hfconfig_json(c, &m->fam, SET_QUANTIZATION);
	const json_t *method = json_is_object(q) ? json_object_get(q, "quant_method") : NULL;
	if (!json_is_object(q))
		return err_set(e, "%s: no quantization_config: experts not in MXFP4 (a dequantized save) are not supported; "
			       "attnscope reads gpt-oss's experts as shipped, quant_method \"mxfp4\"", c->path);
	if (!json_is_string(method) || strcmp(json_string_value(method), "mxfp4") != 0)
		return err_set(e, "%s: quantization_config quant_method \"%.40s\" is not supported (gpt-oss's experts are "
			       "read as shipped, \"mxfp4\")", c->path, json_is_string(method) ? json_string_value(method) : "?");
	double limit;
	if (hfconfig_float(c, &m->fam, SET_SWIGLU_LIMIT, &limit, e) < 0)
		return -1;
	if (!(limit >= 0) || limit > 1e6)
		return err_set(e, "%s: swiglu_limit %g must be between 0 and 1e6", c->path, limit);
	m->moe.swiglu_limit = (float)limit;
	return 0;
}

int moe_config_read(struct model *m, const struct hfconfig *c, struct err *e)
{
	const struct family *f = &m->fam;
	struct moe_config *moe = &m->moe;
	if (f->mlp != MLP_MOE)
		return 0;
	long experts, k, inter, step = 1;
	if (hfconfig_int(c, f, SET_NUM_EXPERTS, 1, MOE_MAX_EXPERTS, &experts, e) < 0 ||
	    hfconfig_int(c, f, SET_EXPERTS_PER_TOKEN, 1, experts, &k, e) < 0 ||
	    hfconfig_bool(c, f, SET_NORM_TOPK_PROB, &moe->norm_topk, e) < 0)
		return -1;
	if (hfconfig_has(c, f, SET_MOE_INTERMEDIATE) || f->defaults[SET_MOE_INTERMEDIATE]) {
		if (hfconfig_int(c, f, SET_MOE_INTERMEDIATE, 1, 64L * m->info.hidden, &inter, e) < 0)
			return -1;
	} else {
		inter = m->info.intermediate; /* Mixtral: the experts are intermediate_size wide */
	}
	/* a step past the last layer leaves every layer dense, as in transformers (0 divides by zero there) */
	if ((hfconfig_has(c, f, SET_MOE_SPARSE_STEP) || f->defaults[SET_MOE_SPARSE_STEP]) &&
	    hfconfig_int(c, f, SET_MOE_SPARSE_STEP, 1, 1L << 30, &step, e) < 0)
		return -1;
	if (f->moe_experts == MOE_EXPERTS_FUSED_MXFP4 && moe_mxfp4_config(m, c, e) < 0)
		return -1;
	moe->router = (enum moe_router)f->moe_router;
	moe->layout = (enum moe_experts)f->moe_experts;
	moe->n_experts = (int)experts;
	moe->top_k = (int)k;
	moe->inter = (int)inter;
	int L = m->info.n_layers;
	moe->layer_moe = calloc((size_t)L, sizeof *moe->layer_moe);
	moe->blocks = calloc((size_t)L, sizeof *moe->blocks);
	if (!moe->layer_moe || !moe->blocks)
		return err_set(e, "out of memory");
	for (int l = 0; l < L; l++) /* Qwen3-MoE: every step-th layer, counted from 1 */
		moe->layer_moe[l] = (l + 1) % step == 0;
	if (moe_listed_layers(m, c, e) < 0)
		return -1;
	if (moe->router == MOE_ROUTER_SIGMOID_GROUPS && moe_groups_read(m, c, e) < 0)
		return -1;
	if (moe->router == MOE_ROUTER_SIGMOID_INPUT && f->n_names[WEIGHT_MOE_SHARED_DOWN_W])
		moe->shared_inter = moe->inter; /* Llama 4: one shared expert (Llama4TextMLP), intermediate_size wide */
	return moe_dense_list(m, c, e);
}

bool moe_layer(const struct model *m, int l)
{
	return m->moe.layer_moe && l >= 0 && l < m->info.n_layers && m->moe.layer_moe[l];
}

/* T ([D0] when D1 is 0, else [D0][D1], F32, F16 or BF16) as float32 into *OUT (malloc'd). */
static int moe_floats(const struct st_tensor *t, int64_t d0, int64_t d1, float **out, struct err *e)
{
	int ndim = d1 ? 2 : 1;
	if (t->ndim != ndim || t->shape[0] != d0 || (d1 && t->shape[1] != d1)) {
		char want[64];
		if (d1)
			snprintf(want, sizeof want, "[%lld, %lld]", (long long)d0, (long long)d1);
		else
			snprintf(want, sizeof want, "[%lld]", (long long)d0);
		return err_set(e, "%s: tensor '%s' is not %s as config.json says", t->file, t->name, want);
	}
	if (t->dtype != ST_F32 && t->dtype != ST_F16 && t->dtype != ST_BF16)
		return err_set(e, "%s: tensor '%s' has dtype %s; expected F32, F16 or BF16", t->file, t->name, t->dtype_name);
	size_t count = (size_t)d0 * (size_t)(d1 ? d1 : 1);
	if (!(*out = malloc(count * sizeof **out)))
		return err_set(e, "out of memory");
	weight_convert(t->dtype, t->data, count, *out);
	return 0;
}

/* gpt-oss's layer L: the router's bias, the two MXFP4 pairs and their biases. */
static int moe_bind_mxfp4(struct model *m, int l, moe_tensor_fn tensor, struct err *e)
{
	struct moe_block *b = &m->moe.blocks[l];
	int64_t H = m->info.hidden, I = m->moe.inter, E = m->moe.n_experts;
	const struct st_tensor *rb, *gb, *gs, *gbias, *db, *ds, *dbias;
	if (tensor(m, WEIGHT_MOE_ROUTER_B, l, &rb, e) < 0 || moe_floats(rb, E, 0, &b->router_b, e) < 0 ||
	    tensor(m, WEIGHT_MOE_GATE_UP_BLOCKS, l, &gb, e) < 0 || tensor(m, WEIGHT_MOE_GATE_UP_SCALES, l, &gs, e) < 0 ||
	    mxfp4_bind(gb, gs, E, 2 * I, H, &b->gate_up, e) < 0 || tensor(m, WEIGHT_MOE_GATE_UP_B, l, &gbias, e) < 0 ||
	    moe_floats(gbias, E, 2 * I, &b->gate_up_b, e) < 0 || tensor(m, WEIGHT_MOE_DOWN_BLOCKS, l, &db, e) < 0 ||
	    tensor(m, WEIGHT_MOE_DOWN_SCALES, l, &ds, e) < 0 || mxfp4_bind(db, ds, E, H, I, &b->down, e) < 0 ||
	    tensor(m, WEIGHT_MOE_DOWN_B, l, &dbias, e) < 0 || moe_floats(dbias, E, H, &b->down_b, e) < 0)
		return -1;
	return 0;
}

int moe_bind(struct model *m, int l, moe_bind_fn bind, moe_tensor_fn tensor, struct err *e)
{
	struct moe_config *moe = &m->moe;
	struct moe_block *b = &moe->blocks[l];
	int64_t H = m->info.hidden, I = moe->inter;
	if (bind(m, WEIGHT_MOE_ROUTER_W, l, -1, H, moe->n_experts, &b->router_w, e) < 0)
		return -1;
	if (moe->layout == MOE_EXPERTS_FUSED_MXFP4)
		return moe_bind_mxfp4(m, l, tensor, e);
	if (!(b->experts = calloc((size_t)moe->n_experts, sizeof *b->experts)))
		return err_set(e, "out of memory");
	/* fused experts are stored in→out: bound with in and out swapped where the family stores out→in */
	bool swap = m->fam.linear == LINEAR_OUT_IN;
	for (int x = 0; moe->layout == MOE_EXPERTS_FUSED && x < moe->n_experts; x++) {
		struct moe_expert *ex = &b->experts[x];
		if (bind(m, WEIGHT_MOE_GATE_UP_W, l, x, swap ? 2 * I : H, swap ? H : 2 * I, &ex->gate_up_w, e) < 0 ||
		    bind(m, WEIGHT_MOE_DOWN_W, l, x, swap ? H : I, swap ? I : H, &ex->down_w, e) < 0)
			return -1;
	}
	for (int x = 0; moe->layout == MOE_EXPERTS_EACH && x < moe->n_experts; x++) {
		struct moe_expert *ex = &b->experts[x];
		if (bind(m, WEIGHT_MOE_GATE_W, l, x, H, I, &ex->gate_w, e) < 0 || bind(m, WEIGHT_MOE_UP_W, l, x, H, I, &ex->up_w, e) < 0 ||
		    bind(m, WEIGHT_MOE_DOWN_W, l, x, I, H, &ex->down_w, e) < 0)
			return -1;
	}
	int64_t S = moe->shared_inter; /* the shared experts (DeepSeek-V3, Llama 4), when the family names them */
	if (S > 0 && m->fam.n_names[WEIGHT_MOE_SHARED_DOWN_W] &&
	    (bind(m, WEIGHT_MOE_SHARED_GATE_W, l, -1, H, S, &b->shared.gate_w, e) < 0 ||
	     bind(m, WEIGHT_MOE_SHARED_UP_W, l, -1, H, S, &b->shared.up_w, e) < 0 ||
	     bind(m, WEIGHT_MOE_SHARED_DOWN_W, l, -1, S, H, &b->shared.down_w, e) < 0))
		return -1;
	return 0;
}

bool moe_tiled(const struct model *m)
{
	bool t = m->fam.linear == LINEAR_OUT_IN;
	for (int l = 0; l < m->info.n_layers; l++)
		if (moe_layer(m, l) && m->moe.blocks[l].experts) {
			const struct moe_expert *ex = &m->moe.blocks[l].experts[0];
			if (m->moe.layout == MOE_EXPERTS_FUSED)
				return weight_tiled(&ex->gate_up_w, false) || weight_tiled(&ex->down_w, false);
			return weight_tiled(&ex->gate_w, t) || weight_tiled(&ex->up_w, t) || weight_tiled(&ex->down_w, t);
		}
	return false;
}

size_t moe_expert_bytes(const struct model *m, int l)
{
	if (!moe_layer(m, l) || !m->moe.blocks)
		return 0;
	switch (m->moe.layout) {
	case MOE_EXPERTS_EACH: {
		if (!m->moe.blocks[l].experts)
			return 0;
		const struct moe_expert *x = &m->moe.blocks[l].experts[0];
		return weight_bytes(&x->gate_w) + weight_bytes(&x->up_w) + weight_bytes(&x->down_w);
	}
	case MOE_EXPERTS_FUSED_MXFP4: /* gpt-oss: one expert's share of the two MXFP4 pairs */
		return mxfp4_expert_bytes(&m->moe.blocks[l].gate_up) + mxfp4_expert_bytes(&m->moe.blocks[l].down);
	case MOE_EXPERTS_FUSED: { /* its slices of the 3-D tensors */
		const struct moe_expert *x = &m->moe.blocks[l].experts[0];
		return weight_bytes(&x->gate_up_w) + weight_bytes(&x->down_w);
	}
	}
	return 0;
}

void moe_free(struct model *m)
{
	struct moe_config *moe = &m->moe;
	for (int l = 0; moe->blocks && l < m->info.n_layers; l++) {
		free(moe->blocks[l].experts);
		free(moe->blocks[l].router_b);
		free(moe->blocks[l].gate_up_b);
		free(moe->blocks[l].down_b);
	}
	free(moe->blocks);
	free(moe->layer_moe);
	memset(moe, 0, sizeof *moe);
}

/* softmax over the E logits of ROW in place, as torch's float32 softmax over the last dim: exp(x - max),
 * their sum, then times 1/sum. */
static void moe_softmax(float *row, int E)
{
	float max = row[0], sum = 0;
	for (int x = 1; x < E; x++)
		max = row[x] > max ? row[x] : max;
	for (int x = 0; x < E; x++) {
		row[x] = expf(row[x] - max);
		sum += row[x];
	}
	float inv = 1.0f / sum;
	for (int x = 0; x < E; x++)
		row[x] *= inv;
}

/* The K largest of P [E] into TOPK (best first; equal values: the lower expert first) and their values
 * into W. */
static void moe_topk(const float *p, int E, int K, int32_t *topk, float *w)
{
	for (int j = 0; j < K; j++) {
		int best = -1;
		for (int x = 0; x < E; x++) {
			bool taken = false;
			for (int i = 0; i < j && !taken; i++)
				taken = topk[i] == x;
			if (!taken && (best < 0 || p[x] > p[best]))
				best = x;
		}
		topk[j] = best;
		w[j] = p[best];
	}
}

/* DeepSeek-V3's router (MOE_ROUTER_SIGMOID_GROUPS, moe.h) on one token's logits P [E] in float32, as
 * DeepseekV3TopkRouter: P becomes the sigmoid; the experts into TOPK [K] in increasing order, their
 * weights into W [K]. BIAS [E] may be NULL (no correction). */
static void moe_sigmoid_groups(const struct moe_config *moe, const float *bias, float *p, int32_t *topk, float *w)
{
	int E = moe->n_experts, K = moe->top_k, G = moe->n_group, per = E / G;
	float choice[MOE_MAX_EXPERTS], kept[MOE_MAX_EXPERTS];
	float group[MOE_MAX_EXPERTS] = {0}; /* all set below (G >= 1), which gcc -O1 cannot see */
	int32_t best[MOE_MAX_EXPERTS];
	for (int x = 0; x < E; x++) {
		p[x] = 1.0f / (1.0f + expf(-p[x]));
		choice[x] = bias ? p[x] + bias[x] : p[x];
	}
	for (int g = 0; g < G; g++) { /* topk(2).sum(): the group's best two choices */
		float a = -INFINITY, b = -INFINITY;
		for (int x = g * per; x < (g + 1) * per; x++) {
			if (choice[x] > a) {
				b = a;
				a = choice[x];
			} else if (choice[x] > b) {
				b = choice[x];
			}
		}
		group[g] = a + b;
	}
	moe_topk(group, G, moe->topk_group, best, kept); /* the groups kept */
	for (int x = 0; x < E; x++) {
		bool in = false;
		for (int j = 0; j < moe->topk_group && !in; j++)
			in = best[j] == x / per;
		kept[x] = in ? choice[x] : 0.0f; /* masked_fill(~mask, 0.0): 0, not -inf */
	}
	moe_topk(kept, E, K, topk, w);
	for (int j = 1; j < K; j++) /* increasing expert order: the order the experts' outputs are added in */
		for (int i = j; i > 0 && topk[i - 1] > topk[i]; i--) {
			int32_t t = topk[i];
			topk[i] = topk[i - 1];
			topk[i - 1] = t;
		}
	float sum = 0;
	for (int j = 0; j < K; j++) {
		w[j] = p[topk[j]];
		sum += w[j];
	}
	for (int j = 0; j < K; j++) {
		if (moe->norm_topk)
			w[j] /= sum + 1e-20f;
		w[j] *= moe->routed_scale;
	}
}

/* Route the N tokens of H: their logits into LOGITS [n][E] (turned into probabilities), their experts
 * and weights into TOPK and W [n][K]. */
static void moe_route(const struct model *m, const struct moe_block *b, const float *h, int n, float *logits,
		      int32_t *topk, float *w)
{
	const struct moe_config *moe = &m->moe;
	int E = moe->n_experts, K = moe->top_k;
	weight_linear(m->cache, h, n, m->info.hidden, E, &b->router_w, m->fam.linear == LINEAR_OUT_IN, b->router_b, logits,
		      E); /* gpt-oss's router has a bias; the others NULL */
	for (int i = 0; i < n; i++) {
		float *p = logits + (size_t)i * E, *wi = w + (size_t)i * K;
		switch (moe->router) {
		case MOE_ROUTER_TOPK_SOFTMAX: /* gpt-oss: the k largest logits, then a softmax over those k */
			moe_topk(p, E, K, topk + (size_t)i * K, wi);
			moe_softmax(wi, K);
			break;
		case MOE_ROUTER_SOFTMAX_TOPK:
			moe_softmax(p, E);
			moe_topk(p, E, K, topk + (size_t)i * K, wi);
			if (moe->norm_topk) { /* routing_weights /= routing_weights.sum(-1): the k summed in topk order */
				float sum = 0;
				for (int j = 0; j < K; j++)
					sum += wi[j];
				for (int j = 0; j < K; j++)
					wi[j] /= sum;
			}
			break;
		case MOE_ROUTER_SIGMOID_GROUPS:
			moe_sigmoid_groups(moe, b->score_bias, p, topk + (size_t)i * K, wi);
			break;
		case MOE_ROUTER_SIGMOID_INPUT: /* Llama4Router: topk of the logits; sigmoid(chosen) in float32 */
			moe_topk(p, E, K, topk + (size_t)i * K, wi);
			for (int j = 0; j < K; j++)
				wi[j] = 1.0f / (1.0f + expf(-wi[j]));
			break;
		}
	}
}

/* DeepSeek-V3: OUT [n][H] += the shared experts' gated MLP of H [n][H] (hidden_states + shared_experts(x),
 * after the routed experts); -1 (OUT NaN) when out of memory. */
static int moe_shared(const struct model *m, const struct moe_block *b, const float *h, int n, float *out)
{
	int H = m->info.hidden, S = m->moe.shared_inter;
	bool t = m->fam.linear == LINEAR_OUT_IN;
	size_t rows = (size_t)(n > 0 ? n : 1);
	float *mid = malloc(rows * 2 * S * sizeof *mid), *act = malloc(rows * S * sizeof *act),
	      *ys = malloc(rows * H * sizeof *ys);
	int rc = 0;
	if (!mid || !act || !ys) {
		for (size_t i = 0; i < (size_t)n * H; i++)
			out[i] = NAN;
		rc = -1;
	} else {
		weight_linear(m->cache, h, n, H, S, &b->shared.gate_w, t, NULL, mid, 2 * S);
		weight_linear(m->cache, h, n, H, S, &b->shared.up_w, t, NULL, mid + S, 2 * S);
		ops_gated(m->act, mid, mid + S, n, S, 2 * S, act);
		weight_linear(m->cache, act, n, S, H, &b->shared.down_w, t, NULL, ys, H);
		ops_add(out, ys, (size_t)n * H);
	}
	free(mid);
	free(act);
	free(ys);
	return rc;
	return rc;
}

/* GptOssExperts' activation of CNT rows of MID [cnt][2I] (gate in the even columns, up in the odd ones)
 * into ACT [cnt][I], in float32 as torch: gate clamped above at LIMIT, up to [-LIMIT, LIMIT],
 * glu = gate · sigmoid(gate · 1.702), (up + 1) · glu. Clamps keep NaN, as torch.clamp does. */
static void moe_swiglu_clamped(const float *mid, int cnt, int I, float limit, float *act)
{
	for (int r = 0; r < cnt; r++) {
		const float *gu = mid + (size_t)r * 2 * I;
		float *a = act + (size_t)r * I;
		for (int i = 0; i < I; i++) {
			float g = gu[2 * i], u = gu[2 * i + 1];
			g = g > limit ? limit : g;
			u = u > limit ? limit : u < -limit ? -limit : u;
			float glu = g * (1.0f / (1.0f + expf(-(g * 1.702f))));
			a[i] = (u + 1.0f) * glu;
		}
	}
}

int moe_forward(const struct model *m, int l, const float *h, int n, float *out, int32_t *topk, float *weights)
{
	const struct moe_config *moe = &m->moe;
	const struct moe_block *b = &moe->blocks[l];
	int E = moe->n_experts, K = moe->top_k, H = m->info.hidden, I = moe->inter;
	bool t = m->fam.linear == LINEAR_OUT_IN;
	size_t rows = (size_t)(n > 0 ? n : 1);
	float *logits = malloc(rows * E * sizeof *logits), *xs = malloc(rows * H * sizeof *xs),
	      *mid = malloc(rows * 2 * I * sizeof *mid), *act = malloc(rows * I * sizeof *act),
	      *ys = malloc(rows * H * sizeof *ys), *ws = malloc(rows * sizeof *ws);
	int *tok = malloc(rows * sizeof *tok);
	/* MXFP4 experts: one tile of decoded rows at a time, whatever the model's size (mxfp4.h) */
	bool mx = moe->layout == MOE_EXPERTS_FUSED_MXFP4;
	float *tile = mx ? malloc((size_t)MXFP4_TILE_ROWS * (size_t)(H > I ? H : I) * sizeof *tile) : NULL;
	int rc = 0;
	if (!logits || !xs || !mid || !act || !ys || !ws || !tok || (mx && !tile)) {
		for (size_t i = 0; i < (size_t)n * H; i++)
			out[i] = NAN;
		rc = -1;
		goto done;
	}
	moe_route(m, b, h, n, logits, topk, weights);
	memset(out, 0, (size_t)n * H * sizeof *out);
	bool scale_input = moe->router == MOE_ROUTER_SIGMOID_INPUT, fused = moe->layout == MOE_EXPERTS_FUSED;
	for (int x = 0; x < E; x++) {
		/* the tokens that chose expert x, with their weight for it; an expert no token chose is not read */
		int cnt = 0;
		for (int i = 0; i < n; i++)
			for (int j = 0; j < K; j++)
				if (topk[(size_t)i * K + j] == x) {
					tok[cnt] = i;
					ws[cnt] = weights[(size_t)i * K + j];
					memcpy(xs + (size_t)cnt * H, h + (size_t)i * H, (size_t)H * sizeof *xs);
					for (int d = 0; scale_input && d < H; d++) /* Llama 4: routed_in = x · weight */
						xs[(size_t)cnt * H + d] *= ws[cnt];
					cnt++;
				}
		if (cnt == 0)
			continue;
		if (mx) { /* gpt-oss: gate_up [cnt][2I] with its bias, the clamped SwiGLU, down with its bias */
			mxfp4_linear(&b->gate_up, x, xs, cnt, b->gate_up_b + (size_t)x * 2 * I, mid, 2 * I, tile);
			moe_swiglu_clamped(mid, cnt, I, moe->swiglu_limit, act);
			mxfp4_linear(&b->down, x, act, cnt, b->down_b + (size_t)x * H, ys, H, tile);
		} else {
			const struct moe_expert *ex = &b->experts[x];
			/* gate | up side by side (rows 2I wide), act(gate) · up, then down */
			if (fused) { /* one [H][2I] product gives both, in→out */
				weight_linear(m->cache, xs, cnt, H, 2 * I, &ex->gate_up_w, false, NULL, mid, 2 * I);
			} else {
				weight_linear(m->cache, xs, cnt, H, I, &ex->gate_w, t, NULL, mid, 2 * I);
				weight_linear(m->cache, xs, cnt, H, I, &ex->up_w, t, NULL, mid + I, 2 * I);
			}
			ops_gated(m->act, mid, mid + I, cnt, I, 2 * I, act);
			weight_linear(m->cache, act, cnt, I, H, &ex->down_w, fused ? false : t, NULL, ys, H);
		}
		for (int r = 0; r < cnt; r++) { /* expert_out * weight, then index_add_ into the output */
			float *o = out + (size_t)tok[r] * H;
			const float *y = ys + (size_t)r * H;
			for (int d = 0; d < H; d++)
				o[d] += scale_input ? y[d] : y[d] * ws[r];
		}
	}
	if (weight_present(&b->shared.down_w) && moe_shared(m, b, h, n, out) < 0)
		rc = -1;
done:
	free(logits);
	free(xs);
	free(mid);
	free(act);
	free(ys);
	free(ws);
	free(tok);
	free(tile);
	return rc;
}
