/*
 * export_pareto.c - the HTML page's Pareto front (`strata plan --pareto`):
 * the non-dominated configurations as points of step time (x) against
 * peak memory per device (y), joined by the staircase that bounds what
 * the space can reach, the plan's own point ringed, the memory available
 * as a dashed line, and with --pareto gpus each point coloured by the
 * GPUs it uses; then the same configurations as a table, numbered as the
 * points are.
 *
 * The step axis is logarithmic where the front spans more than ten times
 * its fastest step (a slow end of full recompute on few GPUs would
 * otherwise squeeze the fast end into a corner); memory is linear from
 * zero-ish, as the memory chart above draws it.  Inline SVG only, as the
 * rest of the page.
 */
#include <math.h>
#include <stdio.h>

#include "core/text.h"
#include "merge/merge_int.h"

#define PW 760 /* plot width and height, px */
#define PH 360
#define ML 84 /* margins: left (memory labels), bottom (step labels) */
#define MB 40
#define MT 16
#define MR 24
#define GIB (1024.0 * 1024.0 * 1024.0)
#define MAX_LABELS 40 /* points numbered on the chart */

typedef struct {
  double x0, x1, y0, y1; /* the data's ranges */
  int logx;
} axes_t;

static double gpus_of(const strata_plan_config_t *c) {
  return (double)c->tp * (c->cp > 1 ? c->cp : 1) * c->pp * c->dp;
}

static axes_t axes_of(const strata_plan_t *p) {
  axes_t a = {INFINITY, -INFINITY, INFINITY, -INFINITY, 0};
  for (int i = 0; i < p->n_pareto; i++) {
    const strata_plan_config_t *c = &p->pareto[i];
    a.x0 = fmin(a.x0, c->step_seconds), a.x1 = fmax(a.x1, c->step_seconds);
    a.y0 = fmin(a.y0, c->peak_memory_bytes);
    a.y1 = fmax(a.y1, c->peak_memory_bytes);
  }
  a.logx = a.x0 > 0 && a.x1 > 10 * a.x0;
  if (!(a.x1 > a.x0)) a.x0 *= 0.9, a.x1 = a.x1 * 1.1 + 1e-9;
  /* memory from a little below the least, so that near values part */
  double pad = (a.y1 - a.y0) * 0.08 + a.y1 * 0.02 + 1;
  a.y0 = fmax(0, a.y0 - pad), a.y1 += pad;
  return a;
}

static double px(const axes_t *a, double step) {
  double t = a->logx ? log(step / a->x0) / log(a->x1 / a->x0)
                     : (step - a->x0) / (a->x1 - a->x0);
  return ML + t * (PW - ML - MR);
}

static double py(const axes_t *a, double bytes) {
  return PH - MB - (bytes - a->y0) / (a->y1 - a->y0) * (PH - MB - MT);
}

/* A colour per distinct GPU count (--pareto gpus), by its rank among them
 * (fewest GPUs first); one colour otherwise. */
static void point_color(const strata_plan_t *p, const strata_plan_config_t *c,
                        char *buf, size_t n) {
  if (p->pareto_axes != STRATA_PARETO_GPUS) {
    snprintf(buf, n, "#2b6cb0");
    return;
  }
  int below = 0, kinds = 0;
  double g = gpus_of(c);
  for (int i = 0; i < p->n_pareto; i++) {
    double h = gpus_of(&p->pareto[i]);
    int first = 1;
    for (int j = 0; j < i && first; j++)
      first = gpus_of(&p->pareto[j]) != h;
    kinds += first;
    below += first && h < g;
  }
  snprintf(buf, n, "hsl(%d,70%%,42%%)",
           kinds > 1 ? below * 270 / (kinds - 1) : 210);
}

/* Ticks: five on each axis, labelled in ms and GiB. */
static void ticks(strata_buf_t *b, const axes_t *a) {
  for (int k = 0; k <= 4; k++) {
    double f = k / 4.0;
    double s =
        a->logx ? a->x0 * pow(a->x1 / a->x0, f) : a->x0 + f * (a->x1 - a->x0);
    double m = a->y0 + f * (a->y1 - a->y0), v = s >= 1 ? s : s * 1e3;
    char t[64]; /* four figures, as a person reads them (no exponent) */
    st__fmt_num(v, v >= 1000 ? 0 : v >= 100 ? 1 : v >= 10 ? 2 : 3, t, sizeof t);
    strata_buf_printf(b,
                      "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s "
                      "%s</text>\n<text x=\"%d\" y=\"%.1f\" "
                      "text-anchor=\"end\">%.2f GiB</text>\n",
                      px(a, s), PH - MB + 16, t, s >= 1 ? "s" : "ms", ML - 6,
                      py(a, m) + 4, m / GIB);
  }
  strata_buf_printf(b,
                    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
                    "stroke=\"#333\"/>\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" "
                    "y2=\"%d\" stroke=\"#333\"/>\n<text x=\"%d\" y=\"%d\" "
                    "text-anchor=\"middle\">step time%s</text>\n",
                    ML, PH - MB, PW - MR, PH - MB, ML, MT, ML, PH - MB,
                    (ML + PW - MR) / 2, PH - 6,
                    a->logx ? " (logarithmic)" : "");
}

