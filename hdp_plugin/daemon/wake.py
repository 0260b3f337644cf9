"""A nudge for a waiting daemon: a job published while the daemon sleeps between looks at ``new/`` is
seen at once instead of at its next look (docs/spool-protocol.md, section 6b).

A daemon with an idle worker looks at ``new/`` sooner after a job than after a long pause (up to its
``--poll``, 0.5 s by default): the first job of a cross-validation that follows a pause waited up to
that long. So the daemon also listens on a TCP socket of the loopback interface (an ephemeral port,
written as ``wake_port`` in its heartbeat), and a client that has just published a job connects to the
``wake_port`` of every daemon of its host and closes the connection at once. The daemon accepts and
closes every pending connection, reads nothing from them, and looks at ``new/``.

Polling stays the source of truth: a daemon that cannot listen writes no port, a client that cannot
connect does nothing more, and either way the job is claimed at the next look. A connection carries no
data and asks for nothing but an early look, so whoever can connect to the port can do no more than
make the daemon list ``new/`` again.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from .. import config
from . import logs
from .fileops import read_json
from .layout import DAEMONS

log = logs.logger(__name__)


class WakeSocket:
    """The daemon's listening socket (loopback, ephemeral port, non-blocking); ``port`` is None when
    the daemon could not listen (it then only polls)."""

    def __init__(self) -> None:
        self.sock: socket.socket | None = None
        self.port: int | None = None
        try:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind(("127.0.0.1", 0))
                s.listen(16)
                s.setblocking(False)
            except OSError:
                s.close()
                raise
        except OSError as exc:
            log.info("no wake-up socket (%s): looking at new/ by polling only", exc)
            return
        self.sock, self.port = s, int(s.getsockname()[1])

    def fileno(self) -> int:
        return self.sock.fileno() if self.sock is not None else -1

    def drain(self) -> int:
        """Accept and close every pending connection (nothing is read); return how many."""
        n = 0
        while self.sock is not None:
            try:
                conn, _ = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:  # a connection reset before it was accepted, or a closed socket
                log.debug("wake-up socket: %s", exc)
                break
            conn.close()
            n += 1
        return n

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


def same_host(host) -> bool:
    """Is ``host`` (a heartbeat's) this machine? Compared by their first labels, case-insensitively."""
    if not isinstance(host, str) or not host:
        return False
    return host.split(".")[0].lower() == socket.gethostname().split(".")[0].lower()


def wake(spool: str | os.PathLike, timeout: float = config.WAKE_CONNECT_SECONDS) -> int:
    """Nudge every daemon of this host that serves ``spool`` and listens for it (its heartbeat's
    ``wake_port``): connect to the port on the loopback interface and close. Never raises; returns how
    many daemons were reached."""
    reached = 0
    folder = Path(spool) / DAEMONS
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".json") and not n.startswith(".")]
    except OSError:
        return 0
    for name in names:
        doc = read_json(folder / name)  # None when missing, malformed, too large or not a regular file
        if doc is None:
            continue
        port = doc.get("wake_port")
        if not (isinstance(port, int) and not isinstance(port, bool) and 0 < port < 65536) \
                or doc.get("state") == "stopping" or not same_host(doc.get("host")):
            continue
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=timeout):
                reached += 1
        except OSError:
            continue
    return reached
