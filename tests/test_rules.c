/*
 * test_rules.c - the rulebook (rules/rules.c): for each rule one
 * configuration that breaks it and only it (the rule named in the verdict
 * is that rule), configurations every framework accepts, the order in
 * which two broken rules are told, the rows asked of saved plans (which
 * strata estimate does not ask), and the library's entries asking it:
 * strata_pipeline_fix and strata_pipeline_plan with fixed degrees refuse
 * what strata estimate refuses, with the same words.
 */
#include <stdio.h>
#include <string.h>

#include "strata/strata.h"
#include "testlib.h"

/* 16 GPUs of 8 a node; tp 2 x pp 2 x dp 4 of a dense model. */
static strata_rules_config_t dense(void) {
  strata_rules_config_t c;
  memset(&c, 0, sizeof c);
  c.target = STRATA_RULES_MEGATRON;
  c.megatron = 1;
  c.world = 16, c.gpus_per_node = 8;
  c.tp = 2, c.pp = 2, c.dp = 4, c.cp = 1, c.vpp = 1;
  c.micro_batch = 1, c.global_batch = 64;
  c.zero_stage = -1, c.sequence_parallel = -1;
  c.moe_grouped_gemm = c.moe_shared_overlap = STRATA_AUTO; /* not given */
  c.recompute = STRATA_RECOMPUTE_NONE;
  c.precision = STRATA_PRECISION_BF16;
  c.model = "m";
  c.layers = 24, c.heads = 16, c.kv_heads = 8, c.seq_len = 2048;
  c.flash_attention = 1;
  return c;
}

/* The same with 8 experts over ep 2 (etp = tp). */
static strata_rules_config_t moe(void) {
  strata_rules_config_t c = dense();
  c.experts = 8, c.moe_ffn = 1024, c.ep = 2;
  return c;
}

static const unsigned ALL = STRATA_RULES_CONFIG | STRATA_RULES_OPTIONS;

/* c breaks `rule` first, and the reason says `words`. */
static void refused(const strata_rules_config_t *c, unsigned when,
                    const char *rule, const char *words) {
  strata_rules_verdict_t v;
  memset(&v, 0, sizeof v);
  ASSERT_EQ(strata_rules_check(c, when, &v), 1);
  ASSERT_STR_EQ(v.rule, rule);
  ASSERT(v.source && v.source[0]);
  ASSERT_CONTAINS(v.why, words);
}

TEST(accepted_by_both_planned_frameworks) {
  strata_rules_config_t c[2] = {dense(), moe()};
  c[1].sequence_parallel = 1;
  for (int i = 0; i < 2; i++) {
    ASSERT_EQ(strata_rules_check(&c[i], ALL, NULL), 0);
    c[i].target = STRATA_RULES_DEEPSPEED;
    c[i].ep = i ? 0 : c[i].ep; /* DeepSpeed's config sets up no ep */
    ASSERT_EQ(strata_rules_check(&c[i], ALL, NULL), 0);
  }
  /* the even split Megatron-LM takes by default, and a given one */
  strata_rules_config_t s = dense();
  s.pp = 4, s.dp = 2, s.first_layers = 4, s.last_layers = 4; /* 8 + 8 */
  ASSERT_EQ(strata_rules_check(&s, ALL, NULL), 0);
}

/* Megatron-LM's splits beyond a first and a last rank: the embedding and
 * the loss counted as layers (24 + 2 = 26 over pp 2: 13 a rank, 12 and 12
 * layers), and an explicit layout of every virtual stage. */
