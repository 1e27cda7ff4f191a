"""The Kubernetes Horizontal Pod Autoscaler's rule on CPU, over the testbed's Prometheus.

desired = ceil(replicas * utilisation / target), where utilisation is the CPU the service's
pods used over the rate window divided by what they requested; no change while
|utilisation / target - 1| is within the tolerance; scale-down only once the highest
recommendation of the stabilisation window allows it (the HPA's defaults: 10 %, 300 s).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from harness.spec.app import App
from harness.spec.scenario import Autoscaling
from harness.testbed.pods import Pod


@dataclass
class Decision:
    service: str
    current: int
    desired: int
    utilisation: float


@dataclass
class HPA:
    cfg: Autoscaling
    app: App
    history: dict[str, list[tuple[float, int]]] = field(default_factory=dict)

    def desired(self, service: str, pods: list[Pod], cpu_cores: dict[str, float], now: float | None = None) -> Decision | None:
        now = time.monotonic() if now is None else now
        measured = [p for p in pods if p.name in cpu_cores]
        if not pods or not measured:
            return None  # no metrics yet: the HPA does nothing
        used = sum(cpu_cores[p.name] for p in measured)
        requested = self.app.cpu_request(service) * len(measured)
        util = used / requested if requested else 0.0
        n = len(pods)
        ratio = util / self.cfg.target_cpu
        want = n if abs(ratio - 1) <= self.cfg.tolerance else math.ceil(n * ratio)
        want = max(self.cfg.min_replicas, min(self.cfg.max_replicas, want))
        hist = self.history.setdefault(service, [])
        hist.append((now, want))
        hist[:] = [(t, w) for t, w in hist if now - t <= self.cfg.scale_down_stabilization_s]
        if want < n:
            want = max(want, max(w for _, w in hist))  # stabilisation: the highest recent recommendation
            want = min(want, n)
        return Decision(service, n, want, util)
