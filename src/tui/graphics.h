/* graphics.h -- pixel heatmaps in the explorer: which protocol the terminal speaks, and the
 * canvas's images sent after each frame.
 *
 * Detection asks the terminal three questions at once and waits for the answer to the last, the
 * primary device attributes (DA1) every terminal answers: whether it takes kitty graphics (a query
 * image, answered "OK" by kitty, Ghostty, WezTerm, Konsole), its cell size in pixels (CSI 16 t),
 * and, in DA1, whether it draws sixel (attribute 4: xterm -ti vt340, foot, mlterm, WezTerm,
 * Konsole, iTerm2, Windows Terminal; tmux 3.4 when built with sixel). A terminal that does not
 * answer costs the timeout once: the result is kept for the session. Inside tmux the questions
 * reach tmux itself, which answers for its own sixel support; kitty images are not used there (tmux
 * would need allow-passthrough, and the image would land at the outer terminal's cursor). */
#ifndef ATTNSCOPE_GRAPHICS_H
#define ATTNSCOPE_GRAPHICS_H

#include <stdbool.h>

#include "draw/canvas.h"
#include "draw/pixout.h"

#define GRAPHICS_TIMEOUT_MS 500   /* how long to wait for a terminal's answer */
#define GRAPHICS_CELL_W 10        /* pixels of a cell when the terminal does not say */
#define GRAPHICS_CELL_H 20

struct graphics {
	bool asked;                 /* the terminal was asked (once a session) */
	bool answered;              /* ... and answered DA1 within the timeout */
	enum pixel_proto available; /* what it takes: kitty before sixel; PIXELS_NONE */
	int px_w, px_h;             /* its cell size in pixels (a default when it did not say) */
	enum pixel_proto on;        /* what the explorer draws with now; PIXELS_NONE = character cells */
	struct graphics_sent {      /* the images on screen: where, and the escapes that drew them */
		struct rect at;
		char *esc;          /* malloc'ed */
	} *sent;
	int n_sent;
};

/* The cell size in pixels the terminal on FD reports to the kernel (TIOCGWINSZ); false when it
 * reports none (then *W and *H are the defaults). */
bool graphics_cell_size(int fd, int *w, int *h);
/* Ask the terminal on IN_FD/OUT_FD (already in raw mode) once; fills G. Bytes that were not an
 * answer (keys typed meanwhile) go to KEPT[*n_kept] (at most CAP). */
void graphics_detect(struct graphics *g, int in_fd, int out_fd, int timeout_ms, unsigned char *kept, int *n_kept,
		     int cap);
/* Parse the terminal's answers in BUF[n] into G (for the tests of the parser); returns whether DA1
 * was among them. */
bool graphics_parse_answers(struct graphics *g, const char *buf, int n);
/* The escapes that draw image IMG of a frame at its cell with protocol P as image ID (cursor saved
 * and restored; kitty: the image of that id replaced), malloc'ed; NULL when out of memory. */
char *graphics_image(const struct canvas_image *img, enum pixel_proto p, unsigned id);
/* Send CV's images to FD in protocol P: each one that is new, changed, moved, or stands on a line
 * ROW_DIRTY[y] says curses rewrote; kitty images no longer there are deleted. Remembers them. */
void graphics_send(struct graphics *g, const struct canvas *cv, const bool *row_dirty, int fd);
/* Take every image off the screen (kitty: deleted; sixel: the caller repaints) and forget them. */
void graphics_clear(struct graphics *g, int fd);
void graphics_free(struct graphics *g);

#endif
