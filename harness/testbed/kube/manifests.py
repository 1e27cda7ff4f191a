"""Render the templates in manifests/ into Kubernetes objects (plain dicts).

The same templates serve the API calls of the K3s backend and the files the monitoring
playbook applies; the tests validate what they render for the shipped apps offline.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import jinja2
import yaml

from harness import shipped
from harness.errors import TestbedError
from harness.spec.app import App, app_to_json, cpu_cores, memory_mib
from harness.spec.names import label_value

MANIFESTS_ENV = "HARNESS_MANIFESTS"
SERVICE_PORT = 80


def manifests_dir() -> Path:
    env = os.environ.get(MANIFESTS_ENV)
    d = Path(env) if env else shipped.ROOT / "manifests"
    if not (d / "service.yaml.j2").is_file():
        raise TestbedError(f"manifest templates not found at {d}; set {MANIFESTS_ENV} to the repository's manifests/")
    return d


def yaml_quoted(value: Any) -> str:
    """The filter ``q``: any value as one YAML scalar that reads back as the same string (a JSON
    string: YAML's double-quoted form), so no name can add a key, a line or a document."""
    return json.dumps(str(value))


def yaml_number(value: Any) -> int | float:
    """The filter ``num``: a finite number, else a TestbedError (never text in a numeric field)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TestbedError(f"a manifest's number is {value!r}")
    return value


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(manifests_dir()), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True)
    env.filters.update(q=yaml_quoted, num=yaml_number)  # every value a template renders goes through one
    return env


def render(template: str, **values: Any) -> list[dict]:
    """The objects of one template (a multi-document YAML), in order."""
    text = _env().get_template(template).render(**values)
    return [doc for doc in yaml.safe_load_all(text) if doc]


def service_address(service: str, namespace: str) -> str:
    """A Service's cluster DNS name; the trailing dot spares the resolver the search domains."""
    return f"{service}.{namespace}.svc.cluster.local.:{SERVICE_PORT}"


def app_objects(app: App, namespace: str, image: str, gateway_node_port: int, drain_seconds: int = 10,
                image_pull_policy: str = "Never") -> list[dict]:
    """Namespace, the app's ConfigMap, a Deployment (0 replicas: the harness scales and binds
    every pod itself) and Service per service, and the gateway's NodePort for the load."""
    endpoints = {s: [service_address(s, namespace)] for s in app.services}
    objs = render("namespace.yaml.j2", namespace=namespace)
    objs += render("app-config.yaml.j2", namespace=namespace, app_name=label_value(app.name), app_json=app_to_json(app),
                   endpoints_json=json.dumps(endpoints, indent=1))
    for service, spec in app.services.items():
        objs += render("service.yaml.j2", namespace=namespace, service=service, image=image, replicas=0,
                       image_pull_policy=image_pull_policy,
                       drain_seconds=drain_seconds,
                       cpu_millicores=round(cpu_cores(spec.cpu_requests) * 1000),
                       memory_mib=round(memory_mib(spec.memory_requests)))
    objs += render("gateway.yaml.j2", namespace=namespace, service=app.gateway, node_port=gateway_node_port)
    return objs


def hpa_objects(app: App, namespace: str, target_percent: int, min_replicas: int, max_replicas: int) -> list[dict]:
    return [obj for service in app.services
            for obj in render("hpa.yaml.j2", namespace=namespace, service=service, target_percent=target_percent,
                              min_replicas=min_replicas, max_replicas=max_replicas)]


def rescheduler_objects(namespace: str, image: str, policy: str, model_file: str, period_s: float) -> list[dict]:
    return render("rescheduler.yaml.j2", namespace=namespace, rescheduler_image=image, policy=policy,
                  model_file=model_file, period_s=period_s)


def prometheus_objects(namespace: str, node_port: int, scrape_interval_s: float = 1) -> list[dict]:
    return render("prometheus.yaml.j2", namespace=namespace, node_port=node_port,
                  scrape_interval_s=scrape_interval_s)
