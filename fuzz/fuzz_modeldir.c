/* fuzz_modeldir.c -- libFuzzer target: config.json (and the shard index, and tokenizer_config.json)
 * of a model folder, through model_open and, when it opens, one model_run.
 *
 * Input: one selector byte, then up to three files separated by 0xFF:
 *   config.json, model.safetensors.index.json, tokenizer_config.json.
 * The selector picks the fixture whose weights and vocabulary are linked into the scratch folder
 * (bert-mini, gpt2-mini, or the two shards of bert-mini-sharded, which then read the fuzzed
 * index; or a decoder fixture with its tokenizer.json, so that rotary scaling, windows, layer
 * types, soft-capping, GQA shapes and multimodal sections of config.json are fuzzed too). A part that is empty is left out of the folder. This covers hfconfig.c, the family
 * descriptions, model_read_config's limits, the shard index, the weight binding and the
 * forward pass with whatever settings config.json can change. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "engine/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const fixtures[] = {"bert-mini",        "gpt2-mini",     "bert-mini-sharded", "llama-rope-yarn",
				       "gemma2-softcap",   "neox-parallel", "phi3-fused",        "qwen3-qknorm",
				       "gemma3-multimodal",
				       "starcoder2-window",
				       "gptneo-local",
				       "bloom-alibi",
				       "phi-partial",      "gptj-interleaved", "cohere-interleaved",
				       "olmo-clip",
				       "olmo2-qknorm",
				       "granite-mult",
				       "smollm3-nope",
				       [19] = "stablelm-qkln",
				       [20] = "opt-offset",
				       [21] = "olmo3-yarn",
				       [22] = "bigcode-mqa",
				       [23] = "falcon-gqa",
				       [24] = "falcon-alibi",
				       [25] = "mixtral-moe",
				       [26] = "olmoe-moe",
				       [27] = "qwen3moe-dense",
				       [28] = "gptoss-sinks",
				       [29] = "deepseek-mla",
				       [30] = "llama4-moe",
				       [31] = "bart-encdec"};
#define N_FIXTURES (int)(sizeof fixtures / sizeof fixtures[0])
static const char *const linked[][3] = {
	{"model.safetensors", "vocab.txt", NULL},
	{"model.safetensors", "vocab.json", "merges.txt"},
	{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors", "vocab.txt"},
	{"model.safetensors", "tokenizer.json", NULL},
	{"model.safetensors", "tokenizer.json", NULL},
	{"model.safetensors", "tokenizer.json", NULL},
	{"model.safetensors", "tokenizer.json", NULL},
	{"model.safetensors", "tokenizer.json", NULL},
	{"model.safetensors", "tokenizer.json", NULL},
	{"model.safetensors", "tokenizer.json", NULL}, /* starcoder2-window */
	{"model.safetensors", "tokenizer.json", NULL}, /* gptneo-local */
	{"model.safetensors", "tokenizer.json", NULL}, /* bloom-alibi */
	{"model.safetensors", "tokenizer.json", NULL}, /* phi-partial */
	{"model.safetensors", "tokenizer.json", NULL}, /* gptj-interleaved */
	{"model.safetensors", "tokenizer.json", NULL}, /* cohere-interleaved */
	{"model.safetensors", "tokenizer.json", NULL}, /* olmo-clip */
	{"model.safetensors", "tokenizer.json", NULL}, /* olmo2-qknorm */
	{"model.safetensors", "tokenizer.json", NULL}, /* granite-mult */
	{"model.safetensors", "tokenizer.json", NULL}, /* smollm3-nope */
	[19] = {"model.safetensors", "tokenizer.json", NULL}, /* stablelm-qkln */
	[20] = {"model.safetensors", "tokenizer.json", NULL}, /* opt-offset */
	[21] = {"model.safetensors", "tokenizer.json", NULL}, /* olmo3-yarn */
	[22] = {"model.safetensors", "tokenizer.json", NULL}, /* bigcode-mqa */
	[23] = {"model.safetensors", "tokenizer.json", NULL}, /* falcon-gqa */
	[24] = {"model.safetensors", "tokenizer.json", NULL}, /* falcon-alibi */
	[25] = {"model.safetensors", "tokenizer.json", NULL}, /* mixtral-moe */
	[26] = {"model.safetensors", "tokenizer.json", NULL}, /* olmoe-moe */
	[27] = {"model.safetensors", "tokenizer.json", NULL}, /* qwen3moe-dense */
	[28] = {"model.safetensors", "tokenizer.json", NULL}, /* gptoss-sinks */
	[29] = {"model.safetensors", "tokenizer.json", NULL}, /* deepseek-mla */
	[30] = {"model.safetensors", "tokenizer.json", NULL}, /* llama4-moe */
	[31] = {"model.safetensors", "vocab.json", "merges.txt"}, /* bart-encdec: encoder-decoder, cross-attention */
};
static const char *const all_links[] = {"model.safetensors", "vocab.txt", "vocab.json", "merges.txt", "tokenizer.json",
					"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"};

static void link_fixture(int k)
{
	static int current = -1;
	if (k == current)
		return;
	for (size_t i = 0; i < sizeof all_links / sizeof all_links[0]; i++)
		fuzz_remove(all_links[i]);
	for (int i = 0; i < 3 && linked[k][i]; i++) {
		char target[1024];
		snprintf(target, sizeof target, "%s/tests/data/models/%s/%s", fuzz_datadir(), fixtures[k], linked[k][i]);
		fuzz_link(linked[k][i], target);
	}
	current = k;
}

static void put_or_remove(const char *name, const struct fuzz_part *p)
{
	if (p && p->len)
		fuzz_write(name, p->data, p->len);
	else
		fuzz_remove(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int k = data[0] % N_FIXTURES;
	if (!fixtures[k]) /* a selector without a fixture in this build */
		return 0;
	struct fuzz_part parts[FUZZ_MAX_PARTS];
	int n = fuzz_split(data + 1, size - 1, parts);
	link_fixture(k);
	put_or_remove("config.json", &parts[0]);
	put_or_remove("model.safetensors.index.json", k == 2 && n > 1 ? &parts[1] : NULL);
	put_or_remove("tokenizer_config.json", n > 2 ? &parts[2] : NULL);

	struct model *m = NULL;
	struct err e = {{0}};
	if (model_open(fuzz_dir(), &m, &e) < 0) {
		if (m)
			fuzz_fail("model_open failed but returned a model");
		fuzz_check_message("model_open", &e);
		return 0;
	}
	const struct model_info *in = model_get_info(m);
	if (in->n_layers < 1 || in->n_heads < 1 || in->head_dim < 1 || in->n_kv_heads < 1 ||
	    in->n_heads % in->n_kv_heads)
		fuzz_fail("model_open accepted %d layers, %d heads of %d, %d key/value heads", in->n_layers, in->n_heads,
			  in->head_dim, in->n_kv_heads);
	struct trace *t = NULL;
	if (model_run(m, "the cat sat on the mat", in->supports_pairs ? "a b" : NULL, NULL, &t, &e) < 0) {
		fuzz_check_message("model_run", &e);
	} else {
		if (t->n < 1 || t->n > in->max_positions)
			fuzz_fail("trace of %d tokens for %d positions", t->n, in->max_positions);
		trace_free(t);
	}
	model_close(m);
	return 0;
}
