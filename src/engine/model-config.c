/* model-config.c -- read a model's shape and block settings from config.json through its family
 * description: sizes, grouped-query heads, norms, activation, score scaling and soft-capping,
 * rotary embeddings and sliding windows. Values the engine cannot run exactly are refused here,
 * with a one-line error naming them, before any weight is touched. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model-internal.h"

/* Limits that keep a hostile config.json from asking for absurd allocations. */
#define MODEL_MAX_LAYERS 1024
#define MODEL_MAX_HEADS 1024
#define MODEL_MAX_HIDDEN 65536
#define MODEL_MAX_POSITIONS (1 << 24) /* Llama-4-Scout claims 10,485,760, DeepSeek-V3 163,840; nothing is
                                      * sized by it (rotary tables are computed per position); what a text may
                                      * take is bounded by its trace's size (model_check_trace_size) */
#define MODEL_MAX_VOCAB 4000000

/* Integer setting S when config.json or the family gives one, else FALLBACK. */
static int config_int_or(const struct hfconfig *c, const struct family *f, enum family_setting s, long lo, long hi,
			 long fallback, long *out, struct err *e)
{
	if (!hfconfig_has(c, f, s) && !f->defaults[s]) {
		*out = fallback;
		return 0;
	}
	return hfconfig_int(c, f, s, lo, hi, out, e);
}

/* Float setting S when given, else FALLBACK. */
static int config_float_or(const struct hfconfig *c, const struct family *f, enum family_setting s, double fallback,
			   double *out, struct err *e)
{
	if (!hfconfig_has(c, f, s) && !f->defaults[s]) {
		*out = fallback;
		return 0;
	}
	return hfconfig_float(c, f, s, out, e);
}

/* The family's refusals: config.json values (a MoE block, a sliding-window switch the engine does
 * not follow) that would make the numbers wrong. "*" refuses any non-null value, "!V" any but V. */
static int config_refusals(const struct hfconfig *c, const struct family *f, struct err *e)
{
	json_t *section = f->config_section[0] ? json_object_get(c->root, f->config_section) : NULL;
	for (int i = 0; i < f->n_refusals; i++) {
		json_t *v = json_is_object(section) ? json_object_get(section, f->refuse_key[i]) : NULL;
		if (!v || json_is_null(v))
			v = json_object_get(c->root, f->refuse_key[i]);
		if (!v || json_is_null(v))
			continue;
		char text[64] = "";
		if (json_is_true(v) || json_is_false(v))
			snprintf(text, sizeof text, "%s", json_is_true(v) ? "true" : "false");
		else if (json_is_string(v))
			snprintf(text, sizeof text, "%s", json_string_value(v));
		else if (json_is_integer(v))
			snprintf(text, sizeof text, "%lld", (long long)json_integer_value(v));
		const char *want = f->refuse_value[i];
		bool refused = strcmp(want, "*") == 0 || (want[0] == '!' ? strcmp(text, want + 1) != 0 : strcmp(text, want) == 0);
		if (refused)
			return err_set(e, "%s: \"%s\": %s is not supported: %s", c->path, f->refuse_key[i],
				       text[0] ? text : "this value", f->refuse_why[i]);
	}
	return 0;
}

int model_config_activation(struct model *m, const struct hfconfig *c, enum family_setting s, enum activation *out,
			    struct err *e)
{
	char act[48];
	if (hfconfig_string(c, &m->fam, s, act, sizeof act, e) < 0)
		return -1;
	if (strcmp(act, "gelu") == 0)
		*out = ACT_GELU_ERF;
	else if (strcmp(act, "gelu_new") == 0 || strcmp(act, "gelu_pytorch_tanh") == 0 || strcmp(act, "gelu_fast") == 0)
		*out = ACT_GELU_TANH;
	else if (strcmp(act, "relu") == 0)
		*out = ACT_RELU;
	else if (strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0)
		*out = ACT_SILU;
	else
		return err_set(e, "%s: unsupported activation '%s' (gelu, gelu_new, gelu_pytorch_tanh, relu, silu)",
			       c->path, act);
	return 0;
}

/* GPT-Neo's layer kinds into SLIDING [L]: attention_types, [[["global", "local"], 12]], expanded
 * (each list of kinds repeated) must give one kind per layer, as GPTNeoConfig requires; config.json's
 * attention_layers (the family's layer_types key), when present, is what the layers then read, as
 * GPTNeoConfig keeps that extra key over its own expansion. A "local" layer uses the window. */
