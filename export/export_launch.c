/*
 * export_launch.c - a bash script that launches the plan with Megatron-LM
 * (`strata export megatron --launch`): the environment Megatron-LM
 * requires, one torchrun per node, the plan's flags (export_megatron.c,
 * the same list the plain export prints) and the arguments of the run
 * that no plan can know -- data, tokenizer, iterations, checkpoints -- as
 * variables.  A variable without a default stops the script with a
 * message saying what to set (${VAR:?...}); the defaults are those of
 * Megatron-LM's own example scripts for the model family, named in the
 * script.
 *
 * The rank layout is Megatron-LM's default order (tp-cp-ep-dp-pp: a
 * tensor-parallel group is consecutive ranks, a pipeline rank holds
 * tp x cp x dp consecutive ranks, the expert layers regrouping them as
 * etp x ep x expert dp), which is the layout the plan was costed with
 * (stage r's first rank is r x tp x cp x dp); torchrun numbers node n's
 * GPUs n x G .. n x G + G - 1.  A plan laid out otherwise is refused.
 */
#include <stdio.h>
#include <string.h>

#include "core/text.h"
#include "merge/merge_int.h"

#define REFUSE(...)                                                            \
  strata_error(STRATA_EUNSUPPORTED, "megatron launch: " __VA_ARGS__)

/* The run's defaults, from the example script of each family in
 * Megatron-LM (examples/gpt3/train_gpt3_175b_distributed.sh,
 * examples/llama/train_llama3_8b_h100_fp8.sh,
 * examples/bert/train_bert_340m_distributed.sh). */
typedef struct {
  const char *family, *example;
  const char *lr, *min_lr, *decay, *warmup, *wd, *beta2;
} run_defaults_t;

static const run_defaults_t run_defaults[] = {
    {"gpt", "examples/gpt3/train_gpt3_175b_distributed.sh", "6.0e-5", "6.0e-6",
     "cosine", ".001", "0.1", "0.95"},
    {"llama", "examples/llama/train_llama3_8b_h100_fp8.sh", "0.00015",
     "0.00001", "cosine", ".001", "0.1", "0.95"},
    {"bert", "examples/bert/train_bert_340m_distributed.sh", "0.0001", "1.0e-5",
     "linear", ".01", "1e-2", "0.999"},
};

static const run_defaults_t *defaults_of(const char *family) {
  for (size_t i = 0; i < sizeof run_defaults / sizeof run_defaults[0]; i++)
    if (!strcmp(run_defaults[i].family, family)) return &run_defaults[i];
  return &run_defaults[0];
}

void strata_export_opts_init(strata_export_opts_t *o) {
  memset(o, 0, sizeof *o);
}

static int check_layout(const strata_plan_t *p, int G, int *nodes, int *gpn) {
  if (G < 0)
    return REFUSE("the node groups of cluster '%s' have different GPUs per "
                  "node, and torchrun starts the same number of processes "
                  "on every node: export the flags (strata export megatron) "
                  "and the hosts (strata export hostfile) and start each "
                  "node with its own --nproc-per-node",
                  p->cluster ? p->cluster : "?");
  if (G < 1)
    return REFUSE("the GPUs per node of cluster '%s' are unknown (strata "
                  "opens no file a plan names): give --cluster SPEC or "
                  "--gpus-per-node",
                  p->cluster ? p->cluster : "?");
  if (p->devices <= G) {
    *nodes = 1, *gpn = p->devices;
  } else if (p->devices % G == 0) {
    *nodes = p->devices / G, *gpn = G;
  } else {
    return REFUSE("%d GPUs do not fill whole nodes of %d GPUs; torchrun "
                  "starts the same number of processes on every node",
                  p->devices, G);
  }
  if (*gpn % p->tp != 0 && p->tp % *gpn != 0)
    return REFUSE("tensor-parallel groups of %d GPUs straddle nodes of %d",
                  p->tp, *gpn);
  /* Megatron-Core's order tp-cp-ep-dp-pp: a pipeline rank spans tp x cp x
   * dp ranks (the expert groups are carved from cp x dp) */
  int cp = p->cp > 1 ? p->cp : 1;
  for (int s = 0; s < p->n_stages; s++)
    if (p->stages[s].first_rank !=
        (long long)p->stages[s].rank * p->tp * cp * p->dp)
      return cp > 1 ? REFUSE("stage %d starts at rank %d, not at pipeline "
                             "rank %d x tp %d x cp %d x dp %d as in "
                             "Megatron-LM's rank order",
                             s, p->stages[s].first_rank, p->stages[s].rank,
                             p->tp, cp, p->dp)
                    : REFUSE("stage %d starts at rank %d, not at pipeline "
                             "rank %d x tp %d x dp %d as in Megatron-LM's "
                             "rank order",
                             s, p->stages[s].first_rank, p->stages[s].rank,
                             p->tp, p->dp);
  return 0;
}

