/* Unit tests of halo sim validate's bias table (sweep/validate_out.c, halo_vgroups_print):
 * configurations grouped by whether a host's trainer processes outnumber its cores, the
 * pipeline and the emulated network, each group with its count and the signed median of each
 * error, worked out by hand; and the machine-speed line (halo_vspeed_dev). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sweep/validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A result of `ranks` ranks at `depth`, netem choice `netem`, whose measured epoch is 1 s and
 * simulated epoch 1 + epoch_err / 100 s; its sampling CPU likewise when cpu_err is not 0. */
static halo_vresult result(int index, int ranks, int depth, int netem, double epoch_err,
                           double cpu_err)
{
    halo_vresult r;
    memset(&r, 0, sizeof r);
    r.c.index = index;
    r.c.ranks = ranks;
    r.c.depth = depth;
    r.c.netem = netem;
    r.cmp.measured[HALO_SIM_T_EPOCH] = 1.0;
    r.cmp.simulated[HALO_SIM_T_EPOCH] = 1.0 + epoch_err / 100;
    if (cpu_err != 0) {
        r.cmp.measured[HALO_SIM_T_SAMPLE_CPU] = 0.5;
        r.cmp.simulated[HALO_SIM_T_SAMPLE_CPU] = 0.5 * (1.0 + cpu_err / 100);
    }
    return r;
}

/* The table for r[n] on 2 cores, one host, as text (the caller frees it). */
static char *table(const halo_vresult *r, int n, bool markdown)
{
    static halo_vspace sp; /* large: not on the stack */
    memset(&sp, 0, sizeof sp);
    sp.nnetem = 2;
    snprintf(sp.netem[0], sizeof sp.netem[0], "off");
    snprintf(sp.netem[1], sizeof sp.netem[1], "lat=1ms");
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_non_null(out);
    halo_vgroups_print(&sp, r, n, 2, 0, out, markdown);
    fclose(out);
    return buf;
}

/* The line of text that starts with `start` (NULL: none). */
static const char *line_of(const char *text, const char *start)
{
    for (const char *p = text; p != NULL && *p != '\0';) {
        if (strncmp(p, start, strlen(start)) == 0) {
            return p;
        }
        p = strchr(p, '\n');
        p = p != NULL ? p + 1 : NULL;
    }
    return NULL;
}

static void groups_have_their_counts_and_signed_medians(void **state)
{
    (void)state;
    halo_vresult r[6] = {
        result(1, 2, 0, 0, 10, 0),   /* ranks <= cores, depth 0, no netem: +10, -10, +30 */
        result(2, 2, 0, 0, -10, 0),  /*   median +10 */
        result(3, 2, 0, 0, 30, -20), /*   sampling CPU of one: -20, "/1" */
        result(4, 4, 2, 0, 20, 0),   /* ranks > cores, pipelined, no netem: +20 */
        result(5, 2, 1, 1, -5, 0),   /* ranks <= cores, pipelined, netem: -5, -15: -10 */
        result(6, 1, 3, 1, -15, 0),
    };
    char *t = table(r, 6, false);
    const char *a = line_of(t, "ranks <= cores, depth 0, no netem ");
    const char *b = line_of(t, "ranks > cores, pipelined, no netem ");
    const char *c = line_of(t, "ranks <= cores, pipelined, netem ");
    assert_non_null(line_of(t, "bias by group"));
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    /* no row for a group nothing was drawn in */
    assert_null(line_of(t, "ranks > cores, depth 0"));
    assert_null(line_of(t, "ranks <= cores, pipelined, no netem"));
    int n;
    double e;
    char rest[256];
    assert_int_equal(sscanf(a + 36, "%d %lf%% %255[^\n]", &n, &e, rest), 3);
    assert_int_equal(n, 3);
    assert_true(e > 9.99 && e < 10.01);
    assert_non_null(strstr(rest, "-20.0%/1")); /* the sampling CPU: one of the three */
    assert_int_equal(sscanf(b + 36, "%d %lf%%", &n, &e), 2);
    assert_int_equal(n, 1);
    assert_true(e > 19.99 && e < 20.01);
    assert_int_equal(sscanf(c + 36, "%d %lf%%", &n, &e), 2);
    assert_int_equal(n, 2);
    assert_true(e > -10.01 && e < -9.99);
    free(t);
    /* markdown: a row per group, the count in its own column */
    t = table(r, 6, true);
    assert_non_null(line_of(t, "| ranks <= cores, depth 0, no netem | 3 | +10.0 |"));
    assert_non_null(line_of(t, "| ranks > cores, pipelined, no netem | 1 | +20.0 |"));
    assert_non_null(strstr(t, " -20.0 (1) |"));
    free(t);
}

