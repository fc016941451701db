/*
 * export_deepspeed.c - the plan as a DeepSpeed config (JSON, keys from
 * reference/deepspeed_keys.txt only) and the Python lines that build its
 * pipeline topology (strata_export_deepspeed_topology).
 *
 * What the config holds is what DeepSpeed reads and the plan chose: the
 * batch (DeepSpeed asserts train_batch_size = micro-batch x gradient
 * accumulation x data-parallel size), bf16, the ZeRO stage with the
 * buckets the memory model assumed (DeepSpeed's defaults, written out so
 * a changed default cannot change the plan's memory), fp32 gradient
 * accumulation with ZeRO 1 (BF16_Optimizer), gradient reduction
 * overlapped or not as planned, activation checkpointing -- which the
 * pipeline engine applies only through pipeline.activation_checkpoint_
 * interval -- and the pipeline's partitioned boundary.  The pipeline's
 * stage count and partition are arguments of PipelineModule, which reads
 * no config key for them (pipeline.stages records the count), so they go
 * to the Python lines too, with the tensor-parallel size (Megatron-
 * DeepSpeed's model code splits the layers; the topology places the
 * ranks).
 *
 * Refused, with the reason: stages of different sizes and a stage count
 * that does not divide the world (PipelineModule's grid has one shape),
 * ZeRO 2 or 3 with pipelining (the engine asserts it), interleaved
 * schedules (the engine runs plain 1F1B), free-mode plans with tensor
 * parallelism (the layouts are the ILP's, not Megatron's), and plans with
 * context or expert parallelism or FP8 (set up by the model code, not by
 * this config: export those for Megatron-LM).
 */
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "core/text.h"
#include "merge/merge_int.h"

#define REFUSE(...)                                                            \
  strata_error(STRATA_EUNSUPPORTED, "deepspeed export: " __VA_ARGS__)

/* DeepSpeed's bucket defaults (runtime/zero/config.py), which the memory
 * model counts (model/eval.c): elements, not bytes. */
#define DS_REDUCE_BUCKET 500000000.0
#define DS_PREFETCH_BUCKET 50000000.0

static int check_shape(const strata_plan_t *p) {
  int d0 = st__stage_devices(&p->stages[0]);
  for (int s = 1; s < p->n_stages; s++)
    if (st__stage_devices(&p->stages[s]) != d0)
      return REFUSE("stage %d runs on %d devices and stage 0 on %d: "
                    "DeepSpeed's pipeline engine gives every stage the same "
                    "devices (one grid of pipe x data x model); use 'strata "
                    "export torch' or re-plan in Megatron mode",
                    s, st__stage_devices(&p->stages[s]), d0);
  if (p->pp < 1 || p->devices % p->pp != 0)
    return REFUSE("%d pipeline stages do not divide the world of %d GPUs "
                  "(PipelineModule: num_stages must divide the world size)",
                  p->pp, p->devices);
  if ((long long)p->tp * p->pp > p->devices ||
      p->devices != (long long)p->tp * p->pp * p->dp)
    return REFUSE("world size %d is not tp %d x pp %d x dp %d", p->devices,
                  p->tp, p->pp, p->dp);
  if (!p->megatron && p->tp > 1)
    return REFUSE("a free-mode plan lays out each operator over its %d "
                  "devices as the ILP chose, and DeepSpeed's tensor "
                  "parallelism is Megatron-DeepSpeed's fixed layout; use "
                  "'strata export torch' or re-plan in Megatron mode",
                  p->tp);
  return 0;
}

