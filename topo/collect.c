/*
 * collect.c - a cluster spec from the hosts themselves: one hwloc XML
 * export per host (`lstopo --of xml HOST.xml`, or the HOST.xml that
 * hwloc-gather-topology writes beside its tarball), named after the host.
 *
 * Hosts whose nodes read the same -- GPUs, their models, memory, PCIe and
 * NVLink figures, the link matrix, NICs and how near each GPU's NIC is --
 * form one node group, written as a host range in Slurm's syntax
 * ("node[001-004,009]") and pointing at the XML of its first host, so
 * the spec stays short on a thousand hosts and the planner reads one file
 * per group.  Hosts are taken in natural order (node9 before node10);
 * one group holds hosts of one prefix, suffix and number width, because a
 * spec's range has one bracket and pads numbers like its lower bound.
 * Every written range is expanded again with the spec reader's own
 * expander and compared with the hosts, so what the spec names is what
 * was collected.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/text.h"
#include "topo/cluster.h"

#define MAX_RANGES 64 /* the spec reader's limit per bracket group */

void strata_collect_opts_init(strata_collect_opts_t *o) {
  memset(o, 0, sizeof *o);
}

void strata_names_free(char **names, int n) {
  for (int i = 0; names && i < n; i++)
    strata_free(names[i]);
  strata_free(names);
}

typedef struct {
  char *host, *path;
  char *shape; /* what makes two nodes the same, as text */
  /* the host name split around its last run of digits */
  size_t plen; /* prefix length */
  long num;    /* -1: no digits */
  int digits;  /* length of the digit run */
  int padded;  /* the run starts with '0' and is longer than 1 */
  const char *sfx;
} host_t;

/* ---- hosts ---------------------------------------------------------- */

static int host_of_path(const char *path, char **out) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t n = strlen(base);
  if (n > 4 && !strcmp(base + n - 4, ".xml")) n -= 4;
  if (!n)
    return strata_error(STRATA_EBADINPUT,
                        "%s: the file is named after its host: name it "
                        "HOST.xml",
                        path);
  *out = strata_strndup(base, n);
  if (!*out) return strata_error(STRATA_ENOMEM, "out of memory");
  /* The name reaches hostfiles and launch lines: a host name only. */
  int rc =
      st__hostname_check(*out, "the file is named after its host, but", path);
  if (rc) {
    strata_free(*out);
    *out = NULL;
  }
  return rc;
}

static void split_host(host_t *h) {
  const char *s = h->host, *end = s + strlen(s), *d = end;
  while (d > s && !isdigit((unsigned char)d[-1]))
    d--;
  const char *e = d;
  while (d > s && isdigit((unsigned char)d[-1]))
    d--;
  h->num = -1;
  h->plen = strlen(s);
  h->sfx = end;
  if (e == d || e - d > 8) return; /* no number, or too long for a range */
  h->plen = (size_t)(d - s);
  h->sfx = e;
  h->digits = (int)(e - d);
  h->num = strtol(d, NULL, 10);
  h->padded = d[0] == '0' && h->digits > 1;
}

/* The facts of a node the planner uses, as text: equal text, same node. */
static int shape_of(const strata_node_topo_t *n, char **out) {
  strata_buf_t b;
  int g = strata_node_gpu_count(n), k = strata_node_nic_count(n);
  strata_buf_init(&b);
  strata_buf_printf(&b, "%d gpus %s sw%d;", g, strata_node_link_kind(n),
                    strata_node_has_switch(n));
  for (int i = 0; i < g; i++) {
    const strata_gpu_info_t *x = strata_node_gpu(n, i);
    strata_buf_printf(
        &b, "%s %s %llu %.6g %.6g %d %d %d;", x->table ? x->table->name : "?",
        x->model, (unsigned long long)x->memory_bytes, x->pcie_bandwidth,
        x->nvlink_bandwidth, x->domain, x->nic, (int)x->nic_nearness);
    for (int j = 0; j < g; j++)
      strata_buf_printf(&b, "%.6g,", strata_node_link(n, i, j));
  }
  strata_buf_printf(&b, "%d nics", k);
  for (int i = 0; i < k; i++)
    strata_buf_printf(&b, " %d", strata_node_nic(n, i)->rdma);
  return strata_buf_finish(&b, out);
}

