"""Broad phase: AABBs per geom type and sort-and-sweep against brute force, with MuJoCo's filters."""

from __future__ import annotations

import itertools
import math

import mujoco
import numpy as np
from collision_testing import random_quat, rot

from mechgym.physics.collision import BOX, CAPSULE, CYLINDER, PLANE, SPHERE
from mechgym.physics.collision.broad import (
    broad_pairs,
    filter_arrays,
    geom_aabbs,
    grid_pairs,
    grid_scratch,
    sweep_axis,
    sweep_pairs,
)
from mechgym.physics.tolerances import SWEEP_LIMIT


def _aabbs(types, sizes, pos, mats, margin=0.0):
    lo = np.empty((len(types), 3))
    hi = np.empty((len(types), 3))
    geom_aabbs(np.asarray(types, dtype=np.int64), np.asarray(sizes, float), np.asarray(pos, float),
               np.ascontiguousarray(mats, float), margin, lo, hi)
    return lo, hi


def test_aabbs_are_the_exact_extents():
    mat = rot((0.3, -0.5, 1.0), 0.9)
    types = [SPHERE, CAPSULE, BOX, CYLINDER, PLANE]
    sizes = [(0.1, 0, 0), (0.05, 0.2, 0), (0.1, 0.2, 0.3), (0.1, 0.15, 0), (0, 0, 1)]
    pos = np.array([[1.0, 2.0, 3.0]] * 5)
    lo, hi = _aabbs(types, sizes, pos, np.array([mat] * 5), margin=1e-4)
    # surface samples of each shape, in local coordinates
    u = np.linspace(0.0, 2.0 * math.pi, 4001)
    ring = np.stack([np.cos(u), np.sin(u), 0 * u], axis=1)
    corners = np.array(list(itertools.product((-1, 1), repeat=3)), dtype=float)
    samples = {
        1: np.concatenate([0.05 * s + (0, 0, z) for z in (-0.2, 0.2) for s in _sphere_points()]),
        2: corners * (0.1, 0.2, 0.3),
        3: np.concatenate([0.1 * ring + (0, 0, z) for z in (-0.15, 0.15)]),
    }
    np.testing.assert_allclose(lo[0], pos[0] - 0.1 - 1e-4, atol=1e-15)
    for g, local in samples.items():
        world = pos[g] + local @ mat.T
        assert np.all(world.min(axis=0) >= lo[g] + 1e-4 - 1e-12) and np.all(world.max(axis=0) <= hi[g] - 1e-4 + 1e-12)
        tol = 1e-15 if g == 2 else 2e-5  # corners are exact; curved surfaces are sampled
        np.testing.assert_allclose(world.min(axis=0), lo[g] + 1e-4, atol=tol)
        np.testing.assert_allclose(world.max(axis=0), hi[g] - 1e-4, atol=tol)
    assert np.all(np.isinf(lo[4])) and np.all(lo[4] < 0) and np.all(np.isinf(hi[4])) and np.all(hi[4] > 0)


def _sphere_points():
    rng = np.random.default_rng(0)
    p = rng.normal(size=(20000, 3))
    p /= np.linalg.norm(p, axis=1)[:, None]
    axes = np.concatenate([np.eye(3), -np.eye(3)])  # the extremes themselves
    return [np.concatenate([p, axes])]


def _random_scene(rng, bodies):
    """MJCF: a floor plane, a static box, and ``bodies`` free bodies (each with a child body) of random geoms."""
    parts = ['<geom type="plane" size="0 0 1"/>', '<geom type="box" size="0.3 0.3 0.3" pos="0 0 0.3"/>']
    kinds = ["sphere", "capsule", "box", "cylinder"]
    sizes = {"sphere": "0.1", "capsule": "0.05 0.1", "box": "0.1 0.05 0.08", "cylinder": "0.08 0.05"}
    for b in range(bodies):
        k1, k2 = rng.choice(kinds, 2)
        bits = rng.integers(0, 4, 4)
        x, y, z = rng.uniform(-1.5, 1.5), rng.uniform(-1.5, 1.5), rng.uniform(0.0, 1.0)
        parts.append(
            f'<body name="b{b}" pos="{x} {y} {z}"><freejoint/>'
            f'<geom type="{k1}" size="{sizes[k1]}" contype="{bits[0]}" conaffinity="{bits[1]}"/>'
            f'<body pos="0.12 0 0"><joint type="hinge"/>'
            f'<geom type="{k2}" size="{sizes[k2]}" contype="{bits[2]}" conaffinity="{bits[3]}"/></body></body>')
    return mujoco.MjModel.from_xml_string(f"<mujoco><worldbody>{''.join(parts)}</worldbody></mujoco>")