/* The staircase: from each point right to the next one's step, then
 * down to its memory (what is reachable lies above and right of it). */
static void staircase(strata_buf_t *b, const strata_plan_t *p,
                      const axes_t *a) {
  if (p->pareto_axes == STRATA_PARETO_GPUS) return; /* a 3-D front */
  strata_buf_puts(b, "<polyline fill=\"none\" stroke=\"#9ab\" points=\"");
  for (int i = 0; i < p->n_pareto; i++) {
    const strata_plan_config_t *c = &p->pareto[i];
    if (i > 0)
      strata_buf_printf(b, "%.1f,%.1f ", px(a, c->step_seconds),
                        py(a, p->pareto[i - 1].peak_memory_bytes));
    strata_buf_printf(b, "%.1f,%.1f ", px(a, c->step_seconds),
                      py(a, c->peak_memory_bytes));
  }
  strata_buf_puts(b, "\"/>\n");
}

static void points(strata_buf_t *b, const strata_plan_t *p, const axes_t *a) {
  for (int i = 0; i < p->n_pareto; i++) {
    const strata_plan_config_t *c = &p->pareto[i];
    char col[40], name[300], mem[32];
    double x = px(a, c->step_seconds), y = py(a, c->peak_memory_bytes);
    point_color(p, c, col, sizeof col);
    st__list_name(p->pareto, p->n_pareto, i, name, sizeof name);
    strata_buf_printf(b,
                      "<circle class=pareto cx=\"%.1f\" cy=\"%.1f\" r=\"4\" "
                      "fill=\"%s\"><title>%d. ",
                      x, y, col, i + 1);
    st__put_html(b, name);
    strata_buf_printf(b, ": %.3f ms, %s, %.0f %ss</title></circle>\n",
                      c->step_seconds * 1e3,
                      strata_fmt_bytes(c->peak_memory_bytes, mem, sizeof mem),
                      gpus_of(c), st__dev(p));
    if (i == 0) /* the plan's own: the fastest that fits */
      strata_buf_printf(b,
                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"8\" fill=\"none\" "
                        "stroke=\"#c53030\" stroke-width=\"2\"/>\n",
                        x, y);
    if (p->n_pareto <= MAX_LABELS) /* more: the tooltips and the table */
      strata_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\">%d</text>\n", x + 6,
                        y - 6, i + 1);
  }
}

/* The memory a device has for the plan, where it is within the chart. */
static void capacity(strata_buf_t *b, const strata_plan_t *p, const axes_t *a) {
  double cap = p->gpu_memory_bytes;
  if (!(cap > a->y0 && cap < a->y1)) return;
  strata_buf_printf(b,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                    "stroke=\"#c53030\" stroke-dasharray=\"4 3\"/>\n<text "
                    "x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s memory "
                    "%.1f GiB</text>\n",
                    ML, py(a, cap), PW - MR, py(a, cap), PW - MR,
                    py(a, cap) - 4, st__dev(p), cap / GIB);
}

static void table(strata_buf_t *b, const strata_plan_t *p) {
  strata_buf_printf(b,
                    "<table>\n<tr><th>#</th><th class=l>configuration</th>"
                    "<th>step ms</th><th>peak memory</th><th>%ss</th></tr>\n",
                    st__dev(p));
  for (int i = 0; i < p->n_pareto; i++) {
    const strata_plan_config_t *c = &p->pareto[i];
    char name[300], mem[32];
    st__list_name(p->pareto, p->n_pareto, i, name, sizeof name);
    strata_buf_printf(b, "<tr><td>%d</td><td class=l>", i + 1);
    st__put_html(b, name);
    strata_buf_printf(b, "</td><td>%.3f</td><td>%s</td><td>%.0f</td></tr>\n",
                      c->step_seconds * 1e3,
                      strata_fmt_bytes(c->peak_memory_bytes, mem, sizeof mem),
                      gpus_of(c));
  }
  strata_buf_puts(b, "</table>\n");
}

void st__html_pareto(strata_buf_t *b, const strata_plan_t *p) {
  if (p->pareto_axes <= 0 || p->n_pareto < 1) return;
  axes_t a = axes_of(p);
  strata_buf_printf(b,
                    "<h2>Pareto front</h2>\n<p>The %d configuration%s of the "
                    "search's space that no other beats on step time and "
                    "peak memory per device%s; ringed: this plan's.</p>\n"
                    "<svg class=pareto width=\"%d\" height=\"%d\" "
                    "xmlns=\"http://www.w3.org/2000/svg\">\n",
                    p->n_pareto, p->n_pareto == 1 ? "" : "s",
                    p->pareto_axes != STRATA_PARETO_GPUS ? ""
                    : p->npu ? " and NPUs used together (coloured by their "
                               "NPUs: red the fewest, violet the most)"
                             : " and GPUs used together (coloured by their "
                               "GPUs: red the fewest, violet the most)",
                    PW, PH);
  ticks(b, &a);
  capacity(b, p, &a);
  staircase(b, p, &a);
  points(b, p, &a);
  strata_buf_puts(b, "</svg>\n");
  table(b, p);
}
