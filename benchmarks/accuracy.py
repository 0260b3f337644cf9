"""Accuracy of hdp_plugin's classifiers against the classifiers people use today.

Run (the full benchmark; resumable, see --cache-dir):

    python benchmarks/accuracy.py --iterations 1000 -o benchmarks/studies.md --section accuracy-by-set
    python benchmarks/accuracy.py --iterations 1000 --report-only --summary -o docs/benchmarks.md --section accuracy

Protocol: the paper's 5x2 cross-validation, the same folds for every method (``stratified_folds``
with seeds 0..4, two folds each), on every classification ARFF of Debian's ``weka`` package and the
classification sets of R's mlbench (Debian's ``r-cran-mlbench``, converted by benchmarks/mlbench.py);
``--datasets numeric-large`` runs the numeric sets of benchmarks/numdata.py instead.
Numeric attributes are MDL-discretised inside each training fold (ESKDB: stochastic cut points per member),
missing is its own value; XGBoost (raw), CatBoost, LightGBM and Weka's peers get the raw folds (the
boosting libraries with their native categorical handling, see benchmarks/peers_python.py). Measures
(docs/method.md section 6): RMSE, 0-1 loss, log-loss; every fold's probabilities are clipped at
1e-15 before the log so a peer that outputs an exact zero gets a large finite log-loss.

Every (data set, method, fold) result is cached as one JSON file under the cache directory, so an
interrupted run resumes where it stopped and the report can be rebuilt at any time from the cache
(``--report-only``). HDP results are cached per number of iterations; ESKDB (E = 20, K = 5)
always runs at its own iterations (the default's, ESKDB_ITERATIONS), whatever ``--iterations``, and is
cached under them. ``--summary`` writes one table (each method's mean ranks, training time and the
default's wins against it) instead of the tables per data set.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import accuracy_report as report  # noqa: E402
import mlbench  # noqa: E402
import numdata  # noqa: E402
import peers_python  # noqa: E402
import peers_weka  # noqa: E402
from report_sections import write_section  # noqa: E402

DEBIAN_EXAMPLES = Path("/tmp/wekadeb/usr/share/doc/weka/examples")
# Every classification ARFF in Debian's weka package (3.6.14-3), smallest first. Left out:
# cpu and cpu.with.vendor (numeric class: regression), segment-test (the test split of
# segment-challenge), ReutersCorn/ReutersGrain (one string attribute of raw text, which needs
# StringToWordVector first).
DATASETS = ["weather.nominal", "weather.numeric", "contact-lenses", "labor", "iris", "iris.2D",
            "glass", "breast-cancer", "ionosphere", "vote", "diabetes", "soybean", "unbalanced",
            "credit-g", "segment-challenge", "supermarket"]
# then the classification sets of R's mlbench (Debian's r-cran-mlbench), converted to ARFF by
# benchmarks/mlbench.py into <cache-dir>/mlbench; named mlbench-<R name>
DATASETS += mlbench.DATASETS
# numeric sets of 1,797 to 20,000 rows from data packages (benchmarks/numdata.py), into <cache-dir>/numdata;
# not in DATASETS: --datasets numeric-large names them
NUMERIC_LARGE = numdata.DATASETS
DATASET_GROUPS = {"numeric-large": NUMERIC_LARGE}

OUR_STRUCTURES = [("NB", "nb", 0), ("TAN", "tan", 1)] + [(f"kDB-{k}", "kdb", k) for k in range(1, 6)] \
    + [("SkDB", "skdb", 5)]
OURS = {f"{prefix} {label}": (structure, k, est)
        for prefix, est in (("HDP", "hdp"), ("m-est.", "m-estimate"))
        for label, structure, k in OUR_STRUCTURES}
# ESKDB: E members of SkDB with K = 5, each on its own stochastic cut points of the raw
# training fold; always ESKDB_ITERATIONS iterations (burn-in at its default), whatever --iterations:
# None is the classifier's default ("auto": hdp_plugin.config.AUTO_ITERATIONS["eskdb"] for an ensemble)
ESKDB_MEMBERS, ESKDB_K, ESKDB_ITERATIONS = 20, 5, None


def eskdb_iterations() -> int:
    """The iterations ESKDB runs in the tables (its default's, when ESKDB_ITERATIONS is None)."""
    from hdp_plugin.config import AUTO_ITERATIONS

    return AUTO_ITERATIONS["eskdb"] if ESKDB_ITERATIONS is None else ESKDB_ITERATIONS
ESKDB = {"HDP ESKDB": "hdp", "m-est. ESKDB": "m-estimate", "HDP ESKDB smdl": "hdp"}
#: ESKDB methods with another discretisation than the default's ("auto": stochastic gain): the stochastic
#: MDL of the method's authors.
ESKDB_DISCRETIZATION = {"HDP ESKDB smdl": "stochastic-mdl", "m-est. ESKDB": "stochastic-mdl"}
ALL_METHODS = list(OURS) + list(ESKDB) + list(peers_python.PYTHON_PEERS) + list(peers_python.RAW_PEERS) \
    + list(peers_weka.WEKA_METHODS)
HEADLINE = ["HDP kDB-5", "HDP SkDB", "HDP ESKDB", "m-est. ESKDB"]
# the default, and the strongest peers it is ranked among
TARGET = "HDP ESKDB"
TARGET_PEERS = ["sklearn RF", "Weka RF", "XGBoost (raw)", "XGBoost (bins)", "CatBoost", "LightGBM", "skbn AODE",
                "skbn A2DE", "m-est. ESKDB"]
# (data set, method) pairs not run by default, and why (--run-slow runs them anyway)
TOO_SLOW = {
    ("supermarket", "pyAgrum TAN"): "216 attributes: one fold ran over 8 minutes without finishing",
    ("supermarket", "skbn A2DE"): "216 attributes make 23,220 two-parent models: one fold ran over 6 minutes without finishing",
    # pairs whose one fold takes many minutes on a 2-core machine; the large sets' other pairs run
    ("mlbench-DNA", "pyAgrum TAN"): "180 attributes: one fold ran over 6.5 minutes without finishing",
    ("mlbench-DNA", "skbn A2DE"): "180 attributes make 16,110 two-parent models: one fold ran over 6.5 minutes "
                                  "without finishing",
    ("mlbench-Satellite", "skbn A2DE"): "one fold took 230 s (about 40 minutes for the 10 folds)",
    ("mlbench-LetterRecognition", "skbn A2DE"): "one fold took 280 s (about 47 minutes for the 10 folds)",
    # CatBoost at its defaults on many nominal attributes
    ("soybean", "CatBoost"): "one fold ran over 7 minutes",
    ("mlbench-Soybean", "CatBoost"): "one fold ran over 7 minutes",
    ("supermarket", "CatBoost"): "216 attributes: one fold ran over 7 minutes",
    ("mlbench-DNA", "CatBoost"): "180 attributes: one fold ran over 7 minutes",
}
CLIP = 1e-15


def code_version() -> str:
    """The commit of the hdp_plugin code a run uses, marked when hdp_plugin/ has local changes."""
    import subprocess

    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "hdp_plugin"],
                               capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+local changes" if dirty else "")


