/* family.c -- load a family description (YAML) into a struct family (see family.h). */
#include "engine/family.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/datadir.h"

static const char *const family_role_keys[WEIGHT_COUNT] = {
#define FAMILY_ROLE_KEY(id, key) key,
	FAMILY_ROLES(FAMILY_ROLE_KEY)
#undef FAMILY_ROLE_KEY
};

static const char *const family_setting_keys[SET_COUNT] = {
#define FAMILY_SETTING_KEY(id, key) key,
	FAMILY_SETTINGS(FAMILY_SETTING_KEY)
#undef FAMILY_SETTING_KEY
};

const char *family_role_key(enum family_role role)
{
	return role >= 0 && role < WEIGHT_COUNT ? family_role_keys[role] : "?";
}

const char *family_setting_key(enum family_setting s)
{
	return s >= 0 && s < SET_COUNT ? family_setting_keys[s] : "?";
}

/* Helpers over a loaded libyaml document. */
struct fam_doc {
	yaml_document_t doc;
	const char *path;
	struct err *e;
};

static int fam_fail(struct fam_doc *d, yaml_node_t *node, const char *fmt, const char *arg)
{
	char msg[256];
	snprintf(msg, sizeof msg, fmt, arg);
	if (node)
		return err_set(d->e, "%s:%zu:%zu: %s", d->path, node->start_mark.line + 1,
			       node->start_mark.column + 1, msg);
	return err_set(d->e, "%s: %s", d->path, msg);
}

static const char *fam_scalar(yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* Read a scalar or a sequence of scalars into OUT (at most FAMILY_MAX_ALTS strings). */
static int fam_strings(struct fam_doc *d, yaml_node_t *n, char **out, int *count)
{
	for (int i = 0; i < *count; i++) { /* a key given twice: the last one wins */
		free(out[i]);
		out[i] = NULL;
	}
	*count = 0;
	if (n->type == YAML_SCALAR_NODE) {
		out[0] = strdup(fam_scalar(n));
		*count = 1;
		return out[0] ? 0 : err_set(d->e, "out of memory");
	}
	if (n->type != YAML_SEQUENCE_NODE)
		return fam_fail(d, n, "expected a string or a list of strings%s", "");
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(&d->doc, *it);
		if (!fam_scalar(item))
			return fam_fail(d, item, "expected a string%s", "");
		if (*count == FAMILY_MAX_ALTS)
			return fam_fail(d, item, "at most 4 alternatives%s", "");
		out[*count] = strdup(fam_scalar(item));
		if (!out[(*count)++])
			return err_set(d->e, "out of memory");
	}
	return 0;
}

static int fam_bool(struct fam_doc *d, yaml_node_t *n, bool *out)
{
	const char *s = fam_scalar(n);
	if (s && (strcmp(s, "true") == 0 || strcmp(s, "yes") == 0))
		*out = true;
	else if (s && (strcmp(s, "false") == 0 || strcmp(s, "no") == 0))
		*out = false;
	else
		return fam_fail(d, n, "expected true or false%s", "");
	return 0;
}

