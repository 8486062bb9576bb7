/* check_analysis.c -- the analyses (PCA, statistics, head scores, rollout) against an independent
 * numpy computation, and the notebooks' definitions against the notebooks' own formulas.
 *
 * tests/tools/ref_analysis.py computed tests/data/analysis/<case>.json from the reference forward
 * pass's attentions, queries and keys. Here the C model runs on the same text and the C analyses
 * run on its trace; every quantity is compared and the largest difference of each kind printed.
 * tests/tools/ref_notebooks.py wrote tests/data/notebooks/<case>.json with notebooks 000 and 004's
 * cells (Bessel std, keys 1 … n−2, the self-weights of tokens 1 … n−1, scipy's gaussian_kde,
 * to_xy_coords); the C functions' notebook modes are compared with those the same way.
 * Small edge cases (one row, a value on a histogram edge, sorting with NaN) are checked directly. */
#include <check.h>
#include <dirent.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/attnvec.h"
#include "trace/headscore.h"
#include "engine/model.h"
#include "analysis/pca.h"
#include "analysis/rollout.h"
#include "analysis/stats.h"
#include "testutil.h"

/* Tolerances. The C trace differs from the reference outputs by float32 rounding (attention
 * ~1e-6, q/k ~1e-5, see check_engine); statistics of them must agree to 1e-5. PCA coordinates
 * scale with the vectors (|q| up to ~10 here), so they get a relative bound. */
#define TOL_STAT 1e-5
#define TOL_PCA_REL 1e-4
#define TOL_ATTN 1e-5

static double jnum(json_t *v)
{
	return json_is_null(v) ? NAN : json_number_value(v);
}

/* |a − b|, with two NaNs equal and one NaN infinitely far. */
static double diff(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b) ? 0 : INFINITY;
	return fabs(a - b);
}

struct worst {
	double qk_desc, qk_pca, attn_pca, explained, dots, groups, qknorm, scores, rollout, vectors;
	double corr_gain;   /* how far the C search beat (negative) or missed the numpy grid's best */
	double c_opt;       /* |c(C) − c(numpy grid)| relative */
	int cases, sign_flips;
};

static void upd(double *w, double d)
{
	if (d > *w)
		*w = d;
}

/* Compare PCA coordinates XY[n][2] with REF (json [n][2]) up to the sign of each axis; returns the
 * max difference relative to the spread (max |ref|), counting axes whose sign differs. */
