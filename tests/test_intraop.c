/*
 * test_intraop.c - the stage cost model and ILP against what can be known
 * independently: the method's pure redundancy cases on one linear layer,
 * Korthikanti et al.'s activation formulas, the ZeRO paper's model states,
 * Megatron's bytes per parameter; the ILP's optimum against the fixed
 * layouts it contains (megatron, dp) under the same weights, min-comm
 * against min-mem, memory budgets around the least memory, homogeneous
 * against the full ILP, the LP file solved by GLPK alone; determinism,
 * allocation failure injection and bad options with their messages.
 */
#include <stdlib.h>
#include <string.h>

#include <glpk.h>

#include "intraop/layout.h"
#include "strata/strata.h"
#include "testlib.h"

#define MIB 1048576.0

/* ---- helpers ------------------------------------------------------------ */

static strata_graph_t *load(const char *spec, const strata_gen_opts_t *ov) {
  strata_graph_t *g = NULL;
  ASSERT_OK(strata_model_load(spec, ov, &g));
  return g;
}

/* A preset with the unfused attention of 2021, whose layer Korthikanti et
 * al. count (GPT's default is fused). */
static strata_graph_t *load_unfused(const char *spec) {
  strata_gen_opts_t ov;
  strata_gen_opts_keep(&ov);
  ov.flash_attention = 0;
  return load(spec, &ov);
}

/* The small GPT of the ILP tests: 2 (or `layers`) layers, hidden 256,
 * 4 heads, sequence 128, a vocabulary every mesh here divides. */
static strata_graph_t *small_gpt(int layers) {
  strata_gen_opts_t ov;
  strata_gen_opts_keep(&ov);
  ov.layers = layers, ov.hidden = 256, ov.heads = 4, ov.seq = 128;
  ov.vocab = 1024;
  return load("gpt", &ov);
}

static void opts_1d(strata_stage_opts_t *o, int n, strata_objective_t obj) {
  strata_stage_opts_init(o);
  strata_mesh_default(&o->mesh, n, 1);
  o->objective = obj;
}

/* One layer, no embedding, no head. */
static void one_layer(strata_stage_opts_t *o) {
  o->layer_begin = 0, o->layer_end = 1;
  o->with_prologue = 0, o->with_epilogue = 0;
}

static strata_stage_result_t *solve(const strata_graph_t *g,
                                    const strata_stage_opts_t *o) {
  strata_stage_result_t *r = NULL;
  ASSERT_OK(strata_stage_solve(g, o, &r));
  ASSERT(r != NULL);
  return r;
}

static int solved(const strata_stage_result_t *r) {
  return r->status == STRATA_STAGE_OPTIMAL ||
         r->status == STRATA_STAGE_FEASIBLE;
}

/* The method's objective recomputed from a result's parts. */
static double method_obj(const strata_stage_result_t *r, double alpha) {
  return r->memory_redundancy_bytes + alpha * r->comm_bytes;
}

/* The least memory per device any strategy choice needs (with a budget
 * nothing meets, the result reports it) and the unconstrained optimum's
 * peak; a budget `frac` of the way from the first to the second. */
static double budget_between(const strata_graph_t *g,
                             const strata_stage_opts_t *o, double frac) {
  strata_stage_opts_t t = *o;
  t.memory_budget = 1;
  strata_stage_result_t *r = solve(g, &t);
  ASSERT_EQ(r->status, STRATA_STAGE_INFEASIBLE);
  double least = r->min_memory_bytes;
  strata_stage_result_destroy(r);
  t.memory_budget = 0;
  r = solve(g, &t);
  double peak = r->peak_memory_bytes;
  strata_stage_result_destroy(r);
  ASSERT(least <= peak);
  return ceil(least + frac * (peak - least));
}

/* ---- a. pure cases of the memory model on one linear layer -------------- */

enum { LIN_B = 16, LIN_K = 32, LIN_N = 64 };

/* Y[B,N] = X[B,K] . W[N,K]^T, bf16; X an input, W a parameter. */
static strata_graph_t *one_linear(void) {
  strata_graph_t *g = strata_graph_create("one-linear");
  ASSERT(g != NULL);
  int x = strata_graph_add_tensor(g, "x", 2, (int64_t[]){LIN_B, LIN_K},
                                  STRATA_DTYPE_BF16, STRATA_TENSOR_INPUT);
  int w = strata_graph_add_tensor(g, "w", 2, (int64_t[]){LIN_N, LIN_K},
                                  STRATA_DTYPE_BF16, STRATA_TENSOR_PARAM);
  int y = strata_graph_add_tensor(g, "y", 2, (int64_t[]){LIN_B, LIN_N},
                                  STRATA_DTYPE_BF16, STRATA_TENSOR_ACTIVATION);
  ASSERT(x >= 0 && w >= 0 && y >= 0);
  ASSERT(strata_graph_add_op(g, "fc", STRATA_OP_LINEAR, 2, (int[]){x, w}, 1,
                             (int[]){y}) >= 0);
  g->micro_batch = LIN_B, g->seq_len = 1;
  ASSERT_OK(strata_graph_validate(g));
  return g;
}

/* Redundancy of slot (sum over devices of bytes held - unique bytes). */
static double slot_redundancy(const strata_graph_t *g, const st__opdims_t *d,
                              const strata_mesh_t *m, const st__strat_t *s,
                              int slot) {
  st__place_t p;
  st__placement(d, m, s, slot, &p);
  double bytes = (double)strata_tensor_bytes(&g->tensors[d->tensor[slot]]);
  return strata_mesh_devices(m) * (bytes / st__shards(m, &p)) - bytes;
}

static void check_pure(int n) {
  strata_graph_t *g = one_linear();
  strata_mesh_t m;
  st__opdims_t d;
  st__strat_t *s = NULL;
  int ns = 0, seen = 0;
  strata_mesh_default(&m, n, 1);
  ASSERT_OK(st__opdims(g, &g->ops[0], &d));
  ASSERT_OK(st__strategies_g(g, &d, &m, &s, &ns));
  double bx = 2.0 * LIN_B * LIN_K, bw = 2.0 * LIN_N * LIN_K,
         by = 2.0 * LIN_B * LIN_N;
  for (int i = 0; i < ns; i++) {
    char name[64];
    st__strat_name(&d, &g->ops[0], &m, &s[i], name, sizeof name);
    double rx = slot_redundancy(g, &d, &m, &s[i], 0);
    double rw = slot_redundancy(g, &d, &m, &s[i], 1);
    double ry = slot_redundancy(g, &d, &m, &s[i], 2);
    printf("  N=%d %-4s W %6.0f X %6.0f Y %6.0f\n", n, name, rw, rx, ry);
    if (!strcmp(name, "dp")) { /* W replicated */
      ASSERT_EQ(rw, (n - 1) * bw);
      ASSERT_EQ(rx + ry, 0);
      seen |= 1;
    } else if (!strcmp(name, "row")) { /* split outputs: X replicated */
      ASSERT_EQ(rx, (n - 1) * bx);
      ASSERT_EQ(rw + ry, 0);
      seen |= 2;
    } else if (!strcmp(name, "col")) { /* split inputs: Y partial, whole */
      ASSERT_EQ(ry, (n - 1) * by);
      ASSERT_EQ(rw + rx, 0);
      seen |= 4;
    }
  }
  strata_free(s);
  strata_graph_destroy(g);
  ASSERT_EQ(seen, 7);
}

TEST(pure_linear_redundancy) {
  check_pure(2);
  check_pure(4);
  check_pure(8);
}

/* The pure cases also hold for the stage's redundancy figure, which adds
 * gradients and optimizer states: W's states are replicated by dp only. */
