/* tokenizer.c -- text to token ids as Hugging Face's slow tokenizers do it (see tokenizer.h).
 *
 * This file holds what BERT and GPT-2 share, in the order HF's PreTrainedTokenizer runs it:
 * finding the files, lower-casing everything but special tokens (BERT), cutting special tokens
 * typed in the text out before the model's tokenizer runs, then truncation ('longest_first')
 * and the [CLS] a [SEP] b [SEP] assembly. Configuration and special tokens are tok-config.c;
 * the model-specific parts are tok-wordpiece.c and tok-bpe.c. */
#include "tokenizer/tokenizer.h"
#include "tokenizer/tok-internal.h"
#include "base/utf8.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- loading */

/* Read the model's vocabulary (and merges) from DIR; *VOCAB_PATH names the file used. */
static int load_model_files(struct tokenizer *tok, const char *dir, struct tok_config *cfg, char **vocab_path,
			    struct err *e)
{
	char *vtxt = tok_path_join(dir, "vocab.txt"), *vjson = tok_path_join(dir, "vocab.json");
	char *merges = tok_path_join(dir, "merges.txt"), *tjson = tok_path_join(dir, "tokenizer.json");
	int rc = -1;
	if (!vtxt || !vjson || !merges || !tjson) {
		err_set(e, "out of memory");
		goto out;
	}
	bool use_json = false;
	if (tok_kind_is_spm(tok->kind)) {
		/* XLM-R, ALBERT, DeBERTa-v2: the SentencePiece model (tok-spm.c) */
		char *mp = tok_path_join(dir, spm_file_name(tok->kind));
		if (!mp) {
			err_set(e, "out of memory");
			goto out;
		}
		*vocab_path = mp;
		if (tok_file_exists(mp))
			rc = spm_load(tok, mp, e);
		else
			err_set(e, "%s: missing (the SentencePiece model of this tokenizer)", mp);
	} else if (tok->kind == TOKENIZER_WORDPIECE) {
		if (tok_file_exists(vtxt)) {
			*vocab_path = vtxt, vtxt = NULL;
			rc = wordpiece_load_vocab_txt(tok, *vocab_path, e);
		} else if (tok_file_exists(tjson)) {
			use_json = true;
		} else {
			err_set(e, "%s: no vocab.txt or tokenizer.json (needed for a BERT WordPiece tokenizer)", dir);
		}
	} else {
		bool hv = tok_file_exists(vjson), hm = tok_file_exists(merges);
		if (hv && hm) {
			*vocab_path = vjson, vjson = NULL;
			rc = bpe_load_files(tok, *vocab_path, merges, e);
		} else if (tok_file_exists(tjson)) {
			use_json = true;
		} else if (hm) {
			err_set(e, "%s: missing (merges.txt needs the vocabulary it merges into)", vjson);
		} else if (hv) {
			err_set(e, "%s: missing (vocab.json needs the merges of a BPE tokenizer)", merges);
		} else {
			err_set(e, "%s: no vocab.json + merges.txt or tokenizer.json (needed for a GPT-2 BPE tokenizer)", dir);
		}
	}
	if (use_json) {
		*vocab_path = tjson, tjson = NULL;
		json_t *root = tok_load_json(*vocab_path, 0, e);
		if (!root)
			goto out;
		char *unk = NULL;
		if (tok->kind == TOKENIZER_WORDPIECE)
			rc = wordpiece_load_json(tok, root, *vocab_path, &unk, e);
		else
			rc = bpe_load_json(tok, root, *vocab_path, e);
		if (rc == 0 && unk)
			rc = tok_config_set_unk(cfg, unk, e);
		free(unk);
		if (rc == 0 && tok_config_json_added(tok, cfg, root, e) < 0) {
			err_prefix(e, "%s", *vocab_path);
			rc = -1;
		}
		json_decref(root);
	}
out:
	free(vtxt);
	free(vjson);
	free(merges);
	free(tjson);
	return rc;
}

