"""Helpers for the lab integration tests: run the CLI, run a command in a lab container."""

from __future__ import annotations

import functools
import subprocess
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

REPO = Path(__file__).resolve().parents[1]
LAB = REPO / "inventories" / "lab"
CLI = [sys.executable, "-m", "clusterctl.cli"]


# Every Slurm cluster this test run builds on fresh containers (a fixture appends its name each time it sets one up;
# molecule_test() appends a scenario that brings up its own controller). tests/conftest.py prints the
# count at the end and fails the run when it exceeds SLURM_BUILDS_MAX (#18: Slurm built once per run:
# the lab, `clusterctl provision` over SSH; the Slurm cases of molecule/slurm run on it, see
# lab_cases_inventories()).
SLURM_BUILDS: list[str] = []
SLURM_BUILDS_MAX = 1


@functools.cache
def lab_image() -> None:
    """The images every Molecule scenario and the lab run on, each built at most once per test run (a
    no-op when it exists): localhost/clusterctl-lab (Slurm, munge, MariaDB, Redis, rdma-core packages
    baked in, services off) and localhost/clusterctl-bare (the same base without them)."""
    for args in ([], ["--bare"]):
        r = subprocess.run(["bash", str(REPO / "lab" / "build-image.sh"), *args], capture_output=True, text=True,
                           timeout=1800, check=False)
        assert r.returncode == 0, f"lab/build-image.sh {args} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"


def cc(*args: str, timeout: int = 1200) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO, check=False)


def summary_rows(out: str) -> dict[str, list[str]]:
    """The per-host summary table of a provision/reconfigure run: host -> [ok, changed, failed, unreachable,
    skipped]. Off a terminal (as here) it is one tab-separated line per host; on one, a box-drawn table."""
    rows: dict[str, list[str]] = {}
    for line in out.splitlines():
        if line.startswith("lab-") and "\t" in line:
            host, *cols = line.split("\t")
        elif line.startswith("│ lab-"):
            host, *cols = [c.strip() for c in line.strip().strip("│").split("│")]
        else:
            continue
        if len(cols) == 5 and all(c.strip().isdigit() for c in cols):
            rows[host.strip()] = [c.strip() for c in cols]
    return rows


def sh(host: str, command: str) -> str:
    out = subprocess.run(["podman", "exec", f"clusterctl-lab-{host}", "sh", "-c", command],
                         capture_output=True, text=True, check=False)
    return out.stdout


def builds_slurm(scenario: str) -> bool:
    """Whether Molecule scenario SCENARIO brings up its own Slurm controller (a platform in slurm_controller)."""
    import yaml

    conf = yaml.safe_load((REPO / "molecule" / scenario / "molecule.yml").read_text())
    return any("slurm_controller" in p.get("groups", []) for p in conf.get("platforms", []))


def molecule(step: str, scenario: str, timeout: int, env: dict[str, str] | None = None) -> None:
    """``molecule STEP -s SCENARIO`` from the repository root with this venv's tools on PATH; fails
    the calling test with the end of its output unless it exits 0 (skips when podman is missing)."""
    import os
    import shutil

    import pytest

    if shutil.which("podman") is None:
        pytest.skip("podman is missing: run lab/host-setup.sh and lab/build-image.sh first")
    from clusterctl import collection

    collection.collections_path()  # the .ansible/collections link the scenarios' ANSIBLE_COLLECTIONS_PATH names
    lab_image()
    venv_bin = Path(sys.executable).parent
    exe = venv_bin / "molecule"
    full = dict(os.environ, **(env or {}))
    # molecule shells out to ansible-config/ansible-playbook: the venv's bin must be on PATH
    full["PATH"] = f"{venv_bin}{os.pathsep}{full.get('PATH', '')}"
    r = subprocess.run([str(exe) if exe.exists() else "molecule", step, "-s", scenario], cwd=REPO, env=full,
                       text=True, capture_output=True, timeout=timeout, check=False)
    assert r.returncode == 0, f"molecule {step} -s {scenario} failed:\n{r.stdout[-6000:]}\n{r.stderr[-3000:]}"


#: The lab's cluster spec on the simulated RoCE fabrics of tests/fixtures/simfabric/lab-roce-*.yml
#: (two 400 Gb/s devices a node, PFC on priority 3, RoCE traffic on DSCP 26).
ROCE_SPEC = {"fabric": "roce", "pfc_priority": 3, "roce_dscp": 26, "rdma_devices_per_node": 2, "ib_rate_gbps": 400}


