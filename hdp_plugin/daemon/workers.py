"""Supervision of the worker processes: start them, hand them jobs, read their messages, notice deaths.

Each job runs in a long-lived worker process started with multiprocessing's portable ``spawn``
context. A worker warms up (numba's start-up, paid once), says ``ready``, then runs the jobs it is
sent one at a time and answers ``finished`` with the outcome. A worker that dies takes only its job
with it: the :class:`WorkerPool` turns that into a lost attempt (or a put-back when the daemon had
interrupted it) and starts a new worker.

The supervisor tells a busy worker to stop its job through an :class:`AbortFlag` in shared memory, not
a ``multiprocessing.Event``: an Event is made of named POSIX semaphores, which the resource tracker
process warns about on the daemon's log when the supervisor is killed, and which stay in ``/dev/shm``
for good when the daemon's whole process group is killed with it. A worker logs in the daemon's
format (:func:`~hdp_plugin.daemon.logs.log_setup`), so that every line of the daemon's log is a record.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import multiprocessing.connection as mpc
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .. import config
from . import logs
from . import protocol as P
from .jobs import Context, Limits
from .ledger import Ledger

log = logs.logger(__name__)


# ------------------------------------------------------------------------------------------
# the worker process
# ------------------------------------------------------------------------------------------
def resident_bytes() -> int | None:
    """This process's memory in bytes: resident now (Linux's /proc, Windows' GetProcessMemoryInfo), else
    its peak resident size (getrusage: macOS, the BSDs); None where neither can be read."""
    try:
        if sys.platform.startswith("linux"):
            with open("/proc/self/statm", "rb") as fh:
                return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        if sys.platform == "win32":
            return _windows_working_set()
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere
    except (OSError, ValueError, IndexError, ImportError, AttributeError):
        return None


def _windows_working_set() -> int | None:
    import ctypes
    from ctypes import wintypes

    class Counters(ctypes.Structure):
        _fields_ = [("cb", wintypes.DWORD), ("PageFaultCount", wintypes.DWORD)] + [
            (f, ctypes.c_size_t) for f in ("PeakWorkingSetSize", "WorkingSetSize", "QuotaPeakPagedPoolUsage",
                                           "QuotaPagedPoolUsage", "QuotaPeakNonPagedPoolUsage",
                                           "QuotaNonPagedPoolUsage", "PagefileUsage", "PeakPagefileUsage")]

    counters = Counters()
    counters.cb = ctypes.sizeof(Counters)
    kernel32 = ctypes.windll.kernel32
    kernel32.GetCurrentProcess.restype = wintypes.HANDLE
    if not kernel32.K32GetProcessMemoryInfo(kernel32.GetCurrentProcess(), ctypes.byref(counters), counters.cb):
        return None
    return int(counters.WorkingSetSize)


def _give_back_memory() -> None:
    """Hand back to the operating system what a finished job freed, as far as the allocators allow
    (Python's cycles, Arrow's memory pool, glibc's heap), so that a worker is judged by what it holds."""
    import gc

    gc.collect()
    pa = sys.modules.get("pyarrow")
    if pa is not None:
        try:
            pa.default_memory_pool().release_unused()
        except Exception:  # noqa: BLE001 - an older pyarrow: nothing given back
            pass
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).malloc_trim(0)  # glibc; other C libraries have no such call
        except (OSError, AttributeError):
            pass


class AbortFlag:
    """A flag the supervisor sets and a worker reads: one byte of shared memory (an anonymous mapping,
    no named semaphore, nothing for the resource tracker to track or leave behind)."""

    def __init__(self, ctx):
        self._value = ctx.RawValue("b", 0)

    def set(self) -> None:
        self._value.value = 1

    def clear(self) -> None:
        self._value.value = 0

    def is_set(self) -> bool:
        return bool(self._value.value)


