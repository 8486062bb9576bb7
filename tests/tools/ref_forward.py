#!/usr/bin/python3
"""ref_forward.py -- an independent reference forward pass for BERT and GPT-2 in numpy.

What Hugging Face transformers' BertModel and GPT2Model compute, written from the published
architectures (no transformers import), so that attnscope's C engine can be checked against it
on fixture models that live in the repository (tests/data/models) and cases written from it
(tests/data/cases, see make_fixtures.py).

Precision: float64 by default (weights are converted from their stored F32/F16/BF16 to float32
exactly as transformers does, then widened to float64), so the results are the exact math of
the model up to float64 rounding; a float32 run (--float32) exists to measure how far a correct
float32 implementation may land from it.

Library use:
    import ref_forward
    model = ref_forward.load_model("tests/data/models/bert-mini")
    out = ref_forward.forward(model, ids, token_type_ids)   # dict of numpy arrays, see forward()

Command line (run with Debian's /usr/bin/python3, which has numpy):
    ref_forward.py verify [--float32] [CASES_DIR [MODELS_DIR]]
                                      compare with the outputs in CASES_DIR (default: the real HF
                                      outputs in /work/shared/reference/cases; MODELS_DIR defaults
                                      to CASES_DIR/../models); --float32 computes in float32
    ref_forward.py run MODEL_DIR ID [ID ...]          print the attentions of one run
"""

import json
import math
import os
import struct
import sys

import numpy as np

# ---------------------------------------------------------------------------------------------
# safetensors: 8-byte little-endian header length, JSON header, then raw little-endian data.

_DTYPES = {  # safetensors dtype -> (bytes per element, numpy dtype of the raw data)
    "F64": (8, "<f8"), "F32": (4, "<f4"), "F16": (2, "<f2"), "BF16": (2, "<u2"),
    "I64": (8, "<i8"), "I32": (4, "<i4"), "I16": (2, "<i2"), "I8": (1, "i1"),
    "U8": (1, "u1"), "BOOL": (1, "u1"),
}


