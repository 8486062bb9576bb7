#!/usr/bin/python3
"""ref_dla.py -- an independent numpy reference of direct logit attribution (TransformerLens' DLA with a
frozen final-norm scale) for GPT-2 models, against attnscope's --dump json --lens "dla".

From the definitions, in float64 on the repository's own GPT-2 forward pass (ref_forward.py: the heads'
contexts); the rest of the block is written here. At position i with next token t = ids[i+1], every
component c written to the last residual stream x (the embeddings, each head's output o_h = its context
times its d rows of c_proj.weight, each layer's c_proj bias and each MLP's output) gets
    dla(c) = ((c - mean(c)) / sigma * gamma) . (U[t] - mean_v U[v]),
sigma = sqrt(var(x) + eps) of ln_f (frozen: computed once from the whole x), gamma = ln_f.weight, U = wte.
The identity that holds exactly (ln_f is affine once sigma is fixed):
    sum over every component of dla(c) + beta . (U[t] - mean U) = logit[t] - mean_v logit[v],
with logits = ln_f(x) @ U^T the model's own; this script checks it (1e-9 relative) before comparing.

    ref_dla.py MODEL_DIR DUMP.json [MISTAKE]
        compare the dump's dla (at dla_token) with the reference: within 1e-4 + 1e-4 relative; exit 1
        otherwise. MISTAKE no_center (LayerNorm's mean not subtracted) or no_scale (sigma left out, as
        if the norm were not there): a deliberate mistake whose worst difference is printed
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_forward  # noqa: E402
from ref_forward import activation, layer_norm  # noqa: E402


def components(model, ids, i):
    """The components of the last residual stream at position I: (name, vector) pairs, and the heads' [L][H]."""
    W = {k: v.astype(np.float64) for k, v in model["w"].items()}
    out = ref_forward.forward(model, ids)
    L, H, eps = model["n_layers"], model["n_heads"], model["eps"]
    d = model["hidden"] // H
    x = out["hidden_states"][0]
    comps = [("embeddings", x[i].copy())]
    heads = []
    for layer in range(L):
        p = "h.%d." % layer
        ctx = out["context"][layer]  # [n][hidden]: the heads' contexts side by side
        wo = W[p + "attn.c_proj.weight"]  # Conv1D [in, out]
        row = []
        for h in range(H):
            o = ctx[i, h * d:(h + 1) * d] @ wo[h * d:(h + 1) * d, :]
            row.append(o)
            comps.append(("L%d H%d" % (layer, h), o))
        heads.append(row)
        comps.append(("L%d attention bias" % layer, W[p + "attn.c_proj.bias"]))
        x = ctx @ wo + W[p + "attn.c_proj.bias"] + x
        m = layer_norm(x, W[p + "ln_2.weight"], W[p + "ln_2.bias"], eps)
        mlp = activation(model["act"], m @ W[p + "mlp.c_fc.weight"] + W[p + "mlp.c_fc.bias"]) @ W[p + "mlp.c_proj.weight"] \
            + W[p + "mlp.c_proj.bias"]
        comps.append(("L%d MLP" % layer, mlp[i]))
        x = x + mlp
    final = layer_norm(x, W["ln_f.weight"], W["ln_f.bias"], eps)
    assert np.allclose(final, out["hidden_states"][-1], rtol=0, atol=1e-9), "the block rewritten here differs"
    return comps, heads, x[i], W, eps


def dla(model_dir, ids, i, mistake=None):
    model = ref_forward.load_model(model_dir)
    comps, heads, x, W, eps = components(model, ids, i)
    U, g, b = W["wte.weight"], W["ln_f.weight"], W["ln_f.bias"]
    t = ids[i + 1]
    w = U[t] - U.mean(axis=0)
    sigma = np.sqrt(x.var() + eps)
    if mistake == "no_scale":
        sigma = 1.0

    def one(c):
        return float(((c if mistake == "no_center" else c - c.mean()) / sigma * g) @ w)

    logits = layer_norm(x, g, b, eps) @ U.T
    want = logits[t] - logits.mean()
    total = sum(one(c) for _, c in comps) + float(b @ w)
    if mistake is None and abs(total - want) > 1e-9 * max(1.0, abs(want)):
        raise SystemExit("ref_dla.py: the identity fails: sum %.12g, logit difference %.12g" % (total, want))
    return np.array([[one(o) for o in row] for row in heads]), want, total


def main(argv):
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] not in ("no_center", "no_scale")):
        print(__doc__, file=sys.stderr)
        return 2
    dump = json.load(open(argv[1]))
    i = dump["dla_token"]
    ref, want, total = dla(argv[0], dump["ids"], i, argv[2] if len(argv) == 3 else None)
    ours = np.array(dump["dla"], dtype=np.float64)
    err = np.abs(ours - ref)
    good = ours.shape == ref.shape and bool((err <= 1e-4 + 1e-4 * np.abs(ref)).all())
    print("%s at token %d: logit difference %.6f = sum of every component's dla %.6f; heads' dla max |diff| %.2g "
          "(largest |dla| %.3f)%s" % (os.path.basename(argv[0].rstrip("/")), i, want, total, float(err.max()),
                                      float(np.abs(ref).max()), "" if good else "  FAIL"))
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
