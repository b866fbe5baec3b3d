#!/usr/bin/env python3
"""The learning curves as one SVG (standard library only): test clip accuracy against
training clips per label, one panel per dataset, poseact and the PyTorch mirror (and, where
a CSV has them, runs from a backbone and `enroll`), the mean of the draws with their range.

    learning_curve_plot.py OUT.svg NAME=WORK/learning-curve.csv [NAME=CSV ...]

Each CSV is what learning-curve.sh writes (tool,clips_per_label,draw,clip_accuracy,
window_accuracy; clips_per_label 0 = all, drawn at the right end with its real count given
as NAME=CSV:ALL, e.g. push-ups=out/lc-pushups/learning-curve.csv:88). Its tools: poseact,
pytorch, backbone (poseact from a pretrained net), enroll (`poseact enroll`, no training)."""
import csv
import math
import sys
from collections import defaultdict


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, panels = sys.argv[1], []
    for arg in sys.argv[2:]:
        name, spec = arg.split("=", 1)
        path, _, full = spec.partition(":")
        runs = defaultdict(list)
        with open(path) as f:
            for r in csv.DictReader(f):
                n = int(r["clips_per_label"]) or int(full or 0)
                if n:
                    runs[(r["tool"], n)].append(100 * float(r["clip_accuracy"]))
        panels.append((name, runs))
    w, h, pad = 360, 260, 48
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w * len(panels)}" height="{h}" font-family="sans-serif" font-size="11">',
           f'<rect width="{w * len(panels)}" height="{h}" fill="white"/>']
    colours = {"poseact": "#1f6fb2", "pytorch": "#d9541e", "backbone": "#2a9d4b", "enroll": "#8e44ad"}
    labels = {"poseact": "poseact", "pytorch": "PyTorch mirror", "backbone": "poseact from a backbone", "enroll": "enroll (no training)"}
    for p, (name, runs) in enumerate(panels):
        x0 = p * w
        ns = sorted({n for _, n in runs})
        ys = [v for vs in runs.values() for v in vs]
        lo, hi = math.floor(min(ys) / 5) * 5, 100
        lx = lambda n: x0 + pad + (math.log(n) - math.log(ns[0])) / max(math.log(ns[-1]) - math.log(ns[0]), 1e-9) * (w - 2 * pad)
        ly = lambda v: h - pad + 10 - (v - lo) / (hi - lo) * (h - 2 * pad)
        svg.append(f'<text x="{x0 + w / 2}" y="16" text-anchor="middle" font-size="13">{name}</text>')
        for v in range(int(lo), 101, 5):
            svg.append(f'<line x1="{x0 + pad}" x2="{x0 + w - pad}" y1="{ly(v):.1f}" y2="{ly(v):.1f}" stroke="#ddd"/>')
            svg.append(f'<text x="{x0 + pad - 4}" y="{ly(v) + 4:.1f}" text-anchor="end">{v}%</text>')
        for n in ns:
            svg.append(f'<text x="{lx(n):.1f}" y="{h - pad + 26}" text-anchor="middle">{n}</text>')
        svg.append(f'<text x="{x0 + w / 2}" y="{h - 6}" text-anchor="middle">training clips per label (test clip accuracy)</text>')
        for k, tool in enumerate(t for t in colours if any(key[0] == t for key in runs)):
            pts = [(n, runs[(tool, n)]) for n in ns if runs.get((tool, n))]
            if not pts:
                continue
            c = colours[tool]
            line = " ".join(f"{lx(n):.1f},{ly(sum(v) / len(v)):.1f}" for n, v in pts)
            svg.append(f'<polyline points="{line}" fill="none" stroke="{c}" stroke-width="2"/>')
            for n, v in pts:
                svg.append(f'<line x1="{lx(n):.1f}" x2="{lx(n):.1f}" y1="{ly(min(v)):.1f}" y2="{ly(max(v)):.1f}" stroke="{c}"/>')
                svg.append(f'<circle cx="{lx(n):.1f}" cy="{ly(sum(v) / len(v)):.1f}" r="3" fill="{c}"/>')
            svg.append(f'<text x="{x0 + w - pad}" y="{h - pad - 10 - 14 * k}" text-anchor="end" fill="{c}">{labels[tool]}</text>')
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
