"""A private sshd on 127.0.0.1 for the day-2 bench's SSH path (issue 19).

Its own config, host key, client key and known_hosts in one temporary folder; listens on
127.0.0.1 only, on a free high port; key authentication for the current user (root in CI), no
passwords, no PAM. Every simulated inventory host is an alias of 127.0.0.1:<port> with its own
ControlPath, so each alias gets its own SSH master connection as a real host would (Ansible's
default ControlPath hashes host, port and user, which all aliases share).

Needs ``/usr/sbin/sshd`` (Debian ``openssh-server``; the bench installs nothing itself:
``scripts/bench-ssh-setup.sh`` does, for the bench only, not for every CI run).

    with SshLab(root) as lab:
        lab.host_vars("sim0001")   # -> the inventory variables of one alias
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

SSHD = os.environ.get("CLUSTERCTL_SSHD", "/usr/sbin/sshd")


def available() -> bool:
    return Path(SSHD).is_file() and shutil.which("ssh") is not None and shutil.which("ssh-keygen") is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class SshLab:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = 0
        self.user = getpass.getuser()
        self.proc: subprocess.Popen[bytes] | None = None
        # ControlPath sockets must stay under 108 bytes: a short folder of their own
        self.cp_dir = Path(f"/tmp/ccssh-{os.getpid()}")

    def __enter__(self) -> SshLab:
        self.start()
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    @property
    def key(self) -> Path:
        return self.root / "id_ed25519"

    @property
    def known_hosts(self) -> Path:
        return self.root / "known_hosts"

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o700)
        for name in ("host_ed25519", "id_ed25519"):
            if not (self.root / name).exists():
                subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.root / name)], check=True)
        shutil.copy(self.root / "id_ed25519.pub", self.root / "authorized_keys")
        (self.root / "authorized_keys").chmod(0o600)
        self.port = _free_port()
        host_pub = (self.root / "host_ed25519.pub").read_text().split()[:2]
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {' '.join(host_pub)}\n")
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation folder
        cfg = self.root / "sshd_config"
        cfg.write_text("\n".join([
            f"Port {self.port}", "ListenAddress 127.0.0.1", f"HostKey {self.root / 'host_ed25519'}",
            f"PidFile {self.root / 'sshd.pid'}", f"AuthorizedKeysFile {self.root / 'authorized_keys'}",
            "PermitRootLogin prohibit-password", "PubkeyAuthentication yes", "PasswordAuthentication no",
            "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no", "PrintMotd no",
            # every alias opens its own master; the bench's forks open them at once
            "MaxStartups 256:30:512", "MaxSessions 64", "LogLevel ERROR",
            "Subsystem sftp internal-sftp", "",
        ]))
        subprocess.run([SSHD, "-t", "-f", str(cfg)], check=True)
        with open(self.root / "sshd.log", "ab") as log:
            self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(cfg)], stderr=log)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    break
            time.sleep(0.05)
        else:
            self.stop()
            raise RuntimeError(f"sshd did not listen on 127.0.0.1:{self.port}: {(self.root / 'sshd.log').read_text()}")
        self.cp_dir.mkdir(mode=0o700, exist_ok=True)

    def host_vars(self, alias: str) -> dict[str, str]:
        return {
            "ansible_connection": "ssh", "ansible_host": "127.0.0.1", "ansible_port": str(self.port),
            "ansible_user": self.user, "ansible_ssh_private_key_file": str(self.key),
            "ansible_ssh_common_args": f"-o UserKnownHostsFile={self.known_hosts} -o IdentitiesOnly=yes",
            "ansible_control_path": f"{self.cp_dir}/{alias}",
        }

    def close_masters(self) -> int:
        """End every persisted master connection (each timed run starts without one)."""
        n = 0
        for sock in sorted(self.cp_dir.iterdir()) if self.cp_dir.is_dir() else []:
            subprocess.run(["ssh", "-o", f"ControlPath={sock}", "-O", "exit", "127.0.0.1"],
                           capture_output=True, check=False)
            n += 1
        return n

    def stop(self) -> None:
        self.close_masters()
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self.proc = None
        shutil.rmtree(self.cp_dir, ignore_errors=True)
