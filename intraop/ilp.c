/*
 * ilp.c - st__ilp_solve and st__ilp_write_lp: validate the problem, decide
 * feasibility exactly, reduce, build the MIP, hand it to GLPK and map the
 * answer back to the caller's numbering.
 *
 * Two things are computed here rather than by GLPK, because they can be
 * computed exactly and cheaply:
 *   - the objective and memory of a choice, from the original problem, so
 *     a result does not depend on the reduction or on solver tolerances;
 *   - the smallest memory any choice needs.  Once the transient peak is
 *     fixed at a level L, the min-memory ILP decomposes: each node takes
 *     its smallest memory among strategies with transient <= L.  Sweeping
 *     L over the distinct transients (in increasing order, updating each
 *     node's best as strategies become allowed) gives the exact optimum in
 *     O(S log S) for S strategies.  A problem is feasible exactly when this
 *     minimum fits the budget, so infeasible problems never reach GLPK.
 */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "intraop/ilp_impl.h"
#include "strata/core.h"

void st__ilp_opts_init(st__ilp_opts_t *o) {
  o->time_limit = 60.0;
  o->mip_gap = 1e-6;
  o->presolve_reduce = 1;
  o->verbose = 0;
  o->dp_points = 2048;
}

void st__ilp_result_free(st__ilp_result_t *r) {
  if (!r) return;
  strata_free(r->choice);
  memset(r, 0, sizeof *r);
}

/* ---- validation --------------------------------------------------------- */

static int check_values(const double *v, int n, int nonneg, int u,
                        const char *what) {
  for (int s = 0; v && s < n; s++)
    if (!isfinite(v[s]) || (nonneg && v[s] < 0))
      return strata_error(STRATA_EINVAL,
                          "ILP node %d, strategy %d: %s is %g; it must be "
                          "finite%s",
                          u, s, what, v[s], nonneg ? " and >= 0" : "");
  return 0;
}

static int check_node(const st__ilp_node_t *n, int u) {
  int rc;
  if (n->n_strat < 1 || !n->cost)
    return strata_error(STRATA_EINVAL,
                        "ILP node %d has %d strategies%s; each node needs at "
                        "least one, with costs",
                        u, n->n_strat, n->cost ? "" : " and no cost array");
  if ((rc = check_values(n->cost, n->n_strat, 0, u, "the cost"))) return rc;
  if ((rc = check_values(n->mem, n->n_strat, 1, u, "the memory"))) return rc;
  return check_values(n->transient, n->n_strat, 1, u, "the transient memory");
}

static int check_edge(const st__ilp_problem_t *p, int k, size_t *n_pairs) {
  const st__ilp_edge_t *e = &p->edges[k];
  if (e->u < 0 || e->u >= p->n_nodes || e->v < 0 || e->v >= p->n_nodes ||
      e->u == e->v || !e->cost)
    return strata_error(STRATA_EINVAL,
                        "ILP edge %d (%d -> %d) must join two different nodes "
                        "of 0..%d and have a cost matrix",
                        k, e->u, e->v, p->n_nodes - 1);
  size_t n = (size_t)p->nodes[e->u].n_strat * p->nodes[e->v].n_strat;
  for (size_t i = 0; i < n; i++)
    if (!isfinite(e->cost[i]))
      return strata_error(STRATA_EINVAL,
                          "ILP edge %d (%d -> %d): cost[%zu] is not finite", k,
                          e->u, e->v, i);
  *n_pairs += n;
  return 0;
}

