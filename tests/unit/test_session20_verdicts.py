"""Session 20 (issue 29): rules and readings of this session; expected values are read off the text of each
capture (quoted here, with the corpus file it comes from where there is one)."""

from __future__ import annotations

from pathlib import Path

from conftest import judge_text


def _log(*lines: str) -> str:
    return "".join(f"{ln}\n" for ln in lines)


def _gdr_off_log(host_b: str, n_nodes: int) -> str:
    # NCCL >= 2.19 prints 'comm ... rank R nRanks N nNodes M localRanks L localRank R' once the topology is known
    return _log(
        "hostA:101:201 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>",
        "hostA:101:201 [0] NCCL INFO Using network IB",
        "hostA:101:201 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'",
        f"hostA:101:201 [0] NCCL INFO comm 0x5561 rank 0 nRanks 2 nNodes {n_nodes} localRanks 1 localRank 0 MNNVL 0",
        f"{host_b}:102:202 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.2<0>",
        f"{host_b}:102:202 [0] NCCL INFO comm 0x5562 rank 1 nRanks 2 nNodes {n_nodes} localRanks 1 localRank 0 "
        "MNNVL 0")


def test_nccl_says_how_many_nodes_its_communicator_spans_and_that_decides_multi_node() -> None:
    # two hosts' lines and nNodes 2: GDR off is on the inter-node data path (nccl_gdr.off)
    found = judge_text("nccl-log", _gdr_off_log("hostB", 2))
    assert [(f.check, f.severity) for f in found] == [("nccl_gdr", "warning")]
    # lines of two hosts but NCCL's own 'nNodes 1' (two single-node jobs logged together): no inter-node traffic
    assert judge_text("nccl-log", _gdr_off_log("hostB", 1)) == []
    # nNodes 2 said by NCCL on one host's lines alone is enough
    assert [f.check for f in judge_text("nccl-log", _gdr_off_log("hostA", 2))] == ["nccl_gdr"]


# --- a line a parser rejects is left out, within a budget; the rest is read and judged (issue 29 item 2) ---

SINFO = ("PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
         "gpu*         up   infinite      2  down* gpu[01-02]\n"
         "gpu*         up   infinite      6   idle gpu[03-08]\n"
         "Jobid list: 3381322 3380373\n"   # a wrapper's line inside the table (slurmtools' psnode prints such lines)
         "cpu          up   infinite      4   idle c[1-4]\n")


def test_a_line_the_parser_rejects_is_left_out_and_said() -> None:
    import pytest
    from ccparse import registry
    from ccparse.common import ParseError

    data = registry.parse("sinfo", SINFO, salvage=True)
    with pytest.raises(ParseError):  # the collectors' and the lifecycle's strict reading
        registry.parse("sinfo", SINFO)
    assert [(r["partition"], r["state"], r["nodes"]) for r in data["partitions"]] == [
        ("gpu", "down*", 2), ("gpu", "idle", 6), ("cpu", "idle", 4)]
    assert data["unread_lines"] == [4]
    assert data["cut"] == ["1 line(s) not read (line 4: expected 6 columns PARTITION AVAIL TIMELIMIT NODES STATE "
                           "NODELIST, got 'Jobid list: 3381322 3380373')"]
    # what was read is judged: the two nodes down and not responding
    assert {f.subject for f in judge_text("sinfo", SINFO) if f.severity == "critical"} >= {"gpu01", "gpu02"}


def test_more_rejected_lines_than_the_budget_leave_the_capture_unread() -> None:
    import pytest
    from ccparse import registry
    from ccparse.common import ParseError

    # 5 non-blank lines: one may be left out (a quarter, rounded down), not two
    two = SINFO.replace("cpu          up", "Jobid list: 1 2\ncpu          up")
    with pytest.raises(ParseError) as err:
        registry.parse("sinfo", two, salvage=True)
    assert err.value.line == 4  # the first error is the one reported


