/*
 * cluster_spec.c - read a cluster spec: "PRESET:NODES" or a JSON file
 * (docs/cluster-format.md), into plain data that cluster.c builds.
 *
 * Nothing is resolved here except paths: an XML file named by a node group
 * is taken relative to the spec's folder (so a spec and its node files
 * move together), and the message for a missing one says both.  Every
 * bandwidth in the file is GB/s (10^9 bytes per second), every latency us;
 * they are converted to bytes/s and seconds on the way in.  Presets are
 * tables of the same fields, so they go through the same builder.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/text.h"
#include "topo/cluster.h"

#define MAX_NODES 1000000

typedef struct {
  const char *name, *model;
  int gpus, nics;
  double nic_gbps;
  int leaf_size;
  const char *what;
} preset_t;

/* NIC figures: ConnectX-6 HDR 200 Gb/s = 25 GB/s, ConnectX-7 NDR 400 Gb/s
 * = 50 GB/s, one per GPU as in NVIDIA's DGX reference designs; a leaf of
 * 32 nodes (a DGX SuperPOD scalable unit), non-blocking. */
static const preset_t presets[] = {
    {"dgx-a100", "A100-80GB", 8, 8, 25, 20, "NVIDIA DGX A100 (8x A100 80GB)"},
    {"dgx-h100", "H100-SXM", 8, 8, 50, 32, "NVIDIA DGX H100 (8x H100 SXM)"},
    {"dgx-h200", "H200", 8, 8, 50, 32, "NVIDIA DGX H200 (8x H200)"},
    {"hgx-h800", "H800", 8, 8, 50, 32, "NVIDIA HGX H800 (8x H800)"},
    {"hgx-a800", "A800-80GB", 8, 8, 25, 20, "NVIDIA HGX A800 (8x A800 80GB)"},
    {"hgx-b200", "B200", 8, 8, 50, 32, "NVIDIA HGX B200 (8x B200)"},
    /* one rack is one NVLink domain of 72 GPUs, a ConnectX-7 per GPU;
     * a DGX SuperPOD GB200 scalable unit is 8 racks */
    {"gb200-nvl72", "GB200", 72, 72, 50, 8,
     "NVIDIA GB200 NVL72 rack (72x GB200 GPUs, one NVLink domain)"},
    /* Blackwell Ultra: a ConnectX-8 (800 Gb/s) per GPU */
    {"hgx-b300", "B300", 8, 8, 100, 32, "NVIDIA HGX B300 (8x B300)"},
    {"gb300-nvl72", "GB300", 72, 72, 100, 8,
     "NVIDIA GB300 NVL72 rack (72x GB300 GPUs, one NVLink domain)"},
    {"h100-pcie", "H100-PCIe", 8, 4, 50, 32, "8x H100 PCIe, 4 NICs"},
    {"mi300x", "MI300X", 8, 8, 50, 32, "AMD Instinct MI300X platform (8x)"},
    {"mi325x", "MI325X", 8, 8, 50, 32, "AMD Instinct MI325X platform (8x)"},
    /* Huawei: the Atlas 800T A2, 8 Ascend 910B on HCCS, a 200GE RoCE
     * port per NPU; the Atlas 900 A3 SuperPoD (CloudMatrix384), 384
     * Ascend 910C, 768 dies, on one unified bus, each die with 200 Gb/s
     * of RoCE to the rest of the data centre (arXiv:2506.12708) */
    {"atlas-800t-a2", "Ascend-910B", 8, 8, 25, 32,
     "Huawei Atlas 800T A2 (8x Ascend 910B, HCCS)"},
    {"atlas-900-a3-superpod", "Ascend-910C", 768, 768, 25, 8,
     "Huawei Atlas 900 A3 SuperPoD (384x Ascend 910C, 768 dies on one "
     "unified bus)"},
};
#define N_PRESETS ((int)(sizeof presets / sizeof presets[0]))

int st__preset_list(strata_buf_t *b) {
  for (int i = 0; i < N_PRESETS; i++)
    strata_buf_printf(b, "%s%s", i ? ", " : "", presets[i].name);
  return b->oom ? STRATA_ENOMEM : 0;
}

static void group_free(st__group_t *g) {
  strata_free(g->names);
  strata_free(g->xml);
  strata_free(g->xml_given);
  strata_free(g->gpu_model);
}

