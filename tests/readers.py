"""Both model readers side by side: hdp_plugin's, and the Weka package's through its test class
``ReaderVerdicts`` (java_bridge/src/test), for tests/test_readers_agree.py.

A verdict is a dict: ``verdict`` ``refuse`` (with the reader's one-line ``message``), ``accept`` (with the
class labels, and the probabilities of every row of the data, ``proba``, or why the data cannot be coded,
``unusable``), or ``crash`` (anything else: an exception that is not the reader's, or one while describing
or drawing an accepted model).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
JAVA_BRIDGE = ROOT / "java_bridge"


def python_verdict(model: Path, data: Path, class_name: str, datasets: dict | None = None) -> dict:
    """What hdp_plugin makes of ``model``: read, described (``hdp-bnc info`` and ``show``), and the rows of
    ``data`` predicted."""
    from hdp_plugin import read_dataset
    from hdp_plugin.errors import HDPError, ModelFileError
    from hdp_plugin.model import modelfile as MF
    from hdp_plugin.model.render import info_text, network_dot

    out = {"model": str(model)}
    try:
        contents = MF.read_model(model)
        clf = MF.load_model(model)
    except ModelFileError as exc:
        return {**out, "verdict": "refuse", "message": str(exc)}
    except Exception as exc:  # noqa: BLE001 - what the comparison reports
        return {**out, "verdict": "crash", "message": f"reading: {type(exc).__name__}: {exc}"}
    out.update(verdict="accept", classes=list(contents.class_attribute.values))
    try:
        info_text(model, contents)
        first = contents.networks[0]
        network_dot(first.attributes, first.structure, contents.class_attribute.name)
    except Exception as exc:  # noqa: BLE001
        return {**out, "verdict": "crash", "message": f"describing: {type(exc).__name__}: {exc}"}
    datasets = {} if datasets is None else datasets
    key = (str(data), class_name)
    if key not in datasets:
        datasets[key] = read_dataset(data, class_attribute=class_name)
    try:
        proba = clf.predict_proba(datasets[key])
    except HDPError as exc:
        return {**out, "unusable": str(exc)}
    except Exception as exc:  # noqa: BLE001
        return {**out, "verdict": "crash", "message": f"predicting: {type(exc).__name__}: {exc}"}
    return {**out, "proba": [[float(v) for v in row] for row in proba]}


def java_available() -> bool:
    return shutil.which("mvn") is not None and shutil.which("java") is not None


def build_java(work: Path) -> str:
    """Compile java_bridge's classes and test classes into ``work`` (offline when HDP_BNC_MAVEN_OFFLINE=1 or
    the local repository has what the build needs); return the class path that runs ReaderVerdicts."""
    cp = work / "cp.txt"
    cmd = [shutil.which("mvn"), "-q", "-B", "test-compile", "dependency:build-classpath",
           f"-Dhdp.build.dir={work}", f"-Dmdep.outputFile={cp}", "-Dmdep.includeScope=test"]
    if os.environ.get("HDP_BNC_MAVEN_OFFLINE", "") == "1":
        cmd.insert(1, "-o")
    done = subprocess.run(cmd, cwd=JAVA_BRIDGE, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return os.pathsep.join([str(work / "classes"), str(work / "test-classes"), cp.read_text().strip()])


def java_verdicts(classpath: str, cases: list[tuple[Path, Path, str]], env: dict | None = None,
                  timeout: float = 900) -> list[dict]:
    """ReaderVerdicts' verdicts on ``(model, data, class)`` cases, in one JVM (``env`` adds variables, such
    as ``TZ``)."""
    java = shutil.which("java")
    lines = "".join(f"{m}\t{d}\t{c}\n" for m, d, c in cases)
    done = subprocess.run([java, "-Djava.awt.headless=true", "-Xmx1g", "-cp", classpath,
                           "weka.classifiers.bayes.hdpbnc.ReaderVerdicts"], input=lines, capture_output=True,
                          text=True, encoding="utf-8", timeout=timeout, env={**os.environ, **(env or {})})
    out = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or len(out) != len(cases):
        raise RuntimeError(f"ReaderVerdicts exited {done.returncode} after {len(out)} of {len(cases)} cases:\n"
                           f"{done.stderr[-3000:]}")
    return out


def disagreement(py: dict, java: dict, tolerance: float = 1e-9) -> str | None:
    """None when both readers judge the file alike (both refuse; or both accept with the same class labels
    and, on the data, the same probabilities within ``tolerance``, or both cannot code it), else what
    differs. A crash on either side is a disagreement."""
    if "crash" in (py["verdict"], java["verdict"]):
        return f"a crash: python {py.get('message')!r}, java {java.get('message')!r}"
    if py["verdict"] != java["verdict"]:
        return f"python {py['verdict']}s ({py.get('message')}), java {java['verdict']}s ({java.get('message')})"
    if py["verdict"] == "refuse":
        return None
    if py["classes"] != java["classes"]:
        return f"class labels: python {py['classes']}, java {java['classes']}"
    if ("proba" in py) != ("proba" in java):
        return f"python {py.get('unusable') or 'predicts'}, java {java.get('unusable') or 'predicts'}"
    if "proba" not in py:
        return None
    for i, (a, b) in enumerate(zip(py["proba"], java["proba"])):
        if len(a) != len(b) or any(not isinstance(y, float) or not math.isclose(x, y, rel_tol=0, abs_tol=tolerance)
                                   for x, y in zip(a, b)):
            return f"row {i}: python {a}, java {b}"
    return None if len(py["proba"]) == len(java["proba"]) else "a different number of rows"


if __name__ == "__main__":  # python tests/readers.py DATA CLASS MODEL...: both verdicts, and whether they agree
    sys.path.insert(0, str(ROOT))
    import tempfile

    data, cls, models = Path(sys.argv[1]), sys.argv[2], [Path(m) for m in sys.argv[3:]]
    with tempfile.TemporaryDirectory() as work:
        cp = build_java(Path(work))
        for m, j in zip(models, java_verdicts(cp, [(m, data, cls) for m in models])):
            p = python_verdict(m, data, cls)
            print(m, p["verdict"], j["verdict"], disagreement(p, j) or "agree")
