from pathlib import Path

# where the study's models are kept: committed, since results/ is scratch a fresh machine lacks
# (2026-11-27's first models were lost there)
MODELS = Path(__file__).parent / "models"


def form(paper_form: bool) -> str:
    """The delay's form as the study's tables and axes name it."""
    return "the paper's form, s" if paper_form else "the code's form"
