/* The generator's CSR build for a graph too big to hold in memory: one pass over the edge stream
 * sorts every entry (row, source) into bucket files by row range, then each bucket in turn
 * becomes its rows' CSR, appended to indptr.i64 and indices.i32. */
#include "graph/gen_int.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/progress.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint64_t halo_gen_mem_budget(void)
{
    const char *env = getenv("HALO_GEN_MAX_BYTES");
    if (env != NULL && env[0] != '\0') {
        char *end;
        double v = strtod(env, &end);
        if (*end == '\0' && v >= 0) {
            return (uint64_t)v;
        }
        halo_warn("HALO_GEN_MAX_BYTES=%s is not a byte count; using %llu", env,
                  (unsigned long long)GEN_MEM_DEFAULT);
    }
    return GEN_MEM_DEFAULT;
}

uint64_t halo_gen_csr_bytes(const gen_ctx *g)
{
    uint64_t raw = (uint64_t)g->draws * (g->p->directed ? 1u : 2u);
    return 8 * ((uint64_t)g->n + 1) + 4 * raw;
}

/* One bucket of the spilled generator: an unlinked temporary file of (row << 32 | source)
 * entries for the rows [b << shift, (b + 1) << shift), and its staging buffer. */
typedef struct gen_bucket {
    int fd;          /* the file (already unlinked: the data goes when it is closed) */
    int64_t entries; /* entries written to the file so far */
    int staged;      /* entries in stage not written yet */
    uint64_t *stage; /* [GEN_BUCKET_STAGE] staging buffer */
} gen_bucket;

/* The state of one spilled build. */
typedef struct spill {
    const gen_ctx *g;  /* the run */
    int shift;         /* 2^shift rows per bucket */
    int nb;            /* buckets */
    gen_bucket *bk;    /* [nb] */
    int64_t most;      /* entries of the largest bucket */
    char what[4200];   /* "TMP/bucket files", for messages */
    uint64_t *ent;     /* [most] one bucket's entries, read back */
    int32_t *ind;      /* [most] its rows' sources */
    int32_t *sorttmp;  /* [most] the row sort's scratch */
    int64_t *off;      /* [2^shift + 1] its rows' offsets */
    int64_t *pos;      /* [2^shift + 1] fill positions, then the indptr entries written */
} spill;

/* Writes all n bytes of buf to fd (a bucket file; what names it in messages). */
static int gen_write_fd(int fd, const void *buf, size_t n, const char *what)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return halo_errorf(HALO_EIO, "%s: write: %s", what,
                               w < 0 ? strerror(errno) : "no progress");
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Appends entry e to bucket b, writing its staging buffer out when full. */
static inline int gen_bucket_put(gen_bucket *b, uint64_t e, const char *what)
{
    b->stage[b->staged++] = e;
    if (b->staged == GEN_BUCKET_STAGE) {
        b->staged = 0;
        b->entries += GEN_BUCKET_STAGE;
        return gen_write_fd(b->fd, b->stage, GEN_BUCKET_STAGE * sizeof(uint64_t), what);
    }
    return 0;
}

/* The bucket size: 2^shift rows holding about GEN_BUCKET_ENTRIES entries (fewer when the budget
 * is smaller than one bucket's 16 bytes per entry: entry, row data, sort buffer), and at most
 * GEN_BUCKETS_MAX buckets. */
static void spill_size(spill *s, uint64_t budget)
{
    const gen_ctx *g = s->g;
    int64_t n = g->n;
    uint64_t raw_est = (uint64_t)g->draws * (g->p->directed ? 1u : 2u);
    uint64_t target = budget / 16 < GEN_BUCKET_ENTRIES ? budget / 16 : GEN_BUCKET_ENTRIES;
    target = target > 0 ? target : 1;
    int shift = 0;
    while (shift < 31 && ((uint64_t)2 << shift) * raw_est <= (uint64_t)n * target) {
        shift++; /* 2^(shift+1) rows would still hold at most `target` entries on average */
    }
    while ((((uint64_t)n + ((1ull << shift) - 1)) >> shift) > GEN_BUCKETS_MAX) {
        shift++;
    }
    s->shift = shift;
    s->nb = (int)(((uint64_t)n + ((1ull << shift) - 1)) >> shift);
    halo_debug("gen: spilling %llu edge entries into %d buckets of %lld rows",
               (unsigned long long)raw_est, s->nb, 1LL << shift);
}

