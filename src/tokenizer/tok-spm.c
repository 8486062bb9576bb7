/* tok-spm.c -- the SentencePiece tokenizers of Hugging Face's slow classes, as transformers 4.31
 * runs them around the sentencepiece library:
 *
 *   TOKENIZER_XLMR        XLMRobertaTokenizer (sentencepiece.bpe.model): fairseq's ids, <s> <pad>
 *                         </s> <unk> = 0..3, every other piece at its sentencepiece id + 1,
 *                         <mask> after the last piece.
 *   TOKENIZER_ALBERT      AlbertTokenizer (spiece.model): preprocess_text (remove_space,
 *                         keep_accents false: NFKD without combining marks, do_lower_case), then
 *                         the model, then the split of pieces ending in digit + ",".
 *   TOKENIZER_DEBERTA_V2  DebertaV2Tokenizer (spm.model): SPMTokenizer, pieces outside the
 *                         vocabulary (and "<unk>") read as "[UNK]", split_by_punct optional.
 *   TOKENIZER_T5          T5Tokenizer (spiece.model): the model's ids; <extra_id_N> past them
 *                         (tok-config.c, which knows extra_ids).
 *   TOKENIZER_MBART,      MBartTokenizer, NllbTokenizer (sentencepiece.bpe.model): XLM-R's ids,
 *   TOKENIZER_NLLB        then the language codes of tok-langs.c, then <mask>.
 *   TOKENIZER_MARIAN      MarianTokenizer (source.spm, target.spm, vocab.json): pieces are looked
 *                         up in vocab.json (<unk> when absent); a ">>code<<" at the start of a
 *                         stretch is one token, and every ">>...<<" is cut out before the model.
 *   TOKENIZER_PEGASUS     PegasusTokenizer (spiece.model): piece p is p + 103, ids 0 ... 104 are
 *                         <pad> </s> <mask_1> <mask_2> <unk_2> ... <unk_102>.
 *   TOKENIZER_M2M100      M2M100Tokenizer (sentencepiece.bpe.model, vocab.json): pieces are looked up
 *                         in vocab.json (<unk> when absent); the language tokens follow it
 *                         (tok-config.c adds them, once language_codes is known).
 * For the encoder-decoder kinds tok->vocab holds the class's whole id <-> token table, so that a
 * token the table lacks is the class's unknown id (tok->class_unk_id).
 *
 * The model itself (normalizer, Unigram or BPE) is the library's, through spm-shim.h. This file
 * loads the ids and strings HF's convert_ids_to_tokens / convert_tokens_to_ids give, and turns one
 * stretch of text without special tokens into ids (HF's _tokenize and then the conversion). Special
 * tokens, lower-casing around them, truncation and the templates are tokenizer.c's. */
#include "tokenizer/spm-shim.h"
#include "base/file.h"
#include "tokenizer/tok-internal.h"
#include "base/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define SPIECE_UNDERLINE "\xe2\x96\x81" /* U+2581, the word-start mark of SentencePiece pieces */

bool tok_kind_is_seq2seq(enum tokenizer_kind kind)
{
	return kind == TOKENIZER_T5 || kind == TOKENIZER_MBART || kind == TOKENIZER_MARIAN || kind == TOKENIZER_NLLB ||
	       kind == TOKENIZER_PEGASUS || kind == TOKENIZER_M2M100;
}

bool tok_kind_is_spm(enum tokenizer_kind kind)
{
	return kind == TOKENIZER_XLMR || kind == TOKENIZER_ALBERT || kind == TOKENIZER_DEBERTA_V2 ||
	       tok_kind_is_seq2seq(kind);
}

const char *spm_file_name(enum tokenizer_kind kind)
{
	switch (kind) {
	case TOKENIZER_XLMR:
	case TOKENIZER_MBART:
	case TOKENIZER_NLLB:
	case TOKENIZER_M2M100:
		return "sentencepiece.bpe.model";
	case TOKENIZER_MARIAN:
		return "source.spm";
	case TOKENIZER_DEBERTA_V2:
		return "spm.model";
	default:
		return "spiece.model";
	}
}

/* fairseq's vocabulary order: <s> <pad> </s> <unk>, then sentencepiece id i at i + 1 */
static bool spm_fairseq(enum tokenizer_kind kind)
{
	return kind == TOKENIZER_XLMR || kind == TOKENIZER_MBART || kind == TOKENIZER_NLLB;
}

