"""Property tests of the engine as a whole (hypothesis, derandomized): get_state/set_state at random instants of
random scenes continue bit for bit (in the same simulator and in a fresh one), worlds with contacts stepped
together each equal the same world stepped alone, RATTLE chains of rods and ropes and hinges with limits keep
their constraints to the solver's tolerance with a bounded, non-drifting energy error, and a block on a slide
joint bounces off a plane like a free one (joints and contacts in one solve)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mechgym
from mechgym.errors import SimulationError
from mechgym.physics import constraints as rattle
from mechgym.physics.contact import ContactSet, prime_contacts
from mechgym.physics.state import State
from mechgym.physics.tolerances import MARGIN, TOUCH

from .constraints.helpers import ENERGY, FORCE, RESIDUAL, make_bodies, run, sphere
from .contact.driver import ContactScene, advance_worlds

GRAVITY = 9.81



# ----------------------------------------------------------------------------------------------- get/set state
def free_bodies_on_a_plane(draw) -> str:
    """MJCF: 1-3 boxes or spheres (free joints, random size, mass, tilt, velocity) above a plane, 0.5 m apart in
    x so that they start clear of each other; optional restitution and friction."""
    count = draw(st.integers(1, 3))
    bodies, custom = [], []
    for k in range(count):
        size = draw(st.floats(0.02, 0.1))
        height = draw(st.floats(0.0, 0.5))
        euler = " ".join(f"{draw(st.floats(-90, 90)):.3f}" for _ in range(3))
        restitution = draw(st.sampled_from([0.0, 0.3, 0.8]))
        friction = draw(st.sampled_from([0.2, 0.7, 1.2]))
        if draw(st.booleans()):
            geom = f'type="box" size="{size} {0.8 * size} {0.6 * size}"'
        else:
            geom = f'type="sphere" size="{size}"'
        custom.append(f'<numeric name="restitution:g{k}" data="{restitution}"/>')
        bodies.append(f'<body name="b{k}" pos="{0.5 * k} 0 {size + height}" euler="{euler}"><freejoint/>'
                      f'<geom name="g{k}" {geom} mass="{draw(st.floats(0.05, 5.0)):.4f}" '
                      f'friction="{friction} 0.005 0.0001"/></body>')
    return (f'<mujoco><custom>{"".join(custom)}</custom><worldbody>'
            f'<geom name="floor" type="plane" size="5 5 0.1"/>{"".join(bodies)}</worldbody></mujoco>')


@st.composite
def scenes(draw, kind: str):
    """(scene, dt): a bundled scene at a step it runs at, or a random scene of free bodies on a plane."""
    if kind == "slider_crank":
        return kind, draw(st.sampled_from([1e-4, 2e-4, 5e-4]))
    if kind == "random":
        return free_bodies_on_a_plane(draw), draw(st.sampled_from([1e-3, 2e-3, 5e-3]))
    return kind, draw(st.sampled_from([1e-3, 2e-3, 5e-3]))


def controls(sim, rng) -> np.ndarray:
    return np.array([rng.uniform(lo, hi) for lo, hi in sim.model.actuator_ctrlrange])


def record(sim, ctrl, steps: int):
    """Set ``ctrl``, then step one at a time: (qpos per step, qvel per step, events, the failure or None)."""
    sim.ctrl = ctrl
    qpos, qvel, failure = [], [], None
    for _ in range(steps):
        try:
            sim.step(1)
        except SimulationError as error:
            failure = str(error)
            break
        qpos.append(sim.qpos)
        qvel.append(sim.qvel)
    return np.array(qpos), np.array(qvel), sim.events, failure


@pytest.mark.parametrize("kind", ["cube_drop", "gripper", "slider_crank", "random"])
@settings(max_examples=15, deadline=None, derandomize=True)
@given(data=st.data(), before=st.integers(0, 400), after=st.integers(1, 80), seed=st.integers(0, 2**32 - 1),
       push=st.booleans())
def test_a_state_saved_at_a_random_instant_continues_bit_for_bit(kind, data, before, after, seed, push):
    """Any scene, random controls, k random steps, get_state; m more steps with new controls (qpos, qvel, events
    and any SimulationError recorded per step); set_state and the same m steps again; then a fresh simulator
    loaded from the same scene, set_state, the same m steps: all three runs are bit-for-bit equal, the
    restored controls are the saved ones, and a force window open across the save instant is part of the
    state. A continuation that raises SimulationError raises it at the same step with the same message in all
    three. (A run that fails in its first k steps is discarded: the property is about the continuation; the two
    such gripper examples are ``test_engine_iv_the_gripper_card_pushed_in_its_slot_fails_the_contact_solve``.)"""
    scene, dt = data.draw(scenes(kind))
    rng = np.random.default_rng(seed)
    sim = mechgym.load(scene, backend="mechgym", dt=dt)
    first, second = controls(sim, rng), controls(sim, rng)
    sim.ctrl = first
    if push:
        body = next(b for b in range(1, sim.model.nbody) if sim.model.body_dofnum[b] > 0)
        name = sim.model.body(body).name
        # open at a random instant around the save, for a random span
        sim.apply_force(name, rng.normal(size=3) * sim.model.body_subtreemass[body] * GRAVITY,
                        rng.normal(size=3) * 1e-3, start=dt * rng.uniform(0, before + after),
                        stop=dt * rng.uniform(before + after, before + 2 * after + 1))
    try:
        sim.step(before)
    except SimulationError:
        return
    saved = sim.get_state()
    reference = record(sim, second, after)
    sim.set_state(saved)
    assert np.array_equal(sim.ctrl, first) and sim.step_count == before
    replay = record(sim, second, after)
    fresh = mechgym.load(scene, backend="mechgym", dt=dt)
    fresh.set_state(saved)
    assert np.array_equal(fresh.ctrl, first)
    again = record(fresh, second, after)
    for run_ in (replay, again):
        assert np.array_equal(run_[0], reference[0]) and np.array_equal(run_[1], reference[1])
        assert run_[2] == reference[2] and run_[3] == reference[3]


def test_the_gripper_card_pushed_and_twisted_in_its_slot_is_solved():
    """Found by the state property (gripper, seed 119, k = 58): the bundled gripper at dt = 1 ms, fingers open
    (ctrl 0.0904, 0.0256, 0.0287; they touch the card from 0.0345), a window from t = 0.0188 s on the 10 g card
    of (0.0774, -0.0192, 0.0706) N and (-1.40e-3, 1.10e-4, -7.93e-5) N m: at t = 0.029 s, the card still in
    its slot (moved 0.3 mm, turned 0.4 deg), the step raised "the contact solve did not converge" until the
    contact-space solve had Newton's method (``contact.newton``). The 0.1 s now runs."""
    sim = mechgym.load("gripper", backend="mechgym", dt=1e-3)
    sim.ctrl = [0.09037288786241415, 0.02562392743672136, 0.028665612877388457]
    sim.apply_force("card", [0.07740318635737299, -0.01921463069382054, 0.07060495555655892],
                    [-0.001399408390610021, 0.00010990939668216534, -7.927796282364432e-05],
                    start=0.018787653043242827, stop=0.12050349672516174)
    sim.step(100)


