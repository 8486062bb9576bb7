#!/usr/bin/python3
"""make_fixtures.py -- write the committed fixture models and their expected outputs.

  tests/data/models/<model>/      random-weight models in the exact Hugging Face folder layout,
                                  with the real bert-base-uncased / GPT-2 vocabularies
  tests/data/cases/<model>--<case>.json
                                  what BertModel / GPT2Model compute on them (ref_forward.py)

Run from anywhere with Debian's python (numpy):  /usr/bin/python3 tests/tools/make_fixtures.py
Options: --models-only, --cases-only. Output is deterministic (fixed seeds). The vocabularies
are linked from tests/data/tokenizer/{bert,gpt2} (written by ref_tokenize.py), which must exist.

Each model exercises different loader paths (see tests/data/models/README and MODELS below).
"""

import json
import os
import struct
import sys

import numpy as np

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(TOOLS))
MODELS_DIR = os.path.join(ROOT, "tests", "data", "models")
CASES_DIR = os.path.join(ROOT, "tests", "data", "cases")
sys.path.insert(0, TOOLS)
import ref_forward  # noqa: E402

# ---------------------------------------------------------------------------------------------
# The fixture models. Shapes are tiny (hidden 8) because every model must carry a full
# [vocab x hidden] embedding matrix for the real vocabularies; head counts differ between the
# two models of a family so that head_dim == n_heads (a transposition hiding place) never holds.

MODELS = [
    dict(name="bert-mini", family="bert", seed=101, hidden=8, heads=2, layers=3, inter=20,
         act="gelu", eps=1e-12, positions=128, qk=1.0,
         # like the bert-base-uncased hub file: "bert." prefix, LayerNorm gamma/beta, pre-training
         # heads (cls.*) and the pooler present; one file, header padded to 8 bytes.
         naming="hub", dtype="F16", shards=None, pad=True),
    dict(name="bert-mini-sharded", family="bert", seed=102, hidden=8, heads=4, layers=3, inter=24,
         act="gelu_new", eps=1e-4, positions=128,
         # like BertModel.save_pretrained: no prefix, LayerNorm weight/bias, pooler; two shards
         # with an index, the split falling inside layer 1. F32 except the word embeddings (F16,
         # to stay small): safetensors dtypes are per tensor.
         naming="plain", dtype="F32", big_dtype="F16", shards=2, pad=True),
    dict(name="gpt2-mini", family="gpt2", seed=201, hidden=8, heads=2, layers=3, inter=None,
         act="gelu_new", eps=1e-5, positions=96, scale_by_layer=False,
         # like the gpt2 hub file: no prefix, h.N.attn.bias mask buffers (F32 [1,1,P,P]) and a
         # 0-d h.N.attn.masked_bias, no lm_head (tied); header NOT padded and of odd length, so
         # tensor data starts at an odd offset. F32 except wte (F16, to stay small).
         naming="hub", dtype="F32", big_dtype="F16", shards=None, pad=False),
    dict(name="gpt2-mini-bf16", family="gpt2", seed=202, hidden=8, heads=4, layers=3, inter=24,
         act="gelu_pytorch_tanh", eps=1e-3, positions=96, scale_by_layer=True,
         # like GPT2LMHeadModel.save_pretrained in bfloat16: "transformer." prefix, no buffers,
         # no lm_head (tied); scale_attn_by_inverse_layer_idx on; explicit n_inner.
         naming="lmhead", dtype="BF16", shards=None, pad=True),
]

CASES = [  # (name, text, text_b, models it runs on: None = all)
    ("book", "Oh, this book? I've enjoyed it.", None, None),
    ("pair", "leaves fall in autumn", "autumn is marked by colorful foliage", None),
    # 60+ tokens; only on the 2-head models, to keep the committed files small
    ("long", "When the old lighthouse keeper finally retired after forty-two winters on the rocky "
             "island, the whole village gathered at the harbour with lanterns, fiddles and far too "
             "much soup; they sang until the tide turned, the fog lifted, and the first grey gulls "
             "woke above the empty tower at dawn.", None, ("bert-mini", "gpt2-mini")),
    # accents, CJK, emoji, a double space and a newline
    ("unicode", "Café naïve façade:  Zoë's déjà vu\nin 東京 🙂🚀, ½ price!", None, None),
]

