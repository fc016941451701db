/*
 * offload.c - offloads as memory techniques of the search (--search-
 * offload): the optimizer's share on the host and layers' activations,
 * chosen with the degrees, the micro-batch and recompute for a
 * configuration that does not fit without them.
 *
 * As Mist (Zhu et al., EuroSys 2025) does with its offloading ratios, the
 * knobs are costed symbolically rather than enumerated: a rank's memory is
 * linear in the optimizer's share F (eval.c moves F of its states to the
 * host), so the least F that fits is solved in closed form
 * (st__least_optimizer_offload), and rounded up to a hundredth; the step
 * only grows with F and with the layers offloaded.  The configurations
 * worth costing are therefore those of the frontier: for each count of
 * offloaded layers n from none to the least that fits alone, the least F
 * that fits with n.  Without the optimizer's share it is the least n,
 * found by bisection (memory falls as n grows).  Fine-grained activation
 * offloading (--offload-modules, which Megatron-LM runs with any pipeline
 * but not with layer offloading) is tried as a few sets of modules
 * (fgoffload.c, st__fg_sets), each with the least F that fits with it.
 */
#include <math.h>

#include "pipeline/search.h"

/* F rounded up to a hundredth, at least one (0 stays 0). */
static double hundredths(double F) {
  if (!(F > 0)) return 0;
  double r = ceil(F * 100 - 1e-9) / 100;
  return r < 0.01 ? 0.01 : r > 1 ? 1 : r;
}

/* cf with n layers offloaded fits on its GPUs without the optimizer's. */
static int fits_with(st__search_t *S, const st__cfg_t *cf, int n) {
  st__cfg_t c = *cf;
  c.act_offload = n;
  c.opt_offload = 0;
  return st__least_optimizer_offload(S, &c) <= 0;
}

/* The least n in [1, act] whose activations' offload makes cf fit alone,
 * act + 1 when none does. */
static int least_layers(st__search_t *S, const st__cfg_t *cf, int act) {
  int lo = 1, hi = act + 1;
  if (act < 1 || !fits_with(S, cf, act)) return act + 1;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (fits_with(S, cf, mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* Cost c exactly; keep it in *out when it fits and is the quickest yet. */
static int try_offload(st__search_t *S, const st__cfg_t *c, st__cfg_t *out,
                       st__cost_t *cost, int *found) {
  st__cost_t k;
  int rc = st__cfg_cost(S, c, 1, &k);
  if (rc || !k.fits || !isfinite(k.step)) return rc;
  if (!*found || k.step < cost->step) {
    *out = *c;
    *cost = k;
    *found = 1;
  }
  return 0;
}

/* The modules' sets of fine-grained activation offloading, each with the
 * least optimizer share that fits with it (where that is searched). */
static int try_modules(st__search_t *S, const st__cfg_t *cf, int opt,
                       st__cfg_t *out, st__cost_t *cost, int *found) {
  unsigned sets[ST__FG_SETS];
  int n = st__offload_fg_room(S, cf) ? st__fg_sets(S, cf->f, sets) : 0;
  int rc = 0;
  for (int i = 0; i < n && !rc; i++) {
    st__cfg_t c = *cf;
    c.act_offload = 0, c.fg_offload = (int)sets[i], c.opt_offload = 0;
    double F = st__least_optimizer_offload(S, &c);
    if (F > (opt ? 1 : 0)) continue;
    c.opt_offload = hundredths(F);
    rc = try_offload(S, &c, out, cost, found);
  }
  return rc;
}

int st__offload_fit(st__search_t *S, const st__cfg_t *cf, st__cfg_t *out,
                    st__cost_t *cost, int *found) {
  int opt = 0, act = 0, rc = 0;
  *found = 0;
  st__offload_room(S, cf, &opt, &act);
  rc = try_modules(S, cf, opt, out, cost, found);
  if (rc) return rc;
  int nmin = least_layers(S, cf, act); /* act + 1: layers alone never fit */
  if (!opt) {
    st__cfg_t c = *cf;
    c.act_offload = nmin;
    return nmin <= act ? try_offload(S, &c, out, cost, found) : 0;
  }
  for (int n = 0; n <= act && n <= nmin && !rc; n++) {
    st__cfg_t c = *cf;
    c.act_offload = n;
    double F = n == nmin ? 0 : st__least_optimizer_offload(S, &c);
    if (F > 1) continue;
    c.opt_offload = hundredths(F);
    rc = try_offload(S, &c, out, cost, found);
  }
  return rc;
}
