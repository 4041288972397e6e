"""Reading one inventory file without trusting it: bounded size, UTF-8 only, YAML with limits.

Refused (as :class:`Refused`, carrying the key path or line and a message, never the file's lines):
files over :data:`MAX_BYTES`, UTF-16/32 and other non-UTF-8 bytes, more than one document,
duplicate keys, keys that are not scalars, ``.nan``/``.inf``, aliases that refer to themselves
(cycles), structures that expanded through aliases exceed :data:`MAX_NODES` (billion laughs) or
nest deeper than :data:`MAX_DEPTH`, ``!vault`` values that are not an Ansible vault payload, tags
Ansible does not know. The node graph is checked before anything is constructed, in time linear in
the file (aliases are counted, not expanded).
"""

from __future__ import annotations

import contextvars
import re
from pathlib import Path
from typing import Any

import yaml

from clusterctl.inventory.model import VaultValue

MAX_BYTES = 64 * 1024 * 1024  # a 100,000-host hosts.yml with addresses is about 6 MiB
MAX_NODES = 5_000_000  # YAML nodes after alias expansion, per file
MAX_DEPTH = 64  # nesting levels (an inventory needs fewer than 10)
MAX_FLOW_NESTING = 256  # brackets opened before the parser runs (the C parser recurses)

_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_FLOAT_TAG = "tag:yaml.org,2002:float"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_BRACKETS = re.compile(r"[\[\]{}]")
_NON_FINITE = re.compile(r"^[-+]?\.(inf|nan)$", re.IGNORECASE)


class Refused(Exception):
    """A file refused: ``key`` is a key path (``a.b[0]``) or ``line N``/``(file)``."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        self.message = message
        super().__init__(f"{key}: {message}")


def vault_payload_ok(text: str) -> bool:
    """True if ``text`` is structurally an Ansible vault payload (envelope, hex salt/HMAC/ciphertext)."""
    from ansible.parsing.vault import parse_vaulttext, parse_vaulttext_envelope

    try:
        b_text, _version, cipher, _vid = parse_vaulttext_envelope(text.strip().encode("ascii"))
        if cipher != "AES256":
            return False
        _ciphertext, salt, hmac = parse_vaulttext(b_text)
        return bool(salt) and re.fullmatch(rb"[0-9a-f]{64}", bytes(hmac)) is not None
    except Exception:
        return False


def read_text(path: Path) -> str:
    """The file's text, or :class:`Refused` (size, encoding)."""
    from clusterctl.paths import NotRegular, read_regular

    try:
        size = path.stat().st_size
    except OSError as exc:
        raise Refused("(file)", f"cannot read: {exc.strerror}") from None
    if size > MAX_BYTES:
        raise Refused("(file)", f"file too large ({size} bytes, limit {MAX_BYTES})")
    try:
        raw = read_regular(path, MAX_BYTES)
    except NotRegular as exc:
        raise Refused("(file)", str(exc)) from None
    except OSError as exc:
        raise Refused("(file)", f"cannot read: {exc.strerror}") from None
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(raw) > 1 and (raw[0] == 0 or raw[1] == 0)):
        raise Refused("(file)", "not UTF-8 text (looks like UTF-16 or UTF-32): save it as UTF-8")
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise Refused(f"line {line}", f"not UTF-8 text (byte 0x{raw[exc.start]:02x})") from None
    if "\x00" in text:
        raise Refused(f"line {text[: text.index(chr(0))].count(chr(10)) + 1}", "NUL byte in a text file")
    return text


class _Loader(_BASE):  # type: ignore[misc,valid-type]
    pass


def _vault(loader: Any, node: yaml.Node) -> VaultValue:
    return VaultValue()  # the structure was checked in _check


