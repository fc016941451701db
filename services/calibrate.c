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
 * with finite differences) finds the most probable parameters: the
 * squared log errors of the steps, each against a 10 % error (what the
 * model misses of a run it was not fitted to, docs/calibration.md), plus
 * a log-normal prior around the table (a factor e^0.15 on a scale weighs
 * as a 10 % step error).  One to three runs thus move the parameters
 * they speak to part of the way, never to their bounds.
 * A parameter no run is sensitive to (a factor e on it moves no step by
 * 2 %) is not fitted at all and the report says so.  Before fitting, the
 * runs are checked: one GPU model and one framework per file, one
 * configuration measured once (or within 10 %), no step faster than the
 * GPUs' peak allows.  The memory offset is a plain least-squares
 * constant: the measured peaks minus the predicted ones, averaged.
 */
#include <math.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include "pipeline/search.h"

#define N_PARAMS STRATA_CAL_PARAMS
/* A log error's standard deviation (run-to-run noise and what the model
 * cannot say of one run: about 10 % on runs it was not fitted to,
 * bench_calibration.py) and the prior's on the log of a scale (and on
 * the time per step: OVERHEAD_SIGMA). */
#define SIGMA_MEAS 0.10
#define SIGMA_PRIOR 0.15
/* The prior's on the time per step, in the shortest measured step: a
 * fixed time beyond a few per cent of every step is the model's error
 * elsewhere, and one fitted to long steps swamps short ones. */
#define OVERHEAD_SIGMA 0.05
/* A parameter is fitted when a factor e on it moves some run's step by
 * this much (its log step by this much per unit of its log). */
#define SENSITIVE 0.02
/* Finite difference of the sensitivities: a 5 % change, wide enough to
 * see past the model's piecewise steps. */
#define SENS_STEP 0.05
/* One configuration measured twice: steps further apart contradict. */
#define REPEAT_TOL 0.10
/* Every step of the fit plans every run (seven times: the point and a
 * finite difference per parameter), some 50 ms a run on one core, and the
 * steps grow a little with the runs: 200 runs take 14 s, the 10,000 a
 * runs file may hold would take most of an hour.  A thousand is far more
 * configurations than a fit of six parameters needs. */
#define MAX_FIT_RUNS 1000
#define SCALE_LO 0.05
#define SCALE_HI 20
#define STEP_HI 3000

typedef struct {
  const strata_measurements_t *m;
  strata_graph_t **g;
  strata_cluster_t **c;
  int failed;  /* a run could not be costed */
  double unit; /* the shortest measured step: the time per step's scale */
  int skip;    /* a run left out (leave-one-out), else -1 */
  int free_k[N_PARAMS]; /* the fitted parameters */
  int n_free;
} fit_t;

static const char *param_names[N_PARAMS] = {
    "gemm", "attention", "stream", "nvlink", "network", "step_overhead_s"};

const char *strata_calibration_param_name(int k) {
  return k >= 0 && k < N_PARAMS ? param_names[k] : "?";
}

void strata_calibrate_opts_init(strata_calibrate_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->loo_max = 20;
}

/* A scale from its logarithm, kept inside what a calibration file may
 * hold (0.05 to 20, topo/calibration.c). */
static double scale(double lx) {
  double v = exp(lx);
  return v < SCALE_LO ? SCALE_LO : v > SCALE_HI ? SCALE_HI : v;
}

static void to_cal(const double *x, strata_calibration_t *cal) {
  strata_calibration_init(cal);
  cal->gemm = scale(x[0]);
  cal->attention = scale(x[1]);
  cal->stream = scale(x[2]);
  cal->link[STRATA_LEVEL_NVLINK] = cal->link[STRATA_LEVEL_PCIE] = scale(x[3]);
  cal->link[STRATA_LEVEL_LEAF] = cal->link[STRATA_LEVEL_SPINE] = scale(x[4]);
  cal->step_seconds = x[5] > 0 ? (x[5] < STEP_HI ? x[5] : STEP_HI) : 0;
}

/* Cost run i under the calibration: its step, its peak memory and the
 * least step its FLOPs allow at the GPUs' peak (NULL: not wanted). */