def test_a_count_is_not_judged_when_a_line_was_left_unread(tmp_path: Path) -> None:
    from clusterctl.analysis.engine import analyze_dir

    head = "index, name, pci.bus_id, temperature.gpu, utilization.gpu [%], memory.used [MiB]\n"
    rows = [f"{i}, NVIDIA H100 80GB HBM3, 00000000:{i + 1:02X}:00.0, 30, 0 %, 1 MiB\n" for i in range(8)]

    def judged(text: str) -> tuple[str, list[str]]:
        folder = tmp_path / str(len(list(tmp_path.iterdir())))
        (folder / "n1").mkdir(parents=True)
        (folder / "n1" / "nvidia-smi-query.txt").write_text(text)
        rep = analyze_dir(str(folder), {"gpus_per_node": 8}).hosts["n1"]
        return rep.status, [f.message for f in rep.notes if f.check == "coverage"]

    # 7 of 8 rows read and none unread: a GPU is missing (failed)
    assert judged(head + "".join(rows[:7]))[0] == "failed"
    # 7 of 8 read because a garbled row was left out: the GPU may be on it; the count is not judged, and said
    status, notes = judged(head + "".join(rows[:5]) + "5, NVIDIA H100 garbled\n" + "".join(rows[6:]))
    assert status == "healthy"
    assert any("count not judged, 1 line(s) of the capture were not read" in n for n in notes)
    assert any("1 line(s) not read (line 7: row has 2 values, header has 6" in n for n in notes)


# --- readings of blind batches 56-57's rest (session 20) ---

def test_a_paste_commented_out_line_by_line() -> None:
    # round2/scontrol-node/rwthi6-...: a Python comment block, four spaces and '# ' before every line
    text = ("    # Another example of a node in bad state:\n"
            "    # NodeName=n23g0003 CoresPerSocket=48\n"
            "    #    CPUAlloc=0 CPUEfctv=96 CPUTot=96 CPULoad=N/A\n"
            "    #    Gres=gpu:hopper:4\n"
            "    #    State=DOWN+DRAIN+NOT_RESPONDING ThreadsPerCore=1 TmpDisk=0 Weight=150933 Owner=N/A "
            "MCS_label=N/A\n"
            "    #    Reason=gets too hot [mw445520@2024-12-03T17:06:40]\n")
    found = judge_text("scontrol-node", text)
    assert [(f.subject, f.severity) for f in found] == [("n23g0003", "critical")]
    assert "gets too hot" in found[0].message
    # round2/show_gids/mitosiscore-...: the command bare, its output commented out by the README
    gids = ("show_gids\n"
            "# DEV     PORT    INDEX   GID                                     IPv4            VER     DEV\n"
            "# ---     ----    -----   ---                                     ------------    ---     ---\n"
            "# mlx5_0  1       0       fe80:0000:0000:0000:ec0d:9a03:00ca:2f4c                 v1\n"
            "# mlx5_1  1       0       fe80:0000:0000:0000:ec0d:9a03:0078:6376                 v1\n"
            "# n_gids_found=2\n")
    from ccparse import registry

    assert [(g["device"], g["index"]) for g in registry.parse("show_gids", gids)["gids"]] == [
        ("mlx5_0", 0), ("mlx5_1", 0)]
    # nccl-tests' own '# ' lines are never taken for a commented-out paste
    from ccparse.capture import clean_capture

    head = "# nThread 1 nGpus 1 minBytes 8 maxBytes 128 step: 2(factor) warmup iters: 5 iters: 20\n#\n"
    assert clean_capture(head, "nccl-tests").text == head


def test_output_as_json_strings_of_a_list() -> None:
    # round2/sinfo/azhop1210-...: Ansible's stdout_lines, every line a JSON string with a trailing comma
    text = ('  "REASON               USER      TIMESTAMP           NODELIST",\n'
            '        "cyclecloud_node_fail slurm     2022-11-22T13:25:08 viz3d-1",\n'
            '        "cyclecloud_node_fail slurm     2022-11-22T13:27:38 viz3d-2",\n')
    assert sorted(f.subject for f in judge_text("sinfo", text)) == ["viz3d-1", "viz3d-2"]
    framed = '"stdout_lines": [\n' + text + "]\n"
    assert sorted(f.subject for f in judge_text("sinfo", framed)) == ["viz3d-1", "viz3d-2"]


def test_sinfo_nodelists_cut_with_an_ellipsis_name_the_nodes_they_show() -> None:
    # round2/sinfo/hpcintro-graham-...: the contributor cut long NODELISTs with '...'
    text = ("PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
            "compute*     up 7-00:00:00     11  down* gra[8,99,211,268,376,635,647,803,85...\n"
            "compute*     up 7-00:00:00    464  alloc gra[1-6,9-12,14-19,21-24,26-40,42,4...\n")
    from ccparse import registry

    data = registry.parse("sinfo", text)
    down = data["partitions"][0]
    # '85' may be the start of a longer name: only the names before it are sure
    assert down["hosts"] == ["gra8", "gra99", "gra211", "gra268", "gra376", "gra635", "gra647", "gra803"]
    assert down["nodes_said"] == 11
    assert {f.subject for f in judge_text("sinfo", text) if f.severity == "critical"} == set(down["hosts"])


