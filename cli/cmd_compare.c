/*
 * cmd_compare.c - `strata compare`: the four objectives on one stage side
 * by side (min-mem, min-comm, megatron, dp), all costed by the same model.
 */
#include <string.h>

#include "cli/stageargs.h"
#include "core/json.h"
#include "core/stream.h"

static const char usage[] =
    "Usage: strata compare --model M --devices N [options]\n"
    "\n"
    "Solve or evaluate one stage under each objective -- min-mem (the\n"
    "method), min-comm (Alpa-like), megatron (Megatron-LM's tensor-parallel\n"
    "layout) and dp (pure data parallelism) -- and print peak memory per\n"
    "device, redundancy, communication and predicted time side by side.\n"
    "It takes the options of 'strata stage' but --objective and\n"
    "--export-lp:\n"
    "\n";

#define N_OBJ 4

typedef struct {
  strata_stage_result_t *r[N_OBJ];
  char err[N_OBJ][256];
} runs_t;

static int run_all(const cli_stage_args_t *a, const strata_graph_t *g,
                   runs_t *runs) {
  for (int k = 0; k < N_OBJ; k++) {
    strata_stage_opts_t so = a->so;
    so.objective = (strata_objective_t)k;
    int rc = strata_stage_solve(g, &so, &runs->r[k]);
    if (rc == STRATA_EINVAL || rc == STRATA_EBADINPUT) {
      /* a fixed layout that cannot be placed: reported, not fatal */
      snprintf(runs->err[k], sizeof runs->err[k], "%s", strata_last_error());
      continue;
    }
    if (rc) return rc;
  }
  return 0;
}

static double step_time(const strata_stage_result_t *r) {
  return r->comm_seconds + r->compute_seconds;
}

static int solved(const strata_stage_result_t *r) {
  return r && (r->status == STRATA_STAGE_OPTIMAL ||
               r->status == STRATA_STAGE_FEASIBLE);
}

static void human(const cli_stage_args_t *a, const runs_t *runs) {
  char b1[32], b2[32], b3[32];
  const strata_mesh_t *m = &a->so.mesh;
  fprintf(st__stdout(), "model %s on %d x %d devices, alpha %g\n\n", a->model,
          m->shape[0], m->ndim > 1 ? m->shape[1] : 1, a->so.alpha);
  fprintf(st__stdout(), "%-9s %-11s %14s %16s %14s %10s\n", "objective",
          "status", "peak/device", "redundancy", "comm", "time ms");
  for (int k = 0; k < N_OBJ; k++) {
    const strata_stage_result_t *r = runs->r[k];
    const char *name = strata_objective_name((strata_objective_t)k);
    if (!r) {
      fprintf(st__stdout(), "%-9s %-11s %s\n", name, "n/a", runs->err[k]);
      continue;
    }
    if (!solved(r)) {
      fprintf(st__stdout(), "%-9s %-11s needs %s per device\n", name,
              strata_stage_status_name(r->status),
              strata_fmt_bytes(r->min_memory_bytes, b1, sizeof b1));
      continue;
    }
    fprintf(st__stdout(), "%-9s %-11s %14s %16s %14s %10.3f\n", name,
            strata_stage_status_name(r->status),
            strata_fmt_bytes(r->peak_memory_bytes, b1, sizeof b1),
            strata_fmt_bytes(r->memory_redundancy_bytes, b2, sizeof b2),
            strata_fmt_bytes(r->comm_bytes, b3, sizeof b3), step_time(r) * 1e3);
  }
  const strata_stage_result_t *mm = runs->r[0], *mg = runs->r[2];
  if (solved(mm) && solved(mg) && mg->peak_memory_bytes > 0)
    fprintf(st__stdout(),
            "\nmin-mem saves %.1f%% of megatron's peak memory per device\n",
            100.0 * (1.0 - mm->peak_memory_bytes / mg->peak_memory_bytes));
}

static int add_run(cJSON *arr, int k, const runs_t *runs) {
  cJSON *o = st__json_push_object(arr);
  if (!o) return strata_error(STRATA_ENOMEM, "out of memory");
  const strata_stage_result_t *r = runs->r[k];
  int rc = st__json_add_str(o, "objective",
                            strata_objective_name((strata_objective_t)k));
  if (!r) {
    if (!rc) rc = st__json_add_str(o, "status", "not-applicable");
    if (!rc) rc = st__json_add_str(o, "error", runs->err[k]);
    return rc;
  }
  if (!rc)
    rc = st__json_add_str(o, "status", strata_stage_status_name(r->status));
  if (!rc && r->status == STRATA_STAGE_INFEASIBLE)
    rc = st__json_add_num(o, "min_memory_bytes", r->min_memory_bytes);
  if (!solved(r)) return rc;
  if (!rc) rc = st__json_add_num(o, "peak_memory_bytes", r->peak_memory_bytes);
  if (!rc)
    rc = st__json_add_num(o, "memory_redundancy_bytes",
                          r->memory_redundancy_bytes);
  if (!rc) rc = st__json_add_num(o, "comm_bytes", r->comm_bytes);
  if (!rc) rc = st__json_add_num(o, "comm_seconds", r->comm_seconds);
  if (!rc) rc = st__json_add_num(o, "compute_seconds", r->compute_seconds);
  if (!rc) rc = st__json_add_num(o, "time_seconds", step_time(r));
  if (!rc)
    rc = st__json_add_num(o, "zero_redundancy_bytes", r->zero_redundancy_bytes);
  return rc;
}

static int json_out(const cli_stage_args_t *a, const runs_t *runs) {
  cJSON *root = cJSON_CreateObject(), *arr = NULL;
  int rc = root ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
  if (!rc) rc = st__json_add_str(root, "model", a->model);
  if (!rc) rc = st__json_add_num(root, "devices", a->devices);
  if (!rc) rc = st__json_add_num(root, "alpha", a->so.alpha);
  if (!rc) {
    arr = cJSON_AddArrayToObject(root, "objectives");
    if (!arr) rc = strata_error(STRATA_ENOMEM, "out of memory");
  }
  for (int k = 0; k < N_OBJ && !rc; k++)
    rc = add_run(arr, k, runs);
  char *text = rc ? NULL : st__json_print(root);
  cJSON_Delete(root);
  if (!text) return cli_fail("compare", rc ? rc : STRATA_ENOMEM);
  rc = cli_write_output("compare", NULL, text, strlen(text));
  strata_free(text);
  return rc;
}

int cli_cmd_compare(int argc, char **argv) {
  cli_stage_args_t a;
  strata_graph_t *g = NULL;
  runs_t runs;
  memset(&runs, 0, sizeof runs);
  int rc = cli_stage_args_parse("compare", argc, argv, &a, usage, NULL);
  if (rc) return rc < 0 ? CLI_OK : rc;
  rc = cli_stage_setup("compare", &a, &g);
  if (rc) return rc;
  int e = run_all(&a, g, &runs);
  if (e)
    rc = cli_fail("compare", e);
  else if (a.json)
    rc = json_out(&a, &runs);
  else
    human(&a, &runs);
  for (int k = 0; k < N_OBJ; k++)
    strata_stage_result_destroy(runs.r[k]);
  strata_graph_destroy(g);
  return rc;
}
