"""A body's hull as sample points, for confinements that hold the hull (:mod:`mechgym.physics.confinement`).

The samples of a geom are points of its surface whose convex hull holds the geom to within a bulge:

  sphere    points of a cube's faces on an n x n grid, pushed out onto the sphere (the radial map of the cube's
            surface onto the sphere shortens distances, so every point of the sphere lies within a chord of
            sqrt(2) R / n of a sample); n = ceil(sqrt(2) R / spacing)
  capsule   the same for the sphere at each end, kept on its outer half and a band of one spacing beyond
  cylinder  its two rim circles, at angles close enough that every rim point lies within a chord of
            ``spacing`` of a sample (a cylinder is the convex hull of its rims)
  box       its eight corners (a box is their convex hull: exact)

Bulge: if every point of a curved surface of radius r lies within a chord s of a sample, then in every
direction the surface reaches at most s^2 / (2 r) farther than the samples do (the support point's nearest
sample lies on the same circle of radius r, at an angle whose versine is s^2 / (2 r^2)). Held inside a convex
free side with a margin of at least that bulge, the samples hold the whole geom inside. ``geom_curvature`` is
a sampled geom's 1/r (0 for a box).

Other geom kinds (ellipsoid, mesh, height field, plane) cannot be sampled here: ``SAMPLED`` lists the kinds.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

_GEOM = mujoco.mjtGeom
SAMPLED = {int(_GEOM.mjGEOM_SPHERE): "sphere", int(_GEOM.mjGEOM_CAPSULE): "capsule",
           int(_GEOM.mjGEOM_CYLINDER): "cylinder", int(_GEOM.mjGEOM_BOX): "box"}


def _cells(radius: float, spacing: float) -> int:
    """Cells per edge of the cube whose grid samples a sphere of ``radius`` at ``spacing``."""
    return max(1, math.ceil(math.sqrt(2.0) * radius / spacing))


def _rim_points(radius: float, spacing: float) -> int:
    """Points on a circle of ``radius``, every point of it within a chord ``spacing`` of one: m points leave
    at most 2 R sin(pi / (2 m))."""
    return max(3, math.ceil(math.pi / (2.0 * math.asin(min(1.0, spacing / (2.0 * radius))))))


def _cube_sphere(radius: float, spacing: float) -> np.ndarray:
    """Points of the sphere of ``radius`` about the origin, every point of it within a chord ``spacing`` of
    one (module docstring)."""
    n = _cells(radius, spacing)
    grid = np.linspace(-1.0, 1.0, n + 1)
    u, v = (a.ravel() for a in np.meshgrid(grid, grid))
    ones = np.ones_like(u)
    faces = []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            face = np.empty((u.size, 3))
            face[:, axis] = sign * ones
            face[:, (axis + 1) % 3] = u
            face[:, (axis + 2) % 3] = v
            faces.append(face)
    cube = np.unique(np.concatenate(faces), axis=0)  # the grid points on the cube's edges appear on two faces
    return radius * cube / np.linalg.norm(cube, axis=1)[:, None]


def _rim(radius: float, spacing: float, z: float) -> np.ndarray:
    """Points of the circle of ``radius`` at height ``z``, every point of it within a chord ``spacing`` of
    one."""
    m = _rim_points(radius, spacing)
    angle = 2.0 * math.pi * np.arange(m) / m
    return np.column_stack((radius * np.cos(angle), radius * np.sin(angle), np.full(m, z)))


def geom_samples(kind: int, size: np.ndarray, spacing: float) -> np.ndarray:
    """(N, 3) sample points of a geom of MuJoCo type ``kind`` and MJCF ``size``, in the geom's frame (m)."""
    if kind == _GEOM.mjGEOM_SPHERE:
        return _cube_sphere(size[0], spacing)
    if kind == _GEOM.mjGEOM_CAPSULE:
        radius, half = size[0], size[1]
        ball = _cube_sphere(radius, spacing)
        top, bottom = ball[ball[:, 2] >= -spacing], ball[ball[:, 2] <= spacing]
        return np.concatenate((top + (0.0, 0.0, half), bottom - (0.0, 0.0, half)))
    if kind == _GEOM.mjGEOM_CYLINDER:
        return np.concatenate((_rim(size[0], spacing, size[1]), _rim(size[0], spacing, -size[1])))
    if kind == _GEOM.mjGEOM_BOX:
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
        return signs * size[:3]
    raise ValueError(f"a geom of type {kind} cannot be sampled; sampled kinds are {sorted(SAMPLED.values())}")


def sample_count(kind: int, size: np.ndarray, spacing: float) -> int:
    """How many points ``geom_samples`` gives (for a capsule: at most), without making them: a cube's grid of n
    cells per edge has 6 n^2 + 2 points."""
    if kind == _GEOM.mjGEOM_BOX:
        return 8
    if kind == _GEOM.mjGEOM_CYLINDER:
        return 2 * _rim_points(size[0], spacing)
    spheres = 2 if kind == _GEOM.mjGEOM_CAPSULE else 1
    return spheres * (6 * _cells(size[0], spacing) ** 2 + 2)


def geom_curvature(kind: int, size: np.ndarray) -> float:
    """The largest curvature (1/m) of a sampled geom's surface: 1/radius, 0 for a box."""
    return 0.0 if kind == _GEOM.mjGEOM_BOX else 1.0 / float(size[0])
