"""Contact data: the geoms of a scene, the per-world contact set carried from step to step, the caller-owned
scratch and geom poses (see :mod:`mechgym.physics.contact`; the contact stages' tolerances and caps are in
:mod:`mechgym.physics.tolerances`)."""

from __future__ import annotations

import math
from typing import NamedTuple

import mujoco
import numpy as np

from ...scene import contact_material
from ..collision import (
    CAPSULE,
    CYLINDER,
    MAX_CONTACTS,
    PLANE,
    SPHERE,
    filter_arrays,
)
from ..collision.broad import grid_scratch
from ..constraints import LIN_A, LIN_B
from ..jit import kernel
from ..tolerances import DENSE_CONTACTS, DENSE_LEAST, DENSE_PER_BODY
from ..vectors import mul, rot

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
    condim: np.ndarray  # (G,) int64 MJCF condim: 1 frictionless, 3 Coulomb friction (4 and 6 are refused)

    @staticmethod
    def empty() -> Geoms:
        """No geoms (a scene stepped without contacts)."""
        index, value = np.zeros(0, dtype=np.int64), np.zeros(0)
        return Geoms(index, np.zeros((0, 3)), index, index, index, index, index, np.zeros((0, 3)), np.zeros((0, 4)),
                     value, value, value, value, index)


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
    dist: np.ndarray  # (WC,) signed gap at the end of the drift, m (before the position correction; after a pass of
    #                   it that moved a body by more than the margin, the gap after that pass: contact.position)
    rows: np.ndarray  # (WC, 3, 12) gradient rows of n, t1, t2
    coupling: np.ndarray  # (WC, 3, 3) J W J^T, 1/kg
    active: np.ndarray  # (WC,) bool: touching (dist <= TOUCH, or near), takes part in the solves
    impact: np.ndarray  # (WC,) bool: touching now, not in the previous step
    near: np.ndarray  # (WC,) bool: open after the drift, taken as touching in this step (detect.join_near)
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

    def clear(self) -> None:
        """Empty the set in place: every array back to ``empty``'s zeros."""
        for array in self:
            array[...] = 0

    @staticmethod
    def empty(worlds: int, capacity: int = 64, events: int = 256) -> ContactSet:
        n = worlds * capacity
        def index():
            return np.zeros(n, dtype=np.int64)

        def flag():
            return np.zeros(n, dtype=np.bool_)

        def vectors():
            return np.zeros((n, 3))

        return ContactSet(
            count=np.zeros(worlds, dtype=np.int64), geom1=index(), geom2=index(), feature=index(), body_a=index(),
            body_b=index(), point=vectors(), dist=np.zeros(n), rows=np.zeros((n, 3, 12)), coupling=np.zeros((n, 3, 3)),
            active=flag(), impact=flag(), near=flag(), sliding=flag(),
            gap_target=np.zeros(n), rebound=np.zeros(n), approach=np.zeros(n), restitution=np.zeros(n),
            static_friction=np.zeros(n), friction=np.zeros(n), impulse=vectors(), stage=vectors(), opened=vectors(),
            force=vectors(), prev_count=np.zeros(worlds, dtype=np.int64), prev_geom1=index(), prev_geom2=index(),
            prev_feature=index(), prev_active=flag(), prev_sliding=flag(), prev_point=vectors(), prev_force=vectors(),
            event_count=np.zeros(worlds, dtype=np.int64), event_time=np.zeros((worlds, events)),
            event_geom=np.zeros((worlds, events, 2), dtype=np.int64), event_speed=np.zeros((worlds, events)))


def dense_contacts(bodies: int) -> int:
    """Touching contacts at most in an island that a scene of ``bodies`` bodies solves in contact space."""
    return min(DENSE_CONTACTS, max(DENSE_LEAST, DENSE_PER_BODY * bodies))