/* Creates the bucket files in tmp (unlinked at once) and their staging buffers. */
static int spill_open(spill *s, const char *tmp)
{
    char path[4096];
    s->bk = HALO_NEW(gen_bucket, s->nb);
    for (int b = 0; b < s->nb; b++) {
        s->bk[b].fd = -1;
    }
    snprintf(s->what, sizeof s->what, "%s/bucket files", tmp);
    for (int b = 0; b < s->nb; b++) {
        char name[64];
        snprintf(name, sizeof name, ".bucket-%d", b);
        HALO_CHECK(halo_path_join(path, sizeof path, tmp, name));
        s->bk[b].fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (s->bk[b].fd < 0) {
            return halo_errorf(HALO_EIO, "%s: %s", path, strerror(errno));
        }
        unlink(path);
        s->bk[b].stage = HALO_ALLOC(uint64_t, GEN_BUCKET_STAGE);
    }
    return 0;
}

/* The one pass over the edge stream: each entry (both directions of a symmetrised edge) into
 * its row's bucket; then the staging buffers written out and s->most set. */
static int spill_scatter(spill *s)
{
    const gen_ctx *g = s->g;
    bool sym = !g->p->directed;
    int32_t *src = HALO_ALLOC(int32_t, GEN_CHUNK), *dst = HALO_ALLOC(int32_t, GEN_CHUNK);
    int64_t chunks = (g->draws + GEN_CHUNK - 1) / GEN_CHUNK;
    int rc = 0;
    halo_progress pr;
    halo_progress_begin(&pr, "gen: edges", (uint64_t)chunks);
    for (int64_t ch = 0; ch < chunks && rc == 0; ch++) {
        int m = halo_gen_chunk(g, ch, src, dst);
        for (int i = 0; i < m && rc == 0; i++) {
            uint32_t u = (uint32_t)src[i], v = (uint32_t)dst[i];
            rc = gen_bucket_put(&s->bk[v >> s->shift], (uint64_t)v << 32 | u, s->what);
            if (sym && rc == 0) {
                rc = gen_bucket_put(&s->bk[u >> s->shift], (uint64_t)u << 32 | v, s->what);
            }
        }
        if ((ch & 255) == 0) {
            halo_progress_update(&pr, (uint64_t)ch);
        }
    }
    halo_progress_end(&pr);
    halo_free(src);
    halo_free(dst);
    HALO_CHECK(rc);
    s->most = 0;
    for (int b = 0; b < s->nb; b++) {
        gen_bucket *k = &s->bk[b];
        HALO_CHECK(gen_write_fd(k->fd, k->stage, (size_t)k->staged * sizeof(uint64_t), s->what));
        k->entries += k->staged;
        k->staged = 0;
        halo_free(k->stage);
        k->stage = NULL;
        s->most = k->entries > s->most ? k->entries : s->most;
    }
    return 0;
}

/* Reads bucket b back into s->ent and closes its file. */
static int spill_read(spill *s, int b)
{
    gen_bucket *k = &s->bk[b];
    size_t want = (size_t)k->entries * sizeof *s->ent, got = 0;
    while (got < want) {
        ssize_t r = pread(k->fd, (char *)s->ent + got, want - got, (off_t)got);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            return halo_errorf(HALO_EIO, "%s: read of bucket %d: %s", s->what, b,
                               r < 0 ? strerror(errno) : "file too short");
        }
        got += (size_t)r;
    }
    close(k->fd);
    k->fd = -1;
    return 0;
}

/* Bucket b's rows as CSR, every row sorted and deduplicated, appended to the indptr (wp) and
 * indices (wi) writers; *w counts the edges written so far. */
