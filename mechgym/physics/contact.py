"""Engine III contact solver core: contact rows, impacts, position correction and the velocity-level solve.

Contacts are found after the drift (``find_contacts``) between engine bodies or a body and static geometry,
from the narrow phase of :mod:`mechgym.physics.collision` (points midway between the surfaces, normals
from geom1 to geom2, signed distances, feature ids). Each contact c between body a (geom1's body, -1 for
static geometry) and body b (geom2's) is three RATTLE-style rows in the 12-number gradient format of
:mod:`mechgym.physics.constraints` ([dg/dx_a, dg/dtheta_a, dg/dx_b, dg/dtheta_b], impulses on v and on
the world angular momentum L): for the direction d in {n, t1, t2} (normal and two tangents),

    J_d = [-d, -(r_a x d), d, r_b x d],    J_d v = d . (v_b + w_b x r_b - v_a - w_a x r_a),

with r the lever from each body's centre of mass to the contact point (m). The normal row is an inequality
(impulse P_n >= 0, normal velocity >= 0; impacts: see below); the tangent rows carry Coulomb friction in an exact
circular cone, |P_t| <= mu P_n, decided per point: the impulse that makes the slip zero is kept when it
lies in the static cone |P_t| <= mu_s P_n (stick); a point that static friction cannot hold slides: its
tangential impulse is mu_k P_n opposite the slip (kinetic friction). A contact whose gap exceeds ``TOUCH``
carries no force; the ``MARGIN`` (0.1 mm) only keeps near contacts in the set so that their feature ids
persist.

One step of length h (``step.advance`` runs these among its own stages when the scene has contacts):

  opening kick   v += h/2 (g + F/m)                                               (step.opening_kick)
  warm_start     each contact of the previous step's set applies h/2 of its reaction force F, an
                 impulse along its rows at their (still valid) start-of-step poses          (this module)
  begin_step     store c_n, q_n                                              (constraints.begin_step)
  drift          c += h v_half, q: free-rotor flow                                      (step.drift)
  find_contacts  broad + narrow phase at the drifted pose; fast bodies swept against static geometry
                 first (continuous collision); rows, matching with the previous step (feature ids),
                 impact estimates and the targets of the position and velocity solves      (this module)
  correct_positions  projection of the poses along the start normals onto the gap targets;
                 velocities and momenta are left alone                                    (this module)
  closing kick   v += h/2 (g + F/m)                                                     (step.py)
  solve_contacts projected Gauss-Seidel on the rows to tolerance (impacts: compression, rebound, final
                 inelastic stage); reaction forces                                         (this module)
  settle_impacts after impacts: the resting reactions of the bodies they brought to rest    (this module)

Warm start / rest (seed 000). F_c = (P_open + P_close) / h is the mean reaction over the step of a
persistent contact (one that touched in the previous step too): the impulse of the opening half plus the
closing solve's impulse. Applying h/2 F_c in the next opening kick makes contact forces act like explicit
forces in velocity Verlet: a resting body sees exactly zero net impulse in each half (rest is exact, no
creep on a slope), and a sliding body gets kinetic friction in both halves (second-order distances).
An impact's impulse is not a force and is not carried over: after an impact F is the resting reaction of a
trial solve when the impact brought the bodies to rest, else 0 (``settle_impacts``). At a reset
``prime_contacts`` gives the contacts of the initial poses their resting reactions. Persistence: same geom
pair and feature id, or (a clipping label that changed with round-off) the same point within MATCH_RADIUS.

Impacts (seed 000). A contact found penetrating by d = -dist that did not touch in the previous step is an
impact that happened up to a step ago (unless it approaches no faster than gravity brings a body to rest in
one step, |g| h: then a resting contact forms, e.g. a new clipping point under a resting box). Free
flight is quadratic in time with the relative normal acceleration a_n = n . (g_b - g_a) (g for a moving
body, 0 for static geometry), so the gap a time tau before the end of the step is

    gap(tau) = dist + u_1 tau + a_n tau^2 / 2,

u_1 = u_half - a_n h/2 being the approach speed at the end of the step without contact (u_half = -J_n v_half,
the drift's approach speed). The impact happened tau = -2 dist / (u_1 + sqrt(u_1^2 - 2 a_n dist)) ago (the
root of gap(tau) = 0, in the form that is stable for a_n -> 0), with the approach speed u* = u_1 + a_n tau
(the gravity gained since removed). Had it bounced on time (Newton: normal speed e u* after), it would now
be at the gap  e u* tau + a_n tau^2/2  moving at  e u* + a_n tau  (both clamped at 0: a body that would
already be back stays in contact): the gap is the position correction's target, the speed the impact's
rebound in ``solve_contacts`` (exact for a single point, in Poisson's energy-safe form for several), and the
event (t_1 - tau, geom1, geom2, u*) is recorded. For ballistic flight the bounce is then exact up to
round-off (landing times, apex ratios e^2).

Continuous collision. A body whose step moves it (|v_half| + w_max rho) h by more than ``CCD_FRACTION`` of
the smaller extent of one of its geoms and a static plane or box is swept against that static geometry by
conservative advancement on ``collision.toi_plane``/``toi_box`` (closed-form lower bounds of the time of
impact along the linear drift, rotation bounded by w_max = max(1/I) |L|). If it was separated at the start
of the step and first touches at the fraction s, its contacts with static geometry are taken at the
separated pose at s (normals, points, features), never from the possibly deep overlap after the drift;
their gaps are extrapolated to the end of the drift, dist_end = dist_s + (1 - s) h J_n v_half, and the
position correction then projects the body back along that normal: a 1 mm wall stops a 20 m/s ball.

Arrays (struct of arrays; ``ContactSet`` holds W worlds of C contacts each, contact c of world w at the flat
index w C + c so that constraints' kernels that read ``rows.body_a[r]`` take the set as it is).
Units: m, s, kg; impulses N s (rows), forces N (world vectors).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import mujoco
import numpy as np
from numba import njit

from ..scene import contact_material
from .collision import (
    BOX,
    CAPSULE,
    CYLINDER,
    MAX_CONTACTS,
    PLANE,
    SPHERE,
    collide,
    filter_arrays,
    geom_aabbs,
    sweep_axis,
    sweep_pairs,
    toi_box,
    toi_plane,
)
from .collision.broad import can_collide
from .collision.common import cross
from .collision.toi import rotation_radius
from .constraints import ANG_A, ANG_B, LIN_A, LIN_B, apply_impulse, coupling, row_rate
from .rotation import free_rotor_drift, mul, normalize, rot

MARGIN = 1e-4  # m: contacts closer than this stay in the set (feature ids persist); only touching ones act
TOUCH = 1e-9  # m: a gap up to this (round-off above 0) counts as touching and may carry force
VELOCITY_TOLERANCE = 1e-12  # m/s: the velocity solve stops when a sweep changes no contact velocity by more
POSITION_TOLERANCE = 1e-13  # m: the position correction stops when a sweep moves no gap by more
MAX_SWEEPS = 100000  # of either solve (a cold stack needs thousands); more: not converged, the solves return -1
MATCH_RADIUS = 1e-6  # m: a contact whose feature id changed (same point, new clipping label) continues its predecessor
SATURATED = 1.0 - 1e-9  # a sticking point whose |P_t| reaches this fraction of mu_s P_n is at the static limit
SLIP = 1e-9  # m/s: a point that slips faster than this after the solve slides
CCD_FRACTION = 0.25  # continuous collision when a step moves a body by this fraction of an extent
CCD_ITERATIONS = 64  # conservative advancement steps at most
FILTER_PARENT = True  # MuJoCo's filterparent default


class Geoms(NamedTuple):
    """Per geom (G,) arrays. Geoms of engine bodies are stored relative to the body's principal frame
    (pos: m from the centre of mass, quat: principal <- geom); static geoms by their world pose."""

    type: np.ndarray  # (G,) int64 mjtGeom
    size: np.ndarray  # (G, 3) MuJoCo geom_size, m
    body: np.ndarray  # (G,) int64 engine body, -1 static
    weld: np.ndarray  # (G,) int64 MuJoCo weld body (0 = world), for the broad-phase filter
    parent: np.ndarray  # (G,) int64 the weld body's parent weld body
    contype: np.ndarray  # (G,) int64
    conaffinity: np.ndarray  # (G,) int64
    local_pos: np.ndarray  # (G, 3) m
    local_quat: np.ndarray  # (G, 4)
    restitution: np.ndarray  # (G,) Newton restitution
    static_friction: np.ndarray  # (G,) mu_s
    friction: np.ndarray  # (G,) mu_k (MJCF sliding friction)
    extent: np.ndarray  # (G,) smallest half extent, m (inf for a plane)

    @staticmethod
    def empty() -> Geoms:
        """No geoms (a scene stepped without contacts)."""
        index, value = np.zeros(0, dtype=np.int64), np.zeros(0)
        return Geoms(index, np.zeros((0, 3)), index, index, index, index, index, np.zeros((0, 3)), np.zeros((0, 4)),
                     value, value, value, value)


class ContactSet(NamedTuple):
    """Contacts of W worlds, C per world (flat index w C + c), and the previous step's set for matching.
    ``count[w]`` may exceed C: the contacts beyond C were found but dropped (grow C)."""

    count: np.ndarray  # (W,) int64
    geom1: np.ndarray  # (WC,) int64
    geom2: np.ndarray  # (WC,) int64
    feature: np.ndarray  # (WC,) int64
    body_a: np.ndarray  # (WC,) int64 engine body of geom1 (-1 static)
    body_b: np.ndarray  # (WC,) int64 engine body of geom2 (-1 static)
    point: np.ndarray  # (WC, 3) world contact point, m
    dist: np.ndarray  # (WC,) signed gap at the end of the drift, m (before the position correction)
    rows: np.ndarray  # (WC, 3, 12) gradient rows of n, t1, t2
    coupling: np.ndarray  # (WC, 3, 3) J W J^T, 1/kg
    active: np.ndarray  # (WC,) bool: touching (dist <= TOUCH), takes part in the solves
    impact: np.ndarray  # (WC,) bool: touching now, not in the previous step
    sliding: np.ndarray  # (WC,) bool: kinetic friction (carried over from the previous step while it slips)
    gap_target: np.ndarray  # (WC,) m
    rebound: np.ndarray  # (WC,) an impact's Newton target e u* + a_n tau (>= 0), m/s
    approach: np.ndarray  # (WC,) an impact's approach speed at the end of the step without contact, u_1, m/s
    restitution: np.ndarray  # (WC,)
    static_friction: np.ndarray  # (WC,)
    friction: np.ndarray  # (WC,)
    impulse: np.ndarray  # (WC, 3) closing-solve impulses along the rows, N s
    stage: np.ndarray  # (WC, 3) impulses of the compression and restitution stages of a bounce, N s
    opened: np.ndarray  # (WC, 3) world impulse the opening kick applied for this contact, N s
    force: np.ndarray  # (WC, 3) world reaction force on body b (N), the mean over the step; 0 after impacts
    prev_count: np.ndarray  # (W,) int64
    prev_geom1: np.ndarray  # (WC,) int64
    prev_geom2: np.ndarray  # (WC,) int64
    prev_feature: np.ndarray  # (WC,) int64
    prev_active: np.ndarray  # (WC,) bool
    prev_sliding: np.ndarray  # (WC,) bool
    prev_point: np.ndarray  # (WC, 3) m
    prev_force: np.ndarray  # (WC, 3) N
    event_count: np.ndarray  # (W,) int64: impacts recorded (may exceed E: the later ones are not stored)
    event_time: np.ndarray  # (W, E) s: interpolated instant of the impact
    event_geom: np.ndarray  # (W, E, 2) int64 geom1, geom2
    event_speed: np.ndarray  # (W, E) m/s: normal approach speed at that instant

    def copy(self) -> ContactSet:
        return ContactSet(*(a.copy() for a in self))

    def assign(self, other: ContactSet) -> None:
        """Overwrite this set's arrays in place with ``other``'s values."""
        for mine, theirs in zip(self, other, strict=True):
            mine[...] = theirs

    @staticmethod
    def empty(worlds: int, capacity: int = 64, events: int = 256) -> ContactSet:
        n = worlds * capacity
        index, flag = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.bool_)
        return ContactSet(np.zeros(worlds, dtype=np.int64), index.copy(), index.copy(), index.copy(), index.copy(),
                          index.copy(), np.zeros((n, 3)), np.zeros(n), np.zeros((n, 3, 12)), np.zeros((n, 3, 3)),
                          flag.copy(), flag.copy(), flag.copy(), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n),
                          np.zeros(n), np.zeros(n), np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3)),
                          np.zeros((n, 3)), np.zeros(worlds, dtype=np.int64),
                          index.copy(), index.copy(), index.copy(), flag.copy(), flag.copy(), np.zeros((n, 3)),
                          np.zeros((n, 3)),
                          np.zeros(worlds, dtype=np.int64), np.zeros((worlds, events)),
                          np.zeros((worlds, events, 2), dtype=np.int64), np.zeros((worlds, events)))


class Scratch(NamedTuple):
    """Caller-owned per-step scratch (G geoms, B bodies, C contacts per world, P broad-phase pairs)."""

    pos: np.ndarray  # (G, 3) geom centres, m
    mat: np.ndarray  # (G, 3, 3) geom frames (column j = local axis j)
    lo: np.ndarray  # (G, 3) AABBs, m
    hi: np.ndarray  # (G, 3)
    order: np.ndarray  # (G,) int64 sort-and-sweep order, kept between steps
    axis: np.ndarray  # (1,) int64 sweep axis
    pairs: np.ndarray  # (P, 2) int64
    out_pos: np.ndarray  # (MAX_CONTACTS, 3) narrow-phase output
    out_normal: np.ndarray  # (MAX_CONTACTS, 3)
    out_dist: np.ndarray  # (MAX_CONTACTS,)
    out_feature: np.ndarray  # (MAX_CONTACTS,) int64
    sweep_s: np.ndarray  # (B,) fraction of the step at the first touch of static geometry, -1: none
    displacement: np.ndarray  # (B, 6) position correction: dx (m), dtheta (rad)
    lam: np.ndarray  # (C,) position-correction multipliers
    match: np.ndarray  # (C,) int64 predecessor of each contact in the previous step's set
    touching: np.ndarray  # (G,) bool: static geom touched by the swept body at the start of the step
    quat: np.ndarray  # (4,)
    normal: np.ndarray  # (3,)
    vectors: np.ndarray  # (8, 3)

    @staticmethod
    def empty(geoms: int, bodies: int, capacity: int = 64, pairs: int = 1024) -> Scratch:
        return Scratch(np.zeros((geoms, 3)), np.zeros((geoms, 3, 3)), np.zeros((geoms, 3)), np.zeros((geoms, 3)),
                       np.arange(geoms, dtype=np.int64), np.zeros(1, dtype=np.int64),
                       np.zeros((pairs, 2), dtype=np.int64), np.zeros((MAX_CONTACTS, 3)),
                       np.zeros((MAX_CONTACTS, 3)), np.zeros(MAX_CONTACTS), np.zeros(MAX_CONTACTS, dtype=np.int64),
                       np.zeros(bodies), np.zeros((bodies, 6)), np.zeros(capacity),
                       np.zeros(capacity, dtype=np.int64), np.zeros(geoms, dtype=np.bool_), np.zeros(4), np.zeros(3),
                       np.zeros((8, 3)))


def contact_geoms(model: mujoco.MjModel, body_index: np.ndarray) -> Geoms:
    """The geoms of a compiled model; ``body_index`` (nbody,) maps MuJoCo bodies to engine bodies (-1 static),
    as ``EngineModel.body_index``. Materials from ``scene.contact_material``."""
    weld, parent, contype, conaffinity = filter_arrays(model)
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    count = model.ngeom
    body = np.array([body_index[w] if w > 0 else -1 for w in weld], dtype=np.int64)
    local_pos, local_quat = np.zeros((count, 3)), np.zeros((count, 4))
    extent = np.empty(count)
    for g in range(count):
        if body[g] < 0:
            local_pos[g] = data.geom_xpos[g]
            mujoco.mju_mat2Quat(local_quat[g], data.geom_xmat[g])
        else:
            # geom in the principal frame: R(iquat)^T (geom_pos - ipos), conj(iquat) (x) geom_quat
            mj_body = model.geom_bodyid[g]
            conj = np.zeros(4)
            mujoco.mju_negQuat(conj, model.body_iquat[mj_body])
            mujoco.mju_rotVecQuat(local_pos[g], model.geom_pos[g] - model.body_ipos[mj_body], conj)
            mujoco.mju_mulQuat(local_quat[g], conj, model.geom_quat[g])
        kind, size = model.geom_type[g], model.geom_size[g]
        extent[g] = (math.inf if kind == PLANE else size[0] if kind in (SPHERE, CAPSULE)
                     else min(size[0], size[1]) if kind == CYLINDER else size.min())
    material = contact_material(model)
    return Geoms(model.geom_type.astype(np.int64), model.geom_size.copy(), body, weld, parent, contype, conaffinity,
                 local_pos, local_quat, material.restitution, material.static_friction,
                 model.geom_friction[:, 0].copy(), extent)


@njit(cache=True)
def _geom_pose(geoms, g, cx, cy, cz, qw, qx, qy, qz, pos, mat):
    """World centre and frame of geom g on a body at (c, q) (static geoms: their stored pose)."""
    lp, lq = geoms.local_pos[g], geoms.local_quat[g]
    if geoms.body[g] < 0:
        gw, gx, gy, gz = lq[0], lq[1], lq[2], lq[3]
        pos[g, 0], pos[g, 1], pos[g, 2] = lp[0], lp[1], lp[2]
    else:
        ox, oy, oz = rot(qw, qx, qy, qz, lp[0], lp[1], lp[2])
        pos[g, 0], pos[g, 1], pos[g, 2] = cx + ox, cy + oy, cz + oz
        gw, gx, gy, gz = mul(qw, qx, qy, qz, lq[0], lq[1], lq[2], lq[3])
    for j in range(3):
        mat[g, 0, j], mat[g, 1, j], mat[g, 2, j] = rot(gw, gx, gy, gz, 1.0 if j == 0 else 0.0,
                                                       1.0 if j == 1 else 0.0, 1.0 if j == 2 else 0.0)


@njit(cache=True)
def geom_poses(geoms, state, world, scratch):
    """scratch.pos/mat of every geom at the current poses of world ``world``."""
    for g in range(geoms.type.size):
        b = geoms.body[g]
        if b < 0:
            _geom_pose(geoms, g, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, scratch.pos, scratch.mat)
        else:
            c, q = state.com[world, b], state.quat[world, b]
            _geom_pose(geoms, g, c[0], c[1], c[2], q[0], q[1], q[2], q[3], scratch.pos, scratch.mat)


@njit(cache=True)
def _body_geoms_at(geoms, b, com, quat, scratch):
    """scratch.pos/mat of body b's geoms for the body pose (com (3,), quat (4,))."""
    for g in range(geoms.type.size):
        if geoms.body[g] == b:
            _geom_pose(geoms, g, com[0], com[1], com[2], quat[0], quat[1], quat[2], quat[3], scratch.pos,
                       scratch.mat)


