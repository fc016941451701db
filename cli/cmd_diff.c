/*
 * cmd_diff.c - `strata diff OLD NEW [--json] [--tolerance PCT] [--cluster
 * SPEC [--old-cluster SPEC]]`: what changed between two plan files
 * (degrees, stage boundaries, strategies per run of layers, figures) and,
 * given the clusters, the hosts they run on.
 *
 * The exit code follows diff(1), so scripts (a nightly re-plan) can test
 * it directly: 0 the plans are the same, 1 they differ, 2 trouble (an
 * unreadable file, a bad option), 3 the plans are the same but the hosts
 * they run on changed (the hostfile changes, the configs do not).  Figures are
 * predictions, so by default one that moves by at most 0.5 % is not a
 * difference; --tolerance 0 compares them exactly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/devices.h"
#include "cli/opts.h"
#include "core/json.h"

enum { DIFF_SAME = 0, DIFF_DIFFERENT = 1, DIFF_TROUBLE = 2, DIFF_HOSTS = 3 };

typedef struct {
  strata_diff_opts_t o;
  const char *cluster, *old_cluster;
} diff_args_t;

enum { C_TOLERANCE };

#define CLI_ARGS_T diff_args_t

static const cli_opt_t opts[] = {
    {CLI_FLAG("json", o.json, 1,
              "print {\"identical\": ..., \"changes\": [...]}")},
    {CLI_CALL("tolerance", 0, C_TOLERANCE, "PCT",
              "a figure (step time, tokens/s, MFU, memory,\n"
              "stage times) that moves by at most PCT % is\n"
              "not a change (default 0.5; 0: exact)")},
    {CLI_STR("cluster", 0, cluster, "SPEC",
             "the cluster NEW runs on: compare the hosts\n"
             "the plans run on, in rank order, too")},
    {CLI_STR("old-cluster", 0, old_cluster, "SPEC",
             "the cluster OLD ran on (default: SPEC)")},
    {CLI_END}};

static int call(const char *cmd, int id, const char *arg, void *args);

static const cli_optspec_t opt_spec = {
    "diff",
    opts,
    "Usage: strata diff OLD NEW [--json] [--tolerance PCT]\n"
    "                   [--cluster SPEC [--old-cluster SPEC]]\n"
    "\n"
    "Say what changed from plan file OLD to plan file NEW: degrees\n"
    "and options, stage boundaries, operator strategies per run of\n"
    "layers, step time, tokens/s, MFU and memory with their deltas.\n"
    "Identical plans print \"plans are identical\".\n"
    "\n"
    "Options:\n",
    "\n"
    "Exit codes, as diff(1): 0 the plans are the same (within the\n"
    "tolerance), 1 they differ, 2 trouble (usage, an unreadable or\n"
    "corrupt plan file, a cluster a plan does not fit, out of\n"
    "memory), 3 the plans are the same but the hosts changed.\n",
    0,
    22,
    call};

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

static int call(const char *cmd, int id, const char *arg, void *args) {
  diff_args_t *a = args;
  (void)cmd, (void)id; /* C_TOLERANCE */
  return parse_pct(arg, &a->o.tolerance);
}

/* "node001 node002 ...": the hosts of plan p on its cluster, in the
 * launcher's node order. */
static int hosts_of(const strata_plan_t *p, const char *spec, char **out) {
  strata_device_map_t *m = NULL;
  strata_buf_t b;
  int rc = cli_device_map(p, spec, &m);
  *out = NULL;
  if (rc) return rc;
  strata_buf_init(&b);
  for (int r = 0; r < m->nodes_used; r++)
    for (int i = 0; i < m->n_nodes; i++)
      if (m->nodes[i].node_rank == r)
        strata_buf_printf(&b, "%s%s", r ? " " : "", m->nodes[i].name);
  strata_device_map_destroy(m);
  if (b.oom) {
    strata_buf_free(&b);
    return strata_error(STRATA_ENOMEM, "out of memory");
  }
  *out = strata_buf_steal(&b, NULL);
  return *out ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
}

