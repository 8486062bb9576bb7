#!/bin/sh
# cli.sh -- drive the real attnscope binary through its non-interactive modes: --help/--version,
# --dump json|csv and their restrictions, standard input, model lookup in a Hugging Face cache
# layout, truncation, and the one-line errors for bad input. Needs jq.
set -u
TEST_NAME=cli
. "${top_srcdir:-.}/tests/lib-cli.sh" # BIN SRC REF PY TOOLS TMP, ok/bad, expect_eq/_grep/_nogrep
BERT=$SRC/tests/data/models/bert-mini
GPT2=$SRC/tests/data/models/gpt2-mini

# expect_eq WHAT GOT WANT
# expect_grep WHAT FILE PATTERN

command -v jq >/dev/null || { echo "cli.sh: jq is required"; exit 99; }

# --help and --version, GNU style
"$BIN" --help >"$TMP/out" 2>&1; expect_eq "--help status" $? 0
expect_grep "--help" "$TMP/out" "^Usage: attnscope \[OPTION\]"
expect_grep "--help lists --dump" "$TMP/out" "--dump=FORMAT"
"$BIN" --version >"$TMP/out" 2>&1; expect_eq "--version status" $? 0
expect_eq "--version first line" "$(head -n1 "$TMP/out")" "attnscope 0.1.0"

# --version --verbose: the GEMM library per product class, measured once into the cache file and
# then read from it; a corrupt file or another machine's is refused with a message and measured
# again; ATTNSCOPE_GEMM forces a library (src/engine/gemm.c)
G=$TMP/gemm-dir/gemm
gemm_verbose() { ATTNSCOPE_GEMM_CACHE=$G "$BIN" --version --verbose >"$TMP/out" 2>"$TMP/err"; }
classes() { grep -c "^  k[<>=0-9]* *$1 " "$TMP/out"; }
ATTNSCOPE_GEMM=auto gemm_verbose; expect_eq "--version --verbose status" $? 0
expect_eq "--version --verbose first line" "$(head -n1 "$TMP/out")" "attnscope 0.1.0"
expect_eq "--version --verbose classes" "$(($(classes OpenBLAS) + $(classes oneDNN) + $(classes attnscope)))" 3
expect_grep "--version --verbose rows block" "$TMP/out" "rows block of token reuse: [1-9]"
# the vector math path: on a CPU with AVX2 and FMA (and no AVX-512 oneDNN pass) glibc's functions bit for bit
if grep -q " avx2 " /proc/cpuinfo && grep -q " fma " /proc/cpuinfo && ! grep -q " avx512f " /proc/cpuinfo; then
	want="AVX2 (glibc's expf, erff, tanhf bit for bit)"
else
	want="."
fi
expect_grep "--version --verbose vector math" "$TMP/out" "^vector math of the activations and the softmax: $want"
ATTNSCOPE_VECTOR_MATH=off ATTNSCOPE_GEMM=openblas "$BIN" --version --verbose >"$TMP/out-scalar" 2>&1
expect_grep "--version --verbose, ATTNSCOPE_VECTOR_MATH=off" "$TMP/out-scalar" "^vector math of the activations and the softmax: none (scalar libm)\$"
if grep -q "OpenBLAS only" "$TMP/out"; then # neither oneDNN built in nor AVX2 and FMA: nothing to measure
	expect_eq "OpenBLAS alone" "$(classes OpenBLAS)" 3
	ATTNSCOPE_GEMM=dnnl gemm_verbose; expect_grep "ATTNSCOPE_GEMM=dnnl without oneDNN" "$TMP/err" "built without oneDNN"
