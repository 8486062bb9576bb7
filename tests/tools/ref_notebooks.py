#!/usr/bin/python3
"""ref_notebooks.py -- the reference notebooks' own formulas (shared/seeds 000 and 004), cell by
cell, over the fixture cases, for the analysis views' defaults.

For each case tests/data/cases/<model>--<case>.json (attentions, q, k from the reference forward
pass) it writes tests/data/notebooks/<model>--<case>.json with what the notebooks compute on the
same text; tests/check_analysis.c (the C functions) and tests/check_views.c (the printed views)
compare with it. Where attnscope generalises a cell (any layer, any model), the generalisation is
said next to the cell; everything else is the notebook's code with torch replaced by numpy:

  004 "Means and standard deviations of different heads over tokens": q[1:].mean(), q[1:].std()
      (torch's std(): Bessel's correction, ddof=1), for every layer (the notebook picks layer 6).
  004 "Attention scores over tokens": Q_h[qi][-1,:] @ K_h[ki][1:-1,:].t() for every pair of heads,
      same head vs different heads; n, np.mean, np.std of each (numpy arrays: ddof=0); and the
      Gaussian KDE the views draw over the histograms, on a grid over both samples' range.
  004 "Softmax-transformed attention values": the scores (Q_h @ K_h.t()) / sqrtD, the causal mask
      (tril; none for a bidirectional model, where the notebook's mask would not apply), softmax
      (sqrtD also times layer + 1 for a model with scale_attn_by_inverse_layer_idx, as
      gpt2-mini-bf16 has, so that the weights are the model's; GPT-2 itself has not);
      attn_sm[-1,:-1], diag(attn_sm[1:,1:]), attn_sm[0,0] pooled over the heads; n, mean, std;
      and stats.gaussian_kde(sample)(smx) / max on smx = np.linspace(0, 1, 300), as the notebook
      draws it (null where scipy cannot: fewer than 2 values or no variance).
  004 "Kernel density estimator" demo data, with the default (Scott) bandwidth.
  000 "to_xy_coords": the layer's attentions with [CLS]/[SEP] rows and columns dropped without
      renormalising (attn[:, 1:-1, 1:-1]; attnscope drops every special token, which for a single
      sentence is the same -- checked below), mean over the heads, PCA(n_components=2)
      .fit_transform, xy /= np.linalg.norm(xy). PCA as scikit-learn's full SVD solver computes it
      (U·S of the centred rows), the sign of each axis chosen so that its largest component is
      positive (scikit-learn's svd_flip on the components; attnscope's convention, src/analysis/pca.h).
  000 "Vector Projection": vector_projection(it, book) of unit 2-D points, it = the last kept
      token, book = the first (the notebook's "it" and "book" are tokens 9 and 3 of its sentence).

Usage (from the source tree root; Debian's python3 with python3-numpy and python3-scipy):
    /usr/bin/python3 tests/tools/ref_notebooks.py [CASE ...]    default: the cases below
"""

import json
import os
import sys

import numpy as np
from scipy import stats

from ref_analysis import ROOT, load_case, write_fixtures

CASES = ["bert-mini--pair", "bert-mini--long", "bert-mini-sharded--pair", "gpt2-mini--book", "gpt2-mini--long",
         "gpt2-mini-bf16--unicode"]
DOTS_GRID = 200  # points of the products' KDE grid (the views evaluate on their own plotted grid)


def kde(sample, grid):
    """The notebook's y = stats.gaussian_kde(sample)(grid); y / y.max(). None when scipy refuses
    (fewer than 2 values, or all equal: a singular covariance; for equal values whose variance
    rounds to 1e-34 instead of 0 scipy returns zeros, which is no density either)."""
    sample = np.asarray(sample, dtype=np.float64)
    if sample.size < 2 or np.ptp(sample) == 0:
        return None
    k = stats.gaussian_kde(sample)
    y = k(grid)
    return {"bandwidth": float(np.sqrt(k.covariance[0, 0])), "y": (y / y.max()).tolist()}


def summary(sample):
    v = np.asarray(sample, dtype=np.float64)
    return {"n": int(v.size), "mean": float(v.mean()) if v.size else 0.0, "std": float(v.std()) if v.size else 0.0}


def pca_fit_transform(x):
    """sklearn.decomposition.PCA(n_components=2).fit_transform(x), full SVD solver."""
    c = x - x.mean(axis=0)
    u, s, vt = np.linalg.svd(c, full_matrices=False)
    for k in range(vt.shape[0]):
        if vt[k, np.argmax(np.abs(vt[k]))] < 0:
            u[:, k], vt[k] = -u[:, k], -vt[k]
    return (u[:, :2] * s[:2]) if u.shape[1] >= 2 else np.hstack([u * s, np.zeros((x.shape[0], 1))])