def fold_split(path, repeat: int, fold: int):
    """``(train, test)`` of one fold of the 5x2 cross-validation of the ARFF file ``path``: rows with a
    known class, ``stratified_folds`` of repeat ``repeat``, test fold ``fold``."""
    from hdp_plugin import read_dataset
    from hdp_plugin.model.evaluation import stratified_folds

    data = read_dataset(path)
    data = data.take(np.nonzero(data.y >= 0)[0])
    folds = stratified_folds(data.y, 2, repeat)
    return data.take(np.nonzero(folds != fold)[0]), data.take(np.nonzero(folds == fold)[0])


def seed_of(repeat: int, fold: int) -> int:
    """The random_state of every randomised method on one fold (HDP sampler, both forests)."""
    return 10 * repeat + fold


def slug(method: str, iterations: int) -> str:
    """Cache directory of a method: HDP results per number of iterations (ESKDB's own, fixed)."""
    s = re.sub(r"[^a-z0-9]+", "-", method.lower()).strip("-")
    if method in ESKDB:
        s += f"-e{ESKDB_MEMBERS}-k{ESKDB_K}"
        if ESKDB[method] != "hdp":
            return s
        if ESKDB_ITERATIONS is not None:
            return f"{s}-i{ESKDB_ITERATIONS}"
        first, dense = eskdb_first_check(), eskdb_dense()  # results of another stopping rule are not these
        return f"{s}-iauto{eskdb_iterations()}" + (f"-c{first}" if first else "") \
            + (f"-d{dense[0]}r{dense[1]}" if dense else "")
    return f"{s}-i{iterations}" if method.startswith("HDP ") else s


