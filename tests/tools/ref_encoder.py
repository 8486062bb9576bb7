#!/usr/bin/python3
"""ref_encoder.py -- an independent numpy reference of the BERT relatives.

What Hugging Face transformers' base models compute for RoBERTa, XLM-RoBERTa, DistilBERT, ALBERT,
ELECTRA, DeBERTa-v2/v3 (transformers 4.31 code) and ModernBERT (4.51 code), written from the
published architectures (no transformers or torch import). The safetensors reader, LayerNorm,
softmax and activations are ref_forward.py's; ModernBERT's rotary helpers are ref_decoder.py's.

Precision: float64 by default (weights converted to float32 first, as transformers loads them,
then widened). Values transformers computes in float32 and that decide something discrete or
change the result measurably are computed in float32 as it does: DeBERTa's log buckets (torch's
float32 log / ceil: a float64 log moves a bucket boundary), ModernBERT's inv_freq and rotary
angles. `--float32` runs everything in float32 to measure how far a correct float32
implementation lands.

Library use:
    import ref_encoder
    m = ref_encoder.load_model("tests/data/models/deberta-rel")
    out = ref_encoder.forward(m, ids, token_type_ids)   # dict of numpy arrays, see forward()

Command line (Debian's /usr/bin/python3, which has numpy):
    ref_encoder.py verify [--float32] [CASES_DIR [MODELS_DIR]]
        run every encoder case of CASES_DIR (default /work/shared/reference/cases, models in
        ../models) from its ids, end to end and per layer (each layer fed the case's own
        hidden_states[l]); print the max |difference| per quantity
    ref_encoder.py run MODEL_DIR ID [ID ...]     print the attentions of one run
"""

import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ref_forward import activation, layer_norm, read_checkpoint, softmax  # noqa: E402
from ref_decoder import _default_inv_freq, _f32, rotate  # noqa: E402

F32 = np.float32
FAMILIES = ("roberta", "xlm-roberta", "distilbert", "albert", "electra", "deberta-v2", "modernbert")

# Defaults of each configuration class (keys a config.json may leave out).
DEFAULTS = {
    "roberta": dict(type_vocab_size=2, layer_norm_eps=1e-12, hidden_act="gelu", pad_token_id=1,
                    max_position_embeddings=512, position_embedding_type="absolute"),
    "distilbert": dict(activation="gelu", max_position_embeddings=512, sinusoidal_pos_embds=False),
    "albert": dict(embedding_size=128, type_vocab_size=2, layer_norm_eps=1e-12, hidden_act="gelu_new",
                   num_hidden_groups=1, inner_group_num=1, max_position_embeddings=512,
                   position_embedding_type="absolute"),
    "electra": dict(embedding_size=128, type_vocab_size=2, layer_norm_eps=1e-12, hidden_act="gelu",
                    max_position_embeddings=512, position_embedding_type="absolute"),
    "deberta-v2": dict(type_vocab_size=0, layer_norm_eps=1e-7, hidden_act="gelu", relative_attention=False,
                       max_relative_positions=-1, position_buckets=-1, pos_att_type=None, share_att_key=False,
                       norm_rel_ebd="none", position_biased_input=True, max_position_embeddings=512,
                       conv_kernel_size=0),
    "modernbert": dict(norm_eps=1e-5, hidden_activation="gelu", global_rope_theta=160000.0,
                       local_rope_theta=10000.0, local_attention=128, global_attn_every_n_layers=3,
                       attention_bias=False, mlp_bias=False, norm_bias=False, max_position_embeddings=8192),
}
DEFAULTS["xlm-roberta"] = DEFAULTS["roberta"]
# the prefix of the *For... head models' files (stripped), and the parts that are not the encoder
PREFIX = {"roberta": "roberta.", "xlm-roberta": "roberta.", "distilbert": "distilbert.", "albert": "albert.",
          "electra": "electra.", "deberta-v2": "deberta.", "modernbert": "model."}
IGNORED = ("pooler.", "lm_head.", "cls.", "predictions.", "classifier.", "head.", "decoder.",
           "generator_", "discriminator_", "vocab_", "qa_outputs.", "pre_classifier.", "mask_predictions.")


