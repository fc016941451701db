/*
 * hwloc_node.c - a node's GPUs, NICs and GPU-to-GPU links, read with
 * hwloc from an XML export or from this machine.
 *
 * This is the one file that talks to hwloc, so hwloc's conventions stop
 * here: -1 and errno become a STRATA_E* code with a message naming the
 * file; XML that hwloc 2.x cannot read (written by hwloc 3, truncated,
 * not XML at all) is recognised before hwloc sees it; hwloc's own stderr
 * messages are silenced (HWLOC_HIDE_ERRORS); and everything kept is copied
 * into plain data before the topology is destroyed.
 *
 * What was learned the hard way (DESIGN.md, topo/): I/O objects exist only
 * with an I/O type filter set before loading; one GPU appears as several
 * OS devices (cuda0, nvml0, opencl0d0, rsmi0) under one PCI device, so
 * GPUs are keyed by that PCI device; some GPUs appear only as PCI devices;
 * the NVLink matrix is GPU-to-GPU only after a transitive closure when
 * NVSwitches are in it (and all zeros if the closure is applied without);
 * hwloc_get_common_ancestor_obj() must not be used on I/O objects, so
 * closeness is found by walking parent pointers.  KEEP_IMPORTANT keeps
 * every GPU, NIC and NVSwitch in the shared topologies; KEEP_ALL adds
 * nothing used here.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "topo/node.h"

#define MAX_DEPTH 64
#define XML_MAX ((size_t)256 << 20)

/* One GPU or NIC while reading: its PCI device and what is gathered. */
typedef struct {
  hwloc_obj_t pci;
  int index; /* backend index (cuda3 -> 3), -1 none */
  strata_gpu_info_t gpu;
  strata_nic_info_t nic;
} found_t;

typedef struct {
  found_t *v;
  int n, cap;
} devs_t;

static pthread_once_t quiet_once = PTHREAD_ONCE_INIT;

static void quiet_hwloc(void) {
  /* hwloc prints internal errors (bad BIOS tables, XML problems) on
   * stderr; a user of Strata gets our message instead. */
  setenv("HWLOC_HIDE_ERRORS", "2", 0);
  /* hwloc's own XML parser rather than the libxml2 plugin: the same
   * reading whether or not the plugin is installed, and no leak when a
   * damaged file fails part-way (the plugin's, found by fuzzing).  Both
   * read the shared topologies identically. */
  setenv("HWLOC_LIBXML_IMPORT", "0", 0);
}

static int devs_add(devs_t *d, hwloc_obj_t pci, found_t **out) {
  for (int i = 0; i < d->n; i++)
    if (d->v[i].pci == pci) {
      *out = &d->v[i];
      return 0;
    }
  if (d->n == d->cap) {
    int cap = d->cap ? 2 * d->cap : 8;
    found_t *v = strata_realloc(d->v, (size_t)cap * sizeof *v);
    if (!v) return strata_error(STRATA_ENOMEM, "out of memory reading hwloc");
    d->v = v;
    d->cap = cap;
  }
  *out = &d->v[d->n++];
  memset(*out, 0, sizeof **out);
  (*out)->pci = pci;
  (*out)->index = -1;
  return 0;
}

static int prefix(const char *s, const char *p) {
  return s && strncmp(s, p, strlen(p)) == 0;
}

static hwloc_obj_t pci_parent(hwloc_obj_t o) {
  for (o = o->parent; o; o = o->parent)
    if (o->type == HWLOC_OBJ_PCI_DEVICE)
      return o;
    else if (o->type != HWLOC_OBJ_OS_DEVICE)
      return NULL;
  return NULL;
}

/* A GPU OS device from a GPU runtime (not a DRM card0/renderD node, which
 * a BMC's VGA has too). */
static int is_gpu_osdev(hwloc_obj_t o) {
  hwloc_obj_osdev_type_t t = o->attr->osdev.type;
  const char *be = hwloc_obj_get_info_by_name(o, "Backend");
  const char *cl = hwloc_obj_get_info_by_name(o, "OpenCLDeviceType");
  if (t != HWLOC_OBJ_OSDEV_GPU && t != HWLOC_OBJ_OSDEV_COPROC) return 0;
  if (cl && strcmp(cl, "GPU") != 0) return 0;
  if (prefix(o->name, "cuda") || prefix(o->name, "nvml") ||
      prefix(o->name, "opencl") || prefix(o->name, "rsmi"))
    return 1;
  return be && (!strcmp(be, "CUDA") || !strcmp(be, "NVML") ||
                !strcmp(be, "OpenCL") || !strcmp(be, "RSMI"));
}

