/*
 * plan_fields.h - every scalar of a plan, once.
 *
 * One row per field of strata_plan_t; the struct's three named parts, the
 * plan-file codec (merge/payload_tags.c), `strata show --json`
 * (export/report.c), `strata diff` (export/diff.c) and the plan's own range
 * checks are all expanded from this list (an X-macro, as libuv states its
 * errors once in UV_ERRNO_MAP), so adding a field is one row here.
 *
 * To add a plan field (no format version changes: docs/plan-format.md):
 *   1. Add its row where show --json should write it, with codec MUST (a
 *      reader that does not know it must refuse the file: anything the
 *      cost, the checks or an export depends on) or OPT (a reader may skip
 *      it: a figure shown for information), and as its tag the number
 *      STRATA_PLAN_TAG_NEXT says; raise STRATA_PLAN_TAG_NEXT by one.  A
 *      tag is never reused, even after its row is gone.
 *   2. A switch (STRATA_PLAN_SWITCHES) takes codec MUST and the tag the
 *      same way; a choice (STRATA_PLAN_CHOICES) just the tag.
 *   3. Nothing else: a plan whose field is 0 (the default) leaves it out
 *      of its file, so the files of plans that do not use it stay
 *      readable by a strata that does not know it; one that uses it is
 *      refused there (MUST: "holds field tag N ... upgrade strata") or
 *      read without it (OPT).
 *   A row still in the old form (codec TI or TD, slot 18: a format
 *   version) stops the build with "codec TI/TD is the old form" or
 *   "st__plan_tag_18_used_twice": change `TI, 18` to `MUST, <tag>` (or
 *   OPT) on that one line.  A per-stage, per-rank or per-configuration
 *   field is a new block of STRATA_PLAN_BLOCKS holding one value for
 *   each (as `layouts` does), never a change to an existing block.
 *
 * The columns:
 *
 *   part    CONF (the configuration: what a run sets), ARCH (facts of the
 *           model the exporters need), RUN (figures of the plan and how it
 *           was found); ITEM: a member of a struct declared by hand
 *   type    its C type (double is stored as a double, any other as an int)
 *   member  the member (an expression on the plan for ITEM rows)
 *   key     its name in JSON, diff and messages
 *   what    its name in a corrupt file's message (NULL: not range-checked)
 *   lo, hi  its range in a plan file (hi may name another field, as p->x);
 *           a double with a `what` is a figure in [0, 1e9]
 *   codec   how the plan file (format 18) keeps it, under `tag`:
 *             MUST    a must-understand field: a reader that does not
 *                     know the tag refuses the file
 *             OPT     an optional one: such a reader skips it
 *             NONE    not kept (tag 0): a run statistic, 0 in every file
 *           (the formats before 18 kept each field at a slot of their
 *           own: merge/plan_legacy.h, frozen)
 *   tag     its number in the file: unique among the rows and
 *           STRATA_PLAN_BLOCKS, below STRATA_PLAN_TAG_NEXT
 *   jsec    its object in show --json: ROOT, ARCH ("architecture"), OPTS
 *           ("options"), FIG (the figures after the stages), STEP
 *           ("step_items"), SEARCH ("search"), NONE
 *   jkind   NUM, BOOL (!= 0), POS (> 0), NAME (strata_<key>_name), NAMES
 *           (a list: the names of the bits set, strata_<key>_name(bit)), CPCOMM
 *           ("p2p" or "all_gather"), PREC ("precision": "fp8" or "fp4" and
 *           "gemm_recipe": its STRATA_LOWP_* name), SIGMOID
 *           ("router_scores": "sigmoid"), TIMING (NUM with --timings only)
 *   when    when show --json writes it (an expression on p)
 *   diff    its place among the configuration lines of `strata diff`
 *           (0: not compared there; 16 is the frameworks' verdicts)
 *
 * Rows are in the order show --json writes them.
 *
 * To add a plan field:
 *   1. one row below (a switch or a choice: one row of
 *      STRATA_PLAN_SWITCHES / STRATA_PLAN_CHOICES further down, which
 *      also gives the option; cli/planargs.c's table says how), its
 *      columns as listed above: the struct member, the file, show --json,
 *      diff and the range check all follow from it;
 *   2. its line in show's text: a row of export/plan_text.h (or its key in
 *      that file's ST__PLAN_TEXT_ELSEWHERE); test_merge fails until one;
 *   3. fill it where the plan is made (pipeline/) and read it where it is
 *      exported (merge/export_*.c);
 *   4. docs/plan-format.md's field list; a unit test of the round trip or
 *      a cli golden case that shows it.
 */
#ifndef STRATA_PLAN_FIELDS_H
#define STRATA_PLAN_FIELDS_H

