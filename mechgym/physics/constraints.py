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

  begin_step      store c_n, q_n, g(q_n), the start gradients G0 = G(q_n) and the dampers' G0 v_n
                                                                                 (this module)
  opening kick    v_half = v_n + h/2 a_n,  L_half likewise                       (step.opening_kick)
  predict_shake   impulses along G0 on v_half and L_half that make the drift's linear prediction meet
                  every row (and its previous curvature): SHAKE's first iterate    (this module)
  drift           c = c_n + h v_half,  q = free-rotor flow of h at L_half         (step.drift)
  shake           all rows at once: dlambda = -K^{-1} g with K = h G W G0^T (LU-factored once per step),
                  impulse dlambda G0 on v_half and L_half, re-drift the bodies from (c_n, q_n); a
                  quasi-Newton iteration until every |g| is below the position tolerance  (this module)
  damper rates    the dampers' G(q_{n+1}) v_half                   (this module: start_damper_rates)
  closing kick    v_{n+1} = v_half + h/2 a_{n+1}                                 (step.closing_kick)
  project         G(q_{n+1}) v_{n+1} = 0 for the active rows: one LU solve of G W G^T (equality rows;
                  one-sided rows by an active set)                               (this module)
                  (with velocity-dependent forces the two alternate to a fixed point, see step.py)

Joint damping, the servos' kv and joint armature are damper rows, not forces: over each half-step the trapezoidal
rule's impulse of the force -d G v and the armature's -a (G v_end - G v_start), implicit in the half-step's end
velocity, join SHAKE (the opening half) and the velocity projection (the closing half) as a soft row
(``damper_compliance``).

W is the inverse mass matrix: 1/m on the linear part and R diag(1/I) R^T (principal moments I) on the
angular part. An impulse P (N s) along a gradient row adds P dg/dx / m to the COM velocity and P dg/dtheta
to the world angular momentum. Each row reports the generalised force (P_position + P_velocity) / h: N for
POINT and DISTANCE rows (a rod or rope under tension reports a negative force, -tension), N m for ALIGN
and ANGLE rows.

Why the start gradients G(q_n) and a coupled solve (seed 000): an impulse along the current gradient instead of G(q_n)
breaks the symplectic structure and costs a first-order energy error (a pendulum at 2 rad loses ~10 % in
ten periods); evaluating every error once per sweep and correcting each row alone (Jacobi) diverges on
coupled rows (a seesaw with two masses pinned to the plank). The tests that hold those traps closed carry their
own copies of the variants (``tests/physics/constraints/traps.py``). The direct solve replaced block
Gauss-Seidel sweeps, which needed ~16 SHAKE / ~23 projection sweeps per step on a double pendulum and ~80 /
~130 on the slider-crank, where it needs 2-3 iterations and one solve (plus the check that finds them met).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .jit import kernel, zero_arrays
from .linalg import lu_factor, lu_solve
from .rotation import free_rotor_drift
from .state import tensor_spin, world_inverse_inertia, world_spin
from .tolerances import DAMPER_ROUNDING, RATE_ROUNDING, SLOW_GAIN
from .vectors import cross, dot, rot

POINT, ALIGN, DISTANCE, ANGLE = 0, 1, 2, 3
EQUALITY, LOWER, UPPER = 0, 1, -1  # Rows.sense
WORLD = -1

# Columns of a 12-number gradient row.
LIN_A, ANG_A, LIN_B, ANG_B = 0, 3, 6, 9
HELD_NONE, HELD_PROJECTION = 0, 1  # what ``Workspace.matrix`` holds (``Workspace.held``)


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
    # (R,) 0 for a constraint row; d > 0 (N s/m, N m s/rad) makes the row a damper of the coordinate g: no
    # constraint, but the force -d dg/dt, integrated over each half-step by the trapezoidal rule, implicitly
    # (``damper_compliance``): in SHAKE over the opening half-step, in the velocity projection over the closing one
    damping: np.ndarray
    # (R,) 0 for a constraint row; a > 0 (kg, kg m^2: MJCF's joint armature) makes the row a damper too, of the
    # coordinate's inertia: the force -a d^2g/dt^2, the impulse -a (G v_end - G v_start) over each half-step
    armature: np.ndarray

    @staticmethod
    def empty() -> Rows:
        vector = np.zeros((0, 3))
        index = np.zeros(0, dtype=np.int64)
        return Rows(index, index, index, vector, vector, vector, vector, vector, np.zeros(0), index, np.zeros(0),
                    np.zeros(0))

    @staticmethod
    def concatenate(parts: list[Rows]) -> Rows:
        """One set of rows from several (in order)."""
        return Rows(*(np.concatenate([getattr(p, f) for p in parts]) for f in Rows._fields))


def make_rows(kind, body_a, body_b, anchor_a=(0.0, 0.0, 0.0), anchor_b=(0.0, 0.0, 0.0), axis_a=(0.0, 0.0, 0.0),
              axis_b=(0.0, 0.0, 0.0), ref_a=(0.0, 0.0, 0.0), offset=0.0, sense=EQUALITY, damping=0.0,
              armature=0.0) -> Rows:
    """Rows from per-row values; scalars and single vectors are broadcast to the longest argument."""
    vectors = [np.atleast_2d(np.asarray(v, dtype=float)) for v in (anchor_a, anchor_b, axis_a, axis_b, ref_a)]
    scalars = [np.atleast_1d(np.asarray(s)) for s in (kind, body_a, body_b, offset, sense, damping, armature)]
    count = max([v.shape[0] for v in vectors] + [s.size for s in scalars])
    kind, body_a, body_b, offset, sense, damping, armature = (np.broadcast_to(s, (count,)).copy() for s in scalars)
    anchor_a, anchor_b, axis_a, axis_b, ref_a = (np.broadcast_to(v, (count, 3)).copy() for v in vectors)
    return Rows(kind.astype(np.int64), body_a.astype(np.int64), body_b.astype(np.int64), anchor_a, anchor_b,
                axis_a, axis_b, ref_a, offset.astype(float), sense.astype(np.int64), damping.astype(float),
                armature.astype(float))


class Solver(NamedTuple):
    """Projection settings. ``tolerance`` bounds |g| after SHAKE (m for POINT/DISTANCE rows, 1 or rad for
    ALIGN/ANGLE rows): keep it near 1e-13 times the scene's length scale, because a residual eps reports as a
    force error of about m eps / h^2. ``velocity_tolerance`` bounds |G v| after the projection (m/s, rad/s).
    ``max_sweeps``: a projection that has not converged by then reports NOT_CONVERGED."""

    tolerance: float = 1e-13
    velocity_tolerance: float = 1e-13
    max_sweeps: int = 200


