#!/usr/bin/python
"""Ansible module fabric_evidence: run the read-only fabric/GPU tools, return their raw outputs."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: fabric_evidence
short_description: Capture fabric and GPU tool outputs for the clusterctl analysis
description:
  - Runs the read-only tools C(ibstat), C(ibstatus), C(mlnx_qos -i <if>), C(nvidia-smi -q),
    C(nvidia-smi --query-gpu=...), C(nvidia-smi topo -m), C(nvidia-smi nvlink -s) and returns each
    stdout, keyed by the ccparse KIND the controller parses it with.
    KIND C(kernel-log) is the kernel log of the current boot (or since I(kernel_log_since)), the
    last I(kernel_log_lines) lines of C(journalctl -k -o short-iso), or of C(dmesg) where journalctl
    is not installed or has no journal; the controller reads NVIDIA Xid events, GPUs fallen off the
    bus, NVLink driver errors and link flaps from it. KIND C(sysfs-ib) is no tool but a JSON object
    mapping C(/sys) paths to file contents, the RDMA device and netdev attributes under I(sysfs_root)
    (port state, rate, link layer, GIDs, netdev MTU), laid out as C(/sys/bus/pci/devices/<pci>/...).
    KIND C(proc-limits) is C(<proc_root>/<pid>/limits) of the running C(slurmd), returned under the
    key C(proc-limits#slurmd) with a first comment line naming the process and its pid. Every job
    step inherits slurmd's limits, so its memlock limit decides whether RDMA jobs can register
    memory (C(skipped) when no slurmd runs).
    Judgement happens on the controller (C(clusterctl analyze)); this module only collects.
  - C(dcgmi diag) runs only when I(dcgmi_level) is set. The active tests (C(nccl-tests)
    all_reduce_perf within the node, C(ib_write_bw) loopback on one device, C(gemm) the
    dense GEMM throughput of every GPU at once with clusterctl-gemm, the burn-in gate's compute
    floor) run only when listed in I(active) and only when the node runs no Slurm job (no
    C(slurmstepd) process); otherwise they are reported with status C(skipped).
  - KIND C(nvidia-smi-q) is captured as C(nvidia-smi -q -x) XML (the same report, read by the
    controller with the standard library's XML parser) and, where that fails or prints no XML
    (older drivers, a stand-in nvidia-smi), as the C(nvidia-smi -q) text; both parse to one shape.
  - Tells apart C(tool_missing) (the binary is not installed), C(device_absent) (no RDMA device /
    no GPU) and C(error) (the tool ran and failed). Never reports changed; supports check mode
    (every tool it runs is read-only; the active tests only load the devices).
version_added: "0.1.0"
options:
  kinds:
    description: Passive KINDs to capture.
    type: list
    elements: str
    default: [ibstat, ibstatus, sysfs-ib, mlnx_qos, nvidia-smi-q, nvidia-smi-query, nvidia-smi-topo, nvidia-smi-nvlink,
      kernel-log, proc-limits]
    choices: [ibstat, ibstatus, sysfs-ib, mlnx_qos, nvidia-smi-q, nvidia-smi-query, nvidia-smi-topo, nvidia-smi-nvlink,
      kernel-log, proc-limits]
  qos_interfaces:
    description:
      - Netdevs to read back with C(mlnx_qos -i). Empty means every netdev of an RDMA device whose
        link layer is Ethernet (RoCE), found under I(sysfs_root).
    type: list
    elements: str
    default: []
  dcgmi_level:
    description: Run C(dcgmi diag -r <level> -j) at this level (1 quick to 4 long); 0 skips it.
    type: int
    default: 0
    choices: [0, 1, 2, 3, 4]
  active:
    description: Active tests to run on an idle node.
    type: list
    elements: str
    default: []
    choices: [nccl-tests, ib_write_bw, gemm]
  gemm_program:
    description:
      - Path of clusterctl-gemm (installed by the gpu_tools role). Missing is C(tool_missing); its
        exit 3 (neither PyTorch with CUDA nor the CUDA runtime and cuBLAS libraries) C(tool_missing),
        exit 4 (no GPU) C(device_absent); exit 0 or 1 (a GPU failed, its line says why) with its
        closing line C(ok).
    type: path
    default: /usr/local/bin/clusterctl-gemm
  gemm_args:
    description: Arguments of clusterctl-gemm (C(--dtype), C(--size), C(--iters), C(--seconds)).
    type: list
    elements: str
    default: []
  nccl_tests_binary:
    description: Path of nccl-tests' C(all_reduce_perf).
    type: path
    default: /opt/nccl-tests/build/all_reduce_perf
  nccl_tests_args:
    description: Arguments of C(all_reduce_perf) (C(-g) is added with the GPU count when absent).
    type: list
    elements: str
    default: ["-b", "8M", "-e", "8G", "-f", "2"]
  ib_write_bw_device:
    description: RDMA device of the loopback C(ib_write_bw); empty means the first device.
    type: str
    default: ""
  ib_write_bw_seconds:
    description: Duration of the loopback C(ib_write_bw) (C(-D)).
    type: int
    default: 5
  ib_write_bw_port:
    description:
      - TCP port of the loopback test's out-of-band exchange (C(ib_write_bw -p)). The client side
        retries for 10 s while the server side does not listen yet.
    type: int
    default: 18515
  kernel_log_lines:
    description: Lines of the kernel log returned (the most recent ones).
    type: int
    default: 20000
  kernel_log_since:
    description:
      - Start of the kernel log window, as C(journalctl --since) takes it (e.g. C(-24h),
        C(2026-12-01)). Empty means the current boot (C(journalctl -b)); C(dmesg) always gives the
        current boot.
    type: str
    default: ""
  sysfs_root:
    description:
      - Root of sysfs (a simulated tree in tests). RDMA devices, RoCE netdevs and the C(sysfs-ib)
        dump are read under it. C(ibstat) and C(ibstatus) read the kernel's own C(/sys), so with a
        simulated root, leave them out of I(kinds) unless I(tool_dirs) holds fakes of them.
    type: path
    default: /sys
extends_documentation_fragment:
  - clusterctl.hpc.clusterctl_collector
  - clusterctl.hpc.clusterctl_collector.node_roots
  - clusterctl.hpc.clusterctl_collector.tool_dirs
"""

