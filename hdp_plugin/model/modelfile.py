"""The versioned model file: a fitted :class:`BayesNetClassifier` as one Arrow IPC file.

The file is the contract between Python, the daemon and the Java classifier inside Weka; the
format (4.0) is documented field by field in ``docs/model-format.md``. In short:

* one Arrow IPC **file** (``pyarrow.ipc.open_file`` reads it), uncompressed, no dictionaries;
* a model is a **list of weighted networks** (one, of weight 1, for NB, TAN, kDB and SkDB; ESKDB's
  members); one record batch per context tree, the networks' trees in order, one row per **node**:
  its branch value, its number of children, its back-off weight, and its **observed cells** (a list of
  value and log-probability pairs);
* everything else (attributes with their labels and cut points, the class, the structures, the
  class log-prior, the estimator and its settings, the seeds, the versions) is a UTF-8 JSON document
  in the schema's custom metadata under ``hdp_plugin.model``; fit timings, which differ from run to
  run, sit apart under ``hdp_plugin.training``;
* ``hdp_plugin.sha256`` is the SHA-256 of both JSON documents and of every column's values, so a
  flipped bit is an error rather than a wrong answer.

No pickle anywhere: loading a file never runs code from it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc

from .. import config
from .._fs import check_output, replacing
from .._version import __version__
from ..data._ipc_flat import FlatFile, IpcFault
from ..data.conform import label_number
from ..data.dataset import TEMPORAL_KINDS, Attribute
from ..errors import ModelFileError, NotFittedError, ParameterError
from ..hdp.tables import ProbabilityTables, children_of
from ..params import NAMES, canonical_params, check_all, default, resolved_iterations, usable_k
from ..structure import Structure

#: the value of the model document's ``format`` field: what tells our files from foreign ones
FORMAT_NAME = "hdp-bnc-model"
#: schema metadata keys
MODEL_KEY = b"hdp_plugin.model"
TRAINING_KEY = b"hdp_plugin.training"
CHECKSUM_KEY = b"hdp_plugin.sha256"
#: the largest value a narrow file's branch, children and cell value columns hold (uint16)
NARROW_MAX = 0xFFFF


def node_schema(index_type: pa.DataType) -> pa.Schema:
    """The node table: per node its branch value (0 at a root), its number of children, the log of its
    back-off weight, and its observed cells; ``index_type`` is uint16 where every cardinality of the
    model (the class's included) is at most 65,535, else int32."""
    cell = pa.struct([pa.field("value", index_type, nullable=False),
                      pa.field("log_prob", pa.float64(), nullable=False)])
    return pa.schema([
        pa.field("branch", index_type, nullable=False),
        pa.field("children", index_type, nullable=False),
        pa.field("log_backoff", pa.float64(), nullable=False),
        pa.field("cells", pa.list_(pa.field("item", cell, nullable=False)), nullable=False),
    ])


NARROW_SCHEMA = node_schema(pa.uint16())
WIDE_SCHEMA = node_schema(pa.int32())


def _columns(index: str) -> list[str]:
    """The node table's columns as a reader compares them (docs/model-format.md section 2)."""
    return [f"branch: {index}", f"children: {index}", "log_backoff: double",
            f"cells: list<struct<value: {index} not null, log_prob: double not null> not null>"]


NARROW_COLUMNS, WIDE_COLUMNS = _columns("uint16"), _columns("int32")
#: the numpy type of every primitive Arrow type of the node table
_NUMPY_TYPES = {pa.uint16(): np.dtype("<u2"), pa.int32(): np.dtype("<i4"), pa.float64(): np.dtype("<f8")}
#: the classifier parameters a model document stores (hdp_plugin.params); n_members only for ensembles.
#: categorical_features is not stored: a declared column is stored as the nominal attribute it became
#: (its values its domain), so a model trained from a CSV with declared columns is the one trained from
#: the ARFF that declares them; keep_columns neither: the columns a model left out are its ``left_out``.
#: n_jobs is not stored either: the threads of a fit are a setting of the run, not of the model, so the
#: same seed writes the same file whatever the threads
_INIT_PARAMS = tuple(n for n in NAMES if n not in ("n_members", "categorical_features", "keep_columns", "n_jobs"))
#: fit_info_ keys that are figures of the model (kept in the model document)
_INFO_MODEL_KEYS = ("rows", "dropped_missing_class", "warnings", "n_samples", "burn_in")
#: fit_info_ keys that change from run to run (kept in the training document)
_INFO_TIMING_KEYS = ("structure_seconds", "sampler_seconds", "fit_seconds", "compile_seconds", "streamed", "engine", "pass_seconds",
                     "discretization_sample")
#: the combination of a model's networks, as the model document states it
COMBINATION = "weighted mean of the members' normalised class probabilities"


# ------------------------------------------------------------------------------------------
# writing
# ------------------------------------------------------------------------------------------
def _jsonable(obj):
    """Plain JSON values: numpy scalars and arrays become Python ones, non-finite floats None."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if obj is None or isinstance(obj, str):
        return obj
    return str(obj)


def _classes_document(classes: np.ndarray) -> dict:
    """``classes_`` with its dtype, so that a loaded model returns labels of the same type."""
    classes = np.asarray(classes)
    if classes.dtype.kind in "biufU":
        return {"dtype": classes.dtype.str, "values": _jsonable(classes.tolist())}
    return {"dtype": "object", "values": [v if isinstance(v, (str, int, float)) else str(v)
                                          for v in classes.tolist()]}


def _node_columns(tables: ProbabilityTables, index: np.dtype) -> list[list]:
    """Every tree's record batch of the node table, in its schema's order: branch, children and
    log_backoff as numpy arrays, the cells as (offsets, values, log-probabilities)."""
    t = tables
    batches = []
    for tr in range(t.n_trees):
        lo, hi = int(t.tree_node_start[tr]), int(t.tree_node_start[tr + 1])
        c0, c1 = int(t.cell_start[lo]), int(t.cell_start[hi])
        batches.append([
            np.where(t.node_parent[lo:hi] >= 0, t.node_branch[lo:hi], 0).astype(index),
            t.child_count[lo:hi].astype(index),
            np.ascontiguousarray(t.log_backoff[lo:hi], "<f8"),
            ((t.cell_start[lo:hi + 1] - c0).astype("<i4"), t.cell_value[c0:c1].astype(index),
             np.ascontiguousarray(t.log_probs[c0:c1], "<f8")),
        ])
    return batches


def _digest(model_json: bytes, training_json: bytes, batches) -> str:
    """SHA-256 of the two JSON documents, then of every column of every batch, little-endian (the cells:
    their int32 offsets, then their values, then their log-probabilities)."""
    h = hashlib.sha256()
    h.update(model_json)
    h.update(training_json)
    for cols in batches:
        for col in cols:
            for part in (col if isinstance(col, tuple) else (col,)):
                h.update(np.ascontiguousarray(part).view(np.uint8))  # little-endian arrays: their bytes
    return h.hexdigest()


def _network_document(member) -> dict:
    """One network's part of the model document: weight, seed, attributes, cardinalities, structure, trees."""
    tables, attributes, structure = member.tables, member.attributes, member.structure
    names = [a.name for a in attributes]
    ranges = member.concentration_ranges
    trees = []
    for t in range(tables.n_trees):
        c = int(tables.attrs[t])
        vars_ = tables.branch_vars[int(tables.tree_var_start[t]) : int(tables.tree_var_start[t + 1])]
        lo, hi = int(tables.tree_node_start[t]), int(tables.tree_node_start[t + 1])
        tree = {"attribute": c, "name": names[c], "cardinality": int(tables.tree_card[t]),
                "branching": [int(v) for v in vars_], "nodes": hi - lo,
                "cells": int(tables.cell_start[hi] - tables.cell_start[lo])}
        if ranges is not None:
            tree["concentrations"] = ranges[t]
        trees.append(tree)
    st = structure
    return {
        "weight": float(member.weight),
        "seed": member.seed,
        "attributes": [
            {"name": a.name, "values": list(a.values), "numeric": bool(a.numeric),
             "cut_points": None if a.cut_points is None else [float(x) for x in a.cut_points],
             **({"temporal": a.temporal} if a.temporal is not None else {})}
            for a in attributes
        ],
        "cardinalities": [int(x) for x in member.cardinalities],
        "structure": {"kind": st.kind, "k": int(st.k), "kept": [int(x) for x in st.kept],
                      "parents": [[int(p) for p in ps] for ps in st.parents],
                      "order": [int(x) for x in st.order], "mi": _jsonable(np.asarray(st.mi)),
                      "info": _jsonable(st.info)},
        "trees": trees,
    }


def model_document(clf) -> tuple[dict, dict]:
    """The model and training JSON documents of a fitted classifier (see docs/model-format.md)."""
    info = clf.fit_info_
    params = {p: getattr(clf, p, None) for p in _INIT_PARAMS}
    params["discretization"] = getattr(clf, "discretization_", clf.discretization)  # "auto" resolved
    seed = params["random_state"]
    params["random_state"] = int(seed) if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) else None
    members = clf.members_
    if clf.structure == "eskdb":
        params["n_members"] = int(clf.n_members)
    hdp = clf.estimator == "hdp"
    # "auto" resolved: the number the sampler ran (without a sampler, the single networks' default)
    params["iterations"] = int(info["iterations"]) if hdp and "iterations" in info else \
        resolved_iterations(clf.structure if hdp else "", clf.iterations)
    # the parameters that do not matter at their defaults: every face writes the same document for a model
    params = canonical_params(params)
    estimator = {"name": clf.estimator, "backoff": "parent" if hdp else "uniform"}
    if hdp:
        estimator.update(iterations=params["iterations"], burn_in=int(info["burn_in"]),
                         n_samples=int(info["n_samples"]), tying=clf.tying, window=config.WINDOW)
        if "tolerance" in info:  # iterations="auto": the stopping rule, and what each tree ran
            estimator.update(tolerance=float(info["tolerance"]),
                             tree_iterations=[int(v) for v in info["tree_iterations"]])
    elif clf.estimator == "m-estimate":
        estimator["m"] = float(clf.m)
    elif clf.estimator == "mle":
        estimator["m"] = 0.0
    first = members[0].tables
    doc = {
        "format": FORMAT_NAME,
        "format_version": [config.MODEL_FORMAT_MAJOR, config.MODEL_FORMAT_MINOR],
        "package_version": __version__,
        "class": {"name": clf.class_attribute_.name, "values": list(clf.class_attribute_.values)},
        "classes": _classes_document(clf.classes_),
        "n_classes": int(first.n_classes),
        "class_log_prior": [float(x) for x in first.log_prior],
        "estimator": estimator,
        "seed": params["random_state"],
        "params": _jsonable(params),
        "feature_names_in": hasattr(clf, "feature_names_in_"),
        "fit": _jsonable({k: info[k] for k in _INFO_MODEL_KEYS if k in info}),
        "combination": COMBINATION,
        "members": [_network_document(m) for m in members],
    }
    left = set(getattr(clf, "left_out_", ()))
    if left:  # the training input's attributes left out as row identifiers, at their places in it
        doc["left_out"] = [{"name": n, "index": i} for i, n in enumerate(clf._array_names_) if n in left]
    training = _jsonable({k: info[k] for k in _INFO_TIMING_KEYS if k in info})
    return doc, training


