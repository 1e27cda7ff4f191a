"""SIL-GPO (paper 002): instances of microservices and AI services deployed on edge servers;
PPO with self-imitation over graph attention, the authors' RSDQL, the deployment baselines, and
the deployments played live. See ``harness/families/silgpo/README.md``."""

# the modules that register what the family adds (harness.families.load imports them)
REGISTERS = ("baselines", "commands", "learners")
