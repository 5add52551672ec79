"""Feature ids persist under small motions of random poses, for every supported pair."""

from __future__ import annotations

import numpy as np
import pytest
from collision_testing import contacts, rot

from mechgym.physics.collision import BOX, CAPSULE, CYLINDER, PLANE, SPHERE, supported_pair

SIZES = {PLANE: (0.0, 0.0, 1.0), SPHERE: (0.1, 0.0, 0.0), CAPSULE: (0.08, 0.15, 0.0), CYLINDER: (0.1, 0.15, 0.0),
         BOX: (0.1, 0.15, 0.2)}
TYPES = [PLANE, SPHERE, CAPSULE, CYLINDER, BOX]
PAIRS = [(a, b) for a in TYPES for b in TYPES if a <= b and supported_pair(a, b)]
MARGIN = 1e-4


def _random_geom(kind, rng, at_origin):
    if kind == PLANE:
        return (PLANE, SIZES[PLANE], np.zeros(3), rot(rng.normal(size=3), rng.uniform(0.0, 0.3)))
    pos = np.zeros(3) if at_origin else rng.uniform(-0.35, 0.35, 3)
    return (kind, np.array(SIZES[kind]), pos, rot(rng.normal(size=3), rng.uniform(0.0, np.pi)))


@pytest.mark.parametrize(("type1", "type2"), PAIRS)
def test_feature_ids_survive_a_small_motion(type1, type2):
    """Move geom 2 by ~1e-9 m and turn it by ~1e-9 rad: every contact that is inside the margin band by more
    than 1e-6 m keeps its feature id, with its distance and point moving continuously."""
    rng = np.random.default_rng(100 * type1 + type2)
    checked = 0
    for _ in range(400):
        g1 = _random_geom(type1, rng, at_origin=True)
        g2 = _random_geom(type2, rng, at_origin=False)
        if type1 == PLANE:
            g2[2][2] = rng.uniform(-0.05, 0.25)
        before = contacts(g1, g2, MARGIN, check_swap=type1 != BOX)
        moved = (type2, g2[1], g2[2] + rng.normal(0.0, 1e-9, 3), rot(rng.normal(size=3), 1e-9) @ g2[3])
        after = contacts(g1, moved, MARGIN, check_swap=type1 != BOX)
        for k in np.flatnonzero(before.dist < MARGIN - 1e-6):
            match = np.flatnonzero(after.feature == before.feature[k])
            assert match.size == 1, (before.feature, after.feature)
            assert abs(after.dist[match[0]] - before.dist[k]) <= 1e-7
            assert np.linalg.norm(after.pos[match[0]] - before.pos[k]) <= 1e-6
            checked += 1
    assert checked >= 30, checked
