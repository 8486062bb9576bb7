#!/usr/bin/python3
"""ref_words_encdec.py -- independent numpy replay of an encoder-decoder's words (issue 21): the decoder's
self-attention and the cross-attention merged into words from a --dump json of pieces.

Words are split by ref_words.py's rules (written from the tokenizers' conventions, not from the C code);
in the decoder, token 0 (the decoder start token) and the special pieces (</s>, <s>) are words of their
own. Attention to a word is summed over its pieces, from a word averaged (Clark et al. 2019): the
decoder's rows and columns are its words, the cross-attention's rows the target's words and its columns
the source's.

Usage:
  ref_words_encdec.py check PIECES.json WORDS.json [DECODER.csv CROSS.csv]
      PIECES.json: --dump json of pieces; WORDS.json: the same run with --words; the csv files: --dump csv
      --words --stack decoder and --stack cross. Compares every merged weight and the piece-to-word maps;
      prints one line and exits 1 on a difference above 1e-6.
  ref_words_encdec.py row PIECES.json decoder|cross LAYER HEAD ROW
      The merged row's weights, one per line (%.6f), the decoder's causal row up to ROW.
  ref_words_encdec.py rows PIECES.json decoder|cross LAYER HEAD ROW,ROW...
      The sum of those merged rows (marked tokens' combined attention), every column, one per line (%.6f).
  ref_words_encdec.py compare A.json B.json [--csv decoder|cross FILE]... [--json FILE]
      Minimal pairs on the decoder's side: A.json and B.json are two --dump json runs (two texts with the same
      target, or one text with two targets); FILE a --dump csv --stack decoder|cross --compare(-target) (weight,
      weight_b, difference against A's and B's weights) or a --dump json --compare (its compare.decoder: B's
      tokens, attentions and cross_attentions, and each head's change, the total variation over the matching
      rows, recomputed here). Prints one line; exits 1 on a difference above 1e-6.
"""

import csv
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ref_words import SPECIALS, word_map  # noqa: E402


def maps(p):
    fam = p["model"]["family"]
    enc, nwe = word_map(fam, p["tokens"], p["special"])
    dt = p["decoder"]["tokens"]
    dec, nwd = word_map(fam, dt, [i == 0 or t in SPECIALS for i, t in enumerate(dt)])
    return enc, nwe, dec, nwd


def summer(word_of, nw):
    """[n][nw]: piece -> word, for columns summed."""
    s = np.zeros((len(word_of), nw))
    s[np.arange(len(word_of)), word_of] = 1.0
    return s


def merged(p):
    enc, nwe, dec, nwd = maps(p)
    se, sd = summer(enc, nwe), summer(dec, nwd)
    md = sd.T / sd.sum(axis=0)[:, None]  # [nwd][n]: a target word's rows averaged
    a = np.array(p["decoder"]["attentions"], dtype=np.float64)
    c = np.array(p["decoder"]["cross_attentions"], dtype=np.float64)
    return enc, dec, md @ a @ sd, md @ c @ se


def from_csv(path, shape):
    out = np.full(shape, np.nan)
    with open(path) as f:
        for r in csv.DictReader(f):
            out[int(r["layer"]), int(r["head"]), int(r["query_index"]), int(r["key_index"])] = float(r["weight"])
    return out


def check(argv):
    with open(argv[0]) as f:
        p = json.load(f)
    with open(argv[1]) as f:
        w = json.load(f)
    enc, dec, a, c = merged(p)
    bad = []
    if w["piece_word"] != enc.tolist():
        bad.append("encoder piece_word %s, want %s" % (w["piece_word"], enc.tolist()))
    if w["decoder"]["piece_word"] != dec.tolist():
        bad.append("decoder piece_word %s, want %s" % (w["decoder"]["piece_word"], dec.tolist()))
    if w["decoder"]["pieces"] != p["decoder"]["tokens"]:
        bad.append("decoder pieces differ")
    got = {"decoder": np.array(w["decoder"]["attentions"]), "cross": np.array(w["decoder"]["cross_attentions"])}
    if len(argv) > 2:
        got["decoder csv"] = from_csv(argv[2], a.shape)
        got["cross csv"] = from_csv(argv[3], c.shape)
    worst = 0.0
    for name, g in got.items():
        want = c if name.startswith("cross") else a
        if g.shape != want.shape:
            bad.append("%s: shape %s, want %s" % (name, g.shape, want.shape))
            continue
        d = float(np.nanmax(np.abs(g - want))) if not np.isnan(g).any() else float("inf")
        worst = max(worst, d)
        if d > 1e-6:
            bad.append("%s: max difference %g" % (name, d))
    for name, m in (("decoder", a), ("cross", c)):
        if not np.allclose(m.sum(axis=-1), 1.0, atol=1e-5):
            bad.append("%s rows do not sum to 1" % name)
    if bad:
        print("; ".join(bad))
        return 1
    print("%d decoder and %d cross weights of %d+%d words match (max difference %.2g)"
          % (a.size, c.size, a.shape[-1], c.shape[-1], worst))
    return 0


