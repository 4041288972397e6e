"""Issue 15 (a): values rendered into slurm.conf, gres.conf, units, fstab, modprobe files and scripts
must be one safe token (plugins/filter/tokens.py). The same rules refuse them in `clusterctl validate`
(tests/bad_inventories, test_validate.py) and in each role's tasks/validate.yml for a plain
ansible-playbook user (here); hostile-but-allowed values render as one directive / one argument."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import jinja2
import pytest
import yaml
from test_slurm_templates import render as render_slurm

from clusterctl import collection
from plugins.filter.tokens import RULES, problems, systemd_quote, token_problems, token_vars

REPO = Path(__file__).resolve().parents[2]
BAD = REPO / "tests" / "bad_inventories"
# the cases of this class, each refused by a role's own input check as well
CASES = ("partition-option-smuggled-words", "partition-option-include", "partition-option-value-shell",
         "lustre-mount-option-subst", "storage-mount-option-subst", "systemd-extra-directive", "path-with-spaces",
         "daemon-options-quote", "gres-extra-include", "extra-config-include", "modprobe-option-words",
         "node-health-exclude-subst", "roce-qos-tool-path-shell")
ROLE_OF_SPEC = {"slurm_partitions": ("slurm_common", "slurm_common_partitions"),
                "storage_mounts": ("juicefs", "juicefs_volumes")}


def _expect(case: str) -> dict[str, str]:
    return dict(ln.split(": ", 1) for ln in (BAD / case / "EXPECT.txt").read_text().splitlines())


def _role_var(case: str) -> tuple[str, str, Any]:
    """(role, role variable, value) that the hostile value of ``case`` reaches."""
    for f in sorted((BAD / case / "group_vars" / "all").glob("*.yml")):
        for key, value in (yaml.safe_load(f.read_text()) or {}).items():
            if key in ROLE_OF_SPEC and problems(key, value):
                return (*ROLE_OF_SPEC[key], value)
            if key in RULES and key not in ROLE_OF_SPEC:
                role = max((r.name for r in (REPO / "roles").iterdir() if key.startswith(f"{r.name}_")), key=len)
                return role, key, value
    raise AssertionError(f"{case}: no hostile value found")


def test_every_rule_names_a_declared_variable() -> None:
    declared: set[str] = {"slurm_partitions", "storage_mounts", "frontend_nics"}  # cluster spec keys
    for spec in (REPO / "roles").glob("*/meta/argument_specs.yml"):
        for entry in yaml.safe_load(spec.read_text())["argument_specs"].values():
            declared |= set(entry.get("options") or {})
    assert set(RULES) <= declared, set(RULES) - declared


@pytest.mark.parametrize("role", ["slurm_common", "slurm_compute", "slurm_controller", "slurm_dbd", "juicefs",
                                  "lustre_client", "node_health", "rdma", "roce_qos", "nvidia_gpu"])
def test_role_checks_its_tokens_first(role: str) -> None:
    assert token_vars(role)
    tasks = yaml.safe_load((REPO / "roles" / role / "tasks" / "validate.yml").read_text())
    first = tasks[0]
    assert "clusterctl.hpc.token_problems" in str(first["vars"]) and f"'{role}' | clusterctl.hpc.token_vars" in \
        str(first["vars"])


def test_role_defaults_pass() -> None:
    for role in ("slurm_common", "slurm_compute", "slurm_controller", "slurm_dbd", "juicefs", "lustre_client",
                 "node_health", "rdma", "roce_qos", "nvidia_gpu"):
        defaults = yaml.safe_load((REPO / "roles" / role / "defaults" / "main.yml").read_text())
        assert token_problems({k: v for k, v in defaults.items() if k in RULES}) == [], role


def test_shipped_inventories_pass() -> None:
    for f in (REPO / "inventories").glob("*/group_vars/*/*.yml"):
        data = yaml.safe_load(f.read_text()) or {}
        if isinstance(data, dict):
            assert token_problems({k: v for k, v in data.items() if k in RULES}) == [], f


def test_plain_ansible_playbook_is_refused_too(tmp_path: Path) -> None:
    """One run, one local host per case: each fails in its role's validate.yml naming key and value."""
    hosts: dict[str, Any] = {}
    tasks = []
    for i, case in enumerate(CASES):
        role, var, value = _role_var(case)
        hosts[f"h{i}"] = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, var: value,
                          "case_role": role}
    for role in sorted({h["case_role"] for h in hosts.values()}):
        tasks.append({"name": f"Input check of {role}",
                      "ansible.builtin.include_tasks": str(REPO / "roles" / role / "tasks" / "validate.yml"),
                      "when": f"case_role == '{role}'"})
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
    (tmp_path / "play.yml").write_text(yaml.safe_dump([{"name": "checks", "hosts": "all", "gather_facts": False,
                                                         "tasks": tasks}]))
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), **collection.ansible_env(),
               ANSIBLE_GATHERING="explicit", ANSIBLE_STDOUT_CALLBACK="default", ANSIBLE_CALLBACK_RESULT_FORMAT="json",
               PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    p = subprocess.run(["ansible-playbook", "-i", str(tmp_path / "hosts.yml"), str(tmp_path / "play.yml")],
                       env=env, capture_output=True, text=True, check=False, cwd=tmp_path)
    assert p.returncode == 2, p.stdout[-3000:] + p.stderr[-2000:]
    for i, case in enumerate(CASES):
        exp = _expect(case)
        role, var, _ = _role_var(case)
        key = exp["key"].replace("slurm_partitions", var).replace("storage_mounts", var)
        failed = re.search(rf"fatal: \[h{i}\]: FAILED! => (.*)", p.stdout)
        assert failed, (case, p.stdout[-3000:])
        assert "one safe token" not in failed.group(1)  # the message, not the task name
        assert f"{key}:" in failed.group(1) and repr(exp["value"]).replace("\\", "\\\\")[1:-1] in \
            failed.group(1).replace('\\"', '"'), (case, failed.group(1))
    assert re.search(r"h\d+\s*:\s*ok=\d+\s+changed=0", p.stdout)


