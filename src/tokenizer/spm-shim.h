/* spm-shim.h -- a C interface to the SentencePiece library (libsentencepiece).
 *
 * Why a C++ file in a C program: SentencePiece .model files (XLM-RoBERTa's
 * sentencepiece.bpe.model, ALBERT's spiece.model, DeBERTa-v3's spm.model) are serialized
 * protobuf messages, and Hugging Face's slow tokenizers run them through the sentencepiece
 * library itself. Using that same library (Debian's libsentencepiece-dev) gives its exact
 * normalizer, Unigram lattice and BPE, instead of a hand-written protobuf reader and a
 * re-implementation. The library only has a C++ API, so spm-shim.cc wraps the four calls
 * attnscope needs behind this plain C header; nothing C++ (exceptions included) crosses it.
 * Everything around the model (Hugging Face's special tokens, id offsets, templates) is C,
 * in tok-spm.c. */
#ifndef ATTNSCOPE_SPM_SHIM_H
#define ATTNSCOPE_SPM_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct spm_model; /* opaque; immutable after load, safe to share between threads */

/* Load a model from the bytes of a .model file. On error returns NULL and writes a one-line
 * message (no newline) into ERR[0..ERRLEN). */
struct spm_model *spm_model_load(const void *data, size_t len, char *err, size_t errlen);
void spm_model_free(struct spm_model *m);

/* Number of pieces; ids run 0 .. n-1. */
int spm_model_size(const struct spm_model *m);
/* The piece of ID (NUL-terminated, owned by the model; *LEN its bytes), or NULL out of range. */
const char *spm_model_piece(const struct spm_model *m, int id, size_t *len);
/* sentencepiece's PieceToId: the id of piece S[0..LEN), or the model's unknown id. */
int spm_model_piece_to_id(const struct spm_model *m, const char *s, size_t len);
/* The model's unknown id (unk_id). */
int spm_model_unk_id(const struct spm_model *m);

/* The pieces of one text as EncodeAsPieces gives them: piece i is text[off[i] .. off[i]+len[i])
 * (not NUL-terminated), with the id the model gave it in id[i]. */
struct spm_pieces {
	char *text;
	size_t *off, *len;
	int32_t *id;
	int n;
};
/* Encode S[0..LEN) (valid UTF-8). 0, or -1 with a one-line message in ERR. */
int spm_model_encode(const struct spm_model *m, const char *s, size_t len, struct spm_pieces *out, char *err,
		     size_t errlen);
void spm_pieces_free(struct spm_pieces *p);

#ifdef __cplusplus
}
#endif

#endif
