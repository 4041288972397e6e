#!/usr/bin/python
"""Ansible module roce_qos: apply and read back RoCE v2 QoS on one interface."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: roce_qos
short_description: Apply and read back RoCE v2 QoS (trust DSCP, PFC, ECN, RoCE ToS, MTU) on one interface
description:
  - Per RoCE netdev, sets and then reads back
    trust DSCP and the mapping of O(dscp) to O(pfc_priority);
    PFC enabled on O(pfc_priority) only;
    ECN for RoCE (C(ecn/roce_np/enable/<prio>) and C(ecn/roce_rp/enable/<prio>) in sysfs) on that priority;
    the default RoCE ToS of rdma_cm (configfs C(rdma_cm/<dev>/ports/<port>/default_roce_tos));
    the device traffic class (C(class/infiniband/<dev>/tc/<port>/traffic_class), MLNX OFED);
    and the netdev MTU (C(class/net/<if>/mtu)).
  - Backends for trust/PFC are C(mlnx_qos) where present (output parsed by
    C(ccparse.mlnx_qos), the collection's module_utils) and the upstream iproute2 C(dcb) otherwise (JSON parsed by
    C(ccparse.dcb)); with C(dcb), trust DSCP is the DSCP APP entry O(dscp):O(pfc_priority).
  - Reports C(changed) only when something was different; supports check mode and diff.
  - Fails when the interface is absent, when no backend tool is found, or when a value read back
    differs from the one written. ECN and traffic class files that the driver does not provide
    (inbox kernels) are reported as C(unsupported) with a warning, not set.
version_added: "0.1.0"
options:
  interface:
    description: RoCE netdev (for example C(eth2), C(bond0)).
    type: str
    required: true
  device:
    description: RDMA device of the interface; found from C(class/net/<if>/device/infiniband) when omitted.
    type: str
  port:
    description: RDMA port number of the interface on O(device).
    type: int
    default: 1
  pfc_priority:
    description: The lossless priority carrying RoCE; PFC and ECN are enabled on it only.
    type: int
    required: true
  dscp:
    description: DSCP of RoCE traffic; the RoCE ToS and traffic class are C(dscp << 2) unless O(roce_tos) is set.
    type: int
    required: true
  roce_tos:
    description: ToS byte for rdma_cm and the traffic class; default C(dscp << 2).
    type: int
  ecn:
    description: Enable ECN (roce_np and roce_rp) on O(pfc_priority).
    type: bool
    default: true
  mtu:
    description: Netdev MTU; left alone when omitted.
    type: int
  backend:
    description: QoS tool; C(auto) prefers C(mlnx_qos) and falls back to C(dcb).
    type: str
    choices: [auto, mlnx_qos, dcb]
    default: auto
  mlnx_qos_path:
    description: Path of C(mlnx_qos); looked up on PATH when omitted.
    type: path
  dcb_path:
    description: Path of C(dcb); looked up on PATH when omitted.
    type: path
  sysfs_root:
    description: Root of sysfs (a simulated tree in tests).
    type: path
    default: /sys
  configfs_root:
    description: Root of configfs; default C(<sysfs_root>/kernel/config).
    type: path
attributes:
  check_mode:
    support: full
    description: Reads back the state and reports what would change without applying it.
  diff_mode:
    support: full
    description: Shows the settings before and after.
author:
  - clusterctl maintainers (@clusterctl)
"""

EXAMPLES = r"""
- name: RoCE QoS on eth2 (lossless priority 3, DSCP 26)
  clusterctl.hpc.roce_qos:
    interface: eth2
    pfc_priority: 3
    dscp: 26
    mtu: 9000
"""

RETURN = r"""
before:
  description: Settings read before any change.
  returned: always
  type: dict
  sample: {"trust": "pcp", "pfc_enabled_priorities": [], "dscp_priority": 3, "ecn_np": false,
           "ecn_rp": false, "roce_tos": 0, "traffic_class": null, "mtu": 1500}
after:
  description: Settings read back after applying (equal to C(before) in check mode with no change).
  returned: always
  type: dict
wanted:
  description: The settings asked for.
  returned: always
  type: dict
backend:
  description: The QoS tool used (C(mlnx_qos) or C(dcb)).
  returned: always
  type: str
device:
  description: The RDMA device of the interface.
  returned: always
  type: str
commands:
  description: Backend commands run (or that would run in check mode).
  returned: always
  type: list
  elements: list
unsupported:
  description: Settings whose sysfs files the driver does not provide.
  returned: always
  type: list
  elements: str
"""

