/*
 * planargs.c - the options `strata plan` and `strata estimate` share
 * (planargs.h): one table, one parser, one help text for both.
 */
#include <getopt.h>
#include <string.h>

#include "cli/planargs.h"
#include "core/json.h"

enum {
  P_MODEL = 256,
  P_CLUSTER,
  P_CAL,
  P_GB,
  P_MB,
  P_ALPHA,
  P_MEM,
  P_RESERVE,
  P_ZERO,
  P_RECIPE,
  P_RC,
  P_SP,
  P_NOSP,
  P_FREE,
  P_TP,
  P_PP,
  P_DP,
  P_VPP,
  P_FIRST,
  P_LAST,
  P_OGR,
  P_NOGR,
  P_OPG,
  P_NOPG,
  P_TPO,
  P_NOTPO,
  P_EPO,
  P_NOEPO,
  P_OP2P,
  P_NOP2P,
  P_SG,
  P_NOSG,
  P_FW,
  P_TOP,
  P_THREADS,
  P_CACHE,
  P_TLIM,
  P_JSON,
  P_TIMINGS,
  P_QUIET,
  P_NOCMP,
  P_BASELINE,
  P_REPLAN,
  P_HELP,
  P_LAYERS,
  P_HIDDEN,
  P_HEADS,
  P_KV,
  P_FFN,
  P_SEQ,
  P_VOCAB,
  P_FLASH,
  P_NOFLASH,
  P_CP,
  P_EP,
  P_ETP,
  P_CPCOMM,
  P_PREC,
  P_IMB,
  P_EXPERTS,
  P_TOPK,
  P_MOEFFN,
  P_CAPF,
  P_HEADDIM,
  P_WINDOW,
  P_MTP
};

static const struct option opts[] = {
    {"model", required_argument, 0, P_MODEL},
    {"cluster", required_argument, 0, P_CLUSTER},
    {"calibration", required_argument, 0, P_CAL},
    {"global-batch", required_argument, 0, P_GB},
    {"micro-batch", required_argument, 0, P_MB},
    {"alpha", required_argument, 0, P_ALPHA},
    {"memory-gb", required_argument, 0, P_MEM},
    {"memory-reserve", required_argument, 0, P_RESERVE},
    {"zero", required_argument, 0, P_ZERO},
    {"recipe", required_argument, 0, P_RECIPE},
    {"recompute", required_argument, 0, P_RC},
    {"sequence-parallel", no_argument, 0, P_SP},
    {"no-sequence-parallel", no_argument, 0, P_NOSP},
    {"free", no_argument, 0, P_FREE},
    {"tp", required_argument, 0, P_TP},
    {"pp", required_argument, 0, P_PP},
    {"dp", required_argument, 0, P_DP},
    {"vpp", required_argument, 0, P_VPP},
    {"first-stage-layers", required_argument, 0, P_FIRST},
    {"last-stage-layers", required_argument, 0, P_LAST},
    {"overlap-grad-reduce", no_argument, 0, P_OGR},
    {"no-overlap-grad-reduce", no_argument, 0, P_NOGR},
    {"overlap-param-gather", no_argument, 0, P_OPG},
    {"no-overlap-param-gather", no_argument, 0, P_NOPG},
    {"tp-comm-overlap", no_argument, 0, P_TPO},
    {"no-tp-comm-overlap", no_argument, 0, P_NOTPO},
    {"overlap-moe-expert-parallel-comm", no_argument, 0, P_EPO},
    {"no-overlap-moe-expert-parallel-comm", no_argument, 0, P_NOEPO},
    {"overlap-p2p", no_argument, 0, P_OP2P},
    {"no-overlap-p2p", no_argument, 0, P_NOP2P},
    {"scatter-gather", no_argument, 0, P_SG},
    {"no-scatter-gather", no_argument, 0, P_NOSG},
    {"framework", required_argument, 0, P_FW},
    {"top", required_argument, 0, P_TOP},
    {"threads", required_argument, 0, P_THREADS},
    {"cache", required_argument, 0, P_CACHE},
    {"time-limit", required_argument, 0, P_TLIM},
    {"output", required_argument, 0, 'o'},
    {"json", no_argument, 0, P_JSON},
    {"timings", no_argument, 0, P_TIMINGS},
    {"quiet", no_argument, 0, P_QUIET},
    {"no-compare", no_argument, 0, P_NOCMP},
    {"baseline", required_argument, 0, P_BASELINE},
    {"replan-threshold", required_argument, 0, P_REPLAN},
    {"help", no_argument, 0, P_HELP},
    {"layers", required_argument, 0, P_LAYERS},
    {"hidden", required_argument, 0, P_HIDDEN},
    {"heads", required_argument, 0, P_HEADS},
    {"kv-heads", required_argument, 0, P_KV},
    {"ffn", required_argument, 0, P_FFN},
    {"seq", required_argument, 0, P_SEQ},
    {"vocab", required_argument, 0, P_VOCAB},
    {"flash-attention", no_argument, 0, P_FLASH},
    {"no-flash-attention", no_argument, 0, P_NOFLASH},
    {"cp", required_argument, 0, P_CP},
    {"ep", required_argument, 0, P_EP},
    {"etp", required_argument, 0, P_ETP},
    {"cp-comm", required_argument, 0, P_CPCOMM},
    {"precision", required_argument, 0, P_PREC},
    {"moe-imbalance", required_argument, 0, P_IMB},
    {"experts", required_argument, 0, P_EXPERTS},
    {"topk", required_argument, 0, P_TOPK},
    {"moe-ffn", required_argument, 0, P_MOEFFN},
    {"capacity-factor", required_argument, 0, P_CAPF},
    {"head-dim", required_argument, 0, P_HEADDIM},
    {"window", required_argument, 0, P_WINDOW},
    {"mtp-layers", required_argument, 0, P_MTP},
    {0, 0, 0, 0}};