static int read_host(const char *path, host_t *h) {
  strata_node_topo_t *n = NULL;
  int rc = host_of_path(path, &h->host);
  if (!rc && !(h->path = strata_strdup(path)))
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  if (!rc) rc = strata_node_load_xml(path, &n);
  if (!rc) rc = shape_of(n, &h->shape);
  strata_node_destroy(n);
  if (!rc) split_host(h);
  return rc;
}

/* Natural order: prefix, then the number, then the rest. */
static int cmp_host(const void *a, const void *b) {
  const host_t *x = a, *y = b;
  size_t n = x->plen < y->plen ? x->plen : y->plen;
  int d = strncmp(x->host, y->host, n);
  if (d || x->plen != y->plen) return d ? d : (x->plen < y->plen ? -1 : 1);
  if (x->num != y->num) return x->num < y->num ? -1 : 1;
  return strcmp(x->host, y->host);
}

static void hosts_free(host_t *h, int n) {
  for (int i = 0; h && i < n; i++) {
    strata_free(h[i].host);
    strata_free(h[i].path);
    strata_free(h[i].shape);
  }
  strata_free(h);
}

static int read_hosts(const char *const *paths, int n, host_t **out) {
  host_t *h = strata_calloc((size_t)n, sizeof *h);
  int rc = h ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
  for (int i = 0; i < n && !rc; i++)
    rc = read_host(paths[i], &h[i]);
  if (!rc) qsort(h, (size_t)n, sizeof *h, cmp_host);
  for (int i = 1; i < n && !rc; i++)
    if (!strcmp(h[i].host, h[i - 1].host))
      rc = strata_error(STRATA_EBADINPUT, "host '%s' is given twice: %s and %s",
                        h[i].host, h[i - 1].path, h[i].path);
  if (rc) {
    hosts_free(h, n);
    return rc;
  }
  *out = h;
  return 0;
}

/* ---- groups --------------------------------------------------------- */

/* 1 if b can join a's range group: same shape, prefix and suffix, and
 * numbers a range with one padding writes alike. */
static int same_group(const host_t *a, const host_t *b) {
  if (strcmp(a->shape, b->shape) || a->num < 0 || b->num < 0 ||
      a->plen != b->plen || strncmp(a->host, b->host, a->plen) ||
      strcmp(a->sfx, b->sfx))
    return 0;
  if (a->padded || b->padded) return a->digits == b->digits;
  return 1;
}

/* "prefix[r1,r2,...]suffix" of hosts v[0..n) (one group), or the plain
 * name of a single host without a number. */
static int range_text(host_t **v, int n, strata_buf_t *b) {
  const host_t *h = v[0];
  int width = 0;
  for (int i = 0; i < n; i++)
    if (v[i]->padded) width = v[i]->digits;
  if (n == 1) return strata_buf_puts(b, h->host);
  strata_buf_printf(b, "%.*s[", (int)h->plen, h->host);
  for (int i = 0; i < n;) {
    int j = i;
    while (j + 1 < n && v[j + 1]->num == v[j]->num + 1)
      j++;
    strata_buf_printf(b, "%s%0*ld", i ? "," : "", width, v[i]->num);
    if (j > i) strata_buf_printf(b, "-%0*ld", width, v[j]->num);
    i = j + 1;
  }
  return strata_buf_printf(b, "]%s", h->sfx);
}

/* The range must expand, with the spec reader's expander, to exactly
 * these hosts: a written spec that named other nodes would be worse than
 * none. */
