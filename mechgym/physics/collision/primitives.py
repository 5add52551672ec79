"""Narrow-phase kernels for the pairs of plane, sphere, capsule, cylinder and box, except box-box.

Every kernel has the signature ``(size1, pos1, mat1, size2, pos2, mat2, margin, out_pos, out_normal,
out_dist, out_feature) -> count`` with geom1 of the lower MuJoCo type code (``narrow.collide`` swaps the
arguments otherwise) and writes ``count`` contacts into rows 0..count-1 of the outputs:

- ``out_pos[k]``: the world point midway between the two surfaces along the normal (m);
- ``out_normal[k]``: unit normal pointing from geom1 to geom2;
- ``out_dist[k]``: signed distance between the surfaces along the normal (m; negative = penetration);
- ``out_feature[k]``: an id of the pair of features in contact, stable while the contact topology is.

Only contacts with ``dist < margin`` (m) are written. Sizes are MuJoCo's ``geom_size``: sphere (r,),
capsule and cylinder (r, half length), box (half extents); a plane is infinite, with normal = local z.
"""

from __future__ import annotations

import math

from ..jit import kernel
from ..tolerances import PARALLEL_SINE
from ..vectors import (
    add,
    axpy,
    basis,
    column,
    cross,
    dot,
    norm,
    rotate_local,
    rotate_world,
    scale,
    sub,
    to_local,
    to_world,
    vec,
)
from .common import clamp, emit, point_segment, segment_closest


@kernel
def _sphere_sphere(c1, r1, c2, r2, fallback, margin, out_pos, out_normal, out_dist, out_feature, k, feature):
    """Spheres (c1, r1) and (c2, r2): n = (c2 - c1)/|c2 - c1|, dist = |c2 - c1| - r1 - r2.

    The contact point is midway between the surface points c1 + r1 n and c2 - r2 n, i.e.
    c1 + (r1 + dist/2) n. Centres closer than 1e-12 (r1 + r2), where the direction between them is lost in
    round-off, take the unit vector ``fallback`` as n.
    """
    d = sub(c2, c1)
    length = norm(d)
    dist = length - r1 - r2
    if dist >= margin:
        return k
    n = scale(d, 1.0 / length) if length > 1e-12 * (r1 + r2) else fallback
    return emit(out_pos, out_normal, out_dist, out_feature, k, axpy(r1 + 0.5 * dist, n, c1), n, dist, feature)


@kernel
def plane_sphere(size1, pos1, mat1, size2, pos2, mat2, margin, out_pos, out_normal, out_dist, out_feature):
    """Sphere above a plane: dist = n.(c - p0) - r with n the plane normal; one contact, feature 0."""
    n = column(mat1, 2)
    c = vec(pos2)
    dist = dot(n, sub(c, vec(pos1))) - size2[0]
    if dist >= margin:
        return 0
    # the sphere's lowest point c - r n, moved back by dist/2 to lie midway between the surfaces
    p = axpy(-(size2[0] + 0.5 * dist), n, c)
    return emit(out_pos, out_normal, out_dist, out_feature, 0, p, n, dist, 0)


@kernel
def plane_capsule(size1, pos1, mat1, size2, pos2, mat2, margin, out_pos, out_normal, out_dist, out_feature):
    """Capsule above a plane: each end sphere c +- h a gives dist = n.(e - p0) - r (features 0: -a end, 1: +a end).

    A capsule lying flat gets two contacts (a line contact); a tilted one gets its lower end only.
    """
    n = column(mat1, 2)
    p0 = vec(pos1)
    axis = column(mat2, 2)
    r, half = size2[0], size2[1]
    count = 0
    for end in range(2):
        e = axpy((2.0 * end - 1.0) * half, axis, vec(pos2))
        dist = dot(n, sub(e, p0)) - r
        if dist < margin:
            p = axpy(-(r + 0.5 * dist), n, e)
            count = emit(out_pos, out_normal, out_dist, out_feature, count, p, n, dist, end)
    return count