def lab_copy_on_roce(dest: Path) -> Path:
    """A copy of the lab inventory at ``dest`` whose cluster spec declares :data:`ROCE_SPEC`."""
    import shutil

    import yaml

    shutil.copytree(LAB, dest)
    cluster = dest / "group_vars" / "all" / "cluster.yml"
    spec = yaml.safe_load(cluster.read_text())
    spec.update(ROCE_SPEC)
    cluster.write_text(yaml.safe_dump(spec, sort_keys=False))
    return dest


def molecule_test(scenario: str, timeout: int, env: dict[str, str] | None = None) -> None:
    """``molecule test -s SCENARIO`` (its whole sequence, its own containers)."""
    if builds_slurm(scenario):
        SLURM_BUILDS.append(f"molecule test -s {scenario}")
    molecule("test", scenario, timeout, env)


# (side effect, verify) playbooks relative to molecule/, in the order of molecule/slurm/molecule.yml's
# test_sequence (tests/unit/test_molecule_shape.py keeps the two in step).
SLURM_CASES = {
    "slurm": [("side_effect", "slurm/munge_side_effect.yml"), ("verify", "slurm/cluster_verify.yml")],
    "slurm_scaleout": [("side_effect", "slurm_scaleout/side_effect.yml"), ("verify", "slurm_scaleout/verify.yml")],
    "storage": [("verify", "storage/verify.yml"), ("side_effect", "storage/side_effect.yml")],
}

#: The lab's scale-out node: a container of the bare image (no Slurm or munge package), in no Slurm
#: group until the scale-out case adds it (molecule/slurm's cc-slurm-c3 on the lab).
LAB_PENDING = {"lab-c3": {"ansible_host": "10.213.77.13", "clusterctl_lab_image": "localhost/clusterctl-bare:latest"}}
#: Settings of molecule/slurm/molecule.yml the lab keeps its own of (its cluster identity and the
#: slurm_common_* values `clusterctl provision` set): the Slurm cases run on the provisioned lab as it is.
LAB_OWN = ("cluster_name", "slurm_partitions")


def _molecule_slurm_conf() -> dict:
    import yaml

    return yaml.safe_load((REPO / "molecule" / "slurm" / "molecule.yml").read_text())


