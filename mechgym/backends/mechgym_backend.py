"""``backend="mechgym"``: the in-house engine (rigid bodies by velocity Verlet; joints, equalities, rods and
ropes enforced exactly by RATTLE; contacts, friction and impacts solved together with them).

The scene is compiled by MuJoCo and read into the engine's own arrays (:mod:`mechgym.physics`); features
the engine does not simulate raise ``SceneError``. The engine keeps one world (W = 1) of state in maximal
coordinates (per body: COM, principal axes, COM velocity, world angular momentum; plus the hinge turns and
the constraint impulses of the last step, and the contact set: the contacts of the last step with their
forces, which the next step continues, and the broad phase's sort order) and converts to MuJoCo's qpos/qvel
layout (free joints from the body, hinge/slide/ball joints from the constraint rows) and body frames on
request. ``n`` steps are one compiled call; force windows travel into the kernel, which integrates each one
exactly over the half-step every kick serves. A step that turns the state non-finite (or whose implicit
kick, constraint projection or contact solve does not converge) is taken again in parts, down to dt / 1024
(``physics.tolerances.MAX_SUBDIVISION``; ``subdivided_steps`` counts such steps since the last reset); one that
fails even so is undone by the kernel and reported through ``_fail``; the state stays the last good one. In a
part of dt / 64 or shorter, a contact solve whose exact tries all stalled ends at its best point if that meets the
Coulomb conditions to ``physics.tolerances.INEXACT_VELOCITY`` (``inexact_solves`` counts them since the last
reset). Impacts the kernel records become ``events``.
"""

from __future__ import annotations

import math
import sys
import warnings
from itertools import repeat

import mujoco
import numpy as np
from numba import njit
from numba.core import event

from ..errors import SimulationError, StartWarning
from ..physics import State, StepScratch, Windows, build_model
from ..physics.confinement import check_not_a_force_target
from ..physics.constraints import DISTANCE, LIN_B
from ..physics.contact import ContactSet, Scratch
from ..physics.dispatch import Direct, Packed, stack, unpack
from ..physics.joints import READ_ANGVEL, READ_LINVEL, READ_POS, READ_QUAT, Reading, state_from_mujoco, turns_from_qpos
from ..physics.state import energy
from ..physics.step import (
    ADVANCE,
    NON_FINITE,
    NOT_CONFINED,
    NOT_CONVERGED,
    NOT_PROJECTED,
    OK,
    READ,
    START_CONTACTS,
    TOO_MANY_CONTACTS,
    run,
    start_on_rows,
)
from ..physics.tolerances import MAX_SUBDIVISION
from ..scene import confinement_names, name_of
from ..simulator import FRAME_ANGVEL, FRAME_LINVEL, FRAME_POS, FRAME_QUAT, Contact, Event, Simulator, checked_many

# Contact set capacity per world: contacts and broad-phase pairs at least, and per moving body and per geom
# (a box resting on a face has 4 contacts, on an edge of another box up to 8), impacts recorded per
# ``step(n)`` call.
CONTACTS, CONTACTS_PER_BODY, PAIRS, PAIRS_PER_GEOM, EVENTS = 64, 8, 1024, 16, 1024
# m or rad: an equality that a reset starts further off than this is moved onto, and one that a failing step started
# further off is named in the failure (``_rows_off``); a step leaves its rows within the solver's tolerance (1e-12 and
# below), and MuJoCo's measure of them differs from the engine's by round-off
EQUALITY_OFF = 1e-9

_NO_WINDOWS = Windows.empty()
_RUN = Direct(run)  # (``step_many``'s: every simulator's own for its ``step``)
_START_ON_ROWS = Direct(start_on_rows)
_READ = "read"  # a key of Simulator._now: the reading arrays hold the current state (step.run read it after stepping)

COMPILE_NOTICE = ("mechgym: compiling the in-house engine's numba kernels (first run on this machine only; "
                  "about two minutes on 2 cores)")


class _CompileNotice(event.Listener):
    """Prints COMPILE_NOTICE on stderr, once per process, when numba starts compiling an engine kernel (it
    found no cached copy: numba's ``numba:compile`` event is not raised for a cache hit)."""

    def __init__(self) -> None:
        self.said = False

    def on_start(self, ev) -> None:
        # every numba compile in the process comes here: read the event defensively
        function = getattr(ev.data.get("dispatcher"), "py_func", None)
        if not self.said and (getattr(function, "__module__", None) or "").startswith("mechgym.physics"):
            self.said = True
            print(COMPILE_NOTICE, file=sys.stderr, flush=True)

    def on_end(self, ev) -> None:
        pass


