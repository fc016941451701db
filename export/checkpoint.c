/*
 * checkpoint.c - whether a checkpoint written under one plan loads under
 * another, per framework checkpoint format, which conversion it needs
 * where it does not (the framework's own tool and command), and what a
 * reshard reads and how long it takes on the new plan's devices
 * (docs/cost-model.md, "Re-plans that keep the checkpoint").
 *
 * The rules are read from each framework's source at the commits the
 * real-client checks pin (tests/realclients/README.md):
 *
 *  - Megatron-LM's distributed checkpoint (--ckpt-format torch_dist, the
 *    default: megatron/training/config/training_config.py) keeps every
 *    model tensor with its global offsets and reshards it on load.  The
 *    distributed optimizer's state is saved 'dp_reshardable' unless
 *    --dist-ckpt-optim-fully-reshardable is given
 *    (megatron/training/checkpointing.py), keyed by the model-parallel
 *    group (megatron/core/optimizer/distrib_optimizer.py, dp_group_idx),
 *    and a (TP, PP) change is refused for it ("not supported for
 *    DistributedOptimizer with sharding type ...").  Megatron-FSDP saves
 *    fsdp_dtensor, one of checkpoint_fully_reshardable_formats.
 *  - Megatron-LM's legacy format (--ckpt-format torch) keeps one file per
 *    tensor- and pipeline-parallel rank; a change of those (or of the
 *    expert split) needs tools/checkpoint/convert.py, whose saver runs
 *    with --no-save-optim (tools/checkpoint/saver_base.py): the optimizer
 *    restarts.  Its distributed optimizer state is gathered to data-
 *    parallel rank 0 (get_parameter_state_dp_zero), so dp may change.
 *  - DeepSpeed's ZeRO checkpoint refuses another data-parallel size with
 *    its optimizer state ("Automatic adjustment of ZeRO's optimizer state
 *    partitioning with a new world size is not currently supported",
 *    deepspeed/runtime/engine.py, _load_zero_checkpoint) and keeps one
 *    model file per model-parallel rank; deepspeed/checkpoint/
 *    ds_to_universal.py converts it to a universal checkpoint, which loads
 *    under any degrees with "checkpoint": {"load_universal": true}.
 *  - torchtitan saves with torch.distributed.checkpoint, which reshards
 *    model and optimizer by their names under any degrees; its data
 *    loader's state refuses another data-parallel degree ("cannot resume
 *    after changing the effective data-parallel degree",
 *    torchtitan/components/data/loader.py), which
 *    --checkpoint.exclude_from_loading dataloader leaves out.
 */
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "core/text.h"
#include "merge/merge_int.h"

/* The architecture fields a checkpoint's tensors have the shapes of. */
#define SAME(f) (a->f == b->f)
static int same_model(const strata_plan_t *a, const strata_plan_t *b) {
  return !strcmp(a->family, b->family) && SAME(layers) && SAME(hidden) &&
         SAME(heads) && SAME(kv_heads) && SAME(ffn) && SAME(vocab) &&
         SAME(untie_embeddings) && SAME(experts) && SAME(moe_ffn) &&
         SAME(shared_ffn) && SAME(moe_layers) && SAME(first_dense) &&
         SAME(q_lora) && SAME(kv_lora) && SAME(qk_nope) && SAME(qk_rope) &&
         SAME(v_head) && SAME(mtp_layers) && SAME(head_dim) && SAME(qkv_bias) &&
         SAME(out_bias) && SAME(mlp_bias) && SAME(qk_norm);
}
#undef SAME

/* The bytes of one stage's weights and optimizer state, each counted once:
 * the peak device's shares times the devices that hold distinct shares
 * (dense tensors split by tp, the experts' by ep x etp; the optimizer's
 * by the data-parallel group too from ZeRO 1, the weights from ZeRO 3). */
static double stage_bytes(const strata_plan_t *p,
                          const strata_plan_stage_t *s) {
  const strata_mem_breakdown_t *m = &s->result->mem;
  double tp = p->tp, dcp = (double)p->dp * st__plan_cp(p);
  double eshard = (double)st__plan_ep(p) * st__plan_etp(p);
  double edp = tp * dcp / eshard;
  double w =
      (m->weights - m->expert_weights) * tp * (p->zero_stage >= 3 ? dcp : 1) +
      m->expert_weights * eshard * (p->zero_stage >= 3 ? edp : 1);
  double o = (m->optimizer - m->expert_optimizer) * tp *
                 (p->zero_stage >= 1 ? dcp : 1) +
             m->expert_optimizer * eshard * (p->zero_stage >= 1 ? edp : 1);
  return w + o;
}