def _schema_of(members) -> pa.Schema:
    """The narrow schema unless a cardinality of the model exceeds what uint16 holds."""
    widest = max([int(m.tables.n_classes) for m in members]
                 + [int(c) for m in members for c in np.asarray(m.cardinalities)])
    return NARROW_SCHEMA if widest <= NARROW_MAX else WIDE_SCHEMA


def save_model(clf, path) -> Path:
    """Write a fitted classifier to ``path`` as a model file, atomically.

    The file is written under a temporary name in the same directory and renamed over ``path``
    in one step, so a reader never sees half a model.

    Parameters
    ----------
    clf : BayesNetClassifier
        A fitted classifier.
    path : str or os.PathLike
        Where to write; by convention the suffix is ``.hdpbnc`` (any name works).

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    NotFittedError
        If ``clf`` is not fitted.
    ModelFileError
        If the file cannot be written.
    """
    if "members_" not in getattr(clf, "__dict__", {}):
        raise NotFittedError(f"This {type(clf).__name__} instance is not fitted yet; fit it before save_model")
    path = Path(path)
    target, problem = check_output(path)
    if problem:
        raise ModelFileError(f"{path}: {problem}; save the model to a regular file")
    if os.path.islink(path):  # write through a link: replace the file it names, not the link
        path = target
    doc, training = model_document(clf)
    schema = _schema_of(clf.members_)
    index = _NUMPY_TYPES[schema.field("branch").type]
    batches = [cols for m in clf.members_ for cols in _node_columns(m.tables, index)]
    model_json = json.dumps(doc, allow_nan=False, separators=(",", ":")).encode("utf-8")
    training_json = json.dumps(training, allow_nan=False, separators=(",", ":")).encode("utf-8")
    try:
        with replacing(path, fsync=True) as tmp, pa.OSFile(str(tmp), "wb") as sink:  # written by Arrow, not Python
            _write(sink, schema, model_json, training_json, batches)
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot write the model file: {exc.strerror or exc}") from exc
    return path