int tokenizer_load(const char *dir, enum tokenizer_kind kind, struct tokenizer **out, struct err *e)
{
	*out = NULL;
	if (kind != TOKENIZER_WORDPIECE && kind != TOKENIZER_BPE && kind != TOKENIZER_JSON && kind != TOKENIZER_ROBERTA &&
	    !tok_kind_is_spm(kind))
		return err_set(e, "unknown tokenizer kind %d", (int)kind);
	struct stat sb;
	if (stat(dir, &sb) < 0)
		return err_set(e, "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(sb.st_mode))
		return err_set(e, "%s: not a folder", dir);
	bool use_json = false;
	if (kind == TOKENIZER_JSON) {
		/* without a tokenizer.json, the GPT-2 style files (as GPT-NeoX/Pythia folders ship them) */
		char *tj = tok_path_join(dir, "tokenizer.json");
		if (!tj)
			return err_set(e, "out of memory");
		use_json = tok_file_exists(tj);
		free(tj);
		if (!use_json)
			kind = TOKENIZER_BPE;
	} else if (tok_kind_is_spm(kind) && !tok_kind_is_seq2seq(kind)) {
		/* a SentencePiece folder without its .model file: its tokenizer.json, when it has one
		 * (not for the encoder-decoder kinds: their fast files do not say the target's rule) */
		char *mp = tok_path_join(dir, spm_file_name(kind)), *tj = tok_path_join(dir, "tokenizer.json");
		if (!mp || !tj) {
			free(mp);
			free(tj);
			return err_set(e, "out of memory");
		}
		if (!tok_file_exists(mp) && tok_file_exists(tj))
			use_json = true, kind = TOKENIZER_JSON;
		free(mp);
		free(tj);
	}
	struct tokenizer *tok = calloc(1, sizeof *tok);
	if (!tok || tok_vocab_init(&tok->vocab) < 0 || tok_vocab_init(&tok->added) < 0) {
		if (tok) {
			tok_vocab_free(&tok->vocab);
			tok_vocab_free(&tok->added);
		}
		free(tok);
		return err_set(e, "out of memory");
	}
	tok->kind = kind;
	tok->cls_id = tok->sep_id = tok->bos_id = -1;
	tok->eos_id = tok->class_unk_id = tok->lang_base = -1;
	tok->src_lang = tok->tgt_lang = -1;
	tok->extra_ids = 100;                /* T5Tokenizer's default */
	tok->legacy = kind == TOKENIZER_T5; /* T5Tokenizer: legacy=True; NllbTokenizer: legacy_behaviour=False */
	if (use_json) {
		if (tok_json_load(tok, dir, e) < 0) {
			tokenizer_free(tok);
			return -1;
		}
		*out = tok;
		return 0;
	}
	if (kind == TOKENIZER_MBART) {
		/* MBart50Tokenizer reads the same files with more language codes, which move <mask> */
		char cls[64];
		if (tok_config_peek_class(dir, cls, sizeof cls, e) < 0) {
			tokenizer_free(tok);
			return -1;
		}
		tok->mbart50 = strcmp(cls, "MBart50Tokenizer") == 0 || strcmp(cls, "MBart50TokenizerFast") == 0;
	}
	if (kind == TOKENIZER_NLLB) {
		/* M2M100 checkpoints share NLLB's model_type but come with M2M100Tokenizer (another id table) */
		char cls[64];
		if (tok_config_peek_class(dir, cls, sizeof cls, e) < 0) {
			tokenizer_free(tok);
			return -1;
		}
		if (strcmp(cls, "M2M100Tokenizer") == 0)
			tok->kind = kind = TOKENIZER_M2M100;
	}
	/* BertTokenizer's defaults; tokenizer.json and tokenizer_config.json may change them. */
	tok->lower = true;
	tok->strip_accents = -1;
	tok->chinese = true;
	tok->max_chars = 100;
	/* AlbertTokenizer: do_lower_case, remove_space; DebertaV2Tokenizer: no lower-casing */
	if (kind == TOKENIZER_XLMR || kind == TOKENIZER_DEBERTA_V2 || kind == TOKENIZER_ROBERTA || tok_kind_is_seq2seq(kind))
		tok->lower = false;
	tok->remove_space = true;
	char *vocab_path = NULL;
	struct tok_config *cfg = tok_config_new(kind, e);
	int rc = -1;
	if (!cfg || load_model_files(tok, dir, cfg, &vocab_path, e) < 0 || tok_config_read(tok, cfg, dir, e) < 0)
		goto out;
	/* RobertaTokenizer and XLMRobertaTokenizer (and the encoder-decoder classes) have no
	 * do_lower_case, whatever the config says */
	if (kind == TOKENIZER_XLMR || kind == TOKENIZER_ROBERTA || tok_kind_is_seq2seq(kind))
		tok->lower = false;
	if (!tok->prefix && !(tok->prefix = strdup("##"))) {
		err_set(e, "out of memory");
		goto out;
	}
	rc = tok_config_finish(tok, cfg, vocab_path, e);
out:
	tok_config_free(cfg);
	free(vocab_path);
	if (rc < 0) {
		tokenizer_free(tok);
		return -1;
	}
	*out = tok;
	return 0;
}

void tokenizer_free(struct tokenizer *tok)
{
	if (!tok)
		return;
	tok_json_free(tok);
	wordpiece_free(tok);
	bpe_free(tok);
	spm_free(tok);
	for (int i = 0; i < tok->n_specials; i++)
		free(tok->specials[i].text);
	free(tok->specials);
	tok_vocab_free(&tok->vocab);
	tok_vocab_free(&tok->added);
	free(tok);
}

/* ---------------------------------------------------------------- encoding */

/* The special token HF's Trie.split finds at byte I: the longest one starting there, or -1. */
static int special_at(const struct tokenizer *tok, const char *s, size_t len, size_t i)
{
	int best = -1;
	for (int k = 0; k < tok->n_specials; k++) {
		const struct tok_special *sp = &tok->specials[k];
		if (sp->len <= len - i && (unsigned char)s[i] == (unsigned char)sp->text[0] &&
		    memcmp(s + i, sp->text, sp->len) == 0 && (best < 0 || sp->len > tok->specials[best].len))
			best = k;
	}
	return best;
}

/* HF's tokenize() for tokenizers with do_lower_case: re.sub of "(special|special|...)|(.+?)"
 * keeps special tokens and lower-cases every other character on its own (so no final-sigma
 * rule), '\n' excepted because '.' does not match it. The alternation takes the first special
 * token in sorted order that matches, not the longest. */
static char *lower_outside_specials(const struct tokenizer *tok, const char *s, size_t len, size_t *olen)
{
	if (len > (SIZE_MAX - 1) / 3)
		return NULL;
	char *o = malloc(len * 3 + 1); /* lower case is never more than 3 times longer in UTF-8 */
	if (!o)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < len;) {
		int k;
		for (k = 0; k < tok->n_specials; k++)
			if (tok->specials[k].len <= len - i && memcmp(s + i, tok->specials[k].text, tok->specials[k].len) == 0)
				break;
		if (k < tok->n_specials) {
			memcpy(o + n, s + i, tok->specials[k].len);
			n += tok->specials[k].len;
			i += tok->specials[k].len;
			continue;
		}
		uint32_t cp;
		int w = utf8_decode(s + i, &cp);
		if (cp == '\n') {
			o[n++] = '\n';
		} else {
			n += (size_t)utf8_py_lower(cp, o + n);
		}
		i += (size_t)w;
	}
	o[n] = '\0';
	*olen = n;
	return o;
}

