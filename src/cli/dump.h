/* dump.h -- export a trace as JSON or CSV (the `--dump` contract that scripts and tests rely on). */
#ifndef ATTNSCOPE_DUMP_H
#define ATTNSCOPE_DUMP_H

#include <stdio.h>

#include "base/err.h"
#include "engine/ablate.h"
#include "engine/model.h"
#include "trace/trace.h"

enum dump_format { DUMP_JSON, DUMP_CSV };

struct dump_select {
	int layer; /* -1 = every layer */
	int head;  /* -1 = every head */
	const struct model *model; /* JSON: the model's output head gives "lm_head", "topk" and "surprisal"
	                            * (lmhead.h); NULL = none of them (a trace of words, --top-k 0) */
	int top_k;                 /* entries of "topk" per position */
	const struct model *lens;  /* --lens: "logit_lens" of this model's causal head (lens.h); NULL = none */
	int dla_token;             /* --lens: "dla" at this position (--token); -1 = the last with a next token */
	/* --ablate: the trace written is the ablated run's; ABLATION its heads and mode, CLEAN the clean run
	 * of the same tokens (JSON then gains "ablated", "ablate_mode", "ablation" and "last_hidden_state") */
	const struct ablation *ablation;
	const struct model *ablation_model; /* the model both runs are of */
	const struct trace *clean;
	const double *ablation_effect; /* --ablation-effect: [n_layers][n_heads] (ablate.h), or NULL */
	int ablation_effect_mode;      /* enum ablate_mode of ABLATION_EFFECT */
	int stack;                     /* CSV of an encoder-decoder (--stack): 0 its encoder's attention (every
	                                * other model's), 1 the decoder's self-attention, 2 its cross-attention
	                                * (keys: the source's tokens) */
};

/* Parse "json" / "csv"; -1 if neither. */
int dump_parse_format(const char *s);

/* Write T (restricted by SEL) to OUT. INFO supplies the model description for JSON. */
int dump_write(const struct trace *t, const struct model_info *info, enum dump_format fmt,
	       const struct dump_select *sel, FILE *out, struct err *e);
/* The same with a second text's trace B (--compare, may be NULL): JSON gains "compare" (B's
 * tokens, ids and attentions, the matching rows and each head's "changed" total variation,
 * compare.h); CSV gains weight_b and difference (B - A) columns, empty where B has no such cell. */
int dump_write_compare(const struct trace *t, const struct trace *b, const struct model_info *info,
		       enum dump_format fmt, const struct dump_select *sel, FILE *out, struct err *e);

#endif
