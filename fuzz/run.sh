#!/bin/sh
# fuzz/run.sh SECONDS TARGET... -- run each libFuzzer target for SECONDS, one process, one core.
#
# Run from the build folder (make fuzz / make fuzz-short do). Each target starts from its seed
# corpus in the source tree (fuzz/corpus/TARGET, read only) plus what earlier runs found in
# fuzz-work/TARGET of the build folder, where new inputs and any crash-* / leak-* / oom-* /
# timeout-* reproducer go. Prints one line per target:
#   PASS: fuzz_x: 123456 runs in 25 s (4938/s), cov: 1234 ft: 5678, corpus 345
# or FAIL with the end of libFuzzer's report, and exits 1 when any target failed.
# Reproduce a failure with: ./fuzz/TARGET fuzz-work/TARGET/crash-...
# FUZZ_JOBS=N runs N targets at a time (default 1); the lines still come in the order given.
set -u
secs=${1:?seconds}
shift
src=$(cd "$(dirname "$0")" && pwd)
jobs=${FUZZ_JOBS:-1}

# run_one TARGET: fuzz it, its PASS/FAIL line (and report) into fuzz-work/TARGET.result
run_one() {
	t=$1
	rm -f "fuzz-work/$t.result"
	work=fuzz-work/$t
	mkdir -p "$work"
	log=fuzz-work/$t.log
	# -malloc_limit_mb: one allocation above 512 MB from inputs of a few KB is a bug (an
	# unchecked size from a header), reported like a crash.
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
		./fuzz/$t -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
		-print_final_stats=1 -artifact_prefix="$work/" "$work" "$src/corpus/$t" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n1)
	last=$(grep -E '^#[0-9]+' "$log" | tail -n1)
	cov=$(printf '%s\n' "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(printf '%s\n' "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	corp=$(printf '%s\n' "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
	summary="$t: ${runs:-?} runs in $secs s (${rate:-?}/s), cov: ${cov:-?} ft: ${ft:-?}, corpus ${corp:-?}"
	if [ $rc -eq 0 ] && ! grep -q -E '^==[0-9]+==ERROR|^SUMMARY: ' "$log"; then
		echo "PASS: $summary"
	else
		echo "FAIL: $summary (exit $rc)"
		grep -E -A40 '^==[0-9]+==ERROR|deadly signal|^fuzz: |runtime error' "$log" | head -60
		ls "$work"/crash-* "$work"/leak-* "$work"/oom-* "$work"/timeout-* 2>/dev/null | sed 's/^/reproducer: /'
	fi >"fuzz-work/$t.result"
}

# In batches of JOBS targets (POSIX sh has no wait for "any one"), then the results in order.
all="$*"
while [ $# -gt 0 ]; do
	i=0
	while [ $# -gt 0 ] && [ $i -lt "$jobs" ]; do
		run_one "$1" &
		shift
		i=$((i + 1))
	done
	wait
done
failed=0
for t in $all; do
	if [ -f "fuzz-work/$t.result" ]; then cat "fuzz-work/$t.result"; else echo "FAIL: $t: no result"; fi
	grep -q "^PASS: " "fuzz-work/$t.result" 2>/dev/null || failed=1
done
exit $failed
