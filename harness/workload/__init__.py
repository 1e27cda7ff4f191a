"""The μBench-style service cell that runs inside pods, and its internal jobs."""
