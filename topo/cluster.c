/*
 * cluster.c - build a cluster from a spec: load each node group's XML or
 * template, check the groups have one shape, name the nodes, drop the
 * unhealthy ones, and derive the hierarchy of levels.
 *
 * Policy on health: a node with any unhealthy GPU is dropped entirely,
 * like a node drained by the scheduler.  Every usable node then has the
 * same GPUs, so ranks stay node-major (rank = node * gpus_per_node +
 * local) as torchrun and Megatron-LM number them, and every data-parallel
 * replica sees the same mesh.  Node groups of one GPU count and GPU model
 * are one shape: where their links differ, the slowest is used.
 *
 * Node groups of different shapes (an H100 group and an A100 group, or 8
 * and 4 GPUs per node) make a mixed cluster: each group is built as a
 * cluster of its own (a view with its own GPU, levels and health), which
 * the planner costs stages on as it costs any homogeneous cluster, and the
 * whole keeps the names and health of every node in spec order (usable
 * nodes of group 0 first, then group 1's, ...).  Groups talk over their
 * NICs: the link between two groups is the slower group's NIC share per
 * GPU, across the spine when the cluster spans leaves.  A one-shape spec
 * takes exactly the path it always did.
 *
 * Levels, inner to outer: the NVLink/XGMI domain, PCIe inside a node (only
 * when a node has GPUs outside one domain), the leaf switch, the spine
 * (only when the usable nodes span several leaves; its bandwidth is the
 * NIC's divided by the oversubscription).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/text.h"
#include "topo/cluster.h"

typedef struct {
  int gpn;
  char model[STRATA_TOPO_NAME_MAX];
  uint64_t memory; /* reported by hwloc (smallest), 0 if not */
  double nvlink, pcie, nic_bw;
  int nics, domain_size;
  char link_name[8];
  strata_node_topo_t *topo;
} shape_t;

static int unknown_model(const char *where, const char *name) {
  strata_buf_t b;
  strata_buf_init(&b);
  st__gpu_model_list(&b);
  int rc = strata_error(STRATA_EBADINPUT,
                        "%s: unknown GPU model '%s' (known: %s; or give "
                        "\"gpu\": {\"memory_gib\": ..., \"bf16_tflops\": ...})",
                        where, name, b.p ? b.p : "");
  strata_buf_free(&b);
  return rc;
}

/* The table model for name, or a custom one when the spec gives memory
 * and FLOP/s; out->name is set by the caller. */
static int resolve_model(const st__spec_t *s, const char *name,
                         strata_gpu_model_t *out) {
  const strata_gpu_model_t *m = strata_gpu_model_find(name);
  memset(out, 0, sizeof *out);
  if (m) {
    *out = *m;
  } else if (s->gpu_memory < 0 || s->gpu_flops < 0) {
    return unknown_model(s->where, name);
  }
  if (s->gpu_memory >= 0) out->memory_bytes = (uint64_t)s->gpu_memory;
  if (s->gpu_flops >= 0) out->peak_flops = s->gpu_flops;
  if (s->gpu_nvlink >= 0) out->nvlink_bandwidth = s->gpu_nvlink;
  return 0;
}

static int xml_missing(const st__spec_t *s, int i, const st__group_t *g) {
  if (!strcmp(s->where, g->xml_given)) /* a single node, no spec file */
    return strata_error(STRATA_ENOTFOUND, "XML file '%s' not found", g->xml);
  if (!strcmp(g->xml, g->xml_given))
    return strata_error(STRATA_ENOTFOUND,
                        "%s: node_groups[%d]: XML file '%s' not found",
                        s->where, i, g->xml);
  return strata_error(STRATA_ENOTFOUND,
                      "%s: node_groups[%d]: XML file '%s' not found (looked "
                      "for '%s': paths are relative to the spec's folder)",
                      s->where, i, g->xml_given, g->xml);
}

static int node_model(const st__spec_t *s, const st__group_t *g,
                      const strata_node_topo_t *n, char *out, size_t size) {
  const strata_gpu_info_t *g0 = strata_node_gpu(n, 0);
  const char *name = g->gpu_model ? g->gpu_model : s->gpu_model;
  if (!name) {
    for (int i = 1; i < n->ngpus; i++)
      if (n->gpus[i].table != g0->table)
        return strata_error(STRATA_EUNSUPPORTED,
                            "%s: GPUs of different models in one node are "
                            "not supported yet",
                            n->source);
    if (!g0->table)
      return strata_error(STRATA_EBADINPUT,
                          "%s: cannot tell the GPU model (PCI %04x:%04x, "
                          "reported '%s'); set \"gpu\": {\"model\": ...} in "
                          "the cluster spec",
                          n->source, g0->vendor_id, g0->device_id, g0->model);
    name = g0->table->name;
  }
  snprintf(out, size, "%s", name);
  return 0;
}

