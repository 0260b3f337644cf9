"""The versioned model file: a fitted :class:`BayesNetClassifier` as one Arrow IPC file.

The file is the contract between Python, the daemon and the Java classifier inside Weka; the
format is documented field by field in ``docs/model-format.md``. In short:

* one Arrow IPC **file** (``pyarrow.ipc.open_file`` reads it), uncompressed, no dictionaries, no
  nested types: ten flat, non-nullable int32 / int64 / float64 columns;
* one row per **cell** (a node of a context tree and a value of the tree's attribute), one record
  batch per tree, in tree order: tree, node, parent, depth, branch, value, count, log_prob, group,
  concentration;
* everything else (attributes with their labels and cut points, the class, the structure, the
  class log-prior, the estimator and its settings, the seed, the versions) is a UTF-8 JSON
  document in the schema's custom metadata under ``hdp_plugin.model``; fit timings, which differ
  from run to run, sit apart under ``hdp_plugin.training``;
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
from ..hdp.tables import ProbabilityTables
from ..params import NAMES, canonical_params, check_all, default, resolved_iterations, usable_k
from ..hdp.trees import ContextTrees, TreeNodes
from ..structure import Structure

#: the value of the model document's ``format`` field: what tells our files from foreign ones
FORMAT_NAME = "hdp-bnc-model"
#: schema metadata keys
MODEL_KEY = b"hdp_plugin.model"
TRAINING_KEY = b"hdp_plugin.training"
CHECKSUM_KEY = b"hdp_plugin.sha256"

#: the columns of the cell table, in order, with their Arrow types
CELL_SCHEMA = pa.schema(
    [
        pa.field("tree", pa.int32(), nullable=False),
        pa.field("node", pa.int32(), nullable=False),
        pa.field("parent", pa.int32(), nullable=False),
        pa.field("depth", pa.int32(), nullable=False),
        pa.field("branch", pa.int32(), nullable=False),
        pa.field("value", pa.int32(), nullable=False),
        pa.field("count", pa.int64(), nullable=False),
        pa.field("log_prob", pa.float64(), nullable=False),
        pa.field("group", pa.int32(), nullable=False),
        pa.field("concentration", pa.float64(), nullable=False),
    ]
)
#: format 3.0's node table (one row per node, one record batch per tree): the per-node fields once, and
#: the node's cells as two lists of ``cardinality`` values
NODE_SCHEMA = pa.schema(
    [
        pa.field("parent", pa.int32(), nullable=False),
        pa.field("depth", pa.int32(), nullable=False),
        pa.field("branch", pa.int32(), nullable=False),
        pa.field("group", pa.int32(), nullable=False),
        pa.field("concentration", pa.float64(), nullable=False),
        pa.field("count", pa.list_(pa.field("item", pa.int64(), nullable=False)), nullable=False),
        pa.field("log_prob", pa.list_(pa.field("item", pa.float64(), nullable=False)), nullable=False),
    ]
)
#: the node table's per-node columns; its list columns are the cells' ``count`` and ``log_prob``
NODE_COLUMNS = ("parent", "depth", "branch", "group", "concentration")
_NUMPY_TYPES = {pa.int32(): np.dtype("<i4"), pa.int64(): np.dtype("<i8"), pa.float64(): np.dtype("<f8")}
#: the classifier parameters a model document stores (hdp_plugin.params); n_members only for ensembles,
#: so single-network files are what they were before ensembles existed. categorical_features is not
#: stored: a declared column is stored as the nominal attribute it became (its values its domain), so a
#: model trained from a CSV with declared columns is the one trained from the ARFF that declares them;
#: keep_columns neither: the columns a model left out are its ``left_out``.
#: n_jobs is not stored either: the threads of a fit are a setting of the run, not of the model, so the
#: same seed writes the same file whatever the threads
_INIT_PARAMS = tuple(n for n in NAMES if n not in ("n_members", "categorical_features", "keep_columns", "n_jobs"))
#: fit_info_ keys that are figures of the model (kept in the model document)
_INFO_MODEL_KEYS = ("rows", "dropped_missing_class", "warnings", "n_samples", "burn_in")
#: fit_info_ keys that change from run to run (kept in the training document)
_INFO_TIMING_KEYS = ("structure_seconds", "sampler_seconds", "fit_seconds", "streamed", "engine", "pass_seconds",
                     "discretization_sample")


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


def _trees(tables: ProbabilityTables, concentrations, node_group):
    """Per tree, what both layouts write: (tree, cardinality, nodes, its cells' slice, parent indices
    within the tree, per-node group and concentration (-1 and NaN without HDP))."""
    tr = tables.trees
    for t in range(tr.n_trees):
        lo, hi = int(tr.tree_node_start[t]), int(tr.tree_node_start[t + 1])
        parent = tr.node_parent[lo:hi].copy()
        parent[parent >= 0] -= lo
        if node_group is None:
            group = np.full(hi - lo, -1, np.int64)
            conc = np.full(hi - lo, np.nan)
        else:
            group = np.asarray(node_group[lo:hi], np.int64)
            conc = np.asarray(concentrations, np.float64)[group]
        cells = slice(int(tr.node_cell_start[lo]), int(tr.node_cell_start[hi]))
        yield t, int(tr.tree_card[t]), slice(lo, hi), cells, parent, group, conc


def _cell_columns(tables: ProbabilityTables, concentrations, node_group) -> list[list[np.ndarray]]:
    """The columns of every tree's record batch of the cell table (1.0, 2.0), as numpy arrays in
    CELL_SCHEMA order."""
    tr = tables.trees
    raw = tr.raw_counts()
    batches = []
    for t, card, nodes, cells, parent, group, conc in _trees(tables, concentrations, node_group):
        n_nodes = nodes.stop - nodes.start
        rep = lambda a: np.repeat(np.asarray(a), card)  # noqa: E731 - per node -> per cell
        batches.append([
            np.full(n_nodes * card, t, "<i4"),
            rep(np.arange(n_nodes)).astype("<i4"),
            rep(parent).astype("<i4"),
            rep(tr.node_depth[nodes]).astype("<i4"),
            rep(tr.node_branch[nodes]).astype("<i4"),
            np.tile(np.arange(card), n_nodes).astype("<i4"),
            raw[cells].astype("<i8"),
            np.ascontiguousarray(tables.log_probs[cells], "<f8"),
            rep(group).astype("<i4"),
            rep(conc).astype("<f8"),
        ])
    return batches


def _node_columns(tables: ProbabilityTables, concentrations, node_group) -> list[list]:
    """The columns of every tree's record batch of the node table (3.0), in NODE_SCHEMA order: five
    per-node numpy arrays, then the cells' counts and log-probabilities as (offsets, values) pairs."""
    tr = tables.trees
    raw = tr.raw_counts()
    batches = []
    for _, card, nodes, cells, parent, group, conc in _trees(tables, concentrations, node_group):
        offsets = np.arange(0, (nodes.stop - nodes.start + 1) * card, card, dtype="<i4")
        batches.append([
            parent.astype("<i4"),
            np.asarray(tr.node_depth[nodes]).astype("<i4"),
            np.asarray(tr.node_branch[nodes]).astype("<i4"),
            group.astype("<i4"),
            conc.astype("<f8"),
            (offsets, raw[cells].astype("<i8")),
            (offsets, np.ascontiguousarray(tables.log_probs[cells], "<f8")),
        ])
    return batches


