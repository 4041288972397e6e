"""``clusterctl job``: the sbatch script rendered from an inventory, parsed and run with stand-ins for
srun/scontrol/torchrun (the real TaskProlog of slurm_common giving the NCCL environment), bad input
(exit 2 naming option or key and value), and ``--submit`` through the real playbook on local hosts."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jinja2
import pytest
import yaml
from typer.testing import CliRunner

from clusterctl.cli import app

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "inventories" / "lab"


def _inventory(tmp_path: Path, **spec: Any) -> Path:
    """inventories/lab plus a JuiceFS mount under tmp_path and the NCCL file paths under tmp_path."""
    inv = tmp_path / "inv"
    shutil.copytree(LAB, inv)
    (tmp_path / "mnt").mkdir(exist_ok=True)
    values: dict[str, Any] = {
        "storage_mounts": [{"type": "juicefs", "name": "labdata", "mountpoint": str(tmp_path / "mnt" / "labdata"),
                            "metaurl_secret": "vault_cc_stor_metaurl", "storage": "file",
                            "bucket": "/srv/juicefs-bucket/"}],
        "slurm_common_task_prolog": str(tmp_path / "task_prolog.sh"),
        "slurm_common_nccl_conf": str(tmp_path / "nccl.conf"),
    }
    values.update(spec)
    cluster_file = inv / "group_vars" / "all" / "cluster.yml"
    cluster = yaml.safe_load(cluster_file.read_text())
    for key in [k for k in values if k in cluster]:  # one key set in one file only (validate's rule)
        cluster[key] = values.pop(key)
    cluster_file.write_text("---\n" + yaml.safe_dump(cluster, sort_keys=False))
    (inv / "group_vars" / "all" / "job.yml").write_text("---\n" + yaml.safe_dump(values, sort_keys=False))
    return inv


def _train(tmp_path: Path) -> Path:
    script = tmp_path / "train.py"
    script.write_text("print('training')\n")
    return script


def _job(*argv: str) -> Any:
    return CliRunner().invoke(app, ["job", *argv])


def _render(tmp_path: Path, *extra: str, **spec: Any) -> tuple[str, Path]:
    inv = _inventory(tmp_path, **spec)
    res = _job(str(inv), str(_train(tmp_path)), "--nodes", "2", "--gpus-per-node", "1", "--max-restarts", "2",
               "--user", "alice", *extra)
    assert res.exit_code == 0, res.output
    return res.stdout, inv


def _directives(script: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in re.finditer(r"^#SBATCH --([a-z-]+)(?:=(.*))?$", script, re.M):
        out[m.group(1)] = m.group(2) or ""
    return out


def _srun(script: str) -> list[str]:
    line = next(ln for ln in script.splitlines() if ln.startswith("srun "))
    return shlex.split(line)


def _worker(script: str) -> str:
    m = re.search(r"<<'CLUSTERCTL_WORKER'\n(.*?)\nCLUSTERCTL_WORKER\n", script, re.S)
    assert m, script
    return m.group(1)


def test_rendered_script_parses_and_says_what_was_asked(tmp_path: Path) -> None:
    script, inv = _render(tmp_path, "--time", "1:00:00", "--", "--lr", "0.1 warm")
    assert script.startswith("#!/bin/bash\n")
    for text in (script, _worker(script)):
        r = subprocess.run(["bash", "-n"], input=text, text=True, capture_output=True, check=False)
        assert r.returncode == 0, r.stderr
    spec = yaml.safe_load((inv / "group_vars" / "all" / "job.yml").read_text())
    mount = spec["storage_mounts"][0]["mountpoint"]
    job_dir = f"{mount}/jobs/alice/train"
    d = _directives(script)
    assert d["nodes"] == "2" and d["ntasks-per-node"] == "1" and d["time"] == "1:00:00"
    partitions = yaml.safe_load((LAB / "group_vars" / "all" / "cluster.yml").read_text())["slurm_partitions"]
    assert d["partition"] == next(p["name"] for p in partitions if p.get("default"))
    assert d["chdir"] == job_dir
    assert d["output"] == f"{job_dir}/logs/%x-%j.out"
    # the lab's nodes have no GPUs (gpus_per_node 0): no GRES request, one CPU worker per node
    assert "gpus-per-node" not in d
    assert f"export CLUSTERCTL_CHECKPOINT_DIR={job_dir}/checkpoints\n" in script
    srun = _srun(script)
    assert srun[:5] == ["srun", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1", "--kill-on-bad-exit=1"]
    assert srun[5:] == ["bash", "-c", "$worker", "clusterctl-worker", f"{job_dir}/train.py", "--lr", "0.1 warm"]
    assert not any(a.startswith("--container") for a in srun)
    torchrun = shlex.split(_worker(script).split("exec ", 1)[1].replace("\\\n", " "))
    assert torchrun == ["torchrun", "--nnodes=2", "--nproc-per-node=1", "--rdzv-backend=c10d",
                        "--rdzv-endpoint=${CLUSTERCTL_RDZV_ENDPOINT}", "--rdzv-id=${SLURM_JOB_ID}", "--max-restarts=2",
                        "$@"]


def test_each_rendezvous_round_gets_its_own_store(tmp_path: Path) -> None:
    """TorchElastic's shared agent store scopes worker keys by each agent's own restart count: after one
    node's worker restarts, a rank can read a peer address of the round before (pytorch#135712): the script
    turns the sharing off unless the submitting environment (which sbatch passes on) says otherwise."""
    import subprocess

    script, _ = _render(tmp_path)
    [line] = [ln for ln in script.splitlines() if "TORCH_DISABLE_SHARE_RDZV_TCP_STORE=" in ln]
    assert script.index(line) < script.index("srun ")  # set before the tasks start
    show = line + '; printf %s "$TORCH_DISABLE_SHARE_RDZV_TCP_STORE"'
    env = {"PATH": "/usr/bin:/bin"}
    assert subprocess.run(["bash", "-c", show], env=env, capture_output=True, text=True).stdout == "1"
    kept = {**env, "TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "0"}
    assert subprocess.run(["bash", "-c", show], env=kept, capture_output=True, text=True).stdout == "0"


def test_gpus_and_container_image(tmp_path: Path) -> None:
    script, _ = _render(tmp_path, "--container-image", "nvcr.io#nvidia/pytorch:24.05-py3", gpus_per_node=8)
    d = _directives(script)
    assert d["gpus-per-node"] == "1"
    srun = _srun(script)
    job_dir = d["chdir"]
    assert "--container-image=nvcr.io#nvidia/pytorch:24.05-py3" in srun
    assert f"--container-mounts={job_dir}:{job_dir}" in srun
    assert f"--container-workdir={job_dir}" in srun


def _task_prolog(tmp_path: Path) -> None:
    """slurm_common's TaskProlog template rendered with the inventory's nccl.conf path (as the role does)."""
    tpl = REPO / "roles" / "slurm_common" / "templates" / "task_prolog.sh.j2"
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    env.filters["quote"] = shlex.quote
    text = env.from_string(tpl.read_text()).render(ansible_managed="test",
                                                   slurm_common_nccl_conf=str(tmp_path / "nccl.conf"))
    (tmp_path / "task_prolog.sh").write_text(text)
    (tmp_path / "task_prolog.sh").chmod(0o755)


def _fakebin(tmp_path: Path) -> Path:
    """srun (runs the command once per node with SLURM_NODEID), scontrol (show hostnames), torchrun
    (prints its arguments and NCCL environment) and hostname."""
    fake = tmp_path / "fakebin"
    fake.mkdir()
    scripts = {
        "srun": "#!/bin/bash\nn=1\nwhile [[ $1 == --* ]]; do [[ $1 == --nodes=* ]] && n=${1#--nodes=}; shift; done\n"
                "for ((i=0; i<n; i++)); do SLURM_NODEID=$i \"$@\" || exit $?; done\n",
        "scontrol": "#!/bin/sh\n[ \"$1 $2\" = 'show hostnames' ] && printf 'lab-c1\\nlab-c2\\n'\n",
        "torchrun": "#!/bin/sh\necho \"torchrun node=$SLURM_NODEID args=$*\"\nenv | grep '^NCCL_' | sort\n",
    }
    for name, text in scripts.items():
        (fake / name).write_text(text)
        (fake / name).chmod(0o755)
    return fake


def test_script_runs_with_the_task_prologs_nccl_environment(tmp_path: Path) -> None:
    """The script run for real (srun/scontrol/torchrun stand-ins): the checkpoint folder is made under
    the inventory's mount, the rendezvous is the allocation's first node, and each task has the NCCL_*
    values of the inventory's nccl.conf through slurm_common's own TaskProlog, nothing else."""
    script, _ = _render(tmp_path, "--", "--steps", "3")
    conf = "# nccl role\nNCCL_SOCKET_IFNAME=eth0\nNCCL_IB_HCA==mlx5_0:1,mlx5_1:1\nNOT_NCCL=1\n"
    (tmp_path / "nccl.conf").write_text(conf)
    _task_prolog(tmp_path)
    path = tmp_path / "job.sbatch"
    path.write_text(script)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NCCL_")}
    env.update(PATH=f"{_fakebin(tmp_path)}:{env['PATH']}", SLURM_JOB_ID="77", SLURM_JOB_NODELIST="lab-c[1-2]")
    r = subprocess.run(["bash", str(path)], env=env, text=True, capture_output=True, check=False, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    job_dir = _directives(script)["chdir"]
    assert Path(job_dir, "checkpoints").is_dir()
    expected_nccl = sorted(ln for ln in conf.splitlines() if ln.startswith("NCCL_"))
    for node in (0, 1):
        block = r.stdout.split(f"torchrun node={node} ", 1)[1].split("torchrun node=", 1)[0].splitlines()
        assert block[0] == (f"args=--nnodes=2 --nproc-per-node=1 --rdzv-backend=c10d --rdzv-endpoint=lab-c1:29500 "
                            f"--rdzv-id=77 --max-restarts=2 {job_dir}/train.py --steps 3")
        assert [ln for ln in block[1:] if not ln.startswith("clusterctl job:")] == expected_nccl
    assert r.stdout.count("NCCL: NCCL_IB_HCA==mlx5_0:1,mlx5_1:1 NCCL_SOCKET_IFNAME=eth0") == 2


@pytest.mark.parametrize(("argv", "spec", "named"), [
    (["--nodes", "0"], {}, "--nodes: at least 1 node (value: 0)"),
    (["--nodes", "3"], {}, "--nodes: partition batch has 2 node(s) that mount"),
    (["--gpus-per-node", "0"], {}, "--gpus-per-node: at least 1"),
    (["--gpus-per-node", "9"], {"gpus_per_node": 8}, "--gpus-per-node: the cluster spec's gpus_per_node is 8"),
    (["--partition", "gpu"], {}, "--partition: no such partition in slurm_partitions"),
    (["--time", "soon"], {}, "--time: a Slurm time"),
    (["--container-image", "a b"], {}, "--container-image: one image reference"),
    (["--storage", "scratch"], {}, "--storage: no shared mount of that name in the inventory (value: scratch)"),
    ([], {"storage_mounts": []}, "storage_mounts: the inventory"),
    (["--", "a\nb"], {}, "ARGS: a line break"),
])
def test_bad_input_exits_2_naming_key_and_value(tmp_path: Path, argv: list[str], spec: dict[str, Any],
                                                named: str) -> None:
    inv = _inventory(tmp_path, **spec)
    res = _job(str(inv), str(_train(tmp_path)), "--user", "alice", *argv)
    assert res.exit_code == 2, res.output
    assert named in " ".join(res.output.split()), res.output


def test_missing_script_and_no_shared_mount_exit_2(tmp_path: Path) -> None:
    inv = _inventory(tmp_path)
    res = _job(str(inv), str(tmp_path / "absent.py"))
    assert res.exit_code == 2 and f"SCRIPT: no such file (value: {tmp_path / 'absent.py'})" in res.output
    res = _job(str(LAB), str(_train(tmp_path)))  # the lab inventory itself defines no shared mount
    assert res.exit_code == 2 and "storage_mounts: the inventory" in res.output and "(value: [])" in res.output


def test_nodes_without_the_mount_are_excluded(tmp_path: Path) -> None:
    inv = _inventory(tmp_path)
    hosts = yaml.safe_load((inv / "hosts.yml").read_text())
    groups = hosts["all"]["children"]
    groups["storage_clients"] = {"hosts": {"lab-c1": None}}
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts))
    res = _job(str(inv), str(_train(tmp_path)), "--nodes", "1", "--user", "alice")
    assert res.exit_code == 0, res.output
    assert _directives(res.stdout)["exclude"] == "lab-c2"


def _local_inventory(tmp_path: Path) -> Path:
    """Controller and compute are this machine (local connection): the real job_submit.yml runs."""
    inv = _inventory(tmp_path)
    hosts = {"all": {"children": {
        "slurm_controller": {"hosts": {"ctl": {"ansible_host": "127.0.0.2"}}},
        "slurm_compute": {"hosts": {"c1": {"ansible_host": "127.0.0.3"}}},
        "storage_clients": {"children": {"slurm_compute": None}}}}}
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts))
    lab = inv / "group_vars" / "all" / "lab.yml"
    lab.write_text(lab.read_text().replace("ansible_user: root", "ansible_user: root\nansible_connection: local")
                   .replace("/usr/bin/python3", sys.executable))
    return inv


@pytest.mark.skipif(os.geteuid() != 0, reason="becomes the job's user with su: needs root")
def test_submit_stages_the_job_folder_and_runs_sbatch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--submit through ansible-runner and playbooks/job_submit.yml on local hosts, sbatch a stand-in
    that keeps the script it was given and prints a job id as --parsable does."""
    inv = _local_inventory(tmp_path)
    fake = tmp_path / "fakebin"
    fake.mkdir()
    (fake / "sbatch").write_text(f"#!/bin/sh\n[ \"$1\" = --parsable ] || exit 9\ncp \"$2\" {tmp_path}/submitted\n"
                                 "echo 4242\n")
    (fake / "sbatch").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    res = _job(str(inv), str(_train(tmp_path)), "--nodes", "1", "--user", "root", "--submit", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)["result"]  # the --json envelope
    assert out["job_id"] == "4242"
    job_dir = Path(out["job_dir"])
    assert (job_dir / "train.py").read_text() == "print('training')\n"
    assert (job_dir / "logs").is_dir() and (job_dir / "checkpoints").is_dir()
    submitted = (tmp_path / "submitted").read_text()
    assert submitted == (job_dir / "job.sbatch").read_text()
    assert _directives(submitted)["output"] == f"{job_dir}/logs/%x-%j.out"
    assert out["log"] == f"{job_dir}/logs/train-4242.out"


