"""The juicefs role's metadata URL splitting (password kept out of the unit and the logs)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "plugins" / "filter" / "juicefs_meta.py"
_spec = importlib.util.spec_from_file_location("juicefs_meta", _PATH)
assert _spec and _spec.loader
juicefs_meta = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(juicefs_meta)
split = juicefs_meta.juicefs_meta_split


def test_redis_password_only() -> None:
    assert split("redis://:s3cret@meta1:6379/1") == {
        "scheme": "redis", "public_url": "redis://meta1:6379/1", "password": "s3cret",
        "host": "meta1", "port": 6379,
    }


def test_redis_acl_user_kept_default_port() -> None:
    r = split("rediss://jfs:pw@meta1/2")
    assert (r["public_url"], r["password"], r["port"]) == ("rediss://jfs@meta1/2", "pw", 6379)


def test_no_password() -> None:
    r = split("redis://meta1:6380/1")
    assert (r["public_url"], r["password"], r["port"]) == ("redis://meta1:6380/1", "", 6380)


def test_percent_encoded_password_is_decoded() -> None:
    r = split("mysql://jfs:p%40ss%2Fw@(db1:3306)/juicefs")
    assert r["password"] == "p@ss/w"
    assert r["public_url"] == "mysql://jfs@(db1:3306)/juicefs"
    assert (r["host"], r["port"]) == ("db1", 3306)


def test_first_of_several_hosts_and_ipv6() -> None:
    assert split("tikv://h1:2379,h2:2379/jfs")["host"] == "h1"
    r = split("postgres://u:pw@[fd00::5]:5433/jfs")
    assert (r["host"], r["port"], r["public_url"]) == ("fd00::5", 5433, "postgres://u@[fd00::5]:5433/jfs")


def test_local_engine_has_no_address() -> None:
    r = split("sqlite3:///var/lib/jfs.db")
    assert (r["host"], r["port"], r["public_url"]) == ("", 0, "sqlite3:///var/lib/jfs.db")


@pytest.mark.parametrize("bad", ["", "meta1:6379", None])
def test_rejects_non_urls(bad: object) -> None:
    with pytest.raises(ValueError):
        split(bad)
