#!/bin/sh
# tui-target.sh -- the explorer's target line of an encoder-decoder model under tmux (issue 21), on the committed
# bart-encdec and t5-encdec fixtures: the second input line is the target, p or Tab gives it the focus (the
# terminal's cursor moves to it), a target typed there reruns the model: under T's decoder and cross stacks
# the token strips show the source's ids (the columns) above the target's (the rows), as --dump json --target
# gives .ids and .decoder.ids, and the heatmap's panel weight is --dump json's .decoder.cross_attentions (and
# .attentions) of the same texts; Backspace and typing rerun it, C-u empties the line (the decoder reads its
# start token alone, as without --target). --target starts the line. A model that is not an encoder-decoder
# shows no target line; an encoder-decoder refuses --pair in the explorer.
set -u
: "${top_srcdir:?}" "${ATTNSCOPE_BIN:?}"
. "$top_srcdir/tests/ui/lib.sh"
M="$top_srcdir/tests/data/models"
[ -f "$M/bart-encdec/config.json" ] && [ -f "$M/t5-encdec/config.json" ] || { echo "no encdec fixtures: skipping"; exit 77; }
command -v jq >/dev/null || { echo "tui-target.sh: jq is required"; exit 99; }
U8="LC_ALL=C.UTF-8"
TEXT="hello world there"

