"""The spool protocol without a daemon: job schema, golden files, atomic moves, locks, publishing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hdp_plugin import config
from hdp_plugin.daemon import client
from hdp_plugin.daemon import protocol as P
from hdp_plugin.daemon.jobs import Context, data_file, execute, read_job
from hdp_plugin.errors import JobError, ParameterError
from reference import same_estimates

GOLDEN = Path(__file__).parent / "golden" / "spool"
DATA = Path(__file__).parent / "data"
BAD = json.loads((GOLDEN / "bad" / "expected.json").read_text())
BAD.pop("_comment")


# ------------------------------------------------------------------------------------------
# job.json schema
# ------------------------------------------------------------------------------------------
def test_minimal_job_gets_every_default():
    job = P.validate_job(P.parse_json((GOLDEN / "job-minimal.json").read_bytes()))
    assert job == json.loads((GOLDEN / "job-defaults.json").read_text())
    assert job["iterations"] is None and job["k"] == config.DEFAULT_K  # null: the structure's default


def test_full_job_is_kept_as_given():
    doc = json.loads((GOLDEN / "job-full.json").read_text())
    assert P.validate_job(P.parse_json((GOLDEN / "job-full.json").read_bytes())) == doc


def test_schema_covers_every_classifier_parameter():
    from hdp_plugin import BayesNetClassifier

    job = P.validate_job({"protocol": 1})
    params = P.classifier_params(job)
    assert set(params) | {"n_jobs"} == set(BayesNetClassifier().get_params())


@pytest.mark.parametrize("name", sorted(BAD))
def test_golden_bad_jobs_are_rejected_naming_the_field(name):
    raw = (GOLDEN / "bad" / name).read_bytes()
    with pytest.raises(JobError) as info:
        P.validate_job(P.parse_json(raw))
    assert info.value.code == "bad_job"
    assert getattr(info.value, "field", None) == BAD[name], str(info.value)
    if BAD[name]:
        assert BAD[name] in str(info.value)


def test_every_bad_golden_file_is_listed():
    files = {p.name for p in (GOLDEN / "bad").iterdir()} - {"expected.json"}
    assert files == set(BAD)


def test_error_messages_show_what_was_received():
    with pytest.raises(JobError, match=r"k must be a JSON integer, got '2'"):
        P.validate_job({"protocol": 1, "k": "2"})
    with pytest.raises(JobError, match=r"unknown field 'threads'; the fields are protocol, data"):
        P.validate_job({"protocol": 1, "threads": 2})
    with pytest.raises(JobError, match="newer than this daemon"):
        P.validate_job({"protocol": 2})
    with pytest.raises(JobError, match="line 1 column"):
        P.parse_json(b'{"protocol": 1,')


@pytest.mark.parametrize("name,ok", [("job-1", True), ("a.b@c+d_e", True), ("_x", True), (".hidden", False),
                                     ("a/b", False), ("..", False), ("x.tmp", False), ("", False),
                                     ("a b", False), ("x" * 129, False), ("job\n", False), ("a\nb", False)])
def test_job_names(name, ok):
    if ok:
        assert P.check_name(name) == name
    else:
        with pytest.raises(JobError):
            P.check_name(name)


# ------------------------------------------------------------------------------------------
# files, moves and locks
# ------------------------------------------------------------------------------------------
def test_spool_is_private(tmp_path):
    sp = P.Spool(tmp_path / "spool").create()
    if os.name == "posix":
        assert (os.stat(sp.root).st_mode & 0o777) == 0o700
        for d in P.SUBDIRS:
            assert (os.stat(sp.dir(d)).st_mode & 0o777) == 0o700
    assert sp.check() is sp
    with pytest.raises(JobError, match="not a spool"):
        P.Spool(tmp_path).check()


def test_move_never_replaces_and_only_one_wins(tmp_path):
    sp = P.Spool(tmp_path / "s").create()
    (sp.dir(P.NEW) / "j").mkdir()
    (sp.dir(P.CLAIMED) / "a").mkdir()
    (sp.dir(P.CLAIMED) / "b").mkdir()
    assert P.move(sp.job(P.NEW, "j"), sp.job(P.CLAIMED, "j", "a"))
    assert not P.move(sp.job(P.NEW, "j"), sp.job(P.CLAIMED, "j", "b"))  # already taken
    (sp.dir(P.DONE) / "j").mkdir()
    final = P.move_final(sp.job(P.CLAIMED, "j", "a"), sp.dir(P.DONE), "j")
    assert final.name == "j~1"


def test_write_atomic_leaves_no_temporary(tmp_path):
    P.write_json(tmp_path / "x.json", {"a": 1})
    P.write_json(tmp_path / "x.json", {"a": 2})
    assert os.listdir(tmp_path) == ["x.json"]
    assert P.read_json(tmp_path / "x.json") == {"a": 2}
    assert P.read_json(tmp_path / "missing.json") is None


def test_lock_tells_live_from_dead(tmp_path):
    sp = P.Spool(tmp_path / "s").create()
    assert not P.daemon_alive(sp, "nobody")
    # a lock held by another process means alive; when that process dies, dead
    code = ("import sys, time; from hdp_plugin.daemon import protocol as P; "
            "l = P.DaemonLock(P.Spool(sys.argv[1]).lock('d1')); l.acquire(); print('locked', flush=True); "
            "sys.stdin.readline()")
    proc = subprocess.Popen([sys.executable, "-c", code, str(sp.root)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        assert P.daemon_alive(sp, "d1")
        with pytest.raises(JobError, match="already locked"):
            P.DaemonLock(sp.lock("d1")).acquire()
    finally:
        proc.kill()
        proc.wait()
    assert sp.lock("d1").exists() and not P.daemon_alive(sp, "d1")


# ------------------------------------------------------------------------------------------
# publishing and reading a job folder
# ------------------------------------------------------------------------------------------
def test_publish_builds_a_complete_job(tmp_path):
    spool = tmp_path / "s"
    name = client.publish(spool, DATA / "weather.nominal.arff", {"structure": "kdb", "k": 2, "iterations": 20}, name="w")
    sp = P.Spool(spool)
    folder = sp.job(P.NEW, name)
    assert sorted(os.listdir(folder)) == ["data.arff", "job.json"]
    assert sp.names(P.TMP) == []
    job = read_job(folder)
    assert job["k"] == 2 and job["data"] == "data.arff"
    assert data_file(folder, job).name == "data.arff"
    with pytest.raises(JobError, match="already in new"):
        client.publish(spool, DATA / "weather.nominal.arff", {}, name="w")
    with pytest.raises(JobError, match="no such file"):
        client.publish(spool, DATA / "missing.arff", {})
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ParameterError, match="cannot tell the format"):
        client.publish(spool, tmp_path / "notes.txt", {})
    with pytest.raises(JobError, match="k must be"):
        client.publish(spool, DATA / "vote.arff", {"structure": "kdb", "k": "two"})
    assert sp.names(P.TMP) == [] and sp.names(P.NEW) == ["w"]


def _job_folder(tmp_path, job: dict | bytes, files: dict | None = None) -> Path:
    folder = tmp_path / "job"
    folder.mkdir()
    raw = job if isinstance(job, bytes) else json.dumps(job).encode()
    (folder / "job.json").write_bytes(raw)
    for name, content in (files or {}).items():
        (folder / name).write_bytes(content)
    return folder


@pytest.mark.skipif(os.name == "nt", reason="symbolic links need privileges on Windows")
def test_data_file_must_stay_inside_the_folder(tmp_path):
    outside = tmp_path / "secret.arff"
    outside.write_bytes((DATA / "weather.nominal.arff").read_bytes())
    folder = _job_folder(tmp_path, {"protocol": 1})
    with pytest.raises(JobError, match="no data file"):
        data_file(folder, read_job(folder))
    os.symlink(outside, folder / "data.arff")
    with pytest.raises(JobError, match="leaves the job folder"):
        data_file(folder, read_job(folder))
    os.unlink(folder / "data.arff")
    (folder / "real.arff").write_bytes(outside.read_bytes())
    os.symlink("real.arff", folder / "data.arff")  # a link that stays inside is fine
    assert data_file(folder, read_job(folder)).name == "data.arff"
    (folder / "data.arrow").write_bytes(b"x")
    with pytest.raises(JobError, match="both"):
        data_file(folder, read_job(folder))


@pytest.mark.skipif(os.name == "nt", reason="symbolic links need privileges on Windows")
def test_job_json_link_out_is_refused(tmp_path):
    target = tmp_path / "elsewhere.json"
    target.write_text('{"protocol": 1}')
    folder = tmp_path / "job"
    folder.mkdir()
    os.symlink(target, folder / "job.json")
    with pytest.raises(JobError, match="leaves the job folder"):
        read_job(folder)


def test_execute_in_process_writes_result_or_error(tmp_path):
    sp = P.Spool(tmp_path / "s").create()
    folder = _job_folder(tmp_path, {"protocol": 1, "structure": "kdb", "k": 1, "iterations": 20},
                         {"data.arff": (DATA / "weather.nominal.arff").read_bytes()})
    ctx = Context(spool=sp, daemon_id="test")
    assert execute(folder, "job", ctx) == "done"
    result = json.loads((folder / "result.json").read_text())
    assert result["status"] == "done" and result["data"]["rows"] == 14
    assert (folder / "model.arrow").exists()
    # the fit time is the model's own (a first use's compiling is apart, in compile_seconds)
    from hdp_plugin.model.modelfile import read_model

    assert result["timings"]["fit_seconds"] == read_model(folder / "model.arrow").training["fit_seconds"]
    assert result["timings"]["compile_seconds"] >= 0.0
    # the same folder with a broken job.json: the model goes, error.json comes
    (folder / "job.json").write_text('{"protocol": 1, "k": "x"}')
    (folder / "result.json").unlink()
    assert execute(folder, "job", ctx) == "failed"
    err = json.loads((folder / "error.json").read_text())
    assert err["code"] == "bad_job" and err["field"] == "k"


# ------------------------------------------------------------------------------------------
# golden result, error, progress and heartbeat files: the shapes the Java side reads
# ------------------------------------------------------------------------------------------
def _shape(doc):
    """Keys, recursively through objects (not through lists or free-form maps)."""
    if not isinstance(doc, dict):
        return type(doc).__name__
    return {k: (_shape(v) if isinstance(v, dict) and k not in ("parents",) else None) for k, v in doc.items()}


def test_golden_result_and_progress_have_the_shape_the_daemon_writes(tmp_path):
    sp = P.Spool(tmp_path / "s").create()
    folder = _job_folder(tmp_path, {"protocol": 1, "structure": "kdb", "k": 1, "iterations": 20},
                         {"data.arff": (DATA / "weather.nominal.arff").read_bytes()})
    assert execute(folder, "job", Context(spool=sp, daemon_id="test")) == "done"
    made = json.loads((folder / "result.json").read_text())
    golden = json.loads((GOLDEN / "result.json").read_text())
    assert _shape(made) == _shape(golden)
    assert golden["status"] == "done" and golden["model"] == P.MODEL_FILE
    assert P.validate_job(golden["job_settings"]) == golden["job_settings"]
    progress = P.read_json(sp.progress("job"))
    assert set(progress) == set(json.loads((GOLDEN / "progress.json").read_text()))


def test_golden_heartbeat_has_the_shape_the_daemon_writes(tmp_path):
    from hdp_plugin.daemon.service import Daemon

    d = Daemon(tmp_path / "s")
    d.spool.create()
    d.beat(force=True)
    made = P.read_json(d.spool.heartbeat(d.id))
    assert _shape(made) == _shape(json.loads((GOLDEN / "heartbeat.json").read_text()))


@pytest.mark.parametrize("path", sorted((GOLDEN / "error").glob("*.json")), ids=lambda p: p.stem)
def test_golden_error_files(path):
    doc = json.loads(path.read_text())
    assert {"protocol", "job", "status", "code", "message", "attempt", "daemon", "finished"} <= set(doc)
    assert doc["protocol"] == P.PROTOCOL_VERSION and doc["status"] == "failed"
    assert doc["code"] in P.ERROR_CODES
    assert set(doc) <= {"protocol", "job", "status", "code", "message", "attempt", "daemon", "finished", "phase",
                        "field", "history", "traceback"}


def test_every_error_code_is_documented():
    text = (Path(__file__).parent.parent / "docs" / "spool-protocol.md").read_text()
    for code in P.ERROR_CODES:
        assert f"`{code}`" in text
    for f in P.JOB_SCHEMA:
        assert f"| `{f.name}` |" in text


@pytest.mark.parametrize("raised,code", [(MemoryError(), "out_of_memory"), (RuntimeError("boom"), "internal_error")])
def test_execute_turns_crashes_into_error_codes(tmp_path, monkeypatch, raised, code):
    from hdp_plugin.model import BayesNetClassifier

    def fit(self, *args, **kwargs):
        raise raised

    monkeypatch.setattr(BayesNetClassifier, "fit", fit)
    sp = P.Spool(tmp_path / "s").create()
    folder = _job_folder(tmp_path, {"protocol": 1, "iterations": 20},
                         {"data.arff": (DATA / "weather.nominal.arff").read_bytes()})
    assert execute(folder, "job", Context(spool=sp, daemon_id="test")) == "failed"
    err = json.loads((folder / "error.json").read_text())
    assert err["code"] == code and err["phase"] == "training"
    assert ("traceback" in err) == (code == "internal_error")


def test_execute_puts_back_when_the_daemon_stops(tmp_path):
    sp = P.Spool(tmp_path / "s").create()
    folder = _job_folder(tmp_path, {"protocol": 1, "structure": "kdb", "k": 2, "iterations": 100_000},
                         {"data.arff": (DATA / "vote.arff").read_bytes()})
    calls = []

    def interrupted():
        calls.append(1)
        return len(calls) > 3  # the daemon asks to stop while the job samples

    assert execute(folder, "job", Context(spool=sp, daemon_id="test", interrupted=interrupted)) == "requeue"
    assert sorted(os.listdir(folder)) == ["data.arff", "job.json"]


def test_csv_is_handed_over_as_arrow_and_trains_the_same_model(tmp_path):

    from hdp_plugin import BayesNetClassifier, read_dataset
    from hdp_plugin.model.modelfile import load_model

    csv = tmp_path / "weather.csv"
    ds = read_dataset(DATA / "weather.numeric.arff")
    lines = [",".join(a.name for a in ds.attributes) + "," + ds.class_attribute.name]
    text = (DATA / "weather.numeric.arff").read_text().split("@data")[1].strip().splitlines()
    csv.write_text("\n".join(lines + [t for t in text if t.strip()]) + "\n")
    spool = tmp_path / "s"
    name = client.publish(spool, csv, {"structure": "kdb", "k": 1, "iterations": 20, "seed": 3})
    sp = P.Spool(spool)
    folder = sp.job(P.NEW, name)
    assert sorted(os.listdir(folder)) == ["data.arrow", "job.json"]
    assert execute(folder, name, Context(spool=sp, daemon_id="test")) == "done"
    direct = BayesNetClassifier(structure="kdb", k=1, iterations=20, random_state=3).fit(read_dataset(csv))
    assert same_estimates(load_model(folder / "model.arrow"), direct)


def test_a_decimal_comma_csv_with_missing_classes_trains_its_numbers(tmp_path):
    """A ';'-separated CSV file with decimal commas is handed over with numbers, not text; its rows
    with a missing class are counted in result.json, as the fit's note counts them."""
    import warnings

    import pyarrow as pa

    from hdp_plugin import BayesNetClassifier, read_dataset
    from hdp_plugin.model.modelfile import load_model

    csv = tmp_path / "d.csv"
    rows = [f"{i % 7},{i % 3}5;{'ab'[i % 2]};{'?' if i in (4, 9) else 'pq'[(i // 3) % 2]}" for i in range(40)]
    csv.write_text("x;c;class\n" + "\n".join(rows) + "\n")
    spool = tmp_path / "s"
    name = client.publish(spool, csv, {"structure": "nb", "estimator": "laplace"})
    sp = P.Spool(spool)
    folder = sp.job(P.NEW, name)
    assert pa.types.is_floating(pa.ipc.open_file(str(folder / "data.arrow")).read_all().schema.field("x").type)
    assert execute(folder, name, Context(spool=sp, daemon_id="test")) == "done"
    result = json.loads((folder / "result.json").read_text())
    assert result["data"]["rows"] == 40 and result["data"]["rows_used"] == 38
    assert result["data"]["dropped_missing_class"] == 2 and result["warnings"] == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = BayesNetClassifier(structure="nb", estimator="laplace").fit(read_dataset(csv))
    assert direct.attributes_[0].numeric and same_estimates(load_model(folder / "model.arrow"), direct)


