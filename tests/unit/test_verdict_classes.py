"""Issue 29 classes (and issue 28 class 8), each on a real capture: the reading layer (launcher
prefixes, nested quoting), KIND detection by content, coverage and "cannot judge", kernel messages
without an Xid, and names escaped on the terminal and in HTML. Expected values come from reading the
captures (quoted in the comments)."""

from __future__ import annotations

import json
from pathlib import Path

from ccparse import registry
from ccparse.capture import clean_capture
from typer.testing import CliRunner

from clusterctl.analysis import engine
from clusterctl.cli import app

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "tests" / "fixtures" / "labelled"
KLOG = REPO / "tests" / "fixtures" / "kernel-log"


def one_host(tmp_path: Path, files: dict[str, bytes], host: str = "n1") -> Path:
    d = tmp_path / "ev" / host
    d.mkdir(parents=True)
    for name, data in files.items():
        (d / name).write_bytes(data)
    return tmp_path / "ev"


def analyze(ev: Path, *args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, ["analyze", str(ev), *args])
    return res.exit_code, res.output


# --- launcher / parallel-shell prefixes ----------------------------------------------------------


def test_pdsh_and_srun_prefixes_read_like_the_bare_capture() -> None:
    # ibstat of the B300 node: 'CA 'mlx5_0'' ... 'State: Down' (7 CX-8 HCAs down)
    text = (LAB / "set2/ibstat/b300-xe9780-7x-cx8-down-disabled-4x-cx7-active-rate100.txt").read_text()
    src, body = text.split("\n", 1)
    bare = registry.parse("ibstat", text)
    # the capture's own prompt names its host ('[root@dell ...]#'); a parallel shell's prefix names its own
    assert bare.pop("named_host") == {"host": "dell", "by": "shell prompt"}
    for prefix, host in (("gpu-b300-07: ", "gpu-b300-07"), ("[gpu-b300-07] ", "gpu-b300-07"), ("0: ", "0")):
        pasted = src + "\n" + "".join(prefix + ln + "\n" for ln in body.splitlines())
        got = registry.parse("ibstat", pasted)
        named = got.pop("named_host")
        assert got == bare, prefix
        assert clean_capture(pasted, "ibstat").hosts == [host]
        assert named == ({"host": "dell", "by": "shell prompt"} if host == "0" else  # a rank names no host
                         {"host": host, "by": "line prefix"}), prefix


def test_open_mpi_tag_output_prefix_and_elisions(tmp_path: Path) -> None:
    # '[1,0]<stdout>:' on every line, '...' elisions; NET/Socket and busbw ~2.0 GB/s at 1 GiB
    text = (LAB / "set2/nccl-tests/eks-2node-1gpu-each-net-socket-busbw-2GBps.txt").read_bytes()
    rep = engine.analyze_dir(one_host(tmp_path, {"nccl-tests.txt": text}), None, jobs=1).hosts["n1"]
    assert [(f.check, f.severity) for f in rep.findings] == [("nccl_transport", "warning")]
    assert "NET/Socket" in rep.findings[0].message


def test_ip_link_header_lines_are_not_an_srun_prefix() -> None:
    # '1: lo: <LOOPBACK,...>' '2: eno1: ...': distinct indexes, one line each
    text = (REPO / "tests/corpus/network/ip-link/trinity-187-headers-mtu1500.txt").read_text()
    assert clean_capture(text, "ip-link").hosts == []


# --- KIND detection, coverage, cannot judge, no evidence ----------------------------------------


def test_kind_recognised_from_content_and_said(tmp_path: Path) -> None:
    # a 570 driver's multi-line 'fallen off the bus' with no Xid, saved as dmesg.txt
    from ccparse.detect import detect_kind

    text = (LAB / "set2/syslog/dmesg-gpu-fallen-off-bus-no-xid-multiline-570.txt").read_bytes()
    assert detect_kind(text.decode()) == "kernel-log"
    rep = engine.analyze_dir(one_host(tmp_path, {"dmesg.txt": text}), None, jobs=1).hosts["n1"]
    assert rep.status == "failed"
    assert any("dmesg.txt: read as KIND kernel-log" in n.message for n in rep.notes)


def test_every_labelled_capture_is_recognised_as_its_kind() -> None:
    from ccparse.detect import detect_kind

    alias = {"syslog": "kernel-log"}
    for set_name in ("set1", "set2"):
        for line in (LAB / set_name / "manifest.tsv").read_text().splitlines()[1:]:
            rel, kind = line.split("\t")[:2]
            got, want = detect_kind((LAB / set_name / rel).read_text()), alias.get(kind, kind)
            # an all_reduce_perf run with NCCL_DEBUG=INFO is both: the nccl-tests parser reads its NCCL lines too
            assert got == want or (want, got) == ("nccl-log", "nccl-tests"), rel


def test_unknown_kind_or_empty_file_is_no_evidence_exit_3(tmp_path: Path) -> None:
    ev = one_host(tmp_path, {"frobnicate.txt": b"hello\n"})
    one_host(tmp_path, {"ibstat.txt": b""}, host="n2")
    code, out = analyze(ev, "--json")
    doc = json.loads(out)["result"]
    assert {h: v["status"] for h, v in doc["hosts"].items()} == {"n1": "no evidence", "n2": "no evidence"}
    assert code == 3


