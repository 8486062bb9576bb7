/* check_badinput.c -- the bad-input matrix beyond what check_modelfiles and check_tokenizer test:
 * messages that quote hostile file contents, limits checked before allocating (header value
 * counts, file sizes, merge counts), empty vocabularies and merges without a vocabulary in a
 * model folder, text far longer than GPT-2's positions, and regressions the fuzzers found.
 * Each case asserts the exact one-line message. tests/badinput.sh drives the binary for the
 * same matrix (NUL bytes in text, peak memory on absurd files). */
#include <check.h>
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/family.h"
#include "base/jsoncap.h"
#include "engine/model.h"
#include "engine/safetensors.h"
#include "tokenizer/tokenizer.h"
#include "testutil.h"

static char tmpdir[PATH_MAX];

static void put_file(const char *name, const void *data, size_t len)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	unlink(path); /* may be a link to a fixture: never write through it */
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

static void put(const char *name, const char *text)
{
	put_file(name, text, strlen(text));
}

/* Link tmpdir/NAME to the fixture file tests/data/models/MODEL/NAME. */
static void link_fixture(const char *model, const char *name)
{
	char target[PATH_MAX], path[PATH_MAX];
	snprintf(target, sizeof target, "%s/tests/data/models/%s/%s", testutil_srcdir(), model, name);
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	unlink(path);
	ck_assert_int_eq(symlink(target, path), 0);
}

/* A copy of a fixture model's config, weights and tokenizer files in tmpdir (links). */
static void fixture_folder(const char *model)
{
	static const char *const files[] = {"config.json", "model.safetensors", "vocab.txt", "vocab.json",
					    "merges.txt", "tokenizer_config.json"};
	char path[PATH_MAX];
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/tests/data/models/%s/%s", testutil_srcdir(), model, files[i]);
		if (access(path, F_OK) == 0)
			link_fixture(model, files[i]);
	}
}

