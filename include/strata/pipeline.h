/*
 * pipeline.h - the whole-model planner.  It enumerates the families of
 * stages (tensor, context and expert parallel sizes, micro-batch, sequence
 * parallelism, recompute, precision, ZeRO), solves each family's probe
 * stages with intraop/'s ILP concurrently on libuv's thread pool (distinct
 * subproblems once, cached across runs), then searches the configurations
 * -- pipeline degree, data parallelism, interleaving, layer split -- by
 * branch and bound on a lower bound, costing each with the one evaluation
 * `strata estimate` prints (every memory item of every pipeline rank, the
 * 1F1B schedule simulated op by op); the chosen stages are solved exactly
 * for their per-operator strategies.  Free mode's balanced uneven splits
 * use Alpa's inter-operator dynamic program (pipeline/split.c).  The
 * framework's rules are asked of one rulebook (strata_rules_check).
 */
#ifndef STRATA_PIPELINE_H
#define STRATA_PIPELINE_H

#include "strata/intraop.h"
#include "strata/plan_fields.h"
#include "strata/topo.h"
#include "strata/traces.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  STRATA_FRAMEWORK_MEGATRON,  /* Megatron-LM (Megatron-Core DDP) */
  STRATA_FRAMEWORK_DEEPSPEED, /* Megatron-DeepSpeed / DeepSpeed ZeRO */
  STRATA_FRAMEWORK_TORCHTITAN /* torchtitan: FSDP2, DTensor, PyTorch's
                                 pipelining (docs/cost-model.md,
                                 "torchtitan") */
} strata_framework_t;
const char *strata_framework_name(strata_framework_t f);
int strata_framework_parse(const char *s, strata_framework_t *out);

/* The precision of the layers' GEMMs: BF16, or FP8 with Transformer
 * Engine's recipe for the GPU (docs/cost-model.md, "FP8"); AUTO plans
 * both (FP8 only on GPUs with FP8 tensor cores). */
typedef enum {
  STRATA_PRECISION_AUTO = STRATA_AUTO, /* plan both */
  STRATA_PRECISION_BF16,
  STRATA_PRECISION_FP8,
  STRATA_PRECISION_FP4 /* NVFP4 (Blackwell): given, never chosen by AUTO */
} strata_precision_t;
const char *strata_precision_name(strata_precision_t p);
int strata_precision_parse(const char *s, strata_precision_t *out);