void st__spec_free(st__spec_t *s) {
  if (!s) return;
  for (int i = 0; i < s->ngroups; i++)
    group_free(&s->groups[i]);
  for (int i = 0; i < s->nbad_nodes; i++)
    strata_free(s->bad_nodes[i]);
  for (int i = 0; i < s->nbad_gpus; i++)
    strata_free(s->bad_gpus[i]);
  strata_free(s->groups);
  strata_free(s->bad_nodes);
  strata_free(s->bad_gpus);
  strata_free(s->where);
  strata_free(s->name);
  strata_free(s->gpu_model);
  strata_free(s);
}

static int spec_new(const char *where, int ngroups, st__spec_t **out) {
  st__spec_t *s = strata_calloc(1, sizeof *s);
  *out = NULL;
  if (s) {
    s->where = strata_strdup(where);
    s->name = strata_strdup(where);
    s->groups =
        strata_calloc((size_t)(ngroups ? ngroups : 1), sizeof *s->groups);
  }
  if (!s || !s->where || !s->name || !s->groups) {
    st__spec_free(s);
    return strata_error(STRATA_ENOMEM, "out of memory reading %s", where);
  }
  s->ngroups = ngroups;
  s->gpu_memory = s->gpu_flops = s->gpu_nvlink = s->nic_bw = -1;
  s->latency = 5e-6;
  s->spine_latency = 2e-6;
  s->nvlink_latency = 3e-6;
  s->pcie_latency = 4e-6;
  s->oversub = 1.0;
  s->leaf_size = 32;
  for (int i = 0; i < ngroups; i++) {
    s->groups[i].nvlink_bw = s->groups[i].pcie_bw = -1;
    s->groups[i].nic_bw = -1;
    s->groups[i].nics = -1;
  }
  *out = s;
  return 0;
}

/* ---- node ranges: "node[001-128]", "gpu[1-4,7]x", "login" ---------- */

static int parse_num(const char **p, long *v, int *digits) {
  const char *s = *p;
  char *end;
  if (!isdigit((unsigned char)*s)) return -1;
  errno = 0;
  *v = strtol(s, &end, 10);
  if (errno || *v > 99999999) return -1;
  *digits = (int)(end - s);
  *p = end;
  return 0;
}

typedef struct {
  long lo[64], hi[64];
  int width[64], n;
  long total;
} ranges_t;

static int bad_range(const char *where, const char *pat, const char *why) {
  return strata_error(STRATA_EBADINPUT,
                      "%s: bad node range '%s': %s (write e.g. "
                      "\"node[001-128]\" or \"gpu[1-4,9]\")",
                      where, pat, why);
}

static int parse_ranges(const char *in, const char *pat, const char *where,
                        ranges_t *r) {
  const char *p = in;
  r->n = 0;
  r->total = 0;
  for (;;) {
    long lo, hi;
    int w, w2;
    if (r->n == 64) return bad_range(where, pat, "more than 64 ranges");
    if (parse_num(&p, &lo, &w))
      return bad_range(where, pat, "expected a number");
    hi = lo;
    if (*p == '-' && (p++, parse_num(&p, &hi, &w2)))
      return bad_range(where, pat, "expected a number after '-'");
    if (hi < lo) return bad_range(where, pat, "the range goes backwards");
    r->lo[r->n] = lo;
    r->hi[r->n] = hi;
    r->width[r->n++] = in[0] == '0' ? w : 0; /* node001: keep the width */
    r->total += hi - lo + 1;
    if (r->total > MAX_NODES) return bad_range(where, pat, "too many nodes");
    if (*p == ']') return 0;
    if (*p != ',') return bad_range(where, pat, "expected ',' or ']'");
    in = ++p;
  }
}

static int emit_names(const char *pat, size_t plen, const char *suffix,
                      const ranges_t *r, char **names) {
  int k = 0;
  for (int i = 0; i < r->n; i++)
    for (long v = r->lo[i]; v <= r->hi[i]; v++) {
      size_t size = plen + strlen(suffix) + 24;
      char *s = strata_malloc(size);
      if (!s) return STRATA_ENOMEM;
      snprintf(s, size, "%.*s%0*ld%s", (int)plen, pat, r->width[i], v, suffix);
      names[k++] = s;
    }
  return 0;
}