def _write(sink, schema: pa.Schema, model_json: bytes, training_json: bytes, batches) -> None:
    schema = schema.with_metadata({
        MODEL_KEY: model_json,
        TRAINING_KEY: training_json,
        CHECKSUM_KEY: _digest(model_json, training_json, batches).encode("ascii"),
    })
    with pa.ipc.new_file(sink, schema, options=pa.ipc.IpcWriteOptions(compression=None)) as writer:
        for cols in batches:
            writer.write_batch(_record_batch(cols, schema))


def file_bytes(model_json: bytes, training_json: bytes, batches: list[dict[str, np.ndarray]],
               wide: bool = False) -> bytes:
    """A model file's bytes from its two documents and its record batches as :func:`read_model_file`
    returns them, with the checksum that matches them: what tests and tools write to craft a file whose
    only faults are the ones they put in it."""
    schema = WIDE_SCHEMA if wide else NARROW_SCHEMA
    index = _NUMPY_TYPES[schema.field("branch").type]
    cols = [[np.asarray(b["branch"]).astype(index), np.asarray(b["children"]).astype(index),
             np.asarray(b["log_backoff"], "<f8"),
             (np.asarray(b["cell_offsets"], "<i4"), np.asarray(b["cell_value"]).astype(index),
              np.asarray(b["cell_log_prob"], "<f8"))] for b in batches]
    sink = pa.BufferOutputStream()
    _write(sink, schema, model_json, training_json, cols)
    return sink.getvalue().to_pybytes()


def _record_batch(cols: list, schema: pa.Schema) -> pa.RecordBatch:
    """One record batch of the node table from numpy columns (pyarrow checks the cells' offsets)."""
    branch, children, log_backoff, (offsets, values, log_probs) = cols
    cell_type = schema.field("cells").type
    struct = pa.StructArray.from_arrays([pa.array(values, cell_type.value_type.field("value").type),
                                         pa.array(log_probs, pa.float64())],
                                        fields=list(cell_type.value_type))
    cells = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), struct, type=cell_type)
    arrays = [pa.array(branch, schema.field("branch").type), pa.array(children, schema.field("children").type),
              pa.array(log_backoff, pa.float64()), cells]
    return pa.record_batch(arrays, schema=schema)


# ------------------------------------------------------------------------------------------
# reading
# ------------------------------------------------------------------------------------------
class _Corrupt(Exception):
    """Internal: a consistency check failed (turned into ModelFileError with the path)."""


def _need(cond, what: str) -> None:
    if not cond:
        raise _Corrupt(what)


#: the deepest nesting of objects and arrays a model file's JSON documents may have (the Weka package's
#: reader has the same bound, so that both readers refuse the same files)
MAX_JSON_NESTING = 200


#: the most digits of an integer in a model file's JSON documents (Python's default bound on reading text as an
#: integer; the Weka package's reader has the same bound)
MAX_JSON_INTEGER_DIGITS = 4300


def _json_int(text: str) -> int:
    """``json.loads``'s hook for integers: at most MAX_JSON_INTEGER_DIGITS digits, whatever the interpreter's own
    bound."""
    if len(text) - text.startswith("-") > MAX_JSON_INTEGER_DIGITS:
        raise ValueError(f"an integer of more than {MAX_JSON_INTEGER_DIGITS} digits")
    return int(text)


def _not_json(name: str):
    """``json.loads``'s hook for NaN, Infinity and -Infinity, which are not JSON (nor written here)."""
    raise ValueError(f"{name} is not a JSON number")


def _check_nesting(obj) -> None:
    """Raise ValueError if objects and arrays nest deeper than MAX_JSON_NESTING."""
    stack = [(obj, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > MAX_JSON_NESTING:
                raise ValueError(f"JSON nested deeper than {MAX_JSON_NESTING}")
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))


#: the first bytes of an Arrow IPC file, and so of every model file
ARROW_MAGIC = b"ARROW1"


def is_model_file(path) -> bool:
    """Whether ``path`` is an Arrow IPC file with the model metadata: what tells a model file (of any
    format version) from another file that a new model must not replace by mistake. Reads the first
    bytes and the footer's schema only, not the model."""
    try:
        with open(path, "rb") as fh:
            if fh.read(len(ARROW_MAGIC)) != ARROW_MAGIC:
                return False
        with pa.memory_map(str(path)) as source:
            return MODEL_KEY in (pa.ipc.open_file(source).schema.metadata or {})
    except (OSError, pa.ArrowException, ValueError):
        return False


def read_model_file(path) -> tuple[dict, dict, list[dict[str, np.ndarray]]]:
    """Read and verify a model file: the model document, the training document, the record batches
    (per batch a dict of numpy arrays: ``branch``, ``children``, ``log_backoff`` per node; the cells'
    ``cell_offsets`` (nodes + 1), ``cell_value`` and ``cell_log_prob``).

    Checks the magic, the schema, the format name and major version, and the checksum. Raises
    :class:`ModelFileError` naming the file for anything unreadable.
    """
    return _read_file(path)[:3]


