"""Verdicts on the seen5a captures of tests/corpus/seen (issue 29): each test reads one capture and
asserts what an operator reads in it (values taken from the capture, not from the parser's output)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ccparse import registry
from ccparse.common import ParseError
from conftest import corpus_capture

from clusterctl.analysis import checks
from clusterctl.analysis.checks.gpu import judge_nvidia_smi_q, judge_nvidia_smi_query, judge_nvidia_smi_table
from clusterctl.analysis.engine import analyze_dir
from clusterctl.analysis.expectations import build
from clusterctl.analysis.model import NOTHING, CheckResult, Finding


def capture(rel: str) -> str:
    """The capture text after the ``# corpus-`` header lines."""
    return corpus_capture("seen", rel)


def found(res: object) -> list[Finding]:
    """The findings of a check's result (the @check registry types it loosely)."""
    assert isinstance(res, CheckResult)
    return list(res.findings)


def nothing(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "info" and f.message.startswith(NOTHING)]


def test_q_excerpt_whose_fields_all_read_na_is_nothing_judgeable() -> None:
    # a vGPU guest's -q excerpt from 'Reset Required : N/A': Bus Id 00000000:02:00.0, every PCIe field N/A
    checks.load_all()
    rel = "nvidia-smi-q/trtllm1861-grid-vgpu-reset-status-and-pci-all-na-excerpt.txt"
    data = registry.parse("nvidia-smi-q", capture(rel))
    assert data["excerpt"] and [g["bus_id"] for g in data["gpus"]] == ["00000000:02:00.0"]
    fs = found(judge_nvidia_smi_q("n1", data, build({})))
    assert [f.check for f in nothing(fs)] == ["coverage"]
    assert not [f for f in fs if f.severity in ("critical", "warning")]


def test_query_excerpt_rule_is_the_same() -> None:
    # the shared judge of -q and --query-gpu: a CSV row whose every value is [N/A] states no count either
    checks.load_all()
    data = {"excerpt": True, "gpus": [{"index": 0, "bus_id": "00000000:02:00.0", "name": None}], "lost_gpus": []}
    assert nothing(found(judge_nvidia_smi_query("n1", data, build({}))))


def test_q_excerpt_with_pcie_generation_current_and_max_is_judged() -> None:
    # a -q excerpt cut after 'PCIe Generation / Max : 2 / Current : 1' (GPU 00000000:01:00.0): the link
    # was read, an idle GPU's Gen 1 is its power-saving downclock: judged, nothing wrong
    checks.load_all()
    rel = "nvidia-smi-q/nvdocker1753-mid-excerpt-part-number-to-pcie-gen-cut.txt"
    data = registry.parse("nvidia-smi-q", capture(rel))
    (g,) = data["gpus"]
    assert (g["pcie"]["gen_max"], g["pcie"]["gen_current"]) == (2, 1)
    fs = found(judge_nvidia_smi_q("n1", data, build({})))
    assert not nothing(fs) and not [f for f in fs if f.severity in ("critical", "warning")]


def test_table_banner_cut_before_any_gpu_row_is_an_excerpt_with_nothing_to_judge() -> None:
    # a vLLM command line, then only the table's top border and 'NVIDIA-SMI 535.54.03 Driver Version: 535.54.03'
    checks.load_all()
    data = registry.parse("nvidia-smi", capture("nvidia-smi/vllm7553-535.54.03-command-line-then-banner-cut.txt"))
    assert data["driver_version"] == "535.54.03" and data["gpus"] == []
    assert data["excerpt"] and data["cut_before_rows"]
    # the cut is not a missing GPU: four GPUs expected, none judged missing
    fs = found(judge_nvidia_smi_table("n1", data, build({"gpus_per_node": 4})))
    assert [f.check for f in nothing(fs)] == ["coverage"]
    assert not [f for f in fs if f.check == "gpu_count"]


def test_engine_says_cannot_judge_for_the_banner_only_table(tmp_path: Path) -> None:
    host = tmp_path / "n1"
    host.mkdir()
    (host / "nvidia-smi.txt").write_text(capture("nvidia-smi/vllm7553-535.54.03-command-line-then-banner-cut.txt"))
    report = analyze_dir(str(tmp_path), {})
    assert report.hosts["n1"].status == "cannot judge"


def sinfo(rel: str) -> tuple[dict, list[Finding]]:
    from clusterctl.analysis.checks.slurm_nodes import judge_sinfo

    checks.load_all()
    data = registry.parse("sinfo", capture(rel))
    return data, found(judge_sinfo("n1", data, build({})))