@njit(cache=True)
def warm_start(bodies, state, world, h, contacts):
    """Opening kick of the contact forces: each contact of the current (previous step's) set applies the
    impulse h/2 F along its rows (F: its reaction force, N; zero after impacts and for inactive contacts).
    The rows were built at the end of the previous step, which is this step's start: they are exact here."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    for i in range(base, base + min(contacts.count[world], capacity)):
        f = contacts.force[i]
        if f[0] == 0.0 and f[1] == 0.0 and f[2] == 0.0:
            continue
        for k in range(3):
            row = contacts.rows[i, k]
            apply_impulse(bodies, state, world, contacts.body_a[i], contacts.body_b[i], row, 0.5 * h * _along(f, row))


# Columns of the (C, HELD_INTS) / (C, HELD_FLOATS) buffers of ``keep_contacts``.
HELD_INTS, HELD_FLOATS = 7, 42


@njit(cache=True)
def keep_contacts(contacts, world, held, ints, floats, back):
    """Copy what the next step reads of world ``world``'s set (the contacts with their geoms, bodies, feature
    ids, points, rows, touching and sliding flags and forces; the contact and event counts) into the buffers
    ``held`` (2,) int64, ``ints`` (C, HELD_INTS) int64, ``floats`` (C, HELD_FLOATS) (back=False), or restore
    it from them (back=True): a rejected step leaves the set as it found it."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    if back:
        contacts.count[world], contacts.event_count[world] = held[0], held[1]
    else:
        held[0], held[1] = contacts.count[world], contacts.event_count[world]
    for c in range(min(held[0], capacity)):
        i = base + c
        if back:
            contacts.geom1[i], contacts.geom2[i], contacts.feature[i] = ints[c, 0], ints[c, 1], ints[c, 2]
            contacts.body_a[i], contacts.body_b[i] = ints[c, 3], ints[c, 4]
            contacts.active[i], contacts.sliding[i] = ints[c, 5] != 0, ints[c, 6] != 0
        else:
            ints[c, 0], ints[c, 1], ints[c, 2] = contacts.geom1[i], contacts.geom2[i], contacts.feature[i]
            ints[c, 3], ints[c, 4] = contacts.body_a[i], contacts.body_b[i]
            ints[c, 5], ints[c, 6] = contacts.active[i], contacts.sliding[i]
        for k in range(3):
            if back:
                contacts.point[i, k], contacts.force[i, k] = floats[c, k], floats[c, 3 + k]
            else:
                floats[c, k], floats[c, 3 + k] = contacts.point[i, k], contacts.force[i, k]
            for j in range(12):
                if back:
                    contacts.rows[i, k, j] = floats[c, 6 + 12 * k + j]
                else:
                    floats[c, 6 + 12 * k + j] = contacts.rows[i, k, j]


