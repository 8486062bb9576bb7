#!/bin/sh
# encdec.sh -- encoder-decoder models (T5, Flan-T5, BART, mBART, Marian, NLLB, Pegasus; issue 21) through
# the real binary: `--dump json --target` from text and `--ids/--target-ids` (every family) against tests/tools/ref_encdec.py, an independent numpy reference written from transformers' modeling
# code, which is first checked against the shared reference's cases (the real code's outputs: every
# attention within 1e-5, q/k/v/context/hidden within 1e-4, ids and shifted decoder ids identical, T5's
# position bias and buckets exact); then the refusals: --target on a model that is not an
# encoder-decoder, --pair/--ablate, and hostile
# config.json values and files (num_decoder_layers 0 or huge, relative_attention_num_buckets 0, d_kv 0,
# a missing cross-attention tensor, more decoder layers than the file holds): one line on stderr, exit 1,
# never a crash; and the layouts of real hub files (a "model." prefix, embed_tokens copies of the tied
# table, no num_decoder_layers) give the same dump. Needs the shared reference (ATTNSCOPE_SHARED_REF) and
# /usr/bin/python3 with numpy.
set -u
TEST_NAME=encdec
. "${top_srcdir:-.}/tests/lib-cli.sh" # BIN SRC REF PY TOOLS TMP, ok/bad, expect_eq/_grep/_nogrep
TOOL=$SRC/tests/tools/ref_encdec.py

"$PY" -c 'import numpy' 2>/dev/null || { echo "SKIP: encdec.sh needs $PY with numpy"; exit 77; }
[ -d "$REF/models/t5-tiny" ] || { echo "SKIP: encdec.sh: no shared reference at $REF (set ATTNSCOPE_SHARED_REF)"; exit 77; }

# 1. The numpy reference against the real code's cases, then attnscope against the numpy reference.
for m in t5 flant5 bart mbart nllb pegasus marian; do
	for c in translate summary; do
		case=$REF/cases/$m-tiny--$c.json
		if out=$("$PY" "$TOOL" "$REF/models/$m-tiny" --case "$case"); then ok; else bad "numpy reference vs $m $c: $out"; fi
		ids=$("$PY" -c 'import json,sys; print(",".join(map(str, json.load(open(sys.argv[1]))["ids"])))' "$case")
		labels=$("$PY" -c 'import json,sys; print(",".join(map(str, json.load(open(sys.argv[1]))["decoder"]["labels"])))' "$case")
		if "$BIN" -m "$REF/models/$m-tiny" --dump json --top-k 0 --ids "$ids" --target-ids "$labels" >"$TMP/d.json"; then
			if out=$("$PY" "$TOOL" "$REF/models/$m-tiny" --check-dump "$TMP/d.json"); then
				ok
				echo "$m-tiny $c (ids): $out" | cut -c1-200
			else
				bad "attnscope vs numpy, $m $c from ids: $out"
			fi
		else
			bad "$m $c: --dump --ids failed"
		fi
	done
done
# From text and target: the tokenizer's ids are the case's, the numbers the reference's.
for m in t5 flant5 bart mbart nllb pegasus marian; do
for c in translate summary; do
	case=$REF/cases/$m-tiny--$c.json
	text=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["text"])' "$case")
	target=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["target"])' "$case")
	"$BIN" -m "$REF/models/$m-tiny" --dump json --top-k 0 --target "$target" "$text" >"$TMP/t.json" || bad "$m $c from text"
	same=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); c=json.load(open(sys.argv[2])); print(d["ids"]==c["ids"] and d["tokens"]==c["tokens"] and d["decoder"]["ids"]==c["decoder"]["ids"] and d["decoder"]["labels"]==c["decoder"]["labels"] and d["decoder"]["tokens"]==c["decoder"]["tokens"])' "$TMP/t.json" "$case")
	[ "$same" = True ] && ok || bad "$m $c: tokens or ids from text and target differ from the case"
	if out=$("$PY" "$TOOL" "$REF/models/$m-tiny" --check-dump "$TMP/t.json"); then ok; else bad "$m $c from text: $out"; fi
done
done
# Without a target the decoder reads the decoder start token alone; --layer/--head select in both stacks.
"$BIN" -m "$REF/models/bart-tiny" --dump json --top-k 0 --layer 1 --head 2 "The king." >"$TMP/n.json"
r=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1]))["decoder"]; print(d["ids"], d["labels"], len(d["attentions"]), len(d["attentions"][0]), len(d["cross_attentions"][0][0][0]))' "$TMP/n.json")
[ "$r" = "[2] [] 1 1 5" ] && ok || bad "bart without a target: $r"

