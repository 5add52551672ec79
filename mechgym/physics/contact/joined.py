"""Contacts joined to constraint rows: the response of the bodies to a contact impulse with every equality row
kept exactly, so that the contact solves see each contact's true (constrained) effective mass.

A contact impulse lambda along a contact row J (``contact.sets`` 12-number format) on bodies that joints tie to
others changes the velocities by W J^T lambda (W: the inverse mass matrix); the equality rows G (joints, welds,
connects, rods: ``constraints``, sense EQUALITY) must stay satisfied, G dv = 0, which takes row impulses
mu = -A^{-1} G W J^T lambda with A = G W G^T. The joined response is therefore

    dv = W (J^T - G^T A^{-1} y) lambda,   y = G W J^T  (one number per equality row),

and the contact's effective coupling (the velocity change along J per unit impulse) is

    k = J W J^T - y^T A^{-1} y.

Swept with k and applied with dv, the contacts' projected Gauss-Seidel converges as fast as among free bodies,
where sweeping contacts and joint rows in turn (block Gauss-Seidel with the contact's free-body k) would need
thousands of sweeps on a chain (a slider at the end of a crank: each sweep gains about 1 - k_joined / k_free).
The same response moves the poses in the position correction (``contact.position``: dx, dtheta instead of
dv, dL).

A is factored once per solve, A = L L^T (Cholesky), over the equality rows; a pivot that falls below
tolerances.DEPENDENT times the largest diagonal entry marks a row that depends on earlier ones (a redundant row of a
closed loop): its multiplier is kept at 0, which is exact when the rows are consistent. One-sided rows (limits,
ropes) join A in the closing solve where they act (``take_acting``: a leg pressed against its hinge's limit by the
floor stays there under the contacts' impulses; ``constraints.projection_sweep`` releases one that would pull, between
the contact sweeps); the opening solve leaves them out.
At the position level the ones that a correction pass left violated join A as equalities in its rerun
(``Joined.held``, ``contact.position``), so that the correction keeps each at its bound: it left a hinge 2.6 mrad
past the limit where a bob on the floor was pushed up, which the next step recovered through the velocities within
one step (random scene 607). Damper rows
(``constraints.begin_projection``) join A at the velocity level with their compliance c on the diagonal,
A = G W G^T + diag(c): the joined response then keeps each damper's G v + c P, so that a contact sees a damped
joint as the implicit step does (at dt = 1 ms a finger pad of 50 g on 20 N s/m of damping weighs 1.2 times
as much); the position level has no dampers.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..constraints import EQUALITY, LIN_A, LIN_B, is_damper, shared_dot
from ..jit import kernel, zero_arrays
from ..linalg import cholesky_solve, semidefinite_cholesky
from ..tolerances import BLOCKED


class Joined(NamedTuple):
    """Caller-owned scratch of the joined contact solves (C contacts per world, R rows, B bodies)."""

    factor: np.ndarray  # (R, R) lower-triangular L of A = G W G^T over the equality rows
    dependent: np.ndarray  # (R,) bool: not an equality row, or a dependent one (multiplier 0)
    y: np.ndarray  # (3, R) G W J^T of a contact's rows
    response: np.ndarray  # (C, 3, R) A^{-1} y of each contact's normal and tangent rows
    moved: np.ndarray  # (B, 6) position correction: the displacement already applied to the poses
    # (R,) row values g at the poses of the position correction, then scratch (the rows' impulses that open_contacts
    # keeps for an undo)
    value: np.ndarray
    # (R,) the rows' shares of impacts' impulses: an impulse is no force, so they are neither reported as the
    # rows' forces nor carried into the next step's warm start (as an impact's own impulse is not)
    impact_shares: np.ndarray
    free: np.ndarray  # (3,) a contact's free-body couplings J_k W J_k^T, before the rows' shares (``join_rows``)
    rigid: np.ndarray  # (R,) zeros: the compliances of the position level, where no damper acts; no row held
    held: np.ndarray  # (R,) 1 for a one-sided row that the position correction holds at its bound, else 0
    # (R,) 1 for a one-sided row that acts in the velocity projection (``take_acting``), which the closing solve holds
    # as an equality, else 0
    acting: np.ndarray
    # (C, 3, B, 6) the impulse (linear N s, angular N m s) that the equality rows' shares of a unit impulse along
    # each of a contact's rows put on each body, -sum_r (A^{-1} y)_r G_r (``take_pushes``); (0, 3, 0, 6) without rows
    push: np.ndarray
    # (B, 6, R) A^{-1} M_b for each body b, M_b (R, 6) the rows' W G^T columns on b (``_body_response``): a contact
    # row's A^{-1} y is these times its own columns on its two bodies
    body_response: np.ndarray
    body_ready: np.ndarray  # (B,) bool: body_response holds the body's, for the current factor
    # what ``factor`` was factored from (``factor_rows``): G (R, 12), W G^T (R, 12), the compliances and the held
    # marks side by side (R, 2), and (1,) whether it holds a factor and its number of independent rows
    factored_gradient: np.ndarray
    factored_mobility: np.ndarray
    factored_diagonal: np.ndarray
    factored: np.ndarray
    independent: np.ndarray

    @staticmethod
    def empty(capacity: int, rows: int, bodies: int, cleared: bool = True) -> Joined:
        """A ``Joined`` for ``capacity`` contacts, ``rows`` rows and ``bodies`` bodies, as ``clear_joined``
        leaves it (``cleared``) or zeros (for a caller whose kernels clear it first)."""
        joined = Joined(np.zeros((rows, rows)), np.zeros(rows, dtype=np.bool_), np.zeros((3, rows)),
                        np.zeros((capacity, 3, rows)), np.zeros((bodies, 6)), np.zeros(rows), np.zeros(rows),
                        np.zeros(3), np.zeros(rows), np.zeros(rows), np.zeros(rows),
                        np.zeros((capacity, 3, bodies, 6) if rows > 0 else (0, 3, 0, 6)),
                        np.zeros((bodies, 6, rows)), np.zeros(bodies, dtype=np.bool_), np.zeros((rows, 12)),
                        np.zeros((rows, 12)), np.zeros((rows, 2)), np.zeros(1, dtype=np.bool_),
                        np.zeros(1, dtype=np.int64))
        if cleared:
            clear_joined(joined)
        return joined


@kernel
def clear_joined(joined):
    """Every array of ``joined`` zeroed, and every row marked dependent (none factored)."""
    zero_arrays(joined)
    joined.dependent.fill(True)


@kernel
def factor_rows(rows, gradient, mobility, compliance, joined, held):
    """A = G W G^T + diag(compliance) over the equality rows, the one-sided rows whose ``held`` (R,) is nonzero (taken
    as equalities: the position correction passes ``joined.held``, the closing solve ``joined.acting``) and
    the dampers with a compliance (``compliance`` (R,): m/s per N s, 0 for constraint rows), from their gradients
    ``gradient`` (R, 12) and W G^T ``mobility`` (R, 12) at the current poses (``constraints.take_mobilities``), factored
    into ``joined.factor`` (Cholesky, dependent rows marked in ``joined.dependent``). Returns the number of independent
    rows. The factor is a function of these four arrays alone: where they equal the ones it was factored from, it
    is kept, with the bodies' responses solved on it (a step's closing solve, its resting trial and the next step's
    opening solve factor the same A when the poses stay)."""
    if joined.factored[0] and _factored_from(gradient, mobility, compliance, held, joined):
        return joined.independent[0]
    count = rows.kind.size
    factor = joined.factor
    joined.body_ready[:] = False
    for i in range(count):
        joined.dependent[i] = ((rows.sense[i] != EQUALITY and held[i] == 0.0)
                               or (is_damper(rows, i) and not compliance[i] > 0.0))
        for j in range(i + 1):
            factor[i, j] = 0.0
            if not (joined.dependent[i] or joined.dependent[j]):
                factor[i, j] = shared_dot(rows.body_a[i], rows.body_b[i], gradient, i, rows.body_a[j],
                                          rows.body_b[j], mobility, j)
        if not joined.dependent[i]:
            factor[i, i] += compliance[i]
    joined.independent[0] = semidefinite_cholesky(factor, count, joined.dependent)
    for r in range(count):
        joined.factored_diagonal[r, 0], joined.factored_diagonal[r, 1] = compliance[r], held[r]
        for k in range(12):
            joined.factored_gradient[r, k], joined.factored_mobility[r, k] = gradient[r, k], mobility[r, k]
    joined.factored[0] = True
    return joined.independent[0]


@kernel(inline=True)
def _factored_from(gradient, mobility, compliance, held, joined):
    """Whether ``joined.factor`` was factored from these arrays (``factor_rows``), entry for entry."""
    for r in range(compliance.size):
        if compliance[r] != joined.factored_diagonal[r, 0] or held[r] != joined.factored_diagonal[r, 1]:
            return False
        for k in range(12):
            if gradient[r, k] != joined.factored_gradient[r, k] or mobility[r, k] != joined.factored_mobility[r, k]:
                return False
    return True


@kernel
def take_acting(rows, work, acting):
    """acting (R,) <- 1 for each one-sided row (a limit, a rope; not a damper) that takes part in the velocity
    projection of ``work`` (a constraints.Workspace, after ``begin_projection``) with an impulse from it, else 0: the
    rows a contact's joined response keeps at their bounds."""
    for r in range(rows.kind.size):
        pushes = work.impulse_velocity[r] != 0.0
        acting[r] = 1.0 if rows.sense[r] != EQUALITY and not is_damper(rows, r) and work.active[r] and pushes else 0.0


