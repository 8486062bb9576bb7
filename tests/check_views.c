/* check_views.c -- the numbers the analysis views print are the independent numpy computation's.
 *
 * For each fixture case in tests/data/analysis (written by tests/tools/ref_analysis.py from the
 * reference forward pass), the model runs on the case's text and every analysis view is drawn
 * headlessly with print_trace, exactly as `--print VIEW` draws it. The numbers are read back from
 * the text and compared with numpy's to the precision they are printed with: head finder scores,
 * the query/key normalisation figures, rollout sources, per-head Q/K descriptives, dot-product
 * and weight-distribution summaries, and the per-layer projections of the vectors view. The views
 * that follow the notebooks by default (dots, softmax, qkstats, vectors) are compared with
 * tests/data/notebooks (tests/tools/ref_notebooks.py: the notebooks' cells), kernel density
 * bandwidths included. Also: every view draws within the width asked for, at two widths, in
 * UTF-8 and ASCII. */
#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw/canvas.h"
#include "trace/headscore.h"
#include "engine/model.h"
#include "tui/print.h"
#include "tui/ui.h"
#include "views/registry.h"
#include "testutil.h"

static double jnum(json_t *v)
{
	return json_is_null(v) ? NAN : json_number_value(v);
}

struct fixture {
	json_t *root;
	json_t *nb;     /* tests/data/notebooks/<name>.json */
	struct model *m;
	struct trace *t;
	const char *name;
};

static void fixture_load(struct fixture *f, const char *name)
{
	char path[PATH_MAX], dir[PATH_MAX];
	snprintf(path, sizeof path, "%s/tests/data/analysis/%s.json", testutil_srcdir(), name);
	json_error_t je;
	f->root = json_load_file(path, 0, &je);
	ck_assert_msg(f->root, "%s:%d: %s", path, je.line, je.text);
	f->name = name;
	snprintf(path, sizeof path, "%s/tests/data/notebooks/%s.json", testutil_srcdir(), name);
	f->nb = json_load_file(path, 0, &je);
	ck_assert_msg(f->nb, "%s:%d: %s", path, je.line, je.text);
	snprintf(dir, sizeof dir, "%s/%s", testutil_srcdir(), json_string_value(json_object_get(f->root, "model_dir")));
	struct err e = {{0}};
	ck_assert_msg(model_open(dir, &f->m, &e) == 0, "%s", e.msg);
	ck_assert_msg(model_run(f->m, json_string_value(json_object_get(f->root, "text")),
				json_string_value(json_object_get(f->root, "text_b")), NULL, &f->t, &e) == 0,
		      "%s", e.msg);
}

static void fixture_free(struct fixture *f)
{
	trace_free(f->t);
	model_close(f->m);
	json_decref(f->root);
	json_decref(f->nb);
}

static const char *render_sort; /* o.sort for the next render (the head finder's --sort) */

/* Draw VIEW of the fixture's trace, monochrome, WIDTH columns. */
static char *render(const struct fixture *f, const char *view, int width, int layer, int head, int token, bool utf8)
{
	setenv("LC_ALL", utf8 ? "C.UTF-8" : "C", 1);
	struct ui_options o;
	print_options_init(&o);
	o.color = UI_COLOR_NEVER;
	o.width = width;
	o.layer = layer;
	o.head = head;
	o.token = token;
	o.sort = render_sort;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct err e = {{0}};
	int rc = print_trace(f->t, view, &o, out, &e);
	fclose(out);
	ck_assert_msg(rc == 0, "%s: print_trace %s: %s", f->name, view, e.msg);
	return buf;
}

/* The line of S that contains NEEDLE (after skipping SKIP such lines), or NULL. */
static const char *find_line(const char *s, const char *needle, int skip)
{
	for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) {
		if (skip-- > 0)
			continue;
		while (p > s && p[-1] != '\n')
			p--;
		return p;
	}
	return NULL;
}

static void near(double got, double want, double tol, const char *what, const struct fixture *f)
{
	ck_assert_msg(fabs(got - want) <= tol, "%s: %s printed %.6f, numpy %.6f", f->name, what, got, want);
}

