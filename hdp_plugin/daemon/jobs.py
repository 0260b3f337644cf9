"""Execute one job: read its folder safely, train, write ``model.arrow`` + ``result.json`` or ``error.json``.

This runs inside a worker process. It reads only files inside the job folder (no absolute paths,
no ``..``, no links that leave it), never executes or unpickles anything from the job, and turns
every failure into an ``error.json`` with a machine-readable code. The folder is not moved here:
the daemon renames it into ``done/`` or ``failed/`` when this returns.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import platform
import stat
import sys
import time
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .. import config

from ..runtime import cancel
from .._version import __version__
from ..errors import HDPError, JobError
from ..params import resolved_iterations, usable_k
from . import logs
from . import protocol as P

log = logs.logger(__name__)


class LimitError(JobError):
    """The input exceeds a resource limit of the daemon."""

    code = "too_large"


class Interrupted(Exception):
    """The daemon is stopping: put the job back in new/ (not a failure, no attempt counted)."""


@dataclass
class Limits:
    """Resource limits of one daemon."""

    max_input_bytes: int = config.DEFAULT_MAX_INPUT_BYTES
    max_cardinality: int = config.DEFAULT_MAX_CARDINALITY
    max_cells: int = config.MAX_CELLS


@dataclass
class Context:
    """What a job needs to know about the daemon running it."""

    spool: P.Spool
    daemon_id: str
    attempt: int = 1
    limits: Limits = None
    #: True when the daemon wants the job interrupted (it is stopping or its parent died)
    interrupted: Callable[[], bool] = lambda: False
    #: seconds between progress file updates
    progress_every: float = config.PROGRESS_SECONDS

    def __post_init__(self):
        if self.limits is None:
            self.limits = Limits()


# ------------------------------------------------------------------------------------------
# the installation the daemon runs from
# ------------------------------------------------------------------------------------------
def installation() -> list[str]:
    """The files the daemon runs from and that exist: the Python executable and hdp_plugin's
    ``__init__.py`` (an uninstall, or the deletion of the environment, removes them)."""
    from .. import __file__ as package

    return [p for p in (sys.executable, package) if p and os.path.isfile(p)]


#: the installation as this process found it when it imported this module (a path that did not exist
#: then, like a package inside a zip file, is never watched)
_INSTALLATION = installation()


def installation_gone() -> str | None:
    """The first file of this process's :func:`installation` that no longer exists, or None."""
    return next((p for p in _INSTALLATION if not os.path.isfile(p)), None)


# ------------------------------------------------------------------------------------------
# reading the job folder
# ------------------------------------------------------------------------------------------
#: how a job's file is opened: never through a link (O_NOFOLLOW), never waiting for a FIFO's writer
#: (O_NONBLOCK), in binary mode (O_BINARY, Windows); each where the platform has it
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
#: POSIX: a job's file is reached from the job folder's descriptor one name at a time, no link followed
_WALK = hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY") and os.open in os.supports_dir_fd


def _resolve(folder: Path, name: str, what: str) -> tuple[Path, tuple[str, ...], os.stat_result]:
    """``(folder/name, parts, st)`` if ``name`` is a regular file truly inside ``folder``, else
    :class:`JobError`: ``parts`` is the file's path inside the folder (where an inside link leads) and
    ``st`` its ``lstat``."""
    if os.path.isabs(name) or os.sep in name or (os.altsep and os.altsep in name) or name in ("", ".", ".."):
        raise JobError(f"{what} must be a plain file name inside the job folder, got {name!r}")
    path = folder / name
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise JobError(f"the job folder has no {name}") from None
    parts: tuple[str, ...] = (name,)
    if stat.S_ISLNK(st.st_mode):
        top = os.path.realpath(folder)
        try:
            real = os.path.realpath(path, strict=True)
            st = os.lstat(real)
        except (OSError, RuntimeError):
            raise JobError(f"{name} is a link to nothing (dangling, or a loop of links)") from None
        if os.path.commonpath([real, top]) != top or real == top:
            raise JobError(f"{name} is a link that leaves the job folder (to {real}); jobs may only "
                           "read their own files")
        parts = Path(os.path.relpath(real, top)).parts
    if not stat.S_ISREG(st.st_mode):
        raise JobError(f"{name} is not a regular file")
    if st.st_nlink > 1:
        raise JobError(f"{name} has {st.st_nlink} hard links: it may be a file outside the job folder; "
                       "jobs must hold their own copy of their files")
    return path, parts, st


