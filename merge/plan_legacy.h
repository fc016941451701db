/*
 * plan_legacy.h - the layout of plan formats 3 to 17, frozen: every
 * field of those formats with the place it had (docs/plan-format.md,
 * "Formats 3 to 17").  Format 18 keeps fields as tagged records
 * (plan_fields.h's codec and tag); the older files are still read, and
 * written by the tests that prove it (merge/payload.c), from this list,
 * which never changes again: a new field has no place here.
 *
 * Columns: part, type, member, key, what, lo, hi as plan_fields.h had
 * them; codec and slot:
 *   HI, HD  the header's ints / doubles, at index `slot`
 *   HE      a header int holding an enum: read in [lo, hi]
 *   HZ, HZD a run statistic: the header keeps 0 at `slot`
 *   TI, TD  after the stages, from plan format `slot` on, and only in
 *           files that need that format (a row whose value is not 0
 *           raises the format to `slot`), in the order of this list
 *   TN      a TI switch that is on unless a file says off: one that is
 *           off raises the format, and a file older than `slot` reads
 *           as on
 */
#ifndef STRATA_MERGE_PLAN_LEGACY_H
#define STRATA_MERGE_PLAN_LEGACY_H

/* The header's ints and doubles (every HI/HE/HZ and HD/HZD slot once). */
#define ST__LEGACY_INTS 60
#define ST__LEGACY_DOUBLES 19
/* The newest of these formats. */
#define ST__LEGACY_NEWEST 17

