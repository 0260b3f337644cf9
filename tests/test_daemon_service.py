"""The daemon as real processes on real files: many producers, kill -9, bad jobs, cancel, status, stop.

Every daemon here is ``python -m hdp_plugin daemon run`` in its own process group; jobs use small
data and few iterations so the file stays quick on two shared cores.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from hdp_plugin import BayesNetClassifier, read_dataset
from hdp_plugin.daemon import client
from hdp_plugin.daemon import protocol as P
from hdp_plugin.model.modelfile import load_model, read_model_file
from reference import same_estimates

pytestmark = pytest.mark.skipif(os.name != "posix", reason="uses POSIX signals and process groups")

DATA = Path(__file__).parent / "data"
WEATHER = DATA / "weather.nominal.arff"
VOTE = DATA / "vote.arff"


# ------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------
def _cmd(*args) -> list[str]:
    return [sys.executable, "-m", "hdp_plugin", "daemon", *map(str, args)]


def wait_until(predicate, timeout: float, what: str, step: float = 0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(step)


class Daemon:
    """One ``run`` process (and its workers) in a process group of its own."""

    def __init__(self, spool: Path, *args, log: Path):
        self.spool = spool
        self.log = log
        self._fh = open(log, "ab")
        self.proc = subprocess.Popen(_cmd("run", spool, "--poll", "0.05", *args), stdout=subprocess.DEVNULL,
                                     stderr=self._fh, start_new_session=True)

    def heartbeat(self) -> dict | None:
        for d in client.daemons(self.spool):
            if d.get("pid") == self.proc.pid:
                return d
        return None

    def wait_ready(self, workers: int = 1, timeout: float = 60) -> dict:
        def ready():
            assert self.proc.poll() is None, f"daemon exited early:\n{self.log.read_text()}"
            hb = self.heartbeat()
            return hb if hb and hb.get("state") == "running" and hb.get("ready_workers") == workers else None

        return wait_until(ready, timeout, "the daemon's workers")

    def kill9(self, *, group: bool = True) -> None:
        if group:
            os.killpg(self.proc.pid, signal.SIGKILL)
        else:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def wait(self, timeout: float = 60) -> int:
        return self.proc.wait(timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        try:  # no stray workers either
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._fh.close()


@contextmanager
def daemon(spool: Path, *args, log: Path, workers: int = 1):
    d = Daemon(spool, "--workers", workers, *args, log=log)
    try:
        d.wait_ready(workers)
        yield d
    finally:
        d.close()


class Watcher(threading.Thread):
    """Looks at done/ and failed/ all the time: whatever appears there must already be complete."""

    def __init__(self, spool: Path):
        super().__init__(daemon=True)
        self.spool = P.Spool(spool)
        self.seen: dict[str, str] = {}
        self.problems: list[str] = []
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            for state, needed in ((P.DONE, (P.RESULT_FILE, P.MODEL_FILE)), (P.FAILED, (P.ERROR_FILE,))):
                for name in self.spool.names(state):
                    key = f"{state}/{name}"
                    if key in self.seen:
                        continue
                    folder = self.spool.job(state, name)
                    self.seen[key] = state
                    present = set(os.listdir(folder))
                    for f in needed:
                        if f not in present:
                            self.problems.append(f"{key} appeared without {f}")
                    if state == P.DONE and P.MODEL_FILE in present:
                        try:
                            read_model_file(folder / P.MODEL_FILE)
                        except Exception as exc:  # noqa: BLE001 - report any failure
                            self.problems.append(f"{key}: unreadable model: {exc}")
                    doc = P.read_json(folder / needed[0])
                    if doc is None or doc.get("job") != name:
                        self.problems.append(f"{key}: {needed[0]} incomplete")
                    if any(n.endswith(".tmp") for n in present):
                        self.problems.append(f"{key}: temporary files left: {sorted(present)}")
            time.sleep(0.005)

    def stop(self) -> list[str]:
        self.halt.set()
        self.join(5)
        return self.problems


_direct_cache: dict = {}


def direct_model(data: Path, job: dict) -> BayesNetClassifier:
    """What BayesNetClassifier gives for the same data, settings and seed."""
    full = P.validate_job({"protocol": 1, **job})
    key = (str(data), json.dumps(full, sort_keys=True))
    if key not in _direct_cache:
        ds = read_dataset(data, class_attribute=full["class_attribute"])
        _direct_cache[key] = BayesNetClassifier(**P.classifier_params(full)).fit(ds)
    return _direct_cache[key]


def assert_same_model(path: Path, expected: BayesNetClassifier) -> None:
    got = load_model(path)
    assert same_estimates(got, expected)
    assert [(m.structure.parents, m.structure.kept) for m in got.members_] == [
        (m.structure.parents, m.structure.kept) for m in expected.members_]


def publish_raw(spool: Path, name: str, files: dict) -> None:
    """A hand-made job folder: built in tmp/, published by one rename (as a producer must)."""
    sp = P.Spool(spool).create()
    tmp = sp.job(P.TMP, name)
    tmp.mkdir()
    for fname, content in files.items():
        if isinstance(content, Path) and fname.startswith("->"):
            os.symlink(content, tmp / fname[2:])
        elif isinstance(content, Path):
            shutil.copyfile(content, tmp / fname)
        else:
            (tmp / fname).write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    os.rename(tmp, sp.job(P.NEW, name))


def final_names(spool: Path, state: str) -> list[str]:
    return P.Spool(spool).names(state)


# ------------------------------------------------------------------------------------------
# 50 jobs, several producers, two workers
# ------------------------------------------------------------------------------------------
def _fifty_specs():
    kinds = [dict(structure="nb"), dict(structure="tan"), dict(structure="kdb", k=1), dict(structure="kdb", k=2),
             dict(structure="skdb", k=2), dict(structure="kdb", k=2, estimator="m-estimate")]
    specs = []
    for i in range(50):
        data = WEATHER if i % 2 else VOTE
        job = dict(kinds[i % len(kinds)], iterations=30, seed=i, client=f"producer-{i % 5}")
        specs.append((f"job-{i:02d}", data, job))
    return specs


def test_fifty_jobs_from_concurrent_producers_each_done_once_and_equal_to_a_direct_fit(tmp_path):
    spool = tmp_path / "spool"
    P.Spool(spool).create()
    specs = _fifty_specs()
    with daemon(spool, log=tmp_path / "daemon.log", workers=2):
        watcher = Watcher(spool)
        watcher.start()
        errors = []

        def producer(mine):
            try:
                for name, data, job in mine:
                    client.publish(spool, data, job, name=name)
            except Exception as exc:  # noqa: BLE001
                errors.append(exc)

        threads = [threading.Thread(target=producer, args=(specs[p::5],)) for p in range(5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        wait_until(lambda: len(final_names(spool, P.DONE)) + len(final_names(spool, P.FAILED)) >= 50, 120,
                   "50 finished jobs")
        problems = watcher.stop()
    assert problems == []
    assert final_names(spool, P.DONE) == sorted(n for n, _, _ in specs)  # each exactly once, no "~1" copies
    for state in (P.FAILED, P.NEW, P.TMP):
        assert final_names(spool, state) == []
    assert P.Spool(spool).claimed() == {}
    for name, data, job in specs:
        folder = P.Spool(spool).job(P.DONE, name)
        result = json.loads((folder / P.RESULT_FILE).read_text())
        assert result["status"] == "done" and result["attempt"] == 1 and result["client"] == job["client"]
        assert_same_model(folder / P.MODEL_FILE, direct_model(data, job))
    assert final_names(spool, P.PROGRESS) == [] and final_names(spool, P.DAEMONS) == []


def test_a_job_with_no_settings_trains_the_default_eskdb(tmp_path):
    """The defaults end to end through a real daemon: ESKDB-5 x20 at auto iterations, stochastic MDL."""
    spool = tmp_path / "spool"
    data = DATA / "weather.numeric.arff"
    with daemon(spool, log=tmp_path / "daemon.log"):
        client.publish(spool, data, {}, name="defaults")
        folder = P.Spool(spool).job(P.DONE, "defaults")
        wait_until(lambda: (folder / P.RESULT_FILE).exists() or P.Spool(spool).names(P.FAILED), 120, "the job")
    result = json.loads((folder / P.RESULT_FILE).read_text())
    assert result["job_settings"]["structure"] == "eskdb" and result["job_settings"]["iterations"] is None
    ran = result["sampler"]["iterations"]
    assert ran <= 1000 and result["sampler"]["burn_in"] == ran // 10
    model = load_model(folder / P.MODEL_FILE)
    assert len(model.members_) == 20 and model.k == 5 and model.iterations == ran
    assert model.discretization_ == "stochastic-gain"
    direct = direct_model(data, {})
    for got, expected in zip(model.members_, direct.members_, strict=True):
        assert np.array_equal(got.tables.log_probs, expected.tables.log_probs)


def test_a_daemon_model_equals_hdp_bnc_train(tmp_path):
    """The daemon's model and `hdp-bnc train`'s are the same tables (same data, settings and seed)."""
    spool = tmp_path / "spool"
    job = dict(structure="kdb", k=2, iterations=40, seed=7)
    client.publish(spool, VOTE, job, name="v")
    d = Daemon(spool, "--idle-exit", "0.5", log=tmp_path / "daemon.log")
    assert d.wait(90) == 0
    trained = tmp_path / "cli.arrow"
    done = subprocess.run([sys.executable, "-m", "hdp_plugin", "train", VOTE, "-o", trained, "-s", "kdb", "-k", "2",
                           "-i", "40", "--seed", "7", "-q"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert_same_model(P.Spool(spool).job(P.DONE, "v") / P.MODEL_FILE, load_model(trained))


def test_an_eskdb_job_gives_the_ensemble_of_a_direct_fit(tmp_path):
    """An ESKDB job (numeric data: every member cuts it its own way) equals the Python API's fit."""
    spool = tmp_path / "spool"
    diabetes = DATA / "diabetes.arff"
    client.publish(spool, diabetes, dict(structure="eskdb", n_members=3, k=2, iterations=30, seed=5), name="e")
    d = Daemon(spool, "--idle-exit", "0.5", log=tmp_path / "daemon.log")
    assert d.wait(90) == 0
    got = load_model(P.Spool(spool).job(P.DONE, "e") / P.MODEL_FILE)
    data = read_dataset(diabetes)
    direct = BayesNetClassifier(structure="eskdb", n_members=3, k=2, iterations=30, random_state=5).fit(data)
    assert len(got.members_) == 3
    for a, b in zip(got.members_, direct.members_):
        assert a.seed == b.seed and a.attributes == b.attributes and a.structure == b.structure
        assert np.array_equal(a.tables.log_probs, b.tables.log_probs)
    assert np.array_equal(got.predict_proba(data), direct.predict_proba(data))


