"""Session 25 (issue 29): captures as Ansible, kubectl and ts print them, and nvidia-smi without its library's loader.

Expected values are read off the text of each capture (quoted here, with the source it comes from); the wrapping
around it is the one the named tool prints (Ansible's default callback, ``kubectl logs --prefix``, moreutils ts)."""

from __future__ import annotations

import json

import pytest
from ccparse import detect
from ccparse.capture import clean_capture
from conftest import finding_keys as _checks
from conftest import judge_text, parse_text
from conftest import text_of as _text

# round2/ibstat/magnate3k8ssriov-cx6-mlx5_5-initializing-linkup-rate200-lid65535-sm-lid0-no-prompt.txt
# (magnate3/linux-riscv-dev, exercises2/soft-roce/mellanox/k8s-rdma-sriov.md): port 1 of mlx5_5 stuck in
# Initializing (no subnet manager: SM lid 0)
IBSTAT = [
    "CA 'mlx5_5'",
    "        CA type: MT4123",
    "        Number of ports: 1",
    "        Firmware version: 20.30.1004",
    "        Hardware version: 0",
    "        Node GUID: 0x08c0eb0300ea50e6",
    "        System image GUID: 0x08c0eb0300ea50e6",
    "        Port 1:",
    "                State: Initializing",
    "                Physical state: LinkUp",
    "                Rate: 200",
    "                Base lid: 65535",
    "                LMC: 0",
    "                SM lid: 0",
    "                Capability mask: 0x2651e848",
    "                Port GUID: 0x08c0eb0300ea50e6",
    "                Link layer: InfiniBand",
]
#: what the capture says: the port is not ACTIVE, the node cannot use its only HCA
INIT_PORT = [("ib_port_state", "critical", "n1/mlx5_5/1")]


def test_the_plain_capture_gives_the_finding_the_wrapped_ones_must_give() -> None:
    assert _checks(judge_text("ibstat", _text(*IBSTAT))) == INIT_PORT


# --- Ansible: what its users paste is the task's result, not the command's output ---

def _v_result(status: str, host: str, result: dict[str, object]) -> str:
    """A task's result as ``ansible-playbook -v`` prints it: the whole result as JSON on the host's line."""
    head = f"{status}: [{host}]: FAILED! => " if status == "fatal" else f"{status}: [{host}] => "
    return head + json.dumps(result, sort_keys=True)


def test_an_ansible_v_result_is_read_as_its_command_output() -> None:
    out = "\n".join(IBSTAT)
    paste = _text(
        "TASK [Show the HCA] ************************************************************",
        _v_result("changed", "gpu-node07", {"changed": True, "cmd": ["ibstat"], "delta": "0:00:00.011", "rc": 0,
                                             "stderr": "", "stderr_lines": [], "stdout": out,
                                             "stdout_lines": out.split("\n")}),
        "",
        "PLAY RECAP *********************************************************************",
        "gpu-node07                 : ok=2    changed=1    unreachable=0    failed=0    skipped=0    rescued=0    "
        "ignored=0")
    assert clean_capture(paste, "ibstat").hosts == ["gpu-node07"]
    assert _checks(judge_text("ibstat", paste)) == INIT_PORT


def test_an_ansible_debug_of_a_registered_result_is_read_as_its_command_output() -> None:
    paste = _text(
        "TASK [debug] *******************************************************************",
        "ok: [gpu-node07] => {",
        '    "ibstat_out.stdout_lines": [',
        *[f"        {json.dumps(ln)}," for ln in IBSTAT[:-1]],
        f"        {json.dumps(IBSTAT[-1])}",
        "    ]",
        "}")
    assert clean_capture(paste, "ibstat").hosts == ["gpu-node07"]
    assert _checks(judge_text("ibstat", paste)) == INIT_PORT


def test_a_debug_of_the_whole_registered_result_takes_its_stdout() -> None:
    result = {"changed": True, "cmd": "ibstat", "rc": 0, "stderr": "", "stdout": "\n".join(IBSTAT)}
    shown = json.dumps(result, indent=4).replace("\n", "\n    ")
    paste = "ok: [gpu-node07] => {\n    \"ibstat_out\": " + shown + "\n}\n"
    assert _checks(judge_text("ibstat", paste)) == INIT_PORT