def _inside(folder: Path, name: str, what: str) -> Path:
    """``folder/name`` if it is a regular file truly inside ``folder``, else :class:`JobError`."""
    return _resolve(folder, name, what)[0]


def _open_no_follow(folder: Path, parts: tuple[str, ...]) -> int:
    """A read-only descriptor of the file at ``parts`` inside ``folder``, opened without following a link
    and without waiting on a FIFO. Where the platform has ``dir_fd`` and ``O_NOFOLLOW`` (POSIX) every
    name is opened from its directory's descriptor, so that nothing swapped into the path can lead
    outside the folder; elsewhere (Windows) the path is opened and the caller compares the descriptor
    with the file it checked."""
    if not _WALK:
        return os.open(os.path.join(folder, *parts), _OPEN_FLAGS)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for part in parts[:-1]:
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
        return os.open(parts[-1], _OPEN_FLAGS, dir_fd=fd)
    finally:
        os.close(fd)


def _read_inside(folder: Path, name: str, what: str, limit: int, too_large: Callable[[int], Exception]
                 ) -> tuple[Path, bytes]:
    """``(folder/name, its bytes)``: the file checked as :func:`_inside` checks it, opened once, and read
    through that descriptor only if it is the very file checked (a regular file, the same device and
    inode, one hard link), of at most ``limit`` bytes (else ``too_large(bytes)``), and only whole (one
    that grows or shrinks while it is read is refused). A producer that swaps
    the file for a link or a FIFO between the check and the read gets ``bad_job``, never a read of
    another file and never a worker waiting on a FIFO."""
    path, parts, st = _resolve(folder, name, what)
    try:
        fd = _open_no_follow(folder, parts)
    except OSError as exc:
        raise JobError(f"{name} changed while the daemon opened it ({exc.strerror or exc}): it became a link "
                       "or vanished; a published job's files must not change") from None
    # the descriptor is examined before a file object is made of it (Python refuses to make one of a
    # directory, with an error of its own), and closed here whatever happens
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            raise JobError(f"{name} changed while the daemon opened it (another file, a directory, a FIFO or a "
                           "device was put in its place); a published job's files must not change")
        if now.st_nlink > 1:
            raise JobError(f"{name} has {now.st_nlink} hard links: it may be a file outside the job folder; "
                           "jobs must hold their own copy of their files")
        if now.st_size > limit:
            raise too_large(now.st_size)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(now.st_size + 1)  # its size, and one byte more to see it grow
    finally:
        os.close(fd)
    if len(data) != now.st_size:
        raise JobError(f"{name} changed while the daemon read it ({now.st_size} bytes, then {len(data)} read); "
                       "a published job's files must not change")
    return path, data


def read_job(folder: Path) -> dict:
    """Read and validate ``job.json`` of a job folder; return the job with defaults filled in."""
    _, raw = _read_inside(folder, P.JOB_FILE, "job.json", P.MAX_JOB_BYTES,
                          lambda n: JobError(f"job.json is larger than {P.MAX_JOB_BYTES} bytes"))
    return P.validate_job(P.parse_json(raw))


def _data_name(folder: Path, job: dict) -> str:
    """The name of the job's data file: job.json's ``data``, or the one of P.DATA_FILES present."""
    name = job["data"]
    if name is None:
        present = [n for n in P.DATA_FILES if os.path.lexists(folder / n)]
        if not present:
            raise JobError(f"the job folder has no data file ({' or '.join(P.DATA_FILES)})")
        if len(present) > 1:
            raise JobError(f"the job folder has both {' and '.join(present)}; name one in job.json's data field")
        name = present[0]
    return name


def data_file(folder: Path, job: dict) -> Path:
    """The job's data file, checked to be a regular file inside the folder."""
    return _inside(folder, _data_name(folder, job), "data")


