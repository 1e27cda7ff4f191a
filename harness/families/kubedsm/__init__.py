"""KubeDSM (paper 004): batch scheduling and edge-cloud migrations keeping each service's promised
edge share, and its edge-first baselines, on the one ground. See ``harness/families/kubedsm/README.md``."""

# the modules that register what the family adds (harness.families.load imports them)
REGISTERS = ("baselines", "kubedsm")
