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

    def pod_time_totals(self) -> dict[str, dict[str, float]]:
        """Per pod, the cells' counters as they stand: requests served and the milliseconds spent
        in all of them on the internal job, the external calls and the whole request (the sums of
        μBench's three histograms), and the CPU seconds its process used. Differences between two
        pulls give an interval's means."""
        out: dict[str, dict[str, float]] = {}
        for r in self.prom.custom_query(TOTALS_QUERY):
            name, pod = r["metric"].get("__name__", ""), r["metric"].get("pod", "")
            kind = TOTAL_SERIES.get(name)
            if kind and r["value"][1] not in ("NaN", "+Inf", "-Inf"):
                out.setdefault(pod, {})[kind] = out.get(pod, {}).get(kind, 0.0) + float(r["value"][1])
        return out


    def series(self, start: float, end: float, step_s: float = 1.0) -> list[dict]:
        """Every series the cells exposed from ``start`` to ``end`` (Unix s), histogram buckets left
        out, as Prometheus's range API gives them: [{"metric": {labels}, "values": [[t, "v"], ...]}]."""
        from datetime import datetime, timezone

        return self.prom.custom_query_range(SERIES_QUERY, start_time=datetime.fromtimestamp(start, timezone.utc),
                                            end_time=datetime.fromtimestamp(end, timezone.utc), step=f"{step_s:g}s")


# what a run keeps of Prometheus (its data goes with the testbed): the cells' series but their buckets
SERIES_QUERY = '{job="cells", __name__!~".*_bucket"}'

# μBench's histograms (harness.workload.cell) and the process's CPU -> the column each total goes to
TOTAL_SERIES = {"mub_request_processing_latency_milliseconds_count": "requests",
               "mub_internal_processing_latency_milliseconds_sum": "internal_ms",
               "mub_external_processing_latency_milliseconds_sum": "external_ms",
               "mub_request_processing_latency_milliseconds_sum": "request_ms",
               "process_cpu_seconds_total": "cpu_s"}
TOTALS_QUERY = "{__name__=~\"" + "|".join(TOTAL_SERIES) + "\", job=\"cells\"}"
