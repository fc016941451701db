/*
 * devices.c - which GPUs a plan runs on: every rank's host and local GPU,
 * its coordinates in the parallel groups, the hosts left out and why, and
 * a hostfile for torchrun, OpenMPI or DeepSpeed (docs/exports.md).
 *
 * Nothing of this is stored in a plan file: it follows from the plan's
 * degrees and the cluster it names, as the planner itself laid it out.
 * The planner costs its groups on the first usable nodes (topo/ numbers
 * ranks node-major over the usable nodes, unhealthy ones skipped), so the
 * plan's N GPUs are the first N of that numbering: whole nodes, and the
 * first GPUs of one last node when N is not a multiple of the node's
 * GPUs.  A launcher numbers the GPUs the same way (torchrun gives node k
 * the global ranks after those of nodes 0 .. k-1, its local ranks 0, 1,
 * ...), and Megatron-LM decomposes a global rank in the order
 * tp-cp-ep-dp-pp (megatron/core/parallel_state.py, RankGenerator):
 * tensor-parallel rank fastest, then context-parallel, then
 * data-parallel, the pipeline rank slowest; the expert layers of a
 * mixture of experts by a second generator over (expert tp, ep, expert
 * dp, pp) in the same order.
 *
 * The map is of the cluster as it is read now: a plan made on a spec
 * that has changed since (a node drained) maps onto today's usable
 * nodes.  A plan that no longer fits them, or whose stages do not fit
 * its nodes, is refused with what changed.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "core/text.h"
#include "merge/merge_int.h"

static const char *use_names[] = {"used", "partial", "unused", "unhealthy"};

const char *strata_node_use_name(strata_node_use_t u) {
  return u >= 0 && u <= STRATA_NODE_DROPPED ? use_names[u] : "?";
}

void strata_device_map_destroy(strata_device_map_t *m) {
  if (!m) return;
  for (int i = 0; m->nodes && i < m->n_nodes; i++) {
    strata_free(m->nodes[i].name);
    strata_free(m->nodes[i].why);
  }
  strata_free(m->nodes);
  strata_free(m->devices);
  strata_free(m->cluster);
  strata_free(m);
}

/* The first stage on pipeline rank r, or -1 (a plan that passed the
 * decoder has one: stage r). */
static int rank_stage(const strata_plan_t *p, int r) {
  for (int s = 0; s < p->n_stages; s++)
    if (p->stages[s].rank == r) return s;
  return -1;
}

/* The devices of pipeline rank r's stages (the same for each of its
 * chunks; 0 when the plan has none on it). */
static int rank_devices(const strata_plan_t *p, int r) {
  int s = rank_stage(p, r);
  return s < 0 ? 0 : st__stage_devices(&p->stages[s]);
}

static int plan_cp(const strata_plan_t *p) {
  return p->cp > 1 ? p->cp : 1;
}

/* Expert layers: Megatron-LM's second rank generator, order tp-ep-dp-pp
 * over (etp, ep, expert dp, pp) -- etp defaults to tp there too. */
static void expert_sizes(const strata_plan_t *p, int *ep, int *etp) {
  *ep = p->experts > 0 && p->ep > 1 ? p->ep : 1;
  *etp = p->experts > 0 && p->etp > 0 ? p->etp : p->tp;
}

/* The plan's own consistency, whoever built it (the decoder checks as
 * much, payload.c): every pipeline rank has a stage whose devices divide
 * by cp and, times dp, by etp x ep, and the devices of all of them fit
 * in an int; *total is their sum. */
static int plan_consistent(const strata_plan_t *p, int *total) {
  int cp = plan_cp(p), ep, etp;
  long long n = 0;
  expert_sizes(p, &ep, &etp);
  for (int r = 0; r < p->pp; r++) {
    int s = rank_stage(p, r);
    const strata_plan_stage_t *st = s < 0 ? NULL : &p->stages[s];
    long long t = st ? (long long)st->nodes * st->gpus_per_node : 0;
    long long e = (long long)etp * ep;
    if (t < 1 || t > INT_MAX || t % cp || e < 1 || e > INT_MAX ||
        (t * p->dp) % e)
      return strata_error(STRATA_ECORRUPT,
                          "the plan's pipeline rank %d has %lld devices per "
                          "stage x dp %d, not a multiple of its "
                          "context-parallel size %d or of its expert tp %d x "
                          "ep %d",
                          r, t, p->dp, cp, etp, ep);
    n += t * p->dp;
    if (n > INT_MAX)
      return strata_error(STRATA_ECORRUPT,
                          "the plan's pipeline ranks use more than %d devices",
                          INT_MAX);
  }
  *total = (int)n;
  return 0;
}

