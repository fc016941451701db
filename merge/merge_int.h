/*
 * merge_int.h - what the files of merge/ share: the binary reader/writer
 * of the plan payload and a few helpers on plans.  Internal: nothing here
 * is public API.
 */
#ifndef STRATA_MERGE_INT_H
#define STRATA_MERGE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "strata/merge.h"

/* The payload: encode into out (init'd here) in format 18, tagged
 * records (payload_tags.c), or decode data of format `version` (3 to 18)
 * into a new plan; `where` prefixes messages. */
int st__payload_encode(const strata_plan_t *p, strata_buf_t *out);
int st__payload_decode(const unsigned char *data, size_t len, const char *where,
                       unsigned version, strata_plan_t **out);
/* Formats 3 to 17's decoder (payload.c). */
int st__payload_decode_legacy(const unsigned char *data, size_t len,
                              const char *where, unsigned version,
                              strata_plan_t **out);
/* Format 18's decoder; *skipped (where not NULL) counts the records of
 * tags it does not know that it skipped (optional ones: an unknown
 * must-understand tag is refused, STRATA_EVERSION).  nested: a fallback's
 * payload, which holds no fallbacks of its own. */
int st__tags_decode(const unsigned char *data, size_t len, const char *where,
                    int nested, int *skipped, strata_plan_t **out);
/* The formats before 18 (payload.c, plan_legacy.h): p as the strata of
 * those formats wrote it, in st__legacy_format(p), the oldest format
 * that holds it (the highest format of a field kept after the stages
 * that is not 0, 7 with a RoPE scaling, 5 with an L2 q/k norm, 4 with
 * node groups, else 3).  Strata writes format 18 only: the tests write
 * these to prove that the old files still read, field for field. */
int st__payload_encode_legacy(const strata_plan_t *p, strata_buf_t *out);
int st__legacy_format(const strata_plan_t *p);
/* Whether a listed configuration (best or on the front) states its layout:
 * format 17 and the layouts block keep them. */
int st__has_layouts(const strata_plan_t *p);
/* 1 if every slot of the old formats' header is some field's. */
int st__plan_fields_complete(void);
/* The plan's fields against each other and their ranges (payload.c): the
 * checks the decoder makes after reading, which the encoder makes before
 * writing, so no plan file strata writes is one it refuses.  A failure
 * returns `code` with "WHERE: KIND: the plan's FIELD ...". */
int st__plan_check(const strata_plan_t *p, int code, const char *where,
                   const char *kind);
/* The degrees as the readers take them (payload.c): cp and ep 0 or 1 are
 * 1 (ep 1 without experts), etp 0 (or no experts) is tp. */
int st__plan_cp(const strata_plan_t *p);
int st__plan_ep(const strata_plan_t *p);
int st__plan_etp(const strata_plan_t *p);

/* The checkpoint's verdicts as `strata diff` prints them (checkpoint.c):
 * its text section, or its JSON keys "checkpoint" and "checkpoints". */
int st__checkpoint_text(const strata_plan_t *a, const strata_plan_t *b,
                        strata_buf_t *o);
struct cJSON;
int st__checkpoint_json(const strata_plan_t *a, const strata_plan_t *b,
                        struct cJSON *root);

/* Devices of one stage (nodes x GPUs per node). */
int st__stage_devices(const strata_plan_stage_t *st);
/* Mesh devices sharding a placement such as "[S(1), R]". */
int st__placement_shards(const char *placement, const strata_mesh_t *m);
/* The first / last op of a stage that belongs to a layer (-1: none). */
int st__first_layer_op(const strata_stage_result_t *r);
int st__last_layer_op(const strata_stage_result_t *r);
/* 1 if two op lists are equal in every field (doubles bit for bit). */
int st__ops_equal(const strata_op_choice_t *a, int na,
                  const strata_op_choice_t *b, int nb);
/* The ZeRO/recipe/recompute names as reports print them. */
const char *st__onoff(int v);
/* "BF16", "FP8" or "FP4": the tensor cores whose peak a plan's MFU is
 * counted against (its GEMMs' precision, strata_lowp_peak_bits). */
const char *st__peak_name(const strata_plan_t *p);
/* The step's items in the order of the step (docs/cost-model.md, "The
 * step's items"): each its short name (the summary's), what it is (the
 * HTML page's and the timeline's) and its seconds; `always`: shown when 0
 * too (ring attention's exchange, the experts' all-to-all, the MoE host
 * time and the blocking sends only where there are some).  Into out, the ones
 * shown; their count. */
