"""Rescheduling: the one move loop (``loop``) and the worlds it runs in: the simulator's state in
``harness sweep`` (``evaluate``), the live cluster in ``harness run`` (``live``), and the
rescheduler as a long-running service beside a K3s cluster (``service``)."""