def notebook004(q, k, causal, by_layer):
    """Every cell of notebook 004 for every layer. q, k: [L][H][n][d]."""
    L, H, n, d = q.shape
    out = {"qk_stats": [], "dots": [], "softmax": []}
    smx = np.linspace(0, 1, 300)
    for layer in range(L):
        Q_h, K_h = q[layer], k[layer]
        sqrtD = np.sqrt(d) * (layer + 1 if by_layer else 1)
        out["qk_stats"].append([{
            "q_mean": float(Q_h[h][1:].mean()), "q_std": float(Q_h[h][1:].std(ddof=1)),
            "k_mean": float(K_h[h][1:].mean()), "k_std": float(K_h[h][1:].std(ddof=1)),
            "count": int(Q_h[h][1:].size)} for h in range(H)])

        samehead_dp, diffhead_dp = np.array([]), np.array([])
        for qi in range(H):
            for ki in range(H):
                dp = Q_h[qi][-1, :] @ K_h[ki][1:-1, :].T
                if qi == ki:
                    samehead_dp = np.concatenate((samehead_dp, dp))
                else:
                    diffhead_dp = np.concatenate((diffhead_dp, dp))
        both = np.concatenate((samehead_dp, diffhead_dp))
        lo, hi = float(both.min()), float(both.max())
        grid = np.linspace(lo, hi, DOTS_GRID)
        out["dots"].append({"query": n - 1, "keys": [1, n - 2], "same": summary(samehead_dp),
                            "diff": summary(diffhead_dp), "grid": [lo, hi, DOTS_GRID],
                            "same_kde": kde(samehead_dp, grid), "diff_kde": kde(diffhead_dp, grid)})

        final2prev, selfAttend, firstSelf = np.array([]), np.array([]), np.array([])
        for qi in range(H):
            attn_scores = (Q_h[qi] @ K_h[qi].T) / sqrtD
            if causal:
                pastmask = np.tril(np.ones((n, n)))
                attn_scores[pastmask == 0] = -np.inf
            e = np.exp(attn_scores - attn_scores.max(axis=-1, keepdims=True))
            attn_sm = e / e.sum(axis=-1, keepdims=True)
            final_with_prev = attn_sm[-1, :-1]
            matching_toks = np.diag(attn_sm[1:, 1:])
            first_selfTok = attn_sm[0, 0][None]
            final2prev = np.concatenate((final2prev, final_with_prev))
            selfAttend = np.concatenate((selfAttend, matching_toks))
            firstSelf = np.concatenate((firstSelf, first_selfTok))
        out["softmax"].append([{"summary": summary(g), "kde": kde(g, smx)}
                               for g in (final2prev, selfAttend, firstSelf)])
    return out


def notebook000(attn, tokens, special):
    """to_xy_coords(layer) for every layer, specials dropped without renormalising."""
    keep = [i for i in range(len(tokens)) if not special[i]]
    if special[0] and special[-1] and sum(special) == 2:
        assert keep == list(range(1, len(tokens) - 1))  # exactly the notebook's attn[:, 1:-1, 1:-1]
    out = []
    for layer in attn:
        scores = layer[:, keep][:, :, keep]
        scores = np.mean(scores, axis=0)
        xy = pca_fit_transform(scores)
        norm_by = np.linalg.norm(xy)
        xy = xy / norm_by
        # "Vector Projection": xy = to_xy_coords(layer, norm=False), book /= norm, it /= norm,
        # vector_projection(it, book); with it = the last kept token (A, the view's default) and
        # book = the first (B).
        xy_raw = pca_fit_transform(scores)
        book, it = xy_raw[0].copy(), xy_raw[-1].copy()
        book /= np.linalg.norm(book)
        it /= np.linalg.norm(it)
        ab_dot = it @ book
        projection = (ab_dot / np.linalg.norm(book) ** 2) * book
        proj = {"a": keep[-1], "b": keep[0], "coef": float(ab_dot / np.linalg.norm(book) ** 2),
                "unit_a": it.tolist(), "unit_b": book.tolist(), "projection": projection.tolist()}
        out.append({"tokens": keep, "xy": xy.tolist(), "norm": float(norm_by), "projection": proj})
    return out


def analyse(name):
    case, attn, q, k = load_case(name)
    causal = case["family"] == "gpt2"
    special = [t in ("[CLS]", "[SEP]") for t in case["tokens"]] if case["family"] == "bert" else [False] * len(case["tokens"])
    with open(os.path.join(ROOT, case["model_dir"], "config.json")) as f:
        by_layer = json.load(f).get("scale_attn_by_inverse_layer_idx", False)
    nb4 = notebook004(q, k, causal, by_layer)
    # The notebook's softmax from Q and K is the model's attention (a check on the transcription).
    for layer, groups in enumerate(nb4["softmax"]):
        n = attn.shape[-1]
        ref = [attn[layer][:, n - 1, :n - 1].ravel(), np.concatenate([np.diag(a)[1:] for a in attn[layer]])]
        for g, r in zip(groups, ref):
            assert abs(g["summary"]["mean"] - r.mean()) < 1e-5, (name, layer, g["summary"]["mean"] - r.mean())
    demo = [-1.5, .4, .45, .5, 1.4]
    xgrid = np.linspace(-2, 2, 301)
    return {
        "case": name, "text": case["text"], "text_b": case.get("text_b"), "model_dir": case["model_dir"],
        "tokens": case["tokens"], "causal": causal, "n": len(case["tokens"]),
        "kde_demo": {"x": demo, "grid": [-2, 2, 301], **kde(demo, xgrid)},
        "nb004": nb4, "nb000": notebook000(attn, case["tokens"], special),
    }


def main(argv):
    write_fixtures("notebooks", argv[1:] or CASES, analyse, lambda res: f"{res['n']} tokens")


if __name__ == "__main__":
    main(sys.argv)
