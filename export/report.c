/*
 * report.c - strata_plan_summary (the table `strata show` prints; its
 * option lines from export/plan_text.h's table) and
 * strata_plan_json (`strata show --json`, docs/plan-format.md lists the
 * fields).  Both read only the plan, so they work the same on a plan just
 * made and on one loaded from a file.
 */
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "merge/merge_int.h"
#include "export/plan_text.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

const char *st__peak_name(const strata_plan_t *p) {
  int bits = strata_lowp_peak_bits(p->fp8);
  return bits == 4 ? "FP4" : bits == 8 ? "FP8" : "BF16";
}

const char *st__onoff(int v) {
  return v > 0 ? "yes" : "no";
}

int st__step_list(const strata_step_items_t *it,
                  st__step_item_t out[ST__STEP_ITEMS]) {
  const st__step_item_t all[ST__STEP_ITEMS] = {
      {"compute", "compute", it->compute, 1},
      {"tp comm", "exposed tensor-parallel collectives", it->tp_comm, 1},
      {"cp comm", "ring attention's exposed exchange (context parallelism)",
       it->cp_comm, 0},
      {"ep a2a", "the experts' exposed dispatch and combine all-to-all",
       it->ep_a2a, 0},
      {"moe host", "the MoE layers' host-bound gaps", it->host, 0},
      {"pp p2p", "blocking pipeline sends", it->p2p, 0},
      {"bubble", "pipeline bubble (the busiest rank idle)", it->bubble, 1},
      {"dp sync", "exposed gradient synchronisation", it->dp_sync, 1},
      {"param gather", "exposed parameter gather", it->param_gather, 1},
      {"optimizer", "optimizer step", it->optimizer, 1},
      {"overhead", "calibrated fixed overhead", it->overhead, 1}};
  int n = 0;
  for (int i = 0; i < ST__STEP_ITEMS; i++)
    if (all[i].always || all[i].v > 0) out[n++] = all[i];
  return n;
}

/* The stages between the first and the last hold one layer count. */
static int even_middle(const strata_plan_t *p) {
  for (int s = 2; s + 1 < p->n_stages; s++)
    if (p->stages[s].layer_end - p->stages[s].layer_begin !=
        p->stages[1].layer_end - p->stages[1].layer_begin)
      return 0;
  return 1;
}

static int all_equal(const strata_plan_t *p) {
  for (int s = 1; s < p->n_stages; s++)
    if (p->stages[s].layer_end - p->stages[s].layer_begin !=
        p->stages[0].layer_end - p->stages[0].layer_begin)
      return 0;
  return 1;
}

/* Megatron-LM's first/last form: rank r's chunks (r, r + pp, ...) alike. */
static int rank_form(const strata_plan_t *p) {
  for (int s = p->pp; s < p->n_stages; s++)
    if (p->stages[s].layer_end - p->stages[s].layer_begin !=
        p->stages[s % p->pp].layer_end - p->stages[s % p->pp].layer_begin)
      return 0;
  return 1;
}

/* The middle ranks hold as many layers each (Megatron-LM's first/last
 * form). */
static int even_ranks(const strata_plan_t *p) {
  for (int r = 2; r + 1 < p->pp; r++)
    if (strata_plan_rank_layers(p, r) != strata_plan_rank_layers(p, 1))
      return 0;
  return 1;
}

/* The degrees: one stage size, or the range of a free-mode plan's. */
static void sum_parallelism(strata_buf_t *b, const strata_plan_t *p) {
  int lo = 0, hi = 0; /* devices per stage: one size, or several */
  for (int s = 0; s < p->n_stages; s++) {
    int d = st__stage_devices(&p->stages[s]);
    lo = !s || d < lo ? d : lo;
    hi = !s || d > hi ? d : hi;
  }
  char deg[96];
  st__degrees(p, deg, sizeof deg);
  if (lo == hi)
    strata_buf_printf(b, "  %-20s %s (%s mode)\n", "parallelism", deg,
                      p->megatron ? "Megatron" : "free");
  else
    strata_buf_printf(b,
                      "  %-20s stages of %d to %d devices, pp %d, dp %d "
                      "(%s mode)\n",
                      "parallelism", lo, hi, p->pp, p->dp,
                      p->megatron ? "Megatron" : "free");
}

/* The schedule and how the layers split over the stages. */
static void sum_schedule(strata_buf_t *b, const strata_plan_t *p) {
  int n0 = p->stages[0].layer_end - p->stages[0].layer_begin;
  /* 1F1B and interleaved 1F1B are kept as 0 (plan_fields.h) */
  const char *sched = p->pp_schedule > STRATA_PPS_AUTO
                          ? strata_pp_schedule_name(p->pp_schedule)
                      : p->vpp > 1 ? "interleaved 1F1B"
                                   : "1F1B";
  if (p->vpp > 1 && all_equal(p))
    strata_buf_printf(b,
                      "  %-20s %s, %d virtual stages per "
                      "rank (%d layer%s each)\n",
                      "schedule", sched, p->vpp, n0, n0 == 1 ? "" : "s");
  else if (p->vpp > 1 && !rank_form(p)) { /* chunks of their own sizes */
    char lay[1024];
    if (strata_plan_layout(p, lay, sizeof lay))
      snprintf(lay, sizeof lay, "(too long to show)");
    strata_buf_printf(b,
                      "  %-20s %s, %d virtual stages per "
                      "rank, layout %s\n",
                      "schedule", sched, p->vpp, lay);
  } else if (p->vpp > 1 && !even_ranks(p)) { /* ranks of their own sizes */
    strata_buf_printf(b,
                      "  %-20s %s, %d virtual stages per "
                      "rank, layers per rank",
                      "schedule", sched, p->vpp);
    for (int r = 0; r < p->pp; r++)
      strata_buf_printf(b, "%s%d", r ? ", " : " ",
                        strata_plan_rank_layers(p, r));
    strata_buf_puts(b, " (each in equal chunks)\n");
  } else if (p->vpp > 1) /* each rank's layers split into vpp chunks */
    strata_buf_printf(b,
                      "  %-20s %s, %d virtual stages per "
                      "rank, layers %d first, %d last%s (per rank)\n",
                      "schedule", sched, p->vpp, strata_plan_rank_layers(p, 0),
                      strata_plan_rank_layers(p, p->pp - 1),
                      p->pp > 2 ? ", equal between" : "");
  else if (p->n_stages > 1 && !even_middle(p)) { /* stages of own sizes */
    strata_buf_printf(b, "  %-20s %s, layers per stage", "schedule", sched);
    for (int s = 0; s < p->n_stages; s++)
      strata_buf_printf(b, "%s%d", s ? ", " : " ",
                        p->stages[s].layer_end - p->stages[s].layer_begin);
    strata_buf_puts(b, "\n");
  } else if (p->n_stages > 1)
    strata_buf_printf(b, "  %-20s %s, layers %d first, %d last%s\n", "schedule",
                      sched, p->stages[0].layer_end - p->stages[0].layer_begin,
                      p->stages[p->n_stages - 1].layer_end -
                          p->stages[p->n_stages - 1].layer_begin,
                      p->n_stages > 2 ? ", equal between" : "");
}

