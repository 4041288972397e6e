"""Issue 28: `reconfigure --component nccl` rendered /etc/nccl.conf without NCCL_SOCKET_IFNAME.

The tagged run (`--tags nccl`) gathered no facts: ansible-core tags a play's fact gathering with the
play's own tags, and the fabric play was tagged `fabric`; and ansible-runner pointed the fact cache
at each run's artifacts, so no earlier run's facts were there either. Real runs of the collection's
own site.yml (local connection, the NCCL files redirected into tmp_path) through clusterctl's runner:
the tagged run writes what a run with facts writes, and the fact cache lands in the state folder.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from clusterctl import paths
from clusterctl.runner import run_playbook, state_dir

pytestmark = pytest.mark.skipif(shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) is None,
                                reason="ansible-playbook is not installed next to this python")

#: what `provision` runs for this role: the role in a play that gathers facts
FULL_PLAY = """---
- name: The nccl role with facts gathered, as in an untagged provision
  hosts: slurm_compute
  gather_facts: true
  roles:
    - role: clusterctl.hpc.nccl
"""


def _inventory(tmp_path: Path, out: Path) -> Path:
    inv = tmp_path / "inv"
    inv.mkdir()
    (inv / "hosts.yml").write_text(
        "all:\n  children:\n    slurm_compute:\n      hosts:\n        n1:\n"
        f"          ansible_connection: local\n          ansible_python_interpreter: {sys.executable}\n"
        "          ansible_become: false\n          fabric: ethernet\n"
        f"          nccl_conf_path: {out}/nccl.conf\n          nccl_profile_path: {out}/nccl.sh\n")
    return inv


def test_tagged_nccl_run_gathers_facts_and_renders_what_provision_renders(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    tagged, full = tmp_path / "tagged", tmp_path / "full"
    tagged.mkdir()
    full.mkdir()
    inv = _inventory(tmp_path, tagged)
    res = run_playbook("site.yml", inv, tags="nccl", label="reconfigure-nccl")  # as reconfigure --component nccl
    assert res.rc == 0 and not res.problem_hosts, res.failed_hosts
    # the per-inventory fact cache the README promises (jsonfile; ansible-core 2.19 names it s1_<host>)
    cache = [p for p in (state_dir(inv) / "facts").glob("*n1") if p.name in ("n1", "s1_n1")]
    assert cache, sorted(p.name for p in state_dir(inv).iterdir())
    facts = json.loads(cache[0].read_text())
    facts = json.loads(facts["__payload__"]) if "__payload__" in facts else facts
    iface = facts.get("ansible_default_ipv4", {}).get("interface")
    if not iface:
        pytest.skip("this machine has no default IPv4 route: nothing for NCCL_SOCKET_IFNAME to come from")
    conf = (tagged / "nccl.conf").read_text()
    assert f"NCCL_SOCKET_IFNAME={iface}\n" in conf

    shutil.rmtree(state_dir(inv) / "facts")  # the comparison run gathers for itself
    (inv / "hosts.yml").write_text((inv / "hosts.yml").read_text().replace(str(tagged), str(full)))
    pb = tmp_path / "full.yml"
    pb.write_text(FULL_PLAY)
    res = run_playbook(str(pb), inv, label="provision-nccl")
    assert res.rc == 0 and not res.problem_hosts, res.failed_hosts
    for name in ("nccl.conf", "nccl.sh"):  # byte for byte, but for the file's own path in its header
        assert (tagged / name).read_text() == (full / name).read_text().replace(str(full), str(tagged)), name


def test_fabric_play_fact_gathering_is_not_filtered_by_a_component_tag() -> None:
    """ansible-core's own rule (PlayIterator): a play's fact gathering is tagged `always` only when
    the play has no tags; every play whose roles a component tag selects must gather under it."""
    import yaml

    from clusterctl.rollout import COMPONENTS

    plays = yaml.safe_load((paths.playbooks() / "site.yml").read_text())
    for play in plays:
        role_tags = {t for r in play.get("roles", []) if isinstance(r, dict) for t in r.get("tags", [])}
        selected = {c.tags for c in COMPONENTS.values()} & (role_tags | set(play.get("tags", [])))
        if not selected or play.get("gather_facts") is False:
            continue
        play_tags = set(play.get("tags", []))
        assert not play_tags or selected <= play_tags, (play["name"], selected, play_tags)


def test_plan_of_a_component_right_after_provision_shows_no_diff(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What `reconfigure --component nccl` runs first (and `plan --tags nccl`): site.yml with the component's
    tag in check mode with diffs. Right after what provision writes, and with no fact cache, it plans
    nothing (the tagged run that gathered no facts showed NCCL_SOCKET_IFNAME removed)."""
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    out = tmp_path / "out"
    out.mkdir()
    inv = _inventory(tmp_path, out)
    pb = tmp_path / "full.yml"
    pb.write_text(FULL_PLAY)
    res = run_playbook(str(pb), inv, label="provision-nccl")
    assert res.rc == 0 and not res.problem_hosts, res.failed_hosts
    conf = (out / "nccl.conf").read_text()
    if "NCCL_SOCKET_IFNAME=" not in conf:
        pytest.skip("this machine has no default IPv4 route: nothing for NCCL_SOCKET_IFNAME to come from")
    shutil.rmtree(state_dir(inv) / "facts", ignore_errors=True)
    plan = run_playbook("site.yml", inv, tags="nccl", check=True, diff=True, label="plan-nccl")
    assert plan.rc == 0 and not plan.problem_hosts, plan.failed_hosts
    assert not plan.changes, plan.diffs
    # and a real change shows in the plan with its diff (the NCCL files are one loop task)
    hosts = inv / "hosts.yml"
    line = "fabric: ethernet\n"
    hosts.write_text(hosts.read_text().replace(line, line + " " * 10 + "nccl_socket_ifname: lo\n"))
    plan = run_playbook("site.yml", inv, tags="nccl", check=True, diff=True, label="plan-nccl")
    assert plan.rc == 0 and plan.changes == {"n1": ["Write the NCCL configuration and login environment"]}
    (_task, text), = plan.diffs["n1"]
    assert "+NCCL_SOCKET_IFNAME=lo" in text.splitlines() and (out / "nccl.conf").read_text() == conf, text
