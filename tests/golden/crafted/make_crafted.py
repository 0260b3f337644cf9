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

``BUILT`` holds the files made from other models: the kDB-2 vote model with bytes of its Arrow structure
changed (the checksum does not cover them), the coded breast cancer model with labels that look like
numbers to one language or another (``10d``, ``8f``, ``1_0``, Arabic-Indic digits), and a model of dates
(``dates.arff``); an accepted one of these gives ``data`` and ``class``, and ``probabilities``, what
Python predicts for every row of the data, which the Weka reader must predict too (within 1e-9; for the
dates in a JVM whose time zone is ``time_zone``, far from UTC).
"""

from __future__ import annotations

import csv
import json
import math
import struct
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

from hdp_plugin.model import modelfile as MF  # noqa: E402

MODELS = ROOT / "tests" / "golden" / "models"
GOLDEN = MODELS / "weather-kdb1-hdp.hdpbnc"

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
    "number-integer-past-the-bound": ("refuse", {FIT: b"-" + b"7" * 4301}, "an integer of 4301 digits (the bound is 4300)"),
    "valid-integer-at-the-bound": ("accept", {FIT: b"-" + b"7" * 4300}, "an integer of 4300 digits"),
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

def _doc_edit(model: Path, edit):
    """``model`` with its documents edited by ``edit(doc, training, batches)`` and the checksum recomputed."""
    doc, training, batches = MF.read_model_file(model)
    batches = [dict(b) for b in batches]
    edit(doc, training, batches)
    return MF.file_bytes(json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8"),
                         json.dumps(training, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), batches)


def _record_batch_table(data: bytes, batch: int):
    """The RecordBatch flatbuffer table of record batch ``batch`` and where its message's flatbuffer starts."""
    from hdp_plugin.data._ipc_check import _Buf, _Table
    from hdp_plugin.data._ipc_flat import FlatFile

    offset = FlatFile(data).blocks[batch][0]
    skip = 8 if struct.unpack_from("<i", data, offset)[0] == -1 else 4
    length = struct.unpack_from("<i", data, offset + skip - 4)[0]
    buf = _Buf(data[offset + skip: offset + skip + length])
    return _Table(buf, buf.u32(0)).table(2), offset + skip


def _vector_at(table, field: int) -> int:
    """Where a vector field's first element is, in its flatbuffer."""
    return table.vector(field, 1)[0]


def _field_node_length(value, node: int = 0, batch: int = 0):
    """Record batch ``batch``'s field node ``node`` (0 the branch column, 6 the cells' log_prob) declares
    ``value`` rows, or ``value(rows)``."""
    def change(data: bytes) -> bytes:
        rb, base = _record_batch_table(data, batch)
        at = base + _vector_at(rb, 1) + 16 * node
        out = bytearray(data)
        rows = struct.unpack_from("<q", data, at)[0]
        struct.pack_into("<q", out, at, value(rows) if callable(value) else value)
        return bytes(out)
    return change


def _top_byte(byte: int):
    return lambda v: struct.unpack("<q", struct.pack("<Q", (v & (1 << 56) - 1) | byte << 56))[0]


def _buffer_offset(index: int, value: int):
    """Record batch 0's buffer ``index`` starts at ``value`` in its body."""
    def change(data: bytes) -> bytes:
        rb, base = _record_batch_table(data, 0)
        out = bytearray(data)
        struct.pack_into("<q", out, base + _vector_at(rb, 2) + 16 * index, value)
        return bytes(out)
    return change


def _footer_batches(count: int):
    """The footer's vector of record batch blocks claims ``count`` blocks."""
    def change(data: bytes) -> bytes:
        from hdp_plugin.data._ipc_check import _Buf, _Table

        n = len(data)
        length = struct.unpack_from("<i", data, n - 10)[0]
        start = n - 10 - length
        buf = _Buf(data[start: n - 10])
        footer = _Table(buf, buf.u32(0))
        at = footer._field(3)
        out = bytearray(data)
        struct.pack_into("<I", out, start + at + buf.u32(at), count)
        return bytes(out)
    return change


