/*
 * test_topo.c - topo/: what each real hwloc export in shared/topologies
 * yields (GPUs, NVLink/XGMI, NICs, nearest NIC), the GPU table, node
 * ranges, presets, cluster specs with unhealthy nodes, collective costs
 * against hand-computed alpha-beta values (flat and hierarchical), stage
 * meshes, every bad input with its message, and allocation failures.
 *
 * Nothing here depends on the machine it runs on: the local topology is
 * only required to load or fail cleanly.
 */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "strata/strata.h"
#include "testlib.h"
#include "topo/cluster.h"

#define GIB 1073741824.0

static const char *topo_file(const char *name) {
  static char path[1024];
  snprintf(path, sizeof path, "%s/topologies/%s", test_shared_dir(), name);
  return path;
}

static const char *data_file(const char *name) {
  static char path[1024];
  snprintf(path, sizeof path, "%s/tests/data/topo/%s", test_source_dir(), name);
  return path;
}

static strata_node_topo_t *load(const char *name) {
  strata_node_topo_t *n = NULL;
  ASSERT_OK(strata_node_load_xml(topo_file(name), &n));
  return n;
}

static const char *nic_of(const strata_node_topo_t *n, int gpu) {
  const strata_nic_info_t *nic =
      strata_node_nic(n, strata_node_gpu(n, gpu)->nic);
  return nic ? nic->name : "-";
}

/* ---- the shared topologies ----------------------------------------- */

TEST(h100_nvlink_and_nics) {
  strata_node_topo_t *n = load("flux-core_ipa20_4xH100_NVLink.xml");
  ASSERT_EQ(strata_node_gpu_count(n), 4);
  ASSERT_STR_EQ(strata_node_link_kind(n), "NVLink");
  ASSERT_EQ(strata_node_has_switch(n), 0);
  for (int a = 0; a < 4; a++) {
    const strata_gpu_info_t *g = strata_node_gpu(n, a);
    ASSERT_STR_EQ(g->table->name, "H100-SXM");
    ASSERT_STR_EQ(g->model, "NVIDIA H100 80GB HBM3");
    ASSERT_EQ(g->memory_bytes, 83026944ull * 1024); /* CUDAGlobalMemorySize */
    ASSERT_NEAR(g->pcie_bandwidth, 63.015385e9, 1e-6, 0);
    ASSERT_NEAR(g->nvlink_bandwidth, 450e9, 1e-12, 0); /* 3 peers x 150 */
    for (int b = 0; b < 4; b++)
      ASSERT_NEAR(strata_node_link(n, a, b), a == b ? 0 : 150e9, 1e-12, 0);
  }
  /* cuda/nvml/opencl devices of one GPU are one GPU. */
  ASSERT_CONTAINS(strata_node_gpu(n, 0)->name, "cuda0");
  ASSERT_CONTAINS(strata_node_gpu(n, 0)->name, "nvml0");
  ASSERT_EQ(strata_node_nic_count(n), 6);
  ASSERT_STR_EQ(nic_of(n, 0), "mlx5_0");
  ASSERT_EQ(strata_node_gpu(n, 0)->nic_nearness, STRATA_NEAR_SWITCH);
  ASSERT_STR_EQ(nic_of(n, 1), "mlx5_2");
  ASSERT_EQ(strata_node_gpu(n, 1)->nic_nearness, STRATA_NEAR_SWITCH);
  /* GPU 2 has no NIC on its switch: the closest RDMA NIC is on its socket. */
  ASSERT_STR_EQ(nic_of(n, 2), "mlx5_3");
  ASSERT_EQ(strata_node_gpu(n, 2)->nic_nearness, STRATA_NEAR_SOCKET);
  ASSERT_STR_EQ(nic_of(n, 3), "mlx5_3");
  ASSERT_EQ(strata_node_gpu(n, 3)->nic_nearness, STRATA_NEAR_SWITCH);
  ASSERT_EQ(strata_node_gpu(n, 0)->package, 0);
  ASSERT_EQ(strata_node_gpu(n, 3)->package, 1);
  strata_node_destroy(n);
}

TEST(dgx2_nvswitch_closure) {
  strata_node_topo_t *n = load("hwloc_nvidiaDGX2_16xV100_NVSwitch.xml");
  ASSERT_EQ(strata_node_gpu_count(n), 16);
  ASSERT_STR_EQ(strata_node_link_kind(n), "NVLink");
  ASSERT_EQ(strata_node_has_switch(n), 1);
  /* Each GPU has 6 x 25 GB/s to the switches: 150 GB/s to any peer. */
  ASSERT_NEAR(strata_node_link(n, 0, 1), 150e9, 1e-12, 0);
  ASSERT_NEAR(strata_node_link(n, 0, 15), 150e9, 1e-12, 0);
  ASSERT_NEAR(strata_node_link(n, 9, 4), 150e9, 1e-12, 0);
  ASSERT_NEAR(strata_node_gpu(n, 3)->nvlink_bandwidth, 150e9, 1e-12, 0);
  ASSERT_STR_EQ(strata_node_gpu(n, 0)->table->name, "V100");
  ASSERT_EQ(strata_node_nic_count(n), 0);
  ASSERT_EQ(strata_node_gpu(n, 0)->nic, -1);
  ASSERT_EQ(strata_node_gpu(n, 0)->nic_nearness, STRATA_NEAR_NONE);
  strata_node_destroy(n);
}

TEST(p100_nvlink_pairs) {
  strata_node_topo_t *n = load("hwloc_power8gpudistances_4xP100_NVLink.xml");
  ASSERT_EQ(strata_node_gpu_count(n), 4);
  ASSERT_STR_EQ(strata_node_link_kind(n), "NVLink");
  ASSERT_EQ(strata_node_has_switch(n), 0); /* no closure: CPUs are no switch */
  ASSERT_NEAR(strata_node_link(n, 0, 1), 40e9, 1e-12, 0);
  ASSERT_NEAR(strata_node_link(n, 2, 3), 40e9, 1e-12, 0);
  ASSERT_EQ(strata_node_link(n, 0, 2), 0);
  ASSERT_EQ(strata_node_link(n, 1, 3), 0);
  ASSERT_EQ(strata_node_gpu(n, 0)->domain, strata_node_gpu(n, 1)->domain);
  ASSERT(strata_node_gpu(n, 0)->domain != strata_node_gpu(n, 2)->domain);
  ASSERT_STR_EQ(strata_node_gpu(n, 0)->table->name, "P100");
  ASSERT_EQ(strata_node_gpu(n, 0)->memory_bytes, 16671616ull * 1024);
  ASSERT_EQ(strata_node_nic_count(n), 0);
  strata_node_destroy(n);
}

TEST(mi300a_xgmi) {
  strata_node_topo_t *n = load("flux-core_tuo.SPX_4xMI300A_XGMI.xml");
  ASSERT_EQ(strata_node_gpu_count(n), 4);
  ASSERT_STR_EQ(strata_node_link_kind(n), "XGMI");
  ASSERT_NEAR(strata_node_link(n, 0, 3), 100e9, 1e-12, 0);
  ASSERT_STR_EQ(strata_node_gpu(n, 0)->table->name, "MI300A");
  /* hwloc reports no VRAM size for the APU: the table's 128 GiB. */
  ASSERT_EQ(strata_node_gpu(n, 0)->memory_bytes, (uint64_t)(128 * GIB));
  ASSERT_EQ(strata_node_nic_count(n), 5);
  for (int i = 0; i < 4; i++) {
    char want[8];
    snprintf(want, sizeof want, "hsi%d", i);
    ASSERT_STR_EQ(nic_of(n, i), want);
    ASSERT_EQ(strata_node_gpu(n, i)->nic_nearness, STRATA_NEAR_ROOT);
    ASSERT_EQ(strata_node_gpu(n, i)->package, i);
  }
  strata_node_destroy(n);
}

TEST(mi250x_xgmi) {
  strata_node_topo_t *n = load("mpibind_eas-tioga_8xMI250X-GCD_XGMI.xml");
  ASSERT_EQ(strata_node_gpu_count(n), 8);
  ASSERT_STR_EQ(strata_node_link_kind(n), "XGMI");
  ASSERT_NEAR(strata_node_link(n, 0, 7), 100e9, 1e-12, 0);
  ASSERT_STR_EQ(strata_node_gpu(n, 0)->table->name, "MI250X");
  ASSERT_EQ(strata_node_gpu(n, 0)->memory_bytes, 67092480ull * 1024);
  ASSERT_STR_EQ(strata_node_gpu(n, 0)->name, "rsmi0"); /* runtime order */
  ASSERT_EQ(strata_node_nic_count(n), 5);
  /* Two GCDs per Slingshot NIC; the Ethernet ens2 is never chosen. */
  ASSERT_STR_EQ(nic_of(n, 0), "hsi0");
  ASSERT_STR_EQ(nic_of(n, 1), "hsi0");
  ASSERT_STR_EQ(nic_of(n, 4), "hsi2");
  ASSERT_STR_EQ(nic_of(n, 7), "hsi3");
  ASSERT_EQ(strata_node_gpu(n, 0)->nic_nearness, STRATA_NEAR_NUMA);
  strata_node_destroy(n);
}