def _molecule_vars(value: object) -> object:
    """A molecule.yml value with ${MOLECULE_PROJECT_DIRECTORY} resolved (the repository root)."""
    if isinstance(value, str):
        return value.replace("${MOLECULE_PROJECT_DIRECTORY}", str(REPO))
    if isinstance(value, dict):
        return {k: _molecule_vars(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_molecule_vars(v) for v in value]
    return value


def lab_cases_inventories(dest: Path) -> tuple[Path, Path]:
    """Two copies of the lab inventory under ``dest`` for the Slurm cases of molecule/slurm on the lab.

    ``dest/lab``: inventories/lab plus ``LAB_PENDING`` in group slurm_pending and storage_clients
    named host by host (lab-c1, lab-c2: so that the scale-out node, once in slurm_compute, is not a
    storage client, as in molecule/slurm); what `clusterctl lab up -i` reads to start lab-c3.
    ``dest/cases``: the same plus molecule.yml's group_vars (accounting, the test NCCL environment,
    Redis and the JuiceFS volume; without ``LAB_OWN`` and slurm_common_*), the bucket being the
    lab's shared folder; for ansible-playbook only (its test passwords are in plain text, which
    clusterctl's inventory checks refuse).
    """
    import shutil

    import yaml

    lab, cases = dest / "lab", dest / "cases"
    shutil.copytree(LAB, lab)
    hosts = yaml.safe_load((LAB / "hosts.yml").read_text())
    groups = hosts["all"]["children"]
    groups["storage_clients"] = {"hosts": {h: None for h in groups["slurm_compute"]["hosts"]}}
    groups["slurm_pending"] = {"hosts": LAB_PENDING}
    (lab / "hosts.yml").write_text(yaml.safe_dump(hosts, sort_keys=False))
    shutil.copytree(lab, cases)
    conf = _molecule_slurm_conf()
    case_vars = {k: _molecule_vars(v) for k, v in conf["provisioner"]["inventory"]["group_vars"]["all"].items()
                 if k not in LAB_OWN and not k.startswith("slurm_common_")}
    for mount in case_vars["storage_mounts"]:
        mount["bucket"] = "/srv/juicefs-bucket/"  # what `clusterctl lab up` mounts in every lab container
    (cases / "group_vars" / "all" / "slurm_cases.yml").write_text(
        "---\n# molecule/slurm/molecule.yml's settings for its cases (tests/labutil.py)\n"
        + yaml.safe_dump(case_vars, sort_keys=False))
    return lab, cases


#: the vault password of :func:`cases_clusterctl_inventory` (a test value, as the cases' passwords are)
CASES_VAULT_PASSWORD = "lab-cases-vault-0815"
#: the cases' settings that shape what the storage component renders (their secrets apart)
CASES_STORAGE_VARS = ("storage_mounts", "juicefs_")


def cases_clusterctl_inventory(cases: Path, dest: Path) -> tuple[Path, list[str]]:
    """The Slurm cases' storage as `clusterctl` takes it: ``dest/inventory``, a copy of their lab inventory
    (``cases.parent / "lab"``) with the cases' storage settings (storage_mounts, juicefs_*) and the JuiceFS
    metadata URL they resolve to, vaulted (the cases' own inventory has it in plain text, for
    ansible-playbook only, which clusterctl refuses), the vault password in ``dest/vault-pass``.
    Returns (the inventory, the options that give clusterctl the password)."""
    import re
    import shutil

    import yaml
    from ansible.parsing.vault import VaultLib, VaultSecret

    inv = dest / "inventory"
    shutil.copytree(cases.parent / "lab", inv)
    case_vars = yaml.safe_load((cases / "group_vars" / "all" / "slurm_cases.yml").read_text())
    groups = yaml.safe_load((inv / "hosts.yml").read_text())["all"]["children"]
    known = {"groups['slurm_controller'][0]": next(iter(groups["slurm_controller"]["hosts"])), **case_vars}
    keep = {k: v for k, v in case_vars.items() if k.startswith(CASES_STORAGE_VARS)}
    secrets = {m["metaurl_secret"] for m in keep["storage_mounts"] if "metaurl_secret" in m}
    (dest / "vault-pass").write_text(CASES_VAULT_PASSWORD + "\n")
    vault = VaultLib([("default", VaultSecret(CASES_VAULT_PASSWORD.encode()))])
    text = "---\n# the storage settings of molecule/slurm/molecule.yml, secrets vaulted (tests/labutil.py)\n"
    text += yaml.safe_dump(keep, sort_keys=False)
    for name in sorted(secrets):
        value = re.sub(r"\{\{\s*(.+?)\s*\}\}", lambda m: str(known[m.group(1)]), case_vars[name])
        payload = vault.encrypt(value).decode()
        text += f"{name}: !vault |\n" + "".join(f"  {line}\n" for line in payload.splitlines())
    (inv / "group_vars" / "all" / "storage.yml").write_text(text)
    return inv, ["--vault-password-file", str(dest / "vault-pass")]


def playbook(path: str, inventory: Path, timeout: int = 1800) -> str:
    """``ansible-playbook -i INVENTORY molecule/PATH`` from the repository root with molecule/slurm's
    provisioner environment (ANSIBLE_SKIP_TAGS, ANSIBLE_COLLECTIONS_PATH); fails the calling test
    with the end of its output unless it exits 0; returns the output."""
    import os

    provisioner_env = _molecule_slurm_conf()["provisioner"]["env"]
    env = dict(os.environ, **{k: str(_molecule_vars(v)) for k, v in provisioner_env.items()})
    venv_bin = Path(sys.executable).parent
    env["PATH"] = f"{venv_bin}{os.pathsep}{env.get('PATH', '')}"
    env["ANSIBLE_CACHE_PLUGIN"] = "memory"  # facts of this run only (ansible.cfg's cache is shared)
    exe = venv_bin / "ansible-playbook"
    r = subprocess.run([str(exe) if exe.exists() else "ansible-playbook", "-i", str(inventory),
                        str(REPO / "molecule" / path)], cwd=REPO, env=env, text=True, capture_output=True,
                       timeout=timeout, check=False)
    assert r.returncode == 0, f"ansible-playbook molecule/{path} failed:\n{r.stdout[-6000:]}\n{r.stderr[-3000:]}"
    return r.stdout


def assert_idempotent(output: str) -> None:
    """Molecule's idempotence check on a second converge's output: no host changed anything."""
    import re

    recap = re.findall(r"^(\S+)\s+:\s+ok=\d+\s+changed=(\d+)", output, re.M)
    assert recap, output[-3000:]
    changed = [h for h, n in recap if n != "0"]
    tasks = re.findall(r"^(TASK \[.*?\]|changed: \[.*?\].*)$", output, re.M)
    shown = [t for i, t in enumerate(tasks)
             if t.startswith("changed") or (i + 1 < len(tasks) and tasks[i + 1].startswith("changed"))]
    assert not changed, f"idempotence: changed on {changed}:\n" + "\n".join(shown)


def run_slurm_case(case: str, inventory: Path) -> None:
    """One case of molecule/slurm on the provisioned lab (the fixture lab_slurm_cases prepared it)."""
    for _step, path in SLURM_CASES[case]:
        playbook(path, inventory)


# --- the files a component's roles write (tests/managed_files.py), read on the lab hosts before and after a day-2
# run (issue 28: tests/integration/test_component_day2_lab.py, the storage case of test_slurm_cases.py) ---

#: a path's state: "absent", a link's target, a file's mode, owner and sha256, or (a folder a task fills) its
#: mode, owner, number of files and one sha256 over each file's name, mode, owner and sha256
SNAPSHOT = ('for p in {paths}; do if [ -L "$p" ]; then echo "$p link $(readlink "$p") $(stat -c %U:%G "$p")"; '
            'elif [ -f "$p" ]; then echo "$p $(stat -c "%a %U:%G" "$p") $(sha256sum < "$p" | cut -d" " -f1)"; '
            'elif [ -d "$p" ]; then echo "$p dir $(stat -c "%a %U:%G" "$p") $(find "$p" -type f | wc -l) files '
            '$(cd "$p" && find . -type f -printf "%P %m %u:%g " -exec sha256sum {{}} \\; | sort | sha256sum '
            '| cut -d" " -f1)"; else echo "$p absent"; fi; done')


def snapshot(files: dict[str, list[str]]) -> dict[str, dict[str, str]]:
    """host -> {path: state} (:data:`SNAPSHOT`) of FILES (host -> paths), one command per host."""
    import shlex

    out: dict[str, dict[str, str]] = {}
    for host, paths in files.items():
        text = sh(host, SNAPSHOT.format(paths=" ".join(shlex.quote(p) for p in paths)))
        rows = dict(line.split(" ", 1) for line in text.splitlines() if " " in line)
        assert sorted(rows) == sorted(paths), f"{host}: no state read for {sorted(set(paths) - set(rows))}: {text!r}"
        out[host] = rows
    return out


def snapshot_changes(before: dict[str, dict[str, str]],
                     after: dict[str, dict[str, str]]) -> dict[str, dict[str, tuple[str, str]]]:
    """host -> {path: (state before, state after)} of the paths whose state differs."""
    changed = {h: {p: (before[h][p], after[h].get(p, "unread")) for p in before[h] if before[h][p] != after[h].get(p)}
               for h in before}
    return {h: c for h, c in changed.items() if c}


# --- a real MPI program in the lab (no GPU there): tests/labmpi/all_reduce_perf.c, an MPI_Allreduce
# between ranks on the lab's compute nodes (over TCP) that prints nccl-tests' report ---

MPI_SRC = REPO / "tests" / "labmpi" / "all_reduce_perf.c"
#: where the compiled program lies on every lab compute node
MPI_BIN = "/opt/clusterctl-lab-mpi/all_reduce_perf"
MPI_NODES = ("lab-c1", "lab-c2")
#: Debian 12's Open MPI: the run-time on every node, the compiler wrapper (mpicc) where it is built
MPI_RUNTIME = ["openmpi-bin", "libopenmpi3"]
MPI_BUILD = ["libopenmpi-dev", "gcc", "libc6-dev"]


def exec_ok(host: str, argv: list[str], timeout: int = 600) -> str:
    """``podman exec`` on lab host HOST; fails the calling test with its output unless it exits 0."""
    r = subprocess.run(["podman", "exec", f"clusterctl-lab-{host}", *argv], capture_output=True, text=True,
                       timeout=timeout, check=False)
    assert r.returncode == 0, f"{host}: {' '.join(argv)} exited {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


def apt_install(host: str, packages: list[str]) -> None:
    """Debian packages on a lab node (its package lists fetched first when the image has none)."""
    script = ("set -e; export DEBIAN_FRONTEND=noninteractive; dpkg -s " + " ".join(packages)
              + " >/dev/null 2>&1 && exit 0; ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1 || apt-get update -qq; "
              "apt-get install -y -qq --no-install-recommends " + " ".join(packages) + " >/dev/null")
    exec_ok(host, ["sh", "-c", script])


def lab_mpi_program() -> str:
    """Open MPI on both lab compute nodes and tests/labmpi/all_reduce_perf.c built with mpicc on
    lab-c1, copied to :data:`MPI_BIN` on each (podman cp through the test machine); returns MPI_BIN."""
    import tempfile

    for host in MPI_NODES:
        apt_install(host, MPI_RUNTIME)
    apt_install(MPI_NODES[0], MPI_BUILD)
    folder = str(Path(MPI_BIN).parent)
    exec_ok(MPI_NODES[0], ["mkdir", "-p", folder])
    subprocess.run(["podman", "cp", str(MPI_SRC), f"clusterctl-lab-{MPI_NODES[0]}:{folder}/"], check=True)
    exec_ok(MPI_NODES[0], ["mpicc", "-O2", "-Wall", "-o", MPI_BIN, f"{folder}/{MPI_SRC.name}"])
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["podman", "cp", f"clusterctl-lab-{MPI_NODES[0]}:{MPI_BIN}", tmp], check=True)
        for host in MPI_NODES[1:]:
            exec_ok(host, ["mkdir", "-p", folder])
            subprocess.run(["podman", "cp", f"{tmp}/{Path(MPI_BIN).name}", f"clusterctl-lab-{host}:{MPI_BIN}"],
                           check=True)
    return MPI_BIN