static double cmp_pca(const double *xy, json_t *ref, int n, int *flips)
{
	double worst = 0;
	for (int k = 0; k < 2; k++) {
		double dot = 0, scale = 0;
		for (int i = 0; i < n; i++) {
			double r = jnum(json_array_get(json_array_get(ref, i), k));
			dot += r * xy[2 * i + k];
			if (fabs(r) > scale)
				scale = fabs(r);
		}
		double sgn = dot < 0 ? -1 : 1;
		if (sgn < 0)
			(*flips)++;
		for (int i = 0; i < n; i++) {
			double r = jnum(json_array_get(json_array_get(ref, i), k));
			double d = fabs(sgn * xy[2 * i + k] - r) / (scale > 1 ? scale : 1);
			upd(&worst, d);
		}
	}
	return worst;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Values V[n] sorted against the sorted json array REF; differences relative to max(1, |ref|)
 * (raw q·k products reach a few hundred on these models). */
static double cmp_sorted(double *v, size_t n, json_t *ref)
{
	ck_assert_uint_eq(n, json_array_size(ref));
	qsort(v, n, sizeof *v, cmp_double);
	double w = 0;
	for (size_t i = 0; i < n; i++) {
		double r = jnum(json_array_get(ref, i));
		upd(&w, diff(v[i], r) / (fabs(r) > 1 ? fabs(r) : 1));
	}
	return w;
}

/* The histogram of the reference's own values must have exactly the reference's counts. */
static void check_hist(json_t *values, json_t *hist, const char *what)
{
	size_t n = json_array_size(values);
	double *v = malloc((n ? n : 1) * sizeof *v);
	for (size_t i = 0; i < n; i++)
		v[i] = jnum(json_array_get(values, i));
	json_t *counts = json_object_get(hist, "counts");
	int bins = (int)json_array_size(counts);
	int *c = calloc((size_t)bins, sizeof *c);
	size_t counted = stats_histogram(v, n, jnum(json_object_get(hist, "lo")), jnum(json_object_get(hist, "hi")),
					 bins, c);
	ck_assert_uint_eq(counted, n);
	for (int b = 0; b < bins; b++)
		ck_assert_msg(c[b] == (int)json_integer_value(json_array_get(counts, b)), "%s: bin %d has %d, numpy %d",
			      what, b, c[b], (int)json_integer_value(json_array_get(counts, b)));
	free(v);
	free(c);
}

/* Mean and std of V[n] against RM and RS, relative to max(1, |ref|). */
static void cmp_mean_std(const double *v, size_t n, double rm, double rs, double *w)
{
	double m, s;
	stats_mean_std(v, n, &m, &s);
	upd(w, diff(m, rm) / (fabs(rm) > 1 ? fabs(rm) : 1));
	upd(w, diff(s, rs) / (fabs(rs) > 1 ? fabs(rs) : 1));
}

/* The same against REF [mean, std]. */
static void check_mean_std(const double *v, size_t n, json_t *ref, double *w)
{
	cmp_mean_std(v, n, jnum(json_array_get(ref, 0)), jnum(json_array_get(ref, 1)), w);
}

/* Run CHECK on every fixture in tests/data/SUB: each names a model (model_dir) and a text, which
 * run first; CHECK gets the fixture and the trace. Returns how many fixtures. */
static int case_each(const char *sub, void (*check)(json_t *root, const struct trace *t, void *arg), void *arg)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/tests/data/%s", testutil_srcdir(), sub);
	DIR *dp = opendir(dir);
	ck_assert_msg(dp, "no %s", dir);
	int cases = 0;
	struct dirent *de;
	while ((de = readdir(dp))) {
		if (!strstr(de->d_name, ".json"))
			continue;
		char path[PATH_MAX], mdir[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		json_error_t je;
		json_t *root = json_load_file(path, 0, &je);
		ck_assert_msg(root, "%s:%d: %s", path, je.line, je.text);
		snprintf(mdir, sizeof mdir, "%s/%s", testutil_srcdir(), json_string_value(json_object_get(root, "model_dir")));
		struct model *m = NULL;
		struct trace *t = NULL;
		struct err e = {{0}};
		ck_assert_msg(model_open(mdir, &m, &e) == 0, "%s: %s", mdir, e.msg);
		ck_assert_msg(model_run(m, json_string_value(json_object_get(root, "text")),
					json_string_value(json_object_get(root, "text_b")), NULL, &t, &e) == 0,
			      "%s: %s", path, e.msg);
		check(root, t, arg);
		trace_free(t);
		model_close(m);
		json_decref(root);
		cases++;
	}
	closedir(dp);
	return cases;
}

static void check_case(json_t *root, const struct trace *t, void *arg)
{
	struct worst *w = arg;
	const char *name = json_string_value(json_object_get(root, "case"));
	struct err e = {{0}};
	int n = t->n, L = t->n_layers, H = t->n_heads, d = t->head_dim;
	ck_assert_int_eq(n, (int)json_integer_value(json_object_get(root, "n")));
	ck_assert_int_eq(L, (int)json_integer_value(json_object_get(root, "n_layers")));
	ck_assert_int_eq(H, (int)json_integer_value(json_object_get(root, "n_heads")));
	ck_assert_int_eq(d, (int)json_integer_value(json_object_get(root, "head_dim")));
	ck_assert(t->causal == json_is_true(json_object_get(root, "causal")));
	for (int i = 0; i < n; i++) {
		ck_assert_str_eq(t->tokens[i], json_string_value(json_array_get(json_object_get(root, "tokens"), i)));
		ck_assert_msg(t->special[i] == json_is_true(json_array_get(json_object_get(root, "special"), i)),
			      "%s: token %d special flag", name, i);
		ck_assert_msg(headscore_is_punct(t, i) == json_is_true(json_array_get(json_object_get(root, "punct"), i)),
			      "%s: token %d '%s' punctuation", name, i, t->tokens[i]);
	}
	struct worst cw = {0};

	/* Q/K descriptives, with and without the first token. */
	struct stats_qk_desc *desc = calloc((size_t)H, sizeof *desc);
	for (int l = 0; l < L; l++)
		for (int skip = 0; skip < 2; skip++) {
			stats_qk_desc(t, l, skip, false, desc);
			for (int h = 0; h < H; h++) {
				json_t *r = json_array_get(json_array_get(json_object_get(root, "qk_desc"), l), h);
				json_t *rq = json_object_get(r, skip ? "q_skip" : "q"), *rk = json_object_get(r, skip ? "k_skip" : "k");
				upd(&cw.qk_desc, diff(desc[h].q_mean, jnum(json_array_get(rq, 0))));
				upd(&cw.qk_desc, diff(desc[h].q_std, jnum(json_array_get(rq, 1))));
				upd(&cw.qk_desc, diff(desc[h].k_mean, jnum(json_array_get(rk, 0))));
				upd(&cw.qk_desc, diff(desc[h].k_std, jnum(json_array_get(rk, 1))));
			}
		}
	free(desc);

	/* Joint PCA of each head's queries and keys; the AttentionViz normalisation. */
	float *qk = malloc((size_t)2 * n * d * sizeof *qk);
	double *xy = malloc((size_t)2 * n * 2 * sizeof *xy);
	for (int l = 0; l < L; l++)
		for (int h = 0; h < H; h++) {
			memcpy(qk, trace_q(t, l, h), (size_t)n * d * sizeof *qk);
			memcpy(qk + (size_t)n * d, trace_k(t, l, h), (size_t)n * d * sizeof *qk);
			double expl[2];
			ck_assert_msg(pca_2d(qk, 2 * n, d, xy, expl, &e) == 0, "%s", e.msg);
			json_t *r = json_array_get(json_array_get(json_object_get(root, "qk_pca"), l), h);
			upd(&cw.qk_pca, cmp_pca(xy, json_object_get(r, "xy"), 2 * n, &cw.sign_flips));
			for (int k = 0; k < 2; k++)
				upd(&cw.explained, diff(expl[k], jnum(json_array_get(json_object_get(r, "explained"), k))));

			json_t *rn = json_array_get(json_array_get(json_object_get(root, "qknorm"), l), h);
			struct qknorm qn;
			ck_assert(stats_qknorm(t, l, h, QKNORM_NORMS, &qn, NULL, NULL, &e) == 0);
			double c = jnum(json_object_get(rn, "c"));
			upd(&cw.qknorm, diff(qn.c, c) / c);
			upd(&cw.qknorm, diff(qn.corr_before, jnum(json_object_get(rn, "corr_before"))));
			upd(&cw.qknorm, diff(qn.corr_after, jnum(json_object_get(rn, "corr_after"))));
			const char *rel[] = {"argmax_before", "argmax_after", "meandist_before", "meandist_after",
					     "qnorm_before", "knorm_before"};
			double got[] = {qn.argmax_before, qn.argmax_after, qn.meandist_before, qn.meandist_after,
					qn.qnorm_before, qn.knorm_before};
			for (int k = 0; k < 6; k++) {
				double r0 = jnum(json_object_get(rn, rel[k]));
				upd(&cw.qknorm, diff(got[k], r0) / (r0 > 1 ? r0 : 1));
			}
			/* Mean norms are equal after the norms mode, by construction. */
			ck_assert(fabs(qn.qnorm_after - qn.knorm_after) <= 1e-9 * (1 + qn.qnorm_after));
			/* The correlation mode must find at least what numpy's dense grid finds. */
			ck_assert(stats_qknorm(t, l, h, QKNORM_CORR, &qn, NULL, NULL, &e) == 0);
			double best = jnum(json_object_get(rn, "best_corr"));
			ck_assert_msg(qn.corr_after <= best + 1e-5, "%s L%d H%d: corr mode %.8f, numpy grid %.8f", name, l, h,
				      qn.corr_after, best);
			upd(&cw.corr_gain, qn.corr_after - best);
			upd(&cw.c_opt, diff(qn.c, jnum(json_object_get(rn, "best_c"))) / jnum(json_object_get(rn, "best_c")));
		}
	free(qk);
	free(xy);

	/* PCA of the attention rows, mean over the layer's heads. */
	float *rows = malloc((size_t)n * n * sizeof *rows);
	double *rxy = malloc((size_t)n * 2 * sizeof *rxy);
	for (int l = 0; l < L; l++) {
		for (size_t x = 0; x < (size_t)n * n; x++) {
			double s = 0;
			for (int h = 0; h < H; h++)
				s += trace_attn(t, l, h)[x];
			rows[x] = (float)(s / H);
		}
		double expl[2];
		ck_assert(pca_2d(rows, n, n, rxy, expl, &e) == 0);
		json_t *r = json_array_get(json_object_get(root, "attn_pca"), l);
		upd(&cw.attn_pca, cmp_pca(rxy, json_object_get(r, "xy"), n, &cw.sign_flips));
		for (int k = 0; k < 2; k++)
			upd(&cw.explained, diff(expl[k], jnum(json_array_get(json_object_get(r, "explained"), k))));
	}
	free(rows);
	free(rxy);

	/* Same-head / different-head dot products of the last token; attention groups. */
	for (int l = 0; l < L; l++) {
		json_t *r = json_array_get(json_object_get(root, "dots"), l);
		struct stats_dots dd;
		ck_assert(stats_qk_dots(t, l, (int)json_integer_value(json_object_get(r, "query")),
					STATS_DOTS_VISIBLE, &dd, &e) == 0);
		ck_assert(json_is_true(json_object_get(r, "visible_only")) == t->causal); /* every key it sees */
		check_mean_std(dd.same, dd.n_same, json_object_get(r, "same_mean_std"), &cw.dots);
		check_mean_std(dd.diff, dd.n_diff, json_object_get(r, "diff_mean_std"), &cw.dots);
		upd(&cw.dots, cmp_sorted(dd.same, dd.n_same, json_object_get(r, "same")));
		upd(&cw.dots, cmp_sorted(dd.diff, dd.n_diff, json_object_get(r, "diff")));
		check_hist(json_object_get(r, "same"), json_object_get(r, "same_hist"), "same-head dots");
		check_hist(json_object_get(r, "diff"), json_object_get(r, "diff_hist"), "different-head dots");
		stats_dots_free(&dd);

		struct stats_groups g;
		ck_assert(stats_attn_groups(t, l, false, &g, &e) == 0);
		for (int k = 0; k < STATS_GROUP_COUNT; k++) {
			json_t *rg = json_array_get(json_array_get(json_object_get(root, "groups"), l), k);
			json_t *vals = json_object_get(rg, "values");
			ck_assert_uint_eq(g.n[k], json_array_size(vals));
			for (size_t i = 0; i < g.n[k]; i++)
				upd(&cw.groups, diff(g.v[k][i], jnum(json_array_get(vals, i))));
			check_mean_std(g.v[k], g.n[k], json_object_get(rg, "mean_std"), &cw.groups);
			check_hist(vals, json_object_get(rg, "hist"), stats_group_name(k));
		}
		stats_groups_free(&g);
	}

	/* Head scores and labels. */
	struct headscore *hs = calloc((size_t)L * H, sizeof *hs);
	ck_assert(headscore_all(t, hs) == 0);
	for (int l = 0; l < L; l++)
		for (int h = 0; h < H; h++) {
			json_t *r = json_array_get(json_array_get(json_object_get(root, "heads"), l), h);
			const struct headscore *s = &hs[l * H + h];
			for (int k = 0; k < HS_CHANGED; k++) { /* "changed" needs a second text */
				double ref = jnum(json_array_get(json_object_get(r, "scores"), k));
				double dk = diff(s->s[k], ref);
				ck_assert_msg(dk <= TOL_STAT * (k == HS_DISTANCE ? 10 : 1), "%s L%d H%d %s: %g vs numpy %g", name, l,
					      h, headscore_name(k), s->s[k], ref);
				upd(&cw.scores, k == HS_DISTANCE ? dk / 10 : dk);
			}
			upd(&cw.scores, diff(s->entropy_norm, jnum(json_object_get(r, "entropy_norm"))));
			ck_assert_msg(!strcmp(s->label, json_string_value(json_object_get(r, "label"))),
				      "%s L%d H%d: label '%s', numpy '%s'", name, l, h, s->label,
				      json_string_value(json_object_get(r, "label")));
		}
	free(hs);

	/* Rollout through every layer. */
	float *ro = malloc((size_t)L * n * n * sizeof *ro);
	ck_assert(rollout_compute(t, ro, &e) == 0);
	for (int l = 0; l < L; l++)
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++) {
				json_t *r = json_array_get(json_array_get(json_array_get(json_object_get(root, "rollout"), l), i), j);
				upd(&cw.rollout, diff(ro[((size_t)l * n + i) * n + j], jnum(r)));
			}
	free(ro);

	/* Attention rows as vectors: kept tokens, PCA, projections. */
	json_t *vecs = json_object_get(root, "vectors");
	for (size_t i = 0; i < json_array_size(vecs); i++) {
		json_t *r = json_array_get(vecs, i);
		struct attnvec av;
		ck_assert(attnvec_rows(t, (int)json_integer_value(json_object_get(r, "layer")),
				       (int)json_integer_value(json_object_get(r, "head")),
				       json_is_true(json_object_get(r, "hide_special")) ? ATTNVEC_DROP_RENORM : ATTNVEC_KEEP,
				       json_is_true(json_object_get(r, "unit")),
				       &av, &e) == 0);
		ck_assert(attnvec_pca(&av, &e) == 0);
		json_t *toks = json_object_get(r, "tokens");
		ck_assert_int_eq(av.m, (int)json_array_size(toks));
		for (int a = 0; a < av.m; a++)
			ck_assert_int_eq(av.tok[a], (int)json_integer_value(json_array_get(toks, a)));
		upd(&cw.attn_pca, cmp_pca(av.xy, json_object_get(r, "xy"), av.m, &cw.sign_flips));
		for (int k = 0; k < 2; k++)
			upd(&cw.explained, diff(av.explained[k], jnum(json_array_get(json_object_get(r, "explained"), k))));
		json_t *projs = json_object_get(r, "projections");
		for (size_t j = 0; j < json_array_size(projs); j++) {
			json_t *pj = json_array_get(projs, j);
			struct attnvec_proj pr;
			ck_assert(attnvec_project(&av, (int)json_integer_value(json_object_get(pj, "a")),
						  (int)json_integer_value(json_object_get(pj, "b")), &pr) == 0);
			upd(&cw.vectors, diff(pr.coef, jnum(json_object_get(pj, "coef"))));
			upd(&cw.vectors, diff(pr.cos, jnum(json_object_get(pj, "cos"))));
			for (int k = 0; k < 2; k++) {
				upd(&cw.vectors, diff(pr.a[k], jnum(json_array_get(json_object_get(pj, "plane_a"), k))));
				upd(&cw.vectors, diff(pr.b[k], jnum(json_array_get(json_object_get(pj, "plane_b"), k))));
			}
			/* The projection is coef·B, on B's axis. */
			ck_assert(fabs(pr.p[0] - pr.coef * pr.b[0]) < 1e-9 && pr.p[1] == 0);
		}
		/* A dropped token has no projection. */
		if (json_is_true(json_object_get(r, "hide_special")) && t->special[0]) {
			struct attnvec_proj pr;
			ck_assert_int_eq(attnvec_project(&av, 0, av.tok[0], &pr), -1);
		}
		attnvec_free(&av);
	}

	printf("%-26s qk-desc %.1e  qk-pca %.1e  attn-pca %.1e  expl %.1e  dots %.1e  groups %.1e  qknorm %.1e  "
	       "scores %.1e  rollout %.1e  vectors %.1e  corr-opt %+.1e  c-opt %.1e\n",
	       name, cw.qk_desc, cw.qk_pca, cw.attn_pca, cw.explained, cw.dots, cw.groups, cw.qknorm, cw.scores,
	       cw.rollout, cw.vectors, cw.corr_gain, cw.c_opt);
	ck_assert_msg(cw.qk_desc <= TOL_STAT, "%s: Q/K descriptives differ by %g", name, cw.qk_desc);
	ck_assert_msg(cw.qk_pca <= TOL_PCA_REL, "%s: Q/K PCA differs by %g (relative)", name, cw.qk_pca);
	ck_assert_msg(cw.attn_pca <= TOL_PCA_REL, "%s: attention-row PCA differs by %g", name, cw.attn_pca);
	ck_assert_msg(cw.explained <= TOL_STAT, "%s: explained variance differs by %g", name, cw.explained);
	ck_assert_msg(cw.dots <= TOL_STAT, "%s: dot products differ by %g (relative)", name, cw.dots);
	ck_assert_msg(cw.groups <= TOL_ATTN, "%s: attention groups differ by %g", name, cw.groups);
	ck_assert_msg(cw.qknorm <= 1e-4, "%s: normalisation differs by %g", name, cw.qknorm);
	ck_assert_msg(cw.rollout <= TOL_ATTN, "%s: rollout differs by %g", name, cw.rollout);
	ck_assert_msg(cw.vectors <= TOL_STAT, "%s: projections differ by %g", name, cw.vectors);

	upd(&w->qk_desc, cw.qk_desc), upd(&w->qk_pca, cw.qk_pca), upd(&w->attn_pca, cw.attn_pca);
	upd(&w->explained, cw.explained), upd(&w->dots, cw.dots), upd(&w->groups, cw.groups);
	upd(&w->qknorm, cw.qknorm), upd(&w->scores, cw.scores), upd(&w->rollout, cw.rollout);
	upd(&w->vectors, cw.vectors);
	w->sign_flips += cw.sign_flips;
	w->cases++;
}