/* The split counts the embedding and the loss as layers. */
void st__text_account(strata_buf_t *b, const strata_plan_t *p,
                      const char *label) {
  strata_buf_printf(b,
                    "  %-20s the %s counted as a layer of the split "
                    "(Megatron-LM's --account-for-%s-in-pipeline-split)\n",
                    label,
                    p->account_embedding && p->account_loss
                        ? "embedding and the loss each"
                    : p->account_embedding ? "embedding"
                                           : "loss",
                    p->account_embedding && p->account_loss ? "{embedding,loss}"
                    : p->account_embedding                  ? "embedding"
                                                            : "loss");
}

/* Recompute, with its modules, method and unit where they are set. */
void st__text_recompute(strata_buf_t *b, const strata_plan_t *p,
                        const char *label) {
  char rcm[160] = "";
  if (p->recompute == STRATA_RECOMPUTE_SELECTIVE && p->recompute_modules > 0) {
    strcpy(rcm, " (modules ");
    strata_recompute_modules_format((unsigned)p->recompute_modules, ", ",
                                    rcm + 10, sizeof rcm - 12);
    strcat(rcm, ")");
  }
  if (p->recompute == STRATA_RECOMPUTE_FULL &&
      STRATA_CHOICE(p->recompute_method) == STRATA_RECOMPUTE_BLOCK)
    snprintf(rcm, sizeof rcm,
             " (block: the first %d layers of every chunk, the rest not)",
             p->recompute_layers > 0 ? p->recompute_layers : 1);
  else if (p->recompute == STRATA_RECOMPUTE_FULL && p->recompute_layers > 1)
    snprintf(rcm, sizeof rcm, " (uniform: a checkpoint every %d layers)",
             p->recompute_layers);
  strata_buf_printf(b, "  %-20s %s%s\n", label,
                    strata_recompute_name(p->recompute), rcm);
}

/* Which FLOPs MFU counts: causal attention's pairs halved, and where the
 * plan was just made, MFU with them counted whole; the stack it was
 * costed with (docs/cost-model.md, "MFU and its FLOP convention"). */
static void sum_convention(strata_buf_t *b, const strata_plan_t *p) {
  double den = p->step_seconds * p->devices * p->gpu_peak_flops;
  strata_buf_printf(b, "  %-20s causal attention counted halved", "FLOPs");
  if (p->model_flops_unmasked_per_step > 0 && den > 0 &&
      p->model_flops_unmasked_per_step != p->model_flops_per_step)
    strata_buf_printf(b, " (counted whole: MFU %.1f %%)",
                      100 * p->model_flops_unmasked_per_step / den);
  strata_buf_puts(b, "\n");
  if (p->stack_known) {
    strata_buf_printf(b, "  %-20s attn=%s,gemm=%s", "stack",
                      strata_attn_kernel_name(p->stack.attn),
                      strata_gemm_path_name(p->stack.gemm));
    if (p->stack.alloc > STRATA_ALLOC_CACHING) /* the default: not shown */
      strata_buf_printf(b, ",alloc=%s", strata_alloc_name(p->stack.alloc));
    strata_buf_puts(b, "\n");
  }
}

/* Fine-grained activation offloading: the modules named. */
void st__text_offload_modules(strata_buf_t *b, const strata_plan_t *p,
                              const char *label) {
  strata_buf_printf(b, "  %-20s the saved activations of", label);
  for (int i = 0, k = 0; strata_offload_modules_name(i); i++)
    if (p->offload_modules & (1 << i))
      strata_buf_printf(b, "%s %s", k++ ? "," : "",
                        strata_offload_modules_name(i));
  strata_buf_printf(b, " in host memory between forward and backward "
                       "(fine-grained)\n");
}

/* What the framework overlaps. */
void st__text_overlap(strata_buf_t *b, const strata_plan_t *p,
                      const char *label) {
  strata_buf_printf(b,
                    "  %-20s grad reduce %s, param gather %s, tp comm %s, "
                    "p2p %s%s%s\n",
                    label, st__onoff(p->overlap_grad_reduce),
                    st__onoff(p->overlap_param_gather),
                    st__onoff(p->tp_comm_overlap),
                    p->overlap_p2p ? "overlapped" : "blocking",
                    p->experts > 0 ? ", expert all-to-all " : "",
                    p->experts > 0 ? st__onoff(p->overlap_ep_comm) : "");
}

/* A duration in the unit that reads best. */
static void put_duration(strata_buf_t *b, double s) {
  if (s >= 2 * 86400)
    strata_buf_printf(b, "%.1f days", s / 86400);
  else if (s >= 2 * 3600)
    strata_buf_printf(b, "%.1f hours", s / 3600);
  else
    strata_buf_printf(b, "%.0f s", s);
}

