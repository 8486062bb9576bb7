#!/usr/bin/python3
"""ref_m2m100_tok.py -- an independent Python reference for M2M100Tokenizer (facebook/m2m100_418M,
m2m100_1.2B, wmt21-dense-24-wide-*), and the fixture it runs on.

M2M100 checkpoints (model_type m2m_100, as NLLB's) come with M2M100Tokenizer, not NllbTokenizer: the
pieces come from sentencepiece.bpe.model but their ids from vocab.json (fairseq's dictionary, in
frequency order: <s> <pad> </s> <unk> first), a piece vocab.json lacks reads as <unk>, and the language
tokens "__en__" ... follow vocab.json: code i of FAIRSEQ_LANGUAGE_CODES[language_codes] ("m2m100": 100
codes, "wmt21": 8) is len(vocab.json) + i. Source and target alike read [lang] pieces [</s>] (src_lang,
default "en"; tgt_lang for text_target, none = an error). Special tokens typed in the text (the roles
and the language tokens) are cut out first, the whitespace beside them stripped (plain-string special
tokens of transformers 4.31's PreTrainedTokenizer.tokenize). Written from transformers'
tokenization_m2m_100.py and tokenization_utils.py (4.31); shares no code with src/tokenizer/.

Needs /usr/bin/python3 with sentencepiece (Debian: python3-sentencepiece), the same library the C code
links. Run from the source tree root:

  # 1. the fixture folder tests/data/tokenizer/m2m100-spm/ (needs ../shared/reference for its
  #    sentencepiece.bpe.model, the shared nllb-tiny's, KJV-trained): vocab.json lists the pieces in a
  #    shuffled order (fixed seed; so an implementation reading the model's own ids fails) without every
  #    37th piece (which must read as <unk>), then tokenizer_config.json and special_tokens_map.json as
  #    the hub's m2m100_418M has them, with src_lang en and tgt_lang fr.
  /usr/bin/python3 tests/tools/ref_m2m100_tok.py fixture [SHARED_REF]
  # 2. the expected tokens and ids (tests/data/tokenizer/m2m100-cases.json, read by check_tokencdec):
  /usr/bin/python3 tests/tools/ref_m2m100_tok.py cases
"""
import json
import os
import random
import re
import shutil
import sys

import sentencepiece

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(TOP, "tests", "data", "tokenizer", "m2m100-spm")
CASES = os.path.join(TOP, "tests", "data", "tokenizer", "m2m100-cases.json")

# tokenization_m2m_100.py's FAIRSEQ_LANGUAGE_CODES
LANGUAGE_CODES = {
    "m2m100": "af am ar ast az ba be bg bn br bs ca ceb cs cy da de el en es et fa ff fi fr fy ga gd gl gu ha he "
              "hi hr ht hu hy id ig ilo is it ja jv ka kk km kn ko lb lg ln lo lt lv mg mk ml mn mr ms my ne nl "
              "no ns oc or pa pl ps pt ro ru sd si sk sl so sq sr ss su sv sw ta th tl tn tr uk ur uz vi wo xh yi "
              "yo zh zu".split(),
    "wmt21": "en ha is ja cs ru zh de".split(),
}


class M2M100Tokenizer:
    """What M2M100Tokenizer.from_pretrained(folder)(text) / (text_target=...) returns."""

    def __init__(self, folder, src_lang=None, tgt_lang=None):
        cfg = {}
        p = os.path.join(folder, "tokenizer_config.json")
        if os.path.exists(p):
            with open(p, encoding="utf-8") as f:
                cfg = json.load(f)
        with open(os.path.join(folder, "vocab.json"), encoding="utf-8") as f:
            self.encoder = json.load(f)
        self.sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(folder, "sentencepiece.bpe.model"))
        codes = LANGUAGE_CODES[cfg.get("language_codes", "m2m100")]
        self.lang_token_to_id = {f"__{c}__": len(self.encoder) + i for i, c in enumerate(codes)}
        self.src_lang = src_lang or cfg.get("src_lang") or "en"
        self.tgt_lang = tgt_lang or cfg.get("tgt_lang")
        self.unk = "<unk>"
        # all_special_tokens: the roles, then additional_special_tokens (the language tokens)
        self.specials = ["<s>", "</s>", "<unk>", "<pad>"] + list(self.lang_token_to_id)

    def token_id(self, token):
        if token in self.lang_token_to_id:
            return self.lang_token_to_id[token]
        return self.encoder.get(token, self.encoder[self.unk])

    def split_specials(self, text):
        """The Trie split: the longest special token at the earliest position, then strip beside it."""
        out = []
        i = start = 0
        while i < len(text):
            best = None
            for s in self.specials:
                if text.startswith(s, i) and (best is None or len(s) > len(best)):
                    best = s
            if best is None:
                i += 1
                continue
            if i > start:
                out.append(text[start:i])
            out.append(best)
            i += len(best)
            start = i
        if start < len(text):
            out.append(text[start:])
        special = set(self.specials)
        for k, t in enumerate(out):
            if t in special:
                if k + 1 < len(out) and out[k + 1] not in special:
                    out[k + 1] = out[k + 1].lstrip()
                if k > 0 and out[k - 1] not in special:
                    out[k - 1] = out[k - 1].rstrip()
        return out

    def tokenize(self, text):
        special = set(self.specials)
        pieces = []
        for chunk in self.split_specials(text):
            if chunk in special:
                pieces.append(chunk)
            elif chunk:
                pieces.extend(self.sp.encode(chunk, out_type=str))
        return pieces

    def __call__(self, text, target=False):
        lang = self.tgt_lang if target else self.src_lang
        if lang is None:
            raise ValueError("no language")
        lang_id = self.lang_token_to_id[f"__{lang}__"]
        ids = [lang_id] + [self.token_id(p) for p in self.tokenize(text)] + [self.encoder["</s>"]]
        id_to_token = {v: k for k, v in self.encoder.items()}
        id_to_token.update({v: k for k, v in self.lang_token_to_id.items()})
        return ids, [id_to_token.get(i, self.unk) for i in ids]


