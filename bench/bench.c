/* bench.c -- `make bench`: load and forward-pass timings of bert-base- and gpt2-sized models with
 * random weights in the real shapes, against this machine's measured sgemm rate.
 * Prints figures and the targets; it never fails on speed (speed is measured, not asserted). */
#include <cblas.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "corpusrun.h"
#include "model-internal.h"
#include "model.h"
#include "runner.h"
#include "ui.h"

#include <poll.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static float rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return ((rng_state >> 40) / (float)(1 << 24) - 0.5f) * 0.04f;
}

struct spec {
	const char *name;
	int gpt2; /* 0 = BERT layout, 1 = GPT-2 layout */
	int layers, heads, hidden, inter, vocab, maxpos;
};

struct tensor_spec {
	char name[96];
	int64_t d0, d1; /* d1 = 0 for vectors */
};

static int tensor_list(const struct spec *s, struct tensor_spec *ts)
{
	int n = 0, H = s->hidden, inter_ = s->inter;
#define ADD(nm, a, b) (snprintf(ts[n].name, sizeof ts[n].name, "%s", nm), ts[n].d0 = (a), ts[n].d1 = (b), n++)
	char nm[96];
	if (!s->gpt2) {
		ADD("embeddings.word_embeddings.weight", s->vocab, H);
		ADD("embeddings.position_embeddings.weight", s->maxpos, H);
		ADD("embeddings.token_type_embeddings.weight", 2, H);
		ADD("embeddings.LayerNorm.weight", H, 0);
		ADD("embeddings.LayerNorm.bias", H, 0);
		for (int l = 0; l < s->layers; l++) {
			const char *lin[] = {"attention.self.query", "attention.self.key", "attention.self.value",
					     "attention.output.dense"};
			for (int i = 0; i < 4; i++) {
				snprintf(nm, sizeof nm, "encoder.layer.%d.%s.weight", l, lin[i]);
				ADD(nm, H, H);
				snprintf(nm, sizeof nm, "encoder.layer.%d.%s.bias", l, lin[i]);
				ADD(nm, H, 0);
			}
			const char *ln[] = {"attention.output.LayerNorm", "output.LayerNorm"};
			for (int i = 0; i < 2; i++) {
				snprintf(nm, sizeof nm, "encoder.layer.%d.%s.weight", l, ln[i]);
				ADD(nm, H, 0);
				snprintf(nm, sizeof nm, "encoder.layer.%d.%s.bias", l, ln[i]);
				ADD(nm, H, 0);
			}
			snprintf(nm, sizeof nm, "encoder.layer.%d.intermediate.dense.weight", l);
			ADD(nm, inter_, H);
			snprintf(nm, sizeof nm, "encoder.layer.%d.intermediate.dense.bias", l);
			ADD(nm, inter_, 0);
			snprintf(nm, sizeof nm, "encoder.layer.%d.output.dense.weight", l);
			ADD(nm, H, inter_);
			snprintf(nm, sizeof nm, "encoder.layer.%d.output.dense.bias", l);
			ADD(nm, H, 0);
		}
	} else {
		ADD("wte.weight", s->vocab, H);
		ADD("wpe.weight", s->maxpos, H);
		for (int l = 0; l < s->layers; l++) {
			struct {
				const char *n;
				int64_t a, b;
			} t[] = {{"ln_1.weight", H, 0},       {"ln_1.bias", H, 0},     {"attn.c_attn.weight", H, 3 * H},
				 {"attn.c_attn.bias", 3 * H, 0}, {"attn.c_proj.weight", H, H}, {"attn.c_proj.bias", H, 0},
				 {"ln_2.weight", H, 0},       {"ln_2.bias", H, 0},     {"mlp.c_fc.weight", H, inter_},
				 {"mlp.c_fc.bias", inter_, 0},     {"mlp.c_proj.weight", inter_, H}, {"mlp.c_proj.bias", H, 0}};
			for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
				snprintf(nm, sizeof nm, "h.%d.%s", l, t[i].n);
				ADD(nm, t[i].a, t[i].b);
			}
		}
		ADD("ln_f.weight", H, 0);
		ADD("ln_f.bias", H, 0);
	}
#undef ADD
	return n;
}

