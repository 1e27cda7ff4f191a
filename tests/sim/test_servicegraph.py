"""SIL-GPO's service-graph world: the authors' instance and delay reproduced, the model's terms
against hand-computed values, routing (eq. 52) and flow conservation (eq. 31)."""

from dataclasses import replace

import numpy as np
import pytest

from harness.sim.erlang import erlang_c_wait, mmc_sojourn
from harness.families.silgpo.world import ServiceGraph, ServiceGraphConfig, arrivals, code_instance, delay, generate, \
    routing, visits


def preferred(g):
    X = g.initial()
    np.add.at(X, (g.to_place(), g.preferred[g.to_place()]), 1)
    return X


def test_seed_3_is_the_authors_default_instance_and_its_delays():
    # values of the authors' NEW_PPO code at 17451c5 (notes §7.2.1): rates, bandwidths, N, and two delays
    g = code_instance()
    assert g.mu[:12].astype(int).tolist() == [8, 8, 9, 10, 7, 7, 10, 9, 8, 8, 10, 10]
    assert np.round(g.mu[12:], 2).tolist() == [8.8, 14.0, 11.11]
    assert (g.bw * 10).astype(int).tolist() == [21, 22, 23, 24, 22, 40, 55, 60, 29, 26]
    assert round(g.rate.sum(), 1) == 92.2
    assert g.demand().tolist() == [6, 3, 5, 4, 4, 6, 4, 3, 5, 6, 4, 3, 3, 3, 3] and len(g.to_place()) == 62
    assert delay(g, g.initial()).total == pytest.approx(112.7, abs=0.05)
    d = delay(g, preferred(g))
    assert d.total == pytest.approx(24.75, abs=0.005) and d.unstable == 0


def test_the_vectorised_mmc_is_erlang_c():
    for c, lam, mu in ((1, 0.5, 1.0), (2, 1.0, 1.0), (5, 30.0, 8.0), (7, 60.0, 9.0)):
        expected = erlang_c_wait(c, lam / mu) / (c * mu - lam) + 1 / mu
        assert float(mmc_sojourn(np.array([c]), np.array([lam]), np.array([mu]))[0]) == pytest.approx(expected)
    assert float(mmc_sojourn(np.array([1]), np.array([3.0]), np.array([4.0]))[0]) == pytest.approx(1.0)  # 1/(μ−λ)


def tiny(compat=False) -> ServiceGraph:
    """Three servers, two services (a then b), one request entering at server 0."""
    g = ServiceGraph(cpu=np.full(3, 4.0), gpu=np.zeros(3), mem=np.full(3, 100.0), bw=np.array([1.0, 2.0, 4.0]),
                     adj=np.ones((3, 3), bool), s_cpu=np.ones(2), s_gpu=np.zeros(2), s_mem=np.full(2, 10.0),
                     s_out=np.array([100.0, 50.0]), mu=np.array([4.0, 2.0]), ai=np.zeros(2, bool),
                     chains=[np.array([0, 1])], rate=np.array([1.0]), size_in=np.array([10.0]), compat=compat)
    g.preferred = np.array([0, 1])
    return g


def test_each_term_of_the_paper_form_by_hand():
    g = tiny()
    X = np.array([[1, 0, 0], [0, 1, 3]])  # a on 0; b: one instance on 1, three on 2
    P = routing(g, X)
    assert P[1, 0].tolist() == [0, 0.25, 0.75]  # eq. 52: in proportion to b's instances
    lam = arrivals(g, visits(g, P))
    assert lam[1].tolist() == [0, 0.25, 0.75] and lam[0].tolist() == [1, 0, 0]
    d = delay(g, X)
    sec = lambda mb, gbps: 8 * mb / 1000 / gbps  # noqa: E731
    assert d.transmission == pytest.approx(sec(10, 1.0))
    w_a = 1 / (4 - 1)  # M/M/1
    w_b1 = 1 / (2 - 0.25)
    w_b2 = float(mmc_sojourn(np.array([3]), np.array([0.75]), np.array([2.0]))[0])
    assert d.sojourn == pytest.approx(w_a + 0.25 * w_b1 + 0.75 * w_b2)
    # a's 100 MB over the slower end of each link: 0 -> 1 at 1 Gbps, 0 -> 2 at 1 Gbps
    assert d.communication == pytest.approx(0.25 * sec(100, 1.0) + 0.75 * sec(100, 1.0))
    assert d.ret == pytest.approx(0.25 * sec(50, 2.0) + 0.75 * sec(50, 4.0))
    assert d.per_request.sum() == pytest.approx(d.total) and d.unstable == 0


