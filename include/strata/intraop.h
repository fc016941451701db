/*
 * intraop.h - one pipeline stage: choose every operator's intra-operator
 * strategy with the integer linear program of DESIGN.md ("intraop/"):
 * minimise memory redundancy + alpha * communication under a per-device
 * memory limit.
 *
 * A stage is a range of layers of a model on a logical device mesh (1-D or
 * 2-D, each axis bound to a link).  Memory is accounted exactly (bytes per
 * device of every tensor under its layout); communication in seconds from
 * the alpha-beta model of topo/, converted to bytes-equivalent on the
 * fastest link so that alpha weighs bytes against bytes.
 */
#ifndef STRATA_INTRAOP_H
#define STRATA_INTRAOP_H

#include "strata/core.h"
#include "strata/stack.h"
#include "strata/topo.h"
#include "strata/traces.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  STRATA_OBJ_MIN_MEM,  /* redundancy + alpha * comm (the method) */
  STRATA_OBJ_MIN_COMM, /* communication only, memory a constraint (Alpa) */
  STRATA_OBJ_MEGATRON, /* Megatron-LM's hand-written layout, evaluated */
  STRATA_OBJ_DP        /* pure data parallelism, evaluated */
} strata_objective_t;

typedef enum {
  STRATA_RECOMPUTE_AUTO = STRATA_AUTO, /* planning: choose among the three */
  STRATA_RECOMPUTE_NONE,
  STRATA_RECOMPUTE_SELECTIVE, /* Korthikanti et al.: the attention core */
  STRATA_RECOMPUTE_FULL       /* keep each layer's input only */
} strata_recompute_t;

typedef enum {
  STRATA_RECIPE_ZERO,    /* 2 + 2 + 12 bytes per parameter */
  STRATA_RECIPE_MEGATRON /* 2 + 4 + 12 bytes per parameter */
} strata_recipe_t;

typedef enum {
  STRATA_STAGE_OPTIMAL,
  STRATA_STAGE_FEASIBLE,   /* time limit reached; best found, see gap */
  STRATA_STAGE_INFEASIBLE, /* nothing fits the memory budget */
  STRATA_STAGE_NO_SOLUTION /* time limit reached before any solution */
} strata_stage_status_t;

typedef struct {
  strata_mesh_t mesh;
  int layer_begin, layer_end; /* layers [begin, end); -1, -1: all */
  int with_prologue;          /* -1: when layer_begin == 0 */
  int with_epilogue;          /* -1: when layer_end == layers */
  double alpha;               /* weight of communication (default 1) */
  double memory_budget;       /* bytes per device; 0: no limit */
  strata_objective_t objective;
  strata_recipe_t recipe;
  int zero_stage; /* 0..3 */
  strata_recompute_t recompute;
  unsigned recompute_modules; /* selective: Megatron-LM's modules
                                 (STRATA_RCM_*); 0: the attention scores */
  int sequence_parallel;      /* megatron objective: 1 on (with tp > 1);
                                 0 or -1 off, as Megatron-LM's default */
  int megatron_tp_axes;       /* megatron objective: mesh axes used for
                                 tensor parallelism from the inner one
                                 (default 1 on 2-D meshes, all on 1-D) */
  int in_flight;              /* micro-batches whose activations are live */
  int micro_batches;          /* per step: gradient sync is amortised */
  int outer_dp;               /* replicas of this stage across the cluster */
  strata_link_t outer_link;   /* link of the outer data parallelism */
  strata_perf_t perf;         /* the device's kernel rates (topo/perf.c);
                                 default: the H100-SXM's */
  int fp8;                    /* linear layers' GEMMs in a narrow format:
                                 0 none, else its STRATA_LOWP_* recipe */
  int tp_comm_overlap;        /* tensor-parallel collectives overlap the
                                 GEMMs next to them (Megatron-LM's
                                 --tp-comm-overlap) */
  int ep_comm_overlap;        /* the experts' all-to-all overlaps another
                                 micro-batch's compute (Megatron-LM's
                                 --overlap-moe-expert-parallel-comm) */
  double fastest_bandwidth;   /* bytes/s; 0: the fastest mesh axis */
  int homogeneous;            /* 1: solve one layer per block (default) */
  int reduce;                 /* presolve reductions (default 1) */
  double time_limit;          /* seconds (default 60) */
  double mip_gap;             /* relative (default 1e-6) */
  /* Context parallelism (megatron objective): with cp > 1 mesh axis 0, of
   * size cp, splits the sequence of every op; attention passes keys and
   * values around a ring (cp_comm STRATA_CP_P2P) or all-gathers them
   * (STRATA_CP_ALLGATHER) -- Megatron-Core's --cp-comm-type. */
  int cp;
  int cp_comm;
  /* Expert parallelism: the experts of each MoE layer are split over the
   * mesh axes in ep_axes (megatron objective: bit a for axis a) and over
   * ep_outer data-parallel replicas of the stage beyond them, whose
   * all-to-all of S bytes a device holds takes ep_link.latency +
   * S / ep_link.bandwidth (the group's cost as an affine model, which the
   * planner fits to the cluster's hierarchy); ep_outer divides outer_dp, and an
   * expert's parameters have outer_dp / ep_outer replicas (Megatron-Core's
   * expert data parallelism).  moe_imbalance (>= 1) is the most loaded
   * rank's share of the token copies over the mean, for dropless routing
   * (docs/cost-model.md). */
  int ep_outer;
  unsigned ep_axes;
  strata_link_t ep_link;
  double moe_imbalance;
  /* Seconds an eager MoE layer's host-bound gaps add to a micro-batch,
   * forward and backward (perf.moe_host_seconds where no CUDA graph
   * captures the layer; default 0: none). */
  double moe_host;
  /* The fused attention kernel (strata_attn_kernel_t, include/strata/
   * stack.h; default 0: Transformer Engine's, the GPU table's curve). */
  int attn_kernel;
} strata_stage_opts_t;

