#!/usr/bin/env python3
"""ref_encdec.py -- an independent numpy (float64) reference of the encoder-decoder families (T5/mT5,
BART, mBART, Marian, M2M100/NLLB, Pegasus), written from transformers' modeling code (modeling_t5.py,
modeling_bart.py, modeling_mbart.py, modeling_marian.py, modeling_m2m_100.py, modeling_pegasus.py,
4.31): teacher-forced, the decoder reading the labels shifted right as each model's
shift function does. It reads the model folder's config.json and safetensors itself (F32, F16, BF16).

  ref_encdec.py MODEL_DIR --ids N,N,... --labels N,N,...   JSON on stdout, laid out as the shared
                                                            reference cases (attentions, q, k, v,
                                                            context, hidden_states, position_bias,
                                                            decoder {...})
  ref_encdec.py MODEL_DIR --case CASE.json                  the case's ids and labels; prints the
                                                            largest differences from the case and
                                                            exits 1 if one exceeds the tolerances
  ref_encdec.py MODEL_DIR --check-dump DUMP.json            the same for attnscope's --dump json
                                                            (run with --target or --target-ids), on
                                                            the ids and labels the dump gives
"""
import json
import math
import struct
import sys

import numpy as np


def load_safetensors(path):
    with open(path, 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == '__metadata__':
            continue
        a, b = info['data_offsets']
        raw = data[a:b]
        dt = info['dtype']
        if dt == 'F32':
            x = np.frombuffer(raw, dtype='<f4')
        elif dt == 'F16':
            x = np.frombuffer(raw, dtype='<f2').astype(np.float32)
        elif dt == 'BF16':
            x = (np.frombuffer(raw, dtype='<u2').astype(np.uint32) << 16).view(np.float32)
        else:
            raise SystemExit('%s: dtype %s' % (name, dt))
        out[name] = x.reshape(info['shape']).astype(np.float64)
    return out


class Weights:
    """Tensors by name, with the optional "model." prefix of real hub files."""

    def __init__(self, d):
        self.d = d

    def __call__(self, name):
        for p in ('', 'model.'):
            if p + name in self.d:
                return self.d[p + name]
        raise KeyError(name)

    def has(self, name):
        return name in self.d or 'model.' + name in self.d


def softmax(s):
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=-1, keepdims=True)


def layernorm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def rmsnorm(x, w, eps):  # T5LayerNorm: no mean, no bias
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


_erf = np.vectorize(math.erf)


def act(name, x):
    if name == 'relu':
        return np.maximum(x, 0)
    if name == 'gelu':
        return 0.5 * x * (1 + _erf(x / math.sqrt(2)))
    if name in ('gelu_new', 'gelu_pytorch_tanh'):
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    if name in ('silu', 'swish'):
        return x / (1 + np.exp(-x))
    raise SystemExit('activation ' + name)


def t5_bucket(rel, bidirectional, num_buckets, max_distance):
    """T5Attention._relative_position_bucket for one relative position (key - query), float32 log."""
    bucket = 0
    if bidirectional:
        num_buckets //= 2
        bucket += num_buckets if rel > 0 else 0
        rel = abs(rel)
    else:
        rel = -min(rel, 0)
    exact = num_buckets // 2
    if rel < exact:
        return bucket + rel
    large = exact + int(np.float32(np.log(np.float32(rel) / np.float32(exact))) / np.float32(math.log(max_distance / exact))
                        * np.float32(num_buckets - exact))
    return bucket + min(large, num_buckets - 1)


def attention(xq, xkv, wq, bq, wk, bk, wv, bv, heads, d, scale, bias=None, causal=False):
    """One attention: per head q, k, v [h][t][d], probabilities [h][i][j], context [i][h*d]."""
    q = xq @ wq.T + (bq if bq is not None else 0)
    k = xkv @ wk.T + (bk if bk is not None else 0)
    v = xkv @ wv.T + (bv if bv is not None else 0)
    n, m = xq.shape[0], xkv.shape[0]
    qh = q.reshape(n, heads, d).transpose(1, 0, 2)
    kh = k.reshape(m, heads, d).transpose(1, 0, 2)
    vh = v.reshape(m, heads, d).transpose(1, 0, 2)
    s = qh @ kh.transpose(0, 2, 1) * scale
    if bias is not None:
        s = s + bias
    if causal:
        s = s + np.triu(np.full((n, m), -np.inf), 1)
    p = softmax(s)
    ctx = (p @ vh).transpose(1, 0, 2).reshape(n, heads * d)
    return qh, kh, vh, p, ctx


