/*
 * fuzz_drainlist.c - the drain-list reader (strata_drain_list_parse) on
 * arbitrary text.
 *
 * Whatever it accepts must be host names a spec can hold: not empty, no
 * space, tab or newline in them.  Written back one a line -- the plain
 * form the reader takes -- they must read back as the same list, unless
 * a name would read as something else on a line of its own (a comment,
 * a header word, a host range).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "strata/strata.h"

static void check(int ok, const char *what) {
  if (ok) return;
  fprintf(stderr, "fuzz_drainlist: %s\n", what);
  abort();
}

static int plain(const char *n) {
  return n[0] != '#' && !strpbrk(n, "[],") && strcmp(n, "REASON") &&
         strcmp(n, "NODELIST") && strcmp(n, "HOSTNAMES");
}

static void round_trip(char **v, int n) {
  strata_buf_t b;
  char **w = NULL;
  int m = 0;
  strata_buf_init(&b);
  for (int i = 0; i < n; i++) {
    if (!plain(v[i])) {
      strata_buf_free(&b);
      return;
    }
    strata_buf_printf(&b, "%s\n", v[i]);
  }
  if (b.oom || strata_drain_list_parse(b.p ? b.p : "", b.len, "x", &w, &m)) {
    strata_buf_free(&b);
    check(0, "the names do not read back");
  }
  check(m == n, "another number of names read back");
  for (int i = 0; i < n; i++)
    check(!strcmp(v[i], w[i]), "another name read back");
  strata_names_free(w, m);
  strata_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char **v = NULL;
  int n = 0;
  fuzz_setup();
  strata_error_clear();
  int rc = strata_drain_list_parse((const char *)data, size, "fuzz", &v, &n);
  if (rc) {
    check(v == NULL && n == 0, "a failed parse left names");
    check(strata_last_error()[0] != 0, "an error without a message");
    return 0;
  }
  for (int i = 0; i < n; i++)
    check(v[i][0] && !strpbrk(v[i], " \t\n"), "a name a spec cannot hold");
  round_trip(v, n);
  strata_names_free(v, n);
  return 0;
}
