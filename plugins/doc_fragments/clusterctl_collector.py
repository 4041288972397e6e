"""Documentation shared by clusterctl's read-only collector modules (rdma_facts, gpu_facts, fabric_evidence,
fabric_pairtest, nccl_pairtest): ``extends_documentation_fragment: [clusterctl_collector, ...]``.

A module's own option of the same name replaces the fragment's (Ansible's merge), so a module
says more about an option only where it differs.
"""

from __future__ import annotations


class ModuleDocFragment:
    # attributes of every collector: never changes a setting, so check mode runs it as is
    DOCUMENTATION = r"""
options: {}
attributes:
  check_mode:
    support: full
    description: Runs as is in check mode; it only reads (and, for the active tests, loads the links).
  diff_mode:
    support: none
    description: Nothing to diff; it never reports changed.
author:
  - clusterctl maintainers (@clusterctl)
"""

    # the node's kernel trees, read under a root a test can point at a simulated tree
    NODE_ROOTS = r"""
options:
  sysfs_root:
    description: Root of sysfs the RDMA devices are read under (a simulated tree in tests).
    type: path
    default: /sys
  proc_root:
    description: Root of procfs, read to find running Slurm job steps (C(slurmstepd) processes).
    type: path
    default: /proc
"""

    # where the tools are looked up
    TOOL_DIRS = r"""
options:
  tool_dirs:
    description:
      - Folders searched for the tools before C(PATH) (Ansible's C(get_bin_path) I(opt_dirs)).
        Empty (the default) means C(PATH) only; tests point it at fake backends.
    type: list
    elements: path
    default: []
"""

    # the sysfs fact modules (rdma_facts, gpu_facts: ccparse.sysfs_facts); each module names its
    # fact_name default
    SYSFS_FACTS = r"""
options:
  sysfs_root:
    description: Root of the sysfs tree to read; a simulated tree in tests.
    type: path
    default: /sys
  fact_name:
    description: Name of the fact set in C(ansible_facts).
    type: str
"""