/* clang-format off */
#define STRATA_PLAN_FIELDS(F)                                                 \
  /* part  type     member                key                    what                        lo  hi          codec tag  jsec  jkind   when                diff */ \
  F(CONF, int,     devices,              devices,               "devices",                  1,  BIG,        MUST, 16, ROOT, NUM,    1,                  3)  \
  F(CONF, int,     tp,                   tp,                    "tensor-parallel size",     1,  BIG,        MUST, 17, ROOT, NUM,    1,                  4)  \
  F(CONF, int,     pp,                   pp,                    "pipeline size",            1,  MAX_STAGES, MUST, 18, ROOT, NUM,    1,                  5)  \
  F(CONF, int,     dp,                   dp,                    NULL,                       0,  0,          MUST, 19, ROOT, NUM,    1,                  6)  \
  F(CONF, int,     micro_batch,          micro_batch,           NULL,                       0,  0,          MUST, 20, ROOT, NUM,    1,                  7)  \
  F(CONF, int,     global_batch,         global_batch,          NULL,                       0,  0,          MUST, 21, ROOT, NUM,    1,                  8)  \
  F(CONF, int,     n_micro,              n_micro,               NULL,                       0,  0,          MUST, 22, ROOT, NUM,    1,                  9)  \
  F(ARCH, int,     layers,               layers,                "layers",                   1,  BIG,        MUST, 23, ARCH, NUM,    1,                  0)  \
  F(ARCH, int,     hidden,               hidden,                "hidden size",              0,  BIG,        MUST, 24, ARCH, NUM,    1,                  0)  \
  F(ARCH, int,     heads,                heads,                 "heads",                    0,  BIG,        MUST, 25, ARCH, NUM,    1,                  0)  \
  F(ARCH, int,     kv_heads,             kv_heads,              "key-value heads",          0,  BIG,        MUST, 26, ARCH, NUM,    1,                  0)  \
  F(ARCH, int,     ffn,                  ffn,                   "MLP size",                 0,  BIG,        MUST, 27, ARCH, NUM,    1,                  0)  \
  F(ARCH, int,     vocab,                vocab,                 "vocabulary",               0,  BIG,        MUST, 28, ARCH, NUM,    1,                  0)  \
  F(ARCH, int,     seq_len,              seq_len,               "sequence length",          1,  BIG,        MUST, 29, ARCH, NUM,    1,                  0)  \
  F(ARCH, int,     max_position,         max_position,          "maximum position",         0,  BIG,        MUST, 30, ARCH, NUM,    1,                  0)  \
  F(ARCH, int,     flash_attention,      flash_attention,       "flash attention",          0,  1,          MUST, 31, ARCH, POS,    1,                  0)  \
  F(ARCH, int,     dropout,              dropout,               "dropout",                  0,  1,          MUST, 32, ARCH, POS,    1,                  0)  \
  F(ARCH, int,     untie_embeddings,     untie_embeddings,      "untied embeddings",        0,  1,          MUST, 33, ARCH, POS,    1,                  0)  \
  F(ARCH, int,     experts,              experts,               "experts",                  0,  BIG,        MUST, 34, ARCH, NUM,    p->experts > 0,     0)  \
  F(ARCH, int,     topk,                 topk,                  "experts per token",        0,  p->experts, MUST, 35, ARCH, NUM,    p->experts > 0,     0)  \
  F(ARCH, int,     moe_ffn,              moe_ffn,               "expert MLP size",          0,  BIG,        MUST, 36, ARCH, NUM,    p->experts > 0,     0)  \
  F(ARCH, int,     shared_ffn,           shared_ffn,            "shared expert MLP size",   0,  BIG,        MUST, 37, ARCH, NUM,    p->experts > 0,     0)  \
  F(ARCH, int,     moe_layers,           moe_layers,            "MoE layers",               0,  BIG,        MUST, 38, ARCH, NUM,    p->experts > 0,     0)  \
  F(ARCH, int,     first_dense,          first_moe_layer,       "first MoE layer",          0,  BIG,        MUST, 39, ARCH, NUM,    p->experts > 0,     0)  \
  F(ARCH, double,  capacity,             capacity,              NULL,                       0,  0,          MUST, 40, ARCH, NUM,    p->experts > 0,     0)  \
  F(ARCH, int,     q_lora,               q_lora,                "query LoRA rank",          0,  BIG,        MUST, 41, ARCH, NUM,    p->kv_lora > 0,     0)  \
  F(ARCH, int,     kv_lora,              kv_lora,               "key-value LoRA rank",      0,  BIG,        MUST, 42, ARCH, NUM,    p->kv_lora > 0,     0)  \
  F(ARCH, int,     qk_nope,              qk_nope,               "q/k head size without RoPE", 0, BIG,       MUST, 43, ARCH, NUM,    p->kv_lora > 0,     0)  \
  F(ARCH, int,     qk_rope,              qk_rope,               "q/k head size with RoPE",  0,  BIG,        MUST, 44, ARCH, NUM,    p->kv_lora > 0,     0)  \
  F(ARCH, int,     v_head,               v_head,                "value head size",          0,  BIG,        MUST, 45, ARCH, NUM,    p->kv_lora > 0,     0)  \
  F(ARCH, int,     mtp_layers,           mtp_layers,            "multi-token prediction modules", 0, 16,    MUST, 46, ARCH, NUM,    p->mtp_layers > 0,  0)  \
  F(ARCH, double,  rotary_percent,       rotary_percent,        "rotary share",             0,  0,          MUST, 47, ARCH, NUM,    p->rotary_percent > 0, 0) \
  F(ARCH, int,     moe_every,            moe_every,             "MoE layer interval",       0,  BIG,        MUST, 48, ARCH, NUM,    p->moe_every > 1,   0)  \
  F(ARCH, int,     nope_every,           nope_every,            "no-RoPE layer interval",   0,  BIG,        MUST, 49, ARCH, NUM,    p->nope_every > 0,  0)  \
  F(ARCH, int,     router_sigmoid,       router_scores,         "router score function",    0,  1,          MUST, 50, ARCH, SIGMOID, p->router_sigmoid, 0)  \
  F(ARCH, int,     router_groups,        router_groups,         "router groups",            0,  BIG,        MUST, 51, ARCH, NUM,    p->router_groups > 0, 0) \
  F(ARCH, int,     router_group_topk,    router_group_topk,     "router groups per token",  0,  p->router_groups, MUST, 52, ARCH, NUM, p->router_groups > 0, 0) \
  F(ARCH, double,  router_topk_scale,    router_topk_scale,     "router top-k scaling",     0,  0,          MUST, 53, ARCH, NUM,    p->router_topk_scale > 0, 0) \
  F(ARCH, double,  router_aux_loss,      router_aux_loss_coeff, "router auxiliary loss",    0,  0,          MUST, 54, ARCH, NUM,    p->router_aux_loss > 0, 0) \
  F(ARCH, int,     router_seq_aux,       router_seq_aux,        "router loss per sequence", 0,  1,          MUST, 55, ARCH, BOOL,   p->router_seq_aux,  0)  \
  F(ARCH, int,     router_pre_softmax,   router_pre_softmax,    "router softmax before top-k", 0, 1,        MUST, 56, ARCH, BOOL,   p->router_pre_softmax, 0) \
  F(ARCH, int,     router_expert_bias,   router_expert_bias,    "router balancing bias",    0,  1,          MUST, 57, ARCH, BOOL,   p->router_expert_bias, 0) \
  F(ARCH, double,  router_jitter,        router_jitter,         "router input jitter",      0,  0,          MUST, 58, ARCH, NUM,    p->router_jitter > 0, 0) \
  F(ARCH, int,     head_dim,             head_dim,              "head size",                0,  BIG,        MUST, 59, ARCH, NUM,    p->head_dim > 0,    0)  \
  F(ARCH, double,  rope_theta,           rope_theta,            NULL,                       0,  0,          MUST, 60, ARCH, NUM,    p->rope_theta > 0,  0)  \
  F(ARCH, int,     window,               window,                "attention window",         0,  BIG,        MUST, 61, ARCH, NUM,    p->window > 0,      0)  \
  F(ARCH, int,     window_every,         window_every,          "window interval",          0,  BIG,        MUST, 62, ARCH, NUM,    p->window > 0,      0)  \
  F(ARCH, int,     qkv_bias,             qkv_bias,              "q/k/v bias",               0,  1,          MUST, 63, ARCH, BOOL,   1,                  0)  \
  F(ARCH, int,     out_bias,             out_bias,              "output bias",              0,  1,          MUST, 64, ARCH, BOOL,   1,                  0)  \
  F(ARCH, int,     qk_norm,              qk_norm,               "q/k norm",                 0,  2,          MUST, 65, NONE, NUM,    1,                  0)  \
  F(ARCH, int,     expert_bias,          expert_bias,           "expert bias",              0,  1,          MUST, 66, ARCH, BOOL,   p->experts > 0,     0)  \
  F(ARCH, int,     mlp_bias,             mlp_bias,              "MLP bias",                 0,  1,          MUST, 67, ARCH, BOOL,   1,                  0)  \
  F(ARCH, int,     window_from,          window_from,           "first windowed layer",     0,  p->layers,  MUST, 68, ARCH, NUM,    p->window_from > 0, 0)  \
  F(ARCH, int,     attn_chunk,           attention_chunk,       "attention chunk",          0,  BIG,        MUST, 69, ARCH, NUM,    p->attn_chunk > 0,  0)  \
  F(ARCH, int,     attn_sinks,           attention_sinks,       "attention sinks",          0,  1,          MUST, 70, ARCH, BOOL,   p->attn_sinks,      0)  \
  F(ARCH, double,  glu_limit,            glu_limit,             "GLU clamp",                0,  0,          MUST, 71, ARCH, NUM,    p->glu_limit > 0,   0)  \
  F(ARCH, double,  norm_eps,             norm_epsilon,          "norm epsilon",             0,  0,          MUST, 72, ARCH, NUM,    p->norm_eps > 0,    0)  \
  F(ARCH, double,  init_std,             init_std,              "initial std",              0,  0,          MUST, 73, ARCH, NUM,    p->init_std > 0,    0)  \
  F(CONF, int,     zero_stage,           zero_stage,            "ZeRO stage",               0,  3,          MUST, 74, OPTS, NUM,    1,                  10) \
  F(CONF, strata_recipe_t, recipe,       recipe,                "recipe",                   0,  1,          MUST, 75, OPTS, NAME,   1,                  11) \
  F(CONF, strata_recompute_t, recompute, recompute,             "recompute",                0,  2,          MUST, 76, OPTS, NAME,   1,                  12) \
  F(CONF, int,     sequence_parallel,    sequence_parallel,     "sequence parallelism",     0,  1,          MUST, 77, OPTS, POS,    1,                  13) \
  F(CONF, int,     megatron,             megatron,              "mode",                     0,  1,          MUST, 78, OPTS, POS,    1,                  14) \
  F(CONF, int,     vpp,                  vpp,                   "virtual stages per rank",  1,  MAX_VPP,    MUST, 79, OPTS, NUM,    1,                  15) \
  F(CONF, double,  alpha,                alpha,                 NULL,                       0,  0,          MUST, 80, OPTS, NUM,    1,                  0)  \
  F(CONF, strata_framework_t, framework, framework,             "framework",                0,  2,          MUST, 81, OPTS, NAME,   1,                  0)  \
  STRATA_PLAN_SWITCHES(STRATA_PLAN_SWITCH_FIELD, F)                          \
  STRATA_PLAN_CHOICES(STRATA_PLAN_CHOICE_FIELD, F)                            \
  F(CONF, int,     cp,                   cp,                    "context-parallel size",    0,  BIG,        MUST, 103, OPTS, NUM,    p->cp > 1,          17) \
  F(CONF, int,     cp_comm,              cp_comm,               "context-parallel communication", 0, 1,     MUST, 104, OPTS, CPCOMM, p->cp > 1,          0)  \
  F(CONF, int,     ep,                   ep,                    "expert-parallel size",     0,  BIG,        MUST, 105, OPTS, NUM,    p->experts > 0,     18) \
  F(CONF, int,     etp,                  etp,                   "expert tensor-parallel size", 0, BIG,      MUST, 106, OPTS, NUM,    p->experts > 0,     19) \
  F(CONF, double,  moe_imbalance,        moe_imbalance,         NULL,                       0,  0,          MUST, 107, OPTS, NUM,    p->experts > 0,     0)  \
  F(CONF, int,     fp8,                  fp8,                   "GEMM recipe",              0,  STRATA_LOWP_COUNT - 1, MUST, 108, OPTS, PREC, p->fp8,   20) \
  F(CONF, int,     main_grads_dtype,     main_grads_dtype,      "main gradients' type",     0,  2,          MUST, 109, OPTS, DTYPE,  p->precision_aware_optimizer > 0, 0) \
  F(CONF, int,     exp_avg_dtype,        exp_avg_dtype,         "first moment's type",      0,  2,          MUST, 110, OPTS, DTYPE,  p->precision_aware_optimizer > 0, 0) \
  F(CONF, int,     exp_avg_sq_dtype,     exp_avg_sq_dtype,      "second moment's type",     0,  2,          MUST, 111, OPTS, DTYPE,  p->precision_aware_optimizer > 0, 0) \
  F(CONF, int,     offload_layers,       cpu_offloading_num_layers, "layers offloaded",     0,  BIG,        MUST, 112, OPTS, NUM,    p->offload_layers > 0, 40) \
  F(CONF, int,     recompute_layers,     recompute_num_layers,  "layers a recompute unit",  0,  BIG,        MUST, 113, OPTS, NUM,    p->recompute_layers > 0, 46) \
  F(CONF, double,  optimizer_offload,    optimizer_offload_fraction, "optimizer offload fraction", 0, 0,      MUST, 114, OPTS, NUM,    p->optimizer_offload > 0, 47) \
  F(CONF, int,     recompute_modules,    recompute_modules,     "recompute modules",        0,  STRATA_RCM_ALL, MUST, 115, OPTS, MODULES, p->recompute_modules > 0, 39) \
  F(RUN,  double,  step_seconds,         step_seconds,          NULL,                       0,  0,          OPT, 116, FIG,  NUM,    1,                  0)  \
  F(RUN,  double,  tokens_per_second,    tokens_per_second,     NULL,                       0,  0,          OPT, 117, FIG,  NUM,    1,                  0)  \
  F(RUN,  double,  mfu,                  mfu,                   NULL,                       0,  0,          OPT, 118, FIG,  NUM,    1,                  0)  \
  F(RUN,  double,  peak_memory_bytes,    peak_memory_bytes,     NULL,                       0,  0,          OPT, 119, FIG,  NUM,    1,                  0)  \
  F(RUN,  double,  gpu_memory_bytes,     gpu_memory_bytes,      NULL,                       0,  0,          OPT, 120, FIG,  NUM,    1,                  0)  \
  F(RUN,  double,  gpu_peak_flops,       gpu_peak_flops,        NULL,                       0,  0,          OPT, 121, FIG,  NUM,    1,                  0)  \
  F(RUN,  double,  model_flops_per_step, model_flops_per_step,  NULL,                       0,  0,          OPT, 122, FIG,  NUM,    1,                  0)  \
  F(RUN,  double,  host_memory_gib,      host_memory_gib,       "host memory a GPU",        0,  0,          OPT, 123, FIG,  NUM,    p->host_memory_gib > 0, 0) \
  F(RUN,  double,  host_capacity_gib,    host_capacity_gib,     "host memory of a GPU",     0,  0,          OPT, 124, FIG,  NUM,    p->host_memory_gib > 0, 0) \
  F(ITEM, double,  step_items.compute,   compute_seconds,       NULL,                       0,  0,          OPT, 125, STEP, NUM,    1,                  0)  \
  F(ITEM, double,  step_items.tp_comm,   tp_comm_seconds,       NULL,                       0,  0,          OPT, 126, STEP, NUM,    1,                  0)  \
  F(ITEM, double,  step_items.cp_comm,   cp_comm_seconds,       "context-parallel exchange time", 0, 0,    OPT, 127, STEP, NUM,    p->step_items.cp_comm > 0, 0) \
  F(ITEM, double,  step_items.ep_a2a,    ep_a2a_seconds,        "experts' all-to-all time", 0,  0,          OPT, 128, STEP, NUM,    p->step_items.ep_a2a > 0, 0) \
  F(ITEM, double,  step_items.host,      host_gap_seconds,      "MoE layers' host-bound time", 0, 0,       OPT, 129, STEP, NUM,    p->step_items.host > 0, 0) \
  F(ITEM, double,  step_items.p2p,       pp_p2p_seconds,        "pipeline sends' time",     0,  0,          OPT, 130, STEP, NUM,    p->step_items.p2p > 0, 0) \
  F(ITEM, double,  step_items.bubble,    bubble_seconds,        NULL,                       0,  0,          OPT, 131, STEP, NUM,    1,                  0)  \
  F(ITEM, double,  step_items.dp_sync,   dp_sync_seconds,       NULL,                       0,  0,          OPT, 132, STEP, NUM,    1,                  0)  \
  F(ITEM, double,  step_items.param_gather, param_gather_seconds, NULL,                     0,  0,          OPT, 133, STEP, NUM,    1,                  0)  \
  F(ITEM, double,  step_items.optimizer, optimizer_seconds,     NULL,                       0,  0,          OPT, 134, STEP, NUM,    1,                  0)  \
  F(ITEM, double,  step_items.overhead,  overhead_seconds,      NULL,                       0,  0,          OPT, 135, STEP, NUM,    1,                  0)  \
  F(RUN,  int,     time_limited,         time_limited,          "time limit flag",          0,  1,          OPT, 136, SEARCH, POS,  1,                  0)  \
  F(RUN,  double,  bound_seconds,        bound_seconds,         "proven bound",             0,  0,          OPT, 137, SEARCH, NUM,  p->time_limited,    0)  \
  F(RUN,  int,     subproblems_total,    subproblems_total,     "subproblems",              0,  BIG,        OPT, 138, SEARCH, NUM,  1,                  0)  \
  F(RUN,  int,     subproblems_distinct, subproblems_distinct,  "distinct subproblems",     0,  BIG,        OPT, 139, SEARCH, NUM,  1,                  0)  \
  F(RUN,  int,     ilps_solved,          ilps_solved,           NULL,                       0,  0,          NONE, 0, SEARCH, NUM,  1,                  0)  \
  F(RUN,  int,     cache_hits,           cache_hits,            NULL,                       0,  0,          NONE, 0, SEARCH, NUM,  1,                  0)  \
  F(RUN,  double,  plan_seconds,         plan_seconds,          NULL,                       0,  0,          NONE, 0, SEARCH, TIMING, 1,                0)  \
  F(RUN,  int,     configs_bounded,      configs_bounded,       NULL,                       0,  0,          NONE, 0, NONE, NUM,    1,                  0)  \
  F(RUN,  int,     configs_evaluated,    configs_evaluated,     NULL,                       0,  0,          NONE, 0, NONE, NUM,    1,                  0)  \
  F(RUN,  int,     pareto_axes,          pareto_axes,           "Pareto front's axes",      0,  2,          OPT, 140, NONE, NUM,    p->pareto_axes > 0, 0)  \
  F(RUN,  int,     nodes_lost,           nodes_lost,            "nodes lost",               0,  BIG,        OPT, 141, ROOT, NUM,    p->nodes_lost > 0,  0)  \
  F(RUN,  int,     fallbacks_asked,      fallbacks_asked,       "fallbacks asked",          0,  STRATA_FALLBACKS_MAX, OPT, 142, NONE, NUM, 0,      0)  \
  F(RUN,  int,     npu,                  npu,                   "device kind",              0,  1,          MUST, 143, NONE, NUM,    0,                  0)  \
  F(RUN,  double,  tokens,               tokens,                NULL,                       0,  0,          OPT, 146, FIG,  NUM,    p->tokens > 0,      0)  \
  F(RUN,  double,  train_seconds,        train_seconds,         NULL,                       0,  0,          OPT, 147, FIG,  NUM,    p->tokens > 0,      0)  \
  F(RUN,  double,  cost_usd,             cost_usd,              NULL,                       0,  0,          OPT, 148, FIG,  NUM,    p->cost_usd > 0,    0)  \
  F(RUN,  double,  energy_kwh,           energy_kwh,            NULL,                       0,  0,          OPT, 149, FIG,  NUM,    p->energy_kwh > 0,  0)  \
  F(RUN,  double,  price_usd_per_hour,   price_usd_per_hour,    NULL,                       0,  0,          OPT, 150, FIG,  NUM,    p->price_usd_per_hour > 0, 0) \
  F(RUN,  double,  power_kw,             power_kw,              NULL,                       0,  0,          OPT, 151, FIG,  NUM,    p->power_kw > 0,    0)  \
  F(RUN,  int,     objective,            plan_objective,        "objective",                0,  2,          OPT, 152, FIG,  NAME,   p->tokens > 0,      0)  \
  F(RUN,  double,  time_best_seconds,    time_optimal_train_seconds, NULL,                  0,  0,          OPT, 153, FIG,  NUM,    p->time_best_seconds > 0, 0) \
  F(RUN,  double,  time_best_cost,       time_optimal_cost_usd, NULL,                       0,  0,          OPT, 154, FIG,  NUM,    p->time_best_seconds > 0 && p->time_best_cost > 0, 0) \
  F(RUN,  double,  time_best_energy,     time_optimal_energy_kwh, NULL,                     0,  0,          OPT, 155, FIG,  NUM,    p->time_best_seconds > 0 && p->time_best_energy > 0, 0)
