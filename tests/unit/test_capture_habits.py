"""Capture habits never decide a verdict (issue 29 class 1).

Operators paste what their terminal showed: a parallel shell's or launcher's prefix on every line,
or its header above the output (``ansible -m shell``, ``pssh -i``, ``dshbak`` / ``clush -b``), the
paste quoted in a reply (``> ``), a web page's no-break spaces or its copy with indentation and runs of
blanks collapsed, a copy of a page's HTML source (``&lt;`` ``&gt;`` ``&amp;``), a log's time on every line
(a CI runner's, ``kubectl logs --timestamps``, moreutils ``ts`` in brackets and in its default syslog form),
journalctl's head of a service's line, ``docker compose logs``' service column, ``kubectl logs --prefix``'s pod and
container, Ansible's task result around the command's output (a ``debug`` of the registered lines, ``-v``'s JSON on
the host's line, the YAML result format, ad hoc ``-o``'s one line a host), a blog's typesetting (curly quotes,
dashes), the lines a terminal shows before the output (ssh's known-hosts note, sudo's password prompt, kubectl's
container choice, srun's allocation notes, pyxis' and apptainer's notes, docker's pull progress, a locale warning,
watch's header, script(1)'s first line, an NGC container's banner; also behind a launcher's prefix) and
after it (ssh's 'Connection to ... closed.', kubectl run --rm's deleted pod, script(1)'s last line),
CRLF line ends, the paste indented
as a Markdown code block or fenced (also inside a GitHub issue's collapsed ``<details>`` section), the prompt
and command around it (a shell's, oh-my-zsh's arrow with its directory and git mark, a notebook's
``!`` escape), a ``...`` where they cut lines, trailing blanks. Each habit below is applied to every
allowed real capture (``tests/corpus/seen``, the non-held-out files of ``round2``, ``gpu`` and
``network``, and the labelled captures of ``tests/fixtures/labelled``), and the capture is judged
through the production path (:func:`clusterctl.analysis.engine.analyze_dir` on a one-host
evidence folder, as ``clusterctl analyze`` and ``bench/bench_corpus.py`` do). The verdict (host
status and the set of checks of its real findings) must be the one of the capture as it is.

An elision (``...`` in place of lines) removes evidence, so it is compared with the same cut
without the ``...`` line: the marker may add a coverage note, never change the verdict of what
is left.

The held-out files (``HOLDOUT.txt`` of each part) are never read here.

Not undone, and why: a mail client's wrap of long lines (at a blank, about column 72; a table's row
and a wrapped line's rest cannot be told apart).

Not applied, and why: a habit on a capture that already carries an outer decoration (a Markdown
backtick, a C comment's `` * ``) would come inside it, never before it (:data:`EXCLUDED`, per
capture); a prompt on a capture that has its own prompt and command line (one is what a terminal
shows). Not undone, by rule: a lone line's ``node07: `` / ``ib0: `` (a host without a digit and a
``-`` or ``.`` cannot be told from a driver's or a tool's own ``name: ``; several lines need a
host holding a digit, ``-`` or ``.``), a lone ``N: `` on an ``ip link`` line (its own index).
Already undone before this test and checked here too: CRLF, trailing blanks, fences.

Fast: a capture and its habits are judged in a few milliseconds each (about 10-25 s for all of
them on the shared 2-core machine), so every allowed capture is judged, no sample.
"""

from __future__ import annotations

import functools
import html
import json
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
import bench_corpus  # noqa: E402
from ccparse import capture, registry  # noqa: E402
from ccparse.capture import STAMPED_KINDS, clean_capture  # noqa: E402
from ccparse.common import ParseError  # noqa: E402

from clusterctl.analysis import checks, engine  # noqa: E402

LABELLED = REPO / "tests" / "fixtures" / "labelled"
HOST = "gpu-node07"
#: checks whose findings are not verdicts (bench_corpus.NOT_A_VERDICT)
NOT_A_VERDICT = bench_corpus.NOT_A_VERDICT

#: the command an operator ran for each KIND (the prompt habit puts it on a prompt line)
COMMANDS = {
    "dcb": "dcb ets show dev eth2", "dcgmi-diag": "dcgmi diag -r 3", "ib_write_bw": "ib_write_bw -d mlx5_0 -F 10.0.0.2",
    "ibdev2netdev": "ibdev2netdev", "ibstat": "ibstat", "ibstatus": "ibstatus", "ibv_devinfo": "ibv_devinfo -v",
    "ip-link": "ip link show", "kernel-log": "dmesg -T", "lspci": "lspci -vvv -s 41:00.0",
    "mlnx_qos": "mlnx_qos -i eth2", "nccl-log": "NCCL_DEBUG=INFO mpirun -np 8 ./build/all_reduce_perf -g 1",
    "nccl-tests": "./build/all_reduce_perf -b 8 -e 8G -f 2 -g 8", "nvidia-smi": "nvidia-smi",
    "nvidia-smi-nvlink": "nvidia-smi nvlink -s", "nvidia-smi-q": "nvidia-smi -q",
    "nvidia-smi-q-xml": "nvidia-smi -q -x",
    "nvidia-smi-topo": "nvidia-smi topo -m", "proc-limits": "cat /proc/$(pgrep -o slurmd)/limits",
    "scontrol-node": f"scontrol show node {HOST}", "show_gids": "show_gids", "sinfo": "sinfo -R",
    "sysfs-ib": "grep . /sys/class/infiniband/*/ports/*/{state,phys_state,rate}", "sdiag": "sdiag",
}

#: the habits that put something outside a pasted document: a prefix on every line, a prompt, a fence, a banner, a time
_OUTSIDE_HABITS = ("pdsh", "srun-l", "srun-l-wide", "mpirun-tag", "indent4", "prompt", "glyph-prompt", "notebook",
                   "details", "gentoo-prompt", "line-ticks", "fence", "quoted", "tab-indent", "ansible", "pssh-i",
                   "dshbak", "runner-time", "kubectl-timestamps", "ts", "journal", "compose", "watch",
                   "ssh-known-hosts", "sudo-password", "kubectl-container", "srun-allocation", "setlocale",
                   "container-banner", "container-banner-srun-l", "ssh-known-hosts-pdsh", "docker-pull", "pyxis",
                   "apptainer", "ssh-closed", "kubectl-run-rm", "script", "page-copy", "mail-wrap", "kubectl-prefix",
                   "ts-syslog")