static const char *options_text =
    "Model:\n"
    "  --model M              preset, family (gpt, bert, llama), trace file\n"
    "                         or Hugging Face config.json (docs/import.md);\n"
    "                         its dtype is the trace's (strata trace gen\n"
    "                         --dtype), its GEMMs' precision --precision's\n"
    "  --layers, --hidden, --heads, --kv-heads, --ffn, --seq, --vocab N,\n"
    "  --head-dim, --window, --experts, --topk, --moe-ffn N,\n"
    "  --capacity-factor F, --mtp-layers N, --flash-attention,\n"
    "  --no-flash-attention   change the preset or family (as trace gen)\n"
    "Cluster:\n"
    "  --cluster SPEC         PRESET:NODES (e.g. dgx-h100:128) or a cluster\n"
    "                         spec file (docs/cluster-format.md)\n"
    "  --calibration FILE     scales fitted by strata calibrate\n"
    "  --memory-gb G          memory per device in GB (default: the GPU's)\n"
    "  --memory-reserve G     GiB kept free beyond every modelled item\n"
    "                         (default 0.5)\n"
    "Batch:\n"
    "  --global-batch B       sequences per step (default 1024, fewer\n"
    "                         past 4096 tokens: 2^22 tokens a step)\n"
    "  --micro-batch b        (default: plan chooses among 1, 2, 4, 8;\n"
    "                         estimate takes 1)\n"
    "Configuration (default: choose; fixing all of them costs one):\n"
    "  --tp T, --pp P, --dp D tensor-, pipeline-, data-parallel sizes\n"
    "  --cp C                 context-parallel size (default: choose where\n"
    "                         each rank keeps >= 4096 tokens)\n"
    "  --ep E, --etp T        expert- and expert-tensor-parallel sizes of a\n"
    "                         mixture of experts (etp 1 or tp)\n"
    "  --cp-comm K            p2p (ring; the default) or allgather (the\n"
    "                         default with sliding-window attention)\n"
    "  --precision P          bf16 (default), fp8 or auto (both)\n"
    "  --moe-imbalance F      dropless MoE: the most loaded rank's token\n"
    "                         copies over the mean (default 1)\n"
    "  --vpp V                virtual stages per rank (interleaved 1F1B;\n"
    "                         1: none)\n"
    "  --first-stage-layers N, --last-stage-layers N\n"
    "                         layers of the first / last pipeline stage\n"
    "                         (with --vpp: of all its virtual stages, a\n"
    "                         multiple of V)\n"
    "  --recompute R          none, selective or full\n"
    "  --sequence-parallel, --no-sequence-parallel\n"
    "  --zero Z               ZeRO stage 0-3 or auto (default 1: distributed\n"
    "                         optimizer; 2 and 3 without pipelining)\n"
    "  --recipe R             megatron (default, 2+4+12 B/param) or zero\n"
    "  --framework F          megatron (default) or deepspeed (searches what\n"
    "                         its config sets up: no cp, ep, vpp, FP8, MTP,\n"
    "                         --zero 0 or --free)\n"
    "  --free                 lift the Megatron-compatible restrictions:\n"
    "                         ILP layouts, balanced uneven splits\n"
    "What the framework overlaps (docs/cost-model.md, \"Overlap\"):\n"
    "  --[no-]overlap-grad-reduce   (default on)\n"
    "  --[no-]overlap-param-gather  (default on, with ZeRO 1)\n"
    "  --[no-]tp-comm-overlap       (default off; needs sequence parallel)\n"
    "  --[no-]overlap-moe-expert-parallel-comm\n"
    "                               the experts' all-to-all under another\n"
    "                               micro-batch's compute (default off; ep >\n"
    "                               1, pp 1 or interleaved, no full "
    "recompute)\n"
    "  --[no-]overlap-p2p           (default: Megatron-LM's, on with vpp)\n"
    "  --[no-]scatter-gather        p2p of 1/t of the boundary without\n"
    "                               sequence parallelism (default: off\n"
    "                               for megatron, on for deepspeed)\n"
    "Search and output:\n"
    "  --top K                best distinct configurations kept (default 3)\n"
    "  --threads N            solver threads (libuv pool size)\n"
    "  --cache DIR            keep solved stages in DIR across runs\n"
    "  --time-limit S         stop searching after S seconds\n"
    "  --alpha A              weight of communication in the stage ILP\n"
    "  --json                 JSON output (--timings adds the run's times)\n"
    "  --quiet                no progress on stderr\n";

