/* Counting allocator: a size header before each block, atomic totals, abort on failure. */
#include "core/mem.h"

#include "core/err.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#define HALO_MEM_HDR 16 /* keeps 16-byte alignment of the payload */

static atomic_size_t mem_current;
static atomic_size_t mem_peak;

static void mem_oom(size_t size)
{
    fprintf(stderr, "halo: error: out of memory allocating %zu bytes\n", size);
    abort();
}

static void *mem_account(unsigned char *raw, size_t size)
{
    memcpy(raw, &size, sizeof size);
    size_t now = atomic_fetch_add(&mem_current, size) + size;
    size_t peak = atomic_load(&mem_peak);
    while (now > peak && !atomic_compare_exchange_weak(&mem_peak, &peak, now)) {
    }
    return raw + HALO_MEM_HDR;
}

void *halo_malloc(size_t size)
{
    unsigned char *raw = malloc(size + HALO_MEM_HDR);
    if (raw == NULL) {
        mem_oom(size);
    }
    return mem_account(raw, size);
}

void *halo_calloc(size_t count, size_t size)
{
    if (size != 0 && count > (SIZE_MAX - HALO_MEM_HDR) / size) {
        mem_oom(SIZE_MAX);
    }
    unsigned char *raw = calloc(1, count * size + HALO_MEM_HDR);
    if (raw == NULL) {
        mem_oom(count * size);
    }
    return mem_account(raw, count * size);
}

void *halo_realloc(void *ptr, size_t size)
{
    if (ptr == NULL) {
        return halo_malloc(size);
    }
    unsigned char *raw = (unsigned char *)ptr - HALO_MEM_HDR;
    size_t old;
    memcpy(&old, raw, sizeof old);
    unsigned char *nraw = realloc(raw, size + HALO_MEM_HDR);
    if (nraw == NULL) {
        mem_oom(size);
    }
    atomic_fetch_sub(&mem_current, old);
    return mem_account(nraw, size);
}

void halo_free(void *ptr)
{
    if (ptr == NULL) {
        return;
    }
    unsigned char *raw = (unsigned char *)ptr - HALO_MEM_HDR;
    size_t size;
    memcpy(&size, raw, sizeof size);
    atomic_fetch_sub(&mem_current, size);
    free(raw);
}

char *halo_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = halo_malloc(n);
    memcpy(d, s, n);
    return d;
}

size_t halo_mem_current(void)
{
    return atomic_load(&mem_current);
}

size_t halo_mem_peak(void)
{
    return atomic_load(&mem_peak);
}

size_t halo_mem_rss_peak(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL) {
        return 0;
    }
    char line[256];
    size_t kb = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "VmHWM:", 6) == 0) {
            kb = strtoull(line + 6, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kb * 1024;
}

size_t halo_mem_rss_now(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, res = 0;
    if (f == NULL) {
        return 0;
    }
    if (fscanf(f, "%ld %ld", &pages, &res) != 2) {
        res = 0;
    }
    fclose(f);
    return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

bool halo_mem_rss_peak_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f == NULL) {
        return false;
    }
    bool ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}

void *halo_buf_get(halo_buf *b, int64_t bytes)
{
    if (bytes > b->cap) {
        halo_free(b->p);
        b->cap = bytes + bytes / 2 + 64;
        b->p = halo_malloc((size_t)b->cap);
    }
    return b->p;
}

void halo_buf_free(halo_buf *b)
{
    halo_free(b->p);
    b->p = NULL;
    b->cap = 0;
}

uint64_t halo_mem_physical(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

int halo_mem_fits(double bytes, const char *fmt, ...)
{
    uint64_t phys = halo_mem_physical();
    if (phys == 0 || bytes <= (double)phys) {
        return 0;
    }
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return halo_errorf(HALO_EUSAGE, "%s: needs about %.3g GiB, more than this machine's %.1f GiB "
                       "of memory", what, bytes / 1073741824.0, (double)phys / 1073741824.0);
}

void halo_mem_hugepages(const void *p, size_t size)
{
    const size_t huge = (size_t)2 << 20;
    if (p == NULL || size < 2 * huge) {
        return;
    }
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1);
    uintptr_t b = ((uintptr_t)p + size) & ~(uintptr_t)(huge - 1);
    if (b > a) {
#ifdef MADV_HUGEPAGE
        (void)madvise((void *)a, b - a, MADV_HUGEPAGE);
#endif
    }
}
