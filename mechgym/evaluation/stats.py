"""Success intervals and the dt margin."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Z_95 = 1.959963984540054  # two-sided 95 % normal quantile


def wilson(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (Wilson 1927); (0, 1) when there are no trials."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1.0 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exact ends: the bounds are 0 and 1 there
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True)
class Margin:
    """The physics steps (s) around the reference over which the success rate does not fall below the
    reference's 95 % interval (inside it or above: doing better than in training is not a loss);
    ``low``/``high`` are None when even the nearest cell to the reference is below it. ``outside`` is the
    most frequent outcome (a failure kind, or "time limit") of the first cell past the margin, on the
    larger-dt side if there is one, and ``outside_dt`` that cell's step."""

    low: float | None
    high: float | None
    whole_grid_low: bool
    whole_grid_high: bool
    outside: str | None
    outside_dt: float | None


def dt_margin(dts: Sequence[float], rates: Sequence[float], outcomes: Sequence[str | None],
              reference_dt: float, interval: tuple[float, float]) -> Margin:
    """The contiguous range of ``dts`` (sorted ascending) around the one nearest ``reference_dt`` whose
    success ``rates`` are not below ``interval``; ``outcomes[i]`` is cell i's most frequent non-success
    outcome."""
    low_bound = interval[0]
    inside = [rate >= low_bound - 1e-12 for rate in rates]
    start = min(range(len(dts)), key=lambda i: abs(math.log(dts[i] / reference_dt)))
    if not inside[start]:
        return Margin(None, None, False, False, outcomes[start], dts[start])
    low = high = start
    while low > 0 and inside[low - 1]:
        low -= 1
    while high < len(dts) - 1 and inside[high + 1]:
        high += 1
    past = high + 1 if high + 1 < len(dts) else (low - 1 if low > 0 else None)
    return Margin(dts[low], dts[high], low == 0, high == len(dts) - 1,
                  None if past is None else outcomes[past], None if past is None else dts[past])