static int validate(const st__ilp_problem_t *p, const st__ilp_opts_t *o) {
  size_t cols = 0;
  int rc;
  if (!p || p->n_nodes < 0 || p->n_edges < 0 || (p->n_nodes > 0 && !p->nodes) ||
      (p->n_edges > 0 && !p->edges))
    return strata_error(STRATA_EINVAL, "ILP problem: missing nodes or edges");
  if (!isfinite(p->mem_budget) || !isfinite(p->mem_const) ||
      !isfinite(p->obj_const))
    return strata_error(STRATA_EINVAL,
                        "ILP problem: budget and constants must be finite");
  if (isnan(o->time_limit) || !(o->mip_gap >= 0) || !isfinite(o->mip_gap))
    return strata_error(STRATA_EINVAL,
                        "ILP options: mip_gap must be finite and >= 0 and the "
                        "time limit a number");
  for (int u = 0; u < p->n_nodes; u++) {
    if ((rc = check_node(&p->nodes[u], u))) return rc;
    cols += (size_t)p->nodes[u].n_strat;
  }
  for (int k = 0; k < p->n_edges; k++)
    if ((rc = check_edge(p, k, &cols))) return rc;
  if (cols > (size_t)INT_MAX / 4)
    return strata_error(STRATA_EUNSUPPORTED,
                        "ILP too large: %zu variables; reduce the number of "
                        "strategies per operator",
                        cols);
  return 0;
}

/* ---- exact evaluation --------------------------------------------------- */

static double eval_objective(const st__ilp_problem_t *p, const int *x) {
  double f = p->obj_const;
  for (int u = 0; u < p->n_nodes; u++)
    f += p->nodes[u].cost[x[u]];
  for (int k = 0; k < p->n_edges; k++) {
    const st__ilp_edge_t *e = &p->edges[k];
    f += e->cost[(size_t)x[e->u] * p->nodes[e->v].n_strat + x[e->v]];
  }
  return f;
}

static double eval_memory(const st__ilp_problem_t *p, const int *x) {
  double m = p->mem_const, peak = 0.0;
  for (int u = 0; u < p->n_nodes; u++) {
    const st__ilp_node_t *n = &p->nodes[u];
    if (n->mem) m += n->mem[x[u]];
    if (n->transient && n->transient[x[u]] > peak) peak = n->transient[x[u]];
  }
  return m + peak;
}

/* ---- minimum memory ----------------------------------------------------- */

typedef struct {
  double trans;
  int node, strat;
} titem_t;

static int titem_cmp(const void *a, const void *b) {
  const titem_t *x = a, *y = b;
  if (x->trans != y->trans) return x->trans < y->trans ? -1 : 1;
  if (x->node != y->node) return x->node < y->node ? -1 : 1;
  return (x->strat > y->strat) - (x->strat < y->strat);
}

static double node_val(const double *v, int s) {
  return v ? v[s] : 0.0;
}

/* Smallest transient level at which the sum of per-node minimum memories
 * plus the level is least. */
static double best_level(const st__ilp_problem_t *p, const titem_t *it,
                         size_t n_it, double *best_mem) {
  double sum = 0.0, best = INFINITY, level = 0.0;
  int active = 0;
  for (int u = 0; u < p->n_nodes; u++)
    best_mem[u] = INFINITY;
  for (size_t a = 0, b; a < n_it; a = b) {
    for (b = a; b < n_it && it[b].trans == it[a].trans; b++) {
      double m = node_val(p->nodes[it[b].node].mem, it[b].strat);
      double *bm = &best_mem[it[b].node];
      if (*bm == INFINITY)
        active++, sum += m, *bm = m;
      else if (m < *bm)
        sum += m - *bm, *bm = m;
    }
    double total = sum + (it[a].trans > 0 ? it[a].trans : 0.0);
    if (active == p->n_nodes && total < best) best = total, level = it[a].trans;
  }
  return level;
}

