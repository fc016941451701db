/*
 * test_checkpoint.c - whether a checkpoint written under one plan loads
 * under another (export/checkpoint.c): each format's rule against the
 * framework source it cites, on plans that differ in one degree at a
 * time, and the checkpoint's bytes against the model's parameters.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "strata/strata.h"
#include "testlib.h"

/* A real plan of a small llama on two DGX H100 nodes with the degrees
 * given (0: searched). */
static strata_plan_t *plan_ep(const char *model, int tp, int pp, int ep,
                              int zero, strata_framework_t fw) {
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_t o;
  ASSERT_OK(strata_model_load(model, NULL, &g));
  ASSERT_OK(strata_cluster_load("dgx-h100:2", &c));
  strata_plan_opts_init(&o);
  o.quiet = 1;
  o.threads = 1;
  o.tp = tp, o.pp = pp, o.ep = ep;
  o.zero_stage = zero;
  o.framework = fw;
  ASSERT_OK(strata_pipeline_plan(g, c, &o, &p));
  ASSERT_OK(strata_merge_stitch(p, g, c));
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return p;
}

static strata_plan_t *plan_of(const char *model, int tp, int pp, int zero,
                              strata_framework_t fw) {
  return plan_ep(model, tp, pp, 0, zero, fw);
}

static strata_ckpt_verdict_t verdict(const strata_plan_t *a,
                                     const strata_plan_t *b,
                                     strata_ckpt_format_t f) {
  strata_ckpt_verdict_t v[STRATA_CKPT_FORMATS];
  ASSERT_OK(strata_checkpoint_compare(a, b, v));
  ASSERT_EQ(v[f].format, f);
  /* a verdict says why; a refusal names the conversion */
  ASSERT(v[f].why[0]);
  ASSERT_EQ(!v[f].loads_as_is, v[f].conversion[0] != 0);
  return v[f];
}

/* b: a copy of a's plan with other degrees (the rules read the degrees;
 * the stages and their results stay a's). */
static strata_plan_t with(const strata_plan_t *a, int tp, int pp, int dp,
                          int zero) {
  strata_plan_t b = *a;
  b.tp = tp, b.pp = pp, b.dp = dp, b.zero_stage = zero;
  return b;
}

TEST(megatron_dist_optimizer_refuses_a_tp_pp_change) {
  strata_plan_t *a = plan_of("llama3-8b", 2, 2, 1, STRATA_FRAMEWORK_MEGATRON);
  strata_plan_t b;
  /* dp alone: dp_reshardable reshards it (checkpointing.py checks only
   * (TP, PP)) */
  b = with(a, a->tp, a->pp, a->dp * 2, 1);
  ASSERT(verdict(a, &b, STRATA_CKPT_MG_DIST).loads_as_is);
  /* tp changed under the distributed optimizer: refused, the flag named */
  b = with(a, a->tp * 2, a->pp, a->dp / 2, 1);
  strata_ckpt_verdict_t v = verdict(a, &b, STRATA_CKPT_MG_DIST);
  ASSERT(!v.loads_as_is);
  ASSERT_CONTAINS(v.why, "dp_reshardable");
  ASSERT_CONTAINS(v.why, "tp 2 -> 4");
  ASSERT_CONTAINS(v.conversion, "--dist-ckpt-optim-fully-reshardable");
  /* pp changed: refused too */
  b = with(a, a->tp, a->pp * 2, a->dp / 2, 1);
  ASSERT(!verdict(a, &b, STRATA_CKPT_MG_DIST).loads_as_is);
  /* without the distributed optimizer the model and its optimizer state
   * reshard on load */
  strata_plan_t a0 = with(a, a->tp, a->pp, a->dp, 0);
  b = with(a, a->tp * 2, a->pp, a->dp / 2, 0);
  ASSERT(verdict(&a0, &b, STRATA_CKPT_MG_DIST).loads_as_is);
  /* Megatron-FSDP's fsdp_dtensor: fully reshardable */
  strata_plan_t a3 = with(a, a->tp, a->pp, a->dp, 3);
  b = with(a, a->tp * 2, a->pp, a->dp / 2, 3);
  ASSERT(verdict(&a3, &b, STRATA_CKPT_MG_DIST).loads_as_is);
  strata_plan_destroy(a);
}