double strata_checkpoint_bytes(const strata_plan_t *p) {
  double b = 0;
  for (int i = 0; p && i < p->n_stages; i++)
    if (p->stages[i].result) b += stage_bytes(p, &p->stages[i]);
  return b;
}

/* What each device can read at: the slowest axis of its stage's mesh. */
static double read_bandwidth(const strata_plan_t *p) {
  double total = 0;
  for (int i = 0; i < p->n_stages; i++) {
    const strata_plan_stage_t *s = &p->stages[i];
    const strata_mesh_t *m = &s->mesh;
    double bw = m->axis[0].bandwidth;
    for (int d = 1; d < m->ndim && d < STRATA_MESH_MAX_DIMS; d++)
      if (m->axis[d].bandwidth > 0 && m->axis[d].bandwidth < bw)
        bw = m->axis[d].bandwidth;
    total += bw * st__stage_devices(s) * p->dp / (p->vpp > 1 ? p->vpp : 1);
  }
  return total;
}

/* The expert degrees, 1 for a dense model (whose etp reads as tp). */
static int ep_of(const strata_plan_t *p) {
  return p->experts > 0 ? st__plan_ep(p) : 1;
}
static int etp_of(const strata_plan_t *p) {
  return p->experts > 0 ? st__plan_etp(p) : 1;
}

/* The sharding of the state: every degree and every stage's layers. */
static int same_layout(const strata_plan_t *a, const strata_plan_t *b) {
  if (a->tp != b->tp || a->pp != b->pp || a->dp != b->dp ||
      st__plan_cp(a) != st__plan_cp(b) || ep_of(a) != ep_of(b) ||
      etp_of(a) != etp_of(b) || a->zero_stage != b->zero_stage ||
      a->n_stages != b->n_stages)
    return 0;
  for (int i = 0; i < a->n_stages; i++)
    if (a->stages[i].layer_begin != b->stages[i].layer_begin ||
        a->stages[i].layer_end != b->stages[i].layer_end)
      return 0;
  return 1;
}

/* "tp 2 -> 4, pp 2 -> 1": the degrees of `which` that changed. */
enum { D_TP = 1, D_PP = 2, D_VPP = 4, D_EP = 8, D_ETP = 16, D_DP = 32 };
static void changed(const strata_plan_t *a, const strata_plan_t *b,
                    unsigned which, char *out, size_t n) {
  const struct {
    unsigned bit;
    const char *name;
    int x, y;
  } d[] = {{D_TP, "tp", a->tp, b->tp},
           {D_PP, "pp", a->pp, b->pp},
           {D_VPP, "vpp", a->vpp > 1 ? a->vpp : 1, b->vpp > 1 ? b->vpp : 1},
           {D_EP, "ep", ep_of(a), ep_of(b)},
           {D_ETP, "etp", etp_of(a), etp_of(b)},
           {D_DP, "dp", a->dp, b->dp}};
  size_t k = 0;
  out[0] = 0;
  for (size_t i = 0; i < sizeof d / sizeof d[0] && k < n; i++) {
    if (!(which & d[i].bit) || d[i].x == d[i].y) continue;
    int w = snprintf(out + k, n - k, "%s%s %d -> %d", k ? ", " : "", d[i].name,
                     d[i].x, d[i].y);
    if (w > 0) k += (size_t)w;
  }
}

const char *strata_ckpt_format_name(strata_ckpt_format_t f) {
  static const char *const n[STRATA_CKPT_FORMATS] = {
      "megatron-dist", "megatron-legacy", "deepspeed-zero",
      "deepspeed-universal", "torch-dcp"};
  return f >= 0 && f < STRATA_CKPT_FORMATS ? n[f] : "?";
}

/* The format the new plan's framework writes by default. */
strata_ckpt_format_t strata_ckpt_default_format(const strata_plan_t *p) {
  if (p->framework == STRATA_FRAMEWORK_DEEPSPEED) return STRATA_CKPT_DS_ZERO;
  if (p->framework == STRATA_FRAMEWORK_TORCHTITAN) return STRATA_CKPT_DCP;
  /* Megatron-LM refuses the gather under the optimizer step with a
   * distributed checkpoint: its export asks for the legacy format */
  if (p->overlap_param_gather_step > 0) return STRATA_CKPT_MG_LEGACY;
  return STRATA_CKPT_MG_DIST;
}

#define SAY(field, ...) snprintf(v->field, sizeof v->field, __VA_ARGS__)

