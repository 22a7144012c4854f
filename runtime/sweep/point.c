/* A point's settings and their values: the run and trace keys, lookup, hashing, the canonical
 * text of a value, the labels and numbers read back from that text, and an experiment's
 * column names. */
#include "sweep/spec_int.h"

#include "core/json.h"
#include "core/mem.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define M_SIM HALO_SWEEP_M(HALO_SWEEP_SIM)
#define M_RUN HALO_SWEEP_M(HALO_SWEEP_RUN)
#define M_TRACE HALO_SWEEP_M(HALO_SWEEP_TRACE)
#define M_PART HALO_SWEEP_M(HALO_SWEEP_PARTITION)

const halo_sweep_runkey halo_sweep_runkeys[] = {
    {"policy", "--policy", M_SIM | M_RUN | M_PART},
    {"set", NULL, M_SIM | M_RUN | M_PART},
    {"epochs", "--epochs", M_SIM | M_RUN | M_TRACE | M_PART},
    {"batch", "--batch", M_SIM | M_RUN | M_TRACE | M_PART},
    {"batching", "--batching", M_SIM | M_RUN | M_PART},
    {"fanouts", "--fanouts", M_SIM | M_RUN | M_TRACE | M_PART},
    {"hidden", "--hidden", M_SIM | M_RUN | M_PART},
    {"seed", "--seed", M_SIM | M_RUN | M_TRACE | M_PART},
    {"depth", "--depth", M_SIM | M_RUN | M_PART},
    {"sampler_threads", "--sampler-threads", M_SIM | M_RUN | M_PART},
    {"netem", "--netem", M_SIM | M_RUN},
    {"cluster", NULL, M_SIM},
    {"machines", NULL, M_SIM},
    {"trainers", NULL, M_SIM},
    {"lr", "--lr", M_RUN},
    {"dropout", "--dropout", M_RUN},
    {"weight_decay", "--weight-decay", M_RUN},
    {"device", "--device", M_RUN},
    {"threads", "--threads", M_RUN},
    {"eval", "--eval", M_RUN},
    {"eval_fanouts", "--eval-fanouts", M_RUN},
    {"eval_every", "--eval-every", M_RUN},
    {"eval_batch", "--eval-batch", M_RUN},
    {"check", "--check", M_RUN},
    {NULL, NULL, 0},
};

const char *const halo_sweep_tracekeys[] = {"policy", "policies",    "capacity",  "capacities",
                                            "set",    "max_batches", "row_bytes", NULL};

const char *const halo_sweep_all_policies[] = {"belady", "pagraph", "vip",        "fifo",
                                               "lru",    "lfu",     "massivegnn", NULL};
static const char *const mode_names[] = {"sim", "run", "trace", "partition", NULL};

const char *halo_sweep_mode_name(int mode)
{
    return mode >= 0 && mode <= HALO_SWEEP_PARTITION ? mode_names[mode] : "?";
}

const char *halo_sweep_get(const halo_sweep_point *p, const char *key)
{
    for (int i = 0; i < p->nkv; i++) {
        if (strcmp(p->kv[i].key, key) == 0) {
            return p->kv[i].val;
        }
    }
    return NULL;
}

uint64_t halo_sweep_hash(uint64_t h, const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s;; c++) {
        h ^= *c;
        h *= 0x100000001b3ull;
        if (*c == '\0') {
            break;
        }
    }
    return h;
}

void halo_sweep_hex(uint64_t h, char *out)
{
    /* splitmix64's finaliser spreads FNV's weak low bits */
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

void halo_sweep_fmt_num(double v, char *buf, size_t size)
{
    if (isnan(v)) {
        snprintf(buf, size, "NaN");
        return;
    }
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        snprintf(buf, size, "%.0f", v);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) {
            return;
        }
    }
}

void halo_sweep_label(const char *val, char *buf, size_t size)
{
    if (val[0] == '\0') {
        snprintf(buf, size, "(default)");
        return;
    }
    const char *slash = strrchr(val, '/');
    size_t n = strlen(val);
    if (n > 4 && strcmp(val + n - 4, ".lua") == 0) {
        const char *b = slash ? slash + 1 : val;
        snprintf(buf, size, "%.*s", (int)(val + n - 4 - b), b);
        return;
    }
    snprintf(buf, size, "%s", val);
}

