"""Closed-form contacts of the plane, sphere, capsule, cylinder and sphere/capsule-box pairs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from collision_testing import MARGIN, collide_count, contacts, rot

from mechgym.physics.collision import BOX, CAPSULE, CYLINDER, PLANE, SPHERE, supported_pair

I3 = np.eye(3)
FLOOR = (PLANE, (0.0, 0.0, 1.0), (0.0, 0.0, 0.0), I3)
TIGHT = 1e-15


def test_supported_pairs_are_symmetric_and_named():
    supported = [(PLANE, SPHERE), (PLANE, CAPSULE), (PLANE, CYLINDER), (PLANE, BOX), (SPHERE, SPHERE),
                 (SPHERE, CAPSULE), (SPHERE, CYLINDER), (SPHERE, BOX), (CAPSULE, CAPSULE), (CAPSULE, BOX),
                 (BOX, BOX)]
    types = (PLANE, SPHERE, CAPSULE, CYLINDER, BOX)
    for t1 in types:
        for t2 in types:
            expected = (min(t1, t2), max(t1, t2)) in supported
            assert supported_pair(t1, t2) == expected == supported_pair(t2, t1)
            if not expected:  # collide refuses it
                pair = ((t1, (0.1, 0.1, 0.1), (0.0, 0.0, 0.0), I3), (t2, (0.1, 0.1, 0.1), (0.0, 0.0, 0.0), I3))
                assert collide_count(*pair)[0] == -1


@pytest.mark.parametrize("height", [0.3, 0.1 + 0.5e-4, 0.07])
def test_sphere_on_tilted_plane(height):
    r = 0.1
    plane_mat = rot((1.0, 2.0, 0.5), 0.4)
    n = plane_mat[:, 2]
    origin = np.array([0.3, -0.2, 0.1])
    centre = origin + height * n + 0.05 * plane_mat[:, 0]
    c = contacts((PLANE, (1.0, 1.0, 1.0), origin, plane_mat), (SPHERE, (r, 0.0, 0.0), centre, I3))
    if height - r >= MARGIN:
        assert len(c) == 0
        return
    assert len(c) == 1
    assert c.dist[0] == pytest.approx(height - r, abs=1e-15)
    np.testing.assert_allclose(c.normal[0], n, atol=TIGHT)
    # midway between the sphere's lowest point and the plane
    np.testing.assert_allclose(c.pos[0], centre - (r + 0.5 * (height - r)) * n, atol=1e-15)


def test_box_resting_flat_on_plane_has_its_four_bottom_corners():
    half = np.array([0.1, 0.2, 0.3])
    gap = -2e-5
    c = contacts(FLOOR, (BOX, half, (1.0, 2.0, 0.3 + gap), I3))
    assert len(c) == 4
    np.testing.assert_allclose(c.dist, gap, atol=1e-15)
    expected = {(1.0 + sx * 0.1, 2.0 + sy * 0.2) for sx in (-1, 1) for sy in (-1, 1)}
    assert {(round(x, 12), round(y, 12)) for x, y in c.pos[:, :2]} == expected
    np.testing.assert_allclose(c.pos[:, 2], 0.5 * gap, atol=1e-15)
    np.testing.assert_allclose(c.normal, np.tile([0.0, 0.0, 1.0], (4, 1)), atol=0)
    assert sorted(c.feature) == [0, 1, 2, 3]  # the corners with s_z = - (bit 2 clear)


def test_box_tilted_on_one_edge_has_two_points():
    half = np.array([0.1, 0.2, 0.3])
    mat = rot((1.0, 0.0, 0.0), 0.3)
    # lowest edge: the corners at y = +-... with the lowest z; height of the box centre above it
    low = min(abs(mat[2, 1]) * half[1] + abs(mat[2, 2]) * half[2], 1.0)
    centre = np.array([0.0, 0.0, low - 3e-5])
    c = contacts(FLOOR, (BOX, half, centre, mat))
    assert len(c) == 2
    np.testing.assert_allclose(c.dist, -3e-5, atol=1e-15)
    np.testing.assert_allclose(sorted(c.pos[:, 0]), [-0.1, 0.1], atol=1e-15)


@pytest.mark.parametrize("angle", [0.0, 0.2])
def test_capsule_on_plane(angle):
    r, half = 0.05, 0.2
    mat = rot((1.0, 0.0, 0.0), math.pi / 2 - angle)  # angle = tilt of the axis from the floor
    z = 0.05 + half * math.sin(angle) - 1e-5
    c = contacts(FLOOR, (CAPSULE, (r, half, 0.0), (0.0, 0.0, z), mat))
    lowest = z - half * math.sin(angle) - r
    if angle == 0.0:
        assert len(c) == 2
        np.testing.assert_allclose(c.dist, lowest, atol=1e-15)
        np.testing.assert_allclose(sorted(c.pos[:, 1]), [-half, half], atol=1e-15)
    else:
        assert len(c) == 1
        assert c.dist[0] == pytest.approx(lowest, abs=1e-15)


def test_cylinder_on_plane_flat_side_and_rim():
    r, half = 0.1, 0.05
    # standing on its flat cap: four rim points
    c = contacts(FLOOR, (CYLINDER, (r, half, 0.0), (0.0, 0.0, half - 1e-5), I3))
    assert len(c) == 4
    np.testing.assert_allclose(c.dist, -1e-5, atol=1e-15)
    np.testing.assert_allclose(np.hypot(c.pos[:, 0], c.pos[:, 1]), r, atol=1e-15)
    assert sorted(c.feature) == [6, 7, 8, 9]
    # lying on its side: one rim point per cap
    mat = rot((1.0, 0.0, 0.0), math.pi / 2)
    c = contacts(FLOOR, (CYLINDER, (r, half, 0.0), (0.0, 0.0, r - 2e-5), mat))
    assert len(c) == 2
    np.testing.assert_allclose(c.dist, -2e-5, atol=1e-15)
    np.testing.assert_allclose(sorted(c.pos[:, 1]), [-half, half], atol=1e-15)
    # leaning on its rim: dist = z - h cos(t) - r sin(t)
    tilt = 0.3
    mat = rot((1.0, 0.0, 0.0), tilt)
    z = half * math.cos(tilt) + r * math.sin(tilt) - 4e-5
    c = contacts(FLOOR, (CYLINDER, (r, half, 0.0), (0.0, 0.0, z), mat))
    assert len(c) == 1
    assert c.dist[0] == pytest.approx(-4e-5, abs=1e-15)
    # nearly flat (rim spread 2 r sin(t) = 1.2e-4 > margin): the lowest point and the two rim points at
    # +-120 deg, 1.5 r sin(t) = 9e-5 higher, a triangle of support
    tilt = math.asin(6e-4)
    mat = rot((1.0, 0.0, 0.0), tilt)
    z = half * math.cos(tilt) + r * math.sin(tilt) - 1e-6
    c = contacts(FLOOR, (CYLINDER, (r, half, 0.0), (0.0, 0.0, z), mat))
    assert sorted(c.feature) == [0, 1, 2]
    np.testing.assert_allclose(sorted(c.dist), [-1e-6, 9e-5 - 1e-6, 9e-5 - 1e-6], atol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(c.pos - c.pos.mean(axis=0), axis=1), r, atol=1e-6)


def test_sphere_sphere():
    d = np.array([0.1, -0.2, 0.15])
    c = contacts((SPHERE, (0.1, 0, 0), (0.0, 0.0, 0.0), I3), (SPHERE, (0.2, 0, 0), d, I3))
    length = np.linalg.norm(d)
    assert c.dist[0] == pytest.approx(length - 0.3, abs=1e-15)
    np.testing.assert_allclose(c.normal[0], d / length, atol=1e-15)
    np.testing.assert_allclose(c.pos[0], d / length * (0.1 + 0.5 * (length - 0.3)), atol=1e-15)


@pytest.mark.parametrize(("centre", "dist", "normal"), [
    ((0.13, 0.0, 0.05), 0.13 - 0.15, (-1.0, 0.0, 0.0)),  # beside the axis: sphere (0.1) + capsule (0.05)
    ((0.0, 0.0, 0.3), 0.1 - 0.15, (0.0, 0.0, -1.0)),  # beyond the +z end (half length 0.2)
])
def test_sphere_capsule(centre, dist, normal):
    c = contacts((SPHERE, (0.1, 0, 0), centre, I3), (CAPSULE, (0.05, 0.2, 0), (0.0, 0.0, 0.0), I3))
    assert len(c) == 1
    assert c.dist[0] == pytest.approx(dist, abs=1e-15)
    np.testing.assert_allclose(c.normal[0], normal, atol=1e-15)


@pytest.mark.parametrize(("local", "dist", "n_out"), [
    ((0.0, 0.05, 0.35), 0.35 - 0.3 - 0.1, (0.0, 0.0, 1.0)),  # face region
    ((0.2, 0.3, 0.0), math.hypot(0.1, 0.1) - 0.1, (1 / math.sqrt(2), 1 / math.sqrt(2), 0.0)),  # edge region
    ((0.13, -0.23, 0.32), math.sqrt(0.03**2 + 0.03**2 + 0.02**2) - 0.1,
     np.array([0.03, -0.03, 0.02]) / math.sqrt(0.0022)),  # vertex region
    ((0.0, 0.15, 0.05), -(0.2 - 0.15) - 0.1, (0.0, 1.0, 0.0)),  # centre inside: nearest face +y
])
def test_sphere_box_regions(local, dist, n_out):
    half = np.array([0.1, 0.2, 0.3])
    mat = rot((0.3, -1.0, 0.4), 0.7)
    centre = np.array([0.5, 0.2, -0.1])
    sphere = centre + mat @ np.asarray(local)
    c = contacts((SPHERE, (0.1, 0, 0), sphere, I3), (BOX, half, centre, mat), margin=1.0)
    assert len(c) == 1
    assert c.dist[0] == pytest.approx(dist, abs=1e-15)
    np.testing.assert_allclose(c.normal[0], -(mat @ np.asarray(n_out)), atol=1e-15)


@pytest.mark.parametrize(("local", "dist", "n_out", "feature"), [
    ((0.0, 0.25, 0.05), 0.25 - 0.2 - 0.1, (0.0, 1.0, 0.0), 0),  # beside the curved side
    ((0.05, 0.0, 0.4), 0.4 - 0.3 - 0.1, (0.0, 0.0, 1.0), 2),  # above the +z cap
    ((0.25, 0.0, -0.34), math.hypot(0.05, 0.04) - 0.1, (0.05 / math.hypot(0.05, 0.04), 0.0,
                                                        -0.04 / math.hypot(0.05, 0.04)), 3),  # below, by the rim
    ((0.0, 0.15, 0.1), -(0.2 - 0.15) - 0.1, (0.0, 1.0, 0.0), 5),  # centre inside, nearer the side
    ((0.02, 0.0, -0.27), -(0.3 - 0.27) - 0.1, (0.0, 0.0, -1.0), 6),  # centre inside, nearer the -z cap
])
def test_sphere_cylinder_regions(local, dist, n_out, feature):
    mat = rot((0.3, -1.0, 0.4), 0.7)
    centre = np.array([0.5, 0.2, -0.1])
    c = contacts((SPHERE, (0.1, 0, 0), centre + mat @ np.asarray(local), I3), (CYLINDER, (0.2, 0.3, 0), centre, mat),
                 margin=1.0)
    assert len(c) == 1 and c.feature[0] == feature
    assert c.dist[0] == pytest.approx(dist, abs=1e-15)
    np.testing.assert_allclose(c.normal[0], -(mat @ np.asarray(n_out)), atol=1e-15)


def test_capsules_parallel_give_the_overlap_ends_and_crossed_give_one_point():
    r1, r2 = 0.05, 0.04
    along_x = rot((0.0, 1.0, 0.0), math.pi / 2)
    gap = -1e-5
    # side by side along x, offset by 0.1 along the axis: overlap x in [-0.1, 0.2]
    c = contacts((CAPSULE, (r1, 0.2, 0), (0.0, 0.0, 0.0), along_x),
                 (CAPSULE, (r2, 0.2, 0), (0.1, 0.0, r1 + r2 + gap), along_x))
    assert len(c) == 2
    np.testing.assert_allclose(c.dist, gap, atol=1e-15)
    np.testing.assert_allclose(sorted(c.pos[:, 0]), [-0.1, 0.2], atol=1e-15)
    np.testing.assert_allclose(c.normal, np.tile([0.0, 0.0, 1.0], (2, 1)), atol=1e-15)
    # crossed at right angles, one above the other
    along_y = rot((1.0, 0.0, 0.0), math.pi / 2)
    c = contacts((CAPSULE, (r1, 0.2, 0), (0.0, 0.0, 0.0), along_x),
                 (CAPSULE, (r2, 0.2, 0), (0.03, 0.05, r1 + r2 + gap), along_y))
    assert len(c) == 1
    assert c.dist[0] == pytest.approx(gap, abs=1e-15)
    np.testing.assert_allclose(c.pos[0], [0.03, 0.0, r1 + 0.5 * gap], atol=1e-15)


def test_capsule_box_lying_on_face_across_and_on_an_edge():
    r = 0.05
    half = np.array([0.3, 0.2, 0.1])
    along_x = rot((0.0, 1.0, 0.0), math.pi / 2)
    box = (BOX, half, (0.0, 0.0, 0.0), I3)
    # lying on the top face, fully over it: both segment ends
    c = contacts((CAPSULE, (r, 0.1, 0), (0.05, 0.05, 0.1 + r - 1e-5), along_x), box)
    assert len(c) == 2
    np.testing.assert_allclose(c.dist, -1e-5, atol=1e-15)
    np.testing.assert_allclose(sorted(c.pos[:, 0]), [-0.05, 0.15], atol=1e-15)
    np.testing.assert_allclose(c.normal, np.tile([0.0, 0.0, -1.0], (2, 1)), atol=1e-15)
    # longer than the face: clipped at the face's side planes x = +-0.3
    c = contacts((CAPSULE, (r, 0.5, 0), (0.0, 0.05, 0.1 + r - 1e-5), along_x), box)
    assert len(c) == 2
    np.testing.assert_allclose(sorted(c.pos[:, 0]), [-0.3, 0.3], atol=1e-15)
    # along y, crossing the top +x edge at 45 degrees from above: one contact, normal along (1, 0, 1)/sqrt 2
    along_y = rot((1.0, 0.0, 0.0), math.pi / 2)
    corner = np.array([0.3, 0.0, 0.1])
    n = np.array([1.0, 0.0, 1.0]) / math.sqrt(2)
    c = contacts((CAPSULE, (r, 0.5, 0), corner + (r - 2e-5) * n, along_y), box)
    assert len(c) == 1
    assert c.dist[0] == pytest.approx(-2e-5, abs=1e-15)
    np.testing.assert_allclose(c.normal[0], -n, atol=1e-15)


def test_capsule_box_axis_through_the_box_pushes_out_through_the_nearest_face():
    # axis along x at height z = 0.08 inside a box of half height 0.1: the top face is 0.02 away
    r = 0.05
    along_x = rot((0.0, 1.0, 0.0), math.pi / 2)
    box = (BOX, (0.3, 0.2, 0.1), (0.0, 0.0, 0.0), I3)
    c = contacts((CAPSULE, (r, 0.1, 0), (0.05, 0.0, 0.08), along_x), box)
    assert len(c) == 2
    np.testing.assert_allclose(c.dist, 0.08 - 0.1 - r, atol=1e-15)
    np.testing.assert_allclose(c.normal, np.tile([0.0, 0.0, -1.0], (2, 1)), atol=1e-15)
    # the axis lying exactly in the top face (touching it): the same rule, depth r
    c = contacts((CAPSULE, (r, 0.1, 0), (0.05, 0.0, 0.1), along_x), box)
    assert len(c) == 2
    np.testing.assert_allclose(c.dist, -r, atol=1e-15)


def test_coincident_centres_and_axes_get_a_valid_normal():
    # a sphere centred on a capsule's axis, crossing axes that meet, and coincident sphere centres: the
    # normal is a unit vector across the axes and the depth is the sum of the radii
    along_x = rot((0.0, 1.0, 0.0), math.pi / 2)
    c = contacts((SPHERE, (0.1, 0, 0), (0.0, 0.0, 0.05), I3), (CAPSULE, (0.05, 0.2, 0), (0.0, 0.0, 0.0), I3))
    assert c.dist[0] == pytest.approx(-0.15, abs=1e-15) and abs(c.normal[0, 2]) < 1e-15
    c = contacts((CAPSULE, (0.05, 0.2, 0), (0.0, 0.0, 0.0), along_x), (CAPSULE, (0.04, 0.2, 0), (0.0, 0.0, 0.0), I3))
    assert c.dist[0] == pytest.approx(-0.09, abs=1e-15) and abs(c.normal[0, 1]) == pytest.approx(1.0, abs=1e-15)
    # coincident centres: +z from geom1 to geom2 in either order (no direction is preferred)
    c = contacts((SPHERE, (0.1, 0, 0), (0.3, 0.2, 0.1), I3), (SPHERE, (0.2, 0, 0), (0.3, 0.2, 0.1), I3),
                 check_swap=False)
    assert c.dist[0] == pytest.approx(-0.3, abs=1e-15)
    np.testing.assert_array_equal(c.normal[0], [0.0, 0.0, 1.0])


def test_small_motion_keeps_feature_ids():
    half = np.array([0.1, 0.2, 0.3])
    mat = rot((1.0, 0.0, 0.0), 0.3)
    base = np.array([0.0, 0.0, abs(mat[2, 1]) * half[1] + abs(mat[2, 2]) * half[2] - 3e-5])
    first = contacts(FLOOR, (BOX, half, base, mat))
    moved = contacts(FLOOR, (BOX, half, base + (1e-3, -2e-3, 1e-5), rot((0, 0, 1), 0.01) @ mat))
    assert sorted(first.feature) == sorted(moved.feature) and len(first) == 2
    cap = (CAPSULE, (0.05, 0.1, 0), (0.05, 0.05, 0.149), rot((0.0, 1.0, 0.0), math.pi / 2))
    box = (BOX, (0.3, 0.2, 0.1), (0.0, 0.0, 0.0), I3)
    first = contacts(cap, box)
    cap_moved = (CAPSULE, (0.05, 0.1, 0), (0.06, 0.04, 0.14905), rot((0.0, 1.0, 0.0), math.pi / 2 + 1e-4))
    assert sorted(contacts(cap_moved, box).feature) == sorted(first.feature) and len(first) == 2


def _segment_pose(start, end):
    """(half length, pos, mat) of a capsule whose axis segment runs from ``start`` to ``end`` (its local z along
    it)."""
    length = np.linalg.norm(end - start)
    z = (end - start) / length
    x = np.cross(z, [0.0, 0.0, 1.0])
    x /= np.linalg.norm(x)
    return 0.5 * length, 0.5 * (start + end), np.column_stack([x, np.cross(z, x), z])


@pytest.mark.parametrize(("depths", "twist"), [((3e-5, 1e-5), 0.0), ((1e-5, 1e-5), 0.03)])
def test_capsule_box_along_an_edge_has_both_ends_in_contact(depths, twist):
    """A capsule lying along the box's top +x edge (along y at x = 0.3, z = 0.1), beyond it: its ends at y = -+0.1,
    ``depths`` into the edge, seen from it at 45 -+ ``twist`` rad from the top face. Each end is a contact, with its
    own depth and normal, where the closest pair alone gave one point, so that a capsule turning about it ran its other
    end into the edge unseen. Twisted, the axis passes the edge closer at its middle than at its ends (r - 1e-5 times
    cos twist, 2.2e-5 m deeper): that point is a third contact."""
    r = 0.05
    edge = np.array([0.3, 0.0, 0.1])
    angles = (math.pi / 4 - twist, math.pi / 4 + twist)
    outward = [np.array([math.cos(a), 0.0, math.sin(a)]) for a in angles]  # from the edge to each end, across it
    ends = [edge + (0.0, y, 0.0) + (r - depth) * out
            for y, depth, out in zip((-0.1, 0.1), depths, outward, strict=True)]
    half, pos, mat = _segment_pose(*ends)
    c = contacts((CAPSULE, (r, half, 0.0), pos, mat), (BOX, (0.3, 0.2, 0.1), (0.0, 0.0, 0.0), I3))
    c = c.sorted_by(c.pos[:, 1])
    assert len(c) == (2 if twist == 0.0 else 3)
    for k, end in ((0, 0), (-1, 1)):
        assert c.dist[k] == pytest.approx(-depths[end], abs=1e-15)
        np.testing.assert_allclose(c.normal[k], -outward[end], atol=1e-12)
        assert c.pos[k, 1] == pytest.approx((-0.1, 0.1)[end], abs=1e-12)
    if twist > 0.0:
        assert c.dist[1] == pytest.approx((r - 1e-5) * math.cos(twist) - r, abs=1e-15)
        np.testing.assert_allclose(c.normal[1], -np.array([1.0, 0.0, 1.0]) / math.sqrt(2), atol=1e-12)
