/* File-system helpers behind invariant 6 (nothing is lost). */
#define _GNU_SOURCE
#include "core/fs.h"

#include "core/err.h"
#include "core/mem.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* What st is, for "not a regular file" messages. */
static const char *file_kind(const struct stat *st)
{
    if (S_ISDIR(st->st_mode)) {
        return "a directory";
    }
    if (S_ISFIFO(st->st_mode)) {
        return "a FIFO";
    }
    if (S_ISCHR(st->st_mode)) {
        return "a character device";
    }
    if (S_ISBLK(st->st_mode)) {
        return "a block device";
    }
    if (S_ISSOCK(st->st_mode)) {
        return "a socket";
    }
    return "not a regular file";
}

/* Every input file is opened here. O_NONBLOCK keeps the open of a FIFO without a writer from
 * blocking; fstat on the open descriptor then refuses anything that is not a regular file before
 * a byte is read (a FIFO or /dev/urandom would otherwise block or never end), and the flag is
 * cleared again for the reads. */
int halo_input_open(const char *path, int *fd_out)
{
    *fd_out = -1;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        return halo_errorf(HALO_EINPUT, "%s: cannot open: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return halo_errorf(HALO_EIO, "%s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return halo_errorf(HALO_EINPUT, "%s: is %s, not a regular file", path, file_kind(&st));
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        int e = errno;
        close(fd);
        return halo_errorf(HALO_EIO, "%s: %s", path, strerror(e));
    }
    *fd_out = fd;
    return 0;
}

int halo_input_check(const char *path)
{
    int fd;
    HALO_CHECK(halo_input_open(path, &fd));
    close(fd);
    return 0;
}

int halo_file_read_all(const char *path, char **out, size_t *len)
{
    int fd;
    HALO_CHECK(halo_input_open(path, &fd));
    FILE *f = fdopen(fd, "rb");
    if (f == NULL) {
        int e = errno;
        close(fd);
        return halo_errorf(HALO_EIO, "%s: %s", path, strerror(e));
    }
    size_t cap = 4096, n = 0;
    char *buf = halo_malloc(cap);
    for (;;) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n + 1 < cap) {
            if (ferror(f)) {
                fclose(f);
                halo_free(buf);
                return halo_errorf(HALO_EIO, "%s: read error", path);
            }
            break;
        }
        cap *= 2;
        buf = halo_realloc(buf, cap);
    }
    fclose(f);
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

static int write_fd_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n > (1u << 30) ? (1u << 30) : n);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int halo_file_write_all(const char *path, const void *buf, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return halo_errorf(HALO_EIO, "%s: %s", path, strerror(errno));
    }
    if (write_fd_all(fd, buf, n) < 0 || fsync(fd) < 0) {
        int e = errno;
        close(fd);
        return halo_errorf(HALO_EIO, "%s: %s", path, strerror(e));
    }
    if (close(fd) < 0) {
        return halo_errorf(HALO_EIO, "%s: %s", path, strerror(errno));
    }
    return 0;
}

int halo_file_write_atomic(const char *path, const void *buf, size_t n)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp-%d", path, (int)getpid()) >= (int)sizeof tmp) {
        return halo_errorf(HALO_EUSAGE, "%s: path too long", path);
    }
    int rc = halo_file_write_all(tmp, buf, n);
    if (rc < 0) {
        unlink(tmp);
        return rc;
    }
    if (rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        return halo_errorf(HALO_EIO, "%s: %s", path, strerror(e));
    }
    return 0;
}

int halo_file_size(const char *path, uint64_t *size)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        return halo_errorf(HALO_EINPUT, "%s: %s", path, strerror(errno));
    }
    *size = (uint64_t)st.st_size;
    return 0;
}

bool halo_path_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

bool halo_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int halo_map_file(const char *path, size_t expect, halo_map *m)
{
    m->data = NULL;
    m->size = 0;
    int fd;
    HALO_CHECK(halo_input_open(path, &fd));
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return halo_errorf(HALO_EIO, "%s: %s", path, strerror(e));
    }
    size_t size = (size_t)st.st_size;
    if (expect != SIZE_MAX && size != expect) {
        close(fd);
        return halo_errorf(HALO_EINPUT, "%s: size is %zu bytes, meta.json says %zu", path, size,
                           expect);
    }
    if (size > 0) {
        void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            close(fd);
            return halo_errorf(HALO_EIO, "%s: mmap: %s", path, strerror(e));
        }
        m->data = p;
    }
    close(fd);
    m->size = size;
    return 0;
}

void halo_unmap(halo_map *m)
{
    if (m->data != NULL) {
        munmap(m->data, m->size);
    }
    m->data = NULL;
    m->size = 0;
}

