/* The local gather of feature rows behind pulls and halo calibrate's measurement of it. */
#include "store/store.h"
#include "store/store_impl.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Outputs of at least this many bytes are gathered with non-temporal stores (0: never). Smaller
 * ones stay in the cache for the step that reads them next. */
#ifndef GATHER_NT_BYTES
#define GATHER_NT_BYTES (16 << 20)
#endif

/* Copies one row of rb bytes (a multiple of 64, both ends 16-byte aligned) with non-temporal
 * stores: the output goes to memory without first being read into the cache (no
 * read-for-ownership), and does not evict the table's lines. */
static inline void gather_row_nt(char *dst, const char *src, size_t rb)
{
#if defined(__SSE2__)
    for (size_t b = 0; b < rb; b += 64) {
        __m128i a0 = _mm_loadu_si128((const __m128i *)(const void *)(src + b));
        __m128i a1 = _mm_loadu_si128((const __m128i *)(const void *)(src + b + 16));
        __m128i a2 = _mm_loadu_si128((const __m128i *)(const void *)(src + b + 32));
        __m128i a3 = _mm_loadu_si128((const __m128i *)(const void *)(src + b + 48));
        _mm_stream_si128((__m128i *)(void *)(dst + b), a0);
        _mm_stream_si128((__m128i *)(void *)(dst + b + 16), a1);
        _mm_stream_si128((__m128i *)(void *)(dst + b + 32), a2);
        _mm_stream_si128((__m128i *)(void *)(dst + b + 48), a3);
    }
#else
    memcpy(dst, src, rb);
#endif
}

void halo_store_gather(const float *feat, int64_t base, int dim, const int32_t *ids, int64_t n,
                       float *out)
{
    size_t rb = (size_t)dim * sizeof(float);
    /* a large output of whole-cache-line rows is written with non-temporal stores */
    bool nt = GATHER_NT_BYTES > 0 && (size_t)n * rb >= (size_t)GATHER_NT_BYTES && rb % 64 == 0 &&
              (uintptr_t)out % 16 == 0;
    for (int64_t i = 0; i < n; i++) {
        if (i + GATHER_AHEAD < n) {
            const char *q = (const char *)(feat + (ids[i + GATHER_AHEAD] - base) * dim);
            for (size_t b = 0; b < rb; b += 64) {
                __builtin_prefetch(q + b);
            }
        }
        const float *src = feat + (ids[i] - base) * dim;
        if (nt) {
            gather_row_nt((char *)(out + i * dim), (const char *)src, rb);
        } else {
            memcpy(out + i * dim, src, rb);
        }
    }
#if defined(__SSE2__)
    if (nt) {
        _mm_sfence(); /* the streamed rows are visible before the caller reads or sends them */
    }
#endif
}
