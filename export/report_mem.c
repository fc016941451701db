/*
 * report_mem.c - each pipeline rank's memory against its own GPU's, for
 * the summary, the JSON and the HTML page's memory chart.
 *
 * A plan keeps one device memory (gpu_memory_bytes): on a cluster of one
 * shape every rank's GPU's.  On a mixed cluster the planner writes that of
 * the GPU of its fullest rank (pipeline/hetero.c), so an H100 rank at
 * 76.3 of its 80 GiB would read as 76.3 of the H200's 141 GiB.  Each
 * stage keeps its GPU model's name, and the GPU table (topo/gpu_models.c)
 * gives that model's memory: a rank is measured against it where the
 * plan's figure is the table's for its fullest rank's GPU.  Where it is
 * not (--memory-gib, or a spec's gpu.memory_gib) the plan's figure is
 * what every rank was planned against, and stays every rank's.
 */
#include <string.h>

#include "merge/merge_int.h"

/* The table's memory of rank r's GPU model (0: not known). */
static double table_memory(const strata_plan_t *p, int r) {
  if (p->n_groups <= 1 || r < 0 || r >= p->pp || r >= p->n_stages) return 0;
  const strata_gpu_model_t *m = strata_gpu_model_find(p->stages[r].gpu_model);
  return m ? (double)m->memory_bytes : 0;
}

/* The rank of the most memory in bytes (the one the planner measured). */
static int most_bytes(const strata_plan_t *p) {
  int w = 0;
  for (int r = 1; p->ranks && r < p->pp; r++)
    if (p->ranks[r].mem.total > p->ranks[w].mem.total) w = r;
  return w;
}

/* Whether the ranks' own GPUs' figures apply (see the head). */
static int per_rank(const strata_plan_t *p) {
  if (p->n_groups <= 1 || !p->ranks) return 0;
  double t = table_memory(p, most_bytes(p));
  if (!(t > 0) || t != p->gpu_memory_bytes) return 0;
  for (int r = 0; r < p->pp; r++)
    if (!(table_memory(p, r) > 0)) return 0;
  return 1;
}

double st__rank_capacity(const strata_plan_t *p, int r) {
  return per_rank(p) ? table_memory(p, r) : p->gpu_memory_bytes;
}

const char *st__rank_gpu(const strata_plan_t *p, int r) {
  if (p->n_groups <= 1 || r < 0 || r >= p->pp || r >= p->n_stages) return "";
  return p->stages[r].gpu_model;
}

int st__capacities_differ(const strata_plan_t *p) {
  for (int r = 1; per_rank(p) && r < p->pp; r++)
    if (st__rank_capacity(p, r) != st__rank_capacity(p, 0)) return 1;
  return 0;
}

int st__rank_fullest(const strata_plan_t *p) {
  int w = most_bytes(p);
  for (int r = 0; p->ranks && r < p->pp; r++) {
    double c = st__rank_capacity(p, r), cw = st__rank_capacity(p, w);
    if (c > 0 && cw > 0 &&
        p->ranks[r].mem.total / c > p->ranks[w].mem.total / cw)
      w = r;
  }
  return w;
}

/* "peak memory  78.94 GiB of 80.00 GiB on rank 4's H100-SXM, the fullest
 * against its own GPU (the most, 90.62 GiB of 141.00 GiB, on rank 0's
 * H200)", or as on one shape. */
void st__summary_peak(strata_buf_t *b, const strata_plan_t *p) {
  char x[32], y[32], u[32], v[32];
  if (!st__capacities_differ(p)) {
    strata_buf_printf(b, "  %-20s %s of %s per device\n", "peak memory",
                      strata_fmt_bytes(p->peak_memory_bytes, x, sizeof x),
                      strata_fmt_bytes(p->gpu_memory_bytes, y, sizeof y));
    return;
  }
  int f = st__rank_fullest(p), m = most_bytes(p);
  strata_buf_printf(b,
                    "  %-20s %s of %s on rank %d's %s, the fullest against "
                    "its own %s",
                    "peak memory",
                    strata_fmt_bytes(p->ranks[f].mem.total, x, sizeof x),
                    strata_fmt_bytes(st__rank_capacity(p, f), y, sizeof y), f,
                    st__rank_gpu(p, f), st__dev(p));
  if (m != f)
    strata_buf_printf(b, " (the most, %s of %s, on rank %d's %s)",
                      strata_fmt_bytes(p->ranks[m].mem.total, u, sizeof u),
                      strata_fmt_bytes(st__rank_capacity(p, m), v, sizeof v), m,
                      st__rank_gpu(p, m));
  strata_buf_puts(b, "\n");
}