# 2. Refusals: one line on stderr, exit status 1 (or 2 for usage), never a crash.
one_line() { # NAME STATUS WANT_STATUS PATTERN FILE
	if [ "$2" -eq "$3" ] && [ "$(wc -l <"$5")" -eq 1 ] && grep -q -- "$4" "$5"; then ok; else bad "$1: status $2, stderr: $(cat "$5")"; fi
}
"$BIN" -m "$REF/models/gpt2-tiny" --dump json --target x hi >/dev/null 2>"$TMP/e"
one_line "--target on gpt2" $? 1 "not an encoder-decoder model" "$TMP/e"
# --src-lang/--tgt-lang choose mBART's and NLLB's languages; an unknown code or a tokenizer without codes is refused.
r=$("$BIN" -m "$REF/models/nllb-tiny" --dump json --top-k 0 --src-lang fra_Latn --tgt-lang spa_Latn --target "La casa." "La maison." |
	jq -c '[.tokens[0], .tokens[-1], .decoder.tokens[0:2], .decoder.labels[-1]]')
[ "$r" = '["fra_Latn","</s>",["</s>","spa_Latn"],2]' ] && ok || bad "nllb --src-lang/--tgt-lang: $r"
r=$("$BIN" -m "$REF/models/mbart-tiny" --dump json --top-k 0 --tgt-lang fr_XX --target "La maison." "The house." |
	jq -c '[.tokens[-1], .decoder.tokens[0], .decoder.labels[-1] == .decoder.ids[0]]')
[ "$r" = '["en_XX","fr_XX",true]' ] && ok || bad "mbart --tgt-lang: $r"
# An M2M100 checkpoint (model_type m2m_100 as NLLB's, tokenizer_class M2M100Tokenizer): nllb-tiny's weights
# with the m2m100-spm fixture tokenizer; ids, target labels and the shifted decoder input as
# tests/tools/ref_m2m100_tok.py gives them (tests/data/tokenizer/m2m100-cases.json), the decoder start </s>.
mkdir -p "$TMP/m2m100"
for f in config.json model.safetensors; do ln -sf "$REF/models/nllb-tiny/$f" "$TMP/m2m100/$f"; done
for f in sentencepiece.bpe.model vocab.json tokenizer_config.json special_tokens_map.json; do
	ln -sf "$(cd "$SRC" && pwd)/tests/data/tokenizer/m2m100-spm/$f" "$TMP/m2m100/$f"
