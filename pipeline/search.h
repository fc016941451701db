/*
 * search.h - the planner's search (internal to pipeline/).
 *
 * A family fixes everything that decides a stage's layouts: the tensor-
 * parallel submesh, the micro-batch, sequence parallelism, recompute and
 * the ZeRO stage.  Its stages are costed from a few stage solves (probes)
 * split into parts that add up exactly for fixed layouts:
 *   - one layer of each block (probes of 1 layer with 1 and 2 micro-batches
 *     in flight): everything of a middle stage scales with its layers, in
 *     flight activations with layers x in-flight micro-batches;
 *   - the prologue and epilogue: a first (last) stage of 1 layer minus
 *     that layer;
 *   - the single stage of all layers, solved as it is.
 * Transients are maxima, not sums; full recompute's re-run layer counts
 * once per block a stage holds (as the stage ILP does).  The
 * outer data parallelism enters analytically: ZeRO-sharded states divide
 * by it, its gradient synchronisation crosses the cluster.
 *
 * A configuration (family, pp, dp, virtual stages, layer split) is then
 * costed by eval.c: memory per rank with every item the GPU sees, and the
 * step by simulating the schedule (sched.c).  space.c enumerates the
 * configurations and finds the least step that fits by branch and bound
 * on a lower bound that no schedule can beat.
 */
#ifndef STRATA_PIPELINE_SEARCH_H
#define STRATA_PIPELINE_SEARCH_H

#include "pipeline/sub.h"

#define ST__MAX_PP 1024
/* the largest global batch planned (docs/cli.md): 2^20 sequences */
#define ST__MAX_GLOBAL_BATCH 1048576
#define ST__MAX_GRAPHS 8
#define ST__FG_MODULES 7 /* the names of offload_modules (plan_fields.h) */

/* One part of a stage on one device. */
typedef struct {
  double w, g, o;    /* weights, gradients, optimizer states (outer dp 1) */
  double ew, eg, eo; /* of which the experts' */
  double act;        /* activations per micro-batch in flight */
  double fixed_act;  /* held once: full recompute's re-run layer */
  double transient;  /* the largest op's buffers (a max) */
  double fwd, bwd;   /* one micro-batch, compute + exposed collectives */
  double comm_fwd, comm_bwd; /* of which collectives */
  double sync;               /* in-stage gradient synchronisation per step */
  double a2a_fwd, a2a_bwd;   /* of comm, the experts' all-to-all */
  double host_fwd, host_bwd; /* of fwd, bwd: the eager MoE layers' host-
                                bound gaps (not in comm) */
  double cp_fwd, cp_bwd;     /* of comm, ring attention's exposed exchange */
} st__part_t;

enum { ST__P_M1, ST__P_M2 }; /* middle probes: 1 layer, f = 1 / f = 2 */

typedef struct {
  int nodes, gpn, tcp; /* submesh of a stage: tcp = tp x cp devices */
  int tp, cp;          /* tensor- and context-parallel sizes */
  int ep, etp;         /* expert- and expert-tensor-parallel sizes */
  int ep_outer;        /* of ep, the data-parallel replicas beyond the mesh */
  unsigned ep_axes;    /* mesh axes inside the expert-parallel group */
  int graph;           /* micro-batch variant */
  int sp, zero, fp8;
  int epo; /* the experts' all-to-all overlapped (ep > 1) */
  strata_recompute_t rc;
  /* block recompute (--recompute-method block): a full family's layers
   * past the first N of a chunk are those of its sibling, the family of
   * the same shape without recompute (its index; -1: none), which is
   * itself no candidate (aux) where --recompute full was asked */
  int sib, aux;
  /* probes */
  st__sub_t **mid; /* [n_blocks][2] */
  st__sub_t *first[2], *last[2], *only;
  /* parts (valid when ok) */
  int ok;
  st__part_t *layer;    /* [n_blocks]: one layer of the block */
  st__part_t pro, epi;  /* what the first / last stage adds */
  st__part_t only_part; /* the single stage of all layers */
  double *pre;          /* prefix sums over layers, PRE_FIELDS per layer */
} st__family_t;

