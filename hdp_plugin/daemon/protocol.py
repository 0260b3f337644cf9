"""The spool protocol (version 1): directory layout, job schema, atomic moves and liveness.

Everything a producer (the ``submit`` command, the Java Weka wrapper) and the daemon must agree
on lives here; ``docs/spool-protocol.md`` is the prose contract and the two are kept in step.

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

A job changes state only by renaming its folder, so a job is always in exactly one state and a
folder seen in ``done/`` or ``failed/`` is complete. Claiming renames ``new/<job>`` to
``claimed/<daemon>/<job>``: the owner is part of the path, the source exists once, so exactly
one daemon wins.
"""

from __future__ import annotations

import datetime as _dt
import errno
import json
import math
import os
import re
import socket
import stat
import sys
import time
from pathlib import Path

from .. import config
from .._fs import fsync_directory, is_real_dir, remove_quietly, retry_sharing, write_atomic
from ..errors import JobError

#: the protocol version this code speaks (``protocol`` field of every JSON file)
PROTOCOL_VERSION = 1

TMP, NEW, CLAIMED, DONE, FAILED = "tmp", "new", "claimed", "done", "failed"
PROGRESS, CANCEL, DAEMONS = "progress", "cancel", "daemons"
#: every sub-directory of a spool
SUBDIRS = (TMP, NEW, CLAIMED, DONE, FAILED, PROGRESS, CANCEL, DAEMONS)
#: file names inside a job folder
JOB_FILE, RESULT_FILE, ERROR_FILE, MODEL_FILE, ATTEMPTS_FILE = (
    "job.json", "result.json", "error.json", "model.arrow", "attempts.json")
#: data file names a job may use, by format
DATA_FILES = {"data.arff": "arff", "data.arrow": "arrow"}
#: files the daemon writes into a job folder (removed when a job is put back in new/)
DAEMON_FILES = (RESULT_FILE, ERROR_FILE, MODEL_FILE)

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

#: a job (or daemon) name: safe on every file system, no path separators, no leading dot
NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@+-]{0,127}$")
#: limits and timings of the protocol (defined in config, with every tunable of the package)
MAX_JOB_BYTES = config.MAX_JOB_BYTES
MAX_ATTEMPTS = config.MAX_ATTEMPTS
DEFAULT_MAX_INPUT_BYTES = config.DEFAULT_MAX_INPUT_BYTES
DEFAULT_MAX_CARDINALITY = config.DEFAULT_MAX_CARDINALITY
HEARTBEAT_SECONDS = config.HEARTBEAT_SECONDS
STALE_HEARTBEATS = config.STALE_HEARTBEATS
TMP_MAX_AGE_SECONDS = config.TMP_MAX_AGE_SECONDS
MAX_DOC_BYTES = config.MAX_DOC_BYTES


# ------------------------------------------------------------------------------------------
# the job schema
# ------------------------------------------------------------------------------------------
class _Field:
    __slots__ = ("name", "kind", "default", "required", "choices", "minimum", "maximum", "help")

    def __init__(self, name, kind, default=None, *, required=False, choices=None, minimum=None,
                 maximum=None, help=""):
        self.name, self.kind, self.default, self.required = name, kind, default, required
        self.choices, self.minimum, self.maximum, self.help = choices, minimum, maximum, help


