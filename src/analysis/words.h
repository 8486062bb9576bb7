/* words.h -- word-level attention: the pieces of a trace merged into the words they spell.
 *
 * A word is what the tokenizer marks, as the token strip shows it (tokentext_text): a piece starts
 * a new word unless it continues the previous one (WordPiece "##", or no leading space marker 'Ġ'
 * or '▁' in byte-level and SentencePiece BPE). The first piece of the text and the first piece
 * after a special token always start a word; special tokens are words of their own.
 *
 * Attention follows Clark et al. (2019), "What does BERT look at?": attention *to* a word is the
 * sum over its pieces, attention *from* a word is the mean over its pieces, so rows still sum to 1
 * (and, in a causal model, a word's row is 0 past the word, as each piece's row is 0 past it).
 * Queries, keys, values and hidden states of a word are the mean over its pieces. */
#ifndef ATTNSCOPE_WORDS_H
#define ATTNSCOPE_WORDS_H

#include "base/err.h"
#include "trace/trace.h"

/* Fill WORD_OF[t->n] with the word of each piece; returns the number of words. */
int words_split(const struct trace *t, int *word_of);
/* WORD_START[nw + 1] from WORD_OF[n] (words are runs of pieces, in order). */
void words_starts(const int *word_of, int n, int nw, int *word_start);
/* Merge the piece matrix A[n][n] (row = query) into OUT[nw][nw]: rows averaged over a word's
 * pieces, columns summed over them. */
void words_merge(const float *a, int n, const int *word_of, const int *word_start, int nw, float *out);
/* The same for a rectangle A[rows][COLS] (cross-attention: target rows, source columns) into OUT[NR][NC]:
 * ROW_START[NR + 1] the rows' words, COL_OF[COLS] each column's word. */
void words_merge_rect(const float *a, int cols, const int *row_start, int nr, const int *col_of, int nc, float *out);
/* Average the rows X[n][d] of each word's pieces into OUT[nw][d]. */
void words_mean_rows(const float *x, int d, const int *word_start, int nw, float *out);

/* A new trace of the words of T (free with trace_free; T must outlive it), NULL on OOM. Its tokens
 * are the words' readable text, its ids and type ids the first piece's; ->source is T and
 * ->word_of / ->word_start map pieces to words. Sliding windows are not carried over (a word's row
 * is simply 0 where its pieces could not look). An encoder-decoder's trace of words carries its decoder's
 * words as ->decoder (the decoder input's words, split by the same rules), their cross-attention merged
 * like attention: target words down (rows averaged), source words across (columns summed); the encoder's
 * and decoder's contexts, cross-attention queries, keys and values averaged likewise (the labels stay the
 * pieces', read through ->source; T5's position bias is not carried over: a word has no bucket). */
struct trace *words_build(const struct trace *t);

/* Attention rollout (rollout.h) of word trace W: computed on its pieces, then each layer's
 * OUT[n_layers][w->n][w->n] merged like attention. -1 with a message on OOM. */
int words_rollout(const struct trace *w, float *out, struct err *e);

/* The word of piece P of W->source (P itself when W is not a word trace; -1 stays -1). */
int words_of_piece(const struct trace *w, int p);
/* The first piece of word I of W (I itself when W is not a word trace; -1 stays -1). */
int words_first_piece(const struct trace *w, int i);

#endif
