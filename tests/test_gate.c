/*
 * test_gate.c - one gate: the plans the search returns are what the
 * exporters take.  For random small models, clusters and options (the
 * frameworks, ZeRO, vpp, cp, ep, the experts' overlap, the parameter
 * gather under the optimizer step, offloads), every plan strata_pipeline_
 * plan returns, stitched as strata plan stitches it, is accepted by each
 * exporter its framework lines (strata_plan_frameworks) say yes to and refused
 * by each they say no to, and the framework it was planned for says yes.  The
 * search asks the rulebook (pipeline/rules.c) and the exporters ask it too: a
 * rule the search did not ask would show here as a plan its own export refuses.
 * Seeded, so every run draws the same configurations.
 */
#include <stdio.h>
#include <string.h>

#include "strata/strata.h"
#include "testlib.h"

#define DRAWS 360 /* configurations drawn; at least 200 must plan */

static unsigned long long rng = 0x5eed46ULL;
static int pick(int n) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17; /* xorshift64 */
  return (int)(rng % (unsigned long long)n);
}
#define ONE_OF(a) (a)[pick((int)(sizeof(a) / sizeof((a)[0])))]

/* A small model: a family's or a mixture of experts' shape, shrunk;
 * for torchtitan, whose export names one of its flavors, Llama 3 8B as
 * it is. */
static int model_of(strata_plan_opts_t *o, strata_graph_t **g, int *moe) {
  static const char *specs[] = {"gpt", "llama", "mixtral-8x7b"};
  static const int layers[] = {2, 4, 6, 8, 12};
  static const int hidden[] = {256, 512, 1024};
  static const int seq[] = {512, 1024, 2048};
  const char *spec = ONE_OF(specs);
  strata_gen_opts_keep(&o->gen);
  *moe = 0;
  if (o->framework == STRATA_FRAMEWORK_TORCHTITAN) {
    o->model_spec = "llama3-8b";
    o->gen.seq = 1024; /* not a flavor's size: a shorter search */
    return strata_model_load(o->model_spec, &o->gen, g);
  }
  o->gen.layers = ONE_OF(layers);
  o->gen.hidden = ONE_OF(hidden);
  o->gen.heads = 8, o->gen.seq = ONE_OF(seq);
  *moe = !strcmp(spec, "mixtral-8x7b");
  if (*moe)
    o->gen.ffn = o->gen.moe_ffn = 2 * o->gen.hidden, o->gen.kv_heads = 8;
  if (!strcmp(spec, "llama")) o->gen.ffn = 0, o->gen.kv_heads = 8;
  o->gen.vocab = 8192;
  o->gen.flash_attention = 1; /* context parallelism runs in it */
  o->model_spec = spec;
  return strata_model_load(spec, &o->gen, g);
}

/* Options drawn for a model with (moe) or without experts. */
static void options_of(strata_plan_opts_t *o, int moe) {
  static const int batch[] = {8, 16, 32, 64};
  static const int zero[] = {STRATA_AUTO, 0, 1, 2, 3};
  o->global_batch = ONE_OF(batch);
  o->zero_stage = ONE_OF(zero);
  o->vpp = pick(3) == 0 ? 2 : 0;
  o->cp = pick(4) == 0 ? 2 : 0;
  if (moe) o->ep = pick(2) ? 2 : 0;
  if (moe) o->overlap_ep_comm = pick(3) == 0;
  o->overlap_param_gather_step = pick(3) == 0;
  /* its ZeRO 1, else the options' rules refuse it before any search */
  if (o->overlap_param_gather_step && o->zero_stage != STRATA_AUTO)
    o->zero_stage = 1;
  if (o->framework == STRATA_FRAMEWORK_TORCHTITAN && o->zero_stage == 0)
    o->zero_stage = STRATA_AUTO; /* FSDP2: ZeRO 1 to 3 */
  o->search_offload = pick(4) == 0;
  o->precision_aware_optimizer = pick(4) == 0;
}