def _brute_force(lo, hi, body, parent, contype, conaffinity, filter_parent):
    pairs = set()
    for g1, g2 in itertools.combinations(range(lo.shape[0]), 2):
        if np.any(lo[g1] > hi[g2]) or np.any(lo[g2] > hi[g1]) or body[g1] == body[g2]:
            continue
        if not (contype[g1] & conaffinity[g2] or contype[g2] & conaffinity[g1]):
            continue
        if filter_parent and body[g1] and body[g2] and (parent[g1] == body[g2] or parent[g2] == body[g1]):
            continue
        pairs.add((g1, g2))
    return pairs


def _random_pose_aabbs(rng, model):
    """AABBs (margin 0.1 mm) of ``model``'s geoms with every joint at a random position (free joints: a random
    orientation at their initial place)."""
    data = mujoco.MjData(model)
    for j in range(model.njnt):
        adr = model.jnt_qposadr[j]
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            data.qpos[adr + 3:adr + 7] = random_quat(rng)
        else:
            data.qpos[adr] = rng.uniform(-3.0, 3.0)
    mujoco.mj_kinematics(model, data)
    return _aabbs(model.geom_type, model.geom_size, data.geom_xpos, data.geom_xmat.reshape(-1, 3, 3), 1e-4)


def test_sweep_finds_exactly_the_overlapping_filtered_pairs():
    rng = np.random.default_rng(7)
    for trial in range(6):
        model = _random_scene(rng, 30)
        lo, hi = _random_pose_aabbs(rng, model)
        body, parent, contype, conaffinity = filter_arrays(model)
        assert body[0] == body[1] == 0  # the plane and the static box
        order = rng.permutation(model.ngeom).astype(np.int64)
        for axis, filter_parent in ((sweep_axis(lo, hi), True), (0, False), (1, True), (2, True)):
            out = np.zeros((4, 2), dtype=np.int64)
            count = sweep_pairs(lo, hi, axis, order, body, parent, contype, conaffinity, filter_parent, out)
            if count > out.shape[0]:
                out = np.zeros((count, 2), dtype=np.int64)
                assert sweep_pairs(lo, hi, axis, order, body, parent, contype, conaffinity, filter_parent, out) == count
            expected = _brute_force(lo, hi, body, parent, contype, conaffinity, filter_parent)
            found = [tuple(p) for p in out[:count]]
            assert len(found) == len(set(found)) and set(found) == expected
            assert np.all(np.diff(lo[order, axis]) >= 0)
        assert trial > 0 or any(p[0] == 0 for p in expected)  # the plane takes part


def _pairs(function, lo, hi, axis, order, filters, *grid):
    """All pairs of one broad-phase call (growing the output on overflow) and the order after it."""
    out = np.zeros((4, 2), dtype=np.int64)
    count = function(lo, hi, axis, order.copy(), *filters, *grid, out)
    if count > out.shape[0]:
        out = np.zeros((count, 2), dtype=np.int64)
    order = order.copy()
    assert function(lo, hi, axis, order, *filters, *grid, out) == count
    return [tuple(p) for p in out[:count]], order


def test_grid_gives_the_sweeps_pairs_in_the_sweeps_order():
    rng = np.random.default_rng(11)
    for trial in range(6):
        model = _random_scene(rng, 40)
        lo, hi = _random_pose_aabbs(rng, model)
        if trial % 2:  # ties: geoms stacked on a lattice, their AABBs touching exactly
            lo, hi = np.round(lo, 1), np.round(hi, 1)
        body, parent, contype, conaffinity = filter_arrays(model)
        order = rng.permutation(model.ngeom).astype(np.int64)
        for axis, filter_parent in ((sweep_axis(lo, hi), True), (0, False), (2, True)):
            filters = (body, parent, contype, conaffinity, filter_parent)
            swept, swept_order = _pairs(sweep_pairs, lo, hi, axis, order, filters)
            gridded, grid_order = _pairs(grid_pairs, lo, hi, axis, order, filters, grid_scratch(model.ngeom))
            assert gridded == swept and np.array_equal(grid_order, swept_order)
            assert set(swept) == _brute_force(lo, hi, *filters)
            assert _pairs(broad_pairs, lo, hi, axis, order, filters, grid_scratch(model.ngeom))[0] == swept