/* PegasusTokenizer's offset: the ids before the first piece */
#define PEGASUS_OFFSET 103

/* XLMRobertaTokenizer.fairseq_tokens_to_ids, before <mask>. */
static const char *const fairseq_names[4] = {"<s>", "<pad>", "</s>", "<unk>"};

static struct spm_model *spm_read_model(const char *path, struct err *e)
{
	char *buf;
	size_t len;
	if (file_read_all(path, TOK_MAX_FILE_BYTES, 0, &buf, &len, e) < 0)
		return NULL;
	char msg[256] = "";
	struct spm_model *m = spm_model_load(buf, len, msg, sizeof msg);
	free(buf);
	if (!m)
		err_set(e, "%s: %s", path, msg[0] ? msg : "not a SentencePiece model");
	return m;
}

/* FILE beside the model file PATH (whose name is BASE), newly allocated; NULL when out of memory. */
static char *spm_sibling(const char *path, const char *base, const char *file)
{
	size_t dl = strlen(path) - strlen(base);
	char *p = malloc(dl + strlen(file) + 1);
	if (p) {
		memcpy(p, path, dl);
		strcpy(p + dl, file);
	}
	return p;
}

/* MarianTokenizer and M2M100Tokenizer: vocab.json beside PATH as the id table, which must hold the
 * tokens their constructors look up (NEEDED[N_NEEDED], <unk> first: the id of a piece it lacks). */
static int spm_load_vocab_json(struct tokenizer *tok, const char *path, const char *const *needed, int n_needed,
			       struct err *e)
{
	char *vp = spm_sibling(path, spm_file_name(tok->kind), "vocab.json");
	const char *cls = tok->kind == TOKENIZER_MARIAN ? "MarianTokenizer" : "M2M100Tokenizer";
	int rc = -1;
	if (!vp)
		return err_set(e, "out of memory");
	if (!tok_file_exists(vp)) {
		err_set(e, "%s: missing (%s's ids)", vp, cls);
		goto out;
	}
	if (tok_vocab_load_json_file(&tok->vocab, vp, e) < 0)
		goto out;
	for (int i = 0; i < n_needed; i++)
		if (tok_vocab_get(&tok->vocab, needed[i], strlen(needed[i])) < 0) {
			err_set(e, "%s: has no \"%s\" (%s needs it)", vp, needed[i], cls);
			goto out;
		}
	tok->class_unk_id = tok_vocab_get(&tok->vocab, needed[0], strlen(needed[0]));
	rc = 0;
out:
	free(vp);
	return rc;
}

/* MarianTokenizer: target.spm beside PATH (source.spm), and vocab.json as the id table. */
static int spm_load_marian(struct tokenizer *tok, const char *path, struct err *e)
{
	char *tp = spm_sibling(path, "source.spm", "target.spm");
	int rc = -1;
	if (!tp)
		return err_set(e, "out of memory");
	if (!tok_file_exists(tp)) {
		err_set(e, "%s: missing (MarianTokenizer reads the target's pieces from it)", tp);
		goto out;
	}
	if (!(tok->spm_target = spm_read_model(tp, e)))
		goto out;
	/* MarianTokenizer.__init__ refuses a vocabulary without them */
	static const char *const needed[] = {"<unk>", "<pad>"};
	rc = spm_load_vocab_json(tok, path, needed, 2, e);
out:
	free(tp);
	return rc;
}

/* M2M100Tokenizer: vocab.json as the id table; the language tokens come after its entries
 * (lang_code_to_id: len(encoder) + i), placed by tok-config.c. */
static int spm_load_m2m100(struct tokenizer *tok, const char *path, struct err *e)
{
	/* encoder[unk_token] for a piece it lacks, encoder["</s>"] ... for the roles (tok-config.c) */
	static const char *const needed[] = {"<unk>"};
	if (spm_load_vocab_json(tok, path, needed, 1, e) < 0)
		return -1;
	if (tok->vocab.n_entries >= (uint32_t)TOK_MAX_IDS - 256)
		return err_set(e, "%s: too many ids", path);
	tok->lang_base = (int32_t)tok->vocab.n_entries;
	return 0;
}

