/*
 * cache.c - solved stage subproblems kept on disk across runs, so that a
 * nightly re-plan after a small cluster change re-solves only what
 * changed.
 *
 * One file per cache folder, "stages.scache", read whole once per run and
 * indexed by key in an open-addressing table; entries are decoded only
 * when looked up.  New entries are kept in memory and written at the end
 * of the run in one go: under an exclusive lock on "stages.scache.lock"
 * the file is read again (another run may have added entries meanwhile),
 * merged with the new entries and replaced atomically (temporary file
 * renamed over it).  Readers never lock: they see the old file or the new
 * one, never a part, so the worst a race can do is lose an update (where
 * locks are not available), never corrupt a read.  One file instead of
 * one per subproblem: a warm run reads one file instead of hundreds, and
 * a cold run writes one.
 *
 * Layout (little-endian): magic "SSCH", format version (u32), layout tag
 * (u64), entry count (u32), CRC32 of the previous 20 bytes (u32); then per
 * entry: key (u64), payload length (u32), CRC32 of the payload (u32), the
 * payload.  The layout tag is a hash of the field tables below (names and
 * types), so a cache written by a build whose stage result had other
 * fields is ignored, never misread.  A file that is not a cache, or of
 * another version or layout, is ignored with a note (and replaced by the
 * next write); an entry that fails its checksum is skipped and solved
 * again; a file cut short keeps its entries before the cut.
 *
 * A stage result is written and read from ONE table of its fields
 * (result_fields, op_fields): adding a field to strata_stage_result_t is
 * one line there, and changes the layout tag by itself.
 *
 * The checksum covers bytes, not meaning: anyone who can write the folder
 * can write a well-formed entry.  So every entry is also checked as it is
 * read, against the range its field's table row gives (finite figures of
 * at least 0, counts, a settled status, names present and printable);
 * one that fails is dropped with a warning naming it and why, solved
 * again, and left out of the next write.  Only regular files are read or
 * locked: a FIFO, a device or a folder in their place turns caching off
 * for the run, with a warning.  A run killed while it writes leaves its
 * temporary file; every writer creates its temporary file only while it
 * holds the lock, so one found by a run that holds it is a dead run's and
 * is removed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/text.h"
#include "pipeline/sub.h"

#define CACHE_FORMAT 3u
#define FILE_HEADER 24
#define ENTRY_HEADER 16
#define MAX_FILE (1u << 30)
#define MAX_STR 4096
#define MAX_OPS 1000000
#define MAX_COUNT (1 << 30) /* devices, layers, variables */
#define MAX_FIG 1e24        /* bytes or seconds: far above any stage's */

/* ---- the fields of a stage result --------------------------------------- */

typedef enum { F_INT, F_DBL, F_STR } ftype_t;

/* What a field may hold (checked on reading, not part of the layout). */
typedef enum {
  V_STATUS, /* a settled status: optimal or infeasible */
  V_COUNT,  /* 0 .. MAX_COUNT */
  V_POS,    /* 1 .. MAX_COUNT */
  V_BOOL,   /* 0 or 1 */
  V_LAYER,  /* -1 .. MAX_COUNT */
  V_FIG,    /* finite, 0 .. MAX_FIG */
  V_REAL,   /* finite, -MAX_FIG .. MAX_FIG */
  V_BOUND,  /* V_REAL or -infinity (no bound) */
  V_GAP,    /* V_FIG or infinity (no bound) */
  V_NAME,   /* present, a name (st__name_check) */
  V_TEXT    /* NULL or a name */
} vclass_t;

typedef struct {
  const char *name;
  ftype_t type;
  size_t off;
  vclass_t v;
} field_t;