# the numbers after the gutter word NAME ("rows", "columns", "rows+cols") in the token strips, space-separated
strip_ids() { tui_screen | sed -n "s/^$1  *\([0-9 ]*\)\$/\1/p" | head -1 | tr -s ' ' | sed 's/ *$//'; }
# --dump json of TARGET ("" for none): the jq expression FILTER's numbers, space-separated
dump_ids() { # MODEL TARGET FILTER
	if [ -n "$2" ]; then
		"$ATTNSCOPE_BIN" -m "$M/$1" --dump json --top-k 0 --target "$2" "$TEXT"
	else
		"$ATTNSCOPE_BIN" -m "$M/$1" --dump json --top-k 0 "$TEXT"
	fi | jq -r "$3 | map(tostring) | join(\" \")"
}
# wait until the strip NAME shows WANT
wait_ids() { # NAME WANT WHAT
	i=0
	while [ $i -lt 100 ]; do
		[ "$(strip_ids "$1")" = "$2" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	tui_fail "$3: the $1 strip shows '$(strip_ids "$1")', --dump says '$2'"
}
# the row of the terminal's cursor (0-based): the focused input line
cursor_row() { tui_tmux display -p -t 0 '#{cursor_y}'; }
wait_cursor() { # ROW WHAT
	tui_wait_true "$2: the cursor is on row $(cursor_row), not $1" sh -c "[ \"\$(tmux -S '$TUI_SOCK' display -p -t 0 '#{cursor_y}')\" = $1 ]"
}
# after Enter: the line editor closed (its cursor hidden), so that the next keys go to the view, not
# into the line (the typed text is on the screen before Enter is handled: under load a key sent right
# after it was typed into the target)
wait_view() { # WHAT
	tui_wait_true "$1: the line is still being edited" sh -c "[ \"\$(tmux -S '$TUI_SOCK' display -p -t 0 '#{cursor_flag}')\" = 0 ]"
}
# the heatmap panel's weight of query R of layer L head H against --dump json's FIELD (a decoder's) of TARGET
panel_weight() { # MODEL TARGET FIELD L H R
	tui_wait "query $6 "
	c=$(tui_screen | sed -n 's/.*key   \([0-9]*\) .*/\1/p' | head -1)
	got=$(tui_screen | sed -n 's/.*weight  *\([0-9.]*\).*/\1/p' | head -1)
	want=$("$ATTNSCOPE_BIN" -m "$M/$1" --dump json --top-k 0 --target "$2" "$TEXT" |
		jq -r --argjson l "$4" --argjson h "$5" --argjson r "$6" --argjson c "${c:-0}" ".decoder.$3[\$l][\$h][\$r][\$c]" |
		awk '{ printf "%.6f", $1 }')
	[ -n "$c" ] && [ -n "$want" ] && [ "$got" = "$want" ] ||
		tui_fail "$1 '$2' $3 L$4 H$5 q$6 k$c: weight '$got', --dump says '$want'"
}

for model in bart-encdec t5-encdec; do
	tui_start 120 30 $U8 "$ATTNSCOPE_BIN" -m "$M/$model" "$TEXT"
	tui_wait "(encoder)"
	[ "$(tui_line 2 | cut -c1-7)" = "target " ] || tui_fail "$model: line 2 is not the target line"
	tui_wait "the decoder's text: press p"
	# i edits the text (cursor on row 0), Tab moves to the target line (row 1), Enter back to the view
	tui_keys i
	wait_cursor 0 "$model: i"
	tui_keys Tab
	wait_cursor 1 "$model: Tab"
	tui_type "the cat sat"
	tui_keys Enter
	tui_wait "target the cat sat"
	wait_view "$model: Enter"
	tui_keys T
	tui_wait "(decoder self-attention)"
	wait_ids "rows+cols" "$(dump_ids $model "the cat sat" .decoder.ids)" "$model decoder"
	# the decoder's self-attention of layer 1 head 1
	tui_keys j l Enter
	tui_wait "layer 1 head 1 ·"
	tui_keys 2 g 1 '|'
	panel_weight $model "the cat sat" attentions 1 1 2
	tui_keys q T
	tui_wait "(cross-attention: target rows × source columns)"
	wait_ids "rows" "$(dump_ids $model "the cat sat" .decoder.ids)" "$model cross"
	wait_ids "columns" "$(dump_ids $model "the cat sat" .ids)" "$model cross source"
	tui_keys Enter
	tui_wait "cross-attention layer 1 head 1"
	tui_keys 3 g 2 '|'
	panel_weight $model "the cat sat" cross_attentions 1 1 3
	# Backspace and typing in the target line rerun the model: tokens and weights follow
	tui_keys p
	wait_cursor 1 "$model: p"
	tui_keys BSpace BSpace BSpace
	tui_wait_gone "target the cat sat"
	wait_ids "rows" "$(dump_ids $model "the cat " .decoder.ids)" "$model backspace"
	tui_type "dog ran"
	tui_keys Enter
	tui_wait "target the cat dog ran"
	wait_view "$model: Enter after the edit"
	wait_ids "rows" "$(dump_ids $model "the cat dog ran" .decoder.ids)" "$model typed"
	tui_keys 4 g 0 '|'
	panel_weight $model "the cat dog ran" cross_attentions 1 1 4
	# an empty line: the decoder reads its start token alone, as without --target
	tui_keys p C-u Enter
	tui_wait "the decoder's text: press p"
	wait_ids "rows" "$(dump_ids $model "" .decoder.ids)" "$model empty"
	tui_keys q q
	[ "$(tui_exit_status)" = 0 ] || tui_fail "$model: exit status $(tui_exit_status)"
done

# --target starts the line, edited from there; the text's edits rerun with it
tui_start 120 30 $U8 "$ATTNSCOPE_BIN" -m "$M/bart-encdec" --stack cross --target "the cat" "$TEXT"
tui_wait "target the cat"
wait_ids "rows" "$(dump_ids bart-encdec "the cat" .decoder.ids)" "--target"
tui_keys p
tui_type " sat"
tui_keys Enter
wait_ids "rows" "$(dump_ids bart-encdec "the cat sat" .decoder.ids)" "--target edited"
tui_keys i BSpace BSpace BSpace BSpace BSpace BSpace Enter
tui_wait "text hello world"
TEXT="hello world"
wait_ids "columns" "$(dump_ids bart-encdec "the cat sat" .ids)" "text edited"
wait_ids "rows" "$(dump_ids bart-encdec "the cat sat" .decoder.ids)" "text edited, target kept"
tui_keys q
[ "$(tui_exit_status)" = 0 ] || tui_fail "--target: exit status $(tui_exit_status)"

# not an encoder-decoder: no target line, p says so
tui_start 120 30 $U8 "$ATTNSCOPE_BIN" -m "$M/gpt2-mini" "$TEXT"
tui_wait "tok"
tui_line 2 | grep -q '^target' && tui_fail "gpt2-mini shows a target line"
tui_keys p
tui_wait "this model takes one text (no pair)"
tui_keys q
[ "$(tui_exit_status)" = 0 ] || tui_fail "gpt2-mini: exit status $(tui_exit_status)"

# an encoder-decoder's second line is its target: --pair is refused in one line, status 1
tui_start 300 30 $U8 sh -c "\"$ATTNSCOPE_BIN\" -m \"$M/t5-encdec\" --pair b a 2>&1; echo status \$?; sleep 30"
tui_wait "attnscope: $M/t5-encdec is an encoder-decoder model: --pair does not apply to it (give --target)"
tui_wait "status 1"
echo "tui-target.sh: ok"