bool halo_sweep_is_num(const char *s, double *out)
{
    if (s == NULL || s[0] == '\0' || isspace((unsigned char)s[0])) {
        return false;
    }
    char *end;
    double v = strtod(s, &end);
    if (*end != '\0' || !isfinite(v)) {
        return false;
    }
    if (out != NULL) {
        *out = v;
    }
    return true;
}

bool halo_sweep_in_list(const char *s, const char *const *list)
{
    for (int i = 0; list[i] != NULL; i++) {
        if (strcmp(list[i], s) == 0) {
            return true;
        }
    }
    return false;
}

/* "a, b, c" of a NULL-terminated list, for messages. */
void halo_sweep_list_text(const char *const *list, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; list[i] != NULL && n + 1 < size; i++) {
        int w = snprintf(buf + n, size - n, "%s%s", i ? ", " : "", list[i]);
        n += w > 0 ? (size_t)w : 0;
    }
}

const halo_sweep_runkey *halo_sweep_runkey_find(const char *name)
{
    for (const halo_sweep_runkey *k = halo_sweep_runkeys; k->name != NULL; k++) {
        if (strcmp(k->name, name) == 0) {
            return k;
        }
    }
    return NULL;
}

/* ---- values as text ---- */

/* Canonical text of a scalar, or of a list of scalars (comma-joined); -1 for anything else. */
int halo_sweep_canon(const halo_json *v, halo_sb *sb, int *type)
{
    char num[40];
    switch (v->type) {
    case HALO_JSON_STRING:
        halo_sb_puts(sb, v->string);
        *type = HALO_SWEEP_STR;
        return 0;
    case HALO_JSON_NUMBER:
        halo_sweep_fmt_num(v->number, num, sizeof num);
        halo_sb_puts(sb, num);
        *type = HALO_SWEEP_NUM;
        return 0;
    case HALO_JSON_BOOL:
        halo_sb_puts(sb, v->boolean ? "true" : "false");
        *type = HALO_SWEEP_BOOL;
        return 0;
    case HALO_JSON_ARRAY:
        if (v->len == 0) {
            return -1;
        }
        for (size_t i = 0; i < v->len; i++) {
            int t;
            if (v->items[i]->type == HALO_JSON_ARRAY || v->items[i]->type == HALO_JSON_OBJECT ||
                halo_sweep_canon(v->items[i], sb, &t) < 0) {
                return -1;
            }
            if (i + 1 < v->len) {
                halo_sb_putc(sb, ',');
            }
        }
        *type = HALO_SWEEP_STR;
        return 0;
    default: return -1;
    }
}

const char *halo_sweep_type_name(const halo_json *v)
{
    switch (v->type) {
    case HALO_JSON_STRING: return "a string";
    case HALO_JSON_NUMBER: return "a number";
    case HALO_JSON_BOOL: return "a boolean";
    case HALO_JSON_ARRAY: return "a list";
    case HALO_JSON_OBJECT: return "a table";
    default: return "nothing";
    }
}

/* Whether a column name is an axis, a measure or a derived column (or rep, seconds). */
bool halo_sweep_is_column(const halo_sweep_exp *e, const char *name)
{
    for (int i = 0; i < e->naxes; i++) {
        if (strcmp(e->axes[i], name) == 0) {
            return true;
        }
    }
    for (int i = 0; i < e->nmeasures; i++) {
        if (strcmp(e->measures[i], name) == 0) {
            return true;
        }
    }
    for (int i = 0; i < e->nderives; i++) {
        if (strcmp(e->derives[i].name, name) == 0) {
            return true;
        }
    }
    return strcmp(name, "reps") == 0;
}

/* Whether a name is an axis of e. */
bool halo_sweep_is_axis(const halo_sweep_exp *e, const char *name)
{
    for (int i = 0; i < e->naxes; i++) {
        if (strcmp(e->axes[i], name) == 0) {
            return true;
        }
    }
    return false;
}