#: habits not applied to a capture, with the reason: (habit, capture id) -> why
EXCLUDED = {
    **{(habit, "round2/nvidia-smi-q/gnomeshell356-375.66-d-memory-util-backtick-cut.txt"):
       "the paste opens with a Markdown backtick: a terminal's prefix, indentation, prompt or fence comes inside "
       "the Markdown, never before it" for habit in ("pdsh", "srun-l", "srun-l-wide", "mpirun-tag", "indent4",
                                                     "prompt", "glyph-prompt", "notebook", "details",
                                                     "gentoo-prompt", "line-ticks",
                                                     "fence", "quoted", "tab-indent", "ansible",
                                                     "pssh-i", "dshbak", "runner-time", "kubectl-timestamps",
                                                     "ts", "journal", "compose", "watch", "ssh-known-hosts",
                                                     "sudo-password", "kubectl-container", "srun-allocation",
                                                     "setlocale", "container-banner", "container-banner-srun-l",
                                                     "ssh-known-hosts-pdsh", "docker-pull", "pyxis", "apptainer",
                                                     "ssh-closed", "kubectl-run-rm", "script")},
    **{(habit, "round2/scontrol-node/slinky57-25.05.3-each-line-in-backticks-amd-gpu-worker-gres-null-bold-"
               "truncated-lines.txt"):
       "every line of the paste is in its own Markdown backticks: a terminal's prefix, time, banner or fence comes "
       "inside each code span (or is backticked too), never outside it" for habit in (
           "pdsh", "srun-l", "srun-l-wide", "mpirun-tag", "fence", "details", "quoted", "ansible", "pssh-i", "dshbak",
           "runner-time", "kubectl-timestamps", "ts", "journal", "compose", "kubectl-prefix", "ts-syslog", "watch",
           "ssh-known-hosts", "sudo-password", "kubectl-container", "srun-allocation", "setlocale", "container-banner",
           "container-banner-srun-l", "docker-pull", "pyxis", "apptainer", "ssh-closed", "kubectl-run-rm", "script",
           "ssh-known-hosts-pdsh")},
    **{(habit, cid):
       "a quoted reply ('> ' on every line): a code block's indentation comes inside the quote, after its '> '"
       for habit in ("indent4", "tab-indent") for cid in (
           "round2/kernel-log/linuxrdma2020-store01-quoted-prompt-journalctl-b-1-grep-mlx5-cx4-cmd-entry-alloc-fail-"
           "ipoib-intf-alloc-failed.txt",
           "round2/proc-limits/isown8-ulimit-a-blockquote-gt-prefix-memlock-unlimited.txt",
           "round2/kernel-log/iwl2021-dilfridge-quoted-dmesg-grep-igb-i350-d3cold-pcie-link-lost-nvm-checksum-probe-"
           "failed-5.txt",
           "round2/kernel-log/linuxpci2021-quoted-modprobe-mlx5-cx5-d8-maxcpus-8-create-eq-recovered-after-timeout-x4-"
           "outlook-wrapped.txt",
           "round2/lspci/iwl2021-dilfridge-quoted-lspci-nn-elided-i350-01-00.0-01-00.1-rev-ff-config-space-gone.txt",
           "round2/ibstatus/ompiusers28792-2016-quoted-gt-bstatus-typo-mlx4_0-one-port-active-fdr-56-html-pre.txt",
           "round2/ip-link/netdev2020-lag-ipv6-reproducer-ip-a-s-double-quoted-bond0-ens2f1np2-slave-no-carrier-down-"
           "ens2f0np0-up-wrapped.txt",
           "round2/kernel-log/gpud348-quoted-ctime-host-ny2g1r12hh2-one-mlx5-5c-00.0-insufficient-slot-power-27w.txt")},
    **{(habit, "round2/ip-link/danm246-mellanox-pf-enp101s0f0-up-vf-list-vlan-10-markdown-bold-quote-prefix-cut.txt"):
       "Markdown's lazy blockquote ('> ' on the record's first line, its indented lines bare): a code block's "
       "indentation comes inside the quote, and a page copy that drops the indentation leaves no line to tell where "
       "the quoted record goes on" for habit in ("indent4", "tab-indent", "page-copy")},
    **{("mail-wrap", f"round2/nccl-log/{name}.txt"):
       "an application's or a provider's line (XLA's 'NCCL operation ...', libmlx5's 'got completion with error', "
       "libfabric's '<warn> err: 5', NCCL 2.1's 'WARN' without the word NCCL) carries no NCCL line head: a wrap's "
       "rest cannot be told from text and joined back" for name in (
           "flax4942-nnx-jit-absl-info-dots-xla-ncclallreduce-invalid-argument-empty-last-warning-tensorflow-"
           "imported-cut",
           "lwm44-jax-xla-reduce-scatter-unable-to-load-nccl-library-two-lines",
           "jax22747-single-process-multi-gpu-bootstrap-socket-cc-666-then-xla-intercepted-ncclcomminitrank-socket-"
           "try-accept-bad-fd-cut",
           "openrlhf621-ray-prefixed-raylet-worker-died-mlx5-host-unknown-got-completion-with-error-repeated-then-"
           "broadcast-ncclremoteerror-cut",
           "horovod385-nccl-2.1.15-uuid-hostname-no-module-for-gpu-direct-rdma-net-ib-gid3-then-tqdm-and-traceback-"
           "cut",
           "awsofi346-120-rank-efa-libfabric-txe-invalid-address-peer-host-id-then-indented-nccl-channel-lines-cut")},
    **{(habit, cid):
       "the output sits inside a document's own syntax (a README's or a script's '# ' before every line, the JSON "
       "strings of Ansible's stdout_lines): a terminal's prefix, prompt, fence, banner or time comes around that "
       "document, never between its syntax and the output" for habit in _OUTSIDE_HABITS for cid in (
           "round2/scontrol-node/rwthi6-report-gpus-claix23-22.05-n23g0002-mixed-n23g0003-down-drain-not-responding-"
           "too-hot-hash-comments.txt",
           "round2/show_gids/mitosiscore-readme-hash-commented-two-ib-hcas-index0-link-local-v1-only-no-netdev.txt",
           "round2/sinfo/azhop1210-ansible-json-quoted-sinfo-R-cyclecloud-node-fail-viz3d-1-4.txt",
           "round2/sinfo/azhop686-json-quoted-squeue-and-sinfo-l-hb120v2-2-draining-idle-tilde.txt")},
    ("mail-wrap", "round2/nccl-log/pytorch152780-amphitrite-2x-rtx5090-ddp-bracket-ts-warn-enqueue-1556-cuda-700-"
                  "terminate-interleaved-cut.txt"):
        "a time ('[2025-05-04 23:32:59] ') before NCCL's WARN lines only, and the C++ runtime's terminate text spliced "
        "into NCCL's lines: a wrapped WARN's rest cannot be told from that text and joined back",
    # session 30: an org-mode guide's '> ' before every output line (the guide's own quote is the outer decoration: an
    # indentation would come inside it, never before it)
    **{(habit, "round2/sinfo/tigrlab-slurm-users-org-gt-quoted-sinfo-purkinje-down-star-in-two-partitions-nodelist-"
               "wrapped-mid-name.txt"):
       "the author's '> ' before every output line: an indentation comes inside the quote, never before it"
       for habit in ("indent4", "tab-indent")},
    **{(habit, cid): "a mail's '> ' quote before every line: an indentation comes inside the quote, never before it"
       for habit in ("indent4", "tab-indent")
       for cid in ("round2/ip-link/blklist2020-hpe-dl380gen9-ip-a-s-quoted-eno1-no-carrier-down-unconfigured-eno49-up-"
                   "wrapped.txt",
                   "round2/kernel-log/blklist2022-6-2-rc1-thinkpad-x1-nvme0-qid2-timeouts-reset-controller-quoted-gt-"
                   "no-timestamps.txt",
                   "round2/lspci/tegralist2019-tegra194-root-port-0005-lspci-vvxxx-quoted-16gts-x8-running-5gts-x1-"
                   "abwmgmt-endpoint-not-shown.txt")},
    ("line-ticks", "round2/kernel-log/nvdocker377-azure-nc-375.51-boot-nvidia-null-deref-nv011745rm-starred-lines-cut-"
                   "after-ip.txt"):
        "Markdown bold ('**[   29.775289] BUG: ...**') around the oops lines, a known miss as is (KNOWN_MISSES.txt): "
        "a code span around each line is read past the stars, so the habit reads more than the paste",
    ("mail-wrap", "round2/nccl-log/mitorcd-engaging-b200-node5501-node5502-sharp-no-aggregation-manager-collnet-forced-"
                  "allreduce-no-algorithm-invalid-usage.txt"):
        "an NCCL 'invalid usage' line whose wrapped rest names the error: the rest, read as a line of its own, no "
        "longer belongs to the error line that the call-failed rule reads",
    ("mail-wrap", "round2/kernel-log/cryptohaz-medium-proxmox-ve-journal-e1000e-1f.6-eno1-unit-hang-fields-unindented-"
                  "pci-status-twice.txt"):
        "one journal line above e1000e's register dump pasted without heads: a wrapped rest ('Hardware Unit Hang:') "
        "cannot be told from the dump's own unheaded lines",
    # session 29: captures whose outer decoration a habit would come inside of, never before
    **{(habit, "round2/sinfo/clipccbench-claude-code-transcript-sinfo-o-P-D-N-G-l-C-all-gpu-g001-005-48-cpus-other-"
               "lg001-002-48-other-folded.txt"):
       "a coding agent's transcript ('● Bash(...)', its '⎿' result marker): the agent's display is the outer frame, a "
       "launcher's prefix, a time or a quote would come inside its result, never before its call line"
       for habit in ("pdsh", "srun-l", "srun-l-wide", "mpirun-tag", "quoted", "runner-time", "kubectl-timestamps",
                     "ts", "journal", "compose", "kubectl-prefix", "ansible", "pssh-i", "dshbak", "indent4",
                     "tab-indent", "prompt", "glyph-prompt", "notebook", "gentoo-prompt", "line-ticks", "details",
                     "fence", "watch", "ssh-known-hosts", "sudo-password", "kubectl-container", "srun-allocation",
                     "setlocale", "container-banner", "container-banner-srun-l", "ssh-known-hosts-pdsh", "docker-pull",
                     "pyxis", "apptainer", "ssh-closed", "kubectl-run-rm", "script", "ansible-debug", "ansible-v",
                     "ansible-yaml", "ansible-o", "ts-syslog", "page-copy", "html-source")},
    **{(habit, cid): "a mail's wrapped excerpt (a wrapped line's rest carries no time): a time before every line would "
                     "come before the mail's wrap, an order no paste has; the rests then read as log lines of their own"
       for cid in ("round2/kernel-log/iwl2025-molgen-optiplex-7071-i219-lm-journal-bracket-ellipsis-link-up-1000-down-"
                   "up-100-mbps-wrapped.txt",
                   "round2/kernel-log/linuxpci2023-intel-dg2-a770-vfio-pci-6.2-dll-link-active-not-set-d3cold-to-d0-"
                   "device-inaccessible-wrapped.txt",
                   "round2/kernel-log/nouveau2022-legion5pro-rtx3070m-logoff-d3cold-to-d0-config-space-inaccessible-"
                   "timer-stalled-g84-bar-flush-warning-wrapped.txt")
       for habit in ("runner-time", "kubectl-timestamps", "journal")},
    **{(habit, "round2/kernel-log/linuxpci2023-bz216863-thinkpad-tb4-dock-journal-aer-multiple-corrected-rollover-"
               "timeout-quoted.txt"):
       "a bug tracker's quoted reply ('> ' on every line): the quote is the outer decoration, an indentation would "
       "come inside it; and a mail's wrap of it would leave its rests without the quote mark (not undone: a wrapped, "
       "prefixed paste)"
       for habit in ("indent4", "tab-indent", "mail-wrap")},
    ("mail-wrap", "round2/nccl-log/azuremlassets302-deepspeed-pdsh-ip-prefix-2-nodes-msccl-2.12.12-ib-disable-1-socket-"
                  "eth0-cut.txt"):
        "a launcher's or reply's prefix on every line: the wrap's rests lack it, so it is on too few lines to be told "
        "from text (not undone: a wrapped, prefixed paste)",
    ("journal", "round2/kernel-log/ompiusers12907-2010-spinoza-syslogd-wall-messages-invalid-opcode-oops-interleaved-"
                "mpiexec-segfault.txt"):
        "syslogd's console broadcast ('Message from syslogd@spinoza at ...', then ' kernel:...') is what a terminal "
        "shows; a journal's head before each of its lines is no paste any terminal or journal prints",
    **{(habit, "round2/proc-limits/ompiusers2012-20105-digest-quoted-gt-ulimit-a-returns-label-misaligned-columns-"
               "memlock-32-rhel4-cloud.txt"):
       "a mail digest's quoted reply ('> ' on every line, its first the label 'ulimit -a returns:'): the quote is the "
       "outer decoration, an indentation would come inside it, never before it"
       for habit in ("indent4", "tab-indent")},
    **{(habit, "round2/ib_write_bw/strixhalowiki-bare-command-then-one-row-65536-3293.63-mibs-fdr-cx3-behind-pcie3-x4-"
               "no-header.txt"):
       "a '$ ' prompt line, then perftest's '#bytes' header as the output's first line: behind a time or a pod's tag "
       "on every line (no terminal prints a prompt there) the '#' line reads as a comment under a bare command line"
       for habit in ("ts", "kubectl-prefix")},
    **{(habit, "round2/sinfo/ozstar-guide-sinfo-nl-2018-percent-prompt-elided-idle.txt"):
       "a csh '%' prompt line inside the paste: a log that puts a time or a service before every line is no "
       "terminal, and prints no prompt" for habit in ("runner-time", "kubectl-timestamps", "ts")},
    **{(habit, cid):
       "the page's author wrote the command's output as a '# ' comment under a bare command line: no log "
       "prints that" for habit in ("ts", "ts-syslog", "kubectl-prefix") for cid in (
           "round2/nvidia-smi/wanpihou-570-failed-to-initialize-nvml-version-mismatch-hash-comment.txt",
           "round2/kernel-log/wanpihou-dmesg-grep-nvrm-api-mismatch-570.133-vs-570.124-hash-comment.txt")},
    **{("mail-wrap", f"round2/{name}.txt"):
       "a launcher's or reply's prefix on every line: the wrap's rests lack it, so it is on too few lines to be "
       "told from text (not undone: a wrapped, prefixed paste)" for name in (
           "nccl-log/awsk8stester464-indented-mpi-prefix-two-workers-using-network-socket",
           "nccl-log/awsofi67-pdsh-prefix-p4d-no-optimal-provider",
           "nccl-log/nccl1710-quoted-autolinked-access-violation-wq-status9",
           "nccl-log/raylightning24-pid-prefix-2.7.8-two-gpu-pc-p2p-ipc-peer-access-not-supported-cut",
           "kernel-log/ucx7738-pdsh-b1360-mlx5-0000-61-create-dct-cmd-timeout-no-done-completion-cut",
           "kernel-log/linuxrdma2020-store01-quoted-prompt-journalctl-b-1-grep-mlx5-cx4-cmd-entry-alloc-fail-ipoib-"
           "intf-alloc-failed",
           "kernel-log/iwl2021-dilfridge-quoted-dmesg-grep-igb-i350-d3cold-pcie-link-lost-nvm-checksum-probe-failed-5",
           "kernel-log/linuxpci2021-quoted-modprobe-mlx5-cx5-d8-maxcpus-8-create-eq-recovered-after-timeout-x4-"
           "outlook-wrapped",
           "nccl-log/nccl563-efa-double-pdsh-prefix-ofi-unable-to-register-memory-rc12-traceback-cut",
           "nccl-log/tcpx1-gcp-a3-gpudirecttcpx-commprogress-rx-ctrl-timeout-enp12s0-enp134s0-hour-long-init",
           "nccl-log/glm173-deepspeed-pdsh-ip-prefix-docker-595d69b310a0-bootstrap-connect-172.17.0.6-no-route-to-"
           "host-two-ranks",
           "nccl-log/nccl394-quoted-gt-prefix-pdsh-node01-prefix-gid-table-change-then-completion-error12-vendor129-"
           "cut",
           "kernel-log/gpud348-quoted-ctime-host-ny2g1r12hh2-one-mlx5-5c-00.0-insufficient-slot-power-27w",
           "nccl-log/stackhpc-k8s-rdma-horovod-ib-2pod-4-p100-each-sriov-vf-timestamp-tag-prefix-unable-to-open-other-"
           "mlx5-net-ib-mlx5-3-mlx5-2-rings-1175-img-s",
           "kernel-log/linuxpci-tushardave-nvme-behind-broadcom-switch-triple-quoted-nbsp-timestamps-dpc-malftlp-"
           "disabling-device-after-reset-failure")},
    **{(habit, cid):
       "the paste is a mail reply's quote ('> ' before every line): an indentation comes inside the quote, after "
       "its '> ', never before it" for habit in ("indent4", "tab-indent") for cid in (
           "round2/kernel-log/linuxpci-tushardave-nvme-behind-broadcom-switch-triple-quoted-nbsp-timestamps-dpc-"
           "malftlp-disabling-device-after-reset-failure.txt",
           "round2/lspci/linuxpci-pilcher-quadro-p1000-vfio-pci-gt-quoted-vvvxx-gpu-and-audio-hexdump-2-5gts-idle-"
           "x16.txt",
           "round2/ip-link/kata414-quoted-reply-backticks-enp137s0f0-pf-no-up-flag-with-vf0-link-state-auto-enp137s0f2-"
           "down.txt",
           "round2/nvidia-smi/zyanham-mytools-vitisai-notes-gt-prefixed-535.113.01-rtx3060-08-00-fan-err-31c-p0-"
           "xorg.txt")},
    # blind batches 100-105 (session 25)
    **{(habit, cid):
       "the output is commented out in a source file ('# ' or '//' before every line, under the author's own code): "
       "a terminal's prefix, time, prompt or fence comes inside the comment, never before its mark"
       for habit in _OUTSIDE_HABITS for cid in (
           "round2/nvidia-smi-q-xml/aixcontainer-zju-xmlutils-slash-commented-440.31-quadro-p5000-fan-unknown-error-"
           "beside-k20c-v10-dtd.txt",
           "round2/nvidia-smi-q-xml/micromagnum-hash-commented-gpu-element-tesla-m2090-14-00-p0-98pct-207w-exclusive-"
           "thread-temp-na.txt",
           "round2/nvidia-smi/mxochicale-installing-cuda-driver-bash-hash-commented-before-reboot-nvml-mismatch-library-"
           "580.173.txt")},
    ("elision", "round2/nvidia-smi-q-xml/aixcontainer-zju-xmlutils-slash-commented-440.31-quadro-p5000-fan-unknown-"
                "error-beside-k20c-v10-dtd.txt"):
        "the output is commented out with '//' on every line: the author's elision would be commented too ('// ...'); "
        "a bare '...' among the commented lines leaves a block that is no longer commented out as a whole",
    ("mail-wrap", "round2/kernel-log/netdev2024-mlx5-teardown-hca-timeout-tear-down-hca-failed-then-poll-health-page-"
                  "fault-oops-s2600wft-no-timestamps.txt"):
        "a log without timestamps whose oops dump (registers, call trace) is most of it: the wrap's rest of the mlx5 "
        "'TEARDOWN_HCA(0x103) timeout' line cannot be told from the dump's own lines, so that firmware line stays cut "
        "(the verdict holds: failed, by the oops)",
    ("mail-wrap", "round2/kernel-log/gpud-sxid-readme-blockquote-xid79-9100-then-sxid-20034-ltssm-fault-up-three-"
                  "nvswitches.txt"):
        "a Markdown blockquote ('> ' before every line): the wrap's rests come without the quote mark a mail client "
        "would put before them, so no line is read as the log's own and none is joined; the wrap cuts each SXid line "
        "before its 'Fatal' (the Xid 79 line keeps its number: the verdict, failed, holds)",
    ("mail-wrap", "round2/kernel-log/devopsrustem-slurmv4-aihub0007-systemctl-status-fabricmanager-nvswitch-non-fatal-"
                  "22013-physical-id-3-port-60.txt"):
        "systemctl status's unit header (eleven lines) outnumbers the journal's own lines by more than a quarter, so "
        "unwrap_log leaves the wrap: the fabric manager's line loses its switch's bus id to the next line",
    ("mail-wrap", "round2/nccl-log/pytorchoperator202-eks-master-pod-mnist-download-lines-then-net-socket-lo-127.0.0.1-"
                  "and-eth0-cut.txt"):
        "the job's own download and progress lines outnumber NCCL's: a wrapped NCCL line's rest cannot be told from "
        "them (only a log is unwrapped), so the interface list after 'NET/Socket :' is lost",
    **{(habit, "round2/scontrol-node/rioyokotalab-website-t8-sinfo-pipe-line-down-star-then-show-node-rtx6000-ada-down-"
               "not-responding-8-gpus-md-fences.txt"):
       "a Markdown page's label lines and fences around two tools' outputs: a terminal's prefix, time or banner "
       "comes on the terminal's lines, never on the page's prose" for habit in _OUTSIDE_HABITS},
    ("elision", "round2/scontrol-node/rwthi6-report-gpus-claix23-22.05-n23g0002-mixed-n23g0003-down-drain-not-"
                "responding-too-hot-hash-comments.txt"):
        "a comment block ('# ' before every line): a paster's '...' inside it is commented too, never bare",
    ("mail-wrap", "round2/nccl-log/gnosia93-kr-eks-llama3-8b-deepspeed-net-ofi-efa-unresponsive-receiver-handshake-"
                  "failed-ncclremoteerror.txt"):
        "the wrap cuts the plugin's WARN before 'completed with error' (its rest carries no NCCL prefix to be joined "
        "by): the cut line reads as a plain WARN beside the fatal ones, the verdict stays failed",
    **{(habit, "round2/kernel-log/gpuoperator2511-dmesg-grep-line-numbered-wrapped-mlx5-gen5-gen4-x16-slot-power-not-"
               "advertised.txt"):
       "the lines carry a numbered view's line numbers (the text was copied from an editor, its long lines already "
       "wrapped): a prompt or indentation would come before the numbers, a page copy or mail wrap into them"
       for habit in ("indent4", "tab-indent", "prompt", "glyph-prompt", "notebook", "page-copy", "mail-wrap",
                     "gentoo-prompt", "line-ticks")},
    ("journal", "round2/kernel-log/linuxpci2023-syslog-node-4-mail-wrapped-pciehp-slot14-link-down-nvme-vfio-reinsert-"
                "no-link.txt"):
        "a mail client wrapped the syslog lines: a service's journal head before every line puts one before each "
        "wrapped rest too, which no journal writes (the wrap comes after the head)",
    ("mail-wrap", "seen/nccl-log/nccl2013-bracket-datetime-redacted-pid-ibv-modify-qp-110-one-line.txt"):
        "one NCCL line, and the wrap cuts it between 'NCCL' and 'WARN': no line of the paste is an NCCL line",
    **{(habit, "round2/kernel-log/gpud-dmesg-decode-iso-boot-h100-mlx5-insufficient-slot-power.txt"):
       "a kernel log's lines keep an ISO time before them as their own (journalctl -o short-iso): the habit's "
       "one time on all 2381 lines puts the boot's link-ups into one second, a flap burst" for habit in
       ("runner-time", "kubectl-timestamps", "journal")},
    **{(habit, "network/show_gids/idx41646267603-c-comment-star-prefix.txt"):
       "the capture is quoted inside a C comment (' * ' on every line): a prompt or indentation comes inside "
       "the comment, after its ' * '" for habit in ("indent4", "prompt", "tab-indent")},
    # blind batches 80-92 (session 23)
    **{("mail-wrap", cid):
       "most of the wrapped log's lines are neither NCCL's (the application's, a launcher's) nor read as a wrap's "
       "rest: unwrap_log joins only where at most a quarter of the lines are neither, so its wrapped channel and "
       "WARN lines stay cut" for cid in (
           "round2/nccl-log/bigscience-jeanzay-4node-a100-opa-hfi1-net-ib-no-gdrdma-allreduce-bench-42gbps.txt",
           "round2/nccl-log/fastsafetensors36-dgx-spark-2node-ray-nested-prefixes-torn-receive-line-net-ib-0.txt",
           "round2/nccl-log/pwhmass-hygon-dcu-rccl-2.13.4-bluerdma-mock-verbs-force-ib-rust-panic-addrinuse-recv-reset-"
           "by-peer-abort.txt")},
    ("mail-wrap", "round2/kernel-log/pfring277-no-ts-module-load-i40e-xl710-eth10-40g-link-up-pcie-5gts-x8-bandwidth-"
                  "insufficient-move-device-cut.txt"):
        "kernel lines without a time (and a module's banner lines between them): a wrapped line's rest cannot be told "
        "from the next line and joined back, so the driver's PCIe warning and its port's link line are cut",
    **{(habit, "round2/kernel-log/emaste-oci-a1-metal-freebsd14-arm64-dmesg-mlx5-two-ports-plugged-link-down-before-"
               "ifconfig.txt"):
       "a FreeBSD dmesg: no line of it is a Linux log line as pasted (cannot judge); a Linux head before each makes "
       "its mce link lines readable" for habit in ("runner-time", "kubectl-timestamps", "journal")},
    **{(habit, "round2/kernel-log/pvefor179366-b300-vfio-guest-dmesg-grep-no-ts-pci-io-region-invalid-probe-failed-"
               "minus1-none-initialized.txt"):
       "a grep of dmesg without times: the probe-failed line is read as the wrapped rest of the NVRM line before it; "
       "with a head on each line it is its own (the verdict holds: failed)" for habit in (
           "runner-time", "kubectl-timestamps", "journal")},
    **{(habit, "round2/kernel-log/skyao-cx6-200g-ocp3-adapter-z690-pcie4-x16-slot-dmesg-grep-mlx5-limited-8gts-x16-"
               "capable-16gts-link-up.txt"):
       "the paste opens with its shell command: with a head on every line the flap counter reads the port's link "
       "lines it does not read as pasted (the verdict holds: degraded)" for habit in (
           "runner-time", "kubectl-timestamps", "journal")},
    ("page-copy", "round2/lspci/wutz-k8s-in-action-elbencho-runbook-nvme-5a-00-0-16gts-x1-downgraded-of-x4-physical-"
                  "slot-114.txt"):
        "a runbook's prose and grep'd LnkCap/LnkSta lines: without their indentation the link lines read as the "
        "prose's, not as the selected device's section",
    **{("page-copy", cid): "lspci -tv's tree: the columns are its structure (a bus's devices stand below its first "
                           "one); a page copy that collapses runs of blanks leaves no column to tell a device's bus by"
       for cid in ("round2/lspci/nccltests36-addyladdy-azure-nc24rs-v3-dollar-prompt-lspci-tv-four-v100-pcie-own-"
                   "domains-cx3-vf-hyperv-root.txt",
                   "round2/lspci/linuxarm2019-hisilicon-d05-root-prompt-lspci-tv-cx5-two-pfs-two-vfs-empty-root-ports-"
                   "truncated-names.txt")},
}