def test_headerless_node_comma_state_sinfo_is_read_by_content() -> None:
    # an exporter's 'sinfo -h' test data: 'lxfoo0026,down*', 'lxfoo0166,fail*', 'lxfoo0312,down', 709 nodes
    data, fs = sinfo("sinfo/promslurm-h-node-comma-statelong-709-nodes-down-star-fail-star.txt")
    nodes = data["nodes"]
    assert len(nodes) == 709
    assert nodes["lxfoo0026"]["not_responding"] and nodes["lxfoo0026"]["base_states"] == ["down"]
    assert nodes["lxfoo0166"]["states"] == ["fail*"] and nodes["lxfoo0312"]["states"] == ["down"]
    assert nodes["lxfoo0001"]["base_states"] == ["idle"]
    critical = " ".join(f"{f.subject} {f.message}" for f in fs if f.severity == "critical")
    assert all(n in critical for n in ("lxfoo0026", "lxfoo0166", "lxfoo0312"))
    assert "lxfoo0001" not in critical


def test_headerless_node_oriented_O_sinfo_takes_the_last_state_field() -> None:
    # 'sinfo -h -N -O NodeList,AllocMem,Memory,CPUsState,StateLong': 'b001 327680 386000 32/0/0/32 down'
    data, fs = sinfo("sinfo/promslurm-h-N-O-nodelist-mem-cpusstate-statelong-down-b001-b003.txt")
    assert data["nodes"]["b001"]["base_states"] == ["down"] and data["nodes"]["a048"]["states"] == ["mixed", "idle"]
    assert {f.subject for f in fs if f.severity == "critical"} == {"b001", "b002", "b003"}


def test_headerless_default_columns_and_non_node_listings() -> None:
    # the trinity#332 row as 'sinfo -h' prints it (no header): a drained node is read
    data = registry.parse("sinfo", "container*    up   infinite      1  drain c001\n")
    (row,) = data["partitions"]
    assert (row["partition"], row["default"], row["base_state"], row["hosts"]) == ("container", True, "drain", ["c001"])
    # 'sinfo -h -o %C' (the exporter's other test data) names no node and no state: still not read
    with pytest.raises(ParseError):
        registry.parse("sinfo", "5725/877/34/6636\n")
    # 'sinfo -h -o %D,%T' names no node either, but a state per count: read as counts since session 28
    counts = registry.parse("sinfo", "20,mixed\n9,idle\n")["state_counts"]
    assert [(c["count"], c["base_state"]) for c in counts] == [(20, "mixed"), (9, "idle")]


def test_headerless_O_row_whose_gres_holds_commas_is_split_at_whitespace() -> None:
    # 'a005 ... mixed gpu gpu:model_a:4(S:0-3) gpu:model_a:2(IDX:0,3)' and 'a002 ... drained* gpu ...'
    data, fs = sinfo("sinfo/sckyzo-25.05-h-N-O-gres-gresused-a002-drained-star-a004-maint.txt")
    nodes = data["nodes"]
    assert nodes["a005"]["states"] == ["mixed"] and nodes["a004"]["base_states"] == ["maint"]
    assert nodes["a002"]["not_responding"] and nodes["a002"]["base_states"] == ["drained"]
    assert {f.subject for f in fs if f.severity == "critical"} == {"a002"}
    # one node, two GPU types joined by a comma in GRES and GRES_USED
    data, fs = sinfo("sinfo/sckyzo-25.11.2-h-N-O-gres-multitype-comma-one-node-mixed.txt")
    assert list(data["nodes"]) == ["g2"] and data["nodes"]["g2"]["states"] == ["mixed"]
    assert not [f for f in fs if f.severity in ("critical", "warning")]


def test_scontrol_show_nodes_one_line_records_keep_the_os_text_with_spaces() -> None:
    # 'scontrol show nodes -o': '... OS=Linux 6.18.33.2-microsoft-standard-WSL2 #1 SMP PREEMPT_DYNAMIC Thu Jun 18
    # 21:54:43 UTC 2026  RealMemory=15867 ... State=MIXED+DYNAMIC_NORM ...', 20 nodes
    from clusterctl.analysis.checks.slurm_nodes import judge_scontrol_node

    checks.load_all()
    data = registry.parse("scontrol-node", capture(
        "scontrol-node/sckyzo-26.05.2-show-nodes-o-one-line-20-nodes-idle-mixed-dynamic-norm.txt"))
    na1 = data["nodes"][0]
    assert len(data["nodes"]) == 20 and na1["name"] == "na1"
    assert na1["fields"]["OS"].startswith("Linux 6.18.33.2-microsoft-standard-WSL2 #1 SMP")
    assert na1["fields"]["OS"].endswith("UTC 2026") and na1["real_memory_mb"] == 15867
    assert (na1["base_state"], na1["state_flags"]) == ("MIXED", ["DYNAMIC_NORM"])
    fs = found(judge_scontrol_node("n1", data, build({})))
    assert not [f for f in fs if f.severity in ("critical", "warning")]
    # a stray word that follows no free-text key is still not a record
    with pytest.raises(ParseError):
        registry.parse("scontrol-node", "NodeName=n1 State=IDLE stray\n")
