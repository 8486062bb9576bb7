#!/usr/bin/python3
"""ref_decoder.py -- an independent numpy reference of the modern decoder families.

What Hugging Face transformers' base models compute for Llama, Mistral, Qwen2, Qwen3, Gemma,
Gemma 2, Gemma 3 (text), Phi-3, GPT-NeoX / Pythia, StarCoder2, GPT-Neo, BLOOM, Phi, GPT-J, Cohere, OLMo,
OLMo 2, Granite, GPTBigCode, Falcon, SmolLM3, OLMo 3 (configuration/modeling_smollm3.py, _olmo3.py of 4.57), DeepSeek-V3
(its own forward pass: latent attention and its grouped sigmoid router, deepseek_forward), gpt-oss (_gpt_oss.py of 4.57,
its own forward too, gpt_oss_forward) and Llama 4's text model (configuration/modeling_llama4.py: chunks, NoPE layers
with temperature tuning, the L2 q/k norm after rotary, the sigmoid-routed experts with a shared one), written from the
published modeling and
configuration code of transformers 4.51 (no transformers or torch import): one generic pre-norm
decoder driven by per-family settings (see `settings()`), in the spirit of TransformerLens.
The safetensors reader and the activations are ref_forward.py's (BERT / GPT-2 stay there).

Precision: float64 by default. Weights are widened from float32 (F16/BF16 files are converted to
float32 first, as transformers loads them). A few values transformers computes in float32 and
which change the result measurably are rounded to float32 exactly as it does, then used in
float64: the rotary inverse frequencies (`inv_freq` buffer), the rotary angles
position * inv_freq (a float32 product in transformers: at position 60 its rounding alone moves
q_rot by ~1e-6 relative), Gemma's embedding scale float32(sqrt(hidden)) and the Gemma norms'
float32 (1 + w). `--float32` runs everything in float32 instead, to measure how far a correct
float32 implementation lands.

Library use:
    import ref_decoder
    model = ref_decoder.load_model("tests/data/models/llama-gqa")
    out = ref_decoder.forward(model, ids)        # dict of numpy arrays, see forward()

Command line (Debian's /usr/bin/python3, which has numpy):
    ref_decoder.py verify [--float32] [CASES_DIR [MODELS_DIR]]
        run every decoder case of CASES_DIR (default /work/shared/reference/cases, whose models
        are in ../models) from its ids and print the max |difference| per quantity
    ref_decoder.py run MODEL_DIR ID [ID ...]     print the attentions of one run
    ref_decoder.py check MODEL_DIR               load the model or print why it is refused
"""

import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ref_forward import ablate_context, activation, layer_norm, read_checkpoint, softmax  # noqa: E402

F32 = np.float32
FAMILIES = ("llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text", "phi3", "gpt_neox")
FAMILIES += ("starcoder2",)
FAMILIES += ("gpt_neo",)
FAMILIES += ("bloom",)
FAMILIES += ("phi", "gptj", "cohere")
FAMILIES += ("olmo",)
FAMILIES += ("olmo2",)
FAMILIES += ("granite",)
FAMILIES += ("opt",)
FAMILIES += ("smollm3",)
FAMILIES += ("stablelm",)
FAMILIES += ("olmo3",)
FAMILIES += ("gpt_bigcode",)
FAMILIES += ("llama4_text",)
FAMILIES += ("deepseek_v3",)
FAMILIES += ("falcon",)
FAMILIES += ("mixtral",)
FAMILIES += ("olmoe",)
FAMILIES += ("qwen3_moe",)
MOE_FAMILIES = ("mixtral", "olmoe", "qwen3_moe")  # a sparse mixture of experts for the MLP (see _moe_settings and moe_block)
FAMILIES += ("gpt_oss",)


class Unsupported(ValueError):
    """A configuration this reference (and so attnscope) does not run."""


# ---------------------------------------------------------------------------------------------
# config.json -> settings. Defaults are those of each transformers configuration class (4.51).

DEFAULTS = {
    "llama": dict(vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                  num_attention_heads=32, num_key_value_heads=None, hidden_act="silu",
                  max_position_embeddings=2048, rms_norm_eps=1e-6, rope_theta=10000.0, rope_scaling=None,
                  attention_bias=False, mlp_bias=False, head_dim=None),
    "mistral": dict(vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                    num_attention_heads=32, num_key_value_heads=8, head_dim=None, hidden_act="silu",
                    max_position_embeddings=4096 * 32, rms_norm_eps=1e-6, rope_theta=10000.0,
                    sliding_window=4096, rope_scaling=None),
    "qwen2": dict(vocab_size=151936, hidden_size=4096, intermediate_size=22016, num_hidden_layers=32,
                  num_attention_heads=32, num_key_value_heads=32, hidden_act="silu",
                  max_position_embeddings=32768, rms_norm_eps=1e-6, rope_theta=10000.0, rope_scaling=None,
                  use_sliding_window=False, sliding_window=4096, max_window_layers=28),
    "qwen3": dict(vocab_size=151936, hidden_size=4096, intermediate_size=22016, num_hidden_layers=32,
                  num_attention_heads=32, num_key_value_heads=32, head_dim=128, hidden_act="silu",
                  max_position_embeddings=32768, rms_norm_eps=1e-6, rope_theta=10000.0, rope_scaling=None,
                  attention_bias=False, use_sliding_window=False, sliding_window=4096, max_window_layers=28),
    "gemma": dict(vocab_size=256000, hidden_size=3072, intermediate_size=24576, num_hidden_layers=28,
                  num_attention_heads=16, num_key_value_heads=16, head_dim=256,
                  hidden_act="gelu_pytorch_tanh", hidden_activation=None, max_position_embeddings=8192,
                  rms_norm_eps=1e-6, rope_theta=10000.0, attention_bias=False, rope_scaling=None),
    "gemma2": dict(vocab_size=256000, hidden_size=2304, intermediate_size=9216, num_hidden_layers=26,
                   num_attention_heads=8, num_key_value_heads=4, head_dim=256,
                   hidden_activation="gelu_pytorch_tanh", max_position_embeddings=8192, rms_norm_eps=1e-6,
                   rope_theta=10000.0, attention_bias=False, query_pre_attn_scalar=256, sliding_window=4096,
                   final_logit_softcapping=30.0, attn_logit_softcapping=50.0, rope_scaling=None),
    "gemma3_text": dict(vocab_size=262208, hidden_size=2304, intermediate_size=9216, num_hidden_layers=26,
                        num_attention_heads=8, num_key_value_heads=4, head_dim=256,
                        hidden_activation="gelu_pytorch_tanh", max_position_embeddings=131072,
                        rms_norm_eps=1e-6, rope_theta=1000000.0, attention_bias=False,
                        query_pre_attn_scalar=256, sliding_window=4096, final_logit_softcapping=None,
                        attn_logit_softcapping=None, rope_scaling=None, rope_local_base_freq=10000.0,
                        sliding_window_pattern=6),
    "phi3": dict(vocab_size=32064, hidden_size=3072, intermediate_size=8192, num_hidden_layers=32,
                 num_attention_heads=32, num_key_value_heads=None, hidden_act="silu",
                 max_position_embeddings=4096, original_max_position_embeddings=4096, rms_norm_eps=1e-5,
                 rope_theta=10000.0, rope_scaling=None, partial_rotary_factor=1.0, sliding_window=None),
    "gpt_neox": dict(vocab_size=50432, hidden_size=6144, num_hidden_layers=44, num_attention_heads=64,
                     intermediate_size=24576, hidden_act="gelu", rotary_pct=0.25, rotary_emb_base=10000,
                     max_position_embeddings=2048, layer_norm_eps=1e-5, use_parallel_residual=True,
                     rope_scaling=None, attention_bias=True),
    "starcoder2": dict(vocab_size=49152, hidden_size=3072, intermediate_size=12288, num_hidden_layers=30,
                       num_attention_heads=24, num_key_value_heads=2, hidden_act="gelu_pytorch_tanh",
                       max_position_embeddings=4096, norm_epsilon=1e-5, rope_theta=10000.0, rope_scaling=None,
                       sliding_window=None, use_bias=True),
    "gpt_neo": dict(vocab_size=50257, max_position_embeddings=2048, hidden_size=2048, num_layers=24,
                    attention_types=[[["global", "local"], 12]], num_heads=16, intermediate_size=None,
                    window_size=256, activation_function="gelu_new", layer_norm_epsilon=1e-5),
    # BloomConfig: n_layer / n_head are the stored names (num_hidden_layers / num_attention_heads map to
    # them), n_embed overrides hidden_size; no position limit (ALiBi), no activation key (BloomGelu)
    "bloom": dict(vocab_size=250880, hidden_size=64, n_layer=2, n_head=8, layer_norm_epsilon=1e-5,
                  apply_residual_connection_post_layernorm=False),
    "phi": dict(vocab_size=51200, hidden_size=2048, intermediate_size=8192, num_hidden_layers=24,
                num_attention_heads=32, num_key_value_heads=None, hidden_act="gelu_new",
                max_position_embeddings=2048, layer_norm_eps=1e-5, rope_theta=10000.0, rope_scaling=None,
                partial_rotary_factor=0.5, qk_layernorm=False),
    "gptj": dict(vocab_size=50400, n_positions=2048, n_embd=4096, n_layer=28, n_head=16, rotary_dim=64,
                 n_inner=None, activation_function="gelu_new", layer_norm_epsilon=1e-5),
    "cohere": dict(vocab_size=256000, hidden_size=8192, intermediate_size=22528, num_hidden_layers=40,
                   num_attention_heads=64, num_key_value_heads=None, hidden_act="silu",
                   max_position_embeddings=8192, layer_norm_eps=1e-5, rope_theta=10000.0, rope_scaling=None,
                   attention_bias=False, use_qk_norm=False, logit_scale=0.0625),
}

# The parallel-block families on one norm: x + attn(ln(x)) + mlp(ln(x)). Their tensor names, each
# relative to the layer prefix (or the model for embed / final), as the base classes save them.
NAMES = {
    "phi": dict(layer="layers.%d.", embed="embed_tokens", final="final_layernorm", ln1="input_layernorm",
                q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.dense",
                up="mlp.fc1", down="mlp.fc2"),
    "gptj": dict(layer="h.%d.", embed="wte", final="ln_f", ln1="ln_1", q="attn.q_proj", k="attn.k_proj",
                 v="attn.v_proj", o="attn.out_proj", up="mlp.fc_in", down="mlp.fc_out"),
    "cohere": dict(layer="layers.%d.", embed="embed_tokens", final="norm", ln1="input_layernorm",
                   q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.o_proj",
                   gate="mlp.gate_proj", up="mlp.up_proj", down="mlp.down_proj"),
}
# OLMo (configuration_olmo.py): LayerNorms without parameters (eps 1e-5 in the code), clip_qkv
DEFAULTS["olmo"] = dict(vocab_size=50304, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                        num_attention_heads=32, num_key_value_heads=None, hidden_act="silu",
                        max_position_embeddings=2048, rope_theta=10000.0, rope_scaling=None,
                        attention_bias=False, clip_qkv=None)
# OLMo 2 (configuration_olmo2.py): q/k RMSNorm over the whole projection, norms after attention and MLP
DEFAULTS["olmo2"] = dict(vocab_size=50304, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                         num_attention_heads=32, num_key_value_heads=None, hidden_act="silu",
                         max_position_embeddings=2048, rope_theta=10000.0, rope_scaling=None,
                         attention_bias=False, rms_norm_eps=1e-5)
# Granite (configuration_granite.py): the multipliers default to 1.0 (attention's too, not 1/sqrt(d))
DEFAULTS["granite"] = dict(vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                           num_attention_heads=32, num_key_value_heads=None, hidden_act="silu",
                           max_position_embeddings=2048, rms_norm_eps=1e-6, rope_theta=10000.0, rope_scaling=None,
                           attention_bias=False, mlp_bias=False, embedding_multiplier=1.0, logits_scaling=1.0,
                           residual_multiplier=1.0, attention_multiplier=1.0)

# OPT (configuration_opt.py): word_embed_proj_dim None = hidden_size; no LayerNorm eps key (nn.LayerNorm's 1e-5)
DEFAULTS["opt"] = dict(vocab_size=50272, hidden_size=768, num_hidden_layers=12, ffn_dim=3072,
                       max_position_embeddings=2048, do_layer_norm_before=True, _remove_final_layer_norm=False,
                       word_embed_proj_dim=None, num_attention_heads=12, activation_function="relu",
                       enable_bias=True, layer_norm_elementwise_affine=True)
# OPT's tensor names (OPTDecoder, after the `decoder.` prefix) -> the generic ones this file uses
OPT_NAMES = (("embed_positions.", "wpe."), ("final_layer_norm.", "norm."),
             (".self_attn_layer_norm.", ".input_layernorm."), (".final_layer_norm.", ".post_attention_layernorm."),
             (".self_attn.out_proj.", ".self_attn.o_proj."), (".fc1.", ".mlp.c_fc."), (".fc2.", ".mlp.c_proj."))
# SmolLM3 (configuration_smollm3.py, 4.57): Llama's block; no_rope_layers [1 = rotary, 0 = none] per layer,
# else every no_rope_layer_interval-th layer without rotary; use_sliding_window off by default
DEFAULTS["smollm3"] = dict(vocab_size=128256, hidden_size=2048, intermediate_size=11008, num_hidden_layers=36,
                           num_attention_heads=16, num_key_value_heads=4, hidden_act="silu",
                           max_position_embeddings=32768, rms_norm_eps=1e-6, rope_theta=2000000.0, rope_scaling=None,
                           use_sliding_window=False, sliding_window=None, no_rope_layers=None,
                           no_rope_layer_interval=4, layer_types=None, attention_bias=False, mlp_bias=False)
# GPTBigCode (configuration_gpt_bigcode.py): multi_query true by default; n_inner None = 4 * n_embd
DEFAULTS["gpt_bigcode"] = dict(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12, n_inner=None,
                               activation_function="gelu_pytorch_tanh", layer_norm_epsilon=1e-5,
                               scale_attn_weights=True, multi_query=True, attention_softmax_in_fp32=True,
                               scale_attention_softmax_in_fp32=True)
# Mixtral (configuration_mixtral.py): Mistral's attention (sliding_window None by default), rms_norm_eps 1e-5,
# rope_theta 1e6; num_local_experts SwiGLU experts of intermediate_size, num_experts_per_tok per token
DEFAULTS["mixtral"] = dict(vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                           num_attention_heads=32, num_key_value_heads=8, head_dim=None, hidden_act="silu",
                           max_position_embeddings=4096 * 32, rms_norm_eps=1e-5, rope_theta=1e6, sliding_window=None,
                           rope_scaling=None, num_experts_per_tok=2, num_local_experts=8)
# OLMoE (configuration_olmoe.py): norm_topk_prob false, 64 experts, 8 per token; clip_qkv None
DEFAULTS["olmoe"] = dict(vocab_size=50304, hidden_size=2048, intermediate_size=2048, num_hidden_layers=16,
                         num_attention_heads=16, num_key_value_heads=None, hidden_act="silu",
                         max_position_embeddings=4096, rms_norm_eps=1e-5, rope_theta=10000.0, rope_scaling=None,
                         attention_bias=False, clip_qkv=None, num_experts_per_tok=8, num_experts=64,
                         norm_topk_prob=False)
# Qwen3-MoE (configuration_qwen3_moe.py): Qwen3's attention; experts on every decoder_sparse_step-th layer
# not in mlp_only_layers, moe_intermediate_size wide; the other layers a SwiGLU of intermediate_size
DEFAULTS["qwen3_moe"] = dict(vocab_size=151936, hidden_size=2048, intermediate_size=6144, num_hidden_layers=24,
                             num_attention_heads=32, num_key_value_heads=4, head_dim=None, hidden_act="silu",
                             max_position_embeddings=32768, rms_norm_eps=1e-6, rope_theta=10000.0, rope_scaling=None,
                             attention_bias=False, use_sliding_window=False, sliding_window=4096, max_window_layers=28,
                             decoder_sparse_step=1, moe_intermediate_size=768, num_experts_per_tok=8, num_experts=128,
                             norm_topk_prob=False, mlp_only_layers=None)
# GPTBigCodeModel's tensor names -> the generic ones this file uses (Linear [out, in] weights throughout)
BIGCODE_NAMES = (("wte.", "embed_tokens."), ("ln_f.", "norm."), (".ln_1.", ".input_layernorm."),
                 (".ln_2.", ".post_attention_layernorm."), (".attn.c_attn.", ".self_attn.c_attn."),
                 (".attn.c_proj.", ".self_attn.o_proj."))


def _smollm3_nope(c):
    """Per layer, True where SmolLM3 applies no rotary (no_rope_layers[l] == 0)."""
    L = c["num_hidden_layers"]
    flags = c.get("no_rope_layers")
    if flags is None:  # SmolLM3Config: int((layer_idx + 1) % no_rope_layer_interval != 0)
        flags = [int((i + 1) % c["no_rope_layer_interval"] != 0) for i in range(L)]
    if len(flags) != L or any(f not in (0, 1) for f in flags):
        raise Unsupported("no_rope_layers must list 0 or 1 for each of the %d layers" % L)
    return [f == 0 for f in flags]

# StableLM (configuration_stablelm.py): LayerNorms with bias, partial rotary, use_qkv_bias, qk_layernorm
DEFAULTS["stablelm"] = dict(vocab_size=50304, intermediate_size=6912, hidden_size=2560, num_hidden_layers=32,
                            num_attention_heads=32, num_key_value_heads=32, hidden_act="silu",
                            max_position_embeddings=4096, layer_norm_eps=1e-5, rope_theta=10000.0, rope_scaling=None,
                            use_qkv_bias=False, qk_layernorm=False, use_parallel_residual=False,
                            partial_rotary_factor=0.25)