def _lines(text: str) -> list[str]:
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


def _join(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def _each_line(prefix: str) -> Callable[[str, str], str | None]:
    """The prefix on every line, blank ones too (pdsh/clush/srun/mpirun print it for an empty line)."""
    return lambda text, kind: _join([prefix + ln for ln in _lines(text)])


def indent4(text: str, kind: str) -> str:
    return _join(["    " + ln if ln.strip() else ln for ln in _lines(text)])


def fence(text: str, kind: str) -> str:
    return "```console\n" + _join(_lines(text)) + "```\n"


def crlf(text: str, kind: str) -> str:
    return _join(_lines(text)).replace("\n", "\r\n")


def trailing_blanks(text: str, kind: str) -> str:
    return _join([ln + "  " if ln.strip() else ln for ln in _lines(text)]) + "\n\n \n"


def prompts(text: str, kind: str) -> str | None:
    cmd = COMMANDS.get(kind)
    if cmd is None or clean_capture(text, kind).commands:
        return None  # the capture has its own prompt and command: one is what a terminal shows
    return f"[root@{HOST} ~]# {cmd}\n" + _join(_lines(text)) + f"[root@{HOST} ~]# \n"


def glyph_prompt(text: str, kind: str) -> str | None:
    """The command under oh-my-zsh's prompt (a conda env, the arrow, the working directory, a git mark)."""
    cmd = COMMANDS.get(kind)
    if cmd is None or clean_capture(text, kind).commands:
        return None
    return f"(base) \u279c  ~ git:(main) \u2717 {cmd}\n" + _join(_lines(text)) + "(base) \u279c  ~ \n"


def notebook(text: str, kind: str) -> str | None:
    """A notebook cell's shell escape above its output (Jupyter, Colab: ``!nvidia-smi``)."""
    cmd = COMMANDS.get(kind)
    if cmd is None or clean_capture(text, kind).commands:
        return None
    return f"!{cmd}\n" + _join(_lines(text))


def gentoo_prompt(text: str, kind: str) -> str | None:
    """The command under Gentoo's root prompt (host, working directory, ``#``)."""
    cmd = COMMANDS.get(kind)
    if cmd is None or clean_capture(text, kind).commands:
        return None
    return f"{HOST} /var/log/slurm # {cmd}\n" + _join(_lines(text))


def line_ticks(text: str, kind: str) -> str | None:
    """Every non-blank line in its own markdown code span (a reporter who backticks line by line); not for a
    capture that holds Markdown's backticks already (a fence or code span of its own), nor one with a terminal's
    carriage returns (a web page's code span holds none)."""
    if "`" in text or "\r" in text:
        return None
    return _join([f"`{ln}`" if ln.strip() else ln for ln in _lines(text)])


def ansible_debug(text: str, kind: str) -> str:
    """A registered result's lines as a ``debug: var=out.stdout_lines`` task prints them (the default callback)."""
    rows = ",\n".join("        " + json.dumps(ln) for ln in _lines(text))
    return (f"TASK [debug] {'*' * 67}\nok: [{HOST}] => {{\n    \"out.stdout_lines\": [\n{rows}\n    ]\n}}\n\n"
            f"PLAY RECAP {'*' * 69}\n{HOST}                 : ok=2    changed=1    unreachable=0    failed=0\n")


def ansible_v(text: str, kind: str) -> str:
    """A command task's whole result on its host's line, as ``ansible-playbook -v`` prints it."""
    out = "\n".join(_lines(text))
    result = {"changed": True, "cmd": [COMMANDS.get(kind) or kind], "rc": 0, "stderr": "", "stderr_lines": [],
              "stdout": out, "stdout_lines": _lines(text)}
    return f"changed: [{HOST}] => {json.dumps(result)}\n"


class _LiteralDumper(yaml.SafeDumper):
    """PyYAML's safe dumper writing a string of several lines as a literal block, as Ansible's YAML callback does."""


_LiteralDumper.add_representer(str, lambda dumper, value: dumper.represent_scalar(
    "tag:yaml.org,2002:str", value, style="|" if "\n" in value else None))


def ansible_yaml(text: str, kind: str) -> str:
    """A command task's result in Ansible's YAML format (``callback_result_format = yaml``): ``stdout`` as a block."""
    result = {"changed": True, "cmd": [COMMANDS.get(kind) or kind], "rc": 0, "stderr": "", "stderr_lines": "<omitted>",
              "stdout": "\n".join(_lines(text)), "stdout_lines": "<omitted>"}
    body = yaml.dump(result, Dumper=_LiteralDumper, default_flow_style=False, width=10_000, allow_unicode=True)
    return f"changed: [{HOST}] => changed=true \n" + "".join("  " + ln if ln.strip() else ln
                                                               for ln in body.splitlines(keepends=True))


def ansible_one_line(text: str, kind: str) -> str:
    """``ansible -o``: the host's whole output on one line, its newlines written ``\\n`` (a carriage return ``\\r``)."""
    return f"{HOST} | CHANGED | rc=0 | (stdout) " + "\\n".join(ln.replace("\r", "\\r") for ln in _lines(text)) + "\n"


def ts_syslog(text: str, kind: str) -> str | None:
    """moreutils ts' default time (``Mar 05 10:21:33 ``) before every line; a kernel log's own lines start with one."""
    if kind in STAMPED_KINDS:
        return None
    return _join([f"Mar 05 10:21:{i % 60:02d} {ln}" for i, ln in enumerate(_lines(text))])


def details(text: str, kind: str) -> str:
    """A GitHub issue's collapsed section around the fenced paste (the Markdown's HTML tags kept)."""
    return (f"<details>\n<summary>{COMMANDS.get(kind, 'output')}</summary>\n\n```\n" + _join(_lines(text))
            + "```\n\n</details>\n")


def _banner(header: str) -> Callable[[str, str], str | None]:
    """A parallel shell's or Ansible's header above the host's output (the output itself unprefixed)."""
    return lambda text, kind: header + _join(_lines(text))


def quoted(text: str, kind: str) -> str:
    """The paste quoted in a reply ('> ' on every line, a bare '>' on a blank one: how mail and forum editors quote)."""
    return _join(["> " + ln if ln.strip() else ">" for ln in _lines(text)])


def tab_indent(text: str, kind: str) -> str:
    return _join(["\t" + ln if ln.strip() else ln for ln in _lines(text)])


def page_copy(text: str, kind: str) -> str:
    """A web page's or pastebin's copy of a paste: every run of blanks one space, no indentation."""
    return _join([" ".join(ln.split()) for ln in _lines(text)])


def no_break_spaces(text: str, kind: str) -> str:
    """A web page's copy: runs of blanks rendered as no-break spaces (U+00A0) with a space."""
    return text.replace("  ", "\xa0 ")


def typeset(text: str, kind: str) -> str:
    """A blog's typesetting of a paste outside a code block (WordPress' wptexturize, smart quotes)."""
    text = text.replace("---", "\u2014").replace("--", "\u2013").replace("...", "\u2026")
    text = re.sub(r'"([^"\n]*)"', "\u201c\\1\u201d", text)
    return text.replace("'", "\u2019")


#: an NGC container's banner before the tool's output (``docker run nvcr.io/nvidia/pytorch ... nvidia-smi``)
NGC_BANNER = """
=============
== PyTorch ==
=============

NVIDIA Release 24.01 (build 80741402)
PyTorch Version 2.2.0a0+81ea7a4

Container image Copyright (c) 2023, NVIDIA CORPORATION & AFFILIATES. All rights reserved.

Copyright (c) 2014-2023 Facebook Inc.
All rights reserved.

Various files include modifications (c) NVIDIA CORPORATION & AFFILIATES.  All rights reserved.

This container image and its contents are governed by the NVIDIA Deep Learning Container License.
By pulling and using the container, you accept the terms and conditions of this license:
https://developer.nvidia.com/ngc/nvidia-deep-learning-container-license

NOTE: The SHMEM allocation limit is set to the default of 64MB.  This may be
   insufficient for PyTorch.  NVIDIA recommends the use of the following flags:
   docker run --gpus all --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 ...

"""


def html_source(text: str, kind: str) -> str:
    """A copy of a page's HTML source: '<', '>' and '&' escaped as entities."""
    return html.escape(text, quote=False)


HABITS: dict[str, Callable[[str, str], str | None]] = {
    "pdsh": _each_line(f"{HOST}: "),
    "srun-l": _each_line("0: "),
    "srun-l-wide": _each_line("  3: "),
    "mpirun-tag": _each_line("[1,0]<stdout>:"),
    "crlf": crlf,
    "indent4": indent4,
    "fence": fence,
    "prompt": prompts,
    "glyph-prompt": glyph_prompt,
    "notebook": notebook,
    "gentoo-prompt": gentoo_prompt,
    "line-ticks": line_ticks,
    "details": details,
    "trailing-blanks": trailing_blanks,
    "quoted": quoted,
    "tab-indent": tab_indent,
    "no-break-spaces": no_break_spaces,
    "page-copy": page_copy,
    "ansible": _banner(f"{HOST} | CHANGED | rc=0 >>\n"),
    "pssh-i": _banner(f"[1] 10:21:33 [SUCCESS] {HOST}\n"),
    "dshbak": _banner(f"----------------\n{HOST}\n----------------\n"),
    "runner-time": _each_line("2024-03-05T10:21:33.1234567Z "),
    "kubectl-timestamps": _each_line("2024-03-05T10:21:33.123456789Z "),
    "ts": _each_line("[2024-03-05 10:21:33] "),
    "journal": _each_line(f"Dec 05 10:21:33 {HOST} healthcheck.sh[4242]: "),
    "compose": _each_line("trainer-1  | "),
    "kubectl-prefix": _each_line("[pod/trainer-0/main] "),
    "ts-syslog": ts_syslog,
    "ansible-debug": ansible_debug,
    "ansible-v": ansible_v,
    "ansible-yaml": ansible_yaml,
    "ansible-o": ansible_one_line,
    "html-source": html_source,
    "typeset": typeset,
    "watch": _banner(f"Every 2.0s: nvidia-smi                    {HOST}: Thu Mar  5 10:21:33 2024\n\n"),
    "ssh-known-hosts": _banner(f"Warning: Permanently added '{HOST},10.0.0.7' (ECDSA) to the list of known hosts.\n"),
    "sudo-password": _banner("[sudo] password for admin: \n"),
    "kubectl-container": _banner('Defaulted container "nvidia-driver-ctr" out of: nvidia-driver-ctr, '
                                 "k8s-driver-manager (init)\n"),
    "srun-allocation": _banner("srun: job 123456 queued and waiting for resources\n"
                               "srun: job 123456 has been allocated resources\n"),
    "setlocale": _banner("-bash: warning: setlocale: LC_ALL: cannot change locale (en_US.UTF-8)\n"),
    "container-banner": _banner(NGC_BANNER),
    "container-banner-srun-l": lambda text, kind: _each_line("0: ")(NGC_BANNER + _join(_lines(text)), kind),
    "docker-pull": _banner("Unable to find image 'nvidia/cuda:12.2.0-base-ubuntu22.04' locally\n"
                           "12.2.0-base-ubuntu22.04: Pulling from nvidia/cuda\n3dd181f9be59: Pulling fs layer\n"
                           "3dd181f9be59: Verifying Checksum\n3dd181f9be59: Download complete\n"
                           "3dd181f9be59: Pull complete\nDigest: sha256:" + "4b" * 32 + "\n"
                           "Status: Downloaded newer image for nvidia/cuda:12.2.0-base-ubuntu22.04\n"),
    "pyxis": _banner("pyxis: importing docker image: nvcr.io#nvidia/pytorch:24.01-py3\n"
                     "pyxis: imported docker image: nvcr.io#nvidia/pytorch:24.01-py3\n"),
    "apptainer": _banner("INFO:    Converting SIF file to temporary sandbox...\n"),
    "ssh-closed": lambda text, kind: _join(_lines(text)) + f"Connection to {HOST} closed.\n",
    "kubectl-run-rm": lambda text, kind: _join(_lines(text)) + 'pod "nvidia-smi" deleted\n',
    "script": lambda text, kind: ('Script started on 2024-03-05 10:21:33+00:00 [TERM="xterm-256color" '
                                  'TTY="/dev/pts/0" COLUMNS="120" LINES="40"]\n' + _join(_lines(text))
                                  + 'Script done on 2024-03-05 10:22:01+00:00 [COMMAND_EXIT_CODE="0"]\n'),
    "ssh-known-hosts-pdsh": lambda text, kind: _each_line(f"{HOST}: ")(
        f"Warning: Permanently added '{HOST}' (ED25519) to the list of known hosts.\n" + _join(_lines(text)), kind),
}


#: a log head on every line of a mail-wrapped kernel log: the wrap's rests get a head too, so they read as lines of
#: their own, not as the rest of the line above (the wrap is undone only where the rests carry no head)
EXCLUDED.update({
    (habit, cid): "a mail-wrapped kernel log: with a log head before every line the wrap's rests read as lines of "
                  "their own, so the hung task's (or the 'limited by' line's) wrapped rest is no longer joined to it"
    for habit in ("runner-time", "kubectl-timestamps", "journal")
    for cid in ("round2/kernel-log/nvmelist2020-nvmet-rdma-target-reboot-mlx5-fast-force-teardown-failed-bond-slaves-"
                "tx-timeout-reopen-err-5-hung-task-wrapped.txt",
                "round2/kernel-log/nvmelist2020-pm1733-hash-prompt-dmesg-grep-2d-00-0-16gts-x4-limited-by-8gts-at-2c-00-"
                "0-bar6-bar7-no-space-then-assigned-wrapped.txt")})


#: every habit on a capture that is a source file's string literal: the literal is its outer decoration
EXCLUDED.update({
    (habit, "round2/nvidia-smi/aixcontainer-zju-test-java-string-440.31-quadro-p5000-03-00-fan-err-100pct-beside-"
            "idle-k20c.txt"):
    "the paste is a source file's string literal (each line a quoted string with its escaped line end and a '+'): a "
    "terminal's prefix, indentation, prompt or fence comes inside the literal, never before it" for habit in HABITS})


#: every habit on a one-line error between an inline code span of its command and the output's own fence: the span is
#: read as the command line only where it opens the paste (under a prefix or an indentation it is the paste's first
#: line of content; session 32, blind batch 159)
EXCLUDED.update({
    (habit, "round2/nvidia-smi-q/nvdocker1553-backticked-smi-a-i-0-device-handle-09-00-unknown-error-failed-gpu.txt"):
    "the command as an inline code span above a fenced one-line output: a prefix, an indentation or another fence "
    "around both leaves the span as the paste's first line, which no -q report starts with" for habit in HABITS})


def elide(text: str, mark: str = "...") -> tuple[str, str] | None:
    """(the capture with its middle third replaced by a ``...`` line (or another cut ``mark``), the same cut without
    the line); None for a capture too short to elide."""
    lines = _lines(text)
    if len(lines) < 24:
        return None
    a, b = len(lines) // 3, 2 * len(lines) // 3
    return _join([*lines[:a], mark, *lines[b:]]), _join(lines[:a] + lines[b:])


def captures() -> list[tuple[str, str, str]]:
    """(id, KIND, spec key) of every allowed capture: corpus parts without their hold-out, labelled sets."""
    out = []
    for part in ("seen", "round2", "gpu", "network"):
        held = bench_corpus.load_holdout(part)
        out += [(f"{part}/{rel}", rel.split("/", 1)[0], part) for rel in bench_corpus.corpus_files(part)
                if rel not in held]
    from test_labelled import manifest

    for set_name in ("set1", "set2"):
        out += [(f"labelled/{set_name}/{rel}", kind, set_name) for rel, kind, _exp in manifest(set_name)]
    return out


@functools.cache
def _expect(part: str) -> dict[str, Any]:
    return bench_corpus.load_expect(part)


def body(cid: str) -> str:
    """The capture text without the file's provenance header."""
    part, rel = cid.split("/", 1)
    if part == "labelled":
        raw = (LABELLED / rel).read_bytes().decode("utf-8", errors="replace")
        return raw.split("\n", 1)[1] if raw.startswith("# source:") else raw
    return bench_corpus.read_capture(bench_corpus.CORPUS / part / rel)


def spec(cid: str) -> dict[str, Any]:
    part, rel = cid.split("/", 1)
    if part == "labelled":
        from test_labelled import expectations

        return dict(expectations(rel.split("/", 1)[0]))
    return dict(_expect(part)[rel].get("spec") or {})


def verdict(cid: str, kind: str, text: str) -> tuple[str, frozenset[str]]:
    """Host status and the checks of its real findings, judged as ``clusterctl analyze`` does."""
    checks.load_all()
    exp = spec(cid)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / HOST).mkdir()
        (Path(tmp) / HOST / f"{kind}.txt").write_bytes(text.encode("utf-8", errors="replace"))
        rep = engine.analyze_dir(tmp, exp, jobs=1).hosts[HOST]
    return rep.status, frozenset(f.check for f in rep.findings if f.check not in NOT_A_VERDICT)


