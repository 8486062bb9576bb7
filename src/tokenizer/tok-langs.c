/* tok-langs.c -- the language codes of the translation tokenizers, as transformers 4.31 lists them
 * (FAIRSEQ_LANGUAGE_CODES of tokenization_mbart.py, tokenization_mbart50.py, tokenization_nllb.py and
 * tokenization_m2m_100.py). Their order gives their ids: code i is the SentencePiece model's size + 1
 * (fairseq's offset) + i, and <mask> comes right after the last code; M2M100's is vocab.json's size + i.
 * The ids come from this order, never from a stored number. */
#include "tokenizer/tok-internal.h"

#include <stdio.h>
#include <string.h>

/* [25] MBartTokenizer (mbart-large-cc25) */
static const char *const mbart_codes[] = {
	"ar_AR", "cs_CZ", "de_DE", "en_XX", "es_XX", "et_EE", "fi_FI", "fr_XX", "gu_IN", "hi_IN", "it_IT", "ja_XX",
	"kk_KZ", "ko_KR", "lt_LT", "lv_LV", "my_MM", "ne_NP", "nl_XX", "ro_RO", "ru_RU", "si_LK", "tr_TR", "vi_VN",
	"zh_CN"
};

/* [52] MBart50Tokenizer (mbart-large-50): mBART's 25, then 27 more */
static const char *const mbart50_codes[] = {
	"ar_AR", "cs_CZ", "de_DE", "en_XX", "es_XX", "et_EE", "fi_FI", "fr_XX", "gu_IN", "hi_IN", "it_IT", "ja_XX",
	"kk_KZ", "ko_KR", "lt_LT", "lv_LV", "my_MM", "ne_NP", "nl_XX", "ro_RO", "ru_RU", "si_LK", "tr_TR", "vi_VN",
	"zh_CN", "af_ZA", "az_AZ", "bn_IN", "fa_IR", "he_IL", "hr_HR", "id_ID", "ka_GE", "km_KH", "mk_MK", "ml_IN",
	"mn_MN", "mr_IN", "pl_PL", "ps_AF", "pt_XX", "sv_SE", "sw_KE", "ta_IN", "te_IN", "th_TH", "tl_XX", "uk_UA",
	"ur_PK", "xh_ZA", "gl_ES", "sl_SI"
};

/* [202] NllbTokenizer: the FLORES-200 codes */
static const char *const nllb_codes[] = {
	"ace_Arab", "ace_Latn", "acm_Arab", "acq_Arab", "aeb_Arab", "afr_Latn", "ajp_Arab", "aka_Latn", "amh_Ethi",
	"apc_Arab", "arb_Arab", "ars_Arab", "ary_Arab", "arz_Arab", "asm_Beng", "ast_Latn", "awa_Deva", "ayr_Latn",
	"azb_Arab", "azj_Latn", "bak_Cyrl", "bam_Latn", "ban_Latn", "bel_Cyrl", "bem_Latn", "ben_Beng", "bho_Deva",
	"bjn_Arab", "bjn_Latn", "bod_Tibt", "bos_Latn", "bug_Latn", "bul_Cyrl", "cat_Latn", "ceb_Latn", "ces_Latn",
	"cjk_Latn", "ckb_Arab", "crh_Latn", "cym_Latn", "dan_Latn", "deu_Latn", "dik_Latn", "dyu_Latn", "dzo_Tibt",
	"ell_Grek", "eng_Latn", "epo_Latn", "est_Latn", "eus_Latn", "ewe_Latn", "fao_Latn", "pes_Arab", "fij_Latn",
	"fin_Latn", "fon_Latn", "fra_Latn", "fur_Latn", "fuv_Latn", "gla_Latn", "gle_Latn", "glg_Latn", "grn_Latn",
	"guj_Gujr", "hat_Latn", "hau_Latn", "heb_Hebr", "hin_Deva", "hne_Deva", "hrv_Latn", "hun_Latn", "hye_Armn",
	"ibo_Latn", "ilo_Latn", "ind_Latn", "isl_Latn", "ita_Latn", "jav_Latn", "jpn_Jpan", "kab_Latn", "kac_Latn",
	"kam_Latn", "kan_Knda", "kas_Arab", "kas_Deva", "kat_Geor", "knc_Arab", "knc_Latn", "kaz_Cyrl", "kbp_Latn",
	"kea_Latn", "khm_Khmr", "kik_Latn", "kin_Latn", "kir_Cyrl", "kmb_Latn", "kon_Latn", "kor_Hang", "kmr_Latn",
	"lao_Laoo", "lvs_Latn", "lij_Latn", "lim_Latn", "lin_Latn", "lit_Latn", "lmo_Latn", "ltg_Latn", "ltz_Latn",
	"lua_Latn", "lug_Latn", "luo_Latn", "lus_Latn", "mag_Deva", "mai_Deva", "mal_Mlym", "mar_Deva", "min_Latn",
	"mkd_Cyrl", "plt_Latn", "mlt_Latn", "mni_Beng", "khk_Cyrl", "mos_Latn", "mri_Latn", "zsm_Latn", "mya_Mymr",
	"nld_Latn", "nno_Latn", "nob_Latn", "npi_Deva", "nso_Latn", "nus_Latn", "nya_Latn", "oci_Latn", "gaz_Latn",
	"ory_Orya", "pag_Latn", "pan_Guru", "pap_Latn", "pol_Latn", "por_Latn", "prs_Arab", "pbt_Arab", "quy_Latn",
	"ron_Latn", "run_Latn", "rus_Cyrl", "sag_Latn", "san_Deva", "sat_Beng", "scn_Latn", "shn_Mymr", "sin_Sinh",
	"slk_Latn", "slv_Latn", "smo_Latn", "sna_Latn", "snd_Arab", "som_Latn", "sot_Latn", "spa_Latn", "als_Latn",
	"srd_Latn", "srp_Cyrl", "ssw_Latn", "sun_Latn", "swe_Latn", "swh_Latn", "szl_Latn", "tam_Taml", "tat_Cyrl",
	"tel_Telu", "tgk_Cyrl", "tgl_Latn", "tha_Thai", "tir_Ethi", "taq_Latn", "taq_Tfng", "tpi_Latn", "tsn_Latn",
	"tso_Latn", "tuk_Latn", "tum_Latn", "tur_Latn", "twi_Latn", "tzm_Tfng", "uig_Arab", "ukr_Cyrl", "umb_Latn",
	"urd_Arab", "uzn_Latn", "vec_Latn", "vie_Latn", "war_Latn", "wol_Latn", "xho_Latn", "ydd_Hebr", "yor_Latn",
	"yue_Hant", "zho_Hans", "zho_Hant", "zul_Latn"
};

