"""Shared pytest fixtures."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import labutil
import pytest

REPO = Path(__file__).resolve().parent.parent
#: every capture a test reads lives in the repository (a clone has no ../shared): the real outputs
#: copied byte for byte from the project's shared fixtures, line 1 naming each one's source
LOCAL_FIXTURES = REPO / "tests" / "fixtures"
FIXTURES = LOCAL_FIXTURES


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The real captured outputs, tests/fixtures (never edited)."""
    return LOCAL_FIXTURES


def read_fixture(rel: str) -> str:
    """Text of tests/fixtures/<rel>."""
    p = LOCAL_FIXTURES / rel
    if not p.is_file():
        raise FileNotFoundError(rel)
    return p.read_text()


def corpus_capture(part: str, rel: str) -> str:
    """The capture text of tests/corpus/<part>/<rel> after its ``# corpus-`` header lines."""
    lines = (REPO / "tests" / "corpus" / part / rel).read_text(encoding="utf-8").splitlines(keepends=True)
    while lines and lines[0].startswith("# corpus-"):
        lines.pop(0)
    return "".join(lines)


def judge_parsed(kind: str, data: Any, spec: dict[str, Any] | None = None, host: str = "n1") -> list[Any]:
    """The findings of every check of ``kind`` on parsed ``data`` for ``host``, with the expectations of
    ``spec`` (the inventory keys, as ``clusterctl analyze`` builds them)."""
    from clusterctl.analysis import checks
    from clusterctl.analysis.expectations import build
    from clusterctl.analysis.model import CHECKS, CheckResult

    checks.load_all()
    exp = build(spec)
    found: list[Any] = []
    for fn in CHECKS[kind]:
        res = fn(host, data, exp)
        found += res.findings if isinstance(res, CheckResult) else list(res or ())  # a check may return its list
    return found


def text_of(*lines: str) -> str:
    """A capture's text from its lines (each ends with a newline, as a tool prints it)."""
    return "".join(f"{ln}\n" for ln in lines)


def parse_text(kind: str, text: str) -> dict[str, Any]:
    """``text`` read by the KIND's parser as the engine reads a capture (salvaging the lines it rejects)."""
    from ccparse import registry

    return registry.parse(kind, text, salvage=True)


def finding_keys(findings: list[Any]) -> list[tuple[str, str, str]]:
    """(check, severity, subject) of each finding."""
    return [(f.check, f.severity, f.subject) for f in findings]


def judge_text(kind: str, text: str, spec: dict[str, Any] | None = None, host: str = "n1") -> list[Any]:
    """:func:`judge_parsed` of ``text`` read by the KIND's parser as the engine reads a capture (salvaging the lines it
    rejects; the production path without the engine)."""
    return judge_parsed(kind, parse_text(kind, text), spec, host)


# --- test tiers (docs/DEVELOPING.md): a plain `pytest` is the fast tier; the podman tiers run only
# when selected by marker (`-m lab`, `-m molecule`, `-m "lab or molecule"`) or with --all-tiers
# (scripts/test.sh without --fast, hence CI) ---

SLOW_TIERS = ("lab", "molecule")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--all-tiers", action="store_true", default=False,
                     help="also run the lab and molecule tests (podman; what scripts/test.sh and CI do)")


@pytest.hookimpl(trylast=True)  # after pytest's own reordering by fixture scope
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # the tests on the fixture lab_slurm_cases right after the last other test on the lab (they change
    # it, and their fixture removes it when done), each group in its own order
    last = [item for item in items if LAB_LAST in getattr(item, "fixturenames", ())]
    if last:
        rest = [item for item in items if item not in last]
        on_lab = [i for i, item in enumerate(rest) if "lab" in getattr(item, "fixturenames", ())]
        at = on_lab[-1] + 1 if on_lab else len(rest)
        items[:] = rest[:at] + last + rest[at:]
    if config.getoption("--all-tiers") or config.getoption("markexpr"):
        return
    for item in items:
        tier = next((m for m in SLOW_TIERS if item.get_closest_marker(m)), None)
        if tier:
            item.add_marker(pytest.mark.skip(reason=f"{tier} tier: select it with -m {tier} (or --all-tiers)"))