/* clang-format off */
#define ST__PLAN_LEGACY(L) \
  L(CONF, int, devices, devices, "devices", 1, BIG, HI, 0) \
  L(CONF, int, tp, tp, "tensor-parallel size", 1, BIG, HI, 1) \
  L(CONF, int, pp, pp, "pipeline size", 1, MAX_STAGES, HI, 2) \
  L(CONF, int, dp, dp, NULL, 0, 0, HI, 3) \
  L(CONF, int, micro_batch, micro_batch, NULL, 0, 0, HI, 4) \
  L(CONF, int, global_batch, global_batch, NULL, 0, 0, HI, 5) \
  L(CONF, int, n_micro, n_micro, NULL, 0, 0, HI, 6) \
  L(ARCH, int, layers, layers, "layers", 1, BIG, HI, 14) \
  L(ARCH, int, hidden, hidden, "hidden size", 0, BIG, HI, 15) \
  L(ARCH, int, heads, heads, "heads", 0, BIG, HI, 16) \
  L(ARCH, int, kv_heads, kv_heads, "key-value heads", 0, BIG, HI, 17) \
  L(ARCH, int, ffn, ffn, "MLP size", 0, BIG, HI, 18) \
  L(ARCH, int, vocab, vocab, "vocabulary", 0, BIG, HI, 19) \
  L(ARCH, int, seq_len, seq_len, "sequence length", 1, BIG, HI, 13) \
  L(ARCH, int, max_position, max_position, "maximum position", 0, BIG, HI, 23) \
  L(ARCH, int, flash_attention, flash_attention, "flash attention", 0, 1, HI, 20) \
  L(ARCH, int, dropout, dropout, "dropout", 0, 1, HI, 21) \
  L(ARCH, int, untie_embeddings, untie_embeddings, "untied embeddings", 0, 1, HI, 22) \
  L(ARCH, int, experts, experts, "experts", 0, BIG, HI, 42) \
  L(ARCH, int, topk, topk, "experts per token", 0, p->experts, HI, 43) \
  L(ARCH, int, moe_ffn, moe_ffn, "expert MLP size", 0, BIG, HI, 44) \
  L(ARCH, int, shared_ffn, shared_ffn, "shared expert MLP size", 0, BIG, HI, 45) \
  L(ARCH, int, moe_layers, moe_layers, "MoE layers", 0, BIG, HI, 47) \
  L(ARCH, int, first_dense, first_moe_layer, "first MoE layer", 0, BIG, HI, 46) \
  L(ARCH, double, capacity, capacity, NULL, 0, 0, HD, 17) \
  L(ARCH, int, q_lora, q_lora, "query LoRA rank", 0, BIG, HI, 48) \
  L(ARCH, int, kv_lora, kv_lora, "key-value LoRA rank", 0, BIG, HI, 49) \
  L(ARCH, int, qk_nope, qk_nope, "q/k head size without RoPE", 0, BIG, HI, 50) \
  L(ARCH, int, qk_rope, qk_rope, "q/k head size with RoPE", 0, BIG, HI, 51) \
  L(ARCH, int, v_head, v_head, "value head size", 0, BIG, HI, 52) \
  L(ARCH, int, mtp_layers, mtp_layers, "multi-token prediction modules", 0, 16, TI, 5) \
  L(ARCH, double, rotary_percent, rotary_percent, "rotary share", 0, 0, TD, 5) \
  L(ARCH, int, moe_every, moe_every, "MoE layer interval", 0, BIG, TI, 5) \
  L(ARCH, int, nope_every, nope_every, "no-RoPE layer interval", 0, BIG, TI, 5) \
  L(ARCH, int, router_sigmoid, router_scores, "router score function", 0, 1, TI, 5) \
  L(ARCH, int, router_groups, router_groups, "router groups", 0, BIG, TI, 8) \
  L(ARCH, int, router_group_topk, router_group_topk, "router groups per token", 0, p->router_groups, TI, 8) \
  L(ARCH, double, router_topk_scale, router_topk_scale, "router top-k scaling", 0, 0, TD, 8) \
  L(ARCH, double, router_aux_loss, router_aux_loss_coeff, "router auxiliary loss", 0, 0, TD, 17) \
  L(ARCH, int, router_seq_aux, router_seq_aux, "router loss per sequence", 0, 1, TI, 17) \
  L(ARCH, int, router_pre_softmax, router_pre_softmax, "router softmax before top-k", 0, 1, TI, 17) \
  L(ARCH, int, router_expert_bias, router_expert_bias, "router balancing bias", 0, 1, TI, 17) \
  L(ARCH, double, router_jitter, router_jitter, "router input jitter", 0, 0, TD, 17) \
  L(ARCH, int, head_dim, head_dim, "head size", 0, BIG, HI, 53) \
  L(ARCH, double, rope_theta, rope_theta, NULL, 0, 0, HD, 18) \
  L(ARCH, int, window, window, "attention window", 0, BIG, HI, 57) \
  L(ARCH, int, window_every, window_every, "window interval", 0, BIG, HI, 58) \
  L(ARCH, int, qkv_bias, qkv_bias, "q/k/v bias", 0, 1, HI, 54) \
  L(ARCH, int, out_bias, out_bias, "output bias", 0, 1, HI, 55) \
  L(ARCH, int, qk_norm, qk_norm, "q/k norm", 0, 2, HI, 56) \
  L(ARCH, int, expert_bias, expert_bias, "expert bias", 0, 1, HI, 59) \
  L(ARCH, int, mlp_bias, mlp_bias, "MLP bias", 0, 1, TI, 11) \
  L(ARCH, int, window_from, window_from, "first windowed layer", 0, p->layers, TI, 11) \
  L(ARCH, int, attn_chunk, attention_chunk, "attention chunk", 0, BIG, TI, 11) \
  L(ARCH, int, attn_sinks, attention_sinks, "attention sinks", 0, 1, TI, 11) \
  L(ARCH, double, glu_limit, glu_limit, "GLU clamp", 0, 0, TD, 11) \
  L(ARCH, double, norm_eps, norm_epsilon, "norm epsilon", 0, 0, TD, 11) \
  L(ARCH, double, init_std, init_std, "initial std", 0, 0, TD, 11) \
  L(CONF, int, zero_stage, zero_stage, "ZeRO stage", 0, 3, HI, 7) \
  L(CONF, strata_recipe_t, recipe, recipe, "recipe", 0, 1, HE, 11) \
  L(CONF, strata_recompute_t, recompute, recompute, "recompute", 0, 2, HE, 12) \
  L(CONF, int, sequence_parallel, sequence_parallel, "sequence parallelism", 0, 1, HI, 8) \
  L(CONF, int, megatron, megatron, "mode", 0, 1, HI, 9) \
  L(CONF, int, vpp, vpp, "virtual stages per rank", 1, MAX_VPP, HI, 10) \
  L(CONF, double, alpha, alpha, NULL, 0, 0, HD, 0) \
  L(CONF, strata_framework_t, framework, framework, "framework", 0, 2, HE, 29) \
  L(CONF, int, overlap_grad_reduce, overlap_grad_reduce, "gradient reduce overlap", 0, 1, HI, 30) \
  L(CONF, int, overlap_param_gather, overlap_param_gather, "parameter gather overlap", 0, 1, HI, 31) \
  L(CONF, int, tp_comm_overlap, tp_comm_overlap, "tensor-parallel overlap", 0, 1, HI, 32) \
  L(CONF, int, overlap_ep_comm, overlap_moe_expert_parallel_comm, "expert all-to-all overlap", 0, 1, TI, 6) \
  L(CONF, int, overlap_p2p, overlap_p2p, "p2p overlap", 0, 1, HI, 33) \
  L(CONF, int, scatter_gather, scatter_gather, "scatter-gather", 0, 1, HI, 34) \
  L(CONF, int, fp8_param_gather, fp8_param_gather, "FP8 parameter gather", 0, 1, TI, 8) \
  L(CONF, int, account_embedding, account_for_embedding, "embedding counted in the split", 0, 1, TI, 9) \
  L(CONF, int, account_loss, account_for_loss, "loss counted in the split", 0, 1, TI, 9) \
  L(CONF, int, precision_aware_optimizer, precision_aware_optimizer, "precision-aware optimizer", 0, 1, TI, 9) \
  L(CONF, int, moe_grouped_gemm, moe_grouped_gemm, "grouped GEMM", 0, 1, TN, 9) \
  L(CONF, int, moe_shared_overlap, moe_shared_expert_overlap, "shared expert overlap", 0, 1, TI, 9) \
  L(CONF, int, moe_dispatcher, moe_token_dispatcher, "token dispatcher", 0, 3, TI, 9) \
  L(CONF, int, moe_flex_backend, moe_flex_backend, "flex dispatcher backend", 0, 2, TI, 9) \
  L(CONF, int, moe_router_dtype, moe_router_dtype, "router dtype", 0, 2, TI, 9) \
  L(CONF, int, moe_drop_policy, moe_token_drop_policy, "token drop policy", 0, 2, TI, 9) \
  L(CONF, int, cuda_graph_impl, cuda_graph_impl, "CUDA graph implementation", 0, 4, TI, 9) \
  L(CONF, int, cuda_graph_scope, cuda_graph_scope, "CUDA graph scope", 0, 31, TI, 9) \
  L(CONF, int, recompute_method, recompute_method, "recompute method", 0, 2, TI, 10) \
  L(CONF, int, ds_partition, ds_partition_method, "DeepSpeed partition method", 0, 5, TI, 10) \
  L(CONF, int, offload_modules, offload_modules, "offloaded modules", 0, 127, TI, 15) \
  L(CONF, int, cp, cp, "context-parallel size", 0, BIG, HI, 37) \
  L(CONF, int, cp_comm, cp_comm, "context-parallel communication", 0, 1, HI, 40) \
  L(CONF, int, ep, ep, "expert-parallel size", 0, BIG, HI, 38) \
  L(CONF, int, etp, etp, "expert tensor-parallel size", 0, BIG, HI, 39) \
  L(CONF, double, moe_imbalance, moe_imbalance, NULL, 0, 0, HD, 16) \
  L(CONF, int, fp8, fp8, "GEMM recipe", 0, STRATA_LOWP_COUNT - 1, HI, 41) \
  L(CONF, int, main_grads_dtype, main_grads_dtype, "main gradients' type", 0, 2, TI, 9) \
  L(CONF, int, exp_avg_dtype, exp_avg_dtype, "first moment's type", 0, 2, TI, 9) \
  L(CONF, int, exp_avg_sq_dtype, exp_avg_sq_dtype, "second moment's type", 0, 2, TI, 9) \
  L(CONF, int, offload_layers, cpu_offloading_num_layers, "layers offloaded", 0, BIG, TI, 9) \
  L(CONF, int, recompute_layers, recompute_num_layers, "layers a recompute unit", 0, BIG, TI, 10) \
  L(CONF, double, optimizer_offload, optimizer_offload_fraction, "optimizer offload fraction", 0, 0, TD, 10) \
  L(CONF, int, recompute_modules, recompute_modules, "recompute modules", 0, STRATA_RCM_ALL, TI, 9) \
  L(RUN, double, step_seconds, step_seconds, NULL, 0, 0, HD, 1) \
  L(RUN, double, tokens_per_second, tokens_per_second, NULL, 0, 0, HD, 2) \
  L(RUN, double, mfu, mfu, NULL, 0, 0, HD, 3) \
  L(RUN, double, peak_memory_bytes, peak_memory_bytes, NULL, 0, 0, HD, 4) \
  L(RUN, double, gpu_memory_bytes, gpu_memory_bytes, NULL, 0, 0, HD, 5) \
  L(RUN, double, gpu_peak_flops, gpu_peak_flops, NULL, 0, 0, HD, 6) \
  L(RUN, double, model_flops_per_step, model_flops_per_step, NULL, 0, 0, HD, 7) \
  L(RUN, double, host_memory_gib, host_memory_gib, "host memory a GPU", 0, 0, TD, 10) \
  L(RUN, double, host_capacity_gib, host_capacity_gib, "host memory of a GPU", 0, 0, TD, 10) \
  L(ITEM, double, step_items.compute, compute_seconds, NULL, 0, 0, HD, 9) \
  L(ITEM, double, step_items.tp_comm, tp_comm_seconds, NULL, 0, 0, HD, 10) \
  L(ITEM, double, step_items.cp_comm, cp_comm_seconds, "context-parallel exchange time", 0, 0, TD, 17) \
  L(ITEM, double, step_items.ep_a2a, ep_a2a_seconds, "experts' all-to-all time", 0, 0, TD, 12) \
  L(ITEM, double, step_items.host, host_gap_seconds, "MoE layers' host-bound time", 0, 0, TD, 16) \
  L(ITEM, double, step_items.p2p, pp_p2p_seconds, "pipeline sends' time", 0, 0, TD, 17) \
  L(ITEM, double, step_items.bubble, bubble_seconds, NULL, 0, 0, HD, 11) \
  L(ITEM, double, step_items.dp_sync, dp_sync_seconds, NULL, 0, 0, HD, 12) \
  L(ITEM, double, step_items.param_gather, param_gather_seconds, NULL, 0, 0, HD, 13) \
  L(ITEM, double, step_items.optimizer, optimizer_seconds, NULL, 0, 0, HD, 14) \
  L(ITEM, double, step_items.overhead, overhead_seconds, NULL, 0, 0, HD, 15) \
  L(RUN, int, time_limited, time_limited, "time limit flag", 0, 1, HI, 28) \
  L(RUN, double, bound_seconds, bound_seconds, "proven bound", 0, 0, TD, 11) \
  L(RUN, int, subproblems_total, subproblems_total, "subproblems", 0, BIG, HI, 24) \
  L(RUN, int, subproblems_distinct, subproblems_distinct, "distinct subproblems", 0, BIG, HI, 25) \
  L(RUN, int, ilps_solved, ilps_solved, NULL, 0, 0, HZ, 26) \
  L(RUN, int, cache_hits, cache_hits, NULL, 0, 0, HZ, 27) \
  L(RUN, double, plan_seconds, plan_seconds, NULL, 0, 0, HZD, 8) \
  L(RUN, int, configs_bounded, configs_bounded, NULL, 0, 0, HZ, 35) \
  L(RUN, int, configs_evaluated, configs_evaluated, NULL, 0, 0, HZ, 36) \
  L(RUN, int, pareto_axes, pareto_axes, "Pareto front's axes", 0, 2, TI, 13) \
  L(RUN, int, nodes_lost, nodes_lost, "nodes lost", 0, BIG, TI, 14) \
  L(RUN, int, fallbacks_asked, fallbacks_asked, "fallbacks asked", 0, 16, TI, 14) \
  L(RUN, int, npu, npu, "device kind", 0, 1, TI, 17)
/* clang-format on */

#endif
