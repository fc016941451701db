/*
 * fuzz_drainlist.c - the drain-list reader (strata_drain_list_parse) on
 * arbitrary text.
 *
 * Whatever it accepts must be host names a spec can hold: not empty, no
 * space, tab or newline in them.  Written back one a line -- the plain
 * form the reader takes -- they must read back as the same list, unless
 * a name would read as something else on a line of its own (a comment,
 * a header word, a host range).
 *
 * An input whose host ranges could name more than HOSTS_BOUND hosts is
 * passed over: 13 bytes ("[1-816401]0jo") expand to 816,401 hosts, which
 * took this build 9.3 s (every name allocated, checked, written and read
 * back under the sanitizers) and hit libFuzzer's timeout in a campaign.
 * The reader is linear in the hosts (0.37 s for that input in a release
 * build), and its cap of 1,000,000 hosts is test_collect's
 * drain_lists; what the fuzzer looks for is in the shapes of the text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "strata/strata.h"

#define HOSTS_BOUND 20000

/* At least as many hosts as the input's ranges can name: each "A-B" of
 * digits counts B - A + 1 (a number of over 9 digits, or a sum past the
 * bound, is over it), and any other name 1 -- an over-estimate, so an
 * input under the bound is cheap whatever the reader makes of it. */
static int too_many_hosts(const uint8_t *d, size_t n) {
  double hosts = 0;
  for (size_t i = 0; i < n && hosts <= HOSTS_BOUND;) {
    if (d[i] < '0' || d[i] > '9') {
      i++;
      continue;
    }
    double a = 0, b = 0;
    size_t j = i, k;
    for (; j < n && d[j] >= '0' && d[j] <= '9' && j - i < 10; j++)
      a = 10 * a + (d[j] - '0');
    if (j - i >= 10) return 1;
    if (j + 1 >= n || d[j] != '-' || d[j + 1] < '0' || d[j + 1] > '9') {
      hosts += 1;
      i = j;
      continue;
    }
    for (k = j + 1; k < n && d[k] >= '0' && d[k] <= '9' && k - j < 11; k++)
      b = 10 * b + (d[k] - '0');
    if (k - j >= 11) return 1;
    hosts += b >= a ? b - a + 1 : 1;
    i = k;
  }
  return hosts > HOSTS_BOUND;
}

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
  if (too_many_hosts(data, size)) return 0;
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