#: every allowed capture (about 460; each habit through the engine: about 15 s here)
CHOSEN = captures()


@pytest.mark.parametrize(("cid", "kind", "_part"), CHOSEN, ids=[c[0] for c in CHOSEN])
def test_habits_keep_the_verdict(cid: str, kind: str, _part: str) -> None:
    text = body(cid)
    want = verdict(cid, kind, text)
    wrong: dict[str, object] = {}
    for name, habit in HABITS.items():
        if (name, cid) in EXCLUDED:
            continue
        pasted = habit(text, kind)
        if pasted is None:
            continue
        got = verdict(cid, kind, pasted)
        if got != want:
            wrong[name] = got
    cut = elide(text)
    if cut is not None and ("elision", cid) not in EXCLUDED:
        why = elision_wrong(cid, kind, want, *cut)
        if why:
            wrong["elision"] = why
    assert not wrong, f"as is: {want}; {wrong}"


def elision_wrong(cid: str, kind: str, want: tuple[str, frozenset[str]], elided: str, plain: str) -> str:
    """What an elision did that it may not, or "". ``plain`` is the same cut without the ``...`` line:
    what is left of the capture. The ``...`` may lower coverage, nothing else: no finding the capture
    and what is left of it both lack; every finding of the capture whose evidence is left (``plain``
    has it too) kept; read whenever what is left is read (never a parse failure for the marker)."""
    got, left = verdict(cid, kind, elided), verdict(cid, kind, plain)
    if not got[1] <= want[1] | left[1]:
        return f"invented {sorted(got[1] - want[1] - left[1])}"
    if not want[1] & left[1] <= got[1]:
        return f"lost {sorted(want[1] & left[1] - got[1])} whose evidence is left ({got})"
    if parses(kind, plain) and not parses(kind, elided):
        return "the '...' line made it unreadable"
    return ""