TEST(a100_pci_only) {
  strata_node_topo_t *n = load("psmgmt_jrc0323_4xA100-PCIonly_4xmlx5.xml");
  ASSERT_EQ(strata_node_gpu_count(n), 4);
  ASSERT_STR_EQ(strata_node_link_kind(n), "");
  for (int i = 0; i < 4; i++) {
    const strata_gpu_info_t *g = strata_node_gpu(n, i);
    char want[8];
    ASSERT_STR_EQ(g->name, "pci");
    ASSERT_EQ(g->vendor_id, 0x10de);
    ASSERT_EQ(g->device_id, 0x20b0);
    ASSERT_STR_EQ(g->table->name, "A100-40GB");
    ASSERT_EQ(g->memory_bytes, (uint64_t)(40 * GIB));
    ASSERT_EQ(g->nvlink_bandwidth, 0);
    ASSERT_NEAR(g->pcie_bandwidth, 31.507692e9, 1e-6, 0);
    snprintf(want, sizeof want, "mlx5_%d", i);
    ASSERT_STR_EQ(nic_of(n, i), want);
    ASSERT_EQ(g->nic_nearness, STRATA_NEAR_SWITCH);
  }
  ASSERT_STR_EQ(strata_node_gpu(n, 0)->pci_busid, "0000:03:00.0");
  ASSERT_EQ(strata_node_nic_count(n), 6);
  strata_node_destroy(n);
}

/* The intra-node levels each file gives a one-node cluster. */
TEST(node_levels) {
  static const struct {
    const char *file, *l0;
    double bw0;
    const char *l1;
    double bw1;
  } want[] = {
      {"flux-core_ipa20_4xH100_NVLink.xml", "nvlink", 450e9, NULL, 0},
      {"hwloc_nvidiaDGX2_16xV100_NVSwitch.xml", "nvlink", 150e9, NULL, 0},
      /* 2 GPUs per NVLink pair, PCIe Gen3 x16 across */
      {"hwloc_power8gpudistances_4xP100_NVLink.xml", "nvlink", 40e9, "pcie",
       15.753846e9},
      /* 3 x 100 GB/s capped at the MI300A's 256 GB/s */
      {"flux-core_tuo.SPX_4xMI300A_XGMI.xml", "xgmi", 256e9, NULL, 0},
      /* 7 x 100 GB/s capped at the MI250X GCD's 200 GB/s */
      {"mpibind_eas-tioga_8xMI250X-GCD_XGMI.xml", "xgmi", 200e9, NULL, 0},
      {"psmgmt_jrc0323_4xA100-PCIonly_4xmlx5.xml", "pcie", 31.507692e9, NULL,
       0},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    strata_cluster_t *c;
    ASSERT_OK(strata_cluster_load_node(topo_file(want[i].file), &c));
    ASSERT_EQ(strata_cluster_nodes(c), 1);
    ASSERT_EQ(strata_cluster_level_count(c), want[i].l1 ? 2 : 1);
    ASSERT_STR_EQ(strata_cluster_level(c, 0)->name, want[i].l0);
    ASSERT_NEAR(strata_cluster_level(c, 0)->nominal_bandwidth, want[i].bw0,
                1e-6, 0);
    if (want[i].l1) {
      ASSERT_STR_EQ(strata_cluster_level(c, 1)->name, want[i].l1);
      ASSERT_NEAR(strata_cluster_level(c, 1)->nominal_bandwidth, want[i].bw1,
                  1e-6, 0);
    }
    strata_cluster_destroy(c);
  }
}

TEST(local_machine) {
  strata_node_topo_t *n = NULL;
  int rc = strata_node_load_local(&n);
  if (rc) {
    ASSERT(rc < 0);
    ASSERT(strata_last_error()[0] != '\0');
    ASSERT(n == NULL);
  } else {
    ASSERT(strata_node_gpu_count(n) > 0);
  }
  strata_node_destroy(n);
}

/* ---- bad node files -------------------------------------------------- */

static void expect_xml_error(const char *file, int code, const char *msg) {
  strata_node_topo_t *n = (strata_node_topo_t *)1;
  const char *path = data_file(file);
  ASSERT_EQ(strata_node_load_xml(path, &n), code);
  ASSERT(n == NULL);
  ASSERT_CONTAINS(strata_last_error(), msg);
  ASSERT_CONTAINS(strata_last_error(), file);
}

TEST(bad_xml_files) {
  expect_xml_error("garbage.xml", STRATA_EBADINPUT, "not an XML file");
  expect_xml_error("truncated.xml", STRATA_EBADINPUT, "truncated");
  expect_xml_error("hwloc3.xml", STRATA_EVERSION, "lstopo --of v2xml");
  expect_xml_error("hwloc3.xml", STRATA_EVERSION, "hwloc 3.x");
  expect_xml_error("nogpu.xml", STRATA_EBADINPUT, "no GPUs found in");
  expect_xml_error("absent.xml", STRATA_ENOTFOUND, "absent.xml");
}

/* ---- GPU table, ranges, presets ------------------------------------- */

TEST(gpu_table) {
  static const char *need[] = {
      "A100-40GB", "A100-80GB", "H100-SXM", "H100-PCIe", "H200",  "B200",
      "V100",      "P100",      "MI250X",   "MI300A",    "MI300X"};
  for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
    const strata_gpu_model_t *m = strata_gpu_model_find(need[i]);
    ASSERT(m != NULL);
    ASSERT(m->memory_bytes > 0 && m->peak_flops > 0 && m->pcie_bandwidth > 0);
  }
  ASSERT_NEAR(strata_gpu_model_find("h100-sxm")->peak_flops, 989.4e12, 1e-12,
              0);
  ASSERT_NEAR(strata_gpu_model_find("B200")->nvlink_bandwidth, 900e9, 1e-12, 0);
  ASSERT_STR_EQ(strata_gpu_model_match("NVIDIA A100-SXM4-80GB")->name,
                "A100-80GB");
  ASSERT_STR_EQ(strata_gpu_model_match("NVIDIA H100 PCIe")->name, "H100-PCIe");
  ASSERT_STR_EQ(strata_gpu_model_match("NVIDIA H200")->name, "H200");
  ASSERT_STR_EQ(strata_gpu_model_match("AMD Instinct MI300X")->name, "MI300X");
  ASSERT(strata_gpu_model_match("GeForce GTX 1080") == NULL);
  /* the names their drivers report: H800 and A800 (fewer NVLink links),
   * H20 (not the H200 it is a prefix of), GB200 (before B200), MI325X */
  ASSERT_STR_EQ(strata_gpu_model_match("NVIDIA H800 80GB HBM3")->name, "H800");
  ASSERT_STR_EQ(strata_gpu_model_match("NVIDIA H20")->name, "H20");
  ASSERT_STR_EQ(strata_gpu_model_match("NVIDIA H200 NVL")->name, "H200");
  ASSERT_STR_EQ(strata_gpu_model_match("NVIDIA A800-SXM4-80GB")->name,
                "A800-80GB");
  ASSERT_STR_EQ(strata_gpu_model_match("NVIDIA GB200")->name, "GB200");
  ASSERT_STR_EQ(strata_gpu_model_match("NVIDIA B200")->name, "B200");
  ASSERT_STR_EQ(strata_gpu_model_match("AMD Instinct MI325X")->name, "MI325X");
  ASSERT_NEAR(strata_gpu_model_find("H800")->nvlink_bandwidth, 200e9, 1e-12, 0);
  ASSERT_NEAR(strata_gpu_model_find("A800-80GB")->nvlink_bandwidth, 200e9,
              1e-12, 0);
  ASSERT_NEAR(strata_gpu_model_find("GB200")->peak_flops, 2.5e15, 1e-12, 0);
  /* the kernels of the dies they share */
  strata_perf_t a, b;
  strata_perf_of(strata_gpu_model_find("H800"), &a, NULL);
  strata_perf_of(strata_gpu_model_find("H100-SXM"), &b, NULL);
  ASSERT_NEAR(a.gemm_max, b.gemm_max, 1e-12, 0);
  ASSERT_NEAR(a.hbm_bandwidth, b.hbm_bandwidth, 1e-12, 0);
  strata_perf_of(strata_gpu_model_find("A800-80GB"), &a, NULL);
  ASSERT_EQ(a.peak_fp8_flops, 0); /* Ampere: no FP8 */
  strata_perf_of(strata_gpu_model_find("MI325X"), &a, NULL);
  ASSERT_NEAR(a.hbm_bandwidth, 6e12, 1e-12, 0);
}