class Workspace(NamedTuple):
    """Caller-owned scratch and per-row results of the current step (B bodies, R rows)."""

    com0: np.ndarray  # (B, 3) c_n, m
    quat0: np.ndarray  # (B, 4) q_n
    vel0: np.ndarray  # (B, 3) v_n, m/s
    momentum0: np.ndarray  # (B, 3) L_n (world), kg m^2/s
    start_gradient: np.ndarray  # (R, 12) G(q_n)
    start_value: np.ndarray  # (R,) g(q_n) of each constraint row
    gradient: np.ndarray  # (R, 12) current gradient
    active: np.ndarray  # (R,) bool: row takes part in the direct solve (SHAKE, velocity projection)
    # (R,) SHAKE and velocity-projection impulses of the current step, N s or N m s; on entry the previous
    # step's (the projection's warm start: step.advance copies each world's from state.State and back after a
    # good step; ``predict_shake`` sets SHAKE's anew)
    impulse_position: np.ndarray
    impulse_velocity: np.ndarray
    # (R,) the rate G(q_n) v_half + g(q_n)/h of each row at the step's SHAKE solution, m/s or rad/s (0 for a
    # one-sided row that did not act): what the drift's curvature asked beyond its linear prediction, the aim of
    # the next step's first iterate (``predict_shake``); on entry the previous step's, like the impulses
    chord_rate: np.ndarray
    vectors: np.ndarray  # (8, 3) 3-vector scratch
    # Direct solve (``_solve_pass``):
    # (R, 12) W D^T of each row's impulse direction D (G0 in SHAKE, G in the projection, which the contacts'
    # velocity solve reads too; G at the poses of the contacts' position correction, contact.position)
    mobility: np.ndarray
    matrix: np.ndarray  # (R, R) K = G W D^T over the active rows (see ``_assemble``)
    factored: np.ndarray  # (R, R) LU factors of K over the member rows (``linalg.lu_factor``)
    order: np.ndarray  # (R,) int64: the member rows of the factored set, in row order
    pivot: np.ndarray  # (R,) int64: row swaps of the LU
    pivot_column: np.ndarray  # (R,) int64: pivot columns of the LU
    sizes: np.ndarray  # (2,) int64: rows in the factored set (-1: none factored yet), its rank
    member: np.ndarray  # (R,) bool: row is held (solved as an equality) in the current solve
    residual: np.ndarray  # (R,) g (SHAKE) or G v (projection) of each active row
    delta: np.ndarray  # (R,) the multiplier changes of the current solve, N s or N m s
    rhs: np.ndarray  # (R,) right-hand side of the factored solve, then its solution
    diagonal: np.ndarray  # (R,) scratch of ``linalg.lu_factor``
    kicked: np.ndarray  # (B,) bool: body received a SHAKE impulse since its last re-drift
    threshold: np.ndarray  # (1,) velocity tolerance of the current projection, m/s or rad/s
    # (1,) bool: the last ``projection_sweep`` that corrected the rows found every acting row's rate error within its
    # round-off before its correction (``_within_round_off``)
    at_round_off: np.ndarray
    # (R,) c = 4 / (h d + 4 a) of each damper row taking part in the current solve (``damper_compliance``; m/s per
    # N s, rad/s per N m s), 0 for the other rows
    compliance: np.ndarray
    # (R,) the rate G v each damper row's current half-step starts from (m/s or rad/s), for its damping and for its
    # armature: G(q_n) v_n in SHAKE (``begin_step``); in the velocity projection G(q_{n+1}) v_half and the chord rate
    # the opening half's armature ended with (``start_damper_rates``); 0 for the other rows
    damper_start: np.ndarray
    armature_start: np.ndarray
    # (R,) each damper row's chord rate (g(q) - g(q_n)) / h at the last SHAKE iterate (``_damper_residual``): its
    # armature's rate over the opening half-step, from which the closing half goes on
    armature_chord: np.ndarray
    # (R,) the weights h d / (h d + 4 a) and -4 a / (h d + 4 a) of those start rates in each damper row's soft row
    # (``damper_compliance``): 1 and -0 for a damper without armature
    damper_weight: np.ndarray
    armature_weight: np.ndarray
    # (3,) what ``matrix`` (and its factored set) holds for a later stage to take up (``_holds``): HELD_NONE, or
    # HELD_PROJECTION (a velocity projection's K = G W G^T + c at the current poses, for the next step's
    # ``predict_shake``); then the world and the step length h (s) it was taken for
    held: np.ndarray
    # (B, 6) each body's world inverse inertia R diag(1/I) R^T (``state.world_inverse_inertia``): ``spin0`` at q_n
    # (``begin_step``), ``spin`` at the poses of the last ``_prepare_shake`` or ``begin_projection``, for the rates
    # and mobilities those stages read at those orientations
    spin0: np.ndarray
    spin: np.ndarray
    # (R,) g of each row at the poses of the last ``begin_projection``, whose gradients stay in ``gradient`` and world
    # inverse inertias in ``spin``: while ``matrix`` is held (HELD_PROJECTION, the poses unmoved since), the next
    # step's ``begin_step`` takes the three up as g(q_n), G(q_n) and W(q_n) instead of evaluating them again
    projection_value: np.ndarray
    # (B, 3) each body's world angular velocity W L (rad/s) for the rates of a batch of rows at the same momenta
    # (``_take_omegas``: a ``projection_sweep``'s, from ``spin``; ``predict_shake``'s and the chord rates', from
    # ``spin0``)
    omega: np.ndarray

    @staticmethod
    def empty(bodies: int, rows: int, cleared: bool = True) -> Workspace:
        """A ``Workspace`` for ``bodies`` bodies and ``rows`` rows, as ``clear_workspace`` leaves it (``cleared``)
        or zeros (for a caller whose kernels clear it first: no compile of ``clear_workspace`` for Python)."""
        index = np.zeros(rows, dtype=np.int64)
        work = Workspace(np.zeros((bodies, 3)), np.zeros((bodies, 4)), np.zeros((bodies, 3)), np.zeros((bodies, 3)),
                         np.zeros((rows, 12)), np.zeros(rows),
                         np.zeros((rows, 12)), np.zeros(rows, dtype=np.bool_), np.zeros(rows),
                         np.zeros(rows), np.zeros(rows), np.zeros((8, 3)),
                         np.zeros((rows, 12)), np.zeros((rows, rows)), np.zeros((rows, rows)),
                         index, index.copy(), index.copy(), np.zeros(2, dtype=np.int64),
                         np.zeros(rows, dtype=np.bool_), np.zeros(rows), np.zeros(rows), np.zeros(rows),
                         np.zeros(rows), np.zeros(bodies, dtype=np.bool_), np.zeros(1), np.zeros(1, dtype=np.bool_),
                         np.zeros(rows),
                         np.zeros(rows), np.zeros(rows), np.zeros(rows), np.zeros(rows), np.zeros(rows), np.zeros(3),
                         np.zeros((bodies, 6)), np.zeros((bodies, 6)), np.zeros(rows), np.zeros((bodies, 3)))
        if cleared:
            clear_workspace(work)
        return work


@kernel
def clear_workspace(work):
    """Every array of ``work`` zeroed: no factored set (sizes = (-1, 0)), no matrix held (HELD_NONE)."""
    zero_arrays(work)
    work.sizes[0] = -1


@kernel
def forget_matrix(work):
    """``work.matrix`` holds nothing a later stage may take up (``Workspace.held``): after the poses moved."""
    work.held[0] = HELD_NONE


@kernel
def _hold(work, kind, world, h):
    """``work.matrix`` holds the matrix ``kind`` of world ``world`` for the step length ``h`` (``Workspace.held``)."""
    work.held[0], work.held[1], work.held[2] = kind, world, h


@kernel(inline=True)
def _holds(work, kind, world, h):
    """Whether ``work.matrix`` holds the matrix ``kind`` of world ``world`` for the step length ``h``."""
    return work.held[0] == kind and work.held[1] == world and work.held[2] == h


@kernel
def copy_into(source, target):
    """target[i] = source[i] for a 1-D ``target``: an explicit loop, because numba's array slice assignment
    checks for overlap and copies through a temporary (tens of ns per call in the inner loops)."""
    for i in range(target.size):
        target[i] = source[i]


