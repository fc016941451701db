/*
 * test_collect.c - a cluster spec from hosts' hwloc exports
 * (topo/collect.c) and drain lists (topo/drainlist.c), on the real
 * topologies of tests/data/shared/topologies: hosts grouped by shape
 * under host ranges that expand back to them, the spec read by the
 * planner's own reader, and the drain-list formats with their refusals.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strata/strata.h"
#include "testlib.h"

#define TOPO(f) STRATA_SHARED_DIR "/topologies/" f
#define P100 STRATA_SOURCE_DIR "/tests/data/topo/p100.xml"
#define H100 TOPO("flux-core_ipa20_4xH100_NVLink.xml")

static char scratch[64];

/* A folder of HOST.xml files: copies of src for each host. */
static void make_hosts(const char *src, const char *const *hosts, int n) {
  char *xml = NULL;
  size_t len;
  ASSERT_OK(strata_file_read(src, 0, &xml, &len));
  for (int i = 0; i < n; i++) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s.xml", scratch, hosts[i]);
    ASSERT_OK(strata_file_write_atomic(path, xml, len));
  }
  strata_free(xml);
}

static void paths_of(const char *const *hosts, int n, char (*p)[256],
                     const char **v) {
  for (int i = 0; i < n; i++) {
    snprintf(p[i], 256, "%s/%s.xml", scratch, hosts[i]);
    v[i] = p[i];
  }
}

static void setup(void) {
  snprintf(scratch, sizeof scratch, "/tmp/strata-collect-XXXXXX");
  ASSERT(mkdtemp(scratch));
}

static void teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
  ASSERT_EQ(system(cmd), 0);
}

/* The spec, written in the scratch folder and loaded as the planner
 * would: its usable nodes' names in order, joined by ','. */
static strata_cluster_t *load_spec(const char *spec) {
  char path[128];
  strata_cluster_t *c = NULL;
  snprintf(path, sizeof path, "%s/cluster.json", scratch);
  ASSERT_OK(strata_file_write_atomic(path, spec, strlen(spec)));
  ASSERT_OK(strata_cluster_load(path, &c));
  return c;
}

TEST(groups_and_ranges) {
  /* given out of order, with a gap, a padded and an unpadded family */
  const char *hosts[] = {"node010", "node002", "node001", "node003",
                         "node007", "gpu9",    "gpu10",   "gpu11"};
  char p[8][256];
  const char *v[8];
  char *spec = NULL;
  strata_collect_opts_t o;
  setup();
  make_hosts(P100, hosts, 8);
  paths_of(hosts, 8, p, v);
  strata_collect_opts_init(&o);
  o.spec_dir = scratch;
  o.nic_gbits = 400;
  o.name = "pod";
  ASSERT_OK(strata_topo_collect(v, 8, &o, &spec, NULL));
  ASSERT_CONTAINS(spec, "\"names\":\t\"gpu[9-11]\"");
  ASSERT_CONTAINS(spec, "\"xml\":\t\"gpu9.xml\"");
  ASSERT_CONTAINS(spec, "\"names\":\t\"node[001-003,007,010]\"");
  ASSERT_CONTAINS(spec, "\"xml\":\t\"node001.xml\"");
  strata_cluster_t *c = load_spec(spec);
  ASSERT_EQ(strata_cluster_nodes(c), 8);
  ASSERT_EQ(strata_cluster_gpus_per_node(c), 4);
  ASSERT_STR_EQ(strata_cluster_name(c), "pod");
  ASSERT_STR_EQ(strata_cluster_node_name(c, 0), "gpu9");
  ASSERT_STR_EQ(strata_cluster_node_name(c, 2), "gpu11");
  ASSERT_STR_EQ(strata_cluster_node_name(c, 3), "node001");
  ASSERT_STR_EQ(strata_cluster_node_name(c, 7), "node010");
  /* 400 Gb/s = 50 GB/s per NIC; the P100 node has one NIC for 4 GPUs */
  ASSERT_NEAR(strata_cluster_level(c, strata_cluster_level_count(c) - 1)
                  ->nominal_bandwidth,
              50e9 / 4, 1e-9, 0);
  strata_cluster_destroy(c);
  strata_free(spec);
  teardown();
}