def sinusoid_computed(rows, dim, pad):
    """M2M100SinusoidalPositionalEmbedding.get_embedding (float64 here), padding row zero."""
    half = dim // 2
    f = np.exp(np.arange(half) * -(math.log(10000) / (half - 1)))
    a = np.arange(rows)[:, None] * f[None, :]
    t = np.concatenate([np.sin(a), np.cos(a)], axis=1)
    if dim % 2:
        t = np.concatenate([t, np.zeros((rows, 1))], axis=1)
    t[pad] = 0
    return t


class Model:
    def __init__(self, folder):
        self.cfg = json.load(open(folder + '/config.json'))
        self.w = Weights(load_safetensors(folder + '/model.safetensors'))
        self.type = self.cfg['model_type']
        self.t5 = self.type in ('t5', 'mt5')

    # -- shapes -----------------------------------------------------------------------------------------
    def shape(self):
        c = self.cfg
        if self.t5:
            heads, d = c['num_heads'], c['d_kv']
            return c['num_layers'], c.get('num_decoder_layers') or c['num_layers'], heads, d
        heads = c['encoder_attention_heads']
        return c['encoder_layers'], c['decoder_layers'], heads, c['d_model'] // heads

    def shift(self, labels):
        c = self.cfg
        if self.type == 'mbart':  # the last non-pad label (the language code) first
            return [labels[-1]] + labels[:-1]
        return [c['decoder_start_token_id']] + labels[:-1]

    # -- T5 ---------------------------------------------------------------------------------------------
    def t5_bias(self, stack, n, bidirectional):
        c = self.cfg
        table = self.w('%s.block.0.layer.0.SelfAttention.relative_attention_bias.weight' % stack)
        nb, dist = c.get('relative_attention_num_buckets', 32), c.get('relative_attention_max_distance', 128)
        buckets = np.array([[t5_bucket(j - i, bidirectional, nb, dist) for j in range(n)] for i in range(n)])
        return table[buckets].transpose(2, 0, 1), buckets

    def t5_ff(self, pre, x):
        c = self.cfg
        ff = c.get('feed_forward_proj', 'relu')
        if ff.startswith('gated-'):
            a = ff[6:]
            a = 'gelu_new' if a == 'gelu' else a
            return (act(a, x @ self.w(pre + 'wi_0.weight').T) * (x @ self.w(pre + 'wi_1.weight').T)) @ self.w(pre + 'wo.weight').T
        return act(ff, x @ self.w(pre + 'wi.weight').T) @ self.w(pre + 'wo.weight').T

    def t5_stack(self, stack, ids, layers, enc_out=None):
        c, w = self.cfg, self.w
        _, _, heads, d = self.shape()
        eps = c.get('layer_norm_epsilon', 1e-6)
        dec = enc_out is not None
        x = w('shared.weight')[ids]
        bias, buckets = self.t5_bias(stack, len(ids), not dec)
        r = {k: [] for k in ('attentions', 'q', 'k', 'v', 'context', 'hidden_states', 'cross_attentions',
                             'cross_q', 'cross_k', 'cross_v', 'cross_context')}
        r['hidden_states'].append(x)
        for l in range(layers):
            p = '%s.block.%d.layer.' % (stack, l)
            h = rmsnorm(x, w(p + '0.layer_norm.weight'), eps)
            a = p + '0.SelfAttention.'
            qh, kh, vh, pr, ctx = attention(h, h, w(a + 'q.weight'), None, w(a + 'k.weight'), None, w(a + 'v.weight'),
                                            None, heads, d, 1.0, bias, dec)
            for k_, v_ in (('q', qh), ('k', kh), ('v', vh), ('attentions', pr), ('context', ctx)):
                r[k_].append(v_)
            x = x + ctx @ w(a + 'o.weight').T
            f = 1
            if dec:
                h = rmsnorm(x, w(p + '1.layer_norm.weight'), eps)
                a = p + '1.EncDecAttention.'
                qh, kh, vh, pr, ctx = attention(h, enc_out, w(a + 'q.weight'), None, w(a + 'k.weight'), None,
                                                w(a + 'v.weight'), None, heads, d, 1.0)
                for k_, v_ in (('cross_q', qh), ('cross_k', kh), ('cross_v', vh), ('cross_attentions', pr),
                               ('cross_context', ctx)):
                    r[k_].append(v_)
                x = x + ctx @ w(a + 'o.weight').T
                f = 2
            h = rmsnorm(x, w(p + '%d.layer_norm.weight' % f), eps)
            x = x + self.t5_ff(p + '%d.DenseReluDense.' % f, h)
            r['hidden_states'].append(x)
        r['hidden_states'][-1] = rmsnorm(x, w(stack + '.final_layer_norm.weight'), eps)
        r['position_bias'], r['position_buckets'] = bias, buckets
        return r

    # -- BART and its relatives -------------------------------------------------------------------------
    def bart_positions(self, stack, ids):
        c, n = self.cfg, len(ids)
        if self.type in ('bart', 'mbart'):  # learned, offset 2
            return self.w(stack + '.embed_positions.weight')[np.arange(n) + 2]
        if self.type in ('marian', 'pegasus'):  # the sinusoid stored in the file, row p
            return self.w(stack + '.embed_positions.weight')[np.arange(n)]
        pad = c['pad_token_id']  # m2m_100: computed; positions from pad + 1, pad tokens keep pad
        mask = np.array(ids) != pad
        pos = np.cumsum(mask) * mask + pad
        table = sinusoid_computed(c['max_position_embeddings'] + 2 + n, c['d_model'], pad)
        return table[pos]

    def bart_stack(self, stack, ids, layers, enc_out=None):
        c, w = self.cfg, self.w
        _, _, heads, d = self.shape()
        eps = 1e-5
        dec = enc_out is not None
        pre_ln = self.type in ('mbart', 'm2m_100', 'pegasus')
        scale = math.sqrt(c['d_model']) if c.get('scale_embedding') else 1.0
        x = w('shared.weight')[ids] * scale + self.bart_positions(stack, ids)
        if self.type in ('bart', 'mbart'):
            x = layernorm(x, w(stack + '.layernorm_embedding.weight'), w(stack + '.layernorm_embedding.bias'), eps)
        r = {k: [] for k in ('attentions', 'q', 'k', 'v', 'context', 'hidden_states', 'cross_attentions',
                             'cross_q', 'cross_k', 'cross_v', 'cross_context')}
        r['hidden_states'].append(x)
        ln = lambda p, x: layernorm(x, w(p + '.weight'), w(p + '.bias'), eps)

        def sub(p, x_in, kv, causal, names):
            qh, kh, vh, pr, ctx = attention(x_in, x_in if kv is None else kv, w(p + 'q_proj.weight'), w(p + 'q_proj.bias'),
                                            w(p + 'k_proj.weight'), w(p + 'k_proj.bias'), w(p + 'v_proj.weight'),
                                            w(p + 'v_proj.bias'), heads, d, d ** -0.5, None, causal)
            for k_, v_ in zip(names, (qh, kh, vh, pr, ctx)):
                r[k_].append(v_)
            return ctx @ w(p + 'out_proj.weight').T + w(p + 'out_proj.bias')

        for l in range(layers):
            p = '%s.layers.%d.' % (stack, l)
            blocks = [('self_attn_layer_norm', lambda h: sub(p + 'self_attn.', h, None, dec,
                                                             ('q', 'k', 'v', 'attentions', 'context')))]
            if dec:
                blocks.append(('encoder_attn_layer_norm', lambda h: sub(p + 'encoder_attn.', h, enc_out, False,
                                                                        ('cross_q', 'cross_k', 'cross_v',
                                                                         'cross_attentions', 'cross_context'))))
            blocks.append(('final_layer_norm', lambda h: act(c['activation_function'], h @ w(p + 'fc1.weight').T +
                                                             w(p + 'fc1.bias')) @ w(p + 'fc2.weight').T + w(p + 'fc2.bias')))
            for norm, f in blocks:
                if pre_ln:
                    x = x + f(ln(p + norm, x))
                else:
                    x = ln(p + norm, x + f(x))
            r['hidden_states'].append(x)
        if pre_ln:
            r['hidden_states'][-1] = ln(stack + '.layer_norm', x)
        return r

    def run(self, ids, labels):
        le, ld, _, _ = self.shape()
        stack = self.t5_stack if self.t5 else self.bart_stack
        enc = stack('encoder', ids, le)
        dec_ids = self.shift(labels)
        dec = stack('decoder', dec_ids, ld, enc['hidden_states'][-1])
        out = {k: enc[k] for k in ('attentions', 'q', 'k', 'v', 'context', 'hidden_states')}
        out['ids'] = ids
        dec_out = {k: dec[k] for k in ('attentions', 'cross_attentions', 'q', 'k', 'v', 'cross_q', 'cross_k', 'cross_v',
                                       'context', 'cross_context', 'hidden_states')}
        dec_out['ids'], dec_out['labels'] = dec_ids, labels
        if self.t5:
            out['position_bias'], out['position_buckets'] = enc['position_bias'], enc['position_buckets']
            dec_out['position_bias'], dec_out['position_buckets'] = dec['position_bias'], dec['position_buckets']
        out['decoder'] = dec_out
        return out