/* The token budget's time, cost and energy (--tokens), and how the plan
 * chosen by cost or energy compares with the fastest. */
static void sum_cost(strata_buf_t *b, const strata_plan_t *p) {
  if (!(p->tokens > 0) || !(p->train_seconds > 0)) return;
  strata_buf_printf(b, "  %-20s %.4g tokens in ", "token budget", p->tokens);
  put_duration(b, p->train_seconds);
  strata_buf_puts(b, "\n");
  if (p->cost_usd > 0)
    strata_buf_printf(b, "  %-20s $%.0f (%d %ss at $%.2f an hour together)\n",
                      "cost", p->cost_usd, p->devices, st__dev(p),
                      p->price_usd_per_hour);
  else
    strata_buf_printf(b,
                      "  %-20s not known: a %s of the plan has no price in "
                      "the GPU table (--gpu-price MODEL=USD gives one)\n",
                      "cost", st__dev(p));
  if (p->energy_kwh > 0)
    strata_buf_printf(b,
                      "  %-20s %.0f kWh (%.1f kW of board power at MFU "
                      "%.1f %%; GPUs only)\n",
                      "energy", p->energy_kwh, p->power_kw, p->mfu * 100);
  strata_buf_printf(b, "  %-20s %s", "objective",
                    strata_plan_objective_name(p->objective));
  if (p->time_best_seconds > 0) {
    double slower = p->train_seconds / p->time_best_seconds - 1;
    double base = p->objective == STRATA_OBJECTIVE_ENERGY ? p->time_best_energy
                                                          : p->time_best_cost;
    double mine =
        p->objective == STRATA_OBJECTIVE_ENERGY ? p->energy_kwh : p->cost_usd;
    if (base > 0)
      strata_buf_printf(b,
                        ": %.1f %% %s and %.1f %% slower than the fastest "
                        "plan (",
                        100 * (1 - mine / base),
                        p->objective == STRATA_OBJECTIVE_ENERGY ? "less energy"
                                                                : "cheaper",
                        100 * slower);
    else
      strata_buf_printf(b, ": %.1f %% slower than the fastest plan (",
                        100 * slower);
    put_duration(b, p->time_best_seconds);
    if (p->time_best_cost > 0)
      strata_buf_printf(b, ", $%.0f", p->time_best_cost);
    if (p->time_best_energy > 0)
      strata_buf_printf(b, ", %.0f kWh", p->time_best_energy);
    strata_buf_puts(b, ")");
  } else if (p->objective != STRATA_OBJECTIVE_TIME && p->n_groups > 0)
    strata_buf_puts(b, ": the fastest plan is also the least");
  else if (p->objective != STRATA_OBJECTIVE_TIME) /* (not searched by it) */
    strata_buf_puts(b, ": on a cluster of one shape the plan is the fastest "
                       "configuration (--pareto gpus shows those on fewer "
                       "GPUs)");
  strata_buf_puts(b, "\n");
}

/* The option lines, from export/plan_text.h's table. */
#define TEXT_LINE(keys, label, when, fmt, ...)                                 \
  if (when) strata_buf_printf(b, "  %-20s " fmt "\n", label, __VA_ARGS__);
#define TEXT_WRITER(keys, label, when, writer)                                 \
  if (when) writer(b, p, label);
static void sum_options(strata_buf_t *b, const strata_plan_t *p) {
  ST__PLAN_TEXT(TEXT_LINE, TEXT_WRITER)
}
#undef TEXT_LINE
#undef TEXT_WRITER

static void sum_head(strata_buf_t *b, const strata_plan_t *p) {
  strata_buf_printf(b, "plan: %s on %s (%d devices)\n",
                    p->model ? p->model : "?", p->cluster ? p->cluster : "?",
                    p->devices);
  sum_parallelism(b, p);
  sum_schedule(b, p);
  sum_options(b, p);
  const strata_step_items_t *it = &p->step_items;
  strata_buf_printf(b, "  %-20s %.3f ms\n", "step time", p->step_seconds * 1e3);
  st__step_item_t li[ST__STEP_ITEMS];
  int n = st__step_list(it, li);
  strata_buf_printf(b, "  %-20s", "");
  for (int i = 0; i < n; i++)
    strata_buf_printf(b, "%s%s %.1f", i ? " + " : " ", li[i].name,
                      li[i].v * 1e3);
  strata_buf_puts(b, " ms\n");
  if (p->model_flops_per_step <= 0 && p->tokens_per_second <= 0) {
    /* a plan straight from the search: the figures come from the stitch */
    strata_buf_printf(b, "  %-20s not computed: call strata_merge_stitch()\n",
                      "tokens/s, MFU");
  } else {
    strata_buf_printf(b, "  %-20s %.0f\n", "tokens/s", p->tokens_per_second);
    strata_buf_printf(
        b, "  %-20s %.1f %% of the dense %s peak (%.1f TFLOP/s)\n", "MFU",
        p->mfu * 100, st__peak_name(p), p->gpu_peak_flops / 1e12);
    strata_buf_printf(b, "  %-20s %.1f per %s\n", "model TFLOP/s",
                      p->mfu * p->gpu_peak_flops / 1e12, st__dev(p));
    sum_convention(b, p);
  }
  sum_cost(b, p);
  st__summary_peak(b, p);
}

