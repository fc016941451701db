/*
 * collective.c - alpha-beta costs of collectives over one link class.
 *
 * Ring algorithms (Thakur, Rabenseifner and Gropp 2005; NCCL's documented
 * bus-bandwidth factors): an all-reduce moves 2(n-1)/n of the data through
 * each device in 2(n-1) steps; all-gather, reduce-scatter and all-to-all
 * (n-1)/n in n-1 steps.  Hierarchical costs over several levels are built
 * from these (topo/hierarchy.c).
 */
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

static double step_latency(double m, const strata_link_t *link) {
  return link->latency + NCCL_CHUNK / link->bandwidth * (m / (m + NCCL_CHUNK));
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
