#!/usr/bin/env bash
# Build a STAND-IN for NVIDIA's CUDA apt repository (Molecule scenario molecule/nvidia_gpu only):
#   gpu-standin-repo.sh OUTDIR
# OUTDIR gets tiny packages named like NVIDIA's (Architecture: all; NOT NVIDIA's, no driver, no
# kernel module, no CUDA): nvidia-driver-550 and nvidia-fabricmanager-550 at two versions each,
# 550.90.07-1 and 550.127.05-1, datacenter-gpu-manager 1:3.3.9 and datacenter-gpu-manager-exporter
# 3.3.9-1. Each holds a marker file naming its version and a stand-in systemd unit
# (nvidia-persistenced, nvidia-fabricmanager, nvidia-dcgm running a stand-in nv-hostengine,
# nvidia-dcgm-exporter) whose process only logs its start and sleeps; the DCGM one also ships a
# stand-in dcgmi that answers only whether the host engine unit runs. Units are not enabled by the
# packages (the role enables them). Kernel STAND-INs: linux-image-<release> and linux-headers-<release>
# for the releases 6.1.0-900-amd64 (package version 6.1.900-1) and 6.1.0-901-amd64 (6.1.901-1),
# named like Debian's kernel packages at ABI numbers Debian never used; each holds ONLY a marker
# file: no vmlinuz, no modules, no headers and no maintainer scripts, so no kernel hook
# (/etc/kernel/postinst.d: initramfs, DKMS, grub) ever runs. A flat-repository index (Packages, Release, and Release.gpg
# signed by molecule/rdma/files/pgp_sign.py with a throw-away ed25519 key made for this run), that
# key as key.asc and key.asc.sha256 (its sha256, which the scenario pins). $PYTHON runs pgp_sign.py.
set -euo pipefail
out=$1
sign=$(cd "$(dirname "$0")/../../rdma/files" && pwd)/pgp_sign.py
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# mkpkg NAME VERSION UNIT DAEMON [EXTRA_BIN]
mkpkg() {
  local name=$1 version=$2 unit=$3 daemon=$4 root="$work/$1-$2"
  mkdir -p "$root/DEBIAN" "$root/usr/share/doc/$name" "$root/lib/systemd/system" "$root/usr/bin"
  cat > "$root/DEBIAN/control" <<CTL
Package: $name
Version: $version
Architecture: all
Maintainer: clusterctl tests <noreply@invalid>
Section: misc
Priority: optional
Description: clusterctl test STAND-IN for NVIDIA's $name (not NVIDIA's)
 Built by molecule/nvidia_gpu/files/gpu-standin-repo.sh for the nvidia_gpu role's Molecule
 scenario. It contains no driver, only a marker file and a stand-in $unit.service.
CTL
  echo "clusterctl stand-in for $name $version, not NVIDIA's package" > "$root/usr/share/doc/$name/STAND-IN"
  cat > "$root/usr/bin/$daemon" <<SH
#!/bin/sh
# Stand-in for NVIDIA's $daemon (clusterctl test package): logs its start, then idles.
echo "$daemon stand-in started, $name $version" >> /run/gpu-standin.log
exec sleep infinity
SH
  chmod 0755 "$root/usr/bin/$daemon"
  cat > "$root/lib/systemd/system/$unit.service" <<UNIT
[Unit]
Description=Stand-in for NVIDIA $unit (clusterctl test package $name $version)

[Service]
ExecStart=/usr/bin/$daemon

[Install]
WantedBy=multi-user.target
UNIT
  if [[ $name == datacenter-gpu-manager ]]; then
    cat > "$root/usr/bin/dcgmi" <<'SH'
#!/bin/sh
# Stand-in for NVIDIA's dcgmi (clusterctl test package): there are no GPUs; it only says whether
# the host engine unit runs, as the real dcgmi fails when it cannot reach nv-hostengine.
if systemctl is-active --quiet nvidia-dcgm; then
  echo "dcgmi stand-in: host engine running (no GPUs, nothing diagnosed)"
else
  echo "Error: unable to establish a connection to the specified host: localhost" >&2; exit 1
fi
SH
    chmod 0755 "$root/usr/bin/dcgmi"
  fi
  dpkg-deb -Zxz --root-owner-group --build "$root" "$out/${name}_${version#*:}_all.deb" >/dev/null
}

# mkkernel NAME VERSION: a kernel package stand-in, a marker file and nothing else (see above)
mkkernel() {
  local name=$1 version=$2 root="$work/$1-$2"
  mkdir -p "$root/DEBIAN" "$root/usr/share/doc/$name"
  cat > "$root/DEBIAN/control" <<CTL
Package: $name
Version: $version
Architecture: all
Maintainer: clusterctl tests <noreply@invalid>
Section: kernel
Priority: optional
Description: clusterctl test STAND-IN for a kernel package (not Debian's, no kernel inside)
 Built by molecule/nvidia_gpu/files/gpu-standin-repo.sh for the nvidia_gpu role's Molecule
 scenario. It contains only a marker file and has no maintainer scripts: no kernel hook runs.
CTL
  echo "clusterctl stand-in for $name $version, not a kernel" > "$root/usr/share/doc/$name/STAND-IN"
  dpkg-deb -Zxz --root-owner-group --build "$root" "$out/${name}_${version}_all.deb" >/dev/null
}

for abi in 900 901; do
  mkkernel "linux-image-6.1.0-$abi-amd64" "6.1.$abi-1"
  mkkernel "linux-headers-6.1.0-$abi-amd64" "6.1.$abi-1"
done
for v in 550.90.07-1 550.127.05-1; do
  mkpkg nvidia-driver-550 "$v" nvidia-persistenced nvidia-persistenced
  mkpkg nvidia-fabricmanager-550 "$v" nvidia-fabricmanager nv-fabricmanager
done
mkpkg datacenter-gpu-manager 1:3.3.9 nvidia-dcgm nv-hostengine
mkpkg datacenter-gpu-manager-exporter 3.3.9-1 nvidia-dcgm-exporter dcgm-exporter

: > "$out/Packages"
for deb in "$out"/*.deb; do
  {
    dpkg-deb -f "$deb"
    echo "Filename: ./$(basename "$deb")"
    echo "Size: $(stat -c %s "$deb")"
    echo "SHA256: $(sha256sum "$deb" | cut -d' ' -f1)"
    echo
  } >> "$out/Packages"
done
{
  echo "Origin: clusterctl-test-standin"
  echo "Label: clusterctl stand-in CUDA repository (not NVIDIA)"
  echo "Date: $(LC_ALL=C date -Ru)"
  echo "SHA256:"
  echo " $(sha256sum "$out/Packages" | cut -d' ' -f1) $(stat -c %s "$out/Packages") Packages"
} > "$out/Release"
"${PYTHON:-python3}" "$sign" "$out/Release" "$out/key.asc" "$out/Release.gpg"
sha256sum "$out/key.asc" | cut -d' ' -f1 > "$out/key.asc.sha256"