def parses(kind: str, text: str) -> bool:
    try:
        registry.parse(kind, text)
    except ParseError:
        return False
    return True


# --- the reading-layer rules the habits above found missing, each on a real capture --------------------

def _same_verdict(cid: str, kind: str, pasted: str) -> None:
    assert verdict(cid, kind, pasted) == verdict(cid, kind, body(cid))


def test_srun_label_padded_to_the_task_count_width() -> None:
    # srun -l pads the task number to the width of the largest ('  3: ' in a step of 100+ tasks)
    cid = "round2/ibstat/archwiki-mlx4-mt25418-ddr-port1-active-port2-polling.txt"
    assert verdict(cid, "ibstat", body(cid))[0] == "failed"
    _same_verdict(cid, "ibstat", HABITS["srun-l-wide"](body(cid), "ibstat") or "")
    assert clean_capture(" 3: a\n 3: b\n", "nvidia-smi").hosts == ["3"]


def test_nested_launcher_prefixes() -> None:
    # a capture srun -l already labelled ('0: ...'), pasted from pdsh or Open MPI's tagged output
    cid = "round2/nccl-tests/awsome-p4de-2node-srun-0-prefix-8b-2g-busbw78.txt"
    for habit in ("pdsh", "mpirun-tag"):
        _same_verdict(cid, "nccl-tests", HABITS[habit](body(cid), "nccl-tests") or "")
    assert clean_capture("node7: 0: a\nnode7: 0: b\n", "nvidia-smi").hosts == ["node7", "0"]


