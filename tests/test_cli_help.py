"""The real ``--help`` of every command at 80 columns (and narrower): what a user sees.

The help is hdp_plugin.cli.help's, not typer's (whose rendering changed within the range
pyproject.toml allows: 0.27 wrote required arguments as ``{data}`` in usage lines, 0.29 writes
``<bool>`` after every flag, and its table left the help about 22 columns at 80).
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


def _help(path, monkeypatch, width: int = WIDTH) -> str:
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.setenv("TERMINAL_WIDTH", str(width))
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    return result.output


#: the line that starts an option's entry: its flags at the indent of the section
_ENTRY = re.compile(r"^  (?:-\w, )?(--[\w-]+)|^      (--[\w-]+)")


def _option_blocks(text: str) -> dict[str, str]:
    """Each option's entry of the help (its flags, type, sentence and default), on one line."""
    blocks, current = {}, None
    for line in text.splitlines():
        m = _ENTRY.match(line)
        if m:
            current = m.group(1) or m.group(2)
            blocks[current] = ""
        elif not line.strip() or not line.startswith(" "):  # a blank line or a section's title
            current = None
        if current is not None:
            blocks[current] += " " + line.strip()
    return {k: " ".join(v.split()) for k, v in blocks.items()}


def _help_columns(text: str) -> list[int]:
    """The column at which an entry's text (an argument's, an option's, a command's) starts on each of
    its lines: after the flags and two spaces on the first, at its indent on the others."""
    columns, inside = [], False
    for line in text.splitlines():
        if not line.startswith(" "):  # a section's title (or the usage line, or a blank line)
            inside = line.endswith(":")
            continue
        if not inside:  # the description's paragraphs
            continue
        if re.match(r"^  \S|^      -", line):  # an entry's flags (or argument, or command)
            beside = re.match(r"^\s*\S+(?: \S+)*\s{2,}(\S)", line)
            if beside:
                columns.append(beside.start(1))
        else:
            columns.append(len(line) - len(line.lstrip()))
    return columns


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


#: the most lines of any command's help at 80 columns (train's was 238 with typer's table)
MAX_LINES = 140


@pytest.mark.parametrize("path,command", COMMANDS, ids=[" ".join(p) or "hdp-bnc" for p, _ in COMMANDS])
def test_help_is_legible_at_80_columns(path, command, monkeypatch):
    """Every help text keeps at least 30 columns, and no command's help runs past MAX_LINES lines."""
    text = _help(path, monkeypatch)
    lines = text.splitlines()
    assert len(lines) <= MAX_LINES, (len(lines), path)
    columns = _help_columns(text)
    assert columns and WIDTH - max(columns) >= 30, (max(columns), path)
    options = [p for p in command.params if p.param_type_name == "option" and not p.hidden]
    assert set(_option_blocks(text)) >= {next(o for o in p.opts if o.startswith("--")) for p in options}


def test_train_options_are_grouped(monkeypatch):
    text = _help(("train",), monkeypatch)
    titles = [line[:-1] for line in text.splitlines() if line.endswith(":") and not line.startswith(" ")]
    assert titles == ["Arguments", "Options", "Model", "Data", "Limits", "Batches and engines"]
    model = text.split("\nModel:\n", 1)[1].split("\n\n", 1)[0]
    assert "--structure" in model and "--seed" in model and "--separator" not in model


def test_a_narrow_terminal_puts_the_help_under_its_flags(monkeypatch):
    text = _help(("train",), monkeypatch, width=60)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 60
    at = lines.index("  -s, --structure <str>")
    assert lines[at + 1].startswith("      The network structure:")
    assert "[default: eskdb]" in _option_blocks(text)["--structure"]
