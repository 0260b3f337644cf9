"""The daemon at its edges: a data file swapped under it, workers that grow, a stop on a spool being made.

Real daemon processes on real files, as in test_daemon_service.py (whose helpers these reuse).
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from hdp_plugin.daemon import client, jobs
from hdp_plugin.daemon import protocol as P
from hdp_plugin.daemon.jobs import Context, execute

from test_daemon_service import VOTE, WEATHER, Daemon, _cmd, daemon, final_names, wait_until

pytestmark = pytest.mark.skipif(os.name != "posix", reason="uses POSIX signals and process groups")


OK = {"protocol": 1, "structure": "kdb", "k": 1, "iterations": 20}


# ------------------------------------------------------------------------------------------
# a job's data file swapped between the daemon's check and its read
# ------------------------------------------------------------------------------------------
_AT_FDCWD, _RENAME_EXCHANGE = -100, 2


def _renameat2():
    """libc's renameat2 (Linux, glibc 2.28 and later), or None."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return fn


RENAMEAT2 = _renameat2()
needs_exchange = pytest.mark.skipif(RENAMEAT2 is None, reason="needs renameat2(RENAME_EXCHANGE) (Linux)")


def exchange(a, b, dir_fd: int = _AT_FDCWD) -> None:
    """Swap two names in one step, as a hostile producer does (renameat2 with RENAME_EXCHANGE)."""
    if RENAMEAT2(dir_fd, os.fsencode(a), dir_fd, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), str(a))


def _decoy(folder: Path, kind: str, outside: Path) -> Path:
    """What a producer swaps in for data.arff: a link to a file outside the job, a FIFO or a directory."""
    decoy = folder / "decoy"
    if kind == "link":
        os.symlink(outside, decoy)
    elif kind == "dir":
        decoy.mkdir()
    else:
        os.mkfifo(decoy)
    return decoy


def _run_in_thread(fn, timeout: float):
    """Run ``fn()`` on a thread for up to ``timeout`` seconds: ``(thread, {"value" or "error": ...})``."""
    out = {}

    def body():
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    t = threading.Thread(target=body, daemon=True)
    t.start()
    t.join(timeout)
    return t, out


@needs_exchange
@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_a_data_file_swapped_after_its_check_is_never_read_and_never_blocks(tmp_path, monkeypatch, kind):
    """A producer exchanges data.arff with a link out of the job (or a FIFO) just after the daemon has
    checked it: the job fails with bad_job, it never trains on the file outside, and a FIFO never
    holds the worker."""
    outside = tmp_path / "outside.arff"
    outside.write_bytes(VOTE.read_bytes())
    folder = tmp_path / "job"
    folder.mkdir()
    (folder / P.JOB_FILE).write_text(json.dumps(OK))
    (folder / "data.arff").write_bytes(WEATHER.read_bytes())
    decoy = _decoy(folder, kind, outside)
    checked = jobs.data_file

    def check_then_swap(*args):
        path = checked(*args)
        exchange(folder / "data.arff", decoy)
        return path

    monkeypatch.setattr(jobs, "data_file", check_then_swap)
    ctx = Context(spool=P.Spool(tmp_path / "spool").create(), daemon_id="test")
    t, out = _run_in_thread(lambda: execute(folder, "job", ctx), 60)
    if t.is_alive():  # a reader waits for the FIFO's writer: release it, then fail
        os.close(os.open(folder / "data.arff", os.O_WRONLY | os.O_NONBLOCK))
        t.join(60)
        pytest.fail("the worker waited on a FIFO put in place of its data file")
    assert out["value"] == "failed", json.loads((folder / P.RESULT_FILE).read_text())["data"]
    err = json.loads((folder / P.ERROR_FILE).read_text())
    assert err["code"] == "bad_job" and "data.arff" in err["message"], err