TEST(pure_linear_placements) {
  strata_graph_t *g = one_linear();
  strata_mesh_t m;
  st__opdims_t d;
  st__strat_t *s = NULL;
  int ns = 0;
  strata_mesh_default(&m, 4, 1);
  ASSERT_OK(st__opdims(g, &g->ops[0], &d));
  ASSERT_OK(st__strategies_g(g, &d, &m, &s, &ns));
  for (int i = 0; i < ns; i++) {
    char name[64], px[32], pw[32], py[32];
    st__place_t p;
    st__strat_name(&d, &g->ops[0], &m, &s[i], name, sizeof name);
    st__placement(&d, &m, &s[i], 0, &p);
    st__place_name(&m, &p, px, sizeof px);
    st__placement(&d, &m, &s[i], 1, &p);
    st__place_name(&m, &p, pw, sizeof pw);
    st__placement(&d, &m, &s[i], 2, &p);
    st__place_name(&m, &p, py, sizeof py);
    if (!strcmp(name, "dp")) {
      ASSERT_STR_EQ(px, "[S(0)]");
      ASSERT_STR_EQ(pw, "[R]");
      ASSERT_STR_EQ(py, "[S(0)]");
    } else if (!strcmp(name, "row")) {
      ASSERT_STR_EQ(px, "[R]");
      ASSERT_STR_EQ(pw, "[S(0)]");
      ASSERT_STR_EQ(py, "[S(1)]");
    } else if (!strcmp(name, "col")) {
      ASSERT_STR_EQ(px, "[S(1)]");
      ASSERT_STR_EQ(pw, "[S(1)]");
      ASSERT_STR_EQ(py, "[P]");
    }
  }
  strata_free(s);
  strata_graph_destroy(g);
}

/* ---- b. Korthikanti et al. 2022: saved activations per layer ------------ */

typedef struct {
  int t, sp;
  strata_recompute_t rc;
} act_case_t;

static double act_per_layer(const strata_graph_t *g, act_case_t c) {
  strata_stage_opts_t o;
  opts_1d(&o, c.t, STRATA_OBJ_MEGATRON);
  one_layer(&o);
  o.sequence_parallel = c.sp;
  o.recompute = c.rc;
  strata_stage_result_t *r = solve(g, &o);
  ASSERT(solved(r));
  double a = r->activations_per_layer;
  strata_stage_result_destroy(r);
  /* the full ILP of two layers reports the same one layer */
  o.homogeneous = 0, o.layer_end = 2;
  r = solve(g, &o);
  ASSERT(solved(r));
  ASSERT_EQ(r->activations_per_layer, a);
  strata_stage_result_destroy(r);
  return a;
}

TEST(korthikanti_gpt3_175b) {
  strata_graph_t *g = load_unfused("gpt3-175b");
  double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  double sbh = s * b * h;
  struct {
    act_case_t c;
    double bytes, mib;
  } cases[] = {
      {{1, 0, STRATA_RECOMPUTE_NONE}, sbh * (34 + 5 * a * s / h), 2736},
      {{8, 0, STRATA_RECOMPUTE_NONE},
       sbh * (10 + 24 / t + 5 * a * s / (h * t)),
       552},
      {{8, 1, STRATA_RECOMPUTE_NONE},
       sbh * (34 / t + 5 * a * s / (h * t)),
       342},
      {{8, 1, STRATA_RECOMPUTE_SELECTIVE}, sbh * 34 / t, 102},
      {{8, 0, STRATA_RECOMPUTE_FULL}, 2 * sbh, 48},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    double got = act_per_layer(g, cases[i].c);
    printf("  t=%d sp=%d recompute=%-9s %10.0f bytes (%g MiB)\n", cases[i].c.t,
           cases[i].c.sp, strata_recompute_name(cases[i].c.rc), got, got / MIB);
    ASSERT_EQ(got, cases[i].bytes);
    ASSERT_EQ(cases[i].bytes, cases[i].mib * MIB);
  }
  /* full recompute with sequence parallelism: the kept layer input is the
   * residual stream, which sequence parallelism shards t ways */
  ASSERT_EQ(act_per_layer(g, (act_case_t){8, 1, STRATA_RECOMPUTE_FULL}),
            2 * sbh / t);
  strata_graph_destroy(g);
}

/* Bytes from the formulas, in integers: sbh(10 + 24/t) + 5as^2b/t without
 * sequence parallelism, sbh*34/t + 5as^2b/t with it. */
static double korthikanti(double s, double b, double h, double a, int t,
                          int sp) {
  double core = 5 * a * s * s * b / t;
  if (sp || t == 1) return s * b * h * 34 / t + core;
  return s * b * h * (10 + 24.0 / t) + core;
}

TEST(korthikanti_gpt_1_7b) {
  strata_graph_t *g = load_unfused("gpt-1.7b");
  double s = 2048, h = 2304, a = 24;
  int ts[] = {1, 2, 4};
  for (int i = 0; i < 3; i++)
    for (int sp = 0; sp <= (ts[i] > 1); sp++) {
      double got = act_per_layer(g, (act_case_t){ts[i], sp, 0});
      printf("  gpt-1.7b t=%d sp=%d %.0f bytes\n", ts[i], sp, got);
      ASSERT_EQ(got, korthikanti(s, 1, h, a, ts[i], sp));
    }
  strata_graph_destroy(g);
  /* micro-batch 4: every term scales with b */
  strata_gen_opts_t ov;
  strata_gen_opts_keep(&ov);
  ov.micro_batch = 4, ov.flash_attention = 0;
  g = load("gpt-1.7b", &ov);
  ASSERT_EQ(act_per_layer(g, (act_case_t){4, 0, 0}),
            korthikanti(s, 4, h, a, 4, 0));
  strata_graph_destroy(g);
}

/* Flash attention removes the 5as^2b term; what it saves instead is its
 * log-sum-exp, one f32 per (batch, head, query): 4abs bytes, split with
 * the heads. */
TEST(korthikanti_flash_attention) {
  strata_gen_opts_t ov;
  strata_gen_opts_keep(&ov);
  ov.flash_attention = 1;
  strata_graph_t *g = load("gpt-1.7b", &ov);
  double s = 2048, b = 1, h = 2304, a = 24;
  int ts[] = {1, 2, 4};
  for (int i = 0; i < 3; i++)
    for (int sp = 0; sp <= (ts[i] > 1); sp++) {
      int t = ts[i];
      double got = act_per_layer(g, (act_case_t){t, sp, 0});
      double want = korthikanti(s, b, h, a, t, sp) - 5 * a * s * s * b / t +
                    4 * a * b * s / t;
      printf("  flash t=%d sp=%d %.0f bytes (lse %.0f)\n", t, sp, got,
             4 * a * b * s / t);
      ASSERT_EQ(got, want);
    }
  /* selective recompute has nothing left to drop */
  ASSERT_EQ(act_per_layer(g, (act_case_t){2, 1, STRATA_RECOMPUTE_SELECTIVE}),
            act_per_layer(g, (act_case_t){2, 1, STRATA_RECOMPUTE_NONE}));
  strata_graph_destroy(g);
}

/* Megatron-LM's recompute modules (--recompute-modules): which ops each
 * holds, and what each drops of Korthikanti et al.'s saved activations
 * (gpt-1.7b with flash attention, t = 1): layernorm the two norms'
 * outputs (the QKV and FC1 inputs, 2sbh each), mlp its inside (FC1's
 * output and the GeLU's, 8sbh each) but not its input or output, core_attn
 * the attention's log-sum-exp; each reruns its forward in backward. */
static strata_stage_result_t *modules_solve(const strata_graph_t *g,
                                            unsigned mods) {
  strata_stage_opts_t o;
  opts_1d(&o, 1, STRATA_OBJ_MEGATRON);
  one_layer(&o);
  o.recompute = mods ? STRATA_RECOMPUTE_SELECTIVE : STRATA_RECOMPUTE_NONE;
  o.recompute_modules = mods;
  strata_stage_result_t *r = solve(g, &o);
  ASSERT(solved(r));
  return r;
}

