/* check_corpus.c -- corpus mode's pieces: the mergeable moments (Chan's formulas against one pass)
 * and histograms (any grouping gives the same bins), an aggregate of 4 shards against one run over
 * the same texts, a corpus of one text against the single-text analyses, the saved-aggregate format
 * (a bit-exact round trip and the refusals of bad files), the corpus line reader, the progress line. */
#include <cblas.h>
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corpus/aggfile.h"
#include "corpus/aggregate.h"
#include "corpus/corpus.h"
#include "corpus/corpusrun.h"
#include "engine/model.h"
#include "engine/model-internal.h" /* the family's fused q/k/v projection */
#include "engine/weights.h"
#include "analysis/pca.h"
#include "base/progress.h"
#include "analysis/stats.h"
#include "testutil.h"

static double rel(double a, double b)
{
	double d = fabs(a - b), m = fmax(fabs(a), fabs(b));
	return m > 0 ? d / m : d;
}

START_TEST(moments_merge)
{
	/* 1000 values, added one by one vs. 4 uneven parts merged: equal up to rounding. */
	struct agg_moment all = {0}, part[4] = {{0}};
	double sum = 0, x[1000];
	for (int i = 0; i < 1000; i++) {
		x[i] = sin(i * 0.37) * 3 + (i % 7) * 0.1 + 100;
		sum += x[i];
		aggregate_moment_add(&all, x[i]);
		aggregate_moment_add(&part[i < 10 ? 0 : i < 400 ? 1 : i < 401 ? 2 : 3], x[i]);
	}
	double mean = sum / 1000, m2 = 0;
	for (int i = 0; i < 1000; i++)
		m2 += (x[i] - mean) * (x[i] - mean);
	struct agg_moment merged = {0};
	aggregate_moment_merge(&merged, &part[2]);
	aggregate_moment_merge(&merged, &part[0]);
	aggregate_moment_merge(&merged, &part[3]);
	aggregate_moment_merge(&merged, &part[1]);
	ck_assert_uint_eq(merged.n, 1000);
	ck_assert(rel(all.mean, mean) < 1e-14 && rel(all.m2, m2) < 1e-10);
	ck_assert(rel(merged.mean, mean) < 1e-14 && rel(merged.m2, m2) < 1e-10);
	ck_assert(rel(aggregate_moment_std(&merged), sqrt(m2 / 999)) < 1e-10);
	struct agg_moment one = {0}, none = {0};
	aggregate_moment_add(&one, 2.5);
	ck_assert(aggregate_moment_std(&one) == 0 && isnan(aggregate_moment_std(&none)));
}
END_TEST

/* A histogram of X[n] built in blocks [0, CUT[0]), [CUT[0], CUT[1]), … added in ORDER and merged. */
static void hist_blocks(struct agghist *out, const double *x, const int *cut, int parts, const int *order)
{
	agghist_init(out);
	for (int p = 0; p < parts; p++) {
		int k = order[p], lo = k ? cut[k - 1] : 0, hi = cut[k];
		struct agghist part;
		agghist_init(&part);
		agghist_add(&part, x + lo, (size_t)(hi - lo));
		agghist_merge(out, &part);
	}
}

START_TEST(hist_merge)
{
	/* Values whose spread grows along the array, so later blocks force wider ranges, with edges:
	 * 0, exact powers of two (R itself needs the next range; −R does not), a NaN. */
	enum { N = 3000 };
	static double x[N];
	for (int i = 0; i < N; i++)
		x[i] = sin(i * 0.91) * (1 + i * 0.05) + (i % 11 == 0 ? 0.5 : 0);
	x[100] = 0, x[200] = 64, x[300] = -128, x[400] = 1e-12, x[500] = NAN, x[600] = -0.0;
	struct agghist one;
	agghist_init(&one);
	agghist_add(&one, x, N);
	ck_assert_uint_eq(one.n, N - 1);
	ck_assert_uint_eq(one.unbinned, 1);
	ck_assert_int_eq(one.exp, 8); /* |x| reaches 151 < 256 */
	/* The bins against a direct count over the final range: x in [edge(i), edge(i) + w). */
	for (int i = 0; i < AGGHIST_BINS; i++) {
		uint64_t c = 0;
		double lo = agghist_edge(&one, i), hi = lo + agghist_width(&one);
		for (int j = 0; j < N; j++)
			c += x[j] >= lo && x[j] < hi;
		ck_assert_msg(one.bin[i] == c, "bin %d: %llu, counted %llu", i, (unsigned long long)one.bin[i],
			      (unsigned long long)c);
	}
	const int cut[5] = {7, 1000, 1001, 2500, N};
	const int orders[3][5] = {{0, 1, 2, 3, 4}, {4, 2, 0, 3, 1}, {3, 1, 4, 0, 2}};
	for (int o = 0; o < 3; o++) {
		struct agghist m;
		hist_blocks(&m, x, cut, 5, orders[o]);
		ck_assert(m.n == one.n && m.unbinned == one.unbinned && m.exp == one.exp);
		ck_assert(!memcmp(m.bin, one.bin, sizeof m.bin));
		ck_assert(m.min == one.min && m.max == one.max);
		ck_assert(rel(m.mean, one.mean) < 1e-12 && rel(m.m2, one.m2) < 1e-12);
		ck_assert_ptr_null(agghist_check(&m));
	}
	double mean, sd;
	double *finite = malloc(N * sizeof *finite);
	int nf = 0;
	for (int i = 0; i < N; i++)
		if (!isnan(x[i]))
			finite[nf++] = x[i];
	stats_mean_std(finite, (size_t)nf, &mean, &sd);
	ck_assert(rel(one.mean, mean) < 1e-13 && rel(agghist_std(&one), sd) < 1e-12);
	free(finite);
	/* Exactly −R stays in range, R does not. */
	struct agghist h;
	agghist_init(&h);
	agghist_add(&h, (double[]){-1}, 1);
	ck_assert_int_eq(h.exp, 0);
	ck_assert_uint_eq(h.bin[0], 1);
	agghist_add(&h, (double[]){1}, 1);
	ck_assert_int_eq(h.exp, 1);
	ck_assert_uint_eq(h.bin[64], 1);
	ck_assert_uint_eq(h.bin[192], 1);
	/* A broken file's histogram is caught. */
	h.bin[5] = 1;
	ck_assert_str_eq(agghist_check(&h), "the bins hold more values than n");
}
END_TEST

