"""N boxes dropped into a bin: the cost of a physics step per body as the pile grows, both backends.

    python benchmarks/bench_bin.py [--sizes 8 64 256] [--seconds 0.5] [--budget 120] [--apart]

The scene (``bin_scene``): a floor, four walls, and N 4 cm cubes of 50 g in about four layers of a square grid
(6 cm apart, each turned a little about a random axis, seeded) that fall into a bin just wide enough for one
layer. Both backends step it at dt = 2 ms for ``--seconds`` of simulated time: the boxes fall, strike the
floor and each other, and settle into a pile. Per N: µs per step and per body on each backend and their
ratio (mujoco's time over mechgym's, higher is better), the contacts at the end, and how the engine's run
ended. The engine's run stops after ``--budget`` s of wall time (its figure is then over the steps it made);
a ``SimulationError`` is reported, not raised. ``--apart``: the N cubes rest on a floor 10 cm apart instead
(``apart_scene``), each an island of its four corners: what the engine's cost per body is without a pile to solve.
Not a test, nothing is asserted.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import mechgym
from mechgym.errors import SimulationError

HALF = 0.02  # m, half the cube's side
SPACING = 0.06  # m between cube centres in a layer
DT = 0.002  # s
BUDGET = 120.0  # s of wall time for one engine run


def bin_scene(n: int, seed: int = 0) -> str:
    """MJCF of a bin (floor and four walls) with ``n`` cubes above it in layers of k x k, k = ceil(sqrt(n/4))."""
    k = math.ceil(math.sqrt(n / 4))
    inner = k * SPACING / 2 + 0.005  # m, half the bin's inner width
    rng = np.random.default_rng(seed)
    walls = "".join(
        f'<geom type="box" pos="{sx * (inner + 0.01):g} {sy * (inner + 0.01):g} 0.15" '
        f'size="{0.01 if sx else inner + 0.02:g} {0.01 if sy else inner + 0.02:g} 0.15"/>'
        for sx, sy in ((1, 0), (-1, 0), (0, 1), (0, -1)))
    boxes = []
    for i in range(n):
        layer, cell = divmod(i, k * k)
        x = (cell % k - (k - 1) / 2) * SPACING
        y = (cell // k - (k - 1) / 2) * SPACING
        z = 0.1 + layer * SPACING
        axis = rng.normal(size=3)
        angle = rng.uniform(0.0, 0.3)
        boxes.append(f'<body name="box{i}" pos="{x:g} {y:g} {z:g}" axisangle="{" ".join(f"{a:.6f}" for a in axis)} '
                     f'{angle:.6f}"><freejoint/><geom type="box" size="{HALF} {HALF} {HALF}" mass="0.05"/></body>')
    return (f'<mujoco><compiler angle="radian"/><option timestep="{DT}"/><worldbody>'
            f'<geom name="floor" type="plane" size="1 1 0.1"/>{walls}{"".join(boxes)}</worldbody></mujoco>')


def apart_scene(n: int) -> str:
    """MJCF of a floor with ``n`` cubes resting on it, level, in a square grid 10 cm apart."""
    k = math.ceil(math.sqrt(n))
    boxes = "".join(f'<body name="box{i}" pos="{0.1 * (i % k):g} {0.1 * (i // k):g} {HALF:g}"><freejoint/>'
                    f'<geom type="box" size="{HALF} {HALF} {HALF}" mass="0.05"/></body>' for i in range(n))
    return (f'<mujoco><option timestep="{DT}"/><worldbody><geom name="floor" type="plane" size="5 5 0.1"/>{boxes}'
            f'</worldbody></mujoco>')


def run(n: int, backend: str, seconds: float, budget: float, scene=bin_scene) -> dict[str, object]:
    """Step ``scene(n)`` (the bin of ``n`` cubes) on ``backend``: µs per step (the first step, which loads the compiled
    engine, untimed), steps made, contacts at the end, outcome."""
    sim = mechgym.load(scene(n), backend=backend, dt=DT)
    steps, outcome = round(seconds / DT), "ran"
    start = time.perf_counter()
    try:
        sim.step(1)
        start = time.perf_counter()
        while sim.step_count < steps:
            sim.step(min(10, steps - sim.step_count))
            if time.perf_counter() - start > budget:
                outcome = f"stopped at t = {sim.time:.3f} s (budget)"
                break
    except SimulationError as error:
        outcome = f"failed at t = {sim.time:.3f} s: {str(error).split(': ', 1)[-1][:80]}"
    elapsed = time.perf_counter() - start
    timed = max(sim.step_count - 1, 1)
    return {"us/step": 1e6 * elapsed / timed, "steps": sim.step_count, "contacts": len(sim.contacts()),
            "outcome": outcome}


def measure(sizes, seconds: float, budget: float = BUDGET, scene=bin_scene):
    """Yield one row per N: both backends' figures."""
    for n in sizes:
        row = {"boxes": n}
        for backend in ("mechgym", "mujoco"):
            row[backend] = run(n, backend, seconds, budget, scene)
        yield row


def print_rows(rows, seconds: float, title: str = "N boxes dropped into a bin") -> None:
    print(f"{title}, dt = {DT * 1e3:g} ms, {seconds:g} s; µs per step (per body); ratio: "
          "mujoco's time over mechgym's")
    print(f"{'N':>4s} {'mechgym':>16s} {'mujoco':>14s} {'ratio':>7s} {'contacts':>13s}  mechgym's run")
    for row in rows:
        n, mine, theirs = row["boxes"], row["mechgym"], row["mujoco"]
        print(f"{n:4d} {mine['us/step']:9.0f} ({mine['us/step'] / n:5.1f}) {theirs['us/step']:7.0f} "
              f"({theirs['us/step'] / n:4.1f}) {theirs['us/step'] / mine['us/step']:6.3f}x "
              f"{mine['contacts']:6d} {theirs['contacts']:6d}  {mine['outcome']}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 64, 256], help="numbers of boxes")
    parser.add_argument("--seconds", type=float, default=0.5, help="simulated time per run, s")
    parser.add_argument("--budget", type=float, default=BUDGET, help="wall-clock limit of an engine run, s")
    parser.add_argument("--apart", action="store_true", help="cubes resting apart on a floor instead of the bin")
    args = parser.parse_args()
    scene, title = (apart_scene, "N boxes resting apart") if args.apart else (bin_scene, "N boxes dropped into a bin")
    print_rows(measure(args.sizes, args.seconds, args.budget, scene), args.seconds, title)


if __name__ == "__main__":
    main()