def _floor_of_boxes(rng, count):
    """AABBs of a plane and ``count`` boxes (half size 5 cm, random yaw) strewn over a square floor at a fixed
    density (about one per 0.04 m^2), each box its own body; filters that let every box meet every geom."""
    side = 0.2 * math.sqrt(count)
    types = np.array([PLANE] + [BOX] * count, dtype=np.int64)
    sizes = np.array([(0.0, 0.0, 1.0)] + [(0.05, 0.05, 0.05)] * count)
    pos = np.zeros((count + 1, 3))
    pos[1:, :2] = rng.uniform(0.0, side, (count, 2))
    pos[1:, 2] = 0.05
    mats = np.array([np.eye(3)] + [rot((0.0, 0.0, 1.0), a) for a in rng.uniform(0.0, math.pi, count)])
    lo, hi = _aabbs(types, sizes, pos, mats, 1e-4)
    ones = np.ones(count + 1, dtype=np.int64)
    return lo, hi, (np.arange(count + 1, dtype=np.int64), np.zeros(count + 1, dtype=np.int64), ones, ones, True)


def test_grid_work_grows_linearly_with_the_number_of_geoms():
    rng = np.random.default_rng(5)
    per_geom = []
    for count in (100, 400, 1600, 6400):
        lo, hi, filters = _floor_of_boxes(rng, count)
        grid = grid_scratch(count + 1)
        order = np.arange(count + 1, dtype=np.int64)
        axis = sweep_axis(lo, hi)
        pairs, _ = _pairs(grid_pairs, lo, hi, axis, order, filters, grid)
        assert count // 2 < len(pairs) < 4 * count  # every box meets the plane, a few meet each other
        per_geom.append(grid[0] / (count + 1))
        if count > SWEEP_LIMIT:  # broad_pairs takes the grid here
            assert _pairs(broad_pairs, lo, hi, axis, order, filters, grid)[0] == pairs
            assert _pairs(sweep_pairs, lo, hi, axis, order, filters)[0] == pairs
    # tests per geom (the plane's G - 1 shared out, plus each box's neighbours in a few cells): about constant
    assert max(per_geom) < 1.3 * min(per_geom)
    assert count > SWEEP_LIMIT


def test_mujoco_filter_agrees_on_a_colliding_scene():
    # every geom pair that MuJoCo reports in contact must be among our candidates
    rng = np.random.default_rng(3)
    model = _random_scene(rng, 40)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    lo, hi = _aabbs(model.geom_type, model.geom_size, data.geom_xpos, data.geom_xmat.reshape(-1, 3, 3), 1e-4)
    out = np.zeros((2000, 2), dtype=np.int64)
    count = sweep_pairs(lo, hi, sweep_axis(lo, hi), np.arange(model.ngeom), *filter_arrays(model), True, out)
    ours = {tuple(p) for p in out[:count]}
    theirs = {tuple(sorted((int(c.geom1), int(c.geom2)))) for c in data.contact[:data.ncon]}
    assert data.ncon > 5 and theirs <= ours


def test_sweep_axis_is_the_axis_of_largest_spread_ignoring_planes():
    types = [PLANE, SPHERE, SPHERE, SPHERE]
    pos = [(0.0, 0.0, 0.0), (0.1, -2.0, 0.3), (0.0, 1.0, 0.2), (-0.1, 3.0, 0.1)]
    lo, hi = _aabbs(types, [(0, 0, 1), (0.1, 0, 0), (0.1, 0, 0), (0.1, 0, 0)], pos, np.array([np.eye(3)] * 4))
    assert sweep_axis(lo, hi) == 1
