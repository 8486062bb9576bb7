#!/usr/bin/python3
"""make_encdec_fixtures.py -- fixture models and cases for the encoder-decoder families (issue 21).

Writes two small random-weight models to tests/data/models/<name>/ and what ref_encdec.py (the
independent numpy reference) computes on them to tests/data/cases/<name>--<case>.json, the shared
reference's encoder-decoder case format, so that check_engine runs them without the shared reference
and the fuzzers have an encoder-decoder folder:

  bart-encdec  BartForConditionalGeneration's file layout ("model." prefix, lm_head.weight and
               final_logits_bias to be ignored), post-LN, positions two rows down, layernorm_embedding,
               scale_embedding true, 2 encoder and 3 decoder layers, the roberta-bpe fixture tokenizer
               (BartTokenizer's ids: the text and target steps run too), F32.
  t5-encdec    T5ForConditionalGeneration's layout (no prefix, the tied table also stored as
               encoder/decoder.embed_tokens; tie_word_embeddings false as in Flan-T5), gated-gelu, heads x d_kv (2 x 6) != d_model
               (8), 2 encoder and 3 decoder layers, 8 buckets with max_distance 12 (the texts reach the
               log-spaced and the clipped buckets), F16 and F32 tensors; the t5-spm fixture tokenizer
               (the shared reference's t5-tiny spiece.model: KJV-trained with T5's special pieces).

Tokens and ids come from attnscope's own tokenizer (BIN --dump json on the freshly written folders):
allowed because the shared reference proves its BART and T5 tokenizers identical to BartTokenizer's and
T5Tokenizer's (tests/check_tokencdec). Deterministic: fixed seeds, a rerun gives identical bytes.

    /usr/bin/python3 tests/tools/make_encdec_fixtures.py ./attnscope
"""
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ref_encdec as R  # noqa: E402
from make_fixtures import write_json, write_safetensors  # noqa: E402

TOP = os.path.dirname(os.path.dirname(HERE))
MODELS_DIR = os.path.join(TOP, "tests", "data", "models")
CASES_DIR = os.path.join(TOP, "tests", "data", "cases")
TOK_DIR = os.path.join(TOP, "tests", "data", "tokenizer")

BART_TEXT = "The king went up to the city, and the people were glad."
BART_TARGET = "The king visited the city."
T5_TEXT = "summarize: The king went up to the city, and the people were glad. He stayed with them."
T5_TARGET = "The king visited the city."


def bart_spec(vocab):
    cfg = {"architectures": ["BartForConditionalGeneration"], "model_type": "bart", "d_model": 8,
           "encoder_layers": 2, "decoder_layers": 3, "encoder_attention_heads": 2, "decoder_attention_heads": 2,
           "encoder_ffn_dim": 12, "decoder_ffn_dim": 12, "max_position_embeddings": 64, "vocab_size": vocab,
           "activation_function": "gelu", "scale_embedding": True, "pad_token_id": 1, "bos_token_id": 0,
           "eos_token_id": 2, "decoder_start_token_id": 2, "is_encoder_decoder": True,
           "tie_word_embeddings": True, "torch_dtype": "float32", "transformers_version": "4.31.0"}
    return cfg


def t5_spec(vocab):
    return {"architectures": ["T5ForConditionalGeneration"], "model_type": "t5", "d_model": 8, "d_kv": 6,
            "num_heads": 2, "d_ff": 10, "num_layers": 2, "num_decoder_layers": 3, "vocab_size": vocab,
            "feed_forward_proj": "gated-gelu", "relative_attention_num_buckets": 8,
            "relative_attention_max_distance": 12, "layer_norm_epsilon": 1e-6, "decoder_start_token_id": 0,
            "pad_token_id": 0, "eos_token_id": 1, "tie_word_embeddings": False, "is_encoder_decoder": True,
            "torch_dtype": "float32", "transformers_version": "4.31.0"}


def bart_tensors(cfg, rng):
    H, I, V, P = cfg["d_model"], cfg["encoder_ffn_dim"], cfg["vocab_size"], cfg["max_position_embeddings"] + 2
    t = {}

    def lin(name, o, i, std=0.6):
        t[name + ".weight"] = ("F32", rng.normal(0, std, (o, i)))
        t[name + ".bias"] = ("F32", rng.normal(0, 0.2, (o,)))

    def ln(name):
        t[name + ".weight"] = ("F32", 1 + rng.normal(0, 0.3, (H,)))
        t[name + ".bias"] = ("F32", rng.normal(0, 0.2, (H,)))

    shared = rng.normal(0, 0.5, (V, H))
    t["model.shared.weight"] = ("F32", shared)
    t["lm_head.weight"] = ("F32", shared)  # BartForConditionalGeneration's (tied): not read
    t["final_logits_bias"] = ("F32", np.zeros((1, V)))
    for stack, layers in (("encoder", cfg["encoder_layers"]), ("decoder", cfg["decoder_layers"])):
        p = "model." + stack
        t[p + ".embed_positions.weight"] = ("F32", rng.normal(0, 0.5, (P, H)))
        ln(p + ".layernorm_embedding")
        for l in range(layers):
            q = "%s.layers.%d." % (p, l)
            for x in ("q_proj", "k_proj", "v_proj", "out_proj"):
                lin(q + "self_attn." + x, H, H)
            ln(q + "self_attn_layer_norm")
            if stack == "decoder":
                for x in ("q_proj", "k_proj", "v_proj", "out_proj"):
                    lin(q + "encoder_attn." + x, H, H)
                ln(q + "encoder_attn_layer_norm")
            lin(q + "fc1", I, H)
            lin(q + "fc2", H, I)
            ln(q + "final_layer_norm")
    return t