START_TEST(test_against_numpy)
{
	struct worst w = {0};
	case_each("analysis", check_case, &w);
	printf("%d cases; worst: qk-desc %.2e, PCA %.2e (rel), explained %.2e, dots %.2e, groups %.2e, qknorm %.2e, "
	       "scores %.2e, rollout %.2e, projections %.2e; PCA axes with the other sign: %d\n",
	       w.cases, w.qk_desc, w.qk_pca > w.attn_pca ? w.qk_pca : w.attn_pca, w.explained, w.dots, w.groups, w.qknorm,
	       w.scores, w.rollout, w.vectors, w.sign_flips);
	ck_assert_int_ge(w.cases, 4);
	/* The sign convention is deterministic in both implementations: no flips expected. */
	ck_assert_int_eq(w.sign_flips, 0);
}
END_TEST

/* ---- the notebooks' definitions (tests/data/notebooks, tests/tools/ref_notebooks.py) ---- */

/* Tolerances: statistics as above; KDE curves (peak 1) move with the sample by about
 * |slope| · (sample error / bandwidth), a few 1e-5 here; the demo's data is exact. */
#define TOL_KDE 1e-4
#define TOL_KDE_EXACT 1e-12

struct nb_worst {
	double qk, dots, groups, kde, kde_demo, bandwidth, xy, norm, proj;
	int flips, curves, no_density;
};