#define ST__STEP_ITEMS 11
typedef struct {
  const char *name, *what;
  double v;
  int always;
} st__step_item_t;
int st__step_list(const strata_step_items_t *it,
                  st__step_item_t out[ST__STEP_ITEMS]);

/* ---- Megatron-LM (export_megatron.c), shared with the launch script ---- */

/* A model family Megatron-LM trains: its training script (relative to a
 * Megatron-LM checkout), the tokenizer of a real run, and whether the
 * script can run on Megatron's mock data. */
typedef struct {
  const char *family, *script, *tokenizer;
  int mock_data;
} st__mg_family_t;
const st__mg_family_t *st__mg_family(const char *family); /* NULL: none */
int st__mg_rotary_base(const strata_plan_t *p);
/* Refuse (STRATA_EUNSUPPORTED, with the reason) a plan Megatron-LM cannot
 * run; else the explicit first/last stage layer counts (0: even). */
int st__mg_check(const strata_plan_t *p, int *first, int *last);
/* The plan's flags ("--flag value"), joined by sep, into a->b (init'd
 * here; freed on error). */
typedef struct {
  strata_buf_t b;
  const char *sep;
  int n;
} st__mg_args_t;
int st__mg_args(const strata_plan_t *p, int first, int last, const char *sep,
                st__mg_args_t *a);
/* MindSpeed (export_mindspeed.c): what it cannot run refused
 * (STRATA_EUNSUPPORTED with the reason), the flag it adds, the launch
 * script's environment block and its check of the training script. */
int st__mindspeed_check(const strata_plan_t *p);
extern const char st__mindspeed_flag[];
void st__mindspeed_env(strata_buf_t *b);
void st__mindspeed_preflight(strata_buf_t *b, const char *script);
/* "tp 4, cp 2, ep 8 (etp 1), pp 2 (interleaved), dp 8": the plan's
 * degrees, cp and ep where used (export_launch.c; the launch script's
 * header and the HTML page's summary). */
void st__plan_degrees(strata_buf_t *b, const strata_plan_t *p);

/* The launch script and the HTML page with the cluster's device map m
 * (NULL: none), which name the hosts of each node rank and the nodes left
 * out (strata_export_megatron_launch, strata_export_html: m NULL). */
int st__megatron_launch_map(const strata_plan_t *p,
                            const strata_export_opts_t *o,
                            const strata_device_map_t *m, char **text);
/* export_slurm.c: the Slurm batch script, its --nodelist from m (NULL:
 * none). */
int st__export_slurm_map(const strata_plan_t *p, const strata_export_opts_t *o,
                         const strata_device_map_t *m, char **text);
/* export_pareto.c: the page's Pareto front (--pareto), nothing without. */
void st__html_pareto(strata_buf_t *b, const strata_plan_t *p);
int st__export_html_map(const strata_plan_t *p, const strata_export_opts_t *o,
                        const strata_device_map_t *m, char **text);

/* The other targets' refusals (STRATA_EUNSUPPORTED with the reason). */
int st__ds_check(const strata_plan_t *p);
int st__torch_check(const strata_plan_t *p);
/* The plan's pipeline schedule as torchtitan names it (its
 * pipeline_parallel_schedule): 1F1B or Interleaved1F1B where the plan
 * keeps 0, else the plan's; NULL for ZB-H1 and DualPipe, which
 * torch.distributed.pipelining does not run. */
const char *st__titan_schedule(const strata_plan_t *p);
int st__titan_check(const strata_plan_t *p, const char **flavor,
                    const char **model);
/* The Python configuration's (export_titan.c): torchtitan's model and
 * flavor of the plan, or its refusal. */
int st__titan_py_check(const strata_plan_t *p, const char **model,
                       const char **flavor);

/* The plan's schedule as the planner simulated it (export_timeline.c):
 * fills S (free with strata_sched_free) and *scratch (strata_free). */
int st__plan_schedule(const strata_plan_t *p, strata_sched_t *S,
                      double **scratch);

/* The model's family as a refusal names it, into buf: "the model's family
 * 'x'", or, where the plan names none (a trace file without one), what
 * that is and what to plan from instead (refuse.c). */
const char *st__family_said(const strata_plan_t *p, char *buf, size_t n);
/* The rulebook's plan rules (rules/rules.c) for framework `target`
 * (STRATA_RULES_*): 0, or STRATA_EUNSUPPORTED with "WHO export: " and
 * the rule's reason (refuse.c). */
