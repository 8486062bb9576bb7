#!/bin/sh
# tui-ablate.sh -- head ablation in the explorer under tmux (B, E, O; the head finder's ablation column):
# B marks the selected head (a cross on its thumbnail, "ablated: L0H3 (zero)" in the status bar once the
# rerun is in); P then shows the clean and ablated top-1 and the change of the next token's surprisal,
# y the change under each token with * where the top-1 changed, all equal to --dump json --ablate's
# "surprisal_change" and "top1_changed"; O switches to mean-ablation (equal to --ablate-mode mean's) and
# then clears the marks; E marks and unmarks a whole layer. The head finder's ablation column (once
# ablation is in use: no column before) counts
# its heads in the title, equals the mean of the dump's surprisal_change for each head ablated alone and
# --print heads --ablation-effect, sorts, and Esc stops it on a long text, keeping the heads done.
set -u
: "${top_srcdir:?}" "${ATTNSCOPE_BIN:?}"
. "$top_srcdir/tests/ui/lib.sh"
GPT2="$top_srcdir/models/demo-gpt2"
[ -f "$GPT2/config.json" ] || { echo "$GPT2 missing"; exit 77; }
command -v jq >/dev/null || { echo "tui-ablate.sh: jq is required"; exit 99; }
U8="LC_ALL=C.UTF-8"
TEXT="river bread window stone seven garden horse silver morning letter music lamp river bread window stone seven garden horse silver morning letter music lamp"
D="$TUI_TMP/d.json" M="$TUI_TMP/m.json"
"$ATTNSCOPE_BIN" -m "$GPT2" --dump json --ablate 0.3 "$TEXT" >"$D" || { echo "FAIL: --dump --ablate"; exit 1; }
"$ATTNSCOPE_BIN" -m "$GPT2" --dump json --ablate 0.3 --ablate-mode mean "$TEXT" >"$M" || { echo "FAIL: --dump mean"; exit 1; }

tui_start 200 40 $U8 "$ATTNSCOPE_BIN" -m "$GPT2" "$TEXT"
tui_wait "24 tok"
tui_wait_gone "ablated: L"
tui_keys 3 ']' B
tui_wait "ablated: L0H3 (zero)"
tui_screen | grep -q "✗" || tui_fail "no mark on the ablated head's thumbnail"
[ "$(tui_screen | grep -c "✗")" = 1 ] || tui_fail "one head marked, one cross"

# P at token 22: the change of token 23's surprisal and the top-1s, as the dump says.
tui_keys P , ,
tui_wait "predictions at token 22 music"
tui_wait "ablated L0H3 (zero): the numbers above are the ablated run's"
s=$(printf '%+.4f' "$(jq '.ablation.surprisal_change[22]' "$D")")
tui_wait "surprisal change of token 23: $s nats"
a=$(printf '%.4f' "$(jq '.surprisal[22]' "$D")")
tui_wait "(ablated $a, clean "
jq -e '.ablation.top1_changed | index(22)' "$D" >/dev/null || tui_fail "the dump's top-1 at 22 did not change"
id=$(jq '.topk[22].ids[0]' "$D")
tui_screen | grep -q "top-1 changed: clean .* → ablated .*($id)" || tui_fail "top-1 changed to $id"
lp=$(printf '%.4f' "$(jq '.topk[22].logprobs[0]' "$D")")
tui_screen | grep -E -q "^ *1\. .* $lp  .*\($id\)" || tui_fail "the top-10 is the ablated run's ($id $lp)"

# y: the change under each token, * where the top-1 for it changed (tokens 1-3 and 10).
tui_keys y
tui_wait "surprisal change (y): ablated - clean nats under each token, * top-1 changed"
want=$(jq -r '.ablation as $a | [1, 2, 3, 10][] as $i | "\($a.surprisal_change[$i - 1]) \(if ($a.top1_changed | index($i - 1)) then "*" else "" end)"' "$D" |
	awk '{ printf "%+.1f%s ", $1, $2 }')
strip_has() {
	got=$(tui_line 3 | tr -s ' ')
	set -- $got
	[ "$1" = "-" ] && [ "$2 $3 $4 ${11} " = "$want" ]
}
tui_wait_true "strip row '$(tui_line 3)', the dump's changes '$want'" strip_has

