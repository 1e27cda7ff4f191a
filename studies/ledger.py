"""The claims ledger: every headline claim of the five seed papers that harness speaks to, in one
machine-readable file (``studies/claims.yaml``), each with the paper's number and where it
stands, its world (simulation or live) and semantics (the paper's or the authors' code's),
harness's number with its interval, n, world, semantics, command, date and commit, and a
verdict with one line of why. README.md's Results table and each study's headline table are
rendered from it, between ``<!-- ledger:NAME -->`` and ``<!-- /ledger -->``; a test fails when
a rendered table differs from the file or a claim lacks what its verdict needs.

    .venv/bin/python -m studies.ledger [--write | --check]

A verdict is one of: ``reproduced`` (in the paper's world: a live claim needs a live number, or
the authors' own logs of their live runs),
``partly``, ``not reproduced`` (harness measured and did not find it, in a setting that may not
be the paper's), ``refuted`` (the evidence a reviewer asks for is there: the authors' code run
where it runs, both semantics, the deciding setting named), ``not measured``.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Literal, Optional

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

ROOT = Path(__file__).resolve().parents[1]
LEDGER = ROOT / "studies" / "claims.yaml"
PAPERS = {"000": "REACH", "001": "HephaestusForge", "002": "SIL-GPO", "003": "multi-agent rollout", "004": "KubeDSM"}
STUDY = {"000": "reach", "001": "hephaestus", "002": "silgpo", "003": "rollout", "004": "kubedsm"}
Verdict = Literal["reproduced", "partly", "not reproduced", "refuted", "not measured"]
World = Literal["simulation", "live", "both", "their logs"]
Semantics = Literal["paper", "code", "both", "harness"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Measured(Strict):
    """harness's number: what a reader needs to trust it and to run it again."""

    value: str  # as the reader sees it, with its interval: "−3.0 % ± 1.2"
    n: str  # what the interval is over: "90 scenario-sizes", "3 repeats", "5 seeds"
    world: World
    semantics: Semantics
    command: str
    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    commit: str = Field(pattern=r"^[0-9a-f]{7,40}$")


class Evidence(Strict):
    """What a refutation rests on (required for ``refuted``)."""

    authors_code_run: str  # how their code was run here, or why it cannot be
    semantics_checked: str  # the verdict in the paper's semantics and in the code's
    deciding_setting: str  # the setting that decides it
    own_bug_considered: str  # what bug of harness's would produce this result, and why it is not that


class Claim(Strict):
    id: str = Field(pattern=r"^[a-z0-9-]+$")
    paper: Literal["000", "001", "002", "003", "004"]
    claim: str
    paper_value: str
    where: str  # section, figure, table
    paper_world: World
    paper_semantics: Semantics = "paper"
    headline: bool = False  # in README.md's Results table
    harness: Optional[Measured] = None
    verdict: Verdict
    why: str = Field(max_length=250)  # with the verdict, a README.md cell of ≤ 300 characters
    evidence: Optional[Evidence] = None

    @model_validator(mode="after")
    def _needs(self):
        if self.verdict != "not measured" and self.harness is None:
            raise ValueError(f"{self.id}: a verdict of {self.verdict!r} needs harness's measurement")
        if self.verdict == "reproduced" and self.paper_world == "live" and self.harness.world not in ("live", "both", "their logs"):
            raise ValueError(f"{self.id}: a live claim is reproduced only by a live measurement")
        if self.verdict == "refuted" and self.evidence is None:
            raise ValueError(f"{self.id}: 'refuted' needs the evidence a reviewer asks for (evidence:)")
        return self


class Ledger(Strict):
    version: int
    claims: list[Claim]

    @model_validator(mode="after")
    def _unique(self):
        ids = [c.id for c in self.claims]
        if dup := sorted({i for i in ids if ids.count(i) > 1}):
            raise ValueError(f"claims: ids used twice: {', '.join(dup)}")
        if missing := sorted(set(PAPERS) - {c.paper for c in self.claims if c.headline}):
            raise ValueError(f"claims: no headline claim for paper(s) {', '.join(missing)}")
        return self


