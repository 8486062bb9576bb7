#!/bin/sh
# encdec-crossviews.sh -- the head finder and the head view on cross-attention (issue 21, views), on the
# committed encoder-decoder fixtures: every cell of `--print heads --stack cross` (and each head's label)
# against tests/tools/ref_crossheads.py, which computes the scores again with numpy from --dump json's
# decoder.cross_attentions; --sort by a cross score orders the heads as the reference does; the encoder's
# and the decoder's tables keep their own columns. The head view under cross-attention: the selected
# target token's bars are its cross-attention row over the source's tokens (the picked head's largest
# weight against the dump), and its SVG draws lines from the target token (left) to the source's tokens
# (right), their opacities the weights. The grid's --stack all: three titled sections, each section's
# thumbnails those of the stack alone. Needs jq and numpy.
set -u
TEST_NAME=encdec-crossviews
. "${top_srcdir:-.}/tests/lib-cli.sh" # BIN SRC REF PY TOOLS TMP, ok/bad, expect_eq/_grep/_nogrep
M=$SRC/tests/data/models
export LC_ALL=C.UTF-8 XDG_CONFIG_HOME="$TMP/no-config"
command -v jq >/dev/null || { echo "encdec-crossviews.sh: jq is required"; exit 99; }
[ -f "$M/bart-encdec/config.json" ] && [ -f "$M/t5-encdec/config.json" ] || { echo "encdec fixtures missing"; exit 77; }
"$PY" -c 'import numpy' 2>/dev/null || { echo "encdec-crossviews.sh: numpy is required"; exit 77; }

# The printed table (3 decimals) against the reference (9): every cell within rounding, labels equal.
compare_heads() { # NAME TABLE REFERENCE
	"$PY" - "$2" "$3" <<'EOF' >"$TMP/cmp" 2>&1
import sys
table, ref = open(sys.argv[1]).read().splitlines(), open(sys.argv[2]).read().splitlines()
hdr = next(i for i, l in enumerate(table) if l.split()[:1] == ["head"] and l.split()[-1] == "label")
cols = table[hdr].split()[1:-1]  # the scores, between "head" and "label"
names = ["first", "punct", "entropy", "diagonal", "monotonic", "eos", "max"]
want = {}
for line in ref:
    f = line.split(None, 9)
    want[(int(f[0]), int(f[1]))] = (dict(zip(names, f[2:9])), f[9] if len(f) > 9 else "")
assert set(cols) == {k for k in names if any(v[0][k] != "-" for v in want.values())}, (cols, "columns")
seen = 0
for line in table[hdr + 1:hdr + 1 + len(want)]:
    f = line.lstrip("▶ ").split()
    key = (int(f[0][1:]), int(f[1][1:]))
    w, label = want[key]
    for c, v in zip(cols, f[2:2 + len(cols)]):
        if (v == "-") != (w[c] == "-") or (v != "-" and abs(float(v) - float(w[c])) > 6e-4):
            sys.exit("L%d H%d %s: printed %s, numpy %s" % (key + (c, v, w[c])))
    got = " ".join(f[2 + len(cols):])
    if got != label:
        sys.exit("L%d H%d label: printed '%s', numpy '%s'" % (key + (got, label)))
    seen += 1
assert seen == len(want), (seen, len(want))
print(seen, "heads")
EOF
	if [ $? -eq 0 ]; then ok; else bad "$1: $(cat "$TMP/cmp")"; fi
}

