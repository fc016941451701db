/*
 * cmd_calibrate.c - `strata calibrate RUNS [-o FILE] [--json]`: fit the
 * cost model's free parameters to measured runs (docs/calibration.md) and
 * write the calibration file that plan and estimate take with
 * --calibration.  It prints, per run, the measured step and peak memory
 * beside the predictions before and after the fit, then the parameters.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/opts.h"
#include "cli/planargs.h"
#include "core/json.h"
#include "pipeline/search.h"
#include "core/stream.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

typedef struct {
  const char *out;
  int json;
  int mixed, loo_max;
  const char *check; /* --check CAL: no fit */
} cal_args_t;

#define CLI_ARGS_T cal_args_t

static const cli_opt_t opts[] = {
    {CLI_STR("output", 'o', out, "FILE",
             "write the calibration file (else it is printed)")},
    {CLI_FLAG("json", json, 1, "print the fit as JSON")},
    {CLI_INT("loo-max", loo_max, 0, 1000, "N",
             "leave-one-out up to N runs (default 20; 0:\n"
             "none): a fit per run")},
    {CLI_STR("check", 0, check, "CAL",
             "fit nothing: the runs predicted by the table\n"
             "and under CAL, a calibration file (how it\n"
             "holds on runs it was not fitted to)")},
    {CLI_FLAG("allow-mixed", mixed, 1,
              "fit runs of several GPU models or frameworks\n"
              "as one set of parameters (a benchmark of the\n"
              "model's own; a cluster's calibration is of one\n"
              "GPU model)")},
    {CLI_END}};

static const cli_optspec_t opt_spec = {
    "calibrate",
    opts,
    "Usage: strata calibrate RUNS [-o FILE] [--json] [--loo-max N]\n"
    "\n"
    "Fit the cost model to steps measured on your cluster.  RUNS is a\n"
    "JSON or CSV file of runs (docs/calibration.md): each a model, a\n"
    "cluster and a configuration as `strata estimate` takes them (a\n"
    "key per option: fp8_recipe for --fp8-recipe), with the measured\n"
    "step_seconds and, if known, peak_memory_gib; all on one GPU model\n"
    "and framework.  The fit scales the GEMM efficiency, fused\n"
    "attention, streaming kernels and the achieved bandwidth inside and\n"
    "across nodes, and adds a fixed time per step and a memory offset,\n"
    "each held near the table by a prior and fitted only where some run\n"
    "is sensitive to it; it reports the error before and after, and\n"
    "each run predicted by the fit of the others (leave-one-out).  plan\n"
    "and estimate use the result with --calibration FILE.\n"
    "\n"
    "Options:\n",
    "\n"
    "Exit codes: 0 fitted, 1 usage, 2 bad runs file, 3 a run that cannot\n"
    "be costed, 4 internal error.\n",
    0,
    21,
    NULL};

/* Per parameter: its value, or why it stayed at the table. */
static void report_params(const strata_calibration_report_t *r) {
  fprintf(st__stdout(), "\n%-16s %10s %12s  %s\n", "parameter", "value",
          "sensitivity", "fit");
  for (int k = 0; k < STRATA_CAL_PARAMS; k++) {
    const char *why = !r->fitted[k]
                          ? "left at the table: no run's step moves 2 % "
                            "for a factor e on it"
                      : r->at_bound[k] ? "fitted, AT A BOUND of its range"
                                       : "fitted";
    if (k == STRATA_CAL_PARAMS - 1)
      fprintf(st__stdout(), "%-16s %9.4fs %12.3f  %s\n",
              strata_calibration_param_name(k), r->value[k], r->sensitivity[k],
              why);
    else
      fprintf(st__stdout(), "%-16s %10.4f %12.3f  %s\n",
              strata_calibration_param_name(k), r->value[k], r->sensitivity[k],
              why);
  }
}

