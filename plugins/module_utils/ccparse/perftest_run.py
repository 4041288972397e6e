"""Running perftest's ``ib_write_bw`` on a node: the server side, the client side, and a loopback pair.

Shared by the collector modules fabric_pairtest (one side of a pair between two nodes) and
fabric_evidence (both sides on one node, over one device). The client retries while nobody
listens yet, so the two sides may start in any order; the output is parsed on the controller
(ccparse.ib_write_bw), never here.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable

from .node import communicate, entry

#: what perftest prints when nobody listens yet on the server's port (perftest_communication.c)
CONNECT_ERRORS = ("Couldn't connect", "Unable to open file descriptor for socket connection",
                  "Failed to establish connection")

#: seconds allowed beyond the test and the connection wait before a side is killed
SLACK = 15


def run_server(cmd: list, seconds: int, connect_timeout: int, peer: str,
               started: Callable[[subprocess.Popen], None] | None = None) -> dict:
    """The server side (``cmd`` has no host argument): waits for one client, runs one test."""
    limit = seconds + connect_timeout + SLACK
    rc, out, err = communicate(cmd, limit, started=started)
    if rc is None:
        return entry("error", None, out, f"no client ({peer}) finished a test within {limit} s\n{err}", cmd)
    return entry("ok" if rc == 0 else "error", rc, out, err, cmd)


def run_client(cmd: list, seconds: int, connect_timeout: int, peer: str,
               server_gone: Callable[[], bool] = lambda: False) -> dict:
    """The client side (``cmd`` ends with the server's address): retries for ``connect_timeout`` s
    while the server does not listen yet (and ``server_gone()`` is false), then runs one test."""
    deadline = time.monotonic() + connect_timeout
    tries = 0
    while True:
        tries += 1
        rc, out, err = communicate(cmd, seconds + connect_timeout + SLACK)
        if rc == 0:
            return entry("ok", rc, out, err, cmd)
        refused = rc is not None and any(e in out + err for e in CONNECT_ERRORS)
        if not refused or time.monotonic() >= deadline or server_gone():
            why = f"server {peer} did not accept within {connect_timeout} s ({tries} tries)\n" if refused else ""
            return entry("error", rc, out, why + (err or ""), cmd)
        time.sleep(1)


def loopback(cmd: list, seconds: int, connect_timeout: int) -> dict:
    """Both sides on this node (``cmd`` without a host argument): the client's result, with the
    server's error added when the server side failed."""
    server: dict = {}
    procs: list[subprocess.Popen] = []

    def serve() -> None:
        try:
            server.update(run_server(cmd, seconds, connect_timeout, "localhost", started=procs.append))
        except OSError as exc:
            server.update(entry("error", stderr=f"cannot run {cmd[0]}: {exc}", cmd=cmd))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    client = run_client([*cmd, "localhost"], seconds, connect_timeout, "localhost",
                        server_gone=lambda: not thread.is_alive())
    killed = False
    if client["status"] != "ok":
        for proc in procs:  # a server still waiting for a client that gave up
            if proc.poll() is None:
                proc.kill()
                killed = True
    thread.join()
    if client["status"] != "ok" and not killed and server.get("status") == "error":
        client["stderr"] = f"{client['stderr']}server side: {server['stderr']}"
    return client
