"""Backends: each implements :class:`mechgym.simulator.Simulator`."""

from __future__ import annotations

from .mechgym_backend import MechgymSimulator
from .mujoco_backend import MujocoSimulator

BACKENDS = {cls.backend_name: cls for cls in (MechgymSimulator, MujocoSimulator)}
