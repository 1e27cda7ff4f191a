"""How harness reads a Kubernetes cluster it did not build (``--cluster-map FILE``): which node
labels say a node's type, site and tier, what the labels cannot say (speed, cost, tiers' roles),
and where harness's objects go. Every field has a default, so a cluster whose nodes carry the
well-known labels needs no file at all (docs/own-cluster.md).
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from harness.spec.inventory import DNS_LABEL, Role, TierSpec  # noqa: F401  (Role: the tiers' roles)
from harness.spec.loader import load_model
from harness.spec.names import Name


class LabelKeys(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    type: str = Field("node.kubernetes.io/instance-type", description="the label naming a node's type (its VM size)")
    site: str = Field("topology.kubernetes.io/zone", description="the label naming a node's site")
    tier: str = Field("harness.io/tier", description="the label naming a node's tier, where a node has it")


class TypeFacts(BaseModel):
    """What a node's labels and capacity cannot say about its type."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    speed: float = Field(1.0, gt=0, description="relative CPU speed (only ratios between types matter)")
    cost: float = Field(0.0, ge=0, description="what one node of this type costs per hour")


class ClusterMap(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    name: Name = Field("cluster", description="the testbed's name in status, profiles and run directories")
    labels: LabelKeys = Field(default_factory=LabelKeys)
    tiers: dict[str, str] = Field(default_factory=dict, description="a node without a tier label: the tier of the "
                                  "first pattern (shell glob) that matches its site or its type; else cloud")
    tier_roles: dict[str, TierSpec] = Field(default_factory=dict, description="tiers beyond cloud/edge/client, "
                                            "with their role (as an inventory's 'tiers')")
    node_types: dict[str, TypeFacts] = Field(default_factory=dict, description="per type: speed and cost")
    node_selector: str = Field("", description="a label selector of the nodes harness may use (default: all "
                                "schedulable nodes)")
    namespace: str = Field("harness", pattern=DNS_LABEL.pattern, description="where harness's objects go")
    image: str = Field("harness/cell:0.1.0", description="the cell image, pullable by every node "
                       "(docs/own-cluster.md: build and push it)")
    image_pull_policy: str = Field("IfNotPresent", pattern="^(Always|IfNotPresent|Never)$")
    gateway_node_port: int = Field(30080, ge=30000, le=32767, description="NodePort of the app's gateway")
    prometheus_node_port: int | None = Field(30090, ge=30000, le=32767, description="NodePort of the Prometheus "
                                             "harness deploys in its namespace; null: none (no per-pod metrics)")
    rtt_port: int = Field(10250, ge=1, le=65535, description="a port every node answers on, for TCP-handshake "
                          "RTTs (the kubelet's)")

    def tier_of(self, labels: dict[str, str], site: str | None, node_type: str) -> str:
        if self.labels.tier in labels:
            return labels[self.labels.tier]
        for pattern, tier in self.tiers.items():
            if (site and fnmatch.fnmatchcase(site, pattern)) or fnmatch.fnmatchcase(node_type, pattern):
                return tier
        return "cloud"


def load_cluster_map(path: str | Path | None) -> ClusterMap:
    return ClusterMap() if path is None else load_model(ClusterMap, path)