import os  # noqa: E402
import re  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse.common import ParseError  # noqa: E402
from ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse.dcb import parse_dcb  # noqa: E402
from ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse.mlnx_qos import parse_mlnx_qos  # noqa: E402

KEYS = ("trust", "pfc_enabled_priorities", "dscp_priority", "ecn_np", "ecn_rp", "roce_tos", "traffic_class", "mtu")


class QosError(Exception):
    def __init__(self, msg, **extra):
        super().__init__(msg)
        self.extra = extra


def _read(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return None


def _write(path, value):
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"{value}\n")


def _last_int(text):
    """``106``, ``Global tclass=106`` -> 106; empty or absent -> None."""
    if not text:
        return None
    found = re.findall(r"\d+", text)
    return int(found[-1]) if found else None


class Paths:
    def __init__(self, sysfs_root, configfs_root, interface, device, port):
        self.net = os.path.join(sysfs_root, "class", "net", interface)
        self.ib = os.path.join(sysfs_root, "class", "infiniband", device)
        self.mtu = os.path.join(self.net, "mtu")
        self.ecn = {side: os.path.join(self.net, "ecn", side, "enable") for side in ("roce_np", "roce_rp")}
        self.tc = os.path.join(self.ib, "tc", str(port), "traffic_class")
        self.cm_dev = os.path.join(configfs_root, "rdma_cm", device)
        self.cm_root = os.path.join(configfs_root, "rdma_cm")
        self.tos = os.path.join(self.cm_dev, "ports", str(port), "default_roce_tos")


class Backend:
    def __init__(self, module, name, binary, interface):
        self.module, self.name, self.bin, self.ifname = module, name, binary, interface
        self.commands = []

    def _run(self, args, record=True):
        cmd = [self.bin, *args]
        if record:
            self.commands.append(cmd)
        rc, out, err = self.module.run_command(cmd, environ_update={"LC_ALL": "C"})
        if rc != 0:
            raise QosError(
                f"{self.name} failed (rc={rc}): {err.strip() or out.strip()}", cmd=cmd, rc=rc, stdout=out, stderr=err
            )
        return out

    def read(self, dscp):
        try:
            if self.name == "mlnx_qos":
                out = self._run(["-i", self.ifname], record=False)
                reading = parse_mlnx_qos(out)["interfaces"][-1]
                d2p = reading["dscp2prio"] or {}
                return {
                    "trust": reading["trust"],
                    "pfc_enabled_priorities": reading["pfc_enabled_priorities"],
                    "dscp_priority": d2p.get(str(dscp)),
                }
            pfc = parse_dcb(self._run(["-j", "pfc", "show", "dev", self.ifname, "prio-pfc"], record=False))
            app = parse_dcb(self._run(["-j", "app", "show", "dev", self.ifname, "dscp-prio"], record=False))
        except ParseError as exc:
            raise QosError(f"cannot parse {self.name} output: {exc}") from exc
        return {
            "trust": app["trust"],
            "pfc_enabled_priorities": pfc["pfc_enabled_priorities"],
            "dscp_priority": (app["dscp2prio"] or {}).get(str(dscp)),
        }

    def plan(self, cur, want, dscp, prio):
        """Commands turning ``cur`` into ``want`` (trust, dscp->prio, PFC)."""
        cmds = []
        if self.name == "mlnx_qos":
            if cur["trust"] != want["trust"]:
                cmds.append(["-i", self.ifname, "--trust", want["trust"]])
            if want["trust"] == "dscp" and cur["dscp_priority"] != want["dscp_priority"]:
                cmds.append(["-i", self.ifname, "--dscp2prio", f"set,{dscp},{prio}"])
            if cur["pfc_enabled_priorities"] != want["pfc_enabled_priorities"]:
                vals = ",".join("1" if p in want["pfc_enabled_priorities"] else "0" for p in range(8))
                cmds.append(["-i", self.ifname, "--pfc", vals])
            return cmds
        if want["trust"] == "dscp" and (cur["trust"] != "dscp" or cur["dscp_priority"] != want["dscp_priority"]):
            cmds.append(["app", "replace", "dev", self.ifname, "dscp-prio", f"{dscp}:{prio}"])
        elif want["trust"] == "pcp" and cur["trust"] != "pcp":
            cmds.append(["app", "flush", "dev", self.ifname, "dscp-prio"])
        if cur["pfc_enabled_priorities"] != want["pfc_enabled_priorities"]:
            onoff = [f"{p}:{'on' if p in want['pfc_enabled_priorities'] else 'off'}" for p in range(8)]
            cmds.append(["pfc", "set", "dev", self.ifname, "prio-pfc", *onoff])
        return cmds

    def apply(self, cmds):
        for args in cmds:
            self._run(args)


