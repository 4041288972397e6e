"""Verdicts on round2 rest captures of blind batches 13 and 14 that the parsers of their merge judged wrong
(issue 29, session 13): each test reads one capture and asserts what an operator reads in it (values taken
from the capture, not from the parser's output)."""

from __future__ import annotations

import pytest
from ccparse import registry
from ccparse.common import ParseError
from conftest import corpus_capture, judge_parsed

from clusterctl.analysis.model import Finding


def capture(rel: str) -> str:
    """The capture text after the ``# corpus-`` header lines."""
    return corpus_capture("round2", rel)


def judge(kind: str, text: str, spec: dict | None = None) -> tuple[object, list[Finding]]:
    data = registry.parse(kind, text)
    return data, judge_parsed(kind, data, spec)


def test_sinfo_list_reasons_has_no_state_column_and_every_node_it_lists_is_out() -> None:
    # 'REASON USER TIMESTAMP NODELIST' / 'Low socket*core*thre root 2019-05-07T18:16:10 ip-10-0-1-[6-7]':
    # sinfo -R lists only nodes down, drained, fail or failing; the reason (cut at 20 columns) names CPUs
    data, fs = judge("sinfo", capture("sinfo/awsplugin10-sinfo-R-low-socket-core-thread-truncated-reason.txt"))
    assert sorted(data["nodes"]) == ["ip-10-0-1-6", "ip-10-0-1-7"]  # type: ignore[index]
    assert {f.subject for f in fs if f.severity == "critical"} == {"ip-10-0-1-6", "ip-10-0-1-7"}
    # the long form (sinfo(1): --long --list-reasons "%20E %12U %19H %6t %N"): a reason with spaces, then STATE
    text = ("REASON               USER         TIMESTAMP           STATE  NODELIST\n"
            "Not responding       slurm(64030) 2024-02-01T10:00:00 down*  gpu[01-02]\n"
            "maintenance window   root(0)      2024-02-01T11:00:00 drain  gpu03\n")
    data, fs = judge("sinfo", text)
    assert data["nodes"]["gpu03"]["reasons"] == ["maintenance window"]  # type: ignore[index]
    assert {f.subject: f.severity for f in fs} == {"gpu01": "critical", "gpu02": "critical", "gpu03": "warning"}


def test_proc_limits_row_grepped_without_its_header_is_read() -> None:
    # '[root@node008 ~]# cat /proc/3844/limits  | grep locked' / 'Max locked memory 65536 65536 bytes': slurmd's
    # 64 KiB memlock cap, inherited by every job (RDMA registration fails): degraded, not unreadable
    data, fs = judge("proc-limits", capture("proc-limits/trinityx188-slurmd-proc-limits-grep-locked-64k-no-header.txt"))
    assert data["limits"]["max_locked_memory"] == {"soft": 65536, "hard": 65536, "unit": "bytes"}  # type: ignore[index]
    assert [f.severity for f in fs] == ["warning"]


def test_nccl_2_0_lines_without_the_nccl_word_are_read() -> None:
    # 'ml-gpu-ser015:2123:2230 [3] include/socket.h:194 WARN Call to recv failed : Connection reset by peer' and
    # 'ml-gpu-ser015:2123:2230 [3] INFO transport/net_ib.cu:555 -> 2' (NCCL 2.x, 2018): two ranks' WARN lines
    data, fs = judge("nccl-log", capture(
        "nccl-log/horovod210-nccl2-old-format-socket-recv-connection-reset-by-peer-net-ib.txt"))
    assert data["hosts"] == ["ml-gpu-ser015"]  # type: ignore[index]
    assert data["warnings"][:1] == ["Call to recv failed : Connection reset by peer"]  # type: ignore[index]
    assert fs and all(f.severity in ("warning", "critical") for f in fs)
    # without the host prefix a bare 'WARN ...' line is not NCCL's
    with pytest.raises(ParseError, match="no 'NCCL INFO'"):
        registry.parse("nccl-log", "WARN something else\nINFO other\n")


