/*
 * ilp_impl.h - what the ilp*.c files share: the working copy of a problem
 * that the reductions edit (ilp_reduce.c), the flat MIP built from it
 * (ilp_build.c) and the GLPK boundary that loads, solves or writes that
 * MIP (ilp_glpk.c).  The flat MIP is plain arrays so that every allocation
 * of ours happens before GLPK is entered: a GLPK error unwinds with longjmp
 * and must not skip a strata_free.
 */
#ifndef STRATA_INTRAOP_ILP_IMPL_H
#define STRATA_INTRAOP_ILP_IMPL_H

#include <stddef.h>

#include "intraop/ilp.h"

/* A node of the working copy.  Strategies keep their original indices;
 * dropped ones are marked dead.  cost accumulates folded edge costs. */
typedef struct {
  int n, n_alive;
  unsigned char *alive;       /* [n] */
  double *cost, *mem, *trans; /* [n] */
  int fixed;                  /* strategy chosen by the reduction, or -1 */
  int *adj, n_adj;            /* incident edges (indices into ws edges) */
} st__ilp_wnode_t;

typedef struct {
  int u, v;
  double *cost; /* [n_u * n_v], original strategy numbering */
  int dead;     /* folded away */
} st__ilp_wedge_t;

typedef struct {
  int n_nodes, n_edges;
  st__ilp_wnode_t *nodes;
  st__ilp_wedge_t *edges;
  double budget;    /* <= 0: no memory row */
  double obj_const; /* incl. what the reduction folded */
  double mem_const;
  double t_lb; /* lower bound of the transient peak T */
  /* storage */
  unsigned char *alive_pool;
  double *dpool, *epool;
  int *adj_pool;
} st__ilp_ws_t;

int st__ilp_ws_init(st__ilp_ws_t *ws, const st__ilp_problem_t *p);
void st__ilp_ws_free(st__ilp_ws_t *ws);
/* Apply the reductions (parallel edges, dominance, single strategies,
 * separable edges) to a fixed point.  Allocates; 0 or STRATA_ENOMEM. */
int st__ilp_ws_reduce(st__ilp_ws_t *ws);

/* What the resource DP (ilp_dp.c) found. */
typedef struct {
  int applicable; /* the elimination fits the DP's limits */
  int have;       /* choice holds a feasible assignment */
  double bound;   /* proven lower bound of the objective (incl. obj_const),
                     -INFINITY when none; equal to choice's objective when
                     the DP proved it optimal */
} st__ilp_dp_out_t;

void st__ilp_dp_out_init(st__ilp_dp_out_t *out);
/* Solve the memory-bound ws (ws->budget > 0) by DP with at most cap
 * points per set, treating a peak-level range as solved when its bound is
 * within the relative gap of the incumbent, giving up at deadline
 * (strata_now() seconds; <= 0: none).  choice[ws->n_nodes] receives the
 * best feasible assignment when out->have.  Returns 0 (also when the DP
 * does not apply) or STRATA_ENOMEM. */
int st__ilp_dp_solve(const st__ilp_ws_t *ws, int cap, double gap,
                     double deadline, int *choice, st__ilp_dp_out_t *out);

/* Column and row tags: what a column or row stands for, for names and for
 * mapping a solution back.  tag[4*k + 0] is the kind, then up to three
 * integers (node, strategy / edge, i, j). */
enum {
  ST__ILP_COL_X = 1, /* node, strategy */
  ST__ILP_COL_B,     /* edge ordinal, i, j */
  ST__ILP_COL_T,
  ST__ILP_ROW_ONE, /* node */
  ST__ILP_ROW_MU,  /* edge ordinal, i */
  ST__ILP_ROW_MV,  /* edge ordinal, j */
  ST__ILP_ROW_MEM,
  ST__ILP_ROW_PEAK /* node */
};

/* The flat MIP, 1-based like GLPK: columns 1..n_cols, rows 1..n_rows. */
typedef struct {
  int n_cols, n_rows, n_int;
  size_t nnz;
  int *ia, *ja;            /* [nnz + 1] */
  double *ar;              /* [nnz + 1] */
  double *obj;             /* [n_cols + 1]; obj[0] is the constant */
  double *col_lb;          /* [n_cols + 1] lower bound of continuous columns */
  unsigned char *col_bin;  /* [n_cols + 1] */
  unsigned char *row_type; /* [n_rows + 1] 'E' (=), 'U' (<=), 'L' (>=) */
  double *row_rhs;         /* [n_rows + 1] */
  int *col_tag, *row_tag;  /* [4 * (n + 1)] */
} st__ilp_lp_t;

/* Sizes of the MIP for ws without building it. */
void st__ilp_lp_count(const st__ilp_ws_t *ws, int *n_int, int *n_cont,
                      int *n_rows, size_t *nnz);
int st__ilp_lp_build(const st__ilp_ws_t *ws, st__ilp_lp_t *lp);
void st__ilp_lp_free(st__ilp_lp_t *lp);

/* GLPK outcome of a solve. */
typedef enum {
  ST__ILP_GLPK_OPTIMAL,
  ST__ILP_GLPK_FEASIBLE, /* time limit with an incumbent */
  ST__ILP_GLPK_INFEASIBLE,
  ST__ILP_GLPK_NONE /* time limit without an incumbent */
} st__ilp_glpk_outcome_t;

/* What a GLPK solve is given and gives back besides the solution. */
typedef struct {
  const double *start; /* [n_cols + 1] a feasible solution, or NULL */
  double ext_bound;    /* lower bound known beforehand (-INFINITY: none) */
  double bound;        /* out: GLPK's best bound when it stopped, the
                          objective when it finished (-INFINITY: none) */
} st__ilp_glpk_io_t;

/* Solve lp within time_limit seconds (<= 0: none); x[1..n_cols] receives
 * the MIP solution when there is one.  With a start, GLPK begins from it
 * (so it always has a solution); the search stops once the incumbent is
 * within o->mip_gap of the larger of its bound and io->ext_bound. */
int st__ilp_glpk_solve(const st__ilp_lp_t *lp, const st__ilp_opts_t *o,
                       double time_limit, double *x,
                       st__ilp_glpk_outcome_t *outcome, st__ilp_glpk_io_t *io);
/* Write lp with names to path (already created by the caller). */
int st__ilp_glpk_write(const st__ilp_lp_t *lp, const char *path);

#endif