def _read_file(path) -> tuple[dict, dict, list[dict[str, np.ndarray]], int]:
    """:func:`read_model_file`, and the bytes of the model document."""
    path = Path(path)
    try:
        size = os.stat(path).st_size
        if size > config.MAX_MODEL_FILE_BYTES:
            raise ModelFileError(f"{path}: the model file has {size} bytes, more than the {config.MAX_MODEL_FILE_BYTES} a "
                                 "model file may have; train a smaller model (a lower k, fewer attributes or fewer values)")
        data = path.read_bytes()
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot read the model file: {exc.strerror or exc}") from exc
    try:
        file = FlatFile(data)
    except IpcFault as exc:
        raise ModelFileError(f"{path}: not an hdp-bnc model file ({exc})") from None
    meta = file.metadata
    if MODEL_KEY not in meta:
        raise ModelFileError(f"{path}: an Arrow file, but not an hdp-bnc model file (no {MODEL_KEY.decode()} metadata)")
    repeated = sorted(k.decode() for k in file.repeated & {MODEL_KEY, TRAINING_KEY, CHECKSUM_KEY})
    if repeated:
        raise ModelFileError(f"{path}: corrupted model file (the metadata key {repeated[0]} given twice)")
    model_json, training_json = meta[MODEL_KEY], meta.get(TRAINING_KEY, b"{}")
    try:
        doc = json.loads(model_json.decode("utf-8"), parse_constant=_not_json, parse_int=_json_int)
        training = json.loads(training_json.decode("utf-8"), parse_constant=_not_json, parse_int=_json_int)
        _check_nesting(doc)
        _check_nesting(training)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ModelFileError(f"{path}: corrupted model file (unreadable model metadata)") from exc
    try:  # JSON's \uXXXX escapes can spell lone surrogates, which no UTF-8 text holds (nor this package writes)
        json.dumps([doc, training], ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ModelFileError(f"{path}: corrupted model file (names or labels that are not valid UTF-8)") from exc
    if not isinstance(training, dict):
        raise ModelFileError(f"{path}: corrupted model file (the training metadata is not an object)")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        raise ModelFileError(f"{path}: an Arrow file, but not an hdp-bnc model file (format {doc.get('format')!r})"
                             if isinstance(doc, dict) else f"{path}: corrupted model file (bad model metadata)")
    version = doc.get("format_version")
    if (not isinstance(version, list) or len(version) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in version)):
        raise ModelFileError(f"{path}: corrupted model file (bad format_version {version!r})")
    if version[0] != config.MODEL_FORMAT_MAJOR:
        raise ModelFileError(
            f"{path}: model format {version[0]}.{version[1]} "
            + (f"is newer than this hdp_plugin {__version__} reads ({config.MODEL_FORMAT_MAJOR}.x); upgrade hdp_plugin"
               if version[0] > config.MODEL_FORMAT_MAJOR else
               f"is no longer read by hdp_plugin {__version__} (it reads {config.MODEL_FORMAT_MAJOR}.x); train the "
               "model again")
        )
    columns = [str(f) for f in file.fields]
    if columns not in (NARROW_COLUMNS, WIDE_COLUMNS):
        raise ModelFileError(f"{path}: corrupted model file (unexpected columns "
                             f"{[f.name.decode('utf-8', 'replace') for f in file.fields]})")
    batches, digest = [], hashlib.sha256(model_json + training_json)
    try:
        for i in range(file.num_batches):
            cols = file.batch(i)
            if any(c.has_nulls for c in cols):
                raise ModelFileError(f"{path}: corrupted model file (nulls in tree {i})")
            branch, children, log_backoff, cells = cols
            value, log_prob = cells.children[0].children
            for part in (branch.raw, children.raw, log_backoff.raw, cells.raw_offsets, value.raw, log_prob.raw):
                digest.update(part)
            batches.append({"branch": branch.values.astype(np.int64), "children": children.values.astype(np.int64),
                            "log_backoff": log_backoff.values.astype(np.float64),
                            "cell_offsets": cells.offsets.astype(np.int64),
                            "cell_value": value.values.astype(np.int64),
                            "cell_log_prob": log_prob.values.astype(np.float64)})
    except IpcFault as exc:
        raise ModelFileError(f"{path}: corrupted model file ({exc})") from None
    if meta.get(CHECKSUM_KEY, b"").decode("ascii", "replace") != digest.hexdigest():
        raise ModelFileError(f"{path}: corrupted model file (checksum mismatch)")
    return doc, training, batches, len(model_json)


#: the types of the model document's keys (docs/model-format.md sections 4 and 4b), which both readers check
#: before anything else: ``int`` is a JSON integer in [-2^31, 2^31), ``integer`` one of any size, ``number``
#: a JSON integer or float (never a boolean); ``[X]`` a list of X, ``(X, None)`` X or null; a dict is an object
#: with those keys (``?``: the key may be absent; other keys are ignored)
_MEMBER_KEYS = {
    "weight": "number",
    "seed": {"entropy": "integer", "spawn_key": ["integer"]},
    "attributes": [{"name": "string", "values": ["string"], "numeric": "bool", "cut_points": (["number"], None),
                    "temporal?": "string"}],
    "cardinalities": ["int"],
    "structure": {"kind": "string", "k": "int", "kept": ["int"], "parents": [["int"]], "order": ["int"],
                  "mi": [("number", None)], "info": "object"},
    "trees": [{"attribute": "int", "name": "string", "cardinality": "int", "branching": ["int"], "nodes": "int",
               "cells": "int", "concentrations?": [(["number"], None)]}],
}
_DOCUMENT_KEYS = {
    "package_version": "string",
    "class": {"name": "string", "values": ["string"]},
    "classes": {"dtype": "string", "values": "list"},
    "n_classes": "int",
    "class_log_prior": ["number"],
    "estimator": {"name": "string", "backoff": "string"},
    "seed": ("integer", None),
    "params": {"structure?": "string", "k?": "int", "estimator?": "string", "iterations?": ("int", None),
               "burn_in?": ("int", None), "tying?": "string", "m?": "number", "discretization?": "string",
               "random_state?": ("integer", None), "n_members?": "int"},
    "feature_names_in": "bool",
    "left_out?": [{"name": "string", "index": "int"}],
    "fit": {"rows?": "integer", "dropped_missing_class?": "integer", "warnings?": ["string"], "n_samples?": "int",
            "burn_in?": "int"},
    "combination": "string",
    "members": [_MEMBER_KEYS],
}
#: the estimator's own keys, by its name
_ESTIMATOR_KEYS = {
    "hdp": {"iterations": "int", "burn_in": "int", "n_samples": "int", "tying": "string", "window": "int",
            "tolerance?": "number", "tree_iterations?": ["int"]},
    "m-estimate": {"m": "number"}, "mle": {"m": "number"}, "laplace": {},
}
_KINDS = {"int": "an integer", "integer": "an integer", "number": "a number", "string": "a string",
          "bool": "true or false", "object": "an object", "list": "a list"}


