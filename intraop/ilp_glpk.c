/*
 * ilp_glpk.c - the GLPK boundary of intraop/: the only file that includes
 * glpk.h, where GLPK's conventions become Strata's.
 *
 * GLPK answers an internal error (an invalid call, a failed assertion, no
 * memory) by printing a message and calling abort(), unless an error hook
 * is installed; the hook must not return, so it longjmps back to
 * st__ilp_glpk_guard, which then frees the thread's GLPK environment (and
 * with it every GLPK object: the problem is gone) and returns
 * STRATA_EINTERNAL with the message.  GLPK's terminal output is captured
 * by a terminal hook so that the message can be reported and nothing is
 * printed unless asked for.  The environment is per thread in Debian's
 * build and is freed at the end of every guarded call, so that nothing
 * stays behind on long-lived pool threads.
 *
 * Everything the guarded functions need is allocated by the caller first:
 * the longjmp skips their frames, and only GLPK's own memory may be
 * in flight when it happens.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <glpk.h>

#include "intraop/ilp_impl.h"
#include "strata/core.h"

typedef struct {
  jmp_buf jb;
  int verbose;
  size_t len;
  char msg[512]; /* GLPK's error text, as printed */
} guard_t;

static void error_hook(void *info) {
  guard_t *g = info;
  longjmp(g->jb, 1);
}

static int term_hook(void *info, const char *s) {
  guard_t *g = info;
  if (glp_at_error()) {
    size_t n = strlen(s), room = sizeof g->msg - 1 - g->len;
    if (n > room) n = room;
    memcpy(g->msg + g->len, s, n);
    g->len += n;
    g->msg[g->len] = '\0';
  }
  return g->verbose ? 0 : 1;
}

static void trim(char *s) {
  size_t n = strlen(s);
  for (char *p = s; *p; p++)
    if (*p == '\n') *p = ' ';
  while (n > 0 && s[n - 1] == ' ')
    s[--n] = '\0';
}

/* The frame that calls setjmp owns nothing that changes before a longjmp
 * (the guard lives in the caller's frame), as C requires for such frames. */
static int guarded(guard_t *g, int (*fn)(void *arg), void *arg) {
  if (setjmp(g->jb)) {
    /* GLPK's state is undefined now; freeing the environment is the only
     * operation allowed, and it deletes the problem objects too. */
    glp_free_env();
    trim(g->msg);
    return strata_error(STRATA_EINTERNAL, "GLPK failed: %s",
                        g->msg[0] ? g->msg : "(no message)");
  }
  int rc = fn(arg);
  glp_error_hook(NULL, NULL);
  glp_term_hook(NULL, NULL);
  glp_free_env();
  return rc;
}

int st__ilp_glpk_guard(int (*fn)(void *arg), void *arg, int verbose) {
  guard_t g;
  g.verbose = verbose;
  g.len = 0;
  g.msg[0] = '\0';
  glp_term_out(verbose ? GLP_ON : GLP_OFF);
  glp_term_hook(term_hook, &g);
  glp_error_hook(error_hook, &g);
  return guarded(&g, fn, arg);
}

/* ---- loading ------------------------------------------------------------ */

static void col_name(const st__ilp_lp_t *lp, int j, char *buf, size_t n) {
  const int *t = lp->col_tag + 4 * j;
  if (t[0] == ST__ILP_COL_X)
    snprintf(buf, n, "x_%d_%d", t[1], t[2]);
  else if (t[0] == ST__ILP_COL_B)
    snprintf(buf, n, "b_%d_%d_%d", t[1], t[2], t[3]);
  else
    snprintf(buf, n, "t_peak");
}

static void row_name(const st__ilp_lp_t *lp, int i, char *buf, size_t n) {
  const int *t = lp->row_tag + 4 * i;
  switch (t[0]) {
  case ST__ILP_ROW_ONE:
    snprintf(buf, n, "one_%d", t[1]);
    break;
  case ST__ILP_ROW_MU:
    snprintf(buf, n, "mu_%d_%d", t[1], t[2]);
    break;
  case ST__ILP_ROW_MV:
    snprintf(buf, n, "mv_%d_%d", t[1], t[2]);
    break;
  case ST__ILP_ROW_MEM:
    snprintf(buf, n, "mem");
    break;
  default:
    snprintf(buf, n, "peak_%d", t[1]);
    break;
  }
}