@kernel
def _turned(quat, world, body, table, r):
    """R_body table[r] as a 3-tuple (the world: table[r] itself)."""
    vx, vy, vz = table[r, 0], table[r, 1], table[r, 2]
    if body < 0:
        return vx, vy, vz
    return rot(quat[world, body, 0], quat[world, body, 1], quat[world, body, 2], quat[world, body, 3], vx, vy, vz)


@kernel
def _point(com, quat, world, body, table, r):
    """(lever R r from the COM, point c + R r) of the point table[r] fixed in ``body`` (m); for the world
    the lever is 0 and the point is table[r] itself."""
    if body < 0:
        return (0.0, 0.0, 0.0), (table[r, 0], table[r, 1], table[r, 2])
    lever = _turned(quat, world, body, table, r)
    return lever, (com[world, body, 0] + lever[0], com[world, body, 1] + lever[1], com[world, body, 2] + lever[2])


@kernel(inline=True)
def evaluate_row(rows, r, state, world, grad):
    """Return g of row ``r`` at the current poses of world ``world`` and write its gradient into ``grad``
    (12,): [dg/dx_a, dg/dtheta_a, dg/dx_b, dg/dtheta_b] (world frame)."""
    a, b, kind = rows.body_a[r], rows.body_b[r], rows.kind[r]
    com, quat = state.com, state.quat
    for i in range(12):
        grad[i] = 0.0
    if kind == ALIGN or kind == ANGLE:
        u = _turned(quat, world, b, rows.axis_b, r)  # u_w = R_b u
        if kind == ALIGN:
            # g = u_w . w_w - c;  d(u_w) = dtheta_b x u_w, d(w_w) = dtheta_a x w_w, so
            # dg = dtheta_b . (u_w x w_w) + dtheta_a . (w_w x u_w).
            w = _turned(quat, world, a, rows.axis_a, r)  # w_w = R_a w
            t = cross(u, w)
            for i in range(3):
                grad[ANG_B + i] = t[i]
                grad[ANG_A + i] = -t[i]
            _clear_world_columns(a, b, grad)
            return dot(u, w) - rows.offset[r]
        # ANGLE: x = u_w . w_w, y = u_w . (e_w x w_w), phi = atan2(y, x);
        # dphi = (x dy - y dx) / (x^2 + y^2) with dx = (dtheta_b - dtheta_a) . (u_w x w_w) and dy likewise
        # with e_w x w_w (both reference directions turn with a).
        w = _turned(quat, world, a, rows.ref_a, r)
        normal = cross(_turned(quat, world, a, rows.axis_a, r), w)  # e_w x w_w
        x, y = dot(u, w), dot(u, normal)
        scale = 1.0 / (x * x + y * y)
        t, d = cross(u, w), cross(u, normal)
        for i in range(3):
            k = (x * d[i] - y * t[i]) * scale
            grad[ANG_B + i] = k
            grad[ANG_A + i] = -k
        _clear_world_columns(a, b, grad)
        return math.atan2(y, x) - rows.offset[r]
    lever_a, point_a = _point(com, quat, world, a, rows.anchor_a, r)
    lever_b, point_b = _point(com, quat, world, b, rows.anchor_b, r)
    d = (point_b[0] - point_a[0], point_b[1] - point_a[1], point_b[2] - point_a[2])
    if kind == POINT:
        # g = e . (p_b - p_a) - c with e = R_a e_a:  dg/dx_b = e, dg/dtheta_b = r_b x e, dg/dx_a = -e,
        # dg/dtheta_a = (dtheta_a x e) . d - e . (dtheta_a x r_a) -> e x d - r_a x e = -(p_b - c_a) x e.
        e = _turned(quat, world, a, rows.axis_a, r)
        value = dot(e, d) - rows.offset[r]
        arm = (d[0] + lever_a[0], d[1] + lever_a[1], d[2] + lever_a[2])  # p_b - c_a
    else:
        # DISTANCE: g = |d| - L, n = d / |d|:  dg/dx_b = n, dg/dtheta_b = r_b x n, dg/dx_a = -n,
        # dg/dtheta_a = -r_a x n.
        length = math.sqrt(dot(d, d))
        e = (d[0] / length, d[1] / length, d[2] / length)
        value = length - rows.offset[r]
        arm = lever_a
    t_b, t_a = cross(lever_b, e), cross(arm, e)
    for i in range(3):
        grad[LIN_B + i] = e[i]
        grad[ANG_B + i] = t_b[i]
        grad[LIN_A + i] = -e[i]
        grad[ANG_A + i] = -t_a[i]
    _clear_world_columns(a, b, grad)
    return value


@kernel(inline=True)
def _clear_world_columns(a, b, grad):
    """The world does not move: its six gradient columns are zero."""
    if a < 0:
        for i in range(LIN_A, LIN_B):  # (a loop: a slice would create an array object)
            grad[i] = 0.0
    if b < 0:
        for i in range(LIN_B, 12):
            grad[i] = 0.0


@kernel(inline=True)
def _spin_coupling(bodies, spin, body, gi, gj, column):
    """gi W gj^T over one body's 6 columns from ``column``: (1/m) gi_x . gj_x + gi_theta . S gj_theta with S the
    body's world inverse inertia in ``spin`` (B, 6); 0 for the world (body < 0)."""
    if body < 0:
        return 0.0
    wx, wy, wz = tensor_spin(spin[body], gj[column + 3], gj[column + 4], gj[column + 5])
    linear = gi[column] * gj[column] + gi[column + 1] * gj[column + 1] + gi[column + 2] * gj[column + 2]
    return bodies.inv_mass[body] * linear + gi[column + 3] * wx + gi[column + 4] * wy + gi[column + 5] * wz


@kernel
def coupling(bodies, spin, a, b, gi, gj):
    """gi W gj^T for two 12-number gradient rows of the body pair (a, b): the rate of change of g_i per unit
    impulse along gj (1/kg for POINT/DISTANCE rows: m/s per N s), W at the orientations whose world inverse
    inertias ``spin`` (B, 6) holds (``take_spins``)."""
    return _spin_coupling(bodies, spin, a, gi, gj, LIN_A) + _spin_coupling(bodies, spin, b, gi, gj, LIN_B)


@kernel(inline=True)
def _kick(bodies, state, world, body, grad, column, impulse):
    """v += P dg/dx / m,  L += P dg/dtheta for an impulse P along one body's gradient columns."""
    if body < 0:
        return
    for i in range(3):
        state.vel[world, body, i] += impulse * grad[column + i] * bodies.inv_mass[body]
        state.momentum[world, body, i] += impulse * grad[column + 3 + i]


@kernel(inline=True)
def apply_impulse(bodies, state, world, a, b, grad, impulse):
    """Apply the impulse ``impulse`` (N s, or N m s for angular rows) along the gradient ``grad`` to a and b."""
    _kick(bodies, state, world, a, grad, LIN_A, impulse)
    _kick(bodies, state, world, b, grad, LIN_B, impulse)


@kernel(inline=True)
def redrift(bodies, state, world, body, h, work):
    """Drift ``body`` again from the start of the step with its corrected half-step velocity and momentum:
    c = c_n + h v_half, q = free-rotor flow of h seconds from q_n at L_half (the drift of step.drift)."""
    if body < 0:
        return
    for i in range(3):
        state.com[world, body, i] = work.com0[body, i] + h * state.vel[world, body, i]
    for i in range(4):
        state.quat[world, body, i] = work.quat0[body, i]
    free_rotor_drift(state.quat[world, body], bodies.inv_inertia[body], state.momentum[world, body], h)