def _bytes_of(model: Path, change):
    return lambda: change(model.read_bytes())


VOTE = MODELS / "vote-kdb2-hdp.hdpbnc"
CODED = MODELS / "breast-coded-kdb2-hdp.hdpbnc"
CODED_DATA = "tests/golden/models/breast-coded.csv"
#: the coded model's labels made to look like numbers: (attribute, label, new label); ``1_0``, an
#: Arabic-Indic 3 and ``0x1p2`` read as numbers to Python's float(), ``8f``, ``6d`` and ``0x1p2`` to Java's
#: Double.parseDouble, `` 5`` to both once trimmed; under the one rule none of these is a number, and
#: ``+6``, ``1.1e1`` and ``2.0`` are 6, 11 and 2
NUMBER_LIKE = [("tumor-size", "10", "1_0"), ("tumor-size", "8", "8f"), ("tumor-size", "3", "\u0663"),
               ("tumor-size", "5", " 5"), ("tumor-size", "6", "+6"), ("tumor-size", "11", "1.1e1"),
               ("age", "6", "6d"), ("inv-nodes", "2", "2.0"), ("inv-nodes", "4", "0x1p2")]


def _number_like(doc, training, batches):
    for member in doc["members"]:
        for a in member["attributes"]:
            for name, old, new in NUMBER_LIKE:
                if a["name"] == name:
                    a["values"][a["values"].index(old)] = new


def _repeated_parent(doc, training, batches):
    """The weather model's temperature (attribute 1) with the parents [0, 0], its tree one level deeper: each
    context of (class, outlook) has one child, the same outlook again."""
    net = doc["members"][0]
    net["structure"]["parents"][1] = [0, 0]
    net["trees"][1]["branching"] = [-1, 0, 0]


DATES = HERE / "dates.arff"
#: the time zone the Weka reader predicts the dates model in: 12:45 ahead of UTC (and no change of clocks in
#: the dates' ten days), so that a date read as the JVM's clock time is far from the same date read as UTC
DATES_TIME_ZONE = "Pacific/Chatham"


def write_dates() -> None:
    """400 rows of a date every 37 minutes from 2020-03-01, a number, and a class that changes at
    2020-03-05 10:00 (UTC), with every 13th row the other way."""
    import datetime as dt

    start = dt.datetime(2020, 3, 1)
    lines = ["@relation dates", "", "@attribute when date \"yyyy-MM-dd'T'HH:mm:ss\"", "@attribute x numeric",
             "@attribute class {early,late}", "", "@data"]
    for i in range(400):
        when = start + dt.timedelta(minutes=37 * i)
        late = (when >= dt.datetime(2020, 3, 5, 10)) != (i % 13 == 0)
        lines.append(f"'{when:%Y-%m-%dT%H:%M:%S}',{(i * 7919) % 101},{'late' if late else 'early'}")
    DATES.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _dates_model() -> bytes:
    import tempfile

    from hdp_plugin import BayesNetClassifier, read_dataset, save_model

    clf = BayesNetClassifier(structure="kdb", k=1, estimator="hdp", iterations=50, random_state=1, n_jobs=1)
    clf.fit(read_dataset(DATES))
    with tempfile.TemporaryDirectory() as tmp:
        path = save_model(clf, Path(tmp) / "dates.hdpbnc")
        return _doc_edit(path, lambda d, t, b: t.clear())  # no fit timings: the same bytes every run