/* A grid [lo, hi, m] of the fixture into a new array. */
static double *nb_grid(json_t *g, size_t *m)
{
	*m = (size_t)json_integer_value(json_array_get(g, 2));
	double *x = malloc(*m * sizeof *x);
	stats_linspace(jnum(json_array_get(g, 0)), jnum(json_array_get(g, 1)), *m, x);
	return x;
}

/* V[n] against a summary {n, mean, std} (relative to max(1, |ref|)). */
static void nb_summary(const double *v, size_t n, json_t *ref, double *w, const char *what)
{
	ck_assert_msg(n == (size_t)json_integer_value(json_object_get(ref, "n")), "%s: n %zu, notebook %d", what, n,
		      (int)json_integer_value(json_object_get(ref, "n")));
	cmp_mean_std(v, n, jnum(json_object_get(ref, "mean")), jnum(json_object_get(ref, "std")), w);
}

/* The KDE of V[n] on GRID[m] against REF ({bandwidth, y[m]}, or null for no density). */
static void nb_kde(const double *v, size_t n, const double *grid, size_t m, json_t *ref, struct nb_worst *w,
		   double *worst, const char *what)
{
	double *y = malloc(m * sizeof *y), bw;
	const char *why = stats_kde(v, n, grid, m, y, &bw);
	if (json_is_null(ref)) {
		ck_assert_msg(why != NULL, "%s: a density where scipy has none", what);
		w->no_density++;
	} else {
		ck_assert_msg(why == NULL, "%s: no density (%s) where scipy has one", what, why);
		double rb = jnum(json_object_get(ref, "bandwidth"));
		upd(&w->bandwidth, diff(bw, rb) / (rb > 1 ? rb : 1));
		json_t *ry = json_object_get(ref, "y");
		ck_assert_uint_eq(json_array_size(ry), m);
		for (size_t i = 0; i < m; i++)
			upd(worst, diff(y[i], jnum(json_array_get(ry, i))));
		w->curves++;
	}
	free(y);
}

