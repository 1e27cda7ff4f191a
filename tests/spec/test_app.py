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
    ml = app.services["ml"].job_params.cpu_stress
    assert ml.range_complexity == [400, 400] and ml.trials == 8  # REACH Table IV
    db = app.services["db"].job_params
    assert db.disk_stress.disk_write_block_count == 100 and db.memory_stress.memory_size == 100
    # said explicitly, so the app means the same on μBench (whose loader sleeps 10 ms by default)
    assert all(not s.job_params.sleep_stress.run for s in app.services.values())
    assert app.warnings == []


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
    (lambda d: d["s2"]["internal_service"]["compute_pi"].update(range_complexity=[-5, 10]), "w.json: s2.internal_service.compute_pi.range_complexity: expected [low, high], two integers ≥ 0, got [-5, 10]"),
    # finding 10: job parameters μBench would fail on at run time are errors up front
    (lambda d: d["s2"]["internal_service"]["compute_pi"].update(range_complexity=[100, 10]), "w.json: s2.internal_service.compute_pi.range_complexity: low 100 > high 10"),
    (lambda d: d["s2"]["internal_service"]["compute_pi"].update(range_complexity="50"), "w.json: s2.internal_service.compute_pi.range_complexity: expected [low, high], two integers ≥ 0, got '50'"),
    (lambda d: d["s2"].update(internal_service={"loader": {"cpu_stress": {"run": True, "trials": "3"}}}), "w.json: s2.internal_service.loader.cpu_stress.trials: input should be a valid integer"),
    (lambda d: d["s2"].update(internal_service={"loader": {"sleep_stress": {"sleep_time": "0.1"}}}), "w.json: s2.internal_service.loader.sleep_stress.sleep_time: input should be a valid number"),
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


def test_validate_prints_warnings(capsys):
    from harness.cli.main import main

    assert main(["validate", str(MUBENCH_DATA / "generator-default-workmodel.json")]) == 0
    err = capsys.readouterr().err
    assert "warning: " in err and "sidecar ignored (sdb1)" in err


MUBENCH_DATA = Path(__file__).resolve().parents[1] / "data" / "mubench"


def test_mubench_generator_default_workmodel_validates_with_one_warning_per_ignored_key():
    # finding 8 (colosseum) and 12 (ignored keys): the workmodel μBench's WorkModelGenerator writes
    # with its default Configs (see tests/data/mubench/README.md)
    app = load_app(MUBENCH_DATA / "generator-default-workmodel.json")
    assert app.services["s0"].job == "colosseum" and app.gateway == "s0"
    w = app.warnings
    keys = [line.split(" ")[0] for line in w]
    assert sorted(keys) == ["cpu-limits", "sidecar", "threads", "workers"]  # one line each
    assert any(line.startswith("sidecar ignored (sdb1)") for line in w)


@pytest.mark.parametrize("key, value, expected", [
    ("request_method", "gRPC", "request_method = 'gRPC' ignored (s1): cells speak HTTP"),
    ("path", "/api/v2", "path = '/api/v2' ignored (s1)"),
    ("alternative_behaviors", [{"probability": 0.5}], "alternative_behaviors ignored (s1)"),
    ("memory-limits", "1Gi", "memory-limits ignored (s1)"),
    ("colour", "blue", "colour ignored (s1): not a key harness knows"),
])
def test_each_ignored_key_is_one_warning(key, value, expected):
    doc = mub()
    doc["s1"][key] = value
    assert any(expected in line for line in parse_app(doc, "w.json").warnings)


def test_keys_meaning_what_harness_does_are_not_reported():
    doc = mub()
    doc["s1"].update(request_method="rest", path="/api/v1", url="s1.default.svc.cluster.local")
    assert not any(k in line for line in parse_app(doc, "w.json").warnings for k in ("request_method", "path", "url"))


def test_probability_outside_the_group_is_a_warning_as_mubench_ignores_it():
    # finding 9: μBench's workmodelC-multi.json gives s2 a probability in a group without s2
    doc = mub()
    doc["s0"]["external_services"][0]["probabilities"] = {"s1": 1.0, "s3": 0.5}
    app = parse_app(doc, "w.json")
    assert app.warnings[0] == "s0.external_services[0].probabilities.s3 ignored: 's3' is not in this group's services"


