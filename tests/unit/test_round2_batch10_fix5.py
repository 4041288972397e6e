"""Round2 blind batch 10 (issue 29): capture habits and state classes of the seven rest misses, each with a
small excerpt written from its capture (tests/corpus/round2/...); expected values read off the capture."""

from __future__ import annotations

from ccparse import registry

# --- one reading layer: Open MPI --tag-output prefix behind a Markdown list's indentation ----------


def test_mpi_tag_output_prefix_behind_indentation_is_stripped() -> None:
    # nccl-tests/awsome-eks-p5-2node-mpi-stdout-prefix-indented-elided.txt: a README list indents every
    # '[1,0]<stdout>:' line by 3 spaces, the author's '...' carries no prefix
    text = (
        "   [1,0]<stdout>:#                                     out-of-place                       in-place\n"
        "   [1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong\n"
        "   [1,0]<stdout>:#        (B)    (elements)                               (us)  (GB/s)  (GB/s)      "
        "      (us)  (GB/s)  (GB/s)\n"
        "   [1,0]<stdout>:           0             0     float     sum      -1    15.51    0.00    0.00      0"
        "    15.52    0.00    0.00      0\n"
        "   ...\n"
        "   [1,0]<stdout>:  2147483648     536870912     float     sum      -1   9197.5  233.49  437.79      0"
        "   9195.2  233.54  437.89      0\n"
        "   [1,0]<stdout>:# Out of bounds values : 0 OK\n"
        "   [1,0]<stdout>:# Avg bus bandwidth    : 52.9753\n"
    )
    data = registry.parse("nccl-tests", text)
    assert data["largest"]["size_bytes"] == 2147483648
    assert data["busbw_largest_GBps"] == 437.79
    assert data["wrong_total"] == 0
    assert data["out_of_bounds"] == 0


# --- judged: an NVRM line returning NV_ERR_RESET_REQUIRED is a GPU that needs a reset -----------------


def test_nvrm_reset_required_without_gpu_name_is_failed() -> None:
    # kernel-log/drak8s982-gb200-nvassert-reset-required-one-line.txt: one dmesg line, no PCI address
    from clusterctl.analysis.checks.kernel_log import judge_kernel_log

    line = ("[373871.354096] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED] "
            "(0x00000062) returned from status @ kernel_channel.c:2827\n")
    data = registry.parse("kernel-log", line)
    findings = judge_kernel_log("n1", data, {}).findings
    assert [(f.check, f.severity, f.subject) for f in findings] == [("kernel_gpu", "critical", "n1")]
    assert "NV_ERR_RESET_REQUIRED" in findings[0].message
    # a line naming the GPU by bus id names it in the finding
    named = registry.parse("kernel-log", "[ 12.5] NVRM: GPU 0000:1b:00.0: rpcSendMessage failed with status "
                                         "0x00000062 (Reset required)\n")
    assert [f.subject for f in judge_kernel_log("n1", named, {}).findings] == ["n1/0000:1b:00.0"]


# --- no expectation, yet healthy: validation off and no floor judges nothing ---------------------------


_TCPX = (
    "    nThread 1 nGpus 1 minBytes 8388608 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 200 "
    "agg iters: 1 validation: {v} graph: 0\n"
    "    \n"
    "           size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw"
    " #wrong\n"
    "            (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
    "         8388608        131072     float    none      -1    784.9   10.69   10.02      0    775.9   10.81   10.14"
    "      0\n"
    "      8589934592     134217728     float    none      -1   160505   53.52   50.17      0   160117   53.65   50.29"
    "      0\n"
    "    Out of bounds values : 0 OK\n"
    "    Avg bus bandwidth    : 40.6043\n"
)


