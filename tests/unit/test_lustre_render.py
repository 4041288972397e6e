"""Render the lustre_client templates with jinja2 directly (the role's own template files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
import pytest
import yaml
from ansible.plugins.filter.core import to_bool

ROLE = Path(__file__).resolve().parents[2] / "roles" / "lustre_client"


def render(name: str, **variables: Any) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(ROLE / "templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,  # Ansible's template module default
        keep_trailing_newline=True,
        extensions=["jinja2.ext.do"],
    )
    env.filters["bool"] = to_bool  # the one Ansible filter the templates use
    base: dict[str, Any] = {
        "ansible_managed": "Ansible managed",
        "lustre_client_lnet_options": {},
        "lustre_client_ko2iblnd_options": {},
        "lustre_client_multirail": False,
    }
    base.update(variables)
    return env.get_template(name).render(**base)


def options_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith("options ")]


def test_single_ib_port() -> None:
    out = render("lnet.conf.j2", lustre_client_lnet_networks=[{"net": "o2ib0", "interfaces": ["ib0"]}])
    assert options_lines(out) == ["options lnet networks=o2ib0(ib0)"]
    assert "multi-rail" not in out


def test_tcp() -> None:
    out = render("lnet.conf.j2", lustre_client_lnet_networks=[{"net": "tcp0", "interfaces": ["eth0"]}])
    assert options_lines(out) == ["options lnet networks=tcp0(eth0)"]


def test_multirail_ib_ports_on_one_net() -> None:
    out = render(
        "lnet.conf.j2",
        lustre_client_lnet_networks=[{"net": "o2ib0", "interfaces": ["ib0", "ib1", "ib2", "ib3"]}],
        lustre_client_multirail=True,
    )
    assert options_lines(out) == ["options lnet networks=o2ib0(ib0,ib1,ib2,ib3)"]
    assert "multi-rail" in out


def test_two_networks_are_quoted_and_extra_options_sorted() -> None:
    out = render(
        "lnet.conf.j2",
        lustre_client_lnet_networks=[
            {"net": "o2ib0", "interfaces": ["ib0"]},
            {"net": "tcp0", "interfaces": ["eth0"]},
        ],
        lustre_client_lnet_options={"lnet_transaction_timeout": 50, "lnet_retry_count": 2},
    )
    assert options_lines(out) == [
        'options lnet networks="o2ib0(ib0),tcp0(eth0)" lnet_retry_count=2 lnet_transaction_timeout=50'
    ]


def test_ko2iblnd_options() -> None:
    out = render("ko2iblnd.conf.j2", lustre_client_ko2iblnd_options={"peer_credits": 32, "map_on_demand": 256})
    assert options_lines(out) == ["options ko2iblnd map_on_demand=256 peer_credits=32"]


def test_multirail_lnetctl_yaml() -> None:
    out = render(
        "lnet.yaml.j2",
        lustre_client_lnet_networks=[{"net": "o2ib0", "interfaces": ["ib0", "ib1"]}],
    )
    doc = yaml.safe_load(out)
    assert doc == {
        "net": [
            {
                "net type": "o2ib0",
                "local NI(s)": [{"interfaces": {0: "ib0"}}, {"interfaces": {0: "ib1"}}],
            }
        ]
    }


@pytest.mark.parametrize("name", ["lnet.conf.j2", "ko2iblnd.conf.j2", "lnet.yaml.j2"])
def test_templates_start_with_managed_comment(name: str) -> None:
    out = render(
        name,
        lustre_client_lnet_networks=[{"net": "o2ib0", "interfaces": ["ib0"]}],
        lustre_client_ko2iblnd_options={"peer_credits": 8},
    )
    assert out.splitlines()[0] == "# Ansible managed"
