"""Shared pytest fixtures."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import labutil
import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("CLUSTERCTL_SHARED", REPO.parent / "shared"))
FIXTURES = SHARED / "fixtures"
LOCAL_FIXTURES = REPO / "tests" / "fixtures"


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The real captured outputs in ../shared/fixtures (never edited)."""
    if not FIXTURES.is_dir():
        pytest.fail(f"shared fixtures not found at {FIXTURES} (set CLUSTERCTL_SHARED)")
    return FIXTURES


def read_fixture(rel: str) -> str:
    """Text of ../shared/fixtures/<rel>, or of tests/fixtures/<rel> for fixtures added here."""
    for base in (FIXTURES, LOCAL_FIXTURES):
        p = base / rel
        if p.is_file():
            return p.read_text()
    raise FileNotFoundError(rel)


# --- test tiers (docs/DEVELOPING.md): a plain `pytest` is the fast tier; the podman tiers run only
# when selected by marker (`-m lab`, `-m molecule`, `-m "lab or molecule"`) or with --all-tiers
# (scripts/test.sh without --fast, hence CI) ---

SLOW_TIERS = ("lab", "molecule")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--all-tiers", action="store_true", default=False,
                     help="also run the lab and molecule tests (podman; what scripts/test.sh and CI do)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
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


# --- the one Molecule Slurm cluster of a run (molecule/slurm/molecule.yml): created, prepared,
# converged and checked for idempotence once; the slurm, slurm_scaleout and storage cases
# (tests/integration/test_molecule_slurm.py) run on it in turn. Module scope: it is destroyed as soon
# as that module is done (not left running beside the lab), and a second module using it would build
# a second cluster, which the count below turns into a failed run ---


def _molecule_destroy(env: dict[str, str]) -> None:
    try:
        labutil.molecule("destroy", "slurm", 600, env)
    except AssertionError as exc:  # a failed clean-up must not hide the tests' own result
        print(f"molecule destroy -s slurm: {exc}")


@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment for ``labutil.molecule(step, "slurm", ...)`` on the converged shared cluster."""
    env = {"CC_STOR_BUCKET": str(tmp_path_factory.mktemp("jfs") / "bucket")}  # the JuiceFS `file` bucket
    labutil.molecule("destroy", "slurm", 600, env)  # what an interrupted run left behind
    labutil.SLURM_BUILDS.append("molecule slurm (shared by the slurm, slurm_scaleout, storage cases)")
    try:
        for step in ("create", "prepare", "converge", "idempotence"):
            labutil.molecule(step, "slurm", 1800, env)
        yield env
    finally:
        if not os.environ.get("CLUSTERCTL_KEEP_LAB"):
            _molecule_destroy(env)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if labutil.SLURM_BUILDS:
        verdict = "ok" if len(labutil.SLURM_BUILDS) <= labutil.SLURM_BUILDS_MAX else "FAILED: too many"
        terminalreporter.write_line(
            f"Slurm clusters built from scratch in this run: {len(labutil.SLURM_BUILDS)} "
            f"(at most {labutil.SLURM_BUILDS_MAX}, {verdict}): {'; '.join(labutil.SLURM_BUILDS)}")


def pytest_sessionfinish(session: pytest.Session) -> None:
    if len(labutil.SLURM_BUILDS) > labutil.SLURM_BUILDS_MAX:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