def t5_tensors(cfg, rng):
    H, I, V, heads, d = cfg["d_model"], cfg["d_ff"], cfg["vocab_size"], cfg["num_heads"], cfg["d_kv"]
    nb = cfg["relative_attention_num_buckets"]
    t = {}
    shared = rng.normal(0, 0.5, (V, H))
    for name in ("shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight"):
        t[name] = ("F16", shared)
    for stack, layers in (("encoder", cfg["num_layers"]), ("decoder", cfg["num_decoder_layers"])):
        t[stack + ".final_layer_norm.weight"] = ("F32", 1 + rng.normal(0, 0.3, (H,)))
        t[stack + ".block.0.layer.0.SelfAttention.relative_attention_bias.weight"] = ("F32", rng.normal(0, 1.0, (nb, heads)))
        for l in range(layers):
            b = "%s.block.%d.layer." % (stack, l)
            subs = [("0.SelfAttention.", "0.layer_norm.weight")]
            if stack == "decoder":
                subs.append(("1.EncDecAttention.", "1.layer_norm.weight"))
            for att, norm in subs:
                for x in ("q", "k", "v"):
                    t[b + att + x + ".weight"] = ("F32", rng.normal(0, 0.4, (heads * d, H)))
                t[b + att + "o.weight"] = ("F32", rng.normal(0, 0.4, (H, heads * d)))
                t[b + norm] = ("F32", 1 + rng.normal(0, 0.3, (H,)))
            f = 2 if stack == "decoder" else 1
            t[b + "%d.DenseReluDense.wi_0.weight" % f] = ("F32", rng.normal(0, 0.6, (I, H)))
            t[b + "%d.DenseReluDense.wi_1.weight" % f] = ("F32", rng.normal(0, 0.6, (I, H)))
            t[b + "%d.DenseReluDense.wo.weight" % f] = ("F32", rng.normal(0, 0.6, (H, I)))
            t[b + "%d.layer_norm.weight" % f] = ("F32", 1 + rng.normal(0, 0.3, (H,)))
    return t


def link(folder, tok, files):
    for f in files:
        dst = os.path.join(folder, f)
        if os.path.lexists(dst):
            os.remove(dst)
        os.symlink(os.path.join("..", "..", "tokenizer", tok, f), dst)


def write_model(name, cfg, tensors, tok, files):
    folder = os.path.join(MODELS_DIR, name)
    os.makedirs(folder, exist_ok=True)
    write_json(os.path.join(folder, "config.json"), cfg)
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors, True)
    link(folder, tok, files)
    return folder


def dump(binary, folder, args):
    out = subprocess.run([binary, "-m", folder, "--dump", "json", "--top-k", "0", "--threads", "1"] + args,
                         check=True, capture_output=True).stdout
    return json.loads(out)


def write_case(path, obj):
    """Compact JSON, floats to 9 significant digits (float32's round trip): the cases stay small."""
    def fix(x):
        if isinstance(x, float):
            return float('%.9g' % x)
        if isinstance(x, list):
            return [fix(v) for v in x]
        if isinstance(x, dict):  # T5's bias: the file's float32 values, kept exact
            return {k: v if k == "position_bias" else fix(v) for k, v in x.items()}
        return x
    with open(path, "w", encoding="utf-8") as f:
        json.dump(fix(obj), f, separators=(",", ":"), ensure_ascii=False)
        f.write("\n")


def case_json(folder, text, target, ids, labels, tokens, dec_tokens):
    ref = R.Model(folder).run(ids, labels)
    c = {"format": "attnscope encoder-decoder fixture (tests/tools/make_encdec_fixtures.py, ref_encdec.py)",
         "text": text, "text_b": None, "target": target, "tokens": tokens}
    c.update({k: R.tolist(v) for k, v in ref.items() if k != "decoder"})
    dec = {k: R.tolist(v) for k, v in ref["decoder"].items()}
    dec["tokens"] = dec_tokens
    c["decoder"] = dec
    return c


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    binary = argv[1]
    vocab = len(json.load(open(os.path.join(TOK_DIR, "roberta-bpe", "vocab.json"))))
    bart = write_model("bart-encdec", bart_spec(vocab), bart_tensors(bart_spec(vocab), np.random.default_rng(211)),
                       "roberta-bpe", ("vocab.json", "merges.txt", "tokenizer_config.json"))
    d = dump(binary, bart, ["--target", BART_TARGET, "--", BART_TEXT])
    write_case(os.path.join(CASES_DIR, "bart-encdec--summary.json"),
               case_json(bart, BART_TEXT, BART_TARGET, d["ids"], d["decoder"]["labels"], d["tokens"],
                         d["decoder"]["tokens"]))
    # 8192 rows as t5-tiny (the tokenizer's 8100 ids and padding, as t5-small's 32128 for 32100)
    t5 = write_model("t5-encdec", t5_spec(8192), t5_tensors(t5_spec(8192), np.random.default_rng(212)),
                     "t5-spm", ("spiece.model", "tokenizer_config.json"))
    d = dump(binary, t5, ["--target", T5_TARGET, "--", T5_TEXT])
    write_case(os.path.join(CASES_DIR, "t5-encdec--summary.json"),
               case_json(t5, T5_TEXT, T5_TARGET, d["ids"], d["decoder"]["labels"], d["tokens"],
                         d["decoder"]["tokens"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