def _is(value, kind: str) -> bool:
    t = type(value)
    if kind == "int":
        return t is int and -(1 << 31) <= value < (1 << 31)
    return {"integer": t is int, "number": t in (int, float), "string": t is str, "bool": t is bool,
            "object": t is dict, "list": t is list}[kind]


def _check_types(value, spec, where: str) -> None:
    """``value`` has the type ``spec`` gives (see _DOCUMENT_KEYS); else _Corrupt naming where it is."""
    if isinstance(spec, tuple):
        if value is not None:
            _check_types(value, spec[0], where)
    elif isinstance(spec, list):
        _need(type(value) is list, f"{where} is not a list")
        for i, v in enumerate(value):
            _check_types(v, spec[0], f"{where}[{i}]")
    elif isinstance(spec, dict):
        _need(type(value) is dict, f"{where} is not an object")
        for key, sub in spec.items():
            name = key.rstrip("?")
            if name in value:
                _check_types(value[name], sub, f"{where}.{name}" if where else name)
            else:
                _need(key.endswith("?"), f"{where}.{name} is missing" if where else f"{name} is missing")
    else:
        _need(_is(value, spec), f"{where} is not {_KINDS[spec]}")


def check_document_types(doc: dict) -> None:
    """The model document's keys and their types (docs/model-format.md sections 4, 4b and 8)."""
    _check_types(doc, _DOCUMENT_KEYS, "")
    name = doc["estimator"]["name"]
    _need(name in _ESTIMATOR_KEYS, f"estimator.name {name!r} is not an estimator")
    _check_types(doc["estimator"], _ESTIMATOR_KEYS[name], "estimator")


def _read_tables(part: dict, n_classes: int, log_prior: np.ndarray, batches, backoff_to_parent: bool,
                 mle: bool) -> ProbabilityTables:
    """One network's :class:`ProbabilityTables` from its part of the model document and its batches,
    every number checked to be one a fit can write (a fault names the tree and node)."""
    cards = np.asarray(part["cardinalities"], np.int64)
    parents = part["structure"]["parents"]
    kept = part["structure"]["kept"]
    trees_doc = part["trees"]
    _need(len(trees_doc) == len(batches) == len(kept), "the number of trees does not match the structure")
    attrs, tcard, node_start, var_start, bvars = [], [], [0], [0], []
    par_l, dep_l, br_l, lb_l, cs_l, cv_l, lp_l = [], [], [], [], [], [], []
    n_cells = 0
    for t, (td, b) in enumerate(zip(trees_doc, batches)):
        c = td["attribute"]
        _need(c == kept[t], f"tree {t} is for attribute {c}, the structure keeps {kept[t]}")
        _need(td["name"] == part["attributes"][c]["name"], f"tree {t}: its name is not its attribute's")
        card = td["cardinality"]
        _need(card == cards[c] and card >= 1, f"tree {t}: cardinality {card} does not match")
        vars_ = td["branching"]
        _need(vars_ == [-1] + parents[c], f"tree {t}: branching order does not match the structure")
        radix = np.asarray([n_classes] + [int(cards[p]) for p in vars_[1:]], np.int64)
        n = b["branch"].shape[0]
        _need(n == td["nodes"] and n >= 1, f"tree {t}: wrong number of nodes")
        children = b["children"]
        bad = np.nonzero(children < 0)[0]
        _need(bad.size == 0, f"tree {t}, node {bad[0] if bad.size else 0}: a negative number of children")
        _need(int(children.sum()) == n - 1, f"tree {t}: the nodes' children do not add up to its nodes")
        parent = np.concatenate(([-1], np.repeat(np.arange(n), children)))
        _need((parent[1:] < np.arange(1, n)).all(), f"tree {t}: a node comes before its parent")
        # depth level by level (a level's children are the next block of rows): linear in the nodes
        depth = np.zeros(n, np.int64)
        lo, hi, d = 0, 1, 0
        while hi < n:
            _need(d < len(vars_), f"tree {t}: deeper than its branching variables")
            lo, hi, d = hi, hi + int(children[lo:hi].sum()), d + 1
            depth[lo:hi] = d
        _need((np.diff(depth) >= 0).all(), f"tree {t}: nodes not in breadth-first order")
        branch = b["branch"]
        _need(branch[0] == 0, f"tree {t}, node 0: a root's branch must be 0")
        if n > 1:
            bad = np.nonzero((branch[1:] < 0) | (branch[1:] >= radix[depth[1:] - 1]))[0]
            _need(bad.size == 0, f"tree {t}, node {bad[0] + 1 if bad.size else 0}: branch value out of range")
            same = parent[2:] == parent[1:-1]
            bad = np.nonzero(same & (branch[2:] <= branch[1:-1]))[0]
            _need(bad.size == 0, f"tree {t}, node {bad[0] + 2 if bad.size else 0}: children not sorted by branch value")
        offsets = b["cell_offsets"]
        _need(offsets.shape == (n + 1,), f"tree {t}: wrong number of cell lists")
        counts = np.diff(offsets)
        bad = np.nonzero(counts < 1)[0]
        _need(bad.size == 0, f"tree {t}, node {bad[0] if bad.size else 0}: a node without a cell")
        values, lp = b["cell_value"], b["cell_log_prob"]
        node_of = np.repeat(np.arange(n), counts)
        bad = np.nonzero((values < 0) | (values >= card))[0]
        _need(bad.size == 0, f"tree {t}, node {node_of[bad[0]] if bad.size else 0}: a cell's value out of range")
        bad = np.nonzero((node_of[1:] == node_of[:-1]) & (values[1:] <= values[:-1]))[0]
        _need(bad.size == 0, f"tree {t}, node {node_of[bad[0] + 1] if bad.size else 0}: cells not sorted by value")
        bad = np.nonzero(~np.isfinite(lp) | (lp > 1e-9))[0]
        _need(bad.size == 0, f"tree {t}, node {node_of[bad[0]] if bad.size else 0}: a log-probability that is not "
              "finite and at most 0")
        lb = b["log_backoff"]
        bad = np.nonzero(np.isnan(lb) | (lb > 0) | (np.isneginf(lb) & (not mle)))[0]
        _need(bad.size == 0, f"tree {t}, node {bad[0] if bad.size else 0}: a back-off weight outside (0, 1]")
        total = np.add.reduceat(np.exp(lp), offsets[:-1])
        # what a node's unseen values get: its back-off weight times their share of its back-off distribution
        if backoff_to_parent:
            key = node_of * card + values
            pkey = parent[node_of] * card + values
            pos = np.searchsorted(key, pkey)
            found = (pos < key.size) & (key[np.minimum(pos, key.size - 1)] == pkey)
            inner = node_of > 0
            bad = np.nonzero(inner & ~found)[0]
            _need(bad.size == 0, f"tree {t}, node {node_of[bad[0]] if bad.size else 0}: a cell its parent has not")
            share = np.exp(lp[np.minimum(pos, key.size - 1)]) * inner
            rest = 1.0 - np.add.reduceat(share, offsets[:-1])
            rest[0] = (card - counts[0]) / card
        else:
            rest = (card - counts) / card
        sums = total + np.exp(lb) * rest
        bad = np.nonzero(np.abs(sums - 1.0) > 1e-6)[0]
        _need(bad.size == 0, f"tree {t}, node {bad[0] if bad.size else 0}: its distribution does not sum to one")
        _need(values.shape[0] == td["cells"], f"tree {t}: its cells are not the {td['cells']} the document says")
        off = node_start[-1]
        attrs.append(c)
        tcard.append(card)
        bvars.extend(vars_)
        var_start.append(len(bvars))
        node_start.append(off + n)
        par_l.append(np.where(parent >= 0, parent + off, -1))
        dep_l.append(depth)
        br_l.append(np.where(parent >= 0, branch, -1))
        lb_l.append(lb)
        cs_l.append(offsets[:-1] + n_cells)
        cv_l.append(values)
        lp_l.append(lp)
        n_cells += int(offsets[-1])

    def cat(parts, dtype):
        return np.ascontiguousarray(np.concatenate(parts) if parts else np.zeros(0), dtype=dtype)

    node_parent = cat(par_l, np.int64)
    child_count = children_of(node_parent)
    return ProbabilityTables(
        attrs=np.asarray(attrs, np.int64), tree_card=np.asarray(tcard, np.int64),
        tree_node_start=np.asarray(node_start, np.int64), tree_var_start=np.asarray(var_start, np.int64),
        branch_vars=np.asarray(bvars, np.int64), node_parent=node_parent, node_depth=cat(dep_l, np.int64),
        node_branch=cat(br_l, np.int64), child_count=child_count,
        cell_start=np.concatenate((cat(cs_l, np.int64), [n_cells])).astype(np.int64),
        cell_value=cat(cv_l, np.int64), log_probs=cat(lp_l, np.float64), log_backoff=cat(lb_l, np.float64),
        log_prior=log_prior, backoff_to_parent=backoff_to_parent, n_classes=n_classes, cardinalities=cards)


