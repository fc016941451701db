/*
 * error.c - error codes and the per-thread error message.
 *
 * The message lives in thread-local storage: libuv pool workers report
 * failures without locks and without overwriting the loop thread's text.
 */
#include <stdio.h>
#include <string.h>

#include "strata/core.h"

#define MSG_MAX 2048

static _Thread_local char last_msg[MSG_MAX];

const char *strata_strerror(int err) {
  switch (err) {
#define STRATA_ERR_DESC_(name, val, desc)                                      \
  case val:                                                                    \
    return desc;
    STRATA_ERRNO_MAP(STRATA_ERR_DESC_)
#undef STRATA_ERR_DESC_
  }
  return "unknown error";
}

const char *strata_err_name(int err) {
  switch (err) {
#define STRATA_ERR_NAME_(name, val, desc)                                      \
  case val:                                                                    \
    return #name;
    STRATA_ERRNO_MAP(STRATA_ERR_NAME_)
#undef STRATA_ERR_NAME_
  }
  return "EUNKNOWN";
}

int strata_verror(int err, const char *fmt, va_list ap) {
  vsnprintf(last_msg, sizeof last_msg, fmt, ap);
  return err;
}

int strata_error(int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  strata_verror(err, fmt, ap);
  va_end(ap);
  return err;
}

void strata_error_prefix(const char *fmt, ...) {
  char prefix[512], old[MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, last_msg, sizeof old);
  size_t n = strlen(prefix);
  if (n + 2 >= sizeof last_msg) return;
  memcpy(last_msg, prefix, n);
  memcpy(last_msg + n, ": ", 2);
  size_t room = sizeof last_msg - n - 3;
  size_t m = strnlen(old, room);
  memcpy(last_msg + n + 2, old, m);
  last_msg[n + 2 + m] = '\0';
}

const char *strata_last_error(void) {
  return last_msg;
}

void strata_error_clear(void) {
  last_msg[0] = '\0';
}
