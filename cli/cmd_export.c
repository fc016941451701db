/*
 * cmd_export.c - `strata export megatron|deepspeed|timeline PLAN [-o FILE]`:
 * Megatron-LM arguments, a DeepSpeed config or a Chrome-trace timeline of
 * a plan file, to standard output or atomically to FILE.  A plan the
 * target cannot run (a free-mode plan for Megatron-LM, ZeRO-2 with
 * pipelining for DeepSpeed, ...) is refused with the reason (exit 2).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const struct option export_opts[] = {
    {"output", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static const struct {
  const char *name;
  int (*run)(const strata_plan_t *, char **);
} targets[] = {
    {"megatron", strata_export_megatron},
    {"deepspeed", strata_export_deepspeed},
    {"timeline", strata_export_timeline},
};

static void usage(FILE *f) {
  fprintf(f,
          "Usage: strata export megatron|deepspeed|timeline PLAN "
          "[-o FILE]\n"
          "\n"
          "  megatron   Megatron-LM arguments, one per line ending in '\\'\n"
          "  deepspeed  a DeepSpeed config (JSON)\n"
          "  timeline   the 1F1B schedule in Chrome trace format (Perfetto,\n"
          "             chrome://tracing)\n"
          "\n"
          "Options:\n"
          "  -o, --output FILE   write FILE atomically (default: standard "
          "output)\n"
          "  -h, --help          this help\n"
          "\n"
          "Exit codes: 0 ok, 1 usage, 2 unreadable plan file or a plan the\n"
          "target cannot run (the message says why), 4 internal error.\n");
}

static int find_target(const char *name) {
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
    if (!strcmp(name, targets[i].name)) return (int)i;
  return -1;
}

static int parse(int argc, char **argv, const char **out, int *t,
                 const char **plan) {
  int c;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":ho:", export_opts, NULL)) != -1) {
    if (c == 'h') {
      usage(stdout);
      return -1;
    } else if (c == 'o') {
      *out = optarg;
    } else if (c == ':') {
      return cli_usage_error("export", "option '%s' needs a value",
                             argv[optind - 1]);
    } else {
      return cli_usage_error("export", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (argc - optind != 2)
    return cli_usage_error("export", "wants a target (megatron, deepspeed, "
                                     "timeline) and a plan file");
  if ((*t = find_target(argv[optind])) < 0)
    return cli_usage_error("export",
                           "unknown target '%s' (megatron, "
                           "deepspeed, timeline)",
                           argv[optind]);
  *plan = argv[optind + 1];
  return 0;
}

int cli_cmd_export(int argc, char **argv) {
  const char *cmd = "export", *out = NULL, *path = NULL;
  int t = 0, rc = parse(argc, argv, &out, &t, &path);
  strata_plan_t *p = NULL;
  char *text = NULL;
  if (rc) return rc < 0 ? CLI_OK : rc;
  if (!(rc = strata_plan_load(path, &p)) && (rc = targets[t].run(p, &text)))
    strata_error_prefix("%s", path); /* which plan the target refused */
  if (rc) {
    rc = cli_fail(cmd, rc);
    goto out;
  }
  rc = cli_write_output(cmd, out, text, strlen(text));
out:
  strata_free(text);
  strata_plan_destroy(p);
  return rc;
}
