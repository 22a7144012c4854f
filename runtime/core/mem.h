/* Host allocation wrappers: abort with a message on failure and count live and peak bytes. */
#ifndef HALO_MEM_H
#define HALO_MEM_H

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