def read_safetensors(path):
    """Return {name: float32 ndarray} for every tensor of the file at PATH.

    F16 is widened exactly; BF16 is the top half of a float32, so it is shifted into place."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError("%s: too short for a safetensors file" % path)
    (hlen,) = struct.unpack("<Q", blob[:8])
    if 8 + hlen > len(blob):
        raise ValueError("%s: header length %d runs past the end of the file" % (path, hlen))
    header = json.loads(blob[8:8 + hlen].decode("utf-8"))
    base = 8 + hlen  # tensor data starts right after the header, aligned or not
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype, shape, (start, end) = info["dtype"], info["shape"], info["data_offsets"]
        size, npdt = _DTYPES[dtype]
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if end - start != count * size or base + end > len(blob):
            raise ValueError("%s: tensor %s has inconsistent offsets" % (path, name))
        raw = np.frombuffer(blob, dtype=npdt, count=count, offset=base + start)
        if dtype == "BF16":
            arr = (raw.astype(np.uint32) << 16).view(np.float32)
        else:
            arr = raw.astype(np.float32)
        tensors[name] = arr.reshape(shape)
    return tensors


def read_checkpoint(model_dir):
    """All tensors of a model folder: model.safetensors, or the shards its index lists."""
    index = os.path.join(model_dir, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            weight_map = json.load(f)["weight_map"]
        tensors = {}
        for shard in sorted(set(weight_map.values())):
            part = read_safetensors(os.path.join(model_dir, shard))
            for name in part:
                if weight_map.get(name) != shard:
                    raise ValueError("%s: %s is not listed for %s in the index" % (model_dir, name, shard))
            tensors.update(part)
        missing = set(weight_map) - set(tensors)
        if missing:
            raise ValueError("%s: index lists tensors no shard holds: %s" % (model_dir, sorted(missing)))
        return tensors
    return read_safetensors(os.path.join(model_dir, "model.safetensors"))


# ---------------------------------------------------------------------------------------------
# Checkpoint naming: reduce the names real checkpoints use to one canonical set per family.

def _canonical_names(tensors, family):
    """Strip the head-model prefix, rename LayerNorm gamma/beta, drop heads and buffers."""
    prefix = "bert." if family == "bert" else "transformer."
    out = {}
    for name, arr in tensors.items():
        if name.startswith(prefix):
            name = name[len(prefix):]
        if family == "bert":
            if name.startswith("cls.") or name.startswith("pooler."):
                continue  # pre-training heads and the pooler: not part of the encoder
            if name.endswith(".gamma"):
                name = name[:-len(".gamma")] + ".weight"
            elif name.endswith(".beta"):
                name = name[:-len(".beta")] + ".bias"
        else:
            if name.startswith("lm_head."):
                continue  # tied to wte, not part of GPT2Model
            if name.endswith(".attn.bias") or name.endswith(".attn.masked_bias"):
                continue  # causal-mask buffers, not weights
        if name in out:
            raise ValueError("tensor %s appears twice after renaming" % name)
        out[name] = arr
    return out


def load_model(model_dir):
    """Read config.json and the weights of the Hugging Face folder MODEL_DIR.

    Returns a dict: family ("bert" or "gpt2"), the shape numbers, activation, eps, flags, and
    "w": {canonical name: float32 array} with BertModel / GPT2Model names (no prefix)."""
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    family = cfg.get("model_type")
    if family not in ("bert", "gpt2"):
        raise ValueError("%s: model_type %r is neither bert nor gpt2" % (model_dir, family))
    w = _canonical_names(read_checkpoint(model_dir), family)
    if family == "bert":
        m = dict(family="bert", n_layers=cfg["num_hidden_layers"], n_heads=cfg["num_attention_heads"],
                 hidden=cfg["hidden_size"], intermediate=cfg["intermediate_size"],
                 eps=cfg.get("layer_norm_eps", 1e-12), act=cfg.get("hidden_act", "gelu"),
                 max_positions=cfg["max_position_embeddings"], vocab_size=cfg["vocab_size"])
    else:
        hidden = cfg["n_embd"]
        m = dict(family="gpt2", n_layers=cfg["n_layer"], n_heads=cfg["n_head"], hidden=hidden,
                 intermediate=cfg.get("n_inner") or 4 * hidden,
                 eps=cfg.get("layer_norm_epsilon", 1e-5), act=cfg.get("activation_function", "gelu_new"),
                 max_positions=cfg["n_positions"], vocab_size=cfg["vocab_size"],
                 scale_attn_weights=cfg.get("scale_attn_weights", True),
                 scale_by_layer=cfg.get("scale_attn_by_inverse_layer_idx", False))
        if cfg.get("reorder_and_upcast_attn", False):
            pass  # only changes float16 accumulation; the math in float32/float64 is identical
    if m["hidden"] % m["n_heads"]:
        raise ValueError("%s: hidden %d not divisible by %d heads" % (model_dir, m["hidden"], m["n_heads"]))
    m["head_dim"] = m["hidden"] // m["n_heads"]
    m["w"] = w
    m["dir"] = model_dir
    return m


# ---------------------------------------------------------------------------------------------
# The forward pass.

_erf = np.frompyfunc(math.erf, 1, 1)


def activation(name, x):
    """The activations transformers' ACT2FN maps these names to."""
    if name == "gelu":  # exact GELU, x * Phi(x)
        return x * 0.5 * (1.0 + _erf(x / math.sqrt(2.0)).astype(x.dtype))
    if name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):  # the tanh approximation
        c = x.dtype.type(math.sqrt(2.0 / math.pi))
        return 0.5 * x * (1.0 + np.tanh(c * (x + x.dtype.type(0.044715) * x * x * x)))
    if name == "relu":
        return np.maximum(x, 0)
    if name in ("silu", "swish"):  # x * sigmoid(x)
        return x / (1.0 + np.exp(-x))
    raise ValueError("activation %r not supported" % name)


def layer_norm(x, weight, bias, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # biased, as torch.nn.LayerNorm
    return (x - mean) / np.sqrt(var + x.dtype.type(eps)) * weight + bias


def softmax(s):
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=-1, keepdims=True)


