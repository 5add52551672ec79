"""Recording an episode to a GIF (Pillow, through imageio) or an MP4 (imageio's ffmpeg plugin)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import imageio.v2 as imageio
import imageio.v3 as iio
import numpy as np

from .rollout import Episode, run_episode

FORMATS = (".gif", ".mp4")


def record_episode(env: gym.Env, policy: Callable[[np.ndarray], np.ndarray], seed: int, fps: float = 30.0,
                   slow_motion: float = 1.0) -> tuple[list[np.ndarray], Episode]:
    """Frames of one episode (``env`` made with ``render_mode="rgb_array"``), one per 1 / (fps x slow_motion)
    simulated seconds (and the first and the last state), with the episode."""
    if not (fps > 0 and slow_motion > 0):
        raise ValueError(f"fps and slow_motion must be positive, got {fps} and {slow_motion}")
    frames, period = [], 1.0 / (fps * slow_motion)

    def capture(info: dict, done: bool) -> None:
        if done or math.floor(info["time"] / period + 1e-9) >= len(frames):
            frames.append(env.render())

    return frames, run_episode(env, policy, seed, on_state=capture)


def encode_gif(frames: list[np.ndarray], fps: float) -> bytes:
    """A looping GIF playing at ``fps``, as bytes."""
    return iio.imwrite("<bytes>", np.stack(frames), extension=".gif", duration=1000.0 / fps, loop=0)


def write_video(frames: list[np.ndarray], path: str | Path, fps: float) -> None:
    """Write frames as a looping GIF or an MP4 (the path's suffix says which) playing at ``fps``."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"the output must end in one of {FORMATS}, got {str(path)!r}")
    if suffix == ".gif":
        Path(path).write_bytes(encode_gif(frames, fps))
        return
    try:
        import imageio_ffmpeg  # noqa: F401  (imageio's MP4 writer)
    except ImportError as missing:
        raise ValueError("writing MP4 needs imageio's ffmpeg plugin: pip install imageio-ffmpeg "
                         "(or write a .gif)") from missing
    imageio.mimwrite(path, frames, fps=fps, macro_block_size=1)
