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
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "pipeline/sub.h"

#define CACHE_FORMAT 3u
#define FILE_HEADER 24
#define ENTRY_HEADER 16
#define MAX_FILE (1u << 30)
#define MAX_STR 4096
#define MAX_OPS 1000000

/* ---- the fields of a stage result --------------------------------------- */

typedef enum { F_INT, F_DBL, F_STR } ftype_t;

typedef struct {
  const char *name;
  ftype_t type;
  size_t off;
} field_t;

#define R_INT(f)                                                               \
  { #f, F_INT, offsetof(strata_stage_result_t, f) }
#define R_DBL(f)                                                               \
  { #f, F_DBL, offsetof(strata_stage_result_t, f) }
#define R_STR(f)                                                               \
  { #f, F_STR, offsetof(strata_stage_result_t, f) }
#define O_INT(f)                                                               \
  { #f, F_INT, offsetof(strata_op_choice_t, f) }
#define O_DBL(f)                                                               \
  { #f, F_DBL, offsetof(strata_op_choice_t, f) }
#define O_STR(f)                                                               \
  { #f, F_STR, offsetof(strata_op_choice_t, f) }

/* Every field of strata_stage_result_t but ops and n_ops (written after
 * them, one op_fields record per op).  A new field: one line here. */
static const field_t result_fields[] = {
    R_INT(status),
    R_INT(devices),
    R_INT(homogeneous),
    R_DBL(alpha),
    R_DBL(objective),
    R_DBL(objective_bound),
    R_DBL(gap),
    R_DBL(memory_redundancy_bytes),
    R_DBL(comm_bytes),
    R_DBL(comm_seconds),
    R_DBL(sync_seconds),
    R_DBL(compute_seconds),
    R_DBL(fwd_seconds),
    R_DBL(bwd_seconds),
    R_DBL(fwd_comm_seconds),
    R_DBL(bwd_comm_seconds),
    R_DBL(peak_memory_bytes),
    R_DBL(zero_redundancy_bytes),
    R_DBL(mem.weights),
    R_DBL(mem.gradients),
    R_DBL(mem.optimizer),
    R_DBL(mem.activations),
    R_DBL(mem.transient),
    R_DBL(mem.total),
    R_DBL(mem.expert_weights),
    R_DBL(mem.expert_gradients),
    R_DBL(mem.expert_optimizer),
    R_DBL(activations_per_layer),
    R_DBL(min_memory_bytes),
    R_STR(hint),
    R_DBL(solve_seconds),
    R_INT(int_vars),
    R_INT(cont_vars),
    R_INT(rows),
    R_INT(int_vars_before),
    R_INT(cont_vars_before),
    R_INT(rows_before),
};

/* Every field of strata_op_choice_t. */
static const field_t op_fields[] = {
    O_STR(name),      O_INT(layer),     O_INT(repeat),       O_STR(strategy),
    O_STR(placement), O_DBL(mem_bytes), O_DBL(comm_seconds),
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
} rd_t;

static const unsigned char *take(rd_t *r, size_t n) {
  if (r->bad || (size_t)(r->end - r->p) < n) {
    r->bad = 1;
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
    if (n > MAX_STR) r->bad = 1;
    const unsigned char *q = n > 0 ? take(r, n - 1) : NULL;
    if (q) {
      s = strata_strndup((const char *)q, n - 1);
      r->oom |= !s;
    }
    memcpy(p, &s, sizeof s);
  }
}

/* 0, STRATA_ECORRUPT or STRATA_ENOMEM; r may be half filled either way
 * (strata_stage_result_destroy frees it). */
static int decode(rd_t *rd, strata_stage_result_t *r) {
  for (size_t i = 0; i < N_RESULT; i++)
    r_field(rd, &result_fields[i], r);
  uint32_t n = r_u32(rd);
  if (rd->oom) return STRATA_ENOMEM;
  if (rd->bad || n > MAX_OPS || (unsigned)r->status > STRATA_STAGE_NO_SOLUTION)
    return STRATA_ECORRUPT;
  r->ops = strata_calloc((size_t)n + 1, sizeof *r->ops);
  if (!r->ops) return STRATA_ENOMEM;
  for (uint32_t k = 0; k < n && !rd->bad; k++, r->n_ops++)
    for (size_t i = 0; i < N_OP; i++)
      r_field(rd, &op_fields[i], &r->ops[k]);
  if (rd->oom) return STRATA_ENOMEM;
  return rd->bad || rd->p != rd->end ? STRATA_ECORRUPT : 0;
}

/* ---- the index ---------------------------------------------------------- */

typedef struct {
  uint64_t key;
  size_t off, len; /* payload in the file as read, or in fresh */
  int fresh;       /* 1: a new entry, in c->fresh */
} entry_t;

struct st__cache {
  char *path, *lock;
  uint64_t tag;
  char *data; /* the file as read when opened */
  size_t size;
  entry_t *e;
  int n, cap;
  int *slot; /* open addressing: index into e, -1 empty */
  int nslots;
  strata_buf_t fresh; /* payloads of new entries */
  int dirty;          /* new entries to write */
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
    entry_t en = {get_u64(d + at), at + ENTRY_HEADER, get_u32(d + at + 8), 0};
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
  c->path = strata_malloc(n);
  c->lock = strata_malloc(n);
  if (!c->path || !c->lock) return STRATA_ENOMEM;
  snprintf(c->path, n, "%s/stages.scache", dir);
  snprintf(c->lock, n, "%s/stages.scache.lock", dir);
  return 0;
}

int st__cache_open(const char *dir, st__cache_t **out) {
  st__cache_t *c = strata_calloc(1, sizeof *c);
  int rc = c ? set_paths(c, dir) : STRATA_ENOMEM;
  *out = NULL;
  if (c) strata_buf_init(&c->fresh);
  if (!rc) {
    c->tag = layout_tag();
    rc = strata_file_read(c->path, MAX_FILE, &c->data, &c->size);
    if (rc == STRATA_ENOMEM) {
    } else if (rc == STRATA_ENOTFOUND) {
      rc = 0;
    } else if (rc) { /* unreadable: work without what it holds */
      strata_log(STRATA_LOG_WARN, "cache: %s", strata_last_error());
      rc = 0;
    } else {
      rc = scan(c, c->data, c->size, add_loaded, NULL, 0);
    }
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

int st__cache_get(st__cache_t *c, uint64_t key, strata_stage_result_t **out) {
  *out = NULL;
  const entry_t *en = c ? find(c, key) : NULL;
  if (!en) return STRATA_ENOTFOUND;
  strata_stage_result_t *r = strata_calloc(1, sizeof *r);
  if (!r) return STRATA_ENOMEM;
  rd_t rd = {payload(c, en), payload(c, en) + en->len, 0, 0};
  int rc = decode(&rd, r);
  if (rc) {
    if (rc == STRATA_ECORRUPT)
      strata_log(STRATA_LOG_INFO,
                 "cache: %s: entry %016llx does not decode; solved again",
                 c->path, (unsigned long long)key);
    strata_stage_result_destroy(r);
    return rc;
  }
  *out = r;
  return 0;
}

int st__cache_put(st__cache_t *c, uint64_t key,
                  const strata_stage_result_t *r) {
  entry_t *old = find(c, key);
  entry_t en = {key, c->fresh.len, 0, 1};
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
 * this run has the same key. */
static int add_theirs(st__cache_t *c, void *ctx, const entry_t *en,
                      const unsigned char *data) {
  if (!find(c, en->key)) w_entry(ctx, en->key, data + en->off, en->len);
  return 0;
}

/* The lock that serialises writers; -1 where locks do not work (then two
 * runs ending together may lose one's entries, never corrupt the file). */
static int take_lock(const st__cache_t *c) {
  int fd = open(c->lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0 && flock(fd, LOCK_EX) != 0) {
    close(fd);
    fd = -1;
  }
  return fd;
}

/* Theirs (the file as it is now) and ours, into a new file. */
static int write_merged(st__cache_t *c) {
  writer_t w;
  char *now = NULL;
  size_t n = 0;
  int rc = 0;
  strata_buf_init(&w.out);
  w.n = 0;
  strata_buf_append(&w.out, "SSCH", 4);
  w_u32(&w.out, CACHE_FORMAT);
  w_u64(&w.out, c->tag);
  w_u64(&w.out, 0); /* count and CRC, filled below */
  rc = strata_file_read(c->path, MAX_FILE, &now, &n);
  if (rc == 0)
    rc = scan(c, now, n, add_theirs, &w, 1);
  else if (rc != STRATA_ENOMEM) /* none, or unreadable: ours alone */
    rc = 0;
  strata_error_clear();
  for (int i = 0; i < c->n && !rc; i++)
    w_entry(&w, c->e[i].key, payload(c, &c->e[i]), c->e[i].len);
  if (!rc && w.out.oom) rc = STRATA_ENOMEM;
  if (!rc) {
    unsigned char *h = (unsigned char *)w.out.p;
    put_u32(h + 16, w.n);
    put_u32(h + 20, strata_crc32(h, 20));
    rc = strata_file_write_atomic_nosync(c->path, w.out.p, w.out.len);
    if (rc) strata_log(STRATA_LOG_WARN, "cache: %s", strata_last_error());
  }
  strata_free(now);
  strata_buf_free(&w.out);
  return rc;
}

int st__cache_flush(st__cache_t *c) {
  if (!c || !c->dirty) return 0;
  int fd = take_lock(c), rc = write_merged(c);
  if (fd >= 0) close(fd); /* releases the lock */
  if (!rc) c->dirty = 0;
  return rc;
}

void st__cache_close(st__cache_t *c) {
  if (!c) return;
  strata_free(c->path);
  strata_free(c->lock);
  strata_free(c->data);
  strata_free(c->e);
  strata_free(c->slot);
  strata_buf_free(&c->fresh);
  strata_free(c);
}