/* Match scalar N against CHOICES[0..n), storing the index. */
static int fam_choice(struct fam_doc *d, yaml_node_t *n, const char *const *choices, int n_choices, int *out,
		      const char *what)
{
	const char *s = fam_scalar(n);
	for (int i = 0; s && i < n_choices; i++) {
		if (strcmp(s, choices[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	return fam_fail(d, n, "unknown %s", what);
}

static int fam_roles(struct fam_doc *d, yaml_node_t *map, struct family *f)
{
	if (map->type != YAML_MAPPING_NODE)
		return fam_fail(d, map, "'tensors' must be a mapping of role: name%s", "");
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&d->doc, p->key), *v = yaml_document_get_node(&d->doc, p->value);
		const char *key = fam_scalar(k);
		int role = -1;
		for (int r = 0; key && r < WEIGHT_COUNT; r++)
			if (strcmp(key, family_role_keys[r]) == 0)
				role = r;
		if (role < 0)
			return fam_fail(d, k, "unknown tensor role '%s'", key ? key : "?");
		if (fam_strings(d, v, f->names[role], &f->n_names[role]) < 0)
			return -1;
	}
	return 0;
}

static int fam_settings(struct fam_doc *d, yaml_node_t *map, struct family *f, bool defaults)
{
	if (map->type != YAML_MAPPING_NODE)
		return fam_fail(d, map, "expected a mapping%s", "");
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&d->doc, p->key), *v = yaml_document_get_node(&d->doc, p->value);
		const char *key = fam_scalar(k);
		if (defaults && key && strcmp(key, "intermediate_per_hidden") == 0) {
			const char *s = fam_scalar(v);
			f->intermediate_per_hidden = s ? atoi(s) : 0;
			if (f->intermediate_per_hidden <= 0 || f->intermediate_per_hidden > 64)
				return fam_fail(d, v, "intermediate_per_hidden must be 1..64%s", "");
			continue;
		}
		int s = -1;
		for (int i = 0; key && i < SET_COUNT; i++)
			if (strcmp(key, family_setting_keys[i]) == 0)
				s = i;
		if (s < 0)
			return fam_fail(d, k, "unknown setting '%s'", key ? key : "?");
		if (defaults) {
			if (!fam_scalar(v))
				return fam_fail(d, v, "a default must be a single value%s", "");
			free(f->defaults[s]);
			f->defaults[s] = strdup(fam_scalar(v));
		} else if (fam_strings(d, v, f->keys[s], &f->n_keys[s]) < 0) {
			return -1;
		}
	}
	return 0;
}

/* optional: [role, ...]: tensors that some layers lack (that norm is then the identity). */
static int fam_optional(struct fam_doc *d, yaml_node_t *seq, struct family *f)
{
	if (seq->type != YAML_SEQUENCE_NODE)
		return fam_fail(d, seq, "'optional' must be a list of tensor roles%s", "");
	for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(&d->doc, *it);
		const char *key = fam_scalar(item);
		int role = -1;
		for (int r = 0; key && r < WEIGHT_COUNT; r++)
			if (strcmp(key, family_role_keys[r]) == 0)
				role = r;
		if (role < 0)
			return fam_fail(d, item, "unknown tensor role '%s'", key ? key : "?");
		f->optional[role] = true;
	}
	return 0;
}

/* conditions: {role: setting}: the role's tensor exists only when the boolean setting is true. */
static int fam_conditions(struct fam_doc *d, yaml_node_t *map, struct family *f)
{
	if (map->type != YAML_MAPPING_NODE)
		return fam_fail(d, map, "'conditions' must be a mapping of role: setting%s", "");
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&d->doc, p->key), *v = yaml_document_get_node(&d->doc, p->value);
		const char *key = fam_scalar(k), *val = fam_scalar(v);
		int role = -1, set = -1;
		for (int r = 0; key && r < WEIGHT_COUNT; r++)
			if (strcmp(key, family_role_keys[r]) == 0)
				role = r;
		for (int i = 0; val && i < SET_COUNT; i++)
			if (strcmp(val, family_setting_keys[i]) == 0)
				set = i;
		if (role < 0)
			return fam_fail(d, k, "unknown tensor role '%s'", key ? key : "?");
		if (set < 0)
			return fam_fail(d, v, "unknown setting '%s'", val ? val : "?");
		if (f->n_conditions == FAMILY_MAX_RULES * 2)
			return fam_fail(d, k, "too many conditions%s", "");
		f->cond_role[f->n_conditions] = role;
		f->cond_setting[f->n_conditions++] = set;
	}
	return 0;
}