#define R_INT(f, v)                                                            \
  { #f, F_INT, offsetof(strata_stage_result_t, f), v }
#define R_DBL(f, v)                                                            \
  { #f, F_DBL, offsetof(strata_stage_result_t, f), v }
#define R_STR(f, v)                                                            \
  { #f, F_STR, offsetof(strata_stage_result_t, f), v }
#define O_INT(f, v)                                                            \
  { #f, F_INT, offsetof(strata_op_choice_t, f), v }
#define O_DBL(f, v)                                                            \
  { #f, F_DBL, offsetof(strata_op_choice_t, f), v }
#define O_STR(f, v)                                                            \
  { #f, F_STR, offsetof(strata_op_choice_t, f), v }

/* Every field of strata_stage_result_t but ops and n_ops (written after
 * them, one op_fields record per op).  A new field: one line here. */
static const field_t result_fields[] = {
    R_INT(status, V_STATUS),
    R_INT(devices, V_POS),
    R_INT(homogeneous, V_BOOL),
    R_DBL(alpha, V_FIG),
    R_DBL(objective, V_REAL),
    R_DBL(objective_bound, V_BOUND),
    R_DBL(gap, V_GAP),
    R_DBL(memory_redundancy_bytes, V_FIG),
    R_DBL(comm_bytes, V_FIG),
    R_DBL(comm_seconds, V_FIG),
    R_DBL(sync_seconds, V_FIG),
    R_DBL(compute_seconds, V_FIG),
    R_DBL(fwd_seconds, V_FIG),
    R_DBL(bwd_seconds, V_FIG),
    R_DBL(fwd_comm_seconds, V_FIG),
    R_DBL(bwd_comm_seconds, V_FIG),
    R_DBL(fwd_a2a_seconds, V_FIG),
    R_DBL(bwd_a2a_seconds, V_FIG),
    R_DBL(fwd_host_seconds, V_FIG),
    R_DBL(bwd_host_seconds, V_FIG),
    R_DBL(fwd_cp_seconds, V_FIG),
    R_DBL(bwd_cp_seconds, V_FIG),
    R_DBL(peak_memory_bytes, V_FIG),
    R_DBL(zero_redundancy_bytes, V_FIG),
    R_DBL(mem.weights, V_FIG),
    R_DBL(mem.gradients, V_FIG),
    R_DBL(mem.optimizer, V_FIG),
    R_DBL(mem.activations, V_FIG),
    R_DBL(mem.transient, V_FIG),
    R_DBL(mem.total, V_FIG),
    R_DBL(mem.expert_weights, V_FIG),
    R_DBL(mem.expert_gradients, V_FIG),
    R_DBL(mem.expert_optimizer, V_FIG),
    R_DBL(activations_per_layer, V_FIG),
    R_DBL(min_memory_bytes, V_FIG),
    R_STR(hint, V_TEXT),
    R_DBL(solve_seconds, V_FIG),
    R_INT(int_vars, V_COUNT),
    R_INT(cont_vars, V_COUNT),
    R_INT(rows, V_COUNT),
    R_INT(int_vars_before, V_COUNT),
    R_INT(cont_vars_before, V_COUNT),
    R_INT(rows_before, V_COUNT),
};

/* Every field of strata_op_choice_t. */
static const field_t op_fields[] = {
    O_STR(name, V_NAME),        O_INT(layer, V_LAYER),
    O_INT(repeat, V_COUNT),     O_STR(strategy, V_NAME),
    O_STR(placement, V_NAME),   O_DBL(mem_bytes, V_FIG),
    O_DBL(comm_seconds, V_FIG),
};

_Static_assert(sizeof(strata_stage_status_t) == sizeof(int),
               "the status is stored as an int");

#define N_RESULT (sizeof result_fields / sizeof result_fields[0])
#define N_OP (sizeof op_fields / sizeof op_fields[0])

/* The layout tag: what the fields are called and how they are stored. */
static uint64_t layout_tag(void) {
  strata_hash_t h;
  strata_hash_init(&h, CACHE_FORMAT);
  for (size_t i = 0; i < N_RESULT; i++) {
    strata_hash_str(&h, result_fields[i].name);
    strata_hash_u64(&h, result_fields[i].type);
  }
  strata_hash_str(&h, "ops");
  for (size_t i = 0; i < N_OP; i++) {
    strata_hash_str(&h, op_fields[i].name);
    strata_hash_u64(&h, op_fields[i].type);
  }
  return strata_hash_final(&h);
}

/* ---- bytes -------------------------------------------------------------- */

static void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++)
    v |= (uint32_t)p[i] << (8 * i);
  return v;
}

static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static void w_u32(strata_buf_t *b, uint32_t v) {
  unsigned char x[4];
  put_u32(x, v);
  strata_buf_append(b, x, 4);
}

static void w_u64(strata_buf_t *b, uint64_t v) {
  unsigned char x[8];
  put_u64(x, v);
  strata_buf_append(b, x, 8);
}

/* ---- encoding ----------------------------------------------------------- */

static void w_field(strata_buf_t *b, const field_t *f, const void *base) {
  const char *p = (const char *)base + f->off;
  if (f->type == F_INT) {
    int v;
    memcpy(&v, p, sizeof v);
    w_u32(b, (uint32_t)v);
  } else if (f->type == F_DBL) {
    uint64_t u;
    memcpy(&u, p, 8);
    w_u64(b, u);
  } else {
    const char *s;
    memcpy(&s, p, sizeof s);
    size_t n = s ? strlen(s) : 0;
    w_u32(b, (uint32_t)(s ? n + 1 : 0)); /* 0: NULL, else length + 1 */
    strata_buf_append(b, s ? s : "", n);
  }
}

static void encode(strata_buf_t *b, const strata_stage_result_t *r) {
  for (size_t i = 0; i < N_RESULT; i++)
    w_field(b, &result_fields[i], r);
  w_u32(b, (uint32_t)r->n_ops);
  for (int k = 0; k < r->n_ops; k++)
    for (size_t i = 0; i < N_OP; i++)
      w_field(b, &op_fields[i], &r->ops[k]);
}

/* ---- decoding ----------------------------------------------------------- */

typedef struct {
  const unsigned char *p, *end;
  int bad, oom;
  const char *why; /* the first reason it does not decode */
} rd_t;

static void bad(rd_t *r, const char *why) {
  if (!r->bad) r->why = why;
  r->bad = 1;
}

static const unsigned char *take(rd_t *r, size_t n) {
  if (r->bad || (size_t)(r->end - r->p) < n) {
    bad(r, "it ends inside a field");
    return NULL;
  }
  const unsigned char *q = r->p;
  r->p += n;
  return q;
}

static uint32_t r_u32(rd_t *r) {
  const unsigned char *q = take(r, 4);
  return q ? get_u32(q) : 0;
}

static void r_field(rd_t *r, const field_t *f, void *base) {
  char *p = (char *)base + f->off;
  if (f->type == F_INT) {
    int v = (int)r_u32(r);
    memcpy(p, &v, sizeof v);
  } else if (f->type == F_DBL) {
    const unsigned char *q = take(r, 8);
    uint64_t u = q ? get_u64(q) : 0;
    memcpy(p, &u, 8);
  } else {
    uint32_t n = r_u32(r);
    char *s = NULL;
    if (n > MAX_STR) bad(r, "a string is longer than 4096 bytes");
    const unsigned char *q = n > 0 ? take(r, n - 1) : NULL;
    if (q && memchr(q, 0, n - 1)) bad(r, "a string holds a NUL byte");
    if (q && !r->bad) {
      s = strata_strndup((const char *)q, n - 1);
      r->oom |= !s;
    }
    memcpy(p, &s, sizeof s);
  }
}

/* 0, STRATA_ECORRUPT (rd->why says why) or STRATA_ENOMEM; r may be half
 * filled either way (strata_stage_result_destroy frees it). */
static int decode(rd_t *rd, strata_stage_result_t *r) {
  for (size_t i = 0; i < N_RESULT; i++)
    r_field(rd, &result_fields[i], r);
  uint32_t n = r_u32(rd);
  if (rd->oom) return STRATA_ENOMEM;
  if (n > MAX_OPS) bad(rd, "it has more than 1000000 ops");
  if (rd->bad) return STRATA_ECORRUPT;
  r->ops = strata_calloc((size_t)n + 1, sizeof *r->ops);
  if (!r->ops) return STRATA_ENOMEM;
  for (uint32_t k = 0; k < n && !rd->bad; k++, r->n_ops++)
    for (size_t i = 0; i < N_OP; i++)
      r_field(rd, &op_fields[i], &r->ops[k]);
  if (rd->oom) return STRATA_ENOMEM;
  if (!rd->bad && rd->p != rd->end) bad(rd, "bytes follow its last op");
  return rd->bad ? STRATA_ECORRUPT : 0;
}

/* ---- what an entry may hold ---------------------------------------------- */

static int int_ok(vclass_t v, int x) {
  switch (v) {
  case V_STATUS:
    return x == STRATA_STAGE_OPTIMAL || x == STRATA_STAGE_INFEASIBLE;
  case V_POS:
    return x >= 1 && x <= MAX_COUNT;
  case V_BOOL:
    return x == 0 || x == 1;
  case V_LAYER:
    return x >= -1 && x <= MAX_COUNT;
  default:
    return x >= 0 && x <= MAX_COUNT;
  }
}

static const char *int_range(vclass_t v) {
  return v == V_STATUS  ? "0 (optimal) or 2 (infeasible): a settled result"
         : v == V_POS   ? "1 to 2^30"
         : v == V_BOOL  ? "0 or 1"
         : v == V_LAYER ? "-1 to 2^30"
                        : "0 to 2^30";
}

static int dbl_ok(vclass_t v, double x) {
  if (v == V_BOUND && x == -INFINITY) return 1;
  if (v == V_GAP && x == INFINITY) return 1;
  if (!isfinite(x) || x > MAX_FIG) return 0;
  return v == V_REAL || v == V_BOUND ? x >= -MAX_FIG : x >= 0;
}

static const char *dbl_range(vclass_t v) {
  return v == V_REAL    ? "a finite number within 1e24 of 0"
         : v == V_BOUND ? "a finite number within 1e24 of 0, or -inf"
         : v == V_GAP   ? "a number from 0 to 1e24, or inf"
                        : "a finite number from 0 to 1e24";
}

/* Field f of base as its row allows; else 1 with why ("WHOSE NAME is
 * ..."). */
static int check_field(const field_t *f, const void *base, const char *whose,
                       char *why, size_t n) {
  const char *p = (const char *)base + f->off;
  if (f->type == F_INT) {
    int x;
    memcpy(&x, p, sizeof x);
    if (int_ok(f->v, x)) return 0;
    snprintf(why, n, "%s%s is %d, not %s", whose, f->name, x, int_range(f->v));
  } else if (f->type == F_DBL) {
    double x;
    memcpy(&x, p, sizeof x);
    if (dbl_ok(f->v, x)) return 0;
    snprintf(why, n, "%s%s is %g, not %s", whose, f->name, x, dbl_range(f->v));
  } else {
    const char *s;
    memcpy(&s, p, sizeof s);
    if (!s && f->v == V_TEXT) return 0;
    if (!s) {
      snprintf(why, n, "%s%s is missing", whose, f->name);
      return 1;
    }
    char w[48];
    snprintf(w, sizeof w, "%.*s", whose[0] ? (int)strlen(whose) - 1 : 0, whose);
    if (st__name_check(s, f->name, whose[0] ? w : "the result") == 0) return 0;
    snprintf(why, n, "%s", strata_last_error());
    strata_error_clear();
  }
  return 1;
}

/* A decoded entry the planner may use; else 1 with why. */
static int check_result(const strata_stage_result_t *r, char *why, size_t n) {
  char whose[32];
  for (size_t i = 0; i < N_RESULT; i++)
    if (check_field(&result_fields[i], r, "", why, n)) return 1;
  if (r->status == STRATA_STAGE_OPTIMAL && r->n_ops < 1) {
    snprintf(why, n, "an optimal result has no ops");
    return 1;
  }
  for (int k = 0; k < r->n_ops; k++) {
    snprintf(whose, sizeof whose, "op %d ", k);
    for (size_t i = 0; i < N_OP; i++)
      if (check_field(&op_fields[i], &r->ops[k], whose, why, n)) return 1;
  }
  return 0;
}

/* ---- the index ---------------------------------------------------------- */

typedef struct {
  uint64_t key;
  size_t off, len; /* payload in the file as read, or in fresh */
  int fresh;       /* 1: a new entry, in c->fresh */
  int dropped;     /* 1: it failed its checks (warned once), not written */
} entry_t;

struct st__cache {
  char *dir, *path, *lock;
  uint64_t tag;
  char *data; /* the file as read when opened */
  size_t size;
  entry_t *e;
  int n, cap;
  int *slot; /* open addressing: index into e, -1 empty */
  int nslots;
  strata_buf_t fresh; /* payloads of new entries */
  int dirty;          /* new entries to write, or dropped ones to remove */
  int off;            /* caching is off for this run (said once) */
  int dropped;        /* entries that failed their checks */
};

static int rehash(st__cache_t *c) {
  int ns = c->nslots ? 2 * c->nslots : 64;
  int *s = strata_malloc((size_t)ns * sizeof *s);
  if (!s) return STRATA_ENOMEM;
  for (int i = 0; i < ns; i++)
    s[i] = -1;
  for (int i = 0; i < c->n; i++) {
    size_t h = (size_t)(c->e[i].key % (uint64_t)ns);
    while (s[h] >= 0)
      h = (h + 1) % (size_t)ns;
    s[h] = i;
  }
  strata_free(c->slot);
  c->slot = s;
  c->nslots = ns;
  return 0;
}

static int index_add(st__cache_t *c, const entry_t *en) {
  if (2 * (c->n + 1) > c->nslots && rehash(c)) return STRATA_ENOMEM;
  if (c->n == c->cap) {
    int cap = c->cap ? 2 * c->cap : 64;
    entry_t *e = strata_realloc(c->e, (size_t)cap * sizeof *e);
    if (!e) return STRATA_ENOMEM;
    c->e = e;
    c->cap = cap;
  }
  size_t h = (size_t)(en->key % (uint64_t)c->nslots);
  while (c->slot[h] >= 0)
    h = (h + 1) % (size_t)c->nslots;
  c->slot[h] = c->n;
  c->e[c->n++] = *en;
  return 0;
}

static entry_t *find(const st__cache_t *c, uint64_t key) {
  if (!c->nslots) return NULL;
  size_t h = (size_t)(key % (uint64_t)c->nslots);
  for (; c->slot[h] >= 0; h = (h + 1) % (size_t)c->nslots)
    if (c->e[c->slot[h]].key == key) return &c->e[c->slot[h]];
  return NULL;
}

/* ---- files: regular ones only ------------------------------------------- */

static const char *kind_of(mode_t m) {
  return S_ISDIR(m)    ? "a folder"
         : S_ISFIFO(m) ? "a FIFO"
         : S_ISCHR(m)  ? "a character device"
         : S_ISBLK(m)  ? "a block device"
         : S_ISSOCK(m) ? "a socket"
         : S_ISLNK(m)  ? "a symbolic link"
                       : "an unknown kind of file";
}

/* Caching off for the run, said once. */
static void turn_off(st__cache_t *c, const char *path, const char *what) {
  if (!c->off)
    strata_log(STRATA_LOG_WARN,
               "cache: '%s' is %s, not a regular file; caching is off for "
               "this run",
               path, what);
  c->off = 1;
}

/* The whole file at path (opened without blocking, so that a FIFO cannot
 * hang the run; refused unless regular): 0, STRATA_ENOTFOUND, STRATA_EIO
 * (with a message), STRATA_EBADINPUT (not a regular file: *what says what
 * it is) or STRATA_ENOMEM. */
static int read_regular(const char *path, char **data, size_t *size,
                        const char **what) {
  struct stat sb;
  strata_buf_t b;
  char chunk[65536];
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), rc = 0;
  *data = NULL;
  *size = 0;
  if (fd < 0 && errno == ENOENT) return STRATA_ENOTFOUND;
  if (fd < 0)
    return strata_error(STRATA_EIO, "cannot open '%s': %s", path,
                        strerror(errno));
  if (fstat(fd, &sb) != 0) {
    rc =
        strata_error(STRATA_EIO, "cannot stat '%s': %s", path, strerror(errno));
    close(fd);
    return rc;
  }
  if (!S_ISREG(sb.st_mode)) {
    *what = kind_of(sb.st_mode);
    close(fd);
    return STRATA_EBADINPUT;
  }
  strata_buf_init(&b);
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      rc = strata_error(STRATA_EIO, "cannot read '%s': %s", path,
                        strerror(errno));
    if (n <= 0) break;
    if (b.len + (size_t)n > MAX_FILE) {
      rc = strata_error(STRATA_EIO, "'%s' is larger than %u bytes", path,
                        MAX_FILE);
      break;
    }
    if (strata_buf_append(&b, chunk, (size_t)n)) rc = STRATA_ENOMEM;
    if (rc) break;
  }
  close(fd);
  if (!rc && !b.p && strata_buf_append(&b, "", 0)) rc = STRATA_ENOMEM;
  if (rc) {
    strata_buf_free(&b);
    return rc;
  }
  *data = strata_buf_steal(&b, size);
  return 0;
}

/* Anything but a regular file where the lock goes turns caching off
 * (checked when the cache opens, so that nothing is read either). */
static void check_lock(st__cache_t *c) {
  struct stat sb;
  if (lstat(c->lock, &sb) == 0 && !S_ISREG(sb.st_mode))
    turn_off(c, c->lock, kind_of(sb.st_mode));
}

/* The lock file, opened when the cache is written (created if missing,
 * so that a run that writes nothing creates nothing): a regular file,
 * never followed through a symbolic link.  -1 when it cannot be: a
 * folder that cannot be written is read, not written; a lock that is
 * anything else turns caching off; both said once. */
static int open_lock(st__cache_t *c) {
  struct stat sb;
  int flags = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
  int fd = open(c->lock, O_RDWR | O_CREAT | flags, 0644), err = errno;
  if (fd < 0 && err == EACCES) /* another user's: a read lock works too */
    fd = open(c->lock, O_RDONLY | flags);
  if (fd < 0 && err == ELOOP) {
    turn_off(c, c->lock, "a symbolic link");
    return -1;
  }
  if (fd < 0) {
    strata_log(STRATA_LOG_WARN,
               "cache: cannot open the lock '%s': %s; the new entries are "
               "not written",
               c->lock, strerror(err));
    return -1;
  }
  if (fstat(fd, &sb) != 0) sb.st_mode = 0;
  if (!S_ISREG(sb.st_mode)) {
    close(fd);
    turn_off(c, c->lock, kind_of(sb.st_mode));
    return -1;
  }
  return fd;
}

/* ---- reading the file --------------------------------------------------- */

static void note(const st__cache_t *c, const char *what) {
  strata_log(STRATA_LOG_INFO, "cache: ignoring %s: %s", c->path, what);
}

/* The entry count in the header of d, or -1 (with a note unless quiet). */
static long check_file(const st__cache_t *c, const unsigned char *d, size_t n,
                       int quiet) {
  if (n < FILE_HEADER || memcmp(d, "SSCH", 4) != 0 ||
      get_u32(d + 20) != strata_crc32(d, 20)) {
    if (!quiet)
      note(c, "not a stage cache (or a damaged header); it will be replaced");
    return -1;
  }
  if (get_u32(d + 4) != CACHE_FORMAT || get_u64(d + 8) != c->tag) {
    if (!quiet)
      note(c, "written by another version of strata; it will be replaced");
    return -1;
  }
  return (long)get_u32(d + 16);
}

/* Call fn on every intact entry of data, a read of the file (the one
 * loaded, or a fresh read when merging).  Damaged entries are skipped, a
 * file cut short ends the walk; both with a note unless quiet. */
typedef int (*visit_fn)(st__cache_t *c, void *ctx, const entry_t *en,
                        const unsigned char *data);

static int scan(st__cache_t *c, const char *data, size_t size, visit_fn fn,
                void *ctx, int quiet) {
  const unsigned char *d = (const unsigned char *)data;
  long count = check_file(c, d, size, quiet);
  size_t at = FILE_HEADER;
  int skipped = 0, rc;
  for (long i = 0; i < count; i++) {
    if (size - at < ENTRY_HEADER ||
        get_u32(d + at + 8) > size - at - ENTRY_HEADER) {
      if (!quiet) note(c, "cut short; the entries before the cut are used");
      break;
    }
    entry_t en = {get_u64(d + at), at + ENTRY_HEADER, get_u32(d + at + 8), 0,
                  0};
    if (get_u32(d + at + 12) != strata_crc32(d + en.off, en.len))
      skipped++;
    else if ((rc = fn(c, ctx, &en, d)))
      return rc;
    at = en.off + en.len;
  }
  if (skipped && !quiet)
    strata_log(STRATA_LOG_INFO,
               "cache: %s: %d damaged entries skipped (solved again)", c->path,
               skipped);
  return 0;
}

static int add_loaded(st__cache_t *c, void *ctx, const entry_t *en,
                      const unsigned char *data) {
  (void)ctx;
  (void)data;
  return find(c, en->key) ? 0 : index_add(c, en);
}

static int set_paths(st__cache_t *c, const char *dir) {
  size_t n = strlen(dir) + 32;
  c->dir = strata_strdup(dir);
  c->path = strata_malloc(n);
  c->lock = strata_malloc(n);
  if (!c->dir || !c->path || !c->lock) return STRATA_ENOMEM;
  snprintf(c->path, n, "%s/stages.scache", dir);
  snprintf(c->lock, n, "%s/stages.scache.lock", dir);
  return 0;
}

/* The file as it is when the run starts. */
static int load(st__cache_t *c) {
  const char *what = NULL;
  int rc = read_regular(c->path, &c->data, &c->size, &what);
  if (rc == STRATA_ENOMEM) return rc;
  if (rc == STRATA_ENOTFOUND) return 0;
  if (rc == STRATA_EBADINPUT) {
    turn_off(c, c->path, what);
    return 0;
  }
  if (rc) { /* unreadable: work without what it holds */
    strata_log(STRATA_LOG_WARN, "cache: %s", strata_last_error());
    return 0;
  }
  return scan(c, c->data, c->size, add_loaded, NULL, 0);
}

int st__cache_open(const char *dir, st__cache_t **out) {
  st__cache_t *c = strata_calloc(1, sizeof *c);
  int rc = c ? set_paths(c, dir) : STRATA_ENOMEM;
  *out = NULL;
  if (c) strata_buf_init(&c->fresh);
  if (!rc) {
    c->tag = layout_tag();
    check_lock(c);
    if (!c->off) rc = load(c);
  }
  if (rc) {
    st__cache_close(c);
    return strata_error(STRATA_ENOMEM, "out of memory reading the cache");
  }
  strata_error_clear();
  *out = c;
  return 0;
}

static const unsigned char *payload(const st__cache_t *c, const entry_t *en) {
  const char *base = en->fresh ? c->fresh.p : c->data;
  return (const unsigned char *)base + en->off;
}

/* An entry that fails its checks: never used or written.  The first is
 * a warning that names it and says why, the others notes (a damaged file
 * has hundreds), counted in one warning when the cache closes. */
static void drop(st__cache_t *c, entry_t *en, const char *why) {
  strata_log(c->dropped ? STRATA_LOG_INFO : STRATA_LOG_WARN,
             "cache: %s: entry %016llx: %s; it is dropped and solved again",
             c->path, (unsigned long long)en->key, why);
  en->dropped = 1;
  c->dropped++;
  c->dirty = 1; /* the next write leaves it out */
}

int st__cache_get(st__cache_t *c, uint64_t key, strata_stage_result_t **out) {
  char why[512];
  *out = NULL;
  entry_t *en = c && !c->off ? find(c, key) : NULL;
  if (!en || en->dropped) return STRATA_ENOTFOUND;
  strata_stage_result_t *r = strata_calloc(1, sizeof *r);
  if (!r) return STRATA_ENOMEM;
  rd_t rd = {payload(c, en), payload(c, en) + en->len, 0, 0, NULL};
  int rc = decode(&rd, r);
  if (rc == STRATA_ECORRUPT)
    snprintf(why, sizeof why, "does not decode: %s", rd.why);
  if (!rc && check_result(r, why, sizeof why)) rc = STRATA_ECORRUPT;
  if (rc) {
    if (rc == STRATA_ECORRUPT) drop(c, en, why);
    strata_stage_result_destroy(r);
    return rc;
  }
  *out = r;
  return 0;
}

int st__cache_put(st__cache_t *c, uint64_t key,
                  const strata_stage_result_t *r) {
  if (c->off) return 0;
  entry_t *old = find(c, key);
  entry_t en = {key, c->fresh.len, 0, 1, 0};
  encode(&c->fresh, r);
  if (c->fresh.oom) return STRATA_ENOMEM;
  en.len = c->fresh.len - en.off;
  c->dirty = 1;
  if (old) {
    *old = en;
    return 0;
  }
  return index_add(c, &en);
}

/* ---- writing ------------------------------------------------------------ */

typedef struct {
  strata_buf_t out;
  uint32_t n;
} writer_t;

static void w_entry(writer_t *w, uint64_t key, const unsigned char *p,
                    size_t len) {
  w_u64(&w->out, key);
  w_u32(&w->out, (uint32_t)len);
  w_u32(&w->out, strata_crc32(p, len));
  strata_buf_append(&w->out, p, len);
  w->n++;
}

/* An entry another run wrote since this one read the file: kept, unless
 * this run has the same key (or dropped it). */
static int add_theirs(st__cache_t *c, void *ctx, const entry_t *en,
                      const unsigned char *data) {
  if (!find(c, en->key)) w_entry(ctx, en->key, data + en->off, en->len);
  return 0;
}

/* A temporary file of the atomic write: "stages.scache." and mkstemp's
 * six letters and digits. */
static int temp_name(const char *name) {
  static const char base[] = "stages.scache.";
  size_t n = sizeof base - 1;
  if (strncmp(name, base, n) != 0 || strlen(name) != n + 6) return 0;
  for (size_t i = n; i < n + 6; i++)
    if (!((name[i] >= 'a' && name[i] <= 'z') ||
          (name[i] >= 'A' && name[i] <= 'Z') ||
          (name[i] >= '0' && name[i] <= '9')))
      return 0;
  return 1;
}

/* Temporary files in the folder (regular files only); removed when
 * `remove` (the caller holds the lock: no live writer has one, since
 * writers make theirs only under the lock, so each is a dead run's).
 * Returns how many were found. */
static int stale_temps(const st__cache_t *c, int remove) {
  DIR *d = opendir(c->dir);
  struct dirent *de;
  int found = 0;
  if (!d) return 0;
  while ((de = readdir(d)) != NULL) {
    struct stat sb;
    if (!temp_name(de->d_name) ||
        fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(sb.st_mode))
      continue;
    found++;
    if (remove && unlinkat(dirfd(d), de->d_name, 0) == 0)
      strata_log(STRATA_LOG_INFO,
                 "cache: removed '%s/%s' (%lld bytes), left by a run that "
                 "stopped while it wrote",
                 c->dir, de->d_name, (long long)sb.st_size);
  }
  closedir(d);
  return found;
}

/* data into the cache file at once: a temporary file beside it renamed
 * over it (a rename never blocks, whatever is there). */
static int replace_file(const st__cache_t *c, const char *data, size_t len) {
  size_t n = strlen(c->path) + 8;
  char *tmp = strata_malloc(n);
  int rc = 0;
  if (!tmp) return STRATA_ENOMEM;
  snprintf(tmp, n, "%s.XXXXXX", c->path);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    rc = strata_error(STRATA_EIO,
                      "cannot create a temporary file next to "
                      "'%s': %s",
                      c->path, strerror(errno));
    strata_free(tmp);
    return rc;
  }
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(fd, 0666 & ~mask) != 0)
    strata_log(STRATA_LOG_DEBUG, "chmod %s: %s", tmp, strerror(errno));
  for (size_t at = 0; at < len && !rc;) {
    ssize_t w = write(fd, data + at, len - at);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0)
      rc = strata_error(STRATA_EIO, "cannot write '%s': %s", c->path,
                        strerror(errno));
    else
      at += (size_t)w;
  }
  if (close(fd) != 0 && !rc)
    rc = strata_error(STRATA_EIO, "cannot write '%s': %s", c->path,
                      strerror(errno));
  if (!rc && rename(tmp, c->path) != 0)
    rc = strata_error(STRATA_EIO, "cannot rename the cache to '%s': %s",
                      c->path, strerror(errno));
  if (rc) unlink(tmp);
  strata_free(tmp);
  return rc;
}

