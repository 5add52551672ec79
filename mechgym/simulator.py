"""The Simulator interface that every backend implements, and the value types it returns.

Units: SI throughout (m, s, kg, N, N m, rad). Frames: world unless a name says otherwise.
Quaternions are (w, x, y, z). Time is ``step_count * dt``, never accumulated.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple, TypeVar

import mujoco
import numpy as np

from .errors import SimulationError
from .scene import name_of

_INTEGER = (int, np.integer)  # what ``step`` takes as a number of steps (bool excluded)
_NOT_YET = object()  # (``Simulator.derived``: no value kept)
_COORDINATE_JOINTS = (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)  # one qpos each: springs' energy
Derived = TypeVar("Derived")


# A body's frame as one row of ``Simulator.frames``: pos (m), quat (w, x, y, z), linvel (m/s), angvel (rad/s)
FRAME_POS, FRAME_QUAT, FRAME_LINVEL, FRAME_ANGVEL, FRAME_SIZE = 0, 3, 7, 10, 13


@dataclass(frozen=True)
class BodyState:
    """Pose and velocity of a body frame: pos (m), quat (w, x, y, z), linvel (m/s) of the frame's
    origin and angvel (rad/s), all in the world frame. The arrays are read-only (``Simulator.body`` hands the
    same reading to every caller until the state changes): copy one to change it."""

    pos: np.ndarray
    quat: np.ndarray
    linvel: np.ndarray
    angvel: np.ndarray


class ReadSpec(NamedTuple):
    """What ``Simulator.read_many`` reads of each simulator: indices into its scene (int64 arrays)."""

    bodies: np.ndarray  # (B,) body ids (``body_id``) whose frames to read
    qpos: np.ndarray    # entries of qpos
    qvel: np.ndarray    # entries of qvel
    ctrl: np.ndarray    # entries of ctrl
    pairs: np.ndarray   # (P, 2) geom ids: the pairs whose touching to read (as ``touching`` has them)


class Readings(NamedTuple):
    """The readings of ``ReadSpec`` of several simulators, one row each."""

    time: np.ndarray      # (n,) s
    qpos: np.ndarray      # (n, len(spec.qpos))
    qvel: np.ndarray      # (n, len(spec.qvel))
    ctrl: np.ndarray      # (n, len(spec.ctrl))
    frames: np.ndarray    # (n, B, FRAME_SIZE): ``frames``
    touching: np.ndarray  # (n, P): 1.0 where the pair touches, else 0.0


@dataclass(frozen=True)
class Contact:
    """One contact point between two geoms, in the world frame.

    normal points from geom1 to geom2 (unit); normal_force (N, >= 0) pushes geom2 along +normal;
    friction_force (N) is the tangential force on geom2.
    """

    geom1: str
    geom2: str
    pos: np.ndarray
    normal: np.ndarray
    normal_force: float
    friction_force: np.ndarray


@dataclass(frozen=True)
class Event:
    """An impact: two geoms that were apart came into contact at ``time`` (s), closing along the
    contact normal at ``speed`` (m/s, > 0)."""

    time: float
    geom1: str
    geom2: str
    speed: float


@dataclass(frozen=True)
class ForceWindow:
    """A world-frame force (N) and torque (N m) on a body's centre of mass, active on [start, stop) s."""

    body: int
    force: np.ndarray
    torque: np.ndarray
    start: float
    stop: float

    def overlap(self, t0: float, t1: float) -> float:
        """Seconds of [t0, t1) during which the window is active."""
        return max(0.0, min(t1, self.stop) - max(t0, self.start))


@dataclass(frozen=True)
class SimState:
    """Everything needed to continue a run bit for bit; ``physics`` is backend-specific."""

    backend: str
    step_count: int
    windows: tuple[ForceWindow, ...]
    events: tuple[Event, ...]
    physics: Any


