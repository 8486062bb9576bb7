"""Comparison fixtures for the demo models, and a self-check of tools/demo_models.py.

A developer tool. Two jobs:
  demo_fixture.py check REF_DIR
      run demo_models.py on every model/case of the shared Hugging Face reference
      (REF_DIR/models, REF_DIR/cases) and report the largest differences: this is
      what shows that the training code computes transformers' own math.
  demo_fixture.py write MODEL_DIR OUT_DIR
      load MODEL_DIR exactly as shipped (F16 weights widened to float32), run the
      fixture sentences and write OUT_DIR/<model>--<case>.json in the reference
      cases' format, for attnscope's tests to compare against.
  demo_fixture.py verify MODELS_DIR FIXTURE_DIR
      recompute every fixture from MODELS_DIR/<model> and compare (a stale fixture after
      retraining fails here; a different BLAS or thread count changes only the summation
      order, so attentions may differ by 1e-6 and the rest by 1e-5).
"""

import os

# One CPU thread: torch.set_num_threads() does not reach the BLAS library's own
# threads, so pin them before numpy / torch are imported (the machine is shared).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import json
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import demo_models  # noqa: E402
import demo_tokenize  # noqa: E402

# Fixture texts (the shared reference's sentences): punctuation and a contraction for
# both; a sentence pair (token types) for BERT; a longer sentence for GPT-2.
CASES = {
    "bert": {"book": ("Oh, this book? I've enjoyed it.", None),
             "pair": ("leaves fall in autumn", "autumn is marked by colorful foliage")},
    "gpt2": {"book": ("Oh, this book? I've enjoyed it.", None),
             "friend": ("My friend told me about this class and I love it so far! She was right.", None)},
}


def load_model(model_dir):
    """(family, cfg, model) with weights from model.safetensors, eval mode."""
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    family = demo_models.config_family(cfg)
    cfg = dict(cfg)
    cfg.setdefault("n_inner", None)
    model = demo_models.build(family, cfg)
    demo_models.load_hf_weights(model, demo_models.read_safetensors(os.path.join(model_dir, "model.safetensors")))
    model.eval()
    return family, cfg, model


def load_tokenizer(family, model_dir):
    if family == "bert":
        return demo_tokenize.BertTokenizer(os.path.join(model_dir, "vocab.txt"))
    return demo_tokenize.GPT2Tokenizer(os.path.join(model_dir, "vocab.json"), os.path.join(model_dir, "merges.txt"))


def encode(family, tok, text, text_b):
    """(tokens, ids, token_type_ids or None) as the HF slow tokenizers build them."""
    if family == "bert":
        toks = ["[CLS]"] + tok.tokenize(text) + ["[SEP]"]
        types = [0] * len(toks)
        if text_b is not None:
            b = tok.tokenize(text_b) + ["[SEP]"]
            toks += b
            types += [1] * len(b)
        return toks, [tok.vocab[t] for t in toks], types
    toks = tok.tokenize(text) + (tok.tokenize(text_b) if text_b is not None else [])
    return toks, [tok.encoder[t] for t in toks], None


def run(family, model, ids, types):
    """Trace dict of float32 numpy arrays, shapes as in the reference cases."""
    with torch.no_grad():
        x = torch.tensor([ids])
        if family == "bert":
            last, tr = model(x, torch.tensor([types]), trace=True)
        else:
            last, tr = model(x, trace=True)
    L = len(tr["layers"])

    def lst(t):
        return t.numpy().astype(np.float32)

    out = {
        "attentions": np.stack([lst(tr["layers"][l][3][0]) for l in range(L)]),   # [L, H, n, n]
        "q": np.stack([lst(tr["layers"][l][0][0]) for l in range(L)]),            # [L, H, n, hd]
        "k": np.stack([lst(tr["layers"][l][1][0]) for l in range(L)]),
        "v": np.stack([lst(tr["layers"][l][2][0]) for l in range(L)]),
        # context = attention output before the output projection: [L, n, hidden]
        "context": np.stack([lst(torch.matmul(tr["layers"][l][3], tr["layers"][l][2])[0].transpose(0, 1)
                                 .reshape(len(ids), -1)) for l in range(L)]),
        "hidden_states": np.stack([lst(h[0]) for h in tr["hidden_states"]]),     # [L+1, n, hidden]
        "last_hidden_state": lst(last[0]),
    }
    return out


def max_diff(a, b):
    ta, tb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if ta.shape != tb.shape:
        return float("inf")
    return float(np.abs(ta - tb).max())


def to_json(obj):
    """JSON text; float32 arrays as nested lists of shortest round-trip float32 decimals
    (numpy's repr of a float32 scalar), so a reader's strtof gives the exact value."""
    if isinstance(obj, np.ndarray):
        if obj.ndim == 1:
            return "[" + ", ".join(repr(np.float32(x)) for x in obj) + "]"
        return "[" + ", ".join(to_json(x) for x in obj) + "]"
    if isinstance(obj, dict):
        return "{" + ", ".join(json.dumps(k) + ": " + to_json(v) for k, v in obj.items()) + "}"
    if isinstance(obj, list):
        return "[" + ", ".join(to_json(x) for x in obj) + "]"
    return json.dumps(obj, ensure_ascii=False)


