/* Unit tests of the importers' pieces: the plain/gzip line reader, field parsers, CSR builder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"
#include "graph/import.h"
#include "graph/textio.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static char base[64];

static int make_base(void **state)
{
    (void)state;
    snprintf(base, sizeof base, "/tmp/halo-import-XXXXXX");
    return mkdtemp(base) == NULL ? -1 : 0;
}

static int remove_base(void **state)
{
    (void)state;
    halo_rmtree(base);
    return 0;
}

/* Writes text to base/name, gzip-compressed when gz; returns the path (static buffer). */
static const char *put(const char *name, const char *text, size_t len, bool gz)
{
    static char path[4][256];
    static int k;
    char *p = path[k++ % 4];
    snprintf(p, 256, "%s/%s", base, name);
    if (gz) {
        gzFile f = gzopen(p, "wb");
        assert_non_null(f);
        assert_int_equal(gzwrite(f, text, (unsigned)len), (int)len);
        assert_int_equal(gzclose(f), Z_OK);
    } else {
        assert_int_equal(halo_file_write_all(p, text, len), 0);
    }
    return p;
}

/* A reader on a one-line file, positioned after that line (so errors say ":1:"). */
static halo_import_reader *one_line_reader(void)
{
    halo_import_reader *r;
    char *line;
    assert_int_equal(halo_import_reader_open(put("one.txt", "x\n", 2, false), &r), 0);
    assert_int_equal(halo_import_reader_next(r, &line), 1);
    return r;
}

static void reader_gives_same_lines_for_plain_and_gzip(void **state)
{
    (void)state;
    /* CRLF, an empty line, a 3 MB line (longer than a read chunk), no final newline. */
    size_t big = 3u << 20;
    size_t len = 0;
    char *text = halo_malloc(big + 64);
    len += (size_t)sprintf(text + len, "a,b\r\n\n");
    memset(text + len, 'z', big);
    len += big;
    len += (size_t)sprintf(text + len, "\nlast");
    for (int gz = 0; gz < 2; gz++) {
        halo_import_reader *r;
        char *line;
        assert_int_equal(halo_import_reader_open(put(gz ? "t.gz" : "t.txt", text, len, gz), &r), 0);
        assert_int_equal(halo_import_reader_next(r, &line), 1);
        assert_string_equal(line, "a,b");
        assert_int_equal(halo_import_reader_next(r, &line), 1);
        assert_string_equal(line, "");
        assert_int_equal(halo_import_reader_next(r, &line), 1);
        assert_int_equal(strlen(line), big);
        assert_true(line[0] == 'z' && line[big - 1] == 'z');
        assert_int_equal(halo_import_reader_next(r, &line), 1);
        assert_string_equal(line, "last");
        assert_int_equal(halo_import_reader_line(r), 4);
        assert_int_equal(halo_import_reader_next(r, &line), 0);
        assert_int_equal(halo_import_reader_next(r, &line), 0);
        halo_import_reader_close(r);
    }
    halo_free(text);
}

static void reader_reports_truncated_gzip_stream_with_line(void **state)
{
    (void)state;
    char text[8000];
    size_t len = 0;
    for (int i = 0; i < 1000; i++) {
        len += (size_t)sprintf(text + len, "%d,%d\n", i, i + 1);
    }
    const char *path = put("cut.gz", text, len, true);
    uint64_t size;
    assert_int_equal(halo_file_size(path, &size), 0);
    /* Cut inside the data, and cut only the last byte of the trailer: both are truncated. */
    uint64_t cuts[2] = {size / 2, size - 1};
    for (int c = 0; c < 2; c++) {
        assert_int_equal(truncate(path, (off_t)cuts[c]), 0);
        halo_import_reader *r;
        char *line;
        int rc, lines = 0;
        assert_int_equal(halo_import_reader_open(path, &r), 0);
        while ((rc = halo_import_reader_next(r, &line)) == 1) {
            lines++;
        }
        assert_int_equal(rc, HALO_EINPUT);
        assert_true(lines <= 1000);
        char want[256];
        snprintf(want, sizeof want, "%s:%d: truncated gzip stream", path, lines + 1);
        assert_non_null(strstr(halo_errmsg(), want));
        halo_import_reader_close(r);
        /* Rewrite whole for the second cut. */
        path = put("cut.gz", text, len, true);
    }
}