typedef struct {
  const strata_graph_t *g; /* the model as given */
  const strata_cluster_t *c;
  const strata_plan_opts_t *o; /* &opts */
  strata_plan_opts_t opts;     /* the caller's, within the framework's
                                  reach (plan.c, framework_limits) */
  strata_graph_t *own[ST__MAX_GRAPHS];
  const strata_graph_t *graphs[ST__MAX_GRAPHS];
  uint64_t ghash[ST__MAX_GRAPHS];
  int n_graphs;
  int L, G, N, total;
  double budget; /* bytes per device a configuration may use */
  int zero;
  double param_bytes[ST__MAX_GRAPHS]; /* bytes per parameter element */
  double max_param[ST__MAX_GRAPHS];   /* bytes of the largest parameter */
  double max_expert[ST__MAX_GRAPHS];  /* ... of the largest expert one */
  double kv_bytes[ST__MAX_GRAPHS];    /* one attention's keys + values */
  int tied[ST__MAX_GRAPHS];           /* the head shares the embedding */
  /* fine-grained activation offloading: each module's saved bytes of all
   * layers, unsharded, [0] sharded over tp x cp, [1] over cp alone
   * without sequence parallelism (fgoffload.c; by the bit of its
   * STRATA_OFM_*) */
  double fg_bytes[ST__MAX_GRAPHS][ST__FG_MODULES][2];
  double p2p[2][2]; /* p2p within / across nodes: latency, s per byte */
  st__family_t *fam;
  int n_fam, cap_fam;
  st__subset_t subs;
  st__cache_t *cache; /* the run's disk cache, or NULL; a mixed cluster's
                         groups share their first group's */
  int own_cache;      /* flushed (unless interrupted) and closed here */
  double deadline;   /* the search stops here (90 % of the limit; -1: it did) */
  double limit_end;  /* the limit itself: the chosen plan's solves end here */
  int probes_cut;    /* the time limit ended the probes' solves: a family
                        left unfitted is out of time, not out of memory */
  double bound_left; /* stopped: no configuration left unvisited beats it */
  st__progress_t *prog; /* &prog_own, or the first group's */
  st__progress_t prog_own;
  int ilps, hits;
  long bounded, evaluated;
  /* the gradient collectives over a data-parallel group of stride t: an
   * affine model in bytes, cached per (t, dp) */
  struct sync_model *sync;
  int n_sync, cap_sync;
  struct st__scratch *scratch; /* eval.c's, reused across configurations */
  /* a mixed cluster (hetero.c): p2p between two node groups, latency and
   * seconds per byte */
  double xp2p[2];
  /* the rulebook's configuration of the options and the model (rules.c):
   * a candidate copies it, sets its degrees and asks the rules the
   * search filters by */
  strata_rules_config_t rules;
  /* --pareto: the front the search found (space.c), fastest first, each
   * with its cost (explicit splits owned here) */
  struct st__cfg *front;
  struct st__cost *front_cost;
  int n_front;
  /* --pipeline-layout: the layers of each of its lay_K model chunks (0:
   * none given) */
  int lay_K, *lay_n;
  /* --ds-partition-method: the split it gives, per configuration */
  int *ds_n;
} st__search_t;

/* ds_partition.c: the transformer layers of each of pp stages that
 * DeepSpeed's PipelineModule gives with partition method `method` (a
 * STRATA_DS_*; 0: type:transformer) over Megatron-DeepSpeed's GPT specs,
 * `specs` the ST__DS_* that shape them; g may be NULL but for
 * 'parameters' (then type:transformer's).  pp, -1 when it puts a stage
 * without a transformer layer or the embedding or the head off the end
 * stages, -2 out of memory. */
enum {
  ST__DS_TIED = 1, /* the head is the embedding's table (TiedLayerSpec) */
  ST__DS_MOE = 2   /* a mixture of experts: its loss is a spec */
};
int st__ds_partition(const strata_graph_t *g, int layers, unsigned specs,
                     int method, int pp, int *n);

/* layouts.c: the layers of each of the p x v model chunks with the
 * embedding (acct & 1) and the loss (acct & 2) counted as layers of an
 * even split; K, or -1 when they do not split so. */
