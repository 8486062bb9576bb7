/* main.c -- the attnscope command: options, model loading and the choice of mode
 * (interactive TUI, --dump json|csv, --print VIEW, corpus mode and `merge` in corpuscli.c). */
#include "config.h"

#include <cblas.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/corpuscli.h"
#include "corpus/corpusrun.h"
#include "cli/dump.h"
#include "trace/headscore.h"
#include "engine/gemm.h"
#include "engine/lmhead.h"
#include "engine/model.h"
#include "engine/ops.h"
#include "tui/print.h"
#include "tui/ui.h"
#include "tui/userconf.h"
#include "views/registry.h"
#include "analysis/words.h"
#include "analysis/valnorm.h"

#define DEFAULT_MODEL "demo-bert"
#define MAX_STDIN_TEXT (16u << 20)
/* For messages and --help; headscore_by_name decides what is valid. */
#define SORT_SCORES "prev, next, self, first, sep, punct, entropy, distance, dup, induction, changed, sink, diagonal, monotonic, eos, max, dla, ablation"

struct options {
	const char *model;
	const char *pair;
	const char *target; /* --target: an encoder-decoder's decoder text, NULL = none */
	const char *compare_target; /* --compare-target: a second target for the same text, NULL = none */
	const char *src_lang, *tgt_lang; /* --src-lang, --tgt-lang: mBART/NLLB language codes, NULL = the folder's */
	int32_t *ids, *target_ids; /* --ids, --target-ids: token ids instead of TEXT and --target (owned) */
	int n_ids, n_target_ids;
	int dump_format; /* -1 = no dump */
	int layer, head;
	int threads;     /* 0 = OpenBLAS default (all cores) */
	int top_k;       /* --top-k: predictions per position in --dump json (0 = none) */
	bool lens;       /* --lens: the logit lens in --dump json */
	const char *ablate;     /* --ablate L.H[,L.H...], NULL = none */
	const char *ablate_mode; /* --ablate-mode zero|mean, NULL = zero */
	bool ablation_effect;   /* --ablation-effect */
	const char *print_view; /* --print VIEW, NULL = none */
	bool format_given;      /* --format (only with --print) */
	struct ui_options ui;   /* theme, colour, width, initial selection */
	char *text;      /* owned */
	struct corpuscli_opts corpus; /* --corpus, --load, --save, --shard, --keep-going */
};

