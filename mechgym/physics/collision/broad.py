"""Broad phase: world-space AABBs and a sort-and-sweep on one axis giving the candidate geom pairs.

Per-geom arrays (G = number of geoms), MuJoCo's layout:
  types (G,) int64 mjtGeom codes; sizes (G, 3) ``geom_size`` (m); pos (G, 3) ``geom_xpos`` (m);
  mats (G, 3, 3) ``geom_xmat`` reshaped (column j = local axis j in world coordinates);
  body (G,) the rigid body a geom moves with (MuJoCo's weld id ``body_weldid[geom_bodyid]``; 0 = static world);
  parent (G,) the parent rigid body of the geom's body (``body_weldid[body_parentid[body]]``), for ``filter_parent``;
  contype, conaffinity (G,) int64 MuJoCo collision bit masks. ``filter_arrays`` builds the last four.

A pair (g1, g2) is a candidate when their AABBs overlap and
  - they move with different bodies (this also drops static-static pairs: both have body 0),
  - contype[g1] & conaffinity[g2] or contype[g2] & conaffinity[g1] is non-zero (MuJoCo's rule),
  - with ``filter_parent``, neither body is the other's parent unless that parent is the world
    (MuJoCo's ``filterparent``, on by default).
MuJoCo's explicit ``<exclude>`` and ``<pair>`` elements are not handled here.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np
from numba import njit

from .narrow import CAPSULE, CYLINDER, PLANE, SPHERE


@njit(cache=True)
def geom_aabbs(types, sizes, pos, mats, margin, out_lo, out_hi):
    """World AABB of every geom, inflated by ``margin`` (m), into ``out_lo``/``out_hi`` (G, 3) (m).

    Half width along world axis i, with R = mats[g], r the radius and h the half length:
      sphere r;  capsule |R_i2| h + r;  box sum_j |R_ij| h_j;
      cylinder |R_i2| h + r sqrt(1 - R_i2^2) (a disc of radius r with unit normal a spans r sqrt(1 - a_i^2));
      plane: infinite (-inf, +inf), so it is a candidate against every other geom;
      other types: the box of their ``geom_size`` half extents (a bound for an ellipsoid; meshes and height
      fields are not bounded by it: ``narrow.supported_pair`` excludes them).
    """
    for g in range(types.size):
        t = types[g]
        for i in range(3):
            if t == PLANE:
                out_lo[g, i] = -math.inf
                out_hi[g, i] = math.inf
                continue
            if t == SPHERE:
                half = sizes[g, 0]
            elif t == CAPSULE:
                half = abs(mats[g, i, 2]) * sizes[g, 1] + sizes[g, 0]
            elif t == CYLINDER:
                a = mats[g, i, 2]
                half = abs(a) * sizes[g, 1] + sizes[g, 0] * math.sqrt(max(0.0, 1.0 - a * a))
            else:
                half = (abs(mats[g, i, 0]) * sizes[g, 0] + abs(mats[g, i, 1]) * sizes[g, 1]
                        + abs(mats[g, i, 2]) * sizes[g, 2])
            out_lo[g, i] = pos[g, i] - half - margin
            out_hi[g, i] = pos[g, i] + half + margin


@njit(cache=True)
def can_collide(g1, g2, body, parent, contype, conaffinity, filter_parent):
    """MuJoCo's pair filter (see the module docstring); no geometry."""
    b1, b2 = body[g1], body[g2]
    if b1 == b2:
        return False
    if (contype[g1] & conaffinity[g2]) == 0 and (contype[g2] & conaffinity[g1]) == 0:
        return False
    if filter_parent and b1 != 0 and b2 != 0 and (parent[g1] == b2 or parent[g2] == b1):
        return False
    return True


@njit(cache=True)
def sweep_axis(lo, hi):
    """The world axis (0, 1, 2) along which the finite AABB centres spread most (largest variance).

    Sweeping along it keeps the x-interval overlaps, and so the sweep's cost, smallest. Call it at load or
    now and then, not every step: a new axis makes the persistent order unsorted again (one O(G^2) sort).
    """
    best, best_var = 0, -1.0
    for i in range(3):
        n = 0
        mean = 0.0
        square = 0.0
        for g in range(lo.shape[0]):
            if math.isinf(lo[g, i]) or math.isinf(hi[g, i]):
                continue
            c = 0.5 * (lo[g, i] + hi[g, i])
            n += 1
            mean += c
            square += c * c
        var = square / n - (mean / n) ** 2 if n > 0 else 0.0
        if var > best_var:
            best, best_var = i, var
    return best


@njit(cache=True)
def sweep_pairs(lo, hi, axis, order, body, parent, contype, conaffinity, filter_parent, out_pairs):
    """Candidate pairs by sort-and-sweep along world ``axis`` (see ``sweep_axis``); returns their number.

    ``order`` (G,) int64 is a permutation of the geoms that the caller keeps between steps: it is
    insertion-sorted in place by lo[:, axis], which costs O(G + number of swaps), i.e. O(G) when the order
    barely changes from step to step (O(G^2) only for the first call on an unsorted scene). The sweep visits
    the geoms in that order and pairs each with the following ones whose interval on ``axis`` starts before
    its own ends, testing the other two axes and the filter: cost O(G + overlaps on the axis), about linear in
    G when the geoms spread along the axis (a floor scene swept along x or y); geoms filling a cube
    uniformly give O(G^(5/3)), the limit of a one-axis sweep. Planes have lo = -inf and meet every geom.
    Pairs are written as rows (g1, g2), g1 < g2, of ``out_pairs`` (P, 2); if more than P are found the rest
    are counted but not written (grow ``out_pairs`` to the returned count and call again).
    """
    n = order.size
    for i in range(1, n):
        g = order[i]
        key = lo[g, axis]
        j = i - 1
        while j >= 0 and lo[order[j], axis] > key:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = g
    a1, a2 = (axis + 1) % 3, (axis + 2) % 3
    count = 0
    for i in range(n):
        g = order[i]
        end = hi[g, axis]
        for j in range(i + 1, n):
            h = order[j]
            if lo[h, axis] > end:
                break
            if lo[h, a1] > hi[g, a1] or lo[g, a1] > hi[h, a1] or lo[h, a2] > hi[g, a2] or lo[g, a2] > hi[h, a2]:
                continue
            if not can_collide(g, h, body, parent, contype, conaffinity, filter_parent):
                continue
            if count < out_pairs.shape[0]:
                out_pairs[count, 0] = min(g, h)
                out_pairs[count, 1] = max(g, h)
            count += 1
    return count


def filter_arrays(model: mujoco.MjModel) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(body, parent, contype, conaffinity) per geom of a compiled model, as int64 arrays (see module doc)."""
    weld = model.body_weldid.astype(np.int64)
    body = weld[model.geom_bodyid]
    parent = weld[model.body_parentid[body]]
    return body, parent, model.geom_contype.astype(np.int64), model.geom_conaffinity.astype(np.int64)

