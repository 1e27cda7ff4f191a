"""SIL-GPO trained on the authors' default instance (their generator, seed 3), in the code's form
of the total delay (what their learning curves log), beside the baselines and their logged
convergence.

    .venv/bin/python -m studies.silgpo.agent [--episodes 400] [--seeds 1] [--encoder gat|mlp]
        [--sil auto|on|off] [--code-sil] [--paper-form] [--threads 1] [--models studies/silgpo/models]
        [--out results/silgpo] [--ready-only]

Each seed's model is ``harness train``'s (``--models``/sil-gpo-authors-<variant>-s<seed>.pt):
used if it has the episodes asked, else trained, or resumed from its ``.ckpt`` — a GAT model
takes hours here, so the seeds span sessions (``harness train --resume`` makes the same files).
Per seed: the greedy evaluations every 10 episodes (its ``.curve.csv``), the last and best
evaluated delay, the episode at which the evaluations made 95 % of the way from the first to the
final level (the mean of the last ten: "95 % of the final reward"), seconds per episode; then
the mean over seeds with a 95 % interval, beside the code's greedy (24.75), harness's
queue-greedy (24.74) and the authors' logged SIL-GPO (about 26.8 from episode 1,560 on; it
starts near 67). ``--code-sil`` detaches the SIL value loss as the code does; ``--encoder mlp``
and ``--sil off`` are the ablations the paper lacks (``studies.silgpo.ablations`` sets them side
by side). ``--paper-form``: the models trained in the paper's form of the delay (seconds;
``harness train --paper-form``) and every deployer scored in it, on the same instance — the
baselines acting in the paper's form and, apart, in the code's (a greedy step's choice depends on
the form it scores), RSDQL's and SIL-GPO's code-form models deploying as they were trained (in
the code's form); every deployment scored in the paper's form.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from harness.policies import world_learners
from harness.families.silgpo.baselines import DEPLOYERS, PAPERS, deployments
from harness.families.silgpo.agent import Curve, deploy, load_actor
from harness.results.stats import mean_ci95, relative_difference_ci95
from harness.families.silgpo.world import code_instance, delay, paper_units
from studies.silgpo import MODELS, best_stable, form, infeasible, model

LOGGED = {"start": 67.0, "converged": 26.8, "converged from episode": 1560}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", type=int, default=400)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--encoder", default="gat", choices=["gat", "mlp"])
    ap.add_argument("--sil", default="auto", choices=["auto", "on", "off"])
    ap.add_argument("--code-sil", action="store_true", help="detach the SIL value loss, as the authors' code does")
    ap.add_argument("--paper-form", action="store_true",
                    help="the models trained in the paper's form of the delay, every deployer scored in it")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (two runs side by side: 1 each)")
    ap.add_argument("--models", type=Path, default=MODELS,
                    help="where the seeds' models are kept (trained or resumed where short); the default is in the "
                         "repository, so that hours of training outlive the machine")
    ap.add_argument("--out", type=Path, default=Path("results/silgpo"), help="the learning curves' plot")
    ap.add_argument("--ready-only", action="store_true",
                    help="rank the seeds whose model has the episodes asked; name the others and where they stand, "
                         "train none")
    ap.add_argument("--rsdql-encoder", default="mlp", choices=["gat", "mlp"],
                    help="RSDQL's models to rank beside (rsdql-deploy-authors-<encoder>-s<seed>.pt in --models)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    code = code_instance()
    g = paper_units(code) if args.paper_form else code  # the world the ranking scores in
    label = f"{args.encoder}-sil_{args.sil}{'-code' if args.code_sil else ''}{'-paper' if args.paper_form else ''}"
    args.out.mkdir(parents=True, exist_ok=True)
    runs: dict[int, Run] = {}
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        def progress(episode, total, d, seed=seed):
            if episode % 50 == 0:
                print(f"  seed {seed} episode {episode:5d}: evaluated {d:8.3f}", file=sys.stderr, flush=True)
        path, flags = model(args.models, args.episodes, args.encoder, args.sil, args.code_sil, seed, args.paper_form)
        if args.ready_only and not world_learners.has_episodes(path, args.episodes):
            print(f"seed {seed}: not ready ({standing(path)})", flush=True)
            continue
        run = runs[seed] = Run.of(world_learners.trained("sil-gpo", flags, path, progress), g)
        print(f"seed {seed}: first evaluation {run.curve.delay[0]:.3f}, last {run.last:.3f}, best {run.best:.3f}, "
              f"95 % of the improvement by episode {run.reach95}, {run.seconds_per_episode:.2f} s/episode "
              f"({run.path})", flush=True)
    if not runs:
        print("no seed is ready", file=sys.stderr)
        return 1
    finals, bests = [r.last for r in runs.values()], [r.best for r in runs.values()]
    (fm, fh), (bm, bh) = mean_ci95(finals), mean_ci95(bests)
    seeds, curves = list(runs), [(seed, r.curve) for seed, r in runs.items()]
    print("  the baselines (the rollout and each HELAS seed take minutes) ...", file=sys.stderr, flush=True)
    baselines, unstable = {}, {}
    for name in DEPLOYERS:
        baselines[name], unstable[name] = scored(g, deployments(name, g, seeds))
    pg, qg, ro = (baselines[n][0] for n in ("preferred", "queue-greedy", "rollout"))
    best = best_stable({n: float(np.mean(v)) for n, v in baselines.items()}, unstable)
    papers = min(PAPERS, key=lambda n: np.mean(baselines[n]))  # the paper's claim: its best, as scored
    print(f"\nSIL-GPO ({label}), {len(finals)} seed(s) × {args.episodes} episodes on the authors' instance:")
    print(f"  last evaluation {fm:.3f} ± {fh or 0:.3f}; best {bm:.3f} ± {bh or 0:.3f}; "
          f"{np.mean([r.seconds_per_episode for r in runs.values()]):.2f} s/episode; "
          f"95 % of the improvement by episode {[r.reach95 for r in runs.values()]}")
    print(f"  the code's greedy {pg:.3f}, queue-greedy {qg:.3f}, rollout {ro:.3f}" + ("" if args.paper_form else
          f"; the authors' logged agent ≈ {LOGGED['converged']} (from episode {LOGGED['converged from episode']}, "
          f"starting ≈ {LOGGED['start']:.0f})"))
    for what, mine in (("the model as trained", finals), ("its best evaluation", bests)):
        print(f"  SIL-GPO, {what}, against the paper's best baseline ({papers}): {against(mine, baselines[papers])}; "
              f"against the best baseline with every queue stable ({best}): {against(mine, baselines[best])}; "
              f"against the code's greedy: {100 * (np.mean(mine) / pg - 1):+.1f} %")
    print(f"  learning curves: {plot(curves, label, {'the code greedy': pg, 'queue-greedy': qg, 'rollout': ro}, args.out, args.paper_form)}")
    worst = max(r.unstable for r in runs.values())
    rows = {infeasible(f"sil-gpo ({label}, last)", worst): finals, f"sil-gpo ({label}, best evaluated)": bests} | {
        infeasible(name, unstable[name]): v for name, v in baselines.items()}
    asked = range(args.first_seed, args.first_seed + args.seeds)
    if args.paper_form:  # the baselines as they act in the code's form, scored in the paper's
        for name in DEPLOYERS:
            totals, worst = scored(g, deployments(name, code, seeds))
            rows[infeasible(f"{name} (acting in the code's form)", worst)] = totals
        # the code-form models of the same recipe, scored in the paper's form
        paths = [model(args.models, args.episodes, args.encoder, args.sil, args.code_sil, s)[0] for s in asked]
        trained = [m for m in paths if world_learners.has_episodes(m, args.episodes)]
        if trained:
            totals, worst = scored(g, [deploy(code, load_actor(m, code)[0]) for m in trained])
            rows[infeasible(f"sil-gpo (code-form models, {len(trained)} seeds)", worst)] = totals
    print(ranking(g, rows, args.models, args.rsdql_encoder, asked, code))
    return 0


def against(mine: list[float], theirs: list[float]) -> str:
    """mine − theirs in % of their mean, with Welch's 95 % interval (seeds on both sides)."""
    pct, half = relative_difference_ci95(mine, theirs)
    return f"{pct:+.1f} %" if half is None else \
        f"{pct:+.1f} % (Welch's 95 % interval {pct - half:+.1f} % to {pct + half:+.1f} %)"


