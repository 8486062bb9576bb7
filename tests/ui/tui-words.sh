#!/bin/sh
# tui-words.sh -- words instead of pieces, several tokens at once and two texts side by side,
# reached by their keys in the real binary's explorer under tmux: the words key merges the token
# strip and every view (the heatmap panel shows the weight --dump csv --words reports) and back.
set -u
: "${top_srcdir:?}" "${ATTNSCOPE_BIN:?}"
. "$top_srcdir/tests/ui/lib.sh"
GPT2="$top_srcdir/tests/data/models/gpt2-mini"
[ -f "$GPT2/config.json" ] || { echo "fixture models missing"; exit 77; }
U8="LC_ALL=C.UTF-8"
TEXT="The capybara was playing"
panel_weight() { tui_screen | sed -n 's/.*weight  *\([0-9.]*\).*/\1/p' | head -1; }

# 1. Words: 6 pieces (The Ġcap y bara Ġwas Ġplaying) become 4 words.
tui_start 100 30 $U8 "$ATTNSCOPE_BIN" -m "$GPT2" "$TEXT"
tui_wait "6 tok │ L0 H0 │ grid"
tui_screen | grep -q 'cap··y··bara' || tui_fail "pieces joined in the strip"
tui_keys w
tui_wait "4 words │ L0 H0 │ grid"
tui_screen | grep -E -q '^The +capybara +was +playing' || tui_fail "word strip"
# The heatmap of layer 1 head 1, cell (query 3 "playing", key 1 "capybara").
tui_keys j l Enter
tui_wait "layer 1 head 1 ·"
tui_keys 3 g 1 '|'
tui_wait "query 3  playing"
tui_wait "key   1  capybara"
want=$("$ATTNSCOPE_BIN" -m "$GPT2" --dump csv --words --layer 1 --head 1 "$TEXT" |
	awk -F, '$3 == 3 && $4 == 1 { printf "%.6f", $NF }')
[ -n "$want" ] && [ "$(panel_weight)" = "$want" ] || tui_fail "word weight $(panel_weight), --dump says $want"
# Back to pieces: the selected word selects its first piece.
tui_keys w
tui_wait "6 tok │ L1 H1"
tui_wait "query 5  playing"
tui_keys q q
[ "$(tui_exit_status)" = 0 ] || tui_fail "exit status"
echo "tui-words: words key merges the strip and the heatmap (weight as --dump --words), and back"