static int check(const strata_plan_t *p, int *gas) {
  int rc;
  if (!p || p->n_stages < 1 || !p->stages)
    return strata_error(STRATA_EINVAL,
                        "deepspeed export: a plan with no stage");
  /* stages balanced over node groups first: no setting of this config
   * gives them */
  if (p->n_groups > 1 && p->pp > 1) {
    for (int s = 1; s < p->n_stages; s++)
      if (p->stages[s].group != p->stages[0].group)
        return REFUSE(
            "the plan puts stages on node groups of different GPUs (%s, "
            "%s) with layer counts balanced to their speed; DeepSpeed's "
            "PipelineModule partitions by partition_method 'uniform', "
            "'parameters' or 'type:REGEX', none of which gives each stage "
            "a count of its own: export it for Megatron-LM "
            "(--pipeline-model-parallel-layout)",
            p->stages[0].gpu_model, p->stages[s].gpu_model);
  }
  /* the framework's rules (rules/rules.c): what this config sets up (no
   * cp, ep, interleaving, FP8, MTP; ZeRO 0: DeepSpeed's bf16 without ZeRO
   * keeps no fp32 master weights, engine.py's _do_optimizer_sanity_check),
   * the batch, ZeRO with pipelining */
  if ((rc = st__rules_refuse(p, STRATA_RULES_DEEPSPEED, "deepspeed")))
    return rc;
  if (p->micro_batch < 1 || p->dp < 1 || p->tp < 1)
    return REFUSE("micro-batch %d, tp %d, dp %d", p->micro_batch, p->tp, p->dp);
  if ((rc = check_shape(p))) return rc;
  if (p->zero_stage < 0 || p->zero_stage > 3)
    return REFUSE("ZeRO stage %d", p->zero_stage);
  *gas = p->global_batch / (p->micro_batch * p->dp);
  if (p->n_micro > 0 && *gas != p->n_micro)
    return REFUSE("the plan runs %d micro-batches per step, but global batch "
                  "%d / (micro-batch %d x dp %d) = %d",
                  p->n_micro, p->global_batch, p->micro_batch, p->dp, *gas);
  return 0;
}

/* ZeRO 1 accumulates the gradients in fp32: with bf16 that is DeepSpeed's
 * BF16_Optimizer (engine.py, _do_optimizer_sanity_check; without the key
 * the gradients accumulate in bf16 under the ZeRO optimizer), whose
 * buffers and exposed fp32 all-reduce the plan counted (model/eval.c)
 * and which Megatron-LM's main gradients match. */
static int add_zero(cJSON *root, const strata_plan_t *p) {
  cJSON *z = cJSON_AddObjectToObject(root, "zero_optimization");
  int bad = !z || st__json_add_num(z, "stage", p->zero_stage);
  if (!bad && p->zero_stage == 1) {
    cJSON *d = cJSON_AddObjectToObject(root, "data_types");
    bad = !d || st__json_add_str(d, "grad_accum_dtype", "fp32");
  }
  if (bad || p->zero_stage < 1) return bad ? -1 : 0;
  bad = st__json_add_bool(z, "overlap_comm", p->overlap_grad_reduce > 0) ||
        st__json_add_bool(z, "contiguous_gradients", 1) ||
        st__json_add_num(z, "reduce_bucket_size", DS_REDUCE_BUCKET);
  if (!bad && p->zero_stage <= 2)
    bad = st__json_add_num(z, "allgather_bucket_size", DS_REDUCE_BUCKET);
  if (!bad && p->zero_stage == 3)
    bad =
        st__json_add_num(z, "stage3_prefetch_bucket_size", DS_PREFETCH_BUCKET);
  return bad ? -1 : 0;
}

/* Activation checkpointing: the section configures deepspeed.checkpointing
 * (what Megatron-DeepSpeed's layers call); the pipeline engine wraps whole
 * layers only when pipeline.activation_checkpoint_interval > 0, which is
 * full recompute -- selective recompute stays inside the model's layers
 * (Megatron-DeepSpeed's --recompute-granularity selective).  The saved
 * layer inputs stay whole on every tensor-parallel rank, as the memory and
 * the time counted them: partitioned, each layer's recompute would first
 * all-gather its input (checkpointing.py, PARTITION_ACTIVATIONS), a cost
 * the plan did not weigh; it is also what Megatron-DeepSpeed sets unless
 * given --partition-activations (its configure call overrides the file). */