/* refuse: [{key: K, value: V, why: TEXT}]: config.json values the engine cannot run exactly. */
static int fam_refusals(struct fam_doc *d, yaml_node_t *seq, struct family *f)
{
	if (seq->type != YAML_SEQUENCE_NODE)
		return fam_fail(d, seq, "'refuse' must be a list of {key, value, why}%s", "");
	for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
		yaml_node_t *m = yaml_document_get_node(&d->doc, *it);
		if (!m || m->type != YAML_MAPPING_NODE)
			return fam_fail(d, m, "expected {key, value, why}%s", "");
		if (f->n_refusals == FAMILY_MAX_RULES)
			return fam_fail(d, m, "too many refusals%s", "");
		int i = f->n_refusals++;
		for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
			const char *key = fam_scalar(yaml_document_get_node(&d->doc, p->key));
			yaml_node_t *v = yaml_document_get_node(&d->doc, p->value);
			char **slot = !key ? NULL
				      : strcmp(key, "key") == 0 ? &f->refuse_key[i]
				      : strcmp(key, "value") == 0 ? &f->refuse_value[i]
				      : strcmp(key, "why") == 0 ? &f->refuse_why[i] : NULL;
			if (!slot || !fam_scalar(v))
				return fam_fail(d, v, "expected key, value and why as strings%s", "");
			free(*slot);
			if (!(*slot = strdup(fam_scalar(v))))
				return err_set(d->e, "out of memory");
		}
		if (!f->refuse_key[i] || !f->refuse_value[i] || !f->refuse_why[i])
			return fam_fail(d, m, "a refusal needs key, value and why%s", "");
	}
	return 0;
}

