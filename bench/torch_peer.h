/* torch_peer.h -- the PyTorch peer of `make bench`: bench/torch_peer.py run as a child process on the
 * same model folder, driven over pipes, so attnscope and PyTorch are timed side by side in one run. */
#ifndef ATTNSCOPE_BENCH_TORCH_PEER_H
#define ATTNSCOPE_BENCH_TORCH_PEER_H

#include <stddef.h>
#include <stdint.h>

struct torch_peer;

/* Start the peer on model folder DIR (the interpreter is $ATTNSCOPE_BENCH_PYTHON, default
 * /usr/bin/python3; the script is bench/torch_peer.py under DATADIR). NULL with WHY filled when it
 * cannot run: no interpreter, no torch, a model it cannot read. */
struct torch_peer *torch_peer_start(const char *datadir, const char *dir, char *why, size_t whysz);
/* "1.13.0a0" */
const char *torch_peer_version(const struct torch_peer *p);
/* The token ids of the next commands. 0, or -1 with the peer's message in WHY. */
int torch_peer_ids(struct torch_peer *p, const int32_t *ids, int n, char *why, size_t whysz);
/* Forward on those ids at THREADS threads, WARMUPS uncounted runs then best of REPS: milliseconds, or -1. */
double torch_peer_time(struct torch_peer *p, int threads, int reps, int warmups, char *why, size_t whysz);
/* The attentions on those ids, [layers][heads][n][n] (free it), with the shape in *L, *H, *N. */
float *torch_peer_attn(struct torch_peer *p, int *layers, int *heads, int *n, char *why, size_t whysz);
/* Compare with the file DUMP written by `attnscope --dump=json`: the largest difference of the
 * attention probabilities (*WORST), the mean of each row's largest weight (*SHARP: near 1/n the heads
 * attend uniformly) and the per-layer differences as text (PER_LAYER). 0, or -1. */
int torch_peer_check(struct torch_peer *p, const char *dump, double *worst, double *sharp, char *per_layer,
		     size_t plsz, char *why, size_t whysz);
/* Corpus mode's yardstick: every text of PATH (token ids, one text a line) through the BERT model in
 * padded, masked batches of BATCH, attentions returned, at THREADS threads, best of REPS passes:
 * seconds (-1 on an error), with the threads used in *USED, in *DIFF how far two texts' padded
 * attentions were from their runs alone (the peer refuses above 1e-5), the CPU seconds of that
 * pass in *CPU and in *BLAS the threads of the OpenBLAS its products ran on (THREADS does not bound
 * them; 0: no OpenBLAS loaded). */
double torch_peer_corpus(struct torch_peer *p, const char *path, int batch, int threads, int reps, int *used,
			 double *diff, double *cpu, int *blas, char *why, size_t whysz);
/* Close its input and wait for it. NULL is fine. */
void torch_peer_stop(struct torch_peer *p);

#endif
