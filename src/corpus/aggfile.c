/* aggfile.c -- saving and loading aggregates (format in aggfile.h). */
#include "corpus/aggfile.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/b64.h"
#include "base/jsoncap.h"
#include "base/jsonout.h"

static const char *aggfile_score_name(int k)
{
	return k == AGG_ENTROPY_NORM ? "entropy_norm" : headscore_name((enum headscore_kind)k);
}

/* A JSON string literal (json_dumps of a string escapes it as the reader expects). */
static void aggfile_double(FILE *out, double v)
{
	if (isfinite(v))
		fprintf(out, "%.17g", v);
	else
		fputs("null", out);
}

static void aggfile_write_moment(FILE *out, const char *name, const struct agg_moment *mo)
{
	fprintf(out, "\"%s\": {\"n\": %llu, \"mean\": ", name, (unsigned long long)mo->n);
	aggfile_double(out, mo->mean);
	fputs(", \"m2\": ", out);
	aggfile_double(out, mo->m2);
	fputc('}', out);
}

/* A head's query/key moments, with the notebook's figures (first token left out, Bessel's std). */
static void aggfile_write_qk(FILE *out, const struct agg_qk *s)
{
	fputs(",\n    \"qk\": {", out);
	for (int k = 0; k < 2; k++) {
		struct agg_moment mo = aggregate_qk_moment(s, k, false);
		fprintf(out, "\"%s_mean\": ", k ? "k" : "q");
		aggfile_double(out, mo.n ? mo.mean : NAN);
		fprintf(out, ", \"%s_std\": ", k ? "k" : "q");
		aggfile_double(out, aggregate_moment_std(&mo));
		fputs(", ", out);
	}
	aggfile_write_moment(out, "q_first", &s->q_first);
	fputs(", ", out);
	aggfile_write_moment(out, "q_rest", &s->q_rest);
	fputs(", ", out);
	aggfile_write_moment(out, "k_first", &s->k_first);
	fputs(", ", out);
	aggfile_write_moment(out, "k_rest", &s->k_rest);
	fputc('}', out);
}

/* A histogram: moments, extremes, range exponent, and the counts from the first occupied bin to
 * the last ("bins" empty when there are none). */
static void aggfile_write_hist(FILE *out, const char *name, const struct agghist *h)
{
	fprintf(out, ",\n    \"%s\": {\"n\": %llu, \"mean\": ", name, (unsigned long long)h->n);
	aggfile_double(out, h->mean);
	fputs(", \"std\": ", out);
	aggfile_double(out, agghist_std(h));
	fputs(", \"m2\": ", out);
	aggfile_double(out, h->m2);
	fputs(", \"min\": ", out);
	aggfile_double(out, h->min);
	fputs(", \"max\": ", out);
	aggfile_double(out, h->max);
	int first = 0, last = -1;
	for (int i = 0; i < AGGHIST_BINS; i++)
		if (h->bin[i])
			last = i;
	while (first < last && !h->bin[first])
		first++;
	fprintf(out, ", \"unbinned\": %llu, \"exp\": %d, \"first_bin\": %d, \"bins\": [", (unsigned long long)h->unbinned,
		h->exp, first);
	for (int i = first; i <= last; i++)
		fprintf(out, i > first ? ", %llu" : "%llu", (unsigned long long)h->bin[i]);
	fputs("]}", out);
}

/* A sampled token's place: sorted by (key, line, token), or by line. */
struct aggfile_place {
	uint64_t key, line;
	int token, index;
};

static int aggfile_by_key(const void *x, const void *y)
{
	const struct aggfile_place *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return (a->token > b->token) - (a->token < b->token);
}

static int aggfile_by_line(const void *x, const void *y)
{
	const struct aggfile_place *a = x, *b = y;
	return a->line != b->line ? (a->line < b->line ? -1 : 1) : aggfile_by_key(x, y);
}

/* The token sample: its head, then its texts (one per line, in line order) and its tokens in key
 * order, each naming its line. P is scratch for [n] places. */
