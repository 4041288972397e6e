"""Session 17 (issue 29): the rest misses of blind batches 29-31 that a general rule fixes; expected values
are read off the text of each capture."""

from __future__ import annotations

from conftest import judge_text


def test_a_probe_failure_in_the_driver_cores_kernel_6_words_is_a_device_the_driver_did_not_bind() -> None:
    # round2/kernel-log/cosmic3411-...: the open module refuses a pre-GSP GPU, the driver core of kernel 6.18
    # says so in its own words (drivers/base/dd.c: 'probe with driver %s failed with error %d')
    text = ("[   60.058486] NVRM: The NVIDIA GPU 0000:2c:00.0 (PCI ID: 10de:1d16)\n"
            "               NVRM: installed in this system is not supported by open\n"
            "[   60.063350] nvidia 0000:2c:00.0: probe with driver nvidia failed with error -1\n")
    found = [(f.severity, f.subject) for f in judge_text("kernel-log", text) if f.check == "kernel_device"]
    assert found == [("critical", "n1/0000:2c:00.0")]
    # the older words stay read
    old = "[    5.1] mlx5_core: probe of 0000:01:00.0 failed with error -22\n"
    assert [f.subject for f in judge_text("kernel-log", old) if f.check == "kernel_device"] == ["n1/0000:01:00.0"]