static void node_shape(strata_node_topo_t *n, shape_t *sh) {
  int rdma = 0;
  sh->gpn = n->ngpus;
  sh->nvlink = st__node_domain_bandwidth(n);
  sh->domain_size = sh->nvlink > 0 ? st__node_domain_size(n) : 1;
  sh->pcie = st__node_pcie_bandwidth(n);
  for (int i = 0; i < n->ngpus; i++)
    if (!sh->memory ||
        (n->gpus[i].memory_bytes && n->gpus[i].memory_bytes < sh->memory))
      sh->memory = n->gpus[i].memory_bytes;
  for (int i = 0; i < n->nnics; i++)
    rdma += n->nics[i].rdma;
  sh->nics = rdma ? rdma : n->nnics ? n->nnics : 1;
  for (int i = 0; n->link_kind[i] && i < 7; i++)
    sh->link_name[i] = (char)tolower((unsigned char)n->link_kind[i]);
  sh->topo = n;
}

static int xml_shape(const st__spec_t *s, int i, const st__group_t *g,
                     shape_t *sh) {
  strata_node_topo_t *n = NULL;
  int rc =
      g->local ? strata_node_load_local(&n) : strata_node_load_xml(g->xml, &n);
  if (rc == STRATA_ENOTFOUND && !g->local) return xml_missing(s, i, g);
  if (rc && !g->local && strcmp(s->where, g->xml_given))
    strata_error_prefix("%s: node_groups[%d]", s->where, i); /* which spec */
  if (rc) return rc;
  node_shape(n, sh);
  return node_model(s, g, n, sh->model, sizeof sh->model);
}

static int template_shape(const st__spec_t *s, int i, const st__group_t *g,
                          shape_t *sh) {
  const char *name = g->gpu_model ? g->gpu_model : s->gpu_model;
  strata_gpu_model_t m;
  int rc;
  if (!name)
    return strata_error(STRATA_EBADINPUT,
                        "%s: a node template needs 'gpu_model'", s->where);
  if ((rc = resolve_model(s, name, &m))) return rc;
  snprintf(sh->model, sizeof sh->model, "%s", name);
  sh->gpn = g->gpus;
  sh->nvlink = g->nvlink_bw >= 0 ? g->nvlink_bw : m.nvlink_bandwidth;
  sh->pcie = g->pcie_bw >= 0 ? g->pcie_bw : m.pcie_bandwidth;
  if (!(sh->pcie > 0))
    return strata_error(STRATA_EBADINPUT,
                        "%s: node_groups[%d].template: the PCIe bandwidth is "
                        "unknown (GPU model '%s' is not in the table): give "
                        "'pcie_gbytes_per_s', e.g. 64 for PCIe 5.0 x16",
                        s->where, i, name);
  sh->domain_size = sh->nvlink > 0 ? g->gpus : 1;
  sh->nics = g->nics >= 0 ? g->nics : g->gpus;
  /* the vendor's name for its links (Huawei's MindCluster guide calls
   * both the Atlas board's and the SuperPoD's HCCS) */
  const char *vendor = m.vendor ? m.vendor : "";
  snprintf(sh->link_name, sizeof sh->link_name, "%s",
           !strcmp(vendor, "AMD")      ? "xgmi"
           : !strcmp(vendor, "Huawei") ? "hccs"
                                       : "nvlink");
  return 0;
}

/* total_nodes: of the whole cluster; nodes talk to each other through
 * NICs, so a group without any cannot be part of a multi-node cluster. */
static int group_shape(const st__spec_t *s, int i, int total_nodes,
                       shape_t *sh) {
  const st__group_t *g = &s->groups[i];
  int rc =
      g->xml || g->local ? xml_shape(s, i, g, sh) : template_shape(s, i, g, sh);
  if (rc) return rc;
  sh->nic_bw = g->nic_bw >= 0 ? g->nic_bw : s->nic_bw;
  if (total_nodes > 1 && sh->nics < 1)
    return strata_error(STRATA_EBADINPUT,
                        "%s: node_groups[%d].template: 'nics' is 0, but the "
                        "cluster has %d nodes and nodes talk through NICs: "
                        "give the NICs of one node (e.g. %d, one per GPU)",
                        s->where, i, total_nodes, sh->gpn);
  return 0;
}

static double min_pos(double a, double b) {
  return a > 0 && (b <= 0 || a < b) ? a : b;
}

/* Fold group i's shape (of group 0's GPU model and count: others make a
 * mixed cluster) into the first one. */
