/* check_modelfiles.c -- bad model files give a one-line error naming the file and the problem.
 * Each test writes a small BERT-shaped model folder into a temporary directory, breaks one thing,
 * and checks the exact message model_open returns. */
#include <check.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/hugemap.h"
#include "engine/model.h"
#include "engine/mxfp4.h"
#include "engine/safetensors.h"
#include "testutil.h"

#define HID 4   /* hidden size of the synthetic model */
#define INTER 8 /* intermediate size */
#define VOCAB 12
#define MAXPOS 16

static char tmpdir[PATH_MAX];

struct entry {
	char name[128];
	const char *dtype;
	int ndim;
	int64_t shape[2];
};

/* The tensors of a one-layer BERT with the sizes above, as BertModel names them. */
static int bert_entries(struct entry *es)
{
	int n = 0;
#define T1(nm, d0) (snprintf(es[n].name, 128, "%s", nm), es[n].dtype = "F32", es[n].ndim = 1, es[n].shape[0] = d0, n++)
#define T2(nm, d0, d1)                                                                                         \
	(snprintf(es[n].name, 128, "%s", nm), es[n].dtype = "F32", es[n].ndim = 2, es[n].shape[0] = d0,          \
	 es[n].shape[1] = d1, n++)
	T2("embeddings.word_embeddings.weight", VOCAB, HID);
	T2("embeddings.position_embeddings.weight", MAXPOS, HID);
	T2("embeddings.token_type_embeddings.weight", 2, HID);
	T1("embeddings.LayerNorm.weight", HID);
	T1("embeddings.LayerNorm.bias", HID);
	const char *lin[] = {"attention.self.query", "attention.self.key", "attention.self.value",
			     "attention.output.dense"};
	char nm[128];
	for (int i = 0; i < 4; i++) {
		snprintf(nm, sizeof nm, "encoder.layer.0.%s.weight", lin[i]);
		T2(nm, HID, HID);
		snprintf(nm, sizeof nm, "encoder.layer.0.%s.bias", lin[i]);
		T1(nm, HID);
	}
	T1("encoder.layer.0.attention.output.LayerNorm.weight", HID);
	T1("encoder.layer.0.attention.output.LayerNorm.bias", HID);
	T2("encoder.layer.0.intermediate.dense.weight", INTER, HID);
	T1("encoder.layer.0.intermediate.dense.bias", INTER);
	T2("encoder.layer.0.output.dense.weight", HID, INTER);
	T1("encoder.layer.0.output.dense.bias", HID);
	T1("encoder.layer.0.output.LayerNorm.weight", HID);
	T1("encoder.layer.0.output.LayerNorm.bias", HID);
#undef T1
#undef T2
	return n;
}

static void write_file(const char *name, const void *data, size_t len)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	FILE *fp = fopen(path, "wb");
	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fwrite(data, 1, len, fp), len);
	fclose(fp);
}

static void write_text(const char *name, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	va_start(ap, fmt);
	int len = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	write_file(name, buf, (size_t)len);
}

#define CONFIG_FMT                                                                                             \
	"{\"model_type\": \"bert\", \"hidden_size\": %d, \"num_hidden_layers\": %s, \"num_attention_heads\": 2,"  \
	" \"intermediate_size\": %d, \"max_position_embeddings\": %d, \"vocab_size\": %d,"                        \
	" \"type_vocab_size\": 2, \"hidden_act\": \"gelu\", \"layer_norm_eps\": 1e-12}"

/* Write config.json (LAYERS as JSON text), vocab.txt and model.safetensors built from ES. SHIFT
 * moves the offsets of tensor SHIFT_AT by SHIFT elements; FILL is the value of every weight. */
