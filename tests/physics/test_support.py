"""Every MJCF feature the engine does not simulate is refused with a SceneError naming it (one test per code)."""

from __future__ import annotations

import numpy as np
import pytest

import mechgym
from mechgym import SceneError

from .scenes import NO_CONTACT, free_body, scene

BOX = free_body()


def refused(xml: str, code: str, *words: str) -> None:
    with pytest.raises(SceneError) as caught:
        mechgym.load(xml, backend="mechgym")
    assert caught.value.code == code, caught.value
    for word in words:
        assert word in caught.value.message, caught.value.message


GRAVITY = 9.81  # m/s^2, MuJoCo's default, along -z
DURATION = 0.1  # s: 50 steps of MuJoCo's default timestep


def falls_freely(sim, z0: float) -> bool:
    """After DURATION from rest, the free body's centre is at z0 - g t^2 / 2 (the engine's projectile is exact)."""
    sim.step(round(DURATION / sim.dt))
    return abs(sim.qpos[2] - (z0 - 0.5 * GRAVITY * DURATION**2)) < 1e-12


def test_a_free_body_without_contacts_loads_and_falls_as_a_projectile():
    sim = mechgym.load(scene(BOX), backend="mechgym")
    np.testing.assert_array_equal(sim.qpos, mechgym.load(scene(BOX), backend="mujoco").qpos)
    assert falls_freely(sim, 0.0)


@pytest.mark.parametrize(("joint", "qvel", "expected"), [
    ('type="hinge"', [2.0], [0.2]),  # a sphere spinning about its centre: angle = w t
    ('type="slide"', [1.0], [1.0 * DURATION - 0.5 * GRAVITY * DURATION**2]),  # along z, with gravity
    # a ball joint at the sphere's centre, spinning at 2 rad/s about x: turned by 0.2 rad
    ('type="ball"', [2.0, 0.0, 0.0], [np.cos(0.1), np.sin(0.1), 0.0, 0.0]),
])
def test_hinge_slide_and_ball_joints_load_and_move_as_the_closed_form(joint, qvel, expected):
    xml = scene(f'<body name="arm"><joint name="pivot" {joint}/><geom size="0.1" {NO_CONTACT}/></body>')
    sim = mechgym.load(xml, backend="mechgym")
    np.testing.assert_array_equal(sim.qpos, mechgym.load(xml, backend="mujoco").qpos)
    sim.reset(qvel=qvel)
    sim.step(round(DURATION / sim.dt))
    np.testing.assert_allclose(sim.qpos, expected, atol=1e-12)


@pytest.mark.parametrize("joint, attribute, feature", [
    ('type="ball"', 'stiffness="1"', "stiffness on a ball"), ('type="ball"', 'armature="0.1"', "armature on a ball"),
    ('type="hinge"', 'frictionloss="1"', "frictionloss"), ('type="ball"', 'damping="1"', "damping on a ball"),
])
def test_joint_features(joint, attribute, feature):
    xml = scene(f'<body name="arm"><joint name="pivot" {joint} {attribute}/><geom size="0.1" {NO_CONTACT}/></body>')
    refused(xml, "joint.unsupported", "pivot", feature)


def test_joint_combinations_without_rows():
    xml = scene(f'<body name="arm"><joint type="hinge"/><joint type="hinge" axis="1 0 0"/>'
                f'<geom size="0.1" {NO_CONTACT}/></body>')
    refused(xml, "joint.unsupported", "arm", "hinge, hinge")


def test_a_parent_and_its_child_collide_only_when_the_parent_filter_is_disabled():
    """MuJoCo's filterparent: the overlapping spheres of a hinged parent and child make no contact, unless the
    scene disables the filter; a third jointed body is no relative and touches the lower sphere."""
    chain = ('<body name="upper"><joint type="hinge"/><geom name="upper" size="0.1"/>'
             '<body name="lower" pos="0.05 0 0"><joint type="hinge"/><geom name="lower" size="0.1"/></body></body>')
    other = '<body name="other" pos="0.22 0 0"><joint type="slide"/><geom name="other" size="0.1"/></body>'
    for flags, extra, expected in (("", "", set()), ('filterparent="disable"', "", {("upper", "lower")}),
                                   ("", other, {("lower", "other")})):
        sim = mechgym.load(scene(chain + extra, flags=flags + ' gravity="disable"'), backend="mechgym")
        assert {(c.geom1, c.geom2) for c in sim.contacts()} == expected