static int report_text(const strata_measurements_t *m,
                       const strata_calibration_report_t *r,
                       const char *caltext, const char *out,
                       const char *check) {
  fprintf(st__stdout(), "%-24s %10s %10s %10s %7s %7s %9s %9s\n", "run",
          "measured", "before", "after", "error", "loo", "peak GiB",
          "predicted");
  for (int i = 0; i < m->n; i++) {
    const strata_measurement_t *v = &m->v[i];
    char label[32], loo[16] = "-";
    if (v->label)
      snprintf(label, sizeof label, "%s", v->label);
    else
      snprintf(label, sizeof label, "%d: tp%d pp%d dp%d mb%d", i + 1, v->po.tp,
               v->po.pp, v->po.dp, v->po.micro_batch);
    if (r->step_loo)
      snprintf(loo, sizeof loo, "%+.1f%%",
               100 * (r->step_loo[i] / v->step_seconds - 1));
    fprintf(st__stdout(), "%-24s %9.3fs %9.3fs %9.3fs %+6.1f%% %7s", label,
            v->step_seconds, r->step_before[i], r->step_after[i],
            100 * (r->step_after[i] / v->step_seconds - 1), loo);
    if (v->peak_bytes > 0)
      fprintf(st__stdout(), " %9.2f %9.2f\n", v->peak_bytes / GIB,
              r->peak_after[i] / GIB);
    else
      fprintf(st__stdout(), " %9s %9.2f\n", "-", r->peak_after[i] / GIB);
  }
  if (check) {
    fprintf(st__stdout(),
            "\nRMS log error of the step: %.1f %% by the table, %.1f %% "
            "under %s\n",
            100 * r->rms_before, 100 * r->rms_after, check);
    return 0;
  }
  fprintf(st__stdout(),
          "\nRMS log error of the step: %.1f %% before, %.1f %% after",
          100 * r->rms_before, 100 * r->rms_after);
  if (r->rms_loo >= 0)
    fprintf(st__stdout(), ", %.1f %% leave-one-out\n", 100 * r->rms_loo);
  else
    fprintf(st__stdout(), "; leave-one-out: %s\n",
            m->n < 2 ? "needs two runs" : "not run (past --loo-max)");
  report_params(r);
  if (out)
    fprintf(st__stdout(), "\ncalibration written to %s\n", out);
  else
    fprintf(st__stdout(), "\n%s", caltext);
  return 0;
}

/* "parameters": [{"name", "value", "sensitivity", "fitted",
 * "at_bound"}] */
static int add_params(cJSON *root, const strata_calibration_report_t *r) {
  cJSON *a = cJSON_CreateArray();
  int rc = a && cJSON_AddItemToObject(root, "parameters", a)
               ? 0
               : strata_error(STRATA_ENOMEM, "out of memory");
  if (rc) cJSON_Delete(a);
  for (int k = 0; !rc && k < STRATA_CAL_PARAMS; k++) {
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(a, o)) {
      cJSON_Delete(o);
      return strata_error(STRATA_ENOMEM, "out of memory");
    }
    rc = st__json_add_str(o, "name", strata_calibration_param_name(k));
    if (!rc) rc = st__json_add_num(o, "value", r->value[k]);
    if (!rc) rc = st__json_add_num(o, "sensitivity", r->sensitivity[k]);
    if (!rc) rc = st__json_add_bool(o, "fitted", r->fitted[k]);
    if (!rc) rc = st__json_add_bool(o, "at_bound", r->at_bound[k]);
  }
  return rc;
}

static int report_json(const strata_measurements_t *m,
                       const strata_calibration_report_t *r,
                       const char *caltext, const char *out,
                       const char *check) {
  cJSON *root = cJSON_CreateObject(), *runs = cJSON_CreateArray();
  cJSON *cal = cJSON_Parse(caltext);
  int rc = 0;
  if (!root || !runs || !cal) rc = strata_error(STRATA_ENOMEM, "out of memory");
  for (int i = 0; !rc && i < m->n; i++) {
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(runs, o)) {
      cJSON_Delete(o);
      rc = strata_error(STRATA_ENOMEM, "out of memory");
      break;
    }
    if (m->v[i].label) rc = st__json_add_str(o, "label", m->v[i].label);
    if (!rc)
      rc = st__json_add_num(o, "measured_step_seconds", m->v[i].step_seconds);
    if (!rc) rc = st__json_add_num(o, "step_seconds_before", r->step_before[i]);
    if (!rc) rc = st__json_add_num(o, "step_seconds_after", r->step_after[i]);
    if (!rc && m->v[i].peak_bytes > 0)
      rc = st__json_add_num(o, "measured_peak_bytes", m->v[i].peak_bytes);
    if (!rc) rc = st__json_add_num(o, "peak_bytes_after", r->peak_after[i]);
    if (!rc && r->step_loo)
      rc = st__json_add_num(o, "step_seconds_loo", r->step_loo[i]);
  }
  if (!rc && !check) rc = add_params(root, r);
  if (!rc && !cJSON_AddItemToObject(root, "runs", runs))
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  else if (!rc)
    runs = NULL;
  if (!rc) rc = st__json_add_num(root, "rms_log_error_before", r->rms_before);
  if (!rc) rc = st__json_add_num(root, "rms_log_error_after", r->rms_after);
  if (!rc && r->rms_loo >= 0)
    rc = st__json_add_num(root, "rms_log_error_loo", r->rms_loo);
  if (!rc && out) rc = st__json_add_str(root, "written_to", out);
  if (!rc && check) rc = st__json_add_str(root, "checked", check);
  if (!rc && !cJSON_AddItemToObject(root, "calibration", cal))
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  else if (!rc)
    cal = NULL;
  char *text = rc ? NULL : st__json_print(root);
  if (!rc && !text) rc = strata_error(STRATA_ENOMEM, "out of memory");
  cJSON_Delete(root);
  cJSON_Delete(runs);
  cJSON_Delete(cal);
  if (rc) return cli_fail("calibrate", rc);
  rc = cli_write_output("calibrate", NULL, text, strlen(text));
  strata_free(text);
  return rc;
}

