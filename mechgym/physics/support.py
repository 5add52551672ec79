"""What the engine runs: rigid bodies on free, hinge, slide, ball and planar joints (RATTLE rows), equality
connects, body welds, rods and ropes (spatial tendons between two sites), under gravity, fluid forces,
free/hinge/slide joint damping, hinge/slide joint armature, hinge/slide joint and tendon springs and actuators.

:func:`check_supported` raises ``SceneError(code, message)`` for every MJCF feature of a compiled model
that the engine would otherwise ignore; ``joints.build_constraints`` (called by ``model.build_model``)
raises for joint, equality and tendon combinations it cannot express as rows. Codes:

- ``joint.unsupported``: a joint with friction loss, polynomial damping, polynomial stiffness, actuator force
  limits or actuator gravity compensation; stiffness or damping on a ball joint, stiffness or armature on a ball or
  free joint; joint combinations other than those listed above (joints.py);
- ``body.welded``: a body without a joint under a moving body (composite bodies are not merged);
- ``body.unsupported``: gravity compensation;
- ``contact.unsupported``: an explicit ``<pair>``; an ``<exclude>`` in a scene whose geoms can collide;
  torsional or rolling friction (a colliding geom with condim 4 or 6); a colliding geom with a contact
  priority;
- ``contact.unsupported-pair``: two geoms that can collide whose types the narrow phase does not handle
  (``collision.narrow.supported_pair``);
- ``actuator.unsupported``: activation dynamics, transmissions other than a free, hinge or slide joint or
  a site without refsite, gain or bias types other than fixed/affine, actuator damping, armature, delay,
  plugins or multi-input actuators;
- ``equality.unsupported``: equality kinds other than connect, body weld and single-tendon (joints.py);
- ``tendon.unsupported``: tendons other than spatial between two sites (joints.py), tendon damping,
  friction loss or armature;
- ``flex.unsupported``, ``plugin.unsupported``;
- ``fluid.unsupported``: the ellipsoid fluid model (``fluidshape="ellipsoid"``);
- ``option.unsupported``: disable/enable flags that would change the dynamics and that the engine does
  not honour, or ``disableactuator`` groups.

Joint limits, equalities and tendons are enforced exactly: their solref/solimp softness is ignored.
"""

from __future__ import annotations

import mujoco
import numpy as np

from ..errors import SceneError
from ..scene import name_of
from .collision.narrow import supported_pair

_OBJ = mujoco.mjtObj
_DISABLE = mujoco.mjtDisableBit
_ENABLE = mujoco.mjtEnableBit

# Honoured: GRAVITY, ACTUATION, CLAMPCTRL, FILTERPARENT. CONTACT and CONSTRAINT switch collisions off, which
# makes colliding geoms acceptable. EQUALITY and LIMIT would switch off rows the engine always enforces. The
# rest only concern solvers, collision internals or sensors, none of which the engine has.
_DISABLE_UNSUPPORTED = (_DISABLE.mjDSBL_SPRING, _DISABLE.mjDSBL_DAMPER, _DISABLE.mjDSBL_EQUALITY,
                        _DISABLE.mjDSBL_LIMIT)
_ENABLE_UNSUPPORTED = (_ENABLE.mjENBL_SLEEP, _ENABLE.mjENBL_IPC)


def contacts_disabled(model: mujoco.MjModel) -> bool:
    """True when the scene switches collisions off (``<flag contact="disable"/>`` or constraints off)."""
    flags = model.opt.disableflags
    return bool(flags & (_DISABLE.mjDSBL_CONTACT | _DISABLE.mjDSBL_CONSTRAINT))


def check_supported(model: mujoco.MjModel) -> None:
    """Raise ``SceneError`` for the first MJCF feature in ``model`` that the engine does not simulate."""
    _check_options(model)
    _check_counts(model)
    _check_joints(model)
    _check_tendons(model)
    _check_bodies(model)
    _check_actuators(model)
    _check_fluid(model)
    if not contacts_disabled(model):
        _check_contacts(model)


def _check_options(model: mujoco.MjModel) -> None:
    for flag in _DISABLE_UNSUPPORTED:
        if model.opt.disableflags & flag:
            raise SceneError("option.unsupported", f"<option><flag>: disabling {flag.name} is not supported")
    for flag in _ENABLE_UNSUPPORTED:
        if model.opt.enableflags & flag:
            raise SceneError("option.unsupported", f"<option><flag>: enabling {flag.name} is not supported")
    if model.opt.disableactuator:
        raise SceneError("option.unsupported", "<option actuatorgroupdisable> is not supported")
    constrained = model.neq > 0 or bool(model.jnt_limited.any()) or bool(model.tendon_limited.any())
    if model.opt.disableflags & _DISABLE.mjDSBL_CONSTRAINT and constrained:
        # MuJoCo then drops joint limits, equalities and tendon limits; the engine enforces them exactly.
        raise SceneError("option.unsupported", "<option><flag constraint='disable'> switches off the scene's joint "
                                               "limits, equalities or tendon limits, which the engine enforces")


