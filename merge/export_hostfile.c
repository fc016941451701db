/*
 * export_hostfile.c - the hosts a plan runs on, in the form each launcher
 * reads (docs/exports.md cites each format):
 *
 *   deepspeed  "HOST slots=N" per line, '#' comments (DeepSpeed's runner,
 *              deepspeed/launcher/runner.py, reads /job/hostfile so);
 *   mpi        the same line, OpenMPI's hostfile syntax (mpirun(1),
 *              "Specifying Hosts"): N processes on HOST;
 *   torchrun   one line per host: the host, a tab, and the torchrun
 *              command line of that host with --nnodes, --node-rank,
 *              --nproc-per-node and the rendezvous on the first host,
 *              prefixed by CUDA_VISIBLE_DEVICES where only some of its
 *              GPUs are used.
 *
 * The hosts come in rank order (node_rank order) so that a launcher that
 * fills hosts in file order numbers the ranks as the plan laid them out.
 * A partly used node always runs on its first GPUs (the map, devices.c,
 * takes the first N GPUs of the usable numbering), which is what
 * "slots=N" gives a DeepSpeed or MPI launch as well.  Hosts left out are
 * listed in comments with the reason, so a reader of the file sees why a
 * node is missing.
 */
#include <stdio.h>
#include <string.h>

#include "merge/merge_int.h"

static const char *format_names[] = {"torchrun", "mpi", "deepspeed"};

int strata_hostfile_format_parse(const char *s, strata_hostfile_format_t *out) {
  for (int i = 0; i < 3; i++)
    if (!strcmp(s, format_names[i])) {
      *out = (strata_hostfile_format_t)i;
      return 0;
    }
  return strata_error(STRATA_EINVAL,
                      "unknown hostfile format '%s' (torchrun, mpi or "
                      "deepspeed)",
                      s);
}

const char *strata_hostfile_format_name(strata_hostfile_format_t f) {
  return f >= 0 && f <= STRATA_HOSTFILE_DEEPSPEED ? format_names[f] : "?";
}

static void header(strata_buf_t *b, const strata_device_map_t *m,
                   strata_hostfile_format_t f, const char *source) {
  strata_buf_printf(b,
                    "# %s hostfile of %s: %d GPUs on %d node%s of %s\n"
                    "# Written by `strata export hostfile`; hosts in rank "
                    "order.\n",
                    strata_hostfile_format_name(f), source ? source : "a plan",
                    m->n_devices, m->nodes_used, m->nodes_used == 1 ? "" : "s",
                    m->cluster);
  for (int i = 0; i < m->n_nodes; i++)
    if (m->nodes[i].why)
      strata_buf_printf(b, "# left out: %s: %s\n", m->nodes[i].name,
                        m->nodes[i].why);
}

static const strata_node_info_t *first_host(const strata_device_map_t *m) {
  for (int i = 0; i < m->n_nodes; i++)
    if (m->nodes[i].node_rank == 0) return &m->nodes[i];
  return NULL;
}

static void torchrun_line(strata_buf_t *b, const strata_device_map_t *m,
                          const strata_node_info_t *n,
                          const strata_node_info_t *master) {
  strata_buf_printf(b, "%s\t", n->name);
  if (n->use == STRATA_NODE_PARTIAL) {
    strata_buf_puts(b, "CUDA_VISIBLE_DEVICES=");
    for (int g = 0; g < n->gpus; g++)
      strata_buf_printf(b, "%s%d", g ? "," : "", g);
    strata_buf_puts(b, " ");
  }
  strata_buf_printf(b,
                    "torchrun --nnodes=%d --node-rank=%d --nproc-per-node=%d "
                    "--master-addr=%s --master-port=29500\n",
                    m->nodes_used, n->node_rank, n->gpus, master->name);
}

int strata_export_hostfile(const strata_device_map_t *m,
                           strata_hostfile_format_t f, const char *source,
                           char **text) {
  strata_buf_t b;
  const strata_node_info_t *master = first_host(m);
  if (!master || m->n_devices < 1)
    return strata_error(STRATA_EINVAL, "hostfile: the map uses no node");
  strata_buf_init(&b);
  header(&b, m, f, source);
  if (f == STRATA_HOSTFILE_TORCHRUN)
    strata_buf_puts(&b, "# Run each line's command on its host (ssh, pdsh), "
                        "followed by the training\n# script and its "
                        "arguments.\n");
  for (int r = 0; r < m->nodes_used; r++)
    for (int i = 0; i < m->n_nodes; i++) {
      const strata_node_info_t *n = &m->nodes[i];
      if (n->node_rank != r) continue;
      if (f == STRATA_HOSTFILE_TORCHRUN)
        torchrun_line(&b, m, n, master);
      else
        strata_buf_printf(&b, "%s slots=%d\n", n->name, n->gpus);
    }
  return strata_buf_finish(&b, text);
}
