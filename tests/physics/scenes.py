"""MJCF snippets for the engine tests (built as strings; MuJoCo compiles them)."""

from __future__ import annotations

import mujoco
import numpy as np

NO_CONTACT = 'contype="0" conaffinity="0"'


def free_body(name: str = "b", geom: str = 'type="sphere" size="0.1" mass="1"', pos: str = "0 0 0",
              quat: str = "1 0 0 0", joint: str = "", children: str = "") -> str:
    return (f'<body name="{name}" pos="{pos}" quat="{quat}"><joint name="{name}_free" type="free" {joint}/>'
            f'<geom name="{name}" {geom} {NO_CONTACT}/>{children}</body>')


def scene(bodies: str, actuators: str = "", option: str = "", flags: str = "", keyframe: str = "",
          extra: str = "") -> str:
    """An MJCF document: ``option`` attributes, ``flags`` attributes of <option><flag>, ``extra`` sections."""
    return (f"<mujoco><option {option}><flag {flags}/></option><worldbody>{bodies}</worldbody>"
            f"<actuator>{actuators}</actuator><keyframe>{keyframe}</keyframe>{extra}</mujoco>")


def key(qpos, qvel, ctrl=None) -> str:
    text = f'<key qpos="{" ".join(map(repr, map(float, qpos)))}" qvel="{" ".join(map(repr, map(float, qvel)))}"'
    if ctrl is not None:
        text += f' ctrl="{" ".join(map(repr, map(float, ctrl)))}"'
    return text + "/>"


def quat_to_matrix(q) -> np.ndarray:
    matrix = np.zeros(9)
    mujoco.mju_quat2Mat(matrix, np.asarray(q, dtype=float))
    return matrix.reshape(3, 3)
