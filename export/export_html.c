/*
 * export_html.c - one self-contained HTML page of a plan (`strata export
 * html`): the summary with the frameworks that can run it, the pipeline
 * schedule of one step (the planner's own simulation, as the timeline
 * export has it), each pipeline rank's memory stacked by item against the
 * GPU's capacity, the devices of each pipeline rank on the cluster's
 * nodes (grouped by leaf switch when the cluster says), the
 * communication heat map of one step (merge/traffic.c: bytes between
 * every pair of devices, nodes or pipeline ranks, one grid per kind of
 * collective) with each stage's layers and strategies, the
 * runners-up, and with --pareto the front (export_pareto.c).
 *
 * Plain HTML, CSS and inline SVG written with printf: no script, no font,
 * no image, nothing fetched, so the page opens anywhere, offline, and is
 * safe to mail around.  Text from the plan (model and cluster names, which
 * may be file paths) is escaped.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/text.h"
#include "merge/merge_int.h"
#include "merge/traffic.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define W 1100 /* drawing width in px */
#define LABEL 110

static void esc(strata_buf_t *b, const char *s) {
  st__put_html(b, s);
}

/* A colour per pipeline rank, spread around the hue circle. */
static void rank_color(char *buf, size_t n, int r, int pp) {
  snprintf(buf, n, "hsl(%d,65%%,55%%)", pp > 0 ? (r * 360 / pp) % 360 : 0);
}

static const char css[] =
    "<style>\n"
    "body{font:14px/1.4 sans-serif;margin:24px;color:#222;background:#fff}\n"
    "h1{font-size:20px}h2{font-size:16px;margin-top:28px}\n"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px "
    "8px;text-align:right}\n"
    "th{background:#f2f2f2}td.l,th.l{text-align:left}\n"
    "table+table{margin-top:12px}\n"
    ".yes{color:#1a7f37}.no{color:#b42318}\n"
    "svg text{font:11px sans-serif;fill:#333}\n"
    ".key span{display:inline-block;width:12px;height:12px;margin:0 4px 0 "
    "12px;vertical-align:middle}\n"
    "</style>\n";

/* What the plan keeps on the host (the modules' names are strata's own,
 * no input), a row of the summary table where there is any. */
static void offload_row(strata_buf_t *b, const strata_plan_t *p) {
  if (!(p->offload_layers > 0 || p->optimizer_offload > 0 ||
        p->offload_modules > 0))
    return;
  strata_buf_puts(b, "<tr><th class=l>offloaded</th><td>");
  const char *sep = "";
  if (p->offload_layers > 0) {
    strata_buf_printf(b, "%d layers' activations", p->offload_layers);
    sep = "; ";
  }
  if (p->offload_modules > 0) {
    strata_buf_printf(b, "%sthe activations of", sep);
    for (int i = 0, k = 0; strata_offload_modules_name(i); i++)
      if (p->offload_modules & (1 << i))
        strata_buf_printf(b, "%s %s", k++ ? "," : "",
                          strata_offload_modules_name(i));
    sep = "; ";
  }
  if (p->optimizer_offload > 0)
    strata_buf_printf(b, "%s%.3g of the optimizer", sep, p->optimizer_offload);
  strata_buf_printf(b, " (%.2f GiB a %s on the host)</td></tr>\n",
                    p->host_memory_gib, st__dev(p));
}

/* The peak memory against the device's; on a mixed cluster, the rank
 * fullest against its own GPU's. */
static void peak_row(strata_buf_t *b, const strata_plan_t *p) {
  char pk[32], gm[32];
  int f = st__rank_fullest(p), own = st__capacities_differ(p);
  strata_buf_printf(
      b, "<tr><th class=l>peak memory</th><td>%s of %s",
      strata_fmt_bytes(own ? p->ranks[f].mem.total : p->peak_memory_bytes, pk,
                       sizeof pk),
      strata_fmt_bytes(own ? st__rank_capacity(p, f) : p->gpu_memory_bytes, gm,
                       sizeof gm));
  if (own) {
    strata_buf_printf(b, " on rank %d's ", f);
    esc(b, st__rank_gpu(p, f));
    strata_buf_printf(b, ", the fullest against its own %s", st__dev(p));
  }
  strata_buf_puts(b, "</td></tr>\n</table>\n");
}

/* The token budget's time, cost and energy (--tokens). */
static void cost_row(strata_buf_t *b, const strata_plan_t *p) {
  if (!(p->tokens > 0) || !(p->train_seconds > 0)) return;
  strata_buf_printf(b, "<tr><th class=l>%.4g tokens</th><td>%.1f days",
                    p->tokens, p->train_seconds / 86400);
  if (p->cost_usd > 0)
    strata_buf_printf(b, ", $%.0f ($%.2f an hour)", p->cost_usd,
                      p->price_usd_per_hour);
  if (p->energy_kwh > 0)
    strata_buf_printf(b, ", %.0f kWh (%.1f kW)", p->energy_kwh, p->power_kw);
  strata_buf_printf(b, ", objective %s",
                    strata_plan_objective_name(p->objective));
  if (p->time_best_seconds > 0)
    strata_buf_printf(b, " (the fastest plan: %.1f days, $%.0f, %.0f kWh)",
                      p->time_best_seconds / 86400, p->time_best_cost,
                      p->time_best_energy);
  strata_buf_puts(b, "</td></tr>\n");
}

