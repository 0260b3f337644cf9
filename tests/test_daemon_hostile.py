"""The daemon against hostile spools, producers that break the rules, and a full disk.

Real daemon processes on real files, as in test_daemon_service.py (whose helpers these reuse).
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from hdp_plugin.daemon import client
from hdp_plugin.daemon import protocol as P
from hdp_plugin.errors import JobError

from test_daemon_service import (
    VOTE, WEATHER, Daemon, _cmd, daemon, final_names, publish_raw, wait_until,
)

pytestmark = pytest.mark.skipif(os.name != "posix", reason="uses POSIX signals, modes and resource limits")

OK = {"protocol": 1, "structure": "kdb", "k": 1, "iterations": 20}
# a kDB-3 job on vote this long samples for a few seconds on one thread: many progress updates (every
# 0.25 s) in which a test can catch it sampling, and short enough to run again after a kill
SLOW_ITERATIONS = 60_000


def _error(sp: P.Spool, name: str) -> dict:
    return json.loads((sp.job(P.FAILED, name) / P.ERROR_FILE).read_text())


def _result(sp: P.Spool, name: str) -> dict:
    return json.loads((sp.job(P.DONE, name) / P.RESULT_FILE).read_text())


def _tree(path: Path) -> dict:
    return {str(p.relative_to(path)): (p.read_bytes() if p.is_file() else None) for p in sorted(path.rglob("*"))}


def _job_folder(path: Path, job: dict = OK, data: Path = WEATHER) -> Path:
    path.mkdir(parents=True)
    (path / P.JOB_FILE).write_text(json.dumps(job))
    (path / "data.arff").write_bytes(data.read_bytes())
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One daemon with the default settings, serving a spool for the tests that only publish jobs to it
    and look at those jobs (each test names its own) and at the daemon's log."""
    tmp = tmp_path_factory.mktemp("served")
    spool, log = tmp / "spool", tmp / "daemon.log"
    with daemon(spool, log=log):
        yield P.Spool(spool).create(), log