def _heads(x, n_heads):
    """[n][hidden] -> [heads][n][head_dim]: head h is features h*d .. h*d+d-1."""
    n, hidden = x.shape
    return x.reshape(n, n_heads, hidden // n_heads).transpose(1, 0, 2)


def _attention(q, k, v, scale, causal):
    """q, k, v [heads][n][d] -> probabilities [heads][n][n], context [n][heads*d]."""
    scores = q @ k.transpose(0, 2, 1) / scale
    if causal:
        n = scores.shape[-1]
        # HF fills masked scores with the dtype's minimum, so after softmax they are exactly 0.
        scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, np.finfo(scores.dtype).min)
    probs = softmax(scores)
    ctx = probs @ v  # [heads][n][d]
    return probs, ctx.transpose(1, 0, 2).reshape(ctx.shape[1], -1)


def ablate_context(ctx, layer, d, ablate):
    """Head ablation (attnscope's --ablate): ABLATE maps (layer, head) to None (zero-ablation: the head's d
    columns of the context, the output projection's input, set to 0 at every position, = transformers'
    head_mask) or a [d] vector (mean-ablation: those columns replaced by it at every position)."""
    if not ablate:
        return ctx
    ctx = ctx.copy()
    for (l, h), mean in ablate.items():
        if l == layer:
            ctx[:, h * d:(h + 1) * d] = 0.0 if mean is None else mean
    return ctx