static void append_name(char *dst, size_t size, const char *name) {
  size_t len = strlen(dst);
  if (!name) return; /* damaged XML: an OS device without a name */
  if (len + strlen(name) + 2 > size) return;
  snprintf(dst + len, size - len, "%s%s", len ? "/" : "", name);
}

static uint64_t info_kib(hwloc_obj_t o, const char *key) {
  const char *v = hwloc_obj_get_info_by_name(o, key);
  return v ? strtoull(v, NULL, 10) * 1024ull : 0;
}

static void gpu_absorb(found_t *d, hwloc_obj_t o) {
  const char *model = hwloc_obj_get_info_by_name(o, "GPUModel");
  uint64_t mem = info_kib(o, "CUDAGlobalMemorySize");
  if (!mem) mem = info_kib(o, "RSMIVRAMSize");
  if (!mem) mem = info_kib(o, "OpenCLGlobalMemorySize");
  if (mem < (4ull << 30) || mem > (1ull << 40)) mem = 0; /* damaged */
  append_name(d->gpu.name, sizeof d->gpu.name, o->name);
  if (model && !d->gpu.model[0])
    snprintf(d->gpu.model, sizeof d->gpu.model, "%s", model);
  if (mem > d->gpu.memory_bytes) d->gpu.memory_bytes = mem;
  if (d->index < 0 && (prefix(o->name, "cuda") || prefix(o->name, "nvml") ||
                       prefix(o->name, "rsmi")))
    d->index = atoi(o->name + 4);
}

static int is_gpu_pci(hwloc_obj_t p) {
  unsigned v = p->attr->pcidev.vendor_id, c = p->attr->pcidev.class_id;
  if (v != 0x10de && v != 0x1002) return 0;
  return c == 0x0300 || c == 0x0302 || c == 0x0380 || c == 0x1200;
}

static int collect_gpus(hwloc_topology_t t, devs_t *g) {
  hwloc_obj_t o = NULL, p;
  found_t *d;
  int rc;
  while ((o = hwloc_get_next_osdev(t, o))) {
    if (!is_gpu_osdev(o) || !(p = pci_parent(o))) continue;
    if ((rc = devs_add(g, p, &d))) return rc;
    gpu_absorb(d, o);
  }
  for (p = NULL; (p = hwloc_get_next_pcidev(t, p));) {
    if (!is_gpu_pci(p)) continue;
    int before = g->n;
    if ((rc = devs_add(g, p, &d))) return rc;
    if (g->n > before) snprintf(d->gpu.name, sizeof d->gpu.name, "pci");
  }
  return 0;
}

static int is_rdma_name(const char *n) {
  return prefix(n, "ib") || prefix(n, "hsi") || prefix(n, "hsn");
}

static int collect_nics(hwloc_topology_t t, devs_t *nics) {
  hwloc_obj_t o = NULL, p;
  found_t *d;
  int rc;
  while ((o = hwloc_get_next_osdev(t, o))) {
    hwloc_obj_osdev_type_t ty = o->attr->osdev.type;
    const char *sub = o->subtype;
    if (ty != HWLOC_OBJ_OSDEV_NETWORK && ty != HWLOC_OBJ_OSDEV_OPENFABRICS)
      continue;
    if (!(p = pci_parent(o)) || !o->name) continue; /* cannot be placed */
    if ((rc = devs_add(nics, p, &d))) return rc;
    if (ty == HWLOC_OBJ_OSDEV_OPENFABRICS) {
      snprintf(d->nic.name, sizeof d->nic.name, "%s", o->name);
      d->nic.rdma = 1;
    } else {
      snprintf(d->nic.netdev, sizeof d->nic.netdev, "%s", o->name);
      if (!d->nic.name[0])
        snprintf(d->nic.name, sizeof d->nic.name, "%s", o->name);
      if (is_rdma_name(o->name) || (sub && !strcmp(sub, "Slingshot")))
        d->nic.rdma = 1;
    }
  }
  return 0;
}

