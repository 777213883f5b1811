#!/usr/bin/python3
"""heatmap_png.py SVG PNG: does a browser's screenshot of `report --heatmap` show its cells?

Reads the SVG's cells (<rect class="cell" x y width height fill data-count>) and
frames (<rect class="frame">), decodes the PNG (8-bit RGB/RGBA, no interlace:
what Chromium writes; zlib and struct only), and compares pixel by pixel:
  - the centre pixel of every cell has the cell's fill colour (each channel within 8);
  - the centre of every grid position inside a frame with no cell is white.
Prints one line: "cells N coloured C wrong W empty E white B nonwhite_px P size WxH"
and exits 0 only when every cell is coloured and every empty position white.
"""
import re
import struct
import sys
import zlib


def read_png(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG: depth {depth} colour type {ctype} interlace {interlace}")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def attrs(tag):
    return dict(re.findall(r'([a-z-]+)="([^"]*)"', tag))


def main():
    svg = open(sys.argv[1], encoding="utf-8").read()
    w, h, bpp, rows = read_png(sys.argv[2])

    def px(x, y):
        r = rows[int(y)]
        i = int(x) * bpp
        return tuple(r[i:i + 3])

    cells = [attrs(t) for t in re.findall(r'<rect class="cell"[^>]*>', svg)]
    frames = [attrs(t) for t in re.findall(r'<rect class="frame"[^>]*>', svg)]
    coloured = wrong = empty = white = 0
    taken = set()
    cw = ch = None
    for c in cells:
        x, y, cw, ch = (int(c[k]) for k in ("x", "y", "width", "height"))
        taken.add((x, y))
        want = tuple(int(c["fill"][i:i + 2], 16) for i in (1, 3, 5))
        got = px(x + cw / 2, y + ch / 2)
        if all(abs(a - b) <= 8 for a, b in zip(got, want)):
            coloured += 1
        else:
            wrong += 1
    for f in frames:
        if cw is None:
            break
        fx, fy, fw, fh = (int(f[k]) for k in ("x", "y", "width", "height"))
        for y in range(fy, fy + fh, ch):
            for x in range(fx, fx + fw, cw):
                if (x, y) in taken:
                    continue
                empty += 1
                if min(px(x + cw / 2, y + ch / 2)) >= 250:
                    white += 1
    nonwhite = sum(1 for r in rows for i in range(0, len(r), bpp) if min(r[i:i + 3]) < 250)
    print(f"cells {len(cells)} coloured {coloured} wrong {wrong} empty {empty} white {white} "
          f"nonwhite_px {nonwhite} size {w}x{h}")
    ok = cells and coloured == len(cells) and white == empty and nonwhite > 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