/* The summary of s as text (the caller frees it). */
static char *summary(const halo_vsummary *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_non_null(out);
    halo_vsummary_print(s, out, false);
    fclose(out);
    return buf;
}

/* The speed probes against the profile: each taken as seconds per unit of work (a GEMM whose
 * flop/s read 20 % lower takes 25 % more seconds), the largest over the two probes and the two
 * times, a failed probe (0) left out; the summary's line says to calibrate beyond
 * HALO_VSPEED_DEV only. */
static void speed_drift_is_in_seconds_per_unit(void **state)
{
    (void)state;
    halo_vsummary s;
    memset(&s, 0, sizeof s);
    assert_true(halo_vspeed_dev(&s) < 0); /* not probed: no line */
    char *text = summary(&s);
    assert_null(line_of(text, "machine speed:"));
    free(text);
    s.speed = true;
    s.speed_prof[0] = 8e-9;
    s.speed_prof[1] = 200e9;
    s.speed_run[0][0] = 8e-9;
    s.speed_run[0][1] = 200e9;
    s.speed_run[1][0] = 8.4e-9;
    s.speed_run[1][1] = 200e9;
    assert_float_equal(halo_vspeed_dev(&s), 5.0, 1e-9);
    text = summary(&s);
    const char *l = line_of(text, "machine speed:");
    assert_non_null(l);
    assert_non_null(strstr(l, "sampler 8.00 ns per edge before the runs, 8.40 after (profile 8.00)"));
    assert_non_null(strstr(l, "within 5% of the profile\n"));
    free(text);
    s.speed_run[1][1] = 160e9;
    assert_float_equal(halo_vspeed_dev(&s), 25.0, 1e-9);
    text = summary(&s);
    l = line_of(text, "machine speed:");
    assert_non_null(l);
    assert_non_null(strstr(l, "GEMM 200.0 GFLOP/s before, 160.0 after (profile 200.0): up to 25%"));
    assert_non_null(strstr(l, "calibrate just before measuring"));
    free(text);
    s.speed_run[0][1] = 0; /* failed probes count for nothing */
    s.speed_run[1][1] = 0;
    assert_float_equal(halo_vspeed_dev(&s), 5.0, 1e-9);
}

/* The repeats' limit is set for three runs and scales with the mean range of n normal draws:
 * d2(5) / d2(3) = 2.326 / 1.693, d2(2) / d2(3) = 1.128 / 1.693; none below two runs; nine
 * runs at most. */
static void repeat_limit_scales_with_the_range_of_n_runs(void **state)
{
    (void)state;
    assert_true(fabs(halo_vrepeat_limit(0.10, 3) - 0.10) < 1e-12);
    assert_true(fabs(halo_vrepeat_limit(0.10, 5) - 0.10 * 2.326 / 1.693) < 1e-12);
    assert_true(fabs(halo_vrepeat_limit(0.10, 2) - 0.10 * 1.128 / 1.693) < 1e-12);
    assert_true(halo_vrepeat_limit(0.10, 5) > 0.137 && halo_vrepeat_limit(0.10, 5) < 0.138);
    assert_true(halo_vrepeat_limit(0.10, 1) == 0);
    assert_true(fabs(halo_vrepeat_limit(0.10, 12) - halo_vrepeat_limit(0.10, 9)) < 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(groups_have_their_counts_and_signed_medians),
        cmocka_unit_test(speed_drift_is_in_seconds_per_unit),
        cmocka_unit_test(repeat_limit_scales_with_the_range_of_n_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