def check(ref_dir):
    """Compare demo_models.py with every reference case; return 0 when all are within tolerance."""
    worst = {}
    bad = 0
    for name in sorted(os.listdir(os.path.join(ref_dir, "cases"))):
        with open(os.path.join(ref_dir, "cases", name), encoding="utf-8") as f:
            case = json.load(f)
        model_dir = os.path.join(ref_dir, case["model_dir"])
        family, _, model = load_model(model_dir)
        tok = load_tokenizer(family, model_dir)
        toks, ids, types = encode(family, tok, case["text"], case.get("text_b"))
        if toks != case["tokens"] or ids != case["ids"]:
            print(f"FAIL {name}: tokens differ")
            bad += 1
            continue
        got = run(family, model, ids, types)
        diffs = {k: max_diff(got[k], case[k]) for k in
                 ("attentions", "q", "k", "v", "context", "hidden_states", "last_hidden_state")}
        ok = diffs["attentions"] <= 1e-6 and max(diffs.values()) <= 1e-4
        bad += not ok
        for k, v in diffs.items():
            worst[k] = max(worst.get(k, 0.0), v)
        print(("ok   " if ok else "FAIL ") + name + "  " + "  ".join(f"{k}={v:.1e}" for k, v in diffs.items()))
    print("worst: " + "  ".join(f"{k}={v:.2e}" for k, v in worst.items()))
    return bad


def write(model_dir, out_dir):
    family, cfg, model = load_model(model_dir)
    tok = load_tokenizer(family, model_dir)
    name = os.path.basename(os.path.normpath(model_dir))
    os.makedirs(out_dir, exist_ok=True)
    L = cfg.get("num_hidden_layers", cfg.get("n_layer"))
    H = cfg.get("num_attention_heads", cfg.get("n_head"))
    d = cfg.get("hidden_size", cfg.get("n_embd"))
    for case, (text, text_b) in CASES[family].items():
        toks, ids, types = encode(family, tok, text, text_b)
        doc = {
            "format": "attnscope-demo v1",
            "generator": "tools/demo_fixture.py (tools/demo_models.py, torch %s, float32)" % torch.__version__,
            "model_dir": "models/" + name,
            "family": family,
            "config": {"num_layers": L, "num_heads": H, "head_dim": d // H, "hidden_size": d,
                       "vocab_size": cfg["vocab_size"],
                       "max_positions": cfg.get("max_position_embeddings", cfg.get("n_positions")),
                       "layer_norm_eps": cfg.get("layer_norm_eps", cfg.get("layer_norm_epsilon")),
                       "activation": cfg.get("hidden_act", cfg.get("activation_function"))},
            "text": text, "text_b": text_b, "tokens": toks, "ids": ids,
        }
        if types is not None:
            doc["token_type_ids"] = types
        trace = run(family, model, ids, types)
        for key in ("attentions", "q", "k", "v", "hidden_states"):   # context, last state: derivable
            doc[key] = trace[key]
        path = os.path.join(out_dir, f"{name}--{case}.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(to_json(doc) + "\n")
        print("wrote", path, len(ids), "tokens")


def verify(models_dir, fixture_dir):
    """Return the number of fixtures that differ from a fresh computation."""
    bad = 0
    for name in sorted(f for f in os.listdir(fixture_dir) if f.endswith(".json")):
        with open(os.path.join(fixture_dir, name), encoding="utf-8") as f:
            case = json.load(f)
        model_dir = os.path.join(models_dir, os.path.basename(case["model_dir"]))
        family, _, model = load_model(model_dir)
        toks, ids, types = encode(family, load_tokenizer(family, model_dir), case["text"], case["text_b"])
        same, diffs = toks == case["tokens"] and ids == case["ids"], {}
        if same:
            got = run(family, model, ids, types)
            diffs = {k: max_diff(case[k], got[k]) for k in ("attentions", "q", "k", "v", "hidden_states")}
            same = diffs["attentions"] <= 1e-6 and max(diffs.values()) <= 1e-5
        bad += not same
        print(("ok   " if same else "FAIL ") + name + "  " + "  ".join(f"{k}={v:.1e}" for k, v in diffs.items()))
    return bad


if __name__ == "__main__":
    torch.set_num_threads(1)
    if len(sys.argv) == 3 and sys.argv[1] == "check":
        sys.exit(1 if check(sys.argv[2]) else 0)
    if len(sys.argv) == 4 and sys.argv[1] == "verify":
        sys.exit(1 if verify(sys.argv[2], sys.argv[3]) else 0)
    if len(sys.argv) == 4 and sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3])
        sys.exit(0)
    print(__doc__, file=sys.stderr)
    sys.exit(2)