/* clang-format on */

/* The planning switches: options that are on or off (or STRATA_AUTO: the
 * framework's default), stated once for strata_plan_opts_t, the plan, its
 * file, show --json, diff, the runs files of strata calibrate, --baseline
 * and the command line's --NAME / --no-NAME with their help.  A new switch
 * is a row here; what it changes is costed in pipeline/ and exported in
 * merge/.  Columns: member, key, what, codec, tag and diff as in
 * STRATA_PLAN_FIELDS (a switch is must-understand: codec MUST, which
 * show --json writes when the switch is on; the switches of the formats
 * before 9 are there always, MUST_SHOWN, and the grouped GEMM, on unless
 * a plan says off, when it is off, MUST_SHOWN_OFF); the option's name;
 * its default; its help (lines of at most 46 characters joined by "\n").
 */
/* clang-format off */
#define STRATA_PLAN_SWITCHES(S, F)                                              \
  S(F, overlap_grad_reduce, overlap_grad_reduce, "gradient reduce overlap", MUST_SHOWN, 82, 21, \
    "overlap-grad-reduce", STRATA_AUTO, "(default on)")                         \
  S(F, overlap_param_gather, overlap_param_gather, "parameter gather overlap", MUST_SHOWN, 83, 22, \
    "overlap-param-gather", STRATA_AUTO, "(default on, with ZeRO 1)")           \
  S(F, overlap_param_gather_step, overlap_param_gather_with_optimizer_step, "parameter gather under the optimizer step", MUST, 144, 49, \
    "overlap-param-gather-with-optimizer-step", 0,                              \
    "the first bucket's parameter gather under\nthe optimizer step (default off; --zero 1,\n--overlap-param-gather and --vpp > 1)") \
  S(F, tp_comm_overlap, tp_comm_overlap, "tensor-parallel overlap", MUST_SHOWN, 84, 23, \
    "tp-comm-overlap", 0, "(default off; needs sequence parallel)")             \
  S(F, overlap_ep_comm, overlap_moe_expert_parallel_comm, "expert all-to-all overlap", MUST_SHOWN, 85, 24, \
    "overlap-moe-expert-parallel-comm", 0,                                      \
    "the experts' all-to-all under another\nmicro-batch's compute (default off; ep > 1,\npp 1 or interleaved, no full recompute)") \
  S(F, overlap_p2p, overlap_p2p, "p2p overlap", MUST_SHOWN, 86, 25,                     \
    "overlap-p2p", STRATA_AUTO, "(default: Megatron-LM's, on with vpp)")        \
  S(F, scatter_gather, scatter_gather, "scatter-gather", MUST_SHOWN, 87, 26,            \
    "scatter-gather", STRATA_AUTO,                                              \
    "p2p of 1/t of the boundary without sequence\nparallelism (default: off for megatron, on\nfor deepspeed)") \
  S(F, fp8_param_gather, fp8_param_gather, "FP8 parameter gather", MUST, 88, 27, \
    "fp8-param-gather", 0,                                                      \
    "with --precision fp8: the compute weights\nkept and all-gathered in FP8 (default off)") \
  S(F, account_embedding, account_for_embedding, "embedding counted in the split", MUST, 89, 36, \
    "account-for-embedding", STRATA_AUTO,                                       \
    "the embedding counts as a layer of the\nsplit (Megatron-LM's --account-for-\nembedding-in-pipeline-split; default: choose)") \
  S(F, account_loss, account_for_loss, "loss counted in the split", MUST, 90, 37, \
    "account-for-loss", STRATA_AUTO,                                            \
    "the loss counts as a layer of the split\n(--account-for-loss-in-pipeline-split;\ndefault: choose)") \
  S(F, precision_aware_optimizer, precision_aware_optimizer, "precision-aware optimizer", MUST, 91, 38, \
    "precision-aware-optimizer", 0,                                             \
    "Transformer Engine's FusedAdam: fp32 master\nweights as 16-bit remainders, the moments\nand main gradients in --exp-avg-dtype,\n--exp-avg-sq-dtype, --main-grads-dtype\n(default off)") \
  S(F, moe_grouped_gemm, moe_grouped_gemm, "grouped GEMM", MUST_SHOWN_OFF, 92, 28,          \
    "moe-grouped-gemm", STRATA_AUTO,                                            \
    "the experts' GEMMs of a rank as one grouped\nGEMM (default on; a mixture of experts)") \
  S(F, moe_shared_overlap, moe_shared_expert_overlap, "shared expert overlap", MUST, 93, 29, \
    "moe-shared-expert-overlap", STRATA_AUTO,                                   \
    "the shared experts under the token dispatch\n(default off; alltoall or flex dispatcher)")
