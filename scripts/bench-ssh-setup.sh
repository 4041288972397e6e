#!/usr/bin/env bash
# Setup for the day-2 bench's SSH path only (bench/bench_day2.py --connection ssh, bench/sshd_lab.py):
# Debian's openssh-server for its sshd binary. The system's sshd service is not started (a
# policy-rc.d denies it during the install): the bench runs its own sshd on 127.0.0.1 with its own
# config and keys. Not part of scripts/setup.sh: the regular CI run does not need it (the SSH
# smoke test is skipped without /usr/sbin/sshd).
set -euo pipefail
if [ -x /usr/sbin/sshd ]; then
  exit 0
fi
added_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod 0755 /usr/sbin/policy-rc.d
  added_policy=1
fi
trap '[ "$added_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d' EXIT
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends openssh-server || { apt-get update -q && apt-get install -y -q --no-install-recommends openssh-server; }
