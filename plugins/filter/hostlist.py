"""Slurm hostlist filters: compress host names into ``node[001-064]`` form and expand them back.

``hostlist_compress`` takes a list of names (or a comma-separated string) and returns one Slurm
hostlist string; ``hostlist_expand`` takes a hostlist string (or a list of them) and returns the
list of names. Both follow Slurm's rules: the last run of digits in a name is the index, a
leading zero fixes the width (``node001``), and a bracket holds comma-separated numbers and
``lo-hi`` ranges. Expansion also takes several bracket groups in one name
(``r[1-2]n[01-02]`` is the cartesian product, in Slurm's order); it is
``ccparse.hostlist``'s, the one the ``sinfo`` parser uses.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

try:  # inside Ansible: the collection's own module_utils, by FQCN
    from ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse import hostlist as _hl
except ImportError:  # plain Python (tests, the clusterctl package): the same folder, as ``ccparse``
    try:
        from ccparse import hostlist as _hl
    except ImportError:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "module_utils"))
        from ccparse import hostlist as _hl

try:
    from ansible.errors import AnsibleFilterError
except ImportError:  # pragma: no cover - plain Python use without ansible-core

    class AnsibleFilterError(Exception):  # type: ignore[no-redef]
        """Stand-in when ansible-core is not importable."""


_NAME_RE = re.compile(r"^(?P<prefix>.*?)(?P<digits>\d+)(?P<suffix>\D*)$")


def _as_names(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return split_hostlist(value)
    if isinstance(value, Iterable):
        out: list[str] = []
        for item in value:
            if not isinstance(item, str):
                raise AnsibleFilterError(f"hostlist: host name must be a string, got {item!r}")
            out.extend(split_hostlist(item))
        return out
    raise AnsibleFilterError(f"hostlist: expected a list or string, got {type(value).__name__}")


def split_hostlist(text: str) -> list[str]:
    """Split on commas that are not inside brackets: ``a[1,2],b`` -> ``['a[1,2]', 'b']``."""
    try:
        return _hl.split_hostlist(text)
    except _hl.HostlistError as exc:
        raise AnsibleFilterError(f"hostlist: {exc}") from None


def hostlist_expand(value: Any) -> list[str]:
    """Expand Slurm hostlist expression(s) into the list of host names, order kept, no duplicates."""
    seen: dict[str, None] = {}
    for expr in _as_names(value):
        try:
            names = _hl.expand_one(expr)
        except _hl.HostlistError as exc:
            raise AnsibleFilterError(f"hostlist: {exc}") from None
        for name in names:
            seen.setdefault(name, None)
            if len(seen) > _hl.MAX_EXPAND:
                raise AnsibleFilterError("hostlist: expansion is too large")
    return list(seen)


def _fmt_runs(nums: list[tuple[int, str]]) -> list[str]:
    """Turn sorted (value, text) pairs into ``lo-hi`` / single items."""
    runs: list[str] = []
    start = prev = nums[0]
    for cur in nums[1:]:
        if cur[0] == prev[0] + 1:
            prev = cur
            continue
        runs.append(start[1] if start == prev else f"{start[1]}-{prev[1]}")
        start = prev = cur
    runs.append(start[1] if start == prev else f"{start[1]}-{prev[1]}")
    return runs


def hostlist_compress(value: Any) -> str:
    """Compress host names into one Slurm hostlist string, e.g. ``node[001-003,007],login1``.

    Names are grouped by the text around their last number and by zero-padded width; groups
    come out sorted by prefix, numbers sorted numerically; duplicates are dropped.
    """
    names = hostlist_expand(value)
    plain: list[str] = []
    groups: dict[tuple[str, str, int], dict[int, str]] = {}
    for name in names:
        m = _NAME_RE.match(name)
        if m is None:
            plain.append(name)
            continue
        digits = m.group("digits")
        width = len(digits) if digits.startswith("0") and len(digits) > 1 else 0
        groups.setdefault((m.group("prefix"), m.group("suffix"), width), {})[int(digits)] = digits
    # An unpadded number as wide as a padded group belongs to it (node09 + node10 -> node[09-10]).
    for (prefix, suffix, width), nums in list(groups.items()):
        if width:
            continue
        for n, digits in list(nums.items()):
            padded = groups.get((prefix, suffix, len(digits)))
            if padded is not None:
                padded[n] = digits
                del nums[n]
        if not nums:
            del groups[(prefix, suffix, width)]
    out: list[str] = []
    entries: list[tuple[str, str]] = [(p, p) for p in plain]
    for (prefix, suffix, _width), nums in groups.items():
        pairs = sorted(nums.items())
        if len(pairs) == 1:
            entries.append((prefix + suffix, f"{prefix}{pairs[0][1]}{suffix}"))
        else:
            entries.append((prefix + suffix, f"{prefix}[{','.join(_fmt_runs(pairs))}]{suffix}"))
    for _key, text in sorted(entries, key=lambda e: (e[0], _natural(e[1]))):
        out.append(text)
    return ",".join(out)


def _natural(text: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


class FilterModule:
    """Slurm hostlist filters."""

    def filters(self) -> dict[str, Any]:
        return {"hostlist_compress": hostlist_compress, "hostlist_expand": hostlist_expand}