def _check_counts(model: mujoco.MjModel) -> None:
    for count, code, what in (
        (model.nflex, "flex.unsupported", "<flex>/<flexcomp> deformables are not supported"),
        (model.nplugin, "plugin.unsupported", "<plugin> instances are not supported"),
    ):
        if count:
            raise SceneError(code, f"{what} (the scene has {count})")


def _check_joints(model: mujoco.MjModel) -> None:
    dof_count = {int(mujoco.mjtJoint.mjJNT_FREE): 6, int(mujoco.mjtJoint.mjJNT_BALL): 3}
    for j in range(model.njnt):
        name = name_of(model, _OBJ.mjOBJ_JOINT, j)
        kind = int(model.jnt_type[j])
        dofs = slice(model.jnt_dofadr[j], model.jnt_dofadr[j] + dof_count.get(kind, 1))
        for feature, value in (
            ("stiffness on a ball or free joint", kind in dof_count and model.jnt_stiffness[j]),
            ("stiffness polynomial", np.abs(model.jnt_stiffnesspoly[j]).max()),
            ("armature on a ball or free joint", kind in dof_count and np.abs(model.dof_armature[dofs]).max()),
            ("frictionloss", np.abs(model.dof_frictionloss[dofs]).max()),
            ("damping polynomial", np.abs(model.dof_dampingpoly[dofs]).max()),
            ("damping on a ball joint", kind == int(mujoco.mjtJoint.mjJNT_BALL) and np.any(model.dof_damping[dofs])),
            ("actuatorfrcrange", model.jnt_actfrclimited[j]),
            ("actuatorgravcomp", model.jnt_actgravcomp[j]),
        ):
            if value:
                raise SceneError("joint.unsupported", f"<joint name='{name}'>: {feature} is not supported")


def _check_tendons(model: mujoco.MjModel) -> None:
    for t in range(model.ntendon):
        for feature, value in (("damping", model.tendon_damping[t]),
                               ("frictionloss", model.tendon_frictionloss[t]),
                               ("armature", model.tendon_armature[t])):
            if np.any(value):
                raise SceneError("tendon.unsupported", f"<tendon name='{name_of(model, _OBJ.mjOBJ_TENDON, t)}'>: "
                                 f"{feature} is not supported")


def _check_bodies(model: mujoco.MjModel) -> None:
    for b in range(1, model.nbody):
        name = name_of(model, _OBJ.mjOBJ_BODY, b)
        weld = model.body_weldid[b]
        if model.body_jntnum[b] == 0 and weld != 0:
            raise SceneError("body.welded",
                             f"<body name='{name}'> has no joint and is welded to the moving body "
                             f"'{name_of(model, _OBJ.mjOBJ_BODY, weld)}'; put its geoms in that body instead")
        if model.body_gravcomp[b]:
            raise SceneError("body.unsupported", f"<body name='{name}'>: gravcomp is not supported")


def _check_actuators(model: mujoco.MjModel) -> None:
    trn_ok = (int(mujoco.mjtTrn.mjTRN_JOINT), int(mujoco.mjtTrn.mjTRN_JOINTINPARENT), int(mujoco.mjtTrn.mjTRN_SITE))
    gain_ok = (int(mujoco.mjtGain.mjGAIN_FIXED), int(mujoco.mjtGain.mjGAIN_AFFINE))
    bias_ok = (int(mujoco.mjtBias.mjBIAS_NONE), int(mujoco.mjtBias.mjBIAS_AFFINE))
    for i in range(model.nu):
        name = name_of(model, _OBJ.mjOBJ_ACTUATOR, i)
        trn = mujoco.mjtTrn(model.actuator_trntype[i])
        problems = []
        if int(model.actuator_dyntype[i]) != int(mujoco.mjtDyn.mjDYN_NONE):
            problems.append(f"activation dynamics {mujoco.mjtDyn(model.actuator_dyntype[i]).name}")
        if int(trn) not in trn_ok:
            problems.append(f"transmission {trn.name}")
        elif trn != mujoco.mjtTrn.mjTRN_SITE and model.jnt_type[model.actuator_trnid[i, 0]] == int(
                mujoco.mjtJoint.mjJNT_BALL):
            problems.append("a ball joint transmission")
        elif trn == mujoco.mjtTrn.mjTRN_SITE and model.actuator_trnid[i, 1] >= 0:
            problems.append("a site transmission with refsite")
        if int(model.actuator_gaintype[i]) not in gain_ok:
            problems.append(f"gain type {mujoco.mjtGain(model.actuator_gaintype[i]).name}")
        if int(model.actuator_biastype[i]) not in bias_ok:
            problems.append(f"bias type {mujoco.mjtBias(model.actuator_biastype[i]).name}")
        for feature, value in (("damping", model.actuator_damping[i]), ("armature", model.actuator_armature[i]),
                               ("delay", model.actuator_delay[i]), ("plugin", model.actuator_plugin[i] >= 0),
                               ("several controls", model.actuator_ctrlnum[i] != 1),
                               ("several outputs", model.actuator_outnum[i] != 1)):
            if np.any(value):
                problems.append(feature)
        if problems:
            raise SceneError("actuator.unsupported", f"<actuator name='{name}'>: {', '.join(problems)} "
                                                     "not supported")


