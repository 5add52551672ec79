"""Gymnasium registration of the mechgym environments (done by ``import mechgym``).

Episodes are limited in simulated seconds by the environments themselves (``time_limit=``), so the ids are
registered with ``max_episode_steps=None``: a step count would change the horizon whenever dt changes.
``gymnasium.make_vec`` builds the native vector env (:mod:`mechgym.vector`) unless told otherwise.
"""

from __future__ import annotations

from functools import partial

import gymnasium

# id -> "module:class" of its task, beside its scene in envs/ (installed as mechgym.envs)
ENVIRONMENTS = {
    "mechgym/CubeDrop-v0": "mechgym.envs.cube_drop:CubeDropEnv",
    "mechgym/Gripper-v0": "mechgym.envs.gripper:GripperEnv",
    "mechgym/SliderCrank-v0": "mechgym.envs.slider_crank:SliderCrankEnv",
}


def _vector_env(entry_point: str, **kwargs):
    from .vector import MechVectorEnv  # imported on use: mechgym.vector imports the package's env layer

    return MechVectorEnv(entry_point, **kwargs)


def register_environments() -> None:
    for env_id, entry_point in ENVIRONMENTS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry_point, max_episode_steps=None,
                               vector_entry_point=partial(_vector_env, entry_point))