def validate_dt(dt: float) -> float:
    """Return ``dt`` as a float, or raise ``ValueError`` unless it is a positive finite number of seconds."""
    if isinstance(dt, bool) or not isinstance(dt, int | float | np.floating | np.integer):
        raise ValueError(f"dt must be a positive finite number of seconds, got {dt!r}")
    if not (math.isfinite(dt) and dt > 0):
        raise ValueError(f"dt must be a positive finite number of seconds, got {dt!r}")
    return float(dt)


def _finite_vector3(value, what: str) -> np.ndarray:
    array = np.array(value, dtype=float)
    if array.shape != (3,) or not np.isfinite(array).all():
        raise ValueError(f"{what} must be three finite numbers, got {value!r}")
    array.setflags(write=False)
    return array


def _initial_vector(name: str, value, default: np.ndarray, size: int) -> np.ndarray:
    array = np.array(default if value is None else value, dtype=float)
    if array.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},), got {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} holds non-finite values at indices {np.flatnonzero(~np.isfinite(array)).tolist()}")
    return array


def _normalise_quaternions(model: mujoco.MjModel, qpos: np.ndarray) -> None:
    """Scale each free or ball joint's quaternion in ``qpos`` to unit length (in place); zero ones are refused."""
    free, ball = int(mujoco.mjtJoint.mjJNT_FREE), int(mujoco.mjtJoint.mjJNT_BALL)
    for joint in range(model.njnt):
        kind = int(model.jnt_type[joint])
        if kind not in (free, ball):
            continue
        start = model.jnt_qposadr[joint] + (3 if kind == free else 0)
        norm = np.linalg.norm(qpos[start:start + 4])
        if norm == 0.0:
            raise ValueError(f"qpos[{start}:{start + 4}], the quaternion of joint "
                             f"{name_of(model, mujoco.mjtObj.mjOBJ_JOINT, joint)!r}, is zero")
        qpos[start:start + 4] /= norm


def _checked_steps(n) -> int:
    """``n``, a number of steps to take, as an int; ``ValueError`` unless it is a non-negative integer."""
    if isinstance(n, bool) or not isinstance(n, _INTEGER) or n < 0:
        raise ValueError(f"n must be a non-negative integer number of steps, got {n!r}")
    return int(n)


def checked_many(backend: type[Simulator], simulators: Sequence[Simulator], n) -> int:
    """``n`` as an int, for ``backend.step_many``: ``TypeError`` unless every simulator is of that backend,
    ``ValueError`` unless ``n`` is a non-negative integer and every simulator's controls are finite."""
    n = _checked_steps(n)
    for simulator in simulators:
        if not isinstance(simulator, backend):
            raise TypeError(f"{backend.__name__}.step_many steps {backend.backend_name!r} simulators only, got "
                            f"{simulator!r}")
        simulator._check_ctrl()
    return n