event.register("numba:compile", _CompileNotice())


@njit(cache=True)
def _gather_frames(bodies, body_index, readings, static_pos, static_quat, out):
    """``Simulator.frames``: each MuJoCo body's row of the engine's readings (B, READING_SIZE), or a static
    body's pose at rest."""
    for k in range(bodies.size):  # (element by element: numba compiles an array assignment's shape error, 2 s)
        body, frame = bodies[k], out[k]
        engine = body_index[body]
        for j in range(3):
            frame[FRAME_POS + j] = static_pos[body, j] if engine < 0 else readings[engine, READ_POS + j]
            frame[FRAME_LINVEL + j] = 0.0 if engine < 0 else readings[engine, READ_LINVEL + j]
            frame[FRAME_ANGVEL + j] = 0.0 if engine < 0 else readings[engine, READ_ANGVEL + j]
        for j in range(4):
            frame[FRAME_QUAT + j] = static_quat[body, j] if engine < 0 else readings[engine, READ_QUAT + j]


@njit(cache=True, nogil=True)
def _gather_readings(blocks, kind, bodies, qpos_at, qvel_at, ctrl_at, pairs, rows, qpos, qvel, ctrl, frames,
                     touching):
    """``read_many``: the rows ``rows`` of the ``Readings`` arrays (qpos to touching) from the simulators' packed
    ``_readable`` arrays (``blocks``, one row each; ``kind``: their ``Packed.kind``)."""
    for s in range(len(blocks)):
        (state_qpos, state_qvel, readings, state_ctrl, count, geom1, geom2, active, body_index, static_pos,
         static_quat) = unpack(blocks[s], kind)
        row = rows[s]
        for k in range(qpos_at.size):
            qpos[row, k] = state_qpos[qpos_at[k]]
        for k in range(qvel_at.size):
            qvel[row, k] = state_qvel[qvel_at[k]]
        for k in range(ctrl_at.size):
            ctrl[row, k] = state_ctrl[0, ctrl_at[k]]
        _gather_frames(bodies, body_index, readings, static_pos, static_quat, frames[row])
        found = min(count[0], geom1.size)
        for p in range(pairs.shape[0]):
            a, b = pairs[p, 0], pairs[p, 1]
            touching[row, p] = 0.0
            for c in range(found):
                if active[c] and ((geom1[c] == a and geom2[c] == b) or (geom1[c] == b and geom2[c] == a)):
                    touching[row, p] = 1.0


_GATHER = Direct(_gather_readings)