@kernel
def plane_box(size1, pos1, mat1, size2, pos2, mat2, margin, out_pos, out_normal, out_dist, out_feature):
    """Box above a plane: every corner x = c + sum_i s_i h_i A_i with dist = n.(x - p0) < margin.

    Feature = corner index s_0 + 2 s_1 + 4 s_2 (s_i = 1 for the + side). A box resting flat gives its four
    bottom corners, one resting on an edge the two corners of that edge.
    """
    n = column(mat1, 2)
    p0 = vec(pos1)
    c = vec(pos2)
    count = 0
    for corner in range(8):
        x = c
        for i in range(3):
            sign = 1.0 if (corner >> i) & 1 else -1.0
            x = axpy(sign * size2[i], column(mat2, i), x)
        dist = dot(n, sub(x, p0))
        if dist < margin:
            count = emit(out_pos, out_normal, out_dist, out_feature, count, axpy(-0.5 * dist, n, x), n, dist, corner)
    return count


@kernel
def plane_cylinder(size1, pos1, mat1, size2, pos2, mat2, margin, out_pos, out_normal, out_dist, out_feature):
    """Cylinder above a plane, by the rim points of its two caps.

    Cap s (s = -1, +1 along the axis a) has centre c_s = c + s h a and rim points c_s + r u for unit u
    perpendicular to a. With t = n - (n.a) a (the part of the plane normal across the axis) the rim height
    n.(x - p0) = n.(c_s - p0) + r u.t is lowest at u0 = -t/|t| and varies over the rim by 2 r |t|.
    - If 2 r |t| > margin the cap is tilted. Candidates: the lowest rim point u0 (feature 3 cap) and the rim
      points at +-120 deg from it, u = -u0/2 +- (sqrt 3 / 2) a x u0 (features 3 cap + 1, 3 cap + 2), which lie
      1.5 r |t| higher. A cylinder leaning on its rim gets one point, or a triangle when it is nearly flat
      (1.5 r |t| within the margin), so it cannot rock about a single point; one lying on its side gets one
      point per cap (a line contact).
    - Otherwise the whole rim lies within the margin band, the cap is flat on the plane (face contact) and
      its candidates are four rim points at the cylinder's local +-x, +-y (features 6 + 4 cap + k, fixed in
      the body so that they do not wander with the ill-defined direction of a tiny t).
    Every candidate with dist = n.(x - p0) < margin is a contact at x - (dist/2) n.
    """
    n = column(mat1, 2)
    p0 = vec(pos1)
    axis = column(mat2, 2)
    r, half = size2[0], size2[1]
    t = axpy(-dot(n, axis), axis, n)
    tilt = norm(t)
    flat = 2.0 * r * tilt <= margin
    u0 = scale(t, -1.0 / tilt) if not flat else axis  # (u0, w) span the rim directions; unused when flat
    w = cross(axis, u0)
    count = 0
    for cap in range(2):
        centre = axpy((2.0 * cap - 1.0) * half, axis, vec(pos2))
        for k in range(4 if flat else 3):
            if flat:
                x = axpy((1.0 - 2.0 * (k >> 1)) * r, column(mat2, k & 1), centre)
                feature = 6 + 4 * cap + k
            else:
                cos_phi = 1.0 if k == 0 else -0.5
                sin_phi = 0.0 if k == 0 else (0.5 * math.sqrt(3.0) if k == 1 else -0.5 * math.sqrt(3.0))
                x = axpy(r * sin_phi, w, axpy(r * cos_phi, u0, centre))
                feature = 3 * cap + k
            dist = dot(n, sub(x, p0))
            if dist < margin:
                count = emit(out_pos, out_normal, out_dist, out_feature, count, axpy(-0.5 * dist, n, x), n, dist,
                             feature)
    return count


@kernel
def sphere_sphere(size1, pos1, mat1, size2, pos2, mat2, margin, out_pos, out_normal, out_dist, out_feature):
    """Two spheres; one contact, feature 0 (coincident centres: n = +z)."""
    return _sphere_sphere(vec(pos1), size1[0], vec(pos2), size2[0], (0.0, 0.0, 1.0), margin, out_pos, out_normal,
                          out_dist, out_feature, 0, 0)


@kernel
def _segment(size, pos, mat):
    """A capsule's axis segment as (start, direction): start = c - h a, direction = 2 h a (m)."""
    axis = column(mat, 2)
    return axpy(-size[1], axis, vec(pos)), scale(axis, 2.0 * size[1])


@kernel
def sphere_capsule(size1, pos1, mat1, size2, pos2, mat2, margin, out_pos, out_normal, out_dist, out_feature):
    """Sphere and capsule: the sphere against the capsule's end sphere at the closest axis point q.

    q = a + t d with t = clamp((c - a).d / d.d, 0, 1). Feature 0 (t = 0), 1 (t = 1) or 2 (inside).
    A centre on the axis itself is pushed out along the capsule's local x axis.
    """
    start, d = _segment(size2, pos2, mat2)
    c = vec(pos1)
    t = point_segment(c, start, d)
    feature = 0 if t <= 0.0 else (1 if t >= 1.0 else 2)
    return _sphere_sphere(c, size1[0], axpy(t, d, start), size2[0], scale(column(mat2, 0), -1.0), margin,
                          out_pos, out_normal, out_dist, out_feature, 0, feature)


