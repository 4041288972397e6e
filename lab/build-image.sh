#!/usr/bin/env bash
# Build the lab's container image without any container registry (mmdebstrap -> podman import).
#   lab/build-image.sh            build localhost/clusterctl-lab:latest unless it exists
#   lab/build-image.sh --force    rebuild
#   lab/build-image.sh --bare     build localhost/clusterctl-bare:latest (CLUSTERCTL_BARE_IMAGE) unless
#                                 it exists: the same Debian base without the baked-in packages
#                                 (--bare --force rebuilds it)
# The apt mirror is read from this machine's own apt sources at run time. Packages are baked in
# only for speed: every service is disabled and no key or config is left, so the roles still do
# all of the configuration themselves. The bare image is where the roles' package installs run for
# real once per test run: the scale-out node of molecule/slurm.
set -euo pipefail
IMAGE=${CLUSTERCTL_LAB_IMAGE:-localhost/clusterctl-lab:latest}
force=0; bare=0
for arg in "$@"; do
  case $arg in
    --force) force=1 ;;
    --bare) bare=1 ;;
    *) echo "usage: $0 [--bare] [--force]" >&2; exit 2 ;;
  esac
done
[[ $bare -eq 1 ]] && IMAGE=${CLUSTERCTL_BARE_IMAGE:-localhost/clusterctl-bare:latest}
if [[ $force -eq 0 ]] && podman image exists "$IMAGE"; then
  echo "image $IMAGE exists"; exit 0
fi
work=$(mktemp -d /var/tmp/clusterctl-image.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Mirror lines from deb822 sources (Types/URIs/Suites/Components) or one-line sources.list.
mirrors=()
while IFS= read -r line; do mirrors+=("$line"); done < <(python3 - <<'PY'
import glob, re
out = []
for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
    for stanza in re.split(r"\n\s*\n", open(path).read()):
        f = {}
        for ln in stanza.splitlines():
            if ln.startswith("#") or ":" not in ln:
                continue
            k, v = ln.split(":", 1)
            f[k.strip()] = v.strip()
        if "deb" not in f.get("Types", "").split() or f.get("Enabled", "yes") == "no":
            continue
        for uri in f.get("URIs", "").split():
            for suite in f.get("Suites", "").split():
                out.append(f"deb {uri} {suite} {f.get('Components', 'main')}")
for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
    try:
        for ln in open(path):
            if ln.strip().startswith("deb "):
                out.append(ln.strip())
    except OSError:
        pass
print("\n".join(dict.fromkeys(out)))
PY
)
[[ ${#mirrors[@]} -gt 0 ]] || { echo "no apt sources found on this machine" >&2; exit 1; }

base=systemd,systemd-sysv,dbus,python3,python3-apt,sudo,iproute2,iputils-ping,procps,openssh-server,ca-certificates,kmod,less
speed=munge,slurm-wlm,libpmix2,slurmctld,slurmd,slurm-client,slurmdbd,mariadb-server,redis-server,fuse3,rdma-core,ibverbs-utils,infiniband-diags,perftest,cron
include="$base,$speed"; [[ $bare -eq 1 ]] && include=$base
disable='for u in munge slurmd slurmctld slurmdbd mariadb redis-server ssh cron; do
  rm -f "$1/etc/systemd/system/multi-user.target.wants/$u.service"; done
  rm -f "$1"/etc/munge/munge.key "$1"/etc/ssh/ssh_host_*
  ln -sf /dev/null "$1/etc/systemd/system/systemd-logind.service"
  echo clusterctl-lab > "$1/etc/hostname"'
# --skip=cleanup/apt/lists: the package lists stay in the image. mmdebstrap would empty /var/lib/apt/lists and leave
# the folder's mtime at build time, which ansible.builtin.apt's cache_valid_time reads as a fresh cache for an hour:
# a role's install within that hour would find no package at all ('No package matching ... is available').
mmdebstrap --variant=apt --include="$include" \
  --skip=cleanup/apt/lists \
  --customize-hook="$disable" \
  --aptopt='Acquire::Retries "3"' \
  bookworm "$work/rootfs.tar" "${mirrors[@]}"
podman import --change 'CMD ["/sbin/init"]' --change 'STOPSIGNAL SIGRTMIN+3' \
  "$work/rootfs.tar" "$IMAGE"
echo "built $IMAGE"