/* Python's str.lstrip() / str.rstrip() on a UTF-8 range. */
static void py_strip(const char *s, size_t *start, size_t *end, bool left, bool right)
{
	uint32_t cp;
	while (left && *start < *end) {
		int w = utf8_decode(s + *start, &cp);
		if (!utf8_is_py_space(cp))
			break;
		*start += (size_t)w;
	}
	while (right && *end > *start) {
		size_t b = *end - 1;
		while (b > *start && ((unsigned char)s[b] & 0xC0) == 0x80)
			b--;
		utf8_decode(s + b, &cp);
		if (!utf8_is_py_space(cp))
			break;
		*end = b;
	}
}

struct text_part {
	size_t start, end; /* byte range */
	int special;       /* index into tok->specials, or -1 for text */
};

/* PreTrainedTokenizer.tokenize on one text: split out special tokens, strip around them as
 * their flags say, and run the model's tokenizer on the rest. */
static int encode_one(const struct tokenizer *tok, const char *text, const char *which, bool target,
		      struct tok_ids *out, struct err *e)
{
	size_t len = strlen(text);
	size_t bad = utf8_check(text, len);
	if (bad < len)
		return err_set(e, "invalid UTF-8 at byte %zu%s", bad, which);
	char *buf = NULL;
	const char *s = text;
	uint32_t cp0 = 0;
	if (tok->kind == TOKENIZER_ROBERTA && len > 0)
		utf8_decode(text, &cp0);
	/* GPT2Tokenizer: " " + text; RobertaTokenizer only before a text not starting with a space */
	if ((tok->kind == TOKENIZER_BPE && tok->add_prefix_space) ||
	    (tok->kind == TOKENIZER_ROBERTA && tok->add_prefix_space && len > 0 && !utf8_is_py_space(cp0))) {
		if (!(buf = malloc(len + 2)))
			return err_set(e, "out of memory");
		buf[0] = ' ';
		memcpy(buf + 1, text, len + 1);
		s = buf, len++;
	} else if ((tok->kind == TOKENIZER_WORDPIECE || tok_kind_is_spm(tok->kind)) && tok->lower) {
		if (!(buf = lower_outside_specials(tok, text, len, &len)))
			return err_set(e, "out of memory");
		s = buf;
	}
	struct text_part *parts = NULL;
	int np = 0, cap = 0, rc = -1;
	size_t start = 0;
	for (size_t i = 0; i <= len;) {
		int k = i < len ? special_at(tok, s, len, i) : -1;
		if (k < 0 && i < len) {
			i++;
			continue;
		}
		if (np + 2 > cap) {
			cap = cap ? cap * 2 : 16;
			struct text_part *n = realloc(parts, (size_t)cap * sizeof *n);
			if (!n) {
				err_set(e, "out of memory");
				goto out;
			}
			parts = n;
		}
		if (start < i)
			parts[np++] = (struct text_part){start, i, -1};
		if (k < 0)
			break;
		parts[np++] = (struct text_part){i, i + tok->specials[k].len, k};
		i += tok->specials[k].len;
		start = i;
	}
	for (int p = 0; p < np; p++) {
		if (parts[p].special < 0)
			continue;
		const struct tok_special *sp = &tok->specials[parts[p].special];
		if (sp->rstrip && p + 1 < np && parts[p + 1].special < 0)
			py_strip(s, &parts[p + 1].start, &parts[p + 1].end, true, false);
		if (sp->lstrip && p > 0 && parts[p - 1].special < 0)
			py_strip(s, &parts[p - 1].start, &parts[p - 1].end, false, true);
	}
	for (int p = 0; p < np; p++) {
		if (parts[p].special >= 0) {
			const struct tok_special *sp = &tok->specials[parts[p].special];
			if (tok_ids_push(out, sp->id, sp->special) < 0) {
				err_set(e, "out of memory");
				goto out;
			}
			continue;
		}
		if (parts[p].start == parts[p].end)
			continue;
		const char *ps = s + parts[p].start;
		size_t pl = parts[p].end - parts[p].start;
		int r = tok->kind == TOKENIZER_WORDPIECE ? wordpiece_encode(tok, ps, pl, out, e)
			: tok_kind_is_spm(tok->kind)    ? spm_encode(tok, ps, pl, target, out, e)
							: bpe_encode(tok, ps, pl, out, e);
		if (r < 0)
			goto out;
	}
	rc = 0;
out:
	free(parts);
	free(buf);
	return rc;
}