static void check_notebook_case(json_t *root, const struct trace *t, void *arg)
{
	struct nb_worst *w = arg;
	const char *name = json_string_value(json_object_get(root, "case"));
	struct err e = {{0}};
	ck_assert_int_eq(t->n, (int)json_integer_value(json_object_get(root, "n")));
	struct nb_worst cw = {0};
	json_t *nb4 = json_object_get(root, "nb004");
	struct stats_qk_desc *desc = calloc((size_t)t->n_heads, sizeof *desc);
	for (int l = 0; l < t->n_layers; l++) {
		/* q[1:].mean(), q[1:].std() (Bessel). */
		stats_qk_desc(t, l, true, true, desc);
		for (int h = 0; h < t->n_heads; h++) {
			json_t *r = json_array_get(json_array_get(json_object_get(nb4, "qk_stats"), l), h);
			ck_assert_uint_eq(desc[h].count, (size_t)json_integer_value(json_object_get(r, "count")));
			upd(&cw.qk, diff(desc[h].q_mean, jnum(json_object_get(r, "q_mean"))));
			upd(&cw.qk, diff(desc[h].q_std, jnum(json_object_get(r, "q_std"))));
			upd(&cw.qk, diff(desc[h].k_mean, jnum(json_object_get(r, "k_mean"))));
			upd(&cw.qk, diff(desc[h].k_std, jnum(json_object_get(r, "k_std"))));
		}
		/* Q[-1] @ K[1:-1].T, same head vs different heads, and their densities. */
		json_t *r = json_array_get(json_object_get(nb4, "dots"), l);
		struct stats_dots dd;
		ck_assert(stats_qk_dots(t, l, t->n - 1, STATS_DOTS_NOTEBOOK, &dd, &e) == 0);
		ck_assert_int_eq(dd.key_lo, (int)json_integer_value(json_array_get(json_object_get(r, "keys"), 0)));
		ck_assert_int_eq(dd.key_hi, (int)json_integer_value(json_array_get(json_object_get(r, "keys"), 1)));
		nb_summary(dd.same, dd.n_same, json_object_get(r, "same"), &cw.dots, "same-head products");
		nb_summary(dd.diff, dd.n_diff, json_object_get(r, "diff"), &cw.dots, "different-head products");
		size_t gm;
		double *grid = nb_grid(json_object_get(r, "grid"), &gm);
		nb_kde(dd.same, dd.n_same, grid, gm, json_object_get(r, "same_kde"), &cw, &cw.kde, "same-head KDE");
		nb_kde(dd.diff, dd.n_diff, grid, gm, json_object_get(r, "diff_kde"), &cw, &cw.kde, "different-head KDE");
		free(grid);
		stats_dots_free(&dd);
		/* attn[-1, :-1], diag(attn[1:, 1:]), attn[0, 0] and their densities on linspace(0, 1, 300). */
		struct stats_groups g;
		ck_assert(stats_attn_groups(t, l, true, &g, &e) == 0);
		double smx[300];
		stats_linspace(0, 1, 300, smx);
		for (int k = 0; k < STATS_GROUP_COUNT; k++) {
			json_t *rg = json_array_get(json_array_get(json_object_get(nb4, "softmax"), l), k);
			nb_summary(g.v[k], g.n[k], json_object_get(rg, "summary"), &cw.groups, stats_group_name(k));
			nb_kde(g.v[k], g.n[k], smx, 300, json_object_get(rg, "kde"), &cw, &cw.kde, stats_group_name(k));
		}
		stats_groups_free(&g);
		/* to_xy_coords: specials dropped as they are, mean of the heads, PCA, / Frobenius norm. */
		json_t *rv = json_array_get(json_object_get(root, "nb000"), l);
		struct attnvec av;
		ck_assert(attnvec_rows(t, l, -1, ATTNVEC_DROP, false, &av, &e) == 0);
		ck_assert(attnvec_pca(&av, &e) == 0);
		attnvec_scale_xy(&av);
		json_t *toks = json_object_get(rv, "tokens");
		ck_assert_int_eq(av.m, (int)json_array_size(toks));
		for (int a = 0; a < av.m; a++)
			ck_assert_int_eq(av.tok[a], (int)json_integer_value(json_array_get(toks, a)));
		upd(&cw.xy, cmp_pca(av.xy, json_object_get(rv, "xy"), av.m, &cw.flips));
		double rn = jnum(json_object_get(rv, "norm"));
		upd(&cw.norm, diff(av.xy_norm, rn) / rn);
		/* vector_projection(it, book) of the unit 2-D points (the scale of xy does not matter). */
		json_t *rp = json_object_get(rv, "projection");
		struct attnvec_proj pr;
		ck_assert(attnvec_project_xy(&av, (int)json_integer_value(json_object_get(rp, "a")),
					     (int)json_integer_value(json_object_get(rp, "b")), &pr) == 0);
		upd(&cw.proj, diff(pr.coef, jnum(json_object_get(rp, "coef"))));
		for (int k = 0; k < 2; k++) {
			upd(&cw.proj, diff(pr.a[k], jnum(json_array_get(json_object_get(rp, "unit_a"), k))));
			upd(&cw.proj, diff(pr.b[k], jnum(json_array_get(json_object_get(rp, "unit_b"), k))));
			upd(&cw.proj, diff(pr.p[k], jnum(json_array_get(json_object_get(rp, "projection"), k))));
		}
		attnvec_free(&av);
	}
	free(desc);
	/* The notebook's KDE demo data, with Scott's bandwidth: exact input, so (nearly) exact output. */
	json_t *demo = json_object_get(root, "kde_demo");
	double x[5];
	for (int i = 0; i < 5; i++)
		x[i] = jnum(json_array_get(json_object_get(demo, "x"), i));
	size_t gm;
	double *grid = nb_grid(json_object_get(demo, "grid"), &gm);
	nb_kde(x, 5, grid, gm, demo, &cw, &cw.kde_demo, "KDE demo");
	free(grid);

	printf("%-26s notebook: qk-stats %.1e  dots %.1e  groups %.1e  kde %.1e  kde-demo %.1e  bandwidth %.1e  "
	       "xy %.1e  norm %.1e  projection %.1e  (%d curves, %d without density)\n",
	       name, cw.qk, cw.dots, cw.groups, cw.kde, cw.kde_demo, cw.bandwidth, cw.xy, cw.norm, cw.proj, cw.curves,
	       cw.no_density);
	const struct {
		double got, tol;
		const char *what;
	} lim[] = {
		{cw.qk, TOL_STAT, "Q/K statistics"}, {cw.dots, TOL_STAT, "products (relative)"},
		{cw.groups, TOL_ATTN, "weight groups"}, {cw.kde, TOL_KDE, "KDE"},
		{cw.kde_demo, TOL_KDE_EXACT, "KDE of the demo data"}, {cw.bandwidth, TOL_STAT, "bandwidth"},
		{cw.xy, TOL_PCA_REL, "vector-space coordinates"}, {cw.norm, TOL_STAT, "Frobenius norm (relative)"},
		{cw.proj, TOL_PCA_REL, "projection in the PCA plane"},
	};
	for (size_t i = 0; i < sizeof lim / sizeof *lim; i++)
		ck_assert_msg(lim[i].got <= lim[i].tol, "%s: %s differs by %g", name, lim[i].what, lim[i].got);
	upd(&w->qk, cw.qk), upd(&w->dots, cw.dots), upd(&w->groups, cw.groups), upd(&w->kde, cw.kde);
	upd(&w->kde_demo, cw.kde_demo), upd(&w->bandwidth, cw.bandwidth), upd(&w->xy, cw.xy), upd(&w->norm, cw.norm);
	upd(&w->proj, cw.proj);
	w->flips += cw.flips, w->curves += cw.curves, w->no_density += cw.no_density;
}