static int cost_run(fit_t *F, int i, const strata_calibration_t *cal,
                    double *step, double *peak, double *least) {
  strata_plan_t *p = NULL;
  const strata_measurement_t *r = &F->m->v[i];
  int rc = strata_cluster_calibrate(F->c[i], cal);
  if (!rc) rc = strata_pipeline_plan(F->g[i], F->c[i], &r->po, &p);
  if (!rc) {
    *step = p->step_seconds;
    *peak = p->peak_memory_bytes;
    if (least)
      *least = p->devices > 0 && p->gpu_peak_flops > 0
                   ? p->model_flops_per_step / (p->devices * p->gpu_peak_flops)
                   : 0;
  }
  strata_plan_destroy(p);
  return rc;
}

/* The full parameter vector from the fitted ones (the rest at 0). */
static void unpack(const fit_t *F, const gsl_vector *xv, double *x) {
  memset(x, 0, sizeof(double) * N_PARAMS);
  for (int j = 0; j < F->n_free; j++)
    x[F->free_k[j]] = gsl_vector_get(xv, (size_t)j);
}

static int residuals(const gsl_vector *xv, void *params, gsl_vector *f) {
  fit_t *F = params;
  double x[N_PARAMS];
  strata_calibration_t cal;
  unpack(F, xv, x);
  to_cal(x, &cal);
  for (int i = 0; i < F->m->n; i++) {
    double step = 0, peak = 0;
    if (i == F->skip) {
      gsl_vector_set(f, (size_t)i, 0);
      continue;
    }
    if (cost_run(F, i, &cal, &step, &peak, NULL) || !(step > 0)) {
      F->failed = 1;
      strata_error_clear();
      gsl_vector_set(f, (size_t)i, 1e3);
      continue;
    }
    gsl_vector_set(f, (size_t)i,
                   log(step / F->m->v[i].step_seconds) / SIGMA_MEAS);
  }
  /* the prior: log-normal around the table for a scale, normal around
   * none for the time per step (in shortest steps: a time fitted to runs
   * of long steps would swamp a short one) */
  for (int j = 0; j < F->n_free; j++) {
    int k = F->free_k[j];
    double v = k == N_PARAMS - 1 ? x[k] / (OVERHEAD_SIGMA * F->unit)
                                 : x[k] / SIGMA_PRIOR;
    gsl_vector_set(f, (size_t)(F->m->n + j), v);
  }
  return GSL_SUCCESS;
}

