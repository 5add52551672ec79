"""``backend="mujoco"``: MuJoCo exactly as the scene says (integrator, contact parameters untouched).

It is the reference the in-house engine is cross-checked against. What mechgym adds on top:
- time is ``step_count * dt`` (MuJoCo's ``data.time`` accumulates and is not used);
- force windows: during the step [t, t + dt) a window contributes ``force * overlap / dt`` to
  ``xfrc_applied``; MuJoCo's semi-implicit Euler turns that into the impulse ``force * overlap``;
- impacts: a geom pair absent from the previous step's contacts and present in this step's is an
  event at the step's start time (MuJoCo only sees contacts at steps; nothing is interpolated).
A scene with confinements (``<text name="confinement:...">``, the in-house engine's) is refused: MuJoCo has no
such constraint, and running the scene without them would be another scene.
"""

from __future__ import annotations

import mujoco
import numpy as np

from ..errors import SceneError
from ..scene import CONFINEMENT_PREFIX, confinement_names
from ..simulator import FRAME_ANGVEL, FRAME_LINVEL, FRAME_POS, FRAME_QUAT, Contact, Event, Simulator

_STATE = mujoco.mjtState.mjSTATE_INTEGRATION
_DIVERGENCE_WARNINGS = tuple(int(w) for w in (mujoco.mjtWarning.mjWARN_BADQPOS, mujoco.mjtWarning.mjWARN_BADQVEL,
                                               mujoco.mjtWarning.mjWARN_BADQACC))