/* Head finder: every row's printed scores against numpy's (3 decimals, distance 2). */
static void check_heads(const struct fixture *f)
{
	char *s = render(f, "heads", 160, 0, 0, -1, true);
	const char *hdr = find_line(s, "  head ", 0);
	ck_assert_msg(hdr, "%s: no header in\n%s", f->name, s);
	/* Column names in order. */
	int kinds[HS_COUNT], nk = 0;
	char line[1024];
	snprintf(line, sizeof line, "%.*s", (int)strcspn(hdr, "\n"), hdr);
	for (char *tok = strtok(line, " "); tok; tok = strtok(NULL, " ")) {
		int k = headscore_by_name(tok);
		if (k >= 0)
			kinds[nk++] = k;
	}
	ck_assert_int_ge(nk, 6);
	int rows = 0;
	json_t *heads = json_object_get(f->root, "heads");
	for (const char *p = strchr(hdr, '\n'); p && *p; p = strchr(p + 1, '\n')) {
		int l, h, used;
		char row[1024];
		snprintf(row, sizeof row, "%.*s", (int)strcspn(p + 1, "\n"), p + 1);
		if (sscanf(row, " %*s L%d H%d%n", &l, &h, &used) != 2 && sscanf(row, " L%d H%d%n", &l, &h, &used) != 2)
			continue;
		const char *q = row + used;
		json_t *ref = json_array_get(json_array_get(heads, l), h);
		for (int c = 0; c < nk; c++) {
			char cell[32];
			int adv;
			ck_assert(sscanf(q, "%31s%n", cell, &adv) == 1);
			q += adv;
			/* sink is first's weight on models without learned sinks (the fixtures'; tests/sinks.sh
			 * checks gpt-oss's), and numpy's list predates it */
			int kind = kinds[c] == HS_SINK && !f->t->sinks ? HS_FIRST : kinds[c];
			double want = jnum(json_array_get(json_object_get(ref, "scores"), kind));
			if (!strcmp(cell, "-")) {
				ck_assert_msg(isnan(want), "%s L%d H%d %s: printed '-', numpy %g", f->name, l, h,
					      headscore_name(kinds[c]), want);
				continue;
			}
			char what[64];
			snprintf(what, sizeof what, "L%d H%d %s", l, h, headscore_name(kinds[c]));
			near(atof(cell), want, kinds[c] == HS_DISTANCE ? 0.005 + 1e-6 : 0.0005 + 1e-6, what, f);
		}
		/* The label follows the scores. */
		char label[32] = "";
		sscanf(q, "%31s", label);
		const char *want = json_string_value(json_object_get(ref, "label"));
		ck_assert_msg(!strcmp(label, want), "%s L%d H%d: label '%s', numpy '%s'", f->name, l, h, label, want);
		rows++;
	}
	ck_assert_int_eq(rows, f->t->n_layers * f->t->n_heads);
	free(s);

	/* Sorted by a score (--sort): rows in numpy's order of that score, largest first. */
	render_sort = "entropy";
	s = render(f, "heads", 160, 0, 0, -1, true);
	render_sort = NULL;
	ck_assert_msg(strstr(s, "sorted by entropy, largest first"), "%s: not sorted:\n%s", f->name, s);
	double last = INFINITY;
	rows = 0;
	for (const char *p = strstr(s, "\n  head "); p && *p; p = strchr(p + 1, '\n')) {
		int l, h;
		char row[1024];
		snprintf(row, sizeof row, "%.*s", (int)strcspn(p + 1, "\n"), p + 1);
		if (sscanf(row, " %*s L%d H%d", &l, &h) != 2 && sscanf(row, " L%d H%d", &l, &h) != 2)
			continue;
		double v = jnum(json_array_get(json_object_get(json_array_get(json_array_get(heads, l), h), "scores"),
					       HS_ENTROPY));
		ck_assert_msg(v <= last + 1e-9, "%s: L%d H%d (entropy %g) after one with %g", f->name, l, h, v, last);
		last = v;
		rows++;
	}
	ck_assert_int_eq(rows, f->t->n_layers * f->t->n_heads);
	free(s);
}

/* "X → Y" at P. */
static void before_after(const char *p, double *x, double *y)
{
	char *end;
	*x = strtod(p, &end);
	ck_assert(end != p);
	const char *arrow = strstr(end, "→");
	ck_assert(arrow && arrow - end < 4);
	*y = strtod(arrow + strlen("→"), &end);
	ck_assert(end != arrow + strlen("→"));
}