static glp_prob *load(const st__ilp_lp_t *lp, int names) {
  char buf[64];
  glp_prob *P = glp_create_prob();
  glp_set_obj_dir(P, GLP_MIN);
  if (names) glp_set_prob_name(P, "strata_ilp");
  if (names) glp_set_obj_name(P, "cost");
  glp_set_obj_coef(P, 0, lp->obj[0]);
  if (lp->n_rows > 0) glp_add_rows(P, lp->n_rows);
  if (lp->n_cols > 0) glp_add_cols(P, lp->n_cols);
  for (int i = 1; i <= lp->n_rows; i++) {
    int type = lp->row_type[i] == 'E'   ? GLP_FX
               : lp->row_type[i] == 'U' ? GLP_UP
                                        : GLP_LO;
    glp_set_row_bnds(P, i, type, lp->row_rhs[i], lp->row_rhs[i]);
    if (names) row_name(lp, i, buf, sizeof buf), glp_set_row_name(P, i, buf);
  }
  for (int j = 1; j <= lp->n_cols; j++) {
    if (lp->col_bin[j])
      glp_set_col_kind(P, j, GLP_BV);
    else
      glp_set_col_bnds(P, j, GLP_LO, lp->col_lb[j], 0.0);
    glp_set_obj_coef(P, j, lp->obj[j]);
    if (names) col_name(lp, j, buf, sizeof buf), glp_set_col_name(P, j, buf);
  }
  if (lp->nnz > 0) glp_load_matrix(P, (int)lp->nnz, lp->ia, lp->ja, lp->ar);
  return P;
}

/* ---- solving ------------------------------------------------------------ */

typedef struct {
  const st__ilp_lp_t *lp;
  const st__ilp_opts_t *o;
  double time_limit;
  double *x;
  st__ilp_glpk_io_t *io;
  int ret, mip_status, fed, stopped;
  const char *path;
} job_t;

static int tm_lim_ms(double seconds) {
  if (!(seconds > 0)) return INT_MAX;
  double ms = seconds * 1000.0;
  if (ms < 1.0) return 1;
  return ms >= (double)INT_MAX ? INT_MAX : (int)ms;
}

/* Relative gap of an incumbent over a bound, as GLPK measures it. */
static double rel_gap(double inc, double bound) {
  return (inc - bound) / (fabs(inc) + DBL_EPSILON);
}

/* The search's callback: hands GLPK the caller's feasible start at the
 * first heuristic call, records the best bound of the open nodes, and
 * stops the search once the incumbent is within the MIP gap of the best
 * bound known, GLPK's or the caller's. */
static void callback(glp_tree *T, void *info) {
  job_t *job = info;
  if (glp_ios_reason(T) == GLP_IHEUR && job->io->start && !job->fed) {
    job->fed = 1;
    glp_ios_heur_sol(T, job->io->start);
  }
  int p = glp_ios_best_node(T);
  if (p) job->io->bound = fmax(job->io->bound, glp_ios_node_bound(T, p));
  glp_prob *P = glp_ios_get_prob(T);
  if (glp_mip_status(P) != GLP_FEAS) return;
  double bound = fmax(job->io->bound, job->io->ext_bound);
  if (rel_gap(glp_mip_obj_val(P), bound) <= job->o->mip_gap) {
    job->stopped = 1;
    glp_ios_terminate(T);
  }
}

/* With a start, GLPK's MIP presolver is off (it would renumber the
 * columns the start is given in), so the LP relaxation is solved first,
 * as glp_intopt then requires. */
static int relax_first(glp_prob *P, job_t *job) {
  glp_smcp sp;
  glp_init_smcp(&sp);
  sp.msg_lev = job->o->verbose ? GLP_MSG_ON : GLP_MSG_OFF;
  sp.tm_lim = tm_lim_ms(job->time_limit);
  glp_scale_prob(P, GLP_SF_AUTO);
  glp_adv_basis(P, 0);
  if (glp_simplex(P, &sp) != 0 || glp_get_status(P) != GLP_OPT) return 0;
  job->io->bound = glp_get_obj_val(P); /* the root's bound, at least */
  return 1;
}

