"""Session 21 (issue 29): rules and readings of this session; expected values are read off the text of each
capture (quoted here, with the corpus file it comes from)."""

from __future__ import annotations

from conftest import judge_text
from conftest import parse_text as _parse
from conftest import text_of as _text

# --- dcgmi diag: a table cut after its Deployment rows holds no hardware result (cannot judge) ---

# round2/dcgmi-diag/dcgm198-3.3.7-560.35.03-h100nvl-x2-r2-command-line-cut-after-denylist.txt (NVIDIA/DCGM#198)
DCGM_CUT = _text(
    "dcgmi diag -r 2",
    "Successfully ran diagnostic for group.",
    "+---------------------------+------------------------------------------------+",
    "| Diagnostic                | Result                                         |",
    "+===========================+================================================+",
    "|-----  Metadata  ----------+------------------------------------------------|",
    "| DCGM Version              | 3.3.7                                          |",
    "| Driver Version Detected   | 560.35.03                                      |",
    "| GPU Device IDs Detected   | 2321,2321                                      |",
    "|-----  Deployment  --------+------------------------------------------------|",
    "| Denylist                  | Pass                                           |")
BORDER = "+---------------------------+------------------------------------------------+"


def test_a_dcgmi_table_cut_after_its_deployment_rows_cannot_be_judged() -> None:
    data = _parse("dcgmi-diag", DCGM_CUT)
    assert data["open_end"] is True and [r["test"] for r in data["results"]] == ["Denylist"]
    (f,) = judge_text("dcgmi-diag", DCGM_CUT)
    assert f.check == "coverage" and f.message.startswith("cannot judge: nothing judgeable: ")
    # the same rows closed by the table's bottom border: a level 1 (software) run that passed
    assert judge_text("dcgmi-diag", DCGM_CUT + BORDER + "\n") == []
    # cut at the next category's header (seen/dcgmi-diag/dcgm55-...: '+-----  Integration  -------+---...+'): the
    # Deployment section is whole, and what it shows passed
    integration = "+-----  Integration  -------+------------------------------------------------+\n"
    assert "open_end" not in _parse("dcgmi-diag", DCGM_CUT + integration)
    assert judge_text("dcgmi-diag", DCGM_CUT + integration) == []


# --- ip link: Markdown's lazy blockquote, a header wrapped by a mail, a bond's member without carrier ---

# round2/ip-link/danm246-...: '> ' on the record's first line only, its indented lines bare
DANM = _text(
    "> 4: enp101s0f0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP mode DEFAULT group default "
    "qlen 1000",
    "    link/ether ac:1f:6b:cf:32:c8 brd ff:ff:ff:ff:ff:ff",
    "    vf 1 MAC 00:00:00:00:00:00, spoof checking off, link-state auto, trust off, query_rss off")

# round2/ip-link/netdev2020-lag-ipv6-reproducer-...: quoted twice, the header lines wrapped by the mail
BOND = _text(
    "> ># ip a s",
    "> >1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN",
    "> >group default qlen 1000",
    "> >    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00",
    "> >2: ens2f0np0: <BROADCAST,MULTICAST,SLAVE,UP,LOWER_UP> mtu 1500 qdisc",
    "> >mq master bond0 state UP group default qlen 1000",
    "> >    link/ether 00:0f:53:2f:ea:40 brd ff:ff:ff:ff:ff:ff",
    "> >5: ens2f1np2: <NO-CARRIER,BROADCAST,MULTICAST,SLAVE,UP> mtu 1500 qdisc",
    "> >mq master bond0 state DOWN group default qlen 1000",
    "> >    link/ether 00:0f:53:2f:ea:40 brd ff:ff:ff:ff:ff:ff",
    "> >11: bond0: <BROADCAST,MULTICAST,MASTER,UP,LOWER_UP> mtu 1500 qdisc",
    "> >noqueue state UP group default qlen 1000",
    "> >    link/ether 00:0f:53:2f:ea:40 brd ff:ff:ff:ff:ff:ff")


def test_a_lazy_blockquote_first_line_is_unquoted() -> None:
    (link,) = _parse("ip-link", DANM)["links"]
    assert (link["ifname"], link["state"], link["carrier"]) == ("enp101s0f0", "UP", True)
    assert judge_text("ip-link", DANM) == []