/* Query/key geometry: c, correlations and distances of a head (equal-norms mode). */
static void check_qk(const struct fixture *f, int layer, int head)
{
	char *s = render(f, "qk", 200, layer, head, -1, true);
	json_t *ref = json_array_get(json_array_get(json_object_get(f->root, "qknorm"), layer), head);
	const char *l1 = find_line(s, "c = ", 0), *l2 = find_line(s, "argmax-key distance", 0);
	ck_assert_msg(l1 && l2, "%s: qk view lines missing:\n%s", f->name, s);
	double c, cb, ca, ab, aa, mb, ma;
	ck_assert(sscanf(strstr(l1, "c = "), "c = %lf", &c) == 1);
	before_after(strstr(l1, "distance) ") + strlen("distance) "), &cb, &ca);
	before_after(strstr(l2, "distance ") + strlen("distance "), &ab, &aa);
	before_after(strstr(l2, "pairs ") + strlen("pairs "), &mb, &ma);
	near(c, jnum(json_object_get(ref, "c")), 5e-5 + 1e-6, "c", f);
	near(cb, jnum(json_object_get(ref, "corr_before")), 5e-4 + 1e-6, "corr before", f);
	near(ca, jnum(json_object_get(ref, "corr_after")), 5e-4 + 1e-6, "corr after", f);
	near(ab, jnum(json_object_get(ref, "argmax_before")), 5e-4 + 1e-5, "argmax distance before", f);
	near(aa, jnum(json_object_get(ref, "argmax_after")), 5e-4 + 1e-5, "argmax distance after", f);
	near(mb, jnum(json_object_get(ref, "meandist_before")), 5e-4 + 1e-5, "mean distance before", f);
	near(ma, jnum(json_object_get(ref, "meandist_after")), 5e-4 + 1e-5, "mean distance after", f);
	free(s);
}

static int cmp_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* Rollout: the side panel's top sources of TOKEN after LAYER, against numpy's row. */
static void check_rollout(const struct fixture *f, int layer, int token)
{
	char *s = render(f, "rollout", 200, layer, 0, token, true);
	json_t *row = json_array_get(json_array_get(json_object_get(f->root, "rollout"), layer), token);
	size_t n = json_array_size(row);
	double *want = malloc(n * sizeof *want);
	for (size_t j = 0; j < n; j++)
		want[j] = jnum(json_array_get(row, j));
	qsort(want, n, sizeof *want, cmp_desc);
	int seen = 0;
	for (size_t j = 0; j < n; j++) {
		char tag[16];
		snprintf(tag, sizeof tag, "%2zu. ", j + 1);
		const char *p = strstr(s, tag);
		if (!p)
			break;
		near(atof(p + strlen(tag)), want[j], 5e-5 + 1e-6, "rollout source", f);
		seen++;
	}
	ck_assert_int_eq(seen, (int)n);
	free(want);
	free(s);
}

/* "n N  mean M  std S" at the K-th occurrence in S against the notebook's {n, mean, std}. */
static void check_summary(const struct fixture *f, const char *s, int k, json_t *ref, double tol, const char *what)
{
	const char *p = s;
	for (int i = 0; i <= k; i++) {
		p = strstr(p, i ? "  n " : "n ");
		ck_assert_msg(p, "%s: %s summary %d missing", f->name, what, k);
		if (i < k)
			p++;
	}
	size_t n;
	double m, sd;
	ck_assert(sscanf(p, " n %zu mean %lf std %lf", &n, &m, &sd) == 3);
	ck_assert_uint_eq(n, (size_t)json_integer_value(json_object_get(ref, "n")));
	near(m, jnum(json_object_get(ref, "mean")), tol, what, f);
	near(sd, jnum(json_object_get(ref, "std")), tol, what, f);
}

/* The K-th density note after TAG in S: "TAG<h>" against the KDE's bandwidth (3 significant
 * digits), or "no density" where scipy has none. */
static void check_density(const struct fixture *f, const char *s, int k, json_t *kde, const char *what)
{
	const char *p = s;
	for (int i = 0; i <= k; i++) {
		const char *h = strstr(p, " h "), *none = strstr(p, "no density");
		p = !h ? none : !none ? h : h < none ? h : none;
		ck_assert_msg(p, "%s: %s density note %d missing", f->name, what, k);
		if (i < k)
			p++;
	}
	if (json_is_null(kde)) {
		ck_assert_msg(!strncmp(p, "no density", 10), "%s: %s has a density where scipy has none", f->name, what);
		return;
	}
	ck_assert_msg(!strncmp(p, " h ", 3), "%s: %s: no density where scipy has one", f->name, what);
	double h = atof(p + 3), want = jnum(json_object_get(kde, "bandwidth"));
	ck_assert_msg(fabs(h - want) <= 5e-3 * want + 1e-9, "%s: %s bandwidth printed %g, scipy %g", f->name, what, h,
		      want);
}

