"""Minimal Python tokenizers used only to train the bundled demo models.

A developer tool (not run-time, not a test dependency): tools/train_demo.py needs
token ids for its training corpus and for the comparison fixtures. These follow
Hugging Face's slow tokenizers (transformers 4.31): BertTokenizer
(BasicTokenizer + WordpieceTokenizer, do_lower_case) and GPT2Tokenizer
(byte-level BPE with GPT-2's pre-tokenisation regex). `python3 demo_tokenize.py
--check DIR` compares both against the shared reference cases in DIR.
"""

import json
import os
import sys
import unicodedata

import regex  # Debian python3-regex: \p{L} / \p{N} classes like GPT-2's own code


# Character classes of BasicTokenizer and GPT-2's byte table: the same as the test
# reference tokenizer's, so they are imported from it rather than written twice.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "tools"))
from ref_tokenize import (bytes_to_unicode, is_cjk as _is_cjk, is_control as _is_control,  # noqa: E402
                          is_punctuation as _is_punctuation, is_whitespace as _is_whitespace)


# ---------------------------------------------------------------- BERT ------

class BertTokenizer:
    """bert-base-uncased style: lower-case, strip accents, split punctuation, WordPiece."""

    SPECIALS = ("[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]")

    def __init__(self, vocab_path):
        with open(vocab_path, encoding="utf-8") as f:
            self.vocab = {}
            for i, line in enumerate(f):
                self.vocab.setdefault(line.rstrip("\n"), i)
        self.inv = {i: t for t, i in self.vocab.items()}
        self.unk = self.vocab["[UNK]"]
        self.cls = self.vocab["[CLS]"]
        self.sep = self.vocab["[SEP]"]
        self.pad = self.vocab["[PAD]"]
        self.mask = self.vocab["[MASK]"]
        self._cache = {}

    def _basic(self, text):
        out = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD or _is_control(ch):
                continue
            if _is_cjk(cp):
                out.append(" " + ch + " ")
            elif _is_whitespace(ch):
                out.append(" ")
            else:
                out.append(ch)
        words = []
        for tok in "".join(out).split():
            if tok not in self.SPECIALS:
                tok = unicodedata.normalize("NFD", tok.lower())
                tok = "".join(c for c in tok if unicodedata.category(c) != "Mn")
            else:
                words.append(tok)
                continue
            cur = ""
            for c in tok:
                if _is_punctuation(c):
                    if cur:
                        words.append(cur)
                        cur = ""
                    words.append(c)
                else:
                    cur += c
            if cur:
                words.append(cur)
        return words

    def _wordpiece(self, word):
        if word in self._cache:
            return self._cache[word]
        if len(word) > 100:
            res = ["[UNK]"]
        else:
            res, start = [], 0
            while start < len(word):
                end, piece = len(word), None
                while start < end:
                    sub = word[start:end]
                    if start > 0:
                        sub = "##" + sub
                    if sub in self.vocab:
                        piece = sub
                        break
                    end -= 1
                if piece is None:
                    res = ["[UNK]"]
                    break
                res.append(piece)
                start = end
        self._cache[word] = res
        return res

    def tokenize(self, text):
        return [p for w in self._basic(text) for p in self._wordpiece(w)]

    def encode(self, text):
        """Ids without [CLS]/[SEP]."""
        return [self.vocab.get(t, self.unk) for t in self.tokenize(text)]


# ---------------------------------------------------------------- GPT-2 -----

class GPT2Tokenizer:
    PAT = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")

    def __init__(self, vocab_path, merges_path):
        with open(vocab_path, encoding="utf-8") as f:
            self.encoder = json.load(f)
        self.inv = {i: t for t, i in self.encoder.items()}
        with open(merges_path, encoding="utf-8") as f:
            lines = f.read().split("\n")[1:]  # first line is "#version: 0.2"
        merges = [tuple(l.split()) for l in lines if l.strip()]
        self.ranks = {m: i for i, m in enumerate(merges)}
        self.byte_enc = bytes_to_unicode()
        self.eos = self.encoder["<|endoftext|>"]
        self._cache = {}

    def _bpe(self, token):
        if token in self._cache:
            return self._cache[token]
        word = list(token)
        while len(word) > 1:
            pairs = {(word[i], word[i + 1]) for i in range(len(word) - 1)}
            best = min(pairs, key=lambda p: self.ranks.get(p, float("inf")))
            if best not in self.ranks:
                break
            first, second = best
            new, i = [], 0
            while i < len(word):
                if i < len(word) - 1 and word[i] == first and word[i + 1] == second:
                    new.append(first + second)
                    i += 2
                else:
                    new.append(word[i])
                    i += 1
            word = new
        self._cache[token] = word
        return word

    def tokenize(self, text):
        out = []
        for piece in self.PAT.findall(text):
            mapped = "".join(self.byte_enc[b] for b in piece.encode("utf-8"))
            out.extend(self._bpe(mapped))
        return out

    def encode(self, text):
        return [self.encoder[t] for t in self.tokenize(text)]


# ---------------------------------------------------------------- check -----

def _check(ref_dir, bert_vocab, gpt2_vocab, gpt2_merges):
    """Compare tokens and ids with every reference case; return the number of mismatches."""
    import glob
    import os
    bert = BertTokenizer(bert_vocab)
    gpt2 = GPT2Tokenizer(gpt2_vocab, gpt2_merges)
    bad = 0
    for path in sorted(glob.glob(os.path.join(ref_dir, "*.json"))):
        with open(path, encoding="utf-8") as f:
            case = json.load(f)
        if case["family"] == "bert":
            toks = ["[CLS]"] + bert.tokenize(case["text"]) + ["[SEP]"]
            if case.get("text_b") is not None:
                toks += bert.tokenize(case["text_b"]) + ["[SEP]"]
            ids = [bert.vocab[t] for t in toks]
        else:
            toks = gpt2.tokenize(case["text"])
            if case.get("text_b") is not None:
                toks += gpt2.tokenize(case["text_b"])
            ids = [gpt2.encoder[t] for t in toks]
        ok = toks == case["tokens"] and ids == case["ids"]
        bad += not ok
        print(("ok   " if ok else "FAIL ") + os.path.basename(path))
    return bad


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--check":
        sys.exit(1 if _check(*sys.argv[2:]) else 0)
    print("usage: demo_tokenize.py --check CASES_DIR BERT_VOCAB GPT2_VOCAB GPT2_MERGES", file=sys.stderr)
    sys.exit(2)
