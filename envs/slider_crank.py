"""``mechgym/SliderCrank-v0``: hold a slider-crank at a target speed while its slider rattles in a notch (seed 002).

Scene ``slider_crank.xml`` (Flores, Leine and Glocker 2010): a planar crank (0.153 m), connecting rod
(0.306 m) and a 0.10 x 0.05 m slider in a notch with 1 mm clearance per side between two frictionless walls
(restitution 0.4 on the in-house engine), gravity along -y; a motor on the crank. The crank's speed swings
by about +-40 % within a revolution (the slider's share of the kinetic energy comes and goes), so the task
is about the crank's mean speed over the last 0.1 s, not the instantaneous one.

Actions (1, in [-1, 1], clipped): crank motor torque, N m, the ctrlrange (-2 .. 2 N m) mapped linearly.

Observations (19, float32, unbounded unless noted; angles absolute, in the x-y plane, from +x):

=====  ====================================================================  =====
index  meaning                                                               unit
=====  ====================================================================  =====
0-1    cos, sin of the crank angle theta_1 ([-1, 1])                         -
2      crank angular velocity omega_1                                        rad/s
3      mean crank speed over the last 0.1 s (since the start, earlier;       rad/s
       omega_1 at the start)
4      target mean crank speed                                               rad/s
5-6    cos, sin of the rod angle theta_2 ([-1, 1])                           -
7      rod angular velocity omega_2                                          rad/s
8      slider angle theta_3                                                  rad
9      slider angular velocity omega_3                                       rad/s
10-13  gap functions g_1 .. g_4 of seed 002 (eqs. 14-17): the slider's       mm
       corners (-a, +b), (+a, +b) to the top wall, (-a, -b), (+a, -b) to
       the bottom wall, from the slider's pose (same formula on every
       backend)
14-17  their rates dg/dt                                                     m/s
18     the crank's lag behind the target since the start: target t -          rad
       (theta_1(t) - theta_1(0)), the integral of the speed error
=====  ====================================================================  =====

Reward terms (``info["reward_<name>"]``; rates are multiplied by the control period dt):
``speed`` -(e / 0.1)^2 dt with e the mean speed's relative error (observations 3, 4); ``impact``
-0.001 sum m_3 v over the slider's wall impacts in the step (m_3 the slider's mass, v the impact speed from
the backend's events: the impulse of a plastic impact, N s); ``torque`` -0.1 a^2 dt; ``failure`` -10 at a
task failure. The impact weight is small because the rattle grows with the crank's speed: under the
hand-written controller the slider's impacts sum to about 8 N s per second on MuJoCo and 300 N s on the
in-house engine, so a weight of 0.1 made a slower crank pay (the speed term is about -1 per episode near the
target), and 0.001 moves the best mean speed by well under the 5 % tolerance.

Success (``is_success``, no termination: the episode runs to its time limit): the mean speed within 5 %
of the target, once a whole 0.1 s window has passed. Failures (terminate): ``"penetrated"``: a gap
below -0.5 mm, half the clearance (the slider went into a wall); ``"diverged"`` (truncates, no penalty:
see :mod:`mechgym.env`).

Start: the scene's keyframe (Flores' initial state: angles 0, absolute angular velocities
(150, -75, 0) rad/s). With ``randomize=True`` (default) its velocities are scaled so that the crank
starts at a speed uniform in [125, 175] rad/s, and the target is uniform in [100, 200] rad/s; with
``randomize=False`` the keyframe itself and a target of 150 rad/s.

Defaults: physics_dt 1e-4 s, decimation 10 (dt = 1 ms), time_limit 1 s.
"""

from __future__ import annotations

import math

import numpy as np
from gymnasium import spaces
from numba import njit

from mechgym.compiled import IMPACT_SPEEDS, CompiledTask
from mechgym.env import ScriptedPolicy
from mechgym.simulator import FRAME_ANGVEL, FRAME_LINVEL, FRAME_POS, FRAME_QUAT
from mechgym.steps import FAILURE, SUCCESS

WINDOW = 0.1  # s over which the crank's mean speed is taken
TOLERANCE = 0.05  # relative error of the mean speed for success
PENETRATION = -0.0005  # m: the deepest gap allowed, half the 1 mm clearance
IMPACT_WEIGHT = 0.001  # reward per N s of impulse: small enough that the target speed stays the best (docstring)
TARGETS, START_SPEEDS, NOMINAL = (100.0, 200.0), (125.0, 175.0), 150.0  # rad/s

