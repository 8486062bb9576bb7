#!/bin/sh
# encdec-views.sh -- --print --stack on the committed encoder-decoder fixtures (issue 21, views slice):
# the heatmap of the decoder's self-attention and of the cross-attention (target rows, source columns)
# gives, in its panel, the weights --dump json has in decoder.attentions and decoder.cross_attentions
# (the selected cell and the query's whole ranked row), as --dump csv --stack does (every weight); the
# grid names the stack; views that cannot show cross-attention, a model that is not an encoder-decoder,
# and --stack with --dump json each give one line and a usage or runtime status; without --stack the
# output is --stack encoder's. Needs jq.
set -u
TEST_NAME=encdec-views
. "${top_srcdir:-.}/tests/lib-cli.sh" # BIN SRC REF PY TOOLS TMP, ok/bad, expect_eq/_grep/_nogrep
M=$SRC/tests/data/models
export LC_ALL=C.UTF-8 XDG_CONFIG_HOME="$TMP/no-config"
command -v jq >/dev/null || { echo "encdec-views.sh: jq is required"; exit 99; }
[ -f "$M/bart-encdec/config.json" ] && [ -f "$M/t5-encdec/config.json" ] || { echo "encdec fixtures missing"; exit 77; }
TEXT="hello world there"
TARGET="the cat sat"

# The panel's weight and its ranked row ("N. 0.xxxxxx  token") against the dump, for every query row.
for model in bart-encdec t5-encdec; do
	"$BIN" -m "$M/$model" --dump json --top-k 0 --target "$TARGET" "$TEXT" >"$TMP/d.json" || bad "$model: --dump json"
	n=$(jq '.decoder.ids | length' "$TMP/d.json")
	[ "$n" -ge 3 ] && ok || bad "$model: decoder has $n tokens"
	for stack in decoder cross; do
		field=$([ $stack = cross ] && echo cross_attentions || echo attentions)
		for l in 0 1; do
			h=$((l % 2))
			r=0
			while [ $r -lt "$n" ]; do
				"$BIN" -m "$M/$model" --print heatmap --stack $stack --layer $l --head $h --token $r --width 160 \
					--color never --target "$TARGET" "$TEXT" >"$TMP/p" 2>"$TMP/e"
				expect_eq "$model $stack L$l H$h row $r status" $? 0
				c=$(sed -n 's/.*key   \([0-9]*\) .*/\1/p' "$TMP/p" | head -1)
				got=$(sed -n 's/.*weight     \([0-9.]*\).*/\1/p' "$TMP/p" | head -1)
				want=$(jq -r --argjson l $l --argjson h $h --argjson r $r --argjson c "${c:-0}" \
					".decoder.$field[\$l][\$h][\$r][\$c]" "$TMP/d.json" | awk '{ printf "%.6f", $1 }')
				expect_eq "$model $stack L$l H$h q$r k$c weight" "$got" "$want"
				# the ranked row: every key the query sees (the decoder's causal row stops at r)
				got=$(sed -n '/top keys of/,$p' "$TMP/p" | grep -o ' [0-9]*\. [0-9]\.[0-9]\{6\}' | awk '{ print $2 }' | sort | tr '\n' ' ')
				want=$(jq -r --argjson l $l --argjson h $h --argjson r $r --arg s $stack \
					".decoder.$field[\$l][\$h][\$r] | to_entries | map(select(\$s == \"cross\" or .key <= \$r)) | .[].value" \
					"$TMP/d.json" | awk '{ printf "%.6f\n", $1 }' | sort | tr '\n' ' ')
				expect_eq "$model $stack L$l H$h row $r ranked" "$got" "$want"
				r=$((r + 1))
			done
		done
	done
	# --dump csv --stack: every weight is the JSON's, the key tokens the source's under cross-attention
	for stack in decoder cross; do
		field=$([ $stack = cross ] && echo cross_attentions || echo attentions)
		"$BIN" -m "$M/$model" --dump csv --stack $stack --target "$TARGET" "$TEXT" >"$TMP/c.csv"
		expect_eq "$model --dump csv --stack $stack status" $? 0
		got=$(awk -F, 'NR > 1 { printf "%d %d %d %d %.6f\n", $1, $2, $3, $4, $NF }' "$TMP/c.csv" | md5sum)
		want=$(jq -r ".decoder.$field | to_entries[] | .key as \$l | .value | to_entries[] | .key as \$h | .value |
			to_entries[] | .key as \$i | .value | to_entries[] | \"\(\$l) \(\$h) \(\$i) \(.key) \(.value)\"" "$TMP/d.json" |
			awk '{ printf "%d %d %d %d %.6f\n", $1, $2, $3, $4, $5 }' | md5sum)
		expect_eq "$model --dump csv --stack $stack weights" "$got" "$want"
		rows=$(jq "[.decoder.$field[][][][]] | length" "$TMP/d.json")
		[ "$rows" -gt 0 ] && [ "$(($(wc -l <"$TMP/c.csv") - 1))" -eq "$rows" ] && ok || bad "$model csv $stack: $rows weights"
	done
	keys=$(awk -F, 'NR > 1 && $1 == 0 && $2 == 0 && $3 == 0 { printf "%s|", $6 }' "$TMP/c.csv")
	expect_eq "$model --dump csv --stack cross key tokens" "$keys" "$(jq -r '.tokens | map(. + "|") | add' "$TMP/d.json")"
	# the header and the titles say which stack is shown
	"$BIN" -m "$M/$model" --print heatmap --stack cross --width 160 --color never --target "$TARGET" "$TEXT" >"$TMP/p"
	expect_grep "$model cross header" "$TMP/p" "cross-attention: target rows × source columns"
	"$BIN" -m "$M/$model" --print grid --stack cross --width 160 --color never --target "$TARGET" "$TEXT" >"$TMP/p"
	expect_eq "$model grid cross status" $? 0
	expect_grep "$model grid cross title" "$TMP/p" "cross-attention: target rows × $(jq '.ids | length' "$TMP/d.json") source columns"
	"$BIN" -m "$M/$model" --print grid --stack decoder --width 160 --color never --target "$TARGET" "$TEXT" >"$TMP/p"
	expect_grep "$model grid decoder header" "$TMP/p" "decoder self-attention · $n tokens"
	# the default is the encoder, as before
	"$BIN" -m "$M/$model" --print heatmap --width 160 --color never --target "$TARGET" "$TEXT" >"$TMP/a"
	"$BIN" -m "$M/$model" --print heatmap --stack encoder --width 160 --color never --target "$TARGET" "$TEXT" >"$TMP/b"
	cmp -s "$TMP/a" "$TMP/b" && ok || bad "$model: --stack encoder differs from the default"
	if grep -q "self-attention\|cross-attention" "$TMP/a"; then bad "$model: the encoder's header names a stack"; else ok; fi
	# without a target the decoder reads its start token alone: one row, every source column
	"$BIN" -m "$M/$model" --print heatmap --stack cross --width 160 --color never "$TEXT" >"$TMP/p"
	expect_grep "$model cross without a target" "$TMP/p" "· 1 tokens ·"
	# decoder self-attention: every view prints (or, for the model's head, says it has none)
	for v in grid heatmap heads qk rollout headview neuron vectors qkstats dots softmax; do
		"$BIN" -m "$M/$model" --print $v --stack decoder --width 120 --color never --target "$TARGET" "$TEXT" >"$TMP/p" 2>&1
		expect_eq "$model --print $v --stack decoder status" $? 0
		expect_grep "$model --print $v --stack decoder header" "$TMP/p" "decoder self-attention"
	done