def test_a_wrapped_header_is_read_whole_and_a_bond_member_without_carrier_is_degraded() -> None:
    links = {ln["ifname"]: ln for ln in _parse("ip-link", BOND)["links"]}
    assert (links["ens2f0np0"]["qdisc"], links["ens2f0np0"]["master"], links["ens2f0np0"]["state"]) == \
        ("mq", "bond0", "UP")
    assert (links["ens2f1np2"]["master"], links["ens2f1np2"]["state"]) == ("bond0", "DOWN")
    assert links["lo"]["group"] == "default" and links["bond0"]["qdisc"] == "noqueue"
    (f,) = judge_text("ip-link", BOND)
    assert (f.check, f.severity, f.subject) == ("netdev_link", "warning", "n1/ens2f1np2")
    assert "member of bond0" in f.message
    # the same port up without carrier but in no bond, in a whole-host listing (it starts at lo): a spare, not judged
    spare = BOND.replace(",SLAVE,UP> mtu 1500 qdisc\n> >mq master bond0 state DOWN",
                         ",UP> mtu 1500 qdisc\n> >mq state DOWN")
    assert "master" not in spare.split("5: ens2f1np2")[1].split("\n")[1]
    assert judge_text("ip-link", spare) == []


# --- lspci: a header wrapped onto the next line, 'rev ff' with 'prog-if ff', 'Unknown header type 7f' ---

# round2/lspci/linuxpci2019-kherbst-gp107m-...: the GPU after a failed runtime resume, the header wrapped by the mail
GP107M = _text(
    "01:00.0 3D controller: NVIDIA Corporation GP107M [GeForce GTX 1050",
    "Mobile] (rev ff) (prog-if ff)",
    "       !!! Unknown header type 7f",
    "       Kernel driver in use: nouveau")
# round2/lspci/usrpusers2025-x310-...: the header whole, the config space header all ones
NI = _text(
    "4a:00.0 Signal processing controller: National Instruments PXIe/PCIe Device (rev ff) (prog-if ff)",
    "    !!! Unknown header type 7f",
    "    Kernel driver in use: niusrpriok")


def test_a_device_reading_all_ones_is_failed_however_its_header_is_pasted() -> None:
    for text, dev in ((GP107M, "0000:01:00"), (NI, "0000:4a:00")):
        (d,) = _parse("lspci", text)["devices"]
        assert d["config_all_ones"] is True
        (f,) = judge_text("lspci", text)
        assert (f.check, f.severity, f.subject) == ("pcie_device", "critical", f"n1/{dev}")
    (d,) = _parse("lspci", GP107M)["devices"]
    assert d["description"].endswith("GeForce GTX 1050 Mobile] (rev ff) (prog-if ff)") and d["is_gpu"]
    # the header type line alone (a revision other than ff shown) still says the config space reads all ones
    assert _parse("lspci", NI.replace("(rev ff) (prog-if ff)", "(rev 01)"))["devices"][0]["config_all_ones"]


# --- nvidia-smi: a command that selects GPUs (-i) shows only those: their count is not judged ---

# round2/nvidia-smi-nvlink/apex282-...: one bridged pair of four RTX 2080 Ti, queried GPU by GPU
APEX = _text(
    "$ nvidia-smi nvlink --status -i 2",
    "GPU 2: GeForce RTX 2080 Ti (UUID: GPU-a2c0c2f6-0c8a-8ec9-4a6c-7fd3f6a3e3b1)",
    "\t Link 0: 25.781 GB/s",
    "\t Link 1: 25.781 GB/s",
    "$ nvidia-smi nvlink --status -i 3",
    "GPU 3: GeForce RTX 2080 Ti (UUID: GPU-5c2e1d7a-44c4-3b5f-9e4e-0a3f0d1c2b77)",
    "\t Link 0: 25.781 GB/s",
    "\t Link 1: 25.781 GB/s")


def test_a_gpu_selection_leaves_the_count_unjudged() -> None:
    data = _parse("nvidia-smi-nvlink", APEX)
    assert data["partial"] is True and any("-i 2, 3" in c for c in data["cut"])
    assert judge_text("nvidia-smi-nvlink", APEX, {"gpus_per_node": 4}) == []
    # the listing without its commands: two of four GPUs, counted
    bare = "".join(ln + "\n" for ln in APEX.splitlines() if not ln.startswith("$"))
    assert [f.check for f in judge_text("nvidia-smi-nvlink", bare, {"gpus_per_node": 4})] == ["gpu_nvlink"]


# --- nvidia-smi -q: a line left unread before the report is not a cut of the report ---

