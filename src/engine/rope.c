/* rope.c -- rotary position embeddings (see rope.h). Float32 where Hugging Face computes in float32
 * (inverse frequencies, angles, cos/sin), so that long texts rotate exactly as the model does. */
#include "engine/rope.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 1 / base^(2i/dim) as torch computes it: arange as float32, divided by dim, powered in float32. */
static void rope_default_freq(double base, int dim, float *out)
{
	for (int i = 0; i < dim / 2; i++)
		out[i] = 1.0f / powf((float)base, (float)(2 * i) / (float)dim);
}

static int rope_number(const json_t *obj, const char *key, double *out, bool required, const char *path,
		       const char *type, struct err *e)
{
	json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v)) {
		if (required)
			return err_set(e, "%s: rope_scaling type \"%s\" needs \"%s\"", path, type, key);
		return 1;
	}
	if (!json_is_number(v) || !isfinite(json_number_value(v)))
		return err_set(e, "%s: rope_scaling \"%s\" must be a number", path, key);
	*out = json_number_value(v);
	return 0;
}

static void rope_llama3(struct rope *r, double low_ff, double high_ff, double old_ctx)
{
	/* Llama 3.1: long wavelengths are divided by the factor, short ones kept, the middle blended. */
	float low_wavelen = (float)(old_ctx / low_ff), high_wavelen = (float)(old_ctx / high_ff);
	float factor = (float)r->factor;
	for (int i = 0; i < r->dim / 2; i++) {
		float f = r->inv_freq[i], wavelen = (float)(2 * M_PI) / f;
		float scaled = wavelen > low_wavelen ? f / factor : f;
		if (!(wavelen < high_wavelen) && !(wavelen > low_wavelen)) {
			float smooth = ((float)old_ctx / wavelen - (float)low_ff) / ((float)high_ff - (float)low_ff);
			scaled = (1 - smooth) * scaled / factor + smooth * scaled;
		}
		r->inv_freq[i] = scaled;
	}
}

static double rope_yarn_mscale(double scale, double mscale)
{
	return scale <= 1 ? 1.0 : 0.1 * mscale * log(scale) + 1.0;
}

static int rope_yarn(struct rope *r, const json_t *sc, const char *path, struct err *e)
{
	double orig = r->max_positions, attn = 0, mscale = 0, mscale_all = 0, beta_fast = 32, beta_slow = 1, v;
	int rc;
	if ((rc = rope_number(sc, "original_max_position_embeddings", &v, false, path, "yarn", e)) < 0)
		return -1;
	if (rc == 0) { /* DeepSeek-style configs: the factor is the ratio of the two lengths */
		if (v <= 0)
			return err_set(e, "%s: rope_scaling original_max_position_embeddings must be positive", path);
		orig = v;
		r->factor = r->max_positions / orig;
	}
	/* truncate (default true) rounds the ramp's bounds out to whole dims; false (gpt-oss) keeps them
	 * fractional, as transformers' find_correction_range does. Anything but a boolean is refused. */
	const json_t *trunc = json_object_get(sc, "truncate");
	if (trunc && !json_is_boolean(trunc))
		return err_set(e, "%s: rope_scaling yarn \"truncate\" must be true or false", path);
	bool truncate = !trunc || !json_is_false(trunc);
	int have_attn = rope_number(sc, "attention_factor", &attn, false, path, "yarn", e);
	if (have_attn < 0 || rope_number(sc, "mscale", &mscale, false, path, "yarn", e) < 0 ||
	    rope_number(sc, "mscale_all_dim", &mscale_all, false, path, "yarn", e) < 0 ||
	    rope_number(sc, "beta_fast", &beta_fast, false, path, "yarn", e) < 0 ||
	    rope_number(sc, "beta_slow", &beta_slow, false, path, "yarn", e) < 0)
		return -1;
	if (have_attn != 0)
		attn = mscale != 0 && mscale_all != 0
			       ? rope_yarn_mscale(r->factor, mscale) / rope_yarn_mscale(r->factor, mscale_all)
			       : rope_yarn_mscale(r->factor, 1);
	r->attn_factor = (float)attn;
	/* The dims that rotate fewer than beta_slow times over the original context are interpolated
	 * (divided by the factor), those rotating more than beta_fast times kept, a ramp between. */
	double d = r->dim;
	double low = d * log(orig / (beta_fast * 2 * M_PI)) / (2 * log(r->base));
	double high = d * log(orig / (beta_slow * 2 * M_PI)) / (2 * log(r->base));
	if (truncate) {
		low = floor(low);
		high = ceil(high);
	}
	low = low < 0 ? 0 : low;
	high = high > d - 1 ? d - 1 : high;
	if (low == high)
		high += 0.001;
	for (int i = 0; i < r->dim / 2; i++) {
		float pos_freq = powf((float)r->base, (float)(2 * i) / (float)r->dim);
		float extrap = 1.0f / pos_freq, interp = 1.0f / ((float)r->factor * pos_freq);
		float ramp = ((float)i - (float)low) / (float)(high - low);
		ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
		float keep = 1 - ramp; /* the extrapolation factor */
		r->inv_freq[i] = interp * (1 - keep) + extrap * keep;
	}
	return 0;
}