/* [100] M2M100Tokenizer, language_codes "m2m100"; its tokens are "__af__" ... */
static const char *const m2m100_codes[] = {
	"af", "am", "ar", "ast", "az", "ba", "be", "bg", "bn", "br", "bs", "ca", "ceb", "cs", "cy", "da", "de",
	"el", "en", "es", "et", "fa", "ff", "fi", "fr", "fy", "ga", "gd", "gl", "gu", "ha", "he", "hi", "hr",
	"ht", "hu", "hy", "id", "ig", "ilo", "is", "it", "ja", "jv", "ka", "kk", "km", "kn", "ko", "lb", "lg",
	"ln", "lo", "lt", "lv", "mg", "mk", "ml", "mn", "mr", "ms", "my", "ne", "nl", "no", "ns", "oc", "or",
	"pa", "pl", "ps", "pt", "ro", "ru", "sd", "si", "sk", "sl", "so", "sq", "sr", "ss", "su", "sv", "sw",
	"ta", "th", "tl", "tn", "tr", "uk", "ur", "uz", "vi", "wo", "xh", "yi", "yo", "zh", "zu"
};

/* [8] ... language_codes "wmt21" */
static const char *const wmt21_codes[] = {"en", "ha", "is", "ja", "cs", "ru", "zh", "de"};

const char *const *tok_lang_codes(const struct tokenizer *tok, int *n)
{
	if (tok->kind == TOKENIZER_M2M100) {
		*n = tok->wmt21 ? (int)(sizeof wmt21_codes / sizeof wmt21_codes[0])
				: (int)(sizeof m2m100_codes / sizeof m2m100_codes[0]);
		return tok->wmt21 ? wmt21_codes : m2m100_codes;
	}
	if (!tok->json && tok->kind == TOKENIZER_MBART && tok->mbart50) {
		*n = (int)(sizeof mbart50_codes / sizeof mbart50_codes[0]);
		return mbart50_codes;
	}
	if (!tok->json && tok->kind == TOKENIZER_MBART) {
		*n = (int)(sizeof mbart_codes / sizeof mbart_codes[0]);
		return mbart_codes;
	}
	if (!tok->json && tok->kind == TOKENIZER_NLLB) {
		*n = (int)(sizeof nllb_codes / sizeof nllb_codes[0]);
		return nllb_codes;
	}
	*n = 0;
	return NULL;
}

int tok_lang_find(const struct tokenizer *tok, const char *code)
{
	int n;
	const char *const *codes = tok_lang_codes(tok, &n);
	char buf[64];
	for (int i = 0; code && i < n; i++)
		if (strcmp(codes[i], code) == 0 || strcmp(tok_lang_token(tok, i, buf, sizeof buf), code) == 0)
			return i;
	return -1;
}

const char *tok_lang_token(const struct tokenizer *tok, int i, char *buf, size_t n)
{
	int nc;
	const char *const *codes = tok_lang_codes(tok, &nc);
	if (tok->kind == TOKENIZER_M2M100)
		snprintf(buf, n, "__%s__", codes[i]); /* M2M100Tokenizer.get_lang_token */
	else
		snprintf(buf, n, "%s", codes[i]);
	return buf;
}