def pick_backend(module, p):
    choice = p["backend"]
    found = {}
    for name, opt in (("mlnx_qos", "mlnx_qos_path"), ("dcb", "dcb_path")):
        path = p[opt] or module.get_bin_path(name, opt_dirs=["/usr/sbin", "/sbin", "/usr/bin"])
        if path and os.access(path, os.X_OK):
            found[name] = path
    order = ["mlnx_qos", "dcb"] if choice == "auto" else [choice]
    for name in order:
        if name in found:
            return Backend(module, name, found[name], p["interface"])
    raise QosError(
        f"tool missing: {' or '.join(order)} not found (install MLNX/DOCA OFED or iproute2 with dcb)",
        reason="tool_missing",
    )


def resolve_device(p):
    if p["device"]:
        return p["device"]
    ibdir = os.path.join(p["sysfs_root"], "class", "net", p["interface"], "device", "infiniband")
    try:
        devs = sorted(os.listdir(ibdir))
    except OSError:
        devs = []
    if len(devs) != 1:
        raise QosError(
            f"cannot tell the RDMA device of {p['interface']} from {ibdir} (found {devs}); set device",
            reason="device_unknown",
        )
    return devs[0]


def read_sysfs(paths, prio, unsupported):
    cur = {}
    for key, side in (("ecn_np", "roce_np"), ("ecn_rp", "roce_rp")):
        val = _read(os.path.join(paths.ecn[side], str(prio)))
        if val is None:
            unsupported.add(key)
        cur[key] = None if val is None else val == "1"
    tc = _read(paths.tc)
    if tc is None:
        unsupported.add("traffic_class")
    cur["traffic_class"] = _last_int(tc)
    cur["roce_tos"] = _last_int(_read(paths.tos))
    cur["mtu"] = _last_int(_read(paths.mtu))
    return cur


def apply_sysfs(paths, cur, want, prio, unsupported):
    changed = []
    for key, side in (("ecn_np", "roce_np"), ("ecn_rp", "roce_rp")):
        if key not in unsupported and cur[key] != want[key]:
            _write(os.path.join(paths.ecn[side], str(prio)), "1" if want[key] else "0")
            changed.append(key)
    if "traffic_class" not in unsupported and cur["traffic_class"] != want["traffic_class"]:
        _write(paths.tc, want["traffic_class"])
        changed.append("traffic_class")
    if cur["roce_tos"] != want["roce_tos"]:
        if not os.path.isdir(paths.cm_dev):
            if not os.path.isdir(paths.cm_root):
                raise QosError(
                    f"{paths.cm_root} missing: configfs not mounted or rdma_cm not loaded", reason="configfs_missing"
                )
            os.mkdir(paths.cm_dev)  # configfs populates ports/<n>/ on mkdir
        if not os.path.exists(paths.tos):
            raise QosError(f"{paths.tos} did not appear after creating {paths.cm_dev}", reason="configfs_missing")
        _write(paths.tos, want["roce_tos"])
        changed.append("roce_tos")
    if want["mtu"] is not None and cur["mtu"] != want["mtu"]:
        _write(paths.mtu, want["mtu"])
        changed.append("mtu")
    return changed


