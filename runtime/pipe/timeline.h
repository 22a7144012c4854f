/* The pipeline's timeline (pipe/timeline.c): the interval of every stage of every batch on
 * every rank, kept in memory and written / read as JSON Lines (docs/pipeline.md). Plain data, no
 * MPI, no threads; the simulator writes the same records. */
#ifndef HALO_TIMELINE_H
#define HALO_TIMELINE_H

#include "pipe/pipe.h"

#include <stdint.h>

/* What a --timeline file starts with (its first event); an empty one has no events. */
#define HALO_TIMELINE_SIG "{\"rank\":"

/* One interval of the timeline: a stage of one batch on one rank. Plain data (can be gathered
 * across ranks as bytes). */
typedef struct halo_timeline_event {
    int32_t rank;    /* rank */
    int32_t epoch;   /* epoch */
    int64_t batch;   /* batch within the epoch */
    int32_t thread;  /* thread of the stage */
    char stage[12];  /* stage name, NUL-terminated ("sample", "fetch", "copy", "compute", ...) */
    double start;    /* seconds since the rank's time origin */
    double end;      /* seconds since the rank's time origin */
} halo_timeline_event;

/* A growing list of events. */
typedef struct halo_timeline {
    halo_timeline_event *ev; /* [n] events */
    int64_t n;               /* events recorded */
    int64_t cap;             /* capacity of ev */
    double t0;               /* time origin (halo_now()) subtracted from every time */
} halo_timeline;

void halo_timeline_init(halo_timeline *tl, double t0);
void halo_timeline_free(halo_timeline *tl);
/* Appends one interval (start and end are halo_now() times). */
void halo_timeline_add(halo_timeline *tl, int rank, int epoch, int64_t batch, const char *stage,
                       int thread, double start, double end);
/* Appends the stages of a pipeline item. */
void halo_timeline_add_item(halo_timeline *tl, const halo_pipe *p, int rank, int epoch,
                            const halo_pipe_item *it);
/* Writes events as JSON Lines (one object per line, see docs/pipeline.md), atomically. */
int halo_timeline_write(const char *path, const halo_timeline_event *ev, int64_t n);
/* Reads a file written by halo_timeline_write (errors name FILE:LINE). *ev is halo_malloc'd. */
int halo_timeline_read(const char *path, halo_timeline_event **ev, int64_t *n);

#endif