# round2/nvidia-smi-q/nvidiametering-...: 'nvidia-smi -am 1' answers, then -q -d ACCOUNTING of the three GPUs
ACCOUNTING = _text(
    "sudo nvidia-smi -am 1",
    "Enabled Accounting Mode for GPU 00000000:13:00.0.",
    "Enabled Accounting Mode for GPU 00000000:37:00.0.",
    "Enabled Accounting Mode for GPU 00000000:D8:00.0.",
    "All done.",
    "",
    "nvidia-smi -q -d ACCOUNTING",
    "",
    "==============NVSMI LOG==============",
    "",
    "Timestamp                                 : Mon Jul  3 10:50:43 2023",
    "Driver Version                            : 525.60.13",
    "CUDA Version                              : 12.0",
    "",
    "Attached GPUs                             : 3",
    *[line for bus in ("13", "37", "D8") for line in (
        f"GPU 00000000:{bus}:00.0",
        "    Accounting Mode                       : Enabled",
        "    Accounting Mode Buffer Size           : 4000",
        "    Accounted Processes                   : None",
        "")])


def test_a_line_left_unread_before_the_report_is_no_cut_of_it() -> None:
    data = _parse("nvidia-smi-q", ACCOUNTING)
    assert data["unread_lines"] and len(data["gpus"]) == 3 and data["attached_gpus"] == 3
    # with the inventory's count (an accounting-only report holds no reading: session 27 says so without one), a line
    # left unread is no cut that would make the three identities 'nothing judgeable'
    spec = {"gpus_per_node": 3}
    assert [f for f in judge_text("nvidia-smi-q", ACCOUNTING, spec) if f.severity != "info"] == []
    assert not [f for f in judge_text("nvidia-smi-q", ACCOUNTING, spec) if "nothing judgeable" in f.message]


# --- nvidia-smi -q: a GPU at its maximum operating temperature is held back (degraded) ---

# round2/nvidia-smi-q/thermald300-...: an MX330 at 56 C with 'GPU Max Operating Temp : 57 C'
def _temperature(current: int) -> str:
    return _text(
        "==============NVSMI LOG==============",
        "",
        "Timestamp                                 : Sat Jun 12 13:42:11 2021",
        "Driver Version                            : 465.27",
        "CUDA Version                              : 11.3",
        "",
        "Attached GPUs                             : 1",
        "GPU 00000000:2D:00.0",
        "    Temperature",
        f"        GPU Current Temp                  : {current} C",
        "        GPU Shutdown Temp                 : 102 C",
        "        GPU Slowdown Temp                 : 97 C",
        "        GPU Max Operating Temp            : 57 C",
        "        GPU Target Temperature            : N/A",
        "        Memory Current Temp               : N/A",
        "        Memory Max Operating Temp         : N/A")


def test_a_gpu_at_its_maximum_operating_temperature_is_degraded() -> None:
    (f,) = judge_text("nvidia-smi-q", _temperature(56))
    assert (f.check, f.severity) == ("gpu_throttle", "warning") and "57 C" in f.message
    assert judge_text("nvidia-smi-q", _temperature(45)) == []


# --- sinfo: slurmctld's 'Not responding' reason, a health check's GPU tag, another command after the rows ---

# round2/sinfo/unigehpc3623-baobab-sinfo-R-...: REASON is cut at 20 characters
SINFO_R = _text(
    "$ sinfo -R",
    "REASON               USER      TIMESTAMP           NODELIST",
    "issue-6277 : Not res slurm     2024-08-26T14:28:56 cpu[002,005]",
    "issue-6277           root      2024-08-22T10:44:06 cpu004",
    "Not responding       slurm     2024-08-30T21:25:06 cpu285",
    "health_BEEGFS__tcp_c root      2024-09-02T11:40:07 cpu156",
    "health_cuda___nvidia root      2024-09-02T10:55:08 gpu034")


def test_sinfo_r_reasons_of_slurmctld_and_of_a_gpu_health_check() -> None:
    found = {f.subject: f for f in judge_text("sinfo", SINFO_R)}
    assert {s for s, f in found.items() if f.severity == "critical"} == {"cpu002", "cpu005", "cpu285", "gpu034"}
    assert "not responding" in found["cpu285"].message and "hardware" in found["gpu034"].message
    # an admin's ticket and a storage health check: drained (degraded)
    assert (found["cpu004"].severity, found["cpu156"].severity) == ("warning", "warning")


