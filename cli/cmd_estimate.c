/*
 * cmd_estimate.c - `strata estimate`: memory and time of one given
 * Megatron-style configuration (tp, pp, dp, micro-batch, ZeRO, recompute,
 * sequence parallelism), with the cost model the planner uses.
 */
#include <getopt.h>
#include <string.h>

#include "cli/cli.h"
#include "core/json.h"

static void help(void) {
  printf(
      "Usage: strata estimate --model M --cluster SPEC --tp T --pp P "
      "[options]\n"
      "\n"
      "Memory of every pipeline stage (weights, gradients, optimizer states,\n"
      "activations of the in-flight micro-batches, transients) and the step\n"
      "time, tokens/s and MFU of a Megatron-LM configuration.\n"
      "\n"
      "  --model M              preset, family or trace file\n"
      "  --cluster SPEC         PRESET:NODES or a cluster spec file\n"
      "  --tp T, --pp P         tensor- and pipeline-parallel sizes\n"
      "  --dp D                 data-parallel size (default: all GPUs)\n"
      "  --micro-batch b        (default 1)\n"
      "  --global-batch B       (default micro-batch x dp)\n"
      "  --zero Z               0 or 1 (1: distributed optimizer)\n"
      "  --recipe R             megatron (default: 2+4+12 B/param) or zero\n"
      "  --sequence-parallel    with tensor parallelism\n"
      "  --recompute R          none (default), selective or full\n"
      "  --flash-attention, --no-flash-attention\n"
      "  --seq S                sequence length\n"
      "  --efficiency E         achieved fraction of peak FLOP/s (default "
      "0.5)\n"
      "  --json                 JSON output\n"
      "\n"
      "A configuration that breaks one of Megatron-LM's rules is refused with\n"
      "the rule (exit 1), and so is a tensor-parallel group that is not\n"
      "inside one node.  Exit 3 when it does not fit in the GPU's memory.\n");
}

enum {
  E_MODEL = 256,
  E_CLUSTER,
  E_TP,
  E_PP,
  E_DP,
  E_MB,
  E_GB,
  E_ZERO,
  E_RECIPE,
  E_SP,
  E_RC,
  E_FLASH,
  E_NOFLASH,
  E_SEQ,
  E_EFF,
  E_JSON,
  E_HELP
};

static const struct option opts[] = {
    {"model", required_argument, 0, E_MODEL},
    {"cluster", required_argument, 0, E_CLUSTER},
    {"tp", required_argument, 0, E_TP},
    {"pp", required_argument, 0, E_PP},
    {"dp", required_argument, 0, E_DP},
    {"micro-batch", required_argument, 0, E_MB},
    {"global-batch", required_argument, 0, E_GB},
    {"zero", required_argument, 0, E_ZERO},
    {"recipe", required_argument, 0, E_RECIPE},
    {"sequence-parallel", no_argument, 0, E_SP},
    {"recompute", required_argument, 0, E_RC},
    {"flash-attention", no_argument, 0, E_FLASH},
    {"no-flash-attention", no_argument, 0, E_NOFLASH},
    {"seq", required_argument, 0, E_SEQ},
    {"efficiency", required_argument, 0, E_EFF},
    {"json", no_argument, 0, E_JSON},
    {"help", no_argument, 0, E_HELP},
    {0, 0, 0, 0}};

typedef struct {
  const char *model, *cluster;
  long tp, pp, dp, mb, gb, zero;
  int json;
  strata_plan_opts_t po;
} args_t;

