/*
 * testlib.h - a small test harness in libuv's manner: each test is a
 * named function listed in one table; assertions print both values and
 * abandon the test (longjmp) so the rest still run.  A test binary runs
 * every test, or only those named on its command line, and ends with
 * "N passed, N failed".
 */
#ifndef STRATA_TESTLIB_H
#define STRATA_TESTLIB_H

#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  const char *name;
  void (*fn)(void);
} test_entry_t;

#define TEST(name) static void name(void)
#define TEST_ENTRY(name)                                                       \
  { #name, name }

extern jmp_buf test_jmp;
void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
int test_main(int argc, char **argv, const test_entry_t *tests, size_t n);
#define TEST_MAIN(table)                                                       \
  int main(int argc, char **argv) {                                            \
    return test_main(argc, argv, table, sizeof table / sizeof table[0]);       \
  }

#define ASSERT(c)                                                              \
  do {                                                                         \
    if (!(c)) test_fail(__FILE__, __LINE__, "assertion failed: %s", #c);       \
  } while (0)

#define ASSERT_EQ(a, b)                                                        \
  do {                                                                         \
    long long a_ = (long long)(a), b_ = (long long)(b);                        \
    if (a_ != b_)                                                              \
      test_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, a_, b_); \
  } while (0)

#define ASSERT_STR_EQ(a, b)                                                    \
  do {                                                                         \
    const char *a_ = (a), *b_ = (b);                                           \
    if (!a_ || !b_ || strcmp(a_, b_) != 0)                                     \
      test_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", #a, #b,      \
                a_ ? a_ : "(null)", b_ ? b_ : "(null)");                       \
  } while (0)

#define ASSERT_CONTAINS(hay, needle)                                           \
  do {                                                                         \
    const char *h_ = (hay), *n_ = (needle);                                    \
    if (!h_ || !strstr(h_, n_))                                                \
      test_fail(__FILE__, __LINE__, "%s does not contain \"%s\": \"%s\"",      \
                #hay, n_, h_ ? h_ : "(null)");                                 \
  } while (0)

/* |a - b| <= rel * max(|a|, |b|) + abs_tol */
#define ASSERT_NEAR(a, b, rel, abs_tol)                                        \
  do {                                                                         \
    double a_ = (double)(a), b_ = (double)(b);                                 \
    double m_ = fabs(a_) > fabs(b_) ? fabs(a_) : fabs(b_);                     \
    if (!(fabs(a_ - b_) <= (rel)*m_ + (abs_tol)))                              \
      test_fail(__FILE__, __LINE__, "%s ~= %s: %.10g vs %.10g (rel %.3g)", #a, \
                #b, a_, b_, m_ > 0 ? fabs(a_ - b_) / m_ : 0.0);                \
  } while (0)

#define ASSERT_OK(expr)                                                        \
  do {                                                                         \
    int rc_ = (expr);                                                          \
    if (rc_ != 0)                                                              \
      test_fail(__FILE__, __LINE__, "%s returned %d: %s", #expr, rc_,          \
                strata_last_error());                                          \
  } while (0)

/* Paths of the source tree and of the reference data the tests read
 * (tests/data/shared: real hwloc XML files of GPU nodes, Megatron-LM flag
 * names, DeepSpeed config keys; STRATA_SHARED_DIR overrides it). */
const char *test_source_dir(void);
const char *test_shared_dir(void);
/* A fresh scratch directory for this test binary (removed at exit). */
const char *test_scratch_dir(void);

#endif