def test_nccl_tests_validation_off_without_floor_is_cannot_judge() -> None:
    # nccl-tests/dstack-gcp-a3high-tcpx-allgather-validation0-4space-indent.txt: '#' stripped, 4-space indent,
    # 'validation: 0' (-c 0), no GPU model nor floor in the capture
    from clusterctl.analysis.checks.nccl import judge_nccl_tests

    data = registry.parse("nccl-tests", _TCPX.format(v=0))
    assert data["validation"] == 0
    assert data["busbw_largest_GBps"] == 50.17
    findings = judge_nccl_tests("n1", data, {}).findings
    assert [(f.check, f.severity) for f in findings] == [("nccl_wrong", "info")]
    assert findings[0].message.startswith("cannot judge: needs nccl_busbw_floor_GBps")
    # validated (-c 1): #wrong 0 is a checked result, the run stays judged (no 'cannot judge')
    checked = judge_nccl_tests("n1", registry.parse("nccl-tests", _TCPX.format(v=1)), {}).findings
    assert not any(f.message.startswith("cannot judge") for f in checked)


# --- one reading layer: srun --label 'N: ' on the NCCL lines of a job log ------------------------------


def test_nccl_log_lines_behind_srun_label_prefix_are_read() -> None:
    # nccl-log/awsome-fsdp-llama3-p5-4node-srun-prefix-ofi-1.13-elided.txt: set -x lines without prefix,
    # training and NCCL lines behind srun's '0: ' / '1: ' / '2: '
    from clusterctl.analysis.checks.nccl import judge_nccl_log

    text = (
        "+ export TORCHRUN=torchrun\n"
        "...\n"
        "0: 2025-06-17 16:23:09 I [train.py:156] Creating Model\n"
        "1: p5-dy-gpu-3:47930:47930 [0] NCCL INFO NCCL version 2.26.2+cuda12.2\n"
        "1: p5-dy-gpu-3:47936:47936 [6] NCCL INFO cudaDriverVersion 12080\n"
        "2: p5-dy-gpu-4:930643:930850 [7] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.13.2-aws\n"
        "2: p5-dy-gpu-4:930643:930850 [7] NCCL INFO NET/OFI Using Libfabric version 1.22\n"
        "...\n"
        "0: 2025-06-17 16:24:52 I [train.py:103] Batch 0 Loss: 11.61653, Speed: 4.88 samples/sec, lr: 0.000100\n"
    )
    data = registry.parse("nccl-log", text)
    assert data["lines"] == 4
    assert (data["version"], data["cuda"]) == ("2.26.2", "12.2")
    assert not [f for f in judge_nccl_log("n1", data, {}).findings if f.severity != "info"]


# --- prose between records; link state judged: quoted header lines without index, NO-CARRIER ----------


def test_ip_link_headers_quoted_between_prose_without_index_judged_no_carrier() -> None:
    # ip-link/clusterlabs235-eth0-no-carrier-vlan-lowerlayerdown-prose.txt: numbered prose lines, each header
    # indented 4 spaces and without its 'N:' index or link/ line; eth0 up without carrier, a VLAN whose bond is down
    from clusterctl.analysis.checks.roce import ip_link_mtu

    text = ("1). when the wire is unplugged from network interface\n"
            "    eth0: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 qdisc mq state DOWN   qlen 1000\n"
            " 2). when lower layer is down for a VLAN\n"
            "    vlan2@bond0: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 qdisc noqueue state LOWERLAYERDOWN\n")
    data = registry.parse("ip-link", text)
    assert [(ln["ifname"], ln["parent"], ln["mtu"], ln["state"], ln["carrier"], ln["index"])
            for ln in data["links"]] == [("eth0", None, 1500, "DOWN", False, None),
                                         ("vlan2", "bond0", 1500, "LOWERLAYERDOWN", False, None)]
    assert data["truncated"] is True
    found = [(f.check, f.severity, f.subject) for f in ip_link_mtu("n1", data, {})]
    assert found == [("netdev_link", "warning", "n1/eth0")]
    # prose that only looks like a header (no numeric mtu) stays prose
    assert registry.parse("ip-link", "Note: <see below> mtu unknown\n" + text)["links"][0]["ifname"] == "eth0"


