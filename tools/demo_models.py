"""BERT and GPT-2 in plain PyTorch, with Hugging Face's exact math and tensor names.

A developer tool shared by train_demo.py, score_heads.py and demo_fixture.py
(transformers is not available here, so the architectures are written out):
- Bert: post-LN encoder (transformers 4.31 BertModel): embeddings = LayerNorm(word +
  position + token_type), erf GELU, LayerNorm eps from config, pooler, plus the
  BertForMaskedLM head (cls.predictions.*) tied to the word embeddings for training.
- GPT2: pre-LN decoder (GPT2Model): Conv1D weights stored [in, out], fused c_attn,
  tanh GELU ("gelu_new"), final ln_f, LM head tied to wte.
state_dict() names equal the checkpoint names of BertModel / GPT2Model (no prefix);
forward(..., trace=True) also returns per-layer q, k, v, attentions and hidden
states laid out like the shared reference cases. Also a small safetensors reader
and writer (format: u64 header length, JSON header, raw little-endian data).
"""

import json
import math
import struct

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


# ------------------------------------------------------------ BERT ----------

class BertLayer(nn.Module):
    def __init__(self, d, heads, ffn, eps):
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(d, d)        # weight [d, d] (out, in)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)
        self.attn_out = nn.Linear(d, d)
        self.attn_ln = nn.LayerNorm(d, eps=eps)
        self.inter = nn.Linear(d, ffn)      # weight [ffn, d]
        self.out = nn.Linear(ffn, d)        # weight [d, ffn]
        self.out_ln = nn.LayerNorm(d, eps=eps)

    def forward(self, x, bias):
        # x [B, n, d]; bias [B, 1, 1, n] additive key mask (0 or very negative)
        B, n, d = x.shape
        hd = d // self.heads

        def split(t):                                   # [B, n, d] -> [B, H, n, hd]
            return t.view(B, n, self.heads, hd).transpose(1, 2)

        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hd)
        if bias is not None:
            scores = scores + bias
        probs = F.softmax(scores, dim=-1)               # [B, H, n, n]
        ctx = torch.matmul(probs, v).transpose(1, 2).reshape(B, n, d)
        a = self.attn_ln(self.attn_out(ctx) + x)
        h = self.out_ln(self.out(F.gelu(self.inter(a))) + a)
        return h, (q, k, v, probs)


class Bert(nn.Module):
    """BertModel + BertForMaskedLM head. cfg: a Hugging Face BERT config dict."""

    def __init__(self, cfg):
        super().__init__()
        d, eps = cfg["hidden_size"], cfg["layer_norm_eps"]
        self.cfg = cfg
        self.word = nn.Embedding(cfg["vocab_size"], d, padding_idx=cfg["pad_token_id"])
        self.pos = nn.Embedding(cfg["max_position_embeddings"], d)
        self.tok_type = nn.Embedding(cfg["type_vocab_size"], d)
        self.emb_ln = nn.LayerNorm(d, eps=eps)
        self.layers = nn.ModuleList(
            BertLayer(d, cfg["num_attention_heads"], cfg["intermediate_size"], eps)
            for _ in range(cfg["num_hidden_layers"]))
        self.pooler = nn.Linear(d, d)
        # MLM head (cls.predictions.*): transform, then decoder tied to word embeddings.
        self.mlm_dense = nn.Linear(d, d)
        self.mlm_ln = nn.LayerNorm(d, eps=eps)
        self.mlm_bias = nn.Parameter(torch.zeros(cfg["vocab_size"]))
        self._init()

    def _init(self):
        # BertPreTrainedModel._init_weights: N(0, 0.02), zero biases, LayerNorm (1, 0), zero pad row.
        std = self.cfg["initializer_range"]
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, 0.0, std)
                if isinstance(m, nn.Linear):
                    nn.init.zeros_(m.bias)
                elif m.padding_idx is not None:
                    with torch.no_grad():
                        m.weight[m.padding_idx].zero_()
            elif isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, ids, token_type=None, mask=None, trace=False):
        # ids, token_type, mask [B, n]; returns last hidden [B, n, d] (and trace)
        B, n = ids.shape
        if token_type is None:
            token_type = torch.zeros_like(ids)
        pos = torch.arange(n).unsqueeze(0)
        x = self.emb_ln(self.word(ids) + self.tok_type(token_type) + self.pos(pos))
        bias = None
        if mask is not None:
            bias = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
        hidden, per_layer = [x], []
        for layer in self.layers:
            x, parts = layer(x, bias)
            hidden.append(x)
            per_layer.append(parts)
        if trace:
            return x, {"hidden_states": hidden, "layers": per_layer}
        return x

    def mlm_logits(self, h):
        # h [..., d] -> logits [..., vocab]
        t = self.mlm_ln(F.gelu(self.mlm_dense(h)))
        return F.linear(t, self.word.weight, self.mlm_bias)

    def hf_state_dict(self, with_head=False):
        """Tensors under BertModel's names (cls.* only when with_head)."""
        sd = {
            "embeddings.word_embeddings.weight": self.word.weight,
            "embeddings.position_embeddings.weight": self.pos.weight,
            "embeddings.token_type_embeddings.weight": self.tok_type.weight,
            "embeddings.LayerNorm.weight": self.emb_ln.weight,
            "embeddings.LayerNorm.bias": self.emb_ln.bias,
            "pooler.dense.weight": self.pooler.weight,
            "pooler.dense.bias": self.pooler.bias,
        }
        names = {"query": "attention.self.query", "key": "attention.self.key",
                 "value": "attention.self.value", "attn_out": "attention.output.dense",
                 "attn_ln": "attention.output.LayerNorm", "inter": "intermediate.dense",
                 "out": "output.dense", "out_ln": "output.LayerNorm"}
        for i, layer in enumerate(self.layers):
            for attr, hf in names.items():
                mod = getattr(layer, attr)
                sd[f"encoder.layer.{i}.{hf}.weight"] = mod.weight
                sd[f"encoder.layer.{i}.{hf}.bias"] = mod.bias
        if with_head:
            sd.update({
                "cls.predictions.transform.dense.weight": self.mlm_dense.weight,
                "cls.predictions.transform.dense.bias": self.mlm_dense.bias,
                "cls.predictions.transform.LayerNorm.weight": self.mlm_ln.weight,
                "cls.predictions.transform.LayerNorm.bias": self.mlm_ln.bias,
                "cls.predictions.bias": self.mlm_bias,
            })
        return sd


