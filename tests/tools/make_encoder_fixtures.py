#!/usr/bin/python3
"""make_encoder_fixtures.py -- fixture models and cases for the BERT relatives.

Writes small random-weight models of RoBERTa, DistilBERT, ALBERT, ELECTRA, DeBERTa-v3 and
ModernBERT to tests/data/models/<name>/ and what ref_encoder.py computes on them to
tests/data/cases/<name>--<case>.json (the shared reference's case format). Deterministic: fixed
seeds, a rerun gives identical bytes. See tests/tools/README ("BERT relatives").

    /usr/bin/python3 tests/tools/make_encoder_fixtures.py [--tokenize ./attnscope] [--lenient]

Tokens and ids of the texts live in tests/data/tokenizer/encoder_texts.json. `--tokenize BIN`
recomputes them with attnscope's own tokenizer (BIN --dump json on the freshly written model
folders): allowed because the shared reference proves that tokenizer identical to Hugging
Face's on every one of these families (see the README). Without it the stored ones are used.
`--from-shared` (re)builds the small tokenizer folders this needs under tests/data/tokenizer
(the two SentencePiece models are copied from /work/shared/reference/models).

For every case it prints how peaky attention is, how far a float32 run lands from the float64
reference, and how far each deliberate mistake (MISTAKES) would move the outputs; it stops when
a case cannot catch one of them (effect < 1e-3 on attentions or hidden states) or is
ill-conditioned in float32.
"""

import json
import os
import shutil
import subprocess
import sys

import numpy as np

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TOOLS)
import ref_encoder as R  # noqa: E402
from make_fixtures import TORCH_DTYPE, _nested, write_json, write_safetensors  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(TOOLS))
DATA = os.path.join(ROOT, "tests", "data")
MODELS_DIR = os.path.join(DATA, "models")
CASES_DIR = os.path.join(DATA, "cases")
TOK_DIR = os.path.join(DATA, "tokenizer")
TEXTS_FILE = os.path.join(TOK_DIR, "encoder_texts.json")
SHARED = "/work/shared/reference/models"

ROBERTA_MERGES = 1000  # GPT-2's 256 byte symbols + its first 1000 merges, in RoBERTa's id layout


# ---------------------------------------------------------------------------------------------
# Tokenizer folders.