def test_unknown_job_parameters_are_warned_not_rejected():
    doc = mub()
    doc["s2"]["internal_service"] = {"loader": {"cpu_stress": {"run": True, "cores": 2}, "function_id": "f3"}}
    w = parse_app(doc, "w.json").warnings
    assert "s2.internal_service.loader.cpu_stress.cores ignored: the job does not read it" in w
    assert not any("function_id" in line for line in w)  # μBench's generator's own bookkeeping


@pytest.mark.parametrize("doc, expected", [
    # finding 13: a service graph and μBench's tool configuration files are named as such
    (json.loads((MUBENCH_DATA / "generator-default-servicegraph.json").read_text()), "this is a μBench service graph"),
    ({"WorkModelParameters": {"f0": {}}}, "this is a μBench WorkModelGenerator configuration file, not a workmodel"),
    ({"RunnerParameters": {}, "OutputPath": "x"}, "this is a μBench Runner configuration file"),
    ({"TrafficParameters": {}}, "this is a μBench TrafficGenerator configuration file"),
])
def test_other_mubench_files_are_named(doc, expected):
    with pytest.raises(UserError, match=expected):
        parse_app(doc, "w.json")


def test_loader_defaults_are_mubenchs():
    # finding 11: a loader without sleep_stress sleeps 10 ms; mean_response_size defaults as μBench
    doc = mub()
    doc["s2"]["internal_service"] = {"loader": {}}
    doc["s3"]["internal_service"] = {"compute_pi": {}}
    app = parse_app(doc, "w.json")
    lp, cp = app.services["s2"].job_params, app.services["s3"].job_params
    assert lp.sleep_stress.run and lp.sleep_stress.sleep_time == 0.01 and lp.mean_response_size == 11
    assert not lp.cpu_stress.run and lp.cpu_stress.range_complexity == [100, 100]
    assert cp.range_complexity == [50, 100] and cp.mean_response_size == 10