@kernel(inline=True)
def is_damper(rows, r):
    """Whether row r is a damper row (a coordinate's damping or armature: ``Rows.damping``, ``Rows.armature``), not
    a constraint."""
    return rows.damping[r] > 0.0 or rows.armature[r] > 0.0


@kernel(inline=True)
def damper_compliance(rows, r, h, work):
    """Set the compliance c = 4 / (h d + 4 a) (m/s per N s or rad/s per N m s) and the start rates' weights
    h d / (h d + 4 a), -4 a / (h d + 4 a) of damper row r, of damping d (N s/m or N m s/rad) and armature a (kg or
    kg m^2), in a step of h seconds, into ``work`` (c = 0 when d (or h) and a are 0: no damper acts; over h = 0 only
    the armature acts, an impulse that keeps the coordinate's momentum, ``step.start_on_rows``). Over a
    half-step the trapezoidal rule gives the force -d G v the impulse -(h/4) d (G v_start + G v_end), and the
    armature's force -a d(G v)/dt the impulse -a (G v_end - G v_start'): their sum P is the soft row
    G v_end + c P + (h d G v_start - 4 a G v_start') / (h d + 4 a) = 0, linear in the end velocity, so it is solved
    exactly with the other rows (SHAKE over the opening half-step, the velocity projection over the closing one).
    The armature is the coordinate's own inertia (MuJoCo adds it to the joint-space inertia's diagonal; a force
    -a q'' along the coordinate's gradient G is exactly that): its impulses telescope, -a (q'_{n+1} - q'_n) over a
    step, as each half starts from the rate the last one ended with (``Workspace.armature_start``): the closing half
    from the opening half's chord rate (``_damper_residual``), not G(q_{n+1}) v_half, which differs from it by about
    h v^T H v / 2 (H the Hessian of q; nonzero where the hinge's axis turns). Each half is A-stable for the damping: it
    multiplies a damped velocity by (1 - h d / 4m) / (1 + h d / 4m), where an explicit half multiplies it by
    1 - h d / 2m, of magnitude 1 and more once h d >= 4m (a 50 g finger pad on 20 N s/m at 10 ms)."""
    damping, armature = rows.damping[r], rows.armature[r]
    acts = (h > 0.0 and damping > 0.0) or armature > 0.0
    work.compliance[r] = 4.0 / (h * damping + 4.0 * armature) if acts else 0.0
    work.damper_weight[r] = h * damping / (h * damping + 4.0 * armature) if acts else 0.0
    work.armature_weight[r] = -4.0 * armature / (h * damping + 4.0 * armature) if acts else 0.0


@kernel(inline=True)
def _damper_start(work, r):
    """The start term of damper row r's soft row (``damper_compliance``), m/s or rad/s."""
    return work.damper_weight[r] * work.damper_start[r] + work.armature_weight[r] * work.armature_start[r]


@kernel(inline=True)
def begin_step(rows, bodies, state, world, h, work):
    """At the start of the step, before the opening kick: store c_n, q_n, v_n, L_n, the start-of-step values g(q_n)
    and gradients G(q_n), and each damper row's rate G(q_n) v_n and compliance (``damper_compliance``), which
    SHAKE's opening half of the damping starts from. g, G and W at q_n are the last velocity projection's where the
    poses have not moved since (``Workspace.projection_value``). The impulses and chord rates of the previous step
    stay in ``work`` as the warm start of this one (zero them when the state jumps, e.g. on reset)."""
    for body in range(work.com0.shape[0]):
        copy_into(state.com[world, body], work.com0[body])
        copy_into(state.quat[world, body], work.quat0[body])
        copy_into(state.vel[world, body], work.vel0[body])
        copy_into(state.momentum[world, body], work.momentum0[body])
    if work.held[0] == HELD_PROJECTION and work.held[1] == world:
        for body in range(work.spin0.shape[0]):
            copy_into(work.spin[body], work.spin0[body])
        for r in range(rows.kind.size):
            work.start_value[r] = work.projection_value[r]
            copy_into(work.gradient[r], work.start_gradient[r])
    else:
        take_spins(bodies, work.quat0, work.spin0)
        for r in range(rows.kind.size):
            work.start_value[r] = evaluate_row(rows, r, state, world, work.start_gradient[r])
    for r in range(rows.kind.size):
        damper_compliance(rows, r, h, work)
        if is_damper(rows, r):
            work.damper_start[r] = work.armature_start[r] = _start_rate(rows, state, world, r, work)


@kernel(inline=True)
def _worse(worst, error):
    """max(worst, error), with NaN winning (a non-finite error never counts as converged)."""
    return error if not error <= worst else worst


@kernel(inline=True)
def _acting_error(sense, value, total):
    """|value| when the row acts: always for an equality row; for a one-sided row while it pushes (total
    multiplier != 0, so it must hold or release) or is violated (sense * value < 0); else 0 (slack)."""
    if sense == EQUALITY or total != 0.0 or sense * value < 0.0:
        return abs(value)
    return 0.0


@kernel(inline=True)
def _damper_error(value, stored, start):
    """The error of a damper row's residual ``value`` = G v + ``stored`` + ``start`` (stored = c P, start =
    G v_start; in SHAKE all three times h): |value| beyond its round-off (``DAMPER_ROUNDING``)."""
    return max(0.0, abs(value) - DAMPER_ROUNDING * (abs(stored) + abs(start)))


@kernel(inline=True)
def take_spins(bodies, quats, out):
    """out[b] = body b's world inverse inertia at the orientation ``quats[b]`` (``state.world_inverse_inertia``)."""
    for body in range(out.shape[0]):
        world_inverse_inertia(quats[body], bodies.inv_inertia[body], out[body])


@kernel(inline=True)
def _mobility(bodies, spin, rows, r, grad, out):
    """out (12,) = W grad^T: the velocity change (per unit impulse along ``grad``) of row r's bodies, dg/dx / m
    on the linear columns and R diag(1/I) R^T dg/dtheta on the angular ones (W at the orientations whose world
    inverse inertias ``spin`` (B, 6) holds)."""
    for body, column in ((rows.body_a[r], LIN_A), (rows.body_b[r], LIN_B)):
        if body < 0:
            for i in range(6):
                out[column + i] = 0.0
            continue
        for i in range(3):
            out[column + i] = grad[column + i] * bodies.inv_mass[body]
        out[column + 3], out[column + 4], out[column + 5] = tensor_spin(spin[body], grad[column + 3],
                                                                         grad[column + 4], grad[column + 5])


@kernel
def take_mobilities(rows, bodies, spin, gradient, mobility):
    """mobility[r] = W G_r^T (``_mobility``) of every row r from its gradient ``gradient[r]``, W at the orientations
    of ``spin`` (B, 6)."""
    for r in range(rows.kind.size):
        _mobility(bodies, spin, rows, r, gradient[r], mobility[r])


@kernel
def _dot6(left, i, left_column, right, j, right_column):
    """left[i, left_column:+6] . right[j, right_column:+6] (one body's columns of two 12-number rows)."""
    total = 0.0
    for k in range(6):
        total += left[i, left_column + k] * right[j, right_column + k]
    return total


@kernel(inline=True)
def shared_dot(a_i, b_i, left, i, a_j, b_j, right, j):
    """left[i] . right[j] over the bodies that the pairs (a_i, b_i) of row i and (a_j, b_j) of row j share: for
    each, its 6 columns of the two 12-number rows (the world, -1, is no body). With ``right`` the rows' W D^T
    (``mobility``): G_i W D_j^T, the change of row i's rate per unit impulse along D_j."""
    total = 0.0
    for body, column in ((a_i, LIN_A), (b_i, LIN_B)):
        if body < 0:
            continue
        if body == a_j:
            total += _dot6(left, i, column, right, j, LIN_A)
        elif body == b_j:
            total += _dot6(left, i, column, right, j, LIN_B)
    return total


