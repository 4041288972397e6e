#!/usr/bin/env python3
"""Build the clusterctl execution environment (execution-environment.yml, ansible-builder v3) with podman
on a LOCAL Debian 12 base image: no container registry is needed (issue 27).

    python scripts/ee_build.py                         # prints the image name; builds it unless it exists
    python scripts/ee_build.py --collections-from DIR  # ansible.posix, community.general from an installed
                                                       # collections folder (no Galaxy), e.g. the `ansible`
                                                       # package's site-packages/ansible_collections

The image is ``localhost/clusterctl-ee:local-<hash>``, the hash taken over everything that goes into it
(the collection and wheel sources, execution-environment.yml, ee/, this script, the base image, the host's
CA bundle, the dependency collections' versions): when an image of that name exists nothing is built.

What ansible-builder v3 needs of a base image, and what the Debian base (``localhost/clusterctl-ee-base``,
built FROM the lab's ``localhost/clusterctl-bare``) gives it:
  * a Python with pip: Debian's python3 (3.11, clusterctl needs 3.11+), python3-pip (options.skip_pip_install:
    ansible-builder's own pip step runs ensurepip, which Debian disables), python3-venv (the builder
    stage's ``python3 -m venv``); PEP 668's EXTERNALLY-MANAGED is lifted by ansible-builder's own
    ``ENV PIP_BREAK_SYSTEM_PACKAGES=1``;
  * a package manager it calls as dnf (``install -y PKG...``, ``clean all``): options.package_manager_path
    names /usr/local/bin/ee-pkgmgr, a shim to apt-get (installs only what is missing, cleans apt's lists);
    the collection's bindep lines carry ``[platform:dpkg]`` names beside the rpm ones;
  * the host's CA bundle (a TLS proxy in front of the package index is trusted as on the host).
The derived definition differs from execution-environment.yml only in the base image, the interpreter
(/usr/bin/python3), the package manager, no dnf step in prepend_base, and (with --collections-from) the
dependency collections given as local tarballs installed with ``--offline``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
IMAGE = "localhost/clusterctl-ee"
BASE = "localhost/clusterctl-ee-base"
BARE = os.environ.get("CLUSTERCTL_BARE_IMAGE", "localhost/clusterctl-bare:latest")
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
PKGMGR = "/usr/local/bin/ee-pkgmgr"
#: what the wheel and the collection are built from (pyproject's force-include, galaxy.yml) and the EE files
INPUTS = ("galaxy.yml", "meta", "README.md", "CHANGELOG.md", "LICENSE", "playbooks", "roles", "plugins", "packaging",
          "inventories", "ansible.cfg", "lab", "clusterctl", "pyproject.toml", "execution-environment.yml", "ee",
          "scripts/ee_build.py")
#: prepend_base of execution-environment.yml: the dnf step for the CentOS base's pip (Debian's base has pip)
DNF_PIP_STEP = "RUN $PKGMGR install -y python3.11-pip && $PKGMGR clean all"
DEPENDENCIES = ("ansible.posix", "community.general")

PKGMGR_SHIM = """#!/bin/sh
# ansible-builder calls its package manager as dnf: `install -y [OPTS] PKG...` and `clean all`. apt-get here.
set -e
case "$1" in
  install)
    shift; pkgs=""
    for a in "$@"; do case $a in -*) ;; *) pkgs="$pkgs $a" ;; esac; done
    missing=""
    for p in $pkgs; do
      dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
    done
    [ -n "$missing" ] || exit 0
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing ;;
  clean) apt-get clean; rm -rf /var/lib/apt/lists/* ;;
  *) exec apt-get "$@" ;;
esac
"""

BASE_CONTAINERFILE = f"""FROM {BARE}
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY ee-pkgmgr {PKGMGR}
ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \\
    REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt PIP_DISABLE_PIP_VERSION_CHECK=1
RUN chmod 0755 {PKGMGR} && {PKGMGR} install -y python3-pip python3-venv openssh-client && {PKGMGR} clean all
CMD ["bash"]
"""


def _run(args: list[str], cwd: Path | None = None, log: Path | None = None,
         env: dict[str, str] | None = None) -> None:
    if log is None:
        subprocess.run(args, cwd=cwd, env=env, check=True)
        return
    with log.open("a") as fh:
        fh.write(f"$ {' '.join(args)}\n")
        fh.flush()
        r = subprocess.run(args, cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT, check=False)
    if r.returncode:
        tail = log.read_text()[-4000:]
        raise SystemExit(f"{args[0]} failed (exit {r.returncode}); log {log}:\n{tail}")


def _podman(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["podman", *args], capture_output=True, text=True, check=False)


def image_exists(name: str) -> bool:
    return _podman("image", "exists", name).returncode == 0


def _image_id(name: str) -> str:
    r = _podman("image", "inspect", "--format", "{{.Id}}", name)
    if r.returncode:
        raise SystemExit(f"the base image {name} is missing: build it with `bash lab/build-image.sh --bare`")
    return r.stdout.strip()


def _hash_tree(h: hashlib._Hash, root: Path, rels: tuple[str, ...]) -> None:
    for rel in rels:
        p = root / rel
        files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
        for f in files:
            h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")


def installed_collection_version(folder: Path) -> str:
    return str(json.loads((folder / "MANIFEST.json").read_text())["collection_info"]["version"])


def collection_tarball(folder: Path, out_dir: Path) -> Path:
    """A collection artifact (what `ansible-galaxy collection build` writes) of an INSTALLED collection, for
    installing it where Galaxy is not reachable. Installed copies (the `ansible` package's) lack files their
    FILES.json names, so FILES.json is written anew for the files present and MANIFEST.json points at it."""
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    info = manifest["collection_info"]
    entries = [{"name": ".", "ftype": "dir", "chksum_type": None, "chksum_sha256": None, "format": 1}]
    paths = sorted(p for p in folder.rglob("*") if "__pycache__" not in p.parts and p.suffix != ".pyc"
                   and p.relative_to(folder).as_posix() not in ("MANIFEST.json", "FILES.json"))
    for p in paths:
        rel = p.relative_to(folder).as_posix()
        if p.is_dir():
            entries.append({"name": rel, "ftype": "dir", "chksum_type": None, "chksum_sha256": None, "format": 1})
        elif p.is_file():
            entries.append({"name": rel, "ftype": "file", "chksum_type": "sha256",
                            "chksum_sha256": hashlib.sha256(p.read_bytes()).hexdigest(), "format": 1})
    files_json = json.dumps({"files": entries, "format": 1}, indent=4).encode()
    manifest["file_manifest_file"] = {"name": "FILES.json", "ftype": "file", "chksum_type": "sha256",
                                      "chksum_sha256": hashlib.sha256(files_json).hexdigest(), "format": 1}
    out = out_dir / f"{info['namespace']}-{info['name']}-{info['version']}.tar.gz"
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(out, "w:gz") as tf:
        for name, data in (("MANIFEST.json", json.dumps(manifest, indent=4).encode()), ("FILES.json", files_json)):
            (Path(tmp) / name).write_bytes(data)
            tf.add(Path(tmp) / name, arcname=name)
        for p in paths:
            if p.is_file() or p.is_dir():
                tf.add(p, arcname=p.relative_to(folder).as_posix(), recursive=False)
    return out


def dependency_tarballs(collections_from: Path, out_dir: Path) -> list[Path]:
    """Tarballs of ansible.posix and community.general from an installed ``ansible_collections`` folder."""
    out_dir.mkdir(parents=True, exist_ok=True)
    return [collection_tarball(collections_from / fqcn.replace(".", "/"), out_dir) for fqcn in DEPENDENCIES]


def image_name(collections_from: Path | None) -> str:
    h = hashlib.sha256()
    _hash_tree(h, REPO, INPUTS)
    h.update(_image_id(BARE).encode())
    h.update(CA_BUNDLE.read_bytes() if CA_BUNDLE.is_file() else b"")
    for fqcn in DEPENDENCIES if collections_from else ():
        assert collections_from is not None
        h.update(f"{fqcn}={installed_collection_version(collections_from / fqcn.replace('.', '/'))}".encode())
    return f"{IMAGE}:local-{h.hexdigest()[:12]}"


def build_base(work: Path, log: Path) -> str:
    """localhost/clusterctl-ee-base:<hash>: the lab's bare Debian 12 image with what ansible-builder needs."""
    h = hashlib.sha256((BASE_CONTAINERFILE + PKGMGR_SHIM + _image_id(BARE)).encode())
    h.update(CA_BUNDLE.read_bytes() if CA_BUNDLE.is_file() else b"")
    name = f"{BASE}:{h.hexdigest()[:12]}"
    if image_exists(name):
        return name
    ctx = work / "base"
    ctx.mkdir()
    (ctx / "Containerfile").write_text(BASE_CONTAINERFILE)
    (ctx / "ee-pkgmgr").write_text(PKGMGR_SHIM)
    if CA_BUNDLE.is_file():
        shutil.copy(CA_BUNDLE, ctx / "ca-certificates.crt")
    else:
        (ctx / "ca-certificates.crt").write_text("")
    _run(["podman", "build", "-t", name, str(ctx)], log=log)
    return name


def derive_definition(work: Path, base: str, deps: list[Path]) -> Path:
    """execution-environment.yml for the local Debian base, beside the dist/ artifacts in WORK."""
    ee = yaml.safe_load((REPO / "execution-environment.yml").read_text())
    ee["images"]["base_image"]["name"] = base
    ee.setdefault("options", {})["package_manager_path"] = PKGMGR
    ee["options"]["skip_pip_install"] = True  # its pip_install runs ensurepip, which Debian's python3 lacks
    ee["dependencies"]["python_interpreter"] = {"package_system": "python3", "python_path": "/usr/bin/python3"}
    steps = ee.get("additional_build_steps", {})
    prepend = [s for s in steps.get("prepend_base", []) if s != DNF_PIP_STEP]
    if prepend:  # a new step written for the CentOS base: say so instead of dropping or running it blind
        raise SystemExit(f"execution-environment.yml prepend_base has steps this Debian build does not know: {prepend}")
    steps.pop("prepend_base", None)
    reqs = yaml.safe_load((REPO / ee["dependencies"]["galaxy"]).read_text())
    for tarball in deps:
        reqs["collections"].append({"name": f"collections/{tarball.name}", "type": "file"})
        ee["additional_build_files"].append({"src": f"dist/{tarball.name}", "dest": "collections"})
    if deps:  # every collection is given as a file: Galaxy is never asked
        ee.setdefault("build_arg_defaults", {})["ANSIBLE_GALAXY_CLI_COLLECTION_OPTS"] = "--offline"
    (work / "requirements.yml").write_text(yaml.safe_dump(reqs, sort_keys=False))
    ee["dependencies"]["galaxy"] = "requirements.yml"
    out = work / "execution-environment.yml"
    out.write_text(yaml.safe_dump(ee, sort_keys=False))
    return out


def build(collections_from: Path | None = None, force: bool = False, log: Path | None = None) -> str:
    """Build (unless it exists) and return the image name."""
    name = image_name(collections_from)
    if image_exists(name) and not force:
        print(f"image {name} exists (its inputs did not change)", file=sys.stderr)
        return name
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="clusterctl-ee.") as tmp:
        work = Path(tmp)
        log = log or work / "build.log"
        base = build_base(work, log)
        dist = work / "dist"
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
        env.update(ANSIBLE_HOME=str(work / "ahome"), ANSIBLE_CONFIG=str(work / "none.cfg"))
        (work / "none.cfg").write_text("[defaults]\n")
        _run([str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(dist), str(REPO)], cwd=work,
             log=log, env=env)
        _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist),
              str(REPO)], cwd=work, log=log, env=env)
        deps = dependency_tarballs(collections_from, dist) if collections_from else []
        definition = derive_definition(work, base, deps)
        _run([str(BIN / "ansible-builder"), "build", "-f", str(definition), "-c", str(work / "context"), "-t", name,
              "--container-runtime", "podman", "-v", "2"], cwd=work, log=log, env=env)
    for repo, keep in ((IMAGE, name), (BASE, base)):  # the previous builds of changed inputs
        for other in _podman("images", "--format", "{{.Repository}}:{{.Tag}}", repo).stdout.split():
            if other != keep and other.startswith(f"{repo}:"):
                _podman("rmi", other)
    print(f"built {name} in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return name


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--collections-from", type=Path, help="an installed ansible_collections folder holding "
                    "ansible.posix and community.general (instead of Galaxy)")
    ap.add_argument("--force", action="store_true", help="build even when the image exists")
    ap.add_argument("--log", type=Path, help="append the build's output to this file")
    args = ap.parse_args(argv)
    if shutil.which("podman") is None:
        print("podman is missing", file=sys.stderr)
        return 1
    print(build(args.collections_from, args.force, args.log))
    return 0


if __name__ == "__main__":
    sys.exit(main())