# ---- rendering hostile-but-allowed values -----------------------------------------------------------

ALLOWED = "a,b.c@d:e/f+g_h-i"  # every character of the value alphabet but the letters and digits


def _words(line: str) -> dict[str, str]:
    words = line.split(" ")
    assert all(w.count("=") >= 1 and w.split("=", 1)[0].isalnum() for w in words), line
    keys = [w.split("=", 1)[0] for w in words]
    assert len(keys) == len(set(keys)), f"a key twice: {line}"
    return dict(w.split("=", 1) for w in words)


def test_slurm_conf_partition_with_allowed_values_is_one_directive() -> None:
    parts = [{"name": "a-b_c", "default": True, "nodes": "gpu[001-004],gpu010",
              "options": {"AllowGroups": ALLOWED, "Nodes2": "x[1-2]*"}},
             {"name": "d", "options": f"AllowAccounts={ALLOWED} PriorityTier=10"}]
    assert token_problems({"slurm_common_partitions": parts}) == []
    conf = render_slurm("slurm.conf", slurm_common_partitions=parts,
                        slurm_common_extra_config={"SchedulerParameters": ALLOWED},
                        slurm_common_prolog_dir="/etc/slurm/p+r:o,l@o_g-d.d")
    lines = [ln for ln in conf.splitlines() if ln.startswith("PartitionName=")]
    assert len(lines) == 2
    a, d = _words(lines[0]), _words(lines[1])
    assert a["AllowGroups"] == ALLOWED and a["Default"] == "YES" and a["Nodes"] == "gpu[001-004,010]"
    assert d["AllowAccounts"] == ALLOWED and d["PriorityTier"] == "10" and d["Default"] == "NO"
    assert f"SchedulerParameters={ALLOWED}" in conf.splitlines()
    assert "Prolog=/etc/slurm/p+r:o,l@o_g-d.d/*" in conf.splitlines()


def test_gres_extra_allowed_line_stays_one_line() -> None:
    line = f"NodeName=gpu[001-002] Name=mps Count={ALLOWED}"
    assert token_problems({"slurm_common_gres_extra": [line]}) == []
    gres = render_slurm("gres.conf", slurm_common_gres_extra=[line])
    assert [ln for ln in gres.splitlines() if "Name=mps" in ln] == [line]
    _words(line)


def _juicefs_unit(**vol: Any) -> str:
    from plugins.filter.hostlist import hostlist_compress  # noqa: F401 - the same plugin folder

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(REPO / "roles" / "juicefs" / "templates"),
                             undefined=jinja2.StrictUndefined, trim_blocks=True, keep_trailing_newline=True)
    env.filters["clusterctl.hpc.systemd_quote"] = systemd_quote
    return env.get_template("juicefs.service.j2").render(
        ansible_managed="Ansible managed", __juicefs_vol={"name": "shared", "mountpoint": vol["mountpoint"]},
        __juicefs_envfile="/etc/juicefs/shared.env", __juicefs_bin="/opt/juicefs/venv/bin/juicefs",
        __juicefs_cache_dir=vol["cache_dir"], __juicefs_cache_size=1024, __juicefs_options=vol["options"],
        __juicefs_meta={"public_url": vol["url"]}, juicefs_mount_timeout_s=60)