/* FP8 GEMMs by shape: the k term's half point is gemm_k0_narrow (the
 * curve otherwise the BF16 one's), and it reproduces the public H800 FP8
 * sweep it was fitted to (TileLang, M = N = 8192: 376 to 1523 TFLOP/s
 * for K = 256 to 16384) within 20 % at every K, where the BF16 curve is
 * up to 3x fast at K = 256. */
TEST(fp8_gemm_curve_by_shape) {
  strata_perf_t p;
  strata_perf_of(strata_gpu_model_find("H800"), &p, NULL);
  ASSERT(p.gemm_k0_narrow > p.gemm_k0);
  double k = 1024;
  ASSERT_NEAR(strata_perf_gemm_eff_narrow(&p, 1, 8192, 8192, k) /
                  strata_perf_gemm_eff(&p, 1, 8192, 8192, k),
              p.sustain_narrow * (k + p.gemm_k0) / (k + p.gemm_k0_narrow),
              1e-12, 0);
  static const double ks[] = {256, 512, 1024, 2048, 4096, 8192, 16384};
  static const double tf[] = {376, 622, 927, 1174, 1378, 1461, 1523};
  for (int i = 0; i < 7; i++) {
    /* the microbenchmark's rate: the curve without the step's sustain */
    double e = strata_perf_gemm_eff_narrow(&p, 1, 8192, 8192, ks[i]) /
               (p.sustain * p.sustain_narrow) * p.peak_fp8_flops / 1e12;
    ASSERT(fabs(e / tf[i] - 1) < 0.2);
  }
  ASSERT(strata_perf_gemm_eff(&p, 1, 8192, 8192, 256) / p.sustain *
             p.peak_fp8_flops / 1e12 >
         2.5 * tf[0]);
  /* an fp8 GEMM is timed by the narrow curve, a bf16 one by the other */
  double m = 8192, n = 8192, flops = 2 * m * n * k;
  double tc =
      flops / (p.peak_fp8_flops * strata_perf_gemm_eff_narrow(&p, 1, m, n, k));
  double tm = (m * k + k * n + 2 * m * n) / (p.hbm_bandwidth * p.mem_eff);
  ASSERT_NEAR(strata_perf_gemm(&p, 1, m, n, k, 1),
              (tc > tm ? tc : tm) + p.launch_seconds, 1e-12, 0);
  ASSERT_NEAR(strata_perf_gemm_narrow(&p, 1, m, n, k, 1.0, 0),
              strata_perf_gemm(&p, 1, m, n, k, 1), 1e-12, 0);
}

/* A GB200 NVL72 rack is one node of 72 GPUs on NVLink: an all-reduce over
 * the 72 GPUs of one rack runs at NVLink's rate, faster than over 72
 * across 9 DGX H100 nodes. */
TEST(gb200_rack_is_one_nvlink_domain) {
  strata_cluster_t *c = NULL, *h = NULL;
  ASSERT_OK(strata_cluster_load("gb200-nvl72:2", &c));
  ASSERT_EQ(strata_cluster_gpus_per_node(c), 72);
  ASSERT_EQ(strata_cluster_gpus(c), 144);
  ASSERT_STR_EQ(strata_cluster_level(c, 0)->name, "nvlink");
  ASSERT_EQ(strata_cluster_level(c, 0)->span, 72);
  ASSERT_OK(strata_cluster_load("dgx-h100:9", &h));
  double t_gb = 0, t_h = 0;
  ASSERT_OK(
      strata_cluster_coll_time(c, STRATA_COLL_ALLREDUCE, 1e9, 1, 72, &t_gb));
  ASSERT_OK(
      strata_cluster_coll_time(h, STRATA_COLL_ALLREDUCE, 1e9, 9, 8, &t_h));
  printf("  1 GB all-reduce over 72 GPUs: GB200 NVL72 %.3f ms, 9 DGX H100 "
         "%.3f ms\n",
         t_gb * 1e3, t_h * 1e3);
  /* the ring's bandwidth term alone: 2 (71/72) S over 900 GB/s x 0.76 */
  ASSERT(t_gb > 2 * 71.0 / 72 * 1e9 / (900e9 * 0.76));
  ASSERT(t_gb < t_h);
  strata_cluster_destroy(c);
  strata_cluster_destroy(h);
}

static void expect_range(const char *pat, int n, const char *first,
                         const char *last) {
  char **names;
  int got;
  ASSERT_OK(st__range_expand(pat, "t", &names, &got));
  ASSERT_EQ(got, n);
  ASSERT_STR_EQ(names[0], first);
  ASSERT_STR_EQ(names[n - 1], last);
  for (int i = 0; i < got; i++)
    strata_free(names[i]);
  strata_free(names);
}

TEST(node_ranges) {
  char **names;
  int n;
  expect_range("node[001-128]", 128, "node001", "node128");
  expect_range("gpu[1-3,10]x", 4, "gpu1x", "gpu10x");
  expect_range("login", 1, "login", "login");
  static const char *bad[] = {"node[5-1]", "node[1-",  "node[a]",
                              "node]",     "n[1]x[2]", "node[1-2,]"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ASSERT_EQ(st__range_expand(bad[i], "t", &names, &n), STRATA_EBADINPUT);
    ASSERT_CONTAINS(strata_last_error(), "bad node range");
  }
}

/* The alpha-beta tests below check the collective formulas on the line
 * rates: a calibration that undoes the GPU's NCCL efficiency gives
 * achieved = nominal. */
static void nominal_links(strata_cluster_t *c) {
  strata_calibration_t cal;
  strata_calibration_init(&cal);
  for (int k = 0; k < 4; k++)
    cal.link[k] = 1.0 / strata_cluster_perf(c)->link_eff[k];
  ASSERT_OK(strata_cluster_calibrate(c, &cal));
}

TEST(preset_dgx_h100) {
  strata_cluster_t *c;
  ASSERT_OK(strata_cluster_load("dgx-h100:128", &c));
  nominal_links(c);
  ASSERT_EQ(strata_cluster_nodes(c), 128);
  ASSERT_EQ(strata_cluster_gpus_per_node(c), 8);
  ASSERT_EQ(strata_cluster_gpus(c), 1024);
  ASSERT_EQ(strata_cluster_gpu_memory(c), (uint64_t)(80 * GIB));
  ASSERT_NEAR(strata_cluster_gpu_peak_flops(c), 989.4e12, 1e-12, 0);
  ASSERT_NEAR(strata_cluster_fastest_bandwidth(c), 450e9, 1e-12, 0);
  ASSERT_EQ(strata_cluster_level_count(c), 3);
  ASSERT_STR_EQ(strata_cluster_level(c, 0)->name, "nvlink");
  ASSERT_EQ(strata_cluster_level(c, 0)->span, 8);
  ASSERT_STR_EQ(strata_cluster_level(c, 1)->name, "leaf");
  ASSERT_EQ(strata_cluster_level(c, 1)->span, 256);
  ASSERT_NEAR(strata_cluster_level(c, 1)->link.bandwidth, 50e9, 1e-12, 0);
  ASSERT_STR_EQ(strata_cluster_level(c, 2)->name, "spine");
  ASSERT(strata_cluster_node_topo(c) == NULL);
  strata_cluster_destroy(c);
  static const char *presets[] = {"dgx-a100:1",  "dgx-h200:2",    "hgx-b200:3",
                                  "h100-pcie:4", "mi300x:5",      "hgx-h800:6",
                                  "hgx-a800:7",  "gb200-nvl72:8", "mi325x:9"};
  for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
    ASSERT_OK(strata_cluster_load(presets[i], &c));
    ASSERT_EQ(strata_cluster_nodes(c), (int)i + 1);
    strata_cluster_destroy(c);
  }
  ASSERT_EQ(strata_cluster_load("dgx-h100:0", &c), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "node count");
  ASSERT_EQ(strata_cluster_load("dgx-h999:4", &c), STRATA_ENOTFOUND);
  ASSERT_CONTAINS(strata_last_error(), "dgx-h100");
}