/* The plan fits the cluster as it is. */
static int check_fit(const strata_plan_t *p, const strata_cluster_t *c,
                     int *total) {
  int G = strata_cluster_gpus_per_node(c), n = 0;
  int rc = plan_consistent(p, &n);
  if (rc) return rc;
  for (int s = 0; s < p->n_stages; s++) {
    const strata_plan_stage_t *st = &p->stages[s];
    if (st->gpus_per_node > G || (st->nodes > 1 && st->gpus_per_node != G))
      return strata_error(STRATA_EBADINPUT,
                          "stage %d of the plan spans %d node(s) x %d %ss, "
                          "but the nodes of cluster '%s' have %d %ss: it "
                          "was planned on another node shape; re-plan, or "
                          "give --cluster the spec it was made on",
                          s, st->nodes, st->gpus_per_node, st__dev(p),
                          strata_cluster_name(c), G, st__dev(p));
  }
  if (n > strata_cluster_gpus(c))
    return strata_error(STRATA_EBADINPUT,
                        "the plan uses %d %ss but cluster '%s' has %d usable "
                        "now (%d of %d nodes of %d %ss; nodes were left out "
                        "since it was planned?): re-plan on the cluster as it "
                        "is, or give --cluster the spec it was made on",
                        n, st__dev(p), strata_cluster_name(c),
                        strata_cluster_gpus(c), strata_cluster_nodes(c),
                        strata_cluster_total_nodes(c), G, st__dev(p));
  *total = n;
  return 0;
}

/* Rank -> (node, local GPU) node-major; the coordinates of each rank in
 * Megatron-LM's order, pipeline rank by pipeline rank (a free-mode plan
 * may give its pipeline ranks stages of different sizes). */
static void fill_devices(strata_device_map_t *m, const strata_plan_t *p,
                         int G) {
  int base = 0, cp = plan_cp(p), ep, etp;
  expert_sizes(p, &ep, &etp);
  for (int r = 0; r < p->pp; r++) {
    int t = rank_devices(p, r), tp = t / cp;
    for (int i = 0; i < t * p->dp; i++) {
      strata_device_t *d = &m->devices[base + i];
      d->rank = base + i;
      d->node = d->rank / G;
      d->local = d->rank % G;
      d->tp = i % tp;
      d->cp = i / tp % cp;
      d->dp = i / t;
      d->pp = r;
      d->etp = i % etp;
      d->ep = i / etp % ep;
      d->edp = i / (etp * ep);
    }
    base += t * p->dp;
  }
}

static int set_node(strata_node_info_t *n, const char *name,
                    strata_node_use_t use, const char *why) {
  n->use = use;
  n->name = strata_strdup(name ? name : "?");
  n->why = why ? strata_strdup(why) : NULL;
  n->first_rank = n->node_rank = -1;
  if (!n->name || (why && !n->why))
    return strata_error(STRATA_ENOMEM, "out of memory");
  return 0;
}

static int fill_nodes(strata_device_map_t *m, const strata_cluster_t *c) {
  int G = m->gpus_per_node, used = (m->n_devices + G - 1) / G, rc = 0;
  char why[160];
  snprintf(why, sizeof why, "not needed: the plan's %d %s fit on %d node%s",
           m->n_devices, m->npu ? "NPUs" : "GPUs", used, used == 1 ? "" : "s");
  for (int i = 0, u = 0; i < m->n_nodes && !rc; i++) {
    const char *dropped = strata_cluster_spec_node_dropped(c, i);
    const char *name = strata_cluster_spec_node_name(c, i);
    strata_node_info_t *n = &m->nodes[i];
    if (dropped) {
      rc = set_node(n, name, STRATA_NODE_DROPPED, dropped);
      continue;
    }
    if (u >= used) {
      rc = set_node(n, name, STRATA_NODE_UNUSED, why);
      u++;
      continue;
    }
    int gpus = m->n_devices - u * G < G ? m->n_devices - u * G : G;
    rc = set_node(n, name, gpus < G ? STRATA_NODE_PARTIAL : STRATA_NODE_USED,
                  NULL);
    n->gpus = gpus;
    n->first_rank = u * G;
    n->node_rank = u++;
  }
  m->nodes_used = used;
  return rc;
}

