/*
 * gpu_models.c - the GPU table: memory, peak bf16 FLOP/s and link
 * bandwidths of the accelerators Strata knows, and the rules that map the
 * names and PCI ids drivers report onto it.
 *
 * Figures are the vendors' published ones (docs/cluster-format.md lists
 * the datasheets).  Memory is the advertised size taken as GiB, which is
 * within 2% of what nvidia-smi / rocm-smi report as usable.  Bandwidths
 * are one direction, all links together: the vendors quote both
 * directions (900 GB/s for H100 NVLink), so the table holds half.
 * MI250X is listed per GCD, the device a framework sees.
 */
#include <ctype.h>
#include <string.h>

#include "topo/node.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static const strata_gpu_model_t models[] = {
    /* name, vendor, memory, bf16 dense, NVLink/IF per dir, PCIe per dir,
     * host link per dir (0: PCIe), the host DRAM's bandwidth and size a
     * GPU (docs/cluster-format.md: the reference systems' CPUs and
     * memory over their GPUs) */
    {"A100-40GB", "NVIDIA", (uint64_t)(40 * GIB), 312e12, 300e9, 32e9, 0,
     51.2e9, 128 * GIB},
    {"A100-80GB", "NVIDIA", (uint64_t)(80 * GIB), 312e12, 300e9, 32e9, 0,
     51.2e9, 256 * GIB},
    {"H100-SXM", "NVIDIA", (uint64_t)(80 * GIB), 989.4e12, 450e9, 64e9, 0,
     76.8e9, 256 * GIB},
    {"H100-PCIe", "NVIDIA", (uint64_t)(80 * GIB), 756e12, 0.0, 64e9, 0, 0, 0},
    {"H200", "NVIDIA", (uint64_t)(141 * GIB), 989.4e12, 450e9, 64e9, 0, 76.8e9,
     256 * GIB},
    {"H800", "NVIDIA", (uint64_t)(80 * GIB), 989.4e12, 200e9, 64e9, 0, 0, 0},
    {"H20", "NVIDIA", (uint64_t)(96 * GIB), 148e12, 450e9, 64e9, 0, 0, 0},
    {"A800-80GB", "NVIDIA", (uint64_t)(80 * GIB), 312e12, 200e9, 32e9, 0, 0, 0},
    {"B200", "NVIDIA", (uint64_t)(180 * GIB), 2.25e15, 900e9, 64e9, 0, 89.6e9,
     256 * GIB},
    /* GB200: NVLink-C2C, 900 GB/s both ways between the Grace CPU and
     * its two Blackwell GPUs (NVIDIA GB200 NVL72 datasheet): 225 GB/s one
     * way for each GPU, the two sharing it, and the Grace's LPDDR5X */
    {"GB200", "NVIDIA", (uint64_t)(186 * GIB), 2.5e15, 900e9, 64e9, 225e9,
     250e9, 240 * GIB},
    /* Blackwell Ultra.  B300 as DGX B300 carries it (HGX B300: 2.25 PF
     * dense bf16 a GPU, 2.1 TB of HBM3e for 8, 270 GB each as the driver
     * reports it; PCIe Gen6 to the host, and the DGX B300's two Xeon
     * 6776P, 8 channels of DDR5-6400 each, 409.6 GB/s a socket, 2 TB);
     * GB300 as the GB300 NVL72 rack (180 PF dense bf16 and 20 TB of HBM3e
     * per 72 GPUs, 279 GB each as the driver reports it; NVLink-C2C and
     * the Grace's LPDDR5X as the GB200's) */
    {"B300", "NVIDIA", (uint64_t)(251 * GIB), 2.25e15, 900e9, 128e9, 0, 102.4e9,
     256 * GIB},
    {"GB300", "NVIDIA", (uint64_t)(260 * GIB), 2.5e15, 900e9, 128e9, 225e9,
     250e9, 240 * GIB},
    {"V100", "NVIDIA", (uint64_t)(32 * GIB), 125e12, 150e9, 16e9, 0, 0, 0},
    {"P100", "NVIDIA", (uint64_t)(16 * GIB), 21.2e12, 80e9, 16e9, 0, 0, 0},
    {"MI250X", "AMD", (uint64_t)(64 * GIB), 191.5e12, 200e9, 32e9, 0, 0, 0},
    {"MI300A", "AMD", (uint64_t)(128 * GIB), 980.6e12, 256e9, 64e9, 0, 0, 0},
    {"MI300X", "AMD", (uint64_t)(192 * GIB), 1307.4e12, 448e9, 64e9, 0, 0, 0},
    {"MI325X", "AMD", (uint64_t)(256 * GIB), 1307.4e12, 448e9, 64e9, 0, 0, 0},
    /* Ascend NPUs (docs/cluster-format.md gives the sources and which
     * figures are approximate).  910B as the Atlas 800T A2 carries it:
     * 64 GB HBM2e, 24 cube cores of 16 x 16 x 16 MACs at 1.8 GHz (CANN's
     * Ascend910B2 platform file), HCCS to the 7 other NPUs of its board,
     * 392 GB/s both ways.  910C is listed per die, the device CANN and
     * torch_npu show (two per package, each a 910B-class die): half the
     * package's 752 TFLOP/s and 128 GB, and half its 392 GB/s one way on
     * the unified bus (CloudMatrix384, arXiv:2506.12708). */
    {"Ascend-910B", "Huawei", (uint64_t)(64 * GIB), 353.9e12, 196e9, 64e9, 0, 0,
     0},
    {"Ascend-910C", "Huawei", (uint64_t)(64 * GIB), 376e12, 196e9, 64e9, 0, 0,
     0},
};
#define N_MODELS ((int)(sizeof models / sizeof models[0]))

