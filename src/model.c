/* model.c -- open a model: resolve the folder, read config.json and the family description, bind
 * every weight to its role with shape checks, load the tokenizer; run = tokenize + forward. */
#include "model.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hfconfig.h"
#include "hub.h"
#include "model-internal.h"

/* Limits that keep a hostile config.json from asking for absurd allocations. */
#define MODEL_MAX_LAYERS 1024
#define MODEL_MAX_HEADS 1024
#define MODEL_MAX_HIDDEN 65536
#define MODEL_MAX_POSITIONS 131072
#define MODEL_MAX_VOCAB 4000000

const char *model_data_dir(void)
{
	const char *d = getenv("ATTNSCOPE_DATADIR");
	if (d && *d)
		return d;
	/* Installed data first; an uninstalled build (./attnscope in the source tree) uses the sources. */
	struct stat sb;
	if (stat(PKGDATADIR "/models/families", &sb) == 0 || stat(SRCDIR "/models/families", &sb) != 0)
		return PKGDATADIR;
	return SRCDIR;
}

const struct model_info *model_get_info(const struct model *m)
{
	return &m->info;
}

const struct tokenizer *model_get_tokenizer(const struct model *m)
{
	return m->tok;
}

size_t model_bytes_converted(const struct model *m)
{
	return m->bytes_converted;
}

static int model_keep(struct model *m, float *buf, struct err *e)
{
	if (m->n_owned == m->cap_owned) {
		int cap = m->cap_owned ? m->cap_owned * 2 : 64;
		float **grown = realloc(m->owned, cap * sizeof *grown);
		if (!grown) {
			free(buf);
			return err_set(e, "out of memory");
		}
		m->owned = grown;
		m->cap_owned = cap;
	}
	m->owned[m->n_owned++] = buf;
	return 0;
}

/* Float32 view of tensor T: the mapping itself when it is aligned F32, else a converted copy. */
static int model_as_f32(struct model *m, const struct st_tensor *t, const float **out, struct err *e)
{
	int64_t n = st_numel(t);
	if (t->dtype == ST_F32 && ((uintptr_t)t->data % sizeof(float)) == 0) {
		*out = (const float *)(const void *)t->data;
		return 0;
	}
	if (t->dtype != ST_F32 && t->dtype != ST_F16 && t->dtype != ST_BF16)
		return err_set(e, "%s: tensor '%s' has dtype %s; expected F32, F16 or BF16", t->file, t->name,
			       t->dtype_name);
	float *buf = malloc((size_t)(n ? n : 1) * sizeof(float));
	if (!buf)
		return err_set(e, "out of memory converting '%s'", t->name);
	if (t->dtype == ST_F32) {
		memcpy(buf, t->data, (size_t)n * sizeof(float)); /* unaligned in the file: copy once */
	} else {
		for (int64_t i = 0; i < n; i++) {
			uint16_t h;
			memcpy(&h, t->data + 2 * i, 2);
			buf[i] = t->dtype == ST_F16 ? st_f16_to_f32(h) : st_bf16_to_f32(h);
		}
	}
	m->bytes_converted += (size_t)n * sizeof(float);
	*out = buf;
	return model_keep(m, buf, e);
}

/* Find the tensor for ROLE of LAYER (-1 for non-layer roles) trying every prefix × alternative. */
static const struct st_tensor *model_find(const struct model *m, enum family_role role, int layer, char *tried,
					  size_t triedsz)
{
	const struct family *f = &m->fam;
	tried[0] = 0;
	for (int a = 0; a < f->n_names[role]; a++) {
		char name[512], lnum[16];
		snprintf(lnum, sizeof lnum, "%d", layer);
		const char *tmpl = f->names[role][a], *at = strstr(tmpl, "{L}");
		if (at)
			snprintf(name, sizeof name, "%.*s%s%s", (int)(at - tmpl), tmpl, lnum, at + 3);
		else
			snprintf(name, sizeof name, "%s", tmpl);
		if (a == 0)
			snprintf(tried, triedsz, "%s", name);
		for (int p = 0; p < f->n_prefixes; p++) {
			char full[600];
			snprintf(full, sizeof full, "%s%s", f->prefixes[p], name);
			const struct st_tensor *t = st_find(&m->st, full);
			if (t)
				return t;
		}
	}
	return NULL;
}