int spm_load(struct tokenizer *tok, const char *path, struct err *e)
{
	if (!(tok->spm = spm_read_model(path, e)))
		return -1;
	if (tok->kind == TOKENIZER_MARIAN)
		return spm_load_marian(tok, path, e);
	if (tok->kind == TOKENIZER_M2M100)
		return spm_load_m2m100(tok, path, e);
	int n = spm_model_size(tok->spm), n_codes = 0;
	const char *const *codes = tok_lang_codes(tok, &n_codes);
	int off = spm_fairseq(tok->kind) ? 1 : tok->kind == TOKENIZER_PEGASUS ? PEGASUS_OFFSET : 0;
	int limit = TOK_MAX_IDS - 2 - (off > 1 ? off : 0) - n_codes; /* room for the ids around the pieces */
	if (n <= 0 || n >= limit)
		return err_set(e, "%s: %d pieces (limit %d)", path, n, limit);
	int unk = spm_model_unk_id(tok->spm);
	if (tok_vocab_reserve(&tok->vocab, (size_t)n + 2 + (size_t)n_codes + PEGASUS_OFFSET) < 0)
		return err_set(e, "%s: out of memory", path);
	for (int i = 0; i < n; i++) {
		size_t pl;
		const char *p = spm_model_piece(tok->spm, i, &pl);
		/* XLM-R: a piece whose sentencepiece id is 0 (or the unknown id) reads as <unk> */
		if (!p || (spm_fairseq(tok->kind) && (i == 0 || i == unk)))
			continue;
		if (tok_vocab_set(&tok->vocab, p, pl, i + off) < 0)
			return err_set(e, "%s: out of memory", path);
	}
	tok->class_unk_id = unk + off;
	if (spm_fairseq(tok->kind)) {
		for (int i = 0; i < 4; i++)
			if (tok_vocab_set(&tok->vocab, fairseq_names[i], strlen(fairseq_names[i]), i) < 0)
				return err_set(e, "%s: out of memory", path);
		/* MBartTokenizer / NllbTokenizer: lang_code_to_id, then <mask> after the codes */
		for (int i = 0; i < n_codes; i++)
			if (tok_vocab_set(&tok->vocab, codes[i], strlen(codes[i]), n + off + i) < 0)
				return err_set(e, "%s: out of memory", path);
		if (n_codes)
			tok->lang_base = n + off;
		if (tok_vocab_set(&tok->vocab, "<mask>", 6, n + off + n_codes) < 0)
			return err_set(e, "%s: out of memory", path);
		tok->class_unk_id = 3; /* <unk> in fairseq_names */
	}
	if (tok->kind == TOKENIZER_PEGASUS) {
		/* PegasusTokenizer.encoder, which _convert_id_to_token reads before the model */
		static const char *const first[4] = {"<pad>", "</s>", "<mask_1>", "<mask_2>"};
		for (int i = 0; i < PEGASUS_OFFSET + 2; i++) {
			char name[16];
			if (i < 4)
				snprintf(name, sizeof name, "%s", first[i]);
			else
				snprintf(name, sizeof name, "<unk_%d>", i - 2);
			if (tok_vocab_set(&tok->vocab, name, strlen(name), i) < 0)
				return err_set(e, "%s: out of memory", path);
		}
	}
	return 0;
}

void spm_free(struct tokenizer *tok)
{
	spm_model_free(tok->spm);
	spm_model_free(tok->spm_target);
	tok->spm = tok->spm_target = NULL;
}

/* ---------------------------------------------------------------- pieces to ids */

int32_t spm_token_to_id(const struct tokenizer *tok, const char *p, size_t len)
{
	const struct spm_model *m = tok->spm;
	int32_t id = tok_vocab_get(&tok->added, p, len);
	if (id >= 0)
		return id;
	if (tok->kind == TOKENIZER_XLMR) {
		for (int i = 0; i < 4; i++)
			if (strlen(fairseq_names[i]) == len && memcmp(fairseq_names[i], p, len) == 0)
				return i;
		if (len == 6 && memcmp(p, "<mask>", 6) == 0)
			return spm_model_size(m) + 1;
		int sid = spm_model_piece_to_id(m, p, len);
		return sid ? sid + 1 : tok->unk_id;
	}
	if (tok_kind_is_seq2seq(tok->kind)) {
		id = tok_vocab_get(&tok->vocab, p, len);
		return id >= 0 ? id : tok->class_unk_id;
	}
	return spm_model_piece_to_id(m, p, len);
}

