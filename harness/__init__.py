"""harness: real-testbed benchmarking of microservice placement and rescheduling policies."""

__version__ = "0.1.0"

from harness import gym_envs as _gym_envs  # noqa: E402  (a few lines, no third-party import)

_gym_envs.watch()  # gymnasium.make("harness/CEEnv-v0") works once gymnasium is imported