def shown_name(job: dict, name: str) -> str:
    """How the job's messages name its data file ``name``: the file the producer took it from, when
    job.json's ``source`` says (control characters escaped), beside the name in the folder."""
    if not job.get("source"):
        return name
    return f"{logs.escape(job['source'])} (the job's {name})"


def read_data(folder: Path, job: dict, max_bytes: int) -> tuple[Path, bytes]:
    """``(path, bytes)`` of the job's data file, read through one checked descriptor
    (:func:`_read_inside`); more than ``max_bytes`` is :class:`LimitError`."""
    name = data_file(folder, job).name

    def too_large(size: int) -> LimitError:
        return LimitError(f"{shown_name(job, name)} has {size} bytes, more than this daemon's limit of {max_bytes} "
                          "(run --max-input-mb)")

    return _read_inside(folder, name, "data", max_bytes, too_large)


# ------------------------------------------------------------------------------------------
# progress and cancellation
# ------------------------------------------------------------------------------------------
class _Progress:
    """Writes ``progress/<job>.json`` and answers the sampler's progress hook."""

    def __init__(self, ctx: Context, name: str, folder: Path):
        self.ctx, self.name, self.folder = ctx, name, folder
        self.path = ctx.spool.progress(name)
        self.cancel = ctx.spool.cancel(name)
        self.started = time.time()
        self.last = 0.0
        self.phase = "starting"
        #: the data file in the folder and how the job's messages name it (its ``source``), once known
        self.data: tuple[Path, str] | None = None

    def cancelled(self) -> bool:
        """A client asked to cancel this job (a marker older than the job is another job's)."""
        return P.cancel_requested(self.cancel, self.folder)

    def check(self) -> None:
        if self.cancelled():
            from ..errors import Cancelled

            raise Cancelled(f"cancelled by a client (cancel/{self.name}) during {self.phase}")
        if self.ctx.interrupted():
            raise Interrupted()

    def set(self, phase: str, iteration: int = 0, total: int = 0, *, force: bool = True) -> None:
        self.phase = phase
        now = time.time()
        if not force and now - self.last < self.ctx.progress_every and iteration < total:
            return
        self.last = now
        doc = {"protocol": P.PROTOCOL_VERSION, "job": self.name, "phase": phase, "iteration": int(iteration),
               "total": int(total), "attempt": self.ctx.attempt, "daemon": self.ctx.daemon_id,
               "pid": os.getpid(), "started_unix": self.started, "updated": P.now_iso(), "updated_unix": now}
        try:
            P.write_json(self.path, doc, fsync=False)
        except OSError as exc:  # progress is advisory: never fail a job for it
            log.warning("cannot write %s: %s", self.path, exc)

    def hook(self, done: int, total: int) -> bool:
        """The classifier's private progress hook: False cancels the sampler."""
        self.set("sampling", done, total, force=False)
        if self.cancelled() or self.ctx.interrupted():
            return False
        return True


# ------------------------------------------------------------------------------------------
# one job
# ------------------------------------------------------------------------------------------
def _error_doc(name: str, code: str, message: str, ctx: Context, **extra) -> dict:
    doc = {"protocol": P.PROTOCOL_VERSION, "job": name, "status": "failed", "code": code, "message": message,
           "attempt": ctx.attempt, "daemon": ctx.daemon_id, "finished": P.now_iso()}
    doc.update({k: v for k, v in extra.items() if v is not None})
    return doc


def write_error(folder: Path, name: str, code: str, message: str, ctx: Context, **extra) -> None:
    """Write ``error.json`` into a job folder (atomically); the model, if any, is removed first."""
    P.remove_quietly(folder / P.MODEL_FILE)
    P.remove_quietly(folder / P.RESULT_FILE)
    P.write_json(folder / P.ERROR_FILE, _error_doc(name, code, message, ctx, **extra))