# OLMo 3 (configuration_olmo3.py / modeling_olmo3.py, 4.57): OLMo 2's layer; layer_types (default: every
# 4th layer, (l + 1) % 4 == 0, full, the rest sliding); Olmo3Model's rotary_embs: the sliding layers' one
# built with rope_type "default" (rope_theta, rope_scaling ignored), the full layers' with rope_scaling
DEFAULTS["olmo3"] = dict(vocab_size=50304, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                         num_attention_heads=32, num_key_value_heads=None, hidden_act="silu",
                         max_position_embeddings=2048, rope_theta=10000.0, rope_scaling=None,
                         attention_bias=False, rms_norm_eps=1e-5, sliding_window=4096, layer_types=None)

ROPE_TYPES = ("default", "linear", "dynamic", "llama3", "yarn")


def _rope_scaling(family, c):
    """The rope_scaling dict as the rotary classes read it, or None. transformers copies a "type"
    key over "rope_type" (backward compatibility), so "type" wins when both are present."""
    rs = c.get("rope_scaling")
    if rs is None:
        return None
    if not isinstance(rs, dict):
        raise Unsupported("rope_scaling must be an object, got %r" % (rs,))
    rs = dict(rs)
    kind = rs.get("type", rs.get("rope_type", "default"))
    if kind in ("su", "longrope"):
        raise Unsupported("rope_scaling type %r (LongRoPE) is not supported" % kind)
    if kind not in ROPE_TYPES:
        raise Unsupported("rope_scaling type %r is not supported (supported: %s)" % (kind, ", ".join(ROPE_TYPES)))
    rs["rope_type"] = kind
    need = {"linear": ["factor"], "dynamic": ["factor"], "yarn": ["factor"],
            "llama3": ["factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"]}
    for key in need.get(kind, []):
        if key not in rs:
            raise Unsupported("rope_scaling %s lacks %r" % (kind, key))
    return rs


def settings(cfg):
    """Everything the forward pass needs, from a config.json dict, as transformers 4.51 reads it."""
    family = cfg.get("model_type")
    if family == "gemma3":
        raise Unsupported("model_type gemma3 is the multimodal Gemma3ForConditionalGeneration; "
                          "only the text model (gemma3_text) is supported")
    if family not in FAMILIES:
        raise Unsupported("model_type %r is not a supported decoder family (%s)" % (family, ", ".join(FAMILIES)))
    if family == "llama4_text":
        return _llama4_settings(cfg)
    if family == "deepseek_v3":  # latent attention and its own MoE: see the DeepSeek-V3 section
        return deepseek_settings(cfg)
    if family == "gpt_oss":  # its own settings and forward (sinks, MoE, MXFP4): see gpt_oss_settings
        return gpt_oss_settings(cfg)
    for key in ("num_local_experts", "num_experts", "moe_intermediate_size"):
        if cfg.get(key) and family not in MOE_FAMILIES:
            raise Unsupported("mixture-of-experts configs (%s) are not supported" % key)
    c = dict(DEFAULTS[family])
    c.update(cfg)
    if family == "gpt_neo":  # GPTNeoConfig's attribute_map, and intermediate_size None = 4 * hidden
        c["num_hidden_layers"], c["num_attention_heads"] = c["num_layers"], c["num_heads"]
        c["intermediate_size"] = c["intermediate_size"] or 4 * c["hidden_size"]
    if family == "bloom":
        return _bloom_settings(c)
    if family == "falcon":
        return _falcon_settings(c)
    if family == "opt":
        c.update(intermediate_size=c["ffn_dim"], num_key_value_heads=None)
        if not c["do_layer_norm_before"]:
            raise Unsupported("OPT's post-LN blocks (do_layer_norm_before false, opt-350m) are not supported")
        if (c["word_embed_proj_dim"] or c["hidden_size"]) != c["hidden_size"]:
            raise Unsupported("OPT's project_in/project_out (word_embed_proj_dim != hidden_size) are not supported")
        if c["_remove_final_layer_norm"]:
            raise Unsupported("OPT without its final LayerNorm (_remove_final_layer_norm) is not supported")
        if not c["layer_norm_elementwise_affine"]:
            raise Unsupported("OPT's LayerNorms without weight and bias are not supported")
    if family == "gpt_bigcode":  # GPTBigCodeConfig's attribute_map; multi_query: ONE key/value head
        if not c["multi_query"]:
            # GPTBigCodeAttention then views c_attn's output as [heads, 3 * head_dim]: per-head q, k, v
            raise Unsupported("GPTBigCode with multi_query false (c_attn split per head) is not supported")
        c.update(num_attention_heads=c["n_head"], hidden_size=c["n_embd"], num_hidden_layers=c["n_layer"],
                 max_position_embeddings=c["n_positions"], num_key_value_heads=1,
                 intermediate_size=c["n_inner"] or 4 * c["n_embd"])
    if family == "gptj":  # GPTJConfig's attribute_map: the generic names read the n_* keys
        c.update(num_attention_heads=c["n_head"], hidden_size=c["n_embd"], num_hidden_layers=c["n_layer"],
                 max_position_embeddings=c["n_positions"], num_key_value_heads=None,
                 intermediate_size=c["n_inner"] or 4 * c["n_embd"])
    if family == "phi" and c.get("qk_layernorm"):
        raise Unsupported("Phi's qk_layernorm (a LayerNorm of q and k) is not supported")
    if family == "smollm3" and c.get("use_sliding_window"):
        raise Unsupported("SmolLM3's use_sliding_window is not supported")
    if family == "stablelm" and c.get("use_parallel_residual"):
        raise Unsupported("StableLM's use_parallel_residual (attention and MLP on one norm) is not supported")
    if family == "qwen3_moe" and c.get("use_sliding_window"):
        raise Unsupported("Qwen3-MoE's use_sliding_window (windows past max_window_layers) is not supported")
    if family == "olmoe" and c.get("clip_qkv") is not None:
        # OlmoeAttention clamps q, k, v AFTER q_norm / k_norm (OLMo clamps the projections)
        raise Unsupported("OLMoE's clip_qkv (clamping after the q/k norm) is not supported")
    if family == "cohere" and c.get("use_qk_norm"):
        raise Unsupported("Cohere's use_qk_norm (a per-head LayerNorm of q and k) is not supported")
    H = c["num_attention_heads"]
    hidden = c["hidden_size"]
    kv = c.get("num_key_value_heads") or H
    if H % kv:
        raise Unsupported("%d attention heads are not a multiple of %d key/value heads" % (H, kv))
    head_dim = c.get("head_dim") or hidden // H  # Qwen2, Phi-3, GPT-NeoX: always hidden / heads
    if family in ("qwen2", "phi3", "gpt_neox", "phi", "gptj", "cohere"):
        head_dim = hidden // H
    s = dict(family=family, n_layers=c["num_hidden_layers"], n_heads=H, kv_heads=kv, hidden=hidden,
             head_dim=head_dim, intermediate=c["intermediate_size"], vocab_size=c["vocab_size"],
             max_positions=c["max_position_embeddings"])
    if family == "gpt_neox":
        s.update(norm="layernorm", eps=c["layer_norm_eps"], act=c["hidden_act"], mlp="plain", qkv="neox",
                 qkv_bias=c["attention_bias"], o_bias=c["attention_bias"], mlp_bias=True,
                 block="parallel" if c["use_parallel_residual"] else "serial", qk_norm=None,
                 embed_scale=None, softcap=None, scaling=head_dim ** -0.5)
        theta = float(c["rotary_emb_base"])
        partial = c["rotary_pct"]
    elif family == "starcoder2":
        # Mistral's attention (GQA, rotary on the whole head) with LayerNorms, a plain c_fc/c_proj MLP
        # and use_bias on every linear
        bias = bool(c["use_bias"])
        s.update(norm="layernorm", eps=c["norm_epsilon"], act=c["hidden_act"], mlp="cfc", qkv="separate",
                 qkv_bias=bias, o_bias=bias, mlp_bias=bias, block="pre", qk_norm=None, embed_scale=None,
                 softcap=None, scaling=head_dim ** -0.5)
        theta = float(c["rope_theta"])
        partial = 1.0
    elif family == "gpt_neo":
        # GPT-2's block under nn.Linear names (canonical_weights renames them), q/k/v without bias,
        # learned positions, no rotary, and scores q.k^T WITHOUT any 1/sqrt(head_dim)
        s.update(norm="layernorm", eps=c["layer_norm_epsilon"], act=c["activation_function"], mlp="cfc",
                 qkv="separate", qkv_bias=False, o_bias=True, mlp_bias=True, block="pre", qk_norm=None,
                 embed_scale=None, softcap=None, scaling=1.0, learned_positions=True)
        theta, partial = 10000.0, 0.0  # rotary_dim 0: q_rot = q, k_rot = k
    elif family == "gpt_bigcode":
        # GPT-2's pre-LN block with nn.Linear; c_attn rows [q (H*d) | k (d) | v (d)], all with bias. The
        # softmax-in-fp32 switches only move the 1/sqrt(d) between the scores and the softmax of a half-
        # precision run (unscale = layer + 1 cancels): in float32 the scores are q.k^T / sqrt(d), or q.k^T
        # when scale_attn_weights is false
        s.update(norm="layernorm", eps=c["layer_norm_epsilon"], act=c["activation_function"], mlp="cfc",
                 qkv="bigcode", qkv_bias=True, o_bias=True, mlp_bias=True, block="pre", qk_norm=None,
                 embed_scale=None, softcap=None, scaling=head_dim ** -0.5 if c["scale_attn_weights"] else 1.0,
                 learned_positions=True)
        theta, partial = 10000.0, 0.0  # no rotary
    elif family == "opt":
        # OPTDecoderLayer (pre-LN): self_attn_layer_norm -> attention, final_layer_norm -> fc2(relu(fc1));
        # OPTAttention multiplies q_proj's output by head_dim^-0.5 BEFORE q.k^T (scale_q_first); the
        # positions are rows pos + 2 of embed_positions (OPTLearnedPositionalEmbedding's offset)
        bias = bool(c["enable_bias"])
        s.update(norm="layernorm", eps=1e-5, act=c["activation_function"], mlp="cfc", qkv="separate",
                 qkv_bias=bias, o_bias=bias, mlp_bias=bias, block="pre", qk_norm=None, embed_scale=None,
                 softcap=None, scaling=head_dim ** -0.5, learned_positions=True, position_offset=2,
                 scale_q_first=True)
        theta, partial = 10000.0, 0.0  # no rotary
    elif family in NAMES:
        s.update(norm="layernorm_nobias" if family == "cohere" else "layernorm",
                 eps=c["layer_norm_epsilon" if family == "gptj" else "layer_norm_eps"],
                 act=c["activation_function" if family == "gptj" else "hidden_act"],
                 mlp="gated" if family == "cohere" else "fc", qkv="separate", block="parallel1", qk_norm=None,
                 embed_scale=None, softcap=None, scaling=head_dim ** -0.5, names=NAMES[family],
                 qkv_bias=family == "phi" or (family == "cohere" and bool(c["attention_bias"])),
                 mlp_bias=family != "cohere")
        s["o_bias"] = s["qkv_bias"]
        # GPT-J: rotary_dim dims (None = all) at the fixed base 10000; Phi: a fraction of head_dim
        theta = 10000.0 if family == "gptj" else float(c["rope_theta"])
        partial = c.get("partial_rotary_factor", 1.0) if family == "phi" else 1.0
        if family == "gptj" and c.get("rotary_dim"):
            partial = c["rotary_dim"] / head_dim
        # GPT-J's rotate_every_two and Cohere's rotate_half both pair dims (2i, 2i+1)
        s["rope_style"] = "half" if family == "phi" else "interleaved"
    else:
        gemma = family.startswith("gemma")
        s.update(norm="rmsnorm_1p" if gemma else "rmsnorm", eps=c.get("rms_norm_eps"), mlp="gated", qkv="separate",
                 block="sandwich" if family in ("gemma2", "gemma3_text") else "pre", softcap=None,
                 qk_norm={"qwen3": "rmsnorm", "qwen3_moe": "rmsnorm", "gemma3_text": "rmsnorm_1p"}.get(family),
                 embed_scale=float(F32(math.sqrt(hidden))) if gemma else None)
        # activation: Gemma 1 reads hidden_act (hidden_activation is ignored since 4.48), Gemma 2/3
        # read hidden_activation, the others hidden_act
        s["act"] = c["hidden_activation"] if family in ("gemma2", "gemma3_text") else c["hidden_act"]
        bias = bool(c.get("attention_bias", False))
        s["qkv_bias"] = True if family == "qwen2" else bias
        s["o_bias"] = False if family == "qwen2" else bias
        s["mlp_bias"] = bool(c.get("mlp_bias", False)) if family in ("llama", "smollm3") else False
        if family == "phi3":
            s.update(qkv="phi3", mlp="phi3", qkv_bias=False, o_bias=False)
        if family == "granite":  # GraniteModel / GraniteAttention / GraniteDecoderLayer
            s.update(embed_scale=float(c["embedding_multiplier"]),
                     residual_multiplier=float(c["residual_multiplier"]), mlp_bias=bool(c.get("mlp_bias", False)))
        if family in ("olmo2", "olmo3"):  # Olmo2Attention: q_norm(q_proj(x)) over heads * head_dim; post-norm block
            s.update(qk_norm="rmsnorm_whole", block="post")
        if family == "olmoe":  # OlmoeAttention: OLMo 2's whole-projection q/k norm in Llama's pre-norm block
            s.update(qk_norm="rmsnorm_whole")
        if family == "stablelm":  # StableLmAttention: q/k/v bias from use_qkv_bias, o_proj without
            # bias; qk_layernorm: StableLmLayerNormPerHead, one bias-free nn.LayerNorm(head_dim) per head
            s.update(norm="layernorm", eps=c["layer_norm_eps"], qkv_bias=bool(c["use_qkv_bias"]), o_bias=False,
                     qk_norm="layernorm_each_head" if c["qk_layernorm"] else None)
        if family == "olmo":  # OlmoLayerNorm: F.layer_norm(x, shape, None, None, eps=1e-5)
            s.update(norm="layernorm_noparam", eps=1e-5)
        if family in ("gemma2", "gemma3_text"):
            s["scaling"] = c["query_pre_attn_scalar"] ** -0.5
            s["softcap"] = c.get("attn_logit_softcapping")
        elif family == "granite":
            s["scaling"] = float(c["attention_multiplier"])  # replaces 1/sqrt(head_dim)
        else:
            s["scaling"] = head_dim ** -0.5
        theta = float(c["rope_theta"])
        partial = c.get("partial_rotary_factor", 1.0) if family in ("phi3", "stablelm") else 1.0
        if family not in ("phi3", "phi", "stablelm") and cfg.get("partial_rotary_factor", 1.0) != 1.0:
            raise Unsupported("partial_rotary_factor is only used by Phi-3 and GPT-NeoX here")
    # sliding windows, one entry per layer (None = full causal attention)
    L = s["n_layers"]
    if family in ("mistral", "phi3", "starcoder2", "mixtral"):
        layers = [c.get("sliding_window")] * L
    elif family in ("qwen2", "qwen3"):
        win = c.get("sliding_window") if c.get("use_sliding_window") else None
        layers = [win if (win is not None and i >= c["max_window_layers"]) else None for i in range(L)]
    elif family == "gemma2":
        layers = [c["sliding_window"] if i % 2 == 0 else None for i in range(L)]
    elif family == "smollm3":  # windows only where layer_types says sliding_attention
        kinds = c.get("layer_types") or ["full_attention"] * L
        layers = [c["sliding_window"] if k == "sliding_attention" else None for k in kinds]
    elif family == "gemma3_text":
        if c.get("layer_types"):
            kinds = c["layer_types"]
        else:
            kinds = ["sliding_attention" if (i + 1) % c["sliding_window_pattern"] else "full_attention"
                     for i in range(L)]
        layers = [c["sliding_window"] if k == "sliding_attention" else None for k in kinds]
    elif family == "olmo3":  # Olmo3Config: layer_types, else full where (i + 1) % 4 == 0
        kinds = c.get("layer_types") or ["sliding_attention" if (i + 1) % 4 else "full_attention" for i in range(L)]
        if len(kinds) != L or any(k not in ("sliding_attention", "full_attention") for k in kinds):
            raise Unsupported("layer_types must list sliding_attention or full_attention for each of %d layers" % L)
        layers = [c["sliding_window"] if k == "sliding_attention" else None for k in kinds]
    elif family == "gpt_neo":
        layers = [c["window_size"] if k == "local" else None for k in _gpt_neo_layer_kinds(c)]
    else:
        layers = [None] * L
    s["windows"] = layers
    # rotary: per layer (theta, scaling); Gemma 3's sliding layers use rope_local_base_freq, unscaled
    rotary_dim = int(round(head_dim * partial)) if family == "gptj" else int(head_dim * partial)
    if rotary_dim % 2 or rotary_dim < (0 if family in ("gpt_neo", "opt", "gpt_bigcode") else 1):
        raise Unsupported("rotary dimension %d must be even and positive" % rotary_dim)
    rs = _rope_scaling(family, c)
    if family == "phi3" and rs is not None and rs["rope_type"] != "default":
        raise Unsupported("Phi-3 rope_scaling must be LongRoPE or absent, got %r" % rs["rope_type"])
    s["rotary_dim"] = rotary_dim
    s["rope"] = []
    for i in range(L):
        if family == "gemma3_text" and layers[i] is not None:
            s["rope"].append(dict(theta=float(c["rope_local_base_freq"]), scaling=None))
        elif family == "olmo3" and layers[i] is not None:  # rotary_embs["sliding_attention"]: default
            s["rope"].append(dict(theta=theta, scaling=None))
        elif family == "smollm3" and _smollm3_nope(c)[i]:  # NoPE: q_rot = q, k_rot = k
            s["rope"].append(None)
        else:
            s["rope"].append(dict(theta=theta, scaling=rs))
    s["rope_max_positions"] = c["max_position_embeddings"]
    s["clip_qkv"] = c.get("clip_qkv") if family == "olmo" else None
    if family in MOE_FAMILIES:
        s["moe"] = _moe_settings(family, c, L)
    return s


