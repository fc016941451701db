/*
 * export_torchtitan.c - a Megatron-mode plan as a torchtitan job config
 * (TOML, the --job.config_file of torchtitan's train.py), with keys from
 * tests/data/export/torchtitan_keys.txt only: read from torchtitan's
 * torchtitan/config/job_config.py at its last commit with TOML job
 * configs (238fa995, February 2026): `strata export torchtitan --toml`.
 * Later torchtitan configures runs in Python, with other fields:
 * export_titan.c.
 *
 * torchtitan trains its own model definitions; of Strata's families LLaMA
 * (llama3) and Qwen 3 (qwen3, dense, without a pipeline split at that
 * commit) have one, so a plan is matched to the flavor of its sizes and
 * refused otherwise.  Its tensor parallelism is Megatron's
 * layout with sequence parallelism, so only Megatron-mode plans go here
 * (a free-mode plan's layouts go to `strata export torch`).
 *
 * Data parallelism maps to FSDP over dp ranks: ZeRO-3 reshards the
 * parameters after each forward ("always"); ZeRO 0 to 2 keep them
 * ("never"), which moves the bytes of Megatron's distributed optimizer
 * (reduce-scatter of gradients, all-gather of parameters) and holds no
 * more memory than it -- torchtitan's DDP runs on a 1-D mesh only.  With
 * a pipeline every stage is torchtitan's default ("default": not
 * resharded after forward, parallelize.py), which a plan for torchtitan
 * (--framework torchtitan) costed: PyTorch's pipeline stage keeps the
 * gradients unsharded to the last backward (docs/cost-model.md,
 * "torchtitan").  A Megatron-LM plan of ZeRO 2 or 3 with a pipeline was
 * costed as Megatron-FSDP, which shards what torchtitan keeps whole: it
 * is refused, to be planned for torchtitan.
 */
#include <stdio.h>
#include <string.h>

#include "core/text.h"
#include "merge/merge_int.h"

#define REFUSE(...)                                                            \
  strata_error(STRATA_EUNSUPPORTED, "torchtitan export: " __VA_ARGS__)

/* torchtitan's flavors at 238fa995 (torchtitan/models/llama3/__init__.py:
 * layers, hidden, heads, kv heads, and the FFN size its multiplier and
 * multiple_of give; torchtitan/models/qwen3/__init__.py: the dense ones,
 * with their head size of 128 and tied heads up to 4B). */
static const struct {
  const char *model, *flavor;
  int layers, hidden, heads, kv, ffn, head_dim, tie;
} flavors[] = {
    {"llama3", "8B", 32, 4096, 32, 8, 14336, 0, 0},
    {"llama3", "70B", 80, 8192, 64, 8, 28672, 0, 0},
    {"llama3", "405B", 126, 16384, 128, 8, 53248, 0, 0},
    {"qwen3", "0.6B", 28, 1024, 16, 8, 3072, 128, 1},
    {"qwen3", "1.7B", 28, 2048, 16, 8, 6144, 128, 1},
    {"qwen3", "4B", 36, 2560, 32, 8, 9728, 128, 1},
    {"qwen3", "8B", 36, 4096, 32, 8, 12288, 128, 0},
    {"qwen3", "14B", 40, 5120, 40, 8, 17408, 128, 0},
    {"qwen3", "32B", 64, 5120, 64, 8, 25600, 128, 0},
};

/* torchtitan's model of a Strata family: LLaMA's is llama3, Qwen 3's
 * qwen3; NULL: none. */
static const char *titan_model(const strata_plan_t *p) {
  if (!strcmp(p->family, "llama")) return "llama3";
  if (!strcmp(p->family, "qwen3")) return "qwen3";
  return NULL;
}

static int head_dim_of(const strata_plan_t *p) {
  return p->head_dim > 0 ? p->head_dim : p->heads ? p->hidden / p->heads : 0;
}