/* Fill x with a choice of least memory; return its memory. */
static int min_memory(const st__ilp_problem_t *p, int *x, double *out) {
  size_t n_it = 0, k = 0;
  for (int u = 0; u < p->n_nodes; u++)
    n_it += (size_t)p->nodes[u].n_strat;
  titem_t *it = strata_malloc(n_it * sizeof *it);
  double *bm = strata_malloc(((size_t)p->n_nodes + 1) * sizeof *bm);
  if (!it || !bm) {
    strata_free(it);
    strata_free(bm);
    return strata_error(STRATA_ENOMEM, "out of memory building the ILP");
  }
  for (int u = 0; u < p->n_nodes; u++)
    for (int s = 0; s < p->nodes[u].n_strat; s++)
      it[k++] = (titem_t){node_val(p->nodes[u].transient, s), u, s};
  qsort(it, n_it, sizeof *it, titem_cmp);
  double level = best_level(p, it, n_it, bm);
  for (int u = 0; u < p->n_nodes; u++) {
    const st__ilp_node_t *n = &p->nodes[u];
    x[u] = -1;
    for (int s = 0; s < n->n_strat; s++)
      if (node_val(n->transient, s) <= level &&
          (x[u] < 0 || node_val(n->mem, s) < node_val(n->mem, x[u])))
        x[u] = s;
  }
  *out = eval_memory(p, x);
  strata_free(it);
  strata_free(bm);
  return 0;
}

/* ---- solving ------------------------------------------------------------ */

/* The best feasible choice found so far, in r->choice. */
typedef struct {
  const st__ilp_problem_t *p;
  st__ilp_result_t *r;
  int have;
  double obj;
} best_t;

static int fits(const st__ilp_problem_t *p, const int *x) {
  if (p->mem_budget <= 0) return 1;
  return eval_memory(p, x) <= p->mem_budget + 1e-9 * fabs(p->mem_budget);
}

/* Keep x if it fits and beats the best so far (ties keep the earlier). */
static void offer(best_t *b, const int *x) {
  if (!fits(b->p, x)) return;
  double f = eval_objective(b->p, x);
  if (b->have && !(f < b->obj)) return;
  memcpy(b->r->choice, x, (size_t)b->p->n_nodes * sizeof *x);
  b->have = 1;
  b->obj = f;
}

/* Relative gap; below 1e-12 it is the rounding of sums taken in another
 * order (the DP's bound against the objective recomputed here): 0. */
static double rel_gap(double obj, double bound) {
  double g = (obj - bound) / fmax(fabs(obj), DBL_EPSILON);
  return g > 1e-12 ? g : 0.0;
}

/* Choice of the MIP solution x: fixed nodes from the reduction, the others
 * from their largest X (first on ties). */
static int extract_choice(const st__ilp_ws_t *ws, const st__ilp_lp_t *lp,
                          const double *x, int *choice) {
  double *best = strata_malloc(((size_t)ws->n_nodes + 1) * sizeof *best);
  if (!best) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int u = 0; u < ws->n_nodes; u++) {
    choice[u] = ws->nodes[u].fixed;
    best[u] = 0.5;
  }
  for (int j = 1; j <= lp->n_cols; j++) {
    const int *t = lp->col_tag + 4 * j;
    if (t[0] == ST__ILP_COL_X && x[j] > best[t[1]])
      best[t[1]] = x[j], choice[t[1]] = t[2];
  }
  strata_free(best);
  for (int u = 0; u < ws->n_nodes; u++)
    if (choice[u] < 0)
      return strata_error(STRATA_EINTERNAL,
                          "GLPK's solution selects no strategy for node %d", u);
  return 0;
}

/* The columns of the MIP for choice x (GLPK's start): X and B from the
 * strategies, T the peak of the nodes with variables. */
