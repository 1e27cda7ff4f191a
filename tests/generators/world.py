"""A generated world for the policies' tests: a continuum, an app and its modelled profile, as the
ClusterView a run would give a policy before any pod is placed, and the pods to place."""

from __future__ import annotations


def generated_view(nodes: int, services: int, pods: int, seed: int = 0):
    """(view, the app's pods as PendingPods, every replica of every service)."""
    from harness.generators.callgraph import app as generated_app
    from harness.generators.continuum import continuum
    from harness.generators.profile import modelled_profile
    from harness.rescheduler.live import LiveView
    from harness.spec.app import parse_app
    from harness.spec.inventory import Inventory, check_semantics
    from harness.spec.loader import parse_model
    from harness.spec.profile import Profile
    from harness.testbed.simulated import SimCluster, simulated_state

    inv_doc, app_doc = continuum(nodes, seed), generated_app(services, seed, pods=pods)
    app = parse_app(app_doc, "generated")
    state = simulated_state(check_semantics(parse_model(Inventory, inv_doc, "inventory"), "inventory"))
    cluster = SimCluster(state)
    cluster.set_app(app)
    profile = parse_model(Profile, modelled_profile(app_doc, inv_doc), "profile")
    view, _ = LiveView(app, profile, state, cluster).view()
    return view, [view.pending(s) for s, spec in app.services.items() for _ in range(spec.replicas)]