def _check_fluid(model: mujoco.MjModel) -> None:
    if model.opt.density <= 0 and model.opt.viscosity <= 0:
        return
    for g in range(model.ngeom):
        if model.geom_fluid[g, 0] > 0:
            raise SceneError("fluid.unsupported", f"<geom name='{name_of(model, _OBJ.mjOBJ_GEOM, g)}'>: "
                                                  "fluidshape='ellipsoid' is not supported (inertia-box model only)")


def colliding_pairs(model: mujoco.MjModel) -> tuple[np.ndarray, np.ndarray]:
    """(g1, g2) (P,) of the geom pairs that can collide: MuJoCo's filter, geoms of different weld bodies
    whose contype/conaffinity bits meet, unless their bodies' pair is excluded (signature (b1 << 16) + b2
    with b1 < b2) or, with the parent filter on, one weld body is the other's parent weld body and neither is
    the world. Empty when contacts are disabled."""
    if contacts_disabled(model):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    body = model.geom_bodyid.astype(np.int64)
    weld = model.body_weldid[body]
    parent = model.body_weldid[model.body_parentid[weld]]
    contype, conaffinity = model.geom_contype, model.geom_conaffinity
    g1, g2 = np.triu_indices(model.ngeom, k=1)
    signature = (np.minimum(body[g1], body[g2]) << 16) + np.maximum(body[g1], body[g2])
    family = (weld[g1] != 0) & (weld[g2] != 0) & ((weld[g1] == parent[g2]) | (weld[g2] == parent[g1]))
    if model.opt.disableflags & _DISABLE.mjDSBL_FILTERPARENT:
        family[:] = False
    collide = ((weld[g1] != weld[g2]) & ~np.isin(signature, model.exclude_signature) & ~family
               & (((contype[g1] & conaffinity[g2]) != 0) | ((contype[g2] & conaffinity[g1]) != 0)))
    return g1[collide].astype(np.int64), g2[collide].astype(np.int64)


def _geom(model: mujoco.MjModel, g: int) -> str:
    return f"<geom name='{name_of(model, _OBJ.mjOBJ_GEOM, g)}'>"


def _check_contacts(model: mujoco.MjModel) -> None:
    if model.npair:
        raise SceneError("contact.unsupported",
                         f"<contact><pair> ({model.npair}): explicit contact pairs are not supported")
    g1, g2 = colliding_pairs(model)
    if g1.size and model.nexclude:
        # the engine's broad phase filters by contype/conaffinity and the parent rule only
        raise SceneError("contact.unsupported", f"<contact><exclude> ({model.nexclude}) in a scene whose geoms "
                                                f"can collide ({_geom(model, g1[0])} and {_geom(model, g2[0])}) "
                                                "is not supported")
    for g in np.unique(np.concatenate((g1, g2))):
        if model.geom_condim[g] not in (1, 3):
            raise SceneError("contact.unsupported", f"{_geom(model, g)} has condim={model.geom_condim[g]}: torsional "
                                                    "and rolling friction are not supported (condim 1 or 3)")
        if model.geom_priority[g] != 0:
            raise SceneError("contact.unsupported", f"{_geom(model, g)} has priority={model.geom_priority[g]}: "
                                                    "contact priorities are not supported")
    for a, b in zip(g1, g2, strict=True):
        if not supported_pair(model.geom_type[a], model.geom_type[b]):
            types = (mujoco.mjtGeom(model.geom_type[a]).name, mujoco.mjtGeom(model.geom_type[b]).name)
            raise SceneError("contact.unsupported-pair",
                             f"{_geom(model, a)} and {_geom(model, b)} can collide, but contacts between "
                             f"{types[0]} and {types[1]} geoms are not supported")
