/* model.c -- open a model: resolve the folder, read config.json and the family description, bind
 * every weight to its role with shape checks, load the tokenizer; run = tokenize + forward. */
#include "engine/model.h"

#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/attnscore.h"
#include "engine/hfconfig.h"
#include "engine/hub.h"
#include "engine/gemm.h"
#include "trace/headsummary.h"
#include "engine/model-internal.h"
#include "base/progress.h"

/* Bytes the kept last trace of a causal model may take (model_run_reuse): gpt2's shape takes 29 MB
 * at 128 tokens, 230 MB at 512; at 1,024 (900 MB) every run computes all its tokens. */
#define MODEL_PREFIX_BUDGET ((size_t)256 << 20)

const struct model_info *model_get_info(const struct model *m)
{
	return &m->info;
}

const struct tokenizer *model_get_tokenizer(const struct model *m)
{
	return m->tok;
}

int model_set_langs(struct model *m, const char *src, const char *tgt, struct err *e)
{
	return tokenizer_set_langs(m->tok, src, tgt, e);
}

size_t model_bytes_converted(const struct model *m)
{
	return m->bytes_converted;
}

size_t model_bytes_cached(const struct model *m)
{
	return m->cache ? wcache_bytes(m->cache) : 0;
}

int model_set_cache_budget(struct model *m, size_t bytes)
{
	struct wcache *c = m->cache;
	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < c->n_slots; i++) {
		free(c->slots[i]);
		c->slots[i] = NULL;
		c->tried[i] = 0;
	}
	c->used = 0;
	c->budget = bytes;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14; older kernels say EINVAL and the pages are touched instead */
#endif

/* Fault W's pages in: ask the kernel to read them ahead, then map them into this process (one
 * MADV_POPULATE_READ per 8 MB, else a byte a page), so the forward pass takes no page faults. */
static void model_prefault_weight(struct model *m, const struct weight *w)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = weight_bytes(w);
	uintptr_t lo = (uintptr_t)w->data & ~(uintptr_t)(page - 1), hi = (uintptr_t)w->data + bytes;
	(void)madvise((void *)lo, hi - lo, MADV_WILLNEED);
	const size_t chunk = (size_t)8 << 20;
	for (uintptr_t at = lo; at < hi && !m->prefault_stop; at += chunk) {
		size_t len = hi - at < chunk ? hi - at : chunk;
		if (madvise((void *)at, len, MADV_POPULATE_READ) == 0)
			continue;
		volatile const uint8_t *p = (const uint8_t *)at;
		uint8_t sink = 0;
		for (size_t off = 0; off < len; off += page)
			sink ^= p[off];
		(void)sink;
	}
}

/* Whether W (a layer's matrix) got a packed copy: its bytes taken from the budget first, so that
 * threads packing at once stay within it together. */
