"""Issue 29: the kernel log's ``NVRM: API mismatch`` (driver libraries and kernel module differ) is an event list of
its own (``api_mismatch``, with the two versions the message names), judged by its own branch: the same finding
(kernel_gpu.driver_lost, the whole node) as when it rode in ``gpu_fatal``. Versions are read off the captures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ccparse import preparsed, registry
from conftest import corpus_capture, judge_parsed

from clusterctl.analysis import checks, engine
from clusterctl.analysis.expectations import build
from clusterctl.analysis.model import Finding
from clusterctl.analysis.severity import sev as rule_sev

checks.load_all()

#: (part, file, line of the message's first line in the capture, client version, module version)
CAPTURES = [
    # 'NVRM: API mismatch: the client has the version 367.44, but' / 'NVRM: this kernel module has the version 367.35.'
    ("seen", "kernel-log/nvidiadocker182-journal-nvrm-api-mismatch-367.44-vs-367.35.txt", 2, "367.44", "367.35"),
    ("seen", "kernel-log/dalle104-dmesg-nvrm-api-mismatch-515-vs-510.txt", 1, "515.48.07", "510.73.05"),
    # "the client 'kwin_wayland' (pid 1005)" / 'has the version 595.84, but this kernel module has' /
    # 'the version 595.80.'
    ("seen", "kernel-log/nvidiaall394-dmesg-nvrm-api-mismatch-client-name-595.84-vs-595.80.txt", 2, "595.84", "595.80"),
    # one syslog line, the message's own lines joined by '#012'
    ("seen", "kernel-log/slurmappliance287-syslog-012-nvrm-api-mismatch-535-vs-530.txt", 1, "535.54.03", "530.30.02"),
    # '# NVRM: API mismatch: client version 570.133.07, kernel module version 570.124.06' (an author's comment line)
    ("round2", "kernel-log/wanpihou-dmesg-grep-nvrm-api-mismatch-570.133-vs-570.124-hash-comment.txt", 3,
     "570.133.07", "570.124.06"),
]
IDS = [c[1].split("/")[1][:40] for c in CAPTURES]
#: the message of kernel_gpu.driver_lost for a mismatch, as it was while the event rode in gpu_fatal
MISMATCH = ("NVIDIA kernel module and driver libraries differ (API mismatch): no GPU is usable by CUDA or NVML: "
            "1 line(s) ")


def judge(data: Any) -> list[Finding]:
    return [f for f in judge_parsed("kernel-log", data) if f.check == "kernel_gpu"]


@pytest.mark.parametrize(("part", "rel", "line", "client", "module"), CAPTURES, ids=IDS)
def test_api_mismatch_is_its_own_event_with_both_versions(part: str, rel: str, line: int, client: str,
                                                          module: str) -> None:
    data = registry.parse("kernel-log", corpus_capture(part, rel))
    assert data["gpu_fatal"] == []
    (ev,) = data["api_mismatch"]
    assert (ev["line"], ev["client_version"], ev["module_version"]) == (line, client, module)
    assert "API mismatch" in ev["text"]
    (f,) = judge(data)
    assert (f.severity, f.subject) == (rule_sev("kernel_gpu.driver_lost"), "n1")
    assert f.message.startswith(MISMATCH) and f.message.endswith(f"; drain, reboot into the matching module. "
                                                                 f"Last: {ev['text'][:160]!r}")


def test_a_message_without_its_continuation_has_no_module_version() -> None:
    (ev,) = registry.parse("kernel-log", "[ 7386.259769] NVRM: API mismatch: the client has the version 515.48.07, "
                                         "but\n[ 7386.300000] nvidia-uvm: Loaded the UVM driver\n")["api_mismatch"]
    assert (ev["client_version"], ev["module_version"]) == ("515.48.07", None)


def test_a_mismatch_beside_an_unnamed_gpu_fault_is_judged_apart() -> None:
    # the dalle104 message, then the driver's reset status naming no GPU: two findings, each its own message
    # (in gpu_fatal both were one finding, 'API mismatch, Reset required')
    text = corpus_capture(*CAPTURES[1][:2]) + \
        "[ 7390.000001] NVRM: nvAssertFailed: Reset required [NV_ERR_RESET_REQUIRED] (0x00000062)\n"
    data = registry.parse("kernel-log", text)
    assert [e["what"] for e in data["gpu_fatal"]] == ["Reset required"] and len(data["api_mismatch"]) == 1
    mismatch, reset = judge(data)
    assert mismatch.message.startswith(MISMATCH) and "Reset required" not in mismatch.message
    assert reset.message.startswith("NVIDIA driver lost or could not initialise GPU (not named) (Reset required;")


def test_the_pre_parsed_envelope_gives_the_same_finding(tmp_path: Path, monkeypatch: Any) -> None:
    text = corpus_capture(*CAPTURES[2][:2])
    host = tmp_path / "n1"
    host.mkdir()
    (host / "kernel-log.txt").write_text(text)
    raw = engine.analyze_dir(tmp_path, build(None), jobs=1).hosts["n1"]
    env = preparsed.envelope("kernel-log", text)
    assert env is not None and env["data"]["api_mismatch"][0]["module_version"] == "595.80"
    (host / engine.PARSED_FILE).write_text(json.dumps({"kernel-log": env}))

    def no_parse(kind: str, text: str) -> Any:
        raise AssertionError(f"{kind} parsed again: the envelope was not used")

    monkeypatch.setattr(registry, "parse", no_parse)
    pre = engine.analyze_dir(tmp_path, build(None), jobs=1).hosts["n1"]
    got = [(f.check, f.severity, f.subject, f.message) for f in pre.findings]
    assert got == [(f.check, f.severity, f.subject, f.message) for f in raw.findings]
    assert pre.status == "failed" and any(m.startswith(MISMATCH) for _c, _s, _su, m in got)
