"""The shape of the Molecule scenarios (#18, tests in tiers): one Slurm cluster per test run (the lab's),
on which the Slurm cases of molecule/slurm run in turn; converge playbooks import the real site
playbook; idempotence stays on; the roles' package installs run for real on a bare image in one place."""

from __future__ import annotations

from pathlib import Path

import labutil
import yaml

MOLECULE = labutil.REPO / "molecule"
SCENARIOS = sorted(p.parent.name for p in MOLECULE.glob("*/molecule.yml"))


def _conf(scenario: str) -> dict:
    return yaml.safe_load((MOLECULE / scenario / "molecule.yml").read_text())


def _sequence(scenario: str) -> list[str]:
    return _conf(scenario)["scenario"]["test_sequence"]


def test_one_scenario_builds_a_slurm_cluster() -> None:
    assert [s for s in SCENARIOS if labutil.builds_slurm(s)] == ["slurm"]


def test_the_slurm_cases_run_on_the_lab_and_nothing_builds_a_second_cluster() -> None:
    """pytest builds Slurm once (the lab); test_slurm_cases.py runs molecule/slurm's cases there, on the
    settings of molecule.yml (no copy of them), after every other test."""
    import conftest

    assert labutil.SLURM_BUILDS_MAX == 1
    cases = (labutil.REPO / "tests" / "integration" / "test_slurm_cases.py").read_text()
    assert cases.count("(lab_slurm_cases: Path)") == len(labutil.SLURM_CASES)
    assert "molecule(" not in cases and conftest.LAB_LAST == "lab_slurm_cases"


def test_the_lab_cases_inventory_has_the_scenarios_settings(tmp_path: Path) -> None:
    lab, cases = labutil.lab_cases_inventories(tmp_path)
    hosts = yaml.safe_load((lab / "hosts.yml").read_text())["all"]["children"]
    assert list(hosts["slurm_pending"]["hosts"]) == ["lab-c3"]
    assert hosts["slurm_pending"]["hosts"]["lab-c3"]["clusterctl_lab_image"] == "localhost/clusterctl-bare:latest"
    assert sorted(hosts["storage_clients"]["hosts"]) == sorted(hosts["slurm_compute"]["hosts"])
    got = yaml.safe_load((cases / "group_vars" / "all" / "slurm_cases.yml").read_text())
    want = _conf("slurm")["provisioner"]["inventory"]["group_vars"]["all"]
    assert set(want) - set(got) == {"cluster_name", "slurm_partitions", "slurm_common_proctrack_type",
                                    "slurm_common_task_plugin", "slurm_common_mem_reserve_mb"}
    for key in ("slurm_dbd_enabled", "cc_slurm_nccl_conf", "juicefs_meta_probe_timeout_s", "vault_cc_stor_metaurl"):
        assert got[key] == want[key], key
    assert got["storage_mounts"][0]["bucket"] == "/srv/juicefs-bucket/"
    assert not (lab / "group_vars" / "all" / "slurm_cases.yml").exists()
    # lab/ passes clusterctl's checks, and `clusterctl lab up -i` starts lab-c3 on the bare image
    from clusterctl import lab as clab
    from clusterctl.inventory import load_checked

    images = {h.name: h.image for h in clab.lab_hosts(load_checked(lab))}
    lab_image = "localhost/clusterctl-lab:latest"  # group all's, in inventories/lab
    assert images == {"lab-ctl": lab_image, "lab-c1": lab_image, "lab-c2": lab_image,
                      "lab-c3": "localhost/clusterctl-bare:latest"}


def test_the_cases_of_the_shared_cluster_match_its_test_sequence() -> None:
    """pytest runs labutil.SLURM_CASES on the session cluster; `molecule test -s slurm` runs the
    test_sequence: the same playbooks in the same order, each of them present."""
    seq = _sequence("slurm")
    steps = [tuple(s.split(" ", 1)) for s in seq if " " in s]
    want = [(step, str(Path("..", pb)) if not pb.startswith("slurm/") else pb.removeprefix("slurm/"))
            for case in labutil.SLURM_CASES.values() for step, pb in case]
    assert steps == want
    for _, pb in want:
        assert (MOLECULE / "slurm" / pb).is_file(), pb
    assert list(labutil.SLURM_CASES) == ["slurm", "slurm_scaleout", "storage"]  # storage stops Redis: last


