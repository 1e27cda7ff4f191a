import copy
import json
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.spec.app import load_app, parse_app

WORKLOADS = Path(__file__).resolve().parents[2] / "workloads"


def mub():
    return json.loads((WORKLOADS / "mubench-workmodel.json").read_text())


def test_bare_mubench_workmodel_loads_unchanged_with_gateway_inferred():
    app = load_app(WORKLOADS / "mubench-workmodel.json")
    assert app.name == "mubench-workmodel" and app.gateway == "s0"
    g = app.services["s0"].external_services
    assert [x.services for x in g] == [["s1"], ["s2", "s3"]]
    assert g[1].seq_len == 1 and g[1].probabilities == {"s2": 0.5, "s3": 1}
    assert app.services["s0"].job == "compute_pi"
    assert app.services["s0"].model_extra["image"].startswith("msvcbench/")  # unknown keys kept


@pytest.mark.parametrize("name, edges", [
    ("chain", [("front-end", "ml"), ("ml", "back-end"), ("back-end", "db")]),
    ("aggregator-sequential", [("front-end", "ml"), ("front-end", "back-end"), ("front-end", "db")]),
    ("aggregator-parallel", [("front-end", "ml"), ("front-end", "back-end"), ("back-end", "db")]),
])
def test_reach_apps(name, edges):
    app = load_app(WORKLOADS / f"{name}.json")
    assert app.gateway == "front-end" and app.edges() == edges
    ml = app.services["ml"].job_params["cpu_stress"]
    assert ml["range_complexity"] == [400, 400] and ml["trials"] == 8  # REACH Table IV
    db = app.services["db"].job_params
    assert db["disk_stress"]["disk_write_block_count"] == 100 and db["memory_stress"]["memory_size"] == 100


def bad(mutate):
    doc = mub()
    mutate(doc)
    with pytest.raises(UserError) as err:
        parse_app(doc, "w.json")
    return str(err.value)


@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d["s1"]["external_services"][0]["services"].append("s9"), "w.json: s1.external_services[0].services[1]: unknown service 's9'"),
    (lambda d: d["s3"]["external_services"][0]["services"].append("s1"), "w.json: services: the call graph has a cycle: s1 -> s3 -> s1"),
    (lambda d: d["s0"]["external_services"][0].update(seq_len=0), "w.json: s0.external_services[0].seq_len: must be ≥ 1"),
    (lambda d: d["s0"]["external_services"][1]["probabilities"].update(s2=1.5), "w.json: s0.external_services[1].probabilities: probability of 's2' is 1.5; must be within [0, 1]"),
    (lambda d: d["s2"]["internal_service"]["compute_pi"].update(range_complexity=[-5, 10]), "w.json: s2.internal_service.compute_pi.range_complexity[0]: must be ≥ 0, got -5"),
    (lambda d: d.update(S_4=copy.deepcopy(d["s2"])) or d["s0"]["external_services"][0]["services"].append("S_4"), "w.json: S_4: service name 'S_4' must be a DNS-1123 label"),
    (lambda d: d.update(s4=copy.deepcopy(d["s2"])), "cannot tell the gateway: 2 services are called by none (s0, s4)"),
    (lambda d: d["s2"].update(internal_service={"colour_pi": {}}), "w.json: s2.internal_service: unsupported job 'colour_pi'"),
    (lambda d: d["s2"].update({"cpu-requests": "lots"}), "w.json: s2.cpu-requests: 'lots' is not a CPU quantity"),
])
def test_bad_apps_name_the_field(mutate, expected):
    assert expected in bad(mutate)


def test_wrapped_app_gateway_must_exist():
    doc = {"name": "x", "gateway": "nope", "services": mub()}
    with pytest.raises(UserError, match="w.json: gateway: gateway 'nope' is not a service"):
        parse_app(doc, "w.json")
    doc = {"name": "x", "services": {**mub(), "s9": mub()["s2"]}}
    with pytest.raises(UserError, match="no gateway given and 2 services are called by none"):
        parse_app(doc, "w.json")


def test_validate_command_prints_groups(tmp_path):
    from harness.cli.main import main

    assert main(["validate", str(WORKLOADS / "aggregator-parallel.json")]) == 0
    f = tmp_path / "broken.json"
    f.write_text("{")
    assert main(["validate", str(f)]) == 2
