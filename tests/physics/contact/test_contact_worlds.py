"""The kernels run W worlds side by side: each world keeps its own contact set, warm starts and events."""

from __future__ import annotations

import math

import numpy as np

from mechgym.physics.contact import ContactSet, prime_contacts
from mechgym.physics.state import State
from mechgym.physics.tolerances import MARGIN

from .driver import ContactScene, advance_worlds
from .scenes import GRAVITY, ball_drop


def test_two_worlds_bounce_independently():
    """Two worlds of the same scene, the ball dropped from 1 m and from 0.5 m: each world's first landing is
    reported at its own sqrt(2 H / g), and the second world runs as it does alone."""
    scene = ContactScene.build(ball_drop(1.0, 0.1, 0.8))
    h, n = 1e-3, 2000
    state = State(*(np.repeat(a, 2, axis=0) for a in scene.state))
    state.com[1, 0, 2] -= 0.5
    contacts = ContactSet.empty(2)
    bodies, env = scene.engine.bodies, scene.engine.env
    for world in range(2):
        assert prime_contacts(scene.geoms, scene.engine.linkage, bodies, env, state, world, h, np.zeros((1, 6)),
                              contacts, scene.scratch, scene.work, scene.joined, scene.held, MARGIN) >= 0
    trace, _, status = advance_worlds(scene.engine, state, contacts, scene.scratch, h, n)
    assert status.tolist() == [[n, 0], [n, 0]]
    for world, height in enumerate((1.0, 0.5)):
        assert abs(contacts.event_time[world, 0] - math.sqrt(2.0 * height / GRAVITY)) < 1e-12
    alone = ContactScene.build(ball_drop(0.5, 0.1, 0.8))
    assert alone.prime(h) >= 0
    alone_trace, _, _ = alone.run(h, n)
    assert np.abs(alone_trace - trace[1]).max() < 1e-12  # (the start heights differ by round-off)
