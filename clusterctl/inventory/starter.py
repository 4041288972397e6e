"""``clusterctl init DIR``: a commented starter inventory that ``clusterctl validate`` accepts."""

from __future__ import annotations

from pathlib import Path

from clusterctl.errors import UsageError

HOSTS_YML = """\
---
# Starter inventory written by `clusterctl init`. Replace the example hosts and addresses with
# yours, then:  clusterctl validate DIR;  clusterctl plan DIR;  clusterctl provision DIR
# (README.md "Inventory format" documents every key; inventories/example-prod is a full example).
#
# Groups clusterctl knows:
#   slurm_controller  the one Slurm controller (slurmctld; slurmdbd with accounting)
#   slurm_compute     the GPU nodes (slurmd, NCCL, RDMA, GPU driver); what `clusterctl verify` checks
#   slurm_login       login nodes (optional)
#   storage_clients   nodes that mount the shared storage of storage_mounts
all:
  children:
    slurm_controller:
      hosts:
        slurm-ctl01:
          ansible_host: 192.0.2.10     # its management address (192.0.2.0/24 is an example range)
    slurm_compute:
      hosts:
        gpu[001:004]:                  # a range: gpu001 .. gpu004, reached by name
    storage_clients:
      children:
        slurm_compute:
"""

CLUSTER_YML = """\
---
# Cluster spec: what the cluster is, checked by `clusterctl validate` and used by `clusterctl verify`
# as the expected values. Set in group `all` only.
cluster_name: mycluster       # Slurm ClusterName: lower-case letters, digits, '-' and '_'
fabric: infiniband            # infiniband | roce | ethernet
rdma_devices_per_node: 8      # GPU rails (mlx5_*) per compute node; 0 with fabric ethernet
ib_rate_gbps: 400             # expected port rate (NDR / 400GbE)
mtu: 4096                     # infiniband: 256..4096 (IB MTU); roce/ethernet: netdev MTU 1280..9216
# pfc_priority: 3             # roce only, and then required: the lossless priority carrying RoCE
# roce_dscp: 26               # roce only, and then required: the DSCP NCCL marks
# frontend_nics: [mlx5_8]     # front-end / storage NICs: never used by NCCL, not judged as rails
gpus_per_node: 8
# gpu_model: H100-SXM5-80GB
slurm_partitions:
  - name: batch
    default: true
    max_time: UNLIMITED
# storage_mounts:             # JuiceFS or Lustre on storage_clients (README "Inventory format")
#   - {type: lustre, name: scratch, mountpoint: /lustre/scratch, mgs: 10.20.0.2@o2ib, fsname: scratch}
nccl_overrides: {}            # NCCL_* settings written to /etc/nccl.conf over the derived ones
#
# How Ansible reaches the hosts (any Ansible connection variable works here or per host):
# ansible_user: root
# ansible_ssh_private_key_file: ~/.ssh/id_ed25519
#
# Secrets are references to vaulted variables (plain text is rejected), e.g. in
# group_vars/all/secrets.yml:  munge_key: "{{ vault_munge_key }}"
"""

FILES = {"hosts.yml": HOSTS_YML, "group_vars/all/cluster.yml": CLUSTER_YML}


def write_starter(dest: Path) -> list[Path]:
    """Write the starter inventory into ``dest`` (created; an empty folder is fine); the files
    written. :class:`UsageError` (exit 2, nothing written) when ``dest`` is a file or a folder
    that holds anything."""
    if dest.exists() and not dest.is_dir():
        raise UsageError(f"init: {dest} exists and is not a folder; nothing was written", file=str(dest))
    if dest.is_dir() and any(dest.iterdir()):
        raise UsageError(f"init: {dest} exists and is not empty; nothing was written (choose a new folder)",
                         file=str(dest))
    written = []
    for rel, text in FILES.items():
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    return written
