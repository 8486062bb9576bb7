#!/bin/sh
# tui-weights.sh -- the weights key (Y) and the sink key (Z) under tmux in the real binary's explorer: every view that
# shows weights switches to value-weighted ‖α·f(x)‖ (valnorm.h) and back, the status bar says
# which weights are on, the heatmap panel gives the raw norm --dump json --weights norm writes and
# the cell its share of the row, also for a text typed before Y (the explorer then reruns it with
# value norms, computed only while Y is on) or after; a long text's compact trace refuses in one line and stays on α. Z
# hides the sink (the first token, or gpt-oss's learned one) and renormalises, saying so.
set -u
: "${top_srcdir:?}" "${ATTNSCOPE_BIN:?}"
. "$top_srcdir/tests/ui/lib.sh"
BERT="$top_srcdir/tests/data/models/bert-mini"
[ -f "$BERT/config.json" ] || { echo "fixture models missing"; exit 77; }
command -v jq >/dev/null || { echo "tui-weights.sh: jq is required"; exit 99; }
U8="LC_ALL=C.UTF-8"
TEXT="The capybara was playing"
NORM='‖αf‖'
panel() { tui_screen | sed -n "s/.*$1  *\([-0-9.e]*\).*/\1/p" | head -1; }

# 1. Y switches the grid (and with it every view) to ‖α·f‖, saying so, and back.
tui_start 100 34 $U8 "$ATTNSCOPE_BIN" -m "$BERT" "$TEXT"
tui_wait "tok │ L0 H0 │ grid"
n=$("$ATTNSCOPE_BIN" -m "$BERT" --dump json "$TEXT" | jq '.tokens | length')
tui_keys Y
tui_wait "$n tok │ $NORM │ L0 H0 │ grid"
tui_wait "weights: ‖α·f(x)‖, rows shared out to 1"
# 2. The heatmap of layer 1 head 1 at query 3, key 2: the panel's raw norm is the dump's, and the
# cell's weight its share of the row's sum.
tui_keys j l Enter
tui_wait "layer 1 head 1 ·"
tui_keys 3 g 2 '|'
tui_wait "query 3 "
tui_wait "key   2 "
"$ATTNSCOPE_BIN" -m "$BERT" --dump json --weights norm --layer 1 --head 1 "$TEXT" >"$TUI_TMP/n.json"
raw=$(jq -r '.attentions[0][0][3][2]' "$TUI_TMP/n.json")
share=$(jq -r '.attentions[0][0][3] | (.[2] / add)' "$TUI_TMP/n.json")
got_raw=$(panel '‖α·f‖') got_share=$(panel weight)
awk -v a="$got_raw" -v b="$raw" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 1e-5 * b) }' ||
	tui_fail "the panel's raw norm $got_raw, --dump says $raw"
awk -v a="$got_share" -v b="$share" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-6) }' ||
	tui_fail "the cell's share $got_share, the dump's row gives $share"
tui_screen | tail -1 | grep -q "$NORM" || tui_fail "the status bar says ‖αf‖ in the heatmap"
# 3. The head finder, rollout and head view read the same weights: the status bar says so, and the
# head finder's row of L1 H1 is --print heads --weights norm's.
want=$("$ATTNSCOPE_BIN" -m "$BERT" --print heads --weights norm --width 100 "$TEXT" | grep -E '^[^A-Za-z]*L1 H1 ' | sed 's/^[^L]*//')
tui_keys F
tui_wait "head finder"
tui_screen | grep -E '^[^A-Za-z]*L1 H1 ' | sed 's/^[^L]*//' | grep -q -F -- "$want" || tui_fail "the head finder's L1 H1 is not --print's: $want"
for key in R V; do
	tui_keys q "$key"
	tui_wait_true "the status bar says $NORM after $key" sh -c "tmux -S '$TUI_SOCK' capture-pane -p -t 0 | tail -1 | grep -q '$NORM'"
done
# 4. Y again: α, said so; the heatmap's panel has no raw line any more.
tui_keys Y
tui_wait "weights: attention α"
tui_wait_gone "$NORM │"
tui_keys q q q
[ "$(tui_exit_status)" = 0 ] || tui_fail "exit status"

