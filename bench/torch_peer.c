/* torch_peer.c -- run bench/torch_peer.py as a child process and speak its line protocol (one
 * command, one reply line; the attentions follow their reply line as raw float32). */
#include "torch_peer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct torch_peer {
	pid_t pid;
	FILE *to, *from; /* the child's stdin and stdout */
	char version[64];
	char *line;      /* the last reply line */
	size_t line_cap;
};

/* Read the reply to the last command into P->line (newline removed). 0 when it starts with WANT,
 * else -1 with WHY set: the peer's "error ..." message, or that it stopped answering. */
static int peer_reply(struct torch_peer *p, const char *want, char *why, size_t whysz)
{
	if (fflush(p->to) != 0 || getline(&p->line, &p->line_cap, p->from) < 0) {
		snprintf(why, whysz, "the PyTorch process stopped answering");
		return -1;
	}
	p->line[strcspn(p->line, "\n")] = 0;
	size_t wl = strlen(want);
	if (strncmp(p->line, want, wl) == 0 && (p->line[wl] == ' ' || p->line[wl] == 0))
		return 0;
	snprintf(why, whysz, "%s", strncmp(p->line, "error ", 6) == 0 ? p->line + 6 : p->line);
	return -1;
}

struct torch_peer *torch_peer_start(const char *datadir, const char *dir, char *why, size_t whysz)
{
	const char *py = getenv("ATTNSCOPE_BENCH_PYTHON");
	char script[PATH_MAX];
	int in[2], out[2];
	if (!py || !*py)
		py = "/usr/bin/python3"; /* Debian's, where python3-torch is installed */
	snprintf(script, sizeof script, "%s/bench/torch_peer.py", datadir);
	if (access(py, X_OK) != 0) {
		snprintf(why, whysz, "no Python at %s (set ATTNSCOPE_BENCH_PYTHON)", py);
		return NULL;
	}
	if (access(script, R_OK) != 0) {
		snprintf(why, whysz, "no %s", script);
		return NULL;
	}
	if (pipe(in) < 0) {
		snprintf(why, whysz, "pipe: %s", strerror(errno));
		return NULL;
	}
	if (pipe(out) < 0) {
		snprintf(why, whysz, "pipe: %s", strerror(errno));
		close(in[0]), close(in[1]);
		return NULL;
	}
	signal(SIGPIPE, SIG_IGN); /* a peer that died shows as a failed write, not as our death */
	/* Spawned, not forked: a fork write-protects the bench's memory, and the attnscope runs measured
	 * next would take a fault on each page they write first. */
	extern char **environ;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_addclose(&fa, in[1]);
	posix_spawn_file_actions_addclose(&fa, out[0]);
	char *argv[] = {(char *)py, script, (char *)dir, NULL};
	pid_t pid;
	int rc = posix_spawn(&pid, py, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		snprintf(why, whysz, "spawn %s: %s", py, strerror(rc));
		close(in[0]), close(in[1]), close(out[0]), close(out[1]);
		return NULL;
	}
	close(in[0]);
	close(out[1]);
	fcntl(in[1], F_SETFD, FD_CLOEXEC); /* not inherited by the attnscope processes the bench runs */
	fcntl(out[0], F_SETFD, FD_CLOEXEC);
	struct torch_peer *p = calloc(1, sizeof *p);
	if (!p) {
		close(in[1]); /* the child sees the end of its input and exits */
		close(out[0]);
		waitpid(pid, NULL, 0);
		snprintf(why, whysz, "out of memory");
		return NULL;
	}
	p->pid = pid;
	p->to = fdopen(in[1], "w");
	p->from = fdopen(out[0], "r");
	if (!p->to || !p->from) {
		snprintf(why, whysz, "fdopen: %s", strerror(errno));
		if (!p->to)
			close(in[1]);
		if (!p->from)
			close(out[0]);
		torch_peer_stop(p);
		return NULL;
	}
	if (peer_reply(p, "ready", why, whysz) < 0) {
		torch_peer_stop(p);
		return NULL;
	}
	sscanf(p->line, "ready %63s", p->version);
	return p;
}

const char *torch_peer_version(const struct torch_peer *p)
{
	return p->version;
}

int torch_peer_ids(struct torch_peer *p, const int32_t *ids, int n, char *why, size_t whysz)
{
	fputs("ids", p->to);
	for (int i = 0; i < n; i++)
		fprintf(p->to, " %d", (int)ids[i]);
	fputc('\n', p->to);
	return peer_reply(p, "ok", why, whysz);
}

double torch_peer_time(struct torch_peer *p, int threads, int reps, int warmups, char *why, size_t whysz)
{
	double ms;
	fprintf(p->to, "time %d %d %d\n", threads, reps, warmups);
	if (peer_reply(p, "time", why, whysz) < 0)
		return -1;
	if (sscanf(p->line, "time %lf", &ms) != 1) {
		snprintf(why, whysz, "unexpected reply: %s", p->line);
		return -1;
	}
	return ms;
}

float *torch_peer_attn(struct torch_peer *p, int *layers, int *heads, int *n, char *why, size_t whysz)
{
	fputs("attn\n", p->to);
	if (peer_reply(p, "attn", why, whysz) < 0)
		return NULL;
	if (sscanf(p->line, "attn %d %d %d", layers, heads, n) != 3 || *layers <= 0 || *heads <= 0 || *n <= 0) {
		snprintf(why, whysz, "unexpected reply: %s", p->line);
		return NULL;
	}
	size_t count = (size_t)*layers * *heads * *n * *n;
	float *a = malloc(count * sizeof *a);
	if (!a || fread(a, sizeof *a, count, p->from) != count) {
		snprintf(why, whysz, a ? "the attentions were cut short" : "out of memory");
		free(a);
		return NULL;
	}
	return a;
}

int torch_peer_check(struct torch_peer *p, const char *dump, double *worst, double *sharp, char *per_layer,
		     size_t plsz, char *why, size_t whysz)
{
	int used = 0;
	fprintf(p->to, "check %s\n", dump);
	if (peer_reply(p, "check", why, whysz) < 0)
		return -1;
	if (sscanf(p->line, "check %lf %lf %n", worst, sharp, &used) != 2) {
		snprintf(why, whysz, "unexpected reply: %s", p->line);
		return -1;
	}
	snprintf(per_layer, plsz, "%s", p->line + used);
	return 0;
}

double torch_peer_corpus(struct torch_peer *p, const char *path, int batch, int threads, int reps, int *used,
			 double *diff, double *cpu, int *blas, char *why, size_t whysz)
{
	double s;
	fprintf(p->to, "corpus %s %d %d %d\n", path, batch, threads, reps);
	if (peer_reply(p, "corpus", why, whysz) < 0)
		return -1;
	if (sscanf(p->line, "corpus %lf %d %lf %lf %d", &s, used, diff, cpu, blas) != 5) {
		snprintf(why, whysz, "unexpected reply: %s", p->line);
		return -1;
	}
	return s;
}

void torch_peer_stop(struct torch_peer *p)
{
	if (!p)
		return;
	if (p->to)
		fclose(p->to); /* end of its input: it exits */
	if (p->from)
		fclose(p->from);
	while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
		;
	free(p->line);
	free(p);
}