def test_geom_types_the_narrow_phase_does_not_handle():
    xml = scene('<geom name="floor" type="plane" size="1 1 0.1"/>'
                '<body name="egg" pos="0 0 1"><freejoint/><geom name="egg" type="ellipsoid" size="0.1 0.1 0.2"/>'
                '</body>')
    refused(xml, "contact.unsupported-pair", "'floor'", "'egg'", "PLANE", "ELLIPSOID")


def test_geoms_of_two_bodies_that_could_collide_next_to_an_exclusion():
    xml = scene('<body name="a"><freejoint/><geom name="a" size="0.1" contype="1" conaffinity="0"/></body>'
                '<body name="c" pos="1 0 0"><freejoint/><geom name="c" size="0.1" contype="0" conaffinity="1"/>'
                '</body><body name="d" pos="2 0 0"><freejoint/><geom name="d" size="0.1" contype="0" conaffinity="1"/>'
                '</body>', extra='<contact><exclude body1="a" body2="d"/></contact>')
    refused(xml, "contact.unsupported", "exclude", "'a'", "'c'")


def test_colliding_geoms_are_fine_when_contacts_are_disabled_or_excluded():
    bodies = ('<geom name="floor" type="plane" size="1 1 0.1"/>'
              '<body name="ball" pos="0 0 1"><freejoint/><geom name="ball" size="0.1"/></body>')
    disabled = mechgym.load(scene(bodies, flags='contact="disable"'), backend="mechgym")
    assert falls_freely(disabled, 1.0)  # through the floor
    pair = ('<body name="a"><freejoint/><geom size="0.1"/></body>'
            '<body name="c" pos="0.15 0 0"><freejoint/><geom size="0.1"/></body>')  # overlapping by 5 cm
    excluded = mechgym.load(scene(pair, extra='<contact><exclude body1="a" body2="c"/></contact>'), backend="mechgym")
    assert falls_freely(excluded, 0.0) and abs(excluded.qpos[9] + 0.5 * GRAVITY * DURATION**2) < 1e-12
    assert excluded.contacts() == []


def test_explicit_contact_pairs():
    bodies = (f'<body name="a"><freejoint/><geom name="a" size="0.1" {NO_CONTACT}/></body>'
              f'<geom name="floor" type="plane" size="1 1 0.1" {NO_CONTACT}/>')
    refused(scene(bodies, extra='<contact><pair geom1="a" geom2="floor"/></contact>'), "contact.unsupported", "pair")


@pytest.mark.parametrize("actuator, feature", [
    ('<general name="lag" joint="b_free" dyntype="filter" dynprm="0.1"/>', "dynamics"),
    ('<general name="lag" joint="b_free" gaintype="user"/>', "USER"),
    ('<motor name="lag" site="s" refsite="s"/>', "refsite"),
    ('<adhesion name="lag" body="b" ctrlrange="0 1" gain="1"/>', "BODY"),
    ('<motor name="lag" joint="b_free" damping="1"/>', "damping"),
])
def test_actuator_features(actuator, feature):
    body = ('<body name="b"><freejoint name="b_free"/><site name="s"/>'
            f'<geom size="0.1" {NO_CONTACT}/></body>')
    refused(scene(body, actuators=actuator), "actuator.unsupported", "lag", feature)


def test_equality_constraints():
    arms = (f'<body name="b"><joint name="j1" type="hinge"/><geom size="0.1" {NO_CONTACT}/></body>'
            f'<body name="c" pos="1 0 0"><joint name="j2" type="hinge"/><geom size="0.1" {NO_CONTACT}/></body>')
    refused(scene(arms, extra='<equality><joint name="couple" joint1="j1" joint2="j2"/></equality>'),
            "equality.unsupported", "couple")


