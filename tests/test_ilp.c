/*
 * test_ilp.c - the strategy-selection ILP against exhaustive search on
 * random small graphs (chains, diamonds, residual branches, small DAGs,
 * with parallel and reversed edges, duplicate strategies, memory-bound and
 * infeasible budgets), with and without the reductions; the LP file round
 * trip through glp_read_lp; a case where the degree-based flow balance is
 * wrong; the time limit (always a solution under a budget, with its
 * proven gap); a binding-limit chain that GLPK alone could not solve; the
 * resource DP, thinned and not, and GLPK from a start, all against
 * exhaustive search; allocation failure injection; GLPK's error hook.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glpk.h>

#include "intraop/ilp.h"
#include "strata/core.h"
#include "testlib.h"

/* ---- random problems ---------------------------------------------------- */

typedef struct {
  uint64_t s;
} rng_t;

static uint64_t rnd(rng_t *r) {
  r->s ^= r->s << 13;
  r->s ^= r->s >> 7;
  r->s ^= r->s << 17;
  return r->s;
}
static int rnd_int(rng_t *r, int n) {
  return (int)(rnd(r) % (uint64_t)n);
}
static double rnd_unit(rng_t *r) {
  return (double)(rnd(r) >> 11) / 9007199254740992.0;
}

#define MAXN 8
#define MAXE 40

/* A problem with its own storage. */
typedef struct {
  st__ilp_problem_t p;
  st__ilp_node_t nodes[MAXN];
  st__ilp_edge_t edges[MAXE];
  double cost[MAXN][4], mem[MAXN][4], trans[MAXN][4];
  double ecost[MAXE][16];
} tp_t;

static void tp_add_edge(tp_t *t, rng_t *r, int u, int v) {
  int k = t->p.n_edges++;
  int n = t->nodes[u].n_strat * t->nodes[v].n_strat;
  t->edges[k] = (st__ilp_edge_t){u, v, t->ecost[k]};
  for (int i = 0; i < n; i++)
    t->ecost[k][i] = rnd_int(r, 4) == 0 ? 0.0 : floor(rnd_unit(r) * 50.0);
}

static void tp_nodes(tp_t *t, rng_t *r, int n) {
  int with_trans = rnd_int(r, 2);
  t->p.n_nodes = n;
  for (int u = 0; u < n; u++) {
    int ns = 1 + rnd_int(r, 4);
    t->nodes[u] = (st__ilp_node_t){ns, t->cost[u], t->mem[u],
                                   with_trans ? t->trans[u] : NULL};
    for (int s = 0; s < ns; s++) {
      t->cost[u][s] = floor(rnd_unit(r) * 100.0);
      t->mem[u][s] = floor(rnd_unit(r) * 100.0);
      t->trans[u][s] = rnd_int(r, 3) ? floor(rnd_unit(r) * 60.0) : 0.0;
    }
    if (ns > 1 && rnd_int(r, 4) == 0) { /* an identical twin strategy */
      t->cost[u][ns - 1] = t->cost[u][0];
      t->mem[u][ns - 1] = t->mem[u][0];
      t->trans[u][ns - 1] = t->trans[u][0];
    }
  }
}

/* Shapes: 0 chain, 1 diamonds, 2 residual branches, 3 random DAG. */
static void tp_edges(tp_t *t, rng_t *r, int shape) {
  int n = t->p.n_nodes;
  for (int u = 0; u + 1 < n; u++) {
    if (shape == 1 && u + 2 < n && u % 2 == 0) {
      tp_add_edge(t, r, u, u + 1);
      tp_add_edge(t, r, u, u + 2);
      tp_add_edge(t, r, u + 1, u + 2);
    } else if (shape == 2 && u + 2 < n && u % 2 == 0) {
      tp_add_edge(t, r, u, u + 1);
      tp_add_edge(t, r, u + 1, u + 2);
      tp_add_edge(t, r, u, u + 2);
    } else if (shape == 3) {
      for (int v = u + 1; v < n; v++)
        if (v == u + 1 || rnd_int(r, 3) == 0) tp_add_edge(t, r, u, v);
    } else if (shape != 1 && shape != 2) {
      tp_add_edge(t, r, u, u + 1);
    } else if (u % 2 == 1) {
      tp_add_edge(t, r, u, u + 1);
    }
  }
  if (n >= 2 && rnd_int(r, 4) == 0) { /* a parallel or reversed edge */
    int u = rnd_int(r, n - 1);
    if (rnd_int(r, 2))
      tp_add_edge(t, r, u, u + 1);
    else
      tp_add_edge(t, r, u + 1, u);
  }
}

/* ---- exhaustive search -------------------------------------------------- */

static double eval_obj(const st__ilp_problem_t *p, const int *x) {
  double f = p->obj_const;
  for (int u = 0; u < p->n_nodes; u++)
    f += p->nodes[u].cost[x[u]];
  for (int k = 0; k < p->n_edges; k++) {
    const st__ilp_edge_t *e = &p->edges[k];
    f += e->cost[x[e->u] * p->nodes[e->v].n_strat + x[e->v]];
  }
  return f;
}