# the loader's own error when nvidia-smi's library is missing (a mock-NVML project's troubleshooting notes, code
# index id 37696162966, "Library Not Found": `nvidia-smi: error while loading shared libraries: libnvidia-ml.so.1:
# cannot open shared object file`); the rest of the line is the loader's (glibc ld.so)
LOADER = ("nvidia-smi: error while loading shared libraries: libnvidia-ml.so.1: cannot open shared object file: "
          "No such file or directory")


@pytest.mark.parametrize("kind", ["nvidia-smi", "nvidia-smi-q", "nvidia-smi-query"])
def test_nvidia_smi_whose_library_the_loader_cannot_find_is_a_failed_node(kind: str) -> None:
    assert _checks(judge_text(kind, LOADER + "\n")) == [("gpu_driver", "critical", "n1")]


def test_a_failed_ansible_task_is_read_from_its_stderr() -> None:
    paste = _v_result("fatal", "gpu-node07", {"changed": True, "cmd": ["nvidia-smi"], "msg": "non-zero return code",
                                              "rc": 127, "stderr": LOADER, "stderr_lines": [LOADER], "stdout": "",
                                              "stdout_lines": []}) + "\n"
    assert _checks(judge_text("nvidia-smi", paste)) == [("gpu_driver", "critical", "n1")]
    assert detect.detect_kind(paste) == "nvidia-smi"


def test_a_result_without_command_output_stays_as_it_is() -> None:
    # a debug message of one line is Ansible's own text, not a capture: nothing is taken out of it
    paste = 'ok: [gpu-node07] => {\n    "msg": "all GPUs present"\n}\n'
    assert clean_capture(paste, "nvidia-smi").text == paste


# --- kubectl logs --prefix and moreutils ts: one prefix on every line ---

# round2/nvidia-smi-nvlink/aznhc-a100-gpu6-nvml-all-links-inactive.txt (Azure/azurehpc-health-checks,
# test/data/bad_nvlink_status.txt): GPU 6's NVLinks all inactive
NVLINK = ["GPU 6: NVIDIA A100-SXM4-80GB (UUID: GPU-9667d95e-6d22-0c22-1f57-c481f13e7c44)",
          "NVML: Unable to retrieve NVLink information as all links are inactive"]


def test_nvlink_capture_as_is_fails_gpu_6() -> None:
    assert [c for c, _s, _sub in _checks(judge_text("nvidia-smi-nvlink", _text(*NVLINK)))] == ["gpu_nvlink"]


def test_ts_time_before_every_line_is_taken_off() -> None:
    # 'Mar 05 10:21:00 GPU 6: NVIDIA ...' is no journal line of host 'GPU' (a journal's tag never starts with a digit)
    stamped = _text(*[f"Mar 05 10:21:{i:02d} {ln}" for i, ln in enumerate(NVLINK)])
    assert [c for c, _s, _sub in _checks(judge_text("nvidia-smi-nvlink", stamped))] == ["gpu_nvlink"]
    # ibstat's 'Physical state: LinkUp' behind the time reads like a journal's host and tag: the time is still the
    # prefix of every line
    stamped = _text(*[f"Mar 05 10:21:{i:02d} {ln.strip()}" for i, ln in enumerate(IBSTAT)])
    assert _checks(judge_text("ibstat", stamped)) == INIT_PORT


def test_kubectl_logs_prefix_is_taken_off_and_its_pod_recorded() -> None:
    paste = _text(*[f"[pod/ibcheck-x7k2p/ibstat] {ln}" for ln in IBSTAT])
    assert clean_capture(paste, "ibstat").hosts == ["pod/ibcheck-x7k2p/ibstat"]
    assert _checks(judge_text("ibstat", paste)) == INIT_PORT


def test_a_journal_line_keeps_its_host() -> None:
    cleaned = clean_capture(_text(*[f"Dec 05 10:21:33 gpu-node07 healthcheck.sh[4242]: {ln}" for ln in IBSTAT]),
                            "ibstat")
    assert cleaned.hosts == ["gpu-node07"] and cleaned.text.split("\n")[0] == "CA 'mlx5_5'"