int st__split_accounted(int L, int p, int v, int acct, int *n);
/* The cluster's GPU is a Blackwell (B200, GB200): 1, 0, or -1 when it is
 * not known. */
int st__blackwell(const strata_cluster_t *c);
/* Whether CUDA graphs capture the MoE layers' experts: the full-iteration
 * graph, or a layer's graph whose scope holds moe (degrees.c). */
int st__moe_graphed(const st__search_t *S);
/* The STRATA_LOWP_* recipe of the options' narrow GEMMs on the cluster:
 * NVFP4 at --precision fp4, else --fp8-recipe, else the GPU's (MXFP8 on
 * Blackwell, delayed scaling before). */
int st__lowp_of(const strata_plan_opts_t *o, const strata_cluster_t *c);
/* FP8 or FP4. */
static inline int st__narrow(strata_precision_t p) {
  return p == STRATA_PRECISION_FP8 || p == STRATA_PRECISION_FP4;
}
/* Megatron-LM's layout string: each virtual stage's transformer layers
 * into n[0..*K) (cap at most); 0, or 1 with the reason in why. */
int st__layout_parse(const char *s, int layers, int mtp, int *n, int cap,
                     int *K, char *why, size_t wn);

/* The search asks the rulebook (rules.c) through strata_rules_check, v
 * NULL (no message formatted), with one of its own stages in place of
 * STRATA_RULES_CONFIG: a row is tagged with the stages at which the
 * search knows every field the row reads, and the search asks those rows
 * of the candidate it is costing.  Above the public STRATA_RULES_ bits. */
#define ST__AT_TP (1u << 8)           /* tp (degrees.c) */
#define ST__AT_CP (1u << 9)           /* cp */
#define ST__AT_CP_COMM (1u << 10)     /* cp's exchange, of the options */
#define ST__AT_EP (1u << 11)          /* ep over the experts */
#define ST__AT_EP_LAYOUT (1u << 12)   /* ep and etp laid out on the mesh */
#define ST__AT_LAYER (1u << 13)       /* recompute and offloaded modules */
#define ST__AT_SP (1u << 14)          /* sequence parallelism */
#define ST__AT_FAMILY (1u << 15)      /* the rest a family decides */
#define ST__AT_PIPE (1u << 16)        /* pp, vpp, dp and the micro-batches */
#define ST__AT_SPLIT (1u << 17)       /* the layers' split */
#define ST__AT_CFG (1u << 18)         /* the whole configuration (eval.c) */
#define ST__AT_OPT_OFFLOAD (1u << 19) /* the optimizer on the host */
#define ST__AT_ACT_OFFLOAD (1u << 20) /* layers' activations on the host */

/* A configuration of one family. */
typedef struct st__cfg {
  const st__family_t *f;
  int p, dp, v, b, m;
  int first, last; /* layers of the first / last pipeline rank (p >= 2), all
                      its v chunks together; 0 0: equal ranks */
  int *split;      /* free mode: layers of each stage, or NULL */
  const st__family_t **fs; /* stages of different shapes, or NULL */
  /* stages on the node groups of a mixed cluster (hetero.c): the search of
   * each stage's group (its cluster, budget, families' parts), or NULL:
   * every stage on the search's own cluster */
  st__search_t *const *ss;
  int acct; /* the embedding (1) and the loss (2) counted as layers of an
               even split (layouts.c), or 0 */
  /* the offloads the search chose for it (--search-offload, offload.c;
   * 0: the options'): the optimizer's share on the host, and the layers
   * whose activations are */
  double opt_offload;
  int act_offload;
  int fg_offload; /* the modules offloaded (STRATA_OFM_*) */
  int chunked;    /* split holds every one of the p x v chunks' layers (a
                     layout the search generated, layouts.c), not each
                     rank's */
  int sched;      /* the pipeline schedule (STRATA_PPS_*; 0: the best of those
                     --pp-schedule allows, eval.c) */
} st__cfg_t;