/* The id of one piece of the model's output: DeBERTa's SPMTokenizer renames some first. */
static int32_t spm_piece_id(const struct tokenizer *tok, const char *p, size_t len)
{
	const struct spm_model *m = tok->spm;
	if (tok->kind == TOKENIZER_DEBERTA_V2) {
		/* SPMTokenizer.tokenize: "x not in self.vocab or x == '<unk>'" becomes "[UNK]" */
		int sid = spm_model_piece_to_id(m, p, len);
		int unk = spm_model_unk_id(m);
		size_t ul = 0;
		const char *up = spm_model_piece(m, unk, &ul);
		bool in_vocab = sid != unk || (up && ul == len && memcmp(up, p, len) == 0);
		if (!in_vocab || (len == 5 && memcmp(p, "<unk>", 5) == 0))
			p = "[UNK]", len = 5;
	}
	return spm_token_to_id(tok, p, len);
}

/* ---------------------------------------------------------------- text preparation */

static int buf_add_cp(struct tok_buf *b, uint32_t cp)
{
	char u[8];
	return tok_buf_add(b, u, (size_t)utf8_encode(cp, u));
}

/* AlbertTokenizer.preprocess_text on S[0..LEN) (valid UTF-8) into OUT. */
static int albert_preprocess(const struct tokenizer *tok, const char *s, size_t len, struct tok_buf *out)
{
	struct tok_buf a = {0}, b = {0};
	int rc = -1;
	/* remove_space: " ".join(inputs.strip().split()) */
	if (tok->remove_space) {
		bool in_word = false, any = false;
		for (size_t i = 0; i < len;) {
			uint32_t cp;
			int w = utf8_decode(s + i, &cp);
			if (utf8_is_py_space(cp)) {
				in_word = false;
			} else {
				if (!in_word && any && tok_buf_add(&a, " ", 1) < 0)
					goto out;
				if (tok_buf_add(&a, s + i, (size_t)w) < 0)
					goto out;
				in_word = any = true;
			}
			i += (size_t)w;
		}
	} else if (tok_buf_add(&a, s, len) < 0) {
		goto out;
	}
	if (tok_buf_add(&a, "", 0) < 0)
		goto out;
	/* outputs.replace("``", '"').replace("''", '"') */
	for (int pass = 0; pass < 2; pass++) {
		const char q = pass ? '\'' : '`';
		struct tok_buf *src = pass ? &b : &a, *dst = pass ? &a : &b;
		dst->n = 0;
		if (tok_buf_add(dst, "", 0) < 0)
			goto out;
		for (size_t i = 0; i < src->n;) {
			if (i + 1 < src->n && src->s[i] == q && src->s[i + 1] == q) {
				if (tok_buf_add(dst, "\"", 1) < 0)
					goto out;
				i += 2;
			} else {
				if (tok_buf_add(dst, src->s + i, 1) < 0)
					goto out;
				i++;
			}
		}
	}
	/* now in a; NFKD without combining characters, then lower-casing */
	out->n = 0;
	if (tok_buf_add(out, "", 0) < 0)
		goto out;
	const char *t = a.s;
	size_t tn = a.n;
	utf8proc_uint8_t *nf = NULL;
	if (!tok->keep_accents) {
		utf8proc_ssize_t r = utf8proc_map((const utf8proc_uint8_t *)t, (utf8proc_ssize_t)tn, &nf,
						  UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_DECOMPOSE);
		if (r < 0)
			goto out;
		t = (const char *)nf, tn = (size_t)r;
	}
	bool ok = true;
	for (size_t i = 0; ok && i < tn;) {
		uint32_t cp;
		i += (size_t)utf8_decode(t + i, &cp);
		if (!tok->keep_accents && utf8proc_get_property((utf8proc_int32_t)cp)->combining_class != 0)
			continue;
		if (tok->lower) {
			char l[8];
			ok = tok_buf_add(out, l, (size_t)utf8_py_lower(cp, l)) == 0;
		} else {
			ok = buf_add_cp(out, cp) == 0;
		}
	}
	free(nf);
	if (ok)
		rc = 0;
out:
	tok_buf_free(&a);
	tok_buf_free(&b);
	return rc;
}