@pytest.mark.parametrize("kind", ["link", "fifo", "file", "directory"])
@pytest.mark.parametrize("walk", [True, False], ids=["walk", "path"])
def test_a_file_swapped_just_before_it_is_opened_is_refused(tmp_path, monkeypatch, kind, walk):
    """The narrowest window, between the last check and the open: a link is not followed, a FIFO is not
    waited on, another file is not read (the descriptor is compared with the file checked), and a
    directory, which opens, is refused as the others (bad_job, not an error of its own); no descriptor
    is left open. With walk=False the daemon opens by path, as where dir_fd is missing (Windows), without
    O_NOFOLLOW: the comparison alone refuses the file outside."""
    if kind in ("link", "fifo") and not hasattr(os, "mkfifo"):
        pytest.skip("needs links and FIFOs")
    outside = tmp_path / "outside.arff"
    outside.write_bytes(VOTE.read_bytes())
    folder = tmp_path / "job"
    folder.mkdir()
    (folder / P.JOB_FILE).write_text(json.dumps(OK))
    (folder / "data.arff").write_bytes(WEATHER.read_bytes())
    if kind == "file":  # another file inside the job, put in place by a rename
        decoy = folder / "decoy"
        decoy.write_bytes(WEATHER.read_bytes())
    elif kind == "directory":  # a directory (holding the data) put in place by a rename
        decoy = folder / "decoy"
        decoy.mkdir()
        (decoy / "data.arff").write_bytes(WEATHER.read_bytes())
    else:
        decoy = _decoy(folder, kind, outside)
    opener = jobs._open_no_follow

    def swap_then_open(top, parts):
        if parts == ("data.arff",):
            if kind == "directory":
                os.remove(folder / "data.arff")
            os.replace(decoy, folder / "data.arff")
        return opener(top, parts)

    monkeypatch.setattr(jobs, "_open_no_follow", swap_then_open)
    if not walk:
        monkeypatch.setattr(jobs, "_WALK", False)
        monkeypatch.setattr(jobs, "_OPEN_FLAGS", os.O_RDONLY | os.O_NONBLOCK)
    job = jobs.read_job(folder)
    fds = _open_descriptors()
    t, out = _run_in_thread(lambda: jobs.read_data(folder, job, 1 << 20), 30)
    if t.is_alive():
        os.close(os.open(folder / "data.arff", os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("the read waited on a FIFO")
    assert "value" not in out, "a file other than the one checked was read"
    assert isinstance(out["error"], P.JobError), out["error"]
    assert "data.arff changed while the daemon opened it" in str(out["error"])
    assert _open_descriptors() == fds


def _open_descriptors() -> set[str] | None:
    """This process's open descriptors where the system lists them (Linux), else None."""
    try:
        return set(os.listdir("/proc/self/fd"))
    except OSError:
        return None


@needs_exchange
def test_a_producer_exchanging_data_files_under_the_daemon_never_gets_a_file_outside_read(tmp_path):
    """The real daemon, and a producer exchanging each job's data.arff with a link out of the job, a
    FIFO or a directory (renameat2 RENAME_EXCHANGE, through the job folder's descriptor, so that it
    follows the folder from new/ to claimed/) as fast as it can while the jobs run: every job ends, done
    on its own data or failed with bad_job; none trains on the file outside, and no worker waits on a FIFO."""
    spool = tmp_path / "spool"
    sp = P.Spool(spool).create()
    outside = tmp_path / "outside.arff"
    outside.write_bytes(VOTE.read_bytes())
    # a link job reads the file outside when its check sees data.arff and its open the link: about one
    # in four jobs on a reader that opens the path again
    names = [f"link-{i}" for i in range(12)] + [f"fifo-{i}" for i in range(4)] + [f"dir-{i}" for i in range(6)]
    with daemon(spool, log=tmp_path / "daemon.log") as d:
        for name in names:  # one job at a time, its files swapped from its publication to its end
            tmp = sp.job(P.TMP, name)
            tmp.mkdir()
            (tmp / P.JOB_FILE).write_text(json.dumps({**OK, "structure": "nb"}))
            (tmp / "data.arff").write_bytes(WEATHER.read_bytes())
            _decoy(tmp, name.split("-")[0], outside)
            fd = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY)
            halt = threading.Event()

            def producer(fd=fd, halt=halt):
                while not halt.is_set():
                    exchange("data.arff", "decoy", fd)

            swapper = threading.Thread(target=producer, daemon=True)
            swapper.start()
            try:
                os.rename(tmp, sp.job(P.NEW, name))
                wait_until(lambda: name in final_names(spool, P.DONE) + final_names(spool, P.FAILED), 30,
                           f"job {name} to end (its worker may be waiting on a FIFO)")
            finally:
                halt.set()
                swapper.join(10)
                os.close(fd)
        assert d.proc.poll() is None
    for name in final_names(spool, P.DONE):
        data = json.loads((sp.job(P.DONE, name) / P.RESULT_FILE).read_text())["data"]
        assert (data["class"], data["rows"]) == ("play", 14), f"{name} trained on the file outside: {data}"
    for name in final_names(spool, P.FAILED):
        err = json.loads((sp.job(P.FAILED, name) / P.ERROR_FILE).read_text())
        assert err["code"] == "bad_job" and "data.arff" in err["message"], err


_SWAPPER = """
import ctypes, os, sys
fn = ctypes.CDLL(None, use_errno=True).renameat2
a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
print("swapping", flush=True)
while True:
    fn(-100, a, -100, b, 2)
"""


@needs_exchange
def test_a_json_file_exchanged_with_a_fifo_never_blocks_its_reader(tmp_path):
    """attempts.json lies in the producer's job folder and the supervisor reads it: exchanged with a
    FIFO between the reader's look and its open (by another process, as fast as it can), it is
    refused (None), never waited on."""
    doc = tmp_path / "attempts.json"
    doc.write_text('{"protocol": 1}')
    os.mkfifo(tmp_path / "decoy")
    swapper = subprocess.Popen([sys.executable, "-c", _SWAPPER, str(doc), str(tmp_path / "decoy")],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert swapper.stdout.readline() == "swapping\n"
        t, out = _run_in_thread(lambda: [P.read_json(doc) for _ in range(20000)], 30)
    finally:
        swapper.kill()
        swapper.wait(10)
    if t.is_alive():
        os.close(os.open(doc, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("read_json waited on a FIFO")
    assert {json.dumps(v) for v in out["value"]} == {"null", '{"protocol": 1}'}


# ------------------------------------------------------------------------------------------
# workers that grow
# ------------------------------------------------------------------------------------------
def test_resident_bytes_follows_what_the_process_holds():
    """The worker's measure of its memory grows by what it allocates (Linux reads /proc: the
    resident set now; elsewhere it may be the peak, which grows too)."""
    from hdp_plugin.daemon.workers import resident_bytes

    before = resident_bytes()
    assert before is not None and before > 10 * 2**20
    block = bytearray(200 * 2**20)  # zero-filled, so resident
    after = resident_bytes()
    assert after - before > 150 * 2**20
    del block


def _worker_pids(d) -> list[int]:
    return (d.heartbeat() or {}).get("worker_pids", [])


def test_a_worker_holding_more_than_the_bound_after_a_job_is_replaced(tmp_path):
    """--worker-memory-mb 0: every worker holds more than the bound after its job, so each job runs in a
    fresh worker (the log says which and why); with the default bound a small job leaves its worker
    in place."""
    spool, spool2 = tmp_path / "spool", tmp_path / "spool2"
    log, log2 = tmp_path / "daemon.log", tmp_path / "daemon2.log"
    job = {**OK, "structure": "nb"}
    # the two daemons (bound 0 and the default bound) serve their own spools side by side
    d = Daemon(spool, "--workers", "1", "--worker-memory-mb", "0", log=log)
    d2 = Daemon(spool2, "--workers", "1", log=log2)
    try:
        d.wait_ready()
        d2.wait_ready()
        first, first2 = _worker_pids(d), _worker_pids(d2)
        client.publish(spool, WEATHER, job, name="one")
        client.publish(spool2, WEATHER, job, name="one")
        wait_until(lambda: final_names(spool, P.DONE) == ["one"], 60, "the first job")
        wait_until(lambda: d.heartbeat().get("ready_workers") == 1 and _worker_pids(d) != first, 60,
                   "a fresh worker")
        second = _worker_pids(d)
        client.publish(spool, WEATHER, job, name="two")
        wait_until(lambda: final_names(spool, P.DONE) == ["one", "two"], 60, "the second job")
        wait_until(lambda: final_names(spool2, P.DONE) == ["one"], 60, "the job of the default bound")
        assert _worker_pids(d2) == first2
    finally:
        d.close()
        d2.close()
    text = log.read_text()
    assert f"replacing worker {first[0]}: it holds" in text and "after job one, more than --worker-memory-mb 0" in text
    assert f"replacing worker {second[0]}: it holds" in text and first != second
    assert "replacing worker" not in log2.read_text()


# ------------------------------------------------------------------------------------------
# a stop on a spool the daemon is making
# ------------------------------------------------------------------------------------------
def test_spool_creation_shows_no_half_made_spool(tmp_path):
    """Creators racing on a new path all succeed; a watcher never sees the spool without all of its
    sub-directories, and nothing is left beside it."""
    root = tmp_path / "deep" / "spool"
    seen_partial = []
    halt = threading.Event()

    def watch():
        while not halt.is_set():
            if root.is_dir():
                missing = [d for d in P.SUBDIRS if not (root / d).is_dir()]
                if missing:
                    seen_partial.append(missing)
                return

    watcher = threading.Thread(target=watch)
    watcher.start()
    creators = [threading.Thread(target=P.Spool(root).create) for _ in range(4)]
    for t in creators:
        t.start()
    for t in creators:
        t.join(10)
    halt.set()
    watcher.join(10)
    assert seen_partial == []
    P.Spool(root).check()
    assert sorted(os.listdir(root.parent)) == ["spool"]
    assert os.stat(root).st_mode & 0o777 == 0o700


@pytest.mark.parametrize("attempt", range(10))
def test_stop_right_after_run_on_a_new_spool_stops_the_daemon(tmp_path, attempt):
    """'daemon stop' issued right after 'daemon run' on a path that does not exist yet waits for the
    daemon to make the spool, stops it (exit 0), and the daemon exits without serving."""
    spool = tmp_path / "new-spool"
    log = tmp_path / "daemon.log"
    with open(log, "ab") as fh:
        proc = subprocess.Popen(_cmd("run", spool, "--poll", "0.05"), stdout=subprocess.DEVNULL, stderr=fh,
                                start_new_session=True)
        try:
            done = subprocess.run(_cmd("stop", spool, "--timeout", "30"), capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
            assert proc.wait(30) == 0, log.read_text()
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, 9)
                proc.wait(10)
    assert "stop requested" in log.read_text() or "stop marker found" in log.read_text()
    assert final_names(spool, P.DAEMONS) == []  # no lock, heartbeat or stop marker left


def test_stop_on_a_path_no_daemon_makes_says_it_is_not_a_spool(tmp_path):
    """A missing path is waited for (as long as spool_seconds) and then refused, naming the wait; a file,
    or a directory of other things, is refused at once."""
    messages = []
    with pytest.raises(P.JobError, match=r"not a spool directory .*\(waited 0.2 s for a daemon starting on it"):
        client.stop(tmp_path / "missing", spool_seconds=0.2, on_spool_wait=messages.append)
    assert len(messages) == 1 and "is not a spool yet: waiting up to 0.2 s" in messages[0]
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("x")
    for path in (tmp_path / "other", tmp_path / "other" / "notes.txt"):
        messages.clear()
        with pytest.raises(P.JobError, match="not a spool directory") as info:
            client.stop(path, spool_seconds=60, on_spool_wait=messages.append)
        assert messages == [] and "waited" not in str(info.value)
