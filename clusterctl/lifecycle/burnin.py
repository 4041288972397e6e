"""The burn-in gate (issue 25, item 5): pure decisions over hardware identities.

A node's identity is what makes it the machine that was accepted: its GPUs (UUIDs and serials), its
RDMA NICs (node GUIDs), the kernel release and the NVIDIA driver version, as the node check reports
them (``clusterctl-node-check --identity``, :func:`clusterctl.lifecycle.nodecheck.identity`). The loop
keeps an acceptance record per node and identity (``acceptance.json`` in the state folder):

- the first time the loop sees the cluster (no record at all) it adopts every node's identity as it is
  (recorded ``adopted``): enabling the gate never drains a running cluster;
- a node that joins (no record for it) or returns with an identity not accepted for it is drained
  ``clusterctl: burn-in: <what changed>`` (never a node someone else drained: it is left, and gated
  once it is back);
- a node drained for burn-in is verified (the full checks of :data:`Verifier`); when they pass its
  identity is accepted and it is resumed; when they fail it stays drained with the evidence. That holds
  for a node whose identity is already accepted too (drained ``clusterctl: burn-in`` by hand, or back to
  an accepted kernel while in burn-in): it is verified, never left drained for ever.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from clusterctl.lifecycle.core import BURN_IN_PREFIX, WAIT, Action, NodeView, one_line, share_limit

BURN_IN_DRAIN, BURN_IN_VERIFY, ADOPT = "burn_in_drain", "burn_in_verify", "adopt"
FIELDS = ("gpus", "nics", "kernel", "driver")


def fingerprint(identity: Mapping[str, Any]) -> str:
    """A stable hash of the identity fields (order of GPUs/NICs does not matter)."""
    norm = {k: sorted(identity.get(k) or []) if k in ("gpus", "nics") else str(identity.get(k) or "")
            for k in FIELDS}
    return hashlib.sha256(json.dumps(norm, sort_keys=True).encode()).hexdigest()[:16]


def changes(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> str:
    """What differs, in words (``new node`` when there is no earlier identity)."""
    if not old:
        return "new node"
    out = []
    for k in FIELDS:
        a, b = old.get(k), new.get(k)
        if k in ("gpus", "nics"):
            gone, came = sorted(set(a or []) - set(b or [])), sorted(set(b or []) - set(a or []))
            if gone or came:
                out.append(f"{k} -{len(gone)} +{len(came)}")
        elif str(a or "") != str(b or ""):
            out.append(f"{k} {a or '?'} -> {b or '?'}")
    return ", ".join(out) or "identity changed"


def accepted(acceptance: Mapping[str, Mapping[str, Any]], node: str, identity: Mapping[str, Any]) -> bool:
    return fingerprint(identity) in (acceptance.get(node) or {})


def last_accepted(acceptance: Mapping[str, Mapping[str, Any]], node: str) -> Mapping[str, Any] | None:
    recs = list((acceptance.get(node) or {}).values())
    return max(recs, key=lambda r: float(r.get("time", 0))).get("identity") if recs else None


def decide(views: Iterable[NodeView], identities: Mapping[str, Mapping[str, Any]],
           acceptance: Mapping[str, Mapping[str, Any]], share: float = 1.0) -> list[Action]:
    """Burn-in actions for the nodes whose identity was read this run (``identities``). Nodes in service
    are drained for burn-in only while at most ``floor(share x nodes)`` of each of their partitions are
    in burn-in (a kernel rolled out to every node passes the gate a share at a time)."""
    by_name = {v.name: v for v in views}
    sizes: dict[str, int] = {}
    used: dict[str, int] = {}
    for nv in by_name.values():
        for p in nv.partitions:
            sizes[p] = sizes.get(p, 0) + 1
            if nv.out_of_service and nv.reason.startswith(BURN_IN_PREFIX):
                used[p] = used.get(p, 0) + 1
    if not acceptance:  # the first run adopts the nodes as they are, but verifies a node already held for burn-in
        return [Action(BURN_IN_VERIFY, n, why="drained for burn-in before the gate's first run")
                if by_name[n].out_of_service and by_name[n].reason.startswith(BURN_IN_PREFIX)
                else Action(ADOPT, n, why="first run of the gate: the identity as it is")
                for n in sorted(identities) if n in by_name]
    out = []
    for name in sorted(identities):
        ident = identities[name]
        if name not in by_name:
            continue
        v = by_name[name]
        held = v.out_of_service and v.reason.startswith(BURN_IN_PREFIX)
        if accepted(acceptance, name, ident):
            if held:  # e.g. back to an accepted kernel while in burn-in: verified, not left drained for ever
                out.append(Action(BURN_IN_VERIFY, name, why="an accepted identity, drained for burn-in"))
            continue
        what = changes(last_accepted(acceptance, name), ident)
        if held:
            out.append(Action(BURN_IN_VERIFY, name, why=what))
        elif v.out_of_service:
            continue  # drained or down for another reason: left as it is, gated once back in service
        elif any(used.get(p, 0) + 1 > share_limit(sizes[p], share) for p in v.partitions):
            out.append(Action(WAIT, name, why=f"burn-in ({what}) waits: share limit"))
        else:
            for p in v.partitions:
                used[p] = used.get(p, 0) + 1
            out.append(Action(BURN_IN_DRAIN, name, one_line(f"{BURN_IN_PREFIX}: {what}"), why=what))
    return out


def accept(acceptance: dict[str, dict[str, Any]], node: str, identity: Mapping[str, Any], now: float,
           how: str, evidence: str = "") -> None:
    """Record ``identity`` as accepted for ``node`` (``how``: adopted, or burn-in passed)."""
    acceptance.setdefault(node, {})[fingerprint(identity)] = {
        "identity": dict(identity), "time": now, "how": how, "evidence": evidence}
