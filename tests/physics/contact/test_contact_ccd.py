"""Continuous collision: a 20 m/s ball never passes a 1 mm wall, whatever the time step."""

from __future__ import annotations

import pytest

from .driver import ContactScene
from .scenes import run, wall_shot

WALL_FACE = 1.0 - 0.0005  # m: the wall's near face (centre 1 m, 1 mm thick)
RADIUS, SPEED = 0.02, 20.0


@pytest.mark.parametrize("restitution", [0.0, 1.0])
@pytest.mark.parametrize("dt_ms", [1, 5, 10, 20, 30, 40, 50])
def test_fast_ball_never_passes_a_thin_wall(dt_ms, restitution):
    """At dt = 50 ms the ball moves 1 m per step, 1000 wall thicknesses: swept against the wall from its last
    separated pose it stops (e = 0) or bounces back (e = 1) on the near side, with the impact reported at the
    exact instant (1 - 0.5 mm - r) / 20 m/s."""
    h = dt_ms / 1000.0
    scene = ContactScene.build(wall_shot(1e-3, restitution))
    scene.state.vel[0, 0, 0] = SPEED
    com, vel, _, _ = run(scene, h, 0.5)
    assert com[:, 0, 0].max() <= WALL_FACE - RADIUS + 1e-12
    events = scene.events()
    assert events[0, 0] == pytest.approx((WALL_FACE - RADIUS) / SPEED, abs=1e-12)
    assert events[0, 3] == pytest.approx(SPEED, rel=1e-12)
    assert vel[-1, 0, 0] == pytest.approx(-restitution * SPEED, abs=1e-9)


@pytest.mark.parametrize("dt_ms", [1, 10, 50])
def test_ball_sliding_on_a_floor_never_passes_a_thin_wall(dt_ms):
    """The same shot along a floor under gravity: the floor the ball touches at the start of every step does not
    hide the wall from the sweep."""
    h = dt_ms / 1000.0
    scene = ContactScene.build(
        '<mujoco><worldbody><geom name="floor" type="plane" size="5 5 0.1"/>'
        '<geom name="wall" type="box" size="0.0005 1 1" pos="1 0 1"/>'
        f'<body pos="0 0 {RADIUS}"><freejoint/><geom name="ball" type="sphere" size="{RADIUS}" mass="0.1"/></body>'
        '</worldbody></mujoco>')
    scene.state.vel[0, 0, 0] = SPEED
    com, _, _, _ = run(scene, h, 0.5)
    assert com[:, 0, 0].max() <= WALL_FACE - RADIUS + 1e-12
    assert com[:, 0, 2].min() >= RADIUS - 1e-12
    events = scene.events()
    assert events[0, 1:3].tolist() == [1, 2]  # wall, ball