# The kernel's parameters: the walls' faces' heights (y, m), the slider's half sizes a, b (m), its mass (kg), the
# control period (s), the control steps per mean-speed window.
WALL_TOP, WALL_BOTTOM, HALF_A, HALF_B, SLIDER_MASS, DT, WINDOW_STEPS = range(7)
# The episode's memory: the target mean speed (rad/s), the crank's absolute angle at the start (rad), the number
# of crank angle samples taken (one a control step, the start's first), then the last WINDOW_STEPS + 1 samples
# (rad), a ring: sample k at SAMPLES + k mod (WINDOW_STEPS + 1).
TARGET, START_ANGLE, SAMPLES_TAKEN, SAMPLES = range(4)


@njit(cache=True)
def _absolute(relative: np.ndarray, out: np.ndarray) -> None:
    """theta_1..3 (rad) of the MJCF hinges' relative angles, or their rates (rad/s) of the relative rates: each
    child's added to its parent's."""
    total = 0.0
    for k in range(3):
        total += relative[k]
        out[k] = total


@njit(cache=True)
def _slider_gaps(slider: np.ndarray, parameters: np.ndarray, gaps: np.ndarray, rates: np.ndarray) -> None:
    """Seed 002's g_1..g_4 (m) and their rates (m/s) from the slider's frame (planar pose and velocity): the
    corners (-a, +b), (+a, +b) to the top wall, (-a, -b), (+a, -b) to the bottom one."""
    w, z = slider[FRAME_QUAT], slider[FRAME_QUAT + 3]
    # the rotation about z (the motion is planar) by 2 atan2(z, w): cos = (w^2 - z^2) / r^2, sin = 2 w z / r^2
    r2 = w * w + z * z
    c, s = (w * w - z * z) / r2, 2.0 * w * z / r2
    centre_y, v_y, omega = slider[FRAME_POS + 1], slider[FRAME_LINVEL + 1], slider[FRAME_ANGVEL + 2]
    a, b = parameters[HALF_A], parameters[HALF_B]
    for k in range(4):
        x, y, top = -a if k % 2 == 0 else a, b if k < 2 else -b, k < 2
        height = centre_y + s * x + c * y
        rate = v_y + omega * (c * x - s * y)  # a corner's y-velocity: v_y + (omega x r)_y = v_y + omega_z r_x
        gaps[k] = parameters[WALL_TOP] - height if top else height - parameters[WALL_BOTTOM]
        rates[k] = -rate if top else rate


@njit(cache=True)
def _failure(gaps: np.ndarray) -> int:
    """1 ("penetrated") where a gap is below PENETRATION, else 0."""
    for gap in gaps:  # (not gaps.min(): numba's, compiled for this alone, took 1 s of the first compile)
        if gap < PENETRATION:
            return 1
    return 0


@njit(cache=True)
def _kernel(step, rows, parameters, time, qpos, qvel, ctrl, frames, touching, impacts, actions, memory, observations,
            terms, outcome):
    """The task's kernel (:mod:`mechgym.compiled`): observation, reward terms, success and failure."""
    dt, window = parameters[DT], int(parameters[WINDOW_STEPS])
    theta, omega, gaps, rates = np.empty(3), np.empty(3), np.empty(4), np.empty(4)
    for i in rows:
        episode, observation = memory[i], observations[i]
        _absolute(qpos[i], theta)
        _absolute(qvel[i], omega)
        taken = int(episode[SAMPLES_TAKEN])
        if step:  # one sample a control step; the episode's start took the first
            episode[SAMPLES + taken % (window + 1)] = theta[0]
            taken += 1
            episode[SAMPLES_TAKEN] = taken
        steps = min(taken, window + 1) - 1  # control steps between the oldest sample kept and the newest
        newest = episode[SAMPLES + (taken - 1) % (window + 1)]
        oldest = episode[SAMPLES + (taken - 1 - steps) % (window + 1)]
        mean_speed = (newest - oldest) / (steps * dt) if steps else omega[0]
        _slider_gaps(frames[i, 0], parameters, gaps, rates)
        target = episode[TARGET]
        lag = target * time[i] - (theta[0] - episode[START_ANGLE])
        observation[0], observation[1], observation[2] = math.cos(theta[0]), math.sin(theta[0]), omega[0]
        observation[3], observation[4] = mean_speed, target
        observation[5], observation[6], observation[7] = math.cos(theta[1]), math.sin(theta[1]), omega[1]
        observation[8], observation[9] = theta[2], omega[2]
        for k in range(4):
            observation[10 + k] = 1000.0 * gaps[k]
            observation[14 + k] = rates[k]
        observation[18] = lag
        if not step:
            continue
        error = (mean_speed - target) / target
        failure = _failure(gaps)
        outcome[i, FAILURE] = failure
        outcome[i, SUCCESS] = failure == 0 and steps == window and abs(error) <= TOLERANCE
        terms[i, 0] = -(error / 0.1) ** 2 * dt  # speed
        terms[i, 1] = -IMPACT_WEIGHT * parameters[SLIDER_MASS] * impacts[i, 0, IMPACT_SPEEDS]  # impact
        terms[i, 2] = -0.1 * actions[i, 0] ** 2 * dt  # torque


