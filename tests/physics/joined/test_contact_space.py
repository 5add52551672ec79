"""The contact-space matrix of ``contact.dense``: each column is the change of every touching contact row's rate
per unit impulse along one row, joined response included (``contact.joined``), the same linear map that the
sweeps on the bodies apply through ``solve._apply_rows``; and the bundled gripper, squeezing a card, has a
touching set the contact-space sweeps solve."""

from __future__ import annotations

import numpy as np

import mechgym
from mechgym.physics.constraints import EQUALITY, Workspace, begin_projection, row_rate
from mechgym.physics.contact import Joined
from mechgym.physics.contact.position import response_matrix
from mechgym.physics.contact.solve import _apply_rows, begin_solve
from mechgym.physics.state import State


def _squeezed_card():
    """The bundled gripper closed on its card (0.5 s lowering, 0.5 s closing, dt = 1 ms)."""
    sim = mechgym.load("gripper", backend="mechgym")
    sim.ctrl = [-0.07, 0.0, 0.0]
    sim.step(500)
    sim.ctrl = [-0.07, 0.035, 0.035]
    sim.step(500)
    return sim


def _rates(contacts, engine, state, touching):
    """The rates (m/s) of the touching contacts' rows, in the matrix's order."""
    return np.array([row_rate(contacts, engine.bodies, state, 0, i, contacts.rows[i, k], np.zeros(3))
                     for i in touching for k in range(3)])


def test_each_column_is_the_joined_response_to_a_unit_impulse():
    """Build D at the squeeze, then apply a unit impulse along each row to a copy of the state with
    ``solve._apply_rows`` (body velocities and the equality rows' shares) and read every row's rate change: it
    must equal D's column to round-off, and leave the rate of every joint row (the equality rows without damping)
    as it was: the joined response moves nothing the joints forbid. D = J W_joined J^T is symmetric (built so,
    exactly: the sweeps read its columns as its rows) and positive semi-definite."""
    sim = _squeezed_card()
    engine, contacts, scratch = sim.engine, sim._contacts, sim._scratch
    linkage = engine.linkage
    nbody, nrows = engine.mj_body.size, linkage.rows.kind.size
    state = State(*(a.copy() for a in sim._state))
    capacity = contacts.geom1.size // contacts.count.size
    work, joined = Workspace.empty(nbody, nrows), Joined.empty(capacity, nrows, nbody)
    begin_projection(linkage.rows, engine.bodies, linkage.solver, state, 0, 0.0, work)
    begin_solve(linkage, engine.bodies, state, 0, contacts, scratch, work, joined, False)
    touching = [i for i in range(int(contacts.count[0])) if contacts.active[i]]
    m = len(touching)
    assert m == 12  # the four corners of each pad's face on the card, and of the card's edge on the table
    scratch.dense_index[:m] = touching
    response_matrix(linkage, engine.bodies, state, 0, contacts, scratch, work, joined, m, 3)
    matrix = scratch.dense[:3 * m, :3 * m].copy()
    before = _rates(contacts, engine, state, touching)
    rows = linkage.rows
    joints = [r for r in range(nrows) if rows.sense[r] == EQUALITY and rows.damping[r] == 0.0]
    assert len(joints) == 15  # three slide joints, five rows each

    def joint_rates(probe):
        return np.array([row_rate(rows, engine.bodies, probe, 0, r, work.gradient[r], np.zeros(3)) for r in joints])

    joints_before = joint_rates(state)
    for s in range(3 * m):
        probe = State(*(a.copy() for a in state))
        amounts = [0.0, 0.0, 0.0]
        amounts[s % 3] = 1.0
        _apply_rows(linkage, engine.bodies, probe, 0, contacts, touching[s // 3], *amounts, work, joined)
        column = _rates(contacts, engine, probe, touching) - before
        assert np.abs(column - matrix[:, s]).max() <= 1e-9 * np.abs(matrix).max()
        # (measured: 1.6e-12 m/s at most, D's largest entry 700 / kg)
        assert np.abs(joint_rates(probe) - joints_before).max() <= 2e-14 * np.abs(matrix).max()
    assert np.array_equal(matrix, matrix.T)
    assert np.linalg.eigvalsh(matrix).min() > -1e-9 * np.abs(matrix).max()
