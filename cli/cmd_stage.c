/*
 * cmd_stage.c - `strata stage`: solve one pipeline stage's strategy ILP
 * (or evaluate a fixed layout) and report memory, communication and every
 * operator's strategy.
 */
#include <math.h>
#include <string.h>

#include "cli/stageargs.h"
#include "core/json.h"
#include "core/stream.h"

static const char usage[] =
    "Usage: strata stage --model M --devices N [options]\n"
    "\n"
    "Choose every operator's strategy for one pipeline stage with the ILP\n"
    "'memory redundancy + alpha * communication' under a memory limit.\n"
    "\n";

static const char tail[] =
    "\n"
    "Exit codes: 0 solved, 1 usage, 2 bad input, 3 infeasible, 4 "
    "internal.\n";

static int json_report(const cli_stage_args_t *a,
                       const strata_stage_result_t *r) {
  cJSON *root = cJSON_CreateObject(), *ilp, *ops, *mem;
  int rc = root ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
  if (!rc)
    rc = st__json_add_str(root, "status", strata_stage_status_name(r->status));
  if (!rc) rc = st__json_add_str(root, "model", a->model);
  if (!rc) rc = st__json_add_num(root, "devices", r->devices);
  if (!rc)
    rc = st__json_add_str(root, "objective_kind",
                          strata_objective_name(a->so.objective));
  if (!rc) rc = st__json_add_num(root, "alpha", r->alpha);
  if (!rc) rc = st__json_add_num(root, "objective", r->objective);
  if (!rc && isfinite(r->gap)) { /* a proven gap: the search's word */
    rc = st__json_add_num(root, "objective_bound", r->objective_bound);
    if (!rc) rc = st__json_add_num(root, "gap", r->gap);
  }
  if (!rc) rc = st__json_add_bool(root, "homogeneous", r->homogeneous);
  if (!rc)
    rc = st__json_add_num(root, "memory_redundancy_bytes",
                          r->memory_redundancy_bytes);
  if (!rc) rc = st__json_add_num(root, "comm_bytes", r->comm_bytes);
  if (!rc) rc = st__json_add_num(root, "comm_seconds", r->comm_seconds);
  if (!rc) rc = st__json_add_num(root, "compute_seconds", r->compute_seconds);
  if (!rc)
    rc = st__json_add_num(root, "peak_memory_bytes", r->peak_memory_bytes);
  if (!rc)
    rc = st__json_add_num(root, "zero_redundancy_bytes",
                          r->zero_redundancy_bytes);
  if (!rc)
    rc = st__json_add_num(root, "activations_per_layer_bytes",
                          r->activations_per_layer);
  if (!rc && r->status == STRATA_STAGE_INFEASIBLE) {
    rc = st__json_add_num(root, "min_memory_bytes", r->min_memory_bytes);
    if (!rc) rc = st__json_add_str(root, "hint", r->hint ? r->hint : "");
  }
  if (!rc) rc = st__json_add_num(root, "solve_seconds", r->solve_seconds);
  if (!rc) {
    mem = cJSON_AddObjectToObject(root, "memory");
    ilp = cJSON_AddObjectToObject(root, "ilp");
    ops = cJSON_AddArrayToObject(root, "ops");
    if (!mem || !ilp || !ops) rc = strata_error(STRATA_ENOMEM, "out of memory");
  }
  if (!rc) rc = st__json_add_num(mem, "weights_bytes", r->mem.weights);
  if (!rc) rc = st__json_add_num(mem, "gradients_bytes", r->mem.gradients);
  if (!rc) rc = st__json_add_num(mem, "optimizer_bytes", r->mem.optimizer);
  if (!rc) rc = st__json_add_num(mem, "activations_bytes", r->mem.activations);
  if (!rc) rc = st__json_add_num(mem, "transient_bytes", r->mem.transient);
  if (!rc) rc = st__json_add_num(ilp, "integer_vars", r->int_vars);
  if (!rc) rc = st__json_add_num(ilp, "continuous_vars", r->cont_vars);
  if (!rc) rc = st__json_add_num(ilp, "rows", r->rows);
  if (!rc)
    rc = st__json_add_num(ilp, "integer_vars_before", r->int_vars_before);
  if (!rc)
    rc = st__json_add_num(ilp, "continuous_vars_before", r->cont_vars_before);
  if (!rc) rc = st__json_add_num(ilp, "rows_before", r->rows_before);
  for (int i = 0; i < r->n_ops && !rc; i++) {
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(ops, o)) {
      cJSON_Delete(o);
      rc = strata_error(STRATA_ENOMEM, "out of memory");
      break;
    }
    rc = st__json_add_str(o, "name", r->ops[i].name);
    if (!rc) rc = st__json_add_num(o, "layer", r->ops[i].layer);
    if (!rc) rc = st__json_add_num(o, "repeat", r->ops[i].repeat);
    if (!rc) rc = st__json_add_str(o, "strategy", r->ops[i].strategy);
    if (!rc) rc = st__json_add_str(o, "placement", r->ops[i].placement);
    if (!rc) rc = st__json_add_num(o, "memory_bytes", r->ops[i].mem_bytes);
  }
  char *text = rc ? NULL : st__json_print(root);
  cJSON_Delete(root);
  if (!text) return cli_fail("stage", rc ? rc : STRATA_ENOMEM);
  rc = cli_write_output("stage", NULL, text, strlen(text));
  strata_free(text);
  return rc;
}

