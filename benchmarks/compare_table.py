"""The README's table of how the default compares: a few rows of an accuracy section's summary.

    python benchmarks/compare_table.py                  # from docs/benchmarks.md, section accuracy-default
    python benchmarks/compare_table.py --doc FILE --section NAME --methods 'HDP ESKDB,Weka RF'

Reads the table of mean ranks and training time that ``benchmarks/accuracy.py --summary`` writes into the
generated section (the default and its peers on 30 data sets), keeps the default, CatBoost, LightGBM, the
random forests and XGBoost, and prints them as a short Markdown table. ``benchmarks/regenerate.sh`` writes its output into
README.md's section ``readme-compare`` through ``benchmarks/report_sections.py``, so the README's figures
are the benchmark's, never typed by hand.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plot_accuracy_time import MEASURES, ROOT, read_summary  # noqa: E402

METHODS = ("HDP ESKDB", "CatBoost", "LightGBM", "Weka RF", "sklearn RF", "XGBoost (raw)", "XGBoost (bins)")
NAMES = {"HDP ESKDB": "**hdp-bnc's default** (ESKDB)", "Weka RF": "Weka's random forest",
         "CatBoost": "CatBoost on the raw data", "LightGBM": "LightGBM on the raw data",
         "sklearn RF": "scikit-learn's random forest", "XGBoost (raw)": "XGBoost on the raw data",
         "XGBoost (bins)": "XGBoost on our bins"}


def table(text: str, section: str = "accuracy-default", methods=METHODS) -> str:
    """The Markdown table of ``methods``' mean ranks and training time, from ``section`` of ``text``."""
    _, rows = read_summary(text, section)
    by_name = {m: (ranks, seconds) for m, ranks, seconds in rows}
    missing = [m for m in methods if m not in by_name]
    if missing:
        raise ValueError(f"section {section!r} has no row for {', '.join(missing)}")
    body = re.search(rf"<!-- {re.escape(section)}:begin.*?-->(.*?)<!-- {re.escape(section)}:end -->", text, re.S)
    sets = re.search(r"Mean rank over the (\d+) complete data sets", body.group(1))
    n = f"{sets.group(1)} data sets" if sets else "the data sets"
    out = [f"Mean rank among {len(rows)} methods over {n} (1 = best; 5x2 cross-validation) and training time "
           "summed over every fold, one thread:", "",
           "| method | " + " | ".join(MEASURES) + " | training s |",
           "|---|" + "---:|" * (len(MEASURES) + 1)]
    for m in methods:
        ranks, seconds = by_name[m]
        out.append(f"| {NAMES.get(m, m)} | " + " | ".join(f"{ranks[k]:.2f}" for k in MEASURES) + f" | {seconds:.0f} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--doc", type=Path, default=ROOT / "docs" / "benchmarks.md",
                    help="The Markdown file holding the generated section.")
    ap.add_argument("--section", default="accuracy-default", help="The generated section's name.")
    ap.add_argument("--methods", default=",".join(METHODS), help="Comma-separated methods, in the table's order.")
    args = ap.parse_args(argv)
    try:
        print(table(args.doc.read_text(encoding="utf-8"), args.section, args.methods.split(",")))
    except (OSError, ValueError) as e:
        print(f"error: {args.doc}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
