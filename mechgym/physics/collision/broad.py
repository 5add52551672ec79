"""Broad phase: world-space AABBs and the candidate geom pairs, by a sort-and-sweep on one axis (few geoms) or a
uniform grid (many: work linear in the number of geoms wherever they lie), both in the same order.

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

from ..jit import kernel
from ..tolerances import SWEEP_LIMIT
from .narrow import CAPSULE, CYLINDER, PLANE, SPHERE


@kernel
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


@kernel
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


@kernel
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


@kernel
def _sort_order(lo, axis, order):
    """Insertion-sort the persistent permutation ``order`` in place by lo[:, axis] (stable): O(G + swaps),
    O(G) when the order barely changes from step to step (O(G^2) only for the first call on an unsorted scene)."""
    for i in range(1, order.size):
        g = order[i]
        key = lo[g, axis]
        j = i - 1
        while j >= 0 and lo[order[j], axis] > key:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = g


@kernel
def _overlap(lo, hi, g, h):
    """The closed AABBs of g and h intersect (touching counts)."""
    for i in range(3):
        if lo[h, i] > hi[g, i] or lo[g, i] > hi[h, i]:
            return False
    return True


@kernel
def sweep_pairs(lo, hi, axis, order, body, parent, contype, conaffinity, filter_parent, out_pairs):
    """Candidate pairs by sort-and-sweep along world ``axis`` (see ``sweep_axis``); returns their number.

    ``order`` (G,) int64 is a permutation of the geoms that the caller keeps between steps: it is
    insertion-sorted in place by lo[:, axis] (``_sort_order``). The sweep visits the geoms in that order and
    pairs each with the following ones whose interval on ``axis`` starts before its own ends, testing the
    other two axes and the filter: cost O(G + overlaps on the axis), about linear in G when the geoms spread
    along the axis, but O(G^1.5) for geoms spread over a floor and O(G^(5/3)) for geoms filling a cube (use
    ``grid_pairs`` there). Planes have lo = -inf and meet every geom. Pairs are written as rows (g1, g2),
    g1 < g2, of ``out_pairs`` (P, 2), in the order of the sweep: by the position in ``order`` of the pair's
    earlier geom, then of its later one. If more than P are found the rest are counted but not written (grow
    ``out_pairs`` to the returned count and call again).
    """
    _sort_order(lo, axis, order)
    n = order.size
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


def grid_scratch(geoms: int) -> np.ndarray:
    """The work array of ``grid_pairs`` for G geoms: one int64 array, laid out as
      [0]                  the AABB overlap tests made by the last call (the broad phase's work; an output)
      [1, 1 + G)           rank: position of each geom in ``order``
      [1 + G, 1 + 4G)      cell (G, 3): grid cell of a small geom's AABB corner lo; cell[g, 0] = LARGE: a large geom
      [1 + 4G, 1 + 5G)     items: the small geoms, hash bucket by hash bucket
      [1 + 5G, 1 + 6G)     large: the large geoms (infinite or wider than a cell), in the order of ``order``
      [1 + 6G, 2 + 6G + T) start: first entry of each of the T buckets in ``items`` (T: a power of two >= 2G)."""
    buckets = 2
    while buckets < 2 * geoms:
        buckets *= 2
    return np.zeros(2 + 6 * geoms + buckets, dtype=np.int64)


LARGE = np.iinfo(np.int64).min  # cell[g, 0] of a large geom (see grid_scratch)
_CELL_LIMIT = 2.0**40  # |cell index| is clamped here (a geom that far out shares the last cell with its neighbours)


@kernel
def _cell(x, size):
    """Index of the grid cell of size ``size`` (m) holding the coordinate x, floor(x / size), clamped."""
    return int(max(-_CELL_LIMIT, min(_CELL_LIMIT, math.floor(x / size))))


@kernel
def _bucket(x, y, z, buckets):
    """Hash bucket of the cell (x, y, z) (spatial hashing with three large primes, modulo T = ``buckets``)."""
    return ((x * 73856093) ^ (y * 19349663) ^ (z * 83492791)) & (buckets - 1)


@kernel
def _emit(g, h, count, out_pairs):
    """Write the pair (min, max) as row ``count`` of ``out_pairs`` if it fits; returns count + 1."""
    if count < out_pairs.shape[0]:
        out_pairs[count, 0] = min(g, h)
        out_pairs[count, 1] = max(g, h)
    return count + 1


@kernel
def grid_pairs(lo, hi, axis, order, body, parent, contype, conaffinity, filter_parent, grid, out_pairs):
    """The pairs of ``sweep_pairs`` (the same set, in the same order, ``order`` sorted the same way) from a
    uniform grid: work about linear in G wherever the geoms are (a floor, a cube), for geoms of similar sizes.

    Cell size c = twice the mean over the finite AABBs of their largest width. A geom whose AABB is at most c
    wide on every axis is small and lives in the cell floor(lo / c) of its corner lo; the others (planes, a big
    floor box) are large. If small geoms g and h overlap, then on each axis lo_g - w <= lo_h <= hi_g, w being
    the largest width of a small geom, so h lies in one of the cells floor((lo_g - w) / c) .. floor(hi_g / c)
    (one to three per axis; division by c > 0 is monotonic in floating point, and w is taken 1e-6 larger
    against the rounding of the widths). Each small geom is paired with the small geoms of those cells (found
    by spatial hashing into T buckets, a cell at a time) and with the large geoms; each large geom with every
    geom. Every pair is tested once, from its geom earlier in ``order``, and each geom's partners are
    insertion-sorted by their position in ``order``, which gives the sweep's order. ``grid``: the work array
    (``grid_scratch(G)``), grid[0] the AABB overlap tests made. Overflow of ``out_pairs`` as in ``sweep_pairs``,
    except that the rows written are then not the first P pairs of that order.
    """
    _sort_order(lo, axis, order)
    n = order.size
    rank = grid[1:1 + n]
    cell = grid[1 + n:1 + 4 * n].reshape((n, 3))
    items, large, start = grid[1 + 4 * n:1 + 5 * n], grid[1 + 5 * n:1 + 6 * n], grid[1 + 6 * n:]
    buckets = start.size - 1
    width, finite = 0.0, 0
    for i in range(n):
        g = order[i]
        rank[g] = i
        w = max(hi[g, 0] - lo[g, 0], hi[g, 1] - lo[g, 1], hi[g, 2] - lo[g, 2])
        if math.isfinite(w):
            width += w
            finite += 1
    size = 2.0 * width / max(finite, 1)
    start[:] = 0
    nlarge, reach = 0, 0.0
    for i in range(n):
        g = order[i]
        w = max(hi[g, 0] - lo[g, 0], hi[g, 1] - lo[g, 1], hi[g, 2] - lo[g, 2])
        if not w <= size or size <= 0.0:  # NaN widths too
            cell[g, 0] = LARGE
            large[nlarge] = g
            nlarge += 1
            continue
        reach = max(reach, w)
        for k in range(3):
            cell[g, k] = _cell(lo[g, k], size)
        start[_bucket(cell[g, 0], cell[g, 1], cell[g, 2], buckets) + 1] += 1
    reach *= 1.0 + 1e-6
    for b in range(1, start.size):
        start[b] += start[b - 1]
    for i in range(n):  # counting sort into the buckets; start[b] runs to the end of bucket b meanwhile
        g = order[i]
        if cell[g, 0] != LARGE:
            b = _bucket(cell[g, 0], cell[g, 1], cell[g, 2], buckets)
            items[start[b]] = g
            start[b] += 1
    for b in range(start.size - 1, 0, -1):
        start[b] = start[b - 1]
    start[0] = 0
    count, tests = 0, 0
    for i in range(n):
        g = order[i]
        first = count
        if cell[g, 0] == LARGE:
            for j in range(i + 1, n):
                h = order[j]
                tests += 1
                if _overlap(lo, hi, g, h) and can_collide(g, h, body, parent, contype, conaffinity, filter_parent):
                    count = _emit(g, h, count, out_pairs)
            continue
        for x in range(_cell(lo[g, 0] - reach, size), _cell(hi[g, 0], size) + 1):
            for y in range(_cell(lo[g, 1] - reach, size), _cell(hi[g, 1], size) + 1):
                for z in range(_cell(lo[g, 2] - reach, size), _cell(hi[g, 2], size) + 1):
                    b = _bucket(x, y, z, buckets)
                    for e in range(start[b], start[b + 1]):
                        h = items[e]
                        if rank[h] <= i or cell[h, 0] != x or cell[h, 1] != y or cell[h, 2] != z:
                            continue
                        tests += 1
                        if _overlap(lo, hi, g, h) and can_collide(g, h, body, parent, contype, conaffinity,
                                                                  filter_parent):
                            count = _emit(g, h, count, out_pairs)
        for e in range(nlarge):
            h = large[e]
            if rank[h] <= i:
                continue
            tests += 1
            if _overlap(lo, hi, g, h) and can_collide(g, h, body, parent, contype, conaffinity, filter_parent):
                count = _emit(g, h, count, out_pairs)
        # g's partners by their position in ``order`` (a handful: insertion sort)
        for r in range(first + 1, min(count, out_pairs.shape[0])):
            p0, p1 = out_pairs[r, 0], out_pairs[r, 1]
            key = rank[p0 + p1 - g]
            q = r - 1
            while q >= first and rank[out_pairs[q, 0] + out_pairs[q, 1] - g] > key:
                out_pairs[q + 1, 0], out_pairs[q + 1, 1] = out_pairs[q, 0], out_pairs[q, 1]
                q -= 1
            out_pairs[q + 1, 0], out_pairs[q + 1, 1] = p0, p1
    grid[0] = tests
    return count


@kernel
def broad_pairs(lo, hi, axis, order, body, parent, contype, conaffinity, filter_parent, grid, out_pairs):
    """The candidate pairs (``sweep_pairs``' set and order) by the sweep for up to SWEEP_LIMIT geoms, else by
    ``grid_pairs``; returns their number."""
    if order.size <= SWEEP_LIMIT:
        return sweep_pairs(lo, hi, axis, order, body, parent, contype, conaffinity, filter_parent, out_pairs)
    return grid_pairs(lo, hi, axis, order, body, parent, contype, conaffinity, filter_parent, grid, out_pairs)


def filter_arrays(model: mujoco.MjModel) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(body, parent, contype, conaffinity) per geom of a compiled model, as int64 arrays (see module doc)."""
    weld = model.body_weldid.astype(np.int64)
    body = weld[model.geom_bodyid]
    parent = weld[model.body_parentid[body]]
    return body, parent, model.geom_contype.astype(np.int64), model.geom_conaffinity.astype(np.int64)