int st__range_expand(const char *pat, const char *where, char ***out, int *n) {
  const char *open = strchr(pat, '['), *close = open ? strchr(open, ']') : NULL;
  ranges_t r;
  char **names = NULL;
  int rc;
  *out = NULL;
  *n = 0;
  if (!*pat) return bad_range(where, pat, "empty");
  if (!open) {
    if (strchr(pat, ']')) return bad_range(where, pat, "']' without '['");
    r.n = 0;
    r.total = 1;
  } else if (!close) {
    return bad_range(where, pat, "'[' without ']'");
  } else if (strchr(close + 1, '[') || strchr(close + 1, ']')) {
    return bad_range(where, pat, "only one [...] is supported");
  } else if ((rc = parse_ranges(open + 1, pat, where, &r))) {
    return rc;
  }
  names = strata_calloc((size_t)r.total, sizeof *names);
  if (!names) return strata_error(STRATA_ENOMEM, "out of memory");
  if (!open)
    rc = (names[0] = strata_strdup(pat)) ? 0 : STRATA_ENOMEM;
  else
    rc = emit_names(pat, (size_t)(open - pat), close + 1, &r, names);
  if (rc) {
    for (long i = 0; i < r.total; i++)
      strata_free(names[i]);
    strata_free(names);
    return strata_error(STRATA_ENOMEM, "out of memory expanding '%s'", pat);
  }
  *out = names;
  *n = (int)r.total;
  return 0;
}

/* ---- presets -------------------------------------------------------- */

static const preset_t *preset_find(const char *name, size_t len) {
  for (int i = 0; i < N_PRESETS; i++)
    if (strlen(presets[i].name) == len && !strncmp(presets[i].name, name, len))
      return &presets[i];
  return NULL;
}

static int preset_spec(const preset_t *p, const char *arg, long nodes,
                       st__spec_t **out) {
  st__spec_t *s;
  int rc = spec_new(arg, 1, &s);
  if (rc) return rc;
  st__group_t *g = &s->groups[0];
  g->count = (int)nodes;
  g->gpus = p->gpus;
  g->nics = p->nics;
  g->nic_bw = p->nic_gbps * 1e9;
  g->gpu_model = strata_strdup(p->model);
  s->leaf_size = p->leaf_size;
  if (!g->gpu_model) {
    st__spec_free(s);
    return strata_error(STRATA_ENOMEM, "out of memory");
  }
  *out = s;
  return 0;
}

int st__is_preset(const char *arg) {
  const char *colon = arg ? strrchr(arg, ':') : NULL;
  return colon && preset_find(arg, (size_t)(colon - arg)) != NULL;
}

/* 1 (and *out) if arg names a preset, 0 if it should be a file. */
static int try_preset(const char *arg, st__spec_t **out, int *rc) {
  const char *colon = strrchr(arg, ':');
  const preset_t *p = colon ? preset_find(arg, (size_t)(colon - arg)) : NULL;
  char *end;
  long nodes;
  if (!p) return 0;
  errno = 0;
  nodes = strtol(colon + 1, &end, 10);
  if (errno || end == colon + 1 || *end || nodes < 1 || nodes > MAX_NODES)
    *rc = strata_error(STRATA_EBADINPUT,
                       "'%s': a preset wants a node count from 1 to %d after "
                       "the colon, e.g. %s:128",
                       arg, MAX_NODES, p->name);
  else
    *rc = preset_spec(p, arg, nodes, out);
  return 1;
}

/* ---- JSON: keys ------------------------------------------------------ */

/* The keys of each object.  A bandwidth has a key per unit (GB/s, Gb/s)
 * and the older "_gbps" spelling, read as GB/s with a warning. */
#define BW_KEYS(b) b "_gbytes_per_s", b "_gbits_per_s", b "_gbps"
static const char *const root_keys[] = {"name",    "node_groups", "gpu",
                                        "network", "unhealthy",   NULL};
static const char *const group_keys[] = {"names",     "count",    "xml",
                                         "gpu_model", "template", NULL};
static const char *const template_keys[] = {
    "gpus",         "gpu_model", BW_KEYS("nvlink"), BW_KEYS("pcie"), "nics",
    BW_KEYS("nic"), NULL};
