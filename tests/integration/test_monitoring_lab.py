"""roles/monitoring for real in the lab (issue 26): site.yml with ``monitoring_enabled: true`` installs
Debian's node exporter on every lab node and Prometheus + Alertmanager on lab-ctl; a second run
changes nothing and check mode changes nothing.

Then, through Prometheus' HTTP API (asked from lab-ctl itself): every node exporter is up; the node
check on lab-c2, run with a shared mount it lacks (the fault: a mount point the node should have),
fails, and its verdict, written into node_exporter's textfile folder (clusterctl/report/prom.py's
rendering), shows as ``clusterctl_node_status{host="lab-c2",status="failed"} 1`` while lab-c1 is
healthy; the alerts ClusterctlNodeFailed and SharedMountMissing reach a webhook receiver (a tiny HTTP
server on lab-ctl's loopback recording each POST) through Alertmanager. lab-c1's node exporter reads a
simulated sysfs tree (tests/simfabric.py, the kernel's layout with the PMA port counters;
``monitoring_node_exporter_sysfs``): its node_infiniband_* metrics reach Prometheus, and when the
simulated counters move the rate shows there.

Then (issue 26, branch mon): the controller's Slurm textfile (the real slurmctld's sdiag parsed, node
states, a ``clusterctl:`` drain counted in its reason class), ``verify --prom`` writing lab-c1's own part
into its textfile folder, and last TLS + basic auth on (about 100 s of CI for these three).

The lab inventory keeps monitoring off (CI time): this test turns it on in a copy, and puts the lab
back as found (services stopped, the node check's settings re-rendered from inventories/lab).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import simfabric
import yaml
from labutil import LAB, cc, sh

pytestmark = [
    pytest.mark.lab,
    pytest.mark.skipif(shutil.which("podman") is None, reason="podman not installed (scripts/setup.sh installs it)"),
]

WEBHOOK_PORT = 9199
WEBHOOK_LOG = "/tmp/cc-webhook.jsonl"
WEBHOOK_PID = "/tmp/cc-webhook.pid"
MISSING_MOUNT = "/mnt/clusterctl-monlab-missing"
CHECK = "/usr/local/sbin/clusterctl-node-check"
CONFIG = "/etc/clusterctl/node-check.json"
#: lab-c2's node check settings with MISSING_MOUNT added (the fault the verdict and alert tests look for)
FAULT_CONFIG = "/tmp/cc-nc-fault.json"
TAGS = "monitoring,health"
DRAIN_REASON = "clusterctl: monlab reason-class test"
# TLS and basic auth (test_tls_and_basic_auth_scrapes): a self-signed certificate for every lab address
TLS_DIR = "/etc/ssl/clusterctl-monlab"
TLS_USER = "prometheus"
TLS_PASSWORD = "monlab-Scrape-pw-1"
# undoes the drain of test_slurm_textfile_reaches_prometheus (only that drain: the reason is ours)
RESUME_C1 = ("scontrol show node lab-c1 | grep -q 'Reason=clusterctl: monlab' && "
             "scontrol update NodeName=lab-c1 State=RESUME; true")
SIM_SYS = "/opt/clusterctl-monlab-sys"
# one HDR InfiniBand HCA; node_exporter needs board_id, fw_ver and hca_type (invented values)
SIM_DESC = {"devices": [{"name": "mlx5_0", "hca_type": "MT4123", "fw_ver": "20.31.2354", "board_id": "MT_0000000223",
                         "ports": [{"port": 1, "rate": 200, "counters": {"port_rcv_data": 1000}}]}]}

# the receiver: appends each POST body as one line; its pid in WEBHOOK_PID (the teardown kills that one)
RECEIVER = f"""
import http.server, os
open({WEBHOOK_PID!r}, "w").write(str(os.getpid()))
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with open({WEBHOOK_LOG!r}, "ab") as f:
            f.write(body.replace(b"\\n", b" ") + b"\\n")
        self.send_response(200)
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", {WEBHOOK_PORT}), H).serve_forever()
"""


def lab_address(host: str) -> str:
    hosts = yaml.safe_load((LAB / "hosts.yml").read_text())["all"]["children"]
    for group in hosts.values():
        if host in (group.get("hosts") or {}):
            return str(group["hosts"][host]["ansible_host"])
    raise KeyError(host)


def api(path: str, params: dict[str, str], tls: bool = False) -> Any:
    """GET Prometheus' HTTP API ``path`` on lab-ctl, asked from lab-ctl; ``tls``: over https (the test CA)
    with basic auth as TLS_USER (its password on stdin: never on a command line). Returns ``data``."""
    url = f"{'https' if tls else 'http'}://{lab_address('lab-ctl')}:9090{path}"
    script = ("import base64, json, ssl, sys, urllib.parse, urllib.request; "
              "req = urllib.request.Request(sys.argv[1] + '?' + urllib.parse.urlencode(json.loads(sys.argv[2]))); "
              "pw = sys.stdin.read(); "
              "pw and req.add_header('Authorization', 'Basic ' + base64.b64encode((sys.argv[3] + ':' + pw).encode())"
              ".decode()); "
              "ctx = ssl.create_default_context(cafile=sys.argv[4]) if sys.argv[4] else None; "
              "print(urllib.request.urlopen(req, timeout=10, context=ctx).read().decode())")
    out = subprocess.run(["podman", "exec", "-i", "clusterctl-lab-lab-ctl", "python3", "-c", script, url,
                          json.dumps(params), TLS_USER, f"{TLS_DIR}/monitoring.crt" if tls else ""],
                         input=TLS_PASSWORD if tls else "", capture_output=True, text=True, check=False)
    assert out.returncode == 0, f"GET {path} {params} failed: {out.stderr[-2000:]}"
    doc = json.loads(out.stdout)
    assert doc["status"] == "success", doc
    return doc["data"]


def query(expr: str, tls: bool = False) -> list[dict[str, Any]]:
    """Prometheus' instant query API (see :func:`api`)."""
    return list(api("/api/v1/query", {"query": expr}, tls)["result"])


