"""Baselines for SIL-GPO's instance deployment (paper 002) in the service-graph world
(``harness.families.silgpo.world``, ``harness.families.silgpo.env``). Each builds a deployment X (S × N)
from the episode's start (one instance per service on its preferred server) by placing the
same instances (``ServiceGraph.to_place``): every baseline spends the same resources, so total
delays compare placements, not budgets (the paper's HELAS and MFDS-FPR spend more; their
scaling rules are not published).

- ``preferred``: each instance on its service's preferred server (the code's
  ``greedy_deployment``); where that server is full, harness's fallback, the fitting server with
  the most free CPU (the code has no fit check and places a misfit; on the authors' instance
  the fallback never acts: 24.7524, as their code prints);
- ``random``: each instance on a random server where it fits;
- ``queue-greedy`` (harness's): each instance where the model's total delay drops most;
- ``rollout`` (harness's): one step of Bertsekas's rollout over queue-greedy: each instance, in
  turn, tried on every server where it fits, the rest placed by queue-greedy, and put where that
  completed deployment's delay is least. Never worse than queue-greedy (its own choice is among
  those tried); the cost is the servers times the instances left times queue-greedy's, about
  two minutes on the authors' instance here, so the sweeps and leaderboards name it to run it;
- ``mfds-fpr``: MFDS-FPR as the paper describes it (random start, then scaling by server
  revenue until the delay stops improving), in harness's reading: from a random deployment,
  repeatedly take the instance of a service that earns least (its server has the least traffic
  per instance of it) and put it where the total delay drops most; keep the move if the delay
  fell; stop after a pass over every service that improves nothing. Routing is eq. 52's
  proportional split, the "fair probabilistic routing";
- ``helas``: HELAS (genetic algorithm with local search, fitness 1 / delay), with parameters
  of harness's choosing, since the paper gives none: 120 genomes (a server per instance), 570
  generations on the authors' instance (in proportion elsewhere, below), tournaments of 3, uniform crossover at 0.8, each gene mutated with probability
  2 / genes, the 2 best kept; each generation a local search moves 10 random genes of the best
  genome to their best server. A genome decodes instance by instance: a gene whose server is
  full goes to a random server with room. The budget, on the authors' instance (10 servers),
  is about 124,000 evaluations of the delay, close to the 139,000 delay computations of harness's
  2,000-episode training of SIL-GPO. HELAS's result depends on it up to about 63,000 (5 seeds
  there: 37.5 with 30 genomes × 40 generations, 28.4 with 60 × 160, 27.5 with 60 × 400 and with
  120 × 400; studies/silgpo). The agent's computations grow with the instances an episode
  places, so HELAS's generations do too (``helas_generations``): the same share of the agent's
  budget on every instance with 10 servers (a generation's evaluations depend on the servers, not
  the instances; Figs 8-10 place 23-113 on 10), not a fixed one that starves it on the large ones.

- ``optimal``: the exact optimum of the same problem on a tiny instance, by enumeration: each
  service's instances as a multiset of servers (instances of one service are alike), every
  combination within capacity scored by the model. The delay is not linear in X (Erlang C,
  eq. 52's ratios), so a MILP would need a piecewise model; enumeration is exact.

The total delay is ``servicegraph.delay(g, X).total``, in the world's form (paper or code).
"""

from __future__ import annotations

import itertools
import math
from typing import Callable

import numpy as np

from harness.families.silgpo.env import DeployEnv, play
from harness.families.silgpo.world import ServiceGraph, arrivals, delay, routing, visits
from harness.policies import catalog


def _most_free_cpu(env: DeployEnv, fits: np.ndarray) -> int:
    free = env.g.cpu - env.g.used(env.X)[0]
    return int(np.flatnonzero(fits)[np.argmax(free[fits])])


def preferred(g: ServiceGraph, rng: np.random.Generator | None = None) -> np.ndarray:
    def choose(env: DeployEnv, _):
        fits, n = env.action_masks(), int(g.preferred[env.service()])
        return n if fits[n] else _most_free_cpu(env, fits)
    return play(g, choose)


