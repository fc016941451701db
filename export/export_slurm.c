/*
 * export_slurm.c - a Slurm batch script for any plan (`strata export
 * slurm`): #SBATCH lines for the plan's nodes, one task per node and the
 * node's GPUs, the hosts (--nodelist) where the cluster names them, and an
 * srun that starts the plan's launch once per node.
 *
 * The launch is the Megatron-LM launch script (export_launch.c) where
 * Megatron-LM can run the plan; for any other plan it is one torchrun per
 * node of a training script the user names (TRAIN_SCRIPT), and the script
 * says why Megatron-LM's was not written.  The launch text is one
 * single-quoted shell word (st__put_sh) in the batch script, handed to
 * every task through the environment (srun passes it on: --export=ALL is
 * its default); each task takes its node rank from SLURM_NODEID and node
 * 0's address from the first host of `scontrol show hostnames
 * "$SLURM_JOB_NODELIST"` (sbatch(1), srun(1), scontrol(1)).
 */
#include <stdio.h>
#include <string.h>

#include "core/text.h"
#include "merge/merge_int.h"

#define REFUSE(...)                                                            \
  strata_error(STRATA_EUNSUPPORTED, "slurm export: " __VA_ARGS__)

/* Nodes and GPUs per node, as torchrun (and Slurm's --gpus-per-node)
 * takes them: the same count on every node. */
static int shape(const strata_plan_t *p, int G, int *nodes, int *gpn) {
  if (G < 0)
    return REFUSE("the node groups of cluster '%s' have different GPUs per "
                  "node, and one batch script asks the same GPUs of every "
                  "node: plan on one node group",
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
    return REFUSE("%d GPUs do not fill whole nodes of %d GPUs; Slurm gives "
                  "every node of a job the same GPUs",
                  p->devices, G);
  }
  return 0;
}

/* --nodelist: the hosts in node-rank order, each an RFC 1123 name (sbatch
 * reads the line itself: nothing else may reach it). */
static int nodelist(strata_buf_t *b, const strata_device_map_t *m) {
  if (!m) return 0;
  strata_buf_puts(b, "#SBATCH --nodelist=");
  for (int r = 0; r < m->nodes_used; r++)
    for (int i = 0; i < m->n_nodes; i++) {
      if (m->nodes[i].node_rank != r) continue;
      int rc = st__hostname_check(m->nodes[i].name, "host", "slurm export");
      if (rc) return rc;
      strata_buf_printf(b, "%s%s", r ? "," : "", m->nodes[i].name);
    }
  strata_buf_puts(b, "\n");
  return 0;
}

static int head(strata_buf_t *b, const strata_plan_t *p,
                const strata_export_opts_t *o, const strata_device_map_t *m,
                int nodes, int gpn) {
  strata_buf_puts(b, "#!/bin/bash\n# Slurm batch script of ");
  st__put_plain(b, o && o->source ? o->source : "a plan");
  strata_buf_puts(b, ": ");
  st__put_plain(b, p->model ? p->model : "?");
  strata_buf_puts(b, " on ");
  st__put_plain(b, p->cluster ? p->cluster : "?");
  strata_buf_printf(b,
                    ", %d GPUs (%d node%s x %d).\n"
                    "# Written by `strata export slurm`.  Submit it with "
                    "sbatch; arguments given to it\n"
                    "# are passed on to the launch, and the launch's "
                    "variables come from the\n"
                    "# environment sbatch is started in.\n"
                    "#SBATCH --nodes=%d\n"
                    "#SBATCH --ntasks-per-node=1\n"
                    "#SBATCH --gpus-per-node=%d\n",
                    p->devices, nodes, nodes > 1 ? "s" : "", gpn, nodes, gpn);
  return nodelist(b, m);
}

/* One torchrun per node of the user's script, for a plan Megatron-LM
 * cannot run (why: its refusal, as a comment). */