def test_gzip_bomb_counts_by_its_decompressed_size(tmp_path):
    import gzip

    from hdp_plugin.daemon.jobs import Limits

    sp = P.Spool(tmp_path / "s").create()
    big = (DATA / "weather.nominal.arff").read_bytes() + b"%" + b"x" * (3 << 20) + b"\n"
    folder = _job_folder(tmp_path, {"protocol": 1, "iterations": 20}, {"data.arff": gzip.compress(big)})
    assert (folder / "data.arff").stat().st_size < 1 << 20
    ctx = Context(spool=sp, daemon_id="test", limits=Limits(max_input_bytes=1 << 20))
    assert execute(folder, "job", ctx) == "failed"
    err = json.loads((folder / "error.json").read_text())
    assert err["code"] == "too_large" and "decompresses" in err["message"]
    ctx = Context(spool=sp, daemon_id="test", limits=Limits(max_input_bytes=8 << 20))
    assert execute(folder, "job", ctx) == "done"


def test_abandoned_tmp_entries_are_swept_fresh_ones_kept(tmp_path):
    """Maildir's rule: what a producer left in tmp/ for 36 hours is garbage; a job being written is not."""
    import time

    from hdp_plugin.daemon import service

    sp = P.Spool(tmp_path / "spool").create()
    old = sp.dir(P.TMP) / "abandoned"
    old.mkdir()
    (old / "data.arff").write_text("@relation x\n")
    fresh = sp.dir(P.TMP) / "being-written"
    fresh.mkdir()
    (fresh / "data.arff").write_text("@relation y\n")
    past = time.time() - P.TMP_MAX_AGE_SECONDS - 60
    for path in (old / "data.arff", old):
        os.utime(path, (past, past))
    # a folder whose own time is old but whose file was just written is still in use
    os.utime(fresh, (past, past))
    service.Daemon(sp.root).recover()
    assert sp.names(P.TMP) == ["being-written"]