def test_the_lab_tests_log_check_on_a_real_elastic_restart() -> None:
    """labjob.check_log (the lab test's verdict on the job log) on the output of a real elastic restart
    (two torchrun agents, one worker killed): it passes there and fails when the log shows no resume."""
    from conftest import read_fixture
    from labjob import START, check_log

    log = read_fixture("jobs/elastic-restart-two-agents.log")
    steps = 1 + max(int(m) for m in re.findall(r"^done rank \d+ step (\d+) ", log, re.M))
    killed = re.search(r"failed \(exitcode: -9\) local_rank: 0 \(pid: (\d+)\)", log)
    assert killed
    assert check_log(log, steps)["killed_pid"] == int(killed.group(1))
    resumed = [m[4] for m in START.findall(log) if m[4] != "-1"]
    from_scratch = log.replace(f"resumed-from {resumed[0]}", "resumed-from -1")
    with pytest.raises(AssertionError):
        check_log(from_scratch, steps)
    no_restart = "\n".join(ln for ln in log.splitlines() if not (START.fullmatch(ln) and "resumed-from -1" not in ln))
    with pytest.raises(AssertionError):
        check_log(no_restart, steps)
    # the other rank's first worker failing too (its allreduce lost the peer; CI, session 11): its agent's
    # line names its pid with exit code 1, the killed worker is still the one SIGKILL ended
    first0 = next(int(m[2]) for m in START.findall(log) if m[0] == "0" and m[4] == "-1")
    both = log + (f"\nE1204 05:21:28.300000 1 torch/distributed/elastic/multiprocessing/api.py:1002] failed "
                  f"(exitcode: 1) local_rank: 0 (pid: {first0}) of binary: /tmp/job-torch/venv/bin/python3\n")
    assert check_log(both, steps)["killed_pid"] == int(killed.group(1))


