"""The ``hdp-bnc`` command line (typer): :mod:`.commands` (train, predict, evaluate, info, graph, and the
entry point), :mod:`.daemon` (``hdp-bnc daemon ...``, also ``python -m hdp_plugin daemon ...``),
:mod:`.options` (the options the commands share, with their checks) and :mod:`.common` (the typer app
factory and the one-line errors)."""

from .commands import app, main

__all__ = ["app", "main"]
