#!/usr/bin/env python3
"""migrate-cache.py - carry the crafted stage caches of the bad-inputs
catalogue (files/cache-*/stages.scache) over a change of the stage
result's field table (pipeline/cache.c, result_fields), keeping what each
entry was crafted to hold.

A new field changes the layout tag, and a cache of another layout is
ignored whole, which would leave the catalogue's cases nothing to check.
This inserts the new fields' bytes (zeros: a result without them) at
their offset in every entry's payload, then rewrites each entry's length
and CRC32 and the header's layout tag and CRC32 (the layout of
pipeline/cache.c's opening comment).  The new tag is read from a cache the
current strata writes (TAG_FROM: any stages.scache of this build).

Usage: migrate-cache.py TAG_FROM OFFSET BYTES CACHE...
  OFFSET  where the new fields go in a payload (bytes from its start)
  BYTES   how many bytes they take (8 a double, 4 an int)
"""
import struct
import sys
import zlib


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    tag = struct.unpack("<Q", open(sys.argv[1], "rb").read()[8:16])[0]
    at, n = int(sys.argv[2]), int(sys.argv[3])
    for path in sys.argv[4:]:
        b = open(path, "rb").read()
        magic, ver, _, count, _ = struct.unpack("<4sIQII", b[:24])
        out, i = [], 24
        for _ in range(count):
            key, ln, _ = struct.unpack("<QII", b[i:i + 16])
            p = b[i + 16:i + 16 + ln]
            p = p[:at] + b"\0" * n + p[at:]
            out.append(struct.pack("<QII", key, len(p), zlib.crc32(p)) + p)
            i += 16 + ln
        h = struct.pack("<4sIQI", magic, ver, tag, count)
        h += struct.pack("<I", zlib.crc32(h))
        open(path, "wb").write(h + b"".join(out) + b[i:])
        print("%s: %d entries" % (path, count))


if __name__ == "__main__":
    main()
