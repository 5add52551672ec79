"""``mechgym/CubeDrop-v0``: land a falling cube softly on a thin slab with three thrusters (seed 003's scene).

Scene ``cube_drop.xml``: a 5 cm, 100 g cube on a free joint above a 24 x 24 x 1 cm slab whose top is at
30 cm, over a floor plane. Three world-frame thrust motors act at the cube's centre of mass. Every length
below is read from the compiled scene.

Actions (3, in [-1, 1], clipped; scaled linearly to each motor's ctrlrange, -2 .. 2 N):

=====  ==========  ====  ================================
index  meaning     unit  scaling
=====  ==========  ====  ================================
0      thrust x    N     2 a (world x)
1      thrust y    N     2 a (world y)
2      thrust z    N     2 a (world z; the weight is 0.98 N)
=====  ==========  ====  ================================

Observations (13, float32, unbounded unless noted):

=====  ===============================================================  =====
index  meaning                                                          unit
=====  ===============================================================  =====
0-2    cube centre minus its resting point on the slab (slab centre x,  m
       y; slab top + half the cube)
3-6    cube orientation quaternion (w, x, y, z), sign chosen w >= 0     -
       (bounds [-1, 1])
7-9    cube linear velocity, world frame                                m/s
10-12  cube angular velocity, world frame                               rad/s
=====  ===============================================================  =====

Reward terms (``info["reward_<name>"]``; rates are multiplied by the control period dt):
``position`` -5 |p| dt with p the offset of observations 0-2 (m); ``velocity`` -0.1 |v| dt;
``thrust`` -0.05 |a|^2 dt; ``impact`` -0.5 sum v^2 over the cube's impacts in the step (v the impact speed,
m/s, from the backend's events); ``landed`` +2 dt while on the slab (centre over its top face within 2 mm
of the resting height, moving or not, so that a learner's exploration noise does not hide it as it hides
rest); ``success`` +10 at success; ``failure`` -10 at a task failure.

Success: at rest on the slab for 0.5 s: centre over the slab's top face, within 2 mm of the resting
height, speed below 0.02 m/s and spin below 0.2 rad/s, continuously; the episode then terminates.

Failures (terminate): ``"tunnelled"``: the centre, inside the slab's footprint, is found below the slab's
mid-plane after having been above it there (it went into or through the slab; a cube that flies under
the slab from beside it is not a failure); ``"floor"``: at rest on the floor (centre within 5 mm of half
the cube, speed below 0.05 m/s); ``"diverged"`` (truncates, no penalty: see :mod:`mechgym.env`).

Start: with ``randomize=True`` (default) the centre is placed up to 0.25 m off the slab's axis
(uniform over the disc, so sometimes beside the slab) at 1.0-1.5 m, with a yaw uniform in [-pi, pi],
a tilt up to 0.1 rad about a random horizontal axis and each velocity component uniform in
[-0.2, 0.2] m/s, at rest in rotation. With ``randomize=False`` it is seed 003's release: the scene's
pose at rest, so zero actions reproduce the passive drop of ``mechgym sweep cube-drop``.

Defaults: physics_dt 0.002 s, decimation 10 (dt = 0.02 s), time_limit 3 s.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np
from gymnasium import spaces
from numba import njit

from mechgym.compiled import IMPACT_SQUARES, CompiledTask
from mechgym.env import ScriptedPolicy
from mechgym.simulator import FRAME_ANGVEL, FRAME_LINVEL, FRAME_POS, FRAME_QUAT
from mechgym.steps import FAILURE, SUCCESS

REST_TIME = 0.5  # s at rest on the slab for success
REST_TOLERANCE = 0.002  # m: centre height within this of the resting height
REST_SPEED, REST_SPIN = 0.02, 0.2  # m/s, rad/s
FLOOR_TOLERANCE, FLOOR_SPEED = 0.005, 0.05  # m, m/s
START_OFFSET, START_HEIGHT = 0.25, (1.0, 1.5)  # m
START_SPEED, START_TILT = 0.2, 0.1  # m/s per component, rad
FAILURES = ("tunnelled", "floor")

# The kernel's parameters (m; s): the resting centre (3), the slab's footprint (centre x, y, half x, half y), the
# resting height, the slab's mid-plane height, half the cube, the control period.
REST_POINT, FOOTPRINT, REST_HEIGHT, MID_PLANE, CUBE_HALF, DT = 0, 3, 7, 8, 9, 10
# The episode's memory: seconds at rest on the slab so far; the side of the slab the centre was last seen on.
REST_SECONDS, SIDE = 0, 1


def _quat_about(axis: np.ndarray, angle: float) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of a rotation by ``angle`` (rad) about a unit ``axis``."""
    quat = np.empty(4)
    mujoco.mju_axisAngle2Quat(quat, axis, angle)
    return quat


@njit(cache=True)
def _norm3(vector: np.ndarray) -> float:
    return math.sqrt(vector[0] * vector[0] + vector[1] * vector[1] + vector[2] * vector[2])


