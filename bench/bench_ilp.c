/*
 * bench_ilp.c - times the strategy ILP on random chains of 20, 100 and 500
 * operators with 4, 8 and 16 strategies each, without a memory row and
 * with a budget that binds, with the reductions on and off.  Edge
 * matrices look like resharding costs (zero where the layouts agree) and
 * memory trades against cost, as in real stage ILPs.  Prints the median of
 * several runs, the MIP sizes before and after reduction, and the ratio of
 * unreduced to reduced time measured in the same run.
 *
 * Then the memory-bound cases, each with its proven gap: chains of 100
 * and 200 operators with 8 and 16 strategies under a binding budget,
 * solved as by default (resource DP, then GLPK from its start) and by
 * GLPK alone from the least-memory choice, with the same time limit; and
 * one stage, gpt-7.5b (unfused attention) on 8 devices, 36 layers, every
 * layer its own variables, min-comm under 19.507699712 GB per device.  Never
 * fails on a time.
 *
 * Usage: bench_ilp [--bound-only]   (skip the first table)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intraop/ilp.h"
#include "strata/strata.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;

static double unit(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) / 9007199254740992.0;
}

typedef struct {
  st__ilp_problem_t p;
  double *store;
} chain_t;

static void chain_make(chain_t *c, int n, int ns, int bound) {
  size_t need = (size_t)n * ns * 3 + (size_t)n * ns * ns;
  double *d = c->store = malloc(need * sizeof *d);
  st__ilp_problem_t *p = &c->p;
  memset(p, 0, sizeof *p);
  p->n_nodes = n;
  p->n_edges = n - 1;
  p->nodes = calloc((size_t)n, sizeof *p->nodes);
  p->edges = calloc((size_t)n, sizeof *p->edges);
  double lo_sum = 0, hi_sum = 0;
  for (int u = 0; u < n; u++) {
    st__ilp_node_t *nd = &p->nodes[u];
    double lo = INFINITY, hi = 0;
    nd->n_strat = ns;
    nd->cost = d, d += ns;
    nd->mem = d, d += ns;
    nd->transient = d, d += ns;
    for (int s = 0; s < ns; s++) {
      nd->mem[s] = 1e8 * (1 + 9 * unit());
      nd->cost[s] = 1e17 / nd->mem[s] * (0.5 + unit());
      nd->transient[s] = 1e7 * unit();
      lo = fmin(lo, nd->mem[s]);
      hi = fmax(hi, nd->mem[s]);
    }
    lo_sum += lo, hi_sum += hi;
  }
  for (int k = 0; k < n - 1; k++) {
    st__ilp_edge_t *e = &p->edges[k];
    e->u = k, e->v = k + 1, e->cost = d, d += ns * ns;
    for (int i = 0; i < ns; i++)
      for (int j = 0; j < ns; j++)
        e->cost[i * ns + j] = i % 4 == j % 4 ? 0.0 : 1e8 * (1 + 4 * unit());
  }
  p->mem_budget = bound ? lo_sum + 1e7 + 0.3 * (hi_sum - lo_sum) : 0.0;
}

static void chain_free(chain_t *c) {
  free(c->p.nodes);
  free(c->p.edges);
  free(c->store);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static const char *status_name(st__ilp_status_t s) {
  static const char *names[] = {"optimal", "feasible", "infeasible",
                                "no-solution"};
  return names[s];
}

/* Median seconds of reps solves; *last keeps the last result. */
static double time_solve(const chain_t *c, int reduce, int reps,
                         st__ilp_result_t *last) {
  double t[9];
  st__ilp_opts_t o;
  st__ilp_opts_init(&o);
  o.presolve_reduce = reduce;
  o.time_limit = 5;
  for (int i = 0; i < reps; i++) {
    st__ilp_result_t r;
    double t0 = strata_now();
    if (st__ilp_solve(&c->p, &o, &r) != 0) {
      fprintf(stderr, "solve failed: %s\n", strata_last_error());
      exit(1);
    }
    t[i] = strata_now() - t0;
    if (i + 1 < reps)
      st__ilp_result_free(&r);
    else
      *last = r;
  }
  qsort(t, (size_t)reps, sizeof t[0], cmp_double);
  return t[reps / 2];
}

static void run(int n, int ns, int bound) {
  chain_t c;
  st__ilp_result_t red, full;
  int reps = n >= 100 ? 3 : 5;
  chain_make(&c, n, ns, bound);
  double tr = time_solve(&c, 1, reps, &red);
  double tf = time_solve(&c, 0, reps, &full);
  printf("%5d %3d %-6s %9.4f %9.4f %6.2fx  %-11s %-11s %7d/%-7d %8d/%-8d "
         "%8d/%-8d %s\n",
         n, ns, bound ? "budget" : "none", tr, tf, tf / tr,
         status_name(red.status), status_name(full.status), red.int_vars,
         red.int_vars_before, red.cont_vars, red.cont_vars_before, red.rows,
         red.rows_before,
         fabs(red.objective - full.objective) <=
                 1e-6 * fabs(full.objective) + 1e-9
             ? "same"
             : "DIFFERENT");
  st__ilp_result_free(&red);
  st__ilp_result_free(&full);
  chain_free(&c);
}

