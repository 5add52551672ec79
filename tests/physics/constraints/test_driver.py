"""The stepping kernel with constraints: several worlds per call, each identical to stepping it alone (each
world keeps its own warm-start impulses), and a projection that cannot converge is reported (NOT_PROJECTED,
with the steps completed and the last good state kept) instead of looping forever."""

from __future__ import annotations

import math

import numpy as np

from mechgym.physics import NOT_PROJECTED, OK, Linkage, StepScratch, advance
from mechgym.physics import constraints as rattle
from mechgym.physics.state import State

from .helpers import (
    ENV,
    NO_ACTUATORS,
    NO_CONFINEMENTS,
    NO_COORDINATES,
    NO_WINDOWS,
    no_contacts,
    rod_pendulum,
    run,
    seesaw,
    with_rows,
)


def test_advance_steps_every_world_as_if_alone():
    bodies, rows, _ = rod_pendulum(0.0)
    state = with_rows(State.zeros(2, 1), rows)
    for world, angle in enumerate((0.5, 2.0)):
        state.com[world, 0] = (math.sin(angle), 0.0, -math.cos(angle))
    status = np.zeros((2, 4), dtype=np.int64)
    linkage = Linkage(rows, NO_COORDINATES, rattle.Solver())
    geoms, contacts, scratch = no_contacts(2)
    advance(bodies, NO_ACTUATORS, ENV, linkage, geoms, NO_CONFINEMENTS, NO_WINDOWS, state, contacts, scratch,
            np.zeros((2, 0)), 0, 500, 1e-3, status, StepScratch.fitting(state, linkage, contacts, NO_CONFINEMENTS))
    assert status.tolist() == [[500, OK, 0, 0], [500, OK, 0, 0]]
    for world, angle in enumerate((0.5, 2.0)):
        _, _, alone = rod_pendulum(angle)
        _, _, stepped = run(bodies, rows, alone, 1e-3, 500)
        for mine, theirs in zip(state, stepped, strict=True):
            np.testing.assert_array_equal(mine[world], theirs[0])


def test_a_projection_that_does_not_converge_is_reported():
    bodies, rows, state = seesaw()
    state = with_rows(state, rows)
    before = state.copy()
    status = np.zeros((1, 4), dtype=np.int64)
    linkage = Linkage(rows, NO_COORDINATES, rattle.Solver(tolerance=-1.0, max_sweeps=50))  # no error meets it
    geoms, contacts, scratch = no_contacts()
    advance(bodies, NO_ACTUATORS, ENV, linkage, geoms, NO_CONFINEMENTS, NO_WINDOWS, state, contacts, scratch,
            np.zeros((1, 0)), 0, 10, 1e-3, status, StepScratch.fitting(state, linkage, contacts, NO_CONFINEMENTS))
    assert status.tolist() == [[0, NOT_PROJECTED, 0, 0]]
    for mine, theirs in zip(state, before, strict=True):
        np.testing.assert_array_equal(mine, theirs)
