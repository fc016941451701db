#!/usr/bin/env bash
# make-plans.sh - regenerate the plan files of the bad-inputs catalogue
# (files/*.splan) from a strata binary: a good plan, a free-mode one, and
# the damaged ones derived from the good one byte by byte (docs/plan-
# format.md gives the layout: a 20-byte header -- magic, version, flags,
# CRC32 of the deflated payload, payload and deflated lengths -- then the
# zlib stream).  Run it when the plan format changes, then update the
# sizes the messages in cases.txt quote (run.sh shows the new ones).
#
# Usage: tests/bad-inputs/make-plans.sh STRATA_BINARY
set -euo pipefail
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
dir=$(cd "$(dirname "$0")" && pwd)/files
model=(--model gpt --layers 4 --hidden 256 --heads 4 --seq 128 --vocab 1000
  --cluster dgx-h100:1 --global-batch 16 --quiet)
"$bin" plan "${model[@]}" -o "$dir/good.splan" >/dev/null
"$bin" plan "${model[@]}" --free -o "$dir/free.splan" >/dev/null
python3 - "$dir" <<'PY'
import struct, sys, zlib, os
d = sys.argv[1]
good = open(os.path.join(d, "good.splan"), "rb").read()
hdr, z = good[:20], good[20:]
magic, ver, flags, crc, raw_len, z_len = struct.unpack("<4sHHIII", hdr)
raw = zlib.decompress(z)

def put(name, data):
    open(os.path.join(d, name), "wb").write(data)

def wrap(payload, version=ver):
    zz = zlib.compress(payload, 9)
    return struct.pack("<4sHHIII", magic, version, 0, zlib.crc32(zz),
                       len(payload), len(zz)) + zz

def varint(buf, i):
    v = s = 0
    while True:
        c = buf[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if not c & 0x80:
            return v, i

put("plan-wrong-magic.splan", b"SPLX" + good[4:])
# one shape's plans are format 3, a mixed cluster's 4, one with
# multi-token prediction 5, with the experts' all-to-all overlapped 6, a
# RoPE scaling 7, the FP8 parameter gather 8, the embedding and loss
# counted in the split, the MoE layer's and the CUDA graphs' choices 9,
# full recompute's method and unit, the optimizer's offload, DeepSpeed's
# partition method 10, the model's MLP biases, first windowed layer,
# chunked attention, sinks and gpt-oss's GLU 11, the experts' all-to-all
# as a step item 12, the Pareto front 13, fallback plans 14, fine-grained
# activation offloading's modules 15, the MoE layers' host-bound time as a
# step item 16, the blocking pipeline sends as a step item, the router's
# training settings and NPUs 17, the parameter gather under the optimizer
# step 18: newer than all
put("plan-newer.splan", good[:4] + struct.pack("<H", ver + 16) + good[6:])
put("plan-bad-crc.splan", good[:8] + struct.pack("<I", crc ^ 1) + good[12:])
put("plan-truncated.splan", good[:len(good) // 2])
put("plan-header-only.splan", good[:12])
put("plan-zero-payload.splan",
    struct.pack("<4sHHIII", magic, ver, 0, zlib.crc32(b""), 0, 0))
put("plan-huge-length.splan",
    good[:12] + struct.pack("<I", 2**31 - 1) + good[16:])
put("plan-trailing.splan", good + b"\0\0\0")
put("plan-junk-payload.splan", wrap(b"\xff\xff\x7f" + b"junk" * 4))
# the first scalar (devices) in two bytes where one would do
i = 0
for _ in range(3):                    # model, cluster, family:
    n, i = varint(raw, i)             # length + 1 (0: none), bytes
    i += max(n - 1, 0)
v, j = varint(raw, i)
assert j == i + 1 and v < 64
put("plan-overlong-varint.splan", wrap(raw[:i] + bytes([raw[i] | 0x80, 0]) +
                                        raw[j:]))
# NaN as the step time: the second double after the 60 header integers
k = i
for _ in range(60):
    _, k = varint(raw, k)
k += 8                                # alpha
put("plan-nan.splan", wrap(raw[:k] + struct.pack("<d", float("nan")) +
                           raw[k + 8:]))
PY
echo "plan files written to $dir"
