"""Segment geometry and the contact writer shared by the collision kernels (vectors as in ``physics.vectors``)."""

from __future__ import annotations

from ..jit import kernel
from ..vectors import dot, sub


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