def test_the_code_form_weights_by_rate_and_sums_each_queue_once():
    g = replace(tiny(compat=True), rate=np.array([1.5]))
    X = np.array([[1, 0, 0], [0, 1, 3]])
    d = delay(g, X)
    unit = lambda mb, gbps: (mb / 100) / (gbps * 10)  # noqa: E731  (100 MB over 0.1 Gbps)
    assert d.transmission == pytest.approx(1.5 * unit(100, 1.0))  # the first service's output, not the packet
    assert d.communication == pytest.approx(1.5 * (0.25 * unit(100, 2.0) + 0.75 * unit(100, 4.0)))  # destination's bw
    w = [1 / (4 - 1.5), 1 / (2 - 0.375), float(mmc_sojourn(np.array([3]), np.array([1.125]), np.array([2.0]))[0])]
    assert d.sojourn == pytest.approx(sum(w))


def test_an_overloaded_queue_is_counted_and_scored_as_one_at_the_codes_bound():
    g = replace(tiny(), rate=np.array([3.0]))
    X = np.array([[1, 0, 0], [0, 1, 0]])  # b: 3 req/s on one instance of μ = 2
    d = delay(g, X)
    assert d.unstable == 1
    assert d.sojourn == pytest.approx(1 / (4 - 3) + 1 / (2 - 0.99 * 2))  # b's queue as at ρ 0.99
    code = delay(replace(g, compat=True), X)
    assert code.unstable == 1 and code.sojourn == pytest.approx(1 / (4 - 3) + 5.0)  # the code's flat penalty


def test_the_papers_delay_never_falls_as_a_queue_fills():
    """A queue's sojourn rises with its load up to the bound and stays there: no load, stable or
    not, makes the deployment cheaper (the code's flat 5 s fell below a queue near ρ = 1)."""
    X = np.array([[1, 0, 0], [0, 1, 0]])
    totals = [delay(replace(tiny(), rate=np.array([r])), X).sojourn for r in np.linspace(1.0, 3.0, 201)]
    assert all(b >= a for a, b in zip(totals, totals[1:]))


@pytest.mark.parametrize("seed", [0, 1])
def test_flows_are_conserved_and_routing_rows_sum_to_one(seed):
    g = generate(ServiceGraphConfig(), seed)
    X = preferred(g)
    X[:, 0] += 1  # a second server for every service, so traffic splits
    P = routing(g, X)
    np.testing.assert_allclose(P.sum(axis=2), 1.0)
    lam = arrivals(g, visits(g, P))
    np.testing.assert_allclose(lam.sum(axis=1), g.service_rates())
    assert g.feasible(g.initial()) and len(g.to_place()) == g.demand().sum()


def test_the_sweeps_set_what_the_codes_parameter_files_set():
    base = ServiceGraphConfig()
    assert base.sweep("arrival", (5, 7)).gpus == 7 and base.sweep("arrival", (2, 4)).gpus == 5
    assert base.sweep("chain", (2, 4)).chain_ai_ms == (1, 3)
    assert base.sweep("requests", 50).ai_requests == 16
    with pytest.raises(ValueError):
        base.sweep("servers", 3)
