"""The in-house rigid-body engine: rigid bodies stepped by velocity Verlet (Engine I), joints, equalities,
rods and ropes enforced exactly by RATTLE (Engine II), contacts between free bodies and static geometry
(Engine III).

Modules, one job each: ``support`` (which MJCF features run, ``SceneError`` otherwise), ``model`` (the
struct-of-arrays model from a compiled ``mujoco.MjModel``), ``state`` (state arrays with a leading world axis and
MuJoCo's qpos/qvel layout), ``vectors`` (3-vectors and quaternions), ``linalg`` (small dense systems), ``rotation``
(free-rotor drift), ``kinematics``, ``forces``, ``actuators``, ``constraints`` (RATTLE rows and projections),
``joints`` (MJCF joints, equalities and tendons as rows; hinge/slide/ball coordinates), ``collision`` and
``contact`` (contacts, friction and impacts, Engine III), ``confinement`` with ``surfaces`` and ``hull`` (a free
body kept on the free side of a fixed surface), ``step`` (the kick-drift-kick kernel), ``tolerances`` (every
stage's tolerances and caps, each with the reason for its value), ``jit`` (how a kernel is compiled) and
``dispatch`` (how Python calls the engine's entry point).
"""

from __future__ import annotations

from .constraints import Solver
from .forces import Windows
from .joints import Linkage
from .model import EngineModel, build_model
from .state import State
from .step import (
    CONTACTS_NOT_SOLVED,
    NON_FINITE,
    NOT_CONFINED,
    NOT_CONVERGED,
    NOT_PROJECTED,
    OK,
    TOO_MANY_CONTACTS,
    StepScratch,
    advance,
)

__all__ = ["CONTACTS_NOT_SOLVED", "NON_FINITE", "NOT_CONFINED", "NOT_CONVERGED", "NOT_PROJECTED", "OK",
           "TOO_MANY_CONTACTS", "EngineModel", "Linkage", "Solver", "State", "StepScratch", "Windows", "advance",
           "build_model"]
