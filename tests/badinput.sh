#!/bin/sh
# badinput.sh -- the real binary on hostile input: one exact line on stderr, the exit status, no
# crash, no hang, and (with /usr/bin/time) a bounded peak memory on absurd files.
#
# Peak memory before the limits of jsoncap.c / tok-bpe.c / tok-wordpiece.c existed, for the record:
# a 100 MB safetensors header of "0,0,..." 2.1 GB (8.6 s), a 200 MB config.json 4.1 GB (22 s),
# a 64 MB vocab.json or tokenizer.json of "0,0,..." 1.4 GB, a 64 MB merges.txt of distinct rules
# 1.8 GB (14 s), a 64 MB vocab.txt of distinct lines 1.1 GB; --theme /dev/zero all memory.
# Each is now refused in well under a second below PEAK_LIMIT_KB (the file itself is mapped or
# read once, so ~100 MB is the floor for the largest).
set -u
TEST_NAME=badinput
. "${top_srcdir:-.}/tests/lib-cli.sh" # BIN SRC REF PY TOOLS TMP, ok/bad, expect_eq/_grep/_nogrep
BERT=$SRC/tests/data/models/bert-mini
GPT2=$SRC/tests/data/models/gpt2-mini
command -v jq >/dev/null || { echo "badinput.sh: jq is required"; exit 99; }

# Peak memory bound (ASan builds stay under it too: 175 MB at most, its quarantine included).
PEAK_LIMIT_KB=300000
TIME=
[ -x /usr/bin/time ] && TIME=/usr/bin/time

# run NAME WANT_STATUS WANT_STDERR ARGS...: the binary with stdin from $TMP/stdin (or /dev/null),
# under a time limit; checks the status, the exact stderr and, when measured, the peak memory.
run() {
	name=$1 want_rc=$2 want_err=$3
	shift 3
	in=/dev/null
	[ -f "$TMP/stdin" ] && in=$TMP/stdin
	if [ -n "$TIME" ]; then
		timeout 60 $TIME -f '%M' -o "$TMP/peak" "$BIN" "$@" <"$in" >"$TMP/out" 2>"$TMP/err"
	else
		timeout 60 "$BIN" "$@" <"$in" >"$TMP/out" 2>"$TMP/err"
	fi
	rc=$?
	expect_eq "$name: exit status" "$rc" "$want_rc"
	expect_eq "$name: message" "$(cat "$TMP/err")" "$want_err"
	if LC_ALL=C grep -q "$(printf '\033')" "$TMP/err"; then bad "$name: an escape character reached stderr"; else ok; fi
	if [ -n "$TIME" ] && [ -s "$TMP/peak" ]; then
		peak=$(tail -n1 "$TMP/peak")
		echo "badinput.sh: $name: peak ${peak} KB"
		if [ "$peak" -gt "$PEAK_LIMIT_KB" ]; then
			bad "$name: peak memory ${peak} KB > ${PEAK_LIMIT_KB} KB"
		else
			ok
		fi
	fi
	rm -f "$TMP/stdin"
}

