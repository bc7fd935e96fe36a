#!/usr/bin/env python3
"""Grouped horizontal bar chart as a standalone SVG (standard library only).

Input (stdin or a file): tab-separated lines.
  - the first line is the header: a label column name, then one name per series;
  - every other line is a group: its label, then one value per series (a number, or
    empty / "n/a" / "error" for a missing bar);
  - a line whose first field starts with "## " is a section heading (drawn as a caption
    above the groups that follow it).

Usage: chart.py [--title T] [--subtitle S] [--ref 1.0 [--ref-label L]] [--format ratio|si]
                [--note N]... [--per-section] [--max M] [-o out.svg] [in.tsv]
  --ref     draw a dashed reference line at this value (e.g. 1.0 for ratios), named L in the legend
  --format  value labels: "ratio" (two decimals, default) or "si" (1.16M, 79.7k)
  --note    a line of text under the chart (repeatable)
  --per-section  give every section its own value scale (e.g. unpipelined vs pipelined rps)
  --max     end the value axis here at most; longer bars are cut (notched, value marked »)
"""
import argparse
import math
import sys
from xml.sax.saxutils import escape

COLORS = ["#4878d0", "#ee854a", "#6acc64", "#d65f5f", "#956cb4", "#8c613c"]
FONT = "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\""


def parse(lines):
    rows = [line.rstrip("\n").split("\t") for line in lines if line.strip()]
    if not rows:
        sys.exit("chart.py: empty input")
    header, body = rows[0], rows[1:]
    series = header[1:]
    items = []  # ("section", text) or ("group", label, [value or None])
    for row in body:
        if row[0].startswith("## "):
            items.append(("section", row[0][3:]))
            continue
        values = []
        for cell in (row[1:] + [""] * len(series))[: len(series)]:
            try:
                v = float(cell)
                values.append(v if math.isfinite(v) else None)
            except ValueError:
                values.append(None)
        items.append(("group", row[0], values))
    return series, items


def nice_step(span, target=6):
    raw = span / target
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def fmt(v, style):
    if style == "si":
        for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if abs(v) >= div:
                x = v / div
                return f"{x:.3g}{suffix}" if x < 100 else f"{x:.0f}{suffix}"
        return f"{v:.3g}"
    return f"{v:.2f}"


def tick_label(v, style):
    if style == "si":
        return fmt(v, "si") if v else "0"
    return f"{v:g}"


def text(x, y, s, size=13, anchor="start", extra=""):
    # A white halo keeps value labels readable where they cross grid or reference lines.
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" {FONT} '
            f'stroke="white" stroke-width="3" paint-order="stroke" {extra}>{escape(s)}</text>')


