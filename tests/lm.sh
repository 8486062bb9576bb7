#!/bin/sh
# lm.sh -- the model's own predictions (src/engine/lmhead.c) through `--dump json`: "lm_head", "topk",
# "logsumexp", "surprisal" and --top-k, checked
#  1. against the real transformers heads of the shared reference's cases-lm (tests/tools/lm_cases.py:
#     identical top-1, top-10 but for ties within 1e-6, log-probabilities/logsumexp/surprisal within 1e-4,
#     the [MASK] positions' top-10; a model without a head must say so). A case whose model_file_sha256
#     is not the bundled file's (demo-bert, whose masked-LM head another change restores) is skipped
#     with the reason printed;
#  2. against tests/tools/ref_lm.py, the independent numpy reference, on the demo models, every fixture
#     model of tests/data/models and tiny model of the shared reference (the logit modifiers of Cohere,
#     Granite and Gemma 2 among them, untied lm_head weights, models without a head), and heads no
#     model covers, added to copies of tiny models (RoBERTa's lm_head.*, an untied lm_head with a bias);
#  3. for sensitivity: the reference with a deliberate mistake (the final norm applied twice, the MLM
#     transform's LayerNorm or Gemma 2's final soft-capping left out) must disagree.
# Needs jq, sha256sum and /usr/bin/python3 with numpy.
set -u
TEST_NAME=lm
. "${top_srcdir:-.}/tests/lib-cli.sh" # BIN SRC REF PY TOOLS TMP, ok/bad, expect_eq/_grep/_nogrep

command -v jq >/dev/null || { echo "lm.sh: jq is required"; exit 99; }
command -v sha256sum >/dev/null || { echo "lm.sh: sha256sum is required"; exit 99; }
"$PY" -c 'import numpy' 2>/dev/null || { echo "SKIP: lm.sh needs $PY with numpy (tools/install-deps installs it)"; exit 77; }
GPT2=$SRC/models/demo-gpt2
BERT=$SRC/models/demo-bert

# --top-k: its range, 0 leaves the predictions out, N gives N per position; a CSV dump has none.
"$BIN" -m "$GPT2" --dump json --top-k -1 hi >"$TMP/out" 2>&1
expect_eq "--top-k -1 status" $? 2
grep -q -- "--top-k" "$TMP/out" && ok || bad "--top-k -1 message: $(cat "$TMP/out")"
"$BIN" -m "$GPT2" --dump json --top-k 0 "the cat sat" >"$TMP/k0.json"
expect_eq "--top-k 0 status" $? 0
expect_eq "--top-k 0 leaves topk out" "$(jq 'has("topk") or has("lm_head")' "$TMP/k0.json")" false
"$BIN" -m "$GPT2" --dump json --top-k 3 "the cat sat" >"$TMP/k3.json"
expect_eq "--top-k 3 status" $? 0
expect_eq "--top-k 3 entries" "$(jq -c '[.topk[] | (.ids | length), (.logprobs | length)] | unique' "$TMP/k3.json")" "[3]"
expect_eq "one topk per token" "$(jq '(.topk | length) == (.ids | length)' "$TMP/k3.json")" true
expect_eq "surprisal: n - 1 values" "$(jq '(.surprisal | length) == (.ids | length) - 1' "$TMP/k3.json")" true
expect_eq "best first" "$(jq '[.topk[].logprobs | . == (sort | reverse)] | all' "$TMP/k3.json")" true
"$BIN" -m "$GPT2" --dump json "the cat sat" >"$TMP/k10.json"
expect_eq "10 by default" "$(jq -c '[.topk[].ids | length] | unique' "$TMP/k10.json")" "[10]"
expect_eq "--top-k 3 is the default's first 3" "$(jq -c '[.topk[].ids[0:3]]' "$TMP/k10.json")" "$(jq -c '[.topk[].ids]' "$TMP/k3.json")"
"$BIN" -m "$GPT2" --dump csv "the cat sat" >"$TMP/p.csv"
expect_eq "csv unchanged" "$(head -n1 "$TMP/p.csv")" "layer,head,query_index,key_index,query_token,key_token,weight"

# The worked example of the man page and README: demo-gpt2's mean surprisal on the induction text's
# first copy and on its repetition, quoted there to two decimals.
INDUCTION="river bread window stone seven garden horse silver morning letter music lamp river bread window stone seven garden horse silver morning letter music lamp"
"$BIN" -m "$GPT2" --dump json "$INDUCTION" >"$TMP/ind.json"
first=$(jq '.surprisal[0:11] | add / 11 * 100 | round / 100' "$TMP/ind.json")
second=$(jq '.surprisal[11:23] | add / 12 * 100 | round / 100' "$TMP/ind.json")
echo "worked example: demo-gpt2 induction text, mean surprisal $first nats (tokens 1-11), $second (tokens 12-23)"
for f in "$SRC/man/attnscope.1" "$SRC/README"; do
	tr '\n' ' ' <"$f" | grep -q "surprisal is $first nats over the first copy\|surprisal of $first nats over the first copy" &&
		tr '\n' ' ' <"$f" | grep -q "and $second over the repeated" && ok || bad "$(basename "$f") does not quote $first and $second"
done

# 1. The shared reference's cases.
if [ ! -d "$REF/cases-lm" ]; then
	echo "SKIPPED: the cases-lm comparisons: no shared reference at $REF (set ATTNSCOPE_SHARED_REF)"
