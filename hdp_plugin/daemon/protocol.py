"""The spool protocol (version 1): what a producer (the ``submit`` command, the Java Weka wrapper) and
the daemon must agree on; ``docs/spool-protocol.md`` is the prose contract and the two are kept in step.

This module holds the job schema (``job.json``), the error codes and the protocol's limits, and
re-exports the rest of the contract under one name (``from hdp_plugin.daemon import protocol as P``):
:mod:`.layout` (names and paths: the directories, the files of a job folder, :class:`Spool`),
:mod:`.fileops` (atomic writes and renames, tolerant reads) and :mod:`.locks` (locks and liveness).

Layout of a spool (every name below is fixed)::

    SPOOL/                      mode 0700
      tmp/<job>/                producers build a job here (never read by the daemon)
      new/<job>/                published jobs, waiting (one atomic rename from tmp/)
      claimed/<daemon>/<job>/   jobs a daemon is running (one atomic rename from new/)
      done/<job>/               finished: job.json, data, model.arrow, result.json
      failed/<job>/             failed: job.json, data (if any), error.json
      progress/<job>.json       progress of a running job (replaced atomically)
      cancel/<job>              cancel marker written by a client
      daemons/<daemon>.lock     held locked by a live daemon (byte 0, exclusive)
      daemons/<daemon>.json     heartbeat of a daemon (replaced atomically)
      daemons/<daemon>.stop     stop marker written by ``stop``
      daemons/.stop-all         stop request of ``stop`` for every daemon started before it
      daemons/.attempts.key     the daemons' key for sealing a job's attempts.json

A job changes state only by renaming its folder, so a job is always in exactly one state and a
folder seen in ``done/`` or ``failed/`` is complete. Claiming renames ``new/<job>`` to
``claimed/<daemon>/<job>``: the owner is part of the path, the source exists once, so exactly
one daemon wins.
"""

from __future__ import annotations

import json
import math

from .. import config
from ..errors import JobError
from ..params import PARAMETERS, Param, burn_in_over
from .fileops import (  # noqa: F401 - re-exported: the protocol's atomic operations
    attempts_key, cancel_requested, clean_job_folder, is_real_dir, move, move_final, now_iso, number, read_attempts, read_json,
    remove_quietly, unseal_attempts, write_atomic, write_attempts, write_json,
)
from .layout import (  # noqa: F401 - re-exported: the protocol's names and paths
    ATTEMPTS_FILE, ATTEMPTS_KEY_FILE, CANCEL, CLAIMED, DAEMON_FILES, DAEMONS, DATA_FILES, DONE, ERROR_FILE, FAILED, JOB_FILE, MODEL_FILE,
    NAME_RE, NEW, PROGRESS, RESULT_FILE, STOP_ALL_FILE, SUBDIRS, TMP, Spool, check_name, new_daemon_id,
)
from .locks import (  # noqa: F401 - re-exported: liveness
    DaemonLock, daemon_alive, heartbeat_fresh, pid_alive, process_started,
)

#: the protocol version this code speaks (``protocol`` field of every JSON file)
PROTOCOL_VERSION = 1

#: machine-readable codes of ``error.json``
ERROR_CODES = {
    "no_space": "the disk (or quota) of the spool is full: the job's files could not be written",
    "bad_job": "job.json is missing, malformed or invalid, or the job folder is unsafe",
    "bad_data": "the data file cannot be read or cannot be trained on",
    "too_large": "the input exceeds a resource limit of the daemon",
    "out_of_memory": "the job ran out of memory",
    "cancelled": "a client cancelled the job",
    "too_many_attempts": "the job's daemon or worker died during every one of its attempts",
    "internal_error": "a bug or an unexpected failure of the daemon",
}