START_TEST(test_against_notebooks)
{
	struct nb_worst w = {0};
	int cases = case_each("notebooks", check_notebook_case, &w);
	printf("%d cases against the notebooks' formulas; worst: qk-stats %.2e, dots %.2e, groups %.2e, KDE %.2e "
	       "(demo %.2e), bandwidth %.2e, xy %.2e, norm %.2e, projection %.2e; %d curves, %d without density, "
	       "%d axes flipped\n",
	       cases, w.qk, w.dots, w.groups, w.kde, w.kde_demo, w.bandwidth, w.xy, w.norm, w.proj, w.curves, w.no_density,
	       w.flips);
	ck_assert_int_ge(cases, 4);
	ck_assert_int_eq(w.flips, 0);
	ck_assert_int_gt(w.no_density, 0); /* a causal first token's self-weight is always 1 */
}
END_TEST

START_TEST(test_kde_edges)
{
	double grid[3] = {0, 0.5, 1}, y[3] = {9, 9, 9}, bw = 9;
	double one[1] = {0.5}, flat[3] = {0.2, 0.2, 0.2}, bad[2] = {0, NAN};
	ck_assert_str_eq(stats_kde(one, 1, grid, 3, y, &bw), "fewer than 2 values");
	ck_assert(y[0] == 0 && y[1] == 0 && y[2] == 0 && bw == 0);
	ck_assert_str_eq(stats_kde(flat, 3, grid, 3, y, &bw), "all values equal"); /* variance rounds to 1e-34 */
	ck_assert_str_eq(stats_kde(bad, 2, grid, 3, y, NULL), "values not finite");
	/* Two points: s = 1/√2, h = s·2^(-1/5); symmetric, peak 1 in the middle. */
	double two[2] = {0, 1};
	ck_assert(stats_kde(two, 2, grid, 3, y, &bw) == NULL);
	ck_assert(fabs(bw - sqrt(0.5) * pow(2, -0.2)) < 1e-15);
	ck_assert(fabs(y[0] - y[2]) < 1e-15 && (y[1] == 1 || y[0] == 1));
	/* An evenly spaced grid takes the recurrence, an uneven one the term-by-term sums: they agree
	 * (the point moved aside apart). Samples beyond the grid on both sides, and a narrow bump. */
	double xs[200], ga[101], gb[101], ya[101], yb[101];
	for (int i = 0; i < 200; i++)
		xs[i] = i < 190 ? sin(i * 1.7) * 4 + (i % 3) : 1.25 + 1e-3 * i;
	stats_linspace(-3, 3, 101, ga);
	memcpy(gb, ga, sizeof ga);
	gb[50] += 1e-7;
	ck_assert(stats_kde(xs, 200, ga, 101, ya, NULL) == NULL && stats_kde(xs, 200, gb, 101, yb, NULL) == NULL);
	for (int i = 0; i < 101; i++)
		ck_assert_msg(i == 50 || fabs(ya[i] - yb[i]) < 1e-13, "grid point %d: %.17g vs %.17g", i, ya[i], yb[i]);
	double lin[4];
	stats_linspace(-1, 2, 4, lin);
	ck_assert(lin[0] == -1 && lin[1] == 0 && lin[2] == 1 && lin[3] == 2);
}
END_TEST

/* Every product of stats_qk_dots has the bits of the plain loop s += (double)q[i] · k[i], depths in
 * order, whatever the number of keys: 1 to 80 crosses its blocks of 32 keys and of 8 (and their
 * padding); a sum out of order, or two keys' sums mixed, fails it. */
START_TEST(test_dots_bits)
{
	for (int n = 1; n <= 80; n += n < 40 ? 1 : 7) {
		struct trace_shape sh = {.n_layers = 1, .n_heads = 2, .n_kv_heads = 2, .head_dim = 37, .hidden = 74, .n = n};
		struct trace *t = trace_new_shaped(&sh);
		ck_assert(t);
		for (size_t i = 0; i < (size_t)2 * n * 37; i++) {
			t->q[i] = (float)sin(0.37 * (double)i) * 3.0f;
			t->k[i] = (float)cos(0.91 * (double)i + 0.2) * 2.0f;
		}
		struct stats_dots d;
		struct err e = {{0}};
		ck_assert(stats_qk_dots(t, 0, n - 1, STATS_DOTS_VISIBLE, &d, &e) == 0);
		ck_assert_int_eq(d.n_keys, n);
		for (int h = 0; h < 2; h++)
			for (int g = 0; g < 2; g++)
				for (int x = 0; x < n; x++) {
					const float *q = trace_q(t, 0, h) + (size_t)(n - 1) * 37, *k = trace_k(t, 0, g) + (size_t)x * 37;
					double want = 0;
					for (int i = 0; i < 37; i++)
						want += (double)q[i] * k[i];
					double got = g == h ? d.same[(size_t)h * n + x] : d.diff[(size_t)h * n + x];
					ck_assert_msg(memcmp(&got, &want, sizeof got) == 0,
						      "%d keys, head %d · key head %d, key %d: %.17g, not %.17g", n, h, g, x, got, want);
				}
		stats_dots_free(&d);
		trace_free(t);
	}
}
END_TEST

