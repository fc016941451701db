/*
 * cmd_show.c - `strata show PLAN [--json [--timings]]`: print a plan file as
 * the summary table, or as JSON (the fields of docs/plan-format.md).  A file
 * that is not a plan, newer, truncated or corrupt is bad input (exit 2).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const struct option show_opts[] = {
    {"json", no_argument, NULL, 'j'},
    {"timings", no_argument, NULL, 't'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void usage(FILE *f) {
  fprintf(f, "Usage: strata show PLAN [--json [--timings]]\n"
             "\n"
             "Print a plan file (.splan): model, cluster, degrees, batch,\n"
             "options, step time, tokens/s, MFU and peak memory, one row per\n"
             "stage, and the operator strategies of the first stage's layer.\n"
             "\n"
             "Options:\n"
             "  --json        print the plan as JSON instead (the same plan\n"
             "                always prints the same bytes)\n"
             "  --timings     with --json: add search.plan_seconds\n"
             "  -h, --help    this help\n"
             "\n"
             "Exit codes: 0 ok, 1 usage, 2 unreadable or corrupt plan file,\n"
             "4 internal error.\n");
}

static void help(void) {
  usage(stdout);
}

/* json: bit 0 --json, bit 1 --timings */
static int on_opt(int c, void *json) {
  *(int *)json |= c == 'j' ? 1 : 2;
  return 0;
}

int cli_cmd_show(int argc, char **argv) {
  const char *cmd = "show";
  int json = 0, rc, first;
  strata_plan_t *p = NULL;
  char *text = NULL;
  rc = cli_getopt_operands(cmd, argc, argv, ":h", show_opts, 'h', help, on_opt,
                           &json, &first);
  if (rc) return rc < 0 ? CLI_OK : rc;
  if (json == 2)
    return cli_usage_error(cmd, "--timings adds the plan's time to --json; "
                                "give --json too");
  if (first >= argc) return cli_usage_error(cmd, "which plan file?");
  if (first + 1 < argc)
    return cli_usage_error(cmd, "one plan file only, not '%s' too",
                           argv[first + 1]);
  if ((rc = strata_plan_load(argv[first], &p)) ||
      (rc = json ? strata_plan_json_flags(
                       p, json & 2 ? STRATA_PLAN_JSON_TIMINGS : 0, &text)
                 : strata_plan_summary(p, &text))) {
    rc = cli_fail(cmd, rc);
    goto out;
  }
  rc = cli_write_output(cmd, NULL, text, strlen(text));
out:
  strata_free(text);
  strata_plan_destroy(p);
  return rc;
}