def _worker_main(conn, spool_root: str, daemon_id: str, limits: Limits, abort, scheduler: str | None = None,
                 log_setup: tuple | None = None) -> None:
    """Body of a worker process: warm up, then run the jobs the supervisor sends, one at a time."""
    # The supervisor alone handles signals; a worker learns to stop through `abort` or a closed pipe.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    logs.configure(log_setup)
    from . import jobs

    parent = mp.parent_process()

    def interrupted() -> bool:
        return abort.is_set() or (parent is not None and not parent.is_alive())

    spool = P.Spool(spool_root)
    # --engine dask: every job of this worker runs on the cluster (its client closed when the worker ends)
    from ..distributed import engine

    with engine("dask", scheduler=scheduler) if scheduler is not None else contextlib.nullcontext():
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
                _give_back_memory()
                conn.send(("finished", name, outcome, resident_bytes()))
        except (BrokenPipeError, EOFError, KeyboardInterrupt):
            return


# ------------------------------------------------------------------------------------------
# the supervisor's side
# ------------------------------------------------------------------------------------------
@dataclass
class Worker:
    """One worker process as the supervisor sees it, and the job it runs (if any)."""

    process: mp.Process
    conn: object
    abort: object
    ready: bool = False
    job: str | None = None
    folder: Path | None = None
    attempt: int = 0
    since: float = 0.0
    interrupted_at: float | None = None
    #: asked to exit after its job because it holds too much memory; a fresh worker replaces it
    retiring: bool = False

    def assign(self, folder: Path, name: str, attempt: int) -> bool:
        """Hand the claimed job in ``folder`` to this worker; False if the worker is gone (the job is
        then not its own)."""
        self.job, self.folder, self.attempt, self.since, self.interrupted_at = name, folder, attempt, time.time(), None
        self.abort.clear()
        try:
            self.conn.send((str(folder), name, attempt))
        except OSError:  # the worker died since we last looked: its death is handled elsewhere
            self.job = self.folder = None
            return False
        return True