/* HF's truncate_sequences with 'longest_first', truncating on the right. */
static int truncate_longest_first(struct tok_ids *a, struct tok_ids *b, bool pair, int max_len, int n_special,
				  bool *truncated, struct err *e)
{
	int total = a->n + b->n + n_special;
	*truncated = false;
	if (max_len <= 0 || total <= max_len)
		return 0;
	int remove = total - max_len;
	if (pair) {
		if (max_len < n_special)
			return err_set(e, "max_len %d is too small for a text pair (%d special tokens)", max_len, n_special);
		/* one token at a time from the longer sequence, from the second one on a tie */
		for (int k = 0; k < remove; k++) {
			if (a->n > b->n)
				a->n--;
			else if (b->n > 0)
				b->n--;
		}
	} else {
		/* HF refuses (and returns every token) when nothing of the text would be left */
		if (a->n <= remove)
			return err_set(e, "max_len %d is too small: it leaves no room for the text", max_len);
		a->n -= remove;
	}
	*truncated = true;
	return 0;
}

static int list_alloc(const struct tokenizer *tok, struct token_list *out, const int32_t *ids, int n)
{
	size_t bytes = (size_t)n * sizeof(char *) + 1;
	for (int i = 0; i < n; i++) {
		const char *p = tokenizer_id_to_token(tok, ids[i]);
		bytes += (p ? strlen(p) : 0) + 1;
	}
	out->ids = malloc((size_t)n * sizeof *out->ids + 1);
	out->type_ids = malloc((size_t)n * sizeof *out->type_ids + 1);
	out->special = malloc((size_t)n * sizeof *out->special + 1);
	out->pieces = malloc(bytes); /* the pointers, then the strings they point to: one free() */
	if (!out->ids || !out->type_ids || !out->special || !out->pieces)
		return -1;
	char *str = (char *)(out->pieces + n);
	for (int i = 0; i < n; i++) {
		const char *p = tokenizer_id_to_token(tok, ids[i]);
		size_t l = p ? strlen(p) : 0;
		memcpy(str, p ? p : "", l + 1);
		out->pieces[i] = str;
		str += l + 1;
	}
	return 0;
}