static int solve_fn(void *arg) {
  job_t *job = arg;
  glp_iocp parm;
  double t0 = glp_time();
  glp_prob *P = load(job->lp, 0);
  glp_init_iocp(&parm);
  parm.presolve = job->io->start ? GLP_OFF : GLP_ON;
  parm.msg_lev = job->o->verbose ? GLP_MSG_ON : GLP_MSG_OFF;
  parm.mip_gap = job->o->mip_gap;
  parm.cb_func = callback;
  parm.cb_info = job;
  /* MIR cuts on the memory row: 8x faster on memory-bound 100-node
   * chains; the other cuts and heuristics of GLPK did not help. */
  parm.mir_cuts = GLP_ON;
  job->ret = GLP_ETMLIM;
  if (!job->io->start || relax_first(P, job)) {
    double left = job->time_limit - (glp_time() - t0) / 1000.0;
    parm.tm_lim = tm_lim_ms(job->time_limit > 0 ? fmax(left, 1e-3) : 0);
    job->ret = glp_intopt(P, &parm);
  }
  job->mip_status = glp_mip_status(P);
  if (job->mip_status == GLP_OPT || job->mip_status == GLP_FEAS) {
    for (int j = 1; j <= job->lp->n_cols; j++)
      job->x[j] = glp_mip_col_val(P, j);
    if (job->ret == 0) job->io->bound = glp_mip_obj_val(P); /* exhausted */
  }
  glp_delete_prob(P);
  return 0;
}

static int outcome_of(const job_t *job, st__ilp_glpk_outcome_t *out) {
  int have = job->mip_status == GLP_OPT || job->mip_status == GLP_FEAS;
  switch (job->ret) {
  case 0:
  case GLP_EMIPGAP: /* optimal within the gap the caller asked for */
    *out = have ? ST__ILP_GLPK_OPTIMAL : ST__ILP_GLPK_INFEASIBLE;
    return 0;
  case GLP_ESTOP: /* the callback found the gap closed */
    *out = have && job->stopped ? ST__ILP_GLPK_OPTIMAL : ST__ILP_GLPK_FEASIBLE;
    return 0;
  case GLP_ENOPFS:
    *out = ST__ILP_GLPK_INFEASIBLE;
    return 0;
  case GLP_ETMLIM:
    *out = have ? ST__ILP_GLPK_FEASIBLE : ST__ILP_GLPK_NONE;
    return 0;
  default:
    return strata_error(STRATA_EINTERNAL,
                        "GLPK could not solve the strategy ILP (glp_intopt "
                        "returned %d); the problem may be numerically hard: "
                        "write it out in LP format and try another solver",
                        job->ret);
  }
}

int st__ilp_glpk_solve(const st__ilp_lp_t *lp, const st__ilp_opts_t *o,
                       double time_limit, double *x,
                       st__ilp_glpk_outcome_t *outcome, st__ilp_glpk_io_t *io) {
  job_t job = {lp, o, time_limit, x, io, 0, 0, 0, 0, NULL};
  io->bound = -INFINITY;
  int rc = st__ilp_glpk_guard(solve_fn, &job, o->verbose);
  if (rc) return rc;
  return outcome_of(&job, outcome);
}

/* ---- writing ------------------------------------------------------------ */

static int write_fn(void *arg) {
  job_t *job = arg;
  glp_prob *P = load(job->lp, 1);
  job->ret = glp_write_lp(P, NULL, job->path);
  glp_delete_prob(P);
  return 0;
}

int st__ilp_glpk_write(const st__ilp_lp_t *lp, const char *path) {
  job_t job = {lp, NULL, 0, NULL, NULL, 0, 0, 0, 0, path};
  int rc = st__ilp_glpk_guard(write_fn, &job, 0);
  if (rc) return rc;
  if (job.ret != 0)
    return strata_error(STRATA_EIO, "cannot write the ILP to '%s'", path);
  return 0;
}