static int fam_top(struct fam_doc *d, struct family *f)
{
	yaml_node_t *root = yaml_document_get_root_node(&d->doc);
	if (!root || root->type != YAML_MAPPING_NODE)
		return fam_fail(d, root, "a family description must be a YAML mapping%s", "");
	static const char *const tokenizers[] = {"wordpiece", "bpe", "json", "roberta", "xlm-roberta", "albert", "deberta-v2"};
	static const enum tokenizer_kind tokenizer_kinds[] = {TOKENIZER_WORDPIECE, TOKENIZER_BPE, TOKENIZER_JSON,
		TOKENIZER_ROBERTA, TOKENIZER_XLMR, TOKENIZER_ALBERT, TOKENIZER_DEBERTA_V2};
	static const char *const blocks[] = {"post_ln", "pre_ln"};
	static const char *const layouts[] = {"out_in", "in_out"};
	static const char *const norms[] = {"layernorm", "rmsnorm"};
	static const char *const positions[] = {"learned", "rotary", "relative"};
	static const char *const mlps[] = {"plain", "gated"};
	static const char *const qkv_layouts[] = {"concat", "per_head"};
	static const char *const windows[] = {"causal", "centered"};
	static const char *const embed_scales[] = {"none", "sqrt_hidden"};
	f->norm_offset = 0;
	f->final_norm_in_trace = true;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&d->doc, p->key), *v = yaml_document_get_node(&d->doc, p->value);
		const char *key = fam_scalar(k);
		int choice = 0, rc = 0;
		if (!key) {
			rc = fam_fail(d, k, "keys must be strings%s", "");
		} else if (strcmp(key, "name") == 0) {
			if (!fam_scalar(v))
				return fam_fail(d, v, "name must be a string%s", "");
			snprintf(f->name, sizeof f->name, "%s", fam_scalar(v));
		} else if (strcmp(key, "config_section") == 0) {
			if (!fam_scalar(v))
				return fam_fail(d, v, "config_section must be a string%s", "");
			snprintf(f->config_section, sizeof f->config_section, "%s", fam_scalar(v));
		} else if (strcmp(key, "tokenizer") == 0) {
			rc = fam_choice(d, v, tokenizers, 7, &choice,
					"tokenizer (wordpiece, bpe, json, roberta, xlm-roberta, albert, deberta-v2)");
			f->tokenizer = tokenizer_kinds[choice];
		} else if (strcmp(key, "causal") == 0) {
			rc = fam_bool(d, v, &f->causal);
		} else if (strcmp(key, "block") == 0) {
			rc = fam_choice(d, v, blocks, 2, &choice, "block (post_ln, pre_ln)");
			f->block = choice == 0 ? BLOCK_POST_LN : BLOCK_PRE_LN;
		} else if (strcmp(key, "linear_layout") == 0) {
			rc = fam_choice(d, v, layouts, 2, &choice, "linear_layout (out_in, in_out)");
			f->linear = choice == 0 ? LINEAR_OUT_IN : LINEAR_IN_OUT;
		} else if (strcmp(key, "fused_qkv") == 0) {
			rc = fam_bool(d, v, &f->fused_qkv);
		} else if (strcmp(key, "norm") == 0) {
			rc = fam_choice(d, v, norms, 2, &choice, "norm (layernorm, rmsnorm)");
			f->norm = choice ? NORM_RMS : NORM_LAYER;
		} else if (strcmp(key, "norm_offset") == 0) {
			const char *x = fam_scalar(v);
			if (!x || (strcmp(x, "0") && strcmp(x, "1")))
				rc = fam_fail(d, v, "norm_offset must be 0 or 1%s", "");
			else
				f->norm_offset = (float)atoi(x);
		} else if (strcmp(key, "position") == 0) {
			rc = fam_choice(d, v, positions, 3, &choice, "position (learned, rotary, relative)");
			f->position = choice == 2 ? POS_RELATIVE : choice ? POS_ROTARY : POS_LEARNED;
		} else if (strcmp(key, "mlp") == 0) {
			rc = fam_choice(d, v, mlps, 2, &choice, "mlp (plain, gated)");
			f->mlp = choice ? MLP_GATED : MLP_PLAIN;
		} else if (strcmp(key, "qkv_layout") == 0) {
			rc = fam_choice(d, v, qkv_layouts, 2, &choice, "qkv_layout (concat, per_head)");
			f->qkv_layout = choice ? QKV_PER_HEAD : QKV_CONCAT;
		} else if (strcmp(key, "window") == 0) {
			rc = fam_choice(d, v, windows, 2, &choice, "window (causal, centered)");
			f->window = choice ? WINDOW_CENTERED : WINDOW_CAUSAL;
		} else if (strcmp(key, "embed_scale") == 0) {
			rc = fam_choice(d, v, embed_scales, 2, &choice, "embed_scale (none, sqrt_hidden)");
			f->embed_scale_sqrt_hidden = choice == 1;
		} else if (strcmp(key, "global_offset") == 0) {
			const char *x = fam_scalar(v);
			if (!x || (strcmp(x, "0") && strcmp(x, "1")))
				rc = fam_fail(d, v, "global_offset must be 0 or 1%s", "");
			else
				f->global_offset = atoi(x);
		} else if (strcmp(key, "rope_local_unscaled") == 0) {
			rc = fam_bool(d, v, &f->rope_local_unscaled);
		} else if (strcmp(key, "positions_after_pad") == 0) {
			rc = fam_bool(d, v, &f->positions_after_pad);
		} else if (strcmp(key, "final_norm_in_trace") == 0) {
			rc = fam_bool(d, v, &f->final_norm_in_trace);
		} else if (strcmp(key, "optional") == 0) {
			rc = fam_optional(d, v, f);
		} else if (strcmp(key, "conditions") == 0) {
			rc = fam_conditions(d, v, f);
		} else if (strcmp(key, "refuse") == 0) {
			rc = fam_refusals(d, v, f);
		} else if (strcmp(key, "prefixes") == 0) {
			rc = fam_strings(d, v, f->prefixes, &f->n_prefixes);
		} else if (strcmp(key, "config") == 0) {
			rc = fam_settings(d, v, f, false);
		} else if (strcmp(key, "defaults") == 0) {
			rc = fam_settings(d, v, f, true);
		} else if (strcmp(key, "tensors") == 0) {
			rc = fam_roles(d, v, f);
		} else {
			rc = fam_fail(d, k, "unknown key '%s'", key);
		}
		if (rc < 0)
			return -1;
	}
	/* Structural requirements, so the engine can trust the description. */
	static const enum family_role always[] = {WEIGHT_TOKEN_EMB, WEIGHT_ATTN_OUT_W, WEIGHT_LN1_W, WEIGHT_LN2_W,
						  WEIGHT_MLP_DOWN_W};
	for (size_t i = 0; i < sizeof always / sizeof always[0]; i++)
		if (!f->n_names[always[i]])
			return fam_fail(d, NULL, "tensors: missing role '%s'", family_role_keys[always[i]]);
	if (f->position == POS_LEARNED && !f->n_names[WEIGHT_POS_EMB])
		return fam_fail(d, NULL, "tensors: learned positions need '%s'", family_role_keys[WEIGHT_POS_EMB]);
	if (f->mlp == MLP_GATED ? !f->n_names[WEIGHT_MLP_GATE_UP_W] && (!f->n_names[WEIGHT_MLP_GATE_W] ||
									 !f->n_names[WEIGHT_MLP_UP_W])
				: !f->n_names[WEIGHT_MLP_UP_W])
		return fam_fail(d, NULL, "tensors: %s", f->mlp == MLP_GATED ? "a gated MLP needs mlp_gate_up_weight, or "
									      "mlp_gate_weight and mlp_up_weight"
									    : "needs mlp_up_weight");
	if (f->n_names[WEIGHT_Q_NORM_W] != f->n_names[WEIGHT_K_NORM_W] ? 1 : 0)
		return fam_fail(d, NULL, "tensors: q_norm_weight and k_norm_weight go together%s", "");
	if (f->fused_qkv ? !f->n_names[WEIGHT_QKV_W]
			 : (!f->n_names[WEIGHT_Q_W] || !f->n_names[WEIGHT_K_W] || !f->n_names[WEIGHT_V_W]))
		return fam_fail(d, NULL, "tensors: %s", f->fused_qkv ? "fused_qkv needs qkv_weight"
								     : "needs q_weight, k_weight and v_weight");
	static const enum family_setting needed[] = {SET_LAYERS, SET_HEADS, SET_HIDDEN, SET_MAX_POSITIONS,
						     SET_VOCAB_SIZE};
	for (size_t i = 0; i < sizeof needed / sizeof needed[0]; i++)
		if (!f->n_keys[needed[i]])
			return fam_fail(d, NULL, "config: missing '%s'", family_setting_keys[needed[i]]);
	if (!f->name[0])
		return fam_fail(d, NULL, "missing 'name'%s", "");
	if (f->n_prefixes == 0) {
		f->prefixes[0] = strdup("");
		f->n_prefixes = 1;
	}
	return 0;
}

