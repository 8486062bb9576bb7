#!/bin/sh
# encdec-words.sh -- an encoder-decoder's words, several tokens and minimal pairs on either side (issue 21), on
# the committed fixtures (bart-encdec: byte-level BPE, t5-encdec: SentencePiece):
#  1. --words: --dump json's decoder words (piece_word, attentions, cross_attentions) and --dump csv --words
#     --stack decoder|cross against tests/tools/ref_words_encdec.py, a numpy replay of the merge from the
#     --dump json of pieces (target words down, source words across); --print heatmap --stack decoder|cross
#     --words ranks each row's weights as the replay does.
#  2. several tokens, 3. minimal pairs: see below.
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
close_to() { # NAME GOT WANT: two sorted lists of weights, equal within 2e-6 (float32 sums against float64)
	if [ "$(echo "$2" | wc -w)" -eq "$(echo "$3" | wc -w)" ] && [ "$(echo "$2" | wc -w)" -gt 0 ] &&
		printf '%s\n%s\n' "$2" "$3" | awk 'NR == 1 { for (i = 1; i <= NF; i++) a[i] = $i; next }
			{ for (i = 1; i <= NF; i++) if ((a[i] - $i) > 2e-6 || ($i - a[i]) > 2e-6) exit 1 }'; then
		ok
	else
		bad "$1: got '$2', want '$3'"
	fi
}
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
			close_to "$model $stack words row $r ranked" "$got" "$want" # printed to 6 decimals: a last digit may differ
			r=$((r + 1))
		done
		expect_grep "$model --stack $stack --words header" "$TMP/o" "· $nd words ·"
	done
done
# 2. Several tokens: --token A,B under --stack decoder|cross marks the decoder's tokens (its words with --words);
#    the heatmap panel sums their rows -- and, under decoder, their columns; under cross the columns are the
#    source's, so none -- as --dump json's decoder.attentions / cross_attentions (the replay's words) add up.
ranked() { # FILE TITLE: the weights ranked under the panel line TITLE (up to the next title), sorted
	awk -v t="$2" 'index($0, t) { f = 1; next } f && /who attends to|top keys of/ { exit }
		f { while (match($0, / [0-9]+\. [0-9]\.[0-9]+/)) { s = substr($0, RSTART, RLENGTH); sub(/.*\. /, "", s)
			print s; $0 = substr($0, RSTART + RLENGTH) } }' "$1" | sort -g | tr '\n' ' '
}
for model in bart-encdec t5-encdec; do
	run() { "$BIN" -m "$M/$model" --target "$TARGET" "$@" "$TEXT"; }
	run --dump json --top-k 0 >"$TMP/p.json"
	for stack in decoder cross; do
		field=$([ $stack = cross ] && echo cross_attentions || echo attentions)
		run --print heatmap --stack $stack --token 1,3 --layer 1 --head 0 --width 160 --color never >"$TMP/o" 2>&1
		expect_eq "$model --stack $stack --token 1,3 status" $? 0
		expect_grep "$model --stack $stack --token 1,3 header" "$TMP/o" "combined: "
		want=$(jq -r ".decoder.$field[1][0] | [.[1], .[3]] | transpose | map(add) | .[]" "$TMP/p.json" | sort -g | tr '\n' ' ')
		close_to "$model $stack rows 1+3 summed" "$(ranked "$TMP/o" "attend to (sum of 2 rows)")" "$want"
		if [ $stack = decoder ]; then
			want=$(jq -r ".decoder.$field[1][0] | map(.[1] + .[3]) | .[]" "$TMP/p.json" | sort -g | tr '\n' ' ')
			close_to "$model decoder columns 1+3 summed" "$(ranked "$TMP/o" "who attends to")" "$want"
		else
			expect_nogrep "$model cross: no source column is a mark's" "$TMP/o" "who attends to"
		fi
		# with --words: the marked target words' rows, as the replay merges them
		run --print heatmap --stack $stack --words --token 1,3 --layer 1 --head 1 --width 160 --color never >"$TMP/o" 2>&1
		expect_eq "$model --stack $stack --words --token 1,3 status" $? 0
		want=$("$PY" "$TOOLS/ref_words_encdec.py" rows "$TMP/p.json" $stack 1 1 1,3 | sort -g | tr '\n' ' ')
		close_to "$model $stack word rows 1+3 summed" "$(ranked "$TMP/o" "attend to (sum of 2 rows)")" "$want"
	done
	run --print heatmap --stack decoder --token 1,99 >/dev/null 2>"$TMP/e"
	expect_eq "$model --token past the decoder's input status" $? 1
	expect_grep "$model --token past the decoder's input" "$TMP/e" "no token 99: the decoder's input has"
