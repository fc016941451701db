/*
 * file.c - whole-file reads and atomic writes through libuv's synchronous
 * file system calls (a NULL callback runs them on the calling thread).
 *
 * An atomic write goes to "<path>.XXXXXX" (".strata-XXXXXX" where the
 * name is too long for the suffix) in the same folder (so the
 * rename stays on one file system), is synced, then renamed over the
 * target.  On any failure the temporary file is removed: a reader sees the
 * old file or the complete new one, never a part.
 *
 * A read takes a regular file only (or "-", standard input): a FIFO would
 * block, /dev/zero would be read to the size limit, a folder is no input.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <uv.h>

#include "strata/core.h"
#include "core/stream.h"

#define DEFAULT_MAX ((size_t)1 << 30)

static int uv_err(int uverr, const char *what, const char *path) {
  int code = uverr == UV_ENOENT ? STRATA_ENOTFOUND : STRATA_EIO;
  if (uverr == UV_ENOMEM) code = STRATA_ENOMEM;
  return strata_error(code, "%s '%s': %s", what, path, uv_strerror(uverr));
}

static int read_fd(uv_file fd, const char *path, size_t max, strata_buf_t *b) {
  char chunk[65536];
  for (;;) {
    uv_fs_t req;
    uv_buf_t ub = uv_buf_init(chunk, sizeof chunk);
    int n = uv_fs_read(NULL, &req, fd, &ub, 1, -1, NULL);
    uv_fs_req_cleanup(&req);
    if (n < 0) return uv_err(n, "cannot read", path);
    if (n == 0) return 0;
    if (b->len + (size_t)n > max)
      return strata_error(STRATA_EBADINPUT, "'%s' is larger than %zu bytes",
                          path, max);
    int rc = strata_buf_append(b, chunk, (size_t)n);
    if (rc) return rc;
  }
}

/* What a file of this mode is, for "'PATH' is a FIFO, not a regular
 * file"; NULL for a regular file. */
static const char *not_regular(uint64_t mode) {
  switch (mode & S_IFMT) {
  case S_IFREG:
    return NULL;
  case S_IFIFO:
    return "a FIFO";
  case S_IFDIR:
    return "a directory";
  case S_IFCHR:
    return "a character device";
  case S_IFBLK:
    return "a block device";
  case S_IFSOCK:
    return "a socket";
  default:
    return "not a regular file";
  }
}

static int refuse_kind(const char *path, const char *kind) {
  return strata_error(STRATA_EBADINPUT, "'%s' is %s, not a regular file", path,
                      kind);
}

/* Open path for reading, only if it is a regular file of at most max
 * bytes.  A FIFO, device, folder or socket is refused by its stat before
 * it is opened (opening a device can act on it), and again by fstat after
 * (the path may change in between); O_NONBLOCK keeps even that open from
 * waiting for a FIFO's writer, and is cleared for the reads. */
static int open_regular(const char *path, size_t max, uv_file *out) {
  uv_fs_t req;
  const char *kind;
  int r = uv_fs_stat(NULL, &req, path, NULL);
  uint64_t mode = req.statbuf.st_mode;
  uv_fs_req_cleanup(&req);
  if (r == 0 && (kind = not_regular(mode))) return refuse_kind(path, kind);
  int fd =
      uv_fs_open(NULL, &req, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0, NULL);
  uv_fs_req_cleanup(&req);
  if (fd < 0) return uv_err(fd, "cannot open", path);
  r = uv_fs_fstat(NULL, &req, fd, NULL);
  mode = req.statbuf.st_mode;
  uint64_t size = req.statbuf.st_size;
  uv_fs_req_cleanup(&req);
  int flags = fcntl(fd, F_GETFL);
  if (r < 0)
    r = uv_err(r, "cannot stat", path);
  else if ((kind = not_regular(mode)))
    r = refuse_kind(path, kind);
  else if (size > max)
    r = strata_error(STRATA_EBADINPUT, "'%s' is larger than %zu bytes", path,
                     max);
  else if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
    r = strata_error(STRATA_EIO, "cannot read '%s': %s", path, strerror(errno));
  if (r) {
    uv_fs_close(NULL, &req, fd, NULL);
    uv_fs_req_cleanup(&req);
    return r;
  }
  *out = fd;
  return 0;
}

int strata_file_read(const char *path, size_t max, char **data, size_t *len) {
  uv_fs_t req;
  strata_buf_t b;
  int rc;
  uv_file fd = 0;
  int std_in = strcmp(path, "-") == 0;
  *data = NULL;
  if (len) *len = 0;
  strata_buf_init(&b);
  if (!max) max = DEFAULT_MAX;
  /* "-" is standard input, a pipe as often as a file */
  if (!std_in && (rc = open_regular(path, max, &fd))) return rc;
  rc = read_fd(fd, path, max, &b);
  if (!std_in) {
    uv_fs_close(NULL, &req, fd, NULL);
    uv_fs_req_cleanup(&req);
  }
  if (rc == 0 && !b.p) rc = strata_buf_append(&b, "", 0);
  if (rc) {
    strata_buf_free(&b);
    return rc;
  }
  *data = strata_buf_steal(&b, len);
  return 0;
}

