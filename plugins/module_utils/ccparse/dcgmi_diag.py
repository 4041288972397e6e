"""Parser for ``dcgmi diag`` results: ``-j`` JSON (DCGM 3 and DCGM 4 key names, legacy per-GPU
``gpu_ids``) and the text table, normalised to one result per test per GPU::

    {"format": "json"|"text", "dcgm_version": "4.2.3"|None, "driver_version": str|None,
     "gpus": [0, 1, 2, 3],
     "results": [{"category": "Hardware", "test": "memory", "gpu": 0 | None, "status": "Pass"|"Fail"|"Warn"|"Skip",
                  "messages": ["ECC memory on GPU 0 is not currently active ..."], "info": [...]}],
     "tests": [{"category": "Hardware", "test": "memory", "status": "Fail"}]}

``gpu`` is None for a result that does not name a GPU (DCGM 3 deployment checks, text rows ``Pass``
without ``- GPU:`` / ``GPUn:``); such a result applies to the node. Every GPU of every test is
reported: legacy ``"gpu_ids": "0,1,2,3"`` expands to four results; DCGM 4 ``entity_group``/
``entity_id`` entries give one each. Status spellings (``PASS``, ``Passed``, ``skip``...) are
normalised to Pass/Fail/Warn/Skip; anything else is kept as printed.
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import capture
from .common import ParseError, json_loads, parser, strip_source_line, to_int

TOOL = "dcgmi diag"

_ROOTS = ("DCGM GPU Diagnostic", "DCGM Diagnostic", "diagnostic")
_STATUS = {"pass": "Pass", "passed": "Pass", "fail": "Fail", "failed": "Fail", "warn": "Warn", "warning": "Warn",
           "skip": "Skip", "skipped": "Skip", "not run": "Skip", "notrun": "Skip"}


def _status(raw: Any) -> str:
    s = str(raw or "").strip()
    return _STATUS.get(s.lower(), s)


def _msgs(items: Any) -> list[str]:
    out = []
    for it in items if isinstance(items, list) else ([items] if items else []):
        if isinstance(it, dict):
            text = it.get("warning") or it.get("message") or it.get("msg") or it.get("error")
            if text:
                out.append(str(text))
        elif it:
            out.append(str(it))
    return out


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _gpu_id(v: Any) -> int | None:
    """An entity/GPU id as printed (int or digit string); anything else is no id."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v if 0 <= v < 1 << 20 else None
    m = re.fullmatch(r"\s*(\d{1,6})\s*", str(v))
    return to_int(m.group(1)) if m else None


def _gpu_ids(r: dict[str, Any]) -> list[int | None]:
    if "entity_id" in r and str(r.get("entity_group", "GPU")).upper() == "GPU":
        return [_gpu_id(r["entity_id"])]
    ids = r.get("gpu_ids", r.get("gpu_id"))
    if ids is None:
        return [None]
    if isinstance(ids, list):
        return [_gpu_id(i) for i in ids] or [None]
    return [to_int(i) for i in re.findall(r"\d{1,6}", str(ids))] or [None]


