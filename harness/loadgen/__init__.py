"""Load generation: Locust, in library mode, in its own process inside the client node."""

# A user that finds no published replica logs one failed request with this error and pauses
# before trying again, rather than spinning; the summary leaves that pause out of the generator's
# own overhead.
NO_ENDPOINT = "no endpoint"
NO_ENDPOINT_PAUSE_S = 0.1

# The worker's exit status when it cannot write its request log (disk full, read-only): the run
# stops at once rather than measure what it cannot keep.
WRITE_FAILED = 3
TIMED_OUT = "Timeout: no reply within timeout_s of the send"  # a request's row error, counted from its send
UNFINISHED = "Unfinished: no reply when the load ended"  # sent, still in flight when the load had drained
