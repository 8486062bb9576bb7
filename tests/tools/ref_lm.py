#!/usr/bin/python3
"""ref_lm.py -- an independent numpy reference of the output heads attnscope computes (src/engine/lmhead.c).

Written from the published head classes of transformers 4.51 (no transformers or torch import), on top of
the repository's own numpy forward passes (ref_forward.py: BERT, GPT-2; ref_decoder.py: the decoder
families; ref_encoder.py: RoBERTa, XLM-R), all in float64:
  * causal LMs (*ForCausalLM): logits = lm_head(last_hidden_state), where lm_head is the input embedding
    when config.tie_word_embeddings (else its class's default) is true, else the file's lm_head.weight
    (embed_out.weight for GPT-NeoX), plus lm_head.bias where the class has one (GPT-J, Phi); then
    CohereForCausalLM: logits * logit_scale; GraniteForCausalLM: logits / logits_scaling;
    Gemma2/Gemma3ForCausalLM: tanh(logits / final_logit_softcapping) * final_logit_softcapping.
  * BertForMaskedLM (BertLMPredictionHead): LayerNorm_eps(ACT2FN[hidden_act](dense(h))) @ word_embeddings^T
    + cls.predictions.bias; RobertaForMaskedLM (RobertaLMHead): the same with lm_head.{dense, layer_norm,
    bias} and always erf GELU.
log-probabilities = logits - logsumexp(logits) over the whole vocabulary.

Command line (Debian's /usr/bin/python3, which has numpy):
    ref_lm.py verify CASES_LM_DIR MODELS_DIR REPO_MODELS_DIR [MISTAKE]
        run every case of cases-lm from its ids; print the max |difference| of the top-10 log-probabilities,
        logsumexp and surprisal, and whether the top-1/top-10 ids agree; exit 1 when a case disagrees
        beyond 1e-4 (MISTAKE: final_norm_twice, no_softcap, no_mlm_ln -- deliberate mistakes, whose
        effect is printed; then exit 1 is expected)
    ref_lm.py compare MODEL_DIR DUMP_JSON [MISTAKE]
        compare attnscope's --dump json (its ids, topk, logsumexp, surprisal) with this reference
    ref_lm.py synth SRC_DIR OUT_DIR KIND
        write a copy of SRC_DIR with a random but fixed head added (KIND: roberta_mlm = lm_head.* of
        RobertaForMaskedLM; untied_bias = tie_word_embeddings false with lm_head.weight and lm_head.bias),
        to check heads no shared case covers
"""

import json
import math
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_forward  # noqa: E402
from ref_forward import activation, layer_norm, read_checkpoint  # noqa: E402

# The config classes' defaults of tie_word_embeddings (PretrainedConfig's is true; these override it).
TIE_DEFAULT = {f: False for f in ("llama", "llama4_text", "llama4", "mistral", "mixtral", "qwen2", "qwen3",
                                  "qwen3_moe", "olmo", "olmo2", "olmo3", "olmoe", "stablelm", "granite",
                                  "deepseek_v3", "gpt_oss", "gpt_neox", "gptj", "phi", "phi3")}
# The input embedding of each causal family, after the head model's prefix.
EMBED = {"gpt2": "wte.weight", "gpt_neo": "wte.weight", "gpt_bigcode": "wte.weight", "gptj": "wte.weight",
         "bloom": "word_embeddings.weight", "falcon": "word_embeddings.weight", "gpt_neox": "embed_in.weight"}
LM_HEAD = {"gpt_neox": "embed_out.weight"}
MLM = {"bert": ("cls.predictions.", "transform.dense", "transform.LayerNorm", "bias", None),
       "roberta": ("lm_head.", "dense", "layer_norm", "bias", "gelu"),
       "xlm-roberta": ("lm_head.", "dense", "layer_norm", "bias", "gelu")}
MISTAKES = ("final_norm_twice", "no_softcap", "no_mlm_ln")
# Encoders whose masked-LM heads this reference (and attnscope) does not cover.
NO_MLM = ("albert", "distilbert", "electra", "deberta-v2", "modernbert")


class NoHead(Exception):
    """The model has no output head: the reason."""


