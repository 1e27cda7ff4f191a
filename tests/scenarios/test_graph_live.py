"""SIL-GPO's world through the common run: servers in the nodes' namespaces, the users in the
client node, the testbed's RTTs on every hop; a run directory like any run's (events, requests,
summary, comparison), the measured mean beside the model's, and nothing left running afterwards."""

from __future__ import annotations

import csv
import json
import urllib.request

import pytest

from harness.errors import UserError
from harness.families.silgpo import live as graph_live
from harness.results.rundir import REQUEST_FIELDS
from harness.scenarios.session import WorldSession, run_world_session
from tests.workload.test_graph_cell import tiny


def scenario(**fields) -> graph_live.ServiceGraphScenario:
    return graph_live.ServiceGraphScenario.model_validate(
        {"world": "servicegraph", "name": "tiny-live", "description": "three servers", "duration_s": 12,
         "warmup_s": 1, "load": {"rate_scale": 1.0}, **fields})


def test_a_policy_of_another_world_is_refused_in_one_line_before_anything_runs(tmp_path):
    with pytest.raises(UserError, match=r"reach is a policy of the one ground.*servicegraph scenario's policies: "
                                        r"preferred.*sil-gpo"):
        graph_live.plays(scenario(), ["queue-greedy", "reach"], tmp_path, cluster=None)
    with pytest.raises(UserError, match="no sil-gpo model for authors default here; make it with: harness train "
                                        "--policy sil-gpo --instance -1 --name sil-gpo-authors"):
        graph_live.plays(scenario(), ["sil-gpo"], tmp_path, cluster=None)
    with pytest.raises(UserError, match=r"take no arguments but a learner's \[model=PATH\]"):
        graph_live.plays(scenario(), ["helas[model=x.pt]"], tmp_path, cluster=None)


def test_a_load_past_the_models_stability_bound_is_refused_in_one_line(tmp_path):
    """MFDS-FPR's deployment of the authors' instance leaves a queue at ρ 1.5 under the paper's
    rates: the model caps its sojourn there, so it has no latency to set a run against."""
    with pytest.raises(UserError, match=r"rate_scale 1 loads a queue to ρ 1\.5\d\d; the model scores queues only "
                                        r"below 0\.99") as err:
        graph_live.plays(scenario(), ["mfds-fpr"], tmp_path, cluster=None)
    assert err.value.field == "load.rate_scale"
    with pytest.raises(ValueError, match="less than 0.99"):
        scenario(load={"busiest_rho": 0.995})


def test_a_scenario_file_of_the_world_is_checked_field_by_field():
    with pytest.raises(ValueError, match="give one of busiest_rho and rate_scale"):
        scenario(load={"busiest_rho": 0.5, "rate_scale": 0.5})
    with pytest.raises(ValueError, match="authors or seed-N"):
        scenario(instance="mine")


@pytest.mark.root
@pytest.mark.slow
def test_a_deployment_played_through_the_common_run_matches_the_model_with_its_rtts(local_testbed, tmp_path):
    g, X = tiny()
    cluster = local_testbed.cluster
    servers, client = graph_live.servers_on(cluster, g)
    rtts = graph_live.rtts_s(cluster, servers, client)
    assert rtts[0].max() > 0.02  # the hops cross the testbed's links, not loopback
    play = graph_live.ServiceGraphPlay(g, X, servers, client, rtts, timeout_s=20, rate_scale=1.0, full={})
    session = WorldSession(scenario(), {"tiny": play}, tmp_path / "session")
    (s,) = run_world_session(cluster, session, seeds=1, first_seed=3)
    run = tmp_path / "session" / "tiny-s3"
    assert s["run_dir"] == str(run) and not s["partial"] and s["scenario_world"] == "servicegraph"
    assert s["requests"] > 80 and s["errors"] == 0 and s["unfinished"] == 0
    model = s["metrics"]["per_type"][0]
    print(f"measured {s['mean_ms']:.1f} ms over {s['requests']} requests, model {model['expected_ms']:.1f} ms")
    assert s["mean_ms"] == pytest.approx(model["expected_ms"], rel=0.15)
    with open(run / "requests.csv") as f:
        assert tuple(next(csv.reader(f)))[:len(REQUEST_FIELDS)] == REQUEST_FIELDS
    kinds = [r["kind"] for r in csv.DictReader(open(run / "events.csv"))]
    assert kinds.index("deploy") < kinds.index("load-start")
    deployed = json.loads((run / "inputs" / "deployment.json").read_text())["placement"]
    assert deployed == {"s0": [servers[0]], "s1": [servers[1], servers[1], servers[2]], "s2": [servers[2]]}
    from harness.results.summary import WORLD_COLUMNS

    assert (tmp_path / "session" / "comparison.csv").read_text().splitlines()[0] == ",".join(WORLD_COLUMNS)
    for srv in servers:  # every server stopped
        with pytest.raises(OSError):
            urllib.request.urlopen(f"http://{cluster.node(srv).address}:{graph_live.PORT}/healthz", timeout=1)
    assert not cluster.stray_processes()


def test_evaluate_refuses_a_scenario_of_the_world_in_one_line():
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "harness", "evaluate", "silgpo-edge", "--policy", "helas"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "silgpo-edge.yaml: world: a scenario of the servicegraph world: 'harness run' plays it" in r.stderr
