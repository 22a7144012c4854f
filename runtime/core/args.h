/* Command-line flags: one table per subcommand drives parsing and --help, so they never drift. */
#ifndef HALO_ARGS_H
#define HALO_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    HALO_OPT_FLAG,   /* bool, no value */
    HALO_OPT_INT,    /* int */
    HALO_OPT_I64,    /* int64_t */
    HALO_OPT_DOUBLE, /* double */
    HALO_OPT_STRING, /* const char * (points into argv) */
    HALO_OPT_LIST,   /* halo_strlist: repeatable string (e.g. --set a=1 --set b=2) */
};

/* A repeatable string option's values (point into argv). */
typedef struct halo_strlist {
    const char *v[64]; /* values in order */
    int n;             /* count */
} halo_strlist;

/* One flag. The table ends with an entry whose name is NULL. */
typedef struct halo_opt {
    const char *name;    /* long name without "--" */
    char shortname;      /* one-letter alias or 0 */
    int type;            /* HALO_OPT_* */
    void *dst;           /* where the value goes */
    const char *metavar; /* value placeholder in --help ("N", "FILE") */
    const char *help;    /* one line; the default is printed from *dst */
} halo_opt;

/* Or'ed into halo_opt.type. Numeric flags (INT, I64, DOUBLE) are counts, sizes, rates or seeds
 * and refuse a negative value unless HALO_OPT_SIGNED says that a negative one means something
 * (-1: "the policy's", "the first"). */
#define HALO_OPT_SIGNED 0x100
#define HALO_OPT_TYPE(t) ((t) & 0xff)

/* A subcommand's description for --help. */
typedef struct halo_cmd_help {
    const char *usage;   /* "halo gen rmat|sbm [flags] -o DIR" */
    const char *summary; /* one paragraph */
} halo_cmd_help;

/* The mini-batch size and epoch count that halo train, sim, trace record and sample share when
 * not given (train's and sim's option defaults hold the same values), so one command's default
 * run is another's. */
#define HALO_DEFAULT_BATCH 2000
#define HALO_DEFAULT_EPOCHS 3

/* Parses argv (argv[0] is the subcommand name). Positional arguments are returned in pos/npos
 * (pos must have room for argc entries). Every value is range-checked as it enters (see
 * HALO_OPT_SIGNED). Returns 0, 1 when
 * --help was printed (exit 0), or HALO_EUSAGE with a message naming the flag. */
int halo_args_parse(const halo_cmd_help *help, const halo_opt *opts, int argc, char **argv,
                    char **pos, int *npos);
/* Prints the --help text to stdout. */
void halo_args_help(const halo_cmd_help *help, const halo_opt *opts);

/* Edit distance of a and b: insertions, deletions, substitutions and swaps of two neighbours
 * (an underscore in a matches a hyphen in b). */
size_t halo_edit_distance(const char *a, const char *b);
/* The name of names[0..n) closest to typed when close enough to be a typo (or typed is a prefix
 * of it), else NULL: the "did you mean" of unknown flags and subcommands. */
const char *halo_did_you_mean(const char *typed, const char *const *names, int n);

/* Splits the comma list s in place into at most max elements v[0..n) and returns n; an empty
 * list, an empty element ("10,,25", "10,25,", ",10") or more than max elements is HALO_EUSAGE
 * naming what. Every comma-list flag is split here. */
int halo_split_list(char *s, const char *what, char **v, int max);

/* "s" unless n is 1, for counts in messages: "1 rank", "4 ranks". */
static inline const char *halo_plural(long long n)
{
    return n == 1 ? "" : "s";
}

/* Parses an integer / double with a message naming what on failure. */
int halo_parse_i64(const char *s, const char *what, int64_t *out);
int halo_parse_f64(const char *s, const char *what, double *out);

#endif
