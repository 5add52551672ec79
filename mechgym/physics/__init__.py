"""Engine I of the in-house rigid-body engine: free rigid bodies stepped by velocity Verlet.

Modules, one job each: ``support`` (which MJCF features run, ``SceneError`` otherwise), ``model`` (the
struct-of-arrays model from a compiled ``mujoco.MjModel``), ``state`` (state arrays with a leading world
axis and MuJoCo's qpos/qvel layout), ``rotation`` (quaternions, free-rotor drift), ``kinematics``,
``forces``, ``actuators`` and ``step`` (the kick-drift-kick kernel).
"""

from __future__ import annotations

from .forces import Windows
from .model import EngineModel, build_model
from .state import State
from .step import NON_FINITE, NOT_CONVERGED, OK, advance

__all__ = ["NON_FINITE", "NOT_CONVERGED", "OK", "EngineModel", "State", "Windows", "advance", "build_model"]