static double eval_mem(const st__ilp_problem_t *p, const int *x) {
  double m = p->mem_const, pk = 0;
  for (int u = 0; u < p->n_nodes; u++) {
    m += p->nodes[u].mem ? p->nodes[u].mem[x[u]] : 0.0;
    if (p->nodes[u].transient && p->nodes[u].transient[x[u]] > pk)
      pk = p->nodes[u].transient[x[u]];
  }
  return m + pk;
}

typedef struct {
  int feasible, n_opt;
  double best, min_mem, max_mem;
  int arg[MAXN];
} brute_t;

static int next_assign(const st__ilp_problem_t *p, int *x) {
  for (int u = 0; u < p->n_nodes; u++) {
    if (++x[u] < p->nodes[u].n_strat) return 1;
    x[u] = 0;
  }
  return 0;
}

static void brute_mem(const st__ilp_problem_t *p, brute_t *b) {
  int x[MAXN] = {0};
  b->min_mem = INFINITY;
  b->max_mem = -INFINITY;
  do {
    double m = eval_mem(p, x);
    if (m < b->min_mem) b->min_mem = m;
    if (m > b->max_mem) b->max_mem = m;
  } while (next_assign(p, x));
}

static void brute(const st__ilp_problem_t *p, brute_t *b) {
  int x[MAXN] = {0};
  brute_mem(p, b);
  b->feasible = 0;
  b->best = INFINITY;
  do {
    if (p->mem_budget > 0 && eval_mem(p, x) > p->mem_budget) continue;
    double f = eval_obj(p, x);
    if (f < b->best - 1e-9) {
      b->best = f, b->n_opt = 1, b->feasible = 1;
      memcpy(b->arg, x, sizeof x);
    } else if (f <= b->best + 1e-9) {
      b->n_opt++;
    }
  } while (next_assign(p, x));
}

/* Budget mode: 0 none, 1 between min and max, 2 below min, 3 above max. */
static void tp_budget(tp_t *t, rng_t *r) {
  brute_t b;
  int mode = rnd_int(r, 6);
  t->p.mem_const = rnd_int(r, 2) ? 7.0 : 0.0;
  t->p.obj_const = rnd_int(r, 2) ? 3.5 : 0.0;
  brute_mem(&t->p, &b);
  if (mode <= 1)
    t->p.mem_budget = 0;
  else if (mode <= 3)
    t->p.mem_budget = b.min_mem + 0.5 + rnd_unit(r) * (b.max_mem - b.min_mem);
  else if (mode == 4)
    t->p.mem_budget = b.min_mem - 0.5;
  else
    t->p.mem_budget = b.max_mem + 1.0;
  if (t->p.mem_budget <= 0 && mode > 1) t->p.mem_budget = 0.25;
}

static void tp_random(tp_t *t, rng_t *r, int shape) {
  memset(t, 0, sizeof *t);
  tp_nodes(t, r, 3 + rnd_int(r, 5));
  t->p.nodes = t->nodes;
  t->p.edges = t->edges;
  tp_edges(t, r, shape);
  tp_budget(t, r);
}

/* ---- checks ------------------------------------------------------------- */

static void check_against(const st__ilp_problem_t *p, const brute_t *b,
                          const st__ilp_result_t *r) {
  if (!b->feasible) {
    ASSERT_EQ(r->status, ST__ILP_INFEASIBLE);
    ASSERT_NEAR(r->min_memory, b->min_mem, 1e-9, 1e-9);
    ASSERT(r->min_memory > p->mem_budget);
    for (int u = 0; u < p->n_nodes; u++)
      ASSERT_EQ(r->choice[u], -1);
    return;
  }
  ASSERT_EQ(r->status, ST__ILP_OPTIMAL);
  ASSERT_NEAR(r->objective, b->best, 1e-6, 1e-9);
  ASSERT_NEAR(eval_obj(p, r->choice), r->objective, 1e-12, 1e-12);
  /* the proven bound is below the true optimum and closes the gap */
  ASSERT(r->bound <= b->best + 1e-9 * (1 + fabs(b->best)));
  ASSERT(r->gap >= 0 && r->gap <= 1e-6);
  ASSERT_NEAR(eval_mem(p, r->choice), r->memory, 1e-12, 1e-12);
  if (p->mem_budget > 0) {
    ASSERT(r->memory <= p->mem_budget * (1 + 1e-9));
    ASSERT_NEAR(r->min_memory, b->min_mem, 1e-9, 1e-9);
  }
  if (b->n_opt == 1)
    for (int u = 0; u < p->n_nodes; u++)
      ASSERT_EQ(r->choice[u], b->arg[u]);
}

static void opts_exact(st__ilp_opts_t *o, int reduce) {
  st__ilp_opts_init(o);
  o->mip_gap = 0.0;
  o->presolve_reduce = reduce;
}