/* The tokenizer.json path: encode each text, truncate, then the post-processor's template. */
static int encode_json(const struct tokenizer *tok, const char *text, const char *text_b, int max_len,
		       struct token_list *out, struct err *e)
{
	struct tok_ids a = {0}, b = {0}, all = {0};
	bool pair = text_b != NULL;
	int32_t *types = NULL;
	int rc = -1;
	for (int k = 0; k <= (pair ? 1 : 0); k++) {
		const char *t = k ? text_b : text;
		size_t len = strlen(t), bad = utf8_check(t, len);
		if (bad < len) {
			err_set(e, "invalid UTF-8 at byte %zu%s", bad, k ? " of the second text" : "");
			goto out;
		}
		if (tok_json_encode_one(tok, t, len, k ? &b : &a, e) < 0)
			goto out;
	}
	if (a.n > (1 << 28) || b.n > (1 << 28)) {
		err_set(e, "text too long");
		goto out;
	}
	int n_special = tok_post_added(tok->json->post, pair);
	int total = a.n + b.n + n_special;
	bool truncated;
	if (truncate_longest_first(&a, &b, pair, max_len, n_special, &truncated, e) < 0)
		goto out;
	if (!(types = malloc(((size_t)a.n + (size_t)b.n + (size_t)n_special + 1) * sizeof *types)) ||
	    tok_post_apply(tok->json->post, &a, &b, pair, &all, types) < 0 || list_alloc(tok, out, all.ids, all.n) < 0) {
		token_list_free(out);
		err_set(e, "out of memory");
		goto out;
	}
	out->n = all.n;
	for (int i = 0; i < all.n; i++) {
		out->ids[i] = all.ids[i];
		out->special[i] = all.special[i];
		out->type_ids[i] = types[i];
	}
	out->truncated = truncated;
	out->n_before_truncation = total;
	rc = 0;
out:
	free(types);
	tok_ids_free(&a);
	tok_ids_free(&b);
	tok_ids_free(&all);
	return rc;
}

