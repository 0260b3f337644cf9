"""Keep benchmarks/accuracy.py from rotting: one tiny data set, one repetition, few iterations.

Runs our configurations and whichever PyPI peers are installed (the ``bench`` extra); Weka's
peers are left to the full benchmark (they need a JVM per run).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _bench_module(name: str):
    """The module benchmarks/``name``.py (the benchmarks import each other by name)."""
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCH))


@pytest.fixture(scope="module")
def accuracy():
    return _bench_module("accuracy")


def test_sign_test_is_the_exact_two_tailed_binomial(accuracy):
    p = accuracy.report.sign_test_p
    assert p(0, 0) == 1.0
    assert p(5, 5) == 1.0
    assert p(6, 0) == pytest.approx(2 / 64)  # 0.03125: significant at 0.05
    assert p(0, 5) == pytest.approx(2 / 32)  # 0.0625: not significant
    assert p(10, 2) == pytest.approx(2 * (1 + 12 + 66) / 4096)


def test_mean_ranks_share_ties(accuracy):
    table = {"a": {"x": 0.1, "y": 0.1, "z": 0.3}, "b": {"x": 0.3, "y": 0.2, "z": 0.1}}
    assert accuracy.report.mean_ranks(table, ["x", "y", "z"]) == {"x": 2.25, "y": 1.75, "z": 2.0}


def test_accuracy_runs_and_resumes_on_a_tiny_data_set(accuracy, tmp_path, capsys):
    methods = ["HDP NB", "HDP kDB-5", "HDP SkDB", "m-est. kDB-5"]
    methods += [m for m, mod in accuracy.peers_python.PYTHON_PEERS.items()
                if accuracy.peers_python.available(mod) and m != "skbn A2DE"]
    out = tmp_path / "benchmarks.md"
    out.write_text("# Benchmarks\n\nhand-written text that must survive\n")
    argv = ["--datasets", "contact-lenses", "--methods", ",".join(methods), "--iterations", "50",
            "--repeats", "1", "--cache-dir", str(tmp_path / "cache"), "--quiet", "-o", str(out)]
    assert accuracy.main(argv) == 0
    text = out.read_text()
    assert "hand-written text that must survive" in text
    for title in ("### RMSE", "### 0-1 loss", "### log-loss", "#### HDP kDB-5 against each method"):
        assert title in text
    assert "1 data set(s) complete" in text
    row = next(line for line in text.splitlines() if line.startswith("| contact-lenses |"))
    assert row.count("|") == len(methods) + 2 and "inf" not in row
    cached = sorted((tmp_path / "cache" / "contact-lenses").glob("*/r*f*.json"))
    assert len(cached) == 2 * len(methods)
    rec = json.loads(cached[0].read_text())
    assert 0.0 <= rec["rmse"] <= 1.0 and 0.0 <= rec["zero_one"] <= 1.0
    # a second run only rebuilds the report from the cache, and replaces its own section only
    before = {p: p.stat().st_mtime_ns for p in cached}
    assert accuracy.main(argv) == 0
    assert {p: p.stat().st_mtime_ns for p in cached} == before
    assert out.read_text().count("<!-- accuracy:begin") == 1


def test_eskdb_and_xgboost_run_and_meet_the_report(accuracy, tmp_path, monkeypatch):
    """ESKDB (shrunk: 3 members, 40 iterations) and both XGBoost peers on a tiny data set; the
    cache directory of HDP ESKDB names its own iteration count, not --iterations'."""
    methods = ["HDP ESKDB", "m-est. ESKDB", "HDP kDB-1"]
    if accuracy.peers_python.available("xgboost"):
        methods += ["XGBoost (raw)", "XGBoost (bins)"]
    monkeypatch.setattr(accuracy, "ESKDB_MEMBERS", 3)
    monkeypatch.setattr(accuracy, "ESKDB_ITERATIONS", 40)
    out = tmp_path / "benchmarks.md"
    argv = ["--datasets", "labor", "--methods", ",".join(methods), "--iterations", "30", "--repeats", "1",
            "--cache-dir", str(tmp_path / "cache"), "--quiet", "-o", str(out)]
    assert accuracy.main(argv) == 0
    dirs = sorted(p.name for p in (tmp_path / "cache" / "labor").iterdir())
    assert "hdp-eskdb-e3-k5-i40" in dirs and "m-est-eskdb-e3-k5" in dirs and "hdp-kdb-1-i30" in dirs
    text = out.read_text()
    assert "HDP at 30 iterations, ESKDB at 40" in text
    assert "#### HDP ESKDB against each method" in text and "#### m-est. ESKDB against each method" in text
    assert "### HDP ESKDB among the strongest peers" in text
    row = next(line for line in text.splitlines() if line.startswith("| labor |"))
    assert row.count("|") == len(methods) + 2 and "inf" not in row
    # the summary of the same results: a row per method, HDP ESKDB's wins against each of the others
    summary = tmp_path / "summary.md"
    assert accuracy.main(argv[:-1] + [str(summary), "--summary", "--report-only"]) == 0
    text = summary.read_text()
    assert "### Mean ranks and training time" in text and "### RMSE" not in text
    rows = {line.split("|")[1].strip(): line for line in text.splitlines() if line.startswith("| ")}
    assert set(methods) <= set(rows) and rows["HDP ESKDB"].rstrip().endswith("|  |")
    assert all(re.search(r"\d+/\d+/\d+; \d+/\d+/\d+; \d+/\d+/\d+", rows[m]) for m in methods if m != "HDP ESKDB")
    for m in methods:
        rec = json.loads((tmp_path / "cache" / "labor" / accuracy.slug(m, 30) / "r0f1.json").read_text())
        assert rec["method"] == m and 0.0 <= rec["rmse"] <= 1.0 and rec["rows"] == 28


