#!/usr/bin/python3
"""ref_crossheads.py -- independent numpy reference of the head finder's cross-attention scores
(src/trace/headscore.h, `--print heads --stack cross`).

Reads `attnscope --dump json --target ...` of an encoder-decoder (the source's tokens, ids and special
flags; decoder.labels and decoder.cross_attentions [layer][head][target row][source token]) on stdin and
prints one line per head, layer-major:
    L H first punct entropy diagonal monotonic eos max label
with "-" for a score that is undefined. The definitions, written again here from the man page:
  diagonal   sum of A[i, j] over |j - d_i| <= w, d_i = i (m-1)/(n-1) (0 when n = 1), w = max(1, m // 10)
  monotonic  share of rows i >= 1 whose argmax (first on ties) is >= row i-1's; undefined when n = 1
  eos        A[i, e], e = the source's last special token whose id is among the labels, else its last
             special token; undefined without one
  max        row maximum;  first  A[i, 0];  punct  weight on source punctuation;  entropy  -sum p ln p
each a mean over the target rows. label: the largest of first, punct, diagonal, eos (a later one winning
ties) when >= 0.5, named first/punctuation/diagonal/end token; else "broad" when the mean of
entropy / ln m is >= 0.75.
"""
import json
import sys
import unicodedata

import numpy as np


def is_punct(tok, special):
    """headscore_is_punct: every character a Unicode P*, after '##' or one leading 'Ġ'."""
    if special or tok is None:
        return False
    if len(tok) > 2 and tok.startswith("##"):
        tok = tok[2:]
    seen = False
    for ch in tok:
        if ch == "\u0120" and not seen:
            continue
        if not unicodedata.category(ch).startswith("P"):
            return False
        seen = True
    return seen


def end_token(d):
    special, ids, labels = d["special"], d["ids"], d["decoder"].get("labels") or []
    for j in range(len(ids) - 1, -1, -1):
        if special[j] and ids[j] in labels:
            return j
    for j in range(len(ids) - 1, -1, -1):
        if special[j]:
            return j
    return -1


def main():
    d = json.load(sys.stdin)
    cross = np.array(d["decoder"]["cross_attentions"], dtype=np.float64)  # [L][H][n][m]
    L, H, n, m = cross.shape
    punct = np.array([is_punct(t, s) for t, s in zip(d["tokens"], d["special"])])
    e = end_token(d)
    d_i = np.array([i * (m - 1) / (n - 1) if n > 1 else 0.0 for i in range(n)])
    w = max(1, m // 10)
    band = np.abs(np.arange(m)[None, :] - d_i[:, None]) <= w  # [n][m]
    for layer in range(L):
        for head in range(H):
            a = cross[layer, head]
            with np.errstate(divide="ignore", invalid="ignore"):
                ent_rows = -np.where(a > 0, a * np.log(a), 0.0).sum(axis=1)
            arg = a.argmax(axis=1)
            s = {
                "first": a[:, 0].mean(),
                "punct": a[:, punct].sum(axis=1).mean() if punct.any() else None,
                "entropy": ent_rows.mean(),
                "diagonal": (a * band).sum(axis=1).mean(),
                "monotonic": (arg[1:] >= arg[:-1]).mean() if n > 1 else None,
                "eos": a[:, e].mean() if e >= 0 else None,
                "max": a.max(axis=1).mean(),
            }
            label, best = "", 0.5
            for k, name in (("first", "first"), ("punct", "punctuation"), ("diagonal", "diagonal"),
                            ("eos", "end token")):
                if s[k] is not None and s[k] >= best:
                    best, label = s[k], name
            if not label and m > 1 and (ent_rows / np.log(m)).mean() >= 0.75:
                label = "broad"
            cols = " ".join("-" if s[k] is None else "%.9f" % s[k]
                            for k in ("first", "punct", "entropy", "diagonal", "monotonic", "eos", "max"))
            print("%d %d %s %s" % (layer, head, cols, label))


if __name__ == "__main__":
    main()
