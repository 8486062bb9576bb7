#!/bin/sh
# corpus.sh -- corpus mode through the real binary: --corpus with --print heads, --dump json|csv and
# --save; --load; --shard K/N and `attnscope merge` (4 shards merged equal one run up to float
# rounding); the bad-input rules (empty lines counted, truncation warned, malformed JSON lines
# stop the run with their line number unless --keep-going); Ctrl-C keeps the partial aggregate;
# --print qkstats|dots|softmax of a corpus of one text shows that text's numbers; compact traces
# give the same aggregate.
# Needs jq.
set -u
TEST_NAME=corpus
. "${top_srcdir:-.}/tests/lib-cli.sh" # BIN SRC REF PY TOOLS TMP, ok/bad, expect_eq/_grep/_nogrep
BERT=$SRC/tests/data/models/bert-mini
GPT2=$SRC/tests/data/models/gpt2-mini
command -v jq >/dev/null || { echo "corpus.sh: jq is required"; exit 99; }

cat >"$TMP/c.txt" <<'TXT'
The cat sat on the mat.
A dog barked at the mailman, twice.

She said: hello, world!
The book was on the table, and the table was on the floor.
   
Rain again today; rain again tomorrow.
Who wrote this?
The quick brown fox jumps over the lazy dog.
One, two, three, four, five.
It was the best of times, it was the worst of times.
TXT

# One run: counts and the head finder's table. Texts one at a time (--batch 1) where runs are
# compared bit for bit: batched texts agree to float32 rounding only (checked below).
"$BIN" -m "$BERT" --corpus "$TMP/c.txt" --batch 1 --dump json >"$TMP/all.json" 2>"$TMP/err"; expect_eq "corpus dump status" $? 0
expect_eq "corpus counts" "$(jq -c '[.counts.lines, .counts.texts, .counts.empty, .counts.failed]' "$TMP/all.json")" '[11,9,2,0]'
expect_grep "empty lines reported" "$TMP/err" "c.txt: 2 empty lines skipped"
expect_eq "format" "$(jq -c '[.format, .version, .model.family, .model.layers, .model.heads, (.heads | length)]' "$TMP/all.json")" \
	'["attnscope-aggregate",2,"bert",3,2,6]'
expect_eq "every head has n texts for prev" "$(jq '[.heads[].prev.n] | unique' -c "$TMP/all.json")" '[9]'
"$BIN" -m "$BERT" --corpus "$TMP/c.txt" --batch 1 --print heads --width 150 --color never >"$TMP/heads" 2>/dev/null
expect_eq "print heads status" $? 0
expect_grep "print heads header" "$TMP/heads" "bert-mini · bert · corpus: 9 texts"
expect_grep "print heads mean±std" "$TMP/heads" "mean ± std over 9 texts"
# the table's cell is the dump's mean ± std
L0H0=$(jq -r '.heads[0].prev | "\(.mean * 1000 | round / 1000)±\(.std * 1000 | round / 1000)"' "$TMP/all.json")
expect_grep "print heads cell = dump" "$TMP/heads" "$(printf '%s' "$L0H0" | sed 's/±0\./±0./')"
"$BIN" -m "$BERT" --corpus "$TMP/c.txt" --dump csv >"$TMP/all.csv" 2>/dev/null
expect_eq "dump csv header" "$(head -n1 "$TMP/all.csv")" "layer,head,score,n,mean,std"
expect_eq "dump csv rows" "$(wc -l <"$TMP/all.csv" | tr -d ' ')" "$((1 + 6 * 11))"

# --save / --load: the same table without the model
"$BIN" -m "$BERT" --corpus "$TMP/c.txt" --batch 1 --save "$TMP/saved.json" 2>/dev/null; expect_eq "save status" $? 0
"$BIN" --load "$TMP/saved.json" --print heads --width 150 --color never >"$TMP/heads2" 2>&1
expect_eq "load status" $? 0
expect_eq "load prints the same table" "$(cat "$TMP/heads2")" "$(cat "$TMP/heads")"
"$BIN" --load "$TMP/saved.json" --dump json >"$TMP/again.json"
expect_eq "load + dump json is the saved file" "$(cat "$TMP/again.json")" "$(cat "$TMP/saved.json")"