static void help_plan(void) {
  printf(
      "Usage: strata plan --model M --cluster SPEC [options]\n"
      "\n"
      "Plan training of model M on a cluster: the configuration (tensor,\n"
      "pipeline and data parallelism, interleaving, layer split, micro-\n"
      "batch, recompute, sequence parallelism) with the least step time\n"
      "that fits in memory, exactly the best of what strata estimate says\n"
      "of each, and every operator's strategy.\n"
      "\n%s"
      "  -o, --output PLAN      save the plan (.splan)\n"
      "  --baseline OLD.splan   keep OLD's configuration, costed on this\n"
      "                         cluster, if it fits and its step is within\n"
      "                         the threshold of the best plan's (a nightly\n"
      "                         re-plan that changes only when it pays)\n"
      "  --replan-threshold PCT the threshold (default 2)\n"
      "\n"
      "Exit codes: 0 planned, 1 usage, 2 bad input, 3 the model does not "
      "fit\n(the message says what would), 4 internal error, 130 "
      "interrupted (Ctrl-C:\nnothing written).\n",
      options_text);
}

static void help_estimate(void) {
  printf("Usage: strata estimate --model M --cluster SPEC --tp T --pp P "
         "[options]\n"
         "\n"
         "Memory of every pipeline rank (weights, gradients, optimizer\n"
         "states, activations of the in-flight micro-batches, transients,\n"
         "CUDA context, workspaces, NCCL buffers, buckets, fragmentation)\n"
         "and the step time of one configuration, with the planner's own\n"
         "evaluation and defaults; then how it compares to the best plan.\n"
         "Options left out are chosen as strata plan would; --dp defaults\n"
         "to all GPUs, --micro-batch to 1, --vpp to 1.\n"
         "\n%s"
         "  --no-compare           skip the comparison with the best plan\n"
         "\n"
         "A configuration that breaks one of Megatron-LM's rules is refused\n"
         "with the rule (exit 1).  Exit 3 when it does not fit.\n",
         options_text);
}

