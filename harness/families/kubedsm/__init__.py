"""KubeDSM (paper 004): batch scheduling and edge-cloud migrations keeping each service's promised
edge share, and its edge-first baselines, on the one ground. See ``harness/families/kubedsm/README.md``."""

from harness.families.kubedsm import baselines, kubedsm  # noqa: F401 — they register their policies