# --- Ansible's YAML result format (callback_result_format = yaml; community.general's yaml callback) ---

def test_a_yaml_result_is_read_from_its_stdout_block() -> None:
    paste = _text(
        "TASK [Show the HCA] ************************************************************",
        "changed: [gpu-node07] => changed=true ",
        "  cmd:",
        "  - ibstat",
        "  delta: '0:00:00.011'",
        "  rc: 0",
        "  stderr: ''",
        "  stderr_lines: <omitted>",
        "  stdout: |-",
        *[f"    {ln}" for ln in IBSTAT],
        "  stdout_lines: <omitted>",
        "",
        "PLAY RECAP *********************************************************************")
    assert clean_capture(paste, "ibstat").hosts == ["gpu-node07"]
    assert _checks(judge_text("ibstat", paste)) == INIT_PORT


def test_a_yaml_debug_message_list_is_read() -> None:
    quoted = [f"'{ln}'" if ln.startswith(" ") else ln for ln in IBSTAT]  # YAML quotes a line that starts blank
    paste = _text("ok: [gpu-node07] => ", "  msg:", *[f"  - {q}" for q in quoted])
    assert _checks(judge_text("ibstat", paste)) == INIT_PORT


def test_a_failed_yaml_result_is_read_from_its_stderr() -> None:
    paste = _text("fatal: [gpu-node07]: FAILED! => changed=true ", "  cmd:", "  - nvidia-smi",
                  "  msg: non-zero return code", "  rc: 127", f"  stderr: '{LOADER}'", "  stderr_lines: <omitted>",
                  "  stdout: ''", "  stdout_lines: <omitted>")
    assert _checks(judge_text("nvidia-smi", paste)) == [("gpu_driver", "critical", "n1")]


# --- kernel log: errors the kernel's AER injector wrote are a test; an RDMA device the core cannot open ---

# round2/kernel-log/linuxpci2020-rcec-rfc-aer-inject-fatal-malf-tlp-rciep-ed-01.0-igen6-edac-recovery-successful-
# tab-indent.txt (lore.kernel.org/linux-pci/20200724172223.145608-1-sean.v.kelley@intel.com, test 4's log)
INJECTED = [
    "[  535.537281] pcieport 0000:ed:00.4: aer_inject: Injecting errors 00000000/00040000 into device 0000:ed:01.0",
    "[  535.551911] pcieport 0000:ed:00.4: AER: Uncorrected (Fatal) error received: 0000:ed:01.0",
    "[  535.561556] igen6_edac 0000:ed:01.0: AER: PCIe Bus Error: severity=Uncorrected (Fatal), type=Inaccessible, "
    "(Unregistered Agent ID)",
    "[  535.684964] igen6_edac 0000:ed:01.0: AER: device recovery successful"]


def test_aer_errors_the_injector_wrote_are_not_judged() -> None:
    assert _checks(judge_text("kernel-log", _text(*INJECTED))) == [("kernel_pcie", "info", "n1/0000:ed:01.0")]
    # the same fatal error without the injector's line is the device's own: failed
    assert ("kernel_pcie", "critical", "n1/0000:ed:01.0") in _checks(judge_text("kernel-log", _text(*INJECTED[1:])))


# round2/kernel-log/stable2022-hns-roce-bd-00.2-reset-reinit-cmdq-move-tail-mailbox-timeout-couldnt-open-port-1-
# indented-elided.txt (lore.kernel.org/stable/20220607164948.066082191@linuxfoundation.org, the commit message's log)
HNS = ["hns3 0000:bd:00.2: In reset process RoCE client reinit.",
       "hns3 0000:bd:00.2 hns_2: failed to set gid, ret = -11!",
       "hns3 0000:bd:00.2: [cmd]token 14e mailbox 20 timeout.",
       "hns3 0000:bd:00.2 hns_2: failed to alloc mtpt, ret = -16.",
       "infiniband hns_2: Couldn't create ib_mad PD",
       "infiniband hns_2: Couldn't open port 1",
       "hns3 0000:bd:00.2: Reset done, RoCE client reinit finished."]