def targets(tls: bool = False) -> str:
    """What Prometheus says of its scrape targets (health, last error) and each exporter's unit state: the
    explanation a timed-out wait for ``up`` carries."""
    up: dict[str, Any]
    try:
        up = {t["labels"].get("instance", "?"): (t["health"], t.get("lastError"), t.get("scrapeUrl"))
              for t in api("/api/v1/targets", {"state": "active"}, tls)["activeTargets"]}
    except AssertionError as exc:
        up = {"targets API failed": str(exc)[-500:]}
    units = {h: sh(h, "systemctl is-active prometheus-node-exporter; ss -ltnH 'sport = :9100' | head -3; "
                      "journalctl -u prometheus-node-exporter -n 5 --no-pager -o cat 2>&1 | tail -5").strip()
             for h in ("lab-ctl", "lab-c1", "lab-c2")}
    prom = sh("lab-ctl", "systemctl is-active prometheus; journalctl -u prometheus -n 8 --no-pager -o cat 2>&1 "
                         "| tail -8").strip()
    return f"targets: {up}\nexporters: {json.dumps(units, indent=1)}\nprometheus: {prom}"


def wait_for(what: str, cond: Callable[[], Any], timeout: float = 120,
             explain: Callable[[], str] | None = None) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}"
                                 + (f"\n{explain()}" if explain else ""))
        time.sleep(2)


def run_faulted_check() -> None:
    """lab-c2's node check once more with :data:`FAULT_CONFIG`, before each look of a wait for its failed verdict.

    slurmd runs the node check as HealthCheckProgram every slurm_common_health_check_interval (300 s) with the
    lab's own config: that run writes lab-c2's textfile healthy again, and an alert resolved before Alertmanager's
    group_wait is never delivered (a full lab tier of session 12 timed out so)."""
    sh("lab-c2", f"{CHECK} --config {FAULT_CONFIG} --no-drain >/dev/null 2>&1")


def provision(inv: Path, *extra: str) -> dict[str, Any]:
    res = cc("provision", str(inv), "--tags", TAGS, "--json", *extra)
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-3000:]
    doc = next(ln for ln in reversed(res.stdout.splitlines()) if ln.startswith('{"clusterctl"'))
    return json.loads(doc)["result"]  # the --json envelope


def changed(result: dict[str, Any]) -> dict[str, int]:
    return {h: s["changed"] for h, s in result["hosts"].items() if s["changed"]}


