/* Line-by-line reading of plain or gzip text (zlib detects which) for the importers, and the
 * field parsers they share; every error names the file and line. */
#ifndef HALO_TEXTIO_H
#define HALO_TEXTIO_H

#include <stdbool.h>
#include <stdint.h>

/* An open text file (plain or gzip). */
typedef struct halo_import_reader halo_import_reader;

/* Opens path for reading; a missing or unreadable file is HALO_EINPUT naming it. */
int halo_import_reader_open(const char *path, halo_import_reader **out);
/* Reads the next line into *line (NUL-terminated, without "\n" or "\r\n"; writable until the
 * next call). Returns 1 for a line, 0 at the end of the file, or a negative code: a corrupt or
 * truncated gzip stream or a read error, with "FILE:LINE: ..." as the message. */
int halo_import_reader_next(halo_import_reader *r, char **line);
/* Number of the line last returned (1-based; 0 before the first). */
int64_t halo_import_reader_line(const halo_import_reader *r);
/* The path as given to open. */
const char *halo_import_reader_path(const halo_import_reader *r);
/* Bytes of the file consumed so far and its size on disk (compressed), for progress. */
uint64_t halo_import_reader_offset(const halo_import_reader *r);
uint64_t halo_import_reader_size(const halo_import_reader *r);
void halo_import_reader_close(halo_import_reader *r);

/* Sets "FILE:LINE: <formatted text>" (the reader's current line) and returns HALO_EINPUT. */
int halo_import_fail(const halo_import_reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Cuts the next field off *cursor, in place. With sep != 0 fields are separated by that
 * character (CSV; blanks around a field are trimmed, an empty field is returned as "");
 * with sep == 0 fields are runs of non-blank characters (blank: space, tab, \v, \f, \r).
 * Returns false when no field is left. */
bool halo_import_next_field(char **cursor, char sep, char **field);
/* Number of fields halo_import_next_field would return for line (not modified). */
int halo_import_count_fields(const char *line, char sep);
/* True when line is empty or blank, or its first non-blank character is '#' or '%'. */
bool halo_import_is_comment(const char *line);

/* Parses a non-negative decimal integer (at most 2^63-1) that fills the whole field.
 * Errors say "<what> '<field>' is not a non-negative integer". */
int halo_import_parse_u64(const halo_import_reader *r, const char *field, const char *what,
                          uint64_t *out);
/* Parses a finite float that fills the whole field. */
int halo_import_parse_f32(const halo_import_reader *r, const char *field, const char *what,
                          float *out);
/* Parses a node label: an integer in [0, 10^6), or -1, "nan" (any case) or "" for unlabelled
 * (-1). An integral float such as "3.0" is accepted as the integer. */
int halo_import_parse_label(const halo_import_reader *r, const char *field, int32_t *out);
/* Parses a row of exactly `width` floats separated by sep into out (row is cut in place);
 * a row of another width is an error naming both widths. */
int halo_import_parse_row(const halo_import_reader *r, char *row, char sep, int width, float *out);

#endif