/* Grouped-query attention and a sliding window: "same head" is the key head a query head reads,
 * "different" the other key heads; the notebook's keys are the window's minus the first token
 * and the query. q_h(i) = (h + 1, 0), k_g(j) = (10 g + j, 0): every product says its pair. */
START_TEST(test_dots_gqa_window)
{
	struct trace_shape sh = {.n_layers = 1, .n_heads = 4, .n_kv_heads = 2, .head_dim = 2, .hidden = 8, .n = 6};
	struct trace *t = trace_new_shaped(&sh);
	ck_assert(t);
	t->causal = true;
	for (int h = 0; h < 4; h++)
		for (int i = 0; i < 6; i++)
			t->q[(size_t)(h * 6 + i) * 2] = (float)(h + 1);
	for (int g = 0; g < 2; g++)
		for (int j = 0; j < 6; j++)
			t->k[(size_t)(g * 6 + j) * 2] = (float)(10 * g + j);
	struct stats_dots d;
	struct err e = {{0}};
	/* Causal, no window: query 5 sees 0..5; the notebook takes 1..4. */
	ck_assert(stats_qk_dots(t, 0, 5, STATS_DOTS_NOTEBOOK, &d, &e) == 0);
	ck_assert(d.n_keys == 4 && d.key_lo == 1 && d.key_hi == 4 && d.n_same == 16 && d.n_diff == 16);
	/* Head 2 reads key head 1: its same-head products are 3 · (10 + j), its others 3 · j. */
	ck_assert(d.same[8] == 3 * 11 && d.same[11] == 3 * 14 && d.diff[8] == 3 * 1 && d.diff[11] == 3 * 4);
	stats_dots_free(&d);
	ck_assert(stats_qk_dots(t, 0, 5, STATS_DOTS_VISIBLE, &d, &e) == 0);
	ck_assert(d.n_keys == 6 && d.key_lo == 0 && d.key_hi == 5 && d.n_same == 24);
	stats_dots_free(&d);
	/* A window of 2 before: query 5 sees 3..5; the notebook's keys are 3..4 (the first is not in it). */
	t->win_before[0] = 2;
	ck_assert(stats_qk_dots(t, 0, 5, STATS_DOTS_NOTEBOOK, &d, &e) == 0);
	ck_assert(d.n_keys == 2 && d.key_lo == 3 && d.key_hi == 4);
	stats_dots_free(&d);
	/* Query 1 with the notebook's keys: none left (0 is the sink, 1 itself). */
	ck_assert(stats_qk_dots(t, 0, 1, STATS_DOTS_NOTEBOOK, &d, &e) == 0);
	ck_assert(d.n_keys == 0 && d.key_lo == -1 && d.n_same == 0 && d.n_diff == 0);
	stats_dots_free(&d);
	/* Multi-query attention: one key head, so no different heads. */
	struct trace_shape sh1 = sh;
	sh1.n_kv_heads = 1;
	struct trace *t1 = trace_new_shaped(&sh1);
	t1->causal = true;
	ck_assert(stats_qk_dots(t1, 0, 5, STATS_DOTS_VISIBLE, &d, &e) == 0);
	ck_assert(d.n_same == 24 && d.n_diff == 0);
	stats_dots_free(&d);
	trace_free(t1);
	trace_free(t);
}
END_TEST

/* ---- edge cases ---- */

START_TEST(test_pca_small)
{
	struct err e = {{0}};
	double xy[8], expl[2];
	/* One row: nothing varies, everything at the origin. */
	float one[3] = {1, 2, 3};
	ck_assert(pca_2d(one, 1, 3, xy, expl, &e) == 0);
	ck_assert(xy[0] == 0 && xy[1] == 0 && expl[0] == 0 && expl[1] == 0);
	/* One dimension: the second axis is empty. */
	float line[4] = {1, 2, 3, 6};
	ck_assert(pca_2d(line, 4, 1, xy, expl, &e) == 0);
	ck_assert(fabs(xy[0] - -2) < 1e-12 && fabs(xy[6] - 3) < 1e-12 && xy[1] == 0 && fabs(expl[0] - 1) < 1e-12);
	/* Points on the line y = -2x: the axis is ±(1,-2)/√5; its largest component (-2) is made positive. */
	float pts[6] = {0, 0, 1, -2, 2, -4};
	ck_assert(pca_2d(pts, 3, 2, xy, expl, &e) == 0);
	ck_assert(xy[0] > 0 && xy[4] < 0 && fabs(xy[4] + sqrt(5)) < 1e-6 && fabs(expl[0] - 1) < 1e-9);
	ck_assert(pca_2d(pts, 0, 2, xy, expl, &e) == -1 && strstr(e.msg, "PCA"));
}
END_TEST

START_TEST(test_histogram_edges)
{
	double v[] = {0, 0.5, 1, 1.5, -0.1, NAN, 0.25};
	int c[4];
	/* 0 → bin 0; 0.25 → bin 1 (left-closed); 0.5 → bin 2; 1 (= hi) → last bin; outside and NaN not counted. */
	ck_assert_uint_eq(stats_histogram(v, 7, 0, 1, 4, c), 4);
	ck_assert(c[0] == 1 && c[1] == 1 && c[2] == 1 && c[3] == 1);
	ck_assert_uint_eq(stats_histogram(v, 7, 1, 1, 4, c), 0);
	double m, s;
	double w[] = {1, 3};
	stats_mean_std(w, 2, &m, &s);
	ck_assert(m == 2 && s == 1);
	double x[] = {1, 2, 3}, y[] = {2, 4, 6}, z[] = {5, 5, 5};
	ck_assert(fabs(stats_corr(x, y, 3) - 1) < 1e-12);
	ck_assert(isnan(stats_corr(x, z, 3)));
}
END_TEST

START_TEST(test_headscore_sort)
{
	struct headscore s[4] = {0};
	double v[4] = {0.2, NAN, 0.9, 0.2};
	for (int i = 0; i < 4; i++)
		s[i].s[HS_PREV] = v[i];
	int idx[4] = {0, 1, 2, 3};
	headscore_sort(s, idx, 4, HS_PREV, 0);
	ck_assert(idx[0] == 2 && idx[1] == 0 && idx[2] == 3 && idx[3] == 1);
	headscore_sort(s, idx, 4, HS_PREV, 1);
	ck_assert(idx[0] == 0 && idx[1] == 3 && idx[2] == 2 && idx[3] == 1);
	ck_assert_int_eq(headscore_by_name("induction"), HS_INDUCTION);
	ck_assert_int_eq(headscore_by_name("nope"), -1);
}
END_TEST