def _from_json(doc: Any) -> dict[str, Any]:
    root = doc
    if isinstance(doc, dict):
        for key in _ROOTS:
            if isinstance(doc.get(key), dict):
                root = doc[key]
                break
    cats = root.get("test_categories") if isinstance(root, dict) else None
    if cats is None and isinstance(root, dict) and "tests" in root:  # one category hoisted to the top
        cats = [root]
    if not isinstance(cats, list):
        if isinstance(root, dict) and root.get("runtime_error"):
            cats = []  # the run stopped before any category: its runtime error is read below
        else:
            raise ParseError(TOOL, "JSON without 'test_categories' (not dcgmi diag -j output)", None)
    results: list[dict[str, Any]] = []
    tests: list[dict[str, Any]] = []
    for cat in cats:
        if not isinstance(cat, dict):
            continue
        cname = cat.get("category")
        for t in _list(cat.get("tests")):
            if not isinstance(t, dict):
                continue
            tname = t.get("name") or t.get("test_name")
            statuses = []
            for r in _list(t.get("results")):
                if not isinstance(r, dict):
                    continue
                if str(r.get("entity_group", "GPU")).upper() != "GPU":
                    continue
                st = _status(r.get("status"))
                statuses.append(st)
                for gpu in _gpu_ids(r):
                    results.append({"category": cname, "test": tname, "gpu": gpu, "status": st,
                                    "messages": _msgs(r.get("warnings")) + _msgs(r.get("errors")),
                                    "info": _msgs(r.get("info"))})
            summary: dict[str, Any] = t["test_summary"] if isinstance(t.get("test_summary"), dict) else {}
            overall = _status(summary.get("status")) if summary.get("status") else (
                "Fail" if "Fail" in statuses else "Warn" if "Warn" in statuses else
                "Pass" if "Pass" in statuses else statuses[0] if statuses else None)
            tests.append({"category": cname, "test": tname, "status": overall})
    meta: dict[str, Any] = doc["metadata"] if isinstance(doc, dict) and isinstance(doc.get("metadata"), dict) else {}
    version = meta.get("version") or meta.get("DCGM Version") or (
        root.get("version") if isinstance(root, dict) else None)
    runtime_error = (root.get("runtime_error") if isinstance(root, dict) else None) or (
        doc.get("runtime_error") if isinstance(doc, dict) else None)
    out: dict[str, Any] = {"format": "json", "dcgm_version": version,
                           "driver_version": meta.get("Driver Version Detected"), "results": results, "tests": tests}
    if not results and runtime_error:
        out["not_run"] = f"runtime error: {str(runtime_error)[:180]}"  # the run stopped before any result
    return out


#: dcgmi's answer when the diagnostic cannot run at all ("GPU 2's MIG configuration is incompatible with the
#: diagnostic because it prevents access to the entire GPU."), and the client's own ``Error: ...`` lines (no host
#: engine to connect to, GPUs in use, plugins that cannot load, ``Unable to complete diagnostic ... Return: (-30)``):
#: no test ran, nothing was judged (the tool's words kept as the reason)
_REFUSED = re.compile(r"MIG configuration is incompatible with the diagnostic|^\s*Error:\s+\S")
_TEXT_ROW = re.compile(r"^\|\s*(.*?)\s*\|\s*(.*?)\s*\|$")
_CAT = re.compile(r"^[|+]-+\s+(\w[\w ]*?)\s+-+\+")
_RESULT = re.compile(r"^(Pass|Fail|Warn|Skip|Passed|Failed|Skipped)(?:\s*-\s*(All|GPUs?:?\s*([\d,\s]+)))?\s*$", re.I)
_ELISION = re.compile(r"^(?:\.{3,}|\[\.{3}\]|…)$")
_GPU_IN_TEXT = re.compile(r"\bGPU\s*(\d+)\b")
_PER_GPU = re.compile(r"^GPU\s*(\d+)\s*:\s*(Pass|Fail|Warn|Skip)\b\s*(.*)$", re.I)


