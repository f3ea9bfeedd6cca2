#!/usr/bin/env python3
"""--plot-file PATH.svg writes an SVG document that parses as XML, 1280 x 720 points, with the
cells drawn, its title and labels kept as <text> in the run's language, the panel a <g
class="panel">.
Usage: plot_svg.py ATTNLAB
"""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

attnlab = sys.argv[1]
with tempfile.TemporaryDirectory() as tmp:
    for lang in ("en", "zh"):
        path = os.path.join(tmp, f"mask-{lang}.svg")
        r = subprocess.run([attnlab, "mask", "--len", "6", "--quiet", "--lang", lang, "--plot-file", path], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"FAIL: exit {r.returncode}: {r.stderr}")
        root = ET.parse(path).getroot()
        if not root.tag.endswith("svg") or root.get("width") not in ("1280", "1280pt") or root.get("height") not in ("720", "720pt"):
            sys.exit(f"FAIL: root {root.tag} {root.get('width')} x {root.get('height')}")
        shapes = [e for e in root.iter() if e.tag.split("}")[-1] in ("rect", "path")]
        if len(shapes) < 36:  # 6 x 6 cells and the colour bar
            sys.exit(f"FAIL: only {len(shapes)} shapes")
        texts = [e.text for e in root.iter() if e.tag.split("}")[-1] == "text"]
        heading = {"en": "Additive attention mask: 0 keeps, -inf blocks (causal mask)", "zh": "加性注意力掩码：0 保留，-inf 屏蔽（causal 掩码）"}[lang]
        if heading not in texts or "query" not in texts or "key" not in texts:
            sys.exit(f"FAIL: {lang}: the heading or the axis names are not <text>: {texts[:6]}")
        panels = [e for e in root.iter() if e.tag.split("}")[-1] == "g" and e.get("class") == "panel"]
        if len(panels) != 1:
            sys.exit(f"FAIL: {len(panels)} panel groups")
print("ok: the SVG parses as XML in en and zh, its text as <text>")