/* The step's items, each named, in the order of the step. */
static void step_row(strata_buf_t *b, const strata_plan_t *p) {
  st__step_item_t li[ST__STEP_ITEMS];
  int n = st__step_list(&p->step_items, li);
  strata_buf_puts(b, "<tr><th class=l>step items</th><td>");
  for (int i = 0; i < n; i++)
    strata_buf_printf(b, "%s%s %.1f ms", i ? " + " : "", li[i].what,
                      li[i].v * 1e3);
  strata_buf_puts(b, "</td></tr>\n");
}

static void summary(strata_buf_t *b, const strata_plan_t *p) {
  st__fw_verdict_t v[ST__N_FRAMEWORKS];
  strata_buf_puts(b, "<h1>");
  esc(b, p->model);
  strata_buf_puts(b, " on ");
  esc(b, p->cluster);
  strata_buf_printf(b,
                    "</h1>\n<table>\n"
                    "<tr><th class=l>devices</th><td>%d</td></tr>\n"
                    "<tr><th class=l>parallelism</th><td>",
                    p->devices);
  st__plan_degrees(b, p);
  strata_buf_printf(
      b,
      " (%s mode)</td></tr>\n"
      "<tr><th class=l>batch</th><td>micro %d, global %d, %d "
      "micro-batches</td></tr>\n"
      "<tr><th class=l>ZeRO / recompute</th><td>%d / %s</td></tr>\n",
      p->megatron ? "Megatron" : "free", p->micro_batch, p->global_batch,
      p->n_micro, p->zero_stage, strata_recompute_name(p->recompute));
  offload_row(b, p);
  strata_buf_printf(b,
                    "<tr><th class=l>step</th><td>%.3f ms, %.0f tokens/s, "
                    "MFU %.1f %% of the %s peak</td></tr>\n",
                    p->step_seconds * 1e3, p->tokens_per_second, p->mfu * 100,
                    st__peak_name(p));
  step_row(b, p);
  cost_row(b, p);
  peak_row(b, p);
  st__frameworks(p, v);
  strata_buf_puts(b, "<h2>Frameworks</h2>\n<ul>\n");
  for (int i = 0; i < ST__N_FRAMEWORKS; i++) {
    strata_buf_printf(b, "<li>%s: <b class=%s>%s</b>", v[i].name,
                      v[i].ok ? "yes" : "no", v[i].ok ? "yes" : "no");
    if (!v[i].ok) {
      strata_buf_puts(b, " &mdash; ");
      esc(b, v[i].why);
    }
    strata_buf_puts(b, "</li>\n");
  }
  strata_buf_puts(b, "</ul>\n");
}

/* ---- the schedule ---- */

static void sched_rows(strata_buf_t *b, const strata_plan_t *p,
                       const strata_sched_t *S, double scale) {
  int n = S->n_micro;
  for (int k = 0; k < p->n_stages; k++) {
    int r = p->stages[k].rank; /* in [0, pp) in a plan that decoded */
    if (r < 0 || r >= p->pp) continue;
    int y = 20 + 22 * r;
    for (int m = 0; m < n; m++) {
      double f0 = S->f_start[k * n + m], b0 = S->b_start[k * n + m];
      strata_buf_printf(b,
                        "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
                        "height=\"18\" fill=\"#4c78a8\"/>"
                        "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
                        "height=\"18\" fill=\"#54a24b\"/>\n",
                        LABEL + f0 * scale, y, S->fwd[k] * scale,
                        LABEL + b0 * scale, y, S->bwd[k] * scale);
    }
  }
}

/* What the drawing's length is: the schedule simulated from the stages'
 * times, not the plan's step time (the summary's, printed once), which is
 * the end of the rank finishing last with its exposed gradient sync plus
 * the parameter gather, the optimizer step and the fixed overhead
 * (model/eval.c, step_of). */
static void sched_note(strata_buf_t *b, const strata_plan_t *p, double makespan,
                       double drawn) {
  const strata_step_items_t *it = &p->step_items;
  double rest = it->param_gather + it->optimizer + it->overhead;
  strata_buf_printf(b,
                    "<p>Simulated from the stages' times: the last backward "
                    "ends at %.3f ms",
                    makespan * 1e3);
  if (drawn > makespan)
    strata_buf_printf(b,
                      "; the drawing, with each rank's gradient sync after "
                      "its last backward, at %.3f ms",
                      drawn * 1e3);
  strata_buf_printf(b,
                    ". The step time above (%.3f ms) is the end of the "
                    "rank that finishes last with its exposed gradient sync "
                    "(%.3f ms) plus the parameter gather (%.3f ms), the "
                    "optimizer step (%.3f ms) and the fixed overhead "
                    "(%.3f ms).</p>\n",
                    p->step_seconds * 1e3, (p->step_seconds - rest) * 1e3,
                    it->param_gather * 1e3, it->optimizer * 1e3,
                    it->overhead * 1e3);
}