def _moe_settings(family, c, L):
    """The sparse MoE block as the *SparseMoeBlock classes of transformers 4.51 read config.json: the
    experts, how many a token takes, whether their weights are renormalised, which layers route, the
    width of an expert, and the tensor names (relative to the layer)."""
    if family == "mixtral":  # MixtralSparseMoeBlock: always renormalised; every layer
        return dict(n_experts=c["num_local_experts"], top_k=c["num_experts_per_tok"], norm_topk=True,
                    inter=c["intermediate_size"], layers=[True] * L, router="block_sparse_moe.gate",
                    experts="block_sparse_moe.experts.%d.", proj=("w1", "w3", "w2"))
    if family == "olmoe":  # OlmoeSparseMoeBlock: renormalised only with norm_topk_prob; every layer
        return dict(n_experts=c["num_experts"], top_k=c["num_experts_per_tok"], norm_topk=bool(c["norm_topk_prob"]),
                    inter=c["intermediate_size"], layers=[True] * L, router="mlp.gate", experts="mlp.experts.%d.",
                    proj=("gate_proj", "up_proj", "down_proj"))
    if family == "qwen3_moe":  # Qwen3MoeDecoderLayer: a sparse block where (l + 1) % step == 0, l not mlp-only
        dense, step, E = c["mlp_only_layers"] or [], c["decoder_sparse_step"], c["num_experts"]
        return dict(n_experts=E, top_k=c["num_experts_per_tok"], norm_topk=bool(c["norm_topk_prob"]),
                    inter=c["moe_intermediate_size"], router="mlp.gate", experts="mlp.experts.%d.",
                    layers=[i not in dense and E > 0 and (i + 1) % step == 0 for i in range(L)],
                    proj=("gate_proj", "up_proj", "down_proj"))
    raise Unsupported("no MoE settings for %s" % family)


def _gpt_neo_layer_kinds(c):
    """GPTNeoConfig: attention_types [[kinds, repeat], ...] expanded must give one kind per layer
    (else it raises); an attention_layers list in config.json, set afterwards from the extra keys,
    is what the layers read. Each layer is "global" or "local" (anything else: NotImplementedError)."""
    expanded = [k for kinds, reps in c["attention_types"] for _ in range(reps) for k in kinds]
    if len(expanded) != c["num_layers"]:
        raise Unsupported("attention_types gives %d layers, num_layers is %d" % (len(expanded), c["num_layers"]))
    layers = c.get("attention_layers") or expanded
    if len(layers) != c["num_layers"] or any(k not in ("global", "local") for k in layers):
        raise Unsupported("attention_layers must list \"global\" or \"local\" for each of %d layers" % c["num_layers"])
    return layers
def alibi_slopes(n_heads):
    """ALiBi's head slopes (Press et al. 2022, and their reference code): for a power of two n, the
    geometric sequence 2^(-8/n), 2^(-16/n), ..., 2^(-8); otherwise those of the largest power of two
    p below n, followed by every other slope of 2p heads (the odd-numbered ones) for the rest."""
    def geometric(n):
        start = 2.0 ** (-8.0 / n)
        return [start ** (i + 1) for i in range(n)]
    p = 1 << (n_heads.bit_length() - 1)
    if p == n_heads:
        return geometric(n_heads)
    return geometric(p) + geometric(2 * p)[0::2][:n_heads - p]


def _bloom_settings(c):
    """BLOOM (transformers' BloomConfig / BloomModel): ALiBi, no rotary, a LayerNorm on the embeddings."""
    if c.get("apply_residual_connection_post_layernorm"):
        raise Unsupported("apply_residual_connection_post_layernorm (the residual after each LayerNorm)")
    H = c.get("n_head", c.get("num_attention_heads"))
    L = c.get("n_layer", c.get("num_hidden_layers"))
    hidden = c["n_embed"] if c.get("n_embed") is not None else c["hidden_size"]
    d = hidden // H
    return dict(family="bloom", n_layers=L, n_heads=H, kv_heads=H, hidden=hidden, head_dim=d,
                intermediate=4 * hidden, vocab_size=c["vocab_size"], max_positions=None,
                norm="layernorm", eps=c["layer_norm_epsilon"], act="bloom_gelu", mlp="plain", qkv="neox",
                qkv_bias=True, o_bias=True, mlp_bias=True, block="serial", qk_norm=None, embed_scale=None,
                softcap=None, scaling=d ** -0.5, windows=[None] * L, rotary_dim=0, rope=[None] * L,
                rope_max_positions=None, alibi=alibi_slopes(H))


# Llama 4 text (configuration_llama4.py / modeling_llama4.py): Llama4TextConfig's defaults
DEFAULTS["llama4_text"] = dict(vocab_size=202048, hidden_size=5120, intermediate_size=8192, intermediate_size_mlp=16384,
                               num_hidden_layers=48, num_attention_heads=40, num_key_value_heads=8, head_dim=128,
                               hidden_act="silu", max_position_embeddings=4096 * 32, rms_norm_eps=1e-5,
                               rope_theta=500000.0, rope_scaling=None, attention_bias=False, num_experts_per_tok=1,
                               num_local_experts=16, moe_layers=None, interleave_moe_layer_step=1, use_qk_norm=True,
                               no_rope_layers=None, no_rope_layer_interval=4, attention_chunk_size=8192,
                               layer_types=None, attn_temperature_tuning=True, floor_scale=8192, attn_scale=0.1)


def _llama4_settings(cfg):
    """Llama 4's text model as Llama's settings plus its own: per layer rotary or NoPE (no_rope_layers, 1 =
    rotary; None or [] = every no_rope_layer_interval-th layer NoPE), chunks on the layer_types
    "chunked_attention" layers (default: the rotary ones), the L2 norm of q and k after rotary on the rotary
    layers (use_qk_norm), the temperature of q on the NoPE layers (attn_temperature_tuning), and the MoE
    layers (moe_layers, else every interleave_moe_layer_step-th: step - 1, 2 step - 1, ...)."""
    c = dict(DEFAULTS["llama4_text"])
    c.update(cfg)
    L = c["num_hidden_layers"]
    rope_on = c["no_rope_layers"] or [int((i + 1) % c["no_rope_layer_interval"] != 0) for i in range(L)]
    if len(rope_on) != L or any(f not in (0, 1) for f in rope_on):
        raise Unsupported("no_rope_layers must list 0 or 1 for each of the %d layers" % L)
    kinds = c["layer_types"] or ["chunked_attention" if on else "full_attention" for on in rope_on]
    if len(kinds) != L or any(k not in ("chunked_attention", "full_attention") for k in kinds):
        raise Unsupported("layer_types must list chunked_attention or full_attention for each of %d layers" % L)
    step = c["interleave_moe_layer_step"]
    moe = c["moe_layers"] if c["moe_layers"] is not None else list(range(step - 1, L, step))
    keys = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
            "hidden_act", "max_position_embeddings", "rms_norm_eps", "rope_theta", "rope_scaling", "attention_bias")
    s = settings(dict({k: c[k] for k in keys}, model_type="llama", mlp_bias=False,
                      intermediate_size=c["intermediate_size_mlp"]))  # the dense layers' width
    s.update(family="llama4_text", rope_style="interleaved",  # apply_rotary_emb: complex pairs (2i, 2i+1)
             rope=[r if on else None for r, on in zip(s["rope"], rope_on)],
             chunks=[c["attention_chunk_size"] if k == "chunked_attention" else None for k in kinds],
             qk_l2=[bool(c["use_qk_norm"]) and bool(on) for on in rope_on],
             temperature=(c["floor_scale"], c["attn_scale"]) if c["attn_temperature_tuning"] else None,
             moe=dict(n_experts=c["num_local_experts"], top_k=c["num_experts_per_tok"], norm_topk=False,
                      inter=c["intermediate_size"], layers=[i in moe for i in range(L)], router="feed_forward.router",
                      kind="llama4"))
    return s


def _llama4_names(m, e):
    """Llama 4's tensors: the MLP under feed_forward., and on the MoE layers the router, the fused experts
    (gate_up_proj [E, hidden, 2 I], down_proj [E, I, hidden], stored in -> out) and the shared expert."""
    moe, hid = m["moe"], m["hidden"]
    out = {}
    for name, shape in e.items():
        if ".mlp." not in name:
            out[name] = shape
            continue
        layer = int(name.split(".")[1])
        if not moe["layers"][layer]:
            out[name.replace(".mlp.", ".feed_forward.")] = shape
            continue
        p, E, I = "layers.%d.feed_forward." % layer, moe["n_experts"], moe["inter"]
        out[p + "router.weight"] = (E, hid)
        out[p + "experts.gate_up_proj"], out[p + "experts.down_proj"] = (E, hid, 2 * I), (E, I, hid)
        out[p + "shared_expert.gate_proj.weight"] = out[p + "shared_expert.up_proj.weight"] = (I, hid)
        out[p + "shared_expert.down_proj.weight"] = (hid, I)
    return out


def _llama4_feed_forward(m, W, p, x, act):
    """Llama4TextMLP, or on a MoE layer Llama4TextMoe: router logits -> top-k; each expert's INPUT is x times
    sigmoid(its logit) (0 for the experts not chosen), out = shared_expert(x) + sum of the experts' outputs."""
    f, i, wrong = p + "feed_forward.", int(p.split(".")[1]), m.get("_wrong", {})
    if not m["moe"]["layers"][i]:
        h = activation(act, x @ W[f + "gate_proj.weight"].T) * (x @ W[f + "up_proj.weight"].T)
        return h @ W[f + "down_proj.weight"].T
    logits = x @ W[f + "router.weight"].T  # [n][E]
    k, E = m["moe"]["top_k"], m["moe"]["n_experts"]
    top = np.argsort(-logits, axis=1, kind="stable")[:, :k]  # torch.topk: the largest, the lower index on ties
    rows = np.arange(len(x))[:, None]
    score = np.zeros_like(logits)
    if wrong.get("moe_softmax"):  # the mistake: softmax over the chosen logits instead of each one's sigmoid
        ex = np.exp(logits[rows, top] - logits[rows, top].max(axis=1, keepdims=True))
        score[rows, top] = ex / ex.sum(axis=1, keepdims=True)
    else:
        score[rows, top] = 1.0 / (1.0 + np.exp(-logits[rows, top]))
    sh = f + "shared_expert."
    out = (activation(act, x @ W[sh + "gate_proj.weight"].T) * (x @ W[sh + "up_proj.weight"].T)) @ W[sh + "down_proj.weight"].T
    routed = 0
    I = m["moe"]["inter"]
    for e in range(E):
        w = score[:, e:e + 1]
        xin = x if wrong.get("moe_scale_output") else x * w
        gu = xin @ W[f + "experts.gate_up_proj"][e]  # [n][2 I]: gate | up
        y = (gu[:, I:] * activation(act, gu[:, :I])) @ W[f + "experts.down_proj"][e]
        routed = routed + (y * w if wrong.get("moe_scale_output") else y)  # the mistake: the weight on the output
    m["_routing"][i] = (top, score[rows, top], logits)  # the choice ranks the logits: their gap is moe_probs'
    return out + routed
# Falcon (configuration_falcon.py, 4.51): falcon-7b's defaults; num_kv_heads None = the heads; n_embed
# (older files) replaces hidden_size; ffn_hidden_size None = 4 * hidden_size; rotary = not alibi
DEFAULTS["falcon"] = dict(vocab_size=65024, hidden_size=4544, num_hidden_layers=32, num_attention_heads=71,
                          num_ln_in_parallel_attn=None, layer_norm_epsilon=1e-5, num_kv_heads=None, alibi=False,
                          new_decoder_architecture=False, multi_query=True, parallel_attn=True, bias=False,
                          max_position_embeddings=2048, rope_theta=10000.0, rope_scaling=None,
                          ffn_hidden_size=None, activation="gelu")


def _falcon_settings(c):
    """Falcon (FalconAttention, FalconDecoderLayer of modeling_falcon.py): which norms exist, how the
    fused query_key_value splits, rotary or ALiBi, as config.json chooses."""
    for old, new in (("n_layer", "num_hidden_layers"), ("n_head", "num_attention_heads"),
                     ("n_head_kv", "num_kv_heads")):  # older files' names
        if old in c and new not in c:
            c[new] = c[old]
    H = c["num_attention_heads"]
    hidden = c["n_embed"] if c.get("n_embed") is not None else c["hidden_size"]
    d = hidden // H
    L = c["num_hidden_layers"]
    new = bool(c["new_decoder_architecture"])
    parallel = bool(c["parallel_attn"])
    # FalconAttention: num_kv_heads only in the new layout; else multi_query's one head, or one per head
    if new:
        kv = c["num_kv_heads"] if c["num_kv_heads"] is not None else H
        qkv = "falcon_grouped"  # view(n, kv, H / kv + 2, d): per group its queries, then k, v
    elif c["multi_query"]:
        kv, qkv = 1, "falcon_mq"  # view(n, H + 2, d): q heads, then k, v
    else:
        kv, qkv = H, "falcon_per_head"  # view(n, H, 3, d)
    if H % kv:
        raise Unsupported("%d attention heads are not a multiple of %d key/value heads" % (H, kv))
    # FalconDecoderLayer: num_ln_in_parallel_attn None becomes 2 in the new layout
    n_ln = c["num_ln_in_parallel_attn"]
    if n_ln is None and new:
        n_ln = 2
    if new and not parallel:  # forward() reads self.ln_attn, which __init__ made only for parallel_attn
        raise Unsupported("new_decoder_architecture with parallel_attn false (transformers cannot run it)")
    if not parallel:
        block, ln1, ln2 = "serial", "input_layernorm", "post_attention_layernorm"
    elif new and n_ln == 2:
        block, ln1, ln2 = "parallel", "ln_attn", "ln_mlp"
    else:  # falcon-7b (old layout, parallel) and num_ln_in_parallel_attn 1: one input_layernorm for both
        block, ln1, ln2 = "parallel1", "input_layernorm", None
    bias = bool(c["bias"])
    alibi = bool(c["alibi"])
    I = c["ffn_hidden_size"] if c["ffn_hidden_size"] is not None else 4 * c["hidden_size"]
    rs = None if alibi else _rope_scaling("falcon", c)
    return dict(family="falcon", n_layers=L, n_heads=H, kv_heads=kv, hidden=hidden, head_dim=d, intermediate=I,
                vocab_size=c["vocab_size"], max_positions=c["max_position_embeddings"], norm="layernorm",
                eps=c["layer_norm_epsilon"], act=c["activation"], mlp="plain", qkv=qkv, qkv_bias=bias,
                o_bias=bias, mlp_bias=bias, block=block, falcon_ln=(ln1, ln2), qk_norm=None, embed_scale=None,
                softcap=None, scaling=d ** -0.5, windows=[None] * L, rotary_dim=0 if alibi else d,
                rope=[None if alibi else dict(theta=float(c["rope_theta"]), scaling=rs)] * L,
                rope_max_positions=c["max_position_embeddings"], alibi=alibi_slopes(H) if alibi else None,
                # eager attention: (q.k + A) * 1/sqrt(d), then its causal mask adds A / sqrt(d) once more
                alibi_twice=alibi, new_decoder_architecture=new, parallel_attn=parallel)


# ---------------------------------------------------------------------------------------------
# Rotary embedding: inverse frequencies as transformers' modeling_rope_utils computes them.

def _f32(x):
    return np.asarray(x, dtype=np.float64).astype(F32).astype(np.float64)


def _default_inv_freq(theta, dim):
    # 1 / (base ** (arange(0, dim, 2).float() / dim)), each torch step in float32
    expo = _f32(np.arange(0, dim, 2, dtype=np.float64) / dim)
    return _f32(1.0 / _f32(theta ** expo))