# Weight spreads: much wider than a trained model's so attention is peaky (mistakes in the
# scale, mask or softmax show as large differences) and LayerNorm gains/biases far from 1/0.
SPREAD = dict(embed=1.0, pos=0.6, qk=0.8, v=0.4, proj=0.4, mlp_in=0.5, mlp_out=0.3,
              bias=0.3, ln_gain=0.3, ln_bias=0.4)


def _ln(rng, n):
    return 1.0 + SPREAD["ln_gain"] * rng.standard_normal(n), SPREAD["ln_bias"] * rng.standard_normal(n)


def bert_tensors(spec, vocab):
    """Canonical BertModel state (name -> float32 array; Linear weights [out, in])."""
    rng = np.random.RandomState(spec["seed"])
    h, f, b = spec["hidden"], spec["inter"], SPREAD["bias"]
    t = {}
    t["embeddings.word_embeddings.weight"] = SPREAD["embed"] * rng.standard_normal((vocab, h))
    t["embeddings.position_embeddings.weight"] = SPREAD["pos"] * rng.standard_normal((spec["positions"], h))
    t["embeddings.token_type_embeddings.weight"] = SPREAD["embed"] * rng.standard_normal((2, h))
    t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"] = _ln(rng, h)
    for i in range(spec["layers"]):
        p = "encoder.layer.%d." % i
        for name, s in (("query", "qk"), ("key", "qk"), ("value", "v")):
            t[p + "attention.self.%s.weight" % name] = spec.get(s, SPREAD[s]) * rng.standard_normal((h, h))
            t[p + "attention.self.%s.bias" % name] = b * rng.standard_normal(h)
        t[p + "attention.output.dense.weight"] = SPREAD["proj"] * rng.standard_normal((h, h))
        t[p + "attention.output.dense.bias"] = b * rng.standard_normal(h)
        t[p + "attention.output.LayerNorm.weight"], t[p + "attention.output.LayerNorm.bias"] = _ln(rng, h)
        t[p + "intermediate.dense.weight"] = SPREAD["mlp_in"] * rng.standard_normal((f, h))
        t[p + "intermediate.dense.bias"] = b * rng.standard_normal(f)
        t[p + "output.dense.weight"] = SPREAD["mlp_out"] * rng.standard_normal((h, f))
        t[p + "output.dense.bias"] = b * rng.standard_normal(h)
        t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"] = _ln(rng, h)
    t["pooler.dense.weight"] = 0.3 * rng.standard_normal((h, h))
    t["pooler.dense.bias"] = b * rng.standard_normal(h)
    extra = {}
    if spec["naming"] == "hub":  # the pre-training heads of BertForPreTraining (ignored by BertModel)
        extra["cls.predictions.bias"] = b * rng.standard_normal(vocab)
        extra["cls.predictions.transform.dense.weight"] = 0.3 * rng.standard_normal((h, h))
        extra["cls.predictions.transform.dense.bias"] = b * rng.standard_normal(h)
        extra["cls.predictions.transform.LayerNorm.gamma"], extra["cls.predictions.transform.LayerNorm.beta"] = _ln(rng, h)
        extra["cls.seq_relationship.weight"] = 0.3 * rng.standard_normal((2, h))
        extra["cls.seq_relationship.bias"] = b * rng.standard_normal(2)
    return t, extra


def gpt2_tensors(spec, vocab):
    """Canonical GPT2Model state (name -> float32 array; Conv1D weights [in, out])."""
    rng = np.random.RandomState(spec["seed"])
    h, b = spec["hidden"], SPREAD["bias"]
    f = spec["inter"] or 4 * h
    t = {}
    t["wte.weight"] = SPREAD["embed"] * rng.standard_normal((vocab, h))
    t["wpe.weight"] = SPREAD["pos"] * rng.standard_normal((spec["positions"], h))
    for i in range(spec["layers"]):
        p = "h.%d." % i
        t[p + "ln_1.weight"], t[p + "ln_1.bias"] = _ln(rng, h)
        w = np.concatenate([SPREAD["qk"] * rng.standard_normal((h, h)), SPREAD["qk"] * rng.standard_normal((h, h)),
                            SPREAD["v"] * rng.standard_normal((h, h))], axis=1)
        t[p + "attn.c_attn.weight"] = w  # [in, 3*hidden]: q | k | v
        t[p + "attn.c_attn.bias"] = b * rng.standard_normal(3 * h)
        t[p + "attn.c_proj.weight"] = SPREAD["proj"] * rng.standard_normal((h, h))
        t[p + "attn.c_proj.bias"] = b * rng.standard_normal(h)
        t[p + "ln_2.weight"], t[p + "ln_2.bias"] = _ln(rng, h)
        t[p + "mlp.c_fc.weight"] = SPREAD["mlp_in"] * rng.standard_normal((h, f))
        t[p + "mlp.c_fc.bias"] = b * rng.standard_normal(f)
        t[p + "mlp.c_proj.weight"] = SPREAD["mlp_out"] * rng.standard_normal((f, h))
        t[p + "mlp.c_proj.bias"] = b * rng.standard_normal(h)
    t["ln_f.weight"], t["ln_f.bias"] = _ln(rng, h)
    extra = {}
    if spec["naming"] == "hub":  # buffers old GPT-2 checkpoints carry (ignored by the model)
        n = spec["positions"]
        for i in range(spec["layers"]):
            extra["h.%d.attn.bias" % i] = np.tril(np.ones((n, n))).reshape(1, 1, n, n)
            extra["h.%d.attn.masked_bias" % i] = np.array(-1e4)  # 0-d tensor, shape []
    return t, extra


