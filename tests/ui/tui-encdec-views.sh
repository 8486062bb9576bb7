#!/bin/sh
# tui-encdec-views.sh -- the encoder-decoder stacks in the explorer under tmux (issue 21, views slice), on the
# committed bart-encdec fixture with --target: T cycles encoder, decoder self-attention, cross-attention, all
# three (the grid's sections) and back, the status line names the stack; the heatmap panel's weight is --dump json's decoder.attentions,
# then decoder.cross_attentions (target row, source column); a view that cannot show cross-attention says so
# in one line; keys of the encoder only (weights) are refused while the decoder is shown; --stack starts on a
# stack, and a model that is not an encoder-decoder refuses --stack and --target.
set -u
: "${top_srcdir:?}" "${ATTNSCOPE_BIN:?}"
. "$top_srcdir/tests/ui/lib.sh"
M="$top_srcdir/tests/data/models"
BART="$M/bart-encdec"
[ -f "$BART/config.json" ] || { echo "no bart-encdec fixture: skipping"; exit 77; }
command -v jq >/dev/null || { echo "tui-encdec-views.sh: jq is required"; exit 99; }
U8="LC_ALL=C.UTF-8"
TEXT="hello world there"
TARGET="the cat sat"
DUMP=$("$ATTNSCOPE_BIN" -m "$BART" --dump json --top-k 0 --target "$TARGET" "$TEXT")
# the panel's weight of query R, key C against .decoder.FIELD[0][0][R][C]
panel_weight() { # FIELD R
	tui_wait "query $2 "
	c=$(tui_screen | sed -n 's/.*key   \([0-9]*\) .*/\1/p' | head -1)
	got=$(tui_screen | sed -n 's/.*weight  *\([0-9.]*\).*/\1/p' | head -1)
	want=$(printf '%s' "$DUMP" | jq -r --argjson r "$2" --argjson c "${c:-0}" ".decoder.$1[0][0][\$r][\$c]" |
		awk '{ printf "%.6f", $1 }')
	[ -n "$c" ] && [ -n "$want" ] && [ "$got" = "$want" ] || tui_fail "$1 q$2 k$c: weight '$got', --dump says '$want'"
}

tui_start 120 30 $U8 "$ATTNSCOPE_BIN" -m "$BART" --target "$TARGET" "$TEXT"
tui_wait "(encoder)"
tui_keys T
tui_wait "(decoder self-attention)"
tui_keys Enter
tui_wait "layer 0 head 0 ·"
tui_keys 2 g 1 '|'
panel_weight attentions 2
tui_keys Y
tui_wait "the encoder's only: T shows it again"
tui_keys T
tui_wait "(cross-attention: target rows × source columns)"
tui_wait "cross-attention layer 0 head 0"
tui_keys 3 g 2 '|'
panel_weight cross_attentions 3
tui_keys K
tui_wait "The qk view cannot show cross-attention: the grid, heatmap, heads and headview can (T: the next stack)."
tui_keys q
tui_wait "cross-attention layer 0 head 0"
tui_keys T
tui_wait "(all stacks: cross-attention" # the grid's three sections; the heatmap still the cross-attention's
tui_wait "cross-attention layer 0 head 0"
tui_keys T
tui_wait "(encoder)"
tui_keys q q
[ "$(tui_exit_status)" = 0 ] || tui_fail "bart: exit status $(tui_exit_status)"

# --stack starts on the cross-attention: the grid says so
tui_start 120 30 $U8 "$ATTNSCOPE_BIN" -m "$BART" --stack cross --target "$TARGET" "$TEXT"
tui_wait "(cross-attention: target rows × source columns)"
tui_wait "cross-attention: target rows × $(printf '%s' "$DUMP" | jq '.ids | length') source columns"
tui_keys q
[ "$(tui_exit_status)" = 0 ] || tui_fail "--stack cross: exit status $(tui_exit_status)"

# not an encoder-decoder: one line, status 1 (the terminal is there, the model refuses)
tui_start 120 30 $U8 sh -c "\"$ATTNSCOPE_BIN\" -m \"$M/gpt2-mini\" --stack decoder hi 2>&1; echo status \$?; sleep 30"
tui_wait "attnscope: --stack: $M/gpt2-mini is not an encoder-decoder model"
tui_wait "status 1"
echo "tui-encdec-views.sh: ok"
