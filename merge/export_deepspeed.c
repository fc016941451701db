/*
 * export_deepspeed.c - the plan as a DeepSpeed config (JSON), with keys
 * from reference/deepspeed_keys.txt only.
 *
 * DeepSpeed asserts train_batch_size = micro-batch per GPU x gradient
 * accumulation steps x data-parallel size; the plan's global batch must
 * satisfy it exactly, and it is checked before writing.  DeepSpeed's
 * pipeline engine supports ZeRO stage 0 and 1 only, so a pipelined plan
 * with stage 2 or 3 is refused.  Tensor parallelism comes from the model
 * code (Megatron-DeepSpeed), not from this file; the "pipeline" section
 * records the stage count and DeepSpeed's partition method ("uniform" when
 * every stage holds as many layers, else "parameters", the closest it has).
 */
#include <string.h>

#include "core/json.h"
#include "merge/merge_int.h"

#define REFUSE(...)                                                            \
  strata_error(STRATA_EUNSUPPORTED, "deepspeed export: " __VA_ARGS__)

static int check(const strata_plan_t *p, int *gas) {
  if (p->micro_batch < 1 || p->dp < 1)
    return REFUSE("micro-batch %d, dp %d", p->micro_batch, p->dp);
  if (p->global_batch % (p->micro_batch * p->dp) != 0)
    return REFUSE("global batch %d is not micro-batch %d x gradient "
                  "accumulation x dp %d for any whole accumulation count",
                  p->global_batch, p->micro_batch, p->dp);
  *gas = p->global_batch / (p->micro_batch * p->dp);
  if (p->n_micro > 0 && *gas != p->n_micro)
    return REFUSE("the plan runs %d micro-batches per step, but global batch "
                  "%d / (micro-batch %d x dp %d) = %d",
                  p->n_micro, p->global_batch, p->micro_batch, p->dp, *gas);
  if (p->pp > 1 && p->zero_stage >= 2)
    return REFUSE("DeepSpeed's pipeline engine supports ZeRO stage 0 or 1, "
                  "not %d, with %d pipeline stages; re-plan with --zero 1 or "
                  "without pipelining",
                  p->zero_stage, p->pp);
  if (p->zero_stage < 0 || p->zero_stage > 3)
    return REFUSE("ZeRO stage %d", p->zero_stage);
  if (p->vpp > 1)
    return REFUSE("the plan interleaves %d virtual stages per rank, a "
                  "schedule DeepSpeed's pipeline engine does not run; re-plan "
                  "with --vpp 1",
                  p->vpp);
  return 0;
}

static int even_split(const strata_plan_t *p) {
  int n = p->stages[0].layer_end - p->stages[0].layer_begin;
  for (int s = 1; s < p->n_stages; s++)
    if (p->stages[s].layer_end - p->stages[s].layer_begin != n) return 0;
  return 1;
}

static int add_sections(cJSON *root, const strata_plan_t *p) {
  cJSON *bf = cJSON_AddObjectToObject(root, "bf16");
  cJSON *z = cJSON_AddObjectToObject(root, "zero_optimization");
  int bad = !bf || !z || st__json_add_bool(bf, "enabled", 1) ||
            st__json_add_num(z, "stage", p->zero_stage);
  if (!bad && p->zero_stage >= 1)
    bad = st__json_add_bool(z, "overlap_comm", 1) ||
          st__json_add_bool(z, "contiguous_gradients", 1);
  if (!bad && p->recompute != STRATA_RECOMPUTE_NONE) {
    cJSON *a = cJSON_AddObjectToObject(root, "activation_checkpointing");
    bad = !a || st__json_add_bool(a, "partition_activations", p->tp > 1) ||
          st__json_add_bool(a, "contiguous_memory_optimization", 0) ||
          st__json_add_bool(a, "cpu_checkpointing", 0);
  }
  if (!bad && p->pp > 1) {
    cJSON *pl = cJSON_AddObjectToObject(root, "pipeline");
    bad = !pl || st__json_add_num(pl, "stages", p->pp) ||
          st__json_add_str(pl, "partition",
                           even_split(p) ? "uniform" : "parameters");
  }
  return bad ? -1 : 0;
}

int strata_export_deepspeed(const strata_plan_t *p, char **text) {
  int gas = 0, rc;
  cJSON *root;
  if (!p || !text || p->n_stages < 1)
    return strata_error(STRATA_EINVAL,
                        "deepspeed export: a plan with no stage");
  if ((rc = check(p, &gas))) return rc;
  root = cJSON_CreateObject();
  int bad = !root ||
            st__json_add_num(root, "train_batch_size",
                             (double)p->micro_batch * gas * p->dp) ||
            st__json_add_num(root, "train_micro_batch_size_per_gpu",
                             p->micro_batch) ||
            st__json_add_num(root, "gradient_accumulation_steps", gas) ||
            add_sections(root, p);
  *text = bad ? NULL : st__json_print(root);
  cJSON_Delete(root);
  if (!*text) return strata_error(STRATA_ENOMEM, "out of memory");
  return 0;
}
