#!/bin/sh
# tui-encdec-words.sh -- an encoder-decoder's words in the explorer under tmux (issue 21: words, several tokens
# and minimal pairs on either side), on the committed bart-encdec fixture with --target: w merges the target's
# pieces into words under T's decoder and cross-attention stacks (the heatmap panel's weight is --dump json
# --words' decoder.attentions / decoder.cross_attentions, which tests/encdec-words.sh checks against numpy),
# and back to pieces; Space marks decoder tokens, whose rows the panel combines under decoder and cross; a
# second text (C, --compare) shows B - A under decoder and cross, and so does a second target (C under the
# decoder's stacks, --compare-target).
set -u
: "${top_srcdir:?}" "${ATTNSCOPE_BIN:?}"
. "$top_srcdir/tests/ui/lib.sh"
BART="$top_srcdir/tests/data/models/bart-encdec"
[ -f "$BART/config.json" ] || { echo "no bart-encdec fixture: skipping"; exit 77; }
command -v jq >/dev/null || { echo "tui-encdec-words.sh: jq is required"; exit 99; }
U8="LC_ALL=C.UTF-8"
TEXT="hello world there"
TARGET="the cat sat downward" # "Ġdown ward": two pieces, one word
WORDS=$("$ATTNSCOPE_BIN" -m "$BART" --dump json --top-k 0 --words --target "$TARGET" "$TEXT")
PIECES=$("$ATTNSCOPE_BIN" -m "$BART" --dump json --top-k 0 --target "$TARGET" "$TEXT")
# the panel's weight of query R, key C against JSON's .decoder.FIELD[0][0][R][C]
panel_weight() { # JSON FIELD R
	tui_wait "query $3 "
	c=$(tui_screen | sed -n 's/.*key   \([0-9]*\) .*/\1/p' | head -1)
	got=$(tui_screen | sed -n 's/.*weight  *\([0-9.]*\).*/\1/p' | head -1)
	want=$(printf '%s' "$1" | jq -r --argjson r "$3" --argjson c "${c:-0}" ".decoder.$2[0][0][\$r][\$c]" |
		awk '{ printf "%.6f", $1 }')
	[ -n "$c" ] && [ -n "$want" ] && [ "$got" = "$want" ] || tui_fail "$2 q$3 k$c: weight '$got', --dump says '$want'"
}
nd=$(printf '%s' "$WORDS" | jq '.decoder.tokens | length')
np=$(printf '%s' "$WORDS" | jq '.decoder.pieces | length')
[ "$nd" -lt "$np" ] || tui_fail "the target has $nd words of $np pieces"

tui_start 120 30 $U8 "$ATTNSCOPE_BIN" -m "$BART" --target "$TARGET" "$TEXT"
tui_wait "(encoder)"
tui_keys T
tui_wait "(decoder self-attention)"
tui_keys w
tui_wait "words: attention to a word summed"
tui_wait "$nd words (decoder self-attention)"
tui_keys Enter
tui_wait "layer 0 head 0 ·"
tui_keys 5 g 2 '|'
tui_wait "query 5  downward"
panel_weight "$WORDS" attentions 5
tui_keys T
tui_wait "$nd words (cross-attention: target rows × source columns)"
tui_keys 4 g 1 '|'
panel_weight "$WORDS" cross_attentions 4
tui_keys w
tui_wait "$np tok (cross-attention: target rows × source columns)"
# Several tokens: Space marks decoder tokens (rows); T from the decoder to the cross-attention keeps them, and
# the panel sums their cross-attention rows (the source's columns are no mark's); on through all three stacks
# back to the encoder: cleared.
tui_keys T T T
tui_wait "$np tok (decoder self-attention)"
tui_keys 1 g Space 3 g Space
tui_wait "who attends to <s> + c (sum of 2 columns)"
tui_keys T
tui_wait "$np tok (cross-attention: target rows × source columns)"
tui_wait "<s> + c attend to (sum of 2 rows)"
want=$(printf '%s' "$PIECES" | jq -r '.decoder.cross_attentions[0][0] | [.[1], .[3]] | transpose | map(add) | max' |
	awk '{ printf "%.6f", $1 }')
tui_screen | grep -A1 "<s> + c attend to (sum of 2 rows)" | grep -q " 1\. $want " ||
	tui_fail "cross rows 1+3: the top weight is not $want"
