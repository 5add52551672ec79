"""Confinements (mechgym.physics.confinement): every refusal by its code, every accepted form, and the
physics: held bodies never leave their surface, Newton's rule at each projection, no energy gained by
``slide``, exact rest, bounce apexes against the closed form, and the state round trip."""

from __future__ import annotations

import re

import numpy as np
import pytest

import mechgym
from mechgym.errors import SceneError
from mechgym.physics.tolerances import MAX_HULL_POINTS

G = 9.81
NO_COLLISION = 'contype="0" conaffinity="0"'
TUBE = f'<geom name="tube" type="cylinder" size="0.1 0.2" {NO_COLLISION}/>'
BALL = f'<geom name="ball_geom" type="sphere" size="0.02" mass="0.1" {NO_COLLISION}/>'


def scene(declarations: str | list[str], surface: str = TUBE, body: str = BALL, gravity: str = f"0 0 -{G}",
          joint: str = "<freejoint/>", extra: str = "") -> str:
    """An MJCF scene: the body 'ball' (with ``joint`` and ``body``'s geoms) and ``surface`` in the world, the
    confinement text fields ``declarations`` (each the data of one, named c0, c1, ...); angles in radians."""
    if isinstance(declarations, str):
        declarations = [declarations]
    texts = "".join(f'<text name="confinement:c{i}" data="{d}"/>' for i, d in enumerate(declarations))
    return f"""<mujoco><compiler angle="radian"/><option gravity="{gravity}"/><custom>{texts}</custom>
<worldbody>{surface}<body name="ball">{joint}{body}</body>{extra}</worldbody></mujoco>"""


CENTRE = "body=ball surface=tube margin=0.0005 rule=reflect restitution=0.9 extent=0.02"


# ----------------------------------------------------------------- refusals


@pytest.mark.parametrize(("code", "xml"), [
    ("confinement.moving-surface",
     scene(CENTRE, surface="", extra=f'<body name="can"><joint type="slide" axis="1 0 0"/>{TUBE}</body>')),
    ("target.not-accepted", scene(CENTRE, joint='<joint type="hinge" axis="0 0 1"/>')),
    ("target.not-accepted", scene(CENTRE, joint="")),  # a static body has no dynamics
    ("target.not-accepted",
     scene(CENTRE, extra='<body name="anchor" pos="0 0 0.1"><freejoint/><geom size="0.01"/></body>')
     .replace("</worldbody>", '</worldbody><equality><connect body1="ball" body2="anchor" anchor="0 0 0"/>'
              "</equality>")),
    ("confinement.hull-not-held",
     scene("body=ball surface=tube margin=0.001 rule=slide spacing=0.005",
           body='<inertial pos="0 0 0" mass="0.1" diaginertia="1e-5 1e-5 1e-5"/>')),
    ("confinement.no-hull",
     scene("body=ball surface=tube margin=0.001 rule=slide spacing=0.005",
           body=f'<geom type="ellipsoid" size="0.02 0.01 0.01" {NO_COLLISION}/>')),
    ("confinement.surface-shape",
     scene(CENTRE, surface=f'<geom name="tube" type="capsule" size="0.1 0.2" {NO_COLLISION}/>')),
    ("confinement.spacing-short", scene("body=ball surface=tube margin=0.0005 rule=slide spacing=0.01")),
    ("confinement.spacing-short", scene("body=ball surface=tube margin=0.0005 rule=slide spacing=0.0001")),
    ("confinement.more-than-one", scene([CENTRE, "body=ball surface=tube rule=stop extent=0.02"])),
    ("confinement.rule", scene("body=ball surface=tube rule=bounce extent=0.02")),
    ("confinement.surface-collides", scene(CENTRE, surface='<geom name="tube" type="cylinder" size="0.1 0.2"/>')),
    ("confinement.no-room", scene("body=ball surface=tube margin=0.05 rule=slide extent=0.06")),
    ("custom.unknown-body", scene(CENTRE.replace("body=ball", "body=nothing"))),
    ("custom.unknown-geom", scene(CENTRE.replace("surface=tube", "surface=nothing"))),
    ("custom.bad-value", scene("body=ball surface=tube rule=slide")),  # neither extent nor spacing
    ("custom.bad-value", scene("body=ball surface=tube rule=slide extent=0.02 spacing=0.01")),
    ("custom.bad-value", scene("body=ball surface=tube rule=reflect extent=0.02")),  # no restitution
    ("custom.bad-value", scene("body=ball surface=tube rule=reflect restitution=1.5 extent=0.02")),
    ("custom.bad-value", scene("body=ball surface=tube rule=slide extent=0.02 colour=red")),
    ("custom.bad-value", scene("body=ball surface=tube rule=slide margin=-1 extent=0.02")),
])
def test_refusals_carry_their_code(code, xml):
    with pytest.raises(SceneError) as refused:
        mechgym.load(xml, backend="mechgym")
    assert refused.value.code == code