# ------------------------------------------------------------ GPT-2 ---------

def gelu_new(x):
    # transformers' NewGELUActivation (the "gelu_new" of GPT-2)
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Conv1D(nn.Module):
    """transformers.pytorch_utils.Conv1D: y = x @ weight + bias, weight [in, out]."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))   # [in, out]
        self.bias = nn.Parameter(torch.zeros(n_out))           # [out]

    def forward(self, x):
        shape = x.shape[:-1] + (self.weight.shape[1],)
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(shape)


class GPT2Block(nn.Module):
    def __init__(self, d, heads, inner, eps):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(d, eps=eps)
        self.c_attn = Conv1D(d, 3 * d)      # [d, 3d]: q | k | v
        self.c_proj = Conv1D(d, d)
        self.ln_2 = nn.LayerNorm(d, eps=eps)
        self.c_fc = Conv1D(d, inner)
        self.mlp_proj = Conv1D(inner, d)

    def forward(self, x):
        # x [B, n, d]
        B, n, d = x.shape
        hd = d // self.heads
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)

        def split(t):                                   # [B, n, d] -> [B, H, n, hd]
            return t.view(B, n, self.heads, hd).transpose(1, 2)

        q, k, v = split(q), split(k), split(v)
        w = torch.matmul(q, k.transpose(-1, -2))
        w = w / torch.full([], v.size(-1) ** 0.5, dtype=w.dtype)
        causal = torch.ones(n, n, dtype=torch.bool).tril()
        w = torch.where(causal, w, torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype))
        probs = F.softmax(w, dim=-1)                    # [B, H, n, n]
        ctx = torch.matmul(probs, v).transpose(1, 2).reshape(B, n, d)
        x = x + self.c_proj(ctx)
        x = x + self.mlp_proj(gelu_new(self.c_fc(self.ln_2(x))))
        return x, (q, k, v, probs)


class GPT2(nn.Module):
    """GPT2Model with an LM head tied to wte. cfg: a Hugging Face GPT-2 config dict."""

    def __init__(self, cfg):
        super().__init__()
        d, eps = cfg["n_embd"], cfg["layer_norm_epsilon"]
        inner = cfg["n_inner"] or 4 * d
        self.cfg = cfg
        self.wte = nn.Embedding(cfg["vocab_size"], d)
        self.wpe = nn.Embedding(cfg["n_positions"], d)
        self.h = nn.ModuleList(GPT2Block(d, cfg["n_head"], inner, eps) for _ in range(cfg["n_layer"]))
        self.ln_f = nn.LayerNorm(d, eps=eps)
        self._init()

    def _init(self):
        # GPT2PreTrainedModel._init_weights, including the 1/sqrt(2 n_layer) scaling of c_proj.
        std = self.cfg["initializer_range"]
        for name, p in self.named_parameters():
            if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight":
                nn.init.ones_(p)
            elif name.endswith("bias"):
                nn.init.zeros_(p)
            elif name.endswith("c_proj.weight") or name.endswith("mlp_proj.weight"):
                nn.init.normal_(p, 0.0, std / math.sqrt(2 * self.cfg["n_layer"]))
            else:
                nn.init.normal_(p, 0.0, std)

    def forward(self, ids, trace=False):
        # ids [B, n]; returns ln_f output [B, n, d] (and trace)
        n = ids.shape[1]
        x = self.wte(ids) + self.wpe(torch.arange(n).unsqueeze(0))
        hidden, per_layer = [], []
        for block in self.h:
            hidden.append(x)
            x, parts = block(x)
            per_layer.append(parts)
        x = self.ln_f(x)
        hidden.append(x)   # as GPT2Model: the last hidden state is after ln_f
        if trace:
            return x, {"hidden_states": hidden, "layers": per_layer}
        return x

    def lm_logits(self, h):
        return F.linear(h, self.wte.weight)   # tied lm_head, no bias

    def hf_state_dict(self):
        """Tensors under GPT2Model's names (h.N.attn.bias masks are non-persistent buffers, not saved)."""
        sd = {"wte.weight": self.wte.weight, "wpe.weight": self.wpe.weight,
              "ln_f.weight": self.ln_f.weight, "ln_f.bias": self.ln_f.bias}
        names = {"ln_1": "ln_1", "c_attn": "attn.c_attn", "c_proj": "attn.c_proj",
                 "ln_2": "ln_2", "c_fc": "mlp.c_fc", "mlp_proj": "mlp.c_proj"}
        for i, block in enumerate(self.h):
            for attr, hf in names.items():
                mod = getattr(block, attr)
                sd[f"h.{i}.{hf}.weight"] = mod.weight
                sd[f"h.{i}.{hf}.bias"] = mod.bias
        return sd