int rope_init(struct rope *r, int dim, double theta, int max_positions, const void *scaling_json,
	      const char *path, struct err *e)
{
	memset(r, 0, sizeof *r);
	if (dim < 2 || dim % 2)
		return err_set(e, "%s: rotary dimension %d must be even and positive", path, dim);
	if (!(theta > 1))
		return err_set(e, "%s: rope_theta %g must be greater than 1", path, theta);
	r->dim = dim;
	r->base = theta;
	r->factor = 1;
	r->max_positions = max_positions;
	r->attn_factor = 1;
	r->inv_freq = malloc((size_t)dim / 2 * sizeof *r->inv_freq);
	if (!r->inv_freq)
		return err_set(e, "out of memory");
	rope_default_freq(theta, dim, r->inv_freq);
	const json_t *sc = scaling_json;
	if (!sc || json_is_null(sc))
		return 0;
	if (!json_is_object(sc))
		return err_set(e, "%s: rope_scaling must be an object", path);
	json_t *tv = json_object_get(sc, "rope_type");
	if (!json_is_string(tv))
		tv = json_object_get(sc, "type");
	if (!json_is_string(tv))
		return err_set(e, "%s: rope_scaling has no \"rope_type\"", path);
	const char *type = json_string_value(tv);
	if (strcmp(type, "default") == 0)
		return 0;
	static const char *const names[] = {"linear", "dynamic", "llama3", "yarn"};
	static const enum rope_type types[] = {ROPE_LINEAR, ROPE_DYNAMIC, ROPE_LLAMA3, ROPE_YARN};
	int which = -1;
	for (int i = 0; i < 4; i++)
		if (strcmp(type, names[i]) == 0)
			which = i;
	if (which < 0)
		return err_set(e, "%s: rope_scaling type \"%.40s\" is not supported (default, linear, dynamic, llama3, "
			       "yarn)", path, type);
	r->type = types[which];
	if (rope_number(sc, "factor", &r->factor, true, path, type, e) < 0)
		return -1;
	if (!(r->factor > 0) || r->factor > 1e6)
		return err_set(e, "%s: rope_scaling factor %g out of range", path, r->factor);
	if (r->type == ROPE_LINEAR) {
		for (int i = 0; i < dim / 2; i++)
			r->inv_freq[i] /= (float)r->factor;
	} else if (r->type == ROPE_LLAMA3) {
		double lo, hi, old;
		if (rope_number(sc, "low_freq_factor", &lo, true, path, type, e) < 0 ||
		    rope_number(sc, "high_freq_factor", &hi, true, path, type, e) < 0 ||
		    rope_number(sc, "original_max_position_embeddings", &old, true, path, type, e) < 0)
			return -1;
		/* low = high (Llama-4-Scout's 1 and 1): no band is blended, every wavelength scaled or kept */
		if (!(hi >= lo) || !(lo > 0) || !(old > 0))
			return err_set(e, "%s: rope_scaling llama3 needs 0 < low_freq_factor <= high_freq_factor and a "
				       "positive original_max_position_embeddings", path);
		rope_llama3(r, lo, hi, old);
	} else if (r->type == ROPE_YARN) {
		if (rope_yarn(r, sc, path, e) < 0)
			return -1;
	}
	return 0;
}

void rope_free(struct rope *r)
{
	free(r->inv_freq);
	r->inv_freq = NULL;
}

int rope_max_length(const struct rope *r)
{
	if (r->type == ROPE_DYNAMIC) {
		double n = r->max_positions * r->factor;
		return n > 1 << 20 ? 1 << 20 : (int)n;
	}
	return r->max_positions;
}

int rope_tables(const struct rope *r, int n, float *cos_out, float *sin_out, struct err *e)
{
	int half = r->dim / 2;
	const float *freq = r->inv_freq;
	float *dyn = NULL;
	if (r->type == ROPE_DYNAMIC && n > r->max_positions) {
		/* NTK-aware: a larger base for the whole text once it outgrows the trained length. */
		double base = r->base * pow(r->factor * n / r->max_positions - (r->factor - 1), r->dim / (r->dim - 2.0));
		dyn = malloc((size_t)half * sizeof *dyn);
		if (!dyn)
			return err_set(e, "out of memory");
		rope_default_freq(base, r->dim, dyn);
		freq = dyn;
	}
	for (int p = 0; p < n; p++) {
		for (int i = 0; i < half; i++) {
			float angle = (float)p * freq[i];
			cos_out[(size_t)p * half + i] = (float)cos((double)angle) * r->attn_factor;
			sin_out[(size_t)p * half + i] = (float)sin((double)angle) * r->attn_factor;
		}
	}
	free(dyn);
	return 0;
}

void rope_apply(const struct rope *r, float *x, int n, int stride, const float *cos_t, const float *sin_t)
{
	int half = r->dim / 2;
	if (r->interleaved) { /* HF's cos/sin repeat_interleave'd: dims 2i and 2i+1 share angle i */
		for (int p = 0; p < n; p++) {
			float *v = x + (size_t)p * stride;
			const float *c = cos_t + (size_t)p * half, *s = sin_t + (size_t)p * half;
			for (int i = 0; i < half; i++) {
				float a = v[2 * i], b = v[2 * i + 1];
				v[2 * i] = a * c[i] - b * s[i];
				v[2 * i + 1] = b * c[i] + a * s[i];
			}
		}
		return;
	}
	for (int p = 0; p < n; p++) {
		float *v = x + (size_t)p * stride;
		const float *c = cos_t + (size_t)p * half, *s = sin_t + (size_t)p * half;
		for (int i = 0; i < half; i++) {
			float a = v[i], b = v[i + half];
			v[i] = a * c[i] - b * s[i];
			v[i + half] = b * c[i] + a * s[i];
		}
	}
}
