/*
 * test_calibrate.c - strata calibrate moves towards parameters it did not
 * see, and refuses runs no calibration can make true.
 *
 * Measurements are made up from a known calibration: each run's step is
 * what the planner predicts for its configuration on a cluster calibrated
 * with those parameters, and its peak memory the predicted peak.  The fit
 * starts from the table (every scale 1) and must move towards the known
 * parameters (a MAP fit: its prior holds it part of the way); runs files
 * go through the same parser the command reads.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "strata/strata.h"
#include "testlib.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

typedef struct {
  int tp, pp, dp, mb, gb, seq, overlap; /* seq 0: the model's 2048 */
  int sp;                               /* sequence parallelism */
  int unfused; /* attention without flash: its s x s scores streamed */
} cfg_t;

/* The short jobs a user would run to tell the parameters apart (2 DGX
 * A100 nodes): gradient all-reduces across nodes left exposed (the
 * network), long sequences (attention), tensor parallelism in a node with
 * and without sequence parallelism (NVLink against the streaming kernels
 * it shards), attention without flash (its s x s scores streamed) and
 * compute-bound ones (GEMMs).  Columns: tp, pp, dp, micro-batch, global
 * batch, sequence, overlap, sequence parallel, unfused attention. */
static const cfg_t runs[] = {
    {8, 1, 2, 1, 2, 0, 0, 0, 0},     {4, 1, 4, 1, 4, 512, 0, 0, 0},
    {1, 1, 16, 1, 16, 512, 0, 0, 0}, {2, 1, 8, 1, 8, 0, 0, 0, 0},
    {8, 2, 1, 1, 16, 0, 0, 0, 0},    {1, 1, 16, 1, 16, 8192, 1, 0, 0},
    {2, 2, 4, 4, 64, 8192, 0, 0, 0}, {4, 2, 2, 2, 64, 0, 1, 0, 0},
    {1, 2, 8, 2, 64, 0, 1, 0, 0},    {8, 1, 2, 4, 64, 0, 1, 0, 0},
    {8, 1, 2, 1, 2, 0, 0, 1, 0},     {2, 1, 8, 1, 8, 0, 0, 1, 0},
    {1, 1, 16, 1, 16, 0, 1, 0, 1},
};
#define N_RUNS ((int)(sizeof runs / sizeof runs[0]))

static void predict(const cfg_t *r, const strata_calibration_t *cal,
                    double *step, double *peak) {
  strata_plan_opts_t po;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_init(&po);
  po.gen.flash_attention = !r->unfused;
  po.gen.micro_batch = r->mb;
  if (r->seq) po.gen.seq = r->seq;
  ASSERT_OK(strata_model_load("gpt-1.7b", &po.gen, &g));
  ASSERT_OK(strata_cluster_load("dgx-a100:2", &c));
  ASSERT_OK(strata_cluster_calibrate(c, cal));
  po.recompute = STRATA_RECOMPUTE_NONE;
  po.sequence_parallel = r->sp;
  po.vpp = 1;
  po.micro_batch = r->mb;
  po.global_batch = r->gb;
  po.overlap_grad_reduce = r->overlap;
  po.tp = r->tp, po.pp = r->pp, po.dp = r->dp;
  po.first_layers = po.last_layers = strata_graph_layers(g) / r->pp;
  po.no_memory_check = 1;
  po.quiet = 1;
  po.top = 1;
  ASSERT_OK(strata_pipeline_plan(g, c, &po, &p));
  *step = p->step_seconds;
  *peak = p->peak_memory_bytes;
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

/* The runs as the CSV a user writes, measured under cal. */
static void runs_csv(const strata_calibration_t *cal, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n,
                              "model,cluster,flash_attention,tp,pp,dp,"
                              "micro_batch,global_batch,seq,"
                              "overlap_grad_reduce,sequence_parallel,"
                              "step_seconds,"
                              "peak_memory_bytes\n");
  for (int i = 0; i < N_RUNS; i++) {
    double step, peak;
    predict(&runs[i], cal, &step, &peak);
    const cfg_t *r = &runs[i];
    k += (size_t)snprintf(buf + k, n - k,
                          "gpt-1.7b,dgx-a100:2,%s,%d,%d,%d,%d,%d,%d,%s,%s,"
                          "%.9g,%.0f\n",
                          r->unfused ? "false" : "true", r->tp, r->pp, r->dp,
                          r->mb, r->gb, r->seq ? r->seq : 2048,
                          r->overlap ? "true" : "false",
                          r->sp ? "true" : "false", step, peak);
    ASSERT(k < n);
  }
}