else
	expect_grep "GEMM measured" "$TMP/out" "measured in [0-9]* ms; cache file $G\$"
	expect_grep "GEMM cache key" "$G" "^key .*oneDNN .* attnscope "
	ATTNSCOPE_GEMM=auto gemm_verbose; expect_grep "GEMM cache read" "$TMP/out" "read from the cache; cache file $G\$"
	expect_eq "GEMM cache read quietly" "$(cat "$TMP/err")" ""
	sed 's/^key .*/key another CPU/' "$G" >"$G.other" && mv "$G.other" "$G"
	ATTNSCOPE_GEMM=auto gemm_verbose; expect_eq "another machine's cache: status" $? 0
	expect_grep "another machine's cache: message" "$TMP/err" "GEMM cache $G ignored (measured on another CPU or library (another CPU)); measured again"
	expect_grep "another machine's cache: measured" "$TMP/out" "measured in [0-9]* ms"
	expect_nogrep "another machine's cache: replaced" "$G" "^key another CPU"
	printf 'attnscope-gemm 2\nkey %s\nclass 0 dnnl 1 2 \377\n' "$(sed -n 's/^key //p' "$G")" >"$G"
	ATTNSCOPE_GEMM=auto gemm_verbose; expect_eq "corrupt cache: status" $? 0
	expect_grep "corrupt cache: message" "$TMP/err" "GEMM cache $G ignored (a bad rate in class 0); measured again"
	expect_grep "corrupt cache: measured" "$TMP/out" "measured in [0-9]* ms"
	printf 'attnscope-gemm 1\nkey %s\nclass 0 dnnl 1 2 3 4 5 6 7 8\n' "$(sed -n 's/^key //p' "$G")" >"$G"
	ATTNSCOPE_GEMM=auto gemm_verbose; expect_eq "an older version's cache: measured again quietly" "$(cat "$TMP/err")" ""
	expect_grep "an older version's cache: measured" "$TMP/out" "measured in [0-9]* ms"
	expect_grep "an older version's cache: replaced" "$G" "^attnscope-gemm 2\$"
	ATTNSCOPE_GEMM=openblas gemm_verbose; expect_grep "ATTNSCOPE_GEMM=openblas" "$TMP/out" "forced by ATTNSCOPE_GEMM=openblas"
	expect_eq "ATTNSCOPE_GEMM=openblas classes" "$(classes OpenBLAS)" 3
	if grep -q "| oneDNN none |" "$G"; then
		ATTNSCOPE_GEMM=dnnl gemm_verbose; expect_grep "ATTNSCOPE_GEMM=dnnl without oneDNN" "$TMP/err" "built without oneDNN"
	else
		ATTNSCOPE_GEMM=dnnl gemm_verbose; expect_eq "ATTNSCOPE_GEMM=dnnl classes" "$(classes oneDNN)" 3
	fi
	if grep -q "| attnscope none\$" "$G"; then
		ATTNSCOPE_GEMM=attnscope gemm_verbose; expect_grep "ATTNSCOPE_GEMM=attnscope without AVX2" "$TMP/err" "lacks AVX2 or FMA"
	else # attnscope's kernel: a row's sums do not depend on the other rows (gemmkern.h)
		ATTNSCOPE_GEMM=attnscope gemm_verbose; expect_eq "ATTNSCOPE_GEMM=attnscope classes" "$(classes attnscope)" 3
		expect_grep "ATTNSCOPE_GEMM=attnscope: every token reused" "$TMP/out" "rows block of token reuse: 1\$"
		expect_grep "ATTNSCOPE_GEMM=attnscope: named" "$TMP/out" "^GEMM: attnscope's AVX[-0-9]* kernel, forced"
		ATTNSCOPE_GEMM_KERNEL=avx2 ATTNSCOPE_GEMM=attnscope gemm_verbose
		expect_grep "ATTNSCOPE_GEMM_KERNEL=avx2: named" "$TMP/out" "^GEMM: attnscope's AVX2 kernel, forced"
		expect_grep "ATTNSCOPE_GEMM_KERNEL=avx2: in the key" "$TMP/out" "attnscope AVX2 4x24 v5, weights packed, scores kept within 25 %\$"
		ATTNSCOPE_GEMM_KERNEL=sse ATTNSCOPE_GEMM=attnscope gemm_verbose
		expect_grep "ATTNSCOPE_GEMM_KERNEL=sse" "$TMP/err" "ATTNSCOPE_GEMM_KERNEL=sse: not avx2, avx512 or auto, or the CPU lacks it; the widest"
		# a measured choice whose libraries keep no block of rows goes to the kernel (token reuse): a
		# head's scores on OpenBLAS, as the cache can say; where OpenBLAS keeps a block (12 on AMD Zen)
		# that block is kept
		ATTNSCOPE_GEMM=auto gemm_verbose
		sed -i 's/^class 0 [a-z]* /class 0 openblas /; s/^class \([12]\) [a-z]* /class \1 attnscope /' "$G"
		ATTNSCOPE_GEMM=auto gemm_verbose
		expect_grep "scores on OpenBLAS: read" "$TMP/out" "read from the cache"
		expect_grep "scores on OpenBLAS: token reuse" "$TMP/out" "rows block of token reuse: [1-9]"
		expect_eq "scores on OpenBLAS: nothing on stderr" "$(cat "$TMP/err")" ""
		if grep -q "note: OpenBLAS's sums vary with the row count here" "$TMP/out"; then
			expect_eq "scores on OpenBLAS, its sums varying: the kernel's classes" "$(classes attnscope)" 3
			expect_grep "scores on OpenBLAS, its sums varying: every token reused" "$TMP/out" "rows block of token reuse: 1\$"
		fi
		rm -f "$G"
	fi
