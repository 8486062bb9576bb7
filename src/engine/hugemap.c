/* hugemap.c -- model files mapped in 2 MB pages (see hugemap.h). */
#define _GNU_SOURCE /* mremap */
#include "engine/hugemap.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static char *hugemap_align(char *p)
{
	return (char *)(((uintptr_t)p + HUGEMAP_PAGE - 1) & ~(uintptr_t)(HUGEMAP_PAGE - 1));
}

/* An inaccessible span of SIZE + 2 MB, so that SIZE bytes fit at a 2 MB boundary inside it. */
static char *hugemap_reserve(size_t size)
{
	char *span = mmap(NULL, size + HUGEMAP_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return span == MAP_FAILED ? NULL : span;
}

/* Give back the parts of the reserved SPAN (SIZE + 2 MB) around [AT, AT + SIZE). */
static void hugemap_trim(char *span, char *at, size_t size)
{
	if (at > span)
		munmap(span, (size_t)(at - span));
	size_t tail = (size_t)(span + size + HUGEMAP_PAGE - (at + size));
	if (tail)
		munmap(at + size, tail);
}

void *hugemap_file(int fd, size_t size)
{
	char *span = size >= HUGEMAP_PAGE && size <= SIZE_MAX - HUGEMAP_PAGE ? hugemap_reserve(size) : NULL;
	if (!span)
		return mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	char *at = hugemap_align(span);
	void *addr = mmap(at, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
	if (addr == MAP_FAILED) {
		munmap(span, size + HUGEMAP_PAGE);
		return mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	}
	hugemap_trim(span, at, size);
#ifdef MADV_HUGEPAGE
	(void)madvise(addr, size, MADV_HUGEPAGE); /* a kernel without huge pages says no: 4 KB pages */
#endif
	return addr;
}

bool hugemap_available(void)
{
	char line[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (!f)
		return false;
	bool ok = fgets(line, sizeof line, f) && (strstr(line, "[always]") || strstr(line, "[madvise]"));
	fclose(f);
	return ok;
}

bool hugemap_mapped_huge(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return false;
	char line[512];
	bool in = false;
	unsigned long rss = 0, huge = 0, v;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			if (in)
				break; /* past the mapping */
			in = lo == (unsigned long)(uintptr_t)addr;
		} else if (in && sscanf(line, "Rss: %lu kB", &v) == 1) {
			rss = v;
		} else if (in && (sscanf(line, "FilePmdMapped: %lu kB", &v) == 1 ||
				  sscanf(line, "AnonHugePages: %lu kB", &v) == 1)) {
			huge += v;
		}
	}
	fclose(f);
	return rss > 0 && huge * 4 >= rss * 3;
}

int hugemap_promote(void *addr, size_t len)
{
	if (((uintptr_t)addr | len) & (HUGEMAP_PAGE - 1) || len == 0)
		return -1;
	char *span = hugemap_reserve(len), *at = span ? hugemap_align(span) : NULL;
	if (!span || mprotect(at, len, PROT_READ | PROT_WRITE) < 0) {
		if (span)
			munmap(span, len + HUGEMAP_PAGE);
		return -1;
	}
#ifdef MADV_HUGEPAGE
	(void)madvise(at, len, MADV_HUGEPAGE);
#endif
	memcpy(at, addr, len);
	/* read-only like the file's mapping; then moved over it in one step (the old pages unmapped,
	 * the new put in their place, under the address space's lock: a reader faults and waits) */
	if (mprotect(at, len, PROT_READ) < 0 || mremap(at, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, addr) == MAP_FAILED) {
		munmap(span, len + HUGEMAP_PAGE);
		return -1;
	}
	hugemap_trim(span, at, len);
	return 0;
}

void *hugemap_alloc(size_t size)
{
	if (size == 0 || size > SIZE_MAX - HUGEMAP_PAGE)
		return NULL;
	char *span = hugemap_reserve(size), *at = span ? hugemap_align(span) : NULL;
	if (!span || mprotect(at, size, PROT_READ | PROT_WRITE) < 0) {
		if (span)
			munmap(span, size + HUGEMAP_PAGE);
		return NULL;
	}
	hugemap_trim(span, at, size);
#ifdef MADV_HUGEPAGE
	(void)madvise(at, size, MADV_HUGEPAGE);
#endif
	return at;
}

void hugemap_free(void *p, size_t size)
{
	if (p)
		munmap(p, size);
}