def test_xml_pasted_from_inside_the_report_is_read_as_an_excerpt() -> None:
    # netdata#2922 starts at '<bridge_chip_type>N/A</bridge_chip_type>' inside <pci>, '</pci>' closes it;
    # '<replay_counter>0</replay_counter>', '<fan_speed>0 %</fan_speed>', cut in <fb_memory_usage>
    text = capture("nvidia-smi-q-xml/netdata2922-387.12-gtx1060-mid-xml-space-indented-pci-to-fb-memory.txt")
    data, fs = judge("nvidia-smi-q-xml", text)
    (gpu,) = data["gpus"]  # type: ignore[index]
    assert data["excerpt"] is True and gpu["bus_id"] is None  # type: ignore[index]
    assert gpu["pcie"]["replays"] == 0
    assert not [f for f in fs if f.severity in ("warning", "critical")]
    # the same excerpt with an error token where the fan speed was: judged, not unreadable
    _, fs = judge("nvidia-smi-q-xml", text.replace("<fan_speed>0 %</fan_speed>", "<fan_speed>ERR!</fan_speed>"))
    assert [f.severity for f in fs if f.severity == "critical"] == ["critical"]
    # telegraf#12996 starts inside <retired_pages>: '<gpu_temp>32 C</gpu_temp>'
    data, _ = judge("nvidia-smi-q-xml", capture(
        "nvidia-smi-q-xml/telegraf12996-531.41-rtx3080ti-wddm-mid-xml-retired-pages-to-clocks.txt"))
    assert data["gpus"][0]["temperature_c"]["gpu"] == 32  # type: ignore[index]


def test_ibstatus_lower_rate_of_another_makers_nic_is_not_a_downgraded_rail() -> None:
    # mlx5_0 'default gid: fe80:...:0216:3eff:fe43:ac58' (a 00:16:3e virtual NIC) 'rate: 200 Gb/sec (4X HDR)';
    # mlx5_1/mlx5_2 'fe80:...:5e25:73ff:...' 'rate: 400 Gb/sec (4X NDR)': ibstatus names no HCA model
    text = capture("ibstatus/deepep17-h20-bf3-roce-400-plus-200-front-cut-in-mlx5_3.txt")
    _, fs = judge("ibstatus", text)
    assert not [f for f in fs if f.check == "ib_port_rate"]
    # the same 200 Gb/s port with the rails' vendor prefix: a rail trained below its siblings
    _, fs = judge("ibstatus", text.replace("0216:3eff:fe43:ac58", "5e25:73ff:fe43:ac58"))
    assert [(f.check, f.subject, f.severity) for f in fs] == [("ib_port_rate", "n1/mlx5_0/1", "warning")]


def test_no_rdma_device_at_all_fails_against_the_inventory_and_cannot_be_judged_without_it() -> None:
    # '[root@node045 ~]# ibstatus' / "Fatal error:  device '*': sys files not found (/sys/class/infiniband/*/ports)"
    text = capture("ibstatus/trinity219-fatal-error-sys-files-not-found.txt")
    data, fs = judge("ibstatus", text, {"rdma_devices_per_node": 1})
    assert data["devices"] == []  # type: ignore[index]
    assert [(f.check, f.severity) for f in fs] == [("ib_hca_count", "critical")]
    _, fs = judge("ibstatus", text)
    assert [(f.check, f.severity) for f in fs] == [("ib_hca_count", "info")]
    assert fs[0].message.startswith("cannot judge: needs rdma_devices_per_node")
    # ibv_devinfo's own words for the same host: never healthy without the inventory either
    _, fs = judge("ibv_devinfo", "No IB devices found\n")
    assert fs[0].message.startswith("cannot judge: needs rdma_devices_per_node")


def test_grep_numbers_harness_log_and_ray_prefixes_come_off() -> None:
    from ccparse.capture import clean_capture

    # grep -b: '3879:CA \'mlx5_19\'' (a match) and '3892-   CA type: MT4120' (context): the CA is read, no port
    data, fs = judge("ibstat", capture("ibstat/ucx8905-grep-b-byte-offsets-mlx5_19-header-only-cut-before-port.txt"))
    assert [d["name"] for d in data["devices"]] == ["mlx5_19"]  # type: ignore[index]
    assert [f.check for f in fs] == ["coverage"] and fs[0].message.startswith("cannot judge: nothing judgeable")
    # an ISO date is not a grep number; an ip link listing's '2: eth0:' neither
    dated = "2019-07-16 03:43:24,132 a\n2019-07-16 03:43:25,132 b\n"
    assert clean_capture(dated, "kernel-log").text == dated
    # Avocado's job.log: '2019-07-16 03:43:24,134 process L0458 DEBUG| [stdout]  #bytes #iterations ...'
    data, fs = judge("ib_write_bw", capture("ib_write_bw/avocado1196-job-log-prefixed-send-bw-mgid-1024b-row.txt"))
    assert [(r["bytes"], r["iterations"]) for r in data["results"]] == [(1024, 1000)]  # type: ignore[index]
    assert fs[0].message.startswith("cannot judge: needs ib_rate_gbps")
    # Ray: '(ReferenceModelRayActor pid=5823, ip=10.164.227.153) [rank0]:[E1225 ... ProcessGroupNCCL.cpp:616] ...'
    data, _ = judge("nccl-log", capture(
        "nccl-log/openrlhf624-ray-actor-ip-prefix-watchdog-allgather-timeout-repeated-14x.txt"))
    assert [(t["rank"], t["seq"], t["op"]) for t in data["pg_timeouts"]][:1] == [(0, 17284, "_ALLGATHER_BASE")]  # type: ignore[index]