/* clang-format on */

/* A switch as a row of STRATA_PLAN_FIELDS (a row in the old form, codec
 * TI, reaches merge/payload_tags.c as TI, which says how to change it). */
#define STRATA_PLAN_SWITCH_FIELD(F, m, key, what, codec, tag, diff, ...)       \
  STRATA_PLAN_SWITCH_ROW(F, m, key, what, STRATA_PLAN_SWITCH_CODEC_##codec,    \
                         tag, STRATA_PLAN_SWITCH_WHEN_##codec(m), diff)
#define STRATA_PLAN_SWITCH_ROW(F, m, key, what, codec, tag, when, diff)        \
  F(CONF, int, m, key, what, 0, 1, codec, tag, OPTS, BOOL, when, diff)
#define STRATA_PLAN_SWITCH_CODEC_MUST MUST
#define STRATA_PLAN_SWITCH_CODEC_MUST_SHOWN MUST
#define STRATA_PLAN_SWITCH_CODEC_MUST_SHOWN_OFF MUST
#define STRATA_PLAN_SWITCH_CODEC_TI TI
#define STRATA_PLAN_SWITCH_WHEN_MUST(m) (p->m)
#define STRATA_PLAN_SWITCH_WHEN_MUST_SHOWN(m) 1
#define STRATA_PLAN_SWITCH_WHEN_MUST_SHOWN_OFF(m) (!p->m)
#define STRATA_PLAN_SWITCH_WHEN_TI(m) (p->m)
#define STRATA_PLAN_SWITCH_DECL(F, m, ...) int m;

/* The planning choices: options that take one of a few names (or, for a
 * SET, a list of them), recorded in the plan and exported, stated once
 * for strata_plan_opts_t, the plan, its file, show --json, diff, the
 * rulebook's configuration, the runs files of strata calibrate,
 * --baseline and the command line's --NAME VALUE with its help
 * (rules/choices.c gives each its strata_<key>_name and _parse).  A
 * value is 0 where it is not given (the default, which the first name
 * says: the plan runs and exports it), else k for the k-th name (1, 2,
 * ...); a SET is a mask, bit k - 1 for the k-th name.  Columns: kind
 * (NAME: one value, NAMES: a set; show --json's kind), member, key,
 * what, tag (codec MUST) and diff as in STRATA_PLAN_FIELDS; the option's
 * name; when show --json writes it; its help (lines of at most 46
 * characters); then the names, in the order of their constants below. */
/* clang-format off */
#define STRATA_PLAN_CHOICES(C, F)                                               \
  STRATA_PLAN_MEGATRON_CHOICES(C, F) STRATA_PLAN_DS_CHOICES(C, F)              \
  STRATA_PLAN_OFFLOAD_CHOICES(C, F) STRATA_PLAN_SCHEDULE_CHOICES(C, F)
/* The pipeline schedule (model/sched.c, sched_ops.c), costed and
 * exported; the names as torchtitan spells them (case-insensitive), then
 * ZB-H1 (Qi et al. 2024) and DualPipe (DeepSeek-V3's report).  A plan
 * keeps 0 where it runs 1F1B, interleaved when vpp > 1 */
#define STRATA_PLAN_SCHEDULE_CHOICES(C, F)                                     \
  C(F, NAME, pp_schedule, pp_schedule, "pipeline schedule", 145, 50,           \
    "pp-schedule", p->pp_schedule,                                             \
    "the pipeline schedule: auto (default: each\nthe framework runs), 1F1B,\nInterleaved1F1B, GPipe, LoopedBFS,\nInterleavedZeroBubble, ZBVZeroBubble,\nDualPipeV, ZB-H1 or DualPipe", \
    "auto", "1F1B", "Interleaved1F1B", "GPipe", "LoopedBFS",                  \
    "InterleavedZeroBubble", "ZBVZeroBubble", "DualPipeV", "ZB-H1", "DualPipe")
/* Megatron-LM's fine-grained activation offloading (transformer_config.py
 * offload_modules; model/fgoffload.c), costed: the modules whose
 * saved inputs go to the host */
#define STRATA_PLAN_OFFLOAD_CHOICES(C, F)                                      \
  C(F, NAMES, offload_modules, offload_modules, "offloaded modules", 102, 48,  \
    "offload-modules", p->offload_modules,                                     \
    "fine-grained activation offloading: the\nmodules whose saved activations go to the\nhost between forward and backward, a comma\nlist of attn_norm, qkv_linear, core_attn,\nattn_proj, mlp_norm, expert_fc1, moe_act\n(Megatron-LM's --offload-modules; default\nnone)", \
    "attn_norm", "qkv_linear", "core_attn", "attn_proj", "mlp_norm",          \
    "expert_fc1", "moe_act")
/* Megatron-LM's MoE layer and CUDA graphs: exported; of them only the
 * dispatcher is costed (flex sends a token once a node: pipeline/degrees.c) */
#define STRATA_PLAN_MEGATRON_CHOICES(C, F)                                      \
  C(F, NAME, moe_dispatcher, moe_token_dispatcher, "token dispatcher", 94, 30,  \
    "moe-token-dispatcher", p->moe_dispatcher,                                 \
    "the experts' token dispatcher: alltoall\n(default), allgather or flex",     \
    "alltoall", "allgather", "flex")                                           \
  C(F, NAME, moe_flex_backend, moe_flex_backend, "flex dispatcher backend", 95, 31, \
    "moe-flex-backend", p->moe_flex_backend || p->moe_dispatcher == STRATA_MOE_FLEX, \
    "with --moe-token-dispatcher flex: deepep\n(default) or hybridep",           \
    "deepep", "hybridep")                                                      \
  C(F, NAME, moe_router_dtype, moe_router_dtype, "router dtype", 96, 32,        \
    "moe-router-dtype", p->moe_router_dtype,                                   \
    "the router's scores and the experts'\nweighting in fp32 (default) or fp64", \
    "fp32", "fp64")                                                            \
  C(F, NAME, moe_drop_policy, moe_token_drop_policy, "token drop policy", 97, 33, \
    "moe-token-drop-policy", p->moe_drop_policy,                               \
    "with --capacity-factor: drop the tokens of\nleast probability (probs, the default) or\nlast in the batch (position)", \
    "probs", "position")                                                       \
  C(F, NAME, cuda_graph_impl, cuda_graph_impl, "CUDA graph implementation", 98, 34, \
    "cuda-graph-impl", p->cuda_graph_impl,                                     \
    "CUDA graphs: none (default), each layer's\nby local (Megatron-Core's) or\ntransformer_engine, or full_iteration", \
    "none", "local", "transformer_engine", "full_iteration")                                     \
  C(F, NAMES, cuda_graph_scope, cuda_graph_scope, "CUDA graph scope", 99, 35,   \
    "cuda-graph-scope", p->cuda_graph_scope,                                   \
    "what a layer's graph captures, a comma list\nof attn, mlp, moe, moe_router,\nmoe_preprocess (default: the whole layer)", \
    "attn", "mlp", "moe", "moe_router", "moe_preprocess")                     \
  C(F, NAME, recompute_method, recompute_method, "recompute method", 100, 45,   \
    "recompute-method", p->recompute_method,                                   \
    "with --recompute full: uniform (default;\nevery N layers' input kept, N of\n--recompute-num-layers) or block (the first\nN layers of every chunk recomputed, the\nrest not)", \
    "uniform", "block")
/* DeepSpeed's: the pipeline's partition method (rules/ds_partition.c),
 * costed; its own rows so that the help lists it with --framework */
#define STRATA_PLAN_DS_CHOICES(C, F)                                           \
  C(F, NAME, ds_partition, ds_partition_method, "DeepSpeed partition method", 101, 41, \
    "ds-partition-method", p->ds_partition,                                    \
    "--framework deepspeed: PipelineModule's\npartition_method, whose split is planned:\ntype:transformer, type:transformer|embedding\n(BLOOM's), parameters, uniform or\ntype:embedding (default: the even split or\nthe one given)", \
    "type:transformer", "type:transformer|embedding", "parameters",           \
    "uniform", "type:embedding")
/* clang-format on */

/* The choices' values (0: not given, the first). */
enum { STRATA_MOE_ALLTOALL = 1, STRATA_MOE_ALLGATHER, STRATA_MOE_FLEX };
enum { STRATA_MOE_DEEPEP = 1, STRATA_MOE_HYBRIDEP };
enum { STRATA_MOE_FP32 = 1, STRATA_MOE_FP64 };
enum { STRATA_MOE_DROP_PROBS = 1, STRATA_MOE_DROP_POSITION };
enum { STRATA_RECOMPUTE_UNIFORM = 1, STRATA_RECOMPUTE_BLOCK };
enum {
  STRATA_CUDA_GRAPH_NONE = 1,
  STRATA_CUDA_GRAPH_LOCAL,
  STRATA_CUDA_GRAPH_TE,
  STRATA_CUDA_GRAPH_FULL /* the whole iteration (arguments.py) */
};
enum {
  STRATA_CUDA_GRAPH_ATTN = 1,
  STRATA_CUDA_GRAPH_MLP = 2,
  STRATA_CUDA_GRAPH_MOE = 4,
  STRATA_CUDA_GRAPH_MOE_ROUTER = 8,
  STRATA_CUDA_GRAPH_MOE_PREPROCESS = 16
};
/* The modules of fine-grained activation offloading (bits of
 * offload_modules, in the order of their names). */
enum {
  STRATA_OFM_ATTN_NORM = 1,
  STRATA_OFM_QKV_LINEAR = 2,
  STRATA_OFM_CORE_ATTN = 4,
  STRATA_OFM_ATTN_PROJ = 8,
  STRATA_OFM_MLP_NORM = 16,
  STRATA_OFM_EXPERT_FC1 = 32,
  STRATA_OFM_MOE_ACT = 64
};
/* DeepSpeed's partition methods (deepspeed/runtime/pipe/module.py) */
enum {
  STRATA_DS_TYPE_TRANSFORMER = 1,
  STRATA_DS_TYPE_TRANSFORMER_EMBEDDING,
  STRATA_DS_PARAMETERS,
  STRATA_DS_UNIFORM,
  STRATA_DS_TYPE_EMBEDDING
};
/* The pipeline schedules (pp_schedule's names) */
enum {
  STRATA_PPS_AUTO = 1,
  STRATA_PPS_1F1B,
  STRATA_PPS_INTERLEAVED_1F1B,
  STRATA_PPS_GPIPE,
  STRATA_PPS_LOOPED_BFS,
  STRATA_PPS_INTERLEAVED_ZB,
  STRATA_PPS_ZBV,
  STRATA_PPS_DUALPIPEV,
  STRATA_PPS_ZBH1,
  STRATA_PPS_DUALPIPE
};
/* A choice as it runs: the value given, or the first. */
#define STRATA_CHOICE(v) ((v) > 0 ? (v) : 1)

/* A choice as a row of STRATA_PLAN_FIELDS: 0 to the count of its names
 * (a mask of them for a set). */
#define STRATA_PLAN_CHOICE_FIELD(F, kind, m, key, what, tag, diff, cli, when,  \
                                 help, ...)                                    \
  F(CONF, int, m, key, what, 0, STRATA_PLAN_CHOICE_HI_##kind(__VA_ARGS__),     \
    MUST, tag, OPTS, kind, when, diff)
