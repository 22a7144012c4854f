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

/* Other spellings of halo's flags: DGL's (its examples' --batch_size, --num_epochs, --fan_out,
 * ...; an underscore matches a hyphen everywhere) and --out for --output. An alias applies to a
 * subcommand whose table has the flag it names and not a flag of its own spelling. */
static const struct {
    const char *alias; /* as typed, without "--" */
    const char *name;  /* halo's flag */
} aliases[] = {
    {"out", "output"},          {"batch-size", "batch"},      {"num-epochs", "epochs"},
    {"fan-out", "fanouts"},     {"fanout", "fanouts"},        {"num-hidden", "hidden"},
    {"num-parts", "parts"},     {"part-method", "method"},    {"num-trainers", "trainers"},
    {"num-machines", "machines"}, {"eval-batch-size", "eval-batch"},
    {"num-bases", "bases"},     {"n-epochs", "epochs"},       {"n-hidden", "hidden"},
    {"max-batches", "batches"}, {"batches", "max-batches"},   {"trainers-per-part", "trainers"},
    {"trainers-per-machine", "trainers"},
    {"num-heads", "heads"},     {"num-out-heads", "out-heads"}, /* DGL's GAT example */
    {NULL, NULL},
};

/* Whether the typed flag name s (len bytes) spells name, an underscore matching a hyphen. */
static bool same_name(const char *s, size_t len, const char *name)
{
    if (strlen(name) != len) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        if ((s[i] == '_' ? '-' : s[i]) != name[i]) {
            return false;
        }
    }
    return true;
}

/* The flag of opts that the typed long name s (len bytes) names, directly or by an alias. */
static const halo_opt *find_long(const halo_opt *opts, const char *s, size_t len)
{
    for (const halo_opt *p = opts; p != NULL && p->name != NULL; p++) {
        if (same_name(s, len, p->name)) {
            return p;
        }
    }
    for (int a = 0; aliases[a].alias != NULL; a++) {
        if (!same_name(s, len, aliases[a].alias)) {
            continue;
        }
        for (const halo_opt *p = opts; p != NULL && p->name != NULL; p++) {
            if (strcmp(p->name, aliases[a].name) == 0) {
                return p;
            }
        }
    }
    return NULL;
}

/* a[i], an underscore read as a hyphen (flags are spelt with hyphens). */
static char hy(char c)
{
    return c == '_' ? '-' : c;
}

size_t halo_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) {
        return la > lb ? la : lb;
    }
    size_t d[64][64]; /* d[i][j]: distance of a[0..i) and b[0..j) */
    for (size_t i = 0; i <= la; i++) {
        d[i][0] = i;
    }
    for (size_t j = 0; j <= lb; j++) {
        d[0][j] = j;
    }
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t best = d[i - 1][j - 1] + (hy(a[i - 1]) != b[j - 1]);
            best = d[i - 1][j] + 1 < best ? d[i - 1][j] + 1 : best;
            best = d[i][j - 1] + 1 < best ? d[i][j - 1] + 1 : best;
            if (i > 1 && j > 1 && hy(a[i - 1]) == b[j - 2] && hy(a[i - 2]) == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best) {
                best = d[i - 2][j - 2] + 1; /* two neighbours swapped ("gne" for "gen") */
            }
            d[i][j] = best;
        }
    }
    return d[la][lb];
}

/* Whether a and b have the same letters (a typo that swapped two). */
static bool anagram(const char *a, const char *b)
{
    int count[256] = {0};
    for (; *a; a++) {
        count[(unsigned char)hy(*a)]++;
    }
    for (; *b; b++) {
        count[(unsigned char)*b]--;
    }
    for (int i = 0; i < 256; i++) {
        if (count[i] != 0) {
            return false;
        }
    }
    return true;
}

const char *halo_did_you_mean(const char *typed, const char *const *names, int n)
{
    const char *best = NULL;
    size_t bestd = (size_t)-1, len = strlen(typed);
    for (int i = 0; i < n; i++) {
        size_t d = halo_edit_distance(typed, names[i]);
        size_t ln = strlen(names[i]);
        /* A prefix of a longer name ("--epoch" for --epochs, "--thread" for --threads). */
        if (len >= 3 && len < ln && strncmp(typed, names[i], len) == 0 && d > 1) {
            d = 1;
        }
        /* Ties go to the first name, or to one with the same letters as typed. */
        if (d < bestd || (d == bestd && anagram(typed, names[i]) && !anagram(typed, best))) {
            bestd = d;
            best = names[i];
        }
    }
    size_t limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
    return best != NULL && bestd <= limit ? best : NULL;
}

/* The closest flag (or alias) of opts to the typed long name, for "did you mean". */
static const char *suggest_flag(const halo_opt *opts, const char *typed, size_t len)
{
    char name[64];
    if (len >= sizeof name) {
        return NULL;
    }
    memcpy(name, typed, len);
    name[len] = '\0';
    const char *cand[160];
    int n = 0;
    for (const halo_opt *p = opts; p != NULL && p->name != NULL && n < 80; p++) {
        cand[n++] = p->name;
        for (int a = 0; aliases[a].alias != NULL && n < 160; a++) {
            if (strcmp(aliases[a].name, p->name) == 0) {
                cand[n++] = aliases[a].alias;
            }
        }
    }
    return halo_did_you_mean(name, cand, n);
}

/* halo's own flags (before the command): -v, -q, --verbose, --quiet, --version. */
static bool is_global_flag(const char *a)
{
    static const char *const g[] = {"-v", "-q", "--verbose", "--quiet", "--version"};
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        if (strcmp(a, g[i]) == 0) {
            return true;
        }
    }
    return false;
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
        char also[96] = "";
        size_t at = 0;
        for (int a = 0; aliases[a].alias != NULL && at < sizeof also - 32; a++) {
            if (strcmp(aliases[a].name, o->name) == 0) {
                at += (size_t)snprintf(also + at, sizeof also - at, "%s--%s",
                                       at == 0 ? " [also " : ", ", aliases[a].alias);
            }
        }
        if (at > 0) {
            snprintf(also + at, sizeof also - at, "]");
        }
        printf("  %-26s %s%s%s\n", left, o->help, def, also);
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
            o = find_long(opts, name, len);
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
            const char *eq = strchr(a, '=');
            size_t len = eq ? (size_t)(eq - a) : strlen(a);
            if (is_global_flag(a)) {
                return halo_errorf(HALO_EUSAGE, "%s: '%s' is a flag of halo itself: put it "
                                   "before the command (halo %s %s ...)", argv[0], a, a, argv[0]);
            }
            const char *hint = a[1] == '-' ? suggest_flag(opts, a + 2, len - 2) : NULL;
            if (hint != NULL) {
                return halo_errorf(HALO_EUSAGE, "%s: unknown option '%.*s' (did you mean --%s? "
                                   "see --help)", argv[0], (int)len, a, hint);
            }
            return halo_errorf(HALO_EUSAGE, "%s: unknown option '%.*s' (see --help)", argv[0],
                               (int)len, a);
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
