"""What ``train``, ``predict`` and ``evaluate`` tell the user while they work: ``--quiet`` and
``--verbose``, the progress line of a terminal (its phases and the sampler's iterations), the warnings
printed once each, and a configuration's short name."""

from __future__ import annotations

import logging
import sys
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from ..params import resolved_iterations, structure_name


Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Print no progress bars and no summaries, only results and errors.")]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Log what each stage of the pipeline does, on stderr.")]


@dataclass
class _Out:
    """Where messages go, and whether progress bars are wanted."""

    quiet: bool = False
    verbose: bool = False

    def __post_init__(self) -> None:
        if self.verbose:  # everything hdp_plugin logs; only warnings from other libraries
            logging.basicConfig(level=logging.WARNING, stream=sys.stderr, force=True,
                                format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
            logging.getLogger("hdp_plugin").setLevel(logging.DEBUG)

    @property
    def bars(self) -> bool:
        """Progress bars only on a terminal, and never with --quiet."""
        return not self.quiet and sys.stderr.isatty()

    def note(self, message: str) -> None:
        """A summary line on stderr (silent with --quiet), so stdout stays machine-readable."""
        if not self.quiet:
            typer.echo(message, err=True)

    @contextmanager
    def progress(self):
        """A rich Progress on stderr when bars are wanted, else None."""
        if not self.bars:
            yield None
            return
        from rich.console import Console
        from rich.progress import BarColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
        from rich.text import Text

        class Counts(ProgressColumn):  # i/N, and nothing for a phase of unknown length
            def render(self, task):
                return Text("" if task.total is None else f"{int(task.completed)}/{int(task.total)}")

        with Progress(TextColumn("{task.description}"), BarColumn(), Counts(), TimeElapsedColumn(),
                      console=Console(stderr=True), transient=True) as bar:
            yield bar


#: the loggers whose warnings a fit also puts in ``fit_info_["warnings"]``, which the commands print
_FIT_LOGGERS = ("hdp_plugin.model.classifier", "hdp_plugin.model.streaming")


class _BelowWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno < logging.WARNING


@contextmanager
def _warnings_once(hold_fit_logs: bool = True):
    """Collect what reading and fitting warn of, for :func:`_print_warnings` to print each once as one
    ``warning:`` line: the library's warnings (``warnings.warn``) are caught rather than printed with
    their file and line, and with ``hold_fit_logs`` the fit's logged warnings, which ``fit_info_``
    holds too, are held back."""
    below = _BelowWarning()
    loggers = [logging.getLogger(name) for name in _FIT_LOGGERS] if hold_fit_logs else []
    for lg in loggers:
        lg.addFilter(below)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield caught
    finally:
        for lg in loggers:
            lg.removeFilter(below)


def _print_warnings(fit_warnings, caught) -> None:
    """Every warning of a command once, as ``warning: ...`` on stderr, and every
    :class:`~hdp_plugin.errors.DataNote` as ``note: ...`` (even with --quiet: they say what the result
    is made of); warnings from outside hdp_plugin keep Python's own form."""
    from ..errors import DataNote

    package = str(Path(__file__).resolve().parents[1])  # hdp_plugin/
    lines = []
    for w in caught:
        if issubclass(w.category, UserWarning) and str(Path(w.filename).resolve()).startswith(package):
            lines.append(("note" if issubclass(w.category, DataNote) else "warning", str(w.message)))
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    lines += [("warning", str(w)) for w in fit_warnings]
    for kind, line in dict.fromkeys(lines):
        typer.echo(f"{kind}: {line}", err=True)


def _describe(params: dict, *, full: bool = False) -> str:
    """A short name of a configuration: ``kDB-3 hdp``, ``NB m-estimate``."""
    text = f"{structure_name(params['structure'], params['k'], params.get('n_members'))} {params['estimator']}"
    if full and params["estimator"] == "hdp":
        its = params["iterations"]
        text += f" {its} it." if its is not None else \
            f" auto it. (at most {resolved_iterations(params['structure'], None)})"
    return text


class _Phases:
    """The progress line of a command on a terminal: the phase it is in (``reading DATA``,
    ``discretising, learning the structure``, ``sampling kDB-5 hdp`` with its iterations i/N,
    ``writing MODEL``). Does nothing without a bar (piped stderr, ``--quiet``)."""

    def __init__(self, bar):
        self.bar, self.task, self.text = bar, None, None

    def phase(self, text: str, total: int | None = None) -> None:
        """Show ``text`` from now on: with a count of ``total`` steps, or as work of unknown length."""
        if self.bar is None:
            return
        if self.task is not None:
            self.bar.update(self.task, visible=False)
        self.task, self.text = self.bar.add_task(text, total=total), text

    def sampling(self, params: dict):
        """The ``progress`` callback of ``fit``: the sampling phase and its iterations (None without a
        bar or without HDP)."""
        if self.bar is None or params["estimator"] != "hdp":
            return None
        label = f"sampling {_describe(params)}"

        def hook(done: int, total: int) -> None:
            if self.text != label:
                self.phase(label, total)
            self.bar.update(self.task, completed=done, total=total)

        return hook


def _fit_phase(params: dict, streamed: bool = False) -> str:
    """What ``fit`` does before the sampler reports (the phase until then)."""
    what = ("learning the structures of the members" if params["structure"] == "eskdb"
            else "learning the structure")
    if params["estimator"] != "hdp":
        what += " and the tables"
    return ("passes over the batches: " if streamed else "") + f"discretising, {what}"