static int merge_shape(const st__spec_t *s, int i, shape_t *all,
                       const shape_t *sh) {
  (void)s;
  (void)i;
  all->nvlink = sh->nvlink < all->nvlink ? sh->nvlink : all->nvlink;
  all->pcie = min_pos(all->pcie, sh->pcie);
  if (sh->domain_size < all->domain_size) all->domain_size = sh->domain_size;
  if (sh->memory && (!all->memory || sh->memory < all->memory))
    all->memory = sh->memory;
  all->nic_bw = min_pos(all->nic_bw, sh->nic_bw);
  if (sh->nics < all->nics) all->nics = sh->nics;
  return 0;
}

/* ---- names and health ----------------------------------------------- */

static int add_group_names(strata_cluster_t *c, const st__spec_t *s, int i,
                           int *k) {
  const st__group_t *g = &s->groups[i];
  char where[600], **names = NULL;
  int n = 0, rc;
  if (!g->names) {
    for (int j = 0; j < g->count; j++, (*k)++) {
      char buf[32];
      snprintf(buf, sizeof buf, "node%d", *k);
      if (!(c->all_names[*k] = strata_strdup(buf)))
        return strata_error(STRATA_ENOMEM, "out of memory");
    }
    return 0;
  }
  snprintf(where, sizeof where, "%s: node_groups[%d]", s->where, i);
  if ((rc = st__range_expand(g->names, where, &names, &n))) return rc;
  /* Node names reach hostfiles and launch lines: host names only. */
  for (int j = 0; j < n && !rc; j++)
    rc = st__hostname_check(names[j], "node", where);
  for (int j = 0; j < n; j++)
    if (rc)
      strata_free(names[j]);
    else
      c->all_names[(*k)++] = names[j];
  strata_free(names);
  return rc;
}

static int count_nodes(st__spec_t *s, const char *where, int *total) {
  long t = 0;
  for (int i = 0; i < s->ngroups; i++) {
    st__group_t *g = &s->groups[i];
    if (g->names) {
      char **names;
      int n, rc = st__range_expand(g->names, where, &names, &n);
      if (rc) return rc;
      for (int j = 0; j < n; j++)
        strata_free(names[j]);
      strata_free(names);
      if (g->count && g->count != n)
        return strata_error(STRATA_EBADINPUT,
                            "%s: node_groups[%d]: 'count' %d but '%s' names "
                            "%d nodes",
                            where, i, g->count, g->names, n);
      g->count = n;
    }
    t += g->count;
  }
  if (t > 1000000)
    return strata_error(STRATA_EBADINPUT, "%s: more than 1000000 nodes", where);
  *total = (int)t;
  return 0;
}

typedef struct {
  const char *name;
  int node;
} named_t;

static int cmp_named(const void *a, const void *b) {
  return strcmp(((const named_t *)a)->name, ((const named_t *)b)->name);
}

/* Nodes sorted by name, for lookups; duplicate names are an error. */
static int name_index(const strata_cluster_t *c, const char *where,
                      named_t **out) {
  named_t *ix = strata_malloc((size_t)c->total_nodes * sizeof *ix);
  if (!ix) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int i = 0; i < c->total_nodes; i++)
    ix[i] = (named_t){c->all_names[i], i};
  qsort(ix, (size_t)c->total_nodes, sizeof *ix, cmp_named);
  for (int i = 1; i < c->total_nodes; i++)
    if (!strcmp(ix[i].name, ix[i - 1].name)) {
      int rc = strata_error(STRATA_EBADINPUT, "%s: node '%s' is named twice",
                            where, ix[i].name);
      strata_free(ix);
      return rc;
    }
  *out = ix;
  return 0;
}

static int find_node(const strata_cluster_t *c, const named_t *ix,
                     const char *name, size_t len) {
  int lo = 0, hi = c->total_nodes - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    int d = strncmp(ix[mid].name, name, len);
    if (!d) d = ix[mid].name[len] ? 1 : 0;
    if (!d) return ix[mid].node;
    if (d < 0)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

/* bad[k]: 0 usable, -1 listed in unhealthy.nodes, g + 1 its GPU g listed
 * in unhealthy.gpus (the first one listed). */
static int mark_bad(const strata_cluster_t *c, const st__spec_t *s,
                    const named_t *ix, int *bad) {
  for (int i = 0; i < s->nbad_nodes; i++) {
    int k = find_node(c, ix, s->bad_nodes[i], strlen(s->bad_nodes[i]));
    if (k < 0)
      return strata_error(STRATA_EBADINPUT,
                          "%s: unhealthy.nodes: no node named '%s'", s->where,
                          s->bad_nodes[i]);
    bad[k] = -1;
  }
  for (int i = 0; i < s->nbad_gpus; i++) {
    const char *g = s->bad_gpus[i], *colon = strrchr(g, ':');
    char *end = NULL;
    long idx = colon ? strtol(colon + 1, &end, 10) : -1;
    int k = colon ? find_node(c, ix, g, (size_t)(colon - g)) : -1;
    if (!colon || !*(colon + 1) || *end || idx < 0 || idx >= c->gpn || k < 0)
      return strata_error(STRATA_EBADINPUT,
                          "%s: unhealthy.gpus: '%s' is not NODE:INDEX with a "
                          "known node and an index below %d",
                          s->where, g, c->gpn);
    if (!bad[k]) bad[k] = (int)idx + 1;
  }
  return 0;
}

/* Why each dropped node is left out, in the words `strata show` and the
 * hostfile comments use. */
static int name_dropped(strata_cluster_t *c, const int *bad) {
  c->dropped = strata_calloc((size_t)c->total_nodes, sizeof *c->dropped);
  if (!c->dropped) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int i = 0; i < c->total_nodes; i++) {
    char why[64];
    if (!bad[i]) continue;
    if (bad[i] < 0)
      snprintf(why, sizeof why, "unhealthy (unhealthy.nodes)");
    else
      snprintf(why, sizeof why, "GPU %d unhealthy (unhealthy.gpus)",
               bad[i] - 1);
    if (!(c->dropped[i] = strata_strdup(why)))
      return strata_error(STRATA_ENOMEM, "out of memory");
  }
  return 0;
}

