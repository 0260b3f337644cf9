"""The training daemon and its spool protocol (see ``docs/spool-protocol.md``).

The protocol: :mod:`.protocol` (job schema, error codes, limits; re-exports the rest under one name),
:mod:`.layout` (names and paths), :mod:`.fileops` (atomic writes and renames), :mod:`.locks` (locks and
liveness). Its two sides: :mod:`.client` (publish, wait, cancel, status, stop) and the daemon:
:mod:`.service` (its life and loop), :mod:`.workers` (supervision of the worker processes),
:mod:`.claiming`, :mod:`.ledger` (moves of jobs to their next state), :mod:`.recovery` (crash recovery),
:mod:`.sweeping`, :mod:`.heartbeat`, :mod:`.wake` (clients nudge a waiting daemon) and :mod:`.jobs` (run one
job, in a worker). The ``hdp-bnc daemon`` commands are :mod:`hdp_plugin.cli.daemon`.
"""

from .protocol import PROTOCOL_VERSION

__all__ = ["PROTOCOL_VERSION"]
