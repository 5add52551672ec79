"""Narrow-phase entry point: dispatch on MuJoCo geom type codes, in either argument order.

Geoms are given as MuJoCo's ``geom_size`` (3,), world position ``geom_xpos`` (3,) in m and rotation
``geom_xmat`` reshaped to (3, 3) (C-contiguous float64; column j = local axis j in world coordinates).

Supported pairs (``supported_pair``): plane-{sphere, capsule, cylinder, box},
sphere-{sphere, capsule, cylinder, box}, capsule-{capsule, box}, box-box. Not supported: anything with a
height field, ellipsoid, mesh or SDF; plane-plane (two infinite planes are static scenery); capsule-cylinder,
cylinder-cylinder and cylinder-box (a cylinder's rim and curved side against a segment or a polytope has no
closed form; it needs a convex method such as GJK/EPA or MPR, which this layer does not have).
"""

from __future__ import annotations

import mujoco

from ..jit import kernel
from .box_box import box_box
from .primitives import (
    capsule_box,
    capsule_capsule,
    plane_box,
    plane_capsule,
    plane_cylinder,
    plane_sphere,
    sphere_box,
    sphere_capsule,
    sphere_cylinder,
    sphere_sphere,
)

PLANE = int(mujoco.mjtGeom.mjGEOM_PLANE)
SPHERE = int(mujoco.mjtGeom.mjGEOM_SPHERE)
CAPSULE = int(mujoco.mjtGeom.mjGEOM_CAPSULE)
CYLINDER = int(mujoco.mjtGeom.mjGEOM_CYLINDER)
BOX = int(mujoco.mjtGeom.mjGEOM_BOX)

# Output rows a call may write: box-box clipping yields up to 8 points (and uses 8 rows as workspace), and boxes
# apart with an edge first add their edge contact to those.
MAX_CONTACTS = 9

# The function of each supported pair of type codes, lower code first.
_PAIRS = {
    (PLANE, SPHERE): plane_sphere, (PLANE, CAPSULE): plane_capsule, (PLANE, CYLINDER): plane_cylinder,
    (PLANE, BOX): plane_box,
    (SPHERE, SPHERE): sphere_sphere, (SPHERE, CAPSULE): sphere_capsule, (SPHERE, CYLINDER): sphere_cylinder,
    (SPHERE, BOX): sphere_box,
    (CAPSULE, CAPSULE): capsule_capsule, (CAPSULE, BOX): capsule_box,
    (BOX, BOX): box_box,
}


def supported_pair(type1: int, type2: int) -> bool:
    """Whether ``collide`` handles geoms of MuJoCo types ``type1`` and ``type2`` (in either order)."""
    return (min(int(type1), int(type2)), max(int(type1), int(type2))) in _PAIRS


def _dispatch(pairs):
    """A kernel ``(type1, type2, *arguments)`` that calls the function of the first of ``pairs`` ((type1, type2),
    function) whose types match with the arguments, and returns -1 where none does."""
    if not pairs:
        @kernel(inline=True)
        def unsupported(type1, type2, *arguments):
            return -1
        return unsupported
    ((first, second), function), others = pairs[0], _dispatch(pairs[1:])

    @kernel(inline=True)
    def dispatch(type1, type2, *arguments):
        if type1 == first and type2 == second:
            return function(*arguments)
        return others(type1, type2, *arguments)
    return dispatch


_ordered = _dispatch(tuple(_PAIRS.items()))


@kernel
def collide(type1, size1, pos1, mat1, type2, size2, pos2, mat2, margin, out_pos, out_normal, out_dist, out_feature):
    """Contacts between geom1 and geom2 closer than ``margin`` (m, >= 0); returns their count (<= MAX_CONTACTS).

    Outputs (at least MAX_CONTACTS rows; rows beyond the count are scratch):
      out_pos (K, 3)     world contact point midway between the two surfaces along the normal, m
      out_normal (K, 3)  unit normal from geom1 towards geom2
      out_dist (K,)      signed surface distance along the normal, m (negative = penetration)
      out_feature (K,)   int64 id of the contacting features, persistent while the contact topology is
    The pair is evaluated with the lower type code first and the normals are negated when the caller's
    order is the other one, so swapping the arguments flips the normals and keeps everything else. For two
    geoms of the same type the feature ids (and, in near ties, a box-box reference face) follow the caller's
    order: call each pair in a fixed order, e.g. g1 < g2 as ``broad.sweep_pairs`` writes them.
    Returns -1 for a pair that ``supported_pair`` rejects (the model builder refuses those at load).
    """
    if type1 <= type2:
        return _ordered(type1, type2, size1, pos1, mat1, size2, pos2, mat2, margin, out_pos, out_normal, out_dist,
                        out_feature)
    count = _ordered(type2, type1, size2, pos2, mat2, size1, pos1, mat1, margin, out_pos, out_normal, out_dist,
                     out_feature)
    for k in range(count):
        for i in range(3):
            out_normal[k, i] = -out_normal[k, i]
    return count
