#!/bin/sh
# decoder-views.sh -- the views and the export on the decoder fixtures: grouped-query attention
# (llama-gqa: 6 query heads read 3 key/value heads; gemma-mqa: 1), rotary embeddings (q/k before
# and after), sliding windows (mistral-window: 4 keys), soft-capping and partial rotary. Every
# view prints; the --print header, grid and Q/K views name the shape; --dump json describes it.
# Needs jq.
set -u
TEST_NAME=decoder
. "${top_srcdir:-.}/tests/lib-cli.sh" # BIN SRC REF PY TOOLS TMP, ok/bad, expect_eq/_grep/_nogrep
M=$SRC/tests/data/models
export LC_ALL=C.UTF-8 XDG_CONFIG_HOME="$TMP/no-config"
command -v jq >/dev/null || { echo "decoder-views.sh: jq is required"; exit 99; }
[ -f "$M/llama-gqa/config.json" ] || { echo "decoder fixtures missing"; exit 77; }
TEXT="the cat sat on the mat and the dog sat"

# Every view prints on every decoder family; the header names grouped-query attention.
for model in llama-gqa gemma-mqa mistral-window gemma2-softcap gemma3-local neox-parallel; do
	for v in grid heatmap heads qk rollout headview neuron vectors qkstats dots softmax; do
		"$BIN" -m "$M/$model" --print "$v" --width 120 --color never "$TEXT" >"$TMP/out" 2>&1
		expect_eq "$model --print $v status" $? 0
	done
done
"$BIN" -m "$M/llama-gqa" --print grid --width 120 --color never --head 3 "$TEXT" >"$TMP/grid" 2>&1
expect_grep "header names GQA" "$TMP/grid" "^llama-gqa · llama · 6 q heads / 3 kv heads · .* head 3 (kv 1)$"
expect_grep "grid title names GQA" "$TMP/grid" "2 layers × 6 q heads / 3 kv heads"
expect_grep "grid brackets kv heads" "$TMP/grid" "^kv  ╭─*kv0─*╮ ╭─*kv1─*╮ ╭─*kv2─*╮"
"$BIN" -m "$M/gemma-mqa" --print grid --width 120 --color never "$TEXT" >"$TMP/out" 2>&1
expect_grep "MQA header" "$TMP/out" "4 q heads / 1 kv head ·"
"$BIN" -m "$M/gpt2-mini" --print grid --width 120 --color never "$TEXT" >"$TMP/out" 2>&1
expect_nogrep "no kv row without GQA" "$TMP/out" "kv"

# Sliding windows: layers marked, keys past the window blank and masked.
"$BIN" -m "$M/mistral-window" --print grid --width 120 --color never "$TEXT" >"$TMP/out" 2>&1
expect_grep "window in the layer label" "$TMP/out" "^L0 w4 "
"$BIN" -m "$M/mistral-window" --print heatmap --width 160 --color never --token 9 "$TEXT" >"$TMP/out" 2>&1
expect_grep "heatmap title" "$TMP/out" "layer 0 head 0, kv head 0 (shared by heads 0–1), window 4 ·"
expect_eq "top keys: only the 4 in the window" "$(grep -o ' [0-9]*\. [0-9]\.[0-9]\{6\}  ' "$TMP/out" | wc -l)" 4
"$BIN" -m "$M/mistral-window" --print neuron --width 160 --color never --token 9 "$TEXT" >"$TMP/out" 2>&1
# 6 keys before the window of token 9, 7 after it (causal)
expect_eq "neuron: keys outside 6..9 are masked" "$(grep -c ' masked$' "$TMP/out")" 13
"$BIN" -m "$M/mistral-window" --print dots --width 160 --color never --token 9 "$TEXT" >"$TMP/out" 2>&1
# The notebook's keys: those in the window (6..9) but the query itself (and the first token)
expect_grep "dots: the keys in the window" "$TMP/out" "notebook 004: keys 6…8 (3 keys)"
expect_grep "dots: groups" "$TMP/out" "4 query heads read 2 key heads: 0–1 → kv0, 2–3 → kv1"
expect_grep "dots: 4 heads x 3 keys" "$TMP/out" "^n 12 "

# BOS sink: hiding it says how much of the row was left.
"$BIN" -m "$M/llama-gqa" --print heatmap --hide-special --width 160 --color never --token 3 "$TEXT" >"$TMP/out" 2>&1
expect_grep "kept share" "$TMP/out" "row kept [0-9.]*% before renormalising"