def scored(g, deployments) -> tuple[list[float], int]:
    """(each deployment's total delay in ``g``'s form, the most unstable queues any of them has)."""
    ds = [delay(g, X) for X in deployments]
    return [d.total for d in ds], max(d.unstable for d in ds)


@dataclass(frozen=True)
class Run:
    """One trained model of SIL-GPO on the authors' instance, as this study reads it."""

    path: Path
    curve: Curve
    last: float  # the total delay of the saved (last) actor's greedy deployment
    seconds_per_episode: float
    unstable: int  # queues at ρ ≥ 1 in that deployment

    @classmethod
    def of(cls, path: Path, g) -> "Run":
        meta = json.loads(path.with_suffix(".json").read_text())
        d = delay(g, deploy(g, load_actor(path, g)[0]))
        return cls(path, Curve.read(path), d.total, meta["seconds"] / meta["args"]["episodes"], d.unstable)

    @property
    def best(self) -> float:
        return self.curve.best()

    @property
    def reach95(self) -> int:
        """The episode at 95 % of the way from the first evaluation to the final level."""
        return self.curve.to_reach(0.95)


LIGHT = "--encoder mlp --lr-actor 5e-4 --lr-critic 1e-4 --episodes 400"  # the light recipe: MLP, ×10 rates


