/*
 * calibration.c - scales of the achieved rates fitted to a user's own
 * measurements (strata calibrate), their file, and how they apply to a
 * cluster: the achieved rates of the GPU and links from the nominal ones
 * (st__apply_perf) and, on a mixed cluster, the link between node groups
 * (st__cross_link).  cluster.c builds a cluster and calls down into here.
 *
 * A calibration never replaces a figure: it multiplies what the GPU table
 * says a GEMM, fused attention, a streaming kernel or a link achieves, and
 * adds a fixed time per step and fixed memory per device.  The cluster
 * keeps its nominal links and recomputes the achieved ones from them, so
 * applying a calibration twice gives the same cluster as applying it once.
 * The file is JSON (docs/calibration.md); an unknown key is an error, as a
 * misspelt scale silently left at 1 would be a wrong plan.
 */
#include <math.h>
#include <string.h>

#include "core/json.h"
#include "core/text.h"
#include "topo/cluster.h"

#define CAL_FORMAT "strata-calibration"
#define CAL_VERSION 1

static const char *const level_key[4] = {"nvlink", "pcie", "leaf", "spine"};

void strata_calibration_init(strata_calibration_t *cal) {
  memset(cal, 0, sizeof *cal);
  cal->gemm = cal->attention = cal->stream = 1.0;
  for (int i = 0; i < 4; i++)
    cal->link[i] = 1.0;
}

void st__apply_perf(strata_cluster_t *c) {
  const strata_calibration_t *k = &c->cal;
  strata_perf_of(&c->model, &c->perf, NULL);
  c->perf.gemm_max *= k->gemm;
  if (c->perf.gemm_max > 1) c->perf.gemm_max = 1;
  c->perf.attn_fwd *= k->attention;
  c->perf.attn_bwd *= k->attention;
  c->perf.stream_eff *= k->stream;
  double eff[4];
  for (int i = 0; i < 4; i++)
    eff[i] = c->perf.link_eff[i] * k->link[i];
  c->nvlink.bandwidth = c->nominal[STRATA_LEVEL_NVLINK] * eff[0];
  c->pcie.bandwidth = c->nominal[STRATA_LEVEL_PCIE] * eff[1];
  c->leaf.bandwidth = c->nominal[STRATA_LEVEL_LEAF] * eff[2];
  c->spine.bandwidth = c->nominal[STRATA_LEVEL_SPINE] * eff[3];
  for (int i = 0; i < c->nlevels; i++) {
    strata_level_t *l = &c->levels[i];
    l->link.bandwidth = l->nominal_bandwidth * eff[l->kind];
  }
}

/* Between node groups: the slowest group's leaf bandwidth (over the
 * spine's oversubscription when the nodes span leaves). */
void st__cross_link(strata_cluster_t *c) {
  double bw = 0, lat = 0;
  int spine = c->total_nodes > c->leaf_size;
  for (int i = 0; i < c->ngroups; i++) {
    const strata_cluster_t *g = c->group[i];
    bw = i == 0 || g->leaf.bandwidth < bw ? g->leaf.bandwidth : bw;
    lat = spine ? g->spine.latency : g->leaf.latency;
  }
  c->cross = (strata_link_t){spine ? bw / c->oversub : bw, lat};
}

static int check_cal(const strata_calibration_t *cal, const char *where) {
  const struct {
    const char *name;
    double v;
  } s[] = {{"gemm", cal->gemm},          {"attention", cal->attention},
           {"stream", cal->stream},      {"links.nvlink", cal->link[0]},
           {"links.pcie", cal->link[1]}, {"links.leaf", cal->link[2]},
           {"links.spine", cal->link[3]}};
  for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
    if (!(s[i].v >= 0.05 && s[i].v <= 20))
      return strata_error(STRATA_EBADINPUT,
                          "%s: %s = %g: a scale must be between 0.05 and 20 "
                          "(1 changes nothing)",
                          where, s[i].name, s[i].v);
  if (!(cal->step_seconds >= 0 && cal->step_seconds < 3600))
    return strata_error(STRATA_EBADINPUT,
                        "%s: step_overhead_s = %g: must be between 0 and "
                        "3600 seconds",
                        where, cal->step_seconds);
  if (!(fabs(cal->memory_bytes) < 1e13))
    return strata_error(STRATA_EBADINPUT,
                        "%s: memory_overhead_bytes = %g: must be between "
                        "-10 TB and 10 TB",
                        where, cal->memory_bytes);
  return 0;
}

int strata_cluster_calibrate(strata_cluster_t *c,
                             const strata_calibration_t *cal) {
  int rc = check_cal(cal, "calibration");
  if (rc) return rc;
  c->cal = *cal;
  st__apply_perf(c);
  for (int i = 0; i < c->ngroups; i++) { /* a mixed cluster's views */
    c->group[i]->cal = *cal;
    st__apply_perf(c->group[i]);
  }
  if (c->ngroups) st__cross_link(c);
  return 0;
}

const strata_calibration_t *
strata_cluster_calibration(const strata_cluster_t *c) {
  return &c->cal;
}

const strata_perf_t *strata_cluster_perf(const strata_cluster_t *c) {
  return &c->perf;
}

/* ---- the file ---- */

static int only_keys(const cJSON *o, const char *const *keys, int n,
                     const char *where, const char *in) {
  for (const cJSON *it = o->child; it; it = it->next) {
    int ok = 0;
    char shown[80];
    for (int i = 0; i < n && !ok; i++)
      ok = it->string && !strcmp(it->string, keys[i]);
    if (!ok)
      return strata_error(
          STRATA_EBADINPUT,
          "%s: unknown key '%s'%s%s (known: see "
          "docs/calibration.md)",
          where, st__plain(it->string ? it->string : "?", shown, sizeof shown),
          in ? " in " : "", in ? in : "");
  }
  return 0;
}

