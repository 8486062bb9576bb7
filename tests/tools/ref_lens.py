#!/usr/bin/python3
"""ref_lens.py -- the logit lens (nostalgebraist 2020) attnscope computes (src/engine/lens.c, --dump json
--lens), checked against the shared reference's cases-lm and against this independent numpy reference.

The reference, from the definition (shared reference README, "cases-lm/", key logit_lens): for the residual
stream hidden_states[l], l = 0 .. L (0 = the embedding output), the top-5 ids and log-probabilities of
log_softmax(lm_head(final_norm(h))), except l = L, whose hidden state already carries the final norm (as
transformers reports it) and goes through lm_head alone. The hidden states come from the repository's own
float64 forward passes (ref_forward.py for GPT-2, ref_decoder.py for the decoders), the head from ref_lm.py;
the final norm is written here: GPT-2's ln_f (LayerNorm, layer_norm_epsilon), else RMSNorm
x / sqrt(mean(x^2) + rms_norm_eps) * norm.weight (Llama, Qwen2/3, Mistral).

    ref_lens.py cases CASE.json DUMP.json
        attnscope's logit_lens against a case's: ids identical except where the case's neighbours tie
        within 1e-6, log-probabilities within 1e-4; exit 1 otherwise
    ref_lens.py verify CASES_LM_DIR MODELS_DIR REPO_MODELS_DIR [MISTAKE]
        this reference against every case with a logit_lens; MISTAKE norm_twice (the final norm applied
        again at l = L) or no_norm (none at l < L) must then disagree; prints the worst differences
    ref_lens.py compare MODEL_DIR DUMP.json
        attnscope's logit_lens against this reference on the dump's ids
"""

import hashlib
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_lm  # noqa: E402
from ref_forward import layer_norm, read_checkpoint  # noqa: E402

TOL, K = 1e-4, 5
MISTAKES = ("norm_twice", "no_norm")


def hidden_states(model_dir, ids):
    """cfg, tensors and the float64 hidden states [L+1][n][hidden] of IDS (the last after the final norm)."""
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    tensors = read_checkpoint(model_dir)
    if cfg["model_type"] == "gpt2":
        import ref_forward
        hs = ref_forward.forward(ref_forward.load_model(model_dir), ids)["hidden_states"]
    else:
        import ref_decoder
        m = ref_decoder.settings(cfg)
        m["w"] = ref_decoder.canonical_weights({k: v for k, v in tensors.items() if not k.startswith("lm_head.")},
                                               m["family"])
        m["dir"] = model_dir
        ref_decoder.check_weights(m)
        hs = ref_decoder.forward(m, ids)["hidden_states"]
    return cfg, tensors, np.asarray(hs, dtype=np.float64)


def final_norm(cfg, tensors, h):
    find = ref_lm._find
    if cfg["model_type"] == "gpt2":
        return layer_norm(h, find(tensors, "ln_f.weight"), find(tensors, "ln_f.bias"), cfg.get("layer_norm_epsilon", 1e-5))
    if cfg["model_type"] not in ("llama", "qwen2", "qwen3", "mistral"):
        raise SystemExit("ref_lens.py: no final norm written for %s" % cfg["model_type"])
    return h / np.sqrt((h * h).mean(axis=-1, keepdims=True) + cfg.get("rms_norm_eps", 1e-6)) * find(tensors, "norm.weight")


def lens(cfg, tensors, hs, mistake=None):
    """[L+1] of (ids [n][K], log-probabilities [n][K])."""
    L = len(hs) - 1
    out = []
    for l, h in enumerate(hs):
        norm = (l < L) != (mistake == "no_norm" and l < L) or (mistake == "norm_twice" and l == L)
        lp, _ = ref_lm.log_softmax(ref_lm.logits_of(cfg, tensors, final_norm(cfg, tensors, h) if norm else h))
        out.append(ref_lm.topk(lp, K))
    return out


