/*
 * testlib.c - the runner behind testlib.h.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "strata/strata.h"
#include "testlib.h"

jmp_buf test_jmp;
static char scratch[256];

void test_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "  %s:%d: ", file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  longjmp(test_jmp, 1);
}

const char *test_source_dir(void) {
  return STRATA_SOURCE_DIR;
}

const char *test_shared_dir(void) {
  const char *e = getenv("STRATA_SHARED_DIR");
  return e && *e ? e : STRATA_SHARED_DIR;
}

static void remove_scratch(void) {
  if (scratch[0]) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", scratch);
  }
}

const char *test_scratch_dir(void) {
  if (!scratch[0]) {
    snprintf(scratch, sizeof scratch, "/tmp/strata-test-XXXXXX");
    if (!mkdtemp(scratch)) {
      perror("mkdtemp");
      exit(2);
    }
    atexit(remove_scratch);
  }
  return scratch;
}

static int selected(int argc, char **argv, const char *name) {
  if (argc < 2) return 1;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], name)) return 1;
  return 0;
}

int test_main(int argc, char **argv, const test_entry_t *tests, size_t n) {
  volatile int passed = 0, failed = 0;
  strata_init();
  for (size_t i = 0; i < n; i++) {
    if (!selected(argc, argv, tests[i].name)) continue;
    strata_alloc_fail_at(0);
    strata_error_clear();
    if (setjmp(test_jmp) == 0) {
      tests[i].fn();
      printf("ok   %s\n", tests[i].name);
      passed++;
    } else {
      printf("FAIL %s\n", tests[i].name);
      failed++;
    }
    fflush(stdout);
  }
  strata_alloc_fail_at(0);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
