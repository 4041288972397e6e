"""Session 27 (issue 29): NVML's all-links-inactive answer for one selected GPU, lspci link fields condensed onto
the address line, and the soft-lockup watchdog judged.

Expected values are read off the text of each capture (quoted here or read from tests/corpus, with its source); a
derived form is what the named tool prints for that case."""

from __future__ import annotations

from conftest import corpus_capture, judge_text, parse_text
from conftest import finding_keys as _checks
from conftest import text_of as _text

# --- nvidia-smi nvlink -s -i 0: NVML's answer without a 'GPU n:' line above it ---

# round2/nvidia-smi-nvlink/ocrserver-devlog034-...-status-i0-nvml-all-links-inactive-dollar-prompt.txt
# (jikhanjung/ocrserver devlog 034: two Quadro RTX 8000 whose NVLink bridge was seated badly), its first two lines
DARK = _text("$ nvidia-smi nvlink --status -i 0",
             "NVML: Unable to retrieve Nvlink information as all links are inActive")


def test_nvml_all_inactive_alone_is_one_gpu_with_no_active_link() -> None:
    (g,) = parse_text("nvidia-smi-nvlink", DARK)["gpus"]
    assert (g["index"], g["all_links_inactive"], g["active_links"]) == (None, True, 0)


def test_all_links_inactive_where_links_are_expected_fails_the_node() -> None:
    findings = judge_text("nvidia-smi-nvlink", DARK, {"nvlink_links_per_gpu": 2})
    assert _checks(findings) == [("gpu_nvlink", "critical", "n1")]
    assert "the GPU shown: all NVLink links inactive" in findings[0].message


def test_all_links_inactive_with_no_expectation_is_information() -> None:
    # a PCIe card without a bridge prints the same line: no NVLink here, said, not a fault
    assert [sev for _c, sev, _s in _checks(judge_text("nvidia-smi-nvlink", DARK))] == ["info"]


# --- lspci: LnkCap and LnkSta condensed onto the device's address line ---

CONDENSED = "lspci/nvforum367853-asus-gx10-cx7-four-functions-lnkcap-lnksta-two-x2-downgraded-condensed.txt"


def test_condensed_link_fields_are_read_per_address() -> None:
    # NVIDIA developer forum 367853 (ASUS Ascent GX10): four ConnectX-7 functions, one line each
    devices = parse_text("lspci", corpus_capture("round2", CONDENSED))["devices"]
    assert [(d["slot"], d["lnkcap"]["width"], d["lnksta"]["width"], d["lnksta"]["gen"]) for d in devices] == [
        ("0000:01:00.0", 4, 4, 5), ("0000:01:00.1", 4, 4, 5), ("0002:01:00.0", 4, 2, 5), ("0002:01:00.1", 4, 2, 5)]


def test_condensed_links_at_half_width_are_degraded_per_function() -> None:
    assert _checks(judge_text("lspci", corpus_capture("round2", CONDENSED))) == [
        ("pcie_link", "warning", "n1/0002:01:00.0"), ("pcie_link", "warning", "n1/0002:01:00.1")]


def test_a_condensed_line_in_the_other_order_reads_the_same() -> None:
    text = _text("0002:01:00.0 LnkSta: Speed 32GT/s, Width x2 (downgraded) LnkCap: Speed 32GT/s, Width x4")
    (d,) = parse_text("lspci", text)["devices"]
    assert (d["lnkcap"]["width"], d["lnksta"]["width"], d["lnksta"]["width_downgraded"]) == (4, 2, True)


# --- kernel log: the soft-lockup watchdog ---

# round2/kernel-log/nvtrust19-guest-console-...-soft-lockup-cpu40-cut.txt (NVIDIA/nvtrust#19, an H100 guest's console)
LOCKUP = _text("[  210.094574] watchdog: BUG: soft lockup - CPU#40 stuck for 26s! [python3:510]",
               "[  210.095526] Modules linked in: nvidia_uvm(OE) nvidia_modeset(OE) video wmi nvidia(OE) ecdsa_generic")


def test_a_soft_lockup_is_read_with_its_cpu_time_and_task() -> None:
    (ev,) = parse_text("kernel-log", LOCKUP)["soft_lockups"]
    assert (ev["cpu"], ev["seconds"], ev["task"], ev["pid"]) == (40, 26, "python3", 510)


def test_a_soft_lockup_degrades_the_node() -> None:
    findings = judge_text("kernel-log", LOCKUP)
    assert _checks(findings) == [("kernel_task", "warning", "n1")]
    assert "CPU#40" in findings[0].message and "python3:510" in findings[0].message


