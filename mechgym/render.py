"""Drawing a simulator's current state with MuJoCo's renderer, whatever its backend.

The backend's generalized positions (``Simulator.qpos``, MuJoCo's layout on every backend) are written into
an ``MjData`` of the scene's model and its kinematics computed, so the in-house engine draws exactly like
MuJoCo. Rendering is headless: ``mechgym`` sets ``MUJOCO_GL=egl`` when it is unset, before MuJoCo loads.
"""

from __future__ import annotations

import os

import mujoco
import numpy as np
from mujoco.rendering.classic import gl_context

from .simulator import Simulator

SHADOW_SIZE = 1024  # px: shadow map side; MuJoCo's default 4096 costs ~4x the fill time for a recording


def _check_gl_backend() -> None:
    """MuJoCo picks its OpenGL backend when it is first imported. Imported before mechgym with ``MUJOCO_GL``
    unset, it picked GLFW, which needs a display; without one, creating a context aborts the process."""
    if gl_context.GLContext.__module__ == "mujoco.glfw" and not os.environ.get("DISPLAY"):
        raise RuntimeError("MuJoCo was imported before mechgym with MUJOCO_GL unset, so it renders through GLFW, "
                           "which needs a display and there is none: set MUJOCO_GL=egl (or osmesa) before "
                           "importing mujoco, or import mechgym first")


class SceneRenderer:
    """Offscreen RGB frames of a simulator, from a named camera of its scene (``None``: the free camera)."""

    def __init__(self, sim: Simulator, width: int = 640, height: int = 480, camera: str | None = None):
        _check_gl_backend()
        model = sim.model
        if camera is not None and mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, camera) < 0:
            raise ValueError(f"the scene has no camera named {camera!r}")
        # Visual settings only: the offscreen buffer must hold the frame; nothing here touches the physics.
        model.vis.quality.shadowsize = SHADOW_SIZE
        model.vis.global_.offwidth = max(model.vis.global_.offwidth, width)
        model.vis.global_.offheight = max(model.vis.global_.offheight, height)
        self._sim = sim
        self._camera = camera if camera is not None else -1
        self._data = mujoco.MjData(model)
        self._renderer = mujoco.Renderer(model, height=height, width=width)

    def frame(self) -> np.ndarray:
        """(height, width, 3) uint8 image of the simulator's current poses."""
        model, data = self._sim.model, self._data
        data.qpos[:] = self._sim.qpos
        mujoco.mj_kinematics(model, data)
        mujoco.mj_comPos(model, data)  # subtree centres of mass, for cameras that track one
        mujoco.mj_camlight(model, data)
        self._renderer.update_scene(data, camera=self._camera)
        return self._renderer.render()

    def close(self) -> None:
        self._renderer.close()