# round2/sinfo/unigehpc4250-baobab-bare-sinfo-...: one row without header, then another command and its line
SINFO_THEN_SCONTROL = _text(
    "sinfo",
    "shared-cpu                up   12:00:00    120  drain cpu[084-090,193-195]",
    "",
    "scontrol show node cpu280",
    "Reason=health_BEEGFS__tcp_con_storage [root@2026-03-14T21:45:25]")


def test_sinfo_rows_are_read_up_to_another_tools_command() -> None:
    data = _parse("sinfo", SINFO_THEN_SCONTROL)
    assert sorted(data["nodes"]) == [f"cpu{n:03d}" for n in (*range(84, 91), 193, 194, 195)]
    assert any("scontrol show node cpu280" in c for c in data["cut"])
    assert {f.severity for f in judge_text("sinfo", SINFO_THEN_SCONTROL)} == {"warning"}


# round2/sinfo/trinity653-...: the partition holds no node (slurm-nodes.conf kept its placeholder)
EMPTY = _text(" [root@login ~]# sinfo",
              "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST",
              "compute*     up   infinite      0    n/a")


def test_a_partition_without_nodes_cannot_be_judged() -> None:
    (f,) = judge_text("sinfo", EMPTY)
    assert f.check == "coverage" and f.message.startswith("cannot judge: nothing judgeable: ")
    assert "compute" in f.message


# --- review: a KIND's parser reads its capture's command lines through its own hook ---

def test_the_kinds_that_read_their_command_lines_register_a_hook() -> None:
    # perftest's -d device (test_session20_verdicts reads it off a capture), nvidia-smi's -i selection (session 23:
    # -q's too, the index of the one GPU it selects; session 30: nccl-tests' collective off a launch line)
    from ccparse import registry
    from ccparse.common import COMMAND_READERS

    registry.kinds()
    assert set(COMMAND_READERS) == {"ib_write_bw", "nccl-tests", "nvidia-smi", "nvidia-smi-nvlink", "nvidia-smi-q",
                                    "nvidia-smi-query"}


# --- NCCL: a CUDA call failing inside NCCL, an invalid rank, the verbs provider's completion error, NCCL 1.x,
# XLA's result lines; not when the job ran out of memory; the verbs library on one node ---

def test_a_cuda_failure_inside_nccl_fails_the_call() -> None:
    # round2/nccl-log/nccl1372-gcn75-...: the whole capture, one line (NCCL built without the GPU's architecture)
    (f, warn) = judge_text("nccl-log", "gcn75:2336636:2336906 [0] enqueue.cc:58 NCCL WARN Cuda failure 'named symbol "
                                        "not found'\n")
    assert (f.check, f.severity) == ("nccl_error", "critical") and "(on gcn75)" in f.message
    assert (warn.check, warn.severity) == ("nccl_warn", "warning")  # the WARN line itself, listed as every WARN
    # round2/nccl-log/trtllm1670-...: 'out of memory' first, then the handle it left behind: the job's memory limit
    oom = _text(*["VM-0-16-ubuntu:392:494 [2] enqueue.cc:43 NCCL WARN Cuda failure 'out of memory'",
                  "VM-0-16-ubuntu:392:494 [2] enqueue.cc:54 NCCL WARN Cuda failure 'invalid resource handle'"] * 2)
    assert [(f.check, f.severity) for f in judge_text("nccl-log", oom)] == [("nccl_warn", "info")]


def test_an_invalid_rank_ends_the_set_up() -> None:
    # round2/nccl-log/amlk8s58-...: a launcher asking for rank 2 of 2
    line = ("job-pytorch-distr-nccl-1612503130-4b919e08-worker-1:25:25 [0] init.cc:981 NCCL WARN Invalid rank "
            "requested : 2/2\n")
    assert [(f.check, f.severity) for f in judge_text("nccl-log", line)] == [("nccl_error", "critical"),
                                                                             ("nccl_warn", "warning")]


def test_the_verbs_providers_completion_error_is_a_transport_error() -> None:
    # round2/nccl-log/accelerate2960-...: libmlx5's own line, then its CQE dump
    text = _text("SH-IDC1-10-140-24-106:147865:192085 [0] NCCL INFO Channel 01/1 : 0[0] -> 13[5] [send] via "
                 "NET/IB/0/GDRDMA/Shared",
                 "mlx5: SH-IDC1-10-140-24-95: got completion with error:",
                 "00000000 00000000 00000000 00000000")
    (f,) = judge_text("nccl-log", text)
    assert (f.check, f.severity) == ("nccl_transport", "critical") and "SH-IDC1-10-140-24-95" in f.message


