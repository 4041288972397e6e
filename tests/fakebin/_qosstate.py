"""State file shared by the fake mlnx_qos and dcb (tests only: there is no RoCE hardware here).

The file is ``$SIMFABRIC_QOS_STATE`` or ``<this dir>/../sys/qos-state.json`` (the layout the fabric
Molecule scenario copies), written by tests/simfabric.py; each call is appended to ``<file>.log``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def path() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("SIMFABRIC_QOS_STATE") or os.path.join(here, "..", "sys", "qos-state.json")


def load() -> dict[str, Any]:
    try:
        with open(path(), encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        return {}


def save(state: dict[str, Any]) -> None:
    with open(path(), "w", encoding="utf-8") as fh:
        json.dump(state, fh, indent=1, sort_keys=True)


def log(argv: list[str]) -> None:
    with open(path() + ".log", "a", encoding="utf-8") as fh:
        fh.write(" ".join(argv) + "\n")


def iface(state: dict[str, Any], name: str) -> dict[str, Any]:
    if name not in state:
        print(f'Cannot find device "{name}"', file=sys.stderr)
        sys.exit(1)
    st = state[name]
    st.setdefault("trust", "pcp")
    st.setdefault("pfc", [0] * 8)
    # mlx5's default dscp2prio: DSCP d -> priority d >> 3.
    st.setdefault("dscp2prio", {str(d): d >> 3 for d in range(64)})
    st.setdefault("dcb_app", [])
    return st
