"""Shared pytest fixtures."""

from __future__ import annotations

import os
from pathlib import Path

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