uint32_t halo_crc32(uint32_t crc, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    uLong c = crc;
    while (n > 0) {
        uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
        c = crc32(c, p, chunk);
        p += chunk;
        n -= chunk;
    }
    return (uint32_t)c;
}

int halo_file_crc32(const char *path, uint32_t *crc)
{
    halo_map m;
    HALO_CHECK(halo_map_file(path, SIZE_MAX, &m));
    if (m.data != NULL) {
        madvise(m.data, m.size, MADV_SEQUENTIAL);
    }
    *crc = halo_crc32(0, m.data, m.size);
    halo_unmap(&m);
    return 0;
}

int halo_path_join(char *out, size_t size, const char *dir, const char *name)
{
    int n = snprintf(out, size, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= size) {
        return halo_errorf(HALO_EUSAGE, "%s/%s: path too long", dir, name);
    }
    return 0;
}

int halo_mkdir_p(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        return halo_errorf(HALO_EUSAGE, "%s: path too long", path);
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0755) < 0 && errno != EEXIST) {
                return halo_errorf(HALO_EIO, "%s: %s", buf, strerror(errno));
            }
            *p = '/';
        }
    }
    if (mkdir(buf, 0755) < 0 && errno != EEXIST) {
        return halo_errorf(HALO_EIO, "%s: %s", buf, strerror(errno));
    }
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

void halo_rmtree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int halo_output_check(const char *final, const char *marker, const char *kind)
{
    struct stat st;
    if (stat(final, &st) < 0) {
        if (errno == ENOENT) {
            return 0;
        }
        return halo_errorf(HALO_EIO, "%s: %s", final, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) {
        return halo_errorf(HALO_EUSAGE, "%s: exists and is %s, not a previous %s directory; "
                           "refusing to replace it", final,
                           S_ISREG(st.st_mode) ? "a file" : file_kind(&st), kind);
    }
    char path[4096];
    HALO_CHECK(halo_path_join(path, sizeof path, final, marker));
    struct stat ms;
    if (stat(path, &ms) < 0 || !S_ISREG(ms.st_mode)) {
        DIR *d = opendir(final);
        bool empty = d != NULL;
        struct dirent *e;
        while (d != NULL && (e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
                empty = false;
                break;
            }
        }
        if (d != NULL) {
            closedir(d);
        }
        if (!empty) {
            return halo_errorf(HALO_EUSAGE, "%s: exists and is not a previous %s directory (no "
                               "%s); refusing to replace it", final, kind, marker);
        }
    }
    return 0;
}

bool halo_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

int halo_output_file_check(const char *path, const char *kind, const char *sig, bool anywhere)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        if (errno == ENOENT) {
            /* a new file: its directory must exist (fopen would say only "No such file") */
            char dir[4096];
            snprintf(dir, sizeof dir, "%s", path);
            char *slash = strrchr(dir, '/');
            if (slash != NULL) {
                slash[1] = '\0';
                struct stat ds;
                if (stat(dir, &ds) < 0 || !S_ISDIR(ds.st_mode)) {
                    return halo_errorf(HALO_EUSAGE, "%s: cannot write the %s: directory %s does "
                                       "not exist", path, kind, dir);
                }
            }
            return 0;
        }
        return halo_errorf(HALO_EIO, "%s: %s", path, strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) {
        return halo_errorf(HALO_EUSAGE, "%s: exists and is %s, not a previous %s; refusing to "
                           "replace it", path, file_kind(&st), kind);
    }
    if (st.st_size == 0) {
        return 0;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        return halo_errorf(HALO_EIO, "%s: %s", path, strerror(errno));
    }
    char head[4097];
    ssize_t n = read(fd, head, sizeof head - 1);
    close(fd);
    if (n < 0) {
        return halo_errorf(HALO_EIO, "%s: %s", path, strerror(errno));
    }
    head[n] = 0;
    size_t sl = strlen(sig);
    bool ok;
    if (anywhere) {
        ok = memmem(head, (size_t)n, sig, sl) != NULL;
    } else {
        ok = (size_t)n >= sl && memcmp(head, sig, sl) == 0;
    }
    if (!ok) {
        return halo_errorf(HALO_EUSAGE, "%s: exists and is not a previous %s; refusing to "
                           "replace it (remove it or choose another path)", path, kind);
    }
    return 0;
}

int halo_outdir_begin(const char *final, const char *marker, const char *kind, char *tmp,
                      size_t tmpsize)
{
    HALO_CHECK(halo_output_check(final, marker, kind));
    size_t n = strlen(final);
    while (n > 1 && final[n - 1] == '/') {
        n--;
    }
    if (snprintf(tmp, tmpsize, "%.*s.tmp-%d", (int)n, final, (int)getpid()) >= (int)tmpsize) {
        return halo_errorf(HALO_EUSAGE, "%s: path too long", final);
    }
    halo_rmtree(tmp);
    if (mkdir(tmp, 0755) < 0) {
        return halo_errorf(HALO_EIO, "%s: %s", tmp, strerror(errno));
    }
    return 0;
}

