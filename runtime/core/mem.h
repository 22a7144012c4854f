/* Host allocation wrappers: abort with a message on failure and count live and peak bytes. */
#ifndef HALO_MEM_H
#define HALO_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void *halo_malloc(size_t size);
void *halo_calloc(size_t count, size_t size);
void *halo_realloc(void *ptr, size_t size);
void halo_free(void *ptr);
char *halo_strdup(const char *s);
/* Counted bytes currently allocated and the peak so far (through these wrappers). */
size_t halo_mem_current(void);
size_t halo_mem_peak(void);
/* Peak resident set size of the process (VmHWM) in bytes, 0 when unknown. */
size_t halo_mem_rss_peak(void);
/* Current resident set size in bytes (/proc/self/statm), 0 when unknown. */
size_t halo_mem_rss_now(void);
/* Resets the kernel's peak mark (VmHWM) to the current RSS, so that halo_mem_rss_peak then
 * measures a phase; false when the kernel does not support it. */
bool halo_mem_rss_peak_reset(void);

/* Physical memory of this machine in bytes (0 when unknown). */
uint64_t halo_mem_physical(void);
/* Refuses, before anything is allocated, a size computed from flags or file headers that cannot
 * fit: HALO_EUSAGE "WHAT: needs about X GiB, more than this machine's Y GiB" when bytes (a double,
 * so that products of huge flags do not wrap) exceeds physical memory; WHAT (printf format) names
 * the flag and its value. Allocations that pass may still fail later and abort in halo_malloc. */
int halo_mem_fits(double bytes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Advises the kernel to back [p, p + size) with transparent huge pages (madvise MADV_HUGEPAGE
 * on the 2 MiB-aligned pages inside it; nothing for a range under 4 MiB). For arrays read at
 * random rows (features): one TLB entry then covers 2 MiB instead of 4 KiB. Advice only: no
 * error when the kernel has no THP or refuses (file mappings without read-only file THP). */
void halo_mem_hugepages(const void *p, size_t size);

/* A reusable scratch buffer: grows (by half again, contents not kept) and is never shrunk, so
 * a per-batch array allocates only while the batches grow. Zero-initialise; free with
 * halo_buf_free. */
typedef struct halo_buf {
    void *p;     /* data */
    int64_t cap; /* bytes allocated */
} halo_buf;

/* At least `bytes` of scratch (the old contents are lost when it grows). */
void *halo_buf_get(halo_buf *b, int64_t bytes);
void halo_buf_free(halo_buf *b);

/* Typed helpers. */
#define HALO_NEW(type, n) ((type *)halo_calloc((size_t)(n), sizeof(type)))
#define HALO_ALLOC(type, n) ((type *)halo_malloc((size_t)(n) * sizeof(type)))

#endif
