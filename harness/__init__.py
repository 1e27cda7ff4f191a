"""harness: real-testbed benchmarking of microservice placement and rescheduling policies."""

__version__ = "0.1.0"