class MechgymSimulator(Simulator):
    backend_name = "mechgym"

    def __init__(self, model, dt):
        super().__init__(model, dt)
        self.engine = build_model(model)
        linkage = self.engine.linkage
        self._state = State.zeros(1, self.engine.mj_body.size, linkage.coordinates.rows.kind.size,
                                  linkage.rows.kind.size)
        self._ctrl = np.zeros((1, model.nu))
        self._status = np.zeros((1, 4), dtype=np.int64)
        bodies = self.engine.mj_body.size
        self._capacity = max(CONTACTS, CONTACTS_PER_BODY * bodies)
        self._pairs = max(PAIRS, PAIRS_PER_GEOM * model.ngeom)
        self._contacts = ContactSet.empty(1, self._capacity, EVENTS)
        self._scratch = Scratch.empty(model.ngeom, bodies, self._capacity, self._pairs)
        self._step_scratch = StepScratch.fitting(self._state, linkage, self._contacts, self.engine.confinements)
        # the engine's entry point, stepping and at resets, without the dispatcher's per-call typing and with the
        # arrays that stay the same objects packed into one (physics.dispatch)
        self._run = Direct(run)
        self._first_step = np.zeros(1, dtype=np.int64)  # (scratch: the kernel's global step count)
        engine = self.engine
        self._reading_arrays = Reading.empty(engine.free, engine.qposadr, engine.dofadr, engine.nq, engine.nv,
                                             engine.mj_body.size, linkage.coordinates.rows.kind.size)
        self._packed = Packed(engine.bodies, engine.actuators, engine.env, linkage, engine.geoms, engine.confinements,
                              self._state, self._contacts, self._scratch, self._ctrl, self._status, self._step_scratch,
                              self._reading_arrays)
        # what ``read_many`` reads, packed likewise (a task reads it every control step)
        contacts = self._contacts
        self._readable = Packed(self._reading_arrays.qpos, self._reading_arrays.qvel, self._reading_arrays.bodies,
                                self._ctrl, contacts.count, contacts.geom1, contacts.geom2, contacts.active,
                                engine.body_index, engine.static_pos, engine.static_quat)
        # a MuJoCo data for the initial poses' frames at a reset (an RL run resets every few hundred steps)
        self._reset_data = mujoco.MjData(model)
        # the limited hinges and slides (joint ids, qpos addresses) that a reset keeps within their ranges, and those
        # whose start beyond one was warned of (``_start_within_ranges``)
        limited = np.flatnonzero(model.jnt_limited & np.isin(model.jnt_type, (mujoco.mjtJoint.mjJNT_HINGE,
                                                                               mujoco.mjtJoint.mjJNT_SLIDE)))
        self._limited = limited, model.jnt_qposadr[limited]
        # whether a start can violate a row that a reset must move the bodies onto (``_start_on_rows``); the joints,
        # equalities and ropes whose start was warned of, by (kind, id)
        self._equalities_or_ropes = model.neq > 0 or bool(model.tendon_limited.any())
        self._warned_starts: set[tuple[str, int]] = set()
        self._armed = np.flatnonzero(model.dof_armature)  # the hinge and slide dofs with an armature (``energy``)
        self.reset()

    # ----------------------------------------------------------------- stepping
    def _advance(self, n: int) -> None:
        while n > 0:
            self._first_step[0] = self._step_count
            self._run(ADVANCE, self._packed.alone, self._packed.kind, self._window_arrays(), self._first_step, n,
                      self._dt)
            self._now[_READ] = True  # (the call read the state its steps left)
            n -= self._take_status()

    def _take_status(self) -> int:
        """After the kernel ran: collect the impacts it recorded, count its steps, raise its failure; the steps it
        took. (It stops early, status OK, before its event buffer could overflow; the caller goes on from there.
        Only a single step taken in parts that records more impacts than the buffer holds loses the rest.)"""
        if self._contacts.event_count[0]:
            self._collect_events()
        done, code, in_parts, inexact = self._status[0].tolist()
        self._step_count += done
        self.subdivided_steps += in_parts
        self.inexact_solves += inexact
        if code != OK:
            self._report_failure(code)
        if self._windows:
            self._windows = [w for w in self._windows if w.stop > self.time]
        return done

    @classmethod
    def step_many(cls, simulators, n, executor=None, shares=1):
        """The simulators of one scene type and dt, without force windows or an earlier failure, take their steps
        in one call of the engine, or in ``shares`` calls of contiguous shares of them on the threads of ``executor``
        at once (each simulator's ``step`` would make the same steps, bit for bit); the others step on their own."""
        n = checked_many(cls, simulators, n)
        messages: list[str | None] = [None] * len(simulators)
        # batches by packed type, found by identity (numba interns its types; hashing one walks its whole tree)
        together: dict[tuple[int, float], list[int]] = {}
        for i, simulator in enumerate(simulators):
            if simulator._failure is not None or simulator._windows:
                messages[i] = simulator.try_step(n)
            else:
                together.setdefault((id(simulator._packed.kind), simulator._dt), []).append(i)
        for (_, dt), members in together.items():
            batch = [simulators[i] for i in members]
            kind = batch[0]._packed.kind
            for simulator in batch:
                simulator._now.clear()
            blocks = stack([simulator._packed for simulator in batch])
            first_steps = np.array([simulator._step_count for simulator in batch], dtype=np.int64)
            if executor is None or min(shares, len(batch)) < 2:
                _RUN(ADVANCE, blocks, kind, _NO_WINDOWS, first_steps, n, dt)
            else:
                bounds = np.linspace(0, len(batch), min(shares, len(batch)) + 1).round().astype(int).tolist()
                parts = list(zip(bounds[:-1], bounds[1:], strict=True))
                list(executor.map(_RUN, repeat(ADVANCE), [blocks[a:b] for a, b in parts], repeat(kind),
                                  repeat(_NO_WINDOWS), [first_steps[a:b] for a, b in parts], repeat(n), repeat(dt)))
            for i, simulator in zip(members, batch, strict=True):
                messages[i] = simulator._finish_steps(n)
        return messages

    @classmethod
    def read_many(cls, simulators, spec, rows, out):
        """The readings in one compiled call, from each simulator's reading arrays (read once per state)."""
        if not simulators:
            return
        for simulator, row in zip(simulators, rows, strict=True):
            simulator._read_state()
            out.time[row] = simulator.time
        _GATHER(stack([simulator._readable for simulator in simulators]), simulators[0]._readable.kind, *spec,
                np.asarray(rows, dtype=np.int64), *out[1:])

    def _finish_steps(self, n: int) -> str | None:
        """After the kernel ran ``n`` steps of this simulator among others: take its status and take the steps it
        left (an early stop); its failure message, or None."""
        self._now[_READ] = True  # (the call read the state its steps left)
        try:
            left = n - self._take_status()
            if left:
                self._advance(left)
        except SimulationError as failed:
            return str(failed)
        return None

    def _collect_events(self) -> None:
        """Move the impacts the kernel recorded into ``self._events`` and empty its buffer."""
        contacts = self._contacts
        for e in range(min(int(contacts.event_count[0]), contacts.event_time.shape[1])):
            g1, g2 = contacts.event_geom[0, e]
            self._events.append(Event(float(contacts.event_time[0, e]), self.geom_name(g1), self.geom_name(g2),
                                      float(contacts.event_speed[0, e])))
        contacts.event_count[0] = 0

    def _report_failure(self, code: int) -> None:
        """The kernel left the state as the failing step found it; raise ``SimulationError`` naming why."""
        if code == TOO_MANY_CONTACTS:
            self._fail(f"the next step found more than {self._capacity} contacts or {self._pairs} candidate geom pairs")
        parts = f"dt = {self._dt} s, and in parts down to dt / {2 ** MAX_SUBDIVISION}{self._fastest_turn()}"
        if code == NON_FINITE:
            self._fail(f"the engine state became non-finite in the next step ({parts})")
        if code == NOT_CONVERGED:
            self._fail(f"the implicit velocity update did not converge in the next step ({parts}): "
                       "velocity-dependent forces are too stiff")
        if code == NOT_PROJECTED:
            self._fail(f"the constraint projection did not converge in the next step ({parts}): the joints, rods "
                       f"or ropes cannot be satisfied, or are too far violated for the step{self._rows_off_clause()}")
        if code == NOT_CONFINED:
            self._fail(f"a confinement could not hold its body in the next step ({parts}): the body does not fit "
                       "inside its surface, or its velocity rule did not converge")
        self._fail(f"the contact solve did not converge in the next step ({parts})")

    def _fastest_turn(self) -> str:
        """The failure message's clause on the fastest-turning body at the state the failing step started from (a
        rate the step cannot follow, a motor spinning a light link without bound, is the usual cause); "" if no body
        turns."""
        engine, readings = self.engine, self._read_state().bodies
        rates = [(float(np.linalg.norm(readings[engine.body_index[b], READ_ANGVEL:READ_ANGVEL + 3])), b)
                 for b in range(1, self.model.nbody) if engine.body_index[b] >= 0]
        rate, body = max(rates, default=(0.0, 0))
        if not rate > 0.0:
            return ""
        return (f"; the fastest-turning body, {name_of(self.model, mujoco.mjtObj.mjOBJ_BODY, body)!r}, turns at "
                f"{rate:.4g} rad/s, {rate * self._dt:.3g} rad a step")

    def _rows_off_clause(self) -> str:
        """The failure message's clause on every row that the failing step's start violates (``_rows_off``), "" if
        none."""
        model, data = self.model, self._reset_data
        data.qpos[:], data.qvel[:] = self.qpos, 0.0
        mujoco.mj_fwdPosition(model, data)
        off = self._rows_off(data)
        if not off:
            return ""
        return (f"; at the step's start {'; '.join(words for _, words in off)} (the engine's equalities and ropes are "
                "hard: a step must start where they hold)")

    def _rows_off(self, data: mujoco.MjData) -> list[tuple[tuple[str, int], str]]:
        """Each active equality (connect, weld, rod) that the poses of ``data`` (after ``mj_fwdPosition``) violate by
        more than EQUALITY_OFF, by MuJoCo's own measure (``efc_pos``), and each rope (a limited tendon) beyond its range
        by more than the rows' tolerance: ((kind, id), its description) each. A weld's relpose or a keyframe that does
        not hold it, a closed loop started at a random angle: MuJoCo's soft equalities pull such a start together over
        a few steps, where the engine's hard rows must hold from the start (``_start_on_rows``)."""
        model = self.model
        off = []
        ids = data.efc_id[:data.nefc]
        rows = data.efc_type[:data.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY
        for e in np.unique(ids[rows]).tolist():
            residual = data.efc_pos[:data.nefc][rows & (ids == e)]
            distance = float(np.linalg.norm(residual[:3]))
            words = [f"off by {distance:.3g} m"] if distance > EQUALITY_OFF else []
            if model.eq_type[e] == mujoco.mjtEq.mjEQ_WELD:  # (rows 3-5: sin(angle / 2) times the axis and torquescale)
                angle = 2.0 * math.asin(min(1.0, np.linalg.norm(residual[3:6]) / model.eq_data[e, 10]))
                words += [f"turned by {angle:.3g} rad"] if angle > EQUALITY_OFF else []
            if words:
                name = name_of(model, mujoco.mjtObj.mjOBJ_EQUALITY, e)
                kind = mujoco.mjtEq(model.eq_type[e]).name[5:].lower()
                off.append((("equality", e), f"equality {name!r} ({kind}) {', '.join(words)}"))
        tolerance = self.engine.linkage.solver.tolerance
        for t in np.flatnonzero(model.tendon_limited).tolist():
            low, high = model.tendon_range[t]
            length = data.ten_length[t]
            if length > high + tolerance or (low > 0.0 and length < low - tolerance):
                name = name_of(model, mujoco.mjtObj.mjOBJ_TENDON, t)
                off.append((("tendon", t), f"tendon {name!r} at length {length:.6g} m, beyond its range [{low:.6g}, "
                                           f"{high:.6g}] m"))
        return off

    def _start_on_rows(self, data: mujoco.MjData) -> None:
        """At a reset (``data``: MuJoCo's kinematics of the start): where the start violates an equality or a rope
        (``_rows_off``), move the bodies onto the rows, the least move in the kinetic-energy metric, and project the
        velocities onto them (``physics.step.start_on_rows``), with a ``StartWarning`` once per simulator and row. The
        engine's rows are hard: a step that starts off one must close it within the step, an impulse of the gap over
        dt, and fails in every part. Where the rows cannot all hold, the start stays, and the first step's failure
        names them."""
        mujoco.mj_fwdPosition(self.model, data)
        off = self._rows_off(data)
        if not off or _START_ON_ROWS(self._packed.alone, self._packed.kind) < 0:
            return
        for key, words in off:
            if key not in self._warned_starts:
                self._warned_starts.add(key)
                warnings.warn(f"{words} at the start: the in-house engine starts the bodies moved onto it, the least "
                              "move in the kinetic-energy metric, and their velocities projected onto it (its "
                              "equalities and ropes are hard; MuJoCo's soft ones pull the bodies together over the "
                              "first steps)", StartWarning, stacklevel=4)

    def _start_within_ranges(self, qpos: np.ndarray) -> None:
        """Put each limited hinge or slide coordinate of ``qpos`` (in place) that is beyond its joint's range at the
        bound, with a ``StartWarning`` once per joint when it was beyond by more than the rows' tolerance. The
        engine's limits are hard rows: a step that starts beyond one must bring it back within the step, an impulse
        of the excess over dt that spins the body up (0.39 rad in 1 ms: 390 rad/s) and fails the step in every part;
        MuJoCo's soft limits push it back over a few steps. A start beyond a range is often a range read in degrees:
        MJCF reads a hinge's so unless ``<compiler angle="radian"/>``."""
        model, (joints, adr) = self.model, self._limited
        low, high = model.jnt_range[joints, 0], model.jnt_range[joints, 1]
        values = qpos[adr]
        inside = np.clip(values, low, high)
        if np.array_equal(values, inside):
            return
        qpos[adr] = inside
        tolerance = self.engine.linkage.solver.tolerance
        for j, value, bound in zip(joints, values, inside, strict=True):
            if abs(value - bound) > tolerance and ("joint", j) not in self._warned_starts:
                self._warned_starts.add(("joint", j))
                unit = "rad" if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE else "m"
                message = (f"joint {name_of(model, mujoco.mjtObj.mjOBJ_JOINT, j)!r} starts at {value:.6g} {unit}, "
                           f"beyond its range [{model.jnt_range[j, 0]:.6g}, {model.jnt_range[j, 1]:.6g}] {unit}: the "
                           f"in-house engine starts it at {bound:.6g} (its limits are hard; MJCF reads a hinge's "
                           'range in degrees unless <compiler angle="radian"/>)')
                warnings.warn(message, StartWarning, stacklevel=4)

    def apply_force(self, body: str, force, torque=(0.0, 0.0, 0.0), start: float = 0.0,
                    stop: float = float("inf")) -> None:
        if isinstance(body, str) and mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, body) < 0:
            check_not_a_force_target(set(confinement_names(self.model)), body)
        super().apply_force(body, force, torque, start, stop)

    def _window_arrays(self) -> Windows:
        windows = self._windows
        if not windows:
            return _NO_WINDOWS
        return Windows(
            world=np.zeros(len(windows), dtype=np.int64),
            body=np.array([self.engine.body_index[w.body] for w in windows], dtype=np.int64),
            wrench=np.array([np.concatenate((w.force, w.torque)) for w in windows]).reshape(-1, 6),
            start=np.array([w.start for w in windows], dtype=float),
            stop=np.array([w.stop for w in windows], dtype=float),
        )

    # ----------------------------------------------------------------- observations
    @property
    def qpos(self) -> np.ndarray:
        return self._read_state().qpos.copy()

    @property
    def qvel(self) -> np.ndarray:
        return self._read_state().qvel.copy()

    def _read_state(self) -> Reading:
        """The engine's reading arrays (qpos, qvel and every body's frame), holding the current state's: read once
        per state in one compiled call, which ``step.run`` makes at the end of its steps (a task reads a few bodies
        and coordinates every control step)."""
        if _READ not in self._now:
            self._run(READ, self._packed.alone, self._packed.kind, _NO_WINDOWS, self._first_step, 0, self._dt)
            self._now[_READ] = True
        return self._reading_arrays

    def _ctrl_array(self) -> np.ndarray:
        return self._ctrl[0]

    def frames(self, bodies: np.ndarray, out: np.ndarray) -> None:
        engine = self.engine
        _gather_frames(bodies, engine.body_index, self._read_state().bodies, engine.static_pos, engine.static_quat, out)

    def angular_momentum(self, body: str) -> np.ndarray:
        """World-frame angular momentum (kg m^2/s) of a named body about its centre of mass (zero if static)."""
        index = self.engine.body_index[self.body_id(body)]
        return self._state.momentum[0, index].copy() if index >= 0 else np.zeros(3)

    def energy(self) -> float:
        """K = sum 1/2 m |v_c|^2 + 1/2 L . w over the bodies, plus 1/2 a qvel^2 over the hinge and slide dofs with an
        armature a;  U = -sum_b m_b g . c_b over all bodies (static ones included), plus the springs'
        (``_spring_energy``; a tendon's length by MuJoCo's kinematics at the current qpos)."""
        engine = self.engine
        total = (float(energy(engine.bodies, engine.env.gravity, self._state, 0)) + engine.static_potential
                 + self._spring_energy(self._tendon_lengths))
        if self._armed.size:
            rates = self._read_state().qvel[self._armed]
            total += 0.5 * float(self.model.dof_armature[self._armed] @ (rates * rates))
        return total

    def _tendon_lengths(self) -> np.ndarray:
        """MuJoCo's ten_length at the current qpos (the reset's MjData as scratch)."""
        model, data = self.model, self._reset_data
        data.qpos[:] = self.qpos
        mujoco.mj_kinematics(model, data)
        mujoco.mj_tendon(model, data)
        return data.ten_length

    def constraint_forces(self) -> dict[tuple[str, str], np.ndarray]:
        """Reaction forces of the last step per constrained MJCF element: {(kind, name): forces}, kind
        "joint", "equality" or "tendon", forces one per constraint row of the element in row order, each the
        row's (P_position + P_velocity) / dt (see ``physics.constraints``): N along the parent's axes for a
        joint's or connect's anchor rows, N m for its alignment and angle rows; for a rod or rope (a tendon's
        distance row) the tension in N, positive when it pulls. Zero before the first step."""
        engine = self.engine
        count = len(engine.owner)  # the constraint rows; the damper rows after them are no constraint
        kind = engine.linkage.rows.kind[:count]
        force = (self._state.impulse_position[0, :count] + self._state.impulse_velocity[0, :count]) / self._dt
        force = np.where(kind == DISTANCE, -force, force)
        objects = {"joint": mujoco.mjtObj.mjOBJ_JOINT, "equality": mujoco.mjtObj.mjOBJ_EQUALITY,
                   "tendon": mujoco.mjtObj.mjOBJ_TENDON}
        grouped: dict[tuple[str, str], list[float]] = {}
        for (kind, index), value in zip(engine.owner, force, strict=True):
            grouped.setdefault((kind, name_of(self.model, objects[kind], index)), []).append(float(value))
        return {key: np.array(values) for key, values in grouped.items()}

    def contacts(self) -> list[Contact]:
        """The touching contacts of the last step (reset: of the initial poses) with their reaction forces, the
        mean over the step (zero for an impact's step: an impulse is no force)."""
        contacts = self._contacts
        result = []
        for i in range(min(int(contacts.count[0]), self._capacity)):
            if not contacts.active[i]:
                continue
            normal = contacts.rows[i, 0, LIN_B:LIN_B + 3].copy()
            force = contacts.force[i]
            normal_force = float(force @ normal)
            result.append(Contact(self.geom_name(contacts.geom1[i]), self.geom_name(contacts.geom2[i]),
                                  contacts.point[i].copy(), normal, normal_force, force - normal_force * normal))
        return result

    def _touching_ids(self) -> set[tuple[int, int]]:
        contacts = self._contacts
        count = min(int(contacts.count[0]), self._capacity)
        pairs = zip(contacts.geom1[:count].tolist(), contacts.geom2[:count].tolist(), contacts.active[:count].tolist(),
                    strict=True)
        return {(a, b) for a, b, active in pairs if active}

    # ----------------------------------------------------------------- state
    def _physics_state(self):
        state, contacts = self._state.copy(), self._contacts.copy()
        order, ctrl = self._scratch.order.copy(), self._ctrl.copy()
        for array in (*state, *contacts, order, ctrl):
            array.setflags(write=False)
        return state, contacts, order, ctrl

    def _restore_physics(self, physics) -> None:
        state, contacts, order, ctrl = physics
        self._state.assign(state)
        self._contacts.assign(contacts)
        self._scratch.order[...] = order
        self._ctrl[...] = ctrl

    def _reset_physics(self, qpos: np.ndarray, qvel: np.ndarray, ctrl: np.ndarray) -> None:
        model, data = self.model, self._reset_data
        mujoco.mj_resetData(model, data)
        data.qpos[:], data.qvel[:] = qpos, qvel
        self._start_within_ranges(data.qpos)
        mujoco.mj_kinematics(model, data)
        mujoco.mj_comPos(model, data)
        mujoco.mj_comVel(model, data)
        state_from_mujoco(model, data, self.engine.body_index, self._state, 0)
        turns_from_qpos(self.engine.linkage.coordinates, data.qpos, self._state.turns[0])
        self._state.impulse_position[0] = 0.0
        self._state.impulse_velocity[0] = 0.0
        self._state.chord_rate[0] = 0.0
        self._ctrl[0] = ctrl
        self.subdivided_steps = 0
        self.inexact_solves = 0
        self._contacts.clear()
        self._scratch.order[...] = np.arange(self._scratch.order.size)
        if self._equalities_or_ropes:
            self._start_on_rows(data)
        if self.engine.env.contacts and self._run(START_CONTACTS, self._packed.alone, self._packed.kind, _NO_WINDOWS,
                                                  self._first_step, 0, self._dt) < 0:
            self._fail("the resting contact forces of the initial state did not converge")