def test_the_lab_image_is_rebuilt_when_an_input_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """labjob.image_key (the cache key of the lab's torch image): the same inputs give the same key; the
    lab image, a wheel's content or the training script each change it. The build script is valid bash."""
    import labjob

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"torch")
    (wheels / "sympy-1.14.0-py3-none-any.whl").write_bytes(b"sympy")
    key = labjob.image_key(wheels, "sha256:aaa")
    assert key == labjob.image_key(wheels, "sha256:aaa") and len(key) == 20
    assert labjob.image_key(wheels, "sha256:bbb") != key
    (wheels / "sympy-1.14.0-py3-none-any.whl").write_bytes(b"sympy, another build")
    assert labjob.image_key(wheels, "sha256:aaa") != key
    key = labjob.image_key(wheels, "sha256:aaa")
    train = tmp_path / "elastic_train.py"
    train.write_text(labjob.TRAIN.read_text() + "# changed\n")
    monkeypatch.setattr(labjob, "TRAIN", train)
    assert labjob.image_key(wheels, "sha256:aaa") != key
    script = labjob._BUILD.format(wheels="/w", name="n", out="/o.sqsh", torch=labjob.TORCH, train=train.name,
                                  image_train=labjob.IMAGE_TRAIN, tools=" ".join(labjob.IMAGE_TOOLS), key=key,
                                  mark=labjob.IMAGE_MARK)
    assert subprocess.run(["bash", "-n"], input=script, text=True, check=False).returncode == 0
    assert "enroot export" in script and f"'{labjob.TORCH}'" in script