def test_two_confinements_on_one_body_are_named_together():
    with pytest.raises(SceneError) as refused:
        mechgym.load(scene([CENTRE, "body=ball surface=tube rule=stop extent=0.02"]), backend="mechgym")
    assert "confinement:c0" in refused.value.message and "confinement:c1" in refused.value.message


@pytest.mark.parametrize("spacing", [0.01, 0.0001])
def test_a_refused_spacing_names_one_that_passes(spacing):
    """Too coarse for the margin, or too many points: both ends of the range the message gives are accepted."""
    with pytest.raises(SceneError) as refused:
        mechgym.load(scene(f"body=ball surface=tube margin=0.0005 rule=slide spacing={spacing}"), backend="mechgym")
    coarsest, finest = re.search(r"give spacing <= (\S+) m and >= (\S+) m", refused.value.message).groups()
    for passing in (coarsest, finest):
        sim = mechgym.load(scene(f"body=ball surface=tube margin=0.0005 rule=slide spacing={passing}"),
                           backend="mechgym")
        assert 0 < sim.engine.confinements.points.shape[0] <= MAX_HULL_POINTS


def test_a_margin_no_spacing_can_hold_is_refused_with_the_margin_that_can():
    with pytest.raises(SceneError) as refused:
        mechgym.load(scene("body=ball surface=tube margin=1e-7 rule=slide spacing=0.001"), backend="mechgym")
    assert refused.value.code == "confinement.spacing-short"
    margin, spacing = re.search(r"give margin >= (\S+) m \(with spacing (\S+) m\)", refused.value.message).groups()
    sim = mechgym.load(scene(f"body=ball surface=tube margin={margin} rule=slide spacing={spacing}"),
                       backend="mechgym")
    assert 0 < sim.engine.confinements.points.shape[0] <= MAX_HULL_POINTS


def test_mujoco_refuses_confinements():
    with pytest.raises(SceneError) as refused:
        mechgym.load(scene(CENTRE), backend="mujoco")
    assert refused.value.code == "confinement.unsupported-backend"


def test_a_force_aimed_at_a_confinement_is_refused_after_the_build():
    sim = mechgym.load(scene(CENTRE), backend="mechgym")
    with pytest.raises(SceneError) as refused:
        sim.apply_force("c0", [1.0, 0.0, 0.0])
    assert refused.value.code == "post-build.not-by-edge"
    sim.apply_force("ball", [1.0, 0.0, 0.0], stop=0.01)  # the body itself takes forces
    sim.step(20)


# ----------------------------------------------------------------- accepted forms

SURFACES = {  # geom, and whether a held point p (surface frame) with held distance d is inside
    "plane": (f'<geom name="s" type="plane" size="1 1 0.1" {NO_COLLISION}/>', lambda p, d: p[2] >= d),
    "tube": (f'<geom name="s" type="cylinder" size="0.1 0.2" {NO_COLLISION}/>',
             lambda p, d: np.hypot(p[0], p[1]) <= 0.1 - d and abs(p[2]) <= 0.2 - d),
    "box": (f'<geom name="s" type="box" size="0.1 0.15 0.2" {NO_COLLISION}/>',
            lambda p, d: np.all(np.abs(p) <= np.array([0.1, 0.15, 0.2]) - d)),
    "sphere": (f'<geom name="s" type="sphere" size="0.15" {NO_COLLISION}/>',
               lambda p, d: np.linalg.norm(p) <= 0.15 - d),
}
POSE = 'pos="0.01 -0.02 0.03" euler="0.4 -0.3 0.2"'  # the surface's pose in the world
TOLERANCE = 1e-12  # m: tolerances.HOLD_TOLERANCE