tui_screen | grep -q "who attends to" && tui_fail "cross-attention: a source column summed for the marks"
tui_keys T T
tui_wait "(encoder)"
tui_screen | grep -q "attend to (sum of" && tui_fail "marks of the decoder kept on the encoder"
tui_keys q q
[ "$(tui_exit_status)" = 0 ] || tui_fail "exit status $(tui_exit_status)"
# Minimal pairs: C's second text runs with the same target; under T's decoder and cross-attention the heatmap
# shows B - A, its panel A and B as the two texts' --dump json have them; a view that cannot show what changed in
# cross-attention says so in one line.
TEXT_B="hello world here"
B=$("$ATTNSCOPE_BIN" -m "$BART" --dump json --top-k 0 --target "$TARGET" "$TEXT_B")
panel_ab() { # FIELD R: the panel's "A a  B b" of query R against both dumps
	tui_wait "query $2 "
	c=$(tui_screen | sed -n 's/.*key   \([0-9]*\) .*/\1/p' | head -1)
	got=$(tui_screen | sed -n 's/.*A \([0-9.]*\)  B \([0-9.]*\).*/\1 \2/p' | head -1)
	want=$(printf '%s\n%s\n' "$PIECES" "$B" | jq -r --argjson r "$2" --argjson c "${c:-0}" ".decoder.$1[0][0][\$r][\$c]" |
		awk '{ printf "%s%.6f", (NR > 1 ? " " : ""), $1 }')
	[ -n "$got" ] && [ "$got" = "$want" ] || tui_fail "$1 q$2 k$c: A and B '$got', the dumps say '$want'"
}
tui_start 120 34 $U8 "$ATTNSCOPE_BIN" -m "$BART" --compare "$TEXT_B" --target "$TARGET" "$TEXT"
tui_wait "(encoder)"
tui_keys T
tui_wait "(decoder self-attention)"
tui_keys Enter
tui_wait "B - A (second text minus first)"
tui_keys 4 g 2 '|'
panel_ab attentions 4
tui_keys T
tui_wait "(cross-attention: target rows × source columns)"
tui_wait "B - A (second text minus first)"
tui_keys 5 g 3 '|'
panel_ab cross_attentions 5
tui_keys q
tui_wait "The grid view cannot show what changed in cross-attention: the heatmap can."
tui_keys T T
tui_wait "(encoder)"
tui_keys q
[ "$(tui_exit_status)" = 0 ] || tui_fail "compare: exit status $(tui_exit_status)"
# A second target: C pressed under the decoder's stacks opens "vs tgt", the text run with that target; the
# panel's A and B are the two targets' --dump json; editing the text reruns both (B shares it); --compare-target
# opens the explorer so.
TARGET_B="a dog ran upward"
panel_ab_dumps() { # A B FIELD R: the panel's "A a  B b" of query R against the dumps A and B (the reruns may
	tui_wait "query $4 " #  still be on their way: a few seconds' grace)
	tries=0
	while :; do
		c=$(tui_screen | sed -n 's/.*key   \([0-9]*\) .*/\1/p' | head -1)
		got=$(tui_screen | sed -n 's/.*A \([0-9.]*\)  B \([0-9.]*\).*/\1 \2/p' | head -1)
		want=$(printf '%s\n%s\n' "$1" "$2" | jq -r --argjson r "$4" --argjson c "${c:-0}" ".decoder.$3[0][0][\$r][\$c]" |
			awk '{ printf "%s%.6f", (NR > 1 ? " " : ""), $1 }')
		[ -n "$got" ] && [ "$got" = "$want" ] && break
		tries=$((tries + 1))
		[ $tries -lt 40 ] || tui_fail "$3 q$4 k$c: A and B '$got', the dumps say '$want'"
		sleep 0.25
	done
}
TB=$("$ATTNSCOPE_BIN" -m "$BART" --dump json --top-k 0 --target "$TARGET_B" "$TEXT")
[ "$(printf '%s' "$TB" | jq '.decoder.tokens | length')" = "$(printf '%s' "$PIECES" | jq '.decoder.tokens | length')" ] ||
	tui_fail "the two targets differ in length"
tui_start 120 34 $U8 "$ATTNSCOPE_BIN" -m "$BART" --target "$TARGET" "$TEXT"
tui_wait "(encoder)"
tui_keys T
tui_wait "(decoder self-attention)"
tui_keys C
tui_wait "vs tgt"
tui_type "$TARGET_B"
tui_keys Escape Enter
tui_wait "B - A (second text minus first)"
tui_keys 2 g 2 '|'
panel_ab_dumps "$PIECES" "$TB" attentions 2
tui_keys T
tui_wait "(cross-attention: target rows × source columns)"
tui_keys 4 g 1 '|'
panel_ab_dumps "$PIECES" "$TB" cross_attentions 4
# the text edited: both runs take it
TEXT2="hello world here"
A2=$("$ATTNSCOPE_BIN" -m "$BART" --dump json --top-k 0 --target "$TARGET" "$TEXT2")
B2=$("$ATTNSCOPE_BIN" -m "$BART" --dump json --top-k 0 --target "$TARGET_B" "$TEXT2")
tui_keys i C-e BSpace BSpace BSpace BSpace BSpace
tui_type "here"
tui_keys Escape
panel_ab_dumps "$A2" "$B2" cross_attentions 4
tui_keys q q
[ "$(tui_exit_status)" = 0 ] || tui_fail "second target: exit status $(tui_exit_status)"
tui_start 120 34 $U8 "$ATTNSCOPE_BIN" -m "$BART" --stack cross --compare-target "$TARGET_B" --target "$TARGET" "$TEXT"
tui_wait "vs tgt"
tui_wait "(cross-attention: target rows × source columns)"
tui_keys Enter
tui_wait "B - A (second text minus first)"
tui_keys 5 g 2 '|'
panel_ab_dumps "$PIECES" "$TB" cross_attentions 5
tui_keys q q
[ "$(tui_exit_status)" = 0 ] || tui_fail "--compare-target: exit status $(tui_exit_status)"
echo "tui-encdec-words.sh: ok"
