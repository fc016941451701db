#!/usr/bin/env python3
"""Is a PNG screenshot more than a blank page?  Decodes it (8-bit RGB or
RGBA, the filters of the PNG specification, section 9) with zlib alone and
wants several colours and a share of non-white pixels.

With --heatmap: are the communication heat map's cells on it?  The page
colours them with eight levels of one palette (export/export_html.c,
hm_palette) that nothing else on it uses but the legend, whose swatches
hold 28 x 12 pixels of each; wanted: at least 3 of the levels, and 2000
pixels of them beyond the swatches' (the tp 2 x pp 2 x dp 4 plan of
run.sh draws 48 cells of about 14 x 14).

    check_png.py [--heatmap] SHOT.png
"""
import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("check_png: not a PNG")
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6):
                sys.exit(f"check_png: colour type {ctype}/{depth} not handled")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, prev, out = zlib.decompress(idat), w * bpp, None, []
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        prev = prev or bytearray(stride)
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out.append(bytes(line))
        prev = line
    return w, h, bpp, out


PALETTE = ["fde725", "a0da39", "4ac16d", "1fa187",
           "277f8e", "365c8d", "46327e", "440154"]
SWATCH = 28 * 12


def heatmap(path):
    w, h, bpp, rows = pixels(path)
    want = {bytes.fromhex(c): 0 for c in PALETTE}
    for r in rows:
        for x in range(0, len(r), bpp):
            px = r[x:x + 3]
            if px in want:
                want[px] += 1
    levels = sum(1 for n in want.values() if n > SWATCH)
    beyond = sum(max(0, n - SWATCH) for n in want.values())
    print(f"check_png: heat map: {levels} of {len(PALETTE)} levels drawn beyond "
          f"the legend, {beyond} pixels of them ({', '.join(str(n) for n in want.values())})")
    if levels < 3 or beyond < 2000:
        sys.exit(1)


def main():
    if sys.argv[1] == "--heatmap":
        heatmap(sys.argv[2])
        return
    w, h, bpp, rows = pixels(sys.argv[1])
    colours, ink = set(), 0
    for r in rows[::4]:
        for x in range(0, len(r), bpp * 4):
            px = r[x:x + 3]
            colours.add(px)
            ink += px != b"\xff\xff\xff"
    total = len(rows[::4]) * (w // 4 + (w % 4 > 0))
    share = ink / max(total, 1)
    print(f"check_png: {w}x{h}, {len(colours)} colours, {100 * share:.1f}% non-white")
    if len(colours) < 6 or share < 0.02:
        sys.exit(1)


if __name__ == "__main__":
    main()