TEST(recompute_modules) {
  strata_gen_opts_t ov;
  strata_gen_opts_keep(&ov);
  ov.flash_attention = 1;
  strata_graph_t *g = load("gpt-1.7b", &ov);
  const strata_block_t *bl = &g->blocks[0];
  int norms = 0, attn = 0, mlp = 0;
  for (int i = bl->first_op; i < bl->first_op + bl->n_ops; i++) {
    unsigned m = strata_op_modules(g, i);
    strata_op_kind_t k = g->ops[i].kind;
    unsigned want = k == STRATA_OP_LAYERNORM         ? STRATA_RCM_LAYERNORM
                    : k == STRATA_OP_FLASH_ATTENTION ? STRATA_RCM_CORE_ATTN
                    : k == STRATA_OP_GELU            ? STRATA_RCM_MLP
                                                     : m;
    if (k == STRATA_OP_ADD || k == STRATA_OP_DROPOUT) want = 0;
    ASSERT_EQ(m, want);
    norms += k == STRATA_OP_LAYERNORM;
    attn += k == STRATA_OP_FLASH_ATTENTION;
    mlp += k == STRATA_OP_GELU;
  }
  ASSERT_EQ(norms, 2);
  ASSERT_EQ(attn, 1);
  ASSERT_EQ(mlp, 1);
  double sbh = 2048.0 * 1 * 2304;
  strata_stage_result_t *none = modules_solve(g, 0);
  static const struct {
    unsigned m;
    double dropped;
  } want[] = {{STRATA_RCM_LAYERNORM, 4},
              {STRATA_RCM_MLP, 16},
              {STRATA_RCM_LAYERNORM | STRATA_RCM_MLP, 4 + 16}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    strata_stage_result_t *r = modules_solve(g, want[i].m);
    double d = none->activations_per_layer - r->activations_per_layer;
    printf("  modules %u: %.0f bytes dropped (%.2f sbh), backward %.3f -> "
           "%.3f ms\n",
           want[i].m, d, d / sbh, none->bwd_seconds * 1e3,
           r->bwd_seconds * 1e3);
    ASSERT_EQ(d, want[i].dropped * sbh);
    ASSERT(r->bwd_seconds > none->bwd_seconds);
    ASSERT_EQ(r->fwd_seconds, none->fwd_seconds);
    strata_stage_result_destroy(r);
  }
  /* core attention: the log-sum-exp, 4 bytes per (head, query) */
  strata_stage_result_t *r = modules_solve(g, STRATA_RCM_CORE_ATTN);
  ASSERT_EQ(none->activations_per_layer - r->activations_per_layer,
            4.0 * 24 * 2048);
  strata_stage_result_destroy(r);
  strata_stage_result_destroy(none);
  unsigned m = 0;
  ASSERT_OK(strata_recompute_modules_parse("moe_act, layernorm", &m));
  ASSERT_EQ(m, STRATA_RCM_MOE_ACT | STRATA_RCM_LAYERNORM);
  char buf[64];
  ASSERT_EQ(strata_recompute_modules_format(m, " ", buf, sizeof buf), 0);
  ASSERT_STR_EQ(buf, "layernorm moe_act");
  ASSERT_EQ(strata_recompute_modules_parse("core_attn,attn", &m),
            STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "unknown recompute module 'attn'");
  strata_graph_destroy(g);
}

/* ---- c, d. model states: ZeRO (Rajbhandari et al. 2020), Megatron ------- */

static double param_count(const strata_graph_t *g) {
  strata_graph_stats_t st;
  strata_graph_stats(g, &st);
  return (double)st.parameters;
}

static double model_states(const strata_graph_t *g, int mesh, int outer,
                           strata_recipe_t recipe, int zero) {
  strata_stage_opts_t o;
  opts_1d(&o, mesh, STRATA_OBJ_DP);
  o.outer_dp = outer;
  o.recipe = recipe;
  o.zero_stage = zero;
  strata_stage_result_t *r = solve(g, &o);
  ASSERT(solved(r));
  double m = r->mem.weights + r->mem.gradients + r->mem.optimizer;
  strata_stage_result_destroy(r);
  return m;
}

/* Fig. 1 of the ZeRO paper: 7.5B parameters, K = 12, 64-way data
 * parallelism: 120, 31.4, 16.6 and 1.9 GB per device. */
TEST(zero_paper_7_5b) {
  strata_gen_opts_t ov;
  strata_gen_opts_keep(&ov);
  ov.micro_batch = 8; /* the batch splits 8 ways on the mesh */
  strata_graph_t *g = load("gpt-7.5b", &ov);
  double P = param_count(g), N = 64;
  double want[4] = {16 * P, 4 * P + 12 * P / N, 2 * P + 14 * P / N, 16 * P / N};
  double paper_gb[4] = {120, 31.4, 16.6, 1.9};
  for (int z = 0; z <= 3; z++) {
    double got = model_states(g, 8, 8, STRATA_RECIPE_ZERO, z);
    printf("  ZeRO-%d: %.2f GB per device (formula %.2f GB, paper %.1f GB "
           "at 7.5e9)\n",
           z, got / 1e9, want[z] / 1e9, paper_gb[z]);
    ASSERT_NEAR(got, want[z], 1e-9, 0);
  }
  /* the same 64 ways all inside the stage's mesh, or all outside it */
  ASSERT_NEAR(model_states(g, 1, 64, STRATA_RECIPE_ZERO, 2), want[2], 1e-9, 0);
  strata_graph_destroy(g);
}

TEST(megatron_recipe_bytes_per_param) {
  strata_graph_t *g = small_gpt(2);
  double P = param_count(g);
  /* 2 (bf16 weights) + 4 (fp32 gradients) + 12 (Adam, fp32 master) */
  ASSERT_NEAR(model_states(g, 1, 1, STRATA_RECIPE_MEGATRON, 0), 18 * P, 1e-12,
              0);
  ASSERT_NEAR(model_states(g, 4, 1, STRATA_RECIPE_MEGATRON, 0), 18 * P, 1e-12,
              0);
  /* the distributed optimizer: 6 + 12/d */
  int ds[] = {2, 4, 8};
  for (int i = 0; i < 3; i++) {
    double got = model_states(g, ds[i], 1, STRATA_RECIPE_MEGATRON, 1);
    printf("  d=%d: %.4f bytes/param\n", ds[i], got / P);
    ASSERT_NEAR(got, (6 + 12.0 / ds[i]) * P, 1e-12, 0);
  }
  ASSERT_NEAR(model_states(g, 2, 4, STRATA_RECIPE_MEGATRON, 1),
              (6 + 12.0 / 8) * P, 1e-12, 0);
  ASSERT_NEAR(model_states(g, 1, 1, STRATA_RECIPE_ZERO, 0), 16 * P, 1e-12, 0);
  strata_graph_destroy(g);
}

/* ---- e. the ILP against the layouts it contains -------------------------- */