static void model_shape_str(const int64_t *shape, int ndim, char *out, size_t outsz)
{
	size_t used = snprintf(out, outsz, "[");
	for (int i = 0; i < ndim && used < outsz; i++)
		used += snprintf(out + used, outsz - used, "%s%lld", i ? ", " : "", (long long)shape[i]);
	if (used < outsz)
		snprintf(out + used, outsz - used, "]");
}

/* Bind ROLE (of LAYER) to *OUT, checking the shape against D0 (and D1 when NDIM is 2). When the
 * family does not list the role, *OUT stays NULL; when it lists it, the tensor must exist. */
static int model_bind(struct model *m, enum family_role role, int layer, int ndim, int64_t d0, int64_t d1,
		      const float **out, struct err *e)
{
	*out = NULL;
	if (!m->fam.n_names[role])
		return 0;
	char tried[512];
	const struct st_tensor *t = model_find(m, role, layer, tried, sizeof tried);
	if (!t) {
		const char *where = m->st.n_files ? m->st.files[0].path : m->info.dir;
		if (layer < 0)
			return err_set(e, "%s: missing tensor '%s' (%s)", where, tried, family_role_key(role));
		return err_set(e, "%s: missing tensor '%s' (%s of layer %d)", where, tried, family_role_key(role), layer);
	}
	int64_t want[2] = {d0, d1};
	bool ok = t->ndim == ndim && t->shape[0] == d0 && (ndim == 1 || t->shape[1] == d1);
	if (!ok) {
		char have[96], need[96];
		model_shape_str(t->shape, t->ndim, have, sizeof have);
		model_shape_str(want, ndim, need, sizeof need);
		return err_set(e, "%s: tensor '%s' has shape %s, expected %s from config.json", t->file, t->name, have,
			       need);
	}
	return model_as_f32(m, t, out, e);
}

/* Shape of an in→out linear weight as stored in this family's layout. */
static void model_linear_shape(const struct model *m, int64_t in, int64_t out, int64_t *d0, int64_t *d1)
{
	if (m->fam.linear == LINEAR_OUT_IN) {
		*d0 = out;
		*d1 = in;
	} else {
		*d0 = in;
		*d1 = out;
	}
}

static int model_bind_linear(struct model *m, enum family_role wrole, enum family_role brole, int layer,
			     int64_t in, int64_t out, const float **w, const float **b, struct err *e)
{
	int64_t d0, d1;
	model_linear_shape(m, in, out, &d0, &d1);
	if (model_bind(m, wrole, layer, 2, d0, d1, w, e) < 0)
		return -1;
	return model_bind(m, brole, layer, 1, out, 0, b, e);
}