@pytest.mark.parametrize("habit", ["pdsh", "srun-l", "srun-l-wide", "mpirun-tag"])
def test_prefix_of_a_lone_line(habit: str) -> None:
    # pdsh -w gpu[01-64] nvidia-smi: one line per host, the lost GPU's line alone
    cid = "seen/nvidia-smi/ogkm259-device-handle-not-found-d8-open-515.txt"
    assert verdict(cid, "nvidia-smi", body(cid))[0] == "failed"
    _same_verdict(cid, "nvidia-smi", HABITS[habit](body(cid), "nvidia-smi") or "")


@pytest.mark.parametrize(("line", "kind"), [
    ("2: eth0: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 9000 state DOWN\n", "ip-link"),  # ip link's own index
    ("ib0: Link is down\n", "kernel-log"),  # a driver's own line, not a host
    ("node07: Unable to determine the device handle for GPU 0000:D8:00.0: Not Found\n", "nvidia-smi"),
    ("NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.\n", "kernel-log"),
])
def test_a_lone_line_keeps_what_may_be_its_own_text(line: str, kind: str) -> None:
    assert clean_capture(line, kind).text == line


def test_launcher_prefix_of_an_indented_paste() -> None:
    # a pdsh capture pasted as a Markdown code block: every line '    host: ...'
    cid = "round2/nccl-log/awsofi67-pdsh-prefix-p4d-no-optimal-provider.txt"
    assert verdict(cid, "nccl-log", body(cid))[0] == "failed"
    _same_verdict(cid, "nccl-log", indent4(body(cid), "nccl-log"))


