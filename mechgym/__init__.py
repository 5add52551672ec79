"""mechgym: Gymnasium robotics environments on an exact in-house rigid-body engine or on MuJoCo.

Importing it registers the environments ``mechgym/CubeDrop-v0``, ``mechgym/Gripper-v0`` and
``mechgym/SliderCrank-v0`` with Gymnasium (``gymnasium.make("mechgym:mechgym/CubeDrop-v0")`` imports it).
"""

from __future__ import annotations

import os

# Headless rendering by default; must be set before MuJoCo is first imported.
os.environ.setdefault("MUJOCO_GL", "egl")

from pathlib import Path  # noqa: E402

import mujoco  # noqa: E402

from ._bundled import bind_source_envs  # noqa: E402

bind_source_envs(__name__, Path(__file__).resolve().parent)

from .backends import BACKENDS  # noqa: E402
from .errors import SceneError, SimulationError, StartWarning  # noqa: E402
from .registration import ENVIRONMENTS, register_environments  # noqa: E402
from .scene import bundled_scenes, compile_model  # noqa: E402
from .simulator import BodyState, Contact, Event, SimState, Simulator, validate_dt  # noqa: E402

__version__ = "0.1.0"
__all__ = [
    "ENVIRONMENTS", "BodyState", "Contact", "Event", "SceneError", "SimState", "SimulationError", "Simulator",
    "StartWarning", "bundled_scenes", "load",
]


def load(scene: str | Path | mujoco.MjSpec, backend: str = "mechgym", dt: float | None = None) -> Simulator:
    """Compile ``scene`` (bundled name, MJCF path, MJCF string or MjSpec) and simulate it on ``backend``.

    dt: physics time step in seconds; ``None`` keeps the scene's ``<option timestep>``.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; backends are {sorted(BACKENDS)}")
    if dt is not None:
        validate_dt(dt)
    return BACKENDS[backend](compile_model(scene), dt)


register_environments()