/* Reported names: every needle must occur (case-insensitive); first rule
 * that matches wins, so the specific ones come first. */
static const struct {
  const char *needle[2];
  const char *model;
} name_rules[] = {
    {{"H100", "PCIE"}, "H100-PCIe"}, {{"H100", "NVL"}, "H100-PCIe"},
    {{"H100", NULL}, "H100-SXM"},    {{"H200", NULL}, "H200"},
    {{"H800", NULL}, "H800"},        {{"H20", NULL}, "H20"},
    {{"GB300", NULL}, "GB300"},      {{"B300", NULL}, "B300"},
    {{"GB200", NULL}, "GB200"},      {{"B200", NULL}, "B200"},
    {{"A100", "80GB"}, "A100-80GB"}, {{"A100", NULL}, "A100-40GB"},
    {{"A800", NULL}, "A800-80GB"},   {{"V100", NULL}, "V100"},
    {{"P100", NULL}, "P100"},        {{"MI300X", NULL}, "MI300X"},
    {{"MI325X", NULL}, "MI325X"},    {{"MI300A", NULL}, "MI300A"},
    {{"MI250", NULL}, "MI250X"},     {{"MI200", NULL}, "MI250X"},
    {{"910C", NULL}, "Ascend-910C"}, {{"910B", NULL}, "Ascend-910B"},
};

/* PCI ids, for GPUs hwloc sees only as PCI devices (pci.ids). */
static const struct {
  unsigned vendor, device;
  const char *model;
} pci_rules[] = {
    {0x10de, 0x20b0, "A100-40GB"}, {0x10de, 0x20b1, "A100-40GB"},
    {0x10de, 0x20f1, "A100-40GB"}, {0x10de, 0x20b2, "A100-80GB"},
    {0x10de, 0x20b5, "A100-80GB"}, {0x10de, 0x2330, "H100-SXM"},
    {0x10de, 0x2331, "H100-PCIe"}, {0x10de, 0x2335, "H200"},
    {0x10de, 0x2324, "H800"},      {0x10de, 0x2329, "H20"},
    {0x10de, 0x2901, "B200"},      {0x10de, 0x2941, "GB200"},
    {0x10de, 0x1db1, "V100"},      {0x10de, 0x1db4, "V100"},
    {0x10de, 0x1db5, "V100"},      {0x10de, 0x1db8, "V100"},
    {0x10de, 0x15f8, "P100"},      {0x10de, 0x15f9, "P100"},
    {0x1002, 0x7408, "MI250X"},    {0x1002, 0x740c, "MI250X"},
    {0x1002, 0x74a0, "MI300A"},    {0x1002, 0x74a1, "MI300X"},
};