static const char *flavor_of(const strata_plan_t *p, const char *model) {
  int kv = p->kv_heads ? p->kv_heads : p->heads;
  for (size_t i = 0; i < sizeof flavors / sizeof flavors[0]; i++) {
    int hd = flavors[i].head_dim ? flavors[i].head_dim
                                 : flavors[i].hidden / flavors[i].heads;
    if (!strcmp(flavors[i].model, model) && flavors[i].layers == p->layers &&
        flavors[i].hidden == p->hidden && flavors[i].heads == p->heads &&
        flavors[i].kv == kv && flavors[i].ffn == p->ffn &&
        hd == head_dim_of(p) &&
        (!strcmp(model, "llama3") || flavors[i].tie == !p->untie_embeddings))
      return flavors[i].flavor;
  }
  return NULL;
}

/* The RoPE a flavor fixes in code (its TransformerModelArgs), which the
 * job config cannot change: the base of llama3's flavors (500000) and
 * qwen3's (1000000), every dim of each head; llama3's scale as Llama 3.1
 * (llama3/model/args.py, RoPEScalingArgs: factor 8, low 1, high 4,
 * original 8192), qwen3's do not. */
static int rope_check(const strata_plan_t *p, const char *model) {
  double theta = strcmp(model, "qwen3") ? 500000 : 1000000;
  const strata_rope_scaling_t *r = &p->rope_scaling;
  int llama = !strcmp(model, "llama3");
  int l31 = r->type == STRATA_ROPE_SCALING_LLAMA3 && r->factor == 8 &&
            r->low == 1 && r->high == 4 &&
            (r->original == 8192 || r->original == 0);
  if (llama ? !l31 : r->type != STRATA_ROPE_SCALING_NONE)
    return REFUSE(
        "the plan's model has %s RoPE scaling and the %s flavors "
        "of torchtitan's job configs %s, in code; export the "
        "Python configuration (no --toml), which sets the plan's",
        r->type == STRATA_ROPE_SCALING_NONE ? "no"
                                            : strata_rope_scaling_name(r->type),
        model,
        llama ? "scale as Llama 3.1 (factor 8, 1, 4, 8192)" : "have none");
  if (p->rope_theta > 0 && p->rope_theta != theta)
    return REFUSE("the plan's model has RoPE base %g and torchtitan's %s "
                  "flavors %g; add a flavor with it, or export it for "
                  "Megatron-LM",
                  p->rope_theta, model, theta);
  if (p->rotary_percent > 0 || p->nope_every > 0)
    return REFUSE("the plan's model has %s, which torchtitan's %s does not",
                  p->rotary_percent > 0 ? "RoPE on part of each head"
                                        : "layers without RoPE",
                  model);
  return 0;
}

/* torchtitan's model for the plan's family, and what that dense model
 * lacks of the plan's. */
static int model_check(const strata_plan_t *p, const char **model) {
  char fam[192], name[96];
  if (!(*model = titan_model(p)) && p->family[0])
    return REFUSE("torchtitan has no %s model (its llama3 and qwen3 are the "
                  "Strata families it trains)",
                  st__plain(p->family, name, sizeof name));
  if (!*model)
    return REFUSE("torchtitan has no model for %s",
                  st__family_said(p, fam, sizeof fam));
  if (p->experts > 0 || p->kv_lora > 0 || p->mtp_layers > 0)
    return REFUSE("the plan's model%s%s%s has %s, and torchtitan's llama3 and "
                  "qwen3 are dense models without them; export it for "
                  "Megatron-LM",
                  p->model ? " (" : "",
                  p->model ? st__plain(p->model, name, sizeof name) : "",
                  p->model ? ")" : "",
                  p->experts > 0   ? "experts (a mixture of experts)"
                  : p->kv_lora > 0 ? "latent attention"
                                   : "multi-token prediction modules");
  if (p->qkv_bias > 0 || p->out_bias > 0 || p->mlp_bias > 0 || p->window > 0 ||
      p->attn_sinks || p->glu_limit > 0 ||
      (p->attn_chunk > 0 && p->seq_len > p->attn_chunk) ||
      p->qk_norm != !strcmp(*model, "qwen3"))
    return REFUSE("the plan's model has %s, which torchtitan's %s does not",
                  p->qkv_bias > 0 || p->out_bias > 0 ? "attention biases"
                  : p->mlp_bias > 0                  ? "MLP biases"
                  : p->window > 0                    ? "sliding windows"
                  : p->attn_sinks                    ? "attention sinks"
                  : p->glu_limit > 0                 ? "gpt-oss's clamped GLU"
                  : p->attn_chunk > 0                ? "chunked attention"
                  : p->qk_norm                       ? "q/k norms"
                                                     : "no q/k norms",
                  *model);
  return 0;
}

