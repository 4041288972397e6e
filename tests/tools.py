"""Third-party source tarballs the tests and the lab need (nccl-tests, enroot, pyxis).

A clone has no ``../shared``: a tarball is taken from ``$CLUSTERCTL_TOOLS_DIR`` (CI points it at
``../shared/tools``), else from the cache ``~/.cache/clusterctl/tools``, else downloaded from its URL;
it is used only when its sha256 matches the table below. When none of these gives it, the test that
needs it skips with the reason (never fails).
"""

from __future__ import annotations

import hashlib
import os
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class Tool:
    file: str
    sha256: str
    url: str


# sha256 of the exact files CI carries (../shared/tools/SHA256SUMS); a download must match them.
TOOLS: dict[str, Tool] = {
    "nccl-tests": Tool(
        "nccl-tests-2.19.6.tar.gz",
        "85c65a240432a5bd8bf8598ac235582921a96e8a968a8a675d23419478a4ab9c",
        "https://github.com/NVIDIA/nccl-tests/archive/refs/tags/v2.19.6.tar.gz",
    ),
    # enroot with its three submodules filled in (musl, makeself, linux-headers): no upstream archive
    # carries them, a site mirrors this file; CLUSTERCTL_TOOLS_DIR or the cache is where it comes from.
    "enroot": Tool(
        "enroot-4.1.2.tar.gz",
        "19ef3a2b01f6af06cd2fde34b2b56a841737f8825f0ff2652b1b24b1575e1ca1",
        "https://github.com/NVIDIA/enroot/archive/refs/tags/v4.1.2.tar.gz",
    ),
    "pyxis": Tool(
        "pyxis-0.24.0.tar.gz",
        "75bc3e2111380599312e482e4a69e56751d7a2d663a00673c16cbeeee4077018",
        "https://github.com/NVIDIA/pyxis/archive/refs/tags/v0.24.0.tar.gz",
    ),
}

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "clusterctl" / "tools"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def find_tool(name: str, *, download: bool = True) -> tuple[Path | None, str]:
    """(path, "") for a verified tarball, or (None, why it is not available)."""
    tool = TOOLS[name]
    why: list[str] = []
    override = os.environ.get("CLUSTERCTL_TOOLS_DIR")
    candidates = ([Path(override) / tool.file] if override else []) + [CACHE / tool.file]
    for cand in candidates:
        if cand.is_file():
            if sha256_of(cand) == tool.sha256:
                return cand, ""
            why.append(f"{cand}: sha256 differs from {tool.sha256}")
    if not override:
        why.append("CLUSTERCTL_TOOLS_DIR is not set")
    if download:
        CACHE.mkdir(parents=True, exist_ok=True)
        part = CACHE / f".{tool.file}.part"
        try:
            with urllib.request.urlopen(tool.url, timeout=30) as resp, part.open("wb") as out:
                while block := resp.read(1 << 20):
                    out.write(block)
        except OSError as exc:
            why.append(f"download {tool.url} failed: {exc}")
        else:
            if sha256_of(part) == tool.sha256:
                os.replace(part, CACHE / tool.file)
                return CACHE / tool.file, ""
            why.append(f"download {tool.url}: sha256 differs from {tool.sha256}")
        part.unlink(missing_ok=True)
    return None, "; ".join(why)


def tool_tarball(name: str) -> Path:
    """The verified tarball of ``name``, or skip the calling test saying why."""
    path, why = find_tool(name)
    if path is None:
        pytest.skip(f"{TOOLS[name].file} not available: {why}")
    return path
