"""Session 19 (issue 29): general rules found in the rest misses of blind batches 47-49; expected values are
read off the text of each capture (quoted here, with the corpus file it comes from)."""

from __future__ import annotations

from ccparse import registry
from conftest import judge_text

# round2/ibdev2netdev/linuxrdma2019-qperf-...: a site's wrapper ('ib2netdev') prints the address after the state
IB2NETDEV = """       [rdma@rdmarhel0 tmp]$ ib2netdev
       mlx5_0 port 1 ==> ens801f0 (Up) 173.168.100.101
       mlx5_1 port 1 ==> ens801f1 (Up) 192.168.100.101
       [rdma@rdmarhel0 tmp]$
"""


def test_ibdev2netdev_rows_with_the_netdev_address_after_the_state() -> None:
    rows = registry.parse("ibdev2netdev", IB2NETDEV)["mappings"]
    assert [(r["device"], r["netdev"], r["link"], r.get("address")) for r in rows] == [
        ("mlx5_0", "ens801f0", "Up", "173.168.100.101"), ("mlx5_1", "ens801f1", "Up", "192.168.100.101")]
    assert judge_text("ibdev2netdev", IB2NETDEV) == []
    down = IB2NETDEV.replace("ens801f1 (Up)", "ens801f1 (Down)")
    assert [f.severity for f in judge_text("ibdev2netdev", down)] == ["critical"]


def test_a_prompt_with_a_cluster_name_joined_by_a_dash() -> None:
    # round2/nvidia-smi-nvlink/unigehpc3741-...: '(baobab)-[root@gpu048 ~]$ nvidia-smi nvlink -s'
    text = ("(baobab)-[root@gpu048 ~]$ nvidia-smi nvlink -s\n"
            "GPU 0: NVIDIA RTX A6000 (UUID: GPU-1b574915-9e55-3096-1fdb-d32d0754017c)\n"
            "\t Link 0: 14.062 GB/s\n\t Link 1: 14.062 GB/s\n")
    gpus = registry.parse("nvidia-smi-nvlink", text)["gpus"]
    assert [(g["index"], len(g["links"])) for g in gpus] == [(0, 2)]


GB10 = """+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 580.95.05              Driver Version: 580.95.05      CUDA Version: 13.0     |
+-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA GB10                    On  |   0000000F:01:00.0  On |                  N/A |
| N/A   45C    P0             11W /  N/A  | Not Supported          |     10%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+
"""


def test_a_gpu_sharing_host_memory_prints_not_supported_for_its_memory() -> None:
    # round2/nvidia-smi/obrienlabs-dgx-spark-gb10-...: DGX Spark's GB10 has no memory of its own to report
    gpus = registry.parse("nvidia-smi", GB10)["gpus"]
    assert [(g["index"], g["name"], g.get("memory_used_mib")) for g in gpus] == [(0, "NVIDIA GB10", None)]
    assert judge_text("nvidia-smi", GB10) == []


def _log(*lines: str) -> str:
    return "".join(f"{ln}\n" for ln in lines)


def test_gdr_off_on_the_ib_devices_nccl_uses_is_degraded_without_a_fabric() -> None:
    # round2/nccl-log/nccl1537-...: rank 0 of 16 ('nranks 16': more ranks than a node has), RoCE, GDR disabled
    text = _log(
        "hostname1:25668:27396 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; "
        "OOB x:10.10.10.10<0>",
        "hostname1:25668:27396 [0] NCCL INFO Using network IB",
        "hostname1:25668:27396 [0] NCCL INFO comm 0x55cc8aa86c70 rank 0 nranks 16 cudaDev 0 nvmlDev 0 busId 1c000 "
        "commId 0x65e0bd6ee7449db4 - Init START",
        "hostname1:25668:27396 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'",
        "hostname1:25668:27396 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1'")
    found = judge_text("nccl-log", text)
    assert [(f.check, f.severity) for f in found] == [("nccl_gdr", "warning")]
    assert "mlx5_0, mlx5_1" in found[0].message
    # 8 ranks on one host: one node, GDR is not on its data path
    assert judge_text("nccl-log", text.replace("nranks 16", "nranks 8")) == []


def test_show_gids_rows_wrapped_after_their_gid() -> None:
    # round2/show_gids/linuxrdma2019-bnxtre-...: a mail wrapped each row after the GID ('[IPv4] v2 netdev' below it)
    text = ("DEV    PORT    INDEX    GID                    IPv4         VER DEV\n"
            "---    ----    -----    ---                    ------------ ---    ---\n"
            "bnxt_re0    1    6    0000:0000:0000:0000:0000:ffff:ac1f:28bb \n"
            "172.31.40.187     v1    bnxt_roce\n"
            "bnxt_re0    1    7    0000:0000:0000:0000:0000:ffff:ac1f:28bb \n"
            "172.31.40.187     v2    bnxt_roce\n"
            "bnxt_re1    1    0    fe80:0000:0000:0000:020a:f7ff:fee3:6e33         \n"
            "v1    lom_2\n"
            "bnxt_re1    1    1    fe80:0000:0000:0000:020a:f7ff:fee3:6e33         \n"
            "v2    lom_2\n"
            "n_gids_found=4\n")
    gids = registry.parse("show_gids", text)["gids"]
    assert [(g["device"], g["index"], g["ipv4"], g["roce_version"], g["netdev"]) for g in gids] == [
        ("bnxt_re0", 6, "172.31.40.187", 1, "bnxt_roce"), ("bnxt_re0", 7, "172.31.40.187", 2, "bnxt_roce"),
        ("bnxt_re1", 0, None, 1, "lom_2"), ("bnxt_re1", 1, None, 2, "lom_2")]
    # bnxt_re1 has link-local GIDs only beside bnxt_re0's v2 GID: the port cannot carry RoCE v2
    assert [(f.check, f.subject) for f in judge_text("show_gids", text)] == [("roce_v2_gid", "n1/bnxt_re1/1")]