# ----------------------------------------------------------------------------------------------- worlds
def drop_scene(draw) -> str:
    """MJCF: a box and a sphere (free, random sizes, restitution and friction) over a plane, 0.6 m apart."""
    box = [draw(st.floats(0.02, 0.1)) for _ in range(3)]
    radius = draw(st.floats(0.02, 0.1))
    e_box, e_ball = draw(st.floats(0.0, 0.9)), draw(st.floats(0.0, 0.9))
    friction = draw(st.floats(0.1, 1.2))
    return (f'<mujoco><custom><numeric name="restitution:box" data="{e_box}"/>'
            f'<numeric name="restitution:ball" data="{e_ball}"/></custom><worldbody>'
            f'<geom name="floor" type="plane" size="5 5 0.1" friction="{friction} 0 0"/>'
            f'<body pos="0 0 0.5"><freejoint/><geom name="box" type="box" size="{box[0]} {box[1]} {box[2]}" '
            f'mass="1" friction="{friction} 0 0"/></body>'
            f'<body pos="0.6 0 0.5"><freejoint/><geom name="ball" type="sphere" size="{radius}" mass="0.5" '
            f'friction="{friction} 0 0"/></body></worldbody></mujoco>')


def random_unit_quaternion(rng) -> np.ndarray:
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


