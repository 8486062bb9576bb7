#!/bin/sh
# lens.sh -- the logit lens (src/engine/lens.c) through `--dump json --lens`, checked
#  1. against the shared reference's cases-lm (the real transformers models; tests/tools/ref_lens.py cases):
#     gpt2-tiny, qwen3-tiny and demo-gpt2, ids identical but for ties within 1e-6, log-probabilities 1e-4;
#  2. against tests/tools/ref_lens.py, the independent numpy reference: it agrees with the cases, and with
#     attnscope on the demo model and on tiny models the cases do not cover;
#  3. for sensitivity: the reference with the final norm applied twice at the last layer, or left out
#     below it, must disagree with the cases (the worst difference is printed);
# and the option's contract: one entry per layer 0 .. L, 5 per position, the last layer = the model's own
# predictions ("topk"), a one-line warning and no key for a model without a causal head, usage errors.
# Needs jq, sha256sum and /usr/bin/python3 with numpy.
set -u
TEST_NAME=lens
. "${top_srcdir:-.}/tests/lib-cli.sh" # BIN SRC REF PY TOOLS TMP, ok/bad, expect_eq/_grep/_nogrep

command -v jq >/dev/null || { echo "lens.sh: jq is required"; exit 99; }
command -v sha256sum >/dev/null || { echo "lens.sh: sha256sum is required"; exit 99; }
"$PY" -c 'import numpy' 2>/dev/null || { echo "SKIP: lens.sh needs $PY with numpy (tools/install-deps installs it)"; exit 77; }
GPT2=$SRC/models/demo-gpt2
BERT=$SRC/models/demo-bert
TEXT="the cat sat on the mat"

# The contract.
"$BIN" -m "$GPT2" --dump json --lens "$TEXT" >"$TMP/l.json"
expect_eq "--lens status" $? 0
L=$(jq .model.layers "$TMP/l.json")
expect_eq "layers 0 .. L" "$(jq -c '[.logit_lens[].layer]' "$TMP/l.json")" "$(jq -nc "[range(0; $L + 1)]")"
expect_eq "one row per token" "$(jq '(.ids | length) as $n | [.logit_lens[] | (.ids | length), (.logprobs | length)] | unique == [$n]' "$TMP/l.json")" true
expect_eq "5 per position" "$(jq -c '[.logit_lens[] | .ids[], .logprobs[] | length] | unique' "$TMP/l.json")" "[5]"
expect_eq "best first" "$(jq '[.logit_lens[].logprobs[] | . == (sort | reverse)] | all' "$TMP/l.json")" true
expect_eq "the last layer is the model's own prediction" \
	"$(jq -c '[.logit_lens[-1].ids[]]' "$TMP/l.json")" "$(jq -c '[.topk[].ids[0:5]]' "$TMP/l.json")"
"$BIN" -m "$GPT2" --dump json "$TEXT" >"$TMP/plain.json"
expect_eq "no logit_lens without --lens" "$(jq 'has("logit_lens")' "$TMP/plain.json")" false
expect_eq "--lens adds only logit_lens and dla" "$(jq -c 'del(.logit_lens, .dla_token, .dla)' "$TMP/l.json")" "$(jq -c . "$TMP/plain.json")"