def execute(folder: Path, name: str, ctx: Context) -> str:
    """Run the job in ``folder``; return ``"done"``, ``"failed"`` or ``"requeue"``.

    ``done``: ``model.arrow`` and ``result.json`` are in the folder. ``failed``: ``error.json`` is.
    ``requeue``: the daemon is stopping and the job should go back to ``new/`` untouched.
    """
    from ..errors import Cancelled

    folder = Path(folder)
    prog = _Progress(ctx, name, folder)
    queued = None
    try:
        queued = time.time() - os.stat(folder / P.JOB_FILE).st_mtime
    except OSError:
        pass
    try:
        result = _train(folder, name, ctx, prog)
        result["timings"]["queued_seconds"] = queued
        P.write_json(folder / P.RESULT_FILE, result)
        return "done"
    except Interrupted:
        for f in P.DAEMON_FILES:
            P.remove_quietly(folder / f)
        return "requeue"
    except Cancelled as exc:
        if ctx.interrupted() and not prog.cancelled():
            for f in P.DAEMON_FILES:
                P.remove_quietly(folder / f)
            return "requeue"
        why = str(exc) if str(exc).startswith("cancelled by") else f"cancelled by a client (cancel/{name}): {exc}"
        write_error(folder, name, "cancelled", why, ctx, phase=prog.phase)
    except BaseException as exc:  # noqa: BLE001 - every failure becomes error.json
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        if isinstance(exc, ImportError) and installation_gone():
            # hdp_plugin was uninstalled under the worker: not the job's fault; it goes back to new/ for a
            # daemon of an installation that exists (this one stops: service.Daemon watches it too)
            log.warning("job %s: %s, a module of its own installation, cannot be imported (%s is gone); "
                        "putting the job back", name, exc.name, installation_gone())
            for f in P.DAEMON_FILES:
                P.remove_quietly(folder / f)
            return "requeue"
        try:
            _write_failure(folder, name, ctx, prog, exc)
        except OSError as exc2:  # a full disk: the daemon tries once more, or puts the job back
            log.error("job %s: cannot write error.json (%s)", name, exc2)
            for f in P.DAEMON_FILES:
                P.remove_quietly(folder / f)
    return "failed"


_NO_SPACE = {errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}


def _client_names(message: str, folder: Path, prog: _Progress) -> str:
    """``message`` naming files as the client knows them: the data file as the file it was taken from
    (:func:`shown_name`), the others by their names in the job folder (job.json), never by the folder's
    path in claimed/."""
    if prog.data is not None:
        path, shown = prog.data
        message = message.replace(str(path), shown)
    return message.replace(str(folder) + os.sep, "")


def _write_failure(folder: Path, name: str, ctx: Context, prog: _Progress, exc: BaseException) -> None:
    """The error.json of a failed job."""
    if isinstance(exc, MemoryError):
        write_error(folder, name, "out_of_memory",
                    f"out of memory during {prog.phase}; try fewer attributes, a smaller k or less data", ctx,
                    phase=prog.phase)
    elif isinstance(cause := (exc if isinstance(exc, OSError) else exc.__cause__), OSError) and cause.errno in _NO_SPACE:
        what = _client_names(str(exc), folder, prog) if isinstance(exc, HDPError) else \
            f"{Path(exc.filename).name if exc.filename else 'a file'}: {exc.strerror or exc}"
        write_error(folder, name, "no_space", f"no space left on the spool's disk during {prog.phase} ({what}); "
                    "free some space and submit the job again", ctx, phase=prog.phase)
    elif isinstance(exc, HDPError):
        code = exc.code if exc.code in P.ERROR_CODES else ("bad_job" if exc.code == "bad_parameter" else "internal_error")
        field = getattr(exc, "field", None)
        message = _client_names(str(exc), folder, prog)
        write_error(folder, name, code, message, ctx, phase=prog.phase, field=field)
    else:  # a bug: keep the traceback for the report
        log.error("job %s failed", name, exc_info=exc)
        write_error(folder, name, "internal_error", _client_names(f"{type(exc).__name__}: {exc}", folder, prog), ctx,
                    phase=prog.phase,
                    traceback="".join(traceback.format_exception(exc, limit=20)))