#: limits and timings of the protocol (defined in config, with every tunable of the package)
MAX_JOB_BYTES = config.MAX_JOB_BYTES
MAX_ATTEMPTS = config.MAX_ATTEMPTS
DEFAULT_MAX_INPUT_BYTES = config.DEFAULT_MAX_INPUT_BYTES
DEFAULT_MAX_CARDINALITY = config.DEFAULT_MAX_CARDINALITY
HEARTBEAT_SECONDS = config.HEARTBEAT_SECONDS
STALE_HEARTBEATS = config.STALE_HEARTBEATS
TMP_MAX_AGE_SECONDS = config.TMP_MAX_AGE_SECONDS
MAX_DOC_BYTES = config.MAX_DOC_BYTES
#: the longest ``source`` of a job.json (a path, as long as the longest most systems allow)
MAX_SOURCE_CHARS = 4096


# ------------------------------------------------------------------------------------------
# the job schema
# ------------------------------------------------------------------------------------------
class _Field:
    __slots__ = ("name", "kind", "default", "required", "choices", "minimum", "maximum", "help")

    def __init__(self, name, kind, default=None, *, required=False, choices=None, minimum=None,
                 maximum=None, help=""):
        self.name, self.kind, self.default, self.required = name, kind, default, required
        self.choices, self.minimum, self.maximum, self.help = choices, minimum, maximum, help


def _param_field(p: Param) -> _Field:
    """The job.json field of a classifier parameter: its JSON type, default and domain from the spec."""
    kind = {"choice": "string", "int": "integer", "seed": "integer", "float": "number",
            "columns": "array|string", "names": "array"}[p.kind]
    nullable = p.nullable and p.default_in_job is None
    return _Field(p.job, kind + ("|null" if nullable else ""), p.default_in_job,
                  choices=p.choices or None, minimum=p.minimum, maximum=p.maximum, help=p.help)


#: job.json, version 1: every field, its JSON type, default and domain
JOB_SCHEMA = (
    _Field("protocol", "integer", required=True, minimum=1, maximum=PROTOCOL_VERSION,
           help="protocol version the producer speaks; this daemon speaks 1"),
    _Field("data", "string|null", None,
           help="data.arff or data.arrow (a file of the job folder); default: whichever exists"),
    _Field("source", "string|null", None,
           help="the file the producer took the data from, at most 4096 characters: named in the job's "
                "messages, never opened"),
    _Field("class_attribute", "string|null", None,
           help="name of the class attribute; null means the last attribute, as in Weka"),
    *(_param_field(p) for p in PARAMETERS if p.job),  # the classifier's parameters (hdp_plugin.params)
    _Field("client", "string|null", None,
           help="free text naming the producer (at most 200 characters), copied to the result"),
)
FIELDS = {f.name: f for f in JOB_SCHEMA}
#: the classifier parameter of each job field that is one
_PARAM_OF_JOB = {p.job: p.name for p in PARAMETERS if p.job}


def _bad(field: str | None, message: str) -> JobError:
    """A :class:`JobError` that names the job.json field at fault (``error.json``'s ``field``)."""
    exc = JobError(message)
    exc.field = field
    return exc


def _type_ok(value, kind: str) -> bool:
    for k in kind.split("|"):
        if k == "null" and value is None:
            return True
        if k == "string" and isinstance(value, str):
            return True
        if k == "integer" and isinstance(value, int) and not isinstance(value, bool):
            return True
        if k == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
            return True
        if k == "array" and isinstance(value, list):
            return True
    return False


