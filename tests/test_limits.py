"""Resource limits and undecodable names (issue 21, items 2-6): each is one ``error:`` line naming the file,
attribute or option, refused before the memory is spent.

Inputs that used to exhaust the memory are run in a child process under an address-space cap, so that a
regression fails the test instead of the machine.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hdp_plugin import cli
from hdp_plugin.model import modelfile as MF

HERE = Path(__file__).parent
ROOT = HERE.parent
DATA = HERE / "data"
VOTE = DATA / "vote.arff"
GOLDEN = HERE / "golden" / "models" / "vote-kdb2-hdp.hdpbnc"
#: address-space cap of the child processes (numba and pyarrow reserve much virtual memory)
CAP_BYTES = 3 << 30
runner = CliRunner()


def run(*args):
    return runner.invoke(cli.app, [str(a) for a in args], catch_exceptions=False)


def one_line_error(result, *words, code=2):
    assert result.exit_code == code, (result.exit_code, result.output)
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    for w in words:
        assert w in result.stderr, result.stderr


def _capped():
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (CAP_BYTES, CAP_BYTES))


def cli_capped(*args, timeout: float = 300) -> subprocess.CompletedProcess:
    """``hdp-bnc ARGS`` in a child process under the memory cap."""
    return subprocess.run([sys.executable, "-m", "hdp_plugin", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          preexec_fn=_capped if sys.platform != "win32" else None)


def child_error(r: subprocess.CompletedProcess, *words, code: int = 2) -> None:
    assert r.returncode == code, (r.returncode, r.stderr[-3000:])
    lines = [ln for ln in r.stderr.splitlines() if not ln.startswith("compiling ")]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr[-3000:]
    for w in words:
        assert w in lines[0], lines[0]


# ------------------------------------------------------------------------------------------
# item 2: names that are not UTF-8
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("gz", [False, True], ids=["csv", "csv.gz"])
def test_a_csv_header_that_is_not_utf8_is_one_error(tmp_path, stream, gz):
    import gzip

    data = tmp_path / ("b.csv.gz" if gz else "b.csv")
    raw = b"a\xff,class\nx,yes\ny,no\n"
    data.write_bytes(gzip.compress(raw) if gz else raw)
    one_line_error(run("train", data, "-o", tmp_path / "m", *(["--stream"] if stream else [])),
                   data.name, "header", "not valid UTF-8")


def _crafted(path: Path, edit) -> Path:
    """The golden model with ``edit`` applied to its documents, the checksum recomputed."""
    from test_modelfile_crafted import write_crafted

    doc, training, batches = MF.read_model_file(GOLDEN)
    doc = copy.deepcopy(doc)
    edit(doc)
    return write_crafted(path, doc, training, [dict(b) for b in batches])


MODEL_EDITS = {
    "attribute": lambda d: d["attributes"][0].__setitem__("name", "a\ud800"),
    "label": lambda d: d["class"]["values"].__setitem__(0, "x\udcff"),
    "class": lambda d: d["class"].__setitem__("name", "c\ud800"),
}


@pytest.mark.parametrize("what", sorted(MODEL_EDITS))
def test_model_file_names_that_are_not_utf8_are_one_error(tmp_path, what):
    """A lone surrogate (JSON's \\ud800) in a model file's names: info and show printed a traceback."""
    model = _crafted(tmp_path / "m.hdpbnc", MODEL_EDITS[what])
    for args in (("info", model), ("info", "--json", model), ("show", model), ("predict", model, VOTE)):
        one_line_error(run(*args), "m.hdpbnc", "not valid UTF-8")


def test_model_file_column_names_that_are_not_utf8_are_one_error(tmp_path):
    """Invalid UTF-8 bytes in the cell table's column names (outside the checksum): a traceback, exit 1."""
    raw = GOLDEN.read_bytes()
    assert raw.count(b"log_prob") == 2  # the schema, at the start and in the footer
    model = tmp_path / "m.hdpbnc"
    model.write_bytes(raw.replace(b"log_prob", b"\xffog_prob"))
    for args in (("info", model), ("show", model), ("predict", model, VOTE)):
        one_line_error(run(*args), "m.hdpbnc", "column names", "not UTF-8")