/* Blackwell Ultra (NVIDIA HGX B300, GB300 NVL72): the B200's and GB200's
 * bf16 and fp8 peaks, dense FP4 1.5x theirs, 270 and 279 GB of HBM3e,
 * 160 SMs, a ConnectX-8 (100 GB/s) a GPU, one NVLink domain a GB300
 * rack; the Transformer Engine recipe Blackwell's (MXFP8). */
TEST(blackwell_ultra_presets) {
  static const struct {
    const char *spec, *model;
    int gpn;
    double bf16, fp8, fp4, gib;
  } want[] = {{"hgx-b300:2", "B300", 8, 2.25e15, 4.5e15, 14e15, 251},
              {"gb300-nvl72:2", "GB300", 72, 2.5e15, 5e15, 15e15, 260}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    strata_cluster_t *c = NULL;
    ASSERT_OK(strata_cluster_load(want[i].spec, &c));
    const strata_gpu_model_t *m = strata_cluster_gpu_model(c);
    const strata_perf_t *p = strata_cluster_perf(c);
    ASSERT_STR_EQ(m->name, want[i].model);
    ASSERT_EQ(strata_cluster_gpus_per_node(c), want[i].gpn);
    ASSERT_NEAR(p->peak_flops, want[i].bf16, 1e-12, 0);
    ASSERT_NEAR(p->peak_fp8_flops, want[i].fp8, 1e-12, 0);
    ASSERT_NEAR(p->peak_fp4_flops, want[i].fp4, 1e-12, 0);
    ASSERT_NEAR((double)m->memory_bytes, want[i].gib * 1073741824.0, 1e-12, 0);
    ASSERT_EQ(p->sms, 160);
    ASSERT_STR_EQ(strata_cluster_level(c, 0)->name, "nvlink");
    ASSERT_EQ(strata_cluster_level(c, 0)->span, want[i].gpn);
    /* twice the Blackwell presets' ConnectX-7 */
    strata_cluster_t *b = NULL;
    ASSERT_OK(strata_cluster_load(i ? "gb200-nvl72:2" : "hgx-b200:2", &b));
    ASSERT_NEAR(strata_cluster_level(c, 1)->link.bandwidth,
                2 * strata_cluster_level(b, 1)->link.bandwidth, 1e-12, 0);
    strata_cluster_destroy(b);
    strata_cluster_destroy(c);
  }
  /* a node that reports itself so is read as one */
  ASSERT_STR_EQ(strata_gpu_model_match("NVIDIA GB300")->name, "GB300");
  ASSERT_STR_EQ(strata_gpu_model_match("NVIDIA B300 SXM6 AC")->name, "B300");
}

/* ---- cluster specs -------------------------------------------------- */

TEST(spec_with_unhealthy_nodes) {
  strata_cluster_t *c;
  ASSERT_OK(strata_cluster_load(data_file("cluster-p100.json"), &c));
  nominal_links(c);
  ASSERT_STR_EQ(strata_cluster_name(c), "p100-test");
  ASSERT_EQ(strata_cluster_total_nodes(c), 8);
  /* gpu03 is unhealthy, gpu08 has an unhealthy GPU: both dropped. */
  ASSERT_EQ(strata_cluster_nodes(c), 6);
  ASSERT_EQ(strata_cluster_gpus(c), 24);
  ASSERT_STR_EQ(strata_cluster_node_name(c, 1), "gpu02");
  ASSERT_STR_EQ(strata_cluster_node_name(c, 2), "gpu04");
  ASSERT_STR_EQ(strata_cluster_node_name(c, 5), "gpu07");
  ASSERT(strata_cluster_node_topo(c) != NULL);
  ASSERT_EQ(strata_cluster_level_count(c), 4);
  ASSERT_STR_EQ(strata_cluster_level(c, 2)->name, "leaf");
  /* 12.5 GB/s NIC, the XML has no NIC: one NIC shared by 4 GPUs. */
  ASSERT_NEAR(strata_cluster_level(c, 2)->link.bandwidth, 12.5e9 / 4, 1e-12, 0);
  ASSERT_NEAR(strata_cluster_level(c, 2)->link.latency, 10e-6, 1e-9, 0);
  ASSERT_STR_EQ(strata_cluster_level(c, 3)->name, "spine");
  ASSERT_NEAR(strata_cluster_level(c, 3)->link.bandwidth, 12.5e9 / 8, 1e-12, 0);
  ASSERT_NEAR(strata_cluster_level(c, 3)->link.latency, 13e-6, 1e-9, 0);
  strata_cluster_destroy(c);
}

static void expect_spec_error(const char *file, int code, const char *msg) {
  strata_cluster_t *c = (strata_cluster_t *)1;
  ASSERT_EQ(strata_cluster_load(data_file(file), &c), code);
  ASSERT(c == NULL);
  ASSERT_CONTAINS(strata_last_error(), msg);
}

TEST(spec_errors) {
  expect_spec_error("unknown-model.json", STRATA_EBADINPUT,
                    "unknown GPU model 'H900-SXM'");
  expect_spec_error("unknown-model.json", STRATA_EBADINPUT,
                    "H100-SXM, H100-PCIe");
  expect_spec_error("missing-xml.json", STRATA_ENOTFOUND,
                    "'nodes/does-not-exist.xml' not found");
  expect_spec_error("missing-xml.json", STRATA_ENOTFOUND,
                    "relative to the spec's folder");
  expect_spec_error("bad-range.json", STRATA_EBADINPUT,
                    "bad node range 'node[128-001]'");
  expect_spec_error("all-unhealthy.json", STRATA_EBADINPUT, "no healthy GPUs");
  expect_spec_error("mixed-bad-gpu.json", STRATA_EBADINPUT,
                    "'a02:6' is not NODE:INDEX with a known node and an "
                    "index below 4");
  expect_spec_error("garbage.xml", STRATA_EBADINPUT, "not valid JSON");
}

/* A spec from text, through a file as users give it. */
static int load_text(const char *json, strata_cluster_t **c) {
  static char path[64];
  snprintf(path, sizeof path, "/tmp/strata-test-spec-%d.json", (int)getpid());
  if (strata_file_write_atomic(path, json, strlen(json))) return -100;
  int rc = strata_cluster_load(path, c);
  remove(path);
  return rc;
}

#define SPEC(net)                                                              \
  "{\"node_groups\": [{\"count\": 2, \"template\": {\"gpus\": 8, "             \
  "\"gpu_model\": \"H100-SXM\"}}], \"network\": {" net "}}"

static double leaf_bw(const char *json) {
  strata_cluster_t *c;
  ASSERT_OK(load_text(json, &c));
  double bw = strata_cluster_level(c, strata_cluster_level_count(c) - 1)
                  ->nominal_bandwidth; /* the line rate the spec gives */
  strata_cluster_destroy(c);
  return bw;
}

static void expect_text_error(const char *json, const char *msg) {
  strata_cluster_t *c = (strata_cluster_t *)1;
  ASSERT_EQ(load_text(json, &c), STRATA_EBADINPUT);
  ASSERT(c == NULL);
  ASSERT_CONTAINS(strata_last_error(), msg);
}

/* The unit is in the key: 400 Gb/s and 50 GB/s are one bandwidth; the
 * older "_gbps" key still means GB/s. */
TEST(spec_units) {
  strata_log_level_t lv = strata_log_get_level();
  ASSERT_NEAR(leaf_bw(SPEC("\"nic_gbits_per_s\": 400")), 50e9, 1e-12, 0);
  ASSERT_NEAR(leaf_bw(SPEC("\"nic_gbytes_per_s\": 50")), 50e9, 1e-12, 0);
  strata_log_set_level(STRATA_LOG_ERROR); /* the older key warns */
  ASSERT_NEAR(leaf_bw(SPEC("\"nic_gbps\": 50")), 50e9, 1e-12, 0);
  strata_log_set_level(lv);
  expect_text_error(SPEC("\"nic_gbytes_per_s\": 400"),
                    "write \"nic_gbits_per_s\": 400");
  expect_text_error(SPEC("\"nic_gbits_per_s\": 4000"), "is the unit right?");
  expect_text_error(SPEC("\"nic_gbits_per_s\": 1e-9"), "less than 10 MB/s");
  expect_text_error(SPEC("\"nic_gbps\": 50, \"nic_gbits_per_s\": 400"),
                    "give one");
}

/* Every value a cost is computed from is refused when it would make the
 * cost non-finite or meaningless, naming the field and the group. */