/* What a configuration costs. */
typedef struct st__cost {
  double step; /* exact (simulated) or a lower bound */
  double peak; /* the most loaded device */
  int fits;
  int worst_rank; /* the device with the most memory */
  strata_step_items_t items;
} st__cost_t;

/* The entries of cf's split: one per chunk (chunked) or per rank. */
static inline int st__split_len(const st__cfg_t *cf) {
  return cf->chunked ? cf->p * (cf->v > 1 ? cf->v : 1) : cf->p;
}

/* layouts.c: Megatron-LM's explicit layouts the search tries beyond its
 * first/last ranks and the accounted splits, where the framework states
 * them (st__layouts_allowed): every chunk but the first (the embedding's)
 * and the last (the loss's) holds c or c + 1 layers, the first a within
 * one of the even share q = L / (p v), the last b from q - 2 to q; the chunks
 * given the extra layer are those of the least loaded ranks by the
 * family's work (later chunks first: fewer micro-batches in flight).
 * st__layout_weights gives w: the embedding's and the loss's work in
 * units of the family's mean layer (-1: no work).  st__layout_candidate
 * fills n with the p x v chunks' layers of candidate i (0 <= i <
 * ST__LAYOUTS): K, or -1 when i gives none, or one that the first/last
 * form states already. */
#define ST__LAYOUTS 9
int st__layouts_allowed(const st__search_t *S);
int st__layout_weights(const st__search_t *S, const st__cfg_t *cf, double *w);
int st__layout_candidate(const st__search_t *S, const st__cfg_t *cf,
                         const double *w, int i, int *n);
/* The same for L layers over p ranks of v chunks each. */
int st__layout_fill(int L, int p, int v, const double *w, int i, int *n);

/* ---- plan.c ---- */
/* Everything up to the search: families enumerated, probes solved, parts
 * fitted (the tests drive the search and enumerate from here). */
int st__search_prepare(st__search_t *S, const strata_graph_t *g,
                       const strata_cluster_t *c, const strata_plan_opts_t *o);
/* The same as a part of another search's plan (NULL: none): its disk
 * cache, its progress and its deadline (the plan's, from its start). */
int st__search_prepare_in(st__search_t *S, const strata_graph_t *g,
                          const strata_cluster_t *c,
                          const strata_plan_opts_t *o, st__search_t *first);
/* The same, its stage solves stopped at share (0 to 1) of the time left
 * to the plan's deadline (a time limit's share of one node group), the
 * progress naming where (the group; NULL: as it was). */
int st__search_prepare_share(st__search_t *S, const strata_graph_t *g,
                             const strata_cluster_t *c,
                             const strata_plan_opts_t *o, st__search_t *first,
                             double share, const char *where);
/* Frees S; the cache it opened is written (once per run: not when the run
 * was interrupted, which writes nothing) and closed. */
void st__search_release(st__search_t *S);

/* ---- degrees.c: the families' degrees, meshes, links and probes ---- */
#define ST__MAX_FAMILIES 4096
/* Solve a family's probes and keep it. */
int st__family_add(st__search_t *S, const st__family_t *f);
/* The stage options of a family's stages (its mesh, degrees, recipe). */
void st__base_stage_opts(const st__search_t *S, const st__family_t *f,
                         strata_stage_opts_t *so);
int st__enumerate_families(st__search_t *S);
int st__family_mesh(const st__search_t *S, const st__family_t *f,
                    strata_mesh_t *m);
/* The stage options a family's degrees set (cp, ep, fp8, ...). */
void st__family_stage_opts(const st__search_t *S, const st__family_t *f,
                           strata_stage_opts_t *so);
/* A collective over n ranks spanning nodes x gpn GPUs as one flat link. */
strata_link_t st__group_link(const st__search_t *S, strata_coll_t coll, int n,
                             int nodes, int gpn);
/* The shape (nodes x GPUs per node) of n ranks `stride` apart. */
double st__ep_node_share(const strata_graph_t *g, int dispatcher, int nodes);
void st__group_shape(const st__search_t *S, int stride, int n, int *nodes,
                     int *gpn);