START_TEST(sample_merge)
{
	/* 1000 tokens (100 lines of 10) offered to samples of 50 in one go and in 3 parts merged in two
	 * orders: the same 50 tokens, those with the smallest keys, with their vectors. */
	enum { LINES = 100, TOKS = 10, CAP = 50 };
	struct aggsample one, part[3], m1, m2;
	struct err e = {{0}};
	ck_assert_int_eq(aggsample_cap(64), 20000);
	ck_assert_int_eq(aggsample_cap(128), 10240);
	ck_assert(aggsample_init(&one, 1, 2, 4, &e) == 0 && aggsample_init(&m1, 1, 2, 4, &e) == 0 &&
		  aggsample_init(&m2, 1, 2, 4, &e) == 0);
	one.cap = m1.cap = m2.cap = CAP;
	for (int p = 0; p < 3; p++) {
		ck_assert(aggsample_init(&part[p], 1, 2, 4, &e) == 0);
		part[p].cap = CAP;
	}
	uint64_t keys[LINES * TOKS];
	for (int l = 0; l < LINES; l++)
		for (int t = 0; t < TOKS; t++) {
			float q[4] = {(float)l, (float)t, 1, 2}, k[4] = {(float)-l, (float)-t, 3, 4};
			uint64_t key = aggsample_key((uint64_t)l, t);
			keys[l * TOKS + t] = key;
			ck_assert(aggsample_offer(&one, key, (uint64_t)l, t, "w", "a text", NULL, q, k, &e) == 0);
			ck_assert(aggsample_offer(&part[l % 3], key, (uint64_t)l, t, "w", "a text", l == 7 ? "b" : NULL, q, k, &e) == 0);
		}
	ck_assert(aggsample_merge(&m1, &part[0], &e) == 0 && aggsample_merge(&m1, &part[1], &e) == 0 &&
		  aggsample_merge(&m1, &part[2], &e) == 0);
	ck_assert(aggsample_merge(&m2, &part[2], &e) == 0 && aggsample_merge(&m2, &part[0], &e) == 0 &&
		  aggsample_merge(&m2, &part[1], &e) == 0);
	/* the CAP smallest keys, by brute force (distinct here) */
	uint64_t sorted[LINES * TOKS];
	memcpy(sorted, keys, sizeof keys);
	for (int i = 1; i < LINES * TOKS; i++)
		for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
			uint64_t x = sorted[j];
			sorted[j] = sorted[j - 1], sorted[j - 1] = x;
		}
	struct aggsample *all[3] = {&one, &m1, &m2};
	for (int x = 0; x < 3; x++) {
		aggsample_sort(all[x]);
		ck_assert_int_eq(all[x]->n, CAP);
		for (int i = 0; i < CAP; i++) {
			const struct aggsample_tok *t = &all[x]->tok[i];
			ck_assert(t->key == sorted[i]);
			ck_assert(aggsample_q(all[x], i)[0] == (float)t->line && aggsample_k(all[x], i)[1] == (float)-t->token);
			ck_assert(t->key == aggsample_key(t->line, t->token));
		}
	}
	struct aggsample other;
	ck_assert(aggsample_init(&other, 0, 2, 4, &e) == 0);
	ck_assert_int_eq(aggsample_merge(&m1, &other, &e), -1);
	ck_assert_str_eq(e.msg, "its token sample holds layer 0 head 2, not layer 1 head 2 (--pca-head)");
	aggsample_free(&other);
	for (int p = 0; p < 3; p++)
		aggsample_free(&part[p]);
	aggsample_free(&one);
	aggsample_free(&m1);
	aggsample_free(&m2);
}
END_TEST

/* The samples of A and B hold the same tokens with the same vectors and strings. */
static void same_sample(struct aggsample *a, struct aggsample *b)
{
	aggsample_sort(a);
	aggsample_sort(b);
	ck_assert(a->n == b->n && a->layer == b->layer && a->head == b->head && a->cap == b->cap);
	for (int i = 0; i < a->n; i++) {
		const struct aggsample_tok *x = &a->tok[i], *y = &b->tok[i];
		ck_assert(x->key == y->key && x->line == y->line && x->token == y->token);
		ck_assert(!strcmp(x->piece, y->piece) && !strcmp(x->text, y->text));
		ck_assert((!x->text_b && !y->text_b) || (x->text_b && y->text_b && !strcmp(x->text_b, y->text_b)));
		ck_assert(!memcmp(aggsample_q(a, i), aggsample_q(b, i), (size_t)a->dim * sizeof(float)));
		ck_assert(!memcmp(aggsample_k(a, i), aggsample_k(b, i), (size_t)a->dim * sizeof(float)));
	}
}

/* An attention-only trace A against the full trace B of the same pass: every layer's attention,
 * queries and keys the same bits; the values too but the last layer's, which are those where a
 * fused projection gives them anyway (GPT-2, Pythia, ModernBERT), else not computed: NaN, every one. */
static void attention_only_matches(const struct model *m, const struct trace *a, const struct trace *b,
				   const char *name)
{
	size_t na = (size_t)b->n_layers * b->n_heads * b->n * b->n, nq = (size_t)b->n_layers * b->n_heads * b->n * b->head_dim,
	       nk = (size_t)b->n_layers * b->n_kv_heads * b->n * b->head_dim, nv = nk - nk / b->n_layers;
	ck_assert_msg(!memcmp(a->attn, b->attn, na * sizeof(float)) && !memcmp(a->q, b->q, nq * sizeof(float)) &&
			      !memcmp(a->k, b->k, nk * sizeof(float)) && !memcmp(a->v, b->v, nv * sizeof(float)),
		      "%s: attention-only pass differs", name);
	for (size_t k = nv; k < nk; k++)
		assert_each(m->fam.fused_qkv ? a->v[k] == b->v[k] : isnan(a->v[k]),
			    "%s: the last layer's value %zu of an attention-only pass", name, k - nv);
}