class Scratch(NamedTuple):
    """Caller-owned per-step scratch (G geoms, B bodies, C contacts per world, P broad-phase pairs). The square
    matrices are S x S, S = max(3 D, C): the velocity solve's contact space holds 3 rows of each of at most D
    contacts (``dense_contacts``), the position correction's one row of each of at most C."""

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
    # (B, 6) position correction: dx (m), dtheta (rad); outside it, the bodies' (v, L) kept for a trial
    # (solve._keep_motion)
    displacement: np.ndarray
    lam: np.ndarray  # (C,) position-correction multipliers of the current pass
    pushed: np.ndarray  # (C,) the position correction's multipliers of the passes before the current one, summed
    pullable: np.ndarray  # (C,) bool: the position correction may pull it (contact.position)
    # (C,) bool: open after the drift by at most RESTING_TOUCH, it pushed in the opening kick: the position correction
    # pulls it shut, and it joins the velocity solve (contact.position)
    resting_open: np.ndarray
    pressed: np.ndarray  # (C,) bool: the contact pushed in some pass of this step's position correction
    moved: np.ndarray  # (B,) bool: the position correction moved the body by more than the margin
    stale: np.ndarray  # (B,) bool: the body's gaps were carried from an earlier pose of the drift over a turn whose
    #                    second order exceeds the margin (detect.find_contacts); found again after the first pass
    com_before: np.ndarray  # (B, 3) the bodies' poses before the position correction's last pass, m
    quat_before: np.ndarray  # (B, 4)
    first_event: np.ndarray  # (1,) int64 the index of the step's first impact event (detect._classify)
    match: np.ndarray  # (C,) int64 predecessor of each contact in the previous step's set
    touching: np.ndarray  # (G,) bool: static geom touched by the swept body at the start of the step
    quat: np.ndarray  # (4,)
    normal: np.ndarray  # (3,)
    vectors: np.ndarray  # (8, 3)
    grid: np.ndarray  # work array of the broad phase's grid (collision.broad.broad_pairs)
    motion: np.ndarray  # (B, 6) a joined response (dv, omega) of the contact-space matrix (contact.dense)
    dense: np.ndarray  # (S, S) the contact-space matrix D of the touching contacts' rows, m/s per N s (or the
    #                    position correction's, m of gap per kg m of multiplier: contact.position)
    dense_rate: np.ndarray  # (3C,) the rows' rates, m/s
    dense_start: np.ndarray  # (3C,) the rows' impulses when the contact-space sweeps began, N s
    dense_index: np.ndarray  # (C,) int64 the touching contacts' flat indices, in the order of D's rows
    dense_ready: np.ndarray  # (1,) bool: D holds the current poses' and touching set's matrix
    dense_direct: np.ndarray  # (1,) bool: the last contact-space solve ended at a direct solution (contact.dense)
    system: np.ndarray  # (S, S) the active set's equations (contact.active_set)
    system_vectors: np.ndarray  # (5, 3C) their right-hand side, solution, candidate impulses and rates (the
    #                             position correction's direct step: its targets, multipliers and 3 of scratch)
    unknowns: np.ndarray  # (3C,) int64 the rows of D that are unknowns
    # (2, 3C) int64 scratch: the elimination's column order; the position correction's sets; the rows a Newton step
    # eliminates (contact.newton)
    pivots: np.ndarray
    kinds: np.ndarray  # (C,) int64 each touching contact's part: open, sliding or sticking
    directions: np.ndarray  # (C, 2) a sliding point's friction direction in its tangent rows
    newton_vectors: np.ndarray  # (14, 3C) the semismooth Newton solve's free rates, iterates, residuals and steps,
    #                             its best point and the proximal iterations' saved D diagonal and free rates
    #                             (contact.newton)
    # (2,) int64: [0] 1 while the part of a step being solved is h / 2**CONTACT_SUBDIVISION or shorter (step._step), so
    # that a contact-space solve may end at its best inexact point (contact.newton.newton_solve); [1] such solves since
    # it was cleared
    inexact: np.ndarray
    # (S, S) the Cholesky factor of the position correction's pushing set (contact.position); a Newton step's
    # equations left to eliminate and Levenberg-Marquardt's normal equations (contact.newton)
    factor: np.ndarray
    island_parent: np.ndarray  # (B,) int64 union-find links of the bodies (contact.islands)
    island_first: np.ndarray  # (B,) int64 per component, its first (then next) slot in island_members
    island_members: np.ndarray  # (C,) int64 the touching contacts' flat indices, island after island
    island_start: np.ndarray  # (C + 1,) int64 island k's members are island_members[island_start[k]:[k + 1]]
    component_marks: np.ndarray  # (B,) int64 settle_contacts' marks per component (contact.islands)
    # (B,) per component, the largest squared impulse (N^2 s^2) of a touching contact's, opening or closing: the scale
    # of settle_contacts' unbalance
    component_load: np.ndarray
    kept_force: np.ndarray  # (C, 3) the forces settle_contacts keeps where it finds no resting reactions, N
    rest_part: np.ndarray  # (C,) int64 each contact's part in settle_contacts' trial (contact.solve._rest_reactions)
    # (B, 6) each body's world inverse inertia at the poses of the velocity solve (contact.solve) or of the position
    # correction's current pass (contact.position)
    spin: np.ndarray
    # (B, 2) int64 per moving body, the contacts that touch it of each kind: active impacts (column IMPACTS) and
    # touching, active and not near (TOUCHING) (``count_at_bodies``)
    body_contacts: np.ndarray
    chain_head: np.ndarray  # (max(B, G),) int64 the first contact of each chain by body or geom (-1: none)
    chain_next: np.ndarray  # (C,) int64 the next contact on a contact's chain (-1: the last), at its world slot
    # (C,) bool: the contact touched in the previous step too, or the set is a settled start (detect._classify); only
    # such a contact carries its force into the next step's warm start (solve.finish_solve)
    persistent: np.ndarray

    @staticmethod
    def empty(geoms: int, bodies: int, capacity: int = 64, pairs: int = 1024) -> Scratch:
        size = max(3 * dense_contacts(bodies), capacity)
        return Scratch(np.zeros((geoms, 3)), np.zeros((geoms, 3, 3)), np.zeros((geoms, 3)), np.zeros((geoms, 3)),
                       np.arange(geoms, dtype=np.int64), np.zeros(1, dtype=np.int64),
                       np.zeros((pairs, 2), dtype=np.int64), np.zeros((MAX_CONTACTS, 3)),
                       np.zeros((MAX_CONTACTS, 3)), np.zeros(MAX_CONTACTS), np.zeros(MAX_CONTACTS, dtype=np.int64),
                       np.zeros(bodies), np.zeros((bodies, 6)), np.zeros(capacity), np.zeros(capacity),
                       np.zeros(capacity, dtype=np.bool_), np.zeros(capacity, dtype=np.bool_),
                       np.zeros(capacity, dtype=np.bool_),
                       np.zeros(bodies, dtype=np.bool_), np.zeros(bodies, dtype=np.bool_), np.zeros((bodies, 3)),
                       np.zeros((bodies, 4)),
                       np.zeros(1, dtype=np.int64),
                       np.zeros(capacity, dtype=np.int64), np.zeros(geoms, dtype=np.bool_), np.zeros(4), np.zeros(3),
                       np.zeros((8, 3)), grid_scratch(geoms), np.zeros((bodies, 6)),
                       np.zeros((size, size)), np.zeros(3 * capacity), np.zeros(3 * capacity),
                       np.zeros(capacity, dtype=np.int64), np.zeros(1, dtype=np.bool_), np.zeros(1, dtype=np.bool_),
                       np.zeros((size, size)), np.zeros((5, 3 * capacity)),
                       np.zeros(3 * capacity, dtype=np.int64), np.zeros((2, 3 * capacity), dtype=np.int64),
                       np.zeros(capacity, dtype=np.int64), np.zeros((capacity, 2)), np.zeros((14, 3 * capacity)),
                       np.zeros(2, dtype=np.int64),
                       np.zeros((size, size)), np.zeros(bodies, dtype=np.int64), np.zeros(bodies, dtype=np.int64),
                       np.zeros(capacity, dtype=np.int64), np.zeros(capacity + 1, dtype=np.int64),
                       np.zeros(bodies, dtype=np.int64), np.zeros(bodies), np.zeros((capacity, 3)),
                       np.zeros(capacity, dtype=np.int64), np.zeros((bodies, 6)),
                       np.zeros((bodies, 2), dtype=np.int64), np.zeros(max(bodies, geoms), dtype=np.int64),
                       np.zeros(capacity, dtype=np.int64), np.zeros(capacity, dtype=np.bool_))


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
                 model.geom_friction[:, 0].copy(), extent, model.geom_condim.astype(np.int64))