def test_sinfo_rows_of_a_longer_format_under_the_default_header() -> None:
    # round2/sinfo/pdc-beskow-...: job size, time limit, CPUs, S:C:T before NODES STATE NODELIST
    text = ("PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
            "2d4-512   up    4-512    2-00:00:00     64 2:16:2       4 allocated$ nid000[64-67]\n"
            "2d4-512   up    4-512    2-00:00:00     64 2:16:2       1 down*      nid00243\n")
    found = judge_text("sinfo", text)
    assert [(f.subject, f.severity) for f in found] == [("nid00243", "critical")]


def test_sinfo_nodelist_wrapped_inside_its_brackets() -> None:
    # round2/sinfo/caviness-...: the lesson wrapped long NODELISTs after a ',' inside '[...]'
    text = ("PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
            "it_css       up 7-00:00:00      6  drain r00g[01-03],r00n[07,\n"
            "41],r01g00\n"
            "it_css       up 7-00:00:00      1  down* r00n45\n")
    from ccparse import registry

    rows = registry.parse("sinfo", text)["partitions"]
    assert rows[0]["hosts"] == ["r00g01", "r00g02", "r00g03", "r00n07", "r00n41", "r01g00"]
    assert "nodes_said" not in rows[0]
    assert rows[1]["hosts"] == ["r00n45"]


def test_nvidia_smi_L_device_handle_error_in_lower_case() -> None:
    # round2/nvidia-smi/sonar72-...: nvidia-smi -L prints 'for gpu' (lower case) before the bus id
    text = ("$ nvidia-smi -L\n"
            "Unable to determine the device handle for gpu 0000:18:00.0: Unknown Error\n"
            "GPU 1: NVIDIA GeForce RTX 2080 Ti (UUID: GPU-f0f3ae96-fe93-f5c8-4295-bf657e5a25da)\n"
            "GPU 2: NVIDIA GeForce RTX 2080 Ti (UUID: GPU-99c4f278-11da-052d-ac5c-3490b58ade04)\n")
    found = judge_text("nvidia-smi", text)
    assert [(f.subject, f.severity) for f in found] == [("n1/00000000:18:00.0", "critical")]


def test_skypilot_task_prefix() -> None:
    # round2/nvidia-smi/skypilot4099-...: '(sky-cmd, pid=13008) ' before every line of the task's output
    from ccparse.capture import clean_capture

    text = ("(sky-cmd, pid=13008) Thu Oct 17 01:47:13 2024       \n"
            "(sky-cmd, pid=13008) | NVIDIA-SMI 535.183.06             Driver Version: 535.183.06   CUDA Version: 12.2"
            "     |\n")
    assert clean_capture(text, "nvidia-smi").text.splitlines()[0] == "Thu Oct 17 01:47:13 2024       "


def test_a_node_registering_fewer_gpus_in_slurm_than_it_holds() -> None:
    # round2/scontrol-node/slinky101-...: an 8-GPU H100 worker whose Gres reads (null), in bold, with an arrow note
    text = ("NodeName=slinky-0 Arch=x86_64 CoresPerSocket=48 \n"
            "   CPUAlloc=0 CPUEfctv=192 CPUTot=192 CPULoad=2.14\n"
            "   **Gres=(null)**   ---> Here It's not showing the GPU values.\n"
            "   State=IDLE+DYNAMIC_NORM ThreadsPerCore=2 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n")
    from ccparse import registry

    assert registry.parse("scontrol-node", text)["nodes"][0]["gres"] == "(null)"
    found = judge_text("scontrol-node", text, {"gpus_per_node": 8})
    assert [(f.check, f.subject, f.severity) for f in found] == [("slurm_gres", "slinky-0", "warning")]
    assert judge_text("scontrol-node", text) == []  # no GPU count expected: nothing to hold it against
    four = text.replace("**Gres=(null)**", "Gres=gpu:h100:4(S:0-1)")
    assert "registers 4 GPU(s)" in judge_text("scontrol-node", four, {"gpus_per_node": 8})[0].message
    assert judge_text("scontrol-node", four.replace(":4(S", ":8(S"), {"gpus_per_node": 8}) == []


