#!/bin/sh
# pixels.sh -- pixel heatmaps: the heatmap (and the grid's pooled thumbnails) as sixel and kitty images.
# --print --format sixel|kitty: the images decoded back (tests/tools/term-images.mjs, a decoder of its
# own) give, token pair by token pair, the colour the SVG of the same heatmap renders to (rsvg-convert),
# and the text never lands on an image's cells. The explorer in a pseudo-terminal that answers like a
# sixel or kitty terminal (tests/tools/fake-term.py): --pixels auto asks once, draws the same pixels as
# --print, and a terminal that does not answer costs the timeout once. Needs node, rsvg-convert, python3.
set -u
TEST_NAME=pixels
. "${top_srcdir:-.}/tests/lib-cli.sh" # BIN SRC REF PY TOOLS TMP, ok/bad, expect_eq/_grep/_nogrep
M=$SRC/tests/data/models
TOOL="node $SRC/tests/tools/term-images.mjs"
FAKE="/usr/bin/python3 $SRC/tests/tools/fake-term.py"
for tool in rsvg-convert node; do
	command -v $tool >/dev/null || { echo "pixels.sh: $tool is required (tools/install-deps)"; exit 99; }
done
TEXT="The cat sat on the mat."

# --print: each protocol against the SVG's rendering, pair by pair; no text over the image.
against_svg() { # NAME ARGS...
	name=$1
	shift
	COLORTERM=truecolor "$BIN" "$@" --color always --width 100 "$TEXT" >"$TMP/$name.ansi" 2>/dev/null
	"$BIN" "$@" --format svg --width 100 "$TEXT" >"$TMP/$name.svg" 2>/dev/null
	rsvg-convert "$TMP/$name.svg" -o "$TMP/$name.png"
	for proto in sixel kitty; do
		"$BIN" "$@" --format $proto --width 100 "$TEXT" >"$TMP/$name.$proto" 2>"$TMP/err"
		expect_eq "$name $proto status" $? 0
		res=$($TOOL compare "$TMP/$name.$proto" "$TMP/$name.ansi" "$TMP/$name.png" 9 18 2>&1)
		case "$res" in
		*" pairs, 0 differ") ok ;;
		*) bad "$name $proto: $res" ;;
		esac
		expect_eq "$name $proto: no text over the image" "$($TOOL overlap "$TMP/$name.$proto" 10 20 | sed 's/, [0-9]* text cells//')" \
			"1 images, 0 over images"
	done
}
against_svg bert -m "$M/bert-mini" --print heatmap --layer 1 --head 1
against_svg gpt2-light-log -m "$M/gpt2-mini" --print heatmap --theme light --scale log
against_svg mean-cividis -m "$M/llama-gqa" --print heatmap --mean layer --theme cividis
against_svg compare -m "$M/gpt2-mini" --print heatmap --compare "The cat sat on the rug."
# The pixel sizes: one block per token pair, a text row tall (20 px in a terminal that does not say).
expect_eq "9 tokens, blocks of 20 px" "$($TOOL list "$TMP/bert.sixel")" "sixel 180x180 at 7,6"
expect_eq "kitty: the same image" "$($TOOL list "$TMP/bert.kitty")" "kitty 180x180 at 7,6"
# A long text: 301 tokens in the 63 columns beside the panel (630 px) get 2 x 2 pixels per token pair,
# unpooled; 701 tokens do not fit and are max-pooled 1:2 (351 blocks of 1 pixel).
LONG=$(awk 'BEGIN { for (i = 0; i < 299; i++) printf "a "; }')
"$BIN" -m "$M/llama-gqa" --print heatmap --format sixel --width 100 "$LONG" >"$TMP/long.six" 2>/dev/null
expect_eq "301 tokens: 2 pixels each" "$($TOOL list "$TMP/long.six" | sed 's/ at .*//')" "sixel 602x602"
if grep -q "zoom" "$TMP/long.six"; then bad "301 tokens: pooled"; else ok; fi
LONGER=$(awk 'BEGIN { for (i = 0; i < 700; i++) printf "a "; }')
"$BIN" -m "$M/llama-gqa" --print heatmap --format sixel --width 100 "$LONGER" >"$TMP/longer.six" 2>/dev/null
expect_eq "701 tokens: pooled to the pixels there are" "$($TOOL list "$TMP/longer.six" | sed 's/ at .*//')" "sixel 351x351"
expect_grep "701 tokens: the title says the pooling" "$TMP/longer.six" "zoom 1:2"
# The grid's thumbnails, pooled in cells, are images at full resolution: 3 layers x 2 heads of 80 tokens.
LONG80=$(awk 'BEGIN { for (i = 0; i < 79; i++) printf "word "; }')
"$BIN" -m "$M/gpt2-mini" --print grid --format sixel --width 100 "$LONG80" >"$TMP/grid.six" 2>/dev/null
expect_eq "grid: one image per head" "$($TOOL list "$TMP/grid.six" | grep -c '^sixel 400x400 ')" 6
expect_eq "grid: no text over the thumbnails" "$($TOOL overlap "$TMP/grid.six" 10 20 | sed 's/.*, //')" "0 over images"
"$BIN" -m "$M/gpt2-mini" --print grid --format sixel --width 100 "$TEXT" >"$TMP/grid-short.six" 2>/dev/null
expect_eq "grid of a short text: thumbnails at full resolution stay in cells" "$($TOOL list "$TMP/grid-short.six" | wc -l)" 0
# Same bytes on every run.
"$BIN" -m "$M/bert-mini" --print heatmap --layer 1 --head 1 --format sixel --width 100 "$TEXT" >"$TMP/again" 2>/dev/null
if cmp -s "$TMP/again" "$TMP/bert.sixel"; then ok; else bad "sixel: two runs differ"; fi