@kernel
def solve_factored(joined, x):
    """x <- A^{-1} x with the factor of ``factor_rows`` (dependent rows: 0)."""
    for i in range(x.size):
        if joined.dependent[i]:
            x[i] = 0.0
    cholesky_solve(joined.factor, x.size, x)


@kernel
def contacts_touch_rows(rows, world, contacts, every):
    """Whether a contact of world ``world`` (every: any contact of its set; else a touching one) is on a body that
    a row acts on: else no contact needs A, and no contact's response moves a body that a row acts on."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    for i in range(world * capacity, world * capacity + min(contacts.count[world], capacity)):
        if (every or contacts.active[i]) and touches_rows(rows, contacts.body_a[i], contacts.body_b[i]):
            return True
    return False


@kernel
def join_rows(rows, mobility, joined, a, b, directions, count, coupling, response):
    """For the first ``count`` rows of ``directions`` (a contact's normal and tangents, (3, 12)) on bodies (a, b):
    response[k] = A^{-1} y_k with y_k = G W J_k^T (J_k . W G^T over the bodies they share, ``mobility`` (R, 12)
    the rows' W G^T at the poses A was factored at), and the equality rows' share taken off their free-body
    couplings: coupling[j, k] -= y_j . A^{-1} y_k (``coupling`` holds J_j W J_k^T on entry). A row the joints
    block (joined coupling below BLOCKED times the free one) gets a zero row and column. A contact on bodies that
    no row acts on has y = 0: its response is zero and its coupling the free one, without a solve.

    y_k = sum over the contact's bodies b of M_b J_kb (M_b the rows' W G^T columns on b, J_kb the row's), so
    A^{-1} y_k = sum_b (A^{-1} M_b) J_kb: six solves per body (``_body_response``, once per factor) serve every
    row of every contact on it, where a solve per row cost three per contact (a card squeezed at four corners
    of each pad: 12 solves for the 24 rows of the velocity solve)."""
    for k in range(count):
        response[k, :] = 0.0
    if not touches_rows(rows, a, b):
        return
    y = joined.y
    for k in range(count):
        for r in range(rows.kind.size):
            y[k, r] = 0.0
            if not joined.dependent[r]:
                y[k, r] = shared_dot(a, b, directions, k, rows.body_a[r], rows.body_b[r], mobility, r)
    for body, column in ((a, LIN_A), (b, LIN_B)):
        if body < 0 or not touches_rows(rows, body, body):
            continue
        _body_response(rows, mobility, joined, body)
        solved = joined.body_response[body]
        for k in range(count):
            for i in range(6):
                amount = directions[k, column + i]
                if amount != 0.0:
                    for r in range(rows.kind.size):
                        response[k, r] += amount * solved[i, r]
    free = joined.free
    for j in range(count):
        free[j] = coupling[j, j]
    for j in range(count):
        for k in range(count):
            total = 0.0
            for r in range(rows.kind.size):
                total += y[j, r] * response[k, r]
            coupling[j, k] -= total
    for j in range(count):
        if not coupling[j, j] > BLOCKED * free[j]:
            for k in range(count):
                coupling[j, k] = 0.0
                coupling[k, j] = 0.0


@kernel
def _body_response(rows, mobility, joined, body):
    """A^{-1} M_b (6, R) of ``body`` (``Joined.body_response``), solved on its first use after ``factor_rows``: column
    i of M_b holds each row's W G^T entry i on the body (``mobility`` (R, 12), the columns of its side of the row;
    0 for a row not on it or dependent)."""
    solved = joined.body_response[body]
    if not joined.body_ready[body]:
        for i in range(6):
            for r in range(rows.kind.size):
                solved[i, r] = 0.0
                if rows.body_a[r] == body:
                    solved[i, r] = mobility[r, LIN_A + i]
                elif rows.body_b[r] == body:
                    solved[i, r] = mobility[r, LIN_B + i]
            solve_factored(joined, solved[i])
        joined.body_ready[body] = True


@kernel
def touches_rows(rows, a, b):
    """Whether a row acts on body ``a`` or ``b`` (engine body indices, -1 for static geometry)."""
    for r in range(rows.kind.size):
        for body in (rows.body_a[r], rows.body_b[r]):
            if body >= 0 and (body == a or body == b):
                return True
    return False


@kernel(inline=True)
def take_pushes(rows, gradient, joined, response, push):
    """push (3, B, 6) = the impulse that the equality rows' shares of a unit impulse along each of a contact's rows
    put on each body (``Joined.push``), from their A^{-1} y (``response`` (3, R)) and gradients ``gradient``
    (R, 12): applying the shares then costs six numbers a body where it cost twelve a row (``apply_joined``)."""
    for k in range(3):
        for body in range(push.shape[1]):
            for i in range(6):
                push[k, body, i] = 0.0
        for r in range(rows.kind.size):
            share = response[k, r]
            if joined.dependent[r] or share == 0.0:
                continue
            for body, column in ((rows.body_a[r], LIN_A), (rows.body_b[r], LIN_B)):
                if body >= 0:
                    for i in range(6):
                        push[k, body, i] -= share * gradient[r, column + i]


@kernel(inline=True)
def apply_joined(rows, bodies, state, world, joined, response, push, amount, impulses, damper_impulses):
    """The equality rows' part of a joined response: impulses -amount A^{-1} y (``response`` = A^{-1} y),
    accumulated into ``impulses`` (R,) for the constraint rows and ``damper_impulses`` (R,) for the dampers, whose
    residual G v + c P counts every share (an impact's too) to stay kept, and applied to the bodies as ``amount``
    times their sum along the rows' gradients, ``push`` (B, 6) (``take_pushes``)."""
    for r in range(rows.kind.size):
        if joined.dependent[r] or response[r] == 0.0:
            continue
        share = -amount * response[r]
        if is_damper(rows, r):
            damper_impulses[r] += share
        else:
            impulses[r] += share
    for body in range(push.shape[0]):
        for i in range(3):
            state.vel[world, body, i] += amount * push[body, i] * bodies.inv_mass[body]
            state.momentum[world, body, i] += amount * push[body, 3 + i]