def checkpoint_names(spec, tensors, extra):
    """Rename the canonical state into the naming scheme of SPEC (see MODELS)."""
    out = {}
    if spec["family"] == "bert":
        for name, arr in tensors.items():
            if spec["naming"] == "hub":
                if name.endswith("LayerNorm.weight"):
                    name = name[:-len("weight")] + "gamma"
                elif name.endswith("LayerNorm.bias"):
                    name = name[:-len("bias")] + "beta"
                name = "bert." + name
            out[name] = arr
    else:
        prefix = "transformer." if spec["naming"] == "lmhead" else ""
        out = {prefix + name: arr for name, arr in tensors.items()}
    out.update(extra)
    return out


# ---------------------------------------------------------------------------------------------
# safetensors writing.

def _to_dtype(arr, dtype):
    """Store ARR as DTYPE; return (raw bytes, the float32 values a reader gets back)."""
    a32 = np.asarray(arr, dtype=np.float32)
    if dtype == "F32":
        return a32.astype("<f4").tobytes(), a32
    if dtype == "F16":
        a16 = a32.astype("<f2")
        return a16.tobytes(), a16.astype(np.float32)
    if dtype == "U8":  # MXFP4 blocks and scales (gpt-oss): bytes as they are
        a8 = np.asarray(arr).astype("u1")
        return a8.tobytes(), a8.astype(np.float32)
    if dtype == "BOOL":  # mask buffers of old checkpoints
        a8 = (a32 != 0).astype("u1")
        return a8.tobytes(), a8.astype(np.float32)
    if dtype == "BF16":  # round to nearest even, as torch does
        u = a32.view(np.uint32).astype(np.uint64)
        top = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2")
        return top.tobytes(), (top.astype(np.uint32) << 16).view(np.float32)
    raise ValueError(dtype)


_ITEMSIZE = {"F32": 4, "F16": 2, "BF16": 2, "BOOL": 1, "U8": 1}


def write_safetensors(path, tensors, pad):
    """TENSORS: {name: (dtype, array)}. Sorted like the safetensors library (wider dtypes first,
    then by name). PAD: pad the header with spaces to a multiple of 8 (as the library does);
    without it the header is left with an odd length so data starts at an odd offset."""
    order = sorted(tensors, key=lambda n: (-_ITEMSIZE[tensors[n][0]], n))
    header = {"__metadata__": {"format": "pt"}}
    blobs, offset, stored = [], 0, {}
    for name in order:
        dtype, arr = tensors[name]
        raw, back = _to_dtype(arr, dtype)
        header[name] = {"dtype": dtype, "shape": list(np.shape(arr)), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
        stored[name] = back
    text = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * (-(8 + len(text)) % 8)
    elif (8 + len(text)) % 2 == 0:
        text += b" "  # make the data start odd: misaligned for every dtype
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)
    return stored, 8 + len(text)


# ---------------------------------------------------------------------------------------------
# Folders.

# what save_pretrained records; transformers still loads into float32 unless told otherwise
TORCH_DTYPE = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}