static int config_attention_types(const struct hfconfig *c, const struct family *f, int L, bool *sliding,
				  struct err *e)
{
	const json_t *spec = hfconfig_json(c, f, SET_ATTENTION_TYPES), *layers = hfconfig_json(c, f, SET_LAYER_TYPES);
	if (!json_is_array(spec))
		return err_set(e, "%s: \"attention_types\" must be a list of [[kinds], repeat]", c->path);
	int n = 0;
	for (size_t i = 0; i < json_array_size(spec); i++) {
		const json_t *item = json_array_get(spec, i), *kinds = json_array_get(item, 0);
		const json_t *reps = json_array_get(item, 1);
		if (json_array_size(item) != 2 || !json_is_array(kinds) || !json_is_integer(reps) ||
		    json_integer_value(reps) < 0 || json_integer_value(reps) > L)
			return err_set(e, "%s: \"attention_types\" must be a list of [[kinds], repeat]", c->path);
		for (long r = 0; r < json_integer_value(reps); r++)
			for (size_t k = 0; k < json_array_size(kinds); k++) {
				const char *t = json_string_value(json_array_get(kinds, k));
				if (!t || (strcmp(t, "global") != 0 && strcmp(t, "local") != 0))
					return err_set(e, "%s: attention_types: a kind is not \"global\" or \"local\"",
						       c->path);
				if (n == L)
					return err_set(e, "%s: \"attention_types\" gives more layers than %d", c->path, L);
				sliding[n++] = strcmp(t, "local") == 0;
			}
	}
	if (n != L)
		return err_set(e, "%s: \"attention_types\" gives %d layers, not %d", c->path, n, L);
	if (!layers)
		return 0;
	if (!json_is_array(layers) || json_array_size(layers) != (size_t)L)
		return err_set(e, "%s: \"attention_layers\" must list one kind per layer (%d)", c->path, L);
	for (int l = 0; l < L; l++) {
		const char *t = json_string_value(json_array_get(layers, l));
		if (!t || (strcmp(t, "global") != 0 && strcmp(t, "local") != 0))
			return err_set(e, "%s: attention_layers[%d] is not \"global\" or \"local\"", c->path, l);
		sliding[l] = strcmp(t, "local") == 0;
	}
	return 0;
}

/* Which layers use the sliding window: config.json's layer_types when present, else the family's
 * pattern (layer l global when (l + offset) % global_every == 0), else every layer. */
static int config_window_layers(struct model *m, const struct hfconfig *c, struct err *e)
{
	const struct family *f = &m->fam;
	struct arch *a = &m->arch;
	int L = m->info.n_layers;
	a->layer_sliding = calloc(L, sizeof *a->layer_sliding);
	if (!a->layer_sliding)
		return err_set(e, "out of memory");
	long window = 0;
	if (config_int_or(c, f, SET_SLIDING_WINDOW, 1, 1L << 30, 0, &window, e) < 0)
		return -1;
	a->window = (int)window;
	const json_t *types = hfconfig_json(c, f, SET_LAYER_TYPES);
	if (f->n_keys[SET_ATTENTION_TYPES]) { /* GPT-Neo */
		if (config_attention_types(c, f, L, a->layer_sliding, e) < 0)
			return -1;
	} else if (types) {
		if (!json_is_array(types) || json_array_size(types) != (size_t)L)
			return err_set(e, "%s: \"layer_types\" must list one type per layer (%d)", c->path, L);
		for (int l = 0; l < L; l++) {
			const char *t = json_string_value(json_array_get(types, l));
			if (t && strcmp(t, "sliding_attention") == 0)
				a->layer_sliding[l] = true;
			else if (!t || (strcmp(t, "full_attention") != 0 &&
					!(f->n_keys[SET_ATTENTION_CHUNK] && strcmp(t, "chunked_attention") == 0)))
				return err_set(e, "%s: layer_types[%d] is not \"full_attention\" or \"%s_attention\"",
					       c->path, l, f->n_keys[SET_ATTENTION_CHUNK] ? "chunked" : "sliding");
		}
	} else if (a->window > 0) {
		long every = 0;
		if (config_int_or(c, f, SET_GLOBAL_EVERY, 1, MODEL_MAX_LAYERS, 0, &every, e) < 0)
			return -1;
		for (int l = 0; l < L; l++)
			a->layer_sliding[l] = every == 0 || (l + f->global_offset) % every != 0;
	}
	bool any = false;
	for (int l = 0; l < L; l++)
		any |= a->layer_sliding[l];
	if (any && a->window <= 0)
		return err_set(e, "%s: sliding layers need a positive \"sliding_window\"", c->path);
	if (!any)
		a->window = 0;
	return 0;
}