typedef struct {
  int global_batch; /* sequences per step; 0: the default, which follows
                       the sequence length (strata_default_global_batch) */
  int micro_batch;  /* 0: choose among 1, 2, 4, 8 */
  double alpha;
  double memory_budget;  /* bytes per device; 0: the GPU's memory */
  double memory_reserve; /* bytes per device kept free beyond every
                            modelled item (default 0.5 GiB) */
  /* "Choose" is 0 for a size or count (micro_batch, vpp, tp, pp, ...) and
   * STRATA_AUTO for the rest. */
  int zero_stage; /* default 1 (the distributed optimizer); STRATA_AUTO:
                     every stage the mode allows */
  strata_recipe_t recipe;
  strata_recompute_t recompute; /* default STRATA_RECOMPUTE_AUTO */
  unsigned recompute_modules;   /* selective recompute's Megatron-LM
                                   modules (STRATA_RCM_*; 0: the attention
                                   scores); given, recompute is selective */
  int sequence_parallel;        /* default STRATA_AUTO (Megatron mode) */
  int megatron;                 /* 1: Megatron-compatible search (default) */
  int threads;                  /* libuv pool size (0: default) */
  const char *cache_dir;        /* NULL: no cache */
  int quiet;                    /* no progress on stderr */
  double time_limit;            /* whole plan, seconds (0: none) */
  double time_start;            /* the strata_now() time_limit counts from
                                   (0 or later than the call: the call);
                                   the CLI's start, so that loading the
                                   model counts too */
  double stage_time_limit;      /* per stage ILP */
  int max_pp;                   /* 0: no limit */
  /* What the framework overlaps (docs/cost-model.md, "Overlap") and the
   * other on/off switches: plan_fields.h's STRATA_PLAN_SWITCHES, each 0,
   * 1 or STRATA_AUTO (the framework's default). */
  STRATA_PLAN_SWITCHES(STRATA_PLAN_SWITCH_DECL, opts)
  /* The MoE layer's and the CUDA graphs' choices (plan_fields.h's
   * STRATA_PLAN_CHOICES; 0: not given), recorded and exported. */
  STRATA_PLAN_CHOICES(STRATA_PLAN_CHOICE_DECL, opts)
  int vpp; /* virtual stages per rank: 0 choose, 1 none */
  strata_framework_t framework;
  /* To try several micro-batch sizes the planner regenerates the model:
   * the preset or family it came from and the overrides used (NULL: the
   * graph is re-batched). */
  const char *model_spec;
  strata_gen_opts_t gen;
  /* A fixed configuration (strata estimate): 0 = search.  first_layers /
   * last_layers fix the layers of the first / last pipeline stage (the
   * middle stages share the rest equally).  The names are a plan's and
   * its runners-up's (strata_plan_config_t). */
  int tp;
  int pp;
  int dp;
  int first_layers;
  int last_layers;
  /* Megatron-LM's --pipeline-model-parallel-layout: every virtual stage's
   * layers ("Et*3|(t*4|)*14tL"); NULL: none.  It fixes pp x vpp chunks. */
  const char *pipeline_layout;
  int no_memory_check; /* cost it even when it does not fit (estimate) */
  int top;             /* distinct configurations kept (default 3) */
  /* The non-dominated configurations kept too (STRATA_PARETO_*; 0: none):
   * of step time against peak memory per device, or against both and the
   * GPUs used.  The search then prunes only what a configuration found
   * dominates (docs/cost-model.md, "The Pareto front"). */
  int pareto;
  /* When *cancel becomes non-zero (e.g. from a SIGINT handler), queued
   * stage solves are dropped and the plan fails with STRATA_ECANCELED. */
  const volatile int *cancel;
  /* Context, expert and expert tensor parallelism (0: choose; Megatron
   * mode).  cp is searched where each rank keeps at least
   * STRATA_CP_MIN_TOKENS of the sequence; ep over the divisors of the
   * experts; etp over 1 and tp. */
  int cp;
  int ep;
  int etp;
  int cp_comm;                  /* STRATA_CP_P2P or ALLGATHER; STRATA_AUTO:
                                   the model's (ALLGATHER with sliding
                                   windows, else P2P) */
  strata_precision_t precision; /* default BF16 */
  int fp8_recipe;               /* STRATA_LOWP_* of --fp8-recipe; 0: the
                                   GPU's (delayed before Blackwell, mxfp8
                                   on it) */
  double moe_imbalance;         /* dropless MoE: the most loaded rank's
                                   token copies over the mean (default 1) */
  /* with the precision-aware optimizer: the main gradients' and the
   * moments' types (STRATA_STATE_FP32, default, BF16 or FP16) */
  int main_grads_dtype, exp_avg_dtype, exp_avg_sq_dtype;
  /* Megatron-LM's --cpu-offloading-num-layers: the saved activations of
   * that many layers kept in host memory between forward and backward
   * (0: none; pp 1, no recompute) */
  int offload_layers;
  /* Megatron-LM's --recompute-num-layers N with full recompute: the
   * layers of a checkpointed unit (--recompute-method uniform) or the
   * layers recomputed at the start of every chunk (block); 0: every
   * layer's input (uniform, 1) */
  int recompute_layers;
  /* Megatron-LM's --optimizer-cpu-offload --optimizer-offload-fraction F:
   * that share of the rank's optimizer (its fp32 weights and moments, and
   * Adam's step over them) on the host (0: none) */
  double optimizer_offload;
  /* Offloads searched (strata plan --search-offload): a configuration
   * that does not fit without them takes the least optimizer share (with
   * the precision-aware optimizer) and layers' activations (one stage,
   * no recompute) that make it fit, where they are not given */
  int search_offload;
  /* strata plan --no-search-layouts: the search keeps to Megatron-LM's
   * first and last ranks and the accounted splits, with no layout of
   * chunks of their own sizes (0: it tries them) */
  int no_search_layouts;
  /* The software stack (include/strata/stack.h): keys given by --stack,
   * the rest (-1) the framework's default, filled in by the planner */
  strata_stack_t stack;
  /* Cost and energy (docs/cost-model.md, "Cost and energy"): the token
   * budget the plan's time, cost and energy are for (0: none), what the
   * choice minimises (STRATA_OBJECTIVE_*; 0: time), and --gpu-price's
   * text ("USD" for every GPU model, or "MODEL=USD,..."; NULL: the
   * table's prices) */
  double tokens;
  int objective;
  const char *gpu_price;
} strata_plan_opts_t;

/* What a plan's choice minimises: the time to train (the step), the cost
 * or the energy of the token budget. */
enum {
  STRATA_OBJECTIVE_TIME = 0,
  STRATA_OBJECTIVE_COST,
  STRATA_OBJECTIVE_ENERGY
};
const char *strata_plan_objective_name(int v);
int strata_plan_objective_parse(const char *s, int *out);
/* The price of one hour of a GPU of model m: --gpu-price's (text as in
 * strata_plan_opts_t) where it names the model or all, else the table's;
 * 0: not known.  A malformed text or an unknown model is an error
 * (STRATA_EINVAL) naming it. */