def write_fixture(shared):
    model = os.path.join(shared, "models", "nllb-tiny", "sentencepiece.bpe.model")
    os.makedirs(FIXTURE, exist_ok=True)
    shutil.copyfile(model, os.path.join(FIXTURE, "sentencepiece.bpe.model"))
    sp = sentencepiece.SentencePieceProcessor(model_file=model)
    pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())
              if not sp.is_control(i) and not sp.is_unknown(i)]
    random.Random(21).shuffle(pieces)
    pieces = [p for k, p in enumerate(pieces) if k % 37 != 36]
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for p in pieces:
        vocab.setdefault(p, len(vocab))
    with open(os.path.join(FIXTURE, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False, indent=0)
        f.write("\n")
    cfg = {"bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>", "pad_token": "<pad>",
           "unk_token": "<unk>", "src_lang": "en", "tgt_lang": "fr", "language_codes": "m2m100",
           "num_madeup_words": 8, "model_max_length": 1024, "tokenizer_class": "M2M100Tokenizer"}
    with open(os.path.join(FIXTURE, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    smap = {"bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>", "pad_token": "<pad>",
            "unk_token": "<unk>", "additional_special_tokens": [f"__{c}__" for c in LANGUAGE_CODES["m2m100"]]}
    with open(os.path.join(FIXTURE, "special_tokens_map.json"), "w", encoding="utf-8") as f:
        json.dump(smap, f, indent=2)
        f.write("\n")
    print(f"{FIXTURE}: {len(vocab)} ids in vocab.json, languages from {len(vocab)}")


TEXTS = [
    "In the beginning God created the heaven and the earth.",
    "The house is wonderful.",
    "",
    "   spaces   around  ",
    "Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich. ½ 東京 😀",
    "and the </s> end</s>there <s> <unk>x <pad>",
    "a __fr__ b__de__c __xx__ __en__",
    "tab\tnew\nline",
    "Jesus wept; and Moses said unto the LORD, thou art my God, I will praise thee: "
    "thou art my God, I will exalt thee.",
]


def write_cases():
    cases = []
    for langs in [(None, None), ("de", "zh")]:
        tok = M2M100Tokenizer(FIXTURE, *langs)
        for text in TEXTS:
            ids, tokens = tok(text)
            tids, ttokens = tok(text, target=True)
            cases.append({"text": text, "src_lang": tok.src_lang, "tgt_lang": tok.tgt_lang,
                          "ids": ids, "tokens": tokens, "target_ids": tids, "target_tokens": ttokens})
    with open(CASES, "w", encoding="utf-8") as f:
        json.dump({"about": "M2M100Tokenizer on tests/data/tokenizer/m2m100-spm, by tests/tools/ref_m2m100_tok.py",
                   "cases": cases}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    unk = sum(t == "<unk>" for c in cases for t in c["tokens"])
    print(f"{CASES}: {len(cases)} cases, {unk} <unk> tokens among them")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "fixture":
        write_fixture(sys.argv[2] if len(sys.argv) > 2 else os.path.join(TOP, "..", "shared", "reference"))
    elif len(sys.argv) == 2 and sys.argv[1] == "cases":
        write_cases()
    else:
        sys.exit(__doc__)
