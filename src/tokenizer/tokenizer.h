/* tokenizer.h -- text to token ids, exactly as Hugging Face's slow tokenizers do it.
 *
 * Two kinds: BERT WordPiece (vocab.txt, or tokenizer.json with a WordPiece model) and GPT-2
 * byte-level BPE (vocab.json + merges.txt, or tokenizer.json with a BPE model). The kind is
 * chosen by the caller from the model family; files are looked up in the model folder.
 * Special-token ids are read from the files, never hard-coded.
 *
 * "Exactly" means transformers 4.31's BertTokenizer / GPT2Tokenizer called as
 * tok(text, text_b, truncation=True, max_length=max_len): special tokens typed in the text
 * ("[SEP]", "<|endoftext|>") become those tokens, BERT lower-cases and strips accents as
 * tokenizer_config.json says, GPT-2 merges by rank. Unicode classes come from utf8proc and
 * PCRE2, so characters first assigned in Unicode 15 may be classed differently from the
 * Python that runs HF (tests/tools/ref_tokenize.py is the executable specification). */
#ifndef ATTNSCOPE_TOKENIZER_H
#define ATTNSCOPE_TOKENIZER_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"

enum tokenizer_kind {
	TOKENIZER_WORDPIECE, /* BERT: basic tokenizer + greedy WordPiece, adds [CLS] a [SEP] (b [SEP]) */
	TOKENIZER_BPE,       /* GPT-2: byte-level BPE, adds no special tokens */
	TOKENIZER_JSON,      /* tokenizer.json as the Hugging Face tokenizers library runs it (normalizer,
	                      * pre-tokenizer, model, post-processor), with tokenizer_config.json */
	/* The encoder families around RoBERTa and SentencePiece (slow-tokenizer semantics): */
	TOKENIZER_ROBERTA,   /* RobertaTokenizer: GPT-2's byte-level BPE on RoBERTa's vocab.json + merges.txt
	                      * (or tokenizer.json), <s> a </s> (</s> b </s>), token types all 0 */
	TOKENIZER_XLMR,      /* XLMRobertaTokenizer: sentencepiece.bpe.model, fairseq ids, <s> a </s> (</s> b </s>) */
	TOKENIZER_ALBERT,    /* AlbertTokenizer: spiece.model, [CLS] a [SEP] (b [SEP]) */
	TOKENIZER_DEBERTA_V2, /* DebertaV2Tokenizer: spm.model, [CLS] a [SEP] (b [SEP]) */
	/* The encoder-decoder families (slow-tokenizer semantics of transformers 4.31). BartTokenizer
	 * is RobertaTokenizer's rule on the same files: BART folders take TOKENIZER_ROBERTA. These
	 * kinds take one text (no pairs); tokenizer_encode_target gives the decoder's labels. */
	TOKENIZER_T5,        /* T5Tokenizer: spiece.model, a </s> (no second </s> after a typed one);
	                      * <extra_id_N> = pieces + extra_ids - 1 - N (tokenizer_config.json's
	                      * extra_ids, 100 when absent); legacy mode only */
	TOKENIZER_MBART,     /* MBartTokenizer: sentencepiece.bpe.model with XLM-R's ids, 25 language
	                      * codes after the pieces, then <mask>: a </s> src_lang; target a </s> tgt_lang.
	                      * When tokenizer_config.json's tokenizer_class is MBart50Tokenizer: its 52
	                      * codes, src_lang a </s>; target tgt_lang a </s> */
	TOKENIZER_MARIAN,    /* MarianTokenizer: source.spm (target.spm for the target) pieces mapped
	                      * through vocab.json (others: <unk>), a leading ">>code<<" kept as one
	                      * token, a </s> */
	TOKENIZER_NLLB,      /* NllbTokenizer: as mBART with the 202 FLORES-200 codes; src_lang a </s>,
	                      * target tgt_lang a </s> (legacy_behaviour: a </s> lang, as mBART) */
	TOKENIZER_PEGASUS,   /* PegasusTokenizer: spiece.model, offset 103: <pad> </s> <mask_1> <mask_2>
	                      * <unk_2> ... <unk_102> = 0 ... 104, piece p = p + 103; a </s> */
	TOKENIZER_M2M100,    /* M2M100Tokenizer (m2m100_418M; loaded for the nllb kind when tokenizer_class
	                      * says so): sentencepiece.bpe.model pieces mapped through vocab.json (others:
	                      * <unk>), "__en__" ... after vocab.json (language_codes m2m100: 100, wmt21: 8);
	                      * src_lang a </s>, target tgt_lang a </s> */
};

/* How a tokenizer writes the pieces of a word, which says how they read back as text (the token
 * strip, words). Known from the tokenizer's kind or from tokenizer.json's decoder, not from names. */
