"""3-vector helpers on tuples (no heap allocation) and the contact writer shared by the collision kernels.

Vectors are ``(x, y, z)`` tuples of floats; rotation matrices are (3, 3) arrays ``mat`` with
``mat[i, j]`` = world component i of the geom's local axis j (MuJoCo's ``geom_xmat`` reshaped), so a
local point x maps to the world point ``pos + mat @ x``.
"""

from __future__ import annotations

import math

from ..jit import kernel


@kernel
def vec(a):
    """The first three entries of the array ``a`` as a tuple."""
    return (a[0], a[1], a[2])


@kernel
def column(mat, j):
    """Local axis ``j`` of the frame ``mat`` in world coordinates (unit vector)."""
    return (mat[0, j], mat[1, j], mat[2, j])


@kernel
def row(mat, i):
    """Row ``i`` of the matrix ``mat``: the world axis ``i`` in the frame's local coordinates."""
    return (mat[i, 0], mat[i, 1], mat[i, 2])


@kernel
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@kernel
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@kernel
def scale(a, s):
    return (a[0] * s, a[1] * s, a[2] * s)


@kernel
def axpy(s, a, b):
    """s a + b."""
    return (s * a[0] + b[0], s * a[1] + b[1], s * a[2] + b[2])


@kernel
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@kernel
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@kernel
def norm(a):
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@kernel
def to_local(mat, pos, p):
    """mat^T (p - pos): the world point ``p`` in the frame (pos, mat)."""
    return rotate_local(mat, sub(p, pos))


@kernel
def rotate_local(mat, v):
    """mat^T v: the world direction ``v`` in the frame ``mat``."""
    return (dot(column(mat, 0), v), dot(column(mat, 1), v), dot(column(mat, 2), v))


@kernel
def to_world(mat, pos, x):
    """pos + mat x: the local point ``x`` of the frame (pos, mat) in world coordinates."""
    return (pos[0] + mat[0, 0] * x[0] + mat[0, 1] * x[1] + mat[0, 2] * x[2],
            pos[1] + mat[1, 0] * x[0] + mat[1, 1] * x[1] + mat[1, 2] * x[2],
            pos[2] + mat[2, 0] * x[0] + mat[2, 1] * x[1] + mat[2, 2] * x[2])


@kernel
def rotate_world(mat, x):
    """mat x: the local direction ``x`` in world coordinates."""
    return (dot(row(mat, 0), x), dot(row(mat, 1), x), dot(row(mat, 2), x))


@kernel
def basis(axis, value):
    """value e_axis: the vector with ``value`` at index ``axis`` (0, 1, 2) and zeros elsewhere."""
    return (value if axis == 0 else 0.0, value if axis == 1 else 0.0, value if axis == 2 else 0.0)


@kernel
def clamp(x, lo, hi):
    return lo if x < lo else (hi if x > hi else x)


@kernel
def segment_closest(p1, d1, p2, d2):
    """Parameters (s, t) in [0, 1]^2 of the closest points p1 + s d1 and p2 + t d2 of two segments.

    Minimise |r + s d1 - t d2|^2 with r = p1 - p2. With a = d1.d1, e = d2.d2, b = d1.d2, c = d1.r,
    f = d2.r the stationary point of the unconstrained problem solves
        a s - b t = -c,   b s - e t = -f   =>   s = (b f - c e) / (a e - b^2).
    The constrained minimum (a convex quadratic over the unit square) is found by clamping s, taking
    the best t = (b s + f) / e for it, and when t leaves [0, 1] clamping t and re-solving
    s = (b t - c) / a. For parallel segments (a e - b^2 ~ 0) any s is optimal; s = 0 is taken.
    Degenerate (point) segments are handled by fixing their parameter at 0.
    """
    r = sub(p1, p2)
    a = dot(d1, d1)
    e = dot(d2, d2)
    f = dot(d2, r)
    tiny = 1e-300
    if a <= tiny and e <= tiny:
        return 0.0, 0.0
    if a <= tiny:
        return 0.0, clamp(f / e, 0.0, 1.0)
    c = dot(d1, r)
    if e <= tiny:
        return clamp(-c / a, 0.0, 1.0), 0.0
    b = dot(d1, d2)
    denom = a * e - b * b
    s = clamp((b * f - c * e) / denom, 0.0, 1.0) if denom > 1e-14 * a * e else 0.0
    t = (b * s + f) / e
    if t < 0.0:
        t = 0.0
        s = clamp(-c / a, 0.0, 1.0)
    elif t > 1.0:
        t = 1.0
        s = clamp((b - c) / a, 0.0, 1.0)
    return s, t


@kernel
def point_segment(p, a, d):
    """Parameter t in [0, 1] of the point a + t d of a segment closest to ``p``: t = clamp((p - a).d / d.d)."""
    dd = dot(d, d)
    if dd <= 1e-300:
        return 0.0
    return clamp(dot(sub(p, a), d) / dd, 0.0, 1.0)


@kernel
def emit(out_pos, out_normal, out_dist, out_feature, k, p, n, dist, feature):
    """Write contact ``k`` (world point p in m, unit normal n, signed distance in m, feature id); return k + 1."""
    for i in range(3):
        out_pos[k, i] = p[i]
        out_normal[k, i] = n[i]
    out_dist[k] = dist
    out_feature[k] = feature
    return k + 1