static const char *const gpu_keys[] = {"model", "memory_gib", "bf16_tflops",
                                       BW_KEYS("nvlink"), NULL};
static const char *const network_keys[] = {
    BW_KEYS("nic"),     "latency_us",
    "spine_latency_us", "nvlink_latency_us",
    "pcie_latency_us",  "spine_oversubscription",
    "leaf_size",        NULL};
static const char *const unhealthy_keys[] = {"nodes", "gpus", NULL};

static const struct {
  const char *name;
  const char *const *keys;
} objects[] = {{"the top level", root_keys},
               {"node_groups[]", group_keys},
               {"node_groups[].template", template_keys},
               {"\"gpu\"", gpu_keys},
               {"\"network\"", network_keys},
               {"\"unhealthy\"", unhealthy_keys}};

static int legacy_key(const char *k) {
  size_t n = strlen(k);
  return n > 5 && !strcmp(k + n - 5, "_gbps");
}

/* The known key k was meant to be, or NULL (the older spellings are never
 * offered). */
static const char *nearest_key(const char *k, const char *const *keys) {
  const char *offered[64];
  int n = 0;
  for (int i = 0; keys[i] && n < 63; i++)
    if (!legacy_key(keys[i])) offered[n++] = keys[i];
  offered[n] = NULL;
  return st__did_you_mean(k, offered);
}

/* The object where key k belongs when it is not in keys, or NULL. */
static const char *home_of(const char *k, const char *const *keys) {
  for (size_t i = 0; i < sizeof objects / sizeof objects[0]; i++) {
    if (objects[i].keys == keys) continue;
    for (int j = 0; objects[i].keys[j]; j++)
      if (!strcmp(k, objects[i].keys[j])) return objects[i].name;
  }
  return NULL;
}

/* An unknown key is an error (a misspelt key would otherwise be ignored
 * and its default used silently); so is a key given twice. */
static int check_keys(const cJSON *o, const char *where,
                      const char *const *keys) {
  int repeated;
  const char *k = st__json_bad_key(o, keys, &repeated), *home;
  if (!k) return 0;
  if (repeated)
    return strata_error(STRATA_EBADINPUT,
                        "%s: '%s' is given twice; give it once", where, k);
  if ((home = home_of(k, keys)))
    return strata_error(STRATA_EBADINPUT,
                        "%s: '%s' does not belong here; it goes in %s "
                        "(docs/cluster-format.md)",
                        where, k, home);
  const char *near = nearest_key(k, keys);
  return strata_error(STRATA_EBADINPUT,
                      "%s: unknown key '%.64s'%s%s%s (docs/cluster-format.md "
                      "lists them)",
                      where, k, near ? "; did you mean '" : "",
                      near ? near : "", near ? "'?" : "");
}

/* ---- JSON: values ---------------------------------------------------- */

/* A number in the unit its key names, with the range of plausible values
 * and what to say outside it.  Bounds keep every derived cost finite and
 * catch the usual slips of unit. */
typedef struct {
  double lo, hi; /* plausible: lo <= v <= hi */
  double scale;  /* the key's unit -> bytes, seconds, FLOP/s */
  const char *unit, *low, *high;
} range_t;

static const range_t latency_us = {
    0.01,
    10000,
    1e-6,
    "us",
    "a latency must be positive and at least 0.01 us (typical: 1 to 10 us)",
    "more than 10 ms: latencies are in microseconds"};
/* At least 4 GiB: less than any GPU that trains models has (the table's
 * smallest, P100, has 16), and more than the planner's default reserve of
 * 2 GiB, so a memory budget is always left (found by fuzz_pipeline: a
 * 2 GiB GPU left none, and the planner's "does not fit" hint divided by
 * it). */
static const range_t memory_gib = {
    4,
    1024,
    1073741824.0,
    "GiB",
    "less than 4 GiB, less than any GPU that trains models has: give the "
    "memory of one GPU in GiB, e.g. 80",
    "more than 1 TiB: give the memory of one GPU in GiB, e.g. 80"};
static const range_t bf16_tflops = {
    0.001,
    20000,
    1e12,
    "TFLOP/s",
    "a GPU needs FLOP/s: give its bf16 dense peak in TFLOP/s, e.g. 989.4 "
    "for an H100 SXM",
    "more than any GPU (B200: 2250): give the peak of one GPU in TFLOP/s"};
