#!/bin/sh
# ablate.sh -- head ablation (src/engine/ablate.c, the hook fwd_ablate_head in forward.c) through `--dump json`
# with --ablate L.H[,L.H...], --ablate-mode zero|mean and --ablation-effect, checked
#  0. on the command line: bad lists and modes are one-line errors; without the options the dump is as
#     before (no "ablated" key); the worked example of the man page and README (demo-gpt2's induction text,
#     layer 0 head 3 zero-ablated) is quoted there;
#  1. against the shared reference's cases-lm (transformers' head_mask and o_proj hooks): every case's 4
#     runs in both modes (log-probabilities, logsumexp, surprisal 1e-4 or the last hidden state, identical
#     top-1, the effect 1e-4, the next layer's attentions and each layer's largest change 1e-5, the layers
#     below unchanged bit for bit, the ablated head's own pattern kept as computed) and zero_ablation_effect
#     (tests/tools/ref_ablate.py case / effect). A case whose model file is not the bundled one is skipped;
#  2. the independent numpy reference tests/tools/ref_ablate.py against the cases, and attnscope against it
#     on the demo models (demo-bert's restored head, which no case covers) and tiny decoders;
#  3. for sensitivity: the reference with a deliberate mistake (the next head's columns ablated; a
#     mean-ablation's means taken from the ablated run) must disagree with the cases.
# Needs jq, sha256sum and /usr/bin/python3 with numpy.
set -u
TEST_NAME=ablate
. "${top_srcdir:-.}/tests/lib-cli.sh" # BIN SRC REF PY TOOLS TMP, ok/bad, expect_eq/_grep/_nogrep

command -v jq >/dev/null || { echo "ablate.sh: jq is required"; exit 99; }
command -v sha256sum >/dev/null || { echo "ablate.sh: sha256sum is required"; exit 99; }
"$PY" -c 'import numpy' 2>/dev/null || { echo "SKIP: ablate.sh needs $PY with numpy (tools/install-deps installs it)"; exit 77; }
GPT2=$SRC/models/demo-gpt2
BERT=$SRC/models/demo-bert

# 0. The command line.
refuse() { # STATUS MESSAGE-PART ARGS...: attnscope exits with STATUS and one line naming MESSAGE-PART
	st=$1 part=$2
	shift 2
	"$BIN" "$@" >"$TMP/out" 2>&1
	expect_eq "$* status" $? "$st"
	expect_eq "$* one line" "$(wc -l <"$TMP/out")" 1
	grep -q -- "$part" "$TMP/out" && ok || bad "$*: message: $(cat "$TMP/out")"
}
refuse 1 "does not exist" -m "$GPT2" --dump json --ablate 4.0 hi
refuse 1 "does not exist" -m "$GPT2" --dump json --ablate 0.4 hi
refuse 1 "is not LAYER.HEAD" -m "$GPT2" --dump json --ablate 0.x hi
refuse 1 "is not LAYER.HEAD" -m "$GPT2" --dump json --ablate 0.1, hi
refuse 1 "is not LAYER.HEAD" -m "$GPT2" --dump json --ablate -1.0 hi
refuse 1 "needs heads" -m "$GPT2" --dump json --ablate "" hi
refuse 2 "unknown mode" -m "$GPT2" --dump json --ablate 0.1 --ablate-mode half hi
refuse 2 "needs --ablate" -m "$GPT2" --dump json --ablate-mode mean hi
refuse 2 "apply to --dump and --print" -m "$GPT2" --ablate 0.1 hi
refuse 2 "adds to --dump json" -m "$GPT2" --dump csv --ablation-effect hi
refuse 2 "exclude --compare" -m "$GPT2" --dump json --ablate 0.1 --compare "ho" hi
"$BIN" -m "$GPT2" --dump json "the cat sat" >"$TMP/plain.json"
expect_eq "no ablation keys without the options" "$(jq 'has("ablated") or has("ablation") or has("ablation_effect") or has("last_hidden_state")' "$TMP/plain.json")" false
"$BIN" -m "$GPT2" --dump json --ablate 1.2,0.3,1.2 "the cat sat" >"$TMP/a.json"
expect_eq "heads listed once, in order" "$(jq -c .ablated "$TMP/a.json")" "[[0,3],[1,2]]"
expect_eq "zero by default" "$(jq -r .ablate_mode "$TMP/a.json")" zero
expect_eq "layer 0 (ablated) keeps its pattern" "$(jq -c '.attentions[0]' "$TMP/a.json")" "$(jq -c '.attentions[0]' "$TMP/plain.json")"
expect_eq "the tokens are the clean run's" "$(jq -c .ids "$TMP/a.json")" "$(jq -c .ids "$TMP/plain.json")"
expect_eq "surprisal_change: n - 1 values" "$(jq '(.ablation.surprisal_change | length) == (.ids | length) - 1' "$TMP/a.json")" true
expect_eq "surprisal_change = ablated - clean" \
	"$(jq -s '[range(0; .[0].surprisal | length) as $i | (.[0].surprisal[$i] - .[1].surprisal[$i] - .[0].ablation.surprisal_change[$i]) | fabs] | max < 1e-5' "$TMP/a.json" "$TMP/plain.json")" true
expect_eq "top1_changed: the positions whose best id changed" \
	"$(jq -c -s '[range(0; .[0].ids | length) as $i | select(.[0].topk[$i].ids[0] != .[1].topk[$i].ids[0]) | $i]' "$TMP/a.json" "$TMP/plain.json")" \
	"$(jq -c .ablation.top1_changed "$TMP/a.json")"
"$BIN" -m "$GPT2" --print predict --ablate 0.3 "the cat sat" >"$TMP/p.txt"
expect_eq "--print with --ablate" $? 0

