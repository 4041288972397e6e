"""Issue 27 (5): what a released collection has. A LICENSE file with the license galaxy.yml and
pyproject.toml declare; changelog fragments that antsibull-changelog accepts and turns into
release notes (without touching the hand-written CHANGELOG.md)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
ANTSIBULL = Path(sys.executable).parent / "antsibull-changelog"


def test_one_license_declared_everywhere_and_its_text_shipped() -> None:
    galaxy = yaml.safe_load((REPO / "galaxy.yml").read_text())
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert galaxy["license"] == [pyproject["license"]] == ["Apache-2.0"]
    text = (REPO / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "LICENSE" not in galaxy["build_ignore"]


def test_antsibull_changelog_lint_passes() -> None:
    r = subprocess.run([str(ANTSIBULL), "lint"], cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0 and not r.stdout.strip(), r.stdout + r.stderr
    assert list((REPO / "changelogs" / "fragments").glob("*.yml")), "no fragment at all"


def test_a_release_turns_the_fragments_into_release_notes(tmp_path: Path) -> None:
    shutil.copy(REPO / "galaxy.yml", tmp_path)
    shutil.copytree(REPO / "changelogs", tmp_path / "changelogs")
    (tmp_path / "CHANGELOG.md").write_text("hand-written\n")
    r = subprocess.run([str(ANTSIBULL), "release", "--version", "0.1.0", "--date", "2026-12-04"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    notes = (tmp_path / "changelogs" / "RELEASE-NOTES.md").read_text()
    assert "## v0\\.1\\.0" in notes and "execution\\-environment\\.yml" in notes
    assert (tmp_path / "CHANGELOG.md").read_text() == "hand-written\n"
    assert not list((tmp_path / "changelogs" / "fragments").glob("*.yml"))  # consumed by the release