static void check_ilp_bounds(int n) {
  strata_graph_t *g = small_gpt(2);
  strata_stage_opts_t o;
  strata_stage_result_t *r[4];
  for (int k = 0; k < 4; k++) {
    opts_1d(&o, n, (strata_objective_t)k);
    r[k] = solve(g, &o);
    ASSERT_EQ(r[k]->status, STRATA_STAGE_OPTIMAL);
  }
  double alpha = o.alpha;
  double mm = method_obj(r[STRATA_OBJ_MIN_MEM], alpha);
  double mg = method_obj(r[STRATA_OBJ_MEGATRON], alpha);
  double dp = method_obj(r[STRATA_OBJ_DP], alpha);
  printf("  N=%d objective: min-mem %.0f, megatron %.0f, dp %.0f; comm: "
         "min-comm %.0f, min-mem %.0f, megatron %.0f\n",
         n, mm, mg, dp, r[1]->comm_bytes, r[0]->comm_bytes, r[2]->comm_bytes);
  /* the reported objective is the method's, for the fixed layouts too */
  ASSERT_NEAR(r[STRATA_OBJ_MIN_MEM]->objective, mm, 1e-9, 1);
  ASSERT_NEAR(r[STRATA_OBJ_MEGATRON]->objective, mg, 1e-9, 1);
  ASSERT_NEAR(r[STRATA_OBJ_DP]->objective, dp, 1e-9, 1);
  ASSERT(mm <= mg * (1 + 1e-9));
  ASSERT(mm <= dp * (1 + 1e-9));
  ASSERT(mm < dp); /* dp replicates every weight: strictly worse */
  ASSERT(r[1]->comm_bytes <= r[0]->comm_bytes * (1 + 1e-9));
  ASSERT(r[1]->comm_bytes <= r[2]->comm_bytes * (1 + 1e-9));
  ASSERT(r[0]->memory_redundancy_bytes <=
         r[1]->memory_redundancy_bytes +
             alpha * (r[1]->comm_bytes - r[0]->comm_bytes) + 1);
  for (int k = 0; k < 4; k++) {
    ASSERT(r[k]->peak_memory_bytes >= r[k]->zero_redundancy_bytes);
    strata_stage_result_destroy(r[k]);
  }
  strata_graph_destroy(g);
}

TEST(ilp_beats_fixed_layouts) {
  check_ilp_bounds(2);
  check_ilp_bounds(4);
}

static void check_budget(int n) {
  strata_graph_t *g = small_gpt(2);
  strata_stage_opts_t o;
  opts_1d(&o, n, STRATA_OBJ_MIN_MEM);
  strata_stage_result_t *free_r = solve(g, &o);
  double peak = free_r->peak_memory_bytes;
  o.memory_budget = floor(peak * 0.98);
  strata_stage_result_t *r = solve(g, &o);
  double least = r->min_memory_bytes;
  printf("  N=%d unconstrained peak %.0f, budget %.0f: %s, least %.0f\n", n,
         peak, o.memory_budget, strata_stage_status_name(r->status), least);
  ASSERT(least > 0 && least <= peak);
  if (solved(r)) {
    ASSERT(r->peak_memory_bytes <= o.memory_budget);
    ASSERT(r->objective >= free_r->objective * (1 - 1e-9));
    ASSERT(least <= o.memory_budget);
  } else {
    ASSERT_EQ(r->status, STRATA_STAGE_INFEASIBLE);
    ASSERT(least > o.memory_budget);
  }
  strata_stage_result_destroy(r);
  /* just below the least memory: infeasible, with what would help */
  o.memory_budget = floor(least * (1 - 1e-4));
  r = solve(g, &o);
  ASSERT_EQ(r->status, STRATA_STAGE_INFEASIBLE);
  ASSERT_NEAR(r->min_memory_bytes, least, 1e-9, 0);
  ASSERT_CONTAINS(r->hint, "--zero");
  ASSERT_CONTAINS(r->hint, "recompute");
  ASSERT_EQ(r->n_ops, 0);
  strata_stage_result_destroy(r);
  /* exactly the least memory (rounded up): feasible, and tight */
  o.memory_budget = ceil(least);
  r = solve(g, &o);
  ASSERT(solved(r));
  ASSERT(r->peak_memory_bytes <= o.memory_budget);
  ASSERT_NEAR(r->peak_memory_bytes, least, 1e-9, 0);
  strata_stage_result_destroy(r);
  strata_stage_result_destroy(free_r);
  strata_graph_destroy(g);
}

TEST(ilp_memory_budget) {
  check_budget(2);
  check_budget(4);
}

/* ZeRO-3 and full recompute lower the least memory a stage needs. */
TEST(ilp_least_memory_options) {
  strata_graph_t *g = small_gpt(2);
  strata_stage_opts_t o;
  opts_1d(&o, 2, STRATA_OBJ_MIN_MEM);
  o.memory_budget = 1; /* nothing fits: the result reports the least */
  strata_stage_result_t *base = solve(g, &o);
  ASSERT_EQ(base->status, STRATA_STAGE_INFEASIBLE);
  o.zero_stage = 3;
  strata_stage_result_t *z3 = solve(g, &o);
  o.zero_stage = 0;
  o.recompute = STRATA_RECOMPUTE_FULL;
  strata_stage_result_t *full = solve(g, &o);
  printf("  least: base %.0f, zero-3 %.0f, full recompute %.0f\n",
         base->min_memory_bytes, z3->min_memory_bytes, full->min_memory_bytes);
  ASSERT(z3->min_memory_bytes < base->min_memory_bytes);
  ASSERT(full->min_memory_bytes < base->min_memory_bytes);
  ASSERT(strstr(z3->hint, "--zero") == NULL); /* already at stage 3 */
  ASSERT(strstr(full->hint, "--recompute") == NULL);
  strata_stage_result_destroy(base);
  strata_stage_result_destroy(z3);
  strata_stage_result_destroy(full);
  strata_graph_destroy(g);
}

/* ---- f. homogeneous (one solution per block) against the full ILP ------- */

static void check_homogeneous(int layers, int n, double alpha,
                              double budget_frac, int recompute) {
  strata_graph_t *g = small_gpt(layers);
  strata_stage_opts_t o;
  opts_1d(&o, n, STRATA_OBJ_MIN_MEM);
  o.layer_begin = 0, o.layer_end = layers;
  o.with_prologue = 0, o.with_epilogue = 0;
  o.recompute = (strata_recompute_t)recompute;
  o.alpha = alpha;
  if (budget_frac > 0) o.memory_budget = budget_between(g, &o, budget_frac);
  strata_stage_result_t *hom = solve(g, &o);
  o.homogeneous = 0;
  strata_stage_result_t *full = solve(g, &o);
  ASSERT_EQ(hom->homogeneous, 1);
  ASSERT_EQ(full->homogeneous, 0);
  ASSERT(solved(full) || !solved(hom));
  if (solved(hom) && solved(full)) {
    double gap = (hom->objective - full->objective) /
                 (fabs(full->objective) > 0 ? fabs(full->objective) : 1);
    printf("  %d layers, N=%d, alpha %g, budget %.0f: homogeneous %.0f, full "
           "%.0f, gap %.4f%%\n",
           layers, n, alpha, o.memory_budget, hom->objective, full->objective,
           100 * gap);
    ASSERT(full->objective <= hom->objective * (1 + 1e-6) + 1);
    ASSERT(full->peak_memory_bytes <=
           (o.memory_budget > 0 ? o.memory_budget : INFINITY));
  } else {
    printf("  %d layers, N=%d, alpha %g, budget %.0f: homogeneous %s, full "
           "%s\n",
           layers, n, alpha, o.memory_budget,
           strata_stage_status_name(hom->status),
           strata_stage_status_name(full->status));
  }
  if (!budget_frac) { /* without a budget every layer picks the same */
    ASSERT_NEAR(full->objective, hom->objective, 1e-9, 1);
    ASSERT_NEAR(full->peak_memory_bytes, hom->peak_memory_bytes, 1e-9, 1);
  }
  strata_stage_result_destroy(hom);
  strata_stage_result_destroy(full);
  strata_graph_destroy(g);
}

TEST(homogeneous_vs_full) {
  check_homogeneous(2, 2, 1, 0, 0);
  check_homogeneous(4, 4, 1, 0, 0);
  check_homogeneous(2, 4, 1, 0.5, 0);
  check_homogeneous(4, 2, 1, 0.5, 0);
  check_homogeneous(4, 4, 10, 0.3, 0);
  check_homogeneous(4, 4, 10, 0.6, 0);
  check_homogeneous(3, 4, 10, 0.5, 0);
}

/* A block of one op, whose output is the next instance's input: a
 * single residual add (and a single gelu).  Its resharding into the next
 * instance joins a node to itself; the stage must solve in both modes and
 * on 1-D and 2-D meshes, and the homogeneous answer equals the full one
 * (every instance is the same op). */
