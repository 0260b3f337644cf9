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
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

JAVA_TEST = "test_java_bridge.py"


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
    run = getattr(config, "hdp_bnc_maven_run", None)
    if run is not None:
        run.stop()
    work = getattr(config, "hdp_bnc_maven_dir", None)
    if work is not None:
        shutil.rmtree(work, ignore_errors=True)