# --- a simulated RoCE tree for the node check on a lab node (issue 25): tests/simfabric.py lays
# tests/fixtures/simfabric/lab-roce-healthy.yml out as the kernel does under /sys/class/infiniband; the
# node_health role points the node check at it (node_health_sysfs_root, as its config's sysfs_root) ---

#: where the tree lies on a lab node (its sysfs root: NODE_SIM_ROOT/sys)
NODE_SIM_ROOT = "/opt/clusterctl-nodecheck-sim"
#: node_health settings of a lab node that carries the tree: two 400 Gb/s RoCE devices expected
NODE_SIM_VARS = {"node_health_sysfs_root": f"{NODE_SIM_ROOT}/sys", "node_health_rdma_devices": 2,
                 "node_health_rate_gbps": 400}


def put_node_roce_tree(host: str, tmp: Path, port_fault: str = "") -> str:
    """lab-roce-healthy.yml built under ``tmp`` and copied to :data:`NODE_SIM_ROOT` on lab host HOST (what was
    there replaced); with ``port_fault`` (a simfabric fault: port_down, port_polling, rate_degraded) on
    mlx5_1 port 1. Returns the port's folder on the node."""
    import copy
    import shutil

    import simfabric

    desc = copy.deepcopy(simfabric.load(REPO / "tests" / "fixtures" / "simfabric" / "lab-roce-healthy.yml"))
    if port_fault:
        desc["devices"][1]["ports"][0]["faults"] = [port_fault]
    local = tmp / f"sim-{host}-{port_fault or 'healthy'}"
    shutil.rmtree(local, ignore_errors=True)
    simfabric.build(desc, local / "sys")
    name = f"clusterctl-lab-{host}"
    subprocess.run(["podman", "exec", name, "rm", "-rf", NODE_SIM_ROOT], check=True)
    subprocess.run(["podman", "cp", str(local), f"{name}:{NODE_SIM_ROOT}"], check=True)
    return f"{NODE_SIM_ROOT}/sys/class/infiniband/mlx5_1/ports/1"


