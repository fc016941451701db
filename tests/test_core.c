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
  char dir[512], path[800];
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
  /* A name of 252 bytes, legal, too long for a ".XXXXXX" suffix: written
   * through a short temporary name beside it, none left. */
  char name[253];
  memset(name, 'n', 252);
  name[252] = '\0';
  snprintf(path, sizeof path, "%s/%s", dir, name);
  ASSERT_OK(strata_file_write_atomic(path, "long", 4));
  ASSERT_OK(strata_file_read(path, 0, &data, &len));
  ASSERT_STR_EQ(data, "long");
  strata_free(data);
  ASSERT_EQ(count_entries(dir), 2);
  /* An empty path is refused with a message, not renamed to. */
  ASSERT_EQ(strata_file_write_atomic("", "x", 1), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "an empty output path");
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
  const char *text = "{\"nics\": 1, \"leaf_size\": 2}";
  ASSERT_OK(st__json_parse(text, strlen(text), "t.json", &j));
  ASSERT(st__json_bad_key(j, known, &rep) == NULL);
  cJSON_Delete(j);
  text = "{\"nics\": 1, \"lattency_us\": 2}";
  ASSERT_OK(st__json_parse(text, strlen(text), "t.json", &j));
  ASSERT_STR_EQ(st__json_bad_key(j, known, &rep), "lattency_us");
  ASSERT_EQ(rep, 0);
  cJSON_Delete(j);
  /* st__json_parse refuses a repeated key (json_strict); a tree from
   * cJSON itself may still hold one */
  text = "{\"nics\": 1, \"leaf_size\": 2, \"nics\": 3}";
  ASSERT((j = cJSON_Parse(text)) != NULL);
  ASSERT_STR_EQ(st__json_bad_key(j, known, &rep), "nics");
  ASSERT_EQ(rep, 1);
  cJSON_Delete(j);
}

/* What RFC 8259 refuses and cJSON lets through; each message has line
 * and column. */
static void refused(const char *text, size_t len, const char *want) {
  cJSON *j = (cJSON *)1;
  ASSERT_EQ(st__json_parse(text, len, "t.json", &j), STRATA_EBADINPUT);
  ASSERT(j == NULL);
  ASSERT_CONTAINS(strata_last_error(), want);
}

