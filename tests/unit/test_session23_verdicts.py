"""Session 23 (issue 29): rules and readings of this session; expected values are read off the text of each
capture (quoted here, with the corpus file it comes from)."""

from __future__ import annotations

from conftest import judge_text


def _text(*lines: str) -> str:
    return "".join(f"{ln}\n" for ln in lines)


def _parse(kind: str, text: str) -> dict:
    from ccparse import registry

    return registry.parse(kind, text, salvage=True)


def _checks(findings: list) -> list[tuple[str, str, str]]:
    return [(f.check, f.severity, f.subject) for f in findings]


# --- nvidia-smi -q: a vGPU guest without its licence ---

# round2/nvidia-smi-q/gpuoperator220-okd-vgpu-guest-q-excerpt-vgpu-software-licensed-product-vcs-unlicensed.txt
# (NVIDIA/gpu-operator#220)
UNLICENSED = _text(
    "    vGPU Software Licensed Product",
    "        Product Name                      : NVIDIA Virtual Compute Server",
    "        License Status                    : Unlicensed")


def test_an_unlicensed_vgpu_guest_is_degraded() -> None:
    (gpu,) = _parse("nvidia-smi-q", UNLICENSED)["gpus"]
    assert gpu["vgpu_license"] == {"product": "NVIDIA Virtual Compute Server", "status": "Unlicensed"}
    assert _checks(judge_text("nvidia-smi-q", UNLICENSED)) == [("gpu_vgpu", "warning", "n1/gpu0")]
    licensed = UNLICENSED.replace("Unlicensed", "Licensed (Expiry: 2023-3-8 2:59:59 GMT)")
    assert not [f for f in judge_text("nvidia-smi-q", licensed) if f.check == "gpu_vgpu"]
    # the older drivers' section name
    grid = UNLICENSED.replace("vGPU Software Licensed Product", "GRID Licensed Product")
    assert _checks(judge_text("nvidia-smi-q", grid)) == [("gpu_vgpu", "warning", "n1/gpu0")]


# --- nvidia-smi -i N -q: the report of the GPU the command selects ---

# round2/nvidia-smi-q/sirzzang-blog-rtx-pro-6000-i1-d-ecc-key-excerpt-dram-uncorrectable-2-volatile-and-aggregate.txt
SELECTED = _text(
    "my-user@gpu-node-a:~$ nvidia-smi -i 1 -q -d ECC",
    "ECC Mode",
    "    Current                  : Enabled",
    "    Pending                  : Enabled",
    "ECC Errors",
    "    Volatile",
    "        SRAM Correctable     : 0",
    "        DRAM Correctable     : 0",
    "        DRAM Uncorrectable   : 2",
    "    Aggregate",
    "        DRAM Uncorrectable   : 2")


def test_the_gpu_a_shown_command_selects_names_the_report() -> None:
    (f,) = judge_text("nvidia-smi-q", SELECTED)
    assert (f.check, f.severity, f.subject) == ("gpu_ecc", "critical", "n1/gpu1")
    # without the command the one block is the report's first GPU
    (f,) = judge_text("nvidia-smi-q", SELECTED.split("\n", 1)[1])
    assert f.subject == "n1/gpu0"


# --- nvidia-smi table trimmed to each GPU's first row ---

# round2/nvidia-smi/28gpucluster-2080ti-gpu-03-580.126.09-user-trimmed-identity-rows-7-of-8-gpus.txt
_BUSES = ("1B", "1C", "1D", "1E", "3D", "40", "41")
TRIMMED = _text(
    "+-----------------------------------------------------------------------------------------+",
    "| NVIDIA-SMI 580.126.09   Driver Version: 580.126.09   CUDA Version: 13.0               |",
    "+-----------------------------------------+------------------------+----------------------+",
    *(f"|   {i}  NVIDIA GeForce RTX 2080 Ti     Off |   00000000:{bus}:00.0 Off |                  N/A |"
      for i, bus in enumerate(_BUSES)),
    "+-----------------------------------------------------------------------------------------+")


def test_a_table_of_first_rows_lists_its_gpus_and_judges_their_count() -> None:
    gpus = _parse("nvidia-smi", TRIMMED)["gpus"]
    assert [g["bus_id"] for g in gpus] == [f"00000000:{b}:00.0" for b in _BUSES]
    assert all(g["cut_after_first_row"] and g["temperature_c"]["gpu"] is None for g in gpus)
    (f,) = judge_text("nvidia-smi", TRIMMED, {"gpus_per_node": 8})
    assert (f.check, f.severity) == ("gpu_count", "critical") and "7 GPU(s)" in f.message
    # no expected count: names and bus ids only, nothing judged (not healthy)
    (f,) = judge_text("nvidia-smi", TRIMMED)
    assert f.check == "coverage" and "first table row only" in f.message


