"""Suite-wide hooks: the Java suite starts with the session.

When tests/test_java_bridge.py's test is among the tests to run (and Maven and a JDK are there),
its ``mvn verify`` starts as soon as collection ends and runs beside the Python tests, which mostly
wait on processes (daemons, subprocesses of the command line); the test runs last and then waits for
it (:class:`test_java_bridge.MavenRun`), so that every Python test runs beside the Java suite.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path


def pytest_collection_modifyitems(session, config, items):
    """The Java suite's test last: waiting for ``mvn verify`` any earlier would hold the Python tests
    after it until Maven ends."""
    java = [item for item in items if item.path.name == "test_java_bridge.py"]
    if java:
        items[:] = [item for item in items if item.path.name != "test_java_bridge.py"] + java


def pytest_collection_finish(session):
    if not any(item.path.name == "test_java_bridge.py" for item in session.items):
        return
    import test_java_bridge

    if not test_java_bridge.maven_available():
        return  # the test skips itself, saying why
    work = Path(tempfile.mkdtemp(prefix="hdp-bnc-java-"))
    session.config.hdp_bnc_maven_run = test_java_bridge.MavenRun(work)
    session.config.hdp_bnc_maven_dir = work


def pytest_sessionfinish(session):
    run = getattr(session.config, "hdp_bnc_maven_run", None)
    if run is not None:
        run.stop()
        shutil.rmtree(session.config.hdp_bnc_maven_dir, ignore_errors=True)
