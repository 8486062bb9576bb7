/* tok-post.c -- tokenizer.json's post-processors: the special tokens put around the text(s).
 *
 * Every supported post-processor is turned into one template of tokenizers'
 * TemplateProcessing shape: a single and a pair list of items, each a run of special token
 * ids or a sequence ($A, $B), with a type id. BertProcessing is [CLS] $A [SEP] / ... $B:1
 * [SEP]:1, RobertaProcessing <s> $A </s> / ... </s>:1 $B:1 </s>:1, ByteLevel adds nothing (it
 * only trims offsets), a Sequence may combine ByteLevel with one of the others. */
#include "tokenizer/tok-internal.h"

#include <stdlib.h>
#include <string.h>

struct post_item {
	int seq;         /* -1: special tokens; 0: $A; 1: $B */
	int32_t type_id;
	int32_t *ids;    /* [n_ids] special tokens */
	int n_ids;
};

struct tok_post {
	struct post_item *items[2]; /* single, pair */
	int n[2];
	bool has_pair;
};

void tok_post_free(struct tok_post *p)
{
	if (!p)
		return;
	for (int t = 0; t < 2; t++) {
		for (int i = 0; i < p->n[t]; i++)
			free(p->items[t][i].ids);
		free(p->items[t]);
	}
	free(p);
}

static int post_push(struct tok_post *p, int which, int seq, int32_t type_id, const int32_t *ids, int n_ids,
		     struct err *e)
{
	if (p->n[which] >= 64)
		return err_set(e, "post_processor template longer than 64 items");
	struct post_item *ni = realloc(p->items[which], (size_t)(p->n[which] + 1) * sizeof *ni);
	if (!ni)
		return err_set(e, "out of memory");
	p->items[which] = ni;
	struct post_item *it = &ni[p->n[which]];
	*it = (struct post_item){seq, type_id, NULL, 0};
	if (n_ids) {
		if (!(it->ids = malloc((size_t)n_ids * sizeof *ids)))
			return err_set(e, "out of memory");
		memcpy(it->ids, ids, (size_t)n_ids * sizeof *ids);
		it->n_ids = n_ids;
	}
	p->n[which]++;
	return 0;
}

static int post_check_id(const struct tokenizer *tok, json_int_t id, const char *what, struct err *e)
{
	if (id < 0 || id >= TOK_MAX_IDS || !tokenizer_id_to_token(tok, (int32_t)id))
		return err_set(e, "post_processor: %s has id %lld, which is not a token", what, (long long)id);
	return 0;
}

/* TemplateProcessing: "single"/"pair" lists of {"SpecialToken": {id, type_id}} or
 * {"Sequence": {id: "A"|"B", type_id}}, and "special_tokens" {name: {ids: [...]}}. */
static int post_template(const struct tokenizer *tok, struct tok_post *p, json_t *j, struct err *e)
{
	json_t *specials = json_object_get(j, "special_tokens");
	static const char *const keys[2] = {"single", "pair"};
	for (int t = 0; t < 2; t++) {
		json_t *list = json_object_get(j, keys[t]);
		if (t == 1 && (!list || json_is_null(list)))
			break;
		if (!json_is_array(list))
			return err_set(e, "post_processor TemplateProcessing: \"%s\" is not a list", keys[t]);
		size_t i;
		json_t *it;
		json_array_foreach(list, i, it) {
			json_t *sp = json_object_get(it, "SpecialToken"), *sq = json_object_get(it, "Sequence");
			json_t *body = sp ? sp : sq, *id = json_object_get(body, "id"), *ty = json_object_get(body, "type_id");
			json_int_t type_id = json_is_integer(ty) ? json_integer_value(ty) : 0;
			if (!json_is_object(body) || !json_is_string(id) || type_id < 0 || type_id > 1)
				return err_set(e, "post_processor TemplateProcessing: %s[%zu] is not a SpecialToken or a Sequence "
					       "with type_id 0 or 1", keys[t], i);
			const char *name = json_string_value(id);
			if (sq) {
				int seq = !strcmp(name, "A") ? 0 : !strcmp(name, "B") ? 1 : -1;
				if (seq < 0 || (t == 0 && seq == 1))
					return err_set(e, "post_processor TemplateProcessing: sequence \"%.20s\" in %s", name, keys[t]);
				if (post_push(p, t, seq, (int32_t)type_id, NULL, 0, e) < 0)
					return -1;
				continue;
			}
			json_t *ids = json_object_get(json_object_get(specials, name), "ids");
			if (!json_is_array(ids) || json_array_size(ids) == 0 || json_array_size(ids) > 64)
				return err_set(e, "post_processor TemplateProcessing: special token \"%.40s\" has no ids", name);
			int32_t buf[64];
			int n = 0;
			size_t k;
			json_t *v;
			json_array_foreach(ids, k, v) {
				if (!json_is_integer(v) || post_check_id(tok, json_integer_value(v), name, e) < 0)
					return json_is_integer(v) ? -1
								  : err_set(e, "post_processor: an id of \"%.40s\" is not an integer", name);
				buf[n++] = (int32_t)json_integer_value(v);
			}
			if (post_push(p, t, -1, (int32_t)type_id, buf, n, e) < 0)
				return -1;
		}
		if (t == 1)
			p->has_pair = true;
	}
	return 0;
}

