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

from collections import deque
from itertools import accumulate

import numpy as np
from gymnasium import spaces

from mechgym.env import MechEnv, ScriptedPolicy, StepOutcome

WINDOW = 0.1  # s over which the crank's mean speed is taken
TOLERANCE = 0.05  # relative error of the mean speed for success
PENETRATION = -0.0005  # m: the deepest gap allowed, half the 1 mm clearance
IMPACT_WEIGHT = 0.001  # reward per N s of impulse: small enough that the target speed stays the best (docstring)
TARGETS, START_SPEEDS, NOMINAL = (100.0, 200.0), (125.0, 175.0), 150.0  # rad/s


def _absolute(relative: np.ndarray) -> list[float]:
    """theta_1..3 (rad) of the MJCF hinges' relative angles, or their rates (rad/s) of the relative rates: each
    child's added to its parent's."""
    return list(accumulate(relative.tolist()))


class SliderCrankEnv(MechEnv):
    __doc__ = __doc__

    scene = "slider_crank"
    camera = "plane"
    default_physics_dt, default_decimation, default_time_limit = 1e-4, 10, 1.0
    reward_terms = ("speed", "impact", "torque")
    failure_penalty = -10.0
    task_failures = ("penetrated",)
    success_ends_episode = False

    def __init__(self, randomize: bool = True, **kwargs):
        super().__init__(**kwargs)
        self.randomize = bool(randomize)
        model = self.sim.model
        self._motor = self._actuator("crank_motor")
        hinges = [model.joint(name) for name in ("crank", "rod", "slider")]
        self._hinges = [int(hinge.qposadr[0]) for hinge in hinges]  # their qpos addresses
        self._hinge_dofs = [int(hinge.dofadr[0]) for hinge in hinges]  # and qvel addresses
        slider = model.geom("slider")
        self.slider_half = slider.size[:2].copy()  # (a, b), m
        self.slider_mass = float(model.body("slider").mass[0])
        self.wall_top = float(model.geom("wall_top").pos[1] - model.geom("wall_top").size[1])
        self.wall_bottom = float(model.geom("wall_bottom").pos[1] + model.geom("wall_bottom").size[1])
        a, b = self.slider_half.tolist()
        # the corners (x, y) in the slider's frame, and whether a top one: g1, g2 (top); g3, g4 (bottom)
        self._corners = ((-a, b, True), (a, b, True), (-a, -b, False), (a, -b, False))
        self._window = max(1, round(WINDOW / self.dt))  # control steps per mean-speed window

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
            qvel *= rng.uniform(*START_SPEEDS) / qvel[self._hinge_dofs[0]]
            self.target = float(rng.uniform(*TARGETS))
        else:
            self.target = NOMINAL
        return qpos, qvel, np.zeros(model.nu)

    def _begin_episode(self) -> None:
        self._start_angle = _absolute(self.sim.qpos[self._hinges])[0]
        self._angles = deque([self._start_angle], maxlen=self._window + 1)

    # ----------------------------------------------------------------- step
    def _apply_action(self, action) -> None:
        index, low, high = self._motor
        self.sim.ctrl[index] = self._scaled(action[0], low, high)

    def _observe(self) -> np.ndarray:
        sim = self.sim
        theta, omega = _absolute(sim.qpos[self._hinges]), _absolute(sim.qvel[self._hinge_dofs])
        if sim.step_count > 0:  # one sample per control step; reset put in the first
            self._angles.append(theta[0])
        steps = len(self._angles) - 1
        mean_speed = (self._angles[-1] - self._angles[0]) / (steps * self.dt) if steps else omega[0]
        gaps, rates = self.gaps()
        lag = self.target * sim.time - (theta[0] - self._start_angle)
        return np.concatenate((
            [np.cos(theta[0]), np.sin(theta[0]), omega[0], mean_speed, self.target,
             np.cos(theta[1]), np.sin(theta[1]), omega[1], theta[2], omega[2]],
            1000.0 * gaps, rates, [lag],
        ))

    def _evaluate(self, action) -> StepOutcome:
        obs, dt = self._observation, self.dt
        error = (obs[3] - self.target) / self.target
        full_window = len(self._angles) > self._window
        failure = self.detect_failure()
        terms = {
            "speed": -(error / 0.1) ** 2 * dt,
            "impact": -IMPACT_WEIGHT * self.slider_mass * sum(self._impact_speeds("slider")),
            "torque": -0.1 * float(action[0]) ** 2 * dt,
        }
        return StepOutcome(terms, failure is None and full_window and abs(error) <= TOLERANCE, failure)

    # ----------------------------------------------------------------- task geometry
    def gaps(self) -> tuple[np.ndarray, np.ndarray]:
        """Seed 002's g_1..g_4 (m) and their rates (m/s), from the slider body's planar pose and velocity
        (read-only: computed once per state, for the observation and the failure check)."""
        return self.sim.derived(self._slider_gaps)

    def _slider_gaps(self) -> tuple[np.ndarray, np.ndarray]:
        slider = self.sim.body("slider")
        w, _, _, z = slider.quat.tolist()
        # the rotation about z (the motion is planar) by 2 atan2(z, w): cos = (w^2 - z^2) / r^2, sin = 2 w z / r^2
        r2 = w * w + z * z
        c, s = (w * w - z * z) / r2, 2.0 * w * z / r2
        centre_y, v_y, omega = slider.pos[1].item(), slider.linvel[1].item(), slider.angvel[2].item()
        gaps, rates = [], []
        for x, y, top in self._corners:
            height = centre_y + s * x + c * y
            rate = v_y + omega * (c * x - s * y)  # a corner's y-velocity: v_y + (omega x r)_y = v_y + omega_z r_x
            gaps.append(self.wall_top - height if top else height - self.wall_bottom)
            rates.append(-rate if top else rate)
        gaps, rates = np.array(gaps), np.array(rates)
        gaps.setflags(write=False)
        rates.setflags(write=False)
        return gaps, rates

    def detect_failure(self) -> str | None:
        gaps, _ = self.gaps()
        return "penetrated" if gaps.min() < PENETRATION else None


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