static void aggfile_write_sample(FILE *out, const struct aggsample *s, struct aggfile_place *p)
{
	fprintf(out, ",\n\"sample\": {\"layer\": %d, \"head\": %d, \"dim\": %d, \"cap\": %d, \"texts\": [", s->layer, s->head,
		s->dim, s->cap);
	for (int i = 0; i < s->n; i++)
		p[i] = (struct aggfile_place){s->tok[i].key, s->tok[i].line, s->tok[i].token, i};
	qsort(p, (size_t)s->n, sizeof *p, aggfile_by_line);
	for (int i = 0, first = 1; i < s->n; i++) {
		const struct aggsample_tok *t = &s->tok[p[i].index];
		if (i > 0 && p[i - 1].line == p[i].line)
			continue;
		fprintf(out, "%s{\"line\": %llu, \"text\": ", first ? "\n  " : ",\n  ", (unsigned long long)t->line);
		jsonout_string(out, t->text);
		fputs(", \"text_b\": ", out);
		if (t->text_b)
			jsonout_string(out, t->text_b);
		else
			fputs("null", out);
		fputc('}', out);
		first = 0;
	}
	fputs("],\n\"tokens\": [", out);
	qsort(p, (size_t)s->n, sizeof *p, aggfile_by_key);
	for (int i = 0; i < s->n; i++) {
		const struct aggsample_tok *t = &s->tok[p[i].index];
		fprintf(out, "%s{\"line\": %llu, \"token\": %d, \"piece\": ", i ? ",\n  " : "\n  ", (unsigned long long)t->line,
			t->token);
		jsonout_string(out, t->piece);
		fputs(", \"q\": \"", out);
		b64_write_floats(out, aggsample_q(s, p[i].index), (size_t)s->dim);
		fputs("\", \"k\": \"", out);
		b64_write_floats(out, aggsample_k(s, p[i].index), (size_t)s->dim);
		fputs("\"}", out);
	}
	fputs("]}", out);
}