class Simulator(ABC):
    """A scene stepping in time on one backend. Build it with :func:`mechgym.load`."""

    backend_name: ClassVar[str]

    def __init__(self, model: mujoco.MjModel, dt: float | None):
        if dt is not None:
            model.opt.timestep = validate_dt(dt)
        self.model = model
        self._dt = validate_dt(float(model.opt.timestep))
        self._step_count = 0
        self._windows: list[ForceWindow] = []
        self._events: list[Event] = []
        self._failure: str | None = None
        # Readings of the current state, each computed once (body states by name, a backend's own, a task's
        # ``derived`` ones), emptied whenever the state changes (step, reset, set_state): a task reads the same
        # bodies several times a step.
        self._now: dict[Any, Any] = {}
        self._geom_names = [name_of(model, mujoco.mjtObj.mjOBJ_GEOM, g) for g in range(model.ngeom)]
        self._body_ids: dict[str, int] = {}  # names looked up so far (a task reads its bodies every step)
        springs = np.flatnonzero((model.jnt_stiffness != 0.0) & np.isin(model.jnt_type, _COORDINATE_JOINTS))
        self._springs = model.jnt_stiffness[springs], model.jnt_qposadr[springs]  # (``_spring_energy``)

    # ----------------------------------------------------------------- time and stepping
    @property
    def dt(self) -> float:
        """Physics time step (s)."""
        return self._dt

    @property
    def time(self) -> float:
        """Simulated time (s): exactly ``step_count * dt``."""
        return self._step_count * self._dt

    @property
    def step_count(self) -> int:
        return self._step_count

    def step(self, n: int = 1) -> None:
        """Advance ``n`` physics steps with the current controls held."""
        n = _checked_steps(n)
        if self._failure is not None:
            raise SimulationError(f"the simulation failed earlier ({self._failure}); call reset() or set_state()")
        self._check_ctrl()
        self._now.clear()
        self._advance(n)

    def try_step(self, n: int) -> str | None:
        """``step(n)``; the message of the ``SimulationError`` it raised (the simulator failed), or None."""
        try:
            self.step(n)
        except SimulationError as failed:
            return str(failed)
        return None

    @classmethod
    def step_many(cls, simulators: Sequence[Simulator], n: int, executor: Executor | None = None,
                  shares: int = 1) -> list[str | None]:
        """``try_step(n)`` of each of ``simulators`` (of this backend), in order: each one's failure message, or
        None. A bad ``n`` or non-finite controls raise ``ValueError``, and a simulator of another backend
        ``TypeError``, before any of them steps. (The in-house engine advances them in one compiled call, with the GIL
        released throughout, or, given an ``executor`` of threads, in ``shares`` calls of contiguous shares of them at
        once on its threads; MuJoCo's backend steps in Python and takes no executor.)"""
        n = checked_many(cls, simulators, n)
        return [simulator.try_step(n) for simulator in simulators]

    @classmethod
    def read_many(cls, simulators: Sequence[Simulator], spec: ReadSpec, rows: Sequence[int], out: Readings) -> None:
        """Write the readings ``spec`` of each of ``simulators`` (of this backend) at its current state into the row of
        ``out`` that ``rows`` gives it (a task reads the same few things of each of its episodes every control step;
        the in-house engine reads them all in one compiled call)."""
        for simulator, row in zip(simulators, rows, strict=True):
            simulator._read_into(spec, out, row)

    def _read_into(self, spec: ReadSpec, out: Readings, row: int) -> None:
        out.time[row] = self.time
        if spec.qpos.size:
            out.qpos[row] = self.qpos[spec.qpos]
        if spec.qvel.size:
            out.qvel[row] = self.qvel[spec.qvel]
        if spec.ctrl.size:
            out.ctrl[row] = self.ctrl[spec.ctrl]
        self.frames(spec.bodies, out.frames[row])
        if spec.pairs.size:
            touching = self._touching_ids()
            out.touching[row] = [(a, b) in touching or (b, a) in touching for a, b in spec.pairs.tolist()]

    def _check_ctrl(self) -> None:
        ctrl = self.ctrl
        if not all(map(math.isfinite, ctrl.tolist())):  # (a fifth of np.isfinite(ctrl).all()'s time on a few)
            bad = [self._actuator_name(i) for i in np.flatnonzero(~np.isfinite(ctrl))]
            raise ValueError(f"ctrl holds non-finite values for actuators {bad}")

    def _fail(self, message: str) -> None:
        """Mark the run failed and raise; no non-finite state is ever handed out."""
        self._failure = f"t = {self.time:.6g} s: {message}"
        raise SimulationError(self._failure)

    # ----------------------------------------------------------------- inputs
    @property
    def ctrl(self) -> np.ndarray:
        """Writable (nu,) control vector with MJCF actuator semantics (ctrlrange clamps when limited)."""
        return self._ctrl_array()

    @ctrl.setter
    def ctrl(self, value) -> None:
        array = np.asarray(value, dtype=float)
        if array.shape != (self.model.nu,):
            raise ValueError(f"ctrl must have shape ({self.model.nu},), got {array.shape}")
        self._ctrl_array()[:] = array

    def apply_force(self, body: str, force, torque=(0.0, 0.0, 0.0), start: float = 0.0,
                    stop: float = float("inf")) -> None:
        """Apply a world-frame force (N) and torque (N m) at ``body``'s centre of mass on [start, stop) s.

        A window that opens or closes inside a step delivers exactly force x overlap.
        """
        start, stop = float(start), float(stop)
        if not (math.isfinite(start) and stop > start) or math.isnan(stop):
            raise ValueError(f"the force window needs a finite start before its stop, got [{start}, {stop})")
        self._windows.append(ForceWindow(self.body_id(body), _finite_vector3(force, "force"),
                                         _finite_vector3(torque, "torque"), start, stop))

    # ----------------------------------------------------------------- names
    def body_id(self, name: str) -> int:
        """Index of a named body; ``ValueError`` naming the valid bodies otherwise."""
        index = self._body_ids.get(name) if isinstance(name, str) else None
        if index is None:
            index = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, name) if isinstance(name, str) else -1
            if index < 0:
                names = [mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(self.model.nbody)]
                raise ValueError(f"unknown body {name!r}; bodies are {[n for n in names if n]}")
            self._body_ids[name] = index
        return index

    def geom_name(self, index: int) -> str:
        return self._geom_names[index]

    def _actuator_name(self, index: int) -> str:
        return name_of(self.model, mujoco.mjtObj.mjOBJ_ACTUATOR, index)

    # ----------------------------------------------------------------- observations
    def body(self, name: str) -> BodyState:
        """World-frame pose and velocity of a named body's frame (read-only arrays)."""
        key = ("body", name)
        state = self._now.get(key) if isinstance(name, str) else None
        if state is None:
            frame = np.empty((1, FRAME_SIZE))
            self.frames(np.array([self.body_id(name)]), frame)
            frame.setflags(write=False)
            state = self._now[key] = BodyState(*np.split(frame[0], [FRAME_QUAT, FRAME_LINVEL, FRAME_ANGVEL]))
        return state

    def derived(self, compute: Callable[[], Derived]) -> Derived:
        """``compute()``, called once per state: a reading that a task derives from the current state alone and
        uses several times a step. The value is kept, under ``compute`` (a function, or a bound method: each
        access makes a new one, equal to the last), until the state changes (step, reset, set_state); treat it as
        read-only."""
        value = self._now.get(compute, _NOT_YET)
        if value is _NOT_YET:
            value = self._now[compute] = compute()
        return value

    @property
    def events(self) -> list[Event]:
        """Impacts so far, in time order."""
        return list(self._events)

    def events_since(self, start: int) -> list[Event]:
        """``events[start:]`` without copying the earlier ones (a task reads the new impacts every step)."""
        return self._events[start:]

    # ----------------------------------------------------------------- state
    def get_state(self) -> SimState:
        return SimState(self.backend_name, self._step_count, tuple(self._windows), tuple(self._events),
                        self._physics_state())

    def set_state(self, state: SimState) -> None:
        """Restore a state from ``get_state``; the continuation then repeats bit for bit."""
        if not isinstance(state, SimState) or state.backend != self.backend_name:
            raise ValueError(f"set_state needs a SimState from a {self.backend_name!r} simulator")
        self._now.clear()
        self._restore_physics(state.physics)
        self._step_count = state.step_count
        self._windows = list(state.windows)
        self._events = list(state.events)
        self._failure = None

    def reset(self, qpos=None, qvel=None, ctrl=None) -> None:
        """Back to time 0 at an initial state; clears applied forces and events.

        The state is the scene's first keyframe (else ``qpos0`` at rest with zero controls); ``qpos`` (nq,),
        ``qvel`` (nv,) in MuJoCo's joint layout and ``ctrl`` (nu,), when given, replace the keyframe's.
        Free and ball joints' quaternions are normalised. Bad shapes or non-finite values raise ``ValueError``. On the
        in-house engine, whose limits, equalities and ropes are hard, a hinge or slide beyond its range starts at the
        bound, and bodies that an equality or a rope does not hold are moved onto it (each with a ``StartWarning``).
        """
        model = self.model
        keyed = model.nkey > 0
        start = (
            _initial_vector("qpos", qpos, model.key_qpos[0] if keyed else model.qpos0, model.nq),
            _initial_vector("qvel", qvel, model.key_qvel[0] if keyed else np.zeros(model.nv), model.nv),
            _initial_vector("ctrl", ctrl, model.key_ctrl[0] if keyed else np.zeros(model.nu), model.nu),
        )
        _normalise_quaternions(model, start[0])
        self._now.clear()
        self._step_count = 0
        self._windows = []
        self._events = []
        self._failure = None
        self._reset_physics(*start)

    # ----------------------------------------------------------------- backend hooks
    @property
    @abstractmethod
    def qpos(self) -> np.ndarray:
        """Copy of the generalized positions in MuJoCo's joint layout for this scene."""

    @property
    @abstractmethod
    def qvel(self) -> np.ndarray:
        """Copy of the generalized velocities in MuJoCo's joint layout for this scene."""

    @abstractmethod
    def energy(self) -> float:
        """Kinetic plus gravitational potential energy, plus the hinge, slide and tendon springs' (J)."""

    def _spring_energy(self, tendon_length: Callable[[], np.ndarray]) -> float:
        """sum 1/2 stiffness stretch^2 (J) over the hinge and slide joints with a stiffness (stretch: qpos -
        qpos_spring) and the tendons with one (stretch: the length beyond the rest lengths, tendon_lengthspring),
        their lengths (ntendon,) from ``tendon_length()``, asked only in a scene with such a tendon."""
        model = self.model
        stiffness, adr = self._springs
        total = 0.0
        if stiffness.size:
            stretch = self.qpos[adr] - model.qpos_spring[adr]
            total += 0.5 * float(stiffness @ (stretch * stretch))
        tendons = np.flatnonzero(model.tendon_stiffness)
        if tendons.size:
            length, rest = tendon_length()[tendons], model.tendon_lengthspring[tendons]
            stretch = length - np.clip(length, rest[:, 0], rest[:, 1])
            total += 0.5 * float(model.tendon_stiffness[tendons] @ (stretch * stretch))
        return total

    @abstractmethod
    def contacts(self) -> list[Contact]:
        """Contacts at the current state, with the forces that hold them (see :class:`Contact`)."""

    @abstractmethod
    def frames(self, bodies: np.ndarray, out: np.ndarray) -> None:
        """Write the world frames of the bodies with these indices (``body_id``) into the rows of ``out``
        (len(bodies), FRAME_SIZE): what ``body`` reads, in one array (a task reads a few bodies every control step)."""

    def touching(self) -> set[frozenset[str]]:
        """The geom pairs (names) of ``contacts()``, without computing their forces: a task that asks which
        geoms touch every step."""
        names = self._geom_names
        return {frozenset((names[a], names[b])) for a, b in self._touching_ids()}

    @abstractmethod
    def _touching_ids(self) -> set[tuple[int, int]]:
        """``touching()``'s pairs as geom ids, each in the order the backend found it."""

    @abstractmethod
    def _ctrl_array(self) -> np.ndarray: ...

    @abstractmethod
    def _advance(self, n: int) -> None: ...

    @abstractmethod
    def _physics_state(self) -> Any: ...

    @abstractmethod
    def _restore_physics(self, physics: Any) -> None: ...

    @abstractmethod
    def _reset_physics(self, qpos: np.ndarray, qvel: np.ndarray, ctrl: np.ndarray) -> None:
        """Put the physics at this initial state (qpos, qvel in MuJoCo's layout; ctrl), all else at its reset value."""
