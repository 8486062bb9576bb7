#!/bin/sh
# valuenorm.sh -- value-weighted attention (Kobayashi et al. 2020; --weights norm, analysis/valnorm.h)
# against the shared cases-lm (value_vector_norms ‖f_h(x_j)‖ and value_norms ‖α_ij f_h(x_j)‖, the
# shared reference README's definition) through `attnscope --dump json`, and the independent numpy
# reference of tests/tools/check_valuenorm.py against the same cases, with two deliberate mistakes
# it must catch. The fixture models check what needs no shared reference: the option's errors,
# the dumps without it unchanged, a compact trace refused in one line. Needs jq; the shared parts
# need ATTNSCOPE_SHARED_REF (or ../shared/reference) and numpy in /usr/bin/python3.
set -u
TEST_NAME=vnorm
. "${top_srcdir:-.}/tests/lib-cli.sh" # BIN SRC REF PY TOOLS TMP, ok/bad, expect_eq/_grep/_nogrep
M=$SRC/tests/data/models
PY=${ATTNSCOPE_PYTHON:-/usr/bin/python3}
CHECK=$SRC/tests/tools/check_valuenorm.py
command -v jq >/dev/null || { echo "valuenorm.sh: jq is required"; exit 99; }
TEXT="The capybara was playing"

# The option: a bad mode is one line and exit 2; without it the dump carries α and no new key.
"$BIN" -m "$M/bert-mini" --dump json --weights sizes "$TEXT" >"$TMP/out" 2>&1
expect_eq "--weights sizes status" $? 2
expect_eq "--weights sizes one line" "$(wc -l <"$TMP/out")" 1
expect_grep "--weights sizes names the choices" "$TMP/out" "norm"
for model in bert-mini gpt2-mini llama-gqa; do
	"$BIN" -m "$M/$model" --dump json "$TEXT" >"$TMP/a.json"
	"$BIN" -m "$M/$model" --dump json --weights attention "$TEXT" >"$TMP/a2.json"
	expect_eq "$model --weights attention = default" "$(cmp -s "$TMP/a.json" "$TMP/a2.json" && echo same)" same
	expect_eq "$model no weights key by default" "$(jq 'has("weights") or has("value_vector_norms")' "$TMP/a.json")" false
	"$BIN" -m "$M/$model" --dump json --weights norm "$TEXT" >"$TMP/n.json"
	expect_eq "$model --weights norm status" $? 0
	# attentions = α_ij · ‖f_h(x_j)‖ exactly as float32 products, with the dump's own α and norms
	expect_eq "$model norm = α · ‖f‖" "$(jq -s '.[0].attentions as $a | .[1].value_vector_norms as $f
		| [.[1].attentions | to_entries[] | .key as $l | .value | to_entries[] | .key as $h | .value
		   | to_entries[] | .key as $i | .value | to_entries[] | .key as $j
		   | (.value - $a[$l][$h][$i][$j] * $f[$l][$h][$j]) | fabs] | max < 1e-6' "$TMP/a.json" "$TMP/n.json")" true
	expect_eq "$model norms positive" "$(jq '[.value_vector_norms[][][]] | min > 0' "$TMP/n.json")" true
	# --words merges the raw norms (summed over a word's pieces) and still says which weights
	"$BIN" -m "$M/$model" --dump json --weights norm --words "$TEXT" >"$TMP/w.json"
	expect_eq "$model --words --weights norm" "$(jq -r .weights "$TMP/w.json")" norm
done
# --print: the views read the weights shared out per row, and the header says which weights.
for view in grid heatmap heads rollout headview; do
	"$BIN" -m "$M/bert-mini" --print $view --width 100 --token 2 "$TEXT" >"$TMP/a.txt"
	"$BIN" -m "$M/bert-mini" --print $view --weights norm --width 100 --token 2 "$TEXT" >"$TMP/n.txt"
	expect_eq "--print $view --weights norm status" $? 0
	expect_grep "--print $view --weights norm header" "$TMP/n.txt" "^bert-mini · bert · .* · weights ‖α·f(x)‖$"
	expect_eq "--print $view: α says nothing new" "$(grep -c 'weights ‖' "$TMP/a.txt")" 0
	expect_eq "--print $view: the weights differ" "$(cmp -s "$TMP/a.txt" "$TMP/n.txt" || echo differ)" differ
done
# the heatmap cell is the share of its row (rows sum to 1), the panel the raw norm
"$BIN" -m "$M/bert-mini" --dump json --weights norm --layer 1 --head 1 "$TEXT" >"$TMP/n.json"
"$BIN" -m "$M/bert-mini" --print heatmap --weights norm --layer 1 --head 1 --token 3 --width 100 "$TEXT" >"$TMP/h.txt"
row_max=$(jq '.attentions[0][0][3] | (max / add) * 1e6 | round' "$TMP/n.json")
expect_eq "heatmap top key share" "$(sed -n 's/.*   1\. \([0-9.]*\)  .*/\1/p' "$TMP/h.txt" | head -1 | awk '{ printf "%d", $1 * 1e6 + 0.5 }')" "$row_max"