static int model_read_config(struct model *m, const struct hfconfig *c, struct err *e)
{
	struct model_info *in = &m->info;
	const struct family *f = &m->fam;
	long layers, heads, hidden, inter = 0, maxpos, vocab, types = 0;
	if (hfconfig_int(c, f, SET_LAYERS, 1, MODEL_MAX_LAYERS, &layers, e) < 0 ||
	    hfconfig_int(c, f, SET_HEADS, 1, MODEL_MAX_HEADS, &heads, e) < 0 ||
	    hfconfig_int(c, f, SET_HIDDEN, 1, MODEL_MAX_HIDDEN, &hidden, e) < 0 ||
	    hfconfig_int(c, f, SET_MAX_POSITIONS, 1, MODEL_MAX_POSITIONS, &maxpos, e) < 0 ||
	    hfconfig_int(c, f, SET_VOCAB_SIZE, 1, MODEL_MAX_VOCAB, &vocab, e) < 0)
		return -1;
	if (hfconfig_has(c, f, SET_INTERMEDIATE) || !f->intermediate_per_hidden) {
		if (hfconfig_int(c, f, SET_INTERMEDIATE, 1, 64L * MODEL_MAX_HIDDEN, &inter, e) < 0)
			return -1;
	} else {
		inter = f->intermediate_per_hidden * hidden;
	}
	if (f->n_names[WEIGHT_TYPE_EMB] && hfconfig_int(c, f, SET_TYPE_VOCAB_SIZE, 0, 1024, &types, e) < 0)
		return -1;
	if (hidden % heads)
		return err_set(e, "%s: hidden size %ld is not divisible by %ld heads", c->path, hidden, heads);
	char act[48];
	if (hfconfig_float(c, f, SET_LAYER_NORM_EPS, &m->ln_eps, e) < 0 ||
	    hfconfig_string(c, f, SET_ACTIVATION, act, sizeof act, e) < 0 ||
	    hfconfig_bool(c, f, SET_SCALE_BY_INVERSE_LAYER, &m->scale_by_inverse_layer, e) < 0)
		return -1;
	m->scale_attn_weights = true;
	if (f->n_keys[SET_SCALE_ATTN_WEIGHTS] && hfconfig_bool(c, f, SET_SCALE_ATTN_WEIGHTS, &m->scale_attn_weights, e) < 0)
		return -1;
	if (!(m->ln_eps > 0 && m->ln_eps < 1))
		return err_set(e, "%s: layer norm epsilon %g out of range", c->path, m->ln_eps);
	if (strcmp(act, "gelu") == 0)
		m->act = ACT_GELU_ERF;
	else if (strcmp(act, "gelu_new") == 0 || strcmp(act, "gelu_pytorch_tanh") == 0 || strcmp(act, "gelu_fast") == 0)
		m->act = ACT_GELU_TANH;
	else if (strcmp(act, "relu") == 0)
		m->act = ACT_RELU;
	else
		return err_set(e, "%s: unsupported activation '%s' (gelu, gelu_new, gelu_pytorch_tanh, relu)", c->path, act);
	in->n_layers = (int)layers;
	in->n_heads = (int)heads;
	in->hidden = (int)hidden;
	in->head_dim = (int)(hidden / heads);
	in->intermediate = (int)inter;
	in->max_positions = (int)maxpos;
	in->vocab_size = (int)vocab;
	m->type_vocab = (int)types;
	return 0;
}