/* Theirs (the file as it is now) and ours, into a new file. */
static int write_merged(st__cache_t *c) {
  writer_t w;
  char *now = NULL;
  const char *what = NULL;
  size_t n = 0;
  int rc = 0;
  strata_buf_init(&w.out);
  w.n = 0;
  strata_buf_append(&w.out, "SSCH", 4);
  w_u32(&w.out, CACHE_FORMAT);
  w_u64(&w.out, c->tag);
  w_u64(&w.out, 0); /* count and CRC, filled below */
  rc = read_regular(c->path, &now, &n, &what);
  if (rc == 0)
    rc = scan(c, now, n, add_theirs, &w, 1);
  else if (rc != STRATA_ENOMEM) /* none, or unreadable: ours alone */
    rc = 0;
  strata_error_clear();
  for (int i = 0; i < c->n && !rc; i++)
    if (!c->e[i].dropped)
      w_entry(&w, c->e[i].key, payload(c, &c->e[i]), c->e[i].len);
  if (!rc && w.out.oom) rc = STRATA_ENOMEM;
  if (!rc) {
    unsigned char *h = (unsigned char *)w.out.p;
    put_u32(h + 16, w.n);
    put_u32(h + 20, strata_crc32(h, 20));
    rc = replace_file(c, w.out.p, w.out.len);
    if (rc && rc != STRATA_ENOMEM)
      strata_log(STRATA_LOG_WARN, "cache: %s", strata_last_error());
  }
  strata_free(now);
  strata_buf_free(&w.out);
  return rc;
}

