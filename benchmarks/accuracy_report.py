"""Tables, mean ranks, win/draw/loss with the sign test, and the machine description."""

from __future__ import annotations

import math
import platform
import subprocess
from importlib import metadata

import numpy as np

MEASURES = {"rmse": "RMSE", "zero_one": "0-1 loss", "log_loss": "log-loss"}
DIGITS = 4  # means are compared (draws) and printed at this many decimals


def sign_test_p(wins: int, losses: int) -> float:
    """Two-tailed exact binomial (p = 1/2) test of wins against losses; draws are excluded."""
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0 ** n
    return min(1.0, 2.0 * tail)


def mean_ranks(table: dict[str, dict[str, float]], methods: list[str]) -> dict[str, float]:
    """Mean over data sets of each method's rank (1 = lowest loss, ties share the mean rank).

    Only data sets on which every listed method has a value are used.
    """
    ranks = {m: [] for m in methods}
    for row in table.values():
        if not all(m in row for m in methods):
            continue
        vals = np.array([round(row[m], DIGITS) for m in methods])
        order = vals.argsort(kind="stable")
        r = np.empty(len(vals))
        r[order] = np.arange(1, len(vals) + 1)
        for v in np.unique(vals):  # average the ranks of ties
            r[vals == v] = r[vals == v].mean()
        for m, x in zip(methods, r):
            ranks[m].append(x)
    return {m: float(np.mean(v)) if v else float("nan") for m, v in ranks.items()}


def win_draw_loss(table, a: str, b: str) -> tuple[int, int, int, float]:
    """Data sets on which ``a`` has a lower / equal / higher mean loss than ``b`` (at DIGITS decimals)."""
    w = d = lo = 0
    for row in table.values():
        if a not in row or b not in row:
            continue
        x, y = round(row[a], DIGITS), round(row[b], DIGITS)
        if x < y:
            w += 1
        elif x == y:
            d += 1
        else:
            lo += 1
    return w, d, lo, sign_test_p(w, lo)


def fmt(x: float) -> str:
    if x is None or not np.isfinite(x):
        return "inf" if x == math.inf else "-"
    return f"{x:.{DIGITS}f}"


def measure_table(table, datasets: list[str], methods: list[str]) -> list[str]:
    """A markdown table: rows data sets, columns methods; the best value of a row in bold."""
    lines = ["| data set | " + " | ".join(methods) + " |", "|---|" + "---:|" * len(methods)]
    for ds in datasets:
        row = table.get(ds, {})
        vals = [round(row[m], DIGITS) for m in methods if m in row]
        best = min(vals) if vals else None
        cells = []
        for m in methods:
            if m not in row:
                cells.append("")
            elif round(row[m], DIGITS) == best:
                cells.append(f"**{fmt(row[m])}**")
            else:
                cells.append(fmt(row[m]))
        lines.append(f"| {ds} | " + " | ".join(cells) + " |")
    return lines


def machine() -> list[str]:
    """lscpu model, cores, memory, OS, Python, Java and package versions."""
    out = []
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        info = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in lscpu.splitlines())}
        out.append(f"- CPU: {info.get('Model name', '?')}, {info.get('CPU(s)', '?')} logical cores "
                   f"({info.get('Thread(s) per core', '?')} thread(s) per core), shared with other work")
    except OSError:
        out.append(f"- CPU: {platform.processor() or platform.machine()}")
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
        out.append(f"- memory: {kb / 1024 ** 2:.0f} GB; OS: {platform.platform()}")
    except OSError:
        pass
    out.append(f"- Python {platform.python_version()}")
    pkgs = []
    for p in ("hdp-plugin", "numpy", "numba", "scikit-learn", "scikit-bayes", "pyagrum", "xgboost", "pandas",
              "rdata"):
        try:
            pkgs.append(f"{p} {metadata.version(p)}")
        except metadata.PackageNotFoundError:
            pkgs.append(f"{p} (not installed)")
    out.append("- packages: " + ", ".join(pkgs))
    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
        out.append(f"- Java: {java}; Weka weka-stable 3.8.6 (Maven Central)")
    except (OSError, IndexError):
        out.append("- Java: not found")
    return out
