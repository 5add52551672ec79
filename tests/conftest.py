"""Shared test helpers."""

from __future__ import annotations

import os

# Rendering tests need a headless OpenGL backend whichever test module imports MuJoCo first.
os.environ.setdefault("MUJOCO_GL", "egl")

import pytest  # noqa: E402


def mjcf(body: str, actuators: str = "", options: str = "", extra: str = "") -> str:
    """A small MJCF document with ``body`` inside <worldbody>."""
    return (f"<mujoco>{options}{extra}<worldbody>{body}</worldbody>"
            f"<actuator>{actuators}</actuator></mujoco>")


@pytest.fixture
def make_mjcf():
    return mjcf