TEST(recovers_known_parameters) {
  strata_calibration_t truth, fit;
  strata_calibration_report_t rep;
  strata_measurements_t *m = NULL;
  char csv[8192];
  strata_calibration_init(&truth);
  truth.gemm = 0.85;
  truth.attention = 0.8;
  truth.stream = 1.3;
  truth.link[STRATA_LEVEL_NVLINK] = truth.link[STRATA_LEVEL_PCIE] = 0.7;
  truth.link[STRATA_LEVEL_LEAF] = truth.link[STRATA_LEVEL_SPINE] = 0.6;
  truth.step_seconds = 0.005; /* the prior doubts one past 5 % of a step */
  truth.memory_bytes = 0.75 * GIB;
  runs_csv(&truth, csv, sizeof csv);
  ASSERT_OK(strata_measurements_parse(csv, strlen(csv), "runs.csv", &m));
  ASSERT_EQ(m->n, N_RUNS);
  strata_calibrate_opts_t o;
  strata_calibrate_opts_init(&o);
  o.loo_max = 0; /* thirteen more fits: not what this checks */
  ASSERT_OK(strata_calibrate_with(m, &o, &fit, &rep));
  printf("  fit: gemm %.4f attention %.4f stream %.4f nvlink %.4f net %.4f "
         "step %.5f s memory %.4f GiB; RMS %.2f%% -> %.4f%%\n",
         fit.gemm, fit.attention, fit.stream, fit.link[STRATA_LEVEL_NVLINK],
         fit.link[STRATA_LEVEL_LEAF], fit.step_seconds, fit.memory_bytes / GIB,
         100 * rep.rms_before, 100 * rep.rms_after);
  /* the table is far off these runs, the fit much less; the prior (a
   * 10 % model error against a factor e^0.15 on a scale) holds each scale
   * part of the way from the truth: those the runs see move towards it,
   * a tenth of the way (in their log) at least, and not past it; stream,
   * a few per cent of any step here, stays near the table */
  ASSERT(rep.rms_before > 0.2);
  ASSERT(rep.rms_after < 0.07);
  double want[] = {truth.gemm, truth.attention, truth.link[STRATA_LEVEL_NVLINK],
                   truth.link[STRATA_LEVEL_LEAF]};
  double got[] = {fit.gemm, fit.attention, fit.link[STRATA_LEVEL_NVLINK],
                  fit.link[STRATA_LEVEL_LEAF]};
  for (int k = 0; k < 4; k++) {
    double share = log(got[k]) / log(want[k]);
    ASSERT(share > 0.1 && share < 1.1);
  }
  ASSERT(fit.stream > 0.95 && fit.stream < truth.stream);
  ASSERT(fit.step_seconds > 0 && fit.step_seconds < 0.05);
  ASSERT_NEAR(fit.memory_bytes, truth.memory_bytes, 1e-6, 1);
  for (int k = 0; k < STRATA_CAL_PARAMS; k++) {
    ASSERT(rep.fitted[k]); /* every parameter is seen by some run */
    ASSERT(!rep.at_bound[k]);
  }
  for (int i = 0; i < N_RUNS; i++)
    ASSERT_NEAR(rep.step_after[i], m->v[i].step_seconds, 0.1, 0);
  strata_calibration_report_free(&rep);
  strata_measurements_destroy(m);
}

/* Measured under the table itself: the fit stays at the table. */
TEST(table_runs_stay_at_table) {
  strata_calibration_t none, fit;
  strata_calibration_report_t rep;
  strata_measurements_t *m = NULL;
  char csv[8192];
  strata_calibration_init(&none);
  runs_csv(&none, csv, sizeof csv);
  ASSERT_OK(strata_measurements_parse(csv, strlen(csv), "runs.csv", &m));
  strata_calibrate_opts_t o;
  strata_calibrate_opts_init(&o);
  o.loo_max = 0;
  ASSERT_OK(strata_calibrate_with(m, &o, &fit, &rep));
  ASSERT(rep.rms_before < 1e-6);
  ASSERT_NEAR(fit.gemm, 1, 1e-3, 0);
  ASSERT_NEAR(fit.link[STRATA_LEVEL_LEAF], 1, 1e-3, 0);
  ASSERT_NEAR(fit.step_seconds, 0, 0, 1e-5);
  ASSERT_NEAR(fit.memory_bytes, 0, 0, 1);
  strata_calibration_report_free(&rep);
  strata_measurements_destroy(m);
}

