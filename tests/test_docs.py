"""The documentation stays true to the repository: every link in README.md, docs/, studies/ and
benchmarks/ resolves inside the repository (anchors included), the code cites only documents,
sections, scripts and modules that exist, README.md stays a front door (≤ 250 lines, one Results
row per seed paper), and the run-directory page names every column harness writes."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from harness.results.rundir import EVENT_FIELDS, METRIC_FIELDS, REQUEST_FIELDS
from tests.conftest import REPO

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE_DIRS = ("harness", "studies", "benchmarks", "tests")
# a cited document, optionally with a section: docs/x.md, "Heading" or docs/x.md#anchor
CITED_DOC = re.compile(r"((?:docs|studies|benchmarks|manifests|tests)/[\w./-]*?\.md)(?:#([\w-]+)|, \"([^\"]+)\")?")
CITED_SCRIPT = re.compile(r"\b((?:benchmarks|studies|scripts)/[\w/-]+\.(?:py|sh))\b")
CITED_MODULE = re.compile(r"python -m ((?:studies|benchmarks)(?:\.\w+)+)")
BARE_README = re.compile(r"\bREADME\b(?!\.md)")


def markdown_files() -> list[Path]:
    files = [REPO / "README.md"]
    for folder in ("docs", "studies", "benchmarks"):
        files += sorted((REPO / folder).rglob("*.md"))
    return files


def code_files() -> list[Path]:
    return [p for d in CODE_DIRS for p in sorted((REPO / d).rglob("*.py")) if p.name != "test_docs.py"]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    s = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return s.replace(" ", "-")


def headings(path: Path) -> list[str]:
    out, fenced = [], False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            out.append(line.lstrip("#").strip())
    return out


def anchors(path: Path) -> set[str]:
    return {slug(h) for h in headings(path)}


def broken_link(source: Path, target: str) -> str | None:
    """Why a markdown link is broken, or None. External links must be http(s)."""
    if target.startswith(("http://", "https://", "mailto:")):
        return None
    path_part, _, anchor = target.partition("#")
    dest = source if not path_part else (source.parent / path_part).resolve()
    if not dest.exists():
        return f"{target}: no such file"
    try:
        dest.relative_to(REPO)
    except ValueError:
        return f"{target}: outside the repository"
    if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
        return f"{target}: no heading with anchor #{anchor} in {dest.relative_to(REPO)}"
    return None


@pytest.mark.parametrize("md", markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_link_resolves_inside_the_repository(md):
    text = re.sub(r"```.*?```", "", md.read_text(), flags=re.S)  # code blocks hold no links
    broken = [why for t in LINK.findall(text) if (why := broken_link(md, t))]
    assert not broken, f"{md.relative_to(REPO)}: " + "; ".join(broken)


def test_a_broken_link_is_caught(tmp_path):
    """The check itself: a missing file, a missing anchor, a path leaving the repository."""
    md = REPO / "docs" / "architecture.md"
    assert broken_link(md, "nope.md")
    assert broken_link(md, "testbed.md#no-such-heading")
    assert broken_link(md, "../../outside.md")
    assert broken_link(md, "testbed.md#the-local-testbed") is None


def test_code_cites_only_documents_sections_scripts_and_modules_that_exist():
    problems = []
    for f in code_files():
        text = f.read_text()
        where = f.relative_to(REPO)
        for path, anchor, section in CITED_DOC.findall(text):
            dest = REPO / path
            if not dest.exists():
                problems.append(f"{where}: cites {path}, which does not exist")
            elif anchor and anchor not in anchors(dest):
                problems.append(f"{where}: cites {path}#{anchor}, no such heading")
            elif section and section not in headings(dest):
                problems.append(f"{where}: cites {path}, \"{section}\", no such heading")
        for script in CITED_SCRIPT.findall(text):
            if not (REPO / script).exists():
                problems.append(f"{where}: cites {script}, which does not exist")
        for module in CITED_MODULE.findall(text):
            if importlib.util.find_spec(module) is None:
                problems.append(f"{where}: cites python -m {module}, no such module")
        for n, line in enumerate(text.splitlines(), 1):
            if BARE_README.search(line):
                problems.append(f"{where}:{n}: cites a README without saying which file")
    assert not problems, "\n".join(problems)


def test_the_readme_is_a_front_door():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    results = text.split("## Results", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in results.splitlines() if re.match(r"\| 00[0-4] ", line)]
    assert sorted(r[2:5] for r in rows) == ["000", "001", "002", "003", "004"], rows


def test_every_study_readme_opens_with_its_findings_in_150_lines():
    for readme in sorted((REPO / "studies").glob("*/README.md")):
        lines = len(readme.read_text().splitlines())
        assert lines <= 150, f"{readme.relative_to(REPO)}: {lines} lines; dated runs belong in HISTORY.md beside it"


def test_the_run_directory_page_names_every_column():
    page = (REPO / "docs" / "run-directory.md").read_text()
    missing = [c for c in (*REQUEST_FIELDS, *EVENT_FIELDS, *METRIC_FIELDS) if f"`{c}`" not in page]
    assert not missing, f"docs/run-directory.md does not describe: {missing}"


def test_the_architecture_page_names_every_layer_and_every_module_of_harness():
    """docs/architecture.md stays the design as it is: each layer of pyproject.toml's contract, and
    every package and top-level module of harness (a module added without a word there fails)."""
    import tomllib

    page = (REPO / "docs" / "architecture.md").read_text()
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    layers = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers")["layers"]
    missing = [m for layer in layers for m in layer.split(" | ") if f"`{m.strip()}`" not in page]
    harness = REPO / "harness"
    parts = [p.name for p in harness.iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    parts += [p.stem for p in harness.glob("*.py") if p.stem not in ("__init__", "__main__")]
    missing += [f"harness.{m}" for m in parts if f"harness.{m}" not in page and f"`{m}`" not in page]
    assert not missing, f"docs/architecture.md does not name: {missing}"