def diff(ours, theirs):
    """(ids agree, max |log-prob difference|) of OURS and THEIRS, lists of {ids, logprobs} per layer."""
    same, worst = len(ours) == len(theirs), 0.0
    for a, b in zip(ours, theirs):
        if len(a["ids"]) != len(b["ids"]):
            return False, float("inf")
        for i in range(len(b["ids"])):
            same &= ref_lm._ids_agree(list(a["ids"][i]), list(b["ids"][i]), list(b["logprobs"][i]))
            worst = max(worst, float(np.abs(np.array(a["logprobs"][i], dtype=np.float64) - np.array(b["logprobs"][i])).max()))
    return same, worst


def as_layers(result):
    return [{"ids": [list(map(int, r)) for r in ids], "logprobs": lp.tolist()} for ids, lp in result]


def cases(case_path, dump_path):
    case, dump = json.load(open(case_path)), json.load(open(dump_path))
    name = os.path.basename(case_path)
    if "logit_lens" not in dump:
        print("%s: FAIL: the dump has no logit_lens" % name)
        return False
    if [e["layer"] for e in dump["logit_lens"]] != list(range(len(case["logit_lens"]["layers"]))):
        print("%s: FAIL: layers %s" % (name, [e["layer"] for e in dump["logit_lens"]]))
        return False
    same, worst = diff(dump["logit_lens"], case["logit_lens"]["layers"])
    good = same and worst <= TOL
    print("%s: logit lens of %d layers x %d tokens: ids %s, max |diff| of log-probabilities %.2g%s" % (
        name, len(dump["logit_lens"]), len(dump["ids"]), "agree" if same else "DIFFER", worst, "" if good else "  FAIL"))
    return good


def verify(cases_dir, models_dir, repo_models, mistake=None):
    ok, worst_all, checked = True, 0.0, 0
    for name in sorted(os.listdir(cases_dir)):
        if not name.endswith(".json"):
            continue
        case = json.load(open(os.path.join(cases_dir, name)))
        if "logit_lens" not in case:
            continue
        md = case["model_dir"]
        mdir = os.path.join(repo_models, md) if "/" not in md else os.path.join(models_dir, os.path.basename(md))
        if hashlib.sha256(open(os.path.join(mdir, "model.safetensors"), "rb").read()).hexdigest() != case["model_file_sha256"]:
            print("%s: SKIPPED: not the file the case was computed from" % name)
            continue
        cfg, tensors, hs = hidden_states(mdir, case["ids"])
        same, worst = diff(as_layers(lens(cfg, tensors, hs, mistake)), case["logit_lens"]["layers"])
        good = same and worst <= TOL
        ok &= good
        checked += 1
        worst_all = max(worst_all, worst)
        print("%s: ids %s, max |diff| %.2g%s" % (name, "agree" if same else "DIFFER", worst, "" if good else "  FAIL"))
    print("worst: %.3g over %d cases" % (worst_all, checked))
    return ok and checked > 0


def compare(model_dir, dump_path):
    dump = json.load(open(dump_path))
    cfg, tensors, hs = hidden_states(model_dir, dump["ids"])
    same, worst = diff(dump.get("logit_lens", []), as_layers(lens(cfg, tensors, hs)))
    good = same and worst <= TOL and len(dump.get("logit_lens", [])) == len(hs)
    print("%s: logit lens ids %s, max |diff| %.2g%s" % (os.path.basename(model_dir.rstrip("/")),
                                                        "agree" if same else "DIFFER", worst, "" if good else "  FAIL"))
    return good


def main(argv):
    if len(argv) == 3 and argv[0] == "cases":
        return 0 if cases(argv[1], argv[2]) else 1
    if len(argv) in (4, 5) and argv[0] == "verify" and (len(argv) == 4 or argv[4] in MISTAKES):
        return 0 if verify(argv[1], argv[2], argv[3], argv[4] if len(argv) > 4 else None) else 1
    if len(argv) == 3 and argv[0] == "compare":
        return 0 if compare(argv[1], argv[2]) else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
