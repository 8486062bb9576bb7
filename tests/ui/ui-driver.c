/* ui-driver.c -- the explorer on synthetic traces, for tmux tests before (and besides) a real model.
 *
 *   ui-driver [--gpt2] [--layers L] [--heads H] [--delay MS] [--stats FILE] [--theme T]
 *             [--color auto|always|never] [TEXT [PAIR]]     interactive explorer
 *   ui-driver --print grid|heatmap [--layer L --head H --width W ...] TEXT
 *   ui-driver --model DIR [...]  the same on a real model (model_open/model_run) instead
 *   ui-driver --keys        every action and its default keys
 *   ui-driver --roff        the KEY BINDINGS sections of the man page
 *   ui-driver --roles       the theme roles, one per line (for the attnscope-themes(5) check)
 *   ui-driver --bench       time full redraws of a 12x12-head grid (32 and 128 tokens)
 *
 * The synthetic model sleeps --delay ms per run (checking the cancel flag), so tests can type
 * faster than it runs; a text containing "FAIL" makes the run fail with a message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/model.h"
#include "synth.h"
#include "draw/theme.h"
#include "tui/print.h"
#include "tui/ui.h"
#include "views/registry.h"

struct driver {
	enum synth_style style;
	int layers, heads, delay_ms;
	int runs, cancelled, failed;
};

static int driver_run(void *ctx, const char *text, const char *text_b, const volatile int *cancel, struct trace **out,
		      struct err *e)
{
	struct driver *d = ctx;
	d->runs++;
	for (int t = 0; t < d->delay_ms; t += 5) {
		if (cancel && *cancel) {
			d->cancelled++;
			return err_set(e, "cancelled");
		}
		struct timespec ts = {0, 5000000L};
		nanosleep(&ts, NULL);
	}
	if (strstr(text, "FAIL")) {
		d->failed++;
		return err_set(e, "synthetic failure for a text containing FAIL");
	}
	*out = synth_trace(text, text_b, d->layers, d->heads, d->style);
	return *out ? 0 : err_set(e, "out of memory");
}

static int usage(void)
{
	fputs("usage: ui-driver [--gpt2] [--layers L] [--heads H] [--delay MS] [--stats FILE] [--theme T]\n"
	      "                 [--color auto|always|never] [--print VIEW] [--layer L] [--head H] [--token T]\n"
	      "                 [--width W] [--keys] [--roff] [--model DIR] [TEXT [PAIR]]\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	struct driver d = {SYNTH_BERT, 2, 2, 0, 0, 0, 0};
	struct ui_options o;
	print_options_init(&o);
	const char *print = NULL, *stats = NULL, *text = NULL, *pair = NULL, *model = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--keys")) {
			print_keys(stdout);
			return 0;
		} else if (!strcmp(a, "--roff")) {
			view_write_roff(stdout, registry_views);
			return 0;
		} else if (!strcmp(a, "--bench")) {
			for (int n = 32; n <= 128; n *= 4) {
				char words[2048] = "";
				for (int w = 0; w < n - 2; w++)
					strcat(words, "ab ");
				struct trace *t = synth_trace(words, NULL, 12, 12, SYNTH_BERT);
				if (!t)
					return 1;
				for (int cold = 1; cold >= 0; cold--)
					printf("grid of 144 heads, %d tokens, %s: %.2f ms per full redraw at 100x30, "
					       "%.2f ms at 200x60 (256 colours)\n", t->n,
					       cold ? "new trace" : "selection moved",
					       print_bench_grid_redraw(t, 100, 30, 50, DEPTH_256, cold),
					       print_bench_grid_redraw(t, 200, 60, 50, DEPTH_256, cold));
				trace_free(t);
			}
			return 0;
		} else if (!strcmp(a, "--roles")) {
			for (int r = 0; r < ROLE_COUNT; r++)
				printf("%s\t%s\n", theme_role_name((enum theme_role)r), theme_role_help((enum theme_role)r));
			return 0;
		} else if (!strcmp(a, "--gpt2")) {
			d.style = SYNTH_GPT2;
		} else if (v && !strcmp(a, "--layers")) {
			d.layers = atoi(v), i++;
		} else if (v && !strcmp(a, "--heads")) {
			d.heads = atoi(v), i++;
		} else if (v && !strcmp(a, "--delay")) {
			d.delay_ms = atoi(v), i++;
		} else if (v && !strcmp(a, "--stats")) {
			stats = v, i++;
		} else if (v && !strcmp(a, "--model")) {
			model = v, i++;
		} else if (v && !strcmp(a, "--theme")) {
			o.theme = v, i++;
		} else if (v && !strcmp(a, "--print")) {
			print = v, i++;
		} else if (v && !strcmp(a, "--layer")) {
			o.layer = atoi(v), i++;
		} else if (v && !strcmp(a, "--head")) {
			o.head = atoi(v), i++;
		} else if (v && !strcmp(a, "--token")) {
			o.token = atoi(v), i++;
		} else if (v && !strcmp(a, "--width")) {
			o.width = atoi(v), i++;
		} else if (v && !strcmp(a, "--color")) {
			o.color = !strcmp(v, "always") ? UI_COLOR_ALWAYS : !strcmp(v, "never") ? UI_COLOR_NEVER : UI_COLOR_AUTO;
			i++;
		} else if (a[0] == '-' && a[1]) {
			return usage();
		} else if (!text) {
			text = a;
		} else if (!pair) {
			pair = a;
		} else {
			return usage();
		}
	}
	if (d.layers < 1 || d.heads < 1 || d.layers > 64 || d.heads > 64)
		return usage();
	struct err e = {{0}};
	if (model) {
		struct model *m = NULL;
		if (model_open(model, &m, &e)) {
			fprintf(stderr, "ui-driver: %s\n", e.msg);
			return 1;
		}
		int rc;
		if (print) {
			struct trace *t = NULL;
			rc = model_run(m, text ? text : "", pair, NULL, &t, &e);
			if (!rc)
				rc = print_trace(t, print, &o, stdout, &e);
			trace_free(t);
		} else {
			rc = ui_run(m, text, pair, &o, &e);
		}
		model_close(m);
		if (rc)
			fprintf(stderr, "ui-driver: %s\n", e.msg);
		return rc ? 1 : 0;
	}
	if (print) {
		struct trace *t = synth_trace(text ? text : "", pair, d.layers, d.heads, d.style);
		if (!t)
			return 1;
		int rc = print_trace(t, print, &o, stdout, &e);
		trace_free(t);
		if (rc) {
			fprintf(stderr, "ui-driver: %s\n", e.msg);
			return 1;
		}
		return 0;
	}
	struct ui_source src = {d.style == SYNTH_BERT ? "synthetic-bert" : "synthetic-gpt2", d.style == SYNTH_BERT, &d,
				driver_run, false, NULL};
	int rc = ui_run_source(&src, text, pair, &o, &e);
	if (stats) {
		FILE *f = fopen(stats, "w");
		if (f) {
			fprintf(f, "runs %d\ncancelled %d\nfailed %d\n", d.runs, d.cancelled, d.failed);
			fclose(f);
		}
	}
	if (rc) {
		fprintf(stderr, "ui-driver: %s\n", e.msg);
		return 1;
	}
	return 0;
}
