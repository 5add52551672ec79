"""Confinements: one free body kept on the free side of a fixed surface, by its own dynamics after each step.

A confinement is not a force and not a contact pair. It is declared in the scene's ``<custom>`` section, one
text field per confinement::

    <text name="confinement:ball_in_tube"
          data="body=ball surface=tube margin=0.0005 rule=reflect restitution=0.9 extent=0.02"/>

``body`` names a body with a free joint; ``surface`` a static geom (plane, cylinder, box or sphere: its free
side, :mod:`mechgym.physics.surfaces`), which must not collide (contype = conaffinity = 0: it is the inside
of the confinement, not a solid); ``margin`` (m, default 0) the distance kept between what is held and the
surface; ``rule`` the velocity rule; ``restitution`` (rule=reflect only) Newton's e in [0, 1]; and either
``extent`` (m: the body's centre of mass is held at extent + margin from every face, e.g. a sphere's radius)
or ``spacing`` (m: the body's hull is held, as sample points of its geoms with every point of a curved
surface within ``spacing`` of one (:mod:`mechgym.physics.hull`), each held at ``margin`` from every face,
turning with the body). A body that starts outside is brought in by its first step.

The confinement stage (``confine``) runs after the step's velocity solves, once per step or per part of a
subdivided step:

  hold      while a held point lies beyond its held distance from a face, by d, translate the body by d along
            the face's normal (the point then lies on it); sweeps over the points until none is beyond (the
            faces of a surface are orthogonal where they meet, and the free sides convex). The body does not
            turn: a turn at fixed angular momentum changes the kinetic energy, and the holds of a box rocking on
            its corners, each turning it by the smallest motion in the kinetic-energy metric, raised its energy
            from 0.02 J to 3-10 J within 10 s.
  rule      at the points that touch a face (within HOLD_TOLERANCE of their held distance), with normal velocity
            u = n . (v + w x r) (r the lever from the centre of mass), the velocity changes by the rule:
            ``slide``   impulses along the normals, P >= 0, make every touching point's u' >= 0, with
                        u' = 0 wherever P > 0 (the inward normal velocity removed; kinetic energy never grows)
            ``reflect`` likewise with u' >= -e min(u, 0) (Newton's rule; at one point u' = -e u exactly)
            ``stop``    v = 0 and L = 0 when a touching point moves out (u < 0)
            The impulses are one projected Gauss-Seidel solve on the touching points (exact in one sweep for
            the centre, whose faces are orthogonal).

Energy. In a uniform field of gravity velocity Verlet moves a free body along its exact parabola; holding its
centre puts it back across the face by the depth d it crossed, raising its potential energy by at most the
kinetic energy 1/2 u^2 per unit mass that the parabola's normal motion gains over that depth, and ``slide``
removes it: with the centre held, the energy after the stage is never above the energy before the step. A hull
has no such bound: a point carried past a face by the body's turn may come back out within the step (u > 0 at
its end), and the hold then lifts the body with no rule to pay for it. A body resting on several points of its
hull therefore buzzes on them, at an amplitude that vanishes with the step (a 4 x 6 x 2 cm box on a plane:
its corners rise up to 0.5 mm at dt = 2 ms, 0.09 mm at 1 ms, 6 um at 0.25 ms).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import mujoco
import numpy as np

from ..errors import SceneError
from ..scene import CONFINEMENT_PREFIX, confinement_fields, name_of
from .hull import SAMPLED, geom_curvature, geom_samples, sample_count
from .jit import kernel
from .state import world_spin
from .surfaces import FACES, KIND_NAMES, SURFACE_KINDS, face_gap, free_side_curvature, inner_room
from .tolerances import HOLD_TOLERANCE, MAX_HOLD_SWEEPS, MAX_HULL_POINTS, MAX_RULE_SWEEPS, RULE_TOLERANCE
from .vectors import rot

SLIDE, REFLECT, STOP = 0, 1, 2
RULES = {"slide": SLIDE, "reflect": REFLECT, "stop": STOP}

_KEYS = {"body", "surface", "margin", "rule", "restitution", "extent", "spacing"}


class Confinements(NamedTuple):
    """Per confinement (N,) arrays, and the held points of all of them (P, 3)."""

    body: np.ndarray  # (N,) int64 engine body
    kind: np.ndarray  # (N,) int64 surfaces.PLANE | TUBE | BOX | SPHERE
    origin: np.ndarray  # (N, 3) m: the surface's centre, world
    frame: np.ndarray  # (N, 4) the surface's axes (world <- surface quaternion)
    size: np.ndarray  # (N, 3) m: MJCF size of the surface's geom
    held: np.ndarray  # (N,) m: the distance each point keeps from every face (extent + margin, or margin)
    rule: np.ndarray  # (N,) int64 SLIDE | REFLECT | STOP
    restitution: np.ndarray  # (N,) e for REFLECT, else 0
    first: np.ndarray  # (N + 1,) int64: confinement i holds points[first[i]:first[i + 1]]
    points: np.ndarray  # (P, 3) m: held points in the body's principal frame, from its centre of mass

    @staticmethod
    def empty() -> Confinements:
        index, vector = np.zeros(0, dtype=np.int64), np.zeros((0, 3))
        return Confinements(index, index, vector, np.zeros((0, 4)), vector, np.zeros(0), index, np.zeros(0),
                            np.zeros(1, dtype=np.int64), vector)


@dataclass(frozen=True)
class Declaration:
    """One ``<text name="confinement:NAME">`` as written (lengths in m)."""

    name: str
    body: str
    surface: str
    margin: float
    rule: str
    restitution: float | None
    extent: float | None
    spacing: float | None

    @property
    def field(self) -> str:
        return _field(self.name)


def _field(name: str) -> str:
    """How messages name a confinement's declaration."""
    return f"<text name='{CONFINEMENT_PREFIX}{name}'>"


