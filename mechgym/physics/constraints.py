"""Engine II: holonomic constraints between bodies enforced exactly by RATTLE.

Constraint rows (struct of arrays, :class:`Rows`) couple body a and body b (either may be the world, index
-1). Each row is one scalar function g(q) of the two bodies' poses with a gradient per body in the world
frame: a linear part dg/dx (x = centre of mass) and an angular part dg/dtheta (theta = an infinitesimal
world-frame rotation of the body, so a point fixed in the body moves by dtheta x r). The gradient of a row
is stored as 12 numbers [dg/dx_a, dg/dtheta_a, dg/dx_b, dg/dtheta_b].

Row kinds (p = c + R r is a point fixed in a body: r in the principal frame, relative to the COM; for the
world, p is the stored point itself and R = I):

  POINT     g = e . (p_b - p_a) - c,  e = R_a e_a (a direction fixed in a).  Three rows: a ball joint or a
            connect; two rows: a slide's perpendicular rows; one row with a bound: a slide limit.
  ALIGN     g = (R_b u) . (R_a w) - c.  Two rows: a hinge's axis alignment; three: locked relative rotation.
  DISTANCE  g = |p_b - p_a| - L.  Equality: a rod; upper bound (g <= 0): a rope (slack carries no force).
  ANGLE     g = atan2((R_b u) . (R_a (e x w)), (R_b u) . (R_a w)) - c: the angle of b about the axis e of
            a, measured from w (fixed in a, normal to e) to u (fixed in b, normal to e). With a bound: a
            hinge limit (the angle is taken in (-pi, pi]).

``sense`` makes a row one-sided: 0 equality g = 0; +1 g >= 0 (a lower bound); -1 g <= 0 (an upper bound).
The multiplier of a one-sided row may only push the allowed way: sense * lambda >= 0 (complementarity).

One step of length h (``step.advance`` runs these stages; the kicks are those of ``step.py``):

  opening kick    v_half = v_n + h/2 a_n,  L_half likewise                       (step.opening_kick)
  begin_step      store c_n, q_n and the start gradients G0 = G(q_n)             (this module)
  drift           c = c_n + h v_half,  q = free-rotor flow of h at L_half         (step.drift)
  shake           Gauss-Seidel over the rows: dlambda = -g / (h G W G0^T), impulse dlambda G0 on v_half
                  and L_half, re-drift both bodies from (c_n, q_n); sweeps until every |g| is below the
                  position tolerance. The equality rows of one joint (same body pair, consecutive) are
                  one block whose impulses are solved together (block Gauss-Seidel)   (this module)
  closing kick    v_{n+1} = v_half + h/2 a_{n+1}                                 (step.closing_kick)
  project         Gauss-Seidel on G(q_{n+1}) v_{n+1} = 0 for the active rows     (this module)
                  (with velocity-dependent forces the two alternate to a fixed point, see step.py)

W is the inverse mass matrix: 1/m on the linear part and R diag(1/I) R^T (principal moments I) on the
angular part. An impulse P (N s) along a gradient row adds P dg/dx / m to the COM velocity and P dg/dtheta
to the world angular momentum. Each row reports the generalised force (P_position + P_velocity) / h: N for
POINT and DISTANCE rows (a rod or rope under tension reports a negative force, -tension), N m for ALIGN
and ANGLE rows.

Why START gradients and Gauss-Seidel (seed 000): an impulse along the current gradient instead of G(q_n)
breaks the symplectic structure and costs a first-order energy error (a pendulum at 2 rad loses ~10 % in
ten periods); evaluating every error once per sweep (Jacobi) diverges on coupled rows (a seesaw with two
masses pinned to the plank). Both variants are kept selectable (``Solver.gradient``, ``Solver.sweep``) only
so that tests hold those traps closed.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .rotation import free_rotor_drift, rot, rotate_inverse
from .state import angular_velocity

POINT, ALIGN, DISTANCE, ANGLE = 0, 1, 2, 3
EQUALITY, LOWER, UPPER = 0, 1, -1  # Rows.sense
START, CURRENT = 0, 1  # Solver.gradient: impulse along G(q_n) (RATTLE) or along the current gradient (trap)
GAUSS_SEIDEL, JACOBI = 0, 1  # Solver.sweep: re-evaluate after each row or joint block (RATTLE) or once per sweep
WORLD = -1

# Columns of a 12-number gradient row.
LIN_A, ANG_A, LIN_B, ANG_B = 0, 3, 6, 9
# Consecutive equality rows on the same body pair (a joint, a weld) are solved together, up to this many.
MAX_BLOCK = 6
# A block whose elimination meets a pivot below this fraction of its largest diagonal entry has dependent
# rows; it is then swept row by row instead.
SINGULAR = 1e-12


class Rows(NamedTuple):
    """Constraint rows, (R,) or (R, 3) arrays. Vectors of body a (b) are in its principal frame (anchors
    relative to its COM); when the body is the world (-1) they are world vectors and points."""

    kind: np.ndarray  # (R,) int64: POINT | ALIGN | DISTANCE | ANGLE
    body_a: np.ndarray  # (R,) int64 engine body, -1 = world
    body_b: np.ndarray  # (R,) int64 engine body, -1 = world
    anchor_a: np.ndarray  # (R, 3) m: point fixed in a (POINT, DISTANCE)
    anchor_b: np.ndarray  # (R, 3) m: point fixed in b (POINT, DISTANCE)
    axis_a: np.ndarray  # (R, 3) unit: POINT e, ALIGN w, ANGLE hinge axis e (fixed in a)
    axis_b: np.ndarray  # (R, 3) unit: ALIGN u, ANGLE u (fixed in b)
    ref_a: np.ndarray  # (R, 3) unit: ANGLE zero-angle direction w (fixed in a, normal to e)
    offset: np.ndarray  # (R,) c: m (POINT), 1 (ALIGN), L: m (DISTANCE), rad (ANGLE)
    sense: np.ndarray  # (R,) int64: EQUALITY | LOWER (g >= 0) | UPPER (g <= 0)

    @staticmethod
    def empty() -> Rows:
        vector = np.zeros((0, 3))
        index = np.zeros(0, dtype=np.int64)
        return Rows(index, index, index, vector, vector, vector, vector, vector, np.zeros(0), index)

    @staticmethod
    def concatenate(parts: list[Rows]) -> Rows:
        """One set of rows from several (in order)."""
        return Rows(*(np.concatenate([getattr(p, f) for p in parts]) for f in Rows._fields))


def make_rows(kind, body_a, body_b, anchor_a=(0.0, 0.0, 0.0), anchor_b=(0.0, 0.0, 0.0), axis_a=(0.0, 0.0, 0.0),
              axis_b=(0.0, 0.0, 0.0), ref_a=(0.0, 0.0, 0.0), offset=0.0, sense=EQUALITY) -> Rows:
    """Rows from per-row values; scalars and single vectors are broadcast to the longest argument."""
    vectors = [np.atleast_2d(np.asarray(v, dtype=float)) for v in (anchor_a, anchor_b, axis_a, axis_b, ref_a)]
    scalars = [np.atleast_1d(np.asarray(s)) for s in (kind, body_a, body_b, offset, sense)]
    count = max([v.shape[0] for v in vectors] + [s.size for s in scalars])
    kind, body_a, body_b, offset, sense = (np.broadcast_to(s, (count,)).copy() for s in scalars)
    anchor_a, anchor_b, axis_a, axis_b, ref_a = (np.broadcast_to(v, (count, 3)).copy() for v in vectors)
    return Rows(kind.astype(np.int64), body_a.astype(np.int64), body_b.astype(np.int64), anchor_a, anchor_b,
                axis_a, axis_b, ref_a, offset.astype(float), sense.astype(np.int64))


class Solver(NamedTuple):
    """Projection settings. ``tolerance`` bounds |g| after SHAKE (m for POINT/DISTANCE rows, 1 or rad for
    ALIGN/ANGLE rows): keep it near 1e-13 times the scene's length scale, because a residual eps reports as a
    force error of about m eps / h^2. ``velocity_tolerance`` bounds |G v| after the projection (m/s, rad/s).
    ``max_sweeps``: a projection that has not converged by then reports NOT_CONVERGED."""

    tolerance: float = 1e-13
    velocity_tolerance: float = 1e-13
    max_sweeps: int = 200
    gradient: int = START
    sweep: int = GAUSS_SEIDEL


class Workspace(NamedTuple):
    """Caller-owned scratch and per-row results of the current step (B bodies, R rows)."""

    com0: np.ndarray  # (B, 3) c_n, m
    quat0: np.ndarray  # (B, 4) q_n
    start_gradient: np.ndarray  # (R, 12) G(q_n)
    gradient: np.ndarray  # (R, 12) current gradient
    change: np.ndarray  # (R,) impulse of the current sweep (Jacobi sweeps), N s
    coupling: np.ndarray  # (R,) G W G^T at q_{n+1} (velocity projection)
    active: np.ndarray  # (R,) bool: row takes part in the velocity projection
    # (R,) SHAKE and velocity-projection impulses of the current step, N s or N m s; on entry the previous
    # step's (the warm start: step.advance copies each world's from state.State and back after a good step)
    impulse_position: np.ndarray
    impulse_velocity: np.ndarray
    vectors: np.ndarray  # (8, 3) 3-vector scratch
    block: np.ndarray  # (MAX_BLOCK, MAX_BLOCK) the coupling matrix of one block of rows
    block_rhs: np.ndarray  # (MAX_BLOCK,) its right-hand side, then its impulses

    @staticmethod
    def empty(bodies: int, rows: int) -> Workspace:
        return new_workspace(bodies, rows)


@njit(cache=True)
def new_workspace(bodies, rows):
    """A zeroed ``Workspace`` for ``bodies`` bodies and ``rows`` rows (callable from compiled code)."""
    return Workspace(np.zeros((bodies, 3)), np.zeros((bodies, 4)), np.zeros((rows, 12)), np.zeros((rows, 12)),
                     np.zeros(rows), np.zeros(rows), np.zeros(rows, dtype=np.bool_), np.zeros(rows), np.zeros(rows),
                     np.zeros((8, 3)), np.zeros((MAX_BLOCK, MAX_BLOCK)), np.zeros(MAX_BLOCK))


@njit(cache=True)
def _cross(a, b):
    """a x b of two 3-tuples."""
    return a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]


@njit(cache=True)
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True)
def copy_into(source, target):
    """target[i] = source[i] for a 1-D ``target``: an explicit loop, because numba's array slice assignment
    checks for overlap and copies through a temporary (tens of ns per call in the inner loops)."""
    for i in range(target.size):
        target[i] = source[i]


@njit(cache=True)
def _turned(state, world, body, table, r):
    """R_body table[r] as a 3-tuple (the world: table[r] itself). Scalars throughout: slicing the arrays
    would create array objects whose reference counting costs more than the arithmetic."""
    vx, vy, vz = table[r, 0], table[r, 1], table[r, 2]
    if body < 0:
        return vx, vy, vz
    q = state.quat
    return rot(q[world, body, 0], q[world, body, 1], q[world, body, 2], q[world, body, 3], vx, vy, vz)


@njit(cache=True)
def _point(state, world, body, table, r):
    """(lever R r from the COM, point c + R r) of the point table[r] fixed in ``body`` (m); for the world
    the lever is 0 and the point is table[r] itself."""
    if body < 0:
        return (0.0, 0.0, 0.0), (table[r, 0], table[r, 1], table[r, 2])
    lever = _turned(state, world, body, table, r)
    com = state.com
    return lever, (com[world, body, 0] + lever[0], com[world, body, 1] + lever[1], com[world, body, 2] + lever[2])


@njit(cache=True)
def evaluate_row(rows, r, state, world, grad):
    """Return g of row ``r`` at the current poses of world ``world`` and write its gradient into ``grad``
    (12,): [dg/dx_a, dg/dtheta_a, dg/dx_b, dg/dtheta_b] (world frame)."""
    a, b, kind = rows.body_a[r], rows.body_b[r], rows.kind[r]
    for i in range(12):
        grad[i] = 0.0
    if kind == ALIGN or kind == ANGLE:
        u = _turned(state, world, b, rows.axis_b, r)  # u_w = R_b u
        if kind == ALIGN:
            # g = u_w . w_w - c;  d(u_w) = dtheta_b x u_w, d(w_w) = dtheta_a x w_w, so
            # dg = dtheta_b . (u_w x w_w) + dtheta_a . (w_w x u_w).
            w = _turned(state, world, a, rows.axis_a, r)  # w_w = R_a w
            t = _cross(u, w)
            for i in range(3):
                grad[ANG_B + i] = t[i]
                grad[ANG_A + i] = -t[i]
            _clear_world_columns(a, b, grad)
            return _dot(u, w) - rows.offset[r]
        # ANGLE: x = u_w . w_w, y = u_w . (e_w x w_w), phi = atan2(y, x);
        # dphi = (x dy - y dx) / (x^2 + y^2) with dx = (dtheta_b - dtheta_a) . (u_w x w_w) and dy likewise
        # with e_w x w_w (both reference directions turn with a).
        w = _turned(state, world, a, rows.ref_a, r)
        normal = _cross(_turned(state, world, a, rows.axis_a, r), w)  # e_w x w_w
        x, y = _dot(u, w), _dot(u, normal)
        scale = 1.0 / (x * x + y * y)
        t, d = _cross(u, w), _cross(u, normal)
        for i in range(3):
            k = (x * d[i] - y * t[i]) * scale
            grad[ANG_B + i] = k
            grad[ANG_A + i] = -k
        _clear_world_columns(a, b, grad)
        return math.atan2(y, x) - rows.offset[r]
    lever_a, point_a = _point(state, world, a, rows.anchor_a, r)
    lever_b, point_b = _point(state, world, b, rows.anchor_b, r)
    d = (point_b[0] - point_a[0], point_b[1] - point_a[1], point_b[2] - point_a[2])
    if kind == POINT:
        # g = e . (p_b - p_a) - c with e = R_a e_a:  dg/dx_b = e, dg/dtheta_b = r_b x e, dg/dx_a = -e,
        # dg/dtheta_a = (dtheta_a x e) . d - e . (dtheta_a x r_a) -> e x d - r_a x e = -(p_b - c_a) x e.
        e = _turned(state, world, a, rows.axis_a, r)
        value = _dot(e, d) - rows.offset[r]
        arm = (d[0] + lever_a[0], d[1] + lever_a[1], d[2] + lever_a[2])  # p_b - c_a
    else:
        # DISTANCE: g = |d| - L, n = d / |d|:  dg/dx_b = n, dg/dtheta_b = r_b x n, dg/dx_a = -n,
        # dg/dtheta_a = -r_a x n.
        length = math.sqrt(_dot(d, d))
        e = (d[0] / length, d[1] / length, d[2] / length)
        value = length - rows.offset[r]
        arm = lever_a
    t_b, t_a = _cross(lever_b, e), _cross(arm, e)
    for i in range(3):
        grad[LIN_B + i] = e[i]
        grad[ANG_B + i] = t_b[i]
        grad[LIN_A + i] = -e[i]
        grad[ANG_A + i] = -t_a[i]
    _clear_world_columns(a, b, grad)
    return value


@njit(cache=True)
def _clear_world_columns(a, b, grad):
    """The world does not move: its six gradient columns are zero."""
    if a < 0:
        grad[LIN_A:LIN_B] = 0.0
    if b < 0:
        grad[LIN_B:] = 0.0


@njit(cache=True)
def _body_coupling(bodies, state, world, body, gi, gj, column, vectors):
    """gi W_body gj^T over one body's 6 columns starting at ``column``: (1/m) gi_x . gj_x plus
    (R^T gi_theta) . diag(1/I) (R^T gj_theta) (W at the body's current orientation)."""
    if body < 0:
        return 0.0
    quat = state.quat[world, body]
    left, right = vectors[6], vectors[7]
    rotate_inverse(quat, gi[column + 3:column + 6], left)
    rotate_inverse(quat, gj[column + 3:column + 6], right)
    total = 0.0
    for i in range(3):
        total += bodies.inv_mass[body] * gi[column + i] * gj[column + i]
        total += bodies.inv_inertia[body, i] * left[i] * right[i]
    return total


@njit(cache=True)
def coupling(bodies, state, world, a, b, gi, gj, vectors):
    """gi W gj^T for two 12-number gradient rows of the body pair (a, b): the rate of change of g_i per unit
    impulse along gj (1/kg for POINT/DISTANCE rows: m/s per N s)."""
    return (_body_coupling(bodies, state, world, a, gi, gj, LIN_A, vectors)
            + _body_coupling(bodies, state, world, b, gi, gj, LIN_B, vectors))


@njit(cache=True)
def _kick(bodies, state, world, body, grad, column, impulse):
    """v += P dg/dx / m,  L += P dg/dtheta for an impulse P along one body's gradient columns."""
    if body < 0:
        return
    for i in range(3):
        state.vel[world, body, i] += impulse * grad[column + i] * bodies.inv_mass[body]
        state.momentum[world, body, i] += impulse * grad[column + 3 + i]


@njit(cache=True)
def apply_impulse(bodies, state, world, a, b, grad, impulse):
    """Apply the impulse ``impulse`` (N s, or N m s for angular rows) along the gradient ``grad`` to a and b."""
    _kick(bodies, state, world, a, grad, LIN_A, impulse)
    _kick(bodies, state, world, b, grad, LIN_B, impulse)


@njit(cache=True)
def redrift(bodies, state, world, body, h, work):
    """Drift ``body`` again from the start of the step with its corrected half-step velocity and momentum:
    c = c_n + h v_half, q = free-rotor flow of h seconds from q_n at L_half (the drift of step.drift)."""
    if body < 0:
        return
    for i in range(3):
        state.com[world, body, i] = work.com0[body, i] + h * state.vel[world, body, i]
    copy_into(work.quat0[body], state.quat[world, body])
    free_rotor_drift(state.quat[world, body], bodies.inv_inertia[body], state.momentum[world, body], h)


@njit(cache=True)
def begin_step(rows, state, world, work):
    """Before the drift: store c_n, q_n and the start-of-step gradients G(q_n). The impulses of the previous
    step stay in ``work`` as the warm start of this one (zero them when the state jumps, e.g. on reset)."""
    for body in range(work.com0.shape[0]):
        copy_into(state.com[world, body], work.com0[body])
        copy_into(state.quat[world, body], work.quat0[body])
    for r in range(rows.kind.size):
        evaluate_row(rows, r, state, world, work.start_gradient[r])


@njit(cache=True)
def _clamped(sense, total, change):
    """The part of ``change`` that keeps the accumulated multiplier on the allowed side (sense * P >= 0)."""
    if sense != EQUALITY and sense * (total + change) < 0.0:
        return -total
    return change


@njit(cache=True)
def _row_impulse(rows, bodies, solver, state, world, h, work, r, value):
    """SHAKE impulse of row r for the error ``value``: P = -g / (h G W D^T) with D the impulse direction
    (G0 for START, the current G for CURRENT), clamped for one-sided rows. Returns P (0 if degenerate)."""
    k = h * coupling(bodies, state, world, rows.body_a[r], rows.body_b[r], work.gradient[r],
                     _direction_row(solver, work, r), work.vectors)
    if not k > 0.0:
        return 0.0
    return _clamped(rows.sense[r], work.impulse_position[r], -value / k)


@njit(cache=True)
def _worse(worst, error):
    """max(worst, error), with NaN winning (a non-finite error never counts as converged)."""
    return error if not error <= worst else worst


@njit(cache=True)
def block_end(rows, r):
    """End (exclusive) of the block of rows that starts at row r: the run of consecutive equality rows on the
    same body pair, at most MAX_BLOCK long; a one-sided row is a block of its own."""
    end = r + 1
    if rows.sense[r] != EQUALITY:
        return end
    while (end < rows.kind.size and end - r < MAX_BLOCK and rows.sense[end] == EQUALITY
           and rows.body_a[end] == rows.body_a[r] and rows.body_b[end] == rows.body_b[r]):
        end += 1
    return end


@njit(cache=True)
def solve_block(matrix, rhs, n):
    """Solve matrix[:n, :n] x = rhs[:n] in place (x left in rhs) by Gaussian elimination with partial
    pivoting. Returns False, leaving both garbled, when a pivot falls below SINGULAR times the largest
    diagonal entry (dependent rows)."""
    scale = 0.0
    for i in range(n):
        scale = max(scale, abs(matrix[i, i]))
    for col in range(n):
        pivot = col
        for row in range(col + 1, n):
            if abs(matrix[row, col]) > abs(matrix[pivot, col]):
                pivot = row
        if not abs(matrix[pivot, col]) > SINGULAR * scale:
            return False
        for k in range(n):
            matrix[col, k], matrix[pivot, k] = matrix[pivot, k], matrix[col, k]
        rhs[col], rhs[pivot] = rhs[pivot], rhs[col]
        for row in range(col + 1, n):
            factor = matrix[row, col] / matrix[col, col]
            for k in range(col, n):
                matrix[row, k] -= factor * matrix[col, k]
            rhs[row] -= factor * rhs[col]
    for row in range(n - 1, -1, -1):
        total = rhs[row]
        for k in range(row + 1, n):
            total -= matrix[row, k] * rhs[k]
        rhs[row] = total / matrix[row, row]
    return True


@njit(cache=True)
def _direction_row(solver, work, r):
    """The impulse direction of row r in SHAKE: G(q_n) (START) or the current gradient (CURRENT)."""
    return work.start_gradient[r] if solver.gradient == START else work.gradient[r]


@njit(cache=True)
def _shake_rows(rows, bodies, solver, state, world, h, work, start, end):
    """Row-by-row Gauss-Seidel over rows [start, end); returns the largest error met (see ``shake``)."""
    worst = 0.0
    for r in range(start, end):
        value = evaluate_row(rows, r, state, world, work.gradient[r])
        impulse = _row_impulse(rows, bodies, solver, state, world, h, work, r, value)
        # An equality row's error is |g|; a one-sided row counts only while it acts (pushes or releases).
        worst = _worse(worst, abs(value) if impulse != 0.0 or rows.sense[r] == EQUALITY else 0.0)
        _shake_row(rows, bodies, solver, state, world, h, work, r, impulse)
    return worst


@njit(cache=True)
def _shake_block(rows, bodies, solver, state, world, h, work, start, end):
    """One Gauss-Seidel step on the block [start, end) of equality rows of one body pair: g_i at the current
    poses, impulses P solving sum_j h G_i W D_j^T P_j = -g_i (D: the impulse directions), applied together,
    then both bodies re-drift. Returns the block's largest |g|. Dependent rows fall back to row by row."""
    n = end - start
    if n == 1:
        return _shake_rows(rows, bodies, solver, state, world, h, work, start, end)
    a, b = rows.body_a[start], rows.body_b[start]
    worst = 0.0
    for i in range(n):
        value = evaluate_row(rows, start + i, state, world, work.gradient[start + i])
        work.block_rhs[i] = -value
        worst = _worse(worst, abs(value))
    for i in range(n):
        for j in range(n):
            work.block[i, j] = h * coupling(bodies, state, world, a, b, work.gradient[start + i],
                                            _direction_row(solver, work, start + j), work.vectors)
    if not solve_block(work.block, work.block_rhs, n):
        return _worse(worst, _shake_rows(rows, bodies, solver, state, world, h, work, start, end))
    for j in range(n):
        work.impulse_position[start + j] += work.block_rhs[j]
        apply_impulse(bodies, state, world, a, b, _direction_row(solver, work, start + j), work.block_rhs[j])
    redrift(bodies, state, world, a, h, work)
    redrift(bodies, state, world, b, h, work)
    return worst


@njit(cache=True)
def shake(rows, bodies, solver, state, world, h, work):
    """Project the drifted poses of world ``world`` back onto the rows (after step.drift, before the
    closing kick) and correct the half-step velocities and momenta to match. ``begin_step`` must have run
    before the drift. Returns the number of sweeps used, or -1 if the tolerance was not met in
    ``solver.max_sweeps`` sweeps (or the poses are not finite).

    For one row: g at the current poses, P = -g / (h G W G0^T), the impulse P along G0 on the half-step
    (v, L) of the row's bodies, and those bodies drift again from (c_n, q_n). Gauss-Seidel goes block by
    block (``block_end``: a joint's or weld's equality rows together, solved exactly for their impulses, see
    ``_shake_block``; every other row alone) and re-evaluates each block after the previous ones moved the
    bodies; Jacobi (trap) evaluates every row first, then applies all the row impulses. A sweep's error is
    the largest |g| it met over the equality rows and the one-sided rows that acted; the projection has
    converged when a whole sweep met no error above ``solver.tolerance``.

    Warm start: the previous step's impulses (left in ``work.impulse_position``) are applied first along G0
    and the sweeps correct them; the converged poses do not depend on the guess, only the sweep count does.
    The CURRENT-gradient trap starts from zero so that it stays the plain variant."""
    count = rows.kind.size
    for r in range(count):
        guess = work.impulse_position[r] if solver.gradient == START else 0.0
        work.impulse_position[r] = 0.0
        _shake_row(rows, bodies, solver, state, world, h, work, r, guess)
    for sweep in range(solver.max_sweeps):
        worst = 0.0
        if solver.sweep == JACOBI:
            for r in range(count):
                value = evaluate_row(rows, r, state, world, work.gradient[r])
                work.change[r] = _row_impulse(rows, bodies, solver, state, world, h, work, r, value)
                worst = _worse(worst, abs(value) if work.change[r] != 0.0 or rows.sense[r] == EQUALITY else 0.0)
            for r in range(count):
                _shake_row(rows, bodies, solver, state, world, h, work, r, work.change[r])
        else:
            r = 0
            while r < count:
                end = block_end(rows, r)
                worst = _worse(worst, _shake_block(rows, bodies, solver, state, world, h, work, r, end))
                r = end
        if worst <= solver.tolerance:
            return sweep + 1
    return -1


@njit(cache=True)
def _shake_row(rows, bodies, solver, state, world, h, work, r, impulse):
    """Apply one SHAKE impulse of row r along its direction and re-drift the row's two bodies."""
    if impulse == 0.0:
        return
    a, b = rows.body_a[r], rows.body_b[r]
    work.impulse_position[r] += impulse
    apply_impulse(bodies, state, world, a, b, _direction_row(solver, work, r), impulse)
    redrift(bodies, state, world, a, h, work)
    redrift(bodies, state, world, b, h, work)


@njit(cache=True)
def _body_rate(bodies, state, world, body, grad, column, omega):
    """dg/dt contribution of one body: dg/dx . v + dg/dtheta . w (w = R diag(1/I) R^T L)."""
    if body < 0:
        return 0.0
    angular_velocity(bodies.inv_inertia[body], state.quat[world, body], state.momentum[world, body], omega)
    total = 0.0
    for i in range(3):
        total += grad[column + i] * state.vel[world, body, i] + grad[column + 3 + i] * omega[i]
    return total


@njit(cache=True)
def row_rate(rows, bodies, state, world, r, grad, omega):
    """dg/dt = G v of row r for the gradient ``grad`` (m/s or rad/s); ``omega`` (3,) scratch."""
    return (_body_rate(bodies, state, world, rows.body_a[r], grad, LIN_A, omega)
            + _body_rate(bodies, state, world, rows.body_b[r], grad, LIN_B, omega))


@njit(cache=True)
def project_velocity(rows, bodies, solver, state, world, h, work):
    """After the closing kick: remove the velocity along the constraints at the new poses, G(q_{n+1}) v = 0
    for the active rows, by Gauss-Seidel over the same blocks as ``shake``: P = -G v / (G W G^T) for a single
    row (a block solves its rows' impulses together), impulse P along G. One-sided rows take part
    when touching or violated (sense * g <= tolerance) or pushed in this step's SHAKE, and then satisfy
    sense * G v >= 0, sense * P >= 0, (G v) P = 0. The previous step's impulses are the warm start. Returns
    the sweeps used, or -1 if not converged. (``begin_projection`` then ``projection_sweep`` until it returns
    no more than ``solver.velocity_tolerance``: solved together with contacts, each sweep is interleaved with a
    contact sweep.)"""
    begin_projection(rows, bodies, solver, state, world, work)
    for sweep in range(solver.max_sweeps):
        if projection_sweep(rows, bodies, state, world, work) <= solver.velocity_tolerance:
            return sweep + 1
    return -1


@njit(cache=True)
def begin_projection(rows, bodies, solver, state, world, work):
    """Set up the velocity projection at the current poses: each row's gradient G(q_{n+1}) and coupling
    G W G^T, which rows take part (``work.active``, see ``project_velocity``), and the warm start: the previous
    step's impulse of each active row applied along its gradient (inactive rows start from zero)."""
    for r in range(rows.kind.size):
        grad = work.gradient[r]
        value = evaluate_row(rows, r, state, world, grad)
        a, b = rows.body_a[r], rows.body_b[r]
        work.coupling[r] = coupling(bodies, state, world, a, b, grad, grad, work.vectors)
        work.active[r] = (rows.sense[r] == EQUALITY or rows.sense[r] * value <= solver.tolerance
                          or work.impulse_position[r] != 0.0) and work.coupling[r] > 0.0
        # Warm start from the previous step's impulse of an active row (its sign is already allowed).
        guess = work.impulse_velocity[r] if work.active[r] else 0.0
        work.impulse_velocity[r] = guess
        apply_impulse(bodies, state, world, a, b, grad, guess)


@njit(cache=True)
def projection_sweep(rows, bodies, state, world, work):
    """One Gauss-Seidel sweep of the velocity projection over the blocks (after ``begin_projection``); returns
    the largest |G v| it met (m/s or rad/s): converged when that is below ``solver.velocity_tolerance``."""
    worst = 0.0
    r = 0
    while r < rows.kind.size:
        end = block_end(rows, r)
        worst = _worse(worst, _project_block(rows, bodies, state, world, work, r, end))
        r = end
    return worst


@njit(cache=True)
def _project_rows(rows, bodies, state, world, work, start, end):
    """Row-by-row Gauss-Seidel of the velocity projection over the active rows in [start, end): P = -G v /
    (G W G^T), clamped for one-sided rows. Returns the largest |G v| change asked for."""
    worst = 0.0
    for r in range(start, end):
        if not work.active[r]:
            continue
        grad = work.gradient[r]
        rate = row_rate(rows, bodies, state, world, r, grad, work.vectors[0])
        impulse = _clamped(rows.sense[r], work.impulse_velocity[r], -rate / work.coupling[r])
        worst = _worse(worst, abs(impulse * work.coupling[r]))
        work.impulse_velocity[r] += impulse
        apply_impulse(bodies, state, world, rows.body_a[r], rows.body_b[r], grad, impulse)
    return worst


@njit(cache=True)
def _project_block(rows, bodies, state, world, work, start, end):
    """Velocity projection of one block of equality rows of a body pair, solved together: sum_j G_i W G_j^T
    P_j = -G_i v. Returns the largest |G_i v|. Single rows and dependent blocks go row by row."""
    n = end - start
    if n == 1:
        return _project_rows(rows, bodies, state, world, work, start, end)
    a, b = rows.body_a[start], rows.body_b[start]
    worst = 0.0
    for i in range(n):
        rate = row_rate(rows, bodies, state, world, start + i, work.gradient[start + i], work.vectors[0])
        work.block_rhs[i] = -rate
        worst = _worse(worst, abs(rate))
        for j in range(n):
            work.block[i, j] = coupling(bodies, state, world, a, b, work.gradient[start + i],
                                        work.gradient[start + j], work.vectors)
    if not solve_block(work.block, work.block_rhs, n):
        return _worse(worst, _project_rows(rows, bodies, state, world, work, start, end))
    for j in range(n):
        work.impulse_velocity[start + j] += work.block_rhs[j]
        apply_impulse(bodies, state, world, a, b, work.gradient[start + j], work.block_rhs[j])
    return worst


@njit(cache=True)
def reaction_forces(state, world, h, out):
    """out[r] = (P_position + P_velocity) / h from the impulses of the last step of world ``world`` (kept in
    ``state``, see ``state.State``): each row's generalised force over the step (N or N m; a rod or rope in
    tension reports -tension)."""
    for r in range(out.size):
        out[r] = (state.impulse_position[world, r] + state.impulse_velocity[world, r]) / h
