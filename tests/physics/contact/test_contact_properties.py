"""Property tests of the contact solve as a whole (hypothesis, derandomized): impacts of a ball of random size,
mass, restitution and drop height against the closed forms of free fall (landing time, approach speed, apex
e^2 H, no energy gained); a box of random size, mass and friction at rest on a plane stays at rest; a box on
a slope of random angle and friction is held when tan(angle) < mu_s and otherwise slides at
g (sin - mu_k cos)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mechgym.physics import contact
from mechgym.physics.constraints import LIN_B, begin_step
from mechgym.physics.contact.sets import ContactSet
from mechgym.physics.contact.solve import _load, _unbalanced, begin_solve
from mechgym.physics.step import drift, opening_kick
from mechgym.physics.tolerances import MARGIN, VELOCITY_TOLERANCE

from .driver import ContactScene
from .scenes import GRAVITY, ball_drop, box_on_floor, downhill, on_slope, run

STEPS = st.sampled_from([5e-4, 1e-3, 2e-3, 5e-3, 1e-2])  # s


@settings(max_examples=60, deadline=None, derandomize=True)
@given(radius=st.floats(0.01, 0.1), restitution=st.one_of(st.just(0.0), st.floats(0.0, 0.95)),
       mass=st.floats(0.05, 20.0), height=st.floats(0.05, 2.0), h=STEPS)
def test_a_dropped_ball_lands_on_time_rebounds_to_e2_h_and_never_gains_energy(radius, restitution, mass, height,
                                                                              h):
    """A ball dropped from rest, its lowest point H above a plane: the first event is reported at sqrt(2 H / g)
    to 1e-12 s with the approach speed sqrt(2 g H) to 1e-12 (relative), between two steps of the run the
    mechanical energy never rises by more than 1e-12 of m g H (free flight of a sphere is exact in velocity
    Verlet), and after the first rebound the ballistic apex z - r + v_z^2 / (2 g) of every in-flight step is
    e^2 H (relative 1e-9). Drawn: e = 0 or a rebound whose flight 2 e v / g spans at least four steps. The engine
    interpolates the instant of impact, so each of these is a closed form to round-off. Excluded: with e > 0 the
    run ends two steps before the bounces' Zeno time sqrt(2 H / g) (1 + e) / (1 - e), after which the ball
    rests (``test_a_ball_that_stopped_bouncing_rests_on_the_plane``).
    Measured: landing time 2.4e-15 s, speed 7.7e-15, apex 4.2e-14, energy rise 1.1e-15 m g H."""
    scene = ContactScene.build(ball_drop(height, radius, restitution).replace('mass="1"', f'mass="{mass}"'))
    fall = math.sqrt(2.0 * height / GRAVITY)
    speed = math.sqrt(2.0 * GRAVITY * height)
    rebound = 2.0 * restitution * speed / GRAVITY
    assume(restitution == 0.0 or rebound >= 4.0 * h)
    seconds = round((fall + rebound) / h) * h + 0.1
    if restitution > 0.0:
        seconds = min(seconds, fall * (1.0 + restitution) / (1.0 - restitution) - 2.0 * h)
    com, vel, momentum, _ = run(scene, h, h * math.floor(seconds / h))
    inertia = 0.4 * mass * radius * radius
    energy = (mass * GRAVITY * com[:, 0, 2] + 0.5 * mass * np.sum(vel[:, 0] ** 2, axis=1)
              + 0.5 * np.sum(momentum[:, 0] ** 2, axis=1) / inertia)
    scale = mass * GRAVITY * height
    initial = mass * GRAVITY * (height + radius)
    rise = np.diff(np.concatenate([[initial], energy]))
    assert rise.max() <= 1e-12 * scale, rise.max() / scale
    events = scene.events()
    assert events.shape[0] >= 1
    assert abs(events[0, 0] - fall) < 1e-12, events[0, 0] - fall
    assert abs(events[0, 3] / speed - 1.0) < 1e-12
    # steps wholly inside the first rebound's flight: ended after the impact's step, before the next landing
    ends = h * np.arange(1, com.shape[0] + 1)
    landing = events[1, 0] if events.shape[0] > 1 else fall + rebound
    flying = (ends > math.floor(events[0, 0] / h) * h + 1.5 * h) & (ends < landing - h)
    if restitution > 0.0:
        assert flying.any()
        apex = com[flying, 0, 2] - radius + vel[flying, 0, 2] ** 2 / (2.0 * GRAVITY)
        expected = restitution ** 2 * height
        assert np.abs(apex / expected - 1.0).max() < 1e-9, (apex.min() / expected, apex.max() / expected)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(half=st.tuples(st.floats(0.01, 0.2), st.floats(0.01, 0.2), st.floats(0.01, 0.2)),
       mass=st.floats(0.05, 20.0), friction=st.floats(0.1, 1.5), h=STEPS)
def test_a_box_placed_on_a_plane_stays_at_rest(half, mass, friction, h):
    """A box of random half extents, mass and friction placed exactly on a plane, 1 s: all 4 bottom corners
    touch every step, and the box stays at rest: in its first steps to the velocity solve's stopping test (the
    sweeps stop when none changes a contact velocity by more than VELOCITY_TOLERANCE = 1e-12 m/s, which bounds
    the last change, not what is left), |v| and |w| times the smallest half extent (the shortest lever from the
    centre to a contact) < 100 VELOCITY_TOLERANCE (measured: 1.0e-11 m/s at most, in the first two steps, at
    mu = 0.1 and large steps; over the last half second 1.8e-12 m/s), and the centre moves < 1e-12 m."""
    scene = ContactScene.build(box_on_floor(half, (0.0, 0.0, half[2]), friction=friction, mass=mass))
    inertia = scene.engine.bodies.inertia[0].min()
    com, vel, momentum, active = run(scene, h, 1.0)
    assert np.all(active == 4)
    assert np.abs(vel).max() < 100 * VELOCITY_TOLERANCE
    assert np.abs(momentum).max() / inertia * min(half) < 100 * VELOCITY_TOLERANCE
    assert np.abs(com[:, 0] - [0.0, 0.0, half[2]]).max() < 1e-12


@settings(max_examples=80, deadline=None, derandomize=True)
@given(angle=st.floats(3.0, 40.0), kinetic=st.floats(0.05, 1.0), extra=st.floats(0.0, 0.5),
       half=st.floats(0.02, 0.1), h=STEPS)
def test_a_box_on_a_slope_is_held_below_the_static_angle_and_slides_at_the_kinetic_rate_above(angle, kinetic,
                                                                                             extra, half, h):
    """A cube (1 kg) placed at rest on a plane tilted by a random angle, mu_k <= mu_s = mu_k + extra: if
    tan(angle) < mu_s it does not move (< 1e-9 m in 0.5 s), otherwise after 0.5 s it has covered
    g (sin - mu_k cos) t^2 / 2 down the slope (relative 1e-6) and moved off the downhill line by < 1e-9 m.
    (A cube does not tip: its friction coefficients stay below its width / height ratio 1.) Measured: held
    3.2e-13 m, sliding distance 5.9e-13 (relative), off the line 6.0e-14 m (before the range 0.85 mu_s <=
    tan(angle) < mu_s with mu_k < mu_s was included, where the held cube used to slide: see the test below)."""
    static = kinetic + extra
    scene = ContactScene.build(on_slope(f'type="box" size="{half} {half} {half}"', half, angle, kinetic, static))
    start = scene.state.com[0, 0].copy()
    seconds = 0.5
    com, _, _, _ = run(scene, h, seconds)
    theta = math.radians(angle)
    moved = com[:, 0] - start
    if math.tan(theta) < static:
        assert np.abs(moved).max() < 1e-9, np.abs(moved).max()
    else:
        t = h * round(seconds / h)
        expected = 0.5 * GRAVITY * (math.sin(theta) - kinetic * math.cos(theta)) * t * t
        along = moved[-1] @ downhill(angle)
        assert abs(along / expected - 1.0) < 1e-6, (along, expected)
        assert np.linalg.norm(moved[-1] - along * downhill(angle)) < 1e-9


def test_a_ball_that_stopped_bouncing_rests_on_the_plane():
    """A 1 kg ball (r = 6.25 cm, e = 0.25) dropped from 1 m stops bouncing at the Zeno time
    sqrt(2 H / g) (1 + e) / (1 - e) = 0.7525 s and then rests on the plane. The engine's ball used to leave it
    every other step (its lowest point g h^2 / 6 above the plane moving down at g h / 3, the energy rising by
    2/9 m g^2 h^2 each time): the contact's closing impulse did not match its opening one, and carrying their
    mean on kept the cycle going; such an unbalanced contact now gets its resting reaction
    (``contact.solve.settle_contacts``)."""
    h = 1e-3
    scene = ContactScene.build(ball_drop(1.0, 0.0625, 0.25))
    com, vel, _, _ = run(scene, h, 1.5)
    assert np.abs(com[-100:, 0, 2] - 0.0625).max() < 1e-12
    assert np.abs(vel[-100:]).max() < 1e-12


def test_a_contact_that_carries_round_off_beside_loaded_ones_is_no_unbalance():
    """``settle_contacts`` takes the resting reactions where a touching contact's closing impulse differs from its
    opening one by UNBALANCED of the largest impulse among its component's touching contacts. Two servoed pads
    pressed face to face carried 4e-10 N s at one corner and 1e-20 N s (opened: 0) at another: measured by its own
    size that corner changed by all of it, and the trial solve of the whole set ran every step (a third of that
    Gripper's physics); a corner whose share drops by a tenth of the load is an unbalance, as before."""
    contacts = ContactSet.empty(1, 4, 8)
    contacts.rows[:, :, LIN_B:LIN_B + 3] = np.eye(3)  # normal and tangents along the world axes
    contacts.impulse[0] = contacts.opened[0] = (4e-10, 0.0, 1e-11)
    contacts.impulse[1] = (1e-20, 0.0, 0.0)
    contacts.impulse[2], contacts.opened[2] = (3.6e-10, 0.0, 0.0), (4e-10, 0.0, 0.0)
    load = max(_load(contacts, i) for i in range(3))
    assert load == 4e-10 ** 2
    assert not _unbalanced(contacts, 0, load) and _unbalanced(contacts, 2, load)
    assert not _unbalanced(contacts, 1, load) and _unbalanced(contacts, 1, _load(contacts, 1))


def _resting_cube_after_its_closing_kick(h: float) -> ContactScene:
    """A 10 cm, 1 kg cube at rest on a plane (primed, then 20 steps of ``h``), and the stages of the next step run
    one by one up to its closing kick: ``contact.solve_contacts`` comes next."""
    scene = ContactScene.build(box_on_floor((0.05, 0.05, 0.05), (0.0, 0.0, 0.05)))
    assert scene.prime(h) >= 0
    scene.run(h, 20)
    bodies, env, state, contacts, scratch = (scene.engine.bodies, scene.engine.env, scene.state, scene.contacts,
                                             scene.scratch)
    zeros = np.zeros((1, 6))
    begin_step(scene.rows, bodies, state, 0, h, scene.work)
    opening_kick(bodies, env, state, 0, h / 2, zeros, zeros)
    contact.warm_start(bodies, state, 0, h, contacts)
    drift(bodies, state, 0, h)
    assert contact.find_contacts(scene.geoms, bodies, env, state, 0, 21 * h, h, scene.work.com0, scene.work.quat0,
                                 scene.work.vel0, scene.work.momentum0, contacts, scratch, MARGIN, True, False) == 4
    assert contact.correct_positions(scene.geoms, scene.engine.linkage, bodies, state, 0, contacts, scratch,
                                     scene.work, scene.joined, False) >= 0
    opening_kick(bodies, env, state, 0, h / 2, zeros, zeros)
    return scene


def _settle_with_shift(shift) -> int:
    """The resting cube's step (``_resting_cube_after_its_closing_kick``, 2 ms) with ``shift(normals)`` (the four
    corners' normal rows, body b's six columns, (4, 6)) added to the corners' closing normal impulses between
    ``solve_contacts`` and ``settle_contacts``; returns what ``settle_contacts`` returns (0: no event; the trial's
    sweeps where it took the resting reactions)."""
    h = 2e-3
    scene = _resting_cube_after_its_closing_kick(h)
    bodies, env, state, contacts, scratch = (scene.engine.bodies, scene.engine.env, scene.state, scene.contacts,
                                             scene.scratch)
    linkage, zeros = scene.engine.linkage, np.zeros((1, 6))
    assert contact.solve_contacts(linkage, bodies, state, 0, h, contacts, scratch, scene.work, scene.joined,
                                  False) >= 0
    count = contacts.count[0]
    corners = np.flatnonzero(contacts.active[:count])
    assert corners.size == 4
    contacts.impulse[corners, 0] += shift(contacts.rows[corners, 0, LIN_B:LIN_B + 6])
    return contact.settle_contacts(scene.geoms, linkage, bodies, env, state, 0, h, zeros, contacts, scratch,
                                   scene.work, scene.joined, scene.held)


def test_a_load_shifted_between_the_corners_of_a_face_is_no_unbalance_and_a_changed_load_is_one():
    """``settle_contacts``' unbalance (a contact's closing impulse differs from its opening one) calls the
    resting-reaction trial. Four corners share a cube's weight in any split whose net wrench is the same: a
    shift along the null space of their normals' wrenches (a "twist", +-d at alternate corners) moves no body,
    and is no event; the same d at one corner alone is one. (A card crushed at eight corners shifts its load
    between them every step: the trial ran in every step, half that Gripper's physics.)"""
    def twist(normals):
        left, _, _ = np.linalg.svd(normals)  # normals (4, 6) of rank 3: the last left vector spans the null space
        return 1e-3 * GRAVITY * 2e-3 * left[:, 3]

    assert _settle_with_shift(twist) == 0
    assert _settle_with_shift(lambda normals: np.array([1e-3 * GRAVITY * 2e-3, 0.0, 0.0, 0.0])) > 0


def test_the_closing_solve_starts_from_the_least_norm_split_of_the_opening_friction():
    """``begin_solve`` starts each body pair's tangential impulses from the least-norm split of the wrench that
    the pair's opening friction put on it (``contact.solve._carry_friction``). A resting cube's four corners are
    given an opening friction of an equal push along x (a quarter of 1e-4 N s each) and a squeeze along a diagonal
    (the two corners on it pushing towards each other with 5e-5 N s: no force, no torque): the closing solve
    starts from the push alone, a quarter at each corner (the least-norm split of a force and the torque it makes
    about the face's centre), to 1e-9 of it."""
    h = 2e-3
    scene = _resting_cube_after_its_closing_kick(h)
    contacts = scene.contacts
    corners = np.flatnonzero(contacts.active[:contacts.count[0]])
    assert corners.size == 4
    push = np.array([1e-4, 0.0, 0.0])
    for i in corners:
        normal = contacts.rows[i, 0, LIN_B:LIN_B + 3]
        x, y = contacts.point[i, :2]
        inward = -np.array([x, y, 0.0]) / math.hypot(x, y)
        squeeze = 5e-5 * inward if x * y > 0.0 else np.zeros(3)  # the diagonal through (+, +) and (-, -)
        contacts.opened[i] = (contacts.opened[i] @ normal) * normal + push / 4 + squeeze
    begin_solve(scene.engine.linkage, scene.engine.bodies, scene.state, 0, contacts, scene.scratch, scene.work,
                scene.joined, False)
    for i in corners:
        tangential = contacts.impulse[i, 1:] @ contacts.rows[i, 1:, LIN_B:LIN_B + 3]
        assert np.abs(tangential - push / 4).max() < 1e-9 * 1e-4 / 4, (i, tangential)


def test_a_cube_below_its_static_angle_stays_when_mu_k_is_below_mu_s():
    """A 10 cm cube (1 kg) at rest on a 25 deg slope, mu_s = 0.5 > tan 25 deg = 0.466, mu_k = 0.4: a static
    solution exists (each corner's friction tan(angle) N_i is inside its cone mu_s N_i, whatever the split of
    the normal force), so it must stay. The contact-space sweeps used to declare a corner sliding whenever they
    saturated it on the way to convergence, and its cone then shrank to mu_k: the cube slid 0.0668 m in 0.5 s at
    the kinetic rate (from tan = 0.88 mu_s for mu_s = 0.5, 0.86 mu_s for mu_s = 0.75; with mu_k = mu_s it was
    held). Now only a converged solve without a static solution makes a point with mu_k < mu_s slide
    (``dense._update_sliding``); the slope property above covers the whole range of angles."""
    scene = ContactScene.build(on_slope('type="box" size="0.05 0.05 0.05"', 0.05, 25.0, 0.4, 0.5))
    start = scene.state.com[0, 0].copy()
    com, _, _, _ = run(scene, 1e-3, 0.5)
    assert np.abs(com[:, 0] - start).max() < 1e-9