def _surface_frame(point: np.ndarray) -> np.ndarray:
    """A world point in the frame of a geom at POSE."""
    import mujoco
    quat = np.zeros(4)
    mujoco.mju_euler2Quat(quat, np.array([0.4, -0.3, 0.2]), "xyz")
    out = np.zeros(3)
    mujoco.mju_negQuat(quat, quat)
    mujoco.mju_rotVecQuat(out, point - np.array([0.01, -0.02, 0.03]), quat)
    return out


@pytest.mark.parametrize("rule", ["slide", "reflect restitution=0.7", "stop"])
@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_the_centre_stays_inside_every_surface(surface, rule):
    geom, inside = SURFACES[surface]
    xml = scene(f"body=ball surface=s margin=0.001 rule={rule} extent=0.02",
                surface=geom.replace("/>", f" {POSE}/>"), body=BALL)
    sim = mechgym.load(xml, backend="mechgym", dt=0.002)
    sim.reset(qpos=[0.02, 0.0, 0.05, 1, 0, 0, 0], qvel=[1.5, -2.0, 1.0, 3.0, 0.0, 1.0])
    for _ in range(500):
        sim.step(1)
        assert inside(_surface_frame(sim.body("ball").pos), 0.021 - TOLERANCE)


HULLS = {  # each geom's farthest reach from the origin at its world position and rotation (p, R)
    "sphere": (f'<geom type="sphere" size="0.02" mass="0.1" {NO_COLLISION}/>',
               lambda p, R: np.linalg.norm(p) + 0.02),
    "capsule": (f'<geom type="capsule" size="0.01 0.03" mass="0.1" {NO_COLLISION}/>',
                lambda p, R: max(np.linalg.norm(p + s * 0.03 * R[:, 2]) for s in (-1, 1)) + 0.01),
    # a cylinder's farthest point lies on a rim (|x|^2 is convex): the rims at 10,000 points each
    "cylinder": (f'<geom type="cylinder" size="0.015 0.02" mass="0.1" {NO_COLLISION}/>',
                 lambda p, R: max(np.linalg.norm(p + 0.015 * (np.outer(np.cos(a), R[:, 0])
                                                              + np.outer(np.sin(a), R[:, 1])) + s * 0.02 * R[:, 2],
                                                 axis=1).max()
                                  for s in (-1, 1) for a in [np.linspace(0, 2 * np.pi, 10_000)])),
    "box": (f'<geom type="box" size="0.02 0.03 0.01" mass="0.1" {NO_COLLISION}/>',
            lambda p, R: max(np.linalg.norm(p + R @ (np.array([sx, sy, sz]) * [0.02, 0.03, 0.01]))
                             for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1))),
}
HULL_POSE = 'pos="0.005 0 0.01" euler="0.3 0.2 0.1"'


@pytest.mark.parametrize("hull", sorted(HULLS))
def test_every_sampled_hull_is_held(hull):
    """Each samplable geom kind, off the body's centre of mass and turned, beside a second geom, thrown spinning
    inside a sphere of radius 0.15 m with margin 0.5 mm at spacing 2 mm: no point of the true geom (its
    reach from the geom's pose, not from the samples) ever leaves the sphere."""
    geom, reach = HULLS[hull]
    body = geom.replace("/>", f" {HULL_POSE}/>") + f'<geom type="sphere" size="0.005" pos="-0.02 0 0" {NO_COLLISION}/>'
    xml = scene("body=ball surface=s margin=0.0005 rule=reflect restitution=0.5 spacing=0.002",
                surface=SURFACES["sphere"][0], body=body)
    sim = mechgym.load(xml, backend="mechgym", dt=0.002)
    sim.reset(qvel=[1.0, -0.5, 2.0, 20.0, -10.0, 5.0])
    geom = sim.model.body("ball").geomadr[0]  # the hull's geom (the second is the small sphere)
    offset, turn = sim.model.geom_pos[geom], _matrix(sim.model.geom_quat[geom])
    farthest = 0.0
    for _ in range(500):
        sim.step(1)
        frame = sim.body("ball")
        rotation = _matrix(frame.quat)
        small = np.linalg.norm(frame.pos + rotation @ [-0.02, 0.0, 0.0]) + 0.005
        farthest = max(farthest, reach(frame.pos + rotation @ offset, rotation @ turn), small)
    assert 0.14 < farthest <= 0.15