static strata_graph_t *one_op_block(strata_op_kind_t kind, int repeat) {
  strata_graph_t *g = strata_graph_create("one-op");
  int64_t xs[3] = {4, 16, 64}, ws[2] = {64, 64};
  g->micro_batch = 4, g->seq_len = 16;
  int x = strata_graph_add_tensor(g, "x", 3, xs, STRATA_DTYPE_BF16,
                                  STRATA_TENSOR_INPUT);
  int w = strata_graph_add_tensor(g, "w", 2, ws, STRATA_DTYPE_BF16,
                                  STRATA_TENSOR_PARAM);
  int h = strata_graph_add_tensor(g, "h", 3, xs, STRATA_DTYPE_BF16,
                                  STRATA_TENSOR_ACTIVATION);
  int y = strata_graph_add_tensor(g, "y", 3, xs, STRATA_DTYPE_BF16,
                                  STRATA_TENSOR_ACTIVATION);
  ASSERT(x >= 0 && w >= 0 && h >= 0 && y >= 0);
  ASSERT(strata_graph_add_op(g, "pre", STRATA_OP_LINEAR, 2, (int[]){x, w}, 1,
                             &h) >= 0);
  int n_in = kind == STRATA_OP_ADD ? 2 : 1;
  ASSERT(strata_graph_add_op(g, "op", kind, n_in, (int[]){h, h}, 1, &y) >= 0);
  ASSERT(strata_graph_add_block(g, "b", 1, 1, repeat, h, y) >= 0);
  ASSERT_OK(strata_graph_validate(g));
  return g;
}

static void check_one_op_block(strata_op_kind_t kind, int repeat, int mesh2) {
  strata_graph_t *g = one_op_block(kind, repeat);
  strata_stage_opts_t o;
  opts_1d(&o, 8, STRATA_OBJ_MIN_MEM);
  if (mesh2) strata_mesh_default(&o.mesh, 2, 4);
  strata_stage_result_t *hom = solve(g, &o);
  o.homogeneous = 0;
  strata_stage_result_t *full = solve(g, &o);
  printf("  %s x%d mesh %s: homogeneous %.6g, full %.6g\n",
         strata_op_kind_name(kind), repeat, mesh2 ? "2x4" : "8", hom->objective,
         full->objective);
  ASSERT(solved(hom) && solved(full));
  ASSERT_EQ(hom->homogeneous, 1);
  ASSERT_NEAR(hom->objective, full->objective, 1e-9, 1e-6);
  strata_stage_result_destroy(hom);
  strata_stage_result_destroy(full);
  strata_graph_destroy(g);
}

TEST(single_op_block) {
  for (int r = 1; r <= 3; r += 2) {
    check_one_op_block(STRATA_OP_ADD, r, 0);
    check_one_op_block(STRATA_OP_ADD, r, 1);
    check_one_op_block(STRATA_OP_GELU, r, 0);
  }
}

/* The kinds importers emit (tests/data/kinds-trace.json) have strategies
 * on 1-D and 2-D meshes, and the ILP splits their work. */
TEST(importer_kinds_solve) {
  char path[600];
  strata_graph_t *g = NULL;
  snprintf(path, sizeof path, "%s/tests/data/kinds-trace.json",
           test_source_dir());
  ASSERT_OK(strata_trace_load(path, &g));
  for (int m = 0; m < 3; m++) {
    strata_stage_opts_t o;
    opts_1d(&o, m == 2 ? 4 : 2, STRATA_OBJ_MIN_MEM);
    if (m == 1) strata_mesh_default(&o.mesh, 2, 2);
    strata_stage_result_t *r = solve(g, &o);
    ASSERT(solved(r));
    ASSERT_EQ(r->n_ops, g->n_ops);
    int split = 0;
    for (int i = 0; i < r->n_ops; i++)
      if (strcmp(r->ops[i].strategy, "rep") &&
          strcmp(r->ops[i].strategy, "rep x rep"))
        split++;
    printf("  mesh %d: %d of %d ops split, peak %.0f B\n", m, split, r->n_ops,
           r->peak_memory_bytes);
    ASSERT(split > r->n_ops / 2);
    strata_stage_result_destroy(r);
  }
  strata_graph_destroy(g);
}

/* Patch embedding and cross-attention are priced as what they run: one
 * GEMM over the patches, and fused attention over the other sequence's
 * keys (intraop/cost.c) -- not as streaming kernels. */
static strata_stage_result_t *solve_text(const char *json) {
  strata_graph_t *g = NULL;
  strata_stage_opts_t o;
  ASSERT_OK(strata_trace_parse(json, strlen(json), "kinds", &g));
  opts_1d(&o, 1, STRATA_OBJ_MIN_MEM);
  strata_stage_result_t *r = solve(g, &o);
  ASSERT(solved(r));
  strata_graph_destroy(g);
  return r;
}

/* A layer's FP8 linear: its three GEMMs at the recipe's operand bytes on
 * the FP8 curve, plus Transformer Engine's casts of the forward's input
 * and the backward's output gradient (each read in 16 bits and written
 * row- and column-wise at the operand's bytes, in one kernel; current
 * scaling's amax pass before it); the weight-gradient GEMM casts nothing
 * of its own. */
TEST(fp8_linear_casts_by_recipe) {
  const char *lin =
      "{\"format\": \"strata-trace\", \"version\": 1, \"name\": \"lin\","
      " \"micro_batch\": 2, \"seq_len\": 1024, \"tensors\": ["
      " {\"id\": \"x\", \"shape\": [2, 1024, 4096], \"dtype\": \"bf16\","
      "  \"kind\": \"input\"},"
      " {\"id\": \"w\", \"shape\": [4096, 4096], \"dtype\": \"bf16\","
      "  \"kind\": \"param\"},"
      " {\"id\": \"y\", \"shape\": [2, 1024, 4096], \"dtype\": \"bf16\","
      "  \"kind\": \"activation\"}],"
      " \"ops\": [{\"id\": \"fc\", \"kind\": \"linear\","
      "  \"inputs\": [\"x\", \"w\"], \"outputs\": [\"y\"]}],"
      " \"blocks\": [{\"id\": \"b\", \"ops\": [\"fc\"], \"repeat\": 1,"
      "  \"input\": \"x\", \"output\": \"y\"}]}";
  strata_graph_t *g = NULL;
  ASSERT_OK(strata_trace_parse(lin, strlen(lin), "lin", &g));
  static const int recipes[] = {STRATA_LOWP_DELAYED, STRATA_LOWP_TENSORWISE,
                                STRATA_LOWP_BLOCKWISE};
  double m = 2048, n = 4096, k = 4096, prev = 0;
  for (int i = 0; i < 3; i++) {
    strata_stage_opts_t o;
    opts_1d(&o, 1, STRATA_OBJ_MIN_MEM);
    one_layer(&o);
    o.fp8 = recipes[i];
    const strata_perf_t *pf = &o.perf;
    const strata_lowp_t *r = strata_lowp(recipes[i]);
    strata_stage_result_t *res = solve(g, &o);
    ASSERT(solved(res));
    double b = (2 + 2 * r->operand), a = r->amax_read;
    double cx = strata_perf_stream(pf, b * m * k, 1) +
                (a > 0 ? strata_perf_stream(pf, a * m * k, 1) : 0);
    double cy = strata_perf_stream(pf, b * m * n, 1) +
                (a > 0 ? strata_perf_stream(pf, a * m * n, 1) : 0);
    ASSERT_NEAR(res->fwd_seconds,
                strata_perf_gemm_narrow(pf, 1, m, n, k, r->operand, 0) + cx,
                1e-9, 0);
    ASSERT_NEAR(res->bwd_seconds,
                strata_perf_gemm_narrow(pf, 1, m, k, n, r->operand, 0) +
                    strata_perf_gemm_narrow(pf, 1, n, k, m, r->operand, 0) + cy,
                1e-9, 0);
    /* tensorwise's amax pass makes it the slower of the two per-tensor
     * recipes */
    if (i == 1) ASSERT(res->fwd_seconds > prev);
    prev = res->fwd_seconds;
    strata_stage_result_destroy(res);
  }
  strata_graph_destroy(g);
}

