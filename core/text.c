/*
 * text.c - names as data (text.h): the checks a name from an input passes
 * where it is read, and one writer per language a name is written into.
 *
 * Every exporter writes a name through exactly one of the writers below;
 * none writes a name with "%s".  The writers do not rely on the checks:
 * a name that reached them unchecked is still quoted.  At the end, the
 * one "did you mean" every message about a misspelt name uses.
 */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/text.h"

/* One UTF-8 character at s (at most n bytes): its length and code point,
 * or 0 when the bytes there are not a valid, shortest-form character. */
static size_t utf8_char(const unsigned char *s, size_t n, uint32_t *cp) {
  uint32_t c = s[0], min;
  size_t len;
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  if ((c & 0xe0) == 0xc0) {
    len = 2, c &= 0x1f, min = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3, c &= 0x0f, min = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4, c &= 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (len > n) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    c = (c << 6) | (s[i] & 0x3f);
  }
  if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
  *cp = c;
  return len;
}

static int is_control(uint32_t c) {
  return c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f) || c == 0x2028 ||
         c == 0x2029;
}

int st__utf8_valid(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  uint32_t cp;
  for (size_t i = 0; i < n;) {
    size_t k = utf8_char(u + i, n - i, &cp);
    if (!k) return 0;
    i += k;
  }
  return 1;
}

int st__name_check(const char *s, const char *what, const char *where) {
  const unsigned char *u = (const unsigned char *)s;
  size_t n = s ? strlen(s) : 0;
  uint32_t cp;
  if (!n) return strata_error(STRATA_EBADINPUT, "%s: %s is empty", where, what);
  if (n > ST__NAME_MAX)
    return strata_error(STRATA_EBADINPUT,
                        "%s: %s is %zu bytes long; names are at most %d", where,
                        what, n, ST__NAME_MAX);
  for (size_t i = 0; i < n;) {
    size_t k = utf8_char(u + i, n - i, &cp);
    if (!k)
      return strata_error(STRATA_EBADINPUT,
                          "%s: %s is not valid UTF-8 (byte 0x%02x at offset "
                          "%zu)",
                          where, what, u[i], i);
    if (is_control(cp))
      return strata_error(STRATA_EBADINPUT,
                          "%s: %s holds a control character (U+%04X at "
                          "offset %zu); names are printable text",
                          where, what, (unsigned)cp, i);
    i += k;
  }
  return 0;
}

int st__hostname_valid(const char *s) {
  size_t n = s ? strlen(s) : 0, label = 0;
  if (!n || n > 253) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == '.') {
      if (!label || s[i - 1] == '-') return 0;
      label = 0;
      continue;
    }
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
             (c >= '0' && c <= '9') || c == '-';
    if (!ok || (c == '-' && !label) || ++label > 63) return 0;
  }
  return label && s[n - 1] != '-';
}

int st__hostname_check(const char *s, const char *what, const char *where) {
  if (st__hostname_valid(s)) return 0;
  char shown[96];
  return strata_error(STRATA_EBADINPUT,
                      "%s: %s '%s' is not a host name (RFC 1123: 1 to 253 "
                      "bytes of dot-separated labels of 1 to 63 letters, "
                      "digits and hyphens, no hyphen first or last)",
                      where, what, st__plain(s ? s : "", shown, sizeof shown));
}

static int file_name_valid(const char *s) {
  size_t n = s ? strlen(s) : 0;
  if (!n || n > ST__FILE_NAME_MAX || s[0] == '.' || s[0] == '-') return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
      return 0;
  }
  return 1;
}

int st__file_name_check(const char *s, const char *what, const char *where) {
  if (file_name_valid(s)) return 0;
  char shown[96];
  return strata_error(STRATA_EBADINPUT,
                      "%s: %s '%s' cannot be a file name: 1 to %d letters, "
                      "digits, '.', '_' and '-', not starting with '.' or '-'",
                      where, what, st__plain(s ? s : "", shown, sizeof shown),
                      ST__FILE_NAME_MAX);
}

