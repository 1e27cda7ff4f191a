"""The inventory: what testbed to build (input of ``harness provision``).

Node types carry what the scheduler sees (logical cores, memory, GPUs), what the emulation
enforces (relative CPU speed) and what a node costs. A node type's tier may be any name (near-edge,
far-edge, fog) with a declared role (cloud, edge or client: what metrics and heuristics read);
nodes may belong to a site (a cluster). Latency is round-trip milliseconds between tiers, and
``links`` override it (and add a bandwidth) per site pair or per node pair: the most specific wins.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from harness.errors import UserError
from harness.spec.loader import load_model
from harness.spec.names import Name
from harness.spec.rtt import GroupedRTT

Role = Literal["cloud", "edge", "client"]
ROLES: tuple[str, ...] = ("cloud", "edge", "client")  # also tiers of their own role, without declaring them
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class TierSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    role: Role = Field(description="what the tier is for metrics and heuristics: cloud, edge or client")


class NodeType(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    tier: str = Field(description="cloud, edge, client, or a tier declared under 'tiers'")
    cpus: float = Field(gt=0, description="logical cores the scheduler sees")
    memory_gb: float = Field(gt=0, description="memory the scheduler sees, GiB")
    speed: float = Field(gt=0, description="relative CPU speed; only ratios between types matter")
    cost: float = Field(0.0, ge=0, description="what one node of this type costs per hour (any currency unit)")
    gpus: int = Field(0, ge=0, description="GPUs the scheduler sees (accounting only on the local testbed)")
    # paper 003's costs (harness.families.rollout.cost_delay): per microservice hosted, and per unit of its data
    pod_cost: float = Field(0.0, ge=0, description="what hosting one pod on a node of this type costs (paper 003's o_v)")
    data_cost: float = Field(0.0, ge=0, description="what one unit of a pod's data_size costs on this type (paper 003's n_v)")


class Node(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    name: str
    type: str
    site: str | None = Field(None, description="the site (cluster) the node belongs to")

    @field_validator("name")
    @classmethod
    def _dns_name(cls, v: str) -> str:
        # a Kubernetes node's name (ip-10-0-1-7.eu-west-1.compute.internal); the local testbed's
        # namespaces and veths want labels of at most 40 (check_semantics)
        if not DNS_SUBDOMAIN.match(v) or len(v) > 253:
            raise ValueError(f"{v!r} must be a DNS-1123 name (lower-case letters, digits, '-', '.')")
        return v


class LocalOptions(BaseModel):
    """Knobs of the embedded local testbed (network namespaces + cgroups)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    prefix: str = Field("hx", description="prefix of every namespace, link and cgroup the testbed creates")
    subnet: str = Field("10.230.0.0/16", description="private /16 for the testbed; nodes get x.y.1.N")
    latency_injector: Literal["auto", "netem", "nfqueue"] = "auto"
    # 0.9, not 1.0: a single thread capped at exactly one core is throttled erratically (CFS hands
    # out quota in per-CPU slices), so the fastest node would be slower and noisier than the ratio says.
    fastest_node_cpus: float = Field(0.9, gt=0, le=64, description="CPU share (in cores) of the fastest node type; others scale by speed")
    cpu_period_us: int = Field(10000, ge=1000, le=1000000, description="CFS bandwidth period; short periods throttle smoothly")
    # The kernel hands a cgroup's quota to each CPU in slices (kernel.sched_cfs_bandwidth_slice_us,
    # 5 ms by default): at or above an edge node's whole quota per 10 ms period, one CPU takes it
    # all and the node's threads on the other CPU are throttled while quota sits unused. A busy
    # node then waits up to twice what its utilisation says (studies/fidelity/README.md, "Open-loop load").
    bandwidth_slice_us: int | None = Field(1000, ge=100, le=1000000, description="the kernel's CFS bandwidth slice "
                                           "while the testbed is up (host-wide, restored at teardown); null: leave the host's")
    prometheus_port: int = Field(19090, ge=1024, le=65535, description="Prometheus listens on 127.0.0.1:<port>")

    @field_validator("prefix")
    @classmethod
    def _short_prefix(cls, v: str) -> str:
        if not re.fullmatch(r"[a-z][a-z0-9]{0,5}", v):
            raise ValueError("must be 1-6 lower-case letters or digits, starting with a letter (it goes into 15-char link names)")
        return v

    @field_validator("subnet")
    @classmethod
    def _subnet16(cls, v: str) -> str:
        try:
            net = ipaddress.ip_network(v, strict=True)
        except ValueError as exc:
            raise ValueError(f"must be an IPv4 network like 10.230.0.0/16 ({exc})") from None
        if net.version != 4 or net.prefixlen != 16 or not net.is_private:
            raise ValueError("must be a private IPv4 /16 such as 10.230.0.0/16")
        return v