def _declare(ds, spec, max_cardinality: int):
    """The job's ``categorical_features`` applied to its data (as the classifier applies them, which then
    has nothing left to do); a name, index or mask that does not fit the data is ``bad_job`` naming the
    field, a domain above this daemon's limit ``too_large``."""
    from ..data.categorical import declare_categorical
    from ..errors import ParameterError, TooLargeError

    try:
        return declare_categorical(ds, spec, max_values=max_cardinality)
    except ParameterError as exc:
        err = JobError(f"job.json: {exc}")
        err.field = "categorical_features"
        raise err from None
    except TooLargeError as exc:
        raise LimitError(f"{exc} (run --max-cardinality)") from None


def _train(folder: Path, name: str, ctx: Context, prog: _Progress) -> dict:
    from ..data.limits import Limits as DataLimits
    from ..data.readers import read_within
    from ..model import BayesNetClassifier
    from ..model.modelfile import save_model

    t0 = time.perf_counter()
    started = P.now_iso()
    prog.set("reading")
    prog.check()
    # Step 1: the job description
    job = read_job(folder)
    # Step 2: the data, from inside the folder only, within the limits, read through the one descriptor
    # that was checked (the folder's files are the producer's and may change under the daemon)
    data_name = _data_name(folder, job)
    prog.data = (folder / data_name, shown_name(job, data_name))  # how the job's messages name it
    path, raw = read_data(folder, job, ctx.limits.max_input_bytes)
    size = len(raw)
    # the same Dataset read_dataset reads, within this daemon's limits: a gzip ARFF decompressed only up to
    # --max-input-mb, an ARFF attribute's values counted while its header is parsed, and data whose
    # working memory (config.WORKING_MEMORY_FACTOR x --max-input-mb) would not do refused before it is decoded
    params = P.classifier_params(job)  # iterations null: auto (the progress total is its most)
    from ..runtime.threads import members_at_once

    at_once = members_at_once(params)  # ESKDB members are built on threads at once
    limits = DataLimits(ctx.limits.max_input_bytes, ctx.limits.max_cardinality, ctx.limits.max_cells)
    ds = read_within(path, limits, class_attribute=job["class_attribute"], format=P.DATA_FILES[path.name],
                     structure=params["structure"], members_at_once=at_once, data=raw)
    del raw
    if job["categorical_features"] is not None:  # declared columns count against the cardinality limit
        ds = _declare(ds, job["categorical_features"], ctx.limits.max_cardinality)
    t_read = time.perf_counter() - t0
    prog.check()
    # Step 3: train, exactly as BayesNetClassifier(**params).fit(read_dataset(...)) would
    prog.set("training", 0, resolved_iterations(params["structure"], params["iterations"])
             if job["estimator"] == "hdp" else 0)
    clf = BayesNetClassifier(**params)
    t1 = time.perf_counter()
    # the phases before the sampler stop between their steps too; the pairwise statistics stay within the
    # working memory the data leaves
    with cancel.checking(prog.check), limits.fitting(ds.n_rows, len(ds.attributes) + 1, params["structure"],
                                                      at_once):
        clf.fit(ds, progress=prog.hook)
    t_fit = time.perf_counter() - t1
    prog.check()
    # Step 4: the model file (written under a temporary name, then renamed)
    prog.set("saving")
    t2 = time.perf_counter()
    save_model(clf, folder / P.MODEL_FILE)
    t_save = time.perf_counter() - t2
    info = clf.fit_info_
    return {
        "protocol": P.PROTOCOL_VERSION,
        "job": name,
        "status": "done",
        "client": job["client"],
        "model": P.MODEL_FILE,
        "job_settings": job,
        "data": {"file": path.name, "bytes": size, "rows": int(ds.n_rows),
                 "rows_used": int(info["rows"]), "dropped_missing_class": int(info["dropped_missing_class"]),
                 "attributes": int(ds.n_attributes), "class": ds.class_attribute.name,
                 "classes": [str(c) for c in clf.classes_]},
        "structure": structure_doc(clf),
        "sampler": ({"iterations": int(info["iterations"]), "burn_in": int(info["burn_in"]),
                     "n_samples": int(info["n_samples"])} if job["estimator"] == "hdp" else None),
        "timings": {"read_seconds": t_read, "structure_seconds": info.get("structure_seconds"),
                    "sampler_seconds": info.get("sampler_seconds"),
                    # the fit's own time, as the model file records it: compiling numba's kernels on a
                    # first use is apart (and in total_seconds)
                    "fit_seconds": info.get("fit_seconds", t_fit), "compile_seconds": info.get("compile_seconds", 0.0),
                    "save_seconds": t_save, "total_seconds": time.perf_counter() - t0},
        "warnings": [str(w) for w in info.get("warnings", [])],
        "attempt": ctx.attempt,
        "daemon": ctx.daemon_id,
        "started": started,
        "finished": P.now_iso(),
        "versions": {"hdp_plugin": __version__, "model_format": [config.MODEL_FORMAT_MAJOR, config.MODEL_FORMAT_MINOR],
                     "python": platform.python_version()},
    }