static int unreduced_rows(const st__ilp_problem_t *p) {
  int rows = p->n_nodes, peak = 0;
  for (int k = 0; k < p->n_edges; k++)
    rows += p->nodes[p->edges[k].u].n_strat + p->nodes[p->edges[k].v].n_strat;
  for (int u = 0; u < p->n_nodes; u++) {
    const st__ilp_node_t *n = &p->nodes[u];
    for (int s = 0; n->transient && s < n->n_strat; s++)
      if (n->transient[s] > 0) {
        peak++;
        break;
      }
  }
  if (p->mem_budget > 0) rows += 1 + peak;
  return rows;
}

static void check_sizes(const st__ilp_problem_t *p, const st__ilp_result_t *r,
                        int reduce) {
  int ints = 0;
  for (int u = 0; u < p->n_nodes; u++)
    ints += p->nodes[u].n_strat;
  ASSERT_EQ(r->int_vars_before, ints);
  ASSERT_EQ(r->rows_before, unreduced_rows(p));
  if (r->status == ST__ILP_INFEASIBLE) return;
  ASSERT(r->int_vars <= r->int_vars_before);
  ASSERT(r->cont_vars <= r->cont_vars_before);
  ASSERT(r->rows <= r->rows_before);
  if (!reduce) {
    ASSERT_EQ(r->int_vars, r->int_vars_before);
    ASSERT_EQ(r->cont_vars, r->cont_vars_before);
    ASSERT_EQ(r->rows, r->rows_before);
  }
}

/* ---- LP file round trip ------------------------------------------------- */

/* The constant GLPK wrote as a comment, or 0 when there is none. */
static double lp_constant(const char *path) {
  char *text;
  size_t len;
  double c = 0.0;
  ASSERT_OK(strata_file_read(path, 0, &text, &len));
  const char *at = strstr(text, "constant term = ");
  if (at) c = strtod(at + strlen("constant term = "), NULL);
  strata_free(text);
  return c;
}

/* Solve the file with GLPK alone: objective incl. the comment's constant. */
static int solve_lp_file(const char *path, double *obj) {
  glp_iocp parm;
  glp_term_out(getenv("LPDEBUG") ? GLP_ON : GLP_OFF);
  glp_prob *P = glp_create_prob();
  int rc = glp_read_lp(P, NULL, path);
  if (rc == 0) {
    glp_init_iocp(&parm);
    parm.presolve = GLP_ON;
    parm.msg_lev = GLP_MSG_OFF;
    rc = glp_intopt(P, &parm);
    if (rc == 0 && glp_mip_status(P) != GLP_OPT) rc = -1;
    *obj = glp_mip_obj_val(P) + lp_constant(path);
  }
  glp_delete_prob(P);
  glp_free_env();
  return rc;
}

static void check_lp_round_trip(const st__ilp_problem_t *p, double objective,
                                int reduce, int id) {
  st__ilp_opts_t o;
  char path[600];
  double obj = 0;
  opts_exact(&o, reduce);
  snprintf(path, sizeof path, "%s/case%d_%d.lp", test_scratch_dir(), id,
           reduce);
  ASSERT_OK(st__ilp_write_lp(p, &o, path));
  ASSERT_EQ(solve_lp_file(path, &obj), 0);
  ASSERT_NEAR(obj, objective, 1e-6, 1e-9);
  if (!reduce && p->obj_const != 0)
    ASSERT_NEAR(lp_constant(path), p->obj_const, 1e-12, 0);
}

/* ---- tests -------------------------------------------------------------- */