/* Texts run together (model_forward_batch) get what each gets alone (model_run), up to float32
 * rounding: every family's switches (rotary tables per text, windows, relative positions, GQA,
 * the embedding projection, parallel residuals). Then as a corpus worker runs them, on one thread,
 * the matrices cut into many tiles: the batch multiplies each whole (weight_linear_whole), the text
 * alone tile by tile. */
static void batch_forward_case(bool whole)
{
	static const char *const models[] = {"bert-mini", "gpt2-mini", "llama-gqa", "mistral-window", "qwen3-qknorm",
					     "deberta-rel", "electra-proj", "modernbert-window", "gemma3-local",
					     "llama-rope-dynamic", "neox-parallel", "roberta-pos", "albert-shared",
					     "opt-nobias" /* float32, heads of 16: projected into the trace once packed */};
	static const char *const texts[] = {"The cat sat on the mat.", "Who?",
					    "It was the best of times, it was the worst of times, it was the age of wisdom."};
	for (size_t mi = 0; mi < sizeof models / sizeof *models; mi++) {
		char mdir[4096];
		snprintf(mdir, sizeof mdir, "%s/tests/data/models/%s", testutil_srcdir(), models[mi]);
		struct model *m = NULL;
		struct err e = {{0}};
		ck_assert_msg(model_open(mdir, &m, &e) == 0, "%s: %s", models[mi], e.msg);
		struct trace *b[3], *a[3], *one = NULL;
		for (int i = 0; i < 3; i++) {
			ck_assert_msg(model_prepare(m, texts[i], NULL, false, &b[i], &e) == 0, "%s", e.msg);
			ck_assert_msg(model_prepare(m, texts[i], NULL, true, &a[i], &e) == 0, "%s", e.msg);
			ck_assert(b[i]->hidden_states && !a[i]->hidden_states);
		}
		ck_assert_msg(model_forward_batch(m, b, 3, NULL, &e) == 0, "%s: %s", models[mi], e.msg);
		ck_assert_msg(model_forward_batch(m, a, 3, NULL, &e) == 0, "%s: %s", models[mi], e.msg);
		struct trace *mixed[2] = {a[0], b[1]}; /* a batch takes traces of one kind */
		ck_assert_int_eq(model_forward_batch(m, mixed, 2, NULL, &e), -1);
		double worst = 0, worst_attn = 0;
		for (int i = 0; i < 3; i++) {
			ck_assert_msg(model_run(m, texts[i], NULL, NULL, &one, &e) == 0, "%s", e.msg);
			ck_assert_int_eq(one->n, b[i]->n);
			size_t na = (size_t)one->n_layers * one->n_heads * one->n * one->n,
			       nq = (size_t)one->n_layers * one->n_heads * one->n * one->head_dim,
			       nk = (size_t)one->n_layers * one->n_kv_heads * one->n * one->head_dim,
			       nh = (size_t)(one->n_layers + 1) * one->n * one->hidden;
			attention_only_matches(m, a[i], b[i], models[mi]);
			trace_free(a[i]);
			for (size_t k = 0; k < na; k++)
				worst_attn = fmax(worst_attn, fabs(one->attn[k] - b[i]->attn[k]));
			for (size_t k = 0; k < nq; k++)
				worst = fmax(worst, fabs(one->q[k] - b[i]->q[k]) / fmax(1, fabs(one->q[k])));
			for (size_t k = 0; k < nk; k++)
				worst = fmax(worst, fabs(one->v[k] - b[i]->v[k]) / fmax(1, fabs(one->v[k])));
			for (size_t k = 0; k < nh; k++)
				worst = fmax(worst, fabs(one->hidden_states[k] - b[i]->hidden_states[k]) /
							    fmax(1, fabs(one->hidden_states[k])));
			trace_free(one);
			trace_free(b[i]);
		}
		printf("%s: 3 texts batched vs alone%s: attention within %.3g, q, v and hidden states within %.3g (relative)\n",
		       models[mi], whole ? " (one thread, whole matrices vs tiles)" : "", worst_attn, worst);
		/* the product's own tolerance for attention; the states' rounding grows with depth */
		ck_assert_msg(worst_attn < 1e-5 && worst < 1e-4, "%s: batched differs by %g, %g", models[mi], worst_attn, worst);
		/* one text a pass with packed weights, as a corpus run of --batch=1: q, k and v projected
		 * straight into the trace where the model allows (forward.c), the last v skipped there too */
		if (!whole)
			model_promote_weights_now(m);
		for (int i = 0; !whole && i < 3; i++) {
			ck_assert_msg(model_prepare(m, texts[i], NULL, false, &b[i], &e) == 0, "%s", e.msg);
			ck_assert_msg(model_prepare(m, texts[i], NULL, true, &a[i], &e) == 0, "%s", e.msg);
			ck_assert_msg(model_forward_batch(m, &b[i], 1, NULL, &e) == 0, "%s: %s", models[mi], e.msg);
			ck_assert_msg(model_forward_batch(m, &a[i], 1, NULL, &e) == 0, "%s: %s", models[mi], e.msg);
			attention_only_matches(m, a[i], b[i], models[mi]);
			trace_free(a[i]);
			trace_free(b[i]);
		}
		model_close(m);
	}
}

START_TEST(batch_forward_matches)
{
	batch_forward_case(false);
	int blas = openblas_get_num_threads();
	openblas_set_num_threads(1);
	weight_set_tile_bytes(16 * 4 * 3);
	batch_forward_case(true);
	weight_set_tile_bytes(0);
	openblas_set_num_threads(blas);
}
END_TEST