TEST(spec_implausible) {
  strata_cluster_t *c;
  expect_text_error(SPEC("\"nic_gbytes_per_s\": 0"),
                    "'nic_gbytes_per_s' is 0; a bandwidth must be positive");
  expect_text_error(SPEC("\"nic_gbits_per_s\": 400, \"latency_us\": 0"),
                    "'latency_us' is 0 us");
  expect_text_error(SPEC("\"nic_gbits_per_s\": 400, \"latency_us\": 1e300"),
                    "latencies are in microseconds");
  expect_text_error(SPEC("\"nic_gbits_per_s\": 400, "
                         "\"spine_oversubscription\": 0.5"),
                    "a ratio >= 1");
  expect_text_error(
      "{\"node_groups\": [{\"count\": 2, \"template\": {\"gpus\": 8, "
      "\"gpu_model\": \"H100-SXM\", \"nics\": 0}}], "
      "\"network\": {\"nic_gbits_per_s\": 400}}",
      "node_groups[0].template: 'nics' is 0, but the cluster has 2 nodes");
  expect_text_error("{\"node_groups\": [{\"count\": 1, \"template\": "
                    "{\"gpus\": 8, \"gpu_model\": \"X\"}}], \"gpu\": "
                    "{\"memory_gib\": 80, \"bf16_tflops\": 1e-300}}",
                    "'bf16_tflops' is 1e-300 TFLOP/s");
  expect_text_error("{\"node_groups\": [{\"count\": 1, \"template\": "
                    "{\"gpus\": 8, \"gpu_model\": \"H100-SXM\", "
                    "\"pcie_gbytes_per_s\": 0}}]}",
                    "node_groups[0].template: 'pcie_gbytes_per_s' is 0");
  /* One node needs no NIC. */
  ASSERT_OK(load_text("{\"node_groups\": [{\"count\": 1, \"template\": "
                      "{\"gpus\": 8, \"gpu_model\": \"H100-SXM\", "
                      "\"nics\": 0}}]}",
                      &c));
  strata_cluster_destroy(c);
  ASSERT_EQ(strata_cluster_load("dgx-h100", &c), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "e.g. dgx-h100:128");
  ASSERT_EQ(strata_cluster_load("mi300", &c), STRATA_ENOTFOUND);
  ASSERT_CONTAINS(strata_last_error(), "the nearest preset is mi300x");
}

TEST(spec_unknown_keys) {
  expect_text_error(SPEC("\"nic_gbits_per_s\": 400, \"latncy_us\": 3"),
                    "unknown key 'latncy_us'; did you mean "
                    "'latency_us'?");
  expect_text_error(SPEC("\"nic_gbits_per_s\": 400, \"gpus\": 3"),
                    "'gpus' does not belong here; it goes in "
                    "node_groups[].template");
  expect_text_error(SPEC("\"nic_gbits_per_s\": 400, \"leaf_size\": 3, "
                         "\"leaf_size\": 4"),
                    "'leaf_size' is given twice");
  expect_text_error("{\"node_groups\": [{\"count\": 1, \"template\": "
                    "{\"gpus\": 8, \"gpu_modle\": \"H100-SXM\"}}]}",
                    "node_groups[0].template: unknown key 'gpu_modle'; did "
                    "you mean 'gpu_model'?");
}

/* Found by fuzz_hwloc: an OS device without a name (strlen(NULL)). */
TEST(osdev_without_name) {
  strata_node_topo_t *n;
  ASSERT_OK(strata_node_load_xml(data_file("osdev-no-name.xml"), &n));
  ASSERT_EQ(strata_node_gpu_count(n), 4);
  strata_node_destroy(n);
}

/* ---- collective costs ----------------------------------------------- */

/* The ring formulas by hand (topo/collective.c): an all-reduce moves
 * 2(n-1)/n of S through each device in 2(n-1) steps, all-gather, reduce-
 * scatter and all-to-all (n-1)/n in n-1 steps; each step pays the link's
 * latency and, for messages (S/n) as large as NCCL's 4 MiB chunk, the
 * chunk's time on the link. */
#define CHUNK (4.0 * 1048576.0)
static double step_lat(double m, double bw, double a) {
  return a + CHUNK / bw * (m / (m + CHUNK));
}
static double ar(double s, int n, double bw, double a) {
  return 2.0 * (n - 1) / n * s / bw + 2.0 * (n - 1) * step_lat(s / n, bw, a);
}
static double ag(double s, int n, double bw, double a) {
  return (double)(n - 1) / n * s / bw + (n - 1) * step_lat(s / n, bw, a);
}
static double p2p(double s, double bw, double a) {
  return s / bw + step_lat(s, bw, a);
}
/* Across n nodes x g GPUs (docs/cost-model.md, "Collectives across
 * nodes"): one flat ring of n g ranks at min(B_in, g B_out), each step's
 * latency at the level it crosses (k (g - 1) n steps inside nodes, k (n -
 * 1) across them); an all-reduce's tree moves 2 S at 0.92 min(B_in,
 * g B_out, twice that on 2 nodes) with 2 ((g - 1) + log2 n) hops whose chunk
 * crosses at that bandwidth. */
static double ring2(double s, int k, int g, double bi, double ai, int n,
                    double bo, double ao) {
  double N = (double)n * g, bw = bi < g * bo ? bi : g * bo;
  return k * (N - 1) / N * s / bw + k * (g - 1) * n * step_lat(s / N, bi, ai) +
         k * (n - 1) * step_lat(s / N, bo, ao);
}
static double tree2(double s, int g, double bi, double ai, int n, double bo,
                    double ao) {
  double net = g * bo * (n > 2 ? 1 : 2), bw = 0.92 * (bi < net ? bi : net);
  double depth = ceil(log2(n));
  return 2 * s / bw +
         2 * ((g - 1) * step_lat(s, bw, ai) + depth * step_lat(s, bw, ao));
}
static double ar2(double s, int g, double bi, double ai, int n, double bo,
                  double ao) {
  double r = ring2(s, 2, g, bi, ai, n, bo, ao),
         t = tree2(s, g, bi, ai, n, bo, ao);
  return r < t ? r : t;
}

TEST(costs_flat) {
  strata_cluster_t *c;
  double t, s = 1e9;
  ASSERT_OK(strata_cluster_load("dgx-h100:128", &c));
  nominal_links(c);
  /* 8 GPUs of one node over NVLink: 450 GB/s, 3 us. */
  ASSERT_OK(strata_cluster_coll_time(c, STRATA_COLL_ALLREDUCE, s, 1, 8, &t));
  ASSERT_NEAR(t, ar(s, 8, 450e9, 3e-6), 1e-12, 0);
  ASSERT_OK(strata_cluster_coll_time(c, STRATA_COLL_ALLGATHER, s, 1, 4, &t));
  ASSERT_NEAR(t, ag(s, 4, 450e9, 3e-6), 1e-12, 0);
  /* One GPU per node over 16 nodes of one leaf: 50 GB/s, 5 us. */
  ASSERT_OK(
      strata_cluster_coll_time(c, STRATA_COLL_REDUCESCATTER, s, 16, 1, &t));
  ASSERT_NEAR(t, ag(s, 16, 50e9, 5e-6), 1e-12, 0);
  /* p2p inside a node and across nodes. */
  ASSERT_OK(strata_cluster_coll_time(c, STRATA_COLL_P2P, s, 1, 2, &t));
  ASSERT_NEAR(t, p2p(s, 450e9, 3e-6), 1e-12, 0);
  ASSERT_OK(strata_cluster_coll_time(c, STRATA_COLL_P2P, s, 2, 1, &t));
  ASSERT_NEAR(t, p2p(s, 50e9, 5e-6), 1e-12, 0);
  ASSERT_OK(strata_cluster_coll_time(c, STRATA_COLL_ALLREDUCE, s, 1, 1, &t));
  ASSERT_EQ(t, 0);
  /* The worked example of docs/cluster-format.md: 4 nodes x 8, 1 GB:
   * both held to the NICs' 400 GB/s, the tree (16 hops) is faster than
   * the ring (62 steps). */
  ASSERT_OK(strata_cluster_coll_time(c, STRATA_COLL_ALLREDUCE, s, 4, 8, &t));
  ASSERT_NEAR(t, tree2(s, 8, 450e9, 3e-6, 4, 50e9, 5e-6), 1e-12, 0);
  ASSERT(t < ring2(s, 2, 8, 450e9, 3e-6, 4, 50e9, 5e-6));
  printf("  all-reduce of 1 GB over 4 x 8 H100: %.4f ms\n", 1e3 * t);
  ASSERT_EQ(strata_cluster_coll_time(c, STRATA_COLL_ALLREDUCE, s, 129, 8, &t),
            STRATA_EINVAL);
  ASSERT_EQ(strata_cluster_coll_time(c, STRATA_COLL_ALLREDUCE, s, 1, 9, &t),
            STRATA_EINVAL);
  strata_cluster_destroy(c);
}

