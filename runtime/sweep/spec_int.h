/* What the experiment-file loader's files share (spec.c, expand.c, locate.c, point.c): the file
 * being loaded, a field's path, the located errors, values as text, and the expansion. */
#ifndef HALO_SWEEP_SPEC_INT_H
#define HALO_SWEEP_SPEC_INT_H

#include "core/json.h"
#include "sweep/internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The experiment file being loaded. */
typedef struct halo_sweep_ctx {
    const char *path; /* experiment file */
    char *code;       /* its text with comments blanked (NULL when unreadable) */
} halo_sweep_ctx;

/* A field's path: keys, "[i" list positions (i-th entry: the key after it is searched i+1
 * times), and "\"value" components that match a string literal. */
typedef struct halo_sweep_fpath {
    const char *c[8]; /* components */
    int n;            /* count */
} halo_sweep_fpath;

/* Paths of one, two and three components. */
static inline halo_sweep_fpath fp1(const char *a)
{
    halo_sweep_fpath p = {{a}, 1};
    return p;
}

static inline halo_sweep_fpath fp2(const char *a, const char *b)
{
    halo_sweep_fpath p = {{a, b}, 2};
    return p;
}

static inline halo_sweep_fpath fp3(const char *a, const char *b, const char *c)
{
    halo_sweep_fpath p = {{a, b, c}, 3};
    return p;
}

/* An index component "[i" in buf. */
static inline const char *idx_comp(char *buf, size_t size, size_t i)
{
    snprintf(buf, size, "[%zu", i);
    return buf;
}

/* A literal component "\"s" in buf. */
static inline const char *lit_comp(char *buf, size_t size, const char *s)
{
    snprintf(buf, size, "\"%s", s);
    return buf;
}

/* ---- where a field is written (locate.c) ---- */

/* Blanks Lua comments of an experiment file's text in place (strings are kept). */
void halo_sweep_blank_comments(char *s);
/* The 1-based line of the deepest component of p found in order, 0 when not even the first;
 * depth (when not NULL) gets how many of the key and literal components were found. */
int halo_sweep_find_line(const halo_sweep_ctx *c, const halo_sweep_fpath *p, int *depth);
/* Sets the HALO_EINPUT error "FILE:LINE: field PATH: what" and returns it. */
int halo_sweep_ferr(const halo_sweep_ctx *c, const halo_sweep_fpath *p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same for a setting "SECTION.KEY", located where it is most likely written: the section,
 * then the sweep axis, then the points. */
int halo_sweep_kv_err(const halo_sweep_ctx *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Adds the line to the data loader's message "FILE: field a.b[2]: what" when the field is found. */
int halo_sweep_loader_error(const halo_sweep_ctx *c, int rc);
/* Whether s is a Lua identifier (letters, digits, _; not starting with a digit). */
bool halo_sweep_is_ident(const char *s);

/* ---- values (point.c) ---- */

/* Whether s is one of a NULL-terminated list. */
bool halo_sweep_in_list(const char *s, const char *const *list);
/* "a, b, c" of a NULL-terminated list, for messages. */
void halo_sweep_list_text(const char *const *list, char *buf, size_t size);
/* The run key named name, NULL when there is none. */
const halo_sweep_runkey *halo_sweep_runkey_find(const char *name);
/* Canonical text of a scalar, or of a list of scalars (comma-joined), appended to sb with its
 * kind (HALO_SWEEP_STR/NUM/BOOL); -1 for anything else. */
int halo_sweep_canon(const halo_json *v, halo_sb *sb, int *type);
/* "a string", "a number", ... for messages. */
const char *halo_sweep_type_name(const halo_json *v);
/* Whether a name is an axis, a measure or a derived column (or reps) of e. */
bool halo_sweep_is_column(const halo_sweep_exp *e, const char *name);
/* Whether a name is an axis of e. */
bool halo_sweep_is_axis(const halo_sweep_exp *e, const char *name);

/* ---- the paper's claim and the figure's sources (spec_paper.c) ---- */

/* paper = "TEXT" or { text = ..., ranges = { { metric, lo, hi, unit, source }, ... } } and
 * depends = { PATH, ... } into e (after the measures and derived columns are read). */
int halo_sweep_load_paper(const halo_sweep_ctx *c, const halo_json *root, halo_sweep_exp *e);
/* Frees what halo_sweep_load_paper allocated. */
void halo_sweep_free_paper(halo_sweep_exp *e);

/* ---- the points (expand.c) ---- */

/* Expands the sections, the sweep's axes, trace's lists and the explicit points of root into
 * e->pts and e->axes (e->mode and e->repeat already read). */
int halo_sweep_expand(const halo_sweep_ctx *c, const halo_json *root, halo_sweep_exp *e);

#endif