#: job.json, version 1: every field, its JSON type, default and domain
JOB_SCHEMA = (
    _Field("protocol", "integer", required=True, minimum=1, maximum=PROTOCOL_VERSION,
           help="protocol version the producer speaks; this daemon speaks 1"),
    _Field("data", "string|null", None,
           help="data.arff or data.arrow (a file of the job folder); default: whichever exists"),
    _Field("class_attribute", "string|null", None,
           help="name of the class attribute; null means the last attribute, as in Weka"),
    _Field("structure", "string", config.DEFAULT_STRUCTURE, choices=config.STRUCTURES,
           help="network structure"),
    _Field("k", "integer", config.DEFAULT_K, minimum=0, maximum=64,
           help="maximum attribute parents of kDB, SkDB and ESKDB members (ignored by nb and tan)"),
    _Field("n_members", "integer", config.DEFAULT_MEMBERS, minimum=1, maximum=config.MAX_MEMBERS,
           help="members of an ESKDB ensemble (ignored by the other structures)"),
    _Field("estimator", "string", config.DEFAULT_ESTIMATOR, choices=config.ESTIMATORS,
           help="how the probability tables are estimated"),
    _Field("iterations", "integer", config.DEFAULT_ITERATIONS, minimum=1, maximum=10_000_000,
           help="Gibbs iterations of the HDP sampler"),
    _Field("burn_in", "integer|null", None, minimum=0,
           help="iterations discarded before averaging, below iterations; null: min(1000, iterations/10)"),
    _Field("tying", "string", config.DEFAULT_TYING, choices=config.TYINGS,
           help="how HDP concentrations are shared"),
    _Field("m", "number", config.DEFAULT_M, minimum=0,
           help="the m of the m-estimate"),
    _Field("discretization", "string", "auto", choices=("auto",) + config.DISCRETIZATIONS,
           help="how numeric attributes become nominal; auto: stochastic-mdl for eskdb, else mdl"),
    _Field("seed", "integer", 0, minimum=0, maximum=2**63 - 1,
           help="seed of the sampler: the same seed gives the same model"),
    _Field("client", "string|null", None,
           help="free text naming the producer (at most 200 characters), copied to the result"),
)
FIELDS = {f.name: f for f in JOB_SCHEMA}


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
        if v is not None:
            if f.choices is not None and v not in f.choices:
                raise _bad(f.name, f"job.json: {f.name} must be one of {', '.join(f.choices)}; got {v!r}")
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
    if out["burn_in"] is not None and out["burn_in"] >= out["iterations"]:
        raise _bad("burn_in", f"job.json: burn_in must be below iterations ({out['iterations']}), got {out['burn_in']!r}")
    if out["client"] is not None and len(out["client"]) > 200:
        raise _bad("client", f"job.json: client must be at most 200 characters, got {len(out['client'])}")
    if out["data"] is not None and out["data"] not in DATA_FILES:
        raise _bad("data", f"job.json: data must be one of {', '.join(DATA_FILES)} (a file of the job "
                       f"folder), got {out['data']!r}")
    return out


def classifier_params(job: dict) -> dict:
    """The :class:`BayesNetClassifier` parameters of a validated job (threads left to the daemon)."""
    return config.canonical_params(dict(
        structure=job["structure"], k=job["k"], n_members=job["n_members"], estimator=job["estimator"],
        iterations=job["iterations"], burn_in=job["burn_in"], tying=job["tying"], m=float(job["m"]),
        discretization=job["discretization"], random_state=job["seed"]))


def check_name(name: str, what: str = "job name") -> str:
    if not isinstance(name, str) or not NAME_RE.match(name) or name.endswith(".tmp"):
        raise JobError(f"{what} must be 1-128 letters, digits or _ . @ + -, start with a letter, "
                       f"digit or _, and not end in .tmp; got {name!r}")
    return name


