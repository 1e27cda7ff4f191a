"""The simulator: REACH's latency model (pure functions) and the CEEnv Gymnasium environment."""
