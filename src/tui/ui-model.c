/* ui-model.c -- ui_run: the explorer on a real model (a trace source calling model_run_reuse, so
 * typing at the end of a causal model's text computes only the new tokens).
 * Kept apart from ui.c so tests can run the explorer on synthetic traces without the engine. */
#include "config.h"

#include "engine/model.h"
#include "tui/ui.h"

/* The model; an encoder-decoder's second input line is the target its decoder reads (--target first). */
struct ui_model_src {
	struct model *m;
	bool encoder_decoder;
	int value_norms; /* set on the UI thread, read by the runs (atomics): keep value norms from the next run on */
};

static int ui_model_run(void *ctx, const char *text, const char *text_b, const volatile int *cancel,
			struct trace **out, struct err *e)
{
	struct ui_model_src *s = ctx;
	/* the runs hold the explorer's model lock: no other run reads the flag meanwhile */
	model_keep_value_norms(s->m, __atomic_load_n(&s->value_norms, __ATOMIC_ACQUIRE));
	if (s->encoder_decoder) /* TEXT_B NULL (the line empty): the decoder reads its start token alone */
		return model_run_target(s->m, text, text_b, cancel, out, e);
	return model_run_reuse(s->m, text, text_b, cancel, out, e);
}

/* Value norms cost a 32-token bert-base keystroke 7 ms of its 35: computed only while Y shows them. */
static void ui_model_keep_value_norms(void *ctx, bool on)
{
	struct ui_model_src *s = ctx;
	__atomic_store_n(&s->value_norms, on, __ATOMIC_RELEASE);
}

int ui_run(struct model *m, const char *text, const char *text_b, const struct ui_options *o, struct err *e)
{
	const struct model_info *info = model_get_info(m);
	struct ui_model_src ms = {m, info->encoder_decoder, o->weights_norm};
	model_keep_value_norms(m, o->weights_norm); /* an ablated rerun reads it too, before any run set it */
	struct ui_source src = {
		.name = info->name,
		.supports_pairs = info->supports_pairs && !info->encoder_decoder, /* its encoder reads one text */
		.target_line = info->encoder_decoder,
		.ctx = &ms,
		.run = ui_model_run,
		.keep_value_norms = ui_model_keep_value_norms,
	};
	struct ui_options with_model = *o; /* the predictions read the model's output head */
	with_model.model = m;
	return ui_run_source(&src, text, info->encoder_decoder ? o->target : text_b, &with_model, e);
}
