"""The broad phase alone: N boxes strewn over a floor plane, sort-and-sweep against the uniform grid.

    python benchmarks/bench_broad.py

Boxes of half size 5 cm with random yaw, uniformly over a square floor at a fixed density (one per 0.04 m^2,
so the floor's side grows as sqrt(N)), each its own body, plus the plane. Per N: µs per call of
``sweep_pairs`` and ``grid_pairs`` (the persistent order already sorted, as from step to step), the AABB
overlap tests each makes (the sweep's: the pairs whose intervals overlap on the sweep axis, counted here
with numpy), and the candidate pairs (the same for both). Best of five; not a test, nothing is asserted.
"""

from __future__ import annotations

import math
import time

import numpy as np

from mechgym.physics.collision import BOX, PLANE, geom_aabbs
from mechgym.physics.collision.broad import grid_pairs, grid_scratch, sweep_axis, sweep_pairs


def floor_of_boxes(rng: np.random.Generator, count: int):
    """(lo, hi, filter arrays) of the plane and ``count`` boxes (see the module docstring)."""
    side = 0.2 * math.sqrt(count)
    types = np.array([PLANE] + [BOX] * count, dtype=np.int64)
    sizes = np.array([(0.0, 0.0, 1.0)] + [(0.05, 0.05, 0.05)] * count)
    pos = np.zeros((count + 1, 3))
    pos[1:, :2] = rng.uniform(0.0, side, (count, 2))
    pos[1:, 2] = 0.05
    mats = np.zeros((count + 1, 3, 3))
    mats[0] = np.eye(3)
    yaw = rng.uniform(0.0, math.pi, count)
    mats[1:, 0, 0], mats[1:, 0, 1], mats[1:, 1, 0], mats[1:, 1, 1] = np.cos(yaw), -np.sin(yaw), np.sin(yaw), np.cos(yaw)
    mats[1:, 2, 2] = 1.0
    lo, hi = np.empty((count + 1, 3)), np.empty((count + 1, 3))
    geom_aabbs(types, sizes, pos, mats, 1e-4, lo, hi)
    ones = np.ones(count + 1, dtype=np.int64)
    return lo, hi, (np.arange(count + 1, dtype=np.int64), np.zeros(count + 1, dtype=np.int64), ones, ones, True)


def sweep_tests(lo: np.ndarray, hi: np.ndarray, axis: int) -> int:
    """Overlap tests of the sweep: pairs (i < j in lo order) with lo_j <= hi_i on ``axis``."""
    starts = np.sort(lo[:, axis])
    order = np.argsort(lo[:, axis], kind="stable")
    later = np.searchsorted(starts, hi[order, axis], side="right") - np.arange(starts.size) - 1
    return int(np.maximum(later, 0).sum())


def best_us(repeats: int, calls: int, function, *args) -> float:
    """Smallest µs per call of ``function(*args)`` over ``repeats`` runs of ``calls`` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            function(*args)
        times.append(time.perf_counter() - start)
    return min(times) / calls * 1e6


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"{'N':>6} {'sweep µs':>10} {'sweep tests':>12} {'grid µs':>10} {'grid tests':>11} {'pairs':>7}")
    for count in (100, 400, 1600, 6400):
        lo, hi, filters = floor_of_boxes(rng, count)
        axis = sweep_axis(lo, hi)
        out = np.zeros((8 * count, 2), dtype=np.int64)
        order, grid = np.arange(count + 1, dtype=np.int64), grid_scratch(count + 1)
        pairs = sweep_pairs(lo, hi, axis, order, *filters, out)  # sorts the order once
        assert grid_pairs(lo, hi, axis, order, *filters, grid, out) == pairs
        calls = max(1, 20000 // count)
        sweep = best_us(5, calls, sweep_pairs, lo, hi, axis, order, *filters, out)
        gridded = best_us(5, calls, grid_pairs, lo, hi, axis, order, *filters, grid, out)
        print(f"{count:>6} {sweep:>10.1f} {sweep_tests(lo, hi, axis):>12} {gridded:>10.1f} {grid[0]:>11} "
              f"{pairs:>7}")


if __name__ == "__main__":
    main()