/* Does S hold a braille cell (U+2800..U+28FF: the density curves' dots)? */
static bool has_braille(const char *s)
{
	for (const char *p = strstr(s, "\xe2"); p; p = strstr(p + 1, "\xe2"))
		if ((unsigned char)p[1] >= 0xa0 && (unsigned char)p[1] <= 0xa3)
			return true;
	return false;
}

static void check_distributions(const struct fixture *f, int layer)
{
	char *s = render(f, "softmax", 120, layer, 0, -1, true);
	json_t *groups = json_array_get(json_object_get(json_object_get(f->nb, "nb004"), "softmax"), layer);
	ck_assert(strstr(s, "notebook 004: a["));
	const char *line = find_line(s, "mean ", 0);
	ck_assert(line);
	const char *notes = find_line(s, "highest bar", 0);
	if (!notes)
		notes = find_line(s, "no density", 0);
	ck_assert(notes);
	for (int k = 0; k < 3; k++) {
		json_t *g = json_array_get(groups, k);
		check_summary(f, line, k, json_object_get(g, "summary"), 5e-5 + 1e-6, "attention group");
		check_density(f, notes, k, json_object_get(g, "kde"), "attention group");
	}
	ck_assert_msg(has_braille(notes), "%s: no density curve drawn", f->name);
	free(s);

	s = render(f, "dots", 120, layer, 0, -1, true);
	json_t *d = json_array_get(json_object_get(json_object_get(f->nb, "nb004"), "dots"), layer);
	char keys[64];
	snprintf(keys, sizeof keys, "notebook 004: keys 1\xe2\x80\xa6%d (%d keys)", f->t->n - 2, f->t->n - 2);
	ck_assert_msg(strstr(s, keys), "%s: no '%s' in\n%s", f->name, keys, s);
	line = find_line(s, "mean ", 0);
	ck_assert(line);
	/* Printed to 3 decimals; relative to the size of the products. */
	double m0 = fabs(jnum(json_object_get(json_object_get(d, "same"), "std")));
	check_summary(f, line, 0, json_object_get(d, "same"), 5e-4 + 1e-6 * (1 + m0), "same-head products");
	check_summary(f, line, 1, json_object_get(d, "diff"), 5e-4 + 1e-6 * (1 + m0), "different-head products");
	const char *notes2 = find_line(s, "curve: ", 0);
	if (!notes2)
		notes2 = find_line(s, "no density", 0);
	ck_assert(notes2);
	check_density(f, notes2, 0, json_object_get(d, "same_kde"), "same-head products");
	check_density(f, notes2, 1, json_object_get(d, "diff_kde"), "different-head products");
	ck_assert_msg(has_braille(strstr(s, "curve: ")), "%s: no density curve drawn", f->name);
	free(s);
	/* Without UTF-8 the curve is a '*' per column, over '#' bars. */
	s = render(f, "dots", 120, layer, 0, -1, false);
	ck_assert_msg(strstr(s, "***"), "%s: no ASCII density curve in\n%s", f->name, s);
	free(s);
}

/* Q/K statistics: "Hh q ... +m ± s" rows, as the notebook: first token left out, Bessel's std. */
static void check_qkstats(const struct fixture *f, int layer)
{
	char *s = render(f, "qkstats", 120, layer, 0, -1, true);
	ck_assert(strstr(s, "notebook 004: std over n-1"));
	json_t *ref = json_array_get(json_object_get(json_object_get(f->nb, "nb004"), "qk_stats"), layer);
	for (int h = 0; h < f->t->n_heads; h++)
		for (int k = 0; k < 2; k++) {
			char tag[16];
			snprintf(tag, sizeof tag, "H%d %s ", h, k ? "k" : "q");
			const char *line = find_line(s, tag, 0);
			ck_assert_msg(line, "%s: no row %s", f->name, tag);
			const char *pm = strstr(line, " ± ");
			ck_assert(pm && pm < strchr(line, '\n'));
			const char *num = pm;
			while (num > line && num[-1] != ' ')
				num--;
			json_t *r = json_array_get(ref, h);
			near(atof(num), jnum(json_object_get(r, k ? "k_mean" : "q_mean")), 5e-4 + 1e-6, "Q/K mean", f);
			near(atof(pm + strlen(" ± ")), jnum(json_object_get(r, k ? "k_std" : "q_std")), 5e-4 + 1e-6, "Q/K std", f);
		}
	free(s);
}