# --- NCCL's error trace: a call that failed (blind batch 58's rest; issue 29 class 3, severity too low) ---

def test_an_nccl_call_that_failed_up_its_error_trace_is_failed() -> None:
    # round2/nccl-log/espnet1940-...: the bootstrap connection refused, ncclSystemError (2) returned up to init.cc
    text = _log(
        "tj1-asr-train-v100-13:941227:943077 [0] include/socket.h:390 NCCL WARN Connect to 10.38.10.112<21724> failed "
        ": Connection refused",
        "tj1-asr-train-v100-13:941227:943077 [0] NCCL INFO bootstrap.cc:100 -> 2",
        "tj1-asr-train-v100-13:941227:943077 [0] NCCL INFO bootstrap.cc:326 -> 2",
        "tj1-asr-train-v100-13:941227:943077 [0] NCCL INFO init.cc:695 -> 2")
    from ccparse import registry

    assert registry.parse("nccl-log", text)["error_returns"] == [
        {"at": "bootstrap.cc:100", "code": 2, "line": 2}, {"at": "bootstrap.cc:326", "code": 2, "line": 3},
        {"at": "init.cc:695", "code": 2, "line": 4}]
    found = judge_text("nccl-log", text)
    assert [(f.check, f.severity) for f in found] == [("nccl_error", "critical"), ("nccl_warn", "warning")]
    assert "ncclSystemError returned from bootstrap.cc:100 up 3 call(s)" in found[0].message
    # round2/nccl-log/vllm9369-...: NCCL 2.x of 2019 printed no 'NCCL' word; a CUDA failure up to group.cc
    old = _log("kmaker-54-033138205093:44712:44746 [2] transport/nvls.cc:246 NCCL WARN Cuda failure 3 'initialization "
               "error'",
               "kmaker-54-033138205093:44712:44746 [2] NCCL INFO init.cc:1010 -> 1",
               "kmaker-54-033138205093:44712:44746 [2] NCCL INFO group.cc:64 -> 1 [Async thread]")
    assert "ncclUnhandledCudaError" in judge_text("nccl-log", old)[0].message


def test_a_trace_of_gpus_without_peer_access_or_of_a_teardown_is_not_a_failed_job() -> None:
    # round2/nccl-log/ray16979-...: consumer GPUs without P2P (the platform, set with NCCL_P2P_DISABLE): degraded
    p2p = _log("dev-duanjiangfei-ap0:34272:34565 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : "
               "217 peer access is not supported between these two devices",
               "dev-duanjiangfei-ap0:34272:34565 [0] NCCL INFO transport.cc:68 -> 1",
               "dev-duanjiangfei-ap0:34272:34565 [0] NCCL INFO init.cc:766 -> 1")
    assert [f.severity for f in judge_text("nccl-log", p2p)] == ["warning"]
    # round2/nccl-log/deepep41-...: the proxy's service thread at teardown, its trace only in misc/socket.cc
    teardown = _log("0bc8f5b83646:2374:2994 [0] proxy.cc:1458 NCCL WARN [Service thread] Accept failed Resource "
                    "temporarily unavailable",
                    "0bc8f5b83646:2374:2994 [0] NCCL INFO misc/socket.cc:826 -> 3")
    assert [f.severity for f in judge_text("nccl-log", teardown)] == ["warning"]


def test_warn_lines_that_end_a_set_up_by_themselves() -> None:
    # round2/nccl-log/lightning14986-...: two processes took one rank
    text = _log("hpc-25-14:18569:18835 [0] bootstrap.cc:131 NCCL WARN Bootstrap Root : rank 1 of 8 ranks has already "
                "checked in")
    assert [(f.check, f.severity) for f in judge_text("nccl-log", text)] == [("nccl_error", "critical"),
                                                                             ("nccl_warn", "warning")]
    # round2/nccl-log/awsofi156-...: the aws-ofi-nccl plugin's completion in error
    ofi = _log("[1,13]<stdout>:nccl-tests-worker-1:35:89 [5] ofi_process_cq:1039 NCCL WARN NET/OFI Request "
               "0x7fbb944701b8 completed with error. RC: 20. Error: unknown error. Completed length: 0")
    assert [(f.check, f.severity) for f in judge_text("nccl-log", ofi)] == [("nccl_transport", "critical")]


