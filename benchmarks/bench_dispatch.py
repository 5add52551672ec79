"""The cost of one ``sim.step(1)`` call beyond the step itself, with and without ``physics.dispatch.Direct``.

    python benchmarks/bench_dispatch.py [--calls N]

Per scene (``bench_engine``'s free body, 3-box stack and double pendulum): µs per ``sim.step(1)`` through
``Direct`` (the backend's default) and through the numba dispatcher itself, µs per step of one
``sim.step(N)`` call (the step without the per-call cost), and ``mujoco.mj_step`` in the same run for scale.
Best of five; not a test, nothing is asserted.
"""

from __future__ import annotations

import argparse
import time

import mujoco
from bench_engine import initial_data, model_of, spec_of

import mechgym
from mechgym.physics.step import run

SCENES = ("free body (top)", "3-box stack", "double pendulum")


def best_us(calls: int, run) -> float:
    """Smallest µs per call over five runs of ``run(calls)``."""
    times = []
    for _ in range(5):
        start = time.perf_counter()
        run(calls)
        times.append(time.perf_counter() - start)
    return min(times) / calls * 1e6


def single_steps(sim):
    def run(calls):
        for _ in range(calls):
            sim.step(1)
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000, help="calls per timing (default 5000)")
    calls = parser.parse_args().calls
    print(f"µs per call, {calls} calls")
    print(f"{'scene':<18} {'step(1) Direct':>15} {'step(1) dispatcher':>19} {'step(N)/N':>10} {'mj_step':>8}")
    for name in SCENES:
        sim = mechgym.load(spec_of(name), backend="mechgym", dt=1e-3)
        sim.step(1)
        direct = best_us(calls, single_steps(sim))
        sim._run = run  # the dispatcher itself
        plain = best_us(calls, single_steps(sim))
        batched = best_us(calls, sim.step)
        model = model_of(name)
        data = initial_data(model)

        def mj(count, model=model, data=data):
            for _ in range(count):
                mujoco.mj_step(model, data)

        print(f"{name:<18} {direct:>15.2f} {plain:>19.2f} {batched:>10.2f} {best_us(calls, mj):>8.2f}")


if __name__ == "__main__":
    main()