static bool model_pack_weight(struct model *m, struct weight *w)
{
	bool transposed = m->fam.linear == LINEAR_OUT_IN;
	size_t bytes = w->dtype == ST_F32 ? weight_pack_bytes(w, transposed) : 0;
	size_t had = __atomic_load_n(&m->packed_bytes, __ATOMIC_RELAXED);
	do {
		if (bytes == 0 || had + bytes > m->pack_budget)
			return false;
	} while (!__atomic_compare_exchange_n(&m->packed_bytes, &had, had + bytes, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	if (weight_pack(w, transposed, bytes) > 0)
		return true;
	__atomic_sub_fetch(&m->packed_bytes, bytes, __ATOMIC_RELAXED); /* no memory: given back */
	return false;
}

/* For the explorer's many passes: an F32 matrix on attnscope's kernel gets a packed copy in huge
 * pages while the budget lasts (weights.h; the forward reads the copy from then on); the others move
 * their pages to huge pages where the kernel mapped the file in 4 KB ones (st_promote). Not F16 or
 * BF16: the copy is float32, twice their bytes to read where a pass reads every weight for a row or
 * two (a causal model's next token), and twice their memory. */
static void model_promote_weight(struct model *m, struct weight *w, bool linear)
{
	if (weight_packed(w) || (linear && model_pack_weight(m, w)))
		return;
	size_t bytes = weight_bytes(w), chunk = (size_t)8 << 20;
	for (size_t at = 0; at < bytes && !m->prefault_stop; at += chunk)
		st_promote(&m->st, w->data + at, bytes - at < chunk ? bytes - at : chunk);
}

static void model_prefault_one(struct model *m, struct weight *w, bool linear)
{
	(void)linear;
	model_prefault_weight(m, w);
}

/* A layer's matrices that weight_linear multiplies by, in the order the forward pass uses them. */
#define LAYER_MATRICES 13
static void layer_matrices(struct layer_weights *w, struct weight *out[LAYER_MATRICES])
{
	struct weight *order[LAYER_MATRICES] = {&w->qkv_w, &w->q_w, &w->k_w, &w->v_w, &w->mla.q_a_w, &w->mla.q_b_w,
						&w->mla.kv_a_w, &w->mla.kv_b_w, &w->out_w, &w->gate_up_w, &w->gate_w,
						&w->up_w, &w->down_w};
	memcpy(out, order, sizeof order);
}

/* FN on every mapped weight, in the order the forward pass uses them (the token table only by its
 * rows: not here); LINEAR: a layer's matrix that weight_linear multiplies by. */
static void model_each_weight(struct model *m, void (*fn)(struct model *m, struct weight *w, bool linear))
{
	struct weight *first[] = {&m->pos_emb, &m->type_emb, &m->emb_proj_w, &m->rel_emb};
	for (size_t i = 0; i < sizeof first / sizeof first[0]; i++)
		if (first[i]->data && !m->prefault_stop)
			fn(m, first[i], false);
	for (int l = 0; l < m->info.n_layers && !m->prefault_stop; l++) {
		struct weight *order[LAYER_MATRICES];
		layer_matrices(&m->layers[l], order);
		for (size_t i = 0; i < LAYER_MATRICES; i++)
			if (order[i]->data && !m->prefault_stop)
				fn(m, order[i], true);
	}
}

static void model_unpack_weights(struct model *m)
{
	for (int l = 0; l < m->info.n_layers; l++) {
		struct weight *order[LAYER_MATRICES];
		layer_matrices(&m->layers[l], order);
		for (size_t i = 0; i < LAYER_MATRICES; i++)
			weight_unpack(order[i]);
	}
}

/* Whether the background thread should go on to huge pages: model_promote_weights asked for it.
 * Else the thread is idle from now on, and model_promote_weights starts one. */
static bool model_promote_claimed(struct model *m)
{
	pthread_mutex_lock(&m->prefault_lock);
	bool go = m->promote_wanted && !m->promote_started;
	if (go)
		m->promote_started = true;
	else
		m->prefault_idle = true;
	pthread_mutex_unlock(&m->prefault_lock);
	return go;
}

static void model_promote_all(struct model *m)
{
	double t0 = progress_now();
	model_each_weight(m, model_promote_weight);
	m->promote_seconds = progress_now() - t0;
}

static void model_background_priority(void)
{
#ifdef SYS_gettid
	/* Low priority: a forward pass running meanwhile (--dump) keeps the cores; idle time reads ahead. */
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
#endif
}

static void *model_prefault_main(void *arg)
{
	struct model *m = arg;
	model_background_priority();
	model_each_weight(m, model_prefault_one);
	if (model_promote_claimed(m))
		model_promote_all(m);
	return NULL;
}

static void *model_promote_main(void *arg)
{
	struct model *m = arg;
	model_background_priority();
	model_promote_all(m);
	return NULL;
}

static bool model_prefault_off(void)
{
	const char *env = getenv("ATTNSCOPE_PREFAULT");
	return env && strcmp(env, "0") == 0;
}

/* In the background, unless ATTNSCOPE_PREFAULT=0: the weights are faulted in while the user reads
 * the first screen, in the order the forward pass uses them (the token table only by its rows). */
static void model_start_prefault(struct model *m)
{
	m->prefault_stop = 0;
	if (model_prefault_off()) {
		m->prefault_idle = true;
		return;
	}
	/* not idle from before the thread starts: done with a small model before this line ran, it had
	 * its "idle" overwritten, and model_promote_weights never started the copies (1 run in 10) */
	m->prefault_idle = false;
	m->prefault_running = pthread_create(&m->prefault, NULL, model_prefault_main, m) == 0;
	if (!m->prefault_running)
		m->prefault_idle = true;
}

void model_promote_weights(struct model *m)
{
	if (model_prefault_off())
		return;
	pthread_mutex_lock(&m->prefault_lock);
	if (!m->promote_wanted)
		m->pack_budget = weight_packed_budget();
	m->promote_wanted = true;
	bool start = m->prefault_idle && !m->promote_started;
	if (start)
		m->promote_started = true;
	pthread_mutex_unlock(&m->prefault_lock);
	if (!start)
		return;
	model_wait_prefault(m); /* the faulting thread, finished */
	m->prefault_running = pthread_create(&m->prefault, NULL, model_promote_main, m) == 0;
}

struct model_pack_job {
	struct model *m;
	struct weight **w;
};

static void model_pack_item(void *ctx, int i, float *scratch)
{
	const struct model_pack_job *j = ctx;
	(void)scratch;
	model_pack_weight(j->m, j->w[i]);
}

/* The packed copies of every layer's matrices, made by the engine's threads together (the page
 * faults of the copies' new memory are most of the time, and they run on each core at once), then
 * the rest of model_promote_all. */
static void model_promote_all_now(struct model *m)
{
	double t0 = progress_now();
	size_t count = (size_t)m->info.n_layers * LAYER_MATRICES, n = 0;
	struct weight **w = malloc(count * sizeof *w);
	for (int l = 0; w && l < m->info.n_layers; l++) {
		struct weight *order[LAYER_MATRICES];
		layer_matrices(&m->layers[l], order);
		for (size_t i = 0; i < LAYER_MATRICES; i++)
			if (order[i]->data)
				w[n++] = order[i];
	}
	struct model_pack_job j = {m, w};
	if (n > 0 && weights_parallel((int)n, 0, model_pack_item, &j) < 0)
		for (size_t i = 0; i < n; i++)
			model_pack_weight(m, w[i]);
	free(w); /* without memory for the list: packed one by one below */
	model_each_weight(m, model_promote_weight);
	m->promote_seconds = progress_now() - t0;
}

void model_promote_weights_now(struct model *m)
{
	if (model_prefault_off())
		return;
	pthread_mutex_lock(&m->prefault_lock);
	bool mine = !m->promote_started; /* else the background thread has it: wait for it */
	if (mine) {
		if (!m->promote_wanted)
			m->pack_budget = weight_packed_budget();
		m->promote_wanted = m->promote_started = true;
	}
	pthread_mutex_unlock(&m->prefault_lock);
	model_wait_prefault(m); /* the faulting thread's pass over the file, then idle (or the promotion) */
	if (mine)
		model_promote_all_now(m);
}

size_t model_bytes_promoted(const struct model *m)
{
	return st_promoted_bytes(&m->st);
}

size_t model_bytes_packed(const struct model *m)
{
	return __atomic_load_n(&m->packed_bytes, __ATOMIC_RELAXED);
}

double model_promote_seconds(const struct model *m)
{
	return m->promote_seconds;
}

void model_wait_prefault(struct model *m)
{
	if (m->prefault_running) {
		pthread_join(m->prefault, NULL);
		m->prefault_running = false;
	}
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

/* TMPL with its {L} replaced by LAYER and its {H} (or {E}, an expert's index) by HEAD, into NAME; an
 * encoder-decoder's {S} by the stack STACK binds (encoder 0, decoder 1) and {F} by the index of a T5 block's
 * feed-forward sublayer in it (1, or 2 after the decoder's cross-attention). */
static void model_expand(const char *tmpl, int layer, int head, int stack, char *name, size_t namesz)
{
	size_t used = 0;
	name[0] = 0;
	while (*tmpl && used + 1 < namesz) {
		bool l = strncmp(tmpl, "{L}", 3) == 0, h = strncmp(tmpl, "{H}", 3) == 0 || strncmp(tmpl, "{E}", 3) == 0;
		if (strncmp(tmpl, "{S}", 3) == 0 || strncmp(tmpl, "{F}", 3) == 0) {
			const char *word = tmpl[1] == 'S' ? (stack ? "decoder" : "encoder") : (stack ? "2" : "1");
			int w = snprintf(name + used, namesz - used, "%s", word);
			used += w > 0 ? (size_t)w : 0;
			used = used < namesz ? used : namesz - 1;
			tmpl += 3;
		} else if (l || h) {
			int w = snprintf(name + used, namesz - used, "%d", l ? layer : head);
			used += w > 0 ? (size_t)w : 0;
			used = used < namesz ? used : namesz - 1;
			tmpl += 3;
		} else {
			name[used++] = *tmpl++;
			name[used] = 0;
		}
	}
}

/* Find the tensor for ROLE of LAYER (-1 for non-layer roles) and HEAD (-1 unless the name has {H})
 * trying every prefix × alternative. */
static const struct st_tensor *model_find_head(const struct model *m, enum family_role role, int layer, int head,
					       char *tried, size_t triedsz)
{
	const struct family *f = &m->fam;
	tried[0] = 0;
	for (int a = 0; a < f->n_names[role]; a++) {
		char name[512];
		model_expand(f->names[role][a], layer, head, m->stack, name, sizeof name);
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

/* A role with a condition (attention_bias for q_bias, ...) exists only when its setting is true. */
static bool model_role_enabled(const struct model *m, enum family_role role)
{
	for (int i = 0; i < m->fam.n_conditions; i++)
		if (m->fam.cond_role[i] == role)
			return m->cond_on[m->fam.cond_setting[i]];
	return true;
}

/* The tensor bound to ROLE (of LAYER) in *T, its shape checked against D0 (and D1 when NDIM is 2).
 * When the family does not list the role, *T is NULL; when it lists it, the tensor must exist. */
static int model_lookup_head(struct model *m, enum family_role role, int layer, int head, int ndim, int64_t d0,
			     int64_t d1, const struct st_tensor **out, struct err *e)
{
	*out = NULL;
	if (!m->fam.n_names[role] || !model_role_enabled(m, role))
		return 0;
	char tried[512];
	const struct st_tensor *t = model_find_head(m, role, layer, head, tried, sizeof tried);
	if (!t && m->fam.optional[role])
		return 0; /* absent where the family allows it: that norm is the identity */
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
	*out = t;
	return 0;
}

static int model_lookup(struct model *m, enum family_role role, int layer, int ndim, int64_t d0, int64_t d1,
			const struct st_tensor **out, struct err *e)
{
	return model_lookup_head(m, role, layer, -1, ndim, d0, d1, out, e);
}

/* Bind the vector ROLE (of LAYER, [D0]) to *OUT as float32 (converted at load when need be). */
static int model_bind(struct model *m, enum family_role role, int layer, int ndim, int64_t d0, int64_t d1,
		      const float **out, struct err *e)
{
	const struct st_tensor *t;
	*out = NULL;
	if (model_lookup(m, role, layer, ndim, d0, d1, &t, e) < 0)
		return -1;
	return t ? model_as_f32(m, t, out, e) : 0;
}

/* Bind the matrix ROLE (of LAYER, [D0][D1]; INDEX for {H}/{E}, else -1) to *W where the file has it. */
static int model_bind_matrix_at(struct model *m, enum family_role role, int layer, int index, int64_t d0, int64_t d1,
				struct weight *w, struct err *e)
{
	const struct st_tensor *t;
	memset(w, 0, sizeof *w);
	w->slot = -1;
	char tried[512];
	const struct st_tensor *t3 = index >= 0 ? model_find_head(m, role, layer, index, tried, sizeof tried) : NULL;
	size_t skip = 0; /* bytes before the matrix: a slice of a 3-D tensor */
	if (t3 && t3->ndim == 3) {
		/* [n][D0][D1] holding one matrix per INDEX (Llama 4's fused experts, experts.gate_up_proj) */
		t = t3;
		if (t->shape[0] <= index || t->shape[1] != d0 || t->shape[2] != d1) {
			char have[96], need[96];
			model_shape_str(t->shape, t->ndim, have, sizeof have);
			model_shape_str((const int64_t[]){index + 1, d0, d1}, 3, need, sizeof need);
			return err_set(e, "%s: tensor '%s' has shape %s, expected at least %s from config.json", t->file,
				       t->name, have, need);
		}
		skip = (size_t)index * (size_t)d0 * (size_t)d1 * (t->dtype == ST_F32 ? 4 : 2);
	} else if (model_lookup_head(m, role, layer, index, 2, d0, d1, &t, e) < 0) {
		return -1;
	}
	if (!t)
		return 0;
	if (t->dtype != ST_F32 && t->dtype != ST_F16 && t->dtype != ST_BF16)
		return err_set(e, "%s: tensor '%s' has dtype %s; expected F32, F16 or BF16", t->file, t->name,
			       t->dtype_name);
	*w = (struct weight){t->data + skip, t->dtype, d0, d1, NULL, -1, NULL, 0};
	if (t->dtype == ST_F32 && ((uintptr_t)w->data % sizeof(float)) == 0)
		w->f32 = (const float *)(const void *)w->data;
	if (wcache_register(m->cache, w) < 0)
		return err_set(e, "out of memory");
	return 0;
}

static int model_bind_matrix(struct model *m, enum family_role role, int layer, int64_t d0, int64_t d1,
			     struct weight *w, struct err *e)
{
	return model_bind_matrix_at(m, role, layer, -1, d0, d1, w, e);
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

/* The in→out linear ROLE of LAYER (INDEX for a name's {H} or {E}, else -1) bound to *W, its shape checked
 * (moe.c binds its experts with it). */
static int model_bind_linear_at(struct model *m, enum family_role role, int layer, int index, int64_t in,
				int64_t out, struct weight *w, struct err *e)
{
	int64_t d0, d1;
	model_linear_shape(m, in, out, &d0, &d1);
	return model_bind_matrix_at(m, role, layer, index, d0, d1, w, e);
}

static int model_bind_linear(struct model *m, enum family_role wrole, enum family_role brole, int layer,
			     int64_t in, int64_t out, struct weight *w, const float **b, struct err *e)
{
	int64_t d0, d1;
	model_linear_shape(m, in, out, &d0, &d1);
	if (model_bind_matrix(m, wrole, layer, d0, d1, w, e) < 0)
		return -1;
	if (brole == WEIGHT_COUNT) { /* a linear without a bias role */
		*b = NULL;
		return 0;
	}
	return model_bind(m, brole, layer, 1, out, 0, b, e);
}

/* A gain of DIM ones for a norm the family says has no weight (weightless): multiplying by 1 is exact,
 * so the norm normalises and nothing more. One vector serves every such norm of the model. */
static int model_ones(struct model *m, int64_t dim, const float **out, struct err *e)
{
	if (m->ones_dim < dim) {
		float *ones = malloc((size_t)dim * sizeof *ones);
		if (!ones)
			return err_set(e, "out of memory");
		for (int64_t i = 0; i < dim; i++)
			ones[i] = 1.0f;
		if (model_keep(m, ones, e) < 0)
			return -1;
		m->ones = ones;
		m->ones_dim = dim;
	}
	*out = m->ones;
	return 0;
}

/* A norm's gain and (unless BROLE is WEIGHT_COUNT: the family has none) its bias. */
static int model_bind_norm(struct model *m, enum family_role wrole, enum family_role brole, int layer, int64_t dim,
			   struct norm_weights *n, struct err *e)
{
	if (m->fam.weightless[wrole]) {
		n->b = NULL;
		return model_ones(m, dim, &n->w, e);
	}
	if (model_bind(m, wrole, layer, 1, dim, 0, &n->w, e) < 0)
		return -1;
	return brole == WEIGHT_COUNT ? 0 : model_bind(m, brole, layer, 1, dim, 0, &n->b, e);
}

/* Bind ROLE's HEADS tensors of LAYER ({H} = 0 .. HEADS-1, each [DIM]) side by side into one float32
 * vector *OUT [HEADS][DIM]; NULL when the family has no such role or its condition is off. */
static int model_bind_each_head(struct model *m, enum family_role role, int layer, int heads, int64_t dim,
				const float **out, struct err *e)
{
	*out = NULL;
	float *all = NULL;
	for (int h = 0; h < heads; h++) {
		const struct st_tensor *t;
		const float *one;
		if (model_lookup_head(m, role, layer, h, 1, dim, 0, &t, e) < 0)
			return -1;
		if (!t)
			return 0; /* switched off (qk_layernorm false): no norm */
		if (!all) {
			all = malloc((size_t)heads * (size_t)dim * sizeof *all);
			if (!all || model_keep(m, all, e) < 0) {
				if (!all)
					return err_set(e, "out of memory");
				return -1;
			}
		}
		if (model_as_f32(m, t, &one, e) < 0)
			return -1;
		memcpy(all + (size_t)h * dim, one, (size_t)dim * sizeof *all);
	}
	*out = all;
	return 0;
}

/* Layer L's latent-attention weights (family attention mla, mla.h) into W: q_a/q_a norm/q_b, or q_proj
 * when q_lora_rank is null; kv_a, its norm, kv_b; shapes from the ranks and head parts. */
static int model_bind_mla(struct model *m, int l, struct layer_weights *w, struct err *e)
{
	const struct mla_shape *s = &m->arch.mla;
	struct mla_weights *x = &w->mla;
	int64_t H = m->info.hidden, heads = m->info.n_heads, D = s->nope + s->rope;
	struct norm_weights qn = {0}, kvn = {0};
	int rc;
	if (s->q_rank > 0) {
		const float *none = NULL;
		rc = model_bind_linear(m, WEIGHT_Q_A_W, WEIGHT_COUNT, l, H, s->q_rank, &x->q_a_w, &none, e);
		if (rc == 0)
			rc = model_bind_norm(m, WEIGHT_Q_A_NORM_W, WEIGHT_COUNT, l, s->q_rank, &qn, e);
		if (rc == 0)
			rc = model_bind_linear(m, WEIGHT_Q_B_W, WEIGHT_COUNT, l, s->q_rank, heads * D, &x->q_b_w, &none, e);
		if (rc == 0 && (!weight_present(&x->q_a_w) || !qn.w || !weight_present(&x->q_b_w)))
			rc = err_set(e, "%s: q_lora_rank %d needs the family's q_a_weight, q_a_norm_weight and q_b_weight",
				     m->info.dir, s->q_rank);
	} else {
		rc = model_bind_linear(m, WEIGHT_Q_W, WEIGHT_COUNT, l, H, heads * D, &w->q_w, &w->q_b, e);
		if (rc == 0 && !weight_present(&w->q_w))
			rc = err_set(e, "%s: q_lora_rank null needs the family's q_weight", m->info.dir);
	}
	const float *none = NULL;
	if (rc < 0 || model_bind_linear(m, WEIGHT_KV_A_W, WEIGHT_COUNT, l, H, s->kv_rank + s->rope, &x->kv_a_w, &none, e) < 0 ||
	    model_bind_norm(m, WEIGHT_KV_A_NORM_W, WEIGHT_COUNT, l, s->kv_rank, &kvn, e) < 0 ||
	    model_bind_linear(m, WEIGHT_KV_B_W, WEIGHT_COUNT, l, s->kv_rank, heads * (s->nope + s->v), &x->kv_b_w, &none, e) < 0)
		return -1;
	x->q_a_norm_w = qn.w;
	x->kv_a_norm_w = kvn.w;
	return 0;
}

static int model_bind_attention(struct model *m, int l, struct layer_weights *w, struct err *e)
{
	const struct model_info *in = &m->info;
	int64_t H = in->hidden, QD = m->arch.q_dim, KD = m->arch.kv_dim;
	int rc;
	if (m->fam.attention == ATTENTION_MLA) {
		rc = model_bind_mla(m, l, w, e);
	} else if (m->fam.fused_qkv) {
		rc = model_bind_linear(m, WEIGHT_QKV_W, WEIGHT_QKV_B, l, H, QD + 2 * KD, &w->qkv_w, &w->qkv_b, e);
	} else {
		rc = model_bind_linear(m, WEIGHT_Q_W, WEIGHT_Q_B, l, H, QD, &w->q_w, &w->q_b, e);
		if (rc == 0)
			rc = model_bind_linear(m, WEIGHT_K_W, WEIGHT_K_B, l, H, KD, &w->k_w, &w->k_b, e);
		if (rc == 0)
			rc = model_bind_linear(m, WEIGHT_V_W, WEIGHT_V_B, l, H, KD, &w->v_w, &w->v_b, e);
	}
	bool whole = m->fam.qk_norm == QK_NORM_WHOLE; /* OLMo 2: one norm over all heads */
	if (m->fam.qk_norm == QK_NORM_EACH_HEAD) { /* StableLM: one gain tensor per head */
		if (rc < 0 || model_bind_each_head(m, WEIGHT_Q_NORM_W, l, in->n_heads, in->head_dim, &w->q_norm_w, e) < 0 ||
		    model_bind_each_head(m, WEIGHT_K_NORM_W, l, in->n_kv_heads, in->head_dim, &w->k_norm_w, e) < 0)
			return -1;
	} else if (rc < 0 || model_bind(m, WEIGHT_Q_NORM_W, l, 1, whole ? QD : in->head_dim, 0, &w->q_norm_w, e) < 0 ||
		   model_bind(m, WEIGHT_K_NORM_W, l, 1, whole ? KD : in->head_dim, 0, &w->k_norm_w, e) < 0)
		return -1;
	if (model_bind(m, WEIGHT_ATTN_SINKS, l, 1, in->n_heads, 0, &w->sinks, e) < 0)
		return -1;
	return model_bind_linear(m, WEIGHT_ATTN_OUT_W, WEIGHT_ATTN_OUT_B, l, m->arch.ctx_dim, H, &w->out_w, &w->out_b, e);
}

/* The tensor of ROLE of LAYER for moe.c, whatever its dtype and shape (moe.c checks them: MXFP4's U8
 * blocks and scales, its [E][2I] biases); missing, an error naming it. */
static int model_moe_tensor(struct model *m, enum family_role role, int layer, const struct st_tensor **t,
			    struct err *e)
{
	char tried[512];
	*t = model_find_head(m, role, layer, -1, tried, sizeof tried);
	if (*t)
		return 0;
	return err_set(e, "%s: missing tensor '%s' (%s of layer %d)", m->st.n_files ? m->st.files[0].path : m->info.dir,
		       tried, family_role_key(role), layer);
}

static int model_bind_mlp(struct model *m, int l, struct layer_weights *w, struct err *e)
{
	int64_t H = m->info.hidden, I = m->info.intermediate;
	if (moe_layer(m, l)) { /* a mixture of experts: its router and experts (moe.c), its router's score bias */
		if (moe_bind(m, l, model_bind_linear_at, model_moe_tensor, e) < 0)
			return -1;
		return model_bind(m, WEIGHT_MOE_SCORE_BIAS, l, 1, m->moe.n_experts, 0, &m->moe.blocks[l].score_bias, e);
	}
	if (m->fam.mlp != MLP_PLAIN && m->fam.n_names[WEIGHT_MLP_GATE_UP_W]) {
		int64_t d0, d1;
		model_linear_shape(m, H, 2 * I, &d0, &d1);
		if (model_bind_matrix(m, WEIGHT_MLP_GATE_UP_W, l, d0, d1, &w->gate_up_w, e) < 0)
			return -1;
	} else {
		if (model_bind_linear(m, WEIGHT_MLP_UP_W, WEIGHT_MLP_UP_B, l, H, I, &w->up_w, &w->up_b, e) < 0)
			return -1;
		if (m->fam.mlp != MLP_PLAIN &&
		    model_bind_linear(m, WEIGHT_MLP_GATE_W, WEIGHT_MLP_GATE_B, l, H, I, &w->gate_w, &w->gate_b, e) < 0)
			return -1;
	}
	return model_bind_linear(m, WEIGHT_MLP_DOWN_W, WEIGHT_MLP_DOWN_B, l, I, H, &w->down_w, &w->down_b, e);
}

/* A decoder layer's cross-attention: its norm and q/k/v/out projections (keys and values read the encoder's
 * last hidden state, as wide as the decoder's). */
static int model_bind_cross(struct model *m, int l, struct layer_weights *w, struct err *e)
{
	int64_t H = m->info.hidden, QD = m->arch.q_dim;
	if (model_bind_norm(m, WEIGHT_XLN_W, WEIGHT_XLN_B, l, H, &w->xln, e) < 0 ||
	    model_bind_linear(m, WEIGHT_XQ_W, WEIGHT_XQ_B, l, H, QD, &w->xq_w, &w->xq_b, e) < 0 ||
	    model_bind_linear(m, WEIGHT_XK_W, WEIGHT_XK_B, l, H, QD, &w->xk_w, &w->xk_b, e) < 0 ||
	    model_bind_linear(m, WEIGHT_XV_W, WEIGHT_XV_B, l, H, QD, &w->xv_w, &w->xv_b, e) < 0 ||
	    model_bind_linear(m, WEIGHT_XO_W, WEIGHT_XO_B, l, QD, H, &w->xo_w, &w->xo_b, e) < 0)
		return -1;
	return 0;
}

static int model_bind_all(struct model *m, struct err *e)
{
	const struct model_info *in = &m->info;
	int64_t H = in->hidden, E = m->embed_dim;
	if (model_bind_matrix(m, WEIGHT_TOKEN_EMB, -1, in->vocab_size, E, &m->tok_emb, e) < 0 ||
	    model_bind_norm(m, WEIGHT_EMB_LN_W, WEIGHT_EMB_LN_B, -1, E, &m->emb_ln, e) < 0 ||
	    model_bind_norm(m, WEIGHT_FINAL_LN_W, WEIGHT_FINAL_LN_B, -1, H, &m->final_ln, e) < 0)
		return -1;
	if (m->fam.position == POS_LEARNED &&
	    model_bind_matrix(m, WEIGHT_POS_EMB, -1, m->pos_rows, E, &m->pos_emb, e) < 0)
		return -1;
	if (m->type_vocab > 0 && model_bind_matrix(m, WEIGHT_TYPE_EMB, -1, m->type_vocab, E, &m->type_emb, e) < 0)
		return -1;
	/* ELECTRA has embeddings_project only when the embedding size differs from the hidden size. */
	if (E != H && model_bind_linear(m, WEIGHT_EMB_PROJ_W, WEIGHT_EMB_PROJ_B, -1, E, H, &m->emb_proj_w,
					&m->emb_proj_b, e) < 0)
		return -1;
	if (E != H && !weight_present(&m->emb_proj_w))
		return err_set(e, "%s: embedding size %lld differs from the hidden size %lld, and the family has no "
			       "embedding projection", m->info.dir, (long long)E, (long long)H);
	if (m->fam.position == POS_RELATIVE &&
	    (model_bind_matrix(m, WEIGHT_REL_EMB, -1, 2 * (int64_t)m->relpos.span, H, &m->rel_emb, e) < 0 ||
	     model_bind_norm(m, WEIGHT_REL_LN_W, WEIGHT_REL_LN_B, -1, H, &m->rel_ln, e) < 0))
		return -1;
	if (m->fam.n_names[WEIGHT_REL_BIAS] && /* T5: this stack's relative position bias, [buckets][heads] */
	    model_bind_matrix(m, WEIGHT_REL_BIAS, -1, m->rel_buckets, in->n_heads, &m->rel_bias, e) < 0)
		return -1;
	const float *ones;
	if (m->arch.qk_l2 && model_ones(m, in->head_dim, &ones, e) < 0) /* the gain of Llama 4's q/k L2 norm */
		return -1;
	m->layers = calloc(in->n_layers, sizeof *m->layers);
	if (!m->layers)
		return err_set(e, "out of memory");
	for (int l = 0; l < in->n_layers; l++) {
		struct layer_weights *w = &m->layers[l];
		if (model_bind_norm(m, WEIGHT_LN1_W, WEIGHT_LN1_B, l, H, &w->ln1, e) < 0 ||
		    model_bind_attention(m, l, w, e) < 0 ||
		    model_bind_norm(m, WEIGHT_POST_ATTN_LN_W, WEIGHT_COUNT, l, H, &w->post_attn, e) < 0 ||
		    /* a block on one norm has no ln2, although a family whose block config.json chooses names one
		     * for its other blocks (Falcon) */
		    (m->fam.block != BLOCK_PARALLEL_ONE_NORM &&
		     model_bind_norm(m, WEIGHT_LN2_W, WEIGHT_LN2_B, l, H, &w->ln2, e) < 0) ||
		    model_bind_mlp(m, l, w, e) < 0 ||
		    model_bind_norm(m, WEIGHT_POST_MLP_LN_W, WEIGHT_COUNT, l, H, &w->post_mlp, e) < 0 ||
		    (m->is_decoder && model_bind_cross(m, l, w, e) < 0))
			return -1;
	}
	return 0;
}

/* An encoder-decoder model's decoder stack (family encoder_decoder): the same roles bound with {S} = decoder
 * for num_decoder_layers layers, plus cross-attention, into a copy of M (see struct model's dec). M's own
 * fields are put back: it stays the encoder. */
static int model_bind_decoder(struct model *m, int layers, struct err *e)
{
	struct model enc = *m;
	struct model *dec = malloc(sizeof *dec);
	if (!dec)
		return err_set(e, "out of memory");
	m->stack = 1;
	m->is_decoder = true;
	m->info.n_layers = layers;
	m->layers = NULL;
	/* the per-layer switches read from config.json count the encoder's layers: none for the decoder (these
	 * families have no windows, NoPE layers, chunks or experts) */
	m->arch.layer_sliding = m->arch.layer_nope = m->arch.layer_chunked = m->moe.layer_moe = NULL;
	int rc = model_bind_all(m, e);
	*dec = *m;
	/* what M gained while binding (converted vectors, the ones vector) belongs to M; the rest goes back */
	struct model keep = *m;
	*m = enc;
	m->owned = keep.owned;
	m->n_owned = keep.n_owned;
	m->cap_owned = keep.cap_owned;
	m->ones = keep.ones;
	m->ones_dim = keep.ones_dim;
	m->bytes_converted = keep.bytes_converted;
	if (rc < 0) {
		free(dec->layers);
		free(dec);
		return -1;
	}
	dec->fam.causal = dec->info.causal = true;
	dec->dec = NULL;
	dec->prefix = NULL;
	dec->prefault_running = false;
	m->dec = dec;
	return 0;
}

/* The boolean settings that switch tensor roles on (attention_bias, mlp_bias, ...). */
static int model_read_conditions(struct model *m, const struct hfconfig *c, struct err *e)
{
	for (int i = 0; i < m->fam.n_conditions; i++) {
		enum family_setting s = m->fam.cond_setting[i];
		if (hfconfig_bool(c, &m->fam, s, &m->cond_on[s], e) < 0)
			return -1;
	}
	return 0;
}

/* Freed traces and run buffers stay mapped for the next run instead of going back to the kernel
 * (glibc's largest mmap threshold, 32 MB, and no trimming). On the reference machine, a
 * paravirtualised VM, a fresh page cost about 20 µs of CPU to fault in: refilling a 128-token gpt2
 * trace's 24 MB took 140 ms of CPU in fresh pages and 2 ms in pages kept from the run before, and
 * one more word at the end of that text went from 68 to 30 ms of CPU. The price: the process keeps
 * the memory of its largest run. */
static void model_keep_freed_memory(void)
{
#ifdef M_MMAP_THRESHOLD
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
}

int model_open(const char *name_or_dir, struct model **out, struct err *e)
{
	static pthread_once_t keep_once = PTHREAD_ONCE_INIT;
	pthread_once(&keep_once, model_keep_freed_memory);
	*out = NULL;
	struct model *m = calloc(1, sizeof *m);
	if (!m)
		return err_set(e, "out of memory");
	pthread_mutex_init(&m->prefault_lock, NULL);
	m->prefault_idle = true; /* until model_start_prefault */
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
	if (model_config_read(m, &cfg, e) < 0 || model_read_conditions(m, &cfg, e) < 0)
		goto fail;
	if (st_open_dir(m->info.dir, &m->st, e) < 0)
		goto fail;
	if (!(m->cache = malloc(sizeof *m->cache)) || wcache_init(m->cache, wcache_default_budget()) < 0) {
		free(m->cache);
		m->cache = NULL;
		err_set(e, "out of memory");
		goto fail;
	}
	if (model_bind_all(m, e) < 0 || lmhead_bind(m, &cfg, e) < 0 ||
	    (m->fam.encoder_decoder && model_bind_decoder(m, m->dec_layers, e) < 0))
		goto fail;
	if (tokenizer_load(m->info.dir, m->fam.tokenizer, &m->tok, e) < 0)
		goto fail;
	m->info.supports_pairs = tokenizer_supports_pairs(m->tok);
	hfconfig_free(&cfg);
	for (int l = 0; l < m->info.n_layers && !m->own_threads; l++) {
		const struct layer_weights *w = &m->layers[l];
		bool t = m->fam.linear == LINEAR_OUT_IN;
		m->own_threads = weight_tiled(&w->qkv_w, t) || weight_tiled(&w->q_w, t) || weight_tiled(&w->out_w, t) ||
				 weight_tiled(&w->up_w, t) || weight_tiled(&w->gate_up_w, t) || weight_tiled(&w->down_w, t) ||
				 weight_tiled(&w->mla.q_b_w, t) || weight_tiled(&w->mla.kv_b_w, t);
	}
	m->own_threads = m->own_threads || moe_tiled(m);
	weights_threads_begin(); /* gemm_row_block measures OpenBLAS single-threaded */
	m->reuse_block = gemm_row_block();
	weights_threads_end();
	/* Blocks of rows: an expert's product takes the tokens routed to it, whose places among them
	 * differ between a whole run and a partial one (MoE models reuse only on oneDNN's kernels). */
	if (m->reuse_block > 1 && m->moe.layer_moe)
		m->reuse_block = 0;
	if (m->fam.causal && !m->fam.positions_after_pad && !weight_present(&m->rel_emb) && m->reuse_block > 0) {
		/* every pass of the model on OpenBLAS single-threaded (its threads cut the rows by their
		 * number), the engine sharing the tiles and heads: a partial run's sums are a whole run's */
		if (m->reuse_block > 1)
			m->own_threads = true;
		m->prefix = malloc(sizeof *m->prefix);
		if (m->prefix && prefix_init(m->prefix, MODEL_PREFIX_BUDGET) < 0) {
			free(m->prefix);
			m->prefix = NULL; /* no reuse: every run computes all its tokens */
		}
	}
	m->info.encoder_decoder = m->dec != NULL;
	m->info.n_decoder_layers = m->dec ? m->dec->info.n_layers : 0;
	m->info.decoder_start = m->dec ? m->dec_start : 0;
	if (m->dec) { /* what the decoder stack shares, now that it is known */
		m->dec->tok = m->tok;
		m->dec->info.supports_pairs = false;
		m->dec->own_threads = m->own_threads;
		m->dec->reuse_block = m->reuse_block;
	}
	model_start_prefault(m);
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
	m->prefault_stop = 1;
	model_wait_prefault(m);
	if (m->layers)
		model_unpack_weights(m);
	if (m->dec) { /* a copy sharing everything but its layers */
		free(m->dec->layers);
		free(m->dec);
	}
	if (m->prefix) {
		prefix_free(m->prefix);
		free(m->prefix);
	}
	if (m->cache) {
		wcache_free(m->cache);
		free(m->cache);
	}
	tokenizer_free(m->tok);
	for (int i = 0; i < m->n_owned; i++)
		free(m->owned[i]);
	free(m->owned);
	free(m->layers);
	moe_free(m);
	model_config_free(m);
	st_close(&m->st);
	family_free(&m->fam);
	pthread_mutex_destroy(&m->prefault_lock);
	free(m);
}

/* Would a full trace of N tokens hold more n x n matrices than the budget allows (trace_budget)?
 * Then it goes compact: heads are recomputed from q and k when read. Not for models whose scores
 * hold relative terms (DeBERTa), which q and k alone cannot give back; they have 512 positions. */
static bool model_trace_compact(const struct model *m, int n)
{
	const struct model_info *in = &m->info;
	return m->fam.position != POS_RELATIVE && !m->fam.encoder_decoder && 4.0 * in->n_layers * in->n_heads * n * n > trace_budget();
}

/* A trace grows as layers x heads x n^2, or, compact, as n x hidden plus a few heads. A config.json
 * may claim 131072 positions with a tiny hidden size (a 1.5 MB file): 40000 tokens of text then
 * took 12.6 GB. Refuse, before allocating, a trace larger than a quarter of the machine's memory
 * (the views may copy parts). */
static int model_check_trace_size(const struct model *m, int n, struct err *e)
{
	const struct model_info *in = &m->info;
	double L = in->n_layers, lh = L * in->n_heads, lkv = L * in->n_kv_heads, raw = in->rotary ? 2 : 1;
	/* a compact trace: its cached heads, one head per forward thread, and the recorded blocks */
	double maps = model_trace_compact(m, n) ? (TRACE_ATTN_SLOTS + 2.0) * n * n + lh * 6 * TRACE_THUMB * TRACE_THUMB
						: lh * n * n;
	double bytes = 4.0 * (maps + raw * (lh + lkv) * n * in->head_dim + lkv * n * in->v_dim +
			      (L + 1.0) * n * in->hidden);
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	double limit = pages > 0 && page > 0 ? (double)pages * page / 4 : 2e9;
	if (bytes > limit)
		return err_set(e, "%d tokens need a %.1f GB trace with this model, more than %.1f GB (a quarter "
			       "of this machine's memory): use a shorter text", n, bytes / 1e9, limit / 1e9);
	return 0;
}

/* ALiBi's slopes of H heads into OUT [H], as transformers' build_alibi_tensor computes them in float32:
 * with P the largest power of two <= H, head i < P gets b^(i+1) for b = 2^(-8/P); the H - P heads
 * beyond (a head count that is not a power of two) get the odd powers c^1, c^3, ... of c = 2^(-4/P),
 * the slopes of 2P heads that fall between the first P. */
static void model_alibi_slopes(int h, float *out)
{
	int p = 1;
	while (p * 2 <= h)
		p *= 2;
	float base = (float)pow(2.0, -8.0 / p), extra = (float)pow(2.0, -4.0 / p);
	for (int i = 0; i < h; i++)
		out[i] = i < p ? powf(base, (float)(i + 1)) : powf(extra, (float)(2 * (i - p) + 1));
}

/* Room in T for the routing of a MoE model: per layer and token its experts and their weights, -1 and
 * 0 on the dense layers (which the trace marks). */
static int model_trace_moe(const struct model *m, struct trace *t)
{
	size_t L = (size_t)t->n_layers, k = (size_t)m->moe.top_k, cells = L * (size_t)t->n * k;
	t->moe_k = (int)k;
	t->moe_topk = malloc((cells ? cells : 1) * sizeof *t->moe_topk);
	t->moe_weights = calloc(cells ? cells : 1, sizeof *t->moe_weights);
	t->moe_layer = malloc((L ? L : 1) * sizeof *t->moe_layer);
	if (!t->moe_topk || !t->moe_weights || !t->moe_layer)
		return -1;
	for (size_t i = 0; i < cells; i++)
		t->moe_topk[i] = -1;
	for (size_t l = 0; l < L; l++)
		t->moe_layer[l] = moe_layer(m, (int)l);
	return 0;
}

/* A mixture of experts reads from the mapping only the experts its tokens go to: N tokens touch at
 * most min(E, N·k) experts a layer. When those and the other weights cannot stay in this machine's
 * memory together, every layer would page experts in and out of the file (hours instead of
 * seconds): say so before starting, with the figures. ATTNSCOPE_MEMORY_CHECK=0 runs anyway; a size
 * there ("8G", "500M", bytes) is the memory to stay within instead of 85 % of the machine's. */
static int model_check_moe_memory(const struct model *m, int n, struct err *e)
{
	const char *env = getenv("ATTNSCOPE_MEMORY_CHECK");
	if (m->moe.n_experts <= 0 || (env && !strcmp(env, "0")))
		return 0;
	double budget = 0;
	if (env && *env) {
		char *end;
		budget = strtod(env, &end);
		budget *= *end == 'K' || *end == 'k' ? 1e3 : *end == 'M' || *end == 'm' ? 1e6 : *end == 'G' || *end == 'g' ? 1e9 : 1;
	}
	double file = 0, all_experts = 0, used = 0;
	for (int i = 0; i < m->st.n_files; i++)
		file += (double)m->st.files[i].size;
	int touched = (double)n * m->moe.top_k < m->moe.n_experts ? n * m->moe.top_k : m->moe.n_experts;
	for (int l = 0; l < m->info.n_layers; l++) {
		double one = (double)moe_expert_bytes(m, l);
		all_experts += one * m->moe.n_experts;
		used += one * touched;
	}
	double need = file - all_experts + used;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	double ram = pages > 0 && page > 0 ? (double)pages * page : 0;
	const char *whose = "ATTNSCOPE_MEMORY_CHECK allows";
	if (budget <= 0)
		budget = 0.85 * ram, whose = "85% of this machine's memory allows";
	if (budget > 0 && need > budget)
		return err_set(e, "%d tokens may route to %d of the %d experts a layer: %.3g GB of weights to hold at "
			       "once, more than the %.3g GB %s (the file is %.3g GB); use a shorter text, or "
			       "ATTNSCOPE_MEMORY_CHECK=0 to page experts from the disk",
			       n, touched, m->moe.n_experts, need / 1e9, budget / 1e9, whose, file / 1e9);
	return 0;
}

/* A trace for N tokens of this model, with its description and each layer's key window filled in.
 * WRITTEN: a forward pass over every token follows, which writes all of the large arrays (trace.h's
 * trace_shape): they are not zeroed first. */
static struct trace *model_new_trace(const struct model *m, int n, bool written, struct err *e)
{
	const struct model_info *in = &m->info;
	if (model_check_trace_size(m, n, e) < 0 || model_check_moe_memory(m, n, e) < 0)
		return NULL;
	struct trace_shape shape = {in->n_layers, in->n_heads, in->n_kv_heads, in->head_dim, in->hidden, n, in->rotary,
				    model_trace_compact(m, n), in->v_dim, written};
	struct trace *t = trace_new_shaped(&shape);
	if (t && shape.compact) {
		t->attn_fill = attnscore_trace_fill;
		t->blas_serial = m->own_threads;
		if (headsummary_alloc(t) < 0) {
			trace_free(t);
			t = NULL;
		}
	}
	if (!t) {
		err_set(e, "out of memory for a trace of %d tokens", n);
		return NULL;
	}
	if (!m->value_norms || shape.compact) { /* not asked for, or no matrices to weigh: no products for them */
		free(t->vnorm);
		t->vnorm = NULL;
	}
	if (m->fam.encoder_decoder && /* both stacks' traces keep each layer's context (--dump) */
	    !(t->context = malloc((size_t)in->n_layers * n * in->n_heads * in->v_dim * sizeof(float) + 1))) {
		trace_free(t);
		err_set(e, "out of memory for a trace of %d tokens", n);
		return NULL;
	}
	snprintf(t->model_name, sizeof t->model_name, "%s", in->name);
	snprintf(t->family, sizeof t->family, "%s", in->family);
	t->pieces = tokenizer_pieces(m->tok);
	t->causal = in->causal;
	t->max_positions = in->max_positions;
	const struct arch *a = &m->arch;
	t->softcap = a->softcap;
	t->rotary_interleaved = a->rotary && a->rope_global.interleaved;
	t->relative_terms = m->fam.position == POS_RELATIVE;
	if (m->fam.position == POS_ALIBI) { /* the slopes ride on the trace, so every score pipeline adds them */
		if (!(t->alibi = malloc((size_t)in->n_heads * sizeof *t->alibi))) {
			trace_free(t);
			err_set(e, "out of memory for a trace of %d tokens", n);
			return NULL;
		}
		model_alibi_slopes(in->n_heads, t->alibi);
		/* Falcon's eager attention counts the bias twice (family alibi_twice): 2/sqrt(d) in all */
		t->alibi_scale = m->fam.alibi_twice ? 2.0f * a->attn_scale : 1.0f;
	}
	if (a->layer_nope) { /* NoPE layers ride on the trace, so the views can say where positions are absent */
		if (!(t->nope = malloc((size_t)in->n_layers * sizeof *t->nope))) {
			trace_free(t);
			err_set(e, "out of memory for a trace of %d tokens", n);
			return NULL;
		}
		memcpy(t->nope, a->layer_nope, (size_t)in->n_layers * sizeof *t->nope);
	}
	if (a->layer_chunked) { /* chunks count tokens like windows: trace_key_range reads them */
		if (!(t->chunk = calloc((size_t)in->n_layers, sizeof *t->chunk))) {
			trace_free(t);
			err_set(e, "out of memory for a trace of %d tokens", n);
			return NULL;
		}
		for (int l = 0; l < in->n_layers; l++)
			t->chunk[l] = a->layer_chunked[l] ? a->chunk : 0;
	}
	if (m->moe.n_experts > 0 && model_trace_moe(m, t) < 0) {
		trace_free(t);
		err_set(e, "out of memory for a trace of %d tokens", n);
		return NULL;
	}
	if (m->fam.n_names[WEIGHT_ATTN_SINKS]) { /* sinks ride on the trace: every score pipeline and view sees them */
		if (!(t->sinks = malloc((size_t)in->n_layers * in->n_heads * sizeof *t->sinks))) {
			trace_free(t);
			err_set(e, "out of memory for a trace of %d tokens", n);
			return NULL;
		}
		for (int l = 0; l < in->n_layers; l++) /* a layer without the tensor (optional): a sink of weight 0 */
			for (int h = 0; h < in->n_heads; h++)
				t->sinks[(size_t)l * in->n_heads + h] = m->layers[l].sinks ? m->layers[l].sinks[h] : -INFINITY;
	}
	for (int l = 0; l < in->n_layers; l++) /* the multiplier fwd_attention applies, for the views */
		t->score_scale[l] = m->scale_by_inverse_layer ? a->attn_scale / (float)(l + 1) : a->attn_scale;
	for (int l = 0; l < in->n_layers; l++) {
		if (!a->layer_sliding || !a->layer_sliding[l])
			continue;
		if (m->fam.window == WINDOW_CENTERED) {
			t->win_before[l] = t->win_after[l] = a->window / 2;
		} else {
			t->win_before[l] = a->window - 1; /* W keys including the query itself */
		}
	}
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

/* Check T's length and tokens before a forward pass indexes the tables. */
static int model_check_tokens(const struct model *m, struct trace *t, struct err *e)
{
	int rc = 0;
	if (t->n > m->info.max_positions)
		rc = err_set(e, "%d tokens exceed the model's %d positions", t->n, m->info.max_positions);
	for (int i = 0; rc == 0 && i < t->n; i++) {
		if (!weight_present(&m->type_emb))
			t->type_ids[i] = 0; /* no token-type table (DistilBERT, decoders): the model sees none */
		if (!t->tokens[i])
			rc = err_set(e, "out of memory");
		else
			rc = model_check_token(m, t, i, e);
	}
	return rc;
}

/* An encoder-decoder model's decoder run on the encoder's trace ENC, teacher-forced: its input is the
 * N_LABELS target ids LABELS shifted right (family decoder_shift: the decoder start token, or mBART's last
 * label, then labels[:-1]); without labels, the decoder start token alone. The decoder's trace becomes
 * ENC->decoder. */
static int model_run_decoder(const struct model *m, struct trace *enc, const int32_t *labels, int n_labels,
			     const volatile int *cancel, struct err *e)
{
	const struct model *d = m->dec;
	int n = n_labels > 0 ? n_labels : 1;
	struct trace *t = model_new_trace(d, n, true, e);
	if (!t)
		return -1;
	t->ids[0] = n_labels > 0 && m->fam.shift == SHIFT_LAST_LABEL ? labels[n_labels - 1] : m->dec_start;
	t->special[0] = true; /* the model's decoder start token (or mBART's language code), as [CLS] is a tokenizer's */
	for (int i = 1; i < n; i++)
		t->ids[i] = labels[i - 1];
	if (n_labels > 0 && !(t->labels = malloc((size_t)n_labels * sizeof *t->labels))) {
		trace_free(t);
		return err_set(e, "out of memory");
	}
	for (int i = 0; i < n_labels; i++)
		t->labels[i] = labels[i];
	for (int i = 0; i < n; i++) {
		const char *s = tokenizer_id_to_token(m->tok, t->ids[i]);
		t->tokens[i] = strdup(s ? s : "");
	}
	t->encoder = enc;
	int rc = trace_alloc_cross(t, enc->n) < 0 ? err_set(e, "out of memory for a trace of %d tokens", n) : 0;
	if (rc == 0 && (rc = model_check_tokens(d, t, e)) < 0)
		err_prefix(e, "target");
	if (rc == 0)
		rc = forward_run(d, t, cancel, e);
	if (rc < 0) {
		trace_free(t);
		return -1;
	}
	enc->decoder = t;
	return 0;
}

/* The forward pass on T's tokens (and, for an encoder-decoder model, the decoder's on the N_LABELS ids of
 * LABELS) into *OUT; T is freed on failure. */
static int model_finish_run_target(const struct model *m, struct trace *t, const int32_t *labels, int n_labels,
				   const volatile int *cancel, struct trace **out, struct err *e)
{
	int rc = model_check_tokens(m, t, e);
	if (rc == 0)
		rc = forward_run(m, t, cancel, e);
	if (rc == 0 && m->dec)
		rc = model_run_decoder(m, t, labels, n_labels, cancel, e);
	if (rc < 0) {
		trace_free(t);
		return -1;
	}
	*out = t;
	return 0;
}

static int model_finish_run(const struct model *m, struct trace *t, const volatile int *cancel,
			    struct trace **out, struct err *e)
{
	return model_finish_run_target(m, t, NULL, 0, cancel, out, e);
}

int model_run_ids(const struct model *m, const int32_t *ids, const int32_t *type_ids, int n,
		  const volatile int *cancel, struct trace **out, struct err *e)
{
	*out = NULL;
	if (n < 0)
		return err_set(e, "negative token count");
	struct trace *t = model_new_trace(m, n, true, e);
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

/* The trace of TEXT (and TEXT_B) with its tokens, before the forward pass that writes its large arrays
 * (model_new_trace's WRITTEN); NULL with E set. */
static struct trace *model_tokenized(const struct model *m, const char *text, const char *text_b, struct err *e)
{
	struct token_list tl = {0};
	if (tokenizer_encode(m->tok, text, text_b, m->info.max_positions, &tl, e) < 0)
		return NULL;
	struct trace *t = model_new_trace(m, tl.n, true, e);
	if (!t) {
		token_list_free(&tl);
		return NULL;
	}
	t->truncated = tl.truncated;
	for (int i = 0; i < tl.n; i++) {
		t->ids[i] = tl.ids[i];
		t->type_ids[i] = tl.type_ids[i];
		t->special[i] = tl.special[i];
		t->tokens[i] = strdup(tl.pieces[i]);
	}
	token_list_free(&tl);
	return t;
}

void model_keep_value_norms(struct model *m, bool on)
{
	m->value_norms = on;
}

struct trace *model_trace_like(const struct model *m, const struct trace *src, struct err *e)
{
	struct trace *t = model_new_trace(m, src->n, false, e); /* an ablated pass may stop early */
	if (!t)
		return NULL;
	t->truncated = src->truncated;
	for (int i = 0; i < src->n; i++) {
		t->ids[i] = src->ids[i];
		t->type_ids[i] = src->type_ids[i];
		t->special[i] = src->special[i];
		if (!(t->tokens[i] = strdup(src->tokens[i] ? src->tokens[i] : ""))) {
			trace_free(t);
			err_set(e, "out of memory");
			return NULL;
		}
	}
	if (model_check_tokens(m, t, e) < 0) {
		trace_free(t);
		return NULL;
	}
	return t;
}

int model_prepare(const struct model *m, const char *text, const char *text_b, bool attention_only,
		  struct trace **out, struct err *e)
{
	*out = model_tokenized(m, text, text_b, e);
	if (*out && model_check_tokens(m, *out, e) < 0) {
		trace_free(*out);
		*out = NULL;
	}
	if (*out) { /* an aggregate keeps no value norms: the batch skips their products (an out projection's cost) */
		free((*out)->vnorm);
		(*out)->vnorm = NULL;
		if (attention_only)
			trace_attention_only(*out);
	}
	return *out ? 0 : -1;
}

int model_forward_batch(const struct model *m, struct trace **t, int nb, const volatile int *cancel, struct err *e)
{
	return forward_run_batch(m, t, nb, cancel, e);
}

int model_run(const struct model *m, const char *text, const char *text_b, const volatile int *cancel,
	      struct trace **out, struct err *e)
{
	*out = NULL;
	struct trace *t = model_tokenized(m, text, text_b, e);
	return t ? model_finish_run(m, t, cancel, out, e) : -1;
}

int model_run_ids_target(const struct model *m, const int32_t *ids, int n, const int32_t *labels, int n_labels,
			 const volatile int *cancel, struct trace **out, struct err *e)
{
	*out = NULL;
	if (!m->dec && n_labels > 0)
		return err_set(e, "%s is not an encoder-decoder model: it takes no target", m->info.name);
	if (n < 0 || n_labels < 0)
		return err_set(e, "negative token count");
	struct trace *t = model_new_trace(m, n, true, e);
	if (!t)
		return -1;
	for (int i = 0; i < n; i++) {
		t->ids[i] = ids[i];
		const char *s = tokenizer_id_to_token(m->tok, ids[i]);
		t->tokens[i] = strdup(s ? s : "");
	}
	return model_finish_run_target(m, t, labels, n_labels, cancel, out, e);
}

int model_run_target(const struct model *m, const char *text, const char *target, const volatile int *cancel,
		     struct trace **out, struct err *e)
{
	*out = NULL;
	if (!m->dec && target)
		return err_set(e, "%s is not an encoder-decoder model: it takes no target", m->info.name);
	struct token_list tl = {0};
	/* the target's labels as transformers' text_target= gives them (mBART/NLLB: the target language) */
	if (target && tokenizer_encode_target(m->tok, target, m->dec ? m->dec->info.max_positions : 0, &tl, e) < 0) {
		err_prefix(e, "target");
		return -1;
	}
	struct trace *t = model_tokenized(m, text, NULL, e);
	int rc = t ? model_finish_run_target(m, t, tl.ids, target ? tl.n : 0, cancel, out, e) : -1;
	for (int i = 1; rc == 0 && target && i < (*out)->decoder->n; i++) /* the labels' special tokens (</s>), shifted */
		(*out)->decoder->special[i] = tl.special[i - 1];
	token_list_free(&tl);
	return rc;
}

int model_run_reuse(const struct model *m, const char *text, const char *text_b, const volatile int *cancel,
		    struct trace **out, struct err *e)
{
	if (!m->prefix)
		return model_run(m, text, text_b, cancel, out, e);
	*out = NULL;
	struct trace *t = model_tokenized(m, text, text_b, e);
	if (!t)
		return -1;
	struct prefix_cache *c = m->prefix;
	pthread_mutex_lock(&c->lock);
	int rc = model_check_tokens(m, t, e), r = 0;
	if (rc == 0) {
		r = prefix_shared(c, t);
		r -= r % m->reuse_block; /* the computed rows start where a whole run's blocks of rows do */
		if (r && !forward_rope_reusable(m, t->n, r, c->len_min, c->len_max))
			r = 0;
		forward_advise(t);
		prefix_fill(c, t, r);
		c->reused = r;
		rc = forward_run_from(m, t, r, cancel, e);
	}
	if (rc == 0)
		prefix_keep(c, t, r);
	pthread_mutex_unlock(&m->prefix->lock);
	if (rc < 0) {
		trace_free(t);
		return -1;
	}
	*out = t;
	return 0;
}