static void usage(FILE *out)
{
	char views[256], agg_views[128]; /* from the registry: every view, those that print an aggregate */
	registry_names(views, sizeof views, 0, ", ", ", ");
	registry_names(agg_views, sizeof agg_views, VIEW_AGGREGATE, "|", "|");
	fprintf(out,
		"Usage: attnscope [OPTION]... [--] [TEXT]...\n"
		"  or:  attnscope [OPTION]... --corpus=FILE | --load=FILE\n"
		"  or:  attnscope merge [-o OUT] AGGREGATE...\n"
		"Explore the attention of a transformer (BERT, GPT-2) on TEXT, or aggregate it over a corpus.\n"
		"TEXT words are joined with spaces; TEXT '-' reads standard input.\n"
		"\n"
		"  -m, --model=MODEL      model folder, or a name in the Hugging Face cache or\n"
		"                         attnscope's model directories (default: " DEFAULT_MODEL ")\n"
		"      --pair=TEXT_B      second sentence (BERT: [CLS] A [SEP] B [SEP])\n"
		"      --target=TEXT      encoder-decoder models (T5, BART): the decoder's text,\n"
		"                         teacher-forced (its ids shifted right behind the decoder\n"
		"                         start token); --dump json adds \"decoder\"\n"
		"      --ids=N[,N...]     --dump/--print: run on these token ids instead of TEXT\n"
		"      --target-ids=N[,N...]  with --ids: the target's ids (the decoder's labels)\n"
		"      --src-lang=CODE, --tgt-lang=CODE  mBART, NLLB, M2M100: the text's and the target's\n"
		"                         language (en_XX, deu_Latn; default: tokenizer_config.json's)\n"
		"      --stack=STACK      encoder-decoder models: the attention --print, --dump csv\n"
		"                         and the explorer show: encoder (default), decoder (its\n"
		"                         causal self-attention), cross (grid, heatmap, heads,\n"
		"                         headview: target rows, source columns) or all (the\n"
		"                         grid: the three as sections)\n"
		"      --dump=FORMAT      print the trace as json or csv instead of starting the TUI\n"
		"      --print=VIEW       draw VIEW to standard output and exit; VIEW is one of\n"
		"                         %s\n"
		"      --layer=L          select layer L (0-based); restricts --dump\n"
		"      --head=H           select head H (0-based); restricts --dump\n"
		"      --top-k=N          --dump json: the output head's N best predictions per\n"
		"                         position (default 10; 0 leaves them out)\n"
		"      --lens             --dump json: the logit lens, each layer's top 5 per\n"
		"                         position (causal LMs with an output head)\n"
		"      --ablate=L.H[,L.H...]  --dump/--print the model run with these heads ablated\n"
		"                         (layer.head from 0): every number is the ablated run's\n"
		"      --ablate-mode=MODE zero (the head's output removed, default) or mean (replaced\n"
		"                         by its mean over the text's positions)\n"
		"      --ablation-effect  --dump json: each head ablated alone, the mean KL(clean ||\n"
		"                         ablated) of the predictions over the positions; --print\n"
		"                         heads: the ablation column, the change of mean surprisal\n"
		"      --token=N[,M...]   select token N (0-based): highlighted in every view;\n"
		"                         several are marked and their attention combined\n"
		"      --width=W          width of --print output (default: terminal or 80)\n"
		"      --format=FORMAT    --print output: text (default); svg, a picture with the\n"
		"                         theme's exact colours and the text as text; sixel or kitty,\n"
		"                         text with the heatmap as an image for terminals that draw them\n"
		"      --pixels=MODE      explorer: pixel heatmaps off, auto (ask the terminal), sixel\n"
		"                         or kitty (default: the config file's, else off)\n"
		"      --scale=SCALE      heatmap colour scale: linear, log, rank (default: linear)\n"
		"      --mean=WHAT        heatmap of one head (none), the mean of the layer's heads\n"
		"                         (layer) or of every head (all)\n"
		"      --hide-special     hide special tokens, renormalising the rows\n"
		"      --compare=TEXT_B   run the model on TEXT_B too and show what changed\n"
		"                         (an encoder-decoder's with the same --target)\n"
		"      --compare-target=TARGET_B  encoder-decoder models: run TEXT with TARGET_B\n"
		"                         too and show what changed in the decoder (--dump\n"
		"                         json, or --stack decoder|cross)\n"
		"      --diff-scale=S     colours of B - A: largest (the ramp ends at the largest\n"
		"                         change in view; default) or fixed (at -1 and +1)\n"
		"      --words            merge pieces into words (attention to a word summed,\n"
		"                         from a word averaged); --token counts words\n"
		"      --before-rotary    Q/K views: queries and keys before rotary (default: after)\n"
		"      --weights=W        attention (α, default) or norm: ‖α·f(x)‖, the size of what\n"
		"                         each head moves (Kobayashi et al. 2020); --dump writes it raw\n"
		"      --numbers          write the weights in the heatmap cells\n"
		"      --sort=SCORE       order of the head finder (--print heads): one of\n"
		"                         " SORT_SCORES "\n"
		"      --color=WHEN       colour: auto, always, never (default: auto)\n"
		"      --theme=THEME      colour theme: a name in the themes folder or a YAML file\n"
		"      --config=FILE      configuration file (default:\n"
		"                         $XDG_CONFIG_HOME/attnscope/config.yaml)\n"
		"      --threads=N        use N threads for the forward pass (default: all cores)\n"
		"\n"
		"Corpus mode (with --print %s, --dump json|csv or --save):\n"
		"      --corpus=FILE      run the model over every line of FILE (text, or JSON lines\n"
		"                         with \"text\" and \"text_b\") and aggregate per head\n"
		"      --shard=K/N        only the lines K, K+N, K+2N, ... (1-based K)\n"
		"      --keep-going       report bad lines and go on instead of stopping\n"
		"      --save=FILE        write the aggregate to FILE\n"
		"      --load=FILE        read a saved aggregate instead of running a model\n"
		"      --pca-head=L.H     the head whose queries and keys the joint PCA's token\n"
		"                         sample keeps (default: --layer and --head, else 0.0)\n"
		"      --batch=N          texts run through the model together (default 32;\n"
		"                         1 makes shards merge to one run bit for bit)\n"
		"  -h, --help             display this help and exit\n"
		"  -V, --version          output version information and exit\n"
		"      --verbose          with --version: the GEMM library of each product shape,\n"
		"                         both libraries' measured rates and their cache file\n"
		"\n"
		"Exit status: 0 on success, 1 on a runtime error (model, text, output), 2 on bad usage.\n"
		"See attnscope(1) for the key bindings and examples.\n"
		"Report bugs to: %s\n",
		views, agg_views, PACKAGE_BUGREPORT);
}

static int parse_int(const char *opt, const char *s, int lo, int hi, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "attnscope: %s: '%s' is not an integer in %d..%d\n", opt, s, lo, hi);
		return -1;
	}
	*out = (int)v;
	return 0;
}

/* --ids and --target-ids: a comma-separated list of token ids into *OUT (malloc'd, *N of them). */
static int parse_ids(const char *opt, const char *s, int32_t **out, int *n)
{
	size_t count = 1;
	for (const char *p = s; *p; p++)
		count += *p == ',';
	char *buf = strdup(s);
	free(*out);
	*out = malloc(count * sizeof **out);
	*n = 0;
	if (!buf || !*out) {
		free(buf);
		fprintf(stderr, "attnscope: out of memory\n");
		return -1;
	}
	for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int v;
		if (parse_int(opt, tok, 0, INT32_MAX, &v) < 0) {
			free(buf);
			return -1;
		}
		(*out)[(*n)++] = v;
	}
	free(buf);
	if (*n == 0) {
		fprintf(stderr, "attnscope: %s: no ids in '%s'\n", opt, s);
		return -1;
	}
	return 0;
}

/* --token N or N,M,...: select the first; with several, mark them all (their attention combined). */
static int parse_tokens(const char *s, struct ui_options *ui)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", s);
	int n = 0;
	for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == (int)(sizeof ui->marks / sizeof *ui->marks)) {
			fprintf(stderr, "attnscope: --token: at most %d tokens\n", n);
			return -1;
		}
		if (parse_int("--token", tok, 0, 1000000, &ui->marks[n]) < 0)
			return -1;
		n++;
	}
	if (n == 0)
		return parse_int("--token", s, 0, 1000000, &ui->token);
	ui->token = ui->marks[0];
	ui->n_marks = n > 1 ? n : 0;
	return 0;
}

