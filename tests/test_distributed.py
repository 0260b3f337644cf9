"""The Dask engine (hdp_plugin.distributed) on a real LocalCluster of 2 worker processes: the same
model, bit for bit, as the single process, whatever the workers and partitions."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

pytest.importorskip("distributed")

from hdp_plugin import BayesNetClassifier, config, read_dataset  # noqa: E402
from hdp_plugin.data import from_arrow, open_batches, to_arrow  # noqa: E402
from hdp_plugin.hdp.sampler import convergence_checks  # noqa: E402
from hdp_plugin.distributed import use_engine  # noqa: E402
from hdp_plugin.distributed.dask_engine import DaskEngine  # noqa: E402
from hdp_plugin.model.modelfile import load_model  # noqa: E402
from reference import same_estimates, same_tables  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from synthetic import synthetic  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


@pytest.fixture(scope="module")
def dask_engine():
    from distributed import LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    eng = DaskEngine(scheduler=cluster.scheduler_address)
    yield eng
    eng.close()
    cluster.close()


@pytest.fixture(scope="module")
def table():
    return to_arrow(synthetic(5000, n_attributes=7, seed=3))


def _write(table, d: Path, sizes) -> Path:
    d.mkdir()
    lo = 0
    for i, n in enumerate(sizes):
        pq.write_table(table.slice(lo, n), d / f"part-{i:03d}.parquet")
        lo += n
    return d


def _fit_on(engine, X, **params):
    with use_engine(engine):
        return BayesNetClassifier(**params).fit(X)


def _same(a, b):
    assert len(a.members_) == len(b.members_)
    for ma, mb in zip(a.members_, b.members_):
        assert ma.structure.parents == mb.structure.parents
        same_tables(ma.tables, mb.tables)


@pytest.mark.parametrize("structure", ["kdb", "skdb"])
def test_the_cluster_learns_the_single_process_model(tmp_path, dask_engine, table, structure):
    params = dict(structure=structure, k=2, iterations=60, random_state=11)
    ref = BayesNetClassifier(**params).fit(from_arrow(table))
    few = _fit_on(dask_engine, open_batches(_write(table, tmp_path / "a", [2500, 2500])), **params)
    many = _fit_on(dask_engine, open_batches(_write(table, tmp_path / "b", [700, 1, 1299, 1000, 2000])), **params)
    _same(ref, few)
    _same(ref, many)
    assert few.fit_info_["engine"] == "dask"
    # prediction as a map over the partitions
    n = dask_engine.predict_partitions(ref, open_batches(tmp_path / "b"), tmp_path / "pred")
    got = pq.read_table(tmp_path / "pred").to_pandas()
    assert n == table.num_rows == len(got)
    files = sorted((tmp_path / "pred").iterdir())
    got = np.concatenate([pq.read_table(f).select(["p_c0", "p_c1", "p_c2"]).to_pandas().to_numpy() for f in files])
    assert np.array_equal(got, ref.predict_proba(table))


def test_skdb_passes_split_over_partitions_select_the_single_process_model(tmp_path, dask_engine):
    """SkDB's tries and leave-one-out passes as maps over 4 Parquet files of unequal sizes (one of a single
    row) and tree reduces: the same grid, selection and tables as the local streamed and in-memory fits."""
    data = read_dataset(ROOT / "tests" / "data" / "segment-challenge.arff")
    table = to_arrow(data)
    d = _write(table, tmp_path / "seg", [600, 1, 399, 500])
    params = dict(structure="skdb", k=3, iterations=20, random_state=2)
    ref = BayesNetClassifier(**params).fit(data)
    streamed = BayesNetClassifier(**params).fit(open_batches(d))
    from distributed import get_task_stream

    with get_task_stream(dask_engine.client) as ts:
        dask = _fit_on(dask_engine, open_batches(d), **params)
    assert dask.fit_info_["engine"] == "dask" and streamed.fit_info_["engine"] == "local"
    names = [t["key"].split("-")[0] for t in ts.data]
    assert names.count("_tries_members") == names.count("_loo_members") == 4  # one task of each pass per partition
    assert names.count("_merge") >= 2 * 3  # two tree reduces of 4 partials (and the counting pass's)
    s = ref.structure_
    assert 0 < s.info["n_star"] < len(s.order) and s.k > 0  # a selection that the grid decides
    for other in (streamed, dask):
        t = other.structure_
        assert (t.kept, t.k, t.parents, t.order) == (s.kept, s.k, s.parents, s.order)
        assert (t.info["n_star"], t.info["k_star"], t.info["n_trie_nodes"]) == (
            s.info["n_star"], s.info["k_star"], s.info["n_trie_nodes"])
        assert np.array_equal(np.array(t.info["rmse"]), np.array(s.info["rmse"]))  # bit for bit
        _same(ref, other)


@pytest.mark.parametrize("iterations", [40, None], ids=["40", "auto"])
def test_eskdb_members_sample_on_the_cluster_to_the_same_tables(dask_engine, iterations):
    """Every tree a task of its own: the same tables, and with auto iterations the same iterations, as
    sampling them all in this process (an ensemble's trees stop at 25, 50 or 100 from config.AUTO_FIRST_CHECK; a
    single network's from 500: below)."""
    data = read_dataset(ROOT / "tests" / "data" / "vote.arff")
    params = dict(structure="eskdb", n_members=3, k=2, iterations=iterations, random_state=5)
    a = BayesNetClassifier(**params).fit(data)
    b = _fit_on(dask_engine, data, **params)
    for ma, mb in zip(a.members_, b.members_):
        assert np.array_equal(ma.tables.log_probs, mb.tables.log_probs)
    assert (a.fit_info_["iterations"], a.fit_info_["burn_in"]) == (b.fit_info_["iterations"], b.fit_info_["burn_in"])
    if iterations is None:
        assert np.array_equal(a.fit_info_["tree_iterations"], b.fit_info_["tree_iterations"])
        cap = config.AUTO_ITERATIONS["eskdb"]
        assert set(a.fit_info_["tree_iterations"]) <= {*convergence_checks(cap, None, config.AUTO_FIRST_CHECK["eskdb"]), cap}
        # a single network's trees stop once converged, each at its own check: the same on the cluster
        single = dict(structure="kdb", k=2, random_state=5)
        a, b = BayesNetClassifier(**single).fit(data), _fit_on(dask_engine, data, **single)
        assert same_estimates(a, b)
        assert np.array_equal(a.fit_info_["tree_iterations"], b.fit_info_["tree_iterations"])
        assert len(set(a.fit_info_["tree_iterations"])) > 1  # trees stopped at different checks


@pytest.mark.parametrize("group", [64, 2], ids=["one-group", "groups-of-2"])
def test_a_streamed_eskdb_on_the_cluster_is_the_in_memory_ensemble(tmp_path, dask_engine, monkeypatch, group):
    """Every member's counts, tries, leave-one-out sums and tree cells per partition (4 Parquet files
    of unequal sizes, one of a single row: one task for all the members), reduced member by member;
    their trees sampled as tasks: the ensemble of the single process, streamed or in memory, member
    by member, selections included. Beyond ``SHARED_PASS_MEMBERS`` members the two selection passes
    run per group of members."""
    from distributed import get_task_stream

    from hdp_plugin.distributed import local as streaming

    monkeypatch.setattr(streaming, "SHARED_PASS_MEMBERS", group)
    if group == 2:  # and the selections score a subset of the rows, the same on every engine
        monkeypatch.setattr(config, "SELECTION_ROWS", 300)
    t = to_arrow(read_dataset(ROOT / "tests" / "data" / "diabetes.arff"))
    d = _write(t, tmp_path / "d", [200, 1, 300, 267])
    params = dict(structure="eskdb", n_members=3, k=2, iterations=30, random_state=6)
    ref = BayesNetClassifier(**params).fit(from_arrow(t))
    streamed = BayesNetClassifier(**params).fit(open_batches(d, batch_rows=128))
    with get_task_stream(dask_engine.client) as ts:
        got = _fit_on(dask_engine, open_batches(d, batch_rows=128), **params)
    assert got.fit_info_["engine"] == "dask" and len(got.members_) == 3
    names = [x["key"].split("-")[0] for x in ts.data]
    groups = -(-3 // group)
    # one task per partition (per group of members) for every pass, not one per member
    assert names.count("_tries_members") == names.count("_loo_members") == 4 * groups
    assert names.count("_count_members") == names.count("_cells_members") == 4
    assert not {"_select_members", "_tries", "_loo"} & set(names)
    # the tries and sums of every member are merged in the tree reduces: 3 merges of 4 partials per pass
    assert names.count("_merge") >= 3 * (2 + 2 * groups)
    assert any(0 < m.structure.info["n_star"] for m in ref.members_)  # selections the grids decide
    assert len({m.structure.order for m in ref.members_}) == 3  # three different orders
    assert all(("loo_rows" in m.structure.info) == (group == 2) for m in ref.members_)
    for other in (streamed, got):
        for ma, mb in zip(ref.members_, other.members_):
            assert [x.cut_points for x in ma.attributes] == [x.cut_points for x in mb.attributes]
            assert list(ma.structure.order) == list(mb.structure.order)
            assert (ma.structure.kept, ma.structure.k, ma.structure.parents) == (
                mb.structure.kept, mb.structure.k, mb.structure.parents)
            assert ma.structure.info == mb.structure.info  # n*, k*, trie nodes and the RMSE grid, bit for bit
            same_tables(ma.tables, mb.tables)
            assert np.array_equal(ma.concentrations, mb.concentrations)
        assert np.array_equal(ref.predict_proba(t), other.predict_proba(t))


def _cli(*args):
    from typer.testing import CliRunner

    from hdp_plugin.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


def test_hdp_bnc_train_on_a_scheduler(tmp_path, dask_engine, table):
    d = _write(table, tmp_path / "d", [3000, 2000])
    args = ["train", d, "-s", "kdb", "-k", "2", "-i", "30", "--seed", "4", "-q"]
    done = _cli(*args, "-o", tmp_path / "dask.hdpbnc", "--engine", "dask", "--scheduler",
                dask_engine.client.scheduler.address)
    assert done.exit_code == 0, done.output
    done = _cli(*args, "-o", tmp_path / "local.hdpbnc")
    assert done.exit_code == 0, done.output
    _same(load_model(tmp_path / "dask.hdpbnc"), load_model(tmp_path / "local.hdpbnc"))
    # the default structure, ESKDB, trains from the partitions on the cluster too
    args = ["train", d, "--members", "2", "-k", "1", "-i", "20", "--seed", "4", "-q"]
    done = _cli(*args, "-o", tmp_path / "e-dask.hdpbnc", "--engine", "dask", "--scheduler",
                dask_engine.client.scheduler.address)
    assert done.exit_code == 0, done.output
    assert _cli(*args, "-o", tmp_path / "e-local.hdpbnc").exit_code == 0
    a, b = load_model(tmp_path / "e-dask.hdpbnc"), load_model(tmp_path / "e-local.hdpbnc")
    assert len(a.members_) == len(b.members_) == 2
    for ma, mb in zip(a.members_, b.members_):
        assert np.array_equal(ma.tables.log_probs, mb.tables.log_probs)
    assert "streamed       in batches, engine dask" in _cli("info", tmp_path / "e-dask.hdpbnc").output.replace("\n" + " " * 15, " ")


def test_without_dask_the_message_says_what_to_install(tmp_path):
    code = ("import sys; sys.modules['distributed'] = None; from hdp_plugin.cli import main; "
            f"sys.argv = ['hdp-bnc', 'train', {str(ROOT / 'tests' / 'data' / 'vote.arff')!r}, '-o', "
            f"{str(tmp_path / 'm.hdpbnc')!r}, '--engine', 'dask']; main()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'dask[distributed]'" in lines[0], done.stderr


def test_bad_engine_options_are_one_line_errors(tmp_path):
    base = ["train", ROOT / "tests" / "data" / "vote.arff", "-o", tmp_path / "m.hdpbnc"]
    for extra, msg in ((["--engine", "spark"], "--engine must be one of local, dask"),
                       (["--scheduler", "tcp://127.0.0.1:1"], "--scheduler and --workers need --engine dask"),
                       (["--discretization-sample", "10"], "--discretization-sample applies to data read in batches")):
        done = _cli(*base, *extra)
        assert done.exit_code == 2 and msg in done.output, (extra, done.output)


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="the daemon test helpers use POSIX process groups")
def test_a_daemon_with_engine_dask_publishes_the_local_model(tmp_path, dask_engine):
    from hdp_plugin.daemon import client
    from hdp_plugin.daemon import protocol as P

    spool = tmp_path / "spool"
    vote = ROOT / "tests" / "data" / "vote.arff"
    client.publish(spool, vote, dict(structure="kdb", k=2, iterations=40, seed=7), name="v")
    done = subprocess.run([sys.executable, "-m", "hdp_plugin", "daemon", "run", str(spool), "--idle-exit", "0.5",
                           "--poll", "0.05", "--engine", "dask", "--scheduler", dask_engine.client.scheduler.address],
                          capture_output=True, text=True, env=ENV, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Dask cluster at" in done.stderr
    model = load_model(P.Spool(spool).job(P.DONE, "v") / P.MODEL_FILE)
    _same(model, BayesNetClassifier(structure="kdb", k=2, iterations=40, random_state=7).fit(read_dataset(vote)))


def test_declared_categorical_columns_get_the_in_memory_domain_from_any_partitioning(tmp_path, dask_engine):
    """categorical_features on the cluster: each partition's scan finds its codes, the tree reduce unites
    them, sorted numerically, so the domain (and the model) is the in-memory one whatever the partitions."""
    import pyarrow as pa

    rng = np.random.default_rng(5)
    n = 1200
    colour = rng.integers(1, 12, n)
    colour[-2:] = [30, 20]  # codes only the last partition has
    y = np.where((colour % 3 == 0) ^ (rng.random(n) < 0.15), "a", "b")
    t = pa.table({"colour": colour, "count": rng.poisson(2.0, n), "class": list(y)})
    params = dict(structure="kdb", k=1, iterations=30, random_state=4, categorical_features=["colour"])
    ref = BayesNetClassifier(**params).fit(t)
    assert ref.attributes_[0].values[-3:] == ("11", "20", "30") and ref.attributes_[1].numeric
    for name, sizes in (("a", [600, 600]), ("b", [1, 700, 498, 1])):
        got = _fit_on(dask_engine, open_batches(_write(t, tmp_path / name, sizes)), **params)
        assert got.fit_info_["engine"] == "dask"
        assert got.attributes_ == ref.attributes_
        _same(ref, got)