def _unsafe(loader: Any, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_mapping(node, deep=True)


_Loader.add_constructor("!vault", _vault)
_Loader.add_constructor("!unsafe", _unsafe)
_KNOWN_TAGS = {"!vault", "!unsafe"}


def _flow_nesting(text: str) -> int:
    if text.count("[") + text.count("{") <= MAX_FLOW_NESTING:
        return 0  # cannot nest deeper than the brackets it has (the common case: no walk over the text)
    depth = deepest = 0
    for ch in _BRACKETS.findall(text):
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth = max(depth - 1, 0)
    return deepest


_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
# scalar tags whose SafeLoader constructor is a plain function of the node (no generator, no state)
_SCALAR_TAGS = {f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float", "binary", "timestamp")}


class _Fallback(Exception):
    """The pass below cannot build this node the way the SafeLoader's constructor would."""


def _check(root: yaml.Node, loader: Any = None) -> tuple[bool, Any]:
    """Walk the node graph once: cycles, expanded size, depth, keys, floats, tags, vault payloads.

    In the same walk the data is built, as the SafeLoader's constructor would build it, for plain
    documents (mappings, sequences, str/int/float/bool/null/binary/timestamp scalars, ``!vault``,
    ``!unsafe`` scalars; aliases shared). Returns ``(True, data)``, or ``(False, None)`` when the
    document holds anything else (merge keys, ``!!set``/``!!omap``, ``!unsafe`` on a collection, a
    scalar the constructor refuses, ...): then the caller constructs it the usual way. Every check
    runs in both cases, in the same order, so what is refused and why does not change.
    """
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    built: dict[int, Any] = {}
    on_path: set[int] = set()
    ctors = loader.yaml_constructors if loader is not None else {}
    fallback = loader is None

    def scalar(node: yaml.Node) -> Any:
        tag = node.tag
        if tag == _STR_TAG or tag == "!unsafe":
            return node.value
        if tag == "!vault":
            return VaultValue()
        if tag in _SCALAR_TAGS and isinstance(node, yaml.ScalarNode):
            try:
                return ctors[tag](loader, node)
            except Exception:
                raise _Fallback from None  # the constructor will refuse it, after every check ran
        raise _Fallback

    def key_of(knode: yaml.Node) -> Any:
        kid = id(knode)
        if kid not in built:
            built[kid] = scalar(knode)
        return built[kid]

    def visit(node: yaml.Node, path: str, depth: int) -> None:
        nonlocal fallback
        nid = id(node)
        if nid in on_path:
            raise Refused(path or "(document)", "alias refers to a node that contains it (a cycle)")
        if nid in size:
            if depth + height[nid] > MAX_DEPTH:
                raise Refused(path or "(document)", f"nested deeper than {MAX_DEPTH} levels")
            return
        if depth > MAX_DEPTH:
            raise Refused(path or "(document)", f"nested deeper than {MAX_DEPTH} levels")
        tag = node.tag
        if tag.startswith("!") and tag not in _KNOWN_TAGS:
            raise Refused(path or "(document)", f"unknown YAML tag {tag}")
        total, high = 1, 0
        if isinstance(node, yaml.ScalarNode):
            if tag == "!vault" and not vault_payload_ok(str(node.value)):
                raise Refused(path, "!vault value is not an Ansible vault payload ($ANSIBLE_VAULT;1.1;AES256 ...)")
            if tag == _FLOAT_TAG and _NON_FINITE.match(str(node.value)):
                raise Refused(path, f"{node.value} is not a number a cluster setting can take")
            if not fallback:
                try:
                    built[nid] = scalar(node)
                except _Fallback:
                    fallback = True
        elif tag == "!vault":
            raise Refused(path, "!vault must tag an encrypted string")
        else:
            on_path.add(nid)
            if isinstance(node, yaml.MappingNode):
                seen: dict[tuple[str, str], int] = {}
                data: dict[Any, Any] = {}
                if tag != _MAP_TAG:
                    fallback = True
                for knode, vnode in node.value:
                    if knode.tag == _MERGE_TAG:
                        kname = "<<"
                        fallback = True
                    elif not isinstance(knode, yaml.ScalarNode):
                        raise Refused(path or "(document)", f"line {knode.start_mark.line + 1}: a key must be a "
                                                            "string or a number")
                    else:
                        kname = str(knode.value)
                        ident = (knode.tag, kname)
                        if ident in seen:
                            raise Refused(f"{path}.{kname}" if path else kname,
                                          f"duplicate key (line {seen[ident]} and line {knode.start_mark.line + 1})")
                        seen[ident] = knode.start_mark.line + 1
                    if vnode.tag == _STR_TAG and depth < MAX_DEPTH and type(vnode) is yaml.ScalarNode:
                        value = vnode.value  # a plain string: nothing to check, nothing to remember
                        total += 1
                        high = high or 1
                    else:
                        visit(vnode, f"{path}.{kname}" if path else kname, depth + 1)
                        total += size[id(vnode)]
                        high = max(high, height[id(vnode)] + 1)
                        value = None if fallback else built[id(vnode)]
                    if not fallback:
                        try:
                            data[knode.value if knode.tag == _STR_TAG else key_of(knode)] = value
                        except (_Fallback, TypeError):  # TypeError: a key the constructor refuses
                            fallback = True
                built[nid] = data
            elif isinstance(node, yaml.SequenceNode):
                items: list[Any] = []
                if tag != _SEQ_TAG:
                    fallback = True
                for i, item in enumerate(node.value):
                    if item.tag == _STR_TAG and depth < MAX_DEPTH and type(item) is yaml.ScalarNode:
                        total += 1
                        high = high or 1
                        items.append(item.value)
                        continue
                    visit(item, f"{path}[{i}]", depth + 1)
                    total += size[id(item)]
                    high = max(high, height[id(item)] + 1)
                    if not fallback:
                        items.append(built[id(item)])
                built[nid] = items
            on_path.discard(nid)
        if total > MAX_NODES:
            raise Refused(path or "(document)", f"more than {MAX_NODES} values once aliases are expanded "
                                                "(an alias bomb?)")
        size[nid], height[nid] = total, high

    visit(root, "", 0)
    return (False, None) if fallback else (True, built[id(root)])


def load(text: str, fast: bool = True) -> Any:
    """Parse YAML ``text`` with the limits above; :class:`Refused` on anything refused.

    ``fast=False`` constructs every document with the SafeLoader's constructor (the reference the
    one-pass build of :func:`_check` is tested against).
    """
    if _flow_nesting(text) > MAX_FLOW_NESTING:
        raise Refused("(file)", f"nested deeper than {MAX_DEPTH} levels")
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        done, data = _check(node, loader if fast else None)
        return data if done else loader.construct_document(node)
    except Refused:
        raise
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "(file)"
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise Refused(where, f"not valid YAML: {reason}") from None
    except RecursionError:
        raise Refused("(file)", f"nested deeper than {MAX_DEPTH} levels") from None
    except (ValueError, TypeError, OverflowError) as exc:
        raise Refused("(file)", f"value not readable: {type(exc).__name__}") from None
    finally:
        loader.dispose()


#: the vault password of this command (``--vault-password-file``), None when none was given
VAULT_PASSWORD: contextvars.ContextVar[bytes | None] = contextvars.ContextVar("clusterctl_vault_password",
                                                                              default=None)


def decrypt(text: str, password: bytes) -> str:
    """The plain text of a vault file, by ansible-core's own VaultLib; :class:`Refused` when the
    password does not open it (wrong, truncated, another vault id) or the content is not UTF-8."""
    from ansible.errors import AnsibleError
    from ansible.parsing.vault import VaultLib, VaultSecret

    try:
        plain = VaultLib([("default", VaultSecret(password))]).decrypt(text.encode("ascii"))
    except (AnsibleError, ValueError, TypeError):
        raise Refused("(file)", "could not decrypt this vault file with the given vault password "
                                "(wrong or truncated password, or another vault id)") from None
    try:
        return plain.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("(file)", "decrypted content is not UTF-8 text") from None


def load_file(path: Path) -> tuple[Any, bool]:
    """(data, vaulted): a whole-file vault is structure-checked; with a vault password
    (:data:`VAULT_PASSWORD`) it is decrypted and its content checked like any file, else it is
    returned as ``({}, True)`` (not checked: the caller says so)."""
    text = read_text(path)
    if text.startswith("$ANSIBLE_VAULT;"):
        if not vault_payload_ok(text):
            raise Refused("(file)", "starts like an Ansible vault file but is not a valid vault payload")
        password = VAULT_PASSWORD.get()
        if password is None:
            return {}, True
        return load(decrypt(text, password)), True
    return load(text), False