static int schedule(strata_buf_t *b, const strata_plan_t *p) {
  strata_sched_t S;
  double *scratch = NULL;
  int rc = st__plan_schedule(p, &S, &scratch);
  if (rc) goto out;
  double end = S.makespan;
  for (int r = 0; r < p->pp; r++)
    if (p->ranks[r].end_seconds + p->ranks[r].sync_seconds > end)
      end = p->ranks[r].end_seconds + p->ranks[r].sync_seconds;
  double scale = end > 0 ? (W - LABEL - 10) / end : 0;
  int h = 20 + 22 * p->pp + 24;
  strata_buf_puts(b, "<h2>Pipeline schedule of one step</h2>\n");
  sched_note(b, p, S.makespan, end);
  strata_buf_printf(b,
                    "<p class=key><span style=\"background:#4c78a8\"></span>"
                    "forward<span style=\"background:#54a24b\"></span>"
                    "backward<span style=\"background:#f58518\"></span>"
                    "gradient sync</p>\n"
                    "<svg width=\"%d\" height=\"%d\" "
                    "xmlns=\"http://www.w3.org/2000/svg\">\n",
                    W, h);
  for (int r = 0; r < p->pp; r++) {
    const strata_plan_rank_t *k = &p->ranks[r];
    strata_buf_printf(b, "<text x=\"0\" y=\"%d\">rank %d</text>\n",
                      20 + 22 * r + 13, r);
    if (k->sync_seconds > 0)
      strata_buf_printf(b,
                        "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
                        "height=\"18\" fill=\"#f58518\"/>\n",
                        LABEL + k->end_seconds * scale, 20 + 22 * r,
                        k->sync_seconds * scale);
  }
  sched_rows(b, p, &S, scale);
  strata_buf_printf(b,
                    "<text x=\"%d\" y=\"12\">0 ms</text><text x=\"%d\" "
                    "y=\"12\" text-anchor=\"end\">%.1f ms</text>\n</svg>\n",
                    LABEL, W - 10, end * 1e3);
out:
  strata_sched_free(&S);
  strata_free(scratch);
  return rc;
}

/* ---- memory ---- */

