#!/bin/sh
# tui-corpus.sh -- the explorer on a corpus aggregate, through the real binary under tmux:
# `--corpus FILE` without an output opens it while the run goes on (progress with rate and ETA in
# the status bar, the head finder's table filling in), Ctrl-C stops the run keeping what is done
# and a second Ctrl-C quits; the Q/K, distribution and geometry views show the aggregate (up/down
# in the geometry show a sampled token's sentence); a one-text view says it needs a text, `a`
# switches to the text typed (the model is loaded) and back; `--load FILE` opens a saved aggregate
# without the model.
set -u
: "${top_srcdir:?}" "${ATTNSCOPE_BIN:?}"
. "$top_srcdir/tests/ui/lib.sh"
BERT="$top_srcdir/tests/data/models/bert-mini"
[ -f "$BERT/config.json" ] || { echo "fixture models missing"; exit 77; }
U8="LC_ALL=C.UTF-8"
C="$TUI_TMP/c.txt"
# Long enough that the run is still going when the first screens are checked (~10,000 texts/s
# on one thread of a loaded machine: 20 s or more).
awk 'BEGIN { for (i = 0; i < 150000; i++) { print "The cat sat on the mat number " i "."
	print "It was the best of times, it was the worst of times." } }' >"$C"

tui_start 120 40 $U8 "$ATTNSCOPE_BIN" -m "$BERT" --corpus "$C" --threads 1 --batch 1
tui_wait "head finder"
tui_wait "lines/s"
tui_wait "ETA"
tui_wait "corpus aggregate of"
tui_screen | grep -q "so far" || tui_fail "the run's aggregate is not marked as partial while it goes on"
tui_keys D
tui_wait "query/key statistics · layer 0"
tui_wait "per mean: the tokens after the first"
tui_keys X
tui_wait "query: the last token of each of"
tui_keys W
tui_wait "attention weight distributions · layer 0"
tui_keys K
tui_wait "corpus sample:"
tui_keys j
tui_wait "(line "
tui_screen | grep -E -q "\(line [0-9]+, token [0-9]+\): (The cat sat on the mat number [0-9]+\.|It was the best of times)" ||
	tui_fail "no sentence shown for the sampled token"
# Ctrl-C stops the run; the texts done stay.
tui_keys C-c
tui_wait "corpus run stopped:" 20
tui_screen | grep -q "lines/s" && tui_fail "progress still shown after the stop"
# A one-text view says so; a switches to the text typed, which the model runs.
tui_keys R
tui_wait "The rollout view needs one text"
tui_keys a
tui_wait "the text typed"
tui_keys i
tui_type "Dogs bark loudly."
tui_keys Enter
tui_wait "dogs"
tui_keys a
tui_wait "The rollout view needs one text"
tui_keys C-c
st=$(tui_exit_status)
[ "$st" = 0 ] || tui_fail "exit status $st"

# --load: a saved aggregate without the model.
"$ATTNSCOPE_BIN" -m "$BERT" --corpus "$C" --shard 1/100 --save "$TUI_TMP/a.json" 2>/dev/null
tui_start 100 30 $U8 "$ATTNSCOPE_BIN" --load "$TUI_TMP/a.json"
tui_wait "head finder · 6 heads · mean ± std over 3000 texts"
tui_keys a
tui_wait "the text typed"
tui_keys i
tui_type "x"
tui_wait "no model loaded (--load)"
tui_keys Escape
tui_keys Q
st=$(tui_exit_status)
[ "$st" = 0 ] || tui_fail "exit status $st"
echo "tui-corpus.sh: passed"