@njit(cache=True)
def _tangents(nx, ny, nz):
    """Two unit tangents (t1, t2) with (n, t1, t2) right-handed, a fixed function of n (so a persistent
    contact keeps its tangent directions)."""
    if abs(nx) < 0.57735:
        ax, ay, az = 1.0, 0.0, 0.0
    elif abs(ny) < 0.57735:
        ax, ay, az = 0.0, 1.0, 0.0
    else:
        ax, ay, az = 0.0, 0.0, 1.0
    # t1 = (a x n) / |a x n|, t2 = n x t1
    tx, ty, tz = ay * nz - az * ny, az * nx - ax * nz, ax * ny - ay * nx
    s = 1.0 / math.sqrt(tx * tx + ty * ty + tz * tz)
    tx, ty, tz = tx * s, ty * s, tz * s
    return tx, ty, tz, ny * tz - nz * ty, nz * tx - nx * tz, nx * ty - ny * tx


@njit(cache=True)
def _write_row(row, d, ra, rb):
    """row = [-d, -(r_a x d), d, r_b x d] for the direction d and levers r_a, r_b (3-tuples)."""
    ta, tb = cross(ra, d), cross(rb, d)
    for i in range(3):
        row[LIN_A + i] = -d[i]
        row[ANG_A + i] = -ta[i]
        row[LIN_B + i] = d[i]
        row[ANG_B + i] = tb[i]