def inv_freq(rope, dim, max_positions, seq_len):
    """(inv_freq [dim/2] as float32 values, attention_factor) for a sequence of SEQ_LEN tokens."""
    rs = rope["scaling"]
    kind = rs["rope_type"] if rs else "default"
    theta = rope["theta"]
    if kind == "default":
        return _default_inv_freq(theta, dim), 1.0
    factor = float(rs["factor"])
    if kind == "linear":
        return _f32(_default_inv_freq(theta, dim) / factor), 1.0
    if kind == "dynamic":
        # recomputed during the forward pass when the positions run past max_position_embeddings:
        # seq_len = max(position_ids) + 1 > max_position_embeddings (strictly); else the plain base
        if seq_len > max_positions:
            theta = theta * ((factor * seq_len / max_positions) - (factor - 1)) ** (dim / (dim - 2))
        return _default_inv_freq(theta, dim), 1.0
    if kind == "llama3":
        inv = _default_inv_freq(theta, dim)
        low, high = float(rs["low_freq_factor"]), float(rs["high_freq_factor"])
        old = float(rs["original_max_position_embeddings"])
        wavelen = 2 * math.pi / inv
        out = np.where(wavelen > old / low, inv / factor, inv)
        with np.errstate(divide="ignore", invalid="ignore"):  # low = high (Llama-4-Scout): no band to blend
            smooth = (old / wavelen - low) / (high - low)
            smoothed = (1 - smooth) * out / factor + smooth * out
        medium = ~(wavelen < old / high) & ~(wavelen > old / low)
        return _f32(np.where(medium, smoothed, out)), 1.0
    if kind == "yarn":
        # transformers 4.51: an original_max_position_embeddings in rope_scaling replaces the factor
        # by max_position_embeddings / original (keep the two consistent to be version-proof)
        if "original_max_position_embeddings" in rs:
            orig = rs["original_max_position_embeddings"]
            factor = max_positions / orig
        else:
            orig = max_positions
        att = rs.get("attention_factor")
        if att is None:
            def mscale(scale, m=1.0):
                return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0
            if rs.get("mscale") and rs.get("mscale_all_dim"):
                att = mscale(factor, rs["mscale"]) / mscale(factor, rs["mscale_all_dim"])
            else:
                att = mscale(factor)
        beta_fast = rs.get("beta_fast") or 32
        beta_slow = rs.get("beta_slow") or 1

        def corr_dim(rot):
            return (dim * math.log(orig / (rot * 2 * math.pi))) / (2 * math.log(theta))
        lo, hi = corr_dim(beta_fast), corr_dim(beta_slow)
        if rs.get("truncate", True):  # 4.57: truncate false (gpt-oss) keeps the bounds fractional
            lo, hi = math.floor(lo), math.ceil(hi)
        lo, hi = max(lo, 0), min(hi, dim - 1)
        if lo == hi:
            hi += 0.001
        ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - lo) / (hi - lo), 0, 1)
        extra = 1 - ramp  # share of the unscaled (extrapolated) frequency
        pos = _f32(theta ** _f32(np.arange(0, dim, 2, dtype=np.float64) / dim))
        inv = _f32(1.0 / (factor * pos)) * (1 - extra) + _f32(1.0 / pos) * extra
        return _f32(inv), float(att)
    raise Unsupported(kind)


def rotate(x, cos, sin, rotary_dim):
    """Rotate-half (GPT-NeoX) convention on the first ROTARY_DIM features of x [heads][n][d]:
    feature i pairs with i + rotary_dim/2; the rest passes through."""
    r, rest = x[..., :rotary_dim], x[..., rotary_dim:]
    half = rotary_dim // 2
    rot_half = np.concatenate([-r[..., half:], r[..., :half]], axis=-1)
    return np.concatenate([r * cos + rot_half * sin, rest], axis=-1)


# ---------------------------------------------------------------------------------------------
# Weights.

# GPT-Neo's names -> the canonical (Llama-style) ones forward() reads, as TransformerLens converts
# weights; and back, for the fixtures' files.
GPT_NEO_NAMES = (("wte.", "embed_tokens."), ("ln_f.", "norm."), (".ln_1.", ".input_layernorm."),
                 (".ln_2.", ".post_attention_layernorm."), (".attn.attention.out_proj.", ".self_attn.o_proj."),
                 (".attn.attention.", ".self_attn."))


def gpt_neo_name(name, to_canonical=True):
    if name.startswith("h." if to_canonical else "layers."):
        name = ("layers." if to_canonical else "h.") + name.split(".", 1)[1]
    for native, canon in GPT_NEO_NAMES:
        a, b = (native, canon) if to_canonical else (canon, native)
        if (a.startswith(".") and a in name) or name.startswith(a):
            return name.replace(a, b, 1)
    return name


def bigcode_name(name, to_canonical=True):
    """GPTBigCodeModel's names <-> the generic ones (h.N. <-> layers.N.)."""
    if name.startswith("h." if to_canonical else "layers."):
        name = ("layers." if to_canonical else "h.") + name.split(".", 1)[1]
    for native, canon in BIGCODE_NAMES:
        a, b = (native, canon) if to_canonical else (canon, native)
        if (a.startswith(".") and a in name) or name.startswith(a):
            return name.replace(a, b, 1)
    return name


def opt_name(name, to_canonical=True):
    for native, canon in OPT_NAMES:
        a, b = (native, canon) if to_canonical else (canon, native)
        if (a.startswith(".") and a in name) or name.startswith(a):
            return name.replace(a, b, 1)
    return name


def canonical_weights(tensors, family):
    """Base-model names: strip `model.` / `gpt_neox.` / `transformer.`, drop LM heads and rotary / mask buffers."""
    if family == "gpt_oss":
        return gpt_oss_weights(tensors)
    prefix = {"gpt_neox": "gpt_neox.", "bloom": "transformer.", "gpt_neo": "transformer.",
              "gptj": "transformer."}.get(family, "model.")
    if family == "falcon":  # FalconForCausalLM
        prefix = "transformer."
    out = {}
    for name, arr in tensors.items():
        if family == "opt":  # OPTModel saves decoder.*, OPTForCausalLM model.decoder.*
            for pre in ("model.decoder.", "decoder."):
                if name.startswith(pre):
                    name = opt_name(name[len(pre):])
                    break
        if family == "gpt_bigcode":
            if name.startswith("transformer."):  # GPTBigCodeForCausalLM
                name = name[len("transformer."):]
            if name.endswith((".attn.bias", ".attn.masked_bias")):
                continue  # mask buffers of older files (not c_attn.bias)
            name = bigcode_name(name)
        if family == "gpt_neo":
            if name.endswith(("attn.attention.bias", "attn.attention.masked_bias")):
                continue  # causal / local mask buffers of older GPT-Neo files
            name = gpt_neo_name(name[len(prefix):] if name.startswith(prefix) else name)
        if name in ("lm_head.weight", "embed_out.weight"):
            continue  # *ForCausalLM output layers: not part of the base model
        if name.startswith(prefix):
            name = name[len(prefix):]
        if name.endswith("rotary_emb.inv_freq"):
            continue  # a buffer some files carry; recomputed from the config
        if family == "gpt_neox" and (name.endswith("attention.bias") or name.endswith("attention.masked_bias")):
            continue  # causal-mask buffers of older GPT-NeoX / Pythia files
        if name in out:
            raise ValueError("tensor %s appears twice after removing the prefix" % name)
        out[name] = arr
    return out


def load_model(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    m = settings(cfg)
    m["w"] = canonical_weights(read_checkpoint(model_dir), m["family"])
    m["dir"] = model_dir
    check_weights(m)
    return m


def _expected_names(m):
    """Every tensor name (and shape) the model must have, for the settings M."""
    e = _expected_dense_names(m)
    mo = m.get("moe")
    for i in range(m["n_layers"]):
        if not (mo and mo["layers"][i]) or mo.get("kind") == "llama4":  # Llama 4: _llama4_names did it
            continue
        p = "layers.%d." % i
        for r in ("gate", "up", "down"):  # no dense MLP on a routing layer
            del e[p + "mlp.%s_proj.weight" % r]
        hid, I = m["hidden"], mo["inter"]
        e[p + mo["router"] + ".weight"] = (mo["n_experts"], hid)
        for x in range(mo["n_experts"]):
            g, u, dn = (p + mo["experts"] % x + r + ".weight" for r in mo["proj"])
            e[g], e[u], e[dn] = (I, hid), (I, hid), (hid, I)
    return e


def _expected_dense_names(m):
    H, KV, d, hid, I = m["n_heads"], m["kv_heads"], m["head_dim"], m["hidden"], m["intermediate"]
    e = {}
    if m["family"] == "deepseek_v3":
        return deepseek_expected_names(m)
    if m["family"] == "gpt_oss":
        return gpt_oss_expected(m)
    if m["family"] == "bloom":
        e["word_embeddings.weight"] = (m["vocab_size"], hid)
        for n in ("word_embeddings_layernorm", "ln_f"):
            e[n + ".weight"] = e[n + ".bias"] = (hid,)
        for i in range(m["n_layers"]):
            p = "h.%d." % i
            for n in ("input_layernorm", "post_attention_layernorm"):
                e[p + n + ".weight"] = e[p + n + ".bias"] = (hid,)
            e[p + "self_attention.query_key_value.weight"], e[p + "self_attention.query_key_value.bias"] = \
                (3 * hid, hid), (3 * hid,)
            e[p + "self_attention.dense.weight"], e[p + "self_attention.dense.bias"] = (hid, hid), (hid,)
            e[p + "mlp.dense_h_to_4h.weight"], e[p + "mlp.dense_h_to_4h.bias"] = (I, hid), (I,)
            e[p + "mlp.dense_4h_to_h.weight"], e[p + "mlp.dense_4h_to_h.bias"] = (hid, I), (hid,)
        return e
    if m["family"] == "falcon":
        e["word_embeddings.weight"] = (m["vocab_size"], hid)
        e["ln_f.weight"] = e["ln_f.bias"] = (hid,)
        for i in range(m["n_layers"]):
            p = "h.%d." % i
            for n in m["falcon_ln"]:
                if n:
                    e[p + n + ".weight"] = e[p + n + ".bias"] = (hid,)
            a = p + "self_attention."
            e[a + "query_key_value.weight"] = ((H + 2 * KV) * d, hid)
            e[a + "dense.weight"] = (hid, H * d)
            e[p + "mlp.dense_h_to_4h.weight"], e[p + "mlp.dense_4h_to_h.weight"] = (I, hid), (hid, I)
            if m["qkv_bias"]:
                e[a + "query_key_value.bias"], e[a + "dense.bias"] = ((H + 2 * KV) * d,), (hid,)
                e[p + "mlp.dense_h_to_4h.bias"], e[p + "mlp.dense_4h_to_h.bias"] = (I,), (hid,)
        return e
    if m.get("names"):
        nm = m["names"]
        nb = m["norm"] == "layernorm"  # Cohere's LayerNorm has no bias
        e[nm["embed"] + ".weight"] = (m["vocab_size"], hid)
        e[nm["final"] + ".weight"] = (hid,)
        if nb:
            e[nm["final"] + ".bias"] = (hid,)
        for i in range(m["n_layers"]):
            p = nm["layer"] % i
            e[p + nm["ln1"] + ".weight"] = (hid,)
            if nb:
                e[p + nm["ln1"] + ".bias"] = (hid,)
            for r, rows in (("q", H * d), ("k", KV * d), ("v", KV * d)):
                e[p + nm[r] + ".weight"] = (rows, hid)
                if m["qkv_bias"]:
                    e[p + nm[r] + ".bias"] = (rows,)
            e[p + nm["o"] + ".weight"] = (hid, H * d)
            if m["o_bias"]:
                e[p + nm["o"] + ".bias"] = (hid,)
            for r in ("gate", "up") if m["mlp"] == "gated" else ("up",):
                e[p + nm[r] + ".weight"] = (I, hid)
                if m["mlp_bias"]:
                    e[p + nm[r] + ".bias"] = (I,)
            e[p + nm["down"] + ".weight"] = (hid, I)
            if m["mlp_bias"]:
                e[p + nm["down"] + ".bias"] = (hid,)
        return e
    if m["family"] == "gpt_neox":
        e["embed_in.weight"] = (m["vocab_size"], hid)
        e["final_layer_norm.weight"] = e["final_layer_norm.bias"] = (hid,)
        for i in range(m["n_layers"]):
            p = "layers.%d." % i
            for n in ("input_layernorm", "post_attention_layernorm"):
                e[p + n + ".weight"] = e[p + n + ".bias"] = (hid,)
            e[p + "attention.query_key_value.weight"] = (3 * hid, hid)
            e[p + "attention.dense.weight"] = (hid, hid)
            if m["qkv_bias"]:
                e[p + "attention.query_key_value.bias"] = (3 * hid,)
                e[p + "attention.dense.bias"] = (hid,)
            e[p + "mlp.dense_h_to_4h.weight"], e[p + "mlp.dense_h_to_4h.bias"] = (I, hid), (I,)
            e[p + "mlp.dense_4h_to_h.weight"], e[p + "mlp.dense_4h_to_h.bias"] = (hid, I), (hid,)
        return e
    e["embed_tokens.weight"] = (m["vocab_size"], hid)
    if m.get("learned_positions"):  # GPT-Neo's wpe; OPT's embed_positions has 2 more rows
        e["wpe.weight"] = (m["max_positions"] + m.get("position_offset", 0), hid)
    norms = m["norm"] != "layernorm_noparam"  # OLMo: no norm tensor at all
    if norms:
        e["norm.weight"] = (hid,)
    if m["norm"] == "layernorm":  # StarCoder2: LayerNorms with bias
        e["norm.bias"] = (hid,)
    for i in range(m["n_layers"]):
        p = "layers.%d." % i
        if norms:
            e[p + "input_layernorm.weight"] = e[p + "post_attention_layernorm.weight"] = (hid,)
        if m["norm"] == "layernorm":
            e[p + "input_layernorm.bias"] = e[p + "post_attention_layernorm.bias"] = (hid,)
        if m["block"] == "post":  # OLMo 2: no input_layernorm; a norm after the MLP instead
            del e[p + "input_layernorm.weight"]
            e[p + "post_feedforward_layernorm.weight"] = (hid,)
        if m["block"] == "sandwich":
            e[p + "pre_feedforward_layernorm.weight"] = e[p + "post_feedforward_layernorm.weight"] = (hid,)
        a = p + "self_attn."
        if m["qkv"] == "phi3":
            e[a + "qkv_proj.weight"] = ((H + 2 * KV) * d, hid)
        elif m["qkv"] == "bigcode":
            e[a + "c_attn.weight"], e[a + "c_attn.bias"] = ((H + 2 * KV) * d, hid), ((H + 2 * KV) * d,)
        else:
            e[a + "q_proj.weight"], e[a + "k_proj.weight"], e[a + "v_proj.weight"] = (H * d, hid), (KV * d, hid), (KV * d, hid)
            if m["qkv_bias"]:
                e[a + "q_proj.bias"], e[a + "k_proj.bias"], e[a + "v_proj.bias"] = (H * d,), (KV * d,), (KV * d,)
        e[a + "o_proj.weight"] = (hid, H * d)
        if m["o_bias"]:
            e[a + "o_proj.bias"] = (hid,)
        if m["qk_norm"] == "rmsnorm_whole":
            e[a + "q_norm.weight"], e[a + "k_norm.weight"] = (H * d,), (KV * d,)
        elif m["qk_norm"] == "layernorm_each_head":  # StableLM: q_layernorm.norms.{h}, one per head
            for h in range(H):
                e[a + "q_layernorm.norms.%d.weight" % h] = (d,)
            for h in range(KV):
                e[a + "k_layernorm.norms.%d.weight" % h] = (d,)
        elif m["qk_norm"]:
            e[a + "q_norm.weight"] = e[a + "k_norm.weight"] = (d,)
        if m["mlp"] == "phi3":
            e[p + "mlp.gate_up_proj.weight"] = (2 * I, hid)
        elif m["mlp"] == "cfc":  # StarCoder2
            e[p + "mlp.c_fc.weight"], e[p + "mlp.c_proj.weight"] = (I, hid), (hid, I)
            if m["mlp_bias"]:
                e[p + "mlp.c_fc.bias"], e[p + "mlp.c_proj.bias"] = (I,), (hid,)
            continue
        else:
            e[p + "mlp.gate_proj.weight"] = e[p + "mlp.up_proj.weight"] = (I, hid)
            if m["mlp_bias"]:
                e[p + "mlp.gate_proj.bias"] = e[p + "mlp.up_proj.bias"] = (I,)
                e[p + "mlp.down_proj.bias"] = (hid,)
        e[p + "mlp.down_proj.weight"] = (hid, I)
    if m["family"] == "llama4_text":
        return _llama4_names(m, e)
    return e


def check_weights(m):
    e = _expected_names(m)
    missing = sorted(set(e) - set(m["w"]))
    extra = sorted(set(m["w"]) - set(e))
    if missing:
        raise ValueError("%s: missing tensors %s" % (m["dir"], missing[:6]))
    if extra:
        raise ValueError("%s: unexpected tensors %s" % (m["dir"], extra[:6]))
    for n, shape in e.items():
        if tuple(m["w"][n].shape) != tuple(shape):
            raise ValueError("%s: %s has shape %s, expected %s" % (m["dir"], n, m["w"][n].shape, shape))


# ---------------------------------------------------------------------------------------------
# The forward pass.

def rms_norm(x, w, eps, one_plus, dtype):
    # transformers: x * rsqrt(mean(x^2) + eps) * w   (Gemma: * (1 + w), 1 + w formed in float32)
    y = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + dtype(eps))
    w = (F32(1.0) + w.astype(F32)) if one_plus else w
    return y * w.astype(dtype)


