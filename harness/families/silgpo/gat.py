"""SIL-GPO's encoders (paper 002, §IV; sizes from the authors' ``NEW_PPO/network.py``): three
graphs of a ``families.silgpo.env`` observation through graph attention (torch-geometric's GATv2,
which the authors' code uses; the paper says "GAT"), beside a small MLP over its vector part.

- the deployment graph (servers; features: instances per service; edges: which servers are
  connected): GATv2(S → 256, 2 heads) → tanh → GATv2(512 → 8) → mean over servers;
- the routing graphs (one per request that holds the service being placed; features: the
  probability the request reaches each (server, service); edges: its possible hops): the same,
  mean over each graph's servers, then over the graphs;
- the invocation graph (services; features id, CPU, GPU, storage, output in 100 MB, rate;
  edges: consecutive services of any chain): GATv2(6 → 256, 2 heads) → tanh → GATv2(512 → 4);
- the vector (traffic of the service being placed per server, and the mask): 2N → 256 → 10.

Their 30 features go to a head, 30 → 256 → 256 → out (tanh). ``encoder="mlp"`` replaces every
graph layer by the same sizes applied to each node alone (no message passing): the ablation the
paper lacks. torch-geometric is an optional dependency (``pip install harness-bench[silgpo]``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

HIDDEN = 256

COMPILE_CHOICES = ("auto", "on", "off")
COMPILE_HELP = ("torch.compile the networks: auto (with GAT encoders, where it pays: about 2.5x faster an update "
                "here, after a compile of 15-90 s), on or off. Not part of a training's identity: a training "
                "resumes with either (its rounding changes from there on)")


def check_compile(setting: str) -> None:
    """The one rule for a ``--compile`` value (the learners' Args call it on construction)."""
    if setting not in COMPILE_CHOICES:
        raise ValueError(f"--compile must be one of {', '.join(COMPILE_CHOICES)}, not {setting!r}")


RECOMPILE_LIMIT = 64  # variants one function may hold; a training makes about a dozen


def for_speed(nets: tuple[nn.Module, ...], setting: str, encoder: str) -> tuple[nn.Module, ...]:
    """``nets`` compiled (``setting`` on, or auto with GAT encoders) or as they are. A compiled
    module shares its net's parameters; save the net, not it. GATv2's per-edge work (gather,
    add, LeakyReLU, attention) is memory-bound elementwise work that inductor fuses; the MLP
    encoders gain nothing (measured: ``benchmarks/silgpo_compile.py``). Shapes vary with the
    routing graphs, hence ``dynamic``. Compiled and eager runs differ in float rounding, so a
    training's trajectory depends on the setting, not its law.

    A compile starts from an empty cache, and never falls back to eager: dynamo keeps one list
    of compiled variants per function (one ``forward`` for every net here), guarded by shapes,
    grad mode and parameter sizes, and runs a call eagerly once the list is full (8 by default).
    Which calls ran compiled, and so the rounding, then depended on what the process had
    compiled before and on where a training was resumed: resumed trainings parted from
    uninterrupted ones (tested)."""
    check_compile(setting)
    if not (setting == "on" or (setting == "auto" and encoder == "gat")):
        return nets
    import torch._dynamo

    torch._dynamo.reset()
    torch._dynamo.config.recompile_limit = RECOMPILE_LIMIT
    torch._dynamo.config.fail_on_recompile_limit_hit = True  # an error, not a silently different rounding
    # inductor's C++ kernels run on one thread: torch 2.13's OpenMP-parallel kernels of this
    # network fail to compile on some CPUs (an assertion in the vectorised store, seen on an
    # AVX-512 host with two threads); on graphs of a few hundred nodes one thread loses nothing
    return tuple(torch.compile(net, dynamic=True, options={"cpp.threads": 1}) for net in nets)


class GraphEncoder(nn.Module):
    """Two attention layers and a mean over each graph's nodes; ``mlp`` drops the attention."""

    def __init__(self, inp: int, out: int, encoder: str = "gat"):
        super().__init__()
        self.encoder = encoder
        if encoder == "gat":
            from torch_geometric.nn import GATv2Conv

            # collate gives each node its self-loop, as GATv2Conv would: its own adding masks the edges by a
            # data-dependent shape, which breaks torch.compile's graph at every layer
            self.conv1 = GATv2Conv(inp, HIDDEN, heads=2, add_self_loops=False)
            self.conv2 = GATv2Conv(2 * HIDDEN, out, heads=1, add_self_loops=False)
            for conv in (self.conv1, self.conv2):  # the authors' init_gat_layer: lin_l keeps PyG's default
                nn.init.xavier_uniform_(conv.lin_r.weight)
                nn.init.zeros_(conv.lin_r.bias)
                nn.init.normal_(conv.att, std=0.1)
        elif encoder == "mlp":
            self.conv1, self.conv2 = nn.Linear(inp, 2 * HIDDEN), nn.Linear(2 * HIDDEN, out)
        else:
            raise ValueError(f"encoder must be gat or mlp, not {encoder!r}")

    def forward(self, x: torch.Tensor, edges: torch.Tensor, graph: torch.Tensor, graphs: int) -> torch.Tensor:
        if self.encoder == "gat":
            h = self.conv2(torch.tanh(self.conv1(x, edges)), edges)
        else:
            h = self.conv2(torch.tanh(self.conv1(x)))
        return mean_by(h, graph, graphs)


def mean_by(values: torch.Tensor, index: torch.Tensor, groups: int) -> torch.Tensor:
    """(groups, F) the mean of the rows of ``values`` in each group of ``index``."""
    total = torch.zeros(groups, values.shape[1], dtype=values.dtype).index_add_(0, index, values)
    count = torch.zeros(groups, dtype=values.dtype).index_add_(0, index, torch.ones_like(index, dtype=values.dtype))
    return total / count.clamp(min=1)[:, None]


@dataclass
class GraphBatch:
    """Observations collated: every graph of every observation, nodes offset into one set."""

    size: int
    vector: torch.Tensor  # (B, 2N)
    deploy_x: torch.Tensor  # (B·N, S)
    deploy_edges: torch.Tensor
    deploy_graph: torch.Tensor  # (B·N,) which observation
    route_x: torch.Tensor  # (ΣK·N, S)
    route_edges: torch.Tensor
    route_graph: torch.Tensor  # (ΣK·N,) which routing graph
    route_owner: torch.Tensor  # (ΣK,) which observation
    invoke_x: torch.Tensor  # (S, 6): the same for every observation of one world
    invoke_edges: torch.Tensor


def with_self_loops(edges: np.ndarray, nodes: int) -> np.ndarray:
    """``edges`` (2, E) without its self-loops, then one per node: what GATv2Conv's
    ``add_self_loops`` does (in its order: the loops last)."""
    edges = edges[:, edges[0] != edges[1]]
    loops = np.arange(nodes)
    return np.concatenate([edges, np.stack([loops, loops])], axis=1)


def collate(observations: list[dict]) -> GraphBatch:
    B = len(observations)
    first = observations[0]
    N = first["deployment"].shape[0]
    adj = np.stack(np.nonzero(first["adjacency"]))
    deploy_edges = np.concatenate([adj + b * N for b in range(B)], axis=1)
    route_x, route_edges, route_owner, offset = [], [], [], 0
    for b, obs in enumerate(observations):
        for feats, edges in zip(obs["routing"], obs["routing_edges"]):
            route_x.append(feats)
            route_edges.append(edges + offset)
            route_owner.append(b)
            offset += N
    K = len(route_owner)
    inv = first["invocation"].copy()
    inv[:, 4] /= 100  # output size in units of 100 MB, as the code feeds it
    tensor = lambda a, dtype=torch.float32: torch.as_tensor(np.asarray(a), dtype=dtype)  # noqa: E731
    return GraphBatch(
        size=B, vector=tensor(np.stack([o["vector"] for o in observations])),
        deploy_x=tensor(np.concatenate([o["deployment"] for o in observations])),
        deploy_edges=tensor(with_self_loops(deploy_edges, B * N), torch.long), deploy_graph=torch.arange(B).repeat_interleave(N),
        route_x=tensor(np.concatenate(route_x)) if K else torch.zeros(0, first["deployment"].shape[1]),
        route_edges=tensor(with_self_loops(np.concatenate(route_edges, axis=1) if K else np.zeros((2, 0), int),
                                           K * N), torch.long),
        route_graph=torch.arange(K).repeat_interleave(N), route_owner=tensor(route_owner, torch.long),
        invoke_x=tensor(inv), invoke_edges=tensor(with_self_loops(np.stack(np.nonzero(first["invocation_adjacency"])), len(inv)),
                                                             torch.long))


class SilGpoNet(nn.Module):
    """The actor (``out`` = servers: logits) or the critic (``out`` = 1), each with its own encoders."""

    def __init__(self, servers: int, services: int, out: int, encoder: str = "gat"):
        super().__init__()
        self.deploy, self.route = GraphEncoder(services, 8, encoder), GraphEncoder(services, 8, encoder)
        self.invoke = GraphEncoder(6, 4, encoder)
        self.vector = nn.Sequential(nn.Linear(2 * servers, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, 10))
        for layer in self.vector[0::2]:
            nn.init.orthogonal_(layer.weight)
            nn.init.zeros_(layer.bias)
        self.head = nn.Sequential(nn.Linear(30, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, HIDDEN), nn.Tanh(),
                                  nn.Linear(HIDDEN, out))
        for layer in self.head[0::2]:
            nn.init.xavier_uniform_(layer.weight, gain=0.1 if layer is self.head[-1] and out > 1 else 1.0)
            nn.init.zeros_(layer.bias)

    def forward(self, b: GraphBatch) -> torch.Tensor:
        deploy = self.deploy(b.deploy_x, b.deploy_edges, b.deploy_graph, b.size)
        per_graph = self.route(b.route_x, b.route_edges, b.route_graph, len(b.route_owner))
        route = mean_by(per_graph, b.route_owner, b.size)
        invoke = self.invoke(b.invoke_x, b.invoke_edges, torch.zeros(len(b.invoke_x), dtype=torch.long), 1)
        feats = torch.cat([self.vector(b.vector), deploy, route, invoke.expand(b.size, -1)], dim=1)
        return self.head(feats)
