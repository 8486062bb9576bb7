#!/bin/sh
# tui-synth.sh -- the explorer end to end under tmux, on synthetic traces (tests/ui/ui-driver):
# start, grid navigation and counts, heatmap and its toggles, help, editing with live reruns,
# the pair field, stale runs while typing, errors, resize (down to below 40x12), monochrome and
# ASCII terminals, quitting.
set -u
: "${top_srcdir:?}" "${ATTNSCOPE_BIN:?}"
. "$top_srcdir/tests/ui/lib.sh"
DRIVER="${ATTNSCOPE_BIN%/*}/tests/ui/ui-driver"
[ -x "$DRIVER" ] || { echo "no $DRIVER"; exit 1; }
U8="LC_ALL=C.UTF-8"

# --- start: grid, token strip, status bar ---
tui_start 100 30 $U8 "$DRIVER" --layers 3 --heads 4 "The quick brown fox jumped over"
tui_wait "3 layers × 4 heads · 9 tokens"
tui_screen | grep -q '^\[CLS\] The   quick brown fox   jump··ed   over  \[SEP\]' || tui_fail "token strip"
tui_screen | grep -q '^101 ' || tui_fail "token ids"
tui_wait "synthetic-bert │ 9 tok │ L0 H0 │ grid"
tui_wait "Enter open"
for l in L0 L1 L2; do tui_screen | grep -q "^$l " || tui_fail "layer label $l"; done
tui_screen | grep -q '^L\\H     0         1         2         3' || tui_fail "head numbers"
# The frame around the selected head (L0 H0) starts at column 4 of the first thumbnail row.
tui_screen | grep -q '^   ┌─────────┐$' || tui_fail "selection frame"

# --- grid navigation: hjkl, counts, g/G, |, page keys, head wrap ---
tui_keys j l
tui_wait "L1 H1 │ grid"
tui_keys G
tui_wait "L2 H3 │ grid"
tui_keys g
tui_wait "L0 H0 │ grid"
tui_keys 2 '|'
tui_wait "L0 H2 │ grid"
tui_keys 9 l        # counts clamp at the last head
tui_wait "L0 H3 │ grid"
tui_keys ']'        # past the last head of a layer: the next layer
tui_wait "L1 H0 │ grid"
tui_keys 2 g
tui_wait "L2 H0 │ grid"
tui_keys PPage
tui_wait "L0 H0 │ grid"
tui_keys d
tui_wait "thumbnails shrink by mean"
tui_keys d
tui_keys C-t
tui_wait "C-t: no action here"

# --- heatmap: open, cursor, panel, toggles, head/layer keys ---
tui_keys 1 '|' Enter
tui_wait "layer 0 head 1 · queries ↓, keys → · linear scale"
tui_wait "top keys of [CLS]"
tui_keys j j l
tui_wait "query 2  quick"
tui_wait "key   1  The"
tui_screen | grep -q '^quick .*\[\]' || tui_fail "cell cursor on the quick row"
tui_wait "L0 H1 │ heatmap │ q2 k1 = "
tui_keys m
tui_wait "layer 0, mean of 4 heads"
tui_keys M
tui_wait "mean of all 12 heads in 3 layers"
tui_keys M
tui_wait "layer 0 head 1 ·"
tui_keys c
tui_wait "log scale"
tui_keys c
tui_wait "rank scale"
tui_keys c
tui_wait "linear scale"
tui_keys n
tui_screen | grep -E -q '^quick +(\.[0-9][0-9]|1\.0| +)' || tui_fail "numbers in cells"
tui_keys n
tui_keys s
tui_wait "specials hidden (rows renormalised)"
tui_screen | grep -q '^\[CLS\] ' && tui_screen | sed -n '6,30p' | grep -q '^\[CLS\]' && tui_fail "[CLS] row still shown"
tui_keys s
tui_keys ']'
tui_wait "layer 0 head 2 ·"
tui_keys '}'
tui_wait "layer 1 head 2 ·"
tui_keys '['
tui_wait "layer 1 head 1 ·"