static int parse_opt(int c, args_t *a) {
  long v;
  int rc = 0;
  switch (c) {
  case E_MODEL:
    a->model = optarg;
    break;
  case E_CLUSTER:
    a->cluster = optarg;
    break;
  case E_TP:
    rc = cli_parse_int("estimate", "--tp", optarg, 1, 1 << 20, &a->tp);
    break;
  case E_PP:
    rc = cli_parse_int("estimate", "--pp", optarg, 1, 1 << 20, &a->pp);
    break;
  case E_DP:
    rc = cli_parse_int("estimate", "--dp", optarg, 1, 1 << 24, &a->dp);
    break;
  case E_MB:
    rc = cli_parse_int("estimate", "--micro-batch", optarg, 1, 1 << 20, &a->mb);
    break;
  case E_GB:
    rc = cli_parse_int("estimate", "--global-batch", optarg, 1, 1L << 30,
                       &a->gb);
    break;
  case E_ZERO:
    rc = cli_parse_int("estimate", "--zero", optarg, 0, 3, &a->zero);
    break;
  case E_RECIPE:
    if (strata_recipe_parse(optarg, &a->po.recipe))
      rc = cli_usage_error("estimate", "%s", strata_last_error());
    break;
  case E_SP:
    a->po.sequence_parallel = 1;
    break;
  case E_RC:
    if (strata_recompute_parse(optarg, &a->po.recompute))
      rc = cli_usage_error("estimate", "%s", strata_last_error());
    break;
  case E_FLASH:
    a->po.gen.flash_attention = 1;
    break;
  case E_NOFLASH:
    a->po.gen.flash_attention = 0;
    break;
  case E_SEQ:
    rc = cli_parse_int("estimate", "--seq", optarg, 1, 1 << 24, &v);
    a->po.gen.seq = (int)v;
    break;
  case E_EFF:
    rc = cli_parse_double("estimate", "--efficiency", optarg, 1e-3, 1,
                          &a->po.efficiency);
    break;
  case E_JSON:
    a->json = 1;
    break;
  default:
    rc = cli_usage_error("estimate", "unknown option");
    break;
  }
  return rc;
}

static int on_opt(int c, void *a) {
  return parse_opt(c, a);
}

static int parse(int argc, char **argv, args_t *a) {
  int rc;
  memset(a, 0, sizeof *a);
  strata_plan_opts_init(&a->po);
  a->po.recompute = STRATA_RECOMPUTE_NONE;
  a->po.recompute_auto = 0;
  a->po.sequence_parallel = 0;
  a->po.quiet = 1;
  a->mb = 1;
  rc = cli_getopt("estimate", argc, argv, "", opts, E_HELP, help, on_opt, a);
  if (rc) return rc;
  if (!a->model || !a->cluster || !a->tp || !a->pp)
    return cli_usage_error("estimate", "--model, --cluster, --tp and --pp are "
                                       "required");
  return 0;
}

/* Can Megatron-LM split L layers over p stages?  Evenly, or (as the
 * planner does, pipeline/split.c) with middle stages of ceil(L/p) layers
 * and the first and last stages sharing the rest
 * (--decoder-first/last-pipeline-num-layers). */
static int splits_layers(int L, long p) {
  if (p > L) return 0;
  if (L % p == 0 || p <= 2) return 1;
  long mid = (L + p - 1) / p, rest = L - (p - 2) * mid;
  return rest >= 2 && rest <= 2 * mid;
}

/* The data-parallel size: given, or the GPUs left by tp x pp, which must
 * then divide the cluster (with --dp, Megatron's world is tp x pp x dp). */
static int world_rules(args_t *a, int world) {
  if (!a->dp && world % (a->tp * a->pp))
    return cli_usage_error("estimate",
                           "world size %d is not divisible by "
                           "tensor x pipeline parallel size %ld x %ld",
                           world, a->tp, a->pp);
  if (!a->dp) a->dp = world / (a->tp * a->pp);
  if (a->dp * a->tp * a->pp > world)
    return cli_usage_error("estimate",
                           "tp x pp x dp = %ld exceeds the %d GPUs "
                           "of the cluster",
                           a->dp * a->tp * a->pp, world);
  return 0;
}