def forward(model, ids, dtype=np.float64, layer_inputs=None, **wrong):
    """Run on token IDS (positions 0..n-1). Returns a dict of arrays in DTYPE:
    attentions [L][H][n][n]; q [L][H][n][d], k, v [L][KV][n][d] (raw projections incl. bias);
    q_rot [L][H][n][d], k_rot [L][KV][n][d] (after q/k norm and rotary: what the scores use);
    context [L][n][H*d] (input of the output projection); hidden_states [L+1][n][hidden]
    (0 = embeddings output, already scaled for Gemma; the last has the final norm applied);
    last_hidden_state [n][hidden]; inv_freq [L][rotary_dim/2]; attention_factor [L].

    LAYER_INPUTS: [L][n][hidden] inputs to use for each layer instead of the previous layer's
    output (teacher forcing: checks each layer on its own against a reference's hidden states).
    WRONG: deliberate mistakes, for make_decoder_fixtures.py's sensitivity checks (see MISTAKES)."""
    m = model
    if m["family"] == "deepseek_v3":
        return deepseek_forward(m, ids, dtype, layer_inputs, **wrong)
    if m["family"] == "gpt_oss":
        return gpt_oss_forward(m, ids, dtype, layer_inputs, **wrong)
    if wrong.get("no_bias"):
        m = dict(m, qkv_bias=False, o_bias=False, mlp_bias=False)
    if wrong.get("swap_gate_up"):
        m = dict(m, swap_gate_up=True)
    if m.get("moe"):  # the MoE block reads the mistakes, and leaves its routing per layer here
        m = dict(m, _wrong=wrong, _routing={})
    W = {k: v.astype(dtype) for k, v in m["w"].items()}
    ids = np.asarray(ids, dtype=np.int64)
    n = len(ids)
    if n == 0:
        raise ValueError("no tokens")
    if ids.min() < 0 or ids.max() >= m["vocab_size"]:
        raise ValueError("token id out of range")
    H, KV, d, rd = m["n_heads"], m["kv_heads"], m["head_dim"], wrong.get("rotary_dim", m["rotary_dim"])
    group = H // KV
    eps, act = m["eps"], wrong.get("act", m["act"])
    one_plus = m["norm"] == "rmsnorm_1p" and not wrong.get("norm_plain_w")

    def norm(x, name):
        if m["norm"] == "layernorm_noparam":
            if wrong.get("skip_weightless_norms"):  # a missing weight read as "no norm"
                return x
            return layer_norm(x, dtype(1), dtype(0), eps)
        if m["norm"] == "layernorm":
            return layer_norm(x, W[name + ".weight"], W[name + ".bias"], eps)
        if m["norm"] == "layernorm_nobias":  # Cohere: (x - mean) / sqrt(var + eps) * w
            return layer_norm(x, W[name + ".weight"], dtype(0), eps)
        return rms_norm(x, m["w"][name + ".weight"], eps, one_plus, dtype)

    def lin(name, x, bias):
        y = x @ W[name + ".weight"].T
        return y + W[name + ".bias"] if bias else y

    pos = np.arange(n, dtype=np.float64)
    bloom = m["family"] == "bloom"
    nm = m.get("names")  # the parallel-block families' own tensor names
    names = {"ln1": "input_layernorm", "qkv": "attention.query_key_value", "dense": "attention.dense",
             "ln2": "post_attention_layernorm", "final": "final_layer_norm" if m["family"] == "gpt_neox" else "norm"}
    falcon = m["family"] == "falcon"
    if bloom:
        names.update(qkv="self_attention.query_key_value", dense="self_attention.dense", final="ln_f")
        x = norm(W["word_embeddings.weight"][ids], "word_embeddings_layernorm")
    elif falcon:
        names.update(qkv="self_attention.query_key_value", dense="self_attention.dense", final="ln_f",
                     ln1=m["falcon_ln"][0], ln2=m["falcon_ln"][1])
        x = W["word_embeddings.weight"][ids]
    elif nm:
        names.update(ln1=nm["ln1"], dense=nm["o"], final=nm["final"])
        x = W[nm["embed"] + ".weight"][ids]
    elif m["family"] == "gpt_neox":
        x = W["embed_in.weight"][ids]
    else:
        x = W["embed_tokens.weight"][ids]
        if m.get("learned_positions"):
            if n > m["max_positions"]:
                raise ValueError("more tokens than max_position_embeddings")
            off = m.get("position_offset", 0) if not wrong.get("no_position_offset") else 0
            x = x + W["wpe.weight"][off:off + n]  # OPT: token i reads row i + 2
        if m["embed_scale"] is not None and not wrong.get("no_embed_scale"):
            x = x * dtype(m["embed_scale"])
    hs = [x]
    res = {k: [] for k in ("attentions", "q", "k", "v", "q_rot", "k_rot", "context", "inv_freq", "attention_factor")}
    for i in range(m["n_layers"]):
        p = nm["layer"] % i if nm else ("h.%d." if bloom or falcon else "layers.%d.") % i
        if layer_inputs is not None:
            x = np.asarray(layer_inputs[i], dtype=dtype)
        # --- attention
        if m["block"] == "post":  # OLMo 2: attention reads x itself
            a_in = norm(x, p + "post_attention_layernorm") if wrong.get("post_as_pre") else x
        else:
            a_in = norm(x, p + names["ln1"])
        if nm:
            qf, kf, vf = (lin(p + nm[r], a_in, m["qkv_bias"]) for r in ("q", "k", "v"))
            q = qf.reshape(n, H, d).transpose(1, 0, 2)
            k = kf.reshape(n, KV, d).transpose(1, 0, 2)
            v = vf.reshape(n, KV, d).transpose(1, 0, 2)
        elif m["qkv"] == "neox":
            qkv = lin(p + names["qkv"], a_in, m["qkv_bias"]).reshape(n, H, 3 * d).transpose(1, 0, 2)
            q, k, v = qkv[..., :d], qkv[..., d:2 * d], qkv[..., 2 * d:]
        elif m["qkv"].startswith("falcon"):  # FalconAttention._split_heads
            fused = lin(p + names["qkv"], a_in, m["qkv_bias"])
            if m["qkv"] == "falcon_grouped" and not wrong.get("falcon_blocks"):
                g = fused.reshape(n, KV, H // KV + 2, d)  # per kv group: its queries, k, v
                q, k, v = g[:, :, :-2].reshape(n, H, d), g[:, :, -2], g[:, :, -1]
            elif m["qkv"] == "falcon_per_head":
                g = fused.reshape(n, H, 3, d)
                q, k, v = g[:, :, 0], g[:, :, 1], g[:, :, 2]
            else:  # multi_query: [q (H heads) | k | v]; the mistake: a grouped model read that way
                q = fused[:, :H * d].reshape(n, H, d)
                k = fused[:, H * d:(H + KV) * d].reshape(n, KV, d)
                v = fused[:, (H + KV) * d:].reshape(n, KV, d)
            q, k, v = (a.transpose(1, 0, 2) for a in (q, k, v))
        else:
            if m["qkv"] == "phi3":
                qkv = lin(p + "self_attn.qkv_proj", a_in, False)
                qf, kf, vf = qkv[:, :H * d], qkv[:, H * d:(H + KV) * d], qkv[:, (H + KV) * d:]
            elif m["qkv"] == "bigcode":  # c_attn(x).split((H * d, 2 * d)); key_value.split((d, d))
                qkv = lin(p + "self_attn.c_attn", a_in, m["qkv_bias"])
                qf, kf, vf = qkv[:, :H * d], qkv[:, H * d:(H + KV) * d], qkv[:, (H + KV) * d:]
                if wrong.get("swap_kv"):  # the mistake: [q | v | k]
                    kf, vf = vf, kf
            else:
                qf = lin(p + "self_attn.q_proj", a_in, m["qkv_bias"])
                kf = lin(p + "self_attn.k_proj", a_in, m["qkv_bias"])
                vf = lin(p + "self_attn.v_proj", a_in, m["qkv_bias"])
            clip = m.get("clip_qkv")
            if clip is not None and not wrong.get("no_clip"):  # OLMo: clamp(proj(x), -clip, clip)
                qf, kf, vf = (np.clip(a, dtype(-clip), dtype(clip)) for a in (qf, kf, vf))
            qf_raw, kf_raw = qf, kf
            if m["qk_norm"] == "rmsnorm_whole" and not wrong.get("no_qk_norm"):
                wq, wk = m["w"][p + "self_attn.q_norm.weight"], m["w"][p + "self_attn.k_norm.weight"]
                if wrong.get("qk_norm_per_head"):  # the RMS of each head's d values instead of all H * d
                    qf = rms_norm(qf.reshape(n, H, d), np.ones(d), eps, False, dtype).reshape(n, H * d) * wq
                    kf = rms_norm(kf.reshape(n, KV, d), np.ones(d), eps, False, dtype).reshape(n, KV * d) * wk
                else:
                    qf, kf = rms_norm(qf, wq, eps, False, dtype), rms_norm(kf, wk, eps, False, dtype)
            q = qf.reshape(n, H, d).transpose(1, 0, 2)
            k = kf.reshape(n, KV, d).transpose(1, 0, 2)
            v = vf.reshape(n, KV, d).transpose(1, 0, 2)
        qn, kn = q, k
        if m["qk_norm"] == "rmsnorm_whole":  # normalised above; q, k stay the raw projections
            qn, kn = q, k
            q = qf_raw.reshape(n, H, d).transpose(1, 0, 2)
            k = kf_raw.reshape(n, KV, d).transpose(1, 0, 2)
        elif m["qk_norm"] == "layernorm_each_head" and not wrong.get("no_qk_norm"):
            # StableLM: head h's d values through its own bias-free LayerNorm (mean and variance)
            gq = np.stack([W[p + "self_attn.q_layernorm.norms.%d.weight" % h] for h in range(H)])[:, None, :]
            gk = np.stack([W[p + "self_attn.k_layernorm.norms.%d.weight" % h] for h in range(KV)])[:, None, :]
            if wrong.get("qk_gain_head0"):  # the mistake: every head normalised with head 0's gain
                gq, gk = gq[:1], gk[:1]
            if wrong.get("qk_norm_rms"):  # the mistake: RMSNorm (no mean) instead of LayerNorm
                qn, kn = rms_norm(q, np.ones(d), eps, False, dtype) * gq, rms_norm(k, np.ones(d), eps, False, dtype) * gk
            else:
                qn, kn = layer_norm(q, gq, dtype(0), eps), layer_norm(k, gk, dtype(0), eps)
        elif m["qk_norm"] and not wrong.get("no_qk_norm"):
            qk1p = m["qk_norm"] == "rmsnorm_1p"
            qn = rms_norm(q, m["w"][p + "self_attn.q_norm.weight"], eps, qk1p, dtype)
            kn = rms_norm(k, m["w"][p + "self_attn.k_norm.weight"], eps, qk1p, dtype)
        rope = m["rope"][i]
        if wrong.get("rope"):
            rope = wrong["rope"](i, rope)
        if rope is None:  # no rotary (BLOOM: ALiBi instead): the scores use q and k as projected
            inv, att = np.zeros(0), 1.0
            cos = sin = np.ones((n, 0), dtype=dtype)
        else:
            inv, att = inv_freq(rope, rd, m["rope_max_positions"], n)
        if rope is None:
            pass
        elif dtype == np.float32:
            ang = (pos.astype(F32)[:, None] * inv.astype(F32)[None, :])
            cos, sin = np.cos(ang), np.sin(ang)
            cos, sin = cos * F32(att), sin * F32(att)
        else:
            ang = _f32(pos[:, None] * inv[None, :])  # transformers: a float32 product
            cos, sin = np.cos(ang) * att, np.sin(ang) * att
        cos = np.concatenate([cos, cos], axis=-1).astype(dtype)
        sin = np.concatenate([sin, sin], axis=-1).astype(dtype)
        interleaved = m.get("rope_style") == "interleaved"
        if wrong.get("rope_interleaved"):  # the mistake: the other convention
            interleaved = not interleaved
        if rope is None:
            q_rot, k_rot = qn, kn
        elif interleaved:  # the GPT-J convention: pairs (2i, 2i+1)
            def rot(x):
                r = x[..., :rd].copy()
                c, s_ = cos[:, :rd // 2], sin[:, :rd // 2]
                e, o = r[..., 0::2].copy(), r[..., 1::2].copy()
                r[..., 0::2], r[..., 1::2] = e * c - o * s_, o * c + e * s_
                return np.concatenate([r, x[..., rd:]], axis=-1)
            q_rot, k_rot = rot(qn), rot(kn)
        else:
            q_rot, k_rot = rotate(qn, cos, sin, rd), rotate(kn, cos, sin, rd)
        if m.get("qk_l2") and m["qk_l2"][i] and not wrong.get("no_qk_norm"):  # Llama 4: x / RMS(x), no gain, after rotary (or, wrongly, before)
            if wrong.get("l2_before_rope"):
                q_rot, k_rot = rot(rms_norm(qn, np.ones(d), eps, False, dtype)), rot(rms_norm(kn, np.ones(d), eps, False, dtype))
            else:
                q_rot, k_rot = rms_norm(q_rot, np.ones(d), eps, False, dtype), rms_norm(k_rot, np.ones(d), eps, False, dtype)
        if m.get("temperature") and rope is None and not wrong.get("no_temperature"):
            # Llama 4's NoPE layers: q * (log(floor((pos + 1) / floor_scale) + 1) * attn_scale + 1), float32 in torch
            fs, sc = m["temperature"]
            t32 = np.log(np.floor((pos.astype(F32) + F32(1)) / F32(fs)) + F32(1)).astype(F32) * F32(sc) + F32(1)
            q_rot = q_rot * t32.astype(dtype)[None, :, None]
        kv_of = np.arange(H) // group if not wrong.get("kv_interleave") else np.arange(H) % KV
        if m.get("scale_q_first"):  # OPT: (q * scaling) . k^T; q and q_rot stay the unscaled projection
            scores = (q_rot * dtype(wrong.get("scaling", m["scaling"]))) @ k_rot[kv_of].transpose(0, 2, 1)
        else:
            scores = q_rot @ k_rot[kv_of].transpose(0, 2, 1) * dtype(wrong.get("scaling", m["scaling"]))
        slopes = wrong.get("alibi", m.get("alibi"))
        if slopes is not None:  # ALiBi: + slope_h * j for key j, a float32 tensor in transformers
            bias = _f32(_f32(np.array(slopes))[:, None] * np.arange(n, dtype=np.float64)[None, :])
            if m.get("alibi_twice"):  # Falcon eager: (q.k + A) / sqrt(d), and its mask adds A / sqrt(d)
                bias = bias * m["scaling"] + (0 if wrong.get("alibi_once") else bias / math.sqrt(d))
            scores = scores + bias[:, None, :].astype(dtype)
        cap = m["softcap"]
        if cap is not None and not wrong.get("no_softcap"):
            scores = np.tanh(scores / dtype(cap)) * dtype(cap)
        qi, kj = np.arange(n)[:, None], np.arange(n)[None, :]
        visible = kj <= qi
        win = m["windows"][i]
        if wrong.get("windows") is not None:
            win = wrong["windows"][i]
        if win is not None:
            visible &= kj > qi - win  # the W keys i-W+1 .. i
        chunk = (m.get("chunks") or [None] * m["n_layers"])[i]
        if chunk is not None and not wrong.get("no_chunks"):
            visible &= kj // chunk == qi // chunk  # Llama 4: the keys of the query's own chunk
        scores = np.where(visible, scores, np.finfo(dtype).min)
        probs = softmax(scores)
        ctx = (probs @ v[kv_of]).transpose(1, 0, 2).reshape(n, H * d)
        ctx = ablate_context(ctx, i, d, wrong.get("ablate"))  # attnscope's --ablate (ref_forward.py)
        if m["qkv"] == "neox" or nm or falcon:
            attn_out = lin(p + names["dense"], ctx, m["o_bias"])
        else:
            attn_out = lin(p + "self_attn.o_proj", ctx, m["o_bias"])
        # --- block
        parallel = m["block"] in ("parallel", "parallel1")
        if wrong.get("toggle_parallel"):
            parallel = not parallel
        if m["block"] == "parallel1":  # GPT-J, Phi, Cohere: one norm feeds attention and MLP
            if parallel:
                x = x + attn_out + mlp(m, W, p, a_in, act)
            else:  # only as a deliberate mistake: serial, the MLP on the same norm of x + attn
                x = x + attn_out
                x = x + mlp(m, W, p, norm(x, p + (nm or names)["ln1"]), act)
        elif m["block"] == "post" and not wrong.get("post_as_pre"):  # OLMo 2: norms after attention and MLP only
            x = x + norm(attn_out, p + "post_attention_layernorm")
            x = x + norm(mlp(m, W, p, x, act), p + "post_feedforward_layernorm")
        elif m["block"] == "post":  # the mistake: the same norms read as pre-norms of attention and MLP
            x = x + attn_out
            x = x + mlp(m, W, p, norm(x, p + "post_feedforward_layernorm"), act)
        elif m["block"] == "sandwich":  # Gemma 2/3: norms before and after attention and MLP
            x = x + norm(attn_out, p + "post_attention_layernorm")
            x = x + norm(mlp(m, W, p, norm(x, p + "pre_feedforward_layernorm"), act), p + "post_feedforward_layernorm")
        elif parallel:  # GPT-NeoX use_parallel_residual: x + attn(ln1(x)) + mlp(ln2(x)); Falcon's ln_mlp
            x = x + attn_out + mlp(m, W, p, norm(x, p + (names["ln2"] if falcon else "post_attention_layernorm")), act)
        elif m.get("residual_multiplier") is not None and not wrong.get("no_residual_multiplier"):
            rm = dtype(m["residual_multiplier"])  # Granite: residual + branch * residual_multiplier
            x = x + attn_out * rm
            x = x + mlp(m, W, p, norm(x, p + "post_attention_layernorm"), act) * rm
        else:
            x = x + attn_out
            x = x + mlp(m, W, p, norm(x, p + names["ln2"]), act)
        for key, val in (("attentions", probs), ("q", q), ("k", k), ("v", v), ("q_rot", q_rot), ("k_rot", k_rot),
                         ("context", ctx), ("inv_freq", inv), ("attention_factor", att)):
            res[key].append(val)
        hs.append(x)
    last = norm(x, names["final"])
    hs[-1] = last  # transformers replaces the last block's output by the final norm of it
    # inv_freq rows differ in length when some layers have no rotary (SmolLM3's NoPE layers: none)
    out = {k: np.array(v) if k != "inv_freq" or len({len(x) for x in v}) == 1 else np.array(v, dtype=object)
           for k, v in res.items()}
    out["hidden_states"] = np.array(hs)
    out["last_hidden_state"] = last
    if m.get("moe"):  # per layer and token the experts (best first) and their weights; None: a dense layer
        r = m["_routing"]
        out["moe_topk"] = [r[i][0] if i in r else None for i in range(m["n_layers"])]
        out["moe_weights"] = [r[i][1] if i in r else None for i in range(m["n_layers"])]
        out["moe_probs"] = [r[i][2] if i in r else None for i in range(m["n_layers"])]  # softmax of all experts
    return out


def moe_block(m, W, p, x, act, i):
    """A sparse MoE layer (MixtralSparseMoeBlock and its kin): router logits = gate(x); softmax over the
    experts; the top_k largest (ties: the lower expert, as torch.topk on CPU); renormalised to sum 1 when
    norm_topk; out = sum over the chosen experts of weight * down(act(gate x) * up x). Mistakes: moe_top1
    (one expert fewer), moe_norm_toggle (renormalise where the model does not, or not where it does),
    moe_expert_shift (expert e's weights read from expert e + 1)."""
    mo, wrong = m["moe"], m.get("_wrong", {})
    E = mo["n_experts"]
    probs = softmax(x @ W[p + mo["router"] + ".weight"].T)  # [n][E]
    k = mo["top_k"] - (1 if wrong.get("moe_top1") else 0)
    top = np.argsort(-probs, axis=-1, kind="stable")[:, :k]
    w = np.take_along_axis(probs, top, axis=-1)
    if mo["norm_topk"] != bool(wrong.get("moe_norm_toggle")):
        w = w / w.sum(axis=-1, keepdims=True)
    y = np.zeros_like(x)
    for e in range(E):
        rows, slot = np.nonzero(top == e)
        if not len(rows):
            continue
        ep = p + mo["experts"] % ((e + 1) % E if wrong.get("moe_expert_shift") else e)
        gn, un, dn = (ep + r + ".weight" for r in mo["proj"])
        h = activation(act, x[rows] @ W[gn].T) * (x[rows] @ W[un].T)
        y[rows] += (h @ W[dn].T) * w[rows, slot][:, None]
    m["_routing"][i] = (top, w, probs)
    return y


def _activation(name, x):
    if name == "bloom_gelu":  # BloomGelu: x * 0.5 * (1 + tanh(0.79788456 * x * (1 + 0.044715 * x * x)))
        t = x.dtype.type
        return x * t(0.5) * (t(1.0) + np.tanh(t(0.79788456) * x * (t(1.0) + t(0.044715) * x * x)))
    return activation(name, x)


def mlp(m, W, p, x, act):
    if m["family"] == "llama4_text":
        return _llama4_feed_forward(m, W, p, x, act)
    mo = m.get("moe")
    if mo and mo["layers"][int(p.split(".")[1])]:
        return moe_block(m, W, p, x, act, int(p.split(".")[1]))
    nm = m.get("names")
    if nm:  # fc: down(act(up x + b) ) + b; gated (Cohere): down(act(gate x) * up x), no biases
        b = m["mlp_bias"]
        u = x @ W[p + nm["up"] + ".weight"].T + (W[p + nm["up"] + ".bias"] if b else 0)
        if m["mlp"] == "gated":
            g = x @ W[p + nm["gate"] + ".weight"].T
            if m.get("swap_gate_up"):
                g, u = u, g
            h = activation(act, g) * u
        else:
            h = activation(act, u)
        return h @ W[p + nm["down"] + ".weight"].T + (W[p + nm["down"] + ".bias"] if b else 0)
    if m["mlp"] == "plain" and m["family"] == "falcon":  # FalconMLP: biases only with config.bias
        b = m["mlp_bias"]
        h = _activation(act, x @ W[p + "mlp.dense_h_to_4h.weight"].T + (W[p + "mlp.dense_h_to_4h.bias"] if b else 0))
        return h @ W[p + "mlp.dense_4h_to_h.weight"].T + (W[p + "mlp.dense_4h_to_h.bias"] if b else 0)
    if m["mlp"] == "plain":
        h = _activation(act, x @ W[p + "mlp.dense_h_to_4h.weight"].T + W[p + "mlp.dense_h_to_4h.bias"])
        return h @ W[p + "mlp.dense_4h_to_h.weight"].T + W[p + "mlp.dense_4h_to_h.bias"]
    if m["mlp"] == "cfc":  # StarCoder2: c_proj(act(c_fc x)), biases when use_bias
        b = m["mlp_bias"]
        h = activation(act, x @ W[p + "mlp.c_fc.weight"].T + (W[p + "mlp.c_fc.bias"] if b else 0))
        return h @ W[p + "mlp.c_proj.weight"].T + (W[p + "mlp.c_proj.bias"] if b else 0)
    if m["mlp"] == "phi3":
        gu = x @ W[p + "mlp.gate_up_proj.weight"].T
        I = m["intermediate"]
        gate, up = gu[:, :I], gu[:, I:]  # rows [gate | up]
        if m.get("swap_gate_up"):
            gate, up = up, gate
        h = up * activation(act, gate)
    else:
        b = m["mlp_bias"]
        g = x @ W[p + "mlp.gate_proj.weight"].T + (W[p + "mlp.gate_proj.bias"] if b else 0)
        u = x @ W[p + "mlp.up_proj.weight"].T + (W[p + "mlp.up_proj.bias"] if b else 0)
        if m.get("swap_gate_up"):
            g, u = u, g
        h = activation(act, g) * u
    y = h @ W[p + "mlp.down_proj.weight"].T
    return y + W[p + "mlp.down_proj.bias"] if m["mlp"] == "gated" and m["mlp_bias"] else y


QUANTITIES = ("attentions", "q", "k", "v", "q_rot", "k_rot", "context", "hidden_states", "last_hidden_state")


def config_summary(m, n):
    """The `config` object of a case (the shared reference's keys, plus inv_freq per layer)."""
    if m["family"] == "deepseek_v3":
        return deepseek_config_summary(m, n)
    if m["family"] == "gpt_oss":
        return gpt_oss_config_summary(m, n)
    L = m["n_layers"]
    norm = {"rmsnorm": "rmsnorm (x / rms * w)", "rmsnorm_1p": "rmsnorm_1p (x / rms * (1 + w))",
            "layernorm": "layernorm", "layernorm_nobias": "layernorm without bias",
            "layernorm_noparam": "layernorm without weight and bias (non-parametric)"}[m["norm"]]
    rs = m["rope"]
    if m["family"] == "falcon":
        return _falcon_summary(m, n)
    if m.get("alibi") is not None:  # BLOOM: no rotary, ALiBi
        return {"num_layers": L, "num_heads": m["n_heads"], "num_kv_heads": m["kv_heads"], "head_dim": m["head_dim"],
                "hidden_size": m["hidden"], "intermediate_size": m["intermediate"], "vocab_size": m["vocab_size"],
                "max_positions": None, "layer_norm_eps": m["eps"], "activation": m["act"], "norm": norm, "rope": None,
                "attention": {"scaling": m["scaling"], "softcap": None, "sliding_window": None,
                              "layer_types": ["full_attention"] * L, "qk_norm": None, "qkv_bias": True,
                              "o_bias": True, "alibi": True, "alibi_slopes": [float(F32(s)) for s in m["alibi"]],
                              "alibi_rule": "scores[h][i][j] = q_i.k_j * scaling + slope_h * j"},
                "mlp_bias": True, "embedding_layernorm": True}
    glob = [r for r, w in zip(rs, m["windows"]) if w is None and r is not None] or [r for r in rs if r is not None]
    rope = {"theta": glob[0]["theta"], "rotary_dim": m["rotary_dim"],
            "scaling": glob[0]["scaling"],
            "style": ("interleaved (GPT-J rotate_every_two): dims 2i and 2i+1 form a pair"
                      if m.get("rope_style") == "interleaved" else
                      "rotate_half (GPT-NeoX): dims i and i+rotary_dim/2 form a pair"),
            "theta_per_layer": [r["theta"] if r is not None else None for r in rs]}
    if m["family"] == "gemma3_text":
        loc = [r for r, w in zip(rs, m["windows"]) if w is not None]
        rope["local_theta"] = loc[0]["theta"] if loc else None
    inv = [inv_freq(r, m["rotary_dim"], m["rope_max_positions"], n) if r is not None else (np.zeros(0), 1.0)
           for r in rs]
    rope["inv_freq_per_layer"] = [[float(F32(x)) for x in f] for f, _ in inv]
    rope["attention_factor_per_layer"] = [a for _, a in inv]
    win = [w for w in m["windows"] if w is not None]
    att = {"scaling": m["scaling"], "softcap": m["softcap"], "sliding_window": win[0] if win else None,
           "layer_types": ["sliding_attention" if w is not None else "full_attention" for w in m["windows"]],
           "qk_norm": m["qk_norm"], "qkv_bias": m["qkv_bias"], "o_bias": m["o_bias"]}
    c = {"num_layers": L, "num_heads": m["n_heads"], "num_kv_heads": m["kv_heads"], "head_dim": m["head_dim"],
         "hidden_size": m["hidden"], "intermediate_size": m["intermediate"], "vocab_size": m["vocab_size"],
         "max_positions": m["max_positions"], "layer_norm_eps": m["eps"], "activation": m["act"],
         "norm": norm, "rope": rope, "attention": att, "mlp_bias": m["mlp_bias"]}
    if m["embed_scale"] is not None:
        c["embed_scale"] = m["embed_scale"]
    if m["rotary_dim"] == 0:  # GPT-Neo: no rotary (the shared reference writes rope null)
        c["rope"] = None
    if m["block"] == "post":
        c["block"] = "x += post_attention_layernorm(attn(x)); x += post_feedforward_layernorm(mlp(x))"
        att["qk_norm_whole"] = "rmsnorm"
    if m["block"] == "sandwich":
        c["block"] = ("x += post_attention_layernorm(attn(input_layernorm(x))); "
                      "x += post_feedforward_layernorm(mlp(pre_feedforward_layernorm(x)))")
    if m["family"] == "gpt_neox":
        c["parallel_residual"] = m["block"] == "parallel"
    if m["block"] == "parallel1":
        c["block"] = "x = x + attn(ln(x)) + mlp(ln(x)): one norm feeds both"
    if m["qk_norm"] == "rmsnorm_whole":  # OLMoE too (its block is pre-norm)
        att["qk_norm_whole"] = "rmsnorm"
    if m.get("clip_qkv") is not None:
        c["clip_qkv"] = m["clip_qkv"]
    if m["family"] == "olmo3":  # the shared reference's rope.per_layer: YaRN only on the full layers
        rope["per_layer"] = [dict(r["scaling"] or {}, type=(r["scaling"] or {}).get("rope_type", "default"),
                                  theta=r["theta"]) for r in rs]
    if m["family"] == "smollm3":  # the shared reference's rope.per_layer: null on a NoPE layer
        rope["per_layer"] = [None if r is None else {"type": "default", "theta": r["theta"]} for r in rs]
    if m.get("residual_multiplier") is not None:
        c["embedding_multiplier"], c["attention_multiplier"] = m["embed_scale"], m["scaling"]
        c["residual_multiplier"] = m["residual_multiplier"]
    if m.get("position_offset"):  # OPT
        c["position_offset"] = m["position_offset"]
        att["scaling_applied_to"] = "q_proj output (q * scaling) before q.k^T"
    if m["family"] == "llama4_text":  # the shared reference's Llama 4 keys
        rope["rope_layers"] = [r is not None for r in rs]
        rope["style"] = "interleaved (complex pairs: dims 2i and 2i+1 form a pair)"
        att["layer_types"] = ["chunked_attention" if ch else "full_attention" for ch in m["chunks"]]
        att["attention_chunk_size"] = next((ch for ch in m["chunks"] if ch), None)
        att["qk_l2_norm"] = any(m["qk_l2"])
        att["attn_temperature_tuning"] = m["temperature"] is not None
        if m["temperature"] is not None:
            att["floor_scale"], att["attn_scale"] = m["temperature"]
        c["intermediate_size_mlp"], c["intermediate_size"] = m["intermediate"], m["moe"]["inter"]
        c["moe"] = {"num_experts": m["moe"]["n_experts"], "top_k": m["moe"]["top_k"],
                    "moe_layers": [i for i, on in enumerate(m["moe"]["layers"]) if on]}
    return c


def _falcon_summary(m, n):
    """config_summary of a Falcon model: the shared reference's keys for it."""
    L, d = m["n_layers"], m["head_dim"]
    alibi = m.get("alibi") is not None
    att = {"scaling": m["scaling"], "softcap": None, "sliding_window": None, "layer_types": ["full_attention"] * L,
           "qk_norm": None, "qkv_bias": m["qkv_bias"], "o_bias": m["o_bias"], "alibi": alibi}
    c = {"num_layers": L, "num_heads": m["n_heads"], "num_kv_heads": m["kv_heads"], "head_dim": d,
         "hidden_size": m["hidden"], "intermediate_size": m["intermediate"], "vocab_size": m["vocab_size"],
         "max_positions": m["max_positions"], "layer_norm_eps": m["eps"], "activation": m["act"],
         "norm": "layernorm", "rope": None, "attention": att, "mlp_bias": m["mlp_bias"],
         "new_decoder_architecture": m["new_decoder_architecture"], "parallel_attn": m["parallel_attn"],
         "qkv_layout": {"falcon_grouped": "[T, kv_heads, heads/kv_heads + 2, head_dim]: per KV group its queries, k, v",
                        "falcon_mq": "[T, heads + 2, head_dim]: q heads, then the one k and v",
                        "falcon_per_head": "[T, heads, 3, head_dim]: per head q, k, v"}[m["qkv"]],
         "block": {"serial": "x += dense(attn(input_layernorm x)); x += mlp(post_attention_layernorm x)",
                   "parallel": "x = x + dense(attn(ln_attn x)) + mlp(ln_mlp x)",
                   "parallel1": "x = x + dense(attn(input_layernorm x)) + mlp(input_layernorm x)"}[m["block"]]}
    if alibi:
        att["alibi_slopes"] = [float(F32(s)) for s in m["alibi"]]
        att["alibi_scale"] = 2 / math.sqrt(d)
        att["alibi_rule"] = ("scores[h][i][j] = (q_i.k_j + A) / sqrt(head_dim) + A / sqrt(head_dim), A = slope_h * j: "
                             "transformers' eager Falcon attention, whose causal mask carries A / sqrt(head_dim) again")
    else:
        r = m["rope"][0]
        inv, _ = inv_freq(r, m["rotary_dim"], m["rope_max_positions"], n)
        c["rope"] = {"theta": r["theta"], "rotary_dim": m["rotary_dim"], "scaling": r["scaling"],
                     "style": "rotate_half (GPT-NeoX): dims i and i+rotary_dim/2 form a pair",
                     "theta_per_layer": [r["theta"]] * L, "inv_freq_per_layer": [[float(F32(x)) for x in inv]] * L,
                     "attention_factor_per_layer": [1.0] * L}
    return c


# ---------------------------------------------------------------------------------------------
# gpt-oss (configuration_gpt_oss.py / modeling_gpt_oss.py / integrations/mxfp4.py of transformers 4.57):
# GptOssAttention (GQA, q/k/v/o with bias, rotate-half rotary with YaRN, a learned sink logit per head
# in the softmax), layers alternating sliding / full attention (layer_types), and GptOssMLP: a router
# Linear with bias, torch.topk of the logits, softmax over those k, then per expert (increasing index)
# gate_up = x @ gate_up_proj[e] + b ([E, hidden, 2I], gate = even columns, up = odd), gate clamped above
# at swiglu_limit, up clamped to +-limit, glu = gate * sigmoid(1.702 gate), (up + 1) * glu @ down_proj[e]
# + b, times the token's weight, added into zeros. The experts are MXFP4 in the file (quant_method
# "mxfp4"): *_blocks [E, rows, cols/32, 16] U8 two E2M1 codes a byte (low nibble first) and *_scales
# [E, rows, cols/32] U8 exponents biased by 127; decoded to [E, rows, cols] and transposed to [E, cols, rows].

FP4_E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])

