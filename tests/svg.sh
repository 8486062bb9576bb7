#!/bin/sh
# svg.sh -- figures: --print VIEW --format svg for every view is well-formed XML (xmllint), renders
# with a real renderer (rsvg-convert), gives the same bytes on every run and keeps its text as text;
# rendered to PNG, the centre of every coloured cell of the heatmap, the grid (half-block thumbnails)
# and a B - A comparison has exactly the colour the same view writes to a 24-bit terminal. Needs
# rsvg-convert, xmllint and node (tools/install-deps).
set -u
TEST_NAME=svg
. "${top_srcdir:-.}/tests/lib-cli.sh" # BIN SRC REF PY TOOLS TMP, ok/bad, expect_eq/_grep/_nogrep
M=$SRC/tests/data/models
for tool in rsvg-convert xmllint node; do
	command -v $tool >/dev/null || { echo "svg.sh: $tool is required (tools/install-deps)"; exit 99; }
done
TEXT="The cat sat on the mat."

# Every view of a BERT and of a GPT-2 with rotary-free and special tokens: valid, renders, same bytes.
for model in bert-mini llama-gqa; do
	for v in grid heatmap heads qk rollout headview neuron vectors qkstats dots softmax; do
		out="$TMP/$model-$v.svg"
		"$BIN" -m "$M/$model" --print $v --format svg --width 100 --token 2 "$TEXT" >"$out" 2>"$TMP/err"
		expect_eq "$model $v status" $? 0
		if xmllint --noout "$out" 2>"$TMP/err"; then ok; else bad "$model $v: not XML: $(head -3 "$TMP/err")"; fi
		if rsvg-convert "$out" -o "$TMP/r.png" 2>"$TMP/err"; then ok; else bad "$model $v: rsvg-convert: $(head -3 "$TMP/err")"; fi
		"$BIN" -m "$M/$model" --print $v --format svg --width 100 --token 2 "$TEXT" >"$TMP/again.svg" 2>/dev/null
		if cmp -s "$out" "$TMP/again.svg"; then ok; else bad "$model $v: two runs differ"; fi
	done
done
# Text as text: labels and titles are <text> elements, searchable.
expect_grep "heatmap labels are text" "$TMP/bert-mini-heatmap.svg" '<text x="[0-9 ]*" y="[0-9]*" fill="#[0-9a-f]*"[^>]*>\[CLS\]</text>'
expect_grep "heatmap title is text" "$TMP/bert-mini-heatmap.svg" '>queries</text>'
expect_grep "the colour bar's ends" "$TMP/bert-mini-heatmap.svg" '>linear</text>'
expect_eq "the picture is the canvas: 100 columns of 9 px" \
	"$(sed -n 's/^<svg .* width="\([0-9]*\)" height=.*/\1/p' "$TMP/bert-mini-heatmap.svg")" 900

# The head view as a picture is bertviz's: tokens in two columns and a line per head and key in the head's
# colour with the weight as its opacity; one line per weight above 0.005 of the selected token's row.
"$BIN" -m "$M/bert-mini" --print headview --format svg --layer 1 --token 3 --width 100 "$TEXT" >"$TMP/hv.svg" 2>/dev/null
"$BIN" -m "$M/bert-mini" --dump json --layer 1 "$TEXT" >"$TMP/hv.json" 2>/dev/null
expect_eq "head view lines = weights above 0.005" "$(grep -c '^<path d="M' "$TMP/hv.svg")" \
	"$(jq '[.attentions[0][][3][] | select(. > 0.005)] | length' "$TMP/hv.json")"
expect_eq "head view opacities = weights (sum)" \
	"$(sed -n 's/^<path d="M[^"]*" stroke="#[0-9a-f]*" stroke-opacity="\([0-9.]*\)".*/\1/p' "$TMP/hv.svg" | awk '{ s += $1 } END { printf "%.2f", s }')" \
	"$(jq '[.attentions[0][][3][] | select(. > 0.005)] | add' "$TMP/hv.json" | awk '{ printf "%.2f", $1 }')"
"$BIN" -m "$M/bert-mini" --print headview --format svg --layer 1 --width 100 "$TEXT" >"$TMP/hv-all.svg" 2>/dev/null
expect_eq "head view of every token: all rows' lines" "$(grep -c '^<path d="M' "$TMP/hv-all.svg")" \
	"$(jq '[.attentions[0][][][] | select(. > 0.005)] | length' "$TMP/hv.json")"

# Pixels: the SVG's rendering against the 24-bit terminal output of the same view, cell by cell.
pixels() { # NAME ARGS...: render both ways (of $TEXT) and compare
	name=$1
	shift
	COLORTERM=truecolor "$BIN" "$@" --color always --width 100 "$TEXT" >"$TMP/$name.ansi" 2>/dev/null
	"$BIN" "$@" --format svg --width 100 "$TEXT" >"$TMP/$name.svg" 2>/dev/null
	rsvg-convert "$TMP/$name.svg" -o "$TMP/$name.png"
	res=$(node "$SRC/tests/tools/ansi-vs-png.mjs" "$TMP/$name.ansi" "$TMP/$name.png" 9 18)
	cells=${res%% cells*}
	case "$res" in
	*", 0 differ"*) [ "$cells" -gt 50 ] && ok || bad "$name: only $cells coloured cells compared" ;;
	*) bad "$name: $res" ;;
	esac
}
pixels heatmap -m "$M/bert-mini" --print heatmap --layer 1 --head 1
pixels heatmap-light -m "$M/gpt2-mini" --print heatmap --theme light --scale log
pixels grid -m "$M/bert-mini" --print grid --theme cividis
pixels compare -m "$M/gpt2-mini" --print grid --compare "The cat sat on the rug."

# Usage: only with --print; a bad format is named.
"$BIN" -m "$M/bert-mini" --dump json --format svg "$TEXT" >"$TMP/out" 2>&1
expect_eq "--format without --print status" $? 2
expect_grep "--format without --print" "$TMP/out" "format of --print's output"
"$BIN" -m "$M/bert-mini" --print grid --format png "$TEXT" >"$TMP/out" 2>&1
expect_eq "--format png status" $? 2
expect_grep "--format png" "$TMP/out" "is not one of text, svg"

echo "svg.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