void st__plan_degrees(strata_buf_t *b, const strata_plan_t *p) {
  strata_buf_printf(b, "tp %d", p->tp);
  if (p->cp > 1) strata_buf_printf(b, ", cp %d", p->cp);
  if (p->experts > 0 && p->ep > 1)
    strata_buf_printf(b, ", ep %d (etp %d)", p->ep,
                      p->etp > 0 ? p->etp : p->tp);
  strata_buf_printf(b, ", pp %d%s, dp %d", p->pp,
                    p->vpp > 1 ? " (interleaved)" : "", p->dp);
}

static void head(strata_buf_t *b, const strata_plan_t *p,
                 const strata_export_opts_t *o, int nodes, int gpn) {
  /* Names from the plan go through st__put_plain: no byte of theirs can
   * end the comment line. */
  strata_buf_puts(b, "#!/usr/bin/env bash\n# Megatron-LM launch of ");
  st__put_plain(b, o && o->source ? o->source : "a plan");
  strata_buf_puts(b, ": ");
  st__put_plain(b, p->model ? p->model : "?");
  strata_buf_puts(b, " on ");
  st__put_plain(b, p->cluster ? p->cluster : "?");
  strata_buf_printf(b,
                    ", %d GPUs (%d "
                    "node%s x %d).\n"
                    "# Written by `strata export megatron --launch`.\n"
                    "#\n"
                    "# Run it on every node at once (pdsh, srun "
                    "--ntasks-per-node=1, ...) from a\n"
                    "# Megatron-LM checkout (or set MEGATRON_LM), with "
                    "NODE_RANK, MASTER_ADDR and the\n"
                    "# run's variables below set; arguments given to it are "
                    "passed on to Megatron-LM.\n",
                    p->devices, nodes, nodes > 1 ? "s" : "", gpn);
  strata_buf_puts(b, "#\n# The plan: ");
  st__plan_degrees(b, p);
  strata_buf_printf(b,
                    "; micro-batch %d, global batch %d (%d "
                    "micro-batches).\n",
                    p->micro_batch, p->global_batch, p->n_micro);
}

/* Which nodes and layers each pipeline rank holds: tp x cp x dp ranks
 * each (ep splits none of them: the expert layers regroup the same
 * ranks). */
static void rank_table(strata_buf_t *b, const strata_plan_t *p, int gpn) {
  int cp = p->cp > 1 ? p->cp : 1;
  long long per = (long long)p->tp * cp * p->dp;
  strata_buf_printf(b,
                    "# Ranks: Megatron-LM's order (tp-cp-ep-dp-pp) puts "
                    "ranks r*%lld .. r*%lld+%lld in pipeline\n"
                    "# rank r (tp %d",
                    per, per, per - 1, p->tp);
  if (cp > 1) strata_buf_printf(b, " x cp %d", cp);
  strata_buf_printf(b, " x dp %d), the plan's layout:\n", p->dp);
  if (p->experts > 0 && p->ep > 1) {
    int etp = p->etp > 0 ? p->etp : p->tp;
    strata_buf_printf(b,
                      "# (its expert layers regroup those %lld ranks as "
                      "etp %d x ep %d x expert dp %lld)\n",
                      per, etp, p->ep, per / ((long long)etp * p->ep));
  }
  for (int r = 0; r < p->pp; r++) {
    long long n0 = r * per / gpn, n1 = ((r + 1) * per - 1) / gpn;
    int chunks = 0;
    strata_buf_printf(b, "#   pipeline rank %d: node%s %lld", r,
                      n1 > n0 ? "s" : "", n0);
    if (n1 > n0) strata_buf_printf(b, "-%lld", n1);
    for (int s = 0; s < p->n_stages; s++) {
      const strata_plan_stage_t *st = &p->stages[s];
      if (st->rank != r) continue;
      if (chunks++ == 4) {
        strata_buf_puts(b, ", ...");
        continue;
      }
      if (chunks > 4) continue;
      strata_buf_printf(b, "%s%d", chunks == 1 ? ", layers " : ", ",
                        st->layer_begin);
      if (st->layer_end - st->layer_begin > 1)
        strata_buf_printf(b, "-%d", st->layer_end - 1);
    }
    strata_buf_puts(b, "\n");
  }
}