# A corpus aggregate keeps α only: refused in one line.
printf 'The capybara was playing\n' >"$TMP/corpus.txt"
"$BIN" -m "$M/bert-mini" --corpus "$TMP/corpus.txt" --print heads --weights norm >"$TMP/out" 2>&1
expect_eq "--corpus --weights norm status" $? 2
expect_eq "--corpus --weights norm one line" "$(wc -l <"$TMP/out")" 1
expect_grep "--corpus --weights norm says why" "$TMP/out" "applies to one text"

# A long text's compact trace keeps no n x n matrices: refused in one line, not computed wrong.
ATTNSCOPE_TRACE_BUDGET=1 "$BIN" -m "$M/gpt2-mini" --dump json --weights norm "$TEXT" >"$TMP/out" 2>&1
expect_eq "compact trace status" $? 1
expect_eq "compact trace one line" "$(wc -l <"$TMP/out")" 1
expect_grep "compact trace says why" "$TMP/out" "value-weighted attention needs every head's matrix"

if [ ! -d "$REF/cases-lm" ]; then
	echo "SKIPPED the shared cases: no $REF/cases-lm (set ATTNSCOPE_SHARED_REF)"
elif ! "$PY" -c "import numpy" 2>/dev/null; then
	echo "SKIPPED the shared cases: $PY has no numpy"
else
	for c in "$REF"/cases-lm/*.json; do
		name=$(basename "$c" .json) model=${name%%--*}
		dir=$REF/models/$model
		[ -d "$dir" ] || dir=$SRC/models/$(jq -r .model_dir "$c") # the bundled demo models
		"$BIN" -m "$dir" --dump json --weights norm -- "$(jq -r .text "$c")" >"$TMP/d.json" 2>"$TMP/err"
		expect_eq "$name dump status" $? 0
		# The cases name the file they ran; a file rewritten since (demo-bert's output head) applies
		# when its encoder gives the case's α.
		want=$(jq -r '.model_file_sha256 // empty' "$c")
		got=$(sha256sum "$dir/model.safetensors" 2>/dev/null | cut -d' ' -f1)
		if [ -n "$want" ] && [ "$want" != "$got" ] && ! "$PY" "$CHECK" samealpha "$c" "$TMP/d.json"; then
			echo "SKIPPED $name: $dir/model.safetensors is not the file the case ran ($want)"
			continue
		fi
		if "$PY" "$CHECK" dump "$c" "$TMP/d.json"; then ok; else bad "$name: attnscope vs the case"; fi
		if "$PY" "$CHECK" ref "$c" "$dir"; then ok; else bad "$name: the numpy reference vs the case"; fi
	done
	# The families without a case (latent attention's narrower v, gpt-oss's sinks, fused and per-head
	# q/k/v, ALBERT's shared layers, MQA): attnscope against the numpy reference alone.
	for model in deepseekv3-tiny gptoss-tiny falcon-tiny neox-tiny bloom-tiny llama-tiny-mqa albert-tiny \
		     distilbert-tiny modernbert-tiny deberta-v3-tiny xlmr-tiny gemma3-tiny mixtral-tiny phi-tiny; do
		[ -f "$REF/models/$model/config.json" ] || continue
		"$BIN" -m "$REF/models/$model" --dump json --weights norm "Oh, this book? I've enjoyed it." >"$TMP/d.json"
		expect_eq "$model dump status" $? 0
		if "$PY" "$CHECK" family "$TMP/d.json" "$REF/models/$model"; then ok; else bad "$model vs the numpy reference"; fi
	done
	# The deliberate mistakes: each must miss the cases by far more than the tolerance (the check
	# prints by how much: 0.3 to 0.8 relative).
	for mc in out_bias:bert-tiny--lm-mask out_bias:gpt2-tiny--lm-book next_head_rows:gpt2-tiny--lm-book \
		  kv_modulo:llama-tiny-gqa--lm-book; do
		mistake=${mc%%:*} name=${mc#*:}
		[ -f "$REF/cases-lm/$name.json" ] || continue
		if "$PY" "$CHECK" ref "$REF/cases-lm/$name.json" "$REF/models/${name%%--*}" "$mistake" >"$TMP/m"; then
			bad "the mistake $mistake passed on $name: $(cat "$TMP/m")"
		else
			ok
			echo "caught, as it must be: $(cat "$TMP/m")"
		fi
	done
fi
echo "valuenorm.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
