"""KIND kernel-log: Xid events, GPUs fallen off the bus, NVLink driver errors and link flaps, parsed by
ccparse.kernel_log and judged by clusterctl.analysis.checks.kernel_log. Fixtures: real kernel log
lines from public issue threads (tests/fixtures/kernel-log, source on line 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ccparse import registry
from ccparse.common import ParseError
from conftest import LOCAL_FIXTURES

from clusterctl.analysis import checks
from clusterctl.analysis.checks.kernel_log import judge_kernel_log
from clusterctl.analysis.engine import analyze_dir
from clusterctl.analysis.expectations import build

KL = LOCAL_FIXTURES / "kernel-log"


def parse(name: str) -> dict:
    return registry.parse("kernel-log", (KL / name).read_text())


def judge(name: str, **exp: object) -> list:
    checks.load_all()
    return judge_kernel_log("n1", parse(name), build(dict(exp))).findings


def test_xid79_is_named_with_its_bus_id_and_meaning() -> None:
    d = parse("xid79-fallen-off-bus-journal.txt")
    assert [(x["pci"], x["xid"], x["time"]) for x in d["xids"]] == [("0000:2b:00", 79, "May 18 19:02:39")]
    (f,) = judge("xid79-fallen-off-bus-journal.txt")  # the "GPU 0000:2b:00.0: fallen off" line: same GPU
    assert f.severity == "critical" and f.check == "xid" and f.subject == "n1/0000:2b:00.0"
    assert "Xid 79 (GPU has fallen off the bus) on GPU PCI:0000:2b:00" in f.message


def test_fallen_off_the_bus_without_an_xid_is_critical() -> None:
    d = parse("fallen-off-bus-no-xid-dmesg.txt")
    assert d["xids"] == []
    # the bus id is on the first of the three lines of the message
    assert [(e["pci"], e["time"]) for e in d["fallen_off_bus"]] == [("0000:b3:00.0", "1843.308145")]
    (f,) = judge("fallen-off-bus-no-xid-dmesg.txt")
    assert f.severity == "critical" and f.subject == "n1/0000:b3:00.0" and "fallen off the bus" in f.message


def test_application_faults_are_notes_class_errors_warnings() -> None:
    d = parse("xid69-31-syslog.txt")
    assert [x["xid"] for x in d["xids"]] == [69] * 7 + [31]
    fs = {f.message.split(" (")[0]: f for f in judge("xid69-31-syslog.txt")}
    assert fs["Xid 69"].severity == "warning" and "7 time(s) between May 13 17:18:47 and May 13 17:18:57" \
        in fs["Xid 69"].message
    assert fs["Xid 31"].severity == "info" and "GPU memory page fault" in fs["Xid 31"].message


def test_nvlink_xids_fatal_and_nonfatal_and_contained_ecc() -> None:
    d = parse("xid-nvlink-144-149-94-kmsg.txt")
    assert [(x["pci"], x["xid"]) for x in d["xids"]] == [
        ("0019:01:00", 149), ("0000:00:00", 149), ("0018:01:00", 145), ("0000:9b:00", 94), ("0000:01:00", 144)]
    assert d["xids"][3]["pid"] == 1234 and d["xids"][3]["process"] == "python3"
    by = {(f.subject, f.message.split(" (")[0]): f for f in judge("xid-nvlink-144-149-94-kmsg.txt")
          if f.check == "xid"}
    assert by[("n1/0019:01:00.0", "Xid 149")].severity == "critical"  # "NETIR Fatal"
    assert by[("n1/0018:01:00.0", "Xid 145")].severity == "warning"  # "RLW_RXPIPE Nonfatal"
    assert by[("n1/0000:01:00.0", "Xid 144")].severity == "warning"  # "SAW_MVB Nonfatal"
    assert by[("n1/0000:9b:00.0", "Xid 94")].severity == "warning"
    assert "Contained ECC error" in by[("n1/0000:9b:00.0", "Xid 94")].message
    assert "python3" in by[("n1/0000:9b:00.0", "Xid 94")].message


def test_cleanup_xid45_lines_are_one_note_per_gpu() -> None:
    fs = judge("xid45-after-nvlink-xid145-149.txt")
    xid = [f for f in fs if f.check == "xid" and f.message.startswith("Xid 45 ")]
    # 7 lines over 4 GPUs (dc, ed, ba, 97); the lines carry no timestamps: flaps not counted, said so
    assert sorted(f.subject for f in xid) == [f"n1/0000:{b}:00.0" for b in ("97", "ba", "dc", "ed")]
    assert all(f.severity == "info" for f in xid)
    # each line names its cause ('caused by previous Xid 149' on dc:00, '... 145' on the others): NVLink errors
    # whose own lines are not in the capture, judged as such (session 13; this test said 'notes only' before)
    cause = {(f.subject, f.message.split(" (")[0]) for f in fs if f.check == "xid" and f.severity == "critical"}
    assert cause == {("n1/0000:dc:00.0", "Xid 149"), ("n1/0000:ed:00.0", "Xid 145"), ("n1/0000:ba:00.0", "Xid 145"),
                     ("n1/0000:97:00.0", "Xid 145")}
    assert any(f.check == "link_flap" and "not counted" in f.message for f in fs)


def test_nvlink_driver_error_line_is_a_warning() -> None:
    (f,) = judge("nvlink-postrx-linkmask-journal.txt")
    assert f.check == "kernel_nvlink" and f.severity == "warning" and "postRxDetLinkMask failed" in f.message


def test_mlx5_bring_up_is_no_flap_and_driver_flaps_are_counted() -> None:
    d = parse("mlx5-port-init-active-journal.txt")
    assert d["link_flaps"]["mlx5_5/1"]["flaps"] == 0  # Link INIT then ACTIVE: the port came up
    assert judge("mlx5-port-init-active-journal.txt") == []
    # the syslog-linkflap fixture read as a kernel log: the same counts as that KIND's parser
    text = (LOCAL_FIXTURES / "syslog" / "kernel-mlx5-bond-slave-flaps.txt").read_text()
    assert registry.parse("kernel-log", text)["link_flaps"] == registry.parse("syslog-linkflap", text)["interfaces"]


def test_xid_ignore_and_unknown_codes() -> None:
    assert judge("xid79-fallen-off-bus-journal.txt", xid_ignore=[79])[0].message.startswith("GPU 0000:2b:00.0")
    (f,) = judge_kernel_log("n1", registry.parse("kernel-log", "[ 5.1] NVRM: Xid (PCI:0000:01:00): 199, x\n"),
                            build({})).findings
    assert f.severity == "warning" and "not in this project's table" in f.message


def test_empty_log_is_no_event_and_prose_is_a_parse_error() -> None:
    assert registry.parse("kernel-log", "")["xids"] == []
    with pytest.raises(ParseError) as e:
        registry.parse("kernel-log", "hello\nthis is not a log\n")
    assert e.value.line == 1


def test_engine_judges_a_kernel_log_file(tmp_path: Path) -> None:
    (tmp_path / "n1").mkdir()
    (tmp_path / "n1" / "kernel-log.txt").write_text((KL / "xid79-fallen-off-bus-journal.txt").read_text())
    rep = analyze_dir(tmp_path, {"gpus_per_node": 1})
    assert rep.hosts["n1"].status == "failed"
    assert [f.check for f in rep.hosts["n1"].findings] == ["xid"]