# name -> (expect, the file's bytes, what it holds, what both messages say, extras of the manifest entry)
BUILT = {
    "bytes-negative-length-of-the-cells": (
        "refuse", _bytes_of(VOTE, _field_node_length(_top_byte(0xFA), node=6, batch=15)),
        "the kDB-2 vote model's last tree with the top byte of its log_prob column's length 0xfa (pyarrow "
        "aborted the process on it)", ["corrupted model file (unreadable record batch 15 (column 'log_prob' has -"],
        {}),
    "bytes-field-node-length-beyond-the-batch": (
        "refuse", _bytes_of(VOTE, _field_node_length(1 << 40)), "a first field node of 2^40 rows",
        ["corrupted model file (unreadable record batch 0 (column 'branch' has 1099511627776 rows"], {}),
    "bytes-buffer-outside-its-body": (
        "refuse", _bytes_of(VOTE, _buffer_offset(1, 1 << 33)), "the branch column's data at 2^33 in its body",
        ["a buffer points outside its record batch"], {}),
    "bytes-footer-claims-2-billion-batches": (
        "refuse", _bytes_of(VOTE, _footer_batches(0x7FFFFFFF)), "a footer whose vector of blocks claims 2^31 - 1",
        ["not an hdp-bnc model file (not a complete Arrow IPC file"], {}),
    "classes-dtype-200-million-characters": (
        "refuse", lambda: _doc_edit(GOLDEN, lambda d, t, b: d["classes"].update(dtype="<U200000000")),
        "classes.dtype <U200000000 (1.6 GB for two labels)", ["wider than the model document"], {}),
    "classes-dtype-unknown": (
        "refuse", lambda: _doc_edit(GOLDEN, lambda d, t, b: d["classes"].update(dtype="<c16")),
        "classes.dtype <c16", ["is not one a model has"], {}),
    "classes-values-permuted": (
        "refuse", lambda: _doc_edit(GOLDEN, lambda d, t, b: d["classes"]["values"].reverse()),
        "classes.values in the other order than class.values", ["classes.values[0] is not the class label"], {}),
    "classes-values-of-another-type": (
        "refuse", lambda: _doc_edit(GOLDEN, lambda d, t, b: d["classes"].update(dtype="<i8", values=[0, 1])),
        "classes of dtype <i8 where the labels are yes and no", ["classes.values[0] is not the class label"], {}),
    "parents-repeated": (
        "refuse", lambda: _doc_edit(GOLDEN, _repeated_parent), "an attribute with the parents [0, 0]",
        ["an attribute parent given twice"], {}),
    "types-integer-as-float": (
        "refuse", lambda: _doc_edit(GOLDEN, lambda d, t, b: d["members"][0]["trees"][0].update(nodes=3.0)),
        "a tree's nodes 3.0", ["members[0].trees[0].nodes is not an integer"], {}),
    "types-label-not-a-string": (
        "refuse", lambda: _doc_edit(GOLDEN, lambda d, t, b: d["members"][0]["attributes"][0]["values"].__setitem__(
            0, 1)), "the label 1, a number", ["members[0].attributes[0].values[0] is not a string"], {}),
    "types-boolean-as-integer": (
        "refuse", lambda: _doc_edit(GOLDEN, lambda d, t, b: d["members"][0].update(cardinalities=[3, True, 2, 2])),
        "a cardinality true", ["members[0].cardinalities[1] is not an integer"], {}),
    "types-parameter-of-another-type": (
        "refuse", lambda: _doc_edit(GOLDEN, lambda d, t, b: d["params"].update(m=True)), "params.m true",
        ["params.m is not a number"], {}),
    "types-parameter-out-of-its-domain": (
        "refuse", lambda: _doc_edit(GOLDEN, lambda d, t, b: d["params"].update(tying="all")), "params.tying all",
        ["params: ", "tying"], {}),
    "labels-given-twice": (
        "refuse", lambda: _doc_edit(GOLDEN, lambda d, t, b: d["members"][0]["attributes"][0]["values"].__setitem__(
            1, "sunny")), "outlook's labels sunny, sunny, rainy", ["a label given twice"], {}),
    "cut-points-on-a-nominal-attribute": (
        "refuse", lambda: _doc_edit(GOLDEN, lambda d, t, b: d["members"][0]["attributes"][0].update(
            cut_points=[1.0, 2.0])), "cut points on outlook", ["cut points on a nominal attribute"], {}),
    "tree-name-not-its-attributes": (
        "refuse", lambda: _doc_edit(GOLDEN, lambda d, t, b: d["members"][0]["trees"][1].update(name="outlook")),
        "the temperature tree named outlook", ["tree 1: its name is not its attribute's"], {}),
    "tree-cells-not-the-documents": (
        "refuse", lambda: _doc_edit(GOLDEN, lambda d, t, b: d["members"][0]["trees"][1].update(cells=21)),
        "the temperature tree's 20 cells said to be 21", ["tree 1: its cells are not the 21"], {}),
    "valid-labels-that-look-like-numbers": (
        "accept", lambda: _doc_edit(CODED, _number_like),
        "labels 1_0, 8f, an Arabic-Indic 3, ' 5', 6d, 0x1p2 (no numbers), +6, 1.1e1, 2.0 (numbers)", None,
        {"data": CODED_DATA, "class": "Class"}),
    "valid-seeds-beyond-64-bits": (
        "accept", lambda: _doc_edit(GOLDEN, lambda d, t, b: d["members"][0]["seed"].update(entropy=2**100 + 1)),
        "a member's seed entropy 2^100 + 1 (an integer of any size)", None, {}),
    "valid-training-document-of-any-values": (
        "accept", lambda: _doc_edit(GOLDEN, lambda d, t, b: t.update(fit_seconds="soon", streamed=True, engine=[1],
                                                                     discretization_sample=[])),
        "a training document whose figures are not numbers (nothing reads it but info)", None, {}),
    "valid-dates": (
        "accept", _dates_model, "a kDB-1 of dates (dates.arff): the clock times are UTC in both readers", None,
        {"data": "tests/golden/crafted/dates.arff", "class": "class", "time_zone": DATES_TIME_ZONE}),
}