def structure_doc(clf) -> dict:
    """``result.json``'s ``structure``: the whole model. A single network: its kind, k, kept attributes,
    parents and sizes. An ensemble: the structure asked for, the K its members choose their k within
    (the k asked, capped at the attributes less one), its ``members``, the attributes any member
    keeps, the trees, nodes and cells of all members together, and each member's kind, k, kept and sizes
    in ``per_member`` (``parents`` is null: each member has its own, in the model file). ``cells`` counts
    the cells a model file stores: those with training rows. ``cell_limited`` lists the members (0 for a
    single network) whose SkDB selection took a smaller model than its best to stay within its table-cell
    cap, each with the best model's n*, k* and cells and the cap (the model file's ``structure.info``)."""
    members = clf.members_
    each = [{"kind": mb.structure.kind, "k": int(mb.structure.k), "kept": len(mb.structure.kept),
             "trees": mb.tables.n_trees, "nodes": mb.tables.n_nodes, "cells": mb.tables.n_observed}
            for mb in members]
    limited = [{"member": e, **{key: int(v) for key, v in mb.structure.info["cell_limited"].items()}}
               for e, mb in enumerate(members) if "cell_limited" in mb.structure.info]
    if len(members) == 1:
        st = members[0].structure
        names = [a.name for a in members[0].attributes]
        return {"kind": st.kind, "k": int(st.k), "members": 1, "kept": len(st.kept),
                "parents": {names[j]: [names[p] for p in st.parents[j]] for j in st.kept},
                **{size: each[0][size] for size in ("trees", "nodes", "cells")}, "cell_limited": limited}
    kept = {mb.attributes[j].name for mb in members for j in mb.structure.kept}
    # the ensemble's k: the K each member chooses its own k within (the k asked, capped at the attributes
    # less one), as ``hdp-bnc info`` reads it from the model file; each member's own is in per_member
    k = usable_k(clf.structure, clf.k, len(members[0].attributes))
    return {"kind": clf.structure, "k": k, "members": len(members), "kept": len(kept), "parents": None,
            **{size: sum(m[size] for m in each) for size in ("trees", "nodes", "cells")}, "per_member": each,
            "cell_limited": limited}


@contextlib.contextmanager
def _quiet():
    """The package's log records below ERROR (but the compile notice) and Python's warnings dropped: a
    warm-up's tiny fit says nothing about any job."""
    pkg, notice = logging.getLogger("hdp_plugin"), logging.getLogger("hdp_plugin.compile")
    levels = pkg.level, notice.level
    pkg.setLevel(logging.ERROR)
    notice.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        pkg.setLevel(levels[0])
        notice.setLevel(levels[1])


def warm_up() -> float:
    """Compile (or load from numba's cache) every kernel a job uses, on a tiny data set; seconds. Nothing
    is logged but the notice that numba compiles (and errors)."""
    import numpy as np

    from ..model import BayesNetClassifier

    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(60, 3))
    y = ((X[:, 0] + X[:, 1]) % 2 == 0).astype(int)  # an interaction: the members keep attributes with a parent
    # an ensemble: kDB's and SkDB's structure kernels and the sampler's, loaded before the first job (whose
    # cancel is then seen as soon as in any later job)
    with _quiet():
        BayesNetClassifier(structure="eskdb", n_members=2, k=2, iterations=10, random_state=0).fit(X, y)
    return time.perf_counter() - t0
