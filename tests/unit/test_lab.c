/* Unit tests of the lab grader's pure parts (lab/isolate.c, lab/lab.c): student text is cut to
 * one line without control characters, scores interpolate between the baselines whichever way
 * is better and are clamped, bad lab numbers and missing files are refused before any work.
 * The child processes themselves are exercised by tests/e2e/lab.sh (no fork here). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "lab/internal.h"
#include "lab/lab.h"

#include <math.h>
#include <string.h>

static void clean_strips_control_characters_and_keeps_one_line(void **state)
{
    (void)state;
    char s[64];
    snprintf(s, sizeof s, "a\x1b[31mb\tc\x7f\rd\nsecond line");
    halo_lab_clean(s);
    assert_string_equal(s, "a?[31mb?c??d");
    snprintf(s, sizeof s, "caf\xc3\xa9 ok");
    halo_lab_clean(s);
    assert_string_equal(s, "caf\xc3\xa9 ok"); /* UTF-8 bytes >= 0x80 are kept */
}

static double score_of(double value, double zero, double full)
{
    halo_lab_criterion c;
    memset(&c, 0, sizeof c);
    c.max = 50;
    c.value = value;
    c.zero = zero;
    c.full = full;
    halo_lab_interpolate(&c);
    return c.score;
}

static void interpolate_between_baselines_and_clamp(void **state)
{
    (void)state;
    /* higher is better (hit rate): LRU 0.1 -> 0, Belady 0.3 -> 50 */
    assert_true(fabs(score_of(0.2, 0.1, 0.3) - 25) < 1e-9);
    assert_true(fabs(score_of(0.1, 0.1, 0.3) - 0) < 1e-9);
    assert_true(fabs(score_of(0.4, 0.1, 0.3) - 50) < 1e-9);
    assert_true(fabs(score_of(0.0, 0.1, 0.3) - 0) < 1e-9);
    /* lower is better (edge cut, epoch time): random 0.75 -> 0, METIS 0.25 -> 50 */
    assert_true(fabs(score_of(0.375, 0.75, 0.25) - 37.5) < 1e-9);
    assert_true(fabs(score_of(0.9, 0.75, 0.25) - 0) < 1e-9);
    assert_true(fabs(score_of(0.1, 0.75, 0.25) - 50) < 1e-9);
    /* nothing to interpolate on, or no figure: 0 */
    assert_true(score_of(0.5, 0.5, 0.5) == 0);
    assert_true(score_of(NAN, 0.1, 0.3) == 0);
}

static void grade_refuses_bad_lab_and_missing_file(void **state)
{
    (void)state;
    halo_lab_opts o;
    halo_lab_opts_default(&o);
    halo_lab_result r;
    o.student = HALO_ROOT "/policies/default.lua";
    o.lab = 0;
    assert_int_equal(halo_lab_grade(&o, &r), HALO_EUSAGE);
    assert_non_null(strstr(halo_errmsg(), "no lab 0"));
    o.lab = HALO_LAB_COUNT + 1;
    assert_int_equal(halo_lab_grade(&o, &r), HALO_EUSAGE);
    o.lab = 1;
    o.student = "/nonexistent/student.lua";
    assert_int_equal(halo_lab_grade(&o, &r), HALO_EIO);
    assert_non_null(strstr(halo_errmsg(), "/nonexistent/student.lua: no such policy file"));
    o.student = HALO_ROOT "/policies";
    assert_int_equal(halo_lab_grade(&o, &r), HALO_EIO);
}

static void labs_are_named(void **state)
{
    (void)state;
    assert_string_equal(halo_lab_name(1), "lab1-partition");
    assert_string_equal(halo_lab_name(4), "lab4-adaptive");
    assert_null(halo_lab_name(0));
    assert_null(halo_lab_title(HALO_LAB_COUNT + 1));
    for (int n = 1; n <= HALO_LAB_COUNT; n++) {
        assert_non_null(halo_lab_hooks(n));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clean_strips_control_characters_and_keeps_one_line),
        cmocka_unit_test(interpolate_between_baselines_and_clamp),
        cmocka_unit_test(grade_refuses_bad_lab_and_missing_file),
        cmocka_unit_test(labs_are_named),
    };
    return cmocka_run_group_tests_name("lab", tests, NULL, NULL);
}
