#!/bin/sh
# demo-models.sh -- the bundled demo models, run through the real binary, show the structure
# models/README promises: a previous-token head in each (score > 0.5 on ordinary sentences) and
# an induction head in demo-gpt2: on random words written twice, its largest weight is on the token
# after the first occurrence for most tokens of the second copy, and its score is far above the
# ~0.02 of uniform attention (> 0.3; the shipped head has 0.49 and 84%). The scores are those of
# tools/score_heads.py, computed here with jq from `attnscope --dump json`:
#   previous-token score of head (l, h) = mean over query positions i of attn[i][i-1], over the
#     sentences below (BERT: i from 2 to n-2, so neither [CLS] nor [SEP] takes part; GPT-2: i >= 1);
#   induction score = mean over the second copy (i = N..2N-1) of attn[i][i-N+1], the token after
#     the first occurrence of the current token, for N random words written twice.
# Needs jq. Prints every best head and its score.
set -u
TEST_NAME=demo
. "${top_srcdir:-.}/tests/lib-cli.sh" # BIN SRC REF PY TOOLS TMP, ok/bad, expect_eq/_grep/_nogrep

command -v jq >/dev/null || { echo "demo-models.sh: jq is required"; exit 99; }
for m in demo-bert demo-gpt2; do
	[ -f "$SRC/models/$m/model.safetensors" ] || { echo "SKIP: $SRC/models/$m is missing"; exit 77; }
done

# tools/score_heads.py's SENTENCES
cat >"$TMP/sentences" <<'EOF'
The brown capybara is sleeping now.
My friend told me about this class and I love it so far! She was right.
Oh, this book? I've enjoyed it.
The children walked to the old stone bridge after breakfast.
She opened the window because the room was warm and quiet.
We bought fresh bread, cheese and apples at the market on Saturday.
A small boat crossed the river while the sun was going down.
He wrote a long letter to his brother and sent it in the morning.
The teacher asked the students to read the first chapter again.
Heavy rain fell over the city, and the streets were soon full of water.
EOF

# Random common words (GPT-2 single tokens "Ġword", drawn once with a fixed seed), 40 per line.
cat >"$TMP/words" <<'EOF'
one drink remarks bench cere compromised product breat uses gray authent collected silent scra catch incidents compared sequence brings decre heated burd repeatedly bias harvest behav destroying mart sea distingu curious mut fab contempl fertil provides confirms bust broken gambling
troops year shallow newsp surely stere priced minister innocent extends individually cliff mir wild tribal phot stabil manufacturers chair curric vessels scr engines personnel drug tournaments seemingly awards cholesterol newer perceive podcast trou streng carries compound leader teaches calm buff
narrative spells magnetic recipient placed anonymity succeed powered equ cul traveling brilliant habits mankind depart initiatives represented registration trop classes entert stage response listed different shooting literally savings preparation ran hospital drinking closest expect drives href hunting affairs timing failures
EOF

# best "L<l> H<h> <score>" of a list of per-sentence {sum: [L][H], count} objects
best_head() {
	jq -rs '(map(.count) | add) as $c
		| [.[0].sum | keys[] as $l | .[$l] | keys[] as $h | {l: $l, h: $h}] as $lh
		| . as $all
		| [$lh[] | . as $x | {l: $x.l, h: $x.h, s: ([$all[].sum[$x.l][$x.h]] | add / $c)}]
		| max_by(.s) | "L\(.l) H\(.h) \(.s)"' "$1"
}

# previous-token score
for m in demo-bert demo-gpt2; do
	first=2 tail=2
	[ "$m" = demo-gpt2 ] && first=1 tail=1
	: >"$TMP/$m.prev"
	while IFS= read -r s; do
		if ! "$BIN" -m "$SRC/models/$m" --dump json "$s" >"$TMP/d.json" 2>"$TMP/err"; then
			bad "$m: --dump json failed: $(cat "$TMP/err")"
			continue
		fi
		jq -c --argjson first $first --argjson tail $tail '
			(.tokens | length) as $n | [range($first; $n - $tail + 1)] as $rows
			| {count: ($rows | length),
			   sum: [.attentions[] | [.[] | . as $a | [$rows[] | $a[.][. - 1]] | add]]}' "$TMP/d.json" >>"$TMP/$m.prev"
	done <"$TMP/sentences"
	set -- $(best_head "$TMP/$m.prev")
	echo "$m: best previous-token head $1 $2 = $3"
	if [ "$(jq -n "$3 > 0.5")" = true ]; then ok; else bad "$m: best previous-token score $3 <= 0.5"; fi
done

# induction score (demo-gpt2)
: >"$TMP/ind"
k=0
while IFS= read -r w; do
	k=$((k + 1))
	"$BIN" -m "$SRC/models/demo-gpt2" --dump json " $w $w" >"$TMP/ind$k.json" 2>"$TMP/err" || { bad "induction dump: $(cat "$TMP/err")"; continue; }
	n=$(jq '.tokens | length' "$TMP/ind$k.json")
	if [ "$n" -ne 80 ]; then bad "induction text is $n tokens, not 2 x 40"; continue; fi
	jq -c '[range(40; 80)] as $rows
		| {count: 40, sum: [.attentions[] | [.[] | . as $a | [$rows[] | $a[.][. - 39]] | add]]}' "$TMP/ind$k.json" >>"$TMP/ind"
done <"$TMP/words"
set -- $(best_head "$TMP/ind")
echo "demo-gpt2: best induction head $1 $2 = $3"
if [ "$(jq -n "$3 > 0.3")" = true ]; then ok; else bad "demo-gpt2: best induction score $3 <= 0.3"; fi
# share of second-copy tokens whose largest weight in that head is on the induction target
l=${1#L} h=${2#H}
hits=0
for f in "$TMP"/ind[0-9]*.json; do
	n=$(jq --argjson l "$l" --argjson h "$h" \
		'[.attentions[$l][$h] as $a | range(40; 80) | select(. as $i | $a[$i] | index(max) == $i - 39)] | length' "$f")
	hits=$((hits + ${n:-0}))
done
echo "demo-gpt2: $1 $2 puts its largest weight on the induction target for $hits of 120 tokens"
if [ "$hits" -gt 60 ]; then ok; else bad "demo-gpt2: induction target is the largest weight for only $hits of 120 tokens"; fi

# The explorer's head finder (its own induction score) puts an induction head first on this text:
# one whose score above is > 0.3 too.
w=$(head -n 1 "$TMP/words")
top=$("$BIN" -m "$SRC/models/demo-gpt2" --print heads --sort induction --color never " $w $w" | awk '$1 ~ /^L[0-9]+$/ {print $1, $2; exit}')
set -- $top
score=$(jq -s --argjson l "${1#L}" --argjson h "${2#H}" '[.[].sum[$l][$h]] | add / (40 * length)' "$TMP/ind")
echo "demo-gpt2: the head finder's first induction head is $top (score $score)"
if [ "$(jq -n "$score > 0.3")" = true ]; then ok; else bad "head finder's top induction head '$top' has score $score"; fi

echo "demo-models.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