def _matrix(quat) -> np.ndarray:
    import mujoco
    out = np.zeros(9)
    mujoco.mju_quat2Mat(out, np.asarray(quat, dtype=float))
    return out.reshape(3, 3)


# ----------------------------------------------------------------- physics

TUBE_R, TUBE_H = 0.1, 0.2


def _touched_faces(pos: np.ndarray, held: float) -> list[np.ndarray]:
    """The unit normals (into the tube) of the faces of TUBE that a centre at ``pos`` touches."""
    faces = []
    rho = np.hypot(pos[0], pos[1])
    if rho >= TUBE_R - held - 1e-10:
        faces.append(-np.array([pos[0], pos[1], 0.0]) / rho)
    if abs(pos[2]) >= TUBE_H - held - 1e-10:
        faces.append(np.array([0.0, 0.0, -np.sign(pos[2])]))
    return faces


@pytest.mark.slow
@pytest.mark.parametrize("dt", [0.001, 0.005, 0.02])
def test_a_ball_rattling_in_a_tube_for_a_minute(dt):
    """No gravity, e = 0.9, a ball thrown across the tube: for 60 s it never leaves the tube (its centre within
    the held distance extent + margin of the wall and the caps), and at every projection each touched face's
    normal velocity becomes exactly -e times what it was, the rest of the velocity unchanged."""
    e, held = 0.9, 0.0205
    sim = mechgym.load(scene(f"body=ball surface=tube margin=0.0005 rule=reflect restitution={e} extent=0.02",
                             gravity="0 0 0"), backend="mechgym", dt=dt)
    sim.reset(qvel=[2.3, -1.1, 3.7, 0.0, 0.0, 0.0])
    before = sim.body("ball").linvel
    bounces = 0
    for _ in range(round(60 / dt)):
        sim.step(1)
        state = sim.body("ball")
        assert np.hypot(state.pos[0], state.pos[1]) <= TUBE_R - held + TOLERANCE
        assert abs(state.pos[2]) <= TUBE_H - held + TOLERANCE
        expected = before.copy()
        for normal in _touched_faces(state.pos, held):
            u = before @ normal
            if u < 0:
                expected -= (1 + e) * u * normal
                bounces += 1
        assert np.allclose(state.linvel, expected, rtol=0, atol=1e-12 * np.linalg.norm(before) + 1e-300)
        before = state.linvel
    assert bounces > 20  # it rattled (e^n of the speed is left after n bounces)


@pytest.mark.slow
@pytest.mark.parametrize("dt", [0.001, 0.005, 0.02])
def test_slide_never_gains_energy(dt):
    """A ball thrown spinning into a tilted tube under gravity, rule slide, 60 s: the energy after each step is
    never above the energy before it (round-off aside)."""
    tilted = TUBE.replace("/>", ' euler="0.7 0.3 0"/>')
    sim = mechgym.load(scene("body=ball surface=tube margin=0.0005 rule=slide extent=0.02", surface=tilted),
                       backend="mechgym", dt=dt)
    sim.reset(qvel=[1.5, -2.5, 1.0, 4.0, 2.0, -3.0])
    energy = sim.energy()
    start = energy
    for _ in range(round(60 / dt)):
        sim.step(1)
        now = sim.energy()
        assert now <= energy + 1e-14
        energy = now
    assert energy < start - 0.1  # it slid down


@pytest.mark.parametrize("dt", [0.001, 0.005, 0.02])
def test_a_box_held_by_its_hull_inside_a_box(dt):
    """A spinning box (corners held, margin 1 mm) thrown about inside a turned box, e = 0.5, 20 s: no corner is
    ever outside the container less the margin."""
    container = f'<geom name="s" type="box" size="0.1 0.08 0.06" {POSE} {NO_COLLISION}/>'
    half = np.array([0.02, 0.03, 0.01])
    sim = mechgym.load(scene("body=ball surface=s margin=0.001 rule=reflect restitution=0.5 spacing=0.01",
                             surface=container, body=f'<geom type="box" size="0.02 0.03 0.01" mass="0.2" '
                             f'{NO_COLLISION}/>'), backend="mechgym", dt=dt)
    sim.reset(qvel=[1.0, 2.0, -1.0, 10.0, -5.0, 7.0])
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * half
    closest = np.inf
    for _ in range(round(20 / dt)):
        sim.step(1)
        frame = sim.body("ball")
        local = np.array([_surface_frame(p) for p in frame.pos + corners @ _matrix(frame.quat).T])
        room = (np.array([0.1, 0.08, 0.06]) - 0.001 - np.abs(local)).min()
        assert room >= -TOLERANCE
        closest = min(closest, room)
    assert closest < 1e-9  # it hit the walls