/* A corpus file of texts with repeats, punctuation, a blank line and a pair in JSON lines. */
static void write_corpus(const char *path, bool jsonl)
{
	static const char *const texts[] = {
		"The cat sat on the mat.", "A dog barked at the mailman, twice.", "She said: hello, world!",
		"The book was on the table, and the table was on the floor.", "Rain again today; rain again tomorrow.",
		"Who wrote this?", "The quick brown fox jumps over the lazy dog.", "One, two, three, four, five.",
		"It was the best of times, it was the worst of times.", "Time flies like an arrow.",
	};
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 10; i++) {
		if (i == 4)
			fputs("\n", f);
		if (jsonl && i == 7)
			fprintf(f, "{\"text\": \"%s\", \"text_b\": \"And six.\"}\n", texts[i]);
		else if (jsonl)
			fprintf(f, "{\"id\": %d, \"text\": \"%s\"}\n", i, texts[i]);
		else
			fprintf(f, "%s\n", texts[i]);
	}
	fclose(f);
}

/* A run of texts one at a time (batch 1): its figures do not depend on how the texts are grouped. */
static struct aggregate *run_batch(const struct model *m, const char *path, int k, int n, int workers, int batch)
{
	struct corpusrun_opts o = {.path = path, .shard_k = k, .shard_n = n, .workers = workers, .batch = batch};
	struct aggregate *a = NULL;
	struct err e = {{0}};
	bool cancelled = true;
	ck_assert_msg(corpusrun(m, &o, &a, &cancelled, &e) == 0, "%s", e.msg);
	ck_assert(!cancelled);
	return a;
}

static struct aggregate *run(const struct model *m, const char *path, int k, int n, int workers)
{
	return run_batch(m, path, k, n, workers, 1);
}

/* The largest relative difference of any moment, and the counts equal. */
static double agg_diff(const struct aggregate *a, const struct aggregate *b)
{
	ck_assert_uint_eq(a->c.texts, b->c.texts);
	ck_assert_uint_eq(a->c.lines, b->c.lines);
	ck_assert_uint_eq(a->c.tokens, b->c.tokens);
	ck_assert_uint_eq(a->c.empty, b->c.empty);
	double worst = 0;
	size_t n = (size_t)a->model.n_layers * a->model.n_heads * AGG_SCORES;
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(a->hs[i].n, b->hs[i].n);
		worst = fmax(worst, rel(a->hs[i].mean, b->hs[i].mean));
		worst = fmax(worst, fabs(a->hs[i].m2 - b->hs[i].m2) / fmax(1e-12, fabs(a->hs[i].m2)));
	}
	for (size_t i = 0; i < (size_t)a->model.n_layers * a->model.n_heads; i++) {
		const struct agg_moment *x = &a->qk[i].q_first, *y = &b->qk[i].q_first;
		for (int k = 0; k < 4; k++) {
			ck_assert_uint_eq(x[k].n, y[k].n);
			worst = fmax(worst, rel(x[k].mean, y[k].mean));
			worst = fmax(worst, rel(x[k].m2, y[k].m2));
		}
	}
	for (size_t i = 0; i < (size_t)a->model.n_layers * AGG_DISTS; i++) {
		const struct agghist *x = &a->dist[i], *y = &b->dist[i];
		ck_assert(x->n == y->n && x->unbinned == y->unbinned && x->exp == y->exp && x->min == y->min &&
			  x->max == y->max);
		ck_assert_msg(!memcmp(x->bin, y->bin, sizeof x->bin), "histogram %zu: the bins differ", i);
		worst = fmax(worst, rel(x->mean, y->mean));
		worst = fmax(worst, fabs(x->m2 - y->m2) / fmax(1e-12, fabs(x->m2)));
	}
	return worst;
}

/* The largest relative difference of the moments of A and B (float32 rounding apart: counts and
 * histogram totals equal, means and standard deviations close). */
static double agg_batch_diff(const struct aggregate *a, const struct aggregate *b)
{
	ck_assert_uint_eq(a->c.texts, b->c.texts);
	ck_assert_uint_eq(a->c.tokens, b->c.tokens);
	double worst = 0;
	size_t n = (size_t)a->model.n_layers * a->model.n_heads * AGG_SCORES;
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(a->hs[i].n, b->hs[i].n);
		worst = fmax(worst, fabs(a->hs[i].mean - b->hs[i].mean) / fmax(1e-3, fabs(a->hs[i].mean)));
	}
	for (size_t i = 0; i < (size_t)a->model.n_layers * AGG_DISTS; i++) {
		const struct agghist *x = &a->dist[i], *y = &b->dist[i];
		ck_assert_uint_eq(x->n, y->n);
		worst = fmax(worst, fabs(x->mean - y->mean) / fmax(1e-3, fabs(x->mean)));
		worst = fmax(worst, fabs(agghist_std(x) - agghist_std(y)) / fmax(1e-3, agghist_std(x)));
	}
	ck_assert_int_eq(a->sample.n, b->sample.n);
	return worst;
}

