#!/usr/bin/python3
"""ref_words.py -- independent numpy reference of word-level attention (src/analysis/words.c).

For each case tests/data/cases/<model>--<case>.json it splits the reference tokens into words and
merges the reference attentions with the convention of Clark et al. (2019), "What does BERT look
at?": attention *to* a word is the sum over its pieces, attention *from* a word the mean over its
pieces. It writes tests/data/words/<model>--<case>.json; tests/check_words.c runs the C model on
the case's text, merges with words.c and compares.

Words, as the tokenizer marks them (written here from the rules, not from the C code):
- a special token ([CLS], [SEP], <s>, <bos>, ...) is a word of its own, and the first piece of the
  text and the first piece after a special token start a word;
- WordPiece (BERT, DistilBERT, ELECTRA): a piece "##x" continues the previous word;
- SentencePiece (pieces with '▁'): a piece starting with '▁' starts a word; byte-fallback pieces
  <0xXX> join into one character: a continuation byte (0x80-0xBF) continues, a lead byte continues
  a run of byte pieces and otherwise starts a word;
- byte-level BPE (GPT-2 and the rest): a piece starting with 'Ġ' (space) or 'Ċ' (newline) starts a
  word, as does any piece after one ending in 'Ġ' or 'Ċ'.

Usage (from the source tree root; Debian's python has numpy):
    /usr/bin/python3 tests/tools/ref_words.py [CASE ...]     default: the cases in CASES below
"""

import json
import os
import re
import sys

import numpy as np

CASES = [
    "bert-mini--pair",          # [CLS] a [SEP] b [SEP]: a piece after [SEP] starts a word
    "bert-mini--unicode",       # "##" continuations
    "bert-mini-sharded--book",
    "gpt2-mini--book",          # causal, "'ve" joins "I"
    "gpt2-mini--unicode",       # lone 'Ġ', 'Ċ', multi-piece non-ASCII words
    "gpt2-mini--pair",          # GPT-2: no specials, the first word has no 'Ġ'
    "llama-gqa--short",         # SentencePiece with <s>
    "llama-mqa-bias--short",
    "mistral-window--long",     # sliding window
    "gemma-mqa--short",
    "gemma2-softcap--long",
    "gemma3-local--long",
    "phi3-fused--short",
    "qwen2-bias--short",        # byte-level BPE without specials
    "qwen3-qknorm--short",
    "neox-serial--short",
]

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SPECIALS = {"[CLS]", "[SEP]", "<s>", "</s>", "<bos>", "<eos>", "<|endoftext|>"}
FALLBACK = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


def scheme(family, tokens, special):
    if any("\u2581" in t for t, s in zip(tokens, special) if not s):
        return "spm"
    if "roberta" in family or "gpt" in family or "modernbert" in family:
        return "bpe"
    if "bert" in family or "electra" in family or any(t.startswith("##") and len(t) > 2 for t in tokens):
        return "wordpiece"
    return "bpe"


def fallback(tok):
    m = FALLBACK.match(tok)
    return int(m.group(1), 16) if m else None


def continues(kind, tokens, i):
    tok, prev = tokens[i], tokens[i - 1]
    if kind == "wordpiece":
        return tok.startswith("##") and len(tok) > 2
    if kind == "spm":
        b = fallback(tok)
        if b is not None:
            return (b & 0xC0) == 0x80 or fallback(prev) is not None
        return not tok.startswith("\u2581")
    return not (tok[:1] in ("\u0120", "\u010a") or prev[-1:] in ("\u0120", "\u010a"))


def word_map(family, tokens, special):
    kind = scheme(family, tokens, special)
    word_of, nw = [], 0
    for i, tok in enumerate(tokens):
        if i == 0 or special[i] or special[i - 1] or not continues(kind, tokens, i):
            nw += 1
        word_of.append(nw - 1)
    return np.array(word_of), nw


def merge(a, word_of, nw):
    """A[..., n, n] -> [..., nw, nw]: columns summed over a word's pieces, rows averaged."""
    n = len(word_of)
    to_word = np.zeros((n, nw))
    to_word[np.arange(n), word_of] = 1.0          # P: piece -> word (sum)
    mean_rows = to_word.T / to_word.sum(axis=0)[:, None]  # word <- pieces (mean)
    return mean_rows @ a @ to_word


def main(argv):
    cases = argv[1:] or CASES
    out_dir = os.path.join(ROOT, "tests", "data", "words")
    os.makedirs(out_dir, exist_ok=True)
    for name in cases:
        with open(os.path.join(ROOT, "tests", "data", "cases", name + ".json")) as f:
            case = json.load(f)
        tokens = case["tokens"]
        special = [t in SPECIALS for t in tokens]
        word_of, nw = word_map(case["family"], tokens, special)
        attn = np.array(case["attentions"], dtype=np.float64)  # [layers][heads][n][n]
        words = merge(attn, word_of, nw)
        sums = words.sum(axis=-1)
        assert np.allclose(sums, 1.0, atol=1e-5), (name, sums.min(), sums.max())
        out = {
            "format": "attnscope-words v1",
            "producer": "tests/tools/ref_words.py (numpy, float64 from the case's float32)",
            "case": name,
            "model_dir": case["model_dir"],
            "text": case["text"],
            "text_b": case.get("text_b"),
            "family": case["family"],
            "tokens": tokens,
            "special": special,
            "piece_word": [int(w) for w in word_of],
            "n_words": nw,
            "attentions": np.round(words, 8).tolist(),
        }
        with open(os.path.join(out_dir, name + ".json"), "w") as f:
            json.dump(out, f, separators=(",", ":"))
            f.write("\n")
        print(f"{name}: {len(tokens)} pieces -> {nw} words")


if __name__ == "__main__":
    main(sys.argv)