@kernel
def capsule_capsule(size1, pos1, mat1, size2, pos2, mat2, margin, out_pos, out_normal, out_dist, out_feature):
    """Two capsules: sphere-sphere contacts at closest points of their axis segments.

    Crossed (sine of the angle between the axes >= PARALLEL_SINE): one contact at the closest points
    p1 + s d1, p2 + t d2 of the segments (feature 0).
    Parallel: the closest points are not unique; the contacts are the two ends of the overlap of the
    segments' projections onto axis 1 (each paired with its closest point on segment 2), so that capsules
    lying side by side get a line contact. Each end comes from an endpoint of segment 1 (features 1, 2) or
    from the projection of an endpoint of segment 2 (features 3, 4). Without overlap it is the single
    closest pair of endpoints.
    """
    p1, d1 = _segment(size1, pos1, mat1)
    p2, d2 = _segment(size2, pos2, mat2)
    r1, r2 = size1[0], size2[0]
    a = dot(d1, d1)
    cr = cross(d1, d2)
    # axes that meet: push apart along their common normal (crossed) or across axis 1 (parallel)
    fallback = column(mat1, 0)
    if dot(cr, cr) >= PARALLEL_SINE * PARALLEL_SINE * a * dot(d2, d2) or a <= 1e-300:
        if dot(cr, cr) > 0.0:
            fallback = scale(cr, 1.0 / norm(cr))
        s, t = segment_closest(p1, d1, p2, d2)
        return _sphere_sphere(axpy(s, d1, p1), r1, axpy(t, d2, p2), r2, fallback, margin, out_pos, out_normal,
                              out_dist, out_feature, 0, 0)
    # parameters of segment 2's endpoints projected on segment 1: u = (p2 + j d2 - p1).d1 / a
    u0 = dot(sub(p2, p1), d1) / a
    u1 = u0 + dot(d2, d1) / a
    lo, lo_feature = (u0, 3) if u0 < u1 else (u1, 4)
    hi, hi_feature = (u1, 4) if u0 < u1 else (u0, 3)
    if lo <= 0.0:
        lo, lo_feature = 0.0, 1
    if hi >= 1.0:
        hi, hi_feature = 1.0, 2
    if lo > hi:  # no overlap: the nearer pair of endpoints
        s = 1.0 if lo > 1.0 else 0.0
        t = point_segment(axpy(s, d1, p1), p2, d2)
        return _sphere_sphere(axpy(s, d1, p1), r1, axpy(t, d2, p2), r2, fallback, margin, out_pos, out_normal,
                              out_dist, out_feature, 0, 0)
    count = 0
    for end in range(2):
        s, feature = (lo, lo_feature) if end == 0 else (hi, hi_feature)
        q = axpy(s, d1, p1)
        t = point_segment(q, p2, d2)
        count = _sphere_sphere(q, r1, axpy(t, d2, p2), r2, fallback, margin, out_pos, out_normal, out_dist,
                               out_feature, count, feature)
        if hi - lo <= 1e-12:
            break
    return count


@kernel
def _region(x, half):
    """Voronoi-region digit of one box coordinate: 0 below -h, 1 inside, 2 above +h."""
    return 0 if x < -half else (2 if x > half else 1)