def test_state_round_trip_with_a_confinement():
    """A box rattling in a box by its hull: a state saved mid-run continues bit for bit."""
    container = f'<geom name="s" type="box" size="0.1 0.08 0.06" {NO_COLLISION}/>'
    sim = mechgym.load(scene("body=ball surface=s margin=0.001 rule=reflect restitution=0.5 spacing=0.01",
                             surface=container, body=f'<geom type="box" size="0.02 0.03 0.01" mass="0.2" '
                             f'{NO_COLLISION}/>'), backend="mechgym", dt=0.005)
    sim.reset(qvel=[1.0, 2.0, -1.0, 10.0, -5.0, 7.0])
    sim.step(137)
    saved = sim.get_state()
    sim.step(400)
    first = (sim.qpos, sim.qvel)
    sim.set_state(saved)
    sim.step(400)
    assert np.array_equal(sim.qpos, first[0]) and np.array_equal(sim.qvel, first[1])


def _first_apex(dt: float, e: float, drop: float) -> float:
    """The highest point (m) of a ball's centre after its first bounce on a plane confinement (held at its
    radius), dropped from ``drop`` m above that height."""
    plane = f'<geom name="floor" type="plane" size="1 1 0.1" {NO_COLLISION}/>'
    sim = mechgym.load(scene(f"body=ball surface=floor rule=reflect restitution={e} extent=0.02", surface=plane),
                       backend="mechgym", dt=dt)
    sim.reset(qpos=[0, 0, 0.02 + drop, 1, 0, 0, 0])
    bounced, apex = False, 0.0
    while True:
        sim.step(1)
        state = sim.body("ball")
        if state.linvel[2] > 0:
            bounced = True
            apex = max(apex, state.pos[2] - 0.02)
        elif bounced:
            return apex


@pytest.mark.parametrize("dt", [4e-3, 1e-3, 2.5e-4, 6.25e-5])
def test_bounce_apex_against_newtons_rule(dt):
    """Dropped from 0.5 m with e = 0.8 the ball rises to e^2 0.5 m = 0.32 m (closed form). The step meets the
    impact at its end, a depth d <= v dt past the plane (v = sqrt(2 g 0.5) m/s): the parabola has gained
    g d of 1/2 u^2 there, the hold puts the ball back on the plane and the rule keeps e^2 of it, so the apex is
    0.32 m + e^2 d, first order in dt; sampled at step ends it is missed by at most g dt^2 / 8."""
    excess = _first_apex(dt, 0.8, 0.5) - 0.32
    assert -G * dt ** 2 / 8 <= excess <= 0.64 * np.sqrt(2 * G * 0.5) * dt + 1e-12


def _resting_buzz(dt: float) -> float:
    """The highest (m) that the fourth-lowest corner of a 4 x 6 x 2 cm box, dropped turned onto a plane (rule
    slide, margin 1 mm, corners held), rises above the margin over the tenth second; every corner stays at or
    above the margin throughout."""
    plane = f'<geom name="floor" type="plane" size="1 1 0.1" {NO_COLLISION}/>'
    sim = mechgym.load(scene("body=ball surface=floor margin=0.001 rule=slide spacing=0.01", surface=plane,
                             body=f'<geom type="box" size="0.02 0.03 0.01" mass="0.2" {NO_COLLISION}/>'),
                       backend="mechgym", dt=dt)
    sim.reset(qpos=[0, 0, 0.1, 0.98, 0.1, 0.15, 0.0])
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * [0.02, 0.03, 0.01]
    sim.step(round(9 / dt))
    buzz = 0.0
    for _ in range(round(1 / dt)):
        sim.step(1)
        state = sim.body("ball")
        heights = np.sort((state.pos + corners @ _matrix(state.quat).T)[:, 2])
        assert heights[0] >= 0.001 - TOLERANCE
        buzz = max(buzz, heights[3] - 0.001)
    return buzz


