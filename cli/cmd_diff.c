/*
 * cmd_diff.c - `strata diff OLD NEW [--json]`: what changed between two
 * plan files (degrees, stage boundaries, strategies per run of layers,
 * figures).  It exits 0 whether or not the plans differ: a difference is
 * the answer, not a failure (identical plans print "plans are
 * identical"); scripts test the JSON's "identical" field instead.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const struct option diff_opts[] = {
    {"json", no_argument, NULL, 'j'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void usage(FILE *f) {
  fprintf(f, "Usage: strata diff OLD NEW [--json]\n"
             "\n"
             "Say what changed from plan file OLD to plan file NEW: degrees\n"
             "and options, stage boundaries, operator strategies per run of\n"
             "layers, step time, tokens/s, MFU and memory with their deltas.\n"
             "Identical plans print \"plans are identical\".\n"
             "\n"
             "Options:\n"
             "  --json        print {\"identical\": ..., \"changes\": [...]}\n"
             "  -h, --help    this help\n"
             "\n"
             "Exit codes: 0 compared (whether or not the plans differ),\n"
             "1 usage, 2 unreadable or corrupt plan file, 4 internal error.\n");
}

int cli_cmd_diff(int argc, char **argv) {
  const char *cmd = "diff";
  int c, json = 0, rc, differs = 0;
  strata_plan_t *a = NULL, *b = NULL;
  char *text = NULL;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", diff_opts, NULL)) != -1) {
    if (c == 'h') {
      usage(stdout);
      return CLI_OK;
    }
    if (c == 'j') {
      json = 1;
      continue;
    }
    return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
  }
  if (argc - optind != 2)
    return cli_usage_error(cmd, "wants two plan files, OLD and NEW");
  if ((rc = strata_plan_load(argv[optind], &a)) ||
      (rc = strata_plan_load(argv[optind + 1], &b)) ||
      (rc = strata_plan_diff(a, b, json, &text, &differs))) {
    rc = cli_fail(cmd, rc);
    goto out;
  }
  rc = cli_write_output(cmd, NULL, text, strlen(text));
out:
  strata_free(text);
  strata_plan_destroy(a);
  strata_plan_destroy(b);
  return rc;
}