# round2/nvidia-smi/te1363-...: '$ nvidia-smi -L' and eight such lines (two kept here)
LISTING = ("$ nvidia-smi -L\n"
           "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-3ede3ca0-38ae-e999-bee2-95b79e12296f)\n"
           "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-7112490b-626a-f7a8-fefa-9dc618703986)\n")


def test_nvidia_smi_dash_l_listing_states_the_count_and_nothing_else() -> None:
    data = registry.parse("nvidia-smi", LISTING)
    assert [(g["index"], g["name"], g["uuid"]) for g in data["listed"]] == [
        (0, "NVIDIA H100 80GB HBM3", "GPU-3ede3ca0-38ae-e999-bee2-95b79e12296f"),
        (1, "NVIDIA H100 80GB HBM3", "GPU-7112490b-626a-f7a8-fefa-9dc618703986")]
    # no expectation: nothing to judge (said as coverage, not a parse failure)
    assert [(f.check, f.severity) for f in judge_text("nvidia-smi", LISTING)] == [("coverage", "info")]
    # with gpus_per_node the listed count is judged
    assert judge_text("nvidia-smi", LISTING, {"gpus_per_node": 2}) == []
    assert [(f.check, f.severity) for f in judge_text("nvidia-smi", LISTING, {"gpus_per_node": 8})] == [
        ("gpu_count", "critical")]


def test_sinfo_nodelist_wrapped_onto_the_next_line_is_joined() -> None:
    # round2/sinfo/awsomedt-hyperpod-...: the 15-node alloc row's NODELIST goes on with ',ip-10-1-63-78,...'
    text = ("PARTITION     AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
            "dev*             up   infinite      1   fail ip-10-1-16-50\n"
            "dev*             up   infinite      4  alloc ip-10-1-10-50,ip-10-1-25-242\n"
            ",ip-10-1-65-[134,171]\n")
    data = registry.parse("sinfo", text)
    assert data["partitions"][1]["hosts"] == ["ip-10-1-10-50", "ip-10-1-25-242", "ip-10-1-65-134", "ip-10-1-65-171"]
    assert "cut" not in data
    assert [(f.subject, f.severity) for f in judge_text("sinfo", text)] == [("ip-10-1-16-50", "critical")]


def test_query_noheader_after_a_labelled_command_and_arrow_notes() -> None:
    # round2/nvidia-smi-query/dcgm263-...: the command, then noheader rows, one with the author's '<=' note
    text = ("nvidia-smi --query-gpu=index,gpu_recovery_action --format=csv,noheader\n"
            "0, None\n"
            "1, Reset   <= GPU is unusable, reset required \n"
            "2, None\n")
    data = registry.parse("nvidia-smi-query", text)
    assert [(g["index"], g["recovery_action"]) for g in data["gpus"]] == [(0, "None"), (1, "Reset"), (2, "None")]
    found = judge_text("nvidia-smi-query", text)  # (and the count note: the rows state no expectation)
    assert [(f.subject, f.severity) for f in found if f.severity != "info"] == [("n1/gpu1", "critical")]
    # round2/nvidia-smi-query/megaminer235-...: the paster's 'command:' and '... output:' label lines
    labelled = ("command: \n./nvidia-smi.exe --query-gpu=gpu_name,temperature.gpu,pstate --format=csv,noheader\n\n"
                "nvidia-SMI.exe output:\nGeForce GTX 770, 52, P0\n")
    gpus = registry.parse("nvidia-smi-query", labelled)["gpus"]
    assert [(g["name"], g["temperature_c"]["gpu"]) for g in gpus] == [("GeForce GTX 770", 52.0)]


def test_old_drivers_rm_init_adapter_lines_name_no_gpu_and_a_bar_left_unassigned() -> None:
    # round2/kernel-log/pai4344-...: the driver could not initialise the GPU behind /dev/nvidia0 (no bus id)
    old = ("[   38.773115] NVRM: RmInitAdapter failed! (0x26:0xffff:1127)\n"
           "[   38.773764] NVRM: rm_init_adapter failed for device bearing minor number 0\n")
    found = judge_text("kernel-log", old)
    assert {(f.subject, f.severity) for f in found} == {("n1", "critical"), ("n1/GPU0", "critical")}
    # round2/kernel-log/rebaruefi252-...: the firmware left BAR1 unassigned; the driver refuses the GPU
    bar = ("[   43.223730] NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:\n"
           "               NVRM: BAR1 is 0M @ 0x0 (PCI:0000:01:00.0)\n")
    assert [(f.subject, f.severity) for f in judge_text("kernel-log", bar)] == [("n1/0000:01:00.0", "critical")]


def test_an_nvidia_smi_q_excerpt_of_its_bar1_section_holds_nothing_to_judge() -> None:
    # round2/nvidia-smi-q/rebaruefi48-...: 'nvidia-smi -q | grep -i bar -A 3'
    text = ("nvidia-smi -q | grep -i bar -A 3\n    BAR1 Memory Usage\n"
            "        Total                             : 32768 MiB\n"
            "        Used                              : 2 MiB\n"
            "        Free                              : 32766 MiB\n")
    assert [f.severity for f in judge_text("nvidia-smi-q", text)] == ["info"]