/* ---- placement: bus ids, NUMA and package, closeness -------------- */

static void busid(hwloc_obj_t p, char *out, size_t size) {
  snprintf(out, size, "%04x:%02x:%02x.%01x", p->attr->pcidev.domain,
           p->attr->pcidev.bus, p->attr->pcidev.dev, p->attr->pcidev.func);
}

static void locality(hwloc_topology_t t, hwloc_obj_t p, int *numa, int *pkg) {
  hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(t, p);
  hwloc_obj_t k = a;
  *numa = *pkg = -1;
  if (!a) return;
  if (a->nodeset && hwloc_bitmap_weight(a->nodeset) == 1)
    *numa = hwloc_bitmap_first(a->nodeset);
  while (k && k->type != HWLOC_OBJ_PACKAGE)
    k = k->parent;
  if (k) *pkg = (int)k->logical_index;
}

static int chain(hwloc_obj_t o, hwloc_obj_t *out) {
  int n = 0;
  for (; o && n < MAX_DEPTH; o = o->parent)
    out[n++] = o;
  return n;
}

/* What kind of place the first object shared by two PCI paths is. */
static strata_nearness_t classify(hwloc_obj_t shared) {
  if (shared->type == HWLOC_OBJ_BRIDGE)
    return shared->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST
               ? STRATA_NEAR_ROOT
               : STRATA_NEAR_SWITCH;
  if (shared->nodeset && hwloc_bitmap_weight(shared->nodeset) == 1)
    return STRATA_NEAR_NUMA;
  for (hwloc_obj_t o = shared; o; o = o->parent)
    if (o->type == HWLOC_OBJ_PACKAGE) return STRATA_NEAR_SOCKET;
  return STRATA_NEAR_MACHINE;
}

/* Walk the NIC's parents to the first object on the GPU's path; the
 * score orders candidates: kind of place, then hops from the GPU. */
static int nic_score(hwloc_obj_t *gpath, int glen, hwloc_obj_t nic,
                     strata_nearness_t *near) {
  for (hwloc_obj_t o = nic; o; o = o->parent)
    for (int i = 0; i < glen; i++)
      if (gpath[i] == o) {
        *near = classify(o);
        return (int)*near * 1000 + i;
      }
  *near = STRATA_NEAR_MACHINE;
  return (int)STRATA_NEAR_MACHINE * 1000 + 999;
}

/* The closest RDMA NIC (the one collectives use), an Ethernet one only if
 * the node has no RDMA NIC; among equally close ones the first. */
static void nearest_nic(found_t *gpu, const devs_t *nics) {
  hwloc_obj_t path[MAX_DEPTH];
  int glen = chain(gpu->pci, path), best = 1 << 30;
  gpu->gpu.nic = -1;
  gpu->gpu.nic_nearness = STRATA_NEAR_NONE;
  for (int i = 0; i < nics->n; i++) {
    strata_nearness_t near;
    int s = nic_score(path, glen, nics->v[i].pci, &near) +
            (nics->v[i].nic.rdma ? 0 : 1000000);
    if (s < best) {
      best = s;
      gpu->gpu.nic = i;
      gpu->gpu.nic_nearness = near;
    }
  }
}

static int cmp_busid(const void *a, const void *b) {
  const found_t *x = a, *y = b;
  const char *bx = x->gpu.pci_busid[0] ? x->gpu.pci_busid : x->nic.pci_busid;
  const char *by = y->gpu.pci_busid[0] ? y->gpu.pci_busid : y->nic.pci_busid;
  return strcmp(bx, by);
}

static int cmp_index(const void *a, const void *b) {
  const found_t *x = a, *y = b;
  return x->index != y->index ? (x->index < y->index ? -1 : 1)
                              : cmp_busid(a, b);
}

/* A figure hwloc read from the file, in GB/s, kept only when a real link
 * could have it (0 < x <= 10 TB/s); else 0, unknown, so the GPU table's
 * figure is used instead of a damaged one. */
static double link_gbytes(double x) {
  return x > 0 && x <= 10000 ? x : 0;
}