def _digest(model_json: bytes, training_json: bytes, batches) -> str:
    """SHA-256 of the two JSON documents, then of every column of every batch, little-endian (a list
    column of 3.0: its int32 offsets, then its values)."""
    h = hashlib.sha256()
    h.update(model_json)
    h.update(training_json)
    for cols in batches:
        for col, field in zip(cols, NODE_SCHEMA if len(cols) == len(NODE_SCHEMA) else CELL_SCHEMA):
            if isinstance(col, tuple):  # a list column (3.0): its offsets, then its items
                offsets, col = col
                h.update(np.ascontiguousarray(offsets, "<i4").view(np.uint8))
                field = field.type.value_field
            h.update(np.ascontiguousarray(col, _NUMPY_TYPES[field.type]).view(np.uint8))  # its bytes, no copy
    return h.hexdigest()


def _network_document(attributes, cardinalities, structure: Structure, tables: ProbabilityTables) -> dict:
    """One network's part of the model document: attributes, cardinalities, structure, trees."""
    tr = tables.trees
    names = [a.name for a in attributes]
    trees = []
    for t in range(tr.n_trees):
        c = int(tr.attrs[t])
        vars_ = tr.branch_vars[int(tr.tree_var_start[t]) : int(tr.tree_var_start[t + 1])]
        lo, hi = int(tr.tree_node_start[t]), int(tr.tree_node_start[t + 1])
        trees.append({"attribute": c, "name": names[c], "cardinality": int(tr.tree_card[t]),
                      "branching": [int(v) for v in vars_], "nodes": hi - lo,
                      "cells": (hi - lo) * int(tr.tree_card[t])})
    st = structure
    return {
        "attributes": [
            {"name": a.name, "values": list(a.values), "numeric": bool(a.numeric),
             "cut_points": None if a.cut_points is None else [float(x) for x in a.cut_points],
             **({"temporal": a.temporal} if a.temporal is not None else {})}
            for a in attributes
        ],
        "cardinalities": [int(x) for x in cardinalities],
        "structure": {"kind": st.kind, "k": int(st.k), "kept": [int(x) for x in st.kept],
                      "parents": [[int(p) for p in ps] for ps in st.parents],
                      "order": [int(x) for x in st.order], "mi": _jsonable(np.asarray(st.mi)),
                      "info": _jsonable(st.info)},
        "trees": trees,
    }