# O: mean-ablation, as --ablate-mode mean; O again: no head marked, the clean run back.
tui_keys O
tui_wait "ablated: L0H3 (mean)"
s=$(printf '%+.4f' "$(jq '.ablation.surprisal_change[22]' "$M")")
tui_wait "surprisal change of token 23: $s nats"
tui_keys O
tui_wait "no head ablated (mode zero): the views show the clean run"
tui_wait_gone "ablated: L"
tui_wait_gone "surprisal change of token 23"
tui_wait "surprisal strip (y): nats under each token"

# E: the selected layer's every head, then none.
tui_keys q E
tui_wait "ablated: L0H0, L0H1, L0H2, L0H3 (zero)"
[ "$(tui_screen | grep -o "✗" | wc -l)" = 4 ] || tui_fail "four crosses"
tui_keys E
tui_wait "no head ablated: the views show the clean run"
tui_wait_gone "ablated: L"
tui_screen | grep -q "✗" && tui_fail "crosses left"

# F: the ablation column, each head ablated alone; L0H3's is the dump's mean surprisal change.
tui_keys x F  # no token selected: no dla column
tui_wait "ablation  label"
tui_wait_gone "(Esc stops)" 60
want=$(printf '%+.3f' "$(jq '.ablation.surprisal_change | add / length' "$D")")
tui_screen | grep "L0 H3 " | grep -q -F -- " $want  self" || tui_fail "L0 H3's ablation $want"
tui_wait "ablation   change of mean surprisal (nats, ablated - clean) with the head alone zero-ablated"
"$ATTNSCOPE_BIN" -m "$GPT2" --width 200 --print heads --ablation-effect --sort ablation "$TEXT" >"$TUI_TMP/p.txt" ||
	tui_fail "--print heads --ablation-effect"
for h in 0 1 2 3; do
	row=$(grep -E "^ *L1 H$h " "$TUI_TMP/p.txt" | tr -s ' ')
	tui_screen | tr -s ' ' | grep -q -F -- "$row" || tui_fail "L1 H$h: --print gives '$row'"
done
tui_keys Right Right Right Right Right Right Right Right Right
tui_wait "sorted by ablation, largest first"
first=$(grep -E "^ *L[0-9] H[0-9] " "$TUI_TMP/p.txt" | head -1 | tr -s ' ' | cut -d' ' -f2-3)
[ "$first" = "L0 H3" ] || tui_fail "--print heads --sort ablation starts with '$first'"
tui_screen | grep -A1 "^  head " | tail -1 | grep -q "L0 H3" || tui_fail "sorted: L0 H3 first"
tui_keys Q
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status $st"

# The column comes with ablation in use (here O, twice: back to zero); Esc stops it on a long text,
# keeping the heads done; the next Esc closes the view.
LONG=$(for i in 1 2 3 4 5 6 7 8 9 10; do printf '%s ' "$TEXT"; done)
LONG=${LONG% }
tui_start 200 40 $U8 "$ATTNSCOPE_BIN" -m "$GPT2" "$LONG"
tui_wait "240 tok" 30
tui_keys F
tui_wait "head finder"
tui_screen | grep -q "ablation  " && tui_fail "an ablation column before ablation is used"
tui_keys O
tui_wait "ablation mode: mean (B marks a head; F: each head's ablation)"
tui_keys O
tui_wait "ablation mode: zero (B marks a head; F: each head's ablation)"
early() { tui_screen | grep -E -q "ablation column: [0-9] of 16 heads \(Esc stops\)"; }
tui_wait_true "the column's progress in the title" early
tui_keys Escape
tui_wait "ablation column stopped (Esc) after"
n=$(tui_screen | sed -n 's/.*stopped (Esc) after \([0-9]*\) of 16 heads.*/\1/p' | head -1)
[ -n "$n" ] && [ "$n" -lt 16 ] || tui_fail "stopped after '$n' of 16 heads"
tui_wait "head finder"
tui_wait_gone "(Esc stops)"
[ "$(tui_screen | grep -E -c 'L[0-9] H[0-9] .* [+-][0-9]+\.[0-9]{3}  ')" = "$n" ] || tui_fail "$n heads with a value"
tui_keys Escape
tui_wait_gone "head finder"
tui_keys Q
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status $st"
echo "tui-ablate.sh: ok"
