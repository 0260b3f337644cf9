"""The daemon keeps itself and its spool tidy: it stops when its installation disappears, sweeps the
cancel markers of gone jobs, writes only log records to its log, leaves no named semaphore behind when
killed, and tells the truth in result.json, status and the data it is handed.

Daemons are real processes (``python -m hdp_plugin daemon run``, see test_daemon_service.py); every
wait is on an event (a file, a heartbeat, a process's exit), bounded by a generous timeout.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from hdp_plugin import BayesNetClassifier, read_dataset
from hdp_plugin.daemon import client
from hdp_plugin.daemon import protocol as P
from hdp_plugin.daemon.jobs import Context, execute
from hdp_plugin.model.modelfile import load_model, read_model
from reference import same_estimates

from test_daemon_service import VOTE, WEATHER, Daemon, daemon, wait_until

pytestmark = pytest.mark.skipif(os.name != "posix", reason="uses POSIX signals and process groups")

ROOT = Path(__file__).resolve().parent.parent
#: a line of the daemon's log: its time stamp and name (commands.run's format)
RECORD = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d hdp-bnc daemon: ")
DATA_DIABETES = Path(__file__).parent / "data" / "diabetes.arff"
LONG_JOB = dict(structure="kdb", k=4, iterations=100_000, seed=1)


def _sampling(spool: Path, name: str) -> bool:
    doc = P.read_json(P.Spool(spool).progress(name)) or {}
    return doc.get("phase") == "sampling" and doc.get("iteration", 0) > 0


def _venv_seeing_these_packages(where: Path) -> Path:
    """A real virtual environment (no pip) whose site-packages also hold this interpreter's, so that
    its python imports what the tests' python imports, whether those packages live in a venv or in the
    base interpreter; returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=300)
    python = where / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    ours = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True, timeout=120).stdout.strip()
    theirs = [p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p)]
    lines = "".join(f"import site; site.addsitedir({p!r})\n" for p in theirs)
    Path(ours, "tests-python.pth").write_text(lines, encoding="utf-8")
    return python


# ------------------------------------------------------------------------------------------
# an uninstalled daemon stops, and its running job goes back to new/
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("removed", ["package", "python"])
def test_a_daemon_whose_installation_is_removed_puts_its_job_back_and_exits(tmp_path, removed):
    """A copy of the package (an installation of its own) and a link to the interpreter (a
    virtual environment's python): removing either stops the daemon, which puts its job back."""
    site = tmp_path / "site"
    shutil.copytree(ROOT / "hdp_plugin", site / "hdp_plugin", ignore=shutil.ignore_patterns("__pycache__"))
    python = _venv_seeing_these_packages(tmp_path / "venv")
    spool = tmp_path / "spool"
    client.publish(spool, VOTE, LONG_JOB, name="long")
    log = tmp_path / "daemon.log"
    with open(log, "ab") as fh:
        proc = subprocess.Popen([str(python), "-m", "hdp_plugin", "daemon", "run", str(spool), "--poll", "0.05"],
                                cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(site)},
                                stdout=subprocess.DEVNULL, stderr=fh, start_new_session=True)
    try:
        def sampling():
            assert proc.poll() is None, f"the daemon exited with {proc.returncode}: {log.read_text()}"
            return _sampling(spool, "long")

        wait_until(sampling, 120, "the job sampling")
        if removed == "package":
            shutil.rmtree(site)  # pip uninstall
        else:
            python.unlink()  # the environment deleted
        assert proc.wait(60) == 1, log.read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    text = log.read_text()
    gone = str(site / "hdp_plugin" / "__init__.py") if removed == "package" else str(python)
    assert f"{gone} is gone (hdp_plugin was uninstalled or its environment deleted)" in text, text
    sp = P.Spool(spool)
    assert sp.names(P.NEW) == ["long"] and sp.names(P.DONE) == sp.names(P.FAILED) == []
    left = sorted(os.listdir(sp.job(P.NEW, "long")))
    assert left == ["data.arff", "job.json"], left  # put back: no attempt counted, nothing of the run
    assert sp.claimed() == {} and sp.names(P.DAEMONS) == [] and sp.names(P.PROGRESS) == []