# The explorer in a terminal that answers.
live() { # ANSWER LOG OUT ARGS... ::: STEPS
	answer=$1 log=$2 out=$3
	shift 3
	$FAKE --answer "$answer" --out "$out" --log "$log" -- "$BIN" "$@"
}
for proto in sixel kitty; do
	live $proto "$TMP/$proto.log" "$TMP/$proto.live" -m "$M/bert-mini" --layer 1 --head 1 --pixels auto "$TEXT" \
		::: sleep:0.5 key:\\r wait:queries
	expect_eq "$proto: asked once" "$(grep -c ' asked$' "$TMP/$proto.log")" 1
	expect_grep "$proto: the heatmap opened" "$TMP/$proto.log" "seen queries"
	res=$($TOOL same "$TMP/$proto.live" "$TMP/bert.$proto" 9)
	expect_eq "$proto: the explorer's image = --print's" "$res" "$proto 180x180 vs $proto 180x180: 81 pairs, 0 differ"
	expect_grep "$proto: exits cleanly" "$TMP/$proto.log" "exit 0"
done
expect_grep "kitty: images deleted at the end" "$TMP/kitty.live" "$(printf '\033_Ga=d,d=A,q=2')"
# The cursor moves: the image is sent again, with the ring one pair down.
live sixel "$TMP/move.log" "$TMP/move.live" -m "$M/bert-mini" --pixels auto "$TEXT" ::: sleep:0.5 key:\\r wait:queries key:j sleep:0.3
expect_eq "cursor move: a new image" "$($TOOL list "$TMP/move.live" | wc -l)" 2
# I turns them off (the status says so) and on again without asking the terminal again.
live sixel "$TMP/toggle.log" "$TMP/toggle.live" -m "$M/bert-mini" --pixels auto "$TEXT" \
	::: sleep:0.5 key:\\r wait:queries key:I "wait:character cells" key:I "wait:pixel heatmaps on"
expect_grep "I: off" "$TMP/toggle.log" "seen character cells"
expect_grep "I: on again" "$TMP/toggle.log" "seen pixel heatmaps on"
expect_eq "I: asked once" "$(grep -c ' asked$' "$TMP/toggle.log")" 1
# The zoom keys say the image already shows the whole matrix.
live sixel "$TMP/zoom.log" "$TMP/zoom.live" -m "$M/bert-mini" --pixels auto "$TEXT" ::: sleep:0.5 key:\\r wait:queries key:- "wait:show the whole matrix"
expect_grep "zoom in pixel mode: said" "$TMP/zoom.log" "seen show the whole matrix"
# A terminal that does not answer: the explorer waits once (500 ms), then I says so at once.
live none "$TMP/none.log" "$TMP/none.live" -m "$M/bert-mini" --pixels auto "$TEXT" ::: sleep:1 key:I "wait:did not answer"
expect_grep "no answer: said" "$TMP/none.log" "seen did not answer"
expect_eq "no answer: asked once" "$(grep -c ' asked$' "$TMP/none.log")" 1
took=$(awk '/ key I$/ { k = $1 } / seen did not answer$/ { s = $1 } END { printf "%d", (s - k) * 1000 }' "$TMP/none.log")
if [ "$took" -lt 400 ]; then ok; else bad "no answer: I took $took ms (the timeout again?)"; fi
expect_eq "no answer: no image" "$($TOOL list "$TMP/none.live" | wc -l)" 0
# A terminal without either protocol; off by default: nothing asked.
live plain "$TMP/plain.log" "$TMP/plain.live" -m "$M/bert-mini" "$TEXT" ::: sleep:0.5 key:I "wait:neither sixel nor kitty"
expect_grep "plain: said" "$TMP/plain.log" "seen neither sixel nor kitty"
live sixel "$TMP/off.log" "$TMP/off.live" -m "$M/bert-mini" "$TEXT" ::: sleep:0.5 key:\\r wait:queries
expect_eq "default off: nothing asked" "$(grep -c ' asked$' "$TMP/off.log")" 0
expect_eq "default off: no image" "$($TOOL list "$TMP/off.live" | wc -l)" 0
# The config file turns them on; the cell size the kernel reports sets the blocks (16 px rows here).
printf 'pixels: auto\n' >"$TMP/config.yaml"
$FAKE --answer sixel --pixels 8x16 --out "$TMP/cfg.live" --log "$TMP/cfg.log" -- "$BIN" --config "$TMP/config.yaml" \
	-m "$M/bert-mini" "$TEXT" ::: sleep:0.5 key:\\r wait:queries
expect_eq "config pixels: auto, cells of 8x16" "$($TOOL list "$TMP/cfg.live" | sed 's/ at .*//')" "sixel 144x144"

# Inside tmux (3.3 here, built without sixel), tmux answers for itself: character cells, and I says why.
if command -v tmux >/dev/null; then
	sock="attnscope-pixels-$$"
	tmux -L "$sock" -f /dev/null new-session -d -x 100 -y 30 "$BIN -m $M/bert-mini --pixels auto '$TEXT'"
	sleep 2
	tmux -L "$sock" send-keys I
	sleep 1
	tmux -L "$sock" capture-pane -p >"$TMP/tmux.txt"
	tmux -L "$sock" kill-server 2>/dev/null
	if tmux -V | grep -q 'tmux 3\.[0-3]'; then
		expect_grep "tmux: says why" "$TMP/tmux.txt" "tmux does not draw sixel here"
	fi
fi

# Usage.
"$BIN" -m "$M/bert-mini" --pixels maybe "$TEXT" >"$TMP/out" 2>&1
expect_eq "--pixels maybe status" $? 2
expect_grep "--pixels maybe" "$TMP/out" "off, auto, sixel, kitty"

echo "pixels.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
