#!/bin/sh
# gemm-libs.sh -- the engine's fidelity suite (check_engine: the shared reference and the own
# fixtures within their tolerances, token reuse bit for bit, the rows block) with each GEMM library
# forced in turn (ATTNSCOPE_GEMM). make check's own run takes whichever library measured fastest on
# the machine at hand; this one runs every library the build and the CPU have: OpenBLAS, attnscope's
# AVX2 kernel (AVX2 and FMA), oneDNN (configure --with-gemm).
set -u
TEST_NAME=gemm-libs
. "${top_srcdir:-.}/tests/lib-cli.sh" # BIN SRC REF PY TOOLS TMP, ok/bad, expect_eq/_grep/_nogrep
ENGINE=${top_builddir:-.}/check_engine
ran=0
for lib in openblas attnscope dnnl; do
	ATTNSCOPE_GEMM=$lib "$BIN" --version --verbose >"$TMP/v" 2>"$TMP/e"
	if grep -q "ATTNSCOPE_GEMM=$lib:" "$TMP/e"; then # not built in, or not for this CPU: said, then auto
		echo "$lib: not here: $(cat "$TMP/e")"
		continue
	fi
	expect_grep "$lib forced" "$TMP/v" "forced by ATTNSCOPE_GEMM=$lib"
	ATTNSCOPE_GEMM=$lib "$ENGINE" >"$TMP/out" 2>&1
	rc=$?
	expect_eq "check_engine with ATTNSCOPE_GEMM=$lib" $rc 0
	[ $rc -eq 0 ] || tail -40 "$TMP/out"
	grep -E "^(shared reference|own fixtures|demo models):|rows in blocks" "$TMP/out" | sed "s/^/$lib: /"
	ran=$((ran + 1))
	# attnscope's kernel: a row's sums do not depend on the other rows, so every token is reused
	[ "$lib" != attnscope ] || expect_grep "attnscope's kernel reuses every token" "$TMP/out" \
		"^attnscope's AVX2 kernel: rows in blocks of 1\$"
done
[ "$ran" -gt 0 ] || bad "no library ran (OpenBLAS is always there)"
echo "gemm-libs.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
