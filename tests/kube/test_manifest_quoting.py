"""Every value a manifest template renders is quoted (issue 65, item 6): a name that got past
validation (built in code) still cannot add a key, move an object or start a document."""

from __future__ import annotations

import pytest

from harness.errors import TestbedError as ManifestError
from harness.spec.app import load_app
from harness.spec.names import label_value
from harness.testbed.kube import manifests
from tests.conftest import REPO

HOSTILE = ["x\n  namespace: kube-system", "evil\n    hostNetwork: true", "a: b", "{x: 1}", "'", '"', "---\nkind: Pod",
           "#", "*anchor", "!!python/object x", "x\\n"]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_app_name_stays_one_label_value(name):
    app = load_app(REPO / "workloads" / "chain.json").model_copy(update={"name": name})
    objs = manifests.app_objects(app, "harness", "img:1", 30080)
    cm = next(o for o in objs if o["kind"] == "ConfigMap")
    assert cm["metadata"]["namespace"] == "harness" and sorted(cm["metadata"]) == ["labels", "name", "namespace"]
    assert cm["metadata"]["labels"] == {"app.kubernetes.io/part-of": "harness", "harness.io/app": label_value(name)}
    assert len(objs) == len(manifests.app_objects(load_app(REPO / "workloads" / "chain.json"), "harness", "img:1", 30080))


@pytest.mark.parametrize("value", ["x\n  hostNetwork: true", "a: b"])
def test_every_string_a_template_renders_is_quoted(value):
    objs = manifests.rescheduler_objects(value, value, value, value, 5)
    assert all(o["metadata"].get("namespace", value) == value for o in objs)
    deployment = next(o for o in objs if o["kind"] == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == value and value in container["command"] and "hostNetwork" not in \
        deployment["spec"]["template"]["spec"]


@pytest.mark.parametrize("bad", ["30080\n  evil: 1", float("nan"), True])
def test_a_number_that_is_not_one_is_refused(bad):
    with pytest.raises(ManifestError, match="number"):
        manifests.render("gateway.yaml.j2", namespace="harness",
                         service="gw", node_port=bad)
