"""A cluster harness did not build (issue 42): attached through --kubeconfig/--context and node
labels as a cloud provider sets them, provision-free status with measured RTTs, deploy, an
emulated node failure, teardown that removes only harness's own objects. The API server is the
FAKE one (no Kubernetes can run here); its RTT probe pods run for real, as local processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.cli.main import main
from tests.conftest import REPO
from tests.kube.fake_apiserver import FakeApiServer


def node(name: str, instance: str, zone: str, cpu: str, memory: str, address: str, taints=None) -> dict:
    """A Node as EKS shows it: the well-known labels, allocatable in the kubelet's units."""
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"node.kubernetes.io/instance-type": instance,
                                                  "topology.kubernetes.io/zone": zone,
                                                  "topology.kubernetes.io/region": "eu-west-1",
                                                  "kubernetes.io/hostname": name}},
            "spec": {"taints": taints or []},
            "status": {"addresses": [{"type": "InternalIP", "address": address}, {"type": "Hostname", "address": name}],
                       "allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}}}


NODES = [
    node("ip-10-0-0-5.eu-west-1.compute.internal", "m5.large", "eu-west-1a", "1930m", "7042936Ki", "127.0.1.5",
         taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]),
    node("ip-10-0-1-11.eu-west-1.compute.internal", "m5.xlarge", "eu-west-1a", "3920m", "15147732Ki", "127.0.1.11"),
    node("ip-10-0-1-12.eu-west-1.compute.internal", "m5.xlarge", "eu-west-1b", "3920m", "15147732Ki", "127.0.1.12"),
    node("ip-10-0-9-21.eu-west-1.compute.internal", "t3.medium", "eu-west-1-wl1-ber-wlz-1", "1930m", "3364536Ki",
         "127.0.1.21"),
    node("ip-10-0-9-22.eu-west-1.compute.internal", "t3.medium", "eu-west-1-wl1-ber-wlz-1", "1930m", "3364536Ki",
         "127.0.1.22"),
]
EDGE = "ip-10-0-9-21.eu-west-1.compute.internal"
CLUSTER_MAP = {"name": "eks-berlin", "tiers": {"*-wlz-*": "edge"}, "image": "registry.example.com/harness/cell:0.1.0",
               "node_types": {"m5.xlarge": {"speed": 1.0, "cost": 0.192}, "t3.medium": {"speed": 0.6, "cost": 0.0416}}}


@pytest.fixture
def cluster(tmp_path):
    with FakeApiServer(NODES, run_env={"PYTHONPATH": str(REPO)}) as server:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "prod",
            "clusters": [{"name": "lab", "cluster": {"server": server.url}},
                         {"name": "prod", "cluster": {"server": "http://127.0.0.1:9"}}],
            "users": [{"name": "me", "user": {"token": "t"}}],
            "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "me"}},
                         {"name": "prod", "context": {"cluster": "prod", "user": "me"}}]}))
        cmap = tmp_path / "cluster.yaml"
        cmap.write_text(yaml.safe_dump(CLUSTER_MAP))
        yield server, ["--state-dir", str(tmp_path / ".harness"), "--kubeconfig", str(kubeconfig), "--context", "lab",
                       "--cluster-map", str(cmap)], tmp_path


