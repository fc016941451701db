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

#include "core/text.h"
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
  /* Names from the inputs go through st__put_plain: no byte of theirs can
   * end a comment line. */
  strata_buf_printf(b, "# %s hostfile of ", strata_hostfile_format_name(f));
  st__put_plain(b, source ? source : "a plan");
  strata_buf_printf(b, ": %d GPUs on %d node%s of ", m->n_devices,
                    m->nodes_used, m->nodes_used == 1 ? "" : "s");
  st__put_plain(b, m->cluster);
  strata_buf_puts(b, "\n# Written by `strata export hostfile`; hosts in rank "
                     "order.\n");
  for (int i = 0; i < m->n_nodes; i++)
    if (m->nodes[i].why) {
      strata_buf_puts(b, "# left out: ");
      st__put_plain(b, m->nodes[i].name);
      strata_buf_puts(b, ": ");
      st__put_plain(b, m->nodes[i].why);
      strata_buf_puts(b, "\n");
    }
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

/* The nodes in rank order, each host name checked (a line of a hostfile
 * is a command on some launchers: only RFC 1123 names are written), in one
 * pass over the map. */
static int rank_order(const strata_device_map_t *m,
                      const strata_node_info_t ***out) {
  const strata_node_info_t **by = NULL;
  *out = NULL;
  if (m->nodes_used < 1 || m->nodes_used > m->n_nodes)
    return strata_error(STRATA_EINVAL, "hostfile: the map uses no node");
  by = strata_calloc((size_t)m->nodes_used, sizeof *by);
  if (!by) return strata_error(STRATA_ENOMEM, "hostfile: out of memory");
  for (int i = 0; i < m->n_nodes; i++) {
    const strata_node_info_t *n = &m->nodes[i];
    int r = n->node_rank;
    if (r < 0) continue;
    if (r >= m->nodes_used || by[r]) {
      strata_free(by);
      return strata_error(STRATA_EINVAL,
                          "hostfile: node rank %d is out of order in the map",
                          r);
    }
    int rc = st__hostname_check(n->name, "host", "hostfile");
    if (rc) {
      strata_free(by);
      return rc;
    }
    by[r] = n;
  }
  for (int r = 0; r < m->nodes_used; r++)
    if (!by[r]) {
      strata_free(by);
      return strata_error(STRATA_EINVAL, "hostfile: no node has node rank %d",
                          r);
    }
  *out = by;
  return 0;
}

int strata_export_hostfile(const strata_device_map_t *m,
                           strata_hostfile_format_t f, const char *source,
                           char **text) {
  strata_buf_t b;
  const strata_node_info_t **by;
  int rc;
  if (!text) return strata_error(STRATA_EINVAL, "hostfile: no output");
  *text = NULL;
  if (m->n_devices < 1)
    return strata_error(STRATA_EINVAL, "hostfile: the map uses no node");
  if ((rc = rank_order(m, &by))) return rc;
  strata_buf_init(&b);
  header(&b, m, f, source);
  if (f == STRATA_HOSTFILE_TORCHRUN)
    strata_buf_puts(&b, "# Run each line's command on its host (ssh, pdsh), "
                        "followed by the training\n# script and its "
                        "arguments.\n");
  for (int r = 0; r < m->nodes_used; r++) {
    if (f == STRATA_HOSTFILE_TORCHRUN)
      torchrun_line(&b, m, by[r], by[0]);
    else
      strata_buf_printf(&b, "%s slots=%d\n", by[r]->name, by[r]->gpus);
  }
  strata_free(by);
  return strata_buf_finish(&b, text);
}
