/*
 * planargs.c - the options `strata plan` and `strata estimate` share
 * (planargs.h): one table (cli/opts.h) for both, its rows marked where
 * only one of them takes an option -- estimate refuses what it would
 * ignore (-o, --top, --quiet, --baseline), plan estimate's --no-compare.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/opts.h"
#include "cli/planargs.h"
#include "core/json.h"
#include "core/stream.h"
#include "core/text.h"

enum { PLAN = 1, ESTIMATE = 2 };
enum {
  C_ZERO,
  C_CPCOMM,
  C_PREC,
  C_FP8R,
  C_RECIPE,
  C_RC,
  C_RCM,
  C_MGD,
  C_EAD,
  C_EASD,
  C_FW,
  C_STACK,
  C_REPLAN
};

/* --pareto-filter LIST: idle, deep or both, comma-separated. */
static int parse_pareto_filter(const char *s, int *out) {
  static const char *names[] = {"idle", "deep"};
  int v = 0;
  while (s && *s) {
    size_t n = strcspn(s, ",");
    int k = 0;
    if (!n) break; /* an empty name: named below */
    while (k < 2 && !(strlen(names[k]) == n && !strncmp(s, names[k], n)))
      k++;
    if (k == 2)
      return strata_error(STRATA_EINVAL,
                          "'%.*s' is not a filter of the front: idle (points "
                          "that leave GPUs idle) or deep (pp beyond half the "
                          "layers), or both as idle,deep",
                          (int)n, s);
    v |= 1 << k;
    s += n + (s[n] == ',');
  }
  if (!v || (s && *s))
    return strata_error(STRATA_EINVAL, "name a filter: idle, deep or both "
                                       "(idle,deep)");
  *out = v;
  return 0;
}

#define CLI_ARGS_T cli_plan_args_t
#define NOT_EST(reason) .only = PLAN, .why = reason

/* The options of plan and estimate, in the order --help lists them.
 *
 * To add an option:
 *   1. an on/off switch or a choice among names that the plan records:
 *      one row of include/strata/plan_fields.h (STRATA_PLAN_SWITCHES or
 *      STRATA_PLAN_CHOICES), which gives the member of strata_plan_opts_t,
 *      its default, its row here, the plan field and show --json; then
 *      its text line (export/plan_text.h) and what it changes (pipeline/
 *      for its cost, pipeline/rules.c for the frameworks that refuse it,
 *      merge/export_*.c for its flag); nothing else below;
 *   2. any other option: a member of strata_plan_opts_t (include/strata/
 *      pipeline.h) whose 0 means "the default", the default itself in
 *      pipeline/defaults.c (never here: the C API and Python plan with
 *      the library's), and one row below -- CLI_INT / CLI_DOUBLE /
 *      CLI_STR / CLI_FLAG / CLI_TOGGLE / CLI_PARSE store the value, with
 *      its range; CLI_CALL (an id in the enum above and a case in call())
 *      only where a row cannot; .only = PLAN with .why where estimate
 *      refuses it;
 *   3. a rule it must obey is a row of pipeline/rules.c's table (see its
 *      head), not a check here;
 *   4. docs/cli.md's table, and a cli golden case or a unit test that
 *      fails without it (the man page follows from --help).
 */

