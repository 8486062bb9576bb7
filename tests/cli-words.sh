#!/bin/sh
# cli-words.sh -- --words, several --token and --compare through --dump and --print, on fixture
# models of each tokenizer kind (WordPiece, byte-level BPE, SentencePiece). Needs jq.
set -u
BIN=${ATTNSCOPE_BIN:-./attnscope}
SRC=${top_srcdir:-.}
M=$SRC/tests/data/models
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnscope-words-XXXXXX")
trap 'rm -rf "$TMP"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
expect_eq() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }
expect_grep() { if grep -q -- "$3" "$2"; then ok; else bad "$1: '$3' not in: $(head -c 300 "$2")"; fi; }
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

echo "cli-words.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
