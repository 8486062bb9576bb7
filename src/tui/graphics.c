/* graphics.c -- the terminal's pixel protocols, asked and used (see graphics.h). */
#include "config.h"

#include "tui/graphics.h"

#include "draw/kitty.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define GRAPHICS_QUERY_ID 31 /* the kitty query image's id */

bool graphics_cell_size(int fd, int *w, int *h)
{
	struct winsize ws;
	*w = GRAPHICS_CELL_W, *h = GRAPHICS_CELL_H;
	if (ioctl(fd, TIOCGWINSZ, &ws) || !ws.ws_col || !ws.ws_row || !ws.ws_xpixel || !ws.ws_ypixel)
		return false;
	if (ws.ws_xpixel / ws.ws_col < 2 || ws.ws_ypixel / ws.ws_row < 2)
		return false;
	*w = ws.ws_xpixel / ws.ws_col, *h = ws.ws_ypixel / ws.ws_row;
	return true;
}

/* The length of the answer starting at S[0..n) (which starts with ESC), 0 when it is incomplete
 * or not an answer we asked for; fills G from it. *DA1 is set when it is the DA1 answer. */
static int graphics_answer(struct graphics *g, const char *s, int n, bool *da1)
{
	if (n < 2)
		return 0;
	if (s[1] == '_') { /* APC: kitty's "ESC _ G i=31;OK ESC \" */
		for (int k = 2; k + 1 < n; k++)
			if (s[k] == '\033' && s[k + 1] == '\\') {
				char body[128];
				int len = k - 2 < (int)sizeof body - 1 ? k - 2 : (int)sizeof body - 1;
				memcpy(body, s + 2, (size_t)len);
				body[len] = 0;
				char want[32];
				snprintf(want, sizeof want, "Gi=%d;OK", GRAPHICS_QUERY_ID);
				if (!strcmp(body, want))
					g->available = PIXELS_KITTY;
				return k + 2;
			}
		return 0;
	}
	if (s[1] != '[')
		return 0;
	int k = 2;
	bool private = k < n && s[k] == '?';
	if (private)
		k++;
	int params[32], np = 0, v = 0;
	bool have = false;
	for (; k < n; k++) {
		char c = s[k];
		if (c >= '0' && c <= '9') {
			v = v * 10 + (c - '0');
			if (v > 100000)
				v = 100000;
			have = true;
		} else if (c == ';') {
			if (np < 32)
				params[np++] = have ? v : 0;
			v = 0, have = false;
		} else {
			if (np < 32)
				params[np++] = have ? v : 0;
			if (c == 'c' && private) { /* DA1: ESC [ ? 62 ; 4 ; ... c */
				*da1 = true;
				for (int i = 1; i < np; i++)
					if (params[i] == 4 && g->available == PIXELS_NONE)
						g->available = PIXELS_SIXEL;
			} else if (c == 't' && !private && np == 3 && params[0] == 6 && params[1] >= 2 && params[2] >= 2 &&
				   params[1] <= 1000 && params[2] <= 1000) { /* cell size: ESC [ 6 ; h ; w t */
				g->px_h = params[1], g->px_w = params[2];
			}
			return k + 1;
		}
	}
	return 0;
}

bool graphics_parse_answers(struct graphics *g, const char *buf, int n)
{
	bool da1 = false;
	for (int i = 0; i < n; i++)
		if (buf[i] == '\033') {
			int len = graphics_answer(g, buf + i, n - i, &da1);
			if (len)
				i += len - 1;
		}
	return da1;
}

