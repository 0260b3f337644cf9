"""Write the crafted model files that both model readers (Python's ``hdp_plugin.model`` and the Weka
package's ``ModelFile``) must judge alike.

Run from the repository root:  python tests/golden/crafted/make_crafted.py

Each file is the golden weather model (``tests/golden/models/weather-kdb1-hdp.hdpbnc``) with one
change, in the bytes of its model or training JSON document, in a value of its model document, or in
a value of its node table, and a checksum recomputed over the changed file, so the change is the
file's only fault. ``manifest.json`` lists every file with ``expect``: ``refuse`` (each reader raises
its model file error naming the file; where the manifest gives a ``message``, a list of texts, each
reader's message holds every one of them, else it says "corrupted model file") or ``accept`` (each
reader loads it, and the class labels and attribute names it reads are the manifest's
``class_values`` and ``attribute_names``). Python's test is ``tests/test_modelfile_crafted.py``,
Java's ``CraftedModelsTest``.

The refused files hold what no UTF-8 JSON text this package writes can hold: bytes that are not
UTF-8, ``\\uXXXX`` escapes that spell a lone surrogate, numbers outside JSON's grammar, ``NaN`` and
``Infinity``, nesting deeper than the readers' bound, a training document that is not an object; an
older or a newer major format version; weights or a back-off that the model cannot have; and nodes
that no fit writes (docs/model-format.md section 8), which both readers name by tree and node. The
node edits are in the temperature tree (tree 1) of docs/model-format.md section 7: node 3 (play = yes,
outlook = sunny) holds the cells 9 and 10, of the values 1 and 2.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

from hdp_plugin.model import modelfile as MF  # noqa: E402

GOLDEN = ROOT / "tests" / "golden" / "models" / "weather-kdb1-hdp.hdpbnc"

#: placeholders in the JSON text that the cases replace with raw bytes
LABEL = "@LABEL@"  # the first class label ("yes"), in class.values and classes.values
ATTR = "@ATTR@"  # the first attribute's name ("outlook"), in attributes[0].name and trees[0].name
FIT = '"@FIT@"'  # a value under fit.extra (a key the readers ignore)
KEY = "@KEY@"  # a key under fit (the readers ignore fit's keys)
TRAINING = '"@TRAINING@"'  # a value under training.extra

# name -> (expect, {placeholder: raw bytes}, what it holds)
CASES: dict[str, tuple[str, dict[str, bytes], str]] = {
    # bytes that are not UTF-8
    "utf8-invalid-byte-in-label": ("refuse", {LABEL: b"yes\xff"}, "the byte 0xff in a class label"),
    "utf8-lone-continuation-in-attribute": ("refuse", {ATTR: b"out\x80look"}, "a lone continuation byte"),
    "utf8-overlong-slash": ("refuse", {LABEL: b"y\xc0\xafs"}, "an overlong encoding of '/'"),
    "utf8-encoded-surrogate": ("refuse", {LABEL: b"y\xed\xa0\x80s"}, "U+D800 encoded as three bytes"),
    "utf8-truncated-sequence": ("refuse", {LABEL: b"yes\xe2\x82"}, "a three-byte sequence cut after two"),
    "utf8-beyond-unicode": ("refuse", {LABEL: b"y\xf4\x90\x80\x80s"}, "a code point above U+10FFFF"),
    "utf8-invalid-in-ignored-key": ("refuse", {KEY: b"k\xfe"}, "the byte 0xfe in a key of fit"),
    "utf8-invalid-in-training": ("refuse", {TRAINING: b'"t\xc3"'}, "a cut sequence in the training document"),
    # \uXXXX escapes that spell lone surrogates
    "surrogate-lone-high-in-label": ("refuse", {LABEL: b"yes\\ud800"}, "a lone high surrogate"),
    "surrogate-lone-low-in-attribute": ("refuse", {ATTR: b"\\udc00outlook"}, "a lone low surrogate"),
    "surrogate-reversed-pair": ("refuse", {LABEL: b"\\ude00\\ud83d"}, "a low then a high surrogate"),
    "surrogate-high-then-letter": ("refuse", {LABEL: b"\\ud83dA"}, "a high surrogate followed by a letter"),
    "surrogate-high-then-high": ("refuse", {LABEL: b"\\ud83d\\ud83d\\ude00"}, "two highs, then one low"),
    "surrogate-in-ignored-key": ("refuse", {KEY: b"\\udfff"}, "a lone surrogate in a key of fit"),
    "surrogate-in-training": ("refuse", {TRAINING: b'"\\udbff"'}, "a lone surrogate in the training document"),
    # numbers outside JSON's grammar, and the constants Python's json module takes by default
    "number-leading-zero": ("refuse", {FIT: b"01"}, "a number with a leading zero"),
    "number-trailing-point": ("refuse", {FIT: b"1."}, "a number ending in a point"),
    "number-leading-point": ("refuse", {FIT: b".5"}, "a number starting with a point"),
    "number-plus-sign": ("refuse", {FIT: b"+1"}, "a number with a plus sign"),
    "number-bare-exponent": ("refuse", {FIT: b"1e"}, "an exponent without digits"),
    "number-nan": ("refuse", {FIT: b"NaN"}, "NaN"),
    "number-infinity-in-training": ("refuse", {TRAINING: b"-Infinity"}, "-Infinity in the training document"),
    # structure
    "nesting-past-the-bound": ("refuse", {FIT: b"[" * 199 + b"]" * 199}, "containers nested 201 deep (the bound is 200)"),
    "nesting-past-the-bound-in-training": ("refuse", {TRAINING: b"{\"a\":" * 200 + b"0" + b"}" * 200},
                                           "objects nested 201 deep in the training document"),
    "training-not-an-object": ("refuse", {}, "a training document that is a list"),
    "byte-order-mark": ("refuse", {}, "a UTF-8 byte order mark before the model document"),
    # valid files that both read
    "valid-unicode-names": ("accept", {LABEL: "yès 日本 😀".encode(), ATTR: "Ωutlook".encode()},
                            "non-ASCII names as UTF-8 (two, three and four bytes)"),
    "valid-escaped-pair": ("accept", {LABEL: b"y\\u00e8s \\ud83d\\ude00", ATTR: b"\\u03a9utlook\\/"},
                           "the same kind of names as escapes (a surrogate pair, an escaped solidus)"),
    "valid-numbers": ("accept", {FIT: b"[-0, -0.0, 0.5e+2, 1E-2, 2e400, 123456789012345678901234567890]"},
                      "JSON's number forms, a number beyond a double's range, a big integer"),
    "valid-nesting-at-the-bound": ("accept", {FIT: b"[" * 198 + b"]" * 198}, "containers nested 200 deep"),
    "valid-whitespace": ("accept", {}, "whitespace around and inside both documents"),
}


def _set(column: str, i: int, value):
    """An edit of the temperature tree's (batch 1) node table: ``column[i] = value``."""
    def edit(doc, batches):
        batches[1][column] = batches[1][column].copy()
        batches[1][column][i] = value(batches[1][column][i]) if callable(value) else value
    return edit