static int model_bind_all(struct model *m, struct err *e)
{
	const struct model_info *in = &m->info;
	int64_t H = in->hidden, I = in->intermediate;
	if (model_bind(m, WEIGHT_TOKEN_EMB, -1, 2, in->vocab_size, H, &m->tok_emb, e) < 0 ||
	    model_bind(m, WEIGHT_POS_EMB, -1, 2, in->max_positions, H, &m->pos_emb, e) < 0 ||
	    model_bind(m, WEIGHT_EMB_LN_W, -1, 1, H, 0, &m->emb_ln_w, e) < 0 ||
	    model_bind(m, WEIGHT_EMB_LN_B, -1, 1, H, 0, &m->emb_ln_b, e) < 0 ||
	    model_bind(m, WEIGHT_FINAL_LN_W, -1, 1, H, 0, &m->final_ln_w, e) < 0 ||
	    model_bind(m, WEIGHT_FINAL_LN_B, -1, 1, H, 0, &m->final_ln_b, e) < 0)
		return -1;
	if (m->type_vocab > 0 && model_bind(m, WEIGHT_TYPE_EMB, -1, 2, m->type_vocab, H, &m->type_emb, e) < 0)
		return -1;
	m->layers = calloc(in->n_layers, sizeof *m->layers);
	if (!m->layers)
		return err_set(e, "out of memory");
	for (int l = 0; l < in->n_layers; l++) {
		struct layer_weights *w = &m->layers[l];
		if (model_bind(m, WEIGHT_LN1_W, l, 1, H, 0, &w->ln1_w, e) < 0 ||
		    model_bind(m, WEIGHT_LN1_B, l, 1, H, 0, &w->ln1_b, e) < 0)
			return -1;
		int rc;
		if (m->fam.fused_qkv) {
			rc = model_bind_linear(m, WEIGHT_QKV_W, WEIGHT_QKV_B, l, H, 3 * H, &w->qkv_w, &w->qkv_b, e);
		} else {
			rc = model_bind_linear(m, WEIGHT_Q_W, WEIGHT_Q_B, l, H, H, &w->q_w, &w->q_b, e);
			if (rc == 0)
				rc = model_bind_linear(m, WEIGHT_K_W, WEIGHT_K_B, l, H, H, &w->k_w, &w->k_b, e);
			if (rc == 0)
				rc = model_bind_linear(m, WEIGHT_V_W, WEIGHT_V_B, l, H, H, &w->v_w, &w->v_b, e);
		}
		if (rc < 0 || model_bind_linear(m, WEIGHT_ATTN_OUT_W, WEIGHT_ATTN_OUT_B, l, H, H, &w->out_w, &w->out_b, e) < 0 ||
		    model_bind(m, WEIGHT_LN2_W, l, 1, H, 0, &w->ln2_w, e) < 0 ||
		    model_bind(m, WEIGHT_LN2_B, l, 1, H, 0, &w->ln2_b, e) < 0 ||
		    model_bind_linear(m, WEIGHT_MLP_UP_W, WEIGHT_MLP_UP_B, l, H, I, &w->up_w, &w->up_b, e) < 0 ||
		    model_bind_linear(m, WEIGHT_MLP_DOWN_W, WEIGHT_MLP_DOWN_B, l, I, H, &w->down_w, &w->down_b, e) < 0)
			return -1;
	}
	return 0;
}

int model_open(const char *name_or_dir, struct model **out, struct err *e)
{
	*out = NULL;
	struct model *m = calloc(1, sizeof *m);
	if (!m)
		return err_set(e, "out of memory");
	struct hfconfig cfg = {0};
	snprintf(m->info.name, sizeof m->info.name, "%s", name_or_dir);
	if (hub_resolve(name_or_dir, m->info.dir, sizeof m->info.dir, e) < 0)
		goto fail;
	if (hfconfig_load(m->info.dir, &cfg, e) < 0)
		goto fail;
	if (family_load(cfg.model_type, &m->fam, e) < 0) {
		err_prefix(e, "%s", cfg.path);
		goto fail;
	}
	snprintf(m->info.family, sizeof m->info.family, "%s", m->fam.name);
	m->info.causal = m->fam.causal;
	if (model_read_config(m, &cfg, e) < 0)
		goto fail;
	if (st_open_dir(m->info.dir, &m->st, e) < 0)
		goto fail;
	if (model_bind_all(m, e) < 0)
		goto fail;
	if (tokenizer_load(m->info.dir, m->fam.tokenizer, &m->tok, e) < 0)
		goto fail;
	m->info.supports_pairs = tokenizer_supports_pairs(m->tok);
	hfconfig_free(&cfg);
	*out = m;
	return 0;
fail:
	hfconfig_free(&cfg);
	model_close(m);
	return -1;
}

void model_close(struct model *m)
{
	if (!m)
		return;
	tokenizer_free(m->tok);
	for (int i = 0; i < m->n_owned; i++)
		free(m->owned[i]);
	free(m->owned);
	free(m->layers);
	st_close(&m->st);
	family_free(&m->fam);
	free(m);
}

/* A trace for N tokens of this model, with its description filled in. */
/* A trace grows as layers x heads x n^2. A config.json may claim 131072 positions with a tiny
 * hidden size (a 1.5 MB file): 40000 tokens of text then took 12.6 GB. Refuse, before
 * allocating, a trace larger than a quarter of the machine's memory (the views may copy parts). */
