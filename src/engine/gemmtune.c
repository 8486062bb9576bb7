/* gemmtune.c -- time OpenBLAS, oneDNN and attnscope's kernel on the engine's shape classes and keep
 * the choice (see gemmtune.h). On a 2-core AMD EPYC (AVX2 and FMA, OpenBLAS 0.3.21's Zen kernels) oneDNN 2.6's AVX2
 * sgemm ran 10-40 % faster than OpenBLAS's at 8..512 rows, single-threaded; on AVX-512 machines it
 * ran twice as fast; elsewhere it may lose: hence a measurement rather than a rule. */
#include "config.h"

#include "engine/gemmtune.h"

#include "base/progress.h"

#include <cblas.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const int gemmtune_rows[GEMM_SIZES] = {8, 32, 128, 512};

/* How much faster another library must be to take a class from attnscope's kernel (gemmtune_measure):
 * 10 % (GEMMTUNE_MARGIN_SCORES for a head's scores, gemmtune.h), about the spread of repeated measurements on a shared 2-core machine; 25 % for a head's
 * scores, whose library also sets how a causal pass's attention runs (gemm.c: on the kernel in
 * blocks of 64 queries that skip the keys they do not see, on oneDNN in blocks of 8, each call in
 * 16-row pieces). On an Intel Xeon with AVX-512, oneDNN measured 12-17 % faster on the class's shape,
 * yet the whole forward ran faster with the scores on the kernel: bert-base shape 103.7 against 108.2
 * ms at 128 tokens and 461 against 499 at 512, gpt2 111 against 113 and 564 against 567. */
#define OWN_MARGIN 1.10

static const char *const lib_name[GEMM_LIBS] = {"openblas", "dnnl", "attnscope"};
static const char *const lib_title[GEMM_LIBS] = {"OpenBLAS", "oneDNN", "attnscope"};

const char *gemmtune_lib_name(enum gemm_lib lib)
{
	return (unsigned)lib < GEMM_LIBS ? lib_name[lib] : "?";
}

const char *gemmtune_lib_title(enum gemm_lib lib)
{
	return (unsigned)lib < GEMM_LIBS ? lib_title[lib] : "?";
}

int gemmtune_class(bool trans_b, int k)
{
	(void)trans_b;
	return k <= 128 ? 0 : k <= 1024 ? 1 : 2;
}

const char *gemmtune_class_name(int cls)
{
	static const char *const names[GEMM_CLASSES] = {"k<=128", "k<=1024", "k>1024"};
	return cls >= 0 && cls < GEMM_CLASSES ? names[cls] : "?";
}

/* Each class's timed shape on LIB: depth K and columns N as the forward calls them (a head's 64 dims
 * against 256 keys; a weight tile of 128 outputs from 768 inputs, of 64 from 3072; attnscope's
 * kernel gets tiles of 192 columns: gemm_tile_columns). */
static void tune_shape(int cls, int lib, int *n, int *k)
{
	static const int ks[GEMM_CLASSES] = {64, 768, 3072}, ns[GEMM_CLASSES] = {256, 128, 64};
	*k = ks[cls];
	*n = lib == GEMM_LIB_OWN && cls > 0 ? 192 : ns[cls];
}

void gemmtune_key(const char *dnnl_isa, const char *own, char *out, size_t size)
{
	char model[256] = "unknown CPU", line[1024];
	FILE *f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof line, f)) {
		if (strncmp(line, "model name", 10) == 0) {
			const char *v = strchr(line, ':');
			if (v) {
				v += strspn(v + 1, " \t") + 1;
				snprintf(model, sizeof model, "%.*s", (int)strcspn(v, "\n"), v);
			}
			break;
		}
	}
	if (f)
		fclose(f);
	char flags[128] = "";
	__builtin_cpu_init();
	bool has[] = {__builtin_cpu_supports("avx2"), __builtin_cpu_supports("fma"), __builtin_cpu_supports("avx512f"),
		      __builtin_cpu_supports("avx512bw"), __builtin_cpu_supports("avx512vl")};
	static const char *const feat[] = {"avx2", "fma", "avx512f", "avx512bw", "avx512vl"};
	for (size_t i = 0; i < sizeof feat / sizeof feat[0]; i++)
		if (has[i])
			snprintf(flags + strlen(flags), sizeof flags - strlen(flags), "%s%s", *flags ? "," : "", feat[i]);
	snprintf(out, size, "%s | %s | %s | oneDNN %s | attnscope %s", model, flags, openblas_get_config(),
		 dnnl_isa ? dnnl_isa : "none", own ? own : "none");
	for (char *p = out; *p; p++) /* one line */
		if (*p == '\n' || *p == '\r')
			*p = ' ';
}

