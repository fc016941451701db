/*
 * collective.c - alpha-beta costs of collectives over one link class.
 *
 * Ring algorithms (Thakur, Rabenseifner and Gropp 2005; NCCL's documented
 * bus-bandwidth factors): an all-reduce moves 2(n-1)/n of the data through
 * each device in 2(n-1) steps; all-gather, reduce-scatter and all-to-all
 * (n-1)/n in n-1 steps.  Over several levels (nodes x GPUs, a stage's
 * mesh axes and the data parallelism beyond) as NCCL runs them: one flat
 * ring, or an all-reduce's tree (strata_coll_time_levels).
 */
#include <math.h>

#include "strata/topo.h"

const char *strata_coll_name(strata_coll_t c) {
  static const char *names[] = {"all-reduce", "all-gather", "reduce-scatter",
                                "all-to-all", "p2p"};
  return (unsigned)c < STRATA_COLL_COUNT ? names[c] : "?";
}

/* Per step of a ring, beyond the link's latency: the first chunk of
 * NCCL's pipeline (the Simple protocol's 4 MiB buffer, NCCL_BUFFSIZE)
 * crosses the link before the next step can start, for messages as large
 * as a chunk; smaller messages pay their share.  Fitted to nccl-tests
 * all-reduce on 8 A100 (docs/cost-model.md): 5 % RMS from 1 KB to 8 GB. */
#define NCCL_CHUNK (4.0 * 1048576.0)

static double fill_step(double m, double lat, double bw) {
  return lat + NCCL_CHUNK / bw * (m / (m + NCCL_CHUNK));
}

static double step_latency(double m, const strata_link_t *link) {
  return fill_step(m, link->latency, link->bandwidth);
}

double strata_coll_time(strata_coll_t c, double bytes, int n,
                        const strata_link_t *link) {
  if (c == STRATA_COLL_P2P)
    return bytes > 0 ? bytes / link->bandwidth + step_latency(bytes, link)
                     : 0.0;
  if (n <= 1 || bytes <= 0) return 0.0;
  double f = (double)(n - 1) / n, m = bytes / n;
  switch (c) {
  case STRATA_COLL_ALLREDUCE:
    return 2.0 * f * bytes / link->bandwidth +
           2.0 * (n - 1) * step_latency(m, link);
  case STRATA_COLL_ALLGATHER:
  case STRATA_COLL_REDUCESCATTER:
  case STRATA_COLL_ALLTOALL:
    return f * bytes / link->bandwidth + (n - 1) * step_latency(m, link);
  default:
    return 0.0;
  }
}

/* The levels that have more than one rank, inner first. */
static int used_levels(int nlev, const int *size, const strata_link_t *link,
                       int *sz, strata_link_t *lk) {
  int n = 0;
  for (int i = 0; i < nlev && n < 8; i++)
    if (size[i] > 1) sz[n] = size[i], lk[n++] = link[i];
  return n;
}

/* A ring over several levels, as NCCL runs one across nodes
 * (src/graph/tuning.cc): one pipelined flat ring of N = prod(size) ranks
 * whose channels enter and leave each group of a level through the links
 * of that level, so its bus bandwidth is the slowest level's link times
 * the GPUs inside each of its groups (each GPU drives its own share of the
 * outer link); of its k (N-1) steps those that cross a level pay that
 * level's step latency as in strata_coll_time (k (size - 1) steps per
 * group outside it). */
static double ring_levels(strata_coll_t c, double bytes, int nlev,
                          const int *size, const strata_link_t *link) {
  double N = 1, bw = 0, lat = 0;
  double k = c == STRATA_COLL_ALLREDUCE ? 2.0 : 1.0;
  for (int i = 0; i < nlev; i++) { /* N: the ranks inside level i */
    double b = link[i].bandwidth * N;
    if (i == 0 || b < bw) bw = b;
    N *= size[i];
  }
  double m = bytes / N, outer = N;
  for (int i = 0; i < nlev; i++) {
    outer /= size[i];
    lat += k * (size[i] - 1) * outer * step_latency(m, &link[i]);
  }
  return k * (N - 1) / N * bytes / bw + lat;
}

/* NCCL's tree all-reduce (src/graph/tuning.cc; Sanders et al. 2009's
 * double binary trees, NCCL 2.4): a pipelined chain through the GPUs of
 * each node and two binary trees across the n nodes.  Its algorithm
 * bandwidth is half its bus bandwidth, which is the slower of the inner
 * levels' (NVLink) and the node's NICs (twice those on two nodes, where
 * NCCL's model takes the intra-node bandwidth), times the 0.92 NCCL's
 * model applies to a tree all-reduce;
 * its latency 2 ((g - 1) intra hops + log2(n) inter hops). */
#define TREE_EFF 0.92 /* NCCL's tree all-reduce bus bandwidth refinement */

static double tree_levels(double bytes, int nlev, const int *size,
                          const strata_link_t *link) {
  double g = 1, bw = 0, lat = 0;
  int n = size[nlev - 1];
  for (int i = 0; i < nlev - 1; i++) {
    double b = link[i].bandwidth * g;
    if (i == 0 || b < bw) bw = b;
    g *= size[i];
  }
  /* on two nodes each sends and receives S through its NICs while the
   * bus counts 2 S: twice the NICs' rate */
  double net = link[nlev - 1].bandwidth * g * (n > 2 ? 1 : 2);
  if (net < bw) bw = net;
  bw *= TREE_EFF;
  /* each hop forwards the whole message: its first chunk at bw */
  double depth = ceil(log2((double)n));
  for (int i = 0; i < nlev - 1; i++)
    lat += (size[i] - 1) * fill_step(bytes, link[i].latency, bw);
  lat += depth * fill_step(bytes, link[nlev - 1].latency, bw);
  return 2.0 * bytes / bw + 2.0 * lat;
}

double strata_coll_time_levels(strata_coll_t c, double bytes, int nlev,
                               const int *size, const strata_link_t *link) {
  int sz[8];
  strata_link_t lk[8];
  int n = used_levels(nlev, size, link, sz, lk);
  if (c != STRATA_COLL_ALLREDUCE && c != STRATA_COLL_ALLGATHER &&
      c != STRATA_COLL_REDUCESCATTER)
    return 0.0;
  if (n == 0 || bytes <= 0) return 0.0;
  if (n == 1) return strata_coll_time(c, bytes, sz[0], &lk[0]);
  double t = ring_levels(c, bytes, n, sz, lk);
  if (c == STRATA_COLL_ALLREDUCE) t = fmin(t, tree_levels(bytes, n, sz, lk));
  return t;
}

void strata_mesh_default(strata_mesh_t *m, int d0, int d1) {
  m->ndim = d1 > 1 ? 2 : 1;
  m->shape[0] = d0;
  m->shape[1] = d1 > 1 ? d1 : 1;
  for (int i = 0; i < STRATA_MESH_MAX_DIMS; i++) {
    m->axis[i].bandwidth = 150e9;
    m->axis[i].latency = 5e-6;
  }
}

int strata_mesh_devices(const strata_mesh_t *m) {
  int n = 1;
  for (int i = 0; i < m->ndim; i++)
    n *= m->shape[i];
  return n;
}
