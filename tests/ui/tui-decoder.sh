#!/bin/sh
# tui-decoder.sh -- the explorer under tmux on decoder fixtures: the grid and the status bar name
# grouped-query attention and the selected head's key/value head, windowed layers are marked, and
# the rotary key (o) switches the query/key views between q/k after rotary (the default) and before.
set -u
: "${top_srcdir:?}" "${ATTNSCOPE_BIN:?}"
. "$top_srcdir/tests/ui/lib.sh"
M="$top_srcdir/tests/data/models"
[ -f "$M/llama-gqa/config.json" ] && [ -f "$M/mistral-window/config.json" ] || { echo "fixture models missing"; exit 77; }
U8="LC_ALL=C.UTF-8"

tui_start 140 34 $U8 "$ATTNSCOPE_BIN" -m "$M/llama-gqa" "the cat sat on the mat"
tui_wait "2 layers × 6 q heads / 3 kv heads · 10 tokens"
tui_wait "6 q heads / 3 kv heads │ 10 tok │ L0 H0 kv0 │ grid"
tui_screen | grep -E -q '^kv +╭─+kv0─+╮ ╭─+kv1─+╮ ╭─+kv2─+╮' || tui_fail "kv brackets over the head numbers"
tui_keys l l l
tui_wait "L0 H3 kv1 │ grid"
tui_keys K
tui_wait "query/key geometry · layer 0 head 3, kv head 1 (shared by heads 2–3) · after rotary ·"
tui_keys o
tui_wait "queries and keys before rotary (not what the scores use)"
tui_wait "query/key geometry · layer 0 head 3, kv head 1 (shared by heads 2–3) · before rotary ·"
# The choice is shared by every query/key view.
tui_keys X
tui_wait "· before rotary"
tui_keys N
tui_wait "q, k before rotary (not the scores)"
tui_keys o
tui_wait "q, k after rotary"
tui_keys Q
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status $st"

# Sliding windows: the layer labels carry the window.
tui_start 140 34 $U8 "$ATTNSCOPE_BIN" -m "$M/mistral-window" "the cat sat on the mat and the dog"
tui_wait "2 layers × 4 q heads / 2 kv heads"
tui_screen | grep -E -q '^L0 w4 ' || tui_fail "L0 w4"
tui_keys Q
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status $st"

# No rotary: the key says so.
tui_start 120 30 $U8 "$ATTNSCOPE_BIN" -m "$M/gpt2-mini" "Oh, this book?"
tui_wait "3 layers × 2 heads"
tui_keys o
tui_wait "this model has no rotary embedding"
tui_keys Q
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status $st"
echo ok