def bert_config(spec, vocab):
    return {
        "architectures": ["BertForPreTraining" if spec["naming"] == "hub" else "BertModel"],
        "attention_probs_dropout_prob": 0.1, "classifier_dropout": None, "hidden_act": spec["act"],
        "hidden_dropout_prob": 0.1, "hidden_size": spec["hidden"], "initializer_range": 0.02,
        "intermediate_size": spec["inter"], "layer_norm_eps": spec["eps"],
        "max_position_embeddings": spec["positions"], "model_type": "bert",
        "num_attention_heads": spec["heads"], "num_hidden_layers": spec["layers"], "pad_token_id": 0,
        "position_embedding_type": "absolute", "torch_dtype": TORCH_DTYPE[spec["dtype"]],
        "transformers_version": "4.31.0",
        "type_vocab_size": 2, "use_cache": True, "vocab_size": vocab,
    }


def gpt2_config(spec, vocab):
    return {
        "activation_function": spec["act"],
        "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1, "bos_token_id": 50256,
        "embd_pdrop": 0.1, "eos_token_id": 50256, "initializer_range": 0.02,
        "layer_norm_epsilon": spec["eps"], "model_type": "gpt2", "n_embd": spec["hidden"],
        "n_head": spec["heads"], "n_inner": spec["inter"], "n_layer": spec["layers"],
        "n_positions": spec["positions"], "reorder_and_upcast_attn": False, "resid_pdrop": 0.1,
        "scale_attn_by_inverse_layer_idx": spec["scale_by_layer"], "scale_attn_weights": True,
        "summary_activation": None, "summary_first_dropout": 0.1, "summary_proj_to_labels": True,
        "summary_type": "cls_index", "summary_use_proj": True,
        "torch_dtype": TORCH_DTYPE[spec["dtype"]],
        "transformers_version": "4.31.0", "use_cache": True, "vocab_size": vocab,
    }


VOCAB_FILES = {"bert": ["vocab.txt"], "gpt2": ["vocab.json", "merges.txt"]}
# The tree holds one copy of each real vocabulary, with the tokenizer fixtures (ref_tokenize.py
# writes them); model folders link to it. When the shared reference is around, the copies are
# checked byte for byte against the files its models (and so transformers) used.
VOCAB_HOME = {"bert": os.path.join("tokenizer", "bert"), "gpt2": os.path.join("tokenizer", "gpt2")}
SHARED_MODELS = {"bert": "/work/shared/reference/models/bert-tiny", "gpt2": "/work/shared/reference/models/gpt2-tiny"}


def install_vocab(spec):
    """Link the real vocabulary files into the model folder (relative symlinks, so a copy of a
    folder elsewhere needs cp -rL). Return the vocabulary size."""
    d = os.path.join(MODELS_DIR, spec["name"])
    fam = spec["family"]
    for fn in VOCAB_FILES[fam]:
        target = os.path.join("..", "..", VOCAB_HOME[fam], fn)
        real = os.path.join(d, target)
        if not os.path.isfile(real):
            raise SystemExit("%s missing: write the tokenizer fixtures first "
                             "(tests/tools/ref_tokenize.py fixtures)" % os.path.normpath(real))
        shared = os.path.join(SHARED_MODELS[fam], fn)
        if os.path.exists(shared):
            with open(real, "rb") as f1, open(shared, "rb") as f2:
                if f1.read() != f2.read():
                    raise SystemExit("%s differs from %s" % (os.path.normpath(real), shared))
        dst = os.path.join(d, fn)
        if os.path.lexists(dst):
            os.remove(dst)
        os.symlink(target, dst)
    if fam == "bert":
        with open(os.path.join(d, "vocab.txt"), encoding="utf-8") as f:
            return sum(1 for _ in f)
    with open(os.path.join(d, "vocab.json"), encoding="utf-8") as f:
        return len(json.load(f))


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False)
        f.write("\n")


