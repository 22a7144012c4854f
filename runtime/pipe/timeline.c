/* The pipeline timeline: stage intervals per rank and batch, written and read as JSON Lines. */
#include "pipe/pipe.h"
#include "pipe/timeline.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/mem.h"

#include <stdio.h>
#include <string.h>

void halo_timeline_init(halo_timeline *tl, double t0)
{
    memset(tl, 0, sizeof *tl);
    tl->t0 = t0;
}

void halo_timeline_free(halo_timeline *tl)
{
    halo_free(tl->ev);
    memset(tl, 0, sizeof *tl);
}

void halo_timeline_add(halo_timeline *tl, int rank, int epoch, int64_t batch, const char *stage,
                       int thread, double start, double end)
{
    if (tl->n == tl->cap) {
        tl->cap = tl->cap > 0 ? 2 * tl->cap : 1024;
        tl->ev = halo_realloc(tl->ev, (size_t)tl->cap * sizeof *tl->ev);
    }
    halo_timeline_event *e = &tl->ev[tl->n++];
    memset(e, 0, sizeof *e);
    e->rank = rank;
    e->epoch = epoch;
    e->batch = batch;
    e->thread = thread;
    snprintf(e->stage, sizeof e->stage, "%s", stage);
    e->start = start - tl->t0;
    e->end = end - tl->t0;
}

/* One line per event:
 * {"rank":0,"epoch":0,"batch":3,"stage":"fetch","thread":0,"start":0.012345,"end":0.015678} */
int halo_timeline_write(const char *path, const halo_timeline_event *ev, int64_t n)
{
    halo_sb sb;
    halo_sb_init(&sb);
    for (int64_t i = 0; i < n; i++) {
        const halo_timeline_event *e = &ev[i];
        halo_sb_printf(&sb,
                       "{\"rank\":%d,\"epoch\":%d,\"batch\":%lld,\"stage\":\"%s\",\"thread\":%d,"
                       "\"start\":%.6f,\"end\":%.6f}\n",
                       e->rank, e->epoch, (long long)e->batch, e->stage, e->thread, e->start,
                       e->end);
    }
    int rc = halo_file_write_atomic(path, sb.buf != NULL ? sb.buf : "", sb.len);
    halo_sb_free(&sb);
    return rc < 0 ? halo_error_prefix(rc, "--timeline %s", path) : 0;
}

/* Reads one event from a parsed line (where = "FILE:LINE"). */
static int parse_event(const halo_json *j, const char *where, halo_timeline_event *e)
{
    if (j->type != HALO_JSON_OBJECT) {
        return halo_errorf(HALO_EINPUT, "%s: expected a JSON object", where);
    }
    int64_t rank, batch, epoch = 0, thread = 0;
    const char *stage;
    HALO_CHECK(halo_json_get_i64(j, "rank", where, &rank));
    HALO_CHECK(halo_json_get_i64(j, "batch", where, &batch));
    HALO_CHECK(halo_json_get_str(j, "stage", where, &stage));
    HALO_CHECK(halo_json_get_f64(j, "start", where, &e->start));
    HALO_CHECK(halo_json_get_f64(j, "end", where, &e->end));
    if (halo_json_get(j, "epoch") != NULL) {
        HALO_CHECK(halo_json_get_i64(j, "epoch", where, &epoch));
    }
    if (halo_json_get(j, "thread") != NULL) {
        HALO_CHECK(halo_json_get_i64(j, "thread", where, &thread));
    }
    if (rank < 0 || rank > 1000000 || batch < 0 || epoch < 0 || epoch > 1000000000 ||
        thread < 0 || thread > 1000000) {
        return halo_errorf(HALO_EINPUT, "%s: rank, epoch, batch or thread out of range", where);
    }
    if (stage[0] == '\0' || strlen(stage) >= sizeof e->stage || strpbrk(stage, "\"\\\n") != NULL) {
        return halo_errorf(HALO_EINPUT, "%s: stage name '%s' is empty, too long (max %zu) or has "
                           "quotes", where, stage, sizeof e->stage - 1);
    }
    if (!(e->end >= e->start)) {
        return halo_errorf(HALO_EINPUT, "%s: end %g is before start %g", where, e->end,
                           e->start);
    }
    e->rank = (int32_t)rank;
    e->batch = batch;
    e->epoch = (int32_t)epoch;
    e->thread = (int32_t)thread;
    snprintf(e->stage, sizeof e->stage, "%s", stage);
    return 0;
}

int halo_timeline_read(const char *path, halo_timeline_event **out, int64_t *nout)
{
    *out = NULL;
    *nout = 0;
    char *text = NULL;
    size_t len = 0;
    HALO_CHECK(halo_file_read_all(path, &text, &len));
    int64_t n = 0, cap = 256, line = 0;
    halo_timeline_event *ev = HALO_ALLOC(halo_timeline_event, cap);
    int rc = 0;
    char *p = text, *end = text + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *stop = nl != NULL ? nl : end;
        line++;
        char *q = p;
        while (q < stop && (*q == ' ' || *q == '\t' || *q == '\r')) {
            q++;
        }
        if (q < stop) {
            char where[512];
            snprintf(where, sizeof where, "%s:%lld", path, (long long)line);
            halo_json *j = NULL;
            rc = halo_json_parse(q, (size_t)(stop - q), where, &j);
            if (rc < 0) {
                break;
            }
            if (n == cap) {
                cap *= 2;
                ev = halo_realloc(ev, (size_t)cap * sizeof *ev);
            }
            memset(&ev[n], 0, sizeof ev[n]);
            rc = parse_event(j, where, &ev[n]);
            halo_json_free(j);
            if (rc < 0) {
                break;
            }
            n++;
        }
        p = stop + 1;
    }
    halo_free(text);
    if (rc < 0) {
        halo_free(ev);
        return rc;
    }
    if (n == 0) {
        halo_free(ev);
        return halo_errorf(HALO_EINPUT, "%s: no events (an empty timeline)", path);
    }
    *out = ev;
    *nout = n;
    return 0;
}