# folder NAME MODEL: a model folder $TMP/NAME holding copies of the fixture MODEL's files
folder() {
	rm -rf "${TMP:?}/$1" && mkdir -p "$TMP/$1" && cp -L "$SRC/tests/data/models/$2"/* "$TMP/$1/"
	D=$TMP/$1
}
# zeros BYTES: BYTES bytes of JSON-like "[0,0,...]" (jansson's worst case: a node per 2 bytes)
zeros() { printf '['; yes '0,' | tr -d '\n' | head -c $(($1 - 2)); printf ']'; }

# ---------------------------------------------------------------- text
# A NUL byte cannot reach the tokenizer (its text is a C string): HF's BERT would drop it and
# GPT-2 make a token of it, so refuse it rather than cut the text short.
printf 'the cat\000sat' >"$TMP/stdin"
run "NUL byte in text" 1 "attnscope: standard input holds a NUL byte at byte 7; text cannot contain NUL" \
	-m "$BERT" --dump json -
printf 'hello\000' >"$TMP/stdin"
run "NUL byte in text (GPT-2)" 1 "attnscope: standard input holds a NUL byte at byte 5; text cannot contain NUL" \
	-m "$GPT2" --dump csv -
yes 'word' | head -c 17000000 >"$TMP/stdin"
run "standard input of 17 MB" 1 "attnscope: standard input exceeds 16777216 bytes" -m "$BERT" --dump json -
# GPT-2 (96 positions): 20000 words keep the first 96 tokens, with a warning
yes 'Hello, word' | head -n 10000 | tr '\n' ' ' >"$TMP/stdin"
run "GPT-2 text far past its positions" 0 "attnscope: warning: text truncated to the model's 96 positions" \
	-m "$GPT2" --dump json -
expect_eq "GPT-2 truncated tokens" "$(jq '.tokens | length' "$TMP/out")" 96
expect_eq "GPT-2 truncated start" "$(jq -c '.tokens[0:4]' "$TMP/out")" '["Hello",",","Ġword","ĠHello"]'

# ---------------------------------------------------------------- hostile model files
# A tensor name carrying an escape sequence (set the window title) and a newline.
folder evilname bert-mini
H='{"evil\u001b]0;pwned\u0007\nname": {"dtype": "Q8", "shape": [1], "data_offsets": [0, 1]}}'
{ printf "\\$(printf '%03o' ${#H})\\000\\000\\000\\000\\000\\000\\000"; printf '%s' "$H"; printf 'x'; } >"$D/model.safetensors"
run "escape sequence in a tensor name" 1 \
	"attnscope: $D/model.safetensors: tensor 'evil?]0;pwned??name': unsupported dtype 'Q8'" -m "$D" --dump json hi

folder fifo bert-mini
rm "$D/config.json" && mkfifo "$D/config.json"
run "config.json is a FIFO" 1 "attnscope: $D/config.json: not a regular file" -m "$D" --dump json hi

# ---------------------------------------------------------------- absurd sizes
# 100 MB safetensors header of "0,0,...": refused before jansson sees it
folder hdr bert-mini
N=104857600 # the most the format allows: 0x06400000
{ printf '\000\000\100\006\000\000\000\000{"a":'; zeros $((N - 6)); printf '}'; } >"$D/model.safetensors"
expect_eq "header length" "$(od -An -t u8 -N8 "$D/model.safetensors" | tr -d ' ')" $N
expect_eq "file size" "$(wc -c <"$D/model.safetensors")" $((N + 8))
run "100 MB safetensors header" 1 "attnscope: $D/model.safetensors: header has more than 4194304 JSON values" \
	-m "$D" --dump json hi
rm -rf "$D"

folder cfg bert-mini
zeros 60000000 >"$D/config.json"
run "60 MB config.json" 1 "attnscope: $D/config.json: more than 4194304 JSON values" -m "$D" --dump json hi
: >"$D/config.json" && truncate -s 1G "$D/config.json"
run "1 GB config.json" 1 "attnscope: $D/config.json: file too large (1073741824 bytes, limit 67108864)" \
	-m "$D" --dump json hi
rm -rf "$D"

folder vj gpt2-mini
zeros 60000000 >"$D/vocab.json"
run "60 MB vocab.json" 1 "attnscope: $D/vocab.json: more than 4194304 JSON values" -m "$D" --dump json hi
{ printf '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": '; zeros 60000000; printf '}}'; } >"$D/tokenizer.json"
rm "$D/vocab.json"
run "60 MB tokenizer.json" 1 "attnscope: $D/tokenizer.json: more than 4194304 JSON values" -m "$D" --dump json hi
rm -rf "$D"

folder mg gpt2-mini
{ echo '#version: 0.2'; seq -f '%.0f x' 1 6000000; } >"$D/merges.txt"
run "60 MB merges.txt" 1 "attnscope: $D/merges.txt: 6000001 lines of merges for a vocabulary of 50257 tokens" \
	-m "$D" --dump json hi
rm -rf "$D"

folder vt bert-mini
seq 1 8000000 >"$D/vocab.txt"
run "60 MB vocab.txt" 1 "attnscope: $D/vocab.txt: too many lines (more than 4194304)" -m "$D" --dump json hi
rm -rf "$D"

# ---------------------------------------------------------------- Inf weights (cli.sh has NaN)
folder inf bert-mini
HLEN=$(od -An -t u4 -N 4 "$D/model.safetensors" | tr -d ' ')
# F16 +Inf is 0x7c00: the bytes 00 7c over the start of the data section (the word embeddings)
printf '\000\174%.0s' $(seq 1 50000) | dd of="$D/model.safetensors" bs=1 seek=$((8 + HLEN)) conv=notrunc 2>/dev/null
run "Inf weights" 0 "attnscope: warning: the embeddings hold NaN or Inf values; check the weights" \
	-m "$D" --dump json "the cat"
expect_eq "Inf weights: JSON stays valid" "$(jq -r '.tokens | length' "$TMP/out")" 4
rm -rf "$D"

# ---------------------------------------------------------------- the model folder is only read
# Every mode on a copy of the fixture, then the folder must be byte for byte and file for file
# what it was, with no modification time moved (attnscope writes only its config and exports).
folder ro bert-mini
(cd "$D" && ls -lA --time-style=+%s.%N && md5sum ./*) >"$TMP/before"
touch "$TMP/stamp"
"$BIN" -m "$D" --dump json "the cat" >/dev/null 2>&1
"$BIN" -m "$D" --dump csv --pair "a b" "the cat" >/dev/null 2>&1
"$BIN" -m "$D" --print grid "the cat" >/dev/null 2>&1
"$BIN" -m "$D" --print heatmap --color always "the cat" >/dev/null 2>&1
(cd "$D" && ls -lA --time-style=+%s.%N && md5sum ./*) >"$TMP/after"
expect_eq "model folder unchanged" "$(diff "$TMP/before" "$TMP/after" | head -5)" ""
expect_eq "nothing newer in the model folder" "$(find "$D" -newer "$TMP/stamp")" ""
rm -rf "$D"

# ---------------------------------------------------------------- the user's files
run "--theme /dev/zero" 1 "attnscope: /dev/zero: file too large (limit 1048576 bytes)" \
	-m "$BERT" --theme /dev/zero --print grid hi
run "--config /dev/zero" 1 "attnscope: /dev/zero: file too large (limit 1048576 bytes)" \
	-m "$BERT" --config /dev/zero --print grid hi

echo "badinput.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