def make_model(spec):
    d = os.path.join(MODELS_DIR, spec["name"])
    os.makedirs(d, exist_ok=True)
    vocab = install_vocab(spec)
    if spec["family"] == "bert":
        tensors, extra = bert_tensors(spec, vocab)
        write_json(os.path.join(d, "config.json"), bert_config(spec, vocab))
        write_json(os.path.join(d, "tokenizer_config.json"),
                   {"do_lower_case": True, "model_max_length": spec["positions"]})
        big = "embeddings.word_embeddings.weight"
    else:
        tensors, extra = gpt2_tensors(spec, vocab)
        write_json(os.path.join(d, "config.json"), gpt2_config(spec, vocab))
        write_json(os.path.join(d, "tokenizer_config.json"), {"model_max_length": spec["positions"]})
        big = "wte.weight"
    named = checkpoint_names(spec, tensors, extra)
    big_name = [n for n in named if n.endswith(big)][0]
    typed = {n: (spec.get("big_dtype", spec["dtype"]) if n == big_name else spec["dtype"], a)
             for n, a in named.items()}
    for old in os.listdir(d):
        if old.endswith(".safetensors") or old.endswith(".index.json"):
            os.remove(os.path.join(d, old))
    stored = {}
    if not spec["shards"]:
        s, start = write_safetensors(os.path.join(d, "model.safetensors"), typed, spec["pad"])
        stored.update(s)
        info = "data at offset %d" % start
    else:
        # split like save_pretrained's size limit would: everything up to and including layer 1's
        # attention in the first shard, the rest (from layer 1's intermediate on) in the second.
        first = [n for n in typed if n.startswith("embeddings.") or n.startswith("encoder.layer.0.")
                 or n.startswith("encoder.layer.1.attention.")]
        parts = [{n: typed[n] for n in first}, {n: typed[n] for n in typed if n not in first}]
        weight_map, total = {}, 0
        for i, part in enumerate(parts):
            fn = "model-%05d-of-%05d.safetensors" % (i + 1, len(parts))
            s, _ = write_safetensors(os.path.join(d, fn), part, spec["pad"])
            stored.update(s)
            for n in part:
                weight_map[n] = fn
                total += s[n].size * _ITEMSIZE[typed[n][0]]
        write_json(os.path.join(d, "model.safetensors.index.json"),
                   {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))})
        info = "%d shards" % len(parts)

    # The reference loader must read back exactly what was stored, under BertModel/GPT2Model names.
    model = ref_forward.load_model(d)
    canon = {n: stored[m] for n, m in zip(tensors, checkpoint_names(spec, {n: None for n in tensors}, {}))
             if not n.startswith("pooler.")}  # BertModel's pooler: not part of the encoder
    assert set(model["w"]) == set(canon), set(model["w"]) ^ set(canon)
    for n, arr in canon.items():
        assert np.array_equal(model["w"][n], arr), n
    print("model %-18s %s, %s" % (spec["name"], spec["dtype"], info))
    return model


# ---------------------------------------------------------------------------------------------
# Cases.

def _fmt(x):
    """Shortest decimal that reads back as the same float32."""
    s = repr(np.float32(x))
    return s if s not in ("-0.0",) else "0.0"


def _nested(arr):
    """JSON text for a float array: one innermost row per line, numbers as float32."""
    arr = np.asarray(arr, dtype=np.float32)
    if arr.ndim == 1:
        return "[" + ", ".join(_fmt(x) for x in arr.tolist()) + "]"
    return "[" + ",\n".join(_nested(a) for a in arr) + "]"


def tokenize(spec, text, text_b):
    """Tokens, ids and token_type_ids from ref_tokenize.py (the slow HF tokenizers' rules)."""
    import ref_tokenize  # written alongside, by the tokenizer work; needs python3-regex
    r = ref_tokenize.load(os.path.join(MODELS_DIR, spec["name"]), spec["family"]).encode(text, text_b)
    return r["tokens"], r["ids"], r["type_ids"]


def make_case(spec, model, case, text, text_b):
    tokens, ids, type_ids = tokenize(spec, text, text_b)
    out = ref_forward.forward(model, ids, type_ids if spec["family"] == "bert" else None)
    f32 = float32_deviation(model, ids, type_ids, out)  # both stop the script before writing
    effects = mistake_effects(spec, model, ids, type_ids, out)  # a fragile or a toothless case
    head = {
        "format": "attnscope-ref v1",
        "producer": "tests/tools/make_fixtures.py (ref_forward.py, float64, rounded to float32)",
        "model_dir": "tests/data/models/" + spec["name"],
        "family": spec["family"],
        "config": {"num_layers": model["n_layers"], "num_heads": model["n_heads"],
                   "head_dim": model["head_dim"], "hidden_size": model["hidden"],
                   "vocab_size": model["vocab_size"], "max_positions": model["max_positions"],
                   "layer_norm_eps": model["eps"], "activation": model["act"]},
        "text": text, "text_b": text_b, "tokens": tokens, "ids": [int(i) for i in ids],
    }
    if spec["family"] == "bert":
        head["token_type_ids"] = [int(i) for i in type_ids]
    head["attention_mask"] = [1] * len(ids)
    fields = ['"%s": %s' % (k, json.dumps(v, ensure_ascii=False)) for k, v in head.items()]
    fields += ['"%s": %s' % (q, _nested(out[q])) for q in ref_forward.QUANTITIES]
    text_out = "{" + ",\n ".join(fields) + "}\n"
    path = os.path.join(CASES_DIR, "%s--%s.json" % (spec["name"], case))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text_out)
    a = out["attentions"]
    print("case  %-28s n=%-3d  max prob median %.2f, >0.99 %2.0f%%  float32 dev: attn %.1e qkv %.1e hidden %.1e"
          "  weakest mistake %.1e (%s)" %
          (os.path.basename(path), len(ids), np.median(a.max(-1)), 100 * (a.max(-1) > 0.99).mean(),
           f32["attentions"], max(f32["q"], f32["k"], f32["v"]), f32["hidden_states"],
           min(effects.values()), min(effects, key=effects.get)))
    return f32, effects