static int apply_health(strata_cluster_t *c, const st__spec_t *s) {
  named_t *ix = NULL;
  int rc;
  int *bad = strata_calloc((size_t)c->total_nodes, sizeof *bad);
  c->usable = strata_malloc((size_t)c->total_nodes * sizeof *c->usable);
  if (!bad || !c->usable) {
    rc = strata_error(STRATA_ENOMEM, "out of memory");
    goto out;
  }
  if ((rc = name_index(c, s->where, &ix)) || (rc = mark_bad(c, s, ix, bad)) ||
      (rc = name_dropped(c, bad)))
    goto out;
  c->nodes = 0;
  for (int i = 0; i < c->total_nodes; i++)
    if (!bad[i]) c->usable[c->nodes++] = i;
  if (c->nodes == 0)
    rc = strata_error(STRATA_EBADINPUT,
                      "%s: no healthy GPUs: all %d nodes are unhealthy or "
                      "have an unhealthy GPU",
                      s->where, c->total_nodes);
out:
  strata_free(bad);
  strata_free(ix);
  return rc;
}

/* ---- levels --------------------------------------------------------- */

static void add_level(strata_cluster_t *c, strata_level_kind_t kind,
                      const char *name, int span, strata_link_t link) {
  strata_level_t *l = &c->levels[c->nlevels++];
  l->kind = kind;
  snprintf(l->name, sizeof l->name, "%s", name);
  l->span = span;
  l->link = link;
  l->nominal_bandwidth = link.bandwidth;
}

static int make_levels(strata_cluster_t *c, const st__spec_t *s,
                       const shape_t *sh) {
  int first_leaf = c->usable[0] / c->leaf_size;
  int last_leaf = c->usable[c->nodes - 1] / c->leaf_size;
  double nic = sh->nic_bw * (sh->nics < sh->gpn ? sh->nics : sh->gpn) / sh->gpn;
  c->nvlink = (strata_link_t){sh->nvlink, s->nvlink_latency};
  c->pcie = (strata_link_t){sh->pcie, s->pcie_latency};
  c->leaf = (strata_link_t){nic, s->latency};
  c->spine = (strata_link_t){nic / c->oversub, s->latency + s->spine_latency};
  c->nominal[STRATA_LEVEL_NVLINK] = c->nvlink.bandwidth;
  c->nominal[STRATA_LEVEL_PCIE] = c->pcie.bandwidth;
  c->nominal[STRATA_LEVEL_LEAF] = c->leaf.bandwidth;
  c->nominal[STRATA_LEVEL_SPINE] = c->spine.bandwidth;
  c->has_nvlink = sh->nvlink > 0 && sh->gpn > 1;
  if (c->has_nvlink)
    add_level(c, STRATA_LEVEL_NVLINK, c->link_name, sh->domain_size, c->nvlink);
  if (!c->has_nvlink || sh->domain_size < sh->gpn)
    add_level(c, STRATA_LEVEL_PCIE, "pcie", sh->gpn, c->pcie);
  if (c->total_nodes > 1 && !(sh->nic_bw > 0))
    return strata_error(STRATA_EBADINPUT,
                        "%s: the NIC bandwidth is missing: set network."
                        "nic_gbits_per_s (one NIC, e.g. 400 for NDR "
                        "InfiniBand) or network.nic_gbytes_per_s (e.g. 50)",
                        s->where);
  if (c->nodes > 1) {
    int per_leaf = c->leaf_size < c->nodes ? c->leaf_size : c->nodes;
    add_level(c, STRATA_LEVEL_LEAF, "leaf", per_leaf * sh->gpn, c->leaf);
  }
  if (first_leaf != last_leaf)
    add_level(c, STRATA_LEVEL_SPINE, "spine", c->nodes * sh->gpn, c->spine);
  return 0;
}

