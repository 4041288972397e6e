"""KIND detection on every real capture the tests may read (issue 29 item 1).

Each capture whose KIND its folder names (tests/corpus/seen, the non-held-out files of round2, gpu and
network, tests/fixtures/<KIND>/, the labelled sets by their manifest) is handed to the production path
of ``clusterctl analyze`` (:func:`clusterctl.analysis.engine.analyze_dir`) twice, as an operator would:
once named ``<KIND>.txt`` and once under a name that is no KIND (``node07.txt``, ``gpu.log``,
``dmesg.txt``, ...). The renamed copy must be read as the folder's KIND (the report's note names it),
or as a KIND listed in :data:`EQUIVALENT` (a capture two parsers read), and the host's verdict must be
the one it gets by name. All captures go into a few evidence folders (one per distinct ``spec``), so
the whole run is a handful of ``analyze_dir`` calls.

Held-out files (tests/corpus/*/HOLDOUT.txt) are never opened: their paths are dropped before any read,
and a fixture copied from one (its line 1 names the corpus path) is dropped by that name.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from ccparse import registry

from clusterctl.analysis import engine

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
import bench_corpus  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures"
LABELLED = FIXTURES / "labelled"
#: manifest KIND -> evidence KIND (tests/fixtures/labelled/README.md: syslog/ holds kernel-log captures)
ALIASES = {"syslog": "kernel-log"}
#: names an operator or a support bundle gives a capture: none is a KIND, so detection decides
OPERATOR_NAMES = ("node07.txt", "gpu.log", "dmesg.txt", "capture.out", "bundle-part.log", "paste")
#: folder KIND -> other KINDs that read the same capture to the same verdict (documented equivalences,
#: each used by a capture here): an all_reduce_perf run with NCCL_DEBUG=INFO is a nccl-tests report
#: holding an NCCL log (see JUDGES_MORE); nvidia-smi's one-line error ('Unable to determine the device
#: handle for GPU ...') is the same evidence whichever form (-q, the table) printed it; the -J JSON of
#: nccl-tests is read under the KIND nccl-tests (README).
EQUIVALENT: dict[str, frozenset[str]] = {
    "nccl-log": frozenset({"nccl-tests"}),
    "nvidia-smi-q": frozenset({"nvidia-smi"}),
    "nccl-tests-json": frozenset({"nccl-tests"}),
}
#: (folder KIND, chosen KIND) where the chosen reading judges more of the capture: an all_reduce_perf run
#: with NCCL_DEBUG=INFO read as nccl-tests judges its NCCL lines as the nccl-log reading does, and also
#: the run (its bandwidth, a 'Test NCCL failure'); every finding by name must then be there, the verdict
#: may only be graver
JUDGES_MORE = frozenset({("nccl-log", "nccl-tests")})
_SEVERITY = {"healthy": 0, "cannot judge": 0, "no evidence": 0, "degraded": 1, "failed": 2}
_CHOSEN = re.compile(r": read as KIND (\S+) ")


@dataclass(frozen=True)
class Case:
    ident: str
    kind: str
    data: bytes
    spec: str  # the JSON of the expectations it is judged with


def _held_out() -> set[str]:
    return {f"{part}/{rel}" for part in bench_corpus.parts_present() for rel in bench_corpus.load_holdout(part)}


@functools.cache
def cases() -> tuple[Case, ...]:
    kinds = set(registry.kinds())
    held = _held_out()
    out: list[Case] = []
    for part in bench_corpus.parts_present():
        expect = bench_corpus.load_expect(part)
        for rel in bench_corpus.corpus_files(part):
            if f"{part}/{rel}" in held:
                continue  # never opened
            spec = json.dumps((expect.get(rel) or {}).get("spec") or {}, sort_keys=True)
            text = bench_corpus.read_capture(bench_corpus.CORPUS / part / rel)
            out.append(Case(f"{part}/{rel}", rel.split("/", 1)[0], text.encode("utf-8", "replace"), spec))
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir() and p.name in kinds):
        for path in sorted(folder.iterdir()):
            first = path.read_bytes().split(b"\n", 1)[0].decode("utf-8", "replace")
            if any(h in first for h in held):
                continue  # a copy of a held-out capture: dropped by the name its line 1 gives
            out.append(Case(f"fixtures/{folder.name}/{path.name}", folder.name, path.read_bytes(), "{}"))
    for set_name in ("set1", "set2"):
        for line in (LABELLED / set_name / "manifest.tsv").read_text().splitlines()[1:]:
            if line.strip():
                rel, kind = line.split("\t")[:2]
                out.append(Case(f"labelled/{set_name}/{rel}", ALIASES.get(kind, kind),
                                (LABELLED / set_name / rel).read_bytes(), "{}"))
    return tuple(out)


@dataclass
class Outcome:
    chosen: str | None
    note: str
    named: engine.HostReport
    detected: engine.HostReport


@functools.cache
def outcomes(tmp: str) -> dict[str, Outcome]:
    """Every case judged by name and renamed, in one evidence folder per distinct spec."""
    groups: dict[str, list[tuple[int, Case]]] = {}
    for i, case in enumerate(cases()):
        groups.setdefault(case.spec, []).append((i, case))
    result: dict[str, Outcome] = {}
    for g, (spec, members) in enumerate(sorted(groups.items())):
        root = Path(tmp) / f"spec{g}"
        for i, case in members:
            (root / f"n{i}").mkdir(parents=True)
            (root / f"n{i}" / f"{case.kind}.txt").write_bytes(case.data)
            (root / f"d{i}").mkdir()
            (root / f"d{i}" / OPERATOR_NAMES[i % len(OPERATOR_NAMES)]).write_bytes(case.data)
        report = engine.analyze_dir(root, json.loads(spec), jobs=1)
        for i, case in members:
            det = report.hosts[f"d{i}"]
            said = [n.message for n in det.notes if _CHOSEN.search(n.message)]
            m = _CHOSEN.search(said[0]) if said else None
            result[case.ident] = Outcome(m.group(1) if m else None, said[0] if said else "",
                                         report.hosts[f"n{i}"], det)
    return result


#: captures whose content shows no KIND an operator would recognise either (kept honest, each named)
NOT_RECOGNISABLE: dict[str, str] = {
    # blind batches 151-158 (session 32)
    "round2/ibstat/openshiftdocs-rdma-sriov-server-pod-ibstat-egrep-port-base-link-three-linkup-seven-no-phys-line.txt":
        "'ibstat | egrep \"Port|Base|Link\"': port blocks without their CA lines and, for seven, without any state "
        "line (not read by name either: labelled healthy, a known miss)",
    # blind batches 137-147 (session 30)
    "round2/ib_write_bw/mitorcd-engaging-b200-node5501-node5502-mlx5_10-gpu-mem-qp-sweep-148-155-gbits-vs-host-380.txt":
        "a benchmark script's sweep: its own '##########' headers and perftest's result rows, without perftest's "
        "banner or column header",
    "round2/ip-link/rhdocs8-rdma-ip-link-show-ib0-inverted-angle-brackets-mtu-65520-state-up.txt":
        "a documentation page printing ip link's flag brackets inverted ('>BROADCAST,...<'): ip link never prints it",
    # blind batches 100-105 (session 25)
    "round2/nvidia-smi-q-xml/micromagnum-hash-commented-gpu-element-tesla-m2090-14-00-p0-98pct-207w-exclusive-thread-"
    "temp-na.txt":
        "a <gpu> element of the XML without its document, every line commented out with '# ': no XML declaration or "
        "<nvidia_smi_log> root to find",
    "round2/nvidia-smi/gpuop442-kubectl-exec-driver-daemonset-defaulted-container-smi-L-one-a30-no-mig-devices.txt":
        "one nvidia-smi -L line after kubectl's notes: too few of its lines to find (the verdict is right when the "
        "file is named as its KIND)",
    "round2/scontrol-node/ecconotes-cornell-biohpc-show-nodes-cbsueccosl04-grep-reason-one-line-kill-task-failed-no-"
    "node-name.txt":
        "one grep'd Reason= line: a node's reason alone is no signature (a sinfo paste followed by such a line is "
        "sinfo's)",
    # batches 38-46 (session 18)
    "round2/kernel-log/tempesta430-dmesg-ixgbe-eth3-detected-tx-unit-hang-queues-6-5-4-indented-cut.txt":
        "one dmesg line, then the hang's register dump indented and unprefixed: too few kernel log lines to find "
        "(the verdict is right when the file is named as its KIND)",
    "round2/sinfo/promslurmexporter38-sinfo-h-o-n-G-hostname-gres-tmp-only-no-state-redacted-prompt-cut.txt":
        "'sinfo -h -o \"%n %G\"': host names and GRES only, no header and no state (labelled cannot-judge)",
    # batches 29-37 (session 17)
    "round2/kernel-log/incusui115-i219v-kernel-prefix-e1000e-detected-hardware-unit-hang-unprefixed-fields.txt":
        "'kernel: ' lines without a time and the hang's register dump unprefixed: no kernel log line form to find "
        "(a round2 known miss of the check too: no rule rates the hang)",
    "round2/nvidia-smi-query/llmdfma720-actions-timestamp-klog-tail-index-uuid-memory-used-6-rows.txt":
        "a CI runner's log of a Go program's klog lines with the query's CSV quoted inside them, tab-indented and "
        "without its command line: a program's log (labelled cannot-judge)",
    "round2/sinfo/azhop686-json-quoted-squeue-and-sinfo-l-hb120v2-2-draining-idle-tilde.txt":
        "squeue and sinfo -l quoted as JSON strings (each line in '\"...\",'): a program's data, not a terminal's "
        "text; a round2 known miss of the parser too",
    "round2/sinfo/rivosinc-sinfo-h-o-json-lines-completing-alloc-idle-mixed.txt":
        "an exporter's sinfo -h -o format string printing JSON lines ('{\"s\": \"completing\", ...}'): no sinfo "
        "header or row shape (a round2 known miss of the parser too)",
    **{f"round2/nccl-tests/{name}.txt": "MSCCL++'s own mscclpp-test table (in-place columns first, no type/redop, "
       "no nccl-tests banner or 'Avg bus bandwidth'): another tool, a round2 known miss of the parser too"
       for name in ("mscclpp117-mscclpp-test-reducescatter-1n8p-6m-25m-no-devices",
                    "mscclpp87-mscclpp-test-alltoall-1n8p-1g-outofplace-only")},
    "round2/nvidia-smi-query/akashprovcfg91-h100-nvl-name-device-id-noheader-single-line.txt":
        "one '--format=csv,noheader' row ('NVIDIA H100 NVL, 0x232110DE') without its command line: any CSV row; "
        "labelled cannot-judge (a name and a device id, no reading)",
    "round2/nvidia-smi-query/nvsettings80-gtx1080-clocks-throttle-reasons-supported-mask-csv.txt":
        "a one-field query (header 'clocks_throttle_reasons.supported', one hex mask) without its command line: "
        "no field a GPU query names among its usual ones; labelled cannot-judge (a supported-reasons mask)",
    # batches 55-63 (session 20)
    "round2/ib_write_bw/mocscripts-baremetal-gpu-client-16qp-rdma-cm-unexpected-cm-event-8-stderr-before-cuda-inline-"
    "line.txt": "perftest's error lines alone (no banner, no result table): messages, no tool output form to find",
    "round2/kernel-log/linuxscsi2022-power10-lpar-dlpar-sriov-mlx5-400f-fatal-error-1-eeh-frozen-pe-destroy-rmp-timeout-"
    "no-ts.txt": "mlx5 driver lines without a time or a 'kernel: ' head: no kernel log line form to find",
    "round2/nccl-log/sglang9435-32rank-nccl-init-timings-then-nvshmem-ibgda-cudahostregister-800-cannot-map-uar-mlx5-"
    "bond-skipping-cut.txt": "NCCL's init timing lines and NVSHMEM's own lines, no NCCL INFO/WARN line form",
    "round2/nvidia-smi-query/mitorcd-node-info-pdsh-name-memory-noheader-149-nodes-node1236-7-of-8-rtx2080ti.txt":
        "'--format=csv,noheader' rows of 149 hosts behind pdsh's prefix: any CSV rows, no header or command line",
    "round2/nvidia-smi/ocijp-gpu-with-ubuntu-bm-gpu4.8-openacc-bg-job-nvidia-smi-tail-3-process-row-only.txt":
        "'nvidia-smi | tail -3': one process row and the table's frame, no banner or GPU row",
    "round2/scontrol-node/rwthi6-report-gpus-claix23-22.05-n23g0002-mixed-n23g0003-down-drain-not-responding-too-hot-"
    "hash-comments.txt": "a Python comment block ('# ' before every line): the KIND's reading takes the mark off, "
                         "detection reads the text as it stands",
    "round2/sinfo/azhop1210-ansible-json-quoted-sinfo-R-cyclecloud-node-fail-viz3d-1-4.txt":
        "sinfo -R as JSON strings of Ansible's stdout_lines (each line in '\"...\",'): a program's data, read "
        "when the file is named as its KIND",
    "round2/sinfo/pdc-beskow-hpcintro-cray-rows-under-default-header-maint-star-idle-star-down-star-elided.txt":
        "a longer site format's rows under the default header: the rows do not have the header's shape",
    # batches 70-79 (session 22)
    "round2/nccl-log/pytorchoperator202-eks-master-pod-mnist-download-lines-then-net-socket-lo-127.0.0.1-and-eth0-"
    "cut.txt": "two NCCL lines after seventeen lines of the job's download output: too few to read the text as an NCCL "
               "log (read when the file is named as its KIND)",
    "round2/nvidia-smi-q-xml/openelec3369-340-grep-gpu-temp-user-quoted-tag-names-24-space-indent.txt":
        "three XML lines grep'd out of 'nvidia-smi -q -x' with the poster's quotes inside the tags: no XML document "
        "(a round2 known miss too)",
    "round2/nvidia-smi-query/polybarscripts42-chevron-prompt-loop-noheader-nounits-temp-util-nine-samples.txt":
        "bare '41, 6, 13' rows of a 'noheader,nounits' loop under a zsh theme's '\u276f' prompt: any CSV rows",
    "round2/nvidia-smi-query/zabbix17-rtx3080-27-field-row-mostly-n-a-utilization-and-power-p3-fenced.txt":
        "one 'noheader' row of 27 fields without its command line: any CSV row (a round2 known miss too)",
    # blind batches 110-116 (session 27), round2 known misses too
    "round2/ibdev2netdev/3fs183-kunpeng-monitor-collector-log-hns0-hns1-bond0-up-hns2-hns3-down-rocep-bond1-bond2-"
    "up-cut.txt": "ibdev2netdev lines inside 3FS's own bracketed log lines, the collector's 'parsed' lines between: "
                  "an application's log",
    "round2/nvidia-smi-query/possatti-collectd-418.56-gtx1060-one-field-per-query-gpu-call-header-value-pairs-x8-"
    "of-x16.txt": "about a hundred one-field CSV answers, each a header then its value: no CSV table",
    "round2/sinfo/wehiexporter-testdata-sinfo-he-O-allocmem-features-statelong-colon-padded-22-rows-one-drained-star-"
    "no-node-names.txt": "'460800    :Broadwell :mixed     :' rows of an exporter's sinfo -O with no header and no "
                         "node name: any colon-separated rows",
    "round2/sinfo/unigehpc4093-bamboo-new-gpu007-sinfo-N-format-rtx-pro-6000-blackwell-4-s0-features-cut-at-57-no-"
    "state-column.txt": "a custom sinfo -N format without a state column: rows of names and resources, no state to "
                        "recognise sinfo by",
    # batches 64-69 (session 21)
    "round2/ip-link/k3s209-ip-d-l-show-flannel-1-one-line-elided-both-ends-dstport-8472.txt":
        "one 'ip -d l' detail line between two elisions, without its header: no ip link form (labelled cannot-judge)",
    "round2/nccl-log/mxnet9193-nccl-1.3.4-two-gpu-rank-access-p2p-device-mem-reduce-cu-126-cuda-failure-invalid-"
    "resource-handle.txt": "NCCL 1.x's 'INFO ...'/'WARN ...' lines (no 'NCCL INFO' head): read when the file is "
                           "named as its KIND",
    "round2/nvidia-smi-query/nvidiametering-docker-run-cuda-base-t4-export-vars-noheader-nounits-mig-na-one-row.txt":
        "a 'noheader,nounits' row whose fields only an export line names: any CSV row (a round2 known miss too)",
    "round2/scontrol-node/conoha-slurm-rest-api-postmortem-l4-gpu-worker-two-lines-idle-drain-dynamic-norm-invalid-"
    "reg-gres-0-lt-1.txt": "two 'Key=value' lines of a record without its NodeName line (a round2 known miss too)",
    "round2/sinfo/unigehpc3640-baobab-new-gpu048-sinfo-N-format-gres-ampere-8-two-partitions-no-state-column.txt":
        "an 'sinfo -N --format' without a state column: no header sinfo's readings know (labelled cannot-judge)",
    # blind batches 80-92 (session 23)
    "round2/kernel-log/emaste-oci-a1-metal-freebsd14-arm64-dmesg-mlx5-two-ports-plugged-link-down-before-ifconfig.txt":
        "a FreeBSD dmesg: no Linux kernel log form (a round2 known miss too)",
    "round2/kernel-log/linuxppc-haleem-power-lpar-5.15-rc1-ipr-0134-80-eeh-failed-6-times-permanently-disabled-"
    "eehd-hung-no-ts.txt":
        "a console log without times whose lines are EEH's and a call trace's: too few driver lines to find",
    "round2/kernel-log/linuxppc-haleem-power10-lpar-next-20230317-mlx5-4001-probe-rtnl-assertion-warning-wrapped-no-"
    "ts.txt":
        "console lines without times, a WARNING's register dump and trace: too few driver lines to find",
    "round2/nvidia-smi-query/sirzzang-k8s-gpu-workers-ssh-loop-index-driver-name-noheader-worker1-3-nvml-mismatch-"
    "580.159-worker2-rtx5090-excerpt-crlf.txt":
        "a shell loop over hosts with noheader rows and nvidia-smi's refusals: no CSV header to find",
    "round2/sinfo/ticg-chromatin-midway-sinfo-custom-format-partition-nodes-cpu-features-truncated-nodelist-no-"
    "state.txt":
        "an sinfo custom format without a state column: no header sinfo's readings know (labelled cannot-judge)",
    "round2/sinfo/unigehpc3664-yggdrasil-new-cpu151-158-sinfo-N-format-root-prompt-gres-null-two-partitions-no-state-"
    "column.txt":
        "an 'sinfo -N --format' without a state column: no header sinfo's readings know (labelled cannot-judge)",
    # blind batch 126 (session 28)
    "round2/sinfo/uzhexporter-testdata-sinfo-a-h-Format-nodes-gres-gresused-idle-allocated-v100x8-a100x8-one-a100-7-"
    "t4.txt":
        "headerless 'Nodes Gres GresUsed' rows of an exporter's test data: no header and no state to find (labelled "
        "cannot-judge; a known miss of round2)",
    # blind batch 127 (session 28)
    "round2/ibv_devinfo/ompidevel3976-2008-queeg-time-csh-prompt-no-ib-devices-found-then-ibv_devices-empty-table-no-"
    "verbs-hardware.txt":
        "ibv_devinfo's one line 'No IB devices found' and ibv_devices' empty table under csh prompts: one error line "
        "is no signature (the verdict is right when the file is named as its KIND)",
    # blind batch 130 (session 29)
    "round2/proc-limits/ompiusers2006-0716-orterun-two-nodes-bash-c-ulimit-l-quoting-prints-file-size-unlimited-"
    "twice.txt":
        "'unlimited' twice under an orterun whose continuation line runs 'bash -c ulimit -l': no output signature, and "
        "the command is behind a launcher's continuation, not at a line's start (labelled cannot-judge)",
    # blind batch 136 (session 29)
    "round2/nccl-log/mlperf50-dell-r7715-3x-h200-nvl-run-stop-success-then-warn-only-proxy-service-accept-failed-"
    "close-retcode-3.txt":
        "an MLPerf result log: the benchmark's own MLLOG and evaluation lines outnumber NCCL's few WARN lines ten to "
        "one, below the share that names a log NCCL's (a known miss of round2 as its KIND too)",
}


#: captures holding two tools' outputs, read as the first one's KIND by design: ident -> (KIND read, why)
READ_AS_FIRST_TOOL: dict[str, tuple[str, str]] = {
    # blind batch 153 (session 32): a netdev report quoting 'lspci -nn' lines of the two ConnectX-5 functions above its
    # dmesg excerpt
    "round2/kernel-log/netdev2021-sony-cx5-5-10-65-regression-mlx5-load-one-failed-22-both-ports-probe-failed.txt": (
        "lspci", "a mail quoting lspci -nn's two lines before the dmesg lines: the first tool's output is what is read "
                 "(named kernel-log, its probe failures are judged)"),
    # blind batch 144 (session 30): MIT ORCD's job outputs, each printing a tool's report before nccl-tests
    "round2/nccl-log/mitorcd-engaging-dgx-h100-node1800-node1801-ibext-v11-sharp-nine-hcas-mlx5_1-200g-gdrdma-sendrecv-"
    "48-gbs.txt": (
        "ibv_devinfo", "a job script printing ibv_devinfo's HCAs before nccl-tests' NCCL_DEBUG output: the first "
                       "tool's output is what is read"),
    "round2/nccl-log/mitorcd-engaging-b200-node5501-node5502-sharp-no-aggregation-manager-collnet-forced-allreduce-no-"
    "algorithm-invalid-usage.txt": (
        "nccl-tests", "nccl-tests' banner and rank list around the NCCL lines of its failed run: read as the run, "
                      "whose failure is judged as such"),
    "round2/nccl-tests/mitorcd-engaging-dgx-h100-tune-topo-head-12-ansi-then-all-reduce-tail-6-three-bindings-478-gbs-"
    "check-off.txt": (
        "nvidia-smi-topo", "a job script printing nvidia-smi topo -m's matrix before its nccl-tests rows: the first "
                           "tool's output is what is read"),
    # blind batches 100-105 (session 25)
    "round2/nvidia-smi/miyakz-mlstudy-kvm-gt710-check-sh-bash-x-trace-450.203.03-table-p8-lspci-apt-list.txt": (
        "lspci", "a script's bash -x trace running lspci before nvidia-smi: the first tool's output is what is read"),
    "round2/nvidia-smi/miyakz-mlstudy-kvm-gt710-couldnt-communicate-then-dmesg-nvrm-legacy-470-driver-ignores-"
    "gpu.txt": (
        "kernel-log", "nvidia-smi's one error line, then a dmesg of NVRM lines (most of the paste): the kernel log is "
                      "what is found"),
    "round2/nvidia-smi/miyakz-mlstudy-kvm-gt710-sudo-prompt-blank-lines-no-devices-found-then-cut-prompt-lspci-03-"
    "00.txt": (
        "lspci", "nvidia-smi's 'No devices were found', then lspci's GPU line: the device line is what is found (the "
                 "error line alone is no signature)"),
    "round2/nvidia-smi/onizuka-gds-vm-lspci-quadro-p400-apt-470-reboot-then-device-handle-04-00-unknown-error-kvm-"
    "not-hidden.txt": (
        "lspci", "lspci's GPU line, then nvidia-smi's device-handle error in one paste: the first tool's output is "
                 "what is read"),
    "round2/scontrol-node/lambdalabs-notes-indented-sinfo-then-show-node-hyperplane01-a100-8-idle-no-arch-version-"
    "boottime-none.txt": (
        "sinfo", "sinfo's table, then scontrol show node, in one paste: the first tool's output is what is read"),
    "round2/scontrol-node/slinky45-25.05.2-login-pod-sinfo-then-show-nodes-esc8000a-a40-idle-dynamic-norm-cut.txt": (
        "sinfo", "sinfo's table, then scontrol show nodes, in one paste: the first tool's output is what is read "
                 "(both say the same three nodes idle)"),
    "round2/scontrol-node/slinky101-25.11.0-root-prompt-sinfo-then-show-node-slinky-0-192-cpus-gres-null-bold-arrow-"
    "note-8-h100-gres-conf-cut.txt": (
        "sinfo", "sinfo's table, then scontrol show node, in one paste: the first tool's output is what is read"),
    "round2/nvidia-smi/deepops1157-vagrant-login-sinfo-srun-no-devices-without-gpu-request-then-G1-smi-L-p100.txt": (
        "sinfo", "sinfo's table, then srun nvidia-smi in one paste: the first tool's output is what is read"),
    "round2/ibstatus/oneflow9115-openibd-stopped-ibv-devinfo-function-not-implemented-then-ibstatus-fatal-no-devices-"
    "illegal-number.txt": (
        "ibv_devinfo", "ibv_devinfo's error, then ibstatus's, in one paste: the first tool's output is what is read "
                       "(both say no RDMA device)"),
    "round2/nvidia-smi-nvlink/checkbox2727-generic-gpu-output-flattened-into-one-prose-line-device-does-not-support-"
    "nvlink.txt": (
        "nvidia-smi", "a PR's prose line holding a GPU listing and nvidia-smi nvlink's answer run together: the "
        "listing is what is found first"),
    # blind batch 126 (session 28)
    "round2/nvidia-smi-query/semiactiveseizure-job-gpu-stats-495.44-v100-sxm2-32gb-smi-table-then-query-csv-54-rows-"
    "idle-then-training-load.txt": (
        "nvidia-smi", "a job's log of the plain table, then its --query-gpu CSV: the table is what is found first"),
}


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    return outcomes(str(tmp_path_factory.mktemp("detect")))


def test_the_cases_are_many_and_the_held_out_files_are_not_among_them() -> None:
    held = _held_out()
    idents = {c.ident for c in cases()}
    assert len(idents) == len(cases()) > 400
    assert not idents & held


@pytest.mark.parametrize("ident", [c.ident for c in cases()])
def test_renamed_capture_is_read_as_its_kind_with_the_same_verdict(judged: dict[str, Outcome], ident: str) -> None:
    case = next(c for c in cases() if c.ident == ident)
    out = judged[ident]
    if ident in NOT_RECOGNISABLE:
        chosen = out.chosen
        assert chosen is None, ident
        return
    if ident in READ_AS_FIRST_TOOL:
        assert out.chosen == READ_AS_FIRST_TOOL[ident][0], ident
        return
    chosen, by_name, detected = out.chosen, out.named.status, out.detected.status
    allowed = {case.kind} | EQUIVALENT.get(case.kind, frozenset())
    assert chosen in allowed, f"{ident}: read as {chosen}, want {case.kind}"
    if (case.kind, chosen) in JUDGES_MORE:
        named = {(f.check, f.severity) for f in out.named.findings}
        assert named <= {(f.check, f.severity) for f in out.detected.findings}, ident
        assert _SEVERITY[detected] >= _SEVERITY[by_name], f"{ident}: by name {by_name}, read as {chosen}: {detected}"
        return
    assert detected == by_name, f"{ident}: by name {by_name}, read as {chosen}: {detected}"


# --- one real capture per family of misdetection (each read as no KIND, or a wrong one, before) ------

#: family -> (capture, KIND it must be read as); each failed before the signature named in detect.py
FAMILIES: dict[str, tuple[str, str]] = {
    "dcgmi diag -j JSON": ("fixtures/dcgmi-diag/json-dcgm4-entity-results-gpu2-memory-fail.txt", "dcgmi-diag"),
    "dcgmi diag JSON fragment": ("gpu/dcgmi-diag/dcgm215-4x-json-fragment-8gpu-pass.txt", "dcgmi-diag"),
    "dcgmi diag table, indented": ("gpu/dcgmi-diag/dcgmdocs-400-r3-4gpu-pass-indented.txt", "dcgmi-diag"),
    "dcgmi diag table excerpt": ("gpu/dcgmi-diag/mleng-r2-gpu0-thermal-fail-excerpt.txt", "dcgmi-diag"),
    "perftest banner, no #bytes header": ("seen/ib_write_bw/perftest214-report-min-bw-indented-ib-localhost-banner-cut-"
                                          "at-dashes.txt", "ib_write_bw"),
    "perftest banner, quoted": ("round2/ib_write_bw/k8srdmasriov32-hca-mode-quoted-header-gid-zero-redacted.txt",
                                "ib_write_bw"),
    "perftest connect error": ("round2/ib_write_bw/perftest228-rocep133s0f0-couldnt-connect-socket.txt", "ib_write_bw"),
    "perftest rows under their commands": ("seen/ib_write_bw/perftest130-run-infinitely-rows-only-no-header-two-"
                                           "clients.txt", "ib_write_bw"),
    "ibdev2netdev | column -t": ("network/ibdev2netdev/imbue-health-4-column-comments.txt", "ibdev2netdev"),
    "ibdev2netdev -v": ("fixtures/ibdev2netdev/verbose.txt", "ibdev2netdev"),
    "ibstat, then another command": ("seen/ibstat/nccl1591-elided-one-cx7-400-active-then-prompt-topo.txt", "ibstat"),
    "ibv_devinfo indented": ("network/ibv_devinfo/libfabric-8256-indented-v-capflags.txt", "ibv_devinfo"),
    "ibv_devinfo -vv cut before hca_id": ("network/ibv_devinfo/ucx-5045-vv-leading-cut-no-hca-id.txt", "ibv_devinfo"),
    "ip link lines without index": ("round2/ip-link/clusterlabs235-eth0-no-carrier-vlan-lowerlayerdown-prose.txt",
                                    "ip-link"),
    "syslog/journal lines": ("round2/kernel-log/aznhc-syslog-ib6-lost-gained-carrier-x6-networkd.txt", "kernel-log"),
    "journalctl banner": ("round2/kernel-log/azhpcdiag-journald-audit-only-logs-begin-header.txt", "kernel-log"),
    "/dev/kmsg records": ("round2/kernel-log/gpud-dev-kmsg-raw-nvswitch-open-calico.txt", "kernel-log"),
    "dmesg --decode": ("round2/kernel-log/gpud-dmesg-decode-iso-boot-h100-mlx5-insufficient-slot-power.txt",
                       "kernel-log"),
    "dmesg quoted '>> '": ("fixtures/kernel-log/dmesg-pcie-bandwidth-limited-x8-of-x16-quoted.txt", "kernel-log"),
    "lspci listing": ("network/lspci/gpud-gb200-plain-list.txt", "lspci"),
    "lspci -nn listing": ("round2/lspci/gpud-lspci-nn-qemu-vm-a10-cx-vf.txt", "lspci"),
    "lspci -vvv behind a logger's prefix": ("round2/lspci/avocado1281-powervm-debug-stdout-prefixed-vpd-and-aer-"
                                            "cut.txt", "lspci"),
    "mlnx_qos indented": ("network/mlnx_qos/mellanox-doc2792-pfc-only-elided.txt", "mlnx_qos"),
    "show_gids behind ' * '": ("network/show_gids/idx41646267603-c-comment-star-prefix.txt", "show_gids"),
    "dcb show lines": ("network/dcb/idx70693688536-talos-log-oneline-dscp-app.txt", "dcb"),
    "torch NCCL errors": ("seen/nccl-log/nccl934-distbackenderror-2.18.5-ncclremoteerror-two-lines-no-last-error.txt",
                          "nccl-log"),
    "ProcessGroupNCCL watchdog": ("round2/nccl-log/llamafactory7396-pid-prefixed-rank-watchdog-allreduce-timeout-4-"
                                  "lines.txt", "nccl-log"),
    "NET/OFI behind pdsh": ("round2/nccl-log/awsofi67-pdsh-prefix-p4d-no-optimal-provider.txt", "nccl-log"),
    "nccl-tests header without '#'": ("round2/nccl-tests/nccltests37-v100x8-allgather-4g-oob-2-failed-no-hash.txt",
                                      "nccl-tests"),
    "nccl-tests rows only": ("round2/nccl-tests/mooncake3484-rows-only-cut-32k-32m.txt", "nccl-tests"),
    "nccl-tests banner then a CUDA failure": ("gpu/nccl-tests/nccltests264-cuda-init-failure.txt", "nccl-tests"),
    "nccl-tests -J JSON": ("fixtures/nccl-tests-json/a100x8-all-reduce-J-shape-of-util-cu.txt", "nccl-tests"),
    "mpirun error naming all_reduce_perf": ("fixtures/nccl-tests/mpirun-not-enough-slots-gcm.txt", "nccl-tests"),
    "nvidia-smi table without its banner": ("seen/nvidia-smi/nccltests228-a100-sxm4-x8-table-starts-mid-gpu0-cut-at-"
                                            "gpu4.txt", "nvidia-smi"),
    "nvidia-smi 610 'KMD Version' banner": ("gpu/nvidia-smi/ne-rtx-2080-610.57.04.txt", "nvidia-smi"),
    "nvidia-smi MIG box": ("seen/nvidia-smi/nvitop8-mig-devices-box-only-a100-3-instances-cut.txt", "nvidia-smi"),
    "nvidia-smi error line": ("seen/nvidia-smi/ogkm259-device-handle-not-found-d8-open-515.txt", "nvidia-smi"),
    "nvidia-smi error between prompts": ("round2/nvidia-smi/parallelcluster1768-g4dn-salloc-prompt-failed-to-"
                                         "communicate-with-driver.txt", "nvidia-smi"),
    "nvidia-smi nvlink -s": ("round2/nvidia-smi-nvlink/gpud-a100-sxm4-80gb-x8-12-links-25gbs.txt", "nvidia-smi-nvlink"),
    "nvlink all inactive": ("round2/nvidia-smi-nvlink/aznhc-a100-gpu6-nvml-all-links-inactive.txt",
                            "nvidia-smi-nvlink"),
    "nvidia-smi -q excerpt": ("round2/nvidia-smi-q/ogpu421-rtx-a-mobile-mid-excerpt-power-clocks.txt", "nvidia-smi-q"),
    "--query-gpu with timestamp first": ("gpu/nvidia-smi-query/ne-h200-590.48.01.txt", "nvidia-smi-query"),
    "--query-gpu by its command line": ("seen/nvidia-smi-query/zabbixnvsmi9-prompt-fan-speed-noheader-nounits-not-"
                                        "supported.txt", "nvidia-smi-query"),
    "topo -m rows without header": ("seen/nvidia-smi-topo/vllm6746-8x-h100-nv18-excerpt-starts-at-gpu4-no-header.txt",
                                    "nvidia-smi-topo"),
    "sinfo -lNe header": ("round2/sinfo/elasticluster272-sinfo-lNe-down-star-not-responding.txt", "sinfo"),
    "sinfo -o with pipes": ("round2/sinfo/gcm-sinfo-o-all-pipes-node0201-drain-star-replace.txt", "sinfo"),
    "sinfo -h rows": ("seen/sinfo/promslurm-h-node-comma-statelong-709-nodes-down-star-fail-star.txt", "sinfo"),
    "sinfo -h summary rows": ("round2/sinfo/arjuna85-gpu-partition-state-summary-maint-down-fail-no-header.txt",
                              "sinfo"),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_family_is_recognised_and_says_why(family: str) -> None:
    from ccparse import detect

    ident, kind = FAMILIES[family]
    case = next((c for c in cases() if c.ident == ident), None)
    assert case is not None, f"{ident}: not an allowed capture"
    text = case.data.decode("utf-8", "replace")
    assert detect.detect_kind(text) == kind, family
    found = detect.detect(text)
    assert found is not None and found.why and found.line >= 1 and found.text, found


# --- text that is no capture: unknown KIND, reported, never a verdict -------------------------------

TRACEBACK = (
    'Traceback (most recent call last):\n'
    '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/run.py", line 810, in <module>\n'
    '    main()\n'
    '  File "/workspace/train.py", line 41, in main\n'
    '    model = build(cfg)\n'
    "KeyError: 'hidden_size'\n")


@pytest.mark.parametrize("source", ["README.md", "CHANGELOG.md", "docs/DEVELOPING.md", "roles/slurm_compute/README.md",
                                    "tests/fixtures/labelled/README.md", "plugins/module_utils/ccparse/nccl_log.py",
                                    "clusterctl/analysis/checks/gpu.py", "bench/device/h200_gpu_tools.sh",
                                    "roles/monitoring/templates/clusterctl-slurm-textfile.service.j2", "traceback"])
def test_text_that_is_no_capture_is_unknown_kind_never_a_verdict(tmp_path: Path, source: str) -> None:
    from ccparse.detect import detect_kind

    data = TRACEBACK.encode() if source == "traceback" else (REPO / source).read_bytes()
    assert detect_kind(data.decode()) is None, source
    (tmp_path / "n1").mkdir()
    (tmp_path / "n1" / "notes.txt").write_bytes(data)
    rep = engine.analyze_dir(tmp_path, None, jobs=1)
    host = rep.hosts["n1"]
    assert host.status == "no evidence" and not host.findings
    assert host.read_as == {"notes.txt": {"kind": None, "why": host.read_as["notes.txt"]["why"]}}
    assert "unknown KIND" in host.read_as["notes.txt"]["why"]
    assert any("n1/notes.txt: unknown KIND" in n.message for n in host.notes)


def test_the_json_report_names_the_chosen_kind_and_why(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from clusterctl.cli import app

    case = next(c for c in cases() if c.ident == FAMILIES["syslog/journal lines"][0])
    (tmp_path / "n1").mkdir()
    (tmp_path / "n1" / "journal.txt").write_bytes(case.data)
    res = CliRunner().invoke(app, ["analyze", str(tmp_path), "--json"])
    doc = json.loads(res.output)["result"]
    read_as = doc["hosts"]["n1"]["read_as"]["journal.txt"]
    assert read_as["kind"] == "kernel-log"
    assert "kernel log lines" in read_as["why"] and "on line 1" in read_as["why"]
    assert any(n["host"] == "n1" and "n1/journal.txt: read as KIND kernel-log (recognised from its content: "
               "kernel log lines" in n["message"] for n in doc["notes"])
    # the table says it too, one line a file, after the hosts' rows
    (tmp_path / "n1" / "uname_-a").write_text("Linux n1 5.15.0-105-generic #115-Ubuntu SMP x86_64 GNU/Linux\n")
    out = CliRunner().invoke(app, ["analyze", str(tmp_path)]).output.splitlines()
    assert [ln for ln in out if ln.startswith("n1/")] == [
        f"n1/journal.txt: read as KIND kernel-log ({read_as['why']})",
        "n1/uname_-a: unknown KIND: not recognised from its name or content, file not judged (name it <KIND>.txt "
        "to choose)"]


# --- a support bundle's folder -------------------------------------------------------------------

def _capture(rel: str) -> bytes:
    """A fixture as a bundle holds it: without the line 1 naming its source."""
    data = (FIXTURES / rel).read_bytes()
    return data.split(b"\n", 1)[1] if data.startswith(b"# source:") else data


#: a support bundle's files (names of nvidia-bug-report splits and of sosreport's sos_commands: sos
#: names a command's output after the command, blanks as '_': infiniband/ibstat, infiniband/ibv_devinfo_-v,
#: kernel/dmesg, nvidia/nvidia-smi_--list-gpus) -> (fixture, the KIND it is, or None: not a KIND)
BUNDLE: dict[str, tuple[str | None, str | None]] = {
    "dmesg.txt": ("kernel-log/fallen-off-bus-no-xid-dmesg.txt", "kernel-log"),
    "journal.txt": ("kernel-log/mlx5-port-init-active-journal.txt", "kernel-log"),
    "nvidia-smi.txt": ("nvidia-smi/h100x8-550.90.07-table.txt", None),  # <KIND>.txt: read by its name
    "nvidia-smi-q.txt": ("nvidia-smi-q/h100x8-535.183.01-full-sw-thermal-active.txt", None),
    "ibstat.out": ("ibstat/h100-cx7-roce-down-polling.txt", "ibstat"),
    "sinfo.log": ("sinfo/default-with-down-star.txt", "sinfo"),
    "ibv_devinfo_-v": ("ibv_devinfo/cx7-ndr-ib-plus-cx6dx-roce-verbose.txt", "ibv_devinfo"),
    "dmesg": ("kernel-log/xid69-31-syslog.txt", "kernel-log"),
}


def test_support_bundle_folder_picks_the_kinds_it_knows_and_lists_the_rest(tmp_path: Path) -> None:
    bundle, named = tmp_path / "bundle" / "node07", tmp_path / "named" / "node07"
    bundle.mkdir(parents=True)
    named.mkdir(parents=True)
    for name, (rel, kind) in BUNDLE.items():
        assert rel is not None
        data = _capture(rel)
        (bundle / name).write_bytes(data)
        (named / f"{kind or name.rsplit('.', 1)[0]}#{name.replace('.', '_')}.txt").write_bytes(data)
    # what the bundle holds besides: a GPU listing (nvidia-smi -L: read as nvidia-smi, its count and nothing
    # else), uname, a compressed report, a subfolder of sos_commands
    (bundle / "nvidia-smi_--list-gpus").write_text("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-5269b708-678a-b1a8-"
                                                    "60f0-c90406537486)\n")
    (bundle / "uname_-a").write_text("Linux node07 5.15.0-105-generic #115-Ubuntu SMP Mon Apr 15 09:52:04 UTC 2024 "
                                     "x86_64 x86_64 x86_64 GNU/Linux\n")
    (bundle / "nvidia-bug-report.log.gz").write_bytes(b"\x1f\x8b\x08\x00" + bytes(range(256)))
    (bundle / "sos_commands" / "infiniband").mkdir(parents=True)
    (bundle / "sos_commands" / "infiniband" / "ibstat").write_bytes(_capture("ibstat/a100-all-active.txt"))

    got = engine.analyze_dir(bundle.parent, None, jobs=1).hosts["node07"]
    want = engine.analyze_dir(named.parent, None, jobs=1).hosts["node07"]
    read_as = {name: v["kind"] for name, v in got.read_as.items()}
    assert read_as == {**{n: k for n, (_, k) in BUNDLE.items() if k}, "nvidia-smi_--list-gpus": "nvidia-smi",
                       "uname_-a": None, "nvidia-bug-report.log.gz": None, "sos_commands": None}
    assert "compressed" in got.read_as["nvidia-bug-report.log.gz"]["why"]
    assert "subfolder" in got.read_as["sos_commands"]["why"]
    # the files it knows are judged as they are by name; what it did not read changes no verdict
    assert got.status == want.status == "failed"
    assert sorted((f.check, f.severity, f.subject) for f in got.findings) == sorted(
        (f.check, f.severity, f.subject) for f in want.findings)


#: the prologue nvidia-bug-report.sh writes (its own echo lines), then sections of several tools
BUG_REPORT = (
    "____________________________________________\n\n"
    "Start of NVIDIA bug report log file.  Please include this file, along\n"
    "with a detailed description of your problem, when reporting a graphics\n"
    "driver bug via the NVIDIA Linux forum (see forums.developer.nvidia.com)\n"
    "or by sending email to 'linux-bugs@nvidia.com'.\n\n"
    "nvidia-bug-report.sh Version: 31831145\n\n"
    "____________________________________________\n\n")


def test_an_nvidia_bug_report_log_is_many_tools_not_one_kind(tmp_path: Path) -> None:
    from ccparse.detect import detect_kind, why_unknown

    q = _capture("nvidia-smi-q/h100x8-535.183.01-full-sw-thermal-active.txt").decode()
    dmesg = _capture("kernel-log/fallen-off-bus-no-xid-dmesg.txt").decode()
    text = BUG_REPORT + q + "\n____________________________________________\n\n" + dmesg
    assert detect_kind(text) is None and "nvidia-bug-report" in why_unknown(text)
    (tmp_path / "n1").mkdir()
    (tmp_path / "n1" / "nvidia-bug-report.log").write_text(text)
    host = engine.analyze_dir(tmp_path, None, jobs=1).hosts["n1"]
    assert host.status == "no evidence" and "nvidia-bug-report log" in host.read_as["nvidia-bug-report.log"]["why"]


# --- the same captures as pastes carry them: quoted, behind pdsh, in fences -----------------------

PASTES = {
    "pdsh": lambda x: "".join(f"node07: {ln}\n" for ln in x.splitlines()),
    "quoted": lambda x: "".join(f"> {ln}\n" for ln in x.splitlines()),
    "fenced": lambda x: "```\n" + x + ("" if x.endswith("\n") else "\n") + "```\n",
}
#: captures quoted as a reply ('> ' on every line): a launcher's prefix comes inside the quote, never before it
QUOTED_REPLIES = frozenset({
    "round2/kernel-log/netdev2021-sony-cx5-5-10-65-regression-mlx5-load-one-failed-22-both-ports-probe-failed.txt",
    "round2/ip-link/blklist2020-hpe-dl380gen9-ip-a-s-quoted-eno1-no-carrier-down-unconfigured-eno49-up-wrapped.txt",
    "round2/lspci/iwl2021-dilfridge-quoted-lspci-nn-elided-i350-01-00.0-01-00.1-rev-ff-config-space-gone.txt",
    "round2/sinfo/caviness-hpcintro-blockquote-gt-gt-prefix-wrapped-nodelists-drain-star-down-star-down-it-css.txt",
    "round2/ibstatus/ompiusers28792-2016-quoted-gt-bstatus-typo-mlx4_0-one-port-active-fdr-56-html-pre.txt",
    "round2/ip-link/netdev2020-lag-ipv6-reproducer-ip-a-s-double-quoted-bond0-ens2f1np2-slave-no-carrier-down-"
    "ens2f0np0-up-wrapped.txt",
    "round2/lspci/linuxpci-pilcher-quadro-p1000-vfio-pci-gt-quoted-vvvxx-gpu-and-audio-hexdump-2-5gts-idle-x16.txt",
    # Markdown's lazy blockquote: '> ' on the record's first line only
    "round2/ip-link/danm246-mellanox-pf-enp101s0f0-up-vf-list-vlan-10-markdown-bold-quote-prefix-cut.txt",
    # a quoted reply whose listing opens with a backtick inside the quote ('> `4: enp137s0f0: ...')
    "round2/ip-link/kata414-quoted-reply-backticks-enp137s0f0-pf-no-up-flag-with-vf0-link-state-auto-enp137s0f2-"
    "down.txt",
})


def _one_line(text: str) -> bool:
    """A one-line capture (after its header lines): no prefix is told from the text on one line."""
    return len([ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]) == 1


@pytest.mark.parametrize("paste", sorted(PASTES))
def test_every_capture_pasted_with_a_prefix_is_read_as_the_same_kind(paste: str) -> None:
    from ccparse.detect import detect_kind

    wrong = []
    for case in cases():
        text = case.data.decode("utf-8", "replace")
        if detect_kind(PASTES[paste](text)) != detect_kind(text) and not _one_line(text) \
                and case.ident not in QUOTED_REPLIES:
            wrong.append(case.ident)
    assert not wrong, wrong