# 5. The explorer computes value norms only while Y shows them: a text typed with Y off runs without
# them, and Y runs it again with them; typed with Y on, it keeps them. Each time the heatmap panel's
# raw norm is the dump's for the text shown.
raw_is_dumps() { # TEXT: the panel at layer 1 head 1, query 3, key 2 against --dump json --weights norm
	"$ATTNSCOPE_BIN" -m "$BERT" --dump json --weights norm --layer 1 --head 1 "$1" >"$TUI_TMP/n.json"
	raw=$(jq -r '.attentions[0][0][3][2]' "$TUI_TMP/n.json")
	got_raw=$(panel '‖α·f‖')
	awk -v a="$got_raw" -v b="$raw" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 1e-5 * b) }' ||
		tui_fail "after \"$1\": the panel's raw norm $got_raw, --dump says $raw"
}
tokens() { "$ATTNSCOPE_BIN" -m "$BERT" --dump json "$1" | jq '.tokens | length'; }
tui_start 100 34 $U8 "$ATTNSCOPE_BIN" -m "$BERT" "$TEXT"
tui_wait "tok │ L0 H0 │ grid"
tui_keys j l Enter
tui_wait "layer 1 head 1 ·"
tui_keys 3 g 2 '|'
tui_wait "key   2 "
tui_keys i End
tui_type " fast"
tui_wait "$(tokens "$TEXT fast") tok │ L1 H1"
tui_keys Escape Y
tui_wait "weights: ‖α·f(x)‖, rows shared"
tui_wait "$NORM │ L1 H1"
raw_is_dumps "$TEXT fast"
tui_keys i End
tui_type " today"
tui_wait "$(tokens "$TEXT fast today") tok │ $NORM │ L1 H1"
tui_keys Escape
raw_is_dumps "$TEXT fast today"
tui_keys Y
tui_wait "weights: attention α"
tui_keys Y # the trace shown has them: no rerun, at once
tui_wait "weights: ‖α·f(x)‖, rows shared"
tui_wait "$NORM │ L1 H1"
raw_is_dumps "$TEXT fast today"
tui_keys q q
[ "$(tui_exit_status)" = 0 ] || tui_fail "exit status"

# 6. A long text's compact trace keeps no n x n matrices: Y says why in one line and stays on α.
tui_start 200 34 $U8 ATTNSCOPE_TRACE_BUDGET=1 "$ATTNSCOPE_BIN" -m "$BERT" "$TEXT"
tui_wait "tok │ L0 H0 │ grid"
tui_keys Y
tui_wait "weights: attention α (value-weighted attention needs every head's matrix"
tui_screen | tail -1 | grep -q "$NORM" && tui_fail "the compact trace switched anyway"
tui_keys q
[ "$(tui_exit_status)" = 0 ] || tui_fail "exit status"
# 7. Z hides the sink: a decoder's first token (GPT-2 has no BOS: its first word takes the sink's
# weight), its column 0 and every row renormalised over the rest, said in the status bar; the head
# finder's sink score (the first token's weight here) is then 0 everywhere.
GPT2="$top_srcdir/tests/data/models/gpt2-mini"
tui_start 100 34 $U8 "$ATTNSCOPE_BIN" -m "$GPT2" "$TEXT"
tui_wait "tok │ L0 H0 │ grid"
tui_keys Z
tui_wait "tok │ no sink │ L0 H0 │ grid"
tui_wait "first token hidden, rows renormalised"
tui_keys j l Enter
tui_wait "layer 1 head 1 ·"
tui_keys 3 g 0 '|'
tui_wait "key   0 "
[ "$(panel weight)" = 0.000000 ] || tui_fail "the first token's column is not 0: $(panel weight)"
tui_keys 2 '|'
tui_wait "key   2 "
"$ATTNSCOPE_BIN" -m "$GPT2" --dump json --layer 1 --head 1 "$TEXT" >"$TUI_TMP/a.json"
want=$(jq -r '.attentions[0][0][3] | .[2] / (add - .[0])' "$TUI_TMP/a.json")
awk -v a="$(panel weight)" -v b="$want" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-6) }' ||
	tui_fail "the cell $(panel weight) is not α / (1 - α to the first token) = $want"
tui_keys F
tui_wait "head finder"
tui_wait "sink"
sinks=$(tui_screen | awk '/^ *head .* sink/ { for (i = 1; i <= NF; i++) if ($i == "sink") c = i; next }
	c && /^[^A-Za-z]*L[0-9]+ H[0-9]+ / { sub(/^[^L]*/, ""); n = split($0, f, " +"); print f[c + 1] }' | sort -u)
[ "$sinks" = 0.000 ] || tui_fail "the sink scores with the sink hidden: $sinks"
tui_keys Z
tui_wait "sink shown"
tui_wait_gone "no sink │"
tui_keys q q q
[ "$(tui_exit_status)" = 0 ] || tui_fail "exit status"

# 8. A learned sink (gpt-oss, from the shared reference models when present): the heatmap panel
# says what it took; Z drops its share and renormalises, and says so.
OSS=${ATTNSCOPE_SHARED_REF:-$top_srcdir/../shared/reference}/models/gptoss-tiny
if [ -f "$OSS/config.json" ]; then
	tui_start 160 34 $U8 "$ATTNSCOPE_BIN" -m "$OSS" "$TEXT"
	tui_wait "6 tok │ L0 H0 kv0 │ grid"
	tui_keys Enter 3 g
	tui_wait "sink took"
	tui_keys Z
	tui_wait "learned sink hidden, rows renormalised"
	tui_wait_gone "sink took"
	tui_screen | tail -1 | grep -q "no sink" || tui_fail "the status bar says the sink is hidden"
	tui_keys q q
	[ "$(tui_exit_status)" = 0 ] || tui_fail "exit status"
else
	echo "SKIPPED the learned sink: no $OSS"
fi
echo "tui-weights.sh: ok"