int family_load_file(const char *path, struct family *f, struct err *e)
{
	memset(f, 0, sizeof *f);
	snprintf(f->path, sizeof f->path, "%s", path);
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return err_set(e, "%s: cannot open family description", path);
	yaml_parser_t parser;
	struct fam_doc d = {.path = path, .e = e};
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, fp);
	int rc;
	if (!yaml_parser_load(&parser, &d.doc)) {
		rc = err_set(e, "%s:%zu:%zu: %s", path, parser.problem_mark.line + 1, parser.problem_mark.column + 1,
			     parser.problem ? parser.problem : "invalid YAML");
		yaml_parser_delete(&parser);
		fclose(fp);
		family_free(f);
		return rc;
	}
	rc = fam_top(&d, f);
	yaml_document_delete(&d.doc);
	yaml_parser_delete(&parser);
	fclose(fp);
	if (rc < 0)
		family_free(f);
	return rc;
}

int family_load(const char *model_type, struct family *f, struct err *e)
{
	for (const char *c = model_type; *c; c++)
		if (!islower((unsigned char)*c) && !isdigit((unsigned char)*c) && *c != '_' && *c != '-')
			return err_set(e, "model_type '%.40s' is not a family name", model_type);
	if (!*model_type || strlen(model_type) > 40)
		return err_set(e, "model_type '%.40s' is not a family name", model_type);
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/models/families/%s.yaml", datadir_path(), model_type);
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return err_set(e, "unknown model family '%s' (no %s)", model_type, path);
	fclose(fp);
	return family_load_file(path, f, e);
}

void family_free(struct family *f)
{
	for (int i = 0; i < FAMILY_MAX_ALTS; i++)
		free(f->prefixes[i]);
	for (int r = 0; r < WEIGHT_COUNT; r++)
		for (int i = 0; i < FAMILY_MAX_ALTS; i++)
			free(f->names[r][i]);
	for (int s = 0; s < SET_COUNT; s++) {
		for (int i = 0; i < FAMILY_MAX_ALTS; i++)
			free(f->keys[s][i]);
		free(f->defaults[s]);
	}
	for (int i = 0; i < FAMILY_MAX_RULES; i++) {
		free(f->refuse_key[i]);
		free(f->refuse_value[i]);
		free(f->refuse_why[i]);
	}
	memset(f, 0, sizeof *f);
}
