"""SIL-GPO's decision process (paper 002, §IV-A, eqs. 42-51) over the service-graph world
(``families.silgpo.world``): an episode starts from one instance of each service on its preferred
server and places the remaining instances (``ServiceGraph.to_place``: AI services first), one
per step, on a server where it fits (the mask, eq. 44).

Reward (eqs. 49-51, the code's constants): while placing, ``UNCHANGED`` (10) if the total delay
did not change, else ``WEIGHT`` (10) × its decrease; at the last step, the last decrease plus the
improvement on the previous episode's final delay plus the improvement on the lowest final
delay so far. The code starts both at 80 and, through a bug, sets its "lowest" to the episode
just ended (so it is the previous episode's again); ``silgpo_compat`` does so, the paper's form
keeps the true minimum and adds those two terms from the second episode on.

Observation (eqs. 42-47), numpy arrays a graph encoder reads:

- ``vector``: Λ_t, the traffic of the service being placed on each server, then b_t, the mask;
- ``deployment``: (N, S) instances per server and service (the deployment graph's node
  features; its edges are ``adjacency``);
- ``routing``: (K, N, S), for each request whose chain holds that service, the probability it
  reaches each (server, service) (the routing graphs' node features); ``routing_edges``, per
  such request, (2, E) the hops n -> n' it may take, each pair once (the code lists a pair
  once per hop of the chain that may take it: a pair used by three hops weighs three times in
  its attention; here once, and the graph is up to L − 1 times smaller);
- ``invocation``: (S, 6) id, CPU, GPU, storage, output size, rate (the invocation graph; its
  edges ``invocation_adjacency``: consecutive services of any chain, and self-loops; the code's
  ``get_ms_graph`` links a chain's first AI service by its AI index, as if it were microservice
  0-2, which ``silgpo_compat`` keeps, as ``servicegraph._preferred`` does).

Which instance the observation describes. In the paper's form (the default) both the vector
and the routing graphs describe the instance the next action places. The authors' code
(``NEW_PPO/Environment.py`` at 17451c5) builds the state after a step *before* it advances its
index, so its vector (``MLP_state``: instance index + 1) is also the one the next action places,
while its routing graphs (``get_rout_graph``: instance index) are those of the instance just
placed; only its reset state's vector is one ahead (instance 1 while the action places instance
0), its routing graphs there being instance 0's. ``silgpo_compat`` builds exactly that, checked
step by step against a trace of their code (``tests/sim/test_deployenv_trace.py``). (The code
also masks its action with the state's mask, so at reset with instance 1's, and places a misfit
regardless; harness's ``action_masks`` is always the placed instance's, and a misfit is refused.)
If no server has room for an instance it is left out (and counted in ``dropped``); at the
authors' instance and every instance of Figs 8-10 no deployment can come to that (``room``,
checked exactly, per step).
"""

from __future__ import annotations

import numpy as np

from harness.families.silgpo.world import ServiceGraph, arrivals, delay, routing, visits

UNCHANGED, WEIGHT = 10.0, 10.0
CODE_START = 80.0  # the code's first "previous" and "lowest" episode delay


class DeployEnv:
    def __init__(self, g: ServiceGraph):
        self.g = g
        self.order = g.to_place()
        self.last_episode = self.lowest = CODE_START if g.compat else None
        self.invocation = np.stack([np.arange(g.S), g.s_cpu, g.s_gpu, g.s_mem, g.s_out, g.mu], axis=1)
        adj = np.eye(g.S, dtype=bool)
        for chain in g.chains:
            chain = chain.copy()
            if g.compat and g.ai[chain[0]]:  # the code links a chain's first AI service by its AI index
                chain[0] -= int((~g.ai).sum())
            adj[chain[:-1], chain[1:]] = adj[chain[1:], chain[:-1]] = True
        self.invocation_adjacency = adj
        self.reset()

    def carried(self) -> dict:
        """What one episode hands the next (the reward's previous and lowest final delays), so a
        saved training goes on with it (``carry``)."""
        return {"last_episode": self.last_episode, "lowest": self.lowest}

    def carry(self, carried: dict) -> None:
        self.last_episode, self.lowest = carried["last_episode"], carried["lowest"]

    @property
    def steps(self) -> int:
        return len(self.order)

    @property
    def done(self) -> bool:
        return self.t >= self.steps

    def reset(self) -> dict:
        self.X = self.g.initial()
        self.t, self.dropped, self.placed = 0, 0, None
        self.current = delay(self.g, self.X).total
        self._skip_full()
        return self.observation()

    def service(self, t: int | None = None) -> int:
        return int(self.order[self.t if t is None else t])

    def action_masks(self) -> np.ndarray:
        return self.g.fits(self.X, self.service()) if not self.done else np.zeros(self.g.N, bool)

    def _skip_full(self) -> None:
        while not self.done and not self.action_masks().any():
            self.t += 1
            self.dropped += 1

    def step(self, server: int) -> tuple[dict, float, bool, dict]:
        if not self.action_masks()[server]:
            raise ValueError(f"instance {self.t} (service {self.service()}) does not fit on server {server}")
        self.X[self.service(), server] += 1
        self.placed = self.t
        self.t += 1
        self._skip_full()
        before, self.current = self.current, delay(self.g, self.X).total
        if not self.done:
            reward = UNCHANGED if self.current == before else WEIGHT * (before - self.current)
        else:
            reward = before - self.current
            if self.last_episode is not None:
                reward += (self.last_episode - self.current) + (self.lowest - self.current)
            self.last_episode = self.current
            self.lowest = self.current if self.g.compat or self.lowest is None else min(self.lowest, self.current)
        return self.observation(), reward, self.done, {"delay": self.current, "dropped": self.dropped}

    def shown(self) -> tuple[int, int]:
        """(the instance the vector describes, the instance whose requests the routing graphs
        are): the one the next action places for both, or the authors' code's choice."""
        if not self.g.compat:
            return self.t, self.t
        if self.placed is None:  # the code's reset state: its vector one ahead
            return min(self.t + 1, self.steps - 1), self.t
        return self.t, self.placed

    def observation(self) -> dict:
        g = self.g
        P = routing(g, self.X)
        Q = visits(g, P)
        if not self.done:
            shown, routed = self.shown()
            m = self.service(shown)
            vector = np.concatenate([arrivals(g, Q)[m], g.fits(self.X, m)])
            holds = [r for r, c in enumerate(g.chains) if self.service(routed) in c]
        else:
            vector, holds = np.zeros(2 * g.N), list(range(len(g.chains)))
        routes, edges = np.zeros((len(holds), g.N, g.S)), []
        for i, r in enumerate(holds):
            chain, hops = g.chains[r], np.zeros((g.N, g.N), bool)
            for k, m in enumerate(chain):
                routes[i, :, m] += Q[r, k]
                if k:  # every hop a request may take from the servers of its previous service
                    hops |= (Q[r, k - 1][:, None] > 0) & (P[m] > 0)
            edges.append(np.stack(np.nonzero(hops)))
        return {"vector": vector.astype(np.float32), "deployment": self.X.T.astype(np.float32),
                "adjacency": g.adj, "routing": routes.astype(np.float32), "routing_edges": edges,
                "invocation": self.invocation.astype(np.float32), "invocation_adjacency": self.invocation_adjacency}


def play(g: ServiceGraph, choose, rng: np.random.Generator | None = None) -> np.ndarray:
    """The deployment a placement rule builds: ``choose(env, rng)`` returns a server each step."""
    env = DeployEnv(g)
    while not env.done:
        env.step(choose(env, rng))
    return env.X
