#!/usr/bin/python3
"""ref_mlm.py -- an independent numpy reference of BertForMaskedLM's predictions.

The masked-LM head as transformers (4.31) defines it, written from the published definition:
  BertPredictionHeadTransform: t = LayerNorm(act(h W_dense^T + b_dense)), act = config hidden_act,
                               eps = config layer_norm_eps;
  decoder: logits = t W_word^T + cls.predictions.bias, W_word the (tied) word embeddings;
  log-probabilities = logits - logsumexp(logits) over the whole vocabulary.
h is the last hidden state of ref_forward.py's BertModel (float64 by default), the text tokenized
by ref_tokenize.py's slow-BertTokenizer reference. Reads the safetensors with struct + numpy
(ref_forward.read_checkpoint); names with or without the hub's "bert." prefix, LayerNorm
weight/bias or gamma/beta. A folder without cls.predictions.* is an error.

Usage (from the source tree root, Debian's /usr/bin/python3):
  ref_mlm.py [--top-k K] [--all] [--json] [--float32] MODEL_DIR TEXT
prints, for each [MASK] (every position with --all), the top K (default 5) tokens with their
ids, probabilities and log-probabilities. models/README quotes its output for demo-bert.
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_forward  # noqa: E402
import ref_tokenize  # noqa: E402


def head_weights(model_dir):
    """{dense_w [d, d], dense_b [d], ln_w [d], ln_b [d], bias [V]} of cls.predictions (float32)."""
    raw = ref_forward.read_checkpoint(model_dir)
    w = {}
    for name, arr in raw.items():
        if name.startswith("cls.predictions."):
            name = name[len("cls.predictions."):]
            name = name.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")
            w[name] = arr
    need = {"dense_w": "transform.dense.weight", "dense_b": "transform.dense.bias",
            "ln_w": "transform.LayerNorm.weight", "ln_b": "transform.LayerNorm.bias", "bias": "bias"}
    missing = [v for v in need.values() if v not in w]
    if missing:
        raise SystemExit("%s: no masked-LM head (missing cls.predictions.%s)" % (model_dir, missing[0]))
    return {k: w[v] for k, v in need.items()}


def predict(model_dir, text, dtype=np.float64):
    """(encoding, log-probabilities [n, V]) of TEXT."""
    model = ref_forward.load_model(model_dir)
    head = {k: v.astype(dtype) for k, v in head_weights(model_dir).items()}
    enc = ref_tokenize.load(model_dir, "bert").encode(text)
    h = ref_forward.forward(model, enc["ids"], enc["type_ids"], dtype=dtype)["last_hidden_state"]   # [n, d]
    t = ref_forward.activation(model["act"], h @ head["dense_w"].T + head["dense_b"])
    t = ref_forward.layer_norm(t, head["ln_w"], head["ln_b"], model["eps"])
    logits = t @ model["w"]["embeddings.word_embeddings.weight"].astype(dtype).T + head["bias"]   # [n, V]
    m = logits.max(axis=1, keepdims=True)
    lse = m + np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
    return enc, logits - lse


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model_dir")
    ap.add_argument("text")
    ap.add_argument("--top-k", type=int, default=5)
    ap.add_argument("--all", action="store_true", help="every position, not only [MASK]")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--float32", action="store_true")
    a = ap.parse_args()
    enc, logp = predict(a.model_dir, a.text, np.float32 if a.float32 else np.float64)
    tok = ref_tokenize.load(a.model_dir, "bert")
    rows = []
    for i, t in enumerate(enc["tokens"]):
        if not a.all and t != "[MASK]":
            continue
        top = np.argsort(-logp[i], kind="stable")[:a.top_k]
        rows.append({"position": i, "token": t, "ids": [int(j) for j in top],
                     "tokens": [tok.id_to_token(int(j)) for j in top],
                     "logprobs": [float(logp[i, j]) for j in top]})
    if a.json:
        print(json.dumps({"tokens": enc["tokens"], "ids": enc["ids"], "predictions": rows}))
        return 0
    print(" ".join(enc["tokens"]))
    for r in rows:
        print("position %d (%s):" % (r["position"], r["token"]))
        for t, j, lp in zip(r["tokens"], r["ids"], r["logprobs"]):
            print("  %-14s %6d  p %.4f  log p %8.4f" % (t, j, np.exp(lp), lp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
