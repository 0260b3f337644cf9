"""Suite-wide hooks: the Java suite starts with the session.

When tests/test_java_bridge.py's test is among the tests to run (and Maven and a JDK are there),
its ``mvn verify`` starts as soon as collection ends and runs beside the Python tests, which mostly
wait on processes (daemons, subprocesses of the command line); the test runs last and then waits for
it (:class:`test_java_bridge.MavenRun`), so that every Python test runs beside the Java suite.

With pytest-xdist installed (the ``test`` extra has it) and no ``-n`` given, the tests run in one process
per core, at most 4 (:func:`pytest_cmdline_main`); without it, or with ``-n 0``, in one. Under
pytest-xdist the controller starts the build once, when the first worker has collected the test, in a folder it names to the workers in the environment
(``test_java_bridge.MAVEN_WORK_ENV``); whichever worker runs the test waits for the build's exit code there
(:class:`test_java_bridge.MavenRunFiles`).

Under pytest-xdist the controller also compiles the kernels most tests use once, before the workers run a
test (:class:`KernelWarmUp`, tests/_warm_kernels.py): with numba's cache empty, every worker would
otherwise compile the same kernels at the same time. The workers wait for it (:func:`_kernels_warmed`);
Maven runs beside it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

JAVA_TEST = "test_java_bridge.py"
#: the environment variable naming the file whose appearance says the warm-up has ended
WARM_DONE_ENV = "HDP_BNC_TEST_WARM_DONE"
#: the longest a worker waits for the warm-up (seconds); then its tests compile what they need
WARM_DEADLINE_S = 900


class KernelWarmUp:
    """``python tests/_warm_kernels.py``, started by the controller; ``done`` appears (written whole,
    then renamed) once it has ended, holding its exit code; ``warm.log`` holds its output."""

    def __init__(self, work: Path):
        self.done = work / "warm.rc"
        self.log = open(work / "warm.log", "w", encoding="utf-8")
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("_warm_kernels.py"))],
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        threading.Thread(target=self._wait, name="hdp-bnc-warm-up", daemon=True).start()

    def _wait(self) -> None:
        rc = self.proc.wait()
        self.log.close()
        part = self.done.with_suffix(".part")
        try:
            part.write_text(str(rc), encoding="utf-8")
            os.replace(part, self.done)
        except OSError:  # the session has ended and removed the folder
            pass

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="session", autouse=True)
def _kernels_warmed():
    """A worker's first test waits for the controller's warm-up to end (whatever its outcome: a test
    compiles what is not cached), at most :data:`WARM_DEADLINE_S` seconds."""
    done = os.environ.get(WARM_DONE_ENV)
    if done:
        deadline = time.monotonic() + WARM_DEADLINE_S
        while not os.path.exists(done) and time.monotonic() < deadline:
            time.sleep(0.2)
    yield


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """``-n auto --maxprocesses 4`` unless told otherwise, when pytest-xdist is there: in addopts, the
    option would stop a pytest without the plugin from starting at all. Runs before xdist's own hook
    (the later plugin's first), which turns "auto" into a number."""
    if config.pluginmanager.hasplugin("xdist") and not hasattr(config, "workerinput") \
            and config.option.numprocesses is None:
        config.option.numprocesses = "auto"
        if not config.option.maxprocesses:
            config.option.maxprocesses = 4


def _xdist_controller(config) -> bool:
    return not hasattr(config, "workerinput") and getattr(config.option, "dist", "no") != "no"


def pytest_configure(config):
    if _xdist_controller(config):  # before the workers start, so that they inherit the folder's name
        import test_java_bridge

        work = Path(tempfile.mkdtemp(prefix="hdp-bnc-java-"))
        config.hdp_bnc_maven_dir = work
        os.environ[test_java_bridge.MAVEN_WORK_ENV] = str(work)
        config.hdp_bnc_warm_up = KernelWarmUp(work)
        os.environ[WARM_DONE_ENV] = str(config.hdp_bnc_warm_up.done)


def pytest_collection_modifyitems(session, config, items):
    """The Java suite's test last: waiting for ``mvn verify`` any earlier would hold the Python tests
    after it until Maven ends."""
    java = [item for item in items if item.path.name == JAVA_TEST]
    if java:
        items[:] = [item for item in items if item.path.name != JAVA_TEST] + java


def _start(config, work: Path) -> None:
    import test_java_bridge

    if test_java_bridge.maven_available():  # otherwise the test skips itself, saying why
        config.hdp_bnc_maven_run = test_java_bridge.MavenRun(work)


def pytest_collection_finish(session):
    config = session.config
    if hasattr(config, "workerinput") or not any(item.path.name == JAVA_TEST for item in session.items):
        return  # a pytest-xdist worker: the controller starts the build
    work = Path(tempfile.mkdtemp(prefix="hdp-bnc-java-"))
    config.hdp_bnc_maven_dir = work
    _start(config, work)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    config = node.config
    """The controller's start of the build: once, when the first worker has collected the Java test."""
    if getattr(config, "hdp_bnc_maven_run", None) is None and getattr(config, "hdp_bnc_maven_dir", None) \
            and any(JAVA_TEST + "::" in i for i in ids):
        _start(config, config.hdp_bnc_maven_dir)


def pytest_sessionfinish(session):
    config = session.config
    for name in ("hdp_bnc_maven_run", "hdp_bnc_warm_up"):
        run = getattr(config, name, None)
        if run is not None:
            run.stop()
    work = getattr(config, "hdp_bnc_maven_dir", None)
    if work is not None:
        shutil.rmtree(work, ignore_errors=True)