static void reader_reports_missing_file(void **state)
{
    (void)state;
    halo_import_reader *r;
    char path[128];
    snprintf(path, sizeof path, "%s/absent.csv.gz", base);
    assert_int_equal(halo_import_reader_open(path, &r), HALO_EINPUT);
    assert_null(r);
    assert_non_null(strstr(halo_errmsg(), "absent.csv.gz: cannot open: No such file"));
}

static void fields_split_on_separator_or_blanks(void **state)
{
    (void)state;
    char csv[] = " 1 , 2,,x ";
    char *cur = csv, *f;
    const char *want_csv[] = {"1", "2", "", "x"};
    assert_int_equal(halo_import_count_fields(" 1 , 2,,x ", ','), 4);
    for (int i = 0; i < 4; i++) {
        assert_true(halo_import_next_field(&cur, ',', &f));
        assert_string_equal(f, want_csv[i]);
    }
    assert_false(halo_import_next_field(&cur, ',', &f));

    char ws[] = "\t10   20\t 3.5  ";
    const char *want_ws[] = {"10", "20", "3.5"};
    assert_int_equal(halo_import_count_fields("\t10   20\t 3.5  ", 0), 3);
    cur = ws;
    for (int i = 0; i < 3; i++) {
        assert_true(halo_import_next_field(&cur, 0, &f));
        assert_string_equal(f, want_ws[i]);
    }
    assert_false(halo_import_next_field(&cur, 0, &f));
    assert_int_equal(halo_import_count_fields("   ", 0), 0);
    assert_true(halo_import_is_comment("  # note"));
    assert_true(halo_import_is_comment("% konect header"));
    assert_true(halo_import_is_comment(" \t"));
    assert_false(halo_import_is_comment("1 2 # trailing"));
}

static void parse_u64_rejects_non_numeric_negative_and_overflow(void **state)
{
    (void)state;
    halo_import_reader *r = one_line_reader();
    uint64_t v = 0;
    assert_int_equal(halo_import_parse_u64(r, "9223372036854775807", "id", &v), 0);
    assert_true(v == UINT64_C(9223372036854775807));
    const char *bad[] = {"", "-1", "+12", "12a", "1.0", "0x10", "abc", " 3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(halo_import_parse_u64(r, bad[i], "source id", &v), HALO_EINPUT);
        assert_non_null(strstr(halo_errmsg(), "one.txt:1: source id '"));
        assert_non_null(strstr(halo_errmsg(), "is not a non-negative integer"));
    }
    assert_int_equal(halo_import_parse_u64(r, "9223372036854775808", "id", &v), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "larger than 2^63-1"));
    halo_import_reader_close(r);
}

static void parse_label_maps_nan_and_empty_to_unlabelled(void **state)
{
    (void)state;
    halo_import_reader *r = one_line_reader();
    int32_t l = 99;
    const char *unl[] = {"", "nan", "NaN", "-1"};
    for (size_t i = 0; i < 4; i++) {
        l = 99;
        assert_int_equal(halo_import_parse_label(r, unl[i], &l), 0);
        assert_int_equal(l, -1);
    }
    assert_int_equal(halo_import_parse_label(r, "7", &l), 0);
    assert_int_equal(l, 7);
    assert_int_equal(halo_import_parse_label(r, "39.0", &l), 0);
    assert_int_equal(l, 39);
    const char *bad[] = {"cat", "2.5", "-3", "1000000", "1e9"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(halo_import_parse_label(r, bad[i], &l), HALO_EINPUT);
        assert_non_null(strstr(halo_errmsg(), "one.txt:1: label '"));
    }
    halo_import_reader_close(r);
}

