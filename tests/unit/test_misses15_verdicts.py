"""Session 15 (issue 29): the table layout of nvidia-smi before driver 319 (no persistence mode in the name
cell, the memory cell opening with the share used, ``Compute processes:``, a banner without a CUDA version),
written here with the tool's column widths of that layout (the pastebin copy in tests/corpus/round2 collapses
them); expected values are read off the text."""

from __future__ import annotations

from ccparse import registry

OLD_TABLE = """Thu Apr  4 23:41:38 2013
+------------------------------------------------------+
| NVIDIA-SMI 4.310.40   Driver Version: 310.40         |
|-------------------------------+----------------------+----------------------+
| GPU  Name                     | Bus-Id        Disp.  | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap| Memory-Usage         | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  Tesla C2075              | 0000:02:00.0     Off |                    0 |
| 30%   59C   P12    31W / 225W |   0%   10MB / 5375MB |      0%      Default |
+-------------------------------+----------------------+----------------------+
|   1  Tesla C2075              | 0000:03:00.0     Off |                    2 |
| 30%   48C   P12    31W / 225W |   0%    9MB / 5375MB |      0%      Default |
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| Compute processes:                                               GPU Memory |
|  GPU       PID  Process name                                     Usage      |
|=============================================================================|
|  No running compute processes found                                         |
+-----------------------------------------------------------------------------+
"""


def test_table_of_drivers_before_319_is_read() -> None:
    got = registry.parse("nvidia-smi", OLD_TABLE)
    assert (got["smi_version"], got["driver_version"], got["cuda_version"]) == ("4.310.40", "310.40", None)
    assert [(g["index"], g["name"], g["bus_id"][-7:], g["persistence_mode"]) for g in got["gpus"]] == [
        (0, "Tesla C2075", "02:00.0", None), (1, "Tesla C2075", "03:00.0", None)]
    first, second = got["gpus"]
    assert (first["memory_used_mib"], first["memory_total_mib"]) == (10, 5375)
    assert first["power_w"] == {"draw": 31, "limit": 225}
    assert (first["ecc_uncorrected_volatile"], second["ecc_uncorrected_volatile"]) == (0, 2)