def test_an_application_s_nccl_error_line_is_a_failed_call_but_not_a_peer_s() -> None:
    # round2/nccl-log/openr1mm7-...: torchrun's '[rank0]: ' before PyTorch's one-line NCCL error
    text = _log("[rank0]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
                "ProcessGroupNCCL.cpp:2588, internal error - please report this issue to the NCCL developers, NCCL "
                "version 2.21.5",
                "[rank0]: ncclInternalError: Internal check failed.")
    found = judge_text("nccl-log", text)
    assert found[0].check == "nccl_error" and found[0].severity == "critical"
    assert "the application's NCCL call returned ncclInternalError" in found[0].message
    # ncclRemoteError: a peer's process exited or the network failed; this rank's own call names no fault of its own
    remote = _log("ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
                  "prematurely.")
    assert [f.check for f in judge_text("nccl-log", remote)] == ["nccl_transport"]  # nccl_transport.fatal, as before


def test_channels_over_ib_without_gdrdma_are_gpudirect_off() -> None:
    # round2/nccl-log/horovod1523-...: NCCL 2.4.7 across two hosts, its rings 'via NET/IB/0' with no '/GDRDMA'
    text = _log("master_node:22:295 [2] NCCL INFO Ring 01 : 2[2] -> 0[0] via P2P/IPC",
                "secondary_node:43:309 [2] NCCL INFO Ring 01 : 3 -> 6 [receive] via NET/IB/0",
                "secondary_node:44:311 [3] NCCL INFO Ring 01 : 7 -> 2 [send] via NET/IB/0",
                "master_node:21:290 [1] NCCL INFO comm 0x7f4d6839f060 rank 1 nranks 8 cudaDev 1 nvmlDev 1 - Init "
                "COMPLETE")
    from ccparse import registry

    assert registry.parse("nccl-log", text)["gdr"] is False
    assert [(f.check, f.severity) for f in judge_text("nccl-log", text)] == [("nccl_gdr", "warning")]
    gdr = text.replace("via NET/IB/0\n", "via NET/IB/0/GDRDMA\n")
    assert registry.parse("nccl-log", gdr)["gdr"] is True and judge_text("nccl-log", gdr) == []


def test_a_multi_node_socket_transport_over_the_loopback() -> None:
    # round2/nccl-log/horovod789-...: NCCL 2.3.5's 'NET : Using interface lo:127.0.0.1<0>' on two hosts
    text = _log("51ca79e04561:4880:5140 [1] NCCL INFO comm 0x7f19bc4046d0 rank 3 nranks 4",
                "51ca79e04561:4880:5140 [1] NCCL INFO NET : Using interface lo:127.0.0.1<0>",
                "51ca79e04561:4880:5140 [1] NCCL INFO NET : Using interface eth0:3.5.6.12<0>",
                "e53b7da88fea:2494:2756 [1] NCCL INFO NET : Using interface lo:127.0.0.1<0>",
                "e53b7da88fea:2494:2756 [1] NCCL INFO NET : Using interface eth0:3.10.11.7<0>")
    from ccparse import registry

    assert registry.parse("nccl-log", text)["socket_interfaces"] == ["lo", "eth0"]
    found = [f for f in judge_text("nccl-log", text) if f.severity == "critical"]
    assert [(f.check, f.subject) for f in found] == [("nccl_transport", "n1/lo")]
    # one host's lines: lo listed beside eth0 is a setting made for several nodes (session 22: NCCL takes lo only
    # when NCCL_SOCKET_IFNAME lets it), judged unless NCCL says the job is on one node
    one_host = "".join(ln + "\n" for ln in text.splitlines() if ln.startswith("51ca"))
    assert [f.subject for f in judge_text("nccl-log", one_host) if f.severity == "critical"] == ["n1/lo"]
    one_node = one_host.replace("rank 3 nranks 4", "rank 3 nRanks 4 nNodes 1 localRanks 4 localRank 3")
    assert not [f for f in judge_text("nccl-log", one_node) if f.severity == "critical"]


# --- blind batch 55's rest: RDMA devices whose firmware failed the driver's commands, perftest's device errors ---

