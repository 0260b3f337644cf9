"""Training and predicting from record batches (hdp_plugin.data.stream, hdp_plugin.model.streaming):
the same model, bit for bit, as the in-memory fit on the same rows, whatever the files and batches."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest
from pyarrow import feather

from hdp_plugin import BayesNetClassifier, config
from hdp_plugin.data import from_arrow, open_batches, to_arrow
from hdp_plugin.data.stream import is_batch_path
from hdp_plugin.errors import DataError, ParameterError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from synthetic import synthetic  # noqa: E402
from reference import member_trees, same_tables  # noqa: E402


@pytest.fixture(scope="module")
def table() -> pa.Table:
    ds = synthetic(6000, n_attributes=7, seed=4)
    t = to_arrow(ds)
    rng = np.random.default_rng(1)
    num = rng.normal(size=t.num_rows) + np.asarray(ds.y)
    num[::41] = np.nan
    t = t.add_column(0, "num", pa.array(num, from_pandas=True))
    # a text column (sorted labels) and a few missing classes
    txt = np.array(["b", "a", "c"])[rng.integers(0, 3, t.num_rows)]
    t = t.add_column(1, "txt", pa.array(txt))
    cls = t.column("class").to_pylist()
    for i in range(5, t.num_rows, 997):
        cls[i] = None
    return t.set_column(t.num_columns - 1, "class", pa.array(cls).dictionary_encode())


def _same(a: BayesNetClassifier, b: BayesNetClassifier) -> None:
    assert a.parents_ == b.parents_
    assert [x.values for x in a.attributes_] == [x.values for x in b.attributes_]
    assert [x.cut_points for x in a.attributes_] == [x.cut_points for x in b.attributes_]
    assert np.array_equal(a.cardinalities_, b.cardinalities_)
    same_tables(a.tables_, b.tables_)
    assert list(a.classes_) == list(b.classes_)


def _parts(t: pa.Table, d: Path, sizes, write, ext) -> None:
    d.mkdir()
    lo = 0
    for i, n in enumerate(sizes):
        write(t.slice(lo, n), d / f"part-{i:03d}{ext}")
        lo += n
    assert lo == t.num_rows


@pytest.mark.parametrize("structure", ["kdb", "skdb", "tan", "nb"])
def test_streamed_parquet_directory_gives_the_in_memory_model(tmp_path, table, structure):
    _parts(table, tmp_path / "d", [2500, 1, 3499], pq.write_table, ".parquet")
    params = dict(structure=structure, k=2, iterations=40, random_state=5)
    a = BayesNetClassifier(**params).fit(from_arrow(table))
    b = BayesNetClassifier(**params).fit(open_batches(tmp_path / "d", batch_rows=777))
    _same(a, b)
    assert b.fit_info_["streamed"] and b.fit_info_["discretization_sample"]["all_rows"]
    assert b.fit_info_["rows"] == a.fit_info_["rows"]
    assert b.fit_info_["dropped_missing_class"] == a.fit_info_["dropped_missing_class"] > 0
    assert np.array_equal(a.predict_proba(table), b.predict_proba(table))


@pytest.mark.parametrize("fmt", ["arrow", "csv", "arff", "glob"])
def test_every_format_streams_to_the_same_model(tmp_path, table, fmt):
    params = dict(structure="skdb", k=2, iterations=30, random_state=2)
    if fmt == "arrow":
        _parts(table, tmp_path / "d", [3000, 3000], feather.write_feather, ".arrow")
        src, ref = open_batches(tmp_path / "d", batch_rows=1000), from_arrow(table)
    elif fmt == "csv":
        plain = table.set_column(table.num_columns - 1, "class", table.column("class").cast(pa.string()))
        plain = plain.set_column(plain.num_columns - 2, plain.column_names[-2],
                                 plain.column(plain.num_columns - 2).cast(pa.string()))
        pa_csv.write_csv(plain, tmp_path / "all.csv")
        from hdp_plugin.data import read_dataset

        src, ref = open_batches(tmp_path / "all.csv", batch_rows=500), read_dataset(tmp_path / "all.csv")
    elif fmt == "arff":
        from hdp_plugin.data import read_dataset

        p = ROOT / "examples" / "vote.arff"
        src, ref = open_batches(p, batch_rows=50), read_dataset(p)
    else:
        _parts(table, tmp_path / "d", [1000, 5000], pq.write_table, ".parquet")
        src, ref = open_batches(str(tmp_path / "d" / "part-*.parquet")), from_arrow(table)
    _same(BayesNetClassifier(**params).fit(ref), BayesNetClassifier(**params).fit(src))


def test_hive_partitions_become_columns(tmp_path, table):
    t = table.drop_columns(["num"])
    sub = t.drop_columns(["a0"])
    for v in ("v0", "v1"):
        d = tmp_path / "d" / f"a0={v}"
        d.mkdir(parents=True)
        rows = t.column("a0").to_pylist()
        mask = pa.array([r == v for r in rows])
        pq.write_table(sub.filter(mask), d / "part.parquet")
    src = open_batches(tmp_path / "d", class_attribute="class")
    clf = BayesNetClassifier(structure="kdb", k=1, iterations=20, random_state=0).fit(src)
    assert "a0" in clf.parents_
    assert clf.attributes_[[a.name for a in clf.attributes_].index("a0")].values == ("v0", "v1")


def test_a_small_sample_is_used_and_reported(tmp_path, table):
    _parts(table, tmp_path / "d", [3000, 3000], pq.write_table, ".parquet")
    clf = BayesNetClassifier(structure="kdb", k=1, iterations=20, random_state=0).fit(open_batches(tmp_path / "d", sample_rows=1000))
    info = clf.fit_info_["discretization_sample"]
    assert info == {"rows": 1000, "limit": 1000, "all_rows": False, "numeric_attributes": 1}
    # the sample depends on row positions only, not on how the rows are cut into files or batches
    other = tmp_path / "e"
    _parts(table, other, [10, 5990], pq.write_table, ".parquet")
    clf2 = BayesNetClassifier(structure="kdb", k=1, iterations=20, random_state=0).fit(
        open_batches(other, sample_rows=1000, batch_rows=333))
    _same(clf, clf2)


def test_predict_source_matches_predict_proba(tmp_path, table):
    _parts(table, tmp_path / "d", [4000, 2000], pq.write_table, ".parquet")
    clf = BayesNetClassifier(structure="kdb", k=2, iterations=20, random_state=0).fit(from_arrow(table))
    parts = list(clf.predict_source(open_batches(tmp_path / "d", batch_rows=1500)))
    assert [p[0].num_rows for p in parts] == [1500, 1500, 1000, 1500, 500]
    assert np.array_equal(np.concatenate([p[2] for p in parts]), clf.predict_proba(table))


def test_bad_sources_are_one_line_errors(tmp_path, table):
    with pytest.raises(DataError, match="no such file or directory"):
        open_batches(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="holds no .parquet"):
        open_batches(tmp_path / "empty")
    with pytest.raises(ParameterError, match="sample_rows must be an integer >= 1"):
        open_batches(tmp_path, sample_rows=0)
    d = tmp_path / "mixed"
    d.mkdir()
    pq.write_table(table.slice(0, 10), d / "a.parquet")
    pq.write_table(table.slice(10, 10).drop_columns(["txt"]), d / "b.parquet")
    with pytest.raises(DataError, match="differ from the first file"):
        BayesNetClassifier(structure="kdb", iterations=10).fit(open_batches(d))
    (d / "b.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(DataError, match=r"b\.parquet: cannot read as Parquet"):
        BayesNetClassifier(structure="kdb", iterations=10).fit(open_batches(d))
    assert is_batch_path(tmp_path) and is_batch_path(str(tmp_path / "*.parquet"))
    assert not is_batch_path(d / "a.parquet")


def _cli(*args):
    from typer.testing import CliRunner

    from hdp_plugin.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


def test_hdp_bnc_train_and_predict_a_directory(tmp_path, table):
    from hdp_plugin.model.modelfile import load_model

    pq.write_table(table, tmp_path / "all.parquet")
    _parts(table, tmp_path / "d", [2000, 4000], pq.write_table, ".parquet")
    args = ["-s", "kdb", "-k", "2", "-i", "20", "--seed", "3", "-q"]
    assert _cli("train", tmp_path / "all.parquet", "-o", tmp_path / "one.hdpbnc", *args).exit_code == 0
    done = _cli("train", tmp_path / "d", "-o", tmp_path / "dir.hdpbnc", *args)
    assert done.exit_code == 0, done.output
    one, streamed = load_model(tmp_path / "one.hdpbnc"), load_model(tmp_path / "dir.hdpbnc")
    _same(one, streamed)
    done = _cli("train", tmp_path / "all.parquet", "-o", tmp_path / "s.hdpbnc", "--stream", *args)
    assert done.exit_code == 0, done.output
    _same(one, load_model(tmp_path / "s.hdpbnc"))
    info = _cli("info", tmp_path / "dir.hdpbnc")
    assert "streamed       in batches, engine local; cut points learnt on all" in info.output.replace("\n" + " " * 15, " ")
    # predictions of the directory, batch by batch, equal those of the whole file
    assert _cli("predict", tmp_path / "one.hdpbnc", tmp_path / "all.parquet", "-o", tmp_path / "a.parquet").exit_code == 0
    done = _cli("predict", tmp_path / "one.hdpbnc", tmp_path / "d", "-o", tmp_path / "b.parquet")
    assert done.exit_code == 0, done.output
    assert pq.read_table(tmp_path / "a.parquet").equals(pq.read_table(tmp_path / "b.parquet"))
    done = _cli("predict", tmp_path / "one.hdpbnc", str(tmp_path / "d" / "*.parquet"))
    whole = _cli("predict", tmp_path / "one.hdpbnc", tmp_path / "all.parquet")
    assert done.output == whole.output
    done = _cli("predict", tmp_path / "one.hdpbnc", tmp_path / "d", "-o", tmp_path / "p.arff")
    assert done.exit_code == 2 and "-o must end in .parquet, .arrow, .feather, .ipc or .csv" in done.output
    # one file read in batches (--stream): the same predictions as the whole file, as Parquet and as CSV
    done = _cli("predict", tmp_path / "one.hdpbnc", tmp_path / "all.parquet", "--stream", "-o", tmp_path / "c.parquet")
    assert done.exit_code == 0, done.output
    assert pq.read_table(tmp_path / "a.parquet").equals(pq.read_table(tmp_path / "c.parquet"))
    assert _cli("predict", tmp_path / "one.hdpbnc", tmp_path / "all.parquet", "--stream").output == whole.output
    done = _cli("predict", tmp_path / "one.hdpbnc", tmp_path / "all.parquet", "--stream", "-o", tmp_path / "p.arff")
    assert done.exit_code == 2 and "or --stream is given" in done.output
    done = _cli("train", tmp_path / "d", "-o", tmp_path / "x.hdpbnc", "--class-values", "c0,c1,c2")
    assert done.exit_code == 2 and "--class-values is not available" in done.output


@pytest.mark.parametrize("discretization", ["stochastic-mdl", "stochastic-gain", "equal-frequency", "equal-width"])
def test_every_discretization_streams_to_the_same_cut_points(tmp_path, table, discretization):
    _parts(table, tmp_path / "d", [3100, 2900], pq.write_table, ".parquet")
    params = dict(structure="kdb", k=1, iterations=20, random_state=8, discretization=discretization)
    _same(BayesNetClassifier(**params).fit(from_arrow(table)),
          BayesNetClassifier(**params).fit(open_batches(tmp_path / "d", batch_rows=1000)))


# -- ESKDB from batches --------------------------------------------------------------------------------
def _same_members(a: BayesNetClassifier, b: BayesNetClassifier) -> None:
    """Every member of two ensembles equal, array by array."""
    assert len(a.members_) == len(b.members_)
    for ma, mb in zip(a.members_, b.members_):
        assert ma.seed == mb.seed and ma.weight == mb.weight
        assert [x.values for x in ma.attributes] == [x.values for x in mb.attributes]
        assert [x.cut_points for x in ma.attributes] == [x.cut_points for x in mb.attributes]
        assert np.array_equal(ma.cardinalities, mb.cardinalities)
        sa, sb = ma.structure, mb.structure
        assert list(sa.order) == list(sb.order) and sa.parents == sb.parents and sa.kept == sb.kept
        assert sa.k == sb.k and np.array_equal(sa.mi, sb.mi)
        assert {k: v for k, v in sa.info.items()} == {k: v for k, v in sb.info.items()}  # n*, k*, the RMSE grid
        same_tables(ma.tables, mb.tables)
        for name in ("node_group", "concentrations"):
            va, vb = getattr(ma, name), getattr(mb, name)
            assert (va is None and vb is None) or np.array_equal(va, vb, equal_nan=True), name
    assert list(a.classes_) == list(b.classes_)


@pytest.mark.parametrize("data", ["diabetes", "fixture", "fixture-subset"])
def test_streamed_eskdb_is_the_in_memory_ensemble(tmp_path, table, data, monkeypatch):
    """Every member's cut points (its own stochastic MDL on the sample, here every row), order, n*,
    k*, parents, trees and sampled tables, and the predictions, bit for bit; also when the selection
    scores a subset of the rows (config.SELECTION_ROWS below them)."""
    if data == "fixture-subset":
        monkeypatch.setattr(config, "SELECTION_ROWS", 1500)
    if data == "diabetes":  # a real data set, all numeric
        from hdp_plugin.data import read_dataset

        t = to_arrow(read_dataset(ROOT / "tests" / "data" / "diabetes.arff"))
        sizes = [300, 1, 467]
    else:  # numeric with missing values, text, missing classes
        t, sizes = table, [2500, 1, 3499]
    _parts(t, tmp_path / "d", sizes, pq.write_table, ".parquet")
    params = dict(structure="eskdb", n_members=4, k=2, iterations=30, random_state=9)
    a = BayesNetClassifier(**params).fit(from_arrow(t))
    threads = {"n_jobs": 1} if data == "fixture" else {}  # the same ensemble whatever the threads
    b = BayesNetClassifier(**params, **threads).fit(open_batches(tmp_path / "d", batch_rows=211))
    _same_members(a, b)
    scored = {m.structure.info.get("loo_rows") for m in b.members_}
    assert (None not in scored and len(scored) > 1) if data == "fixture-subset" else scored == {None}
    assert len({tuple(mb.attributes[0].cut_points) for mb in b.members_}) > 1  # the members cut differently
    assert b.fit_info_["rows"] == a.fit_info_["rows"] and b.fit_info_["seed"] == a.fit_info_["seed"]
    assert b.fit_info_["n_cells"] == a.fit_info_["n_cells"] and b.fit_info_["discretization_sample"]["all_rows"]
    assert np.array_equal(a.predict_proba(t), b.predict_proba(t))
    parts = list(b.predict_source(open_batches(tmp_path / "d", batch_rows=500)))
    assert np.array_equal(np.concatenate([p[2] for p in parts]), a.predict_proba(t))


def test_streamed_eskdb_with_a_deterministic_discretization_and_baseline_tables(tmp_path, table):
    _parts(table, tmp_path / "d", [3000, 3000], pq.write_table, ".parquet")
    params = dict(structure="eskdb", n_members=3, k=1, estimator="m-estimate", discretization="mdl", random_state=2)
    a = BayesNetClassifier(**params).fit(from_arrow(table))
    b = BayesNetClassifier(**params).fit(open_batches(tmp_path / "d", batch_rows=1000))
    _same_members(a, b)
    assert np.array_equal(a.predict_proba(table), b.predict_proba(table))


class _CountingSource:
    """Counts the passes over a real BatchSource (every read of its batches)."""

    def __init__(self, source):
        self.source, self.reads = source, 0

    def wrap(self):
        from hdp_plugin.data.stream import BatchSource

        outer = self

        class Counted(BatchSource):
            def batches(self):
                outer.reads += 1
                return super().batches()

        s = self.source
        return Counted(s.files, s.format, s.class_attribute, s.batch_rows, s.sample_rows, source=s.source,
                       hive_base=s.hive_base)


@pytest.mark.parametrize("n_members", [1, 5])
def test_eskdb_reads_the_data_five_times_whatever_its_members(tmp_path, table, n_members):
    """Schema, count, tries, leave-one-out and tree cells: one pass each, shared by every member."""
    _parts(table, tmp_path / "d", [3000, 3000], pq.write_table, ".parquet")
    counting = _CountingSource(open_batches(tmp_path / "d", batch_rows=1000))
    clf = BayesNetClassifier(structure="eskdb", n_members=n_members, k=2, iterations=10, random_state=1)
    clf.fit(counting.wrap())
    assert counting.reads == 5
    assert len(clf.members_) == n_members and all(mb.structure.kept for mb in clf.members_)


def test_eskdb_beyond_the_sample_cuts_on_the_sample_and_counts_every_row(tmp_path, table):
    from hdp_plugin.data.stream import scan_schema

    _parts(table, tmp_path / "d", [3000, 3000], pq.write_table, ".parquet")
    src = open_batches(tmp_path / "d", batch_rows=700, sample_rows=1000)
    params = dict(structure="eskdb", n_members=3, k=2, iterations=30, random_state=4)
    clf = BayesNetClassifier(**params).fit(src)
    info = clf.fit_info_
    assert info["discretization_sample"] == {"rows": 1000, "limit": 1000, "all_rows": False, "numeric_attributes": 1}
    known = sum(v is not None for v in table.column("class").to_pylist())
    assert info["rows"] == known > 1000
    # the cut points are those the in-memory ensemble draws on the sample's rows, member by member
    rows = np.sort(scan_schema(src).s_idx)
    on_sample = BayesNetClassifier(**params).fit(from_arrow(table.take(rows)))
    for ma, mb in zip(on_sample.members_, clf.members_):
        assert [x.cut_points for x in ma.attributes] == [x.cut_points for x in mb.attributes]
    assert len({mb.attributes[0].cut_points for mb in clf.members_}) > 1
    # ... while every row is counted: each tree's leaves hold every row, and the prior is all rows'
    whole = from_arrow(table)
    for mb in clf.members_:
        trees = member_trees(mb, whole)  # every row, coded with the member's cut points
        for t in range(trees.n_trees):
            lo, hi = (trees.node_cell_start[trees.tree_node_start[t]],
                      trees.node_cell_start[trees.tree_node_start[t + 1]])
            assert trees.leaf_counts[lo:hi].sum() == known
        assert np.array_equal(trees.node_parent, mb.tables.node_parent)  # the streamed trees are those
        assert np.array_equal(mb.tables.log_prior, clf.members_[0].tables.log_prior)
    y = np.array(table.column("class").to_pylist(), dtype=object)
    counts = np.array([(y == c).sum() for c in clf.classes_], float)
    assert np.allclose(np.exp(clf.members_[0].tables.log_prior), (counts + 1 / 3) / (counts.sum() + 1))
    # and it predicts sensibly: far better than the majority class on its training rows
    keep = y != None  # noqa: E711
    acc = np.mean(clf.predict(table)[keep] == y[keep])
    assert acc > counts.max() / counts.sum() + 0.1, acc


def test_hdp_bnc_train_a_directory_with_the_default_eskdb(tmp_path):
    """The default structure, ESKDB, from a directory: the model of the whole file read into memory;
    ``info`` says how it was trained and lists every member."""
    from hdp_plugin.data import read_dataset
    from hdp_plugin.model.modelfile import load_model

    t = to_arrow(read_dataset(ROOT / "tests" / "data" / "diabetes.arff"))
    pq.write_table(t, tmp_path / "all.parquet")
    _parts(t, tmp_path / "d", [500, 268], pq.write_table, ".parquet")
    args = ["--members", "3", "-k", "2", "-i", "20", "--seed", "5", "-q"]
    assert _cli("train", tmp_path / "all.parquet", "-o", tmp_path / "one.hdpbnc", *args).exit_code == 0
    done = _cli("train", tmp_path / "d", "-o", tmp_path / "dir.hdpbnc", *args)
    assert done.exit_code == 0, done.output
    one, streamed = load_model(tmp_path / "one.hdpbnc"), load_model(tmp_path / "dir.hdpbnc")
    _same_members(one, streamed)
    out = _cli("info", tmp_path / "dir.hdpbnc").output.replace("\n" + " " * 15, " ")  # fields wrap at 80 columns
    assert "structure      ESKDB, 3 members" in out
    assert "streamed       in batches, engine local; every member's cut points learnt on all 768 rows" in out
    assert "seed           5 (member e draws from stream e of it)" in out and "1073741826" not in out
    done = _cli("train", tmp_path / "d", "-o", tmp_path / "s.hdpbnc", *args, "--discretization-sample", "200")
    assert done.exit_code == 0, done.output
    assert "cut points learnt on a sample of 200 of 768 rows" in _cli("info", tmp_path / "s.hdpbnc").output.replace("\n" + " " * 15, " ")


def test_an_ensemble_beyond_the_cell_limit_keeps_every_member_within_its_share_streamed_or_not(
        tmp_path, table, monkeypatch):
    """Each member's SkDB takes the best model of its leave-one-out grid that fits its share of the
    cells (counted from the tries, as the trees then count them), instead of refusing the fit; the
    streamed ensemble is the in-memory one."""
    _parts(table, tmp_path / "d", [3000, 3000], pq.write_table, ".parquet")
    params = dict(structure="eskdb", n_members=3, k=2, iterations=10, random_state=2)
    free = BayesNetClassifier(**params).fit(from_arrow(table))
    assert "cell_limited_members" not in free.fit_info_
    widest = max(m.tables.n_cells for m in free.members_)
    share = widest - 1  # one cell fewer than the largest member's trees
    monkeypatch.setattr(config, "MAX_MODEL_CELLS", 3 * share)
    a = BayesNetClassifier(**params).fit(from_arrow(table))
    b = BayesNetClassifier(**params).fit(open_batches(tmp_path / "d"))
    _same_members(a, b)
    assert a.fit_info_["cell_limited_members"]
    for e, (mf, ml) in enumerate(zip(free.members_, a.members_)):
        assert ml.tables.n_cells <= share
        limited = ml.structure.info.get("cell_limited")
        if e in a.fit_info_["cell_limited_members"]:
            assert limited["cells"] == mf.tables.n_cells > share  # the tries' count is the trees'
            assert (limited["n_star"], limited["k_star"]) == (mf.structure.info["n_star"], mf.structure.info["k_star"])
        else:  # within its share already: the same model
            assert limited is None and ml.structure.parents == mf.structure.parents


def test_streamed_eskdb_with_auto_iterations_is_the_in_memory_ensemble(tmp_path):
    """iterations=None ("auto"): the sampler runs as the in-memory ensemble's does (same iterations,
    same stopping), so the tables are the same."""
    from hdp_plugin.data import read_dataset

    t = to_arrow(read_dataset(ROOT / "tests" / "data" / "diabetes.arff"))
    _parts(t, tmp_path / "d", [400, 368], pq.write_table, ".parquet")
    params = dict(structure="eskdb", n_members=2, k=1, random_state=3)
    a = BayesNetClassifier(**params).fit(from_arrow(t))
    b = BayesNetClassifier(**params).fit(open_batches(tmp_path / "d"))
    _same_members(a, b)
    for key in ("iterations", "n_samples", "burn_in"):
        assert a.fit_info_[key] == b.fit_info_[key], key
    for key in ("tolerance", "tree_iterations"):  # recorded when the sampler may stop early
        assert np.array_equal(a.fit_info_.get(key, -1), b.fit_info_.get(key, -1)), key


# -- one large file read in batches ---------------------------------------------------------
def _write_ipc(t: pa.Table, path: Path, stream: bool, batch: int) -> Path:
    with pa.OSFile(str(path), "wb") as sink, (pa.ipc.new_stream if stream else pa.ipc.new_file)(sink, t.schema) as w:
        for b in t.to_batches(max_chunksize=batch):
            w.write_batch(b)
    return path


@pytest.mark.parametrize("kind", ["file", "stream"])
def test_one_ipc_file_is_read_batch_by_batch(tmp_path, table, kind):
    """The file's record batches (2500 rows) are cut to batch_rows (700); the batches are the whole
    file's table, and the streamed fit is the in-memory fit."""
    from hdp_plugin.data.arrow import ipc_table

    path = _write_ipc(table, tmp_path / ("one.arrow" if kind == "file" else "one.arrows"), kind == "stream", 2500)
    src = open_batches(path, batch_rows=700)
    got = list(src.batches())
    assert [t.num_rows for t in got] == [700, 700, 700, 400] * 2 + [700, 300]
    whole = ipc_table(path)
    assert pa.Table.from_batches([b for t in got for b in t.to_batches()], schema=whole.schema).equals(whole)
    params = dict(structure="kdb", k=2, iterations=30, random_state=2)
    _same(BayesNetClassifier(**params).fit(from_arrow(table)), BayesNetClassifier(**params).fit(src))