static int start_columns(const st__ilp_ws_t *ws, const st__ilp_lp_t *lp,
                         const int *x, double *col) {
  int *edge = strata_malloc(((size_t)ws->n_edges + 1) * sizeof *edge);
  if (!edge) return strata_error(STRATA_ENOMEM, "out of memory");
  int n = 0;
  double peak = ws->t_lb;
  for (int k = 0; k < ws->n_edges; k++)
    if (!ws->edges[k].dead) edge[n++] = k;
  for (int u = 0; u < ws->n_nodes; u++)
    if (ws->nodes[u].fixed < 0) peak = fmax(peak, ws->nodes[u].trans[x[u]]);
  for (int j = 1; j <= lp->n_cols; j++) {
    const int *t = lp->col_tag + 4 * j;
    const st__ilp_wedge_t *e =
        &ws->edges[edge[t[0] == ST__ILP_COL_B ? t[1] : 0]];
    if (t[0] == ST__ILP_COL_X)
      col[j] = x[t[1]] == t[2];
    else if (t[0] == ST__ILP_COL_B)
      col[j] = x[e->u] == t[2] && x[e->v] == t[3];
    else
      col[j] = peak;
  }
  strata_free(edge);
  return 0;
}

/* The DP under a budget: may prove the optimum alone; else leaves GLPK a
 * start (in b) and a bound.  *done: nothing left for GLPK. */
static int try_dp(const st__ilp_opts_t *o, const st__ilp_ws_t *ws,
                  double deadline, best_t *b, double *bound, int *done) {
  st__ilp_dp_out_t dout;
  const st__ilp_problem_t *p = b->p;
  *done = 0;
  if (p->mem_budget <= 0 || o->dp_points <= 0) return 0;
  int *x = strata_malloc(((size_t)p->n_nodes + 1) * sizeof *x);
  if (!x) return strata_error(STRATA_ENOMEM, "out of memory");
  int rc = st__ilp_dp_solve(ws, o->dp_points, o->mip_gap, deadline, x, &dout);
  if (!rc && dout.have) offer(b, x);
  strata_free(x);
  *bound = dout.bound;
  *done = b->have && rel_gap(b->obj, *bound) <= o->mip_gap;
  return rc;
}

/* GLPK's status and the best bound become the result's. */
static void glpk_status(best_t *b, st__ilp_glpk_outcome_t oc, double bound,
                        double mip_gap) {
  st__ilp_result_t *r = b->r;
  r->method = ST__ILP_BY_GLPK;
  r->bound = bound;
  if (!b->have) {
    r->status = oc == ST__ILP_GLPK_INFEASIBLE ? ST__ILP_INFEASIBLE
                                              : ST__ILP_NO_SOLUTION;
    return;
  }
  if (oc == ST__ILP_GLPK_INFEASIBLE) /* only on GLPK's tolerances */
    strata_log(STRATA_LOG_WARN, "ILP: GLPK found no solution although one "
                                "fits; returning the best choice known");
  r->status = oc == ST__ILP_GLPK_OPTIMAL || rel_gap(b->obj, bound) <= mip_gap
                  ? ST__ILP_OPTIMAL
                  : ST__ILP_FEASIBLE;
}

static int run_glpk(const st__ilp_opts_t *o, const st__ilp_ws_t *ws,
                    const st__ilp_lp_t *lp, double deadline, best_t *b,
                    double bound) {
  st__ilp_glpk_outcome_t oc;
  st__ilp_glpk_io_t io = {NULL, bound, -INFINITY};
  double *x = strata_calloc((size_t)lp->n_cols + 1, sizeof *x);
  double *sx =
      b->have ? strata_calloc((size_t)lp->n_cols + 1, sizeof *sx) : NULL;
  int *c = strata_malloc(((size_t)ws->n_nodes + 1) * sizeof *c);
  int rc = 0;
  if (!x || !c || (b->have && !sx)) {
    rc = strata_error(STRATA_ENOMEM, "out of memory");
    goto out;
  }
  if (sx && (rc = start_columns(ws, lp, b->r->choice, sx))) goto out;
  io.start = sx;
  double left = deadline > 0 ? fmax(deadline - strata_now(), 1e-3) : 0;
  if ((rc = st__ilp_glpk_solve(lp, o, left, x, &oc, &io))) goto out;
  if (oc == ST__ILP_GLPK_OPTIMAL || oc == ST__ILP_GLPK_FEASIBLE) {
    if ((rc = extract_choice(ws, lp, x, c))) goto out;
    offer(b, c);
  }
  glpk_status(b, oc, fmax(bound, io.bound), o->mip_gap);
out:
  strata_free(x);
  strata_free(sx);
  strata_free(c);
  return rc;
}