def forward(model, ids, token_type_ids=None, dtype=np.float64, ablate=None):
    """Run the model on token IDS; return a dict of numpy arrays in DTYPE:

    attentions [L][H][n][n], q/k/v [L][H][n][d] (projections with bias, before 1/sqrt(d)),
    context [L][n][hidden] (attention output before the output projection),
    hidden_states [L+1][n][hidden] (0 = embeddings output; for GPT-2 the last is after ln_f,
    as transformers returns it), last_hidden_state [n][hidden]. ABLATE: ablate_context's heads."""
    W = {k: v.astype(dtype) for k, v in model["w"].items()}
    ids = np.asarray(ids, dtype=np.int64)
    n = len(ids)
    if n == 0 or n > model["max_positions"]:
        raise ValueError("%d tokens, model takes 1..%d" % (n, model["max_positions"]))
    if ids.min() < 0 or ids.max() >= model["vocab_size"]:
        raise ValueError("token id out of range")
    H, d, eps, act = model["n_heads"], model["head_dim"], model["eps"], model["act"]
    pos = np.arange(n)
    attn, qs, ks, vs, ctxs, hs = [], [], [], [], [], []

    if model["family"] == "bert":
        tt = np.zeros(n, dtype=np.int64) if token_type_ids is None else np.asarray(token_type_ids)
        x = (W["embeddings.word_embeddings.weight"][ids] + W["embeddings.token_type_embeddings.weight"][tt]
             + W["embeddings.position_embeddings.weight"][pos])
        x = layer_norm(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"], eps)
        hs.append(x)
        for i in range(model["n_layers"]):
            p = "encoder.layer.%d." % i
            lin = lambda name, t: t @ W[p + name + ".weight"].T + W[p + name + ".bias"]  # noqa: E731
            q = _heads(lin("attention.self.query", x), H)
            k = _heads(lin("attention.self.key", x), H)
            v = _heads(lin("attention.self.value", x), H)
            probs, ctx = _attention(q, k, v, dtype(math.sqrt(d)), causal=False)
            ctx = ablate_context(ctx, i, d, ablate)
            a = lin("attention.output.dense", ctx) + x
            a = layer_norm(a, W[p + "attention.output.LayerNorm.weight"], W[p + "attention.output.LayerNorm.bias"], eps)
            h = activation(act, lin("intermediate.dense", a))
            x = layer_norm(lin("output.dense", h) + a, W[p + "output.LayerNorm.weight"], W[p + "output.LayerNorm.bias"], eps)
            hs.append(x)
            attn.append(probs); qs.append(q); ks.append(k); vs.append(v); ctxs.append(ctx)
        last = x
    else:
        x = W["wte.weight"][ids] + W["wpe.weight"][pos]
        hs.append(x)
        for i in range(model["n_layers"]):
            p = "h.%d." % i
            conv = lambda name, t: t @ W[p + name + ".weight"] + W[p + name + ".bias"]  # noqa: E731 (Conv1D: [in, out])
            a = layer_norm(x, W[p + "ln_1.weight"], W[p + "ln_1.bias"], eps)
            qkv = conv("attn.c_attn", a)
            hid = model["hidden"]
            q, k, v = (_heads(qkv[:, j * hid:(j + 1) * hid], H) for j in range(3))
            scale = dtype(math.sqrt(d)) if model["scale_attn_weights"] else dtype(1.0)
            if model["scale_by_layer"]:
                scale = scale * dtype(i + 1)  # scale_attn_by_inverse_layer_idx: also / (layer + 1)
            probs, ctx = _attention(q, k, v, scale, causal=True)
            ctx = ablate_context(ctx, i, d, ablate)
            x = conv("attn.c_proj", ctx) + x
            m = layer_norm(x, W[p + "ln_2.weight"], W[p + "ln_2.bias"], eps)
            x = conv("mlp.c_proj", activation(act, conv("mlp.c_fc", m))) + x
            attn.append(probs); qs.append(q); ks.append(k); vs.append(v); ctxs.append(ctx)
            if i < model["n_layers"] - 1:
                hs.append(x)
        last = layer_norm(x, W["ln_f.weight"], W["ln_f.bias"], eps)
        hs.append(last)  # transformers replaces the last block's output with ln_f of it

    return dict(attentions=np.array(attn), q=np.array(qs), k=np.array(ks), v=np.array(vs),
                context=np.array(ctxs), hidden_states=np.array(hs), last_hidden_state=last)


QUANTITIES = ("attentions", "q", "k", "v", "context", "hidden_states", "last_hidden_state")


# ---------------------------------------------------------------------------------------------
# Command line.

def _verify(cases_dir, models_dir, dtype):
    """Compare with every case of a reference folder; return the worst difference per quantity."""
    names = sorted(f for f in os.listdir(cases_dir) if f.endswith(".json"))
    if not names:
        raise SystemExit("no cases in %s" % cases_dir)
    worst = {}
    models = {}
    print("%-28s %4s  %s" % ("case", "n", "  ".join("%-9s" % q[:9] for q in QUANTITIES)))
    for name in names:
        with open(os.path.join(cases_dir, name)) as f:
            case = json.load(f)
        model_name = os.path.basename(case["model_dir"].rstrip("/"))
        if model_name not in models:
            models[model_name] = load_model(os.path.join(models_dir, model_name))
        out = forward(models[model_name], case["ids"], case.get("token_type_ids"), dtype)
        diffs = []
        for qn in QUANTITIES:
            ref = np.array(case[qn], dtype=np.float64)
            if ref.shape != out[qn].shape:
                raise SystemExit("%s: %s shape %s, reference %s" % (name, qn, out[qn].shape, ref.shape))
            diff = float(np.abs(out[qn] - ref).max())
            worst[qn] = max(worst.get(qn, 0.0), diff)
            diffs.append(diff)
        print("%-28s %4d  %s" % (name[:-5], len(case["ids"]), "  ".join("%-9.2e" % x for x in diffs)))
    print("%-28s %4s  %s" % ("max", "", "  ".join("%-9.2e" % worst[q] for q in QUANTITIES)))
    return worst


def main(argv):
    if len(argv) >= 2 and argv[1] == "verify":
        args = argv[2:]
        dtype = np.float64
        if args and args[0] == "--float32":
            dtype, args = np.float32, args[1:]
        cases = args[0] if args else "/work/shared/reference/cases"
        models = args[1] if len(args) > 1 else os.path.join(os.path.dirname(os.path.abspath(cases)), "models")
        worst = _verify(cases, models, dtype)
        if dtype == np.float32:
            return 0  # figures only: how far a float32 computation lands from the reference
        limits = dict(attentions=1e-6, q=1e-5, k=1e-5, v=1e-5)
        bad = [q for q, lim in limits.items() if worst[q] > lim]
        if bad:
            print("FAIL: beyond tolerance: %s" % ", ".join(bad))
            return 1
        print("ok: attentions <= 1e-6, q/k/v <= 1e-5")
        return 0
    if len(argv) >= 4 and argv[1] == "run":
        model = load_model(argv[2])
        out = forward(model, [int(a) for a in argv[3:]])
        np.set_printoptions(precision=4, suppress=True, linewidth=150)
        for layer, heads in enumerate(out["attentions"]):
            for head, a in enumerate(heads):
                print("layer %d head %d\n%s" % (layer, head, a))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
