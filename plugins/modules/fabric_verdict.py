#!/usr/bin/python
"""Documentation of the clusterctl.hpc.fabric_verdict action plugin (plugins/action/fabric_verdict.py
does the work, on the controller); main() only states the argument_spec the plugin checks."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: fabric_verdict
short_description: Judge the evidence a verify play collected, as clusterctl verify does
description:
  - Runs on the controller (an action plugin). Judges the play's evidence folder
    (C(<evidence_dir>/<host>/<KIND>.txt), C(_collect.json), C(_parsed.json), as written by
    C(clusterctl.hpc.verify)) with the Python package C(clusterctl)'s analysis, the same code
    C(clusterctl verify) and C(clusterctl analyze) run, against the inventory's cluster spec.
  - Each host of the play gets its own verdict; the task fails for a host whose verdict is
    C(failed) or C(no evidence) (what makes C(clusterctl verify) exit 3), with its findings in the
    result. The folder is judged once per play (the first host judges; the others read its
    report, C(_verdict.json) in the folder).
  - Sets the fact C(clusterctl_verdict) (the host's verdict) and, for AWX/AAP, C(set_stats)
    data C(clusterctl_verdicts) (every host's status, the summary counts, the failed hosts).
  - Can write the JSON and HTML reports (C(verify-report.json), C(verify-report.html)) to a folder,
    for example an AWX artifact folder.
  - Never changes a host (never reports C(changed)); supports check mode.
version_added: "0.1.0"
requirements:
  - the Python package C(clusterctl) on the controller (or in the execution environment)
options:
  evidence_dir:
    description: The folder the verify play wrote the evidence to (C(clusterctl_evidence_dir)).
    type: path
    required: true
  inventory:
    description:
      - The clusterctl inventory folder whose cluster spec gives the expected values (checked as
        C(clusterctl validate) checks it).
      - Default the play's C(inventory_dir) when it is a clusterctl inventory (has a C(hosts.yml));
        otherwise only C(spec) and the analysis' defaults apply.
    type: path
  spec:
    description: Cluster spec keys (C(gpus_per_node), C(fabric), ...) over the inventory's.
    type: dict
    default: {}
  report_dir:
    description: Also write C(verify-report.json) and C(verify-report.html) to this folder.
    type: path
  title:
    description: The HTML report's title.
    type: str
    default: clusterctl verify
  prom:
    description: Also write the verdicts as a Prometheus textfile here (what C(clusterctl verify --prom) writes).
    type: path
  junit:
    description: Also write the verdicts as JUnit XML here, one test case per host (C(clusterctl verify --junit)).
    type: path
attributes:
  check_mode:
    support: full
    description: Judges as in a normal run; it changes nothing on any host.
  diff_mode:
    support: none
    description: Nothing to diff; it never reports changed.
  action:
    support: full
    description: Runs on the controller as an action plugin; nothing is copied to the host.
author:
  - clusterctl maintainers (@clusterctl)
"""

EXAMPLES = r"""
- name: Judge the evidence (fails the hosts that failed)
  clusterctl.hpc.fabric_verdict:
    evidence_dir: "{{ clusterctl_evidence_dir }}"
    report_dir: /runner/artifacts/verify
    junit: /runner/artifacts/verify/verify.xml

- name: Judge against given expectations
  clusterctl.hpc.fabric_verdict:
    evidence_dir: /var/tmp/evidence
    spec:
      gpus_per_node: 8
      fabric: infiniband
"""

RETURN = r"""
status:
  description: The host's verdict, one of C(healthy), C(degraded), C(failed), C(no evidence), C(cannot judge).
  returned: always
  type: str
  sample: failed
findings:
  description: The host's findings, each C({check, severity, subject, message}).
  returned: always
  type: list
  elements: dict
summary:
  description: Counts of hosts per verdict over the whole play.
  returned: always
  type: dict
report_json:
  description: Where the JSON report was written.
  returned: when report_dir is given
  type: str
ansible_facts:
  description: C(clusterctl_verdict), the host's verdict (C(host), C(status), C(findings), C(failed)).
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402

ARGUMENT_SPEC = {
    "evidence_dir": {"type": "path", "required": True},
    "inventory": {"type": "path"},
    "spec": {"type": "dict", "default": {}},
    "report_dir": {"type": "path"},
    "title": {"type": "str", "default": "clusterctl verify"},
    "prom": {"type": "path"},
    "junit": {"type": "path"},
}


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.fail_json(msg="clusterctl.hpc.fabric_verdict is an action plugin: it runs on the controller")


if __name__ == "__main__":
    main()