# How far a numpy float32 run may land from the float64 reference: a case worse than this is too
# ill-conditioned for the C tests' fixed tolerances to hold whatever the summation order ...
F32_BUDGET = dict(attentions=3e-6, q=1e-5, k=1e-5, v=1e-5, hidden_states=1e-5)
# ... while each plausible mistake moves attentions or hidden states by at least this much.
MISTAKE_FLOOR = 1e-4


def float32_deviation(model, ids, type_ids, out):
    """Max |float32 run - float64 run| per quantity: how well conditioned the case is."""
    o32 = ref_forward.forward(model, ids, type_ids if model["family"] == "bert" else None, np.float32)
    dev = {q: float(np.abs(o32[q] - out[q]).max()) for q in F32_BUDGET}
    over = [q for q in F32_BUDGET if dev[q] > F32_BUDGET[q]]
    if over:
        raise SystemExit("ill-conditioned fixture: float32 deviates by %s" % {q: dev[q] for q in over})
    return dev


def mistake_effects(spec, model, ids, type_ids, out):
    """Rerun with one plausible implementation mistake at a time; return how far each moves
    the outputs (max abs difference over attentions and hidden states)."""
    tanh = ("gelu_new", "gelu_pytorch_tanh")
    variants = {"other GELU form": dict(act="gelu" if model["act"] in tanh else "gelu_new")}
    default_eps = 1e-12 if model["family"] == "bert" else 1e-5
    if model["eps"] != default_eps:
        variants["default eps"] = dict(eps=default_eps)
    if model["family"] == "gpt2":
        variants["toggled inverse-layer scaling"] = dict(scale_by_layer=not model["scale_by_layer"])
        variants["no 1/sqrt(d)"] = dict(scale_attn_weights=False)
    if model["family"] == "bert" and any(type_ids):
        variants["token types ignored"] = {}
    effects = {}
    for label, change in variants.items():
        tt = type_ids if model["family"] == "bert" else None
        if label == "token types ignored":
            tt = [0] * len(ids)
        wrong = ref_forward.forward(dict(model, **change), ids, tt)
        # attentions first: a mistake in layer l shows in the attentions of every later layer
        effects[label] = max(float(np.abs(wrong[q] - out[q]).max()) for q in ("attentions", "hidden_states"))
    weak = {k: v for k, v in effects.items() if v < MISTAKE_FLOOR}
    if weak:
        raise SystemExit("fixture too weak: these mistakes would pass unnoticed: %s" % weak)
    return effects


def main(argv):
    do_models, do_cases = "--cases-only" not in argv, "--models-only" not in argv
    os.makedirs(MODELS_DIR, exist_ok=True)
    os.makedirs(CASES_DIR, exist_ok=True)
    models = {}
    for spec in MODELS:
        models[spec["name"]] = make_model(spec) if do_models else \
            ref_forward.load_model(os.path.join(MODELS_DIR, spec["name"]))
    if do_cases:
        mine = {spec["name"] for spec in MODELS}  # make_decoder_fixtures.py writes the others
        for old in os.listdir(CASES_DIR):
            if old.endswith(".json") and old.split("--")[0] in mine:
                os.remove(os.path.join(CASES_DIR, old))
        for spec in MODELS:
            for case, text, text_b, only in CASES:
                if only is None or spec["name"] in only:
                    make_case(spec, models[spec["name"]], case, text, text_b)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