def test_an_older_kernels_soft_lockup_line_without_the_watchdog_prefix() -> None:
    # kernels before 4.x print 'BUG: soft lockup - CPU#0 stuck for 67s! [swapper:0]' without 'watchdog: '
    text = _text("[ 1234.567890] BUG: soft lockup - CPU#0 stuck for 67s! [swapper:0]")
    (ev,) = parse_text("kernel-log", text)["soft_lockups"]
    assert (ev["cpu"], ev["seconds"], ev["task"]) == (0, 67, "swapper")


# --- NCCL logs: a rank killed by SIGBUS, older PyTorch's watchdog lines, the interface of a failed socket call ---

# round2/nccl-log/deepspeed2638-docker-8gpu-2.14.3-...-caught-signal-7-bus-error-nonexistent-physical-address-cut.txt
# (deepspeedai/DeepSpeed#2638, an eight-GPU job in a Docker container)
SIGBUS = _text("cf0b62962198:378934:382525 [2] NCCL INFO Connected all trees",
               "cf0b62962198:378934:382525 [2] NCCL INFO 24 coll channels, 32 p2p channels, 32 p2p channels per peer",
               "[cf0b62962198:378934:0:382579] Caught signal 7 (Bus error: nonexistent physical address)")


def test_a_rank_killed_by_sigbus_fails_the_node() -> None:
    findings = judge_text("nccl-log", SIGBUS)
    assert _checks(findings) == [("nccl_error", "critical", "n1")]
    assert "SIGBUS" in findings[0].message and "/dev/shm" in findings[0].message


def test_a_segfault_is_not_read_as_a_bus_error() -> None:
    # signal 11 is the program's own fault: no shared-memory verdict on the node
    text = SIGBUS.replace("Caught signal 7 (Bus error: nonexistent physical address)",
                          "Caught signal 11 (Segmentation fault: address not mapped to object at address 0x8)")
    assert judge_text("nccl-log", text) == []


# round2/nccl-log/tgi1383-runpod-2x-l40-docker-timestamps-watchdog-first-allreduce-seqnum-1-60000ms-terminate-cut.txt
# (huggingface/text-generation-inference#1383, PyTorch of 2023: no '[rankN]:' head), without the container's timestamps
OLD_WATCHDOG = _text(
    "[E ProcessGroupNCCL.cpp:828] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
    "OpType=ALLREDUCE, Timeout(ms)=60000) ran for 69662 milliseconds before timing out.",
    "[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous nature of "
    "CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.")


def test_older_pytorch_watchdog_lines_are_read() -> None:
    out = parse_text("nccl-log", OLD_WATCHDOG)
    assert [(t["rank"], t["seq"], t["op"], t["timeout_ms"]) for t in out["pg_timeouts"]] == [(0, 1, "ALLREDUCE", 60000)]
    assert [e["rank"] for e in out["pg_errors"]] == [0, None]


def test_older_pytorch_watchdog_alone_cannot_judge_a_device() -> None:
    (f,) = judge_text("nccl-log", OLD_WATCHDOG)
    assert (f.check, f.severity) == ("nccl_watchdog", "info")
    assert "(rank 0)" in f.message and "ALLREDUCE SeqNum 1 timed out" in f.message


# round2/nccl-log/returnn1466-nd20-01-bootstrap-ib0-ipv6-link-local-bind-failed-...-trailing-spaces-cut.txt
# (rwth-i6/returnn#1466), without the terminal's trailing spaces
BIND = _text("nd20-01:275975:275975 [0] NCCL INFO Bootstrap : Using ib0:fe80::ba59:9f03:fc:765c%ib0<0>",
             "nd20-01:275975:275975 [0] misc/socket.cc:379 NCCL WARN Call to bind failed : Cannot assign requested "
             "address",
             "nd20-01:275975:275975 [0] NCCL INFO bootstrap.cc:176 -> 2",
             "nd20-01:275975:275975 [0] NCCL INFO bootstrap.cc:201 -> 2")


def test_the_bootstrap_interface_and_address_are_read() -> None:
    assert parse_text("nccl-log", BIND)["socket_addresses"] == {"ib0": "fe80::ba59:9f03:fc:765c%ib0"}


def test_a_failed_socket_call_names_the_interface_of_nccls_sockets() -> None:
    failed = [f for f in judge_text("nccl-log", BIND) if f.severity == "critical"]
    assert [f.check for f in failed] == ["nccl_error"]
    assert "NCCL's sockets use ib0 fe80::ba59:9f03:fc:765c%ib0 (an IPv6 link-local address" in failed[0].message


def test_no_interface_is_named_where_no_socket_call_failed() -> None:
    text = BIND.replace("Call to bind failed : Cannot assign requested address", "Cuda failure 'out of memory'")
    assert all("NCCL's sockets" not in f.message for f in judge_text("nccl-log", text))


# --- i40e/ice: 'may be insufficient' judged against the port's own rate ---