TEST(json_strict) {
  cJSON *j;
  /* keys given twice: first value would win in cJSON, the last in Python */
  const char *t = "{\"a\": 1,\n \"b\": 2, \"a\": 3}";
  refused(t, strlen(t), "t.json: 'a' is given twice (line 2, column 10)");
  t = "{\"x\": [{\"k\": 1}, {\"k\": 1, \"k\": 2}]}";
  refused(t, strlen(t), "t.json: x[1]: 'k' is given twice (line 1, column 27)");
  t = "{\"o\": {\"p\": {\"q\": 1, \"q\": 2}}}";
  refused(t, strlen(t), "o.p: 'q' is given twice");
  /* a large object goes through the sorted check: the first repeat in
   * text order is named */
  char big[4096];
  size_t n = (size_t)snprintf(big, sizeof big, "{");
  for (int i = 0; i < 40; i++)
    n += (size_t)snprintf(big + n, sizeof big - n, "\"k%d\": %d, ", i, i);
  snprintf(big + n, sizeof big - n, "\"k30\": 0, \"k7\": 0}");
  refused(big, strlen(big), "'k30' is given twice (line 1, column");
  /* the same key in different objects is fine */
  t = "{\"a\": {\"k\": 1}, \"b\": {\"k\": 2}, \"k\": 3}";
  ASSERT_OK(st__json_parse(t, strlen(t), "t.json", &j));
  cJSON_Delete(j);
  /* data after the document, also after a NUL */
  t = "{\"a\": 1}\n{\"a\": 2}";
  refused(t, strlen(t),
          "t.json: data after the JSON document at line 2, "
          "column 1");
  refused("{\"a\": 1}\0x", 10,
          "data after the JSON document at line 1, "
          "column 9");
  t = "{\"a\": 1} \r\n\t ";
  ASSERT_OK(st__json_parse(t, strlen(t), "t.json", &j));
  cJSON_Delete(j);
  /* \u0000: cJSON ends the string there */
  t = "{\"xml\": \"p100.xml\\u0000evil\"}";
  refused(t, strlen(t), "an escaped NUL (\\u0000) at line 1, column 18");
  t = "{\"xml\": \"p100\\\\u0000.xml\"}"; /* a backslash, then u0000 */
  ASSERT_OK(st__json_parse(t, strlen(t), "t.json", &j));
  ASSERT_STR_EQ(cJSON_GetObjectItem(j, "xml")->valuestring, "p100\\u0000.xml");
  cJSON_Delete(j);
  /* raw control characters, in strings or between tokens */
  t = "{\"name\": \"a\nb\"}";
  refused(t, strlen(t),
          "raw control character (byte 0x0a) at line 1, "
          "column 12");
  t = "{\"a\":\x01 1}";
  refused(t, strlen(t), "raw control character (byte 0x01)");
  /* bytes that are not UTF-8, in a value or a key; valid UTF-8 passes */
  t = "{\"name\": \"ab\xff\"}";
  refused(t, strlen(t), "not UTF-8 (0xff) at line 1, column 13");
  t = "{\"n\xc3\": 1}";
  refused(t, strlen(t), "not UTF-8 (0xc3) at line 1, column 4");
  t = "{\"name\": \"\xed\xa0\x80\"}"; /* a surrogate */
  refused(t, strlen(t), "not UTF-8 (0xed)");
  t = "{\"name\": \"caf\xc3\xa9 \xe2\x82\xac \\u00e9\"}";
  ASSERT_OK(st__json_parse(t, strlen(t), "t.json", &j));
  cJSON_Delete(j);
}

/* Inputs are regular files: a FIFO, a device or a folder is refused at
 * once, without reading (a FIFO with no writer would block forever). */
TEST(file_read_regular) {
  char dir[512], path[800];
  char *data = NULL;
  size_t len;
  snprintf(dir, sizeof dir, "%s/regular", test_scratch_dir());
  mkdir(dir, 0755);
  snprintf(path, sizeof path, "%s/fifo", dir);
  ASSERT_EQ(mkfifo(path, 0600), 0);
  ASSERT_EQ(strata_file_read(path, 0, &data, &len), STRATA_EBADINPUT);
  ASSERT(data == NULL);
  ASSERT_CONTAINS(strata_last_error(), "fifo' is a FIFO, not a regular file");
  ASSERT_EQ(strata_file_read(dir, 0, &data, &len), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "is a directory, not a regular file");
  ASSERT_EQ(strata_file_read("/dev/zero", 0, &data, &len), STRATA_EBADINPUT);
  ASSERT_STR_EQ(strata_last_error(),
                "'/dev/zero' is a character device, not a regular file");
  /* a regular file over the limit is refused by its size, unread */
  snprintf(path, sizeof path, "%s/big", dir);
  ASSERT_OK(strata_file_write_atomic(path, "0123456789", 10));
  ASSERT_EQ(strata_file_read(path, 4, &data, &len), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "big' is larger than 4 bytes");
  ASSERT_OK(strata_file_read(path, 10, &data, &len));
  ASSERT_EQ(len, 10);
  strata_free(data);
}

static const test_entry_t tests[] = {
    TEST_ENTRY(error_names),       TEST_ENTRY(alloc_injection),
    TEST_ENTRY(hash_stable),       TEST_ENTRY(buf_printf),
    TEST_ENTRY(file_atomic),       TEST_ENTRY(json_errors),
    TEST_ENTRY(json_keys),         TEST_ENTRY(json_strict),
    TEST_ENTRY(file_read_regular),
};
TEST_MAIN(tests)