def test_validate_prints_every_problem_and_a_mistyped_group_key_is_named_with_its_fix(tmp_path):
    """Issue 42: only the first error was shown, and a typo in a call group's key passed silently."""
    import json
    import subprocess
    import sys

    from tests.conftest import REPO

    bad = {"name": "t", "gateway": "a", "services": {
        "a": {"replicas": 0, "internal_service": {"loader": {"cpu_stress": {"run": True}}},
              "external_services": [{"seq_len": 1, "services": ["b"], "probabilties": {"b": 0.5}}]},
        "b": {"replicas": -1}}}
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(bad))
    r = subprocess.run([sys.executable, "-m", "harness", "validate", str(f)], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert lines == [f"harness: error: {f}: services.a.replicas: must be ≥ 1",
                     f"harness: error: {f}: services.b.internal_service: required field is missing",
                     f"harness: error: {f}: services.b.replicas: must be ≥ 1"]
    r = subprocess.run([sys.executable, "-m", "harness", "sweep", "--app", str(f), "--profile",
                        "profiles/chain.reach-local.json"], cwd=REPO, capture_output=True, text=True)
    assert len(r.stderr.strip().splitlines()) == 1 and "(and 2 more problems)" in r.stderr  # elsewhere: one line
    bad["services"]["a"]["replicas"], bad["services"]["b"] = 1, {"internal_service": {"loader": {}}}
    f.write_text(json.dumps(bad))
    r = subprocess.run([sys.executable, "-m", "harness", "validate", str(f)], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "probabilties ignored: not a key of a call group (did you mean 'probabilities'?)" in r.stderr


def test_every_problem_beyond_the_schema_is_printed_and_strict_makes_warnings_errors(tmp_path):
    """The checks the schema cannot make (callees, quantities, entries) are each printed too, the
    nearest name suggested; --strict fails a file μBench would accept with a typo."""
    import json
    import subprocess
    import sys

    from tests.conftest import REPO

    doc = json.loads((REPO / "workloads/chain.json").read_text())
    doc["services"]["back-end"]["external_services"] = [{"seq_len": 1, "services": ["dbx"]}]
    doc["services"]["db"]["cpu-requests"] = "lots"
    doc["services"]["ml"]["memory-requests"] = "-5Mi"
    doc["entries"] = ["front-end", "nosuch"]
    f = tmp_path / "four.json"
    f.write_text(json.dumps(doc))
    r = subprocess.run([sys.executable, "-m", "harness", "validate", str(f)], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 4 and all(line.startswith(f"harness: error: {f}: ") for line in lines), lines
    assert any("unknown service 'dbx' (did you mean 'db'?)" in line for line in lines)
    assert any("entries[1]" in line for line in lines) and any("cpu-requests" in line for line in lines)
    doc = json.loads((REPO / "workloads/chain.json").read_text())
    doc["services"]["front-end"]["external_services"][0]["probabilties"] = {"ml": 1.0}
    f.write_text(json.dumps(doc))
    r = subprocess.run([sys.executable, "-m", "harness", "validate", str(f)], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0
    r = subprocess.run([sys.executable, "-m", "harness", "validate", "--strict", str(f)], cwd=REPO, capture_output=True,
                       text=True)
    assert r.returncode == 2 and "harness: error:" in r.stderr and "did you mean 'probabilities'?" in r.stderr


def _cost_delay_app(**change) -> dict:
    """A two-service chain carrying paper 003's problem (sources, data sizes, a delay cap)."""
    doc = {"name": "a", "gateway": "s0", "sources": {"s0": "edge-a-1"}, "cost_weight": 0.2, "services": {
        "s0": {"internal_service": {"compute_pi": {}}, "data_size": 1.5,
               "external_services": [{"seq_len": 1, "services": ["s1"], "max_delay_ms": {"s1": 5}}]},
        "s1": {"internal_service": {"compute_pi": {}}}}}
    for path, value in change.items():
        *keys, last = path.split("__")
        d = doc
        for k in keys:
            d = d[int(k)] if isinstance(d, list) else d[k]
        d[last] = value
    return doc


def test_paper_003s_fields_are_read_and_kept_through_composition():
    from harness.spec.app import compose

    a = parse_app(_cost_delay_app(), "a.json")
    b = parse_app(_cost_delay_app(name="b", sources={"s0": "cloud-a-1"}), "b.json")
    assert a.sources == {"s0": "edge-a-1"} and a.services["s0"].data_size == 1.5 and not a.warnings
    both = compose([a, b])
    assert both.sources == {"a-s0": "edge-a-1", "b-s0": "cloud-a-1"} and both.cost_weight == 0.2
    assert both.services["a-s0"].external_services[0].max_delay_ms == {"a-s1": 5}
    with pytest.raises(UserError, match="cost_weight"):
        compose([a, parse_app(_cost_delay_app(name="c", cost_weight=0.5), "c.json")])


@pytest.mark.parametrize("change, field", [
    ({"sources": {"s1": "edge-a-1"}}, "sources.s1"),  # not an entry
    ({"services__s0__external_services__0__max_delay_ms": {"s9": 5}}, "max_delay_ms.s9"),  # not in the group
    ({"services__s0__external_services__0__max_delay_ms": {"s1": 0}}, "max_delay_ms"),
    ({"cost_weight": 2}, "cost_weight"),
])
def test_paper_003s_fields_when_wrong_name_the_field(change, field):
    with pytest.raises(UserError) as err:
        parse_app(_cost_delay_app(**change), "a.json")
    assert field in str(err.value)


def test_a_source_node_the_testbed_lacks_is_named():
    app = parse_app(_cost_delay_app(sources={"s0": "edge-z-9"}), "a.json")
    with pytest.raises(UserError, match="sources.s0"):
        app.check_nodes(["edge-a-1", "cloud-a-1"], "a.json")


def test_an_app_without_a_cost_weight_composes_with_one_at_the_default_and_not_with_another():
    from harness.spec.app import compose

    bare = _cost_delay_app()
    del bare["cost_weight"]
    a = parse_app(bare, "a.json")
    assert compose([a, parse_app(_cost_delay_app(name="b", cost_weight=0.01), "b.json")]).weight() == 0.01
    with pytest.raises(UserError, match="cost_weight"):
        compose([a, parse_app(_cost_delay_app(name="c", cost_weight=0.5), "c.json")])