@kernel
def sphere_box(size1, pos1, mat1, size2, pos2, mat2, margin, out_pos, out_normal, out_dist, out_feature):
    """Sphere (geom1) and box (geom2), in box coordinates x = B^T (c - b).

    Centre outside: the closest box point is q = clamp(x, -h, h); n_out = (x - q)/|x - q| and
    dist = |x - q| - r. Feature = Voronoi region sum_i 3^i digit_i (face, edge or vertex; 0..26).
    Centre inside: the nearest face i (least h_i - |x_i|) pushes it out: n_out = sign(x_i) e_i,
    dist = -(h_i - |x_i|) - r, q = x with q_i = sign(x_i) h_i. Feature 27 + 2 i + (x_i > 0).
    The normal from the sphere to the box is -n_out; the point is midway: q + (dist/2) n_out.
    """
    r = size1[0]
    h = vec(size2)
    x = to_local(mat2, vec(pos2), vec(pos1))
    q = (clamp(x[0], -h[0], h[0]), clamp(x[1], -h[1], h[1]), clamp(x[2], -h[2], h[2]))
    d = sub(x, q)
    length = norm(d)
    if length > 0.0:
        dist = length - r
        n_out = scale(d, 1.0 / length)
        feature = _region(x[0], h[0]) + 3 * _region(x[1], h[1]) + 9 * _region(x[2], h[2])
    else:
        axis = 0
        for i in range(1, 3):
            if h[i] - abs(x[i]) < h[axis] - abs(x[axis]):
                axis = i
        sign = 1.0 if x[axis] > 0.0 else -1.0
        dist = abs(x[axis]) - h[axis] - r
        n_out = basis(axis, sign)
        q = add(x, basis(axis, sign * h[axis] - x[axis]))
        feature = 27 + 2 * axis + (1 if sign > 0.0 else 0)
    if dist >= margin:
        return 0
    n_world = rotate_world(mat2, n_out)
    p = to_world(mat2, vec(pos2), axpy(0.5 * dist, n_out, q))
    return emit(out_pos, out_normal, out_dist, out_feature, 0, p, scale(n_world, -1.0), dist, feature)


@kernel
def sphere_cylinder(size1, pos1, mat1, size2, pos2, mat2, margin, out_pos, out_normal, out_dist, out_feature):
    """Sphere (geom1) and cylinder (geom2: radius R, half length h), in cylinder coordinates x = C^T (c - p).

    With rho = sqrt(x0^2 + x1^2) (distance from the axis):
    - centre outside the cylinder: the closest cylinder point is q = (x0, x1) min(1, R / rho) radially and
      clamp(x2, -h, h) axially; n_out = (x - q)/|x - q|, dist = |x - q| - r. Feature: side 0 (rho > R,
      |x2| <= h), cap 1 / 2 (x2 < -h / x2 > h, rho <= R), rim 3 / 4 (both).
    - centre inside: pushed out through the nearer of the side (depth R - rho, n_out radial; local +x on the
      axis itself) and the nearer cap (depth h - |x2|, n_out = sign(x2) e_z); dist = -depth - r.
      Feature 5 (side), 6 / 7 (caps).
    The normal from the sphere to the cylinder is -n_out; the point is midway: q + (dist/2) n_out.
    """
    r = size1[0]
    radius, half = size2[0], size2[1]
    x = to_local(mat2, vec(pos2), vec(pos1))
    rho = math.sqrt(x[0] * x[0] + x[1] * x[1])
    outside_side = rho > radius
    outside_cap = abs(x[2]) > half
    if outside_side or outside_cap:
        shrink = radius / rho if outside_side else 1.0
        q = (x[0] * shrink, x[1] * shrink, clamp(x[2], -half, half))
        d = sub(x, q)
        length = norm(d)
        dist = length - r
        n_out = scale(d, 1.0 / length)
        cap = 0 if not outside_cap else (1 if x[2] < 0.0 else 2)
        feature = cap if not outside_side else (0 if cap == 0 else cap + 2)
    elif radius - rho < half - abs(x[2]):
        dist = rho - radius - r
        n_out = (x[0] / rho, x[1] / rho, 0.0) if rho > 0.0 else (1.0, 0.0, 0.0)
        q = (radius * n_out[0], radius * n_out[1], x[2])
        feature = 5
    else:
        sign = 1.0 if x[2] > 0.0 else -1.0
        dist = abs(x[2]) - half - r
        n_out = (0.0, 0.0, sign)
        q = (x[0], x[1], sign * half)
        feature = 7 if sign > 0.0 else 6
    if dist >= margin:
        return 0
    p = to_world(mat2, vec(pos2), axpy(0.5 * dist, n_out, q))
    return emit(out_pos, out_normal, out_dist, out_feature, 0, p, scale(rotate_world(mat2, n_out), -1.0), dist,
                feature)