# --- the embedded lab, brought up and provisioned once per session for the integration tests
# (CLUSTERCTL_KEEP_LAB=1 leaves it running afterwards) ---


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    os.environ["CLUSTERCTL_STATE_DIR"] = str(tmp_path_factory.mktemp("state"))
    res = labutil.cc("lab", "up")
    assert res.returncode == 0, res.stdout + res.stderr
    yield labutil.LAB
    if not os.environ.get("CLUSTERCTL_KEEP_LAB"):
        labutil.cc("lab", "down")


@pytest.fixture(scope="session")
def provisioned(lab: Path) -> Path:
    labutil.SLURM_BUILDS.append("lab: clusterctl provision")
    res = labutil.cc("provision", str(lab))
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-3000:]
    return lab


# --- the Slurm cases of molecule/slurm (munge rotation and jobs, scale-out, JuiceFS storage) on the lab's
# one provisioned cluster: no second Slurm cluster is built (#18: Slurm built once per run). They
# change the cluster (lab-c3 joins, accounting and JuiceFS are added, Redis is stopped last), so their
# module runs after every other test (pytest_collection_modifyitems below) and removes the lab when done ---

LAB_LAST = "lab_slurm_cases"  # the fixture whose tests run last


@pytest.fixture(scope="module")
def lab_slurm_cases(provisioned: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The inventory for ``labutil.run_slurm_case(case, ...)``: the provisioned lab, brought to what
    molecule/slurm's create, prepare, converge and idempotence give (the bare node lab-c3 started,
    the test NCCL environment, Redis, then the site playbook with accounting and the JuiceFS volume,
    twice: the second run must change nothing)."""
    import shutil
    import subprocess

    from clusterctl import lab as clab
    from clusterctl.inventory import load_checked

    labutil.lab_image()  # the bare image lab-c3 runs
    lab_inv, cases = labutil.lab_cases_inventories(tmp_path_factory.mktemp("slurm-cases"))
    for host in labutil.LAB_PENDING:  # a scale-out node left by an interrupted run is no longer bare
        subprocess.run(["podman", "rm", "-f", "-t", "2", clab.PREFIX + host], capture_output=True, check=False)
    bucket = Path(clab.settings(load_checked(labutil.LAB))["bucket"])  # a fresh JuiceFS `file` bucket
    for old in bucket.glob("*"):
        shutil.rmtree(old) if old.is_dir() else old.unlink()
    try:
        res = labutil.cc("lab", "up", "-i", str(lab_inv))
        assert res.returncode == 0, res.stdout + res.stderr
        labutil.playbook("slurm/prepare.yml", cases)
        labutil.playbook("slurm/converge.yml", cases)
        labutil.assert_idempotent(labutil.playbook("slurm/converge.yml", cases))
        yield cases
    finally:
        if not os.environ.get("CLUSTERCTL_KEEP_LAB"):
            labutil.cc("lab", "down", "-i", str(lab_inv))  # the whole lab, lab-c3 included


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if labutil.SLURM_BUILDS:
        verdict = "ok" if len(labutil.SLURM_BUILDS) <= labutil.SLURM_BUILDS_MAX else "FAILED: too many"
        terminalreporter.write_line(
            f"Slurm clusters built from scratch in this run: {len(labutil.SLURM_BUILDS)} "
            f"(at most {labutil.SLURM_BUILDS_MAX}, {verdict}): {'; '.join(labutil.SLURM_BUILDS)}")


def pytest_sessionfinish(session: pytest.Session) -> None:
    if len(labutil.SLURM_BUILDS) > labutil.SLURM_BUILDS_MAX:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