fi
ATTNSCOPE_GEMM=fast gemm_verbose; expect_grep "ATTNSCOPE_GEMM=fast" "$TMP/err" "ATTNSCOPE_GEMM=fast is not openblas, dnnl, attnscope or auto: auto"
"$BIN" --verbose >"$TMP/out" 2>&1; expect_eq "--verbose alone status" $? 2
expect_grep "--verbose alone" "$TMP/out" "^attnscope: --verbose goes with --version$"
"$BIN" --frobnicate >"$TMP/out" 2>&1; expect_eq "unknown option status" $? 2
expect_grep "unknown option" "$TMP/out" "Try 'attnscope --help'"
"$BIN" --dump xml -m "$BERT" hi >"$TMP/out" 2>&1; expect_eq "--dump xml status" $? 2
expect_grep "--dump xml" "$TMP/out" "unknown format 'xml'"

# JSON export: shape and contents against our reference fixture
CASE=$SRC/tests/data/cases/bert-mini--book.json
TEXT=$(jq -r .text "$CASE")
"$BIN" -m "$BERT" --dump json "$TEXT" >"$TMP/book.json" 2>"$TMP/err"; expect_eq "dump json status" $? 0
expect_eq "dump json tokens" "$(jq -c .tokens "$TMP/book.json")" "$(jq -c .tokens "$CASE")"
expect_eq "dump json ids" "$(jq -c .ids "$TMP/book.json")" "$(jq -c .ids "$CASE")"
expect_eq "model.family" "$(jq -r .model.family "$TMP/book.json")" "bert"
expect_eq "model shape" "$(jq -c '[.model.layers, .model.heads, .model.head_dim, .model.hidden, .model.max_positions]' "$TMP/book.json")" \
	"$(jq -c '[.config.num_hidden_layers, .config.num_attention_heads, (.config.hidden_size / .config.num_attention_heads), .config.hidden_size, .config.max_position_embeddings]' "$SRC/tests/data/models/bert-mini/config.json" 2>/dev/null || jq -c '[.num_hidden_layers, .num_attention_heads, (.hidden_size / .num_attention_heads), .hidden_size, .max_position_embeddings]' "$BERT/config.json")"