int strata_gpu_price_of(const char *text, const strata_gpu_model_t *m,
                        double *usd_per_hour);

/* The axes of the Pareto front besides the step time. */
enum { STRATA_PARETO_MEMORY = 1, STRATA_PARETO_GPUS = 2 };
/* Not an axis --pareto takes: the best step per count of nodes used (a
 * front of step against GPUs rounded up to whole nodes, without the
 * memory axis, which prunes far more); strata fleet's curves
 * (docs/cost-model.md, section 23). */
enum { STRATA_PARETO_STEP_GPUS = 3 };
/* The most configurations a front keeps (beyond it the plan says so and
 * keeps the fastest). */
#define STRATA_PARETO_MAX 4096
/* "memory" or "gpus" (0 or out of range: "none"); parse takes those two
 * (STRATA_EINVAL otherwise). */
const char *strata_pareto_name(int v);
int strata_pareto_parse(const char *s, int *out);

/* An optimizer state's type (Megatron-LM's --main-grads-dtype,
 * --exp-avg-dtype, --exp-avg-sq-dtype). */
enum { STRATA_STATE_FP32, STRATA_STATE_BF16, STRATA_STATE_FP16 };
const char *strata_state_dtype_name(int t); /* "fp32", "bf16", "fp16" */
int strata_state_dtype_parse(const char *s, int *out);

/* Context parallelism is searched down to this many tokens per rank. */
#define STRATA_CP_MIN_TOKENS 4096

/* The options' defaults, all of them in pipeline/defaults.c (its head
 * says how to add an option).  init fills what needs nothing known; 0
 * left in a member means "the library's default". */
void strata_plan_opts_init(strata_plan_opts_t *o);
/* The defaults that follow the model, filled where o leaves them at 0:
 * the global batch (strata_default_global_batch of g's sequence).
 * strata_pipeline_plan resolves its own copy; call it to read them. */
void strata_plan_opts_resolve(strata_plan_opts_t *o, const strata_graph_t *g);
/* The default global batch for sequences of seq_len tokens: 1024
 * sequences up to 4096 tokens, then a budget of 2^22 tokens a step, the
 * largest power of two of sequences within it (at least 1). */
int strata_default_global_batch(int seq_len);
/* A fixed configuration's defaults, as strata estimate costs one: the
 * micro-batch 1 (the model's too), no interleaving unless a pipeline
 * layout gives it, cp 1; what is given is kept. */
void strata_plan_opts_fixed(strata_plan_opts_t *o);
/* The bytes a device may use under o on cluster c: the budget given (or
 * the GPU's memory) less the reserve. */
double strata_plan_memory_budget(const strata_plan_opts_t *o,
                                 const strata_cluster_t *c);

/* Each choice's names (rules/choices.c): strata_<key>_name(v) is
 * value v's name (0: the first, the default's; "?" out of range), or for
 * a set bit v's (NULL past the last); strata_<key>_parse reads one name
 * (a set: a comma list of them) into *out, STRATA_EINVAL with the names
 * it takes otherwise. */
#define STRATA_PLAN_CHOICE_API(F, kind, m, key, ...)                           \
  const char *strata_##key##_name(int v);                                      \
  int strata_##key##_parse(const char *s, int *out);
STRATA_PLAN_CHOICES(STRATA_PLAN_CHOICE_API, api)
#undef STRATA_PLAN_CHOICE_API

/* Memory of one device, every item the GPU sees (docs/cost-model.md,
 * "Memory as the GPU sees it"). */
typedef struct {
  double weights, gradients, optimizer; /* model states */
  double activations;                   /* saved for backward, in flight */
  double transient;                     /* the largest op's buffers */
  double context;       /* CUDA/HIP context, kernels, library handles */
  double workspace;     /* cuBLAS/cuBLASLt, TE workspaces */
  double nccl;          /* NCCL buffers of the communicators it joins */
  double buckets;       /* framework communication buckets */
  double fragmentation; /* caching-allocator slack over dynamic memory */
  double calibration;   /* fixed extra from a calibration file */
  double total;
  /* Expert and context parallelism (in total): NCCL's buffers for the
   * all-to-all with every expert-parallel peer, and ring attention's
   * receive buffers for keys and values (and their gradients). */
  double ep_buffers, cp_buffers;
  /* of weights + gradients + optimizer: the experts' states (sharded over
   * the expert data-parallel group) -- not added to total again */
  double experts;
} strata_mem_items_t;

/* Where a step's time goes (docs/cost-model.md, "The step's items"), on
 * the pipeline rank of the most work: its compute, its exposed
 * intra-stage (tensor-parallel) collectives, ring attention's exposed
 * exchange (cp_comm, not in tp_comm), the experts' exposed
 * dispatch and combine all-to-all (ep_a2a, not in tp_comm), the eager MoE
 * layers' host-bound gaps (host, not in compute), its blocking pipeline
 * sends (p2p), its exposed gradient synchronisation (dp_sync); then the
 * pipeline bubble (the time that rank idles: fill, drain and waits on the
 * others), the exposed parameter gather, the optimizer step and the
 * calibrated overhead.  They sum to the step. */
