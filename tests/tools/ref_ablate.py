#!/usr/bin/python3
"""ref_ablate.py -- head ablation (attnscope --ablate, --ablate-mode, --ablation-effect) checked two ways.

An independent numpy reference, written from the definitions (the shared reference's README, "cases-lm/",
key ablation; no transformers or torch import), on the repository's float64 forward passes (ref_forward.py:
BERT, GPT-2; ref_decoder.py: the decoder families) and heads (ref_lm.py):
  * zero-ablation: head h of layer l has its d columns of the output projection's input (its context) set
    to 0 at every position (ref_forward.ablate_context) -- what transformers' head_mask does downstream;
  * mean-ablation: those columns replaced at every position by their mean over the text's positions in the
    clean run;
  * effect: mean over positions of KL(p_clean || p_ablated) in nats (every position's prediction), or for a
    model without an output head the Frobenius norm of the change of the last hidden state.

Command line (Debian's /usr/bin/python3, which has numpy):
    ref_ablate.py case CASE.json RUN MODE DUMP.json CLEAN.json
        attnscope's dump of the case's run RUN (0..3) in MODE (zero, mean) against the case (transformers):
        log-probabilities, logsumexp and surprisal 1e-4, identical top-1 ids, the effect (KL) 1e-4, the
        next layer's attentions 1e-5, the per-layer largest attention change 1e-5 (CLEAN.json: the dump of
        the clean run) and the layers below the ablated one unchanged bit for bit
    ref_ablate.py effect CASE.json DUMP.json
        the dump's ablation_effect [L][H] against the case's zero_ablation_effect (1e-4, relative for norms)
    ref_ablate.py verify CASES_LM_DIR MODELS_DIR REPO_MODELS_DIR [MISTAKE|-] [CASE_PREFIX]
        this reference against every case's runs and effects, or the cases whose name begins with
        CASE_PREFIX (MISTAKE: wrong_head = the next head's columns; means_of_ablated = a mean-ablation's
        means taken from the ablated run, not the clean one; - = none)
    ref_ablate.py compare MODEL_DIR DUMP.json
        attnscope's ablated dump (its ids, "ablated", "ablate_mode", topk, logsumexp, surprisal,
        last_hidden_state, attentions, ablation.effect, ablation_effect) against this reference
"""

import hashlib
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_forward  # noqa: E402
import ref_lm  # noqa: E402

TOL_LP, TOL_KL, TOL_ATT = 1e-4, 1e-4, 1e-5
MISTAKES = ("wrong_head", "means_of_ablated")


def _model(model_dir):
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    tensors = ref_lm.read_checkpoint(model_dir)
    fam = cfg["model_type"]
    if fam in ("gpt2", "bert"):
        m = ref_forward.load_model(model_dir)
        run = lambda ids, tt, ab: ref_forward.forward(m, ids, tt, ablate=ab)  # noqa: E731
        d = m["head_dim"]
    else:
        import ref_decoder
        m = ref_decoder.settings(cfg)
        m["w"] = ref_decoder.canonical_weights({k: v for k, v in tensors.items() if not k.startswith("lm_head.")},
                                               m["family"])
        m["dir"] = model_dir
        ref_decoder.check_weights(m)
        run = lambda ids, tt, ab: ref_decoder.forward(m, ids, ablate=ab)  # noqa: E731
        d = m["head_dim"]
    return cfg, tensors, run, d, m["n_heads"]


def _logprobs(cfg, tensors, last):
    try:
        return ref_lm.log_softmax(ref_lm.logits_of(cfg, tensors, np.asarray(last, dtype=np.float64)))
    except ref_lm.NoHead:
        return None


def ablated(model, ids, tt, heads, mode, mistake=None, clean=None):
    """The reference's run of IDS with HEADS [[l, h], ...] ablated (MODE zero/mean); (out, means)."""
    cfg, tensors, run, d, H = model
    if mistake == "wrong_head":
        heads = [[l, (h + 1) % H] for l, h in heads]
    clean = clean if clean is not None else run(ids, tt, None)
    if mode == "zero":
        ab = {(l, h): None for l, h in heads}
    elif mistake == "means_of_ablated":  # each layer's means from the run ablated below it
        ab = {}
        for layer in sorted({l for l, _ in heads}):
            cur = run(ids, tt, ab) if ab else clean
            for l, h in heads:
                if l == layer:
                    ab[(l, h)] = cur["context"][l][:, h * d:(h + 1) * d].mean(axis=0)
    else:
        ab = {(l, h): clean["context"][l][:, h * d:(h + 1) * d].mean(axis=0) for l, h in heads}
    return run(ids, tt, ab), ab