EXAMPLES = r"""
- name: Capture the quick evidence
  clusterctl.hpc.fabric_evidence:
  register: evidence

- name: Full verification on idle nodes
  clusterctl.hpc.fabric_evidence:
    dcgmi_level: 2
    active: [nccl-tests, ib_write_bw, gemm]
"""

RETURN = r"""
evidence:
  description: KIND (or C(KIND#instance) for one more capture, e.g. C(mlnx_qos#eth3)) -> result.
  returned: always
  type: dict
  contains:
    status:
      description: C(ok), C(tool_missing), C(device_absent), C(error) or C(skipped).
      type: str
    rc:
      description: Exit status of the tool (null when it did not run).
      type: int
    stdout:
      type: str
      description:
        - The tool's standard output; C(mlnx_qos) output starts with a header comment line naming
          the interface read (the tool does not print it; ccparse.mlnx_qos reads that header).
    stderr:
      description: The tool's standard error (or why it did not run).
      type: str
    cmd:
      description: The command line run.
      type: list
summary:
  description: The same keys with C(status), C(rc) and the first line of C(stderr) only (no output).
  returned: always
  type: dict
running_jobs:
  description: Number of Slurm job steps (slurmstepd processes) found running on the node.
  returned: always
  type: int
parsed:
  description:
    - The same keys (successful captures only) -> the capture parsed on the node by the
      controller's ccparse parser, as a ccparse.preparsed envelope (C(schema), C(kind),
      C(parser_version), C(raw_crc32), C(data)). The verify playbook writes it as
      C(<host>/_parsed.json); C(clusterctl analyze) uses an envelope only when its schema, parser
      source hash and raw-text hash match its own, and parses the raw text otherwise.
    - A capture that does not parse, or whose parse JSON does not carry unchanged, has no entry.
  returned: always
  type: dict
"""