def random_feasible(g: ServiceGraph, rng: np.random.Generator) -> np.ndarray:
    return play(g, lambda env, r: int(r.choice(np.flatnonzero(env.action_masks()))), rng)


def best_server(g: ServiceGraph, X: np.ndarray, m: int, fits: np.ndarray) -> tuple[int, float]:
    """The server among ``fits`` where one more instance of m gives the lowest total delay."""
    best, best_t = -1, np.inf
    for n in np.flatnonzero(fits):
        X[m, n] += 1
        t = delay(g, X).total
        X[m, n] -= 1
        if t < best_t:
            best, best_t = int(n), t
    return best, best_t


def queue_greedy(g: ServiceGraph, rng: np.random.Generator | None = None) -> np.ndarray:
    X = g.initial()
    _place_greedily(g, X, g.to_place())
    return X


def _place_greedily(g: ServiceGraph, X: np.ndarray, services) -> None:
    """queue-greedy's placements of ``services`` (one instance each, in order) onto X, in place;
    an instance that fits nowhere is dropped, as ``DeployEnv`` drops it."""
    for m in services:
        fits = g.fits(X, m)
        if fits.any():
            X[m, best_server(g, X, m, fits)[0]] += 1


def rollout(g: ServiceGraph, rng: np.random.Generator | None = None) -> np.ndarray:
    X, order = g.initial(), g.to_place()
    for t, m in enumerate(order):
        fits = g.fits(X, m)
        if not fits.any():
            continue

        def completed(n: int) -> float:
            Y = X.copy()
            Y[m, n] += 1
            _place_greedily(g, Y, order[t + 1:])
            return delay(g, Y).total
        X[m, min(np.flatnonzero(fits), key=completed)] += 1
    return X


def mfds_fpr(g: ServiceGraph, rng: np.random.Generator, max_passes: int = 30) -> np.ndarray:
    X = random_feasible(g, rng)
    floor = g.initial()  # the start's instances stay
    current = delay(g, X).total
    for _ in range(max_passes):
        improved = False
        lam = arrivals(g, visits(g, routing(g, X)))
        worst = (lam / (np.maximum(X, 1) * g.mu[:, None])).max(axis=1)
        for m in np.argsort(-worst):
            movable = np.flatnonzero(X[m] > floor[m])
            if not len(movable):
                continue
            out = int(movable[np.argmin(lam[m, movable] / X[m, movable])])  # earns least per instance
            X[m, out] -= 1
            n, t = best_server(g, X, m, g.fits(X, m))
            if n >= 0 and t < current - 1e-12:
                X[m, n] += 1
                current, improved = t, True
                lam = arrivals(g, visits(g, routing(g, X)))
            else:
                X[m, out] += 1
        if not improved:
            break
    return X


