"""Score attention heads of a model folder for the patterns models/README reports.

A developer tool (also imported by train_demo.py to watch training):
  previous-token score of head (l, h): mean over query positions i of attn[i][i-1],
      on ordinary English sentences (SENTENCES). BERT: queries and keys are the
      word pieces only (i from 2 to n-2: neither [CLS] nor [SEP] takes part);
      GPT-2: every i >= 1.
  induction score (GPT-2): on N random tokens repeated twice (t1..tN t1..tN), mean over
      the second copy (i = N..2N-1) of attn[i][i-N+1], the token after the first
      occurrence of the current token. Random tokens are common word pieces: ids
      below 20000 spelled "Ġ" + lower-case letters, drawn with a fixed seed.
Usage: score_heads.py MODEL_DIR [--json]
"""

import os

# One CPU thread: torch.set_num_threads() does not reach the BLAS library's own
# threads, so pin them before numpy / torch are imported (the machine is shared).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import json
import re
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import demo_fixture  # noqa: E402

SENTENCES = [
    "The brown capybara is sleeping now.",
    "My friend told me about this class and I love it so far! She was right.",
    "Oh, this book? I've enjoyed it.",
    "The children walked to the old stone bridge after breakfast.",
    "She opened the window because the room was warm and quiet.",
    "We bought fresh bread, cheese and apples at the market on Saturday.",
    "A small boat crossed the river while the sun was going down.",
    "He wrote a long letter to his brother and sent it in the morning.",
    "The teacher asked the students to read the first chapter again.",
    "Heavy rain fell over the city, and the streets were soon full of water.",
]

INDUCTION_N = 40        # length of the random sequence that is repeated
INDUCTION_SEQS = 20     # how many random sequences are averaged


def _attentions(family, model, ids, types=None):
    """[L][H, n, n] attention probabilities for one sequence."""
    with torch.no_grad():
        x = torch.tensor([ids])
        if family == "bert":
            _, tr = model(x, torch.tensor([types or [0] * len(ids)]), trace=True)
        else:
            _, tr = model(x, trace=True)
    return [parts[3][0] for parts in tr["layers"]]


def prev_token_scores(family, model, tok):
    """[L][H] mean attention from each token to the one before it, over SENTENCES."""
    total, count = None, 0
    for text in SENTENCES:
        _, ids, types = demo_fixture.encode(family, tok, text, None)
        atts = _attentions(family, model, ids, types)
        n = len(ids)
        first, last = (2, n - 2) if family == "bert" else (1, n - 1)
        rows = torch.arange(first, last + 1)
        s = torch.stack([a[:, rows, rows - 1].sum(dim=1) for a in atts])   # [L, H]
        total = s if total is None else total + s
        count += len(rows)
    return (total / count).tolist()


def induction_tokens(tok):
    """Candidate ids for the random sequences: common whole-word GPT-2 tokens."""
    word = re.compile(r"^\u0120[a-z]+$")
    return sorted(i for t, i in tok.encoder.items() if i < 20000 and word.match(t))


def induction_scores(model, tok, seed=1234):
    """[L][H] mean attention from the second copy of a token to the token after its first copy."""
    cand = torch.tensor(induction_tokens(tok))
    g = torch.Generator().manual_seed(seed)
    N = INDUCTION_N
    total = None
    for _ in range(INDUCTION_SEQS):
        seq = cand[torch.randperm(len(cand), generator=g)[:N]].tolist()
        atts = _attentions("gpt2", model, seq + seq)
        rows = torch.arange(N, 2 * N)
        s = torch.stack([a[:, rows, rows - N + 1].mean(dim=1) for a in atts])   # [L, H]
        total = s if total is None else total + s
    return (total / INDUCTION_SEQS).tolist()


def score(family, model, tok):
    out = {"previous_token": prev_token_scores(family, model, tok)}
    if family == "gpt2":
        out["induction"] = induction_scores(model, tok)
    return out


def best(table):
    """(score, layer, head) of the highest entry of an [L][H] table."""
    return max((v, l, h) for l, row in enumerate(table) for h, v in enumerate(row))


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    family, _, model = demo_fixture.load_model(sys.argv[1])
    tok = demo_fixture.load_tokenizer(family, sys.argv[1])
    res = score(family, model, tok)
    if sys.argv[2:] == ["--json"]:
        print(json.dumps(res, indent=1))
        return 0
    for name, table in res.items():
        print(f"{name} score, layer x head:")
        for l, row in enumerate(table):
            print(f"  layer {l}: " + "  ".join(f"{v:.3f}" for v in row))
        v, l, h = best(table)
        print(f"  best: layer {l} head {h} = {v:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