/* The readers refuse every value that would make a cost non-finite; this
 * last check names the level for any case they missed (a hwloc figure,
 * a default), so the planner never sees one. */
static int check_levels(const strata_cluster_t *c, const st__spec_t *s) {
  for (int i = 0; i < c->nlevels; i++) {
    const strata_link_t *k = &c->levels[i].link;
    if (isfinite(k->bandwidth) && k->bandwidth > 0 && isfinite(k->latency) &&
        k->latency >= 0)
      continue;
    return strata_error(STRATA_EBADINPUT,
                        "%s: the %s level has %g GB/s and %g us, from which "
                        "no cost can be computed; give its bandwidth and "
                        "latency in the spec (docs/cluster-format.md)",
                        s->where, c->levels[i].name, k->bandwidth / 1e9,
                        k->latency * 1e6);
  }
  return 0;
}

/* ---- build ---------------------------------------------------------- */

static int set_model(strata_cluster_t *c, const st__spec_t *s,
                     const shape_t *sh) {
  int rc = resolve_model(s, sh->model, &c->model);
  if (rc) return rc;
  snprintf(c->model_name, sizeof c->model_name, "%s", sh->model);
  c->model.name = c->model_name;
  if (s->gpu_memory < 0 && sh->memory) c->model.memory_bytes = sh->memory;
  if (!c->model.memory_bytes || !(c->model.peak_flops > 0))
    return strata_error(STRATA_EBADINPUT,
                        "%s: GPU model '%s' has no %s: give \"gpu\": "
                        "{\"memory_gib\": ..., \"bf16_tflops\": ...}",
                        s->where, sh->model,
                        c->model.memory_bytes ? "FLOP/s" : "memory");
  c->gpn = sh->gpn;
  snprintf(c->link_name, sizeof c->link_name, "%s",
           sh->link_name[0] ? sh->link_name : "nvlink");
  return 0;
}

static int copy_domains(strata_cluster_t *c, const shape_t *sh) {
  c->domain = strata_calloc((size_t)c->gpn, sizeof *c->domain);
  if (!c->domain) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int i = 0; sh->topo && i < c->gpn; i++)
    c->domain[i] = sh->topo->gpus[i].domain;
  return 0;
}

static int build_shape(strata_cluster_t *c, const st__spec_t *s) {
  shape_t all = {0}, sh;
  int rc = 0;
  for (int i = 0; i < s->ngroups && !rc; i++) {
    memset(&sh, 0, sizeof sh);
    rc = group_shape(s, i, c->total_nodes, &sh);
    if (!rc && i > 0) rc = merge_shape(s, i, &all, &sh);
    if (i == 0)
      all = sh;
    else
      strata_node_destroy(sh.topo);
  }
  if (!rc) rc = set_model(c, s, &all);
  if (!rc) rc = copy_domains(c, &all);
  c->topo = all.topo;
  if (!rc) rc = apply_health(c, s);
  if (!rc) rc = make_levels(c, s, &all);
  if (!rc) {
    strata_perf_of(&c->model, &c->perf, NULL);
    strata_calibration_init(&c->cal);
    st__apply_perf(c);
  }
  if (!rc) rc = check_levels(c, s);
  return rc;
}

/* ---- mixed clusters: a view per node group ---------------------------- */

/* 1 in *mixed when some group's GPU model or count differs from group
 * 0's (the shapes are read again by the builders; templates cost nothing
 * and an XML group is loaded once more). */
static int shapes_differ(const st__spec_t *s, int total, int *mixed) {
  shape_t first = {0}, sh;
  int rc = 0;
  *mixed = 0;
  for (int i = 0; i < s->ngroups && !rc; i++) {
    memset(&sh, 0, sizeof sh);
    rc = group_shape(s, i, total, &sh);
    if (!rc && i > 0 &&
        (sh.gpn != first.gpn || strcmp(sh.model, first.model) != 0))
      *mixed = 1;
    if (i == 0)
      first = sh;
    else
      strata_node_destroy(sh.topo);
  }
  strata_node_destroy(first.topo);
  return rc;
}

/* Is `name` (up to len characters) one of names[0 .. n)? */
static int in_names(char *const *names, int n, const char *name, size_t len) {
  for (int i = 0; i < n; i++)
    if (!strncmp(names[i], name, len) && !names[i][len]) return 1;
  return 0;
}

/* The unhealthy entries that name a node of group i (names[0 .. n)):
 * pointers into s, for a spec of that group alone. */
