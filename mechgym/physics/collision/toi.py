"""Time of impact of a moving geom against static geometry, for continuous collision.

In velocity Verlet the drift moves the body's centre of mass linearly, x(s) = x + s v dt for the step
fraction s in [0, 1], while the body turns. The mover is one geom of the body (sphere, capsule, box or
cylinder: ``mover_type``, ``size``, its centre ``pos`` = c and frame ``mat`` at s = 0); ``vel`` is the
body's COM (drift) velocity (m/s), ``lever`` the distance |c - x| from the COM to the geom's centre (m),
and ``omega_bound`` (rad/s) must bound the body's angular speed over the step (e.g. |L| / I_min).

Gap bound. The geom's centre is c(s) = x(s) + R(s) R(0)^T (c - x). A body point at offset y from the
centre of mass moves, relative to the translation, by |R(s) y - R(0) y| <= omega s dt |y|. Along a fixed
unit direction n the lowest point of the geom lies h(n) below its centre (``support_extent``), and only
points at distance <= rho = lever + ``rotation_radius`` from the COM move with the rotation (a capsule's
or sphere's round surface is the same in every orientation), so for every s
    n.(lowest point at s) >= n.(c + s v dt - p) - h(n) - rho omega dt s,
a lower bound of the gap that is LINEAR in s: g(s) = g0 - rate s. Its zero s = g0 / rate is therefore
closed-form and never later than the true first touch (exact when omega_bound = 0 and the mover meets
the face with its extremal feature inside the face).

Static box: the mover can only touch the box while it overlaps all three of the box's face slabs
(separating axes along the box's face normals), so the first s at which all six face gaps are <= 0 is a
lower bound of the time of impact: the latest entry over the faces, if it comes before the earliest exit
(ray-slab clipping, Kay and Kajiya). The face entered last is the face hit; its outward normal is taken
at the separated pose just before s (where that face's gap is still positive), never from an overlap.

Results: the fraction s in [0, 1] (``math.inf`` when there is no touch within the step; 0 when the bound
already overlaps at s = 0), and ``out_normal`` (3,): the unit outward normal of the static face hit,
pointing from the static geom towards the mover.

Two moving geoms (``contact.detect``) are advanced conservatively on a lower bound of their distance instead:
a point of either geom moves by at most the pair's motion bound per unit of s, so the pair cannot touch
before s + gap / bound. For two boxes that lower bound is ``box_gap``.
"""

from __future__ import annotations

import math

from ..jit import kernel
from ..tolerances import PARALLEL_SINE
from ..vectors import column, cross, dot, norm, scale, sub, vec
from .box_box import _support_radius
from .narrow import BOX, CAPSULE, CYLINDER, SPHERE


@kernel
def support_extent(mover_type, size, mat, n):
    """h(n) = max over the geom's points x of n.(x - c) for the unit direction ``n`` (m).

    sphere r; capsule r + h |n.a|; box sum_j h_j |n.M_j|; cylinder h |n.a| + r sqrt(1 - (n.a)^2), with a the
    local z axis (M_2). Other types: inf, so that their time of impact is conservatively 0.
    """
    if mover_type == SPHERE:
        return size[0]
    if mover_type == BOX:
        return size[0] * abs(dot(n, column(mat, 0))) + size[1] * abs(dot(n, column(mat, 1))) + size[2] * abs(
            dot(n, column(mat, 2)))
    along = dot(n, column(mat, 2))
    if mover_type == CAPSULE:
        return size[0] + size[1] * abs(along)
    if mover_type == CYLINDER:
        return size[1] * abs(along) + size[0] * math.sqrt(max(0.0, 1.0 - along * along))
    return math.inf


@kernel
def rotation_radius(mover_type, size):
    """Largest distance from the geom's centre of a point whose position depends on its orientation (m).

    sphere 0; capsule h (its axis end points; the radius r around them is orientation-free);
    box |half extents|; cylinder sqrt(r^2 + h^2) (its rim).
    """
    if mover_type == SPHERE:
        return 0.0
    if mover_type == CAPSULE:
        return size[1]
    if mover_type == BOX:
        return math.sqrt(size[0] * size[0] + size[1] * size[1] + size[2] * size[2])
    return math.sqrt(size[0] * size[0] + size[1] * size[1])


