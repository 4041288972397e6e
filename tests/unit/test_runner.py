"""The runner's event bookkeeping, exit codes and retry state, on ansible-runner event dicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterctl import runner
from clusterctl.runner import RunResult, _record_failures, _summarise, read_last_failed


def ev(kind: str, host: str, task: str = "t", **res: object) -> dict[str, object]:
    return {"event": kind, "event_data": {"host": host, "task": task, "res": dict(res)}}


def test_summarise_counts_and_reasons(tmp_path: Path) -> None:
    r = RunResult(rc=2, status="failed", artifacts_dir=tmp_path)
    for e in (ev("runner_on_ok", "a", changed=True), ev("runner_on_ok", "a"), ev("runner_on_skipped", "b"),
              ev("runner_on_failed", "b", task="Install slurmd", msg="No package matching 'slurmd'"),
              ev("runner_on_unreachable", "c", task="Gathering Facts", msg="ssh: connect timed out")):
        _summarise(e, r)
    assert (r.hosts["a"].ok, r.hosts["a"].changed) == (2, 1)
    assert r.hosts["b"].state == "failed" and r.hosts["c"].state == "unreachable"
    assert r.failed_hosts == {"b": "Install slurmd: No package matching 'slurmd'"}
    assert r.unreachable_hosts["c"].startswith("Gathering Facts: ssh")
    assert r.exit_code == 3  # failed wins over unreachable
    assert r.changes == {"a": ["t"]}


def test_ignored_failure_is_not_a_failure(tmp_path: Path) -> None:
    r = RunResult(rc=0, status="successful", artifacts_dir=tmp_path)
    e = ev("runner_on_failed", "a", msg="x")
    e["event_data"]["ignore_errors"] = True  # type: ignore[index]
    _summarise(e, r)
    assert not r.failed_hosts and r.exit_code == 0


def test_exit_codes(tmp_path: Path) -> None:
    assert RunResult(0, "successful", tmp_path).exit_code == 0
    assert RunResult(4, "failed", tmp_path, unreachable_hosts={"x": "u"}).exit_code == 4
    assert RunResult(1, "failed", tmp_path).exit_code == 1


def test_diff_text_unified(tmp_path: Path) -> None:
    r = RunResult(rc=0, status="successful", artifacts_dir=tmp_path)
    _summarise(ev("runner_on_ok", "a", task="conf", changed=True,
                  diff={"before": "A=1\n", "after": "A=2\n", "after_header": "/etc/x"}), r)
    assert "-A=1" in r.diffs["a"][0][1] and "+A=2" in r.diffs["a"][0][1]


def test_diff_of_a_loop_task_is_its_changed_items(tmp_path: Path) -> None:
    """A loop task's result carries the diffs of its items (issue 28: the NCCL files' change had none)."""
    r = RunResult(rc=0, status="successful", artifacts_dir=tmp_path)
    _summarise(ev("runner_on_ok", "a", task="files", changed=True, results=[
        {"item": "x", "changed": True, "diff": {"before": "A=1\n", "after": "A=2\n", "after_header": "/etc/x"}},
        {"item": "y", "changed": False, "diff": {"before": "B=1\n", "after": "B=1\n"}},
        {"item": "z", "changed": True, "diff": [{"before": "C=1\n", "after": "C=3\n", "after_header": "/etc/z"}]},
    ]), r)
    (task, text), = r.diffs["a"]
    assert task == "files" and {"+A=2", "+C=3", "-C=1"} <= set(text.splitlines()) and "B=1" not in text


def test_retry_state_partial_runs_settle_only_their_hosts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path))
    inv = tmp_path / "inv"
    inv.mkdir()
    first = RunResult(4, "failed", tmp_path, failed_hosts={"b": "x"}, unreachable_hosts={"c": "y"})
    _record_failures(inv, first, None)
    assert set(read_last_failed(inv)) == {"b", "c"}
    retry = RunResult(0, "successful", tmp_path)
    retry.hosts["c"] = runner.HostStats(ok=3)
    _record_failures(inv, retry, "c")
    assert set(read_last_failed(inv)) == {"b"}
    _record_failures(inv, RunResult(0, "successful", tmp_path), None)
    assert read_last_failed(inv) == {}


def test_ansible_env_points_at_the_collection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path))
    env = runner.ansible_env(tmp_path)
    first = Path(env["ANSIBLE_COLLECTIONS_PATH"].split(":")[0])
    assert (first / "ansible_collections" / "clusterctl" / "hpc" / "galaxy.yml").is_file()
    assert not {"ANSIBLE_ROLES_PATH", "ANSIBLE_LIBRARY", "ANSIBLE_MODULE_UTILS", "ANSIBLE_FILTER_PLUGINS"} & set(env)
    assert Path(env["ANSIBLE_CONFIG"]).is_file()


def test_progress_lines_survive_empty_messages() -> None:
    from clusterctl.display import RunProgress

    p = RunProgress(2, interactive=False)
    p({"event": "playbook_on_task_start", "event_data": {"task": "x"}})
    p(ev("runner_on_failed", "a", msg=""))  # no message at all
    p(ev("runner_on_unreachable", "b"))
    p(ev("runner_on_ok", "a", changed=True))


def test_runs_of_the_same_second_keep_their_own_artifacts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner.time, "strftime", lambda fmt: "20261202-185229-")
    first = runner._run_ident(tmp_path, "adhoc")
    (tmp_path / first).mkdir()
    second = runner._run_ident(tmp_path, "adhoc")
    (tmp_path / second).mkdir()
    third = runner._run_ident(tmp_path, "adhoc")
    assert first.startswith("20261202-185229-adhoc-") and second == f"{first}-2" and third == f"{first}-3"
