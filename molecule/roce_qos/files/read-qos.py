#!/usr/bin/python3
"""Print, as JSON, the RoCE QoS settings of every netdev of a simulated sysfs tree (Molecule verify).

Usage: read-qos.py SYSFS_ROOT PRIORITY DSCP. Reads the files as the kernel lays them out
(class/net/<if>/{mtu,ecn/roce_np|roce_rp/enable/<prio>}, class/net/<if>/device/infiniband/<dev>,
class/infiniband/<dev>/tc/1/traffic_class, kernel/config/rdma_cm/<dev>/ports/1/default_roce_tos) and
the emulated backend state (qos-state.json) that the fake mlnx_qos/dcb of tests/fakebin keep.
Independent of the roce_qos module on purpose: it is what the verify step checks the module against.
"""

import json
import os
import sys


def read(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return None


def main():
    root, prio, dscp = sys.argv[1], sys.argv[2], sys.argv[3]
    state = json.loads(read(os.path.join(root, "qos-state.json")) or "{}")
    out = {}
    cm = os.path.join(root, "kernel", "config", "rdma_cm")
    for ifname in sorted(os.listdir(os.path.join(root, "class", "net"))):
        net = os.path.join(root, "class", "net", ifname)
        try:
            dev = sorted(os.listdir(os.path.join(net, "device", "infiniband")))[0]
        except (OSError, IndexError):
            dev = None
        st = state.get(ifname, {})
        out[ifname] = {
            "device": dev,
            "mtu": read(os.path.join(net, "mtu")),
            "ecn_np": read(os.path.join(net, "ecn", "roce_np", "enable", prio)),
            "ecn_rp": read(os.path.join(net, "ecn", "roce_rp", "enable", prio)),
            "traffic_class": dev and read(os.path.join(root, "class", "infiniband", dev, "tc", "1", "traffic_class")),
            "roce_tos": dev and read(os.path.join(cm, dev, "ports", "1", "default_roce_tos")),
            "trust": st.get("trust"),
            "pfc": st.get("pfc"),
            "dscp_prio": (st.get("dscp2prio") or {}).get(dscp),
            "dcb_app": st.get("dcb_app"),
        }
    json.dump(out, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