/* Where flock does not work (some network file systems): writers cannot
 * be serialised, so two runs ending together may lose one's entries
 * (never corrupt the file), and no temporary file can be told stale. */
static int no_locks(int err) {
  return err == ENOLCK || err == EOPNOTSUPP || err == ENOSYS || err == EINVAL;
}

int st__cache_flush(st__cache_t *c) {
  if (!c || c->off) return 0;
  if (!c->dirty && !stale_temps(c, 0)) return 0;
  int fd = open_lock(c), rc = 0;
  if (fd < 0) {
    c->dirty = 0; /* said once */
    return 0;
  }
  int locked = flock(fd, LOCK_EX) == 0;
  if (!locked && !no_locks(errno)) { /* interrupted: write nothing */
    strata_log(STRATA_LOG_INFO, "cache: cannot lock '%s': %s; not written",
               c->lock, strerror(errno));
    close(fd);
    return 0;
  }
  if (locked) stale_temps(c, 1);
  if (c->dirty) rc = write_merged(c);
  close(fd); /* releases the lock */
  if (!rc) c->dirty = 0;
  return rc;
}

void st__cache_close(st__cache_t *c) {
  if (!c) return;
  if (c->dropped > 1)
    strata_log(STRATA_LOG_WARN,
               "cache: %s: %d entries in all failed their checks (dropped, "
               "solved again)",
               c->path, c->dropped);
  strata_free(c->dir);
  strata_free(c->path);
  strata_free(c->lock);
  strata_free(c->data);
  strata_free(c->e);
  strata_free(c->slot);
  strata_buf_free(&c->fresh);
  strata_free(c);
}
