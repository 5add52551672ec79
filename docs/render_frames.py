"""Render the README's frame of each environment: its scripted controller at a telling moment, seed 0.

    python docs/render_frames.py            # writes docs/<CubeDrop-v0|Gripper-v0|SliderCrank-v0>.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import gymnasium as gym
import imageio.v2 as imageio

import mechgym  # noqa: F401  (registers the environments)

# simulated time (s) of each frame: the cube on its way down, the card lifted, the crank mid-stroke
MOMENTS = {"mechgym/CubeDrop-v0": 0.6, "mechgym/Gripper-v0": 2.4, "mechgym/SliderCrank-v0": 0.3}


def render_frame(env_id: str, moment: float, backend: str, size: tuple[int, int]):
    env = gym.make(env_id, backend=backend, render_mode="rgb_array", render_size=size)
    policy = env.unwrapped.scripted_policy()
    observation, _ = env.reset(seed=0)
    while env.unwrapped.time < moment - 1e-9:
        observation, _, terminated, truncated, _ = env.step(policy(observation))
        if terminated or truncated:
            break
    frame = env.render()
    env.close()
    return frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="mechgym")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args()
    for env_id, moment in MOMENTS.items():
        path = args.out / f"{env_id.split('/')[1]}.png"
        imageio.imwrite(path, render_frame(env_id, moment, args.backend, (480, 360)))
        print(f"{path}: {env_id} at t = {moment} s on {args.backend}")


if __name__ == "__main__":
    main()