def effect(model, clean, out):
    cfg, tensors = model[0], model[1]
    pc, pa = _logprobs(cfg, tensors, clean["last_hidden_state"]), _logprobs(cfg, tensors, out["last_hidden_state"])
    if pc is None:
        diff = np.asarray(out["last_hidden_state"], np.float64) - np.asarray(clean["last_hidden_state"], np.float64)
        return float(np.sqrt((diff * diff).sum()))
    lc, la = pc[0], pa[0]
    return float((np.exp(lc) * (lc - la)).sum(axis=-1).mean())


def _maxdiff(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.abs(a - b).max()) if a.shape == b.shape else float("inf")


def _next_layer_diff(attn, nl, r):
    """The next layer's attentions against the case's, but for a head ablated there too, which head_mask
    shows as zeros and the ablated run keeps as computed."""
    layer = nl["layer"]
    keep = [h for h in range(len(nl["attentions"])) if [layer, h] not in r["heads_shown_as_zero_in_attentions"]]
    return _maxdiff(np.asarray(attn[layer])[keep], np.asarray(nl["attentions"])[keep])


def _against_case(case, r, lp, lse, last, attn, kl):
    """Differences of one ablated run (LP/LSE or LAST, ATTN [L][H][n][n], KL) from the case's run R."""
    d, same = {}, True
    if "logits_topk" in r and lp is not None:
        ref = r["logits_topk"]
        ids, best = ref_lm.topk(lp, ref["k"])
        d["logprobs"] = _maxdiff(best, ref["logprobs"])
        d["logsumexp"] = _maxdiff(lse, r["logsumexp"])
        same &= all(ids[i][0] == ref["ids"][i][0] for i in range(len(ids)))
        if "surprisal" in r:
            n = lp.shape[0]
            ids_ = case["ids"]
            d["surprisal"] = _maxdiff(-lp[np.arange(n - 1), ids_[1:]], r["surprisal"])
        if case.get("mask_positions"):
            mi, ml = ref_lm.topk(lp[case["mask_positions"]], r["mask_topk"]["k"])
            d["mask_logprobs"] = _maxdiff(ml, r["mask_topk"]["logprobs"])
            same &= [int(x[0]) for x in mi] == [x[0] for x in r["mask_topk"]["ids"]]
        d["kl"] = abs(kl - r["kl_mean"])
    elif "last_hidden_state" in r:
        d["last_hidden_state"] = _maxdiff(last, r["last_hidden_state"])
        d["change_norm_rel"] = abs(kl - r["last_hidden_state_change_norm"]) / max(r["last_hidden_state_change_norm"], 1e-12)
    else:
        same = False  # a head on one side only
    nl = r["attentions_next_layer"]
    if nl is not None and nl["layer"] < len(attn):
        d["attentions_next_layer"] = _next_layer_diff(attn, nl, r)
    return d, same


def _good(d, same):
    tol = {"attentions_next_layer": TOL_ATT, "last_hidden_state": TOL_LP, "change_norm_rel": TOL_KL, "kl": TOL_KL}
    return same and all(v <= tol.get(k, TOL_LP) for k, v in d.items())


def _fmt(d):
    return ", ".join("%s %.2g" % kv for kv in d.items())


