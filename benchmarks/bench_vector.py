"""Vector env steps per second: the native vector env against SyncVectorEnv over MuJoCo and mujoco.rollout.

    python benchmarks/bench_vector.py [--sizes 1 16 64 256] [--steps 20]

Per environment (its registered physics_dt and decimation) and number of episodes N, env steps per second
(N x vector steps / wall time) of uniform random actions in [-1, 1] (an RL run's first states), episodes
reset as they end:
- ``native``: ``gymnasium.make_vec`` (the native vector env) on the in-house engine, its default threads;
- ``native mujoco``: the same on the MuJoCo backend;
- ``sync mujoco``: Gymnasium's ``SyncVectorEnv`` over the MuJoCo backend (what a user gets without us);
- ``rollout``: MuJoCo's physics alone, ``mujoco.rollout`` with as many threads as the native env uses,
  ``decimation`` steps of the N episodes' start states per call with random controls in each actuator's
  range: the bound for any env over MuJoCo (no observation, reward, event or check).
Best of three; not a test, nothing is asserted.
"""

from __future__ import annotations

import argparse
import time

import gymnasium
import mujoco
import numpy as np
from mujoco import rollout

import mechgym

ENVS = tuple(mechgym.ENVIRONMENTS)
VARIANTS = ("native", "native mujoco", "sync mujoco", "rollout")


def best_of(repeats: int, run) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def env_rate(env_id: str, n: int, steps: int, backend: str, mode: str) -> tuple[float, int]:
    """(env steps per second, physics threads) of ``steps`` random-action steps of ``n`` episodes."""
    vector = gymnasium.make_vec(env_id, num_envs=n, vectorization_mode=mode, backend=backend)
    vector.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1.0, 1.0, size=(steps, *vector.action_space.shape))
    vector.step(actions[0])  # warm-up: compile or load the numba cache

    def run():
        for action in actions:
            vector.step(action)

    rate = n * steps / best_of(3, run)
    threads = getattr(vector.unwrapped, "threads", 1)
    vector.close()
    return rate, threads


def rollout_rate(env_id: str, n: int, steps: int, threads: int) -> float:
    """Env steps per second of MuJoCo's physics alone (module docstring)."""
    env = gymnasium.make(env_id, backend="mujoco").unwrapped
    model, spec = env.sim.model, mujoco.mjtState.mjSTATE_FULLPHYSICS
    start = np.empty((n, mujoco.mj_stateSize(model, spec)))
    for i in range(n):
        env.reset(seed=i)
        mujoco.mj_getState(model, env.sim.data, start[i], spec)
    low, high = model.actuator_ctrlrange.T
    rng = np.random.default_rng(0)
    controls = rng.uniform(low, high, size=(steps, n, env.decimation, model.nu))
    datas = [mujoco.MjData(model) for _ in range(threads)]
    out = np.empty((n, env.decimation, start.shape[1]))
    with rollout.Rollout(nthread=threads) as pool:
        def run():
            state = start.copy()
            for control in controls:
                pool.rollout(model, datas, state, control, state=out)
                state[:] = out[:, -1]

        run()  # warm-up
        return n * steps / best_of(3, run)


def measure(sizes: tuple[int, ...], steps: int):
    """Yield one row per (env, N): {"env", "n", "threads", variant: env steps per second, ...}."""
    for env_id in ENVS:
        for n in sizes:
            native, threads = env_rate(env_id, n, steps, "mechgym", "vector_entry_point")
            row = {"env": env_id, "n": n, "threads": threads, "native": native,
                   "native mujoco": env_rate(env_id, n, steps, "mujoco", "vector_entry_point")[0],
                   "sync mujoco": env_rate(env_id, n, steps, "mujoco", "sync")[0],
                   "rollout": rollout_rate(env_id, n, steps, threads)}
            yield row


def print_rows(rows) -> None:
    header = ("environment", "N", *VARIANTS, "native/sync", "native/rollout")
    print("env steps per second (random actions)")
    print("{:24s} {:>4s} {:>9s} {:>14s} {:>12s} {:>9s} {:>12s} {:>15s}".format(*header))
    for row in rows:
        print(f"{row['env']:24s} {row['n']:4d} " + " ".join(f"{row[v]:{len(v) if len(v) > 9 else 9},.0f}"
                                                          for v in VARIANTS)
              + f" {row['native'] / row['sync mujoco']:11.2f}x {row['native'] / row['rollout']:14.3f}x",
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 16, 64, 256], help="numbers of episodes")
    parser.add_argument("--steps", type=int, default=20, help="vector steps per timing")
    args = parser.parse_args()
    print_rows(measure(tuple(args.sizes), args.steps))


if __name__ == "__main__":
    main()