static int opt_num(const cJSON *o, const char *key, const char *where,
                   double *v) {
  int rc = st__json_num(o, key, where, 0, v);
  return rc == STRATA_ENOTFOUND ? 0 : rc;
}

static int read_links(const cJSON *root, const char *where,
                      strata_calibration_t *cal) {
  const cJSON *l = NULL;
  int rc = st__json_object(root, "links", where, 0, &l);
  if (rc == STRATA_ENOTFOUND || (!rc && !l)) return 0;
  if (rc) return rc;
  rc = only_keys(l, level_key, 4, where, "links");
  for (int i = 0; i < 4 && !rc; i++)
    rc = opt_num(l, level_key[i], where, &cal->link[i]);
  return rc;
}

static int read_root(const cJSON *root, const char *where,
                     strata_calibration_t *cal) {
  static const char *const keys[] = {"format",
                                     "version",
                                     "gemm",
                                     "attention",
                                     "stream",
                                     "links",
                                     "step_overhead_s",
                                     "memory_overhead_bytes",
                                     "gpu_model",
                                     "cluster",
                                     "fit"};
  const char *fmt = NULL, *gpu = NULL;
  char shown[80];
  int64_t ver = 0;
  int rc = st__json_str(root, "format", where, 1, &fmt);
  if (!rc && strcmp(fmt, CAL_FORMAT))
    rc = strata_error(STRATA_EBADINPUT,
                      "%s: format is '%s', not '" CAL_FORMAT "'", where,
                      st__plain(fmt, shown, sizeof shown));
  if (!rc) rc = st__json_int(root, "version", where, 1, &ver);
  if (!rc && ver > CAL_VERSION)
    rc = strata_error(STRATA_EVERSION,
                      "%s: calibration version %lld is newer than this "
                      "strata reads (%d)",
                      where, (long long)ver, CAL_VERSION);
  if (!rc && ver < 1)
    rc = strata_error(STRATA_EBADINPUT, "%s: version %lld: must be >= 1", where,
                      (long long)ver);
  if (!rc)
    rc =
        only_keys(root, keys, (int)(sizeof keys / sizeof keys[0]), where, NULL);
  /* gpu_model says what the fit ran on (not read further): a name */
  if (!rc && !(rc = st__json_str(root, "gpu_model", where, 0, &gpu)))
    rc = st__name_check(gpu, "gpu_model", where);
  if (rc == STRATA_ENOTFOUND) rc = 0;
  /* cluster: the one it was fitted on (the planner warns on another) */
  if (!rc) rc = st__json_str(root, "cluster", where, 0, &gpu);
  if (rc == STRATA_ENOTFOUND) rc = 0;
  if (!rc) rc = opt_num(root, "gemm", where, &cal->gemm);
  if (!rc) rc = opt_num(root, "attention", where, &cal->attention);
  if (!rc) rc = opt_num(root, "stream", where, &cal->stream);
  if (!rc) rc = read_links(root, where, cal);
  if (!rc) rc = opt_num(root, "step_overhead_s", where, &cal->step_seconds);
  if (!rc)
    rc = opt_num(root, "memory_overhead_bytes", where, &cal->memory_bytes);
  if (!rc) rc = check_cal(cal, where);
  return rc;
}

int strata_calibration_parse(const char *text, size_t len, const char *where,
                             strata_calibration_t *out) {
  cJSON *root = NULL;
  strata_calibration_t cal;
  strata_calibration_init(&cal);
  int rc = st__json_parse(text, len, where, &root);
  if (!rc && !cJSON_IsObject(root))
    rc = strata_error(STRATA_EBADINPUT, "%s: not a JSON object", where);
  if (!rc) rc = read_root(root, where, &cal);
  cJSON_Delete(root);
  if (!rc) *out = cal;
  return rc;
}

int strata_calibration_load(const char *path, strata_calibration_t *out) {
  char *text = NULL;
  size_t len = 0;
  int rc = strata_file_read(path, 1 << 20, &text, &len);
  if (!rc) rc = strata_calibration_parse(text, len, path, out);
  strata_free(text);
  return rc;
}

int strata_calibration_write(const strata_calibration_t *cal, char **text) {
  cJSON *root = cJSON_CreateObject(), *links = NULL;
  int rc = root ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
  *text = NULL;
  if (!rc) rc = st__json_add_str(root, "format", CAL_FORMAT);
  if (!rc) rc = st__json_add_num(root, "version", CAL_VERSION);
  if (!rc) rc = st__json_add_num(root, "gemm", cal->gemm);
  if (!rc) rc = st__json_add_num(root, "attention", cal->attention);
  if (!rc) rc = st__json_add_num(root, "stream", cal->stream);
  if (!rc && !(links = cJSON_AddObjectToObject(root, "links")))
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  for (int i = 0; i < 4 && !rc; i++)
    rc = st__json_add_num(links, level_key[i], cal->link[i]);
  if (!rc) rc = st__json_add_num(root, "step_overhead_s", cal->step_seconds);
  if (!rc)
    rc = st__json_add_num(root, "memory_overhead_bytes", cal->memory_bytes);
  if (!rc && !(*text = st__json_print(root)))
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  cJSON_Delete(root);
  return rc;
}
