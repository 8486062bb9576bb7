#!/usr/bin/python3
"""ref_analysis.py -- independent numpy reference of attnscope's analyses (src/analysis/pca.c, stats.c,
headscore.c, rollout.c), computed from the fixture cases' reference outputs.

For each case tests/data/cases/<model>--<case>.json (attentions, q, k, tokens and ids from the
reference forward pass) it writes tests/data/analysis/<model>--<case>.json with what the C
analyses must give on the same text. tests/check_analysis.c runs the C model on the case's text
and compares. Written from the definitions in the headers, with numpy's own tools where the C
code uses LAPACK (SVD instead of an eigensolver for PCA; a dense grid instead of a golden-section
search for the AttentionViz scale).

Usage (from the source tree root; Debian's python has numpy):
    /usr/bin/python3 tests/tools/ref_analysis.py [CASE ...]     default: the cases in CASES below
"""

import json
import os
import sys
import unicodedata

import numpy as np

CASES = [
    "bert-mini--pair",          # [CLS] a [SEP] b [SEP], 2 heads of 4
    "bert-mini--long",          # 62 tokens, repeated words, punctuation
    "bert-mini-sharded--pair",  # 4 heads of 2
    "gpt2-mini--book",          # causal, punctuation
    "gpt2-mini--long",          # causal, 61 tokens with repeats (duplicate/induction scores)
    "gpt2-mini-bf16--unicode",  # causal, 4 heads of 2, non-ASCII byte-level tokens
]

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCORES = ["prev", "next", "self", "first", "sep", "punct", "entropy", "distance", "dup", "induction"]
WEIGHT_LABELS = [("prev", "previous"), ("next", "next"), ("self", "self"), ("first", "first"),
                 ("sep", "[SEP]"), ("punct", "punctuation"), ("dup", "duplicate"),
                 ("induction", "induction")]
HIST_BINS = 20


def num(x):
    """A float for JSON: NaN becomes null."""
    x = float(x)
    return None if np.isnan(x) else x


def special_flags(case):
    """BERT's added special tokens are [CLS] and [SEP] (the vocabulary's strings); GPT-2 adds none."""
    if case["family"] == "bert":
        return [tok in ("[CLS]", "[SEP]") for tok in case["tokens"]]
    return [False] * len(case["tokens"])


def is_punct(tok, special):
    if special:
        return False
    s = tok[2:] if len(tok) > 2 and tok.startswith("##") else tok
    if s.startswith("\u0120"):
        s = s[1:]
    return len(s) > 0 and all(unicodedata.category(ch).startswith("P") for ch in s)


# --- PCA ------------------------------------------------------------------------------------------

def pca2(x):
    """Centred PCA by SVD: (projections [n][2], explained [2]), sign: largest |axis entry| positive."""
    x = np.asarray(x, dtype=np.float64)
    c = x - x.mean(axis=0)
    _, s, vt = np.linalg.svd(c, full_matrices=False)
    total = float((s ** 2).sum())
    axes = np.zeros((2, x.shape[1]))
    expl = [0.0, 0.0]
    for k in range(min(2, vt.shape[0])):
        a = vt[k].copy()
        if a[np.argmax(np.abs(a))] < 0:
            a = -a
        axes[k] = a
        expl[k] = float(s[k] ** 2 / total) if total > 0 else 0.0
    return c @ axes.T, expl


# --- statistics -----------------------------------------------------------------------------------

def mean_std(v):
    v = np.asarray(v, dtype=np.float64)
    return (float(v.mean()), float(v.std())) if v.size else (0.0, 0.0)


