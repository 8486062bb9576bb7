/* ui-model.c -- ui_run: the explorer on a real model (a trace source calling model_run_reuse, so
 * typing at the end of a causal model's text computes only the new tokens).
 * Kept apart from ui.c so tests can run the explorer on synthetic traces without the engine. */
#include "config.h"

#include "engine/model.h"
#include "tui/ui.h"

/* The model and, for an encoder-decoder, the target its decoder reads (--target). */
struct ui_model_src {
	struct model *m;
	const char *target;
};

static int ui_model_run(void *ctx, const char *text, const char *text_b, const volatile int *cancel,
			struct trace **out, struct err *e)
{
	const struct ui_model_src *s = ctx;
	if (s->target)
		return model_run_target(s->m, text, s->target, cancel, out, e);
	return model_run_reuse(s->m, text, text_b, cancel, out, e);
}

int ui_run(struct model *m, const char *text, const char *text_b, const struct ui_options *o, struct err *e)
{
	const struct model_info *info = model_get_info(m);
	model_keep_value_norms(m, true); /* the weights key (Y) may ask for them at any time */
	struct ui_model_src ms = {m, info->encoder_decoder ? o->target : NULL};
	struct ui_source src = {
		.name = info->name,
		.supports_pairs = info->supports_pairs,
		.ctx = &ms,
		.run = ui_model_run,
	};
	struct ui_options with_model = *o; /* the predictions read the model's output head */
	with_model.model = m;
	return ui_run_source(&src, text, text_b, &with_model, e);
}
