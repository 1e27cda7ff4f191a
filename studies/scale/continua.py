"""The generated continua the ``scale`` leaderboard tracks play (``leaderboards/scale.yaml``), as
the files under ``scenarios/scale/``: for each size an inventory, a μBench app over it with its
modelled profile, and an hour of a day-shaped open load. Written by ``harness.generators`` from
the numbers below and seed 0, so the files are these functions' output (``--check`` compares
them with what would be written, and a test does).

    .venv/bin/python -m studies.scale.continua [--check]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness.generators.callgraph import app as generated_app
from harness.generators.continuum import continuum
from harness.generators.day import scenario
from harness.generators.files import save
from harness.generators.profile import modelled_profile

ROOT = Path("scenarios/scale")  # repository-relative: the scenario names its app by this path


@dataclass(frozen=True)
class Continuum:
    nodes: int
    services: int
    pods: int
    mean_rate: float = 20.0  # requests/s over the hour
    duration_s: float = 3600.0  # the day's shape played over an hour
    seed: int = 0

    @property
    def name(self) -> str:
        return f"continuum-{self.nodes}"


# a testbed-sized continuum beside the 1,000-node one of issue 66's goal (2,000 pods of 120 services)
CONTINUA = (Continuum(100, 30, 200), Continuum(1000, 120, 2000))


def files(c: Continuum, root: Path = ROOT) -> dict[str, Path]:
    folder = root / c.name
    return {k: folder / f for k, f in (("inventory", "inventory.yaml"), ("app", "app.json"),
                                      ("profile", "profile.json"), ("scenario", "day.yaml"))}


def write(c: Continuum, root: Path = ROOT) -> dict[str, Path]:
    """The continuum's four files under ``root``; the scenario names the app by its path under ROOT."""
    out = files(c, root)
    inventory = continuum(c.nodes, seed=c.seed, name=c.name)
    app = generated_app(c.services, seed=c.seed, name=f"app-{c.nodes}", pods=c.pods)
    save(inventory, out["inventory"])
    save(app, out["app"])
    save(modelled_profile(app, inventory), out["profile"])
    save(scenario(str(files(c)["app"]), c.mean_rate, seed=c.seed, name=f"day-{c.nodes}", duration_s=c.duration_s),
         out["scenario"])
    return out


def stale() -> list[Path]:
    """The committed files that differ from what ``write`` gives now."""
    with tempfile.TemporaryDirectory() as tmp:
        bad = []
        for c in CONTINUA:
            fresh = write(c, Path(tmp))
            bad += [p for k, p in files(c).items() if not p.exists() or p.read_bytes() != fresh[k].read_bytes()]
        return bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 naming the files that differ")
    args = parser.parse_args(argv)
    if args.check:
        bad = stale()
        for p in bad:
            print(f"{p}: not what studies.scale.continua writes now (run it, and bump leaderboards/scale.yaml's version)")
        return 1 if bad else 0
    for c in CONTINUA:
        for p in write(c).values():
            print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
