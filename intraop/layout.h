/*
 * layout.h - parallel dimensions of an operator and the placements of its
 * tensors under a strategy (internal to intraop/).
 *
 * Every op kind is described einsum-style: a set of parallel dimensions
 * (batch, sequence, output neurons, contracted inputs, heads, ...) and, for
 * each tensor slot, which tensor dim each parallel dim indexes.  A strategy
 * assigns each mesh axis one parallel dim (or none: replicated work).  The
 * placement of a tensor on an axis follows: Shard(d) if the axis's dim
 * indexes tensor dim d; Partial for an output the dim does not index (a
 * contraction: linear's k, embedding's vocabulary); Replicate otherwise.
 * This one rule yields the method's DP / Row / Column roles for a linear
 * layer, Megatron's layouts and sequence sharding, without a table per
 * strategy.
 *
 * One modifier per axis changes the placement of some slots on that axis
 * to Shard(sp_dim) where the rule would say otherwise: the
 * sequence-parallel linear (its input arrives sequence-sharded and is
 * gathered inside), ring attention (keys and values sharded along the
 * sequence like the queries, passed around the ring inside the op), and
 * the expert-parallel token dispatch and combine (tokens sharded on the
 * way in, experts on the way out, exchanged all-to-all inside the op).
 */
#ifndef STRATA_INTRAOP_LAYOUT_H
#define STRATA_INTRAOP_LAYOUT_H

#include "strata/intraop.h"

#define ST__MAX_PDIMS 8
#define ST__MAX_SLOTS (STRATA_MAX_OP_INPUTS + STRATA_MAX_OP_OUTPUTS)
#define ST__REP (-1)

typedef struct {
  int n_pdims;
  int64_t size[ST__MAX_PDIMS];
  unsigned char shardable[ST__MAX_PDIMS];
  const char *name[ST__MAX_PDIMS];
  int heavy;         /* must split its work on every mesh axis of size > 1 */
  int n_in, n_slots; /* slots: inputs then outputs */
  int tensor[ST__MAX_SLOTS];
  signed char map[ST__MAX_SLOTS][STRATA_MAX_DIMS]; /* tensor dim -> pdim */
  int seq_dim; /* linear: x's sequence dim for the SP variant, or -1 */
  int pdim_n;  /* linear: the output-neuron pdim, or -1 */
  /* The modifier (see above): the pdim it applies to (-1: none), the
   * slots it shards (bit per slot) and the tensor dim it shards them on. */
  int sp_pdim;
  unsigned sp_mask;
  int sp_dim;
  int grouped; /* its first input holds token copies grouped by expert */
} st__opdims_t;

/* A strategy: a parallel dim per mesh axis, and per axis whether the
 * modifier applies (sp: Megatron's sequence parallelism for a linear,
 * the ring for attention, the all-to-all for dispatch and combine). */
typedef struct {
  signed char axis[STRATA_MESH_MAX_DIMS];
  unsigned char sp[STRATA_MESH_MAX_DIMS];
} st__strat_t;

enum { ST__PL_R = 0, ST__PL_S = 1, ST__PL_P = 2 };
typedef struct {
  signed char kind[STRATA_MESH_MAX_DIMS];
  signed char dim[STRATA_MESH_MAX_DIMS];
} st__place_t;

int st__opdims(const strata_graph_t *g, const strata_op_t *op, st__opdims_t *d);

/* 1 if tensor t holds token copies grouped by expert ([E, C, ...]): what a
 * dispatch writes and what grouped GEMMs and elementwise ops make of it. */
int st__is_grouped(const strata_graph_t *g, int t);

/* All valid strategies of op on mesh into a strata_malloc'd array. */
int st__strategies_g(const strata_graph_t *g, const st__opdims_t *d,
                     const strata_mesh_t *m, st__strat_t **out, int *n);

/* Placement of slot under s. */
void st__placement(const st__opdims_t *d, const strata_mesh_t *m,
                   const st__strat_t *s, int slot, st__place_t *p);
/* Placement of the gradient that leaves input slot toward its producer. */
void st__grad_placement(const st__opdims_t *d, const strata_mesh_t *m,
                        const st__strat_t *s, int slot, st__place_t *p);
/* How many ways slot is split under p (product of sharding axes). */
int st__shards(const strata_mesh_t *m, const st__place_t *p);
/* Product of mesh axes over which the op's work is split. */
int st__work_split(const strata_mesh_t *m, const st__strat_t *s);
/* "row", "dp x col", ...; and "[S(0), R]" into buf. */
void st__strat_name(const st__opdims_t *d, const strata_op_t *op,
                    const strata_mesh_t *m, const st__strat_t *s, char *buf,
                    size_t size);
void st__place_name(const strata_mesh_t *m, const st__place_t *p, char *buf,
                    size_t size);

#endif