def test_tendons():
    body = ('<body name="b"><freejoint/><site name="s1"/><site name="s2" pos="0 0 0.1"/><site name="s3" pos="0 0.1 0"/>'
            f'<geom size="0.1" {NO_CONTACT}/></body><site name="w"/>')
    three = '<tendon><spatial name="long"><site site="s1"/><site site="s2"/><site site="s3"/></spatial></tendon>'
    refused(scene(body, extra=three), "tendon.unsupported", "long", "two sites")
    damped = '<tendon><spatial name="damper" damping="3"><site site="w"/><site site="s2"/></spatial></tendon>'
    refused(scene(body, extra=damped), "tendon.unsupported", "damper", "damping")


def test_the_ellipsoid_fluid_model():
    xml = scene(free_body(geom='size="0.1" fluidshape="ellipsoid"'), option='density="1.2"')
    refused(xml, "fluid.unsupported", "ellipsoid")


@pytest.mark.parametrize("flag", ['damper="disable"', 'spring="disable"', 'equality="disable"',
                                  'limit="disable"'])
def test_option_flags_that_are_not_honoured(flag):
    refused(scene(BOX, flags=flag), "option.unsupported", "flag")


@pytest.mark.filterwarnings("ignore:flex 'cloth' is not rigid")
def test_flex():
    xml = scene(BOX + '<flexcomp name="cloth" type="grid" count="2 2 1" spacing="0.1 0.1 0.1" radius="0.01" '
                      'dim="2"><contact contype="0" conaffinity="0"/></flexcomp>')
    refused(xml, "flex.unsupported", "flex")


def test_plugins():
    extra = ('<extension><plugin plugin="mujoco.sensor.touch_grid"/></extension><sensor>'
             '<plugin name="touch" plugin="mujoco.sensor.touch_grid" objtype="site" objname="s">'
             '<config key="size" value="7 7"/><config key="fov" value="45 45"/><config key="gamma" value="0"/>'
             '<config key="nchannel" value="3"/></plugin></sensor>')
    body = f'<body name="b"><freejoint/><site name="s"/><geom size="0.1" {NO_CONTACT}/></body>'
    refused(scene(body, extra=extra), "plugin.unsupported", "plugin")


def test_disabling_constraints_is_refused_where_the_scene_has_limits_or_equalities():
    xml = ('<mujoco><option><flag constraint="disable"/></option><worldbody><body name="b">'
           '<joint name="h" type="hinge" range="-1 1" limited="true"/>'
           '<geom type="capsule" fromto="0 0 0 1 0 0" size="0.05" contype="0" conaffinity="0"/>'
           '</body></worldbody></mujoco>')
    with pytest.raises(mechgym.SceneError) as error:
        mechgym.load(xml, backend="mechgym")
    assert error.value.code == "option.unsupported" and "constraint" in error.value.message
    mechgym.load(xml.replace(' range="-1 1" limited="true"', ""), backend="mechgym").step(10)


@pytest.mark.parametrize("attribute, word", [('condim="4"', "condim=4"), ('condim="6"', "condim=6"),
                                             ('priority="1"', "priority=1")])
def test_torsional_and_rolling_friction_and_priorities(attribute, word):
    ball = '<body name="ball" pos="0 0 1"><freejoint/><geom name="ball" size="0.1"/></body>'
    refused(scene(f'<geom name="floor" type="plane" size="1 1 0.1" {attribute}/>' + ball), "contact.unsupported",
            "'floor'", word)


def test_condim_1_is_frictionless():
    """A block sliding at 2 m/s on a floor with friction 1 keeps its speed when either geom has condim 1 (and the
    other no more), and stops within v^2 / (2 mu g) when both have condim 3."""
    block = ('<body name="block" pos="0 0 0.1"><freejoint/><geom name="block" type="box" size="0.1 0.1 0.1" '
             'condim="{}"/></body>')
    for floor, body, frictionless in ((1, 1, True), (3, 3, False)):
        xml = scene(f'<geom name="floor" type="plane" size="5 5 0.1" condim="{floor}"/>' + block.format(body),
                    keyframe='<key qpos="0 0 0.1 1 0 0 0" qvel="2 0 0 0 0 0"/>')
        sim = mechgym.load(xml, backend="mechgym", dt=1e-3)
        sim.step(500)
        if frictionless:
            assert abs(sim.qvel[0] - 2.0) < 1e-12
        else:
            assert sim.qvel[0] == 0.0 or abs(sim.qvel[0]) < 1e-9
            assert sim.qpos[0] < 2.0 ** 2 / (2 * 9.81) + 1e-3