@pytest.fixture(scope="module")
def monitored(provisioned: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    inv = tmp_path_factory.mktemp("monitoring-lab") / "inv"
    shutil.copytree(LAB, inv)
    (inv / "group_vars" / "all" / "monitoring.yml").write_text(yaml.safe_dump({
        "monitoring_enabled": True,
        "monitoring_alertmanager": True,
        "monitoring_alertmanager_webhook_url": f"http://127.0.0.1:{WEBHOOK_PORT}/alerts",
        "monitoring_scrape_interval": "5s",
        "monitoring_slurm_textfile_interval": "5s",
    }))
    (inv / "host_vars").mkdir(exist_ok=True)
    (inv / "host_vars" / "lab-c1.yml").write_text(yaml.safe_dump({"monitoring_node_exporter_sysfs": SIM_SYS}))
    tree = simfabric.build(SIM_DESC, inv.parent / "sys")
    subprocess.run(["podman", "exec", "clusterctl-lab-lab-c1", "rm", "-rf", SIM_SYS], check=True)
    subprocess.run(["podman", "cp", str(tree), f"clusterctl-lab-lab-c1:{SIM_SYS}"], check=True)
    subprocess.run(["podman", "exec", "-i", "clusterctl-lab-lab-ctl", "sh", "-c",
                    f"rm -f {WEBHOOK_LOG}; cat > /tmp/cc-webhook.py"], input=RECEIVER, text=True, check=True)
    subprocess.run(["podman", "exec", "-d", "clusterctl-lab-lab-ctl", "python3", "/tmp/cc-webhook.py"], check=True)
    try:
        yield inv
    finally:
        sh("lab-ctl", f"test -s {WEBHOOK_PID} && kill $(cat {WEBHOOK_PID}); rm -f {WEBHOOK_PID} /tmp/cc-webhook.py")
        sh("lab-c1", f"rm -rf {SIM_SYS}")
        for host in ("lab-ctl", "lab-c1", "lab-c2"):
            sh(host, f"rm -rf {TLS_DIR} /etc/prometheus/clusterctl-web.yml /etc/prometheus/clusterctl-scrape-password")
        sh("lab-ctl", "systemctl disable -q --now clusterctl-slurm-textfile.timer 2>/dev/null; "
                      f"rm -f /var/lib/prometheus/node-exporter/clusterctl-slurm.prom; {RESUME_C1}")
        for host in ("lab-ctl", "lab-c1", "lab-c2"):
            sh(host, "for u in prometheus prometheus-alertmanager prometheus-node-exporter; do "
                     "systemctl disable -q --now $u 2>/dev/null; done; "
                     f"rm -f /var/lib/prometheus/node-exporter/clusterctl.prom {FAULT_CONFIG}")
        # the node check's settings as inventories/lab renders them (no textfile folder)
        res = cc("provision", str(LAB), "--tags", "health")
        assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]


def test_monitoring_role_converges_idempotent_and_check_mode(monitored: Path) -> None:
    first = provision(monitored)
    assert changed(first), "the first run with monitoring on changed nothing: was the role skipped?"
    assert not changed(provision(monitored)), "idempotence: a second run changed something"
    check = provision(monitored, "--check")
    assert not changed(check) and not check["failed"], check
    for host in ("lab-c1", "lab-c2"):
        conf = json.loads(sh(host, f"cat {CONFIG}"))
        assert conf["textfile_dir"] == "/var/lib/prometheus/node-exporter", conf
    # nothing listens on every address: each exporter on its inventory address only
    listen = sh("lab-c1", "cat /etc/default/prometheus-node-exporter")
    assert f"--web.listen-address={lab_address('lab-c1')}:9100" in listen, listen
    # Prometheus never ran with Debian's prometheus.yml (job "node" at localhost:9100: a phantom instance for
    # the 5-minute lookback, which failed the scrape test in the session-9 full lab tiers): every instance it
    # ever scraped is an inventory host's exporter
    want = {f"{lab_address(h)}:9100" for h in ("lab-ctl", "lab-c1", "lab-c2")}
    seen = {r["metric"]["instance"] for r in query("count by (instance) (count_over_time(up[1h]))")}
    assert seen <= want, seen