def _float(v) -> float:
    """A JSON number as the double nearest it (an integer beyond a double's range is infinite)."""
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


def _distinct(values) -> bool:
    return len(set(values)) == len(values)


def _read_network(part: dict, n_classes: int, log_prior: np.ndarray, batches, backoff_to_parent: bool,
                  mle: bool) -> "Network":
    """One network of a model document (its types checked) and its batches."""
    attributes = []
    for a in part["attributes"]:
        name, values, cuts, temporal = a["name"], a["values"], a["cut_points"], a.get("temporal")
        _need(_distinct(values), f"attribute {name!r}: a label given twice")
        _need(a["numeric"] == (cuts is not None), f"attribute {name!r}: cut points "
              + ("missing" if a["numeric"] else "on a nominal attribute"))
        if cuts is not None:
            cp = np.asarray([_float(x) for x in cuts], np.float64)
            _need(np.isfinite(cp).all() and (np.diff(cp) > 0).all(), f"attribute {name!r}: bad cut points")
            _need(len(cuts) + 1 == len(values), f"attribute {name!r}: cut points do not match its bins")
            cuts = tuple(float(x) for x in cp)
        _need(temporal in TEMPORAL_KINDS and (temporal is None or a["numeric"]),
              f"attribute {name!r}: bad temporal {temporal!r}")
        attributes.append(Attribute(name=name, values=tuple(values), numeric=a["numeric"], cut_points=cuts,
                                    temporal=temporal))
    n_attr = len(attributes)
    _need(_distinct([a.name for a in attributes]), "an attribute name given twice")
    cards = np.asarray(part["cardinalities"], np.int64)
    _need(cards.shape == (n_attr,) and (cards >= 1).all(), "bad cardinalities")
    for a, card in zip(attributes, cards):
        _need(len(a.values) <= card <= len(a.values) + 1, f"attribute {a.name!r}: cardinality {card} does not match its labels")
    s = part["structure"]
    parents = s["parents"]
    _need(len(parents) == n_attr and all(0 <= p < n_attr and p != j for j, ps in enumerate(parents) for p in ps),
          "bad structure parents")
    _need(all(_distinct(ps) for ps in parents), "bad structure parents (an attribute parent given twice)")
    kept = s["kept"]
    _need(all(0 <= j < n_attr for j in kept) and all(i < j for i, j in zip(kept, kept[1:])), "bad kept attributes")
    _need(all(0 <= j < n_attr for j in s["order"]) and _distinct(s["order"]), "bad attribute order")
    _need(len(s["mi"]) == n_attr, "bad mutual informations")
    _need(s["kind"] in config.NETWORK_STRUCTURES and s["k"] >= 0, "bad structure kind or k")
    structure = Structure(kind=s["kind"], k=s["k"], parents=tuple(tuple(ps) for ps in parents), kept=tuple(kept),
                          order=tuple(s["order"]),
                          mi=np.asarray([np.nan if v is None else _float(v) for v in s["mi"]], np.float64),
                          info=dict(s["info"]))
    tables = _read_tables(part, n_classes, log_prior, batches, backoff_to_parent, mle)
    ranges = [td.get("concentrations") for td in part["trees"]]
    for t, r in enumerate(ranges):
        _need(r is None or all(v is None or (len(v) == 2 and all(_float(x) > 0 for x in v)) for v in r),
              f"tree {t}: bad concentrations")
    weight = _float(part["weight"])
    _need(math.isfinite(weight) and weight > 0, f"a member's weight {part['weight']!r}")
    return Network(attributes, cards, structure, tables, part["seed"], weight,
                   ranges if all(r is not None for r in ranges) and ranges else None)