def _find(tensors, name, prefixes=("model.", "transformer.", "gpt_neox.", "model.decoder.", "decoder.",
                                   "bert.", "roberta.", "language_model.model.", "model.language_model.", "")):
    for p in prefixes:
        if p + name in tensors:
            return tensors[p + name].astype(np.float64)
    return None


def _final_norm(cfg, tensors, h):
    """The final norm again (the deliberate mistake final_norm_twice): GPT-2 ln_f, else RMSNorm norm.weight."""
    if cfg["model_type"] == "gpt2":
        return layer_norm(h, _find(tensors, "ln_f.weight"), _find(tensors, "ln_f.bias"),
                          cfg.get("layer_norm_epsilon", 1e-5))
    w = _find(tensors, "norm.weight")
    eps = cfg.get("rms_norm_eps", 1e-6)
    return h / np.sqrt((h * h).mean(axis=-1, keepdims=True) + eps) * w


def hidden_and_head(model_dir, ids, type_ids=None):
    """The float64 last hidden state of IDS and a function from it to logits (or NoHead)."""
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    fam = cfg["model_type"]
    tensors = read_checkpoint(model_dir)
    if fam in NO_MLM:
        return cfg, tensors, None  # logits_of says there is no head
    if fam in ("gpt2", "bert"):
        m = ref_forward.load_model(model_dir)
        last = ref_forward.forward(m, ids, type_ids)["last_hidden_state"]
    elif fam in MLM:
        import ref_encoder
        m = ref_encoder.load_model(model_dir)
        last = ref_encoder.forward(m, ids, type_ids)["last_hidden_state"]
    else:
        import ref_decoder
        m = ref_decoder.settings(cfg)  # load_model, without the head's tensors, which it refuses as unknown
        m["w"] = ref_decoder.canonical_weights({k: v for k, v in tensors.items() if not k.startswith("lm_head.")},
                                               m["family"])
        m["dir"] = model_dir
        ref_decoder.check_weights(m)
        last = ref_decoder.forward(m, ids)["last_hidden_state"]
    return cfg, tensors, np.asarray(last, dtype=np.float64)


def logits_of(cfg, tensors, h, mistake=None):
    """The head's logits [n][vocab] for last hidden states H [n][hidden] (float64)."""
    fam = cfg["model_type"]
    if fam in NO_MLM:
        raise NoHead("no masked-LM head supported for %s" % fam)
    text = cfg.get("text_config") or {}
    get = lambda k, d=None: cfg.get(k, text.get(k, d))  # noqa: E731
    if fam in MLM:
        pre, dense, ln, bias, act = MLM[fam]
        names = [pre + dense + ".weight", pre + ln + ".weight", pre + ln + ".gamma", pre + bias]
        if _find(tensors, names[0], ("",)) is None or _find(tensors, names[3], ("",)) is None:
            raise NoHead("the file has no %s" % names[0])
        t = h @ _find(tensors, pre + dense + ".weight", ("",)).T + _find(tensors, pre + dense + ".bias", ("",))
        t = activation(act or cfg.get("hidden_act", "gelu"), t)
        g = _find(tensors, pre + ln + ".weight", ("",))
        b = _find(tensors, pre + ln + ".bias", ("",))
        if g is None:
            g, b = _find(tensors, pre + ln + ".gamma", ("",)), _find(tensors, pre + ln + ".beta", ("",))
        if mistake != "no_mlm_ln":
            t = layer_norm(t, g, b, cfg.get("layer_norm_eps", 1e-12))
        emb = _find(tensors, "embeddings.word_embeddings.weight")
        return t @ emb.T + _find(tensors, pre + bias, ("",))
    tie = get("tie_word_embeddings", TIE_DEFAULT.get(fam, True))
    if mistake == "final_norm_twice":
        h = _final_norm(cfg, tensors, h)
    if tie:
        w = _find(tensors, EMBED.get(fam, "embed_tokens.weight"))
    else:
        w = _find(tensors, LM_HEAD.get(fam, "lm_head.weight"), ("", "language_model."))
        if w is None:
            raise NoHead("tie_word_embeddings is false and the file has no lm_head weight")
    z = h @ w.T
    if not tie and fam in ("gptj", "phi") and _find(tensors, "lm_head.bias", ("",)) is not None:
        z = z + _find(tensors, "lm_head.bias", ("",))  # nn.Linear's bias; a file without it: zeros (_init_weights)
    if fam == "cohere":
        z = z * get("logit_scale", 0.0625)
    if fam == "granite":
        z = z / get("logits_scaling", 1.0)
    cap = get("final_logit_softcapping", 30.0 if fam == "gemma2" else None)
    if cap and mistake != "no_softcap":
        z = np.tanh(z / cap) * cap
    return z