static void shards_case(const char *model, bool jsonl)
{
	char mdir[4096], path[] = "/tmp/attnscope-corpus-XXXXXX";
	snprintf(mdir, sizeof mdir, "%s/tests/data/models/%s", testutil_srcdir(), model);
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	write_corpus(path, jsonl);
	struct model *m = NULL;
	struct err e = {{0}};
	ck_assert_msg(model_open(mdir, &m, &e) == 0, "%s", e.msg);
	struct aggregate *one = run(m, path, 1, 1, 1), *merged = NULL;
	ck_assert_uint_eq(one->c.texts, 10);
	ck_assert_uint_eq(one->c.empty, 1);
	ck_assert_uint_eq(one->c.lines, 11);
	for (int k = 1; k <= 4; k++) {
		struct aggregate *s = run(m, path, k, 4, 1);
		if (!merged)
			merged = s;
		else {
			ck_assert_msg(aggregate_merge(merged, s, &e) == 0, "%s", e.msg);
			aggregate_free(s);
		}
	}
	double d = agg_diff(one, merged);
	printf("%s%s: 4 shards merged vs one run: max relative difference %.3g\n", model, jsonl ? " (JSON lines)" : "", d);
	ck_assert_msg(d < 1e-12, "merge differs by %g", d);
	/* The token sample (every token here) and its PCA: identical. */
	ck_assert_uint_eq((uint64_t)one->sample.n, one->c.tokens);
	same_sample(&one->sample, &merged->sample);
	int n = one->sample.n, *o1 = malloc((size_t)n * sizeof *o1), *o2 = malloc((size_t)n * sizeof *o2);
	double *xy1 = malloc((size_t)n * 4 * sizeof *xy1), *xy2 = malloc((size_t)n * 4 * sizeof *xy2), ex1[2], ex2[2];
	ck_assert(aggregate_pca(one, o1, xy1, ex1, &e) == 0 && aggregate_pca(merged, o2, xy2, ex2, &e) == 0);
	ck_assert(!memcmp(xy1, xy2, (size_t)n * 4 * sizeof *xy1) && ex1[0] == ex2[0] && ex1[1] == ex2[1]);
	free(o1), free(o2), free(xy1), free(xy2);
	/* Two workers split the texts the same way. */
	struct aggregate *two = run(m, path, 1, 1, 2);
	ck_assert(agg_diff(one, two) < 1e-12);
	/* Texts run in batches (the default): the same up to float32 rounding. */
	struct aggregate *batched = run_batch(m, path, 1, 1, 1, 0);
	double db = agg_batch_diff(one, batched);
	printf("%s%s: batches of %d vs one text at a time: max relative difference %.3g\n", model, jsonl ? " (JSON lines)" : "",
	       CORPUSRUN_BATCH, db);
	ck_assert_msg(db < 1e-4, "batched differs by %g", db);
	aggregate_free(batched);
	/* Merging a shard twice is refused. */
	ck_assert_int_eq(aggregate_merge(merged, merged, &e), -1);
	ck_assert_msg(!strncmp(e.msg, "shard 1/4 of ", 13), "%s", e.msg);
	aggregate_free(two);
	aggregate_free(one);
	aggregate_free(merged);
	model_close(m);
	unlink(path);
}

START_TEST(shards_equal_one_run)
{
	shards_case("bert-mini", false);
	shards_case("bert-mini", true);
	shards_case("gpt2-mini", false);
}
END_TEST

/* Within a relative 1e-12 (or absolutely, near 0). */
static void near(double got, double want, const char *what, const char *model, int layer, int head)
{
	ck_assert_msg(fabs(got - want) <= 1e-12 * fmax(1, fabs(want)), "%s layer %d head %d %s: %.17g, single text %.17g",
		      model, layer, head, what, got, want);
}

/* A corpus of one text: every aggregated figure equals the single-text analysis of that text, with
 * the samples the views take by default (stats.h). */
static void one_text_case(const char *model, const char *text)
{
	char mdir[4096], path[] = "/tmp/attnscope-corpus-XXXXXX";
	snprintf(mdir, sizeof mdir, "%s/tests/data/models/%s", testutil_srcdir(), model);
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text) && write(fd, "\n", 1) == 1);
	close(fd);
	struct model *m = NULL;
	struct err e = {{0}};
	struct trace *t = NULL;
	ck_assert_msg(model_open(mdir, &m, &e) == 0, "%s", e.msg);
	ck_assert_msg(model_run(m, text, NULL, NULL, &t, &e) == 0, "%s", e.msg);
	struct aggregate *a = run(m, path, 1, 1, 1);
	ck_assert_uint_eq(a->c.texts, 1);
	struct stats_qk_desc *d = calloc((size_t)t->n_heads, sizeof *d);
	for (int l = 0; l < t->n_layers; l++) {
		for (int first = 0; first < 2; first++)
			for (int bessel = 0; bessel < 2; bessel++) {
				stats_qk_desc(t, l, !first, bessel, d);
				for (int h = 0; h < t->n_heads; h++) {
					struct agg_moment q = aggregate_qk_moment(aggregate_qk(a, l, h), false, first),
							  k = aggregate_qk_moment(aggregate_qk(a, l, h), true, first);
					ck_assert_uint_eq(q.n, d[h].count);
					near(q.mean, d[h].q_mean, "q mean", model, l, h);
					near(k.mean, d[h].k_mean, "k mean", model, l, h);
					near(bessel ? aggregate_moment_std(&q) : aggregate_moment_pstd(&q), d[h].q_std, "q std", model, l, h);
					near(bessel ? aggregate_moment_std(&k) : aggregate_moment_pstd(&k), d[h].k_std, "k std", model, l, h);
				}
			}
		for (int every = 0; every < 2; every++) {
			struct stats_dots dots;
			ck_assert(stats_qk_dots(t, l, t->n - 1, every ? STATS_DOTS_VISIBLE : STATS_DOTS_NOTEBOOK, &dots, &e) == 0);
			for (int k = 0; k < 2; k++) {
				const struct agghist *h = aggregate_dist(a, l, (enum agg_dist)(every * 2 + k));
				double mean, sd;
				stats_mean_std(k ? dots.diff : dots.same, k ? dots.n_diff : dots.n_same, &mean, &sd);
				ck_assert_uint_eq(h->n, k ? dots.n_diff : dots.n_same);
				near(h->mean, mean, aggregate_dist_name((enum agg_dist)(every * 2 + k)), model, l, -1);
				near(agghist_std(h), sd, aggregate_dist_name((enum agg_dist)(every * 2 + k)), model, l, -1);
			}
			stats_dots_free(&dots);
		}
		for (int last = 0; last < 2; last++) {
			struct stats_groups g;
			ck_assert(stats_attn_groups(t, l, last, &g, &e) == 0);
			const enum agg_dist which[STATS_GROUP_COUNT] = {AGG_FINAL_PREV, last ? AGG_OTHER_SELF : AGG_OTHER_SELF_NOLAST,
									AGG_FIRST_SELF};
			for (int k = 0; k < STATS_GROUP_COUNT; k++) {
				const struct agghist *h = aggregate_dist(a, l, which[k]);
				double mean, sd;
				stats_mean_std(g.v[k], g.n[k], &mean, &sd);
				ck_assert_uint_eq(h->n, g.n[k]);
				near(h->mean, mean, aggregate_dist_name(which[k]), model, l, -1);
				near(agghist_std(h), sd, aggregate_dist_name(which[k]), model, l, -1);
			}
			stats_groups_free(&g);
		}
	}
	/* The joint PCA of the sample (every token, in key order) = that of the trace's head 0.0. */
	int n = t->n, dim = t->head_dim, *order = malloc((size_t)n * sizeof *order);
	float *x = malloc((size_t)2 * n * dim * sizeof *x);
	double *xy = malloc((size_t)4 * n * sizeof *xy), *xy2 = malloc((size_t)4 * n * sizeof *xy2), ex[2], ex2[2];
	memcpy(x, trace_q(t, 0, 0), (size_t)n * dim * sizeof *x);
	memcpy(x + (size_t)n * dim, trace_k(t, 0, 0), (size_t)n * dim * sizeof *x);
	ck_assert_int_eq(a->sample.n, n);
	ck_assert(aggregate_pca(a, order, xy, ex, &e) == 0 && pca_2d(x, 2 * n, dim, xy2, ex2, &e) == 0);
	near(ex[0], ex2[0], "PCA explained[0]", model, 0, 0);
	near(ex[1], ex2[1], "PCA explained[1]", model, 0, 0);
	for (int i = 0; i < n; i++) {
		int tok = a->sample.tok[order[i]].token;
		ck_assert_str_eq(a->sample.tok[order[i]].piece, t->tokens[tok]);
		ck_assert_str_eq(a->sample.tok[order[i]].text, text);
		for (int c = 0; c < 2; c++) { /* the same point, up to rounding (axes' signs are fixed by pca.c) */
			ck_assert(fabs(xy[2 * i + c] - xy2[2 * tok + c]) < 1e-9 * (1 + fabs(xy2[2 * tok + c])));
			ck_assert(fabs(xy[2 * (n + i) + c] - xy2[2 * (n + tok) + c]) < 1e-9 * (1 + fabs(xy2[2 * (n + tok) + c])));
		}
	}
	free(order), free(x), free(xy), free(xy2);
	free(d);
	aggregate_free(a);
	trace_free(t);
	model_close(m);
	unlink(path);
}

