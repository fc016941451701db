/*
 * trace_read.c - parse a trace file (format v1, docs/trace-format.md) into
 * a validated graph.
 *
 * cJSON reads the text (core/json.h reports syntax errors with line and
 * column); this file maps each element onto the graph builders, naming the
 * tensor, op or block at fault in every message, and ends with
 * strata_graph_validate, so a graph that comes out of here is one the
 * planner can trust.  Messages are prefixed with `where` (the file name).
 * On any failure nothing is returned and nothing leaks.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "core/text.h"
#include "traces/traces_int.h"

#define WHERE_MAX 600
/* How much of a string from the file a message shows. */
#define SHOWN 80
/* The bounds the command line sets (--micro-batch, --seq): a trace that
 * loads gives a plan that a plan file can hold. */
#define MAX_MICRO_BATCH (1 << 20)
#define MAX_SEQ (1 << 24)
/* Sizes the plan file stores are at most 2^30. */
#define MAX_SIZE (1 << 30)

/* A small int field in [lo, hi]: absent leaves *out untouched. */
static int get_int(const cJSON *o, const char *key, const char *where,
                   int required, int lo, int hi, int *out) {
  int64_t v;
  int rc = st__json_int(o, key, where, required, &v);
  if (rc == STRATA_ENOTFOUND) return 0;
  if (rc) return rc;
  if (v < lo || v > hi)
    return strata_error(STRATA_EBADINPUT, "%s: '%s' is %lld (must be %d to %d)",
                        where, key, (long long)v, lo, hi);
  *out = (int)v;
  return 0;
}

static int get_flag(const cJSON *o, const char *key, const char *where,
                    int *out) {
  int rc = st__json_bool(o, key, where, 0, out);
  return rc == STRATA_ENOTFOUND ? 0 : rc;
}

static int read_header(const cJSON *root, const char *where) {
  const char *fmt;
  int64_t version;
  int rc;
  if (!cJSON_IsObject(root))
    return strata_error(STRATA_EBADINPUT,
                        "%s: a trace is a JSON object, not an array or value",
                        where);
  if ((rc = st__json_str(root, "format", where, 1, &fmt))) return rc;
  char shown[SHOWN];
  if (strcmp(fmt, "strata-trace"))
    return strata_error(STRATA_EBADINPUT,
                        "%s: 'format' is \"%s\", expected \"strata-trace\"",
                        where, st__plain(fmt, shown, sizeof shown));
  if ((rc = st__json_int(root, "version", where, 1, &version))) return rc;
  if (version > STRATA_TRACE_VERSION)
    return strata_error(STRATA_EVERSION,
                        "%s: version %lld is newer than this strata reads "
                        "(%d); upgrade strata",
                        where, (long long)version, STRATA_TRACE_VERSION);
  if (version < 1)
    return strata_error(STRATA_EBADINPUT, "%s: version %lld is not valid",
                        where, (long long)version);
  return 0;
}

/* A non-negative number field: absent leaves *out untouched. */
static int get_nonneg(const cJSON *o, const char *key, const char *where,
                      double *out) {
  double v;
  int rc = st__json_num(o, key, where, 0, &v);
  if (rc == STRATA_ENOTFOUND) return 0;
  if (rc) return rc;
  if (!(v >= 0 && v <= 1e12))
    return strata_error(STRATA_EBADINPUT, "%s: '%s' is %g (must be 0 to 1e12)",
                        where, key, v);
  *out = v;
  return 0;
}