@njit(cache=True)
def _inside_footprint(pos: np.ndarray, parameters: np.ndarray) -> bool:
    return (abs(pos[0] - parameters[FOOTPRINT]) < parameters[FOOTPRINT + 2]
            and abs(pos[1] - parameters[FOOTPRINT + 1]) < parameters[FOOTPRINT + 3])


@njit(cache=True)
def _slab_side(pos: np.ndarray, parameters: np.ndarray) -> float:
    """+1 above the slab's mid-plane inside its footprint, -1 below it there, 0 outside the footprint."""
    if not _inside_footprint(pos, parameters):
        return 0.0
    return 1.0 if pos[2] >= parameters[MID_PLANE] else -1.0


@njit(cache=True)
def _on_slab(pos: np.ndarray, parameters: np.ndarray) -> bool:
    """The centre over the slab's top face, within REST_TOLERANCE of the resting height."""
    return _inside_footprint(pos, parameters) and abs(pos[2] - parameters[REST_HEIGHT]) <= REST_TOLERANCE


@njit(cache=True)
def _at_rest_on_slab(pos: np.ndarray, speed: float, spin: float, parameters: np.ndarray) -> bool:
    return _on_slab(pos, parameters) and speed < REST_SPEED and spin < REST_SPIN


@njit(cache=True)
def _failure(pos: np.ndarray, speed: float, memory: np.ndarray, parameters: np.ndarray) -> int:
    """The task failure (0: none, k: FAILURES[k - 1]) of the cube at ``pos`` (m) moving at ``speed`` (m/s), given
    the side of the slab it was last seen on (``memory[SIDE]``, updated here)."""
    side = _slab_side(pos, parameters)
    was_above = memory[SIDE] == 1.0
    memory[SIDE] = side
    if side == -1.0 and was_above:
        return 1
    if pos[2] < parameters[CUBE_HALF] + FLOOR_TOLERANCE and speed < FLOOR_SPEED:
        return 2
    return 0


@njit(cache=True)
def _kernel(step, rows, parameters, time, qpos, qvel, ctrl, frames, touching, impacts, actions, memory, observations,
            terms, outcome):
    """The task's kernel (:mod:`mechgym.compiled`): observation, reward terms, success and failure."""
    dt = parameters[DT]
    for i in rows:
        cube, observation = frames[i, 0], observations[i]
        sign = 1.0 if cube[FRAME_QUAT] >= 0.0 else -1.0
        for k in range(3):
            observation[k] = cube[FRAME_POS + k] - parameters[REST_POINT + k]
            observation[7 + k] = cube[FRAME_LINVEL + k]
            observation[10 + k] = cube[FRAME_ANGVEL + k]
        for k in range(4):
            observation[3 + k] = sign * cube[FRAME_QUAT + k]
        if not step:
            continue
        pos, action = cube[FRAME_POS:FRAME_POS + 3], actions[i]
        speed, spin = _norm3(cube[FRAME_LINVEL:FRAME_LINVEL + 3]), _norm3(cube[FRAME_ANGVEL:FRAME_ANGVEL + 3])
        resting = _at_rest_on_slab(pos, speed, spin, parameters)
        memory[i, REST_SECONDS] = memory[i, REST_SECONDS] + dt if resting else 0.0
        success = memory[i, REST_SECONDS] >= REST_TIME - 1e-9
        failure = _failure(pos, speed, memory[i], parameters)
        outcome[i, SUCCESS], outcome[i, FAILURE] = success and failure == 0, failure
        row = terms[i]
        row[0] = -5.0 * _norm3(observation[0:3]) * dt  # position
        row[1] = -0.1 * speed * dt  # velocity
        row[2] = -0.05 * (action[0] * action[0] + action[1] * action[1] + action[2] * action[2]) * dt  # thrust
        row[3] = -0.5 * impacts[i, 0, IMPACT_SQUARES]  # impact
        row[4] = 2.0 * dt if _on_slab(pos, parameters) else 0.0  # landed
        row[5] = 10.0 if success and failure == 0 else 0.0  # success


