/*
 * text.h - names as data: the checks every name from an input passes where
 * it is read, and one writer per language that a name is written into
 * (shell, Python, TOML, comments, the terminal).  docs/testing.md gives the
 * threat model these serve.
 */
#ifndef STRATA_CORE_TEXT_H
#define STRATA_CORE_TEXT_H

#include <stddef.h>

#include "strata/core.h"

/* The longest name (model, cluster, label) Strata takes from an input. */
#define ST__NAME_MAX 1024

/* Whether s (n bytes) is valid UTF-8 (no overlong forms, no surrogates). */
int st__utf8_valid(const char *s, size_t n);

/* A name from an input: valid UTF-8, no control character (C0, DEL, C1),
 * 1 to ST__NAME_MAX bytes.  On failure, STRATA_EBADINPUT with "WHERE: WHAT
 * ..." saying which byte and the rule. */
int st__name_check(const char *s, const char *what, const char *where);

/* A host name as RFC 1123 allows: 1 to 253 bytes of dot-separated labels,
 * each 1 to 63 letters, digits and hyphens, not starting or ending with a
 * hyphen. */
int st__hostname_valid(const char *s);
int st__hostname_check(const char *s, const char *what, const char *where);

/* A name that becomes a file name in a folder the user gives (strata
 * fleet's job names: DIR/NAME.splan): 1 to ST__FILE_NAME_MAX bytes of
 * letters, digits, '.', '_' and '-', not starting with '.' or '-' (no
 * hidden file, no option, no "..", no '/').  On failure STRATA_EBADINPUT
 * with "WHERE: WHAT '...' ..." and the rule. */
#define ST__FILE_NAME_MAX 64
int st__file_name_check(const char *s, const char *what, const char *where);

/* Writers, each for the language the text lands in; a NULL s writes what
 * the language's empty string is.  Each returns 0 or STRATA_ENOMEM. */
/* POSIX shell: one single-quoted word ('...', a ' as '\''). */
int st__put_sh(strata_buf_t *b, const char *s);
/* Python: a double-quoted str literal (escapes for \, ", controls; invalid
 * UTF-8 as U+FFFD). */
int st__put_py(strata_buf_t *b, const char *s);
/* TOML: a basic string "..." (its escapes; invalid UTF-8 as U+FFFD). */
int st__put_toml(strata_buf_t *b, const char *s);
/* Text inside a one-line comment (shell, Python, TOML, a hostfile) or on
 * the terminal: valid UTF-8 printable text kept, every control character
 * and invalid byte written as \xNN, so no newline can end the comment and
 * no escape sequence reaches a terminal. */
int st__put_plain(strata_buf_t *b, const char *s);
/* Text inside a Python docstring: as st__put_plain, and a " as \" so that
 * no three quotes can close it. */
int st__put_pydoc(strata_buf_t *b, const char *s);
/* HTML text or a quoted attribute value: & < > " ' as character
 * references, controls as \xNN, invalid UTF-8 as U+FFFD. */
int st__put_html(strata_buf_t *b, const char *s);
/* The same into a fixed buffer (truncated at a character), for messages. */
const char *st__plain(const char *s, char *buf, size_t size);
/* A figure as a person reads it in a table: plain decimals, at most
 * `decimals` after the point with trailing zeros cut ("3008982", "1.5",
 * "0.25"), never an exponent; "-" for NaN or an infinity. */
const char *st__fmt_num(double v, int decimals, char *buf, size_t size);
/* Valid UTF-8 for JSON output: invalid bytes replaced by U+FFFD.  Returns
 * a new string (strata_free) or NULL when out of memory. */
char *st__utf8_fix(const char *s);

/* "Did you mean": the one way every misspelt name (an option, a command,
 * a model or preset, a key of a JSON file) is matched to what was meant.
 * st__text_distance is the Damerau-Levenshtein distance (the optimal
 * string alignment form: an insertion, a deletion, a substitution or a
 * swap of two neighbours each costs 1) of a and b, letters compared
 * without case, each cut to its first 63 bytes. */
int st__text_distance(const char *a, const char *b);
/* The entry of names (NULL-terminated) nearest to s, the first of equals,
 * if it is near enough to be what was meant: at most a third of the
 * longer name's length away (at least 1; "--global-bach" is one edit
 * from --global-batch, "seq" four from "name" and never offered); NULL
 * when none is (or s is empty). */
const char *st__did_you_mean(const char *s, const char *const *names);

#endif
