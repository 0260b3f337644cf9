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


def test_java_bridge_maven_verify(tmp_path, capsys):
    build = tmp_path / "target"  # not java_bridge/target: concurrent runs must not share a build directory
    # the package's hdp_plugin wheel is built with the Python running this test suite
    cmd = _display_wrapper() + _maven_command() + [f"-Dhdp.build.dir={build}", f"-Dhdp.python={sys.executable}"]
    env = dict(os.environ)
    # the daemon tests train with the Python running this test suite (where hdp_plugin is importable)
    env.setdefault("HDP_BNC_PYTHON", sys.executable)
    start = time.monotonic()
    _announce(capsys, "")
    _announce(capsys, "java_bridge: mvn verify is running (the JUnit and Weka checks, then the integration tests "
                       "with the real daemon and Weka's Explorer; several minutes); each test class as it starts:")
    output: list[str] = []
    with subprocess.Popen(cmd, cwd=JAVA_BRIDGE, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, encoding="utf-8", errors="replace") as proc:
        timer = threading.Timer(900, proc.kill)  # a hung build fails the test instead of the whole CI run
        timer.start()
        try:
            for line in proc.stdout:
                output.append(line.rstrip("\n"))
                running = re.match(r"\[INFO\] Running (\S+)", line)
                if running:
                    _announce(capsys, f"  {time.monotonic() - start:6.0f} s  {running.group(1)}")
        finally:
            timer.cancel()
        returncode = proc.wait()
    _announce(capsys, f"java_bridge: mvn verify ended with exit code {returncode} after "
                       f"{time.monotonic() - start:.0f} s")
    if returncode != 0:
        tail = "\n".join(output[-80:])
        pytest.fail(f"`{' '.join(cmd)}` in java_bridge failed with exit code {returncode}:\n{tail}")
    reports = list(build.glob("*-reports/*.txt"))
    assert reports, "Maven ran no tests"
    text = "\n".join(r.read_text(encoding="utf-8", errors="replace") for r in reports)
    assert "FAILURE" not in text
