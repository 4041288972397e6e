#!/usr/bin/env bash
# Build a STAND-IN for NVIDIA's DOCA-OFED apt repository (Molecule scenario molecule/rdma only):
#   doca-standin-repo.sh OUTDIR
# OUTDIR gets two tiny packages named like the DOCA meta package, doca-ofed 2.9.0-1 and 2.9.1-1
# (Architecture: all; they hold a marker file and a stand-in openibd.service that only logs that it
# was (re)started), a flat-repository index (Packages, Release, and Release.gpg signed by pgp_sign.py
# with a throw-away ed25519 key made for this run) and that key as key.asc, plus key.asc.sha256 (its
# sha256, the value the scenario pins as rdma_doca_key_checksum). $PYTHON (default python3) runs
# pgp_sign.py and needs the cryptography package (the venv's python has it); no gpg is needed.
# These are NOT NVIDIA's packages and contain no driver: they let the rdma role's DOCA path (key
# with pinned checksum, signed repository, pinned version, driver-reload consent) run for real with
# apt inside a container.
set -euo pipefail
out=$1
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for version in 2.9.0-1 2.9.1-1; do
  root="$work/doca-ofed-$version"
  mkdir -p "$root/DEBIAN" "$root/usr/share/doc/doca-ofed" "$root/lib/systemd/system" "$root/usr/lib/doca-standin"
  cat > "$root/DEBIAN/control" <<CTL
Package: doca-ofed
Version: $version
Architecture: all
Maintainer: clusterctl tests <noreply@invalid>
Section: misc
Priority: optional
Description: clusterctl test STAND-IN for NVIDIA's doca-ofed meta package (not NVIDIA's)
 Built by molecule/rdma/files/doca-standin-repo.sh for the rdma role's Molecule scenario.
 It contains no driver, only a marker file and a stand-in openibd.service.
CTL
  echo "clusterctl stand-in for doca-ofed $version, not NVIDIA's package" \
    > "$root/usr/share/doc/doca-ofed/STAND-IN"
  cat > "$root/usr/lib/doca-standin/openibd" <<'SH'
#!/bin/sh
# Stand-in for NVIDIA's openibd driver restart: logs the restart with the installed version.
echo "openibd stand-in started with $(cat /usr/share/doc/doca-ofed/STAND-IN)" >> /run/doca-standin-openibd.log
SH
  chmod 0755 "$root/usr/lib/doca-standin/openibd"
  cat > "$root/lib/systemd/system/openibd.service" <<'UNIT'
[Unit]
Description=Stand-in for NVIDIA openibd (clusterctl test package; restarts nothing)

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/lib/doca-standin/openibd
UNIT
  dpkg-deb -Zxz --root-owner-group --build "$root" "$out/doca-ofed_${version}_all.deb" >/dev/null
done

# Flat repository index: what apt needs to fetch and verify the packages (hashes chain up to the
# signed Release; there is no InRelease, apt falls back to Release + Release.gpg).
: > "$out/Packages"
for deb in "$out"/doca-ofed_*_all.deb; do
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
  echo "Label: clusterctl stand-in DOCA-OFED repository (not NVIDIA)"
  echo "Date: $(LC_ALL=C date -Ru)"
  echo "SHA256:"
  echo " $(sha256sum "$out/Packages" | cut -d' ' -f1) $(stat -c %s "$out/Packages") Packages"
} > "$out/Release"

"${PYTHON:-python3}" "$(dirname "$0")/pgp_sign.py" "$out/Release" "$out/key.asc" "$out/Release.gpg"
sha256sum "$out/key.asc" | cut -d' ' -f1 > "$out/key.asc.sha256"