def _doc(edit):
    return lambda doc, batches: edit(doc)


def _version(major: int):
    return _doc(lambda d: d.__setitem__("format_version", [major, 0]))


OLDER = ["is no longer read by", "(it reads 4.x); train the model again"]

# name -> (expect, a change of the model document or the node table, what it holds, what both messages say)
EDITS = {
    "format-1.0": ("refuse", _version(1), "a model of format 1.0", ["model format 1.0 "] + OLDER),
    "format-2.0": ("refuse", _version(2), "a model of format 2.0", ["model format 2.0 "] + OLDER),
    "format-3.0": ("refuse", _version(3), "a model of format 3.0", ["model format 3.0 "] + OLDER),
    "format-5.0": ("refuse", _version(5), "a model of format 5.0",
                   ["model format 5.0 is newer than", "(4.x); upgrade"]),
    "weights-not-summing-to-one": ("refuse", _doc(lambda d: d["members"][0].__setitem__("weight", 0.5)),
                                   "the one network of weight 0.5", ["the members' weights sum to 0.5"]),
    "backoff-not-the-estimators": ("refuse", _doc(lambda d: d["estimator"].__setitem__("backoff", "uniform")),
                                   "an hdp estimator that backs off to uniform", ["is not the hdp estimator's"]),
    "node-value-out-of-range": ("refuse", _set("cell_value", 10, 3), "node 3's value 2 made 3 (of 3 values)",
                                ["tree 1, node 3: a cell's value out of range"]),
    "node-cells-not-sorted": ("refuse", _set("cell_value", 9, 2), "node 3's values 1, 2 made 2, 2",
                              ["tree 1, node 3: cells not sorted by value"]),
    "node-backoff-above-one": ("refuse", _set("log_backoff", 3, 0.1), "node 3's back-off weight exp(0.1)",
                               ["tree 1, node 3: a back-off weight outside (0, 1]"]),
    "node-backoff-zero-without-mle": ("refuse", _set("log_backoff", 3, -math.inf), "a back-off weight 0 with hdp",
                                      ["tree 1, node 3: a back-off weight outside (0, 1]"]),
    "node-log-prob-positive": ("refuse", _set("cell_log_prob", 9, 0.5), "a log-probability 0.5",
                               ["tree 1, node 3: a log-probability that is not finite and at most 0"]),
    "node-log-prob-nan": ("refuse", _set("cell_log_prob", 9, math.nan), "a log-probability NaN",
                          ["tree 1, node 3: a log-probability that is not finite and at most 0"]),
    "node-distribution-not-one": ("refuse", _set("cell_log_prob", 9, lambda v: v - 0.1),
                                  "node 3's first cell 0.1 lower in log", ["tree 1, node 3: its distribution does "
                                                                           "not sum to one"]),
    "node-children-do-not-add-up": ("refuse", _set("children", 0, 3), "a root of 3 children",
                                    ["tree 1: the nodes' children do not add up to its nodes"]),
    "node-root-branch": ("refuse", _set("branch", 0, 1), "a root's branch 1", ["tree 1, node 0: a root's branch must "
                                                                              "be 0"]),
    "node-branch-out-of-range": ("refuse", _set("branch", 2, 2), "a class branch 2 of 2 classes",
                                 ["tree 1, node 2: branch value out of range"]),
    "node-children-not-sorted": ("refuse", _set("branch", 4, 0), "the children of node 1 reached by 0, 0, 2",
                                 ["tree 1, node 4: children not sorted by branch value"]),
    "node-without-a-cell": ("refuse", _set("cell_offsets", 4, 9), "node 3 with no cell",
                            ["tree 1, node 3: a node without a cell"]),
    "valid-wide-columns": ("accept", _doc(lambda d: None), "int32 branch, children and value columns", None),
    "valid-cell-limited": ("accept", _doc(lambda d: d["members"][0]["structure"]["info"].__setitem__(
        "cell_limited", {"n_star": 4, "k_star": 2, "cells": 90, "max_cells": 60})),
                           "a network that took a smaller model than its best to stay within its cell cap", None),
}