@kernel(inline=True)
def _shared_coupling(rows, gradient, i, mobility, j):
    """G_i W D_j^T of two rows (``shared_dot``) from their gradients ``gradient`` and W D^T ``mobility``."""
    return shared_dot(rows.body_a[i], rows.body_b[i], gradient, i, rows.body_a[j], rows.body_b[j], mobility, j)


@kernel(inline=True)
def _assemble(rows, gradient, work):
    """work.matrix[i, j] = G_i W D_j^T over the rows taking part (``work.active``), with G the rows' gradients in
    ``gradient`` (R, 12) and W D^T in ``work.mobility``: the change of the residual of row i per unit impulse along
    row j (K, dense; rows with no body in common couple by 0). Forgets the factored set."""
    count = rows.kind.size
    for i in range(count):
        if not work.active[i]:
            continue
        for j in range(count):
            if work.active[j]:
                work.matrix[i, j] = _shared_coupling(rows, gradient, i, work.mobility, j)
    work.sizes[0] = -1


@kernel(inline=True)
def _initial_set(sense, active, residual, total, member):
    """The rows solved as equalities first (``member``): every equality row taking part (``active``), and
    each one-sided one that pushes (total != 0) or is violated (sense * residual < 0)."""
    for r in range(sense.size):
        member[r] = active[r] and (sense[r] == EQUALITY or total[r] != 0.0 or sense[r] * residual[r] < 0.0)


@kernel(inline=True)
def _factor_set(member, matrix, factored, order, pivot, pivot_column, diagonal, sizes):
    """Gather K (``matrix``) over the member rows, in row order (``order``), into ``factored`` and LU-factor
    it, unless that set is factored already (``sizes``: its row count, -1 for none, and rank). Returns
    (member count m, rank)."""
    m = 0
    same = sizes[0] >= 0
    for r in range(member.size):
        if member[r]:
            same = same and m < sizes[0] and order[m] == r
            order[m] = r
            m += 1
    if same and m == sizes[0]:
        return m, sizes[1]
    for k in range(m):
        for col in range(m):
            factored[k, col] = matrix[order[k], order[col]]
    sizes[0], sizes[1] = m, lu_factor(factored, m, pivot, pivot_column, diagonal)
    return m, sizes[1]


@kernel(inline=True)
def _solve_set(work, total):
    """work.delta: the multiplier changes that zero the linearised residual of every member row, r_i +
    sum_j K_ij delta_j = 0, while each released row (one-sided, taking part, not a member, total != 0) drops
    its multiplier to 0 (delta = -total) and every other row keeps it (delta = 0)."""
    active, member, delta, matrix, order, rhs = work.active, work.member, work.delta, work.matrix, work.order, work.rhs
    residual = work.residual
    m, rank = _factor_set(member, matrix, work.factored, order, work.pivot, work.pivot_column, work.diagonal,
                          work.sizes)
    released = False
    for r in range(delta.size):
        delta[r] = -total[r] if active[r] and not member[r] else 0.0
        released = released or delta[r] != 0.0
    for k in range(m):
        row = order[k]
        value = -residual[row]
        if released:
            for r in range(delta.size):
                if delta[r] != 0.0:  # (the matrix entries of rows not taking part are stale)
                    value -= matrix[row, r] * delta[r]
        rhs[k] = value
    lu_solve(work.factored, m, rank, work.pivot, work.pivot_column, rhs)
    for k in range(m):
        delta[order[k]] = rhs[k]


@kernel(inline=True)
def _update_set(sense, active, member, residual, delta, matrix, total, threshold):
    """Complementarity of the one-sided rows after ``_solve_set``: members whose multiplier would pull
    (sense * (total + delta) < 0) leave the set; if none does, the non-members that would end violated
    (sense * (r_i + sum_j K_ij delta_j) < -threshold) join it. Returns whether the set changed."""
    changed = False
    for r in range(sense.size):
        if member[r] and sense[r] != EQUALITY and sense[r] * (total[r] + delta[r]) < 0.0:
            member[r] = False
            changed = True
    if changed:
        return True
    for r in range(sense.size):
        if not active[r] or member[r] or sense[r] == EQUALITY:
            continue
        predicted = residual[r]
        for j in range(sense.size):
            if delta[j] != 0.0:
                predicted += matrix[r, j] * delta[j]
        if sense[r] * predicted < -threshold:
            member[r] = True
            changed = True
    return changed


@kernel(inline=True)
def _solve_pass(rows, work, total, threshold):
    """One linearised solve of the rows taking part for the residuals ``work.residual`` and the accumulated
    multipliers ``total``, into ``work.delta``: the equality rows exactly (r + K delta = 0), the one-sided
    rows by an active set (each either held, r_i + (K delta)_i = 0 with sense * (total + delta) >= 0, or
    released, total + delta = 0 with sense * (r_i + (K delta)_i) >= -threshold). The set starts from
    ``_initial_set`` and changes until complementarity holds, at most once per row (a cycling set stops
    there; the caller's next pass goes on from the state it left)."""
    sense, active, member, residual, delta = rows.sense, work.active, work.member, work.residual, work.delta
    _initial_set(sense, active, residual, total, member)
    for _ in range(sense.size + 1):
        _solve_set(work, total)
        if not _update_set(sense, active, member, residual, delta, work.matrix, total, threshold):
            return


# ---- SHAKE -------------------------------------------------------------------------------------------------


@kernel(inline=True)
def _apply_shake(rows, bodies, state, world, h, work):
    """Add the impulses work.delta (N s, N m s) to ``work.impulse_position`` and apply them along G(q_n) to the
    half-step (v, L), then re-drift each body that received one, once."""
    for r in range(rows.kind.size):
        impulse = work.delta[r]
        if impulse == 0.0:
            continue
        a, b = rows.body_a[r], rows.body_b[r]
        work.impulse_position[r] += impulse
        apply_impulse(bodies, state, world, a, b, work.start_gradient[r], impulse)
        for body in (a, b):
            if body >= 0:
                work.kicked[body] = True
    for body in range(work.kicked.size):
        if work.kicked[body]:
            redrift(bodies, state, world, body, h, work)
            work.kicked[body] = False


@kernel(inline=True)
def _prepare_shake(rows, bodies, state, world, gradient, work):
    """The quasi-Newton matrix of this step's SHAKE divided by h, K = G W G0^T with G the rows' gradients in
    ``gradient`` (R, 12) and W at the current orientations (G0 and q_n themselves in ``predict_shake``; an iterate's
    in ``shake``), over every row that can move a body (``work.active``: G0 W G0^T > 0), a damper row with c on its
    diagonal (``_damper_residual``). K itself is not symmetric and its diagonal may be negative: a
    row whose gradient turns through a sign change of its angular part within the step (the radial row of a
    point-like bob on a hinge as the rod crosses that row's axis) couples to itself as
    1/m + L^2 sin(theta) sin(theta_0) / I, negative when I << m L^2."""
    forget_matrix(work)
    take_spins(bodies, state.quat[world], work.spin)
    for r in range(rows.kind.size):
        _mobility(bodies, work.spin, rows, r, work.start_gradient[r], work.mobility[r])
        work.active[r] = _shared_coupling(rows, work.start_gradient, r, work.mobility, r) > 0.0
    _assemble(rows, gradient, work)
    for r in range(rows.kind.size):
        if work.active[r]:
            work.matrix[r, r] += work.compliance[r]