static int group_health(const st__spec_t *s, char *const *names, int n,
                        st__spec_t *si) {
  si->nbad_nodes = si->nbad_gpus = 0;
  si->bad_nodes = strata_calloc((size_t)s->nbad_nodes + 1, sizeof(char *));
  si->bad_gpus = strata_calloc((size_t)s->nbad_gpus + 1, sizeof(char *));
  if (!si->bad_nodes || !si->bad_gpus)
    return strata_error(STRATA_ENOMEM, "out of memory");
  for (int j = 0; j < s->nbad_nodes; j++)
    if (in_names(names, n, s->bad_nodes[j], strlen(s->bad_nodes[j])))
      si->bad_nodes[si->nbad_nodes++] = s->bad_nodes[j];
  for (int j = 0; j < s->nbad_gpus; j++) {
    const char *colon = strrchr(s->bad_gpus[j], ':');
    if (colon &&
        in_names(names, n, s->bad_gpus[j], (size_t)(colon - s->bad_gpus[j])))
      si->bad_gpus[si->nbad_gpus++] = s->bad_gpus[j];
  }
  return 0;
}

/* Group i as a cluster of its own: its nodes (physical k0 ..), named as
 * in the whole spec, its share of the unhealthy list. */
static int build_group(const strata_cluster_t *c, const st__spec_t *s, int i,
                       int k0, strata_cluster_t **out) {
  st__spec_t si = *s;
  int n = s->groups[i].count, rc = 0;
  strata_cluster_t *g = strata_calloc(1, sizeof *g);
  si.ngroups = 1;
  si.groups = &s->groups[i];
  si.bad_nodes = si.bad_gpus = NULL;
  if (!g || !(g->name = strata_strdup(c->name)) ||
      !(g->all_names = strata_calloc((size_t)n + 1, sizeof *g->all_names))) {
    rc = strata_error(STRATA_ENOMEM, "out of memory");
    goto out;
  }
  g->leaf_size = c->leaf_size;
  g->oversub = c->oversub;
  g->total_nodes = n;
  for (int j = 0; j < n && !rc; j++)
    if (!(g->all_names[j] = strata_strdup(c->all_names[k0 + j])))
      rc = strata_error(STRATA_ENOMEM, "out of memory");
  if (!rc) rc = group_health(s, g->all_names, n, &si);
  if (!rc) rc = build_shape(g, &si);
  if (!rc && c->total_nodes > 1 && !(g->leaf.bandwidth > 0))
    rc = strata_error(STRATA_EBADINPUT,
                      "%s: node_groups[%d]: the NIC bandwidth is missing: "
                      "set network.nic_gbits_per_s (e.g. 400 for NDR "
                      "InfiniBand) or the group's template nic_gbits_per_s",
                      s->where, i);
out:
  strata_free(si.bad_nodes);
  strata_free(si.bad_gpus);
  if (rc) {
    strata_cluster_destroy(g);
    g = NULL;
  }
  *out = g;
  return rc;
}

/* The whole: group 0's GPU and links as its own (for what asks one
 * figure of a cluster), the nodes and health of every group. */
static int build_mixed(strata_cluster_t *c, const st__spec_t *s) {
  int rc = 0, k0 = 0, u0 = 0;
  c->ngroups = s->ngroups;
  c->group = strata_calloc((size_t)s->ngroups, sizeof *c->group);
  c->group_node0 = strata_calloc((size_t)s->ngroups, sizeof *c->group_node0);
  if (!c->group || !c->group_node0)
    return strata_error(STRATA_ENOMEM, "out of memory");
  for (int i = 0; i < s->ngroups && !rc; i++) {
    rc = build_group(c, s, i, k0, &c->group[i]);
    c->group_node0[i] = u0;
    k0 += s->groups[i].count;
    if (!rc) u0 += c->group[i]->nodes;
  }
  if (rc) return rc;
  c->gpn = ST__MAX_GPUS; /* each group checks its own GPU indices */
  if ((rc = apply_health(c, s))) return rc;
  if (c->nodes != u0)
    return strata_error(STRATA_EINTERNAL,
                        "%s: groups hold %d usable nodes "
                        "but the cluster %d",
                        s->where, u0, c->nodes);
  const strata_cluster_t *g0 = c->group[0];
  c->gpn = g0->gpn;
  c->model = g0->model;
  snprintf(c->model_name, sizeof c->model_name, "%s", g0->model_name);
  c->model.name = c->model_name;
  c->has_nvlink = g0->has_nvlink;
  snprintf(c->link_name, sizeof c->link_name, "%s", g0->link_name);
  c->nvlink = g0->nvlink;
  c->pcie = g0->pcie;
  c->leaf = g0->leaf;
  c->spine = g0->spine;
  memcpy(c->nominal, g0->nominal, sizeof c->nominal);
  c->perf = g0->perf;
  c->cal = g0->cal;
  c->nlevels = g0->nlevels;
  memcpy(c->levels, g0->levels, sizeof c->levels);
  c->domain = strata_calloc((size_t)c->gpn, sizeof *c->domain);
  if (!c->domain) return strata_error(STRATA_ENOMEM, "out of memory");
  memcpy(c->domain, g0->domain, sizeof *c->domain * (size_t)c->gpn);
  st__cross_link(c);
  return 0;
}