TEST(different_shapes_are_different_groups) {
  const char *a[] = {"n1", "n2", "n4"}, *b[] = {"n3"};
  const char *all[] = {"n1", "n2", "n3", "n4"};
  char p[4][256];
  const char *v[4];
  char *spec = NULL;
  strata_collect_opts_t o;
  setup();
  make_hosts(P100, a, 3);
  make_hosts(H100, b, 1);
  paths_of(all, 4, p, v);
  strata_collect_opts_init(&o);
  o.spec_dir = scratch;
  o.nic_gbits = 200;
  ASSERT_OK(strata_topo_collect(v, 4, &o, &spec, NULL));
  /* n3 breaks the run of P100 hosts; it is its own group */
  ASSERT_CONTAINS(spec, "\"names\":\t\"n[1-2,4]\"");
  ASSERT_CONTAINS(spec, "\"names\":\t\"n3\"");
  strata_free(spec);
  teardown();
}

/* A spec's range holds at most 64 runs: 70 hosts with gaps take two
 * groups, in order. */
TEST(many_runs_split) {
  char names[70][16], p[70][256];
  const char *hosts[70], *v[70];
  char *spec = NULL;
  strata_collect_opts_t o;
  setup();
  for (int i = 0; i < 70; i++) {
    snprintf(names[i], sizeof names[i], "n%d", 2 * i + 1);
    hosts[i] = names[i];
  }
  make_hosts(P100, hosts, 70);
  paths_of(hosts, 70, p, v);
  strata_collect_opts_init(&o);
  o.spec_dir = scratch;
  o.nic_gbits = 100;
  ASSERT_OK(strata_topo_collect(v, 70, &o, &spec, NULL));
  ASSERT_CONTAINS(spec, ",127]\"");
  ASSERT_CONTAINS(spec, "\"names\":\t\"n[129,131,133,135,137,139]\"");
  strata_cluster_t *c = load_spec(spec);
  ASSERT_EQ(strata_cluster_nodes(c), 70);
  ASSERT_STR_EQ(strata_cluster_node_name(c, 63), "n127");
  ASSERT_STR_EQ(strata_cluster_node_name(c, 64), "n129");
  strata_cluster_destroy(c);
  strata_free(spec);
  teardown();
}

TEST(unhealthy_hosts_and_refusals) {
  const char *hosts[] = {"node001", "node002", "node003"};
  const char *bad[] = {"node002", "node099", "node002"};
  char p[3][256];
  const char *v[3];
  char *spec = NULL;
  int ignored = -1;
  strata_collect_opts_t o;
  setup();
  make_hosts(P100, hosts, 3);
  paths_of(hosts, 3, p, v);
  strata_collect_opts_init(&o);
  o.spec_dir = scratch;
  ASSERT_EQ(strata_topo_collect(v, 3, &o, &spec, NULL), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "pass --nic-gbits N");
  o.nic_gbits = 100;
  o.unhealthy = bad;
  o.n_unhealthy = 3;
  ASSERT_OK(strata_topo_collect(v, 3, &o, &spec, &ignored));
  ASSERT_EQ(ignored, 1);
  ASSERT_CONTAINS(spec, "\"nodes\":\t[\"node002\"]");
  strata_cluster_t *c = load_spec(spec);
  ASSERT_EQ(strata_cluster_nodes(c), 2);
  ASSERT_CONTAINS(strata_cluster_spec_node_dropped(c, 1), "unhealthy");
  strata_cluster_destroy(c);
  strata_free(spec);
  /* the same host twice; a file that is no topology */
  const char *twice[] = {v[0], v[0]};
  ASSERT_EQ(strata_topo_collect(twice, 2, &o, &spec, NULL), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "host 'node001' is given twice");
  const char *nogpu[] = {STRATA_SOURCE_DIR "/tests/data/topo/nogpu.xml"};
  ASSERT_EQ(strata_topo_collect(nogpu, 1, &o, &spec, NULL), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "no GPUs found");
  teardown();
}

static void expect_names(const char *text, const char *want) {
  char **v = NULL, joined[512] = "";
  int n = 0;
  ASSERT_OK(strata_drain_list_parse(text, strlen(text), "list", &v, &n));
  for (int i = 0; i < n; i++) {
    strncat(joined, i ? "," : "", sizeof joined - strlen(joined) - 1);
    strncat(joined, v[i], sizeof joined - strlen(joined) - 1);
  }
  strata_names_free(v, n);
  ASSERT_STR_EQ(joined, want);
}