/* With the cluster's device map: the host of each node rank and the
 * nodes left out, names through st__put_plain. */
static void host_table(strata_buf_t *b, const strata_device_map_t *m) {
  if (!m) return;
  strata_buf_puts(b, "# Hosts of cluster ");
  st__put_plain(b, m->cluster);
  strata_buf_puts(b, " (NODE_RANK: host):\n");
  for (int r = 0; r < m->nodes_used; r++)
    for (int i = 0; i < m->n_nodes; i++)
      if (m->nodes[i].node_rank == r) {
        strata_buf_printf(b, "#   %d: ", r);
        st__put_plain(b, m->nodes[i].name);
        if (m->nodes[i].use == STRATA_NODE_PARTIAL)
          strata_buf_printf(b, " (GPUs 0-%d)", m->nodes[i].gpus - 1);
        strata_buf_puts(b, "\n");
      }
  for (int i = 0; i < m->n_nodes; i++)
    if (m->nodes[i].node_rank < 0) {
      strata_buf_puts(b, "#   left out: ");
      st__put_plain(b, m->nodes[i].name);
      strata_buf_puts(b, ": ");
      st__put_plain(b, m->nodes[i].why ? m->nodes[i].why : "not used");
      strata_buf_puts(b, "\n");
    }
}

static void cluster_vars(strata_buf_t *b, const strata_plan_t *p, int nodes,
                         int gpn, int mindspeed) {
  strata_buf_puts(b, "set -euo pipefail\n\n");
  if (mindspeed) st__mindspeed_env(b);
  strata_buf_puts(b, "# -- what Megatron-LM requires of the environment\n");
  if (p->overlap_ep_comm) /* the MoE README: more than 1 for the overlap */
    strata_buf_puts(b, "# the experts' all-to-all overlap runs on streams of "
                       "its own (Megatron-LM's MoE\n"
                       "# README: more than one connection)\n"
                       "export CUDA_DEVICE_MAX_CONNECTIONS=32\n");
  else if (p->tp > 1 || p->cp > 1)
    strata_buf_puts(b, "# validate_args asserts it with tensor or context "
                       "parallelism (GPUs before\n"
                       "# Blackwell)\n"
                       "export CUDA_DEVICE_MAX_CONNECTIONS=1\n");
  if (p->offload_modules > 0) /* arguments.py, with TE >= 2.10.0 */
    strata_buf_puts(b, "# fine-grained activation offloading: validate_args "
                       "asserts it with Transformer\n"
                       "# Engine 2.10 or later (else TE offloads the "
                       "weights too)\n"
                       "export NVTE_CPU_OFFLOAD_V1=1\n");
  strata_buf_printf(
      b,
      "\n# -- the cluster, as planned\n"
      "NNODES=%d\n"
      "GPUS_PER_NODE=%d\n"
      "NODE_RANK=${NODE_RANK:?\"set NODE_RANK to this node's index, 0 to %d "
      "(under Slurm: \\$SLURM_NODEID)\"}\n"
      "MASTER_ADDR=${MASTER_ADDR:?\"set MASTER_ADDR to the address of node "
      "0\"}\n"
      "MASTER_PORT=${MASTER_PORT:-29500}\n"
      "MEGATRON_LM=${MEGATRON_LM:-.}\n"
      "case $NODE_RANK in\n"
      "  *[!0-9]* | '') echo \"NODE_RANK '$NODE_RANK' is not a node index\" "
      ">&2; exit 2 ;;\n"
      "esac\n"
      "if [ \"$NODE_RANK\" -ge \"$NNODES\" ]; then\n"
      "  echo \"NODE_RANK $NODE_RANK: the plan has $NNODES nodes (0 to "
      "$((NNODES - 1)))\" >&2; exit 2\n"
      "fi\n",
      nodes, gpn, nodes - 1);
}