class SliderCrankEnv(CompiledTask):
    __doc__ = __doc__

    scene = "slider_crank"
    camera = "plane"
    default_physics_dt, default_decimation, default_time_limit = 1e-4, 10, 1.0
    reward_terms = ("speed", "impact", "torque")
    failure_penalty = -10.0
    task_failures = ("penetrated",)
    success_ends_episode = False
    kernel = _kernel
    observed_bodies = ("slider",)
    impact_geoms = ("slider",)

    def __init__(self, randomize: bool = True, **kwargs):
        super().__init__(**kwargs)
        self.randomize = bool(randomize)
        model = self.sim.model
        self._motor = self._actuator("crank_motor")
        hinges = [model.joint(name) for name in ("crank", "rod", "slider")]
        self.read_qpos = np.array([hinge.qposadr[0] for hinge in hinges])
        self.read_qvel = np.array([hinge.dofadr[0] for hinge in hinges])
        slider = model.geom("slider")
        self.slider_half = slider.size[:2].copy()  # (a, b), m
        self.slider_mass = float(model.body("slider").mass[0])
        self.wall_top = float(model.geom("wall_top").pos[1] - model.geom("wall_top").size[1])
        self.wall_bottom = float(model.geom("wall_bottom").pos[1] + model.geom("wall_bottom").size[1])
        self._window = max(1, round(WINDOW / self.dt))  # control steps per mean-speed window
        self._parameters = np.array([self.wall_top, self.wall_bottom, *self.slider_half, self.slider_mass, self.dt,
                                     self._window])

    def scripted_policy(self) -> SpeedController:
        """The hand-written controller that solves the task from the observations alone."""
        return SpeedController(self._motor[2], self.dt)

    def _action_size(self) -> int:
        return 1

    def _observation_space(self) -> spaces.Box:
        high = np.full(19, np.inf, dtype=np.float32)
        high[[0, 1, 5, 6]] = 1.0
        return spaces.Box(-high, high, dtype=np.float32)

    # ----------------------------------------------------------------- episode
    def _initial_state(self, rng):
        model = self.sim.model
        qpos, qvel = model.key_qpos[0].copy(), model.key_qvel[0].copy()
        if self.randomize:
            qvel *= rng.uniform(*START_SPEEDS) / qvel[self.read_qvel[0]]
            self.target = float(rng.uniform(*TARGETS))
        else:
            self.target = NOMINAL
        return qpos, qvel, np.zeros(model.nu)

    def _begin_episode(self) -> None:
        theta = np.empty(3)
        _absolute(self.sim.qpos[self.read_qpos], theta)
        self._memory = np.zeros(SAMPLES + self._window + 1)
        self._memory[[TARGET, START_ANGLE, SAMPLES_TAKEN, SAMPLES]] = self.target, theta[0], 1, theta[0]

    def _apply_action(self, action) -> None:
        index, low, high = self._motor
        self.sim.ctrl[index] = self._scaled(action[0], low, high)

    # ----------------------------------------------------------------- task geometry (the kernel's, for tests)
    def gaps(self) -> tuple[np.ndarray, np.ndarray]:
        """Seed 002's g_1..g_4 (m) and their rates (m/s) at the current state."""
        gaps, rates = np.empty(4), np.empty(4)
        _slider_gaps(self._frames_now()[0], self._parameters, gaps, rates)
        return gaps, rates

    def detect_failure(self) -> str | None:
        return self.task_failures[0] if _failure(self.gaps()[0]) else None


class SpeedController(ScriptedPolicy):
    """Hand-written policy, a PI loop on the crank speed: torque = K_p e + K_i integral of e dt with
    e = target - omega_1, saturated at the motor's torque (the integral stops growing while saturated).

    The integral of the speed error is the crank's angle lag behind the target; it supplies the mean torque
    that the impacts and the speed's swings cost. max_torque: the motor's (N m); dt: the control period (s).
    """

    KP, KI = 0.01, 1.0  # N m s / rad, N m / rad

    def __init__(self, max_torque: float, dt: float):
        self.max_torque, self.dt = max_torque, dt
        self.reset()

    def reset(self) -> None:
        self._lag = 0.0  # rad

    def __call__(self, observation: np.ndarray) -> np.ndarray:
        error = float(observation[4]) - float(observation[2])
        torque = self.KP * error + self.KI * (self._lag + error * self.dt)
        if abs(torque) < self.max_torque:
            self._lag += error * self.dt
        return np.array([np.clip(torque / self.max_torque, -1.0, 1.0)])
