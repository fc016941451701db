/*
 * plan_text.h - the lines of `strata show`'s text (strata_plan_summary)
 * that state the plan's options, stated once as a table beside the one
 * `show --json` is written from (include/strata/plan_fields.h), in the
 * order the summary prints them.  merge/report.c expands it; a test
 * (test_merge's text_rows_cover_the_fields) holds that every option of
 * the field table is named by a row here or by ST__PLAN_TEXT_ELSEWHERE.
 *
 * To show a new plan field in the text: add its row to plan_fields.h (the
 * JSON, the file, diff), then one row here at the place it reads best:
 *   L(keys, label, when, format, args...)  one line, "  %-20s " format;
 *   W(keys, label, when, writer)           writer(b, p, label) writes the
 *                                          line(s) that compose several
 *                                          fields, "\n" included.
 * keys are the field table's keys (its `key` column) the line shows, a
 * space-separated string; label is the 20-column name; when an expression
 * on the plan p.  A field the text leaves out on purpose goes in
 * ST__PLAN_TEXT_ELSEWHERE with where it is said instead.
 */
#ifndef STRATA_MERGE_PLAN_TEXT_H
#define STRATA_MERGE_PLAN_TEXT_H

/* clang-format off */
#define ST__PLAN_TEXT(L, W)                                                    \
  W("account_for_embedding account_for_loss", "split",                        \
    p->account_embedding || p->account_loss, st__text_account)                 \
  L("ds_partition_method", "split", p->ds_partition > 0,                      \
    "DeepSpeed's PipelineModule, partition_method '%s' (the split it gives)", \
    strata_ds_partition_method_name(p->ds_partition))                          \
  W("", "node groups", p->n_groups > 0, st__text_groups)                       \
  L("micro_batch global_batch n_micro", "batch", 1,                            \
    "micro %d, global %d, %d micro-batches/step",                              \
    p->micro_batch, p->global_batch, p->n_micro)                               \
  L("zero_stage recipe framework", "ZeRO", 1, "stage %d, %s recipe, %s",       \
    p->zero_stage, strata_recipe_name(p->recipe),                              \
    strata_framework_name(p->framework))                                       \
  L("", "", p->framework == STRATA_FRAMEWORK_TORCHTITAN && p->pp > 1 &&        \
    p->dp > 1, "%s", "FSDP2 under the pipeline: parameters gathered from "     \
    "the first forward, fp32 gradients whole to the last backward; one "       \
    "all-gather, one reduce-scatter a step")                                   \
  L("", "", p->framework == STRATA_FRAMEWORK_MEGATRON && p->pp > 1 &&          \
    p->zero_stage >= 2, "%s", "Megatron-FSDP with a pipeline: gradients "      \
    "reduce-scattered every micro-batch's backward")                           \
  W("recompute recompute_modules recompute_method recompute_num_layers",      \
    "recompute", 1, st__text_recompute)                                        \
  L("cpu_offloading_num_layers", "offloading", p->offload_layers > 0,          \
    "%d layers' saved activations in host memory between forward and "         \
    "backward", p->offload_layers)                                             \
  W("offload_modules", "offloading", p->offload_modules > 0,                   \
    st__text_offload_modules)                                                  \
  L("optimizer_offload_fraction", "optimizer offload",                         \
    p->optimizer_offload > 0,                                                  \
    "%.3g of the optimizer's states and step on the host",                     \
    p->optimizer_offload)                                                      \
  L("host_memory_gib host_capacity_gib", "host memory",                        \
    p->host_memory_gib > 0 && p->host_capacity_gib > 0,                        \
    "%.2f GiB a %s of %.2f GiB (its share of the host)", p->host_memory_gib,   \
    st__dev(p), p->host_capacity_gib)                                          \
  L("host_memory_gib", "host memory",                                          \
    p->host_memory_gib > 0 && !(p->host_capacity_gib > 0),                     \
    "%.2f GiB a %s (the host's size not known: not checked)",                  \
    p->host_memory_gib, st__dev(p))                                            \
  L("precision_aware_optimizer main_grads_dtype exp_avg_dtype "                \
    "exp_avg_sq_dtype", "optimizer", p->precision_aware_optimizer > 0,         \
    "precision-aware (main gradients %s, moments %s and %s)",                  \
    strata_state_dtype_name(p->main_grads_dtype),                              \
    strata_state_dtype_name(p->exp_avg_dtype),                                 \
    strata_state_dtype_name(p->exp_avg_sq_dtype))                              \
  L("sequence_parallel", "sequence parallel", 1, "%s",                         \
    st__onoff(p->sequence_parallel))                                           \
  L("cp cp_comm", "context parallel", p->cp > 1,                               \
    "cp %d, %s, sequences split in %lld chunks", p->cp,                        \
    p->cp_comm == STRATA_CP_ALLGATHER ? "keys and values all-gathered"         \
                                      : "keys and values passed around a ring", \
    2LL * p->cp) /* (2^30 in a damaged plan) */                                \
  W("experts topk moe_ffn shared_ffn moe_layers capacity moe_imbalance",       \
    "experts", p->experts > 0, st__text_experts)                               \
  L("ep etp", "expert parallel", p->experts > 0,                               \
    "ep %d, etp %d, expert data parallel %d", p->ep > 0 ? p->ep : 1,           \
    p->etp > 0 ? p->etp : 1, st__expert_dp(p))                                 \
  W("moe_token_dispatcher moe_flex_backend moe_router_dtype "                  \
    "moe_token_drop_policy moe_grouped_gemm moe_shared_expert_overlap",        \
    "MoE layer", st__text_moe_shown(p), st__text_moe_layer)                    \
  W("cuda_graph_impl cuda_graph_scope", "CUDA graphs",                         \
    p->cuda_graph_impl != 0, st__text_cuda_graphs)                             \
  L("mtp_layers", "multi-token pred.", p->mtp_layers > 0,                      \
    "%d module%s on the last stage (a layer, the head and a loss each)",       \
    p->mtp_layers, p->mtp_layers > 1 ? "s" : "")                               \
  L("fp8", "precision", p->fp8 != 0,                                           \
    "%s GEMMs (Transformer Engine, %s recipe), BF16 attention",                \
    p->fp8 == STRATA_LOWP_NVFP4 ? "FP4" : "FP8", strata_lowp_name(p->fp8))     \
  W("overlap_grad_reduce overlap_param_gather tp_comm_overlap overlap_p2p "    \
    "overlap_moe_expert_parallel_comm", "overlap", 1, st__text_overlap)        \
  L("overlap_param_gather_with_optimizer_step", "param gather",               \
    p->overlap_param_gather_step > 0, "%s",                                    \
    "the first bucket's under the optimizer step")

/* The options the lines above leave to the summary's other parts, or out
 * of the text on purpose: the degrees (the "parallelism" line and the
 * stage table), the mode, interleaving and the pipeline schedule (the
 * "schedule" line), ILP weight
 * and run-time switches the text does not state (show --json has them). */
#define ST__PLAN_TEXT_ELSEWHERE                                                \
  "devices tp pp dp megatron vpp alpha fp8_param_gather scatter_gather "       \
  "pp_schedule"
/* clang-format on */

#endif