static const char *method_name(st__ilp_method_t m) {
  static const char *names[] = {"reduction", "dp", "glpk"};
  return names[m];
}

/* One solve of chain c with dp_points; prints its columns. */
static void bound_solve(const chain_t *c, int dp_points, double limit) {
  st__ilp_opts_t o;
  st__ilp_result_t r;
  st__ilp_opts_init(&o);
  o.time_limit = limit;
  o.dp_points = dp_points;
  if (st__ilp_solve(&c->p, &o, &r) != 0) {
    fprintf(stderr, "solve failed: %s\n", strata_last_error());
    exit(1);
  }
  printf("  %7.3f %-9s %-9s %.6e %8.4f%%", r.solve_seconds,
         status_name(r.status), method_name(r.method), r.objective,
         100 * r.gap);
  st__ilp_result_free(&r);
}

static void bound_chains(void) {
  static const int sizes[] = {100, 200}, strats[] = {8, 16};
  const double limit = 10;
  printf("\nmemory-bound chains (budget 30%% of the way from the least "
         "memory), %g s limit, one run each\n",
         limit);
  printf("%5s %3s | %-52s | %s\n", "nodes", "k",
         "  default: DP, then GLPK from its start",
         "  GLPK alone from the least-memory choice");
  printf("%9s |   %7s %-9s %-9s %-12s %9s |   %7s %-9s %-9s %-12s %9s\n", "",
         "seconds", "status", "proven by", "objective", "gap", "seconds",
         "status", "proven by", "objective", "gap");
  for (size_t i = 0; i < 2; i++)
    for (size_t j = 0; j < 2; j++) {
      chain_t c;
      chain_make(&c, sizes[i], strats[j], 1);
      printf("%5d %3d |", sizes[i], strats[j]);
      bound_solve(&c, 2048, limit);
      printf(" |");
      bound_solve(&c, 0, limit);
      printf("\n");
      chain_free(&c);
    }
}

/* The stage of the report: gpt-7.5b (its unfused attention of 2021, whose
 * budget binds), 8 devices, 36 layers, --full, min-comm, 19.507699712 GB
 * per device. */
static void bound_stage(void) {
  strata_graph_t *g = NULL;
  strata_stage_opts_t o;
  strata_stage_result_t *r = NULL;
  strata_gen_opts_t ov;
  strata_gen_opts_keep(&ov);
  ov.flash_attention = 0;
  if (strata_model_load("gpt-7.5b", &ov, &g)) {
    fprintf(stderr, "bench_ilp: %s\n", strata_last_error());
    return;
  }
  strata_stage_opts_init(&o);
  strata_mesh_default(&o.mesh, 8, 1);
  o.layer_begin = 0, o.layer_end = 36;
  o.with_prologue = 0, o.with_epilogue = 0;
  o.homogeneous = 0;
  o.objective = STRATA_OBJ_MIN_COMM;
  o.memory_budget = 19.507699712e9;
  double t0 = strata_now();
  if (strata_stage_solve(g, &o, &r) == 0)
    printf("\ngpt-7.5b, 8 devices, 36 layers (full ILP: %d integer "
           "variables after reduction), min-comm, 19.507699712 GB: %.3f s, "
           "%s, objective %.6e, proven bound %.6e, gap %.4f%%\n",
           r->int_vars, strata_now() - t0, strata_stage_status_name(r->status),
           r->objective, r->objective_bound, 100 * r->gap);
  else
    fprintf(stderr, "bench_ilp: %s\n", strata_last_error());
  strata_stage_result_destroy(r);
  strata_graph_destroy(g);
}

int main(int argc, char **argv) {
  static const int sizes[] = {20, 100, 500};
  static const int strats[] = {4, 8, 16};
  strata_init();
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc > 1 && !strcmp(argv[1], "--bound-only")) {
    bound_chains();
    bound_stage();
    return 0;
  }
  printf("random chains; median seconds of st__ilp_solve (reduced, "
         "unreduced), ratio unreduced/reduced\n");
  printf("%5s %3s %-6s %9s %9s %7s  %-11s %-11s %15s %17s %17s objective\n",
         "nodes", "k", "memory", "reduced", "full", "ratio", "reduced", "full",
         "int vars", "cont vars", "rows");
  printf("(time limit 5 s per solve; sizes after/before reduction)\n");
  for (int b = 0; b < 2; b++)
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
      for (size_t j = 0; j < sizeof strats / sizeof strats[0]; j++)
        run(sizes[i], strats[j], b);
  bound_chains();
  bound_stage();
  return 0;
}
