"""The embedded local lab: podman containers with systemd, reached over SSH like real nodes.

Everything is read from the lab inventory (``inventories/lab``): host names, their addresses on
the lab's own podman network, the network's subnet and the image. ``up`` and ``down`` are
idempotent. Containers are named ``clusterctl-lab-<host>``; the network ``clusterctl-lab``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from clusterctl import paths
from clusterctl.errors import ClusterctlError
from clusterctl.inventory import Inventory, load_checked

PREFIX = "clusterctl-lab-"
NETWORK = "clusterctl-lab"
DEFAULT_IMAGE = "localhost/clusterctl-lab:latest"
KEY = Path("~/.ssh/clusterctl-lab_ed25519").expanduser()


class LabError(ClusterctlError):
    """podman failed or is missing, or a lab container did not come up (exit status 1)."""


@dataclass
class LabHost:
    name: str
    address: str
    container: str
    privileged: bool = False
    image: str = ""  # clusterctl_lab_image as this host sees it: a host variable overrides the lab's


def _podman(*args: str, check: bool = True, capture: bool = True) -> subprocess.CompletedProcess[str]:
    if shutil.which("podman") is None:
        raise LabError("podman is not installed: run lab/host-setup.sh (as root) first")
    proc = subprocess.run(["podman", *args], text=True, capture_output=capture, check=False)
    if check and proc.returncode != 0:
        raise LabError(f"podman {' '.join(args)} failed ({proc.returncode}): {(proc.stderr or '').strip()}")
    return proc


def lab_inventory() -> Path:
    return paths.inventories() / "lab"


def lab_hosts(inv: Inventory) -> list[LabHost]:
    out = []
    for h in inv.hosts:
        hv = inv.host_vars.get(h, {})
        out.append(LabHost(h, str(hv.get("ansible_host", "")), PREFIX + h, bool(hv.get("clusterctl_lab_privileged")),
                           str(hv.get("clusterctl_lab_image") or "")))
    return out


def settings(inv: Inventory) -> dict[str, str]:
    spec = inv.spec()
    return {
        "subnet": str(spec.get("clusterctl_lab_subnet", "10.213.77.0/24")),
        "image": str(spec.get("clusterctl_lab_image", DEFAULT_IMAGE)),
        "bucket": str(Path(str(spec.get("clusterctl_lab_bucket_dir", "/var/tmp/clusterctl-lab/bucket")))),
    }


def build_image(image: str) -> None:
    if _podman("image", "exists", image, check=False).returncode == 0:
        return
    script = paths.data_root() / "lab" / "build-image.sh"
    if not script.is_file():
        raise LabError(f"image {image} is missing and {script} is not available to build it")
    env = {"CLUSTERCTL_LAB_IMAGE": image, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    proc = subprocess.run(["bash", str(script)], env=env, check=False)
    if proc.returncode != 0:
        raise LabError(f"building the lab image failed (exit {proc.returncode})")


def _ensure_key() -> str:
    KEY.parent.mkdir(mode=0o700, exist_ok=True)
    if not KEY.is_file():
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "clusterctl-lab", "-f", str(KEY)],
                       check=True)
    return KEY.with_suffix(".pub").read_text().strip()


def _running(container: str) -> bool:
    proc = _podman("container", "inspect", container, "--format", "{{.State.Running}}", check=False)
    return proc.returncode == 0 and proc.stdout.strip() == "true"


def _stale(container: str) -> bool:
    """podman's record says ``container`` runs (or is stopping) but its process is gone: conmon died, or the machine
    was restored from a snapshot taken while the lab ran. podman exec then fails ('container state improper') and
    podman start/restart hang in 'stopping': such a container is removed and made again."""
    proc = _podman("container", "inspect", container, "--format", "{{.State.Status}} {{.State.Pid}}", check=False)
    status, _sep, pid = proc.stdout.strip().partition(" ")
    if proc.returncode != 0 or status not in ("running", "stopping", "paused"):
        return False
    return not pid.isdigit() or int(pid) <= 0 or not _alive(int(pid))


def _alive(pid: int) -> bool:
    """A process ``pid`` of this host that runs (a zombie, killed and not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] not in (["Z"], ["X"])


def _remove(container: str) -> None:
    """``podman rm -f``, again while a stale container is only moved on to 'stopping' by the first try."""
    for _attempt in range(3):
        if _podman("rm", "-f", "-t", "0", container, check=False).returncode == 0 or \
                _podman("container", "exists", container, check=False).returncode != 0:
            return
    _podman("rm", "-f", "-t", "0", container)


def _boot_report(container: str) -> str:
    """What a container that did not boot shows: its state, exit code and the last lines systemd printed."""
    proc = _podman("container", "inspect", container, "--format", "{{.State.Status}} (exit {{.State.ExitCode}})",
                   check=False)
    state = proc.stdout.strip() or (proc.stderr or "").strip() or "unknown"
    logs = _podman("logs", "--tail", "15", container, check=False)
    tail = "\n".join(f"  {ln}" for ln in ((logs.stdout or "") + (logs.stderr or "")).strip().splitlines()[-15:])
    return f"container {state}" + (f"; its last lines:\n{tail}" if tail else "")


