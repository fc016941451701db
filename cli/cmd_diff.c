/*
 * cmd_diff.c - `strata diff OLD NEW [--json] [--tolerance PCT]`: what
 * changed between two plan files (degrees, stage boundaries, strategies
 * per run of layers, figures).
 *
 * The exit code follows diff(1), so scripts (a nightly re-plan) can test
 * it directly: 0 the plans are the same, 1 they differ, 2 trouble (an
 * unreadable file, a bad option).  Figures are predictions, so by default
 * one that moves by at most 0.5 % is not a difference; --tolerance 0
 * compares them exactly.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

enum { DIFF_SAME = 0, DIFF_DIFFERENT = 1, DIFF_TROUBLE = 2 };

static const struct option diff_opts[] = {
    {"json", no_argument, NULL, 'j'},
    {"tolerance", required_argument, NULL, 't'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void usage(void) {
  printf("Usage: strata diff OLD NEW [--json] [--tolerance PCT]\n"
         "\n"
         "Say what changed from plan file OLD to plan file NEW: degrees\n"
         "and options, stage boundaries, operator strategies per run of\n"
         "layers, step time, tokens/s, MFU and memory with their deltas.\n"
         "Identical plans print \"plans are identical\".\n"
         "\n"
         "Options:\n"
         "  --json            print {\"identical\": ..., \"changes\": [...]}\n"
         "  --tolerance PCT   a figure (step time, tokens/s, MFU, memory,\n"
         "                    stage times) that moves by at most PCT %% is\n"
         "                    not a change (default 0.5; 0: exact)\n"
         "  -h, --help        this help\n"
         "\n"
         "Exit codes, as diff(1): 0 the plans are the same (within the\n"
         "tolerance), 1 they differ, 2 trouble (usage, an unreadable or\n"
         "corrupt plan file, out of memory).\n");
}

/* "0.5" or "0.5%": a percentage from 0 to 100 (exclusive). */
static int parse_pct(const char *arg, double *out) {
  char *end;
  errno = 0;
  double v = strtod(arg, &end);
  if (end != arg && *end == '%') end++;
  if (errno || end == arg || *end || !(v >= 0 && v < 100))
    return cli_usage_error("diff",
                           "--tolerance wants a percentage from 0 to 100, "
                           "e.g. 0.5, not '%s'",
                           arg);
  *out = v / 100;
  return 0;
}

static int on_opt(int c, void *ctx) {
  strata_diff_opts_t *o = ctx;
  if (c == 'j') {
    o->json = 1;
    return 0;
  }
  return parse_pct(optarg, &o->tolerance);
}

int cli_cmd_diff(int argc, char **argv) {
  const char *cmd = "diff";
  strata_diff_opts_t o;
  strata_plan_t *a = NULL, *b = NULL;
  char *text = NULL;
  int rc, first, differs = 0;
  strata_diff_opts_init(&o);
  rc = cli_getopt_operands(cmd, argc, argv, ":h", diff_opts, 'h', usage, on_opt,
                           &o, &first);
  if (rc) return rc < 0 ? DIFF_SAME : DIFF_TROUBLE;
  if (argc - first != 2) {
    cli_usage_error(cmd, "wants two plan files, OLD and NEW");
    return DIFF_TROUBLE;
  }
  if ((rc = strata_plan_load(argv[first], &a)) ||
      (rc = strata_plan_load(argv[first + 1], &b)) ||
      (rc = strata_plan_diff_opts(a, b, &o, &text, &differs))) {
    cli_fail(cmd, rc);
    rc = DIFF_TROUBLE;
    goto out;
  }
  rc = cli_write_output(cmd, NULL, text, strlen(text));
  rc = rc ? DIFF_TROUBLE : differs ? DIFF_DIFFERENT : DIFF_SAME;
out:
  strata_free(text);
  strata_plan_destroy(a);
  strata_plan_destroy(b);
  return rc;
}