def test_prometheus_scrapes_exporters_and_node_check_verdicts(monitored: Path) -> None:
    # every lab node's exporter is scraped and up
    want = {f"{lab_address(h)}:9100" for h in ("lab-ctl", "lab-c1", "lab-c2")}

    def all_up() -> bool:
        up = {r["metric"]["instance"]: r["value"][1] for r in query('up{job="node"}')}
        return set(up) == want and set(up.values()) == {"1"}

    wait_for(f"up == 1 for {sorted(want)}", all_up, explain=targets)

    # lab-c1 healthy; lab-c2's node check run with a shared mount it lacks: failed (not drained)
    assert sh("lab-c1", f"{CHECK} --no-drain >/dev/null 2>&1; echo $?").strip() == "0"
    sh("lab-c2", "python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); "
                 "c[\"mounts\"] = [sys.argv[2]]; json.dump(c, open(sys.argv[3], \"w\"))' "
                 f"{CONFIG} {MISSING_MOUNT} {FAULT_CONFIG}")
    out = sh("lab-c2", f"{CHECK} --config {FAULT_CONFIG} --no-drain; echo rc=$?")
    assert "rc=1" in out and "node_mount" in out and MISSING_MOUNT in out, out
    assert "textfile not written" not in out, out

    def status(host: str, value: str) -> list[dict[str, Any]]:
        return [r for r in query(f'clusterctl_node_status{{host="{host}",status="failed"}}') if r["value"][1] == value]

    def failed_c2() -> list[dict[str, Any]]:
        run_faulted_check()
        return status("lab-c2", "1")

    wait_for("clusterctl_node_status failed=1 for lab-c2", failed_c2)
    wait_for("clusterctl_node_status failed=0 for lab-c1", lambda: status("lab-c1", "0"))
    findings = query('clusterctl_findings{host="lab-c2",check="node_mount",severity="critical"}')
    assert [r["value"][1] for r in findings] == ["1"], findings


def test_alerts_reach_the_webhook_through_alertmanager(monitored: Path) -> None:
    """After the test above: lab-c2's failed verdict fires ClusterctlNodeFailed and SharedMountMissing,
    which Alertmanager delivers to the receiver on lab-ctl's loopback."""

    def delivered() -> set[tuple[str, str]]:
        got = set()
        for line in sh("lab-ctl", f"cat {WEBHOOK_LOG} 2>/dev/null").splitlines():
            for alert in json.loads(line).get("alerts", []):
                if alert.get("status") == "firing":
                    got.add((alert["labels"].get("alertname", ""), alert["labels"].get("host", "")))
        return got

    def still_failed_then_delivered() -> bool:
        run_faulted_check()
        return {("ClusterctlNodeFailed", "lab-c2"), ("SharedMountMissing", "lab-c2")} <= delivered()

    def explain() -> str:
        alerts = [(r["metric"].get("alertname"), r["metric"].get("host"), r["metric"].get("alertstate"))
                  for r in query("ALERTS")]
        status = query('clusterctl_node_status{host="lab-c2"}')
        return (f"Prometheus ALERTS: {alerts}\nlab-c2 status: {status}\n"
                + sh("lab-ctl", f"echo webhook log:; tail -c 2000 {WEBHOOK_LOG} 2>&1; "
                                f"kill -0 $(cat {WEBHOOK_PID}) 2>&1 && echo webhook alive; "
                                "systemctl is-active prometheus-alertmanager 2>&1; "
                                "journalctl -u prometheus-alertmanager -n 20 --no-pager 2>&1"))

    got = wait_for("ClusterctlNodeFailed and SharedMountMissing for lab-c2 at the webhook",
                   still_failed_then_delivered, timeout=300, explain=explain)
    # (evaluation and group_wait; 120 s was too short on a loaded machine)
    assert got
    assert not {a for a in delivered() if a[1] == "lab-c1"}, delivered()


def test_simulated_rdma_counters_reach_prometheus(monitored: Path) -> None:
    c1 = f"{lab_address('lab-c1')}:9100"
    info = wait_for("node_infiniband_info of lab-c1's simulated HCA",
                    lambda: query(f'node_infiniband_info{{instance="{c1}"}}'))
    assert [(r["metric"]["device"], r["metric"]["board_id"]) for r in info] == [("mlx5_0", "MT_0000000223")], info
    received = f'node_infiniband_port_data_received_bytes_total{{instance="{c1}",device="mlx5_0",port="1"}}'
    # port_rcv_data counts 4-octet words: node_exporter reports 4x
    wait_for("the description's port_rcv_data", lambda: [r for r in query(received) if r["value"][1] == "4000"])
    counter = f"{SIM_SYS}/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data"
    for _ in range(3):  # traffic on the port: the counter moves between scrapes
        sh("lab-c1", f"echo $(( $(cat {counter}) + 250000000 )) > {counter}.tmp && mv {counter}.tmp {counter}")
        time.sleep(6)
    rate = wait_for("a received-bytes rate on lab-c1's mlx5_0",
                    lambda: [r for r in query(f"rate({received}[1m])") if float(r["value"][1]) > 0])
    assert float(rate[0]["value"][1]) > 0, rate
    # no other instance exports the simulated device (the containers have no RDMA device of their own)
    assert {r["metric"]["instance"] for r in query("node_infiniband_info")} == {c1}


