/*
 * pipeline.h - the whole-model planner: a dynamic program (Alpa's inter-op
 * pass) cuts the model into pipeline stages over submeshes of the cluster,
 * each stage's ILP solved by intraop/, distinct subproblems solved
 * concurrently on libuv's thread pool and cached across runs.
 */
#ifndef STRATA_PIPELINE_H
#define STRATA_PIPELINE_H

#include "strata/intraop.h"
#include "strata/topo.h"
#include "strata/traces.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int global_batch; /* sequences per step (default 1024... see docs) */
  int micro_batch;  /* 0: choose */
  double alpha;
  double memory_budget;  /* bytes per device; 0: the GPU's memory */
  double memory_reserve; /* bytes per device kept free (framework, NCCL) */
  int zero_stage;        /* -1: choose */
  strata_recipe_t recipe;
  strata_recompute_t recompute; /* fixed; or choose when recompute_auto */
  int recompute_auto;
  int sequence_parallel;   /* -1: choose (Megatron mode) */
  int megatron;            /* 1: Megatron-compatible search (default) */
  int threads;             /* libuv pool size (0: default) */
  const char *cache_dir;   /* NULL: no cache */
  int quiet;               /* no progress on stderr */
  double time_limit;       /* whole plan, seconds (0: none) */
  double stage_time_limit; /* per stage ILP */
  int max_pp;              /* 0: no limit */
  double efficiency;       /* achieved fraction of peak FLOP/s */
  /* To try several micro-batch sizes the planner regenerates the model:
   * the preset or family it came from and the overrides used (NULL: only
   * the graph's own micro-batch). */
  const char *model_spec;
  strata_gen_opts_t gen;
  /* Fixed degrees (strata estimate): 0 = search. */
  int fix_tp, fix_pp, fix_dp;
  /* When *cancel becomes non-zero (e.g. from a SIGINT handler), queued
   * stage solves are dropped and the plan fails with STRATA_ECANCELED. */
  const volatile int *cancel;
} strata_plan_opts_t;

void strata_plan_opts_init(strata_plan_opts_t *o);

/* One stage of a plan. */
typedef struct {
  int layer_begin, layer_end; /* transformer layers [begin, end) */
  int with_prologue, with_epilogue;
  int nodes, gpus_per_node; /* its submesh */
  int first_rank;           /* rank of its first device (replica 0) */
  strata_mesh_t mesh;
  int in_flight;                   /* micro-batches live under 1F1B */
  double fwd_seconds, bwd_seconds; /* one micro-batch, compute + comm */
  double sync_seconds;             /* gradient sync per step (outer DP incl.) */
  strata_stage_result_t *result;   /* strategies, memory breakdown */
} strata_plan_stage_t;

/* A global plan (merge/ fills the schedule fields and the p2p costs). */
typedef struct strata_plan {
  char *model, *cluster;
  int devices;    /* used */
  int tp, pp, dp; /* tp: devices per stage (Megatron mode) */
  int micro_batch, global_batch, n_micro;
  int zero_stage, sequence_parallel, megatron, vpp;
  strata_recipe_t recipe;
  strata_recompute_t recompute;
  double alpha;
  int seq_len, layers, hidden, heads, kv_heads, ffn, vocab;
  char family[16];
  int n_stages;
  strata_plan_stage_t *stages;
  double *p2p_seconds; /* [n_stages - 1] per micro-batch, one way */
  double step_seconds, tokens_per_second, mfu;
  double peak_memory_bytes; /* the most loaded device */
  double gpu_memory_bytes, gpu_peak_flops;
  double model_flops_per_step;
  /* search statistics */
  int subproblems_total, subproblems_distinct, ilps_solved, cache_hits;
  double plan_seconds;
  int time_limited; /* the whole-plan time limit was reached */
  /* model facts the exporters need (strata_merge_stitch fills them from
   * the graph) */
  int flash_attention, dropout, untie_embeddings, max_position;
} strata_plan_t;

/* Plan model g on cluster c.  STRATA_EINFEASIBLE when nothing fits, with a
 * message saying what would (more GPUs, memory, ZeRO, recompute). */
int strata_pipeline_plan(const strata_graph_t *g, const strata_cluster_t *c,
                         const strata_plan_opts_t *o, strata_plan_t **out);
void strata_plan_destroy(strata_plan_t *p);

#ifdef __cplusplus
}
#endif
#endif
