/*
 * stage.h - the auxiliary graph of one stage (internal to intraop/): which
 * operator instances it holds, their candidate strategies and costs, the
 * edges between them.
 *
 * Repeated layers.  In homogeneous mode (the default) each block's
 * template is one set of nodes standing for its k instances in the stage:
 * costs and memory scale by k, edges inside a layer by k, the edges from a
 * layer's output to the next layer's input by k - 1.  This gives the best
 * homogeneous solution.  Otherwise every instance is its own set of nodes
 * (the full ILP).
 */
#ifndef STRATA_INTRAOP_STAGE_H
#define STRATA_INTRAOP_STAGE_H

#include "intraop/cost.h"

typedef struct {
  int op; /* index in g->ops */
  st__opdims_t dims;
  int n_strat;
  st__strat_t *strat;
  st__op_cost_t *cost; /* [n_strat], one instance */
  unsigned owns;       /* input slots holding params first used here */
  int is_ckpt, in_recompute;
  int fixed; /* megatron/dp: the one strategy allowed, or -1 */
} st__opinfo_t;

typedef struct {
  int info;    /* index into opinfo */
  double mult; /* instances this node stands for */
} st__node_t;

typedef struct {
  int u, v;         /* nodes */
  int uslot, vslot; /* output slot of u, input slot of v */
  int tensor;
  double mult;
} st__edge_t;

typedef struct {
  const strata_graph_t *g;
  strata_stage_opts_t o; /* resolved options */
  st__cost_ctx_t ctx;
  int n_info, n_nodes, n_edges;
  st__opinfo_t *info;
  st__node_t *nodes;
  st__edge_t *edges;
  int cap_nodes, cap_edges;
  int layers; /* layers in the stage */
} st__stage_t;

int st__stage_build(const strata_graph_t *g, const strata_stage_opts_t *o,
                    st__stage_t *st);
void st__stage_free(st__stage_t *st);
/* modules.c: every op's modules (m[n_ops]), and whether the activation t
 * is not saved when the modules in `active` are recomputed (made inside
 * one, and not kept at its edge), from those. */
void st__graph_modules(const strata_graph_t *g, unsigned *m);
int st__module_drops(const strata_graph_t *g, const unsigned *mods_of, int t,
                     unsigned active);
/* Fixed layouts for the megatron and dp objectives. */
int st__fixed_layouts(st__stage_t *st);
/* Memory of one strategy as the ILP's memory row sees it (per device). */
double st__node_mem(const st__stage_t *st, int node, int s);
/* Bytes the node must hold at least (no duplicates), per device x N. */
double st__node_unique(const st__stage_t *st, int node);
/* Multipliers of one instance's saved activations and checkpoint. */
void st__node_mults(const st__stage_t *st, int node, double *act_m,
                    double *ckpt_m);

#endif
