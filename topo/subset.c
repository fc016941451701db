/*
 * subset.c - a cluster of some of another's nodes: n usable nodes of one
 * node group, from its usable node `first` on, as a homogeneous cluster
 * of its own (strata fleet plans each job on the nodes it is given).
 *
 * The subset keeps the whole group's node names and places: the nodes it
 * leaves out stay in the spec's order as dropped nodes ("another job's"),
 * so a node's leaf switch is the one it has in the whole cluster and the
 * levels (a leaf, the spine when its nodes span leaves) are derived from
 * its own nodes, as the builder derives them for a spec (cluster.c,
 * make_levels).  Links and performance are recomputed from the nominal
 * figures and the group's calibration (st__apply_perf), so the subset of
 * every node of a one-group cluster costs what the cluster does.
 */
#include <stdio.h>
#include <string.h>

#include "topo/cluster.h"

#define OTHER_JOB "another job's (strata fleet)"

static char *dup_or_null(const char *s, int *oom) {
  char *d = s ? strata_strdup(s) : NULL;
  if (s && !d) *oom = 1;
  return d;
}

/* Names, reasons and usable nodes: a copy of g's, the nodes outside
 * [first, first + n) of its usable ones dropped as another job's. */
static int copy_nodes(strata_cluster_t *s, const strata_cluster_t *g, int first,
                      int n) {
  int oom = 0, t = g->total_nodes;
  s->all_names = strata_calloc((size_t)t, sizeof *s->all_names);
  s->dropped = strata_calloc((size_t)t, sizeof *s->dropped);
  s->usable = strata_malloc((size_t)n * sizeof *s->usable);
  if (!s->all_names || !s->dropped || !s->usable) oom = 1;
  for (int i = 0; i < t && !oom; i++) {
    s->all_names[i] = dup_or_null(g->all_names[i], &oom);
    s->dropped[i] = dup_or_null(g->dropped[i], &oom);
  }
  for (int u = 0; u < g->nodes && !oom; u++) {
    int k = g->usable[u];
    if (u >= first && u < first + n)
      s->usable[u - first] = k;
    else if (!(s->dropped[k] = strata_strdup(OTHER_JOB)))
      oom = 1;
  }
  s->nodes = n;
  return oom ? strata_error(STRATA_ENOMEM, "out of memory") : 0;
}

/* The levels of its own nodes: g's within a node, a leaf when it has more
 * than one node, the spine when they span leaves. */
static void derive_levels(strata_cluster_t *s, const strata_cluster_t *g) {
  int first_leaf = s->usable[0] / s->leaf_size;
  int last_leaf = s->usable[s->nodes - 1] / s->leaf_size;
  s->nlevels = 0;
  for (int i = 0; i < g->nlevels; i++)
    if (g->levels[i].kind == STRATA_LEVEL_NVLINK ||
        g->levels[i].kind == STRATA_LEVEL_PCIE)
      s->levels[s->nlevels++] = g->levels[i];
  if (s->nodes > 1) {
    strata_level_t *l = &s->levels[s->nlevels++];
    int per_leaf = s->leaf_size < s->nodes ? s->leaf_size : s->nodes;
    memset(l, 0, sizeof *l);
    l->kind = STRATA_LEVEL_LEAF;
    snprintf(l->name, sizeof l->name, "leaf");
    l->span = per_leaf * s->gpn;
    l->link = s->leaf;
    l->nominal_bandwidth = s->nominal[STRATA_LEVEL_LEAF];
  }
  if (first_leaf != last_leaf) {
    strata_level_t *l = &s->levels[s->nlevels++];
    memset(l, 0, sizeof *l);
    l->kind = STRATA_LEVEL_SPINE;
    snprintf(l->name, sizeof l->name, "spine");
    l->span = s->nodes * s->gpn;
    l->link = s->spine;
    l->nominal_bandwidth = s->nominal[STRATA_LEVEL_SPINE];
  }
}

int strata_cluster_subset(const strata_cluster_t *c, int group, int first,
                          int n, const char *name, strata_cluster_t **out) {
  const strata_cluster_t *g = strata_cluster_group(c, group);
  strata_cluster_t *s = NULL;
  int rc;
  *out = NULL;
  if (!g || n < 1 || first < 0 || first + n > g->nodes)
    return strata_error(STRATA_EINVAL,
                        "%s: no %d nodes from usable node %d of node group "
                        "%d",
                        c->name, n, first, group);
  if (!(s = strata_calloc(1, sizeof *s)))
    return strata_error(STRATA_ENOMEM, "out of memory");
  *s = *g; /* the figures; what it owns is copied below */
  s->all_names = s->dropped = NULL;
  s->usable = s->domain = NULL;
  s->topo = NULL; /* read by `topo show` only, never by a cost */
  s->ngroups = 0;
  s->group = NULL;
  s->group_node0 = NULL;
  s->name = strata_strdup(name ? name : g->name);
  s->domain = strata_malloc((size_t)g->gpn * sizeof *s->domain);
  if (!s->name || !s->domain) {
    rc = strata_error(STRATA_ENOMEM, "out of memory");
    goto out;
  }
  memcpy(s->domain, g->domain, (size_t)g->gpn * sizeof *s->domain);
  s->model.name = s->model_name;
  if ((rc = copy_nodes(s, g, first, n))) goto out;
  derive_levels(s, g);
  st__apply_perf(s);
out:
  if (rc)
    strata_cluster_destroy(s);
  else
    *out = s;
  return rc;
}