#define STRATA_PLAN_CHOICE_COUNT(...)                                          \
  ((int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)))
#define STRATA_PLAN_CHOICE_HI_NAME(...) STRATA_PLAN_CHOICE_COUNT(__VA_ARGS__)
#define STRATA_PLAN_CHOICE_HI_NAMES(...)                                       \
  ((1 << STRATA_PLAN_CHOICE_COUNT(__VA_ARGS__)) - 1)
#define STRATA_PLAN_CHOICE_DECL(F, kind, m, ...) int m;

/* The plan format this strata writes: 18, fields as tagged records
 * (docs/plan-format.md), the last number taken for a new field.  Formats
 * 3 to 17 still read (merge/plan_legacy.h keeps their layout); a new
 * field is a new tag (the recipe above), and the number changes only if
 * the meaning of fields already stored does. */
#define STRATA_PLAN_FORMAT_VERSION 18
/* Tags from here on are fields added after format 18 was made: the old
 * formats (3 to 17) hold none of them (the tests' round trip through an
 * old format leaves them out). */
#define STRATA_PLAN_TAG_LEGACY_END 144
/* The tag a new field takes next (the recipe at the head of this file). */
#define STRATA_PLAN_TAG_NEXT 156
/* The most fallback plans a plan holds (strata plan --fallbacks K). */
#define STRATA_FALLBACKS_MAX 16