/* The GPU model and the cluster the fit ran on ("gpu_model", "cluster":
 * the first run's), so that a plan on another GPU warns
 * (docs/calibration.md). */
static int add_fitted_on(const strata_measurements_t *m, char **caltext) {
  strata_cluster_t *c = NULL;
  cJSON *root = NULL;
  const strata_gpu_model_t *g;
  if (m->n < 1 || !m->v[0].cluster) return 0;
  int rc = strata_cluster_load(m->v[0].cluster, &c);
  if (!rc)
    rc = st__json_parse(*caltext, strlen(*caltext), "calibration", &root);
  g = rc ? NULL : strata_cluster_gpu_model(c);
  if (!rc && g && g->name) rc = st__json_add_str(root, "gpu_model", g->name);
  if (!rc) rc = st__json_add_str(root, "cluster", m->v[0].cluster);
  char *out = rc ? NULL : st__json_print(root);
  if (!rc && !out) rc = strata_error(STRATA_ENOMEM, "out of memory");
  if (!rc) {
    strata_free(*caltext);
    *caltext = out;
  }
  cJSON_Delete(root);
  strata_cluster_destroy(c);
  return rc;
}

/* The fit, or with --check the runs predicted under its calibration. */
static int fit_or_check(const cal_args_t *a, const strata_measurements_t *m,
                        const strata_calibrate_opts_t *co,
                        strata_calibration_t *cal,
                        strata_calibration_report_t *rep) {
  int rc;
  if (!a->check) return strata_calibrate_with(m, co, cal, rep);
  if ((rc = strata_calibration_load(a->check, cal))) return rc;
  return strata_calibration_check(m, co, cal, rep);
}

int cli_cmd_calibrate(int argc, char **argv) {
  const char *cmd = "calibrate";
  cal_args_t a = {NULL, 0, 0, 20, NULL};
  strata_calibrate_opts_t co;
  int first, rc;
  strata_measurements_t *m = NULL;
  strata_calibration_t cal;
  strata_calibration_report_t rep;
  char *caltext = NULL;
  memset(&rep, 0, sizeof rep);
  if ((rc = cli_opts_parse(&opt_spec, argc, argv, &a, &first)))
    return rc < 0 ? CLI_OK : rc;
  if (argc - first != 1)
    return cli_usage_error(cmd, "wants one file of measured runs");
  strata_calibrate_opts_init(&co);
  co.loo_max = a.loo_max;
  co.mixed = a.mixed;
  if (a.check && a.out)
    return cli_usage_error(cmd, "--check fits nothing, so writes nothing: "
                                "-o goes with a fit");
  if ((rc = strata_measurements_load_with(argv[first], cli_plan_run_key, NULL,
                                          &m)) ||
      (rc = fit_or_check(&a, m, &co, &cal, &rep)) ||
      (rc = strata_calibration_write(&cal, &caltext)) ||
      (!a.check && (rc = add_fitted_on(m, &caltext)))) {
    rc = cli_fail(cmd, rc);
    goto done;
  }
  if (a.out && (rc = cli_write_output(cmd, a.out, caltext, strlen(caltext))))
    goto done;
  rc = a.json ? report_json(m, &rep, caltext, a.out, a.check)
              : report_text(m, &rep, caltext, a.out, a.check);
done:
  strata_free(caltext);
  strata_calibration_report_free(&rep);
  strata_measurements_destroy(m);
  return rc;
}
