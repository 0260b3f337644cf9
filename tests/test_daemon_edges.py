"""The daemon at its edges: a data file swapped under it, workers that grow, a stop on a spool being made.

Real daemon processes on real files, as in test_daemon_service.py (whose helpers these reuse).
"""

from __future__ import annotations

import os
import subprocess
import threading

import pytest

from hdp_plugin.daemon import protocol as P

from test_daemon_service import _cmd, final_names

pytestmark = pytest.mark.skipif(os.name != "posix", reason="uses POSIX signals and process groups")


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
