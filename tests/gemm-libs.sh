#!/bin/sh
# gemm-libs.sh -- the engine's fidelity suite (check_engine: the shared reference and the own
# fixtures within their tolerances, token reuse bit for bit, the rows block) with each GEMM library
# forced in turn (ATTNSCOPE_GEMM). make check's own run takes whichever library measured fastest on
# the machine at hand; this one runs every library the build and the CPU have: OpenBLAS, attnscope's
# kernel (AVX2 and FMA) with AVX2's tiles and with AVX-512's (AVX-512F), oneDNN (configure --with-gemm).
set -u
TEST_NAME=gemm-libs
. "${top_srcdir:-.}/tests/lib-cli.sh" # BIN SRC REF PY TOOLS TMP, ok/bad, expect_eq/_grep/_nogrep
ENGINE=${top_builddir:-.}/check_engine
ran=0
# attnscope's kernel once per kind of tiles (ATTNSCOPE_GEMM_KERNEL): AVX2's, and AVX-512's where the CPU has it
for run in openblas attnscope:avx2 attnscope:avx512 dnnl; do
	lib=${run%%:*} kernel=${run#*:}
	[ "$kernel" != "$run" ] || kernel=auto
	export ATTNSCOPE_GEMM_KERNEL=$kernel
	ATTNSCOPE_GEMM=$lib "$BIN" --version --verbose >"$TMP/v" 2>"$TMP/e"
	if grep -q "ATTNSCOPE_GEMM=$lib:\|ATTNSCOPE_GEMM_KERNEL=$kernel:" "$TMP/e"; then # not built in, or not for this CPU: said
		echo "$run: not here: $(cat "$TMP/e")"
		continue
	fi
	expect_grep "$run forced" "$TMP/v" "forced by ATTNSCOPE_GEMM=$lib"
	ATTNSCOPE_GEMM=$lib "$ENGINE" >"$TMP/out" 2>&1
	rc=$?
	expect_eq "check_engine with ATTNSCOPE_GEMM=$lib ATTNSCOPE_GEMM_KERNEL=$kernel" $rc 0
	[ $rc -eq 0 ] || tail -40 "$TMP/out"
	grep -E "^(shared reference|own fixtures|demo models):|rows in blocks" "$TMP/out" | sed "s/^/$run: /"
	ran=$((ran + 1))
	# attnscope's kernel: a row's sums do not depend on the other rows, so every token is reused
	name=$([ "$kernel" = avx512 ] && echo AVX-512 || echo AVX2)
	[ "$lib" != attnscope ] || expect_grep "attnscope's $name kernel reuses every token" "$TMP/out" \
		"^attnscope's $name kernel: rows in blocks of 1\$"
done
unset ATTNSCOPE_GEMM_KERNEL
[ "$ran" -gt 0 ] || bad "no library ran (OpenBLAS is always there)"
echo "gemm-libs.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