def _poll_systemd(container: str, timeout: float) -> str:
    """'' once systemd runs (or runs degraded); else what it said last (stdout, else stderr)."""
    deadline = time.monotonic() + timeout
    said = ""
    while time.monotonic() < deadline:
        proc = _podman("exec", container, "systemctl", "is-system-running", check=False)
        state = proc.stdout.strip()
        if state in ("running", "degraded"):
            return ""
        said = state or (proc.stderr or "").strip() or said
        if not _running(container):
            return said or "the container stopped"
        time.sleep(1)
    return said or "no answer"


def _wait_systemd(container: str, timeout: float = 150) -> None:
    """Wait for systemd in ``container``; a boot that hangs or stops is restarted once, then reported.

    CI's lost boots were stale containers (:func:`_stale`, handled in :func:`up` before this wait); the restart
    is for a boot that hangs or stops on its own, and the report says what the container showed.
    """
    said = _poll_systemd(container, timeout)
    if not said:
        return
    first = _boot_report(container)
    _podman("restart", "-t", "5", container, check=False)
    said = _poll_systemd(container, timeout)
    if not said:
        return
    raise LabError(f"{container}: systemd did not come up within {timeout:.0f}s, twice (said: {said}); "
                   f"first boot: {first}; second boot: {_boot_report(container)}")


def up(inventory: Path | None = None) -> list[LabHost]:
    """Create (or start) the network and every lab container; enable SSH with the lab key."""
    inv = load_checked(inventory or lab_inventory())
    cfg = settings(inv)
    build_image(cfg["image"])
    pub = _ensure_key()
    if _podman("network", "exists", NETWORK, check=False).returncode != 0:
        _podman("network", "create", "--subnet", cfg["subnet"], NETWORK)
    Path(cfg["bucket"]).mkdir(parents=True, exist_ok=True)
    hosts = lab_hosts(inv)
    for image in sorted({h.image for h in hosts if h.image and h.image != cfg["image"]}):
        # another image for some hosts (the tests' bare scale-out node: lab/build-image.sh --bare)
        if _podman("image", "exists", image, check=False).returncode != 0:
            raise LabError(f"image {image} (clusterctl_lab_image of a host) is missing: build it first "
                           "(lab/build-image.sh --bare builds localhost/clusterctl-bare:latest)")
    for h in hosts:
        exists = _podman("container", "exists", h.container, check=False).returncode == 0
        if exists and _stale(h.container):
            _remove(h.container)
            exists = False
        if not exists:
            args = ["run", "-d", "--name", h.container, "--hostname", h.name, "--network", NETWORK,
                    "--network-alias", h.name, "--ip", h.address, "--systemd", "always", "--device", "/dev/fuse",
                    "--cap-add", "SYS_ADMIN",
                    "--cap-add", "NET_RAW", "--tmpfs", "/tmp", "-v", f"{cfg['bucket']}:/srv/juicefs-bucket:z",
                    "--label", "clusterctl.lab=1"]
            if h.privileged:
                args.append("--privileged")
            _podman(*args, h.image or cfg["image"], "/sbin/init")
        elif not _running(h.container):
            _podman("start", h.container)
    # every lab host resolves every other by its inventory name (Slurm, munge and storage address
    # peers by name); also repairs containers created before --network-alias was set
    for h in hosts:
        _wait_systemd(h.container)
        script = (
            "set -e; "
            + "".join(f"grep -qE '^{o.address}[[:space:]]+{o.name}( |$)' /etc/hosts || "
                      f"printf '{o.address} {o.name}\\n' >> /etc/hosts; " for o in hosts if o is not h)
            + "mkdir -p -m 700 /root/.ssh; "
            f"grep -qxF '{pub}' /root/.ssh/authorized_keys 2>/dev/null || echo '{pub}' >> /root/.ssh/authorized_keys; "
            "chmod 600 /root/.ssh/authorized_keys; ls /etc/ssh/ssh_host_*_key >/dev/null 2>&1 || ssh-keygen -A; "
            "systemctl is-active -q ssh || systemctl enable -q --now ssh"
        )
        _podman("exec", h.container, "sh", "-c", script)
    return hosts


def down(inventory: Path | None = None) -> list[str]:
    """Remove every lab container and the lab network. Returns the containers removed."""
    inv = load_checked(inventory or lab_inventory())
    removed = []
    for h in lab_hosts(inv):
        if _podman("container", "exists", h.container, check=False).returncode == 0:
            if _stale(h.container):
                _remove(h.container)
            else:
                _podman("rm", "-f", "-t", "5", h.container)
            removed.append(h.container)
    if _podman("network", "exists", NETWORK, check=False).returncode == 0:
        _podman("network", "rm", NETWORK)
    return removed


def status(inventory: Path | None = None) -> list[dict[str, str]]:
    inv = load_checked(inventory or lab_inventory())
    rows = []
    for h in lab_hosts(inv):
        proc = _podman("container", "inspect", h.container, check=False)
        state = "absent"
        if proc.returncode == 0:
            info = json.loads(proc.stdout)[0]
            state = info["State"]["Status"]
        rows.append({"host": h.name, "container": h.container, "address": h.address, "state": state})
    return rows


def stop_host(host: str) -> None:
    """Stop one lab container (used by tests to make a host unreachable)."""
    _podman("stop", "-t", "2", PREFIX + host)


def start_host(host: str) -> None:
    _podman("start", PREFIX + host)
    _wait_systemd(PREFIX + host)
    _podman("exec", PREFIX + host, "systemctl", "start", "ssh")