/* Grouped GEMMs as Transformer Engine runs them on Hopper: one cuBLAS
 * GEMM an expert over four compute streams, so the wave term sees four
 * experts' tiles at once and every expert pays its launch. */
TEST(grouped_gemm_per_expert) {
  const char *gl =
      "{\"format\": \"strata-trace\", \"version\": 1, \"name\": \"gl\","
      " \"micro_batch\": 8, \"seq_len\": 384, \"tensors\": ["
      " {\"id\": \"x\", \"shape\": [8, 1, 384, 1024], \"dtype\": \"bf16\","
      "  \"kind\": \"input\"},"
      " {\"id\": \"w\", \"shape\": [8, 2048, 1024], \"dtype\": \"bf16\","
      "  \"kind\": \"param\"},"
      " {\"id\": \"y\", \"shape\": [8, 1, 384, 2048], \"dtype\": \"bf16\","
      "  \"kind\": \"activation\"}],"
      " \"ops\": [{\"id\": \"g\", \"kind\": \"grouped_linear\","
      "  \"inputs\": [\"x\", \"w\"], \"outputs\": [\"y\"]}]}";
  strata_stage_result_t *r = solve_text(gl);
  strata_stage_opts_t o;
  strata_stage_opts_init(&o);
  const strata_perf_t *pf = &o.perf;
  double E = 8, m = 384, n = 2048, k = 1024, L = pf->launch_seconds;
  /* two rounds of four experts; four launches beyond the rounds' two */
  double fwd = 2 * strata_perf_gemm(pf, 4, m, n, k, 2) + 6 * L;
  double bwd = 2 * strata_perf_gemm(pf, 4, m, k, n, 2) +
               2 * strata_perf_gemm(pf, 4, n, k, m, 2) + 12 * L;
  ASSERT_NEAR(r->fwd_seconds, fwd, 1e-9, 0);
  ASSERT_NEAR(r->bwd_seconds, bwd, 1e-9, 0);
  /* slower than one batched GEMM of all eight */
  ASSERT(r->fwd_seconds > strata_perf_gemm(pf, E, m, n, k, 2));
  strata_stage_result_destroy(r);
}

TEST(gemm_kinds_priced_as_gemms) {
  strata_stage_opts_t o;
  strata_stage_opts_init(&o);
  const strata_perf_t *pf = &o.perf;
  /* ViT-L/16: 32 images of 3 x 224 x 224, 1024 wide: m = 32 x 196 */
  const char *pe =
      "{\"format\": \"strata-trace\", \"version\": 1, \"name\": \"pe\","
      " \"micro_batch\": 32, \"seq_len\": 196, \"tensors\": ["
      " {\"id\": \"img\", \"shape\": [32, 3, 224, 224], \"dtype\": \"bf16\","
      "  \"kind\": \"input\"},"
      " {\"id\": \"w\", \"shape\": [1024, 3, 16, 16], \"dtype\": \"bf16\","
      "  \"kind\": \"param\"},"
      " {\"id\": \"y\", \"shape\": [32, 196, 1024], \"dtype\": \"bf16\","
      "  \"kind\": \"activation\"}],"
      " \"ops\": [{\"id\": \"pe\", \"kind\": \"patch_embed\","
      "  \"inputs\": [\"img\", \"w\"], \"outputs\": [\"y\"]}]}";
  strata_stage_result_t *r = solve_text(pe);
  double m = 32 * 196, n = 1024, k = 3 * 16 * 16;
  ASSERT_NEAR(r->fwd_seconds, strata_perf_gemm(pf, 1, m, n, k, 2), 1e-9, 0);
  ASSERT_NEAR(r->bwd_seconds,
              strata_perf_gemm(pf, 1, m, k, n, 2) +
                  strata_perf_gemm(pf, 1, n, k, m, 2),
              1e-9, 0);
  /* a GEMM of 6272 x 1024 x 768 runs well above a streaming kernel's
   * rate: its 9.9 GFLOP take under 60 us on an A100 */
  ASSERT(r->fwd_seconds < 60e-6);
  printf("  patch_embed fwd %.1f us, bwd %.1f us\n", r->fwd_seconds * 1e6,
         r->bwd_seconds * 1e6);
  strata_stage_result_destroy(r);
  /* T5-style cross-attention: 8 x 16 heads, 512 queries over 2048 keys */
  const char *xa =
      "{\"format\": \"strata-trace\", \"version\": 1, \"name\": \"xa\","
      " \"micro_batch\": 8, \"seq_len\": 512, \"tensors\": ["
      " {\"id\": \"q\", \"shape\": [8, 16, 512, 64], \"dtype\": \"bf16\","
      "  \"kind\": \"input\"},"
      " {\"id\": \"k\", \"shape\": [8, 16, 2048, 64], \"dtype\": \"bf16\","
      "  \"kind\": \"input\"},"
      " {\"id\": \"v\", \"shape\": [8, 16, 2048, 64], \"dtype\": \"bf16\","
      "  \"kind\": \"input\"},"
      " {\"id\": \"o\", \"shape\": [8, 16, 512, 64], \"dtype\": \"bf16\","
      "  \"kind\": \"activation\"}],"
      " \"ops\": [{\"id\": \"xa\", \"kind\": \"cross_attention\","
      "  \"inputs\": [\"q\", \"k\", \"v\"], \"outputs\": [\"o\"]}]}";
  r = solve_text(xa);
  double f = 4.0 * 8 * 16 * 512 * 2048 * 64; /* QK^T and PV */
  ASSERT_NEAR(r->fwd_seconds, strata_perf_attention(pf, f, 2048, 0, 0), 1e-9,
              0);
  ASSERT_NEAR(r->bwd_seconds, strata_perf_attention(pf, 2.5 * f, 2048, 1, 0),
              1e-9, 0);
  strata_stage_result_destroy(r);
}

/* The loss as Megatron-LM's VocabParallelCrossEntropy runs it: forward
 * casts the bf16 logits to fp32 and makes five passes over them (38 bytes
 * a logit in six kernels), backward two (14 bytes); the softmax it keeps
 * for backward is fp32, twice the logits' bytes. */
