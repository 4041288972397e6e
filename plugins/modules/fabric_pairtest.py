#!/usr/bin/python
"""Ansible module fabric_pairtest: one side of a pairwise ib_write_bw test between two nodes."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: fabric_pairtest
short_description: Run one side of a pairwise ib_write_bw test between two nodes
description:
  - Runs perftest's C(ib_write_bw) as the I(server) or the I(client) of a pair test, one process
    per RDMA device, all devices at once (rail I(i) of one node against rail I(i) of the other,
    TCP port I(base_port) + I(i) for the out-of-band exchange). The client retries its connection
    until the server listens or I(connect_timeout) passes, so both sides can start in any order.
  - The pairs and rounds are chosen on the controller (C(clusterctl verify --level full),
    C(clusterctl.analysis.schedule)); the results are judged there. This module only collects.
  - Tells apart C(tool_missing) (no C(ib_write_bw)), C(device_absent) (no RDMA device with an
    active port), C(skipped) (a Slurm job step runs on the node) and C(error) (the tool ran and
    failed, or no peer came within I(connect_timeout)). Never reports changed; supports check mode
    (the test only loads the links, it changes no setting).
version_added: "0.2.0"
options:
  role:
    description: Which side of the pair this node is.
    type: str
    required: true
    choices: [server, client]
  peer:
    description:
      - The other node. For the client, the address (or name) of the server to connect to; for the
        server, the client's name (used in messages only).
    type: str
    required: true
  devices:
    description:
      - RDMA devices to test, in rail order; both sides must list the same number. Empty means
        every device with an ACTIVE port under I(sysfs_root), in natural name order (mlx5_2 before mlx5_10).
    type: list
    elements: str
    default: []
  ib_port:
    description: HCA port of each device (C(ib_write_bw -i)).
    type: int
    default: 1
  gid_index:
    description:
      - GID index (C(ib_write_bw -x)) for RoCE. C(-1) picks, per device, the lowest RoCE v2 GID
        with an IPv4 address found in sysfs (none on InfiniBand ports, where no C(-x) is passed).
    type: int
    default: -1
  base_port:
    description:
      - TCP port of the first device's out-of-band exchange (C(ib_write_bw -p)); device I(i)
        uses I(base_port)+I(i).
    type: int
    default: 18515
  seconds:
    description: Duration of each test (C(ib_write_bw -D)).
    type: int
    default: 5
  size:
    description: Message size in bytes (C(ib_write_bw -s)).
    type: int
    default: 1048576
  connect_timeout:
    description: Seconds the client retries connecting, and the server waits for its client beyond I(seconds).
    type: int
    default: 30
  extra_args:
    description: More C(ib_write_bw) arguments for both sides.
    type: list
    elements: str
    default: ["--report_gbits", "-F"]
extends_documentation_fragment:
  - clusterctl.hpc.clusterctl_collector
  - clusterctl.hpc.clusterctl_collector.node_roots
  - clusterctl.hpc.clusterctl_collector.tool_dirs
"""

EXAMPLES = r"""
- name: Start the server side (async, so the client can run while it waits)
  clusterctl.hpc.fabric_pairtest:
    role: server
    peer: node002
  async: 120
  poll: 0
  register: server_job

- name: Run the client side against node001
  clusterctl.hpc.fabric_pairtest:
    role: client
    peer: 10.0.0.1
  register: client_side
"""

RETURN = r"""
tests:
  description: RDMA device -> result of its test (the key C(_) when no device test could start).
  returned: always
  type: dict
  contains:
    status:
      description: C(ok), C(tool_missing), C(device_absent), C(error) or C(skipped).
      type: str
    rc:
      description: Exit status of C(ib_write_bw) (null when it did not run).
      type: int
    stdout:
      description: Its standard output (the perftest report), parsed on the controller as KIND C(ib_write_bw).
      type: str
    stderr:
      description: Its standard error, or why it did not run.
      type: str
    cmd:
      description: The command line run.
      type: list
summary:
  description: The same keys with C(status), C(rc) and the first line of C(stderr) only.
  returned: always
  type: dict
running_jobs:
  description: Number of Slurm job steps found running on the node.
  returned: always
  type: int
parsed:
  description:
    - The same keys (successful tests only) -> the report parsed on the node as KIND C(ib_write_bw),
      a ccparse.preparsed envelope; pairtest.yml writes it as C(_parsed#ib_write_bw@<peer>.json).
  returned: always
  type: dict
"""