# ------------------------------------------------------------------------------------------
# cancel markers do not pile up
# ------------------------------------------------------------------------------------------
def test_cancel_markers_of_jobs_gone_from_the_spool_are_swept(tmp_path):
    """The Weka client's pattern: a job finishes, a late cancel marker is written for it, and the client
    removes the job's folder; and a cancel of a job that was never published. Neither marker stays."""
    spool = tmp_path / "spool"
    sp = P.Spool(spool)
    with daemon(spool, log=tmp_path / "daemon.log"):
        client.publish(spool, WEATHER, dict(structure="nb"), name="finished")
        wait_until(lambda: sp.job(P.DONE, "finished").exists(), 60, "the job done")
        client.cancel(spool, "finished")
        shutil.rmtree(sp.job(P.DONE, "finished"))
        assert client.cancel(spool, "never-published") is False  # writes nothing; another client may:
        sp.cancel("never-published").write_bytes(b"")
        for name in ("finished", "never-published"):  # written a minute ago: no job is moving by then
            try:
                st = os.stat(sp.cancel(name))
                os.utime(sp.cancel(name), (st.st_atime, st.st_mtime - 60))
            except FileNotFoundError:  # the daemon swept it already (its job is gone): what is tested
                pass
        wait_until(lambda: sp.names(P.CANCEL) == [], 60, "the markers swept")


# ------------------------------------------------------------------------------------------
# the log holds records only
# ------------------------------------------------------------------------------------------
def test_the_daemon_log_holds_only_records_and_nothing_of_the_warm_up(tmp_path):
    spool = tmp_path / "spool"
    log = tmp_path / "daemon.log"
    with daemon(spool, log=log, workers=2) as d:
        client.publish(spool, WEATHER, dict(structure="eskdb", n_members=2, iterations=20), name="e")
        client.publish(spool, WEATHER, dict(structure="nb", n_members=3), name="warns")  # a warnings.warn
        wait_until(lambda: P.Spool(spool).job(P.DONE, "e").exists(), 60, "the job done")
        wait_until(lambda: P.Spool(spool).job(P.DONE, "warns").exists(), 60, "the job done")
        client.stop(spool)
        assert d.wait(60) == 0
    lines = log.read_text().splitlines()
    assert lines and [ln for ln in lines if not RECORD.match(ln)] == []
    assert not [ln for ln in lines if "leave-one-out" in ln or "class prior" in ln], lines


def _processes_of_group(pgid: int) -> list[int]:
    """Live (not zombie) processes of a process group (Linux /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            out.append(int(entry))
    return out


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc (Linux)")
def test_a_killed_daemon_leaves_no_semaphore_and_no_tracker_warning(tmp_path):
    """The daemon's processes map no named semaphore (which a kill of the process group would leave in
    /dev/shm for good); killed alone, the supervisor leaves its resource tracker nothing to warn about."""
    spool = tmp_path / "spool"
    log = tmp_path / "daemon.log"
    d = Daemon(spool, "--workers", "2", log=log)
    try:
        d.wait_ready(2)
        group = _processes_of_group(d.proc.pid)
        assert len(group) >= 3  # the supervisor, its workers, multiprocessing's resource tracker
        for pid in group:  # a named semaphore still linked is a file of /dev/shm that a kill leaves
            named = [ln for ln in Path(f"/proc/{pid}/maps").read_text().splitlines()
                     if "/dev/shm/sem." in ln and not ln.endswith("(deleted)")]
            assert named == [], f"process {pid} maps named semaphores: {named}"
        d.kill9(group=False)
        wait_until(lambda: _processes_of_group(d.proc.pid) == [], 60, "the workers and the tracker to exit")
    finally:
        d.close()
    text = log.read_text()
    assert "resource_tracker" not in text and "leaked" not in text, text
    assert [ln for ln in text.splitlines() if not RECORD.match(ln)] == []


def test_a_stopping_daemon_recovers_a_dead_daemons_job_once_its_workers_are_gone(tmp_path):
    """A dead daemon's job waits while the dead daemon's worker runs; the worker exits while the live
    daemon is stopping (no more passes in its loop): its last pass requeues the job and removes the dead
    daemon's files, instead of leaving them to the next daemon to start."""
    spool = tmp_path / "spool"
    sp = P.Spool(spool)
    dead = "dead-1-000000"
    client.publish(spool, WEATHER, dict(structure="nb"), name="orphan")
    os.makedirs(sp.dir(P.CLAIMED) / dead)
    os.rename(sp.job(P.NEW, "orphan"), sp.job(P.CLAIMED, "orphan", dead))
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        # its heartbeat names a worker of this host that still runs (dated ahead: never stale in this test)
        P.write_json(sp.heartbeat(dead), {"protocol": 1, "daemon": dead, "host": socket.gethostname(),
                                          "heartbeat_unix": time.time() + 3600, "worker_pids": [worker.pid]})
        client.publish(spool, VOTE, LONG_JOB, name="long")
        d = Daemon(spool, log=tmp_path / "daemon.log")
        try:
            wait_until(lambda: _sampling(spool, "long"), 120, "the job sampling")
            d.proc.send_signal(signal.SIGTERM)  # stopping: running jobs get their grace
            wait_until(lambda: (d.heartbeat() or {}).get("state") == "stopping", 30, "the daemon stopping")
            assert sp.job(P.CLAIMED, "orphan", dead).is_dir()  # waited for the dead daemon's worker
            worker.kill()
            worker.wait(10)
            d.proc.send_signal(signal.SIGTERM)  # the second: the running job goes back at once
            assert d.wait(60) == 0
        finally:
            d.close()
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait(10)
    assert sp.names(P.NEW) == ["long", "orphan"] and sp.claimed() == {}
    assert sp.names(P.DAEMONS) == [], sp.names(P.DAEMONS)
    assert json.loads((sp.job(P.NEW, "orphan") / P.ATTEMPTS_FILE).read_text())["lost"] == 1


