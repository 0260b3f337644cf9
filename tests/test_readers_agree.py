"""Both model readers judge every file alike: hdp_plugin's, and the Weka package's (java_bridge, through its
test class ReaderVerdicts, built here with Maven).

Alike means: both refuse the file, or both accept it with the same class labels and, on a fixed data set,
the same probabilities (within 1e-9), or both find that the data set lacks what the model needs; a crash
of either (an exception that is not the reader's own, or one while describing an accepted model) is a
failure. The files: the shared crafted corpus (tests/golden/crafted) and the golden models, seeded
structured edits of the golden models' documents and seeded byte edits of their Arrow structure, and a
small model whose dense tables would take gigabytes. The JVM runs in a time zone far from UTC, so that a
date read as the JVM's clock time would show.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from readers import (build_java, disagreement, edit_bytes, edit_documents, java_available, java_verdicts,
                     python_verdict, write_expanding_model)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
GOLDEN = HERE / "golden" / "models"
CRAFTED = HERE / "golden" / "crafted"
#: 12:45 ahead of UTC, no change of clocks around the dates of tests/golden/crafted/dates.arff
TIME_ZONE = {"TZ": "Pacific/Chatham"}

pytestmark = [pytest.mark.java,
              pytest.mark.skipif(not java_available(), reason="skipped: needs `mvn` and `java` on the PATH")]


@pytest.fixture(scope="module")
def classpath(tmp_path_factory):
    return build_java(tmp_path_factory.mktemp("java-build"))


def _golden() -> dict:
    return json.loads((GOLDEN / "manifest.json").read_text(encoding="utf-8"))


def _judge(classpath: str, cases: list[tuple[Path, Path, str]], what: dict) -> None:
    """Both readers on every case; one failure lists every file they judge differently."""
    java = java_verdicts(classpath, cases, env=TIME_ZONE)
    datasets: dict = {}
    differ = []
    for (model, data, cls), j in zip(cases, java):
        problem = disagreement(python_verdict(model, data, cls, datasets), j)
        if problem:
            differ.append(f"{model.name} ({what.get(model, '')}): {problem}"[:600])
    assert not differ, f"{len(differ)} of {len(cases)} files judged differently:\n" + "\n".join(differ)


def test_the_crafted_corpus_and_the_golden_models(classpath):
    weather = (ROOT / "tests" / "data" / "weather.nominal.arff", "play")
    cases, what = [], {}
    for entry in json.loads((CRAFTED / "manifest.json").read_text(encoding="utf-8")).values():
        data = (ROOT / entry["data"], entry["class"]) if "data" in entry else weather
        cases.append((CRAFTED / entry["model"], *data))
        what[CRAFTED / entry["model"]] = entry["holds"]
    for name, entry in _golden().items():
        for key in ("data", "edge_data"):
            cases.append((GOLDEN / entry["model"], ROOT / entry[key], entry["class"]))
    _judge(classpath, cases, what)


def _edited(tmp_path: Path, seed: int, n: int, edit) -> tuple[list, dict]:
    rng = random.Random(seed)
    golden = sorted(_golden().values(), key=lambda e: e["model"])
    cases, what = [], {}
    for i in range(n):
        entry = golden[i % len(golden)]
        data, how = edit(rng, GOLDEN / entry["model"])
        path = tmp_path / f"{i}-{entry['model']}"
        path.write_bytes(data)
        cases.append((path, ROOT / entry["data"], entry["class"]))
        what[path] = how
    return cases, what


def test_seeded_edits_of_the_documents(classpath, tmp_path):
    """Keys removed, list items swapped (class labels, classes.values, parents), repeated or removed, values of
    every JSON type and range put in, in the model or the training document, the checksum recomputed."""
    _judge(classpath, *_edited(tmp_path, 17, 360, edit_documents))


def test_seeded_edits_of_the_arrow_structure(classpath, tmp_path):
    """Bytes changed in the footer, in record batch messages and anywhere, which the checksum does not cover
    (lengths, offsets, counts, types, the schema's metadata)."""
    _judge(classpath, *_edited(tmp_path, 23, 360, lambda rng, p: edit_bytes(rng, p.read_bytes())))


def test_a_model_whose_dense_tables_would_take_gigabytes(classpath, tmp_path):
    """1.5 MB whose tables, laid out densely, take 3.8 GB: both predict it from its sparse cells."""
    model = write_expanding_model(tmp_path / "wide.hdpbnc", tmp_path / "wide.arff")
    java = java_verdicts(classpath, [(model, tmp_path / "wide.arff", "y")])[0]
    py = python_verdict(model, tmp_path / "wide.arff", "y")
    assert py["verdict"] == "accept" and len(py["proba"]) == 3, py
    assert disagreement(py, java) is None, (py, java)
    # Weka's graph of it: a bounded drawing (its large tables left out) or one line, not gigabytes
    assert "a drawing shows" in java.get("drawing", "") or 0 < java.get("drawing_chars", 0) < 2_000_000, java