def corr(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if x.size < 2 or x.std() == 0 or y.std() == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def histogram(values):
    v = np.asarray(values, dtype=np.float64)
    lo, hi = (float(v.min()), float(v.max())) if v.size else (0.0, 1.0)
    if hi <= lo:
        hi = lo + 1.0
    counts, _ = np.histogram(v, bins=HIST_BINS, range=(lo, hi))
    return {"lo": lo, "hi": hi, "counts": [int(c) for c in counts]}


def dots(q, k, layer, query, visible_only):
    H = q.shape[1]
    keys = range(query + 1) if visible_only else range(q.shape[2])
    same, diff = [], []
    for h in range(H):
        for g in range(H):
            vals = [float(q[layer, h, query] @ k[layer, g, j]) for j in keys]
            (same if g == h else diff).extend(vals)
    return same, diff


def groups(attn, layer):
    a = attn[layer]
    n = a.shape[-1]
    final_prev = [float(a[h, n - 1, j]) for h in range(a.shape[0]) for j in range(n - 1)]
    other_self = [float(a[h, i, i]) for h in range(a.shape[0]) for i in range(1, n - 1)]
    first_self = [float(a[h, 0, 0]) for h in range(a.shape[0])]
    return [final_prev, other_self, first_self]


def qknorm(q, k, a, causal):
    """The AttentionViz normalisation of one head (see stats.h)."""
    n = q.shape[0]
    pairs = [(i, j) for i in range(n) for j in range(i + 1 if causal else n)]
    I = np.array([p[0] for p in pairs])
    J = np.array([p[1] for p in pairs])
    argmax = a.argmax(axis=1)  # first maximum on ties, like the C code

    def measures(qq, kk):
        dot = np.einsum("pd,pd->p", qq[I], kk[J])
        dist = np.linalg.norm(qq[I] - kk[J], axis=1)
        am = float(np.linalg.norm(qq - kk[argmax], axis=1).mean())
        return corr(dot, dist), am, float(dist.mean())

    k_t = k - k.mean(axis=0) + q.mean(axis=0)
    qn = float(np.linalg.norm(q, axis=1).mean())
    kn = float(np.linalg.norm(k_t, axis=1).mean())
    c = float(np.sqrt(kn / qn))
    before = measures(q, k)
    after = measures(c * q, k_t / c)
    # The scale that makes distance track dot product best: a dense grid over log c.
    dot_t = np.einsum("pd,pd->p", q[I], k_t[J])
    qq = np.einsum("pd,pd->p", q[I], q[I])
    kk = np.einsum("pd,pd->p", k_t[J], k_t[J])
    best = (np.inf, None)
    dz = dot_t - dot_t.mean()
    if dz.std() > 0:
        us = np.linspace(-6, 6, 24001)
        for chunk in np.array_split(us, 24):
            c2 = np.exp(2 * chunk)[:, None]
            dist = np.sqrt(np.maximum(c2 * qq[None, :] + kk[None, :] / c2 - 2 * dot_t[None, :], 0))
            dc = dist - dist.mean(axis=1, keepdims=True)
            sd = dist.std(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                r = (dc @ dz) / dz.size / (sd * dz.std())
            r[~(sd > 0)] = np.inf
            i = int(np.argmin(r))
            if r[i] < best[0]:
                best = (float(r[i]), float(np.exp(chunk[i])))
    return {
        "c": c, "corr_before": before[0], "corr_after": after[0],
        "argmax_before": before[1], "argmax_after": after[1],
        "meandist_before": before[2], "meandist_after": after[2],
        "qnorm_before": qn, "knorm_before": float(np.linalg.norm(k, axis=1).mean()),
        "best_corr": best[0], "best_c": best[1],
    }


# --- head scores ----------------------------------------------------------------------------------

def head_scores(a, ids, special, punct, causal):
    n = a.shape[0]
    s = {}
    s["prev"] = float(np.mean([a[i, i - 1] for i in range(1, n)])) if n > 1 else None
    s["next"] = float(np.mean([a[i, i + 1] for i in range(n - 1)])) if n > 1 else None
    s["self"] = float(np.mean(np.diag(a)))
    s["first"] = float(np.mean(a[:, 0]))
    sep_cols = [j for j in range(1, n) if special[j]]
    s["sep"] = float(np.mean(a[:, sep_cols].sum(axis=1))) if sep_cols else None
    p_cols = [j for j in range(n) if punct[j]]
    s["punct"] = float(np.mean(a[:, p_cols].sum(axis=1))) if p_cols else None
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(a > 0, a * np.log(np.where(a > 0, a, 1)), 0.0)
    ent = -plogp.sum(axis=1)
    s["entropy"] = float(ent.mean())
    idx = np.arange(n)
    s["distance"] = float((a * np.abs(idx[:, None] - idx[None, :])).sum(axis=1).mean())
    dup, ind = [], []
    for i in range(n):
        earlier = [j for j in range(i) if ids[j] == ids[i]]
        if earlier:
            dup.append(a[i, earlier].sum())
        targets = [j for j in range(1, i) if ids[j - 1] == ids[i]]
        if targets:
            ind.append(a[i, targets].sum())
    s["dup"] = float(np.mean(dup)) if dup else None
    s["induction"] = float(np.mean(ind)) if ind else None
    visible = np.array([i + 1 if causal else n for i in range(n)])
    rows = visible > 1
    ent_norm = float((ent[rows] / np.log(visible[rows])).mean()) if rows.any() else 0.0
    label, best = "", 0.5
    for key, name in WEIGHT_LABELS:
        v = s[key]
        if v is not None and v >= best:
            best, label = v, name
            if key == "first" and special[0]:
                label = "[CLS]"
    if not label and ent_norm >= 0.75:
        label = "broad"
    return {"scores": [s[k] for k in SCORES], "entropy_norm": ent_norm, "label": label}


def vectors(attn, layer, head, hide, unit, special):
    """Attention rows as vectors (attnvec.h): kept tokens, PCA and two projections."""
    n = attn.shape[-1]
    rows = attn[layer].mean(axis=0) if head < 0 else attn[layer, head]
    keep = [i for i in range(n) if not (hide and special[i])]
    r = rows[np.ix_(keep, keep)]
    if hide:
        sums = r.sum(axis=1, keepdims=True)
        r = np.where(sums > 0, r / np.where(sums > 0, sums, 1), r)
    if unit:
        norms = np.linalg.norm(r, axis=1, keepdims=True)
        r = np.where(norms > 0, r / np.where(norms > 0, norms, 1), r)
    xy, expl = pca2(r)
    m = len(keep)
    projections = []
    for ia, ib in [(m - 1, 0), (m // 2, 1 % m)]:  # the first: what the vectors view shows by default
        a, b = r[ia], r[ib]
        ab, aa, bb = float(a @ b), float(a @ a), float(b @ b)
        along = ab / np.sqrt(bb)
        projections.append({
            "a": keep[ia], "b": keep[ib], "coef": ab / bb, "cos": ab / np.sqrt(aa * bb),
            "plane_a": [along, float(np.sqrt(max(aa - along * along, 0)))], "plane_b": [float(np.sqrt(bb)), 0.0],
        })
    return {"layer": layer, "head": head, "hide_special": hide, "unit": unit, "tokens": keep,
            "xy": xy.tolist(), "explained": expl, "projections": projections}


def rollout(attn):
    L, H, n, _ = attn.shape
    out, r = [], None
    for l in range(L):
        a = 0.5 * attn[l].mean(axis=0) + 0.5 * np.eye(n)
        a = a / a.sum(axis=1, keepdims=True)
        r = a if r is None else a @ r
        out.append(r.tolist())
    return out


def load_case(name):
    """The case tests/data/cases/NAME.json with its attentions [L][H][n][n], q and k [L][H][n][d]."""
    with open(os.path.join(ROOT, "tests", "data", "cases", name + ".json")) as f:
        case = json.load(f)
    return case, *(np.array(case[key], dtype=np.float64) for key in ("attentions", "q", "k"))


def analyse(name):
    case, attn, q, k = load_case(name)
    L, H, n, d = q.shape
    causal = case["family"] == "gpt2"
    special = special_flags(case)
    punct = [is_punct(t, s) for t, s in zip(case["tokens"], special)]
    ids = case["ids"]
    out = {
        "case": name, "text": case["text"], "text_b": case.get("text_b"), "model_dir": case["model_dir"],
        "tokens": case["tokens"], "special": special, "punct": punct, "causal": causal,
        "n_layers": L, "n_heads": H, "head_dim": d, "n": n, "hist_bins": HIST_BINS,
    }
    out["qk_desc"] = [[{
        "q": mean_std(q[l, h]), "k": mean_std(k[l, h]),
        "q_skip": mean_std(q[l, h, 1:]), "k_skip": mean_std(k[l, h, 1:]),
    } for h in range(H)] for l in range(L)]
    # Joint PCA of a head's queries and keys (queries first), and its normalised counterpart.
    out["qk_pca"] = []
    out["qknorm"] = []
    for l in range(L):
        row_pca, row_norm = [], []
        for h in range(H):
            proj, expl = pca2(np.vstack([q[l, h], k[l, h]]))
            row_pca.append({"xy": proj.tolist(), "explained": expl})
            row_norm.append(qknorm(q[l, h], k[l, h], attn[l, h], causal))
        out["qk_pca"].append(row_pca)
        out["qknorm"].append(row_norm)
    # PCA of the attention rows (mean over the layer's heads).
    out["attn_pca"] = []
    for l in range(L):
        proj, expl = pca2(attn[l].mean(axis=0))
        out["attn_pca"].append({"xy": proj.tolist(), "explained": expl})
    # Dot products of the last token's query, for every layer.
    out["dots"] = []
    for l in range(L):
        same, diff = dots(q, k, l, n - 1, causal)
        out["dots"].append({
            "query": n - 1, "visible_only": causal,
            "same": sorted(same), "diff": sorted(diff),
            "same_mean_std": mean_std(same), "diff_mean_std": mean_std(diff),
            "same_hist": histogram(same), "diff_hist": histogram(diff),
        })
    out["groups"] = []
    for l in range(L):
        gs = groups(attn, l)
        out["groups"].append([{"values": g, "mean_std": mean_std(g), "hist": histogram(g)} for g in gs])
    out["heads"] = [[head_scores(attn[l, h], ids, special, punct, causal) for h in range(H)] for l in range(L)]
    out["rollout"] = rollout(attn)
    out["vectors"] = [vectors(attn, l, head, hide, unit, special)
                      for l in range(L) for (head, hide, unit) in [(-1, False, False), (H - 1, True, True)]]
    return out


def write_fixtures(subdir, names, analyse, describe):
    """Write analyse(name) to tests/data/SUBDIR/<name>.json for each name; print describe(result)."""
    outdir = os.path.join(ROOT, "tests", "data", subdir)
    os.makedirs(outdir, exist_ok=True)
    for name in names:
        res = analyse(name)
        path = os.path.join(outdir, name + ".json")
        with open(path, "w") as f:
            json.dump(res, f, separators=(",", ":"), default=num)
            f.write("\n")
        print(f"{name}: {describe(res)}, wrote {os.path.relpath(path, ROOT)}")


def main(argv):
    write_fixtures("analysis", argv[1:] or CASES, analyse,
                   lambda res: f"{res['n']} tokens, labels {sorted({h['label'] for row in res['heads'] for h in row})}")


if __name__ == "__main__":
    main(sys.argv)
