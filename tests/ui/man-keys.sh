#!/bin/sh
# man-keys.sh -- every key binding in the action table is documented: man/attnscope-keys.txt is
# what `ui-driver --roff` generates from the table, and the KEY BINDINGS section of
# man/attnscope.1 (rendered) lists each action's keys and help text. Also: every theme role is
# described in attnscope-themes(5).
set -u
: "${top_srcdir:?}" "${ATTNSCOPE_BIN:?}"
DRIVER="${ATTNSCOPE_BIN%/*}/tests/ui/ui-driver"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnscope-man.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail=0

# 1. The fragment is up to date with the code.
"$DRIVER" --roff >"$TMP/roff"
sed -n '/^\.\\" Generated from the action table/,$p' "$top_srcdir/man/attnscope-keys.txt" >"$TMP/fragment"
if ! cmp -s "$TMP/roff" "$TMP/fragment"; then
	echo "FAIL: man/attnscope-keys.txt is out of date with the action table; regenerate with"
	echo "      tests/ui/ui-driver --roff (diff below: - file, + code)"
	diff "$TMP/fragment" "$TMP/roff" | head -20
	fail=1
fi

# 1b. The ANALYSIS VIEWS section of the page is man/attnscope-views.txt (edits to one must reach the
#     other: a stale fragment merged in once dropped paragraphs).
awk '/^\.SH / { inside = $0 == ".SH ANALYSIS VIEWS" } inside' "$top_srcdir/man/attnscope.1" >"$TMP/views-page"
sed -n '/^\.SH ANALYSIS VIEWS/,$p' "$top_srcdir/man/attnscope-views.txt" >"$TMP/views-fragment"
if ! cmp -s "$TMP/views-page" "$TMP/views-fragment"; then
	echo "FAIL: man/attnscope-views.txt and the ANALYSIS VIEWS section of man/attnscope.1 differ (- fragment, + page)"
	diff "$TMP/views-fragment" "$TMP/views-page" | head -20
	fail=1
fi

# 2. Every theme role is in attnscope-themes(5), with its description.
if command -v mandoc >/dev/null 2>&1; then
	mandoc -Tascii -Owidth=200 "$top_srcdir/man/attnscope-themes.5" | sed 's/.\x08//g' | tr -s ' ' >"$TMP/themes5"
	"$DRIVER" --roles | while IFS="$(printf '\t')" read -r role help; do
		grep -F -x -q " $role $help" "$TMP/themes5" || { echo "FAIL: role $role not in attnscope-themes.5"; exit 1; }
	done || fail=1
fi

# 3. The man page documents every binding.
PAGE="$top_srcdir/man/attnscope.1"
if command -v mandoc >/dev/null 2>&1; then
	mandoc -Tascii -Owidth=200 "$PAGE" >"$TMP/page.raw"
elif command -v groff >/dev/null 2>&1; then
	groff -man -Tascii -rLL=200n -P-c "$PAGE" >"$TMP/page.raw" 2>/dev/null
else
	echo "neither mandoc nor groff: cannot render the man page"
	exit 77
fi
# Drop overstrike (bold/underline) and leading blanks; keep the KEY BINDINGS section only.
sed 's/.\x08//g; s/^ *//' "$TMP/page.raw" |
	awk '/^KEY BINDINGS$/ { on = 1; next } on && /^[A-Z][A-Z ]+$/ { on = 0 } on' >"$TMP/keys"
if [ ! -s "$TMP/keys" ]; then
	echo "FAIL: man/attnscope.1 has no KEY BINDINGS section (merge man/attnscope-keys.txt into it)"
	exit 1
fi
"$DRIVER" --keys >"$TMP/actions"
n=0
while IFS="$(printf '\t')" read -r name keys help; do
	n=$((n + 1))
	# The tag line holds exactly the keys; the help text follows (possibly on the same line).
	if ! awk -v k="$keys" 'substr($0, 1, length(k)) == k && (length($0) == length(k) || substr($0, length(k) + 1, 1) == " ") { f = 1 } END { exit !f }' "$TMP/keys"; then
		echo "FAIL: keys '$keys' of action $name are not in the man page"
		fail=1
	fi
	if ! tr '\n' ' ' <"$TMP/keys" | tr -s ' ' | grep -F -q -- "$help"; then
		echo "FAIL: the help of action $name ('$help') is not in the man page"
		fail=1
	fi
done <"$TMP/actions"
[ $fail = 0 ] && echo "ok: all $n actions and their keys are documented"
exit $fail