def test_grepd_key_value_lines_are_not_hosts() -> None:
    # 'lspci -vvv | grep -E "LnkSta|LnkCap"' without its prompt line: 'LnkCap: ' and 'LnkSta: ' are the tool's
    # keys, not the hosts of a parallel shell (a host holds a digit, a '-' or a '.')
    cid = "labelled/set1/lspci/lnksta-gen1-x8-downgraded-rtx3090.txt"
    bare = "".join(ln for ln in body(cid).splitlines(keepends=True) if not ln.startswith("$ "))
    assert verdict(cid, "lspci", bare) == ("failed", frozenset({"pcie_link"}))
    assert clean_capture("LnkSta: Speed 8GT/s\nLnkSta: Speed 8GT/s\n", "lspci").hosts == []
    assert clean_capture("login: a b\nlogin: c d\n", "nvidia-smi").hosts == ["login"]
    assert clean_capture("dgx3: a b\ndgx4: c d\n", "nvidia-smi").hosts == ["dgx3", "dgx4"]


def test_indented_q_report_dedented_at_its_top_level() -> None:
    # the whole 'nvidia-smi -q' report indented 4 (a Markdown code block): its nesting is read from the
    # indentation, so the common indentation goes when the report's own top-level lines sit at it
    cid = "labelled/set1/h200-live/nvidia-smi-q-under-load.txt"
    assert verdict(cid, "nvidia-smi-q", body(cid)) == ("failed", frozenset({"gpu_count"}))
    _same_verdict(cid, "nvidia-smi-q", indent4(body(cid), "nvidia-smi-q"))
    # an excerpt that starts inside a section keeps its indentation (no top-level line at it)
    excerpt = "    ECC Errors\n        Volatile\n            DRAM Uncorrectable : 0\n"
    assert clean_capture(excerpt, "nvidia-smi-q").text == excerpt


def test_dedent_after_the_prompt_lines() -> None:
    # an lspci listing pasted with a blank in front of every line, under its prompt at column 0
    cid = "seen/lspci/talos9121-h100-2330-listing-leading-space-starts-mid-paste.txt"
    _same_verdict(cid, "lspci", prompts(body(cid), "lspci") or "")


@pytest.mark.parametrize(("cid", "kind"), [
    ("seen/sinfo/sckyzo-24.11.7-h-N-o-node-reason-user-state-pipes-20-nodes.txt", "sinfo"),  # sinfo -h
    ("seen/sinfo/promslurm-h-node-comma-statelong-709-nodes-down-star-fail-star.txt", "sinfo"),
    ("round2/nccl-tests/awsome-p4de-2node-srun-0-prefix-8b-2g-busbw78.txt", "nccl-tests"),  # '...' among '0: ' rows
    ("labelled/set2/nccl-tests/eks-2node-1gpu-each-net-socket-busbw-2GBps.txt", "nccl-tests"),
])
@pytest.mark.parametrize("mark", ["...", "[snip]", "<snip>", "-- snip --", "8<----- snip -----", "(snipped)",
                                  "...(cutting a lot of informational messages)...", "[... 40 lines ...]"])
def test_elision_line_is_removed_and_recorded(cid: str, kind: str, mark: str) -> None:
    # a mail's and a forum's cut marks are elisions as '...' is (session 32: '...(cutting a lot of mpt3sas
    # informational messages)...' in a linux-pci reply, round2/kernel-log/linuxpci2021-edr-dpc-64-02-0-patched-...)
    elided, plain = elide(body(cid), mark) or ("", "")
    assert not elision_wrong(cid, kind, verdict(cid, kind, body(cid)), elided, plain)
    assert any("elided" in str(c) for c in registry.parse(kind, elided).get("cut") or [])


@pytest.mark.parametrize("mark", ["[snip]", "<snip>", "-- snip --", "...(cutting a lot of mpt3sas messages)..."])
def test_a_cut_mark_in_a_q_report_is_its_elision(mark: str) -> None:
    # nvidia-smi -q reads its '...' itself (ELISION_KINDS): another cut mark is read as one
    cid = "labelled/set1/h200-live/nvidia-smi-q-under-load.txt"
    elided, _plain = elide(body(cid), mark) or ("", "")
    assert verdict(cid, "nvidia-smi-q", elided) == ("failed", frozenset({"gpu_count"}))
    assert registry.parse("nvidia-smi-q", elided)["cut"]


def test_q_report_elided_after_its_header_keeps_its_gpu_count() -> None:
    # 'Attached GPUs : 1' stated, a '...' further down: the count is judged (1 of the inventory's 8), the cut said
    cid = "labelled/set1/h200-live/nvidia-smi-q-under-load.txt"
    elided, _plain = elide(body(cid)) or ("", "")
    assert verdict(cid, "nvidia-smi-q", elided) == ("failed", frozenset({"gpu_count"}))
    assert registry.parse("nvidia-smi-q", elided)["cut"]


@given(st.lists(st.sampled_from(["...", "…", ".", " ", "\t", "[", "]", "(", ")", "x", "\n", "....", "[...]", "(...)",
                                 "é"]), max_size=16).map("".join), st.sampled_from(["sinfo", "nvidia-smi-q"]))
@example("a\n  ...  \nb", "sinfo")
@example("a ... b\n", "sinfo")  # '...' inside a line of text: not an elision
def test_elision_gate_equals_the_line_test(text: str, kind: str) -> None:
    want = kind not in capture.ELISION_KINDS and any(capture._ELISION.match(ln) for ln in text.split("\n"))
    assert capture._elided(text, kind) == want


@pytest.mark.parametrize(("header", "host"), [
    ("gpu-node07 | CHANGED | rc=0 >>", "gpu-node07"),       # ansible -m shell / -m command
    ("gpu-node07 | FAILED | rc=1 >>", "gpu-node07"),
    ("[3] 10:21:33 [FAILURE] gpu-node07 Exited with error code 1", "gpu-node07"),  # pssh -i
    ("----------------\ngpu-node[07-08] (2)\n----------------", "gpu-node[07-08]"),  # clush -b
])
def test_a_parallel_shell_header_is_removed_and_names_its_host(header: str, host: str) -> None:
    body_text = "sinfo: error: Unable to contact slurm controller (connect failure)\n"
    got = clean_capture(f"{header}\n{body_text}", "sinfo")
    assert got.text.strip() == body_text.strip() and got.hosts == [host]


def test_dashes_around_a_tool_title_are_not_a_header() -> None:
    """ib_write_bw frames its title and its table with dashes: a title of several words is no host."""
    text = ("-" * 40 + "\n                    RDMA_Write BW Test\n" + "-" * 40 + "\n"
            " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n")
    assert clean_capture(text, "ib_write_bw").text == text


def test_a_lone_quoted_line_is_unquoted_but_not_a_prompt() -> None:
    line = "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
    assert clean_capture(f"> {line}\n", "kernel-log").text.strip() == line
    assert clean_capture("> nvidia-smi\n", "nvidia-smi").commands == ["nvidia-smi"]


def test_a_log_time_before_every_line_comes_off_but_a_kernel_logs_own_stays() -> None:
    """A runner's / kubectl's time before each line is no part of the tool's text; a kernel log's
    ISO time (journalctl -o short-iso, dmesg --time-format iso) is its own and dates its events."""
    lines = ["mlx5_0 port 1 ==> ib0 (Up)", "mlx5_1 port 1 ==> ib1 (Down)"]
    stamped = "".join(f"2024-03-05T10:21:3{i}.1234567Z {ln}\n" for i, ln in enumerate(lines))
    got = clean_capture(stamped, "ibdev2netdev")
    assert got.text == "\n".join(lines) + "\n" and got.hosts == []
    kernel = ("2024-03-05T10:21:33+0000 gpu-node07 kernel: mlx5_core 0000:17:00.0 ib0: Link down\n"
              "2024-03-05T10:21:39+0000 gpu-node07 kernel: mlx5_core 0000:17:00.0 ib0: Link up\n")
    assert clean_capture(kernel, "kernel-log").text == kernel
    # moreutils ts' bracketed time is no kernel log's own: it comes off, dmesg's own stamp stays
    dmesg = "[  812.334455] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n"
    assert clean_capture("[2024-03-05 10:21:33] " + dmesg + "[2024-03-05 10:21:34] " + dmesg,
                         "kernel-log").text == dmesg * 2