def light_model(models: Path, seed: int) -> tuple[Path, list[str]]:
    """(model path, flags) of one seed of the light recipe (``LIGHT``) on the authors' instance,
    which ``studies.silgpo.sweep_recipe`` sets against the full one."""
    return models / f"sil-gpo-authors-light-s{seed}.pt", [*LIGHT.split(), "--seed", str(seed)]


def rsdql_model(models: Path, episodes: int, encoder: str, seed: int) -> tuple[Path, list[str]]:
    """(model path, ``harness train`` flags) of one seed of RSDQL on the authors' instance."""
    return (models / f"rsdql-deploy-authors-{encoder}-s{seed}.pt",
            ["--episodes", str(episodes), "--encoder", encoder, "--seed", str(seed)])


def saved_episode(model: Path) -> int:
    """The episode of a training's last saved state (0: none saved)."""
    state = model.with_suffix(".ckpt")
    return torch.load(state, weights_only=True)["state"]["episode"] if state.exists() else 0


def standing(model: Path) -> str:
    """Where a training stands: the episode of its last saved state, or not started."""
    episode = saved_episode(model)
    return f"at episode {episode}" if episode else "not started"


def ranking(g, rows: dict[str, list[float]], models: Path, encoder: str, asked, trained_in=None) -> str:
    """Every deployer on the authors' instance by total delay in ``g``'s form, mean ± 95 % interval
    over the seeds (``rows``: the agents' and the baselines', a baseline's seeds its own
    randomness); RSDQL from its models (``rsdql-deploy-authors-<encoder>-s<seed>.pt``) of the
    ``asked`` seeds where they are, deploying in ``trained_in`` (their training's form; default
    ``g``)."""
    from harness.families.silgpo import rsdql as rsdql_deploy

    rows = dict(rows)
    rsdql = [rsdql_model(models, 0, encoder, s)[0] for s in asked]
    if have := [m for m in rsdql if m.exists()]:
        totals, worst = scored(g, [rsdql_deploy.deploy(trained_in or g, rsdql_deploy.load_net(m, g)[0]) for m in have])
        rows[infeasible(f"rsdql-deploy ({encoder}, {len(have)} of {len(rsdql)} seeds)", worst)] = totals
    lines = [f"\nranked by total delay ({form(not g.compat)}) on the authors' instance (mean ± 95 % interval over the seeds):"]
    for rank, (name, v) in enumerate(sorted(rows.items(), key=lambda kv: np.mean(kv[1])), 1):
        m, h = mean_ci95(v)
        lines.append(f"  {rank:2d}  {name:68s} {m:9.3f} ± {h or 0:6.3f}")
    if not any(m.exists() for m in rsdql):
        lines.append(f"  rsdql-deploy: no model in {models} (harness train --policy rsdql-deploy --encoder {encoder} "
                     f"--seed N --out {models} --name rsdql-deploy-authors-{encoder}-sN)")
    return "\n".join(lines)


def plot(curves, label: str, lines: dict[str, float], out: Path, paper_form: bool = False) -> Path:
    """The greedy evaluations of every seed, the baselines and the authors' logged agent as lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for seed, curve in curves:
        ax.plot(curve.episodes, curve.delay, marker=".", markersize=3, label=f"SIL-GPO ({label}) seed {seed}")
    for name, value in lines.items():
        ax.axhline(value, linestyle="--", linewidth=1, color={"queue-greedy": "grey", "rollout": "tab:purple"}.get(name, "black"),
                   label=name)
    if not paper_form:  # the authors' logs are in the code's form
        ax.axhline(LOGGED["converged"], linestyle=":", color="red", label="the authors' logged SIL-GPO")
    ax.set_xlabel("episode")
    ax.set_ylabel(f"total delay ({form(paper_form)})")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = out / f"{label}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


if __name__ == "__main__":
    sys.exit(main())