static int check_range(const char *range, host_t **v, int n) {
  char **names = NULL;
  int k = 0, rc = st__range_expand(range, "collect", &names, &k);
  if (!rc && k != n) rc = STRATA_EINTERNAL;
  for (int i = 0; !rc && i < n; i++)
    if (strcmp(names[i], v[i]->host)) rc = STRATA_EINTERNAL;
  strata_names_free(names, k);
  if (rc == STRATA_EINTERNAL)
    rc = strata_error(rc,
                      "collect: the host range '%s' does not name the "
                      "hosts it was made from",
                      range);
  return rc;
}

/* The path of file as seen from folder dir (NULL: the current one), so
 * that the spec finds it wherever the two move together; the path as
 * given when either cannot be resolved. */
static char *rel_path(const char *file, const char *dir) {
  char fa[PATH_MAX], da[PATH_MAX];
  size_t common = 0, dl, ups = 0;
  if (!realpath(file, fa) || !realpath(dir && *dir ? dir : ".", da))
    return strata_strdup(file);
  dl = strlen(da);
  for (size_t i = 0; fa[i] && fa[i] == da[i]; i++)
    if (fa[i] == '/') common = i;
  if (dl == 1) dl = 0; /* dir is the root */
  if (!strncmp(fa, da, dl) && fa[dl] == '/') common = dl;
  for (size_t k = common; k < dl; k++)
    ups += da[k] == '/' || k == common;
  strata_buf_t b;
  strata_buf_init(&b);
  for (size_t k = 0; k < ups; k++)
    strata_buf_puts(&b, "../");
  strata_buf_puts(&b, fa + common + 1);
  if (b.oom) {
    strata_buf_free(&b);
    return NULL;
  }
  return strata_buf_steal(&b, NULL);
}

static int add_group(cJSON *arr, host_t **v, int n,
                     const strata_collect_opts_t *o) {
  strata_buf_t b;
  char *xml = NULL;
  cJSON *g = cJSON_CreateObject();
  int rc = 0;
  strata_buf_init(&b);
  range_text(v, n, &b);
  if (!g || !cJSON_AddItemToArray(arr, g)) {
    cJSON_Delete(g);
    rc = STRATA_ENOMEM;
  }
  if (!rc && !b.oom) rc = check_range(b.p, v, n);
  if (!rc && !(xml = rel_path(v[0]->path, o->spec_dir))) rc = STRATA_ENOMEM;
  if (!rc && (b.oom || st__json_add_str(g, "names", b.p) ||
              st__json_add_str(g, "xml", xml)))
    rc = STRATA_ENOMEM;
  if (rc == STRATA_ENOMEM) rc = strata_error(rc, "out of memory");
  strata_free(xml);
  strata_buf_free(&b);
  return rc;
}

/* The hosts of one group from h[first..]: those of its kind not taken
 * yet, up to MAX_RANGES runs of consecutive numbers. */
static int gather(host_t *h, int nh, int first, char *taken, host_t **v) {
  int n = 0, runs = 1;
  v[n++] = &h[first];
  taken[first] = 1;
  for (int i = first + 1; i < nh && h[first].num >= 0; i++) {
    if (taken[i] || !same_group(&h[first], &h[i])) continue;
    int gap = h[i].num != v[n - 1]->num + 1;
    if (runs + gap > MAX_RANGES) break;
    runs += gap;
    taken[i] = 1;
    v[n++] = &h[i];
  }
  return n;
}

static int add_groups(cJSON *root, host_t *h, int nh,
                      const strata_collect_opts_t *o) {
  cJSON *arr = cJSON_AddArrayToObject(root, "node_groups");
  char *taken = strata_calloc((size_t)nh, 1);
  host_t **v = strata_calloc((size_t)nh, sizeof *v);
  int rc = arr && taken && v ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
  for (int i = 0; i < nh && !rc; i++)
    if (!taken[i]) rc = add_group(arr, v, gather(h, nh, i, taken, v), o);
  strata_free(taken);
  strata_free(v);
  return rc;
}

/* ---- the rest of the spec ------------------------------------------- */

