"""clusterctl.paths.read_regular (every evidence capture, envelope and inventory file goes through it):
it reads what the file holds, not a buffer of the limit's size, and still refuses what is over the limit."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from clusterctl.paths import NotRegular, read_regular

LIMIT = 64 * 1024 * 1024  # the evidence limit (clusterctl.parse_capture.MAX_CAPTURE_BYTES)


def test_a_small_file_costs_its_size_not_the_limit(tmp_path: Path) -> None:
    # a buffered read(limit + 1) allocated the whole 64 MiB for every capture (about 50 us a file)
    p = tmp_path / "ibstat.txt"
    p.write_bytes(b"CA 'mlx5_0'\n" * 100)
    tracemalloc.start()
    try:
        data = read_regular(p, LIMIT)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert data == p.read_bytes()
    assert peak < 256 * 1024


@pytest.mark.parametrize("size", [0, 1, 4095, 4096, 4097, 100_000])
def test_at_and_over_the_limit(tmp_path: Path, size: int) -> None:
    p = tmp_path / "f"
    p.write_bytes(bytes(range(256)) * (size // 256) + b"z" * (size % 256))
    assert read_regular(p, size) == p.read_bytes()
    assert read_regular(p, size + 10) == p.read_bytes()
    if size:
        with pytest.raises(NotRegular, match="larger than"):
            read_regular(p, size - 1)


def test_a_file_whose_size_says_nothing_is_read_whole() -> None:
    # /proc files report st_size 0: the read goes on until the end (or the limit)
    status = Path("/proc/self/status")
    if not status.exists():
        pytest.skip("no /proc on this system")
    data = read_regular(status, 1 << 20)
    assert data.startswith(b"Name:") and b"\nPid:" in data
    with pytest.raises(NotRegular):
        read_regular(status, 10)


def test_a_fifo_is_still_refused(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    with pytest.raises(NotRegular, match="fifo"):
        read_regular(fifo, LIMIT)