def write_probabilities(path: Path, model: Path, data: str, cls: str) -> None:
    from hdp_plugin import read_dataset

    clf = MF.load_model(model)
    proba = clf.predict_proba(read_dataset(ROOT / data, class_attribute=cls))
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["row"] + [f"p_{c}" for c in clf.classes_])
        for i, row in enumerate(proba):
            w.writerow([i] + [f"{p:.17g}" for p in row])


#: what the class labels and attribute names of each accepted file decode to
DECODED = {
    "valid-unicode-names": ("yès 日本 😀", "Ωutlook"),
    "valid-escaped-pair": ("yès 😀", "Ωutlook/"),
    "valid-numbers": ("yes", "outlook"),
    "valid-nesting-at-the-bound": ("yes", "outlook"),
    "valid-integer-at-the-bound": ("yes", "outlook"),
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
    for old in [*HERE.glob("*.hdpbnc"), *HERE.glob("*.proba.csv")]:
        old.unlink()
    write_dates()
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
    for name, (expect, make, what, message, extras) in BUILT.items():
        (HERE / f"{name}.hdpbnc").write_bytes(make())
        entry = {"model": f"{name}.hdpbnc", "expect": expect, "holds": what, **extras}
        if message:
            entry["message"] = message
        if expect == "accept":
            doc, _, _ = MF.read_model_file(HERE / entry["model"])
            entry["class_values"] = doc["class"]["values"]
            entry["attribute_names"] = [a["name"] for a in doc["members"][0]["attributes"]]
            if "data" in extras:
                entry["probabilities"] = f"{name}.proba.csv"
                write_probabilities(HERE / entry["probabilities"], HERE / entry["model"], extras["data"], extras["class"])
        manifest[name] = entry
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=True) + "\n")


if __name__ == "__main__":
    main()