def _json_name(kind: str) -> str:
    return " or ".join(kind.split("|"))


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def parse_json(text: bytes | str, what: str = "job.json"):
    """Strict JSON: no NaN/Infinity, no duplicate keys; :class:`JobError` naming the line."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicates)
    except UnicodeDecodeError as exc:
        raise JobError(f"{what}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise JobError(f"{what}: malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except (ValueError, RecursionError) as exc:
        raise JobError(f"{what}: malformed JSON: {exc}") from None


def validate_job(doc) -> dict:
    """Check a parsed job.json against :data:`JOB_SCHEMA`; return it with every default filled in.

    Raises
    ------
    JobError
        Naming the first field at fault and what it received: unknown fields, wrong JSON types,
        values out of their domain, a burn-in not below the iterations.
    """
    if not isinstance(doc, dict):
        raise _bad(None, f"job.json must hold a JSON object, got {type(doc).__name__}")
    unknown = sorted(set(doc) - set(FIELDS))
    if unknown:
        raise _bad(unknown[0], f"job.json: unknown field {unknown[0]!r}; the fields are {', '.join(FIELDS)}")
    out = {}
    for f in JOB_SCHEMA:
        if f.name not in doc:
            if f.required:
                raise _bad(f.name, f"job.json: missing required field {f.name!r} ({f.help})")
            out[f.name] = f.default
            continue
        v = doc[f.name]
        if not _type_ok(v, f.kind):
            raise _bad(f.name, f"job.json: {f.name} must be a JSON {_json_name(f.kind)}, got {v!r}")
        if v is not None and f.kind.startswith("array"):  # categorical_features, keep_columns
            from ..errors import ParameterError
            from ..params import check

            try:
                check(_PARAM_OF_JOB[f.name], v, label=f.name)
            except ParameterError as exc:
                raise _bad(f.name, f"job.json: {exc}") from None
        elif v is not None:
            if f.choices is not None and v not in f.choices:
                raise _bad(f.name, f"job.json: {f.name} must be one of {', '.join(f.choices)}; got {v!r}")
            if f.kind.startswith("number") and isinstance(v, int) and not isinstance(v, bool):
                try:  # a JSON number field holds a double: an integer beyond one's range is not finite
                    float(v)
                except OverflowError:
                    raise _bad(f.name, f"job.json: {f.name} must be finite, got an integer of {len(str(v))} "
                                       "digits") from None
            if isinstance(v, float) and not math.isfinite(v):
                raise _bad(f.name, f"job.json: {f.name} must be finite, got {v!r}")
            if f.minimum is not None and v < f.minimum:
                raise _bad(f.name, f"job.json: {f.name} must be >= {f.minimum}, got {v!r}")
            if f.maximum is not None and v > f.maximum:
                if f.name == "protocol":
                    raise _bad(f.name, f"job.json: protocol {v!r} is newer than this daemon's "
                                   f"{PROTOCOL_VERSION}; upgrade hdp_plugin")
                raise _bad(f.name, f"job.json: {f.name} must be <= {f.maximum}, got {v!r}")
        out[f.name] = v
    # iterations null: the structure's default; a baseline estimator's burn-in is set aside
    iterations = burn_in_over(out["structure"], out["iterations"], out["burn_in"], out["estimator"])
    if iterations is not None:
        what = f"iterations ({iterations})" if out["iterations"] is not None else \
            f"the iterations ({iterations}, the default for {out['structure']})"
        raise _bad("burn_in", f"job.json: burn_in must be below {what}, got {out['burn_in']!r}")
    if out["client"] is not None and len(out["client"]) > 200:
        raise _bad("client", f"job.json: client must be at most 200 characters, got {len(out['client'])}")
    if out["source"] is not None and len(out["source"]) > MAX_SOURCE_CHARS:
        raise _bad("source", f"job.json: source must be at most {MAX_SOURCE_CHARS} characters, got "
                             f"{len(out['source'])}")
    if out["data"] is not None and out["data"] not in DATA_FILES:
        raise _bad("data", f"job.json: data must be one of {', '.join(DATA_FILES)} (a file of the job "
                       f"folder), got {out['data']!r}")
    return out


def classifier_params(job: dict) -> dict:
    """The :class:`BayesNetClassifier` parameters of a validated job (threads left to the daemon); the
    model document stores them canonically (:func:`hdp_plugin.params.canonical_params`), as every face's."""
    params = {p.name: job[p.job] for p in PARAMETERS if p.job}
    params["m"] = float(params["m"])
    return params
