"""A step-by-step trace of SIL-GPO's authors' own environment (``NEW_PPO/Environment.py`` of
``WolfRanok/AI-Microservices-and-Reinforce-Learning`` at 17451c5), run from a clone kept beside
the project (never in it), written as numbers only: the fixture ``tests/sim/test_deployenv_trace.py``
holds harness's ``DeployEnv`` (``silgpo_compat``) to.

    .venv/bin/python -m studies.silgpo.authors_trace --authors ../authors/NEW_PPO \\
        [--edge-nodes FILE] [--out tests/sim/data/silgpo_authors_trace.json] [--sweeps]

Their code needs ``torch_geometric`` (``pip install --target DIR --no-deps torch_geometric`` and
``PYTHONPATH=DIR``); it reads ``users.CSV`` and ``edge_node.CSV`` from where it runs
(``--edge-nodes`` gives the latter where the clone lacks it). The trace holds:

- the instance their generator built (seed 3, their default setting): servers, services,
  requests, each service's preferred server, the instances in the order placed, the invocation
  graph (``get_ms_graph``: its node features and edges);
- per episode (``greedy``: their ``greedy_deployment()``; ``fixed``: a fixed rule over the
  servers their ``get_mark`` allows for the instance being placed), the reset state and, per
  step, the instance placed, the action, the reward, the total delay (``get_total_delay``) and
  the state their ``agent_step`` returns: its vector (traffic, then mask) and its routing
  graphs (per graph the sum of its node features and its distinct edges).

``--sweeps`` traces instead every point of Figs 8-10 from its own parameter file
(``Environmental_parameters/``; their default setting's ``Arguments.py`` for λ 2-4, which has
none), seeded with 3 as their module seeds itself on import (what their ``main.py`` trains on),
then 4 and 5 (the sweeps' other instances): the instance and one ``greedy_deployment()`` episode
(per step the action, whether their ``get_mark`` allowed it (1/0), the reward and the total delay,
to 12 significant digits), and at seed 3 from each parameter file (λ 2-4's, their default setting,
is the main trace), in the same environment after it, an episode of the fixed rule recorded as
above, with the state ``agent_step`` returns at every step (what the agent sees at that point),
into ``tests/sim/data/silgpo_authors_sweeps.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

from studies.silgpo.sweeps import FIRST_SEED, SWEEPS, label

OUT = Path(__file__).resolve().parents[2] / "tests" / "sim" / "data" / "silgpo_authors_trace.json"
SWEEPS_OUT = OUT.with_name("silgpo_authors_sweeps.json")
SWEEP_SEEDS = tuple(FIRST_SEED + k for k in range(3))  # the sweeps' three instances (sweeps.instance)
PARAMETER_FILES = {"arrival": "arrival_rate_of_service/arrival_rate_{}_{}.py",
                   "chain": "length_of_service/length_of_service_{}_{}.py",
                   "requests": "number_of_service/number_of_service_{}.py"}
SOURCE = "WolfRanok/AI-Microservices-and-Reinforce-Learning@17451c55dfa6cdd8e262930aa570d95c79db97fa NEW_PPO/Environment.py"


def _state(env, state) -> dict:
    vector, _, rout, _ = state
    graphs = rout.to_data_list()
    return {"vector": [round(float(v), 9) for v in vector],
            "routing_sums": [round(float(g.x.sum()), 9) for g in graphs],
            "routing_edges": [len({(int(a), int(b)) for a, b in g.edge_index.T.tolist()}) for g in graphs]}


def _sid(env, ms) -> int:
    from Object_Parameter_DEF import MS  # noqa: the authors' module, on sys.path

    return ms.id if isinstance(ms, MS) else ms.id + env.MS_NUM


def _instance(env) -> dict:
    return {
        "servers": {"cpu": [n.get_cpu() for n in env.node_list], "gpu": [n.get_gpu() for n in env.node_list],
                    "mem": [n.get_memory() for n in env.node_list], "bandwidth": [n.bandwidth for n in env.node_list],
                    "connected": [list(map(int, row)) for row in env.graph]},
        "services": {"mu": [float(m.alpha) for m in env.all_ms_list], "cpu": [m.get_cpu() for m in env.all_ms_list],
                     "gpu": [m.get_gpu() for m in env.all_ms_list], "mem": [m.get_memory() for m in env.all_ms_list],
                     "data": [m.data for m in env.all_ms_list],
                     "preferred": [int(env.ms_first_node[m]) for m in env.all_ms_list]},
        "requests": {"rate": [float(u.lamda) for u in env.user_list],
                     "chain": [[_sid(env, m) for m in u.request_chain] for u in env.user_list],
                     "entry": [int(n) for n in env.user_first_arrival_node_list]},
        "order": [_sid(env, m) for m in env.Ms_types_instances],
        "invocation": {"features": env.GNN_ms_dependency.x.tolist(),
                       "edges": sorted({(int(a), int(b)) for a, b in env.GNN_ms_dependency.edge_index.T.tolist()})},
    }


def _greedy_columns(env) -> dict:
    """One ``greedy_deployment()`` episode as columns: action, whether ``get_mark`` allowed it
    (their code places a misfit regardless), reward, total delay after the step."""
    env.reset()
    out = {"start_delay": float(env.get_total_delay()), "actions": [], "fits": [], "rewards": [], "delays": []}
    done = False
    while not done:
        action = int(env.greedy_deployment())
        out["fits"].append(int(env.get_mark(env.Ms_types_instances[env.current_ms_index])[action]))
        _, reward, done = env.agent_step(action)
        out["actions"].append(action)
        out["rewards"].append(float(f"{reward:.12g}"))
        out["delays"].append(float(f"{env.get_total_delay():.12g}"))
    return out


def _episode(env, choose) -> dict:
    state = env.reset()
    out = {"start_delay": float(env.get_total_delay()), "reset": _state(env, state), "steps": []}
    done = False
    while not done:
        i = env.current_ms_index
        action = int(choose(env, i))
        state, reward, done = env.agent_step(action)
        out["steps"].append({"instance": i, "service": _sid(env, env.Ms_types_instances[i]), "action": action,
                             "reward": float(reward), "delay": float(env.get_total_delay()), "done": bool(done),
                             **_state(env, state)})
    out["final_delay"] = out["steps"][-1]["delay"]
    return out


def _fixed(env, i: int) -> int:
    """The (7i + 3)-th server, cyclically, of those their ``get_mark`` lets the instance being
    placed go to: a fixed sequence that spreads the instances and always fits."""
    fits = [n for n, ok in enumerate(env.get_mark(env.Ms_types_instances[i])) if ok]
    return fits[(7 * i + 3) % len(fits)]


@contextlib.contextmanager
def _their_folder(authors: Path, edge_nodes: Path | None):
    """Their modules importable and their CSVs where their code reads them (a scratch folder)."""
    with tempfile.TemporaryDirectory() as run:
        shutil.copy(authors / "users.CSV", run)
        shutil.copy(edge_nodes or authors / "edge_node.CSV", Path(run) / "edge_node.CSV")
        here, argv = os.getcwd(), sys.argv
        sys.path.insert(0, str(authors))
        os.chdir(run)
        try:
            sys.argv = ["Arguments"]  # their get_args() parses the command line
            yield
        finally:
            os.chdir(here)
            sys.argv = argv
            sys.path.remove(str(authors))


def trace(authors: Path, edge_nodes: Path | None = None) -> dict:
    with _their_folder(authors, edge_nodes):
        import Arguments  # noqa: their default setting's parameters
        import Environment  # noqa: seeds random and numpy with 3 on import, as in their runs

        env = Environment.ENV(Arguments.get_args())
        instance = _instance(env)
        greedy = _episode(env, lambda e, i: e.greedy_deployment())
        fixed = _episode(env, _fixed)
    return {"source": f"{SOURCE}, default setting (Arguments.py), seed 3",
            "edge_nodes": "the clone's" if edge_nodes is None else edge_nodes.name,
            "instance": instance, "episodes": {"greedy": greedy, "fixed": fixed}}


def parameter_file(authors: Path, figure: str, value) -> Path:
    """Their parameter file of a point of Figs 8-10: ``Arguments.py`` (their default setting) for
    λ 2-4, which has none of its own."""
    if (figure, value) == ("arrival", (2, 4)):
        return authors / "Arguments.py"
    path = authors / "Environmental_parameters" / PARAMETER_FILES[figure].format(*(value if isinstance(value, tuple)
                                                                                     else (value,)))
    if not path.exists():  # a partial clone: one line, status 2
        print(f"{path}: no such parameter file (--authors: their NEW_PPO at 17451c5 has it)", file=sys.stderr)
        raise SystemExit(2)
    return path


def their_parameters(authors: Path, figure: str, value):
    """Their parameter file of a point, loaded as a module (its ``get_args()``)."""
    spec = importlib.util.spec_from_file_location(f"their_{figure}_{label(value)}".replace("-", "_"),
                                                  parameter_file(authors, figure, value))
    parameters = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(parameters)
    return parameters


def sweep_trace(authors: Path, edge_nodes: Path | None = None, seeds=SWEEP_SEEDS) -> dict:
    import numpy as np

    points = []
    with _their_folder(authors, edge_nodes):
        import Environment  # noqa: their environment; each point reseeds as its import does

        for figure, values in SWEEPS.items():
            for value in values:
                file = parameter_file(authors, figure, value)
                parameters = their_parameters(authors, figure, value)
                for seed in seeds:
                    random.seed(seed)
                    np.random.seed(seed)
                    env = Environment.ENV(parameters.get_args())
                    point = {"figure": figure, "value": label(value), "seed": seed,
                             "file": str(file.relative_to(authors)), "instance": _instance(env),
                             "greedy": _greedy_columns(env)}
                    # what the agent sees, at the instance their main.py trains on (their default
                    # setting's, from Arguments.py, is the main trace's)
                    if seed == FIRST_SEED and file.name != "Arguments.py":
                        point["fixed"] = _episode(env, _fixed)
                    points.append(point)
    return {"source": f"{SOURCE}, each point's parameter file, seeds {', '.join(map(str, seeds))}",
            "edge_nodes": "the clone's" if edge_nodes is None else edge_nodes.name, "points": points}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--authors", type=Path, required=True, help="their NEW_PPO folder (a clone beside the project)")
    ap.add_argument("--edge-nodes", type=Path, help="their edge_node.CSV, where the folder lacks it")
    ap.add_argument("--out", type=Path, help=f"the trace (JSON, numbers only; default {OUT.name}, with --sweeps "
                                             f"{SWEEPS_OUT.name}, in tests/sim/data)")
    ap.add_argument("--sweeps", action="store_true",
                    help="trace every point of Figs 8-10 (the instance, a greedy episode; at seed 3 a fixed rule's "
                         "episode with its states)")
    args = ap.parse_args()
    edge_nodes = args.edge_nodes.resolve() if args.edge_nodes else None
    if args.sweeps:
        t = sweep_trace(args.authors.resolve(), edge_nodes)
        for p in t["points"]:
            g = p["greedy"]
            print(f"{p['figure']:8s} {p['value']:>4s} seed {p['seed']} ({p['file']}): instances to place "
                  f"{len(p['instance']['order'])}; start {g['start_delay']:.4f}; "
                  f"greedy_deployment {g['delays'][-1]:.4f}; misfits placed {g['fits'].count(0)}"
                  + (f"; fixed rule {p['fixed']['final_delay']:.4f}, states traced" if "fixed" in p else ""))
        return _write(t, args.out or SWEEPS_OUT)
    t = trace(args.authors.resolve(), edge_nodes)
    g, f = t["episodes"]["greedy"], t["episodes"]["fixed"]
    print(f"instances to place {len(t['instance']['order'])}; start's delay {g['start_delay']:.4f}; "
          f"greedy_deployment {g['final_delay']:.4f}; fixed rule {f['final_delay']:.4f}")
    return _write(t, args.out or OUT)


def _write(trace: dict, out: Path) -> int:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(trace, separators=(",", ":")) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
