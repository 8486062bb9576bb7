#!/bin/sh
# robust-term.sh -- the real binary on the fixture BERT in terminals of every kind (issue 6): exactly
# 40x12, one column or row less, tiny panes down to 1x1, a resize storm while the model reruns, a
# key storm, TERM=dumb / unset / unknown, NO_COLOR, the C locale, and standard input or output
# not a terminal. Each case asserts the message or what is on the screen, that the program is
# still alive, and its exit status. (tui-synth.sh covers the same terminals on synthetic traces.)
set -u
: "${top_srcdir:?}" "${ATTNSCOPE_BIN:?}"
. "$top_srcdir/tests/ui/lib.sh"
BERT="$top_srcdir/tests/data/models/bert-mini"
[ -f "$BERT/config.json" ] || { echo "fixture model missing"; exit 77; }
U8="LC_ALL=C.UTF-8"
# Under ASan: ncurses' own leak when newterm fails (tests/ui/ncurses.supp) is not ours.
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$top_srcdir/tests/ui/ncurses.supp:print_suppressions=0"
export LSAN_OPTIONS

# tui_alive: the program has not exited (no status written yet).
tui_alive() { [ ! -s "$TUI_STATUS" ]; }
tui_quit_ok() { # send KEYS..., then expect exit status 0
	tui_keys "$@"
	st=$(tui_exit_status)
	[ "$st" = 0 ] || tui_fail "exit status $st"
}
# run_plain WANT_STATUS WANT_MESSAGE COMMAND...: run outside tmux, check status and stderr.
run_plain() {
	want_st=$1 want_msg=$2
	shift 2
	"$@" >"$TUI_TMP/out" 2>"$TUI_TMP/err"
	st=$?
	[ "$st" = "$want_st" ] || { echo "FAIL: $*: exit status $st, want $want_st"; exit 1; }
	[ "$(cat "$TUI_TMP/err")" = "$want_msg" ] || { echo "FAIL: $*: message '$(cat "$TUI_TMP/err")'"; exit 1; }
	[ ! -s "$TUI_TMP/out" ] || { echo "FAIL: $*: wrote to standard output"; exit 1; }
}
# pane_text: what the program printed, scrollback included (tmux scrolls a dead pane's screen away).
pane_text() { tui_tmux capture-pane -p -S -100 -t 0 | grep -v -e '^$' -e '^Pane is dead'; }

touch "$TUI_TMP/stamp" # nothing in the model folder may change while the explorer runs (see the key storm)

# --- exactly 40x12: everything fits, and the keys work ---
tui_start 40 12 $U8 "$ATTNSCOPE_BIN" -m "$BERT" "the cat sat"
tui_wait "3 layers × 2 heads · 5 tokens"
tui_wait " bert-mini │ 5 tok │ L0 H0 │ grid"
tui_screen | grep -E -q '^\[CLS\] the +cat +sat +\[SEP\]' || tui_fail "token strip at 40x12"
tui_width_is 40 || tui_fail "rule not 40 wide"
tui_keys Enter
tui_wait "L0 H0 │ heatmap"
tui_keys j
tui_wait "the → [CLS] = 0.000"   # the cursor panel, cut to 40 columns
tui_quit_ok Q

# --- one column or one row less than 40x12: a message naming both sizes; keys still work ---
tui_start 39 12 $U8 "$ATTNSCOPE_BIN" -m "$BERT" "the cat sat"
tui_wait "too small 39x12"
tui_wait "need 40x12"
tui_tmux resize-window -t 0 -x 40 -y 12
tui_wait " bert-mini │ 5 tok │ L0 H0 │ grid"
tui_tmux resize-window -t 0 -x 40 -y 11
tui_wait "too small 40x11"
tui_keys l          # acted on while too small, shown once there is room
tui_tmux resize-window -t 0 -x 60 -y 14
tui_wait "│ L0 H1 │ grid"
tui_quit_ok Q

