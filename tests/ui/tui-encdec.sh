#!/bin/sh
# tui-encdec.sh -- an encoder-decoder model in the explorer under tmux (issue 21, engine slice): the views
# read its encoder, the status line says the encoder is shown, the heatmap
# panel gives the encoder's weights as --dump csv does; T5 tokenizes the text as --dump does, and the
# explorer quits cleanly. Needs the shared reference.
set -u
: "${top_srcdir:?}" "${ATTNSCOPE_BIN:?}"
. "$top_srcdir/tests/ui/lib.sh"
REF=${ATTNSCOPE_SHARED_REF:-$top_srcdir/../shared/reference}
BART="$REF/models/bart-tiny"
T5="$REF/models/t5-tiny"
[ -f "$BART/config.json" ] && [ -f "$T5/config.json" ] || { echo "no shared reference at $REF: skipping"; exit 77; }
U8="LC_ALL=C.UTF-8"
TEXT="The king went up to the city."

tui_start 120 30 $U8 "$ATTNSCOPE_BIN" -m "$BART" "$TEXT"
tui_wait "(encoder)"
tui_keys l Enter
tui_wait "layer 0 head 1 ·"
tui_keys 2 g 1 '|'
tui_wait "query 2"
want=$("$ATTNSCOPE_BIN" -m "$BART" --dump csv --layer 0 --head 1 "$TEXT" | awk -F, '$3 == 2 && $4 == 1 { printf "%.6f", $NF }')
got=$(tui_screen | sed -n 's/.*weight  *\([0-9.]*\).*/\1/p' | head -1)
[ -n "$want" ] && [ "$got" = "$want" ] || tui_fail "weight $got, --dump says $want"
tui_keys q q
[ "$(tui_exit_status)" = 0 ] || tui_fail "bart: exit status $(tui_exit_status)"

tui_start 120 30 $U8 "$ATTNSCOPE_BIN" -m "$T5" "$TEXT"
tui_wait "(encoder)"
n=$("$ATTNSCOPE_BIN" -m "$T5" --dump json --top-k 0 "$TEXT" | jq '.ids | length')
tui_wait "$n tok"
tui_keys q
[ "$(tui_exit_status)" = 0 ] || tui_fail "t5: exit status $(tui_exit_status)"
echo "tui-encdec.sh: ok"
