#!/bin/sh
# tui-encdec-crossviews.sh -- the head finder and the head view on cross-attention in the explorer under tmux
# (issue 21, views), on the committed bart-encdec fixture with --target: under T = cross-attention the head
# finder (F) shows cross-attention's scores, its rows as --print heads --stack cross prints them, sorts by
# them and opens the heatmap of the head chosen; the head view (V) shows the selected target token's
# cross-attention over the source's tokens, the picked head's largest weight the dump's, and refuses r
# (received) there; T back to the encoder gives both views their self-attention columns and title. T's
# fourth state, the grid's three sections: the selection moves across them and the other views follow.
set -u
: "${top_srcdir:?}" "${ATTNSCOPE_BIN:?}"
. "$top_srcdir/tests/ui/lib.sh"
BART="$top_srcdir/tests/data/models/bart-encdec"
[ -f "$BART/config.json" ] || { echo "no bart-encdec fixture: skipping"; exit 77; }
command -v jq >/dev/null || { echo "tui-encdec-crossviews.sh: jq is required"; exit 99; }
U8="LC_ALL=C.UTF-8"
TEXT="hello world, there"
TARGET="the cat sat."
DUMP=$("$ATTNSCOPE_BIN" -m "$BART" --dump json --top-k 0 --target "$TARGET" "$TEXT")
PRINT=$(env $U8 "$ATTNSCOPE_BIN" -m "$BART" --print heads --stack cross --width 160 --color never --target "$TARGET" "$TEXT")

tui_start 160 40 $U8 "$ATTNSCOPE_BIN" -m "$BART" --target "$TARGET" "$TEXT"
tui_wait "(encoder)"
tui_keys T T
tui_wait "(cross-attention: target rows × source columns)"
tui_keys F
tui_wait "head finder · 6 heads · cross-attention · source end token </s>"
tui_wait "diagonal monotonic       eos       max"
for head in "L0 H1" "L2 H0"; do # each row as --print prints it
	want=$(printf '%s\n' "$PRINT" | grep "^. $head " | cut -c3-)
	got=$(tui_screen | grep "^. $head " | cut -c3-)
	[ -n "$want" ] && [ "$got" = "$want" ] || tui_fail "$head: '$got', --print says '$want'"
done
tui_keys Right Right Right Right # first, punct, entropy, diagonal
tui_wait "sorted by diagonal, largest first"
# the top head by diagonal (the 6th field of a --print row; no ties on this text)
top=$(printf '%s\n' "$PRINT" | sed -n '/^  head  /,/^$/p' | sed '1d;$d' | sed 's/^..//' | sort -s -k6,6r | head -1 |
	grep -o 'L[0-9] H[0-9]')
first_row() { [ "$(tui_screen | sed -n '/^  head  /{n;p;}' | grep -o 'L[0-9] H[0-9]')" = "$top" ]; }
tui_wait_true "the first row sorted by diagonal is not $top" first_row
L=${top%% *} H=${top##* }
L=${L#L} H=${H#H}
tui_keys g Enter
tui_wait "cross-attention layer $L head $H"
tui_keys q
tui_wait "head finder"
tui_keys V
tui_wait "cross-attention given by"
tui_keys Up 5 Up # the first press selects the last token (7), then five up
tui_wait "(token 2) to the source's tokens"
want=$(printf '%s' "$DUMP" | jq -r --argjson l "$L" --argjson h "$H" '.decoder.cross_attentions[$l][$h][2] | max' |
	awk '{ printf "%.4f", $1 }')
tui_wait "head $H's largest: "
tui_wait " $want"
tui_keys r
tui_wait "cross-attention: given by target tokens only"
tui_keys T
tui_wait "(all stacks: cross-attention"
tui_keys T
tui_wait "(encoder)"
tui_wait_gone "cross-attention given by"
tui_wait "attention given by"
tui_keys F
tui_wait "head finder · 4 heads · sorted by"
tui_wait_gone "diagonal monotonic"
tui_keys q q q q
[ "$(tui_exit_status)" = 0 ] || tui_fail "exit status $(tui_exit_status)"
# T's fourth state: the grid shows the three stacks as sections; up from the cross-attention's first layer is
# the decoder's last, the views then reading the decoder (the status line and the heatmap say so); down again
# to the cross-attention, whose heatmap panel is the dump's cross weight; T goes back to the encoder alone.
tui_start 120 30 $U8 "$ATTNSCOPE_BIN" -m "$BART" --target "$TARGET" "$TEXT"
tui_wait "(encoder)"
tui_keys T T T
tui_wait "(all stacks: cross-attention: target rows × source columns)"
tui_wait "cross-attention: target rows × source columns · 3 layers × 2 heads · 8 × 8 tokens"
tui_keys Up
tui_wait "(all stacks: decoder self-attention)"
tui_wait "│ L2 H0 │"
tui_keys Up Up
tui_wait "│ L0 H0 │"
tui_wait "decoder self-attention (causal) · 3 layers × 2 heads · 8 tokens" # scrolled to its title
tui_keys Up
tui_wait "(all stacks: encoder)"
tui_wait "│ L1 H0 │"
tui_keys Up
tui_wait "│ L0 H0 │"
tui_wait "encoder self-attention · 2 layers × 2 heads · 8 tokens"
tui_keys 5 Down Right # two encoder layers, three decoder ones: the cross-attention's first
tui_wait "(all stacks: cross-attention: target rows × source columns)"
tui_wait "│ L0 H1 │"
tui_keys Enter
tui_wait "cross-attention layer 0 head 1"
tui_keys 3 g 2 '|'
tui_wait "query 3 "
c=$(tui_screen | sed -n 's/.*key   \([0-9]*\) .*/\1/p' | head -1)
got=$(tui_screen | sed -n 's/.*weight  *\([0-9.]*\).*/\1/p' | head -1)
want=$(printf '%s' "$DUMP" | jq -r --argjson c "${c:-0}" '.decoder.cross_attentions[0][1][3][$c]' | awk '{ printf "%.6f", $1 }')
[ -n "$c" ] && [ "$got" = "$want" ] || tui_fail "all stacks, cross L0 H1 q3 k$c: weight '$got', --dump says '$want'"
tui_keys q
tui_wait "(all stacks: cross-attention"
tui_keys T
tui_wait "(encoder)"
tui_wait_gone "cross-attention: target rows × source columns · 3 layers"
tui_keys q q
[ "$(tui_exit_status)" = 0 ] || tui_fail "all stacks: exit status $(tui_exit_status)"

echo "tui-encdec-crossviews.sh: ok"