/* Match S against CHOICES; a usage error names the option and the choices. */
static int parse_choice(const char *opt, const char *s, const char *const *choices, int n, int *out)
{
	for (int i = 0; i < n; i++) {
		if (strcmp(s, choices[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	fprintf(stderr, "attnscope: %s: '%s' is not one of", opt, s);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "%s %s", i ? "," : "", choices[i]);
	fputc('\n', stderr);
	return -1;
}

/* Read all of standard input (at most MAX_STDIN_TEXT bytes), dropping one trailing newline. */
static char *read_stdin(void)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (len + 1 >= cap) {
			if (cap >= MAX_STDIN_TEXT) {
				fprintf(stderr, "attnscope: standard input exceeds %u bytes\n", MAX_STDIN_TEXT);
				free(buf);
				return NULL;
			}
			char *grown = realloc(buf, cap * 2);
			if (!grown)
				break;
			buf = grown;
			cap *= 2;
		}
		size_t got = fread(buf + len, 1, cap - len - 1, stdin);
		len += got;
		if (got == 0)
			break;
	}
	if (!buf) {
		fprintf(stderr, "attnscope: out of memory reading standard input\n");
		return NULL;
	}
	/* Text is a C string from here on: a NUL would silently cut it short. HF's BERT drops NUL,
	 * GPT-2 makes a token of it; neither can be done faithfully, so say so. */
	const char *nul = memchr(buf, 0, len);
	if (nul) {
		fprintf(stderr, "attnscope: standard input holds a NUL byte at byte %zu; text cannot contain NUL\n",
			(size_t)(nul - buf));
		free(buf);
		return NULL;
	}
	if (len && buf[len - 1] == '\n')
		len--;
	if (len && buf[len - 1] == '\r')
		len--;
	buf[len] = 0;
	return buf;
}

/* Join ARGV[0..argc) with spaces; "-" alone reads standard input. */
static char *join_text(int argc, char **argv)
{
	if (argc == 1 && strcmp(argv[0], "-") == 0)
		return read_stdin();
	size_t len = 1;
	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	char *text = malloc(len), *p = text;
	if (!text)
		return NULL;
	*p = 0;
	for (int i = 0; i < argc; i++)
		p += sprintf(p, i ? " %s" : "%s", argv[i]);
	return text;
}

/* Without -m: $ATTNSCOPE_MODEL, else the configuration file's model, else the bundled default. */
static int resolve_default_model(struct options *o)
{
	static struct userconf conf; /* holds the model string for the life of the program */
	if (o->model)
		return 0;
	const char *env = getenv("ATTNSCOPE_MODEL");
	if (env && *env) {
		o->model = env;
		return 0;
	}
	struct err e = {{0}};
	if (userconf_load(o->ui.config, &conf, &e) < 0) {
		fprintf(stderr, "attnscope: %s\n", e.msg);
		return -1;
	}
	o->model = conf.model[0] ? conf.model : DEFAULT_MODEL;
	return 0;
}

/* --version --verbose: the products' libraries (measuring them if no cache file holds them), and
 * the vector math of the activations and the softmax (which follows from them). */
static void print_gemm(void)
{
	size_t len = gemm_describe(NULL, 0);
	char *buf = malloc(len + 1);
	if (buf) {
		gemm_describe(buf, len + 1);
		fputs(buf, stdout);
	}
	free(buf);
	printf("vector math of the activations and the softmax: %s\n", ops_vector_math());
}

/* Parse the command line into O. Returns 0 to go on, 1 to exit 0 (help/version), 2 on usage error,
 * 3 on a runtime error (a bad configuration file). */
static int parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_PAIR = 256, OPT_DUMP, OPT_LAYER, OPT_HEAD, OPT_THREADS, OPT_PRINT, OPT_WIDTH, OPT_COLOR, OPT_THEME,
	       OPT_WEIGHTS,
	       OPT_CONFIG, OPT_TOKEN, OPT_SCALE, OPT_MEAN, OPT_HIDE_SPECIAL, OPT_NUMBERS, OPT_SORT,
	       OPT_BEFORE_ROTARY, OPT_CORPUS, OPT_SHARD, OPT_KEEP_GOING, OPT_SAVE, OPT_LOAD, OPT_WORDS, OPT_COMPARE,
	       OPT_PCA_HEAD, OPT_BATCH, OPT_DIFF_SCALE, OPT_FORMAT, OPT_PIXELS,
	       OPT_TOP_K, OPT_LENS, OPT_ABLATE, OPT_ABLATE_MODE, OPT_ABLATION_EFFECT, OPT_TARGET, OPT_IDS,
	       OPT_TARGET_IDS, OPT_SRC_LANG, OPT_TGT_LANG, OPT_STACK, OPT_COMPARE_TARGET, OPT_VERBOSE };
	static const struct option longopts[] = {
		{"model", required_argument, NULL, 'm'},     {"pair", required_argument, NULL, OPT_PAIR},
		{"dump", required_argument, NULL, OPT_DUMP},   {"layer", required_argument, NULL, OPT_LAYER},
		{"head", required_argument, NULL, OPT_HEAD},   {"threads", required_argument, NULL, OPT_THREADS},
		{"print", required_argument, NULL, OPT_PRINT}, {"width", required_argument, NULL, OPT_WIDTH},
		{"color", required_argument, NULL, OPT_COLOR}, {"colour", required_argument, NULL, OPT_COLOR},
		{"theme", required_argument, NULL, OPT_THEME}, {"config", required_argument, NULL, OPT_CONFIG},
		{"token", required_argument, NULL, OPT_TOKEN}, {"scale", required_argument, NULL, OPT_SCALE},
		{"mean", required_argument, NULL, OPT_MEAN},   {"hide-special", no_argument, NULL, OPT_HIDE_SPECIAL},
		{"numbers", no_argument, NULL, OPT_NUMBERS},   {"sort", required_argument, NULL, OPT_SORT},
		{"weights", required_argument, NULL, OPT_WEIGHTS},
		{"before-rotary", no_argument, NULL, OPT_BEFORE_ROTARY},
		{"corpus", required_argument, NULL, OPT_CORPUS}, {"shard", required_argument, NULL, OPT_SHARD},
		{"keep-going", no_argument, NULL, OPT_KEEP_GOING}, {"save", required_argument, NULL, OPT_SAVE},
		{"load", required_argument, NULL, OPT_LOAD},     {"pca-head", required_argument, NULL, OPT_PCA_HEAD},
		{"batch", required_argument, NULL, OPT_BATCH},
		{"before-rotary", no_argument, NULL, OPT_BEFORE_ROTARY}, {"words", no_argument, NULL, OPT_WORDS},
		{"compare", required_argument, NULL, OPT_COMPARE}, {"diff-scale", required_argument, NULL, OPT_DIFF_SCALE},
		{"format", required_argument, NULL, OPT_FORMAT},
		{"pixels", required_argument, NULL, OPT_PIXELS},
		{"top-k", required_argument, NULL, OPT_TOP_K},
		{"lens", no_argument, NULL, OPT_LENS},
		{"ablate", required_argument, NULL, OPT_ABLATE}, {"ablate-mode", required_argument, NULL, OPT_ABLATE_MODE},
		{"ablation-effect", no_argument, NULL, OPT_ABLATION_EFFECT},
		{"target", required_argument, NULL, OPT_TARGET},
		{"ids", required_argument, NULL, OPT_IDS}, {"target-ids", required_argument, NULL, OPT_TARGET_IDS},
		{"src-lang", required_argument, NULL, OPT_SRC_LANG}, {"tgt-lang", required_argument, NULL, OPT_TGT_LANG},
		{"stack", required_argument, NULL, OPT_STACK},
		{"compare-target", required_argument, NULL, OPT_COMPARE_TARGET},
		{"verbose", no_argument, NULL, OPT_VERBOSE},
		{"help", no_argument, NULL, 'h'},            {"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	o->model = NULL;
	o->dump_format = -1;
	o->layer = o->head = -1;
	o->top_k = 10;
	o->corpus.shard_k = o->corpus.shard_n = 1;
	print_options_init(&o->ui);
	int c, choice;
	bool verbose = false;
	while ((c = getopt_long(argc, argv, "+m:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			o->model = optarg;
			break;
		case OPT_PAIR:
			o->pair = optarg;
			break;
		case OPT_DUMP:
			o->dump_format = dump_parse_format(optarg);
			if (o->dump_format < 0) {
				fprintf(stderr, "attnscope: --dump: unknown format '%s' (json, csv)\n", optarg);
				return 2;
			}
			break;
		case OPT_LAYER:
			if (parse_int("--layer", optarg, 0, 100000, &o->layer) < 0)
				return 2;
			break;
		case OPT_HEAD:
			if (parse_int("--head", optarg, 0, 100000, &o->head) < 0)
				return 2;
			break;
		case OPT_TOP_K:
			if (parse_int("--top-k", optarg, 0, 1000000, &o->top_k) < 0)
				return 2;
			break;
		case OPT_LENS:
			o->lens = true;
			break;
		case OPT_ABLATE:
			o->ablate = optarg;
			break;
		case OPT_ABLATE_MODE: {
			enum ablate_mode mode;
			if (ablation_parse_mode(optarg, &mode) < 0) {
				fprintf(stderr, "attnscope: --ablate-mode: unknown mode '%s' (zero, mean)\n", optarg);
				return 2;
			}
			o->ablate_mode = optarg;
			break;
		}
		case OPT_ABLATION_EFFECT:
			o->ablation_effect = true;
			break;
		case OPT_THREADS:
			if (parse_int("--threads", optarg, 1, 1024, &o->threads) < 0)
				return 2;
			break;
		case OPT_PRINT:
			if (!registry_find(optarg)) { /* the registry has every view but the help screen */
				char views[256];
				fprintf(stderr, "attnscope: --print: unknown view '%s' (%s)\n", optarg,
					registry_names(views, sizeof views, 0, ", ", ", "));
				return 2;
			}
			o->print_view = optarg;
			break;
		case OPT_WIDTH:
			if (parse_int("--width", optarg, 20, 1000, &o->ui.width) < 0)
				return 2;
			break;
		case OPT_COLOR:
			if (strcmp(optarg, "auto") == 0)
				o->ui.color = UI_COLOR_AUTO;
			else if (strcmp(optarg, "always") == 0)
				o->ui.color = UI_COLOR_ALWAYS;
			else if (strcmp(optarg, "never") == 0)
				o->ui.color = UI_COLOR_NEVER;
			else {
				fprintf(stderr, "attnscope: --color: '%s' is not auto, always or never\n", optarg);
				return 2;
			}
			break;
		case OPT_THEME:
			o->ui.theme = optarg;
			break;
		case OPT_CONFIG:
			o->ui.config = optarg;
			break;
		case OPT_TOKEN:
			if (parse_tokens(optarg, &o->ui) < 0)
				return 2;
			break;
		case OPT_SCALE: {
			static const char *const scales[] = {"linear", "log", "rank"};
			if (parse_choice("--scale", optarg, scales, 3, &choice) < 0)
				return 2;
			o->ui.scale = choice == 0 ? HEAT_LINEAR : choice == 1 ? HEAT_LOG : HEAT_RANK;
			break;
		}
		case OPT_WEIGHTS: {
			static const char *const modes[] = {"attention", "norm"};
			if (parse_choice("--weights", optarg, modes, 2, &choice) < 0)
				return 2;
			o->ui.weights_norm = choice == 1;
			break;
		}
		case OPT_FORMAT: {
			static const char *const formats[] = {"text", "svg", "sixel", "kitty"};
			if (parse_choice("--format", optarg, formats, 4, &choice) < 0)
				return 2;
			o->ui.svg = choice == 1;
			o->ui.print_pixels = choice == 2 ? PIXELS_SIXEL : choice == 3 ? PIXELS_KITTY : PIXELS_NONE;
			o->format_given = true;
			break;
		}
		case OPT_PIXELS: {
			static const char *const modes[] = {"off", "auto", "sixel", "kitty"};
			if (parse_choice("--pixels", optarg, modes, 4, &choice) < 0)
				return 2;
			o->ui.pixels = userconf_pixels_parse(modes[choice]);
			break;
		}
		case OPT_DIFF_SCALE: {
			static const char *const ranges[] = {"largest", "fixed"};
			if (parse_choice("--diff-scale", optarg, ranges, 2, &choice) < 0)
				return 2;
			o->ui.diff_fixed = choice == 1;
			break;
		}
		case OPT_MEAN: {
			static const char *const means[] = {"none", "layer", "all"};
			if (parse_choice("--mean", optarg, means, 3, &choice) < 0)
				return 2;
			o->ui.agg = choice == 0 ? HEAT_HEAD : choice == 1 ? HEAT_LAYER_MEAN : HEAT_ALL_MEAN;
			break;
		}
		case OPT_SORT:
			if (headscore_by_name(optarg) < 0 && strcmp(optarg, "dla") != 0 && strcmp(optarg, "ablation") != 0) {
				/* dla, ablation: the head finder's own columns */
				fprintf(stderr, "attnscope: --sort: unknown score '%s' (%s)\n", optarg, SORT_SCORES);
				return 2;
			}
			o->ui.sort = optarg;
			break;
		case OPT_HIDE_SPECIAL:
			o->ui.hide_special = true;
			break;
		case OPT_BEFORE_ROTARY:
			o->ui.before_rotary = true;
			break;
		case OPT_NUMBERS:
			o->ui.numbers = true;
			break;
		case OPT_CORPUS:
			o->corpus.corpus = optarg;
			break;
		case OPT_SHARD:
			if (corpuscli_parse_shard(optarg, &o->corpus.shard_k, &o->corpus.shard_n) < 0) {
				fprintf(stderr, "attnscope: --shard: '%s' is not K/N with 1 <= K <= N\n", optarg);
				return 2;
			}
			break;
		case OPT_KEEP_GOING:
			o->corpus.keep_going = true;
			break;
		case OPT_BATCH: {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (end == optarg || *end || v < 1 || v > CORPUSRUN_BATCH_MAX) {
				fprintf(stderr, "attnscope: --batch: '%s' is not a number of texts from 1 to %d\n", optarg,
					CORPUSRUN_BATCH_MAX);
				return 2;
			}
			o->corpus.batch = (int)v;
			break;
		}
		case OPT_PCA_HEAD:
			if (corpuscli_parse_head(optarg, &o->corpus.pca_layer, &o->corpus.pca_head) < 0) {
				fprintf(stderr, "attnscope: --pca-head: '%s' is not LAYER.HEAD (e.g. 3.7)\n", optarg);
				return 2;
			}
			o->corpus.pca_given = true;
			break;
		case OPT_SAVE:
			o->corpus.save = optarg;
			break;
		case OPT_LOAD:
			o->corpus.load = optarg;
			break;
		case OPT_WORDS:
			o->ui.words = true;
			break;
		case OPT_COMPARE:
			o->ui.compare = optarg;
			break;
		case OPT_TARGET:
			o->target = optarg;
			break;
		case OPT_COMPARE_TARGET:
			o->compare_target = optarg;
			break;
		case OPT_IDS:
			if (parse_ids("--ids", optarg, &o->ids, &o->n_ids) < 0)
				return 2;
			break;
		case OPT_TARGET_IDS:
			if (parse_ids("--target-ids", optarg, &o->target_ids, &o->n_target_ids) < 0)
				return 2;
			break;
		case OPT_SRC_LANG:
			o->src_lang = optarg;
			break;
		case OPT_TGT_LANG:
			o->tgt_lang = optarg;
			break;
		case OPT_STACK: {
			static const char *const stacks[] = {"encoder", "decoder", "cross", "all"}; /* enum ui_stack */
			if (parse_choice("--stack", optarg, stacks, 4, &o->ui.stack) < 0)
				return 2;
			break;
		}
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("%s\nCopyright (C) 2026 the attnscope authors.\n"
			       "License: MIT <https://opensource.org/licenses/MIT>.\n"
			       "This is free software: you are free to change and redistribute it.\n"
			       "There is NO WARRANTY, to the extent permitted by law.\n",
			       PACKAGE_STRING);
			for (int i = optind; i < argc && !verbose; i++) /* --version --verbose, either order */
				verbose = strcmp(argv[i], "--verbose") == 0;
			if (verbose)
				print_gemm();
			return 1;
		case OPT_VERBOSE:
			verbose = true;
			break;
		default:
			fprintf(stderr, "Try 'attnscope --help' for more information.\n");
			return 2;
		}
	}
	if (verbose) {
		fprintf(stderr, "attnscope: --verbose goes with --version\n");
		return 2;
	}
	if (resolve_default_model(o) < 0)
		return 3;
	if (optind < argc) {
		o->text = join_text(argc - optind, argv + optind);
		if (!o->text)
			return 3; /* the text could not be read: a runtime error, exit 1 */
	}
	return 0;
}

/* --ablate, --ablate-mode, --ablation-effect: the heads into *AB (its mask stays NULL when none is given). */
static int run_once_ablate(const struct options *o, const struct model *m, struct ablation *ab, struct err *e)
{
	if (!o->ablate && !o->ablation_effect)
		return 0;
	if (ablation_init(ab, model_get_info(m), e) < 0)
		return -1;
	if (o->ablate_mode)
		ablation_parse_mode(o->ablate_mode, &ab->mode); /* checked when parsed */
	return o->ablate ? ablation_parse(ab, o->ablate, e) : 0;
}

/* --ablation-effect: each head ablated alone against the clean trace T, into a new *EFFECT: the mean KL for
 * --dump, the head finder's change of mean surprisal for --print heads (METRIC). */
static int run_once_effects(const struct model *m, const struct trace *t, enum ablate_mode mode,
			    enum ablate_metric metric, double **effect, struct err *e)
{
	const struct model_info *in = model_get_info(m);
	*effect = malloc((size_t)in->n_layers * in->n_heads * sizeof **effect);
	if (!*effect)
		return err_set(e, "out of memory");
	return ablation_effects_metric(m, t, mode, metric, NULL, NULL, NULL, *effect, e);
}

/* --ablate: the ablated run of *T's tokens becomes *T; the clean one goes to *CLEAN. */
static int run_once_swap(const struct model *m, const struct ablation *ab, struct trace **t, struct trace **clean,
			 struct err *e)
{
	struct trace *a = NULL;
	if (model_run_ablated(m, *t, ab, NULL, &a, e) < 0)
		return -1;
	*clean = *t;
	*t = a;
	return 0;
}


/* Model -m with --src-lang/--tgt-lang applied into *M; -1 with why (nothing left open). */
static int open_model(const struct options *o, struct model **m, struct err *e)
{
	if (model_open(o->model, m, e) < 0)
		return -1;
	if ((o->src_lang || o->tgt_lang) && model_set_langs(*m, o->src_lang, o->tgt_lang, e) < 0) {
		err_prefix(e, o->src_lang && o->tgt_lang ? "--src-lang/--tgt-lang" : o->src_lang ? "--src-lang" : "--tgt-lang");
		model_close(*m);
		*m = NULL;
		return -1;
	}
	return 0;
}
/* --dump and --print: run the model once on the text and write the result to standard output. */
static int run_once(const struct options *o)
{
	struct err e = {{0}};
	struct model *m = NULL;
	struct trace *t = NULL;
	if (!o->text && !o->ids) {
		fprintf(stderr, "attnscope: --%s needs a TEXT argument (or '-' for standard input)\n",
			o->print_view ? "print" : "dump");
		return 2;
	}
	if (open_model(o, &m, &e) < 0) {
		fprintf(stderr, "attnscope: %s\n", e.msg);
		return 1;
	}
	int rc = 0;
	const struct model_info *info = model_get_info(m);
	if (o->compare_target && !info->encoder_decoder) {
		fprintf(stderr, "attnscope: --compare-target: %s is not an encoder-decoder model\n", o->model);
		model_close(m);
		return 1;
	}
	if (info->encoder_decoder && (o->pair || o->ablate || o->ablation_effect)) {
		fprintf(stderr, "attnscope: %s is an encoder-decoder model: --%s does not apply to it (give --target)\n",
			o->model, o->pair ? "pair" : o->ablate ? "ablate" : "ablation-effect");
		model_close(m);
		return 2;
	}
	model_keep_value_norms(m, o->ui.weights_norm);
	struct ablation ab = {0};
	struct trace *clean = NULL; /* --ablate: the clean run; T becomes the ablated one */
	double *effect = NULL;      /* --ablation-effect: [n_layers][n_heads] */
	/* an encoder-decoder model runs its decoder on the target (without one, on the decoder start token) */
	int ran = o->ids ? model_run_ids_target(m, o->ids, o->n_ids, o->target_ids, o->n_target_ids, NULL, &t, &e)
		  : o->target || info->encoder_decoder ? model_run_target(m, o->text, o->target, NULL, &t, &e)
						       : model_run(m, o->text, o->pair, NULL, &t, &e);
	if (run_once_ablate(o, m, &ab, &e) < 0 || ran < 0 ||
	    (ab.mask && o->ablation_effect &&
	     run_once_effects(m, t, ab.mode, o->print_view ? ABLATE_SURPRISAL : ABLATE_KL, &effect, &e) < 0) ||
	    (ab.mask && o->ablate && run_once_swap(m, &ab, &t, &clean, &e) < 0)) {
		fprintf(stderr, "attnscope: %s\n", e.msg);
		rc = 1;
	} else {
		if (t->truncated)
			fprintf(stderr, "attnscope: warning: text truncated to the model's %d positions\n",
				t->max_positions);
		if (t->nonfinite_layer == 0)
			fprintf(stderr, "attnscope: warning: the embeddings hold NaN or Inf values; check the weights\n");
		else if (t->nonfinite_layer > 0)
			fprintf(stderr, "attnscope: warning: layer %d produced NaN or Inf values; check the weights\n",
				t->nonfinite_layer - 1);
		struct dump_select sel = {.layer = o->layer, .head = o->head, .stack = o->ui.stack};
		if (clean) {
			sel.ablation = &ab;
			sel.ablation_model = m;
			sel.clean = clean;
		}
		sel.ablation_effect = effect;
		sel.ablation_effect_mode = ab.mode;
		struct trace *tb = NULL; /* --compare: the second text (an encoder-decoder's with the same target); or
					  * --compare-target: the text with the second target */
		int wrote = o->compare_target ? model_run_target(m, o->text, o->compare_target, NULL, &tb, &e)
			    : !o->ui.compare ? 0
			    : info->encoder_decoder ? model_run_target(m, o->ui.compare, o->target, NULL, &tb, &e)
			    : model_run(m, o->ui.compare, o->pair, NULL, &tb, &e);
		/* --weights norm: the dump's attentions are the raw norms (--print builds its own, rows shared out);
		 * T and TB stand for them until they are freed */
		struct trace *nt = NULL, *ntb = NULL, *alpha = t, *alpha_b = tb;
		if (wrote == 0 && o->ui.weights_norm && !o->print_view) {
			if (!(nt = valnorm_build(t, true, &e)) || (tb && !(ntb = valnorm_build(tb, true, &e))))
				wrote = -1;
			t = nt ? nt : t;
			tb = ntb ? ntb : tb;
		}
		bool words = o->ui.words && !o->print_view && wrote == 0;
		struct ui_options uo = o->ui; /* --print predict reads the model's output head */
		uo.model = m;
		uo.clean = clean; /* --ablate: the views compare the ablated run T with it */
		uo.ablation = ab.mask ? &ab : NULL;
		uo.abl_effect = effect; /* --print heads --ablation-effect: the ablation column */
		if (o->top_k > 0 && !words) { /* predictions are per token: a dump of words has none */
			sel.model = m;
			sel.top_k = o->top_k;
		}
		if (o->lens && words) {
			fprintf(stderr, "attnscope: warning: --lens: the logit lens is per token: a dump of words has none\n");
		} else if (o->lens) {
			if (lmhead_kind(m) == LMHEAD_CAUSAL) {
				sel.lens = m;
				sel.dla_token = o->ui.token;
			}
			else /* the dump's "lm_head" says why too */
				fprintf(stderr, "attnscope: warning: --lens: no logit lens: %s\n",
					lmhead_kind(m) == LMHEAD_NONE ? lmhead_why(m) : "the output head is a masked LM's");
		}
		struct trace *w = words ? words_build(t) : NULL, *wb = words && tb ? words_build(tb) : NULL;
		if (wrote == 0)
			wrote = o->print_view ? print_compare(t, tb, o->print_view, &uo, stdout, &e)
				: words && (!w || (tb && !wb)) ? err_set(&e, "out of memory")
				: dump_write_compare(w ? w : t, wb ? wb : tb, model_get_info(m), o->dump_format, &sel,
						     stdout, &e);
		trace_free(w);
		trace_free(wb);
		trace_free(nt); /* before the traces they read */
		trace_free(ntb);
		t = alpha;
		tb = alpha_b;
		trace_free(tb);
		if (wrote < 0) {
			fprintf(stderr, "attnscope: %s\n", e.msg);
			rc = 1;
		}
	}
	trace_free(t);
	trace_free(clean);
	free(effect);
	ablation_free(&ab);
	model_close(m);
	return rc;
}

/* The interactive explorer. The text may be empty: the user types it. */
static int run_tui(const struct options *o)
{
	struct err e = {{0}};
	struct model *m = NULL;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "attnscope: the explorer needs a terminal; use --dump or --print in scripts\n");
		return 2;
	}
	if (open_model(o, &m, &e) < 0) {
		fprintf(stderr, "attnscope: %s\n", e.msg);
		return 1;
	}
	model_promote_weights(m); /* the explorer runs the model on every edit */
	if ((o->target || o->compare_target || o->ui.stack != UI_STACK_ENCODER) && !model_get_info(m)->encoder_decoder) {
		fprintf(stderr, "attnscope: %s: %s is not an encoder-decoder model\n",
			o->target ? "--target" : o->compare_target ? "--compare-target" : "--stack", o->model);
		model_close(m);
		return 1;
	}
	if (o->pair && model_get_info(m)->encoder_decoder) { /* its second input line is the target */
		fprintf(stderr, "attnscope: %s is an encoder-decoder model: --pair does not apply to it (give --target)\n",
			o->model);
		model_close(m);
		return 1;
	}
	struct ui_options uo = o->ui; /* the explorer's target line starts with --target */
	uo.target = o->target;
	uo.compare_target = o->compare_target;
	int rc = ui_run(m, o->text ? o->text : "", o->pair, &uo, &e) < 0 ? 1 : 0;
	if (rc)
		fprintf(stderr, "attnscope: %s\n", e.msg);
	model_close(m);
	return rc;
}