# Direct logit attribution (--lens: "dla" [L][H] at --token, by default the last token with a next one),
# against tests/tools/ref_dla.py (numpy, GPT-2), which first checks the identity: every component's dla plus
# ln_f's bias term is the logit of the next token minus the mean logit.
H=$(jq .model.heads "$TMP/l.json")
expect_eq "dla at the last token with a next one by default" "$(jq '.dla_token == (.ids | length) - 2' "$TMP/l.json")" true
expect_eq "dla [L][H]" "$(jq -c '[(.dla | length), (.dla[] | length)] | unique' "$TMP/l.json")" "$(jq -nc "[$L, $H] | unique")"
INDUCTION="river bread window stone seven garden horse silver morning letter music lamp river bread window stone seven garden horse silver morning letter music lamp"
for spec in "$GPT2:15" "$GPT2:3" "$REF/models/gpt2-tiny:15"; do
	mdir=${spec%:*} tok=${spec##*:}
	[ -d "$mdir" ] || { echo "SKIPPED: dla on $mdir: not there"; continue; }
	"$BIN" -m "$mdir" --dump json --lens --token "$tok" "$INDUCTION" >"$TMP/dla.json" || { bad "dla dump $mdir"; continue; }
	expect_eq "dla_token $tok" "$(jq .dla_token "$TMP/dla.json")" "$tok"
	"$PY" "$TOOLS/ref_dla.py" "$mdir" "$TMP/dla.json" && ok || bad "dla of $mdir at $tok against ref_dla.py"
done
"$BIN" -m "$GPT2" --dump json --lens --token 15 "$INDUCTION" >"$TMP/dla.json"
for mistake in no_center no_scale; do
	if "$PY" "$TOOLS/ref_dla.py" "$GPT2" "$TMP/dla.json" $mistake >"$TMP/mistake"; then
		bad "ref_dla.py with the mistake $mistake still agrees: $(cat "$TMP/mistake")"
	else
		ok
		echo "deliberate mistake $mistake caught: $(sed 's/.*heads. dla max |diff| \([^ ]*\).*/heads'"'"' dla off by up to \1/' "$TMP/mistake")"
	fi
done
# the head finder's dla column (with a token selected) sorted: the dump's largest first, with its value
best=$(jq -r --argjson h "$H" '[.dla | to_entries[] | .key as $l | .value | to_entries[] | {l: $l, h: .key, v: .value}] | max_by(.v) | "L\(.l) H\(.h) \(.v * 1000 | round / 1000)"' "$TMP/dla.json")
"$BIN" -m "$GPT2" --print heads --token 15 --sort dla --width 120 "$INDUCTION" >"$TMP/heads.txt"
row=$(grep -m1 -E '^[ ▶] L[0-9]+ H[0-9]+ ' "$TMP/heads.txt")
set -- $best
case $row in
*"$1 $2 "*) ok ;;
*) bad "head finder sorted by dla: first row '$row', the dump's largest $best" ;;
esac
printf '%s\n' "$row" | awk -v v="$3" '{ if ($(NF - 1) + 0 != v + 0 && $NF + 0 != v + 0) exit 1 }' && ok || bad "dla value in '$row', want $3"
"$BIN" -m "$GPT2" --print heads "$INDUCTION" | grep -q " dla " && bad "a dla column with no token selected" || ok
"$BIN" -m "$GPT2" --print heads --sort dla "$INDUCTION" >"$TMP/out" 2>&1
expect_eq "--sort dla without --token: usage error" $? 2
grep -q -- "--sort dla needs --token" "$TMP/out" && ok || bad "--sort dla without --token: $(cat "$TMP/out")"
"$BIN" -m "$GPT2" --dump json --lens --token 23 "$INDUCTION" >"$TMP/last.json"
expect_eq "no dla at the last token" "$(jq -c '[has("dla"), (.dla_note | test("needs a next token"))]' "$TMP/last.json")" "[false,true]"
if [ -d "$REF/models/gemma2-tiny" ]; then
	"$BIN" -m "$REF/models/gemma2-tiny" --dump json --lens "Oh, this book?" >"$TMP/g.json"
	expect_eq "Gemma 2: no dla (normalised attention output)" "$(jq -c '[has("dla"), (.dla_note | test("not linear"))]' "$TMP/g.json")" "[false,true]"
fi
"$BIN" -m "$GPT2" --dump json --top-k 0 --lens "$TEXT" >"$TMP/k0.json"
expect_eq "--lens without --top-k" "$(jq -c '[has("topk"), (.logit_lens | length)]' "$TMP/k0.json")" "[false,$((L + 1))]"
"$BIN" -m "$BERT" --dump json --lens "$TEXT" >"$TMP/b.json" 2>"$TMP/err"
expect_eq "a masked LM: status" $? 0
expect_eq "a masked LM: no logit_lens" "$(jq 'has("logit_lens")' "$TMP/b.json")" false
expect_eq "a masked LM: one line says why" "$(wc -l <"$TMP/err" | tr -d ' ')" 1
grep -q -- "--lens: no logit lens" "$TMP/err" && ok || bad "masked LM warning: $(cat "$TMP/err")"
"$BIN" -m "$GPT2" --dump csv --lens "$TEXT" >"$TMP/out" 2>&1
expect_eq "--lens with csv: usage error" $? 2
grep -q -- "--lens" "$TMP/out" && ok || bad "--lens with csv message: $(cat "$TMP/out")"

