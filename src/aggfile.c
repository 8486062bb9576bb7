/* aggfile.c -- saving and loading aggregates (format in aggfile.h). */
#include "aggfile.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsoncap.h"

static const char *aggfile_score_name(int k)
{
	return k == AGG_ENTROPY_NORM ? "entropy_norm" : headscore_name((enum headscore_kind)k);
}

/* A JSON string literal (json_dumps of a string escapes it as the reader expects). */
static void aggfile_string(FILE *out, const char *s)
{
	json_t *j = json_string(s);
	char *d = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
	fputs(d ? d : "\"?\"", out);
	free(d);
	json_decref(j);
}

static void aggfile_double(FILE *out, double v)
{
	if (isfinite(v))
		fprintf(out, "%.17g", v);
	else
		fputs("null", out);
}

int aggfile_write(const struct aggregate *a, FILE *out, struct err *e)
{
	const struct agg_model *m = &a->model;
	bool partial = false;
	fprintf(out, "{\"format\": \"%s\", \"version\": %d,\n\"model\": {\"name\": ", AGGFILE_FORMAT, AGGFILE_VERSION);
	aggfile_string(out, m->name);
	fputs(", \"family\": ", out);
	aggfile_string(out, m->family);
	fprintf(out,
		", \"causal\": %s, \"layers\": %d, \"heads\": %d, \"kv_heads\": %d, \"head_dim\": %d, \"hidden\": %d, "
		"\"max_positions\": %d},\n\"sources\": [",
		m->causal ? "true" : "false", m->n_layers, m->n_heads, m->n_kv_heads, m->head_dim, m->hidden,
		m->max_positions);
	for (int i = 0; i < a->n_src; i++) {
		const struct agg_source *s = &a->src[i];
		fputs(i ? ",\n  {\"file\": " : "\n  {\"file\": ", out);
		aggfile_string(out, s->file);
		fprintf(out, ", \"shard\": [%d, %d], \"texts\": %llu, \"partial\": %s}", s->shard_k, s->shard_n,
			(unsigned long long)s->texts, s->partial ? "true" : "false");
		partial |= s->partial;
	}
	const struct agg_counts *c = &a->c;
	fprintf(out,
		"],\n\"counts\": {\"lines\": %llu, \"texts\": %llu, \"tokens\": %llu, \"empty\": %llu, \"truncated\": %llu, "
		"\"failed\": %llu, \"first_special\": %llu},\n\"partial\": %s,\n\"scores\": [",
		(unsigned long long)c->lines, (unsigned long long)c->texts, (unsigned long long)c->tokens,
		(unsigned long long)c->empty, (unsigned long long)c->truncated, (unsigned long long)c->failed,
		(unsigned long long)c->first_special, partial ? "true" : "false");
	for (int k = 0, first = 1; k < AGG_SCORES; k++)
		if (aggregate_keeps(k)) {
			fprintf(out, first ? "\"%s\"" : ", \"%s\"", aggfile_score_name(k));
			first = 0;
		}
	fputs("],\n\"heads\": [", out);
	size_t cells = (size_t)m->n_layers * m->n_heads;
	struct headscore *mean = malloc(cells * sizeof *mean);
	if (!mean)
		return err_set(e, "out of memory");
	aggregate_headscores(a, mean, NULL);
	for (int l = 0; l < m->n_layers; l++)
		for (int h = 0; h < m->n_heads; h++) {
			fprintf(out, "%s{\"layer\": %d, \"head\": %d, \"label\": ", l || h ? ",\n  " : "\n  ", l, h);
			aggfile_string(out, mean[(size_t)l * m->n_heads + h].label);
			for (int k = 0; k < AGG_SCORES; k++) {
				if (!aggregate_keeps(k))
					continue;
				const struct agg_moment *mo = aggregate_moment(a, l, h, k);
				fprintf(out, ",\n    \"%s\": {\"n\": %llu, \"mean\": ", aggfile_score_name(k),
					(unsigned long long)mo->n);
				aggfile_double(out, mo->n ? mo->mean : NAN);
				fputs(", \"std\": ", out);
				aggfile_double(out, aggregate_moment_std(mo));
				fputs(", \"m2\": ", out);
				aggfile_double(out, mo->m2);
				fputc('}', out);
			}
			fputc('}', out);
		}
	fputs("]}\n", out);
	free(mean);
	if (fflush(out) || ferror(out))
		return err_set(e, "write error");
	return 0;
}