@st.composite
def world_sets(draw):
    return drop_scene(draw), draw(st.integers(2, 4)), draw(st.integers(0, 2**32 - 1)), draw(
        st.sampled_from([1e-3, 2e-3, 5e-3]))


@settings(max_examples=30, deadline=None, derandomize=True)
@given(world_sets())
def test_worlds_with_contacts_stepped_together_each_equal_the_world_alone(world_set):
    """2-4 worlds of one drop scene (a box and a ball over a plane), each from its own random heights,
    orientations and velocities, stepped together for 0.8 s (landings, bounces, rest): every world's trace,
    touching-contact counts, events and final state are bit-for-bit those of the same world stepped alone. A
    world whose contact solve fails (``test_engine_iv_a_box_tumbling_onto_a_plane_fails_the_contact_solve``)
    fails alone at the same step with the same code, and the worlds are compared up to that step (the driver
    stops every world there)."""
    xml, worlds, seed, h = world_set
    rng = np.random.default_rng(seed)
    scene = ContactScene.build(xml)
    state = State(*(np.repeat(a, worlds, axis=0) for a in scene.state))
    for w in range(worlds):
        for b in range(2):
            state.com[w, b, 2] = rng.uniform(0.15, 0.6)
            state.quat[w, b] = random_unit_quaternion(rng)
            state.vel[w, b] = rng.normal(size=3) * [0.5, 0.5, 1.0]
            state.momentum[w, b] = rng.normal(size=3) * scene.engine.bodies.inertia[b]
    start = state.copy()
    contacts = ContactSet.empty(worlds)
    engine = scene.engine
    for w in range(worlds):
        prime_contacts(scene.geoms, engine.linkage, engine.bodies, engine.env, state, w, h, np.zeros((2, 6)),
                       contacts, scene.scratch, scene.work, scene.joined, scene.held, MARGIN)
    n = int(round(0.8 / h))
    trace, active, status = advance_worlds(engine, state, contacts, scene.scratch, h, n)
    failed = status[:, 1] != 0
    done = int(status[failed, 0].min()) if failed.any() else n  # the driver stops all worlds at a failing step
    capacity = contacts.prev_geom1.size // worlds
    for w in range(worlds):
        alone = ContactScene.build(xml)
        alone.state.assign(State(*(a[w:w + 1] for a in start)))
        alone.prime(h)
        alone_trace, alone_active, alone_status = alone.run(h, n)
        if failed[w]:  # the same failure at the same step
            assert tuple(alone_status) == tuple(status[w])
        else:  # no failure up to the step where the driver stopped (alone it may fail later)
            assert alone_status[1] == 0 or alone_status[0] > done
        assert np.array_equal(alone_trace[:done], trace[w, :done]), np.abs(alone_trace - trace[w])[:done].max()
        assert np.array_equal(alone_active[:done], active[w, :done])
        if failed.any():
            continue
        count = int(contacts.event_count[w])
        assert count == int(alone.contacts.event_count[0])
        assert np.array_equal(contacts.event_time[w, :count], alone.contacts.event_time[0, :count])
        assert np.array_equal(contacts.event_speed[w, :count], alone.contacts.event_speed[0, :count])
        assert contacts.count[w] == alone.contacts.count[0]
        mine = slice(w * capacity, w * capacity + min(int(contacts.count[w]), capacity))
        theirs = slice(0, min(int(alone.contacts.count[0]), capacity))
        assert np.array_equal(contacts.force[mine], alone.contacts.force[theirs])
        for a, b in zip(state, alone.state, strict=True):
            assert np.array_equal(a[w], b[0])


# A box from the worlds property's shrunk example (seed 0, world 1), alone, through the public API.
FAILING_BOX = ('<mujoco><custom><numeric name="restitution:box" data="0.5"/></custom><worldbody>'
               '<geom name="floor" type="plane" size="5 5 0.1" friction="0.5 0 0"/>'
               '<body pos="0 0 0.5"><freejoint/><geom name="box" type="box" size="0.078125 0.0625 0.095703125" '
               'mass="1" friction="0.5 0 0"/></body></worldbody></mujoco>')