/* SmolLM3's layers without positions: no_rope_layers lists 1 (rotary) or 0 (none, "NoPE") per layer;
 * without it SmolLM3Config drops rotary on every no_rope_layer_interval-th layer (layer l when
 * (l + 1) % interval == 0). With the family's no_rope_empty_unset an empty list counts as none
 * (Llama4TextConfig's rule: Llama-4-Scout's config.json has "no_rope_layers": []). Only families that
 * name these keys get LAYER_NOPE. */
static int config_nope_layers(struct model *m, const struct hfconfig *c, struct err *e)
{
	const struct family *f = &m->fam;
	int L = m->info.n_layers;
	if (!f->n_keys[SET_NO_ROPE_LAYERS] && !f->n_keys[SET_NO_ROPE_INTERVAL])
		return 0;
	bool *nope = calloc(L, sizeof *nope);
	if (!nope)
		return err_set(e, "out of memory");
	m->arch.layer_nope = nope;
	const json_t *list = hfconfig_json(c, f, SET_NO_ROPE_LAYERS);
	if (list && !(f->no_rope_empty_unset && json_is_array(list) && json_array_size(list) == 0)) {
		if (!json_is_array(list) || json_array_size(list) != (size_t)L)
			return err_set(e, "%s: \"no_rope_layers\" must list one 0 or 1 per layer (%d)", c->path, L);
		for (int l = 0; l < L; l++) {
			const json_t *v = json_array_get(list, l);
			if (!json_is_integer(v) || (json_integer_value(v) != 0 && json_integer_value(v) != 1))
				return err_set(e, "%s: no_rope_layers[%d] is not 0 or 1", c->path, l);
			nope[l] = json_integer_value(v) == 0;
		}
		return 0;
	}
	long every;
	if (config_int_or(c, f, SET_NO_ROPE_INTERVAL, 1, MODEL_MAX_LAYERS, 0, &every, e) < 0)
		return -1;
	for (int l = 0; every > 0 && l < L; l++)
		nope[l] = (l + 1) % every == 0;
	return 0;
}

/* Llama 4's chunked attention: chunks of attention_chunk_size tokens on the layers layer_types calls
 * "chunked_attention", or without it on the rotary ones (Llama4TextConfig: chunked where no_rope_layers
 * says 1). Only families naming attention_chunk_size get chunks. */
static int config_chunk_layers(struct model *m, const struct hfconfig *c, struct err *e)
{
	const struct family *f = &m->fam;
	struct arch *a = &m->arch;
	int L = m->info.n_layers;
	if (!f->n_keys[SET_ATTENTION_CHUNK])
		return 0;
	long chunk;
	if (hfconfig_int(c, f, SET_ATTENTION_CHUNK, 1, 1L << 30, &chunk, e) < 0)
		return -1;
	if (!(a->layer_chunked = calloc(L, sizeof *a->layer_chunked)))
		return err_set(e, "out of memory");
	a->chunk = (int)chunk;
	const json_t *types = hfconfig_json(c, f, SET_LAYER_TYPES); /* checked by config_window_layers */
	for (int l = 0; l < L; l++) {
		const char *t = json_string_value(json_array_get(types, l));
		a->layer_chunked[l] = types ? t && strcmp(t, "chunked_attention") == 0
					    : a->rotary && !(a->layer_nope && a->layer_nope[l]);
	}
	return 0;
}

/* Llama 4: use_qk_norm switches the family's L2 norm of q and k on; attn_temperature_tuning scales q on
 * the NoPE layers. A truthy number counts as true, as in Python (Llama-4-Scout's config.json says 4). */
static int config_llama4_terms(struct model *m, const struct hfconfig *c, struct err *e)
{
	const struct family *f = &m->fam;
	struct arch *a = &m->arch;
	if (f->qk_l2_norm && hfconfig_bool(c, f, SET_USE_QK_NORM, &a->qk_l2, e) < 0)
		return -1;
	if (!f->n_keys[SET_TEMPERATURE_TUNING])
		return 0;
	const json_t *v = hfconfig_json(c, f, SET_TEMPERATURE_TUNING);
	const char *dflt = f->defaults[SET_TEMPERATURE_TUNING];
	if (!v)
		a->temperature = dflt && strcmp(dflt, "true") == 0;
	else if (json_is_boolean(v) || json_is_integer(v))
		a->temperature = json_is_true(v) || (json_is_integer(v) && json_integer_value(v) != 0);
	else
		return err_set(e, "%s: \"%s\" must be true or false", c->path, f->keys[SET_TEMPERATURE_TUNING][0]);
	double floor_scale, scale;
	if (!a->temperature)
		return 0;
	if (hfconfig_float(c, f, SET_FLOOR_SCALE, &floor_scale, e) < 0 ||
	    hfconfig_float(c, f, SET_TEMPERATURE_SCALE, &scale, e) < 0)
		return -1;
	if (!(floor_scale >= 1 && floor_scale < 1e12) || !(fabs(scale) < 1e6))
		return err_set(e, "%s: floor_scale must be at least 1 and attn_scale finite", c->path);
	a->floor_scale = (float)floor_scale;
	a->temperature_scale = (float)scale;
	return 0;
}