if [ ! -d "$REF/cases-lm" ]; then
	echo "SKIPPED: the cases-lm comparisons: no shared reference at $REF (set ATTNSCOPE_SHARED_REF)"
else
	# 1. attnscope against the cases.
	n=0
	for c in "$REF"/cases-lm/*.json; do
		[ "$(jq 'has("logit_lens")' "$c")" = true ] || continue
		dir=$(jq -r .model_dir "$c")
		case $dir in
		*/*) mdir=$REF/models/${dir##*/} ;;
		*) mdir=$SRC/models/$dir ;;
		esac
		if [ "$(sha256sum "$mdir/model.safetensors" | cut -d' ' -f1)" != "$(jq -r .model_file_sha256 "$c")" ]; then
			echo "SKIPPED: $(basename "$c"): $mdir/model.safetensors is not the file the case was computed from"
			continue
		fi
		n=$((n + 1))
		if ! "$BIN" -m "$mdir" --dump json --lens "$(jq -r .text "$c")" >"$TMP/case.json" 2>"$TMP/err"; then
			bad "$(basename "$c"): --dump failed: $(cat "$TMP/err")"
			continue
		fi
		"$PY" "$TOOLS/ref_lens.py" cases "$c" "$TMP/case.json" && ok || bad "$(basename "$c")"
	done
	expect_eq "cases with a logit lens (gpt2-tiny, qwen3-tiny, demo-gpt2: 2 texts each)" $n 6
	# 2. the reference against the cases, then against attnscope where no case is
	"$PY" "$TOOLS/ref_lens.py" verify "$REF/cases-lm" "$REF/models" "$SRC/models" >"$TMP/verify" 2>&1
	st=$?
	sed 's/^/ref_lens.py vs the cases: /' "$TMP/verify"
	expect_eq "ref_lens.py agrees with the cases" $st 0
	# a BF16 file, and a Llama with an untied lm_head and bias (a seeded copy made by ref_lm.py)
	"$PY" "$TOOLS/ref_lm.py" synth "$REF/models/llama-tiny-gqa" "$TMP/llama-untied" untied_bias || bad "synth llama-tiny-gqa"
	for mdir in "$REF/models/gpt2-tiny-bf16" "$TMP/llama-untied"; do
		"$BIN" -m "$mdir" --dump json --lens "Oh, this book? I've enjoyed it." >"$TMP/m.json" 2>"$TMP/err" ||
			{ bad "$mdir: --dump failed: $(cat "$TMP/err")"; continue; }
		"$PY" "$TOOLS/ref_lens.py" compare "$mdir" "$TMP/m.json" && ok || bad "$mdir against ref_lens.py"
	done
	# 3. deliberate mistakes
	for mistake in norm_twice no_norm; do
		if "$PY" "$TOOLS/ref_lens.py" verify "$REF/cases-lm" "$REF/models" "$SRC/models" $mistake >"$TMP/mistake" 2>&1; then
			bad "ref_lens.py with the mistake $mistake still agrees with the cases"
		else
			ok
			echo "deliberate mistake $mistake caught: log-probabilities off by up to $(sed -n 's/^worst: \([^ ]*\).*/\1/p' "$TMP/mistake") nats"
		fi
	done
fi
"$BIN" -m "$GPT2" --dump json --lens "$(cat "$SRC/README" | head -c 250 | tr -d '\000-\037')" >"$TMP/long.json" 2>"$TMP/err"
expect_eq "a long text: status" $? 0
"$PY" "$TOOLS/ref_lens.py" compare "$GPT2" "$TMP/long.json" && ok || bad "demo-gpt2 on a long text against ref_lens.py"

echo "lens.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