/* Point every device at its node's index in m->nodes (the spec's order)
 * rather than the usable node's. */
static int link_devices(strata_device_map_t *m) {
  int *spec_of = strata_calloc((size_t)m->nodes_used + 1, sizeof *spec_of);
  if (!spec_of) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int i = 0, u = 0; i < m->n_nodes; i++)
    if (m->nodes[i].node_rank >= 0) spec_of[u++] = i;
  for (int i = 0; i < m->n_devices; i++)
    m->devices[i].node = spec_of[m->devices[i].node];
  strata_free(spec_of);
  return 0;
}

static int map_alloc(strata_device_map_t *m, const strata_plan_t *p,
                     const strata_cluster_t *c, int total) {
  m->cluster = strata_strdup(p->cluster ? p->cluster : "?");
  m->n_devices = total;
  m->n_nodes = strata_cluster_total_nodes(c);
  m->gpus_per_node = strata_cluster_gpus_per_node(c);
  m->devices = strata_calloc((size_t)total, sizeof *m->devices);
  m->nodes = strata_calloc((size_t)m->n_nodes, sizeof *m->nodes);
  if (!m->cluster || !m->devices || !m->nodes)
    return strata_error(STRATA_ENOMEM, "out of memory");
  return 0;
}

/* ---- a mixed cluster: each pipeline rank on its stage's node group ----
 *
 * Pipeline rank r's t x dp ranks (Megatron-LM's order: pp slowest) run on
 * the node group of its stage, node-major from that group's next free
 * GPU.  Launchers number ranks by node rank, so the nodes get their node
 * ranks in the order the pipeline first uses them: the leading group's
 * nodes first, whatever the spec's order. */

static int mixed_check(const strata_plan_t *p, const strata_cluster_t *c,
                       int *total) {
  int K = strata_cluster_group_count(c), n = 0, need[64] = {0};
  int rc = plan_consistent(p, &n);
  if (rc) return rc;
  if (p->n_groups != K || K > 64)
    return strata_error(STRATA_EBADINPUT,
                        "the plan was made for %d node group%s but cluster "
                        "'%s' has %d: re-plan on it, or give --cluster the "
                        "spec it was made on",
                        p->n_groups > 1 ? p->n_groups : 1,
                        p->n_groups > 1 ? "s" : "", strata_cluster_name(c), K);
  for (int s = 0; s < p->n_stages; s++) {
    const strata_plan_stage_t *st = &p->stages[s];
    const strata_cluster_t *g = strata_cluster_group(c, st->group);
    int G = g ? strata_cluster_gpus_per_node(g) : 0;
    if (!g || st->gpus_per_node > G ||
        (st->nodes > 1 && st->gpus_per_node != G))
      return strata_error(STRATA_EBADINPUT,
                          "stage %d of the plan (%d node(s) x %d GPUs) does "
                          "not fit node group %d of cluster '%s': re-plan, "
                          "or give --cluster the spec it was made on",
                          s, st->nodes, st->gpus_per_node, st->group,
                          strata_cluster_name(c));
    if (st->rank == s % p->pp && s < p->pp) /* each rank once (the sum
                                               fits: plan_consistent) */
      need[st->group] += st__stage_devices(st) * p->dp;
  }
  n = 0;
  for (int z = 0; z < K; z++) {
    const strata_cluster_t *g = strata_cluster_group(c, z);
    if (need[z] > strata_cluster_gpus(g))
      return strata_error(STRATA_EBADINPUT,
                          "the plan puts %d GPUs on node group %d (%s) of "
                          "cluster '%s', which has %d usable now: re-plan on "
                          "the cluster as it is",
                          need[z], z, strata_cluster_gpu_model(g)->name,
                          strata_cluster_name(c), strata_cluster_gpus(g));
    n += need[z];
  }
  *total = n;
  return 0;
}

/* Spec index of every usable node (usable nodes in spec order). */
static int *usable_spec(const strata_cluster_t *c) {
  int *v = strata_calloc((size_t)strata_cluster_nodes(c) + 1, sizeof *v);
  if (!v) return NULL;
  for (int i = 0, u = 0; i < strata_cluster_total_nodes(c); i++)
    if (!strata_cluster_spec_node_dropped(c, i)) v[u++] = i;
  return v;
}