#: a ``classes.dtype`` other than ``object``: NumPy's, of booleans, integers, floats or text of at most a billion
#: characters (docs/model-format.md section 4)
_CLASSES_DTYPE = re.compile(r"[<>|=]?(b1|[iu][1248]|f[248]|U[1-9][0-9]{0,8})")
_FLOAT_MAX = {2: 65504.0, 4: 3.4028234663852886e38, 8: sys.float_info.max}


def _class_value_matches(v, label: str, kind: str, size: int) -> bool:
    """Whether ``classes.values`` holds ``v`` of the dtype's ``kind`` (``O`` for object) and ``size`` where the
    class's label is ``label``: text its label, true and false ``True`` and ``False``, an integer its decimal
    digits, a float a label that reads as the same number."""
    t = type(v)
    if kind in "OU" and t is str:
        return v == label and (kind == "O" or len(v) <= size)
    if kind in "Ob" and t is bool:
        return label == ("True" if v else "False")
    if kind in "Oiu" and t is int:
        bits = 8 * size
        fits = kind == "O" or (-(1 << (bits - 1)) <= v < (1 << (bits - 1)) if kind == "i" else 0 <= v < (1 << bits))
        return fits and label == str(v)
    if kind in "Of" and t in (int, float):
        x = _float(v)
        return abs(x) <= _FLOAT_MAX[size if kind == "f" else 8] and label_number(label) == x
    return False


def _classes(doc: dict, labels: tuple, doc_bytes: int) -> np.ndarray:
    """``classes_``: ``classes.values`` in its dtype, checked against the class labels (docs/model-format.md
    section 4): the same values, in the same order, of a dtype no wider than the document's bytes."""
    c = doc["classes"]
    dtype, values = c["dtype"], c["values"]
    _need(len(values) == len(labels), "classes do not match the class labels")
    if dtype == "object":
        kind, size = "O", 0
    else:
        _need(_CLASSES_DTYPE.fullmatch(dtype) is not None, f"classes.dtype {dtype[:40]!r} is not one a model has")
        spec = dtype.lstrip("<>|=")
        kind, size = spec[0], int(spec[1:])
        _need(kind != "U" or size <= doc_bytes, f"classes.dtype {dtype!r} is wider than the model document")
    bad = next((i for i, (v, label) in enumerate(zip(values, labels)) if not _class_value_matches(v, label, kind, size)),
               None)
    _need(bad is None, f"classes.values[{bad}] is not the class label {labels[bad]!r}" if bad is not None else "")
    return np.asarray(values, dtype=object if kind == "O" else np.dtype(dtype))


def load_model(path):
    """Read a model file written by :func:`save_model`; return the fitted classifier.

    ``load_model(p).predict_proba(X)`` equals the saved classifier's ``predict_proba(X)`` exactly.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    BayesNetClassifier
        Fitted: ``classes_``, ``members_``, ``attributes_``, ``fit_info_`` and the constructor
        parameters are restored.

    Raises
    ------
    ModelFileError
        A missing, truncated, corrupted or foreign file, or one written in a newer major version
        of the format; the message names the file.
    """
    return load_model_and_documents(path)[0]


@dataclass
class Network:
    """One network of a model file, read and checked."""

    attributes: list[Attribute]
    cardinalities: np.ndarray
    structure: Structure
    tables: ProbabilityTables
    #: the member's seed (plain data) and weight
    seed: dict | None
    weight: float
    #: HDP only: per tree, per depth below the root, the concentrations' [smallest, largest]
    concentration_ranges: list | None = None


@dataclass
class ModelContents:
    """A model file read and checked, before any classifier is made of it (what ``hdp-bnc info`` shows).

    Needs numpy and pyarrow only: no numba kernel is imported until a classifier is built from it
    (:func:`load_model`).
    """

    doc: dict
    training: dict
    #: every classifier parameter (the file's, defaults for the ones it does not store), checked
    params: dict
    class_attribute: Attribute
    classes: np.ndarray
    log_prior: np.ndarray
    networks: list[Network]
    #: the classifier's ``fit_info_``
    info: dict
    feature_names: bool
    #: the training input's attributes left out as row identifiers: ``(index in the input, name)``
    left_out: tuple = ()

    @property
    def ensemble(self) -> bool:
        return len(self.networks) > 1