# The worked example, quoted in the man page and the README to two decimals.
INDUCTION="river bread window stone seven garden horse silver morning letter music lamp river bread window stone seven garden horse silver morning letter music lamp"
"$BIN" -m "$GPT2" --dump json "$INDUCTION" >"$TMP/ind.json"
"$BIN" -m "$GPT2" --dump json --ablate 0.3 "$INDUCTION" >"$TMP/ind03.json"
clean=$(jq '.surprisal[11:23] | add / 12 * 100 | round / 100' "$TMP/ind.json")
abl=$(jq '.surprisal[11:23] | add / 12 * 100 | round / 100' "$TMP/ind03.json")
echo "worked example: demo-gpt2 induction text, repeated half: mean surprisal $clean nats, $abl with L0H3 zero-ablated"
for f in "$SRC/man/attnscope.1" "$SRC/README"; do
	tr '\n' ' ' <"$f" | grep -q "raises it to $abl nats" && ok || bad "$(basename "$f") does not quote $abl"
done

# 1. The shared reference's cases.
if [ ! -d "$REF/cases-lm" ]; then
	echo "SKIPPED: the cases-lm comparisons: no shared reference at $REF (set ATTNSCOPE_SHARED_REF)"
else
	for c in "$REF"/cases-lm/*.json; do
		name=$(basename "$c")
		dir=$(jq -r .model_dir "$c")
		case $dir in
		*/*) mdir=$REF/models/${dir##*/} ;;
		*) mdir=$SRC/models/$dir ;;
		esac
		want=$(jq -r .model_file_sha256 "$c")
		have=$(sha256sum "$mdir/model.safetensors" | cut -d' ' -f1)
		if [ "$have" != "$want" ]; then
			echo "SKIPPED: $name: $mdir/model.safetensors is not the file the case was computed from"
			continue
		fi
		text=$(jq -r .text "$c")
		"$BIN" -m "$mdir" --dump json "$text" >"$TMP/clean.json" 2>"$TMP/err" || { bad "$name: clean: $(cat "$TMP/err")"; continue; }
		for i in 0 1 2 3; do
			heads=$(jq -r ".ablation.runs[$i].heads | map(\"\(.[0]).\(.[1])\") | join(\",\")" "$c")
			for mode in zero mean; do
				if ! "$BIN" -m "$mdir" --dump json --ablate "$heads" --ablate-mode $mode "$text" >"$TMP/abl.json" 2>"$TMP/err"; then
					bad "$name run $i $mode: $(cat "$TMP/err")"
					continue
				fi
				"$PY" "$TOOLS/ref_ablate.py" case "$c" $i $mode "$TMP/abl.json" "$TMP/clean.json" && ok || bad "$name run $i $mode"
			done
		done
		"$BIN" -m "$mdir" --dump json --ablation-effect "$text" >"$TMP/eff.json" 2>"$TMP/err" &&
			"$PY" "$TOOLS/ref_ablate.py" effect "$c" "$TMP/eff.json" && ok || bad "$name: ablation_effect $(cat "$TMP/err")"
		expect_eq "$name: --ablation-effect leaves the rest as it was" \
			"$(jq -c 'del(.ablation_effect, .ablation_effect_mode)' "$TMP/eff.json")" "$(jq -c . "$TMP/clean.json")"
	done

	# 2. The numpy reference against the cases, then attnscope against the reference.
	"$PY" "$TOOLS/ref_ablate.py" verify "$REF/cases-lm" "$REF/models" "$SRC/models" >"$TMP/verify" 2>&1
	st=$?
	sed 's/^/ref_ablate.py vs the cases: /' "$TMP/verify"
	expect_eq "ref_ablate.py agrees with the cases" $st 0
	# 3. Deliberate mistakes the cases must catch.
	# (on the cases of bert-tiny and llama-tiny-gqa: their pairs span two layers, where the means differ)
	for mistake in wrong_head:bert-tiny means_of_ablated:bert-tiny means_of_ablated:llama-tiny-gqa; do
		which=${mistake#*:} mistake=${mistake%%:*}
		if "$PY" "$TOOLS/ref_ablate.py" verify "$REF/cases-lm" "$REF/models" "$SRC/models" $mistake $which >"$TMP/mistake" 2>&1; then
			bad "ref_ablate.py with the mistake $mistake still agrees with the cases"
		else
			ok
			echo "deliberate mistake $mistake caught on $which: $(grep '^worst' "$TMP/mistake")"
		fi
	done
fi
compare() { # MODEL_DIR TEXT ARGS...: attnscope's ablated dump against ref_ablate.py
	m=$1 text=$2
	shift 2
	"$BIN" -m "$m" --dump json "$@" "$text" >"$TMP/d.json" 2>"$TMP/err" || { echo "$m: $(cat "$TMP/err")"; return 1; }
	"$PY" "$TOOLS/ref_ablate.py" compare "$m" "$TMP/d.json"
}
MASK="The [MASK] sat on the [MASK] and looked out of the window."
compare "$BERT" "$MASK" --ablate 0.3,2.1 && ok || bad "demo-bert zero against ref_ablate.py"
compare "$BERT" "$MASK" --ablate 0.3,2.1 --ablate-mode mean --ablation-effect && ok || bad "demo-bert mean against ref_ablate.py"
compare "$GPT2" "$INDUCTION" --ablate 0.3 --ablate-mode mean --ablation-effect && ok || bad "demo-gpt2 mean against ref_ablate.py"
if [ -d "$REF/models" ]; then
	for m in qwen3-tiny llama-tiny-gqa gemma2-tiny; do
		compare "$REF/models/$m" "Oh, this book? I've enjoyed it." --ablate 0.1,1.2 --ablate-mode mean && ok || bad "$m against ref_ablate.py"
	done
fi

echo "ablate.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