/* Give pipeline rank r's ranks [base, base + n) GPUs of group z from its
 * cursor (usable node u, local GPU l). */
static int mixed_place(strata_device_map_t *m, const strata_cluster_t *c,
                       const int *spec, int z, int base, int n, int *u, int *l,
                       int *next_rank) {
  const strata_cluster_t *g = strata_cluster_group(c, z);
  int G = strata_cluster_gpus_per_node(g);
  int u0 = strata_cluster_group_first_node(c, z);
  for (int i = 0; i < n; i++) {
    if (*l == G) *l = 0, (*u)++;
    strata_node_info_t *nd = &m->nodes[spec[u0 + *u]];
    if (nd->node_rank < 0) {
      int rc =
          set_node(nd, strata_cluster_node_name(g, *u), STRATA_NODE_USED, NULL);
      if (rc) return rc;
      nd->node_rank = (*next_rank)++;
      nd->first_rank = base + i;
    }
    nd->gpus = *l + 1;
    nd->use = nd->gpus < G ? STRATA_NODE_PARTIAL : STRATA_NODE_USED;
    m->devices[base + i].node = spec[u0 + *u];
    m->devices[base + i].local = (*l)++;
  }
  return 0;
}

static int mixed_nodes(strata_device_map_t *m, const strata_plan_t *p,
                       const strata_cluster_t *c) {
  int K = strata_cluster_group_count(c), cur_u[64] = {0}, cur_l[64] = {0};
  int used[64] = {0}, base = 0, next = 0, rc = 0;
  int *spec = usable_spec(c);
  if (!spec) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int i = 0; i < m->n_nodes; i++)
    m->nodes[i].node_rank = -1;
  for (int r = 0; r < p->pp && !rc; r++) {
    int s = rank_stage(p, r), n = rank_devices(p, r) * p->dp;
    if (s < 0) { /* mixed_check saw every rank's stage */
      rc = strata_error(STRATA_EINTERNAL, "device map: no stage on rank %d", r);
      break;
    }
    used[p->stages[s].group] = 1;
    rc = mixed_place(m, c, spec, p->stages[s].group, base, n,
                     &cur_u[p->stages[s].group], &cur_l[p->stages[s].group],
                     &next);
    base += n;
  }
  m->nodes_used = next;
  for (int i = 0; i < m->n_nodes && !rc; i++) {
    strata_node_info_t *nd = &m->nodes[i];
    int z = strata_cluster_spec_node_group(c, i);
    const char *dropped = strata_cluster_spec_node_dropped(c, i);
    const strata_cluster_t *g = strata_cluster_group(c, z);
    char why[200];
    nd->group = z;
    if (nd->name) continue; /* used */
    if (dropped)
      snprintf(why, sizeof why, "%s", dropped);
    else if (!used[z])
      snprintf(
          why, sizeof why,
          "node group %d (%s) left out: the best plan found does not use it", z,
          strata_cluster_gpu_model(g)->name);
    else
      snprintf(why, sizeof why,
               "not needed: the plan's stages on node group %d fit on fewer "
               "of its nodes",
               z);
    rc = set_node(nd, strata_cluster_spec_node_name(c, i),
                  dropped ? STRATA_NODE_DROPPED : STRATA_NODE_UNUSED, why);
  }
  (void)K;
  strata_free(spec);
  return rc;
}

int strata_device_map(const strata_plan_t *p, const strata_cluster_t *c,
                      strata_device_map_t **out) {
  strata_device_map_t *m = NULL;
  int total = 0, rc;
  *out = NULL;
  if (!p || !c || p->pp < 1 || p->dp < 1 || p->n_stages < 1)
    return strata_error(STRATA_EINVAL, "device map: a plan with no stage");
  int mixed = strata_cluster_group_count(c) > 1 || p->n_groups > 1;
  if ((rc = mixed ? mixed_check(p, c, &total) : check_fit(p, c, &total)))
    return rc;
  if (!(m = strata_calloc(1, sizeof *m)))
    return strata_error(STRATA_ENOMEM, "out of memory");
  m->tp = p->tp;
  m->cp = plan_cp(p);
  m->experts = p->experts > 0;
  expert_sizes(p, &m->ep, &m->etp);
  m->dp = p->dp;
  m->pp = p->pp;
  m->npu = !strcmp(strata_cluster_device_kind(c), "NPU");
  if (!(rc = map_alloc(m, p, c, total))) {
    fill_devices(m, p, m->gpus_per_node);
    if (mixed)
      rc = mixed_nodes(m, p, c);
    else if (!(rc = fill_nodes(m, c)))
      rc = link_devices(m);
  }
  if (!rc) {
    *out = m;
    m = NULL;
  }
  strata_device_map_destroy(m);
  return rc;
}