void gemmtune_path(char *out, size_t size)
{
	const char *v = getenv("ATTNSCOPE_GEMM_CACHE");
	if (v && *v) {
		snprintf(out, size, "%s", v);
		return;
	}
	v = getenv("XDG_CACHE_HOME");
	if (v && *v) {
		snprintf(out, size, "%s/attnscope/gemm", v);
		return;
	}
	v = getenv("HOME");
	snprintf(out, size, "%s/.cache/attnscope/gemm", v ? v : "");
}

/* Whether library L is timed: in AVAILABLE, or OpenBLAS (always there). */
static bool tune_timed(unsigned available, int l)
{
	return l == GEMM_LIB_OPENBLAS || (available >> l & 1);
}

void gemmtune_measure(struct gemm_tune *t, gemmtune_fn *run, unsigned available)
{
	size_t maxa = 512u * 3072, maxb = 3072u * 256, maxc = 512u * 256;
	float *a = malloc((maxa + maxb + maxc) * sizeof(float));
	memset(t->rate, 0, sizeof t->rate);
	for (int c = 0; c < GEMM_CLASSES; c++)
		t->lib[c] = GEMM_LIB_OPENBLAS;
	if (!a)
		return; /* no memory to measure: OpenBLAS, the library that threads itself */
	float *b = a + maxa, *out = b + maxb;
	for (size_t i = 0; i < maxa + maxb; i++)
		a[i] = (float)((i * 7919u) % 2001u) / 1000.0f - 1.0f;
	for (int c = 0; c < GEMM_CLASSES; c++) {
		int n, k;
		double best[GEMM_LIBS][GEMM_SIZES][2]; /* [library][size][layout: B, Bt] seconds */
		for (int l = 0; l < GEMM_LIBS; l++)
			for (int s = 0; s < GEMM_SIZES; s++)
				best[l][s][0] = best[l][s][1] = 1e30;
		for (int round = 0; round < 3; round++) /* the libraries in turns: all see the same load */
			for (int s = 0; s < GEMM_SIZES; s++)
				for (int tb = 0; tb < 2; tb++)
					for (int l = 0; l < GEMM_LIBS; l++) {
						if (!tune_timed(available, l))
							continue;
						tune_shape(c, l, &n, &k);
						int m = gemmtune_rows[s];
						double flops = 2.0 * m * n * k;
						int iters = flops >= 4e6 ? 1 : (int)(4e6 / flops);
						double t0 = progress_now();
						for (int i = 0; i < iters; i++)
							run((enum gemm_lib)l, tb, m, n, k, a, b, out);
						double dt = (progress_now() - t0) / iters;
						if (dt < best[l][s][tb])
							best[l][s][tb] = dt;
					}
		for (int l = 0; l < GEMM_LIBS; l++) {
			if (!tune_timed(available, l))
				continue;
			tune_shape(c, l, &n, &k);
			for (int s = 0; s < GEMM_SIZES; s++) {
				double dt = best[l][s][0] + best[l][s][1]; /* both layouts' products */
				t->rate[c][l][s] = (float)(2 * 2.0 * gemmtune_rows[s] * n * k / (dt > 0 ? dt : 1e-9) * 1e-9);
			}
		}
		t->lib[c] = gemmtune_choose(t, c);
	}
	free(a);
}

int gemmtune_choose(const struct gemm_tune *t, int cls)
{
	double cost[GEMM_LIBS]; /* seconds for the same work at each size, in units of 1 / GFLOP/s */
	int best = GEMM_LIB_OPENBLAS;
	for (int l = 0; l < GEMM_LIBS; l++) {
		cost[l] = 0;
		for (int s = 0; s < GEMM_SIZES; s++)
			cost[l] = t->rate[cls][l][s] > 0 && cost[l] >= 0 ? cost[l] + 1 / t->rate[cls][l][s] : -1;
		if (cost[l] >= 0 && (cost[best] < 0 || cost[l] < cost[best]))
			best = l;
	}
	/* attnscope's kernel unless another library is more than OWN_MARGIN faster: on it a causal
	 * model's next keystroke computes only the new tokens (on OpenBLAS up to 11 more rows, one
	 * class on it is enough), which these single-threaded timings do not see */
	if (cost[GEMM_LIB_OWN] >= 0 && cost[GEMM_LIB_OWN] <= (cls == 0 ? GEMMTUNE_MARGIN_SCORES : OWN_MARGIN) * cost[best])
		best = GEMM_LIB_OWN;
	return best;
}

