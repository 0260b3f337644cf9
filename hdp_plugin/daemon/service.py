"""The daemon: claim jobs from a spool, run them in worker processes, publish the results.

One supervisor process owns the spool side (claiming, heartbeat, recovery, final renames); each
job runs in a long-lived worker process started with multiprocessing's portable ``spawn`` context.

Why processes, not threads: the sampler releases the GIL, so threads would run jobs in parallel
too, but a worker process contains the failures a thread cannot: running out of memory, a crash
in native code, or a kill by the OOM killer ends one worker, and the supervisor turns that into
a requeue (counted as a lost attempt) instead of losing every running job. Processes also keep
numba's parallel layer to one launcher per process, which numba's default ``workqueue`` layer
requires. Each worker pays numba's start-up once, in a warm-up before it takes its first job.

Polling is the source of truth: the supervisor lists ``new/`` every ``poll`` seconds. Signals
(SIGTERM, SIGINT) and the ``daemons/<id>.stop`` marker only set a stop event; the loop then stops
claiming, lets running jobs finish for ``grace`` seconds, puts back the ones still running, and
exits cleanly. On start, and every few seconds, jobs left in ``claimed/<dead daemon>/`` are
requeued with their attempt counter raised.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import multiprocessing.connection as mpc
import os
import shutil
import signal
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .._version import __version__
from . import protocol as P
from .jobs import Context, Limits, write_error

log = logging.getLogger(__name__)

#: a worker that does not answer an interrupt within this many seconds is terminated
INTERRUPT_TIMEOUT = 10.0
#: seconds between looks for the claims of dead daemons while running
RECOVERY_SECONDS = 5.0
#: a worker that dies this many times in a row before it is ready stops the daemon
MAX_WARMUP_FAILURES = 3


# ------------------------------------------------------------------------------------------
# the worker process
# ------------------------------------------------------------------------------------------
def _worker_main(conn, spool_root: str, daemon_id: str, limits: Limits, abort, scheduler: str | None = None) -> None:
    """Body of a worker process: warm up, then run the jobs the supervisor sends, one at a time."""
    # The supervisor alone handles signals; a worker learns to stop through `abort` or a closed pipe.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    from . import jobs

    parent = mp.parent_process()

    def interrupted() -> bool:
        return abort.is_set() or (parent is not None and not parent.is_alive())

    spool = P.Spool(spool_root)
    if scheduler is not None:  # --engine dask: every job of this worker samples its trees on the cluster
        from ..distributed import _CURRENT
        from ..distributed.dask_engine import DaskEngine

        _CURRENT.set(DaskEngine(scheduler=scheduler))
    try:
        warm = jobs.warm_up()
        conn.send(("ready", warm))
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                return  # the supervisor is gone
            if msg is None:
                return
            folder, name, attempt = msg
            ctx = Context(spool=spool, daemon_id=daemon_id, attempt=attempt, limits=limits,
                          interrupted=interrupted)
            outcome = jobs.execute(Path(folder), name, ctx)
            if parent is not None and not parent.is_alive():
                return  # an orphan publishes nothing: the next daemon requeues the job
            conn.send(("finished", name, outcome))
    except (BrokenPipeError, EOFError, KeyboardInterrupt):
        return


@dataclass
class _Worker:
    process: mp.Process
    conn: object
    abort: object
    ready: bool = False
    job: str | None = None
    folder: Path | None = None
    attempt: int = 0
    since: float = 0.0
    interrupted_at: float | None = None


@dataclass
class Settings:
    """Options of :func:`run`."""

    workers: int = 1
    idle_exit: float | None = None
    poll: float = 0.5
    grace: float = 10.0
    threads: int | None = None
    limits: Limits = field(default_factory=Limits)
    heartbeat: float = P.HEARTBEAT_SECONDS
    #: serve a spool that other users can write or own (they could run jobs as this user)
    allow_shared_spool: bool = False
    #: where jobs sample their trees: "local" (the worker process) or "dask" (a Dask cluster)
    engine: str = "local"
    #: with engine "dask": the scheduler's address; None starts a LocalCluster next to the daemon
    scheduler: str | None = None


# ------------------------------------------------------------------------------------------
# the supervisor
# ------------------------------------------------------------------------------------------
class Daemon:
    """A daemon serving one spool; see :func:`run`."""

    def __init__(self, spool: str | os.PathLike, settings: Settings | None = None):
        self.spool = P.Spool(spool)
        self.settings = settings or Settings()
        if self.settings.workers < 1:
            raise ValueError(f"workers must be >= 1, got {self.settings.workers!r}")
        self.id = P.new_daemon_id()
        self.stop_event = threading.Event()
        self.hard_stop = threading.Event()
        self.workers: list[_Worker] = []
        self.lock: P.DaemonLock | None = None
        self.started = time.time()
        self.state = "starting"
        self.done = self.failed = self.requeued = 0
        self._warmup_failures = 0
        self._ctx = mp.get_context("spawn")
        self._old_umask: int | None = None
        self._reported: set[str] = set()

    def _report_once(self, key: str, message: str, *args) -> None:
        """Log a foreign or malformed spool entry once (it is skipped on every later pass)."""
        if key not in self._reported:
            self._reported.add(key)
            log.warning(message, *args)

    # --- signals ------------------------------------------------------------------------
    def request_stop(self, *_args) -> None:
        """First call: stop claiming and drain. Second call: interrupt running jobs now."""
        if self.stop_event.is_set():
            self.hard_stop.set()
        self.stop_event.set()

    def install_signal_handlers(self) -> None:
        for name in ("SIGTERM", "SIGINT", "SIGBREAK"):
            sig = getattr(signal, name, None)
            if sig is not None:
                signal.signal(sig, self.request_stop)

    # --- start and stop -----------------------------------------------------------------
    def start(self) -> None:
        # every file the daemon and its workers create is private, for the daemon's whole life
        self._old_umask = os.umask(0o077)
        self.spool.create()
        if self.settings.allow_shared_spool:
            log.warning("serving %s although other users may own or write it (--allow-shared-spool): they can "
                        "run jobs as this user", self.spool.root)
        else:
            self.spool.check_private()
        mode = os.lstat(self.spool.root).st_mode & 0o777
        if os.name == "posix" and mode & 0o044:
            log.warning("%s has mode %o: other users can read jobs and models; chmod 700 it", self.spool.root, mode)
        self.lock = P.DaemonLock(self.spool.lock(self.id))
        self.lock.acquire()
        (self.spool.dir(P.CLAIMED) / self.id).mkdir(mode=0o700)
        self.beat(force=True)
        log.info("daemon %s serving %s with %d worker(s)", self.id, self.spool.root, self.settings.workers)
        self.recover()
        self._cluster = None
        self._scheduler = self.settings.scheduler
        if self.settings.engine == "dask" and self._scheduler is None:
            from ..distributed.dask_engine import _import_distributed

            _import_distributed()
            from distributed import LocalCluster

            self._cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
            self._scheduler = self._cluster.scheduler_address
        if self.settings.engine == "dask":
            log.info("jobs sample their trees on the Dask cluster at %s", self._scheduler)
        threads = self.settings.threads or max(1, (os.cpu_count() or 1) // self.settings.workers)
        self._threads = threads
        for _ in range(self.settings.workers):
            self.workers.append(self._spawn())
        self.state = "running"
        self.beat(force=True)

    def _spawn(self) -> _Worker:
        parent, child = self._ctx.Pipe()
        abort = self._ctx.Event()
        proc = self._ctx.Process(target=_worker_main, name="hdp-bnc-worker", daemon=True,
                                 args=(child, str(self.spool.root), self.id, self.settings.limits, abort,
                                       self._scheduler if self.settings.engine == "dask" else None))
        # NUMBA_NUM_THREADS is read when the worker imports numba: set it for the child only
        old = os.environ.get("NUMBA_NUM_THREADS")
        os.environ["NUMBA_NUM_THREADS"] = str(self._threads)
        try:
            proc.start()
        finally:
            if old is None:
                os.environ.pop("NUMBA_NUM_THREADS", None)
            else:
                os.environ["NUMBA_NUM_THREADS"] = old
        child.close()
        return _Worker(proc, parent, abort)

    def shutdown(self) -> None:
        """Stop the workers, give back the lock, remove this daemon's files."""
        for w in self.workers:
            try:
                w.conn.send(None)
            except OSError:
                pass
        deadline = time.time() + 10
        for w in self.workers:
            w.process.join(max(0.0, deadline - time.time()))
            if w.process.is_alive():
                w.process.terminate()
                w.process.join(5)
        mine = self.spool.dir(P.CLAIMED) / self.id
        for name in self.spool.names(f"{P.CLAIMED}/{self.id}"):  # only after a failed put-back
            try:
                self._put_back(mine / name, name)
            except OSError as exc:
                log.error("job %s: cannot put it back in new/ (%s); it stays in %s for the next daemon",
                          name, exc, mine / name)
        if P.is_real_dir(mine):
            try:
                os.rmdir(mine)
            except OSError as exc:
                log.warning("cannot remove %s: %s", mine, exc)
        P.remove_quietly(self.spool.heartbeat(self.id))
        P.remove_quietly(self.spool.stop_marker(self.id))
        if self.lock is not None:
            self.lock.release()
            P.remove_quietly(self.spool.lock(self.id))
        log.info("daemon %s stopped: %d done, %d failed, %d put back", self.id, self.done, self.failed,
                 self.requeued)
        if self._old_umask is not None:
            os.umask(self._old_umask)

    # --- heartbeat ----------------------------------------------------------------------
    _last_beat = 0.0

    def beat(self, force: bool = False) -> None:
        now = time.time()
        if not force and now - self._last_beat < self.settings.heartbeat:
            return
        self._last_beat = now
        doc = {
            "protocol": P.PROTOCOL_VERSION, "daemon": self.id, "pid": os.getpid(), "host": socket.gethostname(),
            "version": __version__, "state": self.state, "started_unix": self.started,
            "heartbeat": P.now_iso(), "heartbeat_unix": now, "heartbeat_seconds": self.settings.heartbeat,
            "workers": self.settings.workers, "ready_workers": sum(w.ready for w in self.workers),
            "worker_pids": [w.process.pid for w in self.workers],
            "busy": [{"job": w.job, "attempt": w.attempt, "since_unix": w.since} for w in self.workers if w.job],
            "poll_seconds": self.settings.poll, "idle_exit_seconds": self.settings.idle_exit,
            "limits": {"max_input_bytes": self.settings.limits.max_input_bytes,
                       "max_cardinality": self.settings.limits.max_cardinality,
                       "max_cells": self.settings.limits.max_cells},
            "done": self.done, "failed": self.failed,
        }
        try:
            P.write_json(self.spool.heartbeat(self.id), doc, fsync=False)
        except OSError as exc:
            log.warning("cannot write the heartbeat: %s", exc)

    # --- recovery -----------------------------------------------------------------------
    def recover(self) -> int:
        """Requeue the jobs of dead daemons (raising their attempt counters); return how many."""
        n = 0
        claimed = self.spool.dir(P.CLAIMED)
        for entry in self.spool.names(P.CLAIMED):
            if not P.is_real_dir(claimed / entry):
                self._report_once(f"claimed/{entry}", "ignoring claimed/%s: not a directory (a file or a link, "
                                  "never followed); remove it", entry)
        ids = set(self.spool.claimed_daemons())
        ids |= {f[: -len(".json")] for f in self.spool.names(P.DAEMONS) if f.endswith(".json")}
        self._lingering = False
        for d in sorted(ids - {self.id}):
            try:
                P.check_name(d, "daemon id")
            except P.JobError:
                self._report_once(f"daemon/{d}", "ignoring daemon id %r of the spool: not a valid name", d)
                continue
            if P.daemon_alive(self.spool, d):
                continue
            if self._workers_linger(d):
                self._lingering = True  # look again soon
                continue
            theirs = self.spool.dir(P.CLAIMED) / d
            left = 0
            for name in self.spool.names(f"{P.CLAIMED}/{d}") if P.is_real_dir(theirs) else []:
                src = theirs / name
                if not P.is_real_dir(src):
                    self._report_once(f"claimed/{d}/{name}", "ignoring claimed/%s/%s: not a job folder (a file "
                                      "or a link, never followed); remove it", d, name)
                    left += 1
                    continue
                mine = self.spool.job(P.CLAIMED, name, self.id)
                try:
                    if not P.move(src, mine):
                        continue  # another daemon is recovering it
                except FileExistsError:  # a job of ours has the same name: never delete, fail it apart
                    log.warning("job %s left by dead daemon %s has the name of a job running here; failing "
                                "it as %s~N", name, d, name)
                    try:
                        write_error(src, name, "bad_job", f"a job named {name} was already running when this "
                                    "one was recovered; job names must be unique in a spool",
                                    Context(spool=self.spool, daemon_id=self.id))
                        P.move_final(src, self.spool.dir(P.FAILED), name, first=1)
                        self.failed += 1
                    except OSError as exc:
                        log.error("job %s: cannot fail it (%s); it stays in %s", name, exc, src)
                        left += 1
                    continue
                log.warning("job %s was left running by dead daemon %s", name, d)
                self._lost(mine, name, f"daemon {d} died while running it")
                n += 1
            if P.is_real_dir(theirs):
                try:
                    os.rmdir(theirs)
                except OSError:
                    if not left:
                        left = len(self.spool.names(f"{P.CLAIMED}/{d}"))
                    self._report_once(f"rmdir/{d}", "leaving claimed/%s: it still holds %d foreign entr(ies)",
                                      d, left)
            for p in (self.spool.heartbeat(d), self.spool.stop_marker(d), self.spool.lock(d)):
                P.remove_quietly(p)
        if self.workers:  # at start there is nothing of ours yet
            busy = {w.job for w in self.workers if w.job}
            for name in self.spool.names(f"{P.CLAIMED}/{self.id}"):
                if name not in busy:  # a claim whose rename reported failure but happened (NFS retries),
                    # or a job whose bookkeeping failed (a full disk)
                    log.warning("job %s: in our claimed/ but not running; putting it back", name)
                    try:
                        self._put_back(self.spool.job(P.CLAIMED, name, self.id), name)
                    except OSError as exc:
                        log.error("job %s: cannot put it back (%s); trying again later", name, exc)
        self._sweep()
        return n

    def _sweep(self) -> None:
        """Remove progress files and cancel markers a crash left behind for finished or unknown jobs,
        and producers' abandoned ``tmp/`` entries (untouched for TMP_MAX_AGE_SECONDS: maildir's rule)."""
        now = time.time()
        for name in self.spool.names(P.TMP):
            path = self.spool.dir(P.TMP) / name
            try:
                touched = max([os.lstat(path).st_mtime] + [e.stat(follow_symlinks=False).st_mtime
                                                           for e in os.scandir(path)] if path.is_dir()
                              else [os.lstat(path).st_mtime])
            except OSError:
                continue
            if now - touched > P.TMP_MAX_AGE_SECONDS:
                log.warning("removing %s: abandoned by its producer (untouched for %.0f h)", path,
                            (now - touched) / 3600)
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    P.remove_quietly(path)
        running = {n for names in self.spool.claimed().values() for n in names}
        for state, suffix in ((P.PROGRESS, ".json"), (P.CANCEL, "")):
            for f in self.spool.names(state):
                name = f[: len(f) - len(suffix)] if suffix and f.endswith(suffix) else f
                if name in running:
                    continue
                path = self.spool.dir(state) / f
                final = self.spool.job(P.DONE, name).exists() or self.spool.job(P.FAILED, name).exists()
                try:
                    stale = time.time() - os.stat(path).st_mtime > 3600
                except OSError:
                    continue
                if (final and state == P.PROGRESS) or (final and not self.spool.job(P.NEW, name).exists()) or (
                        stale and self.spool.locate(name) is None):
                    P.remove_quietly(path)

    def _workers_linger(self, d: str) -> bool:
        """Are worker processes of dead daemon ``d`` still running (on this host)? They stop at their
        next progress step; recovering before that could let one write into a requeued job."""
        doc = P.read_json(self.spool.heartbeat(d)) or {}
        if doc.get("host") != socket.gethostname() or time.time() - P.number(doc, "heartbeat_unix") > 60:
            return False
        pids = doc.get("worker_pids")
        pids = [p for p in pids if isinstance(p, int) and not isinstance(p, bool)] if isinstance(pids, list) else []
        alive = [pid for pid in pids if P.pid_alive(pid)]
        if alive:
            log.info("dead daemon %s: waiting for its workers %s to exit", d, alive)
        return bool(alive)

    def _lost(self, folder: Path, name: str, reason: str) -> None:
        """A run of the job died with its worker or daemon: requeue it, or fail it after MAX_ATTEMPTS."""
        lost, history = P.read_attempts(folder)
        lost = min(lost + 1, P.MAX_ATTEMPTS)
        history.append({"reason": reason, "time": P.now_iso()})
        P.clean_job_folder(folder)
        P.write_json(folder / P.ATTEMPTS_FILE, {"protocol": P.PROTOCOL_VERSION, "lost": lost, "history": history})
        P.remove_quietly(self.spool.progress(name))
        if lost >= P.MAX_ATTEMPTS:
            ctx = Context(spool=self.spool, daemon_id=self.id, attempt=lost)
            write_error(folder, name, "too_many_attempts",
                        f"the job was started {lost} times and each run died before it finished "
                        f"(last: {reason}); it may need more memory than this machine has", ctx,
                        history=history)
            P.move_final(folder, self.spool.dir(P.FAILED), name)
            P.remove_quietly(self.spool.cancel(name))
            self.failed += 1
        else:
            self._put_back(folder, name)

    def _put_back(self, folder: Path, name: str, *, count: bool = True) -> None:
        P.clean_job_folder(folder)
        P.remove_quietly(self.spool.progress(name))
        P.move_final(folder, self.spool.dir(P.NEW), name)
        if count:
            self.requeued += 1

    # --- claiming -----------------------------------------------------------------------
    def _waiting(self) -> list[str]:
        """Names in new/, oldest first."""
        new = self.spool.dir(P.NEW)
        out = []
        for name in self.spool.names(P.NEW)[:5000]:
            try:
                out.append((os.stat(new / name).st_mtime, name))
            except OSError:
                continue
        return [n for _, n in sorted(out)]

    def claim(self, w: _Worker, names: list[str]) -> bool:
        """Claim the first job of ``names`` this daemon wins and hand it to worker ``w``."""
        while names:
            name = names.pop(0)
            mine = self.spool.job(P.CLAIMED, name, self.id)
            try:
                if not P.move(self.spool.job(P.NEW, name), mine):
                    continue  # another daemon won it
            except FileExistsError:
                continue
            if not P.is_real_dir(mine):
                self._fail_entry(mine, name)
                continue
            # what the daemon writes into a job is the daemon's: a producer's copies are removed or ignored
            P.clean_job_folder(mine)
            attempt = P.read_attempts(mine)[0] + 1
            try:
                P.check_name(name)
            except P.JobError as exc:
                self._finish(mine, name, "failed", error=("bad_job", str(exc), attempt))
                continue
            taken = self._name_taken(name)
            if taken:
                log.warning("job %s: a job of that name is already in %s/; failing this one as %s~N", name, taken,
                            name)
                self._finish(mine, name, "failed", first=1, error=(
                    "bad_job", f"a job named {name} is already in {taken}/; job names must be unique in a "
                    "spool (a client finds its result by name)", attempt))
                continue
            w.job, w.folder, w.attempt, w.since, w.interrupted_at = name, mine, attempt, time.time(), None
            w.abort.clear()
            try:
                w.conn.send((str(mine), name, attempt))
            except OSError:  # the worker died since we last looked: its death is handled, the job goes back
                log.warning("job %s: its worker %d is gone; putting the job back", name, w.process.pid)
                w.job = w.folder = None
                self._put_back(mine, name, count=False)
                return False
            log.info("job %s: claimed (attempt %d)", name, attempt)
            return True
        return False

    def _name_taken(self, name: str) -> str | None:
        """The state of another job of this name (``done``, ``failed`` or ``claimed``), or None."""
        for state in (P.DONE, P.FAILED):
            if os.path.lexists(self.spool.job(state, name)):
                return state
        for d, names in self.spool.claimed().items():
            if d != self.id and name in names:
                return P.CLAIMED
        return None

    def _fail_entry(self, path: Path, name: str) -> None:
        """Something that is not a job folder was published: wrap it in one and fail it."""
        wrap = path.with_name(f".{name}.wrap")
        wrap.mkdir(mode=0o700)
        os.rename(path, wrap / name)
        self._finish(wrap, name, "failed", error=("bad_job", f"new/{name} is not a job folder (a job is a "
                                                  "directory holding job.json and its data)", 1))

    def _finish(self, folder: Path, name: str, outcome: str, error: tuple | None = None, first: int = 0) -> None:
        if error is not None:
            code, message, attempt = error
            write_error(folder, name, code, message, Context(spool=self.spool, daemon_id=self.id, attempt=attempt))
        elif outcome == "failed" and not os.path.isfile(folder / P.ERROR_FILE):
            # the worker could not write error.json (a full disk): try once more; if that fails too, the
            # job stays claimed and is put back by the next recovery pass, to run when space returns
            write_error(folder, name, "internal_error", "the job failed and its worker could not write "
                        "error.json (is the disk full?)", Context(spool=self.spool, daemon_id=self.id))
        if outcome == "requeue":
            self._put_back(folder, name)
            log.info("job %s: put back in new/", name)
            return
        state = P.DONE if outcome == "done" else P.FAILED
        P.remove_quietly(self.spool.progress(name))  # first: a crash now leaves no stale progress
        final = P.move_final(folder, self.spool.dir(state), name, first=first)
        P.remove_quietly(self.spool.cancel(name))
        if outcome == "done":
            self.done += 1
        else:
            self.failed += 1
        log.info("job %s: %s -> %s", name, outcome, final)

    # --- the loop -----------------------------------------------------------------------
    def _on_message(self, w: _Worker) -> bool:
        """Handle one message of worker ``w``; False when its pipe is closed (it died)."""
        try:
            msg = w.conn.recv()
        except (EOFError, OSError):
            return False  # the worker died: its sentinel tells the rest
        if msg[0] == "ready":
            w.ready = True
            self._warmup_failures = 0
            log.info("worker %d ready (warm-up %.2f s)", w.process.pid, msg[1])
        elif msg[0] == "finished":
            _, name, outcome = msg
            folder = w.folder
            w.job = w.folder = None
            self._finish(folder, name, outcome)
        return True

    def _on_death(self, w: _Worker) -> None:
        """A worker died: account for its job, and always start a new worker (unless stopping)."""
        try:
            self._account_death(w)
        except Exception:  # noqa: BLE001 - a full disk, a broken spool: the job stays claimed, retried later
            log.exception("cannot account for the job of worker %d; it stays claimed and is put back by the "
                          "next recovery pass", w.process.pid)
        finally:
            if not self.stop_event.is_set():
                self.workers.append(self._spawn())

    def _account_death(self, w: _Worker) -> None:
        code = w.process.exitcode
        self.workers.remove(w)
        w.conn.close()
        if w.job is not None:
            how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
            job, folder = w.job, w.folder
            w.job = w.folder = None
            if w.interrupted_at is not None:
                self._put_back(folder, job)
            else:
                log.error("worker %d died (%s) while running job %s", w.process.pid, how, job)
                self._lost(folder, job, f"its worker process died ({how})")
        elif not w.ready:
            self._warmup_failures += 1
            log.error("worker %d died while warming up (exit code %s)", w.process.pid, code)
            if self._warmup_failures >= MAX_WARMUP_FAILURES:
                log.error("workers keep dying at start; stopping")
                self.stop_event.set()
                self.hard_stop.set()
                self.exit_code = 1

    exit_code = 0
    _lingering = False

    def serve(self) -> int:
        """Run until stopped; return the exit code."""
        self._last_recovery = self._idle_since = time.time()
        self._stop_since = None
        while True:
            try:
                code = self._step()
            except Exception:  # noqa: BLE001 - a daemon logs and carries on; polling retries
                log.exception("unexpected error in the daemon loop; carrying on")
                time.sleep(self.settings.poll)
                continue
            if code is not None:
                return code

    def _step(self) -> int | None:
        """One turn of the loop: stop handling, recovery, claims, then wait for workers or ``poll``."""
        s = self.settings
        now = time.time()
        if not self.stop_event.is_set() and not os.path.isdir(self.spool.dir(P.NEW)):
            log.error("%s is gone (the spool was deleted or moved): stopping", self.spool.dir(P.NEW))
            self.stop_event.set()
            self.hard_stop.set()
            self.exit_code = 1
        if not self.stop_event.is_set() and os.path.exists(self.spool.stop_marker(self.id)):
            log.info("stop marker found")
            self.stop_event.set()
        if self.stop_event.is_set():
            if self._stop_since is None:
                self._stop_since = now
                self.state = "stopping"
                self.beat(force=True)
                log.info("stopping: no more claims; running jobs get %.0f s to finish", s.grace)
            if self.hard_stop.is_set() or now - self._stop_since >= s.grace:
                for w in self.workers:
                    if w.job is not None and w.interrupted_at is None:
                        w.interrupted_at = now
                        w.abort.set()
                    elif w.job is not None and now - w.interrupted_at > INTERRUPT_TIMEOUT:
                        w.process.terminate()
            if not any(w.job for w in self.workers):
                return self.exit_code
        else:
            if now - self._last_recovery >= (0.5 if self._lingering else RECOVERY_SECONDS):
                self._last_recovery = now
                self.recover()
            idle = [w for w in self.workers if w.ready and w.job is None]
            names = self._waiting() if idle else []
            for w in idle:
                if not names or not self.claim(w, names):
                    break
            if any(w.job for w in self.workers) or names or (not idle and self.spool.names(P.NEW)):
                self._idle_since = now
            elif s.idle_exit is not None and now - self._idle_since >= s.idle_exit:
                log.info("idle for %.1f s: exiting", s.idle_exit)
                self.stop_event.set()
                return None
        self.beat()
        waitables = {}
        for w in self.workers:
            waitables[w.conn] = w
            waitables[w.process.sentinel] = w
        ready = mpc.wait(list(waitables), timeout=s.poll) if waitables else time.sleep(s.poll) or []
        dead = []
        for r in ready:
            w = waitables[r]
            if r is w.conn and w in self.workers:
                self._on_message(w)
        for w in list(self.workers):
            if not w.process.is_alive():
                # read what it sent before dying, then treat the death
                try:
                    while w.conn.poll() and self._on_message(w):
                        pass
                except OSError:
                    pass
                dead.append(w)
        for w in dead:
            self._on_death(w)
        return None


def run(spool: str | os.PathLike, settings: Settings | None = None, *, install_signals: bool = True) -> int:
    """Serve ``spool`` until stopped (signal, stop marker, or ``idle_exit``); return an exit code."""
    d = Daemon(spool, settings)
    if install_signals:
        d.install_signal_handlers()
    try:
        d.start()
        return d.serve()
    finally:
        if d.lock is not None and d.lock.fd is not None:  # it got as far as owning its files
            d.shutdown()
        if getattr(d, "_cluster", None) is not None:
            d._cluster.close()
