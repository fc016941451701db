/*
 * test_core.c - errors, allocation fault injection, hashing, buffers,
 * atomic files, JSON helpers.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <dirent.h>

#include "core/json.h"
#include "strata/strata.h"
#include "testlib.h"

TEST(error_names) {
  ASSERT_STR_EQ(strata_err_name(STRATA_EBADINPUT), "EBADINPUT");
  ASSERT_STR_EQ(strata_strerror(STRATA_EINFEASIBLE), "infeasible");
  ASSERT_EQ(strata_error(STRATA_EIO, "x %d", 3), STRATA_EIO);
  ASSERT_STR_EQ(strata_last_error(), "x 3");
  strata_error_prefix("file.json");
  ASSERT_STR_EQ(strata_last_error(), "file.json: x 3");
}

TEST(alloc_injection) {
  strata_alloc_fail_at(2);
  void *a = strata_malloc(8);
  void *b = strata_malloc(8);
  ASSERT(a != NULL);
  ASSERT(b == NULL);
  ASSERT(strata_alloc_failed());
  strata_alloc_fail_at(0);
  b = strata_malloc(8);
  ASSERT(b != NULL);
  strata_free(a);
  strata_free(b);
}

TEST(hash_stable) {
  strata_hash_t h1, h2;
  strata_hash_init(&h1, 1);
  strata_hash_init(&h2, 1);
  strata_hash_u64(&h1, 42);
  strata_hash_str(&h1, "layer");
  strata_hash_u64(&h2, 42);
  strata_hash_str(&h2, "layer");
  ASSERT_EQ(strata_hash_final(&h1), strata_hash_final(&h2));
  strata_hash_f64(&h2, 0.5);
  ASSERT(strata_hash_final(&h1) != strata_hash_final(&h2));
  /* XXH64 of "" with seed 0 is a published constant. */
  ASSERT_EQ(strata_hash64("", 0, 0), (long long)0xEF46DB3751D8E999ULL);
  ASSERT_EQ(strata_crc32("123456789", 9), 0xCBF43926u);
}

TEST(buf_printf) {
  strata_buf_t b;
  strata_buf_init(&b);
  ASSERT_OK(strata_buf_printf(&b, "%d-%s", 7, "x"));
  ASSERT_OK(strata_buf_puts(&b, "yz"));
  ASSERT_STR_EQ(b.p, "7-xyz");
  ASSERT_EQ(b.len, 5);
  strata_buf_free(&b);
}

static int count_entries(const char *dir) {
  int n = 0;
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (e->d_name[0] != '.') n++;
  if (d) closedir(d);
  return n;
}

TEST(file_atomic) {
  char dir[512], path[600];
  snprintf(dir, sizeof dir, "%s/atomic", test_scratch_dir());
  mkdir(dir, 0755);
  snprintf(path, sizeof path, "%s/out.txt", dir);
  ASSERT_OK(strata_file_write_atomic(path, "hello", 5));
  char *data;
  size_t len;
  ASSERT_OK(strata_file_read(path, 0, &data, &len));
  ASSERT_EQ(len, 5);
  ASSERT_STR_EQ(data, "hello");
  strata_free(data);
  ASSERT_EQ(count_entries(dir), 1); /* no temporary left */
  /* A folder that does not exist: clean error, nothing written. */
  snprintf(path, sizeof path, "%s/missing/out.txt", dir);
  ASSERT(strata_file_write_atomic(path, "x", 1) < 0);
  ASSERT_CONTAINS(strata_last_error(), "missing/out.txt");
  ASSERT_EQ(strata_file_read("/nonexistent/strata", 0, &data, &len),
            STRATA_ENOTFOUND);
}

TEST(json_errors) {
  cJSON *j;
  const char *text = "{\n  \"a\": 1,\n  \"b\": tru\n}";
  ASSERT_EQ(st__json_parse(text, strlen(text), "t.json", &j), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "line 3");
  text = "{\"a\": 1.5, \"s\": \"x\"}";
  ASSERT_OK(st__json_parse(text, strlen(text), "t.json", &j));
  int64_t v;
  ASSERT_EQ(st__json_int(j, "a", "t.json", 1, &v), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "'a' must be an integer");
  ASSERT_EQ(st__json_int(j, "zz", "t.json", 0, &v), STRATA_ENOTFOUND);
  ASSERT_EQ(st__json_int(j, "zz", "t.json", 1, &v), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "missing required field 'zz'");
  cJSON_Delete(j);
}

TEST(json_keys) {
  static const char *const known[] = {"latency_us", "leaf_size", "nics", NULL};
  cJSON *j;
  int rep;
  ASSERT_EQ(st__edit_distance("kitten", "sitting"), 3);
  ASSERT_EQ(st__edit_distance("", "abc"), 3);
  ASSERT_EQ(st__edit_distance("nics", "nics"), 0);
  ASSERT_STR_EQ(st__nearest("latncy_us", known), "latency_us");
  ASSERT_STR_EQ(st__nearest("nic", known), "nics");
  const char *text = "{\"nics\": 1, \"leaf_size\": 2}";
  ASSERT_OK(st__json_parse(text, strlen(text), "t.json", &j));
  ASSERT(st__json_bad_key(j, known, &rep) == NULL);
  cJSON_Delete(j);
  text = "{\"nics\": 1, \"lattency_us\": 2}";
  ASSERT_OK(st__json_parse(text, strlen(text), "t.json", &j));
  ASSERT_STR_EQ(st__json_bad_key(j, known, &rep), "lattency_us");
  ASSERT_EQ(rep, 0);
  cJSON_Delete(j);
  text = "{\"nics\": 1, \"leaf_size\": 2, \"nics\": 3}";
  ASSERT_OK(st__json_parse(text, strlen(text), "t.json", &j));
  ASSERT_STR_EQ(st__json_bad_key(j, known, &rep), "nics");
  ASSERT_EQ(rep, 1);
  cJSON_Delete(j);
}

static const test_entry_t tests[] = {
    TEST_ENTRY(error_names), TEST_ENTRY(alloc_injection),
    TEST_ENTRY(hash_stable), TEST_ENTRY(buf_printf),
    TEST_ENTRY(file_atomic), TEST_ENTRY(json_errors),
    TEST_ENTRY(json_keys),
};
TEST_MAIN(tests)