static void setup(void)
{
	const char *base = getenv("TMPDIR");
	snprintf(tmpdir, sizeof tmpdir, "%s/attnscope-badinput-XXXXXX", base && *base ? base : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *de;
	char path[PATH_MAX];
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			snprintf(path, sizeof path, "%s/%s", tmpdir, de->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
	rmdir(tmpdir);
}

/* model_open on tmpdir fails with exactly "TMPDIR/" + WANT. */
static void expect_open_error(const char *want)
{
	struct model *m = NULL;
	struct err e = {{0}};
	ck_assert_int_eq(model_open(tmpdir, &m, &e), -1);
	ck_assert_ptr_null(m);
	char full[1024];
	snprintf(full, sizeof full, "%s/%s", tmpdir, want);
	ck_assert_str_eq(e.msg, full);
}

/* A safetensors file in memory: 8-byte length, then HEADER, then DATA_LEN zero bytes. */
static uint8_t *st_bytes(const char *header, size_t data_len, size_t *size)
{
	size_t hl = strlen(header);
	*size = 8 + hl + data_len;
	uint8_t *b = calloc(1, *size);
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)((uint64_t)hl >> (8 * i));
	memcpy(b + 8, header, hl);
	return b;
}

/* ---------------------------------------------------------------- messages */

START_TEST(test_messages_quote_no_control_characters)
{
	/* A tensor name carrying a terminal escape sequence, a newline and a C1 CSI: the message
	 * names it with '?' in their place, so it stays one line and cannot drive the terminal. */
	size_t size;
	uint8_t *b = st_bytes("{\"evil\\u001b]0;pwned\\u0007\\nx\\u009b2J\": "
			      "{\"dtype\": \"Q8\", \"shape\": [], \"data_offsets\": [0, 0]}}", 0, &size);
	struct st_set set;
	struct err e = {{0}};
	ck_assert_int_eq(st_parse_buffer(b, size, "mem", &set, &e), -1);
	ck_assert_str_eq(e.msg, "mem: tensor 'evil?]0;pwned??x??2J': unsupported dtype 'Q8'");
	/* JSON errors quote the text near the error, raw: a vertical tab there */
	free(b);
	b = st_bytes("\x0b{}", 0, &size);
	ck_assert_int_eq(st_parse_buffer(b, size, "mem", &set, &e), -1);
	ck_assert_str_eq(e.msg, "mem: header is not valid JSON: '[' or '{' expected near '?' (byte 1)");
	free(b);
	/* err_set itself: invalid UTF-8 and 8-bit C1 bytes become '?', valid UTF-8 stays */
	err_set(&e, "a\x9b" "b \xc3\xa9 \xe2\x82 \xf0\x9f\x98\x80 \xc2\x85 \x7f \xed\xa0\x80");
	ck_assert_str_eq(e.msg, "a?b \xc3\xa9 ?? \xf0\x9f\x98\x80 ?? ? ???");
	err_prefix(&e, "file\tname");
	ck_assert_str_eq(e.msg, "file?name: a?b \xc3\xa9 ?? \xf0\x9f\x98\x80 ?? ? ???");
}
END_TEST

/* ---------------------------------------------------------------- safetensors from memory */

START_TEST(test_st_parse_buffer_borrows)
{
	size_t size;
	uint8_t *b = st_bytes("{\"__metadata__\": {\"format\": \"pt\"}, \"b\": {\"dtype\": \"F32\", \"shape\": [2], "
			      "\"data_offsets\": [4, 12]}, \"a\": {\"dtype\": \"BF16\", \"shape\": [1, 2], "
			      "\"data_offsets\": [0, 4]}}", 12, &size);
	struct st_set set;
	struct err e = {{0}};
	ck_assert_msg(st_parse_buffer(b, size, "mem", &set, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(set.n_tensors, 2);
	ck_assert_str_eq(set.tensors[0].name, "a"); /* sorted by name */
	const struct st_tensor *t = st_find(&set, "b");
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_eq(t->data, b + size - 8); /* points into the caller's buffer: no copy */
	ck_assert_str_eq(t->file, "mem");
	st_close(&set); /* must not unmap or free the buffer */
	ck_assert_int_eq(b[0], size - 8 - 12);
	free(b);
}
END_TEST

/* ---------------------------------------------------------------- family descriptions */

START_TEST(test_family_key_given_twice)
{
	/* fuzz_yaml found the first list of a role given twice leaked; the last one wins */
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/models/families/gpt2.yaml", testutil_srcdir());
	FILE *fp = fopen(path, "rb");
	ck_assert_ptr_nonnull(fp);
	char yaml[16384] = "prefixes: [x.]\n"; /* gpt2.yaml gives its own prefixes later */
	size_t len = strlen(yaml);
	len += fread(yaml + len, 1, sizeof yaml - len - 200, fp);
	fclose(fp);
	/* the tensors mapping comes last: two more entries for one role */
	snprintf(yaml + len, sizeof yaml - len, "\n  token_embedding: [a.weight, b.weight]\n  token_embedding: c.weight\n");
	put("fam.yaml", yaml);
	snprintf(path, sizeof path, "%s/fam.yaml", tmpdir);
	struct family f;
	struct err e = {{0}};
	ck_assert_msg(family_load_file(path, &f, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(f.n_names[WEIGHT_TOKEN_EMB], 1);
	ck_assert_str_eq(f.names[WEIGHT_TOKEN_EMB][0], "c.weight");
	ck_assert_int_eq(f.n_prefixes, 2);
	ck_assert_str_eq(f.prefixes[0], "transformer.");
	family_free(&f);
}
END_TEST

/* ---------------------------------------------------------------- vocabularies in a model folder */

START_TEST(test_empty_vocab)
{
	fixture_folder("bert-mini");
	put("vocab.txt", "");
	expect_open_error("vocab.txt: empty vocabulary");
	put("vocab.txt", "\n");
	expect_open_error("vocab.txt: the unk_token \"[UNK]\" is not in the vocabulary");

	teardown();
	setup();
	fixture_folder("gpt2-mini");
	put("vocab.json", "{}");
	expect_open_error("vocab.json: empty vocabulary");
	put("vocab.json", "  {  }  ");
	expect_open_error("vocab.json: empty vocabulary");
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/vocab.json", tmpdir);
	unlink(path);
	put("tokenizer.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}}");
	expect_open_error("tokenizer.json: model.vocab: empty vocabulary");
}
END_TEST

START_TEST(test_merges_without_vocab)
{
	fixture_folder("gpt2-mini");
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/vocab.json", tmpdir);
	unlink(path);
	expect_open_error("vocab.json: missing (merges.txt needs the vocabulary it merges into)");
	/* and the other way round */
	link_fixture("gpt2-mini", "vocab.json");
	snprintf(path, sizeof path, "%s/merges.txt", tmpdir);
	unlink(path);
	expect_open_error("merges.txt: missing (vocab.json needs the merges of a BPE tokenizer)");
}
END_TEST

/* ---------------------------------------------------------------- long text */

START_TEST(test_gpt2_text_far_longer_than_positions)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/tests/data/models/gpt2-mini", testutil_srcdir());
	struct model *m = NULL;
	struct err e = {{0}};
	ck_assert_msg(model_open(dir, &m, &e) == 0, "%s", e.msg);
	int maxpos = model_get_info(m)->max_positions;
	ck_assert_int_eq(maxpos, 96);
	/* 20000 words: 200 times the model's positions */
	size_t n = 20000;
	char *text = malloc(n * 6 + 1), *p = text;
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%s", i % 3 ? " word" : " Hi,");
	struct token_list all;
	ck_assert_int_eq(tokenizer_encode(model_get_tokenizer(m), text, NULL, 0, &all, &e), 0);
	ck_assert_int_gt(all.n, 100 * maxpos);
	struct trace *t = NULL;
	ck_assert_msg(model_run(m, text, NULL, NULL, &t, &e) == 0, "%s", e.msg);
	ck_assert(t->truncated);
	ck_assert_int_eq(t->n, maxpos);
	for (int i = 0; i < maxpos; i++) /* the first tokens, unchanged (HF truncates on the right) */
		ck_assert_int_eq(t->ids[i], all.ids[i]);
	ck_assert_int_eq(t->nonfinite_layer, -1);
	trace_free(t);
	token_list_free(&all);
	free(text);
	model_close(m);
}
END_TEST

/* ---------------------------------------------------------------- limits before allocating */

/* LEN bytes of JSON "[0,0,...,0]" (LEN >= 3): LEN/2 nodes as jsoncap counts them. */
static char *zeros_json(size_t len)
{
	char *s = malloc(len + 1);
	s[0] = '[';
	for (size_t i = 1; i + 1 < len; i++)
		s[i] = i % 2 ? '0' : ',';
	s[len - 2] = '0';
	s[len - 1] = ']';
	s[len] = '\0';
	return s;
}

START_TEST(test_jsoncap_counts)
{
	/* commas, colons and brackets inside strings (escaped quotes too) do not count */
	ck_assert_uint_eq(jsoncap_nodes("0", 1), 1);
	ck_assert_uint_eq(jsoncap_nodes("[]", 2), 2);
	ck_assert_uint_eq(jsoncap_nodes("{\"a,[{:\": [1, 2]}", 17), 5);
	ck_assert_uint_eq(jsoncap_nodes("[\"\\\",\", 3]", 11), 3);
	ck_assert_uint_eq(jsoncap_nodes("\"unterminated, [", 16), 1);
}
END_TEST

START_TEST(test_header_value_cap)
{
	/* {"a":[0,...]} with K zeros has 3 + K nodes ('{' ':' '[' and K-1 commas, plus one). Before
	 * the cap, 100 MB of this took 2.1 GB and 8.6 s in jansson; now it is refused unparsed. */
	size_t cap = JSONCAP_MAX_NODES;
	for (int over = 0; over < 2; over++) {
		size_t k = cap - 3 + (size_t)over, hl = 8 + 2 * k;
		char *h = malloc(hl + 1);
		memcpy(h, "{\"a\":[", 6);
		for (size_t i = 0; i < k; i++)
			memcpy(h + 6 + 2 * i, i + 1 < k ? "0," : "0]", 2);
		memcpy(h + 6 + 2 * k, "}", 2);
		ck_assert_uint_eq(strlen(h), 7 + 2 * k);
		ck_assert_uint_eq(jsoncap_nodes(h, strlen(h)), cap + (size_t)over);
		if (over) { /* (at the cap itself jansson would parse it: too slow under valgrind) */
			size_t size;
			uint8_t *b = st_bytes(h, 0, &size);
			struct st_set set;
			struct err e = {{0}};
			ck_assert_int_eq(st_parse_buffer(b, size, "mem", &set, &e), -1);
			ck_assert_str_eq(e.msg, "mem: header has more than 4194304 JSON values");
			free(b);
		}
		free(h);
	}
}
END_TEST

START_TEST(test_config_json_limits)
{
	fixture_folder("bert-mini");
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/config.json", tmpdir);
	/* larger than any config: refused before reading (a sparse file: no disk used) */
	put("config.json", "{}");
	ck_assert_int_eq(truncate(path, (off_t)JSONCAP_MAX_FILE + 1), 0);
	expect_open_error("config.json: file too large (67108865 bytes, limit 67108864)");
	/* small enough to read, too many values to parse (200 MB of this took 4.1 GB and 22 s) */
	char *z = zeros_json(2 * JSONCAP_MAX_NODES + 1);
	put("config.json", z);
	free(z);
	expect_open_error("config.json: more than 4194304 JSON values");
	/* a FIFO would block the reader forever */
	unlink(path);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	expect_open_error("config.json: not a regular file");
	/* the shard index goes through the same reader */
	teardown();
	setup();
	link_fixture("bert-mini-sharded", "config.json");
	snprintf(path, sizeof path, "%s/model.safetensors.index.json", tmpdir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	expect_open_error("model.safetensors.index.json: not a regular file");
}
END_TEST

START_TEST(test_fifos_do_not_block)
{
	/* A model folder from an archive may hold FIFOs: opening one for reading would wait for
	 * a writer forever. Every reader opens without blocking and refuses what is not a file. */
	static const char *const files[] = {"model.safetensors", "vocab.txt"};
	for (int i = 0; i < 2; i++) {
		fixture_folder("bert-mini");
		char path[PATH_MAX], want[64];
		snprintf(path, sizeof path, "%s/%s", tmpdir, files[i]);
		unlink(path);
		ck_assert_int_eq(mkfifo(path, 0600), 0);
		snprintf(want, sizeof want, "%s: not a regular file", files[i]);
		expect_open_error(want);
		unlink(path);
	}
}
END_TEST

START_TEST(test_tokenizer_file_limits)
{
	/* vocab.json that the fast reader leaves to jansson, and tokenizer.json: node cap */
	fixture_folder("gpt2-mini");
	char *z = zeros_json(2 * JSONCAP_MAX_NODES + 1);
	put("vocab.json", z);
	expect_open_error("vocab.json: more than 4194304 JSON values");
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/vocab.json", tmpdir);
	unlink(path);
	put("tokenizer.json", z);
	expect_open_error("tokenizer.json: more than 4194304 JSON values");
	free(z);
	/* merges: at most twice the vocabulary (+1024) lines; every rule makes a token */
	link_fixture("gpt2-mini", "vocab.json");
	size_t n = 2 * 50257 + 1024;
	char *m = malloc(16 + 4 * n), *p = m;
	p += sprintf(p, "#version: 0.2\n");
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "a b\n");
	put("merges.txt", m);
	expect_open_error("merges.txt: 101539 lines of merges for a vocabulary of 50257 tokens");
	free(m);
	/* the same for tokenizer.json's model.merges */
	unlink(path);
	snprintf(path, sizeof path, "%s/merges.txt", tmpdir);
	unlink(path);
	m = malloc(100 + 6 * 1100);
	p = m + sprintf(m, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"<|endoftext|>\": 0, \"a\": 1}, \"merges\": [");
	for (int i = 0; i < 1100; i++)
		p += sprintf(p, "%s\"a a\"", i ? "," : "");
	sprintf(p, "]}}");
	put("tokenizer.json", m);
	free(m);
	expect_open_error("tokenizer.json: model.merges has 1100 rules for a vocabulary of 2 tokens");
	/* vocab.txt: more lines than ids refused before any is stored */
	teardown();
	setup();
	fixture_folder("bert-mini");
	size_t lines = (size_t)(1 << 22) + 2;
	char *v = malloc(lines + 1);
	memset(v, '\n', lines);
	v[lines] = '\0';
	put("vocab.txt", v);
	free(v);
	expect_open_error("vocab.txt: too many lines (more than 4194304)");
}
END_TEST

/* A BERT of LAYERS layers with hidden size 2, one head and POSITIONS positions: a file of a few
 * MB whose traces grow as layers x n^2. */
static void write_long_bert(int layers, int positions)
{
	char cfg[512];
	snprintf(cfg, sizeof cfg, "{\"model_type\": \"bert\", \"hidden_size\": 2, \"num_hidden_layers\": %d, "
		 "\"num_attention_heads\": 1, \"intermediate_size\": 2, \"max_position_embeddings\": %d, "
		 "\"vocab_size\": 6, \"type_vocab_size\": 2, \"hidden_act\": \"gelu\"}", layers, positions);
	put("config.json", cfg);
	put("vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\n");
	size_t cap = 4096 + (size_t)layers * 2048, hl = 0, off = 0; /* ~1.5 KB of header per layer */
	char *h = malloc(cap);
#define TENSOR(name, d0, d1)                                                                                 \
	do {                                                                                                 \
		size_t n_ = (size_t)(d0) * ((d1) ? (d1) : 1) * 4;                                            \
		hl += snprintf(h + hl, cap - hl, "%s\"%s\": {\"dtype\": \"F32\", \"shape\": [%d%s%.0d], "    \
			       "\"data_offsets\": [%zu, %zu]}", hl > 1 ? ", " : "", name, (int)(d0),          \
			       (d1) ? ", " : "", (int)(d1), off, off + n_);                                 \
		off += n_;                                                                                   \
	} while (0)
	hl += snprintf(h, cap, "{");
	TENSOR("embeddings.word_embeddings.weight", 6, 2);
	TENSOR("embeddings.position_embeddings.weight", positions, 2);
	TENSOR("embeddings.token_type_embeddings.weight", 2, 2);
	TENSOR("embeddings.LayerNorm.weight", 2, 0);
	TENSOR("embeddings.LayerNorm.bias", 2, 0);
	static const char *const w2[] = {"attention.self.query", "attention.self.key", "attention.self.value",
					 "attention.output.dense", "intermediate.dense", "output.dense"};
	static const char *const ln[] = {"attention.output.LayerNorm", "output.LayerNorm"};
	char name[128];
	for (int l = 0; l < layers; l++) {
		for (int i = 0; i < 6; i++) {
			snprintf(name, sizeof name, "encoder.layer.%d.%s.weight", l, w2[i]);
			TENSOR(name, 2, 2);
			snprintf(name, sizeof name, "encoder.layer.%d.%s.bias", l, w2[i]);
			TENSOR(name, 2, 0);
		}
		for (int i = 0; i < 2; i++) {
			snprintf(name, sizeof name, "encoder.layer.%d.%s.weight", l, ln[i]);
			TENSOR(name, 2, 0);
			snprintf(name, sizeof name, "encoder.layer.%d.%s.bias", l, ln[i]);
			TENSOR(name, 2, 0);
		}
	}
#undef TENSOR
	hl += snprintf(h + hl, cap - hl, "}");
	size_t size;
	uint8_t *b = st_bytes(h, off, &size);
	float one = 0.01f;
	for (size_t i = 8 + hl; i + 4 <= size; i += 4)
		memcpy(b + i, &one, 4);
	put_file("model.safetensors", b, size);
	free(b);
	free(h);
}

START_TEST(test_trace_size_cap)
{
	/* A config claiming 16384 positions and 1024 layers of hidden size 2: a text of 17000 words is
	 * truncated to 16384 tokens, whose attention maps alone would take 1.1 TB. Before the cap a
	 * 1-layer file of this kind with 131072 positions took 12.6 GB for 40000 words; now such
	 * runs are refused before allocating. Its trace goes compact (no n x n maps kept), but even
	 * the few heads a compact trace recomputes at once take 6 x 16384^2 floats (6.4 GB). */
	write_long_bert(1024, 16384);
	struct model *m = NULL;
	struct err e = {{0}};
	ck_assert_msg(model_open(tmpdir, &m, &e) == 0, "%s", e.msg);
	size_t n = 17000;
	char *text = malloc(2 * n + 1);
	for (size_t i = 0; i < n; i++)
		memcpy(text + 2 * i, "a ", 2);
	text[2 * n] = '\0';
	struct trace *t = NULL;
	ck_assert_int_eq(model_run(m, text, NULL, NULL, &t, &e), -1);
	ck_assert_ptr_null(t);
	const char *want = "16384 tokens need a ";
	ck_assert_msg(strncmp(e.msg, want, strlen(want)) == 0, "%s", e.msg);
	ck_assert_msg(strstr(e.msg, " GB trace with this model, more than "), "%s", e.msg);
	ck_assert_msg(strstr(e.msg, " GB (a quarter of this machine's memory): use a shorter text"), "%s", e.msg);
	/* a short text runs */
	ck_assert_msg(model_run(m, "a a a", NULL, NULL, &t, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(t->n, 5);
	trace_free(t);
	free(text);
	model_close(m);
}
END_TEST

static Suite *badinput_suite(void)
{
	Suite *s = suite_create("badinput");
	TCase *tc = tcase_create("bad input");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_messages_quote_no_control_characters);
	tcase_add_test(tc, test_st_parse_buffer_borrows);
	tcase_add_test(tc, test_family_key_given_twice);
	tcase_add_test(tc, test_empty_vocab);
	tcase_add_test(tc, test_merges_without_vocab);
	tcase_add_test(tc, test_gpt2_text_far_longer_than_positions);
	tcase_add_test(tc, test_jsoncap_counts);
	tcase_add_test(tc, test_header_value_cap);
	tcase_add_test(tc, test_config_json_limits);
	tcase_add_test(tc, test_tokenizer_file_limits);
	tcase_add_test(tc, test_fifos_do_not_block);
	tcase_add_test(tc, test_trace_size_cap);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	return testutil_run_suite(badinput_suite(), false);
}