import os  # noqa: E402
import threading  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse.common import ParseError  # noqa: E402
from ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse.node import entry, running_job_steps, summarise  # noqa: E402
from ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse.perftest_run import run_client, run_server  # noqa: E402
from ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse.preparsed import parse_results  # noqa: E402
from ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse.sysfs_ib import read_sysfs_root  # noqa: E402


def rails(sysfs_root, ib_port):
    """From one read of the tree: (devices with an ACTIVE port, device -> RoCE v2 IPv4 GID index of ``ib_port``).

    No ``class/infiniband`` folder gives neither; a malformed tree raises ccparse's ParseError.
    """
    if not os.path.isdir(os.path.join(sysfs_root, "class", "infiniband")):
        return [], {}
    devices = read_sysfs_root(sysfs_root)["devices"]
    active = [d["name"] for d in devices if any(port["state"] == "ACTIVE" for port in d["ports"])]
    gids = {d["name"]: port["roce_v2_gid_index"] for d in devices for port in d["ports"]
            if port["port"] == ib_port and port.get("roce_v2_gid_index") is not None}
    return active, gids


def main():
    module = AnsibleModule(
        argument_spec={
            "role": {"type": "str", "required": True, "choices": ["server", "client"]},
            "peer": {"type": "str", "required": True},
            "devices": {"type": "list", "elements": "str", "default": []},
            "ib_port": {"type": "int", "default": 1},
            "gid_index": {"type": "int", "default": -1},
            "base_port": {"type": "int", "default": 18515},
            "seconds": {"type": "int", "default": 5},
            "size": {"type": "int", "default": 1048576},
            "connect_timeout": {"type": "int", "default": 30},
            "extra_args": {"type": "list", "elements": "str", "default": ["--report_gbits", "-F"]},
            "tool_dirs": {"type": "list", "elements": "path", "default": []},
            "sysfs_root": {"type": "path", "default": "/sys"},
            "proc_root": {"type": "path", "default": "/proc"},
        },
        supports_check_mode=True,
    )
    p = module.params
    jobs = running_job_steps(p["proc_root"])

    def finish(results):
        module.exit_json(changed=False, tests=results, summary=summarise(results), running_jobs=jobs,
                         parsed=parse_results(results, "ib_write_bw"))

    if jobs:
        finish({"_": entry("skipped", stderr=f"{jobs} Slurm job step(s) running on the node; pair test skipped")})
    try:
        active, gids = rails(p["sysfs_root"], p["ib_port"])
    except (ParseError, OSError) as exc:
        finish({"_": entry("error", stderr=f"cannot read the RDMA devices under {p['sysfs_root']}: {exc}")})
    devices = p["devices"] or active
    if not devices:
        finish({"_": entry("device_absent", stderr=f"no RDMA device with an ACTIVE port under {p['sysfs_root']}")})
    path = module.get_bin_path("ib_write_bw", opt_dirs=p["tool_dirs"])
    if path is None:
        finish({"_": entry("tool_missing", stderr="ib_write_bw (perftest) not found in PATH")})
    results = {}
    threads = []
    for i, dev in enumerate(devices):
        cmd = [path, "-d", dev, "-i", str(p["ib_port"]), "-D", str(p["seconds"]), "-s", str(p["size"]),
               "-p", str(p["base_port"] + i)]
        gid = p["gid_index"] if p["gid_index"] >= 0 else gids.get(dev)
        if gid is not None:
            cmd += ["-x", str(gid)]
        cmd += list(p["extra_args"])
        if p["role"] == "client":
            cmd.append(p["peer"])

        def work(dev=dev, cmd=cmd):
            try:
                side = run_client if p["role"] == "client" else run_server
                results[dev] = side(cmd, p["seconds"], p["connect_timeout"], p["peer"])
            except OSError as exc:
                results[dev] = entry("error", stderr=f"cannot run {cmd[0]}: {exc}", cmd=cmd)

        t = threading.Thread(target=work, daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    finish(dict(sorted(results.items())))


if __name__ == "__main__":
    main()