int aggfile_write_csv(const struct aggregate *a, FILE *out, struct err *e)
{
	fputs("layer,head,score,n,mean,std\n", out);
	for (int l = 0; l < a->model.n_layers; l++)
		for (int h = 0; h < a->model.n_heads; h++)
			for (int k = 0; k < AGG_SCORES; k++) {
				if (!aggregate_keeps(k))
					continue;
				const struct agg_moment *mo = aggregate_moment(a, l, h, k);
				fprintf(out, "%d,%d,%s,%llu,", l, h, aggfile_score_name(k), (unsigned long long)mo->n);
				if (mo->n)
					fprintf(out, "%.17g,%.17g\n", mo->mean, aggregate_moment_std(mo));
				else
					fputs(",\n", out);
			}
	if (fflush(out) || ferror(out))
		return err_set(e, "write error");
	return 0;
}

int aggfile_save(const struct aggregate *a, const char *path, struct err *e)
{
	size_t len = strlen(path);
	char *tmp = malloc(len + 16);
	if (!tmp)
		return err_set(e, "out of memory");
	snprintf(tmp, len + 16, "%s.tmp%ld", path, (long)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f) {
		int err = errno;
		free(tmp);
		return err_set(e, "%s: %s", path, strerror(err));
	}
	int rc = aggfile_write(a, f, e);
	if (fclose(f) != 0 && rc == 0)
		rc = err_set(e, "write error");
	if (rc == 0 && rename(tmp, path) != 0)
		rc = err_set(e, "%s", strerror(errno));
	if (rc < 0) {
		unlink(tmp);
		err_prefix(e, "%s", path);
	}
	free(tmp);
	return rc;
}

/* Integer member NAME of O in [LO, HI] into *OUT. */
static int aggfile_int(json_t *o, const char *name, long long lo, long long hi, long long *out, struct err *e)
{
	json_t *v = json_object_get(o, name);
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return err_set(e, "\"%s\" is not an integer in %lld..%lld", name, lo, hi);
	*out = json_integer_value(v);
	return 0;
}