class Unsupported(ValueError):
    """A configuration this reference does not run."""


def settings(cfg):
    fam = cfg.get("model_type")
    if fam not in FAMILIES:
        raise Unsupported("model_type %r is not an encoder family here (%s)" % (fam, ", ".join(FAMILIES)))
    c = dict(DEFAULTS[fam])
    c.update(cfg)
    s = dict(family=fam, cfg=c)
    if fam == "distilbert":
        s.update(n_layers=c["n_layers"], n_heads=c["n_heads"], hidden=c["dim"], intermediate=c["hidden_dim"],
                 eps=1e-12, act=c["activation"], type_vocab=0)  # nn.LayerNorm(eps=1e-12) in the code
    elif fam == "modernbert":
        s.update(n_layers=c["num_hidden_layers"], n_heads=c["num_attention_heads"], hidden=c["hidden_size"],
                 intermediate=c["intermediate_size"], eps=c["norm_eps"], act=c["hidden_activation"], type_vocab=0)
        for key in ("attention_bias", "mlp_bias", "norm_bias"):
            if c[key]:
                raise Unsupported("ModernBERT with %s true is not covered" % key)
        every = c["global_attn_every_n_layers"]
        s["global_layer"] = [i % every == 0 for i in range(s["n_layers"])]
        s["theta"] = [float(c["global_rope_theta"] if g else c["local_rope_theta"]) for g in s["global_layer"]]
        s["window_radius"] = c["local_attention"] // 2
    else:
        s.update(n_layers=c["num_hidden_layers"], n_heads=c["num_attention_heads"], hidden=c["hidden_size"],
                 intermediate=c["intermediate_size"], eps=c["layer_norm_eps"], act=c["hidden_act"],
                 type_vocab=c["type_vocab_size"])
        if c.get("position_embedding_type", "absolute") != "absolute":
            raise Unsupported("position_embedding_type %r" % c["position_embedding_type"])
    s["vocab_size"] = c["vocab_size"]
    s["max_positions"] = c["max_position_embeddings"]
    s["embedding_size"] = c.get("embedding_size") or s["hidden"]
    if fam in ("roberta", "xlm-roberta"):
        s["pad"] = c["pad_token_id"]
    if fam == "albert":
        if c["inner_group_num"] != 1:
            raise Unsupported("ALBERT inner_group_num %d (only 1)" % c["inner_group_num"])
        if s["n_layers"] % c["num_hidden_groups"]:
            raise Unsupported("num_hidden_layers not a multiple of num_hidden_groups")
        s["groups"] = c["num_hidden_groups"]
    if fam == "deberta-v2":
        if not c["relative_attention"]:
            raise Unsupported("DeBERTa without relative_attention is not covered")
        if c["conv_kernel_size"]:
            raise Unsupported("DeBERTa's ConvLayer (conv_kernel_size) is not covered")
        pat = c["pos_att_type"] or []
        if isinstance(pat, str):
            pat = [x.strip() for x in pat.lower().split("|")]
        s["pos_att_type"] = [x for x in pat if x in ("c2p", "p2c")]
        mrp = c["max_relative_positions"]
        s["max_rel"] = mrp if mrp >= 1 else c["max_position_embeddings"]
        s["buckets"] = c["position_buckets"]
        s["att_span"] = s["buckets"] if s["buckets"] > 0 else s["max_rel"]
        s["share_att_key"] = bool(c["share_att_key"])
        s["norm_rel_ebd"] = "layer_norm" in [x.strip() for x in str(c["norm_rel_ebd"]).lower().split("|")]
        s["position_biased_input"] = bool(c["position_biased_input"])
    if s["hidden"] % s["n_heads"]:
        raise Unsupported("hidden %d not divisible by %d heads" % (s["hidden"], s["n_heads"]))
    s["head_dim"] = s["hidden"] // s["n_heads"]
    return s


def canonical_weights(tensors, fam):
    prefix = PREFIX[fam]
    out = {}
    for name, arr in tensors.items():
        if name.startswith(prefix):
            name = name[len(prefix):]
        if name.startswith(IGNORED) or name.endswith("position_ids"):
            continue
        if name.endswith(".gamma"):
            name = name[:-6] + ".weight"
        elif name.endswith(".beta"):
            name = name[:-5] + ".bias"
        if name in out:
            raise ValueError("tensor %s appears twice after renaming" % name)
        out[name] = arr
    return out


