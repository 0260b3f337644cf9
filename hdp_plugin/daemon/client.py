"""The producer and client side of the spool protocol: publish, wait, cancel, status, stop.

These are what ``hdp-bnc daemon submit/status/stop/cancel`` call, and what the Java wrapper
re-implements from ``docs/spool-protocol.md``.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from .. import config
from .._fs import fsync_directory
from ..errors import JobError
from . import protocol as P
from .wake import wake

def new_job_name(prefix: str = "job") -> str:
    """A fresh, unique job name: ``<prefix>-<UTC time>-<pid>-<random>``."""
    return f"{prefix}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}-{os.urandom(4).hex()}"


def publish(spool: str | os.PathLike, data: str | os.PathLike, job: dict, *, name: str | None = None,
            separator: str | None = None, max_input_bytes: int | None = None, decimal: str | None = None) -> str:
    """Publish a training job: build it in ``tmp/``, then rename it into ``new/`` in one step.

    Parameters
    ----------
    spool : path
        The spool directory (created, mode 0700, if it does not exist).
    data : path
        Any file :func:`~hdp_plugin.read_dataset` reads, its format told by its extension
        (:func:`~hdp_plugin.data.formats.format_of`): an ARFF (``.arff``, ``.arff.gz``) or Arrow IPC
        file or stream (``.arrow``, ``.feather``, ``.ipc``, ``.arrows``), copied into the job folder as
        ``data.arff`` or ``data.arrow``; or a CSV or Parquet file, converted to a compressed
        ``data.arrow`` that the daemon reads as the Dataset :func:`~hdp_plugin.read_dataset` reads from
        the file (:func:`_write_ipc`).
    job : dict
        job.json fields (``protocol`` is filled in); validated before anything is written.
    name : str, optional
        The job name; a fresh unique one by default.
    separator : str, optional
        A CSV file's separator (as for :func:`~hdp_plugin.read_dataset`); by default told from its first lines.
    decimal : str, optional
        A CSV file's decimal separator, ``"."`` or ``","`` (as for :func:`~hdp_plugin.read_dataset`); by
        default told from its columns.
    max_input_bytes : int, optional
        Bounds a CSV or Parquet file converted here, as ``--max-input-mb`` does (:mod:`hdp_plugin.data.limits`):
        its size before and after decompression, and the working memory of training on its rows, checked
        before a CSV file's text is parsed; None: the reader's own bounds on decompression and values.

    Returns
    -------
    str
        The job name.
    """
    sp = P.Spool(spool).create()
    name = P.check_name(name or new_job_name())
    from ..data.formats import format_of

    src = Path(data)
    if not src.is_file():
        raise JobError(f"{src}: no such file")
    fmt = format_of(src)  # the format read_dataset reads it as; ParameterError for an extension naming none
    for what, value in (("separator", separator), ("decimal", decimal)):
        if value is not None and fmt != "csv":
            from ..errors import ParameterError

            raise ParameterError(f"a {what} applies to CSV files only, and {src} is read as {fmt}")
    copies = {f: n for n, f in P.DATA_FILES.items()}  # the formats the daemon reads: arff, arrow
    convert = fmt not in copies
    target = "data.arrow" if convert else copies[fmt]
    # the file as the user named it, so that the job's messages name it and not the folder's copy
    doc = {"protocol": P.PROTOCOL_VERSION, **{k: v for k, v in job.items() if k != "protocol"}, "data": target,
           "source": job.get("source", str(src)[: P.MAX_SOURCE_CHARS])}
    P.validate_job(doc)
    _check_unique(sp, name)
    tmp = sp.job(P.TMP, name)
    tmp.mkdir(mode=0o700)  # fails if another producer uses the name
    try:
        if convert:  # the daemon reads ARFF and Arrow IPC only: hand CSV and Parquet over as Arrow IPC
            _write_ipc(src, fmt, tmp / target, separator, max_input_bytes, doc.get("structure"), decimal)
        else:
            shutil.copyfile(src, tmp / target)
        with open(tmp / target, "rb+") as fh:
            os.fsync(fh.fileno())
        P.write_json(tmp / P.JOB_FILE, doc)
        fsync_directory(tmp)
        _check_unique(sp, name, building=True)
        if not P.move(tmp, sp.job(P.NEW, name)):
            raise JobError(f"tmp/{name} vanished before it could be published")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    wake(sp.root)  # the daemons of this host look at new/ now, not at their next poll
    return name


def _check_unique(sp: P.Spool, name: str, *, building: bool = False) -> None:
    """:class:`JobError` if a job of this name exists in any state: a client finds its result by name,
    so a second job of the same name would be handed the first one's result."""
    where = sp.locate(name)
    if where is not None and not (building and where[0] == P.TMP):
        raise JobError(f"a job named {name} is already in {where[0]}/; job names must be unique in a spool "
                       "(the client finds its result by name): pick another name or delete the old job")


