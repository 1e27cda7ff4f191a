"""Inputs bounded (issue 65, items 2 and 8): every number a scenario, profile or inventory holds is
finite and within stated bounds at validation, one line naming the file and the field; a limit
that a big value may legitimately pass is a scenario field (``limits``), raised knowingly."""

from __future__ import annotations

import copy
import json
import math

import pytest
import yaml

from harness.errors import UserError
from harness.scenarios.catalog import load_scenario
from harness.spec.inventory import load_inventory
from harness.spec.profile import load_profile
from tests.conftest import REPO


def scenario(tmp_path, **fields):
    doc = {"name": "s", "description": "d", "duration_s": 30, "app": "chain"} | fields
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc).replace("'.inf'", ".inf").replace("'.nan'", ".nan"))
    return path


def refused(path, *words):
    with pytest.raises(UserError) as exc:
        load_scenario(str(path))
    line = str(exc.value)
    assert line.startswith(str(path)) and "\n" not in line and all(w in line for w in words), line
    return line


@pytest.mark.parametrize("value", [".inf", ".nan"])
def test_an_infinite_rate_or_duration_is_one_line(tmp_path, value):
    refused(scenario(tmp_path, load={"mode": "open", "steps": [{"at_s": 0, "value": value}]}),
            "load.steps[0].value", "finite")
    refused(scenario(tmp_path, duration_s=value), "duration_s", "finite")


def test_a_million_requests_per_second_is_refused_up_front(tmp_path):
    refused(scenario(tmp_path, load={"mode": "open", "steps": [{"at_s": 0, "value": 1_000_000}]}),
            "1e+06 requests/s is above the limit 10000", "limits.rate_per_s")
    # raised knowingly, the run's requests still are bounded
    refused(scenario(tmp_path, limits={"rate_per_s": 1e6},
                     load={"mode": "open", "steps": [{"at_s": 0, "value": 1_000_000}]}),
            "would send 3e+07 requests", "limits.requests")


def test_a_run_of_a_billion_seconds_is_refused_unless_raised(tmp_path):
    refused(scenario(tmp_path, duration_s=1e9), "duration_s 1e+09 is above the limit 604800", "limits.duration_s")
    sc, _ = load_scenario(str(scenario(tmp_path, duration_s=1e9, limits={"duration_s": 1e9})))
    assert sc.duration_s == 1e9


def test_users_and_request_streams_are_bounded(tmp_path):
    refused(scenario(tmp_path, load={"steps": [{"at_s": 0, "value": 100_000}]}), "100000 users", "limits.users")
    refused(scenario(tmp_path, request_stream={"service": "front-end", "rate_per_s": 1e5, "mean_lifetime_s": 1}),
            "request_stream.rate_per_s", "limits.rate_per_s")


def test_the_shipped_scenarios_are_within_the_limits():
    from harness.scenarios.catalog import load_any_scenario

    for path in sorted((REPO / "harness" / "scenarios").glob("*.yaml")):
        load_any_scenario(str(path))


PROFILE = json.loads((REPO / "profiles" / "chain.reach-local.json").read_text())


@pytest.mark.parametrize("field, value, expected", [
    (("node_types", "cloud-a", "speed"), math.nan, "node_types.cloud-a.speed: expected a finite number > 0, got nan"),
    (("node_types", "cloud-a", "speed"), math.inf, "expected a finite number > 0, got inf"),
    (("node_types", "cloud-a", "speed"), -5, "expected a finite number > 0, got -5"),
    (("services", "front-end", "cloud-a", "mean_ms"), math.inf, "services.front-end.cloud-a.mean_ms: input should be a finite number"),
    (("services", "front-end", "cloud-a", "mean_ms"), 1e12, "services.front-end.cloud-a.mean_ms"),
])
def test_a_profile_holds_finite_bounded_numbers(tmp_path, field, value, expected):
    doc = copy.deepcopy(PROFILE)
    target = doc
    for key in field[:-1]:
        target = target[key]
    target[field[-1]] = value
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))  # NaN and Infinity as JSON's extensions, as a careless writer would
    with pytest.raises(UserError) as exc:
        load_profile(path)
    assert expected in str(exc.value) and str(exc.value).startswith(str(path))


@pytest.mark.parametrize("value, expected", [(".nan", "finite"), (".inf", "finite"), ("-5", "must be > 0")])
def test_a_node_speed_is_a_finite_positive_number(tmp_path, value, expected):
    doc = yaml.safe_load((REPO / "harness" / "data" / "inventories" / "reach-local.yaml").read_text())
    doc["node_types"]["cloud-a"]["speed"] = "SPEED"
    path = tmp_path / "inv.yaml"
    path.write_text(yaml.safe_dump(doc).replace("SPEED", value))
    with pytest.raises(UserError) as exc:
        load_inventory(path)
    assert exc.value.field == "node_types.cloud-a.speed" and expected in exc.value.detail