@kernel(inline=True)
def _join_movable_rows(rows, work):
    """Extend the velocity projection's K that ``work`` holds (HELD_PROJECTION: at the current poses, its
    gradients and W G^T in ``work.gradient`` and ``work.mobility``) to every row that can move a body (G W G^T > 0,
    ``work.active`` as ``_prepare_shake`` sets it): the rows it left out (one-sided rows that did not act) get
    their entries G_i W G_j^T; the rest of K and its factored set stand."""
    for r in range(rows.kind.size):
        work.member[r] = not work.active[r] and _shared_coupling(rows, work.gradient, r, work.mobility, r) > 0.0
    for r in range(rows.kind.size):
        if not work.member[r]:
            continue
        work.active[r] = True
        for j in range(rows.kind.size):
            if work.active[j] or work.member[j]:
                work.matrix[r, j] = _shared_coupling(rows, work.gradient, r, work.mobility, j)
                work.matrix[j, r] = _shared_coupling(rows, work.gradient, j, work.mobility, r)


@kernel
def _damper_residual(rows, bodies, state, world, h, work, r, drifted):
    """SHAKE's residual of damper row r (m): h (G0 v + c P + G0 v_n), its soft row over the opening half-step
    (``damper_compliance``) times h, at the current half-step velocity v (angular at q_n) with P its impulse
    so far; its gradient ``work.gradient[r]`` is set to G0, the direction its impulse acts along, so that
    ``_assemble`` takes its exact coupling h G0 W G0^T. An armature's rate is, once the poses have drifted
    (``drifted``: SHAKE's iterates), the chord rate (g(q) - g(q_n)) / h (kept in ``work.armature_chord``, where the
    closing half goes on from: ``start_damper_rates``), before it (``predict_shake``) its linear prediction G0 v: so the
    armature's rate is the coordinate's own over each half, and its impulses take the coordinate's acceleration
    whole, its centripetal part v^T H v included, half in each half-step (second order)."""
    rate = _start_rate(rows, state, world, r, work)
    if drifted and rows.armature[r] > 0.0:
        chord = evaluate_row(rows, r, state, world, work.gradient[r]) - work.start_value[r]
        if rows.kind[r] == ANGLE:
            chord -= 2.0 * math.pi * round(chord / (2.0 * math.pi))
        work.armature_chord[r] = chord / h
        rate = work.damper_weight[r] * rate - work.armature_weight[r] * work.armature_chord[r]
    copy_into(work.start_gradient[r], work.gradient[r])
    return h * (rate + work.compliance[r] * work.impulse_position[r] + _damper_start(work, r))


@kernel(inline=True)
def _position_residuals(rows, bodies, state, world, h, work):
    """g and G of every row at the current poses (``work.residual``, ``work.gradient``; a damper's residual
    and gradient are ``_damper_residual``'s); returns the largest error of the rows that act (``_acting_error``
    against ``work.impulse_position``)."""
    worst = 0.0
    for r in range(rows.kind.size):
        if is_damper(rows, r):
            value = _damper_residual(rows, bodies, state, world, h, work, r, True)
            error = _damper_error(value, h * work.compliance[r] * work.impulse_position[r],
                                  h * _damper_start(work, r))
        else:
            value = evaluate_row(rows, r, state, world, work.gradient[r])
            error = _acting_error(rows.sense[r], value, work.impulse_position[r])
        work.residual[r] = value
        worst = _worse(worst, error)
    return worst


@kernel(inline=True)
def predict_shake(rows, bodies, solver, state, world, h, work):
    """SHAKE's first iterate, taken before the drift (after ``begin_step``): impulses lambda along G0 = G(q_n)
    on the half-step (v, L) that make the drift's linear prediction of every row that acts meet its aim,
        g(q_n) + h G0 (v + W G0^T lambda) = h chord_rate,   i.e.  K0 lambda = -(g(q_n) + h G0 v - h chord_rate),
    K0 = h G0 W G0^T at q_n, with the previous step's chord rates (``Workspace.chord_rate``: the drift is a
    straight line, so a bob on a rod of length l leaves its circle by about h^2 v^2 / 2l, and the chord rate is
    the inward rate that makes up for it). One linear solve: whatever the opening kick asks of the rows this
    step (a servo's new target, a contact's reaction on a jointed body) is taken whole, however much it changed
    since the previous step, and the iteration is left only the change of the curvature, O(h) of it. Equality
    rows always; one-sided rows by the active set (``_solve_pass``), taking part where the prediction would
    violate them; each damper row by its soft row (``_damper_residual``, linear: met exactly here). RATTLE's

    The system is solved divided by h, (G0 W G0^T + c) lambda = -(g(q_n)/h + G0 v - chord_rate), whose matrix is
    the velocity projection's at the same poses: the previous step's, while ``work`` holds it
    (HELD_PROJECTION: the same world and h, the poses unmoved since), is taken up with its factored set
    (``_join_movable_rows``) instead of being assembled and factored again."""
    _take_omegas(work.spin0, state, world, work.omega)
    for r in range(rows.kind.size):
        work.impulse_position[r] = 0.0
        if is_damper(rows, r):
            work.residual[r] = _damper_residual(rows, bodies, state, world, h, work, r, False) / h
        else:
            rate = _rate_from(rows, state, world, r, work.start_gradient[r], work.omega)
            work.residual[r] = work.start_value[r] / h + rate - work.chord_rate[r]
    if _holds(work, HELD_PROJECTION, world, h):
        _join_movable_rows(rows, work)
    else:
        _prepare_shake(rows, bodies, state, world, work.start_gradient, work)
    forget_matrix(work)
    _solve_pass(rows, work, work.impulse_position, solver.tolerance / h)
    for r in range(rows.kind.size):
        if work.delta[r] != 0.0:
            work.impulse_position[r] = work.delta[r]
            apply_impulse(bodies, state, world, rows.body_a[r], rows.body_b[r], work.start_gradient[r],
                          work.delta[r])


@kernel(inline=True)
def _keep_chord_rates(rows, bodies, state, world, h, work):
    """After SHAKE has met every row: ``work.chord_rate`` = G0 v_half + g(q_n)/h of each row that acts (an
    equality row, or a one-sided row with an impulse), 0 for the others (``Workspace.chord_rate``)."""
    _take_omegas(work.spin0, state, world, work.omega)
    for r in range(rows.kind.size):
        acted = not is_damper(rows, r) and (rows.sense[r] == EQUALITY or work.impulse_position[r] != 0.0)
        work.chord_rate[r] = 0.0
        if acted:
            rate = _rate_from(rows, state, world, r, work.start_gradient[r], work.omega)
            work.chord_rate[r] = rate + work.start_value[r] / h


