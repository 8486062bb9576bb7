"""The project's own eager PyTorch implementation of the BERT and GPT-2 families: the peer that
`make bench` times attnscope against, and the second opinion its attention is checked with.

It computes what Hugging Face's BertModel / GPT2Model compute in float32 with output_attentions
(post-LN BERT with erf GELU; pre-LN GPT-2 with Conv1D [in, out] weights, fused c_attn, tanh GELU,
causal mask, ln_f), written the way their eager code runs: nn.Linear per projection, per-head
matmul, softmax, matmul. Modules are built from config.json and filled from the folder's
model.safetensors, read here with numpy (8-byte little-endian header length, JSON header, raw
data), so no package beyond Debian's python3-torch and python3-numpy is needed.
"""

import json
import math
import os
import struct

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


# ------------------------------------------------------------ safetensors ----------

def read_safetensors(path):
    """All tensors of PATH as float32 torch tensors, by name (F32, F16 and BF16 are read)."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError(f"{path}: too short for a safetensors file")
    (hlen,) = struct.unpack("<Q", blob[:8])
    if 8 + hlen > len(blob):
        raise ValueError(f"{path}: header length {hlen} runs past the end of the file")
    header = json.loads(blob[8:8 + hlen])
    base = 8 + hlen
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = blob[base + begin:base + end]
        dtype = info["dtype"]
        if dtype == "F32":
            a = np.frombuffer(raw, dtype="<f4")
        elif dtype == "F16":
            a = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        elif dtype == "BF16":  # the upper half of a float32
            a = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise ValueError(f"{path}: tensor {name} has dtype {dtype}, not F32/F16/BF16")
        # .copy(): the data of an unaligned header is not 4-byte aligned, and torch wants its own memory
        out[name] = torch.from_numpy(a.reshape(info["shape"]).copy())
    return out


def strip_prefix(weights, prefixes):
    """Drop the first prefix that some tensor names carry (BertForMaskedLM's "bert.", GPT2LMHeadModel's
    "transformer."), keeping the names the modules use, and read the older LayerNorm names (the
    bert-base-uncased hub file's gamma/beta) as weight/bias, as transformers does on load."""
    for p in prefixes:
        if any(k.startswith(p) for k in weights):
            weights = {k[len(p):]: v for k, v in weights.items() if k.startswith(p)}
            break
    renamed = {}
    for k, v in weights.items():
        if k.endswith("LayerNorm.gamma"):
            k = k[:-len("gamma")] + "weight"
        elif k.endswith("LayerNorm.beta"):
            k = k[:-len("beta")] + "bias"
        renamed[k] = v
    return renamed


def activation(name):
    if name == "gelu":
        return lambda x: F.gelu(x)                      # erf form
    if name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        return lambda x: F.gelu(x, approximate="tanh")
    if name == "relu":
        return F.relu
    raise ValueError(f"activation {name!r} is not implemented here")


def split_heads(t, heads):
    """[B, n, heads * d] -> [B, heads, n, d]"""
    B, n, hd = t.shape
    return t.view(B, n, heads, hd // heads).transpose(1, 2)


def merge_heads(t):
    """[B, heads, n, d] -> [B, n, heads * d]"""
    B, h, n, d = t.shape
    return t.transpose(1, 2).reshape(B, n, h * d)


# ------------------------------------------------------------ BERT ----------

class BertBlock(nn.Module):
    """Post-LN encoder block: LN(x + Attn(x)), then LN(a + Down(act(Up(a))))."""

    def __init__(self, hidden, heads, inter, eps, act):
        super().__init__()
        self.heads, self.act = heads, act
        self.query = nn.Linear(hidden, hidden)    # weight [out, in]
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.attn_dense = nn.Linear(hidden, hidden)
        self.attn_norm = nn.LayerNorm(hidden, eps=eps)
        self.up = nn.Linear(hidden, inter)
        self.down = nn.Linear(inter, hidden)
        self.out_norm = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x, mask=None):
        # x [B, n, hidden]; every token attends to every token but the padding: MASK [B, 1, 1, n] is
        # added to the scores (0 on a text's keys, float32's lowest on padded ones; None: no padding)
        q = split_heads(self.query(x), self.heads)     # [B, H, n, d]
        k = split_heads(self.key(x), self.heads)
        v = split_heads(self.value(x), self.heads)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores + mask
        probs = torch.softmax(scores, dim=-1)          # [B, H, n, n]
        a = self.attn_norm(self.attn_dense(merge_heads(torch.matmul(probs, v))) + x)
        return self.out_norm(self.down(self.act(self.up(a))) + a), probs

    def load(self, w, p):
        for mod, name in ((self.query, "attention.self.query"), (self.key, "attention.self.key"),
                          (self.value, "attention.self.value"), (self.attn_dense, "attention.output.dense"),
                          (self.attn_norm, "attention.output.LayerNorm"), (self.up, "intermediate.dense"),
                          (self.down, "output.dense"), (self.out_norm, "output.LayerNorm")):
            mod.weight.copy_(w[f"{p}.{name}.weight"])
            mod.bias.copy_(w[f"{p}.{name}.bias"])


class Bert(nn.Module):
    causal = False

    def __init__(self, cfg):
        super().__init__()
        hidden, eps = cfg["hidden_size"], cfg.get("layer_norm_eps", 1e-12)
        self.word = nn.Embedding(cfg["vocab_size"], hidden)
        self.position = nn.Embedding(cfg.get("max_position_embeddings", 512), hidden)
        self.token_type = nn.Embedding(cfg.get("type_vocab_size", 2), hidden)
        self.norm = nn.LayerNorm(hidden, eps=eps)
        act = activation(cfg.get("hidden_act", "gelu"))
        self.blocks = nn.ModuleList(
            BertBlock(hidden, cfg["num_attention_heads"], cfg.get("intermediate_size", 4 * hidden), eps, act)
            for _ in range(cfg["num_hidden_layers"]))
        self.max_positions = self.position.num_embeddings

    def load(self, w):
        w = strip_prefix(w, ("bert.",))
        self.word.weight.copy_(w["embeddings.word_embeddings.weight"])
        self.position.weight.copy_(w["embeddings.position_embeddings.weight"])
        self.token_type.weight.copy_(w["embeddings.token_type_embeddings.weight"])
        self.norm.weight.copy_(w["embeddings.LayerNorm.weight"])
        self.norm.bias.copy_(w["embeddings.LayerNorm.bias"])
        for i, b in enumerate(self.blocks):
            b.load(w, f"encoder.layer.{i}")

    def forward(self, ids, type_ids=None, attention_mask=None):
        """ids [B, n] -> (last hidden [B, n, hidden], attentions: per layer [B, H, n, n]).
        attention_mask [B, n]: 1 on a text's tokens, 0 on padding, as BertModel takes it; it becomes
        BertModel's extended mask, (1 - mask) * float32's lowest, added to every head's scores, so a
        padded key gets no weight (padded query rows are computed but mean nothing). None: no padding."""
        if type_ids is None:
            type_ids = torch.zeros_like(ids)
        mask = None
        if attention_mask is not None:
            mask = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.norm(self.word(ids) + self.position(pos) + self.token_type(type_ids))
        attentions = []
        for b in self.blocks:
            x, probs = b(x, mask)
            attentions.append(probs)
        return x, attentions


# ------------------------------------------------------------ GPT-2 ----------

class Conv1D(nn.Module):
    """GPT-2's linear layer: weight stored [in, out], y = x @ W + b."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        self.bias = nn.Parameter(torch.empty(n_out))

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(*x.shape[:-1], -1)


class GPT2Block(nn.Module):
    """Pre-LN decoder block: x + Attn(LN1(x)), then x + Down(act(Up(LN2(x))))."""

    def __init__(self, hidden, heads, inter, eps, act, scale):
        super().__init__()
        self.heads, self.act, self.scale = heads, act, scale
        self.ln_1 = nn.LayerNorm(hidden, eps=eps)
        self.c_attn = Conv1D(hidden, 3 * hidden)
        self.c_proj = Conv1D(hidden, hidden)
        self.ln_2 = nn.LayerNorm(hidden, eps=eps)
        self.c_fc = Conv1D(hidden, inter)
        self.mlp_proj = Conv1D(inter, hidden)

    def forward(self, x):
        q, k, v = self.c_attn(self.ln_1(x)).split(x.shape[-1], dim=2)
        q, k, v = (split_heads(t, self.heads) for t in (q, k, v))   # [B, H, n, d]
        scores = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        n = x.shape[1]
        future = torch.ones(n, n, dtype=torch.bool).triu(1)         # keys after the query
        scores = scores.masked_fill(future, torch.finfo(scores.dtype).min)
        probs = torch.softmax(scores, dim=-1)                        # [B, H, n, n]
        x = x + self.c_proj(merge_heads(torch.matmul(probs, v)))
        return x + self.mlp_proj(self.act(self.c_fc(self.ln_2(x)))), probs

    def load(self, w, p):
        for mod, name in ((self.ln_1, "ln_1"), (self.c_attn, "attn.c_attn"), (self.c_proj, "attn.c_proj"),
                          (self.ln_2, "ln_2"), (self.c_fc, "mlp.c_fc"), (self.mlp_proj, "mlp.c_proj")):
            mod.weight.copy_(w[f"{p}.{name}.weight"])
            mod.bias.copy_(w[f"{p}.{name}.bias"])


class GPT2(nn.Module):
    causal = True

    def __init__(self, cfg):
        super().__init__()
        hidden, heads = cfg["n_embd"], cfg["n_head"]
        eps = cfg.get("layer_norm_epsilon", 1e-5)
        inter = cfg.get("n_inner") or 4 * hidden
        act = activation(cfg.get("activation_function", "gelu_new"))
        self.wte = nn.Embedding(cfg["vocab_size"], hidden)
        self.wpe = nn.Embedding(cfg.get("n_positions", cfg.get("n_ctx", 1024)), hidden)
        blocks = []
        for i in range(cfg["n_layer"]):
            scale = 1.0 / math.sqrt(hidden // heads) if cfg.get("scale_attn_weights", True) else 1.0
            if cfg.get("scale_attn_by_inverse_layer_idx", False):
                scale /= i + 1
            blocks.append(GPT2Block(hidden, heads, inter, eps, act, scale))
        self.blocks = nn.ModuleList(blocks)
        self.ln_f = nn.LayerNorm(hidden, eps=eps)
        self.max_positions = self.wpe.num_embeddings

    def load(self, w):
        w = strip_prefix(w, ("transformer.",))
        self.wte.weight.copy_(w["wte.weight"])
        self.wpe.weight.copy_(w["wpe.weight"])
        self.ln_f.weight.copy_(w["ln_f.weight"])
        self.ln_f.bias.copy_(w["ln_f.bias"])
        for i, b in enumerate(self.blocks):
            b.load(w, f"h.{i}")

    def forward(self, ids, type_ids=None):
        """ids [B, n] -> (last hidden [B, n, hidden], attentions: per layer [B, H, n, n])"""
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.wte(ids) + self.wpe(pos)
        attentions = []
        for b in self.blocks:
            x, probs = b(x)
            attentions.append(probs)
        return self.ln_f(x), attentions


FAMILIES = {"bert": Bert, "gpt2": GPT2}


def load_model(folder):
    """The model in FOLDER (config.json + model.safetensors), in eval mode with float32 weights."""
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    kind = cfg.get("model_type")
    if kind not in FAMILIES:
        raise ValueError(f"{folder}: model_type {kind!r} is not one of {sorted(FAMILIES)}")
    model = FAMILIES[kind](cfg)
    with torch.no_grad():
        model.load(read_safetensors(os.path.join(folder, "model.safetensors")))
    return model.eval()


def attentions(model, ids, type_ids=None):
    """Softmax probabilities for token IDS (a list): a float32 array [layers, heads, n, n], like HF's
    output_attentions stacked for batch 0."""
    with torch.inference_mode():
        t = torch.tensor([ids], dtype=torch.long)
        tt = torch.tensor([type_ids], dtype=torch.long) if type_ids is not None else None
        _, att = model(t, tt)
    return torch.stack([a[0] for a in att]).numpy()
