/*
 * cmd_trace.c - `strata trace gen`, `strata trace info` and `strata trace
 * import hf`: write a built-in model as a trace file, summarise a model
 * (preset, family, trace file or Hugging Face config) with the totals the
 * planner works from, and turn a Hugging Face config.json into a trace.
 *
 * Both take the same model options, turned into strata_model_load
 * overrides, so `trace info gpt-1.7b --layers 2` describes exactly what
 * `trace gen gpt-1.7b --layers 2` writes.  Option errors are usage errors
 * (exit 1); a model that cannot be built or read is bad input (exit 2).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/opts.h"
#include "core/json.h"
#include "core/stream.h"
#include "core/text.h"

typedef struct {
  const char *spec;
  const char *model;  /* --model, as plan spells the operand */
  const char *output; /* gen */
  int json;           /* info */
  strata_gen_opts_t ov;
} trace_args_t;

enum { GEN = 1, INFO = 2 };
enum { C_DTYPE };

#define CLI_ARGS_T trace_args_t

static const cli_opt_t opts[] = {
    {CLI_HEAD("Model options (override the preset's or family's; not for "
              "trace files;\n"
              "a Hugging Face config takes --layers, --seq, --micro-batch, "
              "--dtype,\n"
              "--[no-]flash-attention and --[no-]dropout):")},
    {CLI_INCLUDE(ov, cli_model_opts)},
    {CLI_INT("micro-batch", ov.micro_batch, 1, 1 << 20, "N",
             "sequences of a micro-batch")},
    {CLI_CALL("dtype", 0, C_DTYPE, "T", "f32, bf16 (default), f16, f8")},
    {CLI_TOGGLE("dropout", ov.dropout, "dropout layers")},
    {CLI_TOGGLE("tie-embeddings", ov.tie_embeddings,
                "the head shares the embedding table")},
    {CLI_HEAD("\nOther options:")},
    {CLI_STR("model", 0, model, "MODEL", "MODEL, as plan takes it")},
    {CLI_STR("output", 'o', output, "FILE", "where to write (default: stdout)"),
     .only = GEN, .why = "info prints to standard output"},
    {CLI_FLAG("json", json, 1, "machine-readable output"), .only = INFO,
     .why = "a trace is JSON already"},
    {CLI_END}};

static int call(const char *cmd, int id, const char *arg, void *args) {
  trace_args_t *a = args;
  (void)id; /* C_DTYPE */
  if (strata_dtype_parse(arg, &a->ov.dtype) || a->ov.dtype >= STRATA_DTYPE_I64)
    return cli_usage_error(cmd, "--dtype wants f32, bf16, f16 or f8, not '%s'",
                           arg);
  return 0;
}

static const char presets_help[] =
    "Model (a preset, a family with its defaults, a trace file, or a\n"
    "Hugging Face config.json: docs/import.md):\n"
    "  presets: bert-large, gpt-1.7b gpt-3.6b gpt-7.5b gpt-18.4b gpt-39.1b\n"
    "           gpt-76.1b gpt-145.6b gpt-310.1b gpt-529.6b gpt-1t,\n"
    "           gpt3-175b, llama2-70b, llama3-405b,\n"
    "           mixtral-8x7b, mixtral-8x22b, deepseek-v3, qwen3-235b-a22b,\n"
    "           gpt-oss-120b\n"
    "  families: gpt, bert, llama\n"
    "  (MODEL may also be given as --model MODEL, as plan takes it)\n"
    "\n";

static void usage_trace(FILE *f) {
  fprintf(f, "Usage: strata trace <gen|info> MODEL [options]\n"
             "       strata trace import hf CONFIG.json [options] [-o FILE]\n"
             "       strata trace import onnx MODEL.onnx [options] [-o F]\n"
             "\n"
             "  gen        write a model as a trace file (JSON, format v1)\n"
             "  info       print a model's size, FLOPs and memory totals\n"
             "  import hf  a Hugging Face config.json as a trace file\n"
             "  import onnx  an ONNX model as a trace file\n"
             "\n"
             "'strata trace gen --help', 'strata trace info --help' and "
             "'strata trace\nimport hf --help' describe each.\n");
}

static char gen_usage[2048], info_usage[2048], import_usage[2048];

