/*
 * measure.c - the measured runs strata calibrate fits to: a JSON file
 * ({"format": "strata-measurements", "version": 1, "runs": [...]}) or a
 * CSV file whose header names the same keys (docs/calibration.md).
 *
 * Each run is a configuration as strata estimate takes it -- a model (with
 * the model options of trace gen), a cluster, the degrees and options --
 * and what was measured.  Both forms go through one table of keys, so a
 * key means the same in either, and an unknown key is an error naming it:
 * a misspelt option silently left at its default would calibrate the
 * model to the wrong configuration.  A caller may offer the keys this
 * table does not hold to its own (strata calibrate: every option of
 * strata estimate, so that a run is any configuration estimate takes).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/text.h"
#include "pipeline/search.h"

#define MEAS_FORMAT "strata-measurements"
#define MAX_RUNS 10000
/* How much of a string from the file a message shows. */
#define SHOWN 80
/* A CSV field: a name at most, and room to see it is longer. */
#define FIELD_MAX (ST__NAME_MAX + 2)

typedef enum { K_STR, K_INT, K_NUM, K_BOOL } kind_t;

typedef struct {
  const char *key;
  kind_t kind;
} key_t_;

static const key_t_ keys[] = {
    {"label", K_STR},
    {"model", K_STR},
    {"cluster", K_STR},
    {"tp", K_INT},
    {"pp", K_INT},
    {"dp", K_INT},
    {"micro_batch", K_INT},
    {"global_batch", K_INT},
    {"vpp", K_INT},
    {"first_stage_layers", K_INT},
    {"last_stage_layers", K_INT},
    {"zero", K_INT},
    {"recompute", K_STR},
    {"recipe", K_STR},
    {"framework", K_STR},
    {"sequence_parallel", K_BOOL},
/* clang-format off */
#define SWITCH_KEY(F, m, key, ...) {#key, K_BOOL},
    STRATA_PLAN_SWITCHES(SWITCH_KEY, keys)
#undef SWITCH_KEY
#define CHOICE_KEY(F, kind, m, key, ...) {#key, K_STR},
    STRATA_PLAN_CHOICES(CHOICE_KEY, keys)
#undef CHOICE_KEY
    /* clang-format on */
    {"flash_attention", K_BOOL},
    {"layers", K_INT},
    {"hidden", K_INT},
    {"heads", K_INT},
    {"kv_heads", K_INT},
    {"ffn", K_INT},
    {"seq", K_INT},
    {"vocab", K_INT},
    {"step_seconds", K_NUM},
    {"peak_memory_bytes", K_NUM},
    {"peak_memory_gib", K_NUM},
};
#define N_KEYS ((int)(sizeof keys / sizeof keys[0]))

/* The range of each measured figure (K_NUM): 0 means "not given", and
 * anything else outside it is refused with the range, so a step of
 * 1e-300 s is refused as 1e+308 s is (its ratio to the model's step
 * would fill the report with digits and pin the fit to its bounds). */
static const struct {
  const char *key;
  double lo, hi;
} ranges[] = {
    {"step_seconds", 1e-6, 1e6},
    {"peak_memory_bytes", 1, 1e15},
    {"peak_memory_gib", 1.0 / (1 << 30), 1e6},
};

static int num_check(const char *key, double v, const char *at) {
  for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
    if (!strcmp(ranges[i].key, key) && v != 0 &&
        !(v >= ranges[i].lo && v <= ranges[i].hi))
      return strata_error(STRATA_EBADINPUT,
                          "%s: %s = %g: out of range (%g to %g)", at, key, v,
                          ranges[i].lo, ranges[i].hi);
  return 0;
}

static int find_key(const char *k) {
  for (int i = 0; i < N_KEYS; i++)
    if (!strcmp(keys[i].key, k)) return i;
  return -1;
}

static int set_str(char **dst, const char *v) {
  strata_free(*dst);
  *dst = strata_strdup(v);
  return *dst ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
}

static void run_init(strata_measurement_t *r) {
  memset(r, 0, sizeof *r);
  strata_plan_opts_init(&r->po);
  r->po.recompute = STRATA_RECOMPUTE_AUTO; /* not given: finish_run */
  r->po.sequence_parallel = 0;
  r->po.vpp = -1; /* not given: 1, or the layout's (finish_run) */
  r->po.micro_batch = r->po.gen.micro_batch = 1;
  r->po.no_memory_check = 1;
  r->po.quiet = 1;
  r->po.top = 1;
}