static void write_model(const char *layers, struct entry *es, int n, int shift_at, int64_t shift, float fill)
{
	write_text("config.json", CONFIG_FMT, HID, layers, INTER, MAXPOS, VOCAB);
	write_text("vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\ncat\nsat\n.\n##s\na\non\n");
	char header[8192];
	size_t hl = 0, offset = 0;
	hl += snprintf(header + hl, sizeof header - hl, "{\"__metadata__\": {\"format\": \"pt\"}");
	for (int i = 0; i < n; i++) {
		size_t esz = strcmp(es[i].dtype, "F32") == 0 ? 4 : strcmp(es[i].dtype, "I64") == 0 ? 8 : 2;
		size_t bytes = esz * (size_t)es[i].shape[0] * (size_t)(es[i].ndim == 2 ? es[i].shape[1] : 1);
		int64_t begin = (int64_t)offset + (i == shift_at ? shift * 4 : 0);
		char shape[64];
		if (es[i].ndim == 2)
			snprintf(shape, sizeof shape, "%lld, %lld", (long long)es[i].shape[0], (long long)es[i].shape[1]);
		else
			snprintf(shape, sizeof shape, "%lld", (long long)es[i].shape[0]);
		hl += snprintf(header + hl, sizeof header - hl,
			       ", \"%s\": {\"dtype\": \"%s\", \"shape\": [%s], \"data_offsets\": [%lld, %lld]}",
			       es[i].name, es[i].dtype, shape, (long long)begin, (long long)(begin + (int64_t)bytes));
		offset += bytes;
	}
	hl += snprintf(header + hl, sizeof header - hl, "}");
	size_t total = 8 + hl + offset;
	uint8_t *buf = calloc(1, total);
	for (int i = 0; i < 8; i++)
		buf[i] = (uint8_t)((uint64_t)hl >> (8 * i));
	memcpy(buf + 8, header, hl);
	for (size_t i = 0; i + 4 <= offset; i += 4)
		memcpy(buf + 8 + hl + i, &fill, 4);
	write_file("model.safetensors", buf, total);
	free(buf);
}

/* model_open on the temporary folder; returns its status and leaves the message in E. */
static int open_tmp(struct err *e)
{
	struct model *m = NULL;
	int rc = model_open(tmpdir, &m, e);
	model_close(m);
	return rc;
}

/* Expect model_open to fail with a message containing every one of the given substrings. */
static void expect_error(const char *want1, const char *want2)
{
	struct err e = {{0}};
	ck_assert_int_eq(open_tmp(&e), -1);
	ck_assert_msg(strstr(e.msg, want1) != NULL, "message '%s' lacks '%s'", e.msg, want1);
	if (want2)
		ck_assert_msg(strstr(e.msg, want2) != NULL, "message '%s' lacks '%s'", e.msg, want2);
	ck_assert_msg(!strchr(e.msg, '\n'), "message '%s' is not one line", e.msg);
}

static void setup(void)
{
	const char *base = getenv("TMPDIR");
	snprintf(tmpdir, sizeof tmpdir, "%s/attnscope-modelfiles-XXXXXX", base && *base ? base : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
	const char *files[] = {"config.json", "vocab.txt", "model.safetensors", "model.safetensors.index.json",
			       "big.safetensors"};
	char path[PATH_MAX];
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", tmpdir, files[i]);
		unlink(path);
	}
	rmdir(tmpdir);
}

