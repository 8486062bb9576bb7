/* hugemap.h -- model files mapped in 2 MB pages. Private to the engine.
 *
 * On a virtual machine a TLB miss walks two page tables, and after the user paused to read, the
 * walks miss the caches: reading a gpt2-sized model's 436 MB mapped in 4 KB pages took 150 to
 * 270 ms after a pause of 150 ms instead of 15 ms, and every keystroke's forward pass paid it. In
 * 2 MB pages it took 15 ms paused or not. */
#ifndef ATTNSCOPE_HUGEMAP_H
#define ATTNSCOPE_HUGEMAP_H

#include <stdbool.h>
#include <stddef.h>

#define HUGEMAP_PAGE ((size_t)2 << 20)

/* Map SIZE bytes of FD read-only and private at a 2 MB boundary, asking for huge pages. Where the
 * page cache holds the file in 2 MB folios (ext4, xfs on Linux 6.x, after the file was read from
 * disk) the kernel maps it in 2 MB entries. MAP_FAILED on failure, as mmap. */
void *hugemap_file(int fd, size_t size);

/* Whether the kernel gives huge pages to a process that asks (transparent huge pages "always" or
 * "madvise"). */
bool hugemap_available(void);

/* Whether most of what is resident of the mapping that starts at ADDR is mapped in 2 MB entries
 * (from /proc/self/smaps); false when that cannot be read. */
bool hugemap_mapped_huge(const void *addr);

/* Replace [ADDR, ADDR + LEN) of a read-only mapping (both 2 MB aligned) by an anonymous copy in
 * huge pages, in place: pointers into it stay valid, readers on other threads see the same bytes
 * throughout. For a file whose page cache is in 4 KB folios (written in this boot: downloaded,
 * copied), which the kernel cannot map in 2 MB entries. -1 (nothing changed) on failure. */
int hugemap_promote(void *addr, size_t len);

/* SIZE bytes of zeroed read-write memory at a 2 MB boundary, in huge pages where the kernel gives
 * them (a copy of weights the forward pass reads: packed weights, weights.h); NULL on failure.
 * Freed by hugemap_free with the same SIZE. */
void *hugemap_alloc(size_t size);
void hugemap_free(void *p, size_t size);

#endif
