/*
 * node.c - a node once read: GPU model matching, NVLink domains, the
 * per-GPU link bandwidth, and the accessors of strata_node_topo_t.
 *
 * Kept apart from hwloc_node.c so that everything derived from the raw
 * facts is plain C over plain data, testable without hwloc, and so that
 * template nodes of a cluster spec could reuse it.
 */
#include <stdio.h>
#include <string.h>

#include "topo/node.h"

int st__node_alloc(const char *source, int ngpus, int nnics,
                   strata_node_topo_t **out) {
  strata_node_topo_t *n = strata_calloc(1, sizeof *n);
  *out = NULL;
  if (!n) goto oom;
  n->ngpus = ngpus;
  n->nnics = nnics;
  n->source = strata_strdup(source);
  n->gpus = strata_calloc((size_t)(ngpus ? ngpus : 1), sizeof *n->gpus);
  n->nics = strata_calloc((size_t)(nnics ? nnics : 1), sizeof *n->nics);
  n->link = strata_calloc((size_t)(ngpus ? ngpus * ngpus : 1), sizeof *n->link);
  if (!n->source || !n->gpus || !n->nics || !n->link) goto oom;
  *out = n;
  return 0;
oom:
  strata_node_destroy(n);
  return strata_error(STRATA_ENOMEM, "out of memory reading %s", source);
}

void strata_node_destroy(strata_node_topo_t *n) {
  if (!n) return;
  strata_free(n->source);
  strata_free(n->gpus);
  strata_free(n->nics);
  strata_free(n->link);
  strata_free(n);
}

static double link_at(const strata_node_topo_t *n, int a, int b) {
  return n->link[a * n->ngpus + b];
}

/* Connected components of the GPUs over links > 0 (union by relabel). */
static void find_domains(strata_node_topo_t *n) {
  for (int i = 0; i < n->ngpus; i++)
    n->gpus[i].domain = i;
  for (int changed = 1; changed;) {
    changed = 0;
    for (int a = 0; a < n->ngpus; a++)
      for (int b = 0; b < n->ngpus; b++) {
        int da = n->gpus[a].domain, db = n->gpus[b].domain;
        if (a != b && link_at(n, a, b) > 0 && db < da) {
          n->gpus[a].domain = db;
          changed = 1;
        }
      }
  }
}

/* Through switches each pair value is already the GPU's whole bandwidth;
 * over direct links a GPU drives all its links at once. */
static double gpu_link_total(const strata_node_topo_t *n, int a) {
  double sum = 0, max = 0;
  for (int b = 0; b < n->ngpus; b++) {
    double v = b == a ? 0 : link_at(n, a, b);
    sum += v;
    if (v > max) max = v;
  }
  return n->has_switch ? max : sum;
}

void st__node_finish(strata_node_topo_t *n) {
  int any = 0;
  for (int i = 0; i < n->ngpus * n->ngpus; i++)
    any |= n->link[i] > 0;
  if (!any) n->link_kind[0] = '\0';
  for (int i = 0; i < n->ngpus; i++) {
    strata_gpu_info_t *g = &n->gpus[i];
    g->table = strata_gpu_model_match(g->model);
    if (!g->table) g->table = st__gpu_model_by_pci(g->vendor_id, g->device_id);
    if (!g->memory_bytes && g->table) g->memory_bytes = g->table->memory_bytes;
    g->nvlink_bandwidth = gpu_link_total(n, i);
  }
  find_domains(n);
}

int st__node_domain_size(const strata_node_topo_t *n) {
  int best = n->ngpus;
  for (int i = 0; i < n->ngpus; i++) {
    int size = 0;
    for (int j = 0; j < n->ngpus; j++)
      size += n->gpus[j].domain == n->gpus[i].domain;
    if (size < best) best = size;
  }
  return best;
}

double st__node_domain_bandwidth(const strata_node_topo_t *n) {
  double bw = 0;
  for (int i = 0; i < n->ngpus; i++) {
    double v = n->gpus[i].nvlink_bandwidth;
    const strata_gpu_model_t *m = n->gpus[i].table;
    if (m && m->nvlink_bandwidth > 0 && v > m->nvlink_bandwidth)
      v = m->nvlink_bandwidth;
    if (i == 0 || v < bw) bw = v;
  }
  return bw;
}

double st__node_pcie_bandwidth(const strata_node_topo_t *n) {
  double bw = 0;
  for (int i = 0; i < n->ngpus; i++) {
    double v = n->gpus[i].pcie_bandwidth;
    const strata_gpu_model_t *m = n->gpus[i].table;
    if (v <= 0 && m) v = m->pcie_bandwidth;
    if (v > 0 && (bw == 0 || v < bw)) bw = v;
  }
  return bw;
}

const char *strata_node_source(const strata_node_topo_t *n) {
  return n->source;
}

int strata_node_gpu_count(const strata_node_topo_t *n) {
  return n->ngpus;
}

const strata_gpu_info_t *strata_node_gpu(const strata_node_topo_t *n, int i) {
  return i >= 0 && i < n->ngpus ? &n->gpus[i] : NULL;
}

int strata_node_nic_count(const strata_node_topo_t *n) {
  return n->nnics;
}

const strata_nic_info_t *strata_node_nic(const strata_node_topo_t *n, int i) {
  return i >= 0 && i < n->nnics ? &n->nics[i] : NULL;
}

double strata_node_link(const strata_node_topo_t *n, int a, int b) {
  if (a < 0 || b < 0 || a >= n->ngpus || b >= n->ngpus || a == b) return 0;
  return link_at(n, a, b);
}

const char *strata_node_link_kind(const strata_node_topo_t *n) {
  return n->link_kind;
}

int strata_node_has_switch(const strata_node_topo_t *n) {
  return n->has_switch;
}

const char *strata_nearness_name(strata_nearness_t n) {
  static const char *names[] = {"same PCIe switch", "same root complex",
                                "same NUMA node",   "same socket",
                                "other socket",     "none"};
  return (unsigned)n <= STRATA_NEAR_NONE ? names[n] : "?";
}
