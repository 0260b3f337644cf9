"""The Java side (java_bridge/): runs its Maven build and test suite, so `python3 -m pytest` covers it.

`mvn -B verify` in java_bridge runs the JUnit tests (golden model parity with Python to 1e-9,
options, Weka's CheckOptionHandler and CheckGOE, graph, serialisation) and the integration tests
(the Weka package installed into a temporary WEKA_HOME, and training through the real daemon with
the Python this test runs under). Skipped, with the reason, only when `mvn` or `java` is missing.
Maven runs offline when the CI's `mvn dependency:go-offline` has filled the local repository.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

JAVA_BRIDGE = Path(__file__).resolve().parents[1] / "java_bridge"
#: where pytest-xdist's controller runs the Java suite (tests/conftest.py), for the worker whose test waits for it
MAVEN_WORK_ENV = "HDP_BNC_TEST_MAVEN_WORK"

pytestmark = pytest.mark.java


def _maven_command() -> list[str]:
    mvn = shutil.which("mvn")
    if mvn is None or shutil.which("java") is None:
        pytest.skip("skipped: the Java suite needs `mvn` (Maven 3.8+) and `java` (JDK 11+) on the PATH")
    cmd = [mvn, "-B", "--no-transfer-progress", "verify"]  # not -q: the test prints each test class as Maven starts it
    if os.environ.get("HDP_BNC_MAVEN_OFFLINE", "") == "1":
        cmd.insert(1, "-o")
    return cmd


def _display_wrapper() -> list[str]:
    """``xvfb-run`` when there is no display but Xvfb is installed, so that the Explorer test
    (ExplorerStopIT: Stop cancels the daemon's job) runs; it skips itself without a display."""
    if os.environ.get("DISPLAY") or sys.platform in ("win32", "darwin"):
        return []
    xvfb = shutil.which("xvfb-run")
    return [xvfb, "-a", "-s", "-screen 0 1280x1024x24"] if xvfb else []


def _announce(capsys, line: str) -> None:
    """A line on the terminal while the test runs (the Java suite takes minutes, silently otherwise):
    written with pytest's capture suspended, so it shows when the test passes too, and flushed, so a
    CI log shows it as it happens."""
    with capsys.disabled():
        print(line, flush=True)


#: a hung build fails the test, not the whole run
MAVEN_DEADLINE_S = 1800


class MavenRunFiles:
    """A ``mvn verify`` run seen through its files in ``work``: the command (``mvn.cmd``), the log as it
    grows (``mvn.log``), and the exit code once the build has ended (``mvn.rc``, written whole, then
    renamed). What a test in a pytest-xdist worker sees of the run its controller started (tests/conftest.py)."""

    def __init__(self, work: Path):
        self.work = work
        self.build = work / "target"
        self.log = work / "mvn.log"
        self.start = time.monotonic()

    @property
    def command(self) -> str:
        return (self.work / "mvn.cmd").read_text(encoding="utf-8")

    def lines(self) -> list[str]:
        """The log's lines so far, without a last line Maven is still writing."""
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        return text[:text.rfind("\n") + 1].splitlines()

    def returncode(self, timeout: float) -> int | None:
        """The build's exit code, waiting at most ``timeout`` seconds for it; None while it runs."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                text = (self.work / "mvn.rc").read_text(encoding="utf-8")
            except FileNotFoundError:
                text = ""
            if text.endswith("\n"):
                return int(text)
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.2)

    def stop(self) -> None:
        pass  # the process that started the build owns it


class MavenRun(MavenRunFiles):
    """``mvn verify`` in java_bridge, started in the background with its output in a file: by the session's
    first hook (tests/conftest.py), so that the Java suite runs beside the Python tests, which mostly wait
    on processes; its test then waits for it. The build goes to a directory of its own (concurrent runs
    must not share java_bridge/target) and the package's hdp_plugin wheel is built with this Python.
    A thread writes the exit code to ``mvn.rc`` when the build ends."""

    def __init__(self, work: Path):
        super().__init__(work)
        cmd = _display_wrapper() + _maven_command() + [f"-Dhdp.build.dir={self.build}", f"-Dhdp.python={sys.executable}"]
        env = dict(os.environ)
        # the daemon tests train with the Python running this test suite (where hdp_plugin is importable)
        env.setdefault("HDP_BNC_PYTHON", sys.executable)
        (work / "mvn.cmd").write_text(" ".join(cmd), encoding="utf-8")
        self._out = open(self.log, "w", encoding="utf-8")
        self.proc = subprocess.Popen(cmd, cwd=JAVA_BRIDGE, env=env, stdout=self._out, stderr=subprocess.STDOUT)
        self._timer = threading.Timer(MAVEN_DEADLINE_S, self.proc.kill)
        self._timer.daemon = True
        self._timer.start()
        self._waiter = threading.Thread(target=self._record_exit, daemon=True)
        self._waiter.start()

    def _record_exit(self) -> None:
        code = self.proc.wait()
        self._out.flush()
        tmp = self.work / "mvn.rc.tmp"
        tmp.write_text(f"{code}\n", encoding="utf-8")
        os.replace(tmp, self.work / "mvn.rc")

    def stop(self) -> None:
        """Kill the build if it still runs (the session ended without its test)."""
        self._timer.cancel()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._waiter.join(timeout=30)
        self._out.close()


def maven_available() -> bool:
    return shutil.which("mvn") is not None and shutil.which("java") is not None


def test_java_bridge_maven_verify(request, tmp_path, capsys):
    run = getattr(request.config, "hdp_bnc_maven_run", None)
    shared = os.environ.get(MAVEN_WORK_ENV)
    if run is None and shared and hasattr(request.config, "workerinput"):
        _maven_command()  # skips, saying why, without Maven or a JDK
        if (Path(shared) / "mvn.log").exists():  # started by pytest-xdist's controller (tests/conftest.py)
            run = MavenRunFiles(Path(shared))
    if run is None:  # not started by the session's hooks (tests/conftest.py)
        run = MavenRun(tmp_path)
    _announce(capsys, "")
    _announce(capsys, "java_bridge: mvn verify (started with the session, beside the Python tests: the JUnit and "
                       "Weka checks, then the integration tests with the real daemon and Weka's Explorer); each "
                       "test class as it started:")
    shown = 0
    deadline = time.monotonic() + MAVEN_DEADLINE_S + 120
    while True:  # the classes Maven has started so far, then wait for more or for its end
        lines = run.lines()
        for line in lines[shown:]:
            running = re.match(r"\[INFO\] Running (\S+)", line)
            if running:
                _announce(capsys, f"  {running.group(1)}")
        shown = len(lines)
        returncode = run.returncode(timeout=1.0)
        if returncode is not None:
            break
        if time.monotonic() > deadline:
            pytest.fail(f"`mvn verify` gave no exit code in {MAVEN_DEADLINE_S + 120} s; its log: {run.log}")
    run.stop()
    output = run.lines()
    for line in output[shown:]:
        running = re.match(r"\[INFO\] Running (\S+)", line)
        if running:
            _announce(capsys, f"  {running.group(1)}")
    _announce(capsys, f"java_bridge: mvn verify ended with exit code {returncode} "
                       f"{time.monotonic() - run.start:.0f} s after it started")
    if returncode != 0:
        tail = "\n".join(output[-80:])
        pytest.fail(f"`{run.command}` in java_bridge failed with exit code {returncode}:\n{tail}")
    reports = list(run.build.glob("*-reports/*.txt"))
    assert reports, "Maven ran no tests"
    text = "\n".join(r.read_text(encoding="utf-8", errors="replace") for r in reports)
    assert "FAILURE" not in text
