#!/usr/bin/env bash
# Prepare a fresh Debian 12 machine (as root) for the podman lab and the tests. Idempotent.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
need=(podman runc iptables netavark aardvark-dns uidmap fuse-overlayfs slirp4netns mmdebstrap fuse3)
missing=()
for p in "${need[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p"); done
if [[ ${#missing[@]} -gt 0 ]]; then
  apt-get update -q
  apt-get install -y -q "${missing[@]}"
fi
mkdir -p /etc/containers
nofile=$(ulimit -Hn)
cat > /etc/containers/containers.conf <<CONF
# written by clusterctl lab/host-setup.sh (see ../shared/ci/podman-lab.md)
[containers]
default_ulimits = ["nofile=${nofile}:${nofile}", "nproc=32768:32768"]
[engine]
runtime = "runc"
CONF