# ------------------------------------------------------------------------------------------
# status: the daemon's counts and the spool's, each labelled, the daemon's written at once
# ------------------------------------------------------------------------------------------
def test_status_shows_a_daemons_counts_as_soon_as_a_job_is_published(tmp_path):
    """A daemon whose periodic heartbeat is an hour apart still shows a job it published."""
    spool = tmp_path / "spool"
    P.Spool(spool).create()
    code = ("import sys; from hdp_plugin.daemon.service import Settings, run; "
            "sys.exit(run(sys.argv[1], Settings(heartbeat=3600, poll=0.05)))")
    with open(tmp_path / "daemon.log", "ab") as fh:
        proc = subprocess.Popen([sys.executable, "-c", code, str(spool)], stdout=subprocess.DEVNULL, stderr=fh,
                                start_new_session=True)
    try:
        def beat():
            return next((d for d in client.daemons(spool) if d.get("pid") == proc.pid), None)

        wait_until(lambda: (beat() or {}).get("ready_workers") == 1, 120, "the daemon ready")
        client.publish(spool, WEATHER, dict(structure="nb"), name="one")
        wait_until(lambda: P.Spool(spool).job(P.DONE, "one").exists(), 60, "the job done")
        wait_until(lambda: beat()["done"] == 1, 30, "the heartbeat to count the job")
        out = subprocess.run([sys.executable, "-m", "hdp_plugin", "daemon", "status", str(spool)], capture_output=True,
                             text=True)
        assert out.returncode == 0, out.stderr
        assert "since it started: 1 done, 0 failed" in out.stdout, out.stdout
        assert "jobs in the spool: 0 queued, 0 running, 1 in done/, 0 in failed/" in out.stdout, out.stdout
        client.stop(spool)
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


# ------------------------------------------------------------------------------------------
# result.json describes the whole model
# ------------------------------------------------------------------------------------------
def _run_job(tmp_path: Path, job: dict, data: Path, name: str = "job") -> tuple[Path, dict]:
    """Publish ``job`` with ``data`` as ``submit`` does, then run it here as a worker does."""
    spool = tmp_path / "spool"
    client.publish(spool, data, job, name=name)
    sp = P.Spool(spool)
    folder = sp.job(P.NEW, name)
    assert execute(folder, name, Context(spool=sp, daemon_id="test")) == "done"
    return folder, json.loads((folder / P.RESULT_FILE).read_text())


def test_result_json_describes_every_member_of_an_ensemble(tmp_path):
    folder, result = _run_job(tmp_path, dict(structure="eskdb", n_members=4, k=2, iterations=20, seed=3),
                              DATA_DIABETES)
    model = load_model(folder / P.MODEL_FILE)
    st = result["structure"]
    trees = [mb.tables for mb in model.members_]
    assert st["kind"] == "eskdb" and st["k"] == 2 and st["members"] == 4 and st["parents"] is None
    assert st["trees"] == sum(t.n_trees for t in trees) and st["cells"] == sum(t.n_observed for t in trees)
    assert st["nodes"] == sum(t.n_nodes for t in trees)
    assert [m["cells"] for m in st["per_member"]] == [t.n_observed for t in trees]
    assert [m["kept"] for m in st["per_member"]] == [len(mb.structure.kept) for mb in model.members_]
    assert st["kept"] == len({mb.attributes[j].name for mb in model.members_ for j in mb.structure.kept})