def test_an_rdma_device_the_core_cannot_open_fails_its_function() -> None:
    # the RDMA core names the device ('infiniband hns_2:'), the driver's earlier line its function
    assert ("kernel_net", "critical", "n1/0000:bd:00.2") in _checks(judge_text("kernel-log", _text(*HNS)))


# --- NCCL: a trace up from the net transport's connect; no interface to listen on ---

# round2/nccl-log/nccl697-dgxa100-16-channels-send-via-net-socket-then-net-h-25-system-error-chain-cut.txt
# (NVIDIA/nccl#697): the send channels set up over sockets, then ncclSystemError climbing from the transport's connect
NET_CONNECT = ["dgxa100:1050:1315 [0] NCCL INFO Channel 14/0 : 0[90000] -> 1[1000] [send] via NET/Socket/6",
               "dgxa100:1050:1315 [0] NCCL INFO Channel 15/0 : 0[90000] -> 1[1000] [send] via NET/Socket/7",
               "dgxa100:1050:1316 [0] NCCL INFO include/net.h:25 -> 2",
               "dgxa100:1050:1316 [0] NCCL INFO transport/net.cc:515 -> 2"]


def test_a_trace_from_the_net_transports_connect_is_a_failed_call() -> None:
    assert ("nccl_error", "critical", "n1") in _checks(judge_text("nccl-log", _text(*NET_CONNECT)))


# round2/nccl-log/nccl929-wsl-docker-master-masked-ip-no-interface-in-same-subnet-no-usable-listening-interface.txt
# (NVIDIA/nccl#929)
NO_LISTEN = ["d9beab19e6d2:1791:1791 [0] misc/socket.cc:237 NCCL WARN Net : No interface found in the same subnet as "
             "remote address a.b.c.d0<1778>",
             "d9beab19e6d2:1791:1791 [0] bootstrap.cc:39 NCCL WARN NET/Socket : No usable listening interface found"]


def test_no_interface_to_listen_on_ends_the_set_up() -> None:
    assert ("nccl_error", "critical", "n1") in _checks(judge_text("nccl-log", _text(*NO_LISTEN)))


# --- scontrol: a grep'd Reason= alone ---

# round2/scontrol-node/ecconotes-cornell-biohpc-show-nodes-cbsueccosl04-grep-reason-one-line-kill-task-failed-no-node-
# name.txt (labordynamicsinstitute/ecco-notes, docs/commands/manage_slurm.md: 'scontrol show nodes=... | grep Reason')
def test_a_grepd_reason_alone_is_a_node_drained_at_least() -> None:
    found = judge_text("scontrol-node", "Reason=Kill task failed [root@2025-02-21T18:19:11]\n")
    assert _checks(found) == [("slurm_node_state", "warning", "n1")] and "Kill task failed" in found[0].message


# --- ip -j: the JSON form is the same listing ---

# a laptop's `ip -j link show` kept as a Rust Wi-Fi tool's (ruwi) parser fixture (code index id 30542712580)
IP_J = ('[{"ifindex":1,"ifname":"lo","flags":["LOOPBACK","UP","LOWER_UP"],"mtu":65536,"qdisc":"noqueue",'
        '"operstate":"UNKNOWN","linkmode":"DEFAULT","group":"default","txqlen":1000,"link_type":"loopback",'
        '"address":"00:00:00:00:00:00","broadcast":"00:00:00:00:00:00"},{"ifindex":2,"ifname":"enp0s25",'
        '"flags":["NO-CARRIER","BROADCAST","MULTICAST","UP"],"mtu":1500,"qdisc":"fq_codel","operstate":"DOWN",'
        '"linkmode":"DEFAULT","group":"default","txqlen":1000,"link_type":"ether","address":"f0:de:f1:62:d0:54",'
        '"broadcast":"ff:ff:ff:ff:ff:ff"},{"ifindex":3,"ifname":"wlp3s0","flags":["NO-CARRIER","BROADCAST",'
        '"MULTICAST","UP"],"mtu":1500,"qdisc":"mq","operstate":"DOWN","linkmode":"DORMANT","group":"default",'
        '"txqlen":1000,"link_type":"ether","address":"ae:05:f8:e3:df:67","broadcast":"ff:ff:ff:ff:ff:ff"}]')
