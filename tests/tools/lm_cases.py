#!/usr/bin/python3
"""lm_cases.py -- attnscope's predictions (--dump json: lm_head, topk, logsumexp, surprisal) against a
cases-lm case of the shared reference (the real transformers heads, /work/shared/reference/README.md,
"cases-lm/").

    lm_cases.py CASE.json DUMP.json
prints one line with the max |difference| per quantity; exit 0 when: the ids are the case's; a case
without a head has a dump whose lm_head kind is none; otherwise the top-1 id of every position is the
case's, the top-10 ids too except where the case's neighbouring log-probabilities tie within 1e-6,
log-probabilities, logsumexp, surprisal and the [MASK] positions' top-10 within 1e-4. Plain Python (no numpy).
"""

import json
import sys

TOL, TIE = 1e-4, 1e-6


def ids_agree(ours, theirs, their_lp):
    if not ours or ours[0] != theirs[0]:
        return False
    for j in range(len(theirs)):
        if j >= len(ours):
            return False
        if ours[j] != theirs[j]:
            if not any(abs(their_lp[j] - their_lp[i]) < TIE for i in (j - 1, j + 1) if 0 <= i < len(theirs)):
                return False
    return True


def maxdiff(a, b):
    if len(a) != len(b):
        return float("inf")
    return max((abs(x - y) for x, y in zip(a, b)), default=0.0)


def main(case_path, dump_path):
    case, dump = json.load(open(case_path)), json.load(open(dump_path))
    name = case_path.rsplit("/", 1)[-1]
    if dump["ids"] != case["ids"]:
        print("%s: FAIL: ids differ: %s vs the case's %s" % (name, dump["ids"], case["ids"]))
        return 1
    kind = dump.get("lm_head", {}).get("kind")
    if not case["has_lm_head"]:
        good = kind == "none" and "topk" not in dump
        print("%s: no head (the case: %s); attnscope: %s%s" % (name, case.get("lm_note", ""),
                                                            dump.get("lm_head"), "" if good else "  FAIL"))
        return 0 if good else 1
    if "topk" not in dump:
        print("%s: FAIL: the case has a head, attnscope: %s" % (name, dump.get("lm_head")))
        return 1
    ref = case["logits_topk"]
    n = len(case["ids"])
    same = len(dump["topk"]) == n
    d = {"logprobs": 0.0}
    for i in range(min(n, len(dump["topk"]))):
        ours = dump["topk"][i]
        same &= ids_agree(ours["ids"], ref["ids"][i], ref["logprobs"][i])
        d["logprobs"] = max(d["logprobs"], maxdiff(ours["logprobs"], ref["logprobs"][i]))
    d["logsumexp"] = maxdiff(dump["logsumexp"], case["logsumexp"])
    if "surprisal" in case:
        d["surprisal"] = maxdiff(dump.get("surprisal", []), case["surprisal"])
    elif "surprisal" in dump:
        same = False  # an MLM head has none
    if case.get("mask_positions"):
        mk = case["mask_topk"]
        d["mask_logprobs"] = 0.0
        for j, p in enumerate(case["mask_positions"]):
            ours = dump["topk"][p]
            same &= ids_agree(ours["ids"], mk["ids"][j], mk["logprobs"][j])
            d["mask_logprobs"] = max(d["mask_logprobs"], maxdiff(ours["logprobs"], mk["logprobs"][j]))
    good = same and max(d.values()) <= TOL
    print("%s: %s head, top-1/top-10 ids %s, max |diff| %s%s" % (
        name, kind, "agree" if same else "DIFFER", ", ".join("%s %.2g" % kv for kv in d.items()),
        "" if good else "  FAIL"))
    return 0 if good else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