static int add_checkpointing(cJSON *root, const strata_plan_t *p) {
  if (p->recompute == STRATA_RECOMPUTE_NONE) return 0;
  cJSON *a = cJSON_AddObjectToObject(root, "activation_checkpointing");
  int bad = !a || st__json_add_bool(a, "partition_activations", 0) ||
            st__json_add_bool(a, "contiguous_memory_optimization", 0) ||
            st__json_add_bool(a, "cpu_checkpointing", 0);
  return bad ? -1 : 0;
}

/* The pipeline section, with pipelining: the stage count and, where the
 * plan was made for one, the partition method (keys DeepSpeed's config.py
 * defines, defaults "auto" and "best", and does not read: PipelineModule
 * takes both as arguments, so they record what the topology lines give);
 * whether the boundary and its gradient go split over the tensor-parallel
 * ranks, as the plan costed them (scatter_gather; the engine's
 * pipe_partitioned and grad_partitioned, on by default); whole layers
 * checkpointed under full recompute. */
static int add_pipeline(cJSON *root, const strata_plan_t *p) {
  if (p->pp <= 1) return 0;
  cJSON *pl = cJSON_AddObjectToObject(root, "pipeline");
  int sg = p->scatter_gather > 0;
  int bad =
      !pl || st__json_add_num(pl, "stages", p->pp) ||
      (p->ds_partition > 0 &&
       st__json_add_str(pl, "partition",
                        strata_ds_partition_method_name(p->ds_partition))) ||
      st__json_add_bool(pl, "pipe_partitioned", sg) ||
      st__json_add_bool(pl, "grad_partitioned", sg);
  if (!bad && p->recompute == STRATA_RECOMPUTE_FULL)
    bad = st__json_add_num(pl, "activation_checkpoint_interval", 1);
  return bad ? -1 : 0;
}

int strata_export_deepspeed(const strata_plan_t *p, char **text) {
  int gas = 0, rc;
  cJSON *root;
  if (!text) return strata_error(STRATA_EINVAL, "deepspeed export: no output");
  *text = NULL;
  if ((rc = check(p, &gas))) return rc;
  root = cJSON_CreateObject();
  int bad = !root ||
            st__json_add_num(root, "train_batch_size",
                             (double)p->micro_batch * gas * p->dp) ||
            st__json_add_num(root, "train_micro_batch_size_per_gpu",
                             p->micro_batch) ||
            st__json_add_num(root, "gradient_accumulation_steps", gas);
  cJSON *bf = bad ? NULL : cJSON_AddObjectToObject(root, "bf16");
  bad = bad || !bf || st__json_add_bool(bf, "enabled", 1) ||
        add_zero(root, p) || add_checkpointing(root, p) ||
        add_pipeline(root, p);
  *text = bad ? NULL : st__json_print(root);
  cJSON_Delete(root);
  if (!*text) return strata_error(STRATA_ENOMEM, "out of memory");
  return 0;
}

int st__ds_check(const strata_plan_t *p) {
  int gas;
  return check(p, &gas);
}

/* ---- the Python lines ---- */

static int even_split(const strata_plan_t *p) {
  int n = p->stages[0].layer_end - p->stages[0].layer_begin;
  for (int s = 1; s < p->n_stages; s++)
    if (p->stages[s].layer_end - p->stages[s].layer_begin != n) return 0;
  return 1;
}