def test_full_listing_no_carrier_on_spare_port_is_not_judged() -> None:
    # a full listing (it starts with lo) shows every port, used or not: a spare port without carrier is no finding
    from clusterctl.analysis.checks.roce import ip_link_mtu

    text = ("1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000\n"
            "    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n"
            "2: eth0: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 qdisc mq state DOWN mode DEFAULT qlen 1000\n"
            "    link/ether 52:54:00:12:34:56 brd ff:ff:ff:ff:ff:ff\n")
    assert list(ip_link_mtu("n1", registry.parse("ip-link", text), {})) == []


# --- no line rate known: a result just above a standard rate is no evidence of a faster port ----------


def test_ib_write_bw_just_above_nominal_rate_is_cannot_judge_not_half_of_the_next() -> None:
    # ib_write_bw/superbench-ib-loopback-ib0-8m-server-client-interleaved.txt: client and server blocks of one
    # loopback on ib0, 8388608 B, BW average 24056.72 MB/sec (perftest's MB is 2^20 B: 201.8 Gb/s); no port rate
    from clusterctl.analysis.checks.perftest import judge_ib_write_bw

    block = (
        "                    RDMA_Write BW Test\n"
        " Dual-port       : OFF\t\tDevice         : ib0\n"
        " Link type       : IB\n"
        "---------------------------------------------------------------------------------------\n"
        " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
        " 8388608    20000            24056.74            24056.72\t\t   0.003007\n"
        "---------------------------------------------------------------------------------------\n"
    )
    data = registry.parse("ib_write_bw", block + block)
    assert round(data["bw_avg_gbps"], 1) == round(24056.72 * 2**20 * 8 / 1e9, 1) == 201.8
    findings = judge_ib_write_bw("n1", data, {}).findings
    assert [(f.check, f.severity) for f in findings] == [("ib_write_bw", "info")]
    assert findings[0].message.startswith("cannot judge: needs ib_rate_gbps")
    # well above a standard rate (260 Gb/s: at least a 400 Gb/s port) the lower bound still judges it
    slow = {**data, "bw_avg_gbps": 260.0}
    assert [f.severity for f in judge_ib_write_bw("n1", slow, {}).findings] == ["warning"]


# --- judged: an all-zero GID on a RoCE port is no routable GID ------------------------------------------


def test_ib_write_bw_roce_all_zero_gid_without_result_is_failed() -> None:
    # ib_write_bw/k8srdmasriov32-hca-mode-quoted-header-gid-zero-redacted.txt: banner quoted with '> ', Link type
    # Ethernet, GID index 0, both address lines' GIDs all zero, keys redacted, no result row
    from clusterctl.analysis.checks.perftest import judge_ib_write_bw

    zero = ":".join(["00"] * 16)
    text = (">                     RDMA_Write BW Test\n"
            ">  Dual-port       : OFF\t\tDevice         : mlx5_0\n"
            ">  Link type       : Ethernet\n"
            ">  GID index       : 0\n"
            "\n"
            "---------------------------------------------------------------------------------------\n"
            " local address: LID 0000 xxx\n"
            f" GID: {zero}\n"
            " remote address: LID 0000 xxx\n"
            f" GID: {zero}\n")
    data = registry.parse("ib_write_bw", text)
    assert (data["device"], data["link_type"], data["gid_index"]) == ("mlx5_0", "Ethernet", 0)
    assert data["local_gid"] == data["remote_gid"] == zero and data["results"] == []
    findings = judge_ib_write_bw("n1", data, {}).findings
    assert [(f.check, f.severity, f.subject) for f in findings] == [("roce_v2_gid", "critical", "n1/mlx5_0")]
    # a routable GID (IPv4-mapped, as perftest prints it) with no result row is a cut paste: nothing judged
    mapped = text.replace(f" GID: {zero}\n", " GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:00:00:01\n")
    (f,) = judge_ib_write_bw("n1", registry.parse("ib_write_bw", mapped), {}).findings
    assert f.check == "coverage" and f.severity == "info"