def test_a_services_journal_head_and_a_compose_column_name_the_host() -> None:
    out = "Max locked memory         unlimited            unlimited            bytes\n"
    journal = "".join(f"Dec 05 10:21:3{i} gpu-node07 healthcheck.sh[4242]: {out}" for i in range(2))
    got = clean_capture(journal, "proc-limits")
    assert got.text == out * 2 and got.hosts == ["gpu-node07"]
    compose = "trainer-1  | " + out + "trainer-1  | " + out
    got = clean_capture(compose, "proc-limits")
    assert got.text == out * 2 and got.hosts == ["trainer-1"]


def test_a_table_column_is_not_a_compose_service() -> None:
    """``sinfo -o '%P | %a'``-style rows: many first words, one row each (a service repeats)."""
    text = "".join(f"part{i} | up | node{i}\n" for i in range(12))
    assert clean_capture(text, "sinfo").text == text


def test_html_source_is_unescaped_only_without_a_bare_angle_bracket() -> None:
    line = "2: ens1f0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 qdisc mq state UP mode DEFAULT\n"
    assert clean_capture(html.escape(line, quote=False), "ip-link").text == line
    kept = "NCCL INFO a &amp; b <stdout>\n"  # a bare '<': the text was never escaped
    assert clean_capture(kept, "nccl-log").text == kept


def test_terminal_lines_before_the_output_come_off_but_a_tools_own_stay() -> None:
    out = "NODELIST   NODES PARTITION STATE\ngpu-node07     1    batch* drain\n"
    for noise in ("Warning: Permanently added 'gpu-node07' (ED25519) to the list of known hosts.",
                  "[sudo] password for admin: ", "srun: job 77 has been allocated resources",
                  "salloc: Granted job allocation 77",
                  "bash: warning: setlocale: LC_ALL: cannot change locale (C.UTF-8)",
                  "Every 5.0s: sinfo -N                      login01: Thu Mar  5 10:21:33 2024"):
        assert clean_capture(f"{noise}\n{out}", "sinfo").text.strip() == out.strip(), noise
    # srun's own errors are evidence, not a note: kept
    err = "srun: error: gpu-node07: task 0: Exited with exit code 1\n"
    assert clean_capture(err + out, "sinfo").text == err + out


def test_a_container_banner_comes_off_up_to_the_tools_output() -> None:
    table = "+-----------------------------------------------------------------------------+\n| NVIDIA-SMI 535.104.05\n"
    got = clean_capture(NGC_BANNER + table, "nvidia-smi").text
    assert got.strip() == table.strip()
    # an indented line after the banner's last note is its continuation; after a licence line it is output
    lspci = ("41:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n"
             "\tLnkSta:\tSpeed 32GT/s, Width x16\n")
    got = clean_capture("==========\n== CUDA ==\n==========\n\nCUDA Version 12.2.2\n\n" + lspci, "lspci").text
    assert got.strip() == lspci.strip()


def test_a_banner_frame_is_a_line_of_equals_only_behind_a_launchers_prefix_too() -> None:
    """A titled line between two lines that only start with '====' (a tool's own heading) is output, not a
    container's banner: kept whole, as at the top of a paste."""
    text = "".join(f"0: {ln}\n" for ln in ("====NVSMI LOG====", "== Summary ==", "====NVSMI LOG====",
                                          "Driver Version                            : 535.104.05"))
    got = clean_capture(text, "nvidia-smi-q").text
    assert "== Summary ==" in got and got.count("====NVSMI LOG====") == 2


def test_a_glyph_prompt_is_a_prompt_whatever_follows_and_a_notebook_escape_only_before_a_known_tool() -> None:
    out = "CA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 1\n"
    text = f"\u279c  ~ git:(main) \u2717 ibstat\n{out}\u279c  ~ ls\nnotes.txt\n\u279c  ~\n"
    got = clean_capture(text, "ibstat")
    assert got.text.strip() == out.strip() and got.commands[:1] == ["ibstat"]
    assert clean_capture(f"\u276f ibstat\n{out}", "ibstat").text.strip() == out.strip()
    assert clean_capture(f"!ibstat\n{out}", "ibstat").text.strip() == out.strip()
    # a line of output that starts with '!' is output
    assert clean_capture("!important\n" + out, "ibstat").text.startswith("!important")


def test_zshs_host_tilde_prompt_and_suses_angle_prompt_are_prompt_lines() -> None:
    # round2/nvidia-smi-q/py3status764-...: zsh's '%m%~ ' prompt ('lasers~ '), then another command and its output
    text = ("lasers~ nvidia-smi -q -d TEMPERATURE\nFailed to initialize NVML: Unknown Error\n\n"
            "lasers~ echo $?                     \n255\n")
    got = clean_capture(text, "nvidia-smi-q")
    assert got.commands[:1] == ["nvidia-smi -q -d TEMPERATURE"]
    assert got.text.strip() == "Failed to initialize NVML: Unknown Error"
    out = "CA 'mlx5_0'\n\tCA type: MT4129\n"
    assert clean_capture(f"admin@sles15:~> ibstat\n{out}admin@sles15:~> \n", "ibstat").text == out
    # sinfo's power-saving state ('idle~') before a node list is output
    row = "batch*       up   infinite      4  idle~ node[01-04]\n"
    assert clean_capture("PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n" + row, "sinfo").text.endswith(row)


def test_typesetting_is_undone_and_an_xml_document_read_through_it() -> None:
    line = "Infiniband device \u2018mlx5_0\u2019 port 1 status:\n"
    assert clean_capture(line, "ibstatus").text == "Infiniband device 'mlx5_0' port 1 status:\n"
    assert clean_capture("+\u2014\u2014\u2013+\n", "dcgmi-diag").text == "+--------+\n"
    xml = ('<?xml version=\u201c1.0\u201d ?>\n<!DOCTYPE nvidia_smi_log SYSTEM \u201cnvsmi_device_v12.dtd\u201d>\n'
           "<nvidia_smi_log>\n<driver_version>535.104.05</driver_version>\n<attached_gpus>0</attached_gpus>\n"
           "</nvidia_smi_log>\n")
    assert registry.parse("nvidia-smi-q-xml", xml)["driver_version"] == "535.104.05"


def test_a_tools_own_line_that_looks_like_a_note_is_kept() -> None:
    """pyxis' failure and a noise-like line in the middle of the output are evidence or text: kept."""
    err = "pyxis: child 4242 failed with error code: 1\n"
    out = "NODELIST   NODES PARTITION STATE\n" + "".join(f"gpu-node{i:02d}     1    batch* idle\n" for i in range(50))
    assert clean_capture(err + out, "sinfo").text == err + out
    middle = out + "Connection to gpu-node07 closed.\n" + out  # not in the paste's tail: the text's own
    assert clean_capture(middle, "sinfo").text == middle


def mail_wrap(text: str, kind: str, width: int = 72) -> str:
    """A mail client's wrap of each line longer than the width (at a blank, as Thunderbird sends a reply)."""
    import textwrap

    out: list[str] = []
    for ln in _lines(text):
        out += [ln] if len(ln) <= width + 4 else textwrap.wrap(
            ln, width, break_long_words=False, break_on_hyphens=False, replace_whitespace=False) or [ln]
    return _join(out)


KERNEL_LOGS = [c for c in CHOSEN if c[1] in ("kernel-log", "nccl-log")
               and mail_wrap(body(c[0]), c[1]) != _join(_lines(body(c[0])))]


@pytest.mark.parametrize(("cid", "kind", "_part"), KERNEL_LOGS, ids=[c[0] for c in KERNEL_LOGS])
def test_a_mail_wrap_of_a_log_keeps_its_verdict(cid: str, kind: str, _part: str) -> None:
    """A kernel or NCCL log quoted in a mailing list's message: its long lines wrapped, the rest of each on a line
    of its own without the log's time or head (only a log's lines are joined again: a table's row and a
    wrapped line's rest cannot be told apart)."""
    if ("mail-wrap", cid) in EXCLUDED:
        pytest.skip(EXCLUDED["mail-wrap", cid])
    _same_verdict(cid, kind, mail_wrap(body(cid), kind))


def test_a_short_log_line_and_a_note_after_it_are_not_joined() -> None:
    from ccparse import kernel_log
    from ccparse.common import unwrap_log

    lines = ["[  812.334455] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python,",  # 72: cut by a wrap
             "GPU has fallen off the bus.", "[  812.4] mlx5_core 0000:17:00.0: short", "then the node rebooted"]
    got = unwrap_log(lines, kernel_log._log_line)
    assert got[0] == lines[0] + " " + lines[1] and got[1] == ""
    assert got[2:] == lines[2:]  # 'then' would have fit on a line of 40 characters: no wrap cut it
