"""Session 14 (issue 29): a shell's ``ulimit -a`` read as the limits of a pasted process, a pasted finite memlock
above the defaults known to break RDMA registration recorded rather than judged, and Xid 44 from NVIDIA's Xid
catalog. The texts are written here in each shell's own layout (bash 5 ``builtins/ulimit.def``, zsh's
``-l: locked-in-memory size (kbytes)``); expected values are read off them."""

from __future__ import annotations

from ccparse import registry
from ccparse.detect import detect_kind
from conftest import judge_parsed

from clusterctl.analysis.model import Finding

BASH = """[user@gpu01 ~]$ ulimit -a
core file size          (blocks, -c) 0
data seg size           (kbytes, -d) unlimited
scheduling priority             (-e) 0
file size               (blocks, -f) unlimited
pending signals                 (-i) 1030576
max locked memory       (kbytes, -l) {memlock}
max memory size         (kbytes, -m) unlimited
open files                      (-n) 1024
pipe size            (512 bytes, -p) 8
POSIX message queues     (bytes, -q) 819200
real-time priority              (-r) 0
stack size              (kbytes, -s) 8192
cpu time               (seconds, -t) unlimited
max user processes              (-u) 4096
virtual memory          (kbytes, -v) unlimited
file locks                      (-x) unlimited
"""
ZSH = """% ulimit -a
-t: cpu time (seconds)              unlimited
-f: file size (blocks)              unlimited
-d: data seg size (kbytes)          unlimited
-s: stack size (kbytes)             8192
-c: core file size (blocks)         0
-m: resident set size (kbytes)      unlimited
-u: processes                       63445
-n: file descriptors                1024
-l: locked-in-memory size (kbytes)  {memlock}
-v: address space (kbytes)          unlimited
-x: file locks                      unlimited
"""


def judge(kind: str, text: str, spec: dict | None = None) -> tuple[dict, list[Finding]]:
    data = registry.parse(kind, text)
    return data, judge_parsed(kind, data, spec)


def test_bash_ulimit_a_with_the_kernel_default_64_kib_memlock_is_degraded() -> None:
    # 'max locked memory (kbytes, -l) 64': 64 KiB, the kernel's default, under which ibv_reg_mr fails
    data, fs = judge("proc-limits", BASH.format(memlock=64))
    assert data["limits"]["max_locked_memory"]["soft"] == 64 * 1024
    assert data["limits"]["open_files"]["soft"] == 1024
    assert [(f.severity, f.subject) for f in fs] == [("warning", "n1/process")]
    assert "ulimit -a" in fs[0].message and "64 KiB" in fs[0].message


def test_zsh_ulimit_a_unlimited_memlock_is_healthy_and_systemd_8_mib_is_not() -> None:
    data, fs = judge("proc-limits", ZSH.format(memlock="unlimited"))
    assert data["limits"]["max_locked_memory"]["soft"] is None and fs == []
    _data, fs = judge("proc-limits", ZSH.format(memlock=8192))  # systemd's DefaultLimitMEMLOCK: 8 MiB
    assert [f.severity for f in fs] == ["warning"]


def test_a_pasted_large_finite_memlock_is_degraded_as_slurmds_own_limit() -> None:
    # 5128731 KiB (about 4.9 GiB) in a shell's ulimit -a, 64 MiB in PID 1's /proc/1/limits (systemd#11448's paste):
    # finite, so a job's registrations are capped by it (session 21 withdrew session 14's note for such values)
    _data, fs = judge("proc-limits", BASH.format(memlock=5128731))
    assert [f.severity for f in fs] == ["warning"]
    text = ("Limit                     Soft Limit           Hard Limit           Units\n"
            "Max locked memory         67108864             67108864             bytes\n")
    _data, fs = judge("proc-limits", text)
    assert [f.severity for f in fs] == ["warning"] and "64 MiB" in fs[0].message
    text = ("# process: slurmd pid 812\n"
            "Limit                     Soft Limit           Hard Limit           Units\n"
            "Max locked memory         5251820544           5251820544           bytes\n")
    _data, fs = judge("proc-limits", text)
    assert [(f.severity, f.subject) for f in fs] == [("warning", "n1/slurmd")]


def test_ulimit_a_is_recognised_without_its_file_name() -> None:
    assert detect_kind(BASH.format(memlock=64)) == "proc-limits"
    assert detect_kind(ZSH.format(memlock="unlimited").split("\n", 1)[1]) == "proc-limits"
    # a short paste of the command and its one row
    assert detect_kind("$ ulimit -a | grep locked\nmax locked memory       (kbytes, -l) 64\n") == "proc-limits"