/* DeepSeek's latent attention (family attention mla): the ranks and head parts; a q/k head is nope + rope
 * wide (config.json's head_dim, where it has one, is the rope part alone), v v_head_dim wide. */
static int config_mla(struct model *m, const struct hfconfig *c, long *head_dim, struct err *e)
{
	const struct family *f = &m->fam;
	struct arch *a = &m->arch;
	long q_rank, kv_rank, nope, rope, v;
	bool interleave = false;
	if (config_int_or(c, f, SET_Q_LORA_RANK, 1, MODEL_MAX_HIDDEN, 0, &q_rank, e) < 0 ||
	    hfconfig_int(c, f, SET_KV_LORA_RANK, 1, MODEL_MAX_HIDDEN, &kv_rank, e) < 0 ||
	    hfconfig_int(c, f, SET_QK_NOPE_DIM, 0, MODEL_MAX_HIDDEN, &nope, e) < 0 ||
	    hfconfig_int(c, f, SET_QK_ROPE_DIM, 2, MLA_MAX_ROPE, &rope, e) < 0 ||
	    hfconfig_int(c, f, SET_V_HEAD_DIM, 1, MODEL_MAX_HIDDEN, &v, e) < 0 ||
	    hfconfig_bool(c, f, SET_ROPE_INTERLEAVE, &interleave, e) < 0)
		return -1;
	if (rope % 2)
		return err_set(e, "%s: qk_rope_head_dim %ld must be even", c->path, rope);
	a->mla = (struct mla_shape){(int)q_rank, (int)kv_rank, (int)nope, (int)rope, (int)v};
	a->rope_offset = (int)nope;
	a->rope_deinterleave = interleave;
	*head_dim = nope + rope;
	return 0;
}

/* DeepseekV3Attention: under a rope_scaling with mscale_all_dim, the scores' scale qk_head_dim^-0.5 is
 * multiplied by mscale² (YaRN's 0.1 · mscale_all_dim · ln(factor) + 1; 1 for a factor ≤ 1). */
static int config_mla_mscale(struct model *m, const struct hfconfig *c, struct err *e)
{
	const json_t *sc = hfconfig_json(c, &m->fam, SET_ROPE_SCALING);
	const json_t *all = json_object_get(sc, "mscale_all_dim"), *factor = json_object_get(sc, "factor");
	if (!json_is_object(sc) || !all || json_is_null(all) || (json_is_number(all) && json_number_value(all) == 0))
		return 0;
	if (!json_is_number(all) || !json_is_number(factor))
		return err_set(e, "%s: rope_scaling mscale_all_dim and factor must be numbers", c->path);
	double f = json_number_value(factor), ms = f <= 1 ? 1.0 : 0.1 * json_number_value(all) * log(f) + 1.0;
	m->arch.attn_scale = (float)(pow((double)m->info.head_dim, -0.5) * ms * ms);
	return 0;
}

static int config_rotary(struct model *m, const struct hfconfig *c, struct err *e)
{
	const struct family *f = &m->fam;
	struct arch *a = &m->arch;
	int hd = m->info.head_dim;
	double fraction, theta, local_theta;
	if (config_float_or(c, f, SET_ROTARY_FRACTION, 1.0, &fraction, e) < 0 ||
	    hfconfig_float(c, f, SET_ROPE_THETA, &theta, e) < 0 ||
	    config_float_or(c, f, SET_ROPE_LOCAL_THETA, theta, &local_theta, e) < 0)
		return -1;
	if (!(fraction > 0 && fraction <= 1))
		return err_set(e, "%s: partial rotary fraction %g must be in (0, 1]", c->path, fraction);
	int dim = (int)(hd * fraction);
	if (f->attention == ATTENTION_MLA) /* only the rope part of a head turns */
		dim = m->arch.mla.rope;
	if (hfconfig_has(c, f, SET_ROTARY_DIM)) { /* GPT-J: a number of dims, not a fraction (null = all) */
		long rd;
		if (hfconfig_int(c, f, SET_ROTARY_DIM, 1, hd, &rd, e) < 0)
			return -1;
		dim = (int)rd;
	}
	const void *scaling = hfconfig_json(c, f, SET_ROPE_SCALING);
	int max = m->info.max_positions;
	if (rope_init(&a->rope_global, dim, theta, max, scaling, c->path, e) < 0 ||
	    rope_init(&a->rope_local, dim, local_theta, max, f->rope_local_unscaled ? NULL : scaling, c->path, e) < 0)
		return -1;
	a->rope_global.interleaved = a->rope_local.interleaved = f->rope_style == ROPE_STYLE_INTERLEAVED;
	/* Dynamic NTK scaling exists to run past the trained length: allow texts that long. */
	m->info.max_positions = rope_max_length(&a->rope_global);
	return 0;
}