def test_xgboost_raw_gives_probabilities_in_our_class_order():
    """Raw folds with numeric, nominal and missing values; a class absent from training gets 0."""
    pytest.importorskip("xgboost")
    pytest.importorskip("pandas")
    import numpy as np

    sys.path.insert(0, str(BENCH))
    try:
        peers_python = importlib.import_module("peers_python")
    finally:
        sys.path.remove(str(BENCH))
    from hdp_plugin import read_dataset

    data = read_dataset(BENCH.parent / "tests" / "data" / "labor.arff")
    assert data.numeric is not None and any(not a.numeric for a in data.attributes)
    frame = peers_python._raw_frame(data)
    assert frame.isna().to_numpy().any()  # labor's missing values reach XGBoost as NaN
    assert {str(t) for t in frame.dtypes} == {"float64", "category"}
    train = data.take(np.nonzero(data.y == 1)[0][:20].tolist() + np.nonzero(data.y == 0)[0][:5].tolist())
    p = peers_python.run_raw_peer("XGBoost (raw)", train, data, data.n_classes, 0)
    assert p.shape == (data.n_rows, 2)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-6)
    one_class = data.take(np.nonzero(data.y == 1)[0])
    p = peers_python.run_raw_peer("XGBoost (raw)", one_class, data, data.n_classes, 0)
    assert (p[:, 0] == 0).all() and (p[:, 1] == 1).all()
    soy = read_dataset(BENCH.parent / "tests" / "data" / "soybean.arff").drop_missing_class()[0]
    train = soy.take(np.nonzero(soy.y != 0)[0])
    p = peers_python.run_raw_peer("XGBoost (raw)", train, soy, soy.n_classes, 0)
    assert p.shape == (soy.n_rows, soy.n_classes) and (p[:, 0] == 0).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-6)
    # the class columns are ours: most training rows are predicted as their own class
    assert np.mean(p.argmax(axis=1)[soy.y != 0] == soy.y[soy.y != 0]) > 0.8


def _rda_dir():
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module("mlbench").find_rda_dir()
    finally:
        sys.path.remove(str(BENCH))


def test_mlbench_converter_writes_arff_our_reader_and_weka_split_read(accuracy, tmp_path):
    pytest.importorskip("rdata", reason="rdata (the bench extra) is needed to read mlbench's .rda files")
    rda_dir = _rda_dir()
    if rda_dir is None:
        pytest.skip("r-cran-mlbench's .rda files not found (apt-get download r-cran-mlbench && "
                    "dpkg -x r-cran-mlbench_*.deb /tmp/mlbench)")
    import numpy as np

    from hdp_plugin import read_dataset

    zoo = accuracy.mlbench.convert("mlbench-Zoo", rda_dir, tmp_path)
    assert zoo.name == "mlbench-Zoo.arff"
    d = read_dataset(zoo)
    assert (d.n_rows, d.n_attributes, d.n_classes) == (101, 16, 7)
    assert d.class_attribute.name == "type" and d.class_values[0] == "mammal"
    legs = d.attributes[d.names.index("legs")]
    assert legs.numeric and set(d.numeric[:, 0]) == {0, 2, 4, 5, 6, 8}
    assert d.attributes[0].values == ("FALSE", "TRUE")
    bc = accuracy.mlbench.convert("BreastCancer", rda_dir, tmp_path)
    d = read_dataset(bc)
    assert "Id" not in d.names and d.n_attributes == 9 and d.class_attribute.name == "Class"
    assert (d.X[:, d.names.index("Bare.nuclei")] == d.attributes[5].missing_code).sum() == 16  # NA as ?
    header, rows = accuracy.peers_weka.split_arff(bc)
    assert len(rows) == 699 and rows[0].count(",") == 9
    # a second call reuses the file; the benchmark finds it by name in its cache
    mtime = bc.stat().st_mtime_ns
    assert accuracy.mlbench.convert("BreastCancer", rda_dir, tmp_path).stat().st_mtime_ns == mtime
    path, why = accuracy.find_dataset("mlbench-BreastCancer", [], rda_dir, tmp_path)
    assert path == tmp_path / "mlbench" / "mlbench-BreastCancer.arff" and why == ""
    assert np.array_equal(read_dataset(path).y, d.y)


def test_mlbench_without_its_files_is_skipped_with_the_reason(accuracy, tmp_path):
    path, why = accuracy.find_dataset("mlbench-Glass", [], tmp_path / "nowhere", tmp_path)
    assert path is None and "--mlbench-dir" in why and "r-cran-mlbench" in why
    with pytest.raises(ValueError, match="unknown mlbench data set 'Iris'"):
        accuracy.mlbench.convert("mlbench-Iris", tmp_path, tmp_path)


NUMDATA = ["digits", "kernlab-spam", "modeldata-mlc_churn", "keel-penbased", "keel-magic", "ggplot2-diamonds-20k"]


