"""The geometry under confinements: hull samples (mechgym.physics.hull) and surface distances
(mechgym.physics.surfaces), against closed forms and brute force on random draws."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from mechgym.physics.hull import geom_curvature, geom_samples
from mechgym.physics.surfaces import BOX, PLANE, SPHERE, TUBE, free_side_curvature, surface_gaps

GEOM = mujoco.mjtGeom


def _support(kind: int, size: np.ndarray, direction: np.ndarray) -> float:
    """max over the geom of direction . x (closed forms; geom frame)."""
    if kind == GEOM.mjGEOM_SPHERE:
        return size[0]
    if kind == GEOM.mjGEOM_CAPSULE:
        return size[0] + size[1] * abs(direction[2])
    if kind == GEOM.mjGEOM_CYLINDER:
        return size[0] * np.hypot(direction[0], direction[1]) + size[1] * abs(direction[2])
    return float(np.abs(direction) @ size[:3])  # box


@pytest.mark.parametrize("kind", [GEOM.mjGEOM_SPHERE, GEOM.mjGEOM_CAPSULE, GEOM.mjGEOM_CYLINDER, GEOM.mjGEOM_BOX])
def test_samples_reach_the_geom_within_the_bulge(kind):
    """On random sizes and spacings, in 2000 random directions the geom reaches at most curvature s^2 / 2
    beyond its samples (the rule the spacing check relies on), and no sample lies off the geom's surface."""
    rng = np.random.default_rng(int(kind))
    for _ in range(20):
        size = np.array([rng.uniform(0.005, 0.05), rng.uniform(0.005, 0.05), rng.uniform(0.005, 0.05)])
        spacing = rng.uniform(0.05, 1.0) * size[0]
        samples = geom_samples(int(kind), size, spacing)
        bulge = geom_curvature(int(kind), size) * spacing ** 2 / 2
        directions = rng.normal(size=(2000, 3))
        directions /= np.linalg.norm(directions, axis=1)[:, None]
        reach = (samples @ directions.T).max(axis=0)
        exact = np.array([_support(int(kind), size, d) for d in directions])
        assert np.all(reach <= exact + 1e-15)
        assert np.all(exact - reach <= bulge + 1e-15)
        for d, point in zip(directions[:50], samples[:50], strict=False):
            assert d @ point <= _support(int(kind), size, d) + 1e-15


def test_a_sphere_is_covered_within_its_spacing():
    """Every point of the sphere lies within a chord ``spacing`` of a sample (5,000 random points)."""
    rng = np.random.default_rng(1)
    radius, spacing = 0.03, 0.004
    samples = geom_samples(int(GEOM.mjGEOM_SPHERE), np.array([radius, 0, 0]), spacing)
    points = rng.normal(size=(5_000, 3))
    points *= radius / np.linalg.norm(points, axis=1)[:, None]
    nearest = np.min(np.linalg.norm(points[:, None, :] - samples[None, :, :], axis=2), axis=1)
    assert nearest.max() <= spacing
    assert nearest.max() > spacing / 4  # the sampling is not needlessly dense


SURFACES = [(PLANE, np.zeros(3)), (TUBE, np.array([0.1, 0.2, 0.0])), (BOX, np.array([0.1, 0.15, 0.2])),
            (SPHERE, np.array([0.15, 0.0, 0.0]))]


def _boundary(kind: int, size: np.ndarray, rng) -> np.ndarray:
    """100,000 random points of the surface's boundary (the plane: of its square |x|, |y| <= 0.35 m, which holds
    the nearest points of the points drawn)."""
    n = 100_000
    if kind == PLANE:
        return np.column_stack((rng.uniform(-0.35, 0.35, n), rng.uniform(-0.35, 0.35, n), np.zeros(n)))
    if kind == SPHERE:
        points = rng.normal(size=(n, 3))
        return size[0] * points / np.linalg.norm(points, axis=1)[:, None]
    if kind == TUBE:
        angle, z = rng.uniform(0, 2 * np.pi, n), rng.uniform(-size[1], size[1], n)
        wall = np.column_stack((size[0] * np.cos(angle), size[0] * np.sin(angle), z))
        radius = size[0] * np.sqrt(rng.uniform(0, 1, n))
        caps = np.column_stack((radius * np.cos(angle), radius * np.sin(angle), size[1] * rng.choice([-1, 1], n)))
        return np.concatenate((wall, caps))
    points = rng.uniform(-1, 1, size=(n, 3)) * size
    axis = rng.integers(0, 3, n)
    points[np.arange(n), axis] = size[axis] * rng.choice([-1, 1], n)
    return points


@pytest.mark.parametrize(("kind", "size"), SURFACES)
def test_surface_distance_many_points_at_once(kind, size):
    """For random points of the free side, the distance ``surface_gaps`` gives is the distance to the nearest
    boundary point found by brute force (to the sampling's resolution), and moving the point along the normal
    by that distance lands it on the boundary."""
    rng = np.random.default_rng(kind)
    boundary = _boundary(kind, size, rng)
    scale = 0.3 if kind == PLANE else size.max()
    points = rng.uniform(-scale, scale, size=(300, 3))
    out = np.zeros((points.shape[0], 4))
    surface_gaps(kind, size, points, out)
    inside = out[:, 0] > 0
    assert 50 < inside.sum() < 300
    nearest = np.array([np.linalg.norm(boundary - p, axis=1).min() for p in points[inside]])
    assert np.allclose(out[inside, 0], nearest, atol=3e-3)
    assert np.all(out[inside, 0] <= nearest + 1e-12)  # never farther than a boundary point actually is
    landed = points[inside] - out[inside, :1] * out[inside, 1:]
    check = np.zeros((landed.shape[0], 4))
    surface_gaps(kind, size, landed, check)
    assert np.allclose(check[:, 0], 0.0, atol=1e-12)


def test_free_side_curvature():
    assert free_side_curvature(SPHERE, np.array([0.25, 0, 0])) == 4.0
    assert [free_side_curvature(k, np.ones(3)) for k in (PLANE, TUBE, BOX)] == [0.0, 0.0, 0.0]
