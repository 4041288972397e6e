"""A lab container's boot, on real podman: systemd that never comes up is restarted once and then
reported with the container's state and last lines; a container stopped while booting is started again and
comes up; a stale container (podman's record says it runs, its process is gone: conmon died, or the machine was
restored from a snapshot taken while the lab ran, which cost CI every lab test twice) is removed, not waited on."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator

import pytest

from clusterctl import lab

pytestmark = [
    pytest.mark.lab,
    pytest.mark.skipif(shutil.which("podman") is None, reason="podman not installed (scripts/setup.sh installs it)"),
]

NAME = "clusterctl-boottest"


@pytest.fixture
def image() -> Iterator[str]:
    lab.build_image(lab.DEFAULT_IMAGE)
    subprocess.run(["podman", "rm", "-f", "-t", "0", NAME], capture_output=True, check=False)
    yield lab.DEFAULT_IMAGE
    subprocess.run(["podman", "rm", "-f", "-t", "0", NAME], capture_output=True, check=False)


def test_a_container_whose_init_exits_is_reported_with_its_state_and_lines(image: str) -> None:
    # PID 1 prints a line and exits 3: no systemd ever answers
    subprocess.run(["podman", "run", "-d", "--name", NAME, "--network", "none", image,
                    "sh", "-c", "echo init-gave-up; exit 3"], capture_output=True, check=True)
    t0 = time.monotonic()
    with pytest.raises(lab.LabError) as err:
        lab._wait_systemd(NAME, timeout=60)
    msg = str(err.value)
    assert time.monotonic() - t0 < 30, "a stopped container is seen at once, not after the timeout"
    assert "twice" in msg and "exited (exit 3)" in msg and "init-gave-up" in msg, msg


def test_a_container_stopped_while_booting_is_started_again(image: str) -> None:
    subprocess.run(["podman", "run", "-d", "--name", NAME, "--network", "none", "--systemd", "always", image,
                    "/sbin/init"], capture_output=True, check=True)
    subprocess.run(["podman", "stop", "-t", "0", NAME], capture_output=True, check=True)
    lab._wait_systemd(NAME, timeout=60)
    state = subprocess.run(["podman", "exec", NAME, "systemctl", "is-system-running"], capture_output=True,
                           text=True, check=False).stdout.strip()
    assert state in ("running", "degraded")


def test_a_stale_container_is_seen_and_removed(image: str) -> None:
    # kill the container's conmon and its process behind podman's back: podman's record still says 'running'
    subprocess.run(["podman", "run", "-d", "--name", NAME, "--network", "none", image, "sleep", "infinity"],
                   capture_output=True, check=True)
    pids = subprocess.run(["podman", "inspect", NAME, "--format", "{{.State.ConmonPid}} {{.State.Pid}}"],
                          capture_output=True, text=True, check=True).stdout.split()
    assert not lab._stale(NAME)
    subprocess.run(["kill", "-9", *pids], check=True)
    time.sleep(1)
    assert lab._stale(NAME)
    lab._remove(NAME)
    assert subprocess.run(["podman", "container", "exists", NAME], check=False).returncode != 0
