#!/usr/bin/python
"""Ansible module rdma_facts: RDMA devices, ports, GIDs, netdevs from sysfs (read-only)."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: rdma_facts
short_description: Collect RDMA device and port facts from sysfs
description:
  - Reads every RDMA device under C(<sysfs_root>/class/infiniband) exactly as the kernel lays it
    out (state, phys_state, rate, link_layer, GID table with types and netdevs, the netdev of each
    port, PCI address, NUMA node, firmware) and the GID index holding RoCE v2 with an IPv4 address.
  - Parsing lives in the collection's module_utils C(ccparse.sysfs_ib); this module only collects.
  - Never changes anything; supports check mode.
  - Tells apart "no RDMA stack" (no C(class/infiniband); ib_core not loaded), "no RDMA devices"
    (the class exists but is empty) and errors (unreadable or malformed attributes fail the task).
version_added: "0.1.0"
options:
  fact_name:
    default: clusterctl_rdma
  file_paths:
    description:
      - Files whose current state (sha1 checksum, mode, owner, group) is returned in C(files), so
        that a role deciding both from the RDMA facts and from the files it writes (nccl) needs one
        module round-trip per host in steady state instead of two. Only read, never written.
    type: list
    elements: path
    default: []
  read_sysfs:
    description:
      - Whether to read the RDMA devices under O(sysfs_root) and set the fact. V(false) reads only
        O(file_paths) and sets no fact (nccl on Ethernet fabrics, which uses no RDMA facts, keeps the
        same single task).
    type: bool
    default: true
extends_documentation_fragment:
  - clusterctl.hpc.clusterctl_collector
  - clusterctl.hpc.clusterctl_collector.sysfs_facts  # sysfs_root; fact_name's description and type
"""

EXAMPLES = r"""
- name: Collect RDMA facts
  clusterctl.hpc.rdma_facts:

- name: Collect from a simulated tree
  clusterctl.hpc.rdma_facts:
    sysfs_root: /opt/simfabric/sys

- name: Show the RoCE v2 GID index of mlx5_0 port 1
  ansible.builtin.debug:
    msg: >-
      {{ (ansible_facts.clusterctl_rdma.devices | selectattr('name', 'eq', 'mlx5_0') | first)
         .ports[0].roce_v2_gid_index }}
"""

RETURN = r"""
ansible_facts:
  description: Facts set under the key C(fact_name) (default C(clusterctl_rdma)).
  returned: when O(read_sysfs) is true
  type: dict
  contains:
    clusterctl_rdma:
      description: RDMA inventory of the host.
      type: dict
      contains:
        status:
          description: C(ok), C(no_devices) (class empty) or C(no_rdma_stack) (no class/infiniband).
          type: str
        sysfs_root:
          description: The sysfs root read.
          type: str
        devices:
          description: >-
            One entry per device in the shared port shape (name, ca_type, fw_version, board_id,
            node_guid, pci, numa_node, ports[port, state, phys_state, rate_gbps, width, speed,
            link_layer, netdev, netdev_operstate, netdev_mtu, gids, roce_v2_gid_index, roce_v2_ipv4]).
          type: list
          elements: dict
        active_ports:
          description: C(<device>:<port>) of every port whose state is ACTIVE.
          type: list
          elements: str
files:
  description: >-
    One entry per C(file_paths) item, in order: path, exists, and for a regular file checksum
    (sha1), mode (octal string such as C(0644)), pw_name and gr_name (the shape of
    M(ansible.builtin.find)'s C(files)).
  returned: always
  type: list
  elements: dict
"""

import grp  # noqa: E402
import hashlib  # noqa: E402
import os  # noqa: E402
import pwd  # noqa: E402
import stat  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse.sysfs_facts import sysfs_facts_main  # noqa: E402
from ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse.sysfs_ib import read_sysfs_root  # noqa: E402


def collect(sysfs_root):
    """The fact dict for ``sysfs_root``; raises ParseError for malformed attributes."""
    if not os.path.isdir(os.path.join(sysfs_root, "class", "infiniband")):
        return {"status": "no_rdma_stack", "sysfs_root": sysfs_root, "devices": [], "active_ports": []}
    result = read_sysfs_root(sysfs_root)
    devices = result["devices"]
    active = [f"{d['name']}:{p['port']}" for d in devices for p in d["ports"] if p["state"] == "ACTIVE"]
    return {
        "status": "ok" if devices else "no_devices",
        "sysfs_root": sysfs_root,
        "devices": devices,
        "active_ports": active,
    }


def _name(lookup, ident):
    try:
        return lookup(ident)[0]
    except KeyError:
        return str(ident)


def file_state(path):
    """Checksum, mode and owner of ``path`` as ansible.builtin.find reports them; exists=False if absent."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return {"path": path, "exists": False}
    state = {"path": path, "exists": True, "mode": f"{stat.S_IMODE(st.st_mode):04o}",
             "pw_name": _name(pwd.getpwuid, st.st_uid), "gr_name": _name(grp.getgrgid, st.st_gid)}
    if stat.S_ISREG(st.st_mode):
        digest = hashlib.sha1()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(65536), b""):
                digest.update(block)
        state["checksum"] = digest.hexdigest()
    return state


def main():
    sysfs_facts_main(AnsibleModule, collect, argument_spec={
        "sysfs_root": {"type": "path", "default": "/sys"},
        "fact_name": {"type": "str", "default": "clusterctl_rdma"},
        "file_paths": {"type": "list", "elements": "path", "default": []},
        "read_sysfs": {"type": "bool", "default": True},
    }, extra=lambda params: {"files": [file_state(path) for path in params["file_paths"]]},
        read_sysfs=lambda params: params["read_sysfs"])


if __name__ == "__main__":
    main()