# --- enroot + pyxis (role containers) on the lab: the variables every lab test that needs them sets ---


def containers_vars(cache: Path) -> dict[str, object]:
    """The role containers' inventory variables for the lab: enroot and pyxis from the source tarballs of
    tests/tools.py (the calling test skips without them), the built packages kept in ``cache`` (one per
    session: a second test's provision installs from there instead of building again)."""
    from tools import TOOLS, tool_tarball

    enroot, pyxis = tool_tarball("enroot"), tool_tarball("pyxis")
    return {
        "containers_enroot_src": f"file://{enroot}",
        "containers_enroot_checksum": f"sha256:{TOOLS['enroot'].sha256}",
        "containers_pyxis_src": str(pyxis),
        "containers_pyxis_checksum": f"sha256:{TOOLS['pyxis'].sha256}",
        "containers_package_cache": str(cache),
        # lab nodes are podman containers on a cgroup v1 (hybrid) host: the job cgroup it mounts is absent
        "containers_cgroups_hook": False,
    }


def containers_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's package cache of the role containers (under pytest's base temporary folder)."""
    return tmp_path_factory.getbasetemp() / "containers-packages"


@functools.cache
def ee_build_script() -> types.ModuleType:
    """scripts/ee_build.py loaded as a module (the execution environment's local build: the EE lab test,
    the fresh-wheel lab test and its unit tests use the same one)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("ee_build", REPO / "scripts" / "ee_build.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