typedef struct {
  double compute, tp_comm, bubble, dp_sync, param_gather, optimizer, overhead;
  double ep_a2a, host, p2p, cp_comm;
} strata_step_items_t;

#define STRATA_CONFIG_LAYOUT_MAX 96

/* One configuration: the degrees and options that define it. */
typedef struct {
  int tp, pp, dp, micro_batch, vpp, sequence_parallel, zero_stage;
  int first_layers, last_layers; /* of the first / last stage */
  strata_recompute_t recompute;
  double step_seconds, peak_memory_bytes;
  int fits;
  int cp, ep, etp, fp8;
  /* On a cluster of node groups: 0 the stages spread over the groups,
   * k + 1 node group k alone.  0 on a cluster of one shape. */
  int group;
  /* Every virtual stage's layers as Megatron-LM's layout states them
   * ("Et*3|(t*3|)*10t*2L") where the first and the last rank's layers do
   * not tell them (a rank's chunks of different sizes, the embedding or
   * the loss counted); "" otherwise, or past its room (plan format 17) */
  char layout[STRATA_CONFIG_LAYOUT_MAX];
} strata_plan_config_t;

/* One pipeline stage (a model chunk: with interleaving, rank r holds
 * chunks r, r + pp, r + 2 pp, ...). */
typedef struct {
  int layer_begin, layer_end; /* transformer layers [begin, end) */
  int with_prologue, with_epilogue;
  int nodes, gpus_per_node; /* its submesh */
  int first_rank;           /* rank of its first device (replica 0) */
  int rank;                 /* pipeline rank holding it */
  strata_mesh_t mesh;
  int in_flight;                   /* micro-batches live on its rank */
  double fwd_seconds, bwd_seconds; /* one micro-batch, compute + comm */
  double sync_seconds;             /* gradient sync per step (outer DP incl.) */
  strata_stage_result_t *result;   /* strategies, memory breakdown */
  /* On a cluster of node groups of different shapes: the group whose
   * nodes run it and their GPU model (0 and "" on one shape). */
  int group;
  char gpu_model[STRATA_TOPO_NAME_MAX];
} strata_plan_stage_t;

/* One pipeline rank's device: what it holds and when it ends. */
typedef struct {
  strata_mem_items_t mem;
  double busy_seconds; /* forward and backward of every micro-batch */
  double end_seconds;  /* its last backward ends */
  double sync_seconds; /* its gradient synchronisation */
  double exposed_sync; /* of which not hidden behind its backward */
  double optimizer_seconds;
} strata_plan_rank_t;

/* A global plan, in three named parts whose scalars plan_fields.h lists:
 * the configuration (p->conf), the model's facts (p->arch) and the run's
 * figures (p->run).  Each part's members are reachable by name too
 * (p->tp is p->conf.tp): a part is an anonymous struct in a union with
 * its named struct, whose members are the same list. */
typedef struct {
  STRATA_PLAN_FIELDS(STRATA_PLAN_DECL_CONF)
} strata_plan_conf_t;

#define STRATA_PLAN_ARCH_BODY                                                  \
  char family[16];                                                             \
  STRATA_PLAN_FIELDS(STRATA_PLAN_DECL_ARCH)                                    \
  strata_rope_scaling_t rope_scaling; /* plan format 7 */
typedef struct {
  STRATA_PLAN_ARCH_BODY
} strata_plan_arch_t;

#define STRATA_PLAN_RUN_BODY                                                   \
  STRATA_PLAN_FIELDS(STRATA_PLAN_DECL_RUN)                                     \
  strata_step_items_t step_items;
typedef struct {
  STRATA_PLAN_RUN_BODY
} strata_plan_run_t;

