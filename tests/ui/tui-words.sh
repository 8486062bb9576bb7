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

# 2. Several tokens: Space marks the query under the heatmap cursor; the panel, the status bar
# and the head view combine them; x clears.
tui_keys 1 g Space 3 g Space
tui_wait "who attends to cap + ·bara (sum of 2 columns)"
tui_screen | tail -1 | grep -q "cap + ·bara" || tui_fail "status bar names the combined tokens"
tui_keys V
tui_wait "given by cap + ·bara (2 tokens combined)"
tui_keys x
tui_wait "given by playing (token 5)"
tui_keys q q q
[ "$(tui_exit_status)" = 0 ] || tui_fail "exit status"
# 3. Two texts: C opens the second input line; the grid shows B - A, the head finder sorts by
# "changed" (l: the first column), Enter opens the top head's difference, and the row of "it".
BERT="$top_srcdir/models/demo-bert"
A="The trophy didn't fit in the suitcase because it was too big"
tui_start 100 40 $U8 "$ATTNSCOPE_BIN" -m "$BERT" "$A"
tui_wait "16 tok │ L0 H0 │ grid"
tui_keys C
tui_type "The trophy didn't fit in the suitcase because it was too small"
tui_keys Enter
tui_wait "B - A over 16 matching rows"
tui_screen | grep -q "^vs  *The trophy" || tui_fail "the second input line"
tui_screen | grep -q "^\[CLS\] the  *trophy .* too  *small" || tui_fail "the second text's strip"
tui_keys F l
tui_wait "sorted by changed, largest first"
tui_screen | grep -q "^  head  *changed  *prev" || tui_fail "changed is the first column"
top=$("$ATTNSCOPE_BIN" -m "$BERT" --print heads --sort changed --compare "The trophy didn't fit in the suitcase because it was too small" "$A" |
	sed -n 's/^▶\{0,1\} *\(L[0-9]* H[0-9]*\) .*/\1/p' | head -1)
tui_keys g Enter
tui_wait "B - A (second text minus first) on ±0"
tui_screen | tail -1 | grep -q "$top" || tui_fail "the top changed head is $top"
tui_keys 1 1 g
tui_wait "query 11  it"
tui_screen | grep -E -q "A [0-9.]+  B [0-9.]+" || tui_fail "the panel shows both weights"
# c: B - A on the fixed scale -1 to +1 and back to the largest change in view.
tui_keys c
tui_wait "B - A (second text minus first) on ±1 (fixed)"
tui_screen | tail -1 | grep -q "B - A on the fixed scale -1 to +1" || tui_fail "c says the difference scale"
tui_keys c
tui_wait "(largest change)"
tui_screen | tail -1 | grep -q "B - A scaled to the largest change" || tui_fail "c says it again"
# Clearing the second text ends the comparison.
tui_keys C C-u Enter
tui_wait_gone "B - A"
tui_keys q q q
[ "$(tui_exit_status)" = 0 ] || tui_fail "exit status"

echo "tui-words: words key merges the strip and the heatmap (weight as --dump --words), and back;"
echo "  Space combines tokens in the heatmap and head view, x clears; C compares two texts"