TEST(cross_entropy_as_megatron_runs) {
  strata_stage_opts_t o;
  strata_stage_opts_init(&o);
  const strata_perf_t *pf = &o.perf;
  const char *ce =
      "{\"format\": \"strata-trace\", \"version\": 1, \"name\": \"ce\","
      " \"micro_batch\": 2, \"seq_len\": 1024, \"tensors\": ["
      " {\"id\": \"x\", \"shape\": [2, 1024, 256], \"dtype\": \"bf16\","
      "  \"kind\": \"input\"},"
      " {\"id\": \"w\", \"shape\": [32000, 256], \"dtype\": \"bf16\","
      "  \"kind\": \"param\"},"
      " {\"id\": \"labels\", \"shape\": [2, 1024], \"dtype\": \"i64\","
      "  \"kind\": \"input\"},"
      " {\"id\": \"logits\", \"shape\": [2, 1024, 32000], \"dtype\": "
      "\"bf16\", \"kind\": \"activation\"},"
      " {\"id\": \"loss\", \"shape\": [], \"dtype\": \"f32\","
      "  \"kind\": \"activation\"}],"
      " \"ops\": [{\"id\": \"head\", \"kind\": \"linear\","
      "  \"inputs\": [\"x\", \"w\"], \"outputs\": [\"logits\"]},"
      " {\"id\": \"ce\", \"kind\": \"cross_entropy\","
      "  \"inputs\": [\"logits\", \"labels\"], \"outputs\": [\"loss\"]}]}";
  strata_stage_result_t *r = solve_text(ce);
  double n = 2.0 * 1024 * 32000, m = 2048, v = 32000, k = 256;
  ASSERT_NEAR(r->fwd_seconds,
              strata_perf_gemm(pf, 1, m, v, k, 2) +
                  strata_perf_stream(pf, 38 * n, 6),
              1e-9, 0);
  ASSERT_NEAR(r->bwd_seconds,
              strata_perf_gemm(pf, 1, m, k, v, 2) +
                  strata_perf_gemm(pf, 1, v, k, m, 2) +
                  strata_perf_stream(pf, 14 * n, 2),
              1e-9, 0);
  /* the head's input is an input (resident): what is saved is the softmax;
   * the bf16 logits, the head's output, are the peak beside it */
  ASSERT_EQ(r->mem.activations, 4 * n);
  ASSERT_EQ(r->mem.transient, 2 * n);
  printf("  cross entropy over %.0f logits: fwd %.1f us of %.1f, saved %.0f "
         "MiB\n",
         n, strata_perf_stream(pf, 38 * n, 6) * 1e6, r->fwd_seconds * 1e6,
         r->mem.activations / MIB);
  strata_stage_result_destroy(r);
  /* the graph's count agrees: 4 bytes a logit */
  strata_graph_t *g = NULL;
  ASSERT_OK(strata_trace_parse(ce, strlen(ce), "ce", &g));
  ASSERT_EQ(strata_op_saved_bytes(g, &g->ops[1]), (int64_t)(4 * n));
  strata_graph_stats_t st;
  strata_graph_stats(g, &st);
  ASSERT_EQ(st.activation_bytes, (int64_t)(4 * n));
  strata_graph_destroy(g);
}

/* ---- g. the LP file, solved by GLPK alone ------------------------------- */

static double lp_constant(const char *path) {
  char *text = NULL;
  size_t len;
  double c = 0.0;
  ASSERT_OK(strata_file_read(path, 0, &text, &len));
  const char *at = strstr(text, "constant term = ");
  if (at) c = strtod(at + strlen("constant term = "), NULL);
  strata_free(text);
  return c;
}

static double solve_lp_file(const char *path) {
  glp_smcp sp;
  glp_iocp ip;
  double obj = NAN;
  glp_term_out(GLP_OFF);
  glp_prob *P = glp_create_prob();
  int rc = glp_read_lp(P, NULL, path);
  if (rc == 0) {
    glp_init_smcp(&sp);
    sp.msg_lev = GLP_MSG_OFF;
    rc = glp_simplex(P, &sp);
  }
  if (rc == 0) {
    glp_init_iocp(&ip);
    ip.msg_lev = GLP_MSG_OFF;
    ip.mip_gap = 0;
    rc = glp_intopt(P, &ip);
  }
  if (rc == 0 && glp_mip_status(P) == GLP_OPT) obj = glp_mip_obj_val(P);
  glp_delete_prob(P);
  glp_free_env();
  return obj;
}

static void check_lp(int n, int reduce, double alpha, double budget_frac) {
  strata_graph_t *g = small_gpt(2);
  strata_stage_opts_t o;
  char path[600];
  opts_1d(&o, n, STRATA_OBJ_MIN_MEM);
  o.reduce = reduce;
  o.alpha = alpha;
  if (budget_frac > 0) o.memory_budget = budget_between(g, &o, budget_frac);
  strata_stage_result_t *r = solve(g, &o);
  ASSERT(solved(r));
  snprintf(path, sizeof path, "%s/stage_%d_%d_%g_%g.lp", test_scratch_dir(), n,
           reduce, alpha, budget_frac);
  ASSERT_OK(strata_stage_export_lp(g, &o, path));
  double c = lp_constant(path), obj = solve_lp_file(path);
  printf("  N=%d reduce=%d budget %g: LP %.6f + constant %.6f = %.6f MiB, "
         "stage %.6f MiB\n",
         n, reduce, budget_frac, obj, c, obj + c, r->objective / MIB);
  ASSERT(!isnan(obj));
  ASSERT_NEAR(obj + c, r->objective / MIB, 1e-6, 1e-9);
  strata_stage_result_destroy(r);
  strata_graph_destroy(g);
}

TEST(lp_export_round_trip) {
  check_lp(2, 0, 1, 0);
  check_lp(2, 1, 1, 0);
  check_lp(4, 1, 1, 0);
  check_lp(4, 0, 10, 0.5);
  check_lp(4, 1, 10, 0.5);
}

TEST(lp_export_bad_path) {
  strata_graph_t *g = small_gpt(2);
  strata_stage_opts_t o;
  opts_1d(&o, 2, STRATA_OBJ_MIN_MEM);
  int rc = strata_stage_export_lp(g, &o, "/nonexistent-dir/x/stage.lp");
  ASSERT(rc < 0);
  ASSERT(strlen(strata_last_error()) > 0);
  strata_graph_destroy(g);
}

/* ---- h. determinism ------------------------------------------------------ */

TEST(deterministic) {
  strata_graph_t *g = small_gpt(2);
  strata_stage_opts_t o;
  opts_1d(&o, 4, STRATA_OBJ_MIN_MEM);
  strata_stage_result_t *a = solve(g, &o), *b = solve(g, &o);
  ASSERT_EQ(a->n_ops, b->n_ops);
  ASSERT(a->n_ops > 0);
  ASSERT(a->objective == b->objective);
  ASSERT(a->peak_memory_bytes == b->peak_memory_bytes);
  for (int i = 0; i < a->n_ops; i++) {
    ASSERT_STR_EQ(a->ops[i].name, b->ops[i].name);
    ASSERT_STR_EQ(a->ops[i].strategy, b->ops[i].strategy);
    ASSERT_STR_EQ(a->ops[i].placement, b->ops[i].placement);
  }
  strata_stage_result_destroy(a);
  strata_stage_result_destroy(b);
  strata_graph_destroy(g);
}

/* A stage's own bookkeeping: the redundancy is N * (per-device bytes
 * without transients) - the unique bytes; the zero-redundancy bound is the
 * unique bytes / N. */
TEST(redundancy_identity) {
  strata_graph_t *g = small_gpt(2);
  strata_stage_opts_t o;
  for (int k = 0; k < 4; k++) {
    opts_1d(&o, 4, (strata_objective_t)k);
    strata_stage_result_t *r = solve(g, &o);
    double per_dev = r->peak_memory_bytes - r->mem.transient;
    ASSERT_NEAR(r->mem.weights + r->mem.gradients + r->mem.optimizer +
                    r->mem.activations + r->mem.transient,
                r->peak_memory_bytes, 1e-12, 0);
    ASSERT_NEAR(r->memory_redundancy_bytes,
                4 * per_dev - 4 * r->zero_redundancy_bytes, 1e-9, 1);
    strata_stage_result_destroy(r);
  }
  /* one device: nothing is redundant */
  opts_1d(&o, 1, STRATA_OBJ_MIN_MEM);
  strata_stage_result_t *r = solve(g, &o);
  ASSERT_NEAR(r->memory_redundancy_bytes, 0, 0, 1);
  ASSERT_EQ(r->comm_bytes, 0);
  strata_stage_result_destroy(r);
  strata_graph_destroy(g);
}

/* ---- i. allocation failure injection ------------------------------------- */