static const char *usage_of(const char *cmd) {
  if (!strcmp(cmd, "trace gen")) {
    snprintf(gen_usage, sizeof gen_usage,
             "Usage: strata trace gen MODEL [options] [-o FILE]\n"
             "\n"
             "Write MODEL as a trace file (docs/trace-format.md) to FILE, "
             "or to\nstandard output.  FILE is replaced atomically.\n"
             "\n%s",
             presets_help);
    return gen_usage;
  }
  if (!strcmp(cmd, "trace info")) {
    snprintf(info_usage, sizeof info_usage,
             "Usage: strata trace info MODEL [options] [--json]\n"
             "\n"
             "Print a model's parameters, layers, operators and tensors (with "
             "repeated\nlayers expanded; \"stored\" counts the trace's "
             "entries), FLOPs per\nmicro-batch (forward + backward, no "
             "recompute), weight bytes (parameters\nin the trace's dtype) and "
             "activation bytes saved for backward by one\nmicro-batch.\n"
             "\n%s",
             presets_help);
    return info_usage;
  }
  if (!strcmp(cmd, "trace import onnx"))
    return "Usage: strata trace import onnx MODEL.onnx [options] [-o FILE]\n"
           "\n"
           "Read an ONNX model (a transformer as torch.onnx.export or Hugging "
           "Face's\nexporters write it) and write it as a trace file to FILE, "
           "or to standard\noutput: its nodes with their shapes, its "
           "numbered modules as layers, a\ncross-entropy loss on its logits "
           "(docs/import.md).  It takes --seq and\n--micro-batch where the "
           "file names those dims (a fixed batch is\nre-shaped), and --dtype "
           "(default: the file's); no other model option.\n"
           "\n";
  snprintf(import_usage, sizeof import_usage, "%s",
           "Usage: strata trace import hf CONFIG.json [options] [-o FILE]\n"
           "\n"
           "Read a Hugging Face config.json as its model_type describes it "
           "(the dense,\nmixture-of-experts and multimodal types "
           "docs/import.md lists) and\nwrite it as a trace file "
           "(docs/trace-format.md) to FILE, or to standard\noutput.  A field "
           "that would change the model but is not understood is\nan error "
           "naming it (docs/import.md).  --dtype defaults to the config's\n"
           "torch_dtype, --[no-]dropout to its dropout rates.\n"
           "\n");
  return import_usage;
}

/* Parse argv (argv[0] is the subcommand).  Returns 0 to run, -1 when
 * --help was printed, or CLI_USAGE. */
static int parse_args(const char *cmd, int gen, int argc, char **argv,
                      trace_args_t *a) {
  const cli_optspec_t spec = {cmd, opts, usage_of(cmd), NULL, gen ? GEN : INFO,
                              30,  call};
  int first, rc;
  memset(a, 0, sizeof *a);
  strata_gen_opts_keep(&a->ov);
  rc = cli_opts_parse(&spec, argc, argv, a, &first);
  if (rc) return rc;
  if (a->model && first < argc)
    return cli_usage_error(cmd, "one model only: --model %s, not '%s' too",
                           a->model, argv[first]);
  if (a->model) {
    a->spec = a->model;
    return 0;
  }
  if (first >= argc) return cli_usage_error(cmd, "which model?");
  if (first + 1 < argc)
    return cli_usage_error(cmd, "one model only, not '%s' too",
                           argv[first + 1]);
  a->spec = argv[first];
  return 0;
}

/* ---- gen ---- */

static int trace_gen(int argc, char **argv) {
  const char *cmd = "trace gen";
  trace_args_t a;
  strata_graph_t *g = NULL;
  char *text = NULL;
  size_t len;
  int rc = parse_args(cmd, 1, argc, argv, &a);
  if (rc) return rc < 0 ? CLI_OK : rc;
  if ((rc = strata_model_load(a.spec, &a.ov, &g)) ||
      (rc = strata_trace_write(g, &text, &len))) {
    rc = cli_fail(cmd, rc);
    goto out;
  }
  rc = cli_write_output(cmd, a.output, text, len);
out:
  strata_free(text);
  strata_graph_destroy(g);
  return rc;
}

/* ---- import ---- */

static int trace_import(int argc, char **argv) {
  const char *cmd = "trace import hf";
  trace_args_t a;
  strata_graph_t *g = NULL;
  char *text = NULL;
  size_t len;
  char *help_argv[] = {"import", "hf", "--help", NULL};
  if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
    argc = 3; /* `trace import --help`: import hf's */
    argv = help_argv;
  }
  int onnx = argc >= 2 && !strcmp(argv[1], "onnx");
  if (argc < 2 || (strcmp(argv[1], "hf") && !onnx))
    return cli_usage_error("trace import",
                           "import what? 'strata trace import hf "
                           "CONFIG.json' (a Hugging Face config) or 'strata "
                           "trace import onnx MODEL.onnx'");
  if (onnx) cmd = "trace import onnx";
  int rc = parse_args(cmd, 1, argc - 1, argv + 1, &a);
  if (rc) return rc < 0 ? CLI_OK : rc;
  if ((rc = onnx ? strata_onnx_load(a.spec, &a.ov, &g)
                 : strata_hf_load(a.spec, &a.ov, &g)) ||
      (rc = strata_trace_write(g, &text, &len))) {
    rc = cli_fail(cmd, rc);
    goto out;
  }
  rc = cli_write_output(cmd, a.output, text, len);
