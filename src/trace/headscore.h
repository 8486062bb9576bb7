/* headscore.h -- pattern scores of every head, for the head finder.
 *
 * For one head's attention A (rows = queries, n tokens) the scores are means over query rows:
 *   prev      A[i][i-1], over i >= 1           next   A[i][i+1], over i <= n-2
 *   self      A[i][i]                          first  A[i][0]  ([CLS] in BERT, the BOS attention
 *                                                     sink in decoders), over the i whose keys
 *                                                     include token 0 (not past a sliding window)
 *   sep       weight on special tokens after position 0 ([SEP] in BERT)
 *   punct     weight on punctuation tokens (every character of the token, after a WordPiece "##"
 *             or a GPT-2 'Ġ' space marker, in a Unicode P* category)
 *   entropy   −Σ_j A[i][j] ln A[i][j] (nats)
 *   distance  Σ_j A[i][j] |i − j| (tokens)
 *   dup       weight on earlier tokens with the same id as token i, over the i that have one
 *   induction weight on the tokens j+1 (j+1 < i) that follow an earlier occurrence j of token i's id,
 *             over the i that have one (the pattern of an induction head: "A B … A → B")
 *   sink      the weight a row parks where it moves nothing (Xiao et al. 2023, "Efficient Streaming
 *             Language Models with Attention Sinks"): on the model's learned sink where it has one
 *             (gpt-oss: 1 minus the row's sum, trace_sink_share), else on the first token (then the
 *             same as first); in a trace whose sink is hidden (sinkhide.h), 0
 * dup and induction are NaN when no token repeats (and are meant for causal models).
 *
 * Cross-attention (a decoder's trace, trace_cross_attn: A is [n][m], n target rows (the decoder's input
 * tokens), m source columns (the encoder's tokens)) has scores of its own, NaN in self-attention:
 *   diagonal  Σ A[i][j] over the j with |j − d_i| <= w, where d_i = i (m−1)/(n−1) is the diagonal
 *             rescaled to the source (d_0 = 0 when n = 1) and w = max(1, ⌊m/10⌋) the band's half-width
 *   monotonic the share of the rows i >= 1 whose argmax_j A[i][j] (the first, on ties) is not before row
 *             i−1's; NaN when n = 1. A head fixed on one source token scores 1: read it with diagonal.
 *   eos       A[i][e], e the source's end token: its last special token whose id the target's labels hold
 *             too (</s>, which both end with, also under mBART's trailing language code), else its last
 *             special token; NaN when the source has none
 *   max       max_j A[i][j]
 * and, of the ones above, first (the source's first token), punct (on source punctuation) and entropy
 * (over the m source tokens; entropy_norm divides by ln m); the others are NaN: a source token is no
 * previous, next, same or repeated token of a target row.
 * A head gets a label in the spirit of Clark et al. (2019), "What does BERT look at?": the name of
 * its largest weight score (prev … induction, not entropy or distance) when that is at least 0.5
 * ("first" reads "[CLS]" or, in a causal model, "BOS" when the first token is special);
 * otherwise "broad" when entropy_norm is at least 0.75; otherwise none. Cross-attention's weight scores
 * diagonal and eos label a head "diagonal" and "end token"; its "first" reads "first". */
#ifndef ATTNSCOPE_HEADSCORE_H
#define ATTNSCOPE_HEADSCORE_H

#include "base/err.h"
#include "trace/trace.h"