# --shard K/N over 4 shards, merged, equals one run (counts exactly, moments up to rounding)
for k in 1 2 3 4; do
	"$BIN" -m "$BERT" --corpus "$TMP/c.txt" --batch 1 --shard $k/4 --save "$TMP/s$k.json" 2>/dev/null
done
expect_eq "shard 1/4 lines" "$(jq .counts.lines "$TMP/s1.json")" 3
"$BIN" merge -o "$TMP/m.json" "$TMP/s3.json" "$TMP/s1.json" "$TMP/s4.json" "$TMP/s2.json"; expect_eq "merge status" $? 0
expect_eq "merged counts" "$(jq -c .counts "$TMP/m.json")" "$(jq -c .counts "$TMP/all.json")"
expect_eq "merged sources" "$(jq -c '[.sources[].shard[0]]' "$TMP/m.json")" '[3,1,4,2]'
DIFF=$(jq -n --slurpfile a "$TMP/all.json" --slurpfile m "$TMP/m.json" '
	[range(0; $a[0].heads | length) as $h | $a[0].scores[] as $s
	 | ($a[0].heads[$h][$s]) as $x | ($m[0].heads[$h][$s]) as $y
	 | if $x.n != $y.n then 1 elif $x.n == 0 then 0
	   else ((($x.mean - $y.mean) | fabs) / ([($x.mean | fabs), 1e-300] | max)),
	        ((($x.m2 - $y.m2) | fabs) / ([($x.m2 | fabs), 1e-12] | max)) end] | max')
echo "corpus.sh: 4 shards merged vs one run: max relative difference $DIFF"
expect_eq "4 shards merged = one run (max relative difference $DIFF)" "$(jq -n "$DIFF < 1e-12")" true
# The man page's recipe: GNU parallel runs the 4 shards as 4 local jobs, attnscope merge joins them,
# and the result equals the shards run one after another and merged (byte for byte) and one run.
if command -v parallel >/dev/null; then
	parallel --will-cite -j 4 "$BIN" -m "$BERT" --corpus "$TMP/c.txt" --batch 1 --shard {}/4 --save "$TMP/p{}.agg" \
		::: 1 2 3 4 2>/dev/null
	expect_eq "parallel: 4 jobs status" $? 0
	"$BIN" merge -o "$TMP/pm.json" "$TMP"/p1.agg "$TMP"/p2.agg "$TMP"/p3.agg "$TMP"/p4.agg
	"$BIN" merge -o "$TMP/sm.json" "$TMP/s1.json" "$TMP/s2.json" "$TMP/s3.json" "$TMP/s4.json"
	expect_eq "parallel shards merged = sequential shards merged" \
		"$(jq -c 'del(.sources)' "$TMP/pm.json")" "$(jq -c 'del(.sources)' "$TMP/sm.json")"
	expect_eq "parallel shards merged: counts of one run" "$(jq -c .counts "$TMP/pm.json")" "$(jq -c .counts "$TMP/all.json")"
else
	bad "GNU parallel is required (tools/install-deps)"
fi
# Compact traces (long texts: heads recomputed from q and k when read) give the same aggregate
ATTNSCOPE_TRACE_BUDGET=100 "$BIN" -m "$BERT" --corpus "$TMP/c.txt" --batch 1 --dump json >"$TMP/compact.json" 2>/dev/null
expect_eq "compact traces: the same aggregate" "$(cat "$TMP/compact.json")" "$(cat "$TMP/all.json")"
# The default batches of texts: the same figures up to float32 rounding
"$BIN" -m "$BERT" --corpus "$TMP/c.txt" --dump json >"$TMP/batched.json" 2>/dev/null
DIFF=$(jq -n --slurpfile a "$TMP/all.json" --slurpfile m "$TMP/batched.json" '
	[range(0; $a[0].heads | length) as $h | $a[0].scores[] as $s
	 | ($a[0].heads[$h][$s]) as $x | ($m[0].heads[$h][$s]) as $y
	 | if $x.n != $y.n then 1 elif $x.n == 0 then 0
	   else ((($x.mean - $y.mean) | fabs) / ([($x.mean | fabs), 1e-3] | max)) end] | max')
echo "corpus.sh: batched vs one text at a time: max relative difference $DIFF"
expect_eq "batched = one at a time up to float32 rounding ($DIFF)" "$(jq -n "$DIFF < 1e-4")" true
"$BIN" -m "$BERT" --corpus "$TMP/c.txt" --batch 0 --save x >"$TMP/out" 2>&1; expect_eq "--batch 0 status" $? 2
expect_grep "--batch 0" "$TMP/out" "--batch: '0' is not a number of texts from 1 to 64"
"$BIN" merge "$TMP/s1.json" "$TMP/s2.json" >"$TMP/out" 2>"$TMP/err"; expect_eq "partial merge status" $? 0
expect_grep "missing shards warned" "$TMP/err" "warning: 2 of the 4 shards of $TMP/c.txt are missing"
"$BIN" merge "$TMP/s1.json" "$TMP/m.json" >"$TMP/out" 2>"$TMP/err"; expect_eq "duplicate shard status" $? 1
expect_grep "duplicate shard" "$TMP/err" "m.json: shard 1/4 of $TMP/c.txt is already in the aggregate"
"$BIN" -m "$GPT2" --corpus "$TMP/c.txt" --save "$TMP/g.json" 2>/dev/null
"$BIN" merge "$TMP/s1.json" "$TMP/g.json" >"$TMP/out" 2>"$TMP/err"; expect_eq "other model status" $? 1
expect_grep "other model" "$TMP/err" "made with another model"
echo '{"format": "attnscope-aggregate", "version": 7}' >"$TMP/v7.json"
"$BIN" --load "$TMP/v7.json" --print heads >"$TMP/out" 2>&1; expect_eq "version 7 status" $? 1
expect_grep "version 7" "$TMP/out" "v7.json: aggregate format version other is not 2"
echo '{"format": "attnscope-aggregate", "version": 1}' >"$TMP/v1.json"
"$BIN" --load "$TMP/v1.json" --print heads >"$TMP/out" 2>&1; expect_eq "version 1 status" $? 1
expect_grep "version 1" "$TMP/out" "v1.json: aggregate format version 1 is older than 2: it lacks the query/key statistics"

# The distributions and query/key moments merge too: histograms bin for bin, moments up to rounding
expect_eq "merged histograms = one run" "$(jq -c '[.layers[][] | objects | [.n, .exp, .first_bin, .bins, .min, .max]]' "$TMP/m.json")" \
	"$(jq -c '[.layers[][] | objects | [.n, .exp, .first_bin, .bins, .min, .max]]' "$TMP/all.json")"
DIFF=$(jq -n --slurpfile a "$TMP/all.json" --slurpfile m "$TMP/m.json" '
	[([$a[0].heads[].qk | .q_first, .q_rest, .k_first, .k_rest] | to_entries[]) as $e
	 | ([$m[0].heads[].qk | .q_first, .q_rest, .k_first, .k_rest][$e.key]) as $y | $e.value as $x
	 | if $x.n != $y.n then 1 else ((($x.mean - $y.mean) | fabs) / ([($x.mean | fabs), 1e-300] | max)),
	   ((($x.m2 - $y.m2) | fabs) / ([($x.m2 | fabs), 1e-12] | max)) end] | max')
expect_eq "4 shards merged = one run, query/key moments (max relative difference $DIFF)" "$(jq -n "$DIFF < 1e-12")" true
for v in qk qkstats dots softmax; do
	"$BIN" -m "$BERT" --corpus "$TMP/c.txt" --batch 1 --pca-head 0.0 --print $v --layer 2 --width 120 --color never \
		>"$TMP/run.$v" 2>/dev/null
	"$BIN" --load "$TMP/m.json" --print $v --layer 2 --width 120 --color never >"$TMP/merged.$v" 2>/dev/null
	expect_eq "--print $v of the merged shards = of one run" "$(tail -n +2 "$TMP/merged.$v")" "$(tail -n +2 "$TMP/run.$v")"
done
expect_grep "--print dots of a corpus" "$TMP/run.dots" "query: the last token of each of 9 texts"
expect_grep "--print qk of a corpus" "$TMP/run.qk" "query/key geometry · layer 0 head 0 · corpus sample: 103 tokens of 9 texts"
# More sampled points than the plot has cells: each cell shaded by its count, queries and keys apart.
for i in $(seq 1 80); do echo "the river number $i ran past the old mill and the new bridge"; done >"$TMP/many.txt"
"$BIN" -m "$BERT" --corpus "$TMP/many.txt" --print qk --width 100 --color never >"$TMP/out" 2>/dev/null
expect_grep "--print qk of 80 texts: a density" "$TMP/out" "^█ queries  █ keys  █ both  ░ .* points per cell  · axes"
expect_eq "a density has no markers but the selected token's query and key" "$(grep -c '[●◆]' "$TMP/out")" 2
expect_eq "the sample holds every token" "$(jq '[(.sample.tokens | length), .counts.tokens] | unique | length' "$TMP/all.json")" 1
expect_eq "merged sample = one run's" "$(jq -c .sample "$TMP/m.json")" "$(jq -c .sample "$TMP/all.json")"
# --pca-head: another head's vectors; shards of different heads do not merge; out of range
"$BIN" -m "$BERT" --corpus "$TMP/c.txt" --pca-head 2.1 --shard 1/4 --save "$TMP/p21.json" 2>/dev/null
expect_eq "--pca-head 2.1" "$(jq -c '[.sample.layer, .sample.head]' "$TMP/p21.json")" '[2,1]'
"$BIN" merge "$TMP/p21.json" "$TMP/s2.json" >"$TMP/out" 2>"$TMP/err"; expect_eq "other sample head status" $? 1
expect_grep "other sample head" "$TMP/err" "s2.json: its token sample holds layer 0 head 0, not layer 2 head 1 (--pca-head)"
"$BIN" -m "$BERT" --corpus "$TMP/c.txt" --pca-head 3.0 --save "$TMP/x.json" >"$TMP/out" 2>&1; expect_eq "--pca-head 3.0 status" $? 1
expect_grep "--pca-head 3.0" "$TMP/out" "no head L3 H0 for the Q/K PCA sample: the model has 3 layers of 2 heads"
"$BIN" -m "$BERT" --corpus "$TMP/c.txt" --pca-head 3 --save "$TMP/x.json" >"$TMP/out" 2>&1; expect_eq "--pca-head 3 status" $? 2
expect_grep "--pca-head 3" "$TMP/out" "--pca-head: '3' is not LAYER.HEAD"

# A corpus of one text: the views' numbers are the text's own (n, mean, std; mean ± std per head)
nums() { grep -oE '(n [0-9]+  mean [-0-9.]+  std [0-9.]+|[-+][0-9.]+ ± [0-9.]+)' "$1"; }
for m in "$BERT" "$GPT2"; do
	printf 'It was the best of times, it was the worst of times.\n' >"$TMP/one.txt"
	for v in qkstats dots softmax; do
		for l in 0 2; do
			"$BIN" -m "$m" --corpus "$TMP/one.txt" --print $v --layer $l --width 150 --color never >"$TMP/agg1" 2>/dev/null
			"$BIN" -m "$m" --print $v --layer $l --width 150 --color never \
				'It was the best of times, it was the worst of times.' >"$TMP/text1" 2>/dev/null
			expect_eq "one text, $(basename "$m") $v layer $l: numbers" "$(nums "$TMP/agg1")" "$(nums "$TMP/text1")"
			[ -n "$(nums "$TMP/agg1")" ] || bad "one text, $(basename "$m") $v layer $l: no numbers printed"
		done
	done
done

# JSON lines: pairs, a malformed line stops the run (exit 1) unless --keep-going
printf '{"text": "The cat sat.", "text_b": "It was happy."}\n{"text": "Dogs bark."}\n{"text": broken}\n\n{"txt": "x"}\n{"text": "Birds sing."}\n' >"$TMP/c.jsonl"
"$BIN" -m "$BERT" --corpus "$TMP/c.jsonl" --dump json >"$TMP/out" 2>"$TMP/err"; expect_eq "malformed line status" $? 1
expect_grep "malformed line number" "$TMP/err" "c.jsonl: line 3: invalid JSON at column 15"
"$BIN" -m "$BERT" --corpus "$TMP/c.jsonl" --keep-going --dump json >"$TMP/kg.json" 2>"$TMP/err"
expect_eq "--keep-going status" $? 0
expect_grep "--keep-going reports line 3" "$TMP/err" "c.jsonl: line 3: invalid JSON"
expect_grep "--keep-going reports line 5" "$TMP/err" "c.jsonl: line 5: no \"text\" string"
expect_eq "--keep-going counts" "$(jq -c '[.counts.texts, .counts.empty, .counts.failed]' "$TMP/kg.json")" '[3,1,2]'
# invalid UTF-8 in a plain line
printf 'fine text\nbad \377 byte\n' >"$TMP/u.txt"
"$BIN" -m "$BERT" --corpus "$TMP/u.txt" --keep-going --dump json >"$TMP/u.json" 2>"$TMP/err"
expect_eq "invalid UTF-8 keep-going" "$(jq -c '[.counts.texts, .counts.failed]' "$TMP/u.json")" '[1,1]'
expect_grep "invalid UTF-8 line" "$TMP/err" "u.txt: line 2:"

# A text past the model's 128 positions is truncated, with a count at the end
{ i=0; while [ $i -lt 200 ]; do printf 'word '; i=$((i + 1)); done; echo; echo short text; } >"$TMP/long.txt"
"$BIN" -m "$BERT" --corpus "$TMP/long.txt" --dump json >"$TMP/long.json" 2>"$TMP/err"; expect_eq "truncation status" $? 0
expect_grep "truncation warned" "$TMP/err" "warning: 1 text truncated to the model's 128 positions"
expect_eq "truncated count" "$(jq .counts.truncated "$TMP/long.json")" 1

# Usage errors
"$BIN" -m "$BERT" --corpus "$TMP/c.txt" >"$TMP/out" 2>&1; expect_eq "no output asked status" $? 2
expect_grep "no output asked" "$TMP/out" "the explorer needs a terminal; corpus mode in scripts needs --print, --dump json|csv or --save FILE"
"$BIN" -m "$BERT" --corpus "$TMP/c.txt" --print grid >"$TMP/out" 2>&1; expect_eq "--print grid status" $? 2
expect_grep "--print grid" "$TMP/out" "a corpus aggregate prints as --print heads, qk, qkstats, dots or softmax"
"$BIN" -m "$BERT" --corpus "$TMP/c.txt" --shard 5/4 --save x >"$TMP/out" 2>&1; expect_eq "--shard 5/4 status" $? 2
expect_grep "--shard 5/4" "$TMP/out" "'5/4' is not K/N"
"$BIN" -m "$BERT" --save x hello >"$TMP/out" 2>&1; expect_eq "--save without corpus" $? 2
"$BIN" -m "$BERT" --corpus "$TMP/nope.txt" --save "$TMP/x.json" >"$TMP/out" 2>&1; expect_eq "missing corpus status" $? 1
expect_grep "missing corpus" "$TMP/out" "nope.txt: No such file or directory"

# Ctrl-C: the partial aggregate is written, marked partial, and says how many texts it covers
i=0; while [ $i -lt 4000 ]; do cat "$TMP/c.txt"; i=$((i + 1)); done >"$TMP/big.txt"
"$BIN" -m "$BERT" --corpus "$TMP/big.txt" --threads 1 --save "$TMP/part.json" 2>"$TMP/err" &
pid=$!
sleep 1
kill -INT $pid
wait $pid; st=$?
if [ $st = 0 ]; then
	echo "corpus.sh: the run finished before Ctrl-C; interruption not tested"
else
	expect_eq "interrupted status" $st 130
	expect_grep "interrupted message" "$TMP/err" "interrupted: the aggregate covers the"
	expect_eq "partial flag" "$(jq -c '[.partial, .sources[0].partial, (.counts.texts > 0), (.counts.texts < 36000)]' "$TMP/part.json")" '[true,true,true,true]'
	"$BIN" --load "$TMP/part.json" --print heads --color never >"$TMP/out" 2>&1
	expect_grep "partial header" "$TMP/out" "(interrupted)"
fi

echo "corpus.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