def log_softmax(z):
    mx = z.max(axis=-1, keepdims=True)
    lse = mx + np.log(np.exp(z - mx).sum(axis=-1, keepdims=True))
    return z - lse, lse[:, 0]


def topk(lp, k):
    """Best first, ties by the lower id (a stable sort of -lp)."""
    order = np.argsort(-lp, axis=-1, kind="stable")[:, :k]
    return order, np.take_along_axis(lp, order, axis=-1)


def _ids_agree(ours, theirs, their_lp, tie=1e-6):
    """Same top-1, and the same ids wherever their neighbours in the list are not tied within TIE."""
    if ours[0] != theirs[0]:
        return False
    for j in range(len(theirs)):
        if ours[j] != theirs[j]:
            near = [abs(their_lp[j] - their_lp[i]) < tie for i in (j - 1, j + 1) if 0 <= i < len(theirs)]
            if not any(near):
                return False
    return True


def verify(cases_dir, models_dir, repo_models, mistake=None):
    worst = {"logprobs": 0.0, "logsumexp": 0.0, "surprisal": 0.0, "mask_logprobs": 0.0}
    ok = True
    for name in sorted(os.listdir(cases_dir)):
        if not name.endswith(".json"):
            continue
        case = json.load(open(os.path.join(cases_dir, name)))
        md = case["model_dir"]
        mdir = os.path.join(repo_models, md) if "/" not in md else os.path.join(models_dir, os.path.basename(md))
        fn = os.path.join(mdir, "model.safetensors")
        import hashlib
        sha = hashlib.sha256(open(fn, "rb").read()).hexdigest()
        if sha != case["model_file_sha256"]:
            print("%s: SKIPPED: %s is not the file the case was computed from (sha256 %s..., case %s...)"
                  % (name, fn, sha[:12], case["model_file_sha256"][:12]))
            continue
        cfg, tensors, h = hidden_and_head(mdir, case["ids"], case.get("token_type_ids"))
        try:
            lp, lse = log_softmax(logits_of(cfg, tensors, h, mistake))
        except NoHead as why:
            good = not case["has_lm_head"]
            ok &= good
            print("%s: no head (%s): %s" % (name, why, "as the case says" if good else "BUT THE CASE HAS ONE"))
            continue
        if not case["has_lm_head"]:
            ok = False
            print("%s: the case has no head, the reference computes one" % name)
            continue
        ref = case["logits_topk"]
        ids, best = topk(lp, ref["k"])
        d = {"logprobs": float(np.abs(best - np.array(ref["logprobs"])).max()),
             "logsumexp": float(np.abs(lse - np.array(case["logsumexp"])).max())}
        same = all(_ids_agree(list(ids[i]), ref["ids"][i], ref["logprobs"][i]) for i in range(len(ids)))
        if "surprisal" in case:
            s = -lp[np.arange(len(case["ids"]) - 1), case["ids"][1:]]
            d["surprisal"] = float(np.abs(s - np.array(case["surprisal"])).max())
        if case.get("mask_positions"):
            mi, ml = topk(lp[case["mask_positions"]], case["mask_topk"]["k"])
            d["mask_logprobs"] = float(np.abs(ml - np.array(case["mask_topk"]["logprobs"])).max())
            same &= [list(r) for r in mi] == case["mask_topk"]["ids"]
        good = same and max(d.values()) <= 1e-4
        ok &= good
        for key, v in d.items():
            worst[key] = max(worst[key], v)
        print("%s: ids %s, max |diff| %s%s" % (name, "agree" if same else "DIFFER",
                                              ", ".join("%s %.2g" % kv for kv in d.items()), "" if good else "  FAIL"))
    print("worst: " + ", ".join("%s %.2g" % kv for kv in worst.items()))
    return ok