typedef struct strata_plan {
  char *model, *cluster;
  union {
    strata_plan_conf_t conf;
    struct {
      STRATA_PLAN_FIELDS(STRATA_PLAN_DECL_CONF)
    };
  };
  union {
    strata_plan_arch_t arch;
    struct {
      STRATA_PLAN_ARCH_BODY
    };
  };
  union {
    strata_plan_run_t run;
    struct {
      STRATA_PLAN_RUN_BODY
    };
  };
  int n_stages; /* pp * vpp model chunks */
  strata_plan_stage_t *stages;
  strata_plan_rank_t *ranks; /* [pp] */
  double *p2p_seconds;       /* [n_stages - 1] per micro-batch, one way */
  /* the best distinct configurations (top[0] is this plan's) */
  int n_top;
  strata_plan_config_t *top;
  /* with --pareto (p->pareto_axes): the non-dominated configurations of
   * the search's space, by step time (plan format 13) */
  int n_pareto;
  strata_plan_config_t *pareto;
  /* with --fallbacks K: fallbacks[n - 1] is the plan of the cluster with
   * n nodes of each node group lost (its nodes_lost n), n = 1 .. (plan
   * format 14); strata_plan_destroy frees them */
  int n_fallbacks;
  struct strata_plan **fallbacks;
  /* node groups of the cluster it was planned on (0: one shape); a group
   * that runs no stage was left out: no plan using it was faster */
  int n_groups;
  /* Not kept in a plan file (0 after strata_plan_load): the model FLOPs
   * of a step with causal attention counted whole, not halved as
   * model_flops_per_step and mfu count it (docs/cost-model.md, "MFU and
   * its FLOP convention"); the software stack it was costed with
   * (stack_known 0: not known). */
  double model_flops_unmasked_per_step;
  int stack_known;
  strata_stack_t stack;
} strata_plan_t;

/* The 1F1B pipeline schedule, with or without interleaving (Narayanan et
 * al. 2021), simulated op by op: rank r holds model chunks r, r + pp, ...
 * (K = pp * vpp chunks in model order) and runs Megatron-LM's order of
 * forwards and backwards; an op starts when its rank is free and its input
 * has arrived (p2p after the producing chunk).  With blocking p2p the
 * sender is busy for the transfer too.  Fills the start of every op, the
 * end of each rank's last backward and the makespan. */
typedef struct {
  int pp, vpp, n_micro;
  const double *fwd, *bwd; /* [pp * vpp]: one micro-batch of chunk k */
  const double *p2p;       /* [pp * vpp - 1] after chunk k; NULL: none */
  int blocking_p2p;
  /* The schedule (STRATA_PPS_*; 0, auto, 1F1B and Interleaved1F1B:
   * Megatron-LM's order above).  The others run their own order of
   * forwards (F), input-gradient backwards (B) and weight-gradient
   * backwards (W) per rank (model/sched_ops.c): the V-shaped ones
   * (ZBVZeroBubble, DualPipeV; vpp 2) put chunk k and 2 pp - 1 - k on one
   * rank, DualPipe feeds half the micro-batches from each end through a
   * second copy of the stages (rank r runs chunk r and chunk pp - 1 - r;
   * vpp 1).  The cells of f_start and b_start are then the schedule's
   * own chunks (DualPipe: 2 pp chunks of n_micro / 2). */
  int schedule;
  const double *wgt;   /* [K]: of bwd, the weight gradients; NULL: half */
  const double *a2a_f; /* [K]: of fwd, what a backward beside it hides (the
                          experts' all-to-all); NULL: none */
  const double *a2a_b; /* [K]: of bwd, likewise */
  double *f_start, *b_start; /* [K * n_micro], index k * n_micro + m */
  double *rank_end;          /* [pp] */
  double makespan;
} strata_sched_t;
int strata_sched_run(strata_sched_t *s);
void strata_sched_free(strata_sched_t *s);

/* ---- calibration (strata calibrate, docs/calibration.md) ----
 * Measured runs on the user's cluster: each a fixed configuration (as
 * strata estimate takes it) with its measured step and peak memory. */
typedef struct {
  char *label, *model, *cluster;
  strata_plan_opts_t po; /* the configuration, every degree fixed */
  double step_seconds;   /* measured */
  double peak_bytes;     /* measured peak per device; 0: not given */
  char *layout;          /* owns po.pipeline_layout (NULL: none given) */
} strata_measurement_t;

/* A key of a run that the reader's own table does not hold, offered to
 * the caller's (strata calibrate passes it through strata estimate's
 * option table, docs/calibration.md): value is its text, "true" or
 * "false" for a boolean, or NULL to ask only whether the key is one (a
 * CSV header).  Returns 0 when taken, STRATA_ENOTFOUND when it is no key
 * of the caller's either, else an error whose message the reader prefixes
 * with the file and run. */
typedef int (*strata_run_key_fn)(const char *key, const char *value,
                                 strata_plan_opts_t *po, void *ud);

typedef struct {
  char *where; /* the file, for messages */
  int n;
  strata_measurement_t *v;
  strata_run_key_fn key_fn; /* set while reading (NULL: the reader's keys) */
  void *key_ud;
} strata_measurements_t;

/* Read measurements (JSON or CSV, docs/calibration.md); errors name the
 * file, the run and the field.  The _with forms offer the keys the
 * reader does not know to fn (NULL: none; an unknown key is an error). */
int strata_measurements_load(const char *path, strata_measurements_t **out);
int strata_measurements_parse(const char *text, size_t len, const char *where,
                              strata_measurements_t **out);