/* The class's template around one text of the source (or, with TARGET, of the target):
 * PRE[*NP] before it and SUF[*NS] after. -1 with an error when a language is missing. */
static int seq2seq_template(const struct tokenizer *tok, bool target, int32_t pre[1], int *np, int32_t suf[2],
			    int *ns, struct err *e)
{
	*np = *ns = 0;
	suf[(*ns)++] = tok->eos_id;
	if (tok->kind != TOKENIZER_MBART && tok->kind != TOKENIZER_NLLB && tok->kind != TOKENIZER_M2M100)
		return 0;
	int lang = target ? tok->tgt_lang : tok->src_lang;
	if (lang < 0)
		return err_set(e, "no %s language: the tokenizer's configuration names none (tokenizer_config.json's %s)",
			       target ? "target" : "source", target ? "tgt_lang" : "src_lang");
	/* MBartTokenizer and NllbTokenizer(legacy_behaviour): a </s> lang; NllbTokenizer,
	 * MBart50Tokenizer and M2M100Tokenizer: lang a </s> */
	if ((tok->kind == TOKENIZER_NLLB && !tok->legacy) || tok->mbart50 || tok->kind == TOKENIZER_M2M100)
		pre[(*np)++] = tok->lang_base + lang;
	else
		suf[(*ns)++] = tok->lang_base + lang;
	return 0;
}

/* OUT from the template's ids ALL (OK false: building ALL ran out of memory): token type 1 from index
 * TYPE1_FROM on (ALL->n: none), with the truncation facts. -1 (OUT freed) when out of memory. */
static int list_from_ids(const struct tokenizer *tok, struct token_list *out, const struct tok_ids *all, bool ok,
			 int type1_from, bool truncated, int total, struct err *e)
{
	if (!ok || list_alloc(tok, out, all->ids, all->n) < 0) {
		token_list_free(out);
		return err_set(e, "out of memory");
	}
	out->n = all->n;
	for (int i = 0; i < all->n; i++) {
		out->ids[i] = all->ids[i];
		out->special[i] = all->special[i];
		out->type_ids[i] = i >= type1_from ? 1 : 0;
	}
	out->truncated = truncated;
	out->n_before_truncation = total;
	return 0;
}

