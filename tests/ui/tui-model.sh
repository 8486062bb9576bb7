#!/bin/sh
# tui-model.sh -- the real binary's explorer under tmux on the fixture models: the grid has the
# model's shape, the heatmap panel shows the same weights as --dump csv (single head, hidden
# special tokens renormalised, mean over heads), typing reruns the model, the pair field builds
# [CLS] a [SEP] b [SEP], and a causal model shows its mask.
set -u
: "${top_srcdir:?}" "${ATTNSCOPE_BIN:?}"
. "$top_srcdir/tests/ui/lib.sh"
BERT="$top_srcdir/tests/data/models/bert-mini"
GPT2="$top_srcdir/tests/data/models/gpt2-mini"
[ -f "$BERT/config.json" ] && [ -f "$GPT2/config.json" ] || { echo "fixture models missing"; exit 77; }
U8="LC_ALL=C.UTF-8"
TEXT="The animal didn't cross the street because it was too tired"

# csv_weight MODEL LAYER HEAD Q K [TEXT_B]: the weight --dump csv reports, to 6 decimals.
csv() { "$ATTNSCOPE_BIN" -m "$1" --dump csv --layer "$2" ${3:+--head "$3"} "$TEXT"; }
panel_weight() { tui_screen | sed -n 's/.*weight  *\([0-9.]*\).*/\1/p' | head -1; }

tui_start 100 30 $U8 "$ATTNSCOPE_BIN" -m "$BERT" "$TEXT"
tui_wait "3 layers × 2 heads · 15 tokens"
tui_screen | grep -E -q '^\[CLS\] the +animal +didn +. +t +cross' || tui_fail "token strip"
tui_wait "15 tok │ L0 H0 │ grid"

# Layer 1, head 1, cell (query 2 "animal", key 10 "it").
tui_keys j l Enter
tui_wait "layer 1 head 1 ·"
tui_keys 2 g 1 0 '|'
tui_wait "query 2  animal"
tui_wait "key   10  it"
want=$(csv "$BERT" 1 1 | awk -F, '$3 == 2 && $4 == 10 { printf "%.6f", $NF }')
[ -n "$want" ] && [ "$(panel_weight)" = "$want" ] || tui_fail "weight $(panel_weight), --dump says $want"

# Hiding special tokens renormalises the row over the other keys.
tui_keys s
tui_wait "specials hidden"
want=$(csv "$BERT" 1 1 | awk -F, '$3 == 2 && $4 != 0 && $4 != 14 { s += $NF } $3 == 2 && $4 == 10 { w = $NF }
	END { printf "%.6f", w / s }')
tui_wait_true "renormalised weight $(panel_weight) != $want" sh -c '[ "$1" = "$2" ]' _ "$(panel_weight)" "$want"
tui_keys s
tui_wait_gone "specials hidden"

# The mean over the layer's heads.
tui_keys m
tui_wait "layer 1, mean of 2 heads"
want=$(csv "$BERT" 1 "" | awk -F, '$3 == 2 && $4 == 10 { s += $NF; n++ } END { printf "%.6f", s / n }')
[ "$(panel_weight)" = "$want" ] || tui_fail "mean weight $(panel_weight), --dump says $want"
tui_keys m

# Typing reruns the model; the pair field adds a second segment.
tui_keys i End
tui_type " today"
tui_wait "16 tok"
tui_wait "today"
tui_keys Tab
tui_type "yes"
tui_wait "18 tok"
tui_screen | grep -E -q 'today +\[SEP\] yes +\[S' || tui_fail "pair tokens"
tui_keys Escape q
tui_wait "3 layers × 2 heads"
tui_keys q
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status $st"

# GPT-2: causal, no special tokens, no pair field.
# It runs in a folder of its own, where S saves figures.
FIG="$TUI_TMP/figures"
mkdir -p "$FIG"
tui_start 100 30 $U8 sh -c 'cd "$0" && exec "$@"' "$FIG" "$ATTNSCOPE_BIN" -m "$GPT2" "Oh, this book? I've enjoyed it."
tui_wait "3 layers × 2 heads · 10 tokens"
tui_screen | grep -q '^pair' && tui_fail "a pair field for GPT-2"
tui_keys Enter
tui_wait "query 0  Oh"
tui_wait "weight     1.000000"    # the first token can only attend to itself
tui_keys G
tui_wait "query 9  ·."
# S saves the view as an SVG figure, never over an earlier one, and says where.
tui_keys S
tui_wait "saved attnscope-heatmap-L0H0.svg"
tui_keys S
tui_wait "saved attnscope-heatmap-L0H0-2.svg"
[ -s "$FIG/attnscope-heatmap-L0H0.svg" ] || tui_fail "no figure file"
grep -q '>queries</text>' "$FIG/attnscope-heatmap-L0H0.svg" || tui_fail "the figure is not the heatmap"
if command -v xmllint >/dev/null; then xmllint --noout "$FIG/attnscope-heatmap-L0H0-2.svg" || tui_fail "figure not XML"; fi
tui_keys p
tui_wait "this model takes one text"
tui_keys Q
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status $st"
echo ok
