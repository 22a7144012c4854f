/* Host allocation wrappers: abort with a message on failure and count live and peak bytes. */
#ifndef HALO_MEM_H
#define HALO_MEM_H

#include <stddef.h>

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

/* Typed helpers. */
#define HALO_NEW(type, n) ((type *)halo_calloc((size_t)(n), sizeof(type)))
#define HALO_ALLOC(type, n) ((type *)halo_malloc((size_t)(n) * sizeof(type)))

#endif
