"""What every ``hdp-bnc`` command shares: how its typer app is set up, and how errors become one
line on stderr and an exit code.

Used by :mod:`hdp_plugin.cli.commands` and :mod:`hdp_plugin.cli.daemon`.
"""

from __future__ import annotations

from contextlib import contextmanager

import typer
from typer.core import TyperCommand, TyperGroup

from ..errors import DataError, HDPError, JobError, ModelFileError, ParameterError

#: exit code of bad data, options, jobs or model files (as for usage errors)
EXIT_USAGE = 2
#: exit code of any other failure
EXIT_FAILURE = 1
#: exit code after Ctrl-C
EXIT_INTERRUPTED = 130


def _usage_pieces(command, ctx) -> list[str]:
    """``[OPTIONS] MODEL DATA``: arguments by their upper-case names, optional ones in brackets
    (typer 0.27 writes a required argument as ``{data}``); the usage line of the help and of a usage
    error."""
    pieces = [command.options_metavar] if command.options_metavar else []
    for p in command.get_params(ctx):
        if p.param_type_name == "argument":
            name = (p.metavar or p.name or "").upper() + ("..." if p.nargs != 1 else "")
            pieces.append(name if p.required else f"[{name}]")
    return pieces


class HelpCommand(TyperCommand):
    """A command whose help is :mod:`.help`'s: legible at 80 columns, the same on every typer."""

    def collect_usage_pieces(self, ctx) -> list[str]:
        return _usage_pieces(self, ctx)

    def format_help(self, ctx, formatter) -> None:
        from .help import render

        formatter.write(render(self, ctx))


class HelpGroup(TyperGroup):
    """A group of commands (``hdp-bnc``, ``hdp-bnc daemon``) with :class:`HelpCommand`'s help."""

    def format_help(self, ctx, formatter) -> None:
        from .help import render

        formatter.write(render(self, ctx))


class _App(typer.Typer):
    """A typer app whose commands are :class:`HelpCommand` unless they say otherwise."""

    def command(self, *args, cls=None, **kwargs):
        return super().command(*args, cls=cls or HelpCommand, **kwargs)


def typer_app(name: str, help: str) -> typer.Typer:
    """A typer app with the project's conventions: ``-h``, help when called bare, no tracebacks, and
    the help of :mod:`.help` (:class:`HelpCommand`)."""
    return _App(
        name=name,
        help=help,
        cls=HelpGroup,
        context_settings={"help_option_names": ["-h", "--help"]},
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )


def fail(message: str, code: int) -> typer.Exit:
    """Print ``error: message`` on stderr and return the Exit to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def categorical_option(text: str | None, option: str = "--categorical") -> list[str] | None:
    """``--categorical NAME[,NAME...]``: the attribute names, in order, each once (None when not given)."""
    if text is None:
        return None
    names = [s.strip() for s in str(text).split(",")]
    if not any(names) or any(not s for s in names):
        raise ParameterError(f"{option} must be a comma-separated list of attribute names, got {text!r}")
    return list(dict.fromkeys(names))


@contextmanager
def cli_errors():
    """Turn the library's errors into one line on stderr and an exit code (no traceback)."""
    try:
        yield
    except (DataError, ParameterError, ModelFileError, JobError) as exc:
        raise fail(str(exc), EXIT_USAGE) from None
    except (HDPError, TimeoutError) as exc:
        raise fail(str(exc), EXIT_FAILURE) from None
    except BrokenPipeError:
        raise
    except OSError as exc:
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        raise fail(f"{where}{exc.strerror or exc}", EXIT_FAILURE) from None
    except KeyboardInterrupt:
        raise fail("interrupted", EXIT_INTERRUPTED) from None
    except MemoryError:
        raise fail("out of memory; try fewer attributes, a smaller k (or fewer values per attribute), or less "
                   "data", EXIT_FAILURE) from None