def test_an_eskdb_result_records_the_k_its_model_uses(tmp_path):
    """k=64 on four attributes: result.json's k is the K the members chose within (3, the attributes less
    one), as the model file and ``hdp-bnc info`` have it; each member's own k is its model's; the job's
    settings keep the k asked."""
    spool = tmp_path / "spool"
    client.publish(spool, WEATHER, dict(structure="eskdb", n_members=3, k=64, iterations=20, seed=1), name="k64")
    d = Daemon(spool, "--idle-exit", "0.5", log=tmp_path / "daemon.log")
    assert d.wait(90) == 0
    folder = P.Spool(spool).job(P.DONE, "k64")
    result = json.loads((folder / P.RESULT_FILE).read_text())
    assert result["job_settings"]["k"] == 64
    assert result["structure"]["k"] == 3, result["structure"]
    members = read_model_file(folder / P.MODEL_FILE)[0]["members"]
    assert {m["structure"]["info"]["max_k"] for m in members} == {3}
    assert [m["k"] for m in result["structure"]["per_member"]] == [m["structure"]["k"] for m in members]
    r = subprocess.run([sys.executable, "-m", "hdp_plugin", "info", str(folder / P.MODEL_FILE)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and "at most K = 3 attribute parents" in r.stdout.replace("\n" + " " * 15, " "), r.stdout + r.stderr


# ------------------------------------------------------------------------------------------
# kill -9 at several points
# ------------------------------------------------------------------------------------------
def test_kill_9_at_several_points_loses_nothing_and_does_nothing_twice(tmp_path):
    spool = tmp_path / "spool"
    sp = P.Spool(spool)
    # a few seconds of sampling each on one thread: many progress updates (every 0.25 s) in which the
    # test can catch a job in the middle of sampling, and short enough to rerun and fit again directly
    jobs = {f"long-{i}": dict(structure="kdb", k=4, iterations=30_000, seed=i) for i in range(4)}
    for name, job in jobs.items():
        client.publish(spool, VOTE, job, name=name)
    watcher = Watcher(spool)
    watcher.start()
    log = tmp_path / "daemon.log"

    def sampling(first_attempts_only: bool = False):
        """A job that is sampling; optionally only while every running job is on its first attempt
        (so that no job can die three times in this test and end in failed/)."""
        found = None
        for names in sp.claimed().values():
            for n in names:
                prog = P.read_json(sp.progress(n))
                if first_attempts_only and (not prog or prog["attempt"] != 1):
                    return None
                if prog and prog["phase"] == "sampling" and prog["iteration"] > 0:
                    found = n
        return found

    # point 1: the whole process group dies in the middle of sampling (power cut)
    d = Daemon(spool, "--workers", "2", "--threads", "1", log=log)
    killed_1 = wait_until(sampling, 60, "a job sampling")
    d.kill9(group=True)
    assert sp.claimed() and len(final_names(spool, P.DONE)) < len(jobs)

    # point 2: only the supervisor dies; its orphaned workers must notice and stop on their own
    d = Daemon(spool, "--workers", "2", "--threads", "1", log=log)
    hb = d.wait_ready(2)
    wait_until(lambda: sampling(True) not in (None, killed_1), 60, "first attempts sampling")
    orphans = hb["worker_pids"]
    d.kill9(group=False)
    wait_until(lambda: not any(P.pid_alive(p) for p in orphans), 20, "orphaned workers to exit")

    # point 3: the group dies right after a job was published into done/
    d = Daemon(spool, "--workers", "2", "--threads", "1", log=log)
    before = len(final_names(spool, P.DONE))
    wait_until(lambda: len(final_names(spool, P.DONE)) > before, 60, "one more finished job", step=0.002)
    d.kill9(group=True)

    # a last daemon finishes the work and exits when idle
    d = Daemon(spool, "--workers", "2", "--threads", "1", "--idle-exit", "0.5", log=log)
    assert d.wait(120) == 0, log.read_text()
    problems = watcher.stop()
    assert problems == []
    assert final_names(spool, P.DONE) == sorted(jobs), log.read_text()
    assert final_names(spool, P.FAILED) == [] and final_names(spool, P.NEW) == [] and sp.claimed() == {}
    attempts = {}
    for name, job in jobs.items():
        folder = sp.job(P.DONE, name)
        result = json.loads((folder / P.RESULT_FILE).read_text())
        attempts[name] = result["attempt"]
        assert not any(n.endswith(".tmp") for n in os.listdir(folder))
        assert_same_model(folder / P.MODEL_FILE, direct_model(VOTE, job))  # a retry gives the same model
    assert attempts[killed_1] >= 2
    assert final_names(spool, P.DAEMONS) == [] and final_names(spool, P.PROGRESS) == []


def test_a_job_whose_daemon_always_dies_fails_after_three_attempts(tmp_path):
    spool = tmp_path / "spool"
    sp = P.Spool(spool).create()
    # two jobs left in claimed/ by a daemon that no longer exists: one on its third attempt
    ghost = sp.dir(P.CLAIMED) / "ghost-1-000000"
    ghost.mkdir()
    for name, lost in (("doomed", 2), ("lucky", 0)):
        folder = ghost / name
        folder.mkdir()
        shutil.copyfile(WEATHER, folder / "data.arff")
        (folder / "job.json").write_text(json.dumps({"protocol": 1, "structure": "kdb", "k": 1, "iterations": 20}))
        (folder / ".model.arrow.123.tmp").write_bytes(b"half a model")
        if lost:  # what the dead daemon wrote: sealed with the spool's key (a producer's would not count)
            P.write_attempts(folder, P.attempts_key(sp.attempts_key()), lost, [])
    (sp.dir(P.DAEMONS) / "ghost-1-000000.json").write_text(json.dumps({"daemon": "ghost-1-000000", "pid": 1}))
    d = Daemon(spool, "--idle-exit", "0.5", log=tmp_path / "daemon.log")
    assert d.wait(90) == 0
    err = json.loads((sp.job(P.FAILED, "doomed") / P.ERROR_FILE).read_text())
    assert err["code"] == "too_many_attempts" and "3 times" in err["message"]
    assert not (sp.job(P.FAILED, "doomed") / ".model.arrow.123.tmp").exists()
    result = json.loads((sp.job(P.DONE, "lucky") / P.RESULT_FILE).read_text())
    assert result["attempt"] == 2
    assert sp.claimed() == {} and final_names(spool, P.DAEMONS) == []


# ------------------------------------------------------------------------------------------
# bad jobs
# ------------------------------------------------------------------------------------------
def test_a_catalogue_of_bad_jobs_fails_each_with_its_code_and_the_daemon_keeps_serving(tmp_path):
    spool = tmp_path / "spool"
    sp = P.Spool(spool).create()
    ok = {"protocol": 1, "structure": "kdb", "k": 1, "iterations": 20}
    wide = "@relation wide\n@attribute a {" + ",".join(f"v{i}" for i in range(30)) + "}\n@attribute c {x,y}\n@data\n"
    wide += "".join(f"v{i},{'xy'[i % 2]}\n" for i in range(30))
    big = (WEATHER.read_text() + "%" + "x" * (1200 * 1024) + "\n").encode()
    catalogue = {
        "malformed-json": ({"job.json": b'{"protocol": 1, "k": ', "data.arff": WEATHER}, "bad_job", None),
        "not-utf8": ({"job.json": b'{"protocol": 1, "client": "\xff"}', "data.arff": WEATHER}, "bad_job", None),
        "wrong-type": ({"job.json": {**ok, "k": "two"}, "data.arff": WEATHER}, "bad_job", "k"),
        "unknown-field": ({"job.json": {**ok, "threads": 3}, "data.arff": WEATHER}, "bad_job", "threads"),
        "no-job-json": ({"data.arff": WEATHER}, "bad_job", None),
        "missing-data": ({"job.json": ok}, "bad_job", None),
        "corrupt-arff": ({"job.json": ok, "data.arff": DATA / "bad" / "unclosed_list.arff"}, "bad_data", None),
        "garbage-arrow": ({"job.json": ok, "data.arrow": DATA / "bad" / "garbage.arrow"}, "bad_data", None),
        "numeric-class": ({"job.json": ok, "data.arff": DATA / "bad" / "numeric_class.arff"}, "bad_data", None),
        "one-class": ({"job.json": ok, "data.arff": DATA / "bad" / "one_class.arff"}, "bad_data", None),
        "unknown-class": ({"job.json": {**ok, "class_attribute": "nope"}, "data.arff": WEATHER}, "bad_data", None),
        "path-traversal": ({"job.json": {**ok, "data": "../../data.arff"}, "data.arff": WEATHER}, "bad_job", "data"),
        "symlink-out": ({"job.json": ok, "->data.arff": VOTE.resolve()}, "bad_job", None),
        "too-big": ({"job.json": ok, "data.arff": big}, "too_large", None),
        "too-many-values": ({"job.json": ok, "data.arff": wide.encode()}, "too_large", None),
    }
    # a job still being written: in tmp/, never published; and a hidden entry in new/
    partial = sp.job(P.TMP, "partial")
    partial.mkdir()
    (partial / "job.json").write_text(json.dumps(ok))
    (partial / "data.arff").write_bytes(WEATHER.read_bytes()[:100])
    (sp.dir(P.NEW) / ".hidden").mkdir()
    with daemon(spool, "--max-input-mb", "1", "--max-cardinality", "20", log=tmp_path / "daemon.log"):
        watcher = Watcher(spool)
        watcher.start()
        for name, (files, _, _) in catalogue.items():
            publish_raw(spool, name, files)
        (sp.dir(P.NEW) / "plain-file").write_text("not a folder")
        wait_until(lambda: len(final_names(spool, P.FAILED)) == len(catalogue) + 1, 60, "every bad job to fail")
        client.publish(spool, WEATHER, {"structure": "kdb", "k": 1, "iterations": 20}, name="good-after")
        wait_until(lambda: final_names(spool, P.DONE) == ["good-after"], 30, "a good job after the bad ones")
        assert watcher.stop() == []
        assert sorted(os.listdir(partial)) == ["data.arff", "job.json"]  # untouched
        assert (sp.dir(P.NEW) / ".hidden").is_dir()
    for name, (_, code, field) in catalogue.items():
        err = json.loads((sp.job(P.FAILED, name) / P.ERROR_FILE).read_text())
        assert (err["code"], err.get("field")) == (code, field), (name, err)
        assert err["message"] and err["job"] == name and err["protocol"] == 1
        assert not (sp.job(P.FAILED, name) / P.MODEL_FILE).exists()
    err = json.loads((sp.job(P.FAILED, "plain-file") / P.ERROR_FILE).read_text())
    assert err["code"] == "bad_job" and "not a job folder" in err["message"]
    assert (sp.job(P.FAILED, "plain-file") / "plain-file").read_text() == "not a folder"
    msg = json.loads((sp.job(P.FAILED, "symlink-out") / P.ERROR_FILE).read_text())["message"]
    assert "leaves the job folder" in msg


# ------------------------------------------------------------------------------------------
# progress, cancel, status, stop, signals
# ------------------------------------------------------------------------------------------
def _status(spool: Path, *args) -> tuple[int, dict]:
    done = subprocess.run(_cmd("status", spool, "--json", *args), capture_output=True, text=True, timeout=60)
    return done.returncode, json.loads(done.stdout)


def test_progress_cancel_and_status_tell_the_truth(tmp_path):
    spool = tmp_path / "spool"
    sp = P.Spool(spool).create()
    code, doc = _status(spool)
    assert code == 3 and doc["daemons"] == [] and doc["counts"]["new"] == 0
    long_job = dict(structure="kdb", k=5, iterations=2_000_000, seed=1)
    with daemon(spool, "--threads", "1", log=tmp_path / "daemon.log") as d:
        client.publish(spool, VOTE, long_job, name="long")
        client.publish(spool, VOTE, long_job, name="queued")
        first = wait_until(lambda: (P.read_json(sp.progress("long")) or {}).get("iteration", 0) > 0 and
                           P.read_json(sp.progress("long")), 60, "progress of the long job")
        assert first["phase"] == "sampling" and first["total"] == 2_000_000 and first["job"] == "long"
        later = wait_until(lambda: (P.read_json(sp.progress("long")) or {}).get("iteration", 0) > first["iteration"]
                           and P.read_json(sp.progress("long")), 30, "the iteration to advance")
        assert later["iteration"] > first["iteration"]
        code, doc = _status(spool)
        assert code == 0
        (live,) = doc["daemons"]
        assert live["alive"] and live["pid"] == d.proc.pid and live["state"] == "running"
        assert doc["counts"] == {"tmp": 0, "new": 1, "claimed": 1, "done": 0, "failed": 0}
        assert [r["job"] for r in doc["running"]] == ["long"] and doc["running"][0]["progress"]["total"] == 2_000_000
        assert doc["queued"] == ["queued"]
        # cancel the queued job first (it must never run), then the running one
        assert subprocess.run(_cmd("cancel", spool, "queued"), timeout=60).returncode == 0
        asked = time.monotonic()
        assert subprocess.run(_cmd("cancel", spool, "long"), timeout=60).returncode == 0
        wait_until(lambda: sp.job(P.FAILED, "long").exists(), 20, "the cancelled job in failed/")
        assert time.monotonic() - asked < 10
        wait_until(lambda: sp.job(P.FAILED, "queued").exists(), 20, "the queued job cancelled")
        for name in ("long", "queued"):
            err = json.loads((sp.job(P.FAILED, name) / P.ERROR_FILE).read_text())
            assert err["code"] == "cancelled", err
        # the markers go just after the jobs are published
        wait_until(lambda: final_names(spool, P.CANCEL) == [] and final_names(spool, P.PROGRESS) == [], 20,
                   "the cancel markers and progress files removed")
        # the daemon keeps serving, and submit --wait prints where the model landed
        done = subprocess.run(_cmd("submit", spool, WEATHER, "-s", "kdb", "-k", "1", "-i", "20", "--name", "waited", "--wait",
                                   "--timeout", "60"), capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, done.stderr
        model = Path(done.stdout.strip())
        assert model == sp.job(P.DONE, "waited") / P.MODEL_FILE and model.is_file()
        code, doc = _status(spool, "waited")
        assert code == 0 and doc["state"] == "done" and doc["result"]["job"] == "waited"
        # status after kill -9: the heartbeat is still there but the daemon is reported dead
        d.kill9(group=True)
        code, doc = _status(spool)
        assert code == 3 and len(doc["daemons"]) == 1 and not doc["daemons"][0]["alive"]
        text = subprocess.run(_cmd("status", spool), capture_output=True, text=True, timeout=60).stdout
        assert "dead" in text and "no live daemon" in text
        # a job left in claimed/ by the dead daemon is reported as such
        client.publish(spool, WEATHER, {"structure": "kdb", "k": 1, "iterations": 20}, name="orphan")
        P.move(sp.job(P.NEW, "orphan"), sp.job(P.CLAIMED, "orphan", doc["daemons"][0]["daemon"]))
        code, doc = _status(spool)
        assert doc["running"] == [{"job": "orphan", "daemon": doc["daemons"][0]["daemon"], "daemon_alive": False,
                                   "progress": None, "cancel_requested": False}]
        text = subprocess.run(_cmd("status", spool), capture_output=True, text=True, timeout=60).stdout
        assert "its daemon is dead" in text


def test_stop_command_and_sigterm_put_running_work_back(tmp_path):
    spool = tmp_path / "spool"
    sp = P.Spool(spool).create()
    log = tmp_path / "daemon.log"
    with daemon(spool, "--threads", "1", "--grace", "0.2", log=log) as d:
        client.publish(spool, VOTE, dict(structure="kdb", k=5, iterations=2_000_000), name="endless")
        wait_until(lambda: (P.read_json(sp.progress("endless")) or {}).get("iteration", 0) > 0, 60, "sampling")
        d.proc.send_signal(signal.SIGTERM)
        assert d.wait(30) == 0
    assert final_names(spool, P.NEW) == ["endless"]  # put back, untouched, no attempt counted
    assert sorted(os.listdir(sp.job(P.NEW, "endless"))) == ["data.arff", "job.json"]
    assert sp.claimed() == {} and final_names(spool, P.DAEMONS) == [] and final_names(spool, P.PROGRESS) == []
    # `stop` (the portable way): the daemon exits 0, its lock and heartbeat go
    with daemon(spool, "--threads", "1", "--grace", "0.2", log=log) as d:
        wait_until(lambda: sp.claimed().get(d.heartbeat()["daemon"]), 30, "the job claimed again")
        done = subprocess.run(_cmd("stop", spool, "--timeout", "60"), capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, done.stderr
        assert "stopped" in done.stderr
        assert d.wait(10) == 0
    assert final_names(spool, P.NEW) == ["endless"] and final_names(spool, P.DAEMONS) == []
    done = subprocess.run(_cmd("stop", spool), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "no live daemon" in done.stderr


def test_hdp_bnc_daemon_spelling(tmp_path):
    """The installed ``hdp-bnc`` script (beside this python, as in a venv that is not activated) runs the
    daemon's commands."""
    exe = shutil.which("hdp-bnc", path=str(Path(sys.executable).parent)) or shutil.which("hdp-bnc")
    if exe is None:
        pytest.skip("no hdp-bnc script beside this python or on PATH (the package is not installed)")
    spool = tmp_path / "spool"
    P.Spool(spool).create()
    done = subprocess.run([exe, "daemon", "status", spool, "--json"], capture_output=True, text=True)
    assert done.returncode == 3 and json.loads(done.stdout)["daemons"] == []


def test_a_worker_killed_mid_job_is_replaced_and_the_job_retried(tmp_path):
    """What the out-of-memory killer does: the daemon survives, the job runs again (attempt 2)."""
    spool = tmp_path / "spool"
    sp = P.Spool(spool).create()
    job = dict(structure="kdb", k=5, iterations=30_000, seed=5)  # a few seconds of sampling on one thread
    with daemon(spool, "--threads", "1", log=tmp_path / "daemon.log") as d:
        client.publish(spool, VOTE, job, name="victim")
        prog = wait_until(lambda: (P.read_json(sp.progress("victim")) or {}).get("iteration", 0) > 0
                          and P.read_json(sp.progress("victim")), 60, "sampling")
        os.kill(prog["pid"], signal.SIGKILL)
        wait_until(lambda: sp.job(P.DONE, "victim").exists(), 60, "the retried job")
        assert d.proc.poll() is None
        # the heartbeat is rewritten every few seconds: wait for one that shows the replacement
        hb = wait_until(lambda: (h := d.heartbeat() or {}).get("ready_workers") == 1
                        and prog["pid"] not in h.get("worker_pids", [prog["pid"]]) and h, 30, "a new worker")
        assert len(hb["worker_pids"]) == 1
    result = json.loads((sp.job(P.DONE, "victim") / P.RESULT_FILE).read_text())
    assert result["attempt"] == 2
    attempts = json.loads((sp.job(P.DONE, "victim") / P.ATTEMPTS_FILE).read_text())
    assert attempts["lost"] == 1 and "signal 9" in attempts["history"][0]["reason"]
    assert_same_model(sp.job(P.DONE, "victim") / P.MODEL_FILE, direct_model(VOTE, job))


def test_two_daemons_on_one_spool_never_run_a_job_twice(tmp_path):
    spool = tmp_path / "spool"
    sp = P.Spool(spool).create()
    jobs = {f"j{i:02d}": dict(structure="kdb", k=3, iterations=300, seed=i) for i in range(16)}
    for name, job in jobs.items():
        client.publish(spool, VOTE if int(name[1:]) % 2 else WEATHER, job, name=name)
    with daemon(spool, "--threads", "1", log=tmp_path / "a.log") as a:
        wait_until(lambda: sp.claimed(), 30, "a first claim")
        with daemon(spool, "--threads", "1", log=tmp_path / "b.log") as b:  # starts (and recovers) meanwhile
            wait_until(lambda: len(final_names(spool, P.DONE)) == len(jobs), 90, "every job")
            ran = {}
            for name in jobs:
                ran.setdefault(json.loads((sp.job(P.DONE, name) / P.RESULT_FILE).read_text())["daemon"], []).append(name)
            ids = {a.heartbeat()["daemon"], b.heartbeat()["daemon"]}
    assert set(ran) <= ids and sum(map(len, ran.values())) == len(jobs)
    assert final_names(spool, P.DONE) == sorted(jobs) and final_names(spool, P.FAILED) == []
    for name, job in jobs.items():
        result = json.loads((sp.job(P.DONE, name) / P.RESULT_FILE).read_text())
        assert result["attempt"] == 1
        assert_same_model(sp.job(P.DONE, name) / P.MODEL_FILE,
                          direct_model(VOTE if int(name[1:]) % 2 else WEATHER, job))


def test_stop_right_after_start_stops_the_daemon_at_once(tmp_path):
    """'stop' a second after a daemon started, while its worker still compiles
    (HDP_NUMBA_CACHE=0 makes the warm-up long), stops it within seconds, not after the warm-up, and
    'stopped' is true when it says so: the process has exited."""
    spool = tmp_path / "spool"
    P.Spool(spool).create()
    log = tmp_path / "daemon.log"
    fh = open(log, "ab")
    proc = subprocess.Popen(_cmd("run", spool, "--poll", "0.05"), stdout=subprocess.DEVNULL, stderr=fh,
                            start_new_session=True, env={**os.environ, "HDP_NUMBA_CACHE": "0"})
    try:
        wait_until(lambda: client.daemons(spool), 60, "the daemon's heartbeat")
        time.sleep(1)
        t0 = time.monotonic()
        done = subprocess.run(_cmd("stop", spool, "--timeout", "60"), capture_output=True, text=True, timeout=90)
        assert done.returncode == 0 and "stopped" in done.stderr, done.stderr
        assert proc.wait(10) == 0
        assert time.monotonic() - t0 < 10, f"stopped after {time.monotonic() - t0:.1f} s"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        fh.close()
    assert final_names(spool, P.DAEMONS) == []


def test_stop_before_the_daemon_has_taken_its_lock_still_stops_it(tmp_path):
    """A 'stop' issued while a daemon is still starting (no lock or heartbeat yet)
    stops it as soon as it looks; it claims nothing. A daemon started after the stop is not stopped."""
    spool = tmp_path / "spool"
    P.Spool(spool).create()
    client.publish(spool, WEATHER, {"structure": "kdb", "k": 1, "iterations": 20}, name="queued")
    log = tmp_path / "daemon.log"
    fh = open(log, "ab")
    proc = subprocess.Popen(_cmd("run", spool, "--poll", "0.05"), stdout=subprocess.DEVNULL, stderr=fh,
                            start_new_session=True)
    try:
        assert client.daemons(spool) == []  # not started yet: no lock, no heartbeat
        assert client.stop(spool, wait_seconds=None) == []
        assert proc.wait(60) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        fh.close()
    assert final_names(spool, P.NEW) == ["queued"] and final_names(spool, P.DONE) == []
    assert "stop requested" in log.read_text()
    d = Daemon(spool, "--idle-exit", "0.5", log=log)  # started after the stop: it serves
    try:
        assert d.wait(90) == 0
    finally:
        d.close()
    assert final_names(spool, P.DONE) == ["queued"]


def test_submit_wait_says_once_that_no_daemon_serves_the_spool_and_goes_on_waiting(tmp_path):
    """'submit --wait' with no daemon says so once on stderr (with how to start one),
    keeps waiting, and finishes when a daemon appears; --no-daemon-timeout gives up, the job kept."""
    spool = tmp_path / "spool"
    P.Spool(spool).create()
    # --no-daemon-timeout on a spool of its own, meanwhile: no daemon ever serves that one
    lonely = tmp_path / "lonely"
    P.Spool(lonely).create()
    t0 = time.monotonic()
    gives_up = subprocess.Popen(_cmd("submit", lonely, WEATHER, "-s", "kdb", "-k", "1", "--name", "w2", "--wait",
                                     "--no-daemon-timeout", "6", "--quiet"), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    err = tmp_path / "submit.err"
    with open(err, "wb") as fh:
        sub = subprocess.Popen(_cmd("submit", spool, WEATHER, "-s", "kdb", "-k", "1", "-i", "20", "--name", "w1",
                                    "--wait", "--timeout", "120"), stdout=subprocess.PIPE, stderr=fh, text=True)
        try:
            wait_until(lambda: "no daemon is serving" in err.read_text(), 30, "the warning")
            text = err.read_text()
            assert f"hdp-bnc daemon run {spool}" in text and "job w1 waits in new/" in text, text
            time.sleep(2)  # said once, not every poll
            assert err.read_text().count("no daemon is serving") == 1 and sub.poll() is None
            with daemon(spool, log=tmp_path / "daemon.log"):
                out, _ = sub.communicate(timeout=90)
        finally:
            if sub.poll() is None:
                sub.kill()
                sub.wait(10)
    assert sub.returncode == 0 and out.strip() == str(P.Spool(spool).job(P.DONE, "w1") / P.MODEL_FILE)
    text = err.read_text()
    assert text.count("no daemon is serving") == 1 and f"a daemon serves {spool} now" in text, text
    try:
        _, gave_up = gives_up.communicate(timeout=120)
    finally:
        if gives_up.poll() is None:
            gives_up.kill()
            gives_up.wait(10)
    assert gives_up.returncode == 1 and "no daemon served" in gave_up and "--no-daemon-timeout" in gave_up, gave_up
    assert "job w2 stays queued in new/" in gave_up and "Traceback" not in gave_up
    assert gave_up.count("warning: no daemon is serving") == 1  # after 5 s, even with --quiet
    assert time.monotonic() - t0 < 60 and final_names(lonely, P.NEW) == ["w2"]
    r = subprocess.run(_cmd("submit", spool, WEATHER, "--no-daemon-timeout", "1"), capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "needs --wait" in r.stderr


def test_a_free_daemon_looks_at_new_soon_after_a_job_and_every_poll_later(tmp_path):
    """The next job of a cross-validation follows the last at once: a daemon with a free worker waits
    a tenth of the time since its last job before listing new/ again (config.BRISK_POLL_SECONDS at
    least, --poll at most); with every worker busy or once stopping, --poll (a worker's message ends
    the wait anyway)."""
    from hdp_plugin import config
    from hdp_plugin.daemon.service import Daemon, Settings

    d = Daemon(tmp_path / "spool", Settings(poll=0.5))
    d.pool.start(1, 1)
    try:
        deadline = time.monotonic() + 120
        while not d.pool.idle() and time.monotonic() < deadline:
            d.pool.wait(0.2)  # the worker's warm-up, then its ready message
        assert d.pool.idle(), "the worker never said it was ready"
        now = time.time()
        d._idle_since = now
        assert d._next_look(now) == config.BRISK_POLL_SECONDS
        assert d._next_look(now + 1.0) == pytest.approx(0.1)
        assert d._next_look(now + 60) == 0.5
        d.stop_event.set()
        assert d._next_look(now) == 0.5
    finally:
        d.pool.stop()


def test_a_nudge_from_a_client_ends_the_daemons_wait_at_once(tmp_path):
    """A client that publishes a job nudges the daemons of its host through their heartbeat's wake_port
    (hdp_plugin.daemon.wake): the daemon's wait for workers or its next look at new/ ends there, not
    after its --poll; a real daemon writes the port and listens on it."""
    from hdp_plugin.daemon.service import Daemon as InProcess
    from hdp_plugin.daemon.service import Settings
    from hdp_plugin.daemon.wake import WakeSocket

    d = InProcess(tmp_path / "spool", Settings(poll=120))
    d.spool.create()
    d.waker = WakeSocket()
    try:
        assert isinstance(d.waker.port, int)
        d.beat(force=True)
        hb = client.daemons(d.spool.root)[0]
        assert hb["wake_port"] == d.waker.port
        waiter = threading.Thread(target=d.pool.wait, args=(120, d.waker), daemon=True)  # no workers: the socket only
        waiter.start()
        time.sleep(0.2)
        assert waiter.is_alive()  # nothing to end the wait yet
        client.publish(d.spool.root, WEATHER, {"structure": "nb"}, name="nudged")
        waiter.join(30)
        assert not waiter.is_alive(), "publishing a job did not end the daemon's wait"
        assert d.waker.drain() == 0  # the nudge was accepted and closed by the wait
    finally:
        d.waker.close()
    # a real daemon: the port in its heartbeat takes a connection, and a job published is done
    spool = tmp_path / "real"
    with daemon(spool, "--poll", "60", log=tmp_path / "daemon.log"):
        hb = wait_until(lambda: next(iter(client.daemons(spool)), None), 60, "the heartbeat")
        assert isinstance(hb["wake_port"], int) and not isinstance(hb["wake_port"], bool)
        from hdp_plugin.daemon.wake import wake

        assert wake(spool) == 1
        client.publish(spool, WEATHER, {"structure": "nb"}, name="after-nudge")
        wait_until(lambda: (P.Spool(spool).job(P.DONE, "after-nudge") / P.RESULT_FILE).exists(), 120, "the job")


def test_a_nudge_goes_only_to_this_hosts_listening_daemons_and_never_fails(tmp_path):
    """wake() reads every heartbeat and connects only where a port of this host is written; other hosts,
    stopping daemons, bad ports, unreadable heartbeats and a port nobody listens on are passed over
    without an error (polling finds the job anyway)."""
    import socket as so

    from hdp_plugin.daemon.wake import WakeSocket, wake

    assert wake(tmp_path / "no-spool") == 0
    folder = tmp_path / "spool" / "daemons"
    folder.mkdir(parents=True)
    ws = WakeSocket()
    closed = so.socket()
    closed.bind(("127.0.0.1", 0))
    dead_port = closed.getsockname()[1]
    closed.close()  # nobody listens there now
    here = so.gethostname()
    docs = {"live": {"host": here, "wake_port": ws.port},
            "other-host": {"host": "not-" + here + "-at-all", "wake_port": ws.port},
            "stopping": {"host": here, "wake_port": ws.port, "state": "stopping"},
            "no-port": {"host": here}, "null-port": {"host": here, "wake_port": None},
            "text-port": {"host": here, "wake_port": str(ws.port)}, "bool-port": {"host": here, "wake_port": True},
            "big-port": {"host": here, "wake_port": 70000}, "dead": {"host": here, "wake_port": dead_port}}
    for name, doc in docs.items():
        (folder / f"{name}.json").write_text(json.dumps(doc))
    (folder / "garbage.json").write_text("{not json")
    (folder / "list.json").write_text("[1, 2]")
    if hasattr(os, "mkfifo"):
        os.mkfifo(folder / "fifo.json")  # never opened for reading: a reader would block
    try:
        assert wake(tmp_path / "spool") == 1  # the live one only
        got = 0
        deadline = time.monotonic() + 20
        while got == 0 and time.monotonic() < deadline:  # the socket's thread accepted it and said so
            got = ws.drain()
            time.sleep(0.01)
        assert got == 1
    finally:
        ws.close()
    assert ws.drain() == 0 and ws.waitable() is None  # closed: nothing to take, no error