def our_classifier(method: str, iterations: int, seed: int):
    """The BayesNetClassifier of one of our methods (OURS or ESKDB), one thread."""
    from hdp_plugin import BayesNetClassifier

    if method in ESKDB:
        return BayesNetClassifier(structure="eskdb", n_members=ESKDB_MEMBERS, k=ESKDB_K,
                                  estimator=ESKDB[method], iterations=ESKDB_ITERATIONS,
                                  discretization=ESKDB_DISCRETIZATION.get(method, "auto"),
                                  random_state=seed, n_jobs=1)
    structure, k, est = OURS[method]
    return BayesNetClassifier(structure=structure, k=k, estimator=est, iterations=iterations,
                              random_state=seed, n_jobs=1)


def find_dataset(name: str, data_dirs: list[Path], mlbench_dir: Path | None = None,
                 cache: Path = HERE / ".cache", numdata_dirs: list[Path] | None = None) -> tuple[Path | None, str]:
    """The ARFF file of a data set, and why there is none: ``name`` itself when it is the path of a file,
    else ``<name>.arff`` in the first of ``data_dirs`` that has it, or for ``mlbench-<R name>`` the ARFF
    converted from mlbench's ``.rda`` file (in ``mlbench_dir`` or a default place) under ``cache/mlbench``,
    or for a set of benchmarks/numdata.py the ARFF converted from its package's files (under
    ``numdata_dirs`` or numdata's default places) under ``cache/numdata``."""
    if Path(name).is_file():
        return Path(name), ""
    if name.endswith(".arff") or "/" in name or "\\" in name:
        return None, "no such file"
    if name in numdata.SETS:
        return numdata.find_arff(name, cache / "numdata", numdata_dirs)
    if name.startswith(mlbench.PREFIX):
        out = cache / "mlbench"
        rda_dir = mlbench.find_rda_dir(mlbench_dir)
        if rda_dir is None:
            cached = out / f"{name}.arff"
            if cached.is_file():
                return cached, ""
            where = mlbench_dir or " or ".join(map(str, mlbench.RDA_DIRS))
            return None, (f"mlbench's .rda files not found in {where} "
                          "(apt-get download r-cran-mlbench, see benchmarks/mlbench.py; or --mlbench-dir)")
        if not peers_python.available("rdata"):
            return None, "the rdata package is not installed (pip install -e .[bench])"
        try:
            return mlbench.convert(name, rda_dir, out), ""
        except (OSError, ValueError) as e:
            return None, str(e)
    for d in data_dirs:
        p = d / f"{name}.arff"
        if p.exists():
            return p, ""
    return None, f"{name}.arff not found in {', '.join(map(str, data_dirs))}"


def metrics(proba: np.ndarray, y: np.ndarray, train_s: float, test_s: float) -> dict:
    from hdp_plugin.model.evaluation import rmse, zero_one_loss

    p_true = proba[np.arange(len(y)), y]
    return {"rmse": rmse(proba, y), "zero_one": zero_one_loss(proba, y),
            "log_loss": float(-np.mean(np.log(np.clip(p_true, CLIP, 1.0)))),
            "clipped_rows": int((p_true < CLIP).sum()), "rows": int(len(y)),
            "train_s": train_s, "test_s": test_s}


def save(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record))
    tmp.replace(path)


