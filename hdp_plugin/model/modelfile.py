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
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc

from .. import config
from .._fs import check_output, replacing
from .._version import __version__
from ..data.dataset import TEMPORAL_KINDS, Attribute
from ..errors import ModelFileError, NotFittedError
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


def _values(arr: pa.Array, dtype: np.dtype) -> np.ndarray:
    """The values of a fixed-width Arrow array without nulls, as a numpy view of its data buffer.

    (``Array.to_numpy`` would import pandas, which reading a model file does not otherwise need; a
    buffer shorter than the array is a ValueError.)"""
    native = np.dtype(dtype.str[1:])  # pyarrow hands out native byte order
    buf = arr.buffers()[1]
    if buf is None:
        if len(arr):
            raise ValueError("a column without a data buffer")
        return np.zeros(0, native)
    return np.frombuffer(buf, dtype=native, count=len(arr), offset=arr.offset * native.itemsize)


#: the deepest nesting of objects and arrays a model file's JSON documents may have (the Weka package's
#: reader has the same bound, so that both readers refuse the same files)
MAX_JSON_NESTING = 200


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


def read_model_file(path) -> tuple[dict, dict, list[dict[str, np.ndarray]]]:
    """Read and verify a model file: the model document, the training document, the record batches
    (per batch a dict of numpy arrays: ``branch``, ``children``, ``log_backoff`` per node; the cells'
    ``cell_offsets`` (nodes + 1), ``cell_value`` and ``cell_log_prob``), and whether it is wide.

    Checks the magic, the schema, the format name and major version, and the checksum. Raises
    :class:`ModelFileError` naming the file for anything unreadable.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot read the model file: {exc.strerror or exc}") from exc
    try:
        reader = pa.ipc.open_file(pa.BufferReader(data))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise ModelFileError(
            f"{path}: not an hdp-bnc model file (not a complete Arrow IPC file: truncated, corrupted or "
            f"another format)"
        ) from exc
    meta = reader.schema.metadata or {}
    if MODEL_KEY not in meta:
        raise ModelFileError(f"{path}: an Arrow file, but not an hdp-bnc model file (no {MODEL_KEY.decode()} metadata)")
    model_json, training_json = meta[MODEL_KEY], meta.get(TRAINING_KEY, b"{}")
    try:
        doc = json.loads(model_json.decode("utf-8"), parse_constant=_not_json)
        training = json.loads(training_json.decode("utf-8"), parse_constant=_not_json)
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
    try:
        fields = [(f.name, f.type) for f in reader.schema]
    except UnicodeDecodeError as exc:
        raise ModelFileError(f"{path}: corrupted model file (column names that are not UTF-8)") from exc
    schema = next((sc for sc in (NARROW_SCHEMA, WIDE_SCHEMA) if fields == [(f.name, f.type) for f in sc]), None)
    if schema is None:
        raise ModelFileError(f"{path}: corrupted model file (unexpected columns {[n for n, _ in fields]})")
    index = _NUMPY_TYPES[schema.field("branch").type]
    batches = []
    try:
        for i in range(reader.num_record_batches):
            b = reader.get_batch(i)
            if any(b.column(j).null_count for j in range(b.num_columns)):
                raise ModelFileError(f"{path}: corrupted model file (nulls in tree {i})")
            cells = b.column(3)
            offsets = _offsets(cells)
            struct = cells.values
            if struct.null_count or any(struct.field(j).null_count for j in range(2)):
                raise ModelFileError(f"{path}: corrupted model file (nulls in tree {i}'s cells)")
            values = _values(struct.field(0), index)
            log_probs = _values(struct.field(1), np.dtype("<f8"))
            if offsets.size and (offsets[0] != 0 or offsets[-1] != values.size or values.size != log_probs.size):
                raise ModelFileError(f"{path}: corrupted model file (bad cell offsets in tree {i})")
            batches.append({"branch": np.array(_values(b.column(0), index), np.int64),
                            "children": np.array(_values(b.column(1), index), np.int64),
                            "log_backoff": np.array(_values(b.column(2), np.dtype("<f8")), np.float64),
                            "cell_offsets": np.array(offsets, np.int64),
                            "cell_value": np.array(values, np.int64),
                            "cell_log_prob": np.array(log_probs, np.float64)})
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise ModelFileError(f"{path}: corrupted model file (unreadable record batch: {exc})") from exc
    expected = meta.get(CHECKSUM_KEY, b"").decode("ascii", "replace")
    actual = _digest(model_json, training_json, [
        [c["branch"].astype(index), c["children"].astype(index), c["log_backoff"].astype("<f8"),
         (c["cell_offsets"].astype("<i4"), c["cell_value"].astype(index), c["cell_log_prob"].astype("<f8"))]
        for c in batches])
    if expected != actual:
        raise ModelFileError(f"{path}: corrupted model file (checksum mismatch)")
    return doc, training, batches


def _offsets(arr: pa.Array) -> np.ndarray:
    """A list column's int32 offsets (rows + 1), as a numpy view."""
    buf = arr.buffers()[1]
    n = len(arr)
    if buf is None or buf.size < 4 * (arr.offset + n + 1):
        raise ValueError("a list column without its offsets")
    return np.frombuffer(buf, dtype=np.int32, count=n + 1, offset=4 * arr.offset)


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
        c = int(td["attribute"])
        _need(c == kept[t], f"tree {t} is for attribute {c}, the structure keeps {kept[t]}")
        card = int(td["cardinality"])
        _need(card == cards[c] and card >= 1, f"tree {t}: cardinality {card} does not match")
        vars_ = [int(v) for v in td["branching"]]
        _need(vars_ == [-1] + [int(p) for p in parents[c]], f"tree {t}: branching order does not match the structure")
        radix = np.asarray([n_classes] + [int(cards[p]) for p in vars_[1:]], np.int64)
        n = b["branch"].shape[0]
        _need(n == int(td["nodes"]) >= 1, f"tree {t}: wrong number of nodes")
        children = b["children"]
        _need(int(children.sum()) == n - 1, f"tree {t}: the nodes' children do not add up to its nodes")
        parent = np.concatenate(([-1], np.repeat(np.arange(n), children)))
        _need((parent[1:] < np.arange(1, n)).all(), f"tree {t}: a node comes before its parent")
        depth = np.zeros(n, np.int64)
        for _ in range(len(vars_) + 1):  # a pass settles one more level (parents come first)
            depth[1:] = depth[parent[1:]] + 1
        _need(depth.max() <= len(vars_), f"tree {t}: deeper than its branching variables")
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


