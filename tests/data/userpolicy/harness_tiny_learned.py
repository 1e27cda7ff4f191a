"""A learned policy outside harness (one file): REACH's PPO with a smaller network, under its own name."""
from dataclasses import dataclass

from harness.families.reach.reach import Reach, ReachArgs


@dataclass
class TinyArgs(ReachArgs):
    hidden: int = 16


class TinyReach(Reach):
    name = "tiny-reach"
    description = "REACH's PPO with 16 units per layer"
    Args = TinyArgs