def case_cmd(case_path, run_i, mode, dump_path, clean_path):
    case, dump, clean = (json.load(open(p)) for p in (case_path, dump_path, clean_path))
    name = os.path.basename(case_path)
    r = case["ablation"]["runs"][run_i]
    heads, rr = r["heads"], r[mode]
    if dump["ids"] != case["ids"] or dump.get("ablated") != sorted(heads) or dump.get("ablate_mode") != mode:
        print("%s run %d %s: FAIL: the dump is not of this run (ids, ablated %s, mode %s)"
              % (name, run_i, mode, dump.get("ablated"), dump.get("ablate_mode")))
        return False
    A, C = np.array(dump["attentions"], dtype=np.float64), np.array(clean["attentions"], dtype=np.float64)
    d, same = {}, True
    if "logits_topk" in rr:
        if "topk" not in dump:
            print("%s run %d %s: FAIL: the case has a head, the dump no topk" % (name, run_i, mode))
            return False
        ref = rr["logits_topk"]
        ours = [row["logprobs"][:ref["k"]] for row in dump["topk"]]
        d["logprobs"] = _maxdiff(ours, ref["logprobs"])
        same &= all(ref_lm._ids_agree(dump["topk"][i]["ids"], ref["ids"][i], ref["logprobs"][i])
                    for i in range(len(ref["ids"])))
        d["logsumexp"] = _maxdiff(dump["logsumexp"], rr["logsumexp"])
        if "surprisal" in rr:
            d["surprisal"] = _maxdiff(dump["surprisal"], rr["surprisal"])
        for j, p in enumerate(case.get("mask_positions") or []):
            mk = rr["mask_topk"]
            d["mask_logprobs"] = max(d.get("mask_logprobs", 0.0), _maxdiff(dump["topk"][p]["logprobs"], mk["logprobs"][j]))
            same &= ref_lm._ids_agree(dump["topk"][p]["ids"], mk["ids"][j], mk["logprobs"][j])
        d["kl"] = abs(dump["ablation"]["effect"] - rr["kl_mean"])
    else:
        d["last_hidden_state"] = _maxdiff(dump["last_hidden_state"], rr["last_hidden_state"])
        ref_norm = rr["last_hidden_state_change_norm"]
        d["change_norm_rel"] = abs(dump["ablation"]["effect"] - ref_norm) / max(ref_norm, 1e-12)
    nl = rr["attentions_next_layer"]  # None when the last layer is ablated
    if nl is not None and nl["layer"] < len(A):
        d["attentions_next_layer"] = _next_layer_diff(A, nl, rr)
    # the per-layer largest change of the attentions; a head transformers shows as zeros (head_mask) is kept
    # as computed by attnscope: its layer's figure then says nothing, and its own pattern must be the clean one
    shown = {tuple(x) for x in rr["heads_shown_as_zero_in_attentions"]}
    first = min(l for l, _ in heads)
    for l in range(A.shape[0]):
        if l < first and not np.array_equal(A[l], C[l]):
            same = False
            print("%s run %d %s: layer %d below the ablated heads changed" % (name, run_i, mode, l))
        if any(s[0] == l for s in shown):  # (above the first ablated layer its input changed: not comparable)
            if l == first and not all(np.array_equal(A[s[0], s[1]], C[s[0], s[1]]) for s in shown if s[0] == l):
                same = False
                print("%s run %d %s: the ablated head's own pattern changed" % (name, run_i, mode))
            continue
        d["max_change_L%d" % l] = abs(float(np.abs(A[l] - C[l]).max()) - rr["max_abs_attention_change_per_layer"][l])
    good = _good({k: v for k, v in d.items() if not k.startswith("max_change")}, same) and \
        all(v <= TOL_ATT for k, v in d.items() if k.startswith("max_change"))
    print("%s run %d %s %s: max |diff| %s%s" % (name, run_i, mode, heads, _fmt(d), "" if good else "  FAIL"))
    return good


def effect_cmd(case_path, dump_path):
    case, dump = json.load(open(case_path)), json.load(open(dump_path))
    ref, ours = np.array(case["ablation"]["zero_ablation_effect"]), np.array(dump["ablation_effect"], dtype=np.float64)
    if ours.shape != ref.shape or dump.get("ablation_effect_mode") != "zero":
        print("%s: FAIL: ablation_effect %s (%s), the case's %s" % (os.path.basename(case_path), ours.shape,
                                                                  dump.get("ablation_effect_mode"), ref.shape))
        return False
    norm = not case["has_lm_head"]
    diff = np.abs(ours - ref) / (np.maximum(np.abs(ref), 1e-12) if norm else 1.0)
    good = float(diff.max()) <= TOL_KL
    print("%s: ablation_effect [%d][%d] (%s) max %s diff %.2g%s" % (
        os.path.basename(case_path), ref.shape[0], ref.shape[1], "hidden-state change norm" if norm else "KL",
        "relative" if norm else "|", diff.max(), "" if good else "  FAIL"))
    return good