#: the same three links as the text form prints those fields
IP_TEXT = _text(
    "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000",
    "    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00",
    "2: enp0s25: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 qdisc fq_codel state DOWN mode DEFAULT group default "
    "qlen 1000",
    "    link/ether f0:de:f1:62:d0:54 brd ff:ff:ff:ff:ff:ff",
    "3: wlp3s0: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 qdisc mq state DOWN mode DORMANT group default qlen 1000",
    "    link/ether ae:05:f8:e3:df:67 brd ff:ff:ff:ff:ff:ff")


def test_ip_j_is_read_as_the_text_listing() -> None:
    as_json, as_text = parse_text("ip-link", IP_J), parse_text("ip-link", IP_TEXT)
    assert as_json["json"] is True and [ln["ifname"] for ln in as_json["links"]] == ["lo", "enp0s25", "wlp3s0"]
    keys = ("index", "ifname", "flags", "mtu", "qdisc", "state", "mode", "group", "qlen", "carrier", "link_type",
            "address")
    assert [{k: ln[k] for k in keys} for ln in as_json["links"]] == [{k: ln[k] for k in keys}
                                                                      for ln in as_text["links"]]
    spec = {"rdma_netdevs": ["enp0s25"]}
    assert _checks(judge_text("ip-link", IP_J, spec)) == _checks(judge_text("ip-link", IP_TEXT, spec)) != []
    assert detect.detect_kind(IP_J) == "ip-link"


# --- rdma link (iproute2): the RDMA ports' own states, read under the ibdev2netdev KIND ---

# a RoCE tuning note's `rdma link` (iproute2 before 5.0: numbered lines; code index id 230446621): two Intel iWARP
# ports (no physical state) and two ConnectX-4 ports, mlx5_0's disabled
RDMA_LINK_OLD = _text("rdma link",
                      "0/1: i40iw0/1: state DOWN physical_state NOP",
                      "1/1: i40iw1/1: state ACTIVE physical_state NOP",
                      "2/1: mlx5_0/1: state DOWN physical_state DISABLED netdev ens803f0",
                      "3/1: mlx5_1/1: state ACTIVE physical_state LINK_UP netdev ens803f1")
# a DGX Spark's four RoCE ports after `nmcli con up` (a setup guide's 'RoCEv2 Sanity'; code index id 66437643194)
RDMA_LINK_SPARK = _text("root@gx10-4a61:/home/andrew# rdma link",
                        "link rocep1s0f0/1    state ACTIVE physical_state LINK_UP netdev enp1s0f0np0",
                        "link rocep1s0f1/1    state ACTIVE physical_state LINK_UP netdev enp1s0f1np1",
                        "link roceP2p1s0f0/1  state ACTIVE physical_state LINK_UP netdev enP2p1s0f0np0",
                        "link roceP2p1s0f1/1  state ACTIVE physical_state LINK_UP netdev enP2p1s0f1np1")


def test_rdma_link_ports_are_judged_as_port_states() -> None:
    assert _checks(judge_text("ibdev2netdev", RDMA_LINK_OLD)) == [("ib_port_state", "critical", "n1/i40iw0/1"),
                                                                  ("ib_port_state", "critical", "n1/mlx5_0/1")]
    data = parse_text("ibdev2netdev", RDMA_LINK_SPARK)
    assert data["rdma_link"] is True and [d["name"] for d in data["devices"]] == [
        "rocep1s0f0", "rocep1s0f1", "roceP2p1s0f0", "roceP2p1s0f1"]
    assert data["devices"][2]["ports"][0]["netdev"] == "enP2p1s0f0np0"
    assert _checks(judge_text("ibdev2netdev", RDMA_LINK_SPARK)) == []
    assert detect.detect_kind(RDMA_LINK_SPARK) == "ibdev2netdev"