def build_tokenizers():
    # RoBERTa: <s> <pad> </s> <unk> = 0..3, GPT-2's first 256 + K tokens shifted by 4, <mask> last
    with open(os.path.join(TOK_DIR, "gpt2", "vocab.json"), encoding="utf-8") as f:
        gpt2 = json.load(f)
    with open(os.path.join(TOK_DIR, "gpt2", "merges.txt"), encoding="utf-8") as f:
        merges = f.read().split("\n")
    assert merges[0].startswith("#version")
    merges = merges[1:1 + ROBERTA_MERGES]
    keep = {t: i for t, i in gpt2.items() if i < 256 + ROBERTA_MERGES}
    for i, mline in enumerate(merges):  # merge i yields token 256 + i: the cut is consistent
        assert keep["".join(mline.split(" "))] == 256 + i, mline
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for t, i in sorted(keep.items(), key=lambda kv: kv[1]):
        vocab[t] = i + 4
    vocab["<mask>"] = len(vocab)
    d = os.path.join(TOK_DIR, "roberta-bpe")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(d, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "\n".join(merges) + "\n")
    write_json(os.path.join(d, "tokenizer_config.json"), {"model_max_length": 512})
    # ModernBERT layout on the 513-entry byte-level BPE of tests/data/tokenizer/bytebpe
    with open(os.path.join(TOK_DIR, "bytebpe", "tokenizer.json"), encoding="utf-8") as f:
        tj = json.load(f)
    base = len(tj["model"]["vocab"]) + len(tj["added_tokens"])  # 513
    specials = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
    for j, s in enumerate(specials):
        tj["added_tokens"].append({"id": base + j, "content": s, "single_word": False, "lstrip": s == "[MASK]",
                                   "rstrip": False, "normalized": False, "special": True})
    cls, sep = {"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}
    tj["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [cls, {"Sequence": {"id": "A", "type_id": 0}}, sep],
        "pair": [cls, {"Sequence": {"id": "A", "type_id": 0}}, sep, {"Sequence": {"id": "B", "type_id": 1}},
                 {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
        "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [base + 1], "tokens": ["[CLS]"]},
                           "[SEP]": {"id": "[SEP]", "ids": [base + 2], "tokens": ["[SEP]"]}}}
    d = os.path.join(TOK_DIR, "modernbert-bpe")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tj, f, ensure_ascii=False)
    write_json(os.path.join(d, "tokenizer_config.json"), {
        "cls_token": "[CLS]", "mask_token": "[MASK]", "model_max_length": 512, "pad_token": "[PAD]",
        "sep_token": "[SEP]", "tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "[UNK]"})
    # the two SentencePiece models (~350 KB each) of the shared reference, copied as they are
    for name, src, files in (("albert-spm", "albert-tiny", ("spiece.model", "tokenizer_config.json")),
                             ("deberta-spm", "deberta-v3-tiny", ("spm.model", "tokenizer_config.json"))):
        d = os.path.join(TOK_DIR, name)
        os.makedirs(d, exist_ok=True)
        for fn in files:
            shutil.copyfile(os.path.join(SHARED, src, fn), os.path.join(d, fn))


TOKENIZER_FILES = {
    "roberta-bpe": ("vocab.json", "merges.txt", "tokenizer_config.json"),
    "bert": ("vocab.txt", "tokenizer_config.json"),
    "albert-spm": ("spiece.model", "tokenizer_config.json"),
    "deberta-spm": ("spm.model", "tokenizer_config.json"),
    "modernbert-bpe": ("tokenizer.json", "tokenizer_config.json"),
}


# ---------------------------------------------------------------------------------------------
# The models. Texts are short on purpose: case files grow with n^2 (attentions) and n.

MODELS = [
    dict(name="roberta-pos", family="roberta", tok="roberta-bpe", dtype="F32", seed=31, vocab=4 + 256 + ROBERTA_MERGES + 1,
         cfg=dict(hidden_size=16, num_attention_heads=2, num_hidden_layers=2, intermediate_size=32,
                  max_position_embeddings=66, layer_norm_eps=1e-5, hidden_act="gelu", pad_token_id=1,
                  type_vocab_size=1, bos_token_id=0, eos_token_id=2),
         cases={"padpair": ("The keeper<pad>lit the lamp at dusk", "ships passed<pad>safely")},
         mistakes=["positions_plain", "positions_zero", "act_tanh"]),
    dict(name="distilbert-pair", family="distilbert", tok="bert", dtype="BF16", seed=32, vocab=30522,
         cfg=dict(dim=8, n_heads=2, n_layers=2, hidden_dim=24, max_position_embeddings=64, activation="gelu",
                  pad_token_id=0, sinusoidal_pos_embds=False),
         cases={"pair": ("the river runs to the sea", "boats drift along the quiet river")},
         mistakes=["act_tanh", "no_scale"]),
    dict(name="albert-shared", family="albert", tok="albert-spm", dtype="F16", seed=33, vocab=6000,
         cfg=dict(embedding_size=8, hidden_size=16, num_attention_heads=2, num_hidden_layers=4, intermediate_size=32,
                  num_hidden_groups=1, inner_group_num=1, max_position_embeddings=64, layer_norm_eps=1e-12,
                  hidden_act="gelu_new", type_vocab_size=2, pad_token_id=0, bos_token_id=2, eos_token_id=3),
         cases={"sharing": ("One set of weights serves every layer.", "The same layer runs four times")},
         mistakes=["same_input", "act_erf", "no_token_types"]),
    dict(name="electra-proj", family="electra", tok="bert", dtype="F16", seed=34, vocab=30522,
         cfg=dict(embedding_size=8, hidden_size=16, num_attention_heads=4, num_hidden_layers=2, intermediate_size=32,
                  max_position_embeddings=64, layer_norm_eps=1e-12, hidden_act="gelu", type_vocab_size=2,
                  pad_token_id=0),
         cases={"pair": ("Small electric cars hum quietly.", "They charge overnight")},
         mistakes=["no_token_types", "act_tanh"]),
    dict(name="deberta-rel", family="deberta-v2", tok="deberta-spm", dtype="F16", seed=35, vocab=7100,
         cfg=dict(hidden_size=16, num_attention_heads=2, num_hidden_layers=2, intermediate_size=32,
                  max_position_embeddings=64, layer_norm_eps=1e-7, hidden_act="gelu", relative_attention=True,
                  position_buckets=8, max_relative_positions=12, pos_att_type=["p2c", "c2p"], share_att_key=True,
                  norm_rel_ebd="layer_norm", position_biased_input=False, type_vocab_size=0, pad_token_id=0),
         cases={"relative": ("And the evening and the morning were the third day.",
                             "Let there be light in the firmament")},
         mistakes=["drop_p2c", "drop_c2p", "bucket_round", "no_buckets", "scale_sqrt_d", "rel_no_ln", "wrap_not_clamp"]),
    dict(name="modernbert-window", family="modernbert", tok="modernbert-bpe", dtype="F32", seed=36, vocab=520,
         cfg=dict(hidden_size=16, num_attention_heads=2, num_hidden_layers=3, intermediate_size=24,
                  global_attn_every_n_layers=2, local_attention=4, global_rope_theta=160000.0,
                  local_rope_theta=10000.0, max_position_embeddings=512, norm_eps=1e-5, hidden_activation="gelu",
                  attention_bias=False, mlp_bias=False, norm_bias=False, pad_token_id=516, bos_token_id=514,
                  eos_token_id=515, cls_token_id=514, sep_token_id=515),
         cases={"window": ("The tide rose over the rocks and the gulls flew home", None)},
         mistakes=["no_window", "window_plus_1", "one_theta", "pattern_shift", "swap_gate"]),
]

ARCH = {"roberta": "RobertaModel", "distilbert": "DistilBertModel", "albert": "AlbertModel",
        "electra": "ElectraModel", "deberta-v2": "DebertaV2Model", "modernbert": "ModernBertModel"}
VERSION = {"modernbert": "4.51.3"}


def model_config(spec):
    cfg = {"architectures": [ARCH[spec["family"]]], "model_type": spec["family"]}
    cfg.update(spec["cfg"])
    cfg["vocab_size"] = spec["vocab"]
    cfg["torch_dtype"] = TORCH_DTYPE[spec["dtype"]]
    cfg["transformers_version"] = VERSION.get(spec["family"], "4.31.0")
    return dict(sorted(cfg.items()))


def make_tensors(spec, m):
    """Canonical (base-model) names -> float32 arrays; wide spreads so that attention is peaky."""
    rng = np.random.RandomState(spec["seed"])
    fam, hid, E, I = m["family"], m["hidden"], m["embedding_size"], m["intermediate"]
    t = {}

    def lin(name, out_f, in_f, bias=True, std=1.0):
        t[name + ".weight"] = rng.normal(0, std / np.sqrt(in_f), (out_f, in_f))
        if bias:
            t[name + ".bias"] = rng.normal(0, 0.3, out_f)

    def ln(name, size, bias=True):
        t[name + ".weight"] = rng.uniform(0.7, 1.3, size)
        if bias:
            t[name + ".bias"] = rng.normal(0, 0.2, size)

    V, P = spec["vocab"], m["max_positions"]
    if fam == "modernbert":
        t["embeddings.tok_embeddings.weight"] = rng.normal(0, 1, (V, hid))
        ln("embeddings.norm", hid, False)
        for i in range(m["n_layers"]):
            p = "layers.%d." % i
            if i:
                ln(p + "attn_norm", hid, False)
            lin(p + "attn.Wqkv", 3 * hid, hid, False, 2.0)
            lin(p + "attn.Wo", hid, hid, False)
            ln(p + "mlp_norm", hid, False)
            lin(p + "mlp.Wi", 2 * I, hid, False)
            lin(p + "mlp.Wo", hid, I, False)
        ln("final_norm", hid, False)
        return t
    t["embeddings.word_embeddings.weight"] = rng.normal(0, 1, (V, E))
    if fam != "deberta-v2":
        t["embeddings.position_embeddings.weight"] = rng.normal(0, 0.7, (P, E))
    if m["type_vocab"] > 0:
        t["embeddings.token_type_embeddings.weight"] = rng.normal(0, 0.7, (m["type_vocab"], E))
    ln("embeddings.LayerNorm", E)
    if fam == "electra":
        lin("embeddings_project", hid, E)
    if fam == "albert":
        lin("encoder.embedding_hidden_mapping_in", hid, E)
    if fam == "deberta-v2":
        t["encoder.rel_embeddings.weight"] = rng.normal(0, 1, (2 * m["att_span"], hid))
        ln("encoder.LayerNorm", hid)
    n_stored = 1 if fam == "albert" else m["n_layers"]
    for i in range(n_stored):
        if fam == "distilbert":
            p = "transformer.layer.%d." % i
            nm = ["attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin", "sa_layer_norm",
                  "ffn.lin1", "ffn.lin2", "output_layer_norm"]
        elif fam == "albert":
            p = "encoder.albert_layer_groups.0.albert_layers.0."
            nm = ["attention.query", "attention.key", "attention.value", "attention.dense", "attention.LayerNorm",
                  "ffn", "ffn_output", "full_layer_layer_norm"]
        else:
            p = "encoder.layer.%d." % i
            s = "_proj" if fam == "deberta-v2" else ""
            nm = ["attention.self.query" + s, "attention.self.key" + s, "attention.self.value" + s,
                  "attention.output.dense", "attention.output.LayerNorm", "intermediate.dense", "output.dense",
                  "output.LayerNorm"]
        lin(p + nm[0], hid, hid, std=2.0)
        lin(p + nm[1], hid, hid, std=2.0)
        lin(p + nm[2], hid, hid)
        lin(p + nm[3], hid, hid)
        ln(p + nm[4], hid)
        lin(p + nm[5], I, hid, std=1.2)  # wide pre-activations: the GELU form matters
        lin(p + nm[6], hid, I, std=3.0)
        ln(p + nm[7], hid)
    return {k: v.astype(np.float32) for k, v in t.items()}


def make_model(spec):
    d = os.path.join(MODELS_DIR, spec["name"])
    os.makedirs(d, exist_ok=True)
    cfg = model_config(spec)
    write_json(os.path.join(d, "config.json"), cfg)
    for fn in TOKENIZER_FILES[spec["tok"]]:
        dst = os.path.join(d, fn)
        if os.path.lexists(dst):
            os.remove(dst)
        os.symlink(os.path.join("..", "..", "tokenizer", spec["tok"], fn), dst)
    m = R.settings(cfg)
    t = make_tensors(spec, m)
    stored, _ = write_safetensors(os.path.join(d, "model.safetensors"),
                                  {n: (spec["dtype"], a) for n, a in t.items()}, pad=True)
    model = R.load_model(d)
    assert sorted(model["w"]) == sorted(stored)
    for n in stored:  # the reference loader reads back exactly what was stored
        assert np.array_equal(model["w"][n], stored[n]), n
    print("model %-18s %s, %d bytes" % (spec["name"], spec["dtype"], os.path.getsize(os.path.join(d, "model.safetensors"))))
    return model


# ---------------------------------------------------------------------------------------------
# Tokens and ids: attnscope's own tokenizer (proven identical to HF's on the shared reference).

def tokenize_all(binary):
    texts = {}
    for spec in MODELS:
        for case, (a, b) in spec["cases"].items():
            cmd = [binary, "-m", os.path.join(MODELS_DIR, spec["name"]), "--dump", "json", "--layer", "0",
                   "--head", "0", "--threads", "1"]
            if b is not None:
                cmd += ["--pair", b]
            out = json.loads(subprocess.run(cmd + ["--", a], check=True, capture_output=True).stdout)
            texts["%s--%s" % (spec["name"], case)] = {"text": a, "text_b": b, "tokens": out["tokens"],
                                                      "ids": out["ids"], "token_type_ids": out["token_type_ids"]}
    write_json(TEXTS_FILE, texts)


# ---------------------------------------------------------------------------------------------
# Deliberate mistakes.

def mistake(name, m):
    if name in ("positions_plain", "positions_zero", "no_token_types", "same_input", "no_scale",
                "bucket_round", "no_buckets", "scale_sqrt_d", "rel_no_ln", "wrap_not_clamp", "no_window", "one_theta", "swap_gate"):
        return {name: True}
    if name == "act_tanh":
        return dict(act="gelu_new")
    if name == "act_erf":
        return dict(act="gelu")
    if name == "drop_p2c":
        return dict(drop_terms=("p2c",))
    if name == "drop_c2p":
        return dict(drop_terms=("c2p",))
    if name == "window_plus_1":
        return dict(window_delta=1)
    if name == "pattern_shift":  # (i + 1) % every instead of i % every
        every = m["cfg"]["global_attn_every_n_layers"]
        return dict(global_layers=[(i + 1) % every == 0 for i in range(m["n_layers"])])
    raise KeyError(name)


F32_BUDGET = dict(attentions=3e-6, q=1e-5, k=1e-5, v=1e-5, q_rot=1e-5, k_rot=1e-5, rel_att=1e-5, hidden_states=2e-5)
MISTAKE_FLOOR = 1e-3  # on attentions or hidden states: 100x the C tests' attention tolerance
# the other GELU form moves a pre-activation by at most ~2e-4: held to 5x the C tests' 1e-4 on
# hidden states instead
FLOOR = {"act_tanh": 5e-4, "act_erf": 5e-4}
LENIENT = "--lenient" in sys.argv


def make_case(spec, model, case, tok):
    ids, tt = tok["ids"], tok["token_type_ids"]
    use_tt = model["type_vocab"] > 1 or model["family"] == "deberta-v2"  # as the shared cases carry them
    out = R.forward(model, ids, tt)
    o32 = R.forward(model, ids, tt, np.float32)
    dev = {q: float(np.abs(o32[q] - out[q]).max()) for q in F32_BUDGET if q in out}
    over = {q: v for q, v in dev.items() if v > F32_BUDGET[q]}
    if over and not LENIENT:
        raise SystemExit("%s--%s ill-conditioned: float32 deviates by %s" % (spec["name"], case, over))
    effects = {}
    for name in spec["mistakes"]:
        wrong = R.forward(model, ids, tt, **mistake(name, model))
        effects[name] = max(float(np.abs(wrong[q] - out[q]).max()) for q in ("attentions", "hidden_states"))
    weak = {k: v for k, v in effects.items() if v < FLOOR.get(k, MISTAKE_FLOOR)}
    if weak and not LENIENT:
        raise SystemExit("%s--%s too weak: these mistakes would pass unnoticed: %s" % (spec["name"], case, weak))
    head = {
        "format": "attnscope-ref v1",
        "producer": "tests/tools/make_encoder_fixtures.py (ref_encoder.py, float64, rounded to float32)",
        "model_dir": "tests/data/models/" + spec["name"], "family": model["family"],
        "config": {k: v for k, v in model_config(spec).items() if k not in ("architectures", "torch_dtype")},
        "text": tok["text"], "text_b": tok["text_b"], "tokens": tok["tokens"], "ids": ids,
    }
    if use_tt:
        head["token_type_ids"] = tt
    head.update({"attention_mask": [1] * len(ids), "kv_heads": model["n_heads"],
                 "mistakes_checked": {k: float("%.3g" % v) for k, v in effects.items()}})
    fields = ['"%s": %s' % (k, json.dumps(v, ensure_ascii=False)) for k, v in head.items()]
    for q in R.QUANTITIES:
        if q not in out:
            continue
        if q == "relative_pos":
            fields.append('"relative_pos": [%s]' % ",\n".join(json.dumps(r) for r in out[q].tolist()))
        else:
            fields.append('"%s": %s' % (q, _nested(out[q])))
    path = os.path.join(CASES_DIR, "%s--%s.json" % (spec["name"], case))
    with open(path, "w", encoding="utf-8") as f:
        f.write("{" + ",\n ".join(fields) + "}\n")
    rows = out["attentions"].max(-1)
    print("case  %-28s n=%-3d max prob median %.2f, >0.9 %3.0f%%  f32 dev: attn %.1e q/k %.1e hid %.1e  "
          "weakest mistake %.1e (%s)" % (os.path.basename(path), len(ids), np.median(rows), 100 * (rows > 0.9).mean(),
                                         dev["attentions"], max(dev["q"], dev["k"]), dev["hidden_states"],
                                         min(effects.values()), min(effects, key=effects.get)))
    print("      mistakes: %s" % ", ".join("%s %.2g" % kv for kv in effects.items()))
    if model["family"] == "deberta-v2":
        rp = out["relative_pos"]
        print("      relative_pos: %d distinct buckets, |bucket| up to %d (span %d)"
              % (len(np.unique(rp)), np.abs(rp).max(), model["att_span"]))
    return dev, effects


def main(argv):
    if "--from-shared" in argv:
        build_tokenizers()
    os.makedirs(CASES_DIR, exist_ok=True)
    names = {s["name"] for s in MODELS}
    for old in os.listdir(CASES_DIR):
        if old.endswith(".json") and old.split("--")[0] in names:
            os.remove(os.path.join(CASES_DIR, old))
    models = {spec["name"]: make_model(spec) for spec in MODELS}
    if "--tokenize" in argv:
        tokenize_all(argv[argv.index("--tokenize") + 1])
    with open(TEXTS_FILE, encoding="utf-8") as f:
        texts = json.load(f)
    worst = {}
    for spec in MODELS:
        for case, (a, b) in spec["cases"].items():
            tok = texts["%s--%s" % (spec["name"], case)]
            assert (tok["text"], tok["text_b"]) == (a, b), "stale %s: rerun with --tokenize" % TEXTS_FILE
            dev, _ = make_case(spec, models[spec["name"]], case, tok)
            for q, v in dev.items():
                worst[q] = max(worst.get(q, 0.0), v)
    print("float32 vs float64, worst over all cases: %s" % ", ".join("%s %.1e" % kv for kv in sorted(worst.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