/* Power and price, by table name (docs/cost-model.md cites each): the
 * datasheet's TDP a board (MI250X per GCD: half the OAM's 560 W), and an
 * on-demand price of one GPU-hour from a published price list; 0 where
 * none was found (the plan asks for --gpu-price instead of guessing). */
static const struct {
  const char *model;
  double tdp_watts, usd_per_hour;
} power_price[] = {
    {"A100-40GB", 400, 0}, {"A100-80GB", 400, 1.30}, {"H100-SXM", 700, 2.49},
    {"H100-PCIe", 350, 0}, {"H200", 700, 2.25},      {"B200", 1000, 3.75},
    {"V100", 300, 0},      {"P100", 300, 0},         {"MI250X", 280, 0},
    {"MI300A", 550, 0},    {"MI300X", 750, 0},       {"MI325X", 1000, 0},
};

void strata_gpu_model_power_price(const strata_gpu_model_t *m,
                                  double *tdp_watts, double *usd_per_hour) {
  if (tdp_watts) *tdp_watts = 0;
  if (usd_per_hour) *usd_per_hour = 0;
  for (size_t i = 0; m && i < sizeof power_price / sizeof power_price[0]; i++)
    if (!strcmp(power_price[i].model, m->name)) {
      if (tdp_watts) *tdp_watts = power_price[i].tdp_watts;
      if (usd_per_hour) *usd_per_hour = power_price[i].usd_per_hour;
    }
}

int strata_gpu_model_count(void) {
  return N_MODELS;
}

const strata_gpu_model_t *strata_gpu_model_at(int i) {
  return i >= 0 && i < N_MODELS ? &models[i] : NULL;
}

static int same_ci(const char *a, const char *b) {
  for (; *a && *b; a++, b++)
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
  return *a == *b;
}

static int contains_ci(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (; *hay; hay++) {
    size_t i = 0;
    while (i < n && hay[i] &&
           toupper((unsigned char)hay[i]) == toupper((unsigned char)needle[i]))
      i++;
    if (i == n) return 1;
  }
  return 0;
}

const char *strata_gpu_model_kind(const strata_gpu_model_t *m) {
  return m && m->vendor && !strcmp(m->vendor, "Huawei") ? "NPU" : "GPU";
}

const strata_gpu_model_t *strata_gpu_model_find(const char *name) {
  for (int i = 0; name && i < N_MODELS; i++)
    if (same_ci(models[i].name, name)) return &models[i];
  return NULL;
}

const strata_gpu_model_t *strata_gpu_model_match(const char *reported) {
  const strata_gpu_model_t *m = strata_gpu_model_find(reported);
  if (m || !reported) return m;
  for (size_t i = 0; i < sizeof name_rules / sizeof name_rules[0]; i++) {
    const char *const *nd = name_rules[i].needle;
    if (contains_ci(reported, nd[0]) &&
        (!nd[1] || contains_ci(reported, nd[1])))
      return strata_gpu_model_find(name_rules[i].model);
  }
  return NULL;
}

const strata_gpu_model_t *st__gpu_model_by_pci(unsigned vendor,
                                               unsigned device) {
  for (size_t i = 0; i < sizeof pci_rules / sizeof pci_rules[0]; i++)
    if (pci_rules[i].vendor == vendor && pci_rules[i].device == device)
      return strata_gpu_model_find(pci_rules[i].model);
  return NULL;
}

int st__gpu_model_list(strata_buf_t *b) {
  for (int i = 0; i < N_MODELS; i++)
    strata_buf_printf(b, "%s%s", i ? ", " : "", models[i].name);
  return b->oom ? STRATA_ENOMEM : 0;
}
