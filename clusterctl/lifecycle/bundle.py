"""The node check's bundle: one zip (a Python zipapp) the node_health role installs on each node.

It carries the code verify judges with, so the HealthCheckProgram and verify cannot disagree: every
``ccparse`` parser, the analysis model, severity table (as JSON: no PyYAML needed on a node),
expectations and the checks the node check runs, the Xid catalog (JSON), and
:mod:`clusterctl.lifecycle.nodecheck` as ``__main__``. The zip is byte-for-byte the same for the same
sources (sorted entries, fixed times), so the role's copy changes nothing on a second run.

``python -m clusterctl.lifecycle.bundle OUT`` writes it (the role runs this on the controller).
"""

from __future__ import annotations

import io
import json
import sys
import zipfile
from pathlib import Path

import yaml

#: modules of the clusterctl package the node check imports (the checks are loaded by name from checks/)
MODULES = ("__init__.py", "analysis/__init__.py", "analysis/model.py", "analysis/severity.py",
           "analysis/expectations.py", "analysis/stragglers.py", "analysis/checks/__init__.py",
           "analysis/checks/gpu.py", "analysis/checks/kernel_log.py", "analysis/checks/linkflap.py",
           "analysis/checks/ports.py", "analysis/checks/roce.py", "analysis/checks/node_state.py",
           "lifecycle/__init__.py", "lifecycle/nodecheck.py", "report/__init__.py", "report/prom.py",
           "report/slurm_textfile.py",
           "paths.py", "collection.py", "errors.py")
#: data files shipped as JSON renderings of their YAML
TABLES = ("analysis/severity.yml", "analysis/checks/xid_catalog.yml")
MAIN = "import sys\nfrom clusterctl.lifecycle.nodecheck import main\nsys.exit(main())\n"
STAMP = (2020, 1, 1, 0, 0, 0)


def _add(z: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, STAMP)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    z.writestr(info, data)


def build() -> bytes:
    import ccparse

    import clusterctl

    pkg = Path(clusterctl.__file__).parent
    parsers = Path(ccparse.__file__).parent
    files: dict[str, bytes] = {"__main__.py": MAIN.encode()}
    for p in sorted(parsers.glob("*.py")):
        files[f"ccparse/{p.name}"] = p.read_bytes()
    for rel in MODULES:
        files[f"clusterctl/{rel}"] = (pkg / rel).read_bytes()
    for rel in TABLES:
        data = yaml.safe_load((pkg / rel).read_text(encoding="utf-8"))
        files[f"clusterctl/{rel[:-4]}.json"] = json.dumps(data, sort_keys=True).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name in sorted(files):
            _add(z, name, files[name])
    return buf.getvalue()


def write(out: Path) -> Path:
    data = build()
    if not out.exists() or out.read_bytes() != data:
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_bytes(data)
        tmp.replace(out)
    return out


if __name__ == "__main__":  # pragma: no cover
    import hashlib

    # the role compares this with the node's copy (ansible.builtin.find's checksum is sha1)
    sys.stdout.write(hashlib.sha1(write(Path(sys.argv[1])).read_bytes()).hexdigest() + "\n")