/* Python's str.isdigit() (Numeric_Type Digit or Decimal) for one code point: decimal digits,
 * and the digits of Numeric_Type=Digit (superscripts, circled and parenthesized digits, and the
 * few scripts whose digits are not decimal). */
static bool py_isdigit(uint32_t cp)
{
	if (utf8proc_category((utf8proc_int32_t)cp) == UTF8PROC_CATEGORY_ND)
		return true;
	static const uint32_t ranges[][2] = {
		{0xB2, 0xB3}, {0xB9, 0xB9}, {0x1369, 0x1371}, {0x19DA, 0x19DA}, {0x2070, 0x2070}, {0x2074, 0x2079},
		{0x2080, 0x2089}, {0x2460, 0x2468}, {0x2474, 0x247C}, {0x2488, 0x2490}, {0x24EA, 0x24EA},
		{0x24F5, 0x24FD}, {0x24FF, 0x24FF}, {0x2776, 0x277E}, {0x2780, 0x2788}, {0x278A, 0x2792},
		{0x10A40, 0x10A43}, {0x10E60, 0x10E68}, {0x11052, 0x1105A}, {0x1F100, 0x1F10A},
	};
	for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
		if (cp >= ranges[i][0] && cp <= ranges[i][1])
			return true;
	return false;
}

static int encode_pieces(const struct spm_model *m, const char *s, size_t len, struct spm_pieces *p, struct err *e)
{
	char msg[256] = "";
	if (spm_model_encode(m, s, len, p, msg, sizeof msg) < 0)
		return err_set(e, "%s", msg[0] ? msg : "SentencePiece failed");
	return 0;
}

static int push_piece(const struct tokenizer *tok, const char *p, size_t len, struct tok_ids *out, struct err *e)
{
	int32_t id = spm_piece_id(tok, p, len);
	if (id < 0)
		id = tok->unk_id;
	if (tok_ids_push(out, id, false) < 0)
		return err_set(e, "out of memory");
	return 0;
}

/* Where the last code point of P[0..LEN) (LEN > 0) starts, and the code point. */
static size_t last_cp(const char *p, size_t len, uint32_t *cp)
{
	size_t b = len - 1;
	while (b > 0 && ((unsigned char)p[b] & 0xC0) == 0x80)
		b--;
	utf8_decode(p + b, cp);
	return b;
}

/* AlbertTokenizer._tokenize after preprocess_text: a piece of two or more characters ending in a
 * digit and "," is encoded again without its "," and its word-start marks, keeps a leading mark
 * only where the piece had one, and is followed by ",". */
static int albert_piece(const struct tokenizer *tok, const char *p, size_t len, struct tok_ids *out, struct err *e)
{
	uint32_t cp_last, cp_prev;
	size_t at = len ? last_cp(p, len, &cp_last) : 0;
	if (len == 0 || at == 0 || cp_last != ',')
		return push_piece(tok, p, len, out, e);
	last_cp(p, at, &cp_prev);
	if (!py_isdigit(cp_prev))
		return push_piece(tok, p, len, out, e);
	struct tok_buf sub = {0};
	if (tok_buf_add(&sub, "", 0) < 0)
		return err_set(e, "out of memory");
	for (size_t i = 0; i < at;) {
		if (at - i >= 3 && memcmp(p + i, SPIECE_UNDERLINE, 3) == 0) {
			i += 3;
			continue;
		}
		if (tok_buf_add(&sub, p + i, 1) < 0) {
			tok_buf_free(&sub);
			return err_set(e, "out of memory");
		}
		i++;
	}
	struct spm_pieces cur;
	int rc = encode_pieces(tok->spm, sub.s, sub.n, &cur, e);
	tok_buf_free(&sub);
	if (rc < 0)
		return -1;
	bool starts_mark = len >= 3 && memcmp(p, SPIECE_UNDERLINE, 3) == 0;
	for (int k = 0; rc == 0 && k < cur.n; k++) {
		const char *q = cur.text + cur.off[k];
		size_t ql = cur.len[k];
		if (k == 0 && !starts_mark && ql >= 3 && memcmp(q, SPIECE_UNDERLINE, 3) == 0) {
			if (ql == 3)
				continue;
			q += 3, ql -= 3;
		}
		rc = push_piece(tok, q, ql, out, e);
	}
	spm_pieces_free(&cur);
	return rc < 0 ? -1 : push_piece(tok, ",", 1, out, e);
}

