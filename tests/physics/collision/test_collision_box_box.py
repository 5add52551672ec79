"""Box-box: separating axes with a face bias, clipping that keeps every clipped point, feature ids."""

from __future__ import annotations

import math

import numpy as np
import pytest
from collision_testing import contacts, rot, sat_separations

from mechgym.physics.collision import BOX
from mechgym.physics.collision.box_box import EDGE_FEATURE_BASE
from mechgym.physics.tolerances import AXIS_ABS_TOL, AXIS_REL_TOL

I3 = np.eye(3)
BIG = (BOX, (0.5, 0.5, 0.5), (0.0, 0.0, 0.0), I3)
GAP = -1e-5


def _on_top(half, xy, mat=I3, gap=GAP):
    """A box of half extents ``half`` whose bottom face (local -z) rests on BIG's top face at ``gap``."""
    return (BOX, half, (xy[0], xy[1], 0.5 + half[2] + gap), mat)


def _xy_set(c):
    return sorted((round(x, 12), round(y, 12)) for x, y in c.pos[:, :2])


@pytest.mark.parametrize("spin", [0.0, 0.3])
def test_smaller_box_on_a_face_gives_its_four_bottom_corners(spin):
    half = (0.2, 0.1, 0.05)
    mat = rot((0.0, 0.0, 1.0), spin)
    c = contacts(BIG, _on_top(half, (0.1, 0.05), mat))
    assert len(c) == 4
    np.testing.assert_allclose(c.dist, GAP, atol=1e-15)
    np.testing.assert_allclose(c.normal, np.tile([0.0, 0.0, 1.0], (4, 1)), atol=1e-15)
    corners = [np.array([0.1, 0.05, 0.0]) + mat @ (sx * half[0], sy * half[1], 0.0) for sx in (-1, 1) for sy in (-1, 1)]
    assert _xy_set(c) == sorted((round(p[0], 12), round(p[1], 12)) for p in corners)
    np.testing.assert_allclose(c.pos[:, 2], 0.5 + 0.5 * GAP, atol=1e-15)  # midway between the faces
    assert sorted(c.feature % 36) == [0, 1, 2, 3]  # the incident vertices themselves


def test_partial_overlap_gives_the_clipped_rectangle():
    # B's bottom [0.2, 0.6] x [0.0, 0.4] clipped to A's top face [-0.5, 0.5]^2
    c = contacts(BIG, _on_top((0.2, 0.2, 0.1), (0.4, 0.2)))
    assert _xy_set(c) == [(0.2, 0.0), (0.2, 0.4), (0.5, 0.0), (0.5, 0.4)]
    np.testing.assert_allclose(c.dist, GAP, atol=1e-15)
    assert sum(f % 36 >= 4 for f in c.feature) == 2  # two points created by the clipping


def test_diamond_over_an_edge_gives_the_five_clipped_vertices():
    # B turned 45 deg about z, centred at x = 0.45: its bottom is the diamond |x - 0.45| + |y| <= 0.1 sqrt 2,
    # cut by A's side plane x = 0.5 at y = +-(0.1 sqrt 2 - 0.05)
    d = 0.1 * math.sqrt(2.0)
    c = contacts(BIG, _on_top((0.1, 0.1, 0.1), (0.45, 0.0), rot((0.0, 0.0, 1.0), math.pi / 4)))
    expected = sorted((round(x, 12), round(y, 12)) for x, y in
                      [(0.45 - d, 0.0), (0.45, d), (0.45, -d), (0.5, d - 0.05), (0.5, 0.05 - d)])
    assert _xy_set(c) == expected
    np.testing.assert_allclose(c.dist, GAP, atol=1e-15)


def test_large_diamond_gives_an_octagon_of_eight_points():
    # |x| + |y| <= 0.8 cut by |x|, |y| <= 0.5: the octagon (+-0.5, +-0.3), (+-0.3, +-0.5), all from clipping
    b = 0.8 / math.sqrt(2.0)
    c = contacts(BIG, _on_top((b, b, 0.1), (0.0, 0.0), rot((0.0, 0.0, 1.0), math.pi / 4)))
    assert len(c) == 8
    expected = sorted({(sx * u, sy * v) for sx in (-1.0, 1.0) for sy in (-1.0, 1.0)
                       for u, v in ((0.5, 0.3), (0.3, 0.5))})
    assert _xy_set(c) == [(round(x, 12), round(y, 12)) for x, y in expected]
    assert all(f % 36 >= 4 for f in c.feature)


