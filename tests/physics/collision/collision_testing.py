"""Helpers for the collision tests: rotations, a checked ``collide`` call and two-geom MuJoCo scenes."""

from __future__ import annotations

import math

import mujoco
import numpy as np

from mechgym.physics.collision import MAX_CONTACTS, collide

MARGIN = 1e-4  # m, the engine's contact margin


def rot(axis, angle: float) -> np.ndarray:
    """Rotation matrix (3, 3) of ``angle`` rad about ``axis`` (Rodrigues)."""
    k = np.asarray(axis, dtype=float)
    k = k / np.linalg.norm(k)
    cross = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + math.sin(angle) * cross + (1.0 - math.cos(angle)) * cross @ cross


class Contacts:
    """The contacts of one pair as arrays: pos (n, 3), normal (n, 3), dist (n,), feature (n,)."""

    def __init__(self, pos, normal, dist, feature):
        self.pos, self.normal, self.dist, self.feature = pos, normal, dist, feature

    def __len__(self) -> int:
        return self.dist.size

    def sorted_by(self, key: np.ndarray) -> Contacts:
        order = np.lexsort(np.asarray(key).T[::-1]) if np.ndim(key) == 2 else np.argsort(key)
        return Contacts(self.pos[order], self.normal[order], self.dist[order], self.feature[order])


def collide_count(geom1, geom2, margin: float = MARGIN) -> tuple[int, Contacts]:
    """``collide`` of two (type, size, pos, mat) tuples: its return value and the contacts it wrote."""
    out_pos = np.full((MAX_CONTACTS, 3), np.nan)
    out_normal = np.full((MAX_CONTACTS, 3), np.nan)
    out_dist = np.full(MAX_CONTACTS, np.nan)
    out_feature = np.full(MAX_CONTACTS, -1, dtype=np.int64)
    t1, s1, p1, m1 = geom1
    t2, s2, p2, m2 = geom2
    n = collide(int(t1), np.asarray(s1, dtype=float), np.asarray(p1, dtype=float), np.ascontiguousarray(m1, float),
                int(t2), np.asarray(s2, dtype=float), np.asarray(p2, dtype=float), np.ascontiguousarray(m2, float),
                margin, out_pos, out_normal, out_dist, out_feature)
    k = max(n, 0)
    return n, Contacts(out_pos[:k].copy(), out_normal[:k].copy(), out_dist[:k].copy(), out_feature[:k].copy())


def _raw(geom1, geom2, margin):
    n, c = collide_count(geom1, geom2, margin)
    assert 0 <= n <= MAX_CONTACTS
    return c


def contacts(geom1, geom2, margin: float = MARGIN, check_swap: bool = True) -> Contacts:
    """``collide`` of (type, size, pos, mat) tuples, checked for the conventions of every call:

    unit normals; every distance below the margin; distinct feature ids; the swapped call gives the same
    points and distances with negated normals (and, for geoms of different types, the same features; for two
    geoms of one type the feature ids are relative to the call's order, so only the point set is compared).
    Two boxes in a near tie of separating axes may pick a different reference face when swapped (the bias
    prefers geom1's faces): ``check_swap=False`` skips the swap check for those.
    """
    c = _raw(geom1, geom2, margin)
    np.testing.assert_allclose(np.linalg.norm(c.normal, axis=1), 1.0, atol=1e-12)
    assert np.all(c.dist < margin)
    assert np.unique(c.feature).size == len(c)  # a feature id names one contact of the pair
    if not check_swap:
        return c
    s = _raw(geom2, geom1, margin)
    assert len(c) == len(s)
    if geom1[0] == geom2[0]:
        c_sorted, s_sorted = c.sorted_by(np.round(c.pos, 12)), s.sorted_by(np.round(s.pos, 12))
    else:
        np.testing.assert_array_equal(s.feature, c.feature)
        c_sorted, s_sorted = c, s
    np.testing.assert_allclose(s_sorted.dist, c_sorted.dist, rtol=0, atol=1e-14)
    np.testing.assert_allclose(s_sorted.pos, c_sorted.pos, rtol=0, atol=1e-14)
    np.testing.assert_allclose(s_sorted.normal, -c_sorted.normal, rtol=0, atol=1e-12)
    return c


def two_geom_scene(type1: str, size1: str, type2: str, size2: str) -> mujoco.MjModel:
    """geom 0 (static if a plane, else on a free body) and geom 1 on a free body; no margins."""
    g1 = f'<geom type="{type1}" size="{size1}"/>'
    g2 = f'<geom type="{type2}" size="{size2}"/>'
    body1 = g1 if type1 == "plane" else f"<body><freejoint/>{g1}</body>"
    return mujoco.MjModel.from_xml_string(
        f"<mujoco><worldbody>{body1}<body><freejoint/>{g2}</body></worldbody></mujoco>")


def geom(model: mujoco.MjModel, data: mujoco.MjData, g: int):
    """(type, size, pos, mat) of geom ``g`` at the pose in ``data``."""
    return int(model.geom_type[g]), model.geom_size[g], data.geom_xpos[g], data.geom_xmat[g].reshape(3, 3)


def random_quat(rng: np.random.Generator) -> np.ndarray:
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def sat_separations(h1, p1, r1, h2, p2, r2):
    """Separations (m) of the best face axis of box 1, of box 2 and of the best edge-edge axis."""
    d = p2 - p1
    faces1 = [abs(r1[:, i] @ d) - h1[i] - h2 @ np.abs(r2.T @ r1[:, i]) for i in range(3)]
    faces2 = [abs(r2[:, j] @ d) - h2[j] - h1 @ np.abs(r1.T @ r2[:, j]) for j in range(3)]
    edges = []
    for i in range(3):
        for j in range(3):
            axis = np.cross(r1[:, i], r2[:, j])
            if np.linalg.norm(axis) > 1e-6:
                axis /= np.linalg.norm(axis)
                edges.append(abs(axis @ d) - h1 @ np.abs(r1.T @ axis) - h2 @ np.abs(r2.T @ axis))
    return max(faces1), max(faces2), max(edges)