GPT_OSS_DEFAULTS = dict(num_hidden_layers=36, num_local_experts=128, vocab_size=201088, hidden_size=2880,
                        intermediate_size=2880, head_dim=64, num_attention_heads=64, num_key_value_heads=8,
                        sliding_window=128, rope_theta=150000.0, rms_norm_eps=1e-5, rope_scaling=None,
                        max_position_embeddings=131072, experts_per_token=4, swiglu_limit=7.0,
                        attention_bias=True, layer_types=None)


def gpt_oss_settings(cfg):
    c = dict(GPT_OSS_DEFAULTS)
    c.update(cfg)
    q = c.get("quantization_config") or {}
    if q and q.get("quant_method") != "mxfp4":
        raise Unsupported("gpt-oss quantization %r is not supported (mxfp4 only)" % q.get("quant_method"))
    if not q:
        raise Unsupported("gpt-oss without quantization_config mxfp4 (dense expert tensors) is not supported")
    L, H = c["num_hidden_layers"], c["num_attention_heads"]
    KV = c["num_key_value_heads"]
    if H % KV:
        raise Unsupported("%d attention heads are not a multiple of %d key/value heads" % (H, KV))
    # GptOssConfig: layer_types default "sliding_attention" where (i + 1) % 2, else full
    kinds = c["layer_types"] or ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(L)]
    if len(kinds) != L or any(k not in ("sliding_attention", "full_attention") for k in kinds):
        raise Unsupported("layer_types must list sliding_attention or full_attention for each of %d layers" % L)
    rs = _rope_scaling("gpt_oss", c)
    d = c["head_dim"]
    s = dict(family="gpt_oss", n_layers=L, n_heads=H, kv_heads=KV, hidden=c["hidden_size"], head_dim=d,
             intermediate=c["intermediate_size"], vocab_size=c["vocab_size"],
             max_positions=c["max_position_embeddings"], eps=c["rms_norm_eps"], scaling=d ** -0.5, norm="rmsnorm",
             windows=[c["sliding_window"] if k == "sliding_attention" else None for k in kinds],
             rotary_dim=d, rope=[dict(theta=float(c["rope_theta"]), scaling=rs)] * L,
             rope_max_positions=c["max_position_embeddings"], n_experts=c["num_local_experts"],
             top_k=c.get("num_experts_per_tok", c["experts_per_token"]), limit=float(c["swiglu_limit"]),
             alpha=1.702, attention_bias=bool(c["attention_bias"]))
    if not 1 <= s["top_k"] <= s["n_experts"]:
        raise Unsupported("experts_per_token %d outside 1 .. %d experts" % (s["top_k"], s["n_experts"]))
    return s