/* X(id, name, what it measures) -- the name is the column header and the --sort key. */
#define HEADSCORES(X)                                                        \
	X(HS_PREV, "prev", "attention to the previous token")               \
	X(HS_NEXT, "next", "attention to the next token")                   \
	X(HS_SELF, "self", "attention to the token itself")                 \
	X(HS_FIRST, "first", "attention to the first token ([CLS], BOS)")   \
	X(HS_SEP, "sep", "attention to later special tokens ([SEP])")       \
	X(HS_PUNCT, "punct", "attention to punctuation")                    \
	X(HS_ENTROPY, "entropy", "mean row entropy in nats (high = broad)") \
	X(HS_DISTANCE, "distance", "mean attention distance in tokens")     \
	X(HS_DUP, "dup", "attention to earlier copies of the token")        \
	X(HS_INDUCTION, "induction", "attention to what followed earlier copies") \
	X(HS_CHANGED, "changed", "attention moved by the second text (total variation)") \
	X(HS_SINK, "sink", "attention parked on the sink: the first token, or the learned sink") \
	X(HS_DIAGONAL, "diagonal", "cross: attention within the band around the rescaled diagonal") \
	X(HS_MONOTONIC, "monotonic", "cross: share of target rows whose argmax source does not go back") \
	X(HS_EOS, "eos", "cross: attention to the source's end token (</s>)") \
	X(HS_MAX, "max", "cross: mean of each row's largest weight")

enum headscore_kind {
#define HS_ENUM(id, name, help) id,
	HEADSCORES(HS_ENUM)
#undef HS_ENUM
	HS_COUNT
};

#define HEADSCORE_LABEL_MAX 16

struct headscore {
	int layer, head;
	double s[HS_COUNT];              /* the scores above; NaN when undefined */
	double entropy_norm;             /* mean over rows with >1 visible key (trace_key_range) of
	                                  * entropy / ln(visible keys), 0..1 */
	char label[HEADSCORE_LABEL_MAX]; /* "previous", "[CLS]", "broad", …, or "" */
};

/* Scores of every head: OUT[n_layers * n_heads], layer-major. -1 on OOM. "changed" is NaN. */
int headscore_all(const struct trace *t, struct headscore *out);
/* Scores of LAYER/HEAD of T from its probabilities A[n][n], with PUNCT[n] the tokens' punctuation
 * flags (headscore_punct_flags): what headscore_all gives each head (the forward pass of a compact
 * trace records them with it). */
void headscore_head(const struct trace *t, int layer, int head, const float *a, const bool *punct,
		    struct headscore *out);
/* Cross-attention scores of every head of DEC, a decoder's trace (DEC->encoder its source): OUT[n_layers *
 * n_heads], layer-major, with the scores above that are not cross's NaN. -1 on OOM. */
int headscore_cross_all(const struct trace *dec, struct headscore *out);
/* The scores of one cross-attention head, A[n][n_cross] (trace_cross_attn), with PUNCT[n_cross] the source
 * tokens' punctuation flags and END the source's end token (headscore_cross_end, -1 = none). */
void headscore_cross_head(const struct trace *dec, int layer, int head, const float *a, const bool *punct, int end,
			  struct headscore *out);
/* The position in DEC's source of its end token (the rule of eos above), -1 when it has no special token. */
int headscore_cross_end(const struct trace *dec);
/* Is K one of the cross-attention-only scores (NaN in self-attention)? */
bool headscore_cross_only(int k);
/* Does score K mean something for cross-attention (headscore_cross_head defines it)? */
bool headscore_for_cross(int k);

/* headscore_is_punct of every token of T, malloc'ed ([n]); NULL on OOM. */
bool *headscore_punct_flags(const struct trace *t);
/* Fill "changed" of OUT (from headscore_all on A): compare_tv of each head between A and B. */
void headscore_changed(const struct trace *a, const struct trace *b, struct headscore *out);

const char *headscore_name(enum headscore_kind k);
const char *headscore_help(enum headscore_kind k);
/* The score called NAME, or -1. */
int headscore_by_name(const char *name);
/* Is trace token I punctuation by the rule above? */
int headscore_is_punct(const struct trace *t, int i);

/* Set H's label from its scores and entropy_norm (the rule above); FIRST_SPECIAL: the text begins
 * with a special token, so "first" reads "[CLS]" (or "BOS" when CAUSAL). */
void headscore_label(struct headscore *h, bool first_special, bool causal);

/* Sort IDX[n] (indices into S) by score K, largest first, or smallest first with ASCENDING; NaN
 * last either way, ties in layer/head order. */
void headscore_sort(const struct headscore *s, int *idx, int n, enum headscore_kind k, int ascending);

#endif
