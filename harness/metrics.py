"""A small query layer over the testbed's Prometheus (prometheus-api-client): per-pod CPU usage
and requests per second, in the units the rest of the harness uses (cores, milliseconds)."""

from __future__ import annotations

from functools import cached_property


class Metrics:
    def __init__(self, url: str):
        self.url = url

    @cached_property
    def prom(self):
        from prometheus_api_client import PrometheusConnect  # heavy; only when queried

        return PrometheusConnect(url=self.url, disable_ssl=True)

    def _by(self, query: str, label: str) -> dict[str, float]:
        return {r["metric"].get(label, ""): float(r["value"][1]) for r in self.prom.custom_query(query)
                if r["value"][1] not in ("NaN", "+Inf", "-Inf")}

    def pod_cpu_cores(self, window: str = "10s") -> dict[str, float]:
        """CPU each pod's process used over the window, in cores (what the HPA reads)."""
        return self._by(f"rate(process_cpu_seconds_total{{job='cells'}}[{window}])", "pod")

    def pod_requests_per_second(self, window: str = "10s") -> dict[str, float]:
        return self._by(f"sum by (pod) (rate(mub_request_processing_latency_milliseconds_count[{window}]))", "pod")