/* Model options (for a preset or family, as in `strata trace gen`). */
static int model_opt(const char *cmd, int c, strata_gen_opts_t *g) {
  static const struct {
    int code;
    const char *name;
  } sizes[] = {{P_LAYERS, "--layers"}, {P_HIDDEN, "--hidden"},
               {P_HEADS, "--heads"},   {P_KV, "--kv-heads"},
               {P_FFN, "--ffn"},       {P_SEQ, "--seq"},
               {P_VOCAB, "--vocab"},   {P_HEADDIM, "--head-dim"},
               {P_WINDOW, "--window"}, {P_EXPERTS, "--experts"},
               {P_TOPK, "--topk"},     {P_MOEFFN, "--moe-ffn"}};
  int *field[] = {&g->layers, &g->hidden,  &g->heads, &g->kv_heads,
                  &g->ffn,    &g->seq,     &g->vocab, &g->head_dim,
                  &g->window, &g->experts, &g->topk,  &g->moe_ffn};
  long v;
  if (c == P_FLASH || c == P_NOFLASH) {
    g->flash_attention = c == P_FLASH;
    return 0;
  }
  if (c == P_CAPF)
    return cli_parse_double(cmd, "--capacity-factor", optarg, 0.01, 1000,
                            &g->capacity);
  if (c == P_MTP) {
    int rc = cli_parse_int(cmd, "--mtp-layers", optarg, 0, 16, &v);
    if (!rc) g->mtp_layers = (int)v;
    return rc;
  }
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    if (sizes[i].code == c) {
      int rc = cli_parse_int(cmd, sizes[i].name, optarg, 1, 1 << 24, &v);
      if (!rc) *field[i] = (int)v;
      return rc;
    }
  return -2;
}

typedef struct {
  const char *cmd;
  cli_plan_args_t *a;
} ctx_t;

static int int_opt(const char *cmd, const char *name, long lo, long hi,
                   int *out) {
  long v;
  int rc = cli_parse_int(cmd, name, optarg, lo, hi, &v);
  if (!rc) *out = (int)v;
  return rc;
}

/* On/off pairs: the option's code, its "no-" code, the field. */
static int toggle(int c, strata_plan_opts_t *po) {
  static const int on[] = {P_OGR, P_OPG, P_TPO, P_OP2P, P_SG, P_SP, P_EPO};
  static const int off[] = {P_NOGR, P_NOPG, P_NOTPO, P_NOP2P,
                            P_NOSG, P_NOSP, P_NOEPO};
  int *f[] = {&po->overlap_grad_reduce, &po->overlap_param_gather,
              &po->tp_comm_overlap,     &po->overlap_p2p,
              &po->scatter_gather,      &po->sequence_parallel,
              &po->overlap_ep_comm};
  for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
    if (c == on[i]) *f[i] = 1;
    if (c == off[i]) *f[i] = 0;
    if (c == on[i] || c == off[i]) return 0;
  }
  return -2;
}