static int aggfile_uint(json_t *o, const char *name, uint64_t *out, struct err *e)
{
	long long v;
	if (aggfile_int(o, name, 0, (long long)1 << 53, &v, e) < 0)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

static int aggfile_str(json_t *o, const char *name, char *buf, size_t n, struct err *e)
{
	json_t *v = json_object_get(o, name);
	if (!json_is_string(v) || json_string_length(v) >= n || strlen(json_string_value(v)) != json_string_length(v))
		return err_set(e, "\"%s\" is not a string of at most %zu bytes", name, n - 1);
	memcpy(buf, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

static int aggfile_model(json_t *j, struct agg_model *m, struct err *e)
{
	memset(m, 0, sizeof *m);
	long long v[6];
	static const char *const names[] = {"layers", "heads", "kv_heads", "head_dim", "hidden", "max_positions"};
	if (!json_is_object(j))
		return err_set(e, "no \"model\" object");
	if (aggfile_str(j, "name", m->name, sizeof m->name, e) < 0 ||
	    aggfile_str(j, "family", m->family, sizeof m->family, e) < 0)
		return err_prefix(e, "model");
	for (int i = 0; i < 6; i++)
		if (aggfile_int(j, names[i], 1, 1 << 24, &v[i], e) < 0)
			return err_prefix(e, "model");
	if (!json_is_boolean(json_object_get(j, "causal")))
		return err_set(e, "model: \"causal\" is not true or false");
	m->causal = json_is_true(json_object_get(j, "causal"));
	m->n_layers = (int)v[0], m->n_heads = (int)v[1], m->n_kv_heads = (int)v[2];
	m->head_dim = (int)v[3], m->hidden = (int)v[4], m->max_positions = (int)v[5];
	return 0;
}

static int aggfile_sources(json_t *j, struct aggregate *a, struct err *e)
{
	size_t i;
	json_t *s;
	if (!json_is_array(j))
		return err_set(e, "no \"sources\" array");
	json_array_foreach(j, i, s) {
		json_t *file = json_object_get(s, "file"), *shard = json_object_get(s, "shard");
		uint64_t texts;
		if (!json_is_object(s) || !json_is_string(file) || strlen(json_string_value(file)) != json_string_length(file))
			return err_set(e, "sources[%zu]: no \"file\" string", i);
		if (!json_is_array(shard) || json_array_size(shard) != 2 || !json_is_integer(json_array_get(shard, 0)) ||
		    !json_is_integer(json_array_get(shard, 1)))
			return err_set(e, "sources[%zu]: \"shard\" is not [K, N]", i);
		json_int_t k = json_integer_value(json_array_get(shard, 0)), n = json_integer_value(json_array_get(shard, 1));
		if (n < 1 || n > 1000000 || k < 1 || k > n)
			return err_set(e, "sources[%zu]: shard %lld/%lld is not K/N with 1 <= K <= N <= 1000000", i,
				       (long long)k, (long long)n);
		if (aggfile_uint(s, "texts", &texts, e) < 0)
			return err_prefix(e, "sources[%zu]", i);
		if (!json_is_boolean(json_object_get(s, "partial")))
			return err_set(e, "sources[%zu]: \"partial\" is not true or false", i);
		for (int o = 0; o < a->n_src; o++)
			if (!strcmp(a->src[o].file, json_string_value(file)) && a->src[o].shard_k == k && a->src[o].shard_n == n)
				return err_set(e, "sources[%zu]: shard %d/%d of the file is listed twice", i, (int)k, (int)n);
		if (aggregate_add_source(a, json_string_value(file), (int)k, (int)n, texts,
					 json_is_true(json_object_get(s, "partial")), e) < 0)
			return -1;
	}
	return 0;
}

static int aggfile_counts(json_t *j, struct agg_counts *c, struct err *e)
{
	if (!json_is_object(j))
		return err_set(e, "no \"counts\" object");
	if (aggfile_uint(j, "lines", &c->lines, e) < 0 || aggfile_uint(j, "texts", &c->texts, e) < 0 ||
	    aggfile_uint(j, "tokens", &c->tokens, e) < 0 || aggfile_uint(j, "empty", &c->empty, e) < 0 ||
	    aggfile_uint(j, "truncated", &c->truncated, e) < 0 || aggfile_uint(j, "failed", &c->failed, e) < 0 ||
	    aggfile_uint(j, "first_special", &c->first_special, e) < 0)
		return err_prefix(e, "counts");
	if (c->texts + c->empty + c->failed > c->lines || c->truncated > c->texts || c->first_special > c->texts)
		return err_set(e, "counts: texts, empty and failed lines exceed the lines, or truncated texts the texts");
	return 0;
}

static int aggfile_heads(json_t *j, struct aggregate *a, struct err *e)
{
	size_t cells = (size_t)a->model.n_layers * a->model.n_heads;
	if (!json_is_array(j) || json_array_size(j) != cells)
		return err_set(e, "\"heads\" is not an array of %zu heads", cells);
	for (size_t c = 0; c < cells; c++) {
		json_t *h = json_array_get(j, c);
		long long layer, head;
		if (!json_is_object(h))
			return err_set(e, "heads[%zu] is not an object", c);
		if (aggfile_int(h, "layer", 0, 1 << 24, &layer, e) < 0 || aggfile_int(h, "head", 0, 1 << 24, &head, e) < 0)
			return err_prefix(e, "heads[%zu]", c);
		if ((size_t)layer != c / a->model.n_heads || (size_t)head != c % a->model.n_heads)
			return err_set(e, "heads[%zu] is layer %lld head %lld, not layer %zu head %zu", c, layer, head,
				       c / a->model.n_heads, c % a->model.n_heads);
		for (int k = 0; k < AGG_SCORES; k++) {
			if (!aggregate_keeps(k))
				continue;
			const char *name = aggfile_score_name(k);
			json_t *s = json_object_get(h, name), *mean = json_object_get(s, "mean"), *m2 = json_object_get(s, "m2");
			struct agg_moment *mo = a->hs + c * AGG_SCORES + k;
			if (!json_is_object(s))
				return err_set(e, "heads[%zu]: no \"%s\" object", c, name);
			if (aggfile_uint(s, "n", &mo->n, e) < 0)
				return err_prefix(e, "heads[%zu].%s", c, name);
			if (mo->n > a->c.texts)
				return err_set(e, "heads[%zu].%s: n %llu is more than the %llu texts", c, name,
					       (unsigned long long)mo->n, (unsigned long long)a->c.texts);
			if (mo->n ? !json_is_number(mean) : !json_is_null(mean) && !json_is_number(mean))
				return err_set(e, "heads[%zu].%s: \"mean\" is not a number", c, name);
			if (!json_is_number(m2) || json_number_value(m2) < 0)
				return err_set(e, "heads[%zu].%s: \"m2\" is not a number >= 0", c, name);
			mo->mean = mo->n ? json_number_value(mean) : 0;
			mo->m2 = json_number_value(m2);
			if (!isfinite(mo->mean) || !isfinite(mo->m2) || (mo->n == 0 && mo->m2 != 0))
				return err_set(e, "heads[%zu].%s: mean or m2 out of range", c, name);
		}
	}
	return 0;
}

/* The aggregate J describes (not consumed). */
static int aggfile_from_json(json_t *j, struct aggregate **out, struct err *e)
{
	struct agg_model m;
	struct aggregate *a = NULL;
	json_t *fmt = json_object_get(j, "format"), *ver = json_object_get(j, "version");
	int rc = 0;
	if (!json_is_object(j) || !json_is_string(fmt) || strcmp(json_string_value(fmt), AGGFILE_FORMAT))
		rc = err_set(e, "not an attnscope aggregate (no \"format\": \"%s\")", AGGFILE_FORMAT);
	else if (!json_is_integer(ver) || json_integer_value(ver) != AGGFILE_VERSION)
		rc = err_set(e, "aggregate format version %s is not %d (a newer attnscope wrote it?)",
			     json_is_integer(ver) ? "other" : "missing", AGGFILE_VERSION);
	else if (aggfile_model(json_object_get(j, "model"), &m, e) < 0 || !(a = aggregate_new(&m, e)))
		rc = -1;
	else if (aggfile_sources(json_object_get(j, "sources"), a, e) < 0 ||
		 aggfile_counts(json_object_get(j, "counts"), &a->c, e) < 0 ||
		 aggfile_heads(json_object_get(j, "heads"), a, e) < 0)
		rc = -1;
	if (rc < 0) {
		aggregate_free(a);
		return -1;
	}
	*out = a;
	return 0;
}

int aggfile_parse(const char *text, size_t len, struct aggregate **out, struct err *e)
{
	*out = NULL;
	if (jsoncap_nodes(text, len) > JSONCAP_MAX_NODES)
		return err_set(e, "more than %zu JSON values", JSONCAP_MAX_NODES);
	json_error_t je;
	json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		return err_set(e, "invalid JSON at line %d column %d: %s", je.line, je.column, je.text);
	int rc = aggfile_from_json(j, out, e);
	json_decref(j);
	return rc;
}

int aggfile_load(const char *path, struct aggregate **out, struct err *e)
{
	*out = NULL;
	json_error_t je;
	e->msg[0] = 0;
	json_t *j = jsoncap_load_file(path, JSON_REJECT_DUPLICATES, &je, e);
	if (!j)
		return e->msg[0] ? -1 : err_set(e, "%s: invalid JSON at line %d column %d: %s", path, je.line, je.column, je.text);
	int rc = aggfile_from_json(j, out, e);
	if (rc < 0)
		err_prefix(e, "%s", path);
	json_decref(j);
	return rc;
}
