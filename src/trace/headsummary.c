/* headsummary.c -- a compact trace's recorded head scores and block thumbnails (see headsummary.h). */
#include "trace/headsummary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace/headscore.h"

#define HS_BLOCK ((size_t)TRACE_THUMB * TRACE_THUMB)

static size_t headsummary_offset(const struct trace *t, int layer, int head, bool hide, int kind)
{
	return ((((size_t)layer * t->n_heads + head) * 2 + hide) * HEADSUM_KINDS + kind) * HS_BLOCK;
}

int headsummary_alloc(struct trace *t)
{
	size_t lh = (size_t)t->n_layers * t->n_heads;
	t->scores = calloc(lh ? lh : 1, sizeof *t->scores);
	t->thumb = malloc((lh ? lh : 1) * 2 * HEADSUM_KINDS * HS_BLOCK * sizeof *t->thumb);
	return t->scores && t->thumb ? 0 : -1;
}

const float *headsummary_blocks(const struct trace *t, int layer, int head, bool hide, int kind)
{
	return t->thumb + headsummary_offset(t, layer, head, hide, kind);
}

/* Blocks of P with specials shown or hidden (HIDE): KEEP[k] the tokens shown, BIN[k] the block of
 * each shown position (side blocks over k positions, as heatdata_downsample bins them). */
static void headsummary_thumb(struct trace *t, int layer, int head, const float *p, bool hide, const int *keep,
			      const int *bin, int k, int side, double *acc)
{
	int n = t->n;
	float *mx = t->thumb + headsummary_offset(t, layer, head, hide, HEADSUM_MAX);
	float *sum = t->thumb + headsummary_offset(t, layer, head, hide, HEADSUM_SUM);
	float *cnt = t->thumb + headsummary_offset(t, layer, head, hide, HEADSUM_COUNT);
	size_t cells = (size_t)side * side;
	for (size_t b = 0; b < cells; b++)
		mx[b] = -INFINITY, cnt[b] = 0, acc[b] = 0;
	for (int r = 0; r < k; r++) {
		const float *a = p + (size_t)keep[r] * n;
		int lo, hi;
		trace_key_range(t, layer, keep[r], &lo, &hi);
		/* heatmat_build's renormalisation over the shown keys: a double sum in column order */
		double rs = 0;
		if (hide)
			for (int c = 0; c < k; c++)
				rs += a[keep[c]];
		size_t row = (size_t)bin[r] * side;
		for (int c = 0; c < k; c++) {
			int j = keep[c];
			if (j < lo || j > hi)
				continue; /* masked: no weight, no colour */
			float v = hide ? (float)(rs > 0 ? a[j] / rs : 0) : a[j];
			size_t b = row + bin[c];
			mx[b] = v > mx[b] ? v : mx[b];
			acc[b] += v;
			cnt[b] += 1;
		}
	}
	for (size_t b = 0; b < cells; b++)
		sum[b] = (float)acc[b];
}

int headsummary_side(const struct trace *t, bool hide)
{
	int k = 0;
	for (int i = 0; i < t->n; i++)
		k += !(hide && t->special[i]);
	return k < TRACE_THUMB ? k : TRACE_THUMB;
}

int headsummary_record(struct trace *t, int layer, int head, const float *p)
{
	int n = t->n;
	size_t cap = n > 0 ? (size_t)n : 1;
	bool *punct = headscore_punct_flags(t);
	int *keep = malloc(cap * sizeof *keep), *bin = malloc(cap * sizeof *bin);
	double *acc = malloc(HS_BLOCK * sizeof *acc);
	int rc = -1;
	if (!punct || !keep || !bin || !acc)
		goto done;
	headscore_head(t, layer, head, p, punct, t->scores + (size_t)layer * t->n_heads + head);
	for (int hide = 0; hide < 2; hide++) {
		int k = 0;
		for (int i = 0; i < n; i++)
			if (!(hide && t->special[i]))
				keep[k++] = i;
		int side = k < TRACE_THUMB ? k : TRACE_THUMB;
		for (int b = 0; b < side; b++) { /* block b holds positions b*k/side .. (b+1)*k/side - 1 */
			int r0 = (int)((long long)b * k / side), r1 = (int)((long long)(b + 1) * k / side);
			for (int r = r0; r < r1; r++)
				bin[r] = b;
		}
		headsummary_thumb(t, layer, head, p, hide, keep, bin, k, side, acc);
	}
	rc = 0;
done:
	if (rc < 0) { /* no memory for the summary: the head shows as unknown (NaN scores, blank thumbnails) */
		struct headscore *hs = t->scores + (size_t)layer * t->n_heads + head;
		hs->layer = layer, hs->head = head, hs->label[0] = 0, hs->entropy_norm = NAN;
		for (int kd = 0; kd < HS_COUNT; kd++)
			hs->s[kd] = NAN;
		for (int hide = 0; hide < 2; hide++)
			memset(t->thumb + headsummary_offset(t, layer, head, hide, HEADSUM_COUNT), 0, HS_BLOCK * sizeof(float));
	}
	free(punct);
	free(keep);
	free(bin);
	free(acc);
	return rc;
}
