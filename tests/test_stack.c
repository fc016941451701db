/*
 * test_stack.c - the software stack (include/strata/stack.h): the
 * attention kernels' table against the published figures it holds, the
 * --stack keys and the frameworks' defaults, and a long-context sweep of
 * Llama 3 8B with context parallelism from 4k to 1M tokens costed through
 * strata estimate's path: each kernel's step ranks as its curve says, the
 * ring's exposure and memory as the kernel and the sequence make them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "strata/strata.h"
#include "testlib.h"

static strata_perf_t perf_of(const char *gpu) {
  strata_perf_t p;
  strata_perf_of(strata_gpu_model_find(gpu), &p, NULL);
  return p;
}

/* The table's ratios are the FlashAttention-3 paper's figures over
 * cuDNN's at the points of its sweep; TE's is the GPU table's own. */
TEST(attention_table_matches_its_source) {
  strata_perf_t h = perf_of("H100-SXM"), a = perf_of("A100-80GB");
  for (int k = 0; k < STRATA_ATTN_COUNT; k++)
    if (k == STRATA_ATTN_TE)
      ASSERT_EQ(strata_stack_attn_scale(&h, k, 8192, 128, 1, 0), 1.0);
  /* hd 128, no mask, 512 keys: FA2 309, cuDNN 497, FA3 467 TFLOP/s */
  ASSERT_NEAR(strata_stack_attn_scale(&h, STRATA_ATTN_FA2, 512, 128, 0, 0),
              309.0 / 497, 1e-12, 0);
  ASSERT_NEAR(strata_stack_attn_scale(&h, STRATA_ATTN_FA3, 512, 128, 0, 0),
              467.0 / 497, 1e-12, 0);
  /* causal, 16k: FA3 616 over cuDNN 539; held flat to 1M */
  ASSERT_NEAR(strata_stack_attn_scale(&h, STRATA_ATTN_FA3, 16384, 128, 1, 0),
              616.0 / 539, 1e-12, 0);
  ASSERT_NEAR(strata_stack_attn_scale(&h, STRATA_ATTN_FA3, 1 << 20, 128, 1, 1),
              616.0 / 539, 1e-12, 0);
  /* hd 256 at 4k: FA3 612 over 483; hd 64 at 2k: FA2 318 over 395 */
  ASSERT_NEAR(strata_stack_attn_scale(&h, STRATA_ATTN_FA3, 4096, 256, 0, 0),
              612.0 / 483, 1e-12, 0);
  ASSERT_NEAR(strata_stack_attn_scale(&h, STRATA_ATTN_FA2, 2048, 64, 0, 0),
              318.0 / 395, 1e-12, 0);
  /* between the sweep's points: between their values */
  double lo = strata_stack_attn_scale(&h, STRATA_ATTN_FA3, 1024, 128, 1, 0),
         mid = strata_stack_attn_scale(&h, STRATA_ATTN_FA3, 1448, 128, 1, 0),
         hi = strata_stack_attn_scale(&h, STRATA_ATTN_FA3, 2048, 128, 1, 0);
  ASSERT(lo < mid && mid < hi);
  /* SDPA is its FA2 backend; Flex 90 % / 85 % of it */
  double fa2 = strata_stack_attn_scale(&h, STRATA_ATTN_FA2, 8192, 128, 1, 0);
  ASSERT_EQ(strata_stack_attn_scale(&h, STRATA_ATTN_SDPA, 8192, 128, 1, 0),
            fa2);
  ASSERT_NEAR(strata_stack_attn_scale(&h, STRATA_ATTN_FLEX, 8192, 128, 1, 0),
              0.9 * fa2, 1e-12, 0);
  ASSERT_NEAR(strata_stack_attn_scale(&h, STRATA_ATTN_FLEX, 8192, 128, 1, 1),
              0.85 * fa2, 1e-12, 0);
  /* Ampere: FA2 is the fused kernel; FA3 Hopper only */
  ASSERT_EQ(strata_stack_attn_scale(&a, STRATA_ATTN_FA2, 8192, 128, 1, 0), 1.0);
  ASSERT(!strata_stack_attn_runs(&a, STRATA_ATTN_FA3));
  ASSERT(strata_stack_attn_runs(&h, STRATA_ATTN_FA3));
  strata_perf_t b = perf_of("B200");
  ASSERT(!strata_stack_attn_runs(&b, STRATA_ATTN_FA3));
  ASSERT(strata_stack_stream_scale(STRATA_GEMM_PATH_EAGER) < 1);
  ASSERT_EQ(strata_stack_stream_scale(STRATA_GEMM_PATH_TE), 1.0);
}