START_TEST(one_text_equals_views)
{
	one_text_case("bert-mini", "The book was on the table, and the table was on the floor.");
	one_text_case("gpt2-mini", "It was the best of times, it was the worst of times.");
	one_text_case("llama-gqa", "Time flies like an arrow.");
	one_text_case("mistral-window", "The quick brown fox jumps over the lazy dog, and then some more words.");
}
END_TEST

START_TEST(aggfile_roundtrip)
{
	char mdir[4096], path[] = "/tmp/attnscope-corpus-XXXXXX", saved[] = "/tmp/attnscope-agg-XXXXXX";
	snprintf(mdir, sizeof mdir, "%s/tests/data/models/gpt2-mini", testutil_srcdir());
	int fd = mkstemp(path);
	close(fd);
	fd = mkstemp(saved);
	close(fd);
	write_corpus(path, false);
	struct model *m = NULL;
	struct err e = {{0}};
	ck_assert_msg(model_open(mdir, &m, &e) == 0, "%s", e.msg);
	struct aggregate *a = run(m, path, 2, 3, 1), *b = NULL;
	ck_assert_msg(aggfile_save(a, saved, &e) == 0, "%s", e.msg);
	ck_assert_msg(aggfile_load(saved, &b, &e) == 0, "%s", e.msg);
	ck_assert(!memcmp(&a->model, &b->model, sizeof a->model) && !memcmp(&a->c, &b->c, sizeof a->c));
	size_t n = (size_t)a->model.n_layers * a->model.n_heads * AGG_SCORES;
	for (size_t i = 0; i < n; i++) /* 17 significant digits: bit-exact */
		ck_assert(a->hs[i].n == b->hs[i].n && a->hs[i].mean == b->hs[i].mean && a->hs[i].m2 == b->hs[i].m2);
	ck_assert(!memcmp(a->qk, b->qk, (size_t)a->model.n_layers * a->model.n_heads * sizeof *a->qk));
	ck_assert(!memcmp(a->dist, b->dist, (size_t)a->model.n_layers * AGG_DISTS * sizeof *a->dist));
	ck_assert_int_gt(a->sample.n, 0);
	same_sample(&a->sample, &b->sample);
	ck_assert_int_eq(b->n_src, 1);
	ck_assert(b->src[0].shard_k == 2 && b->src[0].shard_n == 3 && !strcmp(b->src[0].file, path));
	aggregate_free(a);
	aggregate_free(b);
	model_close(m);
	unlink(path);
	unlink(saved);
}
END_TEST

/* aggfile_parse refuses TEXT with a message starting with WANT. */
static void refuse(const char *text, const char *want)
{
	struct aggregate *a = (void *)1;
	struct err e = {{0}};
	ck_assert_int_eq(aggfile_parse(text, strlen(text), &a, &e), -1);
	ck_assert_ptr_null(a);
	ck_assert_msg(!strncmp(e.msg, want, strlen(want)), "got '%s', want '%s…'", e.msg, want);
}

#define MODEL "\"model\": {\"name\": \"m\", \"family\": \"bert\", \"causal\": false, \"layers\": 1, \"heads\": 1, " \
	      "\"kv_heads\": 1, \"head_dim\": 4, \"hidden\": 4, \"max_positions\": 8}"
#define COUNTS "\"counts\": {\"lines\": 2, \"texts\": 2, \"tokens\": 9, \"empty\": 0, \"truncated\": 0, \"failed\": 0, " \
	       "\"first_special\": 2}"
#define SOURCES "\"sources\": [{\"file\": \"c.txt\", \"shard\": [1, 1], \"texts\": 2, \"partial\": false}]"