FAILING_QPOS = [0.0, 0.0, 0.4517809866121336, 0.28686842373858373, 0.7373247282408738, 0.07672371850845597,
                -0.6067719700220977]
FAILING_QVEL = [-0.4608626881292097, -0.22886291283366958, 0.2201951234700494, -0.08236416934885593,
                -0.26082687601485577, 1.301532371723388]


def test_a_box_tumbling_onto_a_plane_comes_to_rest_on_a_face():
    """A 15.6 x 12.5 x 19.1 cm box (1 kg, e = 0.5, mu = 0.5) thrown onto a plane from 0.45 m, tumbling (found by
    the worlds property): 25 impacts, then it rocks between 3 and 1 touching contacts, where at t = 0.757 s
    (dt = 1 ms) the position correction used to fail (its direct step corrected the pushing set one contact at a
    time; now ``linalg.proximal_lcp``). It comes to rest on a face: its centre at that face's half size within
    TOUCH (measured 6e-11 m above it), four contacts touching, |qvel| below 1e-9. Of 120 single boxes from the
    worlds property's distribution (2-10 cm half sizes, e < 0.9, mu 0.1-1.2, random tumbles from 0.15-0.6 m,
    dt 1, 2 and 5 ms), 16 failed this way within 2 s before (13 in another draw of 120 with the contact-space search
    of parts already in); 0 of 240 now."""
    sim = mechgym.load(FAILING_BOX, backend="mechgym", dt=1e-3)
    sim.reset(qpos=FAILING_QPOS, qvel=FAILING_QVEL)
    sim.step(2000)
    assert np.abs(sim.qvel).max() < 1e-9
    assert len(sim.contacts()) == 4
    assert np.min(np.abs(sim.qpos[2] - np.array([0.078125, 0.0625, 0.095703125]))) < TOUCH


# ----------------------------------------------------------------------------------------------- RATTLE
@st.composite
def chains(draw, rope: bool):
    """A chain of 1-3 balls (radius 1 cm, random masses) hung from the world origin by rods (DISTANCE rows) or
    ropes (one-sided, |d| <= L) of random lengths, at random positions (ropes: anywhere within reach, rods: on
    their spheres) and velocities."""
    count = draw(st.integers(1, 3))
    masses = [draw(st.floats(0.1, 3.0)) for _ in range(count)]
    lengths = [draw(st.floats(0.2, 1.0)) for _ in range(count)]
    seed = draw(st.integers(0, 2**32 - 1))
    h = draw(st.sampled_from([2.5e-4, 5e-4, 1e-3, 2e-3]))
    return masses, lengths, rope, seed, h


def chain(masses, lengths, rope, seed):
    rng = np.random.default_rng(seed)
    radius = 0.01
    bodies = make_bodies(masses, [sphere(m, radius)[1] for m in masses])
    sense = rattle.UPPER if rope else rattle.EQUALITY
    rows = rattle.Rows.concatenate([rattle.make_rows(rattle.DISTANCE, rattle.WORLD if k == 0 else k - 1, k,
                                                     offset=length, sense=sense)
                                    for k, length in enumerate(lengths)])
    state = State.zeros(1, len(masses))
    point = np.zeros(3)
    for k, length in enumerate(lengths):
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        reach = rng.uniform(0.3, 1.0) if rope else 1.0
        point = point + reach * length * direction
        state.com[0, k] = point
        velocity = rng.normal(size=3)
        if not rope:  # along the rod's sphere: no radial part relative to the previous ball
            velocity -= (velocity @ direction) * direction
        previous = state.vel[0, k - 1] if k > 0 else np.zeros(3)
        state.vel[0, k] = previous + velocity
    return bodies, rows, state


@settings(max_examples=25, deadline=None, derandomize=True)
@given(chains(rope=False))
def test_rattle_chains_of_rods_hold_their_constraints_with_bounded_energy(params):
    """Rods: see ``_chain_property``."""
    _chain_property(params)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(chains(rope=True))
def test_rattle_chains_of_ropes_hold_their_constraints_with_bounded_energy(params):
    """Ropes: see ``_chain_property``."""
    _chain_property(params)


