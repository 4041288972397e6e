"""Issue 29: a grep'd ``lspci`` excerpt without its device header line is the device the shown command's
``-s`` selector names (the capture clean-up keeps an lspci command line for that). Expected slots are read
off the captures' command lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from ccparse import registry
from ccparse.capture import clean_capture
from ccparse.lspci import selected_slot
from conftest import corpus_capture

from clusterctl.analysis import engine
from clusterctl.analysis.expectations import build

#: blind batch 12's rest miss: 'lspci -vvvs c9:00.0 | grep -i speed', then its three link lines
CLOUDNETOPS = ("round2", "lspci/cloudnetops-vvvs-c9-grep-speed-gen4x4-downgraded-8gt-x2.txt")
#: a bench report: '# lspci -vvv -s 0000:01:00.0  (GPU function ...)' and '# lspci -vvv -s 0000:00:01.1  (upstream
#: bridge of 0000:01:00.0 ...)', each followed by its LnkCap/LnkSta lines only
CLUB3090 = ("seen", "lspci/club3090-1028-lspci-t-tail-then-grep-lnksta-2.5gt-idle-x16-ok.txt")


def test_the_command_line_stays_for_lspci() -> None:
    text = corpus_capture(*CLOUDNETOPS)
    assert clean_capture(text, "lspci").text.splitlines()[0] == "$ lspci -vvvs c9:00.0 | grep -i speed"


def test_vvvs_excerpt_is_the_selected_device_and_its_downgrade_names_it(tmp_path: Path) -> None:
    (dev,) = registry.parse("lspci", corpus_capture(*CLOUDNETOPS))["devices"]
    assert dev["slot"] == "0000:c9:00.0" and dev["excerpt"] is True
    assert (dev["lnkcap"]["width"], dev["lnksta"]["width"], dev["lnksta"]["speed_gts"]) == (4, 2, 8.0)
    host = tmp_path / "n1"
    host.mkdir()
    (host / "lspci.txt").write_text(corpus_capture(*CLOUDNETOPS))
    rep = engine.analyze_dir(tmp_path, build(None), jobs=1).hosts["n1"]
    real = [f for f in rep.findings if f.check not in ("coverage", "evidence", "parse", "collect")]
    assert rep.status == "degraded" and real and all("c9:00.0" in f"{f.subject} {f.message}" for f in real)


def test_each_s_command_names_the_excerpt_after_it() -> None:
    devs = registry.parse("lspci", corpus_capture(*CLUB3090))["devices"]
    # the second command's comment names 0000:01:00.0 too: its -s selector decides, not the first slot on the line
    assert [d["slot"] for d in devs] == ["0000:01:00.0", "0000:00:01.1"]
    assert [d["lnksta"]["speed_gts"] for d in devs] == [2.5, 2.5]


@pytest.mark.parametrize(("cmd", "slot"), [
    ("lspci -vvvs c9:00.0 | grep -i speed", "0000:c9:00.0"),
    ("lspci -s 0000:c9:00.0 -vv | grep Lnk", "0000:c9:00.0"),
    ("$ sudo /usr/bin/lspci -vv -s1:0.0 | grep -E 'LnkCap|LnkSta'", "0000:01:00.0"),
    ("lspci -d 10de: -s 3b:00.1 -vvv", "0000:3b:00.1"),
    ("lspci -s 2:c1:00.0 -vv", "0002:c1:00.0"),
    ("lspci -s '01:00.0' -vv", "0000:01:00.0"),
    ("lspci -s 01:00 -vv | grep LnkSta", None),  # every function of the device
    ("lspci -s 00.0 -vv", None),  # no bus: every bus
    ("lspci -s *:00.0 -vv", None),
    ("lspci -s 0000:0<USER>:00.0", None),  # an anonymiser's bus
    ("lspci -vv | grep -s 01:00.0", None),  # grep's -s, not lspci's
    ("lspci -vv", None),
])
def test_selected_slot(cmd: str, slot: str | None) -> None:
    assert selected_slot(cmd) == slot


def test_a_command_without_s_keeps_the_slot_it_names() -> None:
    text = "$ lspci -vv | grep -A40 '3b:00.0' | grep LnkSta\nLnkSta: Speed 8GT/s (downgraded), Width x16\n"
    (dev,) = registry.parse("lspci", text)["devices"]
    assert dev["slot"] == "0000:3b:00.0"