def test_coincident_edges_give_no_duplicate_points():
    # equal boxes stacked exactly: the incident face coincides with the reference face
    c = contacts(BIG, _on_top((0.5, 0.5, 0.5), (0.0, 0.0)))
    assert _xy_set(c) == [(-0.5, -0.5), (-0.5, 0.5), (0.5, -0.5), (0.5, 0.5)]
    # a smaller box whose corners lie exactly on A's side planes x = 0.5 and y = 0.5
    c = contacts(BIG, _on_top((0.25, 0.25, 0.1), (0.25, 0.25)))
    assert _xy_set(c) == [(0.0, 0.0), (0.0, 0.5), (0.5, 0.0), (0.5, 0.5)]
    # half over the edge: two corners on top, two points where its sides cross x = 0.5
    c = contacts(BIG, _on_top((0.25, 0.25, 0.1), (0.5, 0.0)))
    assert _xy_set(c) == [(0.25, -0.25), (0.25, 0.25), (0.5, -0.25), (0.5, 0.25)]


def test_box_tilted_on_one_edge_gives_two_points():
    half = np.array([0.2, 0.1, 0.05])
    mat = rot((1.0, 0.0, 0.0), 0.3)
    lift = abs(mat[2, 1]) * half[1] + abs(mat[2, 2]) * half[2]
    c = contacts(BIG, (BOX, half, (0.0, 0.0, 0.5 + lift + GAP), mat))
    assert len(c) == 2
    np.testing.assert_allclose(c.dist, GAP, atol=1e-15)
    np.testing.assert_allclose(sorted(c.pos[:, 0]), [-0.2, 0.2], atol=1e-14)


def test_crossed_edges_give_one_point_at_the_analytic_distance():
    # A turned 45 deg about x: top edge along x at z = 0.1 sqrt 2. B turned 45 deg about y: bottom edge
    # along y at z_B - 0.1 sqrt 2. The edges cross at (0.02, 0) with dist = z_B - 0.2 sqrt 2.
    a = (BOX, (0.1, 0.1, 0.1), (0.0, 0.0, 0.0), rot((1.0, 0.0, 0.0), math.pi / 4))
    for dist in (-3e-3, -1e-5, 5e-5):
        zb = 0.2 * math.sqrt(2.0) + dist
        c = contacts(a, (BOX, (0.1, 0.1, 0.1), (0.02, -0.03, zb), rot((0.0, 1.0, 0.0), math.pi / 4)))
        assert len(c) == 1
        assert c.dist[0] == pytest.approx(dist, abs=1e-15)
        np.testing.assert_allclose(c.normal[0], [0.0, 0.0, 1.0], atol=1e-15)
        np.testing.assert_allclose(c.pos[0], [0.02, 0.0, 0.1 * math.sqrt(2.0) + 0.5 * dist], atol=1e-15)
        assert c.feature[0] >= EDGE_FEATURE_BASE


def test_boxes_apart_edge_first_also_give_the_face_points_within_the_margin():
    # The bar of the next test pitched by 0.1 over A's top edge x = 0.5, lifted 2 mm: apart by ~1 mm along the
    # edge-edge axis. With a margin that covers the bar's fall (continuous collision's speculative margin) the
    # contacts are the edge contact at the edge axis' separation and the points of A's top face that the bar's
    # face reaches within the margin, each at its exact distance from A (a point over the top face: its height).
    half = np.array([0.52, 0.05, 0.05])
    mat = rot((0.0, 1.0, 0.0), 0.1) @ rot((1.0, 0.0, 0.0), math.pi / 4)
    pos = np.array((0.1, 0.0, 0.6122))
    face_a, _, best_edge = sat_separations(np.full(3, 0.5), np.zeros(3), I3, half, pos, mat)
    assert best_edge > AXIS_REL_TOL * face_a + AXIS_ABS_TOL and best_edge > AXIS_ABS_TOL
    assert len(contacts(BIG, (BOX, half, pos, mat))) == 0  # apart by more than MARGIN
    c = contacts(BIG, (BOX, half, pos, mat), margin=0.2)
    edge = c.feature >= EDGE_FEATURE_BASE
    assert edge.sum() == 1 and c.dist[edge][0] == pytest.approx(best_edge, abs=1e-15)
    face = ~edge
    assert face.sum() >= 3
    np.testing.assert_allclose(c.normal[face], np.tile([0.0, 0.0, 1.0], (face.sum(), 1)), atol=1e-15)
    incident = c.pos[face] + 0.5 * c.dist[face, None] * c.normal[face]
    assert np.all(np.abs(incident[:, :2]) <= 0.5 + 1e-12)  # over A's top face: the distance is the height
    np.testing.assert_allclose(c.dist[face], incident[:, 2] - 0.5, atol=1e-14)
    assert np.all(c.dist[face] >= best_edge - 1e-15)