static void megatron_dist(const strata_plan_t *a, const strata_plan_t *b,
                          strata_ckpt_verdict_t *v) {
  int mp = a->tp != b->tp || a->pp != b->pp || ep_of(a) != ep_of(b) ||
           etp_of(a) != etp_of(b);
  if (a->zero_stage >= 2) {
    SAY(why, "Megatron-FSDP's fsdp_dtensor checkpoint reshards on load");
    return;
  }
  if (a->zero_stage == 1 && mp) {
    char d[96];
    changed(a, b, D_TP | D_PP | D_EP | D_ETP, d, sizeof d);
    v->loads_as_is = 0;
    SAY(why,
        "the distributed optimizer's state is saved 'dp_reshardable' by "
        "default, per model-parallel group, and megatron/training/"
        "checkpointing.py refuses a change of model parallelism for it (%s)",
        d);
    SAY(conversion,
        "resume once under the old plan and save with "
        "--dist-ckpt-optim-fully-reshardable, then load under the new one "
        "(or load with --no-load-optim: the optimizer restarts)");
    return;
  }
  SAY(why, "torch_dist reshards the model%s on load",
      a->zero_stage == 1 ? " and, the degrees of model parallelism kept, "
                           "the distributed optimizer"
                         : " and its optimizer state");
}

static void megatron_legacy(const strata_plan_t *a, const strata_plan_t *b,
                            strata_ckpt_verdict_t *v) {
  int ep = ep_of(b);
  if (a->tp == b->tp && a->pp == b->pp && a->vpp == b->vpp && ep_of(a) == ep &&
      etp_of(a) == etp_of(b)) {
    SAY(why, "one file per tensor- and pipeline-parallel rank, the same "
             "ranks; the distributed optimizer's state is gathered to data-"
             "parallel rank 0, so dp may change");
    return;
  }
  char d[96];
  changed(a, b, D_TP | D_PP | D_VPP | D_EP | D_ETP, d, sizeof d);
  v->loads_as_is = 0;
  SAY(why, "its files are per tensor- and pipeline-parallel rank (%s)", d);
  char epf[48] = "";
  if (ep > 1)
    snprintf(epf, sizeof epf, " --target-expert-parallel-size %d", ep);
  SAY(conversion,
      "python tools/checkpoint/convert.py --model-type GPT --loader core "
      "--saver core --load-dir OLD --save-dir NEW "
      "--target-tensor-parallel-size %d --target-pipeline-parallel-size %d"
      "%s (the weights only: its saver runs with --no-save-optim)",
      b->tp, b->pp, epf);
}

static void deepspeed_zero(const strata_plan_t *a, const strata_plan_t *b,
                           strata_ckpt_verdict_t *v) {
  int mp = a->tp != b->tp || a->pp != b->pp || ep_of(a) != ep_of(b);
  int dp = a->dp * st__plan_cp(a) != b->dp * st__plan_cp(b);
  if (!mp && !(dp && (a->zero_stage >= 1 || b->zero_stage >= 1))) {
    SAY(why, "the same model-parallel ranks%s",
        dp ? "; without ZeRO the optimizer's state is not partitioned"
           : " and data-parallel size");
    return;
  }
  char d[96];
  changed(a, b, D_TP | D_PP | D_EP, d, sizeof d);
  v->loads_as_is = 0;
  if (mp)
    SAY(why, "one model file per model-parallel rank (%s)", d);
  else
    SAY(why,
        "ZeRO's optimizer state is partitioned over the data-parallel "
        "size (%d -> %d), which deepspeed/runtime/engine.py refuses to "
        "change",
        a->dp * st__plan_cp(a), b->dp * st__plan_cp(b));
  SAY(conversion,
      "python deepspeed/checkpoint/ds_to_universal.py --input_folder "
      "OLD/global_stepN --output_folder OLD/global_stepN_universal, then "
      "\"checkpoint\": {\"load_universal\": true}");
}

static void torch_dcp(const strata_plan_t *a, const strata_plan_t *b,
                      strata_ckpt_verdict_t *v) {
  if (a->dp == b->dp) {
    SAY(why, "torch.distributed.checkpoint reshards model and optimizer by "
             "name; the data loader's data-parallel degree is kept");
    return;
  }
  v->loads_as_is = 0;
  SAY(why,
      "the model and optimizer reshard, but the data loader's state "
      "refuses another data-parallel degree (%d -> %d; "
      "torchtitan/components/data/loader.py)",
      a->dp, b->dp);
  SAY(conversion, "--checkpoint.exclude_from_loading dataloader (the data "
                  "order restarts)");
}