def test_rdma_adapter_firmware_failing_the_driver_s_commands() -> None:
    # round2/kernel-log/linuxrdma2024-v6.8-rc1-...: a ConnectX-6 Dx VF's CREATE_TIS refused (bad parameter)
    mlx5 = ("[  110.734351] mlx5_core 0000:6f:08.2: mlx5_cmd_out_err:808:(pid 650): CREATE_TIS(0x912) op_mod(0x0) "
            "failed, status bad parameter(0x3), syndrome (0x595b5d), err(-22)\n"
            "[  110.749146] mlx5_core.eth: probe of mlx5_core.eth.2 failed with error -22\n")
    found = [f for f in judge_text("kernel-log", mlx5) if f.severity != "info"]
    assert [(f.subject, f.severity) for f in found] == [("n1/0000:6f:08.2", "critical")]  # its Ethernet part's probe
    assert "probe failed with error -22" in found[0].message
    # the refused command alone answers a request (an application's bad parameters): not judged (test_misses18)
    assert [f for f in judge_text("kernel-log", mlx5.split("\n")[0] + "\n") if f.severity != "info"] == []
    # round2/kernel-log/linuxrdma2024-bugzilla219453-...: a BCM57416's RoCE device (bnxt_re0)
    bnxt = ("[    5.531694] bnxt_en 0000:82:00.0: QPLIB: cmdq[0xa]=0x9 status 0x3\n"
            "[    5.531702] bnxt_en 0000:82:00.0 bnxt_re0: Failed to create HW CQ\n"
            "[    5.531706] infiniband bnxt_re0: Couldn't create ib_mad CQ\n")
    found = [f for f in judge_text("kernel-log", bnxt) if f.check == "kernel_net"]
    # one device, both lines; named by its PCI function, which the driver's line gives it (session 25)
    assert [(f.subject, f.severity) for f in found] == [("n1/0000:82:00.0", "critical")]
    assert "bnxt_re0: Failed to create HW CQ" in found[0].message
    # round2/kernel-log/linuxpci2021-...: the command EQ recovered late, a command that timed out
    late = ("[ 1537.020001] mlx5_core 0000:d8:00.0: mlx5_cmd_eq_recover:245:(pid 1416): Recovered 1 EQEs on cmd_eq\n")
    assert [(f.subject, f.severity) for f in judge_text("kernel-log", late)] == [("n1/0000:d8:00.0", "critical")]


def test_all_ones_pci_functions_are_named() -> None:
    # round2/lspci/iwl2021-dilfridge-...: both I350 functions read 'rev ff'
    text = ("01:00.0 Ethernet controller [0200]: Intel Corporation I350 Gigabit Network Connection [8086:1521] "
            "(rev ff)\n"
            "01:00.1 Ethernet controller [0200]: Intel Corporation I350 Gigabit Network Connection [8086:1521] "
            "(rev ff)\n")
    found = judge_text("lspci", text)
    assert [f.severity for f in found] == ["critical"]
    assert "0000:01:00.0, 0000:01:00.1" in found[0].message


def test_perftest_that_cannot_set_up_rdma_on_its_device() -> None:
    # round2/ib_write_bw/linuxrdma2019-mofed-...: no banner; the device is on the command line
    text = ("$ /usr/bin/ib_write_bw -d mlx5_0\n"
            "************************************\n"
            "* Waiting for client to connect... *\n"
            "************************************\n"
            "Couldn't get device attributes\n"
            "Unable to create QP.\n"
            "Failed to create QP.\n"
            "Couldn't create IB resources\n")
    from ccparse import registry

    data = registry.parse("ib_write_bw", text)
    assert (data["device"], data["device_error"]) == ("mlx5_0", "Couldn't get device attributes")
    assert [(f.subject, f.severity) for f in judge_text("ib_write_bw", text)] == [("n1/mlx5_0", "critical")]


def test_query_csv_after_an_nvidia_smi_L_listing() -> None:
    # round2/nvidia-smi-query/gpuexporter-sample-ubuntu-...: '# nvidia-smi --list-gpus', its line, then the query
    text = ("# nvidia-smi --list-gpus\n"
            "GPU 0: NVIDIA GeForce RTX 2080 SUPER (UUID: GPU-df6e7a7c-7314-46f8-abc4-b88b36dcf3aa)\n"
            "\n"
            "# nvidia-smi --query-gpu=index,name,temperature.gpu --format=csv\n"
            "index, name, temperature.gpu\n"
            "0, NVIDIA GeForce RTX 2080 SUPER, 38\n")
    from ccparse import registry

    gpus = registry.parse("nvidia-smi-query", text)["gpus"]
    assert [(g["index"], g["name"]) for g in gpus] == [(0, "NVIDIA GeForce RTX 2080 SUPER")]