def run_dataset(name: str, path: Path, methods: list[str], iterations: int, repeats: int,
                cache: Path, classpath: str | None, quiet: bool, skip=frozenset(),
                commit: str = "unknown") -> str:
    """Run every missing (method, fold) of one data set into the cache; return a summary line."""
    from hdp_plugin import read_dataset
    from hdp_plugin.model.evaluation import stratified_folds
    from hdp_plugin.preprocess import Discretizer

    t_start = time.perf_counter()
    data = read_dataset(path)
    n_file_rows = data.n_rows
    keep = np.nonzero(data.y >= 0)[0]  # rows with a known class, in file order
    data = data.take(keep)
    n_classes = data.n_classes
    weka_jobs, weka_meta = [], []
    arff = None
    done = 0
    for r in range(repeats):
        fold = stratified_folds(data.y, 2, r)
        for f in range(2):
            todo = [m for m in methods if (name, m) not in skip
                    and not (cache / name / slug(m, iterations) / f"r{r}f{f}.json").exists()]
            if not todo:
                continue
            tr_idx, te_idx = np.nonzero(fold != f)[0], np.nonzero(fold == f)[0]
            train, test = data.take(tr_idx), data.take(te_idx)
            seed = seed_of(r, f)
            disc = None
            for m in todo:
                out = cache / name / slug(m, iterations) / f"r{r}f{f}.json"
                if m in OURS or m in ESKDB:
                    clf = our_classifier(m, iterations, seed)
                    t0 = time.perf_counter()
                    # (stochastic) MDL discretisation of the raw training fold happens inside fit
                    clf.fit(train)
                    t1 = time.perf_counter()
                    proba = clf.predict_proba(test)
                    t2 = time.perf_counter()
                elif m in peers_python.PYTHON_PEERS:
                    if disc is None:
                        d = Discretizer(method="mdl").fit(train)
                        dtr, dte = d.transform(train), d.transform(test)
                        card = dtr.cardinalities()
                        disc = True
                    # peers fit and predict in one call: both are timed as training
                    t0 = time.perf_counter()
                    proba = peers_python.run_peer(m, dtr.X, dtr.y, dte.X, card, n_classes, seed)
                    t1 = t2 = time.perf_counter()
                elif m in peers_python.RAW_PEERS:
                    t0 = time.perf_counter()
                    proba = peers_python.run_raw_peer(m, train, test, n_classes, seed)
                    t1 = t2 = time.perf_counter()
                else:
                    if arff is None:
                        header, rows = peers_weka.split_arff(path)
                        if len(rows) != n_file_rows:
                            raise RuntimeError(f"{path}: ARFF rows do not match the reader's rows")
                        arff = (header, rows)
                    fdir = cache / name / "folds"
                    fdir.mkdir(parents=True, exist_ok=True)
                    trf, tef = fdir / f"r{r}f{f}-train.arff", fdir / f"r{r}f{f}-test.arff"
                    if not trf.exists():
                        peers_weka.write_fold(*arff, keep[tr_idx], trf)
                        peers_weka.write_fold(*arff, keep[te_idx], tef)
                    csv = fdir / f"{slug(m, iterations)}-r{r}f{f}.csv"
                    weka_jobs.append((peers_weka.WEKA_METHODS[m], seed, trf, tef, csv))
                    weka_meta.append((m, out, csv, test.y))
                    continue
                save(out, metrics(proba, test.y, t1 - t0, t2 - t1) | {"method": m, "seed": seed, "commit": commit})
                done += 1
                if not quiet:
                    print(f"  {name} {m} r{r}f{f} {t1 - t0:.2f}s", file=sys.stderr, flush=True)
    if weka_jobs:
        peers_weka.run_weka(classpath, weka_jobs)
        for (m, out, csv, y), job in zip(weka_meta, weka_jobs):
            proba, tr_s, te_s = peers_weka.read_output(csv)
            save(out, metrics(proba, y, tr_s, te_s) | {"method": m, "seed": job[1], "commit": commit})
            done += 1
    return f"{name}: {done} new result(s) in {time.perf_counter() - t_start:.1f}s"


def run_dataset_safely(*args) -> tuple[bool, str]:
    """:func:`run_dataset`, but a data set that raises is reported (``(False, "name: failed: ...")``)
    instead of ending the whole run: its finished folds are cached, the others stay missing, and the
    report shows it as incomplete."""
    try:
        return True, run_dataset(*args)
    except Exception as e:  # noqa: BLE001 - one data set's failure must not lose the others'
        return False, f"{args[0]}: failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def collect(cache: Path, datasets, methods, iterations, repeats):
    """{measure: {data set: {method: mean over folds}}} for complete (data set, method) pairs."""
    tables = {k: {} for k in (*report.MEASURES, "train_s", "clipped_rows")}
    for ds in datasets:
        for m in methods:
            recs = []
            for r in range(repeats):
                for f in range(2):
                    p = cache / ds / slug(m, iterations) / f"r{r}f{f}.json"
                    if p.exists():
                        recs.append(json.loads(p.read_text()))
            if len(recs) != 2 * repeats:
                continue
            for k in report.MEASURES:
                tables[k].setdefault(ds, {})[m] = float(np.mean([x[k] for x in recs]))
            tables["train_s"].setdefault(ds, {})[m] = float(np.sum([x["train_s"] for x in recs]))
            tables["clipped_rows"].setdefault(ds, {})[m] = int(np.sum([x["clipped_rows"] for x in recs]))
    return tables