static int host_index(const host_t *h, int nh, const char *name) {
  for (int i = 0; i < nh; i++)
    if (!strcmp(h[i].host, name)) return i;
  return -1;
}

static int add_unhealthy(cJSON *root, const host_t *h, int nh,
                         const strata_collect_opts_t *o, int *ignored) {
  cJSON *u, *arr;
  char *seen = strata_calloc((size_t)nh + 1, 1);
  int rc = seen ? 0 : STRATA_ENOMEM;
  *ignored = 0;
  if (!rc && o->n_unhealthy) {
    u = cJSON_AddObjectToObject(root, "unhealthy");
    arr = u ? cJSON_AddArrayToObject(u, "nodes") : NULL;
    if (!arr) rc = STRATA_ENOMEM;
  }
  /* in host order, each once */
  for (int i = 0; !rc && i < o->n_unhealthy; i++) {
    int k = host_index(h, nh, o->unhealthy[i]);
    if (k < 0) (*ignored)++;
    if (k >= 0) seen[k] = 1;
  }
  for (int k = 0; !rc && o->n_unhealthy && k < nh; k++) {
    cJSON *s = seen[k] ? cJSON_CreateString(h[k].host) : NULL;
    if (seen[k] && (!s || !cJSON_AddItemToArray(arr, s))) {
      cJSON_Delete(s);
      rc = STRATA_ENOMEM;
    }
  }
  strata_free(seen);
  return rc ? strata_error(STRATA_ENOMEM, "out of memory") : 0;
}

static int add_network(cJSON *root, int nh, const strata_collect_opts_t *o) {
  cJSON *net;
  if (nh > 1 && !(o->nic_gbits > 0))
    return strata_error(STRATA_EBADINPUT,
                        "%d hosts talk through their NICs, whose speed an "
                        "hwloc export does not give: pass --nic-gbits N, the "
                        "line rate of one NIC in Gb/s (e.g. 400 for NDR "
                        "InfiniBand)",
                        nh);
  if (!(o->nic_gbits > 0) && !o->leaf_size) return 0;
  if (!(net = cJSON_AddObjectToObject(root, "network"))) return STRATA_ENOMEM;
  if (o->nic_gbits > 0 &&
      st__json_add_num(net, "nic_gbits_per_s", o->nic_gbits))
    return STRATA_ENOMEM;
  if (o->leaf_size && st__json_add_num(net, "leaf_size", o->leaf_size))
    return STRATA_ENOMEM;
  return 0;
}

static int build_spec(cJSON *root, host_t *h, int nh,
                      const strata_collect_opts_t *o, int *ignored) {
  cJSON *gpu;
  int rc;
  if (st__json_add_str(root, "name", o->name ? o->name : "collected"))
    return strata_error(STRATA_ENOMEM, "out of memory");
  if ((rc = add_groups(root, h, nh, o))) return rc;
  if (o->gpu_model && (!(gpu = cJSON_AddObjectToObject(root, "gpu")) ||
                       st__json_add_str(gpu, "model", o->gpu_model)))
    return strata_error(STRATA_ENOMEM, "out of memory");
  if ((rc = add_network(root, nh, o)))
    return rc == STRATA_ENOMEM ? strata_error(rc, "out of memory") : rc;
  return add_unhealthy(root, h, nh, o, ignored);
}

int strata_topo_collect(const char *const *paths, int n,
                        const strata_collect_opts_t *o, char **spec,
                        int *ignored) {
  host_t *h = NULL;
  cJSON *root = NULL;
  int rc, dummy;
  *spec = NULL;
  if (!ignored) ignored = &dummy;
  *ignored = 0;
  if (n < 1) return strata_error(STRATA_EINVAL, "collect: no host files");
  if ((rc = read_hosts(paths, n, &h))) return rc;
  if (!(root = cJSON_CreateObject()))
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  if (!rc) rc = build_spec(root, h, n, o, ignored);
  if (!rc && !(*spec = st__json_print(root)))
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  cJSON_Delete(root);
  hosts_free(h, n);
  return rc;
}
