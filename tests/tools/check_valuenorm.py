#!/usr/bin/python3
"""check_valuenorm.py -- value-weighted attention (Kobayashi et al. 2020) against the shared cases-lm.

Definition (the shared reference README, "cases-lm/"): value_vector_norms[l][h][j] = ‖f_h(x_j)‖ with
f_h(x_j) = (x_j W_V,h + b_V,h) W_O,h, the value of token j for head h (GQA: kv head h // (H / KV)) times
the d rows of the output projection that head h's context feeds (GPT-2 c_proj.weight[h·d:(h+1)·d, :],
Linear layers weight[:, h·d:(h+1)·d]ᵀ), output bias excluded; value_norms[l][h][i][j] = α_ij · that.

    check_valuenorm.py dump CASE DUMP
        compare `attnscope --dump json --weights norm` (DUMP) with the case: ids, value_vector_norms
        (relative 1e-5) and attentions = value_norms, each within 1e-5 · ‖f_h(x_j)‖ of its key: the
        error of α (the project's attention tolerance, 1e-5 absolute) carried by the norm it scales;
        a weight of 1e-7 has no relative bound (demo-gpt2's reach 5e-5 relative to their row's largest)
    check_valuenorm.py ref CASE MODEL_DIR [MISTAKE]
        the independent numpy reference (this file, from the definition, on ref_forward.py /
        ref_decoder.py's forward passes in float64) against the case. MISTAKE: out_bias (the
        output bias added to f), next_head_rows (head h read through head h+1's rows of W_O) or
        kv_modulo (GQA: kv head h % KV instead of h // (H / KV));
        then the check must FAIL, and the size of the miss is printed.
    check_valuenorm.py samealpha CASE DUMP
        whether the dump's α (its weights divided by value_vector_norms) is the case's within 1e-5:
        a model file rewritten since the case (demo-bert gained an output head) still ran the same
        encoder, so the case applies; exit 1 when not
    check_valuenorm.py family DUMP MODEL_DIR
        the numpy reference against a dump of any model it runs (the families without a case:
        latent attention's narrower v, gpt-oss's sinks, fused and per-head q/k/v layouts)
Exit 0 when within tolerance, 1 otherwise."""

import json
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

REL = 1e-5


def worst_rel(got, want, scale=None):
    """Largest |got - want| / SCALE (default |want|, elementwise; broadcast)."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return float("inf")
    scale = np.abs(want) if scale is None else np.asarray(scale, dtype=np.float64)
    return float((np.abs(got - want) / np.maximum(scale, 1e-30)).max())


def per_key(case):
    """‖f_h(x_j)‖ broadcast over queries: [L][H][1][n], the scale of a weight's error."""
    return np.asarray(case["value_vector_norms"], dtype=np.float64)[:, :, None, :]


def cmd_dump(case_path, dump_path):
    case, dump = json.load(open(case_path)), json.load(open(dump_path))
    name = os.path.basename(case_path)
    if dump.get("ids") != case["ids"]:
        print("FAIL %s: ids differ: %s vs %s" % (name, dump.get("ids"), case["ids"]))
        return 1
    if dump.get("weights") != "norm":
        print("FAIL %s: the dump does not say \"weights\": \"norm\"" % name)
        return 1
    f = worst_rel(dump["value_vector_norms"], case["value_vector_norms"])
    w = worst_rel(dump["attentions"], case["value_norms"], per_key(case))
    ok = f <= REL and w <= REL
    print("%s %s: value_vector_norms max rel %.2e, value_norms max err/‖f‖ %.2e (tolerance %g)"
          % ("ok" if ok else "FAIL", name, f, w, REL))
    return 0 if ok else 1


# The output projection of layer l: (name, Conv1D) by family; the rest are found by _out_name's pattern.
OUT_PROJ = {
    "bert": ("encoder.layer.%d.attention.output.dense", False),
    "roberta": ("encoder.layer.%d.attention.output.dense", False),
    "xlm-roberta": ("encoder.layer.%d.attention.output.dense", False),
    "electra": ("encoder.layer.%d.attention.output.dense", False),
    "deberta-v2": ("encoder.layer.%d.attention.output.dense", False),
    "distilbert": ("transformer.layer.%d.attention.out_lin", False),
    "modernbert": ("layers.%d.attn.Wo", False),
    "gpt2": ("h.%d.attn.c_proj", True),
}