/* The runs file: JSON and CSV read the same keys; mistakes name the place. */
TEST(runs_file_errors) {
  strata_measurements_t *m = NULL;
  const char *json = "{\"format\": \"strata-measurements\", \"version\": 1,"
                     " \"model\": \"gpt-1.7b\", \"cluster\": \"dgx-a100:2\","
                     " \"runs\": [{\"tp\": 8, \"pp\": 1, \"micro_batch\": 2,"
                     " \"step_seconds\": 1.5, \"peak_memory_gib\": 30}]}";
  ASSERT_OK(strata_measurements_parse(json, strlen(json), "r.json", &m));
  ASSERT_EQ(m->n, 1);
  ASSERT_EQ(m->v[0].po.tp, 8);
  ASSERT_EQ(m->v[0].po.micro_batch, 2);
  ASSERT_NEAR(m->v[0].peak_bytes, 30 * GIB, 1e-12, 0);
  ASSERT_STR_EQ(m->v[0].model, "gpt-1.7b");
  strata_measurements_destroy(m);
  static const struct {
    const char *text, *want;
  } bad[] = {
      {"model,cluster,tp,pp,step_secs\n", "r:1: unknown column 'step_secs'"},
      {"model,cluster,tp,pp,step_seconds\ngpt-1.7b,dgx-a100:2,8,1,x\n",
       "r:2: step_seconds = 'x': not a number"},
      {"model,cluster,tp,pp,step_seconds\ngpt-1.7b,dgx-a100:2,8,1,0\n",
       "r:2: needs step_seconds"},
      {"model,cluster,tp,step_seconds\ngpt-1.7b,dgx-a100:2,8,1\n",
       "r:2: needs tp and pp"},
      {"model,tp,pp,step_seconds\n\ngpt-1.7b,8,1,1,5\n",
       "r:3: more fields than the header's 4"},
      {"model,cluster,tp,pp,step_seconds\n", "r: no runs after the header"},
      {"model,tp,cluster,pp,tp,step_seconds\n", "r:1: column 'tp' is given "
                                                "twice (columns 2 and 5)"},
      {"model,cluster,tp,pp,step_seconds\ngpt-1.7b,dgx-a100:2,8,1,1e-300\n",
       "r:2: step_seconds = 1e-300: out of range (1e-06 to 1e+06)"},
      {"model,cluster,tp,pp,step_seconds\ngpt-1.7b,dgx-a100:2,8,1,-1\n",
       "r:2: step_seconds = -1: out of range"},
      {"{\"format\": \"strata-measurements\", \"version\": 1, \"runs\": "
       "[{\"step_seconds\": 2e6}]}",
       "r: runs[0]: step_seconds = 2e+06: out of range (1e-06 to 1e+06)"},
      {"{\"format\": \"strata-measurements\", \"version\": 1, \"runs\": "
       "[{\"peak_memory_gib\": 1e-300}]}",
       "r: runs[0]: peak_memory_gib = 1e-300: out of range"},
      {"{\"format\": \"strata-measurements\", \"version\": 1, \"runs\": "
       "[{\"peak_memory_gib\": 20, \"peak_memory_bytes\": 2e10}]}",
       "r: runs[0]: peak_memory_bytes and peak_memory_gib are both given"},
      {"{\"format\": \"strata-measurements\", \"version\": 2, \"runs\": []}",
       "measurements version 2"},
      {"{\"format\": \"strata-measurements\", \"version\": 1, \"runs\": "
       "[{\"tp\": 1.5}]}",
       "r: runs[0]: tp = 1.5: wants a whole number"},
      {"{\"format\": \"strata-measurements\", \"version\": 1, \"runs\": "
       "[{\"tpp\": 1}]}",
       "r: runs[0]: unknown key 'tpp'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ASSERT(strata_measurements_parse(bad[i].text, strlen(bad[i].text), "r",
                                     &m) != 0);
    ASSERT(m == NULL);
    ASSERT_CONTAINS(strata_last_error(), bad[i].want);
    strata_error_clear();
  }
}

