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