def declarations(model: mujoco.MjModel) -> list[Declaration]:
    """Every confinement text field of ``model``, parsed; a malformed one raises ``SceneError``
    (custom.bad-value)."""
    return [_parse(name, data) for name, data in confinement_fields(model)]


def _parse(name: str, data: str) -> Declaration:
    field = _field(name)
    values = {}
    for token in data.split():
        key, sep, value = token.partition("=")
        if not sep or key not in _KEYS or key in values:
            raise SceneError("custom.bad-value", f"{field}: {token!r} is not one of key=value with the keys "
                             f"{sorted(_KEYS)}, each at most once")
        values[key] = value
    for key in ("body", "surface", "rule"):
        if key not in values:
            raise SceneError("custom.bad-value", f"{field} needs {key}=...")
    if ("extent" in values) == ("spacing" in values):
        raise SceneError("custom.bad-value", f"{field} needs exactly one of extent=... (hold the centre) and "
                         "spacing=... (hold the hull)")
    if "restitution" in values and values["rule"] in RULES and values["rule"] != "reflect":
        raise SceneError("custom.bad-value", f"{field}: restitution applies to rule=reflect only")
    if values["rule"] == "reflect" and "restitution" not in values:
        raise SceneError("custom.bad-value", f"{field}: rule=reflect needs restitution=e (0 <= e <= 1)")
    numbers = {key: _number(field, key, values.get(key), low, high)
               for key, low, high in (("margin", 0.0, math.inf), ("restitution", 0.0, 1.0),
                                      ("extent", 0.0, math.inf), ("spacing", 0.0, math.inf))}
    if numbers["spacing"] == 0.0:
        raise SceneError("custom.bad-value", f"{field}: spacing must be positive")
    return Declaration(name, values["body"], values["surface"], numbers["margin"] or 0.0, values["rule"],
                       numbers["restitution"], numbers["extent"], numbers["spacing"])


def _number(field: str, key: str, text: str | None, low: float, high: float) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not low <= value <= high:
        raise SceneError("custom.bad-value", f"{field}: {key}={text} must be a number in [{low}, {high}]")
    return value


