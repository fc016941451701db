/*
 * lowp.c - Transformer Engine's narrow-precision recipes, one row each:
 * what Megatron-LM calls it, the rate its GEMMs run at, what it needs,
 * and the bytes it moves and keeps (docs/cost-model.md, "FP8 and FP4
 * recipes", cites each figure).
 *
 *  - delayed: a per-tensor scale from the amax history of earlier steps,
 *    the amax taken as a by-product of the cast (TE's DelayedScaling);
 *  - mxfp8: an E8M0 scale per 32 elements, a byte per 32, along the
 *    reduction dimension, so a tensor needs its own row- and column-wise
 *    copies (TE's MXFP8BlockScaling; Megatron-LM: Blackwell only);
 *  - tensorwise: a per-tensor scale from the current tensor, whose amax
 *    is a reduction over the 16-bit tensor before it is cast: one more
 *    read of it (TE's Float8CurrentScaling);
 *  - blockwise: DeepSeek-V3's 1x128 activation and 128x128 weight blocks
 *    with fp32 scales, 4 bytes per 128 elements (TE's Float8BlockScaling);
 *  - nvfp4: FP4 E2M1 with an E4M3 scale per 16 elements (half a byte and
 *    a sixteenth), row- and column-wise (TE's NVFP4BlockScaling; Blackwell).
 */
#include <string.h>

#include "strata/core.h"
#include "strata/intraop.h"

static const strata_lowp_t rows[STRATA_LOWP_COUNT] = {
    [STRATA_LOWP_DELAYED] = {"delayed", 0, 0, 1.0, 2.0, 1.0, 0},
    [STRATA_LOWP_MXFP8] = {"mxfp8", 0, 1, 1.0 + 1.0 / 32,
                           2.0 * (1.0 + 1.0 / 32), 1.0 + 1.0 / 32, 0},
    [STRATA_LOWP_TENSORWISE] = {"tensorwise", 0, 0, 1.0, 2.0, 1.0, 2.0},
    [STRATA_LOWP_BLOCKWISE] = {"blockwise", 0, 0, 1.0 + 4.0 / 128,
                               2.0 * (1.0 + 4.0 / (128 * 128)), 1.0 + 4.0 / 128,
                               0},
    [STRATA_LOWP_NVFP4] = {"nvfp4", 1, 1, 0.5 + 1.0 / 16,
                           2.0 * (0.5 + 1.0 / 16), 0.5 + 1.0 / 16, 0},
};

const strata_lowp_t *strata_lowp(int recipe) {
  return recipe > STRATA_LOWP_NONE && recipe < STRATA_LOWP_COUNT ? &rows[recipe]
                                                                 : NULL;
}

const char *strata_lowp_name(int recipe) {
  const strata_lowp_t *r = strata_lowp(recipe);
  return r ? r->name : recipe == STRATA_LOWP_NONE ? "bf16" : "?";
}

int strata_lowp_peak_bits(int recipe) {
  const strata_lowp_t *r = strata_lowp(recipe);
  return !r ? 16 : r->fp4 ? 4 : 8;
}

int strata_lowp_parse(const char *s, int *out) {
  for (int i = STRATA_LOWP_NONE + 1; s && i < STRATA_LOWP_COUNT; i++)
    if (!strcmp(s, rows[i].name)) {
      *out = i;
      return 0;
    }
  return strata_error(STRATA_EINVAL,
                      "unknown FP8 recipe '%s' (delayed, tensorwise, "
                      "blockwise or mxfp8; NVFP4 is --precision fp4)",
                      s ? s : "");
}