def test_xid_44_is_in_the_catalog_as_nvidia_rates_it() -> None:
    # NVIDIA's Xid catalog: 44 ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW, immediate action IGNORE (like 43): a note
    # naming the Xid, not the 'unknown Xid' warning
    text = "[   94.573839] NVRM: Xid (PCI:0000:08:00): 44, Ch 00000000, engmask 00000101, intr 10000000\n"
    _data, fs = judge("kernel-log", text)
    xid = [f for f in fs if "44" in f.message]
    assert xid and all(f.severity == "info" for f in xid)
    assert any("context switch" in f.message for f in xid)


def test_ipoib_netdevs_all_down_say_nothing_of_the_ib_ports_but_one_down_beside_an_up_one_is_a_rail() -> None:
    from conftest import corpus_capture

    # 'mlx5_0 port 1 ==> ibs108 (Down)' ... 'mlx5_7 port 1 ==> ibs114 (Down)': every IPoIB netdev of the host is
    # Down (IPoIB not in use); the BlueField-3 Ethernet ports and bond0 are Up: nothing is down that the host uses
    _data, fs = judge("ibdev2netdev", corpus_capture(
        "round2", "ibdev2netdev/stepmesh15-h20-ipoib-ibs-down-bf3-eth-up-bond0-prompt.txt"))
    assert len(fs) == 4 and {f.severity for f in fs} == {"info"}
    # 'mlx5_0 port 1 ==> ib0 (Down)' beside 'mlx5_1 port 1 ==> ib1 (Up)': IPoIB is in use, ib0's port is down;
    # 'mlx5_3 port 1 ==> enp23s0f1 (Down)' is an Ethernet rail down
    _data, fs = judge("ibdev2netdev", corpus_capture(
        "round2", "ibdev2netdev/ucx2534-ib0-down-ib1-up-enp23s0f1-down-prompt.txt"))
    assert {f.subject: f.severity for f in fs} == {"n1/mlx5_0/1": "critical", "n1/mlx5_3/1": "critical"}
    # a RoCE fabric stated: every Down netdev is a rail down, IPoIB or not (tests/unit/test_checks_network_states.py)
    _data, fs = judge("ibdev2netdev", corpus_capture(
        "round2", "ibdev2netdev/stepmesh15-h20-ipoib-ibs-down-bf3-eth-up-bond0-prompt.txt"), {"fabric": "roce"})
    assert len(fs) == 4 and {f.severity for f in fs} == {"critical"}


def test_sinfo_behind_a_site_wrapper_title_and_closing_note_is_read() -> None:
    # the vuw-partitions form (round2 raapoi-docs capture): a title line, one sinfo table per partition with
    # blank lines between, a closing 'NOTE:' paragraph whose indented 'sinfo -p PARTITION' is not a command run
    text = ("<user>@raapoi-login:~$ vuw-partitions\n\nVUW CLUSTER PARTITIONS\n"
            "PARTITION  AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
            "quicktest*    up    5:00:00      1  down* amd01n01\n"
            "quicktest*    up    5:00:00      2    mix amd01n[02-03]\n\n"
            "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
            "gpu          up 1-00:00:00      2   idle gpu[01,03]\n\n"
            "NOTE: This utility is a wrapper for the Slurm command:\n      sinfo -p PARTITION\n")
    data, fs = judge("sinfo", text)
    assert sorted(data["nodes"]) == ["amd01n01", "amd01n02", "amd01n03", "gpu01", "gpu03"]
    assert {f.subject for f in fs if f.severity == "critical"} == {"amd01n01"}
    # a closing paragraph is not read only where it holds no row: a row there whose count disagrees is read and
    # said (session 19: a coverage note, no longer a refusal of the whole table)
    data, _fs = judge("sinfo", text.replace("NOTE: This utility is a wrapper for the Slurm command:",
                                            "gpu up 1-00:00:00 3 idle gpu[01,03]"))
    assert len(data["cut"]) == 1 and "NODES says 3" in data["cut"][0]


def test_a_parenthesised_elision_is_a_cut_not_a_row() -> None:
    from conftest import corpus_capture

    # OzSTAR's guide: 'bryan2 ... idle' then '(...)' then 'john106 ... idle': the rows shown are judged
    data, fs = judge("sinfo", corpus_capture(
        "round2", "sinfo/ozstar-guide-sinfo-nl-2018-percent-prompt-elided-idle.txt"))
    assert sorted(data["nodes"]) == ["bryan1", "bryan2", "john106", "john107"]
    assert data.get("cut") and not [f for f in fs if f.severity != "info"]