/* DeBERTa's relative attention: buckets, span and which terms (pos_att_type: a list, or "p2c|c2p"). */
static int config_relative(struct model *m, const struct hfconfig *c, struct err *e)
{
	const struct family *f = &m->fam;
	struct relpos *r = &m->relpos;
	long buckets, maxrel;
	if (config_int_or(c, f, SET_POSITION_BUCKETS, -1, 1 << 16, 0, &buckets, e) < 0 ||
	    config_int_or(c, f, SET_MAX_RELATIVE, -1, 1 << 20, -1, &maxrel, e) < 0)
		return -1;
	r->buckets = buckets > 0 ? (int)buckets : 0;
	r->max_relative = maxrel < 1 ? m->pos_rows : (int)maxrel;
	r->span = r->buckets > 0 ? r->buckets : r->max_relative;
	const json_t *types = hfconfig_json(c, f, SET_POS_ATT_TYPE);
	char list[64] = "";
	if (json_is_string(types)) {
		snprintf(list, sizeof list, "%s", json_string_value(types));
	} else if (json_is_array(types)) {
		for (size_t i = 0; i < json_array_size(types); i++) {
			const char *t = json_string_value(json_array_get(types, i));
			if (!t)
				return err_set(e, "%s: \"pos_att_type\" must list strings", c->path);
			size_t used = strlen(list);
			snprintf(list + used, sizeof list - used, "%s%s", used ? "|" : "", t);
		}
	}
	for (char *tok = strtok(list, "|"); tok; tok = strtok(NULL, "|")) {
		if (strcmp(tok, "c2p") == 0)
			r->c2p = true;
		else if (strcmp(tok, "p2c") == 0)
			r->p2c = true;
		else
			return err_set(e, "%s: pos_att_type \"%.20s\" is not supported (c2p, p2c)", c->path, tok);
	}
	r->scale_factor = 1 + r->c2p + r->p2c;
	/* the content scores share the scaling: q·k / sqrt(head_dim × scale_factor) */
	m->arch.attn_scale = (float)(1.0 / sqrt((double)m->info.head_dim * r->scale_factor));
	return 0;
}

/* T5's feed_forward_proj: "ACT" (a plain MLP) or "gated-ACT" (wo(act(wi_0 x) · wi_1 x)), where T5Config turns
 * "gated-gelu" into gelu_new; it overrides the family's mlp and activation when config.json has it. */
static int config_ff_proj(struct model *m, const struct hfconfig *c, struct err *e)
{
	char ff[48];
	if (!hfconfig_has(c, &m->fam, SET_FF_PROJ))
		return 0;
	if (hfconfig_string(c, &m->fam, SET_FF_PROJ, ff, sizeof ff, e) < 0)
		return -1;
	bool gated = strncmp(ff, "gated-", 6) == 0;
	const char *act = gated ? ff + 6 : ff;
	if (gated && strcmp(act, "gelu") == 0)
		act = "gelu_new";
	if (gated && (!m->fam.n_names[WEIGHT_MLP_GATE_W] || !m->fam.n_names[WEIGHT_MLP_UP_W]))
		return err_set(e, "%s: \"%s\": %s needs a gated MLP the family does not describe", c->path,
			       m->fam.keys[SET_FF_PROJ][0], ff);
	m->fam.mlp = gated ? MLP_GATED : MLP_PLAIN;
	if (strcmp(act, "gelu") == 0)
		m->act = ACT_GELU_ERF;
	else if (strcmp(act, "gelu_new") == 0)
		m->act = ACT_GELU_TANH;
	else if (strcmp(act, "relu") == 0)
		m->act = ACT_RELU;
	else if (strcmp(act, "silu") == 0)
		m->act = ACT_SILU;
	else
		return err_set(e, "%s: \"%s\": unsupported '%s' (relu, gelu, gated-gelu, silu, gated-silu)", c->path,
			       m->fam.keys[SET_FF_PROJ][0], ff);
	return 0;
}