def test_the_host_port_s_unreadable_pcie_max_is_a_note() -> None:
    # round2/nvidia-smi-q/thamada-v100-...: 'Host Max : Unknown Error' under the GPU's link information
    text = ("Attached GPUs                             : 1\n"
            "GPU 00000000:00:04.0\n"
            "    Product Name                          : Tesla V100-SXM2-16GB\n"
            "    PCI\n"
            "        GPU Link Info\n"
            "            PCIe Generation\n"
            "                Max                       : 3\n"
            "                Current                   : 3\n"
            "                Device Current            : 3\n"
            "                Device Max                : 3\n"
            "                Host Max                  : Unknown Error\n"
            "            Link Width\n"
            "                Max                       : 16x\n"
            "                Current                   : 16x\n"
            "    Temperature\n"
            "        GPU Current Temp                  : 35 C\n")
    assert [f.severity for f in judge_text("nvidia-smi-q", text)] == ["info"]


# --- blind batches 62-63's rest ---

def test_a_whole_bus_listing_with_fewer_gpus_than_the_node_holds(tmp_path: Path) -> None:
    # round2/lspci/azhpcimages6-...: an NC24rs_v3 guest (four V100) whose lspci shows one
    text = ("0000:00:00.0 Host bridge: Intel Corporation 440BX/ZX/DX - 82443BX/ZX/DX Host bridge (AGP disabled) "
            "(rev 03)\n"
            "0000:00:08.0 VGA compatible controller: Microsoft Corporation Hyper-V virtual VGA\n"
            "3130:00:00.0 3D controller: NVIDIA Corporation GV100GL [Tesla V100 PCIe 16GB] (rev a1)\n")
    found = judge_text("lspci", text, {"gpus_per_node": 4})
    assert [(f.check, f.severity) for f in found] == [("gpu_count", "critical")]
    assert "lspci lists 1 NVIDIA GPU(s) on the PCI bus, 4 expected" in found[0].message
    assert judge_text("lspci", text, {"gpus_per_node": 1}) == []
    # one device's lines only (no host bridge: 'lspci -s', a grep): not the whole bus, the count is not judged
    assert judge_text("lspci", text.split("\n", 2)[2], {"gpus_per_node": 4}) == []


def test_a_listing_cut_by_head_is_not_counted(tmp_path: Path) -> None:
    # round2/nvidia-smi/deepops1106-...: '$ nvidia-smi -L | head' on an eight-GPU DGX A100
    from clusterctl.analysis.engine import analyze_dir

    text = ("$ nvidia-smi -L | head\n"
            "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-fcb8230f-657b-e58a-4694-dfb23bf1c4d4)\n"
            "GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-1b2e4c9a-8a1b-4f6e-9c3d-2f7e6a5b4c3d)\n")
    (tmp_path / "a" / "n1").mkdir(parents=True)
    (tmp_path / "a" / "n1" / "nvidia-smi.txt").write_text(text)
    rep = analyze_dir(str(tmp_path / "a"), {"gpus_per_node": 8}).hosts["n1"]
    assert rep.status == "cannot judge"
    assert any("pipes its output through head" in f.message for f in rep.notes)
    # the same two lines without '| head': two of eight GPUs
    (tmp_path / "b" / "n1").mkdir(parents=True)
    (tmp_path / "b" / "n1" / "nvidia-smi.txt").write_text(text.replace(" | head", ""))
    assert analyze_dir(str(tmp_path / "b"), {"gpus_per_node": 8}).hosts["n1"].status == "failed"


def test_the_driver_refusing_a_gpu_s_io_region_without_its_bar_line() -> None:
    # round2/kernel-log/hpejp-dl380a-...: a grep'd dmesg with the author's '...' around the one NVRM line
    text = "NVRM: This PCI I/O region assigned to your NVIDIA device is invalid\n"
    found = [f for f in judge_text("kernel-log", text) if f.severity != "info"]
    assert [(f.check, f.severity) for f in found] == [("kernel_gpu", "critical")]
    # with its BAR line the GPU is named, once
    bar = text + "NVRM: BAR1 is 0M @ 0x0 (PCI:0000:14:00.0)\n"
    assert [f.subject for f in judge_text("kernel-log", bar) if f.severity != "info"] == ["n1/0000:14:00.0"]
