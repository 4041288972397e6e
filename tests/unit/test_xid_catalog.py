"""The Xid catalog file (clusterctl/analysis/checks/xid_catalog.yml) as kernel_log reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterctl.analysis.checks.kernel_log import XID_CATALOG, describe, load_catalog


def test_catalog_entries_as_the_file_states_them() -> None:
    # xid_catalog.yml: 79 "GPU has fallen off the bus", critical; 13 an application fault, info
    assert XID_CATALOG[79][:2] == ("GPU has fallen off the bus", "critical")
    assert XID_CATALOG[13][1] == "info" and XID_CATALOG[63][1] == "warning"
    assert describe(9999)[1] == "warning"  # a code not in the table


@pytest.mark.parametrize("entry", ["79: {meaning: off the bus, rule: xid.fatal, todo: reboot}",
                                   "79: {meaning: off the bus, rule: xid.reset_or_service}",
                                   "x79: {meaning: off the bus, rule: xid.reset_or_service, todo: reboot}",
                                   "79: off the bus"])
def test_a_malformed_entry_is_refused_naming_the_code(tmp_path: Path, entry: str) -> None:
    f = tmp_path / "xid.yml"
    f.write_text(entry + "\n")
    with pytest.raises(ValueError, match=r"xid.yml: Xid .*79.*: expected meaning, rule"):
        load_catalog(f)