def _chain_property(params):
    """Random chains of 1-3 balls on rods or ropes, 3 s at a random step: every step keeps each rod to its length and
    each rope within it to 1e-10 m (the solver's 1e-13 tolerance plus round-off of the chain's positions), the top
    rope only pulls (row 0's reported force, -tension, recorded every step, is <= 0), and the energy error stays
    within (h w)^2 E. RATTLE is symplectic and second order, so its energy error is the O(h^2) gap to a conserved
    modified energy, of order (h w)^2 E with w the system's fastest rate: here w^2 = (M / m_min) (g + v^2 / l_min) /
    l_min (a rod's stiffness is its tension, at most the whole mass M's weight and centripetal pull, over the
    lightest ball m_min on the shortest link l_min), v^2 = 2 (K_0 + 2 M g L) / m_min the largest speed the energy
    allows the lightest ball, E = M g L + K_0 the energy scale (L the chain's length). A rope that jerks taut is an
    inelastic impact, so with ropes only a rise above the initial energy is bounded. A single rod (a spherical
    pendulum, integrable) must not drift either: the last second's largest error stays within twice the first
    second's (plus 1e-12 E); chains of 2-3 rods are chaotic and their error band follows how fast they move, so that
    is not a property of theirs. Measured: residual 1.0e-13 m; rods' error 0.19 of the bound, ropes' rise 3e-10 of
    it; the single rod's last-second band 1.0 times its first's."""
    masses, lengths, rope, seed, h = params
    bodies, rows, state = chain(masses, lengths, rope, seed)
    total, length = sum(masses), sum(lengths)
    kinetic = float(sum(0.5 * m * v @ v for m, v in zip(masses, state.vel[0], strict=True)))
    initial = kinetic + float(sum(m * GRAVITY * c[2] for m, c in zip(masses, state.com[0], strict=True)))
    scale = total * GRAVITY * length + kinetic
    speed2 = 2.0 * (kinetic + 2.0 * total * GRAVITY * length) / min(masses)
    omega2 = total / min(masses) * (GRAVITY + speed2 / min(lengths)) / min(lengths)
    bound = h * h * omega2 * scale
    n = int(round(3.0 / h))
    done, trace, _ = run(bodies, rows, state, h, n)
    assert done == n
    assert trace[:, RESIDUAL].max() <= 1e-10, trace[:, RESIDUAL].max()
    if rope:
        assert trace[:, FORCE].max() <= 0.0
    error = trace[:, ENERGY] - initial
    if rope:
        assert error.max() <= bound, error.max() / bound
    else:
        assert np.abs(error).max() <= bound, np.abs(error).max() / bound
        if len(masses) == 1:
            second = int(round(1.0 / h))
            assert np.abs(error[-second:]).max() <= 2.0 * np.abs(error[:second]).max() + 1e-12 * scale


def limited_arm(lower: float, upper: float, elbow: float) -> str:
    """MJCF: a double pendulum of capsules (1 kg, 0.5 m; 0.6 kg, 0.4 m) on hinges about y, the shoulder limited
    to [lower, upper] deg, the elbow to [-elbow, elbow] deg; no contacts."""
    return f"""<mujoco><option gravity="0 0 -{GRAVITY}"><flag contact="disable"/></option><worldbody>
      <body name="upper"><joint name="shoulder" type="hinge" axis="0 1 0" limited="true" range="{lower} {upper}"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04" mass="1"/>
        <body name="lower" pos="0 0 -0.5"><joint name="elbow" type="hinge" axis="0 1 0" limited="true"
          range="{-elbow} {elbow}"/><geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.03" mass="0.6"/></body>
      </body></worldbody></mujoco>"""


@settings(max_examples=25, deadline=None, derandomize=True)
@given(lower=st.floats(-120.0, -10.0), upper=st.floats(10.0, 120.0), elbow=st.floats(10.0, 150.0),
       where=st.tuples(st.floats(0.0, 1.0), st.floats(0.0, 1.0)), spin=st.tuples(st.floats(-8, 8), st.floats(-8, 8)),
       h=st.sampled_from([5e-4, 1e-3, 2e-3]))