/* An encoder-decoder class on one text: its pieces, truncation to MAX_LEN, its template. */
static int encode_seq2seq(const struct tokenizer *tok, const char *text, bool target, int max_len,
			  struct token_list *out, struct err *e)
{
	int32_t pre[1], suf[2];
	int np, ns;
	if (seq2seq_template(tok, target, pre, &np, suf, &ns, e) < 0)
		return -1;
	struct tok_ids a = {0}, b = {0}, all = {0};
	int rc = -1;
	if (encode_one(tok, text, "", target, &a, e) < 0)
		goto out;
	if (a.n > (1 << 28)) {
		err_set(e, "text too long");
		goto out;
	}
	int total = a.n + np + ns;
	bool truncated;
	if (truncate_longest_first(&a, &b, false, max_len, np + ns, &truncated, e) < 0)
		goto out;
	/* T5Tokenizer._add_eos_if_not_present: no second </s> after one typed at the end */
	if (tok->kind == TOKENIZER_T5 && a.n > 0 && a.ids[a.n - 1] == tok->eos_id)
		ns = 0;
	bool ok = true;
	for (int i = 0; ok && i < np; i++)
		ok = tok_ids_push(&all, pre[i], true) == 0;
	for (int i = 0; ok && i < a.n; i++)
		ok = tok_ids_push(&all, a.ids[i], a.special[i]) == 0;
	for (int i = 0; ok && i < ns; i++)
		ok = tok_ids_push(&all, suf[i], true) == 0;
	if (list_from_ids(tok, out, &all, ok, all.n, truncated, total, e) < 0)
		goto out;
	rc = 0;
out:
	tok_ids_free(&a);
	tok_ids_free(&all);
	return rc;
}

int tokenizer_encode_target(const struct tokenizer *tok, const char *text, int max_len, struct token_list *out,
			    struct err *e)
{
	memset(out, 0, sizeof *out);
	if (!tok || !text)
		return err_set(e, "no tokenizer or no text");
	if (!tok->json && tok_kind_is_seq2seq(tok->kind))
		return encode_seq2seq(tok, text, true, max_len, out, e);
	return tokenizer_encode(tok, text, NULL, max_len, out, e);
}

int tokenizer_set_langs(struct tokenizer *tok, const char *src, const char *tgt, struct err *e)
{
	int n;
	if ((src || tgt) && !tok_lang_codes(tok, &n))
		return err_set(e, "this tokenizer has no language codes");
	int s = src ? tok_lang_find(tok, src) : tok->src_lang, t = tgt ? tok_lang_find(tok, tgt) : tok->tgt_lang;
	const char *bad = src && s < 0 ? src : tgt && t < 0 ? tgt : NULL;
	if (bad) {
		const char *const *codes = tok_lang_codes(tok, &n);
		return err_set(e, "unknown language code \"%.40s\" (this tokenizer's %d codes run %s ... %s)", bad, n, codes[0],
			       codes[n - 1]);
	}
	tok->src_lang = s;
	tok->tgt_lang = t;
	return 0;
}

void tokenizer_langs(const struct tokenizer *tok, const char **src, const char **tgt)
{
	int n = 0;
	const char *const *codes = tok_lang_codes(tok, &n);
	*src = codes && tok->src_lang >= 0 ? codes[tok->src_lang] : NULL;
	*tgt = codes && tok->tgt_lang >= 0 ? codes[tok->tgt_lang] : NULL;
}

