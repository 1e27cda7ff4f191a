"""Node-to-node round-trip times held per group of nodes, not per node pair.

An inventory gives RTTs per tier pair, per site pair and per node pair (``links``), so every node
of one (tier, site) shares all its RTTs with the others of its group, except the nodes a node link
names. ``GroupedRTT`` holds them so: each node's group, and one K×K table of the RTT between two
distinct nodes of groups g and h (g = h: two nodes of one group), plus each group's ``self_ms``,
a node's RTT to itself (0, or a calibrated call overhead). A thousand nodes in 40 (tier, site)
groups are a 40×40 table instead of a million pairs; a dense matrix (a live testbed's measured
RTTs) is the same form with every node its own group.

``matrix()`` expands it to the dense ``{a: {b: ms}}`` that the Cluster interface and the state
file's ``rtt_configured_ms`` speak, for the callers that need every pair.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping


@dataclass(frozen=True)
class GroupedRTT:
    nodes: tuple[str, ...]  # every node, in the order given
    group: tuple[int, ...]  # (N,) each node's group
    ms: tuple[tuple[float, ...], ...]  # (K, K) RTT between two distinct nodes of groups g, h
    self_ms: tuple[float, ...] = ()  # (K,) a node's RTT to itself (default 0)
    _index: dict = field(default=None, repr=False, compare=False)  # type: ignore[assignment]

    def __post_init__(self):
        if not self.self_ms:
            object.__setattr__(self, "self_ms", (0.0,) * len(self.ms))
        object.__setattr__(self, "_index", {n: i for i, n in enumerate(self.nodes)})
        if len(self.group) != len(self.nodes) or any(len(row) != len(self.ms) for row in self.ms) or \
                len(self.self_ms) != len(self.ms):
            raise ValueError("a GroupedRTT needs a group per node, a K×K table and K self RTTs")

    # ------------------------------------------------------------ building
    @classmethod
    def from_matrix(cls, matrix: Mapping[str, Mapping[str, float | None]], nodes: Iterable[str] | None = None,
                    fallback: "GroupedRTT | None" = None) -> "GroupedRTT":
        """A dense ``{a: {b: ms}}`` as it is, every node a group of its own (``nodes``: which, in
        which order; default the matrix's). A pair the matrix lacks or holds None for comes from
        ``fallback``, else it is a KeyError; a node's RTT to itself is 0."""
        names = tuple(matrix if nodes is None else nodes)

        def get(a: str, b: str) -> float:
            if a == b:
                return 0.0
            v = matrix.get(a, {}).get(b)
            if v is None:
                if fallback is None:
                    raise KeyError(f"{a}-{b}")
                return fallback.get(a, b)
            return float(v)
        table = tuple(tuple(get(a, b) for b in names) for a in names)
        return cls(names, tuple(range(len(names))), table)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> "GroupedRTT":
        """The form ``to_json`` writes (a state file's ``rtt_groups``)."""
        groups = doc["groups"]
        nodes, group = [], []
        for g, members in enumerate(groups):
            nodes += members
            group += [g] * len(members)
        return cls(tuple(nodes), tuple(group), tuple(tuple(map(float, row)) for row in doc["rtt_ms"]),
                   tuple(map(float, doc.get("self_ms") or [0.0] * len(groups))))

    def to_json(self) -> dict[str, Any]:
        members: list[list[str]] = [[] for _ in self.ms]
        for n, g in zip(self.nodes, self.group):
            members[g].append(n)
        out: dict[str, Any] = {"groups": members, "rtt_ms": [list(row) for row in self.ms]}
        if any(self.self_ms):
            out["self_ms"] = list(self.self_ms)
        return out

    # ------------------------------------------------------------ reading
    @property
    def groups(self) -> int:
        return len(self.ms)

    def get(self, a: str, b: str) -> float:
        if a not in self._index or b not in self._index:
            raise KeyError(f"{a}-{b}")
        i, j = self._index[a], self._index[b]
        return self.self_ms[self.group[i]] if i == j else self.ms[self.group[i]][self.group[j]]

    def matrix(self) -> dict[str, dict[str, float]]:
        """Every pair, ``{a: {b: ms}}`` (N² entries: for the callers that need them all)."""
        return {a: {b: self.get(a, b) for b in self.nodes} for a in self.nodes}

    def subset(self, nodes: Iterable[str]) -> "GroupedRTT":
        """The RTTs among ``nodes`` only (groups renumbered in their order of first appearance)."""
        names = tuple(nodes)
        old = [self.group[self._index[n]] for n in names]
        keep = list(dict.fromkeys(old))
        new = {g: k for k, g in enumerate(keep)}
        return GroupedRTT(names, tuple(new[g] for g in old), tuple(tuple(self.ms[g][h] for h in keep) for g in keep),
                          tuple(self.self_ms[g] for g in keep))

    # ------------------------------------------------------------ changing
    def with_pairs(self, pairs: Mapping[tuple[str, str], float]) -> "GroupedRTT":
        """The same RTTs with each pair (a, b) of ``pairs`` set to its ms, both ways (a = b: a
        node's RTT to itself). The nodes named become groups of their own, each keeping its old
        group's RTTs to every other node, so the rest stays as it was."""
        named = {n for pair in pairs for n in pair}
        size: dict[int, int] = {}
        for g in self.group:
            size[g] = size.get(g, 0) + 1
        old = list(self.group)
        group = list(self.group)
        source = list(range(len(self.ms)))  # each group's old group
        for n in sorted(named, key=self._index.__getitem__):
            i = self._index[n]
            if size[old[i]] > 1:  # already alone: keeps its group
                size[old[i]] -= 1
                group[i] = len(source)
                source.append(old[i])
        rows = [[self.ms[g][h] for h in source] for g in source]
        own = [self.self_ms[g] for g in source]
        for (a, b), ms in pairs.items():
            ga, gb = group[self._index[a]], group[self._index[b]]
            if a == b:
                own[ga] = float(ms)
            else:
                rows[ga][gb] = rows[gb][ga] = float(ms)
        return GroupedRTT(self.nodes, tuple(group), tuple(map(tuple, rows)), tuple(own))
