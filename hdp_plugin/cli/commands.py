"""The ``hdp-bnc`` command line: its app and entry point, with train (:mod:`.train`), predict
(:mod:`.predict`), evaluate (:mod:`.evaluate`), info and show (:mod:`.info`) and the daemon's commands
(:mod:`.daemon`).

Thin commands over the library. Every error the library raises on purpose (:class:`HDPError`)
becomes one line ``error: ...`` on stderr and a non-zero exit code (2 for bad data, options or
model files); progress bars appear only on a terminal and never with ``--quiet``.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from .. import config
from .._version import __version__
from .common import typer_app
from .evaluate import evaluate
from .info import info, show
from .predict import predict
from .train import train

app = typer_app("hdp-bnc", "Bayesian network classifiers (NB, TAN, kDB, SkDB, ESKDB) with HDP-estimated probability tables.")


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"hdp-bnc {__version__} (model format {config.MODEL_FORMAT_MAJOR}.{config.MODEL_FORMAT_MINOR})")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version_callback, is_eager=True,
                     help="Print the version of hdp-bnc and of its model format, then exit."),
    ] = False,
) -> None:
    """Bayesian network classifiers (NB, TAN, kDB, SkDB, ESKDB) with HDP-estimated probability tables.

    After Petitjean, Buntine, Webb and Zaidi, "Accurate parameter estimation for Bayesian network
    classifiers using hierarchical Dirichlet processes", Machine Learning 107 (2018).
    """


# the commands, in the order ``hdp-bnc --help`` lists them
for _command in (train, predict, evaluate, info, show):
    app.command()(_command)


def _mount_daemon() -> None:
    """``hdp-bnc daemon ...``: the training daemon's own sub-app (hdp_plugin.cli.daemon)."""
    from .daemon import app as daemon_app

    app.add_typer(daemon_app, name="daemon",
                  help="The training daemon: serve a spool directory, submit jobs to it, watch it, stop it.")


_mount_daemon()


def main() -> None:
    """Entry point of the ``hdp-bnc`` console script and of ``python -m hdp_plugin``."""
    try:
        app(prog_name="hdp-bnc")
    except BrokenPipeError:  # e.g. `hdp-bnc predict ... | head`: stop quietly, as other tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(141)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if code == 0:
            raise
        # An error exit soon after start can race native thread pools (pyarrow's) still starting up,
        # and their C++ destructors then abort the process ("terminate called without an active
        # exception", exit 134) after the error line was printed. Nothing is left to clean up at this
        # point: flush and leave without running the interpreter's and C++'s exit handlers.
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)