def model_document(clf, layout: str | None = None) -> tuple[dict, dict]:
    """The model and training JSON documents of a fitted classifier (see docs/model-format.md).

    In the cell layout a single network is written as format 1.0 (its attributes, structure and
    trees at the top level); an ensemble as 2.0, whose ``members`` list holds one such network part
    per member with its ``weight`` and ``seed``. The node layout (``layout="nodes"``) writes the same
    document as 3.0, for a network or an ensemble.
    """
    layout = _layout(layout)
    info = clf.fit_info_
    params = {p: getattr(clf, p, None) for p in _INIT_PARAMS}
    params["discretization"] = getattr(clf, "discretization_", clf.discretization)  # "auto" resolved
    seed = params["random_state"]
    params["random_state"] = int(seed) if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) else None
    from .ensemble import members_of  # here: reading a model file needs no ensemble code

    members = members_of(clf)
    if members is not None:
        params["n_members"] = int(clf.n_members)
    hdp = clf.estimator == "hdp"
    # "auto" resolved: the number the sampler ran (without a sampler, the single networks' default)
    params["iterations"] = int(info["iterations"]) if hdp and "iterations" in info else \
        resolved_iterations(clf.structure if hdp else "", clf.iterations)
    # the parameters that do not matter at their defaults: every face writes the same document for a model
    params = canonical_params(params)
    estimator = {"name": clf.estimator}
    if hdp:
        groups = [m.concentrations for m in members] if members is not None else [info["concentrations"]]
        estimator.update(iterations=params["iterations"], burn_in=int(info["burn_in"]),
                         n_samples=int(info["n_samples"]), tying=clf.tying, window=config.WINDOW,
                         n_groups=int(sum(np.asarray(g).shape[0] for g in groups)))
        if "tolerance" in info:  # iterations="auto": the stopping rule, and what each tree ran
            estimator.update(tolerance=float(info["tolerance"]),
                             tree_iterations=[int(v) for v in info["tree_iterations"]])
    elif clf.estimator == "m-estimate":
        estimator["m"] = float(clf.m)
    elif clf.estimator == "mle":
        estimator["m"] = 0.0
    ensemble = members is not None
    doc = {
        "format": FORMAT_NAME,
        "format_version": list(config.NODE_FORMAT) if layout == "nodes"
        else list(config.ENSEMBLE_FORMAT) if ensemble else list(config.NETWORK_FORMAT),
        "package_version": __version__,
    }
    if ensemble:
        doc["ensemble"] = {"kind": "eskdb", "combination": "mean of the members' normalised class probabilities",
                           "n_members": len(members)}
        doc["members"] = [
            {"weight": float(m.weight), "seed": m.seed,
             **_network_document(m.attributes, m.cardinalities, m.structure, m.tables)}
            for m in members
        ]
    else:
        doc.update(_network_document(clf.attributes_, clf.cardinalities_, clf.structure_, clf.tables_))
    doc.update({
        "class": {"name": clf.class_attribute_.name, "values": list(clf.class_attribute_.values)},
        "classes": _classes_document(clf.classes_),
        "n_classes": int(clf.tables_.trees.n_classes),
        "class_log_prior": [float(x) for x in clf.tables_.log_prior],
        "estimator": estimator,
        "seed": params["random_state"],
        "params": _jsonable(params),
        "feature_names_in": hasattr(clf, "feature_names_in_"),
        "fit": _jsonable({k: info[k] for k in _INFO_MODEL_KEYS if k in info}),
    })
    left = set(getattr(clf, "left_out_", ()))
    if left:  # the training input's attributes left out as row identifiers, at their places in it
        doc["left_out"] = [{"name": n, "index": i} for i, n in enumerate(clf._array_names_) if n in left]
    training = _jsonable({k: info[k] for k in _INFO_TIMING_KEYS if k in info})
    return doc, training