static int fsync_path(const char *path, int flags)
{
    int fd = open(path, flags | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* fsyncs every regular file below dir, then the directories themselves. */
static int fsync_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        return halo_errorf(HALO_EIO, "%s: %s", dir, strerror(errno));
    }
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL && rc == 0) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            continue;
        }
        char path[4096];
        rc = halo_path_join(path, sizeof path, dir, e->d_name);
        if (rc < 0) {
            break;
        }
        if (halo_is_dir(path)) {
            rc = fsync_tree(path);
        } else if (fsync_path(path, O_RDONLY) < 0) {
            rc = halo_errorf(HALO_EIO, "%s: fsync: %s", path, strerror(errno));
        }
    }
    closedir(d);
    if (rc == 0) {
        fsync_path(dir, O_RDONLY | O_DIRECTORY);
    }
    return rc;
}

int halo_outdir_commit(const char *tmp, const char *final)
{
    HALO_CHECK(fsync_tree(tmp));
    char old[4096];
    bool had_old = false;
    if (halo_path_exists(final)) {
        if (snprintf(old, sizeof old, "%s.old-%d", final, (int)getpid()) >= (int)sizeof old) {
            return halo_errorf(HALO_EUSAGE, "%s: path too long", final);
        }
        halo_rmtree(old);
        if (rename(final, old) < 0) {
            return halo_errorf(HALO_EIO, "%s: %s", final, strerror(errno));
        }
        had_old = true;
    }
    if (rename(tmp, final) < 0) {
        int e = errno;
        if (had_old) {
            rename(old, final);
        }
        return halo_errorf(HALO_EIO, "%s: %s", final, strerror(e));
    }
    if (had_old) {
        halo_rmtree(old);
    }
    return 0;
}

void halo_outdir_abort(const char *tmp)
{
    if (tmp != NULL && tmp[0] != '\0') {
        halo_rmtree(tmp);
    }
}

struct halo_writer {
    int fd;            /* open file */
    char path[4096];   /* for messages */
    unsigned char *buf; /* staging buffer */
    size_t used;       /* bytes staged */
    uint32_t crc;      /* running CRC-32 */
    uint64_t bytes;    /* bytes written so far */
};

#define HALO_WRITER_BUF (4u << 20)

int halo_writer_open(const char *path, halo_writer **out)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return halo_errorf(HALO_EIO, "%s: %s", path, strerror(errno));
    }
    halo_writer *w = HALO_NEW(halo_writer, 1);
    w->fd = fd;
    snprintf(w->path, sizeof w->path, "%s", path);
    w->buf = halo_malloc(HALO_WRITER_BUF);
    *out = w;
    return 0;
}

static int writer_flush(halo_writer *w)
{
    if (w->used == 0) {
        return 0;
    }
    w->crc = halo_crc32(w->crc, w->buf, w->used);
    if (write_fd_all(w->fd, w->buf, w->used) < 0) {
        return halo_errorf(HALO_EIO, "%s: %s", w->path, strerror(errno));
    }
    w->bytes += w->used;
    w->used = 0;
    return 0;
}

int halo_writer_put(halo_writer *w, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    while (n > 0) {
        size_t room = HALO_WRITER_BUF - w->used;
        size_t take = n < room ? n : room;
        memcpy(w->buf + w->used, p, take);
        w->used += take;
        p += take;
        n -= take;
        if (w->used == HALO_WRITER_BUF) {
            HALO_CHECK(writer_flush(w));
        }
    }
    return 0;
}

int halo_writer_close(halo_writer *w, uint32_t *crc, uint64_t *bytes)
{
    int rc = writer_flush(w);
    if (rc == 0 && fsync(w->fd) < 0) {
        rc = halo_errorf(HALO_EIO, "%s: fsync: %s", w->path, strerror(errno));
    }
    if (close(w->fd) < 0 && rc == 0) {
        rc = halo_errorf(HALO_EIO, "%s: %s", w->path, strerror(errno));
    }
    if (crc != NULL) {
        *crc = w->crc;
    }
    if (bytes != NULL) {
        *bytes = w->bytes;
    }
    halo_free(w->buf);
    halo_free(w);
    return rc;
}

void halo_writer_discard(halo_writer *w)
{
    if (w == NULL) {
        return;
    }
    close(w->fd);
    halo_free(w->buf);
    halo_free(w);
}
