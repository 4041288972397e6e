"""clusterctl's verdicts as JUnit XML for CI systems: one test case per host, one suite per run.

A failed host is a ``failure`` (its critical and warning findings in the text), a host with no
evidence or that could not be judged is an ``error``, healthy and degraded hosts pass (a degraded
host's warnings are in ``system-out``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING

from clusterctl.paths import write_atomic

if TYPE_CHECKING:
    from clusterctl.analysis.engine import Report


def render(report: Report, suite: str = "clusterctl") -> str:
    cases = []
    failures = errors = 0
    for host in sorted(report.hosts):
        r = report.hosts[host]
        case = ET.Element("testcase", {"classname": suite, "name": host})
        text = "\n".join(f"{f.severity} {f.check} {f.subject}: {f.message}" for f in r.findings)
        if r.status == "failed":
            failures += 1
            top = r.top()
            el = ET.SubElement(case, "failure", {"type": "failed",
                                                 "message": top.message if top else "failed"})
            el.text = text
        elif r.status in ("no evidence", "cannot judge", "unreachable"):
            errors += 1
            ET.SubElement(case, "error", {"type": r.status.replace(" ", "_"),
                                          "message": r.cannot_judge_reason or r.unreachable or r.status})
        elif text:
            ET.SubElement(case, "system-out").text = text
        cases.append(case)
    root = ET.Element("testsuites")
    ts = ET.SubElement(root, "testsuite", {"name": suite, "tests": str(len(cases)), "failures": str(failures),
                                           "errors": str(errors), "skipped": "0",
                                           "time": f"{report.seconds:.3f}"})
    ts.extend(cases)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write(report: Report, path: Path, suite: str = "clusterctl") -> None:
    write_atomic(path, render(report, suite))