@kernel(inline=True)
def shake(rows, bodies, solver, state, world, h, work):
    """Project the drifted poses of world ``world`` back onto the rows (after step.drift, before the
    closing kick) and correct the half-step velocities and momenta to match. ``begin_step`` and
    ``predict_shake`` must have run before the drift. Returns the number of iterations (sweeps) used, or -1
    if the tolerance was not met in ``solver.max_sweeps`` of them (or the poses are not finite).

    The multipliers lambda (N s per row) act as impulses lambda G0 on the half-step (v, L); the bodies drift
    again from (c_n, q_n), so g(lambda) = g(q(lambda)) is nonlinear. RATTLE solves g(lambda) = 0 by a
    quasi-Newton iteration on all rows at once:
        delta = -K^{-1} g(q),  K = h G W G0^T  (the derivative dg/dlambda: dc/dlambda = h G0_x^T / m exactly,
                                                 dtheta/dlambda = h W G0_theta^T to O(h |omega|)),
    solved divided by h (as ``predict_shake``'s system), with G and W taken once, at the first iterate (after the
    drift), and K LU-factored once (again only when the active set of one-sided rows changes, see
    ``_solve_pass``, or when an iteration gains less than SLOW_GAIN). K misses the true derivative by O(h |omega|)
    (the turn of G and W over the iterations, and the free-rotor flow's curvature), so each iteration gains about
    that factor: a few iterations from the predicted start. The error of an iterate is the largest |g| over the
    equality rows and the one-sided rows that act (``_acting_error``); the projection has converged when that is
    at most ``solver.tolerance``.

    The iteration goes on from ``predict_shake``'s first iterate (run before the drift); the converged poses do
    not depend on it, only the iteration count does."""
    previous = math.inf
    for iteration in range(solver.max_sweeps):
        worst = _position_residuals(rows, bodies, state, world, h, work)
        if worst <= solver.tolerance:
            _keep_chord_rates(rows, bodies, state, world, h, work)
            return iteration + 1
        if iteration == 0 or worst > SLOW_GAIN * previous:
            _prepare_shake(rows, bodies, state, world, work.gradient, work)
        previous = worst
        for r in range(rows.kind.size):
            work.residual[r] /= h  # (the solve's unit, as predict_shake's)
        _solve_pass(rows, work, work.impulse_position, solver.tolerance / h)
        _apply_shake(rows, bodies, state, world, h, work)
    return -1


# ---- Velocity projection -----------------------------------------------------------------------------------


@kernel
def _body_rate(bodies, quat, state, world, body, grad, column, omega):
    """dg/dt contribution of one body: dg/dx . v + dg/dtheta . w (w = R diag(1/I) R^T L, R the rotation of
    the principal frame ``quat`` (4,))."""
    if body < 0:
        return 0.0
    inv, momentum = bodies.inv_inertia, state.momentum
    omega[0], omega[1], omega[2] = world_spin(quat[0], quat[1], quat[2], quat[3], inv[body, 0], inv[body, 1],
                                              inv[body, 2], momentum[world, body, 0], momentum[world, body, 1],
                                              momentum[world, body, 2])
    return _velocity_rate(state, world, body, grad, column, omega)


@kernel(inline=True)
def _velocity_rate(state, world, body, grad, column, omega):
    """dg/dx . v + dg/dtheta . w of one body's 6 gradient columns from ``column``, w = ``omega`` (3 numbers)."""
    total = 0.0
    for i in range(3):
        total += grad[column + i] * state.vel[world, body, i] + grad[column + 3 + i] * omega[i]
    return total


@kernel
def row_rate(rows, bodies, state, world, r, grad, omega):
    """dg/dt = G v of row r for the gradient ``grad`` (m/s or rad/s); ``omega`` (3,) scratch."""
    a, b = rows.body_a[r], rows.body_b[r]
    return (_body_rate(bodies, state.quat[world, a], state, world, a, grad, LIN_A, omega)
            + _body_rate(bodies, state.quat[world, b], state, world, b, grad, LIN_B, omega))


@kernel(inline=True)
def _spin_rate(spin, state, world, body, grad, column):
    """dg/dt contribution of one body (``_body_rate``) with its world inverse inertia from ``spin`` (B, 6)."""
    if body < 0:
        return 0.0
    momentum = state.momentum[world, body]
    return _velocity_rate(state, world, body, grad, column,
                          tensor_spin(spin[body], momentum[0], momentum[1], momentum[2]))


@kernel(inline=True)
def _take_omegas(spin, state, world, omega):
    """omega (B, 3) = each body's world angular velocity W L (rad/s) from the world inverse inertias ``spin`` (B, 6)
    and the current momenta: taken once a body for a batch of rates (``_omega_rate``)."""
    for body in range(omega.shape[0]):
        momentum = state.momentum[world, body]
        omega[body, 0], omega[body, 1], omega[body, 2] = tensor_spin(spin[body], momentum[0], momentum[1], momentum[2])


@kernel(inline=True)
def _rate_from(rows, state, world, r, grad, omega):
    """G v of row r for the gradient ``grad`` (m/s or rad/s), the angular velocities from ``omega`` (B, 3)
    (``_take_omegas``): ``rate_with``'s value, with each body's W L taken once."""
    return (_omega_rate(state, world, rows.body_a[r], grad, LIN_A, omega)
            + _omega_rate(state, world, rows.body_b[r], grad, LIN_B, omega))


@kernel(inline=True)
def _omega_rate(state, world, body, grad, column, omega):
    """dg/dt contribution of one body (``_body_rate``) with its world angular velocity from ``omega`` (B, 3)."""
    if body < 0:
        return 0.0
    return _velocity_rate(state, world, body, grad, column, omega[body])


@kernel(inline=True)
def rate_with(rows, spin, state, world, r, grad):
    """G v of row r for the gradient ``grad`` (m/s or rad/s), the angular velocities from the world inverse
    inertias ``spin`` (B, 6) (``take_spins``: ``Workspace.spin``, ``Workspace.spin0``, the contact solve's
    ``contact.Scratch.spin``). ``rows``: constraint rows, or the contacts (their bodies in the same fields)."""
    return (_spin_rate(spin, state, world, rows.body_a[r], grad, LIN_A)
            + _spin_rate(spin, state, world, rows.body_b[r], grad, LIN_B))


@kernel
def _start_rate(rows, state, world, r, work):
    """G(q_n) v of row r: its start gradient (``begin_step``) at the current velocities, the angular ones
    taken at the start orientations q_n (m/s or rad/s)."""
    return rate_with(rows, work.spin0, state, world, r, work.start_gradient[r])


@kernel
def project_velocity(rows, bodies, solver, state, world, h, work):
    """After the closing kick: remove the velocity along the constraints at the new poses, G(q_{n+1}) v = 0
    for the active rows, with impulses P along G. The problem is linear: the equality rows are solved exactly
    by one LU solve of K = G W G^T; one-sided rows take part when touching or violated (sense * g <=
    tolerance) or pushed in this step's SHAKE, and then satisfy sense * G v >= 0, sense * P >= 0,
    (G v) P = 0 (active set, see ``_solve_pass``). The previous step's impulses are the warm start. Returns
    the passes used (the last one only checks the residual: 2 after an exact solve), or -1 if not converged, not
    even to the rates' round-off (``rates_at_round_off``, asked after the last pass).
    (``begin_projection`` then ``projection_sweep`` until it returns no more than
    ``solver.velocity_tolerance``: solved together with contacts, each pass is interleaved with a contact
    sweep, a block Gauss-Seidel between the rows, solved together, and the contacts.) Dampers act over the
    closing half-step h/2 (``begin_projection``)."""
    begin_projection(rows, bodies, solver, state, world, 0.5 * h, work)
    for sweep in range(solver.max_sweeps):
        if projection_sweep(rows, bodies, state, world, work) <= solver.velocity_tolerance:
            return sweep + 1
    return solver.max_sweeps if rates_at_round_off(rows, state, world, work) else -1


@kernel
def rates_at_round_off(rows, state, world, work):
    """Whether every acting row's rate error (``projection_sweep``'s, at the current velocities) is within the
    velocity tolerance once its round-off is allowed for (``_within_round_off``). Asked only after all of
    ``project_velocity``'s passes, so that a projection that converges never asks."""
    _take_omegas(work.spin, state, world, work.omega)
    return _within_round_off(rows, state, world, work)


