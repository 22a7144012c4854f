/* Course labs (`halo lab`): four autograded policy labs. Each lab builds its graphs, partitions
 * and traces from a seed, computes its baselines with shipped policies at grading time, runs the
 * student's policy once per criterion in a forked child (sandboxed hooks, a wall-clock limit,
 * killed on timeout) and scores it between the baselines. The lab folders with their READMEs and
 * starters are experiments/labs/labN-NAME/; docs/labs.md is the guide.
 *
 *   halo_lab_opts o;
 *   halo_lab_opts_default(&o);
 *   o.lab = 3; o.student = "student.lua"; o.seed = 42;
 *   halo_lab_result r;
 *   HALO_CHECK(halo_lab_grade(&o, &r));   // errors: bad lab number, unreadable file, a baseline
 *   halo_lab_print_table(&r, stdout);     // a failing student policy is a zero, not an error
 */
#ifndef HALO_LAB_H
#define HALO_LAB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Labs, numbered 1..HALO_LAB_COUNT. */
#define HALO_LAB_COUNT 4
/* Most criteria of one lab. */
#define HALO_LAB_MAX_CRITERIA 4

/* One criterion of a grade. Scores interpolate value between `zero` (no marks) and `full`. */
typedef struct halo_lab_criterion {
    char name[40];  /* short name, e.g. "cut_sbm" */
    char unit[40];  /* what value measures, e.g. "edge cut fraction" */
    double value;   /* the student's figure (NAN when it did not run) */
    double zero;    /* the figure that scores 0 (a baseline computed at grading time) */
    double full;    /* the figure that scores full marks (the other baseline) */
    double score;   /* marks earned, 0..max */
    double max;     /* marks available */
    double seconds; /* wall time of the criterion */
    char msg[320];  /* one line: why it scored what it scored (control characters stripped) */
} halo_lab_criterion;

/* A whole grade. */
typedef struct halo_lab_result {
    int lab;           /* 1..HALO_LAB_COUNT */
    char name[32];     /* folder name, e.g. "lab1-partition" */
    bool check;        /* the public check (fixed small graph) */
    uint64_t seed;     /* seed the graphs were made from */
    char student[256]; /* policy file graded */
    int ncriteria;     /* entries of criteria */
    halo_lab_criterion criteria[HALO_LAB_MAX_CRITERIA];
    double score;   /* sum of the criteria's scores */
    double max;     /* sum of their max */
    double seconds; /* wall time of the whole grade */
} halo_lab_result;

/* How to grade. */
typedef struct halo_lab_opts {
    int lab;             /* 1..HALO_LAB_COUNT */
    const char *student; /* the student's policy file */
    uint64_t seed;       /* instructor's seed (grade); ignored by the public check */
    bool check;          /* public check: the lab's fixed seed and small graphs */
    double time_limit_s; /* wall clock per criterion that runs student code */
    int64_t budget;      /* instructions per hook call (0: the policy engine's default) */
    size_t mem_limit;    /* bytes per Lua state (0: the policy engine's default) */
    const char *root;    /* source tree with policies/ and experiments/clusters/ (NULL: built-in) */
    const char *exe;     /* the halo binary for child runs (NULL: /proc/self/exe) */
    const char *tmp;     /* scratch parent directory (NULL: $TMPDIR or /tmp) */
} halo_lab_opts;

/* Defaults: seed 1, 60 s per criterion, the engine's budget and memory limit. */
void halo_lab_opts_default(halo_lab_opts *o);

/* Folder name ("lab2-fanout") and one-line title of lab n; NULL when n is out of range. */
const char *halo_lab_name(int n);
const char *halo_lab_title(int n);
/* The hooks a lab's policy writes ("partition", "fanout", ...), for `halo lab list`. */
const char *halo_lab_hooks(int n);

/* Grades (or checks) o->student. Returns 0 whenever the grade was computed, even when the
 * student's policy scored 0 everywhere; a negative HALO_E* only for the grader's own trouble
 * (lab out of range, a student file that does not exist, a baseline that failed). */
int halo_lab_grade(const halo_lab_opts *o, halo_lab_result *res);

/* The human report: one table row per criterion, its message, the total. */
void halo_lab_print_table(const halo_lab_result *res, FILE *out);
/* One JSON object: lab, name, mode, seed, student, score (the total), max, seconds and
 * criteria (one object per criterion). */
void halo_lab_print_json(const halo_lab_result *res, FILE *out);

#endif