static void tokenizer_vars(strata_buf_t *b, const strata_plan_t *p,
                           const st__mg_family_t *f) {
  if (!strcmp(f->family, "llama")) {
    strata_buf_printf(
        b,
        "TOKENIZER_MODEL=${TOKENIZER_MODEL:?\"set TOKENIZER_MODEL to the "
        "model's Hugging Face tokenizer (a hub name or a local directory), "
        "or MOCK for Megatron-LM's NullTokenizer of %d tokens\"}\n"
        "if [ \"$TOKENIZER_MODEL\" = MOCK ]; then\n"
        "  TOKENIZER_ARGS=(--tokenizer-type NullTokenizer --vocab-size %d)\n"
        "else\n"
        "  TOKENIZER_ARGS=(--tokenizer-type %s --tokenizer-model "
        "\"$TOKENIZER_MODEL\")\n"
        "fi\n",
        p->vocab, p->vocab, f->tokenizer);
  } else if (!strcmp(f->family, "gpt")) {
    strata_buf_printf(
        b,
        "VOCAB_FILE=${VOCAB_FILE:?\"set VOCAB_FILE to GPT-2's gpt2-vocab.json, "
        "or MOCK for Megatron-LM's NullTokenizer of %d tokens\"}\n"
        "if [ \"$VOCAB_FILE\" = MOCK ]; then\n"
        "  TOKENIZER_ARGS=(--tokenizer-type NullTokenizer --vocab-size %d)\n"
        "else\n"
        "  MERGE_FILE=${MERGE_FILE:?\"set MERGE_FILE to GPT-2's "
        "gpt2-merges.txt\"}\n"
        "  TOKENIZER_ARGS=(--tokenizer-type %s --vocab-file \"$VOCAB_FILE\" "
        "--merge-file \"$MERGE_FILE\")\n"
        "fi\n",
        p->vocab, p->vocab, f->tokenizer);
  } else { /* BERT: the masked-LM dataset needs the real WordPiece vocab */
    strata_buf_printf(b,
                      "VOCAB_FILE=${VOCAB_FILE:?\"set VOCAB_FILE to BERT's "
                      "WordPiece vocabulary (bert-large-uncased-vocab.txt)\"}\n"
                      "TOKENIZER_ARGS=(--tokenizer-type %s --vocab-file "
                      "\"$VOCAB_FILE\")\n",
                      f->tokenizer);
  }
}

static void run_vars(strata_buf_t *b, const strata_plan_t *p,
                     const st__mg_family_t *f) {
  const run_defaults_t *d = defaults_of(f->family);
  strata_buf_puts(b, "\n# -- the run: what a plan cannot know (a variable "
                     "without a default must be set)\n");
  if (f->mock_data)
    strata_buf_puts(b, "DATA_PATH=${DATA_PATH:?\"set DATA_PATH to the "
                       "tokenized data prefix (..._text_document of "
                       "tools/preprocess_data.py), or MOCK for Megatron-LM's "
                       "mock data\"}\n");
  else
    strata_buf_puts(b, "DATA_PATH=${DATA_PATH:?\"set DATA_PATH to the "
                       "tokenized data prefix (..._text_sentence of "
                       "tools/preprocess_data.py)\"}\n");
  tokenizer_vars(b, p, f);
  strata_buf_printf(
      b,
      "TRAIN_ITERS=${TRAIN_ITERS:?\"set TRAIN_ITERS to the number of steps of "
      "%d sequences\"}\n"
      "CHECKPOINT_PATH=${CHECKPOINT_PATH:?\"set CHECKPOINT_PATH to the "
      "directory checkpoints are saved to and resumed from\"}\n"
      "# defaults from Megatron-LM's %s\n"
      "LR=${LR:-%s}\n"
      "MIN_LR=${MIN_LR:-%s}\n"
      "LR_DECAY_STYLE=${LR_DECAY_STYLE:-%s}\n"
      "LR_WARMUP_FRACTION=${LR_WARMUP_FRACTION:-%s}\n"
      "WEIGHT_DECAY=${WEIGHT_DECAY:-%s}\n"
      "ADAM_BETA2=${ADAM_BETA2:-%s}\n"
      "CLIP_GRAD=${CLIP_GRAD:-1.0}\n"
      "SPLIT=${SPLIT:-949,50,1}\n"
      "LOG_INTERVAL=${LOG_INTERVAL:-100}\n"
      "SAVE_INTERVAL=${SAVE_INTERVAL:-10000}\n"
      "EVAL_INTERVAL=${EVAL_INTERVAL:-1000}\n"
      "EVAL_ITERS=${EVAL_ITERS:-10}\n"
      "TENSORBOARD_DIR=${TENSORBOARD_DIR:-$CHECKPOINT_PATH/tensorboard}\n",
      p->global_batch, d->example, d->lr, d->min_lr, d->decay, d->warmup, d->wd,
      d->beta2);
  if (f->mock_data)
    strata_buf_puts(b, "if [ \"$DATA_PATH\" = MOCK ]; then\n"
                       "  DATA_ARGS=(--mock-data)\n"
                       "else\n"
                       "  DATA_ARGS=(--data-path \"$DATA_PATH\" --split "
                       "\"$SPLIT\")\n"
                       "fi\n");
  else
    strata_buf_puts(b, "DATA_ARGS=(--data-path \"$DATA_PATH\" --split "
                       "\"$SPLIT\")\n");
}