static int build(st__spec_t *s, strata_cluster_t **out) {
  strata_cluster_t *c = strata_calloc(1, sizeof *c);
  int rc, k = 0;
  *out = NULL;
  if (!c || !(c->name = strata_strdup(s->name))) {
    rc = strata_error(STRATA_ENOMEM, "out of memory");
    goto out;
  }
  /* The name (the spec's 'name', else its path) reaches every export. */
  if ((rc = st__name_check(c->name, "the cluster's name", s->where))) goto out;
  c->leaf_size = s->leaf_size;
  c->oversub = s->oversub;
  if ((rc = count_nodes(s, s->where, &c->total_nodes))) goto out;
  c->all_names = strata_calloc((size_t)c->total_nodes, sizeof *c->all_names);
  if (!c->all_names) {
    rc = strata_error(STRATA_ENOMEM, "out of memory");
    goto out;
  }
  for (int i = 0; i < s->ngroups && !rc; i++)
    rc = add_group_names(c, s, i, &k);
  int mixed = 0;
  if (!rc && s->ngroups > 1) rc = shapes_differ(s, c->total_nodes, &mixed);
  if (!rc) rc = mixed ? build_mixed(c, s) : build_shape(c, s);
  if (!rc) {
    *out = c;
    c = NULL;
  }
out:
  strata_cluster_destroy(c);
  return rc;
}

int strata_cluster_load(const char *spec, strata_cluster_t **out) {
  st__spec_t *s = NULL;
  int rc;
  *out = NULL;
  if (!spec || !*spec)
    return strata_error(STRATA_EINVAL, "no cluster spec given");
  if (!(rc = st__spec_read(spec, &s))) rc = build(s, out);
  st__spec_free(s);
  return rc;
}

/* The usable nodes of c that `lost` nodes of each group take away: the
 * last usable ones of each (by symmetry within a group any node serves),
 * appended to s's unhealthy nodes.  EINFEASIBLE when a group has no more
 * than `lost` usable nodes. */
static int lose_nodes(const strata_cluster_t *c, st__spec_t *s, int lost) {
  int ng = c->ngroups > 1 ? c->ngroups : 1;
  char **v = strata_realloc(
      s->bad_nodes, sizeof *v * (size_t)(s->nbad_nodes + ng * lost + 1));
  if (!v) return strata_error(STRATA_ENOMEM, "out of memory");
  s->bad_nodes = v;
  for (int k = 0; k < ng; k++) {
    const strata_cluster_t *g = c->ngroups > 1 ? c->group[k] : c;
    char what[32] = "the cluster";
    if (c->ngroups > 1) snprintf(what, sizeof what, "node group %d", k);
    if (g->nodes <= lost)
      return strata_error(STRATA_EINFEASIBLE,
                          "%s: %s has %d usable node%s: losing %d leaves "
                          "none",
                          s->where, what, g->nodes, g->nodes == 1 ? "" : "s",
                          lost);
    for (int j = g->nodes - lost; j < g->nodes; j++) {
      char *name = strata_strdup(g->all_names[g->usable[j]]);
      if (!name) return strata_error(STRATA_ENOMEM, "out of memory");
      s->bad_nodes[s->nbad_nodes++] = name;
    }
  }
  return 0;
}

int strata_cluster_load_lost(const char *spec, int lost,
                             strata_cluster_t **out) {
  st__spec_t *s = NULL;
  strata_cluster_t *whole = NULL;
  int rc;
  *out = NULL;
  if (lost < 1) return strata_cluster_load(spec, out);
  if (!spec || !*spec)
    return strata_error(STRATA_EINVAL, "no cluster spec given");
  if (!(rc = st__spec_read(spec, &s)) && !(rc = build(s, &whole))) {
    st__spec_free(s); /* build fills in what it derives: read it afresh */
    s = NULL;
    rc = st__spec_read(spec, &s);
  }
  if (!rc) rc = lose_nodes(whole, s, lost);
  if (!rc) rc = build(s, out);
  strata_cluster_destroy(whole);
  st__spec_free(s);
  return rc;
}

int strata_cluster_load_node(const char *xml_path, strata_cluster_t **out) {
  st__spec_t *s = NULL;
  int rc;
  *out = NULL;
  if (!(rc = st__spec_single(xml_path, &s))) rc = build(s, out);
  st__spec_free(s);
  return rc;
}

