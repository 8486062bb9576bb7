# tests/lib-cli.sh -- what the tests/*.sh scripts that drive the binary share. Sourced after
# TEST_NAME=name; sets BIN (the binary), SRC (the source tree), REF (the shared reference), PY
# (python3 with numpy, where tests need it), TOOLS (tests/tools), TMP (a scratch folder removed on
# exit) and the counters pass/fail, with the checks that count:
#   ok / bad MESSAGE                      one check passed / failed (printed)
#   expect_eq NAME GOT WANT               GOT must equal WANT
#   expect_grep NAME FILE PATTERN         FILE must hold PATTERN (grep), expect_nogrep must not
BIN=${ATTNSCOPE_BIN:-./attnscope}
SRC=${top_srcdir:-.}
REF=${ATTNSCOPE_SHARED_REF:-$SRC/../shared/reference}
PY=/usr/bin/python3
TOOLS=$SRC/tests/tools
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnscope-${TEST_NAME:-test}-XXXXXX")
trap 'rm -rf "$TMP"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
expect_eq() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }
expect_grep() { if grep -q -- "$3" "$2"; then ok; else bad "$1: '$3' not in: $(head -c 600 "$2")"; fi; }
expect_nogrep() { if grep -q -- "$3" "$2"; then bad "$1: '$3' unexpected in: $(head -c 600 "$2")"; else ok; fi; }