/* Vectors view at layer 0: the Frobenius norm of the notebook's coordinates, and per layer
 * "Ll coef X cos Y" of the notebook's projection in the PCA plane for A = the last kept token,
 * B = the first (the defaults). */
static void check_vectors(const struct fixture *f)
{
	char *s = render(f, "vectors", 120, 0, 0, -1, true);
	json_t *nb0 = json_object_get(f->nb, "nb000");
	const char *p = strstr(s, "Frobenius norm ");
	ck_assert_msg(p, "%s: no Frobenius norm in\n%s", f->name, s);
	double norm = atof(p + strlen("Frobenius norm ")), want = jnum(json_object_get(json_array_get(nb0, 0), "norm"));
	ck_assert_msg(fabs(norm - want) <= 5e-4 * want, "%s: Frobenius norm printed %g, notebook %g", f->name, norm, want);
	for (int l = 0; l < f->t->n_layers; l++) {
		json_t *pj = json_object_get(json_array_get(nb0, l), "projection");
		char tag[32];
		snprintf(tag, sizeof tag, "L%d coef ", l);
		p = strstr(s, tag);
		ck_assert_msg(p, "%s: no '%s' in\n%s", f->name, tag, s);
		double coef, cosv;
		ck_assert(sscanf(p + strlen(tag), "%lf cos %lf", &coef, &cosv) == 2);
		near(coef, jnum(json_object_get(pj, "coef")), 5e-3 + 1e-6, "projection coefficient", f);
		near(cosv, jnum(json_object_get(pj, "coef")), 5e-3 + 1e-6, "projection cosine", f); /* unit a, b */
	}
	char ab[64];
	json_t *pj0 = json_object_get(json_array_get(nb0, 0), "projection");
	snprintf(ab, sizeof ab, "(%d) onto B = ", (int)json_integer_value(json_object_get(pj0, "a")));
	ck_assert_msg(strstr(s, ab), "%s: A is not token %d", f->name, (int)json_integer_value(json_object_get(pj0, "a")));
	free(s);
}

/* No view draws past the width asked for, in UTF-8 or ASCII, wide or narrow. */
static void check_widths(const struct fixture *f)
{
	struct palette pal = {.utf8 = true};
	struct canvas probe = {.pal = &pal};
	const int widths[] = {60, 100};
	for (int u = 0; u < 2; u++)
		for (int i = 0; registry_views[i]; i++)
			for (int w = 0; w < 2; w++) {
				char *s = render(f, registry_views[i]->name, widths[w], 1, 0, 2, u == 0);
				if (u == 1)
					for (const char *c = s; *c; c++)
						assert_each((unsigned char)*c < 0x80, "%s: view %s is not ASCII in the C locale",
							    f->name, registry_views[i]->name);
				for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n"))
					assert_each(canvas_text_width(&probe, line) <= widths[w], "%s: view %s wider than %d:\n%s",
						    f->name, registry_views[i]->name, widths[w], line);
				free(s);
			}
}

static const char *const cases[] = {"bert-mini--pair", "gpt2-mini--long", "bert-mini-sharded--pair",
				    "gpt2-mini-bf16--unicode"};

START_TEST(test_views_numbers)
{
	struct fixture f;
	fixture_load(&f, cases[_i]);
	check_heads(&f);
	for (int l = 0; l < f.t->n_layers; l++) {
		check_qk(&f, l, f.t->n_heads - 1);
		check_rollout(&f, l, f.t->n / 2);
		check_distributions(&f, l);
		check_qkstats(&f, l);
	}
	check_vectors(&f);
	check_widths(&f);
	printf("%s: head finder, query/key geometry, rollout, distributions, products, Q/K statistics and "
	       "projections as printed agree with numpy\n", f.name);
	fixture_free(&f);
}
END_TEST

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	Suite *s = suite_create("views");
	TCase *tc = tcase_create("numbers");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_views_numbers, 0, (int)(sizeof cases / sizeof *cases));
	suite_add_tcase(s, tc);
	return testutil_run_suite(s, false);
}