# --- quoting, comments and WSL (blind batch 100's rest) ---

# round2/nvidia-smi/zyanham-mytools-vitisai-notes-gt-prefixed-535.113.01-rtx3060-08-00-fan-err-31c-p0-xorg.txt
# (zyanham/MyTools, AMD_WS/VitisAI/v3.5/README.md): the bare command, the table quoted with '> ', the author's own
# '#' notes after it (unquoted)
RTX3060 = _text(
    "nvidia-smi",
    "> +---------------------------------------------------------------------------------------+",
    "> | NVIDIA-SMI 535.113.01             Driver Version: 535.113.01   CUDA Version: 12.2     |",
    "> |-----------------------------------------+----------------------+----------------------+",
    "> | GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |",
    "> | Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |",
    "> |                                         |                      |               MIG M. |",
    "> |=========================================+======================+======================|",
    "> |   0  NVIDIA GeForce RTX 3060        Off | 00000000:08:00.0  On |                  N/A |",
    "> |ERR!   31C    P0              45W / 170W |    482MiB / 12288MiB |      0%      Default |",
    "> |                                         |                      |                  N/A |",
    "> +-----------------------------------------+----------------------+----------------------+",
    "# Ubuntu22.04インストール時に3rd Partyのグラフィックドライバも入れたので、デフォルトでnvidia-smiが実行できた。")


def test_a_quoted_paste_with_the_authors_notes_after_it_is_read() -> None:
    found = judge_text("nvidia-smi", RTX3060)
    assert _checks(found) == [("gpu_field_error", "critical", "n1/gpu0")] and "fan.speed 'ERR!'" in found[0].message


# round2/nvidia-smi/ygo74-searchbot-wsl-docker-470.223.02-under-474.64-geforce-3gb-fan-err-0c-util-na-four-space-
# indent.txt (ygo74/searchbot, docs/00-setup-environment/index.md): WSL 2 (NVIDIA-SMI 470.223.02 under the Windows
# driver 474.64), whose driver reads no fan
WSL_FAN = _text(
    "+-----------------------------------------------------------------------------+",
    "| NVIDIA-SMI 470.223.02   Driver Version: 474.64       CUDA Version: 11.4     |",
    "|-------------------------------+----------------------+----------------------+",
    "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |",
    "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |",
    "|                               |                      |               MIG M. |",
    "|===============================+======================+======================|",
    "|   0  NVIDIA GeForce ...  Off  | 00000000:01:00.0 N/A |                  N/A |",
    "|ERR!    0C    P8    N/A /  N/A |    351MiB /  3072MiB |     N/A      Default |",
    "|                               |                      |                  N/A |",
    "+-------------------------------+----------------------+----------------------+")


def test_a_fan_wsl_does_not_report_is_a_note() -> None:
    assert _checks(judge_text("nvidia-smi", WSL_FAN)) == [("gpu_field_error", "info", "n1/gpu0")]
    # the same row on a Linux host (one version twice) is a GPU whose fan NVML cannot read
    linux = WSL_FAN.replace("Driver Version: 474.64  ", "Driver Version: 470.223.02")
    assert _checks(judge_text("nvidia-smi", linux)) == [("gpu_field_error", "critical", "n1/gpu0")]


# round2/dcgmi-diag/jingchaozhang-ib-perf-drop-blog-dcgm3.3.9-550.90.07-r-eud-only-h100x8-eud-test-pass-all-no-
# deployment-section.txt (jingchaozhang.github.io/IB-Perf-Drop-Investigation): '-r eud' prints its metadata rows
# without the Metadata section's title row
EUD = _text(
    "$ dcgmi diag -r eud",
    "+---------------------------+------------------------------------------------+",
    "| Diagnostic                | Result                                         |",
    "+===========================+================================================+",
    "| DCGM Version              | 3.3.9                                          |",
    "| Driver Version Detected   | 550.90.07                                      |",
    "| GPU Device IDs Detected   | 2330,2330,2330,2330,2330,2330,2330,2330         |",
    "| EUD Test Version          | eud.550.26                                     |",
    "| EUD Test                  | Pass - All                                     |",
    "+---------------------------+------------------------------------------------+")


