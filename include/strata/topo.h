/*
 * topo.h - the cluster: node topology from hwloc, the cluster spec, the
 * hierarchy of levels with bandwidths, and what collectives cost.
 *
 * Bandwidths are bytes per second, unidirectional, per device; latencies
 * are seconds.  Costs follow the alpha-beta model per level (docs/
 * cost-model.md), hierarchical where a group spans levels.
 */
#ifndef STRATA_TOPO_H
#define STRATA_TOPO_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One link class: what a device can push to its peers on one level. */
typedef struct {
  double bandwidth; /* bytes/s */
  double latency;   /* s */
} strata_link_t;

typedef enum {
  STRATA_COLL_ALLREDUCE,
  STRATA_COLL_ALLGATHER,     /* bytes: the gathered (full) size */
  STRATA_COLL_REDUCESCATTER, /* bytes: the input (full) size */
  STRATA_COLL_ALLTOALL,      /* bytes: the full size each device holds */
  STRATA_COLL_P2P,           /* bytes: the message */
  STRATA_COLL_COUNT
} strata_coll_t;

const char *strata_coll_name(strata_coll_t c);

/* Time of a collective over n devices joined by one link class (ring
 * algorithms): all-reduce 2(n-1)/n*S/B + 2(n-1)a; all-gather,
 * reduce-scatter and all-to-all (n-1)/n*S/B + (n-1)a; p2p S/B + a.
 * n <= 1 costs 0. */
double strata_coll_time(strata_coll_t c, double bytes, int n,
                        const strata_link_t *link);

/*
 * A logical device mesh of one pipeline stage: 1-D or 2-D, each axis bound
 * to the link its groups communicate over.  Axis 0 is the outer (slower)
 * one for a 2-D mesh of nodes x GPUs.  A 1-D mesh has ndim 1, shape[1] = 1.
 */
#define STRATA_MESH_MAX_DIMS 2
typedef struct {
  int ndim;
  int shape[STRATA_MESH_MAX_DIMS];
  strata_link_t axis[STRATA_MESH_MAX_DIMS];
} strata_mesh_t;

/* The documented uniform default: NVLink-class 150 GB/s, 5 us per axis
 * (used when no cluster is given). */
void strata_mesh_default(strata_mesh_t *m, int d0, int d1);
int strata_mesh_devices(const strata_mesh_t *m);

#ifdef __cplusplus
}
#endif
#endif