/* ---- kind.c: parts from the probes, sums over layer ranges ---- */
int st__family_fit(const st__search_t *S, st__family_t *f);
void st__family_free(st__family_t *f);
/* Sum of the layers [k, k + n) into acc (acc is added to); the largest
 * transient taken, the re-run layer of each block touched added. */
/* The layers [k, k + n) of a chunk starting at k (all of them: n from
 * the chunk's first layer) into acc, as full recompute's unit has them
 * (--recompute-num-layers, --recompute-method; st__layers_add else). */
void st__chunk_add(const st__search_t *S, const st__family_t *f, int k, int n,
                   st__part_t *acc);
/* A one-stage family's part (only_part) with full recompute's unit in
 * place of every layer's (st__chunk_add over all layers). */
void st__unit_only(const st__search_t *S, const st__family_t *f,
                   st__part_t *only);
/* The forward and backward of layers [k, k + n) of f (st__layers_add's
 * fwd + bwd, from the prefix sums alone). */
double st__layers_work(const st__family_t *f, int k, int n);
void st__layers_add(const st__search_t *S, const st__family_t *f, int k, int n,
                    st__part_t *acc);
void st__part_add(st__part_t *acc, const st__part_t *x);

/* ---- eval.c: one configuration ---- */
/* Layers of each model chunk in model order (p x v entries) for the
 * split; -1 if it is not one Megatron-LM allows (first/last given, middle
 * ranks equal, each rank's layers a multiple of v). */
int st__split_of(const st__search_t *S, const st__cfg_t *cf, int *n);
/* Cost it: memory of every rank and the step, exactly (simulating the
 * schedule) when exact, else a lower bound no schedule beats. */
int st__cfg_cost(st__search_t *S, const st__cfg_t *cf, int exact,
                 st__cost_t *out);
/* The schedule (sched.c) into buffers kept across calls, stopped once it
 * cannot end under a cut: 1 when a rank r must end past cut - after[r]
 * (its ops left run at least their compute, one after another, from when
 * it is free) or the first rank past cut - after[0] (after r's last
 * backward, that micro-batch's backwards of the chunks before r and their
 * p2p); 0 with S's rank_end and makespan filled (rank_end in B, f_start
 * and b_start not kept); < 0 an error.  cut INFINITY: run whole. */
typedef struct {
  double *d;
  int *ints;
  size_t cells;
  int pp;
} st__sched_buf_t;
/* The schedules of their own order (sched_ops.c): a schedule Megatron-LM's
 * order does not run; its check (the chunks a rank and micro-batches it
 * needs) and its run into S's arrays. */
#define ST__SCHED_OWN(s) ((s) > STRATA_PPS_INTERLEAVED_1F1B)
int st__sched_ops_check(const strata_sched_t *S);
/* DualPipe's and DualPipeV's orders need m >= 2 pp micro-batches (their
 * step 4 runs m - 2 pp + r + 1 times); 1 where schedule s runs m. */
int st__sched_micro_ok(int s, int pp, int m);
/* The schedules the search tries for a configuration of v chunks a rank
 * under framework fw and --pp-schedule asked (0 or auto: each the
 * framework runs: rules.c), into s (at most ST__MAX_SCHEDS); how many. */
#define ST__MAX_SCHEDS 10
int st__pp_schedules(int fw, int asked, int v, int *s);
int st__sched_ops_run(strata_sched_t *S); /* 1: its rule deadlocks */
int st__sched_cut(strata_sched_t *S, st__sched_buf_t *B, const double *after,
                  double cut);
void st__sched_buf_free(st__sched_buf_t *B);
/* Scratch space of the evaluation (allocated once per search). */
int st__eval_scratch(st__search_t *S);
/* Peak memory of rank r holding n layers whose first chunk starts at
 * layer k (with v virtual stages, n / v layers from k + c L / v each). */
/* The activations rank r holds beyond its micro-batches in flight where
 * the experts' all-to-all overlap pairs a forward with a backward (one
 * layer's; eval.c). */
double st__paired_act(const st__search_t *S, const struct st__cfg *cf, int r);
double st__rank_peak(st__search_t *S, const st__cfg_t *cf, int r, int k, int n);
/* The bound only when it reaches cutoff (out->fits = -1: not costed);
 * exact, a step of INFINITY when the schedule cannot end under cutoff
 * (a hair above it: one equal may still win on memory). */