def _write_ipc(src: Path, fmt: str, dst: Path, separator: str | None = None, max_input_bytes: int | None = None,
               structure: str | None = None, decimal: str | None = None) -> None:
    """Convert a CSV or Parquet file to an Arrow IPC file the daemon reads as the very same Dataset, small:
    text columns as dictionaries (:func:`_as_dictionaries`) and the buffers compressed (zstd, else lz4)."""
    import pyarrow as pa

    from ..data import arrow
    from ..data.limits import Limits, check_working_memory

    limits = Limits(max_input_bytes)

    def check_rows(rows: int, columns: int) -> None:
        check_working_memory(rows, columns, limits, str(src), structure)

    if fmt == "csv":
        table = arrow.csv_table(src, separator=separator, max_bytes=max_input_bytes, check_rows=check_rows,
                                decimal=decimal)
    else:
        table = arrow.parquet_table(src, max_bytes=max_input_bytes)
    check_rows(table.num_rows, table.num_columns)
    table = _as_dictionaries(table)
    codec = next((c for c in ("zstd", "lz4") if pa.Codec.is_available(c)), None)
    options = pa.ipc.IpcWriteOptions(compression=codec)
    with pa.OSFile(str(dst), "wb") as sink, pa.ipc.new_file(sink, table.schema, options=options) as writer:
        writer.write_table(table)