static const range_t oversub = {
    1,
    64,
    1,
    "",
    "a ratio >= 1 (2 for 2:1; 1 for a non-blocking spine)",
    "more than 64:1: give the ratio, e.g. 2 for 2:1"};

static int opt_num(const cJSON *o, const char *key, const char *where,
                   const range_t *r, double *out) {
  double v;
  int rc = st__json_num(o, key, where, 0, &v);
  if (rc == STRATA_ENOTFOUND) return 0;
  if (rc) return rc;
  if (v < r->lo || v > r->hi)
    return strata_error(STRATA_EBADINPUT, "%s: '%s' is %g%s%s; %s", where, key,
                        v, r->unit[0] ? " " : "", r->unit,
                        v < r->lo ? r->low : r->high);
  *out = v * r->scale;
  return 0;
}

/* A bandwidth: which link, whether 0 (none) is allowed, the most that is
 * plausible in GB/s and why. */
typedef struct {
  const char *base;
  int zero_ok;
  double max_gbytes;
  const char *why;
} bw_t;

/* ConnectX-8 (800 Gb/s) is the fastest NIC NVIDIA ships; B200's NVLink 5
 * carries 900 GB/s one direction; PCIe 6.0 x16 carries 128 GB/s one
 * direction (docs/cluster-format.md). */
static const bw_t bw_nic = {"nic", 0, 100,
                            "the fastest NICs, 800 Gb/s, carry 100 GB/s"};
static const bw_t bw_nvlink = {"nvlink", 1, 1800,
                               "twice the fastest GPU link, B200's 900 GB/s "
                               "one direction"};
static const bw_t bw_pcie = {"pcie", 0, 128,
                             "PCIe 6.0 x16 carries 128 GB/s one direction"};

static const struct {
  const char *suffix, *unit;
  double scale;
} bw_units[] = {{"_gbytes_per_s", "GB/s", 1e9},
                {"_gbits_per_s", "Gb/s", 1e9 / 8},
                {"_gbps", "GB/s", 1e9}};

static int bw_check(const bw_t *b, const char *where, char key[3][40], int u,
                    double v) {
  double gbytes = v * bw_units[u].scale / 1e9;
  if (v < 0 || (v == 0 && !b->zero_ok))
    return strata_error(STRATA_EBADINPUT,
                        "%s: '%s' is %g; a bandwidth must be positive%s", where,
                        key[u], v, b->zero_ok ? " (or 0: none)" : "");
  if (v > 0 && gbytes < 0.01)
    return strata_error(STRATA_EBADINPUT,
                        "%s: '%s' is %g %s, less than 10 MB/s: is the unit "
                        "right? ('%s' is in GB/s, '%s' in Gb/s)",
                        where, key[u], v, bw_units[u].unit, key[0], key[1]);
  if (gbytes <= b->max_gbytes) return 0;
  if (u != 1 && v / 8 <= b->max_gbytes)
    return strata_error(STRATA_EBADINPUT,
                        "%s: '%s' is %g GB/s, more than is plausible (%s): "
                        "if it is %g Gb/s, write \"%s\": %g",
                        where, key[u], v, b->why, v, key[1], v);
  return strata_error(STRATA_EBADINPUT,
                      "%s: '%s' is %g %s, more than is plausible (%s): is "
                      "the unit right?",
                      where, key[u], v, bw_units[u].unit, b->why);
}

/* Read b's bandwidth in whichever unit it is given; *out in bytes/s. */
static int opt_bw(const cJSON *o, const bw_t *b, const char *where,
                  st__spec_t *s, double *out) {
  char key[3][40];
  int u = -1, rc;
  double v = 0, x;
  for (int i = 0; i < 3; i++) {
    snprintf(key[i], sizeof key[i], "%s%s", b->base, bw_units[i].suffix);
    rc = st__json_num(o, key[i], where, 0, &x);
    if (rc == STRATA_ENOTFOUND) continue;
    if (rc) return rc;
    if (u >= 0)
      return strata_error(STRATA_EBADINPUT,
                          "%s: '%s' and '%s' give the same bandwidth; give "
                          "one",
                          where, key[u], key[i]);
    u = i;
    v = x;
  }
  if (u < 0) return 0;
  if (u == 2 && !s->legacy[0])
    snprintf(s->legacy, sizeof s->legacy, "%s", b->base);
  if ((rc = bw_check(b, where, key, u, v))) return rc;
  *out = v * bw_units[u].scale;
  return 0;
}

