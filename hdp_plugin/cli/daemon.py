"""``hdp-bnc daemon ...``: run a training daemon on a spool, submit jobs, watch and stop it.

Thin commands over :mod:`.service` and :mod:`.client`, a sub-app of the ``hdp-bnc`` command line
(``hdp-bnc daemon``, ``python -m hdp_plugin daemon``). Errors become one line ``error: ...`` on stderr
and a non-zero exit code.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from .. import config
from .common import EXIT_FAILURE, EXIT_INTERRUPTED, categorical_option, cli_errors as _errors, fail, typer_app
from .options import (BurnInOpt, CategoricalOpt, ClassOpt, DecimalOpt, DiscretizationOpt, EstimatorOpt,
                      IterationsOpt, KeepColumnsOpt, KOpt, MembersOpt, MOpt, SeparatorOpt, StructureOpt, TyingOpt,
                      decimal_option, one_configuration, seed_option, separator_option)
from ..errors import ParameterError
from ..params import BY_NAME as PARAM, PARAMETERS, default as _default
from ..daemon import client
from ..daemon import protocol as P

app = typer_app("daemon", "The training daemon: serve a spool directory, submit jobs to it, watch it, stop it.")


SpoolArg = Annotated[Path, typer.Argument(help="The spool directory (created with mode 0700 if missing).")]
#: status, cancel and stop read a spool that a daemon (or a submit) made; they refuse a missing one
ExistingSpoolArg = Annotated[Path, typer.Argument(help="The spool directory, as given to 'daemon run' (it must exist).")]


# ------------------------------------------------------------------------------------------
# run
# ------------------------------------------------------------------------------------------
@app.command()
def run(
    spool: SpoolArg,
    workers: Annotated[int, typer.Option("--workers", "-w", help="Jobs run at once, each in its own worker process.")] = config.DAEMON_WORKERS,
    idle_exit: Annotated[
        Optional[float],
        typer.Option("--idle-exit", help="Exit after this many seconds with no job queued or running; by default never."),
    ] = None,
    poll: Annotated[float, typer.Option("--poll", help="Most seconds between looks at new/ (polling is the source of truth; sooner after a job, and at once when a client that published a job nudges the daemon through a loopback port: docs/spool-protocol.md section 6b).")] = config.DAEMON_POLL_SECONDS,
    grace: Annotated[
        float,
        typer.Option("--grace", help="On SIGTERM, SIGINT or 'stop': seconds running jobs get to finish before they are put back in new/."),
    ] = config.DAEMON_GRACE_SECONDS,
    threads: Annotated[
        Optional[int],
        typer.Option("--threads", "-t", help="Sampler threads per worker; by default the cores divided by the workers. Models do not depend on it."),
    ] = None,
    max_input_mb: Annotated[
        float, typer.Option("--max-input-mb", help="Largest data file a job may hand in, in MiB, before and after decompression; a job's "
                     f"working memory may be {config.WORKING_MEMORY_FACTOR} times it. Larger ones fail with too_large."),
    ] = config.DEFAULT_MAX_INPUT_BYTES / 2**20,
    max_cardinality: Annotated[
        int, typer.Option("--max-cardinality", help="Most values a nominal attribute or the class may have; more fail with too_large."),
    ] = config.DEFAULT_MAX_CARDINALITY,
    max_cells: Annotated[
        int, typer.Option("--max-cells", help="Most values (rows x columns) an Arrow data file may declare or decode to; more fail with too_large."),
    ] = config.MAX_CELLS,
    allow_shared_spool: Annotated[
        bool, typer.Option("--allow-shared-spool", help="Serve a spool that other users own or can write (they can then run jobs as you); refused by default."),
    ] = False,
    engine: Annotated[str, typer.Option("--engine", help="Where jobs sample their context trees: local (the worker "
                                        "process) or dask (a Dask cluster; needs Dask, the distributed extra of hdp-plugin). "
                                        "Models do not depend on it.")] = "local",
    scheduler: Annotated[Optional[str], typer.Option(
        "--scheduler", metavar="tcp://HOST:PORT",
        help=f"With --engine dask: the scheduler of an existing cluster; without it a LocalCluster of "
             f"{config.DASK_LOCAL_WORKERS} workers starts with the daemon.")] = None,
    worker_memory_mb: Annotated[float, typer.Option(
        "--worker-memory-mb", metavar="MIB",
        help="A worker whose memory (resident set) is above this many MiB after a job is replaced by a fresh one, "
             "so that what a job leaves allocated does not shrink the next job's share; 0: a fresh worker for "
             "every job (each start costs a warm-up of a few seconds).")] = config.WORKER_MEMORY_MB,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Log only warnings and errors.")] = False,
) -> None:
    """Serve SPOOL: claim jobs from new/, train them, publish models into done/ and failures into failed/."""
    from ..daemon.jobs import Limits
    from ..daemon.service import Settings
    from ..daemon.service import run as run_daemon

    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO, stream=sys.stderr,
                        format="%(asctime)s hdp-bnc daemon: %(message)s", datefmt="%Y-%m-%dT%H:%M:%S")
    from ..daemon.logs import escape_handlers

    escape_handlers()  # one record, one line: names from the spool cannot forge or hide log lines
    logging.captureWarnings(True)  # Python's warnings are records too (the workers do the same)
    with _errors():
        if workers < 1:
            raise ParameterError(f"--workers must be >= 1, got {workers!r}")
        if poll <= 0:
            raise ParameterError(f"--poll must be > 0, got {poll!r}")
        if idle_exit is not None and idle_exit < 0:
            raise ParameterError(f"--idle-exit must be >= 0, got {idle_exit!r}")
        if threads is not None and threads < 1:
            raise ParameterError(f"--threads must be >= 1, got {threads!r}")
        if max_input_mb <= 0 or max_cardinality < 2 or max_cells < 1:
            raise ParameterError("--max-input-mb must be > 0, --max-cardinality >= 2 and --max-cells >= 1")
        if not worker_memory_mb >= 0:
            raise ParameterError(f"--worker-memory-mb must be >= 0, got {worker_memory_mb!r}")
        from ..distributed import ENGINES

        if engine not in ENGINES:
            raise ParameterError(f"--engine must be one of {', '.join(ENGINES)}; got {engine!r}")
        if scheduler is not None and engine != "dask":
            raise ParameterError("--scheduler needs --engine dask")
        if engine == "dask":
            from ..distributed.dask_engine import _import_distributed

            _import_distributed()
        settings = Settings(workers=workers, idle_exit=idle_exit, poll=poll, grace=grace, threads=threads,
                            limits=Limits(max_input_bytes=int(max_input_mb * 2**20), max_cardinality=max_cardinality,
                                          max_cells=max_cells),
                            allow_shared_spool=allow_shared_spool, engine=engine, scheduler=scheduler,
                            worker_memory_mb=worker_memory_mb)
        code = run_daemon(spool, settings)
    raise typer.Exit(code)


# ------------------------------------------------------------------------------------------
# submit
# ------------------------------------------------------------------------------------------
SubmitSeedOpt = seed_option(" The same seed gives the same model as 'hdp-bnc train'.")


@app.command()
def submit(
    spool: SpoolArg,
    data: Annotated[Path, typer.Argument(help="Training data: ARFF (.arff, .arff.gz) or Arrow IPC (.arrow, .feather), copied into the job; or CSV or Parquet, converted to compressed Arrow IPC (text columns as dictionaries).")],
    class_attribute: ClassOpt = None,
    structure: StructureOpt = _default("structure"),
    k: KOpt = str(_default("k")),
    members: MembersOpt = str(_default("n_members")),
    estimator: EstimatorOpt = _default("estimator"),
    iterations: IterationsOpt = "auto",
    burn_in: BurnInOpt = None,
    tying: TyingOpt = _default("tying"),
    m: MOpt = _default("m"),
    seed: SubmitSeedOpt = PARAM["random_state"].default_in_job,
    discretization: DiscretizationOpt = _default("discretization"),
    categorical: CategoricalOpt = None,
    keep_columns: KeepColumnsOpt = None,
    separator: SeparatorOpt = None,
    decimal: DecimalOpt = None,
    max_input_mb: Annotated[Optional[float], typer.Option(
        "--max-input-mb", metavar="MIB",
        help="Largest CSV or Parquet file converted here, in MiB, before and after decompression; the working "
             f"memory of its rows is bounded at {config.WORKING_MEMORY_FACTOR} times it, checked before a CSV "
             "file's text is parsed. The daemon applies its own limits to the job.",
        show_default=str(config.DEFAULT_MAX_INPUT_BYTES >> 20))] = None,
    name: Annotated[Optional[str], typer.Option("--name", help="The job name (letters, digits, _ . @ + -); a unique one by default.")] = None,
    client_name: Annotated[Optional[str], typer.Option("--client", help="Free text naming the producer, copied into result.json; none by default.")] = None,
    wait: Annotated[bool, typer.Option("--wait", help="Wait for the job to finish; print the model's path, or the error and exit 1.")] = False,
    timeout: Annotated[Optional[float], typer.Option("--timeout", help="With --wait: give up after this many seconds (exit 1); the job stays queued; by default never.")] = None,
    no_daemon_timeout: Annotated[Optional[float], typer.Option(
        "--no-daemon-timeout", metavar="SECONDS",
        help="With --wait: give up (exit 1) once no daemon has served SPOOL for this many seconds; the job stays "
             "queued. By default --wait waits for a daemon as long as --timeout allows, and says once on stderr, "
             f"after {config.NO_DAEMON_NOTICE_SECONDS:g} s, that none serves the spool and how to start one.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print no progress bar and no notes, only the result (and the warning that no daemon serves SPOOL).")] = False,
) -> None:
    """Publish a training job for DATA in SPOOL and print where its model lands (done/JOB/model.arrow)."""
    with _errors():
        if no_daemon_timeout is not None and (not wait or no_daemon_timeout < 0):
            raise ParameterError("--no-daemon-timeout needs --wait and a number of seconds >= 0")
        params = one_configuration("daemon submit", structure=structure, k=k, members=members, estimator=estimator,
                                   iterations=iterations, burn_in=burn_in, tying=tying, m=m, seed=seed, threads=None,
                                   discretization=discretization)
        job = {p.job: params[p.name] for p in PARAMETERS if p.job and p.name in params}
        job.update(class_attribute=class_attribute, client=client_name)
        if categorical is not None:
            job["categorical_features"] = categorical_option(categorical)
        if keep_columns is not None:
            job["keep_columns"] = categorical_option(keep_columns, "--keep-columns")
        if max_input_mb is not None and not max_input_mb > 0:
            raise ParameterError(f"--max-input-mb must be > 0, got {max_input_mb!r}")
        mb = config.DEFAULT_MAX_INPUT_BYTES / 2**20 if max_input_mb is None else max_input_mb
        separator = separator_option(separator)
        decimal = decimal_option(decimal)
        job_name = client.publish(spool, data, job, name=name, separator=separator, decimal=decimal,
                                  max_input_bytes=int(mb * 2**20))
        try:  # from the job's publication on, an interrupt stops only this command: the job is the daemon's
            model = P.Spool(spool).job(P.DONE, job_name) / P.MODEL_FILE
            if not wait:
                if not quiet:
                    typer.echo(f"submitted {job_name}; its model will land in {model}", err=True)
                typer.echo(model)
                return
            if not quiet:
                typer.echo(f"submitted {job_name}; waiting", err=True)
            st = _wait(spool, job_name, timeout, no_daemon_timeout, bar=not quiet and sys.stderr.isatty(), quiet=quiet)
        except KeyboardInterrupt:
            raise fail(f"interrupted; job {job_name} stays in {spool} (hdp-bnc daemon cancel {spool} {job_name} "
                       f"cancels it)", EXIT_INTERRUPTED) from None
        if st["state"] == P.DONE:
            typer.echo(st["model"])
            return
        err = st.get("error") or {}
        typer.echo(f"error: job {job_name} failed ({err.get('code', '?')}): {err.get('message', '')}", err=True)
        raise typer.Exit(EXIT_FAILURE)


def _no_daemon_notice(spool: Path, echo, quiet: bool):
    """``on_no_daemon`` of :func:`client.wait`: the warning once no daemon serves the spool (even with
    --quiet), a note when one does."""
    def notice(message: str | None) -> None:
        if message:
            echo(f"warning: {message}")
        elif not quiet:
            echo(f"a daemon serves {spool} now; waiting for the job")
    return notice


def _wait(spool: Path, name: str, timeout: float | None, no_daemon_timeout: float | None, *, bar: bool,
          quiet: bool = False) -> dict:
    if not bar:
        return client.wait(spool, name, timeout=timeout, no_daemon_timeout=no_daemon_timeout,
                           on_no_daemon=_no_daemon_notice(spool, lambda m: typer.echo(m, err=True), quiet))
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("queued", total=None)

        def show(doc: dict) -> None:
            progress.update(task, description=doc.get("phase", ""), completed=doc.get("iteration", 0),
                            total=doc.get("total") or None)

        echo = lambda m: progress.console.print(m, markup=False, highlight=False, soft_wrap=True)  # noqa: E731
        return client.wait(spool, name, timeout=timeout, on_progress=show, no_daemon_timeout=no_daemon_timeout,
                           on_no_daemon=_no_daemon_notice(spool, echo, quiet))


# ------------------------------------------------------------------------------------------
# status, cancel, stop
# ------------------------------------------------------------------------------------------
@app.command()
def status(
    spool: ExistingSpoolArg,
    job: Annotated[Optional[str], typer.Argument(help="One job to describe; by default the whole spool.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON.")] = False,
) -> None:
    """Show the daemons of SPOOL (alive or not), the jobs in each state, and the progress of running jobs.

    A daemon's line counts the jobs it published since it started; the jobs line counts the folders in
    the spool's states, whoever published them (and until a client removes them).

    Exit code 0 when a live daemon serves the spool (or the job is known), 3 otherwise.
    """
    with _errors():
        if job is not None:
            st = client.job_state(spool, job)
            if as_json:
                typer.echo(json.dumps(st, indent=2))
            else:
                typer.echo(_job_text(st))
            raise typer.Exit(0 if st["state"] else 3)
        doc = client.status(spool)
        if as_json:
            typer.echo(json.dumps(doc, indent=2))
        else:
            typer.echo(_status_text(doc))
        raise typer.Exit(0 if any(d["alive"] for d in doc["daemons"]) else 3)


def _job_text(st: dict) -> str:
    if st["state"] is None:
        return f"{st['job']}: unknown"
    line = f"{st['job']}: {st['state']}"
    if st.get("progress"):
        p = st["progress"]
        line += f", {p.get('phase')} {p.get('iteration')}/{p.get('total')}"
    if st.get("model"):
        line += f", model {st['model']}"
    if st.get("error"):
        line += f", {st['error'].get('code')}: {st['error'].get('message')}"
    return line


def _status_text(doc: dict) -> str:
    lines = [f"spool {doc['spool']}"]
    live = [d for d in doc["daemons"] if d["alive"]]
    if not doc["daemons"]:
        lines.append("daemons: none")
    for d in doc["daemons"]:
        state = d.get("state", "?") if d["alive"] else "dead"
        lines.append(f"daemon {d['daemon']}: {state}, pid {d.get('pid')}, {d.get('ready_workers', 0)}/"
                     f"{d.get('workers', '?')} workers ready, heartbeat {d['age_seconds']:.1f} s ago, "
                     f"since it started: {d.get('done', 0)} done, {d.get('failed', 0)} failed")
    if doc["daemons"] and not live:
        lines.append("no live daemon: queued jobs wait until one starts")
    c = doc["counts"]
    lines.append(f"jobs in the spool: {c['new']} queued, {c['claimed']} running, {c['done']} in done/, "
                 f"{c['failed']} in failed/" + (f", {c['tmp']} being written" if c["tmp"] else ""))
    for r in doc["running"]:
        p = r["progress"] or {}
        lines.append(f"  running {r['job']}: {p.get('phase', 'starting')} {p.get('iteration', 0)}/{p.get('total', 0)}"
                     + (" (cancel requested)" if r["cancel_requested"] else "")
                     + ("" if r["daemon_alive"] else " (its daemon is dead: requeued when a daemon starts)"))
    return "\n".join(lines)


@app.command()
def cancel(
    spool: ExistingSpoolArg,
    job: Annotated[str, typer.Argument(help="The job to cancel (queued or running); it ends in failed/ with code cancelled.")],
) -> None:
    """Cancel a job by writing SPOOL/cancel/JOB; the daemon stops it within one progress step."""
    with _errors():
        written = client.cancel(spool, job)
        typer.echo(_cancel_text(job, client.job_state(spool, job) if written else {"state": None}), err=True)


def _cancel_text(job: str, st: dict) -> str:
    """What ``daemon cancel`` did, by the job's state once the request is written."""
    state = st.get("state")
    if state == P.NEW:
        return f"cancel requested for {job} (queued): it will end in failed/ with code cancelled"
    if state == P.CLAIMED:
        return (f"cancel requested for {job} (running): its daemon stops it within one progress step, and it ends "
                f"in failed/ with code cancelled")
    if state in (P.DONE, P.FAILED):
        return f"{job} has already finished (in {state}/): nothing to cancel"
    if state == P.TMP:
        return f"cancel requested for {job} (still being submitted): it will end in failed/ with code cancelled"
    return f"{job} is not in the spool: nothing to cancel (no marker written)"


@app.command()
def stop(
    spool: ExistingSpoolArg,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Wait until every daemon has exited.")] = True,
    timeout: Annotated[float, typer.Option("--timeout", help="With --wait: give up after this many seconds (exit 1).")] = 120.0,
) -> None:
    """Ask every daemon of SPOOL to stop, including one still starting (running jobs finish or go back to new/).

    A SPOOL that is not a spool yet is waited for a few seconds: a daemon just started on a new path makes it.
    """
    with _errors():
        started = time.monotonic()
        ids = client.stop(spool, wait_seconds=timeout if wait else None,
                          on_spool_wait=lambda message: typer.echo(message, err=True))
        if not ids:
            typer.echo("no live daemon", err=True)
        for d in ids:
            typer.echo(f"{'stopped' if wait else 'asked to stop'} {d}"
                       + (f" in {time.monotonic() - started:.1f} s" if wait else ""), err=True)
