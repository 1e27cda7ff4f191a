from pathlib import Path

# where the study's models are kept: committed, since results/ is scratch a fresh machine lacks
# (2026-11-27's first models were lost there)
MODELS = Path(__file__).parent / "models"


def form(paper_form: bool) -> str:
    """The delay's form as the study's tables and axes name it."""
    return "the paper's form, s" if paper_form else "the code's form"


def model(models: Path, episodes: int, encoder: str, sil: str, code_sil: bool, seed: int,
          paper_form: bool = False) -> tuple[Path, list[str]]:
    """(model path, ``harness train`` flags) of one seed of SIL-GPO on the authors' instance: the one
    naming rule of the ranking, the ablations, the sweeps and ``studies.silgpo.trainings``."""
    variant = encoder + ("" if sil == "auto" else f"-sil_{sil}") + ("-code" if code_sil else "") \
        + ("-paper" if paper_form else "")
    flags = ["--episodes", str(episodes), "--encoder", encoder, "--sil", sil, "--seed", str(seed)]
    return models / f"sil-gpo-authors-{variant}-s{seed}.pt", flags + (["--no-sil-critic-grad"] if code_sil else []) \
        + (["--paper-form"] if paper_form else [])


def infeasible(name: str, unstable: int) -> str:
    """A deployer's name in a ranking, marked where a deployment of it leaves a queue unstable (ρ ≥
    1; ≥ 0.99 in the code's form): the paper's eq. 35 forbids it; its delay is the code's penalty,
    not a sojourn."""
    return name + (f" [infeasible: {unstable} unstable queues]" if unstable else "")


def best_stable(means: dict[str, float], unstable: dict[str, int]) -> str:
    """The deployer of lowest mean among those whose deployments leave every queue stable (of all,
    where none does): the "best baseline" a claim is set against, never an infeasible one."""
    stable = [n for n in means if not unstable[n]] or list(means)
    return min(stable, key=means.get)