/* "rope_scaling" (optional): the type by name, its figures. */
static int read_rope_scaling(strata_graph_t *g, const cJSON *m,
                             const char *where) {
  strata_rope_scaling_t *r = &g->hp.rope_scaling;
  const cJSON *o = NULL;
  const char *type = NULL;
  char w[WHERE_MAX], shown[SHOWN];
  double orig = 0;
  int rc = st__json_object(m, "rope_scaling", where, 0, &o);
  if (rc == STRATA_ENOTFOUND) return 0;
  if (rc) return rc;
  snprintf(w, sizeof w, "%.560s: rope_scaling", where);
  if ((rc = st__json_str(o, "type", w, 1, &type))) return rc;
  for (int k = 1; k < STRATA_ROPE_SCALING_COUNT; k++)
    if (!strcmp(type, strata_rope_scaling_name(k))) r->type = k;
  if (!r->type)
    return strata_error(STRATA_EBADINPUT,
                        "%s: 'type' is \"%s\" (llama3, linear or yarn)", w,
                        st__plain(type, shown, sizeof shown));
  if ((rc = get_nonneg(o, "factor", w, &r->factor)) ||
      (rc = get_nonneg(o, "low", w, &r->low)) ||
      (rc = get_nonneg(o, "high", w, &r->high)) ||
      (rc = get_nonneg(o, "mscale", w, &r->mscale)) ||
      (rc = get_nonneg(o, "mscale_all", w, &r->mscale_all)) ||
      (rc = get_nonneg(o, "original", w, &orig)) ||
      (rc = get_flag(o, "unrounded", w, &r->unrounded)) ||
      (rc = get_flag(o, "full_only", w, &r->full_only)))
    return rc;
  if (orig != (int)orig || orig > MAX_SIZE)
    return strata_error(STRATA_EBADINPUT,
                        "%s: 'original' is %g (a whole number of positions)", w,
                        orig);
  r->original = (int)orig;
  return 0;
}

