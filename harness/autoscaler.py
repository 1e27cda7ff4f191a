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
        want = stabilised(self.history.setdefault(service, []), now, want, n, self.cfg.scale_down_stabilization_s)
        return Decision(service, n, want, util)


def stabilised(history: list[tuple[float, int]], now: float, want: int, n: int, window_s: float) -> int:
    """The HPA's scale-down stabilisation: record the recommendation ``want``; below the current
    ``n`` pods, scale down only to the highest recommendation of the last ``window_s`` seconds."""
    history.append((now, want))
    history[:] = [(t, w) for t, w in history if now - t <= window_s]
    if want < n:
        return min(n, max(want, max(w for _, w in history)))
    return want


def scale_up_limit(n: int, pods: int = 4, percent: float = 100.0) -> int:
    """The most pods the HPA scales to in one period from ``n`` (Kubernetes' default behaviour: the
    larger of +4 pods and +100 % per 15 s)."""
    return max(n + pods, math.floor(n * (1 + percent / 100)))