/* One row per pipeline rank: every memory item the GPU sees. */
static void sum_ranks(strata_buf_t *b, const strata_plan_t *p) {
  int cal = p->ranks && p->pp > 0 && p->ranks[0].mem.calibration != 0;
  strata_buf_printf(b,
                    "\n  %4s  %7s = %7s %7s %7s %7s %6s  %7s %6s %6s %6s "
                    "%6s%s",
                    "rank", "memory", "weights", "grads", "optim", "act", "tmp",
                    "context", "wspace", "nccl", "bucket", "frag",
                    cal ? "    cal" : "");
  st__summary_mem_head(b, p);
  if (p->n_groups > 1) /* a mixed cluster: each rank's GPU and its memory */
    strata_buf_printf(b, " %7s %s", "of", "gpu");
  strata_buf_puts(b, "  (GiB)\n");
  for (int r = 0; p->ranks && r < p->pp; r++) {
    const strata_mem_items_t *m = &p->ranks[r].mem;
    strata_buf_printf(b,
                      "  %4d  %7.2f = %7.2f %7.2f %7.2f %7.2f %6.2f  %7.2f "
                      "%6.2f %6.2f %6.2f %6.2f",
                      r, m->total / GIB, m->weights / GIB, m->gradients / GIB,
                      m->optimizer / GIB, m->activations / GIB,
                      m->transient / GIB, m->context / GIB, m->workspace / GIB,
                      m->nccl / GIB, m->buckets / GIB, m->fragmentation / GIB);
    if (cal) strata_buf_printf(b, " %6.2f", m->calibration / GIB);
    st__summary_mem_row(b, p, m);
    if (p->n_groups > 1)
      strata_buf_printf(b, " %7.2f %s", st__rank_capacity(p, r) / GIB,
                        st__rank_gpu(p, r));
    strata_buf_puts(b, "\n");
  }
}

static void sum_stage(strata_buf_t *b, const strata_plan_t *p, int s) {
  const strata_plan_stage_t *st = &p->stages[s];
  char lay[32], dev[32];
  if (st->layer_end > st->layer_begin)
    snprintf(lay, sizeof lay, "%d-%d", st->layer_begin, st->layer_end - 1);
  else /* a chunk of the embedding or the loss alone */
    snprintf(lay, sizeof lay, "%s",
             s == 0                 ? "E"
             : s + 1 == p->n_stages ? "L"
                                    : "-");
  snprintf(dev, sizeof dev, "%dx%d", st->nodes, st->gpus_per_node);
  strata_buf_printf(
      b, "  %5d %5d  %-9s %-8s %9d  %9.3f %9.3f %9.3f", s, st->rank, lay, dev,
      st->in_flight, st->fwd_seconds * 1e3, st->bwd_seconds * 1e3,
      p->p2p_seconds && s + 1 < p->n_stages ? p->p2p_seconds[s] * 1e3 : 0.0);
  if (p->n_groups > 1) /* a mixed cluster: whose GPUs run it */
    strata_buf_printf(b, "  %d %s", st->group, st->gpu_model);
  strata_buf_puts(b, "\n");
}

/* A mixed cluster: each node group's stages and layers, or why it runs
 * none. */
void st__text_groups(strata_buf_t *b, const strata_plan_t *p,
                     const char *label) {
  for (int z = 0; z < p->n_groups; z++) {
    int n = 0, lo = 0, hi = 0;
    const char *gpu = "";
    for (int s = 0; s < p->n_stages; s++) {
      const strata_plan_stage_t *st = &p->stages[s];
      int l = st->layer_end - st->layer_begin;
      if (st->group != z) continue;
      lo = !n || l < lo ? l : lo;
      hi = !n || l > hi ? l : hi;
      gpu = st->gpu_model;
      n++;
    }
    if (!n)
      strata_buf_printf(b,
                        "  %-20s group %d: left out, the best plan found "
                        "does not use it\n",
                        z ? "" : label, z);
    else if (lo == hi)
      strata_buf_printf(b, "  %-20s group %d, %s: %d stage%s of %d layers\n",
                        z ? "" : label, z, gpu, n, n > 1 ? "s" : "", lo);
    else
      strata_buf_printf(b,
                        "  %-20s group %d, %s: %d stages of %d to %d "
                        "layers\n",
                        z ? "" : label, z, gpu, n, lo, hi);
  }
}

/* "recompute none (selective the same here ...)" for a line that stands
 * for the next too (st__same_but_recompute), into name. */
static int merged_name(const strata_plan_config_t *v, int n, int i, char *name,
                       size_t size) {
  st__list_name(v, n, i, name, size);
  if (i + 1 >= n || !st__same_but_recompute(&v[i], &v[i + 1])) return 0;
  size_t len = strlen(name);
  if (len < size)
    snprintf(name + len, size - len,
             " (recompute %s the same here: it drops nothing more)",
             strata_recompute_name(v[i + 1].recompute));
  return 1;
}

/* The runners-up: near-ties a user may prefer. */
static void sum_top(strata_buf_t *b, const strata_plan_t *p) {
  if (p->n_top < 2) return;
  strata_buf_puts(b, "\nbest configurations:\n");
  for (int i = 0, line = 1; i < p->n_top; i++, line++) {
    const strata_plan_config_t *c = &p->top[i];
    char mem[32], name[300];
    char where[96] = "";
    int skip = merged_name(p->top, p->n_top, i, name, sizeof name);
    if (p->n_groups > 1 && c->group > 0)
      snprintf(where, sizeof where, ", node group %d alone", c->group - 1);
    else if (p->n_groups > 1)
      snprintf(where, sizeof where, ", stages over the node groups");
    else if (c->pp > 1 && c->first_layers != c->last_layers &&
             !strstr(name, " first, "))
      snprintf(where, sizeof where, ", uneven first/last");
    strata_buf_printf(b, "  %d. %s%s: %.3f ms", line, name, where,
                      c->step_seconds * 1e3);
    if (i > 0 && p->top[0].step_seconds > 0)
      strata_buf_printf(b, " (%+.2f %%)",
                        100 * (c->step_seconds / p->top[0].step_seconds - 1));
    strata_buf_printf(b, ", %s\n",
                      strata_fmt_bytes(c->peak_memory_bytes, mem, sizeof mem));
    i += skip;
  }
}

/* The GPUs a configuration uses. */
static double config_gpus(const strata_plan_config_t *c) {
  return (double)c->tp * (c->cp > 1 ? c->cp : 1) * c->pp * c->dp;
}