def load(path: Path = LEDGER) -> Ledger:
    return Ledger.model_validate(yaml.safe_load(path.read_text()))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _harness(c: Claim) -> str:
    if c.harness is None:
        return "not measured"
    h = c.harness
    return f"{h.value} ({h.n}; {h.world}, {h.semantics}'s semantics)"


def results_table(ledger: Ledger) -> str:
    """README.md's Results: one row per headline claim, ≤ 300 characters a cell."""
    rows = ["| paper | its claim | harness | verdict | study |", "|---|---|---|---|---|"]
    for c in (c for c in ledger.claims if c.headline):
        rows.append(f"| {c.paper} {PAPERS[c.paper]} | {_cell(c.claim)}: {_cell(c.paper_value)} ({c.where}, "
                    f"{c.paper_world}) | {_cell(_harness(c))} | **{c.verdict}**: {_cell(c.why)} | "
                    f"[studies/{STUDY[c.paper]}](studies/{STUDY[c.paper]}/README.md) |")
    return "\n".join(rows)


def study_table(ledger: Ledger, paper: str) -> str:
    """A study's headline table: every claim of its paper, with harness's command."""
    rows = ["| claim | the paper | harness | verdict | command |", "|---|---|---|---|---|"]
    for c in (c for c in ledger.claims if c.paper == paper):
        cmd = f"`{c.harness.command}` ({c.harness.date}, {c.harness.commit[:7]})" if c.harness else ""
        rows.append(f"| {_cell(c.claim)} | {_cell(c.paper_value)} ({c.where}; {c.paper_world}, "
                    f"{c.paper_semantics}) | {_cell(_harness(c))} | **{c.verdict}**: {_cell(c.why)} | {_cell(cmd)} |")
    return "\n".join(rows)


def targets(ledger: Ledger) -> dict[Path, dict[str, str]]:
    """Each file with a ledger table, its marker names and their rendered tables."""
    out = {ROOT / "README.md": {"results": results_table(ledger)}}
    for paper, study in STUDY.items():
        out[ROOT / "studies" / study / "README.md"] = {study: study_table(ledger, paper)}
    return out


MARKED = re.compile(r"<!-- ledger:(?P<name>[a-z]+) -->\n(?:.*?\n)?<!-- /ledger -->", re.S)


def render(text: str, tables: dict[str, str]) -> str:
    """``text`` with each marked section replaced by its table (a missing marker is an error)."""
    found = {m.group("name") for m in MARKED.finditer(text)}
    if missing := set(tables) - found:
        raise ValueError(f"no <!-- ledger:{', '.join(sorted(missing))} --> section")
    return MARKED.sub(lambda m: f"<!-- ledger:{m.group('name')} -->\n{tables[m.group('name')]}\n<!-- /ledger -->", text)


def stale(ledger: Ledger) -> list[str]:
    """The files whose ledger tables differ from the ledger (or lack their marker)."""
    out = []
    for path, tables in targets(ledger).items():
        text = path.read_text()
        try:
            if render(text, tables) != text:
                out.append(f"{path.relative_to(ROOT)}: its ledger table differs from studies/claims.yaml")
        except ValueError as exc:
            out.append(f"{path.relative_to(ROOT)}: {exc}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="render the tables into README.md and each study's README.md")
    ap.add_argument("--check", action="store_true", help="exit 1 when a rendered table differs from the ledger")
    args = ap.parse_args()
    try:
        ledger = load()
    except Exception as exc:  # noqa: BLE001 — a bad ledger is one line
        print(f"studies/claims.yaml: {exc}".splitlines()[0] if "\n" not in str(exc) else f"studies/claims.yaml: {exc}",
              file=sys.stderr)
        return 2
    if args.write:
        for path, tables in targets(ledger).items():
            path.write_text(render(path.read_text(), tables))
    problems = stale(ledger)
    for p in problems:
        print(p, file=sys.stderr)
    counts = {v: sum(c.verdict == v for c in ledger.claims) for v in Verdict.__args__}
    print(f"{len(ledger.claims)} claims: " + ", ".join(f"{n} {v}" for v, n in counts.items() if n))
    return 1 if problems and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
