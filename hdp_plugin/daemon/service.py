"""The daemon: claim jobs from a spool, run them in worker processes, publish the results.

One supervisor process owns the spool side (claiming, heartbeat, recovery, final renames); each
job runs in a long-lived worker process started with multiprocessing's portable ``spawn`` context.

Why processes, not threads: the sampler releases the GIL, so threads would run jobs in parallel
too, but a worker process contains the failures a thread cannot: running out of memory, a crash
in native code, or a kill by the OOM killer ends one worker, and the supervisor turns that into
a requeue (counted as a lost attempt) instead of losing every running job. Processes also keep
numba's parallel layer to one launcher per process, which numba's default ``workqueue`` layer
requires. Each worker pays numba's start-up once, in a warm-up before it takes its first job.

Polling is the source of truth: the supervisor lists ``new/`` every ``poll`` seconds (sooner after a
job, and at once when a client that published a job nudges it: :mod:`.wake`). Signals
(SIGTERM, SIGINT) and the ``daemons/<id>.stop`` marker only set a stop event; the loop then stops
claiming, lets running jobs finish for ``grace`` seconds, puts back the ones still running, and
exits cleanly. On start, and every few seconds, jobs left in ``claimed/<dead daemon>/`` are
requeued with their attempt counter raised. A daemon whose installation disappears (its Python
executable or hdp_plugin's files: an uninstall, a deleted environment) notices within
``INSTALL_CHECK_SECONDS``, puts its running jobs back in ``new/`` and exits with status 1.

The :class:`Daemon` here owns the daemon's life (start, the loop, stop, shutdown) and composes the
parts that do the work: :mod:`.workers` (supervision of the worker processes), :mod:`.claiming`,
:mod:`.ledger` (the moves of jobs to their next state), :mod:`.recovery` (crash recovery),
:mod:`.sweeping`, :mod:`.heartbeat` and :mod:`.wake` (the loopback socket clients nudge it through).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import dataclass, field

from .. import config
from . import heartbeat
from . import logs
from . import protocol as P
from .claiming import Claimer, waiting
from .jobs import Limits, installation_gone
from .ledger import Ledger
from .recovery import Recovery
from .wake import WakeSocket
from .workers import Worker, WorkerPool

log = logs.logger(__name__)


@dataclass
class Settings:
    """Options of :func:`run`."""

    workers: int = config.DAEMON_WORKERS
    idle_exit: float | None = None
    poll: float = config.DAEMON_POLL_SECONDS
    grace: float = config.DAEMON_GRACE_SECONDS
    threads: int | None = None
    limits: Limits = field(default_factory=Limits)
    heartbeat: float = config.HEARTBEAT_SECONDS
    #: serve a spool that other users can write or own (they could run jobs as this user)
    allow_shared_spool: bool = False
    #: where jobs sample their trees: "local" (the worker process) or "dask" (a Dask cluster)
    engine: str = "local"
    #: with engine "dask": the scheduler's address; None starts a LocalCluster next to the daemon
    scheduler: str | None = None
    #: a worker holding more than this many MiB after a job is replaced by a fresh one (0: after every job)
    worker_memory_mb: float = config.WORKER_MEMORY_MB


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
        self.lock: P.DaemonLock | None = None
        self.started = time.time()
        #: when the daemon's process started: a stop request (daemons/.stop-all) made after it stops it
        self.process_started = P.process_started()
        self._stop_all_seen = None
        self._counted = (0, 0, 0)  # (done, failed, ready workers) as the last heartbeat written told them
        self.state = "starting"
        self.exit_code = 0
        self._old_umask: int | None = None
        self.ledger = Ledger(self.spool, self.id)
        self.pool = WorkerPool(self.spool, self.id, self.settings.limits, self.ledger,
                               stopping=self.stop_event.is_set, on_fatal=self._give_up)
        self.pool.memory_bound = self.settings.worker_memory_mb * 2**20
        self.claimer = Claimer(self.spool, self.id, self.ledger)
        self.recovery = Recovery(self.spool, self.id, self.ledger)
        self.heartbeat = heartbeat.Heartbeat(self.spool, self.id, self.settings.heartbeat)
        self.waker: WakeSocket | None = None  # listening from start() on

    @property
    def workers(self) -> list[Worker]:
        return self.pool.workers

    @property
    def done(self) -> int:
        return self.ledger.done

    @property
    def failed(self) -> int:
        return self.ledger.failed

    @property
    def requeued(self) -> int:
        return self.ledger.requeued

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

    def _give_up(self, why: str | None = None) -> None:
        """Stop at once with exit code 1 (the spool is gone, or workers keep dying at start)."""
        if why:
            log.error("%s", why)
        self.stop_event.set()
        self.hard_stop.set()
        self.exit_code = 1

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
        self.waker = WakeSocket()
        self.beat(force=True)
        log.info("daemon %s serving %s with %d worker(s)", self.id, self.spool.root, self.settings.workers)
        self.recover()
        self._cluster = None
        self._scheduler = self.settings.scheduler
        if self.settings.engine == "dask" and self._scheduler is None:
            from ..distributed.dask_engine import _import_distributed

            _import_distributed()
            from distributed import LocalCluster

            self._cluster = LocalCluster(n_workers=config.DASK_LOCAL_WORKERS, threads_per_worker=1, processes=True, dashboard_address=None)
            self._scheduler = self._cluster.scheduler_address
        if self.settings.engine == "dask":
            log.info("jobs sample their trees on the Dask cluster at %s", self._scheduler)
            self.pool.scheduler = self._scheduler
        threads = self.settings.threads or max(1, (os.cpu_count() or 1) // self.settings.workers)
        self.pool.start(self.settings.workers, threads)
        self.state = "running"
        self.beat(force=True)

    def shutdown(self) -> None:
        """Stop the workers, give back the lock, remove this daemon's files; a last recovery pass first,
        so that a dead daemon whose workers outlived the passes so far leaves nothing behind either."""
        self.pool.stop()
        mine = self.spool.dir(P.CLAIMED) / self.id
        for name in self.spool.names(f"{P.CLAIMED}/{self.id}"):  # only after a failed put-back
            try:
                self.ledger.put_back(mine / name, name)
            except OSError as exc:
                log.error("job %s: cannot put it back in new/ (%s); it stays in %s for the next daemon",
                          name, exc, mine / name)
        if self.state != "starting" and P.is_real_dir(self.spool.dir(P.NEW)):
            try:
                self.recovery.run(None)
            except Exception:  # noqa: BLE001 - the next daemon's start recovers what this one could not
                log.exception("the last recovery pass failed; the next daemon to start does it")
        if P.is_real_dir(mine):
            try:
                os.rmdir(mine)
            except OSError as exc:
                log.warning("cannot remove %s: %s", mine, exc)
        P.remove_quietly(self.spool.heartbeat(self.id))
        P.remove_quietly(self.spool.stop_marker(self.id))
        if self.waker is not None:
            self.waker.close()
        if self.lock is not None:
            self.lock.release()
            P.remove_quietly(self.spool.lock(self.id))
        log.info("daemon %s stopped: %d done, %d failed, %d put back", self.id, self.done, self.failed,
                 self.requeued)
        if self._old_umask is not None:
            os.umask(self._old_umask)

    # --- the parts ----------------------------------------------------------------------
    def beat(self, force: bool = False) -> None:
        """Write the heartbeat if one is due, or ``force`` (a change of state), or the counts it tells
        changed: jobs published (``status`` shows them next to the spool's) and workers ready (a client
        that started the daemon waits for them)."""
        counts = (self.done, self.failed, sum(w.ready for w in self.workers))
        force, self._counted = force or counts != self._counted, counts
        self.heartbeat.beat(lambda now: heartbeat.document(
            daemon_id=self.id, state=self.state, started=self.started, now=now, settings=self.settings,
            workers=self.workers, done=self.done, failed=self.failed, process_started=self.process_started,
            wake_port=self.waker.port if self.waker is not None else None),
            force=force)

    def stop_requested(self) -> bool:
        """Was a stop requested for every daemon started before the request (``daemons/.stop-all``), after
        this daemon's process started? (Read again only when the file changes.)"""
        path = self.spool.stop_all()
        try:
            st = os.stat(path)
        except OSError:
            return False
        if self._stop_all_seen == (st.st_mtime_ns, st.st_size):
            return False
        self._stop_all_seen = (st.st_mtime_ns, st.st_size)
        return P.number(P.read_json(path), "requested_unix", 0.0) >= self.process_started

    def recover(self) -> int:
        """Requeue the jobs of dead daemons (raising their attempt counters); return how many."""
        # at start there is nothing of ours yet: only later are our claims that no worker runs put back
        return self.recovery.run(self.pool.running() if self.workers else None)

    def claim(self, w: Worker, names: list[str]) -> bool:
        """Claim the first job of ``names`` this daemon wins and hand it to worker ``w``."""
        return self.claimer.claim(w, names)

    # --- the loop -----------------------------------------------------------------------
    def serve(self) -> int:
        """Run until stopped; return the exit code."""
        self._last_recovery = self._idle_since = self._last_install_check = time.time()
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
            self._give_up(f"{self.spool.dir(P.NEW)} is gone (the spool was deleted or moved): stopping")
        # (while stopping too: jobs given their grace could not finish without the package's files)
        if not self.hard_stop.is_set() and now - self._last_install_check >= config.INSTALL_CHECK_SECONDS:
            self._last_install_check = now
            gone = installation_gone()
            if gone:
                self._give_up(f"{gone} is gone (hdp_plugin was uninstalled or its environment deleted): "
                              "stopping; running jobs go back to new/")
        if not self.stop_event.is_set() and os.path.exists(self.spool.stop_marker(self.id)):
            log.info("stop marker found")
            self.stop_event.set()
        if not self.stop_event.is_set() and self.stop_requested():
            log.info("stop requested for every daemon started before %s", self.spool.stop_all())
            self.stop_event.set()
        if self.stop_event.is_set():
            if self._stop_since is None:
                self._stop_since = now
                self.state = "stopping"
                self.beat(force=True)
                log.info("stopping: no more claims; running jobs get %.0f s to finish", s.grace)
            if self.hard_stop.is_set() or now - self._stop_since >= s.grace:
                self.pool.interrupt(now)
            if not self.pool.busy():
                return self.exit_code
        else:
            every = config.LINGER_RECOVERY_SECONDS if self.recovery.lingering else config.RECOVERY_SECONDS
            if now - self._last_recovery >= every:
                self._last_recovery = now
                self.recover()
            idle = self.pool.idle()
            names = waiting(self.spool) if idle else []
            for w in idle:
                if not names or not self.claim(w, names):
                    break
            if self.pool.busy() or names or (not idle and self.spool.names(P.NEW)):
                self._idle_since = now
            elif s.idle_exit is not None and now - self._idle_since >= s.idle_exit:
                log.info("idle for %.1f s: exiting", s.idle_exit)
                self.stop_event.set()
                return None
        self.beat()
        self.pool.wait(self._next_look(now), self.waker)
        return None

    def _next_look(self, now: float) -> float:
        """Seconds until the next look at new/: soon after a job when a worker is free (the next job of a
        cross-validation follows at once), ``poll`` after a while (config.BRISK_POLL_SECONDS)."""
        poll = self.settings.poll
        if self.stop_event.is_set() or not self.pool.idle():
            return poll  # a worker's message ends the wait anyway
        return min(poll, max(config.BRISK_POLL_SECONDS, (now - self._idle_since) / 10))


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