/* One key's value (as text for strings, else a number; booleans 0/1). */
static int set_value(strata_measurement_t *r, int k, const char *s, double v,
                     const char *at) {
  strata_plan_opts_t *o = &r->po;
  const char *key = keys[k].key;
  if (keys[k].kind == K_INT && (v != floor(v) || v < 0 || v > (1 << 30)))
    return strata_error(STRATA_EBADINPUT, "%s: %s = %g: wants a whole number",
                        at, key, v);
  int rc = keys[k].kind == K_NUM ? num_check(key, v, at) : 0;
  if (rc) return rc;
  /* only whole-number keys are converted: a measured figure may exceed
   * an int (found by fuzz_runs) */
  int iv = keys[k].kind == K_INT || keys[k].kind == K_BOOL ? (int)v : 0;
  /* strings are names (label, model, cluster) or words: printable, at
   * most ST__NAME_MAX bytes, before any message shows them */
  if (keys[k].kind == K_STR && (rc = st__name_check(s, key, at))) return rc;
  if (!strcmp(key, "label")) return set_str(&r->label, s);
  if (!strcmp(key, "model")) return set_str(&r->model, s);
  if (!strcmp(key, "cluster")) return set_str(&r->cluster, s);
  if (!strcmp(key, "recompute")) rc = strata_recompute_parse(s, &o->recompute);
  if (!strcmp(key, "recipe")) rc = strata_recipe_parse(s, &o->recipe);
  if (!strcmp(key, "framework")) rc = strata_framework_parse(s, &o->framework);
#define CHOICE_SET(F, kind, m, k, ...)                                         \
  if (!strcmp(key, #k)) rc = strata_##k##_parse(s, &o->m);
  STRATA_PLAN_CHOICES(CHOICE_SET, o)
#undef CHOICE_SET
  if (rc) {
    strata_error_prefix("%s: %s", at, key);
    return rc;
  }
  int *ints[] = {
      &o->tp,           &o->pp,         &o->dp,           &o->micro_batch,
      &o->global_batch, &o->vpp,        &o->first_layers, &o->last_layers,
      &o->zero_stage,   &o->gen.layers, &o->gen.hidden,   &o->gen.heads,
      &o->gen.kv_heads, &o->gen.ffn,    &o->gen.seq,      &o->gen.vocab};
  static const char *int_keys[] = {"tp",
                                   "pp",
                                   "dp",
                                   "micro_batch",
                                   "global_batch",
                                   "vpp",
                                   "first_stage_layers",
                                   "last_stage_layers",
                                   "zero",
                                   "layers",
                                   "hidden",
                                   "heads",
                                   "kv_heads",
                                   "ffn",
                                   "seq",
                                   "vocab"};
  for (size_t i = 0; i < sizeof int_keys / sizeof int_keys[0]; i++)
    if (!strcmp(key, int_keys[i])) *ints[i] = iv;
  if (!strcmp(key, "micro_batch")) o->gen.micro_batch = iv;
  if (!strcmp(key, "sequence_parallel")) o->sequence_parallel = iv != 0;
  if (!strcmp(key, "flash_attention")) o->gen.flash_attention = iv != 0;
#define SWITCH_SET(F, m, k, ...)                                               \
  if (!strcmp(key, #k)) o->m = iv != 0;
  STRATA_PLAN_SWITCHES(SWITCH_SET, o)
#undef SWITCH_SET
  if (!strcmp(key, "step_seconds")) r->step_seconds = v;
  /* the two name one figure: a run giving both would keep the last */
  if (!strncmp(key, "peak_memory_", 12) && v != 0 && r->peak_bytes != 0)
    return strata_error(STRATA_EBADINPUT,
                        "%s: peak_memory_bytes and peak_memory_gib are both "
                        "given; give one",
                        at);
  if (!strcmp(key, "peak_memory_bytes")) r->peak_bytes = v;
  if (!strcmp(key, "peak_memory_gib")) r->peak_bytes = v * 1073741824.0;
  return 0;
}

static int finish_run(strata_measurement_t *r, const char *at) {
  if (!r->model || !r->cluster)
    return strata_error(STRATA_EBADINPUT,
                        "%s: needs a model and a cluster (per run or for the "
                        "file)",
                        at);
  if (!r->po.tp || !r->po.pp)
    return strata_error(STRATA_EBADINPUT, "%s: needs tp and pp", at);
  if (!(r->step_seconds > 0))
    return strata_error(STRATA_EBADINPUT,
                        "%s: needs step_seconds (the measured step), above 0",
                        at);
  if (r->po.vpp == -1) r->po.vpp = r->po.pipeline_layout ? 0 : 1;
  /* not given: none (Megatron-LM's default), unless the modules or units
   * of a recompute are */
  if (r->po.recompute == STRATA_RECOMPUTE_AUTO)
    r->po.recompute = r->po.recompute_modules  ? STRATA_RECOMPUTE_SELECTIVE
                      : r->po.recompute_layers ? STRATA_RECOMPUTE_FULL
                                               : STRATA_RECOMPUTE_NONE;
  if (r->po.micro_batch < 1 || (r->po.vpp < 1 && !r->po.pipeline_layout))
    return strata_error(STRATA_EBADINPUT,
                        "%s: micro_batch and vpp must be at least 1", at);
  r->po.model_spec = r->model;
  return 0;
}

/* A key of the caller's table (m->key_fn): 0 when taken; the error
 * placed at the run; an unknown key named as the reader's own are. */
static int hook_value(const strata_measurements_t *m, strata_measurement_t *r,
                      const char *key, const char *v, const char *at) {
  char shown[SHOWN];
  int rc = m->key_fn ? m->key_fn(key, v, &r->po, m->key_ud) : STRATA_ENOTFOUND;
  if (rc == STRATA_ENOTFOUND) {
    strata_error_clear();
    return strata_error(STRATA_EBADINPUT, "%s: unknown key '%s'", at,
                        st__plain(key, shown, sizeof shown));
  }
  if (rc) {
    strata_error_prefix("%s", at);
    return rc;
  }
  /* the layout's text is the file's, freed after reading: the run keeps
   * its own copy */
  if (r->po.pipeline_layout && r->po.pipeline_layout != r->layout) {
    strata_free(r->layout);
    if (!(r->layout = strata_strdup(r->po.pipeline_layout)))
      return strata_error(STRATA_ENOMEM, "out of memory");
    r->po.pipeline_layout = r->layout;
  }
  return 0;
}

/* A JSON value the caller's table takes as text. */
static int json_hook(const strata_measurements_t *m, strata_measurement_t *r,
                     const cJSON *it, const char *at) {
  char num[64], shown[SHOWN];
  const char *v = num;
  if (cJSON_IsString(it))
    v = it->valuestring;
  else if (cJSON_IsBool(it))
    v = cJSON_IsTrue(it) ? "true" : "false";
  else if (cJSON_IsNumber(it))
    snprintf(num, sizeof num, "%.17g", it->valuedouble);
  else
    return strata_error(STRATA_EBADINPUT,
                        "%s: %s wants a string, a number or true/false", at,
                        st__plain(it->string, shown, sizeof shown));
  return hook_value(m, r, it->string, v, at);
}

/* ---- JSON ---- */

static int json_run(const strata_measurements_t *m, const cJSON *o,
                    const strata_measurement_t *dflt, strata_measurement_t *r,
                    const char *at) {
  run_init(r);
  int rc = 0;
  if (dflt->model) rc = set_str(&r->model, dflt->model);
  if (!rc && dflt->cluster) rc = set_str(&r->cluster, dflt->cluster);
  for (const cJSON *it = o->child; it && !rc; it = it->next) {
    int k = it->string ? find_key(it->string) : -1;
    if (k < 0 && it->string) {
      rc = json_hook(m, r, it, at);
      continue;
    }
    if (k < 0) return strata_error(STRATA_EBADINPUT, "%s: a key lacks", at);
    if (keys[k].kind == K_STR && !cJSON_IsString(it))
      return strata_error(STRATA_EBADINPUT, "%s: %s wants a string", at,
                          keys[k].key);
    if (keys[k].kind == K_BOOL && !cJSON_IsBool(it))
      return strata_error(STRATA_EBADINPUT, "%s: %s wants true or false", at,
                          keys[k].key);
    if ((keys[k].kind == K_INT || keys[k].kind == K_NUM) && !cJSON_IsNumber(it))
      return strata_error(STRATA_EBADINPUT, "%s: %s wants a number", at,
                          keys[k].key);
    rc = set_value(r, k, cJSON_IsString(it) ? it->valuestring : NULL,
                   cJSON_IsBool(it) ? cJSON_IsTrue(it) : it->valuedouble, at);
  }
  return rc ? rc : finish_run(r, at);
}

static int parse_json(const char *text, size_t len, strata_measurements_t *m) {
  cJSON *root = NULL;
  const cJSON *runs = NULL;
  const char *fmt = NULL, *model = NULL, *cluster = NULL;
  int64_t ver = 0;
  strata_measurement_t dflt;
  char at[300], shown[SHOWN];
  memset(&dflt, 0, sizeof dflt);
  int rc = st__json_parse(text, len, m->where, &root);
  if (!rc) rc = st__json_str(root, "format", m->where, 1, &fmt);
  if (!rc && strcmp(fmt, MEAS_FORMAT))
    rc =
        strata_error(STRATA_EBADINPUT, "%s: format is '%s', not '%s'", m->where,
                     st__plain(fmt, shown, sizeof shown), MEAS_FORMAT);
  if (!rc) rc = st__json_int(root, "version", m->where, 1, &ver);
  if (!rc && ver != 1)
    rc = strata_error(STRATA_EVERSION,
                      "%s: measurements version %lld: this "
                      "strata reads version 1",
                      m->where, (long long)ver);
  for (const cJSON *it = root ? root->child : NULL; !rc && it; it = it->next)
    if (strcmp(it->string, "format") && strcmp(it->string, "version") &&
        strcmp(it->string, "model") && strcmp(it->string, "cluster") &&
        strcmp(it->string, "runs"))
      rc = strata_error(STRATA_EBADINPUT,
                        "%s: unknown key '%s' (format, "
                        "version, model, cluster, runs)",
                        m->where, st__plain(it->string, shown, sizeof shown));
  /* the file's model and cluster, for runs that do not name their own */
  if (!rc && (rc = st__json_str(root, "model", m->where, 0, &model)) ==
                 STRATA_ENOTFOUND)
    rc = 0;
  if (!rc && (rc = st__json_str(root, "cluster", m->where, 0, &cluster)) ==
                 STRATA_ENOTFOUND)
    rc = 0;
  if (!rc && model) rc = st__name_check(model, "model", m->where);
  if (!rc && cluster) rc = st__name_check(cluster, "cluster", m->where);
  dflt.model = (char *)model;
  dflt.cluster = (char *)cluster;
  if (!rc) rc = st__json_array(root, "runs", m->where, 1, &runs);
  int n = rc ? 0 : cJSON_GetArraySize(runs);
  if (!rc && (n < 1 || n > MAX_RUNS))
    rc = strata_error(STRATA_EBADINPUT, "%s: runs: %d runs (1 to %d)", m->where,
                      n, MAX_RUNS);
  if (!rc && !(m->v = strata_calloc((size_t)n, sizeof *m->v)))
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  for (int i = 0; i < n && !rc; i++) {
    const cJSON *o = cJSON_GetArrayItem(runs, i);
    snprintf(at, sizeof at, "%s: runs[%d]", m->where, i);
    m->n = i + 1;
    rc = cJSON_IsObject(o)
             ? json_run(m, o, &dflt, &m->v[i], at)
             : strata_error(STRATA_EBADINPUT, "%s: not an object", at);
  }
  cJSON_Delete(root);
  return rc;
}

/* ---- CSV ---- */

/* The next comma-separated field of line into buf (no quoting); *long_
 * is set when it did not fit. */
static const char *next_field(const char *p, char *buf, size_t size,
                              int *long_) {
  size_t n = 0;
  while (*p && *p != ',' && *p != '\n' && *p != '\r') {
    if (n + 1 < size)
      buf[n++] = *p;
    else
      *long_ = 1;
    p++;
  }
  while (n && isspace((unsigned char)buf[n - 1]))
    n--;
  buf[n] = 0;
  char *s = buf;
  while (isspace((unsigned char)*s))
    s++;
  memmove(buf, s, strlen(s) + 1);
  return *p == ',' ? p + 1 : p;
}

/* A field the reader cannot take as it is: longer than any value, or
 * quoted (no value holds a comma or a quote, so none needs quotes). */
static int bad_field(const char *buf, int long_, const char *at,
                     const char *what) {
  char shown[SHOWN];
  if (long_)
    return strata_error(STRATA_EBADINPUT,
                        "%s: %s '%s...' is longer than %d bytes", at, what,
                        st__plain(buf, shown, sizeof shown), FIELD_MAX - 2);
  if (buf[0] == '"')
    return strata_error(STRATA_EBADINPUT,
                        "%s: %s %s is quoted: the reader takes fields "
                        "without quotes (no value holds a comma)",
                        at, what, st__plain(buf, shown, sizeof shown));
  return 0;
}

static int csv_value(strata_measurement_t *r, int k, const char *v,
                     const char *at) {
  double d = 0;
  if (!*v) return 0; /* empty: not given */
  if (keys[k].kind == K_BOOL) {
    char shown[SHOWN];
    if (strcmp(v, "true") && strcmp(v, "false") && strcmp(v, "1") &&
        strcmp(v, "0"))
      return strata_error(STRATA_EBADINPUT,
                          "%s: %s = '%s': wants true or false", at, keys[k].key,
                          st__plain(v, shown, sizeof shown));
    d = !strcmp(v, "true") || !strcmp(v, "1");
  } else if (keys[k].kind != K_STR) {
    char *end, shown[SHOWN];
    errno = 0;
    d = strtod(v, &end);
    if (errno || *end || end == v)
      return strata_error(STRATA_EBADINPUT, "%s: %s = '%s': not a number", at,
                          keys[k].key, st__plain(v, shown, sizeof shown));
  }
  return set_value(r, k, v, d, at);
}

/* The CSV's columns: cols[c] a key of the reader's table, or -1 for one
 * of the caller's (its name in names[c]). */
typedef struct {
  int cols[64], nc;
  char names[64][FIELD_MAX];
} header_t;

static int csv_header(const char **pp, header_t *h,
                      const strata_measurements_t *m) {
  char buf[FIELD_MAX], at[300], shown[SHOWN];
  int *cols = h->cols, *nc = &h->nc;
  const char *p = *pp;
  int rc = 0;
  snprintf(at, sizeof at, "%s:1", m->where);
  while (*p && *p != '\n' && *nc < 64) {
    int long_ = 0;
    p = next_field(p, buf, sizeof buf, &long_);
    if ((rc = bad_field(buf, long_, at, "column"))) return rc;
    int k = find_key(buf);
    int hk = k < 0 && m->key_fn ? m->key_fn(buf, NULL, NULL, m->key_ud) : 0;
    if (hk && hk != STRATA_ENOTFOUND) {
      strata_error_prefix("%s", at);
      return hk;
    }
    if (k < 0 && (!m->key_fn || hk)) {
      strata_error_clear();
      return strata_error(STRATA_EBADINPUT, "%s: unknown column '%s'", at,
                          st__plain(buf, shown, sizeof shown));
    }
    snprintf(h->names[*nc], sizeof h->names[*nc], "%s", buf);
    /* a repeated column would let its last field win unseen, as a JSON
     * reader refuses a repeated key */
    for (int c = 0; c < *nc; c++)
      if (!strcmp(h->names[c], buf))
        return strata_error(STRATA_EBADINPUT,
                            "%s: column '%s' is given twice (columns %d and "
                            "%d); give it once",
                            at, buf, c + 1, *nc + 1);
    cols[(*nc)++] = k;
    if (*p == '\n' || *p == '\r') break;
  }
  *pp = p;
  return 0;
}

static int csv_row(const strata_measurements_t *m, const char **pp,
                   const header_t *h, strata_measurement_t *r, const char *at) {
  char buf[FIELD_MAX];
  const char *p = *pp;
  int rc = 0, nc = h->nc;
  run_init(r);
  for (int c = 0; c < nc && !rc; c++) {
    int long_ = 0;
    p = next_field(p, buf, sizeof buf, &long_);
    rc = bad_field(buf, long_, at, h->names[c]);
    if (!rc && h->cols[c] >= 0) rc = csv_value(r, h->cols[c], buf, at);
    if (!rc && h->cols[c] < 0 && *buf)
      rc = hook_value(m, r, h->names[c], buf, at);
  }
  if (!rc && *p && *p != '\n' && *p != '\r')
    rc = strata_error(STRATA_EBADINPUT,
                      "%s: more fields than the header's "
                      "%d",
                      at, nc);
  if (!rc) rc = finish_run(r, at);
  *pp = p;
  return rc;
}

static int parse_csv(const char *text, strata_measurements_t *m) {
  header_t *h = strata_calloc(1, sizeof *h); /* 16 KiB of names */
  int rc = h ? 0 : strata_error(STRATA_ENOMEM, "out of memory"), line = 1;
  char at[300];
  const char *p = text;
  if (!rc) rc = csv_header(&p, h, m);
  int cap = 0;
  while (!rc && *p) {
    while (*p == '\n' || *p == '\r') {
      if (*p == '\n') line++;
      p++;
    }
    if (!*p) break;
    if (m->n == cap) {
      cap = cap ? 2 * cap : 16;
      strata_measurement_t *v =
          cap > MAX_RUNS ? NULL : strata_realloc(m->v, sizeof *v * (size_t)cap);
      if (!v) {
        rc = cap > MAX_RUNS
                 ? strata_error(STRATA_EBADINPUT, "%s: more than %d runs",
                                m->where, MAX_RUNS)
                 : strata_error(STRATA_ENOMEM, "out of memory");
        break;
      }
      m->v = v;
    }
    snprintf(at, sizeof at, "%s:%d", m->where, line);
    rc = csv_row(m, &p, h, &m->v[m->n++], at);
  }
  if (!rc && m->n == 0)
    rc = strata_error(STRATA_EBADINPUT, "%s: no runs after the header",
                      m->where);
  strata_free(h);
  return rc;
}

/* The CSV reader walks to a NUL: one inside the text would end it early
 * and hide what follows. */
static int csv_nul(const char *text, size_t len, const char *where) {
  const char *z = memchr(text, 0, len);
  if (!z) return 0;
  int line = 1;
  for (const char *p = text; p < z; p++)
    line += *p == '\n';
  return strata_error(STRATA_EBADINPUT, "%s:%d: a NUL byte (not CSV text)",
                      where, line);
}

void strata_measurements_destroy(strata_measurements_t *m) {
  if (!m) return;
  for (int i = 0; m->v && i < m->n; i++) {
    strata_free(m->v[i].label);
    strata_free(m->v[i].model);
    strata_free(m->v[i].cluster);
    strata_free(m->v[i].layout);
  }
  strata_free(m->v);
  strata_free(m->where);
  strata_free(m);
}

int strata_measurements_parse_with(const char *text, size_t len,
                                   const char *where, strata_run_key_fn fn,
                                   void *ud, strata_measurements_t **out) {
  strata_measurements_t *m = strata_calloc(1, sizeof *m);
  *out = NULL;
  if (!m || !(m->where = strata_strdup(where ? where : "measurements"))) {
    strata_free(m);
    return strata_error(STRATA_ENOMEM, "out of memory");
  }
  m->key_fn = fn;
  m->key_ud = ud;
  char *csv = NULL;
  /* a UTF-8 byte order mark, as spreadsheets write CSV */
  if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) text += 3, len -= 3;
  const char *p = text;
  while (p < text + len && isspace((unsigned char)*p))
    p++;
  /* the CSV reader walks to a NUL, and text has len bytes, not always a
   * NUL after them (found by fuzz_runs) */
  int rc = p < text + len && *p == '{'    ? parse_json(text, len, m)
           : csv_nul(text, len, m->where) ? STRATA_EBADINPUT
           : (csv = strata_strndup(text, len))
               ? parse_csv(csv, m)
               : strata_error(STRATA_ENOMEM, "out of memory");
  strata_free(csv);
  m->key_fn = NULL;
  m->key_ud = NULL;
  if (rc) {
    strata_measurements_destroy(m);
    return rc;
  }
  *out = m;
  return 0;
}

int strata_measurements_parse(const char *text, size_t len, const char *where,
                              strata_measurements_t **out) {
  return strata_measurements_parse_with(text, len, where, NULL, NULL, out);
}

int strata_measurements_load_with(const char *path, strata_run_key_fn fn,
                                  void *ud, strata_measurements_t **out) {
  char *text = NULL;
  size_t len = 0;
  int rc = strata_file_read(path, 16 << 20, &text, &len);
  if (!rc) rc = strata_measurements_parse_with(text, len, path, fn, ud, out);
  strata_free(text);
  return rc;
}

int strata_measurements_load(const char *path, strata_measurements_t **out) {
  return strata_measurements_load_with(path, NULL, NULL, out);
}