#: what the class labels and attribute names of each accepted file decode to
DECODED = {
    "valid-unicode-names": ("yès 日本 😀", "Ωutlook"),
    "valid-escaped-pair": ("yès 😀", "Ωutlook/"),
    "valid-numbers": ("yes", "outlook"),
    "valid-nesting-at-the-bound": ("yes", "outlook"),
    "valid-whitespace": ("yes", "outlook"),
    "valid-wide-columns": ("yes", "outlook"),
    "valid-cell-limited": ("yes", "outlook"),
}


def documents(name: str) -> tuple[bytes, bytes]:
    """The golden model's two JSON documents with the case's placeholders put in, as bytes."""
    doc, training, _ = MF.read_model_file(GOLDEN)
    network = doc["members"][0]
    label = LABEL if LABEL in CASES[name][1] else doc["class"]["values"][0]
    attr = ATTR if ATTR in CASES[name][1] else network["attributes"][0]["name"]
    doc["class"]["values"][0] = label
    doc["classes"]["values"][0] = label
    network["attributes"][0]["name"] = attr
    network["trees"][0]["name"] = attr
    if FIT in CASES[name][1]:
        doc["fit"]["extra"] = FIT.strip('"')
    if KEY in CASES[name][1]:
        doc["fit"][KEY] = 0
    if TRAINING in CASES[name][1]:
        training["extra"] = TRAINING.strip('"')
    model_json = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    training_json = json.dumps(training, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    for placeholder, raw in CASES[name][1].items():
        model_json = model_json.replace(placeholder.encode(), raw)
        training_json = training_json.replace(placeholder.encode(), raw)
    if name == "training-not-an-object":
        training_json = b"[" + training_json + b"]"
    elif name == "byte-order-mark":
        model_json = b"\xef\xbb\xbf" + model_json
    elif name == "valid-whitespace":
        model_json = b" \r\n\t" + model_json.replace(b",", b" ,\n\t").replace(b":", b" : ") + b"\n "
        training_json = b"\n" + training_json.replace(b",", b", ") + b"\t"
    return model_json, training_json


def edited(name: str) -> bytes:
    """The golden model with the change of ``EDITS[name]``, and its checksum."""
    doc, training, batches = MF.read_model_file(GOLDEN)
    batches = [dict(b) for b in batches]
    EDITS[name][1](doc, batches)
    model_json = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    training_json = json.dumps(training, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return MF.file_bytes(model_json, training_json, batches, wide=name == "valid-wide-columns")


def main() -> None:
    _, _, batches = MF.read_model_file(GOLDEN)
    for old in HERE.glob("*.hdpbnc"):
        old.unlink()
    manifest = {}
    cases = [(name, expect, what, None) for name, (expect, _, what) in CASES.items()]
    cases += [(name, expect, what, message) for name, (expect, _, what, message) in EDITS.items()]
    for name, expect, what, message in cases:
        if name in CASES:
            model_json, training_json = documents(name)
            data = MF.file_bytes(model_json, training_json, batches)
        else:
            data = edited(name)
        (HERE / f"{name}.hdpbnc").write_bytes(data)
        entry = {"model": f"{name}.hdpbnc", "expect": expect, "holds": what}
        if message:
            entry["message"] = message
        if expect == "accept":
            doc, _, _ = MF.read_model_file(GOLDEN)
            label, attr = DECODED[name]
            entry["class_values"] = [label] + doc["class"]["values"][1:]
            entry["attribute_names"] = [attr] + [a["name"] for a in doc["members"][0]["attributes"][1:]]
        manifest[name] = entry
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=True) + "\n")


if __name__ == "__main__":
    main()