int st__rules_refuse(const strata_plan_t *p, unsigned target, const char *who);

/* Which frameworks run the plan (frameworks.c). */
#define ST__N_FRAMEWORKS 4
typedef struct {
  const char *name;
  int ok;
  char why[400]; /* the refusal, "" when ok */
} st__fw_verdict_t;
void st__frameworks(const strata_plan_t *p, st__fw_verdict_t *v);
/* "NPU" for a plan on Ascend NPUs (p->npu), else "GPU": what the output
 * calls its devices (stitch.c). */
const char *st__dev(const strata_plan_t *p);

/* report_mem.c: each pipeline rank's memory against its own GPU's.  The
 * memory rank r is measured against (its GPU model's, from the GPU
 * table, on a mixed cluster where the plan's figure is the table's;
 * else the plan's gpu_memory_bytes), its GPU model ("" on one shape),
 * whether the ranks' figures differ, the rank fullest against its own
 * GPU, and the summary's "peak memory" line. */
double st__rank_capacity(const strata_plan_t *p, int r);
const char *st__rank_gpu(const strata_plan_t *p, int r);
int st__capacities_differ(const strata_plan_t *p);
int st__rank_fullest(const strata_plan_t *p);
void st__summary_peak(strata_buf_t *b, const strata_plan_t *p);

/* report_list.c: configuration i of the list v[0..n) by a name no other
 * of the list shares (the pipeline split added where the name is
 * shared, then which chunk layout of those); whether two configurations
 * differ only in recompute none against selective, at one step and
 * memory (the lists print them as one line). */
void st__list_name(const strata_plan_config_t *v, int n, int i, char *buf,
                   size_t size);
int st__same_but_recompute(const strata_plan_config_t *a,
                           const strata_plan_config_t *b);

/* report_par.c: context and expert parallelism, FP8 and the experts in
 * the reports, printed where used. */
struct cJSON;
/* The device map as a JSON tree (strata_device_map_json prints it), for a
 * caller that puts it into another (cli/devices.c).  The tree refers to
 * the map's strings: print it before destroying the map. */
int st__device_map_tree(const strata_device_map_t *m, struct cJSON **out);
void st__degrees(const strata_plan_t *p, char *buf, size_t size);
/* The writers of export/plan_text.h's W rows: the line(s) of label. */
void st__text_account(strata_buf_t *b, const strata_plan_t *p,
                      const char *label);
void st__text_groups(strata_buf_t *b, const strata_plan_t *p,
                     const char *label);
void st__text_recompute(strata_buf_t *b, const strata_plan_t *p,
                        const char *label);
void st__text_offload_modules(strata_buf_t *b, const strata_plan_t *p,
                              const char *label);
void st__text_overlap(strata_buf_t *b, const strata_plan_t *p,
                      const char *label);
void st__text_experts(strata_buf_t *b, const strata_plan_t *p,
                      const char *label);
void st__text_moe_layer(strata_buf_t *b, const strata_plan_t *p,
                        const char *label);
void st__text_cuda_graphs(strata_buf_t *b, const strata_plan_t *p,
                          const char *label);
int st__text_moe_shown(const strata_plan_t *p);
/* The expert data-parallel size: tp cp dp / (ep etp). */
int st__expert_dp(const strata_plan_t *p);
void st__summary_mem_head(strata_buf_t *b, const strata_plan_t *p);
void st__summary_mem_row(strata_buf_t *b, const strata_plan_t *p,
                         const strata_mem_items_t *m);
int st__json_par_items(struct cJSON *o, const strata_mem_items_t *m);
int st__json_par_config(struct cJSON *o, const strata_plan_config_t *c);
/* report_fallback.c: the fallback plans of --fallbacks, or what a fallback
 * plan is (nothing for a plan without them). */
void st__sum_fallbacks(strata_buf_t *b, const strata_plan_t *p);
int st__json_fallbacks(struct cJSON *root, const strata_plan_t *p);

/* export_megatron_par.c: Megatron-LM's rules for, and flags of, context
 * and expert parallelism, the experts, latent attention and the variants,
 * FP8 and Megatron-FSDP. */
int st__megatron_par_check(const strata_plan_t *p);
void st__megatron_par_flags(st__mg_args_t *a, const strata_plan_t *p);

#endif