TEST(matches_brute_force) {
  rng_t r = {0x9E3779B97F4A7C15ull};
  int n_infeasible = 0, n_bound = 0, n_unique = 0, n_reduced = 0;
  int n_method[3] = {0, 0, 0}; /* reduction, DP, GLPK */
  long sz[6] = {0};
  static tp_t t;
  for (int c = 0; c < 240; c++) {
    st__ilp_opts_t o;
    st__ilp_result_t a, b;
    brute_t bf;
    tp_random(&t, &r, c % 4);
    brute(&t.p, &bf);
    opts_exact(&o, 1);
    ASSERT_OK(st__ilp_solve(&t.p, &o, &a));
    opts_exact(&o, 0);
    ASSERT_OK(st__ilp_solve(&t.p, &o, &b));
    check_against(&t.p, &bf, &a);
    check_against(&t.p, &bf, &b);
    check_sizes(&t.p, &a, 1);
    check_sizes(&t.p, &b, 0);
    /* the other ways through: a DP whose sets are thinned to one point
     * (a heuristic start and bound for GLPK), and GLPK alone from the
     * least-memory start */
    for (int pts = 0; pts < 2 && t.p.mem_budget > 0; pts++) {
      st__ilp_result_t h;
      opts_exact(&o, c % 2);
      o.dp_points = pts;
      ASSERT_OK(st__ilp_solve(&t.p, &o, &h));
      check_against(&t.p, &bf, &h);
      if (bf.feasible) n_method[h.method]++;
      st__ilp_result_free(&h);
    }
    if (bf.feasible && t.p.mem_budget > 0) n_method[a.method]++;
    if (bf.feasible) {
      ASSERT_NEAR(a.objective, b.objective, 1e-9, 1e-12);
      if (c % 8 == 0) {
        check_lp_round_trip(&t.p, a.objective, 1, c);
        check_lp_round_trip(&t.p, a.objective, 0, c);
      }
      /* memory-bound: the unconstrained optimum does not fit */
      brute_t free_bf;
      double budget = t.p.mem_budget;
      t.p.mem_budget = 0;
      brute(&t.p, &free_bf);
      t.p.mem_budget = budget;
      if (budget > 0 && free_bf.best < bf.best - 1e-9) n_bound++;
      n_unique += bf.n_opt == 1;
      n_reduced += a.int_vars < a.int_vars_before;
      sz[0] += a.int_vars_before, sz[1] += a.int_vars;
      sz[2] += a.cont_vars_before, sz[3] += a.cont_vars;
      sz[4] += a.rows_before, sz[5] += a.rows;
    } else {
      n_infeasible++;
    }
    st__ilp_result_free(&a);
    st__ilp_result_free(&b);
  }
  if (getenv("ILP_TEST_VERBOSE"))
    fprintf(stderr, "  %d infeasible, %d memory-bound, %d unique, %d reduced\n",
            n_infeasible, n_bound, n_unique, n_reduced);
  if (getenv("ILP_TEST_VERBOSE"))
    fprintf(stderr,
            "  sizes before/after: int %ld/%ld cont %ld/%ld rows "
            "%ld/%ld\n",
            sz[0], sz[1], sz[2], sz[3], sz[4], sz[5]);
  if (getenv("ILP_TEST_VERBOSE"))
    fprintf(stderr, "  budgeted, proven by reduction/DP/GLPK: %d/%d/%d\n",
            n_method[0], n_method[1], n_method[2]);
  /* the generator covers what it should */
  ASSERT(n_method[1] >= 30 && n_method[2] >= 30);
  ASSERT(n_infeasible >= 10);
  ASSERT(n_bound >= 10);
  ASSERT(n_unique >= 100);
  ASSERT(n_reduced >= 50);
}

TEST(default_gap_close_to_optimum) {
  rng_t r = {12345};
  static tp_t t;
  for (int c = 0; c < 40; c++) {
    st__ilp_result_t a;
    brute_t bf;
    tp_random(&t, &r, 3);
    brute(&t.p, &bf);
    ASSERT_OK(st__ilp_solve(&t.p, NULL, &a));
    if (bf.feasible)
      ASSERT_NEAR(a.objective, bf.best, 1e-6, 1e-9);
    else
      ASSERT_EQ(a.status, ST__ILP_INFEASIBLE);
    st__ilp_result_free(&a);
  }
}

/* K(2,2): a, b -> c, d.  c has two predecessors.  Degree-based balance
 * (out-flow of a node = outdeg * X, in-flow = indeg * X, summed over its
 * edges) lets a send both units to c and b both to d, skipping the
 * expensive edges a -> d and b -> c; the marginal rows cannot. */
static double k22_cost[4][4] = {
    {0, 0, 0, 0}, {10, 12, 13, 10}, {11, 10, 10, 14}, {0, 0, 0, 0}};
static double k22_node[4][2] = {{0, 1}, {0, 2}, {0, 3}, {0, 4}};
static const int k22_uv[4][2] = {{0, 2}, {0, 3}, {1, 2}, {1, 3}};

static void k22_problem(st__ilp_problem_t *p, st__ilp_node_t *n,
                        st__ilp_edge_t *e) {
  memset(p, 0, sizeof *p);
  for (int u = 0; u < 4; u++)
    n[u] = (st__ilp_node_t){2, k22_node[u], NULL, NULL};
  for (int k = 0; k < 4; k++)
    e[k] = (st__ilp_edge_t){k22_uv[k][0], k22_uv[k][1], k22_cost[k]};
  p->n_nodes = 4;
  p->n_edges = 4;
  p->nodes = n;
  p->edges = e;
}