/* The hosts' line (text) or fields (JSON) added to *text. */
static int add_hosts(char **text, int json, int differs, const char *ha,
                     const char *hb) {
  strata_buf_t b;
  int same = !strcmp(ha, hb);
  strata_buf_init(&b);
  if (json) {
    cJSON *root = NULL;
    int rc = st__json_parse(*text, strlen(*text), "diff", &root);
    if (rc) return rc;
    int bad = st__json_add_bool(root, "hosts_changed", !same) ||
              st__json_add_str(root, "old_hosts", ha) ||
              st__json_add_str(root, "new_hosts", hb);
    char *out = bad ? NULL : st__json_print(root);
    cJSON_Delete(root);
    if (!out) return strata_error(STRATA_ENOMEM, "out of memory");
    strata_free(*text);
    *text = out;
    return 0;
  }
  if (same) return 0;
  if (!differs) /* "plans are identical" alone would hide it */
    strata_buf_puts(&b, "plans are identical, but the hosts changed:\n");
  else
    strata_buf_printf(&b, "%shosts:\n", *text);
  strata_buf_printf(&b, "  %s -> %s\n", ha, hb);
  if (b.oom) {
    strata_buf_free(&b);
    return strata_error(STRATA_ENOMEM, "out of memory");
  }
  strata_free(*text);
  *text = strata_buf_steal(&b, NULL);
  return 0;
}

/* With --cluster: compare the hosts; *hosts_changed says whether they
 * did. */
static int diff_hosts(const diff_args_t *a, const strata_plan_t *pa,
                      const strata_plan_t *pb, int differs, char **text,
                      int *hosts_changed) {
  char *ha = NULL, *hb = NULL;
  int rc;
  *hosts_changed = 0;
  if (!a->cluster) return 0;
  rc = hosts_of(pa, a->old_cluster ? a->old_cluster : a->cluster, &ha);
  if (rc) strata_error_prefix("OLD on its cluster");
  if (!rc && (rc = hosts_of(pb, a->cluster, &hb)))
    strata_error_prefix("NEW on its cluster");
  if (!rc) rc = add_hosts(text, a->o.json, differs, ha, hb);
  if (!rc) *hosts_changed = strcmp(ha, hb) != 0;
  strata_free(ha);
  strata_free(hb);
  return rc;
}

int cli_cmd_diff(int argc, char **argv) {
  const char *cmd = "diff";
  diff_args_t a = {0};
  strata_plan_t *pa = NULL, *pb = NULL;
  char *text = NULL;
  int rc, first, differs = 0, hosts = 0;
  strata_diff_opts_init(&a.o);
  rc = cli_opts_parse(&opt_spec, argc, argv, &a, &first);
  if (rc) return rc < 0 ? DIFF_SAME : DIFF_TROUBLE;
  if (argc - first != 2) {
    cli_usage_error(cmd, "wants two plan files, OLD and NEW");
    return DIFF_TROUBLE;
  }
  if (a.old_cluster && !a.cluster) {
    cli_usage_error(cmd, "--old-cluster is OLD's cluster; give NEW's with "
                         "--cluster too");
    return DIFF_TROUBLE;
  }
  if ((rc = strata_plan_load(argv[first], &pa)) ||
      (rc = strata_plan_load(argv[first + 1], &pb)) ||
      (rc = strata_plan_diff_opts(pa, pb, &a.o, &text, &differs)) ||
      (rc = diff_hosts(&a, pa, pb, differs, &text, &hosts))) {
    cli_fail(cmd, rc);
    rc = DIFF_TROUBLE;
    goto out;
  }
  rc = cli_write_output(cmd, NULL, text, strlen(text));
  rc = rc        ? DIFF_TROUBLE
       : differs ? DIFF_DIFFERENT
       : hosts   ? DIFF_HOSTS
                 : DIFF_SAME;
out:
  strata_free(text);
  strata_plan_destroy(pa);
  strata_plan_destroy(pb);
  return rc;
}