def test_status_attaches_reads_labels_and_measures_rtts(cluster, capsys):
    server, attach, tmp = cluster
    assert main(attach + ["status", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    nodes = {n["name"]: n for n in doc["nodes"]}
    assert doc["backend"] == "existing" and doc["name"] == "eks-berlin" and doc["latency_injector"] is None
    assert "ip-10-0-0-5.eu-west-1.compute.internal" not in nodes  # the control plane is no testbed node
    assert len(nodes) == 5 and nodes["here"]["role"] == "client" and all(n["up"] for n in nodes.values())
    edge = nodes[EDGE]
    assert (edge["type"], edge["tier"], edge["role"], edge["site"]) == ("t3.medium", "edge", "edge",
                                                                         "eu-west-1-wl1-ber-wlz-1")
    assert edge["cpus"] == pytest.approx(1.93) and edge["memory_gb"] == pytest.approx(3.209, abs=0.01)
    assert (edge["speed"], edge["cost"]) == (0.6, 0.0416)
    cloud = nodes["ip-10-0-1-11.eu-west-1.compute.internal"]
    assert (cloud["tier"], cloud["site"], cloud["cost"]) == ("cloud", "eu-west-1a", 0.192)
    # every pair measured: between nodes by the probe pods (which ran and are gone), and from here
    rtt = doc["rtt_measured_ms"]
    for a in nodes:
        for b in nodes:
            assert rtt[a][b] is not None and (a == b or 0 < rtt[a][b] < 50), (a, b)
    assert not [p for (r, _, name), p in server.cluster.objects.items() if r == "pods" and name.startswith("harness-rtt")]
    # the configured matrix is the tiers' medians of what was measured
    assert doc["rtt_configured_ms"][EDGE]["ip-10-0-1-11.eu-west-1.compute.internal"] > 0
    # a later command uses the attached cluster without being told again
    assert main(["--state-dir", str(tmp / ".harness"), "status"]) == 0
    out = capsys.readouterr().out
    assert EDGE in out and "t3.medium" in out and "eu-west-1-wl1-ber-wlz-1" in out


def test_deploy_binds_every_replica_on_the_clusters_nodes_and_teardown_removes_only_harness(cluster, capsys):
    from harness.testbed.open import open_cluster

    server, attach, tmp = cluster
    assert main(attach + ["deploy", "--app", "workloads/chain.json"]) == 0
    pods = [p for (r, ns, _), p in server.cluster.objects.items() if r == "pods" and ns == "harness"
            and p["metadata"]["labels"].get("app") in {"front-end", "ml", "back-end", "db"}]
    assert len(pods) == 4 and all(p["status"]["phase"] == "Running" for p in pods)
    assert {p["spec"]["nodeName"] for p in pods} <= {n["metadata"]["name"] for n in NODES[1:]}
    assert {c["image"] for p in pods for c in p["spec"]["containers"]} == {CLUSTER_MAP["image"]}
    assert {c["imagePullPolicy"] for p in pods for c in p["spec"]["containers"]} == {"IfNotPresent"}
    assert server.cluster.get("deployments", "harness", "prometheus")  # harness's Prometheus, in its namespace

    # a node failure is emulated: cordoned and tainted, harness's pods on it gone; recovery undoes it
    c = open_cluster(tmp / ".harness")
    lost = c.fail_node(EDGE)
    n = server.cluster.get("nodes", "", EDGE)
    assert n["spec"]["unschedulable"] is True and {"key": "harness.io/failed", "value": "true",
                                                   "effect": "NoExecute"} in n["spec"]["taints"]
    assert not c.node_up(EDGE) and all(p.node == EDGE for p in lost)
    c.recover_node(EDGE)
    n = server.cluster.get("nodes", "", EDGE)
    assert "unschedulable" not in n["spec"] and not n["spec"].get("taints") and c.node_up(EDGE)
    c.api.close()

    assert main(["--state-dir", str(tmp / ".harness"), "teardown"]) == 0
    assert "deleted namespace harness" in capsys.readouterr().out
    left = {(r, ns) for (r, ns, _) in server.cluster.objects}
    assert left == {("nodes", "")}  # the nodes stay as they were; nothing of harness's is left
    assert not (tmp / ".harness" / "testbed.yaml").exists()


def test_an_unknown_context_is_one_line_naming_the_contexts(cluster, capsys):
    _, attach, tmp = cluster
    bad = [a if a != "lab" else "staging" for a in attach]
    assert main(bad + ["status"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--context" in err and "lab, prod" in err
    assert not (tmp / ".harness" / "testbed.yaml").exists()


SHORT = {"name": "short", "description": "one closed-loop user on Chain for 10 s", "duration_s": 10, "app": "chain",
         "replicas": 1, "load": {"mode": "closed", "steps": [{"at_s": 0, "value": 1}]}}


@pytest.mark.slow
def test_a_profile_and_a_short_run_on_the_attached_cluster(cluster, capsys):
    """The whole loop on a cluster of the user's: attach, profile its node types, run, with every
    request answered by cells running on its nodes (the fake's kubelet runs them for real)."""
    import csv

    server, attach, tmp = cluster
    cmap = yaml.safe_load((tmp / "cluster.yaml").read_text())
    (tmp / "cluster.yaml").write_text(yaml.safe_dump({**cmap, "prometheus_node_port": None}))  # nothing serves it
    (tmp / "short.yaml").write_text(yaml.safe_dump(SHORT))
    state = ["--state-dir", str(tmp / ".harness")]
    assert main(attach + ["profile", "--app", "workloads/chain.json", "--requests", "3", "--warmup", "1",
                          "--out", str(tmp / "profiles")]) == 0
    profile = json.loads((tmp / "profiles/chain.eks-berlin.json").read_text())
    assert set(profile["node_types"]) >= {"m5.xlarge", "t3.medium"}
    capsys.readouterr()
    assert main(state + ["run", str(tmp / "short.yaml"), "--policy", "default", "--profile",
                         str(tmp / "profiles/chain.eks-berlin.json"), "--out", str(tmp / "results"), "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)  # run --json: nothing but the runs' summaries on stdout
    run = next((tmp / "results").glob("*-short/default-s0"))
    assert row["policy"] == "default" and Path(row["run_dir"]).resolve() == run.resolve()
    rows = list(csv.DictReader(open(run / "requests.csv")))
    summary = json.loads((run / "summary.json").read_text())
    assert len(rows) > 10 and [r["error"] for r in rows if r["status"] != "200" and not r["error"].startswith("Unfinished")] == [] and summary["errors"] == 0, summary
    deploy = [json.loads(r["detail"]) for r in csv.DictReader(open(run / "events.csv")) if r["kind"] == "deploy"][0]
    assert {n for nodes in deploy["placement"].values() for n in nodes} <= {n["metadata"]["name"] for n in NODES[1:]}
    assert (run / "locust_report.html").stat().st_size > 1000
    assert main(state + ["teardown"]) == 0
