"""Impacts (seed 000): landing time at the interpolated instant, apex ratios e^2, no energy gained."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechgym.physics import contact
from mechgym.physics.constraints import begin_step
from mechgym.physics.step import drift, opening_kick
from mechgym.physics.tolerances import MARGIN
from mechgym.physics.vectors import rotate_inverse

from .driver import ContactScene
from .scenes import GRAVITY, ball_drop, box_on_floor, run

HEIGHT, RADIUS, E = 1.0, 0.1, 0.8


@pytest.mark.parametrize("h", [1e-3, 1e-2])
def test_ball_landing_time_and_apex_ratios(h):
    """A ball dropped from 1 m (e = 0.8): the first landing is reported at sqrt(2 H / g) to 1e-6 s, with the
    approach speed sqrt(2 g H); each rebound apex is e^2 times the previous one to 3e-5 (relative)."""
    scene = ContactScene.build(ball_drop(HEIGHT, RADIUS, E))
    com, vel, _, _ = run(scene, h, 3.0)
    events = scene.events()
    assert events.shape[0] >= 6
    assert abs(events[0, 0] - math.sqrt(2.0 * HEIGHT / GRAVITY)) < 1e-6
    assert events[0, 3] == pytest.approx(math.sqrt(2.0 * GRAVITY * HEIGHT), rel=1e-12)
    # In flight the motion is ballistic: the apex of the lowest point is z - r + vz^2 / (2 g) at any step.
    apex = com[:, 0, 2] - RADIUS + vel[:, 0, 2] ** 2 / (2.0 * GRAVITY)
    heights = [HEIGHT] + [apex[int(t / h) - 1] for t in events[1:6, 0]]  # the last flight step before a landing
    ratios = np.array(heights[1:]) / np.array(heights[:-1])
    assert np.all(np.abs(ratios / E ** 2 - 1.0) < 3e-5), ratios
    # landings at the closed-form instants of the bounce sequence
    flight = math.sqrt(2.0 * HEIGHT / GRAVITY)
    expected = flight + 2.0 * flight * np.cumsum(E ** np.arange(1, 5))
    assert np.all(np.abs(events[1:5, 0] - expected) < 1e-6)


def _kinetic(scene):
    bodies, state = scene.engine.bodies, scene.state
    total = 0.0
    local = np.zeros(3)
    for b in range(state.com.shape[1]):
        rotate_inverse(state.quat[0, b], state.momentum[0, b], local)
        total += 0.5 * bodies.mass[b] * state.vel[0, b] @ state.vel[0, b] + 0.5 * local ** 2 @ bodies.inv_inertia[b]
    return total


# (restitution, orientation): flat (4 corners at once), on an edge (2), nearly flat, or tilted about two axes
# (a corner first, then an edge or a face); each case has at least one step with two or more impacting points.
# Tilted nearly flat about two axes with e = 1 ("3 5 0"), or generically with e = 0.5 ("30 40 10"), the box
# lands and bounces on one corner at a time, so those pairs are not cases of this test.
MULTI_POINT_DROPS = [(e, euler) for e in (0.0, 0.5, 1.0) for euler in ("0 0 0", "20 0 0", "45 0 0")] + [
    (0.0, "3 5 0"), (0.5, "3 5 0"), (1.0, "3 0 0"), (0.0, "30 40 10"), (1.0, "30 40 10")]


@pytest.mark.parametrize(("restitution", "euler"), MULTI_POINT_DROPS)
def test_multi_contact_impact_never_gains_kinetic_energy(restitution, euler):
    """A box dropped flat (4 corners at once), on an edge (2) or nearly flat: across every step with two or
    more impacting points the velocity solve does not raise the kinetic energy (Newton's simultaneous targets
    can; the Poisson form with the compression impulses cannot)."""
    h = 2e-3
    scene = ContactScene.build(box_on_floor((0.1, 0.07, 0.05), (0.0, 0.0, 0.5), euler, restitution))
    assert scene.prime(h) >= 0
    bodies, env, state, contacts, scratch = (scene.engine.bodies, scene.engine.env, scene.state, scene.contacts,
                                             scene.scratch)
    linkage = scene.engine.linkage
    zeros = np.zeros((1, 6))
    impacts = 0
    for k in range(400):  # the driver's stages, with the kinetic energy measured around the velocity solve
        begin_step(scene.rows, bodies, state, 0, h, scene.work)
        opening_kick(bodies, env, state, 0, h / 2, zeros, zeros)
        contact.warm_start(bodies, state, 0, h, contacts)
        drift(bodies, state, 0, h)
        count = contact.find_contacts(scene.geoms, bodies, env, state, 0, (k + 1) * h, h, scene.work.com0,
                                      scene.work.quat0, scene.work.vel0, scene.work.momentum0, contacts, scratch,
                                      MARGIN, True, False)
        assert contact.correct_positions(scene.geoms, linkage, bodies, state, 0, contacts, scratch, scene.work,
                                         scene.joined, False) >= 0
        opening_kick(bodies, env, state, 0, h / 2, zeros, zeros)
        before = _kinetic(scene)
        hitting = int(np.sum(contacts.impact[:count] & contacts.active[:count]))
        assert contact.solve_contacts(linkage, bodies, state, 0, h, contacts, scratch, scene.work, scene.joined,
                                      False) >= 0
        if hitting >= 2:
            impacts += 1
            assert _kinetic(scene) <= before * (1.0 + 1e-12)
        assert contact.settle_contacts(scene.geoms, linkage, bodies, env, state, 0, h, zeros, contacts, scratch,
                                       scene.work, scene.joined, scene.held) >= 0
    assert impacts >= 1  # the case has a multi-point impact to check
    assert len(scene.events()) >= 1