/* GPUs in the order the runtime numbers them (cuda/nvml/rsmi index) when
 * every GPU has one, else in PCI bus order; NICs in PCI bus order. */
static void place(hwloc_topology_t t, devs_t *g, devs_t *nics) {
  int all_indexed = 1;
  for (int i = 0; i < g->n; i++) {
    hwloc_obj_t p = g->v[i].pci;
    busid(p, g->v[i].gpu.pci_busid, sizeof g->v[i].gpu.pci_busid);
    g->v[i].gpu.vendor_id = p->attr->pcidev.vendor_id;
    g->v[i].gpu.device_id = p->attr->pcidev.device_id;
    g->v[i].gpu.pcie_bandwidth = link_gbytes(p->attr->pcidev.linkspeed) * 1e9;
    locality(t, p, &g->v[i].gpu.numa, &g->v[i].gpu.package);
    if (g->v[i].index < 0) all_indexed = 0;
  }
  for (int i = 0; i < nics->n; i++) {
    busid(nics->v[i].pci, nics->v[i].nic.pci_busid,
          sizeof nics->v[i].nic.pci_busid);
    locality(t, nics->v[i].pci, &nics->v[i].nic.numa, &nics->v[i].nic.package);
  }
  if (nics->n) qsort(nics->v, (size_t)nics->n, sizeof *nics->v, cmp_busid);
  if (g->n)
    qsort(g->v, (size_t)g->n, sizeof *g->v,
          all_indexed ? cmp_index : cmp_busid);
  for (int i = 0; i < g->n; i++)
    nearest_nic(&g->v[i], nics);
}

/* ---- links: NVLinkBandwidth / XGMIBandwidth ------------------------ */

static int find_gpu(const devs_t *g, hwloc_obj_t o) {
  hwloc_obj_t p = o->type == HWLOC_OBJ_OS_DEVICE ? pci_parent(o) : o;
  for (int i = 0; p && i < g->n; i++)
    if (g->v[i].pci == p) return i;
  return -1;
}

static int is_nvswitch(hwloc_obj_t o) {
  return o->type == HWLOC_OBJ_PCI_DEVICE && o->subtype &&
         !strcmp(o->subtype, "NVSwitch");
}

static int read_matrix(hwloc_topology_t t, struct hwloc_distances_s *d,
                       const devs_t *g, strata_node_topo_t *n) {
  unsigned k = d->nbobjs;
  int sw = 0;
  for (unsigned i = 0; i < k; i++)
    sw |= is_nvswitch(d->objs[i]);
  if (sw && hwloc_distances_transform(
                t, d, HWLOC_DISTANCES_TRANSFORM_TRANSITIVE_CLOSURE, NULL, 0))
    return strata_error(STRATA_EBADINPUT,
                        "%s: hwloc cannot connect the GPUs across NVSwitches",
                        n->source);
  n->has_switch |= sw;
  for (unsigned i = 0; i < d->nbobjs; i++) {
    int a = find_gpu(g, d->objs[i]);
    for (unsigned j = 0; a >= 0 && j < d->nbobjs; j++) {
      int b = find_gpu(g, d->objs[j]);
      double bw = link_gbytes((double)d->values[i * d->nbobjs + j] / 1e3) * 1e9;
      if (b >= 0 && b != a && bw > n->link[a * n->ngpus + b])
        n->link[a * n->ngpus + b] = bw;
    }
  }
  return 0;
}

static int read_links(hwloc_topology_t t, const devs_t *g,
                      strata_node_topo_t *n) {
  static const char *names[] = {"NVLinkBandwidth", "XGMIBandwidth"};
  static const char *kinds[] = {"NVLink", "XGMI"};
  int rc = 0;
  for (int m = 0; m < 2 && !n->link_kind[0]; m++) {
    struct hwloc_distances_s *d[8];
    unsigned nr = 8;
    if (hwloc_distances_get_by_name(t, names[m], &nr, d, 0) != 0) continue;
    if (nr > 8) nr = 8;
    for (unsigned i = 0; i < nr; i++) {
      if (!rc) rc = read_matrix(t, d[i], g, n);
      hwloc_distances_release(t, d[i]);
    }
    if (nr) snprintf(n->link_kind, sizeof n->link_kind, "%s", kinds[m]);
  }
  return rc;
}