def test_nccl_1_lines_are_read() -> None:
    # round2/nccl-log/mxnet9193-...: NCCL 1.3.4 prints its level words first, no host:pid head
    text = _text("INFO NCCL debug level set to INFO",
                 "NCCL version 1.3.4 compiled with CUDA 8.0",
                 "INFO rank 0 using device 0 (0000:06:00.0)",
                 "INFO rank access 0 -> 1 via P2P device mem",
                 "WARN src/reduce.cu:126 Cuda failure 'invalid resource handle'")
    assert _parse("nccl-log", text)["warnings"] == ["src/reduce.cu:126 Cuda failure 'invalid resource handle'"]
    assert next((f.check, f.severity) for f in judge_text("nccl-log", text)) == ("nccl_error", "critical")
    # without the 1.x banner such lines are no NCCL log
    import pytest
    from ccparse.common import ParseError

    with pytest.raises(ParseError):
        _parse("nccl-log", text.replace("NCCL version 1.3.4", "version 1.3.4"))


def test_xlas_nccl_operation_line_is_an_application_result() -> None:
    # round2/nccl-log/lwm44-...: XLA's error, the NCCL library missing (cut to its NCCL part)
    line = ("2024-02-23 23:00:08.992499: E external/xla/xla/pjrt/pjrt_stream_executor_client.cc:2732] Execution of "
            "replica 0 failed: INTERNAL: Failed to execute XLA Runtime executable: run time error: custom call "
            "'xla.gpu.reduce_scatter' failed: external/xla/xla/service/gpu/nccl_utils.cc:134: NCCL operation "
            "ncclGetUniqueId(&id) failed: Unable to load NCCL library. Multi-GPU collectives will not work..\n")
    (f, _warn) = judge_text("nccl-log", line)
    assert (f.check, f.severity) == ("nccl_error", "critical") and "application's NCCL call" in f.message


def test_no_verbs_library_is_a_note_only_where_nccl_says_one_node() -> None:
    # round2/nccl-log/detectron2-4730-...: the WARN, then NCCL falls back to sockets
    text = _text("cvlab189:1379562:1379562 [0] NCCL INFO Bootstrap : Using enp36s0f1:168.188.129.189<0>",
                 "cvlab189:1379562:1379562 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
                 "cvlab189:1379562:1379562 [0] NCCL INFO Using network Socket")
    assert [(f.check, f.severity) for f in judge_text("nccl-log", text) if f.check == "nccl_warn"] == \
        [("nccl_warn", "warning")]
    one = text + ("cvlab189:1379562:1379570 [0] NCCL INFO comm 0x55d1 rank 0 nRanks 2 nNodes 1 localRanks 2 "
                  "localRank 0\n")
    assert [(f.check, f.severity) for f in judge_text("nccl-log", one) if f.check == "nccl_warn"] == \
        [("nccl_warn", "info")]


def test_an_nccl_tests_banner_without_its_hash_marks_is_read() -> None:
    # round2/nccl-tests/nccltests208-...: a Markdown page took each '#' for a heading mark
    text = _text(
        "nThread 1 nGpus 2 minBytes 8 maxBytes 268435456 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
        "validation: 1 graph: 0",
        "",
        " Using devices",
        " Rank  0 Group  0 Pid 1896106 on noodle-4090-0 device  0 [0x16] NVIDIA GeForce RTX 4090",
        " Rank  1 Group  0 Pid 1896106 on noodle-4090-0 device  1 [0x34] NVIDIA GeForce RTX 4090",
        "",
        "noodle-4090-0:1896106:1896121 [1] enqueue.cc:47 NCCL WARN Cuda failure 'named symbol not found'")
    data = _parse("nccl-tests", text)
    assert (data["n_gpus_per_proc"], data["max_bytes"], len(data["devices"])) == (2, 268435456, 2)
    assert ("nccl_error", "critical") in [(f.check, f.severity) for f in judge_text("nccl-tests", text)]


# --- RDMA: a GID table without its VER column, ConnectX-3's v1 GIDs, an SR-IOV VF's netdev, old ibstatus ---