/* An encoder-decoder model's decoder settings, T5's relative position bias and the √hidden embedding
 * scale of scale_embedding (BART's family). The decoder stack has the encoder's width, heads and MLP
 * size: a checkpoint where they differ is refused by name. */
static int config_encdec(struct model *m, const struct hfconfig *c, struct err *e)
{
	const struct family *f = &m->fam;
	struct model_info *in = &m->info;
	if (f->n_keys[SET_SCALE_EMBEDDING]) {
		bool on = false;
		if (hfconfig_bool(c, f, SET_SCALE_EMBEDDING, &on, e) < 0)
			return -1;
		if (on) /* math.sqrt(d_model) times the float32 rows: the product in float32 */
			m->arch.embed_scale = (float)sqrt((double)in->hidden);
	}
	if (f->n_names[WEIGHT_REL_BIAS]) {
		long buckets, dist;
		if (hfconfig_int(c, f, SET_REL_BUCKETS, 4, 4096, &buckets, e) < 0 ||
		    hfconfig_int(c, f, SET_REL_MAX_DISTANCE, 1, 1L << 20, &dist, e) < 0)
			return -1;
		if (dist <= buckets / 2) /* the log-spaced buckets start at buckets / 4 (bidirectional) or / 2 */
			return err_set(e, "%s: relative_attention_max_distance %ld must exceed half the %ld buckets", c->path,
				       dist, buckets);
		m->rel_buckets = (int)buckets;
		m->rel_max_distance = (int)dist;
	}
	if (!f->encoder_decoder)
		return 0;
	long layers, heads, inter, start;
	if (hfconfig_int(c, f, SET_DEC_LAYERS, 1, MODEL_MAX_LAYERS, &layers, e) < 0 ||
	    config_int_or(c, f, SET_DEC_HEADS, 1, MODEL_MAX_HEADS, in->n_heads, &heads, e) < 0 ||
	    config_int_or(c, f, SET_DEC_INTERMEDIATE, 1, 64L * MODEL_MAX_HIDDEN, in->intermediate, &inter, e) < 0 ||
	    hfconfig_int(c, f, SET_DEC_START, 0, in->vocab_size - 1, &start, e) < 0)
		return -1;
	if (heads != in->n_heads || inter != in->intermediate)
		return err_set(e, "%s: a decoder with %ld heads and MLP size %ld beside an encoder's %d and %d is not "
			       "supported", c->path, heads, inter, in->n_heads, in->intermediate);
	m->dec_start = (int)start;
	m->dec_layers = (int)layers;
	return 0;
}

