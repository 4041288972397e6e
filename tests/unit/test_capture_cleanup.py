"""The capture clean-up every KIND gets from the registry (issue 14 item 2).

Inputs are built from corpus captures (tests/corpus/network, sources on their header lines);
the expectations are what the capture text shows once the terminal decorations are gone.
"""

from __future__ import annotations

import pytest
from ccparse import registry
from ccparse.capture import clean_capture, command_word
from ccparse.common import ParseError

IBSTAT = ("CA 'mlx5_0'\n\tCA type: MT4115\n\tNumber of ports: 1\n\tFirmware version: 12.23.1020\n"
          "\tHardware version: 0\n\tNode GUID: 0x98039b030074c280\n\tSystem image GUID: 0x98039b030074c280\n"
          "\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 56\n\t\tBase lid: 461\n"
          "\t\tLMC: 0\n\t\tSM lid: 271\n\t\tCapability mask: 0x2659e848\n\t\tPort GUID: 0x98039b030074c280\n"
          "\t\tLink layer: InfiniBand\n")  # ucx issue 5749


@pytest.mark.parametrize("prompt", ["$ ibstat", "[root@node3 bin]# ibstat", "user@host:~$ ibstat",
                                    "# ibstat", "+ ibstat", "vagrant@dut:mgmt:~$ sudo ibstat"])
def test_prompt_line_removed(prompt: str) -> None:
    assert clean_capture(f"{prompt}\n{IBSTAT}", "ibstat").text == IBSTAT


def test_crlf_ansi_nul_fences_and_quote_prefix() -> None:
    body = IBSTAT.replace("Active", "\x1b[32mActive\x1b[0m")
    raw = "```\r\n" + body.replace("\n", "\r\n") + "```\r\n"
    assert clean_capture(raw, "ibstat").text == IBSTAT
    quoted = "".join(f"> {ln}\n" for ln in IBSTAT.splitlines())
    assert clean_capture(quoted, "ibstat").text == IBSTAT
    assert clean_capture("\x00" + IBSTAT, "ibstat").text == IBSTAT


def test_other_commands_output_dropped_own_kept() -> None:
    # sriov-network-operator issue 382: ibdev2netdev, then ifconfig in the same paste
    raw = ("[root@pod /]# ibdev2netdev\nmlx5_3 port 1 ==> net1 (Down)\n[root@pod /]# ifconfig\n"
           "eth0: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>  mtu 1450\n")
    c = clean_capture(raw, "ibdev2netdev")
    assert c.text == "mlx5_3 port 1 ==> net1 (Down)\n" and c.lines == [2]
    assert c.commands == ["ibdev2netdev"]


def test_xtrace_keeps_mlnx_qos_command_for_the_interface() -> None:
    raw = ("$ ./setup.sh eth4 mlx5_2\n+ INTERFACE=eth4\n+ mlnx_qos -i eth4 --trust dscp\nDCBX mode: OS controlled\n"
           "+ sudo cma_roce_tos -d mlx5_2 -t 106\n106\n")
    assert clean_capture(raw, "mlnx_qos").text == "$ mlnx_qos -i eth4 --trust dscp\nDCBX mode: OS controlled\n"


def test_untouched_when_nothing_to_clean() -> None:
    text = "# source: x\n#  Rank  0 Group  0 Pid 1 on n1 device  0 [0x07] NVIDIA H100\n    8  2  float\n"
    assert clean_capture(text, "nccl-tests").text == text


def test_command_word_skips_wrappers() -> None:
    assert command_word("sudo taskset -c 12 ib_write_bw -d mlx5_0") == "ib_write_bw"
    assert command_word("ip netns exec ns1 ib_write_bw -d mlx5_3") == "ib_write_bw"
    assert command_word("/usr/bin/ibstat mlx5_0") == "ibstat"


def test_parse_error_names_the_line_of_the_pasted_text() -> None:
    with pytest.raises(ParseError) as e:
        registry.parse("ip-link", "$ ip link\n\n2: eth0: <BROADCAST> mtu banana\n")
    assert e.value.line in (None, 3)