int tokenizer_encode(const struct tokenizer *tok, const char *text, const char *text_b, int max_len,
		     struct token_list *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	if (!tok || !text)
		return err_set(e, "no tokenizer or no text");
	if (tok->json)
		return encode_json(tok, text, text_b, max_len, out, e);
	if (tok_kind_is_seq2seq(tok->kind)) {
		if (text_b)
			return err_set(e, "this tokenizer takes one text, not a pair (an encoder-decoder model's second "
				       "text is its target)");
		return encode_seq2seq(tok, text, false, max_len, out, e);
	}
	struct tok_ids a = {0}, b = {0}, all = {0};
	bool pair = text_b != NULL;
	int rc = -1;
	if (encode_one(tok, text, "", false, &a, e) < 0 ||
	    (pair && encode_one(tok, text_b, " of the second text", false, &b, e) < 0))
		goto out;
	/* wp: [CLS] a [SEP] (b [SEP]) with types 0 then 1 (BERT, ALBERT, DeBERTa-v2);
	 * rb: <s> a </s> (</s> b </s>), types all 0 (RoBERTa, XLM-R) */
	bool wp = tok->kind == TOKENIZER_WORDPIECE || tok->kind == TOKENIZER_ALBERT || tok->kind == TOKENIZER_DEBERTA_V2;
	bool rb = tok->kind == TOKENIZER_ROBERTA || tok->kind == TOKENIZER_XLMR;
	bool bos = tok->kind == TOKENIZER_BPE && tok->add_bos_token;
	int n_special = wp ? (pair ? 3 : 2) : rb ? (pair ? 4 : 2) : bos ? (pair ? 2 : 1) : 0;
	if (a.n > (1 << 28) || b.n > (1 << 28)) {
		err_set(e, "text too long");
		goto out;
	}
	int total = a.n + b.n + n_special;
	bool truncated;
	if (truncate_longest_first(&a, &b, pair, max_len, n_special, &truncated, e) < 0)
		goto out;
	/* BERT: [CLS] a [SEP] (b [SEP]); GPT-2: a b, or bos a (bos b) with add_bos_token */
	int n_first = 0;
	bool ok = true;
	if (wp || rb || bos)
		ok = tok_ids_push(&all, wp || rb ? tok->cls_id : tok->bos_id, true) == 0;
	for (int i = 0; ok && i < a.n; i++)
		ok = tok_ids_push(&all, a.ids[i], a.special[i]) == 0;
	if (ok && (wp || rb))
		ok = tok_ids_push(&all, tok->sep_id, true) == 0;
	n_first = all.n;
	if (ok && bos && pair)
		ok = tok_ids_push(&all, tok->bos_id, true) == 0;
	if (ok && rb && pair)
		ok = tok_ids_push(&all, tok->sep_id, true) == 0;
	for (int i = 0; ok && i < b.n; i++)
		ok = tok_ids_push(&all, b.ids[i], b.special[i]) == 0;
	if (ok && (wp || rb) && pair)
		ok = tok_ids_push(&all, tok->sep_id, true) == 0;
	/* GPT2Tokenizer, RobertaTokenizer and XLMRobertaTokenizer return no token_type_ids: 0 throughout */
	if (list_from_ids(tok, out, &all, ok, wp ? n_first : all.n, truncated, total, e) < 0)
		goto out;
	rc = 0;
out:
	tok_ids_free(&a);
	tok_ids_free(&b);
	tok_ids_free(&all);
	return rc;
}

void token_list_free(struct token_list *list)
{
	if (!list)
		return;
	free(list->ids);
	free(list->pieces);
	free(list->type_ids);
	free(list->special);
	memset(list, 0, sizeof *list);
}

bool tokenizer_supports_pairs(const struct tokenizer *tok)
{
	if (tok->json)
		return tok_post_has_pair(tok->json->post);
	return tok->kind != TOKENIZER_BPE && tok->kind != TOKENIZER_JSON && !tok_kind_is_seq2seq(tok->kind);
}

enum tokenizer_pieces tokenizer_pieces(const struct tokenizer *tok)
{
	if (tok->json)
		return tok->json->pieces;
	switch (tok->kind) {
	case TOKENIZER_WORDPIECE:
		return TOKENIZER_PIECES_WORDPIECE;
	case TOKENIZER_BPE:
	case TOKENIZER_ROBERTA:
	case TOKENIZER_JSON: /* without a tokenizer.json: GPT-2 style vocab.json + merges.txt */
		return TOKENIZER_PIECES_BYTE_LEVEL;
	case TOKENIZER_XLMR:
	case TOKENIZER_ALBERT:
	case TOKENIZER_DEBERTA_V2:
	case TOKENIZER_T5:
	case TOKENIZER_MBART:
	case TOKENIZER_MARIAN:
	case TOKENIZER_NLLB:
	case TOKENIZER_PEGASUS:
	case TOKENIZER_M2M100:
		return TOKENIZER_PIECES_SENTENCEPIECE;
	}
	return TOKENIZER_PIECES_UNKNOWN;
}