# ------------------------------------------------------------------------------------------
# paths
# ------------------------------------------------------------------------------------------
class Spool:
    """The paths of one spool directory."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return f"Spool({str(self.root)!r})"

    def dir(self, state: str) -> Path:
        return self.root / state

    def job(self, state: str, name: str, daemon: str | None = None) -> Path:
        if state == CLAIMED:
            return self.root / CLAIMED / daemon / name
        return self.root / state / name

    def progress(self, name: str) -> Path:
        return self.root / PROGRESS / f"{name}.json"

    def cancel(self, name: str) -> Path:
        return self.root / CANCEL / name

    def lock(self, daemon: str) -> Path:
        return self.root / DAEMONS / f"{daemon}.lock"

    def heartbeat(self, daemon: str) -> Path:
        return self.root / DAEMONS / f"{daemon}.json"

    def stop_marker(self, daemon: str) -> Path:
        return self.root / DAEMONS / f"{daemon}.stop"

    def create(self) -> "Spool":
        """Make the spool and its sub-directories, private to the user (mode 0700)."""
        old = os.umask(0o077)
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            for d in SUBDIRS:
                (self.root / d).mkdir(mode=0o700, exist_ok=True)
        finally:
            os.umask(old)
        return self

    def check(self) -> "Spool":
        """:class:`JobError` unless this looks like a spool (every sub-directory present)."""
        missing = [d for d in SUBDIRS if not (self.root / d).is_dir()]
        if missing:
            raise JobError(f"{self.root}: not a spool directory (no {', '.join(missing)}/); "
                           f"start a daemon on it or create it with 'daemon run'")
        return self

    def names(self, state: str) -> list[str]:
        """Entries of a state directory, ignoring hidden and temporary names ([] if it is not a directory)."""
        try:
            return sorted(n for n in os.listdir(self.root / state) if not n.startswith("."))
        except OSError:  # missing, or a stray file or link where a directory belongs
            return []

    def claimed_daemons(self) -> list[str]:
        """The entries of ``claimed/`` that are real directories (never links): one per daemon."""
        return [d for d in self.names(CLAIMED) if is_real_dir(self.root / CLAIMED / d)]

    def claimed(self) -> dict[str, list[str]]:
        """``{daemon id: [job names]}`` of ``claimed/`` (real directories only, never followed links)."""
        return {d: self.names(f"{CLAIMED}/{d}") for d in self.claimed_daemons()}

    def check_private(self) -> None:
        """:class:`JobError` unless the spool and each sub-directory is a real directory (no link) owned
        by this user and writable by nobody else (POSIX; Windows has no such modes)."""
        for path in [self.root] + [self.root / d for d in SUBDIRS]:
            try:
                st = os.lstat(path)
            except OSError as exc:
                raise JobError(f"{path}: cannot inspect the spool ({exc.strerror or exc})") from None
            if not stat.S_ISDIR(st.st_mode):
                raise JobError(f"{path}: is not a directory (a link or a file); the spool and its "
                               f"sub-directories must be real directories")
            if os.name != "posix":
                continue
            if st.st_uid != os.geteuid():
                raise JobError(f"{path}: is owned by user id {st.st_uid}, not by this user ({os.geteuid()}); "
                               "another user could run jobs as you. Use a spool of your own, or pass "
                               "--allow-shared-spool if you trust every user who can write it")
            if st.st_mode & 0o022:
                raise JobError(f"{path}: has mode {stat.S_IMODE(st.st_mode):o}, writable by other users, who "
                               f"could run jobs as you; 'chmod 700' it, or pass --allow-shared-spool if you "
                               "trust every user who can write it")

    def locate(self, name: str) -> tuple[str, Path] | None:
        """Where a job is now: ``(state, folder)``, or None.

        A job can move while we look (``new/`` -> ``claimed/`` just after we listed ``claimed/``),
        so a miss is looked again three times before it counts.
        """
        for _ in range(3):
            for state in (DONE, FAILED):
                p = self.job(state, name)
                if p.exists():
                    return state, p
            for daemon, jobs in self.claimed().items():
                if name in jobs:
                    return CLAIMED, self.job(CLAIMED, name, daemon)
            for state in (NEW, TMP):
                p = self.job(state, name)
                if p.exists():
                    return state, p
        return None


# ------------------------------------------------------------------------------------------
# atomic file operations
# ------------------------------------------------------------------------------------------
def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write_json(path: Path, doc: dict, *, fsync: bool = True) -> None:
    write_atomic(path, (json.dumps(doc, indent=2, allow_nan=False) + "\n").encode("utf-8"), fsync=fsync)


def read_json(path: Path) -> dict | None:
    """A JSON object the daemon or a client wrote, or None if it is missing, malformed, not an object,
    larger than MAX_DOC_BYTES or not a regular file (a reader never blocks on a FIFO)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as fh:
            data = fh.read(MAX_DOC_BYTES + 1)
        if len(data) > MAX_DOC_BYTES:
            return None
        doc = json.loads(data.decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def number(doc: dict | None, key: str, default: float = 0.0) -> float:
    """``doc[key]`` as a finite float, or ``default`` when it is missing or not a finite number."""
    v = (doc or {}).get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return default
    return float(v)


def read_attempts(folder: Path) -> tuple[int, list]:
    """``(lost, history)`` of a job's attempts.json; ``(0, [])`` unless it is a regular file (no link)
    holding what a daemon writes, so that a producer cannot spoof or break the retry count."""
    path = folder / ATTEMPTS_FILE
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return 0, []
    except OSError:
        return 0, []
    doc = read_json(path) or {}
    lost, history = doc.get("lost"), doc.get("history", [])
    if (isinstance(lost, bool) or not isinstance(lost, int) or not 0 <= lost <= MAX_ATTEMPTS
            or not isinstance(history, list)
            or not all(isinstance(h, dict) and isinstance(h.get("reason"), str) and isinstance(h.get("time"), str)
                       for h in history)):
        return 0, []
    return lost, [{"reason": h["reason"][:500], "time": h["time"][:40]} for h in history[-20:]]


def move(src: Path, dst: Path) -> bool:
    """Rename a job folder, never over an existing one. False if ``src`` is gone (someone else won).

    ``os.rename`` is one rename(2) on POSIX and one MoveFileEx (without REPLACE_EXISTING) on
    Windows: atomic within one file system, and it fails rather than replace an existing target.
    """
    if dst.exists():
        raise FileExistsError(errno.EEXIST, "target exists", str(dst))
    try:
        retry_sharing(os.rename, src, dst)
    except FileNotFoundError:
        return False
    fsync_directory(dst.parent)
    return True


def move_final(src: Path, state_dir: Path, name: str, *, first: int = 0) -> Path:
    """Rename a finished job into ``done/`` or ``failed/``; a reused name gets ``~1``, ``~2``...
    (``first=1``: never the plain name, for a job whose name belongs to another one)."""
    for i in range(first, 1000):
        dst = state_dir / (name if i == 0 else f"{name}~{i}")
        if dst.exists():
            continue
        try:
            retry_sharing(os.rename, src, dst)
        except (FileExistsError, IsADirectoryError):
            continue
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                continue
            raise
        fsync_directory(state_dir)
        return dst
    raise OSError(f"cannot find a free name for {name} in {state_dir}")


# ------------------------------------------------------------------------------------------
# locks and liveness
# ------------------------------------------------------------------------------------------
def _lock_fd(fd: int) -> bool:
    """Try to take an exclusive lock on byte 0 of an open file; True if we got it.

    POSIX: an fcntl record lock (F_SETLK), the kind Java's FileChannel.tryLock takes, released by
    the kernel when the process dies, even by SIGKILL. Windows: LockFileEx through msvcrt.locking.
    """
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False
    import fcntl

    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
        return True
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EAGAIN):
            return False
        raise