static int config_opt(const char *cmd, int c, strata_plan_opts_t *po) {
  double d;
  int rc = 0;
  switch (c) {
  case P_GB:
    return int_opt(cmd, "--global-batch", 1, 1L << 30, &po->global_batch);
  case P_MB:
    rc = int_opt(cmd, "--micro-batch", 1, 1 << 20, &po->micro_batch);
    po->gen.micro_batch = po->micro_batch;
    return rc;
  case P_ALPHA:
    return cli_parse_double(cmd, "--alpha", optarg, 0, 1e12, &po->alpha);
  case P_MEM:
    rc = cli_parse_double(cmd, "--memory-gb", optarg, 1e-6, 1e9, &d);
    po->memory_budget = d * 1e9;
    return rc;
  case P_RESERVE:
    rc = cli_parse_double(cmd, "--memory-reserve", optarg, 0, 1e6, &d);
    po->memory_reserve = d * 1024.0 * 1024.0 * 1024.0;
    return rc;
  case P_ZERO:
    if (!strcmp(optarg, "auto")) {
      po->zero_auto = 1;
      return 0;
    }
    return int_opt(cmd, "--zero", 0, 3, &po->zero_stage);
  case P_CP:
    return int_opt(cmd, "--cp", 1, 1 << 20, &po->fix_cp);
  case P_EP:
    return int_opt(cmd, "--ep", 1, 1 << 20, &po->fix_ep);
  case P_ETP:
    return int_opt(cmd, "--etp", 1, 1 << 20, &po->fix_etp);
  case P_IMB:
    return cli_parse_double(cmd, "--moe-imbalance", optarg, 1, 1000,
                            &po->moe_imbalance);
  case P_CPCOMM:
    if (!strcmp(optarg, "p2p"))
      po->cp_comm = STRATA_CP_P2P;
    else if (!strcmp(optarg, "allgather"))
      po->cp_comm = STRATA_CP_ALLGATHER;
    else
      return cli_usage_error(cmd, "--cp-comm '%s': p2p or allgather", optarg);
    return 0;
  case P_PREC:
    if (strata_precision_parse(optarg, &po->precision))
      return cli_usage_error(cmd, "%s", strata_last_error());
    return 0;
  case P_TP:
    return int_opt(cmd, "--tp", 1, 1 << 20, &po->fix_tp);
  case P_PP:
    return int_opt(cmd, "--pp", 1, 1 << 20, &po->fix_pp);
  case P_DP:
    return int_opt(cmd, "--dp", 1, 1 << 24, &po->fix_dp);
  case P_VPP:
    return int_opt(cmd, "--vpp", 1, 64, &po->vpp);
  case P_FIRST:
    return int_opt(cmd, "--first-stage-layers", 1, 1 << 20, &po->fix_first);
  case P_LAST:
    return int_opt(cmd, "--last-stage-layers", 1, 1 << 20, &po->fix_last);
  case P_TOP:
    return int_opt(cmd, "--top", 1, 100, &po->top);
  case P_THREADS:
    return int_opt(cmd, "--threads", 1, 1024, &po->threads);
  case P_TLIM:
    return cli_parse_double(cmd, "--time-limit", optarg, 0.001, 1e7,
                            &po->time_limit);
  case P_RECIPE:
    if (strata_recipe_parse(optarg, &po->recipe))
      return cli_usage_error(cmd, "%s", strata_last_error());
    return 0;
  case P_RC:
    if (strata_recompute_parse(optarg, &po->recompute))
      return cli_usage_error(cmd, "%s", strata_last_error());
    po->recompute_auto = 0;
    return 0;
  case P_FW:
    if (strata_framework_parse(optarg, &po->framework))
      return cli_usage_error(cmd, "%s", strata_last_error());
    return 0;
  default:
    return -2;
  }
}

static int on_opt(int c, void *vx) {
  ctx_t *x = vx;
  cli_plan_args_t *a = x->a;
  int rc = model_opt(x->cmd, c, &a->po.gen);
  if (rc == -2) rc = toggle(c, &a->po);
  if (c == P_GB) a->global_batch_given = 1;
  if (rc == -2) rc = config_opt(x->cmd, c, &a->po);
  if (rc != -2) return rc;
  switch (c) {
  case P_MODEL:
    a->model = optarg;
    return 0;
  case P_CLUSTER:
    a->cluster = optarg;
    return 0;
  case P_CAL:
    a->calibration = optarg;
    return 0;
  case P_FREE:
    a->po.megatron = 0;
    return 0;
  case P_CACHE:
    a->po.cache_dir = optarg;
    return 0;
  case 'o':
    a->output = optarg;
    return 0;
  case P_JSON:
    a->json = 1;
    return 0;
  case P_TIMINGS:
    a->timings = 1;
    return 0;
  case P_QUIET:
    a->po.quiet = 1;
    return 0;
  case P_NOCMP:
    a->no_compare = 1;
    return 0;
  case P_BASELINE:
    a->baseline = optarg;
    return 0;
  case P_REPLAN:
    a->threshold_given = 1;
    return cli_parse_double(x->cmd, "--replan-threshold", optarg, 0, 1000,
                            &a->replan_threshold);
  default:
    return cli_usage_error(x->cmd, "unknown option");
  }
}