def test_face_bias_keeps_a_face_unless_an_edge_is_clearly_better():
    # B: a long bar (half length 0.52 > A's 0.5) turned 45 deg about its axis x so that an edge points down,
    # then pitched by delta about y, its low edge crossing A's top edge x = 0.5 (about 1 mm deep). The
    # edge-edge axis beats A's face axis by 4e-5 m for delta = 0.002 (inside the window: face kept) and by
    # 1.1e-2 m for delta = 0.1 (edge contact).
    half = np.array([0.52, 0.05, 0.05])
    for delta, pos, edge in ((0.002, (0.0, 0.0, 0.57072), False), (0.1, (0.1, 0.0, 0.6102), True)):
        mat = rot((0.0, 1.0, 0.0), delta) @ rot((1.0, 0.0, 0.0), math.pi / 4)
        face_a, face_b, best_edge = sat_separations(np.full(3, 0.5), np.zeros(3), I3, half, np.array(pos), mat)
        assert face_a > face_b and best_edge > face_a
        assert (best_edge > AXIS_REL_TOL * face_a + AXIS_ABS_TOL) == edge
        c = contacts(BIG, (BOX, half, pos, mat))
        assert len(c) >= 1 and np.all(c.feature >= EDGE_FEATURE_BASE) == edge
        if edge:
            assert len(c) == 1 and c.dist[0] == pytest.approx(best_edge, abs=1e-15)
        else:  # the clipped face points are no deeper than the face axis' separation
            assert np.all(c.dist >= face_a - 1e-15)


def test_boxes_apart_by_more_than_the_margin_have_no_contact():
    assert len(contacts(BIG, _on_top((0.2, 0.1, 0.05), (0.0, 0.0), gap=2e-4), margin=1e-4)) == 0
    assert len(contacts(BIG, _on_top((0.2, 0.1, 0.05), (0.0, 0.0), gap=5e-5), margin=1e-4)) == 4


def test_small_motion_keeps_feature_ids():
    first = contacts(BIG, _on_top((0.2, 0.2, 0.1), (0.4, 0.2)))
    moved = contacts(BIG, _on_top((0.2, 0.2, 0.1), (0.401, 0.198), rot((0.0, 0.0, 1.0), 2e-3), gap=-2e-5))
    assert sorted(first.feature) == sorted(moved.feature)
    diamond = rot((0.0, 0.0, 1.0), math.pi / 4)
    first = contacts(BIG, _on_top((0.1, 0.1, 0.1), (0.45, 0.0), diamond))
    moved = contacts(BIG, _on_top((0.1, 0.1, 0.1), (0.452, 0.003), rot((0.0, 0.0, 1.0), 1e-3) @ diamond))
    assert len(first) == 5 and sorted(first.feature) == sorted(moved.feature)
    a = (BOX, (0.1, 0.1, 0.1), (0.0, 0.0, 0.0), rot((1.0, 0.0, 0.0), math.pi / 4))
    first = contacts(a, (BOX, (0.1, 0.1, 0.1), (0.02, -0.03, 0.28), rot((0.0, 1.0, 0.0), math.pi / 4)))
    moved = contacts(a, (BOX, (0.1, 0.1, 0.1), (0.021, -0.02, 0.2801), rot((0.0, 1.0, 0.0), math.pi / 4 + 1e-3)))
    assert len(first) == 1 and list(first.feature) == list(moved.feature)