/* --corpus / --load: check the combination, then corpuscli runs it. */
static int run_corpus(struct options *o)
{
	struct corpuscli_opts *c = &o->corpus;
	const char *why = NULL;
	char agg_views[128], agg_msg[192];
	if (c->corpus && c->load)
		why = "--corpus and --load exclude each other";
	else if (o->text)
		why = "--corpus and --load take no TEXT";
	else if (o->pair)
		why = "--pair: give pairs as JSON lines with \"text_b\" in the corpus";
	else if (c->load && (c->shard_n > 1 || c->keep_going || c->pca_given || c->batch))
		why = "--shard, --keep-going, --pca-head and --batch apply to --corpus, not --load";
	else if (o->dump_format >= 0 && (o->layer >= 0 || o->head >= 0))
		why = "--layer and --head do not restrict the dump of an aggregate";
	else if (o->print_view && !registry_has(o->print_view, VIEW_AGGREGATE)) {
		snprintf(agg_msg, sizeof agg_msg, "a corpus aggregate prints as --print %s",
			 registry_names(agg_views, sizeof agg_views, VIEW_AGGREGATE, ", ", " or "));
		why = agg_msg;
	}
	if (why) {
		fprintf(stderr, "attnscope: %s\n", why);
		return 2;
	}
	if (!c->pca_given) { /* the head the user names */
		c->pca_layer = o->layer >= 0 ? o->layer : 0;
		c->pca_head = o->head >= 0 ? o->head : 0;
	}
	c->model = o->model;
	c->workers = o->threads;
	c->print_view = o->print_view;
	c->dump_format = o->dump_format;
	c->ui = &o->ui;
	if (!o->print_view && o->dump_format < 0 && !c->save)
		return corpuscli_explore(c); /* no output asked: the explorer on the aggregate */
	return corpuscli_run(c);
}

