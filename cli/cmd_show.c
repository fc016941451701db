/*
 * cmd_show.c - `strata show PLAN [--json [--timings]] [--cluster SPEC]`:
 * print a plan file as the summary table, or as JSON (the fields of
 * docs/plan-format.md), with the GPUs it runs on (cli/devices.c).  A file
 * that is not a plan, newer, truncated or corrupt is bad input (exit 2).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/devices.h"

static const struct option show_opts[] = {
    {"json", no_argument, NULL, 'j'},
    {"timings", no_argument, NULL, 't'},
    {"cluster", required_argument, NULL, 'c'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void usage(FILE *f) {
  fprintf(
      f, "Usage: strata show PLAN [--json [--timings]] [--cluster SPEC]\n"
         "\n"
         "Print a plan file (.splan): model, cluster, degrees, batch,\n"
         "options, step time, tokens/s, MFU and peak memory, one row per\n"
         "stage, the operator strategies of the first stage's layer, and\n"
         "the devices: the nodes it runs on and the nodes left out, why.\n"
         "\n"
         "Options:\n"
         "  --json        print the plan as JSON instead (the same plan\n"
         "                always prints the same bytes; \"device_map\": every\n"
         "                rank's host, local GPU and coordinates)\n"
         "  --timings     with --json: add search.plan_seconds\n"
         "  --cluster SPEC  the cluster it runs on (default: the preset\n"
         "                the plan names; a plan made on a spec file\n"
         "                needs it for the devices)\n"
         "  -h, --help    this help\n"
         "\n"
         "Exit codes: 0 ok, 1 usage, 2 unreadable or corrupt plan file\n"
         "or a --cluster it does not fit, 4 internal error.\n");
}

static void help(void) {
  usage(stdout);
}

typedef struct {
  int json; /* bit 0 --json, bit 1 --timings */
  const char *cluster;
} show_args_t;

static int on_opt(int c, void *ctx) {
  show_args_t *a = ctx;
  if (c == 'c')
    a->cluster = optarg;
  else
    a->json |= c == 'j' ? 1 : 2;
  return 0;
}

int cli_cmd_show(int argc, char **argv) {
  const char *cmd = "show";
  int rc, first;
  show_args_t a = {0, NULL};
  strata_plan_t *p = NULL;
  char *text = NULL;
  rc = cli_getopt_operands(cmd, argc, argv, ":h", show_opts, 'h', help, on_opt,
                           &a, &first);
  if (rc) return rc < 0 ? CLI_OK : rc;
  if (a.json == 2)
    return cli_usage_error(cmd, "--timings adds the plan's time to --json; "
                                "give --json too");
  if (first >= argc) return cli_usage_error(cmd, "which plan file?");
  if (first + 1 < argc)
    return cli_usage_error(cmd, "one plan file only, not '%s' too",
                           argv[first + 1]);
  if ((rc = strata_plan_load(argv[first], &p)) ||
      (rc = a.json ? strata_plan_json_flags(
                         p, a.json & 2 ? STRATA_PLAN_JSON_TIMINGS : 0, &text)
                   : strata_plan_summary(p, &text)) ||
      (rc = cli_show_devices(p, a.cluster, a.json & 1, &text))) {
    rc = cli_fail(cmd, rc);
    goto out;
  }
  rc = cli_write_output(cmd, NULL, text, strlen(text));
out:
  strata_free(text);
  strata_plan_destroy(p);
  return rc;
}
