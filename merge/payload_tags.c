/*
 * payload_tags.c - the plan payload of format 18 (docs/plan-format.md):
 * one record per field, in increasing order of tag, each
 *
 *   u key (tag << 3 | must-understand << 2 | type), u length, the value
 *
 * so a reader skips a record whose tag it does not know, or refuses the
 * file where the record says it must be understood (PNG's critical
 * chunks).  The scalars are plan_fields.h's rows, the other parts its
 * STRATA_PLAN_BLOCKS, each laid out as before (payload.h).  A field at
 * its default (0, NULL, an empty list) is left out: a field added later
 * costs the files that do not use it nothing and leaves them readable by
 * a strata that does not know it.  There is one encoding of a plan (tags
 * in order, no default written, a known tag with its own type and flag),
 * so decoding then encoding gives the same bytes.
 *
 * The decoder reads in three passes: the records' framing (every length
 * bounded by what is left), the scalars, then the blocks in the order
 * their checks need (the stages after the degrees), whatever their tags.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "merge/payload.h"

enum { T_INT, T_DBL, T_STR, T_REC };

/* Every tag once: a second row or block with a tag redeclares its
 * enumerator, and the build stops naming st__plan_tag_N_used_twice. */
#define ONCE_MUST(tag) st__plan_tag_##tag##_used_twice,
#define ONCE_OPT ONCE_MUST
#define ONCE_NONE(tag)
#define ONCE_TI(tag)
#define ONCE_TD(tag)
#define ONCE_TN(tag)
#define ONCE(part, t, m, key, what, lo, hi, codec, tag, ...) ONCE_##codec(tag)
#define ONCE_B(tag, name, codec, type) st__plan_tag_##tag##_used_twice,
enum { STRATA_PLAN_FIELDS(ONCE) STRATA_PLAN_BLOCKS(ONCE_B) ST__TAGS_END };

/* The rows, then the blocks: an id each. */
#define ROW_ID(part, t, m, key, ...) R_##key,
#define BLOCK_ID(tag, name, codec, type) B_##name,
enum { STRATA_PLAN_FIELDS(ROW_ID) ROWS, STRATA_PLAN_BLOCKS(BLOCK_ID) ENTS };
enum { FIRST_BLOCK = ROWS + 1 };

typedef struct {
  unsigned tag;
  unsigned char must, type;
  const char *name; /* in messages */
} ent_t;

#define MUST_MUST 1
#define MUST_OPT 0
#define MUST_NONE 0
#define MUST_TI 0
#define MUST_TD 0
#define MUST_TN 0
#define WIRE(m)                                                                \
  _Generic(((strata_plan_t *)0)->m, double : T_DBL, default : T_INT)