/* The degree-based formulation, built directly with GLPK. */
static double degree_based_optimum(void) {
  glp_term_out(GLP_OFF);
  glp_prob *P = glp_create_prob();
  int ia[200], ja[200], nz = 0;
  double ar[200];
  glp_add_cols(P, 8 + 16);
  for (int j = 1; j <= 8; j++) {
    glp_set_col_kind(P, j, GLP_BV);
    glp_set_obj_coef(P, j, k22_node[(j - 1) / 2][(j - 1) % 2]);
  }
  for (int k = 0; k < 4; k++)
    for (int q = 0; q < 4; q++) {
      glp_set_col_bnds(P, 9 + 4 * k + q, GLP_LO, 0, 0);
      glp_set_obj_coef(P, 9 + 4 * k + q, k22_cost[k][q]);
    }
  glp_add_rows(P, 4 + 8);
  for (int u = 0; u < 4; u++) { /* sum X = 1 */
    glp_set_row_bnds(P, u + 1, GLP_FX, 1, 1);
    for (int s = 0; s < 2; s++)
      ++nz, ia[nz] = u + 1, ja[nz] = 1 + 2 * u + s, ar[nz] = 1;
  }
  for (int u = 0; u < 4; u++) /* flow of strategy s of u = 2 X_us */
    for (int s = 0; s < 2; s++) {
      int row = 5 + 2 * u + s;
      glp_set_row_bnds(P, row, GLP_FX, 0, 0);
      ++nz, ia[nz] = row, ja[nz] = 1 + 2 * u + s, ar[nz] = -2;
      for (int k = 0; k < 4; k++)
        for (int q = 0; q < 4; q++)
          if ((k22_uv[k][0] == u && q / 2 == s) ||
              (k22_uv[k][1] == u && q % 2 == s))
            ++nz, ia[nz] = row, ja[nz] = 9 + 4 * k + q, ar[nz] = 1;
    }
  glp_load_matrix(P, nz, ia, ja, ar);
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.presolve = GLP_ON;
  parm.msg_lev = GLP_MSG_OFF;
  ASSERT_EQ(glp_intopt(P, &parm), 0);
  double v = glp_mip_obj_val(P);
  glp_delete_prob(P);
  glp_free_env();
  return v;
}

TEST(marginals_not_degree_balance) {
  st__ilp_problem_t p;
  st__ilp_node_t n[4];
  st__ilp_edge_t e[4];
  st__ilp_result_t r;
  st__ilp_opts_t o;
  brute_t bf;
  k22_problem(&p, n, e);
  brute(&p, &bf);
  ASSERT_NEAR(bf.best, 21.0, 0, 1e-12); /* x = (0,0,0,0): 10 + 11 */
  for (int reduce = 0; reduce < 2; reduce++) {
    opts_exact(&o, reduce);
    ASSERT_OK(st__ilp_solve(&p, &o, &r));
    ASSERT_EQ(r.status, ST__ILP_OPTIMAL);
    ASSERT_NEAR(r.objective, bf.best, 1e-9, 1e-12);
    for (int u = 0; u < 4; u++)
      ASSERT_EQ(r.choice[u], bf.arg[u]);
    st__ilp_result_free(&r);
  }
  /* the weaker formulation really does go wrong here */
  ASSERT(degree_based_optimum() < bf.best - 1.0);
}

/* Larger random DAG for the time limit and the benchmark-like sizes. */
static void big_problem(st__ilp_problem_t *p, rng_t *r, int n, int ns,
                        double **store) {
  size_t need = (size_t)n * ns * 3 + (size_t)3 * n * ns * ns;
  double *d = *store = malloc(need * sizeof *d);
  memset(p, 0, sizeof *p);
  p->nodes = calloc((size_t)n, sizeof *p->nodes);
  p->edges = calloc((size_t)3 * n, sizeof *p->edges);
  p->n_nodes = n;
  double mem_lo = 0, mem_hi = 0;
  for (int u = 0; u < n; u++) {
    st__ilp_node_t *nd = &p->nodes[u];
    nd->n_strat = ns;
    nd->cost = d, d += ns;
    nd->mem = d, d += ns;
    nd->transient = d, d += ns;
    double lo = INFINITY, hi = 0;
    for (int s = 0; s < ns; s++) {
      nd->mem[s] = 10 + rnd_unit(r) * 90;
      nd->cost[s] = 1000.0 / nd->mem[s] + rnd_unit(r) * 5; /* memory vs cost */
      nd->transient[s] = rnd_unit(r) * 20;
      if (nd->mem[s] < lo) lo = nd->mem[s];
      if (nd->mem[s] > hi) hi = nd->mem[s];
    }
    mem_lo += lo, mem_hi += hi;
  }
  for (int u = 0; u + 1 < n; u++)
    for (int v = u + 1; v < n && v <= u + 3; v++) {
      if (v > u + 1 && rnd_int(r, 3)) continue;
      st__ilp_edge_t *e = &p->edges[p->n_edges++];
      e->u = u, e->v = v, e->cost = d, d += ns * ns;
      for (int q = 0; q < ns * ns; q++)
        e->cost[q] = q % (ns + 1) == 0 ? 0.0 : rnd_unit(r) * 30;
    }
  p->mem_budget = mem_lo + 20 + 0.3 * (mem_hi - mem_lo);
}

/* A chain like bench_ilp's: memory against cost, edges free where the
 * layouts agree, a budget 30 % of the way from least to most memory. */