int st__cfg_cost_cut(st__search_t *S, const st__cfg_t *cf, int exact,
                     double cutoff, st__cost_t *out);
/* A lower bound of the step of cf's split n (its p x v chunks' layers)
 * from pipeline rank r alone: its work, exposed synchronisation,
 * optimizer and gather, at a fraction of the bound's cost (0 on a
 * failure: no bound); and (peak not NULL) rank r's memory with the most
 * the search may offload (st__rank_peak's). */
double st__rank_floor(st__search_t *S, const st__cfg_t *cf, const int *n, int r,
                      double *peak);
/* Whether cf's layers are one kind, each costed as the next wherever it
 * sits in a chunk (no block or uniform recompute by the chunk): a rank's
 * memory and time then grow with each of its chunks' layers. */
int st__layers_alike(const st__search_t *S, const st__cfg_t *cf);
/* Whether st__rank_floor of rank r depends on the count of its layers
 * alone, growing with it (one kind of layer, costed by the layer; not the
 * first rank; no FSDP under a pipeline). */
int st__rank_floor_by_count(const st__search_t *S, const st__cfg_t *cf, int r);
/* That memory alone. */
double st__rank_layout_peak(st__search_t *S, const st__cfg_t *cf, const int *n,
                            int r);
void st__eval_free(st__search_t *S);
/* The same, writing the whole plan (stages without results, ranks). */
int st__cfg_fill_plan(st__search_t *S, const st__cfg_t *cf, strata_plan_t *p);

/* The least share of the optimizer on the host that makes every rank of
 * cf fit on its GPU (the memory is linear in it): 0 when it fits without,
 * above 1 (INFINITY where the optimizer holds nothing) when no share
 * does. */
double st__least_optimizer_offload(st__search_t *S, const st__cfg_t *cf);

/* plan.c: a lower bound of every configuration's peak memory per device:
 * the model's states (weights, gradients, the optimizer's, at the options'
 * types, those the host may take left out) spread evenly over all the
 * cluster's GPUs, plus what every rank holds whatever it runs (context,
 * workspaces).  *states (if given): those states' bytes in all; *params:
 * the parameter elements. */
double st__memory_floor(const st__search_t *S, double *states, double *params);

/* ---- offload.c: offloads in the search (--search-offload) ---- */
/* What the search may offload for cf: whether the optimizer's share
 * (*opt) and the most layers' activations (*act, 0: none), as Megatron-
 * LM's rules allow with the options given. */
void st__offload_room(const st__search_t *S, const st__cfg_t *cf, int *opt,
                      int *act);
/* ... and the union of the module sets it may offload (0: none). */
unsigned st__offload_fg_room(const st__search_t *S, const st__cfg_t *cf);
/* cf, which does not fit without offloads, with the least offloads that
 * make it fit and its step the least (*out, costed exactly in *cost):
 * *found 0 when none does. */
int st__offload_fit(st__search_t *S, const st__cfg_t *cf, st__cfg_t *out,
                    st__cost_t *cost, int *found);

/* ---- fgoffload.c: fine-grained activation offloading ---- */
/* Each module's saved bytes of S's graphs (S->fg_bytes). */
void st__fg_prepare(st__search_t *S);
/* What one layer of family f offloads a micro-batch on one rank with the
 * modules `mods` (STRATA_OFM_*), bytes. */
double st__fg_layer_bytes(const st__search_t *S, const st__family_t *f,
                          unsigned mods);
/* The sets of modules --search-offload tries for family f, as Megatron-
 * LM's rules allow them, into
 * sets (at most ST__FG_SETS); their count. */
#define ST__FG_SETS 6
int st__fg_sets(const st__search_t *S, const st__family_t *f, unsigned *sets);
/* The switches cf runs: the plan's, and the rulebook's configuration's
 * (c's switches only are written). */
void st__run_switches(const strata_plan_opts_t *o, const st__cfg_t *cf,
                      strata_rules_config_t *c);
