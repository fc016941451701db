/*
 * progress.c - what a long plan is doing, on standard error.
 *
 * One reporter per plan (a mixed cluster's groups share their first
 * group's), fed by whoever holds the loop: the stage solves (pool.c, on
 * the loop thread), the search over configurations (space.c) and the
 * mixed search (hetero.c).  Nothing is printed in a plan's first second,
 * so that short plans (every test's) print what they always did; after
 * that a terminal gets one line rewritten in place ten times a second at
 * most, a file or pipe a line every few seconds, so that a log stays
 * short.  The caller calls it as often as it likes: the clock decides.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/sub.h"
#include "core/stream.h"

#define QUIET_START 1.0 /* seconds before the first line */
#define TTY_EVERY 0.1
#define PIPE_EVERY 5.0

void st__progress_init(st__progress_t *p, int on) {
  p->on = on;
  p->tty = on && st__stderr_is_tty();
  p->t0 = strata_now();
  p->last = p->t0;
  p->shown = 0;
  p->lines = 0;
  p->best = INFINITY;
  p->where[0] = 0;
}

void st__progress_where(st__progress_t *p, const char *where) {
  if (p) snprintf(p->where, sizeof p->where, "%s", where ? where : "");
}

double st__progress_best(st__progress_t *p, double best) {
  if (!p) return isfinite(best) ? best : INFINITY;
  if (isfinite(best) && best < p->best) p->best = best;
  return p->best;
}

/* What a phase waits for before it knows a best step: the stage solves
 * come before any configuration is costed; the searches cost them, and
 * none has fitted yet. */
static const char *waiting_for(const char *phase) {
  return strcmp(phase, "stage solves")
             ? "no configuration fits yet"
             : "no step yet: the configurations are costed once their "
               "stages are solved";
}

void st__progress_line(char *buf, size_t size, const char *phase, long done,
                       long total, double best, double bound, double seconds) {
  int n = snprintf(buf, size, "strata: %s %ld/%ld, ", phase, done, total);
  if (n < 0 || (size_t)n >= size) return;
  if (isfinite(best))
    n += snprintf(buf + n, size - (size_t)n, "best step %.3f s", best);
  else
    n += snprintf(buf + n, size - (size_t)n, "%s", waiting_for(phase));
  if (n < 0 || (size_t)n >= size) return;
  if (isfinite(bound))
    n += snprintf(buf + n, size - (size_t)n, ", bound %.3f s", bound);
  if (n < 0 || (size_t)n >= size) return;
  snprintf(buf + n, size - (size_t)n, " (%.1f s)", seconds);
}

void st__progress_note(st__progress_t *p, const char *phase, long done,
                       long total, double best, double bound) {
  if (!p) return;
  best = st__progress_best(p, best); /* never rises */
  if (isfinite(bound) && bound > best) bound = best;
  if (!p->on) return;
  double now = strata_now();
  if (now - p->t0 < QUIET_START) return;
  if (p->lines && now - p->last < (p->tty ? TTY_EVERY : PIPE_EVERY)) return;
  char line[256], named[128];
  if (p->where[0]) { /* the group: a mixed cluster's counters restart */
    snprintf(named, sizeof named, "%s on %s", phase, p->where);
    phase = named;
  }
  st__progress_line(line, sizeof line, phase, done, total, best, bound,
                    now - p->t0);
  p->last = now;
  p->lines++;
  /* the terminal's line is padded so that a shorter one covers it */
  fprintf(st__stderr(), "%s%s%s", p->tty ? "\r" : "", line,
          p->tty ? "    " : "\n");
  p->shown = p->tty;
  fflush(st__stderr());
}

void st__progress_end(st__progress_t *p) {
  if (!p || !p->shown) return;
  fputc('\n', st__stderr()); /* what follows starts on a line of its own */
  fflush(st__stderr());
  p->shown = 0;
}

/* What a time-limited plan keeps of the bound: no plan is faster than
 * it, and it is at most the best found (0: none proven). */
double st__bound_kept(double best, double bound) {
  if (!(bound > 0) || !isfinite(bound)) return 0;
  return bound < best ? bound : best;
}

void st__progress_gap(st__progress_t *p, double best, double bound) {
  if (!p || !p->on) return;
  st__progress_end(p);
  if (bound > best) bound = best;
  fprintf(st__stderr(),
          "strata: the time limit stopped the search after %.1f s: best step "
          "%.3f s, no plan beats %.3f s (gap %.1f %%)\n",
          strata_now() - p->t0, best, bound,
          best > 0 && isfinite(bound) ? 100 * (best - bound) / best : 100.0);
  fflush(st__stderr());
}