def test_a_first_row_followed_by_anything_else_is_still_refused() -> None:
    from ccparse.common import ParseError

    bad = TRIMMED.replace("|   1  NVIDIA", "| what is this | 1  NVIDIA", 1)
    try:
        _parse("nvidia-smi", bad.split("\n", 4)[0] + "\n" + "\n".join(bad.split("\n")[1:5]) + "\n| garbage |\n")
    except ParseError:
        pass
    else:  # salvage may read around it, but never as a second row of GPU 0
        gpus = _parse("nvidia-smi", TRIMMED.replace(TRIMMED.splitlines()[4], "| garbage |"))["gpus"]
        assert all(g.get("fan_pct") is None for g in gpus)


# --- kernel log: GPU peer memory that cannot load; GSP boot given up; a chip id of all ones ---

# round2/kernel-log/nvpeermem84-rhel78-n120-prompt-modprobe-then-from-dmesg-ellipsis-nv-peer-mem-unknown-symbol-err-0.txt
PEERMEM = _text(
    "[Fri Feb 12 11:47:20 2021] nv_peer_mem: Unknown symbol ib_register_peer_memory_client (err 0)",
    "[Fri Feb 12 11:47:20 2021] nv_peer_mem: Unknown symbol ib_unregister_peer_memory_client (err 0)")


def test_a_peer_memory_module_that_cannot_load_is_degraded() -> None:
    (f,) = judge_text("kernel-log", PEERMEM)
    assert (f.check, f.severity, f.subject) == ("kernel_gdr", "warning", "n1")
    assert "nv_peer_mem" in f.message and "2 line(s)" in f.message
    # its load succeeding says nothing of the kind
    assert not judge_text("kernel-log", "[   10.1] nvidia_peermem: module using GPL-only symbols\n")


# round2/kernel-log/ogkm935-5080-laptop-dmesg-H-relative-stamps-gsp-fmc-0xb-four-boot-attempts-exceeded-cut.txt
GSP_BOOT = _text(
    "[  +0.123791] NVRM: kgspBootstrap_GH100: GSP-FMC reported an error while attempting to boot GSP: 0xb",
    "[  +0.000001] NVRM: kgspInitRm_IMPL: Max GSP-RM boot attempts exceeded: 4/4",
    "[  +0.000021] NVRM: RmInitAdapter: Cannot initialize GSP firmware RM")


def test_gsp_firmware_boot_given_up_is_the_gpu_lost() -> None:
    (f,) = judge_text("kernel-log", GSP_BOOT)
    assert (f.check, f.severity) == ("kernel_gpu", "critical")
    assert "GSP-RM boot attempts exceeded" in f.message and "Cannot initialize GSP firmware RM" in f.message


# round2/kernel-log/rpipcie26-pi5-gtx750ti-prompt-dmesg-grep-nouveau-unknown-chipset-ffffffff-two-lines.txt
ALL_ONES = _text(
    "[    3.121503] nouveau 0000:01:00.0: enabling device (0000 -> 0002)",
    "[    3.121599] nouveau 0000:01:00.0: unknown chipset (ffffffff)")


def test_a_chip_id_read_as_all_ones_is_a_device_that_does_not_answer() -> None:
    (f,) = judge_text("kernel-log", ALL_ONES)
    assert (f.check, f.severity, f.subject) == ("kernel_device", "critical", "n1/0000:01:00.0")
    assert "all ones" in f.message
    # a chipset nouveau does not know, read correctly, is not a dead device
    assert not judge_text("kernel-log", ALL_ONES.replace("ffffffff", "1b2000a1"))


# --- nvidia-smi nvlink -c: capabilities, not state ---

# round2/nvidia-smi-nvlink/ilgpu378-v100-sxm2-nvlink-capabilities-i0-gt-prompt-cut-at-link4.txt (m4rs-mt/ILGPU#378)
CAPS = _text(
    "GPU 0: Tesla V100-SXM2-32GB (UUID: GPU-45a9e850-260d-2a2c-dfab-376b0308a22f)",
    "         Link 0, P2P is supported: true",
    "         Link 0, Access to system memory supported: true",
    "         Link 0, SLI is supported: false",
    "         Link 0, Link is supported: false",
    "         Link 1, P2P is supported: true")


def test_nvlink_capabilities_are_read_and_cannot_judge_a_link() -> None:
    (gpu,) = _parse("nvidia-smi-nvlink", CAPS)["gpus"]
    assert gpu["capabilities"][0] == {"P2P is supported": True, "Access to system memory supported": True,
                                      "SLI is supported": False, "Link is supported": False}
    (f,) = judge_text("nvidia-smi-nvlink", CAPS)
    assert f.check == "coverage" and "capabilities" in f.message