START_TEST(test_good_model_loads_and_runs)
{
	struct entry es[32];
	int n = bert_entries(es);
	write_model("1", es, n, -1, 0, 0.1f);
	struct model *m = NULL;
	struct err e = {{0}};
	ck_assert_msg(model_open(tmpdir, &m, &e) == 0, "%s", e.msg);
	struct trace *t = NULL;
	ck_assert_msg(model_run(m, "the cats sat", NULL, NULL, &t, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(t->n, 6); /* [CLS] the cat ##s sat [SEP] */
	ck_assert_str_eq(t->tokens[3], "##s");
	/* All weights equal: every key scores the same, so attention is uniform. */
	ck_assert_float_eq_tol(trace_attn(t, 0, 1)[2 * 6 + 5], 1.0f / 6, 1e-6);
	trace_free(t);
	model_close(m);
}
END_TEST

START_TEST(test_truncated_file)
{
	struct entry es[32];
	write_model("1", es, bert_entries(es), -1, 0, 0.1f);
	write_file("model.safetensors", "\x10\0\0", 3);
	expect_error("model.safetensors: truncated: 3 bytes", NULL);
}
END_TEST

START_TEST(test_header_longer_than_file)
{
	struct entry es[32];
	write_model("1", es, bert_entries(es), -1, 0, 0.1f);
	write_file("model.safetensors", "\x00\x10\0\0\0\0\0\0{}", 10);
	expect_error("model.safetensors: truncated: header claims 4096 bytes but the file has 2", NULL);
}
END_TEST

START_TEST(test_oversized_header)
{
	struct entry es[32];
	write_model("1", es, bert_entries(es), -1, 0, 0.1f);
	write_file("model.safetensors", "\x00\x00\x00\x00\x01\0\0\0{}", 10);
	expect_error("model.safetensors: header length 4294967296 exceeds the 104857600-byte limit", NULL);
}
END_TEST

START_TEST(test_header_not_json)
{
	struct entry es[32];
	write_model("1", es, bert_entries(es), -1, 0, 0.1f);
	write_file("model.safetensors", "\x05\0\0\0\0\0\0\0{oops", 13);
	expect_error("model.safetensors: header is not valid JSON", NULL);
}
END_TEST

START_TEST(test_overlapping_offsets)
{
	struct entry es[32];
	write_model("1", es, bert_entries(es), 3, -2, 0.1f); /* LayerNorm.weight starts inside the type table */
	expect_error("model.safetensors: tensors 'embeddings.token_type_embeddings.weight' and "
		     "'embeddings.LayerNorm.weight' overlap in the data section", NULL);
}
END_TEST

START_TEST(test_offsets_out_of_range)
{
	struct entry es[32];
	int n = bert_entries(es);
	write_model("1", es, n, n - 1, 1000, 0.1f);
	expect_error("tensor 'encoder.layer.0.output.LayerNorm.bias': data_offsets [", "outside the");
}
END_TEST

START_TEST(test_wrong_dtype)
{
	struct entry es[32];
	int n = bert_entries(es);
	es[3].dtype = "I64";
	write_model("1", es, n, -1, 0, 0.1f);
	expect_error("tensor 'embeddings.LayerNorm.weight' has dtype I64; expected F32, F16 or BF16", NULL);
}
END_TEST

START_TEST(test_unsupported_dtype)
{
	struct entry es[32];
	int n = bert_entries(es);
	es[3].dtype = "F8_E4M3";
	write_model("1", es, n, -1, 0, 0.1f);
	expect_error("tensor 'embeddings.LayerNorm.weight': unsupported dtype 'F8_E4M3'", NULL);
}
END_TEST

START_TEST(test_misshaped_tensor)
{
	struct entry es[32];
	int n = bert_entries(es);
	es[5].shape[0] = HID + 1; /* query weight [5, 4] */
	write_model("1", es, n, -1, 0, 0.1f);
	expect_error("tensor 'encoder.layer.0.attention.self.query.weight' has shape [5, 4], expected [4, 4] from "
		     "config.json", NULL);
}
END_TEST

START_TEST(test_missing_tensor)
{
	struct entry es[32];
	int n = bert_entries(es);
	write_model("1", es, n - 1, -1, 0, 0.1f); /* drop the last LayerNorm bias */
	expect_error("missing tensor 'encoder.layer.0.output.LayerNorm.bias' (ln2_bias of layer 0)", NULL);
}
END_TEST

START_TEST(test_config_claims_huge_layer_count)
{
	struct entry es[32];
	write_model("1000000000", es, bert_entries(es), -1, 0, 0.1f);
	expect_error("config.json: \"num_hidden_layers\" is 1000000000, expected 1..1024", NULL);
}
END_TEST

START_TEST(test_config_more_layers_than_file)
{
	struct entry es[32];
	write_model("2", es, bert_entries(es), -1, 0, 0.1f);
	expect_error("missing tensor 'encoder.layer.1.attention.output.LayerNorm.weight' (ln1_weight of layer 1)", NULL);
}
END_TEST

START_TEST(test_malformed_config)
{
	struct entry es[32];
	write_model("1", es, bert_entries(es), -1, 0, 0.1f);
	write_text("config.json", "{\"model_type\": \"bert\",\n \"hidden_size\": }");
	expect_error("config.json:2:", NULL);
}
END_TEST

START_TEST(test_unknown_family)
{
	struct entry es[32];
	write_model("1", es, bert_entries(es), -1, 0, 0.1f);
	write_text("config.json", "{\"model_type\": \"mamba\"}");
	expect_error("config.json: unknown model family 'mamba'", NULL);
}
END_TEST

START_TEST(test_missing_folder_and_files)
{
	struct err e = {{0}};
	struct model *m = NULL;
	ck_assert_int_eq(model_open("/nonexistent/model", &m, &e), -1);
	ck_assert_str_eq(e.msg, "/nonexistent/model: no such model folder");
	ck_assert_int_eq(model_open(tmpdir, &m, &e), -1); /* empty folder */
	ck_assert_msg(strstr(e.msg, "no config.json in this folder"), "%s", e.msg);
	write_text("config.json", CONFIG_FMT, HID, "1", INTER, MAXPOS, VOCAB);
	expect_error("no model.safetensors or model.safetensors.index.json", NULL);
}
END_TEST

START_TEST(test_nan_weights_do_not_crash)
{
	struct entry es[32];
	write_model("1", es, bert_entries(es), -1, 0, NAN);
	struct model *m = NULL;
	struct err e = {{0}};
	ck_assert_msg(model_open(tmpdir, &m, &e) == 0, "%s", e.msg);
	struct trace *t = NULL;
	ck_assert_msg(model_run(m, "the cat", NULL, NULL, &t, &e) == 0, "%s", e.msg);
	ck_assert(isnan(trace_attn(t, 0, 0)[0]));
	ck_assert_int_eq(t->nonfinite_layer, 0); /* the embeddings already hold NaN */
	trace_free(t);
	model_close(m);
}
END_TEST

START_TEST(test_half_conversion)
{
	ck_assert_float_eq(st_f16_to_f32(0x3c00), 1.0f);
	ck_assert_float_eq(st_f16_to_f32(0xc000), -2.0f);
	ck_assert_float_eq(st_f16_to_f32(0x0001), ldexpf(1.0f, -24)); /* smallest subnormal */
	ck_assert_float_eq(st_f16_to_f32(0x7bff), 65504.0f);
	ck_assert(isinf(st_f16_to_f32(0x7c00)));
	ck_assert(isnan(st_f16_to_f32(0x7e00)));
	ck_assert_float_eq(st_bf16_to_f32(0x3f80), 1.0f);
	ck_assert_float_eq(st_bf16_to_f32(0xc040), -3.0f);
}
END_TEST

/* MXFP4 products, on every path (the fused one that decodes in registers for few tokens, where the CPU
 * has AVX2 and FMA; decoded tiles and sgemm for many), equal a double-precision sum over the decoded
 * rows: 70 rows (two tiles, the second short), 3 blocks, scales from 2^-127 (not a normal float's
 * power: the scalar decode) to 2^23, and 1, 3 and 65 tokens (65: decoded tiles and sgemm). */
START_TEST(test_mxfp4_products)
{
	enum { EX = 2, R = 70, C = 96, G = C / 32 };
	static uint8_t blocks[EX][R][G][16], scales[EX][R][G];
	uint32_t s = 12345;
	for (int x = 0; x < EX; x++)
		for (int r = 0; r < R; r++)
			for (int b = 0; b < G; b++) {
				for (int i = 0; i < 16; i++)
					blocks[x][r][b][i] = (uint8_t)((s = s * 1103515245u + 12345u) >> 16);
				s = s * 1103515245u + 12345u;
				scales[x][r][b] = (uint8_t)((r + b) % 7 == 0 ? 0 : 110 + (s >> 16) % 40);
			}
	struct st_tensor tb = {.name = "b", .dtype = ST_U8, .ndim = 4, .shape = {EX, R, G, 16},
			       .data = &blocks[0][0][0][0], .nbytes = sizeof blocks, .file = "f"};
	struct st_tensor ts = {.name = "s", .dtype = ST_U8, .ndim = 3, .shape = {EX, R, G}, .data = &scales[0][0][0],
			       .nbytes = sizeof scales, .file = "f"};
	struct mxfp4 w;
	struct err e = {{0}};
	ck_assert_msg(mxfp4_bind(&tb, &ts, EX, R, C, &w, &e) == 0, "%s", e.msg);
	static float rows[R][C], x[65][C], y[65][R + 1], scratch[MXFP4_TILE_ROWS * C], bias[R];
	mxfp4_rows(&w, 1, 0, R, &rows[0][0]);
	for (int i = 0; i < 65; i++)
		for (int c = 0; c < C; c++)
			x[i][c] = (float)((s = s * 1103515245u + 12345u) >> 16) / 65536.0f - 0.5f;
	for (int r = 0; r < R; r++)
		bias[r] = 0.125f * (float)(r % 5);
	const int ns[3] = {1, 3, 65};
	for (int k = 0; k < 3; k++) {
		int n = ns[k];
		mxfp4_linear(&w, 1, &x[0][0], n, bias, &y[0][0], R + 1, scratch);
		for (int i = 0; i < n; i++)
			for (int r = 0; r < R; r++) {
				double want = bias[r], mag = fabs(bias[r]);
				for (int c = 0; c < C; c++) {
					want += (double)x[i][c] * rows[r][c];
					mag += fabs((double)x[i][c] * rows[r][c]);
				}
				ck_assert_msg(fabs(y[i][r] - want) <= 1e-6 * mag + 1e-30, "n %d, y[%d][%d] = %.9g, want %.9g", n, i,
					      r, y[i][r], want);
			}
	}
}
END_TEST

/* MXFP4 (gpt-oss's experts): the E2M1 codes low nibble first, each block of 32 times 2^(scale - 127), as
 * transformers' convert_moe_packed_tensors; shapes that do not match config.json are one-line errors. */
START_TEST(test_mxfp4)
{
	/* 2 experts x 1 row x 64 columns: 2 blocks per row, 16 bytes each */
	uint8_t blocks[2][1][2][16], scales[2][1][2] = {{{127, 130}}, {{1, 255}}};
	for (int x = 0; x < 2; x++)
		for (int b = 0; b < 2; b++)
			for (int i = 0; i < 16; i++)
				blocks[x][0][b][i] = (uint8_t)((i << 4) | (15 - i)); /* low: 15 - i, high: i */
	struct st_tensor tb = {.name = "b", .dtype = ST_U8, .ndim = 4, .shape = {2, 1, 2, 16}, .data = &blocks[0][0][0][0],
			       .nbytes = sizeof blocks, .file = "f"};
	struct st_tensor ts = {.name = "s", .dtype = ST_U8, .ndim = 3, .shape = {2, 1, 2}, .data = &scales[0][0][0],
			       .nbytes = sizeof scales, .file = "f"};
	struct mxfp4 w;
	struct err e = {{0}};
	ck_assert_msg(mxfp4_bind(&tb, &ts, 2, 1, 64, &w, &e) == 0, "%s", e.msg);
	static const float lut[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
	float row[64];
	for (int x = 0; x < 2; x++) {
		mxfp4_rows(&w, x, 0, 1, row);
		for (int j = 0; j < 64; j++) {
			int i = (j % 32) / 2, code = j % 2 ? i : 15 - i, s = scales[x][0][j / 32] - 127;
			float want = ldexpf(lut[code], s);
			ck_assert_msg(memcmp(&row[j], &want, sizeof want) == 0 || (isnan(want) && isnan(row[j])),
				      "expert %d column %d: %g, want %g", x, j, row[j], want);
		}
	}
	mxfp4_rows(&w, 0, 0, 1, row);
	ck_assert_float_eq(row[0], -6.0f);   /* code 15 in the low nibble of byte 0 */
	ck_assert_float_eq(row[1], 0.0f);    /* code 0 in its high nibble */
	ck_assert_float_eq(row[32], -48.0f); /* the second block: times 2^3 */
	/* a product: x · W_1ᵀ + b over a tile */
	float x[2][64], y[2][3] = {{0}}, scratch[MXFP4_TILE_ROWS * 64], b = 0.25f;
	for (int i = 0; i < 64; i++)
		x[0][i] = 1.0f, x[1][i] = (float)(i % 3);
	mxfp4_linear(&w, 0, &x[0][0], 2, &b, &y[0][0], 3, scratch);
	double s0 = 0, s1 = 0;
	for (int j = 0; j < 64; j++)
		s0 += row[j], s1 += row[j] * (j % 3);
	ck_assert_float_eq_tol(y[0][0], s0 + 0.25, 1e-3);
	ck_assert_float_eq_tol(y[1][0], s1 + 0.25, 1e-3);
	/* blocks and scales that do not fit config.json's shape */
	ck_assert_int_eq(mxfp4_bind(&tb, &ts, 2, 2, 64, &w, &e), -1);
	ck_assert_msg(strstr(e.msg, "MXFP4 tensor 'b' has shape [2, 1, 2, 16], expected [2, 2, 2, 16]"), "%s", e.msg);
	ts.shape[2] = 3;
	ck_assert_int_eq(mxfp4_bind(&tb, &ts, 2, 1, 64, &w, &e), -1);
	ck_assert_msg(strstr(e.msg, "MXFP4 tensor 's' has shape [2, 1, 3], expected [2, 1, 2]"), "%s", e.msg);
	ts.shape[2] = 2;
	ck_assert_int_eq(mxfp4_bind(&tb, &ts, 2, 1, 48, &w, &e), -1);
	ck_assert_msg(strstr(e.msg, "not whole blocks of 32"), "%s", e.msg);
	tb.dtype = ST_BF16;
	snprintf(tb.dtype_name, sizeof tb.dtype_name, "BF16");
	ck_assert_int_eq(mxfp4_bind(&tb, &ts, 2, 1, 64, &w, &e), -1);
	ck_assert_msg(strstr(e.msg, "has dtype BF16; expected U8"), "%s", e.msg);
}
END_TEST

/* ---------------------------------------------------------------- huge pages (hugemap.h) */

#define BIG_FLOATS (3 * (1 << 20)) /* 12 MB: whole 2 MB pages inside */

struct reader {
	const float *x;
	volatile int stop;
	long bad;
	volatile long reads; /* whole passes over the mapping */
};

/* Reads the mapping over and over while the main thread moves it to anonymous pages. */
static void *reader_main(void *arg)
{
	struct reader *r = arg;
	while (!r->stop) {
		for (int i = 0; i < BIG_FLOATS; i += 1024)
			r->bad += r->x[i] != (float)i;
		r->reads++;
	}
	return NULL;
}

START_TEST(test_huge_page_copy_keeps_every_value)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/big.safetensors", tmpdir);
	char header[128];
	int hl = snprintf(header, sizeof header,
			  "{\"big\":{\"dtype\":\"F32\",\"shape\":[%d],\"data_offsets\":[0,%zu]}}", BIG_FLOATS,
			  (size_t)BIG_FLOATS * 4);
	while ((8 + hl) % 8)
		header[hl++] = ' ';
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	uint64_t len = (uint64_t)hl;
	fwrite(&len, 8, 1, f);
	fwrite(header, 1, (size_t)hl, f);
	for (int i = 0; i < BIG_FLOATS; i++) {
		float v = (float)i;
		fwrite(&v, 4, 1, f);
	}
	ck_assert_int_eq(fclose(f), 0);

	struct st_set set;
	struct err e = {{0}};
	ck_assert_msg(st_open_file(path, &set, &e) == 0, "%s", e.msg);
	ck_assert_int_eq((uintptr_t)set.files[0].addr % HUGEMAP_PAGE, 0); /* mapped at a 2 MB boundary */
	const float *x = (const float *)(const void *)st_find(&set, "big")->data;
	struct reader r = {x, 0, 0, 0};
	pthread_t tid;
	ck_assert_int_eq(pthread_create(&tid, NULL, reader_main, &r), 0);
	/* The reader is running (a pass done) before the move and makes a whole pass after it, however
	 * slowly the threads are scheduled (valgrind, a loaded machine). */
	while (r.reads < 1)
		sched_yield();
	/* moved in place while another thread reads it: the same bytes throughout */
	char *base = set.files[0].addr;
	ck_assert_int_eq(hugemap_promote(base + HUGEMAP_PAGE, 2 * HUGEMAP_PAGE), 0);
	ck_assert_int_eq(hugemap_promote(base + 1, HUGEMAP_PAGE), -1); /* not at a 2 MB boundary */
	st_promote(&set, x, (size_t)BIG_FLOATS * 4); /* the rest, if this kernel maps the file in 4 KB pages */
	long after = r.reads;
	while (r.reads < after + 2)
		sched_yield();
	r.stop = 1;
	pthread_join(tid, NULL);
	ck_assert_int_eq(r.bad, 0);
	for (int i = 0; i < BIG_FLOATS; i++)
		if (x[i] != (float)i)
			ck_abort_msg("value %d changed to %g", i, x[i]);
	ck_assert_uint_le(st_promoted_bytes(&set), set.files[0].size);
	st_close(&set);
}
END_TEST

static Suite *modelfiles_suite(void)
{
	Suite *s = suite_create("modelfiles");
	TCase *tc = tcase_create("bad input");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_good_model_loads_and_runs);
	tcase_add_test(tc, test_truncated_file);
	tcase_add_test(tc, test_header_longer_than_file);
	tcase_add_test(tc, test_oversized_header);
	tcase_add_test(tc, test_header_not_json);
	tcase_add_test(tc, test_overlapping_offsets);
	tcase_add_test(tc, test_offsets_out_of_range);
	tcase_add_test(tc, test_wrong_dtype);
	tcase_add_test(tc, test_unsupported_dtype);
	tcase_add_test(tc, test_misshaped_tensor);
	tcase_add_test(tc, test_missing_tensor);
	tcase_add_test(tc, test_config_claims_huge_layer_count);
	tcase_add_test(tc, test_config_more_layers_than_file);
	tcase_add_test(tc, test_malformed_config);
	tcase_add_test(tc, test_unknown_family);
	tcase_add_test(tc, test_missing_folder_and_files);
	tcase_add_test(tc, test_nan_weights_do_not_crash);
	tcase_add_test(tc, test_half_conversion);
	tcase_add_test(tc, test_mxfp4);
	tcase_add_test(tc, test_mxfp4_products);
	tcase_add_test(tc, test_huge_page_copy_keeps_every_value);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	return testutil_run_suite(modelfiles_suite(), false);
}