/* ---- reports -------------------------------------------------------- */

/* "0,1,2,3": the local GPUs a partial node runs on. */
static void visible(strata_buf_t *b, const strata_node_info_t *n) {
  for (int g = 0; g < n->gpus; g++)
    strata_buf_printf(b, "%s%d", g ? "," : "", g);
}

/* The end of the run of nodes from i that read alike in a summary:
 * used whole, or left out for the same reason (a thousand-node cluster
 * prints a few lines). */
static int run_end(const strata_device_map_t *m, int i) {
  const strata_node_info_t *a = &m->nodes[i];
  int j = i;
  while (j + 1 < m->n_nodes) {
    const strata_node_info_t *b = &m->nodes[j + 1];
    const strata_node_info_t *prev = &m->nodes[j];
    if (b->group != a->group) break; /* a mixed cluster's groups apart */
    /* used nodes: ranks that follow on (a mixed plan may use a later
     * group's nodes first) */
    int same =
        a->use == b->use && a->use != STRATA_NODE_PARTIAL &&
        (a->why ? b->why && !strcmp(a->why, b->why)
                : !b->why && b->first_rank == prev->first_rank + prev->gpus);
    if (!same) break;
    j++;
  }
  return j;
}

/* "node3" or "node3 .. node9 (7 nodes)", padded to a column. */
static void run_name(strata_buf_t *b, const strata_device_map_t *m, int i,
                     int j) {
  char name[160];
  if (i == j)
    snprintf(name, sizeof name, "%s", m->nodes[i].name);
  else
    snprintf(name, sizeof name, "%s .. %s (%d nodes)", m->nodes[i].name,
             m->nodes[j].name, j - i + 1);
  strata_buf_printf(b, "  %-28s ", name);
}

static void used_run(strata_buf_t *b, const strata_device_map_t *m, int i,
                     int j) {
  const strata_node_info_t *n = &m->nodes[i];
  run_name(b, m, i, j);
  strata_buf_printf(b, "ranks %d-%d", n->first_rank,
                    m->nodes[j].first_rank + m->nodes[j].gpus - 1);
  if (n->use == STRATA_NODE_PARTIAL) {
    /* torch_npu reads ASCEND_RT_VISIBLE_DEVICES as torch CUDA's */
    strata_buf_printf(b, " (%d of %d %s: %s_VISIBLE_DEVICES=", n->gpus,
                      m->gpus_per_node, m->npu ? "NPUs" : "GPUs",
                      m->npu ? "ASCEND_RT" : "CUDA");
    visible(b, n);
    strata_buf_puts(b, ")");
  }
  strata_buf_puts(b, "\n");
}

int strata_device_map_summary(const strata_device_map_t *m, char **text) {
  strata_buf_t b;
  int left = m->n_nodes - m->nodes_used;
  strata_buf_init(&b);
  strata_buf_printf(&b, "devices: %d %s on %d of %d nodes of cluster %s\n",
                    m->n_devices, m->npu ? "NPUs" : "GPUs", m->nodes_used,
                    m->n_nodes, m->cluster);
  for (int i = 0, j; i < m->n_nodes; i = j + 1) {
    j = run_end(m, i);
    if (!m->nodes[i].why) used_run(&b, m, i, j);
  }
  if (left) strata_buf_printf(&b, "  left out (%d):\n", left);
  for (int i = 0, j; i < m->n_nodes; i = j + 1) {
    j = run_end(m, i);
    if (!m->nodes[i].why) continue;
    run_name(&b, m, i, j);
    strata_buf_printf(&b, "%s\n", m->nodes[i].why);
  }
  strata_buf_printf(&b,
                    "  rank order: Megatron-LM's tp-cp-ep-dp-pp (tp %d, cp "
                    "%d, dp %d, pp %d; tp fastest)\n",
                    m->tp, m->cp, m->dp, m->pp);
  if (m->experts)
    strata_buf_printf(
        &b,
        "  expert layers: tp-ep-dp-pp (etp %d, ep %d, expert "
        "dp %d)\n",
        m->etp, m->ep,
        (int)(m->n_devices / ((long long)m->etp * m->ep * m->pp)));
  return strata_buf_finish(&b, text);
}

