"""The analysis' process runner (issue 29 item 7, session 13): workers claim their chunks themselves.

``engine._run_chunks`` returns every chunk's result in order whoever judged it; both processes judge
(the parent from the back, the worker from the front); a chunk a worker did not return (it raised,
or the worker died) is judged by the parent; an error that every process meets is raised as one
process would raise it, and no worker is left behind. The chunk function is replaced in the parent
before the fork, so these tests need the fork start method (the default on Linux before 3.14).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO

from clusterctl.analysis import engine

sys.path.insert(0, str(REPO / "bench"))

pytestmark = pytest.mark.skipif(multiprocessing.get_start_method() != "fork",
                                reason="the replaced chunk function reaches the worker only by fork")

PARENT = os.getpid()


def _chunks(n: int) -> list[Any]:
    return [(i,) for i in range(n)]


def test_every_chunk_in_order_and_both_processes_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    def judge(args: Any) -> list[Any]:
        time.sleep(0.002)  # long enough that the worker, started after the parent began, gets chunks
        return [(args[0], os.getpid())]

    monkeypatch.setattr(engine, "_analyze_chunk", judge)
    out = engine._run_chunks(_chunks(200), 2)
    assert [r[0][0] for r in out] == list(range(200))
    pids = [r[0][1] for r in out]
    assert PARENT in pids and len(set(pids)) == 2
    # the worker took a run from the front, the parent a run from the back: they met once
    worker = [i for i, p in enumerate(pids) if p != PARENT]
    assert worker == list(range(len(worker)))
    assert not multiprocessing.active_children()


@pytest.mark.parametrize("how", ["raise", "exit"])
def test_a_chunk_the_worker_did_not_return_is_judged_by_the_parent(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    def judge(args: Any) -> list[Any]:
        if os.getpid() != PARENT and args[0] == 3:
            if how == "raise":
                raise RuntimeError("worker only")
            os._exit(1)  # the worker dies: nothing it judged comes back
        return [(args[0], os.getpid())]

    monkeypatch.setattr(engine, "_analyze_chunk", judge)
    out = engine._run_chunks(_chunks(64), 3)
    assert [r[0][0] for r in out] == list(range(64))
    assert not multiprocessing.active_children()


def test_an_error_of_every_process_is_raised_and_no_worker_is_left(monkeypatch: pytest.MonkeyPatch) -> None:
    def judge(args: Any) -> list[Any]:
        if args[0] in (2, 60):  # one the worker meets, one the parent meets
            raise ValueError(f"chunk {args[0]}")
        return [(args[0], os.getpid())]

    monkeypatch.setattr(engine, "_analyze_chunk", judge)
    with pytest.raises(ValueError, match="chunk"):
        engine._run_chunks(_chunks(64), 2)
    assert not multiprocessing.active_children()


def test_bench_folder_same_report_with_1_2_and_3_processes(tmp_path: Path) -> None:
    import bench_analysis as bench

    bench.generate(260, tmp_path / "ev")
    bench.write_preparsed(tmp_path / "ev")

    def comparable(jobs: int) -> dict[str, Any]:
        d = engine.analyze_dir(tmp_path / "ev", bench.EXPECTATIONS, jobs=jobs).to_dict()
        d["summary"].pop("seconds")
        return d

    one = comparable(1)
    assert comparable(2) == one
    assert comparable(3) == one