/* ---- loading ------------------------------------------------------- */

static int no_gpus(hwloc_topology_t t, const char *source) {
  int pci = 0, net = 0;
  for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(t, o));)
    pci++;
  for (hwloc_obj_t o = NULL; (o = hwloc_get_next_osdev(t, o));)
    net += o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK;
  return strata_error(STRATA_EBADINPUT,
                      "no GPUs found in %s (hwloc sees %d PCI devices and %d "
                      "network devices); export the topology of a GPU node "
                      "with its I/O devices: lstopo --of xml node.xml",
                      source, pci, net);
}

static int extract(hwloc_topology_t t, const char *source,
                   strata_node_topo_t **out) {
  devs_t g = {0}, nics = {0};
  strata_node_topo_t *n = NULL;
  int rc;
  if ((rc = collect_gpus(t, &g)) || (rc = collect_nics(t, &nics))) goto out;
  if (g.n == 0) {
    rc = no_gpus(t, source);
    goto out;
  }
  place(t, &g, &nics);
  if ((rc = st__node_alloc(source, g.n, nics.n, &n))) goto out;
  for (int i = 0; i < g.n; i++)
    n->gpus[i] = g.v[i].gpu;
  for (int i = 0; i < nics.n; i++)
    n->nics[i] = nics.v[i].nic;
  if ((rc = read_links(t, &g, n))) goto out;
  st__node_finish(n);
  *out = n;
  n = NULL;
out:
  strata_node_destroy(n);
  strata_free(g.v);
  strata_free(nics.v);
  return rc;
}