/* The collective model against what nccl-tests measured: all-reduce over
 * the 8 A100 of one node (Azure ND A100 v4, busbw at each size; docs/
 * cost-model.md), within 15 % from 64 KB to 8 GB. */
TEST(costs_nccl_tests_a100) {
  static const double size[] = {65536,     524288,     1048576,
                                4194304,   16777216,   67108864,
                                268435456, 1073741824, 8589934592};
  static const double busbw[] = {2.70,   19.24,  36.22,  71.43, 109.22,
                                 166.63, 213.87, 228.10, 231.58};
  strata_cluster_t *c;
  ASSERT_OK(strata_cluster_load("dgx-a100:1", &c));
  for (size_t i = 0; i < sizeof size / sizeof size[0]; i++) {
    double t, meas = 2.0 * 7 / 8 * size[i] / (busbw[i] * 1e9);
    ASSERT_OK(
        strata_cluster_coll_time(c, STRATA_COLL_ALLREDUCE, size[i], 1, 8, &t));
    ASSERT_NEAR(t, meas, 0.15, 0);
  }
  strata_cluster_destroy(c);
}

TEST(costs_hierarchical) {
  strata_cluster_t *c;
  double t, s = 8e8, nv = 450e9, a_nv = 3e-6;
  /* 4 nodes x 8 H100, leaf of 2 nodes, spine 4:1: 50 / 12.5 GB/s. */
  ASSERT_OK(strata_cluster_load(data_file("cluster-template.json"), &c));
  nominal_links(c);
  /* 2 nodes (one leaf): the tree, whose bus bandwidth on two nodes is
   * NVLink's (the NICs' 2 x 8 x 50 GB/s are more), beats the ring held to
   * the NICs' 400 GB/s. */
  ASSERT_OK(strata_cluster_coll_time(c, STRATA_COLL_ALLREDUCE, s, 2, 8, &t));
  ASSERT_NEAR(t, tree2(s, 8, nv, a_nv, 2, 50e9, 5e-6), 1e-12, 0);
  ASSERT(t < ring2(s, 2, 8, nv, a_nv, 2, 50e9, 5e-6));
  /* 4 nodes span both leaves: the spine's 12.5 GB/s and 5 + 2 us; the
   * faster of ring and tree, both held to 8 x 12.5 GB/s. */
  ASSERT_OK(strata_cluster_coll_time(c, STRATA_COLL_ALLREDUCE, s, 4, 8, &t));
  ASSERT_NEAR(t, ar2(s, 8, nv, a_nv, 4, 12.5e9, 7e-6), 1e-12, 0);
  /* all-gather and reduce-scatter: the ring of 32, N - 1 steps. */
  ASSERT_OK(strata_cluster_coll_time(c, STRATA_COLL_ALLGATHER, s, 4, 8, &t));
  ASSERT_NEAR(t, ring2(s, 1, 8, nv, a_nv, 4, 12.5e9, 7e-6), 1e-12, 0);
  ASSERT_OK(
      strata_cluster_coll_time(c, STRATA_COLL_REDUCESCATTER, s, 4, 8, &t));
  ASSERT_NEAR(t, ring2(s, 1, 8, nv, a_nv, 4, 12.5e9, 7e-6), 1e-12, 0);
  /* all-to-all: A2A(8, S/4, nvlink) + A2A(4, S, spine). */
  ASSERT_OK(strata_cluster_coll_time(c, STRATA_COLL_ALLTOALL, s, 4, 8, &t));
  ASSERT_NEAR(t, ag(s / 4, 8, nv, a_nv) + ag(s, 4, 12.5e9, 7e-6), 1e-12, 0);
  /* The same group as a rank list costs the same. */
  int ranks[32];
  double t2;
  for (int i = 0; i < 32; i++)
    ranks[i] = 31 - i;
  ASSERT_OK(strata_cluster_coll_time_ranks(c, STRATA_COLL_ALLTOALL, s, ranks,
                                           32, &t2));
  ASSERT_NEAR(t2, t, 1e-12, 0);
  /* Ranks 0 and 8: one GPU on each of nodes 0 and 1, flat over the leaf. */
  ranks[0] = 0;
  ranks[1] = 8;
  ASSERT_OK(strata_cluster_coll_time_ranks(c, STRATA_COLL_ALLREDUCE, s, ranks,
                                           2, &t));
  ASSERT_NEAR(t, ar(s, 2, 50e9, 5e-6), 1e-12, 0);
  /* Ranks 0 and 16 sit under different leaves. */
  ranks[1] = 16;
  ASSERT_OK(
      strata_cluster_coll_time_ranks(c, STRATA_COLL_P2P, s, ranks, 2, &t));
  ASSERT_NEAR(t, p2p(s, 12.5e9, 7e-6), 1e-12, 0);
  ranks[1] = 0;
  ASSERT_EQ(strata_cluster_coll_time_ranks(c, STRATA_COLL_P2P, s, ranks, 2, &t),
            STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "listed twice");
  ranks[1] = 32;
  ASSERT_EQ(strata_cluster_coll_time_ranks(c, STRATA_COLL_P2P, s, ranks, 2, &t),
            STRATA_EINVAL);
  strata_cluster_destroy(c);
}

/* P100 pairs: GPUs 0,1 share NVLink; 0 and 2 only PCIe. */
/* strata_coll_time_levels over three levels (a stage's two mesh axes and
 * the data parallelism beyond it): the ring's bandwidth is the slowest
 * level's link times the ranks inside it, each level's steps pay its own
 * latency; one level is strata_coll_time; all-gather never takes the
 * tree; levels of one rank drop out. */
TEST(costs_levels) {
  int size[3] = {4, 2, 8};
  strata_link_t link[3] = {{400e9, 2e-6}, {100e9, 4e-6}, {20e9, 8e-6}};
  double s = 3e8, N = 64, m = s / N;
  /* ring: min(400, 4 x 100, 8 x 20) = 160 GB/s */
  double ring = 2 * (N - 1) / N * s / 160e9 +
                2 * 3 * 16 * step_lat(m, 400e9, 2e-6) +
                2 * 1 * 8 * step_lat(m, 100e9, 4e-6) +
                2 * 7 * 1 * step_lat(m, 20e9, 8e-6);
  double ag = (N - 1) / N * s / 160e9 + 3 * 16 * step_lat(m, 400e9, 2e-6) +
              1 * 8 * step_lat(m, 100e9, 4e-6) +
              7 * 1 * step_lat(m, 20e9, 8e-6);
  /* tree: the 8 inner ranks at min(400, 4 x 100) = 400, the NICs 8 x 20
   * = 160 on more than two nodes, x 0.92; 3 + 1 inner hops, 3 outer */
  double bw = 0.92 * 160e9;
  double tree =
      2 * s / bw + 2 * (3 * step_lat(s, bw, 2e-6) + 1 * step_lat(s, bw, 4e-6) +
                        3 * step_lat(s, bw, 8e-6));
  double t = strata_coll_time_levels(STRATA_COLL_ALLREDUCE, s, 3, size, link);
  ASSERT_NEAR(t, ring < tree ? ring : tree, 1e-12, 0);
  printf("  3 levels, 300 MB: ring %.4f ms, tree %.4f ms\n", 1e3 * ring,
         1e3 * tree);
  ASSERT_NEAR(strata_coll_time_levels(STRATA_COLL_ALLGATHER, s, 3, size, link),
              ag, 1e-12, 0);
  /* one level, and levels of one rank */
  int one[3] = {1, 8, 1};
  ASSERT_NEAR(strata_coll_time_levels(STRATA_COLL_ALLREDUCE, s, 3, one, link),
              ar(s, 8, 100e9, 4e-6), 1e-12, 0);
  ASSERT_EQ(strata_coll_time_levels(STRATA_COLL_ALLTOALL, s, 3, size, link), 0);
  ASSERT_EQ(strata_coll_time_levels(STRATA_COLL_ALLREDUCE, 0, 3, size, link),
            0);
}

