/* relpos.c -- DeBERTa's relative-position attention terms (see relpos.h). */
#include "engine/relpos.h"

#include <math.h>
#include <stdlib.h>

int relpos_bucket(const struct relpos *r, int i, int j)
{
	int rel = i - j;
	if (r->buckets <= 0 || r->max_relative <= 0)
		return rel;
	/* make_log_bucket_position: exact within mid, then log-spaced up to max_relative, in float32 */
	int mid = r->buckets / 2, sign = rel > 0 ? 1 : rel < 0 ? -1 : 0;
	int abs_pos = rel < mid && rel > -mid ? mid - 1 : abs(rel);
	if (abs_pos <= mid)
		return rel;
	float ratio = (float)abs_pos / (float)mid;
	float log_pos = ceilf(logf(ratio) / logf((float)(r->max_relative - 1) / (float)mid) * (float)(mid - 1)) + (float)mid;
	return (int)log_pos * sign;
}

static float relpos_dot(const float *a, const float *b, int d)
{
	float s = 0;
	for (int x = 0; x < d; x++)
		s += a[x] * b[x];
	return s;
}

static int relpos_clamp(int v, int hi)
{
	return v < 0 ? 0 : v > hi ? hi : v;
}

void relpos_add(const struct relpos *r, float *s, int i0, int i1, int n, int d, const float *q, const float *k,
		const float *pq, const float *pk, int stride, float scale)
{
	int top = 2 * r->span - 1;
	for (int i = i0; i < i1; i++) {
		for (int j = 0; j < n; j++) {
			float add = 0;
			if (r->c2p) /* query i's content against the key position of i - j */
				add += relpos_dot(q + (size_t)i * d, pk + (size_t)relpos_clamp(relpos_bucket(r, i, j) + r->span, top) * stride, d) * scale;
			if (r->p2c) /* key j's content against the query position of i - j */
				add += relpos_dot(k + (size_t)j * d, pq + (size_t)relpos_clamp(-relpos_bucket(r, j, i) + r->span, top) * stride, d) * scale;
			s[(size_t)(i - i0) * n + j] += add;
		}
	}
}