/* The proven gap: what a time limit leaves open. */
static void print_gap(const strata_stage_result_t *r) {
  if (!isfinite(r->gap)) {
    fprintf(st__stdout(), "gap        unknown (no lower bound was proven)\n");
    return;
  }
  fprintf(st__stdout(),
          "gap        %.3g%% (objective %.6g, proven lower bound %.6g)\n",
          100 * r->gap, r->objective, r->objective_bound);
}

static void human_report(const cli_stage_args_t *a,
                         const strata_stage_result_t *r) {
  char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
  fprintf(st__stdout(), "model      %s\n", a->model);
  const strata_mesh_t *m = &a->so.mesh;
  fprintf(st__stdout(), "mesh       %d x %d (%d devices), %.0f GB/s",
          m->shape[0], m->ndim > 1 ? m->shape[1] : 1, r->devices,
          m->axis[0].bandwidth / 1e9);
  if (m->ndim > 1)
    fprintf(st__stdout(), " x %.0f GB/s", m->axis[1].bandwidth / 1e9);
  fprintf(st__stdout(), "\n");
  fprintf(st__stdout(), "objective  %s, alpha %g\n",
          strata_objective_name(a->so.objective), r->alpha);
  fprintf(st__stdout(), "status     %s%s\n",
          strata_stage_status_name(r->status),
          r->homogeneous ? " (best homogeneous: one solution per repeated "
                           "layer)"
                         : "");
  if (r->status == STRATA_STAGE_INFEASIBLE) {
    fprintf(st__stdout(), "needs      %s per device at least\n",
            strata_fmt_bytes(r->min_memory_bytes, b1, sizeof b1));
    fprintf(st__stdout(), "hint       %s\n", r->hint ? r->hint : "");
    return;
  }
  if (r->status == STRATA_STAGE_NO_SOLUTION) return;
  fprintf(st__stdout(),
          "peak       %s per device (weights %s, gradients %s, optimizer %s, "
          "activations %s, transient %s)\n",
          strata_fmt_bytes(r->peak_memory_bytes, b1, sizeof b1),
          strata_fmt_bytes(r->mem.weights, b2, sizeof b2),
          strata_fmt_bytes(r->mem.gradients, b3, sizeof b3),
          strata_fmt_bytes(r->mem.optimizer, b4, sizeof b4),
          strata_fmt_bytes(r->mem.activations, b5, sizeof b5),
          strata_fmt_bytes(r->mem.transient, b6, sizeof b6));
  fprintf(st__stdout(),
          "redundancy %s over all devices (zero-redundancy bound %s per "
          "device)\n",
          strata_fmt_bytes(r->memory_redundancy_bytes, b1, sizeof b1),
          strata_fmt_bytes(r->zero_redundancy_bytes, b2, sizeof b2));
  fprintf(st__stdout(),
          "comm       %s bytes-equivalent, %.3f ms; compute %.3f ms\n",
          strata_fmt_bytes(r->comm_bytes, b1, sizeof b1), r->comm_seconds * 1e3,
          r->compute_seconds * 1e3);
  fprintf(st__stdout(),
          "ilp        %d integer, %d continuous, %d rows (before reduction "
          "%d, %d, %d); %.3f s\n",
          r->int_vars, r->cont_vars, r->rows, r->int_vars_before,
          r->cont_vars_before, r->rows_before, r->solve_seconds);
  print_gap(r);
  fprintf(st__stdout(), "\n%-16s %6s %-14s %-18s %12s\n", "op", "x", "strategy",
          "output", "memory");
  for (int i = 0; i < r->n_ops; i++)
    fprintf(st__stdout(), "%-16s %6d %-14s %-18s %12s\n", r->ops[i].name,
            r->ops[i].repeat, r->ops[i].strategy, r->ops[i].placement,
            strata_fmt_bytes(r->ops[i].mem_bytes, b1, sizeof b1));
}

int cli_cmd_stage(int argc, char **argv) {
  cli_stage_args_t a;
  strata_graph_t *g = NULL;
  strata_stage_result_t *r = NULL;
  int rc = cli_stage_args_parse("stage", argc, argv, &a, usage, tail);
  if (rc) return rc < 0 ? CLI_OK : rc;
  rc = cli_stage_setup("stage", &a, &g);
  if (rc) return rc;
  if (a.export_lp) {
    int e = strata_stage_export_lp(g, &a.so, a.export_lp);
    if (e) {
      rc = cli_fail("stage", e);
      goto out;
    }
  }
  int e = strata_stage_solve(g, &a.so, &r);
  if (e) {
    rc = cli_fail("stage", e);
    goto out;
  }
  if (a.json)
    rc = json_report(&a, r);
  else
    human_report(&a, r);
  if (!rc && r->status == STRATA_STAGE_INFEASIBLE) {
    if (!a.json)
      fprintf(st__stderr(), "strata stage: infeasible: %s\n", r->hint);
    rc = CLI_INFEASIBLE;
  }
  if (!rc && r->status == STRATA_STAGE_FEASIBLE)
    fprintf(st__stderr(),
            "strata stage: the time limit stopped the search; the solution "
            "is within %.3g%% of the optimum (raise --time-limit to close "
            "the gap)\n",
            100 * r->gap);
  if (!rc && r->status == STRATA_STAGE_NO_SOLUTION) {
    fprintf(st__stderr(), "strata stage: the time limit was reached before any "
                          "solution was found; raise --time-limit\n");
    rc = CLI_INFEASIBLE;
  }
out:
  strata_stage_result_destroy(r);
  strata_graph_destroy(g);
  return rc;
}