TEST(costs_across_domains) {
  strata_cluster_t *c;
  double t, s = 1e8, pcie = 15.753846e9;
  int ranks[2] = {0, 2};
  ASSERT_OK(strata_cluster_load_node(
      topo_file("hwloc_power8gpudistances_4xP100_NVLink.xml"), &c));
  nominal_links(c);
  ASSERT_OK(strata_cluster_coll_time(c, STRATA_COLL_ALLREDUCE, s, 1, 2, &t));
  ASSERT_NEAR(t, ar(s, 2, 40e9, 3e-6), 1e-12, 0);
  ASSERT_OK(strata_cluster_coll_time(c, STRATA_COLL_ALLREDUCE, s, 1, 4, &t));
  ASSERT_NEAR(t, ar(s, 4, pcie, 4e-6), 1e-6, 0);
  ASSERT_OK(
      strata_cluster_coll_time_ranks(c, STRATA_COLL_P2P, s, ranks, 2, &t));
  ASSERT_NEAR(t, p2p(s, pcie, 4e-6), 1e-6, 0);
  strata_cluster_destroy(c);
}

/* Achieved link bandwidth: the line rate times the GPU's NCCL efficiency,
 * times a calibration's scale; recalibrating starts from the line rate. */
TEST(links_achieved) {
  strata_cluster_t *c;
  strata_calibration_t cal;
  ASSERT_OK(strata_cluster_load("dgx-a100:4", &c));
  const strata_perf_t *p = strata_cluster_perf(c);
  const strata_level_t *nv = strata_cluster_level(c, 0),
                       *leaf = strata_cluster_level(c, 1);
  ASSERT(p->link_eff[STRATA_LEVEL_NVLINK] > 0.5 &&
         p->link_eff[STRATA_LEVEL_NVLINK] < 1);
  ASSERT_NEAR(nv->nominal_bandwidth, 300e9, 1e-12, 0);
  ASSERT_NEAR(nv->link.bandwidth, 300e9 * p->link_eff[STRATA_LEVEL_NVLINK],
              1e-12, 0);
  ASSERT_NEAR(leaf->link.bandwidth, 25e9 * p->link_eff[STRATA_LEVEL_LEAF],
              1e-12, 0);
  double gemm = p->gemm_max;
  strata_calibration_init(&cal);
  cal.link[STRATA_LEVEL_LEAF] = 0.5;
  cal.gemm = 0.9;
  ASSERT_OK(strata_cluster_calibrate(c, &cal));
  ASSERT_NEAR(leaf->link.bandwidth, 12.5e9 * p->link_eff[STRATA_LEVEL_LEAF],
              1e-12, 0);
  ASSERT_NEAR(p->gemm_max, 0.9 * gemm, 1e-12, 0);
  ASSERT_OK(strata_cluster_calibrate(c, &cal)); /* not compounded */
  ASSERT_NEAR(p->gemm_max, 0.9 * gemm, 1e-12, 0);
  cal.gemm = 0;
  ASSERT_EQ(strata_cluster_calibrate(c, &cal), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "gemm");
  strata_cluster_destroy(c);
}

TEST(stage_meshes) {
  strata_cluster_t *c;
  strata_mesh_t m;
  ASSERT_OK(strata_cluster_load(data_file("cluster-template.json"), &c));
  nominal_links(c);
  ASSERT_OK(strata_cluster_stage_mesh(c, 1, 4, &m));
  ASSERT_EQ(m.ndim, 1);
  ASSERT_EQ(m.shape[0], 4);
  ASSERT_EQ(m.shape[1], 1);
  ASSERT_NEAR(m.axis[0].bandwidth, 450e9, 1e-12, 0);
  ASSERT_OK(strata_cluster_stage_mesh(c, 2, 8, &m));
  ASSERT_EQ(m.ndim, 2);
  ASSERT_EQ(m.shape[0], 2);
  ASSERT_EQ(m.shape[1], 8);
  ASSERT_NEAR(m.axis[0].bandwidth, 50e9, 1e-12, 0);
  ASSERT_NEAR(m.axis[1].bandwidth, 450e9, 1e-12, 0);
  ASSERT_EQ(strata_mesh_devices(&m), 16);
  ASSERT_OK(strata_cluster_stage_mesh(c, 4, 8, &m)); /* spans leaves */
  ASSERT_NEAR(m.axis[0].bandwidth, 12.5e9, 1e-12, 0);
  ASSERT_NEAR(m.axis[0].latency, 7e-6, 1e-9, 0);
  ASSERT_OK(strata_cluster_stage_mesh(c, 2, 1, &m));
  ASSERT_EQ(m.ndim, 1);
  ASSERT_EQ(m.shape[0], 2);
  ASSERT_NEAR(m.axis[0].bandwidth, 50e9, 1e-12, 0);
  ASSERT_EQ(strata_cluster_stage_mesh(c, 5, 8, &m), STRATA_EINVAL);
  ASSERT_EQ(strata_cluster_stage_mesh(c, 1, 0, &m), STRATA_EINVAL);
  strata_cluster_destroy(c);
}

/* ---- allocation failures -------------------------------------------- */

/* Fail allocation N = 1, 2, ... until the load succeeds: each failure must
 * be a clean error (ASan's leak check covers "clean"). */
static void fail_each_alloc(const char *spec, int node) {
  for (long nth = 1; nth < 100000; nth++) {
    strata_cluster_t *c = NULL;
    strata_alloc_fail_at(nth);
    int rc = node ? strata_cluster_load_node(spec, &c)
                  : strata_cluster_load(spec, &c);
    int failed = strata_alloc_failed();
    strata_alloc_fail_at(0);
    if (!failed) {
      ASSERT_OK(rc);
      strata_cluster_destroy(c);
      return;
    }
    if (rc == 0) { /* a failure absorbed: fine if it still built */
      strata_cluster_destroy(c);
      continue;
    }
    ASSERT(c == NULL);
    ASSERT(strata_last_error()[0] != '\0');
  }
  ASSERT(!"never succeeded");
}

TEST(alloc_failures) {
  fail_each_alloc(data_file("cluster-p100.json"), 0);
  fail_each_alloc("dgx-h100:8", 0);
  fail_each_alloc(topo_file("flux-core_ipa20_4xH100_NVLink.xml"), 1);
}

/* Groups of different GPU models and counts: each a cluster of its own
 * nodes, health and links; the whole numbers usable nodes group by group
 * and links groups by the slower NIC. */
TEST(mixed_groups) {
  strata_cluster_t *c = NULL;
  ASSERT_OK(strata_cluster_load(data_file("mixed.json"), &c));
  ASSERT_EQ(strata_cluster_group_count(c), 2);
  ASSERT_EQ(strata_cluster_gpus(c), 32);
  const strata_cluster_t *h = strata_cluster_group(c, 0);
  const strata_cluster_t *a = strata_cluster_group(c, 1);
  ASSERT_STR_EQ(strata_cluster_gpu_model(h)->name, "H100-SXM");
  ASSERT_STR_EQ(strata_cluster_gpu_model(a)->name, "A100-80GB");
  ASSERT(strata_cluster_gpu_peak_flops(h) >
         2 * strata_cluster_gpu_peak_flops(a));
  ASSERT_EQ(strata_cluster_group_first_node(c, 1), 2);
  ASSERT_STR_EQ(strata_cluster_node_name(a, 0), "node2");
  ASSERT(strata_cluster_group(c, 2) == NULL);
  strata_cluster_destroy(c);

  ASSERT_OK(strata_cluster_load(data_file("mixed-gpn.json"), &c));
  h = strata_cluster_group(c, 0);
  a = strata_cluster_group(c, 1);
  ASSERT_EQ(strata_cluster_total_nodes(c), 7);
  ASSERT_EQ(strata_cluster_nodes(c), 5); /* h02 and a03 dropped */
  ASSERT_EQ(strata_cluster_nodes(h), 2);
  ASSERT_EQ(strata_cluster_nodes(a), 3);
  ASSERT_EQ(strata_cluster_gpus_per_node(a), 4);
  ASSERT_EQ(strata_cluster_gpus(c), 2 * 8 + 3 * 4);
  ASSERT_STR_EQ(strata_cluster_node_name(a, 2), "a04");
  ASSERT_STR_EQ(strata_cluster_node_name(c, 2), "a01");
  ASSERT_EQ(strata_cluster_group_first_node(c, 1), 2);
  ASSERT_EQ(strata_cluster_spec_node_group(c, 3), 1);
  ASSERT_CONTAINS(strata_cluster_spec_node_dropped(c, 5), "GPU 3 unhealthy");
  /* 7 nodes over leaves of 4: across the spine, oversubscribed 2:1; the
   * A100 nodes' 2 NICs of 200 Gb/s for 4 GPUs are the slower side */
  strata_link_t x = strata_cluster_group_link(c);
  const strata_level_t *leaf_a = NULL;
  for (int i = 0; i < strata_cluster_level_count(a); i++)
    if (strata_cluster_level(a, i)->kind == STRATA_LEVEL_LEAF)
      leaf_a = strata_cluster_level(a, i);
  ASSERT(leaf_a != NULL);
  ASSERT_NEAR(leaf_a->nominal_bandwidth, 2 * 25e9 / 4, 1e-9, 0);
  ASSERT_NEAR(x.bandwidth, leaf_a->link.bandwidth / 2, 1e-9, 0);
  strata_cluster_destroy(c);
}

