"""The README's two commands stay true: the main job runs, and CI calls the test command verbatim."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    return [c.strip() for c in re.findall(r"```\n(.*?)\n\s*```", section, flags=re.S)]


def test_readme_has_exactly_two_commands_and_ci_runs_the_test_command():
    cmds = readme_commands()
    assert len(cmds) == 2
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert cmds[1] in ci.splitlines()


def test_readme_main_job_runs():
    setup, _, job = readme_commands()[0].partition(" && ")
    assert "pip install" in setup
    argv = shlex.split(job)
    assert argv[0] == "hdp-bnc"
    exe = shutil.which("hdp-bnc")
    cmd = [exe] + argv[1:] if exe else [sys.executable, "-m", "hdp_plugin"] + argv[1:]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "RMSE" in proc.stdout and "kDB-3" in proc.stdout
