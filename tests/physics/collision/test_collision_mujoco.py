"""Cross-check against MuJoCo's own collision functions on random poses of two-geom MJCF scenes.

For every pair with penetration, the deepest contact (least signed distance), its normal and its point
(both engines report the point midway between the surfaces) must agree with ``mj_forward``'s contacts.
Allowed differences, excluded or bounded explicitly:
- box-box: both are exact separating-axis depths; MuJoCo takes the least penetrating axis while ours
  prefers a face axis unless an edge (or the other box's face) is better by AXIS_REL_TOL/AXIS_ABS_TOL, so where the
  two best axes are within that window our depth s may be deeper than MuJoCo's s*: s* <= AXIS_REL_TOL s + AXIS_ABS_TOL.
  The point counts differ too (MuJoCo reduces the clipped polygon; we keep every clipped point).
- capsule-box with the capsule's axis passing through the box (depth > radius): neither is a minimum
  translation there (MuJoCo under-reports the depth); compared only when the axis is outside the box.
- Point sets beyond the deepest contact are not compared (different reduction rules).
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from collision_testing import contacts, geom, random_quat, rot, sat_separations, two_geom_scene

from mechgym.physics.collision.toi import support_extent
from mechgym.physics.tolerances import AXIS_ABS_TOL, AXIS_REL_TOL

SIZES = {"plane": "0 0 1", "sphere": "0.1", "capsule": "0.08 0.15", "cylinder": "0.1 0.15", "box": "0.1 0.15 0.2"}
PAIRS = [("plane", "sphere"), ("plane", "capsule"), ("plane", "cylinder"), ("plane", "box"), ("sphere", "sphere"),
         ("sphere", "capsule"), ("sphere", "cylinder"), ("sphere", "box"), ("capsule", "capsule"), ("capsule", "box"),
         ("box", "box")]
SAMPLES = 600
TOL = 1e-12  # m: both sides are closed-form; the observed deviations are a few 1e-16


def _compare(model, data, type1, type2):
    """Check the pose in ``data``: returns |our deepest dist - MuJoCo's| (m) when compared exactly, else None."""
    mujoco.mj_forward(model, data)
    theirs = data.contact[:data.ncon]
    assert np.all(theirs.geom1 == 0) and np.all(theirs.geom2 == 1)  # MuJoCo orders by type as we do
    ours = contacts(geom(model, data, 0), geom(model, data, 1), margin=0.0, check_swap=type1 != "box")
    assert (len(ours) > 0) == (data.ncon > 0)
    if data.ncon == 0:
        return None
    i, j = np.argmin(theirs.dist), np.argmin(ours.dist)
    mj_dist, mj_normal = theirs.dist[i], theirs.frame[i, :3]
    if type1 == "capsule" and type2 == "box" and ours.dist[j] <= -model.geom_size[0, 0]:
        return None  # capsule axis through the box
    if type1 == "box":
        s = sat_separations(*(a for g in (0, 1) for a in (model.geom_size[g], data.geom_xpos[g],
                                                      data.geom_xmat[g].reshape(3, 3))))
        best, second = sorted(s)[-1], sorted(s)[-2]
        assert mj_dist == pytest.approx(best, abs=TOL) or best == s[2]  # MuJoCo: exact SAT (or an edge)
        if best - second <= ((1.0 - AXIS_REL_TOL) * abs(best) + AXIS_ABS_TOL) / AXIS_REL_TOL:
            # inside the bias window: our axis s satisfies best <= AXIS_REL_TOL s + AXIS_ABS_TOL
            assert (best - AXIS_ABS_TOL) / AXIS_REL_TOL - TOL <= ours.dist[j] <= 0.0
            return None
    assert ours.dist[j] == pytest.approx(mj_dist, abs=TOL)
    np.testing.assert_allclose(ours.normal[j], mj_normal, atol=1e-9)
    # MuJoCo's deepest point is one of ours (several may share its depth, e.g. a box's bottom corners)
    same_depth = np.abs(ours.dist - mj_dist) <= TOL
    assert np.min(np.linalg.norm(ours.pos[same_depth] - theirs.pos[i], axis=1)) <= TOL
    return abs(ours.dist[j] - mj_dist)


@pytest.mark.parametrize(("type1", "type2"), PAIRS)
def test_deepest_contact_matches_mujoco(type1, type2):
    model = two_geom_scene(type1, SIZES[type1], type2, SIZES[type2])
    data = mujoco.MjData(model)
    rng = np.random.default_rng(sum(map(ord, type1 + type2)))
    deviations = []
    for _ in range(SAMPLES):
        if type1 == "plane":
            data.qpos[:3] = (0.0, 0.0, rng.uniform(-0.05, 0.3))
            data.qpos[3:7] = random_quat(rng)
        else:
            data.qpos[:3] = 0.0
            data.qpos[3:7] = random_quat(rng)
            data.qpos[7:10] = rng.uniform(-0.35, 0.35, 3)
            data.qpos[10:14] = random_quat(rng)
        deviation = _compare(model, data, type1, type2)
        if deviation is not None:
            deviations.append(deviation)
    assert len(deviations) >= 50, len(deviations)
    print(f"{type1}-{type2}: {len(deviations)} penetrating poses, max |dist - MuJoCo| = {max(deviations):.1e} m")


@pytest.mark.parametrize(("type1", "type2"), [("plane", "box"), ("plane", "capsule"), ("plane", "cylinder"),
                                              ("box", "box"), ("capsule", "box")])
def test_near_resting_contacts_match_mujoco(type1, type2):
    """A geom upright or lying, tilted by ~0.05 rad, 0-2 mm into the top of a plane or a box at rest (the box
    under the capsule for capsule-box): a settled scene, where faces are nearly parallel and points tie."""
    model = two_geom_scene(type1, SIZES[type1], type2, SIZES[type2])
    data = mujoco.MjData(model)
    rng = np.random.default_rng(sum(map(ord, type1 + type2 + "rest")))
    base, rester = (1, 0) if type1 == "capsule" else (0, 1)
    top = 0.0 if type1 == "plane" else model.geom_size[base, 2]
    deviations = []
    for _ in range(SAMPLES // 2):
        lying = rot((1.0, 0.0, 0.0), np.pi / 2 * rng.integers(0, 2))
        mat = rot(rng.normal(size=3), abs(rng.normal(0.0, 0.05))) @ rot((0.0, 0.0, 1.0), rng.uniform(0, 7)) @ lying
        quat = np.empty(4)
        mujoco.mju_mat2Quat(quat, mat.ravel())
        low = support_extent(int(model.geom_type[rester]), model.geom_size[rester], mat, np.array([0.0, 0.0, 1.0]))
        xy = rng.uniform(-0.15, 0.15, 2) if type1 != "plane" else (0.0, 0.0)
        adr = 7 * (rester - (type1 == "plane"))  # qpos of the resting geom's free body
        data.qpos[adr:adr + 7] = (xy[0], xy[1], top + low - rng.uniform(0.0, 2e-3), *quat)
        if type1 != "plane":
            data.qpos[7 * base:7 * base + 7] = (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
        deviation = _compare(model, data, type1, type2)
        if deviation is not None:
            deviations.append(deviation)
    assert len(deviations) >= 100, len(deviations)
    print(f"resting {type1}-{type2}: {len(deviations)} poses, max |dist - MuJoCo| = {max(deviations):.1e} m")