/* --pareto: the front, fastest first; the plan's own configuration is
 * its first (the fastest that fits). */
static void sum_pareto(strata_buf_t *b, const strata_plan_t *p) {
  if (p->pareto_axes <= 0 || p->n_pareto < 1) return;
  strata_buf_printf(b,
                    "\nPareto front (step time against peak memory per "
                    "device%s): %d configuration%s, none beaten on %s\n",
                    p->pareto_axes == STRATA_PARETO_GPUS
                        ? (p->npu ? " and NPUs used" : " and GPUs used")
                        : "",
                    p->n_pareto, p->n_pareto == 1 ? "" : "s",
                    p->pareto_axes == STRATA_PARETO_GPUS
                        ? "all three by another"
                        : "both by another");
  for (int i = 0, line = 1; i < p->n_pareto; i++, line++) {
    const strata_plan_config_t *c = &p->pareto[i];
    char mem[32], name[300];
    int skip = merged_name(p->pareto, p->n_pareto, i, name, sizeof name);
    double n = config_gpus(c);
    strata_buf_printf(b, "  %d. %s: %.3f ms, %s, %.0f %s%s\n", line, name,
                      c->step_seconds * 1e3,
                      strata_fmt_bytes(c->peak_memory_bytes, mem, sizeof mem),
                      n, st__dev(p), n == 1 ? "" : "s");
    i += skip;
  }
}

/* Which frameworks run the plan, and why not (frameworks.c). */
static void sum_frameworks(strata_buf_t *b, const strata_plan_t *p) {
  st__fw_verdict_t v[ST__N_FRAMEWORKS];
  st__frameworks(p, v);
  strata_buf_puts(b, "\nframeworks:\n");
  for (int i = 0; i < ST__N_FRAMEWORKS; i++)
    strata_buf_printf(b, "  %s: %s%s%s\n", v[i].name, v[i].ok ? "yes" : "no",
                      v[i].ok ? "" : " -- ", v[i].why);
}

static void sum_template(strata_buf_t *b, const strata_plan_t *p) {
  const strata_stage_result_t *r = p->stages[0].result;
  char mem[32];
  if (!r || st__first_layer_op(r) < 0) return;
  strata_buf_printf(b, "\nlayer template of stage 0 (per device):\n");
  strata_buf_printf(b, "  %-24s %6s  %-14s %-12s %12s %10s\n", "op", "repeat",
                    "strategy", "placement", "memory", "comm ms");
  for (int i = 0; i < r->n_ops; i++) {
    const strata_op_choice_t *o = &r->ops[i];
    if (o->layer < 0) continue;
    strata_buf_printf(
        b, "  %-24s %6d  %-14s %-12s %12s %10.4f\n", o->name ? o->name : "?",
        o->repeat, o->strategy ? o->strategy : "?",
        o->placement ? o->placement : "?",
        strata_fmt_bytes(o->mem_bytes, mem, sizeof mem), o->comm_seconds * 1e3);
  }
}

int strata_plan_summary(const strata_plan_t *p, char **text) {
  strata_buf_t b;
  if (!p || !text || p->n_stages < 1)
    return strata_error(STRATA_EINVAL, "summary: a plan with no stage");
  strata_buf_init(&b);
  sum_head(&b, p);
  sum_ranks(&b, p);
  strata_buf_printf(&b, "\n  %5s %5s  %-9s %-8s %9s  %9s %9s %9s%s\n", "stage",
                    "rank", "layers", "devices", "in-flight", "fwd ms",
                    "bwd ms", "p2p ms", p->n_groups > 1 ? "  group gpu" : "");
  for (int s = 0; s < p->n_stages; s++)
    sum_stage(&b, p, s);
  sum_top(&b, p);
  sum_pareto(&b, p);
  st__sum_fallbacks(&b, p);
  sum_frameworks(&b, p);
  sum_template(&b, p);
  if (p->time_limited)
    strata_buf_puts(&b, "\nthe search's time limit was reached: this is the "
                        "best plan found so far\n");
  if (p->time_limited && p->bound_seconds > 0)
    strata_buf_printf(
        &b, "no plan is faster than %.3f s a step (gap %.1f %%)\n",
        p->bound_seconds,
        p->step_seconds > 0
            ? 100 * (p->step_seconds - p->bound_seconds) / p->step_seconds
            : 0.0);
  return strata_buf_finish(&b, text);
}

/* ---- JSON ---- */

static int json_mem(cJSON *st, const strata_stage_result_t *r) {
  cJSON *m = cJSON_AddObjectToObject(st, "memory");
  if (!m) return -1;
  return st__json_add_num(m, "weights_bytes", r ? r->mem.weights : 0) |
         st__json_add_num(m, "gradients_bytes", r ? r->mem.gradients : 0) |
         st__json_add_num(m, "optimizer_bytes", r ? r->mem.optimizer : 0) |
         st__json_add_num(m, "activations_bytes", r ? r->mem.activations : 0) |
         st__json_add_num(m, "transient_bytes", r ? r->mem.transient : 0) |
         st__json_add_num(m, "total_bytes", r ? r->mem.total : 0);
}

static int json_ops(cJSON *st, const strata_stage_result_t *r) {
  cJSON *a = cJSON_AddArrayToObject(st, "ops");
  int bad = !a;
  for (int i = 0; !bad && r && i < r->n_ops; i++) {
    const strata_op_choice_t *o = &r->ops[i];
    cJSON *x = cJSON_CreateObject();
    if (!x || !cJSON_AddItemToArray(a, x)) {
      cJSON_Delete(x);
      return -1;
    }
    bad |= st__json_add_str(x, "name", o->name ? o->name : "") |
           st__json_add_num(x, "layer", o->layer) |
           st__json_add_num(x, "repeat", o->repeat) |
           st__json_add_str(x, "strategy", o->strategy ? o->strategy : "") |
           st__json_add_str(x, "placement", o->placement ? o->placement : "") |
           st__json_add_num(x, "mem_bytes", o->mem_bytes) |
           st__json_add_num(x, "comm_seconds", o->comm_seconds);
  }
  return bad ? -1 : 0;
}

