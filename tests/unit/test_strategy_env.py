"""CLUSTERCTL_STRATEGY: the opt-in Mitogen strategy of every Ansible run (clusterctl.collection)."""

from __future__ import annotations

import importlib.util

import pytest

from clusterctl import collection
from clusterctl.errors import EXIT_BAD_INPUT


def test_unset_empty_and_linear_add_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    for value in (None, "", "linear", " Linear "):
        if value is None:
            monkeypatch.delenv(collection.STRATEGY_ENV, raising=False)
        else:
            monkeypatch.setenv(collection.STRATEGY_ENV, value)
        env = collection.ansible_env()
        assert "ANSIBLE_STRATEGY" not in env and "ANSIBLE_COLLECTIONS_PATH" in env


def test_unknown_strategy_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(collection.STRATEGY_ENV, "free")
    with pytest.raises(collection.StrategyError, match="CLUSTERCTL_STRATEGY='free'") as exc:
        collection.ansible_env()
    assert exc.value.exit_code == EXIT_BAD_INPUT


@pytest.mark.skipif(importlib.util.find_spec("ansible_mitogen") is None, reason="extra clusterctl[mitogen] absent")
def test_mitogen_names_its_strategy_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(collection.STRATEGY_ENV, "mitogen")
    env = collection.ansible_env()
    assert env["ANSIBLE_STRATEGY"] == "mitogen_linear"
    assert env["ANSIBLE_STRATEGY_PLUGINS"].endswith("ansible_mitogen/plugins/strategy")
