"""The real ``--help`` of every command, as the typer that is installed renders it at 80 columns.

typer changed its rendering within the range pyproject.toml allows (0.27 wrote required arguments
as ``{data}`` in usage lines, 0.29 writes ``<bool>`` after every flag); hdp_plugin.cli.common's
HelpCommand keeps the help the same on all of them, and this test reads what a user sees.
"""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from hdp_plugin import config
from hdp_plugin.cli import app

WIDTH = 80


def _commands(group, path=()):
    yield path, group
    for name, cmd in sorted(getattr(group, "commands", {}).items()):
        yield from _commands(cmd, path + (name,))


COMMANDS = list(_commands(typer.main.get_command(app)))


def _help(path, monkeypatch) -> str:
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    monkeypatch.setenv("TERMINAL_WIDTH", str(WIDTH))
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    return result.output


def _option_blocks(text: str) -> dict[str, str]:
    """Each option's row of the help (its long name, type, sentence and default), on one line."""
    blocks, current = {}, None
    for line in text.splitlines():
        m = re.match(r"^│\s*(?:\*\s+)?(--[\w-]+)", line)
        if m:
            current = m.group(1)
            blocks[current] = ""
        elif line.startswith(("╰", "╭")):
            current = None
        if current is not None:
            blocks[current] += " " + line.strip("│ ")
    return {k: " ".join(v.split()) for k, v in blocks.items()}


def test_every_command_is_covered():
    names = {" ".join(p) for p, _ in COMMANDS}
    assert {"", "train", "predict", "evaluate", "info", "show", "daemon", "daemon run", "daemon submit",
            "daemon status", "daemon cancel", "daemon stop"} <= names


@pytest.mark.parametrize("path,command", COMMANDS, ids=[" ".join(p) or "hdp-bnc" for p, _ in COMMANDS])
def test_help_shows_no_symptom_and_every_default(path, command, monkeypatch):
    text = _help(path, monkeypatch)
    assert max(len(line) for line in text.splitlines()) <= WIDTH
    assert "<bool>" not in text and "BOOLEAN" not in text  # a flag takes no value (--json, not --json true)
    assert "…" not in text  # nothing cut at 80 columns
    assert "None" not in text  # a Python value no one can type
    usage = " ".join(text.split("Usage:", 1)[1].split("\n\n", 1)[0].split())
    assert usage.startswith("hdp-bnc" + "".join(" " + p for p in path) + " [OPTIONS]")
    assert "{" not in usage
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    for p in arguments:
        name = p.name.upper()
        assert (name if p.required else f"[{name}]") in usage.split(), (usage, p.name)
    blocks = _option_blocks(text)
    for p in command.params:
        if p.param_type_name != "option" or p.is_flag or p.required or p.hidden:
            continue
        long = next(o for o in p.opts if o.startswith("--"))
        block = blocks[long]
        if isinstance(p.show_default, str):
            assert f"[default: ({p.show_default})]" in block, block
        elif p.default is not None:
            assert f"[default: {p.default}]" in block, block
        else:  # no default value: the sentence says what happens without the option
            assert re.search(r"by default|without it|default", block), block


def test_help_says_what_the_options_do(monkeypatch):
    train = _option_blocks(_help(("train",), monkeypatch))
    evaluate = _option_blocks(_help(("evaluate",), monkeypatch))
    assert "folds" not in train["--seed"] and "draws the folds" in evaluate["--seed"]
    assert "all cores" in train["--threads"] and "at least 1" in train["--threads"]
    assert f"[default: ({config.DASK_LOCAL_WORKERS})]" in train["--workers"]
    assert "distributed extra" in train["--engine"]
    predict = _option_blocks(_help(("predict",), monkeypatch))
    assert "predictions" in predict["--threads"] and "sample" not in predict["--threads"]


def test_a_flag_takes_no_value(tmp_path):
    # the help no longer suggests `--json <bool>`; a flag given a value is a usage error, as before
    result = CliRunner().invoke(app, ["info", str(tmp_path / "m.hdpbnc"), "--json", "true"])
    assert result.exit_code == 2