int strata_measurements_load_with(const char *path, strata_run_key_fn fn,
                                  void *ud, strata_measurements_t **out);
int strata_measurements_parse_with(const char *text, size_t len,
                                   const char *where, strata_run_key_fn fn,
                                   void *ud, strata_measurements_t **out);
void strata_measurements_destroy(strata_measurements_t *m);

/* The fitted parameters, in the report's order: gemm, attention,
 * stream, the links inside a node, across nodes, the time per step. */
#define STRATA_CAL_PARAMS 6
const char *strata_calibration_param_name(int k);

typedef struct {
  int n;
  double *step_before, *step_after; /* predicted, per run */
  double *peak_before, *peak_after;
  double rms_before, rms_after; /* RMS of log(predicted / measured) */
  /* Leave-one-out: each run predicted by the fit of the others (NULL and
   * rms_loo < 0 when not computed: one run, or more than the bound). */
  double *step_loo;
  double rms_loo;
  /* Per parameter: the most any run's log step moves per unit of its
   * log (the time per step: per 5 % of the shortest step) at the table, and
   * whether the fit moved it (0: no run is sensitive to it, it stays at
   * its prior) and whether it ended at a bound of its range. */
  double sensitivity[STRATA_CAL_PARAMS];
  int fitted[STRATA_CAL_PARAMS], at_bound[STRATA_CAL_PARAMS];
  double value[STRATA_CAL_PARAMS]; /* the fitted scale (time: seconds) */
} strata_calibration_report_t;

typedef struct {
  /* Leave-one-out up to this many runs (0: never; default 20). */
  int loo_max;
  /* Runs of several GPU models or frameworks in one fit (a benchmark's
   * one set of parameters for all; default 0: refused). */
  int mixed;
} strata_calibrate_opts_t;
void strata_calibrate_opts_init(strata_calibrate_opts_t *o);

/* Fit the scales and offsets of a calibration to the runs (a MAP fit:
 * a log-normal prior around the table, docs/calibration.md).  Refused:
 * runs of different GPU models or frameworks, one configuration measured
 * at steps more than 10 % apart, a step faster than the GPUs' peak. */
int strata_calibrate(const strata_measurements_t *m, strata_calibration_t *cal,
                     strata_calibration_report_t *rep);
int strata_calibrate_with(const strata_measurements_t *m,
                          const strata_calibrate_opts_t *o,
                          strata_calibration_t *cal,
                          strata_calibration_report_t *rep);
/* No fit: the runs predicted by the table (step_before) and under cal
 * (step_after), the RMS errors of both: how a calibration holds on runs
 * it was not fitted to. */
int strata_calibration_check(const strata_measurements_t *m,
                             const strata_calibrate_opts_t *o,
                             const strata_calibration_t *cal,
                             strata_calibration_report_t *rep);
void strata_calibration_report_free(strata_calibration_report_t *rep);

/* ---- the rulebook (rules/rules.c, docs/exports.md, "The rulebook")
 * What a framework accepts and why not: each rule one row of a table,
 * stated once, asked by strata estimate (through strata_pipeline_fix),
 * by strata_pipeline_plan, by the search's framework limits and by the
 * exporters.  A configuration is the degrees and options of one run and
 * the model and cluster facts the rules read. */
#define STRATA_RULES_MEGATRON 1u   /* Megatron-LM (Megatron-Core) */
#define STRATA_RULES_DEEPSPEED 2u  /* Megatron-DeepSpeed / DeepSpeed */
#define STRATA_RULES_DTENSOR 4u    /* PyTorch DTensor (strata export torch) */
#define STRATA_RULES_TORCHTITAN 8u /* torchtitan */
/* When a rule applies: to one fixed configuration (every degree given,
 * as strata estimate takes it), to a plan's options, searched or not, or
 * to a saved plan before it is exported. */
#define STRATA_RULES_CONFIG 1u
#define STRATA_RULES_OPTIONS 2u
#define STRATA_RULES_PLAN 4u

