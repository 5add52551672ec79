"""Box-box narrow phase: separating-axis test with a face bias, then Sutherland-Hodgman clipping.

Boxes A (geom1: centre a, axes A_i = columns of ``mat1``, half extents h_A) and B (geom2) with d = b - a.

Separating-axis test (15 axes). The separation along a unit axis L is the gap between the intervals the
boxes cover on it: s(L) = |L.d| - r_A(L) - r_B(L), with the support radii r_A(L) = sum_i h_A,i |A_i.L|.
- face axes A_i: s = |A_i.d| - h_A,i - sum_j h_B,j |C_ij|, C_ij = A_i.B_j; likewise for B_j;
- edge axes L = A_i x B_j / |A_i x B_j| (skipped when the edges are parallel, |A_i x B_j| < PARALLEL_SINE: the face
  axes then cover the configuration).
If any s > margin the boxes are apart by more than the margin and there is no contact. Otherwise the
least penetrating axis (largest s) is chosen with a bias that keeps the choice from flickering between
nearly equal axes: a face of B beats a face of A, and an edge axis beats the best face, only if
s_candidate > AXIS_REL_TOL s_best + AXIS_ABS_TOL (Box2D's rule for polygons, in 3D).

Face contact. The chosen face is the reference face (normal n, pointing from the reference box towards
the other); the incident face is the face of the other box most anti-parallel to n (largest |B_j.n|).
The incident quad is clipped against the four side planes of the reference face (Sutherland-Hodgman:
at most 8 vertices), in the reference box's frame. Every clipped point x with height
dist = n.(x - face centre) < margin is a contact, at x - (dist/2) n (midway between the incident point
and its projection on the reference face); no reduction of the point set. For boxes apart by less than
the margin, dist is the gap along n (a lower bound of the true distance, which is all a speculative
contact needs). If the clipping leaves no point within the margin (possible only when the bias kept a face
over a nearly equal edge axis), the edge contact is used instead.

Edge contact. One contact at the midpoint of the closest points of the two supporting edges, with
dist = n.(q_B - q_A) (equal to the axis separation s). When the boxes are apart (s > AXIS_ABS_TOL) it comes with the
best face's clipped points within the margin: speculative contacts (continuous collision runs the narrow phase with
a margin of the rest of the step's motion), where a box that lands on an edge turns onto the face.

Feature ids (distinct for the two kinds):
- face: ((6 ref + ref_face) 6 + inc_face) 36 + label, with ref = 0 when A is the reference box, 1 for B;
  faces numbered 2 axis + (outward normal along +axis); label = incident vertex k (0..3), or incident
  edge e (from vertex e to e+1) cut by reference side plane p: 4 + 4 e + p, or a reference face corner
  where side planes p < q meet: 20 + 4 p + q. Side plane p = 2 (0 for the first, 1 for the second of
  the reference face's tangent axes in cyclic order) + (1 for the + side).
- edge: 2592 + 16 (3 i + j) + 4 (edge of A) + (edge of B), the edge of a box encoded by the signs of its
  other two axes (bit set = + side).
"""

from __future__ import annotations

import math

from ..jit import kernel
from ..tolerances import AXIS_ABS_TOL, AXIS_REL_TOL, PARALLEL_SINE
from ..vectors import axpy, column, cross, dot, norm, scale, sub, to_local, to_world, vec
from .common import emit, segment_closest

EDGE_FEATURE_BASE = 2592


@kernel
def _support_radius(mat, half, axis):
    """r(L) = sum_i h_i |M_i.L|: half the width of the box along the unit direction L (m)."""
    return (half[0] * abs(dot(column(mat, 0), axis)) + half[1] * abs(dot(column(mat, 1), axis))
            + half[2] * abs(dot(column(mat, 2), axis)))


@kernel
def _clip(src, src_tag, n_src, dst, dst_tag, axis, sign, limit, plane):
    """One Sutherland-Hodgman pass: keep the part of polygon ``src`` with sign * x[axis] <= limit.

    Polygon vertices are rows of ``src`` (reference-box coordinates); their tags are 8 label + in_edge,
    where in_edge is what the polygon edge arriving at the vertex lies on: incident edge e (0..3) or side
    plane 4 + p. Walking the edges P -> Q with f = sign x[axis] - limit (inside: f <= 0):
      in -> in:   keep Q;
      in -> out:  emit the crossing I = P + (Q - P) f_P / (f_P - f_Q) (label: Q's in-edge x this plane);
      out -> in:  emit I (its in-edge is this plane), then Q;
      out -> out: nothing.
    A crossing is emitted only when f_P and f_Q have strictly opposite signs: a vertex lying on the plane
    (f = 0) is kept as itself, not duplicated by a crossing at the same point.
    Returns the vertex count of ``dst``.
    """
    count = 0
    for i in range(n_src):
        prev = n_src - 1 if i == 0 else i - 1
        tag_q = int(src_tag[i])
        fp = sign * src[prev, axis] - limit
        fq = sign * src[i, axis] - limit
        if fp * fq < 0.0:
            u = fp / (fp - fq)
            for c in range(3):
                dst[count, c] = src[prev, c] + u * (src[i, c] - src[prev, c])
            edge = tag_q % 8
            if edge < 4:
                label = 4 + 4 * edge + plane
            else:
                label = 20 + 4 * min(edge - 4, plane) + max(edge - 4, plane)
            dst_tag[count] = 8 * label + (edge if fp < 0.0 else 4 + plane)
            count += 1
        if fq <= 0.0:
            for c in range(3):
                dst[count, c] = src[i, c]
            dst_tag[count] = tag_q
            count += 1
    return count