def build_confinements(model: mujoco.MjModel, data: mujoco.MjData, body_index: np.ndarray,
                       joined_bodies: set[int]) -> Confinements:
    """The confinements of ``model`` checked and resolved (``SceneError`` with the codes of the README's table);
    ``data``: after ``mj_kinematics`` at qpos0 (the surfaces' poses, the geoms' in their bodies); ``body_index``
    (nbody,) maps MuJoCo bodies to engine bodies, ``joined_bodies`` holds the engine bodies that joints,
    equalities or tendons hold."""
    declared = declarations(model)
    if not declared:
        return Confinements.empty()
    resolved = [_resolve(model, data, body_index, joined_bodies, d) for d in declared]
    by_body: dict[int, list[Declaration]] = {}
    for d, (body, *_rest) in zip(declared, resolved, strict=True):
        by_body.setdefault(body, []).append(d)
    for group in by_body.values():
        if len(group) > 1:
            raise SceneError("confinement.more-than-one",
                             f"{', '.join(d.field for d in group)} all confine body '{group[0].body}'; a body "
                             "takes one confinement (projections in turn would depend on their order): keep one")
    for d in declared:
        if d.rule not in RULES:
            raise SceneError("confinement.rule", f"{d.field}: rule={d.rule} is not a velocity rule; the rules "
                             f"are {sorted(RULES)}")
    points = [p for *_rest, p in resolved]
    first = np.concatenate(([0], np.cumsum([p.shape[0] for p in points]))).astype(np.int64)
    return Confinements(
        np.array([r[0] for r in resolved], dtype=np.int64), np.array([r[1] for r in resolved], dtype=np.int64),
        np.array([r[2] for r in resolved]), np.array([r[3] for r in resolved]), np.array([r[4] for r in resolved]),
        np.array([(d.extent or 0.0) + d.margin for d in declared]),
        np.array([RULES[d.rule] for d in declared], dtype=np.int64),
        np.array([d.restitution or 0.0 for d in declared]), first, np.concatenate(points))


def _resolve(model, data, body_index, joined_bodies, d: Declaration):
    """(engine body, surface kind, origin, frame, size, held points) of one declaration, after its checks in
    the order of the README's table."""
    geom = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, d.surface)
    if geom < 0:
        raise SceneError("custom.unknown-geom", f"{d.field}: surface={d.surface} names no geom")
    mj_body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, d.body)
    if mj_body < 0:
        raise SceneError("custom.unknown-body", f"{d.field}: body={d.body} names no body")
    carrier = model.geom_bodyid[geom]
    if model.body_weldid[carrier] != 0:
        raise SceneError("confinement.moving-surface",
                         f"{d.field}: surface '{d.surface}' belongs to the moving body "
                         f"'{name_of(model, mujoco.mjtObj.mjOBJ_BODY, carrier)}'; a confinement holds a body "
                         "against a fixed surface: use a geom of the world body or of a body without joints")
    free = int(mujoco.mjtJoint.mjJNT_FREE)
    engine_body = int(body_index[mj_body])
    if (model.body_jntnum[mj_body] != 1 or model.jnt_type[model.body_jntadr[mj_body]] != free
            or engine_body in joined_bodies):
        raise SceneError("target.not-accepted",
                         f"{d.field}: body '{d.body}' is not a free rigid body (a single free joint, held by no "
                         "joint, equality or tendon); only a free body's dynamics takes a confinement")
    if model.geom_contype[geom] or model.geom_conaffinity[geom]:
        raise SceneError("confinement.surface-collides",
                         f"{d.field}: surface '{d.surface}' can collide; set contype=\"0\" conaffinity=\"0\" on "
                         "it (the confinement holds the body on its free side; as a solid it would push it out)")
    geoms = _hull_geoms(model, mj_body, d) if d.spacing is not None else np.zeros(0, dtype=np.int64)
    kind = SURFACE_KINDS.get(int(model.geom_type[geom]))
    if kind is None:
        raise SceneError("confinement.surface-shape",
                         f"{d.field}: surface '{d.surface}' is a {_geom_kind(model, geom)}, which cannot tell many "
                         f"points their distance and curvature; surfaces are {sorted(KIND_NAMES.values())} "
                         "(plane, cylinder, box and sphere geoms)")
    size = model.geom_size[geom].copy()
    if d.spacing is not None:
        curvature = max(geom_curvature(int(model.geom_type[g]), model.geom_size[g]) for g in geoms)
        _check_spacing(d, curvature + max(0.0, -free_side_curvature(kind, size)),
                       lambda spacing: sum(sample_count(int(model.geom_type[g]), model.geom_size[g], spacing)
                                           for g in geoms))
        points = _hull_points(model, data, mj_body, geoms, d.spacing)
    else:
        points = np.zeros((1, 3))
    held = (d.extent or 0.0) + d.margin
    if held >= inner_room(kind, size):
        raise SceneError("confinement.no-room",
                         f"{d.field}: the held distance {held} m (extent + margin) leaves no room inside "
                         f"'{d.surface}' ({KIND_NAMES[kind]} of size {size.tolist()} m)")
    frame = np.zeros(4)
    mujoco.mju_mat2Quat(frame, data.geom_xmat[geom])
    return engine_body, kind, data.geom_xpos[geom].copy(), frame, size, points