def verify(cases_dir, models_dir, repo_models, mistake=None, only=None):
    ok, worst = True, {}
    for name in sorted(os.listdir(cases_dir)):
        if not name.endswith(".json") or (only and not name.startswith(only)):
            continue
        case = json.load(open(os.path.join(cases_dir, name)))
        md = case["model_dir"]
        mdir = os.path.join(repo_models, md) if "/" not in md else os.path.join(models_dir, os.path.basename(md))
        sha = hashlib.sha256(open(os.path.join(mdir, "model.safetensors"), "rb").read()).hexdigest()
        if sha != case["model_file_sha256"]:
            print("%s: SKIPPED: not the file the case was computed from" % name)
            continue
        model = _model(mdir)
        ids, tt = case["ids"], case.get("token_type_ids")
        clean = model[2](ids, tt, None)
        ok_case = True
        for i, r in enumerate(case["ablation"]["runs"]):
            for mode in ("zero", "mean"):
                out, ab = ablated(model, ids, tt, r["heads"], mode, mistake, clean)
                pl = _logprobs(model[0], model[1], out["last_hidden_state"])
                lp, lse = (pl[0], pl[1]) if pl is not None else (None, None)
                d, same = _against_case(case, r[mode], lp, lse, out["last_hidden_state"], out["attentions"],
                                        effect(model, clean, out))
                if mode == "mean" and mistake is None:
                    d["mean_vectors"] = _maxdiff([ab[tuple(h)] for h in r["heads"]], r["mean"]["mean_vectors"])
                good = _good(d, same)
                ok_case &= good
                for k, v in d.items():
                    worst[k] = max(worst.get(k, 0.0), v)
                if not good or mistake:
                    print("%s run %d %s %s: %s%s" % (name, i, mode, r["heads"], _fmt(d), "" if good else "  FAIL"))
        if mistake is None:  # every head zero-ablated alone
            L, H = len(case["ablation"]["zero_ablation_effect"]), len(case["ablation"]["zero_ablation_effect"][0])
            eff = np.array([[effect(model, clean, ablated(model, ids, tt, [[l, h]], "zero", None, clean)[0])
                             for h in range(H)] for l in range(L)])
            ref = np.array(case["ablation"]["zero_ablation_effect"])
            e = float((np.abs(eff - ref) / (np.maximum(ref, 1e-12) if not case["has_lm_head"] else 1.0)).max())
            worst["zero_ablation_effect"] = max(worst.get("zero_ablation_effect", 0.0), e)
            ok_case &= e <= TOL_KL
            print("%s: 4 runs x zero/mean %s, zero_ablation_effect [%d][%d] max diff %.2g" % (
                name, "agree" if ok_case else "DISAGREE", L, H, e))
        ok &= ok_case
    print("worst: " + _fmt(worst))
    return ok


def compare(model_dir, dump_path):
    dump = json.load(open(dump_path))
    model = _model(model_dir)
    ids, tt = dump["ids"], dump.get("token_type_ids")
    clean = model[2](ids, tt, None)
    d, same = {}, True
    if "ablated" in dump:
        out, _ = ablated(model, ids, tt, dump["ablated"], dump["ablate_mode"], None, clean)
        pl = _logprobs(model[0], model[1], out["last_hidden_state"])
        d["attentions"] = _maxdiff(dump["attentions"], out["attentions"])
        d["last_hidden_state"] = _maxdiff(dump["last_hidden_state"], out["last_hidden_state"])
        e = effect(model, clean, out)
        d["effect"] = abs(dump["ablation"]["effect"] - e) / (1.0 if pl is not None else max(e, 1e-12))
        if pl is not None:
            lp, lse = pl
            at = np.take_along_axis(lp, np.array([r["ids"] for r in dump["topk"]]), axis=-1)
            d["logprobs_of_its_ids"] = _maxdiff([r["logprobs"] for r in dump["topk"]], at)
            d["logsumexp"] = _maxdiff(dump["logsumexp"], lse)
            same &= all(dump["topk"][i]["ids"][0] == int(np.argmax(lp[i])) for i in range(len(ids)))
            if "surprisal" in dump:
                d["surprisal"] = _maxdiff(dump["surprisal"], -lp[np.arange(len(ids) - 1), ids[1:]])
    if "ablation_effect" in dump:
        L, H = len(dump["ablation_effect"]), len(dump["ablation_effect"][0])
        eff = np.array([[effect(model, clean, ablated(model, ids, tt, [[l, h]], dump["ablation_effect_mode"], None,
                                                      clean)[0]) for h in range(H)] for l in range(L)])
        ours = np.array(dump["ablation_effect"], dtype=np.float64)
        d["ablation_effect"] = float((np.abs(ours - eff) / np.maximum(np.abs(eff), 1.0)).max())
    tol = {"attentions": TOL_ATT}
    good = same and all(v <= tol.get(k, TOL_LP) for k, v in d.items())
    print("%s %s %s: max |diff| %s%s" % (os.path.basename(model_dir.rstrip("/")), dump.get("ablated"),
                                         dump.get("ablate_mode"), _fmt(d), "" if good else "  FAIL"))
    return good


def main(argv):
    if len(argv) == 6 and argv[0] == "case":
        return 0 if case_cmd(argv[1], int(argv[2]), argv[3], argv[4], argv[5]) else 1
    if len(argv) == 3 and argv[0] == "effect":
        return 0 if effect_cmd(argv[1], argv[2]) else 1
    if len(argv) >= 4 and argv[0] == "verify":
        mistake = argv[4] if len(argv) > 4 and argv[4] != "-" else None
        return 0 if verify(argv[1], argv[2], argv[3], mistake, argv[5] if len(argv) > 5 else None) else 1
    if len(argv) == 3 and argv[0] == "compare":
        return 0 if compare(argv[1], argv[2]) else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