int st__put_sh(strata_buf_t *b, const char *s) {
  int rc = strata_buf_puts(b, "'");
  for (const char *p = s ? s : ""; *p && !rc; p++)
    rc = *p == '\'' ? strata_buf_puts(b, "'\\''") : strata_buf_append(b, p, 1);
  return rc ? rc : strata_buf_puts(b, "'");
}

/* The characters of s for a quoted string: esc writes one code point that
 * needs an escape (or returns 1 to keep it as it is). */
typedef int (*esc_fn)(strata_buf_t *b, uint32_t cp);

/* hex_invalid: an invalid byte as \xNN (text a person reads) rather than
 * U+FFFD (a string a program reads). */
static int put_escaped_x(strata_buf_t *b, const char *s, esc_fn esc,
                         int hex_invalid) {
  const unsigned char *u = (const unsigned char *)(s ? s : "");
  size_t n = strlen((const char *)u);
  int rc = 0;
  uint32_t cp;
  for (size_t i = 0; i < n && !rc;) {
    size_t k = utf8_char(u + i, n - i, &cp);
    if (!k) {
      rc = hex_invalid ? strata_buf_printf(b, "\\x%02x", u[i])
                       : strata_buf_puts(b, "\xef\xbf\xbd");
      i++;
      continue;
    }
    int keep = esc(b, cp);
    rc = keep == 1 ? strata_buf_append(b, (const char *)u + i, k) : keep;
    i += k;
  }
  return rc;
}

static int put_escaped(strata_buf_t *b, const char *s, esc_fn esc) {
  return put_escaped_x(b, s, esc, 0);
}

/* The escapes Python's str literals and TOML's basic strings share; the
 * other controls as \u with hex digits in the case given (ufmt). */
static int esc_quoted(strata_buf_t *b, uint32_t c, const char *ufmt) {
  switch (c) {
  case '\\':
    return strata_buf_puts(b, "\\\\");
  case '"':
    return strata_buf_puts(b, "\\\"");
  case '\n':
    return strata_buf_puts(b, "\\n");
  case '\r':
    return strata_buf_puts(b, "\\r");
  case '\t':
    return strata_buf_puts(b, "\\t");
  default:
    break;
  }
  if (is_control(c)) return strata_buf_printf(b, ufmt, (unsigned)c);
  return 1;
}

static int esc_py(strata_buf_t *b, uint32_t c) {
  return esc_quoted(b, c, "\\u%04x");
}

static int esc_toml(strata_buf_t *b, uint32_t c) {
  return esc_quoted(b, c, "\\u%04X");
}

static int esc_plain(strata_buf_t *b, uint32_t c) {
  if (c == '\\') return strata_buf_puts(b, "\\\\");
  if (!is_control(c)) return 1;
  if (c < 0x100) return strata_buf_printf(b, "\\x%02x", (unsigned)c);
  return strata_buf_printf(b, "\\u%04x", (unsigned)c);
}

static int esc_pydoc(strata_buf_t *b, uint32_t c) {
  if (c == '"') return strata_buf_puts(b, "\\\"");
  return esc_plain(b, c);
}

int st__put_pydoc(strata_buf_t *b, const char *s) {
  return put_escaped_x(b, s, esc_pydoc, 1);
}

static int esc_html(strata_buf_t *b, uint32_t c) {
  switch (c) {
  case '&':
    return strata_buf_puts(b, "&amp;");
  case '<':
    return strata_buf_puts(b, "&lt;");
  case '>':
    return strata_buf_puts(b, "&gt;");
  case '"':
    return strata_buf_puts(b, "&quot;");
  case '\'':
    return strata_buf_puts(b, "&#39;");
  default:
    break;
  }
  if (is_control(c)) return esc_plain(b, c);
  return 1;
}

int st__put_html(strata_buf_t *b, const char *s) {
  return put_escaped(b, s, esc_html);
}

int st__put_py(strata_buf_t *b, const char *s) {
  int rc = strata_buf_puts(b, "\"");
  if (!rc) rc = put_escaped(b, s, esc_py);
  return rc ? rc : strata_buf_puts(b, "\"");
}