# --- help for the current view ---
tui_keys '?'
tui_wait "Keys (q or Esc closes"
tui_wait "Heatmap view"
tui_screen | grep -q "toggle the mean over the layer's heads" || tui_fail "heatmap keys in help"
tui_keys q
tui_wait "layer 1 head 1 ·"
tui_keys q
tui_wait "3 layers × 4 heads"
tui_wait "L1 H1 │ grid"

# --- token selection highlights in every view ---
tui_keys x . . . .
tui_wait "L1 H1 │ grid"
# The selected token has the token-selected colours in the strip (and thumbnails dim around it).
tui_screen_ansi | sed -n 3p | grep -q '48;5;[0-9]*mbrown' || tui_fail "selected token not highlighted"
tui_keys Enter
tui_wait "query 3  brown"
tui_keys Escape
tui_wait "│ grid"
tui_keys x

# --- editing: live reruns, Backspace, C-u, UTF-8, Home/End ---
tui_keys i
tui_wait "done"
tui_type " again"
tui_wait "10 tok"
tui_wait "again"
tui_keys BSpace BSpace BSpace BSpace BSpace BSpace
tui_wait "9 tok"
tui_keys Home
tui_type "Ünïcode 日本 "
tui_wait "12 tok"
tui_screen | grep -q '^\[CLS\] Ünï·*code  日本  The ' || tui_fail "UTF-8 tokens"
tui_keys End C-w
tui_wait "11 tok"
tui_screen | grep -q '^text Ünïcode 日本 The quick brown fox jumped *$' || tui_fail "C-w"
tui_keys C-u
tui_wait "2 tok"
tui_type "cats sleep"
tui_wait "4 tok"
tui_screen | grep -E -q '^\[CLS\] cats +sleep +\[SEP\]$' || tui_fail "new text"
tui_keys Enter
tui_wait "Enter open"

# --- the pair field (BERT) ---
tui_keys p
tui_type "dogs bark"
tui_wait "7 tok"
tui_screen | grep -E -q '^\[CLS\] cats +sleep +\[SEP\] dogs +bark +\[SEP\]$' || tui_fail "pair tokens"
tui_keys Escape
tui_keys q
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status after q: $st"

# --- stale runs are discarded while typing; errors are shown ---
STATS="$TUI_TMP/stats"
tui_start 100 30 $U8 "$DRIVER" --delay 150 --stats "$STATS" ""
tui_wait "2 tok"
tui_type "one two three four five six seven"
tui_wait "9 tok" 15
tui_screen | grep -E -q '^\[CLS\] one +two +three +four +five +six +seve·*n +\[SEP\]$' || tui_fail "final tokens"
tui_type " FAIL"
tui_wait "synthetic failure for a text containing FAIL" 15
tui_keys BSpace BSpace BSpace BSpace BSpace
tui_wait_gone "synthetic failure" 15
tui_keys C-c
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status after C-c: $st"
runs=$(sed -n 's/^runs //p' "$STATS")
# 34 characters arrived at once: the debounce makes one run of them, not 34.
[ "$runs" -lt 8 ] || tui_fail "too many runs: $runs"
echo "a 34-character paste started $runs runs"

# Slow typing against a slower model: each key comes after the debounce (60 ms) but before the
# run ends (400 ms), so runs are cancelled and only the last text's result is shown.
tui_start 100 30 $U8 "$DRIVER" --delay 400 --stats "$STATS" ""
tui_wait "2 tok" 15
for w in alpha beta gamma delta; do
	tui_type "$w "
	sleep 0.2
done
tui_wait "6 tok" 15
tui_screen | grep -E -q '^\[CLS\] alph·*a +beta +gamm·*a +delt·*a +\[SEP\]$' || tui_fail "final tokens after slow typing"
tui_keys C-c
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status: $st"
cancelled=$(sed -n 's/^cancelled //p' "$STATS")
[ "$cancelled" -ge 1 ] || tui_fail "no run was cancelled: $(cat "$STATS")"
echo "slow typing: $(tr '\n' ' ' <"$STATS")"