@kernel
def _face_contacts(ref_size, ref_pos, ref_mat, inc_size, inc_pos, inc_mat, axis, flip, margin,
                   out_pos, out_normal, out_dist, out_feature):
    """Clip the incident face of box ``inc`` against reference face ``axis`` of box ``ref`` (see module doc).

    ``flip`` = 1 when the reference box is geom2 (the reported normal is then -n). ``out_pos``/``out_feature``
    and ``out_normal``/``out_dist`` serve as the two polygon buffers of the clipping (8 rows suffice: a quad
    clipped by four planes has at most 8 vertices), so nothing is allocated.
    """
    ref_c = vec(ref_pos)
    inc_c = vec(inc_pos)
    ref_axis = column(ref_mat, axis)
    sign = 1.0 if dot(ref_axis, sub(inc_c, ref_c)) >= 0.0 else -1.0
    n = scale(ref_axis, sign)
    # incident face: the face of the other box whose outward normal is most anti-parallel to n
    inc_axis = 0
    best = -1.0
    for j in range(3):
        c = abs(dot(column(inc_mat, j), n))
        if c > best:
            best, inc_axis = c, j
    inc_sign = -1.0 if dot(column(inc_mat, inc_axis), n) > 0.0 else 1.0
    j1, j2 = (inc_axis + 1) % 3, (inc_axis + 2) % 3
    centre = axpy(inc_sign * inc_size[inc_axis], column(inc_mat, inc_axis), inc_c)
    for k in range(4):
        # quad vertices in order (+,+), (-,+), (-,-), (+,-) over (j1, j2); vertex k's in-edge is k - 1
        s1 = 1.0 if k == 0 or k == 3 else -1.0
        s2 = 1.0 if k < 2 else -1.0
        x = axpy(s1 * inc_size[j1], column(inc_mat, j1), centre)
        x = axpy(s2 * inc_size[j2], column(inc_mat, j2), x)
        local = to_local(ref_mat, ref_c, x)
        for c in range(3):
            out_pos[k, c] = local[c]
        out_feature[k] = 8 * k + (k + 3) % 4
    count = 4
    k1, k2 = (axis + 1) % 3, (axis + 2) % 3
    count = _clip(out_pos, out_feature, count, out_normal, out_dist, k1, -1.0, ref_size[k1], 0)
    count = _clip(out_normal, out_dist, count, out_pos, out_feature, k1, 1.0, ref_size[k1], 1)
    count = _clip(out_pos, out_feature, count, out_normal, out_dist, k2, -1.0, ref_size[k2], 2)
    count = _clip(out_normal, out_dist, count, out_pos, out_feature, k2, 1.0, ref_size[k2], 3)
    faces = ((6 * flip + 2 * axis + (1 if sign > 0.0 else 0)) * 6 + 2 * inc_axis + (1 if inc_sign > 0.0 else 0)) * 36
    normal = scale(n, -1.0) if flip else n
    kept = 0
    for i in range(count):
        local = (out_pos[i, 0], out_pos[i, 1], out_pos[i, 2])
        label = out_feature[i] // 8
        dist = sign * local[axis] - ref_size[axis]
        if dist < margin:
            p = axpy(-0.5 * dist, n, to_world(ref_mat, ref_c, local))
            kept = emit(out_pos, out_normal, out_dist, out_feature, kept, p, normal, dist, faces + label)
    return kept