def run(module):
    p = module.params
    for key, lo, hi in (("pfc_priority", 0, 7), ("dscp", 0, 63), ("roce_tos", 0, 255), ("port", 1, 255)):
        if p[key] is not None and not lo <= p[key] <= hi:
            raise QosError(f"{key}={p[key]}: must be {lo}..{hi}", reason="bad_argument")
    if p["mtu"] is not None and not 68 <= p["mtu"] <= 65535:
        raise QosError(f"mtu={p['mtu']}: must be 68..65535", reason="bad_argument")
    sysfs_root = p["sysfs_root"]
    configfs_root = p["configfs_root"] or os.path.join(sysfs_root, "kernel", "config")
    if not os.path.isdir(os.path.join(sysfs_root, "class", "net", p["interface"])):
        raise QosError(f"interface {p['interface']} not found under {sysfs_root}/class/net", reason="device_absent")
    device = resolve_device(p)
    paths = Paths(sysfs_root, configfs_root, p["interface"], device, p["port"])
    backend = pick_backend(module, p)
    prio, dscp = p["pfc_priority"], p["dscp"]
    tos = p["roce_tos"] if p["roce_tos"] is not None else dscp << 2
    unsupported: set[str] = set()
    before = {**backend.read(dscp), **read_sysfs(paths, prio, unsupported)}
    want = {
        "trust": "dscp",
        "pfc_enabled_priorities": [prio],
        "dscp_priority": prio,
        "ecn_np": p["ecn"],
        "ecn_rp": p["ecn"],
        "roce_tos": tos,
        "traffic_class": tos,
        "mtu": p["mtu"] if p["mtu"] is not None else before["mtu"],
    }
    for key in unsupported:
        want[key] = None
    cmds = backend.plan(before, want, dscp, prio)
    differs = [k for k in KEYS if before[k] != want[k]]
    result = {
        "changed": bool(differs),
        "before": before,
        "wanted": want,
        "backend": backend.name,
        "device": device,
        "unsupported": sorted(unsupported),
        "differs": differs,
        "commands": [[backend.bin, *c] for c in cmds],
    }
    if module.check_mode or not differs:
        result["after"] = dict(want) if differs else dict(before)
    else:
        backend.apply(cmds)
        apply_sysfs(paths, before, want, prio, unsupported)
        after = {**backend.read(dscp), **read_sysfs(paths, prio, set())}
        result["after"] = after
        wrong = [k for k in KEYS if after[k] != want[k]]
        if wrong:
            raise QosError(f"read back differs from what was written: {', '.join(wrong)}", reason="readback", **result)
    if module._diff:
        result["diff"] = {
            "before": _fmt(before),
            "after": _fmt(result["after"]),
            "before_header": f"{p['interface']} ({device})",
            "after_header": f"{p['interface']} ({device})",
        }
    return result


def _fmt(state):
    return "".join(f"{k}: {state[k]}\n" for k in KEYS)


def main():
    module = AnsibleModule(
        argument_spec={
            "interface": {"type": "str", "required": True},
            "device": {"type": "str"},
            "port": {"type": "int", "default": 1},
            "pfc_priority": {"type": "int", "required": True},
            "dscp": {"type": "int", "required": True},
            "roce_tos": {"type": "int"},
            "ecn": {"type": "bool", "default": True},
            "mtu": {"type": "int"},
            "backend": {"type": "str", "default": "auto", "choices": ["auto", "mlnx_qos", "dcb"]},
            "mlnx_qos_path": {"type": "path"},
            "dcb_path": {"type": "path"},
            "sysfs_root": {"type": "path", "default": "/sys"},
            "configfs_root": {"type": "path"},
        },
        supports_check_mode=True,
    )
    try:
        result = run(module)
    except QosError as exc:
        extra = {k: v for k, v in exc.extra.items() if k != "changed"}
        module.fail_json(msg=str(exc), changed=bool(exc.extra.get("changed")), **extra)
    except OSError as exc:
        module.fail_json(msg=f"sysfs/configfs write failed: {exc}", changed=False, reason="os_error")
    for key in result["unsupported"]:
        module.warn(f"roce_qos: {key} not provided by the driver on {module.params['interface']}; not set")
    module.exit_json(**result)


if __name__ == "__main__":
    main()