@kernel
def toi_plane(mover_type, size, pos, mat, vel, omega_bound, lever, dt, plane_pos, plane_mat, out_normal):
    """First fraction s of the step at which the mover can touch the static plane (see module doc).

    Gap g(s) = n.(c - p) - h(n) - s (rho omega - n.v) dt with n the plane normal; s = g0 / rate.
    """
    n = column(plane_mat, 2)
    for i in range(3):
        out_normal[i] = n[i]
    g0 = dot(n, vec(pos)) - dot(n, vec(plane_pos)) - support_extent(mover_type, size, mat, n)
    rate = ((lever + rotation_radius(mover_type, size)) * omega_bound - dot(n, vec(vel))) * dt
    if g0 <= 0.0:
        return 0.0
    if rate <= 0.0 or g0 > rate:
        return math.inf
    return g0 / rate


@kernel
def toi_box(mover_type, size, pos, mat, vel, omega_bound, lever, dt, box_size, box_pos, box_mat, out_normal):
    """First fraction s of the step at which the mover can touch the static box (see module doc).

    Face (k, sign) with outward normal n = sign B_k has the gap
        g(s) = sign B_k.(c - b) - h_k - h(B_k) - s (rho omega - sign B_k.v) dt = g0 - rate s.
    g <= 0 holds for s >= g0 / rate when rate > 0 (entry), for s <= g0 / rate when rate < 0 (exit), always
    or never when rate = 0. The touch interval is [max(0, entries), min(1, exits)].
    """
    rho_omega = (lever + rotation_radius(mover_type, size)) * omega_bound
    enter, leave = 0.0, 1.0
    hit_axis, hit_sign = -1, 1.0
    least_deep, start_axis, start_sign = -math.inf, 0, 1.0
    for k in range(3):
        axis = column(box_mat, k)
        centre = dot(axis, vec(pos)) - dot(axis, vec(box_pos))
        reach = box_size[k] + support_extent(mover_type, size, mat, axis)
        speed = dot(axis, vec(vel))
        for side in range(2):
            sign = 2.0 * side - 1.0
            g0 = sign * centre - reach
            rate = (rho_omega - sign * speed) * dt
            if g0 > least_deep:
                least_deep, start_axis, start_sign = g0, k, sign
            if rate > 0.0:
                if g0 / rate > enter:
                    enter, hit_axis, hit_sign = g0 / rate, k, sign
            elif rate < 0.0:
                leave = min(leave, g0 / rate)
            elif g0 > 0.0:
                return math.inf
    if enter > leave:
        return math.inf
    if hit_axis < 0:  # every face gap is already <= 0 at s = 0: the least deep face
        hit_axis, hit_sign = start_axis, start_sign
    for i in range(3):
        out_normal[i] = hit_sign * box_mat[i, hit_axis]
    return enter


@kernel
def box_gap(size1, pos1, mat1, size2, pos2, mat2):
    """A lower bound of the distance between two boxes (m; < 0: they overlap): the largest separation
    s(L) = |L.d| - r_1(L) - r_2(L) (d = c_2 - c_1, r the support radii) over the 15 separating axes L of
    ``box_box`` (3 face normals of each box, and the 9 unit edge cross products A_i x B_j that are not
    degenerate, |A_i x B_j| >= PARALLEL_SINE).

    Projecting onto a unit axis never lengthens a segment, so every s(L) is at most the distance between the
    boxes; the largest is the distance itself when the closest features are a face and a vertex, two parallel
    faces or two edges, and positive exactly when the boxes are apart (separating-axis theorem). (The
    narrow phase's clipped face points give the gap along one axis at the points that survive the clipping,
    which can exceed the distance when the nearest vertex is clipped away: no bound for an advancement.)
    """
    d = sub(vec(pos2), vec(pos1))
    gap = -math.inf
    for i in range(3):
        a, b = column(mat1, i), column(mat2, i)
        gap = max(gap, abs(dot(a, d)) - size1[i] - _support_radius(mat2, size2, a),
                  abs(dot(b, d)) - size2[i] - _support_radius(mat1, size1, b))
        for j in range(3):
            axis = cross(a, column(mat2, j))
            length = norm(axis)
            if length < PARALLEL_SINE:
                continue
            axis = scale(axis, 1.0 / length)
            gap = max(gap, abs(dot(axis, d)) - _support_radius(mat1, size1, axis) - _support_radius(mat2, size2, axis))
    return gap
