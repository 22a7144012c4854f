/* A small JSON reader (a tree of values) and writer (a string builder), for meta.json,
 * partition.json, metrics and checkpoints. */
#ifndef HALO_JSON_H
#define HALO_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { HALO_JSON_NULL, HALO_JSON_BOOL, HALO_JSON_NUMBER, HALO_JSON_STRING, HALO_JSON_ARRAY,
       HALO_JSON_OBJECT };

/* A parsed value. Arrays use items; objects use keys and items in file order. */
typedef struct halo_json {
    int type;                 /* HALO_JSON_* */
    bool boolean;             /* BOOL */
    double number;            /* NUMBER */
    char *string;             /* STRING, NUL-terminated */
    size_t len;               /* ARRAY / OBJECT element count */
    struct halo_json **items; /* ARRAY / OBJECT values */
    char **keys;              /* OBJECT keys */
} halo_json;

/* Parses text; errors name `where` and the line. A key given twice in one object is an error
 * (which of the two a reader would see is not defined). */
int halo_json_parse(const char *text, size_t len, const char *where, halo_json **out);
/* Reads and parses a file. */
int halo_json_load(const char *path, halo_json **out);
void halo_json_free(halo_json *v);

/* Member of an object, NULL if absent or v is not an object. */
const halo_json *halo_json_get(const halo_json *v, const char *key);
/* Typed member access; each returns HALO_EINPUT naming `where` and key when absent or mistyped. */
int halo_json_get_i64(const halo_json *v, const char *key, const char *where, int64_t *out);
int halo_json_get_f64(const halo_json *v, const char *key, const char *where, double *out);
int halo_json_get_str(const halo_json *v, const char *key, const char *where, const char **out);
/* Optional members: absent gives dflt; present but mistyped (a string "no" for a boolean) or,
 * for integers, outside [lo, hi] is HALO_EINPUT naming `where` and key. */
int halo_json_opt_bool(const halo_json *v, const char *key, const char *where, bool dflt,
                       bool *out);
int halo_json_opt_i64(const halo_json *v, const char *key, const char *where, int64_t dflt,
                      int64_t lo, int64_t hi, int64_t *out);

/* Growable string. */
typedef struct halo_sb {
    char *buf;  /* NUL-terminated contents */
    size_t len; /* bytes used, excluding the NUL */
    size_t cap; /* bytes allocated */
} halo_sb;

void halo_sb_init(halo_sb *sb);
void halo_sb_free(halo_sb *sb);
void halo_sb_putc(halo_sb *sb, char c);
void halo_sb_puts(halo_sb *sb, const char *s);
void halo_sb_printf(halo_sb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* JSON writer over a string builder; commas are placed automatically. */
typedef struct halo_jw {
    halo_sb sb;      /* output */
    int depth;       /* nesting depth */
    bool first[32];  /* whether the next element at each depth is the first */
    bool pretty;     /* indent with newlines (files) or compact (JSON Lines) */
    bool after_key;  /* a key was just written */
} halo_jw;

void halo_jw_init(halo_jw *w, bool pretty);
void halo_jw_free(halo_jw *w);
void halo_jw_obj_begin(halo_jw *w);
void halo_jw_obj_end(halo_jw *w);
void halo_jw_arr_begin(halo_jw *w);
void halo_jw_arr_end(halo_jw *w);
void halo_jw_key(halo_jw *w, const char *key);
void halo_jw_str(halo_jw *w, const char *s);
void halo_jw_i64(halo_jw *w, int64_t v);
void halo_jw_f64(halo_jw *w, double v);
void halo_jw_bool(halo_jw *w, bool v);
void halo_jw_null(halo_jw *w);
/* Writes a raw JSON fragment as one value (caller guarantees validity). */
void halo_jw_raw(halo_jw *w, const char *json);

#endif
