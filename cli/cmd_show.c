/*
 * cmd_show.c - `strata show PLAN [--json [--timings]] [--cluster SPEC]`:
 * print a plan file as the summary table, or as JSON (the fields of
 * docs/plan-format.md), with the GPUs it runs on (cli/devices.c).  A file
 * that is not a plan, newer, truncated or corrupt is bad input (exit 2).
 */
#include <stdio.h>
#include <string.h>

#include "cli/devices.h"
#include "cli/opts.h"

typedef struct {
  int json, timings, fallback;
  const char *cluster;
} show_args_t;

#define CLI_ARGS_T show_args_t

static const cli_opt_t opts[] = {
    {CLI_FLAG("json", json, 1,
              "print the plan as JSON instead (the same plan\n"
              "always prints the same bytes; \"device_map\": every\n"
              "rank's host, local GPU and coordinates)")},
    {CLI_FLAG("timings", timings, 1, "with --json: add search.plan_seconds")},
    {CLI_STR("cluster", 0, cluster, "SPEC",
             "the cluster it runs on (default: the preset\n"
             "the plan names; a plan made on a spec file\n"
             "needs it for the devices)")},
    {CLI_INT("fallback", fallback, 1, STRATA_FALLBACKS_MAX, "N",
             "the plan's fallback for N nodes of each node\n"
             "group lost (strata plan --fallbacks)")},
    {CLI_END}};

static const cli_optspec_t opt_spec = {
    "show",
    opts,
    "Usage: strata show PLAN [--json [--timings]] [--cluster SPEC]\n"
    "                  [--fallback N]\n"
    "\n"
    "Print a plan file (.splan): model, cluster, degrees, batch,\n"
    "options, step time, tokens/s, MFU and peak memory, one row per\n"
    "stage, the operator strategies of the first stage's layer, and\n"
    "the devices: the nodes it runs on and the nodes left out, why.\n"
    "\n"
    "Options:\n",
    "\n"
    "Exit codes: 0 ok, 1 usage, 2 unreadable or corrupt plan file\n"
    "or a --cluster it does not fit, 4 internal error.\n",
    0,
    18,
    NULL};

int cli_cmd_show(int argc, char **argv) {
  const char *cmd = "show";
  int rc, first;
  show_args_t a = {0, 0, 0, NULL};
  strata_plan_t *p = NULL;
  char *text = NULL;
  rc = cli_opts_parse(&opt_spec, argc, argv, &a, &first);
  if (rc) return rc < 0 ? CLI_OK : rc;
  if (a.timings && !a.json)
    return cli_usage_error(cmd, "--timings adds the plan's time to --json; "
                                "give --json too");
  if (first >= argc) return cli_usage_error(cmd, "which plan file?");
  if (first + 1 < argc)
    return cli_usage_error(cmd, "one plan file only, not '%s' too",
                           argv[first + 1]);
  if ((rc = strata_plan_load(argv[first], &p)) ||
      (rc = cli_select_fallback(argv[first], a.fallback, &p)) ||
      (rc = a.json ? strata_plan_json_flags(
                         p, a.timings ? STRATA_PLAN_JSON_TIMINGS : 0, &text)
                   : strata_plan_summary(p, &text)) ||
      (rc = cli_show_devices(p, a.cluster, a.json, &text))) {
    rc = cli_fail(cmd, rc);
    goto out;
  }
  rc = cli_write_output(cmd, NULL, text, strlen(text));
out:
  strata_free(text);
  strata_plan_destroy(p);
  return rc;
}