def _systemd_argv(line: str) -> list[str]:
    """Split a systemd command line (systemd.syntax: double quotes, backslash escapes; %% and $$)."""
    assert "%" not in line.replace("%%", "") and "$" not in line.replace("$$", "")
    return [a.replace("%%", "%").replace("$$", "$") for a in shlex.split(line, posix=True)]


def test_juicefs_unit_allowed_values_are_one_argument_each() -> None:
    vol = {"type": "juicefs", "name": "shared", "mountpoint": "/mnt/s+h:a,r@e_d-1.x",
           "cache_dir": "/nvme/c+a:c,h@e", "options": ["--buffer-size=300", f"--subdir={ALLOWED}"]}
    assert token_problems({"juicefs_volumes": [vol]}) == []
    url = "redis://meta1:6379/1?x=a%20b$HOME"  # a URL may carry % (encoding) and $: quoted for systemd
    unit = _juicefs_unit(**vol, url=url)
    start = [ln for ln in unit.splitlines() if ln.startswith("ExecStart=")]
    assert len(start) == 1 and not any(ln.startswith("ExecStartPre") for ln in unit.splitlines())
    argv = _systemd_argv(start[0].removeprefix("ExecStart="))
    assert argv == ["/opt/juicefs/venv/bin/juicefs", "mount", "--no-usage-report", "--cache-dir", vol["cache_dir"],
                    "--cache-size", "1024", *vol["options"], url, vol["mountpoint"]]
    stop = [ln for ln in unit.splitlines() if ln.startswith("ExecStop=")]
    assert _systemd_argv(stop[0].removeprefix("ExecStop=-")) == ["/opt/juicefs/venv/bin/juicefs", "umount",
                                                                 vol["mountpoint"]]


def test_systemd_quote() -> None:
    assert systemd_quote("/mnt/x") == "/mnt/x"
    assert systemd_quote("a b") == '"a b"'
    assert systemd_quote('a"b\\c') == '"a\\"b\\\\c"'
    assert systemd_quote("50%") == "50%%" and systemd_quote("$X") == "$$X"
    assert systemd_quote("x\nExecStartPre=/bin/evil").count("\n") == 0


def test_lustre_allowed_values_one_modprobe_line_and_one_fstab_field() -> None:
    from test_lustre_render import options_lines, render

    ko = {"peer_credits": 32, "map_on_demand": ALLOWED}
    assert token_problems({"lustre_client_ko2iblnd_options": ko,
                           "lustre_client_mount_options": ["flock", "_netdev", f"x-systemd.requires={ALLOWED[2:]}"]
                           }) == []
    lines = options_lines(render("ko2iblnd.conf.j2", lustre_client_ko2iblnd_options=ko))
    assert lines == [f"options ko2iblnd map_on_demand={ALLOWED} peer_credits=32"]


@pytest.mark.parametrize("kind", sorted(__import__("plugins.filter.tokens", fromlist=["KINDS"]).KINDS))
def test_no_kind_lets_a_metacharacter_through(kind: str) -> None:
    from plugins.filter.tokens import KINDS

    pattern = KINDS[kind][0]
    base = {"path": "/a", "cli_option": "--a=b", "memlock": "1", "size": "1", "lnet_net": "tcp0",
            "nids": "a@tcp", "mount_option": "a=b"}.get(kind, "ab")
    for c in " \t\n\"'$`;|&%\\#<>(){}?!~^\r\x00":
        for text in (base + c, c + base, base[:1] + c + base[1:]):
            assert not pattern.fullmatch(text), (kind, text)


def test_daemon_options_allowed_words_stay_one_assignment() -> None:
    opts = f"-M --conf={ALLOWED} -v"
    assert token_problems({"slurm_compute_options": opts, "slurm_controller_options": opts}) == []
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(REPO / "roles"), undefined=jinja2.StrictUndefined,
                             trim_blocks=True)
    env.filters["bool"] = lambda v: bool(v)
    text = env.get_template("slurm_controller/templates/slurmctld.default.j2").render(
        ansible_managed="Ansible managed", slurm_controller_options=opts)
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    # the file is read by systemd's EnvironmentFile= and by sh: one NAME="..." assignment, no expansion
    assert len(lines) == 1 and shlex.split(lines[0]) == [f"SLURMCTLD_OPTIONS={opts}"]
    assert not re.search(r"[$`\\\"]", lines[0].split("=", 1)[1][1:-1])