/* The variants and mixture of experts, all optional. */
static int read_variants(strata_graph_t *g, const cJSON *m, const char *w) {
  static const char *flags[] = {"qkv_bias",    "out_bias",   "qk_norm",
                                "expert_bias", "qk_l2_norm", "router_sigmoid",
                                "mlp_bias",    "attn_sinks"};
  int l2 = 0;
  int *b[] = {&g->hp.qkv_bias,
              &g->hp.out_bias,
              &g->hp.qk_norm,
              &g->hp.expert_bias,
              &l2,
              &g->hp.router_sigmoid,
              &g->hp.mlp_bias,
              &g->hp.attn_sinks};
  int rc = 0;
#define GET_INT_(f)                                                            \
  if (!rc) rc = get_int(m, #f, w, 0, 0, MAX_SIZE, &g->hp.f);
#define GET_NUM_(f)                                                            \
  if (!rc) rc = get_nonneg(m, #f, w, &g->hp.f);
  ST__HP_INTS(GET_INT_)
  for (size_t i = 0; i < sizeof flags / sizeof flags[0] && !rc; i++)
    rc = get_flag(m, flags[i], w, b[i]);
  ST__HP_NUMS(GET_NUM_)
#undef GET_INT_
#undef GET_NUM_
  if (!rc && l2) g->hp.qk_norm = 2;
  if (!rc && (g->hp.norm_eps > 1 || g->hp.init_std > 1))
    rc = strata_error(STRATA_EBADINPUT, "%s: '%s' is %g (at most 1)", w,
                      g->hp.norm_eps > 1 ? "norm_eps" : "init_std",
                      g->hp.norm_eps > 1 ? g->hp.norm_eps : g->hp.init_std);
  if (!rc && g->hp.rotary_percent > 1)
    rc = strata_error(STRATA_EBADINPUT,
                      "%s: 'rotary_percent' is %g (a share of the head, at "
                      "most 1)",
                      w, g->hp.rotary_percent);
  if (!rc && g->hp.rotary_percent == 1) g->hp.rotary_percent = 0; /* all */
  if (!rc && g->hp.mtp_layers > 16)
    rc = strata_error(STRATA_EBADINPUT,
                      "%s: 'mtp_layers' is %d (at most 16 multi-token "
                      "prediction modules)",
                      w, g->hp.mtp_layers);
  return rc;
}

static int read_model(strata_graph_t *g, const cJSON *root, const char *where) {
  const cJSON *m = NULL;
  const char *family = "";
  char w[WHERE_MAX];
  int rc = st__json_object(root, "model", where, 0, &m);
  if (rc == STRATA_ENOTFOUND) return 0;
  if (rc) return rc;
  snprintf(w, sizeof w, "%s: model", where);
  if ((rc = st__json_str(m, "family", w, 0, &family)) && rc != STRATA_ENOTFOUND)
    return rc;
  char shown[SHOWN];
  if (strlen(family) >= sizeof g->hp.family)
    return strata_error(STRATA_EBADINPUT, "%s: family '%s' is too long", w,
                        st__plain(family, shown, sizeof shown));
  if (family[0] && (rc = st__name_check(family, "'family'", w))) return rc;
  strcpy(g->hp.family, family);
  if ((rc = get_int(m, "layers", w, 0, 0, MAX_SIZE, &g->hp.layers)) ||
      (rc = get_int(m, "hidden", w, 0, 0, MAX_SIZE, &g->hp.hidden)) ||
      (rc = get_int(m, "heads", w, 0, 0, MAX_SIZE, &g->hp.heads)) ||
      (rc = get_int(m, "kv_heads", w, 0, 0, MAX_SIZE, &g->hp.kv_heads)) ||
      (rc = get_int(m, "ffn", w, 0, 0, MAX_SIZE, &g->hp.ffn)) ||
      (rc = get_int(m, "vocab", w, 0, 0, MAX_SIZE, &g->hp.vocab)) ||
      (rc = get_int(m, "max_seq", w, 0, 0, MAX_SIZE, &g->hp.max_seq)) ||
      (rc = get_flag(m, "flash_attention", w, &g->hp.flash_attention)) ||
      (rc = get_flag(m, "dropout", w, &g->hp.dropout)))
    return rc;
  if ((rc = read_variants(g, m, w))) return rc;
  return read_rope_scaling(g, m, w);
}

/* ---- tensors ---- */

static int read_shape(const cJSON *t, const char *w, int *ndim,
                      int64_t *shape) {
  const cJSON *arr, *d;
  int rc = st__json_array(t, "shape", w, 1, &arr);
  if (rc) return rc;
  *ndim = 0;
  cJSON_ArrayForEach(d, arr) {
    if (*ndim == STRATA_MAX_DIMS || !cJSON_IsNumber(d) || d->valuedouble < 1 ||
        d->valuedouble > 9.0e15 ||
        d->valuedouble != (double)(int64_t)d->valuedouble)
      return strata_error(STRATA_EBADINPUT,
                          "%s: 'shape' must be an array of at most %d "
                          "positive integers",
                          w, STRATA_MAX_DIMS);
    shape[(*ndim)++] = (int64_t)d->valuedouble;
  }
  return 0;
}

static int read_tensor(strata_graph_t *g, const cJSON *t, int i,
                       const char *where) {
  static const char *const kinds[] = {"input", "param", "activation"};
  char w[WHERE_MAX], shown[SHOWN];
  const char *id, *dt, *kind;
  int64_t shape[STRATA_MAX_DIMS];
  int ndim, k, rc;
  strata_dtype_t dtype;
  snprintf(w, sizeof w, "%s: tensors[%d]", where, i);
  if (!cJSON_IsObject(t))
    return strata_error(STRATA_EBADINPUT, "%s must be an object", w);
  if ((rc = st__json_str(t, "id", w, 1, &id)) ||
      (rc = st__name_check(id, "'id'", w)))
    return rc;
  snprintf(w, sizeof w, "%s: tensor '%s'", where,
           st__plain(id, shown, sizeof shown));
  if ((rc = read_shape(t, w, &ndim, shape)) ||
      (rc = st__json_str(t, "dtype", w, 1, &dt)) ||
      (rc = st__json_str(t, "kind", w, 1, &kind)))
    return rc;
  if (strata_dtype_parse(dt, &dtype))
    return strata_error(STRATA_EBADINPUT,
                        "%s: dtype '%s' is not one of f32, bf16, f16, f8, "
                        "i64, i32, u8",
                        w, st__plain(dt, shown, sizeof shown));
  for (k = 0; k < 3 && strcmp(kind, kinds[k]); k++) {
  }
  if (k == 3)
    return strata_error(STRATA_EBADINPUT,
                        "%s: kind '%s' is not input, param or activation", w,
                        st__plain(kind, shown, sizeof shown));
  rc = strata_graph_add_tensor(g, id, ndim, shape, dtype,
                               (strata_tensor_kind_t)k);
  if (rc < 0) strata_error_prefix("%s", where);
  return rc < 0 ? rc : 0;
}

/* ---- ops ---- */

static int unknown_kind(const char *w, const char *kind) {
  char list[512], shown[SHOWN];
  size_t n = 0;
  list[0] = '\0';
  for (int k = 0; k < STRATA_OP_COUNT && n < sizeof list; k++)
    n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", k ? ", " : "",
                          strata_op_kind_name((strata_op_kind_t)k));
  return strata_error(STRATA_EBADINPUT,
                      "%s: unknown kind '%s' (valid kinds: %s)", w,
                      st__plain(kind, shown, sizeof shown), list);
}

static int read_refs(const strata_graph_t *g, const cJSON *o, const char *key,
                     const char *w, int max, int *idx, int *n) {
  const cJSON *arr, *it;
  int rc = st__json_array(o, key, w, 1, &arr);
  if (rc) return rc;
  *n = 0;
  cJSON_ArrayForEach(it, arr) {
    if (*n == max)
      return strata_error(STRATA_EBADINPUT, "%s: more than %d %s", w, max, key);
    if (!cJSON_IsString(it))
      return strata_error(STRATA_EBADINPUT,
                          "%s: '%s' must list tensor ids (strings)", w, key);
    int t = strata_graph_find_tensor(g, it->valuestring);
    char shown[SHOWN];
    if (t < 0)
      return strata_error(STRATA_EBADINPUT,
                          "%s: %.*s %d is unknown tensor '%s' (a dangling "
                          "reference: declare it under \"tensors\")",
                          w, (int)strlen(key) - 1, key, *n,
                          st__plain(it->valuestring, shown, sizeof shown));
    idx[(*n)++] = t;
  }
  return 0;
}

/* An optional int64 or number; absent leaves *out untouched. */
static int get_i64(const cJSON *o, const char *key, const char *w,
                   int64_t *out) {
  int rc = st__json_int(o, key, w, 0, out);
  return rc == STRATA_ENOTFOUND ? 0 : rc;
}

static int get_num(const cJSON *o, const char *key, const char *w,
                   double *out) {
  int rc = st__json_num(o, key, w, 0, out);
  return rc == STRATA_ENOTFOUND ? 0 : rc;
}

/* "perm": [2, 0, 1]: at most STRATA_MAX_DIMS dims (checked against the
 * input by the shape rule). */
static int read_perm(strata_op_t *op, const cJSON *o, const char *w) {
  const cJSON *arr, *it;
  int rc = st__json_array(o, "perm", w, 0, &arr), n = 0;
  if (rc == STRATA_ENOTFOUND) return 0;
  if (rc) return rc;
  cJSON_ArrayForEach(it, arr) {
    if (n == STRATA_MAX_DIMS || !cJSON_IsNumber(it) || it->valuedouble < 0 ||
        it->valuedouble >= STRATA_MAX_DIMS ||
        it->valuedouble != (double)(int)it->valuedouble)
      return strata_error(STRATA_EBADINPUT,
                          "%s: 'perm' must list at most %d dims, each 0 to %d",
                          w, STRATA_MAX_DIMS, STRATA_MAX_DIMS - 1);
    op->perm[n++] = (signed char)it->valuedouble;
  }
  return 0;
}

static int read_attrs(strata_op_t *op, const cJSON *o, const char *w) {
  int rc = get_int(o, "heads", w, 0, 0, INT_MAX, &op->heads);
  if (!rc) rc = get_int(o, "kv_heads", w, 0, 0, INT_MAX, &op->kv_heads);
  if (!rc) rc = get_flag(o, "causal", w, &op->causal);
  if (!rc) rc = get_num(o, "dropout_p", w, &op->dropout_p);
  if (!rc) rc = get_int(o, "axis", w, 0, 0, INT_MAX, &op->axis);
  if (!rc) rc = get_i64(o, "start", w, &op->start);
  if (!rc) rc = get_i64(o, "end", w, &op->end);
  if (!rc) rc = get_int(o, "window", w, 0, 0, INT_MAX, &op->window);
  if (!rc) rc = read_perm(op, o, w);
  if (!rc && op->kind == STRATA_OP_GENERIC)
    rc = get_num(o, "flops", w, &op->flops);
  if (!rc) rc = get_int(o, "topk", w, 0, 0, INT_MAX, &op->topk);
  if (!rc) rc = get_int(o, "v_dim", w, 0, 0, INT_MAX, &op->v_dim);
  if (!rc) rc = get_nonneg(o, "capacity", w, &op->capacity);
  return rc;
}

static int read_op(strata_graph_t *g, const cJSON *o, int i,
                   const char *where) {
  char w[WHERE_MAX], shown[SHOWN];
  const char *id, *kind;
  int in[STRATA_MAX_OP_INPUTS], out[STRATA_MAX_OP_OUTPUTS], n_in, n_out, rc;
  strata_op_kind_t k;
  snprintf(w, sizeof w, "%s: ops[%d]", where, i);
  if (!cJSON_IsObject(o))
    return strata_error(STRATA_EBADINPUT, "%s must be an object", w);
  if ((rc = st__json_str(o, "id", w, 1, &id)) ||
      (rc = st__name_check(id, "'id'", w)))
    return rc;
  snprintf(w, sizeof w, "%s: op '%s'", where,
           st__plain(id, shown, sizeof shown));
  if ((rc = st__json_str(o, "kind", w, 1, &kind))) return rc;
  if (strata_op_kind_parse(kind, &k)) return unknown_kind(w, kind);
  if ((rc = read_refs(g, o, "inputs", w, STRATA_MAX_OP_INPUTS, in, &n_in)) ||
      (rc = read_refs(g, o, "outputs", w, STRATA_MAX_OP_OUTPUTS, out, &n_out)))
    return rc;
  if (n_out == 0)
    return strata_error(STRATA_EBADINPUT, "%s: 'outputs' is empty", w);
  int ix = strata_graph_add_op(g, id, k, n_in, in, n_out, out);
  if (ix < 0) {
    strata_error_prefix("%s", where);
    return ix;
  }
  return read_attrs(&g->ops[ix], o, w);
}

/* "layer", when present, must agree with the blocks (checked after
 * validation filled op.layer). */
static int check_layers(const strata_graph_t *g, const cJSON *ops,
                        const char *where) {
  const cJSON *o;
  int i = 0;
  cJSON_ArrayForEach(o, ops) {
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "layer");
    const strata_op_t *op = &g->ops[i++];
    int want = op->layer;
    if (!l || (cJSON_IsNull(l) && want < 0)) continue;
    if (cJSON_IsNumber(l) && l->valuedouble == want) continue;
    if (want < 0)
      return strata_error(STRATA_EBADINPUT,
                          "%s: op '%s' has a layer but is in no block (write "
                          "\"layer\": null)",
                          where, op->name);
    return strata_error(STRATA_EBADINPUT,
                        "%s: op '%s': 'layer' must be %d, the first layer of "
                        "its block '%s'",
                        where, op->name, want, g->blocks[op->block].name);
  }
  return 0;
}