import json  # noqa: E402
import os  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse.node import (  # noqa: E402
    ENV,
    entry,
    pids_named,
    rdma_devices,
    running_job_steps,
    summarise,
)
from ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse.perftest_run import loopback  # noqa: E402
from ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse.preparsed import parse_results  # noqa: E402

PASSIVE = ["ibstat", "ibstatus", "sysfs-ib", "mlnx_qos", "nvidia-smi-q", "nvidia-smi-query", "nvidia-smi-topo",
           "nvidia-smi-nvlink", "kernel-log", "proc-limits"]
RDMA_KINDS = ("ibstat", "ibstatus", "sysfs-ib", "mlnx_qos", "ib_write_bw")
GPU_KINDS = ("nvidia-smi-q", "nvidia-smi-query", "nvidia-smi-topo", "nvidia-smi-nvlink", "dcgmi-diag", "nccl-tests",
             "gemm")
QUERY_FIELDS = ("index,pci.bus_id,name,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,"
                "pcie.link.width.max,temperature.gpu,power.draw,clocks_throttle_reasons.active,ecc.errors."
                "uncorrected.volatile.total")
# clusterctl-gemm's exit status with no PyTorch/CUDA backend and with no GPU
GEMM_NO_BACKEND = 3
GEMM_NO_GPU = 4
# nvidia-smi's exit status when no GPU is present ("No devices were found")
NVSMI_NO_DEVICES = 6


def roce_netdevs(sysfs_root):
    """Netdevs of RDMA ports whose link layer is Ethernet (RoCE)."""
    out = []
    for dev in rdma_devices(sysfs_root):
        base = os.path.join(sysfs_root, "class", "infiniband", dev)
        ports = os.path.join(base, "ports")
        ll = set()
        for p in sorted(os.listdir(ports)) if os.path.isdir(ports) else []:
            try:
                with open(os.path.join(ports, p, "link_layer")) as f:
                    ll.add(f.read().strip())
            except OSError:
                continue
        net = os.path.join(base, "device", "net")
        if "Ethernet" in ll and os.path.isdir(net):
            out += sorted(os.listdir(net))
    return out


#: Attributes dumped for KIND sysfs-ib (what ccparse.sysfs_ib reads); GID tables are dumped whole.
DEV_ATTRS = ("fw_ver", "node_guid", "hca_type", "board_id", "node_type")
PORT_ATTRS = ("state", "phys_state", "rate", "link_layer")
NET_ATTRS = ("dev_port", "mtu", "operstate", "address")
GID_DIRS = ("gids", "gid_attrs/types", "gid_attrs/ndevs")


def _read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:  # e.g. EINVAL on unused gid_attrs entries
        return None


def sysfs_ib_dump(sysfs_root):
    """``{"/sys/bus/pci/devices/<pci>/...": content}`` of every RDMA device under ``sysfs_root``."""
    out = {}

    def put(key, path):
        text = _read(path)
        if text is not None:
            out[key] = text

    for dev in rdma_devices(sysfs_root):
        cdir = os.path.join(sysfs_root, "class", "infiniband", dev)
        pci_dir = os.path.realpath(os.path.join(cdir, "device"))
        pci = os.path.basename(pci_dir)
        base = f"/sys/bus/pci/devices/{pci}"
        put(f"{base}/numa_node", os.path.join(pci_dir, "numa_node"))
        for attr in DEV_ATTRS:
            put(f"{base}/infiniband/{dev}/{attr}", os.path.join(cdir, attr))
        ports = os.path.join(cdir, "ports")
        for port in sorted(os.listdir(ports)) if os.path.isdir(ports) else []:
            pdir = os.path.join(ports, port)
            key = f"{base}/infiniband/{dev}/ports/{port}"
            for attr in PORT_ATTRS:
                put(f"{key}/{attr}", os.path.join(pdir, attr))
            for sub in GID_DIRS:
                gdir = os.path.join(pdir, sub)
                for idx in sorted(os.listdir(gdir)) if os.path.isdir(gdir) else []:
                    put(f"{key}/{sub}/{idx}", os.path.join(gdir, idx))
        net = os.path.join(pci_dir, "net")
        for ifname in sorted(os.listdir(net)) if os.path.isdir(net) else []:
            for attr in NET_ATTRS:
                put(f"{base}/net/{ifname}/{attr}", os.path.join(net, ifname, attr))
    return out


