#!/usr/bin/python3
"""Check by hand that attnscope and the bench's PyTorch peer compute the same attention.

    /usr/bin/python3 bench/torch_check.py [--attnscope BIN] [--pair TEXT_B] [--tol T] MODEL TEXT...
    /usr/bin/python3 bench/torch_check.py --reference [--tol T] CASE.json...

Runs `attnscope --model MODEL --dump=json TEXT`, feeds the dump's token ids (and token type ids)
to bench/torch_families.py's implementation of the same model, and prints the largest absolute
difference of the attention probabilities, overall and per layer. Exit status 0 when it is at most
TOL (default 1e-4), 1 when larger, 2 on bad usage or a model this check cannot read. MODEL is a
folder, or the name of a bundled model (models/NAME). Needs python3-torch and python3-numpy
(Debian's /usr/bin/python3); used by `make bench` through bench/torch_peer.py as well.

With --reference, the same comparison of the PyTorch implementation with Hugging Face's own
attentions in the shared reference cases (../shared/reference/cases/{bert,gpt2}-*.json; the model
folder named in a case is looked up beside its cases folder): that the peer is HF's math.
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_families  # noqa: E402


def model_folder(name):
    if os.path.isdir(name):
        return name
    bundled = os.path.join(HERE, "..", "models", name)
    if os.path.isdir(bundled):
        return bundled
    raise FileNotFoundError(f"{name}: not a folder nor a bundled model")


def dump_attentions(dump):
    """The dump's attentions as float32 [layers, heads, n, n]; the dump must hold every layer and head."""
    att = np.asarray(dump["attentions"], dtype=np.float32)
    m = dump["model"]
    want = (m["layers"], m["heads"], len(dump["ids"]), len(dump["ids"]))
    if att.shape != want:
        raise ValueError(f"dump attentions have shape {att.shape}, expected {want} (every layer and head)")
    return att


def compare(model, dump):
    """Max |attnscope - torch| overall and per layer, for the ids of a parsed --dump json; and the
    mean of each row's largest weight (near 1/n the heads attend uniformly and the check says little)."""
    ours = dump_attentions(dump)
    theirs = torch_families.attentions(model, dump["ids"], dump.get("token_type_ids"))
    diff = np.abs(ours.astype(np.float64) - theirs.astype(np.float64))
    return float(diff.max()), [float(d.max()) for d in diff], float(ours.max(axis=-1).mean())


def check_references(paths, tol):
    """Compare the PyTorch implementation with the HF attentions of each reference case in PATHS."""
    worst_all = 0.0
    for path in paths:
        with open(path) as f:
            case = json.load(f)
        folder = os.path.join(os.path.dirname(os.path.abspath(path)), "..", case["model_dir"])
        model = torch_families.load_model(folder)
        ours = torch_families.attentions(model, case["ids"], case.get("token_type_ids"))
        hf = np.asarray(case["attentions"], dtype=np.float32)
        worst = float(np.abs(ours.astype(np.float64) - hf).max()) if ours.shape == hf.shape else float("inf")
        worst_all = max(worst_all, worst)
        print(f"{os.path.basename(path)}: {len(case['ids'])} tokens, max |torch - HF| = {worst:.3g}")
    print(f"largest difference {worst_all:.3g} (tolerance {tol:g})")
    return 0 if worst_all <= tol else 1


def main():
    if "--reference" in sys.argv[1:]:
        ap = argparse.ArgumentParser(description="Check the PyTorch implementation against HF reference cases")
        ap.add_argument("--reference", action="store_true")
        ap.add_argument("--tol", type=float, default=1e-4, help="largest allowed difference (default 1e-4)")
        ap.add_argument("cases", nargs="+")
        a = ap.parse_args()
        try:
            return check_references(a.cases, a.tol)
        except (OSError, ValueError, KeyError) as e:
            print(f"torch_check: {e}", file=sys.stderr)
            return 2
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--attnscope", default=os.path.join(HERE, "..", "attnscope"), help="the attnscope binary")
    ap.add_argument("--pair", help="second sentence (BERT pairs)")
    ap.add_argument("--tol", type=float, default=1e-4, help="largest allowed difference (default 1e-4)")
    ap.add_argument("model")
    ap.add_argument("text", nargs="+")
    a = ap.parse_args()
    try:
        folder = model_folder(a.model)
        model = torch_families.load_model(folder)
    except (OSError, ValueError, KeyError) as e:
        print(f"torch_check: {e}", file=sys.stderr)
        return 2
    cmd = [a.attnscope, "--model", folder, "--dump=json"] + (["--pair", a.pair] if a.pair else []) + a.text
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        print(f"torch_check: {' '.join(cmd[:4])} ... failed: {run.stderr.strip()}", file=sys.stderr)
        return 2
    dump = json.loads(run.stdout)
    worst, per_layer, sharp = compare(model, dump)
    n = len(dump["ids"])
    print(f"{os.path.normpath(folder)}: {n} tokens, {len(per_layer)} layers x {dump['model']['heads']} heads: "
          f"max |attnscope - torch| = {worst:.3g} (tolerance {a.tol:g})")
    print(f"  a row's largest weight is {sharp:.2f} on average (uniform: {1 / n:.2f})")
    print("  per layer: " + " ".join(f"{d:.2g}" for d in per_layer))
    return 0 if worst <= a.tol else 1


if __name__ == "__main__":
    sys.exit(main())