def test_a_double_pendulum_with_hinge_limits_stays_inside_them_and_gains_no_energy(lower, upper, elbow, where,
                                                                                     spin, h):
    """A double pendulum whose hinges have random ranges, started anywhere inside them at random rates, 1.5 s
    through ``mechgym.load``: at every step both hinge angles are inside their ranges to 1e-10 rad (the limit
    rows' tolerance plus round-off), and the energy never rises above the initial energy by more than
    (h w)^2 E (the O(h^2) band of RATTLE's modified energy; a limit stop is an inelastic impact and only
    removes energy), w^2 = (g + v^2 / l) / l with l = 0.4 m the shorter link, v^2 = 2 (K_0 + 2 m g l_total)
    / 0.6 kg, E = m g l_total + K_0. Measured: 1.2e-15 rad past a limit, rise 0.0024 of the bound."""
    sim = mechgym.load(limited_arm(lower, upper, elbow), backend="mechgym", dt=h)
    start = [math.radians(lower + where[0] * (upper - lower)), math.radians(elbow * (2.0 * where[1] - 1.0))]
    sim.reset(qpos=start, qvel=list(spin))
    initial = sim.energy()
    base = mechgym.load(limited_arm(lower, upper, elbow), backend="mechgym", dt=h)
    base.reset(qpos=start, qvel=[0.0, 0.0])
    kinetic = initial - base.energy()
    scale = 1.6 * GRAVITY * 0.9 + kinetic
    speed2 = 2.0 * (kinetic + 2.0 * 1.6 * GRAVITY * 0.9) / 0.6
    bound = h * h * (GRAVITY + speed2 / 0.4) / 0.4 * scale
    ranges = np.radians([[lower, upper], [-elbow, elbow]])
    worst, rise = 0.0, -math.inf
    for _ in range(int(round(1.5 / h))):
        sim.step(1)
        angle = sim.qpos
        worst = max(worst, float(np.max(np.maximum(ranges[:, 0] - angle, angle - ranges[:, 1]))))
        rise = max(rise, sim.energy() - initial)
    assert worst <= 1e-10, worst
    assert rise <= bound, rise / bound


# ----------------------------------------------------------------------------------------------- joints + contacts
def slide_block(e: float, height: float, half: float) -> str:
    """A cube (half size ``half``, 1 kg) on a vertical slide joint, its bottom ``height`` above a plane."""
    return f"""<mujoco><custom><numeric name="restitution:block" data="{e}"/></custom><worldbody>
      <geom name="floor" type="plane" size="1 1 0.1"/>
      <body name="block" pos="0 0 {height + half}"><joint name="lift" type="slide" axis="0 0 1"/>
        <geom name="block" type="box" size="{half} {half} {half}" mass="1"/></body></worldbody></mujoco>"""


@settings(max_examples=30, deadline=None, derandomize=True)
@given(e=st.floats(0.2, 0.95), height=st.floats(0.05, 1.5), half=st.floats(0.02, 0.2),
       h=st.sampled_from([5e-4, 1e-3, 2e-3, 5e-3, 1e-2]))
def test_a_block_on_a_slide_joint_bounces_like_a_free_one(e, height, half, h):
    """A cube on a vertical slide joint dropped from a random height H with a random restitution: the first
    impact is reported at sqrt(2 H / g) to 1e-12 s at sqrt(2 g H) (relative 1e-12), the second 2 e v / g later
    (1e-12 s) at e v (1e-12; the engine interpolates the instant of impact, so these are closed forms to
    round-off; measured: 3.2e-15 s and 6.2e-15), and the block never enters the floor (qpos, its displacement,
    stays above -H - 1e-9 m): the slide joint's rows and the contacts are one solve."""
    sim = mechgym.load(slide_block(e, height, half), backend="mechgym", dt=h)
    v = math.sqrt(2.0 * GRAVITY * height)
    fall = math.sqrt(2.0 * height / GRAVITY)
    lowest = math.inf
    for _ in range(int(math.ceil((fall + 2.0 * e * v / GRAVITY) / h)) + 5):
        sim.step(1)
        lowest = min(lowest, sim.qpos[0])
    events = sim.events
    assert len(events) >= 2
    first, second = events[0], events[1]
    assert abs(first.time - fall) < 1e-12
    assert abs(first.speed / v - 1.0) < 1e-12
    assert abs(second.time - first.time - 2.0 * e * v / GRAVITY) < 1e-12
    assert abs(second.speed / (e * v) - 1.0) < 1e-12
    assert lowest > -height - 1e-9
