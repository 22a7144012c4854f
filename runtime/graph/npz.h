/* Streaming reader of .npz archives (zip files of .npy arrays, stored or deflated, zip64 too)
 * for the importers: one member array at a time through a bounded buffer, never a whole array
 * or archive in memory; every error is "FILE[:MEMBER]: what". */
#ifndef HALO_NPZ_H
#define HALO_NPZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Most dimensions of an array the reader accepts. */
#define HALO_NPY_MAXDIM 4

/* An open .npz archive: its central directory, read once at open. */
typedef struct halo_import_npz halo_import_npz;
/* One member array being read, element by element in file order. */
typedef struct halo_import_npy halo_import_npy;

/* What an array's .npy header says. */
typedef struct halo_import_npy_info {
    char descr[16];                 /* the dtype as numpy writes it ("<f4", "|u1") */
    char kind;                      /* 'f' float, 'i' signed, 'u' unsigned (bool counts as 'u') */
    int itemsize;                   /* bytes per element: 1, 2, 4 or 8 */
    bool fortran;                   /* column-major order (the first index varies fastest) */
    int ndim;                       /* dimensions, 0 .. HALO_NPY_MAXDIM */
    int64_t shape[HALO_NPY_MAXDIM]; /* extent of each dimension */
    int64_t count;                  /* elements in all (the product of shape) */
} halo_import_npy_info;

/* Opens path and reads its central directory; a missing file, a file that is not a zip archive
 * or one cut short (no end record) is HALO_EINPUT naming it. */
int halo_import_npz_open(const char *path, halo_import_npz **out);
void halo_import_npz_close(halo_import_npz *z);
/* The path as given to open. */
const char *halo_import_npz_path(const halo_import_npz *z);
/* True when the archive holds array `name` (member "name.npy"). */
bool halo_import_npz_has(const halo_import_npz *z, const char *name);
/* Number of members, and the array name of member i (its file name without ".npy"). */
int halo_import_npz_count(const halo_import_npz *z);
const char *halo_import_npz_name(const halo_import_npz *z, int i);

/* Opens array `name` of z and parses its .npy header; a missing member is an error listing the
 * arrays present, an unsupported dtype (not a little-endian number of 1, 2, 4 or 8 bytes) or a
 * header that does not match the member's size names the member. */
int halo_import_npy_open(halo_import_npz *z, const char *name, halo_import_npy **out);
const halo_import_npy_info *halo_import_npy_header(const halo_import_npy *a);
/* Reads the next n elements (in file order) as int64 (integer dtypes only; an unsigned value
 * above INT64_MAX reads as INT64_MAX) or as double (any dtype). Reading past the last element
 * or a truncated or corrupt member is an error naming the member. */
int halo_import_npy_read_i64(halo_import_npy *a, int64_t *out, int64_t n);
int halo_import_npy_read_f64(halo_import_npy *a, double *out, int64_t n);
/* After the last element: checks that the member ends there and that its CRC-32 matches the
 * archive's; then closes a (also call it, ignoring the result, to abandon a read). */
int halo_import_npy_close(halo_import_npy *a);

/* Sets "FILE:MEMBER: <formatted text>" and returns HALO_EINPUT. */
int halo_import_npy_fail(const halo_import_npy *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