else
	for c in "$REF"/cases-lm/*.json; do
		dir=$(jq -r .model_dir "$c")
		case $dir in
		*/*) mdir=$REF/models/${dir##*/} ;;
		*) mdir=$SRC/models/$dir ;; # the bundled demo models
		esac
		want=$(jq -r .model_file_sha256 "$c")
		have=$(sha256sum "$mdir/model.safetensors" | cut -d' ' -f1)
		if [ "$have" != "$want" ]; then
			echo "SKIPPED: $(basename "$c"): $mdir/model.safetensors is not the file the case was computed from (sha256 ${have%"${have#????????????}"}..., the case's ${want%"${want#????????????}"}...)"
			continue
		fi
		if ! "$BIN" -m "$mdir" --dump json --top-k 10 "$(jq -r .text "$c")" >"$TMP/case.json" 2>"$TMP/err"; then
			bad "$(basename "$c"): --dump failed: $(cat "$TMP/err")"
			continue
		fi
		if "$PY" "$TOOLS/lm_cases.py" "$c" "$TMP/case.json"; then ok; else bad "$(basename "$c")"; fi
	done
	"$PY" "$TOOLS/ref_lm.py" verify "$REF/cases-lm" "$REF/models" "$SRC/models" >"$TMP/verify" 2>&1
	st=$?
	sed 's/^/ref_lm.py vs the cases: /' "$TMP/verify"
	expect_eq "ref_lm.py agrees with the cases" $st 0
fi

# 2. attnscope against the numpy reference.
compare() { # MODEL_DIR TEXT [MISTAKE]: 0 when they agree
	"$BIN" -m "$1" --dump json --top-k 10 "$2" >"$TMP/d.json" 2>"$TMP/err" || { echo "$1: $(cat "$TMP/err")"; return 1; }
	"$PY" "$TOOLS/ref_lm.py" compare "$1" "$TMP/d.json" ${3:+"$3"}
}
compare "$GPT2" "$INDUCTION" && ok || bad "demo-gpt2 against ref_lm.py"
compare "$BERT" "The [MASK] sat on the [MASK] and looked out of the window." && ok || bad "demo-bert against ref_lm.py"
# every fixture model of the repository (heads or none, each family's tensor names and modifiers)
for d in "$SRC"/tests/data/models/*/; do
	m=$(basename "$d")
	case $m in
	gemma3-multimodal | llama4-multimodal) echo "SKIPPED: $m against ref_lm.py: ref_decoder.py runs text models only"; continue ;;
	phi3-longrope | stablelm-parallel) continue ;; # configurations attnscope refuses (cli.sh checks that)
	*-encdec) continue ;; # encoder-decoders: no output head read (check_engine and encdec.sh check them)
	esac
	compare "$d" "the cat sat on the mat" >"$TMP/fx" && ok || bad "fixture $m against ref_lm.py: $(cat "$TMP/fx")"
done
if [ ! -d "$REF/models" ]; then
	echo "SKIPPED: the tiny models against ref_lm.py: no shared reference at $REF"
else
	for m in gpt2-tiny gpt2-tiny-bf16 qwen3-tiny llama-tiny-gqa bert-tiny cohere-tiny granite-tiny gemma-tiny gemma2-tiny \
		gemma3-tiny smollm3-tiny starcoder2-tiny gptneo-tiny bloom-tiny falcon-tiny opt-tiny starcoder-tiny \
		olmo2-tiny phi-tiny gptj-tiny; do
		compare "$REF/models/$m" "Oh, this book? I've enjoyed it." && ok || bad "$m against ref_lm.py"
	done
	# heads no case covers, on copies with a seeded random head
	for s in roberta-tiny:roberta_mlm xlmr-tiny:roberta_mlm gptj-tiny:untied_bias phi-tiny:untied_bias \
		llama-tiny-gqa:untied_bias; do
		m=${s%%:*} kind=${s#*:}
		"$PY" "$TOOLS/ref_lm.py" synth "$REF/models/$m" "$TMP/$m-$kind" "$kind" || { bad "synth $m $kind"; continue; }
		text="Oh, this book? I've enjoyed it."
		[ "$kind" = roberta_mlm ] && text="The <mask> sat on the mat."
		compare "$TMP/$m-$kind" "$text" && ok || bad "$m with $kind against ref_lm.py"
	done
	# 3. sensitivity: the final norm applied twice (the logit lens's trap: GPT-2's and Qwen3's last hidden
	# state carries it already) and the masked-LM transform's LayerNorm left out move the reference far
	# from the cases; Gemma 2's final soft-capping left out moves it from attnscope
	for pair in final_norm_twice:gpt2-tiny--lm-induction no_mlm_ln:bert-tiny--lm-mask; do
		mistake=${pair%%:*} needs=${pair#*:}
		if [ ! -f "$REF/cases-lm/$needs.json" ]; then
			echo "SKIPPED: the mistake $mistake: no case $needs in $REF/cases-lm to catch it with"
		elif "$PY" "$TOOLS/ref_lm.py" verify "$REF/cases-lm" "$REF/models" "$SRC/models" $mistake >"$TMP/mistake" 2>&1; then
			bad "ref_lm.py with the mistake $mistake still agrees with the cases"
		else
			ok
			echo "deliberate mistake $mistake caught: $(grep '^worst' "$TMP/mistake")"
		fi
	done
	if compare "$REF/models/gemma2-tiny" "Oh, this book? I've enjoyed it." no_softcap >"$TMP/mistake"; then
		bad "the reference without Gemma 2's soft-capping still agrees: $(cat "$TMP/mistake")"
	else
		ok
		echo "deliberate mistake no_softcap caught: $(sed "s/  FAIL$//" "$TMP/mistake")"
	fi
fi

echo "lm.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
