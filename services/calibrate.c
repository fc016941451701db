/*
 * calibrate.c - fit the model's free parameters to steps measured on the
 * user's cluster (strata calibrate, docs/calibration.md).
 *
 * The parameters are scales of what the GPU table says is achieved -- the
 * GEMM efficiency, fused attention, streaming kernels, the links inside a
 * node and across nodes -- and a fixed time per step.  Each measured run
 * is costed by the planner's own evaluation of its configuration (the one
 * `strata estimate` prints) under a candidate calibration, and GSL's
 * trust-region least squares (gsl_multifit_nlinear, Levenberg-Marquardt
 * with finite differences) minimises the squared log errors of the step
 * times.  The scales are fitted in log space (they stay positive) with a
 * weak pull towards 1, so that a parameter the runs do not exercise stays
 * where the table put it instead of wandering.  The memory offset is a
 * plain least-squares constant: the measured peaks minus the predicted
 * ones, averaged.
 */
#include <math.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include "pipeline/search.h"

#define N_PARAMS 6 /* gemm, attention, stream, intra link, inter link, s */
#define PRIOR 0.01 /* weight of log(scale) against a log error */
/* Every step of the fit plans every run (seven times: the point and a
 * finite difference per parameter), some 50 ms a run on one core, and the
 * steps grow a little with the runs: 200 runs take 14 s, the 10,000 a
 * runs file may hold would take most of an hour.  A thousand is far more
 * configurations than a fit of six parameters needs. */
#define MAX_FIT_RUNS 1000

typedef struct {
  const strata_measurements_t *m;
  strata_graph_t **g;
  strata_cluster_t **c;
  int failed; /* a run could not be costed */
  double mean_step;
} fit_t;

/* A scale from its logarithm, kept inside what a calibration file may
 * hold (0.05 to 20, topo/calibration.c). */
static double scale(double lx) {
  double v = exp(lx);
  return v < 0.05 ? 0.05 : v > 20 ? 20 : v;
}

static void to_cal(const double *x, strata_calibration_t *cal) {
  strata_calibration_init(cal);
  cal->gemm = scale(x[0]);
  cal->attention = scale(x[1]);
  cal->stream = scale(x[2]);
  cal->link[STRATA_LEVEL_NVLINK] = cal->link[STRATA_LEVEL_PCIE] = scale(x[3]);
  cal->link[STRATA_LEVEL_LEAF] = cal->link[STRATA_LEVEL_SPINE] = scale(x[4]);
  cal->step_seconds = x[5] > 0 ? (x[5] < 3000 ? x[5] : 3000) : 0;
}

/* Cost run i under the calibration: its step and its peak memory. */
static int cost_run(fit_t *F, int i, const strata_calibration_t *cal,
                    double *step, double *peak) {
  strata_plan_t *p = NULL;
  const strata_measurement_t *r = &F->m->v[i];
  int rc = strata_cluster_calibrate(F->c[i], cal);
  if (!rc) rc = strata_pipeline_plan(F->g[i], F->c[i], &r->po, &p);
  if (!rc) {
    *step = p->step_seconds;
    *peak = p->peak_memory_bytes;
  }
  strata_plan_destroy(p);
  return rc;
}

static int residuals(const gsl_vector *xv, void *params, gsl_vector *f) {
  fit_t *F = params;
  double x[N_PARAMS];
  strata_calibration_t cal;
  for (int k = 0; k < N_PARAMS; k++)
    x[k] = gsl_vector_get(xv, (size_t)k);
  to_cal(x, &cal);
  for (int i = 0; i < F->m->n; i++) {
    double step = 0, peak = 0;
    if (cost_run(F, i, &cal, &step, &peak) || !(step > 0)) {
      F->failed = 1;
      strata_error_clear();
      gsl_vector_set(f, (size_t)i, 1e3);
      continue;
    }
    gsl_vector_set(f, (size_t)i, log(step / F->m->v[i].step_seconds));
  }
  for (int k = 0; k < N_PARAMS - 1; k++)
    gsl_vector_set(f, (size_t)(F->m->n + k), PRIOR * x[k]);
  gsl_vector_set(f, (size_t)(F->m->n + N_PARAMS - 1),
                 PRIOR * x[N_PARAMS - 1] / F->mean_step);
  return GSL_SUCCESS;
}

static int load_runs(fit_t *F) {
  const strata_measurements_t *m = F->m;
  F->g = strata_calloc((size_t)m->n, sizeof *F->g);
  F->c = strata_calloc((size_t)m->n, sizeof *F->c);
  if (!F->g || !F->c) return strata_error(STRATA_ENOMEM, "out of memory");
  F->mean_step = 0;
  for (int i = 0; i < m->n; i++) {
    const strata_measurement_t *r = &m->v[i];
    strata_measurement_t *w = &m->v[i];
    int rc = strata_model_load(r->model, &r->po.gen, &F->g[i]);
    if (!rc) rc = strata_cluster_load(r->cluster, &F->c[i]);
    int L = rc ? 0 : strata_graph_layers(F->g[i]), pp = r->po.pp;
    /* Megatron-LM's default split is even (into pp x vpp chunks); an
     * uneven one must be given */
    int v = r->po.vpp > 1 ? r->po.vpp : 1;
    if (!rc && pp > 1 && !r->po.first_layers && !r->po.last_layers) {
      if (L % (pp * v))
        rc = strata_error(STRATA_EBADINPUT,
                          "%d layers do not split evenly over %d stages%s: "
                          "give first_stage_layers and/or last_stage_layers",
                          L, pp, v > 1 ? " of equal virtual stages" : "");
      else
        w->po.first_layers = w->po.last_layers = L / pp;
    }
    if (rc) {
      strata_error_prefix("%s: run %d (%s on %s)", m->where, i + 1, r->model,
                          r->cluster);
      return rc;
    }
    F->mean_step += r->step_seconds / m->n;
  }
  return 0;
}