enum tokenizer_pieces {
	TOKENIZER_PIECES_UNKNOWN,       /* not known: readers guess from the pieces themselves */
	TOKENIZER_PIECES_WORDPIECE,     /* "##" starts a piece that continues a word (BERT) */
	TOKENIZER_PIECES_BYTE_LEVEL,    /* GPT-2's byte alphabet, 'Ġ' a space (GPT-2, RoBERTa, Llama 3, Qwen) */
	TOKENIZER_PIECES_SENTENCEPIECE, /* '▁' a space, "<0xXX>" a byte (Llama 2, Gemma, XLM-R, ALBERT) */
};

struct tokenizer; /* opaque; immutable after load, safe to share between threads */

/* The result of encoding one text (or text pair). All arrays have n entries. */
struct token_list {
	int n;
	int32_t *ids;       /* [n] vocabulary ids */
	char **pieces;      /* [n] the vocabulary's own strings ("[CLS]", "##ing", "Ġthis"), NUL-terminated UTF-8 */
	int32_t *type_ids;  /* [n] token_type_ids: BERT 0 for text A (and its [CLS]/[SEP]), 1 for text B;
	                     * GPT-2 all 0 (HF's GPT2Tokenizer returns none, so the model sees none) */
	bool *special;      /* [n] special tokens: the [CLS]/[SEP] added around the text and special tokens
	                     * typed in it ("[SEP]", "<|endoftext|>"); not an [UNK] standing for a word */
	bool truncated;     /* true when tokens were dropped to fit max_len */
	int n_before_truncation; /* token count the full text would have had */
};

/* Load the tokenizer files of KIND from folder DIR: vocab.txt (BERT) or vocab.json + merges.txt
 * (GPT-2), else tokenizer.json; then tokenizer_config.json (do_lower_case, strip_accents,
 * tokenize_chinese_chars, never_split, add_prefix_space, special token names),
 * special_tokens_map.json and added_tokens.json when present. Errors are one line naming
 * the file and the problem. Loading GPT-2's 50k vocabulary and merges takes ~30 ms. */
int tokenizer_load(const char *dir, enum tokenizer_kind kind, struct tokenizer **out, struct err *e);
void tokenizer_free(struct tokenizer *tok);

/* Encode TEXT (and TEXT_B when not NULL) into OUT, keeping at most MAX_LEN tokens including
 * special tokens (HF truncation: longest_first for pairs); MAX_LEN <= 0 keeps everything.
 * A MAX_LEN that leaves no room for any of TEXT (or for a pair's special tokens) is an error,
 * where HF would log one and return too many tokens. TEXT must be valid UTF-8; invalid UTF-8
 * is an error ("invalid UTF-8 at byte N", N counted from 0). BERT: [CLS] a [SEP] (b [SEP]);
 * GPT-2: a b, nothing added. Free OUT with token_list_free (also safe after an error). */
int tokenizer_encode(const struct tokenizer *tok, const char *text, const char *text_b, int max_len,
		     struct token_list *out, struct err *e);
void token_list_free(struct token_list *list);

/* The ids transformers gives as `labels` for TEXT, tok(text_target=TEXT): the decoder's side of an
 * encoder-decoder model, before its shift right. mBART: TEXT </s> tgt_lang; NLLB: tgt_lang TEXT
 * </s>; Marian: TEXT through target.spm, </s>; the others as tokenizer_encode (every kind that is
 * not an encoder-decoder one included). MAX_LEN, errors and OUT as tokenizer_encode. */
int tokenizer_encode_target(const struct tokenizer *tok, const char *text, int max_len, struct token_list *out,
			    struct err *e);

/* Choose the source and target languages of an mBART or NLLB tokenizer (codes as "en_XX",
 * "deu_Latn"); NULL keeps the current one. Loading sets them from tokenizer_config.json's
 * src_lang / tgt_lang, else the class's default source (en_XX, eng_Latn) and no target (then
 * tokenizer_encode_target is an error naming the missing tgt_lang, as HF fails). An unknown
 * code, or a code for a tokenizer without language codes, is an error and changes nothing.
 * Not thread-safe: call it before sharing TOK between threads. */
int tokenizer_set_langs(struct tokenizer *tok, const char *src, const char *tgt, struct err *e);
/* The current codes (NULL where none; both NULL for tokenizers without language codes). */
void tokenizer_langs(const struct tokenizer *tok, const char **src, const char **tgt);

int tokenizer_vocab_size(const struct tokenizer *tok);
/* How TOK writes pieces (enum tokenizer_pieces). */
enum tokenizer_pieces tokenizer_pieces(const struct tokenizer *tok);
/* Can the tokenizer build a sentence pair (a template for two texts, as BERT's [CLS] a [SEP] b [SEP])? */
bool tokenizer_supports_pairs(const struct tokenizer *tok);
/* The vocabulary string of ID, or NULL when out of range. */
const char *tokenizer_id_to_token(const struct tokenizer *tok, int32_t id);
/* The id of vocabulary string S, or -1. */
int32_t tokenizer_token_to_id(const struct tokenizer *tok, const char *s);

#endif
