/*
 * cmd_plan.c - `strata plan`: plan a model on a cluster (pipeline stages,
 * tensor/data parallelism, every operator's strategy), stitch the global
 * plan, print its summary and optionally save it.
 */
#include <getopt.h>
#include <signal.h>
#include <string.h>

#include "cli/cli.h"

static void help(void) {
  printf(
      "Usage: strata plan --model M --cluster SPEC [options]\n"
      "\n"
      "Plan training of model M on a cluster: the pipeline degree and layer\n"
      "split, tensor and data parallelism, micro-batch, recompute and every\n"
      "operator's strategy, so that each device fits in memory and the step\n"
      "time is least.\n"
      "\n"
      "  --model M            preset, family (gpt, bert, llama) or trace file\n"
      "  --layers, --hidden, --heads, --kv-heads, --ffn, --seq, --vocab N,\n"
      "  --flash-attention, --no-flash-attention\n"
      "                       change the preset or family (as trace gen)\n"
      "  --cluster SPEC       PRESET:NODES (e.g. dgx-h100:128) or a cluster\n"
      "                       spec file (docs/cluster-format.md)\n"
      "  --global-batch B     sequences per step (default 1024)\n"
      "  --micro-batch b      fix the micro-batch (default: try 1, 2, 4)\n"
      "  --alpha A            weight of communication in the stage ILP\n"
      "  --memory-gb G        memory per device in GB (default: the GPU's\n"
      "                       memory less a 2 GiB reserve)\n"
      "  --zero Z             ZeRO stage (default 1: distributed optimizer)\n"
      "  --recipe R           megatron (default, 2+4+12 B/param) or zero\n"
      "  --recompute R        none, selective or full (default: choose)\n"
      "  --sequence-parallel, --no-sequence-parallel (default: choose)\n"
      "  --free               lift the Megatron-compatible restrictions:\n"
      "                       ILP layouts, uneven layer splits (Alpa's DP)\n"
      "  --threads N          solver threads (libuv pool size)\n"
      "  --cache DIR          keep solved stages in DIR across runs\n"
      "  --time-limit S       stop searching after S seconds\n"
      "  -o, --output PLAN    save the plan (.splan)\n"
      "  --json               print the plan as JSON\n"
      "  --quiet              no progress on stderr\n"
      "\n"
      "Exit codes: 0 planned, 1 usage, 2 bad input, 3 the model does not fit\n"
      "(the message says what would), 4 internal error.\n");
}

enum {
  O_MODEL = 256,
  O_CLUSTER,
  O_GB,
  O_MB,
  O_ALPHA,
  O_MEM,
  O_ZERO,
  O_RECIPE,
  O_RC,
  O_SP,
  O_NOSP,
  O_FREE,
  O_THREADS,
  O_CACHE,
  O_TLIM,
  O_JSON,
  O_QUIET,
  O_HELP,
  O_LAYERS,
  O_HIDDEN,
  O_HEADS,
  O_KV,
  O_FFN,
  O_SEQ,
  O_VOCAB,
  O_FLASH,
  O_NOFLASH
};

static const struct option opts[] = {
    {"model", required_argument, 0, O_MODEL},
    {"cluster", required_argument, 0, O_CLUSTER},
    {"global-batch", required_argument, 0, O_GB},
    {"micro-batch", required_argument, 0, O_MB},
    {"alpha", required_argument, 0, O_ALPHA},
    {"memory-gb", required_argument, 0, O_MEM},
    {"zero", required_argument, 0, O_ZERO},
    {"recipe", required_argument, 0, O_RECIPE},
    {"recompute", required_argument, 0, O_RC},
    {"sequence-parallel", no_argument, 0, O_SP},
    {"no-sequence-parallel", no_argument, 0, O_NOSP},
    {"free", no_argument, 0, O_FREE},
    {"threads", required_argument, 0, O_THREADS},
    {"cache", required_argument, 0, O_CACHE},
    {"time-limit", required_argument, 0, O_TLIM},
    {"output", required_argument, 0, 'o'},
    {"json", no_argument, 0, O_JSON},
    {"quiet", no_argument, 0, O_QUIET},
    {"help", no_argument, 0, O_HELP},
    {"layers", required_argument, 0, O_LAYERS},
    {"hidden", required_argument, 0, O_HIDDEN},
    {"heads", required_argument, 0, O_HEADS},
    {"kv-heads", required_argument, 0, O_KV},
    {"ffn", required_argument, 0, O_FFN},
    {"seq", required_argument, 0, O_SEQ},
    {"vocab", required_argument, 0, O_VOCAB},
    {"flash-attention", no_argument, 0, O_FLASH},
    {"no-flash-attention", no_argument, 0, O_NOFLASH},
    {0, 0, 0, 0}};

/* Model options (for a preset or family, as in `strata trace gen`). */
static int model_opt(int c, strata_gen_opts_t *g) {
  static const struct {
    int code;
    const char *name;
  } sizes[] = {{O_LAYERS, "--layers"}, {O_HIDDEN, "--hidden"},
               {O_HEADS, "--heads"},   {O_KV, "--kv-heads"},
               {O_FFN, "--ffn"},       {O_SEQ, "--seq"},
               {O_VOCAB, "--vocab"}};
  int *field[] = {&g->layers, &g->hidden, &g->heads, &g->kv_heads,
                  &g->ffn,    &g->seq,    &g->vocab};
  long v;
  if (c == O_FLASH || c == O_NOFLASH) {
    g->flash_attention = c == O_FLASH;
    return 0;
  }
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    if (sizes[i].code == c) {
      int rc = cli_parse_int("plan", sizes[i].name, optarg, 1, 1 << 24, &v);
      if (!rc) *field[i] = (int)v;
      return rc;
    }
  return -2;
}