/* Megatron-LM's own checks (megatron/training/arguments.py), before any
 * costing: a configuration it would refuse is refused here with the rule.
 * The last check is Strata's: its cost model places a tensor-parallel
 * group inside one node (NVLink), as Megatron-LM's guidance does. */
static int megatron_rules(args_t *a, const strata_graph_t *g, int world,
                          int gpn) {
  int L = strata_graph_layers(g), rc = world_rules(a, world);
  if (rc) return rc;
  if (g->hp.heads && g->hp.heads % a->tp)
    return cli_usage_error("estimate",
                           "the number of attention heads (%d) "
                           "must be divisible by the tensor-parallel size %ld",
                           g->hp.heads, a->tp);
  if (g->hp.kv_heads && g->hp.kv_heads % a->tp)
    return cli_usage_error("estimate",
                           "the number of query groups (%d) must "
                           "be divisible by the tensor-parallel size %ld",
                           g->hp.kv_heads, a->tp);
  if (a->pp > L)
    return cli_usage_error("estimate",
                           "pipeline size %ld exceeds the %d "
                           "layers",
                           a->pp, L);
  if (!splits_layers(L, a->pp))
    return cli_usage_error("estimate",
                           "%d layers do not split over %ld "
                           "pipeline stages: Megatron-LM needs the layers "
                           "divisible by the pipeline size, or middle stages "
                           "of %ld layers with the first and last stages "
                           "sharing the rest",
                           L, a->pp, (L + a->pp - 1) / a->pp);
  if (!a->gb) a->gb = a->mb * a->dp;
  if (a->gb % (a->mb * a->dp))
    return cli_usage_error("estimate",
                           "global batch size (%ld) is not "
                           "divisible by micro batch size (%ld) times data "
                           "parallel size (%ld)",
                           a->gb, a->mb, a->dp);
  if (a->po.sequence_parallel && a->tp == 1)
    return cli_usage_error("estimate", "sequence parallelism needs a "
                                       "tensor-parallel size above 1");
  if (a->zero >= 2)
    return cli_usage_error("estimate",
                           "ZeRO stage %ld: Megatron-LM's "
                           "distributed optimizer is ZeRO stage 1",
                           a->zero);
  if (a->tp > gpn || gpn % a->tp)
    return cli_usage_error("estimate",
                           "tensor-parallel size %ld: strata "
                           "places a tensor-parallel group inside one node, "
                           "so it must divide the %d GPUs of a node",
                           a->tp, gpn);
  return 0;
}

static int add_stage(cJSON *arr, const strata_plan_stage_t *s) {
  cJSON *o = cJSON_CreateObject();
  if (!o || !cJSON_AddItemToArray(arr, o)) {
    cJSON_Delete(o);
    return strata_error(STRATA_ENOMEM, "out of memory");
  }
  const strata_stage_result_t *r = s->result;
  int rc = st__json_add_num(o, "layer_begin", s->layer_begin);
  if (!rc) rc = st__json_add_num(o, "layer_end", s->layer_end);
  if (!rc) rc = st__json_add_num(o, "in_flight", s->in_flight);
  if (!rc) rc = st__json_add_num(o, "weights_bytes", r->mem.weights);
  if (!rc) rc = st__json_add_num(o, "gradients_bytes", r->mem.gradients);
  if (!rc) rc = st__json_add_num(o, "optimizer_bytes", r->mem.optimizer);
  if (!rc) rc = st__json_add_num(o, "activations_bytes", r->mem.activations);
  if (!rc) rc = st__json_add_num(o, "transient_bytes", r->mem.transient);
  if (!rc) rc = st__json_add_num(o, "total_bytes", r->mem.total);
  if (!rc)
    rc = st__json_add_num(o, "activations_per_layer_bytes",
                          r->activations_per_layer);
  if (!rc) rc = st__json_add_num(o, "fwd_seconds", s->fwd_seconds);
  if (!rc) rc = st__json_add_num(o, "bwd_seconds", s->bwd_seconds);
  return rc;
}