/* A CSV buffer is read to its length, not to a NUL that may not be
 * there (found by fuzz_runs: the reader walked past the end). */
TEST(runs_csv_read_to_length) {
  strata_measurements_t *m = NULL;
  const char *text = "model,cluster,tp,pp,step_seconds\n"
                     "gpt-1.7b,dgx-a100:2,8,1,1.5\n"
                     "not,a,run";
  size_t len = strlen(text) - strlen("not,a,run");
  ASSERT_OK(strata_measurements_parse(text, len, "r.csv", &m));
  ASSERT_EQ(m->n, 1);
  ASSERT_NEAR(m->v[0].step_seconds, 1.5, 1e-12, 0);
  strata_measurements_destroy(m);
  ASSERT(strata_measurements_parse(text, 0, "r.csv", &m) != 0);
  ASSERT(m == NULL);
}

/* A run the model cannot cost is named with its number. */
TEST(uncostable_run_named) {
  strata_measurements_t *m = NULL;
  strata_calibration_t fit;
  strata_calibration_report_t rep;
  const char *csv = "model,cluster,tp,pp,dp,micro_batch,global_batch,"
                    "step_seconds\n"
                    "gpt-1.7b,dgx-a100:2,8,1,2,1,64,1.0\n"
                    "gpt-1.7b,dgx-a100:2,8,5,1,1,64,1.0\n";
  ASSERT_OK(strata_measurements_parse(csv, strlen(csv), "r.csv", &m));
  ASSERT(strata_calibrate(m, &fit, &rep) != 0);
  ASSERT_CONTAINS(strata_last_error(), "r.csv: run 2");
  ASSERT_CONTAINS(strata_last_error(), "do not split evenly over 5 stages");
  strata_error_clear();
  strata_measurements_destroy(m);
}

/* More runs than a fit takes: refused at once with the bound, before any
 * run is planned. */
TEST(too_many_runs_refused) {
  strata_buf_t b;
  strata_measurements_t *m = NULL;
  strata_calibration_t cal;
  strata_calibration_report_t rep;
  strata_buf_init(&b);
  strata_buf_puts(&b, "model,cluster,tp,pp,dp,step_seconds\n");
  for (int i = 0; i < 1001; i++)
    strata_buf_puts(&b, "gpt-1.7b,dgx-a100:1,1,1,8,1.5\n");
  ASSERT(!b.oom);
  ASSERT_OK(strata_measurements_parse(b.p, b.len, "many.csv", &m));
  ASSERT_EQ(m->n, 1001);
  double t0 = strata_now();
  ASSERT_EQ(strata_calibrate(m, &cal, &rep), STRATA_EBADINPUT);
  ASSERT(strata_now() - t0 < 5); /* no run was planned (generous) */
  ASSERT(strstr(strata_last_error(), "many.csv: 1001 runs; calibrate fits "
                                     "at most 1000") != NULL);
  strata_measurements_destroy(m);
  strata_buf_free(&b);
}

/* The fit of runs text, or the error it ends with (loo: leave-one-out
 * up to that many runs). */
static int fit_text(const char *csv, int loo, strata_calibration_t *fit,
                    strata_calibration_report_t *rep) {
  strata_measurements_t *m = NULL;
  strata_calibrate_opts_t o;
  strata_calibrate_opts_init(&o);
  o.loo_max = loo;
  int rc = strata_measurements_parse(csv, strlen(csv), "r.csv", &m);
  if (!rc) rc = strata_calibrate_with(m, &o, fit, rep);
  strata_measurements_destroy(m);
  return rc;
}

#define HEAD                                                                   \
  "label,model,cluster,tp,pp,dp,micro_batch,global_batch,step_seconds\n"