class WorkerPool:
    """The worker processes of one daemon.

    Parameters
    ----------
    spool, daemon_id, limits
        What each worker needs to run jobs.
    ledger
        Where finished jobs, and the jobs of dead workers, are moved.
    stopping
        True once the daemon stops: a dead worker is then not replaced.
    on_fatal
        Called with a message when workers keep dying before they are ready (the daemon should stop).
    """

    def __init__(self, spool: P.Spool, daemon_id: str, limits: Limits, ledger: Ledger, *,
                 stopping: Callable[[], bool], on_fatal: Callable[[str], None]):
        self.spool, self.daemon_id, self.limits, self.ledger = spool, daemon_id, limits, ledger
        self.stopping, self.on_fatal = stopping, on_fatal
        self.workers: list[Worker] = []
        self.threads = 1
        #: a Dask scheduler's address: every worker's jobs sample their trees there (None: locally)
        self.scheduler: str | None = None
        self._warmup_failures = 0
        self._ctx = mp.get_context("spawn")
        #: a worker whose memory after a job is above this many bytes is replaced (--worker-memory-mb)
        self.memory_bound = config.WORKER_MEMORY_MB * 2**20

    # --- start and stop -----------------------------------------------------------------
    def start(self, n: int, threads: int) -> None:
        """Start ``n`` workers, each with ``threads`` sampler threads."""
        self.threads = threads
        for _ in range(n):
            self.workers.append(self._spawn())

    def _spawn(self) -> Worker:
        parent, child = self._ctx.Pipe()
        abort = AbortFlag(self._ctx)
        proc = self._ctx.Process(target=_worker_main, name="hdp-bnc-worker", daemon=True,
                                 args=(child, str(self.spool.root), self.daemon_id, self.limits, abort,
                                       self.scheduler, logs.log_setup()))
        # NUMBA_NUM_THREADS is read when the worker imports numba: set it for the child only
        old = os.environ.get("NUMBA_NUM_THREADS")
        os.environ["NUMBA_NUM_THREADS"] = str(self.threads)
        try:
            proc.start()
        finally:
            if old is None:
                os.environ.pop("NUMBA_NUM_THREADS", None)
            else:
                os.environ["NUMBA_NUM_THREADS"] = old
        child.close()
        return Worker(proc, parent, abort)

    def stop(self) -> None:
        """Ask every worker to exit; kill the ones that do not within WORKER_EXIT_SECONDS.

        A worker still warming up (compiling numba's kernels can take a minute) reads no message until
        it is ready and has no job to lose: it is killed at once, so that a daemon stopped just after it
        started exits in a moment. Workers ignore SIGTERM (the supervisor alone handles signals), so the
        ones that do not exit are killed (SIGKILL; TerminateProcess on Windows)."""
        for w in self.workers:
            if not w.ready and w.job is None:
                w.process.kill()
                continue
            try:
                w.conn.send(None)
            except OSError:
                pass
        deadline = time.time() + config.WORKER_EXIT_SECONDS
        for w in self.workers:
            w.process.join(max(0.0, deadline - time.time()))
            if w.process.is_alive():
                w.process.kill()
                w.process.join(config.WORKER_TERMINATE_SECONDS)
            try:
                w.conn.close()
            except OSError:
                pass

    # --- what they do -------------------------------------------------------------------
    def idle(self) -> list[Worker]:
        """Ready workers without a job (and not being replaced)."""
        return [w for w in self.workers if w.ready and w.job is None and not w.retiring]

    def busy(self) -> bool:
        return any(w.job for w in self.workers)

    def running(self) -> set[str]:
        """The jobs the workers run."""
        return {w.job for w in self.workers if w.job}

    def interrupt(self, now: float) -> None:
        """Interrupt every running job (it goes back to new/); kill a worker that has not answered an
        interrupt within INTERRUPT_SECONDS (it ignores SIGTERM: only a kill ends it)."""
        for w in self.workers:
            if w.job is not None and w.interrupted_at is None:
                w.interrupted_at = now
                w.abort.set()
            elif w.job is not None and now - w.interrupted_at > config.INTERRUPT_SECONDS:
                w.process.kill()

    # --- messages and deaths ------------------------------------------------------------
    def wait(self, timeout: float, wake=None) -> None:
        """Wait up to ``timeout`` seconds for a message, a death or a nudge on ``wake`` (a
        :class:`~hdp_plugin.daemon.wake.WakeSocket`, or None); handle what came."""
        waitables = {}
        for w in self.workers:
            waitables[w.conn] = w
            waitables[w.process.sentinel] = w
        nudges = wake.waitable() if wake is not None else None
        if nudges is not None:
            waitables[nudges] = None
        ready = mpc.wait(list(waitables), timeout=timeout) if waitables else time.sleep(timeout) or []
        dead = []
        for r in ready:
            w = waitables[r]
            if w is None:  # a client published a job: take the nudges, the loop looks at new/ next
                wake.drain()
                continue
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

    def _on_message(self, w: Worker) -> bool:
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
            _, name, outcome, held = msg
            folder = w.folder
            w.job = w.folder = None
            self.ledger.finish(folder, name, outcome)
            if held is not None and held > self.memory_bound:
                self._retire(w, f"it holds {held / 2**20:.0f} MiB after job {name}, more than --worker-memory-mb "
                                f"{self.memory_bound / 2**20:.0f}")
        return True

    def _retire(self, w: Worker, why: str) -> None:
        """Ask an idle worker to exit; its death brings a fresh worker (:meth:`_on_death`)."""
        log.info("replacing worker %d: %s", w.process.pid, why)
        w.retiring = True
        try:
            w.conn.send(None)
        except OSError:  # already gone: its death is handled as any other
            pass

    def _on_death(self, w: Worker) -> None:
        """A worker died: account for its job, and always start a new worker (unless stopping)."""
        try:
            self._account_death(w)
        except Exception:  # noqa: BLE001 - a full disk, a broken spool: the job stays claimed, retried later
            log.exception("cannot account for the job of worker %d; it stays claimed and is put back by the "
                          "next recovery pass", w.process.pid)
        finally:
            if not self.stopping():
                self.workers.append(self._spawn())

    def _account_death(self, w: Worker) -> None:
        code = w.process.exitcode
        self.workers.remove(w)
        w.conn.close()
        if w.job is not None:
            how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
            job, folder = w.job, w.folder
            w.job = w.folder = None
            if w.interrupted_at is not None:
                self.ledger.put_back(folder, job)
            else:
                log.error("worker %d died (%s) while running job %s", w.process.pid, how, job)
                self.ledger.lost(folder, job, f"its worker process died ({how})")
        elif not w.ready:
            self._warmup_failures += 1
            log.error("worker %d died while warming up (exit code %s)", w.process.pid, code)
            if self._warmup_failures >= config.MAX_WARMUP_FAILURES:
                self.on_fatal("workers keep dying at start; stopping")
