#!/bin/sh
# tui-predict.sh -- the model's own predictions in the explorer under tmux: P opens the predictions
# view of the selected token, whose top-10, probabilities and surprisal are those of --dump json; y
# colours the token strip by surprisal (nats under each token instead of its id), the screen says so,
# and y again brings the ids back; a masked LM shows its prediction at a [MASK]; a model without a head
# says why in one line and refuses the surprisal strip.
set -u
: "${top_srcdir:?}" "${ATTNSCOPE_BIN:?}"
. "$top_srcdir/tests/ui/lib.sh"
GPT2="$top_srcdir/models/demo-gpt2"
BERT="$top_srcdir/tests/data/models/bert-mini"
NOHEAD="$top_srcdir/tests/data/models/qwen2-bias"
for m in "$GPT2" "$BERT" "$NOHEAD"; do [ -f "$m/config.json" ] || { echo "$m missing"; exit 77; }; done
command -v jq >/dev/null || { echo "tui-predict.sh: jq is required"; exit 99; }
U8="LC_ALL=C.UTF-8"
TEXT="river bread window stone seven garden horse silver morning letter music lamp river bread window stone seven garden horse silver morning letter music lamp"
D="$TUI_TMP/d.json"
"$ATTNSCOPE_BIN" -m "$GPT2" --dump json "$TEXT" >"$D" || { echo "FAIL: --dump"; exit 1; }

# P on the last token (nothing selected): its top-10 as --dump gives them, best first.
tui_start 200 34 $U8 "$ATTNSCOPE_BIN" -m "$GPT2" "$TEXT"
tui_wait "24 tok"
tui_keys P
tui_wait "predictions at token 23 lamp"
tui_wait "what it predicts for the next token"
for r in 0 1 9; do
	line=$(jq -r --argjson r $r '.topk[23] | "\(.ids[$r]) \(.logprobs[$r])"' "$D")
	id=${line% *} lp=$(printf '%.4f' "${line#* }")
	tui_screen | grep -E -q "^ *$((r + 1))\. .* $lp  .*\($id\)" || tui_fail "rank $((r + 1)): id $id log p $lp"
done
tui_wait "the last token: no next token to compare with"

# The selected token: the actual next token's probability and surprisal are the dump's.
tui_keys , ,  # the first selects the last token, the second the one before
tui_wait "predictions at token 22 music"
s=$(printf '%.4f' "$(jq '.surprisal[22]' "$D")")
tui_wait "surprisal of token 23: $s nats"
tui_wait "actual next token lamp (20450)"

# y: the strip shows each token's surprisal under it, and says so on the rule under it.
tui_keys y
tui_wait "token strip: surprisal of each token in nats"
tui_wait "surprisal strip (y): nats under each token"
want=$(jq -r '"-", (.surprisal[0:3][] | if . < 9.95 then (. * 10 | round / 10 | tostring) else (. | round | tostring) end)' "$D" | tr '\n' ' ')
got=$(tui_line 3 | tr -s ' ' | cut -d' ' -f1-4)
# jq's rounding prints 8 for 8.0: compare as numbers
tui_wait_true "strip row '$got', the dump's surprisals '$want'" sh -c '
	set -- $1 $2
	[ "$1" = "-" ] && [ "$5" = "-" ] || exit 1
	awk -v a="$2 $3 $4" -v b="$6 $7 $8" "BEGIN { split(a, x); split(b, y); for (i = 1; i <= 3; i++) if (x[i] + 0 != y[i] + 0) exit 1 }"
' _ "$got" "$want"
tui_line 3 | grep -q 38291 && tui_fail "the first token's id is still shown"
tui_keys y
tui_wait "token strip: ids"
tui_wait_gone "surprisal strip (y)"
tui_line 3 | grep -q '^38291 ' || tui_fail "ids back in the strip"
tui_keys Q
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status $st"

# A masked LM: P at the [MASK] shows what the model puts there; y is refused.
MT="the [MASK] sat on the mat"
"$ATTNSCOPE_BIN" -m "$BERT" --dump json "$MT" >"$D" || { echo "FAIL: --dump bert"; exit 1; }
tui_start 160 34 $U8 "$ATTNSCOPE_BIN" -m "$BERT" "$MT"
tui_wait "tok"
tui_keys P
tui_wait "predictions at token 2 [MASK]"
tui_wait "what it puts at this position"
lp=$(printf '%.4f' "$(jq '.topk[2].logprobs[0]' "$D")")
id=$(jq '.topk[2].ids[0]' "$D")
tui_screen | grep -E -q "^ *1\. .* $lp  .*\($id\)" || tui_fail "[MASK] top-1: id $id log p $lp"
tui_keys y
tui_wait "no surprisal: a masked LM predicts each token from both sides"
tui_keys Q
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status $st"

# No head: one line says why, in the view and for y.
tui_start 160 34 $U8 "$ATTNSCOPE_BIN" -m "$NOHEAD" "the cat sat"
tui_wait "tok"
tui_keys P
tui_wait "no output head: tie_word_embeddings is false and the file has no lm_head weight"
tui_keys y
tui_wait "no surprisal: no output head"
tui_keys Q
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status $st"
echo "tui-predict.sh: ok"
