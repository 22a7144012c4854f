/* Files and directories: whole-file I/O, read-only mmap with size checks, checksums, and
 * atomic directory output (write into a temporary sibling, fsync, rename). */
#ifndef HALO_FS_H
#define HALO_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Opens an input file read-only (O_CLOEXEC) into *fd; refuses, naming the file and what it
 * is, anything that is not a regular file (a directory, FIFO, device or socket) before reading
 * from it, and never blocks on a FIFO. Every input file is opened through here (or checked with
 * halo_input_check when a library opens it by name). */
int halo_input_open(const char *path, int *fd);
/* halo_input_open's checks without keeping the file open. */
int halo_input_check(const char *path);
/* Reads a whole file into a NUL-terminated buffer (halo_free it). */
int halo_file_read_all(const char *path, char **out, size_t *len);
/* Creates/overwrites path with n bytes and fsyncs it. */
int halo_file_write_all(const char *path, const void *buf, size_t n);
/* Atomically replaces path: writes path.tmp-PID, fsyncs, renames over path. */
int halo_file_write_atomic(const char *path, const void *buf, size_t n);
/* Size of a file, or HALO_EIO naming it. */
int halo_file_size(const char *path, uint64_t *size);
bool halo_path_exists(const char *path);
bool halo_is_dir(const char *path);
/* Whether a and b name the same existing file (device and inode). */
bool halo_same_file(const char *a, const char *b);

/* A read-only mapping. */
typedef struct halo_map {
    void *data;  /* mapped bytes (NULL for an empty file) */
    size_t size; /* length in bytes */
} halo_map;

/* Maps path read-only; fails naming the file when its size differs from expect
 * (pass SIZE_MAX to accept any size). */
int halo_map_file(const char *path, size_t expect, halo_map *m);
void halo_unmap(halo_map *m);

/* CRC-32 (zlib) over a buffer, continuing from crc (start with 0). */
uint32_t halo_crc32(uint32_t crc, const void *buf, size_t n);
/* CRC-32 of a whole file, streamed. */
int halo_file_crc32(const char *path, uint32_t *crc);

/* Whether final may be (re)written as an output directory of this kind: it must be absent, an
 * empty directory, or a directory holding `marker` (the file every previous output of the kind
 * has, e.g. "partition.json"). Anything else -- a regular file such as an input, a directory
 * of another kind -- is refused (HALO_EUSAGE) naming final and `kind`, so that nothing that is
 * not a previous output of the same kind is ever replaced. */
int halo_output_check(const char *final, const char *marker, const char *kind);

/* The same rule for a single-file output (--metrics, --timeline, a trace, a profile, a chart):
 * path must be absent, an empty regular file, or a regular file that looks like a previous
 * output of this kind -- its first bytes are `sig` or, with anywhere, its first 4 KiB hold
 * `sig` (a profile may start with the user's comment lines). Anything else (an input graph's
 * array, a policy, a directory) is refused (HALO_EUSAGE) naming path and kind. Call it before
 * the work whose result is written, so a refusal costs nothing. */
int halo_output_file_check(const char *path, const char *kind, const char *sig, bool anywhere);

/* Atomic output directory. halo_outdir_begin checks final with halo_output_check (marker,
 * kind), creates an empty temporary sibling of final (final.tmp-PID) and returns its path in
 * tmp; halo_outdir_commit fsyncs every file in it and renames it to final (replacing an
 * existing directory only after the new one is whole); halo_outdir_abort removes the
 * temporary directory. */
int halo_outdir_begin(const char *final, const char *marker, const char *kind, char *tmp,
                      size_t tmpsize);
int halo_outdir_commit(const char *tmp, const char *final);
void halo_outdir_abort(const char *tmp);

/* Removes a directory tree (best effort). */
void halo_rmtree(const char *path);
/* mkdir -p. */
int halo_mkdir_p(const char *path);
/* Joins dir and name into out (snprintf semantics; fails when it does not fit). */
int halo_path_join(char *out, size_t size, const char *dir, const char *name);

/* Buffered sequential writer for big arrays (used by generators and partitioners). */
typedef struct halo_writer halo_writer;
int halo_writer_open(const char *path, halo_writer **out);
int halo_writer_put(halo_writer *w, const void *buf, size_t n);
/* Flushes, fsyncs, closes and frees; reports the CRC-32 and byte count of what was written. */
int halo_writer_close(halo_writer *w, uint32_t *crc, uint64_t *bytes);
/* Closes without error checks (on an error path). */
void halo_writer_discard(halo_writer *w);

#endif
