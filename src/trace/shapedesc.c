/* shapedesc.c -- a trace's attention shape in words (see shapedesc.h). */
#include "config.h"

#include "trace/shapedesc.h"

#include <stdio.h>

bool shapedesc_gqa(const struct trace *t)
{
	return t->n_kv_heads > 0 && t->n_kv_heads < t->n_heads;
}

const char *shapedesc_heads(const struct trace *t, char *buf, size_t n)
{
	if (shapedesc_gqa(t))
		snprintf(buf, n, "%d q heads / %d kv head%s", t->n_heads, t->n_kv_heads, t->n_kv_heads == 1 ? "" : "s");
	else
		snprintf(buf, n, "%d head%s", t->n_heads, t->n_heads == 1 ? "" : "s");
	return buf;
}

void shapedesc_group(const struct trace *t, int head, int *first, int *last)
{
	if (!shapedesc_gqa(t)) {
		*first = *last = head;
		return;
	}
	int g = t->n_heads / t->n_kv_heads, kv = trace_kv_head(t, head);
	*first = kv * g;
	*last = kv * g + g - 1;
}

const char *shapedesc_kv(const struct trace *t, int head, bool utf8, char *buf, size_t n)
{
	buf[0] = 0;
	if (!shapedesc_gqa(t))
		return buf;
	int a, b;
	shapedesc_group(t, head, &a, &b);
	snprintf(buf, n, "kv head %d (shared by heads %d%s%d)", trace_kv_head(t, head), a, utf8 ? "\xe2\x80\x93" : "-",
		 b);
	return buf;
}

const char *shapedesc_window(const struct trace *t, int layer, bool utf8, char *buf, size_t n)
{
	int before = t->win_before ? t->win_before[layer] : -1, after = t->win_after ? t->win_after[layer] : -1;
	buf[0] = 0;
	if (before < 0 && (after < 0 || t->causal))
		return buf;
	if (t->causal || after < 0)
		snprintf(buf, n, "w%d", before + 1);
	else if (before == after)
		snprintf(buf, n, "w%s%d", utf8 ? "\xc2\xb1" : "+-", before);
	else
		snprintf(buf, n, "w-%d+%d", before < 0 ? 0 : before, after);
	return buf;
}

const char *shapedesc_chunk(const struct trace *t, int layer, char *buf, size_t n)
{
	buf[0] = 0;
	if (t->chunk && layer >= 0 && layer < t->n_layers && t->chunk[layer] > 0)
		snprintf(buf, n, "c%d", t->chunk[layer]);
	return buf;
}

bool shapedesc_windowed(const struct trace *t)
{
	char buf[32];
	for (int l = 0; l < t->n_layers; l++)
		if (shapedesc_window(t, l, false, buf, sizeof buf)[0])
			return true;
	return false;
}

const char *shapedesc_alibi(const struct trace *t, int head, char *buf, size_t n)
{
	buf[0] = 0;
	if (!t->alibi)
		return buf;
	if (head < 0 || head >= t->n_heads)
		snprintf(buf, n, "ALiBi");
	else
		snprintf(buf, n, "ALiBi slope %.6g", t->alibi[head]);
	return buf;
}

const char *shapedesc_rotary(const struct trace *t, bool before)
{
	if (!t->rotary)
		return "";
	if (t->rotary_interleaved) /* a pair is two neighbouring dims: say so beside the q/k it shows */
		return before ? "before rotary (interleaved)" : "after rotary (interleaved)";
	return before ? "before rotary" : "after rotary";
}

const char *shapedesc_experts(const struct trace *t, int layer, int token, char *buf, size_t n)
{
	buf[0] = 0;
	if (!t->moe_layer || !t->moe_topk || !t->moe_weights || layer < 0 || layer >= t->n_layers || token < 0 ||
	    token >= t->n || !t->moe_layer[layer] || t->moe_k < 1)
		return buf;
	size_t at = ((size_t)layer * t->n + token) * t->moe_k, len = 0;
	for (int i = 0; i < t->moe_k && len < n; i++) {
		int w = snprintf(buf + len, n - len, "%s%d (%.2f)", i ? ", " : "experts ", t->moe_topk[at + i],
				 t->moe_weights[at + i]);
		if (w < 0)
			break;
		len += (size_t)w;
	}
	return buf;
}

bool shapedesc_nope(const struct trace *t, int layer)
{
	return t->rotary && t->nope && layer >= 0 && layer < t->n_layers && t->nope[layer];
}

const char *shapedesc_rotary_at(const struct trace *t, int layer, bool before)
{
	if (shapedesc_nope(t, layer)) /* before and after are the same vectors: say why, not "after rotary" */
		return "no rotary (NoPE layer)";
	return shapedesc_rotary(t, before);
}

const struct trace *shapedesc_qk_trace(const struct trace *t, bool before, struct trace *tmp)
{
	if (!before || !t->rotary || !t->q_raw || !t->k_raw)
		return t;
	*tmp = *t;
	tmp->q = t->q_raw;
	tmp->k = t->k_raw;
	return tmp;
}
