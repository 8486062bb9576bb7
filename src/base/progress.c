/* progress.c -- formatting a progress line (see progress.h). */
#include "base/progress.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

double progress_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void progress_duration(char *buf, size_t n, double seconds)
{
	if (!isfinite(seconds) || seconds < 0)
		seconds = 0;
	unsigned long s = (unsigned long)(seconds + 0.5);
	if (s >= 3600)
		snprintf(buf, n, "%lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(buf, n, "%lu:%02lu", s / 60, s % 60);
}

void progress_format(char *buf, size_t n, uint64_t done, uint64_t total, double elapsed, int width, const char *unit)
{
	double rate = elapsed > 0 ? done / elapsed : 0;
	char head[64], tail[96], eta[32] = "";
	if (total) {
		snprintf(head, sizeof head, "%llu/%llu %s %3d%%", (unsigned long long)done, (unsigned long long)total,
			 unit, (int)(100.0 * (done > total ? total : done) / total));
		if (rate > 0 && done < total) {
			char d[24];
			progress_duration(d, sizeof d, (total - done) / rate);
			snprintf(eta, sizeof eta, "  ETA %s", d);
		}
	} else {
		snprintf(head, sizeof head, "%llu %s", (unsigned long long)done, unit);
	}
	snprintf(tail, sizeof tail, "  %.1f %s/s%s", rate, unit, eta);
	int bar = total ? width - (int)strlen(head) - (int)strlen(tail) - 3 : 0;
	if (bar > 40)
		bar = 40;
	if (bar < 5) {
		snprintf(buf, n, "%s%s", head, tail);
		return;
	}
	char b[48];
	int fill = (int)((double)bar * (done > total ? total : done) / total);
	for (int i = 0; i < bar; i++)
		b[i] = i < fill ? '#' : '.';
	b[bar] = 0;
	snprintf(buf, n, "%s [%s]%s", head, b, tail);
}