@kernel
def _edge_contact(size1, pos1, mat1, size2, pos2, mat2, i, j, row, out_pos, out_normal, out_dist, out_feature):
    """Output row ``row``: the contact between edge direction A_i of box 1 and B_j of box 2 (see module doc);
    returns row + 1."""
    a = vec(pos1)
    b = vec(pos2)
    axis = cross(column(mat1, i), column(mat2, j))
    n = scale(axis, 1.0 / norm(axis))
    if dot(n, sub(b, a)) < 0.0:
        n = scale(n, -1.0)
    # supporting edge of A towards +n and of B towards -n: the other two axes at the sign of their
    # component along the normal
    pa = a
    pb = b
    code_a = 0
    code_b = 0
    bit = 0
    for k in range(3):
        if k == i:
            continue
        s = 1.0 if dot(column(mat1, k), n) >= 0.0 else -1.0
        pa = axpy(s * size1[k], column(mat1, k), pa)
        code_a += (1 << bit) if s > 0.0 else 0
        bit += 1
    bit = 0
    for k in range(3):
        if k == j:
            continue
        s = 1.0 if dot(column(mat2, k), n) >= 0.0 else -1.0
        pb = axpy(-s * size2[k], column(mat2, k), pb)
        code_b += (1 << bit) if s < 0.0 else 0
        bit += 1
    ea = scale(column(mat1, i), 2.0 * size1[i])
    eb = scale(column(mat2, j), 2.0 * size2[j])
    sa = axpy(-size1[i], column(mat1, i), pa)
    sb = axpy(-size2[j], column(mat2, j), pb)
    s, t = segment_closest(sa, ea, sb, eb)
    qa = axpy(s, ea, sa)
    qb = axpy(t, eb, sb)
    dist = dot(n, sub(qb, qa))
    p = scale(axpy(1.0, qa, qb), 0.5)
    return emit(out_pos, out_normal, out_dist, out_feature, row, p, n, dist,
                EDGE_FEATURE_BASE + 16 * (3 * i + j) + 4 * code_a + code_b)


@kernel
def _best_face_axis(size_ref, mat_ref, size_other, mat_other, d, margin):
    """Largest separation s_i = |n_i . d| - h_i - r_other(n_i) (m) over the face normals n_i of the reference
    box and its axis index; returns at the first s_i > margin (separated: no contact)."""
    best, axis = -math.inf, 0
    for i in range(3):
        ax = column(mat_ref, i)
        s = abs(dot(ax, d)) - size_ref[i] - _support_radius(mat_other, size_other, ax)
        if s > margin:
            return s, i
        if s > best:
            best, axis = s, i
    return best, axis


@kernel
def box_box(size1, pos1, mat1, size2, pos2, mat2, margin, out_pos, out_normal, out_dist, out_feature):
    """Contacts between two boxes (see the module docstring); needs 8 output rows. Returns the count."""
    d = sub(vec(pos2), vec(pos1))
    best_a, axis_a = _best_face_axis(size1, mat1, size2, mat2, d, margin)
    if best_a > margin:
        return 0
    best_b, axis_b = _best_face_axis(size2, mat2, size1, mat1, d, margin)
    if best_b > margin:
        return 0
    best_e, edge_i, edge_j = -math.inf, -1, -1
    for i in range(3):
        for j in range(3):
            ax = cross(column(mat1, i), column(mat2, j))
            length = norm(ax)
            if length < PARALLEL_SINE:
                continue
            ax = scale(ax, 1.0 / length)
            s = abs(dot(ax, d)) - _support_radius(mat1, size1, ax) - _support_radius(mat2, size2, ax)
            if s > margin:
                return 0
            if s > best_e:
                best_e, edge_i, edge_j = s, i, j
    use_b = best_b > AXIS_REL_TOL * best_a + AXIS_ABS_TOL
    best_face = best_b if use_b else best_a
    edge_first = edge_i >= 0 and best_e > AXIS_REL_TOL * best_face + AXIS_ABS_TOL
    count = 0
    if not edge_first or best_e > AXIS_ABS_TOL:
        # apart with an edge first: the face's points within the margin are contacts too (speculative; their gaps
        # are exact point distances, >= best_e), so that a box landing on an edge and turning onto the face within
        # the margin meets the face with all its points, not with the edge alone. Not within AXIS_ABS_TOL: a corner
        # resting on an edge would then carry two contacts at one point, one along each normal
        if use_b:
            count = _face_contacts(size2, pos2, mat2, size1, pos1, mat1, axis_b, 1, margin, out_pos, out_normal,
                                   out_dist, out_feature)
        else:
            count = _face_contacts(size1, pos1, mat1, size2, pos2, mat2, axis_a, 0, margin, out_pos, out_normal,
                                   out_dist, out_feature)
    if edge_first or (count == 0 and edge_i >= 0):
        # the edge axis wins, or the biased face choice clipped everything away (the edge was nearly as good)
        count = _edge_contact(size1, pos1, mat1, size2, pos2, mat2, edge_i, edge_j, count, out_pos, out_normal,
                              out_dist, out_feature)
    return count
