#!/bin/sh
# encdec-words.sh -- an encoder-decoder's words, several tokens and minimal pairs on either side (issue 21), on
# the committed fixtures (bart-encdec: byte-level BPE, t5-encdec: SentencePiece):
#  1. --words: --dump json's decoder words (piece_word, attentions, cross_attentions) and --dump csv --words
#     --stack decoder|cross against tests/tools/ref_words_encdec.py, a numpy replay of the merge from the
#     --dump json of pieces (target words down, source words across); --print heatmap --stack decoder|cross
#     --words ranks each row's weights as the replay does.
# Needs jq and /usr/bin/python3 with numpy.
set -u
TEST_NAME=encdec-words
. "${top_srcdir:-.}/tests/lib-cli.sh" # BIN SRC REF PY TOOLS TMP, ok/bad, expect_eq/_grep/_nogrep
M=$SRC/tests/data/models
export LC_ALL=C.UTF-8 XDG_CONFIG_HOME="$TMP/no-config"
command -v jq >/dev/null || { echo "encdec-words.sh: jq is required"; exit 99; }
"$PY" -c 'import numpy' 2>/dev/null || { echo "SKIP: encdec-words.sh needs $PY with numpy"; exit 77; }
[ -f "$M/bart-encdec/config.json" ] && [ -f "$M/t5-encdec/config.json" ] || { echo "encdec fixtures missing"; exit 77; }
TEXT="hello world there"
TARGET="the cat sat downward" # words of several pieces on both sides

# 1. Words.
for model in bart-encdec t5-encdec; do
	run() { "$BIN" -m "$M/$model" --target "$TARGET" "$@" "$TEXT"; }
	run --dump json --top-k 0 >"$TMP/p.json" && run --dump json --top-k 0 --words >"$TMP/w.json" &&
		run --dump csv --words --stack decoder >"$TMP/d.csv" && run --dump csv --words --stack cross >"$TMP/c.csv"
	expect_eq "$model: dumps with --words" $? 0
	"$PY" "$TOOLS/ref_words_encdec.py" check "$TMP/p.json" "$TMP/w.json" "$TMP/d.csv" "$TMP/c.csv" >"$TMP/r" 2>&1 &&
		ok || bad "$model: $(cat "$TMP/r")"
	nd=$(jq '.decoder.tokens | length' "$TMP/w.json")
	[ "$nd" -lt "$(jq '.decoder.pieces | length' "$TMP/w.json")" ] && [ "$(jq '.words | length' "$TMP/w.json")" -lt \
		"$(jq '.pieces | length' "$TMP/w.json")" ] && ok || bad "$model: no word of several pieces on each side"
	expect_eq "$model: the labels stay the pieces'" "$(jq -c .decoder.labels "$TMP/w.json")" "$(jq -c .decoder.labels "$TMP/p.json")"
	expect_eq "$model: csv key tokens under cross are the source words" \
		"$(awk -F, 'NR > 1 && $1 == 0 && $2 == 0 && $3 == 0 { printf "%s|", $6 }' "$TMP/c.csv")" \
		"$(jq -r '.words | map(. + "|") | add' "$TMP/w.json")"
	for stack in decoder cross; do
		r=0
		while [ $r -lt "$nd" ]; do
			run --print heatmap --stack $stack --words --layer 1 --head 1 --token $r --width 160 --color never >"$TMP/o" 2>&1
			expect_eq "$model --print heatmap --stack $stack --words --token $r status" $? 0
			got=$(sed -n '/top keys of/,$p' "$TMP/o" | grep -o ' [0-9]*\. [0-9]\.[0-9]\{6\}' | awk '{ print $2 }' | sort | tr '\n' ' ')
			want=$("$PY" "$TOOLS/ref_words_encdec.py" row "$TMP/p.json" $stack 1 1 $r | sort | tr '\n' ' ')
			expect_eq "$model $stack words row $r ranked" "$got" "$want"
			r=$((r + 1))
		done
		expect_grep "$model --stack $stack --words header" "$TMP/o" "· $nd words ·"
	done
done
"$BIN" -m "$M/llama-gqa" --dump csv --words --stack decoder "$TEXT" >/dev/null 2>"$TMP/e"
expect_eq "--words --stack decoder on llama status" $? 1
expect_grep "--words --stack decoder on llama" "$TMP/e" "not an encoder-decoder model"

echo "encdec-words.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