int st__titan_check(const strata_plan_t *p, const char **flavor,
                    const char **model) {
  int first, last, rc;
  if (!p || p->n_stages < 1 || !p->stages)
    return strata_error(STRATA_EINVAL, "torchtitan export: a plan with no "
                                       "stage");
  if (!p->megatron)
    return REFUSE("a free-mode plan lays out each operator as the ILP chose "
                  "and torchtitan's tensor parallelism is Megatron's layout; "
                  "use 'strata export torch'");
  if ((rc = model_check(p, model)) || (rc = rope_check(p, *model))) return rc;
  /* the flavors' RMSNorm: nn_modules.py's 1e-5, qwen3's _EPS 1e-6 */
  double eps = !strcmp(*model, "qwen3") ? 1e-6 : 1e-5;
  if (p->norm_eps > 0 && p->norm_eps != eps)
    return REFUSE("the plan's model normalises with epsilon %g and "
                  "torchtitan's %s with %g",
                  p->norm_eps, *model, eps);
  if (p->pp > 1 && p->zero_stage >= 2 &&
      p->framework != STRATA_FRAMEWORK_TORCHTITAN)
    return REFUSE("the plan's ZeRO %d with a pipeline was costed for %s, "
                  "which shards %s every micro-batch; torchtitan's FSDP2 "
                  "under a pipeline keeps each stage's parameters and fp32 "
                  "gradients whole through the step: re-plan with "
                  "--framework torchtitan",
                  p->zero_stage, strata_framework_name(p->framework),
                  p->zero_stage >= 3 ? "the parameters and gradients"
                                     : "the gradients");
  /* the rulebook's: qwen3 has no pipeline split; no FP8 of Transformer
   * Engine's recipe */
  if ((rc = st__rules_refuse(p, STRATA_RULES_TORCHTITAN, "torchtitan")))
    return rc;
  /* Megatron-LM's layout rules, not its schedules: torchtitan's were
   * asked above */
  strata_plan_t lay = *p;
  lay.pp_schedule = 0;
  if ((rc = st__mg_check(&lay, &first, &last))) {
    /* the same layout rules as Megatron-LM's, named for torchtitan */
    char why[512];
    const char *m = strata_last_error(), *c = strstr(m, "export: ");
    snprintf(why, sizeof why, "%s", c ? c + 8 : m);
    return strata_error(rc, "torchtitan export: %s", why);
  }
  /* first < 0: stages of their own layer counts (a mixed cluster's
   * groups), which module_fqns_per_model_part lists as they are */
  if (!(*flavor = flavor_of(p, *model)))
    return REFUSE("no %s flavor of torchtitan has %d layers, hidden %d, "
                  "%d heads, %d query groups, FFN %d, head size %d%s; add one "
                  "to torchtitan/models/%s/__init__.py",
                  *model, p->layers, p->hidden, p->heads, p->kv_heads, p->ffn,
                  head_dim_of(p),
                  strcmp(*model, "qwen3") ? ""
                  : p->untie_embeddings   ? ", an untied head"
                                          : ", a tied head",
                  *model);
  if (p->global_batch % p->dp)
    return REFUSE("global batch %d is not divisible by dp %d", p->global_batch,
                  p->dp);
  return 0;
}

/* module_fqns_per_model_part: torchtitan's names of each model chunk. */
static void model_parts(strata_buf_t *b, const strata_plan_t *p) {
  strata_buf_puts(b, "module_fqns_per_model_part = [\n");
  for (int s = 0; s < p->n_stages; s++) {
    const strata_plan_stage_t *st = &p->stages[s];
    const char *sep = ""; /* a part may hold no layer */
    strata_buf_puts(b, "    [");
    if (s == 0) strata_buf_puts(b, "\"tok_embeddings\""), sep = ", ";
    for (int l = st->layer_begin; l < st->layer_end; l++, sep = ", ")
      strata_buf_printf(b, "%s\"layers.%d\"", sep, l);
    if (s == p->n_stages - 1)
      strata_buf_printf(b, "%s\"norm\", \"output\"", sep);
    strata_buf_puts(b, "],\n");
  }
  strata_buf_puts(b, "]\n");
}