TEST(megatron_legacy_needs_convert_py_for_tp_pp) {
  strata_plan_t *a = plan_of("llama3-8b", 2, 2, 1, STRATA_FRAMEWORK_MEGATRON);
  /* a plan whose export writes --ckpt-format torch (the parameter gather
   * under the optimizer step) saves the legacy format */
  ASSERT_EQ(strata_ckpt_default_format(a), STRATA_CKPT_MG_DIST);
  a->overlap_param_gather_step = 1;
  ASSERT_EQ(strata_ckpt_default_format(a), STRATA_CKPT_MG_LEGACY);
  a->overlap_param_gather_step = 0;
  strata_plan_t b = with(a, a->tp, a->pp, a->dp * 2, 1);
  ASSERT(verdict(a, &b, STRATA_CKPT_MG_LEGACY).loads_as_is);
  b = with(a, 1, a->pp * 2, a->dp, 1);
  strata_ckpt_verdict_t v = verdict(a, &b, STRATA_CKPT_MG_LEGACY);
  ASSERT(!v.loads_as_is);
  ASSERT_CONTAINS(v.conversion, "tools/checkpoint/convert.py");
  ASSERT_CONTAINS(v.conversion, "--target-tensor-parallel-size 1 "
                                "--target-pipeline-parallel-size 4");
  ASSERT_CONTAINS(v.conversion, "--no-save-optim");
  strata_plan_destroy(a);
}

TEST(deepspeed_zero_refuses_a_dp_change_universal_does_not) {
  strata_plan_t *a = plan_of("llama3-8b", 2, 2, 1, STRATA_FRAMEWORK_MEGATRON);
  a->framework = STRATA_FRAMEWORK_DEEPSPEED;
  strata_plan_t b = with(a, a->tp, a->pp, a->dp * 2, 1);
  strata_ckpt_verdict_t v = verdict(a, &b, STRATA_CKPT_DS_ZERO);
  ASSERT(!v.loads_as_is);
  ASSERT_CONTAINS(v.why, "data-parallel size");
  ASSERT_CONTAINS(v.conversion, "ds_to_universal.py");
  ASSERT_CONTAINS(v.conversion, "load_universal");
  ASSERT(verdict(a, &b, STRATA_CKPT_DS_UNIVERSAL).loads_as_is);
  /* ZeRO 0: the optimizer's state is not partitioned, dp may change */
  strata_plan_t a0 = with(a, a->tp, a->pp, a->dp, 0);
  b = with(a, a->tp, a->pp, a->dp * 2, 0);
  ASSERT(verdict(&a0, &b, STRATA_CKPT_DS_ZERO).loads_as_is);
  /* a model-parallel change: one model file per rank */
  b = with(a, a->tp * 2, a->pp, a->dp / 2, 0);
  ASSERT(!verdict(&a0, &b, STRATA_CKPT_DS_ZERO).loads_as_is);
  /* the plan's own format under DeepSpeed is the ZeRO checkpoint */
  ASSERT_EQ(strata_ckpt_default_format(a), STRATA_CKPT_DS_ZERO);
  strata_plan_destroy(a);
}

TEST(torch_dcp_reshards_but_the_dataloader_keeps_dp) {
  strata_plan_t *a = plan_of("llama3-8b", 2, 2, 1, STRATA_FRAMEWORK_MEGATRON);
  a->framework = STRATA_FRAMEWORK_TORCHTITAN;
  ASSERT_EQ(strata_ckpt_default_format(a), STRATA_CKPT_DCP);
  strata_plan_t b = with(a, a->tp * 2, 1, a->dp, 1);
  ASSERT(verdict(a, &b, STRATA_CKPT_DCP).loads_as_is);
  b = with(a, a->tp, a->pp, a->dp * 2, 1);
  strata_ckpt_verdict_t v = verdict(a, &b, STRATA_CKPT_DCP);
  ASSERT(!v.loads_as_is);
  ASSERT_CONTAINS(v.why, "refuses another data-parallel degree (4 -> 8");
  ASSERT_CONTAINS(v.conversion, "--checkpoint.exclude_from_loading dataloader");
  strata_plan_destroy(a);
}

TEST(another_model_loads_nowhere) {
  strata_plan_t *a = plan_of("llama3-8b", 2, 2, 1, STRATA_FRAMEWORK_MEGATRON);
  strata_plan_t b = *a;
  b.hidden += 128;
  strata_ckpt_verdict_t v[STRATA_CKPT_FORMATS];
  ASSERT_OK(strata_checkpoint_compare(a, &b, v));
  for (int f = 0; f < STRATA_CKPT_FORMATS; f++) {
    ASSERT(!v[f].loads_as_is);
    ASSERT_CONTAINS(v[f].why, "different models");
  }
  strata_plan_destroy(a);
}

/* The checkpoint holds every parameter once in bf16 and its fp32 main
 * copy and two Adam moments (2 + 12 bytes), whatever the degrees and the
 * ZeRO stage that shard it, and a reshard reads it only where the
 * sharding changes. */
