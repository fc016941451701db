/*
 * fuzz_util.h - what the fuzz targets share: one-time set-up and a
 * scratch file for the loaders that only take a path.
 */
#ifndef STRATA_FUZZ_UTIL_H
#define STRATA_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* strata_init, quiet logging; safe to call on every input. */
void fuzz_setup(void);
/* Write data to a file named `name` in this process's scratch folder
 * (created on first use, removed at exit) and return its path, or abort
 * the run if the file cannot be written (that is no finding). */
const char *fuzz_write_file(const char *name, const uint8_t *data, size_t size);
/* Copy src into the scratch folder as `name` (a file the fuzzed input may
 * refer to by a relative path). */
void fuzz_copy_file(const char *src, const char *name);

#endif