def test_recovery_never_follows_links_and_skips_foreign_entries(tmp_path):
    """Items 2 and 5: links in claimed/ are never followed; a stray file in claimed/ and a malformed
    heartbeat neither stop a daemon from starting nor stall the recovery of the jobs after them."""
    spool = tmp_path / "spool"
    sp = P.Spool(spool).create()
    outside = tmp_path / "outside"  # a directory a link in claimed/ points at
    _job_folder(outside / "job1")
    (outside / "job1" / P.MODEL_FILE).write_bytes(b"precious")
    (outside / "job1" / P.RESULT_FILE).write_text("{}")
    os.symlink(outside, sp.dir(P.CLAIMED) / "aaa-evil")
    (sp.dir(P.CLAIMED) / "bbb-stray").write_text("not a daemon")
    dead = sp.dir(P.CLAIMED) / "ccc-dead"
    dead.mkdir()
    outside2 = _job_folder(tmp_path / "outside2")
    os.symlink(outside2, dead / "a-linked-job")
    _job_folder(dead / "b-real-job")
    (sp.dir(P.DAEMONS) / "ddd-odd.json").write_text(json.dumps(
        {"heartbeat_unix": "soon", "heartbeat_seconds": [], "worker_pids": ["x", None], "host": socket.gethostname()}))
    (sp.dir(P.DAEMONS) / "eee-list.json").write_text("[1, 2]")
    before, before2 = _tree(outside), _tree(outside2)
    log = tmp_path / "daemon.log"
    with daemon(spool, log=log):
        wait_until(lambda: sp.job(P.DONE, "b-real-job").exists(), 60, "the recovered job after the stray entries")
        for args in ((), ("b-real-job",)):
            r = subprocess.run(_cmd("status", spool, *args), capture_output=True, text=True, timeout=60)
            assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
        r = subprocess.run(_cmd("status", spool, "../../etc"), capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and "job name must be" in r.stderr and "Traceback" not in r.stderr
        r = subprocess.run(_cmd("stop", spool), capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert _result(sp, "b-real-job")["attempt"] == 2
    assert _tree(outside) == before and _tree(outside2) == before2
    assert (sp.dir(P.CLAIMED) / "aaa-evil").is_symlink() and (sp.dir(P.CLAIMED) / "bbb-stray").is_file()
    assert (dead / "a-linked-job").is_symlink()
    text = log.read_text()
    assert "ignoring claimed/aaa-evil" in text and "ignoring claimed/bbb-stray" in text
    assert "ignoring claimed/ccc-dead/a-linked-job" in text and "Traceback" not in text


def test_producer_written_attempts_are_ignored_and_files_are_private(served):
    """Item 7: attempts.json from a producer neither loops nor spoofs the count; every file the
    daemon writes is private (umask 077)."""
    sp, _ = served
    spool = sp.root
    for name, attempts in (("loops", {"lost": "x"}), ("spoofs", {"lost": -100}), ("nested", [1])):
        publish_raw(spool, name, {P.JOB_FILE: OK, "data.arff": WEATHER, P.ATTEMPTS_FILE: attempts})
    tmp = sp.job(P.TMP, "dir-attempts")  # attempts.json a directory, published by one rename
    _job_folder(tmp)
    (tmp / P.ATTEMPTS_FILE).mkdir()
    os.rename(tmp, sp.job(P.NEW, "dir-attempts"))
    publish_raw(spool, "bad", {P.JOB_FILE: {**OK, "k": "x"}, "data.arff": WEATHER})
    good = ("loops", "spoofs", "nested", "dir-attempts")
    wait_until(lambda: all(sp.job(P.DONE, n).exists() for n in good) and sp.job(P.FAILED, "bad").exists(), 60,
               "the jobs")
    hb = sp.heartbeat(next(n[:-5] for n in sp.names(P.DAEMONS) if n.endswith(".json")))
    assert stat.S_IMODE(os.stat(hb).st_mode) & 0o077 == 0
    for name in good:
        assert _result(sp, name)["attempt"] == 1
        for f in (P.RESULT_FILE, P.MODEL_FILE):
            assert stat.S_IMODE(os.stat(sp.job(P.DONE, name) / f).st_mode) & 0o077 == 0, (name, f)
    assert stat.S_IMODE(os.stat(sp.job(P.FAILED, "bad") / P.ERROR_FILE).st_mode) & 0o077 == 0


@pytest.mark.parametrize("where", ["root", "new"])
def test_a_spool_others_can_write_is_refused_unless_allowed(tmp_path, where):
    """Item 7: a group- or world-writable spool (or sub-directory) is refused, unless explicitly allowed."""
    spool = tmp_path / "spool"
    sp = P.Spool(spool).create()
    os.chmod(spool if where == "root" else sp.dir(P.NEW), 0o777)
    r = subprocess.run(_cmd("run", spool, "--idle-exit", "0"), capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "writable by other users" in r.stderr and "--allow-shared-spool" in r.stderr
    assert "Traceback" not in r.stderr
    client.publish(spool, WEATHER, {"structure": "kdb", "k": 1, "iterations": 20}, name="shared")
    r = subprocess.run(_cmd("run", spool, "--idle-exit", "0.5", "--allow-shared-spool"), capture_output=True,
                       text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    assert sp.job(P.DONE, "shared").exists()


def test_job_names_are_unique(tmp_path):
    """Item 8: a second job with a running job's name is refused by submit, failed apart by the daemon
    (never handed the other job's result), and a recovered namesake is failed apart, not deleted."""
    spool = tmp_path / "spool"
    sp = P.Spool(spool).create()
    with daemon(spool, "--threads", "1", log=tmp_path / "daemon.log"):
        # a few seconds of sampling: running (in claimed/) while a client publishes its namesake
        client.publish(spool, VOTE, {"structure": "kdb", "k": 2, "iterations": 60_000, "seed": 1}, name="same")
        wait_until(lambda: "same" in sum(sp.claimed().values(), []), 30, "the first job to run")
        with pytest.raises(JobError, match="a job named same is already in claimed/"):
            client.publish(spool, WEATHER, OK, name="same")
        publish_raw(spool, "same", {P.JOB_FILE: OK, "data.arff": WEATHER})  # a producer ignoring the rule
        wait_until(lambda: sp.job(P.FAILED, "same~1").exists(), 30, "the namesake to fail apart")
        dead = sp.dir(P.CLAIMED) / "host-1-dead00"  # a dead daemon's namesake, found by recovery
        dead.mkdir()
        _job_folder(dead / "same")
        wait_until(lambda: sp.job(P.FAILED, "same~2").exists(), 30, "the recovered namesake to fail apart")
        wait_until(lambda: sp.job(P.DONE, "same").exists(), 120, "the first job")
    assert final_names(spool, P.DONE) == ["same"]
    assert _result(sp, "same")["job_settings"]["k"] == 2
    for n in ("same~1", "same~2"):
        err = _error(sp, n)
        assert err["code"] == "bad_job" and "already" in err["message"] and "unique" in err["message"]
        assert (sp.job(P.FAILED, n) / "data.arff").read_bytes() == WEATHER.read_bytes()
    assert not (sp.dir(P.CLAIMED) / "host-1-dead00").exists()


class _LimitedDaemon(Daemon):
    """A daemon whose files may not grow beyond ``limit`` bytes (RLIMIT_FSIZE): a disk that fills up."""

    def __init__(self, spool: Path, limit: int, *args, log: Path):
        import resource

        self.spool, self.log = spool, log
        self._fh = open(log, "ab")

        def cap():
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        self.proc = subprocess.Popen(_cmd("run", spool, "--poll", "0.05", *args), stdout=subprocess.DEVNULL,
                                     stderr=self._fh, start_new_session=True, preexec_fn=cap)


def test_a_full_disk_fails_the_job_with_no_space_and_the_daemon_carries_on(tmp_path):
    """Item 3: a model that cannot be written is a job error (no_space); the daemon keeps serving."""
    subprocess.run([sys.executable, "-c", "from hdp_plugin.daemon.jobs import warm_up; warm_up()"], check=True,
                   timeout=300)  # numba's cache is written before the limit applies
    spool = tmp_path / "spool"
    sp = P.Spool(spool).create()
    d = _LimitedDaemon(spool, 32 * 1024, log=tmp_path / "daemon.log")
    try:
        d.wait_ready()
        client.publish(spool, VOTE, {"structure": "kdb", "k": 2, "iterations": 20}, name="big-model")  # a 76 KB model
        client.publish(spool, WEATHER, {"structure": "kdb", "k": 1, "iterations": 20}, name="small-model")  # an 11 KB model
        wait_until(lambda: sp.job(P.FAILED, "big-model").exists() and sp.job(P.DONE, "small-model").exists(), 60,
                   "both jobs")
        assert d.proc.poll() is None and d.wait_ready()["ready_workers"] == 1
    finally:
        d.close()
    err = _error(sp, "big-model")
    assert err["code"] == "no_space" and "model.arrow" in err["message"] and err["phase"] == "saving", err
    assert not (sp.job(P.FAILED, "big-model") / P.MODEL_FILE).exists()


def test_a_worker_death_always_brings_a_new_worker(tmp_path):
    """Item 3: when the bookkeeping after a worker's death fails, a new worker starts all the same and
    the job runs again."""
    spool = tmp_path / "spool"
    sp = P.Spool(spool).create()
    with daemon(spool, "--threads", "1", log=tmp_path / "daemon.log") as d:
        client.publish(spool, VOTE, {"structure": "kdb", "k": 3, "iterations": SLOW_ITERATIONS, "seed": 2}, name="victim")
        prog = wait_until(lambda: (P.read_json(sp.progress("victim")) or {}).get("iteration", 0) > 0
                          and P.read_json(sp.progress("victim")), 60, "sampling")
        folder = sp.job(P.CLAIMED, "victim", prog["daemon"])
        (folder / P.ATTEMPTS_FILE).mkdir()  # the daemon's write of attempts.json will fail
        os.kill(prog["pid"], 9)
        wait_until(lambda: (h := d.heartbeat() or {}).get("ready_workers") == 1
                   and prog["pid"] not in h.get("worker_pids", [prog["pid"]]), 60, "a new worker")
        wait_until(lambda: sp.job(P.DONE, "victim").exists(), 120, "the job, run again")


def test_a_deleted_spool_stops_its_daemon(tmp_path):
    """Item 9: a daemon whose spool was deleted exits (status 1) instead of polling it forever."""
    import shutil

    spool = tmp_path / "spool"
    d = Daemon(spool, "--workers", "1", log=tmp_path / "daemon.log")
    try:
        d.wait_ready()
        for _ in range(50):  # the daemon may write its heartbeat into daemons/ while the tree is removed
            shutil.rmtree(spool, ignore_errors=True)
            if not spool.exists():
                break
        assert not spool.exists()
        assert d.wait(30) == 1
    finally:
        d.close()
    assert "spool was deleted" in (tmp_path / "daemon.log").read_text()


def test_job_files_links_and_data_null(tmp_path, served):
    """Item 9: dangling and looping links are bad_job, a hard link to a file outside the job is refused
    without quoting it, and "data": null is allowed. Items 1 and 6: an Arrow file that crashed pyarrow
    is bad_data (not a dead worker and too_many_attempts), and one declaring 5x10^8 rows is too_large."""
    import pyarrow as pa

    sp, _ = served
    spool = sp.root
    crash = Path(__file__).parent / "data" / "hostile" / "segv-string-offsets.arrow"
    publish_raw(spool, "crash", {P.JOB_FILE: OK, "data.arrow": crash})
    rows = tmp_path / "rows.arrow"
    with pa.OSFile(str(rows), "wb") as sink, pa.ipc.new_stream(sink, pa.schema([("a", pa.null())])) as w:
        w.write_batch(pa.record_batch([pa.nulls(500_000_000)], names=["a"]))
    publish_raw(spool, "rows", {P.JOB_FILE: OK, "data.arrow": rows})
    secret = tmp_path / "secret.arff"
    secret.write_text("root:x:0:0:secret line\n")
    publish_raw(spool, "dangling", {P.JOB_FILE: OK, "->data.arff": tmp_path / "nowhere.arff"})
    publish_raw(spool, "looping", {"->job.json": Path("job.json"), "data.arff": WEATHER})
    publish_raw(spool, "data-null", {P.JOB_FILE: {**OK, "data": None}, "data.arff": WEATHER})
    tmp = sp.job(P.TMP, "hardlink")
    tmp.mkdir()
    (tmp / P.JOB_FILE).write_text(json.dumps(OK))
    os.link(secret, tmp / "data.arff")
    os.rename(tmp, sp.job(P.NEW, "hardlink"))
    bad = ("crash", "rows", "dangling", "looping", "hardlink")
    wait_until(lambda: all(sp.job(P.FAILED, n).exists() for n in bad) and sp.job(P.DONE, "data-null").exists(), 60,
               "the jobs")
    assert not any(sp.job(P.DONE, n).exists() for n in bad)
    assert not sp.job(P.FAILED, "data-null").exists()
    assert _error(sp, "crash")["code"] == "bad_data" and _error(sp, "crash")["attempt"] == 1
    assert _error(sp, "rows")["code"] == "too_large" and "--max-cells" in _error(sp, "rows")["message"]
    for name, words in (("dangling", "link to nothing"), ("looping", "link to nothing"), ("hardlink", "hard link")):
        err = _error(sp, name)
        assert err["code"] == "bad_job" and words in err["message"], err
        assert "root:x" not in json.dumps(err)


def test_a_claim_sent_to_a_dead_worker_is_put_back_without_an_attempt(tmp_path):
    """Item 9: the worker died after the supervisor last looked: no BrokenPipe traceback, no attempt."""
    from hdp_plugin.daemon.service import Daemon as Supervisor, Settings

    spool = tmp_path / "spool"
    sp = P.Spool(spool).create()
    client.publish(spool, WEATHER, {"structure": "kdb", "k": 1, "iterations": 20}, name="j")
    d = Supervisor(spool, Settings(workers=1))
    d.start()
    try:
        w = d.workers[0]
        w.process.kill()
        w.process.join(30)
        assert d.claim(w, ["j"]) is False
        assert w.job is None and sp.job(P.NEW, "j").is_dir()
        assert not (sp.job(P.NEW, "j") / P.ATTEMPTS_FILE).exists() and d.requeued == 0
    finally:
        d.shutdown()


def test_a_well_formed_producer_attempts_file_counts_for_nothing(tmp_path):
    """An attempts.json a producer put in a published job, however well formed (or
    the daemon's own, in a finished job's folder published again), is not the daemon's: the job starts at attempt 1, and with a
    forged "lost": 2 one worker kill does not fail it with too_many_attempts."""
    spool = tmp_path / "spool"
    sp = P.Spool(spool).create()
    forged = {"protocol": 1, "lost": 2, "history": [{"reason": "forged", "time": "2026-01-01T00:00:00.000Z"}] * 2}
    slow = {"protocol": 1, "structure": "kdb", "k": 3, "iterations": SLOW_ITERATIONS, "seed": 2}
    publish_raw(spool, "forged", {P.JOB_FILE: OK, "data.arff": WEATHER, P.ATTEMPTS_FILE: forged})
    publish_raw(spool, "victim", {P.JOB_FILE: slow, "data.arff": VOTE, P.ATTEMPTS_FILE: forged})
    with daemon(spool, "--threads", "1", log=tmp_path / "daemon.log"):
        # generous waits: in a fresh venv this worker may compile the kernels first, beside mvn verify
        wait_until(lambda: sp.job(P.DONE, "forged").exists(), 180, "the forged job")
        prog = wait_until(lambda: (P.read_json(sp.progress("victim")) or {}).get("iteration", 0) > 0
                          and P.read_json(sp.progress("victim")), 180, "sampling")
        assert prog["attempt"] == 1
        os.kill(prog["pid"], 9)
        wait_until(lambda: sp.job(P.DONE, "victim").exists() or sp.job(P.FAILED, "victim").exists(), 120,
                   "the job, run again")
        assert sp.job(P.DONE, "victim").exists(), _error(sp, "victim")
        assert _result(sp, "victim")["attempt"] == 2
        attempts = json.loads((sp.job(P.DONE, "victim") / P.ATTEMPTS_FILE).read_text())
        assert attempts["lost"] == 1 and [h["reason"] for h in attempts["history"]] == [
            "its worker process died (killed by signal 9)"]
        # a user retries the finished job by publishing its folder again, the daemon's attempts.json in it
        os.rename(sp.job(P.DONE, "victim"), sp.job(P.TMP, "victim"))
        (sp.job(P.TMP, "victim") / P.JOB_FILE).write_text(json.dumps(OK))
        os.rename(sp.job(P.TMP, "victim"), sp.job(P.NEW, "victim"))
        wait_until(lambda: sp.job(P.DONE, "victim").exists(), 60, "the job published again")
    assert _result(sp, "forged")["attempt"] == 1
    assert not (sp.job(P.DONE, "forged") / P.ATTEMPTS_FILE).exists()  # removed when claimed
    assert _result(sp, "victim")["attempt"] == 1
    text = (tmp_path / "daemon.log").read_text()
    assert "job forged: claimed (attempt 1)" in text and "attempt 3" not in text


def test_job_names_with_newlines_cannot_forge_log_lines(served):
    """A published name holding a newline (or a terminal escape) reaches the daemon's
    log escaped, on its own line; a name that only ends in a newline is not a valid job name either."""
    sp, log = served
    spool = sp.root
    forged = "2026-01-01T00:00:00 hdp-bnc daemon: job payroll: done -> elsewhere"
    names = [f"evil\n{forged}", "trailing\n", "esc\x1b[2Jape", "bidi\u202egnp.exe"]
    for name in names:
        publish_raw(spool, name, {P.JOB_FILE: OK, "data.arff": WEATHER})
    wait_until(lambda: all(sp.job(P.FAILED, n).exists() for n in names), 60, "the jobs to fail")
    for name in names:
        err = _error(sp, name)
        assert err["code"] == "bad_job" and "job name must be" in err["message"], err
    # a job's failed folder comes before its log line: wait for the lines too
    escaped = ["evil\\n2026-01-01T00:00:00 hdp-bnc daemon: job payroll", "trailing\\n", "esc\\x1b[2Jape",
               "bidi\\u202egnp.exe"]
    wait_until(lambda: all(e in log.read_text() for e in escaped), 60, "the log lines of the failed jobs")
    lines = log.read_text().splitlines()
    assert not any(line.startswith(forged[:10] + "T00:00:00") for line in lines)
    assert not any(c in log.read_text() for c in "\x1b\u202e")
    text = log.read_text()
    assert "evil\\n2026-01-01T00:00:00 hdp-bnc daemon: job payroll" in text and "trailing\\n" in text
    assert "esc\\x1b[2Jape" in text and "bidi\\u202egnp.exe" in text


def test_a_failed_jobs_error_names_the_file_the_user_submitted(tmp_path, served):
    """``submit`` records the file it was given as job.json's ``source``: error.json's message, and what
    ``submit --wait`` prints, name that file (and the job's copy of it), never the spool's path to the copy;
    a ``source`` is only text (a control character in it is escaped, a path it names is never opened)."""
    sp, _ = served
    spool = sp.root
    broken = tmp_path / "broken.arff"
    broken.write_text("@relation r\n@attribute a {x,y}\n@attribute class {p,q}\n@data\nx,p\ny,q,extra,\n")
    numeric = tmp_path / "numeric.csv"
    numeric.write_text("a,b,c\n1,2,3.5\n2,3,4.5\n")
    said = {}
    for name, path in (("src-arff", broken), ("src-csv", numeric)):
        r = subprocess.run(_cmd("submit", spool, path, "--name", name, "--wait", "--timeout", "120", "--quiet"),
                           capture_output=True, text=True, timeout=180)
        assert r.returncode == 1, r.stderr
        said[name] = r.stderr.strip()
        assert json.loads((sp.job(P.FAILED, name) / P.JOB_FILE).read_text())["source"] == str(path)
    err = _error(sp, "src-arff")
    assert err["code"] == "bad_data"
    assert err["message"] == f"{broken} (the job's data.arff): line 6: expected 2 values, got 4", err
    assert said["src-arff"] == f"error: job src-arff failed (bad_data): {err['message']}"
    err = _error(sp, "src-csv")
    assert err["code"] == "bad_data" and f"{numeric} (the job's data.arrow) is numeric" in err["message"], err
    assert err["message"] in said["src-csv"] and str(spool) not in said["src-csv"], said
    # by hand: a source is text only, escaped; a job without one names the file in the folder
    publish_raw(spool, "src-escaped", {P.JOB_FILE: {**OK, "source": "/etc/passwd\n\x1b[2Jx.arff"},
                                       "data.arff": broken})
    publish_raw(spool, "src-none", {P.JOB_FILE: OK, "data.arff": broken})
    publish_raw(spool, "src-long", {P.JOB_FILE: {**OK, "source": "x" * (P.MAX_SOURCE_CHARS + 1)}, "data.arff": broken})
    wait_until(lambda: all(sp.job(P.FAILED, n).exists() for n in ("src-escaped", "src-none", "src-long")), 60,
               "the jobs")
    assert _error(sp, "src-escaped")["message"].startswith(
        "/etc/passwd\\n\\x1b[2Jx.arff (the job's data.arff): line 6: expected 2 values"), _error(sp, "src-escaped")
    assert _error(sp, "src-none")["message"] == "data.arff: line 6: expected 2 values, got 4"
    err = _error(sp, "src-long")
    assert err["code"] == "bad_job" and err["field"] == "source" and "at most 4096 characters" in err["message"]
