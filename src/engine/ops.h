/* ops.h -- the element-wise and row-wise operations a transformer block is composed of, in float32
 * as Hugging Face's eager PyTorch code computes them (private to the engine). */
#ifndef ATTNSCOPE_OPS_H
#define ATTNSCOPE_OPS_H

#include <stdbool.h>
#include <stddef.h>

enum activation { ACT_GELU_ERF, ACT_GELU_TANH, ACT_RELU, ACT_SILU };

/* Row-wise LayerNorm of X [n][d] into Y (may alias): biased variance like torch; B may be NULL. */
void ops_layernorm(const float *x, float *y, int n, int d, const float *g, const float *b, double eps);

/* Row-wise RMSNorm: y = x / sqrt(mean(x²) + eps) · (OFFSET + g); rows of D values STRIDE apart. */
void ops_rmsnorm(const float *x, float *y, int n, int d, int stride, const float *g, float offset, double eps);

void ops_activation(enum activation act, float *x, size_t count);

/* The vector math the activations and the softmax run on, for --version and the benchmark:
 * AVX-512 where oneDNN's AVX-512 products run, else AVX2 where the CPU has AVX2 and FMA, else none
 * (the scalar functions). Chosen at the first call; ATTNSCOPE_VECTOR_MATH=off (tests and the
 * benchmark only) keeps the scalar functions. */
const char *ops_vector_math(void);

/* Choose again (after a test changed ATTNSCOPE_VECTOR_MATH); never while a forward pass runs. */
void ops_vector_math_choose(void);

/* Gated unit: OUT[i] = act(GATE[i]) · UP[i] for the N rows of COUNT values (rows STRIDE apart in
 * GATE and UP; OUT is dense). */
void ops_gated(enum activation act, const float *gate, const float *up, int n, int count, int stride, float *out);

/* S → CAP · tanh(S / CAP) for COUNT scores (Gemma 2's attention soft-capping). */
void ops_softcap(float *s, size_t count, float cap);

/* Softmax of ROW's entries LO..HI in place; the others become exactly 0 (masked keys). */
void ops_softmax_range(float *row, int n, int lo, int hi);

/* The same for ROWS consecutive rows of N from S, row r's keys LO[r]..HI[r]: the same bits, the sums
 * of up to OPS_SOFTMAX_ROWS rows run side by side (a caller handing it rows in blocks: blocks of
 * that many). */
#define OPS_SOFTMAX_ROWS 16
void ops_softmax_rows(float *s, int n, int rows, const int *lo, const int *hi);

/* The same with a learned sink logit SINK taking part (gpt-oss): softmax over [ROW LO..HI, SINK] with
 * the sink's column dropped, so the row sums to 1 minus the sink's share. As transformers' eager
 * attention: the row's max (sink included) subtracted first, then a softmax of what is left. */
void ops_softmax_range_sink(float *row, int n, int lo, int hi, float sink);

/* DST = X for COUNT values (nothing written when DST is NULL); whether every one of them is finite.
 * One pass: the residual stream kept in a trace and checked for overflow at once. */
bool ops_copy_finite(float *dst, const float *x, size_t count);

/* X += Y for COUNT values. */
void ops_add(float *x, const float *y, size_t count);

#endif
