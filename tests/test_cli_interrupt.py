"""Ctrl-C stops every command at once: the real ``hdp-bnc`` as a subprocess whose stderr is a terminal
(so that it shows its progress line), interrupted once sampling has started, exits within seconds
with one line and exit code 130, and leaves no output file behind."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal and SIGINT: POSIX")

ROOT = Path(__file__).resolve().parents[1]
SEGMENT = ROOT / "tests" / "data" / "segment-challenge.arff"
#: how long a command may take to start sampling (a first use compiles the kernels: minutes on a slow machine)
START_DEADLINE = 600.0
#: how long an interrupted command may take to exit: far below the minutes its work would take
STOP_DEADLINE = 10.0


class _Command:
    """``hdp-bnc ARGS`` with its stderr on a pseudo-terminal (read here), stdout on a pipe."""

    def __init__(self, *args, tmp_path: Path):
        import pty

        self.master, slave = pty.openpty()
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   COLUMNS="200", TERM="xterm")
        self.proc = subprocess.Popen([sys.executable, "-m", "hdp_plugin", *map(str, args)], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=slave, env=env, cwd=tmp_path)
        os.close(slave)
        self.seen = b""

    def _read(self, timeout: float) -> None:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if ready:
            try:
                self.seen += os.read(self.master, 65536)
            except OSError:  # the terminal's other side closed: the process has ended
                time.sleep(timeout)

    def text(self) -> str:
        plain = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", self.seen)  # the progress line's escapes left out
        return plain.decode("utf-8", "replace").replace("\r", "\n")

    def wait_for(self, pattern: str, deadline: float) -> None:
        end = time.monotonic() + deadline
        while not re.search(pattern, self.text()):
            assert self.proc.poll() is None, f"ended ({self.proc.returncode}) before {pattern!r}: {self.text()}"
            assert time.monotonic() < end, f"no {pattern!r} in {deadline:.0f} s: {self.text()[-2000:]}"
            self._read(0.2)

    def interrupt(self) -> tuple[float, int]:
        """SIGINT; the seconds until the process ended, and its exit code (it is killed after the deadline)."""
        sent = time.monotonic()
        self.proc.send_signal(signal.SIGINT)
        while self.proc.poll() is None and time.monotonic() - sent < STOP_DEADLINE * 6:
            self._read(0.1)
        took = time.monotonic() - sent
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for _ in range(20):  # what is left in the terminal
            self._read(0.05)
        os.close(self.master)
        self.proc.stdout.close()
        return took, self.proc.returncode

    def error_lines(self) -> list[str]:
        return [ln.strip() for ln in self.text().splitlines() if ln.strip().startswith("error:")]


def _check_stopped(cmd: _Command, took: float, code: int) -> None:
    assert took < STOP_DEADLINE and code == 130, (took, code, cmd.text()[-2000:])
    assert cmd.error_lines() == ["error: interrupted"], cmd.text()[-2000:]
    assert "Traceback" not in cmd.text()


@pytest.mark.parametrize("structure", [("-s", "kdb", "-k", "3"), ("-s", "eskdb", "--members", "4")],
                         ids=["kdb", "eskdb"])
def test_ctrl_c_stops_train_at_once_and_writes_no_model(tmp_path, structure):
    out = tmp_path / "model.hdpbnc"
    # a million iterations: an hour's sampling on any machine; on two threads, as by default on two cores
    cmd = _Command("train", SEGMENT, "-o", out, *structure, "-i", "1000000", "--threads", "2", tmp_path=tmp_path)
    cmd.wait_for(r"sampling (kDB-3|ESKDB)", START_DEADLINE)
    time.sleep(1.0)  # into the sampling, past its first chunks
    took, code = cmd.interrupt()
    _check_stopped(cmd, took, code)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no model, no temporary file


def test_ctrl_c_stops_evaluate_at_once(tmp_path):
    cmd = _Command("evaluate", SEGMENT, "-s", "kdb", "-k", "3", "-i", "200000", "--threads", "2", tmp_path=tmp_path)
    cmd.wait_for(r"sampling kDB-3", START_DEADLINE)
    time.sleep(1.0)
    took, code = cmd.interrupt()
    _check_stopped(cmd, took, code)


def test_ctrl_c_stops_daemon_submit_wait_at_once_and_says_the_job_goes_on(tmp_path):
    spool = tmp_path / "spool"
    cmd = _Command("daemon", "submit", spool, ROOT / "tests" / "data" / "vote.arff", "--name", "j1", "--wait",
                   tmp_path=tmp_path)
    cmd.wait_for(r"submitted j1; waiting", START_DEADLINE)
    took, code = cmd.interrupt()
    assert took < STOP_DEADLINE and code == 130, (took, code, cmd.text())
    lines = cmd.error_lines()
    assert len(lines) == 1 and lines[0].startswith("error: interrupted") and "j1" in lines[0], cmd.text()
    assert "hdp-bnc daemon cancel" in lines[0] and "Traceback" not in cmd.text()
    assert (spool / "new" / "j1").exists()  # the job stays queued
