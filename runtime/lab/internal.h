/* Internals of runtime/lab: the child-process runner and the four labs. */
#ifndef HALO_LAB_INTERNAL_H
#define HALO_LAB_INTERNAL_H

#include "lab/lab.h"
#include "policy/policy.h"

#include <stddef.h>

/* What every lab needs while it grades. */
typedef struct halo_lab_env {
    const halo_lab_opts *o;   /* the caller's options */
    char dir[4096];           /* scratch directory (removed at the end) */
    char root[4096];          /* tree holding policies/ and experiments/clusters/ */
    char exe[4096];           /* the halo binary */
    uint64_t seed;            /* seed of every graph, partition and trace */
    halo_policy_opts student; /* the student's policy, sandboxed, with the limits */
} halo_lab_env;

/* Work that runs student code: called in a forked child, fills c (value, score, msg) and
 * returns 0, or returns a negative HALO_E* (the message becomes c->msg, the score 0). */
typedef int (*halo_lab_child_fn)(void *arg, halo_lab_criterion *c);

/* Runs fn(arg, c) in a forked child in its own process group, with stdout and stderr sent to
 * /dev/null, and copies its criterion back. On a timeout the group is killed; a child that
 * crashes, is killed or times out leaves c->score 0 and a message. Returns 0 (the outcome is
 * in c) or a negative code when no child could be started. */
int halo_lab_isolate(halo_lab_child_fn fn, void *arg, double limit_s, halo_lab_criterion *c);

/* Runs the program argv[0] with argv (NULL-terminated) in its own process group, stdout and
 * stderr appended to log, killed after limit_s. Returns 0 on exit status 0, else a negative
 * code with a message naming the cause (the last "halo: error:" line of the log when there is
 * one). */
int halo_lab_spawn(const char *const *argv, const char *log, double limit_s);

/* Replaces control characters (and bytes of broken UTF-8 sequences are kept) by '?', and cuts
 * s at its first newline: student text printed by the grader stays on one line. */
void halo_lab_clean(char *s);

/* Sets c's score to max * clamp((value - zero) / (full - zero), 0, 1) (0 when full == zero). */
void halo_lab_interpolate(halo_lab_criterion *c);

/* A path under env->root (policies/lru.lua, experiments/clusters/perlmutter.lua). */
int halo_lab_rootpath(const halo_lab_env *env, const char *rel, char *out, size_t size);

/* The labs: fill res->criteria (names, max, baselines, the student's scores). */
int halo_lab_partition(halo_lab_env *env, halo_lab_result *res);
int halo_lab_fanout(halo_lab_env *env, halo_lab_result *res);
int halo_lab_cache(halo_lab_env *env, halo_lab_result *res);
int halo_lab_adaptive(halo_lab_env *env, halo_lab_result *res);

#endif