LONG="the quick brown fox jumps over the lazy dog, and then it runs away into the dark green forest."
for model in bart-encdec t5-encdec; do
	for pair in "the cat sat.|hello world, there" "das Haus ist wunderbar|the house is wonderful, really" \
		"$LONG|$LONG" "|no target at all"; do
		target=${pair%%|*} text=${pair#*|}
		set -- --target "$target"
		[ -n "$target" ] || set --
		"$BIN" -m "$M/$model" --dump json --top-k 0 "$@" "$text" >"$TMP/d.json" || bad "$model: --dump json"
		"$PY" "$TOOLS/ref_crossheads.py" <"$TMP/d.json" >"$TMP/ref" || bad "$model: ref_crossheads.py"
		"$BIN" -m "$M/$model" --print heads --stack cross --width 200 --color never "$@" "$text" >"$TMP/p" 2>"$TMP/e"
		expect_eq "$model '$target' --print heads --stack cross status" $? 0
		compare_heads "$model '$target' cross heads" "$TMP/p" "$TMP/ref"
		# the title names the source's end token (the dump's last special token the labels hold too)
		end=$(jq -r '. as $d | [range(.ids | length) | select($d.special[.])] as $sp |
			(([$sp[] | select(. as $j | ($d.decoder.labels // []) | index([$d.ids[$j]]) != null)] | last) // ($sp | last)) as $e |
			if $e == null then "none" else $d.tokens[$e] end' "$TMP/d.json")
		expect_grep "$model '$target' title" "$TMP/p" "cross-attention · source end token $end ·"
		# sorted by a cross score: the reference's order (largest first, ties in layer/head order)
		for sort in diagonal monotonic eos; do
			col=$(case $sort in diagonal) echo 6;; monotonic) echo 7;; eos) echo 8;; esac)
			"$BIN" -m "$M/$model" --print heads --stack cross --sort $sort --width 200 --color never "$@" "$text" >"$TMP/s"
			got=$(sed -n '/^  head/,/^$/p' "$TMP/s" | grep -o 'L[0-9]* H[0-9]*' | tr '\n' ' ')
			want=$(awk -v c=$col '{ v = $c == "-" ? -1e9 : $c; printf "%.12f %06d %06d L%d H%d\n", 10 - v, $1, $2, $1, $2 }' "$TMP/ref" |
				sort | awk '{ printf "%s %s ", $4, $5 }')
			expect_eq "$model '$target' --sort $sort order" "$got" "$want"
		done
	done
	# the encoder's and the decoder's tables keep the self-attention columns, without cross's
	for stack in encoder decoder; do
		"$BIN" -m "$M/$model" --print heads --stack $stack --width 200 --color never --target "the cat sat." "hello world" >"$TMP/p"
		expect_grep "$model $stack heads: prev" "$TMP/p" "^  head *prev"
		expect_nogrep "$model $stack heads: no diagonal" "$TMP/p" "diagonal\|monotonic"
	done
	"$BIN" -m "$M/$model" --print heads --stack decoder --width 200 --color never --target "the cat the cat the cat" "hello" >"$TMP/p"
	expect_grep "$model decoder heads: causal columns" "$TMP/p" "^  head .* induction"
done
# The head view on cross-attention: the bars are the source's tokens, the picked head's largest weight
# is the dump's cross row maximum; the SVG's lines go from the selected target token's row (left) to
# every source token (right), their opacities the row's weights of both heads.
TEXT="hello world, there" TARGET="the cat sat."
for model in bart-encdec t5-encdec; do
	"$BIN" -m "$M/$model" --dump json --top-k 0 --target "$TARGET" "$TEXT" >"$TMP/d.json"
	n=$(jq '.decoder.ids | length' "$TMP/d.json") m=$(jq '.ids | length' "$TMP/d.json")
	for l in 0 1; do
		for h in 0 1; do
			r=0
			while [ $r -lt "$n" ]; do
				"$BIN" -m "$M/$model" --print headview --stack cross --layer $l --head $h --token $r --width 160 \
					--color never --target "$TARGET" "$TEXT" >"$TMP/p" 2>"$TMP/e"
				expect_eq "$model headview L$l H$h t$r status" $? 0
				got=$(sed -n "s/.*head $h's largest: .* \([0-9.]*\)$/\1/p" "$TMP/p")
				want=$(jq -r --argjson l $l --argjson h $h --argjson r $r '.decoder.cross_attentions[$l][$h][$r] | max' \
					"$TMP/d.json" | awk '{ printf "%.4f", $1 }')
				expect_eq "$model headview L$l H$h t$r largest" "$got" "$want"
				rows=$(sed -n '/^ *H0 /,/^bar = /p' "$TMP/p" | sed '1d;$d' | wc -l)
				expect_eq "$model headview L$l H$h t$r rows" "$rows" "$m"
				r=$((r + 1))
			done
		done
		"$BIN" -m "$M/$model" --print headview --stack cross --layer $l --token 1 --format svg --width 100 \
			--target "$TARGET" "$TEXT" >"$TMP/v.svg"
		expect_eq "$model headview svg L$l status" $? 0
		got=$(grep -o 'stroke-opacity="[0-9.]*"' "$TMP/v.svg" | grep -o '[0-9.]*' | sort | tr '\n' ' ')
		want=$(jq -r --argjson l $l '.decoder.cross_attentions[$l][][1][] | select(. > 0.005)' "$TMP/d.json" |
			awk '{ printf "%.3f\n", ($1 > 1 ? 1 : $1) }' | sort | tr '\n' ' ')
		expect_eq "$model headview svg L$l lines" "$got" "$want"
		# every line starts at one left row (the selected target token) and ends on M distinct right rows
		starts=$(grep -o '<path d="M[0-9.]* [0-9.]*' "$TMP/v.svg" | sort -u | wc -l)
		ends=$(grep -o 'L[0-9.]* [0-9.]*" stroke' "$TMP/v.svg" | sort -u | wc -l)
		[ "$starts" -eq 1 ] && [ "$ends" -le "$m" ] && [ "$ends" -ge 2 ] && ok || bad "$model svg L$l: $starts starts, $ends ends"
		expect_grep "$model headview svg L$l columns" "$TMP/v.svg" ">source<"
	done
	"$BIN" -m "$M/$model" --print headview --stack cross --token 1 --width 160 --color never --target "$TARGET" "$TEXT" >"$TMP/p"
	expect_grep "$model headview cross title" "$TMP/p" "cross-attention given by .* to the source's tokens"
done
"$BIN" -m "$M/bart-encdec" --print qk --stack cross --target "$TARGET" "$TEXT" >/dev/null 2>"$TMP/e"
expect_grep "qk refuses cross, naming the views that draw it" "$TMP/e" "(grid, heatmap, heads and headview can)"

# The grid's three stacks at once (--stack all): each section titled with its stack, layers, heads and
# tokens (the dump's), and its thumbnails those of --print grid --stack on that stack alone (frames aside:
# only the selected head's section has one).
body() { # FILE K: the thumbnails under the K-th "L\H" row, up to the next section's title, frames blanked
	awk -v k="$2" '/^L\\H/ { n++; next } n == k && /^[a-z]/ { exit } n == k' "$1" |
		sed 's/[┌┐└┘─│]/ /g; s/ *$//' | sed '/^$/d'
}
for model in bart-encdec t5-encdec; do
	"$BIN" -m "$M/$model" --dump json --top-k 0 --target "$TARGET" "$TEXT" >"$TMP/d.json"
	"$BIN" -m "$M/$model" --print grid --stack all --width 120 --color never --target "$TARGET" "$TEXT" >"$TMP/all"
	expect_eq "$model grid --stack all status" $? 0
	ne=$(jq '.ids | length' "$TMP/d.json") nd=$(jq '.decoder.ids | length' "$TMP/d.json")
	le=$(jq '.attentions | length' "$TMP/d.json") ld=$(jq '.decoder.attentions | length' "$TMP/d.json")
	h=$(jq '.attentions[0] | length' "$TMP/d.json")
	expect_grep "$model all: header" "$TMP/all" "encoder, decoder and cross-attention · $ne tokens · grid"
	expect_grep "$model all: encoder title" "$TMP/all" "^encoder self-attention · $le layers × $h heads · $ne tokens"
	expect_grep "$model all: decoder title" "$TMP/all" "^decoder self-attention (causal) · $ld layers × $h heads · $nd tokens"
	expect_grep "$model all: cross title" "$TMP/all" "^cross-attention: target rows × source columns · $ld layers × $h heads · $nd × $ne tokens"
	k=1
	for stack in encoder decoder cross; do
		"$BIN" -m "$M/$model" --print grid --stack $stack --width 120 --color never --target "$TARGET" "$TEXT" >"$TMP/one"
		body "$TMP/one" 1 >"$TMP/want"
		body "$TMP/all" $k >"$TMP/got"
		[ -s "$TMP/want" ] && cmp -s "$TMP/got" "$TMP/want" && ok ||
			bad "$model all: the $stack section's thumbnails differ from --stack $stack's: $(diff "$TMP/got" "$TMP/want" | head -5)"
		k=$((k + 1))
	done
	lines=$(wc -l <"$TMP/all")
	[ "$lines" -gt $((2 * (le + ld + ld))) ] && ok || bad "$model all: $lines lines"
done
"$BIN" -m "$M/bart-encdec" --print heads --stack all --target "$TARGET" "$TEXT" >/dev/null 2>"$TMP/e"
expect_eq "heads --stack all status" $? 1
expect_grep "heads --stack all refused" "$TMP/e" "cannot show the three stacks at once (grid can)"
"$BIN" -m "$M/bart-encdec" --dump csv --stack all "$TEXT" >/dev/null 2>"$TMP/e"
expect_eq "--dump csv --stack all status" $? 2
"$BIN" -m "$M/gpt2-mini" --print grid --stack all "$TEXT" >/dev/null 2>"$TMP/e"
expect_grep "--stack all on gpt2" "$TMP/e" "not an encoder-decoder model"

# an encoder-decoder's cross table and a decoder-only model's: no self columns / no cross columns
"$BIN" -m "$M/gpt2-mini" --print heads --width 200 --color never "the cat sat on the mat." >"$TMP/p"
expect_nogrep "gpt2 heads: no cross columns" "$TMP/p" "diagonal\|monotonic\|  eos"
"$BIN" -m "$M/bart-encdec" --print heads --stack cross --width 200 --color never --target "a b" "c d" >"$TMP/p"
expect_nogrep "cross heads: no self columns" "$TMP/p" "prev\|induction\|distance"
"$BIN" -m "$M/gpt2-mini" --print heads --sort diagonal "the cat" >"$TMP/p" 2>"$TMP/e"
expect_eq "--sort diagonal on gpt2 status" $? 0

echo "encdec-crossviews.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
