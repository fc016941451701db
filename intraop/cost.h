/*
 * cost.h - memory and communication of one operator under one strategy,
 * and of the resharding on one edge (internal to intraop/).
 *
 * Units: bytes per device and seconds per training step (all of the
 * step's micro-batches), for one instance of the op.
 */
#ifndef STRATA_INTRAOP_COST_H
#define STRATA_INTRAOP_COST_H

#include "intraop/layout.h"

typedef struct {
  const strata_graph_t *g;
  const strata_stage_opts_t *o;
  const strata_mesh_t *m;
  int devices;
  /* the most loaded rank's token copies over the mean: the imbalance
   * factor when routing is dropless, 1 when a capacity pads every expert */
  double moe_factor;
} st__cost_ctx_t;

typedef struct {
  double weights, grads, optimizer;    /* of the params this op owns */
  double expert_w, expert_g, expert_o; /* of which experts' */
  double act;                          /* saved for backward, one micro-batch */
  double ckpt;      /* full recompute: the layer input kept, one micro-batch */
  double transient; /* working buffers while the op runs */
  double fwd, bwd;  /* compute seconds of one micro-batch (the backward
                       with the forward again when recomputed) */
  double gemm_fwd, gemm_bwd; /* of which matrix multiplications */
  double comm_fwd, comm_bwd; /* own collectives of one micro-batch */
  double cp_fwd, cp_bwd;     /* of which ring attention's exposed exchange */
  double host_fwd, host_bwd; /* the device waiting on the host, one
                                micro-batch (not hiding collectives) */
  double comm;               /* seconds per step: own collectives of every
                                micro-batch and the gradient synchronisation */
  double sync;               /* the gradient-synchronisation part of comm */
  double compute;            /* seconds per step */
  double unique;     /* parameter-state bytes the stage must hold at least */
  double unique_act; /* saved bytes unsharded, one micro-batch */
} st__op_cost_t;

/* owns_param: bit i set if input slot i is a parameter first used here;
 * skip_saved: bit i set if slot i's storage is saved by an earlier op. */
void st__op_cost(const st__cost_ctx_t *c, const strata_op_t *op,
                 const st__opdims_t *d, const st__strat_t *s,
                 unsigned owns_param, unsigned skip_saved, int is_ckpt,
                 int in_recompute, st__op_cost_t *out);

/* Seconds per step to move tensor t from the producer's placement of its
 * output slot to the consumer's input slot, forward and backward. */
double st__edge_cost(const st__cost_ctx_t *c, int tensor,
                     const st__opdims_t *du, const st__strat_t *su, int uslot,
                     const st__opdims_t *dw, const st__strat_t *sw, int wslot);
/* The same for one micro-batch, forward and backward apart. */
void st__edge_times(const st__cost_ctx_t *c, int tensor, const st__opdims_t *du,
                    const st__strat_t *su, int uslot, const st__opdims_t *dw,
                    const st__strat_t *sw, int wslot, double *fwd, double *bwd);

/* Seconds of Transformer Engine's cast of `elems` 16-bit elements into a
 * recipe's row- and column-wise copies (and current scaling's amax pass
 * before it): (2 + 2 operand) bytes an element in one kernel, the amax's
 * read in another. */
double st__lowp_cast_time(const strata_perf_t *pf, const strata_lowp_t *r,
                          double elems);

/* Reshard one tensor of `bytes` between two placements (seconds). */
double st__reshard_time(const strata_mesh_t *m, double bytes,
                        const st__place_t *from, const st__place_t *to);

#endif