/* ---- blocks ---- */

static int find_op_ref(const strata_graph_t *g, const cJSON *it,
                       const char *w) {
  int i = cJSON_IsString(it) ? strata_graph_find_op(g, it->valuestring) : -1;
  char shown[SHOWN];
  if (i >= 0) return i;
  return strata_error(STRATA_EBADINPUT, "%s: 'ops' names unknown op '%s'", w,
                      cJSON_IsString(it)
                          ? st__plain(it->valuestring, shown, sizeof shown)
                          : "(not a string)");
}

/* "ops": [first, last] (two ids: an inclusive range), or every op id in
 * order (one, or three and more). */
static int read_block_ops(const strata_graph_t *g, const cJSON *bl,
                          const char *w, int *first, int *n) {
  const cJSON *arr, *it;
  int rc = st__json_array(bl, "ops", w, 1, &arr), count, prev = -1;
  if (rc) return rc;
  count = cJSON_GetArraySize(arr);
  if (count == 0)
    return strata_error(STRATA_EBADINPUT, "%s: 'ops' is empty", w);
  cJSON_ArrayForEach(it, arr) {
    int i = find_op_ref(g, it, w);
    if (i < 0) return i;
    if (prev < 0) *first = i;
    if (count != 2 && prev >= 0 && i != prev + 1)
      return strata_error(STRATA_EBADINPUT,
                          "%s: op '%s' does not follow op '%s' (a block's "
                          "ops are contiguous and in order)",
                          w, g->ops[i].name, g->ops[prev].name);
    prev = i;
  }
  if (prev < *first)
    return strata_error(STRATA_EBADINPUT,
                        "%s: last op '%s' comes before "
                        "first op '%s'",
                        w, g->ops[prev].name, g->ops[*first].name);
  *n = prev - *first + 1;
  return 0;
}