double gemmtune_rate(const struct gemm_tune *t, int cls, enum gemm_lib lib)
{
	double inv = 0;
	for (int s = 0; s < GEMM_SIZES; s++) {
		if (!(t->rate[cls][lib][s] > 0))
			return 0;
		inv += 1.0 / t->rate[cls][lib][s];
	}
	return GEMM_SIZES / inv;
}

/* The file, a few lines of text:
 *   attnscope-gemm 2
 *   key <gemmtune_key>
 *   class <0..2> <openblas|dnnl|attnscope> <rates on OpenBLAS at 8 32 128 512 rows> <the same on
 *         oneDNN> <the same on attnscope's kernel>  (x3; 0 where not measured)
 * Version 1 (two libraries) is left to be measured again. */
#define TUNE_MAGIC "attnscope-gemm 2"
#define TUNE_MAGIC_OLD "attnscope-gemm 1"

int gemmtune_load(const char *path, const char *key, struct gemm_tune *t, char *why, size_t why_size)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(why, why_size, "%s", strerror(errno));
		return errno == ENOENT ? 1 : -1;
	}
	char line[1024];
	int rc = -1, seen = 0;
	struct gemm_tune r;
	memset(&r, 0, sizeof r);
	snprintf(why, why_size, "not an attnscope GEMM cache file");
	if (!fgets(line, sizeof line, f))
		goto out;
	if (strcmp(line, TUNE_MAGIC_OLD "\n") == 0) {
		snprintf(why, why_size, "an older format");
		rc = 1;
		goto out;
	}
	if (strcmp(line, TUNE_MAGIC "\n") != 0)
		goto out;
	if (!fgets(line, sizeof line, f) || strncmp(line, "key ", 4) != 0 || !strchr(line, '\n'))
		goto out;
	line[strcspn(line, "\n")] = 0;
	if (strcmp(line + 4, key) != 0) {
		snprintf(why, why_size, "measured on another CPU or library (%.200s)", line + 4);
		goto out;
	}
	snprintf(r.key, sizeof r.key, "%s", line + 4);
	while (fgets(line, sizeof line, f)) {
		int c, used;
		char lib[16];
		float *v;
		if (sscanf(line, "class %d %15s%n", &c, lib, &used) != 2 || c < 0 || c >= GEMM_CLASSES || (seen >> c & 1)) {
			snprintf(why, why_size, "a bad line: %.60s", line);
			goto out;
		}
		r.lib[c] = -1;
		for (int l = 0; l < GEMM_LIBS; l++)
			if (strcmp(lib, lib_name[l]) == 0)
				r.lib[c] = l;
		if (r.lib[c] < 0) {
			snprintf(why, why_size, "an unknown library %.20s", lib);
			goto out;
		}
		seen |= 1 << c;
		v = &r.rate[c][0][0];
		const char *p = line + used;
		for (int i = 0; i < GEMM_LIBS * GEMM_SIZES; i++) {
			char *end;
			v[i] = strtof(p, &end);
			if (end == p || !(v[i] >= 0) || v[i] > 1e7) {
				snprintf(why, why_size, "a bad rate in class %d", c);
				goto out;
			}
			p = end;
		}
		if (strspn(p, " \t\n") != strlen(p)) {
			snprintf(why, why_size, "a bad line: %.60s", line);
			goto out;
		}
	}
	if (seen != (1 << GEMM_CLASSES) - 1) {
		snprintf(why, why_size, "classes missing");
		goto out;
	}
	*t = r;
	rc = 0;
out:
	fclose(f);
	return rc;
}

/* mkdir -p of PATH's folder. */
static void tune_mkdirs(const char *path)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = 0;
	for (char *p = dir + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(dir, 0755);
			*p = '/';
		}
	mkdir(dir, 0755);
}

int gemmtune_save(const char *path, const struct gemm_tune *t, char *why, size_t why_size)
{
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
	tune_mkdirs(path);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		snprintf(why, why_size, "%s", strerror(errno));
		return -1;
	}
	fprintf(f, TUNE_MAGIC "\nkey %s\n", t->key);
	for (int c = 0; c < GEMM_CLASSES; c++) {
		fprintf(f, "class %d %s", c, gemmtune_lib_name((enum gemm_lib)t->lib[c]));
		for (int l = 0; l < GEMM_LIBS; l++)
			for (int s = 0; s < GEMM_SIZES; s++)
				fprintf(f, " %.2f", t->rate[c][l][s]);
		fputc('\n', f);
	}
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		snprintf(why, why_size, "%s", strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}
