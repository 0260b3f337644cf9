"""What the commands say while and after they work: the phases of the progress line, train's two
named durations (as info names them), and daemon cancel's one line."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hdp_plugin.cli import commands as cli, progress as cli_progress
from hdp_plugin.daemon import client

DATA = Path(__file__).resolve().parent / "data"
WEATHER = DATA / "weather.nominal.arff"


def run(*args):
    return CliRunner().invoke(cli.app, [str(a) for a in args], catch_exceptions=False)


class _Bar:
    """Records what the commands do with a rich Progress: the visible line after every change."""

    def __init__(self):
        self.tasks, self.seen = {}, []

    def add_task(self, description, total=None, **_):
        tid = len(self.tasks)
        self.tasks[tid] = {"description": description, "total": total, "completed": 0, "visible": True}
        self._record(tid)
        return tid

    def update(self, tid, **kw):
        self.tasks[tid].update({k: v for k, v in kw.items() if v is not None or k == "visible"})
        self._record(tid)

    def advance(self, tid, n=1):
        self.tasks[tid]["completed"] += n

    def _record(self, tid):
        t = self.tasks[tid]
        if t["visible"]:
            counts = "" if t["total"] is None else f" {t['completed']}/{t['total']}"
            self.seen.append(t["description"] + counts)


@pytest.fixture
def bar(monkeypatch):
    fake = _Bar()

    @contextmanager
    def progress(self):
        yield fake

    monkeypatch.setattr(cli_progress._Out, "progress", progress)
    return fake


def _phases(seen):
    """The distinct phases in order (the sampling counts folded into one)."""
    out = []
    for s in seen:
        name = s.split(" ", 1)[0] if s.startswith("sampling") else s
        if not out or out[-1] != name:
            out.append(name)
    return out


def test_train_shows_its_phases_in_order(tmp_path, bar):
    model = tmp_path / "m.hdpbnc"
    result = run("train", WEATHER, "-o", model, "-s", "kdb", "-k", "1", "-i", "200")
    assert result.exit_code == 0, result.output
    assert _phases(bar.seen) == [f"reading {WEATHER}", "discretising, learning the structure", "sampling",
                                 f"writing {model}"]
    sampling = [s for s in bar.seen if s.startswith("sampling")]
    assert sampling[-1] == "sampling kDB-1 hdp 200/200"
    assert all(" 0/" not in s for s in bar.seen if not s.startswith("sampling"))  # no count outside sampling


def test_evaluate_shows_the_phase_of_each_fold(bar):
    result = run("evaluate", WEATHER, "-s", "nb", "-e", "laplace,hdp", "-i", "100", "--csv")
    assert result.exit_code == 0, result.output
    phases = _phases(bar.seen)
    assert phases[0] == f"reading {WEATHER}"
    assert "discretising, learning the structure and the tables" in phases  # laplace: no sampling
    assert "discretising, learning the structure" in phases and "sampling" in phases


def test_train_names_its_two_durations_as_info_does(tmp_path):
    model = tmp_path / "m.hdpbnc"
    result = run("train", WEATHER, "-o", model, "-e", "laplace", "-s", "nb")
    assert result.exit_code == 0, result.output
    summary = result.stderr.strip().splitlines()[-1]
    assert "; fit time " in summary and ", wall time " in summary and "trained in" not in summary
    fit = summary.split("fit time ", 1)[1].split(" s", 1)[0]
    info = run("info", model)
    assert f"fit time {fit} s" in info.stdout  # the same figure, by the same name


def test_daemon_cancel_says_what_it_did(tmp_path):
    spool = tmp_path / "spool"
    client.publish(spool, WEATHER, {"structure": "nb", "estimator": "laplace"}, name="j1")
    result = run("daemon", "cancel", spool, "j1")
    assert result.exit_code == 0
    assert result.stderr.startswith("cancel requested for j1 (queued)")
    result = run("daemon", "cancel", spool, "nosuchjob")
    assert result.exit_code == 0 and result.stderr.startswith("nosuchjob is not in the spool")
    assert not (spool / "cancel" / "nosuchjob").exists()