START_TEST(aggfile_refusals)
{
	refuse("[1", "invalid JSON at line 1");
	refuse("{}", "not an attnscope aggregate");
	refuse("{\"format\": \"attnscope-aggregate\", \"version\": 3}", "aggregate format version other is not 2");
	refuse("{\"format\": \"attnscope-aggregate\", \"version\": 1}", "aggregate format version 1 is older than 2");
	refuse("{\"format\": \"attnscope-aggregate\", \"version\": 2}", "no \"model\" object");
	refuse("{\"format\": \"attnscope-aggregate\", \"version\": 2, \"model\": {\"name\": \"m\", \"family\": \"bert\", "
	       "\"causal\": false, \"layers\": 100000, \"heads\": 100000, \"kv_heads\": 1, \"head_dim\": 4, \"hidden\": 4, "
	       "\"max_positions\": 8}}",
	       "a model of 100000 layers");
	refuse("{\"format\": \"attnscope-aggregate\", \"version\": 2, " MODEL ", " SOURCES ", " COUNTS ", \"heads\": []}",
	       "\"heads\" is not an array of 1 heads");
	refuse("{\"format\": \"attnscope-aggregate\", \"version\": 2, " MODEL ", \"sources\": [{\"file\": \"c\", \"shard\": "
	       "[3, 2], \"texts\": 1, \"partial\": false}]}",
	       "sources[0]: shard 3/2 is not K/N");
	refuse("{\"format\": \"attnscope-aggregate\", \"version\": 2, " MODEL ", " SOURCES ", \"counts\": {\"lines\": 1, "
	       "\"texts\": 2, \"tokens\": 9, \"empty\": 0, \"truncated\": 0, \"failed\": 0, \"first_special\": 0}}",
	       "counts: texts, empty and failed lines exceed the lines");
	refuse("{\"format\": \"attnscope-aggregate\", \"version\": 2, " MODEL ", " SOURCES ", " COUNTS
	       ", \"heads\": [{\"layer\": 0, \"head\": 0, \"prev\": {\"n\": 3, \"mean\": 0.5, \"m2\": 0}}]}",
	       "heads[0].prev: n 3 is more than the 2 texts");
	refuse("{\"format\": \"attnscope-aggregate\", \"version\": 2, \"version\": 2}", "invalid JSON");
}
END_TEST

/* TEXT with the first occurrence of FROM replaced by TO (a new string). */
static char *replace_once(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	ck_assert_msg(at != NULL, "'%s' not in the aggregate", from);
	size_t a = (size_t)(at - text), lf = strlen(from), lt = strlen(to), n = strlen(text);
	char *out = malloc(n - lf + lt + 1);
	memcpy(out, text, a);
	memcpy(out + a, to, lt);
	memcpy(out + a + lt, at + lf, n - a - lf + 1);
	return out;
}