TEST(layer_splits_beyond_first_and_last) {
  strata_rules_config_t c = dense();
  c.layers = 26, c.pp = 4, c.dp = 1; /* 26 over 4: not evenly */
  refused(&c, ALL, "split-even", "--account-for-embedding");
  c.account_embedding = c.account_loss = 1; /* 28 = 4 x 7 */
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.account_loss = 0; /* 27 units over 4 */
  refused(&c, ALL, "account-split", "27 units");
  c = dense(), c.account_loss = 1, c.first_layers = 11;
  refused(&c, ALL, "account-uneven", "--first-stage-layers");
  c = dense(), c.pp = 1, c.dp = 8, c.account_embedding = 1; /* a no-op */
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.pipeline_layout = "Et*24L";
  refused(&c, ALL, "account-pp", "needs a pipeline");
  c = dense(), c.vpp = 0;
  c.pipeline_layout = "Et*5|t*6|t*6|t*7L"; /* 24 layers, 4 stages: vpp 2 */
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.pipeline_layout = "E(t*3|)*7t*3L"; /* Megatron-LM's groups: 8 stages */
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.pipeline_layout = "Et*2,t*3|t*6|t*6|t*7L"; /* commas are cosmetic */
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  /* chunks of no transformer layer: the embedding's alone, the loss's
   * alone, and one left empty (Megatron-LM's layouts allow all three) */
  c.pipeline_layout = "E|t*8|t*8|t*8L";
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.pipeline_layout = "Et*12|t*12||L";
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  static const struct {
    const char *layout, *words;
  } bad[] = {
      {"Et*5|t*6|t*6|t*6L", "23 transformer layers 't', the model has 24"},
      {"Et*5|t*6|t*6|t*7", "the loss 'L' comes once, last"},
      {"t*5|t*6|t*6|t*7L", "the embedding 'E' comes once, first"},
      {"Et*5|t*6|t*6|t*7Lt", "the loss 'L' comes once, last"},
      {"Et*5|t*6|t*6|t*7mL", "1 multi-token prediction modules"},
      {"Et*5|(t*6|*2t*7L", "has no ')'"},
      {"Et*5|((t*6|)*2)*1t*7L", "does not nest them"},
      {"Et*5|(t*6|)t*7L", "needs something inside and '*N'"},
      {"Et*5|t*6|t*6|t*7xL", "'x' is not a layer"},
      {"Et*99999999|L", "a count of 0 to 2^20"},
      {"E|||L", "0 transformer layers 't', the model has 24"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    c.pipeline_layout = bad[i].layout;
    refused(&c, ALL, "layout-form", bad[i].words);
  }
  c.pp = 4, c.dp = 2, c.pipeline_layout = "Et*12|t*11|tL"; /* 3 stages */
  refused(&c, ALL, "layout-form", "3 virtual stages: a multiple of --pp 4");
  c = dense(), c.vpp = 3, c.pipeline_layout = "Et*5|t*6|t*6|t*7L";
  refused(&c, ALL, "layout-form", "--vpp says 3");
  c = dense(), c.pipeline_layout = "Et*12|t*12L", c.first_layers = 12;
  refused(&c, ALL, "layout-form", "drop --first-stage-layers");
  c = dense(), c.pipeline_layout = "Et*12|t*12L", c.megatron = 0;
  refused(&c, ALL, "layout-form", "free mode");
  c = dense(), c.pipeline_layout = "Et*12|t*12L", c.account_loss = 1;
  refused(&c, ALL, "account-uneven", "--pipeline-layout");
  c = dense(), c.target = STRATA_RULES_DEEPSPEED, c.account_embedding = 1;
  c.layers = 25; /* 26 over 2 */
  refused(&c, ALL, "ds-layout", "a Megatron-LM layer split");
}

/* Selective recompute's modules: only with selective recompute, and only
 * the modules the model has (transformer_config.py refuses mla_up_proj
 * without latent attention; the others would recompute nothing). */
TEST(recompute_modules_rules) {
  strata_rules_config_t c = dense();
  c.recompute_modules = STRATA_RCM_LAYERNORM | STRATA_RCM_MLP;
  c.recompute = STRATA_RECOMPUTE_SELECTIVE;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.recompute = STRATA_RECOMPUTE_FULL;
  refused(&c, ALL, "recompute-modules-selective", "--recompute full");
  c = dense(), c.recompute_modules = STRATA_RCM_MOE_ACT;
  c.recompute = STRATA_RECOMPUTE_AUTO;
  refused(&c, ALL, "recompute-modules-model", "need a mixture of experts");
  c = moe(), c.recompute_modules = STRATA_RCM_SHARED_EXPERTS;
  c.recompute = STRATA_RECOMPUTE_AUTO;
  refused(&c, ALL, "recompute-modules-model", "needs shared experts");
  c.shared = 1;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.recompute_modules = STRATA_RCM_MLA_UP_PROJ;
  refused(&c, ALL, "recompute-modules-model", "latent attention");
  c.recompute_modules = STRATA_RCM_MLP, c.moe_layers = 24;
  refused(&c, ALL, "recompute-modules-model", "dense MLP");
  c = dense(), c.recompute_modules = STRATA_RCM_MLP;
  c.recompute = STRATA_RECOMPUTE_AUTO;
  c.target = STRATA_RULES_DEEPSPEED;
  refused(&c, ALL, "ds-recompute-modules", "--recompute-modules");
  /* Megatron-LM's delayed FP8 scaling takes neither layernorm nor moe_act */
  c = dense(), c.recompute_modules = STRATA_RCM_LAYERNORM;
  c.recompute = STRATA_RECOMPUTE_AUTO, c.lowp = STRATA_LOWP_DELAYED;
  c.precision = STRATA_PRECISION_FP8;
  refused(&c, ALL | STRATA_RULES_PLAN, "recompute-modules-fp8",
          "--fp8-recipe delayed");
  c.recompute_modules = STRATA_RCM_MLP;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.target = STRATA_RULES_TORCHTITAN;
  refused(&c, STRATA_RULES_PLAN, "torch-recompute-modules",
          "export it for Megatron-LM");
  /* ... and the other recipes do */
  c = dense(), c.recompute_modules = STRATA_RCM_LAYERNORM;
  c.recompute = STRATA_RECOMPUTE_AUTO, c.precision = STRATA_PRECISION_FP8;
  c.fp8_recipe = c.lowp = STRATA_LOWP_TENSORWISE;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
}

/* Full recompute by units of layers: full recompute's arguments alone;
 * DeepSpeed's checkpointing and the PyTorch exports recompute each layer
 * whole. */
TEST(recompute_unit_rules) {
  strata_rules_config_t c = dense();
  c.recompute = STRATA_RECOMPUTE_FULL, c.recompute_layers = 4;
  c.recompute_method = STRATA_RECOMPUTE_BLOCK;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.recompute = STRATA_RECOMPUTE_SELECTIVE;
  refused(&c, ALL, "recompute-unit", "--recompute selective");
  c.recompute = STRATA_RECOMPUTE_NONE, c.recompute_method = 0;
  refused(&c, ALL, "recompute-unit", "--recompute none");
  c.recompute = STRATA_RECOMPUTE_AUTO; /* the search makes it full */
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.recompute = STRATA_RECOMPUTE_FULL, c.target = STRATA_RULES_DEEPSPEED;
  refused(&c, ALL, "ds-recompute-unit", "--recompute-num-layers");
  c.recompute_layers = 1; /* each layer its own unit: DeepSpeed's too */
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.recompute_method = STRATA_RECOMPUTE_BLOCK;
  refused(&c, ALL, "ds-recompute-unit", "--recompute-method");
  c = dense(), c.recompute = STRATA_RECOMPUTE_FULL, c.recompute_layers = 2;
  c.target = STRATA_RULES_TORCHTITAN;
  refused(&c, STRATA_RULES_PLAN, "torch-recompute-modules",
          "--recompute-num-layers 2, --recompute-method uniform");
}

/* Transformer Engine's recipes: --fp8-recipe is FP8's; MXFP8 and NVFP4
 * need Blackwell's tensor cores. */
TEST(fp8_recipe_rules) {
  strata_rules_config_t c = dense();
  c.precision = STRATA_PRECISION_FP8, c.blackwell = 0;
  c.fp8_recipe = c.lowp = STRATA_LOWP_BLOCKWISE;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.precision = STRATA_PRECISION_BF16, c.lowp = 0;
  refused(&c, ALL, "fp8-recipe", "give --precision fp8");
  c.precision = STRATA_PRECISION_FP4, c.lowp = STRATA_LOWP_NVFP4;
  c.blackwell = 1;
  refused(&c, ALL, "fp8-recipe", "NVFP4's recipe alone");
  c = dense(), c.precision = STRATA_PRECISION_FP8, c.blackwell = 0;
  c.fp8_recipe = c.lowp = STRATA_LOWP_MXFP8;
  refused(&c, ALL, "fp8-recipe", "Blackwell's tensor cores only");
  c.blackwell = 1;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.blackwell = -1; /* not known (a plan's): not refused */
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c = dense(), c.precision = STRATA_PRECISION_FP4, c.blackwell = 0;
  c.lowp = STRATA_LOWP_NVFP4;
  refused(&c, ALL, "fp8-recipe", "NVFP4 (--precision fp4)");
  c.fp8_recipe = STRATA_LOWP_NVFP4, c.precision = STRATA_PRECISION_FP8;
  c.blackwell = 1;
  refused(&c, ALL, "fp8-recipe", "--precision fp4");
}

/* The precision-aware optimizer: the state types only with it, and only
 * in the distributed optimizer; DeepSpeed's config has none. */
/* Activations offloaded: fewer layers than the model's, one stage, no
 * recompute, CUDA graphs of the whole step only; not DeepSpeed. */
TEST(offloading_rules) {
  strata_rules_config_t c = dense();
  c.pp = 1, c.dp = 8, c.offload_layers = 12;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.offload_layers = 24;
  refused(&c, ALL, "cpu-offloading", "fewer layers than the model's 24");
  c.offload_layers = 12, c.pp = 2, c.dp = 4;
  refused(&c, ALL, "cpu-offloading", "--pp 1");
  c.pp = 1, c.dp = 8, c.recompute = STRATA_RECOMPUTE_SELECTIVE;
  refused(&c, ALL, "cpu-offloading", "--recompute none");
  c.recompute = STRATA_RECOMPUTE_NONE, c.cuda_graph_impl = STRATA_CUDA_GRAPH_TE;
  refused(&c, ALL, "cpu-offloading", "full_iteration");
  c.cuda_graph_impl = STRATA_CUDA_GRAPH_FULL;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.cuda_graph_impl = 0, c.target = STRATA_RULES_DEEPSPEED;
  refused(&c, ALL, "ds-cpu-offloading", "activation offloading");
}

/* Fine-grained activation offloading (transformer_config.py): attn_proj
 * only with core_attn, the experts' modules only in a mixture of experts
 * and not inside a recomputed MoE layer, not with layer offloading or
 * full recompute, CUDA graphs of Transformer Engine only and then not
 * the norms; not DeepSpeed, nor the PyTorch exports. */
TEST(fine_grained_offloading_rules) {
  strata_rules_config_t c = dense();
  c.offload_modules = STRATA_OFM_CORE_ATTN | STRATA_OFM_ATTN_PROJ;
  ASSERT_EQ(strata_rules_check(&c, ALL | STRATA_RULES_PLAN, NULL), 0);
  c.offload_modules = STRATA_OFM_ATTN_PROJ;
  refused(&c, ALL, "fine-grained-offloading", "needs core_attn too");
  c.offload_modules = STRATA_OFM_MOE_ACT;
  refused(&c, ALL, "fine-grained-offloading", "has no experts");
  c.offload_modules = STRATA_OFM_QKV_LINEAR, c.pp = 1, c.dp = 8;
  c.offload_layers = 4;
  refused(&c, ALL, "fine-grained-offloading", "cpu_offloading");
  c.offload_layers = 0, c.recompute = STRATA_RECOMPUTE_FULL;
  refused(&c, ALL, "fine-grained-offloading", "--recompute full");
  c.recompute = STRATA_RECOMPUTE_SELECTIVE;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.offload_modules |= STRATA_OFM_CORE_ATTN;
  c.recompute_modules = STRATA_RCM_CORE_ATTN;
  refused(&c, ALL, "fine-grained-offloading", "core_attn is recomputed too");
  c.recompute_modules = STRATA_RCM_MLP;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.recompute_modules = 0, c.offload_modules = STRATA_OFM_QKV_LINEAR;
  c.cuda_graph_impl = STRATA_CUDA_GRAPH_LOCAL;
  refused(&c, ALL, "fine-grained-offloading", "--cuda-graph-impl local");
  c.cuda_graph_impl = STRATA_CUDA_GRAPH_TE, c.recompute = STRATA_RECOMPUTE_NONE;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.offload_modules |= STRATA_OFM_MLP_NORM;
  refused(&c, ALL, "fine-grained-offloading", "attn_norm/mlp_norm");
  c.cuda_graph_impl = 0, c.target = STRATA_RULES_DEEPSPEED;
  refused(&c, ALL, "ds-fine-grained-offloading", "--offload-modules");
  c.target = STRATA_RULES_TORCHTITAN;
  refused(&c, STRATA_RULES_PLAN, "torch-megatron-memory", "--offload-modules");
}

/* The optimizer offloaded: a fraction in (0, 1], with the precision-aware
 * optimizer, with the FP8 parameter gather only under delayed scaling;
 * the PyTorch exports refuse it. */
TEST(optimizer_offload_rules) {
  strata_rules_config_t c = dense();
  c.optimizer_offload = 0.5;
  refused(&c, ALL, "optimizer-offload", "--precision-aware-optimizer");
  c.precision_aware_optimizer = 1, c.zero_stage = 1;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.optimizer_offload = 1.5;
  refused(&c, ALL | STRATA_RULES_PLAN, "optimizer-offload", "not in (0, 1]");
  c.optimizer_offload = 1, c.precision = STRATA_PRECISION_FP8;
  c.fp8_param_gather = 1, c.lowp = STRATA_LOWP_TENSORWISE;
  refused(&c, ALL, "optimizer-offload", "--fp8-recipe delayed");
  c.lowp = STRATA_LOWP_DELAYED;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c = dense(), c.optimizer_offload = 1, c.precision_aware_optimizer = 1;
  c.target = STRATA_RULES_TORCHTITAN;
  refused(&c, STRATA_RULES_PLAN, "torch-megatron-memory",
          "--optimizer-offload-fraction");
  c.optimizer_offload = 0;
  refused(&c, STRATA_RULES_PLAN, "torch-megatron-memory",
          "--precision-aware-optimizer");
}

TEST(precision_aware_optimizer_rules) {
  strata_rules_config_t c = dense();
  c.state_dtypes = 1;
  refused(&c, ALL, "state-dtypes", "need --precision-aware-optimizer");
  c.precision_aware_optimizer = 1;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.zero_stage = 0;
  refused(&c, ALL, "precision-aware-zero", "not with --zero 0");
  c = dense(), c.precision_aware_optimizer = 1;
  c.target = STRATA_RULES_DEEPSPEED;
  refused(&c, ALL, "ds-precision-aware-optimizer", "FusedAdam");
}

TEST(sizes) {
  strata_rules_config_t c = dense();
  c.dp = 0, c.world = 18;
  refused(&c, ALL, "world", "world size 18 is not divisible");
  c = dense(), c.dp = 8;
  refused(&c, ALL, "gpus", "= 32 exceeds the 16 GPUs");
  c = dense(), c.heads = 15;
  refused(&c, ALL, "heads",
          "attention heads (15) must be divisible by the "
          "tensor-parallel size 2");
  c = dense(), c.kv_heads = 3;
  refused(&c, ALL, "query-groups", "query groups (3)");
  c = dense(), c.cp = 2, c.dp = 2, c.seq_len = 2050;
  refused(&c, ALL, "cp-seq", "seq-length (2050)");
  c = dense(), c.cp = 2, c.dp = 2, c.flash_attention = 0;
  refused(&c, ALL, "cp-fused-attention", "give --flash-attention");
  c = dense(), c.pp = 2, c.layers = 1;
  refused(&c, ALL, "pp-layers", "pipeline size 2 exceeds the 1 layers");
  c = dense(), c.gpus_per_node = 6, c.tp = 4, c.dp = 2;
  refused(&c, ALL, "tp-node", "must divide its 6 GPUs");
}

TEST(experts) {
  strata_rules_config_t c = dense();
  c.ep = 2;
  refused(&c, ALL, "ep-dense", "the model has no experts");
  c = dense(), c.etp = 1; /* etp other than tp: expert parallelism too */
  refused(&c, ALL, "ep-dense", "num_experts must be non None");
  c = moe(), c.overlap_ep_comm = 1; /* pp 2 without interleaving */
  refused(&c, ALL, "ep-overlap", "--overlap-moe-expert-parallel-comm");
  c.pp = 1, c.dp = 8; /* pp 1: Megatron-LM overlaps it */
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c = moe(), c.ep = 3;
  refused(&c, ALL, "ep-experts", "number of experts (8)");
  c = moe(), c.ep = 8, c.etp = 2;
  refused(&c, ALL, "ep-world", "2 x 1 x 4 is not divisible");
  c = moe(), c.tp = 4, c.dp = 2, c.etp = 2;
  refused(&c, ALL, "etp-sizes", "Strata models 1 and the tensor-parallel");
  c = moe(), c.moe_ffn = 1001;
  refused(&c, ALL, "etp-ffn", "hidden size 1001");
  c = moe(), c.tp = 4, c.dp = 2, c.etp = 1;
  refused(&c, ALL, "ep-layout", "with etp 1 it must be a multiple of 4");
  c = moe(), c.sequence_parallel = 0;
  refused(&c, ALL, "ep-sequence-parallel", "sequence parallelism must");
}

/* DeepSpeed's partition methods (--ds-partition-method): the split a
 * method gives is accepted uneven, a hand split only if it is that one,
 * and the option is DeepSpeed's alone.  BLOOM: 70 layers over 12 stages,
 * 5 on each end stage with 'type:transformer|embedding'. */
TEST(deepspeed_partition_method) {
  strata_rules_config_t c = dense();
  c.target = STRATA_RULES_DEEPSPEED;
  c.layers = 70, c.pp = 12, c.world = 96, c.dp = 2, c.tied = 1;
  c.global_batch = 48;
  refused(&c, STRATA_RULES_OPTIONS, "ds-even-split", "--ds-partition-method");
  c.ds_partition = STRATA_DS_TYPE_TRANSFORMER_EMBEDDING;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.first_layers = c.last_layers = 5; /* BLOOM's, as its run states it */
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.ds_partition = STRATA_DS_TYPE_TRANSFORMER; /* 6 x 10, 5, 5 */
  refused(&c, ALL, "ds-partition", "6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5, 5");
  c.first_layers = c.last_layers = 0;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.ds_partition = STRATA_DS_TYPE_EMBEDDING;
  refused(&c, ALL, "ds-partition", "no transformer layer");
  /* one stage: nothing to partition */
  c.ds_partition = STRATA_DS_UNIFORM, c.pp = 1, c.dp = 24;
  refused(&c, ALL, "ds-partition", "--pp 1 has one");
  c = dense(), c.ds_partition = STRATA_DS_UNIFORM;
  refused(&c, STRATA_RULES_OPTIONS, "ds-partition-framework",
          "--framework deepspeed");
  /* a saved plan's remedy: the DeepSpeed export */
  c.saved = 1;
  refused(&c, STRATA_RULES_PLAN, "ds-partition-framework",
          "export it for DeepSpeed");
}

TEST(batch_and_interleaving) {
  strata_rules_config_t c = dense();
  c.global_batch = 63;
  refused(&c, ALL, "global-batch", "global batch size (63)");
  c = dense(), c.tp = 1, c.dp = 8, c.sequence_parallel = 1;
  refused(&c, ALL, "sp-tp", "tensor-parallel size above 1");
  /* ZeRO 2/3 with a pipeline: Megatron-FSDP and torchtitan's FSDP2 run
   * it, DeepSpeed's pipeline engine does not */
  c = dense(), c.zero_stage = 3;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c.target = STRATA_RULES_MEGATRON | STRATA_RULES_TORCHTITAN;
  c.framework = STRATA_FRAMEWORK_TORCHTITAN;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
  c = dense(), c.zero_stage = 2, c.target = STRATA_RULES_DEEPSPEED;
  refused(&c, STRATA_RULES_CONFIG, "zero-pp",
          "which DeepSpeed runs without pipeline parallelism");
  c = dense(), c.pp = 1, c.dp = 8, c.vpp = 2;
  refused(&c, ALL, "vpp-pp", "a pipeline of 2 stages or more");
  c = dense(), c.vpp = 2, c.global_batch = 4; /* 1 micro-batch a step */
  refused(&c, ALL, "vpp-micro-batches", "micro-batches per step (1)");
}

TEST(layer_split) {
  strata_rules_config_t c = dense();
  c.layers = 25;
  refused(&c, ALL, "split-even", "25 layers do not split evenly over 2");
  c = dense(), c.first_layers = 20, c.last_layers = 10;
  refused(&c, ALL, "split-rest", "-6 layers left");
  c = dense(), c.pp = 4, c.dp = 1, c.first_layers = 5, c.last_layers = 6;
  refused(&c, ALL, "split-middle", "13 layers do not split evenly");
  c.first_layers = c.last_layers = 6, c.vpp = 4;
  refused(&c, ALL, "split-vpp", "6 layers on each middle pipeline stage");
}

/* The options rows: DeepSpeed's, and Megatron-LM's target is not asked. */
TEST(deepspeed_options) {
  strata_rules_config_t c = dense();
  c.vpp = 2;
  ASSERT_EQ(strata_rules_check(&c, STRATA_RULES_OPTIONS, NULL), 0);
  c.target = STRATA_RULES_DEEPSPEED;
  refused(&c, STRATA_RULES_OPTIONS, "ds-vpp", "no interleaving (--vpp)");
  c = dense(), c.target = STRATA_RULES_DEEPSPEED, c.zero_stage = 0;
  refused(&c, STRATA_RULES_OPTIONS, "ds-zero0", "fp32 master weights");
  c.zero_stage = 1, c.layers = 25;
  refused(&c, STRATA_RULES_OPTIONS, "ds-even-split", "type:transformer");
  /* under DeepSpeed a configuration's uneven split is its rule too, whose
   * remedy is the partition method (Megatron-LM's split-even names
   * Megatron-LM's options) */
  refused(&c, ALL, "ds-even-split", "--ds-partition-method");
  c.target = STRATA_RULES_MEGATRON;
  refused(&c, ALL, "split-even", "--decoder-first/last-pipeline-num-layers");
  c.target = STRATA_RULES_DEEPSPEED;
  c.first_layers = 13;
  ASSERT_EQ(strata_rules_check(&c, STRATA_RULES_OPTIONS, NULL), 0);
}

/* Two broken rules: the table's first is told (heads before the batch). */
TEST(first_rule_told) {
  strata_rules_config_t c = dense();
  c.heads = 15, c.global_batch = 63;
  refused(&c, ALL, "heads", "(15)");
  c.heads = 16;
  refused(&c, ALL, "global-batch", "(63)");
}

/* The plan rows, asked of a saved plan before it is exported; strata
 * estimate does not ask them. */
TEST(plan_rows) {
  const unsigned PLAN = STRATA_RULES_PLAN;
  strata_rules_config_t c = dense();
  c.saved = 1, c.tp_comm_overlap = 1;
  refused(&c, PLAN, "tp-comm-overlap-sp", "needs sequence parallelism");
  ASSERT_EQ(strata_rules_check(&c, STRATA_RULES_CONFIG, NULL), 0);
  c = dense(), c.overlap_p2p = 1;
  refused(&c, PLAN, "p2p-overlap-vpp", "only with virtual pipeline stages");
  c.vpp = 2;
  ASSERT_EQ(strata_rules_check(&c, PLAN, NULL), 0);
  c = dense(), c.scatter_gather = 1, c.sequence_parallel = 0;
  c.framework = STRATA_FRAMEWORK_DEEPSPEED;
  refused(&c, PLAN, "scatter-gather", "re-plan with --framework megatron");
  c = dense(), c.overlap_param_gather = 1;
  refused(&c, PLAN, "param-gather-grad-reduce", "--overlap-grad-reduce");
  c.overlap_grad_reduce = 1;
  ASSERT_EQ(strata_rules_check(&c, PLAN, NULL), 0);
}

/* --fp8-param-gather needs FP8 and the distributed optimizer. */
TEST(fp8_param_gather) {
  strata_rules_config_t c = dense();
  c.fp8_param_gather = 1;
  refused(&c, ALL, "fp8-param-gather", "give --precision fp8");
  c.precision = STRATA_PRECISION_FP8, c.zero_stage = 0;
  refused(&c, ALL, "fp8-param-gather", "--zero 1 or more");
  c.zero_stage = 1;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
}

/* Megatron-LM's --overlap-param-gather-with-optimizer-step (arguments.py
 * at d98e8a64): the distributed optimizer (ZeRO 1), the parameter gather
 * overlapped and interleaving, of a configuration or a plan; of options
 * what they fix; and the search asks the same row (ST__AT_CFG is its
 * stage: test_gate checks the plans). */
TEST(param_gather_optimizer_step) {
  const unsigned PLAN = STRATA_RULES_CONFIG | STRATA_RULES_PLAN;
  strata_rules_config_t c = dense();
  c.overlap_param_gather_step = 1;
  c.zero_stage = 1, c.overlap_grad_reduce = c.overlap_param_gather = 1;
  c.pp = 2, c.vpp = 2, c.global_batch = 64;
  ASSERT_EQ(strata_rules_check(&c, ALL | PLAN, NULL), 0);
  c.vpp = 1;
  refused(&c, PLAN, "param-gather-optimizer-step", "interleaved pipeline");
  refused(&c, STRATA_RULES_OPTIONS, "param-gather-optimizer-step-given",
          "--vpp > 1");
  c.vpp = 0; /* the options leave it to the search: not refused there */
  ASSERT_EQ(strata_rules_check(&c, STRATA_RULES_OPTIONS, NULL), 0);
  refused(&c, PLAN, "param-gather-optimizer-step", "interleaved pipeline");
  c.vpp = 2, c.overlap_param_gather = 0;
  refused(&c, PLAN, "param-gather-optimizer-step", "--overlap-param-gather");
  c.overlap_param_gather = 1, c.zero_stage = 3;
  refused(&c, PLAN, "param-gather-optimizer-step", "not ZeRO 3");
  c.zero_stage = STRATA_AUTO; /* chosen: the search asks it concretely */
  ASSERT_EQ(strata_rules_check(&c, ALL | PLAN, NULL), 0);
  c.target = STRATA_RULES_DEEPSPEED, c.vpp = 0;
  c.overlap_grad_reduce = c.overlap_param_gather = STRATA_AUTO;
  refused(&c, STRATA_RULES_OPTIONS, "param-gather-optimizer-step-given",
          "Megatron-LM's");
}

/* A switch given on that the options make meaningless is refused by
 * name; left out (STRATA_AUTO) or given off it is not. */
TEST(meaningless_switches) {
  const unsigned OPT = STRATA_RULES_OPTIONS;
  strata_rules_config_t c = dense();
  c.overlap_grad_reduce = c.overlap_param_gather = STRATA_AUTO;
  c.overlap_p2p = c.scatter_gather = STRATA_AUTO;
  ASSERT_EQ(strata_rules_check(&c, OPT, NULL), 0);
  c.target = STRATA_RULES_DEEPSPEED, c.zero_stage = 1;
  ASSERT_EQ(strata_rules_check(&c, OPT, NULL), 0);
  c.overlap_grad_reduce = 0; /* off is what DeepSpeed runs */
  ASSERT_EQ(strata_rules_check(&c, OPT, NULL), 0);
  c.overlap_grad_reduce = 1;
  refused(&c, OPT, "grad-reduce-meaningless", "only from ZeRO 2");
  c.overlap_grad_reduce = STRATA_AUTO, c.overlap_param_gather = 1;
  refused(&c, OPT, "param-gather-meaningless", "DeepSpeed's engine");
  c = dense(), c.dp = 0, c.world = 4, c.overlap_grad_reduce = 1;
  refused(&c, OPT, "grad-reduce-meaningless", "with dp 1");
  c.world = 8; /* dp 2 */
  ASSERT_EQ(strata_rules_check(&c, OPT, NULL), 0);
  c = dense(), c.overlap_param_gather = 1, c.zero_stage = 0;
  c.overlap_grad_reduce = STRATA_AUTO;
  refused(&c, OPT, "param-gather-meaningless", "--zero 1 or more");
  c.zero_stage = 1, c.overlap_grad_reduce = 0;
  refused(&c, OPT, "param-gather-grad-reduce", "--overlap-grad-reduce");
  c = dense(), c.overlap_p2p = 1; /* vpp 1 given */
  refused(&c, OPT, "p2p-overlap-meaningless", "--vpp 2 or more");
  c.vpp = 0; /* chosen */
  ASSERT_EQ(strata_rules_check(&c, OPT, NULL), 0);
  c.pp = 1;
  refused(&c, OPT, "p2p-overlap-meaningless", "--pp 1 has no p2p");
  c = dense(), c.tp = 1, c.dp = 8, c.tp_comm_overlap = 1;
  refused(&c, OPT, "tp-comm-overlap-meaningless", "with --tp 1");
  c.tp = 2, c.megatron = 0;
  refused(&c, OPT, "tp-comm-overlap-meaningless", "free mode");
  c = dense(), c.pp = 1, c.dp = 8, c.scatter_gather = 1;
  refused(&c, OPT, "scatter-gather-meaningless", "--pp 1 has nothing");
  c = dense(), c.overlap_ep_comm = 1;
  refused(&c, OPT, "ep-overlap-meaningless", "has no experts");
  c = moe(), c.pp = 1, c.dp = 8, c.ep = 1, c.overlap_ep_comm = 1;
  refused(&c, OPT, "ep-overlap-meaningless", "rule out");
  c.ep = 0; /* chosen: the search keeps it where it runs */
  ASSERT_EQ(strata_rules_check(&c, OPT, NULL), 0);
}

/* The MoE layer's choices: given to a dense model, or where the others
 * make them mean nothing, refused with the reason. */
TEST(moe_choices) {
  const unsigned OPT = STRATA_RULES_OPTIONS, PLAN = STRATA_RULES_PLAN;
  strata_rules_config_t c = dense();
  c.moe_dispatcher = STRATA_MOE_ALLTOALL;
  refused(&c, OPT, "moe-dense",
          "--moe-token-dispatcher alltoall: model 'm' has no");
  c = dense(), c.moe_grouped_gemm = 0;
  refused(&c, OPT, "moe-dense", "--no-moe-grouped-gemm: model 'm' has no");
  c = dense(), c.moe_shared_overlap = 0;
  refused(&c, OPT, "moe-dense", "--no-moe-shared-expert-overlap: model 'm'");
  c = moe(), c.sequence_parallel = 1;
  c.moe_dispatcher = STRATA_MOE_ALLGATHER, c.moe_router_dtype = 2;
  c.moe_grouped_gemm = 0, c.moe_shared_overlap = 0;
  ASSERT_EQ(strata_rules_check(&c, ALL | PLAN, NULL), 0);
  c.moe_flex_backend = STRATA_MOE_HYBRIDEP;
  refused(&c, OPT | PLAN, "moe-flex-backend", "give --moe-token-dispatcher");
  c.moe_dispatcher = STRATA_MOE_FLEX;
  ASSERT_EQ(strata_rules_check(&c, ALL | PLAN, NULL), 0);
  c.moe_flex_backend = 0, c.capacity = 1.25; /* deepep, its default */
  refused(&c, OPT | PLAN, "moe-flex-capacity", "capacity factor 1.25");
  c.moe_flex_backend = STRATA_MOE_HYBRIDEP;
  ASSERT_EQ(strata_rules_check(&c, ALL | PLAN, NULL), 0);
  c.capacity = 0, c.moe_drop_policy = STRATA_MOE_DROP_POSITION;
  refused(&c, OPT | PLAN, "moe-token-drop-policy", "give --capacity-factor");
  c.capacity = 1;
  ASSERT_EQ(strata_rules_check(&c, ALL | PLAN, NULL), 0);
  c.moe_shared_overlap = 1;
  refused(&c, OPT | PLAN, "moe-shared-expert-overlap", "no shared experts");
  c.shared_ffn = 1024, c.moe_dispatcher = STRATA_MOE_ALLGATHER;
  c.moe_flex_backend = 0;
  refused(&c, OPT | PLAN, "moe-shared-expert-overlap", "alltoall or flex");
  c.moe_dispatcher = 0; /* alltoall, the default */
  ASSERT_EQ(strata_rules_check(&c, ALL | PLAN, NULL), 0);
  c.target = STRATA_RULES_DEEPSPEED, c.ep = 0;
  refused(&c, OPT, "ds-megatron-moe",
          "sets up no --moe-router-dtype fp64 (Megatron-LM's)");
}

/* Per-layer CUDA graphs: a scope needs an implementation and captures
 * only what the model has; recompute only outside the graph. */
TEST(cuda_graphs) {
  const unsigned OPT = STRATA_RULES_OPTIONS, PLAN = STRATA_RULES_PLAN;
  strata_rules_config_t c = dense();
  c.cuda_graph_scope = STRATA_CUDA_GRAPH_ATTN;
  refused(&c, OPT | PLAN, "cuda-graph-scope", "give --cuda-graph-impl");
  c.cuda_graph_impl = STRATA_CUDA_GRAPH_NONE;
  refused(&c, OPT | PLAN, "cuda-graph-scope", "give --cuda-graph-impl");
  c.cuda_graph_impl = STRATA_CUDA_GRAPH_LOCAL;
  ASSERT_EQ(strata_rules_check(&c, ALL | PLAN, NULL), 0);
  c.cuda_graph_scope = STRATA_CUDA_GRAPH_MOE_ROUTER;
  refused(&c, OPT | PLAN, "cuda-graph-scope", "and model 'm' has none");
  c = moe(), c.sequence_parallel = 1, c.dense_layers = 0;
  c.cuda_graph_impl = STRATA_CUDA_GRAPH_TE;
  c.cuda_graph_scope = STRATA_CUDA_GRAPH_MLP;
  refused(&c, OPT | PLAN, "cuda-graph-scope", "every layer of model 'm'");
  c.dense_layers = 1;
  ASSERT_EQ(strata_rules_check(&c, ALL | PLAN, NULL), 0);
  c.cuda_graph_scope = STRATA_CUDA_GRAPH_MOE;
  refused(&c, OPT | PLAN, "cuda-graph-scope", "give --capacity-factor");
  c.capacity = 1;
  ASSERT_EQ(strata_rules_check(&c, ALL | PLAN, NULL), 0);
  c.cuda_graph_scope |= STRATA_CUDA_GRAPH_MOE_ROUTER;
  refused(&c, OPT | PLAN, "cuda-graph-scope", "both moe and moe_router");
  c.cuda_graph_scope = STRATA_CUDA_GRAPH_MOE_PREPROCESS;
  refused(&c, OPT | PLAN, "cuda-graph-scope", "only with moe_router");
  c.cuda_graph_impl = STRATA_CUDA_GRAPH_LOCAL; /* it adds moe_router */
  refused(&c, OPT | PLAN, "cuda-graph-scope", "copies to the host");
  c.moe_dispatcher = STRATA_MOE_FLEX, c.moe_flex_backend = 2;
  ASSERT_EQ(strata_rules_check(&c, ALL | PLAN, NULL), 0);
  c.recompute = STRATA_RECOMPUTE_FULL;
  refused(&c, ALL | PLAN, "cuda-graph-recompute", "full-iteration graph");
  /* the whole step graphed: full recompute inside it, no scope */
  c.cuda_graph_impl = STRATA_CUDA_GRAPH_FULL;
  refused(&c, OPT | PLAN, "cuda-graph-scope",
          "full_iteration graph takes none");
  c.cuda_graph_scope = 0;
  ASSERT_EQ(strata_rules_check(&c, ALL | PLAN, NULL), 0);
  c = dense(), c.cuda_graph_impl = STRATA_CUDA_GRAPH_LOCAL, c.dropout = 1;
  c.recompute = STRATA_RECOMPUTE_SELECTIVE;
  refused(&c, ALL | PLAN, "cuda-graph-recompute", "which has dropout");
  c.cuda_graph_scope = STRATA_CUDA_GRAPH_MLP; /* attention not graphed */
  ASSERT_EQ(strata_rules_check(&c, ALL | PLAN, NULL), 0);
  c.target = STRATA_RULES_DEEPSPEED, c.zero_stage = 1;
  refused(&c, OPT, "ds-megatron-moe",
          "no --cuda-graph-impl local (Megatron-LM's)");
  c.saved = 1;
  refused(&c, PLAN, "ds-megatron-moe",
          "the plan uses --cuda-graph-impl local (Megatron-LM's), which the "
          "DeepSpeed config does not set up; export it for Megatron-LM");
  c.target = STRATA_RULES_DTENSOR;
  refused(&c, PLAN, "torch-cuda-graphs", "--cuda-graph-impl local");
  c.target = STRATA_RULES_TORCHTITAN;
  refused(&c, PLAN, "torch-cuda-graphs", "export it for Megatron-LM");
}

/* A saved plan's moe- switches: grouped GEMMs on and the shared experts'
 * overlap off are its defaults, not given; so is anything of a model
 * without experts. */
TEST(moe_switches_of_plan) {
  strata_plan_t p;
  strata_rules_config_t c;
  memset(&p, 0, sizeof p);
  p.devices = 16, p.tp = 2, p.pp = 2, p.dp = 4, p.vpp = 1;
  p.micro_batch = 1, p.global_batch = 64, p.megatron = 1;
  p.layers = 24, p.heads = 16, p.seq_len = 2048, p.moe_grouped_gemm = 1;
  p.zero_stage = 1;
  strata_rules_config_of_plan(&c, &p, STRATA_RULES_DEEPSPEED);
  ASSERT_EQ(c.moe_grouped_gemm, STRATA_AUTO);
  ASSERT_EQ(c.moe_shared_overlap, STRATA_AUTO);
  p.moe_grouped_gemm = 0; /* of a dense model: nothing */
  strata_rules_config_of_plan(&c, &p, STRATA_RULES_DEEPSPEED);
  ASSERT_EQ(strata_rules_check(&c, STRATA_RULES_PLAN, NULL), 0);
  p.experts = 8, p.moe_ffn = 512, p.moe_layers = 24;
  strata_rules_config_of_plan(&c, &p, STRATA_RULES_DEEPSPEED);
  ASSERT_EQ(c.moe_grouped_gemm, 0);
  refused(&c, STRATA_RULES_PLAN, "ds-megatron-moe", "--no-moe-grouped-gemm");
  p.moe_grouped_gemm = 1, p.moe_dispatcher = STRATA_MOE_FLEX;
  strata_rules_config_of_plan(&c, &p, STRATA_RULES_DEEPSPEED);
  refused(&c, STRATA_RULES_PLAN, "ds-megatron-moe",
          "--moe-token-dispatcher flex (Megatron-LM's)");
  strata_rules_config_of_plan(&c, &p, STRATA_RULES_MEGATRON);
  ASSERT_EQ(strata_rules_check(&c, STRATA_RULES_PLAN, NULL), 0);
}

/* DeepSpeed's rows say the remedy of where they are asked. */
TEST(deepspeed_remedy) {
  strata_rules_config_t c = dense();
  c.target = STRATA_RULES_DEEPSPEED, c.cp = 2, c.dp = 2;
  refused(&c, STRATA_RULES_OPTIONS, "ds-cp",
          "--framework deepspeed: the DeepSpeed config sets up no context "
          "parallelism (--cp); plan for Megatron-LM");
  c.saved = 1;
  refused(&c, STRATA_RULES_PLAN, "ds-cp",
          "the plan uses context parallelism, which this config does not "
          "set up (Megatron-DeepSpeed's model code would); export it for "
          "Megatron-LM instead");
  c.cp = 1, c.vpp = 2;
  refused(&c, STRATA_RULES_PLAN, "ds-vpp",
          "the plan interleaves 2 virtual stages per rank, a schedule "
          "DeepSpeed's pipeline engine does not run; re-plan with --vpp 1");
  c.vpp = 1, c.cp = 2;
  c.cp = 1, c.megatron = 0; /* free mode: the search's limit, no export's */
  refused(&c, STRATA_RULES_OPTIONS, "ds-free", "free-mode layouts");
  ASSERT_EQ(strata_rules_check(&c, STRATA_RULES_PLAN, NULL), 0);
}

TEST(dtensor_and_torchtitan) {
  const unsigned PLAN = STRATA_RULES_PLAN;
  strata_rules_config_t c = dense();
  c.target = STRATA_RULES_DTENSOR, c.heads = 15; /* Megatron-LM's rule only */
  ASSERT_EQ(strata_rules_check(&c, PLAN, NULL), 0);
  c.experts = 8, c.moe_ffn = 1024;
  refused(&c, PLAN, "dtensor-styles", "experts (token dispatch)");
  c = dense(), c.target = STRATA_RULES_DTENSOR, c.global_batch = 63;
  refused(&c, PLAN, "global-batch", "global batch size (63)");
  c = dense(), c.target = STRATA_RULES_TORCHTITAN;
  ASSERT_EQ(strata_rules_check(&c, PLAN, NULL), 0);
  c.precision = STRATA_PRECISION_FP8;
  refused(&c, PLAN, "titan-fp8", "re-plan with --precision bf16");
  c.family = "qwen3"; /* its TrainSpec has no pipeline split */
  refused(&c, PLAN, "titan-qwen3-pp", "re-plan with --pp 1");
  c.pp = 1, c.dp = 8, c.precision = STRATA_PRECISION_BF16;
  ASSERT_EQ(strata_rules_check(&c, PLAN, NULL), 0);
}

/* Sliding windows: Transformer Engine all-gathers, never a ring; cp 0
 * (searched) may choose one, cp 1 has none. */
TEST(window_ring) {
  strata_rules_config_t c = dense();
  c.windowed = 1, c.cp_comm = STRATA_CP_P2P, c.cp = 0;
  refused(&c, STRATA_RULES_OPTIONS, "cp-window-ring", "--cp-comm allgather");
  c.cp = 1;
  ASSERT_EQ(strata_rules_check(&c, STRATA_RULES_OPTIONS, NULL), 0);
  c.cp = 2, c.dp = 2, c.cp_comm = STRATA_CP_ALLGATHER;
  ASSERT_EQ(strata_rules_check(&c, ALL, NULL), 0);
}

/* A plan's configuration: its degrees and facts, ep 1 for an MoE plan
 * that names none, its etp only with experts. */
TEST(config_of_plan) {
  strata_plan_t p;
  strata_rules_config_t c;
  memset(&p, 0, sizeof p);
  p.devices = 16, p.tp = 2, p.pp = 2, p.dp = 4, p.etp = 2;
  p.micro_batch = 1, p.global_batch = 64, p.megatron = 1;
  p.layers = 24, p.heads = 16, p.seq_len = 2048, p.fp8 = 1;
  strata_rules_config_of_plan(&c, &p, STRATA_RULES_MEGATRON);
  ASSERT_EQ(c.saved, 1);
  ASSERT_EQ(c.world, 16);
  ASSERT_EQ(c.etp, 0); /* dense: no etp to refuse */
  ASSERT_EQ(c.precision, STRATA_PRECISION_FP8);
  ASSERT_EQ(strata_rules_check(&c, STRATA_RULES_PLAN, NULL), 0);
  p.experts = 8, p.moe_ffn = 512;
  strata_rules_config_of_plan(&c, &p, STRATA_RULES_MEGATRON);
  ASSERT_EQ(c.ep, 1);
  ASSERT_EQ(c.etp, 2);
  p.ep = 3;
  strata_rules_config_of_plan(&c, &p, STRATA_RULES_MEGATRON);
  refused(&c, STRATA_RULES_PLAN, "ep-experts", "number of experts (8)");
}

static void load(const char *model, const char *cluster, strata_graph_t **g,
                 strata_cluster_t **c, strata_plan_opts_t *o) {
  strata_plan_opts_init(o);
  o->quiet = 1;
  o->gen.micro_batch = o->micro_batch = 1;
  o->vpp = 1, o->cp = 1;
  ASSERT_OK(strata_model_load(model, &o->gen, g));
  ASSERT_OK(strata_cluster_load(cluster, c));
}

/* strata estimate's refusals from the library: the same words from
 * strata_pipeline_fix and from strata_pipeline_plan, nothing planned. */
TEST(library_refuses_as_estimate) {
  static const struct {
    const char *model, *cluster;
    int tp, pp;
    const char *why;
  } k[] = {
      {"gpt-1.7b", "dgx-a100:2", 16, 1,
       "the number of attention heads (24) must be divisible by the "
       "tensor-parallel size 16"},
      {"llama2-70b", "dgx-a100:2", 16, 1,
       "the number of query groups (8) must be divisible by the "
       "tensor-parallel size 16"},
      {"gpt-1.7b", "dgx-a100:4", 1, 32,
       "pipeline size 32 exceeds the 24 layers"},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    strata_graph_t *g = NULL;
    strata_cluster_t *c = NULL;
    strata_plan_opts_t o;
    strata_plan_t *p = NULL;
    load(k[i].model, k[i].cluster, &g, &c, &o);
    o.tp = k[i].tp, o.pp = k[i].pp;
    strata_plan_opts_t f = o;
    ASSERT_EQ(strata_pipeline_fix(g, c, &f), STRATA_EINVAL);
    ASSERT_STR_EQ(strata_last_error(), k[i].why);
    ASSERT_EQ(f.dp, 0); /* unchanged on refusal */
    ASSERT_EQ(strata_pipeline_plan(g, c, &o, &p), STRATA_EINVAL);
    ASSERT_STR_EQ(strata_last_error(), k[i].why);
    ASSERT(p == NULL);
    strata_error_clear();
    strata_cluster_destroy(c);
    strata_graph_destroy(g);
  }
}

/* An accepted configuration gets estimate's defaults: dp the GPUs left,
 * the layers split evenly. */
TEST(fix_fills_the_defaults) {
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_opts_t o;
  load("gpt-1.7b", "dgx-a100:2", &g, &c, &o);
  o.tp = 2, o.pp = 4;
  o.global_batch = 16;
  ASSERT_OK(strata_pipeline_fix(g, c, &o));
  ASSERT_EQ(o.dp, 2);           /* 16 GPUs / (2 x 4) */
  ASSERT_EQ(o.first_layers, 6); /* 24 layers / 4 */
  ASSERT_EQ(o.last_layers, 6);
  ASSERT_OK(strata_pipeline_fix(g, c, &o)); /* and it still holds */
  o.dp = 3;
  ASSERT_EQ(strata_pipeline_fix(g, c, &o), STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "exceeds the 16 GPUs");
  strata_error_clear();
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

/* Every configuration the search keeps (the plan's and its runners-up)
 * is one its framework's plan rules accept: the search's filters are the
 * rulebook's. */
TEST(search_keeps_what_the_rules_accept) {
  static const struct {
    const char *model, *cluster;
    strata_framework_t fw;
    unsigned target;
  } k[] = {
      {"gpt-1.7b", "dgx-a100:2", STRATA_FRAMEWORK_MEGATRON,
       STRATA_RULES_MEGATRON},
      {"gpt-1.7b", "dgx-a100:2", STRATA_FRAMEWORK_DEEPSPEED,
       STRATA_RULES_DEEPSPEED},
      {"mixtral-8x7b", "dgx-h100:2", STRATA_FRAMEWORK_MEGATRON,
       STRATA_RULES_MEGATRON},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    strata_graph_t *g = NULL;
    strata_cluster_t *c = NULL;
    strata_plan_opts_t o;
    strata_plan_t *p = NULL;
    strata_rules_config_t r;
    strata_rules_verdict_t v;
    strata_plan_opts_init(&o);
    o.quiet = 1, o.framework = k[i].fw, o.global_batch = 64, o.top = 8;
    o.model_spec = k[i].model;
    ASSERT_OK(strata_model_load(k[i].model, &o.gen, &g));
    ASSERT_OK(strata_cluster_load(k[i].cluster, &c));
    ASSERT_OK(strata_pipeline_plan(g, c, &o, &p));
    ASSERT(p->n_top >= 1);
    for (int t = 0; t < p->n_top; t++) {
      const strata_plan_config_t *x = &p->top[t];
      strata_rules_config_of_plan(&r, p, k[i].target);
      r.tp = x->tp, r.pp = x->pp, r.dp = x->dp, r.cp = x->cp;
      r.ep = x->ep, r.etp = p->experts ? x->etp : 0, r.vpp = x->vpp;
      r.micro_batch = x->micro_batch, r.zero_stage = x->zero_stage;
      r.sequence_parallel = x->sequence_parallel;
      r.recompute = x->recompute;
      int broken = strata_rules_check(&r, STRATA_RULES_PLAN, &v);
      if (broken) printf("  %s top[%d]: %s\n", k[i].model, t, v.why);
      ASSERT_EQ(broken, 0);
    }
    printf("  %s, %s: %d configurations kept, each accepted\n", k[i].model,
           strata_framework_name(k[i].fw), p->n_top);
    strata_plan_destroy(p);
    strata_cluster_destroy(c);
    strata_graph_destroy(g);
  }
}

static const test_entry_t tests[] = {
    TEST_ENTRY(fp8_param_gather),
    TEST_ENTRY(param_gather_optimizer_step),
    TEST_ENTRY(meaningless_switches),
    TEST_ENTRY(moe_choices),
    TEST_ENTRY(cuda_graphs),
    TEST_ENTRY(moe_switches_of_plan),
    TEST_ENTRY(accepted_by_both_planned_frameworks),
    TEST_ENTRY(layer_splits_beyond_first_and_last),
    TEST_ENTRY(recompute_modules_rules),
    TEST_ENTRY(recompute_unit_rules),
    TEST_ENTRY(optimizer_offload_rules),
    TEST_ENTRY(fp8_recipe_rules),
    TEST_ENTRY(offloading_rules),
    TEST_ENTRY(fine_grained_offloading_rules),
    TEST_ENTRY(precision_aware_optimizer_rules),
    TEST_ENTRY(sizes),
    TEST_ENTRY(experts),
    TEST_ENTRY(batch_and_interleaving),
    TEST_ENTRY(deepspeed_partition_method),
    TEST_ENTRY(layer_split),
    TEST_ENTRY(deepspeed_options),
    TEST_ENTRY(first_rule_told),
    TEST_ENTRY(plan_rows),
    TEST_ENTRY(deepspeed_remedy),
    TEST_ENTRY(dtensor_and_torchtitan),
    TEST_ENTRY(window_ring),
    TEST_ENTRY(config_of_plan),
    TEST_ENTRY(library_refuses_as_estimate),
    TEST_ENTRY(fix_fills_the_defaults),
    TEST_ENTRY(search_keeps_what_the_rules_accept),
};

TEST_MAIN(tests)