# The keys compared, and their tolerances against float32 implementations (attentions 1e-5, the rest 1e-4:
# float32 vs float64 on these tiny models differ by a few 1e-6).
KEYS = {'attentions': 1e-5, 'q': 1e-4, 'k': 1e-4, 'v': 1e-4, 'context': 1e-4, 'hidden_states': 1e-4,
        'position_bias': 1e-7}  # read from the file: exact, but for a dump's 9-digit printing
DEC_KEYS = dict(KEYS, cross_attentions=1e-5, cross_q=1e-4, cross_k=1e-4, cross_v=1e-4, cross_context=1e-4)


def tolist(x):
    if isinstance(x, list):
        return [tolist(v) for v in x]
    if isinstance(x, np.ndarray):
        return x.tolist()
    return x


def compare(ref, other, where=''):
    """Largest differences of OTHER (a case or a --dump) from REF, key by key; ids must be equal."""
    worst, bad = {}, []
    for keys, a, b, w in ((KEYS, ref, other, 'encoder'), (DEC_KEYS, ref['decoder'], other['decoder'], 'decoder')):
        if list(a['ids']) != list(b['ids']):
            bad.append('%s ids differ: %s vs %s' % (w, a['ids'], b['ids']))
        if w == 'decoder' and list(a['labels']) != list(b['labels']):
            bad.append('labels differ')
        for k, tol in keys.items():
            if k not in a:
                continue
            if k not in b:
                bad.append('%s %s missing' % (w, k))
                continue
            x, y = np.array(tolist(a[k]), dtype=np.float64), np.array(b[k], dtype=np.float64)
            if x.shape != y.shape:
                bad.append('%s %s shape %s vs %s' % (w, k, x.shape, y.shape))
                continue
            diff = float(np.abs(x - y).max()) if x.size else 0.0
            worst['%s.%s' % (w, k)] = diff
            if diff > tol:
                bad.append('%s %s differs by %.3g (tolerance %g)' % (w, k, diff, tol))
        if 'position_buckets' in a and np.any(np.array(a['position_buckets']) != np.array(b.get('position_buckets'))):
            bad.append('%s position_buckets differ' % w)
    return worst, bad


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    m = Model(argv[1])
    if argv[2] == '--case':
        case = json.load(open(argv[3]))
        ref = m.run(case['ids'], case['decoder']['labels'])
        worst, bad = compare(ref, case)
        print(' '.join('%s %.2e' % kv for kv in sorted(worst.items())))
        for b in bad:
            print('FAIL: ' + b)
        return 1 if bad else 0
    if argv[2] == '--check-dump':
        dump = json.load(open(argv[3]))
        if 'decoder' not in dump:
            print('FAIL: the dump has no decoder object')
            return 1
        for ours, theirs in (('q', 'queries'), ('k', 'keys'), ('v', 'values')):
            dump[ours] = dump.get(theirs)
        ref = m.run(dump['ids'], dump['decoder']['labels'])
        worst, bad = compare(ref, dump)
        print(' '.join('%s %.2e' % kv for kv in sorted(worst.items())))
        for b in bad:
            print('FAIL: ' + b)
        return 1 if bad else 0
    args = dict(zip(argv[2::2], argv[3::2]))
    ids = [int(v) for v in args['--ids'].split(',')]
    labels = [int(v) for v in args['--labels'].split(',')]
    json.dump(tolist(m.run(ids, labels)), sys.stdout)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
