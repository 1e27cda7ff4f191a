"""KubeDSM's QoS in both forms (issue 16, first step): the properties the paper's eq. 5 asks for."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from harness.families.kubedsm.qos import PaperQoS, code_qos, total_qos

SHARES = np.linspace(0, 1, 21)
PROMISES = (0.1, 0.5, 1.0)


@pytest.mark.parametrize("qos", [PaperQoS(), code_qos], ids=["paper", "code"])
def test_more_edge_pods_never_lower_qos(qos):
    for q in PROMISES:
        values = [qos(s, q) for s in SHARES]
        assert all(b >= a for a, b in zip(values, values[1:])), q


@pytest.mark.parametrize("qos", [PaperQoS(), code_qos], ids=["paper", "code"])
def test_a_pod_closing_a_gap_is_worth_more_than_one_beyond_the_promise(qos):
    """Two services, one edge slot: it goes to the one below its promise (the fairness eq. 5 buys)."""
    pods, promised = {"a": 4, "b": 4}, {"a": 0.5, "b": 0.5}
    below = total_qos({"a": 1, "b": 2}, pods, promised, qos)  # a at .25, b at the promise
    to_a = total_qos({"a": 2, "b": 2}, pods, promised, qos)
    to_b = total_qos({"a": 1, "b": 3}, pods, promised, qos)
    assert to_a > to_b > below


def test_reaching_the_promise_outweighs_any_change_below_it():
    """alpha << gamma: the last pod that reaches a service's promise is worth more than taking any
    service from nothing to just below its promise."""
    f = PaperQoS()
    for q, q2 in itertools.product(PROMISES, PROMISES):
        step = f(q, q) - f(q - 0.05, q)
        assert step > f(q2 - 0.05, q2) - f(0.0, q2)


def test_the_code_form_at_its_anchor_points():
    assert code_qos(1.0, 1.0) == code_qos(0.5, 0.5) == 0.99
    assert code_qos(0.25, 1.0) == pytest.approx(0.8 * 0.5)
    assert code_qos(0.75, 0.5) == pytest.approx(0.99 + 0.01 * 0.25 / 0.5)
    assert code_qos(0.3, 0.0) == pytest.approx(0.99 + 0.003)


def test_eq5s_ordering_is_checked():
    PaperQoS().validate()
    for bad in (PaperQoS(beta=1.0), PaperQoS(beta=-0.1), PaperQoS(gamma=2.0)):
        with pytest.raises(ValueError, match="eq. 5"):
            bad.validate()