class MujocoSimulator(Simulator):
    backend_name = "mujoco"

    def __init__(self, model: mujoco.MjModel, dt: float | None):
        confined = confinement_names(model)
        if confined:
            raise SceneError("confinement.unsupported-backend",
                             f"the scene declares confinements {confined} (<text name='{CONFINEMENT_PREFIX}...'>), "
                             "which MuJoCo has no constraint for; run it with backend='mechgym', or remove them")
        super().__init__(model, dt)
        self.data = mujoco.MjData(model)
        self._touching: frozenset[tuple[int, int]] = frozenset()
        self._touching_geoms: bytes | None = None  # data.contact.geom's bytes when _touching was taken
        self._forces_loaded = False  # xfrc_applied holds a window's share
        self._derived_current = False
        self.reset()

    # ----------------------------------------------------------------- stepping
    def _advance(self, n: int) -> None:
        model, data, dt, step = self.model, self.data, self._dt, mujoco.mj_step
        warned = self._divergence_count()
        for _ in range(n):
            t0 = self._step_count * dt
            if self._windows or self._forces_loaded:
                self._load_windows(t0, t0 + dt)
            step(model, data)
            self._step_count += 1
            if data.ncon or self._touching:
                self._record_impacts(t0)
        self._derived_current = False
        # MuJoCo checks every step's incoming state and resets the data when it is bad; the last state is
        # checked here. Either way the run has failed.
        if self._divergence_count() != warned or not (np.isfinite(data.qpos).all() and np.isfinite(data.qvel).all()):
            self._fail("MuJoCo's state became non-finite or unstable (MuJoCo reset its data)")

    def _divergence_count(self) -> int:
        numbers = self.data.warning.number.tolist()
        return sum(numbers[w] for w in _DIVERGENCE_WARNINGS)

    def _load_windows(self, t0: float, t1: float) -> None:
        """Average every window over [t0, t1) into ``xfrc_applied``; drop windows already over."""
        xfrc = self.data.xfrc_applied
        xfrc[:] = 0.0
        self._forces_loaded = False
        for window in self._windows:
            share = window.overlap(t0, t1) / (t1 - t0)
            if share > 0.0:
                xfrc[window.body, :3] += share * window.force
                xfrc[window.body, 3:] += share * window.torque
                self._forces_loaded = True
        self._windows = [w for w in self._windows if w.stop > t1]

    def _record_impacts(self, t0: float) -> None:
        """After ``mj_step`` the contacts and velocities in ``data`` are those of the step's start."""
        geoms = self.data.contact.geom[: self.data.ncon]
        seen = geoms.tobytes()
        if seen == self._touching_geoms:  # the same contacts as the last step's: no new pair
            return
        self._touching_geoms = seen
        ordered = [(a, b) if a < b else (b, a) for a, b in geoms.tolist()]  # each contact's pair, smaller geom first
        pairs = frozenset(ordered)
        for pair in sorted(pairs - self._touching):
            index = [i for i, other in enumerate(ordered) if other == pair]
            speed = max(self._approach_speed(i) for i in index)
            if speed > 0.0:
                first = geoms[index[0]]
                self._events.append(Event(t0, self.geom_name(first[0]), self.geom_name(first[1]), speed))
        self._touching = pairs

    def _approach_speed(self, i: int) -> float:
        """-(v2 - v1) . n at contact i's point: positive when geom2 closes on geom1."""
        contact = self.data.contact
        normal = contact.frame[i, :3]
        point = contact.pos[i]
        g1, g2 = contact.geom[i]
        relative = self._point_velocity(self.model.geom_bodyid[g2], point) - self._point_velocity(
            self.model.geom_bodyid[g1], point)
        return float(-relative @ normal)

    def _point_velocity(self, body: int, point: np.ndarray) -> np.ndarray:
        velocity, turning = np.zeros(6), np.empty(3)
        mujoco.mj_objectVelocity(self.model, self.data, mujoco.mjtObj.mjOBJ_XBODY, body, velocity, 0)
        mujoco.mju_cross(turning, velocity[:3], point - self.data.xpos[body])
        return velocity[3:] + turning

    def _derived(self) -> mujoco.MjData:
        """``data`` with positions, velocities, contacts and forces computed for the current state.

        ``mj_forward`` writes only derived quantities, never the state (qacc_warmstart included), so
        looking does not change the continuation.
        """
        if not self._derived_current:
            mujoco.mj_forward(self.model, self.data)
            self._derived_current = True
        return self.data

    # ----------------------------------------------------------------- observations
    @property
    def qpos(self) -> np.ndarray:
        return self.data.qpos.copy()

    @property
    def qvel(self) -> np.ndarray:
        return self.data.qvel.copy()

    def _ctrl_array(self) -> np.ndarray:
        return self.data.ctrl

    def frames(self, bodies: np.ndarray, out: np.ndarray) -> None:
        data, velocity = self._derived(), np.empty(6)  # (angular, linear)
        for frame, body in zip(out, bodies.tolist(), strict=True):
            mujoco.mj_objectVelocity(self.model, data, mujoco.mjtObj.mjOBJ_XBODY, body, velocity, 0)
            frame[FRAME_POS:FRAME_POS + 3] = data.xpos[body]
            frame[FRAME_QUAT:FRAME_QUAT + 4] = data.xquat[body]
            frame[FRAME_LINVEL:FRAME_LINVEL + 3] = velocity[3:]
            frame[FRAME_ANGVEL:FRAME_ANGVEL + 3] = velocity[:3]

    def energy(self) -> float:
        """K = 1/2 qvel . M qvel,  U = -sum_b m_b g . c_b (c_b: body centre of mass), plus the hinge and slide
        and tendon springs' (``_spring_energy``; a ball or free joint's spring, which only this backend runs, is left
        out)."""
        data = self._derived()
        momentum = np.zeros(self.model.nv)
        mujoco.mj_mulM(self.model, data, momentum, data.qvel)
        kinetic = 0.5 * float(data.qvel @ momentum)
        potential = -float(self.model.body_mass @ (data.xipos @ self.model.opt.gravity))
        return kinetic + potential + self._spring_energy(lambda: data.ten_length)

    def contacts(self) -> list[Contact]:
        data = self._derived()
        result = []
        wrench = np.zeros(6)
        contact = data.contact
        frames, points = contact.frame.reshape(-1, 3, 3), contact.pos
        for i, (g1, g2) in enumerate(contact.geom[: data.ncon].tolist()):
            mujoco.mj_contactForce(self.model, data, i, wrench)
            frame = frames[i]
            result.append(Contact(self.geom_name(g1), self.geom_name(g2), points[i].copy(), frame[0].copy(),
                                  float(wrench[0]), wrench[1] * frame[1] + wrench[2] * frame[2]))
        return result

    def _touching_ids(self) -> set[tuple[int, int]]:
        data = self._derived()
        return set(map(tuple, data.contact.geom[: data.ncon].tolist()))

    # ----------------------------------------------------------------- state
    def _physics_state(self):
        state = np.empty(mujoco.mj_stateSize(self.model, _STATE))
        mujoco.mj_getState(self.model, self.data, state, _STATE)
        state.setflags(write=False)
        return state, self._touching

    def _restore_physics(self, physics) -> None:
        state, touching = physics
        mujoco.mj_setState(self.model, self.data, state, _STATE)
        self._touching, self._touching_geoms = touching, None
        self._forces_loaded = bool(self.data.xfrc_applied.any())
        self._derived_current = False

    def _reset_physics(self, qpos: np.ndarray, qvel: np.ndarray, ctrl: np.ndarray) -> None:
        if self.model.nkey > 0:
            mujoco.mj_resetDataKeyframe(self.model, self.data, 0)  # the keyframe's act and mocap poses too
        else:
            mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[:], self.data.qvel[:], self.data.ctrl[:] = qpos, qvel, ctrl
        self._touching, self._touching_geoms = frozenset(), None
        self._forces_loaded = False
        self._derived_current = False