static int copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	char buf[65536];
	size_t got;
	int rc = in && out ? 0 : -1;
	while (rc == 0 && (got = fread(buf, 1, sizeof buf, in)) > 0)
		if (fwrite(buf, 1, got, out) != got)
			rc = -1;
	if (in)
		fclose(in);
	if (out && fclose(out) != 0)
		rc = -1;
	return rc;
}

/* Write a model folder for S into DIR: config.json, tokenizer files, model.safetensors (F32, header
 * padded to 8 bytes so the weights are mapped, not copied). Returns the file size. */
static long long write_model(const struct spec *s, const char *dir)
{
	static struct tensor_spec ts[1024];
	int n = tensor_list(s, ts);
	char path[PATH_MAX], *header = malloc(1 << 20);
	size_t hl = 0;
	uint64_t off = 0;
	hl += sprintf(header, "{\"__metadata__\":{\"format\":\"pt\"}");
	for (int i = 0; i < n; i++) {
		uint64_t count = (uint64_t)ts[i].d0 * (ts[i].d1 ? ts[i].d1 : 1);
		if (ts[i].d1)
			hl += sprintf(header + hl, ",\"%s\":{\"dtype\":\"F32\",\"shape\":[%lld,%lld],\"data_offsets\":[%llu,%llu]}",
				      ts[i].name, (long long)ts[i].d0, (long long)ts[i].d1, (unsigned long long)off,
				      (unsigned long long)(off + 4 * count));
		else
			hl += sprintf(header + hl, ",\"%s\":{\"dtype\":\"F32\",\"shape\":[%lld],\"data_offsets\":[%llu,%llu]}",
				      ts[i].name, (long long)ts[i].d0, (unsigned long long)off,
				      (unsigned long long)(off + 4 * count));
		off += 4 * count;
	}
	header[hl++] = '}';
	while ((8 + hl) % 8)
		header[hl++] = ' ';
	snprintf(path, sizeof path, "%s/model.safetensors", dir);
	FILE *fp = fopen(path, "wb");
	if (!fp) {
		free(header);
		return -1;
	}
	uint64_t len = hl;
	fwrite(&len, 8, 1, fp); /* little-endian on the machines we run on */
	fwrite(header, 1, hl, fp);
	float *buf = malloc(1 << 22);
	for (uint64_t done = 0; done < off;) {
		size_t chunk = off - done < (1 << 22) ? (size_t)(off - done) : (1 << 22);
		for (size_t i = 0; i < chunk / 4; i++)
			buf[i] = rnd() + (i % 97 == 0 ? 1.0f : 0.0f); /* LayerNorm gains stay non-degenerate */
		fwrite(buf, 1, chunk, fp);
		done += chunk;
	}
	free(buf);
	free(header);
	fclose(fp);
	snprintf(path, sizeof path, "%s/config.json", dir);
	fp = fopen(path, "w");
	if (!s->gpt2)
		fprintf(fp, "{\"model_type\":\"bert\",\"hidden_size\":%d,\"num_hidden_layers\":%d,\"num_attention_heads\":%d,"
			    "\"intermediate_size\":%d,\"max_position_embeddings\":%d,\"vocab_size\":%d,\"type_vocab_size\":2,"
			    "\"hidden_act\":\"gelu\",\"layer_norm_eps\":1e-12}\n",
			s->hidden, s->layers, s->heads, s->inter, s->maxpos, s->vocab);
	else
		fprintf(fp, "{\"model_type\":\"gpt2\",\"n_embd\":%d,\"n_layer\":%d,\"n_head\":%d,\"n_positions\":%d,"
			    "\"vocab_size\":%d,\"activation_function\":\"gelu_new\",\"layer_norm_epsilon\":1e-5}\n",
			s->hidden, s->layers, s->heads, s->maxpos, s->vocab);
	fclose(fp);
	/* Real vocabularies from the test data, so the tokenizer loads exactly as for real checkpoints. */
	const char *files[] = {"bert/vocab.txt", "gpt2/vocab.json", "gpt2/merges.txt"};
	for (int i = s->gpt2 ? 1 : 0; i < (s->gpt2 ? 3 : 1); i++) {
		char from[PATH_MAX];
		snprintf(from, sizeof from, "%s/tests/data/tokenizer/%s", model_data_dir(), files[i]);
		snprintf(path, sizeof path, "%s/%s", dir, strchr(files[i], '/') + 1);
		if (copy_file(from, path) < 0) {
			fprintf(stderr, "bench: cannot copy %s\n", from);
			return -1;
		}
	}
	return (long long)(8 + hl + off);
}

