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


def write_expanding_model(path: Path, data: Path, values: int = 60_000, parent_values: int = 4_000) -> Path:
    """A kDB-1 model (m-estimates) of a few hundred kilobytes whose dense tables would take ``(3 + 2 *
    parent_values) * values`` entries (8 bytes each; 3.8 GB by default): attribute ``a`` of ``values`` labels
    has the parent ``b`` of ``parent_values``, and each of its nodes one cell; and ``data``, an ARFF file of
    3 rows for it. A reader must predict it from its sparse cells."""
    import math as m

    import numpy as np

    from hdp_plugin.model import modelfile as MF

    def tree(n_nodes, children, branch, card):
        w = 0.5 * card / (card - 1)  # a cell of 0.5, the rest backing off to the uniform distribution
        return {"branch": np.asarray(branch), "children": np.asarray(children),
                "log_backoff": np.full(n_nodes, m.log(w)), "cell_offsets": np.arange(n_nodes + 1),
                "cell_value": np.zeros(n_nodes, np.int64), "cell_log_prob": np.full(n_nodes, m.log(0.5))}

    p = parent_values
    n_a = 3 + 2 * p
    batches = [tree(n_a, [2, p, p] + [0] * (2 * p), [0, 0, 1] + list(range(p)) * 2, values),
               tree(3, [2, 0, 0], [0, 0, 1], p)]
    attrs = [{"name": "a", "values": [f"a{i}" for i in range(values)], "numeric": False, "cut_points": None},
             {"name": "b", "values": [f"b{i}" for i in range(p)], "numeric": False, "cut_points": None}]
    doc = {"format": MF.FORMAT_NAME, "format_version": [4, 0], "package_version": "0", "class": {
        "name": "y", "values": ["n", "p"]}, "classes": {"dtype": "object", "values": ["n", "p"]}, "n_classes": 2,
        "class_log_prior": [m.log(0.5)] * 2, "estimator": {"name": "m-estimate", "backoff": "uniform", "m": 1.0},
        "seed": 0, "params": {"structure": "kdb", "k": 1, "estimator": "m-estimate"}, "feature_names_in": False,
        "fit": {"rows": 3}, "combination": MF.COMBINATION, "members": [{
            "weight": 1.0, "seed": {"entropy": 0, "spawn_key": []}, "attributes": attrs,
            "cardinalities": [values, p], "structure": {"kind": "kdb", "k": 1, "kept": [0, 1], "parents": [[1], []],
                                                       "order": [1, 0], "mi": [0.0, 0.0], "info": {}},
            "trees": [{"attribute": 0, "name": "a", "cardinality": values, "branching": [-1, 1], "nodes": n_a,
                       "cells": n_a},
                      {"attribute": 1, "name": "b", "cardinality": p, "branching": [-1], "nodes": 3, "cells": 3}]}]}
    path.write_bytes(MF.file_bytes(json.dumps(doc).encode(), b"{}", batches))
    data.write_text("@relation wide\n@attribute a string\n@attribute b string\n@attribute y {n,p}\n@data\n"
                    f"a0,b0,n\na{values - 1},b{p - 1},p\na7,b9999999,?\n", encoding="utf-8")
    return path


#: values a structured edit puts into a model document: every JSON type, numbers of every range and form, text
#: that looks like a number to one language or another, dtypes
VALUES = [None, True, False, 0, 1, -1, 2, 3, 255, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**40, 2**63, 2**64, 10**30,
          10**400, 0.0, -0.0, 0.5, 1.0, 2.0, -1.0, 1e-320, 1e300, -1e308, "", "x", "1", "0", "10d", "8f", "1_0",
          "\u0663", " 1", "0x10", "inf", "NaN", "+1", ".5", "1e5", "True", "None", "eskdb", "hdp", "uniform",
          "parent", "datetime", "y", "n", "<U200000000", "<U5", "|b1", "<i8", ">i8", "<f8", "object", [], [0], [-1],
          [0, 0], [1, 1], [10**9], [None], [[]], [[0, 1]], {}, {"a": 1}]


def _paths(obj, prefix=()):
    """Every (path, value) of a JSON document, containers included."""
    yield prefix, obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


def edit_documents(rng, model: Path) -> tuple[bytes, str]:
    """``model`` with one or two edits of its model or training document (a key removed, two items of a list
    swapped, one repeated or removed, a value replaced by one of VALUES) and the checksum recomputed."""
    import copy

    from hdp_plugin.model import modelfile as MF

    doc, training, batches = MF.read_model_file(model)
    how = []
    for _ in range(rng.randint(1, 2)):
        target = training if rng.random() < 0.2 else doc
        paths = list(_paths(target))[1:]
        if not paths:
            continue
        where, old = rng.choice(paths)
        parent = target
        for k in where[:-1]:
            parent = parent[k]
        op = rng.randrange(5)
        if op == 0 and isinstance(parent, dict):
            del parent[where[-1]]
            how.append(f"del {list(where)}")
        elif op == 1 and isinstance(old, list) and len(old) > 1:
            i, j = rng.sample(range(len(old)), 2)
            old[i], old[j] = old[j], old[i]
            how.append(f"swap {list(where)} {i},{j}")
        elif op == 2 and isinstance(old, list) and old:
            old.insert(rng.randrange(len(old)), copy.deepcopy(rng.choice(old)))
            how.append(f"repeat in {list(where)}")
        elif op == 3 and isinstance(old, list) and old:
            old.pop(rng.randrange(len(old)))
            how.append(f"pop {list(where)}")
        else:
            parent[where[-1]] = copy.deepcopy(rng.choice(VALUES))
            how.append(f"{list(where)} = {parent[where[-1]]!r}"[:120])
    return MF.file_bytes(json.dumps(doc).encode(), json.dumps(training).encode(),
                         [dict(b) for b in batches]), "; ".join(how)


def edit_bytes(rng, data: bytes) -> tuple[bytes, str]:
    """``data`` with one to eight bytes changed, most of them in its Arrow structure (the footer, and the
    metadata of a record batch message), which the checksum does not cover."""
    from hdp_plugin.data._ipc_flat import FlatFile

    blocks = FlatFile(data).blocks
    footer = len(data) - 10 - int.from_bytes(data[-10:-6], "little", signed=True)
    out, how = bytearray(data), []
    for _ in range(rng.randint(1, 8)):
        where = rng.random()
        if where < 0.4:
            offset, meta, _ = rng.choice(blocks)
            i = offset + rng.randrange(meta)
        elif where < 0.7:
            i = footer + rng.randrange(len(data) - footer)
        else:
            i = rng.randrange(len(data))
        out[i] = rng.choice([0, 1, 0x7F, 0x80, 0xFA, 0xFF, rng.randrange(256)])
        how.append(f"{i}={out[i]}")
    return bytes(out), " ".join(how)


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