int aggfile_write(const struct aggregate *a, FILE *out, struct err *e)
{
	const struct agg_model *m = &a->model;
	bool partial = false;
	struct jsonout_model jm = {m->name, m->family, m->causal, m->n_layers, m->n_heads, m->n_kv_heads, m->head_dim,
				   m->hidden, m->max_positions};
	fprintf(out, "{\"format\": \"%s\", \"version\": %d,\n\"model\": ", AGGFILE_FORMAT, AGGFILE_VERSION);
	jsonout_model(out, &jm);
	fputs("},\n\"sources\": [", out);
	for (int i = 0; i < a->n_src; i++) {
		const struct agg_source *s = &a->src[i];
		fputs(i ? ",\n  {\"file\": " : "\n  {\"file\": ", out);
		jsonout_string(out, s->file);
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
			jsonout_string(out, mean[(size_t)l * m->n_heads + h].label);
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
			aggfile_write_qk(out, aggregate_qk(a, l, h));
			fputc('}', out);
		}
	fputs("],\n\"layers\": [", out);
	for (int l = 0; l < m->n_layers; l++) {
		fprintf(out, "%s{\"layer\": %d", l ? ",\n  " : "\n  ", l);
		for (int d = 0; d < AGG_DISTS; d++)
			aggfile_write_hist(out, aggregate_dist_name((enum agg_dist)d), aggregate_dist(a, l, (enum agg_dist)d));
		fputc('}', out);
	}
	fputc(']', out);
	struct aggfile_place *places = malloc((size_t)(a->sample.n > 0 ? a->sample.n : 1) * sizeof *places);
	if (!places) {
		free(mean);
		return err_set(e, "out of memory");
	}
	aggfile_write_sample(out, &a->sample, places);
	free(places);
	fputs("}\n", out);
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

/* A moment {"n", "mean", "m2"} named NAME in O, with n at most MAX_N. */
static int aggfile_moment(json_t *o, const char *name, uint64_t max_n, struct agg_moment *mo, struct err *e)
{
	json_t *s = json_object_get(o, name), *mean = json_object_get(s, "mean"), *m2 = json_object_get(s, "m2");
	if (!json_is_object(s))
		return err_set(e, "no \"%s\" object", name);
	if (aggfile_uint(s, "n", &mo->n, e) < 0)
		return err_prefix(e, "%s", name);
	if (mo->n > max_n)
		return err_set(e, "%s: n %llu is more than %llu", name, (unsigned long long)mo->n, (unsigned long long)max_n);
	if (!json_is_number(mean) || !json_is_number(m2))
		return err_set(e, "%s: \"mean\" or \"m2\" is not a number", name);
	mo->mean = json_number_value(mean);
	mo->m2 = json_number_value(m2);
	if (!isfinite(mo->mean) || !isfinite(mo->m2) || mo->m2 < 0 || (mo->n == 0 && (mo->m2 != 0 || mo->mean != 0)))
		return err_set(e, "%s: mean or m2 out of range", name);
	return 0;
}

/* The query/key moments of every head ("heads"[c]."qk"), checked against the counts: the first
 * tokens' values are at most texts × head_dim, all at most tokens × head_dim. */
static int aggfile_qk(json_t *j, struct aggregate *a, struct err *e)
{
	size_t cells = (size_t)a->model.n_layers * a->model.n_heads;
	uint64_t d = (uint64_t)a->model.head_dim;
	if (a->c.tokens > ((uint64_t)1 << 53) / d || a->c.texts > a->c.tokens)
		return err_set(e, "counts: more texts than tokens, or more tokens than can be counted per dimension");
	for (size_t c = 0; c < cells; c++) {
		json_t *o = json_object_get(json_array_get(j, c), "qk");
		struct agg_qk *s = &a->qk[c];
		if (!json_is_object(o))
			return err_set(e, "heads[%zu]: no \"qk\" object", c);
		if (aggfile_moment(o, "q_first", a->c.texts * d, &s->q_first, e) < 0 ||
		    aggfile_moment(o, "q_rest", a->c.tokens * d, &s->q_rest, e) < 0 ||
		    aggfile_moment(o, "k_first", a->c.texts * d, &s->k_first, e) < 0 ||
		    aggfile_moment(o, "k_rest", a->c.tokens * d, &s->k_rest, e) < 0)
			return err_prefix(e, "heads[%zu].qk", c);
		if (s->q_first.n + s->q_rest.n > a->c.tokens * d || s->k_first.n + s->k_rest.n > a->c.tokens * d)
			return err_set(e, "heads[%zu].qk: more values than tokens × head_dim", c);
	}
	return 0;
}

/* Histogram NAME of O. */
static int aggfile_hist(json_t *o, const char *name, struct agghist *h, struct err *e)
{
	json_t *s = json_object_get(o, name), *bins = json_object_get(s, "bins");
	static const char *const nums[] = {"mean", "m2", "min", "max"};
	double *dst[] = {&h->mean, &h->m2, &h->min, &h->max};
	long long exp, first;
	agghist_init(h);
	if (!json_is_object(s))
		return err_set(e, "no \"%s\" object", name);
	if (aggfile_uint(s, "n", &h->n, e) < 0 || aggfile_uint(s, "unbinned", &h->unbinned, e) < 0 ||
	    aggfile_int(s, "exp", AGGHIST_MIN_EXP, AGGHIST_MAX_EXP, &exp, e) < 0 ||
	    aggfile_int(s, "first_bin", 0, AGGHIST_BINS - 1, &first, e) < 0)
		return err_prefix(e, "%s", name);
	h->exp = (int)exp;
	for (int i = 0; i < 4; i++) {
		json_t *v = json_object_get(s, nums[i]);
		if (!json_is_number(v))
			return err_set(e, "%s: \"%s\" is not a number", name, nums[i]);
		*dst[i] = json_number_value(v);
	}
	if (!json_is_array(bins) || json_array_size(bins) > (size_t)(AGGHIST_BINS - first))
		return err_set(e, "%s: \"bins\" is not an array of at most %lld counts", name, AGGHIST_BINS - first);
	for (size_t i = 0; i < json_array_size(bins); i++) {
		json_t *v = json_array_get(bins, i);
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return err_set(e, "%s: bins[%zu] is not a count", name, i);
		h->bin[first + (long long)i] = (uint64_t)json_integer_value(v);
	}
	const char *why = agghist_check(h);
	if (why)
		return err_set(e, "%s: %s", name, why);
	return 0;
}

static int aggfile_layers(json_t *j, struct aggregate *a, struct err *e)
{
	if (!json_is_array(j) || json_array_size(j) != (size_t)a->model.n_layers)
		return err_set(e, "\"layers\" is not an array of %d layers", a->model.n_layers);
	for (int l = 0; l < a->model.n_layers; l++) {
		json_t *o = json_array_get(j, (size_t)l);
		long long layer;
		if (!json_is_object(o))
			return err_set(e, "layers[%d] is not an object", l);
		if (aggfile_int(o, "layer", 0, 1 << 24, &layer, e) < 0)
			return err_prefix(e, "layers[%d]", l);
		if (layer != l)
			return err_set(e, "layers[%d] is layer %lld", l, layer);
		for (int d = 0; d < AGG_DISTS; d++)
			if (aggfile_hist(o, aggregate_dist_name((enum agg_dist)d), &a->dist[(size_t)l * AGG_DISTS + d], e) < 0)
				return err_prefix(e, "layers[%d]", l);
	}
	return 0;
}

/* The text of LINE among TEXTS (sorted by line), or NULL. */
static json_t *aggfile_text_of(json_t *texts, uint64_t line)
{
	size_t lo = 0, hi = json_array_size(texts);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t l = (uint64_t)json_integer_value(json_object_get(json_array_get(texts, mid), "line"));
		if (l == line)
			return json_array_get(texts, mid);
		if (l < line)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* A string member NAME of O (no NUL inside), or (NULL_OK) null: *OUT NULL. */
static int aggfile_cstr(json_t *o, const char *name, bool null_ok, const char **out, struct err *e)
{
	json_t *v = json_object_get(o, name);
	*out = NULL;
	if (null_ok && json_is_null(v))
		return 0;
	if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
		return err_set(e, "\"%s\" is not a string%s", name, null_ok ? " or null" : "");
	*out = json_string_value(v);
	return 0;
}

/* The token sample J into A's (an empty one of head 0.0 until then). */
static int aggfile_sample(json_t *j, struct aggregate *a, struct err *e)
{
	struct aggsample *s = &a->sample;
	long long dim, cap, layer, head;
	json_t *texts = json_object_get(j, "texts"), *tokens = json_object_get(j, "tokens");
	if (!json_is_object(j))
		return err_set(e, "no \"sample\" object");
	if (aggfile_int(j, "layer", 0, a->model.n_layers - 1, &layer, e) < 0 ||
	    aggfile_int(j, "head", 0, a->model.n_heads - 1, &head, e) < 0 ||
	    aggfile_int(j, "dim", 1, 1 << 24, &dim, e) < 0 || aggfile_int(j, "cap", 0, AGGSAMPLE_MAX, &cap, e) < 0)
		return err_prefix(e, "sample");
	aggsample_free(s);
	if (aggsample_init(s, (int)layer, (int)head, a->model.head_dim, e) < 0)
		return -1;
	if (dim != s->dim || cap != s->cap)
		return err_set(e, "sample: dim %lld and cap %lld are not the model's %d and %d", dim, cap, s->dim, s->cap);
	if (!json_is_array(texts) || !json_is_array(tokens))
		return err_set(e, "sample: no \"texts\" and \"tokens\" arrays");
	if (json_array_size(tokens) > (size_t)s->cap)
		return err_set(e, "sample: more than %d tokens", s->cap);
	uint64_t prev = 0;
	for (size_t i = 0; i < json_array_size(texts); i++) {
		json_t *t = json_array_get(texts, i);
		uint64_t line;
		const char *str;
		if (!json_is_object(t) || aggfile_uint(t, "line", &line, e) < 0 || aggfile_cstr(t, "text", false, &str, e) < 0 ||
		    aggfile_cstr(t, "text_b", true, &str, e) < 0)
			return err_prefix(e, "sample.texts[%zu]", i);
		if (i > 0 && line <= prev)
			return err_set(e, "sample.texts[%zu]: lines are not in increasing order", i);
		prev = line;
	}
	float *q = json_array_size(tokens) ? malloc((size_t)s->dim * 2 * sizeof *q) : NULL, *k = q ? q + s->dim : NULL;
	if (json_array_size(tokens) && !q)
		return err_set(e, "out of memory");
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < json_array_size(tokens); i++) {
		json_t *t = json_array_get(tokens, i), *qs = json_object_get(t, "q"), *ks = json_object_get(t, "k"), *text;
		uint64_t line;
		long long token;
		const char *piece, *tx, *tb;
		if (!json_is_object(t) || aggfile_uint(t, "line", &line, e) < 0 ||
		    aggfile_int(t, "token", 0, a->model.max_positions - 1, &token, e) < 0 ||
		    aggfile_cstr(t, "piece", false, &piece, e) < 0)
			rc = err_prefix(e, "sample.tokens[%zu]", i);
		else if (!(text = aggfile_text_of(texts, line)))
			rc = err_set(e, "sample.tokens[%zu]: no text for line %llu", i, (unsigned long long)line);
		else if (!json_is_string(qs) || !json_is_string(ks) ||
			 b64_read_floats(json_string_value(qs), json_string_length(qs), q, (size_t)s->dim) < 0 ||
			 b64_read_floats(json_string_value(ks), json_string_length(ks), k, (size_t)s->dim) < 0)
			rc = err_set(e, "sample.tokens[%zu]: \"q\" or \"k\" is not the base64 of %d floats", i, s->dim);
		else if (!aggsample_finite(q, s->dim) || !aggsample_finite(k, s->dim))
			rc = err_set(e, "sample.tokens[%zu]: a vector is not finite", i);
		else {
			aggfile_cstr(text, "text", false, &tx, e);
			aggfile_cstr(text, "text_b", true, &tb, e);
			rc = aggsample_offer(s, aggsample_key(line, (int)token), line, (int)token, piece, tx, tb, q, k, e);
		}
	}
	free(q);
	if (rc < 0)
		return -1;
	aggsample_sort(s);
	for (int i = 1; i < s->n; i++)
		if (s->tok[i].line == s->tok[i - 1].line && s->tok[i].token == s->tok[i - 1].token)
			return err_set(e, "sample: token %d of line %llu is in twice", s->tok[i].token,
				       (unsigned long long)s->tok[i].line);
	return 0;
}

/* The aggregate J describes (not consumed). */
static int aggfile_from_json(json_t *j, struct aggregate **out, struct err *e)
{
	struct agg_model m;
	struct aggregate *a = NULL;
	json_t *fmt = json_object_get(j, "format"), *ver = json_object_get(j, "version"), *sample = json_object_get(j, "sample");
	int rc = 0;
	if (!json_is_object(j) || !json_is_string(fmt) || strcmp(json_string_value(fmt), AGGFILE_FORMAT))
		rc = err_set(e, "not an attnscope aggregate (no \"format\": \"%s\")", AGGFILE_FORMAT);
	else if (json_is_integer(ver) && json_integer_value(ver) >= 1 && json_integer_value(ver) < AGGFILE_VERSION)
		rc = err_set(e, "aggregate format version %lld is older than %d: it lacks the query/key statistics and "
				"distributions; run the corpus again with this attnscope",
			     (long long)json_integer_value(ver), AGGFILE_VERSION);
	else if (!json_is_integer(ver) || json_integer_value(ver) != AGGFILE_VERSION)
		rc = err_set(e, "aggregate format version %s is not %d (a newer attnscope wrote it?)",
			     json_is_integer(ver) ? "other" : "missing", AGGFILE_VERSION);
	else if (aggfile_model(json_object_get(j, "model"), &m, e) < 0 || !(a = aggregate_new(&m, 0, 0, e)))
		rc = -1;
	else if (aggfile_sources(json_object_get(j, "sources"), a, e) < 0 ||
		 aggfile_counts(json_object_get(j, "counts"), &a->c, e) < 0 ||
		 aggfile_heads(json_object_get(j, "heads"), a, e) < 0 || aggfile_qk(json_object_get(j, "heads"), a, e) < 0 ||
		 aggfile_layers(json_object_get(j, "layers"), a, e) < 0 || aggfile_sample(sample, a, e) < 0)
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