static int encode_text_with(const struct tokenizer *tok, const struct spm_model *m, const char *s, size_t len,
			    struct tok_ids *out, struct err *e)
{
	if (len == 0)
		return 0;
	struct spm_pieces p;
	if (encode_pieces(m, s, len, &p, e) < 0)
		return -1;
	int rc = 0;
	for (int i = 0; rc == 0 && i < p.n; i++)
		rc = tok->kind == TOKENIZER_ALBERT ? albert_piece(tok, p.text + p.off[i], p.len[i], out, e)
						   : push_piece(tok, p.text + p.off[i], p.len[i], out, e);
	spm_pieces_free(&p);
	return rc;
}

static int encode_text(const struct tokenizer *tok, const char *s, size_t len, struct tok_ids *out, struct err *e)
{
	return encode_text_with(tok, tok->spm, s, len, out, e);
}

/* MarianTokenizer's language_code_re = ">>.+<<" (greedy, and '.' stops at a newline): a match at
 * byte I runs to the end of the last "<<" of I's line, which must leave one byte between. *LINE_END
 * and *CLOSE cache the line around I (its end, and the end of its last "<<" or 0); both start at 0.
 * The length of the match, or 0. */
static size_t marian_code_at(const char *s, size_t len, size_t i, size_t *line_end, size_t *close)
{
	if (i >= *line_end) {
		size_t end = i;
		while (end < len && s[end] != '\n')
			end++;
		*close = 0;
		for (size_t k = end; k >= i + 2 && !*close; k--)
			if (s[k - 1] == '<' && s[k - 2] == '<')
				*close = k;
		*line_end = end < len ? end + 1 : len + 1;
	}
	if (len - i < 5 || s[i] != '>' || s[i + 1] != '>' || *close < i + 5)
		return 0;
	return *close - i;
}

/* MarianTokenizer._tokenize: a code matching at the start is kept as a token, every match is cut
 * out (re.sub), the rest goes through the side's model. */
static int marian_encode(const struct tokenizer *tok, const char *s, size_t len, bool target, struct tok_ids *out,
			 struct err *e)
{
	size_t line_end = 0, close = 0;
	size_t first = marian_code_at(s, len, 0, &line_end, &close);
	if (first && push_piece(tok, s, first, out, e) < 0)
		return -1;
	struct tok_buf rest = {0};
	if (tok_buf_add(&rest, "", 0) < 0)
		return err_set(e, "out of memory");
	for (size_t i = 0; i < len;) {
		size_t m = marian_code_at(s, len, i, &line_end, &close);
		if (m == 0 && tok_buf_add(&rest, s + i, 1) < 0) {
			tok_buf_free(&rest);
			return err_set(e, "out of memory");
		}
		i += m ? m : 1;
	}
	int rc = encode_text_with(tok, target ? tok->spm_target : tok->spm, rest.s, rest.n, out, e);
	tok_buf_free(&rest);
	return rc;
}

int spm_encode(const struct tokenizer *tok, const char *s, size_t len, bool target, struct tok_ids *out,
	       struct err *e)
{
	if (tok->kind == TOKENIZER_MARIAN)
		return marian_encode(tok, s, len, target, out, e);
	if (tok->kind == TOKENIZER_ALBERT) {
		struct tok_buf t = {0};
		if (albert_preprocess(tok, s, len, &t) < 0) {
			tok_buf_free(&t);
			return err_set(e, "out of memory");
		}
		int rc = encode_text(tok, t.s, t.n, out, e);
		tok_buf_free(&t);
		return rc;
	}
	if (tok->kind == TOKENIZER_DEBERTA_V2 && tok->split_by_punct) {
		/* SPMTokenizer._run_split_on_punc: every punctuation character is a word of its own */
		size_t start = 0;
		for (size_t i = 0; i < len;) {
			uint32_t cp;
			int w = utf8_decode(s + i, &cp);
			if (utf8_is_bert_punct(cp)) {
				if (encode_text(tok, s + start, i - start, out, e) < 0 ||
				    encode_text(tok, s + i, (size_t)w, out, e) < 0)
					return -1;
				start = i + (size_t)w;
			}
			i += (size_t)w;
		}
		return encode_text(tok, s + start, len - start, out, e);
	}
	return encode_text(tok, s, len, out, e);
}