# round2/kernel-log/pfring277-no-ts-module-load-i40e-xl710-eth10-40g-link-up-pcie-5gts-x8-...-cut.txt (ntop/PF_RING#277)
XL710 = _text("i40e 0000:04:00.0 eth10: NIC Link is Up, 40 Gbps Full Duplex, Flow Control: None",
              "i40e 0000:04:00.0: PCI-Express: Speed 5.0GT/s Width x8",
              "i40e 0000:04:00.0: PCI-Express bandwidth available for this device may be insufficient for optimal "
              "performance.",
              "i40e 0000:04:00.0: Please move the device to a different PCI-e link with more lanes and/or higher "
              "transfer rate.")


def test_a_40g_port_on_a_gen2_x8_link_is_limited() -> None:
    # Gen2 carries 4 Gb/s a lane after 8b/10b: x8 is 32 Gb/s, below the port's 40 Gb/s
    findings = [f for f in judge_text("kernel-log", XL710) if f.severity != "info"]  # (no times: flaps not counted)
    assert _checks(findings) == [("kernel_pcie", "warning", "n1/0000:04:00.0")]
    assert "32 Gb/s" in findings[0].message and "40 Gb/s" in findings[0].message


def test_the_same_warning_for_a_1g_port_is_not_judged() -> None:
    # the driver prints it for any link below Gen3 x8: a port at 1 Gb/s needs nothing more
    assert [f for f in judge_text("kernel-log", XL710.replace("40 Gbps", "1000 Mbps")) if f.severity != "info"] == []


def test_the_warning_without_the_ports_link_line_is_not_judged() -> None:
    text = "".join(XL710.splitlines(keepends=True)[1:])
    assert [f for f in judge_text("kernel-log", text) if f.severity != "info"] == []


# --- nvidia-smi -q -x: PCIe generation of a GPU that says it is idle ---

VERTEX = "nvidia-smi-q-xml/vertex-470.82.00-gtx1070ti-xorg-gnome-chrome-processes-19pct-gen1-x16.txt"


def test_an_idle_gpus_gen1_link_is_not_judged_whatever_its_sampled_utilisation() -> None:
    # f1shl3gs/vertex's fixture: GTX 1070 Ti at P8, 'gpu_idle' Active, 19 % utilisation, PCIe Gen 1 of 3 at x16
    (g,) = parse_text("nvidia-smi-q-xml", corpus_capture("round2", VERTEX))["gpus"]
    assert (g["performance_state"], g["pcie"]["gen_current"], g["pcie"]["gen_max"]) == ("P8", 1, 3)
    assert judge_text("nvidia-smi-q-xml", corpus_capture("round2", VERTEX)) == []


def test_a_busy_gpus_gen1_link_is_still_judged() -> None:
    text = corpus_capture("round2", VERTEX).replace("<performance_state>P8</performance_state>",
                                                      "<performance_state>P0</performance_state>")
    text = text.replace("<clocks_throttle_reason_gpu_idle>Active</clocks_throttle_reason_gpu_idle>",
                        "<clocks_throttle_reason_gpu_idle>Not Active</clocks_throttle_reason_gpu_idle>")
    assert ("gpu_pcie", "warning", "n1/gpu0") in _checks(judge_text("nvidia-smi-q-xml", text))


# --- nvidia-smi -q: the identity-only head of a report whose own count is met ---

# round2/nvidia-smi-q/hami347-pod-535.86.10-...-v100-pcie-16gb-identity-head-cut-at-vbios.txt (Project-HAMi/HAMi#347):
# 'Attached GPUs : 1', one GPU block cut after its VBIOS Version: product, modes, serial, UUID, minor number
HEAD = ("nvidia-smi-q/hami347-pod-535.86.10-hami-core-initializing-line-between-driver-and-cuda-version-v100-pcie-"
        "16gb-identity-head-cut-at-vbios.txt")


def test_an_identity_only_head_whose_count_is_met_holds_nothing_to_judge() -> None:
    out = parse_text("nvidia-smi-q", corpus_capture("round2", HEAD))
    assert (out["attached_gpus"], len(out["gpus"]), out["gpus"][0]["name"]) == (1, 1, "Tesla V100-PCIE-16GB")
    findings = judge_text("nvidia-smi-q", corpus_capture("round2", HEAD))
    # the persistence mode (a setting) is said as a note beside it
    assert _checks(findings) == [("coverage", "info", "n1"), ("gpu_persistence", "info", "n1/gpu0")]
    assert "identity only" in findings[0].message


def test_with_an_inventory_count_the_same_head_is_judged_by_it() -> None:
    assert _checks(judge_text("nvidia-smi-q", corpus_capture("round2", HEAD), {"gpus_per_node": 1})) == [
        ("gpu_persistence", "info", "n1/gpu0")]
    assert _checks(judge_text("nvidia-smi-q", corpus_capture("round2", HEAD), {"gpus_per_node": 2}))[0][:2] == (
        "gpu_count", "critical")
