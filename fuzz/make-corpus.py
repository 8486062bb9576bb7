#!/usr/bin/python3
"""make-corpus.py -- write the seed corpora of the fuzz targets (fuzz/corpus/TARGET/) from the
test fixtures, cut down so the whole fuzz/ folder stays small (well under 1 MB).

Run from the source tree: /usr/bin/python3 fuzz/make-corpus.py. It replaces every seed it writes
and leaves other files alone. Formats are described at the top of each fuzz/fuzz_*.c: a selector
byte, then files separated by 0xFF. Standard library only."""
import hashlib
import json
import os
import struct

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(TOP, "fuzz", "corpus")
SEP = b"\xff"


def read(*path):
    with open(os.path.join(TOP, *path), "rb") as f:
        return f.read()


def seed(target, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def js(obj):
    return json.dumps(obj, ensure_ascii=False).encode()


# ---------------------------------------------------------------- safetensors
def safetensors(tensors, metadata=None, pad=0):
    """tensors: [(name, dtype, shape, bytes)] laid out one after another."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = js(header) + b" " * pad
    return struct.pack("<Q", len(h)) + h + data


def f32(*v):
    return struct.pack("<%df" % len(v), *v)


seed("fuzz_safetensors", safetensors([]))
seed("fuzz_safetensors", safetensors([], {"format": "pt"}))
seed("fuzz_safetensors", safetensors([
    ("a.weight", "F32", [2, 2], f32(1, 2, 3, 4)),
    ("a.bias", "F16", [2], b"\x00\x3c\x00\xc0"),
    ("b", "BF16", [1, 1, 2], b"\x80\x3f\x40\xc0"),
    ("ids", "I64", [1], struct.pack("<q", 7)),
    ("mask", "BOOL", [3], b"\x01\x00\x01"),
    ("empty", "F32", [0, 4], b""),
    ("scalar", "F64", [], struct.pack("<d", 0.5)),
    ("small", "I8", [2], b"\x01\xff"), ("u", "U8", [1], b"\x02"), ("i16", "I16", [1], b"\x01\x00"),
    ("i32", "I32", [1], b"\x01\x00\x00\x00"),
], {"format": "pt"}, pad=5))
# The real header of bert-mini, with only its small tensors kept (re-laid out, real bytes).
st = read("tests", "data", "models", "bert-mini", "model.safetensors")
hl = struct.unpack("<Q", st[:8])[0]
hdr = json.loads(st[8:8 + hl])
keep = []
for name, v in sorted(hdr.items()):
    if name == "__metadata__":
        continue
    b, e = v["data_offsets"]
    if e - b <= 64:
        keep.append((name, v["dtype"], v["shape"], st[8 + hl + b:8 + hl + e]))
seed("fuzz_safetensors", safetensors(keep[:12], hdr.get("__metadata__")))

# ---------------------------------------------------------------- model folders
for k, fixture in enumerate(["bert-mini", "gpt2-mini", "bert-mini-sharded"]):
    cfg = read("tests", "data", "models", fixture, "config.json")
    tcfg = read("tests", "data", "models", fixture, "tokenizer_config.json")
    index = read("tests", "data", "models", fixture, "model.safetensors.index.json") if k == 2 else b""
    seed("fuzz_modeldir", bytes([k]) + cfg)
    seed("fuzz_modeldir", bytes([k]) + cfg + SEP + index + SEP + tcfg)
    c = json.loads(cfg)
    if k == 1:
        c.update({"activation_function": "relu", "scale_attn_by_inverse_layer_idx": True, "n_inner": 32})
    else:
        c.update({"hidden_act": "gelu_new", "layer_norm_eps": 1e-5, "type_vocab_size": 1})
    seed("fuzz_modeldir", bytes([k]) + js(c))

# decoder fixtures (selector 3...): their config.json as is, and with the settings that change the
# block (rope_scaling types, windows, layer types, soft-capping) varied
for k, fixture in enumerate(["llama-rope-yarn", "gemma2-softcap", "neox-parallel", "phi3-fused", "qwen3-qknorm",
                             "gemma3-multimodal"], start=3):
    cfg = read("tests", "data", "models", fixture, "config.json")
    seed("fuzz_modeldir", bytes([k]) + cfg)
    c = json.loads(cfg)
    if k == 3:
        c["rope_scaling"] = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                             "original_max_position_embeddings": 64}
    elif k == 4:
        c.update({"layer_types": ["full_attention", "sliding_attention", "full_attention"], "sliding_window": 2})
    elif k == 5:
        c.update({"use_parallel_residual": False, "rotary_pct": 0.5})
    elif k == 6:
        c["rope_scaling"] = {"type": "dynamic", "factor": 2.0}
    elif k == 7:
        c.update({"head_dim": 8, "num_key_value_heads": 1})
    seed("fuzz_modeldir", bytes([k]) + js(c))

# StarCoder2 (selector 9): as is, and with use_bias false and no window
cfg = read("tests", "data", "models", "starcoder2-window", "config.json")
seed("fuzz_modeldir", b"\x09" + cfg)
seed("fuzz_modeldir", b"\x09" + js(dict(json.loads(cfg), use_bias=False, sliding_window=None)))
# GPT-Neo (selector 10): as is, and with the layer kinds from attention_types alone
cfg = read("tests", "data", "models", "gptneo-local", "config.json")
seed("fuzz_modeldir", b"\x0a" + cfg)
c = json.loads(cfg)
del c["attention_layers"]
c["attention_types"] = [[["local"], 1], [["global"], 1]]
seed("fuzz_modeldir", b"\x0a" + js(c))
# BLOOM (selector 11): ALiBi slopes of a head count that is not a power of two, and of a power of two
cfg = read("tests", "data", "models", "bloom-alibi", "config.json")
seed("fuzz_modeldir", bytes([11]) + cfg)
c = json.loads(cfg)
c.update({"n_head": 8, "n_embed": 48, "hidden_size": 999, "apply_residual_connection_post_layernorm": False})
seed("fuzz_modeldir", bytes([11]) + js(c))
# the parallel blocks on one norm (selectors 12-14): as is, and with what their families refuse or
# read differently (qk_layernorm, GPT-J's rotary_dim null = every dim, use_qk_norm)
for k, fixture in enumerate(["phi-partial", "gptj-interleaved", "cohere-interleaved"], start=12):
    cfg = read("tests", "data", "models", fixture, "config.json")
    seed("fuzz_modeldir", bytes([k]) + cfg)
    c = json.loads(cfg)
    if k == 12:
        c.update({"qk_layernorm": True, "partial_rotary_factor": 0.5})
    elif k == 13:
        c.update({"rotary_dim": None, "n_inner": 64})
    else:
        c.update({"use_qk_norm": True, "attention_bias": True})
    seed("fuzz_modeldir", bytes([k]) + js(c))
# decoder fixtures of later families (selectors 15-17): config.json as is, and with its quirk varied
FAMILY_SEEDS = [
    ("olmo-clip", {"clip_qkv": None, "attention_bias": True}),  # no clamp; biases the file lacks
    ("olmo2-qknorm", {"num_key_value_heads": 4}),  # k_norm then 32 wide: a shape error
    ("granite-mult", {"attention_multiplier": None, "residual_multiplier": 0.0}),  # default 1.0; refused 0
]
for k, (fixture, change) in enumerate(FAMILY_SEEDS, start=15):
    cfg = read("tests", "data", "models", fixture, "config.json")
    seed("fuzz_modeldir", bytes([k]) + cfg)
    seed("fuzz_modeldir", bytes([k]) + js(dict(json.loads(cfg), **change)))
# OPT (selector 20): as is; opt-350m's post-LN with word_embed_proj_dim != hidden (refused), the
# projection width alone (refused), enable_bias false (the file's biases unread) and the refused keys
cfg = read("tests", "data", "models", "opt-offset", "config.json")
seed("fuzz_modeldir", bytes([20]) + cfg)
for change in ({"do_layer_norm_before": False, "word_embed_proj_dim": 16}, {"word_embed_proj_dim": 16},
               {"enable_bias": False, "max_position_embeddings": 66},
               {"_remove_final_layer_norm": True, "layer_norm_elementwise_affine": False}):
    seed("fuzz_modeldir", bytes([20]) + js(dict(json.loads(cfg), **change)))
# SmolLM3 (selector 18): NoPE layers from no_rope_layer_interval, from an explicit no_rope_layers list
# (one entry too few: an error), and the refused use_sliding_window
cfg = read("tests", "data", "models", "smollm3-nope", "config.json")
seed("fuzz_modeldir", bytes([18]) + cfg)
seed("fuzz_modeldir", bytes([18]) + js(dict(json.loads(cfg), no_rope_layers=[0, 1])))
seed("fuzz_modeldir", bytes([18]) + js(dict(json.loads(cfg), no_rope_layers=[1])))
seed("fuzz_modeldir", bytes([18]) + js(dict(json.loads(cfg), use_sliding_window=True, sliding_window=4)))
# StableLM (selector 19): per-head q/k LayerNorm gains ({H} tensor names); without qk_layernorm (the
# gains unused); with GQA (k_layernorm.norms.2 and .3 then missing); use_parallel_residual (refused)
cfg = read("tests", "data", "models", "stablelm-qkln", "config.json")
seed("fuzz_modeldir", bytes([19]) + cfg)
seed("fuzz_modeldir", bytes([19]) + js(dict(json.loads(cfg), qk_layernorm=False, use_qkv_bias=False)))
seed("fuzz_modeldir", bytes([19]) + js(dict(json.loads(cfg), num_key_value_heads=4)))
seed("fuzz_modeldir", bytes([19]) + js(dict(json.loads(cfg), use_parallel_residual=True)))
# OLMo 3 (selector 21): sliding/full layers from layer_types; without it (every 4th layer full); a wrong
# kind (an error); YaRN given an attention_factor, or no rope_scaling; a null sliding_window (an error)
cfg = read("tests", "data", "models", "olmo3-yarn", "config.json")
seed("fuzz_modeldir", bytes([21]) + cfg)
for change in ({"layer_types": None}, {"layer_types": ["sliding_attention", "chunked_attention", "full_attention"]},
               {"rope_scaling": dict(json.loads(cfg)["rope_scaling"], attention_factor=1.5)}, {"rope_scaling": None},
               {"sliding_window": None}):
    seed("fuzz_modeldir", bytes([21]) + js(dict(json.loads(cfg), **change)))
# GPTBigCode (selector 22): multi_query as is; absent (the default, true); false (refused by name);
# scale_attn_weights false with n_inner null (4 x hidden, a c_fc the file does not have: a shape error)
cfg = read("tests", "data", "models", "bigcode-mqa", "config.json")
seed("fuzz_modeldir", bytes([22]) + cfg)
c = json.loads(cfg)
del c["multi_query"]
seed("fuzz_modeldir", bytes([22]) + js(c))
seed("fuzz_modeldir", bytes([22]) + js(dict(json.loads(cfg), multi_query=False)))
seed("fuzz_modeldir", bytes([22]) + js(dict(json.loads(cfg), scale_attn_weights=False, n_inner=None)))
# Falcon (selector 23, the new decoder architecture): as is; num_ln_in_parallel_attn 1 (one norm, ln_mlp
# unread); parallel_attn false (refused by name); the old layout with multi_query (a query_key_value of
# another width: a shape error); the older key names n_layer / n_head / n_head_kv
cfg = read("tests", "data", "models", "falcon-gqa", "config.json")
seed("fuzz_modeldir", bytes([23]) + cfg)
for change in ({"num_ln_in_parallel_attn": 1}, {"parallel_attn": False}, {"new_decoder_architecture": False}):
    seed("fuzz_modeldir", bytes([23]) + js(dict(json.loads(cfg), **change)))
c = json.loads(cfg)
c["n_layer"], c["n_head"], c["n_head_kv"] = c.pop("num_hidden_layers"), c.pop("num_attention_heads"), c.pop("num_kv_heads")
seed("fuzz_modeldir", bytes([23]) + js(c))
# Falcon (selector 24, falcon-rw-1b's ALiBi): as is; alibi false (rotary instead); parallel_attn true (one
# norm, post_attention_layernorm unread); multi_query true (a shape error); bias false (biases unread)
cfg = read("tests", "data", "models", "falcon-alibi", "config.json")
seed("fuzz_modeldir", bytes([24]) + cfg)
for change in ({"alibi": False}, {"parallel_attn": True}, {"multi_query": True}, {"bias": False}):
    seed("fuzz_modeldir", bytes([24]) + js(dict(json.loads(cfg), **change)))
# Mixtral (selector 25): every layer a MoE as is; norm_topk_prob given false (Mixtral ignores the key: it
# always renormalises); top-k of all 4 experts; more experts than the file has (a missing-tensor error);
# num_experts_per_tok above num_local_experts (an error); a sliding window
cfg = read("tests", "data", "models", "mixtral-moe", "config.json")
seed("fuzz_modeldir", bytes([25]) + cfg)
for change in ({"norm_topk_prob": False}, {"num_experts_per_tok": 4}, {"num_local_experts": 5},
               {"num_experts_per_tok": 5}, {"sliding_window": 4}):
    seed("fuzz_modeldir", bytes([25]) + js(dict(json.loads(cfg), **change)))
# OLMoE (selector 26): as is (not renormalised); norm_topk_prob true; clip_qkv (refused by name); 4 KV heads
# (k_proj and k_norm then 32 wide: a shape error); top-8 of 8 experts
cfg = read("tests", "data", "models", "olmoe-moe", "config.json")
seed("fuzz_modeldir", bytes([26]) + cfg)
for change in ({"norm_topk_prob": True}, {"clip_qkv": 2.0}, {"num_key_value_heads": 4}, {"num_experts_per_tok": 8}):
    seed("fuzz_modeldir", bytes([26]) + js(dict(json.loads(cfg), **change)))
# Qwen3-MoE (selector 27): as is (layer 0 routes, layer 1 dense by mlp_only_layers); decoder_sparse_step 2 and
# an empty mlp_only_layers (the other layers' tensors are missing: errors); mlp_only_layers naming no layer
# (ignored, as transformers does: layer 1 then routes, a missing tensor); norm_topk_prob false;
# use_sliding_window (refused by name); experts wider than the file's
cfg = read("tests", "data", "models", "qwen3moe-dense", "config.json")
seed("fuzz_modeldir", bytes([27]) + cfg)
for change in ({"decoder_sparse_step": 2}, {"mlp_only_layers": []}, {"mlp_only_layers": [5]}, {"norm_topk_prob": False},
               {"use_sliding_window": True}, {"moe_intermediate_size": 32}):
    seed("fuzz_modeldir", bytes([27]) + js(dict(json.loads(cfg), **change)))
# DeepSeek-V3 (selector 29): latent attention and the grouped router as is; q_lora_rank null (a q_proj the
# file lacks: a missing-tensor error); rope_interleave false; all layers dense (first_k_dense_replace 3: the
# dense MLP missing on layers 1-2, an error); one group (n_group 1, topk_group 1); groups of one expert (an
# error); yarn with mscale_all_dim; attention_bias true (refused by name); v_head_dim not the file's
cfg = read("tests", "data", "models", "deepseek-mla", "config.json")
seed("fuzz_modeldir", bytes([29]) + cfg)
for change in ({"q_lora_rank": None}, {"rope_interleave": False}, {"first_k_dense_replace": 3},
               {"n_group": 1, "topk_group": 1}, {"n_group": 12, "topk_group": 3},
               {"rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024,
                                 "mscale": 1.0, "mscale_all_dim": 1.0}},
               {"attention_bias": True}, {"v_head_dim": 8}):
    seed("fuzz_modeldir", bytes([29]) + js(dict(json.loads(cfg), **change)))
# gpt-oss (selector 28): as is (sinks, sliding/full layer_types, YaRN truncate false, MXFP4 experts); the
# MXFP4 blocks of another shape than config.json says (intermediate_size 64, hidden 64: a one-line error
# naming the tensor), more experts than the file has, top-k above the experts, another quant_method
# (refused), no quantization_config (dense experts: refused), YaRN truncate true, no layer_types
cfg = read("tests", "data", "models", "gptoss-sinks", "config.json")
seed("fuzz_modeldir", bytes([28]) + cfg)
for change in ({"intermediate_size": 64}, {"hidden_size": 64}, {"num_local_experts": 8}, {"experts_per_token": 5,
               "num_experts_per_tok": 5}, {"quantization_config": {"quant_method": "bitsandbytes"}},
               {"quantization_config": None}, {"swiglu_limit": 0.0}, {"layer_types": None},
               {"rope_scaling": dict(json.loads(cfg)["rope_scaling"], truncate=True)}):
    seed("fuzz_modeldir", bytes([28]) + js(dict(json.loads(cfg), **change)))
# Llama 4 (selector 30): as is (dense layer 0 with chunks, MoE layer 1 NoPE with temperature tuning); every
# layer dense (moe_layers []: layer 1's dense tensors missing) or routing (step 1, no list: layer 0's router
# missing); no_rope_layers [] and no layer_types (every 4th layer NoPE: none of 2, chunks everywhere);
# Scout's attn_temperature_tuning 4 with use_qk_norm false; chunk size null (the default) or 0 (an error);
# a sliding layer (no window: an error); floor_scale 0 (an error)
cfg = read("tests", "data", "models", "llama4-moe", "config.json")
seed("fuzz_modeldir", bytes([30]) + cfg)
for change in ({"moe_layers": []}, {"interleave_moe_layer_step": 1}, {"no_rope_layers": [], "layer_types": None},
               {"attn_temperature_tuning": 4, "use_qk_norm": False}, {"attention_chunk_size": None},
               {"attention_chunk_size": 0}, {"layer_types": ["sliding_attention", "full_attention"]},
               {"floor_scale": 0}):
    seed("fuzz_modeldir", bytes([30]) + js(dict(json.loads(cfg), **change)))
# BART (selector 31, an encoder-decoder): as is; more or fewer decoder layers than the file (an error / a
# shorter decoder), decoder_start_token_id out of the vocabulary, scale_embedding off, other heads or MLP size
# in the decoder (refused), pre-LN mBART's model_type on BART's tensors (its final norms missing)
cfg = read("tests", "data", "models", "bart-encdec", "config.json")
seed("fuzz_modeldir", bytes([31]) + cfg)
for change in ({"decoder_layers": 4}, {"decoder_layers": 1}, {"decoder_start_token_id": 99999},
               {"scale_embedding": False}, {"decoder_attention_heads": 4}, {"decoder_ffn_dim": 7},
               {"model_type": "mbart"}, {"model_type": "t5"}):
    seed("fuzz_modeldir", bytes([31]) + js(dict(json.loads(cfg), **change)))

# ---------------------------------------------------------------- tokenizer files
bert_vocab = read("tests", "data", "tokenizer", "bert", "vocab.txt").split(b"\n")
small_vocab = b"\n".join(bert_vocab[:120] + bert_vocab[1000:1200] + bert_vocab[7000:7100]) + b"\n"
bert_cfg = read("tests", "data", "tokenizer", "bert-cased", "tokenizer_config.json")
bert_added = read("tests", "data", "tokenizer", "bert-json", "added_tokens.json")
seed("fuzz_tokfiles", b"\x00" + small_vocab)
seed("fuzz_tokfiles", b"\x00" + small_vocab + SEP + bert_cfg + SEP + SEP + bert_added)
seed("fuzz_tokfiles", b"\x00" + small_vocab + SEP + js({"never_split": ["[X]"], "strip_accents": False,
                                                        "do_lower_case": True}) + SEP +
     js({"additional_special_tokens": ["the", {"content": "a", "rstrip": True}]}))

odd_v = read("tests", "data", "tokenizer", "bpe-odd", "vocab.json")
odd_m = read("tests", "data", "tokenizer", "bpe-odd", "merges.txt")
seed("fuzz_tokfiles", b"\x01" + odd_v + SEP + odd_m)
gv = json.loads(read("tests", "data", "tokenizer", "gpt2", "vocab.json"))
gm = read("tests", "data", "tokenizer", "gpt2", "merges.txt").decode().split("\n")
merges = gm[1:201]
need = {"<|endoftext|>"}
for line in merges:
    a, b = line.split()
    need.update([a, b, a + b])
sv = {t: i for i, t in enumerate(sorted(need, key=lambda t: gv.get(t, 1 << 30)))}
small_merges = ("\n".join([gm[0]] + merges) + "\n").encode()
gjdir = ("tests", "data", "tokenizer", "gpt2-json")
seed("fuzz_tokfiles", b"\x01" + js(sv) + SEP + small_merges)
seed("fuzz_tokfiles", b"\x01" + js(sv) + SEP + small_merges + SEP + read(*gjdir, "tokenizer_config.json") + SEP +
     read(*gjdir, "special_tokens_map.json") + SEP + read(*gjdir, "added_tokens.json"))

bj = json.loads(read("tests", "data", "tokenizer", "bert-json", "tokenizer.json"))
bj["model"]["vocab"] = {t: i for t, i in bj["model"]["vocab"].items() if i < 150 or 2000 <= i < 2100}
seed("fuzz_tokfiles", b"\x02" + js(bj))
seed("fuzz_tokfiles", b"\x02" + js(bj) + SEP + bert_cfg + SEP + SEP + bert_added)
gj = json.loads(read(*gjdir, "tokenizer.json"))
gj_merges = gj["model"]["merges"][:150]
need = {"<|endoftext|>"}
for m in gj_merges:
    a, b = m.split() if isinstance(m, str) else m
    need.update([a, b, a + b])
gj["model"]["vocab"] = {t: i for t, i in gj["model"]["vocab"].items() if t in need}
gj["model"]["merges"] = gj_merges
seed("fuzz_tokfiles", b"\x03" + js(gj))
gj["model"]["merges"] = [m.split() if isinstance(m, str) else m for m in gj_merges[:40]]
seed("fuzz_tokfiles", b"\x03" + js(gj) + SEP + read(*gjdir, "tokenizer_config.json") + SEP +
     read(*gjdir, "special_tokens_map.json") + SEP + read(*gjdir, "added_tokens.json"))

# ---------------------------------------------------------------- texts
cases = json.loads(read("tests", "data", "tokenizer", "cases.json"))
fixtures = {"bert": 0, "gpt2": 1, "bert-json": 2, "gpt2-json": 3}
seen = set()
for c in cases:
    text, tb = c["text"].encode(), c["text_b"]
    if c["fixture"] not in fixtures or len(text) > 300 or (text, tb) in seen or len(seen) >= 60:
        continue
    seen.add((text, tb))
    ml = c["max_len"] if 0 < c["max_len"] < 32 else 0
    sel = fixtures[c["fixture"]] | (4 if tb is not None else 0) | (ml << 3)
    seed("fuzz_encode", bytes([sel]) + text + (b"\x00" + tb.encode() if tb is not None else b""))
seed("fuzz_encode", b"\x01caf\xc3 ok")
seed("fuzz_encode", b"\x05[CLS] a\x00b <|endoftext|>")

# ---------------------------------------------------------------- YAML
for t in sorted(os.listdir(os.path.join(TOP, "themes"))):
    if t.endswith(".yaml"):
        seed("fuzz_yaml", b"\x00" + read("themes", t))
seed("fuzz_yaml", b"\x01model: bert-base-uncased\ntheme: cividis\nkeys:\n  down: [j, Down, C-n]\n  quit: Q\n"
     b"  help: F1\n  up: [k, S-Tab, PageUp, Space, \"\xc3\xa9\"]\n")
seed("fuzz_yaml", b"\x01keys: {left: h, right: l}\n")
for f in sorted(os.listdir(os.path.join(TOP, "models", "families"))):
    if f.endswith(".yaml"):
        seed("fuzz_yaml", b"\x02" + read("models", "families", f))


# ---------------------------------------------------------------- fuzz_spm
# SentencePiece models cut down from ../shared/reference (when present): the first pieces only and
# no precompiled normalization table, so a seed is a few KB. Only the top level of the protobuf is
# walked (field 1 = pieces, 3 = normalizer_spec with field 2 = precompiled_charsmap).
def pb_varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def pb_fields(b):
    i, out = 0, []
    while i < len(b):
        start = i
        tag, i = pb_varint(b, i)
        wt = tag & 7
        if wt == 0:
            _, i = pb_varint(b, i)
        elif wt == 2:
            n, i = pb_varint(b, i)
            i += n
        elif wt == 5:
            i += 4
        elif wt == 1:
            i += 8
        else:
            raise ValueError("wire type %d" % wt)
        out.append((tag >> 3, b[start:i]))
    return out


def pb_payload(field):
    _, i = pb_varint(field, 0)
    _, i = pb_varint(field, i)
    return field[i:]


def small_spm(model, keep):
    out, n = b"", 0
    for num, f in pb_fields(model):
        if num == 1:
            n += 1
            if n > keep:
                continue
        elif num == 3:
            body = b"".join(g for k, g in pb_fields(pb_payload(f)) if k != 2)
            f = bytes([0x1A]) + bytes(varint_bytes(len(body))) + body
        out += f
    return out


def varint_bytes(v):
    out = []
    while True:
        c = v & 0x7F
        v >>= 7
        out.append(c | (0x80 if v else 0))
        if not v:
            return out


SHARED = os.path.join(os.environ.get("ATTNSCOPE_SHARED_REF") or os.path.join(TOP, "..", "shared", "reference"), "models")
for sel, (folder, name) in enumerate([("xlmr-tiny", "sentencepiece.bpe.model"), ("albert-tiny", "spiece.model"),
                                      ("deberta-v3-tiny", "spm.model")]):
    p = os.path.join(SHARED, folder, name)
    if not os.path.exists(p):
        continue
    with open(p, "rb") as f:
        m = small_spm(f.read(), 300)
    seed("fuzz_spm", bytes([sel]) + "Héllo, 1,000 wörlds! 日本 😀 [MASK] <mask>".encode() + SEP + SEP + m)
    seed("fuzz_spm", bytes([sel]) + b"``a''  b" + SEP + js({"do_lower_case": True, "keep_accents": True,
                                                           "split_by_punct": True}) + SEP + m)


def spm_pieces(model):
    """The piece strings of a (cut) model, in id order: field 1 of each SentencePiece message."""
    out = []
    for num, f in pb_fields(model):
        if num == 1:
            out += [pb_payload(g).decode() for k, g in pb_fields(pb_payload(f)) if k == 1]
    return out


# The encoder-decoder kinds (selectors 3-8): T5, mBART, Marian (config part = vocab.json), NLLB, Pegasus,
# M2M100 (config part = vocab.json).
for sel, folder, name, cfg in [
        (3, "t5-tiny", "spiece.model", {"extra_ids": 100, "tokenizer_class": "T5Tokenizer"}),
        (4, "mbart-tiny", "sentencepiece.bpe.model", {"src_lang": "en_XX", "tgt_lang": "de_DE"}),
        (4, "mbart-tiny", "sentencepiece.bpe.model", {"tokenizer_class": "MBart50Tokenizer", "tgt_lang": "sl_SI"}),
        (5, "marian-tiny", "source.spm", None),
        (6, "nllb-tiny", "sentencepiece.bpe.model", {"src_lang": "eng_Latn", "tgt_lang": "deu_Latn",
                                                     "legacy_behaviour": False}),
        (7, "pegasus-tiny", "spiece.model", {"tokenizer_class": "PegasusTokenizer"}),
        (8, "nllb-tiny", "sentencepiece.bpe.model", "m2m100")]:
    p = os.path.join(SHARED, folder, name)
    if not os.path.exists(p):
        continue
    with open(p, "rb") as f:
        m = small_spm(f.read(), 300)
    if cfg is None:
        # MarianTokenizer's vocab.json: </s> 0, <unk> 1, the pieces, <pad> last
        vocab = {"</s>": 0, "<unk>": 1}
        for piece in spm_pieces(m):
            vocab.setdefault(piece, len(vocab))
        vocab["<pad>"] = len(vocab)
        conf = js(vocab)
    elif cfg == "m2m100":
        # M2M100Tokenizer's vocab.json: fairseq's <s> <pad> </s> <unk>, then the pieces
        vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
        for piece in spm_pieces(m):
            vocab.setdefault(piece, len(vocab))
        conf = js(vocab)
    else:
        conf = js(cfg)
    seed("fuzz_spm", bytes([sel]) + "Das Buch, >>de<< 1,000 wörlds! 日本 😀 </s> <mask> <extra_id_0> <mask_1> de_DE".encode()
         + SEP + conf + SEP + m)
    seed("fuzz_spm", bytes([sel]) + b"" + SEP + conf + SEP + m)
