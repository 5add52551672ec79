"""Coulomb friction with static and kinetic coefficients, decided per point."""

from __future__ import annotations

import math

import numpy as np

from .driver import ContactScene
from .scenes import GRAVITY, box_on_floor, downhill, on_slope, run

SLOPE = 20.0  # deg; tan 20 deg = 0.364


def test_block_on_slope_held_by_static_friction():
    """mu_s = 0.5 > tan 20 deg > mu_k = 0.3: the block does not creep (< 1e-9 m in 10 s; MuJoCo ~1e-2 m)."""
    scene = ContactScene.build(on_slope('type="box" size="0.05 0.05 0.05"', 0.05, SLOPE, 0.3, 0.5))
    start = scene.state.com[0, 0].copy()
    com, _, _, active = run(scene, 1e-3, 10.0)
    assert np.abs(com[:, 0] - start).max() < 1e-9
    assert np.all(active == 4)


def test_sliding_block_stopping_distance_is_second_order():
    """A block sliding at 2 m/s with mu_k = 0.3 stops after v0^2 / (2 mu_k g); halving dt divides the error by
    about 4 (opening-kick friction from the previous reaction)."""
    exact = 2.0 ** 2 / (2.0 * 0.3 * GRAVITY)
    errors = []
    for h in (4e-3, 2e-3, 1e-3):
        scene = ContactScene.build(box_on_floor((0.05, 0.05, 0.05), (0.0, 0.0, 0.05), friction=0.3))
        scene.state.vel[0, 0, 0] = 2.0
        com, vel, momentum, _ = run(scene, h, 1.0)
        assert np.abs(vel[-1]).max() < 1e-9 and np.abs(momentum).max() < 1e-12
        errors.append(abs(com[-1, 0, 0] - exact))
    assert errors[0] < 3e-5
    for coarse, fine in zip(errors, errors[1:], strict=False):
        assert 3.0 < coarse / fine < 5.0, errors


def test_sphere_rolls_down_slope_at_five_sevenths_g_sin():
    """A solid sphere rolling without slipping (mu = 1) covers (5/7) g sin(theta) t^2 / 2 along the slope."""
    scene = ContactScene.build(on_slope('type="sphere" size="0.1"', 0.1, SLOPE, 1.0, 1.0))
    start = scene.state.com[0, 0].copy()
    com, _, _, active = run(scene, 1e-3, 1.0)
    distance = (com[-1, 0] - start) @ downhill(SLOPE)
    assert abs(distance / (0.5 * 5.0 / 7.0 * GRAVITY * math.sin(math.radians(SLOPE))) - 1.0) < 1e-12
    assert np.all(active == 1)