static int open_topology(hwloc_topology_t *t) {
  pthread_once(&quiet_once, quiet_hwloc);
  if (hwloc_topology_init(t) != 0) {
    *t = NULL;
    return strata_error(STRATA_ENOMEM, "hwloc cannot create a topology");
  }
  hwloc_topology_set_io_types_filter(*t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  return 0;
}

/* The version attribute of <topology ...> ("2.0"), or 0 if none. */
static int xml_major(const char *xml, int *major) {
  const char *r = strstr(xml, "<topology");
  const char *end = r ? strchr(r, '>') : NULL;
  const char *v = r ? strstr(r, "version=\"") : NULL;
  *major = 0;
  if (!r || !end) return 0;
  if (v && v < end) *major = atoi(v + 9);
  return 1;
}

/* The value of attribute name="..." in the tag [o, o + n) into buf (cut
 * to size), or NULL if the tag has none. */
static const char *attr(const char *o, size_t n, const char *name, char *buf,
                        size_t size) {
  size_t k = strlen(name);
  for (size_t i = 1; i + k + 2 <= n; i++) {
    if (o[i - 1] != ' ' || strncmp(o + i, name, k) || o[i + k] != '=' ||
        o[i + k + 1] != '"')
      continue;
    const char *v = o + i + k + 2, *q = memchr(v, '"', n - (i + k + 2));
    size_t len = q ? (size_t)(q - v) : 0;
    if (len >= size) len = size - 1;
    memcpy(buf, v, len);
    buf[len] = 0;
    return buf;
  }
  return NULL;
}

/* 1 if the tag [o, o + n) ("<object", then the '>' at o + n) is a name
 * and name="value" attributes, each name once: hwloc's parser stops at
 * the first malformed attribute and would see a different object than
 * the checks below. */
static int tag_ok(const char *o, size_t n) {
  const char *p = o + 1, *end = o + n, *seen[16];
  int nseen = 0;
  while (p < end && (isalnum((unsigned char)*p) || *p == '_'))
    p++;
  for (;;) {
    const char *name = p, *q;
    while (p < end && isspace((unsigned char)*p))
      p++;
    if (p == end || (*p == '/' && p + 1 == end)) return 1;
    if (p == name) return 0; /* no space before an attribute */
    name = p;
    while (p < end && (isalnum((unsigned char)*p) || *p == '_' || *p == '-'))
      p++;
    if (p == name || end - p < 2 || p[0] != '=' || p[1] != '"') return 0;
    for (int i = 0; i < nseen; i++)
      if (!strncmp(seen[i], name, (size_t)(p - name) + 1)) return 0;
    if (nseen < 16) seen[nseen++] = name;
    q = memchr(p + 2, '"', (size_t)(end - p - 2));
    if (!q) return 0;
    p = q + 1;
  }
}

/* Why the sets of one <object> tag would crash hwloc 2.9, or NULL.
 * Found by fuzzing: a cpuset or nodeset without its complete_ twin
 * (NULL dereference), a malformed set, and a root whose cpuset is empty,
 * outside its complete_cpuset or disjoint from its allowed_cpuset
 * ("Topology became empty", then a crash).
 * lstopo never writes any of these. */
static int set_syntax_ok(const char *v, size_t n);

static const char *bad_sets(const char *o, size_t n, int root) {
  static const char *const names[] = {"cpuset",         "complete_cpuset",
                                      "nodeset",        "complete_nodeset",
                                      "allowed_cpuset", "allowed_nodeset"};
  char v[6][512];
  int has[6];
  if (!tag_ok(o, n)) return "a malformed or repeated attribute";
  for (int i = 0; i < 6; i++) {
    has[i] = attr(o, n, names[i], v[i], sizeof v[i]) != NULL;
    if (has[i] &&
        (!v[i][0] || strspn(v[i], "0123456789abcdefABCDEFx,") != strlen(v[i])))
      return "a malformed cpuset or nodeset";
  }
  if (has[0] != has[1] || has[2] != has[3])
    return "a cpuset or nodeset without its complete_cpuset or "
           "complete_nodeset";
  /* hwloc 2.9 asserts (hwloc_look_xml, !gotignored) on a root whose type
   * its filters ignore, a Bridge, say (found by fuzz_hwloc); lstopo writes
   * the root as a Machine (hwloc 1.x also as a System) */
  char type[16];
  if (root && (!attr(o, n, "type", type, sizeof type) ||
               (strcmp(type, "Machine") && strcmp(type, "System"))))
    return "the root's place and a type other than Machine, the one "
           "lstopo writes there";
  if (!root || !has[0]) return NULL;
  /* hwloc_bitmap_sscanf asserts on some syntax it does not write (a first
   * word empty, found by fuzzing): check_set_syntax refuses that */
  for (int i = 0; i < 5; i++)
    if ((i < 2 || i == 4) && has[i] && !set_syntax_ok(v[i], strlen(v[i])))
      return NULL;
  hwloc_bitmap_t a = hwloc_bitmap_alloc(), b = hwloc_bitmap_alloc();
  int ok = a && b && hwloc_bitmap_sscanf(a, v[0]) == 0 &&
           hwloc_bitmap_sscanf(b, v[1]) == 0 && !hwloc_bitmap_iszero(a) &&
           hwloc_bitmap_isincluded(a, b);
  if (ok && has[4]) /* the topology is restricted to the allowed CPUs */
    ok = hwloc_bitmap_sscanf(b, v[4]) == 0 && hwloc_bitmap_intersects(a, b);
  hwloc_bitmap_free(a);
  hwloc_bitmap_free(b);
  return ok ? NULL
            : "a root cpuset that is empty, outside its "
              "complete_cpuset or with no allowed CPU";
}

static int hex_word(const char *v, size_t n) {
  if (n < 3 || n > 18 || v[0] != '0' || v[1] != 'x') return 0;
  for (size_t i = 2; i < n; i++)
    if (!isxdigit((unsigned char)v[i])) return 0;
  return 1;
}

/* 1 if [v, v + n) is a bitmap as hwloc writes one: "0x00000003",
 * "0x00000001,,0x0" (an empty word is zero), "0xf...f" or
 * "0xf...f,,0x00000001".  hwloc 2.9 counts the words from the second
 * character and asserts when a first word is empty (",0x00000001": found
 * by fuzzing). */
static int set_syntax_ok(const char *v, size_t n) {
  size_t i = 0;
  int first = 1;
  if (n >= 7 && !strncmp(v, "0xf...f", 7)) {
    if (n == 7) return 1;
    if (v[7] != ',') return 0;
    i = 8;
    first = 0;
  }
  for (size_t k = i;; k++) {
    if (k < n && v[k] != ',') continue;
    if (k == i ? first : !hex_word(v + i, k - i)) return 0;
    if (k == n) return 1;
    first = 0;
    i = k + 1;
  }
}

/* Every cpuset and nodeset of the file (objects, cpu kinds, memory
 * attributes), each in hwloc's own syntax. */
static int check_set_syntax(const char *path, const char *xml) {
  static const char *const keys[] = {"cpuset=\"", "nodeset=\""};
  for (int j = 0; j < 2; j++)
    for (const char *a = strstr(xml, keys[j]); a; a = strstr(a + 1, keys[j])) {
      const char *v = a + strlen(keys[j]), *q = strchr(v, '"');
      int line = 1;
      if (q && set_syntax_ok(v, (size_t)(q - v))) continue;
      for (const char *c = xml; c < a; c++)
        line += *c == '\n';
      return strata_error(STRATA_EBADINPUT,
                          "%s:%d: a malformed cpuset or nodeset (damaged "
                          "XML); export it again with lstopo --of xml",
                          path, line);
    }
  return 0;
}

/* hwloc 2.9 crashes on some damaged XML (bad_sets): refuse it first. */
static int check_sets(const char *path, const char *xml) {
  int root = 1;
  for (const char *o = strstr(xml, "<object"); o;
       o = strstr(o + 1, "<object")) {
    const char *end = strchr(o, '>'), *why;
    int line = 1;
    if (!end) return 0;
    why = bad_sets(o, (size_t)(end - o), root);
    root = 0;
    if (!why) continue;
    for (const char *c = xml; c < o; c++)
      line += *c == '\n';
    return strata_error(STRATA_EBADINPUT,
                        "%s:%d: an <object> has %s (damaged XML); export it "
                        "again with lstopo --of xml",
                        path, line, why);
  }
  return 0;
}

/* hwloc 2.9 allocates nbobjs^2 values for a distances matrix from the
 * attribute as written (a negative one wraps to 32 GB, found by
 * fuzzing); a real matrix relates objects of the file, so its size is at
 * most their number. */
static int check_distances(const char *path, const char *xml) {
  long objects = 0;
  for (const char *o = strstr(xml, "<object"); o; o = strstr(o + 1, "<object"))
    objects++;
  for (const char *d = strstr(xml, "<distances2"); d;
       d = strstr(d + 1, "<distances2")) {
    const char *end = strchr(d, '>');
    char v[32];
    int line = 1;
    if (!end) return 0;
    if (!attr(d, (size_t)(end - d), "nbobjs", v, sizeof v) ||
        (v[0] && strspn(v, "0123456789") == strlen(v) && strlen(v) < 9 &&
         atol(v) >= 1 && atol(v) <= objects && atol(v) <= 4096))
      continue;
    for (const char *c = xml; c < d; c++)
      line += *c == '\n';
    return strata_error(STRATA_EBADINPUT,
                        "%s:%d: a distances matrix has nbobjs=\"%s\", not a "
                        "count of the file's objects (damaged XML); export "
                        "it again with lstopo --of xml",
                        path, line, v);
  }
  return 0;
}

/* A control character XML 1.0 does not allow (its Char production: tab,
 * line feed and carriage return alone below U+0020): hwloc 2.9's own
 * parser takes one inside a tag as part of an attribute and crashes on the
 * root object it then builds (a form feed between two of its sets, found
 * by fuzz_hwloc). */
static int check_chars(const char *path, const char *xml, size_t len) {
  int line = 1;
  /* every byte hwloc is given, a NUL too: the checks above read up to the
   * first */
  for (const unsigned char *c = (const unsigned char *)xml;
       c < (const unsigned char *)xml + len; c++) {
    line += *c == '\n';
    if (*c >= 0x20 || *c == '\t' || *c == '\n' || *c == '\r') continue;
    return strata_error(STRATA_EBADINPUT,
                        "%s:%d: a control character (U+%04X) that XML does "
                        "not allow (damaged XML); export it again with lstopo "
                        "--of xml",
                        path, line, *c);
  }
  return 0;
}

/* Say why hwloc cannot or would not read this text. */
static int check_xml(const char *path, const char *xml, size_t len) {
  const char *s = xml;
  int major, rc;
  while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
    s++;
  if (*s != '<')
    return strata_error(STRATA_EBADINPUT,
                        "%s: not an XML file (an hwloc topology starts with "
                        "'<?xml' and has a <topology> element)",
                        path);
  if (!xml_major(xml, &major))
    return strata_error(STRATA_EBADINPUT,
                        "%s: no <topology> element: not an hwloc XML export",
                        path);
  if (major >= 3 || strstr(xml, "hwloc3.dtd"))
    return strata_error(STRATA_EVERSION,
                        "%s: written by hwloc %d.x, which hwloc %s cannot "
                        "read; export it again with hwloc 3's lstopo: "
                        "lstopo --of v2xml node.xml",
                        path, major ? major : 3, HWLOC_VERSION);
  if (!strstr(xml, "</topology>"))
    return strata_error(STRATA_EBADINPUT,
                        "%s: truncated hwloc XML (no closing </topology>); "
                        "copy or export the file again",
                        path);
  if ((rc = check_sets(path, xml)) || (rc = check_set_syntax(path, xml)) ||
      (rc = check_distances(path, xml)))
    return rc;
  return check_chars(path, xml, len);
}

int strata_node_load_xml(const char *path, strata_node_topo_t **out) {
  hwloc_topology_t t = NULL;
  char *xml = NULL;
  size_t len = 0;
  int rc;
  *out = NULL;
  if ((rc = strata_file_read(path, XML_MAX, &xml, &len))) goto out;
  if ((rc = check_xml(path, xml, len)) || (rc = open_topology(&t))) goto out;
  if (len > (size_t)INT32_MAX - 1 ||
      hwloc_topology_set_xmlbuffer(t, xml, (int)len + 1) != 0 ||
      hwloc_topology_load(t) != 0) {
    rc = strata_error(STRATA_EBADINPUT,
                      "%s: hwloc %s cannot parse this XML topology (damaged "
                      "or not written by lstopo); export it again with "
                      "lstopo --of xml",
                      path, HWLOC_VERSION);
    goto out;
  }
  rc = extract(t, path, out);
out:
  if (t) hwloc_topology_destroy(t);
  strata_free(xml);
  return rc;
}

/* This machine's topology, loaded (*t is set, to destroy, even on error). */
static int load_local(hwloc_topology_t *t) {
  int rc;
  if ((rc = open_topology(t))) return rc;
  /* The libpciaccess component leaks on every load (LSan sees it); the
   * Linux component finds the same PCI devices in sysfs. */
  hwloc_topology_set_components(*t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
                                "pci");
  if (hwloc_topology_load(*t) != 0)
    return strata_error(STRATA_EIO,
                        "hwloc cannot read this machine's topology");
  return 0;
}

int strata_node_load_local(strata_node_topo_t **out) {
  hwloc_topology_t t = NULL;
  int rc;
  *out = NULL;
  if (!(rc = load_local(&t))) rc = extract(t, "the local machine", out);
  if (t) hwloc_topology_destroy(t);
  return rc;
}

/* This machine's topology as hwloc XML (what `lstopo --of xml` writes),
 * for `strata topo collect` without files: refused, like the reader
 * above, when hwloc sees no GPU in it. */
int strata_node_export_local(char **xml, size_t *len) {
  hwloc_topology_t t = NULL;
  strata_node_topo_t *n = NULL;
  char *buf = NULL;
  int rc, blen = 0;
  *xml = NULL;
  *len = 0;
  if ((rc = load_local(&t)) || (rc = extract(t, "the local machine", &n)))
    goto out;
  if (hwloc_topology_export_xmlbuffer(t, &buf, &blen, 0) != 0 || blen < 1) {
    rc = strata_error(STRATA_EIO, "hwloc cannot export this machine's "
                                  "topology as XML");
    goto out;
  }
  if (!(*xml = strata_strndup(buf, (size_t)blen - 1))) {
    rc = strata_error(STRATA_ENOMEM, "out of memory");
    goto out;
  }
  *len = (size_t)blen - 1;
out:
  if (buf) hwloc_free_xmlbuffer(t, buf);
  strata_node_destroy(n);
  if (t) hwloc_topology_destroy(t);
  return rc;
}
