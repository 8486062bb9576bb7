/* tok-unigram.c -- tokenizer.json's Unigram model (SentencePiece unigram: T5, ALBERT-style files).
 *
 * As tokenizers' Unigram::encode_optimized: a Viterbi pass over the word's characters keeps,
 * for every position, the best-scoring way to reach it (sum of piece log-probabilities, f64,
 * the first best kept on ties); a character no piece covers alone is reachable as the unknown
 * token at min_score - 10. Unknown runs next to each other are fused into one piece (tokenizers
 * always fuses for Unigram); a fused run the vocabulary lacks becomes its <0xXX> byte tokens
 * with byte_fallback, else the unknown id. */
#include "tokenizer/tok-internal.h"
#include "base/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNIGRAM_UNK_PENALTY 10.0

struct tok_unigram {
	double *score;   /* [n] */
	int32_t n;
	double min_score;
	size_t max_len;  /* longest piece in bytes */
	bool byte_fallback;
};

int unigram_load(struct tokenizer *tok, json_t *model, struct tok_unigram **out, struct err *e)
{
	*out = NULL;
	json_t *vocab = json_object_get(model, "vocab"), *unk = json_object_get(model, "unk_id");
	if (!json_is_array(vocab) || json_array_size(vocab) == 0)
		return err_set(e, "model.vocab is not a list of [piece, score]");
	size_t n = json_array_size(vocab);
	if (n >= TOK_MAX_IDS)
		return err_set(e, "model.vocab has too many pieces (%zu)", n);
	struct tok_unigram *u = calloc(1, sizeof *u);
	if (!u || !(u->score = malloc(n * sizeof *u->score)) || tok_vocab_reserve(&tok->vocab, n) < 0) {
		if (u)
			free(u->score);
		free(u);
		return err_set(e, "out of memory");
	}
	u->n = (int32_t)n;
	u->byte_fallback = json_is_true(json_object_get(model, "byte_fallback"));
	for (size_t i = 0; i < n; i++) {
		json_t *p = json_array_get(vocab, i);
		json_t *s = json_array_get(p, 0), *sc = json_array_get(p, 1);
		if (!json_is_array(p) || json_array_size(p) != 2 || !json_is_string(s) || !json_is_number(sc)) {
			unigram_free(u);
			return err_set(e, "model.vocab[%zu] is not [piece, score]", i);
		}
		size_t len = json_string_length(s);
		if (tok_vocab_set(&tok->vocab, json_string_value(s), len, (int32_t)i) < 0) {
			unigram_free(u);
			return err_set(e, "out of memory");
		}
		u->score[i] = json_number_value(sc);
		if (i == 0 || u->score[i] < u->min_score)
			u->min_score = u->score[i];
		if (len > u->max_len)
			u->max_len = len;
	}
	tok->unk_id = -1;
	if (unk && !json_is_null(unk)) {
		if (!json_is_integer(unk) || json_integer_value(unk) < 0 || json_integer_value(unk) >= (json_int_t)n) {
			unigram_free(u);
			return err_set(e, "model.unk_id is not the index of a piece");
		}
		tok->unk_id = (int32_t)json_integer_value(unk);
	}
	*out = u;
	return 0;
}

void unigram_free(struct tok_unigram *u)
{
	if (!u)
		return;
	free(u->score);
	free(u);
}

struct unigram_node {
	double score;   /* best score of a path ending here */
	size_t start;   /* where its last piece starts */
	int32_t id;     /* its last piece; -2 while unreached */
};

/* Push piece ID or, for an unknown run S[0..LEN), its byte tokens / the unknown id. */
static int unigram_emit(const struct tokenizer *tok, const struct tok_unigram *u, const char *s, size_t len, bool unk,
			int32_t id, struct tok_ids *out, struct err *e)
{
	if (!unk)
		return tok_ids_push(out, id, false) < 0 ? err_set(e, "out of memory") : 0;
	/* the fused run is looked up as a string first, as tokenizers does */
	int32_t whole = tok_vocab_get(&tok->vocab, s, len);
	if (whole >= 0)
		return tok_ids_push(out, whole, false) < 0 ? err_set(e, "out of memory") : 0;
	if (u->byte_fallback) {
		int n0 = out->n;
		bool ok = true;
		for (size_t i = 0; i < len && ok; i++) {
			char name[8];
			snprintf(name, sizeof name, "<0x%02X>", (unsigned char)s[i]);
			int32_t b = tok_vocab_get(&tok->vocab, name, 6);
			ok = b >= 0;
			if (ok && tok_ids_push(out, b, false) < 0)
				return err_set(e, "out of memory");
		}
		if (ok)
			return 0;
		out->n = n0;
	}
	return tok_ids_push(out, tok->unk_id, false) < 0 ? err_set(e, "out of memory") : 0;
}

int unigram_word(const struct tokenizer *tok, const struct tok_unigram *u, const char *w, size_t len,
		 struct tok_ids *out, struct err *e)
{
	if (len == 0)
		return 0;
	if (len > SIZE_MAX / sizeof(struct unigram_node) - 1)
		return err_set(e, "text too long");
	struct unigram_node *best = malloc((len + 1) * sizeof *best);
	if (!best)
		return err_set(e, "out of memory");
	for (size_t i = 0; i <= len; i++)
		best[i].id = -2;
	best[0] = (struct unigram_node){0.0, 0, -1};
	double unk_score = u->min_score - UNIGRAM_UNK_PENALTY;
	for (size_t start = 0; start < len;) {
		uint32_t cp;
		size_t mblen = (size_t)utf8_decode(w + start, &cp);
		bool single = false;
		if (best[start].id == -2) { /* unreachable: only without an unknown token */
			start += mblen;
			continue;
		}
		double here = best[start].score;
		/* every piece that is a prefix of the rest, shortest first (the trie's order) */
		for (size_t end = start + mblen; end <= len && end - start <= u->max_len;) {
			int32_t id = tok_vocab_get(&tok->vocab, w + start, end - start);
			if (id >= 0 && id < u->n) {
				double cand = u->score[id] + here;
				if (best[end].id == -2 || cand > best[end].score)
					best[end] = (struct unigram_node){cand, start, id};
				if (end - start == mblen)
					single = true;
			}
			if (end == len)
				break;
			end += (size_t)utf8_decode(w + end, &cp);
		}
		if (!single && tok->unk_id >= 0) {
			double cand = unk_score + here;
			if (best[start + mblen].id == -2 || cand > best[start + mblen].score)
				best[start + mblen] = (struct unigram_node){cand, start, tok->unk_id};
		}
		start += mblen;
	}
	if (best[len].id == -2) {
		free(best);
		return err_set(e, "Unigram: a character has no piece and the model has no unk_id");
	}
	/* walk back, then emit in order; unknown pieces next to each other are fused */
	size_t n = 0;
	for (size_t end = len; end > 0; end = best[end].start)
		n++;
	size_t *ends = malloc(n * sizeof *ends);
	if (!ends) {
		free(best);
		return err_set(e, "out of memory");
	}
	size_t k = n;
	for (size_t end = len; end > 0; end = best[end].start)
		ends[--k] = end;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0;) {
		size_t end = ends[i], start = best[end].start;
		bool unk = best[end].id == tok->unk_id;
		if (unk) {
			while (i + 1 < n && best[ends[i + 1]].id == tok->unk_id)
				end = ends[++i];
		}
		rc = unigram_emit(tok, u, w + start, end - start, unk, best[end].id, out, e);
		i++;
	}
	free(ends);
	free(best);
	return rc;
}
