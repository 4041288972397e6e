"""Session 28 (issue 29): the SIGBUS line as the NCCL parser's own key, and the rules written from the rest's misses.

Expected values are read off the text of each capture (quoted here or read from tests/corpus, with its source); a
derived form is what the named tool prints for that case."""

from __future__ import annotations

from conftest import judge_text, parse_text
from conftest import finding_keys as _checks
from conftest import text_of as _text

# --- NCCL logs: a rank killed by SIGBUS is the parser's own key; the check has no pattern of its own ---

# round2/nccl-log/deepspeed2638-docker-8gpu-2.14.3-...-caught-signal-7-bus-error-nonexistent-physical-address-cut.txt
# (deepspeedai/DeepSpeed#2638, an eight-GPU job in a Docker container)
UCX_SIGBUS = "[cf0b62962198:378934:0:382579] Caught signal 7 (Bus error: nonexistent physical address)"
SIGBUS = _text("cf0b62962198:378934:382525 [2] NCCL INFO Connected all trees", UCX_SIGBUS)


def test_the_sigbus_line_is_the_parsers_own_key() -> None:
    # after a 61-character line a mail wrap at 60-80 columns could have cut: UCX's own head says it is a line
    summary = parse_text("nccl-log", SIGBUS)
    assert summary["bus_errors"] == [UCX_SIGBUS]
    assert UCX_SIGBUS in summary["warnings"]  # still an error line of the job


def test_a_warn_line_carrying_the_sigbus_text_counts_once() -> None:
    # the handler's text inside an NCCL WARN (a plugin relaying it): one bus error, judged as one, not twice
    text = _text("node1:1234:1250 [0] NCCL INFO Connected all trees",
                 "node1:1234:1250 [0] NCCL WARN Caught signal 7 (Bus error: nonexistent physical address)")
    assert parse_text("nccl-log", text)["bus_errors"] == ["Caught signal 7 (Bus error: nonexistent physical address)"]
    assert _checks(judge_text("nccl-log", text)) == [("nccl_error", "critical", "n1")]


def test_a_dataloader_bus_error_is_a_bus_error() -> None:
    # PyTorch's DataLoader worker (its message names shared memory)
    line = ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory "
            "(shm).")
    text = _text("node1:1234:1250 [0] NCCL INFO Connected all trees", line)
    assert parse_text("nccl-log", text)["bus_errors"] == [line]
    assert _checks(judge_text("nccl-log", text)) == [("nccl_error", "critical", "n1")]


# --- NCCL logs: the socket connect retried after a timeout, the log cut before the WARN that ends the tries ---

# round2/nccl-log/oneflow3586-2node-socket-via-veth25f2e72-ipv6-linklocal-connect-timed-out-warn-cut.txt
# (Oneflow-Inc/oneflow#3586: rank 1 of two single-GPU nodes, NCCL 2.7-era), its NCCL lines
RETRIES = _text(
    "worker:101542:101542 [0] NCCL INFO Bootstrap : Using [0]eno1:172.18.40.41<0> "
    "[1]veth25f2e72:fe80::380d:bfff:fe5b:54d2%veth25f2e72<0>",
    "worker:101542:101542 [0] NCCL INFO NET/IB : No device found.",
    "worker:101542:101542 [0] NCCL INFO NET/Socket : Using [0]eno1:172.18.40.41<0> "
    "[1]veth25f2e72:fe80::380d:bfff:fe5b:54d2%veth25f2e72<0>",
    "worker:101542:101542 [0] NCCL INFO Using network Socket",
    "worker:101542:101934 [0] NCCL INFO Channel 00 : 0[18000] -> 1[18000] [receive] via NET/Socket/1",
    "worker:101542:101934 [0] NCCL INFO Channel 00 : 1[18000] -> 0[18000] [send] via NET/Socket/1",
    "worker:101542:101934 [0] NCCL INFO Call to connect returned Connection timed out, retrying",
    "worker:101542:101934 [0] NCCL INFO Call to connect returned Connection timed out, retrying")


def test_connect_retries_are_read_with_the_socket_device_of_the_channels() -> None:
    summary = parse_text("nccl-log", RETRIES)
    assert [r["error"] for r in summary["connect_retries"]] == ["Connection timed out"] * 2
    assert summary["socket_channel_devices"] == [1]
    assert summary["socket_interfaces"] == ["eno1", "veth25f2e72"]


def test_timed_out_connect_retries_fail_the_node_naming_the_interface() -> None:
    findings = judge_text("nccl-log", RETRIES)
    assert [k for k in _checks(findings) if k[1] == "critical"] == [("nccl_error", "critical", "n1")]
    (failed,) = [f for f in findings if f.severity == "critical"]
    assert "veth25f2e72 fe80::380d:bfff:fe5b:54d2%veth25f2e72 (an IPv6 link-local address" in failed.message
    assert "eno1" not in failed.message  # device 1 carries the channels, not device 0


def test_refused_connect_retries_alone_are_not_judged() -> None:
    # the peer not yet listening: NCCL retries a refused connect while the job starts
    text = RETRIES.replace("Connection timed out", "Connection refused")
    assert not [f for f in judge_text("nccl-log", text) if f.severity == "critical"]