static int opt_str(const cJSON *o, const char *key, const char *where,
                   char **out) {
  const char *v;
  int rc = st__json_str(o, key, where, 0, &v);
  if (rc == STRATA_ENOTFOUND) return 0;
  if (rc) return rc;
  char what[64];
  snprintf(what, sizeof what, "'%s'", key);
  if ((rc = st__name_check(v, what, where))) return rc;
  strata_free(*out);
  *out = strata_strdup(v);
  return *out ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
}

/* A count from lo to hi; what says what it counts, for the message. */
static int opt_count(const cJSON *o, const char *key, const char *where, int lo,
                     int hi, const char *what, int *out) {
  int64_t v;
  int rc = st__json_int(o, key, where, 0, &v);
  if (rc == STRATA_ENOTFOUND) return 0;
  if (rc) return rc;
  if (v < lo || v > hi)
    return strata_error(STRATA_EBADINPUT,
                        "%s: '%s' is %lld; it must be from %d to %d (%s)",
                        where, key, (long long)v, lo, hi, what);
  *out = (int)v;
  return 0;
}

/* The folder of the spec file, with a trailing '/', or "" */
static char *spec_dir(const char *path) {
  const char *slash = strrchr(path, '/');
  return strata_strndup(path, slash ? (size_t)(slash - path + 1) : 0);
}

static int read_xml_path(const cJSON *o, const char *where, const char *dir,
                         st__group_t *g) {
  int rc = opt_str(o, "xml", where, &g->xml_given);
  if (rc || !g->xml_given) return rc;
  size_t size = strlen(dir) + strlen(g->xml_given) + 1;
  g->xml = strata_malloc(size);
  if (!g->xml) return strata_error(STRATA_ENOMEM, "out of memory");
  snprintf(g->xml, size, "%s%s", g->xml_given[0] == '/' ? "" : dir,
           g->xml_given);
  return 0;
}

static int read_template(const cJSON *t, const char *where, st__spec_t *s,
                         st__group_t *g) {
  int rc;
  if ((rc = check_keys(t, where, template_keys)) ||
      (rc = opt_count(t, "gpus", where, 1, ST__MAX_GPUS,
                      "the GPUs of one node, e.g. 8", &g->gpus)) ||
      (rc = opt_str(t, "gpu_model", where, &g->gpu_model)) ||
      (rc = opt_bw(t, &bw_nvlink, where, s, &g->nvlink_bw)) ||
      (rc = opt_bw(t, &bw_pcie, where, s, &g->pcie_bw)) ||
      (rc = opt_count(t, "nics", where, 0, ST__MAX_GPUS,
                      "the NICs of one node, e.g. 8", &g->nics)) ||
      (rc = opt_bw(t, &bw_nic, where, s, &g->nic_bw)))
    return rc;
  if (!g->gpus)
    return strata_error(STRATA_EBADINPUT,
                        "%s: missing required field 'gpus' (the GPUs of one "
                        "node, e.g. 8)",
                        where);
  return 0;
}

static int read_group(const cJSON *o, const char *spec, int i, const char *dir,
                      st__spec_t *s) {
  st__group_t *g = &s->groups[i];
  char where[600];
  const cJSON *t = NULL;
  int rc;
  snprintf(where, sizeof where, "%s: node_groups[%d]", spec, i);
  if ((rc = check_keys(o, where, group_keys)) ||
      (rc = opt_str(o, "names", where, &g->names)) ||
      (rc = opt_count(o, "count", where, 1, MAX_NODES, "the nodes of the group",
                      &g->count)) ||
      (rc = read_xml_path(o, where, dir, g)) ||
      (rc = opt_str(o, "gpu_model", where, &g->gpu_model)))
    return rc;
  rc = st__json_object(o, "template", where, 0, &t);
  if (rc && rc != STRATA_ENOTFOUND) return rc;
  if (!g->names && !g->count)
    return strata_error(STRATA_EBADINPUT,
                        "%s: give 'names' (e.g. \"node[001-128]\") or 'count'",
                        where);
  if (!t == !g->xml)
    return strata_error(STRATA_EBADINPUT,
                        "%s: give exactly one of 'xml' (an hwloc export) and "
                        "'template' (an inline node)",
                        where);
  if (t) {
    strncat(where, ".template", sizeof where - strlen(where) - 1);
    return read_template(t, where, s, g);
  }
  return 0;
}