def mxfp4_decode(blocks, scales):
    """blocks [E, R, G, 16], scales [E, R, G] (uint8) -> float64 [E, G*32, R]: the float32 weight
    x @ W reads (transposed, as convert_moe_packed_tensors returns it)."""
    blocks = np.asarray(blocks).astype(np.uint8)
    scales = np.asarray(scales).astype(np.int64)
    if blocks.shape[:-1] != scales.shape or blocks.shape[-1] != 16:
        raise ValueError("MXFP4 blocks %s and scales %s do not match" % (blocks.shape, scales.shape))
    E, R, G, _ = blocks.shape
    vals = np.empty((E, R, G, 32))
    vals[..., 0::2] = FP4_E2M1[blocks & 0x0F]
    vals[..., 1::2] = FP4_E2M1[blocks >> 4]
    vals = vals * np.exp2(scales - 127.0)[..., None]  # ldexp: exact
    return vals.reshape(E, R, G * 32).transpose(0, 2, 1)


def gpt_oss_weights(tensors):
    """Strip `model.`, drop lm_head, decode the MXFP4 expert pairs into gate_up_proj / down_proj."""
    out = {}
    for name, arr in tensors.items():
        if name == "lm_head.weight":
            continue
        if name.startswith("model."):
            name = name[len("model."):]
        out[name] = arr
    for name in [n for n in out if n.endswith("_blocks")]:
        base = name[:-len("_blocks")]
        if base + "_scales" not in out:
            raise ValueError("%s has no %s_scales" % (name, base))
        out[base] = mxfp4_decode(out.pop(name), out.pop(base + "_scales"))
    return out


def gpt_oss_expected(m):
    H, KV, d, hid, I, E = m["n_heads"], m["kv_heads"], m["head_dim"], m["hidden"], m["intermediate"], m["n_experts"]
    e = {"embed_tokens.weight": (m["vocab_size"], hid), "norm.weight": (hid,)}
    for i in range(m["n_layers"]):
        p = "layers.%d." % i
        e[p + "input_layernorm.weight"] = e[p + "post_attention_layernorm.weight"] = (hid,)
        a = p + "self_attn."
        e[a + "q_proj.weight"], e[a + "k_proj.weight"], e[a + "v_proj.weight"] = (H * d, hid), (KV * d, hid), (KV * d, hid)
        e[a + "o_proj.weight"], e[a + "sinks"] = (hid, H * d), (H,)
        if m["attention_bias"]:
            e[a + "q_proj.bias"], e[a + "k_proj.bias"], e[a + "v_proj.bias"] = (H * d,), (KV * d,), (KV * d,)
            e[a + "o_proj.bias"] = (hid,)
        x = p + "mlp."
        e[x + "router.weight"], e[x + "router.bias"] = (E, hid), (E,)
        e[x + "experts.gate_up_proj"], e[x + "experts.gate_up_proj_bias"] = (E, hid, 2 * I), (E, 2 * I)
        e[x + "experts.down_proj"], e[x + "experts.down_proj_bias"] = (E, I, hid), (E, hid)
    return e


def gpt_oss_forward(m, ids, dtype=np.float64, layer_inputs=None, **wrong):
    """forward() for gpt-oss; also returns sinks [L][H], router_logits [L][n][E], router_topk [L][n][k]
    (torch.topk's order) and router_weights [L][n][k] (the softmax of those k logits).
    WRONG: sinks_off (no sink logit), renormalise (rows divided by their sum after the sink is dropped),
    no_interleave (gate = first I columns, up = the last I), truncate (YaRN with floor/ceil), no_clamp
    (SwiGLU without swiglu_limit), windows (a window per layer instead of layer_types')."""
    W = {k: np.asarray(v).astype(dtype) for k, v in m["w"].items()}
    ids = np.asarray(ids, dtype=np.int64)
    n = len(ids)
    if n == 0 or ids.min() < 0 or ids.max() >= m["vocab_size"]:
        raise ValueError("no tokens, or a token id out of range")
    H, KV, d, I, K = m["n_heads"], m["kv_heads"], m["head_dim"], m["intermediate"], m["top_k"]
    group = H // KV
    eps = m["eps"]

    def rms(x, name):  # GptOssRMSNorm: x * rsqrt(mean(x^2) + eps), then weight * x
        return W[name] * (x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + dtype(eps)))

    def lin(x, name, bias=True):
        y = x @ W[name + ".weight"].T
        return y + W[name + ".bias"] if bias else y

    pos = np.arange(n, dtype=np.float64)
    x = W["embed_tokens.weight"][ids]
    hs = [x]
    res = {k: [] for k in ("attentions", "q", "k", "v", "q_rot", "k_rot", "context", "inv_freq", "attention_factor",
                           "sinks", "router_logits", "router_topk", "router_weights")}
    for i in range(m["n_layers"]):
        p = "layers.%d." % i
        if layer_inputs is not None:
            x = np.asarray(layer_inputs[i], dtype=dtype)
        h = rms(x, p + "input_layernorm.weight")
        b = m["attention_bias"]
        q = lin(h, p + "self_attn.q_proj", b).reshape(n, H, d).transpose(1, 0, 2)
        k = lin(h, p + "self_attn.k_proj", b).reshape(n, KV, d).transpose(1, 0, 2)
        v = lin(h, p + "self_attn.v_proj", b).reshape(n, KV, d).transpose(1, 0, 2)
        rope = m["rope"][i]
        if wrong.get("truncate"):
            rope = dict(rope, scaling=dict(rope["scaling"], truncate=True))
        inv, att = inv_freq(rope, d, m["rope_max_positions"], n)
        ang = _f32(pos[:, None] * inv[None, :])  # a float32 product in transformers
        cos, sin = (np.cos(ang) * att).astype(dtype), (np.sin(ang) * att).astype(dtype)
        half = d // 2

        def rot(t):  # _apply_rotary_emb: chunk into halves, (a cos - b sin, b cos + a sin)
            a, bb = t[..., :half], t[..., half:]
            return np.concatenate([a * cos - bb * sin, bb * cos + a * sin], axis=-1)
        q_rot, k_rot = rot(q), rot(k)
        kv_of = np.arange(H) // group
        scores = np.einsum("hid,hjd->hij", q_rot, k_rot[kv_of]) * dtype(m["scaling"])
        qi, kj = np.arange(n)[:, None], np.arange(n)[None, :]
        visible = kj <= qi
        win = wrong["windows"][i] if wrong.get("windows") is not None else m["windows"][i]
        if win is not None:
            visible &= kj > qi - win  # the W keys i-W+1 .. i
        scores = np.where(visible, scores, -np.inf)
        sink = W[p + "self_attn.sinks"]
        if wrong.get("sinks_off"):
            sink = np.full(H, -np.inf)
        comb = np.concatenate([scores, np.broadcast_to(sink[:, None, None], (H, n, 1))], axis=-1)
        comb = comb - comb.max(axis=-1, keepdims=True)
        e = np.exp(comb)
        probs = (e / e.sum(axis=-1, keepdims=True))[..., :-1]  # the sink's column dropped
        if wrong.get("renormalise"):
            probs = probs / probs.sum(axis=-1, keepdims=True)
        ctx = (probs @ v[kv_of]).transpose(1, 0, 2).reshape(n, H * d)
        x = x + lin(ctx, p + "self_attn.o_proj", b)
        # --- the mixture of experts
        h = rms(x, p + "post_attention_layernorm.weight")
        logits = lin(h, p + "mlp.router")
        topk = np.argsort(-logits, axis=-1, kind="stable")[:, :K]  # torch.topk: largest first
        top = np.take_along_axis(logits, topk, axis=-1)
        wts = np.exp(top - top.max(axis=-1, keepdims=True))
        wts = wts / wts.sum(axis=-1, keepdims=True)
        out = np.zeros_like(x)
        gu_all, dn_all = W[p + "mlp.experts.gate_up_proj"], W[p + "mlp.experts.down_proj"]
        for ex in range(m["n_experts"]):
            rows, slot = np.nonzero(topk == ex)
            if len(rows) == 0:
                continue
            gu = h[rows] @ gu_all[ex] + W[p + "mlp.experts.gate_up_proj_bias"][ex]
            if wrong.get("no_interleave"):
                gate, up = gu[:, :I], gu[:, I:]
            else:
                gate, up = gu[:, 0::2], gu[:, 1::2]
            if not wrong.get("no_clamp"):
                gate = np.minimum(gate, dtype(m["limit"]))
                up = np.clip(up, -dtype(m["limit"]), dtype(m["limit"]))
            glu = gate / (1 + np.exp(-gate * dtype(m["alpha"])))  # gate * sigmoid(alpha * gate)
            y = ((up + 1) * glu) @ dn_all[ex] + W[p + "mlp.experts.down_proj_bias"][ex]
            np.add.at(out, rows, y * wts[rows, slot][:, None])
        x = x + out
        for key, val in (("attentions", probs), ("q", q), ("k", k), ("v", v), ("q_rot", q_rot), ("k_rot", k_rot),
                         ("context", ctx), ("inv_freq", inv), ("attention_factor", att), ("sinks", sink),
                         ("router_logits", logits), ("router_topk", topk), ("router_weights", wts)):
            res[key].append(val)
        hs.append(x)
    last = rms(x, "norm.weight")
    hs[-1] = last
    out = {k: np.array(v) for k, v in res.items()}
    out["hidden_states"] = np.array(hs)
    out["last_hidden_state"] = last
    return out


def gpt_oss_config_summary(m, n):
    """The `config` object of a gpt-oss case, in the shared reference's keys."""
    rs = m["rope"][0]
    inv, att = inv_freq(rs, m["rotary_dim"], m["rope_max_positions"], n)
    kinds = ["sliding_attention" if w is not None else "full_attention" for w in m["windows"]]
    win = [w for w in m["windows"] if w is not None]
    return {"num_layers": m["n_layers"], "num_heads": m["n_heads"], "num_kv_heads": m["kv_heads"],
            "head_dim": m["head_dim"], "hidden_size": m["hidden"], "intermediate_size": m["intermediate"],
            "vocab_size": m["vocab_size"], "max_positions": m["max_positions"], "layer_norm_eps": m["eps"],
            "norm": "rmsnorm (x / rms * w)",
            "rope": {"theta": rs["theta"], "rotary_dim": m["rotary_dim"], "scaling": rs["scaling"],
                     "style": "rotate_half (GPT-NeoX): dims i and i+rotary_dim/2 form a pair",
                     "inv_freq_per_layer": [[float(F32(x)) for x in inv]] * m["n_layers"],
                     "attention_factor_per_layer": [att] * m["n_layers"]},
            "attention": {"scaling": m["scaling"], "softcap": None, "sliding_window": win[0] if win else None,
                          "layer_types": kinds, "qkv_bias": m["attention_bias"], "sinks": True},
            "moe": {"num_experts": m["n_experts"], "top_k": m["top_k"], "intermediate_size": m["intermediate"],
                    "swiglu_limit": m["limit"], "alpha": m["alpha"]}}


def gpt_oss_extra_diffs(case, out):
    """The case's gpt-oss keys against OUT: max |diff| of the sinks and router logits, and whether the
    chosen experts are the same (1.0 = all equal)."""
    if "router_logits" not in case or "router_logits" not in out:
        return []
    logits = np.array(case["router_logits"])  # [L][batch 1][n][E] as transformers records them
    return [("sinks", float(np.abs(np.array(case["sinks"]) - out["sinks"]).max())),
            ("router_logits", float(np.abs(logits.reshape(out["router_logits"].shape) - out["router_logits"]).max())),
            ("topk_equal", float(np.array_equal(np.array(case["router_topk"]), out["router_topk"])))]


# ---------------------------------------------------------------------------------------------
# DeepSeek-V3 (configuration_deepseek_v3.py / modeling_deepseek_v3.py of transformers 4.51): multi-head
# latent attention and a grouped sigmoid router with shared experts. Its own forward pass: the block is
# Llama's (pre-norm, SwiGLU), but q/k/v and the MLP of the routed layers have nothing in common with the
# generic path above.

DEFAULTS["deepseek_v3"] = dict(
    vocab_size=129280, hidden_size=7168, intermediate_size=18432, moe_intermediate_size=2048,
    num_hidden_layers=61, num_attention_heads=128, num_key_value_heads=128, n_shared_experts=1,
    n_routed_experts=256, routed_scaling_factor=2.5, kv_lora_rank=512, q_lora_rank=1536, qk_rope_head_dim=64,
    v_head_dim=128, qk_nope_head_dim=128, n_group=8, topk_group=4, num_experts_per_tok=8,
    first_k_dense_replace=3, norm_topk_prob=True, hidden_act="silu", max_position_embeddings=4096,
    rms_norm_eps=1e-6, rope_theta=10000.0, rope_scaling=None, rope_interleave=True, attention_bias=False)

# DeepseekV3Attention builds q_a_layernorm / kv_a_layernorm as DeepseekV3RMSNorm(rank): eps 1e-6,
# whatever rms_norm_eps says
DEEPSEEK_LORA_NORM_EPS = 1e-6


def deepseek_settings(cfg):
    c = dict(DEFAULTS["deepseek_v3"])
    c.update(cfg)
    if c["attention_bias"]:
        raise Unsupported("DeepSeek-V3 with attention_bias (biases on q_a_proj, kv_a_proj_with_mqa, o_proj) "
                          "is not supported")
    H, E, G = c["num_attention_heads"], c["n_routed_experts"], c["n_group"]
    nope, rope, vd = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    if E % G or c["topk_group"] > G or c["num_experts_per_tok"] > E // G * c["topk_group"]:
        raise Unsupported("n_routed_experts %d in n_group %d, topk_group %d, top %d: inconsistent"
                          % (E, G, c["topk_group"], c["num_experts_per_tok"]))
    rs = _rope_scaling("deepseek_v3", c)
    scaling = (nope + rope) ** -0.5
    if rs is not None and rs.get("mscale_all_dim"):  # DeepseekV3Attention: scaling * mscale^2
        f = float(rs["factor"])
        ms = 1.0 if f <= 1 else 0.1 * rs["mscale_all_dim"] * math.log(f) + 1.0
        scaling = scaling * ms * ms
    L = c["num_hidden_layers"]
    return dict(family="deepseek_v3", n_layers=L, n_heads=H, kv_heads=H, hidden=c["hidden_size"],
                head_dim=nope + rope, v_head_dim=vd, nope=nope, rope_dim=rope, q_rank=c["q_lora_rank"],
                kv_rank=c["kv_lora_rank"], rope_interleave=bool(c["rope_interleave"]),
                intermediate=c["intermediate_size"], moe_intermediate=c["moe_intermediate_size"],
                vocab_size=c["vocab_size"], max_positions=c["max_position_embeddings"],
                rope_max_positions=c["max_position_embeddings"], eps=c["rms_norm_eps"], act=c["hidden_act"],
                rope=[dict(theta=float(c["rope_theta"]), scaling=rs)] * L, rotary_dim=rope, scaling=scaling,
                # DeepseekV3DecoderLayer: the MoE from layer first_k_dense_replace on (moe_layer_freq unread)
                layer_moe=[i >= c["first_k_dense_replace"] for i in range(L)], n_experts=E, n_group=G,
                topk_group=c["topk_group"], top_k=c["num_experts_per_tok"], norm_topk_prob=bool(c["norm_topk_prob"]),
                routed_scaling_factor=float(c["routed_scaling_factor"]), n_shared=c["n_shared_experts"],
                norm="rmsnorm", windows=[None] * L, softcap=None, embed_scale=None, qk_norm=None,
                qkv_bias=False, o_bias=False, mlp_bias=False, mlp="gated")


