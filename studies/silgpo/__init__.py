from pathlib import Path

# where the study's models are kept: committed, since results/ is scratch a fresh machine lacks
# (2026-11-27's first models were lost there)
MODELS = Path(__file__).parent / "models"