def load_model(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    m = settings(cfg)
    m["w"] = canonical_weights(read_checkpoint(model_dir), m["family"])
    m["dir"] = model_dir
    return m


# ---------------------------------------------------------------------------------------------
# DeBERTa's relative positions.

def log_bucket_position(rel, bucket_size, max_position, wrong_rounding=False):
    """make_log_bucket_position: |i-j| < mid stays; beyond, mid + ceil(log(|r|/mid) /
    log((max-1)/mid) * (mid-1)), with the sign of r. torch computes the log part in float32."""
    rel = np.asarray(rel, dtype=np.int64)
    mid = bucket_size // 2
    sign = np.sign(rel)
    abs_pos = np.where((rel < mid) & (rel > -mid), mid - 1, np.abs(rel))
    num = np.log((abs_pos.astype(F32) / F32(mid)).astype(F32)).astype(F32)
    den = np.log(F32((max_position - 1) / mid)).astype(F32)
    val = (num / den).astype(F32) * F32(mid - 1)
    log_pos = (np.round(val) if wrong_rounding else np.ceil(val)).astype(F32) + F32(mid)
    return np.where(abs_pos <= mid, rel, (log_pos * sign).astype(np.int64)).astype(np.int64)


def relative_position(n, buckets, max_rel, wrong_rounding=False):
    rel = np.arange(n)[:, None] - np.arange(n)[None, :]
    if buckets > 0 and max_rel > 0:
        rel = log_bucket_position(rel, buckets, max_rel, wrong_rounding)
    return rel


# ---------------------------------------------------------------------------------------------
# The forward pass.

def _heads(x, H):
    n, width = x.shape
    return x.reshape(n, H, width // H).transpose(1, 0, 2)


def forward(model, ids, token_type_ids=None, dtype=np.float64, layer_inputs=None, **wrong):
    """Run on token IDS. Returns a dict of arrays in DTYPE: attentions [L][H][n][n], q/k/v
    [L][H][n][d] (projections with bias, before any scaling), context [L][n][hidden] (input of the
    attention output projection), hidden_states [L+1][n][hidden] (0 = embeddings output, after
    ELECTRA's / ALBERT's projection; ModernBERT: all before final_norm), last_hidden_state.
    DeBERTa adds relative_pos [n][n], rel_embeddings [2 span][hidden], rel_att [L][H][n][n]
    (c2p + p2c, already divided by sqrt(d * scale_factor)); ModernBERT q_rot, k_rot.

    LAYER_INPUTS [L][n][hidden]: feed layer l this input (teacher forcing). WRONG: deliberate
    mistakes for the fixture generator's sensitivity checks (see make_encoder_fixtures.py)."""
    m = model
    fam = m["family"]
    W = {k: v.astype(dtype) for k, v in m["w"].items()}
    ids = np.asarray(ids, dtype=np.int64)
    n = len(ids)
    if n == 0 or ids.min() < 0 or ids.max() >= m["vocab_size"]:
        raise ValueError("token ids out of range")
    H, d, eps, act = m["n_heads"], m["head_dim"], m["eps"], wrong.get("act", m["act"])
    res = {k: [] for k in ("attentions", "q", "k", "v", "context", "rel_att", "q_rot", "k_rot")}
    out = {}

    def lin(name, x, bias=True):
        y = x @ W[name + ".weight"].T
        return y + W[name + ".bias"] if bias else y

    def ln(name, x):
        b = W.get(name + ".bias")
        return layer_norm(x, W[name + ".weight"], b if b is not None else dtype(0), eps)

    # --- embeddings
    if fam == "modernbert":
        x = ln("embeddings.norm", W["embeddings.tok_embeddings.weight"][ids])
    elif fam == "distilbert":
        x = W["embeddings.word_embeddings.weight"][ids] + W["embeddings.position_embeddings.weight"][np.arange(n)]
        x = ln("embeddings.LayerNorm", x)
    else:
        x = W["embeddings.word_embeddings.weight"][ids]
        if fam in ("roberta", "xlm-roberta"):
            pad = m["pad"]
            keep = (ids != pad).astype(np.int64)
            pos = np.cumsum(keep) * keep + pad  # create_position_ids_from_input_ids
            if wrong.get("positions_plain"):  # pads counted like any token
                pos = np.arange(n) + pad + 1
            if wrong.get("positions_zero"):  # BERT's 0..n-1, no offset past padding_idx
                pos = np.arange(n)
            x = x + W["embeddings.position_embeddings.weight"][pos]
        elif fam != "deberta-v2" or m["position_biased_input"]:
            x = x + W["embeddings.position_embeddings.weight"][np.arange(n)]
        if m["type_vocab"] > 0:
            tt = np.zeros(n, dtype=np.int64) if token_type_ids is None else np.asarray(token_type_ids, dtype=np.int64)
            if wrong.get("no_token_types"):
                tt = np.zeros(n, dtype=np.int64)
            x = x + W["embeddings.token_type_embeddings.weight"][tt]
        x = ln("embeddings.LayerNorm", x)
        if fam == "electra" and "embeddings_project.weight" in W:
            x = lin("embeddings_project", x)
        if fam == "deberta-v2" and "embeddings.embed_proj.weight" in W:
            x = lin("embeddings.embed_proj", x, bias=False)
        if fam == "albert":
            x = lin("encoder.embedding_hidden_mapping_in", x)
    hs = [x]

    # --- DeBERTa: relative positions and embeddings, shared by all layers
    if fam == "deberta-v2":
        rel = relative_position(n, m["buckets"], m["max_rel"], wrong.get("bucket_round"))
        if wrong.get("no_buckets"):
            rel = relative_position(n, -1, -1)
        span = m["att_span"]
        rel_emb = W["encoder.rel_embeddings.weight"]
        if m["norm_rel_ebd"] and not wrong.get("rel_no_ln"):
            rel_emb = ln("encoder.LayerNorm", rel_emb)
        rel_emb = rel_emb[:2 * span]
        out["relative_pos"] = rel
        out["rel_embeddings"] = rel_emb
        terms = [t for t in m["pos_att_type"] if t not in wrong.get("drop_terms", ())]
        scale_factor = 1 + len(m["pos_att_type"])
        if wrong.get("scale_sqrt_d"):
            scale_factor = 1

    for i in range(m["n_layers"]):
        if layer_inputs is not None:
            x = np.asarray(layer_inputs[i], dtype=dtype)
        if wrong.get("same_input"):  # every layer applied to the embeddings (layers not chained)
            x = hs[0]
        if fam == "modernbert":
            p = "layers.%d." % i
            a_in = x if (i == 0 or wrong.get("no_attn_norm")) else ln(p + "attn_norm", x)
            if i == 0 and p + "attn_norm.weight" in W:
                raise ValueError("ModernBERT layer 0 has an attn_norm")
            qkv = lin(p + "attn.Wqkv", a_in, False)
            q, k, v = (_heads(qkv[:, j * m["hidden"]:(j + 1) * m["hidden"]], H) for j in range(3))
            theta = m["theta"][i]
            if wrong.get("one_theta"):  # every layer with global_rope_theta
                theta = float(m["cfg"]["global_rope_theta"])
            inv = _default_inv_freq(theta, d)
            pos = np.arange(n, dtype=np.float64)
            if dtype == np.float32:
                ang = pos.astype(F32)[:, None] * inv.astype(F32)[None, :]
            else:
                ang = _f32(pos[:, None] * inv[None, :])  # a float32 product in transformers
            cos = np.concatenate([np.cos(ang), np.cos(ang)], axis=-1).astype(dtype)
            sin = np.concatenate([np.sin(ang), np.sin(ang)], axis=-1).astype(dtype)
            q_rot, k_rot = rotate(q, cos, sin, d), rotate(k, cos, sin, d)
            scores = q_rot @ k_rot.transpose(0, 2, 1) * dtype(d ** -0.5)
            is_global = wrong["global_layers"][i] if "global_layers" in wrong else m["global_layer"][i]
            if not is_global and not wrong.get("no_window"):
                r = m["window_radius"] + wrong.get("window_delta", 0)
                dist = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
                scores = np.where(dist <= r, scores, np.finfo(dtype).min)
            probs = softmax(scores)
            ctx = (probs @ v).transpose(1, 0, 2).reshape(n, m["hidden"])
            x = x + lin(p + "attn.Wo", ctx, False)
            hmid = lin(p + "mlp.Wi", ln(p + "mlp_norm", x), False)
            I = m["intermediate"]
            inp, gate = hmid[:, :I], hmid[:, I:]
            if wrong.get("swap_gate"):
                inp, gate = gate, inp
            x = x + lin(p + "mlp.Wo", activation(act, inp) * gate, False)
            res["q_rot"].append(q_rot); res["k_rot"].append(k_rot)
        else:
            if fam == "distilbert":
                p = "transformer.layer.%d." % i
                names = dict(q="attention.q_lin", k="attention.k_lin", v="attention.v_lin", o="attention.out_lin",
                             ln1="sa_layer_norm", up="ffn.lin1", down="ffn.lin2", ln2="output_layer_norm")
            elif fam == "albert":
                g = i // (m["n_layers"] // m["groups"])
                if wrong.get("unshared"):  # as if every layer had its own weights (group i)
                    g = i
                p = "encoder.albert_layer_groups.%d.albert_layers.0." % g
                names = dict(q="attention.query", k="attention.key", v="attention.value", o="attention.dense",
                             ln1="attention.LayerNorm", up="ffn", down="ffn_output", ln2="full_layer_layer_norm")
            else:
                p = "encoder.layer.%d." % i
                s_ = "_proj" if fam == "deberta-v2" else ""
                names = dict(q="attention.self.query" + s_, k="attention.self.key" + s_,
                             v="attention.self.value" + s_, o="attention.output.dense",
                             ln1="attention.output.LayerNorm", up="intermediate.dense", down="output.dense",
                             ln2="output.LayerNorm")
            q, k, v = (_heads(lin(p + names[t], x), H) for t in "qkv")
            if fam == "deberta-v2":
                scale = np.sqrt(dtype(d * scale_factor))
                scores = q @ (k.transpose(0, 2, 1) / scale)
                pk = _heads(lin(p + names["k"], rel_emb), H)  # share_att_key: the content projections
                pq = _heads(lin(p + names["q"], rel_emb), H)
                if not m["share_att_key"]:
                    if "c2p" in m["pos_att_type"]:
                        pk = _heads(lin(p + "attention.self.pos_key_proj", rel_emb), H)
                    if "p2c" in m["pos_att_type"]:
                        pq = _heads(lin(p + "attention.self.pos_query_proj", rel_emb), H)
                rel_att = np.zeros_like(scores)
                if "c2p" in terms:
                    c2p = q @ pk.transpose(0, 2, 1)  # [H][i][bucket]
                    idx = np.clip(rel + span, 0, 2 * span - 1)
                    if wrong.get("wrap_not_clamp"):  # out-of-span buckets wrapped around, not clamped
                        idx = (rel + span) % (2 * span)
                    rel_att = rel_att + np.take_along_axis(c2p, np.broadcast_to(idx, (H, n, n)), axis=-1) / scale
                if "p2c" in terms:
                    p2c = k @ pq.transpose(0, 2, 1)  # [H][j][bucket]
                    idx = np.clip(-rel + span, 0, 2 * span - 1)
                    if wrong.get("wrap_not_clamp"):
                        idx = (-rel + span) % (2 * span)
                    g_ = np.take_along_axis(p2c, np.broadcast_to(idx, (H, n, n)), axis=-1)
                    rel_att = rel_att + g_.transpose(0, 2, 1) / scale
                scores = scores + rel_att
                res["rel_att"].append(rel_att)
            else:
                scores = q @ k.transpose(0, 2, 1) / dtype(math.sqrt(d) if not wrong.get("no_scale") else 1.0)
            probs = softmax(scores)
            ctx = (probs @ v).transpose(1, 0, 2).reshape(n, m["hidden"])
            a = ln(p + names["ln1"], lin(p + names["o"], ctx) + x)
            hmid = activation(act, lin(p + names["up"], a))
            x = ln(p + names["ln2"], lin(p + names["down"], hmid) + a)
        for key, val in (("attentions", probs), ("q", q), ("k", k), ("v", v), ("context", ctx)):
            res[key].append(val)
        hs.append(x)
    last = ln("final_norm", x) if fam == "modernbert" else x
    for key, val in res.items():
        if val:
            out[key] = np.array(val)
    out["hidden_states"] = np.array(hs)
    out["last_hidden_state"] = last
    return out


QUANTITIES = ("attentions", "q", "k", "v", "q_rot", "k_rot", "rel_att", "relative_pos", "rel_embeddings",
              "context", "hidden_states", "last_hidden_state")


# ---------------------------------------------------------------------------------------------
# Command line.

def _verify(cases_dir, models_dir, dtype):
    names = sorted(f for f in os.listdir(cases_dir) if f.endswith(".json"))
    worst, models, rows = {}, {}, 0
    print("%-32s %4s  %s" % ("case", "n", "  ".join("%-8s" % q[:8] for q in QUANTITIES)))
    for name in names:
        with open(os.path.join(cases_dir, name)) as f:
            case = json.load(f)
        if case.get("family") not in FAMILIES:
            continue
        model_name = os.path.basename(case["model_dir"].rstrip("/"))
        if model_name not in models:
            models[model_name] = load_model(os.path.join(models_dir, model_name))
        m = models[model_name]
        ref = {qn: np.array(case[qn], dtype=np.float64) for qn in QUANTITIES if qn in case}
        tt = case.get("token_type_ids")
        runs = [("", forward(m, case["ids"], tt, dtype)),
                (" [per layer]", forward(m, case["ids"], tt, dtype, layer_inputs=ref["hidden_states"][:-1]))]
        for tag, out in runs:
            cells = []
            for qn in QUANTITIES:
                if qn not in ref:
                    cells.append("-       ")
                    continue
                if qn not in out or ref[qn].shape != out[qn].shape:
                    raise SystemExit("%s: %s shape %s, reference %s" % (name, qn, out.get(qn, np.zeros(0)).shape,
                                                                        ref[qn].shape))
                diff = float(np.abs(out[qn] - ref[qn]).max())
                for key in (case["family"] + tag, "all" + tag):
                    worst.setdefault(key, {})
                    worst[key][qn] = max(worst[key].get(qn, 0.0), diff)
                cells.append("%-8.1e" % diff)
            rows += 1
            print("%-32s %4d  %s" % ((name[:-5] + tag)[:32], len(case["ids"]), "  ".join(cells)))
    if not rows:
        raise SystemExit("no encoder cases in %s" % cases_dir)
    print("max per family:")
    for fam in sorted(worst):
        print("%-32s %4s  %s" % (fam, "", "  ".join("%-8.1e" % worst[fam][q] if q in worst[fam] else "-       "
                                                     for q in QUANTITIES)))
    return worst


LIMITS = dict(attentions=2e-6, q=5e-6, k=5e-6, v=5e-6, q_rot=5e-6, k_rot=5e-6, rel_att=5e-6, relative_pos=0.0)


def main(argv):
    if len(argv) >= 2 and argv[1] == "verify":
        args = argv[2:]
        dtype = np.float64
        if args and args[0] == "--float32":
            dtype, args = np.float32, args[1:]
        cases = args[0] if args else "/work/shared/reference/cases"
        models = args[1] if len(args) > 1 else os.path.join(os.path.dirname(os.path.abspath(cases)), "models")
        worst = _verify(cases, models, dtype)
        if dtype == np.float32:
            return 0
        bad = ["%s %s" % (key, q) for key in ("all", "all [per layer]") for q, lim in LIMITS.items()
               if worst[key].get(q, 0.0) > lim]
        if bad:
            print("FAIL: beyond tolerance: %s" % ", ".join(bad))
            return 1
        print("ok: end to end and per layer, attentions <= %g, q/k/v/q_rot/k_rot/rel_att <= %g, relative_pos exact"
              % (LIMITS["attentions"], LIMITS["q"]))
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