#define STRATA_CP_P2P 0
#define STRATA_CP_ALLGATHER 1

void strata_stage_opts_init(strata_stage_opts_t *o);
const char *strata_objective_name(strata_objective_t o);
int strata_objective_parse(const char *s, strata_objective_t *out);
/* Megatron-LM's recompute modules (--recompute-modules, selective
 * recompute; intraop/modules.c says which ops each holds). */
#define STRATA_RCM_CORE_ATTN 1u
#define STRATA_RCM_LAYERNORM 2u
#define STRATA_RCM_MLP 4u
#define STRATA_RCM_MOE 8u
#define STRATA_RCM_MOE_ACT 16u
#define STRATA_RCM_SHARED_EXPERTS 32u
#define STRATA_RCM_MLA_UP_PROJ 64u
#define STRATA_RCM_ALL 127u
/* "core_attn,moe_act" (commas or spaces) into a mask; STRATA_EINVAL
 * naming an unknown one. */
int strata_recompute_modules_parse(const char *list, unsigned *out);
/* The mask's names joined by sep; -1 when they do not fit. */
int strata_recompute_modules_format(unsigned m, const char *sep, char *buf,
                                    size_t size);
/* The modules op belongs to (0: none; several: the shared experts are in
 * moe too, the experts' activation in moe and moe_act). */
unsigned strata_op_modules(const strata_graph_t *g, int op);
/* Transformer Engine's narrow-precision recipes for the layers' GEMMs
 * (Megatron-LM's --fp8-recipe, and --fp4-format e2m1 --fp4-recipe nvfp4):
 * the value a plan's fp8 field and the stage options' fp8 hold.  One row
 * each in intraop/lowp.c, with what it costs and its sources
 * (docs/cost-model.md, "FP8 and FP4 recipes"). */
enum {
  STRATA_LOWP_NONE = 0,
  STRATA_LOWP_DELAYED,    /* per-tensor scales from an amax history */
  STRATA_LOWP_MXFP8,      /* a scale per 32 elements (Blackwell) */
  STRATA_LOWP_TENSORWISE, /* per-tensor scales of the current tensor */
  STRATA_LOWP_BLOCKWISE,  /* 1x128 and 128x128 blocks, fp32 scales */
  STRATA_LOWP_NVFP4,      /* FP4 E2M1, a scale per 16 elements (Blackwell) */
  STRATA_LOWP_COUNT
};
typedef struct {
  const char *name;     /* the recipe's name in Megatron-LM */
  int fp4;              /* its GEMMs at the FP4 rate (--fp4-format) */
  int blackwell;        /* needs Blackwell's tensor cores */
  double operand;       /* bytes of a GEMM operand element, scales in */
  double weight_copies; /* bytes a weight element's quantised copies
                           (row- and column-wise) keep between uses */
  double saved;         /* bytes of a GEMM input element saved for the
                           backward */
  double amax_read;     /* bytes an element's amax pass reads before its
                           cast (current scaling) */
} strata_lowp_t;
/* The recipe's row; NULL for STRATA_LOWP_NONE or a value out of range. */
const strata_lowp_t *strata_lowp(int recipe);
/* "tensorwise" into its value; STRATA_EINVAL naming the known ones. */
int strata_lowp_parse(const char *s, int *out);
const char *strata_lowp_name(int recipe); /* "bf16" for none */
/* The width of the tensor cores a recipe's GEMMs run on, whose peak MFU
 * is counted against: 16 (none: bf16/fp16), 8 or 4 (NVFP4). */