/* strata_cluster_load_lost: the cluster with n nodes of each group out of
 * service (its last usable ones): a preset, a spec with nodes dropped
 * already (the lost ones are the last usable, not the dropped), a mixed
 * cluster (n of each group), and a count that leaves a group empty. */
TEST(nodes_lost) {
  strata_cluster_t *c = NULL;
  ASSERT_OK(strata_cluster_load_lost("dgx-h100:4", 1, &c));
  ASSERT_STR_EQ(strata_cluster_name(c), "dgx-h100:4");
  ASSERT_EQ(strata_cluster_total_nodes(c), 4);
  ASSERT_EQ(strata_cluster_nodes(c), 3);
  ASSERT_EQ(strata_cluster_gpus(c), 24);
  ASSERT_CONTAINS(strata_cluster_spec_node_dropped(c, 3), "unhealthy");
  ASSERT(strata_cluster_spec_node_dropped(c, 2) == NULL);
  strata_cluster_destroy(c);
  /* p100: 8 nodes, gpu03 and gpu08 dropped: 2 lost are gpu06 and gpu07 */
  ASSERT_OK(strata_cluster_load_lost(data_file("cluster-p100.json"), 2, &c));
  ASSERT_EQ(strata_cluster_nodes(c), 4);
  ASSERT_STR_EQ(strata_cluster_node_name(c, 3), "gpu05");
  strata_cluster_destroy(c);
  ASSERT_OK(strata_cluster_load_lost(data_file("mixed-gpn.json"), 1, &c));
  ASSERT_EQ(strata_cluster_group_count(c), 2);
  ASSERT_EQ(strata_cluster_nodes(strata_cluster_group(c, 0)), 1);
  ASSERT_EQ(strata_cluster_nodes(strata_cluster_group(c, 1)), 2);
  ASSERT_EQ(strata_cluster_gpus(c), 8 + 2 * 4);
  strata_cluster_destroy(c);
  c = (strata_cluster_t *)1;
  ASSERT_EQ(strata_cluster_load_lost(data_file("mixed-gpn.json"), 2, &c),
            STRATA_EINFEASIBLE);
  ASSERT(c == NULL);
  ASSERT_CONTAINS(strata_last_error(),
                  "node group 0 has 2 usable nodes: losing 2 leaves none");
  ASSERT_EQ(strata_cluster_load_lost("dgx-a100:2", 2, &c), STRATA_EINFEASIBLE);
  ASSERT_CONTAINS(strata_last_error(), "the cluster has 2 usable nodes");
  ASSERT_OK(strata_cluster_load_lost("dgx-a100:2", 0, &c)); /* none lost */
  ASSERT_EQ(strata_cluster_nodes(c), 2);
  strata_cluster_destroy(c);
}

/* Ascend NPUs: the 910B's peak is its cube cores' (24 of 16 x 16 x 16
 * MACs at 1.8 GHz), the 910C die's half of its package's 752 TFLOP/s;
 * neither has FP8; the presets' levels are HCCS (8 NPUs) or the unified
 * bus (768 dies) inside, 200 Gb/s RoCE per NPU outside; a spec mixing
 * them with H100 nodes plans over both groups, and FP8 on NPUs is
 * refused with what they compute in. */
TEST(ascend_npus) {
  const strata_gpu_model_t *b = strata_gpu_model_find("Ascend-910B");
  const strata_gpu_model_t *c9 = strata_gpu_model_find("ascend-910c");
  strata_perf_t pb;
  ASSERT(b && c9);
  ASSERT_NEAR(b->peak_flops, 24.0 * 16 * 16 * 16 * 2 * 1.8e9, 1e-3, 0);
  ASSERT_NEAR(c9->peak_flops, 752e12 / 2, 1e-12, 0);
  ASSERT_EQ(b->memory_bytes, 64ull << 30);
  ASSERT_EQ(c9->memory_bytes * 2, 128ull << 30);
  ASSERT_STR_EQ(b->vendor, "Huawei");
  ASSERT_STR_EQ(strata_gpu_model_match("Ascend910B2")->name, "Ascend-910B");
  ASSERT_STR_EQ(strata_gpu_model_match("Ascend910C")->name, "Ascend-910C");
  int known = 0;
  strata_perf_of(b, &pb, &known);
  ASSERT(known);
  ASSERT_EQ(pb.peak_fp8_flops, 0);
  ASSERT_EQ(pb.peak_fp4_flops, 0);
  strata_cluster_t *c = NULL;
  ASSERT_OK(strata_cluster_load("atlas-800t-a2:4", &c));
  ASSERT_EQ(strata_cluster_gpus(c), 32);
  ASSERT_STR_EQ(strata_cluster_level(c, 0)->name, "hccs");
  ASSERT_EQ(strata_cluster_level(c, 0)->span, 8);
  ASSERT_NEAR(strata_cluster_level(c, 0)->nominal_bandwidth,
              b->nvlink_bandwidth, 1e-12, 0);
  ASSERT_NEAR(strata_cluster_level(c, 1)->nominal_bandwidth, 200e9 / 8, 1e-12,
              0);
  strata_cluster_destroy(c);
  ASSERT_OK(strata_cluster_load("atlas-900-a3-superpod:2", &c));
  ASSERT_EQ(strata_cluster_gpus_per_node(c), 768);
  ASSERT_EQ(strata_cluster_level(c, 0)->span, 768);
  strata_cluster_destroy(c);
  /* mixed with GPUs */
  strata_graph_t *g = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_t o;
  ASSERT_OK(strata_model_load("llama3-8b", NULL, &g));
  ASSERT_OK(strata_cluster_load(data_file("h100-ascend.json"), &c));
  ASSERT_EQ(strata_cluster_group_count(c), 2);
  ASSERT_STR_EQ(strata_cluster_gpu_model(strata_cluster_group(c, 1))->name,
                "Ascend-910B");
  strata_plan_opts_init(&o);
  o.quiet = 1;
  ASSERT_OK(strata_pipeline_plan(g, c, &o, &p));
  ASSERT(p->step_seconds > 0);
  strata_plan_destroy(p);
  p = NULL;
  strata_cluster_destroy(c);
  ASSERT_OK(strata_cluster_load("atlas-800t-a2:1", &c));
  o.precision = STRATA_PRECISION_FP8;
  ASSERT_EQ(strata_pipeline_plan(g, c, &o, &p), STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "Ascend 910B and 910C compute in BF16");
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

static const test_entry_t tests[] = {
    TEST_ENTRY(h100_nvlink_and_nics),
    TEST_ENTRY(dgx2_nvswitch_closure),
    TEST_ENTRY(p100_nvlink_pairs),
    TEST_ENTRY(mi300a_xgmi),
    TEST_ENTRY(mi250x_xgmi),
    TEST_ENTRY(a100_pci_only),
    TEST_ENTRY(node_levels),
    TEST_ENTRY(local_machine),
    TEST_ENTRY(bad_xml_files),
    TEST_ENTRY(gpu_table),
    TEST_ENTRY(fp8_gemm_curve_by_shape),
    TEST_ENTRY(gb200_rack_is_one_nvlink_domain),
    TEST_ENTRY(node_ranges),
    TEST_ENTRY(preset_dgx_h100),
    TEST_ENTRY(blackwell_ultra_presets),
    TEST_ENTRY(spec_with_unhealthy_nodes),
    TEST_ENTRY(spec_errors),
    TEST_ENTRY(spec_units),
    TEST_ENTRY(spec_implausible),
    TEST_ENTRY(spec_unknown_keys),
    TEST_ENTRY(osdev_without_name),
    TEST_ENTRY(costs_flat),
    TEST_ENTRY(costs_nccl_tests_a100),
    TEST_ENTRY(costs_hierarchical),
    TEST_ENTRY(costs_levels),
    TEST_ENTRY(costs_across_domains),
    TEST_ENTRY(links_achieved),
    TEST_ENTRY(stage_meshes),
    TEST_ENTRY(alloc_failures),
    TEST_ENTRY(mixed_groups),
    TEST_ENTRY(nodes_lost),
    TEST_ENTRY(ascend_npus),
};
TEST_MAIN(tests)
