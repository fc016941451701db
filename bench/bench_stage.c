/*
 * bench_stage.c - times strata_stage_solve (min-mem objective, alpha 1) on
 * one transformer layer of bert-large and gpt-7.5b on 2, 4 and 8 devices
 * (1-D mesh) and on an 8x8 mesh, the figures the method reports (0.02,
 * 0.05 and 0.23 s with COPT for 2, 4 and 8 devices); then 4 layers solved
 * as one homogeneous template and as the full ILP (every layer its own
 * variables).  A time covers the whole call: building the stage graph,
 * costing every strategy and edge, reducing and solving the ILP, and the
 * report.  Prints the median of several runs, the ILP size before and
 * after the reductions, and each time's ratio to the 2-device case of
 * the same model measured in the same run.  Never fails on a time.
 *
 * Usage: bench_stage [runs]   (default 15)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata/strata.h"

typedef struct {
  const char *model;
  int d0, d1, layers, homogeneous;
} bench_case_t;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median wall time of `runs` solves; the last result is kept in *last. */
static int time_case(const strata_graph_t *g, const bench_case_t *c, int runs,
                     double *median, strata_stage_result_t **last) {
  strata_stage_opts_t o;
  double *t = calloc((size_t)runs, sizeof *t);
  if (!t) return STRATA_ENOMEM;
  strata_stage_opts_init(&o);
  strata_mesh_default(&o.mesh, c->d0, c->d1);
  o.layer_begin = 0, o.layer_end = c->layers;
  o.with_prologue = 0, o.with_epilogue = 0;
  o.homogeneous = c->homogeneous;
  *last = NULL;
  for (int i = -1; i < runs; i++) { /* run -1 warms the caches, untimed */
    strata_stage_result_t *r = NULL;
    double t0 = strata_now();
    int rc = strata_stage_solve(g, &o, &r);
    if (i >= 0) t[i] = strata_now() - t0;
    if (rc) {
      free(t);
      strata_stage_result_destroy(*last);
      *last = NULL;
      return rc;
    }
    strata_stage_result_destroy(*last);
    *last = r;
  }
  qsort(t, (size_t)runs, sizeof *t, cmp_double);
  *median = t[runs / 2];
  free(t);
  return 0;
}

static void print_row(const bench_case_t *c, const strata_stage_result_t *r,
                      double median, double ref) {
  char mesh[16], sz[64], before[64];
  snprintf(mesh, sizeof mesh, "%dx%d", c->d0, c->d1);
  snprintf(sz, sizeof sz, "%d/%d/%d", r->int_vars, r->cont_vars, r->rows);
  snprintf(before, sizeof before, "%d/%d/%d", r->int_vars_before,
           r->cont_vars_before, r->rows_before);
  printf("%-10s %-6s %2d %-5s %10.3f %7.2f %-10s %-18s %-18s\n", c->model, mesh,
         c->layers, c->homogeneous ? "hom" : "full", median * 1e3,
         ref > 0 ? median / ref : 0.0, strata_stage_status_name(r->status),
         before, sz);
}

int main(int argc, char **argv) {
  static const bench_case_t cases[] = {
      {"bert-large", 2, 1, 1, 1}, {"bert-large", 4, 1, 1, 1},
      {"bert-large", 8, 1, 1, 1}, {"bert-large", 8, 8, 1, 1},
      {"bert-large", 2, 1, 4, 1}, {"bert-large", 2, 1, 4, 0},
      {"bert-large", 4, 1, 4, 1}, {"bert-large", 4, 1, 4, 0},
      {"bert-large", 8, 1, 4, 1}, {"bert-large", 8, 1, 4, 0},
      {"gpt-7.5b", 2, 1, 1, 1},   {"gpt-7.5b", 4, 1, 1, 1},
      {"gpt-7.5b", 8, 1, 1, 1},   {"gpt-7.5b", 8, 8, 1, 1},
      {"gpt-7.5b", 2, 1, 4, 1},   {"gpt-7.5b", 2, 1, 4, 0},
      {"gpt-7.5b", 4, 1, 4, 1},   {"gpt-7.5b", 4, 1, 4, 0},
      {"gpt-7.5b", 8, 1, 4, 1},   {"gpt-7.5b", 8, 1, 4, 0},
  };
  int runs = argc > 1 ? atoi(argv[1]) : 15;
  if (runs < 1) runs = 1;
  strata_init();
  printf("strata_stage_solve, min-mem, alpha 1, median of %d runs; ratio: "
         "to the 2-device single layer of the same model\n",
         runs);
  printf("ILP sizes: integer/continuous/rows before and after the "
         "reductions\n\n");
  printf("%-10s %-6s %2s %-5s %10s %7s %-10s %-18s %-18s\n", "model", "mesh",
         "L", "ilp", "median ms", "ratio", "status", "before", "after");
  const char *loaded = NULL;
  strata_graph_t *g = NULL;
  double ref = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const bench_case_t *c = &cases[i];
    if (!loaded || strcmp(loaded, c->model)) {
      strata_graph_destroy(g);
      g = NULL;
      if (strata_model_load(c->model, NULL, &g)) {
        fprintf(stderr, "bench_stage: %s\n", strata_last_error());
        return 1;
      }
      loaded = c->model;
      ref = 0;
    }
    strata_stage_result_t *r = NULL;
    double median = 0;
    if (time_case(g, c, runs, &median, &r)) {
      fprintf(stderr, "bench_stage: %s %dx%d: %s\n", c->model, c->d0, c->d1,
              strata_last_error());
      continue;
    }
    if (ref == 0) ref = median;
    print_row(c, r, median, ref);
    strata_stage_result_destroy(r);
  }
  strata_graph_destroy(g);
  return 0;
}