static int write_all(uv_file fd, const char *path, const void *data,
                     size_t len) {
  const char *p = data;
  while (len > 0) {
    uv_fs_t req;
    size_t n = len > (1u << 30) ? (1u << 30) : len;
    uv_buf_t ub = uv_buf_init((char *)p, (unsigned)n);
    int w = uv_fs_write(NULL, &req, fd, &ub, 1, -1, NULL);
    uv_fs_req_cleanup(&req);
    if (w < 0) return uv_err(w, "cannot write", path);
    p += w;
    len -= (size_t)w;
  }
  return 0;
}

/* 1 if path exists and is neither a regular file nor a folder: a device
 * (/dev/null), a FIFO or a terminal.  Renaming over one would replace it
 * with a regular file (as root, /dev/null itself), so it is written in
 * place; it holds no old content a reader could see half-replaced. */
static int is_special(const char *path) {
  uv_fs_t req;
  int r = uv_fs_stat(NULL, &req, path, NULL);
  uint64_t mode = req.statbuf.st_mode;
  uv_fs_req_cleanup(&req);
  return r == 0 && (mode & S_IFMT) != S_IFREG && (mode & S_IFMT) != S_IFDIR;
}

static int write_in_place(const char *path, const void *data, size_t len) {
  uv_fs_t req;
  int fd = uv_fs_open(NULL, &req, path, O_WRONLY, 0, NULL), rc;
  uv_fs_req_cleanup(&req);
  if (fd < 0) return uv_err(fd, "cannot open", path);
  rc = write_all(fd, path, data, len);
  uv_fs_close(NULL, &req, fd, NULL);
  uv_fs_req_cleanup(&req);
  return rc;
}

static int write_atomic(const char *path, const void *data, size_t len,
                        int sync) {
  uv_fs_t req;
  int rc = 0, fd;
  char *tmpl = NULL;
  if (strcmp(path, "-") == 0) {
    if (fwrite(data, 1, len, st__stdout()) != len || fflush(st__stdout()) != 0)
      return strata_error(STRATA_EIO, "cannot write to standard output");
    return 0;
  }
  if (!*path)
    return strata_error(STRATA_EBADINPUT,
                        "an empty output path: name a file (or - for "
                        "standard output)");
  if (is_special(path)) return write_in_place(path, data, len);
  size_t n = strlen(path) + 16;
  tmpl = strata_malloc(n);
  if (!tmpl) return strata_error(STRATA_ENOMEM, "out of memory");
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (strlen(base) + 7 <= 255) { /* NAME_MAX of the common file systems */
    snprintf(tmpl, n, "%s.XXXXXX", path);
  } else { /* a name too long for the suffix: a short one beside it */
    snprintf(tmpl, n, "%.*s.strata-XXXXXX", (int)(base - path), path);
  }
  fd = uv_fs_mkstemp(NULL, &req, tmpl, NULL);
  if (fd >= 0) snprintf(tmpl, n, "%s", req.path);
  uv_fs_req_cleanup(&req);
  if (fd < 0) {
    rc = uv_err(fd, "cannot create a temporary file next to", path);
    goto out;
  }
  /* mkstemp creates the file 0600; an output file gets the usual
   * permissions (0666 less the umask), like one made by open(2) */
  mode_t mask = umask(0);
  umask(mask);
  int ch = uv_fs_fchmod(NULL, &req, fd, 0666 & ~mask, NULL);
  uv_fs_req_cleanup(&req);
  if (ch < 0)
    strata_log(STRATA_LOG_DEBUG, "chmod %s: %s", tmpl, uv_strerror(ch));
  rc = write_all(fd, path, data, len);
  if (!rc && sync) {
    int s = uv_fs_fsync(NULL, &req, fd, NULL);
    uv_fs_req_cleanup(&req);
    if (s < 0) rc = uv_err(s, "cannot sync", path);
  }
  uv_fs_close(NULL, &req, fd, NULL);
  uv_fs_req_cleanup(&req);
  if (!rc) {
    int r = uv_fs_rename(NULL, &req, tmpl, path, NULL);
    uv_fs_req_cleanup(&req);
    if (r < 0) rc = uv_err(r, "cannot rename the output to", path);
  }
  if (rc) {
    uv_fs_unlink(NULL, &req, tmpl, NULL);
    uv_fs_req_cleanup(&req);
  }
out:
  strata_free(tmpl);
  return rc;
}

int strata_file_write_atomic(const char *path, const void *data, size_t len) {
  return write_atomic(path, data, len, 1);
}

int strata_file_write_atomic_nosync(const char *path, const void *data,
                                    size_t len) {
  return write_atomic(path, data, len, 0);
}