int cli_plan_parse(const char *cmd, int argc, char **argv, int estimate,
                   cli_plan_args_t *a) {
  ctx_t x = {cmd, a};
  memset(a, 0, sizeof *a);
  strata_plan_opts_init(&a->po);
  int rc = cli_getopt(cmd, argc, argv, "o:", opts, P_HELP,
                      estimate ? help_estimate : help_plan, on_opt, &x);
  if (rc) return rc;
  if (!a->model) return cli_usage_error(cmd, "--model is required");
  if (!a->cluster) return cli_usage_error(cmd, "--cluster is required");
  if (estimate && (a->baseline || a->threshold_given))
    return cli_usage_error(cmd, "--baseline and --replan-threshold are for "
                                "strata plan");
  if (a->threshold_given && !a->baseline)
    return cli_usage_error(cmd, "--replan-threshold needs --baseline "
                                "OLD.splan");
  if (!a->threshold_given) a->replan_threshold = 2;
  if (estimate && (!a->po.fix_tp || !a->po.fix_pp))
    return cli_usage_error(cmd, "--tp and --pp are required");
  /* interleaved: every rank's layers a multiple of V (Megatron-LM) */
  int v = a->po.vpp > 1 ? a->po.vpp : 1;
  if (a->po.fix_first % v || a->po.fix_last % v)
    return cli_usage_error(cmd,
                           "%d layers on the %s pipeline stage are not "
                           "divisible by --vpp %d (each virtual stage holds a "
                           "rank's layers / vpp)",
                           a->po.fix_first % v ? a->po.fix_first
                                               : a->po.fix_last,
                           a->po.fix_first % v ? "first" : "last", v);
  if (a->po.tp_comm_overlap && a->po.sequence_parallel == 0)
    return cli_usage_error(cmd, "--tp-comm-overlap needs sequence "
                                "parallelism (Megatron-LM's rule)");
  a->po.model_spec = a->model;
  return 0;
}

/* A calibration fitted on another GPU model is applied, with a warning:
 * its scales and fixed memory belong to that GPU (an A100 fit added
 * 9.99 GiB to every H100 rank, silently). */
static void warn_fitted_on(const char *cmd, const char *path,
                           const strata_cluster_t *c) {
  char *text = NULL;
  size_t len = 0;
  cJSON *root = NULL;
  const strata_gpu_model_t *g = strata_cluster_gpu_model(c);
  if (strata_file_read(path, 1 << 20, &text, &len) ||
      st__json_parse(text, len, path, &root)) {
    strata_error_clear();
    strata_free(text);
    return;
  }
  const cJSON *gm = cJSON_GetObjectItem(root, "gpu_model");
  const cJSON *cl = cJSON_GetObjectItem(root, "cluster");
  if (cJSON_IsString(gm) && g && g->name && strcmp(gm->valuestring, g->name))
    fprintf(stderr,
            "strata %s: warning: %s was fitted on %s GPUs%s%s%s, not on this "
            "cluster's %s: its scales and its fixed memory and time per step "
            "may not hold here (fit it again on this cluster: strata "
            "calibrate)\n",
            cmd, path, gm->valuestring, cJSON_IsString(cl) ? " (cluster " : "",
            cJSON_IsString(cl) ? cl->valuestring : "",
            cJSON_IsString(cl) ? ")" : "", g->name);
  cJSON_Delete(root);
  strata_free(text);
}

int cli_default_global_batch(int seq) {
  const long budget = 1L << 22; /* tokens a step: 1024 x 4096 */
  int b = 1024;
  while (b > 1 && seq > 0 && (long)b * seq > budget)
    b /= 2;
  return b;
}

int cli_plan_load(const char *cmd, cli_plan_args_t *a, strata_graph_t **g,
                  strata_cluster_t **c) {
  strata_gen_opts_t gen = a->po.gen;
  strata_calibration_t cal;
  int e;
  *g = NULL;
  *c = NULL;
  if ((e = strata_model_load(a->model, &gen, g)) ||
      (e = strata_cluster_load(a->cluster, c)))
    return cli_fail(cmd, e);
  if (!a->global_batch_given)
    a->po.global_batch = cli_default_global_batch((*g)->seq_len);
  if (a->calibration && ((e = strata_calibration_load(a->calibration, &cal)) ||
                         (e = strata_cluster_calibrate(*c, &cal))))
    return cli_fail(cmd, e);
  if (a->calibration) warn_fitted_on(cmd, a->calibration, *c);
  return 0;
}