static double forward_flops(const struct spec *s, int n)
{
	double H = s->hidden, inter_ = s->inter;
	double per_layer = 2.0 * n * H * 3 * H + 2.0 * n * H * H + 2.0 * 2 * n * H * inter_ + 2.0 * 2 * (double)n * n * H;
	return per_layer * s->layers;
}

static double sgemm_rate(void)
{
	int N = 1536;
	float *a = malloc(sizeof(float) * N * N), *b = malloc(sizeof(float) * N * N), *c = malloc(sizeof(float) * N * N);
	for (int i = 0; i < N * N; i++)
		a[i] = rnd(), b[i] = rnd();
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1, a, N, b, N, 0, c, N);
	double best = 1e30;
	for (int r = 0; r < 5; r++) {
		double t0 = now();
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1, a, N, b, N, 0, c, N);
		double dt = now() - t0;
		best = dt < best ? dt : best;
	}
	free(a);
	free(b);
	free(c);
	return 2.0 * N * N * N / best / 1e9;
}

static int bench_source_run(void *ctx, const char *text, const char *text_b, const volatile int *cancel,
			    struct trace **out, struct err *e)
{
	return model_run(ctx, text, text_b, cancel, out, e);
}

/* Text of exactly N tokens for this model ("word" is one token in both vocabularies). */
static char *bench_text(const struct model *m, int n)
{
	int words = model_get_info(m)->causal ? n : n - 2; /* BERT adds [CLS] and [SEP] */
	char *text = malloc((size_t)words * 5 + 1), *p = text;
	for (int i = 0; i < words; i++)
		p += sprintf(p, i ? " word" : "word");
	*p = 0;
	return text;
}

/* Keystroke to updated frame, the explorer's real path: submit the edited text to the worker
 * (which waits out the debounce, then runs the model), wait for its wake-up, take the trace and
 * redraw the grid. Best of REPS. Also the redraw alone. */
static void bench_keystroke(struct model *m, int n, int reps)
{
	struct ui_source src = {.name = "bench", .ctx = m, .run = bench_source_run};
	int fds[2];
	if (pipe(fds) < 0)
		return;
	struct runner *r = runner_new(&src, UI_DEBOUNCE_MS, fds[1]);
	char *text = bench_text(m, n);
	double best = 1e30, best_draw = 1e30;
	for (int i = 0; i < reps; i++) {
		usleep(2000 * UI_DEBOUNCE_MS); /* an isolated keystroke, not part of a burst */
		double t0 = now();
		runner_submit(r, text, NULL);
		struct trace *t = NULL;
		struct err e = {{0}};
		for (;;) {
			struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
			poll(&pfd, 1, 1000);
			char b;
			if (pfd.revents & POLLIN)
				(void)!read(fds[0], &b, 1);
			if (runner_take(r, &t, &e))
				break;
		}
		if (!t) {
			fprintf(stderr, "bench: %s\n", e.msg);
			break;
		}
		double t1 = now();
		ui_bench_grid_redraw(t, 100, 30, 1, DEPTH_256, true);
		double t2 = now();
		best = t2 - t0 < best ? t2 - t0 : best;
		best_draw = t2 - t1 < best_draw ? t2 - t1 : best_draw;
		trace_free(t);
	}
	printf("  keystroke -> new frame at %3d tokens: %7.1f ms (isolated edit: model run + grid redraw %.1f ms; "
	       "fast typing adds the %d ms debounce)%s\n",
	       n, best * 1e3, best_draw * 1e3, UI_DEBOUNCE_MS, n == 32 && best > 0.050 ? "  (above the 50 ms target)" : "");
	free(text);
	runner_free(r);
	close(fds[0]);
	close(fds[1]);
}

