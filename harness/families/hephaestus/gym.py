"""HephaestusForge's world with Gymnasium's face (``gymnasium.make("harness/MultiCluster-v0")``):
the (C+4) × 10 set observation, C+4 discrete actions (deploy-all on cluster c, FFD, FFI, BF1B1,
reject) and their mask in ``info["action_mask"]`` (eq. 3), as maskable learners (sb3-contrib's
MaskablePPO) read it. Every keyword of ``MultiClusterConfig`` is a keyword of ``make``:

    env = gymnasium.make("harness/MultiCluster-v0", clusters=8, objective="cost", hf_compat=True)
    env = gymnasium.make("harness/MultiCluster-v0", inventory="inventories/hephaestus-local.yaml")  # its sites

The episode ends (``terminated``) after ``episode_steps`` requests; the episode's rejection, cost,
latency and Gini (what the authors' logs hold) are in the last step's ``info["episode"]``.
"""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np

from harness.families.hephaestus.world import EXTRA_ROWS, FEATURES, MultiClusterConfig, MultiClusterEnv, sites_of


class MultiClusterGym(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, **config):
        self.cfg = MultiClusterConfig(**config)
        if self.cfg.inventory:  # the sites mode: as many clusters as the inventory has sites
            self.cfg = dataclasses.replace(self.cfg, clusters=len(sites_of(self.cfg.inventory).names))
        rows = self.cfg.clusters + EXTRA_ROWS
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, shape=(rows, FEATURES), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(rows)
        self.world: MultiClusterEnv | None = None

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if self.world is None or seed is not None:
            self.world = MultiClusterEnv(self.cfg, seed=seed)
        obs = self.world.reset()
        return obs, {"action_mask": self.world.action_masks()}

    def step(self, action):
        obs, reward, done, _ = self.world.step(int(action))
        info = {"action_mask": self.world.action_masks()}
        if done:
            info["episode"] = dict(self.world.finished[-1])
        return obs, float(reward), bool(done), False, info

    def action_masks(self) -> np.ndarray:
        """sb3-contrib's MaskablePPO asks the env itself."""
        return self.world.action_masks()
