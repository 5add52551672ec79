"""Environment steps per second on both backends, and the start-up of a fresh process, in the same run.

    python benchmarks/bench_envs.py [--steps N]

Per environment, at its registered settings (physics_dt, decimation): control steps per second of one env
driven by its hand-written controller (``scripted_policy``: the states a task actually visits, pinches and
impacts included), episodes reset with seeds 0, 1, ... as they end; the same seeds on both backends. Then the
start-up: seconds from a fresh ``python`` to the first step (``import mechgym``, ``gymnasium.make``, ``reset``,
one ``step``), with numba's cache warm (the engine compiled by the steps above). Best of three. And the cold
compile: the same for the three environments in one fresh process on the in-house engine, with numba's cache
pointed at an empty folder (what a first run on a machine spends). Not a test, nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import gymnasium

import mechgym  # noqa: F401  (registers the environments)

ENVS = ("mechgym/CubeDrop-v0", "mechgym/Gripper-v0", "mechgym/SliderCrank-v0")
BACKENDS = ("mechgym", "mujoco")
START_UP = ("import time; start = time.perf_counter(); import gymnasium, numpy, mechgym; "
            "env = gymnasium.make({env_id!r}, backend={backend!r}); env.reset(seed=0); "
            "env.step(numpy.zeros(env.action_space.shape)); print(time.perf_counter() - start)")
COLD = ("import time; start = time.perf_counter(); import gymnasium, numpy, mechgym\n"
        "for env_id in {envs!r}:\n"
        "    env = gymnasium.make(env_id, backend='mechgym'); env.reset(seed=0)\n"
        "    env.step(numpy.zeros(env.action_space.shape))\n"
        "print(time.perf_counter() - start)")


def steps_per_second(env_id: str, backend: str, steps: int) -> float:
    """Control steps per second of ``steps`` steps of the scripted controller (after one warm-up step)."""
    env = gymnasium.make(env_id, backend=backend)
    policy = env.unwrapped.scripted_policy()
    seed = 0
    observation, _ = env.reset(seed=seed)
    observation, *_ = env.step(policy(observation))
    start = time.perf_counter()
    for _ in range(steps):
        observation, _, terminated, truncated, _ = env.step(policy(observation))
        if terminated or truncated:
            seed += 1
            observation, _ = env.reset(seed=seed)
    elapsed = time.perf_counter() - start
    env.close()
    return steps / elapsed


def start_up(env_id: str, backend: str) -> float:
    """Seconds from a fresh interpreter to the first step (best of three)."""
    code = START_UP.format(env_id=env_id, backend=backend)
    return min(float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                    check=True).stdout) for _ in range(3))


def cold_start(envs=ENVS, prelude: str = "", epilogue: str = "") -> list[str]:
    """Run the first step of each environment in ``envs`` on the in-house engine (``COLD``) in a fresh interpreter
    with numba's cache in an empty folder, the code ``prelude`` before it and ``epilogue`` after; returns the lines
    it printed, the first after the prelude's being COLD's seconds."""
    with tempfile.TemporaryDirectory() as cache:
        run = subprocess.run([sys.executable, "-c", f"{prelude}\n{COLD.format(envs=tuple(envs))}\n{epilogue}"],
                             capture_output=True, text=True, env={**os.environ, "NUMBA_CACHE_DIR": cache})
    if run.returncode != 0:
        raise RuntimeError(f"the cold start failed:\n{run.stderr[-3000:]}")
    return run.stdout.splitlines()


def cold_compile() -> float:
    """Seconds from a fresh interpreter to the first step of every environment on the in-house engine with
    numba's cache in an empty folder: the engine's first compile (once)."""
    return float(cold_start()[-1])


def print_cold_compile(seconds: float) -> None:
    print(f"cold compile, three environments on the in-house engine: {seconds:.0f} s")


def measure(steps: int):
    """Yield one row per environment: control steps per second and start-up seconds on each backend."""
    for env_id in ENVS:
        row = {"env": env_id}
        for backend in BACKENDS:
            row[f"steps/s {backend}"] = max(steps_per_second(env_id, backend, steps) for _ in range(3))
        for backend in BACKENDS:
            row[f"start-up {backend}"] = start_up(env_id, backend)
        yield row


def print_rows(rows, steps: int) -> None:
    print(f"control steps per second, scripted controller, {steps} steps; start-up to the first step (s)")
    header = ("environment", "mechgym", "mujoco", "ratio", "start mechgym", "start mujoco")
    print("{:26s} {:>9s} {:>9s} {:>7s}   {:>13s} {:>12s}".format(*header))
    for row in rows:
        rates = [row[f"steps/s {b}"] for b in BACKENDS]
        print(f"{row['env']:26s} {rates[0]:9.0f} {rates[1]:9.0f} {rates[0] / rates[1]:6.2f}x   "
              f"{row['start-up mechgym']:13.2f} {row['start-up mujoco']:12.2f}", flush=True)
    print("ratio: mechgym's steps per second over mujoco's")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000, help="control steps per environment and backend")
    steps = parser.parse_args().steps
    print_rows(measure(steps), steps)
    print_cold_compile(cold_compile())


if __name__ == "__main__":
    main()
