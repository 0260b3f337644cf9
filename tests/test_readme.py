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


def _text_files():
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT).parts
        if path.is_file() and path.suffix in (".py", ".md", ".java", ".sh", ".toml", ".props") and not (
            set(rel) & {".git", "target", "build", "__pycache__", ".pytest_cache"}
        ):
            yield path


def test_method_citations_point_to_sections_that_exist():
    # the code and docs cite docs/method.md by section; no file outside the repository is cited
    method = (ROOT / "docs" / "method.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"^## (\d+)\. ", method, flags=re.M))
    assert sections >= {str(i) for i in range(1, 9)}
    cited = 0
    for path in _text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        assert "ALGORITHM" + ".md" not in text, f"{path} cites a file that is not in the repository"
        for first, last in re.findall(r"docs/method\.md sections? (\d)(?:-(\d))?", text):
            for s in range(int(first), int(last or first) + 1):
                assert str(s) in sections, f"{path} cites docs/method.md section {s}, which does not exist"
                cited += 1
    assert cited >= 20
    for ref in ("Petitjean", "Martinez", "Sahami", "Friedman", "Fayyad"):
        assert ref in method.split("## References", 1)[1]