def _from_text(lines: list[tuple[int, str]]) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    tests: list[dict[str, Any]] = []
    meta: dict[str, str] = {}
    cat: str | None = None
    cur_test: dict[str, Any] | None = None
    cur_rows: list[dict[str, Any]] = []
    last_msg: list[str] | None = None
    seen_header = False
    last_line = lines[-1][0] if lines else None
    closed = False  # the table's bottom border was read: a prolog's or script's lines may follow
    in_section = False  # the last line read was a row: a capture that ends here ends inside a section
    for lineno, raw in lines:
        s = raw.strip()
        if s.startswith("#") and s[1:].lstrip()[:1] in ("|", "+"):
            s = s[1:].strip()  # the table quoted in a script's '# ' comment block
        if not s or s.startswith("Successfully ran diagnostic"):
            continue
        if set(s) <= set("+-=|"):
            closed = seen_header and s.startswith("+") and bool(tests or results or meta)
            in_section = False
            continue
        c = _CAT.match(s)
        if c:
            cat = c.group(1).strip()
            last_msg = None
            in_section = False
            continue
        m = _TEXT_ROW.match(s)
        if not m and s.startswith("|") and lineno == last_line:
            m = _TEXT_ROW.match(s + " |" if s.count("|") >= 2 else s + " | |")  # the capture ends mid-row
        if not m:
            if _ELISION.match(s) or capture.is_command(s, ("dcgmi", "nv-hostengine")):
                continue  # '...' where the paster cut rows out; the command line
            if seen_header and not closed:
                raise ParseError(TOOL, f"line is not a table row: {s[:80]!r}", lineno)
            continue  # before the table, or after its bottom border ('Successfully started recording stats')
        closed = False
        in_section = True
        name, value = m.group(1), m.group(2)
        if name == "Diagnostic" and value == "Result":
            seen_header = True
            continue
        # an excerpt without the header (grep'd or cut out of a longer paste): the rows still say it all
        seen_header = True
        if cat == "Metadata" or _META_NAME.search(name):
            # (a run of one test, '-r eud', prints its metadata rows without the Metadata section's title row)
            meta[name] = value
            continue
        if name == "Error" and not cur_rows:
            # DCGM 2/3 deployment checks print a bare 'Error' row naming the GPU ("GPU 3 has
            # uncorrectable memory errors and row remappings are pending"): a failed check
            gm = _GPU_IN_TEXT.search(value)
            cur_test = {"category": cat, "test": "Error", "status": "Fail"}
            tests.append(cur_test)
            cur_rows = [{"category": cat, "test": "Error", "gpu": to_int(gm.group(1)) if gm else None, "status": "Fail",
                         "messages": [], "info": []}]
            results.extend(cur_rows)
        if name in ("Warning", "Error", "Info"):
            last_msg = [value]
            target = cur_rows
            gm = re.match(r"GPU\s*(\d+)", value)
            if gm:
                target = [x for x in cur_rows if x["gpu"] == to_int(gm.group(1))] or cur_rows
            for x in target:
                (x["info"] if name == "Info" else x["messages"]).append(value)
            continue
        if name == "" and last_msg is not None and not _PER_GPU.match(value):
            # wrapped continuation of a Warning/Info cell: extend the last message
            for x in cur_rows:
                for lst in (x["messages"], x["info"]):
                    if lst and lst[-1] == last_msg[-1]:
                        lst[-1] = lst[-1] + value
            last_msg[-1] = last_msg[-1] + value
            continue
        pg = _PER_GPU.match(value)
        if name == "" and pg and cur_test is not None:
            if cur_rows and cur_rows[0]["gpu"] is None:
                results.remove(cur_rows[0])
                cur_rows.clear()
            row = {"category": cat, "test": cur_test["test"], "gpu": to_int(pg.group(1)),
                   "status": _status(pg.group(2)),
                   "messages": [pg.group(3)] if pg.group(3) else [], "info": []}
            cur_rows.append(row)
            results.append(row)
            continue
        rm = _RESULT.match(value)
        if name == "" and rm and cur_test is not None:  # a second status line for the same test
            gpus: list[int | None] = [to_int(g) for g in re.findall(r"\d+", rm.group(3) or "")] or [None]
            for g in gpus:
                row = {"category": cat, "test": cur_test["test"], "gpu": g, "status": _status(rm.group(1)),
                       "messages": [], "info": []}
                cur_rows.append(row)
                results.append(row)
            st = {x["status"] for x in cur_rows}
            cur_test["status"] = "Fail" if "Fail" in st else "Warn" if "Warn" in st else cur_test["status"]
            continue
        if name and rm:
            last_msg = None
            cur_test = {"category": cat, "test": name, "status": _status(rm.group(1))}
            tests.append(cur_test)
            gpus = [to_int(g) for g in re.findall(r"\d+", rm.group(3) or "")] or [None]
            if (rm.group(2) or "").lower() == "all" and meta.get("GPU Device IDs Detected"):
                # "Pass - All": one result per GPU the metadata lists (ids are in GPU index order)
                gpus = list(range(len([x for x in meta["GPU Device IDs Detected"].split(",") if x.strip()])))
            cur_rows = []
            for g in gpus:
                row = {"category": cat, "test": name, "gpu": g, "status": _status(rm.group(1)), "messages": [],
                       "info": []}
                cur_rows.append(row)
                results.append(row)
            continue
        if (name == "" and cur_rows and cur_rows[-1]["gpu"] is not None and cur_test is not None
                and re.fullmatch(r"[\d,\s]+", value) and re.search(r"\d", value)):
            # a GPU list wrapped onto the next row ("Fail - GPUs: 0, 1, ..., 13," / "14, 15")
            st_list = cur_rows[-1]["status"]
            for g in re.findall(r"\d{1,6}", value):
                row = {"category": cat, "test": cur_test["test"], "gpu": to_int(g), "status": st_list,
                       "messages": [], "info": []}
                cur_rows.append(row)
                results.append(row)
            continue
        if name == "" and (cur_test is not None or not results):
            continue  # a wrapped cell we have no row for (the excerpt starts mid-cell)
        if name and not value and cur_test is not None and cur_test is (tests[-1] if tests else None):
            cur_test["test"] = f"{cur_test['test']} {name}"  # a test name wrapped onto the next row
            for x in cur_rows:
                x["test"] = cur_test["test"]
            continue
        raise ParseError(TOOL, f"unrecognised result cell {value[:60]!r} for {name[:40]!r}", lineno)
    if not seen_header:
        refused = " ".join(ln.strip() for _n, ln in lines if _REFUSED.search(ln)) or None
        if refused is not None:
            # the diagnostic refused to start (a GPU partitioned with MIG, dcgmi's own 'Error: ...' lines): no test
            # ran, nothing was judged
            return {"format": "text", "dcgm_version": None, "driver_version": None, "results": [], "tests": [],
                    "not_run": refused[:200]}
        raise ParseError(TOOL, "no 'Diagnostic | Result' table and not JSON (not dcgmi diag output)",
                         lines[-1][0] if lines else None)
    out: dict[str, Any] = {"format": "text", "dcgm_version": meta.get("DCGM Version"),
                           "driver_version": meta.get("Driver Version Detected"), "results": results,
                           "tests": tests}
    if not results:
        # the table cut after its header (or its metadata): read, but no test row to judge; the check says
        # "cannot judge", the coverage line records the cut
        out["cut"] = ["result table without any test row (cut after its header?)"]
    elif in_section:
        # the capture ends on a row, inside a section (no border or next category after it): rows after it unknown
        out["open_end"] = True
        out["cut"] = ["the result table ends inside a section, without its border: rows after the last may be cut"]
    return out