/* The rulebook's configuration of cf with stage family f: the options'
 * with everything the search chose (ST__AT_CFG's rows read it). */
void st__cfg_rules(const st__search_t *S, const st__cfg_t *cf,
                   const st__family_t *f, strata_rules_config_t *c);

/* ---- space.c: the search ---- */
/* The best `top` distinct configurations that fit (sorted; *n found),
 * and the least memory any configuration needs when none fits. */
int st__search(st__search_t *S, st__cfg_t *best, st__cost_t *cost, int top,
               int *n, st__cfg_t *lowest, st__cost_t *lowest_cost);

/* ---- split.c: Alpa's DP (free mode) and Megatron's split ---- */
typedef double (*st__stage_cost_fn)(void *ctx, int s, int n); /* inf: no fit */
double st__split_dp(int L, int p, int B, int nmax, st__stage_cost_fn cost,
                    void *ctx, int *n_out);
double st__split_brute(int L, int p, int B, st__stage_cost_fn cost, void *ctx,
                       int *n_out);
int st__split_megatron(int L, int p, int *n_out);
/* Stages of cost a[s] n + e[s] for n layers, at most u[s] layers each:
 * the split of L layers into P stages of least sum + (B - 1) x the
 * largest, exactly (INFINITY: none fits). */
double st__split_linear(int L, int P, int B, const double *a, const double *e,
                        const int *u, int *n_out);
/* Stages of layers that differ: stage s on layers [k, k + n) costs e[s] +
 * pre[s][k + n] - pre[s][k] and holds at most cap[s * L + k] layers from
 * k: the split of least sum + (B - 1) x the largest, exactly (INFINITY:
 * none fits). */
double st__split_prefix(int L, int P, int B, const double *const *pre,
                        const double *e, const int *cap, int *n_out);

/* Whether a split of W units of work over P stages might keep every
 * rank's fill, work and drain (eval.c's bound: the stages before rank r
 * once, its own m times) under C: stage s takes x_s units, lo[s] <= x_s
 * <= hi[s] (whole ones when integral), in time a[s] x_s + e[s].  0: no
 * split does (a relaxation: the stages' time caps, and for each rank the
 * cheapest fill of the work the stages after it leave), 1: one may.  m
 * need not be whole (m >= 1): a rank that waits for a share rho of the
 * stages before it is the same floor with m / rho and C / rho. */
int st__split_floor(int P, double W, double m, const double *a, const double *e,
                    const double *lo, const double *hi, int integral, double C);

/* ---- cost.c: a token budget's time, cost and energy ---- */
/* p's train_seconds, cost_usd, energy_kwh, price and power for o->tokens
 * (all 0 without a budget; cost 0 where a GPU has no price, energy 0
 * where one has no TDP), and its objective and tokens recorded. */
int st__plan_cost(strata_plan_t *p, const strata_graph_t *g,
                  const strata_cluster_t *c, const strata_plan_opts_t *o);
/* What a choice by objective minimises of p (its step where the figure
 * is not known). */
double st__objective_of(const strata_plan_t *p, int objective);
/* The objective's inputs checked before any search: a budget, a price or
 * a TDP for each node group's GPU, --gpu-price's text. */
int st__objective_ready(const strata_cluster_t *c, const strata_plan_opts_t *o);

/* ---- plan.c: the chosen configuration ---- */
/* The best configurations of S, the first whose stages fit when solved
 * exactly made into the plan (its runners-up in p->top). */
int st__choose(st__search_t *S, strata_plan_t **out);
/* Configuration cf made into a plan, its stages solved exactly (1: a
 * stage does not fit so). */
int st__build_plan(st__search_t *S, const st__cfg_t *cf, const st__cost_t *c,
                   strata_plan_t **out);
void st__plan_config(const st__cfg_t *cf, const st__cost_t *c,
                     const st__search_t *S, strata_plan_config_t *pc);

/* ---- hetero.c: a cluster of node groups of different shapes ---- */
int st__plan_mixed(const strata_graph_t *g, const strata_cluster_t *c,
                   const strata_plan_opts_t *o, strata_plan_t **out);

#endif