/* BertProcessing / RobertaProcessing: "sep" and "cls" are ["token", id]. */
static int post_cls_sep(const struct tokenizer *tok, struct tok_post *p, json_t *j, bool roberta, struct err *e)
{
	int32_t ids[2];
	static const char *const keys[2] = {"cls", "sep"};
	for (int k = 0; k < 2; k++) {
		json_t *v = json_array_get(json_object_get(j, keys[k]), 1);
		if (!json_is_integer(v))
			return err_set(e, "post_processor: \"%s\" is not [token, id]", keys[k]);
		if (post_check_id(tok, json_integer_value(v), keys[k], e) < 0)
			return -1;
		ids[k] = (int32_t)json_integer_value(v);
	}
	for (int t = 0; t < 2; t++) {
		if (post_push(p, t, -1, 0, &ids[0], 1, e) < 0 || post_push(p, t, 0, 0, NULL, 0, e) < 0 ||
		    post_push(p, t, -1, 0, &ids[1], 1, e) < 0)
			return -1;
	}
	if ((roberta && post_push(p, 1, -1, 1, &ids[1], 1, e) < 0) || post_push(p, 1, 1, 1, NULL, 0, e) < 0 ||
	    post_push(p, 1, -1, 1, &ids[1], 1, e) < 0)
		return -1;
	p->has_pair = true;
	return 0;
}

/* One post-processor into P; *ADDS says whether it put tokens in (only one may). */
static int post_add(const struct tokenizer *tok, struct tok_post *p, json_t *j, bool *adds, int depth, struct err *e)
{
	json_t *type = json_object_get(j, "type");
	if (!json_is_object(j) || !json_is_string(type))
		return err_set(e, "a post_processor without a \"type\"");
	const char *t = json_string_value(type);
	if (!strcmp(t, "ByteLevel"))
		return 0;
	if (!strcmp(t, "Sequence")) {
		json_t *list = json_object_get(j, "processors");
		if (!json_is_array(list) || depth > 4)
			return err_set(e, "post_processor Sequence without a \"processors\" list");
		size_t i;
		json_t *v;
		json_array_foreach(list, i, v) {
			if (post_add(tok, p, v, adds, depth + 1, e) < 0)
				return -1;
		}
		return 0;
	}
	bool tpl = !strcmp(t, "TemplateProcessing"), bert = !strcmp(t, "BertProcessing"), rob = !strcmp(t, "RobertaProcessing");
	if (!tpl && !bert && !rob)
		return err_set(e, "post_processor type \"%.40s\" is not supported", t);
	if (*adds)
		return err_set(e, "post_processor Sequence with two processors that add tokens is not supported");
	*adds = true;
	return tpl ? post_template(tok, p, j, e) : post_cls_sep(tok, p, j, rob, e);
}

int tok_post_load(const struct tokenizer *tok, json_t *j, struct tok_post **out, struct err *e)
{
	*out = NULL;
	if (!j || json_is_null(j))
		return 0;
	struct tok_post *p = calloc(1, sizeof *p);
	if (!p)
		return err_set(e, "out of memory");
	bool adds = false;
	if (post_add(tok, p, j, &adds, 0, e) < 0) {
		tok_post_free(p);
		return -1;
	}
	if (!adds) {
		tok_post_free(p);
		return 0;
	}
	*out = p;
	return 0;
}

int tok_post_bos_eos(int32_t bos, int32_t eos, struct tok_post **out, struct err *e)
{
	*out = NULL;
	struct tok_post *p = calloc(1, sizeof *p);
	if (!p)
		return err_set(e, "out of memory");
	int rc = 0;
	for (int t = 0; t < 2 && rc == 0; t++) {
		for (int s = 0; s <= t && rc == 0; s++) {
			rc = (bos >= 0 && post_push(p, t, -1, s, &bos, 1, e) < 0) || post_push(p, t, s, s, NULL, 0, e) < 0 ||
			     (eos >= 0 && post_push(p, t, -1, s, &eos, 1, e) < 0);
		}
	}
	if (rc) {
		tok_post_free(p);
		return -1;
	}
	p->has_pair = true;
	*out = p;
	return 0;
}

bool tok_post_has_pair(const struct tok_post *p)
{
	return p && p->has_pair;
}

int tok_post_added(const struct tok_post *p, bool pair)
{
	if (!p)
		return 0;
	int n = 0, t = pair ? 1 : 0;
	for (int i = 0; i < p->n[t]; i++)
		n += p->items[t][i].n_ids;
	return n;
}

int tok_post_apply(const struct tok_post *p, const struct tok_ids *a, const struct tok_ids *b, bool pair,
		   struct tok_ids *out, int32_t *types)
{
	if (!p) {
		for (int s = 0; s <= (pair ? 1 : 0); s++) {
			const struct tok_ids *src = s ? b : a;
			for (int i = 0; i < src->n; i++) {
				types[out->n] = s;
				if (tok_ids_push(out, src->ids[i], src->special[i]) < 0)
					return -1;
			}
		}
		return 0;
	}
	int t = pair ? 1 : 0;
	for (int k = 0; k < p->n[t]; k++) {
		const struct post_item *it = &p->items[t][k];
		const struct tok_ids *src = it->seq == 0 ? a : it->seq == 1 ? b : NULL;
		int n = src ? src->n : it->n_ids;
		for (int i = 0; i < n; i++) {
			types[out->n] = it->type_id;
			if (tok_ids_push(out, src ? src->ids[i] : it->ids[i], src ? src->special[i] : true) < 0)
				return -1;
		}
	}
	return 0;
}