out:
  strata_free(text);
  strata_graph_destroy(g);
  return rc;
}

/* ---- info ---- */

/* 1234567 -> "1,234,567" */
static const char *grouped(int64_t v, char *buf, size_t size) {
  char raw[32];
  int n = snprintf(raw, sizeof raw, "%lld", (long long)(v < 0 ? -v : v));
  size_t j = 0;
  if (v < 0 && j + 1 < size) buf[j++] = '-';
  for (int i = 0; i < n && j + 2 < size; i++) {
    if (i && (n - i) % 3 == 0) buf[j++] = ',';
    buf[j++] = raw[i];
  }
  buf[j] = '\0';
  return buf;
}

static void row(const char *key, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void row(const char *key, const char *fmt, ...) {
  va_list ap;
  fprintf(st__stdout(), "  %-20s ", key);
  va_start(ap, fmt);
  vfprintf(st__stdout(), fmt, ap);
  va_end(ap);
  fputc('\n', st__stdout());
}

static void print_model(const strata_graph_t *g) {
  if (!g->hp.hidden) return;
  row("family", "%s", g->hp.family[0] ? g->hp.family : "-");
  row("hidden", "%d", g->hp.hidden);
  row("heads", "%d (kv %d)", g->hp.heads, g->hp.kv_heads);
  row("ffn", "%d", g->hp.ffn);
  row("vocab", "%d", g->hp.vocab);
  row("flash attention", "%s", g->hp.flash_attention ? "yes" : "no");
  row("dropout", "%s", g->hp.dropout ? "yes" : "no");
}

/* 2.3e13 -> "23.09 TFLOP" */
static const char *flops_str(double f, char *buf, size_t size) {
  static const char *const units[] = {"FLOP",  "kFLOP", "MFLOP", "GFLOP",
                                      "TFLOP", "PFLOP", "EFLOP"};
  int u = 0;
  while (f >= 1000 && u < 6)
    f /= 1000, u++;
  snprintf(buf, size, "%.2f %s", f, units[u]);
  return buf;
}

/* Parameters of the multi-token prediction modules' own ops ("mtp<k>."
 * tensors; the embedding table and head they share are the model's). */
static int64_t mtp_params(const strata_graph_t *g) {
  int64_t n = 0;
  for (int i = 0; i < g->n_tensors; i++)
    if (g->tensors[i].kind == STRATA_TENSOR_PARAM &&
        !strncmp(g->tensors[i].name, "mtp", 3))
      n += strata_tensor_numel(&g->tensors[i]);
  return n;
}

static void print_info(const strata_graph_t *g,
                       const strata_graph_stats_t *st) {
  char a[48], b[48];
  fprintf(st__stdout(), "%s\n", g->name);
  print_model(g);
  row("seq_len", "%d", g->seq_len);
  row("micro_batch", "%d", g->micro_batch);
  row("layers", "%d", st->layers);
  row("parameters", "%s (%.2f B)", grouped(st->parameters, a, sizeof a),
      (double)st->parameters / 1e9);
  if (g->hp.mtp_layers > 0) /* publishers count the model without it */
    row("without MTP", "%s (%.2f B)",
        grouped(st->parameters - mtp_params(g), a, sizeof a),
        (double)(st->parameters - mtp_params(g)) / 1e9);
  strata_moe_info_t m;
  strata_graph_moe(g, &m);
  if (m.experts > 0) {
    row("experts", "%d routed, top-%d, hidden %d, in %d layer%s", m.experts,
        m.topk, m.moe_ffn, m.moe_layers, m.moe_layers == 1 ? "" : "s");
    row("active parameters", "%s (%.2f B; %.2f B with the embedding)",
        grouped(st->active_parameters, a, sizeof a),
        (double)st->active_parameters / 1e9,
        (double)(st->active_parameters + st->embedding_parameters) / 1e9);
  }
  if (g->hp.mtp_layers > 0)
    row("multi-token pred.", "%d module%s after the head, each one layer",
        g->hp.mtp_layers, g->hp.mtp_layers > 1 ? "s" : "");
  row("operators", "%s (%d stored)", grouped(st->ops, a, sizeof a), g->n_ops);
  row("tensors", "%s (%d stored)", grouped(st->tensors, a, sizeof a),
      g->n_tensors);
  row("flops/micro-batch", "%s (%.6g)",
      flops_str(st->flops_per_microbatch, a, sizeof a),
      st->flops_per_microbatch);
  row("weight bytes", "%s (%s)",
      strata_fmt_bytes((double)st->weight_bytes, a, sizeof a),
      grouped(st->weight_bytes, b, sizeof b));
  row("activation bytes", "%s (%s)",
      strata_fmt_bytes((double)st->activation_bytes, a, sizeof a),
      grouped(st->activation_bytes, b, sizeof b));
}

static int json_info(const char *cmd, const strata_graph_t *g,
                     const strata_graph_stats_t *st) {
  cJSON *o = cJSON_CreateObject();
  char *text = NULL;
  int rc = o ? 0 : STRATA_ENOMEM;
  if (!rc) rc = st__json_add_str(o, "name", g->name);
  if (!rc) rc = st__json_add_str(o, "family", g->hp.family);
#define NUM_(k, v)                                                             \
  if (!rc) rc = st__json_add_num(o, k, (double)(v))
  NUM_("layers", st->layers);
  NUM_("hidden", g->hp.hidden);
  NUM_("heads", g->hp.heads);
  NUM_("kv_heads", g->hp.kv_heads);
  NUM_("ffn", g->hp.ffn);
  NUM_("vocab", g->hp.vocab);
  NUM_("seq_len", g->seq_len);
  NUM_("micro_batch", g->micro_batch);
  if (!rc) rc = st__json_add_bool(o, "flash_attention", g->hp.flash_attention);
  if (!rc) rc = st__json_add_bool(o, "dropout", g->hp.dropout);
  NUM_("parameters", st->parameters);
  if (g->hp.mtp_layers > 0) NUM_("mtp_layers", g->hp.mtp_layers);
  if (g->hp.mtp_layers > 0)
    NUM_("parameters_without_mtp", st->parameters - mtp_params(g));
  if (g->hp.experts > 0 ||
      st->active_parameters + st->embedding_parameters < st->parameters) {
    NUM_("active_parameters", st->active_parameters);
    NUM_("embedding_parameters", st->embedding_parameters);
  }
  NUM_("ops", st->ops);
  NUM_("tensors", st->tensors);
  NUM_("flops_per_microbatch", st->flops_per_microbatch);
  NUM_("weight_bytes", st->weight_bytes);
  NUM_("activation_bytes", st->activation_bytes);
#undef NUM_
  if (!rc && !(text = st__json_print(o))) rc = STRATA_ENOMEM;
  cJSON_Delete(o);
  if (rc) return cli_fail(cmd, rc);
  rc = cli_write_output(cmd, NULL, text, strlen(text));
  strata_free(text);
  return rc;
}

static int trace_info(int argc, char **argv) {
  const char *cmd = "trace info";
  trace_args_t a;
  strata_graph_t *g = NULL;
  strata_graph_stats_t st;
  int rc = parse_args(cmd, 0, argc, argv, &a);
  if (rc) return rc < 0 ? CLI_OK : rc;
  if ((rc = strata_model_load(a.spec, &a.ov, &g))) return cli_fail(cmd, rc);
  strata_graph_stats(g, &st);
  if (a.json) {
    rc = json_info(cmd, g, &st);
  } else {
    print_info(g, &st);
    rc = fflush(st__stdout()) ? CLI_INTERNAL : CLI_OK;
  }
  strata_graph_destroy(g);
  return rc;
}

int cli_cmd_trace(int argc, char **argv) {
  if (argc < 2) {
    usage_trace(st__stderr());
    return CLI_USAGE;
  }
  if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    usage_trace(st__stdout());
    return CLI_OK;
  }
  if (!strcmp(argv[1], "gen")) return trace_gen(argc - 1, argv + 1);
  if (!strcmp(argv[1], "info")) return trace_info(argc - 1, argv + 1);
  if (!strcmp(argv[1], "import")) return trace_import(argc - 1, argv + 1);
  static const char *const subs[] = {"gen", "info", "import", NULL};
  const char *near = st__did_you_mean(argv[1], subs);
  return cli_usage_error(
      "trace", "unknown subcommand '%s'%s%s%s (gen, info or import)", argv[1],
      near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
}