TEST(checkpoint_bytes_are_the_parameters_state_once) {
  strata_graph_t *g = NULL;
  strata_graph_stats_t st;
  ASSERT_OK(strata_model_load("llama3-8b", NULL, &g));
  strata_graph_stats(g, &st);
  strata_graph_destroy(g);
  const int cases[][3] = {
      {1, 1, 1}, {2, 2, 1}, {4, 1, 0}, {1, 4, 1}, {2, 1, 3}};
  double want = 14.0 * (double)st.parameters;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    strata_plan_t *p = plan_of("llama3-8b", cases[i][0], cases[i][1],
                               cases[i][2], STRATA_FRAMEWORK_MEGATRON);
    double got = strata_checkpoint_bytes(p);
    printf("  tp %d pp %d zero %d: %.4g bytes, %.4f of 14 x %lld parameters\n",
           p->tp, p->pp, p->zero_stage, got, got / want,
           (long long)st.parameters);
    ASSERT_NEAR(got, want, 0.01, 0);
    strata_ckpt_verdict_t v[STRATA_CKPT_FORMATS];
    ASSERT_OK(strata_checkpoint_compare(p, p, v));
    ASSERT_EQ(v[STRATA_CKPT_MG_DIST].bytes, 0);
    strata_plan_t b = with(p, p->tp, p->pp, p->dp, p->zero_stage);
    b.dp = p->dp * 2;
    ASSERT_OK(strata_checkpoint_compare(p, &b, v));
    ASSERT_NEAR(v[STRATA_CKPT_MG_DIST].bytes, got, 1e-12, 0);
    ASSERT(v[STRATA_CKPT_MG_DIST].seconds > 0);
    strata_plan_destroy(p);
  }
}

/* A mixture of experts: the experts' shards (ep x etp) and their own
 * data-parallel replicas counted apart from the dense ones'. */
TEST(moe_checkpoint_bytes_count_each_expert_once) {
  strata_graph_t *g = NULL;
  strata_graph_stats_t st;
  ASSERT_OK(strata_model_load("qwen3-30b-a3b", NULL, &g));
  strata_graph_stats(g, &st);
  strata_graph_destroy(g);
  strata_plan_t *p =
      plan_ep("qwen3-30b-a3b", 2, 0, 4, 1, STRATA_FRAMEWORK_MEGATRON);
  double got = strata_checkpoint_bytes(p), want = 14.0 * (double)st.parameters;
  printf("  tp %d ep %d etp %d pp %d dp %d: %.4g bytes, %.4f of 14 x %lld\n",
         p->tp, p->ep, p->etp, p->pp, p->dp, got, got / want,
         (long long)st.parameters);
  ASSERT(p->ep > 1);
  ASSERT_NEAR(got, want, 0.01, 0);
  strata_plan_destroy(p);
}

/* strata diff says it: text after the figures, JSON "checkpoint". */
TEST(diff_says_whether_the_checkpoint_loads) {
  strata_plan_t *a = plan_of("llama3-8b", 2, 2, 1, STRATA_FRAMEWORK_MEGATRON);
  strata_plan_t *b = plan_of("llama3-8b", 4, 1, 1, STRATA_FRAMEWORK_MEGATRON);
  char *t = NULL;
  int differs = 0;
  ASSERT_OK(strata_plan_diff(a, b, 0, &t, &differs));
  ASSERT(differs);
  ASSERT_CONTAINS(t, "checkpoint:\n  megatron-dist (the plan's): does not "
                     "load as is");
  ASSERT_CONTAINS(t, "    convert: resume once under the old plan");
  strata_free(t);
  ASSERT_OK(strata_plan_diff(a, b, 1, &t, &differs));
  ASSERT_CONTAINS(t, "\"checkpoint\":\t{\n\t\t\"format\":\t\"megatron-dist\",\n"
                     "\t\t\"loads_as_is\":\tfalse,");
  ASSERT_CONTAINS(t, "\"checkpoints\":\t[");
  strata_free(t);
  ASSERT_OK(strata_plan_diff(a, a, 0, &t, &differs));
  ASSERT(!strstr(t, "checkpoint"));
  strata_free(t);
  strata_plan_destroy(a);
  strata_plan_destroy(b);
}

static const test_entry_t tests[] = {
    TEST_ENTRY(megatron_dist_optimizer_refuses_a_tp_pp_change),
    TEST_ENTRY(megatron_legacy_needs_convert_py_for_tp_pp),
    TEST_ENTRY(deepspeed_zero_refuses_a_dp_change_universal_does_not),
    TEST_ENTRY(torch_dcp_reshards_but_the_dataloader_keeps_dp),
    TEST_ENTRY(another_model_loads_nowhere),
    TEST_ENTRY(checkpoint_bytes_are_the_parameters_state_once),
    TEST_ENTRY(moe_checkpoint_bytes_count_each_expert_once),
    TEST_ENTRY(diff_says_whether_the_checkpoint_loads),
};

TEST_MAIN(tests)