@kernel
def _clip_to_face(a, d, h, axis):
    """Clip the local segment a + t d, t in [0, 1], to the prism |x_i| <= h_i (i != axis) over a box face
    (``axis`` = -1: to the box itself).

    Liang-Barsky: each side plane +-x_i = h_i bounds t from one side where the segment crosses it.
    Returns (t0, t1, source0, source1); t0 > t1 means no overlap. A source is 0 / 1 when the end is the
    segment's own start / end, or 2 + 2 j + side when it is cut by side plane (j-th other axis, -/+).
    """
    t0, t1, s0, s1 = 0.0, 1.0, 0, 1
    j = 0
    for i in range(3):
        if i == axis:
            continue
        for side in range(2):
            sign = 2.0 * side - 1.0
            # inside: sign (a_i + t d_i) <= h_i  <=>  t (sign d_i) <= h_i - sign a_i
            rate = sign * d[i]
            room = h[i] - sign * a[i]
            if rate == 0.0:
                if room < 0.0:
                    return 1.0, 0.0, 0, 0
            elif rate > 0.0:
                if room / rate < t1:
                    t1, s1 = room / rate, 2 + 2 * j + side
            elif room / rate > t0:
                t0, s0 = room / rate, 2 + 2 * j + side
        j += 1
    return t0, t1, s0, s1


@kernel
def _capsule_on_face(a, d, h, r, axis, sign, pos2, mat2, margin, out_pos, out_normal, out_dist, out_feature):
    """Contacts of a capsule (local segment a + t d, radius r) with the box face sign * e_axis.

    The segment is clipped to the face's prism; each clipped end x has dist = sign x_axis - h_axis - r and
    point x - (r + dist/2) n_out. Feature 128 + 6 (2 axis + (sign > 0)) + source (see ``_clip_to_face``).
    """
    t0, t1, s0, s1 = _clip_to_face(a, d, h, axis)
    if t0 > t1:
        return 0
    n_out = basis(axis, sign)
    normal = scale(rotate_world(mat2, n_out), -1.0)
    face = 2 * axis + (1 if sign > 0.0 else 0)
    count = 0
    for end in range(2):
        t, source = (t0, s0) if end == 0 else (t1, s1)
        x = axpy(t, d, a)
        dist = sign * x[axis] - h[axis] - r
        if dist < margin:
            p = to_world(mat2, pos2, axpy(-(r + 0.5 * dist), n_out, x))
            count = emit(out_pos, out_normal, out_dist, out_feature, count, p, normal, dist, 128 + 6 * face + source)
        if t1 - t0 <= 1e-12:
            break
    return count


@kernel
def _capsule_through_box(a, d, h, r, pos2, mat2, margin, out_pos, out_normal, out_dist, out_feature):
    """Capsule whose axis segment meets the box: pushed out along the face normal of least penetration.

    For face (axis, sign) the segment clipped to the face's prism has ends x(c0), x(c1); the face's depth is
    min(sign x_axis) - h_axis over them. The face with the largest (least negative) value is used.
    """
    best, best_axis, best_sign = -math.inf, 0, 1.0
    for axis in range(3):
        c0, c1, _, _ = _clip_to_face(a, d, h, axis)
        for side in range(2):
            sign = 2.0 * side - 1.0
            depth = min(sign * (a[axis] + c0 * d[axis]), sign * (a[axis] + c1 * d[axis])) - h[axis]
            if depth > best:
                best, best_axis, best_sign = depth, axis, sign
    return _capsule_on_face(a, d, h, r, best_axis, best_sign, pos2, mat2, margin, out_pos, out_normal, out_dist,
                            out_feature)