def read_model(path) -> ModelContents:
    """Read and verify a model file completely, without building the classifier.

    Everything :func:`load_model` checks is checked here (it is the first half of it), and the
    same :class:`ModelFileError` naming the file is raised for anything wrong.
    """
    path = Path(path)
    doc, training, batches, doc_bytes = _read_file(path)
    try:
        check_document_types(doc)
        labels = tuple(doc["class"]["values"])
        class_attribute = Attribute(name=doc["class"]["name"], values=labels)
        n_classes = doc["n_classes"]
        _need(n_classes == len(labels) >= 1, "bad number of classes")
        _need(_distinct(labels), "a class label given twice")
        classes = _classes(doc, labels, doc_bytes)
        log_prior = np.asarray([_float(v) for v in doc["class_log_prior"]], np.float64)
        _need(log_prior.shape == (n_classes,), "bad class log-prior")
        _need((log_prior <= 1e-9).all() and abs(float(np.exp(log_prior).sum()) - 1.0) < 1e-6, "bad class log-prior")
        params = {n: default(n) for n in NAMES}
        params.update((k, v) for k, v in doc["params"].items() if k in _STORED_PARAMS)
        try:
            check_all(params)
        except ParameterError as exc:
            raise _Corrupt(f"params: {exc}") from None
        est = doc["estimator"]
        _need(est["name"] == params["estimator"], "the estimator does not match the parameters")
        backoff = est["backoff"]
        _need(backoff == ("parent" if params["estimator"] == "hdp" else "uniform"),
              f"back-off {backoff!r} is not the {params['estimator']} estimator's")
        _check_estimator(est, sum(len(part["trees"]) for part in doc["members"]))
        parts = doc["members"]
        _need(len(parts) >= 1, "a model without members")
        if params["structure"] == "eskdb":
            _need(params.get("n_members") == len(parts), f"params.n_members is {params.get('n_members')!r} but the "
                  f"file holds {len(parts)} members")
        else:
            _need(len(parts) == 1, f"a {params['structure']} model of {len(parts)} networks")
        nets, first = [], 0
        for part in parts:
            n_trees = len(part["trees"])
            _need(first + n_trees <= len(batches), "the number of trees does not match the structure")
            nets.append(_read_network(part, n_classes, log_prior, batches[first:first + n_trees],
                                      backoff == "parent", params["estimator"] == "mle"))
            first += n_trees
        _need(first == len(batches), "the number of trees does not match the structure")
        total = sum(n.weight for n in nets)
        _need(abs(total - 1.0) <= 1e-9, f"the members' weights sum to {total!r}, not 1")
        for n in nets[1:]:
            _need([(a.name, a.numeric, a.numeric or a.values) for a in n.attributes]
                  == [(a.name, a.numeric, a.numeric or a.values) for a in nets[0].attributes],
                  "members disagree on the attributes")
        left_out = _left_out(doc.get("left_out", []), [a.name for a in nets[0].attributes])
        info = dict(doc["fit"])
        info.update((k, v) for k, v in training.items() if k in _INFO_TIMING_KEYS)
        info["format_version"] = tuple(doc["format_version"])
        info["package_version"] = doc["package_version"]
        feature_names = doc["feature_names_in"]
    except _Corrupt as exc:
        raise ModelFileError(f"{path}: corrupted model file ({exc})") from exc
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError, RecursionError) as exc:
        raise ModelFileError(f"{path}: corrupted model file (bad model metadata: {type(exc).__name__}: {exc})") from exc
    info["model_file"] = str(path)
    return ModelContents(doc, training, params, class_attribute, classes, log_prior, nets, info, feature_names,
                         left_out)


#: the classifier parameters a reader takes from the document (others it ignores)
_STORED_PARAMS = _INIT_PARAMS + ("n_members",)


def _check_estimator(est: dict, n_trees: int) -> None:
    """The estimator's settings in their domains: the sampler's run (HDP), the m of the m-estimates."""
    if est["name"] == "hdp":
        _need(est["iterations"] >= 1 and 0 <= est["burn_in"] < est["iterations"] and est["n_samples"] >= 1
              and est["window"] >= 1 and est["tying"] in config.TYINGS, "bad estimator settings")
        _need(("tolerance" in est) == ("tree_iterations" in est), "estimator.tolerance without tree_iterations, "
              "or the other way round")
        if "tolerance" in est:
            _need(_float(est["tolerance"]) > 0 and math.isfinite(_float(est["tolerance"])), "bad estimator.tolerance")
            its = est["tree_iterations"]
            _need(len(its) == n_trees and all(1 <= v <= est["iterations"] for v in its),
                  "bad estimator.tree_iterations")
    elif "m" in est:
        m = _float(est["m"])
        _need(math.isfinite(m) and m >= 0, "bad estimator.m")


def _left_out(entries, kept: list[str]) -> tuple:
    """The document's ``left_out`` checked: ``(index, name)`` pairs, indices ascending, that put the
    names among the ``kept`` attributes to make the training input's attributes."""
    _need(isinstance(entries, list), "left_out is not a list")
    out, names = [], set(kept)
    for k, e in enumerate(entries):
        _need(isinstance(e, dict) and isinstance(e.get("name"), str) and type(e.get("index")) is int,
              "a left_out entry is not a name and an index")
        _need(e["name"] not in names and e["index"] > (out[-1][0] if out else -1) and e["index"] <= len(kept) + k,
              "bad left_out entries")
        names.add(e["name"])
        out.append((e["index"], e["name"]))
    return tuple(out)


def input_names(kept: list[str], left_out) -> list[str]:
    """The training input's attribute names: the model's ``kept`` ones with the ``left_out`` pairs put
    back at their indices."""
    names = list(kept)
    for i, name in left_out:
        names.insert(i, name)
    return names


def load_model_and_documents(path):
    """:func:`load_model`, plus the file's model and training documents."""
    from .classifier import BayesNetClassifier
    from .ensemble import Member

    m = read_model(path)
    clf = BayesNetClassifier(**m.params)
    net = m.networks[0]
    kept = [a.name for a in net.attributes]
    clf.classes_ = m.classes
    clf.discretization_ = clf.discretization
    clf.members_ = [Member(seed=n.seed, attributes=n.attributes, cardinalities=n.cardinalities, structure=n.structure,
                           tables=n.tables, weight=n.weight, concentration_ranges=n.concentration_ranges)
                    for n in m.networks]
    clf.attributes_ = net.attributes
    clf.class_attribute_ = m.class_attribute
    clf.k_used_ = usable_k(clf.structure, clf.k, len(kept))
    clf._kept_names_ = kept
    clf.left_out_ = [name for _, name in m.left_out]
    names = input_names(kept, m.left_out)
    clf.n_features_in_ = len(names)
    clf._array_names_ = names
    if m.feature_names:
        clf.feature_names_in_ = np.asarray(names, dtype=object)
    clf.fit_info_ = m.info
    return clf, m.doc, m.training