def test_result_json_names_the_members_shrunk_to_their_cell_cap(tmp_path, monkeypatch):
    from hdp_plugin import config

    folder, result = _run_job(tmp_path, dict(structure="eskdb", n_members=4, k=2, iterations=20, seed=3),
                              DATA_DIABETES)
    assert result["structure"]["cell_limited"] == []
    monkeypatch.setattr(config, "MAX_MODEL_CELLS", 4 * 40)
    folder, result = _run_job(tmp_path, dict(structure="eskdb", n_members=4, k=2, iterations=20, seed=3),
                              DATA_DIABETES, name="capped")
    limited = result["structure"]["cell_limited"]
    assert limited and all(c["max_cells"] == 40 and c["cells"] > 40 for c in limited)
    members = read_model(folder / P.MODEL_FILE).doc["members"]
    assert [c["member"] for c in limited] == [e for e, m in enumerate(members) if "cell_limited" in m["structure"]["info"]]


def test_result_json_of_a_single_network_says_one_member(tmp_path):
    folder, result = _run_job(tmp_path, dict(structure="kdb", k=1, iterations=20), WEATHER)
    st, model = result["structure"], load_model(folder / P.MODEL_FILE)
    assert st["members"] == 1 and "per_member" not in st and st["cells"] == model.tables_.n_observed
    assert set(st["parents"]) == {a.name for a in model.attributes_}



# ------------------------------------------------------------------------------------------
# submit hands Parquet and CSV over small, read as the same data
# ------------------------------------------------------------------------------------------
def _text_table(rows: int) -> pa.Table:
    """Nominal text columns (nulls, non-ASCII and unsorted labels among them), a numeric one, a class."""
    rng = np.random.default_rng(0)
    labels = np.array(["b", "a", "Zeta", "\u00e9t\u00e9", None, "a b", "10", "9"], dtype=object)
    cols = {f"t{j}": pa.array(labels[rng.integers(0, len(labels), rows)]) for j in range(4)}
    cols["x"] = pa.array(np.round(rng.normal(size=rows), 1))
    cols["class"] = pa.array(np.array(["yes", "no", "maybe"])[rng.integers(0, 3, rows)])
    return pa.table(cols)


def _plain_ipc_bytes(table: pa.Table, path: Path) -> int:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    return path.stat().st_size


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_submit_converts_parquet_and_csv_to_a_small_data_arrow_of_the_same_data(tmp_path, fmt):
    table = _text_table(200_000)
    src = tmp_path / f"data.{fmt}"
    if fmt == "parquet":
        pq.write_table(table, src, row_group_size=50_000)
    else:
        pacsv.write_csv(table, src)
    plain = _plain_ipc_bytes(read_dataset_table(src, fmt), tmp_path / "plain.arrow")
    spool = tmp_path / "spool"
    client.publish(spool, src, dict(structure="nb"), name="j")
    arrow = P.Spool(spool).job(P.NEW, "j") / "data.arrow"
    assert arrow.stat().st_size * 4 < plain, (arrow.stat().st_size, plain)
    got, want = read_dataset(arrow), read_dataset(src)
    assert got.attributes == want.attributes and got.class_attribute == want.class_attribute
    assert np.array_equal(got.X, want.X) and np.array_equal(got.y, want.y)


def read_dataset_table(src: Path, fmt: str) -> pa.Table:
    from hdp_plugin.data import arrow

    return arrow.parquet_table(src) if fmt == "parquet" else arrow.csv_table(src)


def test_a_job_submitted_from_parquet_gives_the_model_of_a_direct_fit(tmp_path):
    table = _text_table(3000)
    src = tmp_path / "d.parquet"
    pq.write_table(table, src)
    job = dict(structure="kdb", k=2, iterations=30, seed=4)
    folder, _ = _run_job(tmp_path, job, src)
    got = load_model(folder / P.MODEL_FILE)
    direct = BayesNetClassifier(**P.classifier_params(P.validate_job({"protocol": 1, **job}))).fit(read_dataset(src))
    assert [a.values for a in got.attributes_] == [a.values for a in direct.attributes_]
    assert same_estimates(got, direct)
    assert [m.structure.parents for m in got.members_] == [m.structure.parents for m in direct.members_]
