/* print.h -- setup shared by the TUI and headless rendering: theme choice, locale, colour depth. */
#ifndef ATTNSCOPE_PRINT_H
#define ATTNSCOPE_PRINT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "draw/theme.h"
#include "tui/ui.h"
#include "tui/userconf.h"

/* Load the theme O asks for, else CONF's, else "viridis". */
int print_load_theme(const struct ui_options *o, const struct userconf *conf, struct theme *th, struct err *e);
/* Adopt the environment's LC_CTYPE and say whether it is UTF-8. */
bool print_locale_utf8(void);
/* The colour depth for output to a terminal (IS_TTY) or not, following O's colour choice. */
enum color_depth print_depth(const struct ui_options *o, bool is_tty);

/* How a model is named on screen: a folder path by its last component ("bert-mini"). */
const char *print_model_label(const char *name, char *buf, size_t n);

#endif