static int read_block(strata_graph_t *g, const cJSON *bl, int i,
                      const char *where) {
  char w[WHERE_MAX], shown[SHOWN];
  const char *id, *in, *out;
  int first = 0, n = 0, repeat = 0, rc, ti, to;
  snprintf(w, sizeof w, "%s: blocks[%d]", where, i);
  if (!cJSON_IsObject(bl))
    return strata_error(STRATA_EBADINPUT, "%s must be an object", w);
  if ((rc = st__json_str(bl, "id", w, 1, &id)) ||
      (rc = st__name_check(id, "'id'", w)))
    return rc;
  snprintf(w, sizeof w, "%s: block '%s'", where,
           st__plain(id, shown, sizeof shown));
  if ((rc = read_block_ops(g, bl, w, &first, &n)) ||
      /* range checked by strata_graph_add_block, with the real limit */
      (rc = get_int(bl, "repeat", w, 1, INT_MIN, INT_MAX, &repeat)) ||
      (rc = st__json_str(bl, "input", w, 1, &in)) ||
      (rc = st__json_str(bl, "output", w, 1, &out)))
    return rc;
  if ((ti = strata_graph_find_tensor(g, in)) < 0 ||
      (to = strata_graph_find_tensor(g, out)) < 0)
    return strata_error(STRATA_EBADINPUT, "%s: unknown tensor '%s'", w,
                        st__plain(ti < 0 ? in : out, shown, sizeof shown));
  rc = strata_graph_add_block(g, id, first, n, repeat, ti, to);
  if (rc < 0) strata_error_prefix("%s", where);
  return rc < 0 ? rc : 0;
}