TEST(stack_keys_and_defaults) {
  strata_stack_t s;
  strata_stack_init(&s);
  ASSERT_OK(strata_stack_parse("attn=fa3,gemm=compile", &s));
  ASSERT_EQ(s.attn, STRATA_ATTN_FA3);
  ASSERT_EQ(s.gemm, STRATA_GEMM_PATH_COMPILE);
  strata_stack_default(STRATA_FRAMEWORK_TORCHTITAN, &s); /* given: kept */
  ASSERT_EQ(s.attn, STRATA_ATTN_FA3);
  strata_stack_init(&s);
  strata_stack_default(STRATA_FRAMEWORK_TORCHTITAN, &s);
  ASSERT_EQ(s.attn, STRATA_ATTN_SDPA);
  ASSERT_EQ(s.gemm, STRATA_GEMM_PATH_EAGER);
  strata_stack_init(&s);
  strata_stack_default(STRATA_FRAMEWORK_MEGATRON, &s);
  ASSERT_EQ(s.attn, STRATA_ATTN_TE);
  ASSERT_EQ(s.gemm, STRATA_GEMM_PATH_TE);
  strata_stack_init(&s);
  strata_stack_default(STRATA_FRAMEWORK_DEEPSPEED, &s);
  ASSERT_EQ(s.attn, STRATA_ATTN_FA2);
  ASSERT(strata_stack_parse("attn=fa9", &s) == STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "fa9");
  ASSERT(strata_stack_parse("gemm", &s) == STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "KEY=VALUE");
  ASSERT(strata_stack_parse("tp=1", &s) == STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "unknown key");
  ASSERT(strata_stack_parse("", &s) == STRATA_EINVAL);
  ASSERT_EQ(s.alloc, STRATA_ALLOC_CACHING); /* every framework's default */
  ASSERT_OK(strata_stack_parse("alloc=expandable", &s));
  ASSERT_EQ(s.alloc, STRATA_ALLOC_EXPANDABLE);
  ASSERT(strata_stack_parse("alloc=vmm", &s) == STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "expandable");
}

/* The caching allocator's fragmentation, 0.15 of the dynamic memory
 * (GMLake's average), charged as it comes; with expandable segments none,
 * and every other item of the rank's memory as it was. */
