/*
 * test_text.c - names as data (core/text.c): the name and host-name checks
 * at the borders, and each language's writer on the characters that could
 * end a string, a comment or a line there; the one "did you mean".
 */
#include "core/text.h"
#include "testlib.h"

static char *put(int (*fn)(strata_buf_t *, const char *), const char *s) {
  static char out[512];
  strata_buf_t b;
  strata_buf_init(&b);
  ASSERT_EQ(fn(&b, s), 0);
  snprintf(out, sizeof out, "%s", b.p ? b.p : "");
  strata_buf_free(&b);
  return out;
}

TEST(name_check) {
  ASSERT_EQ(st__name_check("llama3-405b", "name", "t"), 0);
  ASSERT_EQ(st__name_check("Cluster \xc3\xa9t\xc3\xa9 / 2", "name", "t"), 0);
  ASSERT_EQ(st__name_check("", "name", "t"), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "t: name is empty");
  ASSERT_EQ(st__name_check("a\nb", "'name'", "spec.json"), STRATA_EBADINPUT);
  ASSERT_STR_EQ(strata_last_error(),
                "spec.json: 'name' holds a control character (U+000A at "
                "offset 1); names are printable text");
  ASSERT_EQ(st__name_check("x\x1b[2J", "name", "t"), STRATA_EBADINPUT);
  ASSERT_EQ(st__name_check("x\x7f", "name", "t"), STRATA_EBADINPUT);
  ASSERT_EQ(st__name_check("x\xc2\x85", "name", "t"), STRATA_EBADINPUT);
  ASSERT_EQ(st__name_check("x\xe2\x80\xa8", "name", "t"), STRATA_EBADINPUT);
  ASSERT_EQ(st__name_check("bad\xff", "name", "t"), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(),
                  "not valid UTF-8 (byte 0xff at offset 3)");
  ASSERT_EQ(st__name_check("\xc0\xaf", "name", "t"),
            STRATA_EBADINPUT); /* overlong */
  ASSERT_EQ(st__name_check("\xed\xa0\x80", "name", "t"),
            STRATA_EBADINPUT); /* surrogate */
  char longname[ST__NAME_MAX + 2];
  memset(longname, 'a', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  ASSERT_EQ(st__name_check(longname, "name", "t"), STRATA_EBADINPUT);
  longname[ST__NAME_MAX] = '\0';
  ASSERT_EQ(st__name_check(longname, "name", "t"), 0);
}

TEST(hostnames) {
  static const char *const good[] = {
      "node01", "gpu-a100-7.cluster.example.com", "a", "1", "x-1.y-2", "A0"};
  static const char *const bad[] = {
      "",      "-a",       "a-",   "a..b",
      ".a",    "a.",       "a b",  "a;b",
      "$(id)", "`id`",     "a\nb", "a_b",
      "a:1",   "\xc3\xa9", "a.-b", "evil slots=8\nattacker.example.com"};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++)
    ASSERT(st__hostname_valid(good[i]));
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    ASSERT(!st__hostname_valid(bad[i]));
  char label[70];
  memset(label, 'a', 63);
  label[63] = '\0';
  ASSERT(st__hostname_valid(label));
  label[63] = 'a', label[64] = '\0';
  ASSERT(!st__hostname_valid(label));
  ASSERT_EQ(st__hostname_check("x;id>P", "host", "h.xml"), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(),
                  "h.xml: host 'x;id>P' is not a host name (RFC 1123");
}