static void chain_problem(st__ilp_problem_t *p, rng_t *r, int n, int ns,
                          double **store) {
  size_t need = (size_t)n * ns * 3 + (size_t)n * ns * ns;
  double *d = *store = malloc(need * sizeof *d), lo_sum = 0, hi_sum = 0;
  memset(p, 0, sizeof *p);
  p->nodes = calloc((size_t)n, sizeof *p->nodes);
  p->edges = calloc((size_t)n, sizeof *p->edges);
  p->n_nodes = n;
  p->n_edges = n - 1;
  for (int u = 0; u < n; u++) {
    st__ilp_node_t *nd = &p->nodes[u];
    double lo = INFINITY, hi = 0;
    nd->n_strat = ns;
    nd->cost = d, d += ns;
    nd->mem = d, d += ns;
    nd->transient = d, d += ns;
    for (int s = 0; s < ns; s++) {
      nd->mem[s] = 100 + 900 * rnd_unit(r);
      nd->cost[s] = 1e5 / nd->mem[s] * (0.5 + rnd_unit(r));
      nd->transient[s] = 10 * rnd_unit(r);
      lo = fmin(lo, nd->mem[s]), hi = fmax(hi, nd->mem[s]);
    }
    lo_sum += lo, hi_sum += hi;
  }
  for (int k = 0; k < n - 1; k++) {
    st__ilp_edge_t *e = &p->edges[k];
    e->u = k, e->v = k + 1, e->cost = d, d += ns * ns;
    for (int q = 0; q < ns * ns; q++)
      e->cost[q] = q / ns % 4 == q % ns % 4 ? 0.0 : 100 * (1 + 4 * rnd_unit(r));
  }
  p->mem_budget = lo_sum + 10 + 0.3 * (hi_sum - lo_sum);
}

static void big_free(st__ilp_problem_t *p, double *store) {
  free(p->nodes);
  free(p->edges);
  free(store);
}

static void check_limited(const st__ilp_problem_t *p, double limit,
                          int dp_points) {
  st__ilp_result_t res;
  st__ilp_opts_t o;
  st__ilp_opts_init(&o);
  o.time_limit = limit;
  o.mip_gap = 0;
  o.dp_points = dp_points;
  ASSERT_OK(st__ilp_solve(p, &o, &res));
  /* under a budget there is always a solution to report (the
   * least-memory choice at worst), with the gap it is proven within */
  ASSERT(res.status == ST__ILP_FEASIBLE || res.status == ST__ILP_OPTIMAL);
  for (int u = 0; u < p->n_nodes; u++)
    ASSERT(res.choice[u] >= 0 && res.choice[u] < 8);
  ASSERT(res.memory <= p->mem_budget * (1 + 1e-6));
  ASSERT_NEAR(res.objective, eval_obj(p, res.choice), 1e-12, 1e-9);
  ASSERT(res.gap >= 0);
  if (res.status == ST__ILP_OPTIMAL) ASSERT(res.gap <= 1e-9);
  if (isfinite(res.gap)) {
    ASSERT(res.bound <= res.objective);
    ASSERT_NEAR(res.gap,
                (res.objective - res.bound) / fmax(fabs(res.objective), 1e-300),
                1e-9, 1e-12);
  }
  if (getenv("ILP_TEST_VERBOSE"))
    fprintf(stderr, "  status %d, gap %g after %.3f s\n", (int)res.status,
            res.gap, res.solve_seconds);
  ASSERT(res.solve_seconds < limit + 5.0);
  st__ilp_result_free(&res);
}

TEST(time_limit) {
  rng_t r = {777};
  st__ilp_problem_t p;
  double *store;
  big_problem(&p, &r, 120, 8, &store);
  check_limited(&p, 0.001, 2048); /* stops at once */
  check_limited(&p, 0.3, 2048);
  check_limited(&p, 0.3, 4); /* a coarse DP: GLPK from its start */
  check_limited(&p, 0.3, 0); /* GLPK from the least-memory choice */
  big_free(&p, store);
}

/* A chain of 100 operators with 8 strategies each, resharding-like edges
 * and a budget that binds: GLPK alone stopped at a 20 s limit here, 1.7 %
 * above the optimum; the DP over the chain proves the optimum. */
TEST(binding_limit_chain) {
  rng_t r = {2024};
  st__ilp_problem_t p;
  st__ilp_result_t res;
  st__ilp_opts_t o;
  double *store;
  chain_problem(&p, &r, 100, 8, &store);
  st__ilp_opts_init(&o);
  o.time_limit = 0; /* no limit: what is proven must not depend on speed */
  ASSERT_OK(st__ilp_solve(&p, &o, &res));
  ASSERT_EQ(res.status, ST__ILP_OPTIMAL);
  ASSERT_EQ(res.method, ST__ILP_BY_DP);
  ASSERT(res.gap <= 1e-6);
  ASSERT(res.memory <= p.mem_budget);
  if (getenv("ILP_TEST_VERBOSE"))
    fprintf(stderr, "  objective %.9g in %.3f s\n", res.objective,
            res.solve_seconds);
  /* the least-memory choice is feasible but far worse: the budget binds,
   * and so does the cost it trades against */
  st__ilp_result_t free_res;
  double budget = p.mem_budget;
  p.mem_budget = 0;
  ASSERT_OK(st__ilp_solve(&p, &o, &free_res));
  p.mem_budget = budget;
  ASSERT(free_res.memory > budget);
  ASSERT(free_res.objective < res.objective);
  st__ilp_result_free(&free_res);
  st__ilp_result_free(&res);
  big_free(&p, store);
}