@pytest.mark.parametrize("name", NUMDATA)
def test_numdata_converter_keeps_every_value_of_a_slice(accuracy, name, tmp_path):
    """Each numeric-large set read from its package's file has the documented shape, and a slice of it
    (every k-th row, about 300) written as ARFF reads back with the same classes and numbers."""
    import numpy as np

    pd = pytest.importorskip("pandas", reason="pandas (the bench extra) builds the data frames")
    from hdp_plugin import read_dataset

    numdata = accuracy.numdata
    spec = numdata.SETS[name]
    if spec.source in ("rda", "lazyload"):
        pytest.importorskip("rdata", reason="rdata (the bench extra) is needed to read R's data files")
    source, why = numdata.source_file(name)
    if source is None:
        pytest.skip(f"{name}'s package files are not here: {why}")
    frame = numdata.read_frame(name, source)
    assert frame.shape == (spec.sample or spec.rows, spec.n_attributes + 1)
    y = frame[spec.class_column]
    assert isinstance(y.dtype, pd.CategoricalDtype) and y.notna().all()
    piece = frame.iloc[:: max(1, len(frame) // 300)]
    path = tmp_path / f"{name}.arff"
    path.write_text(numdata.mlbench.to_arff(piece, name, spec.class_column, spec.drop, source.name,
                                            origin=numdata.origin(name, source)), encoding="utf-8")
    d = read_dataset(path)
    assert (d.n_rows, d.n_attributes) == (len(piece), spec.n_attributes)
    assert d.class_attribute.name == spec.class_column
    assert d.class_values == tuple(str(v) for v in y.cat.categories)
    assert np.array_equal(d.y, piece[spec.class_column].cat.codes.to_numpy())
    numeric = [c for c in piece.columns if c != spec.class_column and pd.api.types.is_numeric_dtype(piece[c])]
    assert [a.name for a in d.attributes if a.numeric] == numeric
    want = piece[numeric].astype("Float64").to_numpy(dtype=np.float64, na_value=np.nan)
    assert np.allclose(d.numeric, want, equal_nan=True, rtol=0, atol=1e-12)
    assert path.read_text(encoding="utf-8").startswith(f"% {name}: ")


def test_numdata_digits_converts_once_and_is_found_by_name(accuracy, tmp_path):
    """digits comes from scikit-learn (in the test extra): the benchmark converts it into its cache once,
    finds it by name, and the group numeric-large names every set."""
    pytest.importorskip("sklearn", reason="scikit-learn bundles the digits")
    from hdp_plugin import read_dataset

    path, why = accuracy.find_dataset("digits", [], None, tmp_path)
    assert why == "" and path == tmp_path / "numdata" / "digits.arff"
    d = read_dataset(path)
    assert (d.n_rows, d.n_attributes, d.n_classes) == (1797, 64, 10)
    assert all(a.numeric for a in d.attributes) and d.class_values[:3] == ("0", "1", "2")
    mtime = path.stat().st_mtime_ns
    assert accuracy.find_dataset("digits", [], None, tmp_path)[0].stat().st_mtime_ns == mtime
    assert accuracy.DATASET_GROUPS["numeric-large"] == NUMDATA
    assert not set(NUMDATA) & set(accuracy.DATASETS)


def test_numdata_sample_is_stratified_exact_and_the_same_every_time(accuracy):
    import numpy as np

    codes = np.repeat(np.arange(5), [597 * 3, 1819 * 3, 4480 * 3, 5113 * 3, 7991 * 3])[::-1].copy()
    picked = accuracy.numdata.stratified_sample(codes, 20000)
    assert len(picked) == 20000 and len(np.unique(picked)) == 20000 and np.all(np.diff(picked) > 0)
    shares = np.bincount(codes[picked], minlength=5) / 20000
    assert np.abs(shares - np.bincount(codes) / len(codes)).max() < 1 / 20000
    assert np.array_equal(picked, accuracy.numdata.stratified_sample(codes, 20000))
    assert not np.array_equal(picked, accuracy.numdata.stratified_sample(codes, 20000, seed=1))
    with pytest.raises(ValueError, match="a sample of 10 rows from 3"):
        accuracy.numdata.stratified_sample(np.zeros(3), 10)


def test_numdata_without_its_files_is_skipped_with_the_reason(accuracy, tmp_path):
    path, why = accuracy.find_dataset("kernlab-spam", [], None, tmp_path, [tmp_path / "nowhere"])
    assert path is None and "spam.rda of kernlab not found" in why
    assert "apt-get download r-cran-kernlab" in why and "--numdata-dir" in why
    # a set converted before is still found once its package files are gone
    (tmp_path / "numdata").mkdir()
    (tmp_path / "numdata" / "kernlab-spam.arff").write_text("@relation x\n")
    assert accuracy.find_dataset("kernlab-spam", [], None, tmp_path, [tmp_path / "nowhere"]) == \
        (tmp_path / "numdata" / "kernlab-spam.arff", "")
    with pytest.raises(ValueError, match="unknown numeric data set 'spam'"):
        accuracy.numdata.convert("spam", tmp_path)


def test_accuracy_no_times_leaves_every_time_out(accuracy, tmp_path):
    """--no-times: the per-set report and the summary name no training time."""
    base = ["--datasets", "contact-lenses", "--methods", "HDP NB,m-est. NB", "--iterations", "20", "--repeats", "1",
            "--cache-dir", str(tmp_path / "cache"), "--quiet", "--no-times"]
    for extra in ([], ["--summary"]):
        out = tmp_path / "b.md"
        assert accuracy.main(base + extra + ["-o", str(out)]) == 0
        text = out.read_text()
        assert "1 data set(s) complete" in text and "Training times are left out" in text
        assert "Training time" not in text.replace("Training times are left out", "") and "training s" not in text
    assert "| method | RMSE | 0-1 loss | log-loss |\n|---|---:|---:|---:|\n| HDP NB | " in text


def test_ranks_among_the_peers_are_left_out_when_they_are_every_method(accuracy):
    """The default's ranks among its strongest peers repeat the report's mean ranks when the peers are
    all its methods: only then is that table left out; the line against Weka's forest stays."""
    row = {"HDP ESKDB": 0.1, "sklearn RF": 0.2, "Weka RF": 0.3, "HDP NB": 0.4}
    tables = {k: {"a": dict(row), "b": dict(row)} for k in accuracy.report.MEASURES}
    only_peers = accuracy.target_lines(tables, ["HDP ESKDB", "sklearn RF", "Weka RF"])
    assert not any(line.startswith("| measure |") for line in only_peers)
    assert any("no worse than Weka RF's" in line and "**2 of 2**" in line for line in only_peers)
    more = accuracy.target_lines(tables, ["HDP ESKDB", "sklearn RF", "Weka RF", "HDP NB"])
    assert "| measure | HDP ESKDB | sklearn RF | Weka RF |" in more
    assert accuracy.target_lines(tables, ["HDP ESKDB", "HDP NB"]) == []


def test_bench_hdp_trains_on_reference_style_fold_files(tmp_path):
    """``bench_hdp.py --reference-folds DIR`` on fold files written here from vote.arff."""
    import subprocess

    import numpy as np

    src = (BENCH.parent / "tests" / "data" / "vote.arff").read_text().splitlines()
    at = next(i for i, line in enumerate(src) if line.strip().lower() == "@data")
    header = src[: at + 1]
    rows = [line for line in src[at + 1 :] if line.strip() and not line.startswith("%")]
    fold = np.arange(len(rows)) % 2
    folder = tmp_path / "vote"
    folder.mkdir()
    for f in (0, 1):
        train = [r for r, g in zip(rows, fold) if g != f]
        test = [r for r, g in zip(rows, fold) if g == f]
        (folder / f"fold{f}_train.arff").write_text("\n".join(header + train) + "\n")
        (folder / f"fold{f}_test.arff").write_text("\n".join(header + test) + "\n")
    proc = subprocess.run(
        [sys.executable, str(BENCH / "bench_hdp.py"), "--reference-folds", str(tmp_path), "--workloads",
         "vote:kdb:2", "--threads", "1", "--iterations", "60,auto"],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for its in ("60", "auto"):
        row = next(line for line in proc.stdout.splitlines() if line.startswith(f"| vote:kdb:2 | {its} |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        ran = cells[2].split("; ")  # per fold; mean per cell
        assert ran[0] == "60, 60" if its == "60" else all(int(v) >= 500 for v in ran[0].split(", ")), row
        # CPU s (two decimals: vote's 60 iterations can print 0.00 on a fast machine); ns per cell and iteration
        assert cells[3] == "1" and float(cells[4]) >= 0 and float(cells[7]) > 0
        assert 0.05 < float(cells[8]) < 0.5 and cells[9] == ""  # pooled RMSE; no other program's results here
    bad = subprocess.run([sys.executable, str(BENCH / "bench_hdp.py"), "--reference-folds", str(tmp_path),
                          "--workloads", "nowhere:kdb:2", "--threads", "1"], capture_output=True, text=True,
                         timeout=600)
    assert bad.returncode != 0 and "fold0_train.arff not found" in bad.stderr


@pytest.fixture(scope="module")
def convergence_run(tmp_path_factory):
    """benchmarks/convergence.py on one tiny data set, once for the tests below (no plot: matplotlib
    is in the bench extra, not in .[test])."""
    tmp = tmp_path_factory.mktemp("convergence")
    out = tmp / "doc.md"
    proc = subprocess.run(
        [sys.executable, str(BENCH / "convergence.py"), "--datasets", "contact-lenses", "--methods", "kDB-1",
         "--repeats", "1", "--cache-dir", str(tmp / "cache"), "-o", str(out)],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return tmp


def test_convergence_study_reads_every_point_from_one_run(convergence_run):
    """Every grid point and rule recorded and the report written; the 5000-iteration point is the
    model a plain fit of 5000 iterations gives."""
    import numpy as np

    tmp_path = convergence_run
    out = tmp_path / "doc.md"
    rec = json.loads((tmp_path / "cache" / "contact-lenses" / "kDB-1" / "r0f0.json").read_text())
    sys.path.insert(0, str(BENCH))
    try:
        conv = importlib.import_module("convergence")
    finally:
        sys.path.remove(str(BENCH))
    assert set(rec["points"]) == {str(i) for i in conv.GRID}
    assert set(rec["rules"]) == {f"{m}:{t}" for m in conv.RULE_MODES for t in conv.RULE_TOLS}
    assert "<!-- convergence:begin" in out.read_text()
    # the last point equals an ordinary fit of 5000 iterations on the same fold, up to rounding
    from hdp_plugin import BayesNetClassifier, read_dataset
    from hdp_plugin.model.evaluation import rmse, stratified_folds

    data = read_dataset(Path(__file__).resolve().parent / "data" / "contact-lenses.arff")
    fold = stratified_folds(data.y, 2, 0)
    train, test = data.take(np.nonzero(fold != 0)[0]), data.take(np.nonzero(fold == 0)[0])
    clf = BayesNetClassifier(structure="kdb", k=1, iterations=5000, random_state=0, n_jobs=1).fit(train)
    assert abs(rmse(clf.predict_proba(test), test.y) - rec["points"]["5000"]["rmse"]) < 1e-9


def test_bench_eskdb_runs_auto_beside_a_fixed_number(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(BENCH / "bench_eskdb.py"), "--dataset", "vote", "--members", "2", "--repeats", "1",
         "--iterations", "40,auto", "--threads", "1,2"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [line.split() for line in proc.stdout.splitlines() if line.split()[:1] in (["40"], ["auto"])]
    assert [(r[0], r[1]) for r in rows] == [("40", "1"), ("40", "2"), ("auto", "1"), ("auto", "2")]
    # iterations run, mean per cell: auto stops an ensemble's trees from config.AUTO_FIRST_CHECK to the cap
    from hdp_plugin import config

    assert float(rows[0][6]) == 40
    assert config.AUTO_FIRST_CHECK["eskdb"] <= float(rows[2][6]) <= config.AUTO_ITERATIONS["eskdb"]
    assert "yes, bit for bit on every fold" in proc.stdout


def test_convergence_plot_from_the_cached_run(convergence_run):
    """--report-only --plot draws the curves from the cache the run left (needs matplotlib, from the
    bench extra)."""
    pytest.importorskip("matplotlib", reason="matplotlib (the bench extra) draws the convergence curves")
    svg = convergence_run / "c.svg"
    proc = subprocess.run(
        [sys.executable, str(BENCH / "convergence.py"), "--datasets", "contact-lenses", "--methods", "kDB-1",
         "--repeats", "1", "--cache-dir", str(convergence_run / "cache"), "--report-only", "--plot", str(svg)],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert svg.read_text().startswith("<?xml") and svg.stat().st_size > 1000


def test_accuracy_time_plot_reads_the_summary_table(accuracy, tmp_path):
    """benchmarks/plot_accuracy_time.py draws a point per method of a summary table (written here by
    accuracy.summary_table from a few made-up results) into a small SVG, and names a section without one."""
    pytest.importorskip("matplotlib", reason="matplotlib (the bench extra) draws the figure")
    tables = {"rmse": {}, "zero_one": {}, "log_loss": {}, "train_s": {}, "clipped_rows": {}}
    methods = ["HDP ESKDB", "Weka RF", "sklearn CategoricalNB"]
    for i, ds in enumerate(["a", "b", "c"]):
        for j, m in enumerate(methods):
            for key in ("rmse", "zero_one", "log_loss"):
                tables[key].setdefault(ds, {})[m] = 0.1 * (1 + (i + j) % 3)
            tables["train_s"].setdefault(ds, {})[m] = 10.0 ** j
    body = ["**Accuracy: a test**", "", *accuracy.summary_table(tables, methods, ["a", "b", "c"])]
    doc = tmp_path / "doc.md"
    doc.write_text("# Benchmarks\n\n<!-- acc:begin (generated) -->\n" + "\n".join(body)
                   + "\n<!-- acc:end -->\n\n<!-- other:begin (generated) -->\nno table\n<!-- other:end -->\n")
    svg = tmp_path / "at.svg"
    proc = subprocess.run([sys.executable, str(BENCH / "plot_accuracy_time.py"), "--doc", str(doc), "--section", "acc",
                           "-o", str(svg)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = svg.read_text()
    assert text.startswith("<?xml") and svg.stat().st_size < 60_000
    assert all(m in text for m in methods)  # the legend's labels, as text
    proc = subprocess.run([sys.executable, str(BENCH / "plot_accuracy_time.py"), "--doc", str(doc), "--section",
                           "other", "-o", str(svg)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "has no table of mean ranks" in proc.stderr


def test_convergence_plot_without_matplotlib_is_refused_before_any_work(tmp_path):
    """--plot where matplotlib cannot be imported: one line naming the option, before the study runs."""
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "matplotlib.py").write_text("raise ImportError('blocked for this test')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(blocker)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    proc = subprocess.run(
        [sys.executable, str(BENCH / "convergence.py"), "--datasets", "contact-lenses", "--methods", "kDB-1",
         "--repeats", "1", "--cache-dir", str(tmp_path / "cache"), "--plot", str(tmp_path / "c.svg")],
        capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 2 and "--plot needs matplotlib" in proc.stderr, proc.stderr[-2000:]
    assert not (tmp_path / "cache").exists()


def test_bench_categorical_compares_arff_csv_declared_and_the_rule(tmp_path):
    """bench_categorical.py on one small nominal set: the CSV declared is the ARFF (every label is used), the
    CSV read as numbers is not. kDB-1 (MDL cut points): the default ESKDB's cut points would separate
    contact-lenses' 2 and 3 codes per column just as the nominal values are, so all three would agree."""
    out = tmp_path / "cat.json"
    proc = subprocess.run(
        [sys.executable, str(BENCH / "bench_categorical.py"), "--datasets", "contact-lenses", "--repeats", "1",
         "--structure", "kdb", "-k", "1",
         "--estimator", "m-estimate", "--thresholds", "3", "--cache-dir", "none", "--json", str(out)],
        capture_output=True, text=True,
        timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {r["condition"]: r for r in json.loads(out.read_text())["results"]}
    assert list(rows) == ["arff", "csv-numeric", "csv-declared", "csv-auto-3"]
    assert rows["csv-declared"]["rmse"] == rows["arff"]["rmse"]
    assert rows["csv-numeric"]["rmse"] != rows["arff"]["rmse"]


def test_bench_numeric_traces_members_and_its_gain_min2_is_the_librarys_stochastic_gain(tmp_path):
    """bench_numeric.py on iris, one repeat, 3 members: smdl draws the library's cuts (--check), and the
    patched gain-min2 gives the figures of discretization="stochastic-gain" exactly."""
    proc = subprocess.run(
        [sys.executable, str(BENCH / "bench_numeric.py"), "--datasets", "iris", "--repeats", "1", "--n-members", "3",
         "--variants", "smdl,gain-min2,stochastic-gain", "--check", "--cache-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    recs = {v: [json.loads((tmp_path / "e3" / "iris" / v / f"r0f{f}.json").read_text()) for f in (0, 1)]
            for v in ("smdl", "gain-min2", "stochastic-gain")}
    for a, b in zip(recs["gain-min2"], recs["stochastic-gain"]):
        assert a["ensemble_mean"] == b["ensemble_mean"] and a["members"] == b["members"]
        assert [[t["cuts"] for t in m.values()] for m in a["traces"]] == \
            [[t["cuts"] for t in m.values()] for m in b["traces"]]
    assert len(recs["smdl"][0]["members"]) == 3 and len(recs["smdl"][0]["traces"]) == 3


def test_bench_eskdb_iterations_reads_every_point_of_one_run_per_fold(tmp_path):
    """The iterations study of the default ensemble on one tiny set: every fold cached, the table
    printed with the 1000-iteration point at zero difference."""
    cache = tmp_path / "cache"
    proc = subprocess.run([sys.executable, str(BENCH / "bench_eskdb_iterations.py"), "--datasets", "contact-lenses",
                           "--cache-dir", str(cache)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(list((cache / "contact-lenses").glob("r*f*.json"))) == 10
    rows = {line.split("|")[1].strip(): line for line in proc.stdout.splitlines() if line.startswith("| ")}
    assert "+0.0000 | +0.0000 | +0.0000 | +0.0000 | +0.0000 | 1 of 1" in rows["1000"]
    assert set(rows) >= {"50", "200", "1000"}
    # the burn-in study: the same folds to 200 iterations, read at every (iterations, burn-in), against the
    # 1000-iteration figures just cached (a sibling cache)
    proc = subprocess.run([sys.executable, str(BENCH / "bench_eskdb_iterations.py"), "--datasets", "contact-lenses",
                           "--cache-dir", str(cache), "--burn-in-study"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(list((tmp_path / "eskdb-burn-in" / "contact-lenses").glob("r*f*.json"))) == 10
    lines = [line for line in proc.stdout.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert [tuple(c.strip() for c in line.split("|")[1:3]) for line in lines][:3] == [("50", "5"), ("50", "12"),
                                                                                       ("50", "25")]
    assert all(line.rstrip().endswith("of 1 |") for line in lines)


def test_the_rule_study_gives_what_the_default_fit_gives(tmp_path, accuracy):
    """--rule-study on one tiny set: every fold cached and every rule printed; its reading of the default's
    rule (checks from config.AUTO_FIRST_CHECK below the cap of config.AUTO_ITERATIONS, tolerance 0.005) is exactly the test
    measure of the default classifier fitted on that fold with that seed."""
    from hdp_plugin import BayesNetClassifier, config

    cache = tmp_path / "cache"
    proc = subprocess.run([sys.executable, str(BENCH / "bench_eskdb_iterations.py"), "--datasets", "contact-lenses",
                           "--cache-dir", str(cache), "--rule-study"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    files = sorted((tmp_path / "eskdb-rules" / "contact-lenses").glob("r*f*.json"))
    assert len(files) == 10
    rows = {line.split("|")[1].strip() for line in proc.stdout.splitlines() if line.startswith("| ")}
    key = f"{config.AUTO_FIRST_CHECK['eskdb']}-{config.AUTO_ITERATIONS['eskdb']}@{config.CONVERGENCE_TOLERANCE}"
    assert {"50", "200", "1000", key} <= rows
    rec = json.loads((tmp_path / "eskdb-rules" / "contact-lenses" / "r1f0.json").read_text())
    train, test = accuracy.fold_split(accuracy.ROOT / "tests" / "data" / "contact-lenses.arff", 1, 0)
    clf = BayesNetClassifier(random_state=accuracy.seed_of(1, 0), n_jobs=1).fit(train)
    got = accuracy.metrics(clf.predict_proba(test), test.y, 0.0, 0.0)
    for m in ("rmse", "log_loss", "zero_one"):
        assert got[m] == pytest.approx(rec["points"][key][m], rel=1e-9, abs=1e-12), m


def test_bench_dense_chains_25_arm_is_the_default_on_dense_data(accuracy):
    """bench_dense_chains.py on vote (about 108 training rows per class: dense): its row says the rule
    runs 25, and the 25-iteration arm (the 100 arm's RMSE plus the change) is the default classifier's RMSE
    on the same folds and seeds."""
    import numpy as np

    from hdp_plugin import BayesNetClassifier

    proc = subprocess.run([sys.executable, str(BENCH / "bench_dense_chains.py"), "--datasets", "vote", "--repeats", "1",
                           "--seed-offset", "7"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    row = next(line.split("|")[1:-1] for line in proc.stdout.splitlines() if line.startswith("| vote "))
    assert int(row[3]) == 25
    rmse_100, change = float(row[4]), float(row[7])
    got = []
    for f in range(2):
        train, test = accuracy.fold_split(accuracy.ROOT / "tests" / "data" / "vote.arff", 0, f)
        clf = BayesNetClassifier(random_state=accuracy.seed_of(0, f) + 7, n_jobs=1).fit(train)
        assert clf.fit_info_["iterations"] == 25
        got.append(accuracy.metrics(clf.predict_proba(test), test.y, 0.0, 0.0)["rmse"])
    assert np.mean(got) == pytest.approx(rmse_100 + change, abs=2e-4)  # the table's 4 decimals


def test_bench_default_prints_both_sides_on_the_same_rows():
    pytest.importorskip("sklearn", reason="scikit-learn (the bench extra) is the forest")
    proc = subprocess.run([sys.executable, str(BENCH / "bench_default.py"), "--datasets", "contact-lenses",
                           "--synthetic", "3000", "--rounds", "1", "--peers", ""], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for name in ("contact-lenses", "synthetic-3000"):
        row = next(line for line in proc.stdout.splitlines() if line.startswith(f"| {name} |"))
        cells = [c.strip() for c in row.split("|")[1:-1]]
        assert len(cells) == 9 and float(cells[1]) > 0 and float(cells[5]) > 0 and 0 < float(cells[7]) < 1
    # data drawn from a Bayesian network: the default beats the forest on its test RMSE
    assert float(cells[7]) < float(cells[8])
    bad = subprocess.run([sys.executable, str(BENCH / "bench_default.py"), "--datasets", "contact-lenses",
                          "--peers", "AdaBoost"], capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "--peers" in bad.stderr and "AdaBoost" in bad.stderr


BOOSTING = [("CatBoost", "catboost"), ("LightGBM", "lightgbm")]


@pytest.mark.parametrize(("peer", "module"), BOOSTING)
def test_bench_default_prints_a_boosting_peer_beside_the_forest(peer, module):
    """A nominal set and a numeric one: the peer's time, ratio and RMSE after the forest's columns."""
    pytest.importorskip("sklearn", reason="scikit-learn (the bench extra) is the forest")
    pytest.importorskip(module)
    proc = subprocess.run([sys.executable, str(BENCH / "bench_default.py"), "--datasets", "contact-lenses,iris",
                           "--rounds", "1", "--peers", peer], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    header = next(line for line in proc.stdout.splitlines() if line.startswith("| workload |"))
    assert header.rstrip().endswith(f"| {peer} (s) | ours / {peer} | RMSE {peer} |")
    for name in ("contact-lenses", "iris"):
        row = next(line for line in proc.stdout.splitlines() if line.startswith(f"| {name} |"))
        cells = [c.strip() for c in row.split("|")[1:-1]]
        assert len(cells) == 12 and float(cells[9]) > 0 and float(cells[10]) > 0 and 0 < float(cells[11]) < 1


@pytest.mark.parametrize(("peer", "module"), BOOSTING)
def test_boosting_peer_gives_probabilities_in_our_class_order(peer, module):
    """Nominal (contact-lenses), numeric (iris) and mixed with missing values (labor): probability rows,
    a class absent from training gets 0, a one-class training fold predicts its class."""
    pytest.importorskip(module)
    pytest.importorskip("pandas")
    import numpy as np

    from hdp_plugin import read_dataset

    peers_python = _bench_module("peers_python")
    assert peer in peers_python.RAW_PEERS
    for name in ("contact-lenses", "iris", "labor"):
        data = read_dataset(BENCH.parent / "tests" / "data" / f"{name}.arff")
        frame = peers_python.raw_frame(peer, data)
        nominal = [f"a{j}" for j, a in enumerate(data.attributes) if not a.numeric]
        native = {str(frame[c].dtype) for c in nominal}
        assert native <= ({"int64"} if peer == "CatBoost" else {"category"})
        p = peers_python.run_raw_peer(peer, data, data, data.n_classes, 0)
        assert p.shape == (data.n_rows, data.n_classes) and (p >= 0).all()
        np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-6)
        if name == "labor":
            assert frame.isna().to_numpy().any() if peer == "LightGBM" else (frame[nominal] == -1).to_numpy().any()
    iris = read_dataset(BENCH.parent / "tests" / "data" / "iris.arff")
    train = iris.take(np.nonzero(iris.y != 0)[0])
    p = peers_python.run_raw_peer(peer, train, iris, iris.n_classes, 0)
    assert p.shape == (iris.n_rows, 3) and (p[:, 0] == 0).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-6)
    # the class columns are ours: the training rows are mostly predicted as their own class
    assert np.mean(p.argmax(axis=1)[iris.y != 0] == iris.y[iris.y != 0]) > 0.8
    one_class = iris.take(np.nonzero(iris.y == 2)[0])
    p = peers_python.run_raw_peer(peer, one_class, iris, iris.n_classes, 0)
    assert (p[:, 2] == 1).all() and (p[:, :2] == 0).all()


@pytest.mark.parametrize(("peer", "module"), BOOSTING)
def test_boosting_peer_runs_in_the_accuracy_tables(accuracy, peer, module, tmp_path):
    """One repetition on contact-lenses (nominal) and iris (numeric): a cached result per fold and a
    column in the report; the peer is one of the default's strongest peers in the mean-rank table."""
    pytest.importorskip(module)
    assert peer in accuracy.TARGET_PEERS and peer in accuracy.ALL_METHODS
    out = tmp_path / "benchmarks.md"
    argv = ["--datasets", "contact-lenses,iris", "--methods", f"HDP NB,{peer}", "--iterations", "30",
            "--repeats", "1", "--cache-dir", str(tmp_path / "cache"), "--quiet", "-o", str(out)]
    assert accuracy.main(argv) == 0
    for name, rows in (("contact-lenses", (12, 12)), ("iris", (75, 75))):
        for f in range(2):
            rec = json.loads((tmp_path / "cache" / name / accuracy.slug(peer, 30) / f"r0f{f}.json").read_text())
            assert rec["method"] == peer and rec["rows"] == rows[f] and rec["seed"] == accuracy.seed_of(0, f)
            assert 0.0 <= rec["rmse"] <= 1.0 and 0.0 <= rec["zero_one"] <= 1.0 and rec["clipped_rows"] == 0
    text = out.read_text()
    assert f"| data set | HDP NB | {peer} |" in text
    row = next(line for line in text.splitlines() if line.startswith("| iris |"))
    assert row.count("|") == 4 and "inf" not in row


def test_bench_default_members_prints_a_row_per_count_against_the_same_forest():
    """``--members 2,3``: a row per workload and count, named with the count, each against the forest of
    the same rounds (one forest time for both), the smaller ensemble a different model."""
    pytest.importorskip("sklearn", reason="scikit-learn (the bench extra) is the forest")
    proc = subprocess.run([sys.executable, str(BENCH / "bench_default.py"), "--datasets", "contact-lenses",
                           "--rounds", "1", "--members", "2,3"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in proc.stdout.splitlines() if line.startswith("| contact-lenses")}
    assert set(rows) == {"contact-lenses (2 members)", "contact-lenses (3 members)"}
    two, three = rows["contact-lenses (2 members)"], rows["contact-lenses (3 members)"]
    assert two[4] == three[4] and float(two[4]) > 0  # the same forest
    assert two[6] != three[6]  # RMSE ours: two ensembles
    bad = subprocess.run([sys.executable, str(BENCH / "bench_default.py"), "--datasets", "contact-lenses",
                          "--members", "0"], capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "--members" in bad.stderr


def test_bench_members_scores_every_count_on_the_same_folds():
    proc = subprocess.run([sys.executable, str(BENCH / "bench_members.py"), "--datasets", "contact-lenses",
                           "--members", "2,3", "--repeats", "1"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| 2 |") or line.startswith("| 3 |")]
    assert len(rows) == 2 and proc.stdout.startswith("1 data sets, 1x2")
    for row in rows:
        cells = [float(c) for c in row.split("|")[1:-1]]
        assert 0 < cells[1] < 1 and cells[2] > 0 and 0 <= cells[3] <= 1 and cells[4] >= 0  # seconds, 2 decimals


def test_bench_selection_hier3_is_the_default_and_budget_stays_within_the_flat_cells(tmp_path):
    """bench_selection.py on iris, one repeat, 3 members: ``hier-3`` is the library's default fit (the
    same RMSE as a plain BayesNetClassifier with the fold's seed), ``flat`` differs from it, and every
    ``budget-3`` member has at most the cells of the same member under ``flat``; ``rows-65536`` (the
    default's SELECTION_ROWS) is ``hier-3`` too."""
    proc = subprocess.run(
        [sys.executable, str(BENCH / "bench_selection.py"), "--datasets", "iris", "--repeats", "1", "--n-members", "3",
         "--variants", "flat,hier-3,budget-3,rows-65536", "--seed-offset", "7", "--cache-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "| iris |" in proc.stdout and "| budget-3 |" in proc.stdout
    rec = {v: [json.loads((tmp_path / "7-e3" / f"iris__{v}__0{f}.json").read_text()) for f in (0, 1)]
           for v in ("flat", "hier-3", "budget-3", "rows-65536")}
    assert rec["rows-65536"] == [dict(r, train_s=r2["train_s"]) for r, r2 in zip(rec["hier-3"], rec["rows-65536"])]
    sys.path.insert(0, str(BENCH))
    try:
        accuracy = importlib.import_module("accuracy")
    finally:
        sys.path.remove(str(BENCH))
    from hdp_plugin import BayesNetClassifier, config

    assert config.HDP_SELECTION_M == 3.0
    path = Path(__file__).resolve().parent / "data" / "iris.arff"
    for f in (0, 1):
        train, test = accuracy.fold_split(path, 0, f)
        clf = BayesNetClassifier(n_members=3, random_state=accuracy.seed_of(0, f) + 7, n_jobs=1).fit(train)
        assert accuracy.metrics(clf.predict_proba(test), test.y, 0, 0)["rmse"] == rec["hier-3"][f]["rmse"]
        assert all(b <= a for a, b in zip(rec["flat"][f]["cells"], rec["budget-3"][f]["cells"]))
    assert [r["nk"] for r in rec["flat"]] != [r["nk"] for r in rec["hier-3"]]


def test_bench_combine_pools_the_default_fits_members_and_reuses_its_folds(tmp_path):
    """bench_combine.py on iris, one repeat: its ``mean`` pool is the default fit's own prediction, a
    log-linear pool at t = 1 is the plain geometric mean, the margins are printed, and a second run
    reuses the folds it kept instead of fitting again."""
    out = tmp_path / "combine.json"
    cmd = [sys.executable, str(BENCH / "bench_combine.py"), "--datasets", "iris", "--repeats", "1", "--jobs", "1",
           "--temperatures", "1", "--seed-offset", "7", "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "| iris |" in proc.stdout and "**geo-1**: 1 data sets" in proc.stdout
    rec = json.loads(out.read_text())
    assert sorted(rec) == ["iris|0|0|7", "iris|0|1|7"]
    sys.path.insert(0, str(BENCH))
    try:
        accuracy = importlib.import_module("accuracy")
    finally:
        sys.path.remove(str(BENCH))
    from hdp_plugin import BayesNetClassifier

    path = Path(__file__).resolve().parent / "data" / "iris.arff"
    for f in (0, 1):
        fold = rec[f"iris|0|{f}|7"]
        assert fold["geo-1"] == fold["geo"] and fold["geo"] != fold["mean"]
        train, test = accuracy.fold_split(path, 0, f)
        clf = BayesNetClassifier(random_state=accuracy.seed_of(0, f) + 7, n_jobs=1).fit(train)
        m = accuracy.metrics(clf.predict_proba(test), test.y, 0, 0)
        assert fold["mean"] == pytest.approx([m["rmse"], m["log_loss"], m["zero_one"]], rel=1e-12)
    before = out.stat().st_mtime_ns
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and again.stdout == proc.stdout
    assert out.stat().st_mtime_ns == before
    loo = subprocess.run(cmd[:-1] + [str(tmp_path / "loo.json"), "--loo-m", "3"], capture_output=True, text=True,
                         timeout=600)
    assert loo.returncode == 0, loo.stderr[-2000:]
    for f, fold in json.loads((tmp_path / "loo.json").read_text()).items():
        assert fold["mean"] == rec[f]["mean"] and fold["rule"] == fold["mean"]  # iris: under 400 training rows
        assert {"loo-ll", "loo-rmse"} <= set(fold)


def test_bench_combine_leave_one_out_member_probabilities_are_the_counts_without_the_row():
    """bench_combine's leave-one-out proxy: for a row, every class's posterior is the hierarchical
    m-estimate product computed, by brute force, from the counts of the other rows only."""
    sys.path.insert(0, str(BENCH))
    try:
        accuracy = importlib.import_module("accuracy")
        combine = importlib.import_module("bench_combine")
    finally:
        sys.path.remove(str(BENCH))
    from hdp_plugin import BayesNetClassifier

    train, _ = accuracy.fold_split(Path(__file__).resolve().parent / "data" / "vote.arff", 0, 0)
    clf = BayesNetClassifier(n_members=2, random_state=3, n_jobs=1).fit(train)
    y = train.y.astype(np.int64)
    C, m = 2, 3.0
    for mb, X in zip(clf.members_, clf._codes(train)):
        st = mb.structure
        assert any(st.parents[a] for a in st.kept)  # the test reaches the parents' contexts
        L = combine.member_loo_log_proba(mb, X, y, C, m)
        for i in (0, 7, len(y) - 1):
            rest = np.arange(len(y)) != i
            Xr, yr = X[rest], y[rest]
            logj = np.log([((yr == c).sum() + m / C) / (len(yr) + m) for c in range(C)])
            for a in st.kept:
                for c in range(C):
                    p = 1.0 / mb.cardinalities[a]
                    inside = yr == c
                    for d in range(len(st.parents[a]) + 1):
                        if d:
                            inside &= Xr[:, st.parents[a][d - 1]] == X[i, st.parents[a][d - 1]]
                        p = ((inside & (Xr[:, a] == X[i, a])).sum() + m * p) / (inside.sum() + m)
                    logj[c] += np.log(p)
            assert L[i] == pytest.approx(logj - np.logaddexp.reduce(logj), abs=1e-9)


def test_bench_model_size_prints_a_row_per_code(tmp_path):
    data = Path(__file__).resolve().parent / "data" / "weather.nominal.arff"
    out = subprocess.run([sys.executable, str(BENCH / "bench_model_size.py"), str(data), "--before",
                          str(BENCH.parent)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    rows = [line.split("|")[1:-1] for line in out.stdout.splitlines() if line.startswith("| weather")]
    assert [r[1].strip() for r in rows] == ["before", "after"]
    assert rows[0][2:5] == rows[1][2:5]  # the same code both times: the same cells and file
    assert int(rows[1][2].replace(",", "")) > int(rows[1][3].replace(",", "")) > 0


def test_bench_profile_splits_a_fit_into_steps_that_add_up():
    data = Path(__file__).resolve().parent / "data" / "diabetes.arff"
    out = subprocess.run([sys.executable, str(BENCH / "bench_profile.py"), str(data), "--rounds", "1"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    head = [c.strip() for c in out.stdout.splitlines()[0].split("|")[1:-1]]
    row = [c.strip() for c in next(line for line in out.stdout.splitlines() if line.startswith("| diabetes")).split("|")[1:-1]]
    steps = {h: float(v) for h, v in zip(head[4:], row[4:])}
    assert row[1] == "768" and steps["cut points"] > 0 and steps["sampling"] > 0 and steps["leave-one-out"] > 0
    # one round: the steps and the rest are the fit's time, to the rounding of the printed figures
    assert sum(steps.values()) == pytest.approx(float(row[3]), abs=0.001 * len(steps))


@pytest.mark.java
def test_bench_java_predict_data_mode_predicts_an_arff_alike_in_both_languages():
    """``bench_java_predict.py --data iris`` (a name, found as accuracy.py finds data sets), one round, this
    checkout only (no timing asserted): the default trained, its rows predicted in Python and in a ``java``
    process, row by row and in blocks, all agreeing (else the benchmark fails)."""
    import glob
    import shutil

    if shutil.which("java") is None or shutil.which("mvn") is None:
        pytest.skip("skipped: needs `java` and `mvn` (for Weka's class path) on the PATH")
    if not glob.glob(str(BENCH.parent / "java_bridge" / "target" / "hdp-bnc-weka-*.jar")):
        pytest.skip("skipped: needs the jar of `mvn package` in java_bridge/target")
    out = subprocess.run([sys.executable, str(BENCH / "bench_java_predict.py"), "--data", "iris", "--rounds", "1"],
                         capture_output=True, text=True, timeout=900, env=dict(os.environ, PYTHONPATH=str(BENCH.parent)))
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"round 1 after: Python [0-9.]+ s, Java row by row [0-9.]+ s, Java in blocks [0-9.]+ s "
                     r"\(150 rows", out.stdout), out.stdout
    assert re.search(r"blocks / row by row [0-9.]+\)", out.stdout), out.stdout
    assert "after / before" not in out.stdout