def test_slurm_textfile_reaches_prometheus(monitored: Path) -> None:
    """The controller's Slurm textfile (clusterctl.report.slurm_textfile, run by the role's timer every 5 s
    here): the real slurmctld's sdiag parses, its metrics and the node states reach Prometheus, and a drain
    with a clusterctl reason is counted in its class within a few runs."""
    from ccparse import registry

    real = sh("lab-ctl", "sdiag")
    data = registry.parse("sdiag", real)
    assert not data["excerpt"] and "running" in data["jobs"] and data["main"], real[:2000]
    def read_ok(tool: str) -> list[dict[str, Any]]:
        return [r for r in query(f'clusterctl_slurm_tool_status{{tool="{tool}",status="ok"}}') if r["value"][1] == "1"]

    wait_for("sdiag and sinfo read by the Slurm textfile", lambda: read_ok("sdiag") and read_ok("sinfo"))
    nodes = set(sh("lab-ctl", "sinfo -h -N -o %N").split())
    assert nodes, "sinfo shows no node"
    wait_for(f"sum(clusterctl_slurm_nodes) == {len(nodes)}",
             lambda: [r for r in query("sum(clusterctl_slurm_nodes)") if float(r["value"][1]) == len(nodes)])
    cycles = query('clusterctl_slurm_scheduler_cycle_seconds{scheduler="main",cycle="max"}')
    assert cycles and float(cycles[0]["value"][1]) >= 0, cycles
    assert query('clusterctl_slurm_jobs{state="running"}'), "no jobs gauge"

    def drained(cls: str) -> int | None:
        got = query(f'clusterctl_slurm_nodes_drained{{reason_class="{cls}"}}')
        return int(float(got[0]["value"][1])) if got else None

    wait_for("the drained-node counts", lambda: drained("clusterctl") is not None)
    before = drained("clusterctl") or 0
    admin = drained("admin")
    assert "Reason=" not in sh("lab-ctl", "scontrol show node lab-c1 | grep -o 'Reason=[^ ]*'"), "lab-c1 is drained"
    sh("lab-ctl", f"scontrol update NodeName=lab-c1 State=DRAIN Reason='{DRAIN_REASON}'")
    try:
        wait_for("lab-c1's drain counted as clusterctl", lambda: drained("clusterctl") == before + 1)
        assert drained("admin") == admin, query("clusterctl_slurm_nodes_drained")
    finally:
        sh("lab-ctl", RESUME_C1)
    wait_for("the drain gone from the textfile", lambda: drained("clusterctl") == before)


def test_verify_prom_writes_each_node_textfile(monitored: Path, tmp_path: Path) -> None:
    """``verify --prom`` writes the whole report locally and lab-c1's own part into its textfile folder
    (monitoring_enabled in the inventory): Prometheus shows a verify time for lab-c1 newer than the run's start."""
    t0 = time.time()
    res = cc("verify", str(monitored), "--hosts", "lab-c1", "--prom", str(tmp_path / "all.prom"))
    assert "textfile clusterctl.prom written on 1 of 1 hosts" in res.stdout + res.stderr, \
        res.stdout[-3000:] + res.stderr[-2000:]
    assert 'host="lab-c1"' in (tmp_path / "all.prom").read_text()
    on_node = sh("lab-c1", "cat /var/lib/prometheus/node-exporter/clusterctl.prom")
    assert 'clusterctl_node_status{host="lab-c1"' in on_node, on_node
    c1 = lab_address("lab-c1")
    wait_for("lab-c1's verify time in Prometheus",
             lambda: [r for r in query(f'clusterctl_last_verify_timestamp_seconds{{instance="{c1}:9100"}}')
                      if float(r["value"][1]) >= t0 - 1])