static void generic_launch(strata_buf_t *b, int nodes, int gpn,
                           const char *why) {
  char launch[600];
  strata_buf_puts(b, "\n# Megatron-LM cannot run this plan (");
  st__put_plain(b, why);
  strata_buf_puts(b, "),\n# so each node starts torchrun on "
                     "TRAIN_SCRIPT (`strata export torch` writes the\n"
                     "# plan's parallelism as a Python module).\n"
                     "TRAIN_SCRIPT=${TRAIN_SCRIPT:?\"set TRAIN_SCRIPT to "
                     "the training script torchrun starts on each "
                     "node\"}\nexport TRAIN_SCRIPT\nSTRATA_LAUNCH=");
  snprintf(launch, sizeof launch,
           "set -euo pipefail\n"
           "exec torchrun --nnodes %d --nproc_per_node %d \\\n"
           "    --node_rank \"$NODE_RANK\" --master_addr \"$MASTER_ADDR\" "
           "--master_port \"$MASTER_PORT\" \\\n"
           "    \"$TRAIN_SCRIPT\" \"$@\"\n",
           nodes, gpn);
  st__put_sh(b, launch);
  strata_buf_puts(b, "\n");
}

static void run_srun(strata_buf_t *b, int nodes) {
  strata_buf_printf(
      b,
      "\n# -- node 0's address, and one task per node\n"
      "mapfile -t HOSTS < <(scontrol show hostnames "
      "\"${SLURM_JOB_NODELIST:?run it with sbatch}\")\n"
      "if [ \"${#HOSTS[@]}\" -ne %d ]; then\n"
      "  echo \"the job has ${#HOSTS[@]} nodes (${SLURM_JOB_NODELIST}); the "
      "plan has %d\" >&2; exit 2\n"
      "fi\n"
      "MASTER_ADDR=${MASTER_ADDR:-${HOSTS[0]}}\n"
      "MASTER_PORT=${MASTER_PORT:-29500}\n"
      "export MASTER_ADDR MASTER_PORT STRATA_LAUNCH\n"
      "srun --nodes=%d --ntasks=%d --ntasks-per-node=1 --kill-on-bad-exit=1 "
      "\\\n"
      "    bash -c 'NODE_RANK=$SLURM_NODEID exec bash -c \"$STRATA_LAUNCH\" "
      "strata-launch \"$@\"' \\\n"
      "    strata-srun \"$@\"\n",
      nodes, nodes, nodes, nodes);
}

int st__export_slurm_map(const strata_plan_t *p, const strata_export_opts_t *o,
                         const strata_device_map_t *m, char **text) {
  int nodes = 0, gpn = 0, rc;
  char *launch = NULL;
  strata_buf_t b;
  if (!text) return strata_error(STRATA_EINVAL, "slurm export: no output");
  *text = NULL;
  if (!p || p->devices < 1)
    return strata_error(STRATA_EINVAL, "slurm export: a plan of no GPU");
  if ((rc = shape(p, o ? o->gpus_per_node : 0, &nodes, &gpn))) return rc;
  strata_export_opts_t lo;
  strata_export_opts_init(&lo);
  if (o) lo = *o;
  lo.mindspeed = 0;
  rc = st__megatron_launch_map(p, &lo, m, &launch);
  if (rc && rc != STRATA_EUNSUPPORTED) return rc;
  strata_buf_init(&b);
  if ((rc = head(&b, p, o, m, nodes, gpn))) {
    strata_buf_free(&b);
    strata_free(launch);
    return rc;
  }
  strata_buf_puts(&b, "set -euo pipefail\n");
  if (launch) {
    strata_buf_puts(&b, "\n# -- the launch of each node: `strata export "
                        "megatron --launch` of the plan\nSTRATA_LAUNCH=");
    st__put_sh(&b, launch);
    strata_buf_puts(&b, "\n");
  } else {
    char why[400];
    snprintf(why, sizeof why, "%s", strata_last_error());
    strata_error_clear();
    generic_launch(&b, nodes, gpn, why);
  }
  run_srun(&b, nodes);
  strata_free(launch);
  return strata_buf_finish(&b, text);
}

int strata_export_slurm(const strata_plan_t *p, const strata_export_opts_t *o,
                        char **text) {
  return st__export_slurm_map(p, o, NULL, text);
}
