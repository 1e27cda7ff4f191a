"""Each simulated pod's start and stop times, drawn from the pod lifecycle the profile measured per
node type (``Profile.lifecycle``: ``harness.testbed.lifecycle``): how long a pod takes from its
start until it is ready, and from its stop until it is gone (its node's room free).

A time is drawn from a gamma distribution with the node type's mean and standard deviation (as
``sim.variability`` draws job times), from the run's seed, one draw per pod started or stopped.
A node type the profile did not measure takes the mean over the types it did. A profile without
``lifecycle`` gives 0 s everywhere: pods start and go at once, as before it was measured.
"""

from __future__ import annotations

import numpy as np

from harness.sim.variability import job_factors
from harness.spec.profile import PodLifecycle, Profile


class PodClock:
    def __init__(self, profile: Profile | None, rng: np.random.Generator):
        self.rng = rng
        self.types: dict[str, PodLifecycle] = dict(profile.lifecycle) if profile is not None else {}
        if self.types:  # a type not measured: the mean of those that were
            known = list(self.types.values())
            self.fallback = PodLifecycle(ready_s=float(np.mean([k.ready_s for k in known])),
                                         ready_sd_s=float(np.mean([k.ready_sd_s for k in known])),
                                         gone_s=float(np.mean([k.gone_s for k in known])),
                                         gone_sd_s=float(np.mean([k.gone_sd_s for k in known])),
                                         samples=sum(k.samples for k in known))

    @property
    def measured(self) -> bool:
        """Whether the profile measured a lifecycle (else every time is 0)."""
        return bool(self.types)

    def _draw(self, mean: float, sd: float) -> float:
        if mean <= 0:
            return 0.0
        return float(mean * job_factors(self.rng, np.array(sd / mean)))

    def ready_s(self, node_type: str) -> float:
        """Seconds from a pod's start on a node of this type until it serves."""
        if not self.types:
            return 0.0
        t = self.types.get(node_type, self.fallback)
        return self._draw(t.ready_s, t.ready_sd_s)

    def gone_s(self, node_type: str) -> float:
        """Seconds from a pod's stop until its node's room is free."""
        if not self.types:
            return 0.0
        t = self.types.get(node_type, self.fallback)
        return self._draw(t.gone_s, t.gone_sd_s)
