"""Shared RL pieces (networks, masked distributions, learning curves), used by every agent."""