def _as_dictionaries(table):
    """``table`` with every text column dictionary-encoded, its dictionary sorted as Python sorts strings.

    A reader takes a text column's labels as its distinct values sorted, and a dictionary column's as its
    dictionary in order (:func:`~hdp_plugin.data.arrow.column_from_arrow`): with the sorted dictionary of
    exactly the values present, both give the same labels and codes, while the file stores each value once
    and an index per row instead of the text of every row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = []
    for col in table.columns:
        if (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)) and col.num_chunks:
            enc = pc.dictionary_encode(col).unify_dictionaries()
            labels = enc.chunk(0).dictionary
            order = sorted(range(len(labels)), key=labels.to_pylist().__getitem__)
            rank = [0] * len(order)
            for new, old in enumerate(order):
                rank[old] = new
            rank, labels = pa.array(rank, pa.int32()), labels.take(pa.array(order, pa.int64()))
            col = pa.chunked_array([pa.DictionaryArray.from_arrays(rank.take(ch.indices), labels)
                                    for ch in enc.chunks])
        columns.append(col)
    return pa.Table.from_arrays(columns, schema=None, names=table.column_names)


def job_state(spool: str | os.PathLike, name: str) -> dict:
    """What is known of one job: ``{"job", "state", "path", "progress", "result" | "error"}``."""
    sp = P.Spool(spool)
    P.check_name(name)  # never a path: "../../x" must not reach outside the spool
    where = sp.locate(name)
    out = {"job": name, "state": None, "path": None}
    if where is None:
        return out
    state, path = where
    out.update(state=state, path=str(path))
    if state == P.CLAIMED:
        out["progress"] = P.read_json(sp.progress(name))
        out["daemon"] = path.parent.name
    elif state == P.DONE:
        out["result"] = P.read_json(path / P.RESULT_FILE)
        out["model"] = str(path / P.MODEL_FILE)
    elif state == P.FAILED:
        out["error"] = P.read_json(path / P.ERROR_FILE)
    out["cancel_requested"] = P.cancel_requested(sp.cancel(name), path)
    return out


class NoDaemonError(TimeoutError):
    """``wait(..., no_daemon_timeout=)``: no daemon served the spool for that long."""


def serving(spool: str | os.PathLike) -> list[str]:
    """The daemons that serve a spool now: alive (their lock is held, or, from another host, their
    heartbeat is fresh) and not stopping."""
    return [d["daemon"] for d in daemons(spool)
            if (d["alive"] or d["heartbeat_fresh"]) and d.get("state") != "stopping"]


def no_daemon_message(spool: str | os.PathLike, name: str, state: str | None) -> str:
    """What ``submit --wait`` says when no daemon serves the spool: where the job is and how to start one."""
    where = {P.NEW: f"job {name} waits in new/ until one starts",
             P.CLAIMED: f"job {name} was left in claimed/ by a daemon that died; a daemon started on the spool "
                        "requeues and runs it"}.get(state, f"job {name} waits until one starts")
    return (f"no daemon is serving {spool} (no live daemon heartbeat in {Path(spool) / P.DAEMONS}); {where}. "
            f"Start one with: hdp-bnc daemon run {spool} (add --idle-exit 600 to let it exit when idle); "
            "waiting goes on meanwhile")


def wait(spool: str | os.PathLike, name: str, *, timeout: float | None = None, poll: float = config.CLIENT_POLL_SECONDS,
         on_progress=None, on_no_daemon=None, no_daemon_timeout: float | None = None,
         notice_after: float = config.NO_DAEMON_NOTICE_SECONDS) -> dict:
    """Wait until a job is in ``done/`` or ``failed/``; return :func:`job_state`.

    ``on_progress(progress_doc)`` is called with each new progress document while it runs.
    When no daemon serves the spool (:func:`serving`) for ``notice_after`` seconds,
    ``on_no_daemon(message)`` is called once, with what to do (:func:`no_daemon_message`), and
    ``on_no_daemon(None)`` once when a daemon serves it again (at the latest when the job ends);
    waiting goes on either way.
    Raises :class:`TimeoutError` after ``timeout`` seconds, and :class:`NoDaemonError` once no
    daemon has served the spool for ``no_daemon_timeout`` seconds (the job stays where it is).
    """
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout
    last = None
    misses, missing_since = 0, None
    absent_since, noticed, next_look = None, False, start
    while True:
        st = job_state(spool, name)
        if st["state"] in (P.DONE, P.FAILED):
            if noticed and on_no_daemon is not None:  # a daemon served it between two looks
                on_no_daemon(None)
            return st
        misses = misses + 1 if st["state"] is None else 0
        missing_since = (missing_since or time.monotonic()) if misses else None
        # gone on five looks in a row, over as long as five looks at ``poll``: not a job moving between states
        if misses >= 5 and time.monotonic() - missing_since >= 4 * poll:
            raise JobError(f"no job named {name} in {spool}")
        prog = st.get("progress")
        if on_progress is not None and prog and prog != last:
            on_progress(prog)
            last = prog
        now = time.monotonic()
        if now >= next_look and (on_no_daemon is not None or no_daemon_timeout is not None):
            next_look = now + 1.0  # who serves the spool: once a second is enough
            if serving(spool):
                if noticed and on_no_daemon is not None:
                    on_no_daemon(None)
                absent_since, noticed = None, False
            else:
                absent_since = now if absent_since is None else absent_since
                if not noticed and now - absent_since >= notice_after:
                    noticed = True
                    if on_no_daemon is not None:
                        on_no_daemon(no_daemon_message(spool, name, st["state"]))
                if no_daemon_timeout is not None and now - absent_since >= no_daemon_timeout:
                    where = {P.NEW: "queued in new/", P.CLAIMED: "in claimed/, left by a dead daemon"}.get(
                        st["state"], st["state"])
                    raise NoDaemonError(f"no daemon served {spool} for {no_daemon_timeout:g} s (--no-daemon-timeout); "
                                        f"job {name} stays {where} and runs when a daemon starts "
                                        f"(hdp-bnc daemon run {spool}), or cancel it: hdp-bnc daemon cancel {spool} "
                                        f"{name}")
        if deadline is not None and now > deadline:
            raise TimeoutError(f"job {name} is still {st['state']} after {timeout} s")
        # a tenth of the job's age, so that a short job is seen done soon after it is (config.BRISK_POLL_SECONDS)
        time.sleep(min(poll, max(config.BRISK_POLL_SECONDS, (now - start) / 10)))


def cancel(spool: str | os.PathLike, name: str) -> bool:
    """Ask the daemon to cancel a job (queued or running) by writing ``cancel/<job>``; False, and nothing
    written, when no job of that name is in the spool (looked for in every state, as it may be moving):
    a marker then could only cancel a job published later under the name. (A daemon ignores a marker
    older than its job in any case: :func:`~hdp_plugin.daemon.fileops.cancel_requested`.)"""
    sp = P.Spool(spool).check()
    P.check_name(name)
    if sp.locate(name) is None:
        return False
    P.write_atomic(sp.cancel(name), b"")
    return True


def daemons(spool: str | os.PathLike) -> list[dict]:
    """Every daemon that left a heartbeat: its heartbeat document plus ``alive`` and ``age_seconds``."""
    sp = P.Spool(spool)
    out = []
    for f in sp.names(P.DAEMONS):
        if not f.endswith(".json"):
            continue
        d = f[: -len(".json")]
        doc = P.read_json(sp.heartbeat(d)) or {"daemon": d}
        doc["alive"] = P.daemon_alive(sp, d)
        doc["heartbeat_fresh"] = P.heartbeat_fresh(doc)
        doc["age_seconds"] = time.time() - P.number(doc, "heartbeat_unix")
        out.append(doc)
    return out


def status(spool: str | os.PathLike) -> dict:
    """The state of a spool: live daemons, job counts by state, running jobs with their progress."""
    sp = P.Spool(spool).check()
    claimed = sp.claimed()
    running = []
    for d, names in claimed.items():
        alive = P.daemon_alive(sp, d) if names else False
        for n in names:
            running.append({"job": n, "daemon": d, "daemon_alive": alive, "progress": P.read_json(sp.progress(n)),
                            "cancel_requested": P.cancel_requested(sp.cancel(n), sp.job(P.CLAIMED, n, d))})
    return {
        "protocol": P.PROTOCOL_VERSION,
        "spool": str(sp.root),
        "daemons": daemons(spool),
        "counts": {P.TMP: len(sp.names(P.TMP)), P.NEW: len(sp.names(P.NEW)),
                   P.CLAIMED: sum(len(v) for v in claimed.values()),
                   P.DONE: len(sp.names(P.DONE)), P.FAILED: len(sp.names(P.FAILED))},
        "queued": sp.names(P.NEW),
        "running": running,
    }


def _being_made(root: Path) -> bool:
    """Could ``root`` be a spool that a daemon starting on it is making: missing, an empty directory, or
    one holding some of a spool's sub-directories (not a file, nor a directory of other things)."""
    try:
        names = os.listdir(root)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return not names or any(n in P.SUBDIRS for n in names)