@njit(cache=True)
def _com_at(state, world, body, com0, sweep, h, i):
    """Component i of body's COM at the pose where a contact was found: after the drift (sweep < 0) or at
    the fraction ``sweep`` of the linear drift from c_n (``com0``)."""
    if sweep < 0.0:
        return state.com[world, body, i]
    return com0[body, i] + sweep * h * state.vel[world, body, i]


@njit(cache=True)
def _lever(state, world, body, com0, sweep, h, p):
    """p - c of the body at the pose where the contact was found; (0, 0, 0) for static geometry."""
    if body < 0:
        return 0.0, 0.0, 0.0
    return (p[0] - _com_at(state, world, body, com0, sweep, h, 0),
            p[1] - _com_at(state, world, body, com0, sweep, h, 1),
            p[2] - _com_at(state, world, body, com0, sweep, h, 2))


@njit(cache=True)
def _add_contact(geoms, bodies, state, world, contacts, g1, g2, k, scratch, com0, sweep, h):
    """Append narrow-phase output k of the pair (g1, g2) to world ``world``'s set: rows with the levers at the
    pose where it was found (after the drift, or at the fraction ``sweep`` of it for a swept body), and the gap
    at the end of the drift: dist_end = dist_s + (1 - s) h J_n v_half for a swept contact (the drift is linear
    in the COM; the rotation term uses the drifted orientation)."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    c = contacts.count[world]
    contacts.count[world] = c + 1
    if c >= capacity:
        return
    i = world * capacity + c
    a, b = geoms.body[g1], geoms.body[g2]
    contacts.geom1[i], contacts.geom2[i] = g1, g2
    contacts.body_a[i], contacts.body_b[i] = a, b
    contacts.feature[i] = scratch.out_feature[k]
    p = scratch.out_pos[k]
    n = (scratch.out_normal[k, 0], scratch.out_normal[k, 1], scratch.out_normal[k, 2])
    for j in range(3):
        contacts.point[i, j] = p[j]
    ra = _lever(state, world, a, com0, sweep, h, p)
    rb = _lever(state, world, b, com0, sweep, h, p)
    t = _tangents(n[0], n[1], n[2])
    _write_row(contacts.rows[i, 0], n, ra, rb)
    _write_row(contacts.rows[i, 1], (t[0], t[1], t[2]), ra, rb)
    _write_row(contacts.rows[i, 2], (t[3], t[4], t[5]), ra, rb)
    dist = scratch.out_dist[k]
    if sweep >= 0.0:
        dist += (1.0 - sweep) * h * row_rate(contacts, bodies, state, world, i, contacts.rows[i, 0], scratch.normal)
    contacts.dist[i] = dist
    contacts.restitution[i] = max(geoms.restitution[g1], geoms.restitution[g2])
    contacts.static_friction[i] = max(geoms.static_friction[g1], geoms.static_friction[g2])
    contacts.friction[i] = max(geoms.friction[g1], geoms.friction[g2])


@njit(cache=True)
def _collide_pair(geoms, scratch, g1, g2, margin):
    """Narrow phase of geoms g1 < g2 at the poses in ``scratch``; returns the contact count (-1: unsupported)."""
    return collide(geoms.type[g1], geoms.size[g1], scratch.pos[g1], scratch.mat[g1], geoms.type[g2], geoms.size[g2],
                   scratch.pos[g2], scratch.mat[g2], margin, scratch.out_pos, scratch.out_normal, scratch.out_dist,
                   scratch.out_feature)


@njit(cache=True)
def _sweepable(geoms, g, s):
    """Static geom s can be swept against by geom g: a static plane or box that g may collide with."""
    return (geoms.body[s] < 0 and (geoms.type[s] == PLANE or geoms.type[s] == BOX)
            and can_collide(g, s, geoms.weld, geoms.parent, geoms.contype, geoms.conaffinity, FILTER_PARENT))


@njit(cache=True)
def _pose_at(geoms, bodies, state, world, b, s, h, com0, quat0, scratch):
    """Put body b's geoms (scratch.pos/mat) at the fraction s of this step's drift: c_n + s h v_half and the
    free-rotor flow of s h from q_n (the drift of step.drift, cut short)."""
    com = scratch.vectors[0]
    for i in range(3):
        com[i] = com0[b, i] + s * h * state.vel[world, b, i]
        scratch.quat[i] = quat0[b, i]
    scratch.quat[3] = quat0[b, 3]
    free_rotor_drift(scratch.quat, bodies.inv_inertia[b], state.momentum[world, b], s * h)
    _body_geoms_at(geoms, b, com, scratch.quat, scratch)


@njit(cache=True)
def _first_touch(geoms, bodies, state, world, b, h, com0, quat0, scratch, margin):
    """Fraction s in (0, 1] of this step's drift at which body b first comes within ``margin`` of static
    geometry it moves fast against (see the module docstring), or -1: not fast, touching already at the start,
    or no touch within the step. Conservative advancement: from the pose at s, the closed-form lower bound
    tau of the time of impact over the rest of the step (collision.toi_plane / toi_box) moves s to
    s + (1 - s) tau, until the narrow phase finds the hit geom within the margin."""
    vel = state.vel[world, b]
    speed = math.sqrt(vel[0] ** 2 + vel[1] ** 2 + vel[2] ** 2)
    spin = state.momentum[world, b]
    # |w| = |R diag(1/I) R^T L| <= max(1/I) |L|, and L is constant during the drift
    omega = max(bodies.inv_inertia[b, 0], bodies.inv_inertia[b, 1], bodies.inv_inertia[b, 2]) * math.sqrt(
        spin[0] ** 2 + spin[1] ** 2 + spin[2] ** 2)
    fast = False
    for g in range(geoms.type.size):
        if geoms.body[g] != b:
            continue
        lp = geoms.local_pos[g]
        # a point of the geom moves by at most (|v| + w (|c - x| + rho)) h in the step (rho: toi.rotation_radius)
        reach = math.sqrt(lp[0] ** 2 + lp[1] ** 2 + lp[2] ** 2) + rotation_radius(geoms.type[g], geoms.size[g])
        for s in range(geoms.type.size):
            if _sweepable(geoms, g, s) and h * (speed + omega * reach) > CCD_FRACTION * min(geoms.extent[g],
                                                                                              geoms.extent[s]):
                fast = True
    if not fast:
        return -1.0
    s = 0.0
    for iteration in range(CCD_ITERATIONS):
        _pose_at(geoms, bodies, state, world, b, s, h, com0, quat0, scratch)
        first, hit = math.inf, -1
        for g in range(geoms.type.size):
            if geoms.body[g] != b:
                continue
            lp = geoms.local_pos[g]
            lever = math.sqrt(lp[0] ** 2 + lp[1] ** 2 + lp[2] ** 2)
            for t in range(geoms.type.size):
                if not _sweepable(geoms, g, t) or (iteration > 0 and scratch.touching[t]):
                    continue
                if geoms.type[t] == PLANE:
                    tau = toi_plane(geoms.type[g], geoms.size[g], scratch.pos[g], scratch.mat[g], vel, omega, lever,
                                    (1.0 - s) * h, scratch.pos[t], scratch.mat[t], scratch.normal)
                else:
                    tau = toi_box(geoms.type[g], geoms.size[g], scratch.pos[g], scratch.mat[g], vel, omega, lever,
                                  (1.0 - s) * h, geoms.size[t], scratch.pos[t], scratch.mat[t], scratch.normal)
                # static geometry already touched at the start (a floor slid on) is the narrow phase's business
                if iteration == 0:
                    scratch.touching[t] = tau == 0.0
                if tau < first and not (iteration == 0 and tau == 0.0):
                    first, hit = tau, t
        if hit < 0 or first == math.inf:
            return -1.0
        s += (1.0 - s) * first
        _pose_at(geoms, bodies, state, world, b, s, h, com0, quat0, scratch)
        for g in range(geoms.type.size):
            if geoms.body[g] == b and _sweepable(geoms, g, hit) and _collide_pair(
                    geoms, scratch, min(g, hit), max(g, hit), margin) > 0:
                return s
        if first == 0.0:
            return -1.0
    return s


@njit(cache=True)
def _event(contacts, world, first, time, g1, g2, speed):
    """Record an impact (one per geom pair and step: ``first`` is the step's first event index)."""
    stored = min(contacts.event_count[world], contacts.event_time.shape[1])
    for e in range(first, stored):
        if contacts.event_geom[world, e, 0] == g1 and contacts.event_geom[world, e, 1] == g2:
            return
    if stored < contacts.event_time.shape[1]:
        contacts.event_time[world, stored] = time
        contacts.event_geom[world, stored, 0] = g1
        contacts.event_geom[world, stored, 1] = g2
        contacts.event_speed[world, stored] = speed
    contacts.event_count[world] += 1


@njit(cache=True)
def _match(contacts, world, scratch):
    """scratch.match[c] = the predecessor of contact c of world ``world`` in the previous step's set (flat index),
    or -1, one to one: first the contact of the same geom pair with the same feature id, then, for the rest (a
    clipping label can change with round-off where edges of the two geoms coincide, as in a stack of equal
    boxes), the nearest unclaimed one of the pair within MATCH_RADIUS. A predecessor claimed twice would
    carry its force into the next step twice. Claimed predecessors get prev_geom1 = -1."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    count = min(contacts.count[world], capacity)
    for c in range(count):
        i = base + c
        scratch.match[c] = -1
        for j in range(base, base + contacts.prev_count[world]):
            if (contacts.prev_geom1[j] == contacts.geom1[i] and contacts.prev_geom2[j] == contacts.geom2[i]
                    and contacts.prev_feature[j] == contacts.feature[i]):
                scratch.match[c] = j
                contacts.prev_geom1[j] = -1
                break
    for c in range(count):
        i = base + c
        if scratch.match[c] >= 0:
            continue
        best = MATCH_RADIUS * MATCH_RADIUS
        for j in range(base, base + contacts.prev_count[world]):
            if contacts.prev_geom1[j] != contacts.geom1[i] or contacts.prev_geom2[j] != contacts.geom2[i]:
                continue
            d = 0.0
            for k in range(3):
                d += (contacts.prev_point[j, k] - contacts.point[i, k]) ** 2
            if d < best:
                scratch.match[c], best = j, d
        if scratch.match[c] >= 0:
            contacts.prev_geom1[scratch.match[c]] = -1


@njit(cache=True)
def _classify(bodies, env, state, world, t_end, h, contacts, scratch, settled):
    """Match each new contact with the previous step's (``_match``), then set its targets:
    a touching contact that touched before (or any, when ``settled``) rests or slides: gap 0, normal speed 0;
    a new touching contact that approaches faster than |g| h is an impact (module docstring): impact time,
    approach speed, rebound targets and an event. ``opened`` gets the warm-start impulse h/2 F that the
    predecessor applied in the opening kick, and ``sliding`` its friction state."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    first_event = contacts.event_count[world]
    _match(contacts, world, scratch)
    for i in range(base, base + min(contacts.count[world], capacity)):
        persistent = settled
        contacts.sliding[i] = False
        for k in range(3):
            contacts.opened[i, k] = 0.0
        j = scratch.match[i - base]
        if j >= 0:
            persistent = persistent or contacts.prev_active[j]
            contacts.sliding[i] = contacts.prev_sliding[j]
            for k in range(3):
                contacts.opened[i, k] = 0.5 * h * contacts.prev_force[j, k]
        dist = contacts.dist[i]
        contacts.active[i] = dist <= TOUCH
        contacts.impact[i] = contacts.active[i] and not persistent
        contacts.gap_target[i] = 0.0
        contacts.rebound[i] = 0.0
        if not contacts.impact[i]:
            continue
        row = contacts.rows[i, 0]
        # relative normal acceleration of free flight: n . (g_b - g_a), g only on moving bodies
        a_n = 0.0
        for k in range(3):
            if contacts.body_b[i] >= 0:
                a_n += row[LIN_B + k] * env.gravity[k]
            if contacts.body_a[i] >= 0:
                a_n -= row[LIN_B + k] * env.gravity[k]
        u_half = -row_rate(contacts, bodies, state, world, i, row, scratch.normal)
        u_end = u_half - 0.5 * h * a_n  # approach speed at the end of the step without contact
        # gap(tau) = dist + u_end tau + a_n tau^2 / 2 = 0, tau seconds before the end of the step
        disc = u_end * u_end - 2.0 * a_n * dist
        tau = 0.0
        if disc >= 0.0 and u_end + math.sqrt(disc) > 0.0:
            tau = min(h, max(0.0, -2.0 * dist / (u_end + math.sqrt(disc))))
        approach = u_end + a_n * tau
        if approach <= math.sqrt(env.gravity[0] ** 2 + env.gravity[1] ** 2 + env.gravity[2] ** 2) * h:
            # no faster than gravity brings a body to rest on a support in one step: a resting contact forms
            contacts.impact[i] = False
            continue
        e = contacts.restitution[i]
        contacts.approach[i] = u_end
        contacts.rebound[i] = max(0.0, e * approach + a_n * tau)
        contacts.gap_target[i] = max(0.0, e * approach * tau + 0.5 * a_n * tau * tau)
        _event(contacts, world, first_event, t_end - tau, contacts.geom1[i], contacts.geom2[i], approach)


@njit(cache=True)
def find_contacts(geoms, bodies, env, state, world, t_end, h, com0, quat0, contacts, scratch, margin, sweep,
                  settled):
    """Build world ``world``'s contact set after the drift (the previous set becomes ``prev_*``).

    ``t_end``: time at the end of the step (s); ``com0``/``quat0`` (B, 3)/(B, 4): the start-of-step poses
    (``constraints.Workspace.com0/quat0`` after ``constraints.begin_step``); ``margin``: MARGIN (m);
    ``sweep``: continuous collision of fast bodies against static geometry; ``settled``: every touching contact
    rests (no impacts; used by ``prime_contacts``). Velocities must be the half-step ones (v_half, L_half).
    Returns the number of contacts found (> C: the set overflowed) or -1 if the broad phase overflowed
    ``scratch.pairs`` or met an unsupported pair."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    kept = min(contacts.count[world], capacity)
    for i in range(base, base + kept):
        contacts.prev_geom1[i] = contacts.geom1[i]
        contacts.prev_geom2[i] = contacts.geom2[i]
        contacts.prev_feature[i] = contacts.feature[i]
        contacts.prev_active[i] = contacts.active[i]
        contacts.prev_sliding[i] = contacts.sliding[i]
        for k in range(3):
            contacts.prev_point[i, k] = contacts.point[i, k]
        for k in range(3):
            contacts.prev_force[i, k] = contacts.force[i, k]
    contacts.prev_count[world] = kept
    contacts.count[world] = 0
    geom_poses(geoms, state, world, scratch)
    for b in range(scratch.sweep_s.size):
        scratch.sweep_s[b] = -1.0
        if sweep:
            scratch.sweep_s[b] = _first_touch(geoms, bodies, state, world, b, h, com0, quat0, scratch, margin)
            _body_geoms_at(geoms, b, state.com[world, b], state.quat[world, b], scratch)
    geom_aabbs(geoms.type, geoms.size, scratch.pos, scratch.mat, margin, scratch.lo, scratch.hi)
    pairs = sweep_pairs(scratch.lo, scratch.hi, scratch.axis[0], scratch.order, geoms.weld, geoms.parent,
                        geoms.contype, geoms.conaffinity, FILTER_PARENT, scratch.pairs)
    if pairs > scratch.pairs.shape[0]:
        return -1
    for p in range(pairs):
        g1, g2 = scratch.pairs[p, 0], scratch.pairs[p, 1]
        a, b = geoms.body[g1], geoms.body[g2]
        # a swept body's contacts with static geometry come from its first-touch pose below
        if (a < 0 and scratch.sweep_s[b] >= 0.0) or (b < 0 and scratch.sweep_s[a] >= 0.0):
            continue
        found = _collide_pair(geoms, scratch, g1, g2, margin)
        if found < 0:
            return -1
        for k in range(found):
            _add_contact(geoms, bodies, state, world, contacts, g1, g2, k, scratch, com0, -1.0, h)
    for b in range(scratch.sweep_s.size):
        s = scratch.sweep_s[b]
        if s < 0.0:
            continue
        _pose_at(geoms, bodies, state, world, b, s, h, com0, quat0, scratch)
        for g in range(geoms.type.size):
            if geoms.body[g] != b:
                continue
            for t in range(geoms.type.size):
                if geoms.body[t] >= 0 or not can_collide(g, t, geoms.weld, geoms.parent, geoms.contype,
                                                         geoms.conaffinity, FILTER_PARENT):
                    continue
                g1, g2 = min(g, t), max(g, t)
                found = _collide_pair(geoms, scratch, g1, g2, margin)
                if found < 0:
                    return -1
                for k in range(found):
                    _add_contact(geoms, bodies, state, world, contacts, g1, g2, k, scratch, com0, s, h)
        _body_geoms_at(geoms, b, state.com[world, b], state.quat[world, b], scratch)
    _classify(bodies, env, state, world, t_end, h, contacts, scratch, settled)
    return contacts.count[world]


@njit(cache=True)
def _displaced(displacement, body, row, column):
    """J . (dx, dtheta) of one body's columns: the gap change from the body's correction so far (m)."""
    if body < 0:
        return 0.0
    total = 0.0
    for k in range(3):
        total += row[column + k] * displacement[body, k] + row[column + 3 + k] * displacement[body, 3 + k]
    return total


@njit(cache=True)
def _shift(bodies, state, world, displacement, body, row, column, amount):
    """(dx, dtheta) += W J^T amount for one body: dx += amount J_x / m, dtheta += R diag(1/I) R^T amount J_theta."""
    if body < 0:
        return
    q = state.quat[world, body]
    lx, ly, lz = rot(q[0], -q[1], -q[2], -q[3], row[column + 3], row[column + 4], row[column + 5])
    inv = bodies.inv_inertia[body]
    wx, wy, wz = rot(q[0], q[1], q[2], q[3], lx * inv[0], ly * inv[1], lz * inv[2])
    for k in range(3):
        displacement[body, k] += amount * row[column + k] * bodies.inv_mass[body]
    displacement[body, 3] += amount * wx
    displacement[body, 4] += amount * wy
    displacement[body, 5] += amount * wz


@njit(cache=True)
def correct_positions(bodies, state, world, contacts, scratch):
    """Remove penetration without touching velocities or momenta: find the pose changes (dx, dtheta) = W J_n^T
    lambda, lambda >= 0, that bring every touching contact's linearised gap  dist + J_n (dx, dtheta)  up to its
    target (0, or an impact's rebound gap), by projected Gauss-Seidel on the normals found after the drift (or
    at a swept body's first-touch pose), then move the centres by dx and turn the frames by dtheta
    (q <- exp(dtheta) q, world frame). Returns the sweeps used, or -1 if not converged."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    count = min(contacts.count[world], capacity)
    displacement = scratch.displacement
    displacement[:] = 0.0
    needed = False
    for c in range(count):
        i = base + c
        scratch.lam[c] = 0.0
        row = contacts.rows[i, 0]
        contacts.coupling[i, 0, 0] = coupling(bodies, state, world, contacts.body_a[i], contacts.body_b[i], row, row,
                                              scratch.vectors)
        needed = needed or (contacts.active[i] and contacts.dist[i] < contacts.gap_target[i])
    if not needed:
        return 0
    for sweep in range(MAX_SWEEPS):
        worst = 0.0
        for c in range(count):
            i = base + c
            k = contacts.coupling[i, 0, 0]
            if not contacts.active[i] or not k > 0.0:
                continue
            a, b, row = contacts.body_a[i], contacts.body_b[i], contacts.rows[i, 0]
            gap = contacts.dist[i] + _displaced(displacement, a, row, LIN_A) + _displaced(displacement, b, row, LIN_B)
            new = max(0.0, scratch.lam[c] + (contacts.gap_target[i] - gap) / k)
            change = new - scratch.lam[c]
            if change == 0.0:
                continue
            scratch.lam[c] = new
            _shift(bodies, state, world, displacement, a, row, LIN_A, change)
            _shift(bodies, state, world, displacement, b, row, LIN_B, change)
            worst = max(worst, abs(change) * k)
        if worst <= POSITION_TOLERANCE:
            for body in range(displacement.shape[0]):
                _move(state, world, body, displacement[body])
            return sweep + 1
    return -1


@njit(cache=True)
def _move(state, world, body, d):
    """c += d[:3]; q <- exp(d[3:]) q, the rotation by the angle |d[3:]| about d[3:] in the world frame."""
    for k in range(3):
        state.com[world, body, k] += d[k]
    angle = math.sqrt(d[3] * d[3] + d[4] * d[4] + d[5] * d[5])
    if angle == 0.0:
        return
    s = math.sin(0.5 * angle) / angle
    q = state.quat[world, body]
    q[0], q[1], q[2], q[3] = mul(math.cos(0.5 * angle), s * d[3], s * d[4], s * d[5], q[0], q[1], q[2], q[3])
    normalize(q)


@njit(cache=True)
def _apply_rows(bodies, state, world, contacts, i, p0, p1, p2):
    """Impulses p0, p1, p2 (N s) along contact i's normal and tangent rows."""
    a, b = contacts.body_a[i], contacts.body_b[i]
    if p0 != 0.0:
        apply_impulse(bodies, state, world, a, b, contacts.rows[i, 0], p0)
    if p1 != 0.0:
        apply_impulse(bodies, state, world, a, b, contacts.rows[i, 1], p1)
    if p2 != 0.0:
        apply_impulse(bodies, state, world, a, b, contacts.rows[i, 2], p2)


@njit(cache=True)
def _disc(t1, t2, limit):
    """Radial projection of the tangential impulse (t1, t2) (N s) onto the disc |t| <= limit."""
    size = math.sqrt(t1 * t1 + t2 * t2)
    if size <= limit:
        return t1, t2
    return t1 * limit / size, t2 * limit / size


@njit(cache=True)
def _along(v, row):
    """d . v for the world vector v and the direction d of a contact row (its body-b linear part)."""
    return v[0] * row[LIN_B] + v[1] * row[LIN_B + 1] + v[2] * row[LIN_B + 2]


@njit(cache=True)
def begin_solve(bodies, state, world, contacts, scratch):
    """After the closing kick: the couplings K = J W J^T (3 x 3) of the touching contacts at the corrected
    poses, and the warm start of the closing solve: each persistent contact's normal impulse starts from the
    normal part of what its predecessor applied in the opening kick (``opened``), applied to the bodies. The
    tangential impulses start from zero: friction among coplanar points has self-equilibrated splits (a
    "squeeze" that moves nothing), which the sweeps never remove and which, carried from step to step through
    F = (P_open + P_close) / h, would accumulate until they saturate the cones (a 5-box stack); from zero
    they halve every step instead.
    """
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    for i in range(base, base + min(contacts.count[world], capacity)):
        for k in range(3):
            contacts.impulse[i, k] = 0.0
        if not contacts.active[i]:
            continue
        a, b = contacts.body_a[i], contacts.body_b[i]
        for j in range(3):
            for k in range(3):
                contacts.coupling[i, j, k] = coupling(bodies, state, world, a, b, contacts.rows[i, j],
                                                      contacts.rows[i, k], scratch.vectors)
        if contacts.impact[i]:
            continue
        p_n = max(0.0, _along(contacts.opened[i], contacts.rows[i, 0]))
        contacts.impulse[i, 0] = p_n
        _apply_rows(bodies, state, world, contacts, i, p_n, 0.0, 0.0)


@njit(cache=True)
def contact_sweep(bodies, state, world, contacts, scratch):
    """One projected Gauss-Seidel sweep over world ``world``'s touching contacts (after ``begin_solve``).
    Per contact: the normal impulse increment -J_n v / K_nn, accumulated and clamped at 0; then the
    tangential impulse: a sticking point's stops the slip (within the static cone |P_t| <= mu_s P_n), a sliding
    point's is kinetic, mu_k P_n against the slip at convergence (see ``update_sliding``). Returns the largest
    velocity change
    |dP| K_kk (m/s) it made: interleave it with the constraint rows' sweeps and stop when all are below
    tolerance (VELOCITY_TOLERANCE)."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    worst = 0.0
    omega = scratch.normal
    for i in range(base, base + min(contacts.count[world], capacity)):
        if not contacts.active[i]:
            continue
        k = contacts.coupling[i]
        p = contacts.impulse[i]
        rate = row_rate(contacts, bodies, state, world, i, contacts.rows[i, 0], omega)
        p_n = max(0.0, p[0] - rate / k[0, 0])
        d_n = p_n - p[0]
        if d_n != 0.0:
            _apply_rows(bodies, state, world, contacts, i, d_n, 0.0, 0.0)
        v1 = row_rate(contacts, bodies, state, world, i, contacts.rows[i, 1], omega)
        v2 = row_rate(contacts, bodies, state, world, i, contacts.rows[i, 2], omega)
        # Static: the impulse that stops the slip exactly (the 2 x 2 tangent block solved), if it lies in the
        # static cone. Otherwise (and for a sliding point, against the kinetic disc) a projected gradient step:
        # the increment -v_t / k_t, k_t the largest eigenvalue of K_tt, projected radially onto the disc. Both
        # steps lower the block's quadratic, so the sweeps converge; for a sliding point the step's fixed point
        # is mu_k p_n opposite the slip (maximal dissipation).
        limit = contacts.friction[i] * p_n if contacts.sliding[i] else contacts.static_friction[i] * p_n
        det = k[1, 1] * k[2, 2] - k[1, 2] * k[2, 1]
        t1 = p[1] - (k[2, 2] * v1 - k[1, 2] * v2) / det
        t2 = p[2] - (k[1, 1] * v2 - k[2, 1] * v1) / det
        if contacts.sliding[i] or t1 * t1 + t2 * t2 > limit * limit:
            k_t = 0.5 * (k[1, 1] + k[2, 2]) + math.sqrt((0.5 * (k[1, 1] - k[2, 2])) ** 2 + k[1, 2] * k[2, 1])
            t1, t2 = _disc(p[1] - v1 / k_t, p[2] - v2 / k_t, limit)
        d1, d2 = t1 - p[1], t2 - p[2]
        _apply_rows(bodies, state, world, contacts, i, 0.0, d1, d2)
        p[0], p[1], p[2] = p_n, t1, t2
        worst = max(worst, abs(d_n) * k[0, 0], abs(d1) * k[1, 1], abs(d2) * k[2, 2])
    return worst


@njit(cache=True)
def _slip(bodies, state, world, contacts, i, omega):
    """|v_t| (m/s): the speed of the tangential slip at contact i."""
    v1 = row_rate(contacts, bodies, state, world, i, contacts.rows[i, 1], omega)
    v2 = row_rate(contacts, bodies, state, world, i, contacts.rows[i, 2], omega)
    return math.sqrt(v1 * v1 + v2 * v2)


@njit(cache=True)
def update_sliding(bodies, state, world, contacts, scratch):
    """Per point, static or kinetic friction: after the sweeps have converged, a sticking point whose friction
    is at the static limit (|P_t| = mu_s P_n) and still slips (faster than SLIP) cannot be held by static
    friction and slides from now on. (A point at the limit that does not slip is held: among coplanar points
    the split of the friction is not unique, and the sweeps' split may saturate one point of a body that
    sticks.) Returns True if any point changed, i.e. the sweeps must go on; the sliding points only grow within
    a solve, so the decisions cannot cycle."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    changed = False
    for i in range(base, base + min(contacts.count[world], capacity)):
        p = contacts.impulse[i]
        if (contacts.active[i] and not contacts.sliding[i] and p[0] > 0.0
                and p[1] * p[1] + p[2] * p[2] >= (contacts.static_friction[i] * p[0] * SATURATED) ** 2
                and _slip(bodies, state, world, contacts, i, scratch.normal) > SLIP):
            contacts.sliding[i] = True
            changed = True
    return changed


@njit(cache=True)
def finish_solve(bodies, state, world, h, contacts, scratch):
    """Reaction forces after the solve: F = (opened + sum_k P_k d_k) / h on body b (world vector, N), the mean
    over the step, for touching contacts that did not just impact; 0 otherwise (what the next warm start
    applies). A sliding point whose slip has stopped (below SLIP) sticks again in the next step."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    for i in range(base, base + min(contacts.count[world], capacity)):
        if contacts.sliding[i] and _slip(bodies, state, world, contacts, i, scratch.normal) <= SLIP:
            contacts.sliding[i] = False
        for j in range(3):
            total = 0.0
            if contacts.active[i] and not contacts.impact[i]:
                total = contacts.opened[i, j]
                for k in range(3):
                    total += contacts.impulse[i, k] * contacts.rows[i, k, LIN_B + j]
            contacts.force[i, j] = total / h


@njit(cache=True)
def _converge(bodies, state, world, contacts, scratch):
    """``contact_sweep`` until no sweep changes a velocity by more than VELOCITY_TOLERANCE and ``update_sliding``
    finds no new sliding point. Returns the sweeps used, or -1."""
    for sweep in range(MAX_SWEEPS):
        if contact_sweep(bodies, state, world, contacts, scratch) <= VELOCITY_TOLERANCE and not update_sliding(
                bodies, state, world, contacts, scratch):
            return sweep + 1
    return -1


@njit(cache=True)
def solve_contacts(bodies, state, world, h, contacts, scratch):
    """The closing velocity solve of the contacts alone: ``begin_solve``, sweeps to convergence (``_converge``),
    if impacts rebound ``start_rebound``, sweeps again and ``end_rebound``, then ``finish_solve``. Returns the
    sweeps used, or -1. To solve contacts together with constraint rows, run the same sequence with each
    sweep being one constraint sweep plus one ``contact_sweep`` (converged when both are below tolerance
    and ``update_sliding`` returns False).

    Impacts with a rebound go in three stages (Poisson's form of the Newton targets, which cannot add energy
    when several points hit at once, where Newton's simultaneous targets can): compression, every impact
    stopped (target 0) with friction, impulses P_c; restitution, each impact's compression impulse (normal
    and friction) scaled by r = rebound / u_1 added again (a single point then leaves at exactly its Newton
    target e u* + a_n tau); a final inelastic solve from zero impulses that only removes what the rebounds
    would drive into other contacts. Energy: with u the velocity change of P_c, complementarity and friction
    opposing slip give <v_c, u>_M = J v_c . P_c <= 0, so KE(v_before) = KE(v_c - u) >= KE(v_c) + KE(u) while
    KE(v_c + r u) <= KE(v_c) + r^2 KE(u), r <= e <= 1 (exact for one point or a common r)."""
    begin_solve(bodies, state, world, contacts, scratch)
    first = _converge(bodies, state, world, contacts, scratch)
    if first < 0 or not start_rebound(bodies, state, world, contacts):
        finish_solve(bodies, state, world, h, contacts, scratch)
        return first
    last = _converge(bodies, state, world, contacts, scratch)
    end_rebound(world, contacts)
    finish_solve(bodies, state, world, h, contacts, scratch)
    return first + last if last >= 0 else -1


@njit(cache=True)
def start_rebound(bodies, state, world, contacts):
    """After the compression solve has converged: keep its impulses in ``stage``, add each impact's rebound
    impulse (r = rebound / u_1 times its compression impulse, see ``solve_contacts``) to the bodies and to
    ``stage``, and restart the accumulated impulses from zero for the final inelastic solve. Returns False
    (changing nothing but ``stage``) when no impact rebounds: the solve is then complete."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    count = min(contacts.count[world], capacity)
    bounce = False
    for i in range(base, base + count):
        p = contacts.impulse[i]
        for k in range(3):
            contacts.stage[i, k] = p[k]
        if contacts.active[i] and contacts.impact[i] and contacts.rebound[i] > 0.0 and p[0] > 0.0 and (
                contacts.approach[i] > 0.0):
            ratio = contacts.rebound[i] / contacts.approach[i]
            _apply_rows(bodies, state, world, contacts, i, ratio * p[0], ratio * p[1], ratio * p[2])
            for k in range(3):
                contacts.stage[i, k] += ratio * p[k]
            bounce = True
    if bounce:
        for i in range(base, base + count):
            for k in range(3):
                contacts.impulse[i, k] = 0.0
    return bounce


@njit(cache=True)
def end_rebound(world, contacts):
    """After the final inelastic solve: each contact's impulse is the sum of the three stages."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    for i in range(base, base + min(contacts.count[world], capacity)):
        for k in range(3):
            contacts.impulse[i, k] += contacts.stage[i, k]


@njit(cache=True)
def _rest_reactions(bodies, env, state, world, h, contacts, scratch):
    """The reaction forces that hold the touching contacts against the next closing half-kick of gravity:
    F = 2 P / h from a trial solve of v + h/2 g with every target at rest (friction as decided), velocities
    and momenta restored afterwards. Returns the trial's sweeps, or -1."""
    saved = scratch.displacement
    for b in range(saved.shape[0]):
        for k in range(3):
            saved[b, k] = state.vel[world, b, k]
            saved[b, 3 + k] = state.momentum[world, b, k]
            state.vel[world, b, k] += 0.5 * h * env.gravity[k]
    sweeps = solve_contacts(bodies, state, world, h, contacts, scratch)
    capacity = contacts.prev_geom1.size // contacts.count.size
    for i in range(world * capacity, world * capacity + min(contacts.count[world], capacity)):
        for j in range(3):
            total = 0.0
            if contacts.active[i]:
                for k in range(3):
                    total += contacts.impulse[i, k] * contacts.rows[i, k, LIN_B + j]
            contacts.force[i, j] = 2.0 * total / h
    for b in range(saved.shape[0]):
        for k in range(3):
            state.vel[world, b, k] = saved[b, k]
            state.momentum[world, b, k] = saved[b, 3 + k]
    return sweeps


@njit(cache=True)
def _speed(state, world, body):
    """|v| of a body's centre of mass (0 for static geometry), m/s."""
    if body < 0:
        return 0.0
    v = state.vel[world, body]
    return math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])