static void parse_row_checks_width_and_values(void **state)
{
    (void)state;
    halo_import_reader *r = one_line_reader();
    float x[4] = {0};
    char ok[] = "0.5, -2,1e2";
    assert_int_equal(halo_import_parse_row(r, ok, ',', 3, x), 0);
    assert_true(x[0] == 0.5f && x[1] == -2.0f && x[2] == 100.0f);
    char ws[] = "  1 2\t3 4";
    assert_int_equal(halo_import_parse_row(r, ws, 0, 4, x), 0);
    assert_true(x[3] == 4.0f);
    char narrow[] = "1,2";
    assert_int_equal(halo_import_parse_row(r, narrow, ',', 3, x), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "one.txt:1: 2 values, expected 3"));
    char wide[] = "1,2,3,4";
    assert_int_equal(halo_import_parse_row(r, wide, ',', 3, x), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "4 values, expected 3"));
    char word[] = "1,abc,3";
    assert_int_equal(halo_import_parse_row(r, word, ',', 3, x), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "one.txt:1: value 2 'abc' is not a number"));
    char inf[] = "1,inf,3";
    assert_int_equal(halo_import_parse_row(r, inf, ',', 3, x), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "not a finite number"));
    char empty[] = "1,,3";
    assert_int_equal(halo_import_parse_row(r, empty, ',', 3, x), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "value 2 '' is not a number"));
    halo_import_reader_close(r);
}

/* Edges 0->1, 1->2, 2->0, 3->3, 1->0, 0->1 over 4 nodes. */
static void add_sample_edges(halo_import_edges *e)
{
    const int32_t s[] = {0, 1, 2, 3, 1, 0}, d[] = {1, 2, 0, 3, 0, 1};
    for (int i = 0; i < 6; i++) {
        halo_import_edges_add(e, s[i], d[i]);
    }
}

static void build_csr_symmetrises_sorts_and_drops_duplicates(void **state)
{
    (void)state;
    halo_import_edges e = {0};
    halo_import_csr_stats st;
    int64_t indptr[5], edges;
    int32_t *indices;
    add_sample_edges(&e);
    halo_import_build_csr(&e, 4, false, indptr, &indices, &edges, &st);
    /* Undirected pairs {0,1} {1,2} {0,2}; node 3's self loop dropped. */
    const int64_t want_ptr[5] = {0, 2, 4, 6, 6};
    const int32_t want_idx[6] = {1, 2, 0, 2, 0, 1};
    assert_int_equal(edges, 6);
    assert_memory_equal(indptr, want_ptr, sizeof want_ptr);
    assert_memory_equal(indices, want_idx, sizeof want_idx);
    assert_int_equal(st.input_edges, 6);
    assert_int_equal(st.self_loops, 1);
    assert_int_equal(st.duplicates, 2); /* 1->0 repeats 0->1, and 0->1 is given twice */
    assert_null(e.src);
    halo_free(indices);
}

static void build_csr_directed_keeps_edges_as_given(void **state)
{
    (void)state;
    halo_import_edges e = {0};
    halo_import_csr_stats st;
    int64_t indptr[5], edges;
    int32_t *indices;
    add_sample_edges(&e);
    halo_import_build_csr(&e, 4, true, indptr, &indices, &edges, &st);
    /* Row v: sources of edges into v. 0<-{2,1} 1<-{0,0} 2<-{1} 3<-{3}. */
    const int64_t want_ptr[5] = {0, 2, 4, 5, 6};
    const int32_t want_idx[6] = {1, 2, 0, 0, 1, 3};
    assert_int_equal(edges, 6);
    assert_memory_equal(indptr, want_ptr, sizeof want_ptr);
    assert_memory_equal(indices, want_idx, sizeof want_idx);
    assert_int_equal(st.self_loops + st.duplicates, 0);
    halo_free(indices);
}

