/*
 * export_mindspeed.c - the Megatron-LM export for MindSpeed, Huawei's
 * Megatron-LM adaptation for Ascend NPUs (strata export megatron
 * --mindspeed, docs/exports.md "MindSpeed").
 *
 * MindSpeed takes Megatron-LM's own arguments: its getting-started guide
 * (Ascend/MindSpeed, docs/user-guide/getting_started.md) adds one line,
 * `import mindspeed.megatron_adaptor`, under `import torch` in Megatron-
 * LM's pretrain_gpt.py, sources CANN's set_env.sh, and runs torchrun with
 * `--transformer-impl local` (Transformer Engine is CUDA's).  So the flags
 * are the Megatron export's with that one added, and what needs
 * Transformer Engine or CUDA is refused: FP8 and FP4 (neither the Ascend
 * 910B nor the 910C has them), the tensor-parallel overlap (Transformer
 * Engine's userbuffers) and CUDA graphs.  The launch script sources the
 * toolkit's environment and checks that pretrain_gpt.py imports the
 * adaptor before it starts anything (export_launch.c calls down here).
 */
#include <string.h>

#include "merge/merge_int.h"

#define REFUSE(...)                                                            \
  strata_error(STRATA_EUNSUPPORTED, "megatron export "                         \
                                    "--mindspeed: " __VA_ARGS__)

int st__mindspeed_check(const strata_plan_t *p) {
  if (p->fp8)
    return REFUSE("the plan's GEMMs run in %s, which Ascend 910B and 910C "
                  "NPUs do not compute (they compute in BF16 and FP16): plan "
                  "again with --precision bf16",
                  p->fp8 == STRATA_LOWP_NVFP4 ? "FP4" : "FP8");
  if (p->tp_comm_overlap)
    return REFUSE("--tp-comm-overlap is Transformer Engine's userbuffers "
                  "overlap, and MindSpeed runs Megatron-LM with "
                  "--transformer-impl local: plan again with "
                  "--no-tp-comm-overlap");
  if (p->cuda_graph_impl)
    return REFUSE("--cuda-graph-impl captures CUDA graphs, which an NPU "
                  "does not run: plan again without CUDA graphs");
  return 0;
}

const char st__mindspeed_flag[] = "--transformer-impl local";

void st__mindspeed_env(strata_buf_t *b) {
  strata_buf_puts(
      b, "# -- MindSpeed on Ascend NPUs (docs/exports.md, \"MindSpeed\"): "
         "CANN's environment,\n"
         "# and Megatron-LM's pretrain_gpt.py importing MindSpeed's adaptor "
         "under\n"
         "# 'import torch' (MindSpeed's getting-started guide)\n"
         "ASCEND_SET_ENV=${ASCEND_SET_ENV:-/usr/local/Ascend/ascend-toolkit/"
         "set_env.sh}\n"
         "if [ ! -f \"$ASCEND_SET_ENV\" ]; then\n"
         "  echo \"no CANN toolkit at $ASCEND_SET_ENV: set ASCEND_SET_ENV to "
         "its set_env.sh\" >&2\n"
         "  exit 1\n"
         "fi\n"
         "set +u # CANN's script reads variables that may be unset\n"
         "# shellcheck disable=SC1090\n"
         "source \"$ASCEND_SET_ENV\"\n"
         "set -u\n\n");
}

void st__mindspeed_preflight(strata_buf_t *b, const char *script) {
  strata_buf_printf(
      b,
      "if ! grep -Eq '^[[:space:]]*(import mindspeed\\.megatron_adaptor|from "
      "mindspeed import megatron_adaptor)' \"$MEGATRON_LM/%s\"; then\n"
      "  echo \"$MEGATRON_LM/%s does not import mindspeed.megatron_adaptor: "
      "add the line under 'import torch'\" >&2\n"
      "  exit 1\n"
      "fi\n",
      script, script);
}

int strata_export_mindspeed(const strata_plan_t *p, char **text) {
  char *flags = NULL;
  strata_buf_t b;
  if (!text) return strata_error(STRATA_EINVAL, "megatron export: no output");
  *text = NULL;
  int rc = st__mindspeed_check(p);
  if (!rc) rc = strata_export_megatron(p, &flags);
  if (rc) return rc;
  strata_buf_init(&b);
  strata_buf_printf(&b, "%s \\\n%s", st__mindspeed_flag, flags);
  strata_free(flags);
  return strata_buf_finish(&b, text);
}
