"""A nudge for a waiting daemon: a job published while the daemon sleeps between looks at ``new/`` is
seen at once instead of at its next look (docs/spool-protocol.md, section 6b).

A daemon with an idle worker looks at ``new/`` sooner after a job than after a long pause (up to its
``--poll``, 0.5 s by default): the first job of a cross-validation that follows a pause would wait up
to that long. So the daemon also listens on a TCP socket of the loopback interface (an ephemeral port,
written as ``wake_port`` in its heartbeat), and a client that has just published a job connects to the
``wake_port`` of every daemon of its host and closes the connection at once. The daemon accepts and
closes every connection, reads nothing from them, and looks at ``new/``.

Polling stays the source of truth: a daemon that cannot listen writes no port, a client that cannot
connect does nothing more, and either way the job is claimed at the next look. A connection carries no
data and asks for nothing but an early look, so whoever can connect to the port can do no more than
make the daemon list ``new/`` again.
"""

from __future__ import annotations

import multiprocessing
import os
import socket
import threading

from .. import config
from . import logs
from .fileops import read_json
from .layout import DAEMONS, Spool

log = logs.logger(__name__)


class WakeSocket:
    """The daemon's listening socket (loopback, ephemeral port); ``port`` is None when the daemon could not
    listen (it then only polls).

    A thread of its own accepts the connections (closing each at once, reading nothing) and says so on a
    pipe whose reading end, :meth:`waitable`, the daemon's loop waits on with its workers' pipes: a pipe
    connection is waitable on every platform (``multiprocessing.connection.wait``), a listening socket is
    not on Windows. The thread looks at :meth:`close` every ``ACCEPT_SECONDS``.
    """

    ACCEPT_SECONDS = 0.5

    def __init__(self) -> None:
        self.sock: socket.socket | None = None
        self.port: int | None = None
        self._closed = threading.Event()
        try:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind(("127.0.0.1", 0))
                s.listen(16)
                s.settimeout(self.ACCEPT_SECONDS)
            except OSError:
                s.close()
                raise
        except OSError as exc:
            log.info("no wake-up socket (%s): looking at new/ by polling only", exc)
            return
        self.sock, self.port = s, int(s.getsockname()[1])
        self._recv, self._send = multiprocessing.Pipe(duplex=False)
        self._thread = threading.Thread(target=self._serve, name="hdp-bnc-wake", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        sock = self.sock  # its own reference: close() drops the attribute
        while not self._closed.is_set():
            try:
                conn, _ = sock.accept()
            except socket.timeout:
                continue
            except OSError as exc:  # closed, or a connection reset before it was accepted
                if self._closed.is_set():
                    break
                log.debug("wake-up socket: %s", exc)
                self._closed.wait(0.05)  # not a busy loop on a lasting error (no descriptors left)
                continue
            conn.close()
            try:
                self._send.send_bytes(b"w")
            except OSError:  # the reading end is closed: the daemon has stopped
                self._send.close()
                return
        self._send.close()

    def waitable(self):
        """What the daemon's loop waits on (None without a socket): readable after a nudge."""
        return self._recv if self.sock is not None else None

    def drain(self) -> int:
        """Take the nudges that came (each was accepted and closed already); return how many."""
        n = 0
        try:
            while self.sock is not None and self._recv.poll():
                self._recv.recv_bytes()
                n += 1
        except (OSError, EOFError):
            pass
        return n

    def close(self) -> None:
        """Stop listening (the thread ends within ``ACCEPT_SECONDS``; nothing waits for it)."""
        if self.sock is None:
            return
        self._closed.set()
        self.sock.close()
        self._recv.close()
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
    sp = Spool(spool)
    for name in sp.names(DAEMONS):
        if not name.endswith(".json"):
            continue
        doc = read_json(sp.heartbeat(name[: -len(".json")]))  # None: missing, malformed, too large, not a file
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