@kernel
def _within_round_off(rows, state, world, work):
    """Whether every acting row's rate error at the current velocities (the angular ones in ``work.omega``) is
    within the velocity tolerance once its round-off is allowed for: RATE_ROUNDING of the sum of |G_i v_i| over the
    rate's terms, which can be far larger than the rate (a light link spun by a motor at 800 rad/s: terms of
    800 rad/s, round-off 2e-13 rad/s, above the tolerance of 1e-13 that the passes then cannot meet)."""
    for r in range(rows.kind.size):
        if not work.active[r]:
            continue
        error = _velocity_residual(rows, state, world, work, r)[1]
        allowed = RATE_ROUNDING * _rate_size(rows, state, world, r, work.gradient[r], work.omega)
        if not error - allowed <= work.threshold[0]:
            return False
    return True


@kernel(inline=True)
def _velocity_residual(rows, state, world, work, r):
    """(residual, error) of active row r in the velocity projection at the current velocities, the angular ones in
    ``work.omega`` (``_take_omegas``): the residual is G v, for a damper G v + c P + G v_half; the error is
    ``_damper_error``'s or ``_acting_error``'s (m/s or rad/s)."""
    rate = _rate_from(rows, state, world, r, work.gradient[r], work.omega)
    if work.compliance[r] > 0.0:
        stored = work.compliance[r] * work.impulse_velocity[r]
        start = _damper_start(work, r)
        rate += stored + start
        return rate, _damper_error(rate, stored, start)
    return rate, _acting_error(rows.sense[r], rate, work.impulse_velocity[r])


@kernel(inline=True)
def _rate_size(rows, state, world, r, grad, omega):
    """sum |G_i v_i| over the terms of row r's rate G v (m/s or rad/s; ``_rate_from``'s, omega (B, 3))."""
    total = 0.0
    for body, column in ((rows.body_a[r], LIN_A), (rows.body_b[r], LIN_B)):
        if body >= 0:
            for i in range(3):
                total += abs(grad[column + i] * state.vel[world, body, i]) + abs(grad[column + 3 + i] * omega[body, i])
    return total


@kernel(inline=True)
def start_damper_rates(rows, bodies, state, world, work, after_shake):
    """Each damper row's rates G v where a velocity-level solve over the next half-step starts (``begin_projection``):
    ``work.damper_start``, its damping's, at the current poses and velocities; ``work.armature_start``, its armature's
    (``damper_compliance``), the same, except ``after_shake``: before the closing kick, where the damping starts from
    G(q_{n+1}) v_half at what SHAKE and the contacts' position correction left, the armature goes on from the chord
    rate that SHAKE's opening half left it at (``_damper_residual``; in the resting reactions' trial of the next
    opening half-step, ``contact.solve``, both are the current rates)."""
    for r in range(rows.kind.size):
        if is_damper(rows, r):
            evaluate_row(rows, r, state, world, work.gradient[r])
            work.damper_start[r] = row_rate(rows, bodies, state, world, r, work.gradient[r], work.vectors[0])
            work.armature_start[r] = work.armature_chord[r] if after_shake else work.damper_start[r]


@kernel(inline=True)
def begin_projection(rows, bodies, solver, state, world, half, work):
    """Set up the velocity projection at the current poses: each row's gradient G(q_{n+1}), W G^T and the
    matrix K = G W G^T, which rows take part (``work.active``, see ``project_velocity``), and the warm start:
    the previous step's impulse of each active row applied along its gradient (inactive rows start from
    zero).

    A damper row (damping d > 0) acts over the ``half`` seconds (s) of the closing kick by the trapezoidal
    rule, P = -(half/2) d (G v_half + G v') (``damper_compliance``, G v_half from ``start_damper_rates``): the soft
    row G v' + c P + G v_half = 0 with c on K's diagonal. Being linear in v', it is solved exactly with the
    other rows and the contacts, where a fixed-point iteration around the whole projection would contract by
    half d / m only (and not at all once that reaches 1). With ``half`` = 0 no damper acts.

    K is a function of the poses, ``half`` and the rows taking part: where ``work`` holds the projection's K for the
    same world and ``half`` (HELD_PROJECTION: the poses unmoved since) over the same rows (a step's resting trial
    after its closing solve), it stands, with its factored set."""
    held = _holds(work, HELD_PROJECTION, world, 2.0 * half)
    take_spins(bodies, state.quat[world], work.spin)
    for r in range(rows.kind.size):
        grad = work.gradient[r]
        value = work.projection_value[r] = evaluate_row(rows, r, state, world, grad)
        _mobility(bodies, work.spin, rows, r, grad, work.mobility[r])
        damper_compliance(rows, r, 2.0 * half, work)
        acting = work.compliance[r] > 0.0 if is_damper(rows, r) else (
            rows.sense[r] == EQUALITY or rows.sense[r] * value <= solver.tolerance or work.impulse_position[r] != 0.0)
        active = acting and _shared_coupling(rows, work.gradient, r, work.mobility, r) > 0.0
        held = held and active == work.active[r]
        work.active[r] = active
        # Warm start from the previous step's impulse of an active row (its sign is already allowed).
        guess = work.impulse_velocity[r] if active else 0.0
        work.impulse_velocity[r] = guess
        apply_impulse(bodies, state, world, rows.body_a[r], rows.body_b[r], grad, guess)
    if not held:
        _assemble(rows, work.gradient, work)
        for r in range(rows.kind.size):
            if work.active[r]:
                work.matrix[r, r] += work.compliance[r]
    work.threshold[0] = solver.velocity_tolerance
    _hold(work, HELD_PROJECTION, world, 2.0 * half)


@kernel(inline=True)
def projection_sweep(rows, bodies, state, world, work):
    """One pass of the velocity projection (after ``begin_projection``): the rates G v of the active rows at
    the current velocities, then, unless they already meet the tolerance, one ``_solve_pass`` (exact for the
    equality rows) whose impulses are added to ``work.impulse_velocity`` and applied. Returns the largest
    |G v| it met over the rows that act (m/s or rad/s; a damper's residual is G v + c P + G v_half): converged
    when that is below ``solver.velocity_tolerance``. Before it corrects, whether the rates were within their
    round-off goes into ``work.at_round_off`` (``_within_round_off``): the contact solve, whose contacts have
    converged, accepts rows that were (after the correction, the rows always are; the contacts may not be)."""
    worst = 0.0
    _take_omegas(work.spin, state, world, work.omega)
    for r in range(rows.kind.size):
        if work.active[r]:
            residual, error = _velocity_residual(rows, state, world, work, r)
            work.residual[r] = residual
            worst = _worse(worst, error)
    if worst <= work.threshold[0]:
        return worst
    work.at_round_off[0] = _within_round_off(rows, state, world, work)
    _solve_pass(rows, work, work.impulse_velocity, work.threshold[0])
    for r in range(rows.kind.size):
        if work.delta[r] != 0.0:
            work.impulse_velocity[r] += work.delta[r]
            apply_impulse(bodies, state, world, rows.body_a[r], rows.body_b[r], work.gradient[r], work.delta[r])
    return worst


@kernel
def reaction_forces(state, world, h, out):
    """out[r] = (P_position + P_velocity) / h from the impulses of the last step of world ``world`` (kept in
    ``state``, see ``state.State``): each row's generalised force over the step (N or N m; a rod or rope in
    tension reports -tension)."""
    for r in range(out.size):
        out[r] = (state.impulse_position[world, r] + state.impulse_velocity[world, r]) / h