class CubeDropEnv(CompiledTask):
    __doc__ = __doc__

    scene = "cube_drop"
    camera = "side"
    default_physics_dt, default_decimation, default_time_limit = 0.002, 10, 3.0
    reward_terms = ("position", "velocity", "thrust", "impact", "landed", "success")
    failure_penalty = -10.0
    task_failures = FAILURES
    kernel = _kernel
    observed_bodies = ("cube",)
    impact_geoms = ("cube",)

    def __init__(self, randomize: bool = True, **kwargs):
        super().__init__(**kwargs)
        self.randomize = bool(randomize)
        model = self.sim.model
        slab, cube = model.geom("slab"), model.geom("cube")
        self.slab_centre = slab.pos[:2].copy()
        self.slab_half = slab.size[:2].copy()
        self.slab_top = float(slab.pos[2] + slab.size[2])
        self.slab_mid_plane = float(slab.pos[2])
        self.cube_half = float(cube.size[2])
        self.rest_height = self.slab_top + self.cube_half
        self._parameters = np.array([*self.slab_centre, self.rest_height, *self.slab_centre, *self.slab_half,
                                     self.rest_height, self.slab_mid_plane, self.cube_half, self.dt])
        self.mass = float(model.body("cube").mass[0])
        self.gravity = float(-model.opt.gravity[2])
        self._thrusters = [self._actuator(f"thrust_{axis}") for axis in "xyz"]

    def scripted_policy(self) -> DescentController:
        """The hand-written controller that solves the task from the observations alone."""
        return DescentController(self.mass, self.gravity, np.array([high for _, _, high in self._thrusters]))

    def _action_size(self) -> int:
        return 3

    def _observation_space(self) -> spaces.Box:
        high = np.full(13, np.inf, dtype=np.float32)
        high[3:7] = 1.0
        return spaces.Box(-high, high, dtype=np.float32)

    # ----------------------------------------------------------------- episode
    def _initial_state(self, rng):
        model = self.sim.model
        qpos, qvel = model.qpos0.copy(), np.zeros(model.nv)
        if self.randomize:
            radius, angle = START_OFFSET * np.sqrt(rng.uniform()), rng.uniform(-np.pi, np.pi)
            qpos[0:3] = (radius * np.cos(angle), radius * np.sin(angle), rng.uniform(*START_HEIGHT))
            heading = rng.uniform(-np.pi, np.pi)
            tilt_axis = np.array([np.cos(heading), np.sin(heading), 0.0])
            yaw = _quat_about(np.array([0.0, 0.0, 1.0]), rng.uniform(-np.pi, np.pi))
            mujoco.mju_mulQuat(qpos[3:7], _quat_about(tilt_axis, rng.uniform(0.0, START_TILT)), yaw)
            qvel[0:3] = rng.uniform(-START_SPEED, START_SPEED, size=3)
        return qpos, qvel, np.zeros(model.nu)

    def _begin_episode(self) -> None:
        self._memory = np.array([0.0, _slab_side(self._frames_now()[0, FRAME_POS:FRAME_POS + 3], self._parameters)])

    def _apply_action(self, action) -> None:
        ctrl = self.sim.ctrl
        for (index, low, high), a in zip(self._thrusters, action.tolist(), strict=True):
            ctrl[index] = self._scaled(a, low, high)

    # ----------------------------------------------------------------- task geometry (the kernel's, for tests)
    def on_slab(self, pos: np.ndarray) -> bool:
        """The centre over the slab's top face, within REST_TOLERANCE of the resting height."""
        return bool(_on_slab(np.asarray(pos, dtype=float), self._parameters))

    def at_rest_on_slab(self, pos: np.ndarray, speed: float, spin: float) -> bool:
        return bool(_at_rest_on_slab(np.asarray(pos, dtype=float), float(speed), float(spin), self._parameters))

    def detect_failure(self, pos: np.ndarray, speed: float) -> str | None:
        """The task failure of the cube at ``pos`` (m) moving at ``speed`` (m/s), given the side of the slab it
        was last seen on (updated here)."""
        failure = _failure(np.asarray(pos, dtype=float), float(speed), self._memory, self._parameters)
        return FAILURES[failure - 1] if failure else None


class DescentController(ScriptedPolicy):
    """Hand-written policy: a PD loop brings the cube over the slab's centre while a constant-deceleration
    profile v = sqrt(2 a h) brings it down (never below 15 cm above the slab until centred within 2 cm);
    once down it cuts the thrust so that the cube's whole weight holds it on the slab.

    mass (kg), gravity (m/s^2), max_thrust (3,) N per axis: the scene's values (the env's).
    """

    KP, KD, KV = 16.0, 8.0, 6.0  # 1/s^2, 1/s (horizontal PD, critically damped at 4 rad/s), 1/s (vertical)
    DECELERATION, TOUCHDOWN_SPEED, MAX_DESCENT = 2.0, 0.1, 2.0  # m/s^2, m/s, m/s
    HOLD_HEIGHT, CENTRED = 0.15, 0.02  # m

    def __init__(self, mass: float, gravity: float, max_thrust: np.ndarray):
        self.mass, self.gravity, self.max_thrust = mass, gravity, max_thrust

    def __call__(self, observation: np.ndarray) -> np.ndarray:
        offset, velocity = observation[0:3].astype(float), observation[7:10].astype(float)
        height = offset[2]
        if height < 0.003 and abs(velocity[2]) < 0.2:
            return np.zeros(3)  # landed: the weight holds it
        accel = np.zeros(3)
        accel[:2] = -self.KP * offset[:2] - self.KD * velocity[:2]
        floor = 0.0 if np.linalg.norm(offset[:2]) < self.CENTRED else self.HOLD_HEIGHT
        above = height - floor
        descent = np.sqrt(2.0 * self.DECELERATION * max(above, 0.0))
        target = -np.clip(descent, self.TOUCHDOWN_SPEED, self.MAX_DESCENT) if above > 0 else -self.KV * above
        accel[2] = self.gravity + self.KV * (target - velocity[2])
        return np.clip(self.mass * accel / self.max_thrust, -1.0, 1.0)