def deepseek_expected_names(m):
    H, hid, D, vd = m["n_heads"], m["hidden"], m["head_dim"], m["v_head_dim"]
    e = {"embed_tokens.weight": (m["vocab_size"], hid), "norm.weight": (hid,)}
    for i in range(m["n_layers"]):
        p = "layers.%d." % i
        e[p + "input_layernorm.weight"] = e[p + "post_attention_layernorm.weight"] = (hid,)
        a = p + "self_attn."
        if m["q_rank"]:
            e[a + "q_a_proj.weight"], e[a + "q_a_layernorm.weight"] = (m["q_rank"], hid), (m["q_rank"],)
            e[a + "q_b_proj.weight"] = (H * D, m["q_rank"])
        else:
            e[a + "q_proj.weight"] = (H * D, hid)
        e[a + "kv_a_proj_with_mqa.weight"] = (m["kv_rank"] + m["rope_dim"], hid)
        e[a + "kv_a_layernorm.weight"] = (m["kv_rank"],)
        e[a + "kv_b_proj.weight"] = (H * (m["nope"] + vd), m["kv_rank"])
        e[a + "o_proj.weight"] = (hid, H * vd)
        mlps = {p + "mlp.": m["intermediate"]}
        if m["layer_moe"][i]:
            mlps = {p + "mlp.experts.%d." % x: m["moe_intermediate"] for x in range(m["n_experts"])}
            mlps[p + "mlp.shared_experts."] = m["moe_intermediate"] * m["n_shared"]
            e[p + "mlp.gate.weight"] = (m["n_experts"], hid)
            e[p + "mlp.gate.e_score_correction_bias"] = (m["n_experts"],)
        for q, inter in mlps.items():
            e[q + "gate_proj.weight"] = e[q + "up_proj.weight"] = (inter, hid)
            e[q + "down_proj.weight"] = (hid, inter)
    return e


def deepseek_route(m, W, p, x, **wrong):
    """The router of DeepseekV3TopkRouter on X [n][hidden], in float32 as transformers computes it.
    Returns (experts [n][k] ascending, weights [n][k] in that order (float32 values), logits [n][E])."""
    E, G, K = m["n_experts"], m["n_group"], m["top_k"]
    logits = _f32(np.asarray(x, np.float64) @ m["w"][p + "mlp.gate.weight"].astype(np.float64).T)
    s = _f32(1.0 / (1.0 + np.exp(-logits)))
    bias = m["w"][p + "mlp.gate.e_score_correction_bias"].astype(np.float64)
    choice = s if wrong.get("no_score_bias") else _f32(s + bias)
    topk, weights = [], []
    for t in range(len(x)):
        c = choice[t].copy()
        if not wrong.get("no_groups"):
            groups = c.reshape(G, E // G)
            gs = np.sort(groups, axis=-1)[:, -2:].sum(-1)  # the sum of each group's 2 best
            keep = np.argsort(-gs, kind="stable")[:m["topk_group"]]
            mask = np.zeros(G, bool)
            mask[keep] = True
            c = np.where(np.repeat(mask, E // G), c, 0.0)  # masked_fill(~mask, 0.0), not -inf
        idx = np.sort(np.argsort(-c, kind="stable")[:K])
        w = (choice if wrong.get("bias_in_weights") else s)[t][idx]
        if m["norm_topk_prob"]:
            w = w / (w.sum() + 1e-20)
        w = w * m["routed_scaling_factor"]
        topk.append(idx)
        weights.append(_f32(w))
    return np.array(topk), np.array(weights), logits


def deepseek_forward(m, ids, dtype=np.float64, layer_inputs=None, **wrong):
    """forward() for DeepSeek-V3; also returns moe_topk / moe_weights / moe_router_logits per layer (None
    on dense layers). Mistakes: no_deinterleave, kv_b_blocked (kv_b_proj rows read as [k_nope of every
    head | v of every head] instead of per head), no_groups, no_score_bias, bias_in_weights, no_shared,
    scaling (a number), rope_interleaved (the other convention), no_mscale."""
    W = {k: v.astype(dtype) for k, v in m["w"].items()}
    ids = np.asarray(ids, dtype=np.int64)
    n = len(ids)
    H, D, nope, rd, vd = m["n_heads"], m["head_dim"], m["nope"], m["rope_dim"], m["v_head_dim"]
    eps, act = m["eps"], m["act"]

    def lin(name, x):
        return x @ W[name + ".weight"].T

    def rms(x, name, e=eps):
        return rms_norm(x, m["w"][name + ".weight"], e, False, dtype)

    def swiglu(q, x):
        return lin(q + "down_proj", activation(act, lin(q + "gate_proj", x)) * lin(q + "up_proj", x))

    pos = np.arange(n, dtype=np.float64)
    inv, att = inv_freq(m["rope"][0], rd, m["rope_max_positions"], n)
    if dtype == np.float32:
        ang = pos.astype(F32)[:, None] * inv.astype(F32)[None, :]
    else:
        ang = _f32(pos[:, None] * inv[None, :])
    cos = np.concatenate([np.cos(ang), np.cos(ang)], axis=-1).astype(dtype) * dtype(att)
    sin = np.concatenate([np.sin(ang), np.sin(ang)], axis=-1).astype(dtype) * dtype(att)
    interleave = m["rope_interleave"] != bool(wrong.get("rope_interleaved"))
    scaling = wrong.get("scaling", m["scaling"])
    if wrong.get("no_mscale"):
        scaling = D ** -0.5

    def rot(x):  # x [..][n][rd]: apply_rotary_pos_emb(_interleave)
        if interleave and not wrong.get("no_deinterleave"):
            x = np.concatenate([x[..., 0::2], x[..., 1::2]], axis=-1)  # (x0, x2, ..., x1, x3, ...)
        return rotate(x, cos, sin, rd)

    x = W["embed_tokens.weight"][ids]
    hs = [x]
    keys = ("attentions", "q", "k", "v", "q_rot", "k_rot", "context", "inv_freq", "attention_factor",
            "moe_topk", "moe_weights", "moe_router_logits")
    res = {k: [] for k in keys}
    for i in range(m["n_layers"]):
        p, a = "layers.%d." % i, "layers.%d.self_attn." % i
        if layer_inputs is not None:
            x = np.asarray(layer_inputs[i], dtype=dtype)
        h = rms(x, p + "input_layernorm")
        if m["q_rank"]:
            qf = lin(a + "q_b_proj", rms(lin(a + "q_a_proj", h), a + "q_a_layernorm", DEEPSEEK_LORA_NORM_EPS))
        else:
            qf = lin(a + "q_proj", h)
        q = qf.reshape(n, H, D).transpose(1, 0, 2)  # [H][n][nope | rope]
        ckv = lin(a + "kv_a_proj_with_mqa", h)
        comp, k_pe = ckv[:, :m["kv_rank"]], ckv[:, m["kv_rank"]:]  # k_pe: one rope key for every head
        kv = lin(a + "kv_b_proj", rms(comp, a + "kv_a_layernorm", DEEPSEEK_LORA_NORM_EPS))
        if wrong.get("kv_b_blocked"):
            k_nope = kv[:, :H * nope].reshape(n, H, nope).transpose(1, 0, 2)
            v = kv[:, H * nope:].reshape(n, H, vd).transpose(1, 0, 2)
        else:
            kv = kv.reshape(n, H, nope + vd).transpose(1, 0, 2)
            k_nope, v = kv[..., :nope], kv[..., nope:]
        k = np.concatenate([k_nope, np.broadcast_to(k_pe, (H, n, rd))], axis=-1)
        q_rot = np.concatenate([q[..., :nope], rot(q[..., nope:])], axis=-1)
        k_rot = np.concatenate([k[..., :nope], rot(k[..., nope:])], axis=-1)
        scores = q_rot @ k_rot.transpose(0, 2, 1) * dtype(scaling)
        visible = np.arange(n)[None, :] <= np.arange(n)[:, None]
        probs = softmax(np.where(visible, scores, np.finfo(dtype).min))
        ctx = (probs @ v).transpose(1, 0, 2).reshape(n, H * vd)
        x = x + lin(a + "o_proj", ctx)
        h = rms(x, p + "post_attention_layernorm")
        topk = weights = logits = None
        if m["layer_moe"][i]:
            topk, weights, logits = deepseek_route(m, W, p, h, **wrong)
            y = np.zeros_like(h)
            for t in range(n):
                for e_, w_ in zip(topk[t], weights[t]):  # ascending experts, as the index_add loop
                    y[t] += swiglu(p + "mlp.experts.%d." % e_, h[t:t + 1])[0] * dtype(w_)
            if not wrong.get("no_shared"):
                y = y + swiglu(p + "mlp.shared_experts.", h)
        else:
            y = swiglu(p + "mlp.", h)
        x = x + y
        for key, val in (("attentions", probs), ("q", q), ("k", k), ("v", v), ("q_rot", q_rot), ("k_rot", k_rot),
                         ("context", ctx), ("inv_freq", inv), ("attention_factor", att), ("moe_topk", topk),
                         ("moe_weights", weights), ("moe_router_logits", logits)):
            res[key].append(val)
        hs.append(x)
    last = rms(x, "norm")
    hs[-1] = last
    out = {k: np.array(v) for k, v in res.items() if not k.startswith("moe_")}
    out.update({k: res[k] for k in ("moe_topk", "moe_weights", "moe_router_logits")})
    out["hidden_states"] = np.array(hs)
    out["last_hidden_state"] = last
    return out


def deepseek_min_gaps(m, out, ids):
    """The smallest margin of each routing decision (choice score of the k-th expert over the next, and
    of the last kept group over the next), for the fixtures: float32 rounding must not flip them."""
    gaps = []
    for i, logits in enumerate(out["moe_router_logits"]):
        if logits is None:
            continue
        s = 1.0 / (1.0 + np.exp(-logits))
        c = s + m["w"]["layers.%d.mlp.gate.e_score_correction_bias" % i].astype(np.float64)
        E, G = m["n_experts"], m["n_group"]
        for t in range(len(ids)):
            gs = np.sort(np.sort(c[t].reshape(G, E // G), axis=-1)[:, -2:].sum(-1))[::-1]
            if m["topk_group"] < G:
                gaps.append(gs[m["topk_group"] - 1] - gs[m["topk_group"]])
            keep = np.argsort(-np.sort(c[t].reshape(G, E // G), axis=-1)[:, -2:].sum(-1), kind="stable")[:m["topk_group"]]
            vals = np.sort(np.concatenate([c[t].reshape(G, E // G)[g] for g in keep]))[::-1]
            if len(vals) > m["top_k"]:
                gaps.append(vals[m["top_k"] - 1] - vals[m["top_k"]])
    return min(gaps) if gaps else float("inf")


def deepseek_config_summary(m, n):
    inv, att = inv_freq(m["rope"][0], m["rope_dim"], m["rope_max_positions"], n)
    L = m["n_layers"]
    return {
        "num_layers": L, "num_heads": m["n_heads"], "num_kv_heads": m["n_heads"], "head_dim": m["head_dim"],
        "v_head_dim": m["v_head_dim"], "hidden_size": m["hidden"], "intermediate_size": m["intermediate"],
        "vocab_size": m["vocab_size"], "max_positions": m["max_positions"], "layer_norm_eps": m["eps"],
        "activation": m["act"], "norm": "rmsnorm (x / rms * w)",
        "rope": {"theta": m["rope"][0]["theta"], "rotary_dim": m["rope_dim"], "scaling": m["rope"][0]["scaling"],
                 "style": "MLA: the last qk_rope_head_dim dims of q/k, de-interleaved first when rope_interleave, "
                          "then rotate_half", "theta_per_layer": [m["rope"][0]["theta"]] * L,
                 "inv_freq_per_layer": [[float(F32(x)) for x in inv]] * L, "attention_factor_per_layer": [att] * L},
        "attention": {"scaling": m["scaling"], "softcap": None, "sliding_window": None,
                      "layer_types": ["full_attention"] * L, "qk_norm": None, "qkv_bias": False},
        "mla": {"q_lora_rank": m["q_rank"], "kv_lora_rank": m["kv_rank"], "qk_nope_head_dim": m["nope"],
                "qk_rope_head_dim": m["rope_dim"], "qk_head_dim": m["head_dim"], "v_head_dim": m["v_head_dim"],
                "rope_interleave": m["rope_interleave"]},
        "moe": {"n_routed_experts": m["n_experts"], "n_shared_experts": m["n_shared"], "top_k": m["top_k"],
                "n_group": m["n_group"], "topk_group": m["topk_group"], "norm_topk_prob": m["norm_topk_prob"],
                "routed_scaling_factor": m["routed_scaling_factor"], "moe_intermediate_size": m["moe_intermediate"],
                "layer_is_moe": m["layer_moe"]},
    }

# ---------------------------------------------------------------------------------------------
# Command line.

def _verify(cases_dir, models_dir, dtype, forced):
    names = sorted(f for f in os.listdir(cases_dir) if f.endswith(".json"))
    worst, models, rows = {}, {}, 0
    print("%-30s %4s  %s" % ("case", "n", "  ".join("%-8s" % q[:8] for q in QUANTITIES)))
    for name in names:
        with open(os.path.join(cases_dir, name)) as f:
            case = json.load(f)
        if case.get("family") not in FAMILIES:
            continue
        model_name = os.path.basename(case["model_dir"].rstrip("/"))
        if model_name not in models:
            models[model_name] = load_model(os.path.join(models_dir, model_name))
        # families without rotary (GPT-Neo) have no q_rot / k_rot: their scores use q / k
        ref = {qn: np.array(case[qn] if qn in case else case[qn[0]], dtype=np.float64) for qn in QUANTITIES}
        m = models[model_name]
        runs = [("", forward(m, case["ids"], dtype))]
        if forced:  # each layer fed the reference's own input to it: per-layer math only
            runs.append((" [per layer]", forward(m, case["ids"], dtype, layer_inputs=ref["hidden_states"][:-1])))
        for tag, out in runs:
            diffs = []
            for qn in QUANTITIES:
                if qn not in ref:  # the shared cases of families without rotary have no q_rot / k_rot
                    diffs.append(float("nan"))
                    continue
                if ref[qn].shape != out[qn].shape:
                    raise SystemExit("%s: %s shape %s, reference %s" % (name, qn, out[qn].shape, ref[qn].shape))
                diff = float(np.abs(out[qn] - ref[qn]).max())
                for key in (case["family"] + tag, "all" + tag):
                    worst.setdefault(key, {})
                    worst[key][qn] = max(worst[key].get(qn, 0.0), diff)
                diffs.append(diff)
            rows += 1
            print("%-30s %4d  %s" % ((name[:-5] + tag)[:30], len(case["ids"]), "  ".join("%-8.1e" % x for x in diffs)))
            if "moe_topk" in case and "moe_topk" in out:  # the routing: the same experts, and their weights
                other, wd = _moe_diff(case, out)
                for key in (case["family"] + tag, "all" + tag):
                    worst.setdefault(key, {})
                    worst[key]["moe_other_experts"] = worst[key].get("moe_other_experts", 0) + other
                    worst[key]["moe_weights"] = max(worst[key].get("moe_weights", 0.0), wd)
                print("%-30s       moe: %d other experts, weights %.1e" % ("", other, wd))
            for qn, diff in gpt_oss_extra_diffs(case, out):  # gpt-oss: sinks, router logits, chosen experts
                print("%-30s %4s  %s %.1e" % ("", "", qn, diff))
    if not rows:
        raise SystemExit("no decoder cases in %s" % cases_dir)
    print("max per family:")
    for fam in sorted(worst):
        print("%-30s %4s  %s" % (fam, "", "  ".join("%-8.1e" % worst[fam].get(q, float("nan")) for q in QUANTITIES)))
    return worst


def _moe_diff(case, out):
    """(cells with another expert, max |weight difference| where they agree) between a case's routing and
    OUT's; a layer dense on one side only counts all its tokens."""
    other, worst = 0, 0.0
    for ck, cw, ok, ow in zip(case["moe_topk"], case["moe_weights"], out["moe_topk"], out["moe_weights"]):
        if ck is None or ok is None:
            other += 0 if ck is None and ok is None else len(case["ids"])
            continue
        ck, cw = np.array(ck), np.array(cw, dtype=np.float64)
        same = ck == ok
        other += int((~same).sum())
        if same.any():
            worst = max(worst, float(np.abs(cw - ow)[same].max()))
    return other, worst


LIMITS = dict(attentions=2e-6, q=5e-6, k=5e-6, v=5e-6, q_rot=5e-6, k_rot=5e-6)


def main(argv):
    if len(argv) >= 2 and argv[1] == "verify":
        args = argv[2:]
        dtype = np.float64
        if args and args[0] == "--float32":
            dtype, args = np.float32, args[1:]
        cases = args[0] if args else "/work/shared/reference/cases"
        models = args[1] if len(args) > 1 else os.path.join(os.path.dirname(os.path.abspath(cases)), "models")
        worst = _verify(cases, models, dtype, forced=True)
        if dtype == np.float32:
            return 0
        # the per-layer run is the model's math; end to end, float32 rounding differences grow
        # with depth (4-layer sandwich-norm Gemma 2/3: ~1e-5), so only the per-layer run is held to
        # the shared README's tolerances
        bad = [q for q, lim in LIMITS.items() if worst["all [per layer]"][q] > lim]
        bad += [q for q in ("moe_other_experts",) if worst["all"].get(q, 0) or worst["all [per layer]"].get(q, 0)]
        if bad:
            print("FAIL: per-layer differences beyond tolerance: %s" % ", ".join(bad))
            return 1
        print("ok: per layer, attentions <= %g, q/k/v/q_rot/k_rot <= %g" % (LIMITS["attentions"], LIMITS["q"]))
        return 0
    if len(argv) == 3 and argv[1] == "check":
        try:
            m = load_model(argv[2])
        except Unsupported as e:
            print("unsupported: %s" % e)
            return 1
        print("ok: %s, %d layers, %d/%d heads, head_dim %d" % (m["family"], m["n_layers"], m["n_heads"], m["kv_heads"], m["head_dim"]))
        return 0
    if len(argv) >= 4 and argv[1] == "run":
        model = load_model(argv[2])
        out = forward(model, [int(a) for a in argv[3:]])
        np.set_printoptions(precision=4, suppress=True, linewidth=150)
        for layer, heads in enumerate(out["attentions"]):
            for head, a in enumerate(heads):
                print("layer %d head %d\n%s" % (layer, head, a))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