def _read_network(part: dict, n_classes: int, log_prior: np.ndarray, batches, backoff_to_parent: bool,
                  mle: bool) -> "Network":
    """One network of a model document and its batches."""
    attributes = [
        Attribute(name=str(a["name"]), values=tuple(str(v) for v in a["values"]), numeric=bool(a["numeric"]),
                  cut_points=None if a["cut_points"] is None else tuple(float(x) for x in a["cut_points"]),
                  temporal=a.get("temporal"))
        for a in part["attributes"]
    ]
    for a in attributes:
        if a.cut_points is not None:
            cp = np.asarray(a.cut_points, np.float64)
            _need(np.isfinite(cp).all() and (np.diff(cp) > 0).all(), f"attribute {a.name!r}: bad cut points")
    n_attr = len(attributes)
    for a in attributes:
        _need(a.temporal in TEMPORAL_KINDS and (a.temporal is None or a.numeric),
              f"attribute {a.name!r}: bad temporal {a.temporal!r}")
    cards = np.asarray(part["cardinalities"], np.int64)
    _need(cards.shape == (n_attr,) and (cards >= 1).all(), "bad cardinalities")
    for a, card in zip(attributes, cards):
        _need(len(a.values) <= card <= len(a.values) + 1, f"attribute {a.name!r}: cardinality {card} does not match its labels")
    s = part["structure"]
    parents = tuple(tuple(int(p) for p in ps) for ps in s["parents"])
    _need(len(parents) == n_attr and all(0 <= p < n_attr and p != j for j, ps in enumerate(parents) for p in ps),
          "bad structure parents")
    kept = tuple(int(x) for x in s["kept"])
    _need(all(0 <= j < n_attr for j in kept), "bad kept attributes")
    structure = Structure(kind=str(s["kind"]), k=int(s["k"]), parents=parents, kept=kept,
                          order=tuple(int(x) for x in s["order"]),
                          mi=np.asarray([np.nan if v is None else v for v in s["mi"]], np.float64),
                          info=dict(s.get("info") or {}))
    tables = _read_tables(part, n_classes, log_prior, batches, backoff_to_parent, mle)
    ranges = [td.get("concentrations") for td in part["trees"]]
    for t, r in enumerate(ranges):
        _need(r is None or (isinstance(r, list) and all(
            v is None or (isinstance(v, list) and len(v) == 2 and all(type(x) in (int, float) and x > 0 for x in v))
            for v in r)), f"tree {t}: bad concentrations")
    weight = part["weight"]
    _need(type(weight) in (int, float) and math.isfinite(weight) and weight > 0, f"a member's weight {weight!r}")
    return Network(attributes, cards, structure, tables, part.get("seed"), float(weight),
                   ranges if all(r is not None for r in ranges) and ranges else None)


