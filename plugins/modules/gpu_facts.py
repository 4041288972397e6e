#!/usr/bin/python
"""Ansible module gpu_facts: NVIDIA GPUs and NVSwitches on the PCI bus, from sysfs (read-only)."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: gpu_facts
short_description: Collect NVIDIA GPU and NVSwitch facts from a sysfs PCI tree
description:
  - Reads every PCI function under C(<sysfs_root>/bus/pci/devices) (vendor, device, class,
    NUMA node) and reports the NVIDIA GPUs (vendor 0x10de, display class 0x03xx) and NVSwitches
    (vendor 0x10de, bridge class 0x0680), which decide whether a node needs nvidia-fabricmanager.
  - Parsing lives in the collection's module_utils C(ccparse.sysfs_pci); this module only collects.
  - Never changes anything; supports check mode. Needs no NVIDIA driver (reads the PCI bus).
  - Tells apart "no PCI bus" (no C(bus/pci/devices) under the root), "no NVIDIA devices" and
    errors (malformed attributes fail the task).
version_added: "0.1.0"
options:
  fact_name:
    default: clusterctl_gpu
extends_documentation_fragment:
  - clusterctl.hpc.clusterctl_collector
  - clusterctl.hpc.clusterctl_collector.sysfs_facts  # sysfs_root; fact_name's description and type
author:
  - clusterctl maintainers (@clusterctl)
"""

EXAMPLES = r"""
- name: Collect GPU facts
  clusterctl.hpc.gpu_facts:

- name: Collect from a simulated tree
  clusterctl.hpc.gpu_facts:
    sysfs_root: /opt/simpci/sys

- name: Say whether fabric manager is needed
  ansible.builtin.debug:
    msg: "{{ ansible_facts.clusterctl_gpu.nvswitches | length }} NVSwitches"
"""

RETURN = r"""
ansible_facts:
  description: Facts set under the key C(fact_name) (default C(clusterctl_gpu)).
  returned: always
  type: dict
  contains:
    clusterctl_gpu:
      description: NVIDIA PCI inventory of the host.
      type: dict
      contains:
        status:
          description: C(ok), C(no_nvidia_devices) or C(no_pci_bus).
          type: str
        sysfs_root:
          description: The sysfs root read.
          type: str
        gpus:
          description: GPUs, each C({pci, vendor, device, class, numa_node}) (ids as C(0x...) text).
          type: list
          elements: dict
        nvswitches:
          description: NVSwitches, same shape.
          type: list
          elements: dict
        nvswitch_present:
          description: Whether at least one NVSwitch is on the PCI bus.
          type: bool
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse.sysfs_facts import sysfs_facts_main  # noqa: E402
from ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse.sysfs_pci import read_pci_root  # noqa: E402


def collect(sysfs_root):
    """The fact dict for ``sysfs_root``; raises ParseError for malformed attributes."""
    facts = read_pci_root(sysfs_root)
    facts["sysfs_root"] = sysfs_root
    facts["nvswitch_present"] = bool(facts["nvswitches"])
    return facts


def main():
    sysfs_facts_main(AnsibleModule, collect, argument_spec={
        "sysfs_root": {"type": "path", "default": "/sys"},
        "fact_name": {"type": "str", "default": "clusterctl_gpu"},
    })


if __name__ == "__main__":
    main()