@njit(cache=True)
def settle_impacts(bodies, env, state, world, h, contacts, scratch):
    """After ``solve_contacts`` in a step with impacts: an impact's impulse is no force to carry into the next
    opening kick, but a body that an impact brought to rest (e = 0) needs its support there, or it falls
    h^2 g / 2 and lands again. The impacts that bounce off (rebound > 0) leave the set's touching
    contacts; the others rest from now on. If every body that stays in contact after an impact is left slower
    than gravity makes it in a step (|v| <= |g| h), every touching contact's force becomes the resting reaction
    (``_rest_reactions``); a body still moving (a box pivoting on the edge it landed on) carries no impact force
    instead, since the reaction that would hold it in this pose is no force of its motion. Returns 0 when
    there was nothing to settle, else the trial's sweeps (or -1)."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    limit = math.sqrt(env.gravity[0] ** 2 + env.gravity[1] ** 2 + env.gravity[2] ** 2) * h
    any_impact, resting = False, True
    for i in range(world * capacity, world * capacity + min(contacts.count[world], capacity)):
        if contacts.active[i] and contacts.impact[i]:
            any_impact = True
            contacts.impact[i] = False
            contacts.active[i] = contacts.rebound[i] <= 0.0
            resting = resting and (not contacts.active[i] or (_speed(state, world, contacts.body_a[i]) <= limit
                                                              and _speed(state, world, contacts.body_b[i]) <= limit))
    if not (any_impact and resting):
        return 0
    return _rest_reactions(bodies, env, state, world, h, contacts, scratch)


@njit(cache=True)
def prime_contacts(geoms, bodies, env, state, world, h, com0, quat0, contacts, scratch, margin):
    """At a reset: the contacts of the initial poses, all taken as resting, with their resting reactions
    (``_rest_reactions``), so that a body placed at rest on a support or a slope stays there from the first
    step. Returns the trial's sweeps, or -1."""
    contacts.count[world] = 0
    if find_contacts(geoms, bodies, env, state, world, 0.0, h, com0, quat0, contacts, scratch, margin, False,
                     True) < 0:
        return -1
    return _rest_reactions(bodies, env, state, world, h, contacts, scratch)


def sweep_setup(geoms: Geoms, scratch: Scratch, state, world: int = 0) -> None:
    """Choose the broad phase's sweep axis from the geoms' spread at the current poses (call at load)."""
    geom_poses(geoms, state, world, scratch)
    geom_aabbs(geoms.type, geoms.size, scratch.pos, scratch.mat, MARGIN, scratch.lo, scratch.hi)
    scratch.axis[0] = sweep_axis(scratch.lo, scratch.hi)