def eskdb_first_check() -> int | None:
    """The iteration at which the default's stopping rule first checks an ESKDB tree (None at fixed iterations)."""
    from hdp_plugin.config import AUTO_FIRST_CHECK

    return AUTO_FIRST_CHECK.get("eskdb") if ESKDB_ITERATIONS is None else None


def eskdb_dense() -> tuple[int, int] | None:
    """(iterations, rows per class) of the default's cap on dense data (None at fixed iterations)."""
    from hdp_plugin.config import AUTO_DENSE_ITERATIONS, DENSE_ROWS_PER_CLASS

    cap = AUTO_DENSE_ITERATIONS.get("eskdb")
    return (cap, DENSE_ROWS_PER_CLASS) if cap and ESKDB_ITERATIONS is None else None


def eskdb_label() -> str:
    n = eskdb_iterations()
    if ESKDB_ITERATIONS is not None:
        return str(n)
    checks = eskdb_checks()
    dense = eskdb_dense()
    dense = f"; {dense[0]} at {dense[1]} or more training rows per class" if dense else ""
    return f"its default (auto: trees checked at {' and '.join(map(str, checks))}, at most {n}{dense})" if checks \
        else f"its default ({n})"


def eskdb_checks() -> list[int]:
    """The iterations at which the default's stopping rule checks an ESKDB tree (none at fixed iterations)."""
    from hdp_plugin.hdp.sampler import convergence_checks

    first = eskdb_first_check()
    return convergence_checks(eskdb_iterations(), None, first) if first else []