def test_a_markdown_code_span_behind_a_prefix_indentation_or_prompt_is_undone() -> None:
    from conftest import corpus_capture

    # '`Unable to determine the device handle for GPU 0000:C1:00.0: GPU is lost.  Reboot ...`' (k8s-device-plugin
    # #231, 4 GPUs per node): the lost GPU fails the node, however the one line is pasted
    line = corpus_capture("round2", "nvidia-smi-q/k8sdp231-nvidia-smi-a-one-line-gpu-lost-c1-backticks.txt").strip()
    for text in (line, f"gpu-node07: {line}", f"    {line}", f"$ nvidia-smi -a\n{line}\n$",
                 f"```\n{line}\n```", f"  3: {line}"):
        data, fs = judge("nvidia-smi-q", text + "\n", {"gpus_per_node": 4})
        assert [g["bus_id"] for g in data["lost_gpus"]] == ["00000000:C1:00.0"], text
        assert any(f.severity == "critical" and "C1:00.0" in f.subject for f in fs), text


def test_a_host_prompt_and_ulimit_l_are_read() -> None:
    from conftest import corpus_capture

    # 'hsw228$ ulimit -l' / 'unlimited' / 'hsw228$ ulimit -a' / '... max locked memory (kbytes, -l) unlimited'
    data, fs = judge("proc-limits", corpus_capture(
        "round2", "proc-limits/tensorflow11392-hsw228-ulimit-l-and-a-memlock-unlimited.txt"))
    assert data["limits"]["max_locked_memory"]["soft"] is None and data["limits"]["open_files"]["soft"] == 4096
    assert fs == []
    data, fs = judge("proc-limits", "node1$ ulimit -l\n64\n")  # the kernel's 64 KiB default
    assert data["limits"]["max_locked_memory"]["soft"] == 65536 and [f.severity for f in fs] == ["warning"]


def test_an_application_xid_from_many_processes_on_one_gpu_is_degraded_but_one_program_is_its_own_fault() -> None:
    from conftest import corpus_capture

    # pytorch#51382: Xid 31 on PCI:0000:db:00 from pids 13641, 14323, 33275 (unnamed): recurring across jobs
    _data, fs = judge("kernel-log", corpus_capture(
        "round2", "kernel-log/pytorch51382-dmesg-T-xid43-3d-then-xid31-repeated-db-cut.txt"))
    db = [f for f in fs if "db:00" in f.subject]
    assert [f.severity for f in db] == ["warning"] and "3 different processes" in db[0].message
    # Xid 43 (3d:00, four pids) is not in the catalog's 'suspect the GPU if it recurs' class: a note
    assert {f.severity for f in fs if "3d:00" in f.subject} == {"info"}
    # Proton#8072: Xid 13 from three pids all named 'Warhammer 40000': the game faulting after each restart
    _data, fs = judge("kernel-log", corpus_capture(
        "seen", "kernel-log/proton8072-journal-b-p-err-no-hostname-xid13-game.txt"))
    assert {f.severity for f in fs} == {"info"}


def test_nccl_warnings_of_a_job_out_of_gpu_memory_judge_no_device() -> None:
    from conftest import corpus_capture

    # nccl#1235: 'Connection closed by remote peer', 'Socket recv failed', "Cuda failure 'out of memory'",
    # 'Failed to CUDA calloc 6291456 bytes': the ranks died of GPU memory, nothing names a faulty device
    _data, fs = judge("nccl-log", corpus_capture(
        "round2", "nccl-log/nccl1235-t2-narval-ng30903-peer-closed-then-cuda-oom-proxy-cut.txt"))
    assert [f.severity for f in fs if f.check == "nccl_warn"] == ["info"]
    assert not [f for f in fs if f.severity != "info"]


def test_a_down_port_finding_names_the_device_and_port_in_words() -> None:
    from conftest import corpus_capture

    # ompi#3907: 'port: 2' of mlx5_0 and of mlx4_0 PORT_DOWN
    _data, fs = judge("ibv_devinfo", corpus_capture(
        "round2", "ibv_devinfo/ompi3907-mlx5-mlx4-dual-port-port2-down-elided.txt"))
    msgs = [f.message for f in fs if f.severity == "critical"]
    assert any("mlx5_0 port 2" in m for m in msgs) and any("mlx4_0 port 2" in m for m in msgs)