typedef struct {
  unsigned target;               /* one STRATA_RULES_<framework> */
  int saved;                     /* a saved plan (its remedy: an export) */
  int megatron;                  /* Megatron-compatible layouts (0: --free) */
  int world, gpus_per_node;      /* the cluster */
  int tp, pp;                    /* given */
  int dp;                        /* 0: the GPUs left, world / (tp cp pp) */
  int cp;                        /* 0: 1 */
  int ep, etp;                   /* 0: not given (etp then tp) */
  int vpp;                       /* 0 or 1: none */
  int micro_batch;               /* 0: 1 */
  int global_batch;              /* sequences per step */
  int first_layers, last_layers; /* 0: not given */
  const char *pipeline_layout;   /* NULL: not given */
  int zero_stage;                /* STRATA_AUTO: chosen */
  int sequence_parallel;         /* STRATA_AUTO: chosen; 0 off, 1 on */
  strata_recompute_t recompute;  /* STRATA_RECOMPUTE_AUTO: chosen */
  unsigned recompute_modules;    /* STRATA_RCM_*; 0: none given */
  int state_dtypes;              /* a state type other than fp32 given */
  int offload_layers;            /* --cpu-offloading-num-layers */
  int recompute_layers;          /* --recompute-num-layers */
  double optimizer_offload;      /* --optimizer-offload-fraction (0: none) */
  int lowp;       /* the GEMMs' STRATA_LOWP_* recipe as it runs (0: none,
                     or not known) */
  int fp8_recipe; /* --fp8-recipe as given (0: none) */
  int blackwell;  /* the GPU is a Blackwell (1), not (0), not known (-1) */
  strata_precision_t precision;
  strata_framework_t framework; /* what it was planned for */
  /* the switches (plan_fields.h; STRATA_AUTO: the framework's default) */
  STRATA_PLAN_SWITCHES(STRATA_PLAN_SWITCH_DECL, rules)
  /* the choices (0: not given; from a plan, 0 where it holds the
   * default) */
  STRATA_PLAN_CHOICES(STRATA_PLAN_CHOICE_DECL, rules)
  int cp_comm; /* STRATA_CP_P2P or ALLGATHER */
  /* the model */
  const char *model, *family;
  int layers, heads, kv_heads, seq_len, flash_attention;
  int experts, moe_ffn, mtp_layers;
  int windowed;     /* some layer attends through a sliding window */
  int shared, mla;  /* shared experts; multi-head latent attention */
  int moe_layers;   /* layers with experts (the rest: a dense MLP) */
  int shared_ffn;   /* the shared experts' hidden size (0: none) */
  int dense_layers; /* layers without experts (of a mixture of them) */
  double capacity;  /* the experts' capacity factor (0: dropless) */
  int qk_norm;      /* q/k norms (1: RMSNorm, Qwen3's; 2: L2) */
  int dropout;      /* attention and hidden dropout */
  /* the model's graph (NULL from a plan: DeepSpeed's 'parameters' split
   * is then not known) and whether its head is the embedding's table */
  const strata_graph_t *graph;
  int tied;
} strata_rules_config_t;

/* The first rule a configuration breaks: its name (a short tag), where
 * the framework states it, and the reason, which says what to change. */
typedef struct {
  const char *rule, *source;
  char why[768];
} strata_rules_verdict_t;

/* Fill c from planner options o for model g on cluster cl, the target
 * the framework o plans for. */
void strata_rules_config_init(strata_rules_config_t *c, const strata_graph_t *g,
                              const strata_cluster_t *cl,
                              const strata_plan_opts_t *o);
/* The same from a plan (its degrees, options and model facts). */
void strata_rules_config_of_plan(strata_rules_config_t *c,
                                 const strata_plan_t *p, unsigned target);
/* Ask the rulebook whether c->target accepts c, with the rules of the
 * kinds in `when` (STRATA_RULES_CONFIG, _OPTIONS), in the table's order.
 * 0 when it does; 1 when it does not, with v (if not NULL) filled. */
int strata_rules_check(const strata_rules_config_t *c, unsigned when,
                       strata_rules_verdict_t *v);
/* strata estimate's configuration: fill o's defaults as Megatron-LM takes
 * them (dp the GPUs left over tp x cp x pp, the layers split evenly when
 * no first or last stage is given) and check it against the rulebook's
 * configuration rules.  STRATA_EINVAL with the rule's reason (no prefix)
 * when the framework refuses it; o is then unchanged. */
int strata_pipeline_fix(const strata_graph_t *g, const strata_cluster_t *c,
                        strata_plan_opts_t *o);

/* Plan model g on cluster c.  STRATA_EINFEASIBLE when nothing fits, with a
 * message saying what would (more GPUs, memory, ZeRO, recompute).  With
 * tp and pp given, the configuration is first checked as
 * strata_pipeline_fix checks it: what the framework refuses is refused
 * with the same reason (STRATA_EINVAL). */
int strata_pipeline_plan(const strata_graph_t *g, const strata_cluster_t *c,
                         const strata_plan_opts_t *o, strata_plan_t **out);
void strata_plan_destroy(strata_plan_t *p);

/* ---- several jobs on one cluster (strata fleet, services/fleet.c,
 * docs/cost-model.md "Sharing a cluster among jobs") ---- */
/* What the split maximises (docs/cost-model.md, section 23). */
enum {
  STRATA_FLEET_FAIR = 1,      /* sum of w log(tokens/s), most jobs first */
  STRATA_FLEET_THROUGHPUT = 2 /* sum of w x tokens/s */
};
const char *strata_fleet_objective_name(int v);
int strata_fleet_objective_parse(const char *s, int *out);