static const char run_args[] =
    "RUN_ARGS=(\n"
    "    --train-iters \"$TRAIN_ITERS\"\n"
    "    --lr \"$LR\"\n"
    "    --min-lr \"$MIN_LR\"\n"
    "    --lr-decay-style \"$LR_DECAY_STYLE\"\n"
    "    --lr-warmup-fraction \"$LR_WARMUP_FRACTION\"\n"
    "    --weight-decay \"$WEIGHT_DECAY\"\n"
    "    --adam-beta1 0.9\n"
    "    --adam-beta2 \"$ADAM_BETA2\"\n"
    "    --clip-grad \"$CLIP_GRAD\"\n"
    "    --save \"$CHECKPOINT_PATH\"\n"
    "    --load \"$CHECKPOINT_PATH\"\n"
    "    --save-interval \"$SAVE_INTERVAL\"\n"
    "    --log-interval \"$LOG_INTERVAL\"\n"
    "    --eval-interval \"$EVAL_INTERVAL\"\n"
    "    --eval-iters \"$EVAL_ITERS\"\n"
    "    --tensorboard-dir \"$TENSORBOARD_DIR\"\n"
    ")\n";

static void launch_line(strata_buf_t *b, const st__mg_family_t *f,
                        int mindspeed) {
  if (mindspeed) {
    strata_buf_puts(b, "\n");
    st__mindspeed_preflight(b, f->script);
  }
  strata_buf_printf(
      b,
      "\n# -- one torchrun per node\n"
      "exec torchrun --nnodes \"$NNODES\" --nproc_per_node "
      "\"$GPUS_PER_NODE\" \\\n"
      "    --node_rank \"$NODE_RANK\" --master_addr \"$MASTER_ADDR\" "
      "--master_port \"$MASTER_PORT\" \\\n"
      "    \"$MEGATRON_LM/%s\" \\\n"
      "    \"${PLAN_ARGS[@]}\" \"${TOKENIZER_ARGS[@]}\" \"${DATA_ARGS[@]}\" "
      "\"${RUN_ARGS[@]}\" \"$@\"\n",
      f->script);
}

int strata_export_megatron_launch(const strata_plan_t *p,
                                  const strata_export_opts_t *o, char **text) {
  return st__megatron_launch_map(p, o, NULL, text);
}

int st__megatron_launch_map(const strata_plan_t *p,
                            const strata_export_opts_t *o,
                            const strata_device_map_t *m, char **text) {
  int first, last, nodes = 0, gpn = 0, rc;
  st__mg_args_t a;
  strata_buf_t b;
  if (!text) return strata_error(STRATA_EINVAL, "megatron launch: no output");
  *text = NULL;
  int ms = o && o->mindspeed;
  if ((ms && (rc = st__mindspeed_check(p))) ||
      (rc = st__mg_check(p, &first, &last)) ||
      (rc = check_layout(p, o ? o->gpus_per_node : 0, &nodes, &gpn)) ||
      (rc = st__mg_args(p, first, last, "\n    ", &a)))
    return rc;
  const st__mg_family_t *f = st__mg_family(p->family);
  strata_buf_init(&b);
  head(&b, p, o, nodes, gpn);
  rank_table(&b, p, gpn);
  host_table(&b, m);
  cluster_vars(&b, p, nodes, gpn, ms);
  run_vars(&b, p, f);
  strata_buf_printf(&b,
                    "\n# -- the plan: parallelism, schedule, overlap, model\n"
                    "PLAN_ARGS=(\n    %s%s%s\n)\n",
                    ms ? st__mindspeed_flag : "", ms ? "\n    " : "", a.b.p);
  strata_buf_puts(&b, run_args);
  launch_line(&b, f, ms);
  strata_buf_free(&a.b);
  return strata_buf_finish(&b, text);
}
