#!/bin/sh
# tui-longtext.sh -- long texts with a compact trace (ATTNSCOPE_TRACE_BUDGET lowered so a fixture
# goes compact): the grid says its thumbnails come from recorded blocks, the heatmap zooms out and
# in around the cursor naming the zoom and the pooling while the cursor reads one pair's exact
# weight; --print of a long text is the same from a compact trace as from a full one, and --dump
# refuses more attention than the budget unless heads are picked.
set -u
: "${top_srcdir:?}" "${ATTNSCOPE_BIN:?}"
. "$top_srcdir/tests/ui/lib.sh"
M="$top_srcdir/tests/data/models/mistral-window"
[ -f "$M/config.json" ] || { echo "fixture model missing"; exit 77; }
U8="LC_ALL=C.UTF-8"
TEXT=
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
	TEXT="$TEXT The cat sat on the mat, and the dog sat on the log."
done

tui_start 140 40 $U8 ATTNSCOPE_TRACE_BUDGET=0 "$ATTNSCOPE_BIN" -m "$M" "$TEXT"
tui_wait "thumbnails max-pooled from 64×64 blocks"
tui_keys Enter
tui_wait "layer 0 head 0"
tui_keys j j
tui_wait "q2 k0 = "
exact=$(tui_screen | grep -o 'q2 k0 = [0-9.]*' | head -1)
tui_keys -
tui_wait "zoom 1:2 (cell = max of 2×2)"
tui_screen | grep -q "$exact" || tui_fail "the cursor's weight at zoom 1:2 ($exact)"
tui_keys d
tui_wait "zoom 1:2 (cell = mean of 2×2)"
tui_keys j
tui_wait "q4 k0 "
tui_keys - - -
tui_wait "zoom 1:16"
tui_keys + + + +
tui_wait_gone "zoom 1:"
tui_keys k k
tui_wait "$exact"
tui_keys Q
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status $st"

# --print of a long text: the heatmap zooms to the width; compact and full traces print the same
# heatmap and head finder (the grid of a compact trace pools recorded 64x64 blocks, checked in
# check_longtext).
for view in heatmap heads; do
	full=$("$ATTNSCOPE_BIN" -m "$M" --print "$view" --width 100 --color never --layer 1 --head 2 "$TEXT") ||
		tui_fail "--print $view"
	compact=$(ATTNSCOPE_TRACE_BUDGET=0 "$ATTNSCOPE_BIN" -m "$M" --print "$view" --width 100 --color never --layer 1 \
		--head 2 "$TEXT") || tui_fail "--print $view, compact"
	[ "$full" = "$compact" ] || tui_fail "--print $view differs between a full and a compact trace"
done
printf '%s\n' "$full" >/dev/null
ATTNSCOPE_TRACE_BUDGET=0 "$ATTNSCOPE_BIN" -m "$M" --print heatmap --width 160 --color never "$TEXT" |
	grep -q "zoom 1:4 (cell = max of 4×4)" || tui_fail "--print heatmap zooms to the width"

# --dump: all heads over the budget are refused by name; one head is written.
out=$(ATTNSCOPE_TRACE_BUDGET=400k "$ATTNSCOPE_BIN" -m "$M" --dump json "$TEXT" 2>&1) && tui_fail "--dump of every head"
printf '%s' "$out" | grep -q "choose heads with --layer and --head" || tui_fail "--dump message: $out"
ATTNSCOPE_TRACE_BUDGET=400k "$ATTNSCOPE_BIN" -m "$M" --dump json --layer 1 --head 2 "$TEXT" >"$TUI_TMP/one.json" ||
	tui_fail "--dump of one head"
"$ATTNSCOPE_BIN" -m "$M" --dump json --layer 1 --head 2 "$TEXT" | cmp -s - "$TUI_TMP/one.json" ||
	tui_fail "--dump of one head differs between a full and a compact trace"
echo ok