# Rotary: the Q/K views say which vectors they show; --before-rotary switches them.
for v in qk neuron qkstats dots; do
	"$BIN" -m "$M/llama-gqa" --print "$v" --width 200 --color never "$TEXT" >"$TMP/after" 2>&1
	"$BIN" -m "$M/llama-gqa" --print "$v" --width 200 --color never --before-rotary "$TEXT" >"$TMP/before" 2>&1
	expect_grep "$v after rotary by default" "$TMP/after" "after rotary"
	expect_grep "$v before rotary" "$TMP/before" "before rotary"
	if cmp -s "$TMP/after" "$TMP/before"; then bad "$v: --before-rotary changed nothing"; else ok; fi
	"$BIN" -m "$M/gpt2-mini" --print "$v" --width 200 --color never "$TEXT" >"$TMP/out" 2>&1
	expect_nogrep "$v: no rotary stage without rotary" "$TMP/out" "rotary"
done
# A mixture of experts: the heatmap panel says where the query token's MLP went, as --dump json routes it.
"$BIN" -m "$M/mixtral-moe" --dump json "$TEXT" >"$TMP/moe.json" 2>/dev/null
want=$(jq -r '.moe_topk[1][3] as $e | .moe_weights[1][3] as $w | range($e | length) | "\($e[.]) \($w[.])"' "$TMP/moe.json" |
	awk '{ printf "%s%d (%.2f)", (NR > 1 ? ", " : "experts "), $1, $2 }')
"$BIN" -m "$M/mixtral-moe" --print heatmap --layer 1 --token 3 --width 110 --color never "$TEXT" >"$TMP/out" 2>&1
expect_eq "heatmap panel: the query's experts" "$(sed -n 's/.*\(experts [0-9].*[0-9])\).*/\1/p' "$TMP/out" | head -1)" "$want"
"$BIN" -m "$M/mixtral-moe" --print neuron --layer 1 --token 3 --width 200 --color never "$TEXT" >"$TMP/out" 2>&1
expect_grep "neuron view: the query's experts" "$TMP/out" "query .* (token 3) · $want · d = "
"$BIN" -m "$M/llama-gqa" --print heatmap --width 110 --color never "$TEXT" >"$TMP/out" 2>&1
expect_eq "a dense model names no experts" "$(grep -c 'experts' "$TMP/out")" 0
# A long text: more tips than the vector plot can tell apart become a density; only A and B stay
# vectors with labels (the demo GPT-2 takes 256 tokens).
LONG=$(for i in $(seq 1 40); do printf "the river ran past the old mill "; done)
"$BIN" -m "$SRC/models/demo-gpt2" --print vectors --token 5 --width 100 --color never "$LONG" >"$TMP/out" 2>/dev/null
expect_grep "vectors of 256 tokens: a density" "$TMP/out" "^tips of the other tokens as a density: ░ .* points per cell · vectors of A and B"
expect_eq "vectors of 256 tokens: labels of A and B only" "$(grep -c 'A:\|B:' "$TMP/out")" 2
"$BIN" -m "$M/llama-gqa" --print qkstats --width 120 --color never "$TEXT" >"$TMP/out" 2>&1
expect_eq "qkstats: one key bar per kv head" "$(grep -c '^kv[0-9] k' "$TMP/out")" 3

# --dump json describes the model: kv heads, rotary, windows, q/k before rotary.
"$BIN" -m "$M/llama-gqa" --dump json "$TEXT" >"$TMP/gqa.json"; expect_eq "dump status" $? 0
expect_eq "model shape" "$(jq -c '.model | [.heads, .kv_heads, .rotary]' "$TMP/gqa.json")" '[6,3,true]'
expect_eq "kv_head_indices" "$(jq -c .kv_head_indices "$TMP/gqa.json")" '[0,0,1,1,2,2]'
expect_eq "keys per query head, shared in a group" "$(jq '.keys[1][2] == .keys[1][3] and .keys[1][1] != .keys[1][2]' "$TMP/gqa.json")" true
expect_eq "before-rotary shapes" "$(jq -c '[.queries_before_rotary, .keys_before_rotary] | map([length, (.[0] | length), (.[0][0] | length), (.[0][0][0] | length)])' "$TMP/gqa.json")" \
	"$(jq -c '[.queries, .keys] | map([length, (.[0] | length), (.[0][0] | length), (.[0][0][0] | length)])' "$TMP/gqa.json")"
