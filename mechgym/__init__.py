"""mechgym: Gymnasium robotics environments on an exact in-house rigid-body engine or on MuJoCo."""

from __future__ import annotations

from pathlib import Path

import mujoco

from .backends import BACKENDS
from .errors import SceneError, SimulationError
from .scene import bundled_scenes, compile_model
from .simulator import BodyState, Contact, Event, SimState, Simulator, validate_dt

__version__ = "0.1.0"
__all__ = [
    "BodyState", "Contact", "Event", "SceneError", "SimState", "SimulationError", "Simulator",
    "bundled_scenes", "load",
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