/* Peak resident memory so far, in MB (VmHWM). */
static double peak_rss_mb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	double kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmHWM:", 6))
			kb = atof(line + 6);
	if (f)
		fclose(f);
	return kb / 1024;
}

/* Corpus mode: TEXTS texts of about 25 tokens (23 common words + [CLS]/[SEP]) through corpusrun
 * with one worker per core. Returns texts per second. */
static double bench_corpus(const struct model *m, const char *dir, int texts, double *seconds)
{
	static const char *const words[] = {"the", "cat", "sat", "on", "a", "mat", "while", "dog", "ran", "across",
					    "field", "and", "birds", "sang", "in", "trees", "near", "river", "of",
					    "old", "town", "people", "said", "that", "it", "was", "good", "day"};
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/corpus.txt", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	uint64_t x = 12345;
	for (int t = 0; t < texts; t++) {
		for (int w = 0; w < 23; w++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			fprintf(f, w ? " %s" : "%s", words[(x >> 33) % (sizeof words / sizeof *words)]);
		}
		fputc('\n', f);
	}
	fclose(f);
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	struct corpusrun_opts o = {.path = path, .shard_k = 1, .shard_n = 1, .workers = cores > 0 ? (int)cores : 1};
	struct aggregate *a = NULL;
	struct err e = {{0}};
	bool cancelled;
	double t0 = now();
	int rc = corpusrun(m, &o, &a, &cancelled, &e);
	double dt = now() - t0;
	unlink(path);
	if (rc < 0) {
		fprintf(stderr, "bench: %s\n", e.msg);
		return -1;
	}
	*seconds = dt;
	printf("  corpus: %d texts, %llu tokens, %ld workers: %.1f s, %.1f texts/s; peak RSS %.0f MB\n", texts,
	       (unsigned long long)a->c.tokens, cores, dt, texts / dt, peak_rss_mb());
	aggregate_free(a);
	return texts / dt;
}