int strata_checkpoint_compare(const strata_plan_t *a, const strata_plan_t *b,
                              strata_ckpt_verdict_t v[STRATA_CKPT_FORMATS]) {
  static void (*const rule[STRATA_CKPT_FORMATS])(
      const strata_plan_t *, const strata_plan_t *, strata_ckpt_verdict_t *) = {
      megatron_dist, megatron_legacy, deepspeed_zero, NULL, torch_dcp};
  if (!a || !b || !v || a->n_stages < 1 || b->n_stages < 1)
    return strata_error(STRATA_EINVAL, "checkpoint: a plan with no stage");
  int model = same_model(a, b), layout = same_layout(a, b);
  /* the checkpoint read is the old plan's; the new plan's devices read it */
  double bytes = strata_checkpoint_bytes(a), bw = read_bandwidth(b);
  for (int f = 0; f < STRATA_CKPT_FORMATS; f++) {
    strata_ckpt_verdict_t *x = &v[f];
    memset(x, 0, sizeof *x);
    x->format = (strata_ckpt_format_t)f;
    x->loads_as_is = 1;
    x->checkpoint_bytes = bytes;
    x->bytes = layout ? 0 : bytes;
    x->seconds = x->bytes > 0 && bw > 0 ? x->bytes / bw : 0;
    if (!model) {
      x->loads_as_is = 0;
      x->bytes = x->seconds = 0;
      snprintf(x->why, sizeof x->why, "the plans are of different models");
      snprintf(x->conversion, sizeof x->conversion, "none: train anew");
    } else if (rule[f]) {
      rule[f](a, b, x);
    } else {
      snprintf(x->why, sizeof x->why,
               "a universal checkpoint loads under any degrees "
               "(deepspeed/checkpoint/universal_checkpoint.py)");
    }
  }
  return 0;
}

/* The text `strata diff` ends with: the new plan's own format first. */
int st__checkpoint_text(const strata_plan_t *a, const strata_plan_t *b,
                        strata_buf_t *o) {
  strata_ckpt_verdict_t v[STRATA_CKPT_FORMATS];
  if (strata_checkpoint_compare(a, b, v)) return -1;
  strata_ckpt_format_t own = strata_ckpt_default_format(b);
  strata_buf_puts(o, "checkpoint:\n");
  for (int k = 0; k < STRATA_CKPT_FORMATS; k++) {
    int f = k == 0 ? (int)own : k <= (int)own ? k - 1 : k;
    const strata_ckpt_verdict_t *x = &v[f];
    char gb[32], sec[32];
    st__fmt_num(x->bytes / 1e9, 1, gb, sizeof gb);
    snprintf(sec, sizeof sec, "%.2g", x->seconds);
    strata_buf_printf(
        o, "  %s%s: %s (%s)\n", strata_ckpt_format_name(x->format),
        f == (int)own ? " (the plan's)" : "",
        x->loads_as_is ? "loads as is" : "does not load as is", x->why);
    if (!x->loads_as_is)
      strata_buf_printf(o, "    convert: %s\n", x->conversion);
    if (f == (int)own && x->bytes > 0)
      strata_buf_printf(o,
                        "    reshard: %s GB read, at least %s s at the "
                        "devices' links (longer where storage is slower)\n",
                        gb, sec);
  }
  return 0;
}

static int verdict_json(cJSON *o, const strata_ckpt_verdict_t *x) {
  return st__json_add_str(o, "format", strata_ckpt_format_name(x->format)) |
         st__json_add_bool(o, "loads_as_is", x->loads_as_is) |
         st__json_add_str(o, "why", x->why) |
         st__json_add_str(o, "conversion", x->conversion) |
         st__json_add_num(o, "bytes", x->bytes) |
         st__json_add_num(o, "checkpoint_bytes", x->checkpoint_bytes) |
         st__json_add_num(o, "seconds", x->seconds);
}

/* "checkpoint": the new plan's own format; "checkpoints": every format. */
int st__checkpoint_json(const strata_plan_t *a, const strata_plan_t *b,
                        cJSON *root) {
  strata_ckpt_verdict_t v[STRATA_CKPT_FORMATS];
  if (strata_checkpoint_compare(a, b, v)) return -1;
  cJSON *own = cJSON_AddObjectToObject(root, "checkpoint");
  cJSON *all = cJSON_AddArrayToObject(root, "checkpoints");
  if (!own || !all) return -1;
  int bad = verdict_json(own, &v[strata_ckpt_default_format(b)]);
  for (int f = 0; !bad && f < STRATA_CKPT_FORMATS; f++) {
    cJSON *x = st__json_push_object(all);
    bad = !x || verdict_json(x, &v[f]);
  }
  return bad ? -1 : 0;
}