def gpu_count(module, nvsmi):
    rc, out, _err = module.run_command([nvsmi, "--query-gpu=index", "--format=csv,noheader"], environ_update=ENV)
    return len([x for x in out.splitlines() if x.strip()]) if rc == 0 else 0


class Collector:
    def __init__(self, module):
        self.module = module
        self.p = module.params
        self.result = {}

    def put(self, key, status, rc=None, stdout="", stderr="", cmd=None):
        self.result[key] = entry(status, rc, stdout, stderr, cmd)

    def which(self, tool):
        return self.module.get_bin_path(tool, opt_dirs=self.p["tool_dirs"])

    def run(self, key, tool, args, *, absent_when=None):
        path = self.which(tool)
        if path is None:
            self.put(key, "tool_missing", stderr=f"{tool} not found in PATH")
            return None
        cmd = [path, *args]
        try:
            rc, out, err = self.module.run_command(cmd, environ_update=ENV)
        except Exception as exc:  # run_command raises on exec failures
            self.put(key, "error", stderr=str(exc), cmd=cmd)
            return None
        if absent_when is not None and absent_when(rc, out, err):
            self.put(key, "device_absent", rc, out, err, cmd)
        else:
            self.put(key, "ok" if rc == 0 else "error", rc, out, err, cmd)
        return path

    def passive(self):
        kinds = self.p["kinds"]
        devs = rdma_devices(self.p["sysfs_root"])
        for kind in ("ibstat", "ibstatus"):
            if kind in kinds:
                if not devs:
                    self.put(kind, "device_absent", stderr=f"no device under {self.p['sysfs_root']}/class/infiniband")
                else:
                    self.run(kind, kind, [])
        if "sysfs-ib" in kinds:
            root = self.p["sysfs_root"]
            if not devs:
                self.put("sysfs-ib", "device_absent", stderr=f"no device under {root}/class/infiniband")
            else:
                dump = json.dumps(sysfs_ib_dump(root), indent=1, sort_keys=True)
                self.put("sysfs-ib", "ok", 0, dump + "\n", "", ["read", f"{root}/class/infiniband"])
        if "mlnx_qos" in kinds:
            ifaces = self.p["qos_interfaces"] or roce_netdevs(self.p["sysfs_root"])
            if not ifaces:
                self.put("mlnx_qos", "device_absent", stderr="no RoCE netdev to read QoS from")
            for i, ifname in enumerate(ifaces):
                key = "mlnx_qos" if i == 0 else f"mlnx_qos#{ifname}"
                self.run(key, "mlnx_qos", ["-i", ifname])
                # mlnx_qos never prints the interface: a header line (ccparse.mlnx_qos reads it)
                # names it, so a finding's subject is host/<interface> and not just the host
                if self.result[key]["stdout"]:
                    self.result[key]["stdout"] = f"# interface: {ifname}\n" + self.result[key]["stdout"]

        if "proc-limits" in kinds:
            self.slurmd_limits()
        if "kernel-log" in kinds:
            self.kernel_log()

        def no_gpu(rc, out, err):
            return rc == NVSMI_NO_DEVICES or "No devices were found" in (out + err)

        gpu_args = {
            "nvidia-smi-q": ["-q"],
            "nvidia-smi-query": [f"--query-gpu={QUERY_FIELDS}", "--format=csv"],
            "nvidia-smi-topo": ["topo", "-m"],
            "nvidia-smi-nvlink": ["nvlink", "-s"],
        }
        for kind, args in gpu_args.items():
            if kind not in kinds:
                continue
            if kind == "nvidia-smi-q" and self.xml_report(no_gpu):
                continue
            self.run(kind, "nvidia-smi", args, absent_when=no_gpu)

    def xml_report(self, no_gpu):
        """``nvidia-smi -q -x`` into the ``nvidia-smi-q`` key; False (nothing kept) when it fails or
        prints no XML document, so the caller captures the ``-q`` text instead."""
        if self.run("nvidia-smi-q", "nvidia-smi", ["-q", "-x"], absent_when=no_gpu) is None:
            return True  # tool missing or exec failure: already reported, the text would fail alike
        res = self.result["nvidia-smi-q"]
        return res["status"] == "device_absent" or (res["status"] == "ok" and "<nvidia_smi_log" in res["stdout"])

    def kernel_log(self):
        """journalctl -k (the current boot or since kernel_log_since), else dmesg; the last N lines."""
        key, n, since = "kernel-log", self.p["kernel_log_lines"], self.p["kernel_log_since"]
        window = ["--since", since] if since else ["-b"]
        journal = self.which("journalctl")
        tried = []
        if journal is not None:
            cmd = [journal, "-k", *window, "-o", "short-iso", "--no-pager", "-n", str(n)]
            rc, out, err = self.module.run_command(cmd, environ_update=ENV)
            if rc == 0 and out.strip() and "No journal files were found" not in out + err:
                self.put(key, "ok", rc, out, err, cmd)
                return
            tried.append(f"journalctl rc {rc}: {(err or out).strip()[:160]}")
        dmesg = self.which("dmesg")
        if dmesg is None:
            why = "; ".join(tried) or "journalctl not found in PATH"
            self.put(key, "tool_missing", stderr=f"neither journalctl (with a journal) nor dmesg: {why}")
            return
        cmd = [dmesg]
        rc, out, err = self.module.run_command(cmd, environ_update=ENV)
        if rc == 0:
            out = "\n".join(out.splitlines()[-n:]) + "\n" if out.strip() else out
        self.put(key, "ok" if rc == 0 else "error", rc, out, "; ".join([*tried, err.strip()]).strip("; "), cmd)

    def slurmd_limits(self):
        key, proc = "proc-limits#slurmd", self.p["proc_root"]
        pids = pids_named(proc, "slurmd")
        if not pids:
            self.put(key, "skipped", stderr=f"slurmd is not running (no slurmd under {proc}); its limits not read")
            return
        path = os.path.join(proc, str(pids[0]), "limits")
        text = _read(path)
        if text is None:
            self.put(key, "error", stderr=f"cannot read {path}", cmd=["read", path])
        else:
            self.put(key, "ok", 0, f"# process: slurmd pid {pids[0]}\n{text}", "", ["read", path])

    def dcgmi(self):
        level = self.p["dcgmi_level"]
        if level:
            self.run("dcgmi-diag", "dcgmi", ["diag", "-r", str(level), "-j"],
                     absent_when=lambda rc, out, err: "No GPUs" in out + err or "no GPUs" in out + err)

    def active(self, jobs):
        tests = self.p["active"]
        if not tests:
            return
        if jobs:
            for t in tests:
                self.put(t, "skipped", stderr=f"{jobs} Slurm job step(s) running on the node; active tests skipped")
            return
        if "nccl-tests" in tests:
            self.nccl_tests()
        if "ib_write_bw" in tests:
            self.ib_write_bw()
        if "gemm" in tests:
            self.gemm()

    def gemm(self):
        """clusterctl-gemm: its exit status says tool missing (3) / no GPU (4); 1 is a GPU that failed, which
        its output names: evidence, judged like a measurement."""
        program = self.p["gemm_program"]
        if not os.access(program, os.X_OK):
            self.put("gemm", "tool_missing", stderr=f"{program} not found or not executable")
            return
        cmd = [program, *self.p["gemm_args"]]
        rc, out, err = self.module.run_command(cmd, environ_update=ENV)
        if rc == GEMM_NO_BACKEND:
            status = "tool_missing"
        elif rc == GEMM_NO_GPU:
            status = "device_absent"
        elif rc in (0, 1) and "# done " in out:
            status = "ok"
        else:
            status = "error"
        why = " ".join(line for line in out.splitlines() if line.startswith("status\t")).replace("\t", " ")
        self.put("gemm", status, rc, out, "; ".join(x for x in (why, err.strip()) if x), cmd)

    def nccl_tests(self):
        binary = self.p["nccl_tests_binary"]
        if not os.access(binary, os.X_OK):
            self.put("nccl-tests", "tool_missing", stderr=f"{binary} not found or not executable")
            return
        args = list(self.p["nccl_tests_args"])
        if "-g" not in args:
            nvsmi = self.which("nvidia-smi")
            n = gpu_count(self.module, nvsmi) if nvsmi else 0
            if n == 0:
                self.put("nccl-tests", "device_absent", stderr="no GPU found by nvidia-smi")
                return
            args += ["-g", str(n)]
        cmd = [binary, *args]
        rc, out, err = self.module.run_command(cmd, environ_update=ENV)
        self.put("nccl-tests", "ok" if rc == 0 else "error", rc, out, err, cmd)

    def ib_write_bw(self):
        devs = rdma_devices(self.p["sysfs_root"])
        if not devs:
            self.put("ib_write_bw", "device_absent", stderr="no RDMA device")
            return
        path = self.which("ib_write_bw")
        if path is None:
            self.put("ib_write_bw", "tool_missing", stderr="ib_write_bw (perftest) not found in PATH")
            return
        dev = self.p["ib_write_bw_device"] or devs[0]
        seconds = self.p["ib_write_bw_seconds"]
        cmd = [path, "-d", dev, "-D", str(seconds), "-p", str(self.p["ib_write_bw_port"]), "--report_gbits", "-F"]
        self.result["ib_write_bw"] = loopback(cmd, seconds, connect_timeout=10)