#define ROW_ENT(part, t, m, key, what, lo, hi, codec, tag, ...)                \
  {tag, MUST_##codec, WIRE(m), (what) ? (what) : #key},
#define BLOCK_ENT(tag, name, codec, type) {tag, MUST_##codec, T_##type, #name},
static const ent_t ents[ENTS] = {STRATA_PLAN_FIELDS(ROW_ENT){0, 0, 0, NULL},
                                 STRATA_PLAN_BLOCKS(BLOCK_ENT)};

/* The id of each tag, plus one (0: no such tag). */
#define TAG_MUST(key, tag) [tag] = R_##key + 1,
#define TAG_OPT TAG_MUST
#define TAG_NONE(key, tag)
#define TAG_TI TAG_NONE
#define TAG_TD TAG_NONE
#define TAG_TN TAG_NONE
#define TAG(part, t, m, key, what, lo, hi, codec, tag, ...)                    \
  TAG_##codec(key, tag)
#define TAG_B(tag, name, codec, type) [tag] = B_##name + 1,
static const short by_tag[STRATA_PLAN_TAG_NEXT] = {
    STRATA_PLAN_FIELDS(TAG) STRATA_PLAN_BLOCKS(TAG_B)};

typedef struct {
  long long i;
  double d;
} val_t;

#define GET(part, t, m, key, ...)                                              \
  case R_##key:                                                                \
    v.i = (long long)_Generic(p->m, double : 0, default : p->m);               \
    v.d = _Generic(p->m, double : p->m, default : 0.0);                        \
    break;
static val_t row_get(const strata_plan_t *p, int id) {
  val_t v = {0, 0};
  switch (id) { STRATA_PLAN_FIELDS(GET) }
  return v;
}

#define SET(part, t, m, key, ...)                                              \
  case R_##key:                                                                \
    p->m = _Generic(p->m, double : v.d, default : (t)v.i);                     \
    break;
static void row_set(strata_plan_t *p, int id, val_t v) {
  switch (id) { STRATA_PLAN_FIELDS(SET) }
}

static int is_zero(double d) {
  return !memcmp(&d, &(double){0}, sizeof d); /* +0 only: -0 is kept */
}

/* ---- encoding ---- */

/* Row id's value into v: 0 where it is at its default (not written). */
static int put_row(st__wr_t *v, const strata_plan_t *p, int id) {
  val_t x = row_get(p, id);
  if (!ents[id].tag) return 0;
  if (ents[id].type == T_DBL) {
    if (is_zero(x.d)) return 0;
    st__wr_f(v, x.d);
  } else {
    if (!x.i) return 0;
    st__wr_i(v, x.i);
  }
  return 1;
}

static int put_str(st__wr_t *v, const char *s) {
  if (!s || !*s) return 0;
  strata_buf_append(&v->b, s, strlen(s));
  return 1;
}

/* The fallback plans: their count, then each one's length and payload. */
static int put_fallbacks(st__wr_t *v, const strata_plan_t *p) {
  st__wr_u(v, (uint64_t)p->n_fallbacks);
  for (int i = 0; i < p->n_fallbacks; i++) {
    strata_buf_t sub;
    int rc = st__payload_encode(p->fallbacks[i], &sub);
    if (rc) return rc;
    st__wr_u(v, (uint64_t)sub.len);
    strata_buf_append(&v->b, sub.p, sub.len);
    strata_buf_free(&sub);
  }
  return 1;
}

/* Block id into v: 1, 0 where it is empty (not written), or an error. */
static int put_block(st__wr_t *v, const strata_plan_t *p, int id) {
  switch (id) {
  case B_model:
    return put_str(v, p->model);
  case B_cluster:
    return put_str(v, p->cluster);
  case B_family:
    return put_str(v, p->family);
  case B_stages:
    st__put_stages(v, p);
    return 1;
  case B_ranks:
    st__wr_u(v, (uint64_t)p->pp);
    st__put_ranks(v, p);
    return 1;
  case B_configurations:
    if (p->n_top > 0) st__put_configs(v, p->top, p->n_top);
    return p->n_top > 0;
  case B_node_groups:
    if (p->n_groups > 1) st__put_groups(v, p);
    return p->n_groups > 1;
  case B_rope_scaling:
    if (p->rope_scaling.type == STRATA_ROPE_SCALING_NONE) return 0;
    st__put_rope(v, &p->rope_scaling);
    return 1;
  case B_pareto:
    if (p->n_pareto > 0) st__put_configs(v, p->pareto, p->n_pareto);
    return p->n_pareto > 0;
  case B_fallbacks:
    return p->n_fallbacks > 0 ? put_fallbacks(v, p) : 0;
  case B_layouts:
    if (st__has_layouts(p)) st__put_layouts(v, p);
    return st__has_layouts(p);
  }
  return 0;
}

int st__payload_encode(const strata_plan_t *p, strata_buf_t *out) {
  st__wr_t w, v;
  int rc = 0;
  strata_buf_init(&w.b);
  strata_buf_init(&v.b);
  for (unsigned tag = 1; tag < STRATA_PLAN_TAG_NEXT && rc >= 0; tag++) {
    int id = by_tag[tag] - 1;
    if (id < 0) continue;
    v.b.len = 0;
    rc = id < ROWS ? put_row(&v, p, id) : put_block(&v, p, id);
    if (rc <= 0) continue;
    st__wr_u(&w,
             (uint64_t)tag << 3 | (uint64_t)ents[id].must << 2 | ents[id].type);
    st__wr_u(&w, (uint64_t)v.b.len);
    strata_buf_append(&w.b, v.b.p, v.b.len);
  }
  if (rc >= 0 && (w.b.oom || v.b.oom))
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  strata_buf_free(&v.b);
  if (rc < 0) {
    strata_buf_free(&w.b);
    return rc;
  }
  *out = w.b;
  return 0;
}

/* ---- decoding ---- */

typedef struct {
  size_t pos, len;
  int has;
} span_t;

typedef struct {
  const unsigned char *data;
  const char *where;
  int nested, skipped, oom;
  span_t at[ENTS];
} dec_t;

/* The records' framing: each tag after the one before, each length
 * within the payload, a known tag with its own type and flag; an unknown
 * tag skipped, or refused where it must be understood. */
static int scan(dec_t *d, size_t len) {
  st__rd_t r = {d->data, len, 0, NULL, NULL};
  uint64_t prev = 0;
  while (r.pos < len) {
    uint64_t key = st__rd_u(&r, "record key"), tag = key >> 3;
    unsigned must = (unsigned)(key >> 2) & 1, type = (unsigned)key & 3;
    uint64_t n = st__rd_u(&r, "record length");
    if (r.bad)
      return strata_error(STRATA_ECORRUPT, "%s: corrupt: the plan's %s %s",
                          d->where, r.bad, r.why);
    int id = tag < STRATA_PLAN_TAG_NEXT ? by_tag[tag] - 1 : -1;
    const char *name = id >= 0 ? ents[id].name : "field";
    if (tag <= prev)
      return strata_error(STRATA_ECORRUPT,
                          "%s: corrupt: the plan's %s (tag %llu) follows tag "
                          "%llu: tags increase, each once",
                          d->where, name, (unsigned long long)tag,
                          (unsigned long long)prev);
    if (n > len - r.pos)
      return strata_error(STRATA_ECORRUPT,
                          "%s: corrupt: the plan's %s (tag %llu) is %llu "
                          "bytes long, past the payload's end (%zu left)",
                          d->where, name, (unsigned long long)tag,
                          (unsigned long long)n, len - r.pos);
    if (id < 0 && must)
      return strata_error(STRATA_EVERSION,
                          "%s: the plan holds field tag %llu, which this "
                          "strata does not know and the file says it must "
                          "understand (a newer strata wrote it); upgrade "
                          "strata",
                          d->where, (unsigned long long)tag);
    if (id >= 0 && (must != ents[id].must || type != ents[id].type))
      return strata_error(STRATA_ECORRUPT,
                          "%s: corrupt: the plan's %s (tag %llu) is stored "
                          "as type %u%s, not type %u%s",
                          d->where, name, (unsigned long long)tag, type,
                          must ? ", must understand" : "", ents[id].type,
                          ents[id].must ? ", must understand" : "");
    if (id >= 0) d->at[id] = (span_t){r.pos, (size_t)n, 1};
    d->skipped += id < 0;
    r.pos += (size_t)n;
    prev = tag;
  }
  return 0;
}

/* A reader over record id's value. */
static st__rd_t sub(const dec_t *d, int id) {
  st__rd_t r = {d->data + d->at[id].pos, d->at[id].len, 0, NULL, NULL};
  return r;
}

static void fail(st__rd_t *r, const char *what, const char *why) {
  if (r->bad) return;
  r->bad = what;
  r->why = why;
}

static void get_row(st__rd_t *r, strata_plan_t *p, int id) {
  val_t v = {0, 0};
  const char *name = ents[id].name;
  if (ents[id].type == T_DBL)
    v.d = st__rd_f(r, name);
  else
    v.i = st__rd_int(r, name, INT_MIN, INT_MAX);
  if (!r->bad && (ents[id].type == T_DBL ? is_zero(v.d) : !v.i))
    fail(r, name, "is stored as 0 (a field at 0 is left out)");
  if (!r->bad && r->pos != r->len) fail(r, name, "has bytes after its value");
  if (!r->bad) row_set(p, id, v);
}

/* A string block: printable text is checked with the plan. */
static void get_str(st__rd_t *r, const char *what, char *buf, size_t size,
                    char **dup, int *oom) {
  if (!r->len || memchr(r->p, 0, r->len))
    return fail(r, what, "is empty or holds a NUL byte");
  if (buf && r->len >= size) return fail(r, what, "is too long");
  if (buf) {
    memcpy(buf, r->p, r->len);
    buf[r->len] = 0;
  } else if (!(*dup = strata_strndup((const char *)r->p, r->len))) {
    *oom = 1;
  }
  r->pos = r->len;
}

static int get_fallbacks(dec_t *d, st__rd_t *r, strata_plan_t *p) {
  uint64_t n = st__rd_u(r, "fallback count");
  if (!r->bad && (n < 1 || n > STRATA_FALLBACKS_MAX))
    fail(r, "fallback count", "is not 1 to 16");
  if (!r->bad && d->nested) /* read before it nests any deeper */
    fail(r, "fallback count",
         "is not 0 in a fallback plan (a fallback holds "
         "none)");
  if (r->bad) return 0;
  p->fallbacks = strata_calloc((size_t)n, sizeof *p->fallbacks);
  if (!p->fallbacks) return strata_error(STRATA_ENOMEM, "out of memory");
  for (uint64_t i = 0; i < n && !r->bad; i++) {
    uint64_t len = st__rd_u(r, "fallback's length");
    if (!r->bad && len > r->len - r->pos)
      fail(r, "fallback's length", "runs past the payload");
    if (r->bad) return 0;
    char w[300];
    snprintf(w, sizeof w, "%s (fallback %d)", d->where, (int)i + 1);
    int rc = st__tags_decode(r->p + r->pos, (size_t)len, w, 1, NULL,
                             &p->fallbacks[i]);
    if (rc) return rc;
    p->n_fallbacks = (int)i + 1;
    r->pos += (size_t)len;
  }
  return 0;
}

static int get_list(st__rd_t *r, strata_plan_t *p, int id) {
  int rc = id == B_pareto ? st__get_pareto(r, p) : st__get_configs(r, p);
  if (!rc && !r->bad && (id == B_pareto ? p->n_pareto : p->n_top) == 0)
    fail(r, ents[id].name, "is an empty list (an empty one is left out)");
  return rc;
}

/* Block id, from its record r. */
static int get_block(dec_t *d, st__rd_t *r, strata_plan_t *p, int id) {
  switch (id) {
  case B_model:
    get_str(r, "model", NULL, 0, &p->model, &d->oom);
    break;
  case B_cluster:
    get_str(r, "cluster", NULL, 0, &p->cluster, &d->oom);
    break;
  case B_family:
    get_str(r, "family", p->family, sizeof p->family, NULL, &d->oom);
    break;
  case B_stages:
    st__check_batch(r, p);
    return st__get_stages(r, p, &d->oom);
  case B_ranks:
    if (st__rd_u(r, "rank count") != (uint64_t)p->pp)
      fail(r, "rank count", "is not the pipeline size");
    return st__get_ranks(r, p);
  case B_configurations:
  case B_pareto:
    return get_list(r, p, id);
  case B_node_groups:
    st__get_groups(r, p, 0);
    break;
  case B_rope_scaling:
    st__get_rope(r, &p->rope_scaling, 7);
    break;
  case B_fallbacks:
    return get_fallbacks(d, r, p);
  case B_layouts:
    st__get_layouts(r, p);
    if (!r->bad && !st__has_layouts(p))
      fail(r, "layouts", "state none (a block of none is left out)");
    break;
  }
  return 0;
}

/* The blocks in the order of their tags, which is the order their checks
 * need; the stages and ranks are not optional. */
static int get_blocks(dec_t *d, strata_plan_t *p) {
  for (int id = FIRST_BLOCK; id < ENTS; id++) {
    if (!d->at[id].has) {
      if (id != B_stages && id != B_ranks) continue;
      return strata_error(STRATA_ECORRUPT,
                          "%s: corrupt: the plan's %s are missing", d->where,
                          ents[id].name);
    }
    st__rd_t r = sub(d, id);
    int rc = get_block(d, &r, p, id);
    if (!rc && d->oom) rc = strata_error(STRATA_ENOMEM, "out of memory");
    if (!rc && !r.bad && r.pos != r.len)
      fail(&r, ents[id].name, "has bytes after its last field");
    if (!rc && r.bad)
      rc = strata_error(STRATA_ECORRUPT, "%s: corrupt: the plan's %s %s",
                        d->where, r.bad, r.why);
    if (rc) return rc;
  }
  if (!p->top && !(p->top = strata_calloc(1, sizeof *p->top)))
    return strata_error(STRATA_ENOMEM, "out of memory");
  return 0;
}

static int get_rows(dec_t *d, strata_plan_t *p) {
  for (int id = 0; id < ROWS; id++) {
    if (!d->at[id].has) continue;
    st__rd_t r = sub(d, id);
    get_row(&r, p, id);
    if (r.bad)
      return strata_error(STRATA_ECORRUPT,
                          "%s: corrupt: the plan's %s (tag %u) %s", d->where,
                          r.bad, ents[id].tag, r.why);
  }
  return 0;
}

int st__tags_decode(const unsigned char *data, size_t len, const char *where,
                    int nested, int *skipped, strata_plan_t **out) {
  dec_t *d = strata_calloc(1, sizeof *d);
  strata_plan_t *p = strata_calloc(1, sizeof *p);
  int rc = 0;
  if (!d || !p) rc = strata_error(STRATA_ENOMEM, "out of memory");
  if (!rc) {
    d->data = data, d->where = where, d->nested = nested;
    rc = scan(d, len);
  }
  if (!rc) rc = get_rows(d, p);
  if (!rc) rc = get_blocks(d, p);
  if (!rc) rc = st__plan_check(p, STRATA_ECORRUPT, where, "corrupt");
  if (!rc && skipped) *skipped = d->skipped;
  strata_free(d);
  if (rc) {
    strata_plan_destroy(p);
    return rc;
  }
  *out = p;
  return 0;
}