static void parallelism(strata_buf_t *b, const strata_plan_t *p) {
  strata_buf_printf(b,
                    "\n[parallelism]\n"
                    "data_parallel_replicate_degree = 1\n"
                    "data_parallel_shard_degree = %d\n",
                    p->dp);
  if (p->pp > 1) /* FSDP2 under PyTorch's pipelining, as costed */
    strata_buf_printf(b,
                      "fsdp_reshard_after_forward = \"default\"  # ZeRO %d "
                      "with pp: kept gathered from the first forward,\n"
                      "# the fp32 gradients unsharded to the last backward, "
                      "one all-gather and one\n"
                      "# reduce-scatter a step\n",
                      p->zero_stage);
  else
    strata_buf_printf(b, "fsdp_reshard_after_forward = \"%s\"  # ZeRO %d\n",
                      p->zero_stage >= 3 ? "always" : "never", p->zero_stage);
  strata_buf_printf(b,
                    "tensor_parallel_degree = %d\n"
                    "pipeline_parallel_degree = %d\n",
                    p->tp, p->pp);
  /* context parallelism: PyTorch's ring attention, the shards passed
   * around by all-to-all ("alltoall", the plan's ring) or all-gathered */
  if (p->cp > 1)
    strata_buf_printf(
        b,
        "context_parallel_degree = %d\n"
        "context_parallel_rotate_method = \"%s\"\n",
        p->cp, p->cp_comm == STRATA_CP_ALLGATHER ? "allgather" : "alltoall");
  if (p->pp > 1) {
    strata_buf_printf(b,
                      "pipeline_parallel_schedule = \"%s\"\n"
                      "pipeline_parallel_microbatch_size = %d\n",
                      st__titan_schedule(p), p->micro_batch);
    model_parts(b, p);
  }
  if (p->tp > 1 && p->sequence_parallel <= 0)
    strata_buf_puts(b, "# torchtitan's tensor parallelism is always sequence "
                       "parallel: less activation\n"
                       "# memory than this plan (without it) counted\n");
  if (p->tp_comm_overlap)
    strata_buf_puts(b, "enable_async_tensor_parallel = true\n");
}

static void checkpointing(strata_buf_t *b, const strata_plan_t *p) {
  strata_buf_puts(b, "\n[activation_checkpoint]\n");
  if (p->recompute == STRATA_RECOMPUTE_FULL)
    strata_buf_puts(b, "mode = \"full\"\n");
  else if (p->recompute == STRATA_RECOMPUTE_SELECTIVE)
    strata_buf_puts(b, "mode = \"selective\"\n"
                       "selective_ac_option = \"op\"  # per-op: keeps the "
                       "matmuls, recomputes the rest (the plan:\n"
                       "                              # Megatron's "
                       "attention-core recompute)\n");
  else
    strata_buf_puts(b, "mode = \"none\"\n");
}

/* "tp T, cp C, pp P (vpp V), dp D": every degree the job config sets,
 * cp and vpp where used. */
static void degrees(strata_buf_t *b, const strata_plan_t *p) {
  strata_buf_printf(b, "tp %d, ", p->tp);
  if (p->cp > 1) strata_buf_printf(b, "cp %d, ", p->cp);
  strata_buf_printf(b, "pp %d, ", p->pp);
  if (p->vpp > 1) strata_buf_printf(b, "vpp %d, ", p->vpp);
  strata_buf_printf(b, "dp %d", p->dp);
}

/* description = "strata plan: MODEL, tp T, (cp C, )pp P, dp D" as one TOML
 * string. */
static void toml_description(strata_buf_t *b, const strata_plan_t *p) {
  strata_buf_t d;
  strata_buf_init(&d);
  strata_buf_printf(&d, "strata plan: %s, ", p->model ? p->model : "?");
  degrees(&d, p);
  st__put_toml(b, d.oom ? "strata plan" : d.p);
  strata_buf_free(&d);
}

/* hf_assets_path = "./assets/hf/NAME": the model's name, its last path
 * component only, so that no name points the trainer elsewhere. */