def _hull_geoms(model, mj_body: int, d: Declaration) -> np.ndarray:
    """The geoms of the body's hull, all of a kind that can be sampled."""
    geoms = np.flatnonzero(model.geom_bodyid == mj_body)
    if geoms.size == 0:
        raise SceneError("confinement.hull-not-held",
                         f"{d.field}: body '{d.body}' has no geom, so its dynamics holds no hull to confine; give "
                         "extent=... to hold its centre instead")
    for g in geoms:
        if int(model.geom_type[g]) not in SAMPLED:
            raise SceneError("confinement.no-hull",
                             f"{d.field}: geom '{name_of(model, mujoco.mjtObj.mjOBJ_GEOM, g)}' of body '{d.body}' "
                             f"is a {_geom_kind(model, g)}, whose surface cannot be sampled; hulls are made of "
                             f"{sorted(SAMPLED.values())} geoms (or give extent=... to hold the centre)")
    return geoms


def _hull_points(model, data, mj_body: int, geoms: np.ndarray, spacing: float) -> np.ndarray:
    """The samples of ``geoms`` at ``spacing``, in the body's principal frame from its centre of mass (m)."""
    rotation = data.ximat[mj_body].reshape(3, 3)
    parts = []
    for g in geoms:
        local = geom_samples(int(model.geom_type[g]), model.geom_size[g], spacing)
        world = data.geom_xpos[g] + local @ data.geom_xmat[g].reshape(3, 3).T
        parts.append((world - data.xipos[mj_body]) @ rotation)  # R_p^T (x - c), row by row
    return np.concatenate(parts)


def _check_spacing(d: Declaration, curvature: float, count) -> None:
    """``SceneError`` (confinement.spacing-short) unless the declaration's spacing s holds the hull within its
    margin (curvature s^2 / 2 <= margin: the bulge, :mod:`mechgym.physics.hull`) in at most MAX_HULL_POINTS
    points (``count(spacing)``: how many the hull takes at that spacing, at most); the message gives the
    spacings that pass, or the margin that some spacing needs."""
    coarsest = math.sqrt(2.0 * d.margin / curvature) if curvature > 0.0 else math.inf
    if d.spacing <= coarsest and count(d.spacing) <= MAX_HULL_POINTS:
        return
    if count(math.inf) > MAX_HULL_POINTS:
        raise SceneError("confinement.spacing-short",
                         f"{d.field}: the hull's geoms take at least {count(math.inf)} points at any spacing, more "
                         f"than the {MAX_HULL_POINTS} a confinement holds; hold the centre (extent=...) instead")
    # the finest spacing within the budget: count is non-increasing in the spacing
    low = high = d.spacing
    while count(high) > MAX_HULL_POINTS:
        low, high = high, 2.0 * high
    while count(low) <= MAX_HULL_POINTS:
        low, high = 0.5 * low, low
    for _ in range(60):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if count(middle) > MAX_HULL_POINTS else (low, middle)
    problem = (f"spacing={d.spacing} m lets the hull bulge {curvature * d.spacing ** 2 / 2:.3g} m between its "
               f"points, beyond margin={d.margin} m" if d.spacing > coarsest else
               f"spacing={d.spacing} m samples the hull at {count(d.spacing)} points, more than the "
               f"{MAX_HULL_POINTS} a confinement holds")
    if high > coarsest:
        spacing = _six_digits(high, 1)
        advice = (f"no spacing holds it within this margin in {MAX_HULL_POINTS} points: give margin >= "
                  f"{_six_digits(curvature * float(spacing) ** 2 / 2, 1)} m (with spacing {spacing} m)")
    else:
        advice = f"give spacing <= {_six_digits(coarsest, -1)} m and >= {_six_digits(high, 1)} m"
    raise SceneError("confinement.spacing-short", f"{d.field}: {problem}; {advice}")