# --- resize: smaller, below the minimum, back ---
tui_start 100 30 $U8 "$DRIVER" --layers 12 --heads 12 "a b c d e f g h"
tui_wait "12 layers × 12 heads"
tui_tmux resize-window -t 0 -x 60 -y 20
tui_wait_true "no redraw at 60 columns" tui_width_is 60
tui_wait "L0 H0 │ grid"
tui_screen | grep -q '▼' || tui_fail "no scroll marker when the grid does not fit"
tui_keys 11 g
tui_wait "L11 H0"
tui_screen | grep -q '^L11 ' || tui_fail "grid did not scroll to layer 11"
tui_tmux resize-window -t 0 -x 30 -y 10
tui_wait "too small 30x10"
tui_tmux resize-window -t 0 -x 40 -y 12
tui_wait "│ L11 H0 │"
tui_screen | grep -q '^L11 ' || tui_fail "layer 11 not shown at 40x12"
tui_tmux resize-window -t 0 -x 100 -y 30
tui_wait_true "no redraw at 100 columns" tui_width_is 100
tui_wait "12 layers × 12 heads"
tui_keys Q
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status after Q: $st"

# --- 24x16 heads on a small terminal: the grid scrolls both ways; a long text scrolls the heatmap ---
tui_start 40 14 $U8 "$DRIVER" --layers 24 --heads 16 "a b c"
tui_wait "│ L0 H0 │"
tui_screen | grep -q '▶' || tui_fail "no marker for heads off to the right"
tui_keys 1 5 '|' 2 3 g
tui_wait "│ L23 H15 │"
tui_screen | grep -q '^L23 ' || tui_fail "layer 23 not scrolled into view"
tui_screen | grep -E -q ' 15 *$' || tui_fail "head 15 not scrolled into view"
tui_screen | grep -q '◀' || tui_fail "no marker for heads off to the left"
tui_keys Q
words=$(seq 1 60 | sed 's/^/w/' | tr '\n' ' ')
tui_start 80 24 $U8 "$DRIVER" "$words"
tui_wait "62 tok"
tui_keys Enter G 6 1 '|'
tui_wait "query 61  [SEP]"
tui_wait "key   61  [SEP]"
tui_screen | grep -q '^\[SEP\] .*\[\]' || tui_fail "cursor row not scrolled into view"
tui_screen | grep -q '▲' || tui_fail "no marker for rows above"
tui_keys g 0 '|'
tui_wait "query 0  [CLS]"
tui_keys Q

# --- only changed cells are sent: a move costs a small part of a full repaint ---
tui_start 100 30 $U8 "$DRIVER" --layers 12 --heads 12 "The animal did not cross the street because it was tired"
tui_wait "12 layers × 12 heads"
sleep 0.3
tui_tmux pipe-pane -t 0 -o "cat >>'$TUI_TMP/bytes'"
sleep 0.3
size() { wc -c <"$TUI_TMP/bytes" 2>/dev/null || echo 0; }
s0=$(size)
tui_keys l
tui_wait "L0 H1 │ grid"
sleep 0.3
s1=$(size)
tui_keys C-l
sleep 0.5
s2=$(size)
move=$((s1 - s0)) full=$((s2 - s1))
echo "terminal output: $move bytes to move the selection, $full bytes to repaint everything"
[ "$full" -gt 2000 ] && [ "$move" -lt $((full / 8)) ] || tui_fail "a move sent $move bytes, a repaint $full"
tui_keys Q

