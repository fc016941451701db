/*
 * fuzz_util.h - what the fuzz targets share: one-time set-up and a
 * scratch file for the loaders that only take a path.
 *
 * A new parser's target (a Hugging Face config.json, a calibration file,
 * ...) is fuzz_NAME.c here, defining LLVMFuzzerTestOneInput, plus one
 * line in targets.txt (its dictionary, input size, timeout and mode);
 * CMake builds it and scripts/fuzz.sh runs it, in campaigns too.  Seeds
 * go in corpus/NAME/.  The pattern of every target: call fuzz_setup(),
 * strata_error_clear(), run the parser on the input (through
 * fuzz_write_file when it takes a path); on failure check the return
 * code is negative with a message; on success check the parser's own
 * properties (a round trip, finite figures) and free everything, so
 * LeakSanitizer sees Strata's leaks.  A finding aborts with the
 * property's name.  The node export FUZZ_NODE_XML can be copied next to
 * the input with fuzz_copy_file, for inputs that name a file.
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