/* Cross-attention's scores (headscore.h) on heads made by hand, whose answers are known: A[n = 4][m = 6], the
 * diagonal d_i = i * 5 / 3 = 0, 1.67, 3.33, 5 and the band's half-width 1. */
START_TEST(test_cross_scores)
{
	enum { N = 4, M = 6 };
	struct trace *enc = trace_new(1, 1, 2, 4, M), *dec = trace_new(1, 3, 2, 4, N);
	ck_assert(enc && dec && trace_alloc_cross(dec, M) == 0);
	for (int j = 0; j < M; j++)
		enc->ids[j] = 10 + j;
	enc->ids[0] = 0, enc->special[0] = true;     /* <s> */
	enc->ids[M - 1] = 2, enc->special[M - 1] = true; /* </s> */
	dec->encoder = enc;
	int32_t labels[N] = {7, 8, 9, 2};
	dec->labels = labels;
	int diag[N] = {0, 2, 3, 5}; /* the nearest source token to d_i */
	for (int i = 0; i < N; i++)
		for (int j = 0; j < M; j++) {
			((float *)trace_cross_attn(dec, 0, 0))[i * M + j] = j == diag[i];      /* on the diagonal */
			((float *)trace_cross_attn(dec, 0, 1))[i * M + j] = j == M - 1 - diag[i]; /* against it */
			((float *)trace_cross_attn(dec, 0, 2))[i * M + j] = 1.0f / M;           /* uniform */
		}
	ck_assert_int_eq(headscore_cross_end(dec), M - 1);
	struct headscore hs[3];
	ck_assert_int_eq(headscore_cross_all(dec, hs), 0);
	ck_assert_double_eq_tol(hs[0].s[HS_DIAGONAL], 1, 1e-12);
	ck_assert_double_eq_tol(hs[0].s[HS_MONOTONIC], 1, 1e-12);
	ck_assert_double_eq_tol(hs[0].s[HS_MAX], 1, 1e-12);
	ck_assert_double_eq_tol(hs[0].s[HS_EOS], 0.25, 1e-12);
	ck_assert_double_eq_tol(hs[0].s[HS_FIRST], 0.25, 1e-12);
	ck_assert_double_eq_tol(hs[0].s[HS_ENTROPY], 0, 1e-12);
	ck_assert_str_eq(hs[0].label, "diagonal");
	ck_assert_double_eq_tol(hs[1].s[HS_DIAGONAL], 0, 1e-12); /* every row at least 1.33 from d_i */
	ck_assert_double_eq_tol(hs[1].s[HS_MONOTONIC], 0, 1e-12);
	ck_assert_double_eq_tol(hs[1].s[HS_EOS], 0.25, 1e-12);
	ck_assert_double_eq_tol(hs[2].s[HS_DIAGONAL], 2.0 / M, 1e-6); /* two source tokens within 1 of each d_i */
	ck_assert_double_eq_tol(hs[2].s[HS_MONOTONIC], 1, 1e-12); /* argmax: the first of equal weights, always 0 */
	ck_assert_double_eq_tol(hs[2].s[HS_ENTROPY], log(M), 1e-6);
	ck_assert_double_eq_tol(hs[2].entropy_norm, 1, 1e-6);
	ck_assert_double_eq_tol(hs[2].s[HS_MAX], 1.0 / M, 1e-6);
	ck_assert_str_eq(hs[2].label, "broad");
	for (int k = 0; k < HS_COUNT; k++) /* the self-attention scores: NaN, punct too (no punctuation) */
		ck_assert(headscore_for_cross(k) && k != HS_PUNCT ? !isnan(hs[2].s[k]) : isnan(hs[2].s[k]));
	/* mBART: the source ends "</s> lang", the target "</s> lang2": eos is </s>, not the language code */
	enc->ids[M - 2] = 2, enc->special[M - 2] = true, enc->ids[M - 1] = 99;
	labels[N - 2] = 2, labels[N - 1] = 98;
	ck_assert_int_eq(headscore_cross_end(dec), M - 2);
	dec->labels = NULL; /* no target: the source's last special token */
	ck_assert_int_eq(headscore_cross_end(dec), M - 1);
	for (int j = 0; j < M; j++)
		enc->special[j] = false;
	ck_assert_int_eq(headscore_cross_end(dec), -1);
	ck_assert_int_eq(headscore_cross_all(dec, hs), 0);
	ck_assert(isnan(hs[0].s[HS_EOS]));
	/* a self-attention head leaves cross's scores NaN */
	ck_assert_int_eq(headscore_all(enc, hs), 0);
	for (int k = 0; k < HS_COUNT; k++)
		if (headscore_cross_only(k))
			ck_assert(isnan(hs[0].s[k]));
	dec->encoder = NULL;
	trace_free(dec);
	trace_free(enc);
}
END_TEST

START_TEST(test_bad_query)
{
	struct trace *t = trace_new(1, 2, 2, 4, 3);
	struct stats_dots d;
	struct err e = {{0}};
	ck_assert_int_eq(stats_qk_dots(t, 0, 3, STATS_DOTS_VISIBLE, &d, &e), -1);
	ck_assert(strstr(e.msg, "no token 3"));
	ck_assert(d.same == NULL);
	trace_free(t);
}
END_TEST

static Suite *analysis_suite(void)
{
	Suite *s = suite_create("analysis");
	TCase *tc = tcase_create("numpy");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_against_numpy);
	tcase_add_test(tc, test_against_notebooks);
	suite_add_tcase(s, tc);
	TCase *edge = tcase_create("edges");
	tcase_add_test(edge, test_pca_small);
	tcase_add_test(edge, test_histogram_edges);
	tcase_add_test(edge, test_headscore_sort);
	tcase_add_test(edge, test_cross_scores);
	tcase_add_test(edge, test_bad_query);
	tcase_add_test(edge, test_kde_edges);
	tcase_add_test(edge, test_dots_gqa_window);
	tcase_add_test(edge, test_dots_bits);
	suite_add_tcase(s, edge);
	return s;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	return testutil_run_suite(analysis_suite(), false);
}