static int read_groups(const cJSON *root, const char *path, st__spec_t **out) {
  const cJSON *arr, *it;
  char *dir = NULL;
  int rc, i = 0;
  if ((rc = st__json_array(root, "node_groups", path, 1, &arr))) return rc;
  if (cJSON_GetArraySize(arr) < 1)
    return strata_error(STRATA_EBADINPUT, "%s: 'node_groups' is empty", path);
  if ((rc = spec_new(path, cJSON_GetArraySize(arr), out))) return rc;
  if (!(dir = spec_dir(path)))
    return strata_error(STRATA_ENOMEM, "out of memory");
  cJSON_ArrayForEach(it, arr) {
    if (!cJSON_IsObject(it))
      rc = strata_error(STRATA_EBADINPUT,
                        "%s: node_groups[%d] is not an object", path, i);
    else
      rc = read_group(it, path, i, dir, *out);
    if (rc) break;
    i++;
  }
  strata_free(dir);
  return rc;
}

static int read_network(const cJSON *root, const char *path, st__spec_t *s) {
  const cJSON *n;
  char where[600];
  int rc = st__json_object(root, "network", path, 0, &n);
  if (rc == STRATA_ENOTFOUND) return 0;
  if (rc) return rc;
  snprintf(where, sizeof where, "%s: network", path);
  if ((rc = check_keys(n, where, network_keys)) ||
      (rc = opt_bw(n, &bw_nic, where, s, &s->nic_bw)) ||
      (rc = opt_num(n, "latency_us", where, &latency_us, &s->latency)) ||
      (rc = opt_num(n, "spine_latency_us", where, &latency_us,
                    &s->spine_latency)) ||
      (rc = opt_num(n, "nvlink_latency_us", where, &latency_us,
                    &s->nvlink_latency)) ||
      (rc = opt_num(n, "pcie_latency_us", where, &latency_us,
                    &s->pcie_latency)) ||
      (rc = opt_num(n, "spine_oversubscription", where, &oversub,
                    &s->oversub)) ||
      (rc = opt_count(n, "leaf_size", where, 1, MAX_NODES,
                      "the nodes under one leaf switch, e.g. 32",
                      &s->leaf_size)))
    return rc;
  return 0;
}

static int read_gpu(const cJSON *root, const char *path, st__spec_t *s) {
  const cJSON *g;
  char where[600];
  int rc = st__json_object(root, "gpu", path, 0, &g);
  if (rc == STRATA_ENOTFOUND) return 0;
  if (rc) return rc;
  snprintf(where, sizeof where, "%s: gpu", path);
  if ((rc = check_keys(g, where, gpu_keys)) ||
      (rc = opt_str(g, "model", where, &s->gpu_model)) ||
      (rc = opt_num(g, "memory_gib", where, &memory_gib, &s->gpu_memory)) ||
      (rc = opt_num(g, "bf16_tflops", where, &bf16_tflops, &s->gpu_flops)) ||
      (rc = opt_bw(g, &bw_nvlink, where, s, &s->gpu_nvlink)))
    return rc;
  return 0;
}

static int read_names(const cJSON *o, const char *key, const char *where,
                      char ***out, int *n) {
  const cJSON *arr, *it;
  int rc = st__json_array(o, key, where, 0, &arr), i = 0;
  if (rc == STRATA_ENOTFOUND) return 0;
  if (rc) return rc;
  *out = strata_calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof **out);
  if (!*out) return strata_error(STRATA_ENOMEM, "out of memory");
  cJSON_ArrayForEach(it, arr) {
    if (!cJSON_IsString(it))
      return strata_error(STRATA_EBADINPUT, "%s: '%s' holds names (strings)",
                          where, key);
    char what[64];
    snprintf(what, sizeof what, "'%s'[%d]", key, i);
    if ((rc = st__name_check(it->valuestring, what, where))) return rc;
    if (!((*out)[i] = strata_strdup(it->valuestring)))
      return strata_error(STRATA_ENOMEM, "out of memory");
    *n = ++i;
  }
  return 0;
}