def _classes(doc: dict) -> np.ndarray:
    c = doc["classes"]
    dtype = object if c["dtype"] == "object" else np.dtype(c["dtype"])
    return np.asarray(c["values"], dtype=dtype)


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
    doc, training, batches = read_model_file(path)
    try:
        class_attribute = Attribute(name=str(doc["class"]["name"]), values=tuple(str(v) for v in doc["class"]["values"]))
        n_classes = int(doc["n_classes"])
        _need(n_classes == len(class_attribute.values) >= 1, "bad number of classes")
        classes = _classes(doc)
        _need(classes.shape == (len(class_attribute.values),), "classes do not match the class labels")
        log_prior = np.asarray(doc["class_log_prior"], np.float64)
        _need(log_prior.shape == (len(class_attribute.values),), "bad class log-prior")
        _need(not np.isnan(log_prior).any() and (log_prior <= 1e-9).all()
              and abs(float(np.exp(log_prior).sum()) - 1.0) < 1e-6, "bad class log-prior")
        params = {n: default(n) for n in NAMES}
        params.update((k, v) for k, v in doc["params"].items() if k in NAMES)
        check_all(params)
        est = doc["estimator"]
        _need(est.get("name") == params["estimator"], "the estimator does not match the parameters")
        backoff = est.get("backoff")
        _need(backoff == ("parent" if params["estimator"] == "hdp" else "uniform"),
              f"back-off {backoff!r} is not the {params['estimator']} estimator's")
        parts = doc["members"]
        _need(isinstance(parts, list) and len(parts) >= 1, "a model without members")
        if params["structure"] == "eskdb":
            _need(params.get("n_members") == len(parts), f"params.n_members is {params.get('n_members')!r} but the "
                  f"file holds {len(parts)} members")
        else:
            _need(len(parts) == 1, f"a {params['structure']} model of {len(parts)} networks")
        nets, first = [], 0
        for part in parts:
            n_trees = len(part["trees"])
            nets.append(_read_network(part, n_classes, log_prior, batches[first:first + n_trees],
                                      backoff == "parent", params["estimator"] == "mle"))
            first += n_trees
        _need(first == len(batches), "the number of trees does not match the structure")
        total = sum(n.weight for n in nets)
        _need(abs(total - 1.0) <= 1e-9, f"the members' weights sum to {total!r}, not 1")
        for n in nets[1:]:
            _need([(a.name, a.numeric) for a in n.attributes] == [(a.name, a.numeric) for a in nets[0].attributes],
                  "members disagree on the attributes")
        info = dict(doc.get("fit") or {})
        info.update(training)
        info["format_version"] = tuple(doc["format_version"])
        info["package_version"] = doc.get("package_version")
        feature_names = bool(doc.get("feature_names_in"))
        left_out = _left_out(doc.get("left_out", []), [a.name for a in nets[0].attributes])
    except _Corrupt as exc:
        raise ModelFileError(f"{path}: corrupted model file ({exc})") from exc
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError, RecursionError) as exc:
        raise ModelFileError(f"{path}: corrupted model file (bad model metadata: {type(exc).__name__}: {exc})") from exc
    info["model_file"] = str(path)
    return ModelContents(doc, training, params, class_attribute, classes, log_prior, nets, info, feature_names,
                         left_out)


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