def test_show_gids_without_versions_and_of_connectx3() -> None:
    # round2/show_gids/gloo147-...: an old show_gids whose VER column is empty
    old = _text("DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV",
                "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---",
                "qedr0\t1\t0\tfe80:0000:0000:0000:020e:1eff:fed7:a021",
                "qedr0\t1\t1\t0000:0000:0000:0000:0000:ffff:c0a8:0a64\t192.168.10.100",
                "n_gids_found=2")
    assert judge_text("show_gids", old, {"fabric": "roce"}) == []
    # round2/show_gids/tf22077-...: the mlx4 port's GIDs are v1 only (a note); an mlx5 port so would be failed
    v1 = _text("DEV     PORT    INDEX   GID                                     IPv4            VER     DEV",
               "---     ----    -----   ---                                     ------------    ---     ---",
               "mlx4_0  1       0       fe80:0000:0000:0000:0202:c9ff:feb3:8421                 v1      eth2",
               "mlx4_0  1       1       0000:0000:0000:0000:0000:ffff:0c0c:0c0c 12.12.12.12     v1      eth2",
               "n_gids_found=2")
    assert [f.severity for f in judge_text("show_gids", v1, {"fabric": "roce"})] == ["info"]
    assert [f.severity for f in judge_text("show_gids", v1.replace("mlx4_0", "mlx5_0"), {"fabric": "roce"})] == \
        ["critical"]


def test_an_sr_iov_vfs_netdev_down_is_not_a_down_rail() -> None:
    # round2/ibdev2netdev/sriovdp-vf-setup-doc-...: right after 'echo 4 > .../sriov_numvfs'
    text = _text(
        "0000:02:00.0 mlx5_0 (MT4115 - MT1523X04353) CX456A - ConnectX-4 QSFP fw 12.23.1020 port 1 (ACTIVE) ==> "
        "enp2s0f0 (Up)",
        "0000:02:00.5 mlx5_2 (MT4116 - NA)  fw 12.23.1020 port 1 (DOWN  ) ==> enp2s0f2 (Down)")
    assert [(f.severity, f.subject) for f in judge_text("ibdev2netdev", text)] == [("info", "n1/mlx5_2/1")]
    # the physical function down: a down rail
    pf = text.replace("(ACTIVE) ==> enp2s0f0 (Up)", "(DOWN) ==> enp2s0f0 (Down)")
    assert "critical" in [f.severity for f in judge_text("ibdev2netdev", pf)]


def test_old_ibstatus_ports_without_a_link_layer_count_as_infiniband() -> None:
    # round2/ibstatus/ompiusers5781-...: OFED 1.x's ibstatus prints no link_layer line
    block = ("Infiniband device '{d}' port 1 status:\n"
             "        default gid:     fe80:0000:0000:0000:0030:487c:04b4:0001\n"
             "        base lid:        0x4fb\n"
             "        sm lid:          0x1\n"
             "        state:           4: ACTIVE\n"
             "        phys state:      5: LinkUp\n"
             "        rate:            20 Gb/sec (4X DDR)\n")
    text = block.format(d="mthca0") + block.format(d="mthca1")
    assert judge_text("ibstatus", text, {"fabric": "infiniband", "rdma_devices_per_node": 2}) == []


# --- a pasted capture whose shell prompt names its node: the findings say which node ---

def test_the_host_a_prompt_names_is_said_in_each_finding(tmp_path) -> None:
    from clusterctl.analysis.engine import analyze_dir

    # round2/proc-limits/fds5670-...: the operator's prompt on node n1
    text = _text("fds@n1:~$ sudo sysctl -w fs.inotify.max_user_watches=100000",
                 "fs.inotify.max_user_watches = 100000",
                 "fds@n1:~$ ulimit -l",
                 "64")
    assert _parse("proc-limits", text)["named_host"] == {"host": "n1", "by": "shell prompt"}
    (tmp_path / "pasted").mkdir()
    (tmp_path / "pasted" / "proc-limits.txt").write_text(text)
    (f,) = analyze_dir(str(tmp_path), {}).hosts["pasted"].findings
    assert f.severity == "warning" and f.message.endswith("[n1: the host the capture's shell prompt names]")
    # two hosts' prompts (or none): no host is named
    two = text.replace("fds@n1:~$ ulimit", "fds@n2:~$ ulimit")
    assert "named_host" not in _parse("proc-limits", two)
    # a parallel shell's prefix naming one host
    pdsh = _text("gpu017: [ 8123.456789] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.",
                 "gpu017: [ 8123.456800] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.")
    assert _parse("kernel-log", pdsh)["named_host"] == {"host": "gpu017", "by": "line prefix"}