def render(series, items, title, subtitle, ref, ref_label, style, notes, per_section=False, cap=None):
    width = 960
    label_w = 170
    x0, x1 = label_w + 10, width - 70
    bar_h, bar_gap, group_gap, section_h = 15, 2, 12, 26

    # Title, subtitle and legend (wrapping to a new line when a row is full).
    head = [text(10, 26, title, 18, extra='font-weight="bold"')]
    ly = 36
    if subtitle:
        head.append(text(10, ly + 12, subtitle, 12.5, extra='fill="#444"'))
        ly += 20
    entries = [("bar", COLORS[i % len(COLORS)], name) for i, name in enumerate(series)]
    if ref:
        entries.append(("ref", "#c00", ref_label or f"reference {tick_label(ref, style)}"))
    lx = 10
    ly += 6
    for kind, color, name in entries:
        ew = 19 + 7.3 * len(name) + 24
        if lx > 10 and lx + ew > width:
            lx, ly = 10, ly + 20
        if kind == "bar":
            head.append(f'<rect x="{lx:.1f}" y="{ly}" width="14" height="14" fill="{color}"/>')
        else:
            head.append(f'<line x1="{lx:.1f}" y1="{ly + 7}" x2="{lx + 14:.1f}" y2="{ly + 7}" stroke="{color}" stroke-width="2" stroke-dasharray="4,2"/>')
        head.append(text(lx + 19, ly + 12, name))
        lx += ew
    # Blocks: a section heading (or none) and its groups; each block gets its own axis labels
    # and, with per_section, its own scale.
    blocks = []
    for it in items:
        if it[0] == "section" or not blocks:
            blocks.append([it[1] if it[0] == "section" else None, []])
        if it[0] == "group":
            blocks[-1][1].append(it)

    def scale_for(groups):
        values = [v for g in groups for v in g[2] if v is not None]
        vmax = max(values + [ref or 0, 0.0]) or 1.0
        if cap:
            vmax = min(vmax, cap)
        if ref:
            vmax = max(vmax, ref * 1.25)
        step = nice_step(vmax * 1.08)
        return step, step * math.ceil(vmax * 1.08 / step)

    global_scale = scale_for([g for blk in blocks for g in blk[1]])
    out, grid = [], []
    y = ly + 28
    for bi, (heading, groups) in enumerate(blocks):
        step, xmax = scale_for(groups) if per_section else global_scale

        def sx(v, xmax=xmax):
            return x0 + (x1 - x0) * (v / xmax)

        if heading is not None:
            out.append(text(10, y + 14, heading, 14, extra='font-weight="bold"'))
            out.append(f'<line x1="10" y1="{y + 19}" x2="{x1}" y2="{y + 19}" stroke="#999" stroke-width="0.8"/>')
            y += section_h
        axis_y = y + 10  # tick labels above the block
        block_top = axis_y + 6
        y = block_top + 6
        for _, label, vals in groups:
            n = len(vals)
            gh = n * bar_h + (n - 1) * bar_gap
            out.append(text(label_w, y + gh / 2 + 5, label, 13, "end"))
            for i, v in enumerate(vals):
                by = y + i * (bar_h + bar_gap)
                if v is None:
                    out.append(text(x0 + 4, by + bar_h - 3, "n/a", 11, extra='fill="#888"'))
                    continue
                clipped = v > xmax
                w = max(sx(min(v, xmax)) - x0, 0.5)
                out.append(f'<rect x="{x0}" y="{by}" width="{w:.1f}" height="{bar_h}" fill="{COLORS[i % len(COLORS)]}"/>')
                if clipped:  # a white notch marks a bar cut at the axis end
                    out.append(f'<path d="M{x0 + w - 14:.1f},{by - 1} l6,{bar_h + 2} M{x0 + w - 8:.1f},{by - 1} l6,{bar_h + 2}" stroke="white" stroke-width="2.5"/>')
                out.append(text(x0 + w + 4, by + bar_h - 3, fmt(v, style) + (" »" if clipped else ""), 11.5, extra='font-weight="bold"' if clipped else ""))
            y += gh + group_gap
        block_bottom = y - group_gap + 6
        last = bi == len(blocks) - 1
        k = 0
        while k * step <= xmax + 1e-9:
            gx = sx(k * step)
            grid.append(f'<line x1="{gx:.1f}" y1="{block_top}" x2="{gx:.1f}" y2="{block_bottom}" stroke="#e3e3e3" stroke-width="1"/>')
            for ty in (axis_y, block_bottom + 16) if last else (axis_y,):
                grid.append(text(gx, ty, tick_label(k * step, style), 11, "middle", 'fill="#555"'))
            k += 1
        grid.append(f'<line x1="{x0}" y1="{block_top}" x2="{x0}" y2="{block_bottom}" stroke="#333" stroke-width="1"/>')
        if ref:
            rx = sx(ref)
            grid.append(f'<line x1="{rx:.1f}" y1="{block_top}" x2="{rx:.1f}" y2="{block_bottom}" stroke="#c00" stroke-width="1.5" stroke-dasharray="6,3"/>')
        y = block_bottom + (10 if not last else 0)
    plot_bottom = y

    foot = []
    fy = plot_bottom + 40
    for note in notes:
        foot.append(text(10, fy, note, 12, extra='fill="#444"'))
        fy += 17
    height = fy + 4

    return "\n".join(
        [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height:.0f}" viewBox="0 0 {width} {height:.0f}">',
         f'<rect width="{width}" height="{height:.0f}" fill="white"/>']
        + grid + out + head + foot + ["</svg>", ""])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input", nargs="?")
    ap.add_argument("-o", "--output")
    ap.add_argument("--title", default="")
    ap.add_argument("--subtitle", default="")
    ap.add_argument("--ref", type=float)
    ap.add_argument("--ref-label", default="")
    ap.add_argument("--format", choices=("ratio", "si"), default="ratio")
    ap.add_argument("--note", action="append", default=[])
    ap.add_argument("--per-section", action="store_true")
    ap.add_argument("--max", type=float)
    a = ap.parse_args()
    if a.input:
        with open(a.input) as f:
            lines = f.readlines()
    else:
        lines = sys.stdin.readlines()
    series, items = parse(lines)
    svg = render(series, items, a.title, a.subtitle, a.ref, a.ref_label, a.format, a.note, a.per_section, a.max)
    if a.output:
        with open(a.output, "w") as f:
            f.write(svg)
    else:
        sys.stdout.write(svg)


if __name__ == "__main__":
    main()