def _six_digits(value: float, direction: int) -> str:
    """``value`` to six significant digits, rounded towards -inf (``direction`` -1) or +inf (1)."""
    unit = 10.0 ** (math.floor(math.log10(value)) - 5)
    rounded = (math.floor if direction < 0 else math.ceil)(value / unit) * unit
    return f"{rounded:.6g}"


def _geom_kind(model, geom: int) -> str:
    return mujoco.mjtGeom(int(model.geom_type[geom])).name[len("mjGEOM_"):].lower()


def check_not_a_force_target(names: set[str], target: str) -> None:
    """The post-build check: ``SceneError`` (post-build.not-by-edge) when a force is aimed at a confinement's
    name (``names``) instead of a body."""
    if target in names:
        raise SceneError("post-build.not-by-edge",
                         f"'{target}' is a confinement: its body's dynamics applies it after each step, and it "
                         "takes no force; apply the force to a body")


# ----------------------------------------------------------------- the stage


@kernel(inline=True)
def _gap(confinements, i, px, py, pz, face):
    """(gap, nx, ny, nz): how far (m) the world point (px, py, pz) lies inside face ``face`` of confinement
    ``i``'s surface beyond its held distance (>= 0: held), and the face's world normal into the free side."""
    o, q = confinements.origin[i], confinements.frame[i]
    x, y, z = rot(q[0], -q[1], -q[2], -q[3], px - o[0], py - o[1], pz - o[2])
    d, nx, ny, nz = face_gap(confinements.kind[i], confinements.size[i], x, y, z, face)
    wx, wy, wz = rot(q[0], q[1], q[2], q[3], nx, ny, nz)
    return d - confinements.held[i], wx, wy, wz


@kernel(inline=True)
def _lever(confinements, k, quat):
    """The world lever (m) of held point ``k`` from the body's centre of mass."""
    p = confinements.points[k]
    return rot(quat[0], quat[1], quat[2], quat[3], p[0], p[1], p[2])


@kernel(inline=True)
def _normal_speed(nx, ny, nz, vel, wx, wy, wz, rx, ry, rz):
    """n . (v + w x r) (m/s): the normal speed of the body's point at lever r."""
    return (nx * (vel[0] + wy * rz - wz * ry) + ny * (vel[1] + wz * rx - wx * rz)
            + nz * (vel[2] + wx * ry - wy * rx))


@kernel
def _hold(confinements, i, com, quat):
    """Translate the body (centre ``com`` (3,), principal frame ``quat`` (4,)) until every held point of
    confinement ``i`` lies within HOLD_TOLERANCE of its held distance or inside it; False if MAX_HOLD_SWEEPS do
    not do it."""
    for _ in range(MAX_HOLD_SWEEPS):
        moved = False
        for k in range(confinements.first[i], confinements.first[i + 1]):
            rx, ry, rz = _lever(confinements, k, quat)
            for face in range(FACES[confinements.kind[i]]):
                gap, nx, ny, nz = _gap(confinements, i, com[0] + rx, com[1] + ry, com[2] + rz, face)
                if gap < -HOLD_TOLERANCE:
                    com[0] -= gap * nx
                    com[1] -= gap * ny
                    com[2] -= gap * nz
                    moved = True
        if not moved:
            return True
    return False