TEST(deterministic_ties) {
  /* all strategies identical: the reduction keeps index 0 everywhere */
  static double z[16] = {0}, one[4] = {1, 1, 1, 1};
  st__ilp_node_t n[5];
  st__ilp_edge_t e[4];
  st__ilp_problem_t p = {5, 4, n, e, 100, 0, 0};
  st__ilp_result_t r1, r2;
  for (int u = 0; u < 5; u++)
    n[u] = (st__ilp_node_t){4, one, one, NULL};
  for (int k = 0; k < 4; k++)
    e[k] = (st__ilp_edge_t){k, k + 1, z};
  ASSERT_OK(st__ilp_solve(&p, NULL, &r1));
  ASSERT_EQ(r1.int_vars, 0);
  for (int u = 0; u < 5; u++)
    ASSERT_EQ(r1.choice[u], 0);
  st__ilp_result_free(&r1);
  /* a random problem twice, unreduced: same choice */
  rng_t r = {99};
  static tp_t t;
  st__ilp_opts_t o;
  opts_exact(&o, 0);
  for (int c = 0; c < 20; c++) {
    tp_random(&t, &r, 3);
    ASSERT_OK(st__ilp_solve(&t.p, &o, &r1));
    ASSERT_OK(st__ilp_solve(&t.p, &o, &r2));
    ASSERT_EQ(r1.status, r2.status);
    for (int u = 0; u < t.p.n_nodes; u++)
      ASSERT_EQ(r1.choice[u], r2.choice[u]);
    st__ilp_result_free(&r1);
    st__ilp_result_free(&r2);
  }
}

TEST(reduction_shrinks) {
  /* chain a - b - c - d: b has one strategy, (c, d) has a zero matrix,
   * a's strategy 2 is dominated, a -> b appears twice (once reversed) */
  static double ca[3] = {1, 2, 5}, cb[1] = {0}, cc[3] = {3, 1, 2},
                cd[2] = {4, 4};
  static double ab[3] = {0, 1, 2}, ba[3] = {1, 0, 3};
  static double bc[3] = {2, 0, 1}, cdm[6] = {0};
  static double ad[6] = {0, 3, 2, 0, 9, 9};
  st__ilp_node_t n[4] = {{3, ca, NULL, NULL},
                         {1, cb, NULL, NULL},
                         {3, cc, NULL, NULL},
                         {2, cd, NULL, NULL}};
  st__ilp_edge_t e[5] = {
      {0, 1, ab}, {1, 0, ba}, {1, 2, bc}, {2, 3, cdm}, {0, 3, ad}};
  st__ilp_problem_t p = {4, 5, n, e, 0, 0, 10};
  st__ilp_result_t r, u;
  st__ilp_opts_t o;
  opts_exact(&o, 1);
  ASSERT_OK(st__ilp_solve(&p, &o, &r));
  opts_exact(&o, 0);
  ASSERT_OK(st__ilp_solve(&p, &o, &u));
  ASSERT_EQ(r.int_vars_before, 9);
  ASSERT_EQ(r.cont_vars_before, 3 + 3 + 3 + 6 + 6);
  /* a keeps {0,1}; b, c are fixed; d keeps {0,1} (tied costs, edge a-d) */
  ASSERT_EQ(r.int_vars, 4);
  ASSERT_EQ(r.cont_vars, 4);
  ASSERT_NEAR(r.objective, u.objective, 1e-12, 0);
  for (int k = 0; k < 4; k++)
    ASSERT_EQ(r.choice[k], u.choice[k]);
  st__ilp_result_free(&r);
  st__ilp_result_free(&u);
}

TEST(empty_and_invalid) {
  st__ilp_problem_t p = {0, 0, NULL, NULL, 0, 0, 2.5};
  st__ilp_result_t r;
  ASSERT_OK(st__ilp_solve(&p, NULL, &r));
  ASSERT_EQ(r.status, ST__ILP_OPTIMAL);
  ASSERT_NEAR(r.objective, 2.5, 0, 0);
  st__ilp_result_free(&r);
  static double c2[2] = {1, 2}, m2[2] = {1, -1}, e4[4] = {0, 1, 1, NAN};
  st__ilp_node_t n[2] = {{2, c2, NULL, NULL}, {2, c2, NULL, NULL}};
  st__ilp_edge_t e[1] = {{0, 0, e4}};
  p = (st__ilp_problem_t){2, 1, n, e, 0, 0, 0};
  ASSERT_EQ(st__ilp_solve(&p, NULL, &r), STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "edge 0");
  ASSERT(r.choice == NULL);
  e[0].v = 1;
  ASSERT_EQ(st__ilp_solve(&p, NULL, &r), STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "not finite");
  e4[3] = 0;
  n[1].mem = m2;
  ASSERT_EQ(st__ilp_solve(&p, NULL, &r), STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "node 1, strategy 1");
  n[1].mem = NULL;
  n[0].n_strat = 0;
  ASSERT_EQ(st__ilp_solve(&p, NULL, &r), STRATA_EINVAL);
}