static int json_out(const args_t *a, const strata_plan_t *p, int fits) {
  cJSON *root = cJSON_CreateObject(), *arr = NULL;
  int rc = root ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
  if (!rc) rc = st__json_add_str(root, "model", a->model);
  if (!rc) rc = st__json_add_str(root, "cluster", a->cluster);
  if (!rc) rc = st__json_add_num(root, "tp", p->tp);
  if (!rc) rc = st__json_add_num(root, "pp", p->pp);
  if (!rc) rc = st__json_add_num(root, "dp", p->dp);
  if (!rc) rc = st__json_add_num(root, "micro_batch", p->micro_batch);
  if (!rc) rc = st__json_add_num(root, "global_batch", p->global_batch);
  if (!rc)
    rc = st__json_add_num(root, "memory_per_device", p->peak_memory_bytes);
  if (!rc) rc = st__json_add_num(root, "gpu_memory_bytes", p->gpu_memory_bytes);
  if (!rc) rc = st__json_add_bool(root, "fits", fits);
  if (!rc) rc = st__json_add_num(root, "step_seconds", p->step_seconds);
  if (!rc)
    rc = st__json_add_num(root, "tokens_per_second", p->tokens_per_second);
  if (!rc) rc = st__json_add_num(root, "mfu", p->mfu);
  if (!rc && !(arr = cJSON_AddArrayToObject(root, "stages")))
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  for (int s = 0; s < p->n_stages && !rc; s++)
    rc = add_stage(arr, &p->stages[s]);
  char *text = rc ? NULL : st__json_print(root);
  cJSON_Delete(root);
  if (!text) return cli_fail("estimate", rc ? rc : STRATA_ENOMEM);
  rc = cli_write_output("estimate", NULL, text, strlen(text));
  strata_free(text);
  return rc;
}

static int human_out(const strata_plan_t *p, int fits) {
  char *text = NULL;
  int rc = strata_plan_summary(p, &text);
  if (rc) return cli_fail("estimate", rc);
  fputs(text, stdout);
  strata_free(text);
  if (!fits)
    printf("\ndoes not fit: %.2f GiB per device needed, the GPU has "
           "%.2f GiB\n",
           p->peak_memory_bytes / 1073741824.0,
           p->gpu_memory_bytes / 1073741824.0);
  return 0;
}

int cli_cmd_estimate(int argc, char **argv) {
  args_t a;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  int rc = parse(argc, argv, &a), e;
  if (rc) return rc < 0 ? CLI_OK : rc;
  a.po.gen.micro_batch = (int)a.mb;
  if ((e = strata_model_load(a.model, &a.po.gen, &g)) ||
      (e = strata_cluster_load(a.cluster, &c))) {
    rc = cli_fail("estimate", e);
    goto out;
  }
  rc = megatron_rules(&a, g, strata_cluster_gpus(c),
                      strata_cluster_gpus_per_node(c));
  if (rc) goto out;
  a.po.fix_tp = (int)a.tp;
  a.po.fix_pp = (int)a.pp;
  a.po.fix_dp = (int)a.dp;
  a.po.micro_batch = (int)a.mb;
  a.po.global_batch = (int)a.gb;
  a.po.zero_stage = (int)a.zero;
  a.po.memory_budget = 1e30; /* report whether it fits, do not prune */
  if ((e = strata_pipeline_plan(g, c, &a.po, &p)) ||
      (e = strata_merge_stitch(p, g, c))) {
    rc = cli_fail("estimate", e);
    goto out;
  }
  int fits = p->peak_memory_bytes <= (double)strata_cluster_gpu_memory(c);
  rc = a.json ? json_out(&a, p, fits) : human_out(p, fits);
  if (!rc && !fits) rc = CLI_INFEASIBLE;
out:
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return rc;
}