# ------------------------------------------------------------ loading -------

def build(family, cfg):
    return Bert(cfg) if family == "bert" else GPT2(cfg)


def load_hf_weights(model, tensors):
    """Copy checkpoint tensors (name -> float32 tensor) into model; tolerate the
    hub's variants: a bert./transformer. prefix, LayerNorm gamma/beta, cls.* heads,
    h.N.attn.bias mask buffers. Raises KeyError if a needed tensor is missing."""
    norm = {}
    for name, t in tensors.items():
        for prefix in ("bert.", "transformer."):
            if name.startswith(prefix):
                name = name[len(prefix):]
        name = name.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")
        norm[name] = t
    with torch.no_grad():
        for name, p in model.hf_state_dict().items():
            p.copy_(norm[name].reshape(p.shape))


def config_family(cfg):
    return {"bert": "bert", "gpt2": "gpt2"}[cfg["model_type"]]


# ------------------------------------------------------------ safetensors ---

_DT = {"F32": (np.float32, 4), "F16": (np.float16, 2), "BF16": (None, 2)}


def read_safetensors(path):
    """name -> float32 torch tensor (F16/BF16 widened exactly)."""
    with open(path, "rb") as f:
        blob = f.read()
    (hlen,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + hlen])
    base = 8 + hlen
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        raw = blob[base + a:base + b]
        if info["dtype"] == "BF16":
            u = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            arr = u.view(np.float32)
        else:
            arr = np.frombuffer(raw, dtype=np.dtype(_DT[info["dtype"]][0]).newbyteorder("<")).astype(np.float32)
        out[name] = torch.from_numpy(arr.reshape(info["shape"]).copy())
    return out


def write_safetensors(path, tensors, dtype="F16"):
    """Write name -> tensor as F16 or F32 in sorted name order, header padded to 8 bytes like safetensors."""
    npdt = {"F16": "<f2", "F32": "<f4"}[dtype]
    header, chunks, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(tensors):
        arr = tensors[name].detach().cpu().numpy().astype(npdt)
        raw = arr.tobytes()
        header[name] = {"dtype": dtype, "shape": list(arr.shape), "data_offsets": [off, off + len(raw)]}
        chunks.append(raw)
        off += len(raw)
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * (-len(hjson) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for c in chunks:
            f.write(c)
