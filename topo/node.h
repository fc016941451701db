/*
 * node.h - the inside of strata_node_topo_t, shared by the hwloc reader
 * (hwloc_node.c, the only file that includes hwloc.h) and the code that
 * finishes and queries a node (node.c) or builds a cluster from it.
 *
 * Everything here is plain data copied out of hwloc, so a node outlives
 * the hwloc topology it was read from.
 */
#ifndef STRATA_TOPO_NODE_H
#define STRATA_TOPO_NODE_H

#include "strata/core.h"
#include "strata/topo.h"

struct strata_node_topo {
  char *source; /* the XML path, or "the local machine" */
  int ngpus;
  int nnics;
  strata_gpu_info_t *gpus;
  strata_nic_info_t *nics;
  double *link;      /* ngpus x ngpus, bytes/s one direction; 0: none */
  char link_kind[8]; /* "NVLink", "XGMI" or "" */
  int has_switch;    /* links go through NVSwitches */
};

/* An empty node for `source` with room for the given counts (zeroed). */
int st__node_alloc(const char *source, int ngpus, int nnics,
                   strata_node_topo_t **out);
/* After the reader filled GPUs, NICs and links: match GPU models, fill
 * memory from the table where hwloc said nothing, derive NVLink domains
 * and each GPU's total link bandwidth. */
void st__node_finish(strata_node_topo_t *n);
/* Size of the smallest NVLink domain (1 when there are no links). */
int st__node_domain_size(const strata_node_topo_t *n);
/* Bandwidth per GPU inside a domain, bytes/s (0 without links): through
 * switches the pair value, over direct links the sum over peers, capped by
 * the GPU model's published total. */
double st__node_domain_bandwidth(const strata_node_topo_t *n);
/* The slowest PCIe link of a GPU, bytes/s (0 if hwloc did not say). */
double st__node_pcie_bandwidth(const strata_node_topo_t *n);

/* The table model of a GPU known only by its PCI ids; NULL if unknown. */
const strata_gpu_model_t *st__gpu_model_by_pci(unsigned vendor,
                                               unsigned device);
/* Append the known model names ("A100-40GB, A100-80GB, ...") to b. */
int st__gpu_model_list(strata_buf_t *b);

#endif