def test_unreadable_evidence_is_cannot_judge_not_degraded(tmp_path: Path) -> None:
    # an ibstat file holding nvidia-smi CSV: the ibstat parser cannot read it
    text = (LAB / "set2/nvidia-smi-query/b300-xe9780-seven-of-eight-gpus-listed.txt").read_bytes()
    ev = one_host(tmp_path, {"ibstat.txt": text})
    rep = engine.analyze_dir(ev, None, jobs=1).hosts["n1"]
    assert rep.findings == [] and rep.status == "cannot judge"
    assert any(n.check == "coverage" and "not read (" in n.message for n in rep.notes)
    assert analyze(ev)[0] == 5


def test_cannot_judge_needs_inventory_key_exit_5(tmp_path: Path) -> None:
    # --query-gpu=driver_version,name of two L40S (PCIe cards, no board count), no health field
    csv = (LAB / "set2/nvidia-smi-query/b300-xe9780-seven-of-eight-gpus-listed.txt").read_text()
    src = csv.split("\n", 1)[0]
    text = src + "\ndriver_version, name\n570.148.08, NVIDIA L40S\n570.148.08, NVIDIA L40S\n"
    ev = one_host(tmp_path, {"nvidia-smi-query.txt": text.encode()})
    code, out = analyze(ev, "--json")
    doc = json.loads(out)["result"]
    assert doc["hosts"]["n1"]["status"] == "cannot judge"
    assert doc["hosts"]["n1"]["cannot_judge"] == "needs gpus_per_node"
    assert code == 5


def test_cut_nvidia_smi_q_is_judged_and_the_cut_recorded(tmp_path: Path) -> None:
    # -d ECC,ROW_REMAPPER -i 52:00.0: 'Attached GPUs : 8', one GPU block, 'Pending : Yes'
    text = (LAB / "set2/nvidia-smi-q/h100-ecc-row-remapper-pending-yes-ecc-mode-unknown-error.txt").read_bytes()
    rep = engine.analyze_dir(one_host(tmp_path, {"nvidia-smi-q.txt": text}), None, jobs=1).hosts["n1"]
    assert {(f.check, f.severity) for f in rep.findings} == {("gpu_row_remap", "critical"),
                                                             ("gpu_field_error", "critical")}
    assert any("read 1 of 8 GPU blocks" in n.message for n in rep.notes)


# --- kernel messages without an Xid --------------------------------------------------------------


def test_aer_fatal_without_xid_is_failed(tmp_path: Path) -> None:
    # 'pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received' and no Xid line
    text = (KLOG / "syslog-aer-uncorrected-fatal-completion-timeout-no-xid.txt").read_bytes()
    rep = engine.analyze_dir(one_host(tmp_path, {"kernel-log.txt": text}), None, jobs=1).hosts["n1"]
    assert [(f.check, f.severity, f.subject) for f in rep.findings] == [
        ("kernel_pcie", "critical", "n1/0000:00:01.0")]


def test_pcie_bandwidth_limited_x8_of_x16_is_degraded(tmp_path: Path) -> None:
    # '... limited by 8.0 GT/s PCIe x8 link at 0000:00:01.0 (capable of ... x16 link)', quoted '>> '
    text = (KLOG / "dmesg-pcie-bandwidth-limited-x8-of-x16-quoted.txt").read_bytes()
    rep = engine.analyze_dir(one_host(tmp_path, {"dmesg.log": text}), None, jobs=1).hosts["n1"]
    assert [(f.check, f.severity, f.subject) for f in rep.findings] == [
        ("kernel_pcie", "warning", "n1/0000:01:00.0")]


# --- names printed escaped (issue 28 class 8) ----------------------------------------------------


def test_host_and_file_names_escaped_in_terminal_and_html(tmp_path: Path) -> None:
    evil = "n1\x1b[2J\x1b]0;pwned\x07"
    text = (LAB / "set2/syslog/dmesg-gpu-fallen-off-bus-no-xid-multiline-570.txt").read_bytes()
    ev = one_host(tmp_path, {"kernel-log.txt": text}, host=evil)
    html = tmp_path / "r.html"
    code, out = analyze(ev, "--html", str(html))
    assert code == 3
    assert "\x1b" not in out and "\x07" not in out and "\\x1b" in out
    page = html.read_text()
    assert "\x1b" not in page and "\\x1b" in page


# --- Slurm drain reasons ------------------------------------------------------------------------


def test_drain_reason_naming_lost_gpu_is_failed_admin_drain_degraded(tmp_path: Path) -> None:
    # 'State=IDLE+DRAIN', 'Reason=gres/gpu count reported lower than configured (1 < 2)'
    lost = (REPO / "tests/fixtures/scontrol-node/show-node-idle-drain-gres-gpu-count-lower-1-of-2.txt").read_bytes()
    rep = engine.analyze_dir(one_host(tmp_path, {"scontrol-node.txt": lost}), None, jobs=1).hosts["n1"]
    assert [(f.check, f.severity, f.subject) for f in rep.findings] == [("slurm_node_state", "critical", "node01")]
    # 'Reason=node-switch [root@2018-11-23T12:49:03]': an admin's drain, runs nothing new but nothing is lost
    admin = (LAB / "set1/scontrol/show-node-8gpu-idle-drain-slurm17.11-twcc.txt").read_bytes()
    rep2 = engine.analyze_dir(one_host(tmp_path / "b", {"scontrol-node.txt": admin}), None, jobs=1).hosts["n1"]
    assert {f.severity for f in rep2.findings} == {"warning"}
