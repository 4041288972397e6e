"""Single-token rules for every inventory or role value that is written into a configuration file,
a systemd unit, an fstab line or a shell script, and the quoting filter for systemd command lines.

The rules are declared once, here, per variable (``RULES``) and per kind of value (``KINDS``); they
are enforced twice from this one table: by ``clusterctl validate`` (``clusterctl.inventory.tokens``,
before anything runs) and by each role's ``tasks/validate.yml`` through the filters below, so a
plain ``ansible-playbook`` run is refused the same way::

    - ansible.builtin.assert:
        that: __x_problems | length == 0
        fail_msg: "{{ __x_problems | join('; ') }}"
      vars:
        __x_names: "{{ 'slurm_common' | clusterctl.hpc.token_vars
                       | intersect(query('ansible.builtin.varnames', '^slurm_common_')) }}"
        __x_problems: "{{ dict(__x_names | zip(query('ansible.builtin.vars', *__x_names)))
                          | clusterctl.hpc.token_problems }}"

A value is one token of a safe alphabet (no white space, quote, ``$``, backquote, ``;``, ``|``,
``&``, ``%``, ``\\``, ``#`` or control character), so it cannot end a directive, start another one or
expand in the target format; where a format has words (a Slurm ``Key=Value`` line, daemon
arguments) every word is such a token and keys the template writes itself cannot be smuggled in.
Templated values (``{{ ... }}``) are left to the role's run-time check of the rendered value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_SAFE = r"A-Za-z0-9_@+:,./"  # and '-', always last in a class (see _cls)
_SHOWN = "_@+:,./-"


def _cls(extra: str = "") -> str:
    """The safe character class plus ``extra`` (escaped as needed), '-' last so it is no range."""
    return f"[{_SAFE}{extra}-]"


KINDS: dict[str, tuple[re.Pattern[str], str]] = {
    "word": (re.compile(_cls() + "{1,256}"), f"one word of letters, digits and {_SHOWN}"),
    "name": (re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,62}"), "a name: letters, digits, '_', '-', a letter first"),
    "slurm_name": (re.compile(r"[a-z][a-z0-9_-]{0,39}"), "lower-case letters, digits, '-', '_', a letter first"),
    "host": (re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?"), "one host name or address"),
    "hostlist": (re.compile(r"[A-Za-z0-9_.,\[\]-]{1,4096}"), "a Slurm hostlist such as gpu[001-016],login01"),
    "path": (re.compile(r"/(?:[A-Za-z0-9_@+:,.-]+/?)*"),
             "an absolute path of letters, digits and _@+:,.- (no spaces, quotes, '..' or '.' parts)"),
    "memlock": (re.compile(r"infinity|[0-9]{1,20}[KMGTPE]?"), "infinity or a size such as 64G"),
    "size": (re.compile(r"[0-9]{1,20}[KMG]?"), "a size such as 1G"),
    "slurm_key": (re.compile(r"[A-Z][A-Za-z0-9]{0,63}"), "a Slurm option name such as OverSubscribe"),
    "slurm_value": (re.compile(_cls(r"\[\]*") + "{1,1024}"), f"one word of letters, digits and {_SHOWN}[]*"),
    "modprobe_key": (re.compile(r"[a-z][a-z0-9_]{0,63}"), "a module parameter name"),
    "mount_option": (re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}(?:=[A-Za-z0-9_@+:./-]{1,256})?"),
                     "one mount option name[=value] of letters, digits and _@+:./-"),
    "cli_option": (re.compile(r"--?[A-Za-z0-9][A-Za-z0-9-]{0,63}(?:=[A-Za-z0-9_@+:,./-]{1,256})?"),
                   "one command-line option --name[=value] of letters, digits and _@+:,./-"),
    "lnet_net": (re.compile(r"(?:o2ib|tcp|gni|kfi|ptl4)[0-9]{0,4}"), "an LNet net such as o2ib0 or tcp0"),
    "ifname": (re.compile(r"[A-Za-z0-9_.:-]{1,15}"), "an interface name"),
    "nids": (re.compile(r"[A-Za-z0-9_.-]+@[a-z0-9]+(?:[,:][A-Za-z0-9_.-]+@[a-z0-9]+)*"), "MGS NIDs (10.0.0.1@o2ib)"),
    "fsname": (re.compile(r"[A-Za-z0-9_-]{1,8}"), "a Lustre fsname (1-8 of letters, digits, '_', '-')"),
    "module": (re.compile(r"[A-Za-z0-9_-]{1,64}"), "a kernel module name"),
    "cidr": (re.compile(r"[0-9A-Fa-f.:]{2,45}/[0-9]{1,3}"), "an address/prefix such as 10.0.0.1/24"),
    "unit": (re.compile(r"[A-Za-z0-9_.:@-]{1,200}[.](?:service|mount|timer|target)"),
             "a systemd unit name such as x.service"),
    "juicefs_name": (re.compile(r"[a-z0-9][a-z0-9-]{1,61}[a-z0-9]"), "3-63 of a-z, 0-9 and '-'"),
}
# Keys of a PartitionName line that the template writes itself: options must not set them again.
PARTITION_OWN = ("PartitionName", "Nodes", "Default", "MaxTime", "State")
# Keys of slurm.conf that would read or run something else.
SLURM_NEVER = ("Include",)

Finding = tuple[str, Any, str]
Rule = str | tuple[Any, ...] | Callable[[str, Any], list[Finding]]


def _slurm_words(own: tuple[str, ...]) -> Callable[[str, Any], list[tuple[str, Any, str]]]:
    """Space-separated ``Key=Value`` words, or a mapping Key -> value, none of them a key in ``own``."""

    def check(path: str, v: Any) -> list[tuple[str, Any, str]]:
        if isinstance(v, dict):
            pairs = [(str(k), x, f"{path}.{k}") for k, x in v.items()]
        elif isinstance(v, str):
            words = v.split(" ")
            if any(w == "" or "=" not in w for w in words):
                return [(path, v, "must be Key=Value words separated by single spaces (a word without '=' "
                                  "would be a directive of its own)")]
            pairs = [(w.split("=", 1)[0], w.split("=", 1)[1], path) for w in words]
        else:
            return [(path, v, "must be a mapping of Slurm option to value or Key=Value words")]
        out: list[tuple[str, Any, str]] = []
        seen: set[str] = set()
        refused = {k.lower() for k in (*own, *SLURM_NEVER)}
        for key, value, where in pairs:
            if not KINDS["slurm_key"][0].fullmatch(key):
                out.append((where, key, f"option name must be {KINDS['slurm_key'][1]}"))
            elif key.lower() in refused or key.lower() in seen:  # Slurm reads keys case-insensitively
                out.append((where, f"{key}={value}", f"{key} cannot be set here (the template writes it, "
                                                     "it reads another file, or it would be set twice)"))
            elif isinstance(value, bool) or not isinstance(value, str | int) or \
                    not KINDS["slurm_value"][0].fullmatch(str(value)):
                out.append((where, value, f"value of {key} must be {KINDS['slurm_value'][1]}"))
            seen.add(key.lower())
        return out

    return check


def _daemon_args(path: str, v: Any) -> list[tuple[str, Any, str]]:
    """Daemon arguments in a double-quoted /etc/default line: words of the safe alphabet (and '=')."""
    if v == "":
        return []
    if not isinstance(v, str) or not all(re.fullmatch(_cls("=") + "{1,256}", w) for w in v.split(" ")):
        return [(path, v, f"must be words of letters, digits and {_SHOWN}= separated by single spaces "
                          "(no quotes, $, backquote or backslash: it is one double-quoted line)")]
    return []


def _either(*kinds: str) -> Callable[[str, Any], list[tuple[str, Any, str]]]:
    def check(path: str, v: Any) -> list[tuple[str, Any, str]]:
        if isinstance(v, str) and any(KINDS[k][0].fullmatch(v) for k in kinds):
            return []
        return [(path, v, "must be " + " or ".join(KINDS[k][1] for k in kinds))]

    return check


def _hostlist(path: str, v: Any) -> list[tuple[str, Any, str]]:
    if isinstance(v, list):
        return [p for i, x in enumerate(v) for p in _check(f"{path}[{i}]", x, "host")]
    return _check(path, v, "hostlist")


PARTITION = ("keys", {"name": "slurm_name", "nodes": _hostlist, "max_time": "word",
                      "options": _slurm_words(PARTITION_OWN)})
MOUNT = ("keys", {"name": "name", "mountpoint": "path", "cache_dir": "path", "mgs": "nids", "fsname": "fsname",
                  "options": ("list", _either("mount_option", "cli_option")),
                  "format_options": ("list", "cli_option"), "storage": "word"})
JUICEFS_VOLUME = ("keys", {**MOUNT[1], "name": "juicefs_name", "options": ("list", "cli_option")})
LUSTRE_MOUNT = ("keys", {**MOUNT[1], "options": ("list", "mount_option")})


def _storage_mount(path: str, v: Any) -> list[Finding]:
    """A storage_mounts entry: the rules of the role its type sends it to (juicefs or lustre_client)."""
    kind = v.get("type") if isinstance(v, dict) else None
    return _check(path, v, JUICEFS_VOLUME if kind == "juicefs" else LUSTRE_MOUNT if kind == "lustre" else MOUNT)


RULES: dict[str, Rule] = {
    # cluster spec keys that roles render
    "slurm_partitions": ("list", PARTITION),
    "storage_mounts": ("list", _storage_mount),
    "frontend_nics": ("list", "ifname"),  # node_health's sourced node-check.conf, nccl.conf, roce_qos's script
    # slurm_common: slurm.conf, gres.conf, cgroup.conf, scripts
    "slurm_common_partitions": ("list", PARTITION),
    "slurm_common_cluster_name": "slurm_name",
    "slurm_common_topology": ("keys", {"switches": ("list", ("keys", {"name": "host", "nodes": _hostlist,
                                                                      "switches": _hostlist}))}),
    "slurm_common_slurm_user": "name",
    "slurm_common_state_save_location": "path",
    "slurm_common_slurmd_spool_dir": "path",
    "slurm_common_log_dir": "path",
    "slurm_common_proctrack_type": "word",
    "slurm_common_task_plugin": "word",
    "slurm_common_select_type": "word",
    "slurm_common_select_type_parameters": "word",
    "slurm_common_mpi_default": "word",
    "slurm_common_jobacct_gather_type": "word",
    "slurm_common_auth_type": "word",
    "slurm_common_cgroup_plugin": "word",
    "slurm_common_node_features": ("list", "word"),
    "slurm_common_gpu_type": "word?",
    "slurm_common_gres_extra": ("list", _slurm_words(SLURM_NEVER)),
    "slurm_common_propagate_resource_limits_except": ("list", "word"),
    "slurm_common_health_check_program": "path?",
    "slurm_common_health_check_wrapper": "path",
    "slurm_common_health_check_node_state": "word",
    "slurm_common_prolog_dir": "path",
    "slurm_common_epilog_dir": "path",
    "slurm_common_prolog_flags": "word",
    "slurm_common_task_prolog": "path",
    "slurm_common_reboot_program": "path?",
    "slurm_common_nccl_conf": "path",
    "slurm_common_accounting_host": "host?",
    "slurm_common_extra_config": _slurm_words(SLURM_NEVER),
    # slurm_compute / slurm_controller: /etc/default files, the slurmd drop-in
    "slurm_compute_options": _daemon_args,
    "slurm_compute_memlock_limit": "memlock?",
    "slurm_controller_options": _daemon_args,
    "slurm_controller_remediate_clusterctl": "path",
    "slurm_controller_remediate_inventory": "path",
    # slurm_dbd: slurmdbd.conf, the MariaDB drop-in
    "slurm_dbd_db_name": "name",
    "slurm_dbd_db_user": "name",
    "slurm_dbd_log_file": "path",
    "slurm_dbd_purge_job_after": "word?",
    "slurm_dbd_purge_step_after": "word?",
    "slurm_dbd_innodb_buffer_pool_size": "size",
    "slurm_dbd_innodb_log_file_size": "size",
    # monitoring: /etc/default files of the exporters and Prometheus, prometheus.yml (issue 26)
    "monitoring_node_exporter_listen_address": "host?",
    "monitoring_textfile_dir": "path",
    "monitoring_web_config_file": "path?",
    "monitoring_prometheus_listen_address": "host?",
    "monitoring_prometheus_retention": "word",
    "monitoring_scrape_interval": "word",
    "monitoring_scrape_groups": ("list", "name"),
    "monitoring_node_exporter_sysfs": "path?",
    "monitoring_slurm_textfile_interval": "word",
    "monitoring_tls_cert_file": "path?",
    "monitoring_tls_key_file": "path?",
    "monitoring_tls_ca_file": "path?",
    "monitoring_scrape_user": "name?",
    "monitoring_basic_auth_users": ("list", ("keys", {"name": "name"})),
    # juicefs: the mount units
    "juicefs_volumes": ("list", JUICEFS_VOLUME),
    "juicefs_mount_options": ("list", "cli_option"),
    "juicefs_cache_dir": "path",
    "juicefs_env_dir": "path",
    "juicefs_pypi_venv": "path",
    "juicefs_url_install_dir": "path",
    "juicefs_package_binary": "path",
    # lustre_client: modprobe files and fstab
    "lustre_client_lnet_networks": ("list", ("keys", {"net": "lnet_net", "interfaces": ("list", "ifname")})),
    "lustre_client_lnet_options": ("map", "modprobe_key", "word"),
    "lustre_client_ko2iblnd_options": ("map", "modprobe_key", "word"),
    "lustre_client_mounts": ("list", LUSTRE_MOUNT),
    "lustre_client_mount_options": ("list", "mount_option"),
    # node_health: node-check.json and the program (a shell wrapper)
    "node_health_program_path": "path",
    "node_health_sysfs_root": "path",
    "node_health_exclude_devices": ("list", "ifname"),
    "node_health_bundle_path": "path",
    "node_health_config_path": "path",
    "node_health_state_dir": "path",
    "node_health_textfile_dir": "path?",
    "node_health_mounts": ("list", "path"),
    "node_health_prolog_dir": "path",
    "node_health_preflight_partitions": ("list", "slurm_name"),
    "node_health_tool_dirs": ("list", "path"),
    # rdma: modules-load.d, systemd-networkd .network files
    "rdma_kernel_modules": ("list", "module"),
    "rdma_gpu_modules": ("list", "module"),
    "rdma_ipoib_interfaces": ("list", ("keys", {"name": "ifname", "address": "cidr"})),
    "rdma_modules_load_file": "path",
    "rdma_networkd_dir": "path",
    "rdma_sysfs_root": "path",
    # roce_qos: the apply script (shell) and its unit
    "roce_qos_interfaces": ("list", ("keys", {"interface": "ifname"})),
    "roce_qos_frontend_nics": ("list", "ifname"),
    "roce_qos_mlnx_qos_path": "path?",
    "roce_qos_dcb_path": "path?",
    "roce_qos_sysfs_root": "path",
    "roce_qos_configfs_root": "path?",
    "roce_qos_apply_script": "path",
    "roce_qos_unit_name": "unit",
    # nvidia_gpu: the RebootProgram script and its slurm.conf line
    "nvidia_gpu_reboot_program": "path",
    "nvidia_gpu_sysfs_root": "path",
}


def _templated(v: Any) -> bool:
    return isinstance(v, str) and ("{{" in v or "{%" in v)


def _check(path: str, v: Any, rule: Rule) -> list[tuple[str, Any, str]]:
    """(key path, value, message) for each value of ``v`` that breaks ``rule``."""
    if v is None or _templated(v) or type(v).__name__ == "VaultValue":
        return []
    if callable(rule):
        return rule(path, v)
    if isinstance(rule, str):
        kind, optional = rule.rstrip("?"), rule.endswith("?")
        if optional and v == "":
            return []
        if isinstance(v, bool) or not isinstance(v, str | int):
            return [(path, v, f"must be {KINDS[kind][1]}")]
        text = str(v)
        if not KINDS[kind][0].fullmatch(text) or (kind == "path" and any(p in (".", "..") for p in text.split("/"))):
            return [(path, v, f"must be {KINDS[kind][1]} (it is written into a configuration file, unit or "
                              "script as one token)")]
        return []
    what = rule[0]
    out: list[tuple[str, Any, str]] = []
    if what == "list" and isinstance(v, list):
        for i, x in enumerate(v):
            out += _check(f"{path}[{i}]", x, rule[1])
    elif what == "keys" and isinstance(v, dict):
        for k, sub in rule[1].items():
            if k in v:
                out += _check(f"{path}.{k}", v[k], sub)
    elif what == "map" and isinstance(v, dict):
        for k, x in v.items():
            out += _check(f"{path}.{k}", k, rule[1])
            out += _check(f"{path}.{k}", x, rule[2])
    return out  # other shapes are the argument specs' to refuse


def problems(key: str, value: Any, shown: str | None = None) -> list[tuple[str, Any, str]]:
    """Problems of variable ``key`` (shown as ``shown``): (key path, offending value, message)."""
    rule = RULES.get(key)
    return [] if rule is None else _check(shown or key, value, rule)


def token_vars(role: str) -> list[str]:
    """The variables of ``role`` that have a token rule."""
    return sorted(k for k in RULES if k.startswith(f"{role}_"))


def token_problems(values: dict[str, Any]) -> list[str]:
    """``KEY: message (value: 'x')`` for each value of ``values`` (name -> value) that breaks its rule."""
    return [f"{p}: {msg} (value: {v!r})" for name, value in sorted(values.items())
            for p, v, msg in problems(name, value)]


#: mountpoints that are the system's own (issue 28 class 6): refused, and so is anything under SYSTEM_TREES
SYSTEM_TREES = ("/proc", "/sys", "/dev", "/boot", "/etc", "/run", "/usr")
SYSTEM_PATHS = frozenset({*SYSTEM_TREES, "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/var", "/var/lib", "/var/log",
                          "/tmp", "/root", "/home", "/opt", "/srv", "/mnt", "/media", "/snap"})


def mountpoint_problem(mp: str) -> str | None:
    """Why ``mp`` (a plain absolute path, no trailing slash) cannot be a mountpoint; None when it can."""
    if mp in SYSTEM_PATHS or any(mp.startswith(t + "/") for t in SYSTEM_TREES):
        return "a system path: mount below a folder of your own (e.g. /mnt/data, /shared)"
    return None


def _mountpoint(m: Any) -> Any:
    mp = m.get("mountpoint") if isinstance(m, dict) else None
    return (mp.rstrip("/") or "/") if isinstance(mp, str) else mp  # /data/ is /data


def mount_problems(mounts: Any, key: str, others: Any = ()) -> list[str]:
    """``KEY[i].mountpoint: message (value: 'x')`` for each mount of ``mounts`` (a role's list) on a
    system path, on a mountpoint already taken (``/data/`` is ``/data``) or with a name already taken
    (one unit file per name), in the list itself or by ``others`` (the host's other mounts, those of
    another role). Other shapes are left to the role's own checks."""
    if not isinstance(mounts, list):
        return []
    taken = {(k, _mountpoint(m) if k == "mountpoint" else m.get(k)) for m in (others or ()) if isinstance(m, dict)
             for k in ("mountpoint", "name")}
    out: list[str] = []
    for i, m in enumerate(mounts):
        if not isinstance(m, dict):
            continue
        mp = _mountpoint(m)
        if isinstance(mp, str) and mp.startswith("/") and mountpoint_problem(mp):
            out.append(f"{key}[{i}].mountpoint: {mountpoint_problem(mp)} (value: {m.get('mountpoint')!r})")
        elif ("mountpoint", mp) in taken:
            out.append(f"{key}[{i}].mountpoint: two mounts on the same mountpoint (value: {m.get('mountpoint')!r})")
        if ("name", m.get("name")) in taken:
            out.append(f"{key}[{i}].name: two mounts with one name (one unit file each) (value: {m.get('name')!r})")
        taken |= {("mountpoint", mp), ("name", m.get("name"))}
    return out


def systemd_quote(value: Any) -> str:
    """One argument of a systemd ``ExecStart=`` line (systemd.syntax / systemd.service quoting):
    bare when it is a safe token, else double-quoted with '\\' and '"' escaped; '%' (a specifier)
    is always doubled and '$' (a variable) always written '$$'."""
    text = str(value).replace("%", "%%").replace("$", "$$")
    if re.fullmatch(_cls("=%$") + "+", text):
        return text
    text = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{text}"'


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {"token_vars": token_vars, "token_problems": token_problems, "systemd_quote": systemd_quote,
                "mount_problems": mount_problems}