def row(argv):
    with open(argv[0]) as f:
        p = json.load(f)
    _, _, a, c = merged(p)
    stack, layer, head, r = argv[1], int(argv[2]), int(argv[3]), int(argv[4])
    vals = c[layer, head, r] if stack == "cross" else a[layer, head, r, : r + 1]
    for v in vals:
        print("%.6f" % v)
    return 0


def rows(argv):
    with open(argv[0]) as f:
        p = json.load(f)
    _, _, a, c = merged(p)
    m = c if argv[1] == "cross" else a
    for v in sum(m[int(argv[2]), int(argv[3]), int(r)] for r in argv[4].split(",")):
        print("%.6f" % v)
    return 0


def matching(a, b):
    """Rows compared: all when the decoders' inputs are as long, else their common prefix of ids."""
    ia, ib = a["decoder"]["ids"], b["decoder"]["ids"]
    if len(ia) == len(ib):
        return len(ia)
    k = 0
    while k < min(len(ia), len(ib)) and ia[k] == ib[k]:
        k += 1
    return k


def tv(x, y, rows):
    """Per head: the mean over ROWS rows of half the L1 distance, keys past the shorter row counting 0."""
    cols = max(x.shape[-1], y.shape[-1])
    px = np.zeros(x.shape[:2] + (rows, cols))
    py = np.zeros(y.shape[:2] + (rows, cols))
    px[..., : x.shape[-1]] = x[:, :, :rows]
    py[..., : y.shape[-1]] = y[:, :, :rows]
    return (np.abs(px - py).sum(axis=-1) / 2).mean(axis=-1)


def compare(argv):
    with open(argv[0]) as f:
        a = json.load(f)
    with open(argv[1]) as f:
        b = json.load(f)
    side = {k: (np.array(a["decoder"][f], dtype=np.float64), np.array(b["decoder"][f], dtype=np.float64))
            for k, f in (("decoder", "attentions"), ("cross", "cross_attentions"))}
    bad, worst, count, rest = [], 0.0, 0, argv[2:]
    while rest:
        what, path = rest[0], rest[1]
        if what == "--csv":
            stack, path = rest[1], rest[2]
            rest = rest[3:]
            wa, wb = side[stack]
            with open(path) as f:
                for r in csv.DictReader(f):
                    idx = (int(r["layer"]), int(r["head"]), int(r["query_index"]), int(r["key_index"]))
                    got = float(r["weight"])
                    diffs = [got - wa[idx]]
                    inside = idx[2] < wb.shape[2] and idx[3] < wb.shape[3]
                    if inside != (r["weight_b"] != ""):
                        bad.append("%s csv %s: weight_b %r" % (stack, idx, r["weight_b"]))
                        continue
                    if inside:
                        diffs += [float(r["weight_b"]) - wb[idx], float(r["difference"]) - (wb[idx] - wa[idx])]
                    d = max(abs(x) for x in diffs)
                    worst, count = max(worst, d), count + 1
                    if d > 1e-6:
                        bad.append("%s csv %s: off by %g" % (stack, idx, d))
        elif what == "--json":
            rest = rest[2:]
            with open(path) as f:
                c = json.load(f)["compare"]["decoder"]
            rows = matching(a, b)
            if c["tokens"] != b["decoder"]["tokens"] or c["matching_rows"] != rows:
                bad.append("json: B's tokens or matching rows (%s, %d)" % (c["matching_rows"], rows))
            for key, got, want in (("attentions", c["attentions"], side["decoder"][1]),
                                   ("cross_attentions", c["cross_attentions"], side["cross"][1]),
                                   ("changed", c["changed"], tv(*side["decoder"], rows)),
                                   ("cross_changed", c["cross_changed"], tv(*side["cross"], rows))):
                d = float(np.max(np.abs(np.array(got, dtype=np.float64) - want)))
                worst, count = max(worst, d), count + np.size(want)
                if d > 1e-6:
                    bad.append("json %s: off by %g" % (key, d))
        else:
            print(__doc__)
            return 2
    if bad:
        print("; ".join(bad[:5]))
        return 1
    print("%d values of A, B and B - A match (max difference %.2g)" % (count, worst))
    return 0


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "check" and len(sys.argv) in (4, 6):
        sys.exit(check(sys.argv[2:]))
    if cmd == "row" and len(sys.argv) == 7:
        sys.exit(row(sys.argv[2:]))
    if cmd == "rows" and len(sys.argv) == 7:
        sys.exit(rows(sys.argv[2:]))
    if cmd == "compare" and len(sys.argv) >= 4:
        sys.exit(compare(sys.argv[2:]))
    print(__doc__)
    sys.exit(2)