/* The exporter behind each framework line, in strata_plan_frameworks'
 * order: 0 when it accepts the plan. */
static int exported(const strata_plan_t *p, int i) {
  strata_export_opts_t eo;
  char *text = NULL;
  int rc;
  strata_export_opts_init(&eo);
  rc = i == 0   ? strata_export_megatron(p, &text)
       : i == 1 ? strata_export_deepspeed(p, &text)
       : i == 2 ? strata_export_torch(p, &eo, &text)
                : strata_export_titan(p, &text);
  strata_free(text);
  strata_error_clear();
  return rc;
}

/* Each line's verdict against its exporter; the planned framework's yes. */
static void check_plan(const strata_plan_t *p, strata_framework_t fw) {
  char *lines = NULL;
  ASSERT_OK(strata_plan_frameworks(p, &lines));
  const char *l = lines;
  int planned = fw == STRATA_FRAMEWORK_DEEPSPEED    ? 1
                : fw == STRATA_FRAMEWORK_TORCHTITAN ? 3
                                                    : 0;
  for (int i = 0; i < 4 && l; i++) {
    const char *colon = strchr(l, ':');
    ASSERT(colon != NULL);
    int yes = !strncmp(colon, ": yes", 5);
    int rc = exported(p, i);
    if (yes != (rc == 0) || (i == planned && !yes))
      printf("  %s, tp %d pp %d vpp %d dp %d cp %d ep %d zero %d: line "
             "'%.*s', export %d\n",
             p->model, p->tp, p->pp, p->vpp, p->dp, p->cp, p->ep, p->zero_stage,
             (int)(strcspn(l, "\n")), l, rc);
    ASSERT_EQ(yes, rc == 0);
    if (i == planned) ASSERT(yes);
    l = strchr(l, '\n');
    if (l) l++;
  }
  strata_free(lines);
}

TEST(search_plans_are_exported) {
  static const strata_framework_t fw[] = {
      STRATA_FRAMEWORK_MEGATRON,  STRATA_FRAMEWORK_MEGATRON,
      STRATA_FRAMEWORK_MEGATRON,  STRATA_FRAMEWORK_DEEPSPEED,
      STRATA_FRAMEWORK_DEEPSPEED, STRATA_FRAMEWORK_TORCHTITAN};
  static const char *clusters[] = {"dgx-a100:1", "dgx-a100:2", "dgx-h100:1",
                                   "dgx-h100:2", "dgx-h100:4"};
  int planned = 0, refused = 0, step = 0;
  for (int k = 0; k < DRAWS; k++) {
    strata_plan_opts_t o;
    strata_graph_t *g = NULL;
    strata_cluster_t *c = NULL;
    strata_plan_t *p = NULL;
    int moe = 0;
    strata_plan_opts_init(&o);
    o.quiet = 1;
    o.framework = ONE_OF(fw);
    ASSERT_OK(model_of(&o, &g, &moe));
    ASSERT_OK(strata_cluster_load(ONE_OF(clusters), &c));
    options_of(&o, moe);
    int rc = strata_pipeline_plan(g, c, &o, &p); /* as strata plan: */
    if (rc == 0) ASSERT_OK(strata_merge_stitch(p, g, c));
    strata_error_clear();
    if (rc == 0) {
      check_plan(p, o.framework);
      planned++;
      step += p->overlap_param_gather_step;
    } else {
      /* refused by the options' rules, or nothing fits: a result */
      ASSERT(rc == STRATA_EINVAL || rc == STRATA_EINFEASIBLE);
      refused++;
    }
    strata_plan_destroy(p);
    strata_cluster_destroy(c);
    strata_graph_destroy(g);
  }
  printf("  %d configurations checked: %d planned and exported as their "
         "framework lines say (%d with the gather under the optimizer "
         "step), %d refused or infeasible\n",
         DRAWS, planned, step, refused);
  ASSERT(planned >= 200);
}

static const test_entry_t tests[] = {
    TEST_ENTRY(search_plans_are_exported),
};

TEST_MAIN(tests)
