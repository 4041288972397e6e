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
