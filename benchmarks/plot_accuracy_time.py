"""Accuracy against training time: every method of an accuracy section, drawn as an SVG.

    python benchmarks/plot_accuracy_time.py                       # docs/benchmarks.md -> docs/accuracy-time.svg
    python benchmarks/plot_accuracy_time.py --doc FILE --section NAME -o OUT.svg

Reads the table of mean ranks and training time that ``benchmarks/accuracy.py --summary`` writes into the
generated section (by default ``accuracy-default`` of docs/benchmarks.md: the default and its peers on 30
data sets), so the figure is redrawn from the document without rerunning anything. One panel: each
method's mean rank on one measure (``--measure``, RMSE by default; 1 = best, at the top) against its
training time summed over every fold (log scale). Needs matplotlib (the bench extra: pip install -e '.[bench]').
"""

from __future__ import annotations

import argparse
import io
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEASURES = ("RMSE", "0-1 loss", "log-loss")


def read_summary(text: str, section: str) -> tuple[str, list[tuple[str, dict[str, float], float]]]:
    """The section's title and, per method, its mean ranks by measure and its training seconds."""
    m = re.search(rf"<!-- {re.escape(section)}:begin.*?-->(.*?)<!-- {re.escape(section)}:end -->", text, re.S)
    if not m:
        raise ValueError(f"no generated section {section!r}")
    body = m.group(1)
    title = next((ln.strip("* ") for ln in body.splitlines() if ln.startswith("**Accuracy")), section)
    lines = [ln for ln in body.splitlines() if ln.startswith("|")]
    head = next((i for i, ln in enumerate(lines) if ln.startswith("| method |")), None)
    if head is None:
        raise ValueError(f"section {section!r} has no table of mean ranks and training time "
                         "(benchmarks/accuracy.py --summary writes one)")
    cols = [c.strip() for c in lines[head].strip().strip("|").split("|")]
    if not set(MEASURES) <= set(cols) or "training s" not in cols:
        raise ValueError(f"section {section!r}: the table's columns are {cols}")
    rows = []
    for ln in lines[head + 2:]:
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        rows.append((cells[0], {k: float(cells[cols.index(k)]) for k in MEASURES},
                     float(cells[cols.index("training s")])))
    if not rows:
        raise ValueError(f"section {section!r}: the table has no rows")
    return title, rows


def plot(title: str, rows, path: Path, measure: str = "RMSE") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    matplotlib.rcParams["svg.hashsalt"] = "hdp-bnc"  # the same file for the same figures
    matplotlib.rcParams["svg.fonttype"] = "none"  # text as text, not as outlines: a small file
    matplotlib.rcParams["font.sans-serif"] = ["DejaVu Sans"]  # one font named per text, not ten
    markers = "osD^vP*Xph<>"
    fig, ax = plt.subplots(figsize=(7, 3.6))
    worst = max(r[measure] for _, r, _ in rows)
    for i, (method, ranks, seconds) in enumerate(rows):
        ax.scatter([seconds], [ranks[measure]], s=36, marker=markers[i % len(markers)],
                   color=plt.cm.tab10(i % 10), label=method, zorder=3)
    ax.set_xscale("log")
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())  # fewer marks, a smaller file
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))  # 10, 100
    ax.set_ylim(worst + 0.5, 0.5)  # rank 1 at the top
    ax.grid(True, lw=0.3, color="#cccccc")
    ax.set_xlabel("training time, s (all folds, one thread)", fontsize=8)
    ax.set_ylabel(f"mean rank on {measure} (1 = best)", fontsize=8)
    ax.tick_params(labelsize=8)
    ax.set_title(", ".join(title.split(", ")[:2]), fontsize=8)  # "Accuracy: 5x2 cross-validation, 30 data sets"
    fig.legend(loc="center right", fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 0.72, 1))
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    # coordinates to 1/10 of a point and no indentation: the same picture in fewer bytes
    svg = re.sub(r"(\d+\.\d)\d+", r"\1", buf.getvalue())
    svg = re.sub(r" ?\n\s*(?=[LMCz])", " ", re.sub(r"\n\s+", "\n", svg))
    # and no metadata, group names, null rotations or font given per text (the style sheet gives it once)
    svg = re.sub(r"<metadata>.*?</metadata>\n", "", svg, flags=re.S)
    svg = _unwrap_plain_groups(re.sub(r'<g id="[^"]*">', "<g>", svg))
    svg = re.sub(r' transform="rotate\(-?0 [\d.]+ [\d.]+\)"', "", svg)
    svg = svg.replace("font-family: 'DejaVu Sans', sans-serif; ", "")
    svg = re.sub(r'style="font-size: 8px; text-anchor: (\w+)"', r'text-anchor="\1"', svg)  # every text is 8 px
    svg = svg.replace("<style type=\"text/css\">",
                      "<style type=\"text/css\">text{font-family:'DejaVu Sans',sans-serif;font-size:8px}")
    path.write_text(svg, encoding="utf-8")


def _unwrap_plain_groups(svg: str) -> str:
    """``svg`` without its attribute-less ``<g>`` elements (each on a line of its own), which draw nothing."""
    out, stack = [], []
    for line in svg.split("\n"):
        if line == "<g>":
            stack.append(False)
            continue
        if line.startswith("<g "):
            stack.append(True)
        elif line == "</g>" and stack and not stack.pop():
            continue
        out.append(line)
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--doc", type=Path, default=ROOT / "docs" / "benchmarks.md",
                    help="The Markdown file holding the generated section.")
    ap.add_argument("--section", default="accuracy-default", help="The generated section's name.")
    ap.add_argument("--measure", choices=MEASURES, default="RMSE", help="The measure whose mean rank is drawn.")
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "docs" / "accuracy-time.svg", help="The SVG to write.")
    args = ap.parse_args(argv)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        ap.error("needs matplotlib (pip install -e '.[bench]')")
    try:
        title, rows = read_summary(args.doc.read_text(encoding="utf-8"), args.section)
    except (OSError, ValueError) as e:
        print(f"error: {args.doc}: {e}", file=sys.stderr)
        return 1
    plot(title, rows, args.output, args.measure)
    return 0


if __name__ == "__main__":
    sys.exit(main())
