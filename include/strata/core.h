/*
 * core.h - what every Strata module shares: error codes and messages,
 * allocation (with fault injection for tests), hashing, a growable byte
 * buffer, atomic file output and logging.
 *
 * Errors follow one convention everywhere: a function returns 0 on success
 * or a negative STRATA_E* code, and records a message a user can act on
 * (what went wrong, where, what to do) that strata_last_error() returns.
 * The message is per thread, so pool workers never clobber each other.
 */
#ifndef STRATA_CORE_H
#define STRATA_CORE_H

/* "Choose" (the planner searches it) or "the framework's default", for
 * every option that 0 and 1 both mean something for; an option whose 0
 * means nothing (a size, a count) takes 0 for the same. */
#define STRATA_AUTO (-1)

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, value, description).  The CLI maps each to an exit code. */
#define STRATA_ERRNO_MAP(X)                                                    \
  X(OK, 0, "success")                                                          \
  X(EINVAL, -1, "invalid argument")                                            \
  X(EBADINPUT, -2, "bad input")                                                \
  X(ENOMEM, -3, "out of memory")                                               \
  X(EIO, -4, "input/output error")                                             \
  X(EVERSION, -5, "unsupported format version")                                \
  X(ECORRUPT, -6, "corrupt data")                                              \
  X(ENOTFOUND, -7, "not found")                                                \
  X(EINFEASIBLE, -8, "infeasible")                                             \
  X(EINTERNAL, -9, "internal error")                                           \
  X(ECANCELED, -10, "canceled")                                                \
  X(EUNSUPPORTED, -11, "not supported")                                        \
  X(ETIMEDOUT, -12, "no plan within the time limit")

typedef enum {
#define STRATA_ERR_ENUM_(name, val, desc) STRATA_##name = (val),
  STRATA_ERRNO_MAP(STRATA_ERR_ENUM_)
#undef STRATA_ERR_ENUM_
} strata_errno_t;

/* Short description and symbolic name ("EBADINPUT") of an error code. */
const char *strata_strerror(int err);
const char *strata_err_name(int err);

/* Record a message for this thread and return err, so that a failure is
 * reported and forwarded in one statement:
 *   return strata_error(STRATA_EBADINPUT, "%s: op '%s' ...", path, name); */
int strata_error(int err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int strata_verror(int err, const char *fmt, va_list ap);
/* Prefix the current message with "prefix: " (context added by a caller). */
void strata_error_prefix(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/* The last message recorded on this thread ("" if none). */
const char *strata_last_error(void);
void strata_error_clear(void);

/* Allocation.  All of Strata (and cJSON, through its hooks) allocates
 * through these so that tests can make the Nth allocation fail. */
void *strata_malloc(size_t n);
void *strata_calloc(size_t count, size_t size);
void *strata_realloc(void *p, size_t n);
char *strata_strdup(const char *s);
char *strata_strndup(const char *s, size_t n);
void strata_free(void *p);
/* Make allocation number n (1-based, counted from this call) and every
 * later one fail; n <= 0 turns injection off.  Returns how many
 * allocations were attempted since the previous call. */
long strata_alloc_fail_at(long n);
/* 1 if an injected failure has happened since the last strata_alloc_fail_at. */
int strata_alloc_failed(void);

/* Call once at start-up: routes cJSON's allocations through the above. */
void strata_init(void);

/* The version of the library, "X.Y.Z". */
const char *strata_version(void);

/* 64-bit hashing (XXH64) with an incremental state for structural keys. */
typedef struct {
  uint64_t h;
} strata_hash_t;
uint64_t strata_hash64(const void *data, size_t len, uint64_t seed);
void strata_hash_init(strata_hash_t *hs, uint64_t seed);
void strata_hash_bytes(strata_hash_t *hs, const void *data, size_t len);
void strata_hash_u64(strata_hash_t *hs, uint64_t v);
void strata_hash_f64(strata_hash_t *hs, double v);
void strata_hash_str(strata_hash_t *hs, const char *s);
uint64_t strata_hash_final(const strata_hash_t *hs);

/* CRC32 (zlib's). */
uint32_t strata_crc32(const void *data, size_t len);

/* A growable byte buffer; always NUL-terminated after p[len]. */
typedef struct {
  char *p;
  size_t len;
  size_t cap;
  int oom; /* set once an append failed; later appends are no-ops */
} strata_buf_t;
void strata_buf_init(strata_buf_t *b);
void strata_buf_free(strata_buf_t *b);
int strata_buf_append(strata_buf_t *b, const void *data, size_t n);
int strata_buf_puts(strata_buf_t *b, const char *s);
int strata_buf_printf(strata_buf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Give up the memory to the caller (free with strata_free); b is reset. */
char *strata_buf_steal(strata_buf_t *b, size_t *len);
/* The text of a finished buffer into *text (free with strata_free), or
 * STRATA_ENOMEM (and b freed) when an append failed. */
int strata_buf_finish(strata_buf_t *b, char **text);

/* Files.  strata_file_read reads a regular file (a FIFO, device, folder
 * or socket is refused before anything is read) of at most max_bytes (0:
 * 1 GiB, checked on its size first) and adds a NUL.  strata_file_write_atomic
 * writes to a temporary file in the same folder, syncs it and renames it over
 * path, so readers see the old file or the whole new one, never a part; on
 * failure nothing is left behind. A path of "-" reads stdin or writes stdout.
 */
int strata_file_read(const char *path, size_t max_bytes, char **data,
                     size_t *len);
int strata_file_write_atomic(const char *path, const void *data, size_t len);
/* The same without syncing to disk first: for data that is checked on
 * reading (a cache), where speed matters more than surviving a crash. */
int strata_file_write_atomic_nosync(const char *path, const void *data,
                                    size_t len);

/* Logging to stderr. */
typedef enum {
  STRATA_LOG_ERROR = 0,
  STRATA_LOG_WARN = 1,
  STRATA_LOG_INFO = 2,
  STRATA_LOG_DEBUG = 3
} strata_log_level_t;
void strata_log_set_level(strata_log_level_t level);
strata_log_level_t strata_log_get_level(void);
void strata_log(strata_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Monotonic time in seconds, for reporting solve times. */
double strata_now(void);

/* Human-readable byte count ("1.50 GiB") into buf. */
const char *strata_fmt_bytes(double bytes, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
