"""Time of impact: exact closed form for translation, conservative bound under rotation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from collision_testing import rot
from scipy.spatial.transform import Rotation

from mechgym.physics.collision import BOX, CAPSULE, CYLINDER, SPHERE
from mechgym.physics.collision.toi import box_gap, toi_box, toi_plane

WALL = np.array([0.5e-3, 0.5, 0.5])  # a 1 mm thick static wall, normal along x
DTS = [0.5e-3, 1e-3, 2e-3, 5e-3, 10e-3, 20e-3, 50e-3]
MOVERS = [(SPHERE, (0.05, 0.0, 0.0), np.eye(3), 0.05), (BOX, (0.025, 0.03, 0.04), rot((1.0, 0.0, 0.0), 0.7), 0.025),
          (CAPSULE, (0.02, 0.1, 0.0), rot((1.0, 0.0, 0.0), math.pi / 2), 0.02),
          (CYLINDER, (0.03, 0.1, 0.0), rot((1.0, 0.0, 0.0), 0.4), 0.03)]


@pytest.mark.parametrize("dt", DTS)
@pytest.mark.parametrize(("kind", "size", "mat", "reach"), MOVERS)
def test_wall_hit_at_20_m_per_s_has_the_exact_fraction(dt, kind, size, mat, reach):
    # reach: the mover's half width along x (support). Started so that it touches at s = 0.3 exactly.
    speed = 20.0
    x0 = -(WALL[0] + reach) - 0.3 * speed * dt
    normal = np.zeros(3)
    mover = (kind, np.array(size, float))
    s = toi_box(*mover, np.array([x0, 0.01, -0.02]), mat, np.array([speed, 0.0, 0.0]), 0.0, 0.0, dt,
                WALL, np.zeros(3), np.eye(3), normal)
    assert s == pytest.approx(0.3, rel=1e-12)
    np.testing.assert_array_equal(normal, [-1.0, 0.0, 0.0])
    # the same wall approached from behind, and one that the mover misses (passes beside it)
    s = toi_box(*mover, np.array([-x0, 0.0, 0.0]), mat, np.array([-speed, 0.0, 0.0]), 0.0, 0.0, dt,
                WALL, np.zeros(3), np.eye(3), normal)
    assert s == pytest.approx(0.3, rel=1e-12) and normal[0] == 1.0
    assert toi_box(*mover, np.array([x0, 0.0, 0.8]), mat, np.array([speed, 0.0, 0.0]), 0.0, 0.0, dt,
                   WALL, np.zeros(3), np.eye(3), normal) == math.inf


def test_plane_time_of_impact_and_no_hit():
    normal = np.zeros(3)
    tilt = rot((0.0, 1.0, 0.0), 0.3)
    n = tilt[:, 2]
    args = (SPHERE, np.array([0.1, 0.0, 0.0]))
    centre = 0.1 * n + 0.25 * n  # 0.25 m above the plane along n
    s = toi_plane(*args, centre, np.eye(3), -5.0 * n, 0.0, 0.0, 0.1, np.zeros(3), tilt, normal)
    assert s == pytest.approx(0.5, rel=1e-12)
    np.testing.assert_allclose(normal, n, atol=0)
    assert toi_plane(*args, centre, np.eye(3), -1.0 * n, 0.0, 0.0, 0.1, np.zeros(3), tilt, normal) == math.inf
    assert toi_plane(*args, centre, np.eye(3), 5.0 * n, 0.0, 0.0, 0.1, np.zeros(3), tilt, normal) == math.inf
    assert toi_plane(*args, 0.05 * n, np.eye(3), 5.0 * n, 0.0, 0.0, 0.1, np.zeros(3), tilt, normal) == 0.0


def _poses(c0, vel, omega, r0, dt, samples):
    """Positions (N, 3) and rotations (N, 3, 3) of the exact motion: c0 + s v dt, exp(s dt [omega]x) r0."""
    mats = Rotation.from_rotvec(np.outer(samples * dt, omega)).as_matrix() @ r0
    return c0 + np.outer(samples * dt, vel), mats


def _overlap_with_centred_box(half, pos, mats, target):
    """Whether box (half, pos[k], mats[k]) overlaps the axis-aligned box ``target`` at the origin (15 axes)."""
    seps = []
    for i in range(3):
        seps.append(np.abs(pos[:, i]) - target[i] - np.abs(mats[:, i, :]) @ half)
        seps.append(np.abs(np.einsum("ki,ki->k", pos, mats[:, :, i])) - half[i] - np.abs(mats[:, :, i]) @ target)
        for j in range(3):
            axis = np.cross(np.eye(3)[i], mats[:, :, j])
            length = np.linalg.norm(axis, axis=1)
            ok = length > 1e-9
            axis[ok] /= length[ok, None]
            sep = (np.abs(np.einsum("ki,ki->k", axis, pos)) - np.abs(axis) @ target
                   - np.abs(np.einsum("ki,kij->kj", axis, mats)) @ half)
            seps.append(np.where(ok, sep, -np.inf))
    return np.max(seps, axis=0) <= 0.0


def test_rotating_box_bound_is_never_later_than_the_true_first_touch():
    """A box geom on a spinning body (its centre at a lever of up to 0.1 m from the COM, or at the COM) drifts
    towards a static 2 cm slab and a static plane; the exact motion is sampled at 4001 instants."""
    rng = np.random.default_rng(11)
    half = np.array([0.05, 0.02, 0.08])
    target = np.array([0.01, 0.3, 0.3])
    corners = np.array(np.meshgrid(*[(-1.0, 1.0)] * 3)).reshape(3, -1).T * half
    dt = 0.02
    hits = 0
    samples = np.linspace(0.0, 1.0, 4001)
    for trial in range(200):
        com = np.array([-0.4, 0.0, 0.0]) + rng.uniform(-0.1, 0.1, 3)
        offset = rng.uniform(-0.06, 0.06, 3) if trial % 2 else np.zeros(3)  # geom centre in the body frame
        vel = np.array([rng.uniform(5.0, 30.0), 0.0, 0.0]) + rng.normal(0.0, 2.0, 3)
        omega = rng.normal(0.0, 40.0, 3)
        r0 = rot(rng.normal(size=3), rng.uniform(0.0, math.pi))
        args = (BOX, half, com + r0 @ offset, r0, vel, np.linalg.norm(omega), np.linalg.norm(offset), dt)
        normal = np.zeros(3)
        bound = toi_box(*args, target, np.zeros(3), np.eye(3), normal)
        # plane x = -0.01 with normal -x: the half-space x > -0.01 is solid
        plane_bound = toi_plane(*args, np.array([-0.01, 0.0, 0.0]), rot((0.0, 1.0, 0.0), -math.pi / 2), normal)
        pos, mats = _poses(com, vel, omega, r0, dt, samples)
        pos = pos + mats @ offset
        touching = _overlap_with_centred_box(half, pos, mats, target)
        first = samples[np.argmax(touching)] if touching.any() else math.inf
        in_plane = (pos[:, None, :] + np.einsum("kij,cj->kci", mats, corners))[:, :, 0].max(axis=1) >= -0.01
        first_plane = samples[np.argmax(in_plane)] if in_plane.any() else math.inf
        assert bound <= first and plane_bound <= first_plane
        hits += first < math.inf
    assert hits > 50


def test_box_gap_is_the_separating_axis_bound_of_the_distance():
    """Two boxes of half size 1: apart by 0.3 along x (the distance), overlapping by 0.2 (-0.2), corner to corner
    along the diagonal from (1, 1, 1) to (2, 2, 2) (distance sqrt(3); every face axis gives 1, the bound), and
    two edges crossing at right angles 0.25 apart (A turned 45 deg about y: top edge along y at z = sqrt(2); B
    turned 45 deg about x: bottom edge along x at z_B - sqrt(2); the edge axis y x x gives the distance)."""
    half = np.ones(3)
    eye = np.eye(3)
    assert box_gap(half, np.zeros(3), eye, half, np.array([2.3, 0.5, -0.4]), eye) == pytest.approx(0.3, rel=1e-12)
    assert box_gap(half, np.zeros(3), eye, half, np.array([0.3, -1.8, 0.2]), eye) == pytest.approx(-0.2, rel=1e-12)
    assert box_gap(half, np.zeros(3), eye, half, np.full(3, 3.0), eye) == pytest.approx(1.0, rel=1e-12)
    centre = np.array([0.0, 0.0, 2.0 * math.sqrt(2.0) + 0.25])
    gap = box_gap(half, np.zeros(3), rot((0.0, 1.0, 0.0), math.pi / 4), half, centre, rot((1.0, 0.0, 0.0), math.pi / 4))
    assert gap == pytest.approx(0.25, rel=1e-12)