static void assets_path(strata_buf_t *b, const strata_plan_t *p) {
  const char *m = p->model && *p->model ? p->model : "model";
  const char *slash = strrchr(m, '/');
  strata_buf_t d;
  if (slash && slash[1]) m = slash + 1;
  if (!strcmp(m, ".") || !strcmp(m, "..")) m = "model";
  strata_buf_init(&d);
  strata_buf_printf(&d, "./assets/hf/%s", m);
  st__put_toml(b, d.oom ? "./assets/hf/model" : d.p);
  strata_buf_free(&d);
}

/* local_batch_size: what a data-parallel rank runs at once; with a
 * pipeline the step's micro-batches (pipeline_parallel_microbatch_size
 * each), else one micro-batch, torchtitan accumulating the gradients of
 * global / (local x dp) of them. */
static int local_batch(const strata_plan_t *p) {
  return p->pp > 1 ? p->global_batch / p->dp : p->micro_batch;
}

int strata_export_torchtitan(const strata_plan_t *p, char **text) {
  const char *flavor = NULL, *model = NULL;
  int rc;
  strata_buf_t b;
  if (!text) return strata_error(STRATA_EINVAL, "torchtitan export: no output");
  *text = NULL;
  if ((rc = st__titan_check(p, &flavor, &model))) return rc;
  strata_buf_init(&b);
  /* Names go through st__put_plain (the comment) and st__put_toml (the
   * strings): none can end either or add a key. */
  strata_buf_puts(&b, "# torchtitan job config of a plan: ");
  st__put_plain(&b, p->model ? p->model : "?");
  strata_buf_puts(&b, " on ");
  st__put_plain(&b, p->cluster ? p->cluster : "?");
  strata_buf_printf(&b, ", %d GPUs; ", p->devices);
  degrees(&b, p);
  strata_buf_puts(
      &b, ".\n"
          "# Written by `strata export torchtitan`.  Run it with torchtitan's "
          "run_train.sh\n"
          "# (CONFIG_FILE=this file) on every node; set the tokenizer and data "
          "below.\n"
          "\n[job]\n"
          "description = ");
  toml_description(&b, p);
  strata_buf_puts(&b, "\n\n[model]\nname = ");
  st__put_toml(&b, model);
  strata_buf_puts(&b, "\nflavor = ");
  st__put_toml(&b, flavor);
  strata_buf_puts(&b, "\nhf_assets_path = ");
  assets_path(&b, p);
  strata_buf_printf(&b,
                    "  # the model's tokenizer folder\n"
                    "\n[training]\n"
                    "local_batch_size = %d  # %s\n"
                    "global_batch_size = %d\n"
                    "seq_len = %d\n"
                    "mixed_precision_param = \"bfloat16\"\n"
                    "mixed_precision_reduce = \"float32\"\n"
                    "dataset = \"c4\"  # your dataset\n",
                    local_batch(p),
                    p->pp > 1 ? "the pipeline's micro-batches of a step"
                              : "one forward: the micro-batch, accumulated",
                    p->global_batch, p->seq_len);
  if (p->n_groups > 1) /* whose GPUs run which stage: the node order */
    strata_buf_puts(&b, "# The stages run on node groups of different GPUs: "
                        "start the nodes in the order\n"
                        "# of `strata export hostfile` (node rank 0 first); "
                        "torchtitan's mesh, like\n"
                        "# Megatron-LM's, puts pp outermost and tp innermost, "
                        "so each stage lands on its group.\n");
  parallelism(&b, p);
  checkpointing(&b, p);
  strata_buf_puts(&b, "\n[compile]\n"
                      "enable = false  # the plan's kernel times are "
                      "uncompiled ones\n");
  return strata_buf_finish(&b, text);
}

const char *st__titan_schedule(const strata_plan_t *p) {
  if (p->pp_schedule == STRATA_PPS_ZBH1 ||
      p->pp_schedule == STRATA_PPS_DUALPIPE)
    return NULL;
  if (p->pp_schedule > STRATA_PPS_AUTO)
    return strata_pp_schedule_name(p->pp_schedule);
  return p->vpp > 1 ? "Interleaved1F1B" : "1F1B";
}