@kernel(inline=True)
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


@kernel
def geom_poses(geoms, state, world, scratch):
    """scratch.pos/mat of every geom at the current poses of world ``world``."""
    for g in range(geoms.type.size):
        b = geoms.body[g]
        if b < 0:
            _geom_pose(geoms, g, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, scratch.pos, scratch.mat)
        else:
            c, q = state.com[world, b], state.quat[world, b]
            _geom_pose(geoms, g, c[0], c[1], c[2], q[0], q[1], q[2], q[3], scratch.pos, scratch.mat)


@kernel(inline=True)
def body_geoms_at(geoms, b, com, quat, scratch):
    """scratch.pos/mat of body b's geoms for the body pose (com (3,), quat (4,))."""
    for g in range(geoms.type.size):
        if geoms.body[g] == b:
            _geom_pose(geoms, g, com[0], com[1], com[2], quat[0], quat[1], quat[2], quat[3], scratch.pos,
                       scratch.mat)


@kernel
def _displaced(displacement, body, row, column):
    """J . (dx, dtheta) of one body's columns: the gap change from the body's correction so far (m)."""
    if body < 0:
        return 0.0
    total = 0.0
    for k in range(3):
        total += row[column + k] * displacement[body, k] + row[column + 3 + k] * displacement[body, 3 + k]
    return total


