/*
 * test_cost.c - a token budget's time, cost and energy (pipeline/cost.c)
 * and the choice by objective on a mixed cluster (pipeline/hetero.c):
 * --gpu-price's text, the formulas of docs/cost-model.md ("Cost and
 * energy") on a plan, and a cluster where the cheapest plan is not the
 * fastest, so that a choice by time would fail here.
 */
#include <math.h>
#include <string.h>

#include "strata/strata.h"
#include "testlib.h"

#define SPEC(f) STRATA_SOURCE_DIR "/tests/data/topo/" f

/* --gpu-price: the table's price without it, a bare price for every
 * model, a model's own winning over the bare one, and the malformed
 * texts refused. */
TEST(gpu_price_text) {
  const strata_gpu_model_t *h = strata_gpu_model_find("H100-SXM");
  const strata_gpu_model_t *a = strata_gpu_model_find("A100-80GB");
  const strata_gpu_model_t *n = strata_gpu_model_find("Ascend-910B");
  double v = -1, tdp = 0;
  ASSERT_OK(strata_gpu_price_of(NULL, h, &v));
  ASSERT_NEAR(v, 2.49, 1e-12, 0);
  ASSERT_OK(strata_gpu_price_of(NULL, n, &v));
  ASSERT_EQ(v, 0); /* not known: left unknown */
  ASSERT_OK(strata_gpu_price_of("3", a, &v));
  ASSERT_NEAR(v, 3, 1e-12, 0);
  ASSERT_OK(strata_gpu_price_of("H100-SXM=1.5,3", h, &v));
  ASSERT_NEAR(v, 1.5, 1e-12, 0);
  ASSERT_OK(strata_gpu_price_of("H100-SXM=1.5,3", a, &v));
  ASSERT_NEAR(v, 3, 1e-12, 0);
  ASSERT_OK(strata_gpu_price_of("h100-sxm=1.5", a, &v));
  ASSERT_NEAR(v, 1.30, 1e-12, 0); /* another model's: the table's */
  const char *bad[] = {
      "0", "-2", "x", "H100-SXM=", "=2", "X100=2", "2,,3", "1e5"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ASSERT(strata_gpu_price_of(bad[i], h, &v) == STRATA_EINVAL);
  strata_gpu_model_power_price(h, &tdp, NULL);
  ASSERT_EQ(tdp, 700);
  strata_gpu_model_power_price(a, &tdp, NULL);
  ASSERT_EQ(tdp, 400);
}

static strata_plan_t *plan_of(const strata_graph_t *g,
                              const strata_cluster_t *c, int objective,
                              const char *price) {
  strata_plan_opts_t o;
  strata_plan_t *p = NULL;
  strata_plan_opts_init(&o);
  o.quiet = 1;
  o.threads = 1;
  o.model_spec = "gpt-1.7b";
  o.tokens = 1e12;
  o.objective = objective;
  o.gpu_price = price;
  ASSERT_OK(strata_pipeline_plan(g, c, &o, &p));
  ASSERT_OK(strata_merge_stitch(p, g, c));
  return p;
}

/* The figures as docs/cost-model.md states them: the time from the step,
 * the cost from the GPUs' prices, the power between 0.1 and 1 of their
 * TDP as the MFU says. */
static void check_formulas(const strata_plan_t *p, double usd_h, double tdp_w) {
  double t = 1e12 * p->step_seconds / ((double)p->global_batch * p->seq_len);
  ASSERT_NEAR(p->train_seconds, t, 1e-9, 0);
  ASSERT_NEAR(p->price_usd_per_hour, usd_h, 1e-9, 0);
  ASSERT_NEAR(p->cost_usd, usd_h * t / 3600, 1e-9, 0);
  ASSERT_NEAR(p->power_kw, tdp_w * (0.1 + 0.9 * p->mfu) / 1e3, 1e-6, 0);
  ASSERT_NEAR(p->energy_kwh, p->power_kw * t / 3600, 1e-9, 0);
}

/* mixed.json, 16 H100-SXM and 16 A100-80GB: by time the plan spreads
 * over both groups; by cost (the table's prices) the H100s alone are
 * cheaper though slower, and the plan keeps the fastest's figures; with
 * the A100s' price cut to 0.2 the A100s alone, the slowest, are. */
TEST(objective_cost_picks_the_cheaper_slower_plan) {
  strata_cluster_t *c = NULL;
  strata_graph_t *g = NULL;
  strata_gen_opts_t gen;
  strata_gen_opts_keep(&gen);
  ASSERT_OK(strata_cluster_load(SPEC("mixed.json"), &c));
  ASSERT_OK(strata_model_load("gpt-1.7b", &gen, &g));
  strata_plan_t *t = plan_of(g, c, STRATA_OBJECTIVE_TIME, NULL);
  strata_plan_t *k = plan_of(g, c, STRATA_OBJECTIVE_COST, NULL);
  ASSERT_EQ(t->devices, 32); /* both groups */
  ASSERT_EQ(k->devices, 16); /* the H100s alone */
  ASSERT_STR_EQ(k->stages[0].gpu_model, "H100-SXM");
  ASSERT(k->step_seconds > t->step_seconds);
  ASSERT(k->cost_usd < t->cost_usd);
  check_formulas(t, 16 * 2.49 + 16 * 1.30, 16 * 700.0 + 16 * 400.0);
  check_formulas(k, 16 * 2.49, 16 * 700.0);
  ASSERT_EQ(t->time_best_seconds, 0); /* the fastest itself */
  ASSERT_NEAR(k->time_best_seconds, t->train_seconds, 1e-12, 0);
  ASSERT_NEAR(k->time_best_cost, t->cost_usd, 1e-12, 0);
  ASSERT_NEAR(k->time_best_energy, t->energy_kwh, 1e-12, 0);
  printf("  by time %.0f s, $%.0f; by cost %.0f s, $%.0f\n", t->train_seconds,
         t->cost_usd, k->train_seconds, k->cost_usd);
  strata_plan_t *s = plan_of(g, c, STRATA_OBJECTIVE_COST, "A100-80GB=0.2");
  ASSERT_EQ(s->devices, 16);
  ASSERT_STR_EQ(s->stages[0].gpu_model, "A100-80GB");
  ASSERT(s->step_seconds > k->step_seconds);
  check_formulas(s, 16 * 0.2, 16 * 400.0);
  strata_plan_destroy(s);
  strata_plan_destroy(k);
  strata_plan_destroy(t);
  strata_graph_destroy(g);
  strata_cluster_destroy(c);
}

/* The objective's inputs are refused before any search: cost without a
 * budget, and cost where a group's GPU has no price. */
TEST(objective_needs_its_inputs) {
  strata_cluster_t *c = NULL, *n = NULL;
  strata_graph_t *g = NULL;
  strata_gen_opts_t gen;
  strata_plan_opts_t o;
  strata_plan_t *p = NULL;
  strata_gen_opts_keep(&gen);
  ASSERT_OK(strata_cluster_load(SPEC("mixed.json"), &c));
  ASSERT_OK(strata_cluster_load(SPEC("h100-ascend.json"), &n));
  ASSERT_OK(strata_model_load("gpt-1.7b", &gen, &g));
  strata_plan_opts_init(&o);
  o.quiet = 1;
  o.objective = STRATA_OBJECTIVE_COST;
  ASSERT(strata_pipeline_plan(g, c, &o, &p) == STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "needs --tokens");
  o.tokens = 1e9;
  ASSERT(strata_pipeline_plan(g, n, &o, &p) == STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "no price is known for the Ascend");
  ASSERT(p == NULL);
  strata_graph_destroy(g);
  strata_cluster_destroy(n);
  strata_cluster_destroy(c);
}

static const test_entry_t tests[] = {
    TEST_ENTRY(gpu_price_text),
    TEST_ENTRY(objective_cost_picks_the_cheaper_slower_plan),
    TEST_ENTRY(objective_needs_its_inputs),
};

TEST_MAIN(tests)
