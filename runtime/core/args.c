/* Table-driven flag parsing and help. */
#include "core/args.h"

#include "core/err.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int halo_parse_i64(const char *s, const char *what, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (errno != 0 || end == s || *end != '\0') {
        return halo_errorf(HALO_EUSAGE, "%s: '%s' is not an integer", what, s);
    }
    *out = v;
    return 0;
}

int halo_parse_f64(const char *s, const char *what, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite(v)) {
        return halo_errorf(HALO_EUSAGE, "%s: '%s' is not a number", what, s);
    }
    *out = v;
    return 0;
}

int halo_split_list(char *s, const char *what, char **v, int max)
{
    int n = 0;
    if (s[0] == '\0') {
        return halo_errorf(HALO_EUSAGE, "%s: empty list", what);
    }
    for (char *p = s;;) {
        char *comma = strchr(p, ',');
        if (comma != NULL) {
            *comma = '\0';
        }
        if (p[0] == '\0') {
            return halo_errorf(HALO_EUSAGE, "%s: element %d of the list is empty", what, n + 1);
        }
        if (n == max) {
            return halo_errorf(HALO_EUSAGE, "%s: more than %d elements", what, max);
        }
        v[n++] = p;
        if (comma == NULL) {
            return n;
        }
        p = comma + 1;
    }
}

/* A negative value of a flag that is a count or size. */
static int negative(const halo_opt *o, const char *what, const char *val, bool neg)
{
    if (neg && !(o->type & HALO_OPT_SIGNED)) {
        return halo_errorf(HALO_EUSAGE, "%s: %s is negative; it must be >= 0", what, val);
    }
    return 0;
}

static int set_value(const halo_opt *o, const char *val)
{
    char what[96];
    snprintf(what, sizeof what, "--%s", o->name);
    switch (HALO_OPT_TYPE(o->type)) {
    case HALO_OPT_INT: {
        int64_t v;
        HALO_CHECK(halo_parse_i64(val, what, &v));
        if (v < -2147483647LL || v > 2147483647LL) {
            return halo_errorf(HALO_EUSAGE, "%s: %s is out of range", what, val);
        }
        HALO_CHECK(negative(o, what, val, v < 0));
        *(int *)o->dst = (int)v;
        return 0;
    }
    case HALO_OPT_I64: {
        int64_t v;
        HALO_CHECK(halo_parse_i64(val, what, &v));
        HALO_CHECK(negative(o, what, val, v < 0));
        *(int64_t *)o->dst = v;
        return 0;
    }
    case HALO_OPT_DOUBLE: {
        double v;
        HALO_CHECK(halo_parse_f64(val, what, &v));
        HALO_CHECK(negative(o, what, val, v < 0));
        *(double *)o->dst = v;
        return 0;
    }
    case HALO_OPT_STRING: *(const char **)o->dst = val; return 0;
    case HALO_OPT_LIST: {
        halo_strlist *l = o->dst;
        if (l->n >= (int)(sizeof l->v / sizeof l->v[0])) {
            return halo_errorf(HALO_EUSAGE, "%s: given too many times", what);
        }
        l->v[l->n++] = val;
        return 0;
    }
    default: return halo_errorf(HALO_ESTATE, "%s: bad option type", what);
    }
}

void halo_args_help(const halo_cmd_help *help, const halo_opt *opts)
{
    printf("usage: %s\n\n%s\n", help->usage, help->summary);
    if (opts == NULL || opts[0].name == NULL) {
        return;
    }
    printf("\noptions:\n");
    for (const halo_opt *o = opts; o->name != NULL; o++) {
        char flag[64], left[80];
        if (HALO_OPT_TYPE(o->type) == HALO_OPT_FLAG) {
            snprintf(flag, sizeof flag, "--%s", o->name);
        } else {
            snprintf(flag, sizeof flag, "--%.30s %.20s", o->name, o->metavar ? o->metavar : "VALUE");
        }
        if (o->shortname) {
            snprintf(left, sizeof left, "-%c, %s", o->shortname, flag);
        } else {
            snprintf(left, sizeof left, "%s", flag);
        }
        char def[64] = "";
        switch (HALO_OPT_TYPE(o->type)) {
        case HALO_OPT_INT: snprintf(def, sizeof def, " (default %d)", *(int *)o->dst); break;
        case HALO_OPT_I64:
            snprintf(def, sizeof def, " (default %lld)", (long long)*(int64_t *)o->dst);
            break;
        case HALO_OPT_DOUBLE: snprintf(def, sizeof def, " (default %g)", *(double *)o->dst); break;
        case HALO_OPT_STRING:
            if (*(const char **)o->dst != NULL) {
                snprintf(def, sizeof def, " (default %s)", *(const char **)o->dst);
            }
            break;
        default: break;
        }
        printf("  %-26s %s%s\n", left, o->help, def);
    }
    printf("  %-26s %s\n", "-h, --help", "show this help");
}

int halo_args_parse(const halo_cmd_help *help, const halo_opt *opts, int argc, char **argv,
                    char **pos, int *npos)
{
    *npos = 0;
    bool only_pos = false;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || a[1] == '\0') {
            pos[(*npos)++] = argv[i];
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_pos = true;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            halo_args_help(help, opts);
            return 1;
        }
        const halo_opt *o = NULL;
        const char *val = NULL;
        if (a[1] == '-') {
            const char *name = a + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            for (const halo_opt *p = opts; p != NULL && p->name != NULL; p++) {
                if (strlen(p->name) == len && strncmp(p->name, name, len) == 0) {
                    o = p;
                    break;
                }
            }
            if (o != NULL && eq != NULL) {
                val = eq + 1;
            }
        } else if (a[2] == '\0') {
            for (const halo_opt *p = opts; p != NULL && p->name != NULL; p++) {
                if (p->shortname == a[1]) {
                    o = p;
                    break;
                }
            }
        }
        if (o == NULL) {
            /* A negative number is a positional value, not a flag. */
            char *end;
            strtod(a, &end);
            if (*end == '\0') {
                pos[(*npos)++] = argv[i];
                continue;
            }
            return halo_errorf(HALO_EUSAGE, "%s: unknown option '%s' (see --help)",
                               argv[0], a);
        }
        if (HALO_OPT_TYPE(o->type) == HALO_OPT_FLAG) {
            if (val != NULL) {
                return halo_errorf(HALO_EUSAGE, "%s: --%s takes no value", argv[0], o->name);
            }
            *(bool *)o->dst = true;
            continue;
        }
        if (val == NULL) {
            if (i + 1 >= argc) {
                return halo_errorf(HALO_EUSAGE, "%s: --%s needs a value", argv[0], o->name);
            }
            val = argv[++i];
        }
        int rc = set_value(o, val);
        if (rc < 0) {
            return halo_error_prefix(rc, "%s", argv[0]);
        }
    }
    return 0;
}