static void free_runs(fit_t *F) {
  for (int i = 0; F->g && i < F->m->n; i++)
    strata_graph_destroy(F->g[i]);
  for (int i = 0; F->c && i < F->m->n; i++)
    strata_cluster_destroy(F->c[i]);
  strata_free(F->g);
  strata_free(F->c);
}

/* Predictions of every run under cal into the report's arrays. */
static int predict(fit_t *F, const strata_calibration_t *cal, double *step,
                   double *peak) {
  for (int i = 0; i < F->m->n; i++) {
    int rc = cost_run(F, i, cal, &step[i], &peak[i]);
    if (rc) {
      strata_error_prefix("%s: run %d", F->m->where, i + 1);
      return rc;
    }
  }
  return 0;
}

static int least_squares(fit_t *F, double *x) {
  const size_t n = (size_t)F->m->n + N_PARAMS, p = N_PARAMS;
  gsl_multifit_nlinear_parameters fp =
      gsl_multifit_nlinear_default_parameters();
  /* the model is piecewise smooth (a strategy or a schedule changes at
   * some scale): difference over a step wider than rounding */
  fp.h_df = 1e-4;
  gsl_multifit_nlinear_fdf fdf;
  gsl_vector *x0 = gsl_vector_alloc(p);
  gsl_multifit_nlinear_workspace *w =
      gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, n, p);
  int info = 0, rc = 0;
  if (!x0 || !w) {
    rc = strata_error(STRATA_ENOMEM, "out of memory");
    goto out;
  }
  memset(&fdf, 0, sizeof fdf);
  fdf.f = residuals;
  fdf.n = n;
  fdf.p = p;
  fdf.params = F;
  for (size_t k = 0; k < p; k++)
    gsl_vector_set(x0, k, 0);
  gsl_multifit_nlinear_init(x0, &fdf, w);
  gsl_multifit_nlinear_driver(100, 1e-8, 1e-8, 1e-10, NULL, NULL, &info, w);
  for (size_t k = 0; k < p; k++)
    x[k] = gsl_vector_get(w->x, k);
out:
  if (w) gsl_multifit_nlinear_free(w);
  if (x0) gsl_vector_free(x0);
  return rc;
}

static double rms_log(const strata_measurements_t *m, const double *pred) {
  double s = 0;
  for (int i = 0; i < m->n; i++) {
    double e = log(pred[i] / m->v[i].step_seconds);
    s += e * e;
  }
  return m->n ? sqrt(s / m->n) : 0;
}

int strata_calibrate(const strata_measurements_t *m, strata_calibration_t *cal,
                     strata_calibration_report_t *rep) {
  fit_t F;
  double x[N_PARAMS];
  int rc;
  memset(&F, 0, sizeof F);
  memset(rep, 0, sizeof *rep);
  F.m = m;
  if (!m || m->n < 1)
    return strata_error(STRATA_EINVAL, "calibrate: no measured runs");
  if (m->n > MAX_FIT_RUNS)
    return strata_error(STRATA_EBADINPUT,
                        "%s: %d runs; calibrate fits at most %d (each step "
                        "of the fit plans every run): keep the runs of "
                        "distinct configurations, and average repeated "
                        "measurements of one into one run",
                        m->where ? m->where : "calibrate", m->n, MAX_FIT_RUNS);
  rep->n = m->n;
  rep->step_before = strata_calloc((size_t)m->n, sizeof(double));
  rep->step_after = strata_calloc((size_t)m->n, sizeof(double));
  rep->peak_before = strata_calloc((size_t)m->n, sizeof(double));
  rep->peak_after = strata_calloc((size_t)m->n, sizeof(double));
  if (!rep->step_before || !rep->step_after || !rep->peak_before ||
      !rep->peak_after) {
    rc = strata_error(STRATA_ENOMEM, "out of memory");
    goto out;
  }
  rc = load_runs(&F);
  strata_calibration_t none;
  strata_calibration_init(&none);
  if (!rc) rc = predict(&F, &none, rep->step_before, rep->peak_before);
  if (!rc) rc = least_squares(&F, x);
  if (!rc && F.failed)
    rc = strata_error(STRATA_EINFEASIBLE,
                      "calibrate: a run could not be costed at some scales "
                      "tried; check the runs (strata estimate of each)");
  if (rc) goto out;
  to_cal(x, cal);
  /* the memory offset: measured minus predicted peaks, averaged */
  double sum = 0;
  int k = 0;
  for (int i = 0; i < m->n; i++)
    if (m->v[i].peak_bytes > 0) {
      sum += m->v[i].peak_bytes - rep->peak_before[i];
      k++;
    }
  cal->memory_bytes = k ? sum / k : 0;
  rc = predict(&F, cal, rep->step_after, rep->peak_after);
  rep->rms_before = rms_log(m, rep->step_before);
  rep->rms_after = rms_log(m, rep->step_after);
out:
  free_runs(&F);
  if (rc) strata_calibration_report_free(rep);
  return rc;
}

void strata_calibration_report_free(strata_calibration_report_t *rep) {
  if (!rep) return;
  strata_free(rep->step_before);
  strata_free(rep->step_after);
  strata_free(rep->peak_before);
  strata_free(rep->peak_after);
  memset(rep, 0, sizeof *rep);
}