# --- monochrome (NO_COLOR) and an ASCII locale ---
tui_start 80 24 $U8 NO_COLOR=1 "$DRIVER" --layers 2 --heads 2 "the cat sat"
tui_wait "2 layers × 2 heads"
tui_screen_ansi | grep -q '\[38;5;' && tui_fail "colour with NO_COLOR"
tui_screen | grep -q '▀' && tui_fail "half blocks in monochrome"
tui_screen | grep -E -q '^ +[│ ]?[@%#*+=:. -]{3,}' || tui_fail "no shade characters"
tui_keys q
tui_start 80 24 LC_ALL=C "$DRIVER" --layers 2 --heads 2 "the cat sat"
tui_wait "2 layers x 2 heads - 5 tokens"
tui_screen | grep -q '^   +-----+' || tui_fail "ASCII frame"
LC_ALL=C tui_screen | grep -q "$(printf '[\200-\377]')" && tui_fail "non-ASCII output in the C locale"
tui_keys q
# --- 8 colours (TERM=xterm) and a VT100 (monochrome) ---
tui_start 80 24 $U8 TERM=xterm "$DRIVER" --layers 2 --heads 2 "the cat sat"
tui_wait "2 layers × 2 heads"
tui_screen_ansi | grep -q '\[[34]8;5;' && tui_fail "256-colour codes on an 8-colour terminal"
tui_screen_ansi | grep -q '\[4[0-7]m' || tui_fail "no 8-colour backgrounds"
tui_keys q
tui_start 80 24 $U8 TERM=vt100 "$DRIVER" --layers 2 --heads 2 "the cat sat"
tui_wait "2 layers × 2 heads"
tui_screen_ansi | grep -E -q '\[[34][0-7]m|\[[34]8;' && tui_fail "colour on a VT100"
tui_screen | grep -E -q '^ +[│ ]?[@%#*+=:. -]{3,}' || tui_fail "no shade characters on a VT100"
tui_keys q

# --- truecolor: COLORTERM=truecolor and a direct-colour terminal description (ncurses-term) ---
if infocmp tmux-direct >/dev/null 2>&1; then
	tui_start 80 24 $U8 COLORTERM=truecolor "$DRIVER" --layers 2 --heads 2 "the cat sat"
	tui_wait "2 layers × 2 heads"
	# viridis' lowest colour #440154 appears as itself, not as a palette index.
	tui_screen_ansi | grep -q '48;2;68;1;84m' || tui_fail "no 24-bit colours"
	tui_keys i End
	tui_type " down"
	tui_wait "6 tok"   # keys still work with the direct-colour terminal description
	tui_keys Escape q
	st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status (truecolor): $st"
else
	echo "truecolor: not tested (no tmux-direct terminal description; Debian package ncurses-term)"
fi

# --- the config file: theme and key overrides ---
mkdir -p "$TUI_TMP/config/attnscope"
cat >"$TUI_TMP/config/attnscope/config.yaml" <<'YAML'
theme: grayscale
keys:
  down: [J]
  help: [F2, H]
YAML
tui_start 100 30 $U8 "$DRIVER" --layers 3 --heads 2 "the cat sat"
tui_wait "3 layers × 2 heads"
tui_keys j
tui_wait "j: no action here"
tui_keys J
tui_wait "L1 H0 │ grid"
tui_keys H
tui_wait "Keys (q or Esc closes"
tui_screen | grep -E -q '^  J +move down' || tui_fail "help does not show the rebound key"
tui_screen | grep -E -q '^  F2, H +show the keys' || tui_fail "help does not show the rebound help keys"
tui_keys q q
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status with a config file: $st"
# A broken config file: one line FILE:LINE:COLUMN: message, exit status 1, before the terminal
# is touched (nothing on standard output).
printf 'keys:\n  dwn: j\n' >"$TUI_TMP/config/attnscope/config.yaml"
XDG_CONFIG_HOME="$TUI_TMP/config" "$DRIVER" x >"$TUI_TMP/out" 2>"$TUI_TMP/err"
st=$?
[ $st = 1 ] && [ ! -s "$TUI_TMP/out" ] && [ "$(wc -l <"$TUI_TMP/err")" = 1 ] &&
	grep -q "config.yaml:2:3: unknown action 'dwn'" "$TUI_TMP/err" || tui_fail "config error: $st $(cat "$TUI_TMP/err")"
rm "$TUI_TMP/config/attnscope/config.yaml"
echo "ok"