# --- tiny panes: the message shrinks to what fits, nothing breaks ---
tui_start 80 24 $U8 "$ATTNSCOPE_BIN" -m "$BERT" "the cat sat"
tui_wait "│ L0 H0 │ grid"
for size in 20x6 12x4 5x1 1x5 2x2 1x1 3x40 200x3; do
	tui_tmux resize-window -t 0 -x "${size%x*}" -y "${size#*x}"
	sleep 0.2
	tui_alive || tui_fail "exited at $size"
done
tui_tmux resize-window -t 0 -x 12 -y 4
tui_wait "too small 1"   # "too small 12x4" cut to the width: "too small 1…"
tui_tmux resize-window -t 0 -x 80 -y 24
tui_wait_true "no redraw at 80 columns" tui_width_is 80
tui_wait "│ L0 H0 │ grid"
tui_quit_ok Q

# --- a resize storm while typing: every size from 1x1 to 160x50, the model rerunning ---
tui_start 100 30 $U8 "$ATTNSCOPE_BIN" -m "$BERT" "the cat"
tui_wait "4 tok │ L0 H0 │ grid"
tui_keys i End
awk 'BEGIN { srand(6); for (i = 0; i < 150; i++) printf "%d %d\n", 1 + int(rand() * 160), 1 + int(rand() * 50) }' |
while read -r w h; do
	tui_tmux resize-window -t 0 -x "$w" -y "$h"
	[ $((w % 5)) = 0 ] && tui_type " sat"
done
tui_alive || tui_fail "died in the resize storm"
tui_tmux resize-window -t 0 -x 90 -y 25
tui_wait_true "no redraw at 90 columns after the storm" tui_width_is 90
n=$(awk 'BEGIN { srand(6); for (i = 0; i < 150; i++) { w = 1 + int(rand() * 160); rand(); if (w % 5 == 0) n++ } print n }')
tui_keys Escape
tui_wait "$((4 + n)) tok │ L0 H0 │ grid" 20    # every " sat" typed during the storm arrived
tui_quit_ok Q

# --- a key storm: 1500 keys from every binding but quitting, typing included, no sleeps ---
tui_start 100 30 $U8 "$ATTNSCOPE_BIN" -m "$BERT" "a key storm in a teacup"
tui_wait "│ L0 H0 │ grid"
KEYS="j k h l J H L Up Down Left Right PPage NPage Home End g G | Enter [ ] { } m M n d + = - r z t b , . x c s
F K R V N A D X W ? i p Tab BTab BSpace DC C-u C-k C-w C-a C-e C-l a o w 0 1 2 3 9 Space é 日"
for round in 1 2 3; do
	# shellcheck disable=SC2086
	set -- $(echo $KEYS | awk -v seed=$round '{ srand(seed); for (i = 0; i < 500; i++) printf "%s ", $(1 + int(rand() * NF)) }')
	tui_keys "$@"
	tui_alive || tui_fail "died in key storm round $round"
done
sleep 1
tui_alive || tui_fail "died after the key storm"
tui_keys Escape Escape
tui_quit_ok Q
[ -z "$(find -L "$BERT" -newer "$TUI_TMP/stamp")" ] || tui_fail "the explorer changed the model folder"

# --- TERM: dumb (no cursor addressing), unset, unknown: one line, exit status 1 ---
tui_start 80 24 $U8 TERM=dumb "$ATTNSCOPE_BIN" -m "$BERT" "the cat"
st=$(tui_exit_status); [ "$st" = 1 ] || tui_fail "TERM=dumb: exit status $st"
[ "$(pane_text)" = "attnscope: the terminal 'dumb' cannot move the cursor; use --print or --dump" ] ||
	tui_fail "TERM=dumb message"