def eskdb_burn_in() -> str:
    """ESKDB's burn-in as the tables' notes state it."""
    n, checks = eskdb_iterations(), eskdb_checks()
    if checks:
        return "that of the length each tree runs: " + ", ".join(f"{i // 10} at {i}" for i in checks + [n])
    return str(min(1000, n // 10))


def _header(tables, datasets, methods, present, complete, args, command: str, summary: bool = False) -> list[str]:
    """The section's title, the command that regenerates it and what ran where."""
    L = [f"**Accuracy: {args.repeats}x2 cross-validation, {len(datasets)} data sets, "
         f"HDP at {args.iterations} iterations, ESKDB at {eskdb_label()}**", "",
         "Regenerate (resumes from the cache under `benchmarks/.cache/`):", "", "```",
         command, "```", "",
         f"- HDP at {args.iterations} iterations (burn-in min(1000, iterations/10)), LEVEL tying, "
         f"`random_state = 10*repeat + fold`, one thread; m-estimates with m = 1.",
         f"- ESKDB: `structure=\"eskdb\"`, E = {ESKDB_MEMBERS} members, K = {ESKDB_K}, always "
         f"{eskdb_label()} iterations whatever the HDP setting above (default burn-in, "
         f"{eskdb_burn_in()}); each member discretises the raw training fold with "
         "its own stochastic cut points inside `fit`: the default's (`stochastic-gain`), but "
         + ", ".join(f"{m} `{d}`" for m, d in ESKDB_DISCRETIZATION.items()) + ".",
         f"- {args.repeats}x2 stratified cross-validation (`stratified_folds(y, 2, seed)`, seeds "
         f"0..{args.repeats - 1}); the same folds for every method. "
         + (f"A method's figure on a data set is its mean over the {2 * args.repeats} test folds, compared at "
            f"{report.DIGITS} decimals." if summary else
            f"Figures are means over the {2 * args.repeats} test folds, printed to {report.DIGITS} decimals; "
            "the best of each row is bold."),
         f"- {len(complete)} data set(s) complete for all {len(present)} methods"
         + (f"; incomplete: {', '.join(d for d in datasets if d not in complete)}" if len(complete) < len(datasets) else "")
         + "."]
    slow = [f"{m} on {d} ({why})" for (d, m), why in TOO_SLOW.items()
            if d in datasets and m in methods and m not in tables["rmse"].get(d, {})]
    if slow:
        L.append("- Not run: " + "; ".join(slow) + ".")
    if getattr(args, "no_times", False):
        L.append("- Training times are left out (`--no-times`): the machine ran other work beside this run.")
    return L + ["", "Machine:", "", *report.machine(), ""]


def _present(tables, datasets, methods):
    """The methods with results, the data sets with results, and those complete for every method."""
    present = [m for m in methods if any(m in row for row in tables["rmse"].values())]
    done_ds = [d for d in datasets if d in tables["rmse"]]
    complete = [d for d in done_ds if all(m in tables["rmse"][d] for m in present)]
    return present, done_ds, complete


def _wdl_cell(table, a: str, b: str) -> str:
    w, d, lo, p = report.win_draw_loss(table, a, b)
    s = f"{w}/{d}/{lo}"
    return f"**{s}**" if p < 0.05 else s


def summary_table(tables, present: list[str], complete: list[str], times: bool = True) -> list[str]:
    """Every method's mean ranks over ``complete``, its training time summed over their folds (unless
    ``times`` is false), and TARGET's wins/draws/losses against it; best RMSE rank first."""
    ranks = {key: report.mean_ranks({d: tables[key][d] for d in complete}, present) for key in report.MEASURES}
    train = {m: sum(tables["train_s"].get(d, {}).get(m, 0.0) for d in complete) for m in present}
    wdl = TARGET in present
    L = ["### Mean ranks and training time" if times else "### Mean ranks", "",
         f"Mean rank over the {len(complete)} complete data sets on each measure (1 = best; ties share "
         "the mean rank)"
         + (" and training time in seconds summed over all their folds (one thread; peers from "
            "PyPI are timed fit + predict; Weka's excludes JVM start-up and ARFF parsing)" if times else "")
         + (f"; {TARGET}'s wins/draws/losses against each method over every data set on which both ran, "
            f"a draw an equal mean at {report.DIGITS} decimals, **bold** where the two-tailed sign test "
            "(draws excluded) gives p < 0.05" if wdl else "") + ".", "",
         "| method | " + " | ".join(report.MEASURES.values()) + " |" + (" training s |" if times else "")
         + (f" {TARGET}: W/D/L on RMSE; 0-1 loss; log-loss |" if wdl else ""),
         "|---|" + "---:|" * (len(report.MEASURES) + times) + ("---|" if wdl else "")]
    for m in sorted(present, key=lambda m: ranks["rmse"][m]):
        row = f"| {m} | " + " | ".join(f"{ranks[k][m]:.2f}" for k in report.MEASURES) + " |" \
            + (f" {train[m]:.1f} |" if times else "")
        if wdl:
            row += " " + ("; ".join(_wdl_cell(tables[k], TARGET, m) for k in report.MEASURES)
                          if m != TARGET else "") + " |"
        L.append(row)
    return L


def render_summary(tables, datasets, methods, args, command: str) -> str:
    """The section's header and :func:`summary_table`."""
    present, _, complete = _present(tables, datasets, methods)
    return "\n".join([f"<!-- {args.section}:begin (generated by benchmarks/accuracy.py; edit outside these markers) -->",
                      *_header(tables, datasets, methods, present, complete, args, command, summary=True),
                      *summary_table(tables, present, complete, not args.no_times), "",
                      f"<!-- {args.section}:end -->"]) + "\n"


def render(tables, datasets, methods, args, command: str) -> str:
    """The tables per data set of every measure, mean ranks, win/draw/loss and training time."""
    present, done_ds, complete = _present(tables, datasets, methods)
    L = [f"<!-- {args.section}:begin (generated by benchmarks/accuracy.py; edit outside these markers) -->",
         *_header(tables, datasets, methods, present, complete, args, command)]
    for key, title in report.MEASURES.items():
        L += [f"### {title}", "", *report.measure_table(tables[key], datasets, present), ""]
        ranks = report.mean_ranks({d: tables[key][d] for d in complete}, present)
        L += [f"Mean rank over the {len(complete)} complete data sets (1 = best):", "",
              "| " + " | ".join(present) + " |", "|" + "---:|" * len(present),
              "| " + " | ".join(f"{ranks[m]:.2f}" for m in present) + " |", ""]
    L += ["### Win/draw/loss", "",
          "Per data set, the mean loss over the folds of the row's method against the column's method: "
          "a win is a lower mean, a draw an equal mean at "
          f"{report.DIGITS} decimals. p is the two-tailed exact binomial sign test on wins against "
          "losses, draws excluded; **bold** when p < 0.05.", ""]
    for a in HEADLINE:
        if a not in present:
            continue
        others = [m for m in present if m != a]
        L += [f"#### {a} against each method", "",
              "| against | " + " | ".join(report.MEASURES.values()) + " |", "|---|---|---|---|"]
        for b in others:
            cells = []
            for key in report.MEASURES:
                w, d, lo, p = report.win_draw_loss(tables[key], a, b)
                s = f"{w}/{d}/{lo} p={p:.3f}"
                cells.append(f"**{s}**" if p < 0.05 else s)
            L.append(f"| {b} | " + " | ".join(cells) + " |")
        L.append("")
    L += target_lines(tables, present)
    clipped = {m: sum(tables["clipped_rows"].get(d, {}).get(m, 0) for d in done_ds) for m in present}
    clipped = {m: c for m, c in clipped.items() if c}
    L += ["### Probabilities clipped for the log-loss", "",
          "Test rows whose true class got a probability below 1e-15 (clipped to 1e-15), summed over "
          "all folds and data sets: "
          + (", ".join(f"{m} {c}" for m, c in clipped.items()) if clipped else "none") + ".", ""]
    if args.no_times:
        return "\n".join(L + [f"<!-- {args.section}:end -->"]) + "\n"
    train = {m: sum(tables["train_s"].get(d, {}).get(m, 0.0) for d in complete) for m in present}
    L += ["### Training time", "",
          f"Seconds summed over all folds of the {len(complete)} complete data sets (one thread; "
          "peers from PyPI are timed fit + predict; Weka's excludes JVM start-up and ARFF parsing):", "",
          "| " + " | ".join(present) + " |", "|" + "---:|" * len(present),
          "| " + " | ".join(f"{train[m]:.1f}" for m in present) + " |", "",
          f"<!-- {args.section}:end -->"]
    return "\n".join(L) + "\n"


def target_lines(tables, present: list[str]) -> list[str]:
    """TARGET's mean ranks among TARGET_PEERS (left out when they are every method of the report: the
    mean ranks above are those), and its 0-1 loss against Weka's forest."""
    peers = [m for m in TARGET_PEERS if m in present]
    if TARGET not in present or not peers:
        return []
    group = [TARGET] + peers
    L = [f"### {TARGET} among the strongest peers", ""]
    if set(group) != set(present):
        common = [d for d, row in tables["rmse"].items() if all(m in row for m in group)]
        L += [f"Mean ranks among these {len(group)} methods only (1 = best), over the {len(common)} data set(s) "
              "on which all of them ran:", "",
              "| measure | " + " | ".join(group) + " |", "|---|" + "---:|" * len(group)]
        for key, title in report.MEASURES.items():
            ranks = report.mean_ranks({d: tables[key][d] for d in common}, group)
            L.append(f"| {title} | " + " | ".join(f"{ranks[m]:.2f}" for m in group) + " |")
        L.append("")
    if "Weka RF" in present:
        w, d, lo, _ = report.win_draw_loss(tables["zero_one"], TARGET, "Weka RF")
        L += [f"0-1 loss no worse than Weka RF's (wins and draws at {report.DIGITS} decimals): {TARGET} "
              f"on **{w + d} of {w + d + lo}** data sets.", ""]
    return L if len(L) > 2 else []


def write_report(path: Path, section: str, name: str = "accuracy") -> None:
    """Replace the generated section ``name`` of ``path`` (between its markers), or create the file."""
    write_section(path, section, name)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(DATASETS),
                    help="Comma-separated data set names (ARFF file stems, or paths), or a group: "
                         + "; ".join(f"{g} ({', '.join(v)})" for g, v in DATASET_GROUPS.items()) + ".")
    ap.add_argument("--methods", default="all",
                    help="Comma-separated method names, or 'all' (every method whose packages are installed).")
    ap.add_argument("--iterations", type=int, default=5000, help="Gibbs iterations of the HDP sampler.")
    ap.add_argument("--repeats", type=int, default=5, help="Repetitions of 2-fold cross-validation.")
    ap.add_argument("--data-dir", action="append", type=Path,
                    help="Directory with the ARFF files (repeatable); default tests/data then Debian's examples.")
    ap.add_argument("--mlbench-dir", type=Path,
                    help="Directory of R mlbench's .rda files for the mlbench-* data sets; default "
                         + " or ".join(map(str, mlbench.RDA_DIRS)) + " (see benchmarks/mlbench.py).")
    ap.add_argument("--numdata-dir", action="append", type=Path,
                    help="Folder the packages of the numeric-large sets were unpacked into (repeatable); default "
                         + " then ".join(map(str, numdata.ROOTS)) + " (see benchmarks/numdata.py).")
    ap.add_argument("--cache-dir", type=Path, default=HERE / ".cache",
                    help="Where per-fold results (and the converted mlbench ARFF files) are kept.")
    ap.add_argument("--jobs", type=int, default=1, help="Data sets run in parallel (worker processes).")
    ap.add_argument("-o", "--output", type=Path, help="Markdown file whose accuracy section is (re)written.")
    ap.add_argument("--run-slow", action="store_true",
                    help="Also run the (data set, method) pairs listed in TOO_SLOW.")
    ap.add_argument("--section", default="accuracy",
                    help="Name of the generated section of the output file (several runs can share a file).")
    ap.add_argument("--report-only", action="store_true", help="Only rebuild the report from the cache.")
    ap.add_argument("--summary", action="store_true",
                    help="One table of mean ranks, training time and the default's wins, not the tables per data set.")
    ap.add_argument("--no-times", action="store_true",
                    help="Leave training times out of the report (a run whose times are not comparable).")
    ap.add_argument("--quiet", action="store_true", help="No per-fold progress on stderr.")
    args = ap.parse_args(argv)

    data_dirs = args.data_dir or [ROOT / "tests" / "data", DEBIAN_EXAMPLES]
    datasets = [x for d in args.datasets.split(",") if d for x in DATASET_GROUPS.get(d, [d])]
    paths = {}
    for d in datasets:
        paths[d], why = find_dataset(d, data_dirs, args.mlbench_dir, args.cache_dir, args.numdata_dir)
        if paths[d] is None:
            print(f"warning: {d} skipped: {why}", file=sys.stderr)
    datasets = [d for d in datasets if paths[d] is not None]

    wanted = ALL_METHODS if args.methods == "all" else [m.strip() for m in args.methods.split(",")]
    unknown = [m for m in wanted if m not in ALL_METHODS]
    if unknown:
        ap.error(f"unknown method(s) {unknown}; known: {', '.join(ALL_METHODS)}")
    classpath = None
    if any(m in peers_weka.WEKA_METHODS for m in wanted):
        classpath = peers_weka.weka_classpath(args.cache_dir)
    methods = []
    for m in wanted:
        module = peers_python.PYTHON_PEERS.get(m) or peers_python.RAW_PEERS.get(m)
        if module and not peers_python.available(module):
            print(f"warning: {m} skipped ({module} is not installed; pip install -e .[bench])", file=sys.stderr)
        elif m in peers_weka.WEKA_METHODS and classpath is None:
            print(f"warning: {m} skipped (no java or Weka jar)", file=sys.stderr)
        else:
            methods.append(m)

    failed = 0
    if not args.report_only:
        # the code a run uses is the code at its start: record that commit, then import it
        commit = code_version()
        import hdp_plugin.model.classifier  # noqa: F401
        skip = frozenset() if args.run_slow else frozenset(TOO_SLOW)
        tasks = [(d, paths[d], methods, args.iterations, args.repeats, args.cache_dir, classpath, args.quiet, skip, commit)
                 for d in datasets]
        if args.jobs <= 1:
            results = (run_dataset_safely(*t) for t in tasks)
        else:
            pool = ProcessPoolExecutor(args.jobs)
            results = (fut.result() for fut in as_completed([pool.submit(run_dataset_safely, *t) for t in tasks]))
        for ok, line in results:
            print(line, file=sys.stderr, flush=True)
            failed += not ok
        if args.jobs > 1:
            pool.shutdown()

    tables = collect(args.cache_dir, datasets, methods, args.iterations, args.repeats)
    shown = [a for a in (argv if argv is not None else sys.argv[1:]) if a not in ("--report-only", "--quiet")]
    command = "python benchmarks/accuracy.py " + " ".join(a if " " not in a else repr(a) for a in shown)
    section = (render_summary if args.summary else render)(tables, datasets, methods, args, command.strip())
    if args.output:
        write_report(args.output, section, args.section)
    else:
        sys.stdout.write(section)
    if failed:
        print(f"{failed} data set(s) failed (above); the report shows them as incomplete", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