static int json_stage(cJSON *arr, const strata_plan_stage_t *st, int mixed) {
  cJSON *o = st__json_push_object(arr);
  const strata_stage_result_t *r = st->result;
  if (!o) return -1;
  int bad =
      st__json_add_num(o, "layer_begin", st->layer_begin) |
      st__json_add_num(o, "layer_end", st->layer_end) |
      st__json_add_num(o, "devices", st__stage_devices(st)) |
      st__json_add_num(o, "nodes", st->nodes) |
      st__json_add_num(o, "gpus_per_node", st->gpus_per_node) |
      st__json_add_num(o, "first_rank", st->first_rank) |
      st__json_add_num(o, "rank", st->rank) |
      st__json_add_num(o, "in_flight", st->in_flight) |
      st__json_add_str(o, "status",
                       r ? strata_stage_status_name(r->status) : "none") |
      json_mem(o, r) | st__json_add_num(o, "fwd_seconds", st->fwd_seconds) |
      st__json_add_num(o, "bwd_seconds", st->bwd_seconds) |
      st__json_add_num(o, "sync_seconds", st->sync_seconds) | json_ops(o, r);
  if (!bad && mixed)
    bad = st__json_add_num(o, "group", st->group) |
          st__json_add_str(o, "gpu_model", st->gpu_model);
  return bad ? -1 : 0;
}

/* ---- JSON: the plan's fields as plan_fields.h lists them ---- */

enum { J_ROOT, J_ARCH, J_OPTS, J_FIG, J_STEP, J_SEARCH, J_NONE };

/* Each kind takes the key as the list writes it (NAME pastes it into
 * strata_<key>_name, the others quote it). */
