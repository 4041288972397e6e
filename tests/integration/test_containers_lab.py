"""enroot + pyxis on the real Slurm lab (role containers), and an MPI allreduce in a squashfs image.

The role builds enroot and pyxis once, on the first host of its play (lab-ctl), from the source
tarballs of tests/tools.py (CLUSTERCTL_TOOLS_DIR, the cache or the URL, sha256-checked; the test
skips without them), keeps the .debs in a package cache on the test machine and installs both on
all three nodes (srun on lab-ctl loads pyxis, and the pyxis package depends on enroot). Then, as
a normal user, a squashfs image holding
tests/labmpi/all_reduce_perf (a real MPI program) and Debian's Open MPI libraries runs as one MPI
job across both compute nodes: ``srun -N2 --mpi=pmix --container-image=<image>`` (pyxis starts
the containers, enroot's PMIx hook hands Slurm's PMIx server to the ranks inside).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from ccparse import registry
from labutil import (
    MPI_BIN,
    MPI_NODES,
    cc,
    containers_cache,
    containers_vars,
    exec_ok,
    lab_mpi_program,
    sh,
    summary_rows,
)

pytestmark = [
    pytest.mark.lab,
    pytest.mark.skipif(shutil.which("podman") is None, reason="podman not installed (scripts/setup.sh installs it)"),
]

USER, UID = "ccuser", 2001
IMAGE = "/var/tmp/clusterctl-lab-mpi.sqsh"
#: the program's path inside the image: not on any node, so a run proves the container's file system
IN_IMAGE = "/usr/local/bin/all_reduce_perf"
MARK = "/etc/clusterctl-lab-image"


def _slurmd_started(host: str) -> str:
    return sh(host, "systemctl show -p ExecMainStartTimestampMonotonic --value slurmd").strip()


@pytest.fixture(scope="module")
def containers(provisioned: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """The provisioned lab plus the role containers (enroot + pyxis from the source tarballs)."""
    tmp = tmp_path_factory.mktemp("containers")
    inv = tmp / "inv"
    shutil.copytree(provisioned, inv)
    # the session's cache: the elastic job in an image (test_slurm_cases) installs from it, no second build
    cache = containers_cache(tmp_path_factory)
    (inv / "group_vars" / "all" / "containers.yml").write_text(yaml.safe_dump(containers_vars(cache)))
    before = {h: _slurmd_started(h) for h in MPI_NODES}
    res = cc("provision", str(inv), "--tags", "containers")
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-3000:]
    yield {"inv": inv, "cache": cache, "first": res.stdout, "slurmd_before": before}


def test_built_once_installed_everywhere_restart_only_on_change(containers: dict[str, object]) -> None:
    inv, cache = containers["inv"], containers["cache"]
    assert isinstance(inv, Path) and isinstance(cache, Path)
    debs = sorted(p.name for p in cache.rglob("*.deb"))
    assert [d.split("_")[0] for d in debs] == ["enroot", "nvslurm-plugin-pyxis"], debs
    # built on the build host only (lab-ctl, the play's first host): no tool chain on the compute nodes
    assert "install ok installed" in sh("lab-ctl", "dpkg -s libslurm-dev 2>&1")
    for host in MPI_NODES:
        assert "install ok installed" not in sh(host, "dpkg -s libslurm-dev 2>&1"), host
    for host in ("lab-ctl", *MPI_NODES):
        assert sh(host, "dpkg-query -W -f '${Status}' enroot nvslurm-plugin-pyxis").count("install ok installed") == 2
        assert sh(host, "test -x /etc/enroot/hooks.d/50-slurm-pmi.sh && echo y").strip() == "y"  # MpiDefault=pmix
        assert sh(host, "test -e /etc/enroot/hooks.d/10-cgroups.sh || echo gone").strip() == "gone"
        assert "ENROOT_DATA_PATH /tmp/enroot-data/user-$(id -u)" in sh(host, "cat /etc/enroot/enroot.conf.d/*.conf")
        assert sh(host, "stat -c %a /run/enroot /var/tmp/enroot-cache /tmp/enroot-data").split() == ["1777"] * 3
        assert "d /run/enroot 1777 root root -" in sh(host, "cat /etc/tmpfiles.d/clusterctl-enroot.conf")
        mounts = sh(host, "cat /etc/enroot/mounts.d/*.fstab")
        assert "/etc/slurm/task_prolog.sh /etc/slurm/task_prolog.sh none" in mounts, mounts
        assert "include /etc/slurm/plugstack.conf.d/*.conf" in sh(host, "cat /etc/slurm/plugstack.conf")
        assert sh(host, "readlink /etc/slurm/plugstack.conf.d/pyxis.conf").strip() == "/usr/share/pyxis/pyxis.conf"
    assert "--container-image" in sh("lab-ctl", "srun --help")
    # the new plugin restarted slurmd; a second run (and a check run) change nothing and restart nothing
    restarted = {h: _slurmd_started(h) for h in MPI_NODES}
    assert all(restarted[h] != containers["slurmd_before"][h] for h in MPI_NODES), restarted  # type: ignore[index]
    for extra in (["--check"], []):
        res = cc("provision", str(inv), "--tags", "containers", *extra)
        assert res.returncode == 0, res.stdout[-4000:]
        rows = summary_rows(res.stdout)
        assert set(rows) == {"lab-ctl", *MPI_NODES} and all(r[1] == "0" for r in rows.values()), res.stdout[-4000:]
    assert {h: _slurmd_started(h) for h in MPI_NODES} == restarted


def _image() -> str:
    """A squashfs root file system made on lab-c1 from what the MPI program needs (the program, the
    shared libraries of it and of Open MPI's and PMIx's plugins, Open MPI's and PMIx's data, a shell and
    sed for Slurm's TaskProlog, which runs inside the container),
    copied to the same path on both compute nodes; /dev left empty (a user cannot make device nodes)."""
    lab_mpi_program()
    script = f"""set -e
R=$(mktemp -d /var/tmp/clusterctl-rootfs.XXXXXX)
mkdir -p $R/usr/bin $R/usr/lib $R/usr/lib64 $R/usr/sbin $R/usr/local/bin $R/etc $R/tmp $R/proc $R/sys $R/dev \
  $R/run $R/root $R/home $R/var/tmp
for d in bin lib lib64 sbin; do ln -s usr/$d $R/$d; done
chmod 1777 $R/tmp $R/var/tmp
cp {MPI_BIN} $R{IN_IMAGE}
M=/usr/lib/x86_64-linux-gnu
for f in /usr/bin/dash /usr/bin/cat /usr/bin/env /usr/bin/sed {MPI_BIN} \
    $M/openmpi/lib/openmpi3/*.so $M/pmix2/lib/pmix/*.so; do
  echo $f; ldd $f | awk '/=> \\// {{print $3}} /^\\t\\// {{print $1}}'
done | sort -u | while read -r lib; do
  mkdir -p $R$(dirname $lib); cp -L $lib $R$lib
done
cp -a --parents $M/openmpi $M/pmix2 /usr/share/openmpi /etc/openmpi $R/
for d in /usr/share/pmix /etc/pmix $M/libpmix.so.2 $M/libpmix.so.2.*; do [ -e $d ] && cp -a --parents $d $R/; done
ln -sf dash $R/usr/bin/sh
grep -E '^(root|nobody):' /etc/passwd > $R/etc/passwd; grep -E '^(root|nogroup):' /etc/group > $R/etc/group
echo clusterctl-lab-mpi-image > $R{MARK}
rm -f {IMAGE}; mksquashfs $R {IMAGE} -noappend -quiet -all-root; chmod 0644 {IMAGE}; rm -rf $R
"""
    exec_ok(MPI_NODES[0], ["sh", "-c", script])
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["podman", "cp", f"clusterctl-lab-{MPI_NODES[0]}:{IMAGE}", tmp], check=True)
        for host in MPI_NODES[1:]:
            subprocess.run(["podman", "cp", f"{tmp}/{Path(IMAGE).name}", f"clusterctl-lab-{host}:{IMAGE}"], check=True)
            exec_ok(host, ["chmod", "0644", IMAGE])
    return IMAGE


def test_mpi_allreduce_in_image_across_two_nodes_as_user(containers: dict[str, object]) -> None:
    """5(a): a normal user's srun -N2 --mpi=pmix --container-image: one MPI job, a rank on each node."""
    image = _image()
    for host in ("lab-ctl", *MPI_NODES):
        exec_ok(host, ["sh", "-c", f"id -u {USER} >/dev/null 2>&1 || useradd -m -u {UID} {USER}"])

    def as_user(command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["podman", "exec", "clusterctl-lab-lab-ctl", "su", "-", USER, "-c",
                               f"cd /tmp && {command}"], capture_output=True, text=True, timeout=300, check=False)

    res = as_user(f"srun -N2 --container-image={image} cat {MARK}")
    assert res.returncode == 0 and res.stdout.split() == ["clusterctl-lab-mpi-image"] * 2, res.stdout + res.stderr
    res = as_user(f"srun -N2 --ntasks-per-node=1 --mpi=pmix --container-image={image} "
                  f"{IN_IMAGE} -b 1M -e 8M -f 2 -n 5 -w 2")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "PMIX ERROR" not in res.stdout + res.stderr, res.stderr[-3000:]
    report = registry.parse("nccl-tests", res.stdout)
    assert report["hosts"] == list(MPI_NODES) and report["n_ranks"] == 2, res.stdout
    assert [d["host"] for d in report["devices"]] == list(MPI_NODES), res.stdout
    assert report["wrong_total"] == 0 and report["failure"] is None, res.stdout
    assert report["busbw_largest_GBps"] > 0, res.stdout
    # the ranks ran as the user, inside the image: the program is not on the nodes themselves
    for host in MPI_NODES:
        assert sh(host, f"test -e {IN_IMAGE} || echo absent").strip() == "absent"