def test_tls_and_basic_auth_scrapes(monitored: Path, tmp_path: Path) -> None:
    """Last (it turns TLS on for the rest of the module): with monitoring_tls_* and a basic-auth user the
    exporters, Prometheus and Alertmanager serve https behind basic auth, Prometheus still scrapes every
    node (up == 1, asked over https with the user), a request without the password is refused, and no
    password is in any file the role wrote but Prometheus' password_file."""
    hosts = ("lab-ctl", "lab-c1", "lab-c2")
    san = ",".join(f"IP:{lab_address(h)}" for h in hosts)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-subj", "/CN=clusterctl-monlab", "-addext", f"subjectAltName={san}", "-days", "2",
                    "-keyout", str(tmp_path / "monitoring.key"), "-out", str(tmp_path / "monitoring.crt")],
                   check=True, capture_output=True, timeout=60)
    for h in hosts:
        sh(h, f"mkdir -p {TLS_DIR}")
        for f in ("monitoring.crt", "monitoring.key"):
            subprocess.run(["podman", "cp", str(tmp_path / f), f"clusterctl-lab-{h}:{TLS_DIR}/{f}"], check=True)
        sh(h, f"chown root:prometheus {TLS_DIR}/* && chmod 0640 {TLS_DIR}/*")
    # the password vaulted, as clusterctl validate requires of a secret
    from ansible.parsing.vault import VaultLib, VaultSecret

    (tmp_path / "vault-pass").write_text("monlab-vault\n")
    vault = ["--vault-password-file", str(tmp_path / "vault-pass")]
    payload = VaultLib([("default", VaultSecret(b"monlab-vault"))]).encrypt(TLS_PASSWORD).decode()
    extra = monitored / "group_vars" / "all" / "monitoring-tls.yml"
    extra.write_text(yaml.safe_dump({
        "monitoring_tls_cert_file": f"{TLS_DIR}/monitoring.crt", "monitoring_tls_key_file": f"{TLS_DIR}/monitoring.key",
        "monitoring_tls_ca_file": f"{TLS_DIR}/monitoring.crt", "monitoring_scrape_user": TLS_USER})
        + f"monitoring_basic_auth_users:\n  - name: {TLS_USER}\n    password: !vault |\n"
        + "".join(f"      {line}\n" for line in payload.splitlines()))
    try:
        res = provision(monitored, *vault)
        assert not res["failed"], res
        want = {f"{lab_address(h)}:9100" for h in hosts}

        def all_up() -> bool:
            up = {r["metric"]["instance"]: r["value"][1] for r in query('up{job="node"}', tls=True)}
            return set(up) == want and set(up.values()) == {"1"}

        wait_for(f"up == 1 over https with basic auth for {sorted(want)}", all_up,
                 explain=lambda: targets(tls=True))
        # an exporter refuses a scrape without the password
        c1 = lab_address("lab-c1")
        probe = ("import ssl, sys, urllib.error, urllib.request\n"
                 "ctx = ssl.create_default_context(cafile=sys.argv[2])\n"
                 "try:\n    urllib.request.urlopen(sys.argv[1], context=ctx)\n    print(200)\n"
                 "except urllib.error.HTTPError as exc:\n    print(exc.code)\n")
        no_pw = subprocess.run(["podman", "exec", "clusterctl-lab-lab-ctl", "python3", "-c", probe,
                                f"https://{c1}:9100/metrics", f"{TLS_DIR}/monitoring.crt"],
                               capture_output=True, text=True, check=False).stdout
        assert "401" in no_pw, no_pw
        for h in hosts:
            web = sh(h, "cat /etc/prometheus/clusterctl-web.yml")
            assert "$2b$10$" in web and TLS_PASSWORD not in web, (h, web)
            assert TLS_PASSWORD not in sh(h, "cat /etc/default/prometheus* /etc/prometheus/prometheus.yml 2>/dev/null; "
                                             "ps -eo args")
        assert sh("lab-ctl", "stat -c '%U:%G %a' /etc/prometheus/clusterctl-scrape-password").strip() \
            == "root:prometheus 640"
        assert not changed(provision(monitored, *vault)), "idempotence with TLS and basic auth: a second run changed"
    finally:
        extra.unlink()