def _unlock_fd(fd: int) -> None:
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        except OSError:
            pass
        return
    import fcntl

    fcntl.lockf(fd, fcntl.LOCK_UN, 1, 0)


class DaemonLock:
    """The lock a live daemon holds on ``daemons/<id>.lock`` for its whole life."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        if not _lock_fd(fd):
            os.close(fd)
            raise JobError(f"{self.path}: already locked by another process")
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            try:
                _unlock_fd(self.fd)
            finally:
                os.close(self.fd)
                self.fd = None


def daemon_alive(spool: Spool, daemon: str) -> bool:
    """Is the daemon ``daemon`` of this spool alive? Answered by its lock, not by its heartbeat.

    Never call this for a daemon id of the calling process: POSIX record locks belong to the
    process, so probing one's own lock would succeed and closing the probe would release it.
    """
    try:
        fd = os.open(spool.lock(daemon), os.O_RDWR)
    except FileNotFoundError:
        return False
    except OSError:
        return True  # cannot tell: assume alive, never steal a live daemon's jobs
    try:
        got = _lock_fd(fd)
        if got:
            _unlock_fd(fd)
        return not got
    finally:
        os.close(fd)


def heartbeat_fresh(doc: dict | None) -> bool:
    """True when a heartbeat document is recent (for clients on another host, where locks may lie)."""
    if not doc:
        return False
    age = time.time() - number(doc, "heartbeat_unix")
    return age < STALE_HEARTBEATS * number(doc, "heartbeat_seconds", HEARTBEAT_SECONDS)


def pid_alive(pid: int) -> bool:
    """Is process ``pid`` (on this host) running? Used only to wait for a dead daemon's workers."""
    if pid <= 0:
        return False
    if sys.platform == "win32":
        import ctypes

        kernel32 = ctypes.windll.kernel32
        handle = kernel32.OpenProcess(0x00100000, False, int(pid))  # SYNCHRONIZE
        if not handle:
            return False
        try:
            return kernel32.WaitForSingleObject(handle, 0) == 0x102  # WAIT_TIMEOUT: still running
        finally:
            kernel32.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # Linux: a zombie nobody reaped yet is dead
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def clean_job_folder(folder: Path) -> None:
    """Remove what a run left in a job folder (results, error, temporary files) before a retry.

    A directory (or anything but a file or link) under a name the daemon writes is renamed out of the
    way, to ``.<name>.foreign``, so that it can neither block the daemon's writes nor be followed."""
    for name in DAEMON_FILES + (ATTEMPTS_FILE,):
        path = folder / name
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) or not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            try:
                os.rename(path, folder / f".{name}.{os.urandom(3).hex()}.foreign")
            except OSError:
                pass
        elif name != ATTEMPTS_FILE or stat.S_ISLNK(st.st_mode):
            remove_quietly(path)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if name.startswith(".") and name.endswith(".tmp"):
            remove_quietly(folder / name)


def new_daemon_id() -> str:
    host = re.sub(r"[^A-Za-z0-9_-]", "-", socket.gethostname())[:40] or "host"
    return f"{host}-{os.getpid()}-{os.urandom(3).hex()}"
