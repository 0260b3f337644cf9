"""The UCI classification sets of R's mlbench package as ARFF files, for benchmarks/accuracy.py.

Debian ships them as R data files (``r-cran-mlbench``, ``.rda``); this reads them with PyPI's
``rdata`` (a benchmark-only dependency, in the ``bench`` extra) and writes one ARFF file per data
set: numeric and integer columns ``numeric``, factors and logicals nominal with their R levels in
order (logicals as ``{FALSE,TRUE}``), NA as ``?``, the class last; identifier columns dropped.
Get the data files on any machine without installing R:

    apt-get download r-cran-mlbench && dpkg -x r-cran-mlbench_*.deb /tmp/mlbench
    python benchmarks/mlbench.py --mlbench-dir /tmp/mlbench/usr/lib/R/site-library/mlbench/data

(``apt-get install r-cran-mlbench`` puts them in ``/usr/lib/R/site-library/mlbench/data``, which
is searched by default; on a machine without apt, unpack the .deb with ``ar x`` and ``tar``, or
take ``data/*.rda`` from mlbench's CRAN source package.) The data set names carry an ``mlbench-``
prefix (``mlbench-Glass``) so they never clash with Weka's ARFF files of the same UCI data.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
PREFIX = "mlbench-"
DEFAULT_OUT = HERE / ".cache" / "mlbench"  # git-ignored (benchmarks/.gitignore)
RDA_DIRS = [Path("/usr/lib/R/site-library/mlbench/data"),
            Path("/tmp/mlbench/usr/lib/R/site-library/mlbench/data")]

# The classification sets with a nominal class, smallest first: object name -> (class column,
# {dropped column: why}). Left out: BostonHousing, BostonHousing2, Ozone and Servo (numeric
# target: regression) and PimaIndiansDiabetes2 (PimaIndiansDiabetes with impossible zeros as NA).
# Kept: Vowel's V1 is the speaker (15 speakers, each saying every vowel 6 times, so it carries no
# class information; mlbench documents it as an input); Ionosphere's V2 is constant.
SETS = {
    "Zoo": ("type", {}),  # the animal names are R row names, not a column
    "Sonar": ("Class", {}),
    "Glass": ("Type", {}),
    "Ionosphere": ("Class", {}),
    "HouseVotes84": ("Class", {}),
    "Soybean": ("Class", {}),
    "BreastCancer": ("Class", {"Id": "sample code number (a patient identifier)"}),
    "PimaIndiansDiabetes": ("diabetes", {}),
    "Vehicle": ("Class", {}),
    "Vowel": ("Class", {}),
    "DNA": ("Class", {}),
    "Satellite": ("classes", {}),
    "LetterRecognition": ("lettr", {}),
    "Shuttle": ("Class", {}),
}
DATASETS = [PREFIX + s for s in SETS]


def find_rda_dir(given: Path | None = None) -> Path | None:
    """The directory holding mlbench's ``.rda`` files: ``given``, else the first default that exists."""
    for d in ([given] if given is not None else RDA_DIRS):
        if (d / "Glass.rda").is_file() or any(d.glob("*.rda")):
            return d
    return None


def read_frame(rda: Path, name: str):
    """The data frame ``name`` of an ``.rda`` file (pandas, factors as categoricals)."""
    import rdata

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Unknown encoding. Assumed ASCII." on these old files
        objs = rdata.read_rda(str(rda))
    if name not in objs:
        raise ValueError(f"{rda}: no object {name!r} (has {', '.join(objs)})")
    return objs[name]


def to_arff(frame, relation: str, class_column: str, drop: dict[str, str], source: str,
            origin: str | None = None) -> str:
    """ARFF text of an R data frame: the class column last, ``drop`` columns left out; ``origin`` opens
    the file's description (by default: converted from R mlbench's ``source``)."""
    import arff
    import numpy as np
    import pandas as pd

    if class_column not in frame.columns:
        raise ValueError(f"{source}: no class column {class_column!r}")
    cols = [c for c in frame.columns if c not in drop and c != class_column] + [class_column]
    attributes, data_cols = [], []
    for c in cols:
        s = frame[c]
        if isinstance(s.dtype, pd.CategoricalDtype):
            levels = [str(v) for v in s.cat.categories]
            attributes.append((str(c), levels))
            data_cols.append([None if code < 0 else levels[code] for code in s.cat.codes])
        elif pd.api.types.is_bool_dtype(s.dtype):
            attributes.append((str(c), ["FALSE", "TRUE"]))
            data_cols.append([None if pd.isna(v) else ("TRUE" if v else "FALSE") for v in s])
        elif pd.api.types.is_numeric_dtype(s.dtype):
            attributes.append((str(c), "NUMERIC"))
            vals = s.astype("Float64").to_numpy(dtype=np.float64, na_value=np.nan)
            data_cols.append([None if np.isnan(v) else (int(v) if v.is_integer() else float(v))
                              for v in vals])
        else:
            raise ValueError(f"{source}: column {c!r} has type {s.dtype} (neither numeric nor a factor); "
                             "drop it in SETS")
    if not isinstance(attributes[-1][1], list):
        raise ValueError(f"{source}: class column {class_column!r} is not a factor")
    rows = [list(r) for r in zip(*data_cols)]
    header = origin or f"converted from R mlbench's {source} by benchmarks/mlbench.py"
    if drop:
        header += "; dropped: " + "; ".join(f"{c} ({why})" for c, why in drop.items())
    return arff.dumps({"description": header, "relation": relation, "attributes": attributes, "data": rows})


def convert(name: str, rda_dir: Path, out_dir: Path) -> Path:
    """``out_dir/mlbench-<name>.arff`` from ``rda_dir/<name>.rda``; reused while newer than both
    the ``.rda`` file and this script."""
    if name.startswith(PREFIX):
        name = name[len(PREFIX):]
    if name not in SETS:
        raise ValueError(f"unknown mlbench data set {name!r}; known: {', '.join(SETS)}")
    rda = rda_dir / f"{name}.rda"
    if not rda.is_file():
        raise FileNotFoundError(f"{rda} not found (see benchmarks/mlbench.py for how to get it)")
    out = out_dir / f"{PREFIX}{name}.arff"
    if out.is_file() and out.stat().st_mtime >= max(rda.stat().st_mtime, Path(__file__).stat().st_mtime):
        return out
    class_column, drop = SETS[name]
    text = to_arff(read_frame(rda, name), PREFIX + name, class_column, drop, f"{name}.rda")
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".{os.getpid()}.tmp")  # two runs converting at once never share it
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help=f"Data sets (default all: {', '.join(SETS)}).")
    ap.add_argument("--mlbench-dir", type=Path,
                    help="Directory of mlbench's .rda files; default " + " or ".join(map(str, RDA_DIRS)) + ".")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="Where the ARFF files are written.")
    args = ap.parse_args(argv)
    rda_dir = find_rda_dir(args.mlbench_dir)
    if rda_dir is None:
        ap.error("mlbench's .rda files not found; pass --mlbench-dir (see this script's docstring)")
    for n in args.names or list(SETS):
        print(convert(n, rda_dir, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
