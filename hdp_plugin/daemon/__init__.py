"""The training daemon and its spool protocol (see ``docs/spool-protocol.md``).

:mod:`.protocol` (layout, job schema, atomic moves, locks), :mod:`.client` (publish, wait, cancel,
status, stop), :mod:`.jobs` (run one job), :mod:`.service` (the daemon loop), :mod:`.commands`
(the ``hdp-bnc daemon`` sub-app).
"""

from .protocol import PROTOCOL_VERSION

__all__ = ["PROTOCOL_VERSION"]