typedef struct {
  char *name;     /* its plan's file name: letters, digits, . _ - */
  char *model;    /* as --model takes it */
  double weight;  /* > 0; 1 when not given */
  int min_nodes;  /* 0: not given (the job may get no nodes) */
  int max_nodes;  /* 0: not given (every node) */
  double tokens;  /* the deadline form: tokens to train (0: none) ... */
  double seconds; /* ... within this many seconds of the run's start */
  char *deadline; /* as given ("2027-01-15T00:00:00Z", "36h") */
  /* Its plan options, strata plan's (the JSON keys that are not the
   * job's own), as command-line words: "--seq=32768", "--free",
   * "--no-overlap-grad-reduce"; opt_key[i] the key it was given as. */
  int n_opts;
  char **opt_word, **opt_key;
} strata_fleet_job_t;

typedef struct {
  int n;
  strata_fleet_job_t *jobs;
  int objective; /* the file's "objective" (0: not given) */
} strata_fleet_jobs_t;

/* Read JOBS.json (docs/cli.md, "strata fleet"); errors name the file and
 * the JSON path (jobs[1].min_nodes): STRATA_EBADINPUT, ENOTFOUND / EIO.
 * A deadline given as a date is counted from now (time(NULL)). */
int strata_fleet_jobs_parse(const char *text, size_t len, const char *where,
                            strata_fleet_jobs_t **out);
int strata_fleet_jobs_load(const char *path, strata_fleet_jobs_t **out);
void strata_fleet_jobs_destroy(strata_fleet_jobs_t *f);

#define STRATA_FLEET_MAX_GROUPS 8

/* The split as a multiple-choice knapsack: value[(j * n_groups + g) *
 * (max_nodes + 1) + n] is job j's worth on n nodes of group g (n = 1 ..
 * capacity[g]; n = 0 is not read); below 0 or NaN: it does not run
 * there.  A required job must get an item.  count_first: the most jobs
 * running first, then the most worth (lexicographically). */
typedef struct {
  int n_jobs, n_groups;
  const int *capacity; /* [n_groups]: usable nodes, at most max_nodes */
  int max_nodes;
  const double *value;
  const int *required; /* [n_jobs] */
  int count_first;
} strata_fleet_problem_t;

typedef struct {
  int group, nodes; /* nodes 0: the job does not run */
} strata_fleet_choice_t;

/* The split of most total worth (exact; the first best of jobs out, then
 * fewer nodes, then lower groups): out[j] for each job, *total its worth.
 * STRATA_EINFEASIBLE when the required jobs cannot all get a point;
 * EUNSUPPORTED when the table would be too large (the message says it). */
int strata_fleet_allocate(const strata_fleet_problem_t *p,
                          strata_fleet_choice_t *out, double *total);

typedef struct {
  int group, first, nodes; /* its nodes: group's usable first .. + nodes */
  double value;            /* tokens/s on its curve */
  double step_seconds, tokens_per_second; /* its plan's, on its nodes */
  double need;               /* the deadline form: tokens/s it needs */
  strata_plan_t *plan;       /* planned on its nodes; NULL: it does not run */
  strata_cluster_t *cluster; /* its nodes (strata_cluster_subset) */
  int planned, points;       /* plans made for its curve; counts it fits on */
  int cut;                   /* its curve was cut short by the time limit */
  char why[512];             /* not run: the reason */
} strata_fleet_result_t;

typedef struct {
  int objective;     /* STRATA_FLEET_*; 0: FAIR */
  double time_limit; /* the whole split and plans, seconds (0: none) */
  double start;      /* strata_now() at the run's start (0: now) */
} strata_fleet_opts_t;
void strata_fleet_opts_init(strata_fleet_opts_t *o);

/* Split cluster c among n jobs (graph g[j], options po[j]) to maximise
 * the objective, each job on whole nodes of one node group, and plan
 * each job on its nodes (res[j].plan on res[j].cluster:
 * strata_fleet_results_free; not stitched).  *total is the objective's
 * optimum over the curves (for FAIR, the sum of w ln(tokens/s)).
 * STRATA_EINFEASIBLE when the jobs with min_nodes or a deadline cannot
 * all run, a deadline cannot be met, or no job fits. */
int strata_fleet_plan(const strata_cluster_t *c, int n,
                      const strata_graph_t *const *g,
                      const strata_plan_opts_t *po,
                      const strata_fleet_job_t *jobs,
                      const strata_fleet_opts_t *fo, strata_fleet_result_t *res,
                      double *total);
/* Destroy each result's plan and cluster (res itself is the caller's). */
void strata_fleet_results_free(strata_fleet_result_t *res, int n);

#ifdef __cplusplus
}
#endif
#endif
