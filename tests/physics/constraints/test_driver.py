"""The stepping driver: several worlds per call, each identical to stepping it alone, and a projection that
cannot converge is reported (NOT_CONVERGED, with the steps completed) instead of looping forever."""

from __future__ import annotations

import math

import numpy as np

from mechgym.physics import constraints as rattle
from mechgym.physics.state import State

from .helpers import ENV, rod_pendulum, run, seesaw


def test_rattle_advance_steps_every_world_as_if_alone():
    bodies, rows, _ = rod_pendulum(0.0)
    state = State.zeros(2, 1)
    for world, angle in enumerate((0.5, 2.0)):
        state.com[world, 0] = (math.sin(angle), 0.0, -math.cos(angle))
    status = np.zeros((2, 2), dtype=np.int64)
    work = rattle.Workspace.empty(1, rows.kind.size)
    rattle.rattle_advance(bodies, ENV, rows, rattle.Solver(), state, 500, 1e-3, np.zeros((1, 6)), work, status)
    assert status.tolist() == [[500, rattle.OK], [500, rattle.OK]]
    for world, angle in enumerate((0.5, 2.0)):
        _, _, alone = rod_pendulum(angle)
        run(bodies, rows, alone, 1e-3, 500)
        for mine, theirs in zip(state, alone, strict=True):
            np.testing.assert_array_equal(mine[world], theirs[0])


def test_a_projection_that_does_not_converge_is_reported():
    bodies, rows, state = seesaw()
    status = np.zeros((1, 2), dtype=np.int64)
    work = rattle.Workspace.empty(3, rows.kind.size)
    solver = rattle.Solver(sweep=rattle.JACOBI, max_sweeps=50)
    rattle.rattle_advance(bodies, ENV, rows, solver, state, 10, 1e-3, np.zeros((3, 6)), work, status)
    assert status.tolist() == [[0, rattle.NOT_CONVERGED]]