int model_config_read(struct model *m, const struct hfconfig *c, struct err *e)
{
	struct model_info *in = &m->info;
	const struct family *f = &m->fam;
	struct arch *a = &m->arch;
	long layers, heads, hidden, inter = 0, maxpos, vocab, types = 0, kv, head_dim;
	if (config_refusals(c, f, e) < 0)
		return -1;
	if (hfconfig_int(c, f, SET_LAYERS, 1, MODEL_MAX_LAYERS, &layers, e) < 0 ||
	    hfconfig_int(c, f, SET_HEADS, 1, MODEL_MAX_HEADS, &heads, e) < 0 ||
	    hfconfig_int(c, f, SET_HIDDEN, 1, MODEL_MAX_HIDDEN, &hidden, e) < 0 ||
	    hfconfig_int(c, f, SET_MAX_POSITIONS, 1, MODEL_MAX_POSITIONS, &maxpos, e) < 0 ||
	    hfconfig_int(c, f, SET_VOCAB_SIZE, 1, MODEL_MAX_VOCAB, &vocab, e) < 0 ||
	    config_int_or(c, f, SET_KV_HEADS, 1, MODEL_MAX_HEADS, heads, &kv, e) < 0 ||
	    config_int_or(c, f, SET_HEAD_DIM, 1, MODEL_MAX_HIDDEN, hidden / heads, &head_dim, e) < 0)
		return -1;
	/* Falcon: only its new_decoder_architecture reads kv_heads; the older layouts have one key/value
	 * head per query head, or one for all of them with multi_query */
	bool new_decoder = true, multi_query_counts = true;
	if (f->n_keys[SET_NEW_DECODER]) {
		if (hfconfig_bool(c, f, SET_NEW_DECODER, &new_decoder, e) < 0)
			return -1;
		multi_query_counts = !new_decoder;
		if (!new_decoder)
			kv = heads;
	}
	if (f->n_keys[SET_MULTI_QUERY] && multi_query_counts) {
		/* GPTBigCode says "one key/value head" with a boolean instead of a count */
		bool mq = false;
		if (hfconfig_bool(c, f, SET_MULTI_QUERY, &mq, e) < 0)
			return -1;
		if (mq)
			kv = 1;
	}
	if (hfconfig_has(c, f, SET_INTERMEDIATE) || !f->intermediate_per_hidden) {
		if (hfconfig_int(c, f, SET_INTERMEDIATE, 1, 64L * MODEL_MAX_HIDDEN, &inter, e) < 0)
			return -1;
	} else {
		inter = f->intermediate_per_hidden * hidden;
	}
	if (f->n_names[WEIGHT_TYPE_EMB] && hfconfig_int(c, f, SET_TYPE_VOCAB_SIZE, 0, 1024, &types, e) < 0)
		return -1;
	if (f->attention == ATTENTION_MLA && config_mla(m, c, &head_dim, e) < 0)
		return -1;
	if (!hfconfig_has(c, f, SET_HEAD_DIM) && hidden % heads && f->attention != ATTENTION_MLA)
		return err_set(e, "%s: hidden size %ld is not divisible by %ld heads", c->path, hidden, heads);
	if (heads % kv)
		return err_set(e, "%s: %ld attention heads cannot share %ld key/value heads evenly", c->path, heads, kv);
	if (head_dim * heads > 4L * MODEL_MAX_HIDDEN)
		return err_set(e, "%s: %ld heads of %ld dimensions is too wide", c->path, heads, head_dim);
	if (hfconfig_float(c, f, SET_LAYER_NORM_EPS, &m->ln_eps, e) < 0 || model_config_activation(m, c, SET_ACTIVATION, &m->act, e) < 0 ||
	    hfconfig_bool(c, f, SET_SCALE_BY_INVERSE_LAYER, &m->scale_by_inverse_layer, e) < 0 ||
	    hfconfig_bool(c, f, SET_PARALLEL_RESIDUAL, &a->parallel_residual, e) < 0)
		return -1;
	if (f->n_keys[SET_NEW_DECODER] && new_decoder && !a->parallel_residual)
		/* FalconDecoderLayer reads ln_attn (or an unset MLP input) there: transformers cannot run it either */
		return err_set(e, "%s: \"%s\": false is not supported with \"%s\" true (a layout transformers does not run)",
			       c->path, f->keys[SET_PARALLEL_RESIDUAL][0], f->keys[SET_NEW_DECODER][0]);
	if (a->parallel_residual && f->n_keys[SET_PARALLEL_NORMS]) {
		/* Falcon: attention and MLP read one input_layernorm (falcon-7b; num_ln_in_parallel_attn 1 in the
		 * new layout) or each its own, ln_attn and ln_mlp (the new layout's default, null = 2) */
		long norms = 1;
		if (new_decoder && config_int_or(c, f, SET_PARALLEL_NORMS, 1, 2, 2, &norms, e) < 0)
			return -1;
		if (norms == 1)
			m->fam.block = BLOCK_PARALLEL_ONE_NORM;
	}
	m->scale_attn_weights = true;
	if ((f->n_keys[SET_SCALE_ATTN_WEIGHTS] || f->defaults[SET_SCALE_ATTN_WEIGHTS]) && /* T5: false, no key */
	    hfconfig_bool(c, f, SET_SCALE_ATTN_WEIGHTS, &m->scale_attn_weights, e) < 0)
		return -1;
	if (config_ff_proj(m, c, e) < 0)
		return -1;
	if (!(m->ln_eps > 0 && m->ln_eps < 1))
		return err_set(e, "%s: layer norm epsilon %g out of range", c->path, m->ln_eps);
	in->n_layers = (int)layers;
	in->n_heads = (int)heads;
	in->n_kv_heads = (int)kv;
	in->hidden = (int)hidden;
	in->head_dim = (int)head_dim;
	in->intermediate = (int)inter;
	in->max_positions = (int)maxpos;
	m->pos_rows = (int)maxpos + f->position_offset; /* OPT: max_positions + 2 rows, the first two unread */
	in->vocab_size = (int)vocab;
	m->type_vocab = (int)types;
	long embed;
	if (config_int_or(c, f, SET_EMBEDDING_SIZE, 1, MODEL_MAX_HIDDEN, hidden, &embed, e) < 0)
		return -1;
	m->embed_dim = (int)embed;
	if (embed != hidden && !f->n_names[WEIGHT_EMB_PROJ_W])
		/* OPT's word_embed_proj_dim (opt-350m): its project_in/project_out are not described */
		return err_set(e, "%s: \"%s\": %ld is not supported: embeddings %ld wide with hidden size %ld need a "
			       "projection this family does not describe", c->path, f->keys[SET_EMBEDDING_SIZE][0], embed,
			       embed, hidden);
	if (f->positions_after_pad) {
		/* fairseq positions start past the padding id: that many rows of the table are never used */
		long pad;
		if (hfconfig_int(c, f, SET_PAD_TOKEN, 0, maxpos - 2, &pad, e) < 0)
			return -1;
		m->pad_id = (int)pad;
		in->max_positions = (int)(maxpos - pad - 1);
	}
	a->n_kv_heads = (int)kv;
	a->q_dim = (int)(heads * head_dim);
	a->kv_dim = (int)(kv * head_dim);
	in->v_dim = f->attention == ATTENTION_MLA ? a->mla.v : (int)head_dim;
	a->v_dim = (int)kv * in->v_dim;
	a->ctx_dim = (int)heads * in->v_dim;
	if (f->attention == ATTENTION_MLA && kv != heads) /* kv_b_proj gives every head its own k and v */
		return err_set(e, "%s: latent attention has a key/value head per head, not %ld for %ld heads", c->path,
			       kv, heads);

	/* Scores: q·k × scale (query_pre_attn_scalar^-0.5 where the config has it), then soft-capping. */
	double qscalar, softcap;
	if (config_float_or(c, f, SET_QUERY_SCALAR, head_dim, &qscalar, e) < 0 ||
	    config_float_or(c, f, SET_SOFTCAP, 0, &softcap, e) < 0)
		return -1;
	if (!(qscalar > 0) || softcap < 0)
		return err_set(e, "%s: query_pre_attn_scalar must be positive and the soft-cap not negative", c->path);
	a->attn_scale = m->scale_attn_weights ? (float)pow(qscalar, -0.5) : 1.0f;
	a->softcap = (float)softcap;
	double clip;
	if (config_float_or(c, f, SET_CLIP_QKV, 0, &clip, e) < 0)
		return -1;
	if (!(clip >= 0))
		return err_set(e, "%s: clip_qkv must not be negative", c->path);
	a->clip_qkv = (float)clip;
	a->embed_scale = f->embed_scale == EMBED_SCALE_SQRT_HIDDEN ? (float)sqrt((double)hidden) : 0.0f;
	/* Granite: multipliers from config.json; the attention one replaces the 1/sqrt(head_dim) above */
	static const enum family_setting mults[] = {SET_EMBEDDING_MULTIPLIER, SET_ATTENTION_MULTIPLIER,
						    SET_RESIDUAL_MULTIPLIER};
	float *mult_of[] = {&a->embed_scale, &a->attn_scale, &a->residual_scale};
	for (int i = 0; i < 3; i++) {
		double v;
		if (!f->n_keys[mults[i]])
			continue;
		if (hfconfig_float(c, f, mults[i], &v, e) < 0)
			return -1;
		if (!(v > 0 && v < 1e6))
			return err_set(e, "%s: %s %g is not a positive multiplier", c->path, family_setting_key(mults[i]), v);
		*mult_of[i] = (float)v;
	}
	if (f->n_keys[SET_ALIBI]) { /* Falcon: ALiBi instead of rotary when config.json's alibi is true */
		bool alibi;
		if (hfconfig_bool(c, f, SET_ALIBI, &alibi, e) < 0)
			return -1;
		if (alibi)
			m->fam.position = POS_ALIBI;
	}
	if (f->attention == ATTENTION_MLA && config_mla_mscale(m, c, e) < 0)
		return -1;
	a->rotary = f->position == POS_ROTARY;
	in->rotary = a->rotary || f->n_names[WEIGHT_Q_NORM_W]; /* q/k transformed after projection */
	if (a->rotary && (config_rotary(m, c, e) < 0 || config_nope_layers(m, c, e) < 0))
		return -1;
	if (f->position == POS_RELATIVE && config_relative(m, c, e) < 0)
		return -1;
	if (moe_config_read(m, c, e) < 0) /* mlp moe: experts, top-k, which layers route (moe.c) */
		return -1;
	if (config_window_layers(m, c, e) < 0 || config_chunk_layers(m, c, e) < 0 || config_encdec(m, c, e) < 0)
		return -1;
	return config_llama4_terms(m, c, e);
}

void model_config_free(struct model *m)
{
	rope_free(&m->arch.rope_global);
	rope_free(&m->arch.rope_local);
	free(m->arch.layer_sliding);
	m->arch.layer_sliding = NULL;
	free(m->arch.layer_nope);
	m->arch.layer_nope = NULL;
	free(m->arch.layer_chunked);
	m->arch.layer_chunked = NULL;
}