static void rank0_memory(int alloc, strata_mem_items_t *m, char **json) {
  strata_plan_opts_t po;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_init(&po);
  strata_gen_opts_keep(&po.gen);
  po.gen.seq = 8192, po.gen.micro_batch = 1;
  po.micro_batch = 1, po.global_batch = 32;
  po.tp = 2, po.pp = 2, po.dp = 2;
  po.no_memory_check = 1, po.quiet = 1, po.top = 1;
  po.stack.alloc = alloc;
  ASSERT_OK(strata_model_load("llama3-8b", &po.gen, &g));
  ASSERT_OK(strata_cluster_load("dgx-h100:1", &c));
  ASSERT_OK(strata_pipeline_plan(g, c, &po, &p));
  *m = p->ranks[0].mem;
  ASSERT_OK(strata_plan_json(p, json));
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

TEST(expandable_segments_fragmentation) {
  strata_mem_items_t a, b;
  char *ja = NULL, *jb = NULL;
  rank0_memory(-1, &a, &ja);
  rank0_memory(STRATA_ALLOC_EXPANDABLE, &b, &jb);
  ASSERT(a.activations > 0);
  ASSERT_NEAR(a.fragmentation, 0.15 * (a.activations + a.transient), 1e-9, 0);
  ASSERT_EQ(b.fragmentation, 0.0);
  ASSERT_EQ(b.activations, a.activations);
  ASSERT_EQ(b.weights, a.weights);
  ASSERT_NEAR(a.total - b.total, a.fragmentation, 1e-9, 0);
  ASSERT(!strstr(ja, "\"alloc\"")); /* the default, not shown */
  ASSERT_CONTAINS(jb, "\"alloc\":\t\"expandable\"");
  strata_free(ja);
  strata_free(jb);
}

/* strata estimate's path: Llama 3 8B at seq tokens, tp 8, cp seq/32k
 * (at least 1), one sequence a step, full recompute, under kernel k. */
static int sweep_point(int seq, int k, const char *gpu, strata_plan_t **out) {
  strata_plan_opts_t po;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  char spec[64];
  int cp = seq / 32768 > 1 ? seq / 32768 : 1;
  strata_plan_opts_init(&po);
  strata_gen_opts_keep(&po.gen);
  po.gen.seq = seq;
  po.gen.micro_batch = 1;
  po.micro_batch = 1;
  po.global_batch = 1;
  po.recompute = STRATA_RECOMPUTE_FULL;
  po.tp = 8, po.pp = 1, po.dp = 1, po.cp = cp;
  po.no_memory_check = 1;
  po.quiet = 1;
  po.top = 1;
  po.stack.attn = k;
  snprintf(spec, sizeof spec, "%s:%d", gpu, cp);
  int rc = strata_model_load("llama3-8b", &po.gen, &g);
  if (!rc) rc = strata_cluster_load(spec, &c);
  if (!rc) rc = strata_pipeline_plan(g, c, &po, out);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return rc;
}

/* 4k to 1M tokens: the kernels' steps rank as their curves at the ring
 * block's keys (seq / cp) say; the step grows with the sequence (each
 * rank's attention with it, its tokens held at 32k); a faster kernel leaves
 * more of the ring's exchange exposed; memory per rank holds the ring's
 * buffers. */
TEST(long_context_sweep_ranks_as_kernels) {
  static const int seqs[] = {4096, 16384, 65536, 262144, 1048576};
  static const int ks[] = {STRATA_ATTN_TE, STRATA_ATTN_FA2, STRATA_ATTN_FA3,
                           STRATA_ATTN_FLEX, STRATA_ATTN_FA1};
  strata_perf_t h = perf_of("H100-SXM");
  double prev_step[5] = {0};
  for (size_t i = 0; i < sizeof seqs / sizeof seqs[0]; i++) {
    double step[5], expo[5];
    int cp = seqs[i] / 32768 > 1 ? seqs[i] / 32768 : 1;
    double block = (double)seqs[i] / cp;
    for (int j = 0; j < 5; j++) {
      strata_plan_t *p = NULL;
      ASSERT_OK(sweep_point(seqs[i], ks[j], "dgx-h100", &p));
      step[j] = p->step_seconds;
      expo[j] = p->step_items.cp_comm;
      /* each rank's attention grows with the whole sequence */
      if (i > 0) ASSERT(step[j] > prev_step[j]);
      prev_step[j] = step[j];
      if (cp > 1) ASSERT(p->ranks[0].mem.cp_buffers > 0);
      strata_plan_destroy(p);
    }
    for (int a = 0; a < 5; a++)
      for (int b = 0; b < 5; b++) {
        double sa = strata_stack_attn_scale(&h, ks[a], block, 128, 1, 0),
               sb = strata_stack_attn_scale(&h, ks[b], block, 128, 1, 0);
        if (sa > sb * 1.01) ASSERT(step[a] < step[b]);
        /* a faster kernel hides no more of the ring's exchange */
        if (sa > sb * 1.01 && cp > 1) ASSERT(expo[a] >= expo[b]);
      }
  }
}

/* The FLOP convention: MFU with causal attention halved, and with it
 * counted whole, which is larger by the masked half's FLOPs. */
TEST(mfu_states_both_conventions) {
  strata_plan_t *p = NULL;
  ASSERT_OK(sweep_point(65536, STRATA_ATTN_TE, "dgx-h100", &p));
  ASSERT(p->model_flops_unmasked_per_step > p->model_flops_per_step);
  ASSERT(p->stack_known && p->stack.attn == STRATA_ATTN_TE);
  char *text = NULL;
  ASSERT_OK(strata_plan_json(p, &text));
  ASSERT_CONTAINS(text, "causal_halved");
  ASSERT_CONTAINS(text, "\"mfu_causal_full\"");
  ASSERT_CONTAINS(text, "\"stack\"");
  strata_free(text);
  strata_plan_destroy(p);
}

/* FSDP2 (torchtitan, ZeRO-3 without a pipeline): the running block's
 * parameters and the prefetched next one's in 16 bits, the running
 * block's gradients and their fp32 copy, where Megatron-FSDP is charged
 * the largest weight gathered; the running unit the embedding where it is
 * the larger. */
static double z3_transient(strata_framework_t fw, double *params) {
  strata_plan_opts_t po;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_init(&po);
  strata_gen_opts_keep(&po.gen);
  po.gen.seq = 8192, po.gen.micro_batch = 1;
  po.micro_batch = 1, po.global_batch = 32;
  po.tp = 1, po.pp = 1, po.dp = 8, po.zero_stage = 3;
  po.framework = fw;
  po.no_memory_check = 1, po.quiet = 1, po.top = 1;
  ASSERT_OK(strata_model_load("llama3-8b", &po.gen, &g));
  ASSERT_OK(strata_cluster_load("dgx-h100:1", &c));
  ASSERT_OK(strata_pipeline_plan(g, c, &po, &p));
  strata_graph_stats_t gs;
  strata_graph_stats(g, &gs);
  *params = (double)gs.parameters;
  double t = p->ranks[0].mem.transient;
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return t;
}

TEST(fsdp2_gather_buffers) {
  double n = 0;
  double mg = z3_transient(STRATA_FRAMEWORK_MEGATRON, &n);
  double tt = z3_transient(STRATA_FRAMEWORK_TORCHTITAN, &n);
  double emb = 128256.0 * 4096, block = n / 32, run = emb > block ? emb : block;
  double want = 2 * (run + block) + 6 * run;
  ASSERT_NEAR(tt - mg, want - 2 * emb, 1e-9, 0);
}

static const test_entry_t tests[] = {
    TEST_ENTRY(attention_table_matches_its_source),
    TEST_ENTRY(stack_keys_and_defaults),
    TEST_ENTRY(long_context_sweep_ranks_as_kernels),
    TEST_ENTRY(mfu_states_both_conventions),
    TEST_ENTRY(fsdp2_gather_buffers),
    TEST_ENTRY(expandable_segments_fragmentation),
};

TEST_MAIN(tests)
