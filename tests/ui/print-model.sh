#!/bin/sh
# print-model.sh -- golden tests of the real binary's --print on the fixture models: the grid and
# the heatmap, plain and with ANSI colour, compared with tests/ui/golden/model-*. Decimal numbers
# (the panel's weights) may differ by 2e-6 (float summation order); everything else must match.
# ATTNSCOPE_UPDATE_GOLDEN=1 rewrites the golden files.
set -u
: "${top_srcdir:?}" "${ATTNSCOPE_BIN:?}"
BERT="$top_srcdir/tests/data/models/bert-mini"
GPT2="$top_srcdir/tests/data/models/gpt2-mini"
[ -f "$BERT/config.json" ] && [ -f "$GPT2/config.json" ] || { echo "fixture models missing"; exit 77; }
GOLDEN="$top_srcdir/tests/ui/golden"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnscope-print.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export LC_ALL=C.UTF-8 XDG_CONFIG_HOME="$TMP/no-config"
unset NO_COLOR COLORTERM
fail=0

# same GOT WANT: equal up to decimal numbers within 2e-6.
same() {
	awk -v want="$2" '
	function skeleton(s) { gsub(/[0-9]+\.[0-9]+/, "#", s); return s }
	function numbers(s, arr,   n) {
		n = 0
		while (match(s, /[0-9]+\.[0-9]+/)) {
			arr[++n] = substr(s, RSTART, RLENGTH) + 0
			s = substr(s, RSTART + RLENGTH)
		}
		return n
	}
	{
		if ((getline w < want) <= 0) { print "extra line " NR; bad = 1; exit }
		if ($0 == w) next
		if (skeleton($0) != skeleton(w)) { print "line " NR " differs:"; print "  got:  " $0; print "  want: " w; bad = 1; exit }
		n = numbers($0, a); numbers(w, b)
		for (i = 1; i <= n; i++) {
			d = a[i] - b[i]
			if (d > 2e-6 || d < -2e-6) { print "line " NR ": " a[i] " vs " b[i]; bad = 1; exit }
		}
	}
	END { if (!bad && (getline w < want) > 0) { print "missing lines from " NR + 1; bad = 1 } exit bad }
	' "$1"
}

check() {
	name=$1
	shift
	if ! "$ATTNSCOPE_BIN" "$@" >"$TMP/$name" 2>"$TMP/$name.err"; then
		echo "FAIL $name: exit status $?: $(cat "$TMP/$name.err")"
		fail=1
		return
	fi
	if [ -n "${ATTNSCOPE_UPDATE_GOLDEN:-}" ]; then
		cp "$TMP/$name" "$GOLDEN/$name"
		return
	fi
	if same "$TMP/$name" "$GOLDEN/$name"; then
		echo "ok $name"
	else
		echo "FAIL $name (output kept as $name.got)"
		cp "$TMP/$name" "${TMPDIR:-/tmp}/$name.got" 2>/dev/null
		fail=1
	fi
}

TEXT="The animal didn't cross the street because it was too tired"
check model-bert-grid.txt -m "$BERT" --print grid --color never --width 80 "$TEXT"
check model-bert-heatmap.txt -m "$BERT" --print heatmap --layer 2 --head 1 --color never --width 100 "$TEXT"
check model-bert-pair-heatmap.txt -m "$BERT" --print heatmap --layer 0 --head 0 --color never --width 100 \
	--pair "it was tired" "the animal stopped"
check model-gpt2-grid.txt -m "$GPT2" --print grid --color never --width 80 "Oh, this book? I've enjoyed it."
TERM=xterm-256color check model-gpt2-heatmap-256.ansi -m "$GPT2" --print heatmap --layer 1 --head 0 \
	--color always --width 90 "Oh, this book? I've enjoyed it."
LC_ALL=C check model-bert-grid-ascii.txt -m "$BERT" --print grid --color never --width 60 "$(printf 'caf\303\251 au lait')"

# Bad input: a clear one-line error, exit status 1 or 2, nothing on stdout.
printf 'ramp: ["#000000", "#ffffff"]\nroles:\n  status: {fg: purple}\n' >"$TMP/bad.yaml"
"$ATTNSCOPE_BIN" -m "$BERT" --print grid --theme "$TMP/bad.yaml" x >/dev/null 2>"$TMP/err"
if [ "$(cat "$TMP/err")" = "attnscope: $TMP/bad.yaml:3:16: unknown colour 'purple'" ]; then
	echo "ok bad theme: $(cat "$TMP/err")"
else
	echo "FAIL: bad theme message: $(cat "$TMP/err")"
	fail=1
fi
for args in "--print scatter x" "--print grid --layer 7 x" "--print grid --theme /nonexistent.yaml x"; do
	# shellcheck disable=SC2086
	if "$ATTNSCOPE_BIN" -m "$BERT" $args >"$TMP/out" 2>"$TMP/err"; then
		echo "FAIL: '$args' succeeded"
		fail=1
	elif [ -s "$TMP/out" ] || [ "$(wc -l <"$TMP/err")" -ne 1 ]; then
		echo "FAIL: '$args': output or a multi-line error: $(cat "$TMP/err")"
		fail=1
	else
		echo "ok error: $(cat "$TMP/err")"
	fi
done
exit $fail
