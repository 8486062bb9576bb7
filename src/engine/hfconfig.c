/* hfconfig.c -- config.json access through a family's key lists (see hfconfig.h). */
#include "engine/hfconfig.h"
#include "base/jsoncap.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hfconfig_load(const char *dir, struct hfconfig *c, struct err *e)
{
	memset(c, 0, sizeof *c);
	snprintf(c->path, sizeof c->path, "%s/config.json", dir);
	json_error_t je;
	json_t *root = jsoncap_load_file(c->path, JSON_REJECT_DUPLICATES, &je, e);
	if (!root)
		return e->msg[0] ? -1 : err_set(e, "%s:%d:%d: %s", c->path, je.line, je.column, je.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return err_set(e, "%s: not a JSON object", c->path);
	}
	c->root = root;
	json_t *mt = json_object_get(root, "model_type");
	if (!json_is_string(mt)) {
		hfconfig_free(c);
		return err_set(e, "%s: no \"model_type\" string", c->path);
	}
	snprintf(c->model_type, sizeof c->model_type, "%s", json_string_value(mt));
	return 0;
}

void hfconfig_free(struct hfconfig *c)
{
	json_decref(c->root);
	c->root = NULL;
}

/* The first non-null value among the family's keys for S, with the key that held it. */
static json_t *hfconfig_value(const struct hfconfig *c, const struct family *f, enum family_setting s,
			      const char **key)
{
	/* A multimodal model keeps its language model's settings in a section (text_config); what the
	 * section leaves out comes from the top level, then from the family's defaults. */
	json_t *section = f->config_section[0] ? json_object_get(c->root, f->config_section) : NULL;
	json_t *scopes[2] = {json_is_object(section) ? section : NULL, c->root};
	for (int sc = 0; sc < 2; sc++) {
		for (int i = 0; scopes[sc] && i < f->n_keys[s]; i++) {
			json_t *v = json_object_get(scopes[sc], f->keys[s][i]);
			if (v && !json_is_null(v)) {
				*key = f->keys[s][i];
				return v;
			}
		}
	}
	*key = f->n_keys[s] ? f->keys[s][0] : family_setting_key(s);
	return NULL;
}

const void *hfconfig_json(const struct hfconfig *c, const struct family *f, enum family_setting s)
{
	const char *key;
	return hfconfig_value(c, f, s, &key);
}

bool hfconfig_has(const struct hfconfig *c, const struct family *f, enum family_setting s)
{
	const char *key;
	return hfconfig_value(c, f, s, &key) != NULL;
}

int hfconfig_int(const struct hfconfig *c, const struct family *f, enum family_setting s, long lo, long hi,
		 long *out, struct err *e)
{
	const char *key;
	json_t *v = hfconfig_value(c, f, s, &key);
	long val;
	if (v) {
		if (!json_is_integer(v))
			return err_set(e, "%s: \"%s\" must be an integer", c->path, key);
		json_int_t x = json_integer_value(v);
		if (x < lo || x > hi)
			return err_set(e, "%s: \"%s\" is %lld, expected %ld..%ld", c->path, key, (long long)x, lo, hi);
		val = (long)x;
	} else if (f->defaults[s]) {
		/* A default can be out of range too: its bounds may come from other keys (a top-k of 8 when
		 * the file has 6 experts) */
		val = strtol(f->defaults[s], NULL, 10);
		if (val < lo || val > hi)
			return err_set(e, "%s: no \"%s\", and its default %ld is outside %ld..%ld", c->path, key, val, lo, hi);
	} else {
		return err_set(e, "%s: missing \"%s\"", c->path, key);
	}
	*out = val;
	return 0;
}

int hfconfig_float(const struct hfconfig *c, const struct family *f, enum family_setting s, double *out,
		   struct err *e)
{
	const char *key;
	json_t *v = hfconfig_value(c, f, s, &key);
	if (v) {
		if (!json_is_number(v) || !isfinite(json_number_value(v)))
			return err_set(e, "%s: \"%s\" must be a number", c->path, key);
		*out = json_number_value(v);
	} else if (f->defaults[s]) {
		*out = strtod(f->defaults[s], NULL);
	} else {
		return err_set(e, "%s: missing \"%s\"", c->path, key);
	}
	return 0;
}

int hfconfig_string(const struct hfconfig *c, const struct family *f, enum family_setting s, char *out,
		    size_t outsz, struct err *e)
{
	const char *key;
	json_t *v = hfconfig_value(c, f, s, &key);
	if (v) {
		if (!json_is_string(v))
			return err_set(e, "%s: \"%s\" must be a string", c->path, key);
		snprintf(out, outsz, "%s", json_string_value(v));
	} else if (f->defaults[s]) {
		snprintf(out, outsz, "%s", f->defaults[s]);
	} else {
		return err_set(e, "%s: missing \"%s\"", c->path, key);
	}
	return 0;
}

int hfconfig_bool(const struct hfconfig *c, const struct family *f, enum family_setting s, bool *out,
		  struct err *e)
{
	const char *key;
	json_t *v = hfconfig_value(c, f, s, &key);
	if (v) {
		if (!json_is_boolean(v))
			return err_set(e, "%s: \"%s\" must be true or false", c->path, key);
		*out = json_is_true(v);
	} else {
		*out = f->defaults[s] && strcmp(f->defaults[s], "true") == 0;
	}
	return 0;
}