static int spill_rows(spill *s, int b, halo_writer *wp, halo_writer *wi, int64_t *w)
{
    HALO_CHECK(spill_read(s, b));
    int64_t m = s->bk[b].entries, lo = (int64_t)b << s->shift, rows_max = 1LL << s->shift;
    int64_t rows = s->g->n - lo < rows_max ? s->g->n - lo : rows_max;
    int64_t *off = s->off, *pos = s->pos;
    memset(off, 0, (size_t)(rows + 1) * sizeof *off);
    for (int64_t i = 0; i < m; i++) {
        off[(int64_t)(s->ent[i] >> 32) - lo + 1]++;
    }
    for (int64_t r = 0; r < rows; r++) {
        off[r + 1] += off[r];
    }
    memcpy(pos, off, (size_t)rows * sizeof *pos);
    for (int64_t i = 0; i < m; i++) {
        s->ind[pos[(int64_t)(s->ent[i] >> 32) - lo]++] = (int32_t)(uint32_t)s->ent[i];
    }
    int64_t wl = 0;
    for (int64_t r = 0; r < rows; r++) {
        int64_t a = off[r], len = off[r + 1] - a;
        pos[r] = *w + wl; /* indptr entry of row lo + r */
        int64_t kept = halo_gen_row_dedup(s->ind + a, len, s->g->k, s->sorttmp);
        memmove(s->ind + wl, s->ind + a, (size_t)kept * sizeof *s->ind);
        wl += kept;
    }
    HALO_CHECK(halo_writer_put(wp, pos, (size_t)rows * sizeof *pos));
    HALO_CHECK(halo_writer_put(wi, s->ind, (size_t)wl * sizeof *s->ind));
    *w += wl;
    return 0;
}

/* Bucket by bucket: the rows appended to tmp's indptr.i64 and indices.i32 (closed whole, their
 * CRC-32 and sizes in crc[] and bytes[]); *edges_out the edges kept. */
static int spill_write(spill *s, const char *tmp, uint32_t *crc, uint64_t *bytes,
                       int64_t *edges_out)
{
    char path[4096];
    halo_writer *wp = NULL, *wi = NULL;
    int rc = 0;
    HALO_TRY(halo_path_join(path, sizeof path, tmp, halo_graph_files[HALO_GA_INDPTR]));
    HALO_TRY(halo_writer_open(path, &wp));
    HALO_TRY(halo_path_join(path, sizeof path, tmp, halo_graph_files[HALO_GA_INDICES]));
    HALO_TRY(halo_writer_open(path, &wi));
    int64_t most = s->most > 0 ? s->most : 1, rows_max = 1LL << s->shift;
    s->ent = HALO_ALLOC(uint64_t, most);
    s->ind = HALO_ALLOC(int32_t, most);
    s->sorttmp = HALO_ALLOC(int32_t, most);
    s->off = HALO_ALLOC(int64_t, rows_max + 1);
    s->pos = HALO_ALLOC(int64_t, rows_max + 1);
    int64_t w = 0, raw = 0;
    halo_progress pr;
    halo_progress_begin(&pr, "gen: rows", (uint64_t)s->nb);
    for (int b = 0; b < s->nb && rc == 0; b++) {
        raw += s->bk[b].entries;
        rc = spill_rows(s, b, wp, wi, &w);
        halo_progress_update(&pr, (uint64_t)b + 1);
    }
    halo_progress_end(&pr);
    HALO_TRY(rc);
    HALO_TRY(halo_writer_put(wp, &w, sizeof w));
    rc = halo_writer_close(wp, &crc[HALO_GA_INDPTR], &bytes[HALO_GA_INDPTR]);
    wp = NULL;
    HALO_TRY(rc);
    rc = halo_writer_close(wi, &crc[HALO_GA_INDICES], &bytes[HALO_GA_INDICES]);
    wi = NULL;
    HALO_TRY(rc);
    halo_debug("gen: %lld edges drawn, %lld after removing duplicates", (long long)raw,
               (long long)w);
    *edges_out = w;
fail:
    halo_writer_discard(wp);
    halo_writer_discard(wi);
    return rc;
}

int halo_gen_csr_spilled(const gen_ctx *g, const char *tmp, uint64_t budget, uint32_t *crc,
                         uint64_t *bytes, int64_t *edges_out)
{
    spill s;
    memset(&s, 0, sizeof s);
    s.g = g;
    spill_size(&s, budget);
    int rc = spill_open(&s, tmp);
    if (rc == 0) {
        rc = spill_scatter(&s);
    }
    if (rc == 0) {
        rc = spill_write(&s, tmp, crc, bytes, edges_out);
    }
    for (int b = 0; s.bk != NULL && b < s.nb; b++) {
        if (s.bk[b].fd >= 0) {
            close(s.bk[b].fd);
        }
        halo_free(s.bk[b].stage);
    }
    halo_free(s.bk);
    halo_free(s.ent);
    halo_free(s.ind);
    halo_free(s.sorttmp);
    halo_free(s.off);
    halo_free(s.pos);
    return rc;
}
