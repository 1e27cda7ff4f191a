"""Load generation: Locust, in library mode, in its own process inside the client node."""