def test_an_eud_run_alone_is_read_with_its_metadata() -> None:
    data = parse_text("dcgmi-diag", EUD)
    assert data["dcgm_version"] == "3.3.9" and data["driver_version"] == "550.90.07"
    assert [(r["test"], r["gpu"], r["status"]) for r in data["results"]] == [("EUD Test", g, "Pass") for g in range(8)]
    assert _checks(judge_text("dcgmi-diag", EUD)) == []


# round2/nvidia-smi-q-xml/aixcontainer-zju-xmlutils-slash-commented-440.31-quadro-p5000-fan-unknown-error-beside-k20c-
# v10-dtd.txt (Eric-Ma-C/AIXContainer, XmlUtils.java): the XML kept as '//' comments after the class that reads it
def test_a_paste_commented_out_with_slashes_is_read() -> None:
    xml = _text("//    <?xml version=\"1.0\" ?>",
                "//<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v10.dtd\">",
                "//<nvidia_smi_log>",
                "//        <driver_version>440.31</driver_version>",
                "//        <attached_gpus>1</attached_gpus>",
                "//        <gpu id=\"00000000:03:00.0\">",
                "//    <product_name>Quadro P5000</product_name>",
                "//                <fan_speed>Unknown Error</fan_speed>",
                "//        </gpu>",
                "//</nvidia_smi_log>")
    assert ("gpu_field_error", "critical", "n1/gpu0") in _checks(judge_text("nvidia-smi-q-xml", xml))


# --- ansible ad hoc: -o's one line a host, a module's JSON result ---

def test_ansible_one_line_output_is_read() -> None:
    # `ansible gpu -m command -a ibstat -o`: '<host> | CHANGED | rc=0 | (stdout) ' and the output, newlines as '\n'
    paste = "gpu-node07 | CHANGED | rc=0 | (stdout) " + "\\n".join(IBSTAT) + "\n"
    assert clean_capture(paste, "ibstat").hosts == ["gpu-node07"]
    assert _checks(judge_text("ibstat", paste)) == INIT_PORT


def test_an_ad_hoc_modules_json_result_is_read() -> None:
    out = "\n".join(IBSTAT)
    paste = "gpu-node07 | CHANGED => " + json.dumps({"changed": True, "rc": 0, "stdout": out,
                                                     "stdout_lines": IBSTAT}) + "\n"
    assert _checks(judge_text("ibstat", paste)) == INIT_PORT


# round2/scontrol-node/conoha-slurm-rest-api-postmortem-l4-gpu-worker-two-lines-idle-drain-dynamic-norm-invalid-reg-
# gres-0-lt-1.txt (crowdy/conoha-cli-app-samples, docs/postmortems/2026-05-14-slurm-rest-api-gpu-worker.md)
def test_a_grepd_state_and_reason_without_the_node_name_are_judged() -> None:
    found = judge_text("scontrol-node", _text("State=IDLE+DRAIN+DYNAMIC_NORM+INVALID_REG",
                                              "Reason=gres/gpu count reported lower than configured (0 < 1)"))
    assert _checks(found) == [("slurm_node_state", "critical", "n1")]


# --- lspci: an adapter in flash recovery ---

# round2/lspci/sthforum41103-ebay-cx455a-one-line-code-block-connectx4-flash-recovery-memory-controller.txt
# (forums.servethehome.com, threads/flashing-blank-cx455a-to-something-useful.41103, post-388520)
def test_an_adapter_enumerating_as_its_flash_recovery_device_is_failed() -> None:
    line = "02:00.0 Memory controller: Mellanox Technologies MT27700 Family [ConnectX-4 Flash Recovery]\n"
    found = judge_text("lspci", line)
    assert _checks(found) == [("pcie_device", "critical", "n1/0000:02:00.0")] and "Flash Recovery" in found[0].message
    # the same family running its firmware is an Infiniband controller, nothing to say
    assert _checks(judge_text("lspci", "02:00.0 Infiniband controller: Mellanox Technologies MT27700 Family "
                                       "[ConnectX-4]\n")) == []