/* A real aggregate written out, each new part broken in turn: refused with a message saying where. */
START_TEST(aggfile_new_parts_refused)
{
	char mdir[4096], path[] = "/tmp/attnscope-corpus-XXXXXX";
	snprintf(mdir, sizeof mdir, "%s/tests/data/models/bert-mini", testutil_srcdir());
	int fd = mkstemp(path);
	close(fd);
	write_corpus(path, true);
	struct model *m = NULL;
	struct err e = {{0}};
	ck_assert_msg(model_open(mdir, &m, &e) == 0, "%s", e.msg);
	struct aggregate *a = run(m, path, 1, 1, 1), *b = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ck_assert(aggfile_write(a, f, &e) == 0);
	fclose(f);
	ck_assert_msg(aggfile_parse(text, len, &b, &e) == 0, "%s", e.msg);
	aggregate_free(b);
	static const char *const cases[][3] = {
		{"\"sample\": {", "\"sampl\": {", "no \"sample\" object"},
		{"\"cap\": 20000", "\"cap\": 5", "sample: dim 4 and cap 5 are not the model's 4 and 20000"},
		{"\"layer\": 0, \"head\": 0, \"dim\"", "\"layer\": 3, \"head\": 0, \"dim\"", "sample: \"layer\" is not an integer in 0..2"},
		{"\"q\": \"", "\"q\": \"A", "sample.tokens[0]: \"q\" or \"k\" is not the base64 of 4 floats"},
		{"\"token\": ", "\"token\": 1000, \"x\": ", "sample.tokens[0]: \"token\" is not an integer in 0..127"},
		{"{\"line\": 0, \"text\": ", "{\"line\": 99, \"text\": ", "sample.texts[1]: lines are not in increasing order"},
		{"{\"line\": 0, \"text\": ", "{\"line\": 0, \"texts\": ", "sample.texts[0]: \"text\" is not a string"},
		{"\"text_b\": null", "\"text_b\": 3", "sample.texts[0]: \"text_b\" is not a string or null"},
		{"\"q_first\": {\"n\": ", "\"q_first\": {\"n\": 1000000", "heads[0].qk: q_first: n 1000000"},
		{"\"k_rest\": {\"n\"", "\"k_rst\": {\"n\"", "heads[0].qk: no \"k_rest\" object"},
		{"\"first_bin\": ", "\"first_bin\": 1, \"fb\": ", "layers[0]: dots_same: min and max do not fall in"},
		{"\"exp\": ", "\"exp\": 2000, \"ex\": ", "layers[0]: dots_same: \"exp\" is not an integer in -30..1000"},
		{"\"unbinned\": 0", "\"unbinned\": -1", "layers[0]: dots_same: \"unbinned\" is not an integer"},
		{"\"other_self\": {", "\"other_selfie\": {", "layers[0]: no \"other_self\" object"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *bad = replace_once(text, cases[i][0], cases[i][1]);
		b = (void *)1;
		ck_assert_int_eq(aggfile_parse(bad, strlen(bad), &b, &e), -1);
		ck_assert_ptr_null(b);
		ck_assert_msg(!strncmp(e.msg, cases[i][2], strlen(cases[i][2])), "case %zu: got '%s', want '%s…'", i, e.msg,
			      cases[i][2]);
		free(bad);
	}
	free(text);
	aggregate_free(a);
	model_close(m);
	unlink(path);
}
END_TEST

/* Parse LINE as plain text or JSON: the kind, and text / text_b or the message. */
static void line_case(const char *line, bool jsonl, enum corpus_kind kind, const char *a, const char *b)
{
	size_t len = strlen(line);
	char *buf = malloc(len + 1), *owned = NULL;
	memcpy(buf, line, len + 1);
	struct corpus_item it;
	struct err e = {{0}};
	corpus_parse_line(buf, len, jsonl, &it, &owned, &e);
	ck_assert_msg(it.kind == kind, "'%s': kind %d, want %d (%s)", line, it.kind, kind, e.msg);
	if (kind == CORPUS_TEXT) {
		ck_assert_str_eq(it.text, a);
		if (b)
			ck_assert_str_eq(it.text_b, b);
		else
			ck_assert_ptr_null(it.text_b);
	} else if (kind == CORPUS_BAD) {
		ck_assert_msg(!strncmp(e.msg, a, strlen(a)), "'%s': '%s', want '%s…'", line, e.msg, a);
	}
	free(owned);
	free(buf);
}

START_TEST(corpus_lines)
{
	line_case("hello world\r", false, CORPUS_TEXT, "hello world", NULL);
	line_case(" \t\r", false, CORPUS_EMPTY, NULL, NULL);
	line_case("", false, CORPUS_EMPTY, NULL, NULL);
	line_case("{\"text\": \"a\\u00e9\", \"text_b\": \"b\", \"label\": 3}", true, CORPUS_TEXT, "a\xc3\xa9", "b");
	line_case("{\"text\": \"a\", \"text_b\": null}", true, CORPUS_TEXT, "a", NULL);
	line_case("{\"text\": \"  \"}", true, CORPUS_EMPTY, NULL, NULL);
	line_case("{\"text\": 3}", true, CORPUS_BAD, "no \"text\" string", NULL);
	line_case("[\"text\"]", true, CORPUS_BAD, "not a JSON object", NULL);
	line_case("{\"text\": \"a\", \"text_b\": 1}", true, CORPUS_BAD, "\"text_b\" is not a string", NULL);
	line_case("{\"text\": \"a\"", true, CORPUS_BAD, "invalid JSON at column", NULL);
	line_case("{\"text\": \"a\\u0000b\"}", true, CORPUS_BAD, "invalid JSON", NULL);
	char nul[] = "ab\0cd";
	char *owned;
	struct corpus_item it;
	struct err e = {{0}};
	corpus_parse_line(nul, 5, false, &it, &owned, &e);
	ck_assert_int_eq(it.kind, CORPUS_BAD);
	ck_assert_str_eq(e.msg, "a NUL byte at column 3");
}
END_TEST

START_TEST(corpus_reader)
{
	char path[] = "/tmp/attnscope-lines-XXXXXX";
	int fd = mkstemp(path);
	const char data[] = "\xef\xbb\xbf\n  {\"text\": \"one\"}\nnot json\n\n{\"text\": \"two\"}";
	ck_assert_int_eq(write(fd, data, sizeof data - 1), (ssize_t)sizeof data - 1);
	close(fd);
	ck_assert_int_eq(corpus_count_lines(path), 5);
	struct corpus_reader *r;
	struct corpus_item it;
	struct err e = {{0}};
	ck_assert_int_eq(corpus_open(path, &r, &e), 0);
	ck_assert_int_eq(corpus_next(r, true, &it, &e), 1);
	ck_assert(it.kind == CORPUS_EMPTY && it.line == 1);
	ck_assert_int_eq(corpus_next(r, true, &it, &e), 1);
	ck_assert(it.kind == CORPUS_TEXT && !strcmp(it.text, "one"));
	ck_assert_int_eq(corpus_next(r, true, &it, &e), 1);
	ck_assert_int_eq(it.kind, CORPUS_BAD);
	ck_assert_str_eq(e.msg, "line 3: invalid JSON at column 3: '[' or '{' expected near 'not'");
	ck_assert_int_eq(corpus_next(r, false, &it, &e), 1);
	ck_assert_int_eq(it.kind, CORPUS_SKIPPED);
	ck_assert_int_eq(corpus_next(r, true, &it, &e), 1);
	ck_assert(it.kind == CORPUS_TEXT && !strcmp(it.text, "two") && it.line == 5);
	ck_assert_int_eq(corpus_next(r, true, &it, &e), 0);
	corpus_close(r);
	ck_assert_int_eq(corpus_open("/nonexistent/c.txt", &r, &e), -1);
	ck_assert_str_eq(e.msg, "/nonexistent/c.txt: No such file or directory");
	unlink(path);
}
END_TEST

START_TEST(progress_line)
{
	char buf[160];
	progress_format(buf, sizeof buf, 412, 1000, 10, 79, "lines");
	ck_assert_str_eq(buf, "412/1000 lines  41% [#############....................]  41.2 lines/s  ETA 0:14");
	ck_assert_int_le((int)strlen(buf), 79);
	progress_format(buf, sizeof buf, 7, 0, 2, 79, "lines");
	ck_assert_str_eq(buf, "7 lines  3.5 lines/s");
	progress_format(buf, sizeof buf, 1000, 1000, 20, 30, "lines");
	ck_assert_str_eq(buf, "1000/1000 lines 100%  50.0 lines/s");
	progress_duration(buf, sizeof buf, 3909);
	ck_assert_str_eq(buf, "1:05:09");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("corpus");
	TCase *tc = tcase_create("corpus");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, moments_merge);
	tcase_add_test(tc, hist_merge);
	tcase_add_test(tc, sample_merge);
	tcase_add_test(tc, batch_forward_matches);
	tcase_add_test(tc, one_text_equals_views);
	tcase_add_test(tc, shards_equal_one_run);
	tcase_add_test(tc, aggfile_roundtrip);
	tcase_add_test(tc, aggfile_refusals);
	tcase_add_test(tc, aggfile_new_parts_refused);
	tcase_add_test(tc, corpus_lines);
	tcase_add_test(tc, corpus_reader);
	tcase_add_test(tc, progress_line);
	suite_add_tcase(s, tc);
	return testutil_run_suite(s, false);
}