class OpenStackOptions(BaseModel):
    """Where ``playbooks/openstack.yml`` creates the VMs. Credentials are never here: ``cloud``
    names an entry of the user's clouds.yaml, which only the openstack.cloud modules read."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    cloud: str = Field(description="entry in clouds.yaml (~/.config/openstack/clouds.yaml or OS_CLIENT_CONFIG_FILE)")
    image: str = Field(description="Glance image of every VM (Ubuntu 22.04/24.04 or Debian 12)")
    flavours: dict[str, str] = Field(min_length=1, description="node type -> Nova flavour")
    external_network: str = Field(description="network the router uplinks to (floating IPs come from it)")
    network_cidr: str = "192.168.50.0/24"
    name_prefix: str = Field("harness", description="prefix of every OpenStack resource the playbook creates")
    public_key_file: str = Field("~/.ssh/id_ed25519.pub", description="uploaded as the VMs' keypair")
    ssh_cidr: str = Field("0.0.0.0/0", description="who may reach the VMs on SSH and the Kubernetes API")

    @field_validator("network_cidr")
    @classmethod
    def _cidr(cls, v: str) -> str:
        try:
            ipaddress.ip_network(v, strict=True)
        except ValueError as exc:
            raise ValueError(f"must be a network like 192.168.50.0/24 ({exc})") from None
        return v


class K3sOptions(BaseModel):
    """Knobs of the K3s testbed (real VMs from OpenStack, or SSH hosts you already have)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    provider: Literal["openstack", "ssh"]
    openstack: OpenStackOptions | None = None
    hosts: dict[str, str] = Field(default_factory=dict, description="node name -> address (provider ssh)")
    ssh_user: str = "ubuntu"
    ssh_private_key_file: str = "~/.ssh/id_ed25519"
    k3s_version: str = Field("v1.31.4+k3s1", description="K3s release installed by get.k3s.io")
    namespace: str = Field("harness", description="Kubernetes namespace of the app, Prometheus and the rescheduler")
    image: str = Field("harness/cell:0.1.0", description="the cell image built on the nodes (no registry)")
    prometheus_node_port: int = Field(30090, ge=30000, le=32767)
    gateway_node_port: int = Field(30080, ge=30000, le=32767,
                                   description="NodePort on which every node forwards to its own gateway pods (the load's door)")
    netem_interface: str | None = Field(None, description="interface that carries node-to-node traffic; default: the default route's")

    @field_validator("hosts")
    @classmethod
    def _ipv4(cls, v: dict[str, str]) -> dict[str, str]:
        for name, addr in v.items():
            try:
                ipaddress.IPv4Address(addr)
            except ValueError:
                raise ValueError(f"{name}: {addr!r} is not an IPv4 address (netem's filters match addresses)") from None
        return v

    @field_validator("namespace")
    @classmethod
    def _ns(cls, v: str) -> str:
        if not DNS_LABEL.match(v):
            raise ValueError("must be a DNS-1123 label")
        return v


