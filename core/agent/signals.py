"""The signals that stop Ambry's servers, ``ambry serve`` and ``ambry mcp``, cleanly.

SIGINT is Ctrl-C and SIGTERM a service manager's stop; SIGHUP is the terminal
or the ssh login that started the server going away. Ambry reads
``config.json`` again by itself when it changes, so SIGHUP has no other job
here, and its default action (ending the process on the spot) would leave the
sessions open, the socket file behind and the last reads unaudited.
"""

from __future__ import annotations

import signal

#: What stops a server between two calls: Windows has no SIGHUP, and Python
#: cannot catch its SIGTERM, so there only Ctrl-C does.
STOP_SIGNALS: tuple[signal.Signals, ...] = (
    (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    if hasattr(signal, "SIGHUP")
    else (signal.SIGINT,)
)
