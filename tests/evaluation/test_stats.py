"""Wilson intervals against their closed forms, and the dt margin on hand-made grids."""

import math

import pytest
from scipy import special

from mechgym.evaluation.stats import Z_95, dt_margin, wilson


def test_wilson_matches_its_closed_forms():
    # no successes: upper bound z^2 / (n + z^2); all successes: lower bound n / (n + z^2)
    for n in (1, 10, 37):
        low, high = wilson(0, n)
        assert low == 0.0 and high == pytest.approx(Z_95**2 / (n + Z_95**2))
        low, high = wilson(n, n)
        assert high == 1.0 and low == pytest.approx(n / (n + Z_95**2))
    # symmetric about 1/2 at half successes, and the textbook value for 5/10: (0.2366, 0.7634)
    low, high = wilson(5, 10)
    assert low + high == pytest.approx(1.0) and low == pytest.approx(0.23659, abs=1e-5)
    assert wilson(0, 0) == (0.0, 1.0)
    assert Z_95 == pytest.approx(math.sqrt(2) * special.erfinv(0.95), rel=1e-12)


DTS = [0.0005, 0.001, 0.002, 0.004, 0.008]


def test_the_margin_grows_from_the_reference_until_the_first_cell_outside():
    rates = [0.5, 1.0, 1.0, 0.9, 0.1]
    outcomes = ["diverged", None, None, "tunnelled", "tunnelled"]
    m = dt_margin(DTS, rates, outcomes, 0.002, (0.8, 1.0))
    assert (m.low, m.high) == (0.001, 0.004)
    assert (m.outside, m.outside_dt) == ("tunnelled", 0.008)  # the larger-dt side first
    m = dt_margin(DTS, [0.1, 1.0, 1.0, 1.0, 1.0], ["diverged", None, None, None, None], 0.002, (0.8, 1.0))
    assert (m.low, m.high, m.whole_grid_high) == (0.001, 0.008, True)
    assert (m.outside, m.outside_dt) == ("diverged", 0.0005)


def test_a_cell_above_the_reference_interval_is_inside_the_margin():
    m = dt_margin(DTS, [1.0, 1.0, 0.7, 0.2, 1.0], [None, None, "floor", "floor", None], 0.002, (0.4, 0.9))
    assert (m.low, m.high, m.outside, m.outside_dt) == (0.0005, 0.002, "floor", 0.004)


def test_no_margin_when_the_reference_step_is_outside_and_a_whole_grid_when_nothing_is():
    m = dt_margin(DTS, [0.0] * 5, ["floor"] * 5, 0.002, (0.8, 1.0))
    assert m.low is None and m.outside == "floor" and m.outside_dt == 0.002
    m = dt_margin(DTS, [1.0] * 5, [None] * 5, 0.003, (0.8, 1.0))  # nearest step on a log scale: 4 ms
    assert (m.low, m.high, m.outside_dt) == (0.0005, 0.008, None)
