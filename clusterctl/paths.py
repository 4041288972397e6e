"""Where the playbooks, roles, plugins and inventories are, installed or in a checkout."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import stat
import time
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from clusterctl import collection
from clusterctl.errors import Busy

_PKG = Path(__file__).resolve().parent


@cache
def data_root() -> Path:
    """The folder holding inventories/, lab/ and ansible.cfg (wheel: clusterctl/_data; checkout: repo).

    playbooks/, roles/ and plugins/ belong to the collection: :func:`collection.collection_root`.
    """
    installed = _PKG / "_data"
    if (installed / "ansible.cfg").is_file():
        return installed
    return _PKG.parent


def playbooks() -> Path:
    return collection.collection_root() / "playbooks"


def roles() -> Path:
    return collection.collection_root() / "roles"


def plugins() -> Path:
    return collection.collection_root() / "plugins"


def inventories() -> Path:
    return data_root() / "inventories"


class NotRegular(ValueError):
    """A path that is not read: a fifo, socket, device or folder, or a file over the size limit."""


def read_regular(path: Path | str, limit: int, *, what: str = "the file", nofollow: bool = False) -> bytes:
    """The bytes of a regular file, at most ``limit`` of them; never blocks.

    Every reader of a user-named file goes through here (inventory files, evidence captures, the
    pre-parsed envelopes beside them): the file is opened non-blocking and fstat'd before a byte is
    read, so a fifo, a socket or a device is refused (:class:`NotRegular`) instead of hanging or
    streaming forever. ``nofollow``: a last component that is a symlink is not followed (the
    caller resolved and checked it). OSError (missing, unreadable) passes through.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | (getattr(os, "O_NOFOLLOW", 0) if nofollow else 0))
    try:
        st = os.fstat(fd)
        mode = st.st_mode
        if not stat.S_ISREG(mode):
            kind = ("a fifo" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                    else "a socket" if stat.S_ISSOCK(mode) else "a folder" if stat.S_ISDIR(mode) else "not a file")
            raise NotRegular(f"{kind}, not a regular file: refused")
        # read what fstat says is there (plus one byte, to see growth), not a limit-sized buffer: a
        # buffered read(limit + 1) allocates the whole limit (64 MiB for a capture) per file
        parts: list[bytes] = []
        total = 0
        want = min(st.st_size, limit) + 1
        while total <= limit:
            chunk = os.read(fd, want)
            if not chunk:
                break
            parts.append(chunk)
            total += len(chunk)
            if 0 < st.st_size == total and len(chunk) < want:
                break  # all that fstat said and no byte more: its end (a /proc file says 0: read on)
            # up to what fstat said, then one byte tells the end from growth (os.read allocates what
            # it is asked for); past it (a growing file, a /proc file of size 0), 1 MiB steps
            want = st.st_size - total + 1 if total <= st.st_size else min(limit + 1 - total, 1 << 20)
        data = b"".join(parts)
        if len(data) > limit:
            raise NotRegular(f"{what} is larger than {limit // (1024 * 1024)} MiB: refused")
        return data
    finally:
        os.close(fd)


def write_atomic(path: Path, text: str, mode: int = 0o644) -> None:
    """Write ``text`` to ``path`` whole or not at all: a temporary file in the same folder, fsync'd,
    then renamed over ``path``. A full disk or a folder where the file should be raises OSError
    naming ``path`` (the caller reports it in one line); nothing half-written is left behind."""
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and not path.is_file():  # a folder, a device (/dev/full), a fifo: never replaced
        raise OSError(21 if path.is_dir() else 17, "is a folder, not a file" if path.is_dir()
                      else "exists and is not a regular file", str(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _holder(fd: int) -> str:
    """Who holds a lock, from what it wrote into the lock file (it may be gone or mid-write)."""
    try:
        info = json.loads(os.pread(fd, 4096, 0).decode("utf-8", "replace") or "{}")
    except (OSError, ValueError):
        info = {}
    if not isinstance(info, dict) or "pid" not in info:
        return "holder unknown (it has not written its name yet)"
    return (f"pid {info.get('pid')}, `{info.get('command', '?')}`, started {info.get('started', '?')}, "
            f"host {info.get('host', '?')}")


@contextlib.contextmanager
def exclusive(lock_file: Path, command: str, *, what: str = "this inventory") -> Iterator[None]:
    """Hold ``lock_file`` (fcntl ``flock``, never waits) while the block runs: the one lock helper of
    clusterctl (the per-inventory lock of provision/reconfigure/remediate/verify, the remediation
    loop's own lock). The holder writes its pid, ``command``, start time and host into the file; a
    second taker gets :class:`~clusterctl.errors.Busy` naming them and the file. The kernel drops
    the lock when the holder's process ends, however it ends: a stale file holds no lock. Not
    re-entrant: a second take in the same process is refused like any other."""
    lock_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Busy(f"another clusterctl run holds the lock of {what} ({_holder(fd)}; lock file {lock_file}); "
                       "nothing was run: wait for it to end, then run again") from None
        me = {"pid": os.getpid(), "command": command, "host": socket.gethostname(),
              "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)  # unlocked and empty: nobody reads a finished run as the holder
    finally:
        os.close(fd)