static void topo_head(strata_buf_t *b, const strata_plan_t *p) {
  strata_buf_puts(b, "# DeepSpeed pipeline topology of ");
  st__put_plain(b, p->model ? p->model : "?");
  strata_buf_puts(b, " on ");
  st__put_plain(b, p->cluster ? p->cluster : "?");
  strata_buf_printf(
      b,
      ": tp %d, pp %d, dp %d (%d "
      "GPUs).\n"
      "# Written by `strata export deepspeed --topology`; it goes with the "
      "config of\n"
      "# `strata export deepspeed` (pass it as deepspeed.initialize(..., "
      "config=...)).\n"
      "#\n"
      "# Ranks: axes pipe, data, model with model fastest (rank = pipe*%d + "
      "data*%d + model),\n"
      "# the plan's layout; Megatron-DeepSpeed builds the same grid from "
      "--tensor-model-parallel-size %d\n"
      "# --pipeline-model-parallel-size %d.\n",
      p->tp, p->pp, p->dp, p->devices, p->dp * p->tp, p->tp, p->tp, p->pp);
  if (p->recompute == STRATA_RECOMPUTE_SELECTIVE)
    strata_buf_puts(b, "# Recompute: selective (the attention core), inside "
                       "the model's layers: pass\n"
                       "# --recompute-granularity selective to "
                       "Megatron-DeepSpeed; the engine checkpoints no whole "
                       "layer.\n");
  if (p->framework != STRATA_FRAMEWORK_DEEPSPEED)
    strata_buf_puts(b, "# The plan's memory was costed for Megatron-LM "
                       "(--framework megatron); DeepSpeed's bf16\n"
                       "# optimizer and buckets hold more: re-plan with "
                       "--framework deepspeed to cost them.\n");
}

int strata_export_deepspeed_topology(const strata_plan_t *p, char **text) {
  int gas = 0, rc;
  strata_buf_t b;
  if (!text) return strata_error(STRATA_EINVAL, "deepspeed export: no output");
  *text = NULL;
  if ((rc = check(p, &gas))) return rc;
  strata_buf_init(&b);
  topo_head(&b, p);
  strata_buf_printf(
      &b,
      "from deepspeed.pipe import PipelineModule\n"
      "from deepspeed.runtime.pipe.topology import "
      "PipeModelDataParallelTopology\n"
      "\n"
      "TP, PP, DP = %d, %d, %d\n"
      "MICRO_BATCHES = %d  # gradient_accumulation_steps of the config\n"
      "LAYERS_PER_STAGE = [",
      p->tp, p->pp, p->dp, gas);
  for (int s = 0; s < p->n_stages; s++)
    strata_buf_printf(&b, "%s%d", s ? ", " : "",
                      p->stages[s].layer_end - p->stages[s].layer_begin);
  strata_buf_printf(
      &b,
      "]  # transformer layers; the first and last stages also hold the "
      "embedding and the head\n"
      "\n"
      "topology = PipeModelDataParallelTopology(num_pp=PP, num_mp=TP, "
      "num_dp=DP)\n"
      "\n"
      "\n"
      "def pipeline_module(layers, loss_fn):\n"
      "    \"\"\"The model's LayerSpecs as one PipelineModule over the "
      "plan's grid.\"\"\"\n"
      "    # %s\n"
      "    return PipelineModule(layers=layers, loss_fn=loss_fn, "
      "topology=topology,\n"
      "                          partition_method=\"%s\",\n"
      "                          activation_checkpoint_interval=%d)\n",
      p->ds_partition > 0
          ? "the split this partition_method gives over Megatron-DeepSpeed's "
            "GPTModelPipe specs, as the plan costed it (bigscience's fork "
            "takes it as --pp-partition-method, deepspeedai's passes "
            "type:transformer)"
      : even_split(p)
          ? "the plan splits the transformer layers evenly, as 'type:' "
            "balances the count of the layers whose class matches it "
            "(Megatron-DeepSpeed's ParallelTransformerLayerPipe)"
      : p->framework == STRATA_FRAMEWORK_DEEPSPEED
          ? "uneven split, as given to the plan: 'type:transformer' may give "
            "another; re-plan with --ds-partition-method for the split a "
            "method gives"
          : "uneven split, which 'type:transformer' does not keep (it "
            "balances the count of layers); re-plan with --framework "
            "deepspeed for the split it gives",
      strata_ds_partition_method_name(p->ds_partition),
      p->recompute == STRATA_RECOMPUTE_FULL ? 1 : 0);
  return strata_buf_finish(&b, text);
}