static int load_runs(fit_t *F) {
  const strata_measurements_t *m = F->m;
  F->g = strata_calloc((size_t)m->n, sizeof *F->g);
  F->c = strata_calloc((size_t)m->n, sizeof *F->c);
  if (!F->g || !F->c) return strata_error(STRATA_ENOMEM, "out of memory");
  F->unit = 0;
  for (int i = 0; i < m->n; i++) {
    const strata_measurement_t *r = &m->v[i];
    strata_measurement_t *w = &m->v[i];
    int rc = strata_model_load(r->model, &r->po.gen, &F->g[i]);
    if (!rc) rc = strata_cluster_load(r->cluster, &F->c[i]);
    int L = rc ? 0 : strata_graph_layers(F->g[i]), pp = r->po.pp;
    /* Megatron-LM's default split is even (into pp x vpp chunks); an
     * uneven one must be given */
    int v = r->po.vpp > 1 ? r->po.vpp : 1;
    /* a layout, or the embedding or loss counted in the split, says how
     * the layers split: estimate's own reading of it holds */
    int given = r->po.pipeline_layout || r->po.account_embedding == 1 ||
                r->po.account_loss == 1;
    if (!rc && pp > 1 && !given && !r->po.first_layers && !r->po.last_layers) {
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
    if (!F->unit || r->step_seconds < F->unit) F->unit = r->step_seconds;
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
                   double *peak, double *least) {
  for (int i = 0; i < F->m->n; i++) {
    int rc = cost_run(F, i, cal, &step[i], &peak[i], least ? &least[i] : NULL);
    if (rc) {
      strata_error_prefix("%s: run %d", F->m->where, i + 1);
      return rc;
    }
  }
  return 0;
}

/* A run's name in a message: its label, else its degrees. */
static const char *run_name(const strata_measurement_t *r, char *buf,
                            size_t n) {
  if (r->label)
    snprintf(buf, n, "%s", r->label);
  else
    snprintf(buf, n, "tp%d pp%d dp%d mb%d", r->po.tp, r->po.pp, r->po.dp,
             r->po.micro_batch);
  return buf;
}

/* One calibration per GPU model and software stack (framework). */
static int check_mixed(const fit_t *F) {
  const strata_measurements_t *m = F->m;
  const strata_gpu_model_t *g0 = strata_cluster_gpu_model(F->c[0]);
  char a[64], b[64];
  for (int i = 1; i < m->n; i++) {
    const strata_gpu_model_t *g = strata_cluster_gpu_model(F->c[i]);
    const char *n0 = g0 && g0->name ? g0->name : "?";
    const char *n = g && g->name ? g->name : "?";
    if (strcmp(n0, n))
      return strata_error(STRATA_EBADINPUT,
                          "%s: run %d (%s) is on %s GPUs, run 1 (%s) on %s: "
                          "a calibration is of one GPU model; calibrate each "
                          "GPU model's runs from a file of its own",
                          m->where, i + 1, run_name(&m->v[i], a, sizeof a), n,
                          run_name(&m->v[0], b, sizeof b), n0);
    if (m->v[i].po.framework != m->v[0].po.framework)
      return strata_error(
          STRATA_EBADINPUT,
          "%s: run %d (%s) ran under %s, run 1 (%s) under %s: a calibration "
          "is of one software stack; calibrate each framework's runs from a "
          "file of its own",
          m->where, i + 1, run_name(&m->v[i], a, sizeof a),
          strata_framework_name(m->v[i].po.framework),
          run_name(&m->v[0], b, sizeof b),
          strata_framework_name(m->v[0].po.framework));
  }
  return 0;
}

/* Whether runs i and j are one configuration: the same model, cluster,
 * layout and options (the pointers aside). */
static int same_config(const strata_measurement_t *a,
                       const strata_measurement_t *b) {
  strata_plan_opts_t x, y;
  if (strcmp(a->model, b->model) || strcmp(a->cluster, b->cluster) ||
      strcmp(a->layout ? a->layout : "", b->layout ? b->layout : ""))
    return 0;
  memcpy(&x, &a->po, sizeof x);
  memcpy(&y, &b->po, sizeof y);
  x.model_spec = y.model_spec = NULL;
  x.pipeline_layout = y.pipeline_layout = NULL;
  x.cache_dir = y.cache_dir = NULL;
  x.cancel = y.cancel = NULL;
  return !memcmp(&x, &y, sizeof x);
}

/* One configuration measured at steps further apart than a repeat
 * differs by: no parameter can make both true. */
static int check_repeats(const strata_measurements_t *m) {
  char a[64], b[64];
  for (int i = 0; i < m->n && m->n <= MAX_FIT_RUNS; i++)
    for (int j = i + 1; j < m->n; j++) {
      double si = m->v[i].step_seconds, sj = m->v[j].step_seconds;
      double gap = (si > sj ? si / sj : sj / si) - 1;
      if (gap > REPEAT_TOL && same_config(&m->v[i], &m->v[j]))
        return strata_error(
            STRATA_EBADINPUT,
            "%s: runs %d (%s) and %d (%s) are one configuration measured at "
            "%.4g s and %.4g s, %.0f %% apart (repeated measurements differ "
            "by less than %.0f %%): measure it again, or give what differed",
            m->where, i + 1, run_name(&m->v[i], a, sizeof a), j + 1,
            run_name(&m->v[j], b, sizeof b), si, sj, 100 * gap,
            100 * REPEAT_TOL);
    }
  return 0;
}

/* A step faster than the model's FLOPs at the GPUs' peak. */
static int check_possible(const strata_measurements_t *m, const double *least,
                          const double *pred) {
  char a[64];
  for (int i = 0; i < m->n; i++)
    if (least[i] > 0 && m->v[i].step_seconds < least[i])
      return strata_error(
          STRATA_EBADINPUT,
          "%s: run %d (%s): a step of %.4g s is impossible: its FLOPs take "
          "at least %.4g s at the GPUs' peak (it would run at %.0f %% of "
          "peak; the model predicts %.4g s): give the whole step, in seconds",
          m->where, i + 1, run_name(&m->v[i], a, sizeof a),
          m->v[i].step_seconds, least[i], 100 * least[i] / m->v[i].step_seconds,
          pred[i]);
  return 0;
}

static int least_squares(fit_t *F, double *x) {
  const size_t p = (size_t)F->n_free, n = (size_t)F->m->n + p;
  memset(x, 0, sizeof(double) * N_PARAMS);
  if (!p) return 0;
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
  gsl_vector_set_zero(x0);
  gsl_multifit_nlinear_init(x0, &fdf, w);
  gsl_multifit_nlinear_driver(100, 1e-8, 1e-8, 1e-10, NULL, NULL, &info, w);
  unpack(F, w->x, x);
out:
  if (w) gsl_multifit_nlinear_free(w);
  if (x0) gsl_vector_free(x0);
  return rc;
}

/* Each parameter's sensitivity: the most a run's log step moves per unit
 * of its log (of the time per step in shortest steps), from the table. */
static int sensitivities(fit_t *F, const double *base, double *sens) {
  double step, peak;
  for (int k = 0; k < N_PARAMS; k++) {
    double x[N_PARAMS] = {0};
    strata_calibration_t cal;
    x[k] = k == N_PARAMS - 1 ? SENS_STEP * F->unit : SENS_STEP;
    to_cal(x, &cal);
    sens[k] = 0;
    for (int i = 0; i < F->m->n; i++) {
      int rc = cost_run(F, i, &cal, &step, &peak, NULL);
      if (rc) {
        strata_error_prefix("%s: run %d", F->m->where, i + 1);
        return rc;
      }
      double d = fabs(log(step / base[i])) / SENS_STEP;
      sens[k] = d > sens[k] ? d : sens[k];
    }
  }
  return 0;
}

static double rms_log(const strata_measurements_t *m, const double *pred) {
  double s = 0;
  for (int i = 0; i < m->n; i++) {
    double e = log(pred[i] / m->v[i].step_seconds);
    s += e * e;
  }
  return m->n ? sqrt(s / m->n) : 0;
}

/* Leave-one-out: each run predicted by the fit of the others. */
static int leave_one_out(fit_t *F, strata_calibration_report_t *rep) {
  double x[N_PARAMS], peak;
  strata_calibration_t cal;
  int rc = 0;
  rep->step_loo = strata_calloc((size_t)F->m->n, sizeof(double));
  if (!rep->step_loo) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int i = 0; i < F->m->n && !rc; i++) {
    F->skip = i;
    rc = least_squares(F, x);
    to_cal(x, &cal);
    if (!rc) rc = cost_run(F, i, &cal, &rep->step_loo[i], &peak, NULL);
  }
  F->skip = -1;
  if (!rc) rep->rms_loo = rms_log(F->m, rep->step_loo);
  return rc;
}

static int alloc_report(const strata_measurements_t *m,
                        strata_calibration_report_t *rep) {
  rep->n = m->n;
  rep->rms_loo = -1;
  rep->step_before = strata_calloc((size_t)m->n, sizeof(double));
  rep->step_after = strata_calloc((size_t)m->n, sizeof(double));
  rep->peak_before = strata_calloc((size_t)m->n, sizeof(double));
  rep->peak_after = strata_calloc((size_t)m->n, sizeof(double));
  if (!rep->step_before || !rep->step_after || !rep->peak_before ||
      !rep->peak_after)
    return strata_error(STRATA_ENOMEM, "out of memory");
  return 0;
}

/* The runs read and checked, the table's predictions, which parameters
 * the runs can tell. */
static int prepare(fit_t *F, const strata_calibrate_opts_t *o,
                   strata_calibration_report_t *rep) {
  strata_calibration_t none;
  double *least = strata_calloc((size_t)F->m->n, sizeof(double));
  int rc = least ? alloc_report(F->m, rep)
                 : strata_error(STRATA_ENOMEM, "out of memory");
  strata_calibration_init(&none);
  if (!rc) rc = load_runs(F);
  if (!rc && !o->mixed) rc = check_mixed(F);
  if (!rc) rc = check_repeats(F->m);
  if (!rc) rc = predict(F, &none, rep->step_before, rep->peak_before, least);
  if (!rc) rc = check_possible(F->m, least, rep->step_before);
  if (!rc) rc = sensitivities(F, rep->step_before, rep->sensitivity);
  for (int k = 0; !rc && k < N_PARAMS; k++)
    if ((rep->fitted[k] = rep->sensitivity[k] >= SENSITIVE))
      F->free_k[F->n_free++] = k;
  strata_free(least);
  return rc;
}

/* The fitted values, and which ended at a bound of their range. */
static void fill_values(const double *x, strata_calibration_report_t *rep) {
  for (int k = 0; k < N_PARAMS; k++) {
    double v = k == N_PARAMS - 1 ? (x[k] > 0 ? x[k] : 0) : scale(x[k]);
    rep->value[k] = k == N_PARAMS - 1 && v > STEP_HI ? STEP_HI : v;
    rep->at_bound[k] = k == N_PARAMS - 1
                           ? v >= STEP_HI
                           : v <= SCALE_LO * 1.0001 || v >= SCALE_HI / 1.0001;
  }
}

int strata_calibrate_with(const strata_measurements_t *m,
                          const strata_calibrate_opts_t *o,
                          strata_calibration_t *cal,
                          strata_calibration_report_t *rep) {
  fit_t F;
  double x[N_PARAMS];
  int rc;
  memset(&F, 0, sizeof F);
  memset(rep, 0, sizeof *rep);
  F.m = m;
  F.skip = -1;
  if (!m || m->n < 1)
    return strata_error(STRATA_EINVAL, "calibrate: no measured runs");
  if (m->n > MAX_FIT_RUNS)
    return strata_error(STRATA_EBADINPUT,
                        "%s: %d runs; calibrate fits at most %d (each step "
                        "of the fit plans every run): keep the runs of "
                        "distinct configurations, and average repeated "
                        "measurements of one into one run",
                        m->where ? m->where : "calibrate", m->n, MAX_FIT_RUNS);
  rc = prepare(&F, o, rep);
  if (!rc) rc = least_squares(&F, x);
  if (!rc && F.failed)
    rc = strata_error(STRATA_EINFEASIBLE,
                      "calibrate: a run could not be costed at some scales "
                      "tried; check the runs (strata estimate of each)");
  if (rc) goto out;
  to_cal(x, cal);
  fill_values(x, rep);
  /* the memory offset: measured minus predicted peaks, averaged */
  double sum = 0;
  int k = 0;
  for (int i = 0; i < m->n; i++)
    if (m->v[i].peak_bytes > 0) {
      sum += m->v[i].peak_bytes - rep->peak_before[i];
      k++;
    }
  cal->memory_bytes = k ? sum / k : 0;
  rc = predict(&F, cal, rep->step_after, rep->peak_after, NULL);
  rep->rms_before = rms_log(m, rep->step_before);
  rep->rms_after = rms_log(m, rep->step_after);
  if (!rc && m->n > 1 && m->n <= o->loo_max) rc = leave_one_out(&F, rep);
out:
  free_runs(&F);
  if (rc) strata_calibration_report_free(rep);
  return rc;
}

int strata_calibrate(const strata_measurements_t *m, strata_calibration_t *cal,
                     strata_calibration_report_t *rep) {
  strata_calibrate_opts_t o;
  strata_calibrate_opts_init(&o);
  return strata_calibrate_with(m, &o, cal, rep);
}

int strata_calibration_check(const strata_measurements_t *m,
                             const strata_calibrate_opts_t *o,
                             const strata_calibration_t *cal,
                             strata_calibration_report_t *rep) {
  fit_t F;
  strata_calibration_t none;
  memset(&F, 0, sizeof F);
  memset(rep, 0, sizeof *rep);
  F.m = m;
  F.skip = -1;
  if (!m || m->n < 1)
    return strata_error(STRATA_EINVAL, "calibrate: no measured runs");
  strata_calibration_init(&none);
  int rc = alloc_report(m, rep);
  if (!rc) rc = load_runs(&F);
  if (!rc && !o->mixed) rc = check_mixed(&F);
  if (!rc) rc = predict(&F, &none, rep->step_before, rep->peak_before, NULL);
  if (!rc) rc = predict(&F, cal, rep->step_after, rep->peak_after, NULL);
  if (!rc) {
    rep->rms_before = rms_log(m, rep->step_before);
    rep->rms_after = rms_log(m, rep->step_after);
  }
  free_runs(&F);
  if (rc) strata_calibration_report_free(rep);
  return rc;
}

void strata_calibration_report_free(strata_calibration_report_t *rep) {
  if (!rep) return;
  strata_free(rep->step_before);
  strata_free(rep->step_after);
  strata_free(rep->step_loo);
  strata_free(rep->peak_before);
  strata_free(rep->peak_after);
  memset(rep, 0, sizeof *rep);
}