def _out_name(W, family, l, cfg):
    if family == "albert":  # one layer's weights shared by the layers of a group
        groups, L = cfg.get("num_hidden_groups", 1), cfg["num_hidden_layers"]
        return "encoder.albert_layer_groups.%d.albert_layers.0.attention.dense" % (l // (L // groups)), False
    if family in OUT_PROJ:
        name, conv = OUT_PROJ[family]
        return name % l, conv
    # the decoders' output projections, as ref_decoder names them: Linear [hidden][H·d]
    pat = re.compile(r"(^|\.)(layers|h)\.%d\.(self_attn\.o_proj|self_attention\.dense|attention\.dense|"
                     r"self_attn\.dense|attn\.out_proj)\.weight$" % l)
    key = [k for k in W if pat.search(k)]
    if len(key) != 1:
        raise SystemExit("no single output projection of layer %d in the %s checkpoint" % (l, family))
    return key[0][:-len(".weight")], False


def _out_rows(W, l, family, cfg, H, d, hidden):
    """Head h's rows of layer L's output projection as [H][d][hidden], and its bias [hidden] (or 0)."""
    name, conv = _out_name(W, family, l, cfg)
    w = np.asarray(W[name + ".weight"], dtype=np.float64)
    b = np.asarray(W[name + ".bias"], dtype=np.float64) if name + ".bias" in W else np.zeros(hidden)
    # Conv1D [in][out]: weight[h·d:(h+1)·d, :]; Linear [out][in]: weight[:, h·d:(h+1)·d]ᵀ
    return (w if conv else w.T).reshape(H, d, hidden), b


def reference(model_dir, ids, type_ids, mistake=None):
    """(value_vector_norms [L][H][n], value_norms [L][H][n][n]) in float64 from the definition."""
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    if cfg.get("model_type") in ("roberta", "xlm-roberta", "distilbert", "electra", "albert", "deberta-v2",
                                 "modernbert"):
        import ref_encoder as re_
        model = re_.load_model(model_dir)
        out = re_.forward(model, ids, type_ids)
        family, W, kv = model["family"], model["w"], model["n_heads"]
    elif cfg.get("model_type") in ("bert", "gpt2"):
        import ref_forward as rf
        model = rf.load_model(model_dir)
        out = rf.forward(model, ids, type_ids)
        family, W, kv = model["family"], model["w"], model["n_heads"]
    else:
        import ref_decoder as rd
        model = rd.load_model(model_dir)
        out = rd.forward(model, ids)
        family, W, kv = model["family"], model["w"], model["kv_heads"]
    attn, v = out["attentions"], out["v"]  # [L][H][n][n], [L][KV][n][dv] (with the value bias)
    H, d, hidden = model["n_heads"], v.shape[-1], model["hidden"]  # latent attention: v is narrower
    L, n = attn.shape[0], attn.shape[-1]
    f = np.zeros((L, H, n))
    for l in range(L):
        rows, bias = _out_rows(W, l, family, cfg, H, d, hidden)
        for h in range(H):
            r = rows[(h + 1) % H] if mistake == "next_head_rows" else rows[h]
            g = h % kv if mistake == "kv_modulo" else h // (H // kv)
            y = v[l][g] @ r
            if mistake == "out_bias":
                y = y + bias
            f[l, h] = np.linalg.norm(y, axis=-1)
    return f, attn * f[:, :, None, :]


def cmd_ref(case_path, model_dir, mistake=None):
    case = json.load(open(case_path))
    name = os.path.basename(case_path)
    f, w = reference(model_dir, case["ids"], case.get("token_type_ids"), mistake)
    ef = worst_rel(f, case["value_vector_norms"])
    ew = worst_rel(w, case["value_norms"], per_key(case))
    ok = ef <= REL and ew <= REL
    print("%s %s reference%s: value_vector_norms max rel %.2e, value_norms max err/‖f‖ %.2e"
          % ("ok" if ok else "FAIL", name, " with mistake " + mistake if mistake else "", ef, ew))
    return 0 if ok else 1


def cmd_samealpha(case_path, dump_path):
    case, dump = json.load(open(case_path)), json.load(open(dump_path))
    w, f = np.asarray(dump["attentions"], dtype=np.float64), per_key(dump)
    alpha = np.divide(w, f, out=np.zeros_like(w), where=f > 0)
    want = np.asarray(case["attentions"], dtype=np.float64)
    d = float(np.abs(alpha - want).max()) if alpha.shape == want.shape else float("inf")
    print("the dump's α is %sthe case's: max |difference| %.2e" % ("" if d <= 1e-5 else "not ", d))
    return 0 if d <= 1e-5 else 1


def cmd_family(dump_path, model_dir):
    dump = json.load(open(dump_path))
    f, w = reference(model_dir, dump["ids"], dump.get("token_type_ids"))
    want = {"value_vector_norms": f.tolist(), "value_norms": w.tolist()}
    ef = worst_rel(dump["value_vector_norms"], f)
    ew = worst_rel(dump["attentions"], w, per_key(want))
    ok = ef <= REL and ew <= REL
    print("%s %s: value_vector_norms max rel %.2e, value_norms max err/‖f‖ %.2e"
          % ("ok" if ok else "FAIL", os.path.basename(model_dir.rstrip("/")), ef, ew))
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "samealpha":
        sys.exit(cmd_samealpha(sys.argv[2], sys.argv[3]))
    if len(sys.argv) == 4 and sys.argv[1] == "family":
        sys.exit(cmd_family(sys.argv[2], sys.argv[3]))
    a = sys.argv[1:]
    if len(a) == 3 and a[0] == "dump":
        sys.exit(cmd_dump(a[1], a[2]))
    if len(a) in (3, 4) and a[0] == "ref":
        sys.exit(cmd_ref(a[1], a[2], a[3] if len(a) == 4 else None))
    sys.exit(__doc__)