static void remove_dir(const char *dir)
{
	const char *files[] = {"model.safetensors", "config.json", "vocab.txt", "vocab.json", "merges.txt", "corpus.txt"};
	char path[PATH_MAX];
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

int main(int argc, char **argv)
{
	int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	int corpus_only = argc > 1 && strcmp(argv[1], "--corpus") == 0; /* only the corpus-mode figure */
	const struct spec specs[] = {
		{"bert-base-sized (12 layers, 12 heads, hidden 768)", 0, 12, 12, 768, 3072, 30522, 512},
		{"gpt2-sized (12 layers, 12 heads, hidden 768)", 1, 12, 12, 768, 3072, 50257, 1024},
	};
	const int lengths[] = {8, 32, 128, 512};
	const char *ct = getenv("OPENBLAS_CORETYPE");
	printf("attnscope benchmark -- %d OpenBLAS threads, OPENBLAS_CORETYPE=%s, %s\n", openblas_get_num_threads(),
	       ct ? ct : "(unset)", openblas_get_config());
	double peak = sgemm_rate();
	printf("machine sgemm rate (1536^3, best of 5): %.1f GFLOP/s\n\n", peak);
	int below = 0;
	for (size_t si = 0; si < sizeof specs / sizeof specs[0]; si++) {
		const struct spec *s = &specs[si];
		char dir[PATH_MAX];
		const char *tmp = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%s/attnscope-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir)) {
			perror("bench: mkdtemp");
			return 1;
		}
		long long size = write_model(s, dir);
		if (size < 0)
			return 1;
		struct model *m = NULL;
		struct err e = {{0}};
		double t0 = now();
		if (model_open(dir, &m, &e) < 0) {
			fprintf(stderr, "bench: %s\n", e.msg);
			return 1;
		}
		double load = now() - t0;
		printf("%s\n  model file %.0f MB; load %.1f ms (page cache warm); weights copied at load: %zu bytes\n",
		       s->name, size / 1e6, load * 1e3, model_bytes_converted(m));
		if (!s->gpt2) { /* the corpus-mode target: 1,000 texts of ~25 tokens in <= 60 s */
			double secs = 0;
			double rate = bench_corpus(m, dir, quick ? 100 : 1000, &secs);
			if (rate > 0 && 1000 / rate > 60) {
				printf("  (corpus mode below the 1,000 texts in 60 s target)\n");
				below++;
			}
		}
		if (corpus_only) {
			model_close(m);
			remove_dir(dir);
			break;
		}
		if (load > 0.5)
			below++;
		printf("  %6s %12s %10s %9s\n", "tokens", "forward ms", "GFLOP/s", "of sgemm");
		for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
			int n = lengths[li];
			int32_t *ids = malloc(n * sizeof *ids);
			for (int i = 0; i < n; i++)
				ids[i] = 1000 + (i * 7919) % 20000;
			int reps = quick ? 1 : (n <= 32 ? 20 : n <= 128 ? 8 : 3);
			double best = 1e30;
			for (int r = 0; r < reps + 1; r++) {
				struct trace *t = NULL;
				double a = now();
				if (model_run_ids(m, ids, NULL, n, NULL, &t, &e) < 0) {
					fprintf(stderr, "bench: %s\n", e.msg);
					return 1;
				}
				double dt = now() - a;
				if (r > 0 && dt < best) /* the first run warms caches and pages in the weights */
					best = dt;
				trace_free(t);
			}
			double rate = forward_flops(s, n) / best / 1e9;
			printf("  %6d %12.2f %10.1f %8.0f%%%s\n", n, best * 1e3, rate, 100 * rate / peak,
			       n >= 128 && rate < 0.75 * peak ? "  (below the 75% target)" : "");
			if (n >= 128 && rate < 0.75 * peak)
				below++;
			free(ids);
		}
		/* The floor under any keystroke latency: the forward's arithmetic at the machine's sgemm rate. */
		printf("  a forward at 32 tokens is %.2f GFLOP: %.0f ms at the sgemm rate, the least any keystroke can take\n",
		       forward_flops(s, 32) / 1e9, forward_flops(s, 32) / (peak * 1e9) * 1e3);
		bench_keystroke(m, 32, quick ? 1 : 5);
		bench_keystroke(m, 128, quick ? 1 : 3);
		/* A full redraw of the 144-head grid after a new trace (cold) and after a move (warm). */
		struct trace *t = NULL;
		char *text = bench_text(m, 128);
		if (model_run(m, text, NULL, NULL, &t, &e) == 0) {
			printf("  grid redraw, 144 heads, 128 tokens: 100x30 %.2f ms new trace, %.2f ms moved; 200x60 %.2f / %.2f ms\n",
			       ui_bench_grid_redraw(t, 100, 30, 10, DEPTH_256, true),
			       ui_bench_grid_redraw(t, 100, 30, 10, DEPTH_256, false),
			       ui_bench_grid_redraw(t, 200, 60, 10, DEPTH_256, true),
			       ui_bench_grid_redraw(t, 200, 60, 10, DEPTH_256, false));
			trace_free(t);
		}
		free(text);
		model_close(m);
		remove_dir(dir);
		printf("\n");
	}
	if (corpus_only)
		return 0;
	/* The bundled demo models, which is what a newcomer's first run uses. */
	const char *demos[] = {"demo-bert", "demo-gpt2"};
	for (size_t di = 0; di < sizeof demos / sizeof demos[0]; di++) {
		struct model *m = NULL;
		struct err e = {{0}};
		double t0 = now();
		if (model_open(demos[di], &m, &e) < 0) {
			printf("%s: not measured (%s)\n\n", demos[di], e.msg);
			continue;
		}
		double load = now() - t0;
		const struct model_info *info = model_get_info(m);
		printf("%s (bundled; %d layers, %d heads, hidden %d)\n  load %.1f ms (F16 widened to float32: %zu bytes)\n",
		       demos[di], info->n_layers, info->n_heads, info->hidden, load * 1e3, model_bytes_converted(m));
		bench_keystroke(m, 32, quick ? 1 : 5);
		bench_keystroke(m, 128, quick ? 1 : 3);
		model_close(m);
		printf("\n");
	}
	printf("targets: forward >= 75%% of the sgemm rate at 128+ tokens; load of a 440 MB model well under 1 s;\n"
	       "         keystroke -> frame <= 50 ms at 32 tokens; corpus mode 1,000 texts of ~25 tokens <= 60 s.\n");
	printf("%s\n", below ? "some targets missed (see above)" : "all targets met");
	return 0;
}