/* start: a feasible choice to begin from (the least-memory one), or NULL. */
static int solve_reduced(const st__ilp_problem_t *p, const st__ilp_opts_t *o,
                         const st__ilp_ws_t *ws, const int *start,
                         double deadline, st__ilp_result_t *r) {
  st__ilp_lp_t lp;
  best_t b = {p, r, 0, 0.0};
  double bound = -INFINITY;
  int done, rc = st__ilp_lp_build(ws, &lp);
  if (rc) return rc;
  r->int_vars = lp.n_int;
  r->cont_vars = lp.n_cols - lp.n_int;
  r->rows = lp.n_rows;
  if (lp.n_int == 0) { /* the reduction fixed every node */
    for (int u = 0; u < ws->n_nodes; u++)
      r->choice[u] = ws->nodes[u].fixed;
    r->status = ST__ILP_OPTIMAL;
    r->method = ST__ILP_BY_REDUCTION;
    r->int_vars = r->cont_vars = r->rows = 0;
    goto out;
  }
  if (start) offer(&b, start);
  /* the DP may take half the time left: GLPK gets the rest */
  double now = strata_now();
  rc = try_dp(o, ws, deadline > 0 ? now + (deadline - now) / 2 : 0, &b, &bound,
              &done);
  if (!rc && done) {
    r->status = ST__ILP_OPTIMAL;
    r->method = ST__ILP_BY_DP;
    r->bound = bound;
  } else if (!rc) {
    rc = run_glpk(o, ws, &lp, deadline, &b, bound);
  }
out:
  st__ilp_lp_free(&lp);
  return rc;
}

static int solve_checked(const st__ilp_problem_t *p, const st__ilp_opts_t *o,
                         double deadline, st__ilp_result_t *r) {
  st__ilp_ws_t ws;
  size_t nnz;
  int *start = NULL, rc = st__ilp_ws_init(&ws, p);
  if (rc) return rc;
  st__ilp_lp_count(&ws, &r->int_vars_before, &r->cont_vars_before,
                   &r->rows_before, &nnz);
  if (p->mem_budget > 0) {
    start = strata_malloc(((size_t)p->n_nodes + 1) * sizeof *start);
    if (!start) {
      rc = strata_error(STRATA_ENOMEM, "out of memory");
      goto out;
    }
    if ((rc = min_memory(p, start, &r->min_memory))) goto out;
    if (r->min_memory > p->mem_budget) {
      r->status = ST__ILP_INFEASIBLE;
      goto out;
    }
  }
  if (o->presolve_reduce && (rc = st__ilp_ws_reduce(&ws))) goto out;
  rc = solve_reduced(p, o, &ws, start, deadline, r);
out:
  strata_free(start);
  st__ilp_ws_free(&ws);
  return rc;
}

/* Objective, memory, bound and gap of the chosen strategies.  A bound
 * a hair above the objective (solver tolerances) is clamped to it; an
 * optimum without a recorded bound (fixed by the reductions, or GLPK's
 * word) is its own bound. */
static void finish(const st__ilp_problem_t *p, st__ilp_result_t *r) {
  if (r->status != ST__ILP_OPTIMAL && r->status != ST__ILP_FEASIBLE) {
    for (int u = 0; u < p->n_nodes; u++)
      r->choice[u] = -1;
    r->bound = -INFINITY;
    r->gap = INFINITY;
    return;
  }
  r->objective = eval_objective(p, r->choice);
  r->memory = eval_memory(p, r->choice);
  if (r->status == ST__ILP_OPTIMAL && !(r->bound > -INFINITY))
    r->bound = r->objective;
  r->bound = fmin(r->bound, r->objective);
  r->gap = r->bound > -INFINITY ? rel_gap(r->objective, r->bound) : INFINITY;
}