def _decode(g: ServiceGraph, genes: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(X, the genes as placed): each instance on its gene's server, or a random one with room."""
    X, placed = g.initial(), genes.copy()
    used = g.used(X)  # kept as instances are added: most of HELAS's time went to summing it again
    for i, m in enumerate(g.to_place()):
        if not g.room(used, m, placed[i]):  # the gene's server is full: every server is looked at
            fits = g.room(used, m)
            if not fits.any():
                continue
            placed[i] = rng.choice(np.flatnonzero(fits))
        n = placed[i]
        X[m, n] += 1
        for total, each in zip(used, (g.s_cpu, g.s_gpu, g.s_mem)):
            total[n] += each[m]
    return X, placed


AUTHORS_INSTANCES, AUTHORS_GENERATIONS = 62, 570  # HELAS's budget on the authors' instance (above)


def helas_generations(g: ServiceGraph) -> int:
    """HELAS's generations on ``g``: the authors' instance's 570 in proportion to the instances
    an episode places, as SIL-GPO's training makes its delay computations (one a step)."""
    return max(1, round(AUTHORS_GENERATIONS * len(g.to_place()) / AUTHORS_INSTANCES))


def helas(g: ServiceGraph, rng: np.random.Generator, population: int = 120, generations: int | None = None,
          crossover: float = 0.8, tournament: int = 3, elite: int = 2, local_genes: int = 10) -> np.ndarray:
    genes_n = len(g.to_place())
    generations = helas_generations(g) if generations is None else generations

    def evaluate(genes):
        X, placed = _decode(g, genes, rng)
        return delay(g, X).total, placed

    pop = [evaluate(rng.integers(0, g.N, genes_n)) for _ in range(population)]
    for _ in range(generations):
        pop.sort(key=lambda p: p[0])
        best_t, best = pop[0]
        for i in rng.choice(genes_n, min(local_genes, genes_n), replace=False):  # local search on the best
            for n in range(g.N):
                trial = best.copy()
                trial[i] = n
                t, placed = evaluate(trial)
                if t < best_t:
                    best_t, best = t, placed
        pop[0] = (best_t, best)
        nxt = pop[:elite]
        while len(nxt) < population:
            a, b = (min((pop[j] for j in rng.choice(population, tournament, replace=False)), key=lambda p: p[0])[1]
                    for _ in range(2))
            child = np.where(rng.random(genes_n) < 0.5, a, b) if rng.random() < crossover else a.copy()
            mutate = rng.random(genes_n) < 2 / genes_n
            child[mutate] = rng.integers(0, g.N, int(mutate.sum()))
            nxt.append(evaluate(child))
        pop = nxt
    best = min(pop, key=lambda p: p[0])[1]
    return _decode(g, best, rng)[0]


def optimal(g: ServiceGraph, rng: np.random.Generator | None = None, limit: int = 200_000) -> np.ndarray:
    """The deployment of least total delay among every one within capacity (enumerated)."""
    demand = g.demand()
    count = math.prod(math.comb(g.N + d - 1, d) for d in demand)
    if count > limit:
        raise ValueError(f"{count:,} deployments to enumerate (limit {limit:,}): optimal is for tiny instances")
    choices = [list(itertools.combinations_with_replacement(range(g.N), int(d))) for d in demand]
    best, best_t, start = None, np.inf, g.initial()
    for combo in itertools.product(*choices):
        X = start.copy()
        for m, servers in enumerate(combo):
            np.add.at(X[m], list(servers), 1)
        if not g.feasible(X):
            continue
        t = delay(g, X).total
        if t < best_t:
            best, best_t = X, t
    if best is None:
        raise ValueError("no deployment fits")
    return best


DEPLOYERS: dict[str, Callable[[ServiceGraph, np.random.Generator], np.ndarray]] = {
    "preferred": preferred, "random": random_feasible, "queue-greedy": queue_greedy, "rollout": rollout,
    "mfds-fpr": mfds_fpr, "helas": helas}
DETERMINISTIC = ("preferred", "queue-greedy", "rollout")  # the same deployment whatever the seed
SLOW = ("rollout", "helas")  # minutes on the authors' instance: said before they run
PAPERS = ("helas", "mfds-fpr")  # the paper's own baselines among these (its RSDQL learns: harness.families.reach)
SUMMARIES = {"preferred": "each instance on its service's preferred server (the authors' greedy_deployment, "
                          "where it has room)",
             "random": "each instance on a random server where it fits",
             "queue-greedy": "each instance where the model's total delay drops most (harness's)",
             "rollout": "Bertsekas's rollout over queue-greedy: each instance tried on every server (harness's)",
             "mfds-fpr": "the paper's MFDS-FPR baseline: a feasible start, then first-improvement moves",
             "helas": "the paper's HELAS baseline: a genetic algorithm over the placements"}
for _word in DEPLOYERS:
    catalog.register(_word, "servicegraph", SUMMARIES[_word], "silgpo")


def deployments(name: str, g: ServiceGraph, seeds) -> list[np.ndarray]:
    """Baseline ``name``'s deployment of ``g`` under each of ``seeds`` (its own randomness); a
    deterministic one is computed once (the rollout takes minutes)."""
    if name in DETERMINISTIC:
        return [DEPLOYERS[name](g, None)] * len(seeds)
    return [DEPLOYERS[name](g, np.random.default_rng(s)) for s in seeds]
