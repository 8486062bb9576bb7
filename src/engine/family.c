/* family.c -- load a family description (YAML) into a struct family (see family.h): the top-level
 * keys from one table of rows (fam_rows), the tensor roles and config settings from family.h's
 * lists, then the structural checks the engine relies on. */
#include "engine/family.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/datadir.h"
#include "engine/moe.h"

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

/* weightless: [role, ...]: norms that are there but carry no tensor (gain 1, no bias): OLMo's
 * parameter-free LayerNorms. Only the gains of norms may be listed. */
static int fam_weightless(struct fam_doc *d, yaml_node_t *seq, struct family *f)
{
	static const enum family_role norms[] = {WEIGHT_EMB_LN_W, WEIGHT_LN1_W, WEIGHT_LN2_W, WEIGHT_FINAL_LN_W,
						 WEIGHT_POST_ATTN_LN_W, WEIGHT_POST_MLP_LN_W};
	if (seq->type != YAML_SEQUENCE_NODE)
		return fam_fail(d, seq, "'weightless' must be a list of norm weight roles%s", "");
	for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(&d->doc, *it);
		const char *key = fam_scalar(item);
		int role = -1;
		for (size_t r = 0; key && r < sizeof norms / sizeof norms[0]; r++)
			if (strcmp(key, family_role_keys[norms[r]]) == 0)
				role = norms[r];
		if (role < 0)
			return fam_fail(d, item, "'%s' is not the weight of a norm", key ? key : "?");
		f->weightless[role] = true;
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

static int fam_config(struct fam_doc *d, yaml_node_t *map, struct family *f)
{
	return fam_settings(d, map, f, false);
}

static int fam_defaults(struct fam_doc *d, yaml_node_t *map, struct family *f)
{
	return fam_settings(d, map, f, true);
}

/* The allowed values of a switch: its YAML spelling and the value stored. */
struct fam_value {
	const char *name;
	int value;
};

/* Each list in the order the error message names them; a NULL name ends it. */
static const struct fam_value fam_tokenizers[] = {
	{"wordpiece", TOKENIZER_WORDPIECE}, {"bpe", TOKENIZER_BPE}, {"json", TOKENIZER_JSON},
	{"roberta", TOKENIZER_ROBERTA}, {"xlm-roberta", TOKENIZER_XLMR}, {"albert", TOKENIZER_ALBERT},
	{"deberta-v2", TOKENIZER_DEBERTA_V2}, {"t5", TOKENIZER_T5}, {"mbart", TOKENIZER_MBART},
	{"marian", TOKENIZER_MARIAN}, {"nllb", TOKENIZER_NLLB}, {"pegasus", TOKENIZER_PEGASUS}, {NULL, 0}};
static const struct fam_value fam_blocks[] = {
	{"post_ln", BLOCK_POST_LN}, {"pre_ln", BLOCK_PRE_LN}, {"parallel_one_norm", BLOCK_PARALLEL_ONE_NORM}, {NULL, 0}};
static const struct fam_value fam_layouts[] = {{"out_in", LINEAR_OUT_IN}, {"in_out", LINEAR_IN_OUT}, {NULL, 0}};
static const struct fam_value fam_norms[] = {{"layernorm", NORM_LAYER}, {"rmsnorm", NORM_RMS}, {NULL, 0}};
static const struct fam_value fam_positions[] = {
	{"learned", POS_LEARNED}, {"rotary", POS_ROTARY}, {"relative", POS_RELATIVE}, {"alibi", POS_ALIBI}, {"buckets", POS_BUCKETS}, {"sinusoid", POS_SINUSOID}, {NULL, 0}};
static const struct fam_value fam_mlps[] = {{"plain", MLP_PLAIN}, {"gated", MLP_GATED}, {"moe", MLP_MOE}, {NULL, 0}};
static const struct fam_value fam_moe_routers[] = {{"softmax_topk", MOE_ROUTER_SOFTMAX_TOPK},
						   {"sigmoid_groups", MOE_ROUTER_SIGMOID_GROUPS},
						   {"topk_softmax", MOE_ROUTER_TOPK_SOFTMAX},
						   {"sigmoid_input", MOE_ROUTER_SIGMOID_INPUT}, {NULL, 0}};
static const struct fam_value fam_moe_experts[] = {{"each", MOE_EXPERTS_EACH}, {"fused_mxfp4", MOE_EXPERTS_FUSED_MXFP4},
						   {"fused", MOE_EXPERTS_FUSED}, {NULL, 0}};
static const struct fam_value fam_qkv_layouts[] = {{"concat", QKV_CONCAT}, {"per_head", QKV_PER_HEAD},
						  {"grouped", QKV_GROUPED}, {NULL, 0}};
static const struct fam_value fam_windows[] = {{"causal", WINDOW_CAUSAL}, {"centered", WINDOW_CENTERED}, {NULL, 0}};
static const struct fam_value fam_embed_scales[] = {
	{"none", EMBED_SCALE_NONE}, {"sqrt_hidden", EMBED_SCALE_SQRT_HIDDEN}, {NULL, 0}};
static const struct fam_value fam_rope_styles[] = {
	{"half", ROPE_STYLE_HALF}, {"interleaved", ROPE_STYLE_INTERLEAVED}, {NULL, 0}};
static const struct fam_value fam_qk_norms[] = {{"per_head", QK_NORM_PER_HEAD}, {"whole", QK_NORM_WHOLE},
					       {"each_head", QK_NORM_EACH_HEAD}, {NULL, 0}};
static const struct fam_value fam_attentions[] = {{"standard", ATTENTION_STANDARD}, {"mla", ATTENTION_MLA}, {NULL, 0}};
static const struct fam_value fam_shifts[] = {{"start", SHIFT_START}, {"last_label", SHIFT_LAST_LABEL}, {NULL, 0}};
static const struct fam_value fam_zero_one[] = {{"0", 0}, {"1", 1}, {NULL, 0}};
static const struct fam_value fam_position_offsets[] = {{"0", 0}, {"2", 2}, {NULL, 0}}; /* OPT's is 2 */

/* How a top-level key's value is read and where it goes. */
enum fam_kind {
	FAM_STRING,  /* a scalar, copied into a char array */
	FAM_BOOL,    /* true/yes or false/no */
	FAM_ENUM,    /* one of the row's values, by name ("unknown KEY (a, b)") */
	FAM_INT,     /* one of the row's values, written as a number ("KEY must be 0 or 1") */
	FAM_FLOAT,   /* the same, stored as a float */
	FAM_LIST,    /* a string or a list of strings (at most FAMILY_MAX_ALTS) and their count */
	FAM_SECTION, /* a nested mapping or list with a reader of its own */
};

struct fam_row {
	const char *key;
	enum fam_kind kind;
	size_t offset;                  /* the field in struct family */
	size_t size;                    /* FAM_STRING: the array's size */
	size_t count;                   /* FAM_LIST: offset of the int count */
	const struct fam_value *values; /* FAM_ENUM, FAM_INT, FAM_FLOAT */
	int initial;                    /* FAM_BOOL, FAM_ENUM, FAM_INT, FAM_FLOAT: the value when the key is absent */
	int (*read)(struct fam_doc *d, yaml_node_t *v, struct family *f); /* FAM_SECTION */
};

/* offsetof FIELD, refused at compile time unless the field is as wide as TYPE (an enum field is
 * stored as an int). */
#define FAM_FIELD(field, type)                                                                             \
	(offsetof(struct family, field) +                                                                  \
	 0 * sizeof(char[sizeof(((struct family *)0)->field) == sizeof(type) ? 1 : -1]))
#define FAM_STRING_ROW(key, field)                                                                         \
	{key, FAM_STRING, offsetof(struct family, field), sizeof(((struct family *)0)->field), 0, NULL, 0, NULL}
#define FAM_BOOL_ROW(key, field, initial) {key, FAM_BOOL, FAM_FIELD(field, bool), 0, 0, NULL, initial, NULL}
#define FAM_ENUM_ROW(key, field, values) {key, FAM_ENUM, FAM_FIELD(field, int), 0, 0, values, 0, NULL}
#define FAM_INT_ROW(key, field, values) {key, FAM_INT, FAM_FIELD(field, int), 0, 0, values, 0, NULL}
#define FAM_FLOAT_ROW(key, field, values) {key, FAM_FLOAT, FAM_FIELD(field, float), 0, 0, values, 0, NULL}
#define FAM_LIST_ROW(key, field, n)                                                                        \
	{key, FAM_LIST, offsetof(struct family, field), 0, FAM_FIELD(n, int), NULL, 0, NULL}
#define FAM_SECTION_ROW(key, read) {key, FAM_SECTION, 0, 0, 0, NULL, 0, read}

/* Every top-level key of a family description. A new switch is one row here and its field in
 * struct family (an enum switch: its values list above and its enum in family.h). */
static const struct fam_row fam_rows[] = {
	FAM_STRING_ROW("name", name),
	FAM_STRING_ROW("config_section", config_section),
	FAM_ENUM_ROW("tokenizer", tokenizer, fam_tokenizers),
	FAM_BOOL_ROW("causal", causal, false),
	FAM_ENUM_ROW("block", block, fam_blocks),
	FAM_ENUM_ROW("linear_layout", linear, fam_layouts),
	FAM_BOOL_ROW("fused_qkv", fused_qkv, false),
	FAM_ENUM_ROW("norm", norm, fam_norms),
	FAM_FLOAT_ROW("norm_offset", norm_offset, fam_zero_one),
	FAM_ENUM_ROW("position", position, fam_positions),
	FAM_ENUM_ROW("mlp", mlp, fam_mlps),
	FAM_ENUM_ROW("qkv_layout", qkv_layout, fam_qkv_layouts),
	FAM_ENUM_ROW("window", window, fam_windows),
	FAM_ENUM_ROW("embed_scale", embed_scale, fam_embed_scales),
	FAM_ENUM_ROW("rope_style", rope_style, fam_rope_styles),
	FAM_ENUM_ROW("qk_norm", qk_norm, fam_qk_norms),
	FAM_ENUM_ROW("attention", attention, fam_attentions),
	FAM_INT_ROW("global_offset", global_offset, fam_zero_one),
	FAM_BOOL_ROW("rope_local_unscaled", rope_local_unscaled, false),
	FAM_BOOL_ROW("positions_after_pad", positions_after_pad, false),
	FAM_INT_ROW("position_offset", position_offset, fam_position_offsets),
	FAM_BOOL_ROW("final_norm_in_trace", final_norm_in_trace, true),
	FAM_BOOL_ROW("qk_l2_norm", qk_l2_norm, false),
	FAM_BOOL_ROW("no_rope_empty_unset", no_rope_empty_unset, false),
	FAM_BOOL_ROW("alibi_twice", alibi_twice, false),
	FAM_ENUM_ROW("moe_router", moe_router, fam_moe_routers),
	FAM_ENUM_ROW("moe_experts", moe_experts, fam_moe_experts),
	FAM_BOOL_ROW("encoder_decoder", encoder_decoder, false),
	FAM_ENUM_ROW("decoder_shift", shift, fam_shifts),
	FAM_SECTION_ROW("optional", fam_optional),
	FAM_SECTION_ROW("weightless", fam_weightless),
	FAM_SECTION_ROW("conditions", fam_conditions),
	FAM_SECTION_ROW("refuse", fam_refusals),
	FAM_LIST_ROW("prefixes", prefixes, n_prefixes),
	FAM_SECTION_ROW("config", fam_config),
	FAM_SECTION_ROW("defaults", fam_defaults),
	FAM_SECTION_ROW("tensors", fam_roles),
};

static void fam_store(struct family *f, const struct fam_row *r, int value)
{
	char *field = (char *)f + r->offset;
	if (r->kind == FAM_BOOL)
		*(bool *)field = value != 0;
	else if (r->kind == FAM_FLOAT)
		*(float *)field = (float)value;
	else /* FAM_ENUM, FAM_INT: an int-wide field (FAM_FIELD checked it) */
		memcpy(field, &value, sizeof value);
}

/* A FAM_ENUM, FAM_INT or FAM_FLOAT value: one of the row's values, else the row's message. */
static int fam_value(struct fam_doc *d, yaml_node_t *v, struct family *f, const struct fam_row *r)
{
	const char *s = fam_scalar(v);
	char allowed[192] = "";
	for (const struct fam_value *a = r->values; a->name; a++) {
		if (s && strcmp(s, a->name) == 0) {
			fam_store(f, r, a->value);
			return 0;
		}
		size_t used = strlen(allowed);
		snprintf(allowed + used, sizeof allowed - used, "%s%s", used == 0 ? "" : r->kind == FAM_ENUM ? ", " : " or ",
			 a->name);
	}
	char what[256];
	if (r->kind == FAM_ENUM) {
		snprintf(what, sizeof what, "%s (%s)", r->key, allowed);
		return fam_fail(d, v, "unknown %s", what);
	}
	snprintf(what, sizeof what, "%s must be %s", r->key, allowed);
	return fam_fail(d, v, "%s", what);
}

static int fam_row(struct fam_doc *d, yaml_node_t *v, struct family *f, const struct fam_row *r)
{
	char *field = (char *)f + r->offset;
	bool b = false; /* set by fam_bool when it succeeds (GCC -O2 cannot see that) */
	switch (r->kind) {
	case FAM_STRING:
		if (!fam_scalar(v))
			return fam_fail(d, v, "%s must be a string", r->key);
		snprintf(field, r->size, "%s", fam_scalar(v));
		return 0;
	case FAM_BOOL:
		if (fam_bool(d, v, &b) < 0)
			return -1;
		fam_store(f, r, b);
		return 0;
	case FAM_ENUM:
	case FAM_INT:
	case FAM_FLOAT:
		return fam_value(d, v, f, r);
	case FAM_LIST:
		return fam_strings(d, v, (char **)field, (int *)((char *)f + r->count));
	case FAM_SECTION:
		return r->read(d, v, f);
	}
	return -1;
}

/* A block that normalises the outputs of attention and MLP instead of their inputs (OLMo 2) needs no
 * norm before them. */
static bool fam_post_normed(const struct family *f, enum family_role role)
{
	return (role == WEIGHT_LN1_W && f->n_names[WEIGHT_POST_ATTN_LN_W]) ||
	       (role == WEIGHT_LN2_W && f->n_names[WEIGHT_POST_MLP_LN_W]);
}

static int fam_top(struct fam_doc *d, struct family *f)
{
	yaml_node_t *root = yaml_document_get_root_node(&d->doc);
	if (!root || root->type != YAML_MAPPING_NODE)
		return fam_fail(d, root, "a family description must be a YAML mapping%s", "");
	const size_t n_rows = sizeof fam_rows / sizeof fam_rows[0];
	for (size_t i = 0; i < n_rows; i++)
		if (fam_rows[i].kind != FAM_STRING && fam_rows[i].kind != FAM_LIST && fam_rows[i].kind != FAM_SECTION)
			fam_store(f, &fam_rows[i], fam_rows[i].initial);
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&d->doc, p->key), *v = yaml_document_get_node(&d->doc, p->value);
		const char *key = fam_scalar(k);
		if (!key)
			return fam_fail(d, k, "keys must be strings%s", "");
		const struct fam_row *row = NULL;
		for (size_t i = 0; !row && i < n_rows; i++)
			if (strcmp(key, fam_rows[i].key) == 0)
				row = &fam_rows[i];
		if (!row)
			return fam_fail(d, k, "unknown key '%s'", key);
		if (fam_row(d, v, f, row) < 0)
			return -1;
	}
	/* Structural requirements, so the engine can trust the description. */
	static const enum family_role always[] = {WEIGHT_TOKEN_EMB, WEIGHT_ATTN_OUT_W, WEIGHT_LN1_W, WEIGHT_LN2_W,
						  WEIGHT_MLP_DOWN_W};
	for (size_t i = 0; i < sizeof always / sizeof always[0]; i++)
		if (!f->n_names[always[i]] && !f->weightless[always[i]] && !fam_post_normed(f, always[i]) &&
		    !(always[i] == WEIGHT_LN2_W && f->block == BLOCK_PARALLEL_ONE_NORM) &&
		    !(always[i] == WEIGHT_MLP_DOWN_W && f->mlp == MLP_MOE)) /* every layer may route (Mixtral) */
			return fam_fail(d, NULL, "tensors: missing role '%s'", family_role_keys[always[i]]);
	if (f->block == BLOCK_PARALLEL_ONE_NORM && (f->n_names[WEIGHT_LN2_W] || f->n_names[WEIGHT_LN2_B]))
		return fam_fail(d, NULL, "tensors: block parallel_one_norm feeds the MLP from ln1: no '%s'",
				family_role_keys[WEIGHT_LN2_W]);
	if (f->position == POS_BUCKETS && !f->n_names[WEIGHT_REL_BIAS])
		return fam_fail(d, NULL, "tensors: position buckets needs '%s'", family_role_keys[WEIGHT_REL_BIAS]);
	if (f->position == POS_LEARNED && !f->n_names[WEIGHT_POS_EMB])
		return fam_fail(d, NULL, "tensors: learned positions need '%s'", family_role_keys[WEIGHT_POS_EMB]);
	if (f->mlp == MLP_MOE && f->moe_experts == MOE_EXPERTS_FUSED_MXFP4 &&
	    (!f->n_names[WEIGHT_MOE_ROUTER_W] || !f->n_names[WEIGHT_MOE_GATE_UP_BLOCKS] ||
	     !f->n_names[WEIGHT_MOE_GATE_UP_SCALES] || !f->n_names[WEIGHT_MOE_DOWN_BLOCKS] ||
	     !f->n_names[WEIGHT_MOE_DOWN_SCALES]))
		return fam_fail(d, NULL, "tensors: moe_experts fused_mxfp4 needs moe_router_weight and "
				"moe_expert_gate_up/down_blocks/scales%s", "");
	if (f->mlp == MLP_MOE && f->moe_experts == MOE_EXPERTS_EACH &&
	    (!f->n_names[WEIGHT_MOE_ROUTER_W] || !f->n_names[WEIGHT_MOE_GATE_W] ||
				  !f->n_names[WEIGHT_MOE_UP_W] || !f->n_names[WEIGHT_MOE_DOWN_W]))
		return fam_fail(d, NULL, "tensors: mlp moe needs moe_router_weight and moe_expert_gate/up/down_weight%s", "");
	if (f->mlp == MLP_MOE && f->moe_experts == MOE_EXPERTS_FUSED &&
	    (!f->n_names[WEIGHT_MOE_ROUTER_W] || !f->n_names[WEIGHT_MOE_GATE_UP_W] || !f->n_names[WEIGHT_MOE_DOWN_W]))
		return fam_fail(d, NULL, "tensors: moe_experts fused needs moe_router_weight, moe_expert_gate_up_weight "
				"and moe_expert_down_weight%s", "");
	if (f->n_names[WEIGHT_MOE_SHARED_DOWN_W] &&
	    (!f->n_names[WEIGHT_MOE_SHARED_GATE_W] || !f->n_names[WEIGHT_MOE_SHARED_UP_W]))
		return fam_fail(d, NULL, "tensors: a shared expert needs moe_shared_gate/up/down_weight%s", "");
	if (f->mlp == MLP_MOE && f->n_names[WEIGHT_MLP_DOWN_W] && (!f->n_names[WEIGHT_MLP_GATE_W] || !f->n_names[WEIGHT_MLP_UP_W]))
		return fam_fail(d, NULL, "tensors: the dense layers of mlp moe are gated: mlp_gate_weight and "
				"mlp_up_weight%s", "");
	/* {E} (the expert index) names one tensor per expert: only the expert matrices have it */
	for (int r = 0; r < WEIGHT_COUNT; r++)
		for (int a = 0; a < f->n_names[r]; a++) {
			bool per_expert = f->moe_experts == MOE_EXPERTS_EACH &&
					  (r == WEIGHT_MOE_GATE_W || r == WEIGHT_MOE_UP_W || r == WEIGHT_MOE_DOWN_W);
			if ((strstr(f->names[r][a], "{E}") != NULL) != per_expert)
				return fam_fail(d, NULL, per_expert ? "tensors: %s: {E} is needed with moe_experts each"
								    : "tensors: %s: {E} is only for the expert matrices",
						family_role_keys[r]);
		}
	if (f->mlp != MLP_MOE && (f->mlp == MLP_GATED ? !f->n_names[WEIGHT_MLP_GATE_UP_W] && (!f->n_names[WEIGHT_MLP_GATE_W] ||
									 !f->n_names[WEIGHT_MLP_UP_W])
				: !f->n_names[WEIGHT_MLP_UP_W]))
		return fam_fail(d, NULL, "tensors: %s", f->mlp == MLP_GATED ? "a gated MLP needs mlp_gate_up_weight, or "
									      "mlp_gate_weight and mlp_up_weight"
									    : "needs mlp_up_weight");
	if (f->n_names[WEIGHT_Q_NORM_W] != f->n_names[WEIGHT_K_NORM_W] ? 1 : 0)
		return fam_fail(d, NULL, "tensors: q_norm_weight and k_norm_weight go together%s", "");
	/* {H} (the head index) names one tensor per head: only the q/k norm gains of qk_norm each_head
	 * have it, and there every name must, or a head would be bound to another head's gain. */
	for (int r = 0; r < WEIGHT_COUNT; r++)
		for (int a = 0; a < f->n_names[r]; a++) {
			bool per_head = f->qk_norm == QK_NORM_EACH_HEAD && (r == WEIGHT_Q_NORM_W || r == WEIGHT_K_NORM_W);
			if ((strstr(f->names[r][a], "{H}") != NULL) != per_head)
				return fam_fail(d, NULL, per_head ? "tensors: %s: {H} is needed with qk_norm each_head"
								  : "tensors: %s: {H} is only for qk_norm each_head",
						family_role_keys[r]);
		}
	if (f->qk_norm == QK_NORM_WHOLE && f->fused_qkv && f->qkv_layout != QKV_CONCAT)
		return fam_fail(d, NULL, "qk_norm: whole needs the q and k columns side by side (qkv_layout concat)%s", "");
	/* latent attention: q from q_weight (no q LoRA) or q_a/q_b, k and v from kv_a/kv_b (mla.c) */
	if (f->attention == ATTENTION_MLA &&
	    (!f->n_names[WEIGHT_KV_A_W] || !f->n_names[WEIGHT_KV_A_NORM_W] || !f->n_names[WEIGHT_KV_B_W] ||
	     (!f->n_names[WEIGHT_Q_W] && !(f->n_names[WEIGHT_Q_A_W] && f->n_names[WEIGHT_Q_A_NORM_W] && f->n_names[WEIGHT_Q_B_W]))))
		return fam_fail(d, NULL, "tensors: attention mla needs kv_a_weight, kv_a_norm_weight, kv_b_weight and "
				"q_weight or q_a_weight, q_a_norm_weight and q_b_weight%s", "");
	if (f->attention == ATTENTION_STANDARD &&
	    (f->fused_qkv ? !f->n_names[WEIGHT_QKV_W]
			 : (!f->n_names[WEIGHT_Q_W] || !f->n_names[WEIGHT_K_W] || !f->n_names[WEIGHT_V_W])))
		return fam_fail(d, NULL, "tensors: %s", f->fused_qkv ? "fused_qkv needs qkv_weight"
								     : "needs q_weight, k_weight and v_weight");
	if (f->encoder_decoder && (!f->n_names[WEIGHT_XQ_W] || !f->n_names[WEIGHT_XK_W] || !f->n_names[WEIGHT_XV_W] ||
				   !f->n_names[WEIGHT_XO_W] || !f->n_names[WEIGHT_XLN_W] || !f->n_keys[SET_DEC_LAYERS] ||
				   !f->n_keys[SET_DEC_START]))
		return fam_fail(d, NULL, "encoder_decoder needs cross_q/k/v/out_weight, cross_ln_weight and the config keys "
				"decoder_layers and decoder_start_token_id%s", "");
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
	if (!datadir_yaml(path, sizeof path, "models/families", model_type))
		return err_set(e, "unknown model family '%s' (no %s)", model_type, path);
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
