"""Edges of the faces: model files that do not depend on the thread count."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from typer.testing import CliRunner

from hdp_plugin import cli
from hdp_plugin.model import load_model, modelfile

DATA = Path(__file__).parent / "data"
VOTE = DATA / "vote.arff"
runner = CliRunner()


def run(*args):
    return runner.invoke(cli.app, [str(a) for a in args], catch_exceptions=False)


# ------------------------------------------------------------------------------------------
# the thread count is not part of the model
# ------------------------------------------------------------------------------------------
def _without_timings(path: Path) -> bytes:
    """The file as it would be with an empty training document (fit timings change from run to run)."""
    doc_json = pa.ipc.open_file(path).schema.metadata[modelfile.MODEL_KEY]
    batches = modelfile.read_model_file(path)[2]
    return modelfile.file_bytes(doc_json, b"{}", batches)


def test_the_model_file_does_not_depend_on_the_threads(tmp_path):
    files = []
    for threads in (("-t", "1"), ("-t", "2"), ()):
        path = tmp_path / f"m{len(files)}.hdpbnc"
        result = run("train", VOTE, "-o", path, "-s", "kdb", "-k", "2", "-i", "40", "--seed", "3", *threads)
        assert result.exit_code == 0, result.output
        files.append(path)
    one, two, default = (_without_timings(p) for p in files)
    assert one == two == default
    doc = modelfile.read_model_file(files[0])[0]
    assert "n_jobs" not in doc["params"]
    assert load_model(files[1]).n_jobs is None  # a loaded model runs on all cores unless told otherwise