TEST(alloc_failures) {
  strata_gen_opts_t ov;
  strata_gen_opts_keep(&ov);
  ov.layers = 2, ov.hidden = 32, ov.heads = 2, ov.seq = 16, ov.vocab = 64;
  strata_graph_t *g = load("gpt", &ov);
  strata_stage_opts_t o;
  opts_1d(&o, 2, STRATA_OBJ_MIN_MEM);
  o.memory_budget = 1; /* infeasible: the hint path allocates too */
  for (int pass = 0; pass < 3; pass++) {
    if (pass == 1) o.memory_budget = 0, o.homogeneous = 0;
    if (pass == 2) o.objective = STRATA_OBJ_MEGATRON;
    long n;
    for (n = 1; n < 100000; n++) {
      strata_stage_result_t *r = NULL;
      strata_alloc_fail_at(n);
      int rc = strata_stage_solve(g, &o, &r);
      int failed = strata_alloc_failed();
      strata_alloc_fail_at(0);
      if (rc) {
        ASSERT_EQ(rc, STRATA_ENOMEM);
        ASSERT(r == NULL);
        ASSERT(strlen(strata_last_error()) > 0);
      } else {
        ASSERT(r != NULL);
        strata_stage_result_destroy(r);
        if (!failed) break;
      }
    }
    printf("  pass %d: %ld allocation points\n", pass, n - 1);
    ASSERT(n > 5 && n < 100000);
  }
  strata_graph_destroy(g);
}

/* ---- j. bad options ------------------------------------------------------ */

static void expect_error(const strata_graph_t *g, const strata_stage_opts_t *o,
                         int code, const char *text) {
  strata_stage_result_t *r = NULL;
  int rc = strata_stage_solve(g, o, &r);
  ASSERT_EQ(rc, code);
  ASSERT(r == NULL);
  ASSERT_CONTAINS(strata_last_error(), text);
}

TEST(bad_options) {
  strata_graph_t *g = small_gpt(2);
  strata_stage_opts_t o;
  opts_1d(&o, 2, STRATA_OBJ_MIN_MEM);
  o.zero_stage = 5;
  expect_error(g, &o, STRATA_EINVAL, "ZeRO stage 5: must be 0 to 3");
  opts_1d(&o, 2, STRATA_OBJ_MIN_MEM);
  o.layer_begin = 0, o.layer_end = 5;
  expect_error(g, &o, STRATA_EINVAL,
               "layers [0, 5) are outside the model's 2 layers");
  o.layer_begin = 2, o.layer_end = 1;
  expect_error(g, &o, STRATA_EINVAL, "outside the model's 2 layers");
  opts_1d(&o, 2, STRATA_OBJ_MIN_MEM);
  o.alpha = -1;
  expect_error(g, &o, STRATA_EINVAL, "alpha must be >= 0");
  /* 8 devices: the 4 heads cannot be split 8 ways as Megatron does */
  opts_1d(&o, 8, STRATA_OBJ_MEGATRON);
  expect_error(g, &o, STRATA_EINVAL, "the megatron layout cannot place op");
  expect_error(g, &o, STRATA_EINVAL, "does not divide by 8");
  /* ...while the ILP finds other splits */
  opts_1d(&o, 8, STRATA_OBJ_MIN_MEM);
  strata_stage_result_t *r = solve(g, &o);
  ASSERT(solved(r));
  strata_stage_result_destroy(r);
  /* 3 devices: the MLP's dimensions do not divide by 3 at all */
  opts_1d(&o, 3, STRATA_OBJ_MIN_MEM);
  expect_error(g, &o, STRATA_EBADINPUT, "has no valid strategy on a 3-device");
  strata_graph_destroy(g);

  strata_objective_t obj;
  strata_recompute_t rcm;
  strata_recipe_t rec;
  ASSERT_EQ(strata_objective_parse("fastest", &obj), STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "unknown objective 'fastest'");
  ASSERT_EQ(strata_recompute_parse("half", &rcm), STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "unknown recompute mode 'half'");
  ASSERT_EQ(strata_recipe_parse("fp8", &rec), STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "unknown precision recipe 'fp8'");
  for (int k = 0; k < 4; k++) {
    ASSERT_OK(strata_objective_parse(
        strata_objective_name((strata_objective_t)k), &obj));
    ASSERT_EQ(obj, k);
  }
}

/* A cost that is not finite never reaches GLPK: it is Strata's bug (the
 * readers refuse what would cause one), reported as an internal error
 * with the op and strategy.  A link of 0 bytes/s stands in for the bug. */
TEST(non_finite_cost_is_internal) {
  strata_graph_t *g = small_gpt(1);
  strata_stage_opts_t o;
  opts_1d(&o, 2, STRATA_OBJ_MIN_MEM);
  one_layer(&o);
  o.mesh.axis[0].bandwidth = 0;
  expect_error(g, &o, STRATA_EINTERNAL, "internal error: the ");
  expect_error(g, &o, STRATA_EINTERNAL, "under strategy ");
  expect_error(g, &o, STRATA_EINTERNAL, "of op '");
  expect_error(g, &o, STRATA_EINTERNAL, ", not a finite number; please report");
  strata_graph_destroy(g);
}

/* The infeasible hint names only what was tried and lowers the least
 * memory, and an option it says "fits" does fit. */
TEST(hint_suggests_only_what_helps) {
  strata_graph_t *g = load_unfused("gpt-1.7b");
  strata_stage_opts_t o;
  opts_1d(&o, 4, STRATA_OBJ_MIN_MEM);
  o.layer_begin = 0, o.layer_end = 4;
  o.with_prologue = 0, o.with_epilogue = 0;
  o.memory_budget = 1.5e9;
  strata_stage_result_t *r = solve(g, &o);
  ASSERT_EQ(r->status, STRATA_STAGE_INFEASIBLE);
  ASSERT_CONTAINS(r->hint, "full recompute (--recompute full) (needs");
  ASSERT_CONTAINS(r->hint, "fits");
  strata_stage_result_destroy(r);
  o.recompute = STRATA_RECOMPUTE_FULL;
  r = solve(g, &o);
  ASSERT(solved(r));
  ASSERT(r->peak_memory_bytes <= o.memory_budget);
  strata_stage_result_destroy(r);
  /* one layer and a budget nothing reaches: recompute would only add a
   * checkpoint, ZeRO has no replicated states to shard */
  o.recompute = STRATA_RECOMPUTE_NONE;
  o.layer_end = 1;
  o.memory_budget = 1e6;
  r = solve(g, &o);
  ASSERT_EQ(r->status, STRATA_STAGE_INFEASIBLE);
  ASSERT(strstr(r->hint, "--recompute") == NULL);
  ASSERT(strstr(r->hint, "--zero") == NULL);
  ASSERT_CONTAINS(r->hint, "more devices");
  strata_stage_result_destroy(r);
  strata_graph_destroy(g);
}

static const test_entry_t tests[] = {
    TEST_ENTRY(hint_suggests_only_what_helps),
    TEST_ENTRY(pure_linear_redundancy),
    TEST_ENTRY(pure_linear_placements),
    TEST_ENTRY(korthikanti_gpt3_175b),
    TEST_ENTRY(korthikanti_gpt_1_7b),
    TEST_ENTRY(korthikanti_flash_attention),
    TEST_ENTRY(recompute_modules),
    TEST_ENTRY(zero_paper_7_5b),
    TEST_ENTRY(megatron_recipe_bytes_per_param),
    TEST_ENTRY(ilp_beats_fixed_layouts),
    TEST_ENTRY(ilp_memory_budget),
    TEST_ENTRY(ilp_least_memory_options),
    TEST_ENTRY(homogeneous_vs_full),
    TEST_ENTRY(single_op_block),
    TEST_ENTRY(importer_kinds_solve),
    TEST_ENTRY(gemm_kinds_priced_as_gemms),
    TEST_ENTRY(cross_entropy_as_megatron_runs),
    TEST_ENTRY(fp8_linear_casts_by_recipe),
    TEST_ENTRY(grouped_gemm_per_expert),
    TEST_ENTRY(lp_export_round_trip),
    TEST_ENTRY(lp_export_bad_path),
    TEST_ENTRY(deterministic),
    TEST_ENTRY(redundancy_identity),
    TEST_ENTRY(alloc_failures),
    TEST_ENTRY(bad_options),
    TEST_ENTRY(non_finite_cost_is_internal),
};

TEST_MAIN(tests)