@kernel
def capsule_box(size1, pos1, mat1, size2, pos2, mat2, margin, out_pos, out_normal, out_dist, out_feature):
    """Capsule (geom1) and box (geom2), in box coordinates.

    Axis segment a + t d (t in [0, 1]) against the box |x_i| <= h_i.
    - Segment outside the box: the distance between two convex polytopes is attained by a vertex of one
      against the other or by an edge against an edge, so the closest pair (P on the segment, Q on the box)
      is the best of: each endpoint against the box (Q = clamp), and the segment against each of the 12
      box edges (``segment_closest``). dist = |P - Q| - r, n_out = (P - Q)/|P - Q|.
      If n_out is a face normal (within PARALLEL_SINE) the capsule rests on that face: the contacts are
      the ends of the segment clipped to the face (two for a capsule lying on it, so it cannot roll about
      the contact), see ``_capsule_on_face``. Otherwise (edge or vertex of the box) that contact, and each
      other end of the segment within the margin of the box (Q = clamp) is one too: a capsule lying along an
      edge touches it at both ends, where the closest pair alone is one point, about which the capsule can turn
      its other end into the edge unseen by the solves. Feature 3 region(Q) + (0: start, 1: end, 2: inside of
      the segment), region as in ``sphere_box``.
    - Segment through the box (penetration deeper than r): the push-out is along a face normal only: the
      face whose clipped segment ends are least deep (the separating-axis test restricted to the box's
      face axes; an edge-edge axis could give a shallower push-out in rare poses).
    """
    r = size1[0]
    h = vec(size2)
    b = vec(pos2)
    start, dw = _segment(size1, pos1, mat1)
    a = to_local(mat2, b, start)
    d = rotate_local(mat2, dw)
    t0, t1, _, _ = _clip_to_face(a, d, h, -1)  # the part of the segment inside the box
    if t0 <= t1:
        return _capsule_through_box(a, d, h, r, b, mat2, margin, out_pos, out_normal, out_dist, out_feature)
    best = math.inf
    seg_feature = 0
    P = a
    Q = a
    for end in range(2):
        x = axpy(float(end), d, a)
        q = (clamp(x[0], -h[0], h[0]), clamp(x[1], -h[1], h[1]), clamp(x[2], -h[2], h[2]))
        e = sub(x, q)
        if dot(e, e) < best:
            best, P, Q, seg_feature = dot(e, e), x, q, end
    for axis in range(3):
        i1, i2 = (axis + 1) % 3, (axis + 2) % 3
        edge = basis(axis, 2.0 * h[axis])
        for k in range(4):
            # edge along e_axis from x_axis = -h_axis, at x_i1 = +-h_i1, x_i2 = +-h_i2
            corner = add(add(basis(axis, -h[axis]), basis(i1, (1.0 - 2.0 * (k & 1)) * h[i1])),
                         basis(i2, (1.0 - (k & 2)) * h[i2]))
            s, t = segment_closest(a, d, corner, edge)
            x = axpy(s, d, a)
            q = axpy(t, edge, corner)
            e = sub(x, q)
            if dot(e, e) < best:
                best, P, Q = dot(e, e), x, q
                seg_feature = 0 if s <= 0.0 else (1 if s >= 1.0 else 2)
    length = math.sqrt(best)
    if length - r >= margin:
        return 0
    if length == 0.0:  # the segment touches the surface (missed by the clip test in round-off)
        return _capsule_through_box(a, d, h, r, b, mat2, margin, out_pos, out_normal, out_dist, out_feature)
    n_out = scale(sub(P, Q), 1.0 / length)
    for axis in range(3):
        if abs(n_out[axis]) >= 1.0 - 0.5 * PARALLEL_SINE * PARALLEL_SINE:
            return _capsule_on_face(a, d, h, r, axis, 1.0 if n_out[axis] > 0.0 else -1.0, b, mat2, margin, out_pos,
                                    out_normal, out_dist, out_feature)
    count = _capsule_point(P, Q, length, r, h, b, mat2, seg_feature, out_pos, out_normal, out_dist, out_feature, 0)
    if d[0] == 0.0 and d[1] == 0.0 and d[2] == 0.0:  # (a segment of length 0 has one end)
        return count
    for end in range(2):
        if end == seg_feature:
            continue
        x = axpy(float(end), d, a)
        q = (clamp(x[0], -h[0], h[0]), clamp(x[1], -h[1], h[1]), clamp(x[2], -h[2], h[2]))
        gap = norm(sub(x, q))
        if 0.0 < gap and gap - r < margin:
            count = _capsule_point(x, q, gap, r, h, b, mat2, end, out_pos, out_normal, out_dist, out_feature, count)
    return count


@kernel
def _capsule_point(x, q, length, r, h, pos2, mat2, seg_feature, out_pos, out_normal, out_dist, out_feature, k):
    """Write contact k of ``capsule_box``: the segment's point x against the box's point q (box coordinates,
    |x - q| = ``length`` > 0), the normal along (q - x) in the world; ``seg_feature`` 0, 1 (its start, its end) or 2
    (inside it). Returns k + 1."""
    n_out = scale(sub(x, q), 1.0 / length)
    dist = length - r
    tol = 1e-9
    feature = 0
    for i in range(3):
        digit = 0 if q[i] <= -h[i] * (1.0 - tol) else (2 if q[i] >= h[i] * (1.0 - tol) else 1)
        feature += digit * 3 ** i
    p = to_world(mat2, pos2, axpy(0.5 * dist, n_out, q))
    return emit(out_pos, out_normal, out_dist, out_feature, k, p, scale(rotate_world(mat2, n_out), -1.0), dist,
                3 * feature + seg_feature)