@pytest.mark.slow
def test_a_box_settles_on_a_plane_as_the_step_shrinks():
    """Held by its corners a box settles flat, buzzing on them at an amplitude that vanishes with the step
    (the module docstring's figures): below 1 mm at 2 ms and at least four times smaller at a quarter of it."""
    coarse, fine = _resting_buzz(0.002), _resting_buzz(0.0005)
    assert coarse < 1e-3 and fine < coarse / 4


def test_elastic_rattling_keeps_its_energy():
    """e = 1 without gravity: each projection reverses the normal velocity, the kinetic energy stays as it
    was to round-off."""
    sim = mechgym.load(scene("body=ball surface=tube rule=reflect restitution=1 extent=0.02", gravity="0 0 0"),
                       backend="mechgym", dt=0.003)
    sim.reset(qvel=[2.3, -1.1, 3.7, 0.0, 0.0, 0.0])
    start = sim.energy()
    sim.step(10_000)
    assert sim.energy() == pytest.approx(start, rel=1e-12)
    assert len({round(float(v), 9) for v in sim.body("ball").linvel}) == 3


def test_a_body_that_cannot_fit_fails_with_a_clear_error():
    """A 10 cm box held by its corners inside a sphere of radius 4 cm: no translation holds all its corners,
    and the step fails naming the confinement, the state left as it was."""
    sim = mechgym.load(scene("body=ball surface=s margin=0.001 rule=slide spacing=0.01",
                             surface=f'<geom name="s" type="sphere" size="0.04" {NO_COLLISION}/>',
                             body=f'<geom type="box" size="0.05 0.05 0.05" mass="0.2" {NO_COLLISION}/>'),
                       backend="mechgym", dt=0.002)
    before = sim.qpos
    with pytest.raises(mechgym.SimulationError, match="a confinement could not hold its body"):
        sim.step(1)
    assert np.array_equal(sim.qpos, before)


@pytest.mark.parametrize("dt", [0.001, 0.005])
def test_a_confined_ball_also_collides(dt):
    """A ball held inside the tube (reflect) that also collides with a static post standing in it (contact,
    restitution 0.5) and with a second, free ball: the contacts and the confinement act in the same steps; the
    ball never leaves the tube and never sinks into the post beyond the contacts' 0.1 mm margin."""
    post = '<geom name="post" type="box" size="0.02 0.02 0.2" pos="0.03 0 0"/>'
    other = '<body name="other" pos="-0.05 0 0"><freejoint/><geom type="sphere" size="0.015" mass="0.05"/></body>'
    xml = scene("body=ball surface=tube margin=0.0005 rule=reflect restitution=0.9 extent=0.02", surface=TUBE + post,
                body='<geom name="ball_geom" type="sphere" size="0.02" mass="0.1"/>', extra=other,
                gravity="0 0 0").replace("</custom>", '<numeric name="restitution:post" data="0.5"/></custom>')
    sim = mechgym.load(xml, backend="mechgym", dt=dt)
    sim.reset(qpos=[-0.05, 0.04, 0, 1, 0, 0, 0, -0.05, -0.04, 0, 1, 0, 0, 0],
              qvel=[1.5, -0.3, 0.4, 0, 0, 0, 0.5, 1.0, 0, 0, 0, 0])
    for _ in range(round(2 / dt)):
        sim.step(1)
        pos = sim.body("ball").pos
        assert np.hypot(pos[0], pos[1]) <= 0.1 - 0.0205 + TOLERANCE and abs(pos[2]) <= 0.2 - 0.0205 + TOLERANCE
        outside = np.maximum(np.abs(pos - [0.03, 0, 0]) - [0.02, 0.02, 0.2], 0.0)
        depth = 0.02 - np.linalg.norm(outside)
        assert depth <= 1e-4
    assert any({e.geom1, e.geom2} == {"post", "ball_geom"} for e in sim.events)