done
# 3. Minimal pairs on either side: --compare TEXT_B runs TEXT_B with the same target, --compare-target TARGET_B
#    the text with a second target; --dump csv --stack decoder|cross (weight, weight_b, difference), --dump json's
#    compare.decoder (B's attentions and each head's change) and the heatmap's B - A panel against two --dump
#    json runs (ref_words_encdec.py compare recomputes the changes).
TEXT_B="hello world here"   # as many pieces as TEXT in both tokenizers
TARGET_B="the cat ran"      # as many as TARGET_A
TARGET_A="the cat sat"
TARGET_C="the dog sat"      # T5: fewer pieces (the common prefix is compared)
for model in bart-encdec t5-encdec; do
	run() { "$BIN" -m "$M/$model" "$@"; }
	run --dump json --top-k 0 --target "$TARGET_A" "$TEXT" >"$TMP/a.json"
	for pair in "text:--compare:$TEXT_B" "target:--compare-target:$TARGET_B" "target:--compare-target:$TARGET_C"; do
		kind=${pair%%:*} rest=${pair#*:}
		opt=${rest%%:*} other=${rest#*:}
		if [ "$kind" = text ]; then
			run --dump json --top-k 0 --target "$TARGET_A" "$other" >"$TMP/b.json"
		else
			run --dump json --top-k 0 --target "$other" "$TEXT" >"$TMP/b.json"
		fi
		run --dump csv --stack decoder $opt "$other" --target "$TARGET_A" "$TEXT" >"$TMP/d.csv" &&
			run --dump csv --stack cross $opt "$other" --target "$TARGET_A" "$TEXT" >"$TMP/c.csv" &&
			run --dump json --top-k 0 $opt "$other" --target "$TARGET_A" "$TEXT" >"$TMP/c.json"
		expect_eq "$model $opt '$other': dumps" $? 0
		"$PY" "$TOOLS/ref_words_encdec.py" compare "$TMP/a.json" "$TMP/b.json" --csv decoder "$TMP/d.csv" \
			--csv cross "$TMP/c.csv" --json "$TMP/c.json" >"$TMP/r" 2>&1 && ok || bad "$model $opt '$other': $(cat "$TMP/r")"
		[ "$other" = "$TARGET_C" ] && continue # (T5: the common prefix's rows, the same in both runs)
		[ "$(jq '.compare.decoder.cross_changed | flatten | max' "$TMP/c.json")" != 0 ] && ok ||
			bad "$model $opt '$other': nothing changed in cross-attention"
		# the heatmap's panel: B - A, A and B of the selected cell, under decoder and cross
		for stack in decoder cross; do
			field=$([ $stack = cross ] && echo cross_attentions || echo attentions)
			run --print heatmap --stack $stack $opt "$other" --layer 1 --head 1 --token 3 --width 160 --color never \
				--target "$TARGET_A" "$TEXT" >"$TMP/o" 2>&1
			expect_eq "$model $opt --print heatmap --stack $stack status" $? 0
			expect_grep "$model $opt --stack $stack: B - A shown" "$TMP/o" "same length, B - A shown"
			c=$(sed -n 's/.*key   \([0-9]*\) .*/\1/p' "$TMP/o" | head -1)
			got=$(sed -n 's/.*A \([0-9.]*\)  B \([0-9.]*\).*/\1 \2/p' "$TMP/o" | head -1)
			want=$(jq -r --argjson c "${c:-0}" ".decoder.$field[1][1][3][\$c]" "$TMP/a.json" "$TMP/b.json" |
				awk '{ printf "%s%.6f", (NR > 1 ? " " : ""), $1 }')
			expect_eq "$model $opt $stack panel: A and B of q3 k$c" "${got:-none}" "$want"
		done
	done
	run --print grid --stack cross --compare "$TEXT_B" --target "$TARGET_A" "$TEXT" >/dev/null 2>"$TMP/e"
	expect_eq "$model --print grid --stack cross --compare status" $? 1
	expect_grep "$model --print grid --stack cross --compare" "$TMP/e" "cannot show what changed in cross-attention (heatmap can)"
	# words of both runs: B's words beside A's, as each run's --dump json --words has them
	run --dump json --top-k 0 --words --target "$TARGET_A" "$TEXT" >"$TMP/a.json"
	run --dump json --top-k 0 --words --target "$TARGET_A" "$TEXT_B" >"$TMP/b.json"
	run --dump csv --stack cross --words --compare "$TEXT_B" --target "$TARGET_A" "$TEXT" >"$TMP/c.csv"
	"$PY" "$TOOLS/ref_words_encdec.py" compare "$TMP/a.json" "$TMP/b.json" --csv cross "$TMP/c.csv" >"$TMP/r" 2>&1 &&
		ok || bad "$model --words --compare: $(cat "$TMP/r")"
done
"$BIN" -m "$M/t5-encdec" --print heatmap --compare-target "$TARGET_B" --target "$TARGET_A" "$TEXT" >/dev/null 2>"$TMP/e"
expect_eq "--compare-target without --stack status" $? 2
expect_grep "--compare-target without --stack" "$TMP/e" "needs\|with --stack"
"$BIN" -m "$M/gpt2-mini" --dump json --compare-target "$TARGET_B" "$TEXT" >/dev/null 2>"$TMP/e"
expect_eq "--compare-target on gpt2 status" $? 1
expect_grep "--compare-target on gpt2" "$TMP/e" "not an encoder-decoder model"
[ "$(wc -l <"$TMP/e")" -eq 1 ] && ok || bad "--compare-target on gpt2: $(cat "$TMP/e")"
"$BIN" -m "$M/llama-gqa" --dump csv --words --stack decoder "$TEXT" >/dev/null 2>"$TMP/e"
expect_eq "--words --stack decoder on llama status" $? 1
expect_grep "--words --stack decoder on llama" "$TMP/e" "not an encoder-decoder model"

echo "encdec-words.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