def test_time_report_and_a_second_runs_header_under_a_directory_prompt() -> None:
    # '~ $  time nvidia-smi --query-gpu=gpu_name,...', two rows, bash's 'real\t0m0,022s' / 'user' / 'sys', then a
    # second run's prompt and header
    data, fs = judge("nvidia-smi-query", capture(
        "nvidia-smi-query/bpytop26-gtx1080ti-gtx1060-time-prompt-header-echoed-cut-in-second-run.txt"))
    assert [g["name"] for g in data["gpus"]] == ["GeForce GTX 1080 Ti", "GeForce GTX 1060 6GB"]  # type: ignore[index]
    assert not [f for f in fs if f.severity in ("warning", "critical")]


def test_xid_named_as_the_cause_of_a_later_xid_is_judged() -> None:
    # 'NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149' (the
    # Xid 149 line itself is not in the paste): NVLink NETIR error on dc:00
    text = capture("kernel-log/ogkm1150-kernel-xid45-caused-by-previous-xid149-145-four-gpus.txt")
    data, fs = judge("kernel-log", text)
    assert {(x["pci"], x["xid"], x["cause_xid"]) for x in data["xids"]} >= {("0000:dc:00", 45, 149)}  # type: ignore[index]
    critical = {f.subject for f in fs if f.severity == "critical"}
    assert "n1/0000:dc:00.0" in critical
    # the same lines without the driver's 'caused by' note: application teardown only (Xid 45 is a note)
    _, fs = judge("kernel-log", "\n".join(ln.split(" caused by")[0] for ln in text.splitlines()))
    assert not [f for f in fs if f.severity == "critical"]
    # with the cause's own line present, it is counted once
    both = "kernel: NVRM: Xid (PCI:0000:dc:00): 149, pid=1, name=python3, NETIR\n" + text
    _, fs = judge("kernel-log", both)
    (x149,) = [f for f in fs if f.message.startswith("Xid 149 (")]
    assert "1 time(s)" in x149.message


def test_dcgmi_refusing_to_run_for_mig_and_a_table_after_a_prolog_or_in_comments() -> None:
    # '% dcgmi diag -i 0 -r 1' / "GPU 2's MIG configuration is incompatible with the diagnostic because it ..."
    data, fs = judge("dcgmi-diag", capture("dcgmi-diag/dcgm70-3.1.3-i0-r1-mig-config-incompatible-gpu2.txt"))
    assert data["not_run"].startswith("GPU 2's MIG configuration is incompatible")  # type: ignore[index]
    assert [f.message.split(":")[0] for f in fs] == ["cannot judge"]
    # a Slurm prolog's lines before the table and 'Successfully started recording stats for 232.' after it
    data, fs = judge("dcgmi-diag",
                     capture("dcgmi-diag/uberprof-slurm-prolog-r1-blacklist-1gpu-aws-deployment-pass.txt"))
    assert len(data["tests"]) == 9 and not fs  # type: ignore[index]
    # the table inside a Python '# ' comment block: 'EUD Test | Skip - All' among passes
    data, _ = judge("dcgmi-diag",
                    capture("dcgmi-diag/ramble-dcgm3.3.9-570-h200x8-hash-commented-r3-all-pass-eud-skip.txt"))
    assert data["dcgm_version"] == "3.3.9" and any(t["test"] == "EUD Test" for t in data["tests"])  # type: ignore[index]
    # a non-table line inside an open table is still a parse error
    with pytest.raises(ParseError):
        registry.parse("dcgmi-diag", "| Diagnostic | Result |\n| Blacklist | Pass |\nsomething else\n| NVML | Pass |\n")