def test_idempotence_follows_converge_everywhere() -> None:
    for s in SCENARIOS:
        seq = _sequence(s)
        assert "converge" in seq and seq[seq.index("converge") + 1] == "idempotence", s


#: site.yml's opt-in switch of the monitoring role (roles/monitoring/README.md)
OFF_BY_DEFAULT = "monitoring_enabled | default(false) | bool"


def _site_roles_running(skipped: set[str]) -> set[str]:
    """The roles of playbooks/site.yml that run when ``skipped`` tags are skipped (a role runs unless
    one of its play's or its own tags is skipped); a role behind an inventory switch that is off by
    default (``monitoring_enabled``, which no scenario sets) does not run."""
    site = yaml.safe_load((labutil.REPO / "playbooks" / "site.yml").read_text())
    running = set()
    for play in site:
        entries = [(r["role"], r.get("tags", [])) for r in play.get("roles", [])
                   if r.get("when") != OFF_BY_DEFAULT]
        entries += [(t["ansible.builtin.include_role"]["name"], t.get("tags", [])) for t in play.get("tasks", [])
                    if "ansible.builtin.include_role" in t]
        for role, tags in entries:
            if not (set(play.get("tags", [])) | set(tags)) & skipped:
                running.add(role.rsplit(".", 1)[1])
    return running

# Every scenario's converge is the site playbook now (none applies its roles directly).
NOT_YET_SITE: set[str] = set()


def test_converge_imports_the_site_playbook_with_tags() -> None:
    """No scenario copies plays from site.yml: each converge is the site playbook itself, narrowed by
    ANSIBLE_SKIP_TAGS (the components not under test), so that exactly the roles under test run."""
    under_test = {"rdma": {"rdma"}, "roce_qos": {"roce_qos"}, "nccl": {"nccl"}, "lustre": {"lustre_client"},
                  "nvidia_gpu": {"nvidia_gpu", "gpu_tools"}}
    for s in SCENARIOS:
        if s in NOT_YET_SITE:
            continue
        plays = yaml.safe_load((MOLECULE / s / "converge.yml").read_text())
        assert plays == [{"name": "Site playbook", "ansible.builtin.import_playbook": "clusterctl.hpc.site"}], s
        env = _conf(s)["provisioner"]["env"]
        # ANSIBLE_RUN_TAGS would apply to prepare/verify/side-effect playbooks too and skip their
        # untagged tasks (a verify that checks nothing): scenarios narrow the site playbook by skipping
        assert "ANSIBLE_RUN_TAGS" not in env, (s, env)
        skipped = set(env["ANSIBLE_SKIP_TAGS"].split(","))
        if s == "slurm":
            assert skipped == {"fabric", "health"}, env
        else:
            assert _site_roles_running(skipped) == under_test[s], (s, env)
    site = yaml.safe_load((labutil.REPO / "playbooks" / "site.yml").read_text())
    role_tags = {r["role"].rsplit(".", 1)[1]: r.get("tags", []) for play in site for r in play.get("roles", [])}
    assert "rdma" in role_tags["rdma"] and "roce" in role_tags["roce_qos"] and "nccl" in role_tags["nccl"]
    assert "lustre" in role_tags["lustre_client"]


def test_the_shared_cluster_has_a_bare_node_for_the_real_package_installs() -> None:
    platforms = {p["name"]: p for p in _conf("slurm")["platforms"]}
    bare = [n for n, p in platforms.items() if p["image"] == "localhost/clusterctl-bare:latest"]
    assert bare == ["cc-slurm-c3"]
    assert platforms["cc-slurm-c3"]["groups"] == ["slurm_pending"]  # joins in the scale-out case
    assert "--bare" in (labutil.REPO / "scripts" / "setup.sh").read_text()
