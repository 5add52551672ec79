"""Gymnasium registration of the mechgym environments (done by ``import mechgym``).

Episodes are limited in simulated seconds by the environments themselves (``time_limit=``), so the ids are
registered with ``max_episode_steps=None``: a step count would change the horizon whenever dt changes.
"""

from __future__ import annotations

import gymnasium

# id -> "module:class" of its task, beside its scene in envs/ (installed as mechgym.envs)
ENVIRONMENTS = {
    "mechgym/CubeDrop-v0": "mechgym.envs.cube_drop:CubeDropEnv",
    "mechgym/Gripper-v0": "mechgym.envs.gripper:GripperEnv",
    "mechgym/SliderCrank-v0": "mechgym.envs.slider_crank:SliderCrankEnv",
}


def register_environments() -> None:
    for env_id, entry_point in ENVIRONMENTS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry_point, max_episode_steps=None)