def _arff_text(t: pa.Table, sparse_every: int = 0) -> str:
    """``t`` as ARFF: a ``string`` attribute for txt, nominal ones with quoted labels, comments, blank
    lines and (every ``sparse_every`` rows) sparse rows, so that both ARFF paths serve some chunks."""
    lines = ["% generated", "@relation t"]
    for name, col in zip(t.column_names, t.columns):
        if name == "num":
            lines.append("@attribute num numeric")
        elif name == "txt":
            lines.append("@attribute txt string")
        else:
            labels = ",".join(f"'{v} x'" for v in col.chunk(0).dictionary.to_pylist())
            lines.append(f"@attribute {name} {{{labels}}}")
    lines.append("@data")
    cols = [c.to_pylist() for c in t.columns]
    for r, row in enumerate(zip(*cols)):
        vals = []
        for name, v in zip(t.column_names, row):
            if v is None:
                vals.append("?")
            elif name == "num":
                vals.append(repr(v))
            elif name == "txt":
                vals.append(v)
            else:
                vals.append(f"'{v} x'")
        if sparse_every and r % sparse_every == 7:
            lines.append("{" + ", ".join(f"{j} {v}" for j, v in enumerate(vals)) + "}")
        else:
            lines.append(",".join(vals))
        if r % 997 == 3:
            lines += ["", "  % a comment between rows"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("gz", [False, True], ids=["arff", "arff.gz"])
def test_one_arff_file_is_read_batch_by_batch(tmp_path, table, gz):
    """An ARFF file read 500 rows at a time (the header once; chunks of dense rows on the fast path,
    chunks with sparse rows on the exact one): the same columns and the same model as the whole read."""
    import gzip
    import warnings

    from hdp_plugin.data import read_dataset

    text = _arff_text(table, sparse_every=1500)
    path = tmp_path / ("t.arff.gz" if gz else "t.arff")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "string attribute 'txt' is read as nominal"
        src = open_batches(path, batch_rows=500)
        got = list(src.batches())
        assert [t.num_rows for t in got] == [500] * 12
        assert all(t.schema == got[0].schema for t in got)
        assert got[0].schema.field("a0").type == pa.dictionary(pa.int32(), pa.string())
        assert got[0].schema.field("num").type == pa.float64()
        assert got[0].column("a0").chunk(0).dictionary.to_pylist() == [f"{v} x" for v in
                                                                         table.column("a0").chunk(0).dictionary.to_pylist()]
        ref = read_dataset(path)
        both = from_arrow(pa.concat_tables(got))
        assert [a.values for a in both.attributes] == [a.values for a in ref.attributes]
        assert np.array_equal(both.X, ref.X) and np.array_equal(both.y, ref.y)
        assert np.array_equal(both.numeric, ref.numeric, equal_nan=True)
        params = dict(structure="tan", iterations=30, random_state=4)
        _same(BayesNetClassifier(**params).fit(ref), BayesNetClassifier(**params).fit(src))


@pytest.mark.filterwarnings("ignore:.*string attribute 'txt' is read as nominal")
def test_arff_read_in_batches_names_the_line_of_an_error(tmp_path, table):
    text = _arff_text(table.slice(0, 3000)).splitlines()
    first = text.index("@data") + 1
    bad = first + 2600
    text[bad] = text[bad].replace("'v", "'w", 1)  # an undeclared label far into the file
    path = tmp_path / "bad.arff"
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(DataError) as whole:
        from hdp_plugin.data import read_dataset

        read_dataset(path)
    batches = open_batches(path, batch_rows=100).batches()
    assert next(batches).num_rows == 100  # the start reads; the error comes when the reading reaches it
    with pytest.raises(DataError) as streamed:
        list(batches)
    assert str(streamed.value) == str(whole.value)
    assert f"line {bad + 1}: value " in str(streamed.value) and "is not declared in the header" in str(streamed.value)


MEMORY_PROBE = """
import sys, tracemalloc
import pyarrow as pa
from hdp_plugin.data.arff import read_arff_columns
from hdp_plugin.data.arrow import ipc_table
from hdp_plugin.data.stream import open_batches

path, small = sys.argv[1], sys.argv[2]
whole = (lambda p: read_arff_columns(p)[0][0].n_rows) if path.endswith(".arff") else (lambda p: ipc_table(p).num_rows)
for _ in open_batches(small, batch_rows=3).batches():  # imports and one-time set-up, before measuring
    pass
whole(small)
pool = pa.default_memory_pool()
base = pool.max_memory()
tracemalloc.start()
rows = sum(t.num_rows for t in open_batches(path, batch_rows=10_000).batches())
batches = tracemalloc.get_traced_memory()[1] + max(0, pool.max_memory() - base)
tracemalloc.reset_peak()
assert whole(path) == rows
# the pool's high-water mark is that of both reads; the whole read's is the higher one if it is higher
print(rows, batches, tracemalloc.get_traced_memory()[1] + max(0, pool.max_memory() - base))
"""


def test_reading_one_large_file_in_batches_holds_a_few_batches(tmp_path):
    """200,000 rows (ARFF, and the same as an Arrow IPC file) read 10,000 at a time: the peak of the
    memory the reading allocates (Python and NumPy objects by tracemalloc, Arrow buffers by the
    pool's high-water mark, in a fresh process) stays a small part of what the whole read takes."""
    import subprocess

    rng = np.random.default_rng(0)
    n = 200_000
    labels = np.array(["u", "v", "w", "x y", None], dtype=object)
    x, y = np.round(rng.normal(size=n), 4), rng.integers(0, 1000, n).astype(float)
    nominal = [labels[rng.integers(0, 5, n)] for _ in range(6)] + [np.array(["p", "q"], dtype=object)[rng.integers(0, 2, n)]]
    names = ["x", "y"] + [f"a{j}" for j in range(6)] + ["class"]
    quoted = [np.array(["?" if v is None else f"'{v}'" if " " in v else v for v in c], dtype=object) for c in nominal]
    head = (["@relation big", "@attribute x numeric", "@attribute y numeric"]
            + [f"@attribute a{j} {{u,v,w,'x y'}}" for j in range(6)] + ["@attribute class {p,q}", "@data"])
    arff = tmp_path / "big.arff"
    arff.write_text("\n".join(head) + "\n" + "\n".join(",".join(r) for r in zip(x.astype(str), y.astype(str), *quoted))
                    + "\n")
    small = tmp_path / "small.arff"
    small.write_text("\n".join(head) + "\n1,2,u,v,w,u,v,w,p\n")
    table = pa.table([pa.array(x), pa.array(y)] + [pa.array(c, pa.string()).dictionary_encode() for c in nominal],
                     names=names)
    ipc = _write_ipc(table, tmp_path / "big.arrow", False, 10_000)
    small_ipc = _write_ipc(table.slice(0, 10), tmp_path / "small.arrow", False, 10)
    env = dict(__import__("os").environ, PYTHONPATH=str(ROOT))
    for path, small_path in ((arff, small), (ipc, small_ipc)):
        out = subprocess.run([sys.executable, "-c", MEMORY_PROBE, str(path), str(small_path)], capture_output=True,
                             text=True, env=env, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        rows, batches, whole = map(int, out.stdout.split())
        assert rows == n
        # a batch is about a twentieth of the file; the whole read holds the file and its columns
        size = path.stat().st_size
        assert batches < size and batches * 5 < whole, (path.name, batches, whole, size)