def _await_spool(sp: P.Spool, seconds: float, on_wait=None) -> bool:
    """Wait up to ``seconds`` for ``sp`` to be a whole spool (a daemon just started on a new path makes it
    once its modules are imported); True if it was not one at first. :class:`JobError` if it never is,
    at once for a path no daemon could be making."""
    deadline = time.monotonic() + seconds
    waited = False
    while True:
        try:
            sp.check()
            return waited
        except JobError as exc:
            if time.monotonic() >= deadline or not _being_made(sp.root):
                if not waited:
                    raise
                raise JobError(f"{exc} (waited {seconds:g} s for a daemon starting on it to make it)") from None
        if not waited and on_wait is not None:
            on_wait(f"{sp.root} is not a spool yet: waiting up to {seconds:g} s for a daemon starting on it to make it")
        waited = True
        time.sleep(config.BRISK_POLL_SECONDS)


def stop(spool: str | os.PathLike, *, wait_seconds: float | None = 60.0,
         poll: float = config.CLIENT_POLL_SECONDS, spool_seconds: float = config.STOP_SPOOL_WAIT_SECONDS,
         on_spool_wait=None) -> list[str]:
    """Ask every daemon of the spool to stop; wait until they are gone. Return the ids of the live ones.

    First ``daemons/.stop-all`` is written: every daemon whose process started before it stops, even
    one still starting up, which holds no lock and has written no heartbeat yet; then a stop marker
    for every live daemon. Waiting also waits for daemons that were starting and show up meanwhile.
    A path that is not a whole spool yet is waited for up to ``spool_seconds`` (``on_spool_wait(message)``
    is called once when that wait begins): a daemon just started on a new path makes its spool a moment
    later, and the stop request must be in it; waiting then also looks for that daemon's heartbeat for up
    to ``config.STOP_STARTING_SECONDS``.
    """
    sp = P.Spool(spool)
    starting = _await_spool(sp, spool_seconds, on_spool_wait)
    requested = time.time()
    P.write_json(sp.stop_all(), {"protocol": P.PROTOCOL_VERSION, "requested_unix": requested})
    ids = [d["daemon"] for d in daemons(spool) if d["alive"]]
    for d in ids:
        P.write_atomic(sp.stop_marker(d), b"")
    if wait_seconds:
        deadline = time.monotonic() + wait_seconds
        # the daemon that made the spool writes its heartbeat a moment later: look for it a while
        look_until = time.monotonic() + (config.STOP_STARTING_SECONDS if starting else 0.0)
        while True:
            ids += [d["daemon"] for d in daemons(spool) if d["alive"] and d["daemon"] not in ids
                    and P.number(d, "process_started_unix", requested + 1) <= requested]
            if not any(P.daemon_alive(sp, d) for d in ids) and (ids or time.monotonic() >= look_until):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"daemon(s) still running after {wait_seconds} s")
            time.sleep(poll if ids or not starting else config.BRISK_POLL_SECONDS)
        for d in ids:  # a marker written as its daemon was already leaving outlives it: remove it
            P.remove_quietly(sp.stop_marker(d))
    return ids
