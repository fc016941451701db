/*
 * cluster_cost.c - what a collective costs over a group of a cluster's
 * GPUs, and the mesh of a stage submesh.
 *
 * A group is reduced to (n nodes, g GPUs per node, the intra-node link,
 * the inter-node link).  Within one node the intra link is the NVLink
 * domain's when all its GPUs are in one domain, else PCIe.  Across nodes
 * each GPU uses its own share of the NICs; when the nodes sit under
 * different leaf switches the spine link (NIC / oversubscription, one more
 * switch latency) applies.  Over n x g, as NCCL runs them
 * (strata_coll_time_levels, docs/cost-model.md "Collectives across
 * nodes"):
 *
 *   all-reduce     one flat ring of n g ranks, or NCCL's tree, the faster
 *   all-gather,
 *   reduce-scatter one flat ring
 *   all-to-all     A2A(g, S/n, intra) + A2A(n, S, inter)   (sequential)
 *   p2p            S/B + a over the inter link if it leaves the node
 *
 * and over one level the ring of strata_coll_time().
 */
#include <stdlib.h>
#include <string.h>

#include "topo/cluster.h"

typedef struct {
  int n, g;
  const strata_link_t *intra, *inter;
} group_t;

static double hier(strata_coll_t c, double s, const group_t *gr) {
  int n = gr->n, g = gr->g;
  const strata_link_t *in = gr->intra, *out = gr->inter;
  if (n * g <= 1) return 0.0;
  if (c == STRATA_COLL_P2P) return strata_coll_time(c, s, 2, n > 1 ? out : in);
  if (c == STRATA_COLL_ALLTOALL) /* a level of one rank costs 0 */
    return strata_coll_time(c, s / n, g, in) + strata_coll_time(c, s, n, out);
  int size[2] = {g, n};
  strata_link_t link[2] = {*in, *out};
  return strata_coll_time_levels(c, s, 2, size, link);
}

static int leaf_of(const strata_cluster_t *c, int node) {
  return c->usable[node] / c->leaf_size;
}

static const strata_link_t *intra_link(const strata_cluster_t *c, int one) {
  return c->has_nvlink && one ? &c->nvlink : &c->pcie;
}

static const strata_link_t *inter_link(const strata_cluster_t *c, int spans) {
  return spans ? &c->spine : &c->leaf;
}

/* 1 if local GPUs 0..g-1 share one NVLink domain. */
static int first_in_domain(const strata_cluster_t *c, int g) {
  for (int i = 1; i < g; i++)
    if (c->domain[i] != c->domain[0]) return 0;
  return 1;
}

static int check_shape(const strata_cluster_t *c, int nodes, int g) {
  if (nodes < 1 || nodes > c->nodes || g < 1 || g > c->gpn)
    return strata_error(STRATA_EINVAL,
                        "a group of %d node(s) x %d GPU(s) does not fit the "
                        "cluster's %d usable nodes x %d GPUs",
                        nodes, g, c->nodes, c->gpn);
  return 0;
}

static int check_coll(strata_coll_t coll, double bytes) {
  if ((unsigned)coll >= STRATA_COLL_COUNT || !(bytes >= 0))
    return strata_error(STRATA_EINVAL, "bad collective (%d) or size (%g)",
                        (int)coll, bytes);
  return 0;
}

int strata_cluster_coll_time(const strata_cluster_t *c, strata_coll_t coll,
                             double bytes, int nodes, int g, double *t) {
  int rc;
  group_t gr;
  *t = 0;
  if ((rc = check_coll(coll, bytes)) || (rc = check_shape(c, nodes, g)))
    return rc;
  gr.n = nodes;
  gr.g = g;
  gr.intra = intra_link(c, first_in_domain(c, g));
  gr.inter = inter_link(c, leaf_of(c, 0) != leaf_of(c, nodes - 1));
  *t = hier(coll, bytes, &gr);
  return 0;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return x < y ? -1 : x > y;
}

/* Sorted ranks -> nodes, GPUs per node (the largest count), whether each
 * node's GPUs share a domain, whether the nodes span leaves. */
static void describe(const strata_cluster_t *c, const int *r, int nr,
                     group_t *gr) {
  int one = 1, lo = -1, hi = -1;
  gr->n = gr->g = 0;
  for (int i = 0; i < nr;) {
    int node = r[i] / c->gpn, d = c->domain[r[i] % c->gpn], k = 0;
    for (; i < nr && r[i] / c->gpn == node; i++, k++)
      one &= c->domain[r[i] % c->gpn] == d;
    gr->n++;
    if (k > gr->g) gr->g = k;
    if (lo < 0 || leaf_of(c, node) < lo) lo = leaf_of(c, node);
    if (leaf_of(c, node) > hi) hi = leaf_of(c, node);
  }
  gr->intra = intra_link(c, one);
  gr->inter = inter_link(c, lo != hi);
}

int strata_cluster_coll_time_ranks(const strata_cluster_t *c,
                                   strata_coll_t coll, double bytes,
                                   const int *ranks, int nranks, double *t) {
  int *r = NULL, rc;
  group_t gr;
  *t = 0;
  if ((rc = check_coll(coll, bytes))) return rc;
  if (nranks < 1 || !ranks)
    return strata_error(STRATA_EINVAL, "an empty group of ranks");
  if (!(r = strata_malloc((size_t)nranks * sizeof *r)))
    return strata_error(STRATA_ENOMEM, "out of memory");
  memcpy(r, ranks, (size_t)nranks * sizeof *r);
  qsort(r, (size_t)nranks, sizeof *r, cmp_int);
  for (int i = 0; i < nranks && !rc; i++)
    if (r[i] < 0 || r[i] >= c->nodes * c->gpn || (i && r[i] == r[i - 1]))
      rc = strata_error(STRATA_EINVAL,
                        "rank %d is %s (the cluster has ranks 0 to %d)", r[i],
                        i && r[i] == r[i - 1] ? "listed twice" : "out of range",
                        c->nodes * c->gpn - 1);
  if (!rc) {
    describe(c, r, nranks, &gr);
    *t = hier(coll, bytes, &gr);
  }
  strata_free(r);
  return rc;
}

int strata_cluster_stage_mesh(const strata_cluster_t *c, int nodes, int g,
                              strata_mesh_t *m) {
  int rc = check_shape(c, nodes, g);
  const strata_link_t *in, *out;
  if (rc) return rc;
  in = intra_link(c, first_in_domain(c, g));
  out = inter_link(c, leaf_of(c, 0) != leaf_of(c, nodes - 1));
  memset(m, 0, sizeof *m);
  if (nodes == 1 || g == 1) {
    m->ndim = 1;
    m->shape[0] = nodes == 1 ? g : nodes;
    m->shape[1] = 1;
    m->axis[0] = m->axis[1] = nodes == 1 ? *in : *out;
    return 0;
  }
  m->ndim = 2;
  m->shape[0] = nodes;
  m->shape[1] = g;
  m->axis[0] = *out;
  m->axis[1] = *in;
  return 0;
}