done

# refusals: one line on stderr
one_line() { # NAME STATUS WANT_STATUS PATTERN FILE
	if [ "$2" -eq "$3" ] && [ "$(wc -l <"$5")" -eq 1 ] && grep -q -- "$4" "$5"; then ok; else bad "$1: status $2, stderr: $(cat "$5")"; fi
}
"$BIN" -m "$M/bart-encdec" --print qk --stack cross --target "$TARGET" "$TEXT" >/dev/null 2>"$TMP/e"
one_line "qk --stack cross" $? 1 "cannot show cross-attention (grid, heatmap, heads and headview can)" "$TMP/e"
"$BIN" -m "$M/llama-gqa" --print heatmap --stack decoder "$TEXT" >/dev/null 2>"$TMP/e"
one_line "--stack decoder on llama" $? 1 "not an encoder-decoder model" "$TMP/e"
"$BIN" -m "$M/llama-gqa" --print grid --stack cross "$TEXT" >/dev/null 2>"$TMP/e"
one_line "--stack cross on llama" $? 1 "not an encoder-decoder model" "$TMP/e"
"$BIN" -m "$M/bart-encdec" --print heatmap --stack sideways "$TEXT" >/dev/null 2>"$TMP/e"
one_line "--stack sideways" $? 2 "is not one of encoder, decoder, cross" "$TMP/e"
"$BIN" -m "$M/bart-encdec" --dump json --stack cross "$TEXT" >/dev/null 2>"$TMP/e"
one_line "--stack with --dump" $? 2 "applies to --print" "$TMP/e"
"$BIN" -m "$M/bart-encdec" --dump csv --stack cross --weights norm "$TEXT" >/dev/null 2>"$TMP/e"
one_line "--dump csv --stack with --weights norm" $? 2 "not with --weights norm" "$TMP/e"
"$BIN" -m "$M/llama-gqa" --dump csv --stack cross "$TEXT" >/dev/null 2>"$TMP/e"
one_line "--dump csv --stack cross on llama" $? 1 "not an encoder-decoder model" "$TMP/e"
"$BIN" -m "$M/bart-encdec" --print heatmap --stack cross --weights norm "$TEXT" >/dev/null 2>"$TMP/e"
one_line "--stack with --weights norm" $? 1 "--weights norm" "$TMP/e"
"$BIN" -m "$M/bart-encdec" --print heatmap --stack decoder --token 9 "$TEXT" >/dev/null 2>"$TMP/e"
one_line "--stack decoder --token past the decoder's tokens" $? 1 "no token 9" "$TMP/e"

echo "encdec-views.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