# max |attnscope - reference| over every attention weight and query element
DIFF=$(jq -n --slurpfile a "$TMP/book.json" --slurpfile r "$CASE" '
	def maxdiff(x; y): [x, y] | transpose | map(.[0] - .[1] | fabs) | max;
	{attn: maxdiff([$a[0].attentions | flatten[]]; [$r[0].attentions | flatten[]]),
	 q: maxdiff([$a[0].queries | flatten[]]; [$r[0].q | flatten[]]),
	 k: maxdiff([$a[0].keys | flatten[]]; [$r[0].k | flatten[]])}
	| (.attn <= 1e-5 and .q <= 1e-4 and .k <= 1e-4)')
expect_eq "dump json numbers within tolerance" "$DIFF" "true"
# rows of every attention matrix sum to 1
ROWS=$(jq '[.attentions[][][] | add] | map(. - 1 | fabs) | max < 1e-5' "$TMP/book.json")
expect_eq "attention rows sum to 1" "$ROWS" "true"

# --layer / --head restrict what is printed
"$BIN" -m "$BERT" --dump json --layer 1 --head 0 "$TEXT" >"$TMP/sel.json"; expect_eq "restricted status" $? 0
expect_eq "restricted shape" "$(jq -c '[(.attentions | length), (.attentions[0] | length), .layer_indices, .head_indices]' "$TMP/sel.json")" '[1,1,[1],[0]]'
expect_eq "restricted equals full" "$(jq -c '.attentions[0][0]' "$TMP/sel.json")" "$(jq -c '.attentions[1][0]' "$TMP/book.json")"
"$BIN" -m "$BERT" --dump json --layer 99 "$TEXT" >"$TMP/out" 2>&1; expect_eq "--layer out of range status" $? 1
expect_grep "--layer out of range" "$TMP/out" "layer 99: the model has layers 0..2"

# CSV export: tidy rows
"$BIN" -m "$BERT" --dump csv "$TEXT" >"$TMP/book.csv"; expect_eq "dump csv status" $? 0
expect_eq "csv header" "$(head -n1 "$TMP/book.csv")" "layer,head,query_index,key_index,query_token,key_token,weight"
N=$(jq '.tokens | length' "$TMP/book.json"); L=$(jq .model.layers "$TMP/book.json"); H=$(jq .model.heads "$TMP/book.json")
expect_eq "csv rows" "$(($(wc -l <"$TMP/book.csv") - 1))" "$((L * H * N * N))"
expect_grep "csv quotes commas" "$TMP/book.csv" '^0,0,0,2,\[CLS\],",",'
expect_eq "csv weight equals json" "$(awk -F, 'NR==2 {print $7}' "$TMP/book.csv")" "$(jq '.attentions[0][0][0][0]' "$TMP/book.json")"

# Standard input and --
printf '%s\n' "$TEXT" | "$BIN" -m "$BERT" --dump json - >"$TMP/stdin.json"; expect_eq "stdin status" $? 0
expect_eq "stdin equals argument" "$(jq -c .ids "$TMP/stdin.json")" "$(jq -c .ids "$TMP/book.json")"
"$BIN" -m "$BERT" --dump json -- --help >"$TMP/dd.json"; expect_eq "-- status" $? 0
expect_eq "-- ends options" "$(jq -c .tokens "$TMP/dd.json")" '["[CLS]","-","-","help","[SEP]"]'

# Sentence pairs
"$BIN" -m "$BERT" --dump json --pair "autumn is marked by colorful foliage" "leaves fall in autumn" >"$TMP/pair.json"
expect_eq "pair type ids" "$(jq -c .token_type_ids "$TMP/pair.json")" "$(jq -c .token_type_ids "$SRC/tests/data/cases/bert-mini--pair.json")"

# GPT-2: causal, exact zeros above the diagonal
"$BIN" -m "$GPT2" --dump json "Oh, this book? I've enjoyed it." >"$TMP/g.json"; expect_eq "gpt2 status" $? 0
expect_eq "gpt2 tokens" "$(jq -c .tokens "$TMP/g.json")" '["Oh",",","Ġthis","Ġbook","?","ĠI","'"'"'ve","Ġenjoyed","Ġit","."]'
expect_eq "gpt2 causal zeros" "$(jq '[.attentions[][] | to_entries[] | .key as $i | .value | to_entries[] | select(.key > $i) | .value] | all(. == 0)' "$TMP/g.json")" "true"

# Truncation: longer than max_position_embeddings (128) -> warning, 128 tokens, exit 0
LONG=$(yes "word" | head -n 300 | tr '\n' ' ')
"$BIN" -m "$BERT" --dump json "$LONG" >"$TMP/long.json" 2>"$TMP/err"; expect_eq "long text status" $? 0
expect_grep "truncation warning" "$TMP/err" "warning: text truncated to the model's 128 positions"
expect_eq "truncated length" "$(jq '.tokens | length' "$TMP/long.json")" 128
expect_eq "truncated ends with [SEP]" "$(jq -r '.tokens[-1]' "$TMP/long.json")" "[SEP]"

# Bad text and bad models: one line, non-zero exit, no crash
printf 'caf\303 ok' >"$TMP/bad.txt"
"$BIN" -m "$BERT" --dump json - <"$TMP/bad.txt" >"$TMP/out" 2>&1; expect_eq "invalid UTF-8 status" $? 1
expect_grep "invalid UTF-8" "$TMP/out" "invalid UTF-8 at byte 3"
"$BIN" -m /nonexistent/model --dump json hi >"$TMP/out" 2>&1; expect_eq "missing model status" $? 1
expect_eq "missing model message" "$(cat "$TMP/out")" "attnscope: /nonexistent/model: no such model folder"
HF_HUB_CACHE=$TMP/emptycache "$BIN" -m no-such-model --dump json hi >"$TMP/out" 2>&1; expect_eq "unknown name status" $? 1
expect_grep "unknown name" "$TMP/out" "model 'no-such-model' not found"
mkdir -p "$TMP/badcfg" && cp "$BERT/vocab.txt" "$BERT/model.safetensors" "$TMP/badcfg/"
printf '{"model_type": "bert", "hidden_size": 8,,}' >"$TMP/badcfg/config.json"
"$BIN" -m "$TMP/badcfg" --dump json hi >"$TMP/out" 2>&1; expect_eq "malformed config status" $? 1
expect_grep "malformed config" "$TMP/out" "badcfg/config.json:1:"
expect_eq "malformed config one line" "$(wc -l <"$TMP/out")" 1
printf '{"model_type": "jamba"}' >"$TMP/badcfg/config.json"
"$BIN" -m "$TMP/badcfg" --dump json hi >"$TMP/out" 2>&1; expect_eq "unknown family status" $? 1
expect_grep "unknown family" "$TMP/out" "unknown model family 'jamba'"
# A mixture of experts too large for the memory: refused before the run, with the figures
# (ATTNSCOPE_MEMORY_CHECK pretends the machine allows 100 kB; the fixture's file is 132 kB, all
# of it needed once 2 tokens may reach all 4 experts; 0 switches the check off).
ATTNSCOPE_MEMORY_CHECK=100K "$BIN" -m "$top_srcdir/tests/data/models/mixtral-moe" --dump json "The capybara" >"$TMP/out" 2>&1
expect_eq "MoE beyond memory status" $? 1
expect_grep "MoE beyond memory" "$TMP/out" "tokens may route to 4 of the 4 experts a layer: 0.000132 GB of weights to hold at once, more than the 0.0001 GB ATTNSCOPE_MEMORY_CHECK allows"
ATTNSCOPE_MEMORY_CHECK=0 "$BIN" -m "$top_srcdir/tests/data/models/mixtral-moe" --dump json "The capybara" >"$TMP/out" 2>&1
expect_eq "MoE memory check off" $? 0
ATTNSCOPE_MEMORY_CHECK=1M "$BIN" -m "$top_srcdir/tests/data/models/mixtral-moe" --dump json "The capybara" >"$TMP/out" 2>&1
expect_eq "MoE within 1M" $? 0
# Llama-4-Scout's config claims 10,485,760 positions: it opens (nothing is sized by that number).
cp -rL "$top_srcdir/tests/data/models/llama4-multimodal" "$TMP/scout"
jq '.text_config.max_position_embeddings = 10485760' "$top_srcdir/tests/data/models/llama4-multimodal/config.json" >"$TMP/scout/config.json"
"$BIN" -m "$TMP/scout" --dump json "The capybara" >"$TMP/out" 2>&1
expect_eq "Scout's 10M positions status" $? 0
expect_eq "Scout's 10M positions" "$(jq .model.max_positions "$TMP/out")" 10485760
# A default out of its range is an error too (Qwen3-MoE's top-8 default with 6 experts; fuzz_modeldir found it).
cp -rL "$top_srcdir/tests/data/models/qwen3moe-dense" "$TMP/moe-default"
sed 's/"num_experts_per_tok"/"num_experts_per_tok_gone"/' "$top_srcdir/tests/data/models/qwen3moe-dense/config.json" >"$TMP/moe-default/config.json"
"$BIN" -m "$TMP/moe-default" --dump json "The capybara" >"$TMP/out" 2>&1
expect_eq "MoE default top-k beyond the experts status" $? 1
expect_grep "MoE default top-k beyond the experts" "$TMP/out" 'no "num_experts_per_tok", and its default 8 is outside 1..6'
# A sentence-transformers folder (all-MiniLM-L6-v2's layout: BERT inside, with modules.json, the
# pooling config and 1_Pooling/) opens as it is and gives the BERT's own numbers.
cp -rL "$top_srcdir/tests/data/models/bert-mini" "$TMP/st-minilm"
printf '[{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}, {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]' >"$TMP/st-minilm/modules.json"
printf '{"max_seq_length": 256, "do_lower_case": false}' >"$TMP/st-minilm/sentence_bert_config.json"
printf '{"__version__": {"sentence_transformers": "2.0.0"}}' >"$TMP/st-minilm/config_sentence_transformers.json"
mkdir -p "$TMP/st-minilm/1_Pooling"
printf '{"word_embedding_dimension": 32, "pooling_mode_mean_tokens": true}' >"$TMP/st-minilm/1_Pooling/config.json"
"$BIN" -m "$TMP/st-minilm" --dump json "the quick brown fox" >"$TMP/st.json" 2>&1
expect_eq "sentence-transformers folder opens" $? 0
"$BIN" -m "$top_srcdir/tests/data/models/bert-mini" --dump json "the quick brown fox" >"$TMP/bert.json" 2>&1
expect_eq "sentence-transformers folder: same attention" "$(jq -c .attentions "$TMP/st.json" | cksum)" "$(jq -c .attentions "$TMP/bert.json" | cksum)"
# A rope_scaling type the engine does not implement is named, never run with wrong positions.
"$BIN" -m "$top_srcdir/tests/data/models/phi3-longrope" --dump json hi >"$TMP/out" 2>&1
expect_eq "longrope status" $? 1
expect_grep "longrope refused" "$TMP/out" "$(jq -r .error_substring "$top_srcdir/tests/data/models/phi3-longrope/expected_error.json")"
expect_eq "longrope one line" "$(wc -l <"$TMP/out")" 1
# StableLM's use_parallel_residual true (no block for it): refused by name in one line
"$BIN" -m "$top_srcdir/tests/data/models/stablelm-parallel" --dump json hi >"$TMP/out" 2>&1
expect_eq "stablelm parallel status" $? 1
expect_grep "stablelm parallel refused" "$TMP/out" "$(jq -r .error_substring "$top_srcdir/tests/data/models/stablelm-parallel/expected_error.json")"
expect_eq "stablelm parallel one line" "$(wc -l <"$TMP/out")" 1
# YaRN's truncate false (gpt-oss): the ramp's bounds stay fractional, so the full layer's rotated
# queries change while the sliding layer's (plain rope) do not; a non-boolean truncate is refused by name
mkdir -p "$TMP/yarn-notrunc" && cp -L "$top_srcdir/tests/data/models/olmo3-yarn"/* "$TMP/yarn-notrunc/"
jq '.rope_scaling.truncate = false' "$top_srcdir/tests/data/models/olmo3-yarn/config.json" >"$TMP/yarn-notrunc/config.json"
"$BIN" -m "$TMP/yarn-notrunc" --dump json hi there >"$TMP/notrunc.json" 2>"$TMP/out"
expect_eq "yarn truncate false status" $? 0
"$BIN" -m "$top_srcdir/tests/data/models/olmo3-yarn" --dump json hi there >"$TMP/trunc.json" 2>"$TMP/out"
expect_eq "yarn truncate false: sliding layer unchanged" "$(jq -c '.queries[0]' "$TMP/notrunc.json")" "$(jq -c '.queries[0]' "$TMP/trunc.json")"
if [ "$(jq -c '.queries[1]' "$TMP/notrunc.json")" != "$(jq -c '.queries[1]' "$TMP/trunc.json")" ]; then ok; else bad "yarn truncate false: full layer's queries unchanged"; fi
jq '.rope_scaling.truncate = "no"' "$top_srcdir/tests/data/models/olmo3-yarn/config.json" >"$TMP/yarn-notrunc/config.json"
"$BIN" -m "$TMP/yarn-notrunc" --dump json hi >"$TMP/out" 2>&1
expect_eq "yarn truncate string status" $? 1
expect_grep "yarn truncate string refused" "$TMP/out" '"truncate" must be true or false'
expect_eq "yarn truncate string one line" "$(wc -l <"$TMP/out")" 1
# GPTBigCode with multi_query false (c_attn split per head): refused by name in one line
mkdir -p "$TMP/bigcode-mha" && cp -L "$top_srcdir/tests/data/models/bigcode-mqa"/* "$TMP/bigcode-mha/"
jq '.multi_query = false' "$top_srcdir/tests/data/models/bigcode-mqa/config.json" >"$TMP/bigcode-mha/config.json"
"$BIN" -m "$TMP/bigcode-mha" --dump json hi >"$TMP/out" 2>&1
expect_eq "bigcode multi_query false status" $? 1
expect_grep "bigcode multi_query false refused" "$TMP/out" '"multi_query": false is not supported'
expect_eq "bigcode multi_query false one line" "$(wc -l <"$TMP/out")" 1
# Falcon's new decoder architecture with parallel_attn false (no layout transformers runs): refused by name
mkdir -p "$TMP/falcon-seq" && cp -L "$top_srcdir/tests/data/models/falcon-gqa"/* "$TMP/falcon-seq/"
jq '.parallel_attn = false' "$top_srcdir/tests/data/models/falcon-gqa/config.json" >"$TMP/falcon-seq/config.json"
"$BIN" -m "$TMP/falcon-seq" --dump json hi >"$TMP/out" 2>&1
expect_eq "falcon new sequential status" $? 1
expect_grep "falcon new sequential refused" "$TMP/out" '"parallel_attn": false is not supported with "new_decoder_architecture" true'
expect_eq "falcon new sequential one line" "$(wc -l <"$TMP/out")" 1

# NaN weights: a warning naming the first bad layer, not a crash
mkdir -p "$TMP/nan" && cp -L "$BERT"/* "$TMP/nan/"
HLEN=$(od -An -t u4 -N 4 "$TMP/nan/model.safetensors" | tr -d ' ')
# 0xff bytes are NaN in F16: spoil the start of the data section (the word embeddings)
head -c 400000 /dev/zero | tr '\0' '\377' | dd of="$TMP/nan/model.safetensors" bs=1 seek=$((8 + HLEN)) conv=notrunc 2>/dev/null
"$BIN" -m "$TMP/nan" --dump json "the cat" >"$TMP/out" 2>"$TMP/err"; expect_eq "NaN weights status" $? 0
expect_grep "NaN weights warning" "$TMP/err" "warning: the embeddings hold NaN or Inf values"
expect_grep "NaN in JSON is null" "$TMP/out" "null"

# --print: every view renders headlessly; unknown views and scores are usage errors
for v in grid heatmap heads qk rollout headview neuron vectors qkstats dots softmax; do
	"$BIN" -m "$GPT2" --print "$v" --width 90 --color never "The cat sat on the mat." >"$TMP/out" 2>&1
	expect_eq "--print $v status" $? 0
	expect_eq "--print $v header" "$(head -n1 "$TMP/out" | cut -d' ' -f1-8)" "gpt2-mini · gpt2 · 7 tokens · $v"
done
"$BIN" -m "$GPT2" --print nosuchview x >"$TMP/out" 2>&1; expect_eq "--print unknown view status" $? 2
expect_grep "--print unknown view" "$TMP/out" "unknown view 'nosuchview' (grid, heatmap, heads,"
"$BIN" -m "$GPT2" --print heads --sort induction --color never "a b c d a b c d" >"$TMP/out" 2>&1
expect_grep "--sort" "$TMP/out" "sorted by induction, largest first"
"$BIN" --sort foo x >"$TMP/out" 2>&1; expect_eq "--sort unknown status" $? 2

# The default model: -m, else $ATTNSCOPE_MODEL, else the config file's model, else demo-bert
mkdir -p "$TMP/xdg/attnscope"
printf 'model: %s\n' "$GPT2" >"$TMP/xdg/attnscope/config.yaml"
XDG_CONFIG_HOME=$TMP/xdg "$BIN" --dump json "hi" >"$TMP/out" 2>&1
expect_eq "config model" "$(jq -r .model.family "$TMP/out")" "gpt2"
XDG_CONFIG_HOME=$TMP/xdg ATTNSCOPE_MODEL=$BERT "$BIN" --dump json "hi" >"$TMP/out" 2>&1
expect_eq "ATTNSCOPE_MODEL beats config" "$(jq -r .model.family "$TMP/out")" "bert"
XDG_CONFIG_HOME=$TMP/xdg "$BIN" -m "$BERT" --dump json "hi" >"$TMP/out" 2>&1
expect_eq "-m beats config" "$(jq -r .model.family "$TMP/out")" "bert"
printf 'model: [oops\n' >"$TMP/xdg/attnscope/config.yaml"
XDG_CONFIG_HOME=$TMP/xdg "$BIN" --dump json "hi" >"$TMP/out" 2>&1; expect_eq "bad config status" $? 1
expect_eq "bad config message" "$(cat "$TMP/out")" "attnscope: $TMP/xdg/attnscope/config.yaml:2:1: did not find expected ',' or ']'"
"$BIN" --scale foo x >"$TMP/out" 2>&1; expect_eq "bad --scale status" $? 2
expect_grep "bad --scale" "$TMP/out" "'foo' is not one of linear, log, rank"
"$BIN" -m "$BERT" --dump json --print grid x >"$TMP/out" 2>&1; expect_eq "--dump with --print status" $? 2
"$BIN" -m "$BERT" "hello" </dev/null >"$TMP/out" 2>&1; expect_eq "explorer without a terminal status" $? 2
expect_grep "explorer without a terminal" "$TMP/out" "the explorer needs a terminal; use --dump or --print"

# The Hugging Face cache layout: models--ORG--NAME/snapshots/<hash>, chosen by refs/main
HUB=$TMP/hub/models--tiny-org--bert-mini
mkdir -p "$HUB/refs" "$HUB/snapshots/0123abcd" "$HUB/snapshots/old0000" "$HUB/blobs"
for f in config.json model.safetensors vocab.txt tokenizer_config.json; do
	cp -L "$BERT/$f" "$HUB/blobs/$f.blob" && ln -s "../../blobs/$f.blob" "$HUB/snapshots/0123abcd/$f"
done
printf '0123abcd' >"$HUB/refs/main"
HF_HUB_CACHE=$TMP/hub "$BIN" -m tiny-org/bert-mini --dump json "$TEXT" >"$TMP/hub.json" 2>"$TMP/err"
expect_eq "hub ORG/NAME status" $? 0
expect_eq "hub ORG/NAME ids" "$(jq -c .ids "$TMP/hub.json")" "$(jq -c .ids "$TMP/book.json")"
HF_HUB_CACHE=$TMP/hub "$BIN" -m bert-mini --dump json "$TEXT" >"$TMP/hub2.json" 2>/dev/null
expect_eq "hub bare NAME" "$(jq -c .ids "$TMP/hub2.json")" "$(jq -c .ids "$TMP/book.json")"
env -u HF_HUB_CACHE HF_HOME=$TMP "$BIN" -m tiny-org/bert-mini --dump json "$TEXT" >"$TMP/hub3.json" 2>/dev/null
expect_eq "hub via HF_HOME" "$(jq -c .ids "$TMP/hub3.json")" "$(jq -c .ids "$TMP/book.json")"
env -u HF_HUB_CACHE -u HF_HOME HOME=$TMP/home XDG_CACHE_HOME= "$BIN" -m tiny-org/bert-mini --dump json hi >"$TMP/out" 2>&1
expect_eq "hub not in ~/.cache" $? 1

echo "cli.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