int st__put_toml(strata_buf_t *b, const char *s) {
  int rc = strata_buf_puts(b, "\"");
  if (!rc) rc = put_escaped(b, s, esc_toml);
  return rc ? rc : strata_buf_puts(b, "\"");
}

int st__put_plain(strata_buf_t *b, const char *s) {
  return put_escaped_x(b, s, esc_plain, 1);
}

const char *st__plain(const char *s, char *buf, size_t size) {
  strata_buf_t b;
  if (!size) return "";
  buf[0] = '\0';
  strata_buf_init(&b);
  if (!st__put_plain(&b, s) && b.p) {
    size_t n = b.len < size - 1 ? b.len : size - 1;
    /* Cut at a character boundary. */
    while (n && n < b.len && ((unsigned char)b.p[n] & 0xc0) == 0x80)
      n--;
    memcpy(buf, b.p, n);
    buf[n] = '\0';
  }
  strata_buf_free(&b);
  return buf;
}

const char *st__fmt_num(double v, int decimals, char *buf, size_t size) {
  if (!size) return "";
  if (!isfinite(v)) {
    snprintf(buf, size, "-");
    return buf;
  }
  int n = snprintf(buf, size, "%.*f", decimals > 0 ? decimals : 0, v);
  if (n < 0 || (size_t)n >= size || decimals <= 0) return buf;
  while (n > 0 && buf[n - 1] == '0')
    buf[--n] = '\0';
  if (n > 0 && buf[n - 1] == '.') buf[--n] = '\0';
  if (!strcmp(buf, "-0")) snprintf(buf, size, "0");
  return buf;
}

static int esc_none(strata_buf_t *b, uint32_t c) {
  (void)b;
  (void)c;
  return 1;
}

char *st__utf8_fix(const char *s) {
  strata_buf_t b;
  strata_buf_init(&b);
  if (put_escaped(&b, s, esc_none) || strata_buf_puts(&b, "")) {
    strata_buf_free(&b);
    return NULL;
  }
  if (!b.p) return strata_strdup("");
  return strata_buf_steal(&b, NULL);
}

/* ---- did you mean ---- */

enum { DIST_MAX = 63 };

static int same_letter(char a, char b) {
  return tolower((unsigned char)a) == tolower((unsigned char)b);
}

static int min3(int a, int b, int c) {
  int m = a < b ? a : b;
  return m < c ? m : c;
}

/* Three rows of the table (i - 2, i - 1, i) suffice for the swap. */
int st__text_distance(const char *a, const char *b) {
  int la = (int)strnlen(a, DIST_MAX), lb = (int)strnlen(b, DIST_MAX);
  int r0[DIST_MAX + 1], r1[DIST_MAX + 1], r2[DIST_MAX + 1];
  int *back = r0, *prev = r1, *cur = r2;
  for (int j = 0; j <= lb; j++)
    prev[j] = j;
  for (int i = 1; i <= la; i++) {
    cur[0] = i;
    for (int j = 1; j <= lb; j++) {
      int sub = prev[j - 1] + !same_letter(a[i - 1], b[j - 1]);
      cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, sub);
      if (i > 1 && j > 1 && same_letter(a[i - 1], b[j - 2]) &&
          same_letter(a[i - 2], b[j - 1]) && back[j - 2] + 1 < cur[j])
        cur[j] = back[j - 2] + 1;
    }
    int *t = back;
    back = prev, prev = cur, cur = t;
  }
  return prev[lb];
}

const char *st__did_you_mean(const char *s, const char *const *names) {
  const char *best = NULL;
  int bd = 0;
  if (!s || !*s || !names) return NULL;
  for (int i = 0; names[i]; i++) {
    int d = st__text_distance(s, names[i]);
    int ls = (int)strnlen(s, DIST_MAX), ln = (int)strnlen(names[i], DIST_MAX);
    int limit = (ls > ln ? ls : ln) / 3;
    if (d > (limit > 1 ? limit : 1)) continue;
    if (!best || d < bd) best = names[i], bd = d;
  }
  return best;
}
