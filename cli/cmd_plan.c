/*
 * cmd_plan.c - `strata plan`: plan a model on a cluster (the configuration
 * with the least step time that fits, every operator's strategy), print
 * its summary and optionally save it; with --baseline, yesterday's
 * configuration instead while it pays (baseline.c).  Options: planargs.c.
 */
#include <signal.h>
#include <string.h>

#include "cli/baseline.h"
#include "cli/devices.h"
#include "core/json.h"
#include "core/stream.h"

static int with_baseline(const cli_plan_args_t *a, const cli_baseline_t *v,
                         char **text) {
  strata_buf_t b;
  if (!a->baseline) return 0;
  if (a->json) return cli_baseline_json(v, text);
  strata_buf_init(&b);
  strata_buf_puts(&b, *text);
  int rc = cli_baseline_text(v, &b);
  if (rc) {
    strata_buf_free(&b);
    return rc;
  }
  strata_free(*text);
  *text = strata_buf_steal(&b, NULL);
  return 0;
}

/* The JSON has the run's time only with --timings: the same plan then
 * prints the same bytes. */
static int report(const cli_plan_args_t *a, strata_plan_t *p,
                  const cli_baseline_t *v) {
  char *text = NULL;
  unsigned flags = a->timings ? STRATA_PLAN_JSON_TIMINGS : 0;
  int rc = a->json ? strata_plan_json_flags(p, flags, &text)
                   : strata_plan_summary(p, &text);
  /* the device map, as `show --json` has it */
  if (!rc && a->json) rc = cli_show_devices(p, a->cluster, 1, &text);
  if (!rc) rc = with_baseline(a, v, &text);
  if (rc) {
    strata_free(text);
    return cli_fail("plan", rc);
  }
  rc = cli_write_output("plan", NULL, text, strlen(text));
  strata_free(text);
  return rc;
}

/* --json when nothing fits: a document a script can read (the reason, as
 * the message on standard error says it), and exit 3 as without --json. */
static int infeasible_json(const cli_plan_args_t *a, int err) {
  cJSON *root = cJSON_CreateObject();
  const char *msg = strata_last_error();
  char *text = NULL;
  int bad =
      !root ||
      st__json_add_num(root, "schema_version", STRATA_JSON_SCHEMA_VERSION) ||
      st__json_add_bool(root, "feasible", 0) ||
      st__json_add_str(root, "model", a->model ? a->model : "") ||
      st__json_add_str(root, "cluster", a->cluster ? a->cluster : "") ||
      st__json_add_str(root, "reason", msg[0] ? msg : "nothing fits") ||
      (err == STRATA_ETIMEDOUT && st__json_add_bool(root, "time_limited", 1));
  if (!bad) text = st__json_print(root);
  cJSON_Delete(root);
  if (text) cli_write_output("plan", NULL, text, strlen(text));
  strata_free(text);
  return cli_fail("plan", err);
}

/* SIGINT: stop the search and queued stage solves; the command then exits
 * without writing anything (outputs are written only at the end,
 * atomically). */
static volatile int interrupted;
static void on_sigint(int sig) {
  (void)sig;
  interrupted = 1;
}

int cli_cmd_plan(int argc, char **argv) {
  cli_plan_args_t a;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  cli_baseline_t v;
  interrupted = 0; /* a process may run many plans (strata_command_run) */
  double start = strata_now(); /* --time-limit counts the loading too */
  int rc = cli_plan_parse("plan", argc, argv, 0, &a), e;
  if (rc) return rc < 0 ? CLI_OK : rc;
  if (a.pareto_filter && !a.po.pareto)
    return cli_usage_error("plan", "--pareto-filter filters the Pareto "
                                   "front: give --pareto too");
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old);
  a.po.cancel = &interrupted;
  /* a typo in -o is found before the search, not after it */
  if ((e = cli_output_writable("-o", a.output))) {
    rc = cli_fail("plan", e);
    goto out;
  }
  if ((rc = cli_plan_load("plan", &a, &g, &c))) goto out;
  a.po.time_start = start;
  e = strata_pipeline_plan(g, c, &a.po, &p);
  a.po.time_start = 0; /* the fallbacks' plans: each its own limit */
  if (e || (e = strata_merge_stitch(p, g, c)) ||
      (a.baseline && (e = cli_baseline_apply(&a, g, c, &p, &v)))) {
    rc = a.json && (e == STRATA_EINFEASIBLE || e == STRATA_ETIMEDOUT) &&
                 !interrupted
             ? infeasible_json(&a, e)
             : cli_fail("plan", e);
    goto out;
  }
  cli_pareto_filter("plan", &a, c, p);
  if ((rc = cli_plan_fallbacks("plan", &a, g, p))) goto out;
  if (interrupted) {
    rc = cli_fail("plan", strata_error(STRATA_ECANCELED,
                                       "interrupted: nothing was written"));
    goto out;
  }
  /* the summary first: a plan that cannot be saved is still shown (and
   * the exit code says it was not saved) */
  rc = report(&a, p, &v);
  /* a plan the planner made that the file's checks refuse is its bug:
   * an internal error (exit 4), not bad input */
  if (a.output &&
      ((e = strata_plan_check_made(p, a.output)) ||
       (e = strata_plan_save(p, a.output))) &&
      !rc)
    rc = cli_fail("plan", e);
  if (!a.po.quiet)
    fprintf(st__stderr(),
            "strata plan: %d stage subproblems (%d distinct), %d ILPs solved, "
            "%d from the cache; %d configurations bounded, %d costed exactly; "
            "%.2f s\n",
            p->subproblems_total, p->subproblems_distinct, p->ilps_solved,
            p->cache_hits, p->configs_bounded, p->configs_evaluated,
            p->plan_seconds);
out:
  sigaction(SIGINT, &old, NULL);
  if (interrupted && rc) rc = 130; /* 128 + SIGINT, as shells report it */
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return rc;
}
