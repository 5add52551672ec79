"""The fixed surfaces a confinement holds a body against (:mod:`mechgym.physics.confinement`), each the free
side of a static MJCF geom, in the geom's own frame (origin at its centre, axes its own):

  kind     MJCF geom   free side                           faces                 size (MJCF)
  PLANE    plane       z >= 0                              z = 0                 (unused)
  TUBE     cylinder    the inside of the closed cylinder   wall r = R, caps      (R, H half-length)
                       x^2 + y^2 <= R^2, |z| <= H          z = +-H
  BOX      box         the inside |x_i| <= a_i             the nearest face on   (a_0, a_1, a_2)
                                                           each axis
  SPHERE   sphere      the inside |x| <= R                 the sphere            (R)

A point is held against each face separately (``face_gap``): its signed distance from the face, positive on
the free side, and the face's unit normal there, pointing into the free side. The faces of a kind are
orthogonal where they meet (a box's corner, a tube's rim), so holding a point against each face in turn holds
it against all. Every free side here is convex, which a confinement's hull relies on (``confinement``:
the convex hull of points held inside is inside).

``free_side_curvature`` gives each kind's smallest principal curvature of the surface, seen from the free side
(1/m; positive where the free side is convex, negative where it is concave): how much farther than its tangent
plane the surface lies at a distance s from a point, about curvature s^2 / 2.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from .jit import kernel

PLANE, TUBE, BOX, SPHERE = 0, 1, 2, 3
KIND_NAMES = {PLANE: "plane", TUBE: "tube", BOX: "box", SPHERE: "sphere"}
# The geoms that are surfaces, by MuJoCo geom type; any other type cannot be a surface.
SURFACE_KINDS = {
    int(mujoco.mjtGeom.mjGEOM_PLANE): PLANE,
    int(mujoco.mjtGeom.mjGEOM_CYLINDER): TUBE,
    int(mujoco.mjtGeom.mjGEOM_BOX): BOX,
    int(mujoco.mjtGeom.mjGEOM_SPHERE): SPHERE,
}
FACES = np.array([1, 2, 3, 1], dtype=np.int64)  # faces per kind


@kernel
def face_gap(kind, size, x, y, z, face):
    """Signed distance (m, positive on the free side) of the point (x, y, z) (m, in the surface's frame) from
    face ``face`` of a surface of ``kind`` and ``size`` (3,), and the face's unit normal into the free side
    there (surface frame); returns (distance, nx, ny, nz). On a face's axis of symmetry (a sphere's or a tube's
    centre line) the normal is any unit vector normal to the face."""
    if kind == PLANE:
        return z, 0.0, 0.0, 1.0
    if kind == SPHERE:
        rho = math.sqrt(x * x + y * y + z * z)
        if rho == 0.0:
            return size[0], 0.0, 0.0, 1.0
        return size[0] - rho, -x / rho, -y / rho, -z / rho
    if kind == TUBE:
        if face == 1:
            return size[1] - abs(z), 0.0, 0.0, -1.0 if z >= 0.0 else 1.0
        rho = math.sqrt(x * x + y * y)
        if rho == 0.0:
            return size[0], 1.0, 0.0, 0.0
        return size[0] - rho, -x / rho, -y / rho, 0.0
    # BOX: the face of axis ``face`` on the point's side
    value = x if face == 0 else y if face == 1 else z
    sign = -1.0 if value >= 0.0 else 1.0
    return (size[face] - abs(value), sign if face == 0 else 0.0, sign if face == 1 else 0.0,
            sign if face == 2 else 0.0)


@kernel
def surface_gaps(kind, size, points, out):
    """``face_gap`` for many points at once: for each point (P, 3) of the surface's frame, its smallest
    distance over the faces into out[p, 0] and that face's normal into out[p, 1:4] (``out`` (P, 4))."""
    for p in range(points.shape[0]):
        out[p, 0] = math.inf
        for face in range(FACES[kind]):
            d, nx, ny, nz = face_gap(kind, size, points[p, 0], points[p, 1], points[p, 2], face)
            if d < out[p, 0]:
                out[p, 0], out[p, 1], out[p, 2], out[p, 3] = d, nx, ny, nz


def free_side_curvature(kind: int, size: np.ndarray) -> float:
    """The surface's smallest principal curvature seen from its free side (1/m): 1/R inside a sphere; 0 for a
    plane, a box's flat faces and a tube (its wall is straight along the axis)."""
    return 1.0 / float(size[0]) if kind == SPHERE else 0.0


def inner_room(kind: int, size: np.ndarray) -> float:
    """The largest distance (m) a point can keep from every face at once (inf for a plane): a held distance at
    or beyond it leaves no room."""
    if kind == PLANE:
        return math.inf
    if kind == TUBE:
        return float(min(size[0], size[1]))
    if kind == BOX:
        return float(np.min(size))
    return float(size[0])