/* Members of the rank and node objects, a million of them on a large
 * cluster: constant keys and the map's own strings are referenced, not
 * copied (the tree must not outlive the map), which keeps show --json of
 * a million-node map within a few hundred bytes per rank. */
static int num_k(cJSON *o, const char *key, double v) {
  cJSON *x = cJSON_CreateNumber(v);
  if (x && cJSON_AddItemToObjectCS(o, key, x)) return 0;
  cJSON_Delete(x);
  return strata_error(STRATA_ENOMEM, "out of memory building JSON");
}

static int str_k(cJSON *o, const char *key, const char *v) {
  if (!v || !st__utf8_valid(v, strlen(v))) /* copied, U+FFFD for bad bytes */
    return st__json_add_str(o, key, v);
  cJSON *x = cJSON_CreateStringReference(v);
  if (x && cJSON_AddItemToObjectCS(o, key, x)) return 0;
  cJSON_Delete(x);
  return strata_error(STRATA_ENOMEM, "out of memory building JSON");
}

static int json_node(cJSON *arr, const strata_node_info_t *n) {
  cJSON *o = st__json_push_object(arr);
  if (!o) return -1;
  int bad =
      str_k(o, "name", n->name) | str_k(o, "use", strata_node_use_name(n->use));
  if (n->why) return bad | str_k(o, "why", n->why);
  bad |= num_k(o, "node_rank", n->node_rank) | num_k(o, "gpus", n->gpus) |
         num_k(o, "first_rank", n->first_rank);
  if (n->use == STRATA_NODE_PARTIAL) {
    strata_buf_t b;
    strata_buf_init(&b);
    visible(&b, n);
    bad |= b.oom || st__json_add_str(o, "cuda_visible_devices", b.p);
    strata_buf_free(&b);
  }
  return bad;
}

static int json_device(cJSON *arr, const strata_device_map_t *m,
                       const strata_device_t *d) {
  cJSON *o = st__json_push_object(arr);
  if (!o) return -1;
  int bad =
      num_k(o, "rank", d->rank) | str_k(o, "host", m->nodes[d->node].name) |
      num_k(o, "local", d->local) | num_k(o, "tp", d->tp) |
      num_k(o, "cp", d->cp) | num_k(o, "dp", d->dp) | num_k(o, "pp", d->pp);
  if (!m->experts) return bad;
  return bad | num_k(o, "etp", d->etp) | num_k(o, "ep", d->ep) |
         num_k(o, "edp", d->edp);
}

static int map_json(const strata_device_map_t *m, cJSON *o) {
  cJSON *nodes, *devs;
  int bad = st__json_add_str(o, "cluster", m->cluster) |
            st__json_add_num(o, "gpus", m->n_devices) |
            st__json_add_num(o, "gpus_per_node", m->gpus_per_node) |
            st__json_add_num(o, "nodes_used", m->nodes_used) |
            st__json_add_str(o, "order", "tp-cp-ep-dp-pp");
  nodes = cJSON_AddArrayToObject(o, "nodes");
  devs = cJSON_AddArrayToObject(o, "ranks");
  bad |= !nodes || !devs;
  for (int i = 0; !bad && i < m->n_nodes; i++)
    bad |= json_node(nodes, &m->nodes[i]);
  for (int i = 0; !bad && i < m->n_devices; i++)
    bad |= json_device(devs, m, &m->devices[i]);
  return bad ? strata_error(STRATA_ENOMEM, "out of memory") : 0;
}

int st__device_map_tree(const strata_device_map_t *m, cJSON **out) {
  cJSON *root = cJSON_CreateObject();
  int rc =
      root ? map_json(m, root) : strata_error(STRATA_ENOMEM, "out of memory");
  if (rc) {
    cJSON_Delete(root);
    root = NULL;
  }
  *out = root;
  return rc;
}

int strata_device_map_json(const strata_device_map_t *m, char **text) {
  cJSON *root = NULL;
  int rc = st__device_map_tree(m, &root);
  if (!rc && !(*text = st__json_print(root)))
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  cJSON_Delete(root);
  return rc;
}
