"""KubeDSM's quality of service (paper 004, eqs. 1-5; the authors' code, alg/QoS.go): how well a
service's share of pods on the edge meets the share it was promised (Q, 1 by default). The
policy maximises the sum over services. Both forms, selectable; the code's is the default.

- **paper**: with x = share - promised, F(x) = alpha * x below the promise, beta * x + gamma at or
  above it, 0 <= beta < alpha << gamma (eq. 5). The paper gives no values. Chosen here: alpha 1
  (the unit), beta 0.1 (a pod beyond the promise is still worth a little, ten times less than one
  that closes a gap), gamma 10 ("<<" read as an order of magnitude: meeting the promise outweighs any
  shortfall elsewhere, since |x| <= 1). All three are arguments.
- **code** (since 2024-09-06): 0.99 at the promise; above it 0.99 + 0.01 (share - promised) / (1 -
  promised); below it 0.8 sqrt(share / promised).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PaperQoS:
    alpha: float = 1.0
    beta: float = 0.1
    gamma: float = 10.0

    def validate(self) -> None:
        if not 0 <= self.beta < self.alpha:
            raise ValueError(f"KubeDSM needs 0 <= beta < alpha (eq. 5); got beta {self.beta}, alpha {self.alpha}")
        if self.gamma < 10 * self.alpha:
            raise ValueError(f"KubeDSM needs alpha << gamma (eq. 5; read as gamma >= 10 alpha); got {self.gamma}")

    def __call__(self, share: float, promised: float) -> float:
        x = share - promised
        return self.alpha * x if x < 0 else self.beta * x + self.gamma


def code_qos(share: float, promised: float) -> float:
    """The authors' code's QoS of one service (alg/QoS.go at 208da8e)."""
    if math.isclose(share, promised):
        return 0.99
    if share > promised:
        return 0.99 + 0.01 * (share - promised) / (1 - promised)
    return 0.8 * math.sqrt(share / promised)


def qos_array(qos, share: np.ndarray, promised: float) -> np.ndarray:
    """``qos(x, promised)`` of every x of ``share``, as the scalar forms compute each (the code's,
    the paper's; another callable one by one)."""
    share = np.asarray(share, float)
    if qos is code_qos:
        with np.errstate(divide="ignore", invalid="ignore"):
            close = np.abs(share - promised) <= 1e-9 * np.maximum(np.abs(share), abs(promised))  # math.isclose
            above = 0.99 + 0.01 * (share - promised) / (1 - promised)
            below = 0.8 * np.sqrt(share / promised)
        return np.where(close, 0.99, np.where(share > promised, above, below))
    if isinstance(qos, PaperQoS):
        x = share - promised
        return np.where(x < 0, qos.alpha * x, qos.beta * x + qos.gamma)
    return np.array([qos(float(x), promised) for x in share])


def total_qos(edge_pods: dict[str, int], pods: dict[str, int], promised: dict[str, float], qos=code_qos) -> float:
    """QoS(u) = sum over services of QoS(i, u) (eq. 1); a service with no pods counts as meeting its promise."""
    return sum(qos(edge_pods.get(s, 0) / n, promised.get(s, 1.0)) if n else qos(1.0, 1.0) for s, n in pods.items())