def main():
    module = AnsibleModule(
        argument_spec={
            "kinds": {"type": "list", "elements": "str", "default": PASSIVE, "choices": PASSIVE},
            "qos_interfaces": {"type": "list", "elements": "str", "default": []},
            "dcgmi_level": {"type": "int", "default": 0, "choices": [0, 1, 2, 3, 4]},
            "active": {"type": "list", "elements": "str", "default": [],
                       "choices": ["nccl-tests", "ib_write_bw", "gemm"]},
            "gemm_program": {"type": "path", "default": "/usr/local/bin/clusterctl-gemm"},
            "gemm_args": {"type": "list", "elements": "str", "default": []},
            "nccl_tests_binary": {"type": "path", "default": "/opt/nccl-tests/build/all_reduce_perf"},
            "nccl_tests_args": {"type": "list", "elements": "str", "default": ["-b", "8M", "-e", "8G", "-f", "2"]},
            "ib_write_bw_device": {"type": "str", "default": ""},
            "ib_write_bw_seconds": {"type": "int", "default": 5},
            "ib_write_bw_port": {"type": "int", "default": 18515},
            "kernel_log_lines": {"type": "int", "default": 20000},
            "kernel_log_since": {"type": "str", "default": ""},
            "tool_dirs": {"type": "list", "elements": "path", "default": []},
            "sysfs_root": {"type": "path", "default": "/sys"},
            "proc_root": {"type": "path", "default": "/proc"},
        },
        supports_check_mode=True,
    )
    c = Collector(module)
    jobs = running_job_steps(module.params["proc_root"])
    try:
        c.passive()
        c.dcgmi()
        c.active(jobs)
    except Exception as exc:
        module.fail_json(msg=f"fabric_evidence failed: {type(exc).__name__}: {exc}", evidence=c.result,
                         running_jobs=jobs, changed=False)
    module.exit_json(changed=False, evidence=c.result, summary=summarise(c.result), running_jobs=jobs,
                     parsed=parse_results(c.result))


if __name__ == "__main__":
    main()
