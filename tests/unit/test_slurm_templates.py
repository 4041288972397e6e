"""Render roles/slurm_common/templates with plain Jinja2 (the filters they use) and check the files.

The inventory is the example 64-node cluster of inventories/example-prod (8 GPUs per node, two
partitions, a leaf/spine topology), with hardware facts written here per host.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import jinja2
import pytest
import yaml

from plugins.filter.hostlist import hostlist_compress, hostlist_expand

REPO = Path(__file__).resolve().parents[2]
ROLE = REPO / "roles" / "slurm_common"
PROD = REPO / "inventories" / "example-prod" / "group_vars" / "all" / "cluster.yml"


def _bool(v: Any) -> bool:
    return v if isinstance(v, bool) else str(v).lower() in ("1", "true", "yes", "on")


def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(ROLE / "templates"),
        trim_blocks=True,
        undefined=jinja2.StrictUndefined,
        extensions=["jinja2.ext.do"],
    )
    env.filters.update(
        bool=_bool,
        to_json=json.dumps,
        from_json=json.loads,
        quote=shlex.quote,
    )
    # the collection's own filters, by FQCN as the templates call them
    env.filters["clusterctl.hpc.hostlist_compress"] = hostlist_compress
    env.filters["clusterctl.hpc.hostlist_expand"] = hostlist_expand
    return env


def _facts(vcpus: int = 224, sockets: int = 2, cores: int = 56, threads: int = 2, mem: int = 2_063_000) -> dict:
    return {
        "ansible_facts": {
            "processor_vcpus": vcpus,
            "processor_count": sockets,
            "processor_cores": cores,
            "processor_threads_per_core": threads,
            "memtotal_mb": mem,
        }
    }


def _vars(**over: Any) -> dict[str, Any]:
    spec = yaml.safe_load(PROD.read_text())
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    computes = [f"gpu{i:03d}" for i in range(1, 65)]
    hostvars: dict[str, Any] = {h: {**_facts(), "gpus_per_node": spec["gpus_per_node"]} for h in computes}
    hostvars["slurm-ctl01"] = _facts(16, 1, 16, 1, 64000)
    v: dict[str, Any] = dict(defaults)
    v.update(
        slurm_common_cluster_name=spec["cluster_name"],
        slurm_common_partitions=spec["slurm_partitions"],
        slurm_common_topology=spec["slurm_topology"],
        slurm_common_accounting_enabled=True,
        slurm_common_accounting_host="slurm-ctl01",
        ansible_managed="Ansible managed",
        groups={"slurm_controller": ["slurm-ctl01"], "slurm_compute": computes, "slurm_login": ["login01"]},
        hostvars=hostvars,
        __slurm_common_controllers=["slurm-ctl01"],
        __slurm_common_switches=spec["slurm_topology"]["switches"],
    )
    v.update(over)
    return v


def render(name: str, **over: Any) -> str:
    return _env().get_template(f"{name}.j2").render(**_vars(**over))


def test_slurm_conf_one_compressed_nodename_line_from_facts() -> None:
    conf = render("slurm.conf")
    lines = [ln for ln in conf.splitlines() if ln.startswith("NodeName=")]
    # 2 sockets x 56 cores x 2 threads = 224 CPUs; 2_063_000 - 2048 reserve MiB.
    assert lines == [
        "NodeName=gpu[001-064] CPUs=224 Sockets=2 CoresPerSocket=56 ThreadsPerCore=2 RealMemory=2060952 "
        "Gres=gpu:8 State=UNKNOWN"
    ]
    assert "GresTypes=gpu" in conf
    assert "SlurmctldHost=slurm-ctl01" in conf
    assert "TopologyPlugin=topology/tree" in conf
    assert "AccountingStorageType=accounting_storage/slurmdbd" in conf


def test_slurm_conf_partitions_from_spec() -> None:
    conf = render("slurm.conf")
    parts = [ln for ln in conf.splitlines() if ln.startswith("PartitionName=")]
    assert parts == [
        "PartitionName=train Nodes=ALL Default=YES MaxTime=14-00:00:00 State=UP",
        "PartitionName=debug Nodes=gpu[001-004] Default=NO MaxTime=04:00:00 State=UP",
    ]


def test_partition_options_mapping_and_string() -> None:
    conf = render(
        "slurm.conf",
        slurm_common_partitions=[
            {"name": "a", "default": True, "options": {"OverSubscribe": "NO", "PriorityTier": 10}},
            {"name": "b", "options": "Hidden=YES"},
        ],
    )
    assert "PartitionName=a Nodes=ALL Default=YES MaxTime=UNLIMITED State=UP OverSubscribe=NO PriorityTier=10\n" in conf
    assert "PartitionName=b Nodes=ALL Default=NO MaxTime=UNLIMITED State=UP Hidden=YES\n" in conf


def test_scale_settings_and_hooks() -> None:
    conf = render("slurm.conf")
    for line in (
        "TreeWidth=64",
        "MessageTimeout=30",
        "SlurmdTimeout=300",
        "HealthCheckProgram=/etc/slurm/health_check.sh",
        "HealthCheckInterval=300",
        "Prolog=/etc/slurm/prolog.d/*",
        "Epilog=/etc/slurm/epilog.d/*",
        "TaskProlog=/etc/slurm/task_prolog.sh",
    ):
        assert re.search(rf"^{re.escape(line)}$", conf, re.M), line


def test_no_health_check_lines_when_program_empty() -> None:
    conf = render("slurm.conf", slurm_common_health_check_program="")
    assert "HealthCheck" not in conf


def test_mixed_hardware_gives_one_line_per_kind() -> None:
    v = _vars()
    hv = v["hostvars"]
    for h in ("gpu063", "gpu064"):
        hv[h] = {**_facts(96, 2, 24, 2, 1_000_000), "slurm_common_node_gpus": 4}
    hv["gpu001"] = {**hv["gpu001"], "slurm_common_node_features": ["h100", "nvlink"]}
    conf = _env().get_template("slurm.conf.j2").render(**v)
    lines = sorted(ln for ln in conf.splitlines() if ln.startswith("NodeName="))
    assert lines == sorted(
        [
            "NodeName=gpu001 CPUs=224 Sockets=2 CoresPerSocket=56 ThreadsPerCore=2 RealMemory=2060952 "
            "Gres=gpu:8 Feature=h100,nvlink State=UNKNOWN",
            "NodeName=gpu[002-062] CPUs=224 Sockets=2 CoresPerSocket=56 ThreadsPerCore=2 RealMemory=2060952 "
            "Gres=gpu:8 State=UNKNOWN",
            "NodeName=gpu[063-064] CPUs=96 Sockets=2 CoresPerSocket=24 ThreadsPerCore=2 RealMemory=997952 "
            "Gres=gpu:4 State=UNKNOWN",
        ]
    )


def test_inconsistent_facts_become_one_socket() -> None:
    v = _vars()
    v["hostvars"]["gpu001"] = {**_facts(2, 1, 4, 1, 24000), "gpus_per_node": 0}
    conf = _env().get_template("slurm.conf.j2").render(**v)
    assert "NodeName=gpu001 CPUs=2 Sockets=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=21952 State=UNKNOWN" in conf


def test_host_vars_override_facts() -> None:
    v = _vars()
    v["hostvars"]["gpu002"] = {
        **v["hostvars"]["gpu002"],
        "slurm_common_node_cpus": 8,
        "slurm_common_node_sockets": 1,
        "slurm_common_node_cores_per_socket": 8,
        "slurm_common_node_threads_per_core": 1,
        "slurm_common_node_real_memory": 30000,
    }
    conf = _env().get_template("slurm.conf.j2").render(**v)
    assert "NodeName=gpu002 CPUs=8 Sockets=1 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=30000 Gres=gpu:8" in conf


def test_gres_conf_explicit_and_nvml() -> None:
    assert "NodeName=gpu[001-064] Name=gpu File=/dev/nvidia[0-7]\n" in render("gres.conf")
    typed = render("gres.conf", slurm_common_gpu_type="h100")
    assert "NodeName=gpu[001-064] Name=gpu Type=h100 File=/dev/nvidia[0-7]\n" in typed
    assert "Gres=gpu:h100:8" in render("slurm.conf", slurm_common_gpu_type="h100")
    nvml = render("gres.conf", slurm_common_gres_autodetect="nvml")
    assert "AutoDetect=nvml" in nvml
    assert "File=" not in nvml


def test_topology_conf_from_spec() -> None:
    topo = [ln for ln in render("topology.conf").splitlines() if ln.startswith("SwitchName=")]
    assert topo == [
        "SwitchName=leaf1 Nodes=gpu[001-016]",
        "SwitchName=leaf2 Nodes=gpu[017-032]",
        "SwitchName=leaf3 Nodes=gpu[033-048]",
        "SwitchName=leaf4 Nodes=gpu[049-064]",
        "SwitchName=spine1 Switches=leaf[1-4]",
    ]


@pytest.mark.parametrize(("plugin", "automount"), [("cgroup/v1", True), ("cgroup/v2", False), ("autodetect", False)])
def test_cgroup_conf(plugin: str, automount: bool) -> None:
    conf = render("cgroup.conf", slurm_common_cgroup_plugin=plugin)
    assert f"CgroupPlugin={plugin}\n" in conf
    assert ("CgroupAutomount=yes" in conf) is automount
    assert "ConstrainDevices=yes" in conf


def test_restart_keys_change_with_nodes_but_not_with_timeouts() -> None:
    base = render("restart_keys.conf")
    assert render("restart_keys.conf", slurm_common_message_timeout=60) == base
    v = _vars()
    v["groups"]["slurm_compute"] = [*v["groups"]["slurm_compute"], "gpu065"]
    v["hostvars"]["gpu065"] = {**_facts(), "gpus_per_node": 8}
    grown = _env().get_template("restart_keys.conf.j2").render(**v)
    assert grown != base
    assert "NodeName=gpu[001-065] " in grown
    assert render("restart_keys.conf", slurm_common_task_plugin="task/none") != base


def test_configless_flag() -> None:
    assert "SlurmctldParameters=enable_configless" in render("slurm.conf", slurm_common_configless=True)
    assert "enable_configless" not in render("slurm.conf")


def _run_script(name: str, tmp_path: Path, **over: Any) -> str:
    import subprocess

    script = tmp_path / name
    script.write_text(render(name, item={"phase": "prolog"}, **over))
    return subprocess.run(["sh", str(script)], capture_output=True, text=True, check=True).stdout


def test_task_prolog_exports_nccl_conf(tmp_path: Path) -> None:
    conf = tmp_path / "nccl.conf"
    conf.write_text(
        "# written by the nccl role\n"
        "NCCL_IB_HCA=mlx5_0,mlx5_1\n"
        "\n"
        'NCCL_SOCKET_IFNAME="eth0"\n'
        "NCCL_DEBUG = WARN\n"
        "bad key=1\n"
        "1BAD=2\n"
        "no equals sign\n"
        "NCCL_IB_TC=104"  # no final newline
    )
    out = _run_script("task_prolog.sh", tmp_path, slurm_common_nccl_conf=str(conf))
    assert out.splitlines() == [
        "export NCCL_IB_HCA=mlx5_0,mlx5_1",
        "export NCCL_SOCKET_IFNAME=eth0",
        "export NCCL_DEBUG=WARN",
        "export NCCL_IB_TC=104",
    ]


def test_task_prolog_without_conf_prints_nothing(tmp_path: Path) -> None:
    assert _run_script("task_prolog.sh", tmp_path, slurm_common_nccl_conf=str(tmp_path / "absent")) == ""


def test_health_check_wrapper_runs_program_or_nothing(tmp_path: Path) -> None:
    import subprocess

    prog = tmp_path / "check"
    wrapper = tmp_path / "health_check.sh"
    wrapper.write_text(render("health_check.sh", slurm_common_health_check_program=str(prog)))
    assert subprocess.run(["sh", str(wrapper)], check=False).returncode == 0  # absent: no health check
    prog.write_text("#!/bin/sh\necho checked\nexit 3\n")
    prog.chmod(0o755)
    proc = subprocess.run(["sh", str(wrapper)], capture_output=True, text=True, check=False)
    assert (proc.returncode, proc.stdout) == (3, "checked\n")


def test_memlock_is_not_taken_from_the_submitting_shell() -> None:
    """Job steps keep slurmd's memlock limit (slurm_compute's LimitMEMLOCK), not the login shell's."""
    assert "PropagateResourceLimitsExcept=MEMLOCK" in render("slurm.conf").splitlines()
    conf = render("slurm.conf", slurm_common_propagate_resource_limits_except=["MEMLOCK", "STACK"])
    assert "PropagateResourceLimitsExcept=MEMLOCK,STACK" in conf.splitlines()
    assert "PropagateResourceLimitsExcept" not in render("slurm.conf", slurm_common_propagate_resource_limits_except=[])


def test_prolog_failures_requeue_eligible_jobs_by_default() -> None:
    """The pre-flight gate (node_health) fails a job's Prolog on a bad node; without nohold_on_prolog_fail
    Slurm requeues the job held and it never starts on the healthy nodes."""
    v = _vars()
    conf = _env().get_template("slurm.conf.j2").render(**v)
    assert "\nSchedulerParameters=nohold_on_prolog_fail\n" in conf
    v["slurm_common_scheduler_parameters"] = ["nohold_on_prolog_fail", "bf_continue"]
    conf = _env().get_template("slurm.conf.j2").render(**v)
    assert "\nSchedulerParameters=nohold_on_prolog_fail,bf_continue\n" in conf
    v["slurm_common_scheduler_parameters"] = []
    assert "SchedulerParameters" not in _env().get_template("slurm.conf.j2").render(**v)