@kernel
def _apply_rule(confinements, i, inv_mass, inv_inertia, com, vel, momentum, quat, rule_scratch):
    """Change the body's velocity ``vel`` (3,) and angular momentum ``momentum`` (3,) by confinement ``i``'s
    rule at its touching points (module docstring). ``rule_scratch`` (P, 6): per point and face, the impulse
    (N s, columns 0-2) and the target normal velocity (m/s, columns 3-5; -1 where the point does not touch the
    face). False if the projected Gauss-Seidel does not converge in MAX_RULE_SWEEPS."""
    e = confinements.restitution[i]
    faces = FACES[confinements.kind[i]]
    escaping = False
    wx, wy, wz = world_spin(quat[0], quat[1], quat[2], quat[3], inv_inertia[0], inv_inertia[1], inv_inertia[2],
                            momentum[0], momentum[1], momentum[2])
    for k in range(confinements.first[i], confinements.first[i + 1]):
        rx, ry, rz = _lever(confinements, k, quat)
        for face in range(faces):
            gap, nx, ny, nz = _gap(confinements, i, com[0] + rx, com[1] + ry, com[2] + rz, face)
            rule_scratch[k, face] = 0.0
            rule_scratch[k, 3 + face] = -1.0
            if gap <= HOLD_TOLERANCE:
                u = _normal_speed(nx, ny, nz, vel, wx, wy, wz, rx, ry, rz)
                rule_scratch[k, 3 + face] = -e * min(u, 0.0)
                escaping |= u < 0.0
    if not escaping:
        return True
    if confinements.rule[i] == STOP:
        for j in range(3):
            vel[j] = 0.0
            momentum[j] = 0.0
        return True
    for _ in range(MAX_RULE_SWEEPS):
        largest = 0.0
        for k in range(confinements.first[i], confinements.first[i + 1]):
            rx, ry, rz = _lever(confinements, k, quat)
            for face in range(faces):
                target = rule_scratch[k, 3 + face]
                if target < 0.0:
                    continue
                gap, nx, ny, nz = _gap(confinements, i, com[0] + rx, com[1] + ry, com[2] + rz, face)
                wx, wy, wz = world_spin(quat[0], quat[1], quat[2], quat[3], inv_inertia[0], inv_inertia[1],
                                        inv_inertia[2], momentum[0], momentum[1], momentum[2])
                u = _normal_speed(nx, ny, nz, vel, wx, wy, wz, rx, ry, rz)
                # the impulse P along n at the point changes u by P (1/m + (r x n) . I^-1 (r x n))
                cx, cy, cz = ry * nz - rz * ny, rz * nx - rx * nz, rx * ny - ry * nx
                sx, sy, sz = world_spin(quat[0], quat[1], quat[2], quat[3], inv_inertia[0], inv_inertia[1],
                                        inv_inertia[2], cx, cy, cz)
                stiffness = inv_mass + cx * sx + cy * sy + cz * sz
                impulse = max(0.0, rule_scratch[k, face] + (target - u) / stiffness)
                change = impulse - rule_scratch[k, face]
                rule_scratch[k, face] = impulse
                vel[0] += change * inv_mass * nx
                vel[1] += change * inv_mass * ny
                vel[2] += change * inv_mass * nz
                momentum[0] += change * cx
                momentum[1] += change * cy
                momentum[2] += change * cz
                largest = max(largest, abs(change) * stiffness)
        if largest <= RULE_TOLERANCE:
            return True
    return False


@kernel
def confine(confinements, inv_mass, inv_inertia, com, vel, momentum, quat, rule_scratch):
    """The confinement stage for one world: hold each confined body on its surface's free side, then apply its
    velocity rule (module docstring). ``inv_mass`` (B,), ``inv_inertia`` (B, 3): the bodies'; ``com``, ``vel``,
    ``momentum`` (B, 3), ``quat`` (B, 4): the world's state, changed in place; ``rule_scratch`` (P, 6): work
    array of ``_apply_rule``. False if a hold or a rule did not converge (the step fails: NOT_CONFINED)."""
    for i in range(confinements.body.size):
        b = confinements.body[i]
        if not _hold(confinements, i, com[b], quat[b]):
            return False
        if not _apply_rule(confinements, i, inv_mass[b], inv_inertia[b], com[b], vel[b], momentum[b], quat[b],
                           rule_scratch):
            return False
    return True