int st__ilp_solve(const st__ilp_problem_t *p, const st__ilp_opts_t *o,
                  st__ilp_result_t *r) {
  st__ilp_opts_t def;
  double t0 = strata_now();
  int rc;
  memset(r, 0, sizeof *r);
  if (!o) st__ilp_opts_init(&def), o = &def;
  if ((rc = validate(p, o))) return rc;
  r->choice = strata_malloc(((size_t)p->n_nodes + 1) * sizeof(int));
  if (!r->choice) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int u = 0; u < p->n_nodes; u++)
    r->choice[u] = -1;
  r->bound = -INFINITY;
  rc = solve_checked(p, o, o->time_limit > 0 ? t0 + o->time_limit : 0, r);
  if (rc) {
    st__ilp_result_free(r);
    return rc;
  }
  finish(p, r);
  r->solve_seconds = strata_now() - t0;
  return 0;
}

/* ---- writing ------------------------------------------------------------ */

/* A scratch file for glp_write_lp (it writes a path itself), in the
 * temporary folder: its text is then written to the real output through
 * strata_file_write_atomic, like every other output (atomic, and in place
 * for a device such as /dev/null). */
static int make_temp(char **tmp) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  size_t n = strlen(dir) + 32;
  *tmp = strata_malloc(n);
  if (!*tmp) return strata_error(STRATA_ENOMEM, "out of memory");
  snprintf(*tmp, n, "%s/strata-lp-XXXXXX", dir);
  int fd = mkstemp(*tmp);
  if (fd < 0) {
    int rc = strata_error(STRATA_EIO,
                          "cannot create a temporary file in "
                          "'%s': %s",
                          dir, strerror(errno));
    strata_free(*tmp);
    *tmp = NULL;
    return rc;
  }
  close(fd);
  return 0;
}

static int copy_out(const char *tmp, const char *path) {
  char *text = NULL;
  size_t len = 0;
  int rc = strata_file_read(tmp, 0, &text, &len);
  if (!rc) rc = strata_file_write_atomic(path, text, len);
  strata_free(text);
  return rc;
}

/* Reduce ws unless that leaves no column: GLPK writes an empty problem
 * without an objective, which no reader accepts, so such a problem is
 * written unreduced. */
static int reduce_for_file(st__ilp_ws_t *ws, const st__ilp_problem_t *p) {
  int n_int, n_cont, n_rows, rc = st__ilp_ws_reduce(ws);
  if (rc) return rc;
  st__ilp_lp_count(ws, &n_int, &n_cont, &n_rows, NULL);
  if (n_int > 0) return 0;
  st__ilp_ws_free(ws);
  return st__ilp_ws_init(ws, p);
}

int st__ilp_write_lp(const st__ilp_problem_t *p, const st__ilp_opts_t *o,
                     const char *path) {
  st__ilp_opts_t def;
  st__ilp_ws_t ws;
  st__ilp_lp_t lp;
  char *tmp = NULL;
  int rc;
  if (!o) st__ilp_opts_init(&def), o = &def;
  if (!path) return strata_error(STRATA_EINVAL, "ILP: no output path");
  if ((rc = validate(p, o))) return rc;
  if ((rc = st__ilp_ws_init(&ws, p))) return rc;
  memset(&lp, 0, sizeof lp);
  if (o->presolve_reduce && (rc = reduce_for_file(&ws, p))) goto out;
  if ((rc = st__ilp_lp_build(&ws, &lp))) goto out;
  if ((rc = make_temp(&tmp))) goto out;
  rc = st__ilp_glpk_write(&lp, tmp);
  if (!rc) rc = copy_out(tmp, path);
  unlink(tmp);
out:
  strata_free(tmp);
  st__ilp_lp_free(&lp);
  st__ilp_ws_free(&ws);
  return rc;
}