int main(int argc, char **argv)
{
	struct options o = {0};
	if (argc > 1 && strcmp(argv[1], "merge") == 0)
		return corpuscli_merge(argc - 1, argv + 1);
	int rc = parse_options(argc, argv, &o);
	if (rc) {
		free(o.text);
		free(o.ids);
		free(o.target_ids);
		return rc == 1 ? 0 : rc == 3 ? 1 : 2;
	}
	if (o.threads > 0 && !o.corpus.corpus)
		openblas_set_num_threads(o.threads);
	o.ui.layer = o.layer;
	o.ui.head = o.head;
	if (o.dump_format >= 0 && o.print_view) {
		fprintf(stderr, "attnscope: --dump and --print exclude each other\n");
		rc = 2;
	} else if (o.ui.sort && !strcmp(o.ui.sort, "dla") && o.ui.token < 0) {
		fprintf(stderr, "attnscope: --sort dla needs --token N: the token whose next one the heads are attributed to\n");
		rc = 2;
	} else if (o.lens && o.dump_format != DUMP_JSON) {
		fprintf(stderr, "attnscope: --lens adds the logit lens to --dump json (the explorer's view: --print lens)\n");
		rc = 2;
	} else if ((o.ablate || o.ablate_mode || o.ablation_effect) && o.dump_format < 0 && !o.print_view) {
		fprintf(stderr, "attnscope: --ablate, --ablate-mode and --ablation-effect apply to --dump and --print\n");
		rc = 2;
	} else if (o.ablate_mode && !o.ablate && !o.ablation_effect) {
		fprintf(stderr, "attnscope: --ablate-mode needs --ablate HEADS (or --ablation-effect)\n");
		rc = 2;
	} else if (o.ablation_effect && o.dump_format != DUMP_JSON && !(o.print_view && !strcmp(o.print_view, "heads"))) {
		fprintf(stderr, "attnscope: --ablation-effect adds to --dump json and --print heads\n");
		rc = 2;
	} else if (o.ui.sort && !strcmp(o.ui.sort, "ablation") && !o.ablation_effect) {
		fprintf(stderr, "attnscope: --sort ablation needs --ablation-effect (the column costs a run per head)\n");
		rc = 2;
	} else if ((o.ablate || o.ablation_effect) && (o.ui.compare || o.ui.words)) {
		fprintf(stderr, "attnscope: --ablate and --ablation-effect exclude --compare and --words\n");
		rc = 2;
	} else if ((o.ids && (o.text || o.target || o.pair)) || (o.target_ids && !o.ids)) {
		fprintf(stderr, "attnscope: --ids replaces TEXT (and --target-ids --target); --target-ids needs --ids\n");
		rc = 2;
	} else if ((o.ids || o.target_ids) && o.dump_format < 0 && !o.print_view) {
		fprintf(stderr, "attnscope: --ids and --target-ids apply to --dump and --print\n");
		rc = 2;
	} else if (o.ui.stack != UI_STACK_ENCODER && (o.dump_format == DUMP_JSON || o.corpus.corpus || o.corpus.load)) {
		fprintf(stderr, "attnscope: --stack applies to --print, --dump csv and the explorer on one text (--dump json holds every stack)\n");
		rc = 2;
	} else if (o.ui.stack == UI_STACK_ALL && o.dump_format >= 0) {
		fprintf(stderr, "attnscope: --stack all is the grid's three sections (--print grid, the explorer): --dump csv takes encoder, decoder or cross\n");
		rc = 2;
	} else if (o.ui.stack != UI_STACK_ENCODER && o.dump_format == DUMP_CSV &&
		   (o.ui.weights_norm || o.ablate)) {
		fprintf(stderr, "attnscope: --dump csv --stack shows the decoder's weights as they are: not with --weights norm or --ablate\n");
		rc = 2;
	} else if (o.compare_target && (o.ui.compare ||
					(o.ui.stack == UI_STACK_ENCODER && (o.print_view || o.dump_format == DUMP_CSV)) ||
					o.ids || o.ui.weights_norm || o.ablate || o.ablation_effect ||
					o.corpus.corpus || o.corpus.load)) {
		fprintf(stderr, "attnscope: --compare-target compares one text's decoders in the explorer, --dump json, or --print and --dump "
			"csv with --stack decoder or cross; it excludes --compare, --ids, --weights norm and --ablate\n");
		rc = 2;
	} else if (o.target && (o.corpus.corpus || o.corpus.load)) {
		fprintf(stderr, "attnscope: --target applies to one text, not to a corpus\n");
		rc = 2;
	} else if (o.format_given && !o.print_view) {
		fprintf(stderr, "attnscope: --format is the format of --print's output: give --print VIEW\n");
		rc = 2;
	} else if ((o.corpus.corpus || o.corpus.load) && (o.ui.words || o.ui.compare || o.ui.n_marks)) {
		fprintf(stderr, "attnscope: --words, --compare and token lists apply to one text, not to a corpus\n");
		rc = 2;
	} else if ((o.corpus.corpus || o.corpus.load) && o.ui.weights_norm) {
		fprintf(stderr, "attnscope: --weights norm applies to one text: a corpus aggregate keeps attention only\n");
		rc = 2;
	} else if (o.corpus.corpus || o.corpus.load) {
		rc = run_corpus(&o);
	} else if (o.corpus.save || o.corpus.shard_n > 1 || o.corpus.keep_going || o.corpus.pca_given || o.corpus.batch) {
		fprintf(stderr, "attnscope: --save, --shard, --keep-going, --pca-head and --batch need --corpus (or --load)\n");
		rc = 2;
	} else if (o.dump_format >= 0 || o.print_view) {
		rc = run_once(&o);
	} else {
		rc = run_tui(&o);
	}
	free(o.text);
	free(o.ids);
	free(o.target_ids);
	return rc;
}
