#!/usr/bin/python3
"""The PyTorch side of `make bench`: a child process that bench_attnscope drives line by line.

    /usr/bin/python3 bench/torch_peer.py MODEL_DIR

It loads MODEL_DIR with bench/torch_families.py, then answers one reply per command on stdin:
  ids ID...                -> "ok N"                      the token ids of the next commands
  time THREADS REPS WARMUPS -> "time BEST_MS THREADS"     forward with attentions on those ids at
                                                          THREADS threads: WARMUPS uncounted runs,
                                                          then the best of REPS
  attn                     -> "attn L H N" + L*H*N*N float32 (native order) of the attentions
  check DUMP.json          -> "check MAX SHARP L0 L1 ..." bench/torch_check.py's comparison with a
                                                          file written by `attnscope --dump=json`:
                                                          largest difference, mean of each row's
                                                          largest weight, largest per layer
  corpus PATH BATCH THREADS REPS
                           -> "corpus BEST_S THREADS DIFF CPU_S BLAS_THREADS"
                                                          corpus mode's yardstick (BERT only): every
                                                          text of PATH (token ids, one text a line)
                                                          through the model in file order, BATCH
                                                          texts padded to the longest of them and
                                                          masked as BertModel masks (attention_mask),
                                                          attentions returned, at THREADS threads:
                                                          one batch uncounted, then the best of REPS
                                                          passes over the file, in seconds (CPU_S:
                                                          the process's CPU time in it; BLAS_THREADS:
                                                          the threads of the OpenBLAS that torch's
                                                          products run on, which THREADS does not
                                                          bound; 0 when none is loaded). First it
                                                          checks that the first two texts padded in
                                                          one batch give, on their real rows, the
                                                          attentions of each text alone: DIFF, the
                                                          largest difference; above 1e-5 the reply
                                                          is an error
Replies "error MESSAGE" when a command fails. At start it prints "ready TORCH_VERSION CPUS", or
"error MESSAGE" and exits (torch or numpy missing, a model it cannot read). It exits at the end of
its input.
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def reply(out, line, payload=None):
    out.write((line + "\n").encode())
    if payload is not None:
        out.write(payload)
    out.flush()


def padded_batch(torch, texts, extra=0):
    """TEXTS (lists of ids) as BertModel's inputs: ids [B, n] padded with 0 ([PAD]) to the longest
    text plus EXTRA, and attention_mask [B, n] (1 on a text's tokens, 0 on padding)."""
    n = max(len(t) for t in texts) + extra
    ids = torch.zeros(len(texts), n, dtype=torch.long)
    mask = torch.zeros(len(texts), n, dtype=torch.long)
    for i, t in enumerate(texts):
        ids[i, :len(t)] = torch.tensor(t, dtype=torch.long)
        mask[i, :len(t)] = 1
    return ids, mask


def corpus_check(torch, model, texts):
    """The largest difference between the attentions of each of TEXTS run alone and their real rows
    in one padded batch (4 more padded positions than the longest, so that the mask is at work even
    when the texts are of one length); a padded key's weight on a real row counts as a difference."""
    worst = 0.0
    with torch.inference_mode():
        ids, mask = padded_batch(torch, texts, 4)
        _, batch = model(ids, attention_mask=mask)
        for i, t in enumerate(texts):
            n = len(t)
            _, alone = model(torch.tensor([t], dtype=torch.long))
            for lb, la in zip(batch, alone):
                worst = max(worst, (lb[i, :, :n, :n] - la[0]).abs().max().item(),
                            lb[i, :, :n, n:].abs().max().item())
    return worst


def blas_threads():
    """The thread count of the OpenBLAS loaded in this process (Debian's torch is built with
    BLAS_INFO=generic and calls the system libblas for its float32 products; torch.set_num_threads
    bounds OpenMP, not OpenBLAS's own threads), or 0 when no OpenBLAS is loaded."""
    import ctypes
    with open("/proc/self/maps") as f:
        libs = sorted({line.split()[-1] for line in f if "blas" in line.rsplit("/", 1)[-1]})
    for path in libs:
        try:
            return int(ctypes.CDLL(path).openblas_get_num_threads())
        except (OSError, AttributeError):
            continue
    return 0


def corpus_time(torch, model, path, batch, threads, reps):
    """Corpus mode's PyTorch yardstick (see the top): (best seconds, threads used, check's difference,
    CPU seconds of the best pass: on a shared machine the wall time also holds the neighbours' share)."""
    if getattr(model, "causal", True):
        raise ValueError("the corpus yardstick runs the BERT model only")
    if batch < 1 or reps < 1:
        raise ValueError("BATCH and REPS must be at least 1")
    with open(path) as f:
        texts = [[int(w) for w in line.split()] for line in f if line.strip()]
    if not texts:
        raise ValueError(f"{path}: no texts")
    torch.set_num_threads(threads)
    diff = corpus_check(torch, model, texts[:2])
    if not diff <= 1e-5:
        raise ValueError(f"padded batch differs from the texts run alone by {diff:.3g} (> 1e-5)")
    batches = [padded_batch(torch, texts[i:i + batch]) for i in range(0, len(texts), batch)]
    best, cpu = float("inf"), 0.0
    with torch.inference_mode():
        model(batches[0][0], attention_mask=batches[0][1])  # warm-up: the allocator and the thread pool
        for _ in range(reps):
            t0, c0 = time.perf_counter(), time.process_time()
            for ids, mask in batches:
                model(ids, attention_mask=mask)  # attentions returned, as output_attentions
            dt = time.perf_counter() - t0
            if dt < best:
                best, cpu = dt, time.process_time() - c0
    return best, torch.get_num_threads(), diff, cpu, blas_threads()


def serve(model, out):
    import numpy as np
    import torch
    import torch_check
    import torch_families

    ids = None
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        cmd, args = words[0], words[1:]
        try:
            if cmd == "ids":
                ids = [int(w) for w in args]
                reply(out, f"ok {len(ids)}")
            elif ids is None and cmd in ("time", "attn"):
                reply(out, "error no ids given yet")
            elif cmd == "time":
                threads, reps, warmups = int(args[0]), int(args[1]), int(args[2])
                torch.set_num_threads(threads)
                t = torch.tensor([ids], dtype=torch.long)
                best = float("inf")
                with torch.inference_mode():
                    for r in range(warmups + reps):
                        t0 = time.perf_counter()
                        model(t)
                        dt = time.perf_counter() - t0
                        if r >= warmups:
                            best = min(best, dt)
                reply(out, f"time {best * 1e3:.3f} {torch.get_num_threads()}")
            elif cmd == "attn":
                a = np.ascontiguousarray(torch_families.attentions(model, ids), dtype=np.float32)
                reply(out, "attn %d %d %d" % a.shape[:3], a.tobytes())
            elif cmd == "check":
                with open(args[0]) as f:
                    worst, per_layer, sharp = torch_check.compare(model, json.load(f))
                reply(out, "check %.6g %.4f %s" % (worst, sharp, " ".join("%.2g" % d for d in per_layer)))
            elif cmd == "corpus":
                best, used, diff, cpu, blas = corpus_time(torch, model, args[0], int(args[1]), int(args[2]),
                                                          int(args[3]))
                reply(out, f"corpus {best:.3f} {used} {diff:.3g} {cpu:.3f} {blas}")
            else:
                reply(out, f"error unknown command {cmd}")
        except (ValueError, IndexError, KeyError, OSError, RuntimeError) as e:
            reply(out, f"error {cmd}: {str(e).splitlines()[0] if str(e) else type(e).__name__}")


def main():
    out = sys.stdout.buffer
    if len(sys.argv) != 2:
        reply(out, "error usage: torch_peer.py MODEL_DIR")
        return 2
    try:
        import torch
        import torch_families
    except ImportError as e:
        reply(out, f"error {e} (Debian: apt-get install python3-torch python3-numpy)")
        return 1
    try:
        model = torch_families.load_model(sys.argv[1])
    except (OSError, ValueError, KeyError) as e:
        reply(out, f"error {e}")
        return 1
    reply(out, f"ready {torch.__version__} {os.cpu_count()}")
    serve(model, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