/* True when dir holds no entry whose name starts with prefix. */
static bool nothing_named(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    bool none = true;
    while (d != NULL && (e = readdir(d)) != NULL) {
        none = none && strncmp(e->d_name, prefix, strlen(prefix)) != 0;
    }
    if (d != NULL) {
        closedir(d);
    }
    return none;
}

static void edgelist_unknown_label_id_fails_without_output(void **state)
{
    (void)state;
    const char *el = put("g.txt", "5 6\n6 7\n", 8, false);
    const char *lab = put("lab.txt", "5 0\n6 1\n8 1\n", 12, false);
    char out[128];
    snprintf(out, sizeof out, "%s/gout", base);
    halo_import_opts o = {.labels = lab};
    assert_int_equal(halo_import_edgelist(el, out, &o), HALO_EINPUT);
    assert_non_null(strstr(halo_errmsg(), "lab.txt:3: node id 8 does not appear in the edge list"));
    assert_true(nothing_named(base, "gout"));
}

static void edgelist_import_loads_back_with_dense_ids(void **state)
{
    (void)state;
    const char *el = put("h.txt", "# c\n30 10\n10 20\n", 16, false);
    char out[128];
    snprintf(out, sizeof out, "%s/hout", base);
    halo_import_opts o = {.directed = true, .name = "h"};
    assert_int_equal(halo_import_edgelist(el, out, &o), 0);
    halo_graph *g;
    assert_int_equal(halo_graph_load(out, &g), 0);
    /* 30->0, 10->1, 20->2; edges 0->1, 1->2: row 1 = {0}, row 2 = {1}. */
    const int64_t want_ptr[4] = {0, 0, 1, 2};
    const int32_t want_idx[2] = {0, 1};
    assert_int_equal(g->nodes, 3);
    assert_int_equal(g->edges, 2);
    assert_true(g->directed);
    assert_string_equal(g->name, "h");
    assert_memory_equal(g->indptr, want_ptr, sizeof want_ptr);
    assert_memory_equal(g->indices, want_idx, sizeof want_idx);
    halo_graph_free(g);
    char path[256];
    snprintf(path, sizeof path, "%s/%s", out, HALO_IMPORT_ORIG_ID);
    halo_map m;
    assert_int_equal(halo_map_file(path, 24, &m), 0);
    const int64_t want_orig[3] = {30, 10, 20};
    assert_memory_equal(m.data, want_orig, sizeof want_orig);
    halo_unmap(&m);
}

static void default_name_strips_directories_and_extensions(void **state)
{
    (void)state;
    char n[64];
    halo_import_default_name("data/web-Google.txt.gz", true, n, sizeof n);
    assert_string_equal(n, "web-Google");
    halo_import_default_name("edges", true, n, sizeof n);
    assert_string_equal(n, "edges");
    halo_import_default_name("/x/ogbn_arxiv/", false, n, sizeof n);
    assert_string_equal(n, "ogbn_arxiv");
    halo_import_default_name("a.b.c", true, n, sizeof n);
    assert_string_equal(n, "a.b");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reader_gives_same_lines_for_plain_and_gzip),
        cmocka_unit_test(reader_reports_truncated_gzip_stream_with_line),
        cmocka_unit_test(reader_reports_missing_file),
        cmocka_unit_test(fields_split_on_separator_or_blanks),
        cmocka_unit_test(parse_u64_rejects_non_numeric_negative_and_overflow),
        cmocka_unit_test(parse_label_maps_nan_and_empty_to_unlabelled),
        cmocka_unit_test(parse_row_checks_width_and_values),
        cmocka_unit_test(build_csr_symmetrises_sorts_and_drops_duplicates),
        cmocka_unit_test(build_csr_directed_keeps_edges_as_given),
        cmocka_unit_test(edgelist_unknown_label_id_fails_without_output),
        cmocka_unit_test(edgelist_import_loads_back_with_dense_ids),
        cmocka_unit_test(default_name_strips_directories_and_extensions),
    };
    return cmocka_run_group_tests_name("import", tests, make_base, remove_base);
}