/* The plan's parts that are not one scalar, each a record of its own
 * tag in the file (docs/plan-format.md gives the layout of each): tag,
 * name, codec (MUST or OPT, as for a row), type (STR: a string, REC: a
 * record of a fixed layout).  A field of every stage, rank or kept
 * configuration is a new block of one value each, at a new tag. */
/* clang-format off */
#define STRATA_PLAN_BLOCKS(B)                                                 \
  B(1,  model,          MUST, STR)                                            \
  B(2,  cluster,        MUST, STR)                                            \
  B(3,  family,         MUST, STR)                                            \
  B(4,  stages,         MUST, REC)                                            \
  B(5,  ranks,          MUST, REC)                                            \
  B(6,  configurations, OPT,  REC)                                            \
  B(7,  node_groups,    MUST, REC)                                            \
  B(8,  rope_scaling,   MUST, REC)                                            \
  B(9,  pareto,         OPT,  REC)                                            \
  B(10, fallbacks,      OPT,  REC)                                            \
  B(11, layouts,        OPT,  REC)
/* clang-format on */

/* Declarations of one part's members (the struct bodies of pipeline.h). */
#define STRATA_PLAN_DECL_CONF_CONF(t, m) t m;
#define STRATA_PLAN_DECL_CONF_ARCH(t, m)
#define STRATA_PLAN_DECL_CONF_RUN(t, m)
#define STRATA_PLAN_DECL_CONF_ITEM(t, m)
#define STRATA_PLAN_DECL_ARCH_CONF(t, m)
#define STRATA_PLAN_DECL_ARCH_ARCH(t, m) t m;
#define STRATA_PLAN_DECL_ARCH_RUN(t, m)
#define STRATA_PLAN_DECL_ARCH_ITEM(t, m)
#define STRATA_PLAN_DECL_RUN_CONF(t, m)
#define STRATA_PLAN_DECL_RUN_ARCH(t, m)
#define STRATA_PLAN_DECL_RUN_RUN(t, m) t m;
#define STRATA_PLAN_DECL_RUN_ITEM(t, m)
#define STRATA_PLAN_DECL_CONF(part, t, m, ...)                                 \
  STRATA_PLAN_DECL_CONF_##part(t, m)
#define STRATA_PLAN_DECL_ARCH(part, t, m, ...)                                 \
  STRATA_PLAN_DECL_ARCH_##part(t, m)
#define STRATA_PLAN_DECL_RUN(part, t, m, ...) STRATA_PLAN_DECL_RUN_##part(t, m)

#endif