typedef struct {
  const char *model, *cluster, *output;
  int json;
  strata_plan_opts_t po;
} args_t;

static int parse_opt(int c, args_t *a) {
  long v;
  double d;
  int rc = model_opt(c, &a->po.gen);
  if (rc != -2) return rc;
  rc = 0;
  switch (c) {
  case O_MODEL:
    a->model = optarg;
    break;
  case O_CLUSTER:
    a->cluster = optarg;
    break;
  case O_GB:
    rc = cli_parse_int("plan", "--global-batch", optarg, 1, 1L << 30, &v);
    a->po.global_batch = (int)v;
    break;
  case O_MB:
    rc = cli_parse_int("plan", "--micro-batch", optarg, 1, 1 << 20, &v);
    a->po.micro_batch = (int)v;
    a->po.gen.micro_batch = (int)v;
    break;
  case O_ALPHA:
    rc = cli_parse_double("plan", "--alpha", optarg, 0, 1e12, &a->po.alpha);
    break;
  case O_MEM:
    rc = cli_parse_double("plan", "--memory-gb", optarg, 1e-6, 1e9, &d);
    a->po.memory_budget = d * 1e9;
    break;
  case O_ZERO:
    rc = cli_parse_int("plan", "--zero", optarg, 0, 3, &v);
    a->po.zero_stage = (int)v;
    break;
  case O_RECIPE:
    if (strata_recipe_parse(optarg, &a->po.recipe))
      rc = cli_usage_error("plan", "%s", strata_last_error());
    break;
  case O_RC:
    if (strata_recompute_parse(optarg, &a->po.recompute))
      rc = cli_usage_error("plan", "%s", strata_last_error());
    a->po.recompute_auto = 0;
    break;
  case O_SP:
    a->po.sequence_parallel = 1;
    break;
  case O_NOSP:
    a->po.sequence_parallel = 0;
    break;
  case O_FREE:
    a->po.megatron = 0;
    break;
  case O_THREADS:
    rc = cli_parse_int("plan", "--threads", optarg, 1, 1024, &v);
    a->po.threads = (int)v;
    break;
  case O_CACHE:
    a->po.cache_dir = optarg;
    break;
  case O_TLIM:
    rc = cli_parse_double("plan", "--time-limit", optarg, 0.001, 1e7,
                          &a->po.time_limit);
    break;
  case 'o':
    a->output = optarg;
    break;
  case O_JSON:
    a->json = 1;
    break;
  case O_QUIET:
    a->po.quiet = 1;
    break;
  default:
    rc = cli_usage_error("plan", "unknown option");
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
  rc = cli_getopt("plan", argc, argv, "o:", opts, O_HELP, help, on_opt, a);
  if (rc) return rc;
  if (!a->model) return cli_usage_error("plan", "--model is required");
  if (!a->cluster) return cli_usage_error("plan", "--cluster is required");
  a->po.model_spec = a->model;
  return 0;
}

static int report(const args_t *a, const strata_plan_t *p) {
  char *text = NULL;
  int rc = a->json ? strata_plan_json(p, &text) : strata_plan_summary(p, &text);
  if (rc) return cli_fail("plan", rc);
  rc = cli_write_output("plan", NULL, text, strlen(text));
  strata_free(text);
  return rc;
}

/* SIGINT: stop queued stage solves; the command then exits without
 * writing anything (outputs are written only at the end, atomically). */
static volatile int interrupted;
static void on_sigint(int sig) {
  (void)sig;
  interrupted = 1;
}

int cli_cmd_plan(int argc, char **argv) {
  args_t a;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  int rc = parse(argc, argv, &a), e;
  if (rc) return rc < 0 ? CLI_OK : rc;
  strata_gen_opts_t gen = a.po.gen;
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old);
  a.po.cancel = &interrupted;
  if ((e = strata_model_load(a.model, &gen, &g)) ||
      (e = strata_cluster_load(a.cluster, &c)) ||
      (e = strata_pipeline_plan(g, c, &a.po, &p)) ||
      (e = strata_merge_stitch(p, g, c))) {
    rc = cli_fail("plan", e);
    goto out;
  }
  if (interrupted) {
    rc =
        cli_fail("plan", strata_error(STRATA_ECANCELED, "interrupted: "
                                                        "nothing was written"));
    goto out;
  }
  if (a.output && (e = strata_plan_save(p, a.output))) {
    rc = cli_fail("plan", e);
    goto out;
  }
  rc = report(&a, p);
  if (!a.po.quiet)
    fprintf(stderr,
            "strata plan: %d stage subproblems (%d distinct), %d "
            "ILPs solved, %d from the cache, %.2f s\n",
            p->subproblems_total, p->subproblems_distinct, p->ilps_solved,
            p->cache_hits, p->plan_seconds);
out:
  sigaction(SIGINT, &old, NULL);
  if (interrupted && rc) rc = 130; /* 128 + SIGINT, as shells report it */
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return rc;
}
