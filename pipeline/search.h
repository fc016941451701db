/*
 * search.h - the planner's search (internal to pipeline/).
 *
 * Stage costs come in "kinds": the first stage holds the embedding, the
 * last the head and loss, a single stage both, the middle ones neither.
 * For each kind three subproblems are solved -- (1 layer, 1 micro-batch in
 * flight), (2 layers, 1), (1 layer, 2) -- and memory and time of n layers
 * with f micro-batches in flight follow linearly:
 *   mem(n, f) = base + n*w + n*f*a,  time(n) = t1 + (n-1)*dt.
 * This is exact for fixed layouts and for the homogeneous ILP when the
 * memory limit does not bind; the chosen plan's stages are re-solved
 * exactly.  The outer data parallelism enters analytically: ZeRO-sharded
 * states divide by it, and its gradient all-reduce crosses the inter-node
 * level.
 */
#ifndef STRATA_PIPELINE_SEARCH_H
#define STRATA_PIPELINE_SEARCH_H

#include "pipeline/sub.h"

enum { ST__KIND_ONLY, ST__KIND_FIRST, ST__KIND_MID, ST__KIND_LAST, ST__KINDS };

/* Linear model of one kind of stage. */
typedef struct {
  int ok;
  double base, w, a;                /* memory terms (bytes, outer dp = 1) */
  double sw, sg, so;                /* per-layer ZeRO-shardable states */
  double sbase_w, sbase_g, sbase_o; /* their n-independent part */
  double t1, dt;                    /* seconds per micro-batch, fwd + bwd */
  double s1, ds;                    /* in-stage gradient sync per step */
  double grad1, dgrad; /* gradient bytes per device (for outer sync) */
} st__kindcost_t;

void st__kind_fit(st__kindcost_t *k, const strata_stage_result_t *r11,
                  const strata_stage_result_t *r21,
                  const strata_stage_result_t *r12);
/* Cost of kind k with n layers, f in flight, outer dp, ZeRO stage z. */
double st__kind_mem(const st__kindcost_t *k, int n, int f, int dp, int z);
double st__kind_time(const st__kindcost_t *k, int n);

/* Optimal split of L layers into p stages (each >= 1 layer) minimising
 * sum t_s + (B - 1) * max t_s, with stage s of kind kind_of(s) and its
 * cost t[kind][n] (n = 1..L; INFINITY where it does not fit with the
 * stage's in-flight micro-batches: fit[s][n] says).  Enumerates t_max
 * over the distinct costs (Alpa) with the early stop.  nmax > 0 bounds
 * the layers of one stage (the planner uses twice the mean).  Returns the
 * objective (INFINITY when nothing fits) and the split in n_out[p]. */
typedef double (*st__stage_cost_fn)(void *ctx, int s, int n); /* inf: no fit */
double st__split_dp(int L, int p, int B, int nmax, st__stage_cost_fn cost,
                    void *ctx, int *n_out);
/* The same by enumerating every split (tests). */
double st__split_brute(int L, int p, int B, st__stage_cost_fn cost, void *ctx,
                       int *n_out);
/* Stages of different sizes (Alpa's F(s, k, d), Zheng et al. 2022):
 * choose the number of stages p <= max_stages, each stage's layers and its
 * submesh shape z (of units[z] device units), the shapes' units summing to
 * exactly D, minimising sum t + (B - 1) * max t.  cost(ctx, z, f, k, n):
 * a stage of shape z with layers [k, k + n) and f stages from it to the
 * end (its in-flight micro-batches under 1F1B); INFINITY when it does not
 * fit.  Fills p_out and, per stage, n_out and z_out. */
typedef double (*st__hstage_cost_fn)(void *ctx, int z, int f, int k, int n);
double st__split_hetero(int L, int D, int B, int max_stages, int n_shapes,
                        const int *units, st__hstage_cost_fn cost, void *ctx,
                        int *p_out, int *n_out, int *z_out);
double st__split_hetero_brute(int L, int D, int B, int max_stages, int n_shapes,
                              const int *units, st__hstage_cost_fn cost,
                              void *ctx, int *p_out, int *n_out, int *z_out);
/* Megatron-LM's split: equal, or the remainder taken from first and last. */
int st__split_megatron(int L, int p, int *n_out);

#endif