tui_start 80 24 $U8 env -u TERM "$ATTNSCOPE_BIN" -m "$BERT" "the cat"
st=$(tui_exit_status); [ "$st" = 1 ] || tui_fail "TERM unset: exit status $st"
[ "$(pane_text)" = "attnscope: cannot use the terminal '(TERM unset)'" ] || tui_fail "TERM unset message"
tui_start 80 24 $U8 TERM=no-such-terminal "$ATTNSCOPE_BIN" -m "$BERT" "the cat"
st=$(tui_exit_status); [ "$st" = 1 ] || tui_fail "unknown TERM: exit status $st"
[ "$(pane_text)" = "attnscope: cannot use the terminal 'no-such-terminal'" ] || tui_fail "unknown TERM message"

# --- NO_COLOR: no colour at all, attributes and shade characters instead ---
tui_start 80 24 $U8 NO_COLOR=1 "$ATTNSCOPE_BIN" -m "$BERT" "the cat sat"
tui_wait "│ L0 H0 │ grid"
tui_wait_gone "running…" # the grid's thumbnails come with the first trace (slow under ASan)
tui_screen_ansi | grep -E -q '\[([34][0-7]|[34]8;[25];)' && tui_fail "colour codes with NO_COLOR"
tui_screen | grep -q '▀' && tui_fail "half blocks (they need colour) with NO_COLOR"
tui_screen | grep -E -q '[@%#*+=:-]{2,}' || tui_fail "no shade characters with NO_COLOR"
tui_keys Enter
tui_wait "L0 H0 │ heatmap"
tui_screen_ansi | grep -E -q '\[([34][0-7]|[34]8;[25];)' && tui_fail "colour codes in the heatmap with NO_COLOR"
tui_quit_ok Q

# --- the C locale (LANG=C, as on a server without locales): ASCII only; UTF-8 text from the
# command line is still UTF-8 for the tokenizer; typed non-ASCII is ignored, ASCII still works ---
tui_start 80 20 env -u LC_ALL -u LC_CTYPE LANG=C "$ATTNSCOPE_BIN" -m "$BERT" "café au lait"
tui_wait "3 layers x 2 heads - 6 tokens"   # [CLS] cafe au lai ##t [SEP], "##" drawn as "+++"
tui_screen | grep -E -q '^\[CLS\] cafe +au +lai\+\+\+t +\[SEP\]' || tui_fail "accents stripped by the tokenizer"
LC_ALL=C tui_screen | grep -q "$(printf '[\200-\377]')" && tui_fail "non-ASCII bytes on the screen in the C locale"
tui_keys i End
tui_type " né"
sleep 0.5
tui_type " x"
tui_wait "8 tok"
tui_screen | grep -E -q '^\[CLS\] cafe +au +lai\+\+\+t +n +x +\[SEP\]' || tui_fail "typing in the C locale"
LC_ALL=C tui_screen | grep -q "$(printf '[\200-\377]')" && tui_fail "non-ASCII bytes after typing"
tui_keys Escape
tui_quit_ok Q

# --- standard input or output not a terminal: the explorer refuses, pointing to the text modes ---
MSG="attnscope: the explorer needs a terminal; use --dump or --print in scripts"
echo "the cat" | run_plain 2 "$MSG" "$ATTNSCOPE_BIN" -m "$BERT" -
run_plain 2 "$MSG" "$ATTNSCOPE_BIN" -m "$BERT" "the cat" </dev/null
tui_start 80 24 $U8 sh -c '"$1" -m "$2" "the cat" >"$3/out" 2>"$3/err"' sh "$ATTNSCOPE_BIN" "$BERT" "$TUI_TMP"
st=$(tui_exit_status); [ "$st" = 2 ] || tui_fail "stdout not a terminal: exit status $st"
[ "$(cat "$TUI_TMP/err")" = "$MSG" ] || tui_fail "stdout not a terminal: $(cat "$TUI_TMP/err")"
[ ! -s "$TUI_TMP/out" ] || tui_fail "escape codes written to a file"
echo ok