static double graphics_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void graphics_detect(struct graphics *g, int in_fd, int out_fd, int timeout_ms, unsigned char *kept, int *n_kept,
		     int cap)
{
	*n_kept = 0;
	if (g->asked)
		return;
	g->asked = true;
	g->available = PIXELS_NONE;
	bool size_known = graphics_cell_size(out_fd, &g->px_w, &g->px_h);
	bool tmux = getenv("TMUX") != NULL;
	char q[160];
	int len = 0;
	if (!tmux) /* a 1x1 query image that is not kept (a=q) */
		len += snprintf(q + len, sizeof q - len, "\033_Gi=%d,s=1,v=1,a=q,t=d,f=24;AAAA\033\\", GRAPHICS_QUERY_ID);
	if (!size_known)
		len += snprintf(q + len, sizeof q - len, "\033[16t");
	len += snprintf(q + len, sizeof q - len, "\033[c");
	for (int off = 0; off < len;) {
		ssize_t w = write(out_fd, q + off, (size_t)(len - off));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		off += (int)w;
	}
	char buf[1024];
	int n = 0;
	double end = graphics_now_ms() + timeout_ms;
	while (n < (int)sizeof buf) {
		int left = (int)(end - graphics_now_ms());
		if (left <= 0)
			break;
		struct pollfd pfd = {in_fd, POLLIN, 0};
		int rc = poll(&pfd, 1, left);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			break;
		ssize_t r = read(in_fd, buf + n, sizeof buf - (size_t)n);
		if (r <= 0)
			break;
		n += (int)r;
		struct graphics probe = *g;
		if (graphics_parse_answers(&probe, buf, n))
			break; /* DA1 comes last: everything else has been answered by now */
	}
	g->answered = graphics_parse_answers(g, buf, n);
	if (tmux && g->available == PIXELS_KITTY)
		g->available = PIXELS_NONE;
	/* What was not an answer was typed: give it back. */
	for (int i = 0; i < n; i++) {
		if (buf[i] == '\033') {
			bool da1 = false;
			struct graphics scratch = *g;
			int alen = graphics_answer(&scratch, buf + i, n - i, &da1);
			if (alen) {
				i += alen - 1;
				continue;
			}
		}
		if (*n_kept < cap)
			kept[(*n_kept)++] = (unsigned char)buf[i];
	}
}

char *graphics_image(const struct canvas_image *img, enum pixel_proto p, unsigned id)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	if (!f)
		return NULL;
	if (p == PIXELS_KITTY)
		fprintf(f, "\033_Ga=d,d=I,i=%u,q=2\033\\", id);
	fprintf(f, "\0337\033[%d;%dH", img->at.y + 1, img->at.x + 1);
	int rc = pixout_image(img, p, id, f);
	fputs("\0338", f);
	if (fclose(f) || rc) {
		free(s);
		return NULL;
	}
	return s;
}

static void graphics_write(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w, n -= (size_t)w;
	}
}

static bool graphics_same_rect(struct rect a, struct rect b)
{
	return a.x == b.x && a.y == b.y && a.w == b.w && a.h == b.h;
}

void graphics_send(struct graphics *g, const struct canvas *cv, const bool *row_dirty, int fd)
{
	int n = g->on == PIXELS_NONE ? 0 : cv->n_images;
	struct graphics_sent *now = n ? calloc((size_t)n, sizeof *now) : NULL;
	if (n && !now)
		n = 0;
	for (int i = 0; i < n; i++) {
		const struct canvas_image *img = &cv->images[i];
		now[i].at = img->at;
		now[i].esc = graphics_image(img, g->on, (unsigned)i + 1);
		if (!now[i].esc)
			continue;
		bool dirty = false;
		for (int y = img->at.y; y < img->at.y + img->at.h && y < cv->h; y++)
			dirty |= row_dirty[y];
		bool same = i < g->n_sent && g->sent[i].esc && graphics_same_rect(g->sent[i].at, img->at) &&
			    !strcmp(g->sent[i].esc, now[i].esc);
		if (dirty || !same)
			graphics_write(fd, now[i].esc, strlen(now[i].esc));
	}
	if (g->on == PIXELS_KITTY) /* kitty keeps images until they are deleted */
		for (int i = n; i < g->n_sent; i++) {
			char del[64];
			snprintf(del, sizeof del, "\033_Ga=d,d=I,i=%d,q=2\033\\", i + 1);
			graphics_write(fd, del, strlen(del));
		}
	for (int i = 0; i < g->n_sent; i++)
		free(g->sent[i].esc);
	free(g->sent);
	g->sent = now;
	g->n_sent = n;
}

void graphics_clear(struct graphics *g, int fd)
{
	if (g->on == PIXELS_KITTY && g->n_sent) {
		char *s = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&s, &len);
		if (f) {
			kitty_delete_all(f);
			if (!fclose(f))
				graphics_write(fd, s, len);
		}
		free(s);
	}
	graphics_free(g);
}

void graphics_free(struct graphics *g)
{
	for (int i = 0; i < g->n_sent; i++)
		free(g->sent[i].esc);
	free(g->sent);
	g->sent = NULL;
	g->n_sent = 0;
}