def _layout(layout: str | None) -> str:
    layout = config.MODEL_LAYOUT if layout is None else layout
    if layout not in ("cells", "nodes"):
        raise ValueError(f"layout must be 'cells' or 'nodes', got {layout!r}")
    return layout


def save_model(clf, path, layout: str | None = None) -> Path:
    """Write a fitted classifier to ``path`` as a model file, atomically.

    The file is written under a temporary name in the same directory and renamed over ``path``
    in one step, so a reader never sees half a model.

    Parameters
    ----------
    clf : BayesNetClassifier
        A fitted classifier.
    path : str or os.PathLike
        Where to write; by convention the suffix is ``.hdpbnc`` (any name works).
    layout : {"cells", "nodes"}, optional
        The record batches' layout: one row per cell (formats 1.0 and 2.0) or one row per node
        (3.0, smaller); by default ``config.MODEL_LAYOUT``.

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
    if not hasattr(clf, "tables_"):
        raise NotFittedError(f"This {type(clf).__name__} instance is not fitted yet; fit it before save_model")
    path = Path(path)
    target, problem = check_output(path)
    if problem:
        raise ModelFileError(f"{path}: {problem}; save the model to a regular file")
    if os.path.islink(path):  # write through a link: replace the file it names, not the link
        path = target
    layout = _layout(layout)
    doc, training = model_document(clf, layout)
    info = clf.fit_info_
    hdp = clf.estimator == "hdp"
    from .ensemble import members_of

    members = members_of(clf)
    columns, schema_of = (_node_columns, NODE_SCHEMA) if layout == "nodes" else (_cell_columns, CELL_SCHEMA)
    if members is not None:
        batches = [cols for m in members for cols in columns(m.tables, m.concentrations, m.node_group)]
    else:
        batches = columns(clf.tables_, info.get("concentrations") if hdp else None,
                          info.get("node_group") if hdp else None)
    model_json = json.dumps(doc, allow_nan=False, separators=(",", ":")).encode("utf-8")
    training_json = json.dumps(training, allow_nan=False, separators=(",", ":")).encode("utf-8")
    schema = schema_of.with_metadata({
        MODEL_KEY: model_json,
        TRAINING_KEY: training_json,
        CHECKSUM_KEY: _digest(model_json, training_json, batches).encode("ascii"),
    })
    try:
        with replacing(path, fsync=True) as tmp, pa.OSFile(str(tmp), "wb") as sink:  # written by Arrow, not Python
            options = pa.ipc.IpcWriteOptions(compression=None)
            with pa.ipc.new_file(sink, schema, options=options) as writer:
                for cols in batches:
                    writer.write_batch(_record_batch(cols, schema))
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot write the model file: {exc.strerror or exc}") from exc
    return path


def file_bytes(model_json: bytes, training_json: bytes, batches: list[dict[str, np.ndarray]],
               nodes: bool | None = None) -> bytes:
    """A model file's bytes from its two documents and its record batches as :func:`read_model_file`
    returns them (the node table's where they hold ``count_offsets``, or where ``nodes``), with the
    checksum that matches them: what tests and tools write to craft a file whose only faults are the
    ones they put in it."""
    if nodes is None:
        nodes = bool(batches) and "count_offsets" in batches[0]
    schema_of = NODE_SCHEMA if nodes else CELL_SCHEMA
    cols = [[(b[f.name + "_offsets"], b[f.name]) if isinstance(f.type, pa.ListType) else b[f.name] for f in schema_of]
            for b in batches]
    schema = schema_of.with_metadata({MODEL_KEY: model_json, TRAINING_KEY: training_json,
                                      CHECKSUM_KEY: _digest(model_json, training_json, cols).encode("ascii")})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, schema) as writer:
        for c in cols:
            writer.write_batch(_record_batch(c, schema))
    return sink.getvalue().to_pybytes()


def _record_batch(cols: list, schema: pa.Schema) -> pa.RecordBatch:
    """One record batch of ``schema`` from numpy columns ((offsets, values) pairs for list columns, which
    pyarrow checks: offsets outside the values are a ValueError)."""
    arrays = [pa.ListArray.from_arrays(pa.array(c[0], pa.int32()), pa.array(c[1], f.type.value_type), type=f.type)
              if isinstance(c, tuple) else pa.array(c, type=f.type) for c, f in zip(cols, schema)]
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


def _list_values(arr: pa.Array, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """A list column without nulls: its int32 offsets (rows + 1) and its items' values, as numpy views."""
    if arr.values.null_count:
        raise ValueError("nulls in a list's items")
    buf = arr.buffers()[1]
    n = len(arr)
    if buf is None or buf.size < 4 * (arr.offset + n + 1):
        raise ValueError("a list column without its offsets")
    offsets = np.frombuffer(buf, dtype=np.int32, count=n + 1, offset=4 * arr.offset)
    return offsets, _values(arr.values, dtype)


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
    (per batch a dict of numpy arrays: the cell table's columns; for 3.0 the node table's per-node
    columns, ``count`` and ``log_prob`` (every cell of the tree) and their ``count_offsets`` and
    ``log_prob_offsets``).

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
    newest = max(config.MODEL_FORMAT_READS)
    if version[0] not in config.MODEL_FORMAT_READS:
        newer = version[0] > newest
        raise ModelFileError(
            f"{path}: model format {version[0]}.{version[1]} "
            + (f"is newer than this hdp_plugin {__version__} reads ({newest}.x); upgrade hdp_plugin"
               if newer else f"is not supported by hdp_plugin {__version__} (it reads "
               f"{', '.join(f'{v}.x' for v in config.MODEL_FORMAT_READS)})")
        )
    try:
        fields = [(f.name, f.type) for f in reader.schema]
    except UnicodeDecodeError as exc:
        raise ModelFileError(f"{path}: corrupted model file (column names that are not UTF-8)") from exc
    nodes = version[0] >= 3
    schema = NODE_SCHEMA if nodes else CELL_SCHEMA
    if fields != [(f.name, f.type) for f in schema]:
        raise ModelFileError(f"{path}: corrupted model file (unexpected columns {[n for n, _ in fields]})")
    batches = []
    try:
        for i in range(reader.num_record_batches):
            b = reader.get_batch(i)
            cols = {}
            for j, f in enumerate(schema):
                arr = b.column(j)
                if arr.null_count:
                    raise ModelFileError(f"{path}: corrupted model file (nulls in column {f.name!r})")
                if isinstance(f.type, pa.ListType):
                    offsets, values = _list_values(arr, _NUMPY_TYPES[f.type.value_type])
                    if offsets.size and (offsets[0] != 0 or offsets[-1] != values.size):
                        raise ModelFileError(f"{path}: corrupted model file (bad offsets in column {f.name!r})")
                    cols[f.name + "_offsets"] = np.array(offsets, dtype="<i4")
                    cols[f.name] = np.array(values, dtype=_NUMPY_TYPES[f.type.value_type])
                else:
                    cols[f.name] = np.array(_values(arr, _NUMPY_TYPES[f.type]), dtype=_NUMPY_TYPES[f.type])
            batches.append(cols)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise ModelFileError(f"{path}: corrupted model file (unreadable record batch: {exc})") from exc
    expected = meta.get(CHECKSUM_KEY, b"").decode("ascii", "replace")
    actual = _digest(model_json, training_json, [
        [(c[f.name + "_offsets"], c[f.name]) if isinstance(f.type, pa.ListType) else c[f.name] for f in schema]
        for c in batches])
    if expected != actual:
        raise ModelFileError(f"{path}: corrupted model file (checksum mismatch)")
    return doc, training, batches


def _rebuild_trees(doc: dict, batches: list[dict[str, np.ndarray]]):
    """ContextTrees, log-probabilities, concentrations and node groups from the cell batches."""
    cards = np.asarray(doc["cardinalities"], np.int64)
    n_classes = int(doc["n_classes"])
    parents = doc["structure"]["parents"]
    kept = doc["structure"]["kept"]
    trees_doc = doc["trees"]
    _need(len(trees_doc) == len(batches) == len(kept), "the number of trees does not match the structure")
    nodes, lp_l, grp_l, conc_l = [], [], [], []
    for t, (td, b) in enumerate(zip(trees_doc, batches)):
        c = int(td["attribute"])
        _need(c == kept[t], f"tree {t} is for attribute {c}, the structure keeps {kept[t]}")
        card = int(td["cardinality"])
        _need(card == cards[c] and card >= 1, f"tree {t}: cardinality {card} does not match")
        vars_ = [int(v) for v in td["branching"]]
        _need(vars_ == [-1] + [int(p) for p in parents[c]], f"tree {t}: branching order does not match the structure")
        radix = [n_classes] + [int(cards[p]) for p in vars_[1:]]
        D = len(vars_)
        if "count_offsets" in b:  # 3.0: one row per node, its cells in two lists
            n_nodes = b["parent"].shape[0]
            _need(n_nodes == int(td["nodes"]) >= 1, f"tree {t}: wrong number of nodes")
            bounds = np.arange(0, (n_nodes + 1) * card, card)
            _need(np.array_equal(b["count_offsets"], bounds) and np.array_equal(b["log_prob_offsets"], bounds),
                  f"tree {t}: a node's lists do not hold one value per value of the attribute")
            per_node = {col: b[col] for col in NODE_COLUMNS}
        else:
            n_cells = b["value"].shape[0]
            _need(n_cells % card == 0 and n_cells // card == int(td["nodes"]) >= 1, f"tree {t}: wrong number of cells")
            n_nodes = n_cells // card
            _need((b["tree"] == t).all(), f"tree {t}: wrong tree column")
            _need((b["node"] == np.repeat(np.arange(n_nodes), card)).all(), f"tree {t}: cells out of order")
            _need((b["value"] == np.tile(np.arange(card), n_nodes)).all(), f"tree {t}: cells out of order")
            per_node = {}
            for col in NODE_COLUMNS:
                per = b[col].reshape(n_nodes, card)
                _need(np.array_equal(per, np.broadcast_to(per[:, :1], per.shape), equal_nan=True),
                      f"tree {t}: column {col!r} differs between the cells of a node")
                per_node[col] = per[:, 0]
        par = per_node["parent"].astype(np.int64)
        dep = per_node["depth"].astype(np.int64)
        br = per_node["branch"].astype(np.int64)
        _need(par[0] == -1 and dep[0] == 0 and br[0] == -1, f"tree {t}: bad root")
        if n_nodes > 1:
            p = par[1:]
            _need(((p >= 0) & (p < np.arange(1, n_nodes))).all(), f"tree {t}: bad parent index")
            _need((dep[1:] == dep[p] + 1).all() and (np.diff(dep) >= 0).all() and dep[-1] <= D,
                  f"tree {t}: bad depths")
            rad = np.asarray(radix, np.int64)[dep[1:] - 1]
            _need(((br[1:] >= 0) & (br[1:] < rad)).all(), f"tree {t}: branch value out of range")
        _need((b["count"] >= 0).all(), f"tree {t}: negative counts")
        nodes.append(TreeNodes(c, card, vars_, par, dep, br, b["count"].astype(np.int64)))
        lp_l.append(b["log_prob"])
        grp_l.append(per_node["group"].astype(np.int64))
        conc_l.append(np.asarray(per_node["concentration"], np.float64))
    try:
        trees = ContextTrees.from_nodes(nodes, n_classes, cards)
    except ValueError as exc:
        raise _Corrupt(str(exc)) from None

    def cat(parts, dtype):
        return np.ascontiguousarray(np.concatenate(parts) if parts else np.zeros(0), dtype=dtype)

    return trees, cat(lp_l, np.float64), cat(grp_l, np.int64), cat(conc_l, np.float64)


def _concentrations(group: np.ndarray, conc: np.ndarray, n_groups: int = 0) -> np.ndarray:
    """Every group's concentration from the per-node columns (NaN for a group with no node)."""
    out = np.full(max(n_groups, int(group.max(initial=-1)) + 1), np.nan)
    out[group] = conc
    return out


def _read_network(part: dict, n_classes: int, batches) -> tuple:
    """One network of a model document (the top level of 1.0, a member of 2.0) and its batches:
    (attributes, cardinalities, structure, trees, log_probs, node groups, node concentrations)."""
    attributes = [
        Attribute(name=str(a["name"]), values=tuple(str(v) for v in a["values"]), numeric=bool(a["numeric"]),
                  cut_points=None if a["cut_points"] is None else tuple(float(x) for x in a["cut_points"]),
                  temporal=a.get("temporal"))
        for a in part["attributes"]
    ]
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
    trees, log_probs, group, conc = _rebuild_trees({**part, "n_classes": n_classes}, batches)
    return attributes, cards, structure, trees, log_probs, group, conc


def _check_numbers(attributes, trees, log_probs, log_prior, group, conc, hdp: bool) -> None:
    """The numbers a prediction uses must be ones a fit can produce: no NaN or infinite probabilities,
    distributions that sum to one, sorted finite cut points, positive concentrations."""
    for a in attributes:
        if a.cut_points is not None:
            cp = np.asarray(a.cut_points, np.float64)
            _need(np.isfinite(cp).all() and (np.diff(cp) > 0).all(), f"attribute {a.name!r}: bad cut points")
    _need(log_probs.shape == (trees.n_cells,), "the tables do not match the trees")
    _need(not np.isnan(log_probs).any() and (log_probs <= 1e-9).all(), "NaN or positive log-probabilities")
    card = trees.tree_card[trees.node_tree]
    sums = np.add.reduceat(np.exp(log_probs), trees.node_cell_start[:-1]) if log_probs.size else np.zeros(0)
    _need(card.size == sums.size and np.allclose(sums, 1.0, rtol=0, atol=1e-6),
          "a probability table does not sum to one")
    _need(not np.isnan(log_prior).any() and (log_prior <= 1e-9).all()
          and abs(float(np.exp(log_prior).sum()) - 1.0) < 1e-6, "bad class log-prior")
    if hdp:
        _need(group.shape == (trees.n_nodes,) and conc.shape == (trees.n_nodes,) and (group >= 0).all(),
              "bad concentration groups")
        _need(np.isfinite(conc).all() and (conc > 0).all(), "bad concentrations")


def _member_weights(doc: dict, parts: list) -> list[float]:
    """The members' weights of a 2.0 document, checked against what the writer writes: an ``eskdb``
    ensemble whose ``n_members`` (in ``ensemble`` and in ``params``) is the number of members, each of
    weight 1/n_members (to 1e-9, relative). Anything else (1e308, unequal or non-numeric weights, a
    count that does not match) would change or break the predictions: refused."""
    n = len(parts)
    ens = doc["ensemble"]
    _need(isinstance(ens, dict) and ens.get("kind") == "eskdb",
          f"ensemble kind {ens.get('kind') if isinstance(ens, dict) else ens!r} is not eskdb")
    for where, value in (("ensemble.n_members", ens.get("n_members")), ("params.n_members", doc["params"].get("n_members"))):
        _need(type(value) is int and value == n, f"{where} is {value!r} but the file holds {n} members")
    weights = [part["weight"] for part in parts]
    for e, w in enumerate(weights):
        _need(type(w) in (int, float) and math.isfinite(w) and w > 0 and abs(w * n - 1.0) <= 1e-9,
              f"member {e} has weight {w!r}; an ESKDB member weighs 1/n_members ({1.0 / n!r})")
    return [float(w) for w in weights]


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
        Fitted: ``classes_``, ``structure_``, ``parents_``, ``attributes_``, ``tables_``,
        ``fit_info_`` and the constructor parameters are restored.

    Raises
    ------
    ModelFileError
        A missing, truncated, corrupted or foreign file, or one written in a newer major version
        of the format; the message names the file.
    """
    return load_model_and_documents(path)[0]


@dataclass
class Network:
    """One network of a model file, read and checked: the whole model, or one ensemble member."""

    attributes: list[Attribute]
    cardinalities: np.ndarray
    structure: Structure
    trees: ContextTrees
    log_probs: np.ndarray
    #: HDP only: every node's concentration group, and every group's concentration
    node_group: np.ndarray | None
    concentrations: np.ndarray | None
    #: ensemble members only: the member's seed (plain data) and weight
    seed: dict | None = None
    weight: float = 1.0


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
        return is_ensemble(self.doc)


def is_ensemble(doc: dict) -> bool:
    """Whether a model document holds an ensemble: 2.0 always, 3.0 when it has ``members``."""
    major = doc["format_version"][0]
    return major == 2 or (major >= 3 and "members" in doc)


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
        ensemble = is_ensemble(doc)
        parts = doc["members"] if ensemble else [doc]
        _need(isinstance(parts, list) and len(parts) >= 1, "an ensemble without members")
        networks, first = [], 0
        for part in parts:
            n_trees = len(part["trees"])
            networks.append(_read_network(part, n_classes, batches[first:first + n_trees]))
            first += n_trees
        _need(first == len(batches), "the number of trees does not match the structure")
        weights = _member_weights(doc, parts) if ensemble else [1.0]
        for attrs, *_ in networks[1:]:
            _need([(a.name, a.numeric) for a in attrs] == [(a.name, a.numeric) for a in networks[0][0]],
                  "members disagree on the attributes")
        params = {n: default(n) for n in NAMES}
        params.update((k, v) for k, v in doc["params"].items() if k in NAMES)
        check_all(params)
        hdp = params["estimator"] == "hdp"
        for attrs, _, _, trees, log_probs, group, conc in networks:
            _check_numbers(attrs, trees, log_probs, log_prior, group, conc, hdp)
        info = dict(doc.get("fit") or {})
        info.update(training)
        if hdp and not ensemble:
            group, conc = networks[0][5], networks[0][6]
            n_groups = int(doc["estimator"].get("n_groups", int(group.max(initial=-1)) + 1))
            _need(0 <= n_groups <= group.size and (group < n_groups).all(), "bad concentration groups")
            info.update(concentrations=_concentrations(group, conc, n_groups), node_group=group)
        if hdp and ensemble:  # the members' groups are numbered across the ensemble: at most one per node
            total = sum(net[5].size for net in networks)
            _need(all(net[5].max(initial=-1) < total for net in networks), "bad concentration groups")
        nets = []
        for part, w, (attrs, cards, structure, trees, log_probs, group, conc) in zip(parts, weights, networks):
            if not hdp:
                group = concentrations = None
            elif ensemble:
                concentrations = _concentrations(group, conc)
            else:
                concentrations = info["concentrations"]
            nets.append(Network(attrs, cards, structure, trees, log_probs, group, concentrations,
                                part.get("seed") if ensemble else None, w))
        info["format_version"] = tuple(doc["format_version"])
        info["package_version"] = doc.get("package_version")
        feature_names = bool(doc.get("feature_names_in"))
        left_out = _left_out(doc.get("left_out", []), [a.name for a in networks[0][0]])
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

    m = read_model(path)
    clf = BayesNetClassifier(**m.params)
    net = m.networks[0]
    names = [a.name for a in net.attributes]
    clf.classes_ = m.classes
    clf.discretization_ = clf.discretization
    clf.tables_ = ProbabilityTables(net.trees, net.log_probs, m.log_prior)
    clf.structure_ = net.structure
    clf.attributes_ = net.attributes
    clf.class_attribute_ = m.class_attribute
    clf.cardinalities_ = net.cardinalities
    clf.n_features_in_ = len(net.attributes)
    clf.k_used_ = usable_k(clf.structure, clf.k, len(net.attributes))
    clf.parents_ = net.structure.named_parents(names)
    clf.left_out_ = [name for _, name in m.left_out]
    names = input_names(names, m.left_out)
    clf.n_features_in_ = len(names)
    clf._array_names_ = names
    if m.feature_names:
        clf.feature_names_in_ = np.asarray(names, dtype=object)
    if m.ensemble:
        from .ensemble import Member

        clf.members_ = [
            Member(seed=n.seed, attributes=n.attributes, cardinalities=n.cardinalities, structure=n.structure,
                   tables=ProbabilityTables(n.trees, n.log_probs, m.log_prior), weight=n.weight,
                   node_group=n.node_group, concentrations=n.concentrations)
            for n in m.networks
        ]
        clf.tables_ = clf.members_[0].tables
    clf.fit_info_ = m.info
    return clf, m.doc, m.training