/* A problem that goes through every path: reductions, GLPK, memory row
 * with transients, parallel edges. */
static void fault_problem(tp_t *t) {
  rng_t r = {4242};
  for (;;) {
    tp_random(t, &r, 3);
    brute_t b;
    brute(&t->p, &b);
    int multi = 0;
    for (int u = 0; u < t->p.n_nodes; u++)
      multi += t->nodes[u].n_strat > 2;
    if (b.feasible && t->p.mem_budget > 0 && t->nodes[0].transient &&
        multi >= 3 && t->p.n_nodes >= 5)
      return;
  }
}

TEST(alloc_failures) {
  static tp_t t;
  st__ilp_opts_t o;
  char path[600];
  fault_problem(&t);
  snprintf(path, sizeof path, "%s/fault.lp", test_scratch_dir());
  for (int what = 0; what < 4; what++) {
    int ok = 0;
    opts_exact(&o, what % 2);
    if (what == 3) t.p.mem_budget = 1; /* infeasible */
    for (long n = 1; n < 1000 && !ok; n++) {
      st__ilp_result_t r;
      strata_alloc_fail_at(n);
      int rc = what == 2 ? st__ilp_write_lp(&t.p, &o, path)
                         : st__ilp_solve(&t.p, &o, &r);
      int failed = strata_alloc_failed();
      strata_alloc_fail_at(0);
      if (rc == 0) {
        ASSERT(!failed);
        if (what != 2) st__ilp_result_free(&r);
        ok = 1;
      } else {
        ASSERT_EQ(rc, STRATA_ENOMEM);
        ASSERT(failed);
        if (what != 2) ASSERT(r.choice == NULL);
      }
    }
    ASSERT(ok);
  }
}

static int bad_glpk_call(void *arg) {
  (void)arg;
  glp_prob *P = glp_create_prob();
  glp_add_cols(P, -1); /* GLPK error: invalid number of columns */
  glp_delete_prob(P);
  return 0;
}

static int good_glpk_call(void *arg) {
  glp_prob *P = glp_create_prob();
  glp_add_cols(P, 3);
  *(int *)arg = glp_get_num_cols(P);
  glp_delete_prob(P);
  return 0;
}

TEST(glpk_error_hook) {
  int n = 0;
  ASSERT_EQ(st__ilp_glpk_guard(bad_glpk_call, NULL, 0), STRATA_EINTERNAL);
  ASSERT_CONTAINS(strata_last_error(), "glp_add_cols");
  /* the environment was freed and a new one works */
  ASSERT_OK(st__ilp_glpk_guard(good_glpk_call, &n, 0));
  ASSERT_EQ(n, 3);
  static tp_t t;
  st__ilp_result_t r;
  fault_problem(&t);
  ASSERT_OK(st__ilp_solve(&t.p, NULL, &r));
  ASSERT_EQ(r.status, ST__ILP_OPTIMAL);
  st__ilp_result_free(&r);
}

TEST(write_lp_atomic) {
  static tp_t t;
  char path[600];
  fault_problem(&t);
  snprintf(path, sizeof path, "%s/no_such_dir/x.lp", test_scratch_dir());
  int rc = st__ilp_write_lp(&t.p, NULL, path);
  ASSERT(rc == STRATA_EIO || rc == STRATA_ENOTFOUND);
  ASSERT_CONTAINS(strata_last_error(), "no_such_dir/x.lp");
  /* a fully reduced problem still gives a readable file */
  static double one[1] = {4};
  st__ilp_node_t n[1] = {{1, one, NULL, NULL}};
  st__ilp_problem_t p = {1, 0, n, NULL, 0, 0, 1};
  double obj = 0;
  snprintf(path, sizeof path, "%s/trivial.lp", test_scratch_dir());
  ASSERT_OK(st__ilp_write_lp(&p, NULL, path));
  ASSERT_EQ(solve_lp_file(path, &obj), 0);
  ASSERT_NEAR(obj, 5.0, 1e-12, 0);
}

static const test_entry_t tests[] = {
    TEST_ENTRY(matches_brute_force),
    TEST_ENTRY(default_gap_close_to_optimum),
    TEST_ENTRY(marginals_not_degree_balance),
    TEST_ENTRY(time_limit),
    TEST_ENTRY(binding_limit_chain),
    TEST_ENTRY(deterministic_ties),
    TEST_ENTRY(reduction_shrinks),
    TEST_ENTRY(empty_and_invalid),
    TEST_ENTRY(alloc_failures),
    TEST_ENTRY(glpk_error_hook),
    TEST_ENTRY(write_lp_atomic),
};
TEST_MAIN(tests)