done
for k in 1 10; do
	want=$("$PY" -c 'import json,sys; c=json.load(open(sys.argv[1]))["cases"][int(sys.argv[2])]
print(json.dumps([c["text"], c["src_lang"], c["tgt_lang"], c["ids"], c["target_ids"], [2] + c["target_ids"][:-1]]))' \
		"$SRC/tests/data/tokenizer/m2m100-cases.json" $k)
	text=$(echo "$want" | jq -r '.[0]')
	src=$(echo "$want" | jq -r '.[1]')
	tgt=$(echo "$want" | jq -r '.[2]')
	got=$("$BIN" -m "$TMP/m2m100" --dump json --top-k 0 --src-lang "$src" --tgt-lang "$tgt" --target "$text" "$text" |
		jq -c --arg t "$text" --arg s "$src" --arg g "$tgt" '[$t, $s, $g, .ids, .decoder.labels, .decoder.ids]')
	[ "$got" = "$(echo "$want" | jq -c .)" ] && ok || bad "m2m100 case $k: $got, want $want"
done

"$BIN" -m "$REF/models/nllb-tiny" --dump json --tgt-lang xx_YY --target a b >/dev/null 2>"$TMP/e"
one_line "unknown --tgt-lang" $? 1 'tgt-lang: unknown language code "xx_YY"' "$TMP/e"
"$BIN" -m "$REF/models/bart-tiny" --dump json --src-lang en_XX a >/dev/null 2>"$TMP/e"
one_line "--src-lang on bart" $? 1 "no language codes" "$TMP/e"
"$BIN" -m "$REF/models/bart-tiny" --dump json --pair x hi >/dev/null 2>"$TMP/e"
one_line "--pair on bart" $? 2 "encoder-decoder" "$TMP/e"
"$BIN" -m "$REF/models/bart-tiny" --dump json --ablate 0.0 hi >/dev/null 2>"$TMP/e"
one_line "--ablate on bart" $? 2 "encoder-decoder" "$TMP/e"
"$BIN" -m "$REF/models/bart-tiny" --dump json --target-ids 5 hi >/dev/null 2>"$TMP/e"
one_line "--target-ids without --ids" $? 2 "needs --ids" "$TMP/e"
"$BIN" -m "$REF/models/bart-tiny" --dump json --ids 0,99999999 >/dev/null 2>"$TMP/e"
one_line "--ids out of the vocabulary" $? 1 "outside" "$TMP/e"

# hostile copies of t5-tiny: config.json edited, or tensors dropped from the file
hostile() { # NAME PATTERN PYTHON-EDIT-OF-CONFIG [DROPPED TENSOR]
	d=$TMP/h-$1
	mkdir -p "$d"
	cp "$REF/models/t5-tiny/spiece.model" "$d/"
	"$PY" - "$REF/models/t5-tiny" "$d" "$3" "${4:-}" <<'PYEOF'
import json, struct, sys
src, dst, edit, drop = sys.argv[1:5]
c = json.load(open(src + '/config.json'))
exec(edit)
json.dump(c, open(dst + '/config.json', 'w'))
f = open(src + '/model.safetensors', 'rb'); n = struct.unpack('<Q', f.read(8))[0]; h = json.loads(f.read(n)); data = f.read()
out, blob = {}, b''
for k, v in h.items():
    if k == '__metadata__' or k == drop:
        continue
    a, b = v['data_offsets']; out[k] = dict(v, data_offsets=[len(blob), len(blob) + b - a]); blob += data[a:b]
hb = json.dumps(out).encode(); hb += b' ' * (-len(hb) % 8)
open(dst + '/model.safetensors', 'wb').write(struct.pack('<Q', len(hb)) + hb + blob)
PYEOF
	"$BIN" -m "$d" --dump json --ids 5,6,1 --target-ids 7,1 >/dev/null 2>"$TMP/e"
	one_line "hostile $1" $? 1 "$2" "$TMP/e"
	[ -n "${VERBOSE:-}" ] && cat "$TMP/e"
}
hostile dec0 "num_decoder_layers" "c['num_decoder_layers'] = 0"
hostile dechuge "num_decoder_layers" "c['num_decoder_layers'] = 10**9"
hostile dec3 "missing tensor" "c['num_decoder_layers'] = 3"
hostile buckets0 "relative_attention_num_buckets" "c['relative_attention_num_buckets'] = 0"
hostile distance "relative_attention_max_distance" "c['relative_attention_max_distance'] = 4"
hostile dkv0 "d_kv" "c['d_kv'] = 0"
hostile ffproj "feed_forward_proj" "c['feed_forward_proj'] = 'gated-swoosh'"
hostile start "decoder_start_token_id" "c['decoder_start_token_id'] = 10**6"
hostile nocross "missing tensor" "pass" "decoder.block.1.layer.1.EncDecAttention.k.weight"
hostile nobias "missing tensor" "pass" "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"

# 3. Real hub files' layouts give the same numbers: a "model." prefix, the tied embeddings also stored as
# encoder/decoder.embed_tokens copies or only as those, and T5 configs without num_decoder_layers.
mkvariant() { # NAME PYTHON-RENAME(k)->name-or-None EXTRA-COPIES PYTHON-EDIT-OF-CONFIG: a copy of t5-tiny in $d
	d=$TMP/v-$1
	mkdir -p "$d"
	cp "$REF/models/t5-tiny/spiece.model" "$d/"
	"$PY" - "$REF/models/t5-tiny" "$d" "$2" "$3" "$4" <<'PYEOF'
import json, struct, sys
src, dst, rename, copies, edit = sys.argv[1:6]
c = json.load(open(src + '/config.json'))
exec(edit)
json.dump(c, open(dst + '/config.json', 'w'))
f = open(src + '/model.safetensors', 'rb'); n = struct.unpack('<Q', f.read(8))[0]; h = json.loads(f.read(n)); data = f.read()
out, blob = {}, b''
def put(name, v):
    global blob
    a, b = v['data_offsets']; out[name] = dict(v, data_offsets=[len(blob), len(blob) + b - a]); blob += data[a:b]
for k, v in h.items():
    if k == '__metadata__':
        continue
    new = eval(rename)
    if new:
        put(new, v)
    if k == 'shared.weight':
        for extra in copies.split():
            put(extra, v)
hb = json.dumps(out).encode(); hb += b' ' * (-len(hb) % 8)
open(dst + '/model.safetensors', 'wb').write(struct.pack('<Q', len(hb)) + hb + blob)
PYEOF
}
variant() { # the same arguments: the copy's dump must be the original's but for the model's name (line 1)
	mkvariant "$@"
	"$BIN" -m "$d" --dump json --top-k 0 --ids 5,6,1 --target-ids 7,8,1 2>&1 | sed 1d >"$TMP/v.json"
	if cmp -s "$TMP/v.json" "$TMP/v-base.json"; then ok; else bad "hub layout $1: another dump"; fi
}
"$BIN" -m "$REF/models/t5-tiny" --dump json --top-k 0 --ids 5,6,1 --target-ids 7,8,1 | sed 1d >"$TMP/v-base.json"
variant prefix "'model.' + k" "" "pass"
variant copies "k" "encoder.embed_tokens.weight decoder.embed_tokens.weight" "pass"
variant noshared "None if k == 'shared.weight' else k" "encoder.embed_tokens.weight decoder.embed_tokens.weight" "pass"
variant nodeclayers "k" "" "del c['num_decoder_layers']"
variant mt5 "k" "" "c['model_type'] = 'mt5'" # mT5 runs T5's code path
# a decoder without any embedding table (neither shared.weight nor its embed_tokens) is refused
mkvariant noembed "None if k == 'shared.weight' else k" "encoder.embed_tokens.weight" "pass"
"$BIN" -m "$d" --dump json --ids 5,6,1 --target-ids 7,1 >/dev/null 2>"$TMP/e"
one_line "no decoder embeddings" $? 1 "missing tensor 'shared.weight'" "$TMP/e"

echo "encdec.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