void strata_cluster_destroy(strata_cluster_t *c) {
  if (!c) return;
  for (int i = 0; c->all_names && i < c->total_nodes; i++)
    strata_free(c->all_names[i]);
  strata_free(c->all_names);
  for (int i = 0; c->dropped && i < c->total_nodes; i++)
    strata_free(c->dropped[i]);
  strata_free(c->dropped);
  strata_free(c->usable);
  strata_free(c->domain);
  strata_node_destroy(c->topo);
  for (int i = 0; c->group && i < c->ngroups; i++)
    strata_cluster_destroy(c->group[i]);
  strata_free(c->group);
  strata_free(c->group_node0);
  strata_free(c->name);
  strata_free(c);
}

/* ---- accessors ------------------------------------------------------ */

const char *strata_cluster_name(const strata_cluster_t *c) {
  return c->name;
}
int strata_cluster_nodes(const strata_cluster_t *c) {
  return c->nodes;
}
int strata_cluster_total_nodes(const strata_cluster_t *c) {
  return c->total_nodes;
}
int strata_cluster_gpus_per_node(const strata_cluster_t *c) {
  return c->gpn;
}
int strata_cluster_gpus(const strata_cluster_t *c) {
  int n = c->ngroups ? 0 : c->nodes * c->gpn;
  for (int i = 0; i < c->ngroups; i++)
    n += strata_cluster_gpus(c->group[i]);
  return n;
}

int strata_cluster_group_count(const strata_cluster_t *c) {
  return c->ngroups ? c->ngroups : 1;
}

const strata_cluster_t *strata_cluster_group(const strata_cluster_t *c, int k) {
  if (!c->ngroups) return k == 0 ? c : NULL;
  return k >= 0 && k < c->ngroups ? c->group[k] : NULL;
}

int strata_cluster_group_first_node(const strata_cluster_t *c, int k) {
  if (!c->ngroups) return k == 0 ? 0 : -1;
  return k >= 0 && k < c->ngroups ? c->group_node0[k] : -1;
}

int strata_cluster_spec_node_group(const strata_cluster_t *c, int i) {
  if (i < 0 || i >= c->total_nodes) return -1;
  for (int k = 0, n = 0; k < c->ngroups; k++) {
    n += c->group[k]->total_nodes;
    if (i < n) return k;
  }
  return 0;
}

strata_link_t strata_cluster_group_link(const strata_cluster_t *c) {
  return c->ngroups ? c->cross : c->leaf;
}

const char *strata_cluster_node_name(const strata_cluster_t *c, int i) {
  return i >= 0 && i < c->nodes ? c->all_names[c->usable[i]] : NULL;
}

const char *strata_cluster_spec_node_name(const strata_cluster_t *c, int i) {
  return i >= 0 && i < c->total_nodes ? c->all_names[i] : NULL;
}

const char *strata_cluster_spec_node_dropped(const strata_cluster_t *c, int i) {
  return i >= 0 && i < c->total_nodes && c->dropped ? c->dropped[i] : NULL;
}

const strata_gpu_model_t *strata_cluster_gpu_model(const strata_cluster_t *c) {
  return &c->model;
}
const char *strata_cluster_device_kind(const strata_cluster_t *c) {
  int k = strata_cluster_group_count(c);
  for (int z = 0; z < k; z++)
    if (strcmp(strata_gpu_model_kind(
                   strata_cluster_gpu_model(strata_cluster_group(c, z))),
               "NPU"))
      return "GPU";
  return strata_gpu_model_kind(strata_cluster_gpu_model(c));
}
uint64_t strata_cluster_gpu_memory(const strata_cluster_t *c) {
  return c->model.memory_bytes;
}
double strata_cluster_gpu_peak_flops(const strata_cluster_t *c) {
  return c->model.peak_flops;
}
double strata_cluster_gpu_peak_flops_at(const strata_cluster_t *c, int bits) {
  strata_perf_t p; /* the datasheet's, not the calibration's */
  strata_perf_of(&c->model, &p, NULL);
  if (bits == 4 && p.peak_fp4_flops > 0) return p.peak_fp4_flops;
  if (bits == 8 && p.peak_fp8_flops > 0) return p.peak_fp8_flops;
  return c->model.peak_flops;
}

double strata_cluster_fastest_bandwidth(const strata_cluster_t *c) {
  double best = 0;
  for (int i = 0; i < c->nlevels; i++)
    if (c->levels[i].link.bandwidth > best) best = c->levels[i].link.bandwidth;
  return best;
}

int strata_cluster_level_count(const strata_cluster_t *c) {
  return c->nlevels;
}

const strata_level_t *strata_cluster_level(const strata_cluster_t *c, int i) {
  return i >= 0 && i < c->nlevels ? &c->levels[i] : NULL;
}

int strata_cluster_leaf_size(const strata_cluster_t *c) {
  return c->leaf_size;
}
double strata_cluster_oversubscription(const strata_cluster_t *c) {
  return c->oversub;
}
const strata_node_topo_t *strata_cluster_node_topo(const strata_cluster_t *c) {
  return c->topo;
}