TEST(writers) {
  ASSERT_STR_EQ(put(st__put_sh, "it's $(id) `x`"), "'it'\\''s $(id) `x`'");
  ASSERT_STR_EQ(put(st__put_sh, NULL), "''");
  ASSERT_STR_EQ(put(st__put_py, "a\"\"\"b\\\n\x01"),
                "\"a\\\"\\\"\\\"b\\\\\\n\\u0001\"");
  ASSERT_STR_EQ(put(st__put_py, "\xff\xc3\xa9"), "\"\xef\xbf\xbd\xc3\xa9\"");
  ASSERT_STR_EQ(put(st__put_toml, "k\"\n[job]\x7f"),
                "\"k\\\"\\n[job]\\u007F\"");
  ASSERT_STR_EQ(put(st__put_plain, "a\nb\\\x1b[2J\xff"),
                "a\\x0ab\\\\\\x1b[2J\\xff");
  ASSERT_STR_EQ(put(st__put_pydoc, "\"\"\"\n"), "\\\"\\\"\\\"\\x0a");
  ASSERT_STR_EQ(put(st__put_html, "<a href='x'>&\"</a>\xff"),
                "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;\xef\xbf\xbd");
  char small[8];
  ASSERT_STR_EQ(
      st__plain("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", small, sizeof small),
      "\xc3\xa9\xc3\xa9\xc3\xa9"); /* cut at a character */
  char *fixed = st__utf8_fix("a\xffz");
  ASSERT_STR_EQ(fixed, "a\xef\xbf\xbdz");
  strata_free(fixed);
  ASSERT(st__utf8_valid("\xf0\x9f\x98\x80", 4));
  ASSERT(!st__utf8_valid("\xf4\x90\x80\x80", 4)); /* past U+10FFFF */
}

/* The one "did you mean" (core/text.c): Damerau-Levenshtein (a swap of
 * neighbours is one edit), letters without case, offered within a third
 * of the longer name; a far name is not offered at all. */
TEST(did_you_mean) {
  static const char *const known[] = {"latency_us", "leaf_size", "nics", NULL};
  static const char *const jobs[] = {"name",   "model",     "global_batch",
                                     "weight", "min_nodes", "max_nodes",
                                     NULL};
  static const char *const opts[] = {"global-batch", "micro-batch", "tp", "pp",
                                     NULL};
  ASSERT_EQ(st__text_distance("kitten", "sitting"), 3);
  ASSERT_EQ(st__text_distance("", "abc"), 3);
  ASSERT_EQ(st__text_distance("nics", "nics"), 0);
  ASSERT_EQ(st__text_distance("plna", "plan"), 1); /* a swap */
  ASSERT_EQ(st__text_distance("wieght", "weight"), 1);
  ASSERT_EQ(st__text_distance("LLaMA3-8B", "llama3-8b"), 0);
  ASSERT_EQ(st__text_distance("ca", "abc"), 3); /* no edit of a swapped pair */
  ASSERT_STR_EQ(st__did_you_mean("latncy_us", known), "latency_us");
  ASSERT_STR_EQ(st__did_you_mean("nic", known), "nics");
  ASSERT_STR_EQ(st__did_you_mean("global-bach", opts), "global-batch");
  ASSERT_STR_EQ(st__did_you_mean("wieght", jobs), "weight");
  ASSERT(st__did_you_mean("seq", jobs) == NULL); /* "name" is 4 away */
  ASSERT(st__did_you_mean("leaiption", known) == NULL);
  ASSERT_STR_EQ(st__did_you_mean("tq", opts), "tp"); /* 1 edit of 2 */
  ASSERT(st__did_you_mean("", opts) == NULL);
  ASSERT(st__did_you_mean("x", NULL) == NULL);
}

/* Figures in tables: plain decimals, never an exponent. */
TEST(plain_figures) {
  char b[64];
  ASSERT_STR_EQ(st__fmt_num(4056390.2, 0, b, sizeof b), "4056390");
  ASSERT_STR_EQ(st__fmt_num(1e6, 3, b, sizeof b), "1000000");
  ASSERT_STR_EQ(st__fmt_num(2.5, 3, b, sizeof b), "2.5");
  ASSERT_STR_EQ(st__fmt_num(0.126, 2, b, sizeof b), "0.13");
  ASSERT_STR_EQ(st__fmt_num(2.30316500647e11, 0, b, sizeof b), "230316500647");
  ASSERT_STR_EQ(st__fmt_num(-0.0001, 2, b, sizeof b), "0");
  ASSERT_STR_EQ(st__fmt_num(NAN, 2, b, sizeof b), "-");
}

static const test_entry_t tests[] = {
    TEST_ENTRY(name_check),   TEST_ENTRY(hostnames),     TEST_ENTRY(writers),
    TEST_ENTRY(did_you_mean), TEST_ENTRY(plain_figures),
};
TEST_MAIN(tests)
