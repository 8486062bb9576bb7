#!/bin/sh
# sinks.sh -- the head finder's sink score (headscore.h; Xiao et al. 2023) through `--print heads`:
# the mean over queries of the weight on the first token, or, for a model with learned sinks
# (gpt-oss, from the shared reference models when present), of the share the sink took (1 minus
# the row's sum), each recomputed here with jq from `--dump json`. Needs jq.
set -u
TEST_NAME=sinks
. "${top_srcdir:-.}/tests/lib-cli.sh" # BIN SRC REF PY TOOLS TMP, ok/bad, expect_eq/_grep/_nogrep
M=$SRC/tests/data/models
command -v jq >/dev/null || { echo "sinks.sh: jq is required"; exit 99; }
TEXT="The capybara was playing with the other capybara"

# "L<l> H<h> <sink>" per head, as --print heads shows it (3 decimals)
printed() {
	"$BIN" -m "$1" --print heads --width 160 "$TEXT" | awk '
		/^ *head .* sink/ { for (i = 1; i <= NF; i++) if ($i == "sink") c = i + 1; next }
		c && /^[^A-Za-z]*L[0-9]+ H[0-9]+ / { sub(/^[^L]*/, ""); split($0, f, " +"); print f[1], f[2], f[c] }'
}
# the same from the dump: JQ_ROW is the sink's share of one row R
from_dump() {
	"$BIN" -m "$1" --dump json "$TEXT" | jq -r --arg dummy x "
		.attentions | to_entries[] | .key as \$l | .value | to_entries[] | .key as \$h
		| [.value[] | . as \$r | $2] | (add / length) as \$s
		| \"L\(\$l) H\(\$h) \(\$s * 1000 | round / 1000)\"" |
		awk '{ printf "%s %s %.3f\n", $1, $2, $3 }'
}
for model in gpt2-mini bert-mini llama-gqa; do
	printed "$M/$model" >"$TMP/p"
	from_dump "$M/$model" '$r[0]' >"$TMP/d"
	expect_eq "$model: a sink column for every head" "$(wc -l <"$TMP/p")" "$(wc -l <"$TMP/d")"
	expect_eq "$model: sink = the first token's weight" "$(cat "$TMP/p")" "$(cat "$TMP/d")"
done
# --sort sink: the largest first
"$BIN" -m "$M/gpt2-mini" --print heads --sort sink --width 160 "$TEXT" >"$TMP/s"
expect_eq "--sort sink" "$(grep -c 'sorted by sink, largest first' "$TMP/s")" 1
top=$(from_dump "$M/gpt2-mini" '$r[0]' | sort -k3 -g -r | head -1 | cut -d' ' -f3)
expect_eq "--sort sink puts the largest first" "$(printed "$M/gpt2-mini" | sort -k3 -g -r | head -1 | cut -d' ' -f3)" "$top"
"$BIN" -m "$M/gpt2-mini" --print heads --sort sinks "$TEXT" >"$TMP/out" 2>&1
expect_eq "--sort sinks is refused" $? 2
expect_eq "--sort names sink among the scores" "$(grep -c 'sink' "$TMP/out")" 1

OSS=${ATTNSCOPE_SHARED_REF:-$SRC/../shared/reference}/models/gptoss-tiny
if [ -f "$OSS/config.json" ]; then
	printed "$OSS" >"$TMP/p"
	from_dump "$OSS" '(1 - add) | if . < 0 then 0 else . end' >"$TMP/d"
	expect_eq "gpt-oss: the learned sink's share" "$(cat "$TMP/p")" "$(cat "$TMP/d")"
	# and not the first token's weight, which the first column keeps
	from_dump "$OSS" '$r[0]' >"$TMP/f"
	expect_eq "gpt-oss: sink is not first" "$(cmp -s "$TMP/p" "$TMP/f" || echo differ)" differ
else
	echo "SKIPPED the learned sinks: no $OSS"
fi
echo "sinks.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