def _suffixes_read_dataset_reads() -> list[str]:
    """Every extension :func:`read_dataset` tells a format by, with ``.gz`` where it is allowed."""
    from hdp_plugin.data.readers import FORMATS

    out = [s for exts in FORMATS.values() for s in exts]
    return out + [s + ".gz" for s in FORMATS["arff"] + FORMATS["csv"]]


def _write_as(ds_path: Path, path: Path) -> None:
    """weather.nominal.arff in the format ``path``'s extension names (pyarrow and gzip as the writers)."""
    import gzip

    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    from hdp_plugin.data.readers import format_of

    text = ds_path.read_text()
    rows = [r.split(",") for r in text.split("@data")[1].split() if r and not r.startswith("%")]
    names = ["outlook", "temperature", "humidity", "windy", "play"]
    table = pa.table({n: [r[j] for r in rows] for j, n in enumerate(names)})
    fmt = format_of(path)
    gz = path.suffix.lower() == ".gz"
    raw = path.with_suffix("") if gz else path
    if fmt == "arff":
        raw.write_text(text)
    elif fmt == "csv":
        pcsv.write_csv(table, raw)
    elif fmt == "parquet":
        pq.write_table(table, raw)
    elif raw.suffix == ".arrows":
        with pa.OSFile(str(raw), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as w:
            w.write_table(table)
    else:
        with pa.OSFile(str(raw), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
            w.write_table(table)
    if gz:
        path.write_bytes(gzip.compress(raw.read_bytes()))
        raw.unlink()


def test_daemon_submit_accepts_every_suffix_read_dataset_reads(tmp_path):
    """`daemon submit` (and client.publish under it) takes what read_dataset takes: each file becomes a job
    the daemon's own reader trains on, on the very table read_dataset reads."""
    import numpy as np
    from typer.testing import CliRunner

    from hdp_plugin import read_dataset
    from hdp_plugin.cli.daemon import app

    spool = tmp_path / "s"
    suffixes = _suffixes_read_dataset_reads()
    assert {".arrows", ".pq", ".arff.gz", ".csv.gz", ".feather", ".ipc"} <= set(suffixes)
    sp = P.Spool(spool)
    for i, suffix in enumerate(suffixes):
        src = tmp_path / f"weather{suffix}"
        _write_as(DATA / "weather.nominal.arff", src)
        expected = read_dataset(src)
        name = f"j{i}"
        res = CliRunner().invoke(app, ["submit", str(spool), str(src), "--name", name, "-e", "mle", "-q"])
        assert res.exit_code == 0, (suffix, res.output)
        folder = sp.job(P.NEW, name)
        job = read_job(folder)
        got = read_dataset(data_file(folder, job))
        assert [a.values for a in got.attributes] == [a.values for a in expected.attributes], suffix
        assert np.array_equal(got.X, expected.X) and np.array_equal(got.y, expected.y), suffix
        assert execute(folder, name, Context(spool=sp, daemon_id="test")) == "done", (
            suffix, (folder / P.ERROR_FILE).read_text() if (folder / P.ERROR_FILE).exists() else "")
        assert json.loads((folder / P.RESULT_FILE).read_text())["data"]["rows"] == expected.n_rows
