/* Unit tests of halo sim validate's bias table (sweep/validate_out.c, halo_vgroups_print):
 * configurations grouped by whether a host's trainer processes outnumber its cores, the
 * pipeline and the emulated network, each group with its count and the signed median of each
 * error, worked out by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sweep/validate.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(groups_have_their_counts_and_signed_medians),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