static const struct {
  const char *name, *color;
  size_t off;
} items[] = {
#define IT(f, c)                                                               \
  { #f, c, offsetof(strata_mem_items_t, f) }
    IT(weights, "#4c78a8"),     IT(gradients, "#72b7b2"),
    IT(optimizer, "#54a24b"),   IT(activations, "#f58518"),
    IT(transient, "#e45756"),   IT(context, "#b279a2"),
    IT(workspace, "#ff9da6"),   IT(nccl, "#9d755d"),
    IT(buckets, "#bab0ac"),     IT(fragmentation, "#eeca3b"),
    IT(calibration, "#79706e"),
#undef IT
};
#define N_ITEMS (sizeof items / sizeof items[0])

static double item(const strata_mem_items_t *m, size_t i) {
  return *(const double *)((const char *)m + items[i].off);
}

/* Each rank's own GPU's memory, a mark on its bar, where the ranks' GPUs
 * differ (a mixed cluster): the rank's GPU named on its label. */
static void rank_capacities(strata_buf_t *b, const strata_plan_t *p,
                            double scale) {
  for (int r = 0; r < p->pp; r++) {
    double c = st__rank_capacity(p, r), cx = LABEL + c * scale;
    int y = 10 + 22 * r;
    strata_buf_printf(b,
                      "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" "
                      "stroke=\"#b42318\" stroke-width=\"2\" "
                      "stroke-dasharray=\"4 3\"><title>rank %d: capacity "
                      "%.1f GiB</title></line>\n",
                      cx, y - 2, cx, y + 20, r, c / GIB);
  }
}

static void memory(strata_buf_t *b, const strata_plan_t *p) {
  int own = st__capacities_differ(p);
  double top = p->gpu_memory_bytes;
  for (int r = 0; r < p->pp; r++) {
    if (p->ranks[r].mem.total > top) top = p->ranks[r].mem.total;
    if (st__rank_capacity(p, r) > top) top = st__rank_capacity(p, r);
  }
  double scale = top > 0 ? (W - LABEL - 60) / top : 0;
  int h = 10 + 22 * p->pp + 20;
  strata_buf_puts(b, "<h2>Memory per device of each pipeline rank</h2>\n"
                     "<p class=key>");
  for (size_t i = 0; i < N_ITEMS; i++)
    strata_buf_printf(b, "<span style=\"background:%s\"></span>%s",
                      items[i].color, items[i].name);
  strata_buf_printf(b,
                    "</p>\n<svg width=\"%d\" height=\"%d\" "
                    "xmlns=\"http://www.w3.org/2000/svg\">\n",
                    W, h);
  for (int r = 0; r < p->pp; r++) {
    const strata_mem_items_t *m = &p->ranks[r].mem;
    double x = LABEL;
    int y = 10 + 22 * r;
    strata_buf_printf(b, "<text x=\"0\" y=\"%d\">rank %d", y + 13, r);
    if (p->n_groups > 1) {
      strata_buf_puts(b, " ");
      esc(b, st__rank_gpu(p, r));
    }
    strata_buf_puts(b, "</text>\n");
    for (size_t i = 0; i < N_ITEMS; i++) {
      double w = item(m, i) * scale;
      if (w <= 0) continue;
      strata_buf_printf(b,
                        "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
                        "height=\"18\" fill=\"%s\"><title>%s %.2f "
                        "GiB</title></rect>\n",
                        x, y, w, items[i].color, items[i].name,
                        item(m, i) / GIB);
      x += w;
    }
    strata_buf_printf(b, "<text x=\"%.2f\" y=\"%d\">%.1f GiB</text>\n", x + 4,
                      y + 13, m->total / GIB);
  }
  if (own) { /* each rank's own capacity, on its bar */
    rank_capacities(b, p, scale);
    strata_buf_printf(b,
                      "<text x=\"%d\" y=\"%d\">dashed: each rank's own "
                      "%s's memory</text>\n</svg>\n",
                      LABEL, h - 2, st__dev(p));
    return;
  }
  double cx = LABEL + p->gpu_memory_bytes * scale;
  strata_buf_printf(b,
                    "<line x1=\"%.2f\" y1=\"4\" x2=\"%.2f\" y2=\"%d\" "
                    "stroke=\"#b42318\" stroke-width=\"2\" "
                    "stroke-dasharray=\"4 3\"/>\n<text x=\"%.2f\" y=\"%d\" "
                    "text-anchor=\"end\">capacity %.1f GiB</text>\n</svg>\n",
                    cx, cx, h - 14, cx, h - 2, p->gpu_memory_bytes / GIB);
}

/* ---- devices ---- */

/* The pipeline rank holding global rank g, or -1 (unused). */
static int owner(const strata_plan_t *p, int g) {
  for (int r = 0; r < p->pp && r < p->n_stages; r++) {
    const strata_plan_stage_t *st = &p->stages[r];
    long long n = (long long)st->nodes * st->gpus_per_node * p->dp;
    if (g >= st->first_rank && g < st->first_rank + n) return st->rank;
  }
  return -1;
}

static void cell(strata_buf_t *b, const strata_plan_t *p, int x, int y, int s,
                 int g, const char *what) {
  char col[32];
  int r = owner(p, g);
  if (r >= 0)
    rank_color(col, sizeof col, r, p->pp);
  else
    snprintf(col, sizeof col, "#ddd");
  strata_buf_printf(b,
                    "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                    "fill=\"%s\"><title>%s: pipeline rank %d</title></rect>\n",
                    x, y, s, s, col, what, r);
}

/* At most this many squares: a square per GPU up to it, else one per
 * node, or per run of nodes (`per` of them) on a cluster larger still, so
 * the page's size does not grow with the devices. */
#define SQUARES 4096

static void devices(strata_buf_t *b, const strata_plan_t *p,
                    const strata_export_opts_t *o) {
  int G = o && o->gpus_per_node > 0 ? o->gpus_per_node : 0, leaf;
  char col[32], what[64];
  if (G < 1) G = p->devices < 8 ? p->devices : 8;
  if (G < 1) G = 1;
  int all = (int)(((long long)p->devices + G - 1) / G);
  int per = all > SQUARES ? (all + SQUARES - 1) / SQUARES : 1;
  int nodes = (all + per - 1) / per; /* squares, when not per GPU */
  int per_gpu = (long long)all * G <= SQUARES, s = per_gpu ? 10 : 8;
  int per_row = per_gpu ? (W - 20) / (G * (s + 1) + 6) : (W - 20) / (s + 2);
  if (per_row < 1) per_row = 1;
  leaf = o && o->nodes_per_leaf > 0 ? o->nodes_per_leaf : 0;
  int rows = (nodes + per_row - 1) / per_row;
  int cw = per_gpu ? G * (s + 1) + 6 : s + 2;
  strata_buf_printf(b, "<h2>Devices: %d node%s of %d %ss", all,
                    all > 1 ? "s" : "", G, st__dev(p));
  if (!per_gpu && per == 1) strata_buf_puts(b, " (one square per node)");
  if (per > 1)
    strata_buf_printf(b, " (one square per %d nodes, coloured by the first)",
                      per);
  strata_buf_puts(b, "</h2>\n<p class=key>");
  for (int r = 0; r < p->pp && r < 64; r++) {
    rank_color(col, sizeof col, r, p->pp);
    strata_buf_printf(b, "<span style=\"background:%s\"></span>rank %d", col,
                      r);
  }
  strata_buf_printf(b,
                    "</p>\n<svg width=\"%d\" height=\"%d\" "
                    "xmlns=\"http://www.w3.org/2000/svg\">\n",
                    W, rows * (s + 8) + 10);
  for (int n = 0; n < nodes; n++) {
    int x = 10 + (n % per_row) * cw, y = 5 + (n / per_row) * (s + 8);
    if (per > 1) {
      long long first = (long long)n * per * G;
      snprintf(what, sizeof what, "nodes %lld to %lld", first / G,
               (first / G + per < all ? first / G + per : all) - 1);
      cell(b, p, x, y, s, (int)first, what);
      continue;
    }
    if (leaf > 0 && n % leaf == 0 && (n / leaf) > 0)
      strata_buf_printf(b,
                        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
                        "stroke=\"#333\"><title>leaf switch %d</title>"
                        "</line>\n",
                        x - 2, y - 2, x - 2, y + s + 2, n / leaf);
    for (int g = 0; g < (per_gpu ? G : 1); g++) {
      snprintf(what, sizeof what, "node %d %s %d", n, st__dev(p), g);
      cell(b, p, x + g * (s + 1), y, s, n * G + g, what);
    }
  }
  strata_buf_puts(b, "</svg>\n");
}

/* ---- the communication heat map ---- */

/* Cells a side drawn per device; more devices fold to nodes, more nodes
 * to pipeline ranks (traffic.c). */
#define HM_CELLS 64
#define HM_SIDE 232 /* px of one grid */
#define HM_GAP 40
#define HM_LEVELS 8

/* Light to dark (viridis, reversed): a level per eighth of the decades
 * between the smallest drawn cell and the largest. */
static const char *const hm_palette[HM_LEVELS] = {
    "#fde725", "#a0da39", "#4ac16d", "#1fa187",
    "#277f8e", "#365c8d", "#46327e", "#440154"};

typedef struct {
  double lo, hi; /* bytes: the scale's ends (lo > 0) */
} hm_scale_t;

static hm_scale_t hm_scale_of(const st__traffic_t *t) {
  hm_scale_t sc = {0, 0};
  size_t cells = (size_t)ST__TR_KINDS * t->n * t->n;
  double least = 0;
  for (size_t i = 0; i < cells; i++) {
    double v = t->bytes[i];
    if (v > sc.hi) sc.hi = v;
    if (v > 0 && (least == 0 || v < least)) least = v;
  }
  /* at most four decades: smaller cells take the lightest colour */
  sc.lo = least > sc.hi / 1e4 ? least : sc.hi / 1e4;
  if (sc.lo >= sc.hi) sc.lo = sc.hi / 2;
  return sc;
}

/* The level of a cell: which eighth of [log lo, log hi] it falls in. */
static int hm_level(const hm_scale_t *sc, double v) {
  if (v <= sc->lo) return 0;
  int l = (int)(HM_LEVELS * log(v / sc->lo) / log(sc->hi / sc->lo));
  return l < 0 ? 0 : l >= HM_LEVELS ? HM_LEVELS - 1 : l;
}

static void fmt_secs(double s, char *buf, size_t n) {
  if (s <= 0)
    snprintf(buf, n, "-");
  else if (s >= 1)
    snprintf(buf, n, "%.2f s", s);
  else if (s >= 1e-3)
    snprintf(buf, n, "%.2f ms", s * 1e3);
  else
    snprintf(buf, n, "%.1f us", s * 1e6);
}

/* "GPU 3 (node 0)", "node 2" or "rank 1": what cell i stands for. */
static void hm_name(const st__traffic_t *t, int i, char *buf, size_t n) {
  if (t->fold == ST__FOLD_DEVICES)
    snprintf(buf, n, "%s %d (node %d)", t->dev, i, i / t->gpus_per_node);
  else if (t->fold == ST__FOLD_NODES)
    snprintf(buf, n, "node %d", i);
  else
    snprintf(buf, n, "pipeline rank %d", i);
}

static void hm_cells(strata_buf_t *b, const st__traffic_t *t, int k, int x0,
                     int y0, const hm_scale_t *sc) {
  double s = (double)HM_SIDE / t->n;
  char from[48], to[48], by[32], se[32];
  for (int i = 0; i < t->n; i++)
    for (int j = 0; j < t->n; j++) {
      size_t c = ((size_t)k * t->n + i) * t->n + j;
      if (t->bytes[c] <= 0) continue;
      hm_name(t, i, from, sizeof from);
      hm_name(t, j, to, sizeof to);
      fmt_secs(t->seconds[c], se, sizeof se);
      strata_buf_printf(b,
                        "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
                        "height=\"%.2f\" fill=\"%s\"><title>%s: %s to %s: "
                        "%s, %s</title></rect>\n",
                        x0 + j * s, y0 + i * s, s, s,
                        hm_palette[hm_level(sc, t->bytes[c])],
                        st__traffic_kind_name(k), from, to,
                        strata_fmt_bytes(t->bytes[c], by, sizeof by), se);
    }
}

/* The lines between nodes (devices) or pipeline ranks' first nodes. */
static void hm_grid(strata_buf_t *b, const st__traffic_t *t, int x0, int y0) {
  int every = t->fold == ST__FOLD_DEVICES ? t->gpus_per_node : 1;
  double s = (double)HM_SIDE / t->n;
  if (t->fold != ST__FOLD_DEVICES || every < 1 || every >= t->n) return;
  for (int i = every; i < t->n; i += every)
    strata_buf_printf(b,
                      "<line x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\" "
                      "stroke=\"#999\" stroke-width=\"0.5\"/><line "
                      "x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" "
                      "stroke=\"#999\" stroke-width=\"0.5\"/>\n",
                      x0, y0 + i * s, x0 + HM_SIDE, y0 + i * s, x0 + i * s, y0,
                      x0 + i * s, y0 + HM_SIDE);
}

static void hm_grid_of(strata_buf_t *b, const st__traffic_t *t, int k, int x0,
                       int y0, const hm_scale_t *sc) {
  char by[32];
  const char *unit = t->fold == ST__FOLD_DEVICES ? t->dev
                     : t->fold == ST__FOLD_NODES ? "node"
                                                 : "rank";
  strata_buf_printf(b,
                    "<text x=\"%d\" y=\"%d\" style=\"font-weight:bold\">%s: "
                    "%s</text>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" "
                    "height=\"%d\" fill=\"#f7f7f7\" stroke=\"#ccc\"/>\n",
                    x0, y0 - 22, st__traffic_kind_name(k),
                    strata_fmt_bytes(t->kind_bytes[k], by, sizeof by), x0, y0,
                    HM_SIDE, HM_SIDE);
  hm_cells(b, t, k, x0, y0, sc);
  hm_grid(b, t, x0, y0);
  strata_buf_printf(b,
                    "<text x=\"%d\" y=\"%d\">from %s 0</text><text x=\"%d\" "
                    "y=\"%d\" text-anchor=\"end\">to %s %d</text>\n",
                    x0, y0 - 6, unit, x0 + HM_SIDE, y0 - 6, unit, t->n - 1);
}

static void hm_legend(strata_buf_t *b, const st__traffic_t *t,
                      const hm_scale_t *sc) {
  char by[32], si[32], se[32];
  strata_buf_printf(b,
                    "<table>\n<tr><th class=l>colour</th><th>bytes per "
                    "step, at least</th><th>on one %s's link in a node</th>"
                    "<th>across nodes</th></tr>\n",
                    t->dev);
  for (int l = 0; l < HM_LEVELS; l++) {
    /* level l holds [lo (hi/lo)^(l/8), lo (hi/lo)^((l+1)/8)); level 0
     * everything below level 1; the times are those bytes on one link */
    double v = sc->lo * pow(sc->hi / sc->lo, (double)(l ? l : 1) / HM_LEVELS);
    fmt_secs(t->intra_bw > 0 ? v / t->intra_bw : 0, si, sizeof si);
    fmt_secs(t->inter_bw > 0 ? v / t->inter_bw : 0, se, sizeof se);
    strata_buf_printf(b,
                      "<tr><td class=l><span style=\"display:inline-block;"
                      "width:28px;height:12px;background:%s\"></span></td>"
                      "<td>%s%s</td><td>%s</td><td>%s</td></tr>\n",
                      hm_palette[l], l ? "" : "less than ",
                      strata_fmt_bytes(v, by, sizeof by), si, se);
  }
  strata_buf_puts(b, "</table>\n");
}

static void hm_totals(strata_buf_t *b, const st__traffic_t *t) {
  char by[32], mx[32], se[32];
  strata_buf_puts(b, "<table>\n<tr><th class=l>collective</th><th>bytes per "
                     "step, all pairs</th><th>largest cell</th><th>its "
                     "busiest link</th></tr>\n");
  for (int k = 0; k < ST__TR_KINDS; k++) {
    double top = 0, sec = 0;
    for (size_t i = 0; i < (size_t)t->n * t->n; i++) {
      size_t c = (size_t)k * t->n * t->n + i;
      if (t->bytes[c] > top) top = t->bytes[c], sec = t->seconds[c];
    }
    fmt_secs(sec, se, sizeof se);
    strata_buf_printf(b,
                      "<tr><td class=l>%s</td><td>%s</td><td>%s</td>"
                      "<td>%s</td></tr>\n",
                      st__traffic_kind_name(k),
                      strata_fmt_bytes(t->kind_bytes[k], by, sizeof by),
                      strata_fmt_bytes(top, mx, sizeof mx), se);
  }
  strata_buf_puts(b, "</table>\n");
}

static int heatmap(strata_buf_t *b, const strata_plan_t *p,
                   const strata_export_opts_t *o) {
  st__traffic_t t;
  int kinds[ST__TR_KINDS], nk = 0;
  int rc = st__traffic(p, o ? o->gpus_per_node : 0, HM_CELLS, &t);
  if (rc) return rc;
  for (int k = 0; k < ST__TR_KINDS; k++)
    if (t.kind_bytes[k] > 0) kinds[nk++] = k;
  strata_buf_printf(
      b,
      "<h2 id=heatmap>Communication of one step: bytes from "
      "each %s (row) to each (column)</h2>\n",
      t.fold == ST__FOLD_DEVICES ? t.dev
      : t.fold == ST__FOLD_NODES
          ? (p->npu ? "node (its NPUs together)" : "node (its GPUs together)")
      : p->npu ? "pipeline rank (its NPUs together)"
               : "pipeline rank (its GPUs together)");
  strata_buf_printf(b,
                    "<p>Worked out from the plan with the algorithms its "
                    "cost model assumes (ring all-reduce, all-gather and "
                    "reduce-scatter to the ring's next %s, all-to-all to "
                    "every peer, the pipeline's activations and gradients "
                    "between matching %ss of adjacent stages); a cell's "
                    "time is its busiest %s pair's bytes over that pair's "
                    "link. Hover a cell for its figures.</p>\n",
                    t.dev, t.dev, t.dev);
  if (!nk) {
    strata_buf_printf(b,
                      "<p>No %s sends anything: one %s, no "
                      "parallelism.</p>\n",
                      t.dev, t.dev);
    goto out;
  }
  hm_scale_t sc = hm_scale_of(&t);
  int per_row = (W - 20) / (HM_SIDE + HM_GAP), rows;
  if (per_row < 1) per_row = 1;
  rows = (nk + per_row - 1) / per_row;
  strata_buf_printf(b,
                    "<svg class=heatmap width=\"%d\" height=\"%d\" "
                    "xmlns=\"http://www.w3.org/2000/svg\">\n",
                    W, rows * (HM_SIDE + 44) + 4);
  for (int i = 0; i < nk; i++)
    hm_grid_of(b, &t, kinds[i], 10 + (i % per_row) * (HM_SIDE + HM_GAP),
               34 + (i / per_row) * (HM_SIDE + 44), &sc);
  strata_buf_puts(b, "</svg>\n");
  hm_legend(b, &t, &sc);
  hm_totals(b, &t);
out:
  st__traffic_free(&t);
  return 0;
}

/* Each stage's layers, devices and the strategies of its first layer's
 * operators (op names come from the model: escaped). */
static void stage_table(strata_buf_t *b, const strata_plan_t *p) {
  strata_buf_printf(b,
                    "<h2>Stages: layers, devices and strategies</h2>\n"
                    "<table>\n<tr><th>stage</th><th>pipeline rank</th>"
                    "<th>layers</th><th>devices per replica</th>"
                    "<th>first %s</th><th class=l>strategies of one "
                    "layer</th></tr>\n",
                    st__dev(p));
  for (int s = 0; s < p->n_stages; s++) {
    const strata_plan_stage_t *st = &p->stages[s];
    const strata_stage_result_t *r = st->result;
    strata_buf_printf(b, "<tr><td>%d</td><td>%d</td><td>", s, st->rank);
    if (st->layer_end - st->layer_begin > 1)
      strata_buf_printf(b, "%d-%d", st->layer_begin, st->layer_end - 1);
    else if (st->layer_end > st->layer_begin)
      strata_buf_printf(b, "%d", st->layer_begin);
    else
      strata_buf_puts(b, "none");
    strata_buf_printf(b, "%s%s</td><td>%d x %d</td><td>%d</td><td class=l>",
                      st->with_prologue ? " + embedding" : "",
                      st->with_epilogue ? " + head" : "", st->nodes,
                      st->gpus_per_node, st->first_rank);
    int layer = -1, shown = 0;
    for (int i = 0; r && i < r->n_ops && shown < 24; i++) {
      const strata_op_choice_t *op = &r->ops[i];
      if (op->layer < 0) continue;
      if (layer < 0) layer = op->layer;
      if (op->layer != layer) continue;
      strata_buf_puts(b, shown++ ? ", " : "");
      esc(b, op->name);
      strata_buf_puts(b, " <b>");
      esc(b, op->strategy);
      strata_buf_puts(b, "</b>");
    }
    strata_buf_puts(b, "</td></tr>\n");
  }
  strata_buf_puts(b, "</table>\n");
}

/* The runners-up, with cp and ep columns when any of them uses them. */
static void runners_up(strata_buf_t *b, const strata_plan_t *p) {
  char mem[32];
  int cp = 0, ep = 0;
  if (p->n_top < 2) return;
  for (int i = 0; i < p->n_top; i++) {
    cp |= p->top[i].cp > 1;
    ep |= p->top[i].ep > 1;
  }
  strata_buf_printf(b,
                    "<h2>Runners-up</h2>\n<table>\n<tr><th>#</th><th>tp</th>"
                    "%s%s<th>pp</th><th>dp</th><th>micro</th><th>vpp</th>"
                    "<th>sp</th><th>recompute</th><th>step ms</th>"
                    "<th>vs best</th><th>peak memory</th></tr>\n",
                    cp ? "<th>cp</th>" : "", ep ? "<th>ep</th>" : "");
  for (int i = 0; i < p->n_top; i++) {
    const strata_plan_config_t *c = &p->top[i];
    strata_buf_printf(b, "<tr><td>%d</td><td>%d</td>", i + 1, c->tp);
    if (cp) strata_buf_printf(b, "<td>%d</td>", c->cp > 1 ? c->cp : 1);
    if (ep) strata_buf_printf(b, "<td>%d</td>", c->ep > 1 ? c->ep : 1);
    strata_buf_printf(b,
                      "<td>%d</td><td>%d</td><td>%d</td>"
                      "<td>%d</td><td>%s</td><td class=l>%s</td><td>%.3f</td>"
                      "<td>%+.2f %%</td><td>%s</td></tr>\n",
                      c->pp, c->dp, c->micro_batch, c->vpp > 1 ? c->vpp : 1,
                      st__onoff(c->sequence_parallel),
                      strata_recompute_name(c->recompute),
                      c->step_seconds * 1e3,
                      p->top[0].step_seconds > 0
                          ? 100 * (c->step_seconds / p->top[0].step_seconds - 1)
                          : 0.0,
                      strata_fmt_bytes(c->peak_memory_bytes, mem, sizeof mem));
  }
  strata_buf_puts(b, "</table>\n");
}

/* With the cluster's device map: every node of the spec, its node rank,
 * GPUs used and what it is used for, or why it is left out. */
static void hosts(strata_buf_t *b, const strata_device_map_t *m) {
  if (!m) return;
  strata_buf_puts(b, "<h2>Hosts of ");
  esc(b, m->cluster);
  strata_buf_printf(b,
                    ": %d of %d node%s used</h2>\n<table>\n<tr>"
                    "<th class=l>host</th><th>node rank</th><th>GPUs "
                    "used</th><th class=l>use</th></tr>\n",
                    m->nodes_used, m->n_nodes, m->n_nodes == 1 ? "" : "s");
  for (int i = 0; i < m->n_nodes; i++) {
    const strata_node_info_t *n = &m->nodes[i];
    strata_buf_puts(b, "<tr><td class=l>");
    esc(b, n->name);
    if (n->node_rank >= 0)
      strata_buf_printf(b, "</td><td>%d</td><td>%d</td><td class=l>%s",
                        n->node_rank, n->gpus, strata_node_use_name(n->use));
    else
      strata_buf_puts(b, "</td><td>-</td><td>0</td><td class=l>left out");
    if (n->why) {
      strata_buf_puts(b, ": ");
      esc(b, n->why);
    }
    strata_buf_puts(b, "</td></tr>\n");
  }
  strata_buf_puts(b, "</table>\n");
}

int strata_export_html(const strata_plan_t *p, const strata_export_opts_t *o,
                       char **text) {
  return st__export_html_map(p, o, NULL, text);
}

int st__export_html_map(const strata_plan_t *p, const strata_export_opts_t *o,
                        const strata_device_map_t *m, char **text) {
  strata_buf_t b;
  int rc;
  if (!text) return strata_error(STRATA_EINVAL, "html export: no output");
  *text = NULL;
  if (!p || p->n_stages < 1 || !p->ranks || p->pp < 1 ||
      p->n_stages != p->pp * (p->vpp > 1 ? p->vpp : 1))
    return strata_error(STRATA_EINVAL, "html export: no plan");
  strata_buf_init(&b);
  strata_buf_puts(&b, "<!DOCTYPE html>\n<html lang=en>\n<head>\n<meta "
                      "charset=utf-8>\n<title>Strata plan: ");
  esc(&b, p->model);
  strata_buf_puts(&b, "</title>\n");
  strata_buf_puts(&b, css);
  strata_buf_puts(&b, "</head>\n<body>\n");
  summary(&b, p);
  if ((rc = schedule(&b, p))) goto out;
  memory(&b, p);
  devices(&b, p, o);
  hosts(&b, m);
  if ((rc = heatmap(&b, p, o))) goto out;
  stage_table(&b, p);
  runners_up(&b, p);
  st__html_pareto(&b, p);
  strata_buf_puts(&b, "<p>Written by <code>strata export html</code>.</p>\n"
                      "</body>\n</html>\n");
  if (b.oom) rc = strata_error(STRATA_ENOMEM, "out of memory");
out:
  if (!rc) *text = strata_buf_steal(&b, NULL);
  strata_buf_free(&b);
  return rc;
}