static int read_unhealthy(const cJSON *root, const char *path, st__spec_t *s) {
  const cJSON *u;
  char where[600];
  int rc = st__json_object(root, "unhealthy", path, 0, &u);
  if (rc == STRATA_ENOTFOUND) return 0;
  if (rc) return rc;
  snprintf(where, sizeof where, "%s: unhealthy", path);
  if ((rc = check_keys(u, where, unhealthy_keys)) ||
      (rc = read_names(u, "nodes", where, &s->bad_nodes, &s->nbad_nodes)))
    return rc;
  return read_names(u, "gpus", where, &s->bad_gpus, &s->nbad_gpus);
}

static int read_json(const char *path, st__spec_t **out) {
  char *text = NULL;
  size_t len;
  cJSON *root = NULL;
  st__spec_t *s = NULL;
  int rc;
  if ((rc = strata_file_read(path, 64u << 20, &text, &len)) ||
      (rc = st__json_parse(text, len, path, &root)))
    goto out;
  if (!cJSON_IsObject(root)) {
    rc = strata_error(STRATA_EBADINPUT, "%s: a cluster spec is a JSON object",
                      path);
    goto out;
  }
  if ((rc = check_keys(root, path, root_keys)) ||
      (rc = read_groups(root, path, &s)) ||
      (rc = opt_str(root, "name", path, &s->name)) ||
      (rc = read_gpu(root, path, s)) || (rc = read_network(root, path, s)) ||
      (rc = read_unhealthy(root, path, s)))
    goto out;
  if (s->legacy[0])
    strata_log(STRATA_LOG_WARN,
               "%s: keys ending in '_gbps' are read as GB/s; rename them "
               "('%s_gbps' to '%s_gbytes_per_s', or '%s_gbits_per_s' for "
               "Gb/s; docs/cluster-format.md)",
               path, s->legacy, s->legacy, s->legacy);
  *out = s;
  s = NULL;
out:
  st__spec_free(s);
  cJSON_Delete(root);
  strata_free(text);
  return rc;
}

int st__spec_read(const char *arg, st__spec_t **out) {
  int rc = 0;
  *out = NULL;
  if (try_preset(arg, out, &rc)) return rc;
  rc = read_json(arg, out);
  if (rc == STRATA_ENOTFOUND && preset_find(arg, strlen(arg)))
    return strata_error(STRATA_EBADINPUT,
                        "'%s' is a preset: give its node count after a colon, "
                        "e.g. %s:128",
                        arg, arg);
  if (rc == STRATA_ENOTFOUND && !strchr(arg, ':') && !strchr(arg, '/')) {
    const char *names[N_PRESETS + 1], *near;
    for (int i = 0; i < N_PRESETS; i++)
      names[i] = presets[i].name;
    names[N_PRESETS] = NULL;
    if ((near = st__did_you_mean(arg, names)))
      return strata_error(STRATA_ENOTFOUND,
                          "'%s' is neither a cluster spec file nor a preset; "
                          "the nearest preset is %s (write %s:NODES, e.g. "
                          "%s:128)",
                          arg, near, near, near);
  }
  if (rc == STRATA_ENOTFOUND && strchr(arg, ':')) {
    strata_buf_t b;
    strata_buf_init(&b);
    st__preset_list(&b);
    rc = strata_error(STRATA_ENOTFOUND,
                      "'%s' is neither a preset (PRESET:NODES with PRESET one "
                      "of %s) nor a cluster spec file",
                      arg, b.p ? b.p : "");
    strata_buf_free(&b);
  }
  return rc;
}

int st__spec_single(const char *xml_path, st__spec_t **out) {
  st__spec_t *s;
  const char *where = xml_path ? xml_path : "the local machine";
  int rc = spec_new(where, 1, &s);
  if (rc) return rc;
  s->groups[0].count = 1;
  s->groups[0].local = !xml_path;
  if (xml_path && (!(s->groups[0].xml = strata_strdup(xml_path)) ||
                   !(s->groups[0].xml_given = strata_strdup(xml_path)))) {
    st__spec_free(s);
    return strata_error(STRATA_ENOMEM, "out of memory");
  }
  *out = s;
  return 0;
}
