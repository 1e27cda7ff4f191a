"""The Kubernetes HPA on CPU (``harness.autoscaler``), every ``period_s``: each service scaled to
what the rule gives for the CPU its pods used (live: from Prometheus; simulated: the model's)."""

from __future__ import annotations

from harness.autoscaler import HPA

SIMULATION_ASSUMES = ("a pod's CPU is its arrivals times its execution time (the queueing model's load); "
                      "with closed-loop users the arrivals are the users over the predicted latency")
SIMULATION_ASSUMES_LIFECYCLE = SIMULATION_ASSUMES + ("; a scale-up's pods serve after their start time, drawn from "
                                                     "the profile's pod lifecycle")


def wanted(sc) -> bool:
    return sc.autoscaling.enabled


def hpa_target(d) -> tuple[int, dict] | None:
    """The HPA's decision as ``RunBase.scale_to``'s target."""
    return None if d is None else (d.desired, {"utilisation": round(d.utilisation, 3)})


def driver(run):
    cfg = run.plan.scenario.autoscaling
    hpa = HPA(cfg, run.plan.app)
    while True:
        yield cfg.period_s
        try:
            cpu = run.pod_cpu(cfg.window)  # in the cores the requests are written in
        except Exception as exc:
            run.event("autoscaler-error", error=str(exc)[:200])
            continue
        now = run.t_run()  # the run's clock: a simulated run's virtual seconds, not the host's (scale-down's window)
        if run.scale_to({s: (lambda mine, s=s: hpa_target(hpa.desired(s, mine, cpu, now))) for s in run.plan.app.services}):
            run.record_placement("scale")