/* Runs no calibration can make true are refused before the fit, named. */
TEST(contradicting_runs_refused) {
  strata_calibration_t fit;
  strata_calibration_report_t rep;
  static const struct {
    const char *csv, *want;
  } bad[] = {
      {HEAD "a,gpt-1.7b,dgx-a100:2,8,1,2,4,64,1.10\n"
            "b,gpt-1.7b,dgx-a100:2,1,1,16,1,16,0.24\n"
            "c,gpt-1.7b,dgx-a100:2,8,1,2,4,64,1.45\n",
       "r.csv: runs 1 (a) and 3 (c) are one configuration measured at 1.1 s "
       "and 1.45 s, 32 % apart"},
      {HEAD "a,gpt-1.7b,dgx-a100:2,8,1,2,4,64,0.01\n",
       "r.csv: run 1 (a): a step of 0.01 s is impossible: its FLOPs take at "
       "least"},
      {HEAD "a,gpt-1.7b,dgx-a100:2,8,1,2,4,64,1.1\n"
            "h,gpt-1.7b,dgx-h100:2,8,1,2,4,64,0.6\n",
       "r.csv: run 2 (h) is on H100-SXM GPUs, run 1 (a) on A100-80GB: a "
       "calibration is of one GPU model"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ASSERT_EQ(fit_text(bad[i].csv, 0, &fit, &rep), STRATA_EBADINPUT);
    ASSERT_CONTAINS(strata_last_error(), bad[i].want);
    strata_error_clear();
  }
  /* a repeat within 10 % is a measurement, fitted */
  ASSERT_OK(fit_text(HEAD "a,gpt-1.7b,dgx-a100:1,8,1,1,4,64,1.10\n"
                          "b,gpt-1.7b,dgx-a100:1,8,1,1,4,64,1.15\n",
                     0, &fit, &rep));
  strata_calibration_report_free(&rep);
}

/* One run 40 % slower than the table on one node: the fit moves the
 * parameters it speaks to part of the way (the prior holds them), none to
 * a bound, and leaves the network, which no step on one node crosses, at
 * the table, saying so. */
TEST(one_run_stays_near_prior) {
  strata_calibration_t fit;
  strata_calibration_report_t rep;
  double step, peak;
  strata_calibration_t none;
  cfg_t r = {8, 1, 1, 4, 64, 0, 0, 0, 0};
  strata_calibration_init(&none);
  predict(&r, &none, &step, &peak); /* 8 GPUs of one node, as below */
  char csv[512];
  snprintf(csv, sizeof csv, HEAD "a,gpt-1.7b,dgx-a100:1,8,1,1,4,64,%.6g\n",
           1.4 * step);
  ASSERT_OK(fit_text(csv, 0, &fit, &rep));
  ASSERT_EQ(rep.fitted[4], 0); /* network */
  ASSERT(rep.sensitivity[4] < 0.02);
  ASSERT_NEAR(fit.link[STRATA_LEVEL_LEAF], 1, 0, 0);
  ASSERT(rep.fitted[0]); /* gemm */
  for (int k = 0; k < STRATA_CAL_PARAMS; k++) {
    ASSERT(!rep.at_bound[k]);
    if (k < STRATA_CAL_PARAMS - 1)
      ASSERT(rep.value[k] > 0.5 && rep.value[k] < 2);
  }
  /* most of the 40 % is taken, not all: the prior pulls back */
  ASSERT(rep.step_after[0] > 1.1 * step && rep.step_after[0] < 1.4 * step);
  ASSERT(rep.rms_loo < 0 && rep.step_loo == NULL); /* one run: none */
  strata_calibration_report_free(&rep);
}

/* Leave-one-out: each run predicted by the fit of the others, no better
 * than the fit that saw it. */
TEST(leave_one_out_reported) {
  strata_calibration_t fit;
  strata_calibration_report_t rep;
  ASSERT_OK(fit_text(HEAD "a,gpt-1.7b,dgx-a100:2,8,1,2,4,64,1.10\n"
                          "b,gpt-1.7b,dgx-a100:2,1,1,16,1,16,0.24\n"
                          "c,gpt-1.7b,dgx-a100:2,2,2,4,1,64,0.71\n",
                     20, &fit, &rep));
  ASSERT(rep.step_loo != NULL);
  ASSERT(rep.rms_loo >= rep.rms_after);
  for (int i = 0; i < 3; i++)
    ASSERT(rep.step_loo[i] > 0);
  strata_calibration_report_free(&rep);
}

static const test_entry_t tests[] = {
    TEST_ENTRY(contradicting_runs_refused),
    TEST_ENTRY(one_run_stays_near_prior),
    TEST_ENTRY(leave_one_out_reported),
    TEST_ENTRY(recovers_known_parameters),
    TEST_ENTRY(table_runs_stay_at_table),
    TEST_ENTRY(runs_file_errors),
    TEST_ENTRY(runs_csv_read_to_length),
    TEST_ENTRY(uncostable_run_named),
    TEST_ENTRY(too_many_runs_refused),
};

TEST_MAIN(tests)
