#!/bin/sh
# cli-words.sh -- --words, several --token and --compare through --dump and --print, on fixture
# models of each tokenizer kind (WordPiece, byte-level BPE, SentencePiece). Needs jq.
set -u
TEST_NAME=words
. "${top_srcdir:-.}/tests/lib-cli.sh" # BIN SRC REF PY TOOLS TMP, ok/bad, expect_eq/_grep/_nogrep
M=$SRC/tests/data/models
command -v jq >/dev/null || { echo "cli-words.sh: jq is required"; exit 99; }
TEXT="The capybara was playing"

# --dump json --words: words, pieces and the map; rows sum to 1; csv names words.
for case in "bert-mini:[CLS] the capybara was playing [SEP]:0 1 2 2 2 3 4 5" \
	    "gpt2-mini:The capybara was playing:0 1 1 1 2 3" \
	    "llama-gqa:<s> The capybara was playing:0 1 2 2 2 2 2 2 3 4 4 4 4"; do
	model=${case%%:*} rest=${case#*:}
	words=${rest%%:*} map=${rest#*:}
	"$BIN" -m "$M/$model" --dump json --words "$TEXT" >"$TMP/w.json" 2>"$TMP/err"
	expect_eq "$model --words status" $? 0
	expect_eq "$model words" "$(jq -r '.words | join(" ")' "$TMP/w.json")" "$words"
	expect_eq "$model tokens are the words" "$(jq -c .tokens "$TMP/w.json")" "$(jq -c .words "$TMP/w.json")"
	expect_eq "$model piece_word" "$(jq -r '.piece_word | map(tostring) | join(" ")' "$TMP/w.json")" "$map"
	"$BIN" -m "$M/$model" --dump json "$TEXT" >"$TMP/p.json"
	expect_eq "$model pieces" "$(jq -c .pieces "$TMP/w.json")" "$(jq -c .tokens "$TMP/p.json")"
	expect_eq "$model rows sum to 1" \
		"$(jq '[.attentions[][][] | add | . - 1 | fabs] | max < 1e-5' "$TMP/w.json")" true
done
# The families without a fixture here, from the shared reference models when present: every
# family's tokenizer marks words (ELECTRA's WordPiece without any "##" piece, ModernBERT's 'Ġ').
REF=${ATTNSCOPE_SHARED_REF:-$SRC/../shared/reference}/models
for model in electra-tiny distilbert-tiny modernbert-tiny gemma3-tiny gemma-tiny mistral-tiny phi3-tiny neox-tiny; do
	[ -f "$REF/$model/config.json" ] || continue
	"$BIN" -m "$REF/$model" --dump json --words "the cat sat on the mat" >"$TMP/w.json" 2>/dev/null
	expect_eq "$model words" "$(jq -r '[.words[] | select(test("^(\\[|<)") | not)] | join(" ")' "$TMP/w.json")" \
		"the cat sat on the mat"
done
"$BIN" -m "$M/gpt2-mini" --dump csv --words --layer 0 --head 0 "$TEXT" >"$TMP/w.csv"
expect_eq "csv --words rows" "$(tail -n +2 "$TMP/w.csv" | wc -l)" 16
expect_grep "csv --words names words" "$TMP/w.csv" ",playing,capybara,"

# --print VIEW --words: the header counts words, the strip shows them.
for view in grid heatmap heads rollout headview; do
	"$BIN" -m "$M/gpt2-mini" --print $view --words --width 100 "$TEXT" >"$TMP/out" 2>&1
	expect_eq "--print $view --words status" $? 0
	expect_grep "--print $view --words header" "$TMP/out" "· 4 words ·"
	expect_grep "--print $view --words strip" "$TMP/out" "^The  *capybara  *was  *playing"
done
"$BIN" -m "$M/gpt2-mini" --print heatmap --words --token 4 "$TEXT" >"$TMP/out" 2>&1
expect_eq "--token past the words" $? 1
expect_grep "--token past the words" "$TMP/out" "the text 4 tokens"

# Several tokens: --token A,B marks both; the heatmap panel sums their rows and columns, the head
# view combines them; as --dump csv says.
CSV=$("$BIN" -m "$M/gpt2-mini" --dump csv --layer 1 --head 1 "$TEXT")
"$BIN" -m "$M/gpt2-mini" --print heatmap --token 1,3 --layer 1 --head 1 --width 100 "$TEXT" >"$TMP/out" 2>&1
expect_eq "--token 1,3 status" $? 0
expect_grep "--token 1,3 header" "$TMP/out" "combined: cap + ·bara"
want=$(echo "$CSV" | awk -F, '($3 == 1 || $3 == 3) && $4 == 0 { s += $NF } END { printf "%.6f", s }')
got=$(awk '/attend to \(sum of 2 rows\)/ { f = 1 } f && /[0-9]\. [0-9.]+  The$/ { print $(NF - 1); exit }' "$TMP/out")
expect_eq "combined row sum on The" "$got" "$want"
want=$(echo "$CSV" | awk -F, '$3 == 5 && ($4 == 1 || $4 == 3) { s += $NF } END { printf "%.6f", s }')
got=$(awk '/who attends to/ { f = 1 } f && /[0-9]\. [0-9.]+  playing$/ { print $(NF - 1); exit }' "$TMP/out")
expect_eq "combined column sum of playing" "$got" "$want"
"$BIN" -m "$M/gpt2-mini" --print headview --token 1,3 --layer 1 --head 1 --width 100 "$TEXT" >"$TMP/out" 2>&1
expect_grep "head view combined" "$TMP/out" "given by cap + ·bara (2 tokens combined)"
"$BIN" -m "$M/gpt2-mini" --print vectors --token 1,3 --width 100 "$TEXT" >"$TMP/out" 2>&1
expect_grep "vectors combined" "$TMP/out" "A = cap + ·bara (2 combined: rows summed)"
"$BIN" -m "$M/gpt2-mini" --print heatmap --words --token 1,2 --width 100 "$TEXT" >"$TMP/out" 2>&1
expect_grep "--words --token 1,2" "$TMP/out" "combined: capybara + was"
"$BIN" -m "$M/gpt2-mini" --print heatmap --token 1,9 "$TEXT" >"$TMP/out" 2>&1
expect_eq "--token past the end status" $? 1
expect_grep "--token past the end" "$TMP/out" "no token 9"
"$BIN" -m "$M/gpt2-mini" --print heatmap --token 1,x "$TEXT" >"$TMP/out" 2>&1
expect_eq "--token 1,x status" $? 2

# Two texts: --compare through --dump (changed = the total variation jq computes from the two
# attentions) and --print (B - A, the "changed" score, side by side when the lengths differ).
A="The trophy didn't fit in the suitcase because it was too big"
B="The trophy didn't fit in the suitcase because it was too small"
# (the random-weight fixtures' small vocabularies split "big" and "small" unevenly: --words evens them)
for case in bert-mini: gpt2-mini: llama-gqa:--words qwen2-bias:--words; do
	model=${case%%:*} words=${case#*:}
	"$BIN" -m "$M/$model" --dump json $words --compare "$B" "$A" >"$TMP/c.json" 2>"$TMP/err"
	expect_eq "$model --compare status" $? 0
	expect_eq "$model compare tokens" "$(jq '.compare.tokens | length' "$TMP/c.json")" "$(jq '.tokens | length' "$TMP/c.json")"
	expect_eq "$model changed = TV" "$(jq '[range(.model.layers) as $l | range(.model.heads) as $h |
		(.attentions[$l][$h]) as $a | (.compare.attentions[$l][$h]) as $b |
		([range($a | length) as $i | [range($a | length) as $j | ($a[$i][$j] - $b[$i][$j]) | fabs] | add / 2] | add / length)
		- .compare.changed[$l][$h] | fabs] | max < 1e-6' "$TMP/c.json")" true
done
"$BIN" -m "$M/gpt2-mini" --dump csv --compare "$B" --layer 0 --head 0 "$A" >"$TMP/c.csv"
expect_eq "csv --compare header" "$(head -1 "$TMP/c.csv")" "layer,head,query_index,key_index,query_token,key_token,weight,weight_b,difference"
expect_eq "csv difference = weight_b - weight" "$(tail -n +2 "$TMP/c.csv" |
	awk -F, '{ d = $8 - $7 - $9; if (d < 0) d = -d; if (d > m) m = d } END { print (m < 1e-6) ? "ok" : m }')" ok
"$BIN" -m "$M/bert-mini" --dump json --words --compare "$B" "$A" >"$TMP/c.json"
expect_eq "--words --compare" "$(jq -r '.compare.tokens[-2]' "$TMP/c.json")" small
"$BIN" -m "$M/gpt2-mini" --print grid --compare "$B" --width 100 "$A" >"$TMP/out" 2>&1
expect_grep "--print grid --compare" "$TMP/out" "B - A over 13 matching rows"
expect_grep "--print grid --compare strip" "$TMP/out" "^compared with (B, 13 tokens; same length"
"$BIN" -m "$M/gpt2-mini" --print heatmap --compare "$B" --token 12 --width 100 "$A" >"$TMP/out" 2>&1
expect_grep "--print heatmap --compare" "$TMP/out" "B - A (second text minus first) on ±"
# The diverging ramp ends at the largest |B - A| (the grid: over every head; the heatmap: its head), as
# jq finds it in --dump json; --diff-scale fixed puts them back at -1 and +1.
"$BIN" -m "$M/gpt2-mini" --dump json --compare "$B" "$A" >"$TMP/c.json"
largest() { jq -r "[$1] | map(fabs) | max" "$TMP/c.json" | awk '{ printf "%.2g", $1 }'; }
grid_max=$(largest '.compare.attentions as $b | .attentions | paths(numbers) as $p | ($b | getpath($p)) - getpath($p)')
head_max=$(largest '.compare.attentions[1][0] as $b | .attentions[1][0] | paths(numbers) as $p | ($b | getpath($p)) - getpath($p)')
"$BIN" -m "$M/gpt2-mini" --print grid --compare "$B" --width 200 --color never "$A" >"$TMP/out" 2>&1
expect_grep "grid ramp = largest |B - A| ($grid_max)" "$TMP/out" "ramp ±$grid_max (largest change)  B - A -$grid_max .* +$grid_max\$"
"$BIN" -m "$M/gpt2-mini" --print heatmap --layer 1 --head 0 --compare "$B" --width 200 "$A" >"$TMP/out" 2>&1
expect_grep "heatmap ramp = its head's largest |B - A| ($head_max)" "$TMP/out" "B - A (second text minus first) on ±$head_max (largest change)"
"$BIN" -m "$M/gpt2-mini" --print grid --diff-scale fixed --compare "$B" --width 200 --color never "$A" >"$TMP/out" 2>&1
expect_grep "--diff-scale fixed" "$TMP/out" "ramp ±1 (fixed)  B - A -1 .* +1\$"
"$BIN" -m "$M/gpt2-mini" --print grid --diff-scale half --compare "$B" "$A" >"$TMP/out" 2>&1
expect_eq "--diff-scale half status" $? 2
expect_grep "--diff-scale half" "$TMP/out" "is not one of largest, fixed"
"$BIN" -m "$M/gpt2-mini" --print heads --sort changed --compare "$B" --width 100 "$A" >"$TMP/out" 2>&1
expect_grep "--print heads --sort changed" "$TMP/out" "sorted by changed, largest first"
"$BIN" -m "$M/gpt2-mini" --print heatmap --compare "The trophy was small" --width 100 "$A" >"$TMP/out" 2>&1
expect_grep "--compare different lengths" "$TMP/out" "A (13 tokens) and B (4 tokens) side by side"
"$BIN" -m "$M/gpt2-mini" --print grid --compare "The trophy was small" --width 100 "$A" >"$TMP/out" 2>&1
expect_grep "--compare different lengths: grid" "$TMP/out" "B - A over 2 common-prefix rows"

echo "cli-words.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