/* ---- the whole file ---- */

typedef int (*read_item_fn)(strata_graph_t *, const cJSON *, int, const char *);

static int read_list(strata_graph_t *g, const cJSON *root, const char *key,
                     int required, read_item_fn fn, const char *where,
                     const cJSON **arr_out) {
  const cJSON *arr = NULL, *it;
  int rc = st__json_array(root, key, where, required, &arr), i = 0;
  if (rc == STRATA_ENOTFOUND) return 0;
  if (rc) return rc;
  if (arr_out) *arr_out = arr;
  cJSON_ArrayForEach(it, arr) {
    if ((rc = fn(g, it, i++, where))) return rc;
  }
  return 0;
}

static int read_graph(const cJSON *root, const char *where,
                      strata_graph_t **out) {
  const char *name;
  const cJSON *ops = NULL;
  strata_graph_t *g = NULL;
  int rc;
  if ((rc = read_header(root, where)) ||
      (rc = st__json_str(root, "name", where, 1, &name)) ||
      (rc = st__name_check(name, "'name'", where)))
    return rc;
  if (!(g = strata_graph_create(name))) return STRATA_ENOMEM;
  if ((rc = get_int(root, "micro_batch", where, 1, 1, MAX_MICRO_BATCH,
                    &g->micro_batch)) ||
      (rc = get_int(root, "seq_len", where, 1, 1, MAX_SEQ, &g->seq_len)) ||
      (rc = read_model(g, root, where)) ||
      (rc = read_list(g, root, "tensors", 1, read_tensor, where, NULL)) ||
      (rc = read_list(g, root, "ops", 1, read_op, where, &ops)) ||
      (rc = read_list(g, root, "blocks", 0, read_block, where, NULL)))
    goto out;
  if ((rc = strata_graph_validate(g))) {
    strata_error_prefix("%s", where);
    goto out;
  }
  if ((rc = check_layers(g, ops, where))) goto out;
  rc = st__graph_fold(g, NULL);
out:
  if (rc)
    strata_graph_destroy(g);
  else
    *out = g;
  return rc;
}

int st__trace_from_json(const cJSON *root, const char *where,
                        strata_graph_t **out) {
  *out = NULL;
  return read_graph(root, where, out);
}

int strata_trace_parse(const char *text, size_t len, const char *where,
                       strata_graph_t **out) {
  cJSON *root = NULL;
  int rc;
  *out = NULL;
  if (!where) where = "trace";
  if ((rc = st__json_parse(text, len, where, &root))) return rc;
  rc = read_graph(root, where, out);
  cJSON_Delete(root);
  return rc;
}

int strata_trace_load(const char *path, strata_graph_t **out) {
  char *text = NULL;
  size_t len = 0;
  *out = NULL;
  int rc = strata_file_read(path, 0, &text, &len);
  if (rc) return rc;
  rc = strata_trace_parse(text, len, path, out);
  strata_free(text);
  return rc;
}