def _load_json(js: str) -> Any:
    """The document, or a pasted piece of one: a single test object (``{"name": .., "results": [..]}``,
    often followed by the comma of the list it was cut from) becomes a one-test document."""
    try:
        return json_loads(js)
    except json.JSONDecodeError:
        frag = js.strip().rstrip(",").strip()
        try:
            doc = json_loads(frag)
        except json.JSONDecodeError:
            raise
        if isinstance(doc, dict) and "results" in doc and "name" in doc:
            return {"tests": [doc]}
        return doc


#: the Metadata section's rows ('DCGM Version', 'Driver Version Detected', 'GPU Device IDs Detected', 'EUD Test
#: Version', 'Number of CPUs Detected'): never a test's name
_META_NAME = re.compile(r"(?: Version| Detected)$")


@parser("dcgmi-diag")
def parse_dcgmi_diag(text: str) -> dict[str, Any]:
    body = strip_source_line(text)
    stripped = body.strip()
    if not stripped:
        raise ParseError(TOOL, "empty input", None)
    text_lines = capture.lines(text)
    first = next((i for i, (_n, ln) in enumerate(text_lines) if ln.strip() and not ln.strip().startswith(
        "Successfully ran diagnostic") and not capture.is_command(ln, ("dcgmi",))), None)
    if first is not None and text_lines[first][1].lstrip().startswith(("{", "[")):
        js = "\n".join(ln for _n, ln in text_lines[first:])
        try:
            doc = _load_json(js)
        except json.JSONDecodeError as exc:
            line = text_lines[first][0] + exc.lineno - 1
            raise ParseError(TOOL, f"invalid JSON (truncated?): {exc.msg}", line) from exc
        out = _from_json(doc)
    else:
        out = _from_text(text_lines)
    out["gpus"] = sorted({r["gpu"] for r in out["results"] if r["gpu"] is not None})
    return out