class Link(BaseModel):
    """An override for the pairs between two sites, or between two nodes (RTT and/or bandwidth);
    with ``tiers``, a bandwidth for the pairs between two tiers (their RTT is in ``rtt_ms``)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    tiers: list[str] | None = Field(None, min_length=2, max_length=2)
    sites: list[str] | None = Field(None, min_length=2, max_length=2)
    nodes: list[str] | None = Field(None, min_length=2, max_length=2)
    rtt_ms: float | None = Field(None, ge=0)
    bandwidth_mbit: float | None = Field(None, gt=0, description="link bandwidth, Mbit/s")

    @model_validator(mode="after")
    def _one_scope(self):
        scopes = [k for k in ("tiers", "sites", "nodes") if getattr(self, k) is not None]
        if len(scopes) != 1:
            raise ValueError("a link names exactly one of tiers, sites or nodes (two of them)")
        if self.rtt_ms is None and self.bandwidth_mbit is None:
            raise ValueError("a link sets rtt_ms, bandwidth_mbit or both")
        if self.tiers is not None and self.rtt_ms is not None:
            raise ValueError("a tier pair's RTT goes in rtt_ms; a tiers link sets only bandwidth_mbit")
        return self

    @property
    def scope(self) -> tuple[str, tuple[str, str]]:
        for k in ("nodes", "sites", "tiers"):
            v = getattr(self, k)
            if v is not None:
                return k, (v[0], v[1])
        raise AssertionError


SPECIFICITY = {"nodes": 0, "sites": 1, "tiers": 2}  # most specific first


class Inventory(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    name: Name = "testbed"  # in profiles' file names (harness.spec.names)
    backend: str = Field("local", description="a backend of harness.testbed.backends: local or k3s")
    node_types: dict[str, NodeType] = Field(min_length=1)
    nodes: list[Node] = Field(min_length=1)
    tiers: dict[str, TierSpec] = Field(default_factory=dict, description="tiers beyond cloud/edge/client, with their role")
    rtt_ms: dict[str, float] = Field(description="round-trip ms between tiers, keys like 'cloud-edge'")
    links: list[Link] = Field(default_factory=list, description="per site pair or node pair: RTT and bandwidth")
    local: LocalOptions = Field(default_factory=LocalOptions)
    k3s: K3sOptions | None = None

    def node_type(self, node: Node) -> NodeType:
        return self.node_types[node.type]

    def role(self, tier: str) -> str:
        return self.tiers[tier].role if tier in self.tiers else tier

    def tier_names(self) -> list[str]:
        return sorted(set(ROLES) | set(self.tiers))

    def split_tier_pair(self, key: str) -> tuple[str, str] | None:
        """'near-edge-cloud' -> ('near-edge', 'cloud'): the one split of a key into two known tiers."""
        known = set(self.tier_names())
        splits = [(key[:i], key[i + 1:]) for i, ch in enumerate(key) if ch == "-" and key[:i] in known
                  and key[i + 1:] in known]
        return splits[0] if len(splits) == 1 else None

    def tier_rtt(self, a: str, b: str) -> float:
        """RTT between two tiers; keys are order-insensitive ('edge-cloud' == 'cloud-edge')."""
        for key in (f"{a}-{b}", f"{b}-{a}"):
            if key in self.rtt_ms:
                return self.rtt_ms[key]
        raise KeyError(f"{a}-{b}")

    def link_values(self, attr: str) -> dict[str, dict[tuple[str, str], float]]:
        """Per scope (nodes, sites, tiers), what the links that set ``attr`` give each pair they
        name (sorted), the first link of a pair winning: one look-up a pair."""
        out: dict[str, dict[tuple[str, str], float]] = {"nodes": {}, "sites": {}, "tiers": {}}
        for link in self.links:
            value = getattr(link, attr)
            if value is not None:
                kind, pair = link.scope
                out[kind].setdefault(tuple(sorted(pair)), value)  # type: ignore[arg-type]
        return out

    def _indexed_value(self, index: dict, a: Node, b: Node) -> float | None:
        """The most specific link of ``index`` (``link_values``) that covers the pair: its node
        link, else its site link, else its tier link; None when none does."""
        for kind, have in (("nodes", (a.name, b.name)), ("sites", (a.site, b.site)),
                           ("tiers", (self.node_type(a).tier, self.node_type(b).tier))):
            if None not in have and (v := index[kind].get(tuple(sorted(have)))) is not None:
                return v
        return None

    def pair_rtt(self, a: Node, b: Node, index: dict | None = None) -> float:
        """A node pair's RTT: its node link, else its site link, else its tiers' rtt_ms (KeyError);
        ``index``: ``link_values("rtt_ms")`` made once for many pairs."""
        v = self._indexed_value(index if index is not None else self.link_values("rtt_ms"), a, b)
        return v if v is not None else self.tier_rtt(self.node_type(a).tier, self.node_type(b).tier)

    def rtt_groups(self) -> GroupedRTT:
        """Configured node-to-node RTTs per group (``harness.spec.rtt``): the nodes of one tier and
        site share every RTT, a node that a node link names is a group of its own. As many look-ups
        as group pairs, whatever the nodes: the same values ``rtt_matrix`` gives pair by pair."""
        index = self.link_values("rtt_ms")
        linked = {n for pair in index["nodes"] for n in pair}
        keys: dict[tuple, int] = {}
        members: list[list[Node]] = []  # per group, up to two of its nodes
        group: list[int] = []
        for node in self.nodes:
            key = ("node", node.name) if node.name in linked else ("group", self.node_type(node).tier, node.site)
            if key not in keys:
                keys[key] = len(members)
                members.append([])
            if len(members[keys[key]]) < 2:
                members[keys[key]].append(node)
            group.append(keys[key])

        def rtt(a: Node, b: Node) -> float:
            return self.pair_rtt(a, b, index)

        def within(g: list[Node]) -> float:
            """Two distinct nodes of one group (a group of one has no such pair: any number does)."""
            if len(g) > 1:
                return rtt(g[0], g[1])
            try:
                return rtt(g[0], g[0])
            except KeyError:
                return 0.0
        table = tuple(tuple(within(g) if gi == hi else rtt(g[0], h[0]) for hi, h in enumerate(members))
                      for gi, g in enumerate(members))
        return GroupedRTT(tuple(n.name for n in self.nodes), tuple(group), table)

    def rtt_matrix(self) -> dict[str, dict[str, float]]:
        """Configured node-to-node RTT in ms (0 on the diagonal): every pair (``rtt_groups`` holds
        the same in the size of its groups)."""
        return self.rtt_groups().matrix()

    def bandwidth_matrix(self) -> dict[str, dict[str, float]]:
        """Configured node-to-node bandwidth in Mbit/s, only for the pairs a link limits."""
        index = self.link_values("bandwidth_mbit")
        out: dict[str, dict[str, float]] = {}
        if not any(index.values()):
            return out
        for a in self.nodes:
            for b in self.nodes:
                v = None if a.name == b.name else self._indexed_value(index, a, b)
                if v is not None:
                    out.setdefault(a.name, {})[b.name] = v
        return out

    def checksum(self) -> str:
        blob = json.dumps(self.model_dump(mode="json"), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


def check_semantics(inv: Inventory, source: str) -> Inventory:
    """What a schema cannot say: references, duplicates, and a latency for every tier pair in use."""
    seen: set[str] = set()
    for i, node in enumerate(inv.nodes):
        if node.type not in inv.node_types:
            known = ", ".join(sorted(inv.node_types))
            raise UserError(f"unknown node type {node.type!r} (known: {known})", source=source, field=f"nodes[{i}].type")
        if inv.backend != "existing" and (not DNS_LABEL.match(node.name) or len(node.name) > 40):
            raise UserError(f"{node.name!r} must be a DNS-1123 label (lower-case letters, digits, '-'; at most 40 chars)",
                            source=source, field=f"nodes[{i}].name")
        if node.name in seen:
            raise UserError(f"duplicate node name {node.name!r}", source=source, field=f"nodes[{i}].name")
        seen.add(node.name)
    for name, nt in inv.node_types.items():
        if nt.tier not in ROLES and nt.tier not in inv.tiers:
            raise UserError(f"tier {nt.tier!r} has no role; declare it under tiers: {nt.tier}: {{role: edge}} "
                            f"(roles: {', '.join(ROLES)})", source=source, field=f"node_types.{name}.tier")
    for key, value in inv.rtt_ms.items():
        if inv.split_tier_pair(key) is None:
            raise UserError(f"key must be two tiers joined by '-', tiers being {', '.join(inv.tier_names())}",
                            source=source, field=f"rtt_ms.{key}")
        if value < 0:
            raise UserError("must be ≥ 0", source=source, field=f"rtt_ms.{key}")
    names = {n.name for n in inv.nodes}
    sites = {n.site for n in inv.nodes if n.site}
    for i, link in enumerate(inv.links):
        kind, pair = link.scope
        known = {"nodes": names, "sites": sites, "tiers": set(inv.tier_names())}[kind]
        for x in pair:
            if x not in known:
                raise UserError(f"unknown {kind[:-1]} {x!r} (known: {', '.join(sorted(known)) or 'none'})",
                                source=source, field=f"links[{i}].{kind}")
    _check_every_pair_has_a_latency(inv, source)
    if inv.backend == "k3s":
        _check_k3s(inv, source)
    return inv


def _check_every_pair_has_a_latency(inv: Inventory, source: str) -> None:
    """Every node pair has an RTT: by tier pair where rtt_ms gives it (linear in the nodes: a
    thousand-node inventory is checked in milliseconds), pair by pair only among the tiers it does
    not, where links must cover each pair."""
    by_tier: dict[str, list[Node]] = {}
    for node in inv.nodes:
        by_tier.setdefault(inv.node_type(node).tier, []).append(node)
    tiers = sorted(by_tier)
    for i, ta in enumerate(tiers):
        for tb in tiers[i:]:
            if ta == tb and len(by_tier[ta]) < 2:
                continue
            try:
                inv.tier_rtt(ta, tb)
                continue
            except KeyError:
                pass
            index = inv.link_values("rtt_ms")
            for k, a in enumerate(by_tier[ta]):
                for b in (by_tier[tb][k + 1:] if ta == tb else by_tier[tb]):
                    if inv._indexed_value(index, a, b) is None:
                        raise UserError(f"no latency between tiers {ta!r} and {tb!r} (nodes {a.name} and {b.name}); "
                                        f"add '{ta}-{tb}: <ms>' or a link", source=source, field="rtt_ms")


def _check_k3s(inv: Inventory, source: str) -> None:
    k = inv.k3s
    if k is None:
        raise UserError("backend k3s needs a 'k3s:' block (provider openstack or ssh)", source=source, field="k3s")
    if not any(inv.role(inv.node_type(n).tier) == "cloud" for n in inv.nodes):
        raise UserError("K3s needs a cloud node for its server; no node's tier has role cloud", source=source, field="nodes")
    if k.provider == "openstack":
        if k.openstack is None:
            raise UserError("provider openstack needs an 'openstack:' block (cloud, image, flavours, external_network)",
                            source=source, field="k3s.openstack")
        for t in sorted({n.type for n in inv.nodes}):
            if t not in k.openstack.flavours:
                raise UserError(f"no flavour for node type {t!r}; add '{t}: <flavour>'", source=source,
                                field="k3s.openstack.flavours")
    else:
        for i, n in enumerate(inv.nodes):
            if n.name not in k.hosts:
                raise UserError(f"no address for node {n.name!r}; add '{n.name}: <ip or hostname>'", source=source,
                                field="k3s.hosts")
        unknown = sorted(set(k.hosts) - {n.name for n in inv.nodes})
        if unknown:
            raise UserError(f"hosts for nodes not in 'nodes': {', '.join(unknown)}", source=source, field="k3s.hosts")


def load_inventory(path: str | Path | None = None) -> Inventory:
    """Load an inventory file, or the shipped default (REACH's testbed) when ``path`` is None."""
    if path is None:
        with resources.as_file(default_inventory_path()) as p:
            return check_semantics(load_model(Inventory, p), "default inventory")
    return check_semantics(load_model(Inventory, path), str(path))


def default_inventory_path():
    return resources.files("harness") / "data" / "inventories" / "reach-local.yaml"