TEST(drain_lists) {
  /* sinfo -R, with its header and a reason of several words */
  expect_names("REASON               USER      TIMESTAMP           NODELIST\n"
               "Not responding       slurm     2025-03-01T10:00:00 "
               "node[002,005-006]\n"
               "GPU XID 79           root      Unknown             gpu7\n",
               "node002,node005,node006,gpu7");
  /* sinfo -N -h -o "%N %T": only the hosts out of service */
  expect_names("node001 idle\nnode002 drained\nnode003 mixed\n"
               "node004 down*\nnode005 allocated\nnode006 idle~\n"
               "node007 mixed+drain\nnode008 draining\n",
               "node002,node004,node006,node007,node008");
  /* one host list a line, comments and blank lines */
  expect_names("# drained by hand\n\nnode[010-011],login1\n",
               "node010,node011,login1");
  char **v = NULL;
  int n = 0;
  const char *bad = "node001 idle\nnode002 sleepy\n";
  ASSERT_EQ(strata_drain_list_parse(bad, strlen(bad), "d.txt", &v, &n),
            STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "d.txt:2: not a drain list line");
  const char *range = "node[005-001]\n";
  ASSERT_EQ(strata_drain_list_parse(range, strlen(range), "d.txt", &v, &n),
            STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "d.txt:1");
  ASSERT_CONTAINS(strata_last_error(), "goes backwards");
  ASSERT(!v);
  /* no more hosts than a spec may hold, however many lines */
  const char *huge = "n[000000-999999]\nm[0-1]\n";
  ASSERT_EQ(strata_drain_list_parse(huge, strlen(huge), "d.txt", &v, &n),
            STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "d.txt:2: the drain list names more "
                                       "than 1000000 hosts");
}

/* This machine: its XML when hwloc sees a GPU (read back, it has one),
 * else the reader's refusal -- either way nothing half done. */
TEST(local_machine) {
  char *xml = NULL;
  size_t len = 0;
  int rc = strata_node_export_local(&xml, &len);
  if (rc) {
    ASSERT_EQ(rc, STRATA_EBADINPUT);
    ASSERT_CONTAINS(strata_last_error(), "no GPUs found in the local machine");
    ASSERT(!xml);
    return;
  }
  char path[128];
  strata_node_topo_t *n = NULL;
  setup();
  snprintf(path, sizeof path, "%s/local.xml", scratch);
  ASSERT_OK(strata_file_write_atomic(path, xml, len));
  ASSERT_OK(strata_node_load_xml(path, &n));
  ASSERT(strata_node_gpu_count(n) >= 1);
  strata_node_destroy(n);
  strata_free(xml);
  teardown();
}

/* Fail the Nth allocation until collecting succeeds: each failure clean. */
TEST(allocation_failures) {
  const char *hosts[] = {"node001", "node002", "node004"};
  const char *bad[] = {"node002"};
  char p[3][256];
  const char *v[3];
  strata_collect_opts_t o;
  setup();
  make_hosts(P100, hosts, 3);
  paths_of(hosts, 3, p, v);
  strata_collect_opts_init(&o);
  o.spec_dir = scratch;
  o.nic_gbits = 100;
  o.unhealthy = bad;
  o.n_unhealthy = 1;
  for (long k = 1;; k++) {
    char *spec = NULL, **names = NULL;
    int n = 0;
    const char *list = "node[001-002] drained\n";
    strata_alloc_fail_at(k);
    int rc = strata_topo_collect(v, 3, &o, &spec, NULL);
    if (!rc) rc = strata_drain_list_parse(list, strlen(list), "x", &names, &n);
    int failed = strata_alloc_failed();
    strata_alloc_fail_at(0);
    strata_free(spec);
    strata_names_free(names, n);
    if (!failed) {
      ASSERT_OK(rc);
      break;
    }
    ASSERT_EQ(rc, STRATA_ENOMEM);
    ASSERT(k < 100000);
  }
  teardown();
}

static const test_entry_t tests[] = {
    TEST_ENTRY(groups_and_ranges),
    TEST_ENTRY(different_shapes_are_different_groups),
    TEST_ENTRY(many_runs_split),
    TEST_ENTRY(unhealthy_hosts_and_refusals),
    TEST_ENTRY(drain_lists),
    TEST_ENTRY(local_machine),
    TEST_ENTRY(allocation_failures),
};
TEST_MAIN(tests)