@kernel
def row_change(motion, a, b, row):
    """J . (dx, dtheta) of a 12-number row on the bodies (a, b): its gap's change (m) for the pose changes
    ``motion`` (B, 6) (dx m, dtheta rad), or its rate's change (m/s) for velocity changes (dv, omega)."""
    return _displaced(motion, a, row, LIN_A) + _displaced(motion, b, row, LIN_B)


@kernel
def along(v, row):
    """d . v for the world vector v and the direction d of a contact row (its body-b linear part)."""
    return v[0] * row[LIN_B] + v[1] * row[LIN_B + 1] + v[2] * row[LIN_B + 2]


@kernel(inline=True)
def carried_load(contacts, i):
    """Whether contact i pushed along its normal in this step's opening kick (its warm start, ``contacts.opened``)."""
    return along(contacts.opened[i], contacts.rows[i, 0]) > 0.0


# Columns of Scratch.body_contacts: the active impacts and the touching contacts (active, not near) at each body.
IMPACTS, TOUCHING = 0, 1


@kernel(inline=True)
def _kinds(contacts, i):
    """(1 if contact i is an active impact else 0, 1 if it is active and not near else 0): its counts in the columns
    of ``Scratch.body_contacts``."""
    return (1 if contacts.active[i] and contacts.impact[i] else 0,
            1 if contacts.active[i] and not contacts.near[i] else 0)


@kernel(inline=True)
def count_at_bodies(contacts, base, end, counts):
    """``counts`` (B, 2) (``Scratch.body_contacts``): per moving body, the contacts in [base, end) that touch it and
    are active impacts (column IMPACTS), or active and not near (TOUCHING)."""
    for b in range(counts.shape[0]):
        counts[b, IMPACTS], counts[b, TOUCHING] = 0, 0
    for i in range(base, end):
        add_at_bodies(contacts, i, counts)


@kernel(inline=True)
def add_at_bodies(contacts, i, counts):
    """Count contact i in ``counts`` (``count_at_bodies``) at its moving bodies, as it is now."""
    impact, touching = _kinds(contacts, i)
    for body in (contacts.body_a[i], contacts.body_b[i]):
        if body >= 0:
            counts[body, IMPACTS] += impact
            counts[body, TOUCHING] += touching


@kernel(inline=True)
def beside(contacts, counts, i, column):
    """Whether a contact other than i that ``counts`` (``count_at_bodies``, up to date) holds in ``column`` (IMPACTS:
    one that impacted in this step; TOUCHING: one that touches) acts on a moving body that contact i acts on."""
    own = _kinds(contacts, i)[column]
    for body in (contacts.body_a[i], contacts.body_b[i]):
        if body >= 0 and counts[body, column] > own:
            return True
    return False


@kernel(inline=True)
def chain_by_body(contacts, base, end, head, following):
    """Link the contacts in [base, end) into one chain per moving body, their body b's (body a's where b is static
    geometry), in ascending index: ``head`` (B,) each body's first contact, ``following`` (C,) each contact's next
    (at i - base), -1 ending a chain. The contacts of i's body pair that come after i are on i's chain."""
    for b in range(head.size):
        head[b] = -1
    for i in range(end - 1, base - 1, -1):
        key = contacts.body_b[i] if contacts.body_b[i] >= 0 else contacts.body_a[i]
        following[i - base] = head[key] if key >= 0 else -1
        if key >= 0:
            head[key] = i


# Columns of the (C, HELD_INTS) / (C, HELD_FLOATS) buffers of ``keep_contacts``.
HELD_INTS, HELD_FLOATS = 7, 42


@kernel(inline=True)
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