def compare(model_dir, dump_path, mistake=None):
    """attnscope's dump against this reference: returns True when within 1e-4 with agreeing ids."""
    dump = json.load(open(dump_path))
    cfg, tensors, h = hidden_and_head(model_dir, dump["ids"], dump.get("token_type_ids"))
    try:
        lp, lse = log_softmax(logits_of(cfg, tensors, h, mistake))
    except NoHead as why:
        good = dump.get("lm_head", {}).get("kind") == "none"
        print("%s: no head (%s); attnscope: %s" % (model_dir, why, dump.get("lm_head")))
        return good
    if "topk" not in dump:
        print("%s: the reference has a head, the dump has no topk (%s)" % (model_dir, dump.get("lm_head")))
        return False
    k = len(dump["topk"][0]["ids"])
    ids, best = topk(lp, k)
    ours = np.array([r["logprobs"] for r in dump["topk"]], dtype=np.float64)
    # the reference's log-probability of attnscope's ids (a tie may order them differently)
    at = np.take_along_axis(lp, np.array([r["ids"] for r in dump["topk"]]), axis=-1)
    d = {"logprobs": float(np.abs(ours - best).max()), "logprobs_of_its_ids": float(np.abs(ours - at).max()),
         "logsumexp": float(np.abs(np.array(dump["logsumexp"]) - lse).max())}
    same = all(_ids_agree(dump["topk"][i]["ids"], list(ids[i]), list(best[i])) for i in range(len(ids)))
    if "surprisal" in dump:
        s = -lp[np.arange(len(dump["ids"]) - 1), dump["ids"][1:]]
        d["surprisal"] = float(np.abs(np.array(dump["surprisal"], dtype=np.float64) - s).max())
    good = same and max(d.values()) <= 1e-4
    print("%s (%s): ids %s, max |diff| %s%s" % (os.path.basename(model_dir.rstrip("/")), dump["lm_head"]["about"],
                                               "agree" if same else "DIFFER",
                                               ", ".join("%s %.2g" % kv for kv in d.items()), "" if good else "  FAIL"))
    return good


def _write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype="<f4")
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        blobs.append(a.tobytes())
        off += a.nbytes
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def synth(src, out, kind):
    """SRC's model with a random head added (seeded): see the module's docstring."""
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(src):
        if f not in ("model.safetensors", "config.json") and not os.path.exists(os.path.join(out, f)):
            os.symlink(os.path.abspath(os.path.join(src, f)), os.path.join(out, f))
    cfg = json.load(open(os.path.join(src, "config.json")))
    t = {k: v.astype(np.float32) for k, v in read_checkpoint(src).items()}
    rng = np.random.default_rng(22)
    V, H = next(a.shape for k, a in t.items() if k.endswith(("embed_tokens.weight", "wte.weight",
                                                             "word_embeddings.weight", "embed_in.weight")))
    if kind == "roberta_mlm":
        t["lm_head.dense.weight"] = rng.normal(0, 0.3, (H, H))
        t["lm_head.dense.bias"] = rng.normal(0, 0.1, H)
        t["lm_head.layer_norm.weight"] = 1 + rng.normal(0, 0.1, H)
        t["lm_head.layer_norm.bias"] = rng.normal(0, 0.1, H)
        t["lm_head.bias"] = rng.normal(0, 0.5, V)
        cfg["hidden_act"] = "gelu_new"  # RobertaLMHead keeps erf GELU: a reader of hidden_act would differ
    elif kind == "untied_bias":
        cfg["tie_word_embeddings"] = False
        t["lm_head.weight"] = rng.normal(0, 0.5, (V, H))
        t["lm_head.bias"] = rng.normal(0, 0.5, V)
    else:
        raise SystemExit("synth: unknown kind %r" % kind)
    _write_safetensors(os.path.join(out, "model.safetensors"), t)
    json.dump(cfg, open(os.path.join(out, "config.json"), "w"), indent=1)


def main(argv):
    if len(argv) >= 4 and argv[0] == "verify":
        return 0 if verify(argv[1], argv[2], argv[3], argv[4] if len(argv) > 4 else None) else 1
    if len(argv) >= 3 and argv[0] == "compare":
        return 0 if compare(argv[1], argv[2], argv[3] if len(argv) > 3 else None) else 1
    if len(argv) == 4 and argv[0] == "synth":
        synth(argv[1], argv[2], argv[3])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
