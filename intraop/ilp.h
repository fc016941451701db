/*
 * ilp.h - the strategy-selection ILP of intraop/, independent of any model.
 *
 * The caller describes an auxiliary graph: one node per operator, each with
 * a list of candidate strategies (objective cost, persistent memory and
 * transient peak per strategy), and edges between adjacent operators with a
 * cost matrix over strategy pairs (resharding).  st__ilp_solve picks one
 * strategy per node minimising
 *
 *   obj_const + sum_u cost_u[x_u] + sum_(u,v) edge_cost[x_u][x_v]
 *
 * subject to the per-device memory row
 *
 *   mem_const + sum_u mem_u[x_u] + max(0, max_u transient_u[x_u]) <= budget.
 *
 * The MIP follows DESIGN.md: binary X per (node, strategy) with one row
 * sum X = 1 per node; continuous B >= 0 per strategy pair of each edge with
 * the marginal rows sum_j B_ij = X_i and sum_i B_ij = X_j (so B_ij = X_i X_j
 * and only the X are integer); one continuous T >= each node's transient.
 * It is solved with GLPK, whose errors never abort the process (they come
 * back as STRATA_EINTERNAL).  Before solving, the problem is made smaller
 * without changing its optimum (see st__ilp_opts_t.presolve_reduce).
 * Under a memory budget a resource DP over an elimination order comes
 * first (ilp_dp.c): on chain-like graphs it is exact and GLPK is not
 * needed; otherwise it gives GLPK a feasible start and a lower bound, and
 * a result always states the proven gap.
 *
 * Objective and memory in a result are always recomputed from the original
 * problem and the chosen strategies, so they do not depend on the reduction
 * or on solver tolerances.  Infeasibility is decided exactly: the smallest
 * memory any choice needs is computed combinatorially (it is the optimum of
 * the min-memory ILP, which decomposes once the transient peak is fixed).
 *
 * Thread use: every call creates and frees its own GLPK environment
 * (glp_free_env() at the end), so calls may run concurrently on pool
 * threads, but a caller must not hold its own GLPK objects on the same
 * thread across a call.  No GLPK type appears here.
 */
#ifndef STRATA_INTRAOP_ILP_H
#define STRATA_INTRAOP_ILP_H

#include <stddef.h>

typedef struct {
  int n_strat;       /* >= 1 */
  double *cost;      /* [n_strat] objective coefficient (finite) */
  double *mem;       /* [n_strat] persistent bytes per device (>= 0);
                        NULL: all 0 */
  double *transient; /* [n_strat] transient peak bytes (>= 0); NULL: all 0 */
} st__ilp_node_t;

typedef struct {
  int u, v;     /* node indices, u != v; parallel edges are allowed */
  double *cost; /* [n_strat(u) * n_strat(v)] row-major: cost[i * n_v + j] */
} st__ilp_edge_t;

typedef struct {
  int n_nodes, n_edges;
  st__ilp_node_t *nodes;
  st__ilp_edge_t *edges;
  double mem_budget; /* bytes per device; <= 0: no memory row */
  double mem_const;  /* bytes every choice pays (left side of the row) */
  double obj_const;  /* constant added to the objective */
} st__ilp_problem_t;

typedef struct {
  double time_limit;   /* seconds; <= 0: none */
  double mip_gap;      /* relative MIP gap at which the search stops */
  int presolve_reduce; /* 1: reduce the problem before solving */
  int verbose;         /* 1: let GLPK print its progress */
  int dp_points;       /* memory-bound problems: most (memory, cost) points
                          per set in the resource DP; 0: no DP, GLPK from
                          the least-memory choice */
} st__ilp_opts_t;

/* Defaults: 60 s, gap 1e-6, reduction on, quiet, DP with 2048 points. */
void st__ilp_opts_init(st__ilp_opts_t *o);

typedef enum {
  ST__ILP_OPTIMAL,    /* optimal (within mip_gap) */
  ST__ILP_FEASIBLE,   /* time limit reached, best incumbent kept; see gap */
  ST__ILP_INFEASIBLE, /* no choice fits the budget; see min_memory */
  ST__ILP_NO_SOLUTION /* time limit reached before any incumbent (only
                         without a budget: with one, the least-memory
                         choice is always there to start from) */
} st__ilp_status_t;

/* How a result was proven. */
typedef enum {
  ST__ILP_BY_REDUCTION, /* the reductions fixed every node */
  ST__ILP_BY_DP,        /* the resource DP (exact, or closed the gap) */
  ST__ILP_BY_GLPK       /* GLPK's branch-and-bound */
} st__ilp_method_t;

typedef struct {
  st__ilp_status_t status;
  int *choice;       /* [n_nodes] strategy per node (original numbering);
                        all -1 when INFEASIBLE or NO_SOLUTION */
  double objective;  /* of choice, incl. obj_const (0 without a choice) */
  double memory;     /* memory row of choice, incl. mem_const and the
                        transient peak (0 without a choice) */
  double min_memory; /* smallest memory row any choice has; computed when
                        there is a budget (so always when INFEASIBLE) */
  double bound;      /* proven lower bound of the optimum (incl. obj_const);
                        -INFINITY when nothing is proven */
  double gap;        /* (objective - bound) / |objective|: 0 when proven
                        optimal, INFINITY when no bound (or no choice) */
  st__ilp_method_t method;
  double solve_seconds;
  int int_vars, cont_vars, rows;                      /* what GLPK saw */
  int int_vars_before, cont_vars_before, rows_before; /* unreduced MIP */
} st__ilp_result_t;

/* Solve p.  o may be NULL (defaults).  Returns 0 with *r filled (free it
 * with st__ilp_result_free) or a negative STRATA_E* code with a message and
 * *r empty: STRATA_EINVAL for a malformed problem, STRATA_ENOMEM,
 * STRATA_EINTERNAL when GLPK fails.  Infeasibility and time limits are
 * results, not errors. */
int st__ilp_solve(const st__ilp_problem_t *p, const st__ilp_opts_t *o,
                  st__ilp_result_t *r);
void st__ilp_result_free(st__ilp_result_t *r);

/* Write the MIP that st__ilp_solve would hand GLPK (reduced when
 * o->presolve_reduce) to path in CPLEX LP format, atomically: a temporary
 * file in the same folder renamed over path, removed on failure.  Columns
 * are x_<node>_<strategy> (original numbering), b_<k>_<i>_<j> for edge k of
 * the written MIP and t_peak.  GLPK writes the objective constant only as
 * a comment "\* constant term = c *\": a solver reading the file reports
 * the objective without it, and objective = that value + c.  Unreduced, c
 * is obj_const; reduced, c also holds the costs of the nodes and edges
 * whose strategies the reduction fixed (they have no column).  A problem
 * that the reduction solves completely is written unreduced, as a file
 * without columns has no objective that a reader would accept. */
int st__ilp_write_lp(const st__ilp_problem_t *p, const st__ilp_opts_t *o,
                     const char *path);

/* Run fn(arg) with GLPK's error hook installed: a GLPK error inside fn
 * (which GLPK would answer with abort()) unwinds back here, the thread's
 * GLPK environment is freed with every object in it, and the call returns
 * STRATA_EINTERNAL with GLPK's message.  Otherwise returns fn's result; the
 * environment is freed in both cases.  fn must not own memory other than
 * GLPK's across a GLPK call, as an error skips its cleanup.  verbose: let
 * GLPK's terminal output through. */
int st__ilp_glpk_guard(int (*fn)(void *arg), void *arg, int verbose);

#endif