#define JPUT_NUM(o, key, v) st__json_add_num(o, #key, v)
#define JPUT_BOOL(o, key, v) st__json_add_bool(o, #key, v)
#define JPUT_POS(o, key, v) st__json_add_bool(o, #key, (v) > 0)
#define JPUT_NAME(o, key, v) st__json_add_str(o, #key, strata_##key##_name(v))
#define JPUT_NAMES(o, key, v) json_names(o, #key, strata_##key##_name, v)
#define JPUT_CPCOMM(o, key, v)                                                 \
  st__json_add_str(o, #key, (v) == STRATA_CP_ALLGATHER ? "all_gather" : "p2p")
#define JPUT_PREC(o, key, v)                                                   \
  (st__json_add_str(o, "precision",                                            \
                    (v) == STRATA_LOWP_NVFP4 ? "fp4" : "fp8") ||               \
   st__json_add_str(o, "gemm_recipe", strata_lowp_name(v)))
#define JPUT_SIGMOID(o, key, v) st__json_add_str(o, #key, "sigmoid")
#define JPUT_DTYPE(o, key, v)                                                  \
  st__json_add_str(o, #key, strata_state_dtype_name(v))
#define JPUT_MODULES(o, key, v) st__json_add_str(o, #key, modules_of(v, mb))
#define JPUT_TIMING(o, key, v)                                                 \
  (flags & STRATA_PLAN_JSON_TIMINGS ? st__json_add_num(o, #key, v) : 0)
#define JROW(part, t, m, key, what, lo, hi, codec, slot, jsec, jkind, when,    \
             ...)                                                              \
  if (J_##jsec == sec && (when)) bad |= JPUT_##jkind(o, key, p->m);

static const char *modules_of(int m, char *buf) {
  strata_recompute_modules_format((unsigned)m, ",", buf, 128);
  return buf;
}

/* A set's names as a list (bit k, strata_<key>_name(k)). */
static int json_names(cJSON *o, const char *key, const char *(*name)(int),
                      int v) {
  cJSON *a = cJSON_AddArrayToObject(o, key);
  if (!a) return -1;
  for (int k = 0; name(k); k++) {
    cJSON *x = v & (1 << k) ? cJSON_CreateString(name(k)) : NULL;
    if (v & (1 << k) && (!x || !cJSON_AddItemToArray(a, x))) {
      cJSON_Delete(x);
      return -1;
    }
  }
  return 0;
}

/* The fields of section sec into o. */
static int json_fields(cJSON *o, const strata_plan_t *p, int sec,
                       unsigned flags) {
  int bad = 0;
  char mb[128];
  STRATA_PLAN_FIELDS(JROW)
  return bad;
}

/* "rope_scaling": null, or its type and the figures it states (the keys
 * of a trace's model, docs/trace-format.md). */
static int json_rope_scaling(cJSON *m, const strata_plan_t *p) {
  const strata_rope_scaling_t *r = &p->rope_scaling;
  const char *names[] = {"factor", "low", "high", "mscale", "mscale_all"};
  const double v[] = {r->factor, r->low, r->high, r->mscale, r->mscale_all};
  if (r->type == STRATA_ROPE_SCALING_NONE || !strata_rope_scaling_name(r->type))
    return cJSON_AddNullToObject(m, "rope_scaling") ? 0 : -1;
  cJSON *o = cJSON_AddObjectToObject(m, "rope_scaling");
  if (!o) return -1;
  int bad = st__json_add_str(o, "type", strata_rope_scaling_name(r->type));
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    if (v[i] > 0) bad |= st__json_add_num(o, names[i], v[i]);
  if (r->original > 0) bad |= st__json_add_num(o, "original", r->original);
  return bad | st__json_add_bool(o, "unrounded", r->unrounded) |
         st__json_add_bool(o, "full_only", r->full_only);
}

static int json_arch(cJSON *root, const strata_plan_t *p) {
  cJSON *m = cJSON_AddObjectToObject(root, "architecture");
  if (!m) return -1;
  return st__json_add_str(m, "family", p->family) |
         json_fields(m, p, J_ARCH, 0) | json_rope_scaling(m, p);
}

static int json_options(cJSON *root, const strata_plan_t *p) {
  cJSON *o = cJSON_AddObjectToObject(root, "options");
  if (!o) return -1;
  return json_fields(o, p, J_OPTS, 0);
}

static int json_items(cJSON *o, const strata_mem_items_t *m) {
  return st__json_add_num(o, "weights_bytes", m->weights) |
         st__json_add_num(o, "gradients_bytes", m->gradients) |
         st__json_add_num(o, "optimizer_bytes", m->optimizer) |
         st__json_add_num(o, "activations_bytes", m->activations) |
         st__json_add_num(o, "transient_bytes", m->transient) |
         st__json_add_num(o, "context_bytes", m->context) |
         st__json_add_num(o, "workspace_bytes", m->workspace) |
         st__json_add_num(o, "nccl_bytes", m->nccl) |
         st__json_add_num(o, "buckets_bytes", m->buckets) |
         st__json_add_num(o, "fragmentation_bytes", m->fragmentation) |
         st__json_add_num(o, "calibration_bytes", m->calibration) |
         st__json_add_num(o, "total_bytes", m->total) |
         st__json_par_items(o, m);
}

static int json_ranks(cJSON *root, const strata_plan_t *p) {
  cJSON *a = cJSON_AddArrayToObject(root, "ranks");
  if (!a) return -1;
  for (int r = 0; p->ranks && r < p->pp; r++) {
    const strata_plan_rank_t *k = &p->ranks[r];
    cJSON *o = cJSON_CreateObject(), *m;
    if (!o || !cJSON_AddItemToArray(a, o)) {
      cJSON_Delete(o);
      return -1;
    }
    if (!(m = cJSON_AddObjectToObject(o, "memory")) || json_items(m, &k->mem) ||
        st__json_add_num(o, "busy_seconds", k->busy_seconds) |
            st__json_add_num(o, "end_seconds", k->end_seconds) |
            st__json_add_num(o, "sync_seconds", k->sync_seconds) |
            st__json_add_num(o, "exposed_sync_seconds", k->exposed_sync) |
            st__json_add_num(o, "optimizer_seconds", k->optimizer_seconds))
      return -1;
    /* a mixed cluster: the rank's GPU and the memory it is measured by */
    if (p->n_groups > 1 &&
        (st__json_add_str(o, "gpu_model", st__rank_gpu(p, r)) |
         st__json_add_num(o, "gpu_memory_bytes", st__rank_capacity(p, r))))
      return -1;
  }
  return 0;
}

/* A listed configuration's degrees, split and recompute (the runners-up
 * and the Pareto front alike). */
static int json_degrees(cJSON *o, const strata_plan_config_t *c) {
  return st__json_add_num(o, "tp", c->tp) | st__json_add_num(o, "pp", c->pp) |
         st__json_add_num(o, "dp", c->dp) |
         st__json_add_num(o, "micro_batch", c->micro_batch) |
         st__json_add_num(o, "vpp", c->vpp) |
         st__json_add_bool(o, "sequence_parallel", c->sequence_parallel) |
         st__json_add_num(o, "zero_stage", c->zero_stage) |
         st__json_add_str(o, "recompute", strata_recompute_name(c->recompute)) |
         st__json_add_num(o, "first_layers", c->first_layers) |
         st__json_add_num(o, "last_layers", c->last_layers) |
         (c->layout[0] ? st__json_add_str(o, "layout", c->layout) : 0);
}

static int json_step(cJSON *root, const strata_plan_t *p) {
  cJSON *o = cJSON_AddObjectToObject(root, "step_items");
  if (!o) return -1;
  return json_fields(o, p, J_STEP, 0);
}

static int json_top(cJSON *root, const strata_plan_t *p) {
  cJSON *a = cJSON_AddArrayToObject(root, "top");
  if (!a) return -1;
  for (int i = 0; i < p->n_top; i++) {
    const strata_plan_config_t *c = &p->top[i];
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(a, o)) {
      cJSON_Delete(o);
      return -1;
    }
    if (json_degrees(o, c) |
        st__json_add_num(o, "step_seconds", c->step_seconds) |
        st__json_add_num(o, "peak_memory_bytes", c->peak_memory_bytes) |
        st__json_add_num(o, "vs_best",
                         p->top[0].step_seconds > 0
                             ? c->step_seconds / p->top[0].step_seconds - 1
                             : 0) |
        st__json_par_config(o, c))
      return -1;
    /* on node groups: null over the groups, else the one group it runs on */
    if (p->n_groups > 1 &&
        !(c->group > 0 ? cJSON_AddNumberToObject(o, "node_group", c->group - 1)
                       : cJSON_AddNullToObject(o, "node_group")))
      return -1;
  }
  return 0;
}

/* --pareto: "pareto_axes" and the front, each configuration by its name
 * (as the summary prints it), figures and degrees. */
static int json_pareto(cJSON *root, const strata_plan_t *p) {
  if (p->pareto_axes <= 0) return 0;
  if (st__json_add_str(root, "pareto_axes", strata_pareto_name(p->pareto_axes)))
    return -1;
  cJSON *a = cJSON_AddArrayToObject(root, "pareto");
  if (!a) return -1;
  for (int i = 0; i < p->n_pareto; i++) {
    const strata_plan_config_t *c = &p->pareto[i];
    char name[200];
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(a, o)) {
      cJSON_Delete(o);
      return -1;
    }
    st__list_name(p->pareto, p->n_pareto, i, name, sizeof name);
    if (st__json_add_str(o, "config", name) |
        st__json_add_num(o, "step_seconds", c->step_seconds) |
        st__json_add_num(o, "peak_memory_bytes", c->peak_memory_bytes) |
        st__json_add_num(o, "gpus", config_gpus(c)) | json_degrees(o, c) |
        st__json_par_config(o, c))
      return -1;
  }
  return 0;
}

/* Every degree at the top level beside tp, pp and dp, as the readers take
 * them (cp and ep 1 where unused, etp tp where unset; "options" keeps its
 * own cp, ep and etp where they apply). */
static int json_degrees_top(cJSON *root, const strata_plan_t *p) {
  return st__json_add_num(root, "cp", st__plan_cp(p)) |
         st__json_add_num(root, "ep", st__plan_ep(p)) |
         st__json_add_num(root, "etp", st__plan_etp(p)) |
         st__json_add_num(root, "vpp", p->vpp > 1 ? p->vpp : 1);
}

static int json_scalars(cJSON *root, const strata_plan_t *p) {
  return st__json_add_num(root, "schema_version", STRATA_JSON_SCHEMA_VERSION) |
         st__json_add_str(root, "model", p->model ? p->model : "") |
         st__json_add_str(root, "cluster", p->cluster ? p->cluster : "") |
         json_fields(root, p, J_ROOT, 0) | json_degrees_top(root, p) |
         json_arch(root, p) | json_options(root, p);
}

/* "flop_convention": what mfu and model_tflops_per_gpu count; with the
 * whole count known (a plan just made), "mfu_causal_full" and
 * "model_tflops_per_gpu_causal_full"; the stack where known. */
static int json_convention(cJSON *root, const strata_plan_t *p) {
  double den = p->step_seconds * p->devices * p->gpu_peak_flops;
  int rc = st__json_add_str(root, "flop_convention", "causal_halved");
  if (p->model_flops_unmasked_per_step > 0 && den > 0) {
    double m = p->model_flops_unmasked_per_step / den;
    rc |= st__json_add_num(root, "mfu_causal_full", m) |
          st__json_add_num(root, "model_tflops_per_gpu_causal_full",
                           m * p->gpu_peak_flops / 1e12);
  }
  if (p->stack_known) {
    cJSON *st = cJSON_AddObjectToObject(root, "stack");
    if (!st) return -1;
    rc |= st__json_add_str(st, "attn", strata_attn_kernel_name(p->stack.attn)) |
          st__json_add_str(st, "gemm", strata_gemm_path_name(p->stack.gemm));
    if (p->stack.alloc > STRATA_ALLOC_CACHING)
      rc |= st__json_add_str(st, "alloc", strata_alloc_name(p->stack.alloc));
  }
  return rc;
}

static int json_figures(cJSON *root, const strata_plan_t *p) {
  cJSON *a = cJSON_AddArrayToObject(root, "p2p_seconds");
  for (int s = 0; a && s + 1 < p->n_stages; s++) {
    cJSON *x = cJSON_CreateNumber(p->p2p_seconds ? p->p2p_seconds[s] : 0);
    if (!x || !cJSON_AddItemToArray(a, x)) {
      cJSON_Delete(x);
      return -1;
    }
  }
  if (!a) return -1;
  return json_fields(root, p, J_FIG, 0) |
         st__json_add_str(root, "mfu_peak", st__peak_name(p)) |
         st__json_add_num(root, "model_tflops_per_gpu",
                          p->mfu * p->gpu_peak_flops / 1e12) |
         json_convention(root, p);
}

static int json_frameworks(cJSON *root, const strata_plan_t *p) {
  st__fw_verdict_t v[ST__N_FRAMEWORKS];
  cJSON *a = cJSON_AddArrayToObject(root, "frameworks");
  if (!a) return -1;
  st__frameworks(p, v);
  for (int i = 0; i < ST__N_FRAMEWORKS; i++) {
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(a, o)) {
      cJSON_Delete(o);
      return -1;
    }
    if (st__json_add_str(o, "name", v[i].name) |
        st__json_add_bool(o, "runs", v[i].ok) |
        st__json_add_str(o, "reason", v[i].why))
      return -1;
  }
  return 0;
}

/* How the plan was found.  Cache figures are those of the run that made
 * it (a plan file keeps them as 0).  The time taken differs from run to
 * run, so it is there only when asked for: the same plan then always
 * prints the same JSON. */
static int json_search(cJSON *root, const strata_plan_t *p, unsigned flags) {
  cJSON *o = cJSON_AddObjectToObject(root, "search");
  if (!o) return 1;
  return json_fields(o, p, J_SEARCH, flags);
}

int strata_plan_json(const strata_plan_t *p, char **text) {
  return strata_plan_json_flags(p, 0, text);
}

int strata_plan_json_flags(const strata_plan_t *p, unsigned flags,
                           char **text) {
  cJSON *root = NULL, *stages;
  int rc = 0;
  if (!p || !text || p->n_stages < 1)
    return strata_error(STRATA_EINVAL, "plan json: a plan with no stage");
  root = cJSON_CreateObject();
  int bad = !root || json_scalars(root, p);
  stages = bad ? NULL : cJSON_AddArrayToObject(root, "stages");
  bad |= !stages;
  for (int s = 0; !bad && s < p->n_stages; s++)
    bad |= json_stage(stages, &p->stages[s], p->n_groups > 1);
  if (!bad && p->n_groups > 1)
    bad |= st__json_add_num(root, "node_groups", p->n_groups);
  bad |= bad ? 1 : json_figures(root, p);
  bad |= bad ? 1 : json_step(root, p);
  bad |= bad ? 1 : json_ranks(root, p);
  bad |= bad ? 1 : json_top(root, p);
  bad |= bad ? 1 : json_pareto(root, p);
  bad |= bad ? 1 : st__json_fallbacks(root, p);
  bad |= bad ? 1 : json_search(root, p, flags);
  bad |= bad ? 1 : json_frameworks(root, p);
  if (!bad) *text = st__json_print(root);
  if (bad || !*text) rc = strata_error(STRATA_ENOMEM, "out of memory");
  cJSON_Delete(root);
  return rc;
}