static const cli_opt_t opts[] = {
    {CLI_HEAD("Model:")},
    {CLI_STR("model", 0, model, "M",
             "preset, family (gpt, bert, llama), trace file\n"
             "or Hugging Face config.json (docs/import.md);\n"
             "its dtype is the trace's (strata trace gen\n"
             "--dtype), its GEMMs' precision --precision's")},
    {CLI_HEAD("  and what changes the preset or family (as in trace gen):")},
    {CLI_INCLUDE(po.gen, cli_model_opts)},
    {CLI_HEAD("Cluster:")},
    {CLI_STR("cluster", 0, cluster, "SPEC",
             "PRESET:NODES (e.g. dgx-h100:128) or a cluster\n"
             "spec file (docs/cluster-format.md)")},
    {CLI_STR("calibration", 0, calibration, "FILE",
             "scales fitted by strata calibrate")},
    {CLI_DOUBLE("memory-gib", po.memory_budget, 1e-6, 1e9, CLI_GIB, "G",
                "memory per device in GiB (2^30 bytes;\n"
                "default: the GPU's)")},
    {CLI_DOUBLE("memory-gb", po.memory_budget, 1e-6, 1e9, 1e9, "G", NULL),
     .alias_of = "memory-gib", .why = CLI_GB_WHY},
    {CLI_DOUBLE("memory-reserve-gib", po.memory_reserve, 0, 1e6, CLI_GIB, "G",
                "GiB kept free beyond every modelled item\n"
                "(default 0.5)")},
    {CLI_DOUBLE("memory-reserve", po.memory_reserve, 0, 1e6, CLI_GIB, "G",
                NULL),
     .alias_of = "memory-reserve-gib", .why = "memory options end in -gib"},
    {CLI_HEAD("Batch:")},
    {CLI_INT("global-batch", po.global_batch, 1, 1 << 30, "B",
             "sequences per step (default 1024, fewer\n"
             "past 4096 tokens: 2^22 tokens a step)")},
    {CLI_INT("micro-batch", po.micro_batch, 1, 1 << 20, "b",
             "(default: plan chooses among 1, 2, 4, 8;\n"
             "estimate takes 1)")},
    {CLI_HEAD(
        "Configuration (default: choose; fixing all of them costs one):")},
    {CLI_INT("tp", po.tp, 1, 1 << 20, "T", "tensor-parallel size")},
    {CLI_INT("pp", po.pp, 1, 1 << 20, "P", "pipeline-parallel size")},
    {CLI_INT("dp", po.dp, 1, 1 << 24, "D", "data-parallel size")},
    {CLI_INT("cp", po.cp, 1, 1 << 20, "C",
             "context-parallel size (default: choose where\n"
             "each rank keeps >= 4096 tokens)")},
    {CLI_INT("ep", po.ep, 1, 1 << 20, "E",
             "expert-parallel size of a mixture of experts")},
    {CLI_INT("etp", po.etp, 1, 1 << 20, "T",
             "expert-tensor-parallel size (1 or tp)")},
    {CLI_CALL("cp-comm", 0, C_CPCOMM, "K",
              "p2p (ring; the default) or allgather (the\n"
              "default with sliding-window attention)")},
    {CLI_CALL("precision", 0, C_PREC, "P",
              "bf16 (default), fp8, auto (both) or fp4\n"
              "(NVFP4, Blackwell)")},
    {CLI_CALL("fp8-recipe", 0, C_FP8R, "R",
              "FP8's scaling: delayed, tensorwise, blockwise\n"
              "or mxfp8 (default: delayed, mxfp8 on\n"
              "Blackwell)")},
    {CLI_DOUBLE("moe-imbalance", po.moe_imbalance, 1, 1000, 0, "F",
                "dropless MoE: the most loaded rank's token\n"
                "copies over the mean (default 1)")},
    {CLI_INT("vpp", po.vpp, 1, 64, "V",
             "virtual stages per rank (interleaved 1F1B;\n"
             "1: none)")},
    {CLI_INT("first-stage-layers", po.first_layers, 1, 1 << 20, "N",
             "layers of the first pipeline stage (with\n"
             "--vpp: of all its virtual stages, a multiple\n"
             "of V)")},
    {CLI_INT("last-stage-layers", po.last_layers, 1, 1 << 20, "N",
             "layers of the last pipeline stage (likewise)")},
    {CLI_STR("pipeline-layout", 0, po.pipeline_layout, "S",
             "every virtual stage's layers, Megatron-LM's\n"
             "--pipeline-model-parallel-layout: E the\n"
             "embedding, t a layer, m an MTP module, L the\n"
             "loss, '|' between stages, x*N, (..)*N\n"
             "(e.g. 'Et*3|(t*4|)*14tmL'); with --pp")},
    {CLI_CALL("recompute", 0, C_RC, "R", "none, selective or full")},
    {CLI_INT("cpu-offloading-num-layers", po.offload_layers, 1, 1 << 20, "N",
             "keep N layers' saved activations in host\n"
             "memory between forward and backward\n"
             "(Megatron-LM's; pp 1, no recompute)")},
/* clang-format off */
#define CHOICE_ROW(F, kind, m, key, what, slot, diff, cli, when, help, ...)    \
  {CLI_PARSE(cli, po.m, strata_##key##_parse, #kind, help)},
    STRATA_PLAN_OFFLOAD_CHOICES(CHOICE_ROW, po)
    /* clang-format on */
    {CLI_INT("recompute-num-layers", po.recompute_layers, 1, 1 << 20, "N",
             "full recompute by units of N layers (see\n"
             "--recompute-method; implies --recompute full)")},
    {CLI_CALL("recompute-modules", 0, C_RCM, "LIST",
              "selective recompute of Megatron-LM's modules\n"
              "(core_attn, layernorm, mlp, moe, moe_act,\n"
              "shared_experts, mla_up_proj; comma-separated;\n"
              "default: the attention scores)")},
    {CLI_TOGGLE("sequence-parallel", po.sequence_parallel,
                "(default: choose)")},
    {CLI_CALL("zero", 0, C_ZERO, "Z",
              "ZeRO stage 0-3 or auto (default 1: distributed\n"
              "optimizer; 2 and 3 shard as FSDP does, with a\n"
              "pipeline too except under DeepSpeed)")},
    {CLI_CALL("recipe", 0, C_RECIPE, "R",
              "megatron (default, 2+4+12 B/param) or zero")},
    {CLI_DOUBLE("optimizer-offload-fraction", po.optimizer_offload, 1e-6, 1, 0,
                "F",
                "that share of the optimizer's states and\n"
                "step on the host (Megatron-LM's\n"
                "--optimizer-cpu-offload; with\n"
                "--precision-aware-optimizer)")},
    {CLI_FLAG("search-offload", po.search_offload, 1,
              "where a configuration does not fit, search\n"
              "the least offloads that make it: the\n"
              "optimizer's share (with --precision-aware-\n"
              "optimizer) and layers' activations (pp 1, no\n"
              "recompute), those not given"),
     NOT_EST("estimate costs the offloads given "
             "(--optimizer-offload-fraction, --cpu-offloading-num-layers)")},
    {CLI_CALL("main-grads-dtype", 0, C_MGD, "T",
              "with --precision-aware-optimizer: the main\n"
              "gradients' type, fp32 (default), bf16, fp16")},
    {CLI_CALL("exp-avg-dtype", 0, C_EAD, "T",
              "... Adam's first moment's (likewise)")},
    {CLI_CALL("exp-avg-sq-dtype", 0, C_EASD, "T",
              "... and its second moment's")},
    {CLI_CALL("framework", 0, C_FW, "F",
              "megatron (default), deepspeed (searches what\n"
              "its config sets up: no cp, ep, vpp, FP8, MTP,\n"
              "--zero 0 or --free) or torchtitan (FSDP2 and\n"
              "PyTorch's pipelining: --zero 3 with --pp > 1;\n"
              "dense llama3/qwen3 in bf16)")},
    {CLI_CALL("stack", 0, C_STACK, "K=V,..",
              "the software stack, over the framework's\n"
              "default: attn=te|fa1|fa2|fa3|sdpa|flex (the\n"
              "attention kernel), gemm=te|eager|compile\n"
              "(the kernels beside the GEMMs),\n"
              "alloc=caching|expandable (PyTorch's\n"
              "allocator, expandable_segments); default\n"
              "megatron attn=te,gemm=te, deepspeed\n"
              "attn=fa2,gemm=te, torchtitan attn=sdpa,\n"
              "gemm=eager, all alloc=caching\n"
              "(docs/cost-model.md)")},
    /* clang-format off */
    STRATA_PLAN_DS_CHOICES(CHOICE_ROW, po)
    STRATA_PLAN_SCHEDULE_CHOICES(CHOICE_ROW, po)
    /* clang-format on */
    {CLI_FLAG("no-search-layouts", po.no_search_layouts, 1,
              "split only as first and last ranks of their\n"
              "own sizes and the embedding and loss counted,\n"
              "not as layouts of chunks of their own sizes\n"
              "(--pipeline-model-parallel-layout)"),
     NOT_EST("estimate costs the split given")},
    {CLI_FLAG("free", po.megatron, 0,
              "lift the Megatron-compatible restrictions:\n"
              "ILP layouts, balanced uneven splits")},
    {CLI_HEAD(
        "What the framework overlaps (docs/cost-model.md, \"Overlap\"):")},
/* clang-format off */
#define SWITCH_ROW(F, m, key, what, codec, slot, diff, cli, def, help)         \
  {CLI_TOGGLE(cli, po.m, help)},
    STRATA_PLAN_SWITCHES(SWITCH_ROW, po)
#undef SWITCH_ROW
    /* clang-format on */
    {CLI_HEAD("Megatron-LM's run-time choices (those of the MoE layer and "
              "CUDA graphs exported; of them only the dispatcher costed):")},
    /* clang-format off */
    STRATA_PLAN_MEGATRON_CHOICES(CHOICE_ROW, po)
#undef CHOICE_ROW
    /* clang-format on */
    {CLI_HEAD("Search and output:")},
    {CLI_INT("top", po.top, 1, 100, "K",
             "best distinct configurations kept (default 3)"),
     NOT_EST("estimate costs the one configuration given")},
    {CLI_PARSE("pareto", po.pareto, strata_pareto_parse, "AXES",
               "also keep the non-dominated configurations:\n"
               "step time against peak memory per device\n"
               "(memory, the default) or against both and\n"
               "the GPUs used (gpus)"),
     .dflt = "memory", NOT_EST("estimate costs the one configuration given")},
    {CLI_PARSE("pareto-filter", pareto_filter, parse_pareto_filter, "LIST",
               "with --pareto: leave out the points that\n"
               "leave GPUs idle (idle: fewer than the\n"
               "cluster's) or pipeline deeper than half the\n"
               "layers (deep); idle,deep both"),
     NOT_EST("estimate costs the one configuration given")},
    {CLI_DOUBLE("tokens", po.tokens, 1, 1e18, 0, "N",
                "the token budget: each plan's time, cost and\n"
                "energy to train N tokens (1e12 reads)")},
    {CLI_PARSE("objective", po.objective, strata_plan_objective_parse, "O",
               "what the choice between node groups alone\n"
               "and spread minimises: time (default), cost\n"
               "or energy (needs --tokens)"),
     NOT_EST("estimate costs the one configuration given")},
    {CLI_STR("gpu-price", 0, po.gpu_price, "USD",
             "US dollars per GPU-hour: USD for every GPU\n"
             "model, or MODEL=USD[,MODEL=USD] (default:\n"
             "the GPU table's on-demand prices)")},
    {CLI_INT("fallbacks", fallbacks, 1, STRATA_FALLBACKS_MAX, "K",
             "also plan the cluster with 1 .. K nodes of\n"
             "each node group lost, kept in the plan file\n"
             "(show/export --fallback N)"),
     NOT_EST("estimate costs the one configuration given")},
    {CLI_INT("threads", po.threads, 1, 1024, "N",
             "solver threads (libuv pool size)")},
    {CLI_STR("cache", 0, po.cache_dir, "DIR",
             "keep solved stages in DIR across runs")},
    {CLI_DOUBLE("time-limit", po.time_limit, 0.001, 1e7, 0, "S",
                "stop searching after S seconds")},
    {CLI_DOUBLE("alpha", po.alpha, 0, 1e12, 0, "A",
                "weight of communication in the stage ILP")},
    {CLI_FLAG("json", json, 1, "JSON output")},
    {CLI_FLAG("timings", timings, 1, "with --json: the run's times")},
    {CLI_FLAG("quiet", po.quiet, 1, "no progress on stderr"),
     NOT_EST("estimate prints no progress")},
    {CLI_STR("output", 'o', output, "PLAN", "save the plan (.splan)"),
     NOT_EST("estimate writes no plan file (its report goes to standard "
             "output; 'strata plan --tp T --pp P ... -o PLAN' saves the "
             "plan of one configuration)")},
    {CLI_STR("baseline", 0, baseline, "OLD.splan",
             "keep OLD's configuration, costed on this\n"
             "cluster, if it fits and its step is within\n"
             "the threshold of the best plan's (a nightly\n"
             "re-plan that changes only when it pays)"),
     NOT_EST("it is for a re-plan")},
    {CLI_CALL("replan-threshold", 0, C_REPLAN, "PCT",
              "the threshold (default 2)"),
     NOT_EST("it goes with --baseline, for a re-plan")},
    {CLI_FLAG("no-compare", no_compare, 1,
              "skip the comparison with the best plan"),
     .only = ESTIMATE,
     .why =
         "plan compares with nothing (estimate compares with the best plan)"},
    {CLI_END}};

static int parse_enum(const char *cmd, int rc) {
  return rc ? cli_usage_error(cmd, "%s", strata_last_error()) : 0;
}

static int call_zero(const char *cmd, const char *arg, strata_plan_opts_t *po) {
  long v;
  int rc;
  if (!strcmp(arg, "auto")) {
    po->zero_stage = STRATA_AUTO;
    return 0;
  }
  if (!(rc = cli_parse_int(cmd, "--zero", arg, 0, 3, &v)))
    po->zero_stage = (int)v;
  return rc;
}

static int call_cp_comm(const char *cmd, const char *arg,
                        strata_plan_opts_t *po) {
  if (!strcmp(arg, "p2p"))
    po->cp_comm = STRATA_CP_P2P;
  else if (!strcmp(arg, "allgather"))
    po->cp_comm = STRATA_CP_ALLGATHER;
  else
    return cli_usage_error(cmd, "--cp-comm '%s': p2p or allgather", arg);
  return 0;
}

/* The options a row cannot store by itself. */
static int call(const char *cmd, int id, const char *arg, void *args) {
  cli_plan_args_t *a = args;
  strata_plan_opts_t *po = &a->po;
  switch (id) {
  case C_ZERO:
    return call_zero(cmd, arg, po);
  case C_CPCOMM:
    return call_cp_comm(cmd, arg, po);
  case C_PREC:
    return parse_enum(cmd, strata_precision_parse(arg, &po->precision));
  case C_FP8R:
    if (!strcmp(arg, "nvfp4"))
      return cli_usage_error(cmd, "--fp8-recipe nvfp4: NVFP4 is FP4's, give "
                                  "--precision fp4");
    return parse_enum(cmd, strata_lowp_parse(arg, &po->fp8_recipe));
  case C_RECIPE:
    return parse_enum(cmd, strata_recipe_parse(arg, &po->recipe));
  case C_RC:
    return parse_enum(cmd, strata_recompute_parse(arg, &po->recompute));
  case C_RCM:
    return parse_enum(
        cmd, strata_recompute_modules_parse(arg, &po->recompute_modules));
  case C_MGD:
    return parse_enum(cmd,
                      strata_state_dtype_parse(arg, &po->main_grads_dtype));
  case C_EAD:
    return parse_enum(cmd, strata_state_dtype_parse(arg, &po->exp_avg_dtype));
  case C_EASD:
    return parse_enum(cmd,
                      strata_state_dtype_parse(arg, &po->exp_avg_sq_dtype));
  case C_FW:
    return parse_enum(cmd, strata_framework_parse(arg, &po->framework));
  case C_STACK:
    return parse_enum(cmd, strata_stack_parse(arg, &po->stack));
  default: /* C_REPLAN */
    a->threshold_given = 1;
    return cli_parse_double(cmd, "--replan-threshold", arg, 0, 1000,
                            &a->replan_threshold);
  }
}

static const char plan_usage[] =
    "Usage: strata plan --model M --cluster SPEC [options]\n"
    "\n"
    "Plan training of model M on a cluster: the configuration (tensor,\n"
    "pipeline and data parallelism, interleaving, layer split, micro-\n"
    "batch, recompute, sequence parallelism) with the least step time\n"
    "that fits in memory, exactly the best of what strata estimate says\n"
    "of each, and every operator's strategy.\n"
    "\n";

static const char plan_tail[] =
    "\n"
    "Exit codes: 0 planned, 1 usage, 2 bad input, 3 the model does not "
    "fit\n(the message says what would), 4 internal error, 5 no plan "
    "found within\n--time-limit (a longer one may find one), 130 "
    "interrupted (Ctrl-C:\nnothing written).\n";

static const char estimate_usage[] =
    "Usage: strata estimate --model M --cluster SPEC --tp T --pp P "
    "[options]\n"
    "\n"
    "Memory of every pipeline rank (weights, gradients, optimizer\n"
    "states, activations of the in-flight micro-batches, transients,\n"
    "CUDA context, workspaces, NCCL buffers, buckets, fragmentation)\n"
    "and the step time of one configuration, with the planner's own\n"
    "evaluation and defaults; then how it compares to the best plan.\n"
    "Options left out are chosen as strata plan would; --dp defaults\n"
    "to all GPUs, --micro-batch to 1, --vpp to 1.  Plan's -o, --top,\n"
    "--quiet, --baseline and --replan-threshold are refused.\n"
    "\n";

static const char estimate_tail[] =
    "\n"
    "A configuration that breaks one of Megatron-LM's rules is refused\n"
    "with the rule (exit 1).  Exit 3 when it does not fit.\n";

/* The names of plan's rows in t (and the tables it includes). */
static int plan_names(const cli_opt_t *t, const char **names, int n, int max) {
  for (; t->kind != CLI_OPT_END && n < max; t++)
    if (t->kind == CLI_OPT_INCLUDE)
      n = plan_names(t->sub, names, n, max);
    else if (t->name && (!t->only || (t->only & PLAN)))
      names[n++] = t->name;
  return n;
}

int cli_plan_option_known(const char *name, const char **near) {
  const char *names[160];
  int n = plan_names(opts, names, 0, 159);
  names[n] = NULL;
  for (int i = 0; i < n; i++)
    if (!strcmp(names[i], name) ||
        (!strncmp(name, "no-", 3) && !strcmp(names[i], name + 3)))
      return 1;
  if (near) *near = st__did_you_mean(name, names);
  return 0;
}

int cli_plan_parse(const char *cmd, int argc, char **argv, int estimate,
                   cli_plan_args_t *a) {
  const cli_optspec_t spec = {cmd,
                              opts,
                              estimate ? estimate_usage : plan_usage,
                              estimate ? estimate_tail : plan_tail,
                              estimate ? ESTIMATE : PLAN,
                              25,
                              call};
  memset(a, 0, sizeof *a);
  strata_plan_opts_init(&a->po);
  int rc = cli_opts_parse(&spec, argc, argv, a, NULL);
  if (rc) return rc;
  if (a->po.micro_batch) a->po.gen.micro_batch = a->po.micro_batch;
  if (!a->model) return cli_usage_error(cmd, "--model is required");
  if (!a->cluster) return cli_usage_error(cmd, "--cluster is required");
  if (a->threshold_given && !a->baseline)
    return cli_usage_error(cmd, "--replan-threshold needs --baseline "
                                "OLD.splan");
  if (!a->threshold_given) a->replan_threshold = 2;
  if (estimate && (!a->po.tp || !a->po.pp))
    return cli_usage_error(cmd, "--tp and --pp are required");
  /* interleaved: every rank's layers a multiple of V (Megatron-LM) */
  int v = a->po.vpp > 1 ? a->po.vpp : 1;
  if (a->po.first_layers % v || a->po.last_layers % v)
    return cli_usage_error(cmd,
                           "%d layers on the %s pipeline stage are not "
                           "divisible by --vpp %d (each virtual stage holds a "
                           "rank's layers / vpp)",
                           a->po.first_layers % v ? a->po.first_layers
                                                  : a->po.last_layers,
                           a->po.first_layers % v ? "first" : "last", v);
  if (a->po.tp_comm_overlap && a->po.sequence_parallel == 0)
    return cli_usage_error(cmd, "--tp-comm-overlap needs sequence "
                                "parallelism (Megatron-LM's rule)");
  a->po.model_spec = a->model;
  return 0;
}

/* The options that say how strata runs, not what was run: no key of a
 * measured run. */
static const char *not_run_keys[] = {
    "model",  "cluster",    "calibration", "json",  "timings",
    "cache",  "time-limit", "threads",     "alpha", "no-compare",
    "tokens", "objective",  "gpu-price"};

/* The message cli_opts_parse printed (its "strata CMD: " and "Try ..."
 * lines taken off), as the library's error. */
static int captured_error(const char *key, char *text, size_t len) {
  const char *msg = text ? text : "";
  char *nl = text ? strstr(text, "\nTry '") : NULL;
  if (nl)
    *nl = 0;
  else if (len && text[len - 1] == '\n')
    text[len - 1] = 0;
  if (!strncmp(msg, "strata estimate: ", 17)) msg += 17;
  /* a value's own message ("unknown FP8 recipe 'x'") names no option */
  return strata_error(STRATA_EBADINPUT, "%s%s%s",
                      strncmp(msg, "--", 2) ? key : "",
                      strncmp(msg, "--", 2) ? ": " : "", msg);
}

/* Parse argv with estimate's table into po, its message captured. */
static int parse_into(const char *key, int argc, char **argv,
                      strata_plan_opts_t *po) {
  const cli_optspec_t spec = {"estimate", opts, "", NULL, ESTIMATE, 25, call};
  cli_plan_args_t a;
  char *text = NULL;
  size_t len = 0;
  FILE *out = st__stdout(), *err = st__stderr();
  FILE *mem = open_memstream(&text, &len);
  if (!mem) return strata_error(STRATA_ENOMEM, "out of memory");
  memset(&a, 0, sizeof a);
  a.po = *po;
  st__set_streams(out == stdout ? NULL : out, mem);
  int rc = cli_opts_parse(&spec, argc, argv, &a, NULL);
  st__set_streams(out == stdout ? NULL : out, err == stderr ? NULL : err);
  fclose(mem);
  if (rc)
    rc = captured_error(key, text, len);
  else
    *po = a.po;
  free(text);
  return rc;
}

int cli_plan_run_key(const char *key, const char *value, strata_plan_opts_t *po,
                     void *ud) {
  char name[64], opt[72];
  (void)ud;
  if (strlen(key) >= sizeof name) return STRATA_ENOTFOUND;
  for (size_t i = 0; i <= strlen(key); i++)
    name[i] = key[i] == '_' ? '-' : key[i];
  for (size_t i = 0; i < sizeof not_run_keys / sizeof *not_run_keys; i++)
    if (!strcmp(name, not_run_keys[i]))
      return strata_error(STRATA_EBADINPUT,
                          "%s: --%s says how strata runs, not what was run: "
                          "no key of a run",
                          key, name);
  const cli_opt_t *o = cli_opts_find(opts, name);
  if (!o || o->kind == CLI_OPT_HEADING) return STRATA_ENOTFOUND;
  if (!value) return 0;
  int toggle = o->kind == CLI_OPT_TOGGLE || o->kind == CLI_OPT_FLAG;
  int off = toggle && (!strcmp(value, "false") || !strcmp(value, "0"));
  if (toggle && !off && strcmp(value, "true") && strcmp(value, "1"))
    return strata_error(STRATA_EBADINPUT, "%s = '%s': wants true or false", key,
                        value);
  if (off && o->kind == CLI_OPT_FLAG) return 0; /* a flag not given */
  snprintf(opt, sizeof opt, "--%s%s", off ? "no-" : "", name);
  char prog[] = "estimate", *val = strata_strdup(value);
  if (!val) return strata_error(STRATA_ENOMEM, "out of memory");
  char *argv[] = {prog, opt, val, NULL};
  int rc = parse_into(key, toggle ? 2 : 3, argv, po);
  /* a string option keeps its pointer (the layout): the reader copies it
   * before val goes */
  if (!rc && po->pipeline_layout == val) po->pipeline_layout = value;
  strata_free(val);
  return rc;
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
    fprintf(st__stderr(),
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
  if (a->calibration && ((e = strata_calibration_load(a->calibration, &cal)) ||
                         (e = strata_cluster_calibrate(*c, &cal))))
    return cli_fail(cmd, e);
  if (a->calibration) warn_fitted_on(cmd, a->calibration, *c);
  return 0;
}

/* Whether --pareto-filter leaves configuration x out. */
static int filtered(const cli_plan_args_t *a, const strata_cluster_t *c,
                    const strata_plan_t *p, const strata_plan_config_t *x) {
  double gpus = (double)x->tp * (x->cp > 1 ? x->cp : 1) * x->pp * x->dp;
  return ((a->pareto_filter & CLI_PARETO_IDLE) &&
          gpus < strata_cluster_gpus(c)) ||
         ((a->pareto_filter & CLI_PARETO_DEEP) && x->pp > p->layers / 2);
}

void cli_pareto_filter(const char *cmd, const cli_plan_args_t *a,
                       const strata_cluster_t *c, strata_plan_t *p) {
  int n = p->n_pareto < 1 ? 0 : 1; /* the plan's own stays first */
  if (!a->pareto_filter || p->n_pareto < 1) return;
  for (int i = 1; i < p->n_pareto; i++)
    if (!filtered(a, c, p, &p->pareto[i])) p->pareto[n++] = p->pareto[i];
  if (!a->po.quiet)
    fprintf(st__stderr(),
            "strata %s: --pareto-filter left out %d of the front's %d "
            "points%s\n",
            cmd, p->n_pareto - n, p->n_pareto,
            filtered(a, c, p, &p->pareto[0])
                ? " (the plan's own kept, though the filter names it)"
                : "");
  p->n_pareto = n;
}