static int model_check_trace_size(const struct model *m, int n, struct err *e)
{
	const struct model_info *in = &m->info;
	double lh = (double)in->n_layers * in->n_heads;
	double bytes = 4.0 * (lh * n * n + 3.0 * lh * n * in->head_dim + (in->n_layers + 1.0) * n * in->hidden);
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	double limit = pages > 0 && page > 0 ? (double)pages * page / 4 : 2e9;
	if (bytes > limit)
		return err_set(e, "%d tokens need %.1f GB of attention maps with this model, more than %.1f GB (a quarter "
			       "of this machine's memory): use a shorter text", n, bytes / 1e9, limit / 1e9);
	return 0;
}

static struct trace *model_new_trace(const struct model *m, int n, struct err *e)
{
	const struct model_info *in = &m->info;
	if (model_check_trace_size(m, n, e) < 0)
		return NULL;
	struct trace *t = trace_new(in->n_layers, in->n_heads, in->head_dim, in->hidden, n);
	if (!t) {
		err_set(e, "out of memory for a trace of %d tokens", n);
		return NULL;
	}
	snprintf(t->model_name, sizeof t->model_name, "%s", in->name);
	snprintf(t->family, sizeof t->family, "%s", in->family);
	t->causal = in->causal;
	t->max_positions = in->max_positions;
	return t;
}

/* Check token I of T against the model's tables before the forward pass indexes them. */
static int model_check_token(const struct model *m, const struct trace *t, int i, struct err *e)
{
	if (t->ids[i] < 0 || t->ids[i] >= m->info.vocab_size)
		return err_set(e, "token %d has id %d, outside the model's %d embeddings", i, t->ids[i],
			       m->info.vocab_size);
	if (t->type_ids[i] < 0 || (t->type_ids[i] > 0 && t->type_ids[i] >= m->type_vocab))
		return err_set(e, "token %d has token type %d; the model has %d token types", i, t->type_ids[i],
			       m->type_vocab);
	return 0;
}

static int model_finish_run(const struct model *m, struct trace *t, const volatile int *cancel,
			    struct trace **out, struct err *e)
{
	int rc = 0;
	if (t->n > m->info.max_positions)
		rc = err_set(e, "%d tokens exceed the model's %d positions", t->n, m->info.max_positions);
	for (int i = 0; rc == 0 && i < t->n; i++) {
		if (!t->tokens[i])
			rc = err_set(e, "out of memory");
		else
			rc = model_check_token(m, t, i, e);
	}
	if (rc == 0)
		rc = forward_run(m, t, cancel, e);
	if (rc < 0) {
		trace_free(t);
		return -1;
	}
	*out = t;
	return 0;
}

int model_run_ids(const struct model *m, const int32_t *ids, const int32_t *type_ids, int n,
		  const volatile int *cancel, struct trace **out, struct err *e)
{
	*out = NULL;
	if (n < 0)
		return err_set(e, "negative token count");
	struct trace *t = model_new_trace(m, n, e);
	if (!t)
		return -1;
	for (int i = 0; i < n; i++) {
		t->ids[i] = ids[i];
		t->type_ids[i] = type_ids ? type_ids[i] : 0;
		const char *s = tokenizer_id_to_token(m->tok, ids[i]);
		t->tokens[i] = strdup(s ? s : "");
	}
	return model_finish_run(m, t, cancel, out, e);
}

int model_run(const struct model *m, const char *text, const char *text_b, const volatile int *cancel,
	      struct trace **out, struct err *e)
{
	*out = NULL;
	struct token_list tl = {0};
	if (tokenizer_encode(m->tok, text, text_b, m->info.max_positions, &tl, e) < 0)
		return -1;
	struct trace *t = model_new_trace(m, tl.n, e);
	if (!t) {
		token_list_free(&tl);
		return -1;
	}
	t->truncated = tl.truncated;
	for (int i = 0; i < tl.n; i++) {
		t->ids[i] = tl.ids[i];
		t->type_ids[i] = tl.type_ids[i];
		t->special[i] = tl.special[i];
		t->tokens[i] = strdup(tl.pieces[i]);
	}
	token_list_free(&tl);
	return model_finish_run(m, t, cancel, out, e);
}