def _random_case(rng):
    """A random confinement: surface kind and pose, held body (a ball by its centre, a box or a capsule by its
    hull), rule, step, gravity and throw. Returns (xml, dt, qvel, check) with check(sim) -> the smallest
    clearance (m) of what is held beyond what it must keep (>= 0 when held)."""
    from mechgym.physics.surfaces import BOX, PLANE, SPHERE, TUBE, surface_gaps

    kind = int(rng.integers(4))
    size = {PLANE: [1, 1, 0.1], TUBE: [rng.uniform(0.08, 0.15), rng.uniform(0.1, 0.3), 0],
            BOX: rng.uniform(0.08, 0.2, 3), SPHERE: [rng.uniform(0.1, 0.2), 0, 0]}[kind]
    geom = {PLANE: "plane", TUBE: "cylinder", BOX: "box", SPHERE: "sphere"}[kind]
    euler = rng.uniform(-np.pi, np.pi, 3)
    surface = (f'<geom name="s" type="{geom}" size="{" ".join(str(x) for x in size if x)}" '
               f'euler="{" ".join(map(str, euler))}" {NO_COLLISION}/>')
    rule = ["slide", f"reflect restitution={rng.uniform(0, 1):.3f}", "stop"][int(rng.integers(3))]
    margin = 0.001
    held = int(rng.integers(3))  # 0: a ball's centre, 1: a box's corners, 2: a capsule's hull
    body = [f'<geom type="sphere" size="0.02" mass="0.1" {NO_COLLISION}/>',
            f'<geom type="box" size="0.02 0.03 0.01" mass="0.1" {NO_COLLISION}/>',
            f'<geom type="capsule" size="0.01 0.03" mass="0.1" {NO_COLLISION}/>'][held]
    mode = "extent=0.02" if held == 0 else "spacing=0.004"
    gravity = rng.normal(size=3) * 5
    xml = scene(f"body=ball surface=s margin={margin} rule={rule} {mode}", surface=surface, body=body,
                gravity=" ".join(map(str, gravity)))
    dt = float(rng.choice([0.001, 0.002, 0.005, 0.01, 0.02]))
    qvel = np.concatenate((rng.normal(size=3) * 2, rng.normal(size=3) * 10))
    surface_size = np.array(size, dtype=float)

    def clearance(sim) -> float:
        frame = sim.body("ball")
        rotation = _matrix(frame.quat)
        if held == 0:
            points, keep = frame.pos[None, :], 0.02 + margin
        elif held == 1:
            corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
            points, keep = frame.pos + (corners * [0.02, 0.03, 0.01]) @ rotation.T, margin
        else:  # the capsule is inside a convex region where both end balls are
            points, keep = frame.pos + np.outer([-0.03, 0.03], rotation[:, 2]), 0.01
        local = np.array([_in_frame(p, euler) for p in points])
        out = np.zeros((local.shape[0], 4))
        surface_gaps(kind, surface_size, local, out)
        return float(out[:, 0].min() - keep)

    return xml, dt, qvel, clearance


def _in_frame(point: np.ndarray, euler: np.ndarray) -> np.ndarray:
    """A world point in the frame of a geom at the origin turned by ``euler`` (radians, MJCF's xyz)."""
    import mujoco
    quat = np.zeros(4)
    mujoco.mju_euler2Quat(quat, euler, "xyz")
    mujoco.mju_negQuat(quat, quat)
    out = np.zeros(3)
    mujoco.mju_rotVecQuat(out, point, quat)
    return out


@pytest.mark.slow
def test_random_confinements_always_hold():
    """40 random draws of surface (kind, size, orientation), held body and form, rule, step (1-20 ms), gravity
    (any direction) and throw (up to ~4 m/s, ~20 rad/s), 1 s each: no step fails, and after every step the held
    centre, box corners or capsule end balls keep their distance from every face (the capsule's by the margin
    that covers its bulge)."""
    rng = np.random.default_rng(2026)
    pressed = 0
    for _ in range(40):
        xml, dt, qvel, clearance = _random_case(rng)
        sim = mechgym.load(xml, backend="mechgym", dt=dt)
        sim.reset(qvel=qvel)
        closest = np.inf
        for _ in range(round(1 / dt)):
            sim.step(1)
            closest = min(closest, clearance(sim))
            assert closest >= -TOLERANCE, (xml, dt)
        pressed += closest <= 1e-3
    assert pressed >= 30  # most draws were held against a face, not just flying inside