int strata_lowp_peak_bits(int recipe);
const char *strata_recompute_name(strata_recompute_t r);
int strata_recompute_parse(const char *s, strata_recompute_t *out);
const char *strata_recipe_name(strata_recipe_t r);
int strata_recipe_parse(const char *s, strata_recipe_t *out);
const char *strata_stage_status_name(strata_stage_status_t s);

/* Memory of one device, broken down. */
typedef struct {
  double weights, gradients, optimizer, activations, transient;
  double total;
  /* of weights, gradients and optimizer: the experts' (grouped_linear
   * parameters), whose replicas are the expert data-parallel group */
  double expert_weights, expert_gradients, expert_optimizer;
} strata_mem_breakdown_t;

typedef struct {
  char *name;      /* op name (template name for repeated layers) */
  int layer;       /* -1 for prologue/epilogue */
  int repeat;      /* instances this line stands for */
  char *strategy;  /* e.g. "row", "col", "dp", "dp x row" */
  char *placement; /* output placements, DTensor style: "[S(0), R]" */
  double mem_bytes;
  double comm_seconds;
} strata_op_choice_t;

typedef struct {
  strata_stage_status_t status;
  int devices;
  int homogeneous; /* 1: best homogeneous solution (one layer per block) */
  double alpha;
  double objective;               /* as the ILP reports it */
  double objective_bound;         /* proven lower bound of the optimum
                                     (-INFINITY: none, e.g. no solution) */
  double gap;                     /* (objective - bound) / |objective|:
                                     0 when proven optimal; INFINITY
                                     without a bound */
  double memory_redundancy_bytes; /* summed over the stage's devices */
  double comm_bytes;              /* bytes-equivalent on the fastest link */
  double comm_seconds;            /* per step */
  double sync_seconds;            /* of which gradient synchronisation */
  double compute_seconds;         /* per step */
  /* One micro-batch through the stage: compute plus the collectives that
   * are not overlapped (backward: with the recomputed forward). */
  double fwd_seconds, bwd_seconds;
  double fwd_comm_seconds, bwd_comm_seconds; /* of which collectives */
  double fwd_a2a_seconds, bwd_a2a_seconds;   /* of which the experts'
                                                dispatch and combine
                                                all-to-all, exposed */
  double fwd_host_seconds, bwd_host_seconds; /* of fwd/bwd_seconds, the
                                                eager MoE layers' host-
                                                bound gaps */
  double fwd_cp_seconds, bwd_cp_seconds;     /* of the collectives, ring
                                                attention's exposed
                                                exchange (context
                                                parallelism's p2p) */
  double peak_memory_bytes;                  /* per device */
  double zero_redundancy_bytes;              /* unique bytes / devices */
  strata_mem_breakdown_t mem;                /* of the peak device */
  double activations_per_layer; /* one micro-batch, one layer, per device */
  double min_memory_bytes;      /* infeasible: smallest that would fit */
  char *hint;                   /* infeasible: what would help */
  double solve_seconds;
  int int_vars, cont_vars, rows; /* after reductions */
  int int_vars_before, cont_vars_before, rows_before;
  int n_ops;
  strata_op_choice_t *ops;
} strata_stage_result_t;

/* Solve (or, for the megatron and dp objectives, evaluate) one stage.
 * Outcomes (infeasible, time limit) are in result->status, not errors;
 * errors are bad options (STRATA_EINVAL) or input the cost model cannot
 * handle (STRATA_EBADINPUT). */
int strata_stage_solve(const strata_graph_t *g, const strata_stage_opts_t *o,
                       strata_stage_result_t **out);
void strata_stage_result_destroy(strata_stage_result_t *r);

/* Write the stage's exact ILP in CPLEX LP format (glp_write_lp). */
int strata_stage_export_lp(const strata_graph_t *g,
                           const strata_stage_opts_t *o, const char *path);

#ifdef __cplusplus
}
#endif
#endif