# Rotary turns position 0 by 0: before and after agree there, and differ later.
expect_eq "rotary is the identity at position 0" "$(jq '[.keys_before_rotary[0][0][0], .keys[0][0][0]] | transpose | map(.[0] - .[1] | fabs) | max < 1e-5' "$TMP/gqa.json")" true
expect_eq "rotary turns position 1" "$(jq '[.keys_before_rotary[0][0][1], .keys[0][0][1]] | transpose | map(.[0] - .[1] | fabs) | max > 1e-3' "$TMP/gqa.json")" true
"$BIN" -m "$M/llama-gqa" --dump json --layer 1 --head 5 "$TEXT" >"$TMP/sel.json"
expect_eq "restricted kv_head_indices" "$(jq -c .kv_head_indices "$TMP/sel.json")" '[2]'
expect_eq "restricted before rotary" "$(jq -c '.queries_before_rotary[0][0]' "$TMP/sel.json")" "$(jq -c '.queries_before_rotary[1][5]' "$TMP/gqa.json")"
"$BIN" -m "$M/mistral-window" --dump json "$TEXT" >"$TMP/win.json"
expect_eq "windows" "$(jq -c .model.windows "$TMP/win.json")" '[{"before":3,"after":0},{"before":3,"after":0}]'
"$BIN" -m "$M/gpt2-mini" --dump json "$TEXT" >"$TMP/gpt2.json"
expect_eq "gpt2 shape" "$(jq -c '.model | [.heads, .kv_heads, .rotary, (.windows | map(.before) | unique)]' "$TMP/gpt2.json")" '[2,2,false,[null]]'
expect_eq "no before-rotary arrays without rotary" "$(jq 'has("queries_before_rotary")' "$TMP/gpt2.json")" false

# The neuron view's scores are the model's: two visible keys' scores differ by the log of their
# weights' ratio (softmax), with query_pre_attn_scalar's scaling and Gemma 2's soft-capping
# (gemma2-softcap), GPT-2's 1/(layer+1) (gpt2-mini-bf16) and plain 1/sqrt(d) (llama-gqa).
for case in "gemma2-softcap 1" "gpt2-mini-bf16 1" "llama-gqa 1"; do
	set -- $case
	"$BIN" -m "$M/$1" --print neuron --width 220 --color never --layer "$2" --token 9 "$TEXT" >"$TMP/out" 2>&1
	worst=$(grep -oE ' -?[0-9]+\.[0-9]{3} [01]\.[0-9]{4}' "$TMP/out" | awk '
		{ s[NR] = $1; w[NR] = $2; if ($2 > wm) { wm = $2; sm = $1 } }
		END { worst = 0; for (i = 1; i <= NR; i++) if (w[i] >= 0.05) {
			d = (s[i] - sm) - log(w[i] / wm); if (d < 0) d = -d; if (d > worst) worst = d }
			printf "%s", (NR >= 2 && worst < 0.02) ? "consistent" : "off by " worst " over " NR " keys" }')
	expect_eq "neuron scores match the weights ($1)" "$worst" consistent
done

# Learned attention sinks (gpt-oss): --dump json gives them per layer and head; each row sums to less
# than 1 and is not renormalised; the grid, the heatmap panel, the head finder and the rollout say the sink's share.
"$BIN" -m "$M/gptoss-sinks" --dump json "$TEXT" >"$TMP/sinks.json"
expect_eq "sinks shape" "$(jq -c '.model.sinks | [length, (.[0] | length)]' "$TMP/sinks.json")" '[2,4]'
expect_eq "rows sum to at most 1, many well below" "$(jq -c '[.attentions[][][] | add] | [max <= 1.000001, (map(select(. < 0.9)) | length >= 16)]' "$TMP/sinks.json")" '[true,true]'
expect_eq "no sinks without them" "$(jq '.model | has("sinks")' "$TMP/gpt2.json")" false
for v in grid heatmap heads qk rollout headview neuron vectors qkstats dots softmax; do
	"$BIN" -m "$M/gptoss-sinks" --print "$v" --width 120 --color never "$TEXT" >"$TMP/out" 2>&1
	expect_eq "gptoss-sinks --print $v status" $? 0
done
"$BIN" -m "$M/gptoss-sinks" --print heatmap --width 120 --color never --token 5 "$TEXT" >"$TMP/out" 2>&1
expect_grep "heatmap panel: the sink's share" "$TMP/out" "sink took [0-9.]*% of this row"
"$BIN" -m "$M/gptoss-sinks" --print heads --width 120 --color never "$TEXT" >"$TMP/out" 2>&1
expect_grep "head finder: the sink's share" "$TMP/out" "sink takes [0-9.]*% of L0 H0's rows"
share=$(jq -r '[.attentions[0][0][] | 1 - add] | add / length * 100' "$TMP/sinks.json" | awk '{ printf "%.1f", $1 }')
"$BIN" -m "$M/gptoss-sinks" --print grid --width 160 --color never "$TEXT" >"$TMP/out" 2>&1
expect_grep "grid: the sink's share of the selected head ($share%, from --dump)" "$TMP/out" "sink takes $share% of L0 H0's rows"
"$BIN" -m "$M/gptoss-sinks" --print rollout --width 160 --color never --token 5 "$TEXT" >"$TMP/out" 2>&1
expect_grep "rollout: the sinks' share" "$TMP/out" "sinks took [0-9.]*% of row"

echo "decoder-views.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
