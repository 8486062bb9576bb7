#!/bin/sh
# tui-lens.sh -- the logit lens in the explorer under tmux: L opens it; one row per residual stream (h0
# the embedding output .. the last, the model's own prediction), the selected token's column framed, the
# panel's top 5 those of `--dump json --lens` for the selected row and token; up/down change the row,
# , . the token (a long text scrolls sideways with it); a model without a causal head says why in one line.
set -u
: "${top_srcdir:?}" "${ATTNSCOPE_BIN:?}"
. "$top_srcdir/tests/ui/lib.sh"
GPT2="$top_srcdir/models/demo-gpt2"
NOHEAD="$top_srcdir/tests/data/models/qwen2-bias"
BERT="$top_srcdir/tests/data/models/bert-mini"
for m in "$GPT2" "$NOHEAD" "$BERT"; do [ -f "$m/config.json" ] || { echo "$m missing"; exit 77; }; done
command -v jq >/dev/null || { echo "tui-lens.sh: jq is required"; exit 99; }
U8="LC_ALL=C.UTF-8"
TEXT="river bread window stone seven garden horse silver morning letter music lamp river bread window stone seven garden horse silver morning letter music lamp"
D="$TUI_TMP/d.json"
"$ATTNSCOPE_BIN" -m "$GPT2" --dump json --lens "$TEXT" >"$D" || { echo "FAIL: --dump"; exit 1; }

# CELL LAYER TOKEN RANK: the panel's line for that entry of the dump's lens, as the view writes it.
panel_has() {
	line=$(jq -r --argjson l "$1" --argjson i "$2" --argjson r "$3" '.logit_lens[$l] | "\(.ids[$i][$r]) \(.logprobs[$i][$r])"' "$D")
	id=${line% *} lp=$(printf '%.4f' "${line#* }")
	want="^ *$(($3 + 1))\. .* $lp  .*\($id\)"
	tui_wait_true "rank $(($3 + 1)) at h$1 token $2: id $id log p $lp" screen_has "$want"
}
screen_has() { tui_screen | grep -E -q -- "$1"; }

tui_start 100 40 $U8 "$ATTNSCOPE_BIN" -m "$GPT2" "$TEXT"
tui_wait "24 tok"
tui_keys L
tui_wait "logit lens"
tui_wait "h4 out at token 23 lamp: the head alone"
for r in 0 1 4; do panel_has 4 23 $r; done
for row in "h0 emb" "h1" "h2" "h3" "h4 out"; do tui_screen | grep -q "^$row " || tui_fail "row $row"; done
# the last token's column is on screen: the text scrolled, an arrow says more is on the left
tui_screen | grep -q "◀" || tui_fail "no arrow for the columns scrolled off on the left"
tui_keys k k
tui_wait "h2 at token 23 lamp"
for r in 0 4; do panel_has 2 23 $r; done
tui_keys , ,  # the first selects the last token, the second the one before
tui_wait "h2 at token 22 music"
panel_has 2 22 0
tui_keys g
tui_wait "h0 emb at token 22 music"
panel_has 0 22 0
# the first token: the text scrolls back, the columns start at it
tui_keys 2 2 h  # h (left) with a count: 22 tokens back
tui_wait "h0 emb at token 0 river"
panel_has 0 0 0
tui_wait_true "columns from token 0" screen_has "^ *river +bread +window"
# The head finder: with token 0 selected, a last column dla, the dump's values for that token.
"$ATTNSCOPE_BIN" -m "$GPT2" --dump json --lens --token 0 "$TEXT" >"$TUI_TMP/dla.json" || tui_fail "--dump --token 0"
tui_keys F
tui_wait "direct logit attribution at the selected token to the next one"
v=$(jq -r '.dla[0][3] * 1000 | round / 1000 | tostring' "$TUI_TMP/dla.json")
tui_wait_true "L0 H3's dla $v" screen_has "L0 H3 .* $(printf '%.3f' "$v") "
tui_keys Q
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status $st"

# No head, and a masked LM's head: one line says why.
tui_start 120 30 $U8 "$ATTNSCOPE_BIN" -m "$NOHEAD" "the cat sat"
tui_wait "tok"
tui_keys L
tui_wait "no logit lens: no output head: tie_word_embeddings is false and the file has no lm_head weight"
tui_keys Q
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status $st"
tui_start 120 30 $U8 "$ATTNSCOPE_BIN" -m "$BERT" "the cat sat"
tui_wait "tok"
tui_keys L
tui_wait "no logit lens: the output head is a masked LM's"
tui_keys Q
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status $st"
echo "tui-lens.sh: ok"
