"""``mechgym/Gripper-v0``: lower a parallel gripper, pinch a 1 mm card, lift it 10 cm out of its fixture, hold it.

Scene ``gripper.xml``: a carriage on a vertical slide (``lift``, position servo, range -0.12 .. 0.10 m) with
two fingers on horizontal slides (position servos, 0 open .. 0.035 m closed; the pads touch a centred card
at 0.0345 m, so a full close squeezes it with about 1 N per finger) above a 1 x 60 x 80 mm, 10 g card
standing in a 1.2 mm slot, 10 mm deep, on a table whose top is at z = 0. Lengths below are read from the
compiled scene.

Actions (2, in [-1, 1], clipped):

=====  =====================  ====  ====================================================================
index  meaning                unit  scaling
=====  =====================  ====  ====================================================================
0      carriage height rate   m/s   the lift servo's target moves by 0.2 a m/s (a dt per step), held in
                                    the lift's ctrlrange
1      finger closing rate    m/s   both finger servos' target moves by 0.1 a m/s (a dt per step), held
                                    in their ctrlrange, 0 open .. 0.035 m closed: a pad meets the card
                                    at a servo's tracking speed, not with a jump of its target
=====  =====================  ====  ====================================================================

Observations (24, float32, unbounded unless noted):

=====  ======================================================================  =====
index  meaning                                                                 unit
=====  ======================================================================  =====
0-2    joint positions: lift, left finger, right finger                        m
3-5    joint velocities: lift, left finger, right finger                       m/s
6      lift servo target                                                       m
7      finger servo target                                                     m
8-10   card centre minus the midpoint of the two pads' centres (world frame)   m
11-14  card orientation quaternion (w, x, y, z), sign chosen w >= 0 ([-1, 1])  -
15-17  card linear velocity minus that of the pads' midpoint (world frame)     m/s
18-20  card angular velocity (world frame)                                     rad/s
21-22  left pad touches the card, right pad touches the card ({0, 1})           -
23     height of the card's lowest point above the table top                   m
=====  ======================================================================  =====

Reward terms (``info["reward_<name>"]``; rates are multiplied by the control period dt):
``reach`` -(|r - r*| + g) / 0.05 m dt before the card is lifted, r observations 8-10 and
r* = (0, 0, -25 mm) (the pads' centres 15 mm below the card's top edge), g the two pads' gaps to the card's
faces once the pads are within 10 mm of that height (else two full finger travels, 70 mm, so that closing
pays only where it pinches); ``grasp`` +1 dt while both pads touch the card; ``lift``
+5 min(h, 0.1 m) / 0.1 m dt, h observation 23 (a lifted card earns more than a pinch on the table);
``effort`` -0.01 a_0^2 dt; ``success`` +10 at success; ``failure`` -10 at a task failure.

Success: the card's lowest point at least 0.10 m above the table for 1 s without interruption (it can
only be there if the pads hold it); the episode then terminates.

Failures (terminate): ``"tunnelled"``: a pad's inner face is found on the far side of the card's
mid-plane (the plane through its centre normal to its thin axis) while it faces the card (its centre
within the card's extent plus the pad's along the plane): a finger passed into or through the card;
``"dropped"``: after the card has been lifted out of its slot (lowest point 15 mm up) it falls: it slips
down relative to the pads faster than 0.25 m/s, or its top is below the pads' bottom edges;
``"diverged"`` (truncates, no penalty: see :mod:`mechgym.env`).

Start: with ``randomize=True`` (default) the lift starts at a position uniform in [-0.02, 0.03] m, the
fingers uniform in [0, 0.01] m, each servo's target at its joint, and the card (at rest, upright in its
slot) is shifted along the slot uniformly in [-10, 10] mm. With ``randomize=False`` everything is at the
scene's pose.

Defaults: physics_dt 0.002 s, decimation 10 (dt = 0.02 s), time_limit 4 s.
"""

from __future__ import annotations

import math

import numpy as np
from gymnasium import spaces
from numba import njit

from mechgym.compiled import CompiledTask
from mechgym.env import ScriptedPolicy
from mechgym.simulator import FRAME_ANGVEL, FRAME_LINVEL, FRAME_POS, FRAME_QUAT
from mechgym.steps import FAILURE, SUCCESS

LIFT_RATE = 0.2  # m/s of the lift servo's target at |a| = 1
FINGER_RATE = 0.1  # m/s of the finger servos' target at |a| = 1: the pads meet the card at most this fast
LIFT_GOAL, HOLD_TIME = 0.10, 1.0  # m above the table, s
LIFTED = 0.015  # m: the card's lowest point above the table once out of its 10 mm slot
SLIP_SPEED = 0.25  # m/s down relative to the pads: the card is falling, not held
GRASP_OFFSET = np.array([0.0, 0.0, -0.025])  # m: card centre minus pads' midpoint for a pinch 15 mm below the top
HEIGHT_BAND = 0.01  # m: pads within this of the grasp height count their gaps to the card in the reach term
REACH_SCALE = 0.05  # m of reach distance that cost as much per second as holding a pinch earns
START_LIFT, START_FINGERS, START_SHIFT = (-0.02, 0.03), (0.0, 0.01), 0.01  # m
FAILURES = ("tunnelled", "dropped")

# The kernel's parameters: the card's half sizes (3, m), a pad's (3, m), the table top's height (m), the finger
# travel (m), the control period (s).
CARD_HALF, PAD_HALF, TABLE_TOP, FINGER_TRAVEL, DT = 0, 3, 6, 7, 8
# The episode's memory: whether the card has been out of its slot (1.0) or not (0.0); seconds held at the goal.
LIFTED_YET, HOLD_SECONDS = 0, 1
# The frames the kernel reads (``observed_bodies``), and each pad's side: +1 the left pad, -1 the right one
CARD, LEFT, RIGHT = 0, 1, 2
PADS = ((LEFT, 1.0), (RIGHT, -1.0))


@njit(cache=True)
def _rotation(frame: np.ndarray, out: np.ndarray) -> None:
    """The 3x3 rotation matrix of a frame's unit quaternion (w, x, y, z)."""
    w, x, y, z = frame[FRAME_QUAT], frame[FRAME_QUAT + 1], frame[FRAME_QUAT + 2], frame[FRAME_QUAT + 3]
    out[0, 0], out[1, 1], out[2, 2] = w * w + x * x - y * y - z * z, w * w - x * x + y * y - z * z, \
        w * w - x * x - y * y + z * z
    out[0, 1], out[1, 0] = 2.0 * (x * y - w * z), 2.0 * (x * y + w * z)
    out[0, 2], out[2, 0] = 2.0 * (x * z + w * y), 2.0 * (x * z - w * y)
    out[1, 2], out[2, 1] = 2.0 * (y * z - w * x), 2.0 * (y * z + w * x)


@njit(cache=True)
def _vertical_reach(rotation: np.ndarray, half: np.ndarray) -> float:
    """Half the vertical extent (m) of a box with these half sizes and world rotation."""
    return abs(rotation[2, 0]) * half[0] + abs(rotation[2, 1]) * half[1] + abs(rotation[2, 2]) * half[2]


@njit(cache=True)
def _card_bottom(frames: np.ndarray, parameters: np.ndarray, rotations: np.ndarray) -> float:
    """Height (m) of the card's lowest point above the table top."""
    return (frames[CARD, FRAME_POS + 2] - _vertical_reach(rotations[CARD], parameters[CARD_HALF:CARD_HALF + 3])
            - parameters[TABLE_TOP])


@njit(cache=True)
def _geometry(frames: np.ndarray, parameters: np.ndarray, rotations: np.ndarray, normal: np.ndarray,
              faces: np.ndarray) -> None:
    """The card's and the pads' rotations (3, 3, 3: card, left, right), the card's thin axis pointing left ->
    right, and each pad's inner face's centre (2, 3: left, right; world, m)."""
    for body in (CARD, LEFT, RIGHT):
        _rotation(frames[body], rotations[body])
    sign = 1.0 if rotations[CARD, 0, 0] >= 0.0 else -1.0
    for k in range(3):
        normal[k] = sign * rotations[CARD, k, 0]
    for pad, (body, side) in enumerate(PADS):
        for k in range(3):
            faces[pad, k] = frames[body, FRAME_POS + k] + rotations[body, k, 0] * side * parameters[PAD_HALF]


@njit(cache=True)
def _along_normal(frames: np.ndarray, normal: np.ndarray, face: np.ndarray) -> float:
    """normal . (face - card centre) (m)."""
    total = 0.0
    for k in range(3):
        total += normal[k] * (face[k] - frames[CARD, FRAME_POS + k])
    return total


@njit(cache=True)
def _pad_gaps(frames: np.ndarray, parameters: np.ndarray, normal: np.ndarray, faces: np.ndarray,
              gaps: np.ndarray) -> None:
    """Distance (m, >= 0) of each pad's inner face from the card's face on its side, along the card's thin
    axis: (left, right)."""
    for pad, (_, side) in enumerate(PADS):
        gaps[pad] = max(-side * _along_normal(frames, normal, faces[pad]) - parameters[CARD_HALF], 0.0)


@njit(cache=True)
def _pads_tunnelled(frames: np.ndarray, parameters: np.ndarray, rotations: np.ndarray, normal: np.ndarray,
                    faces: np.ndarray) -> bool:
    """A pad's inner face on the far side of the card's mid-plane, facing the card."""
    for pad, (_, side) in enumerate(PADS):
        local = np.zeros(3)  # R^T (face - centre): the face in the card's frame
        for row in range(3):
            for k in range(3):
                local[row] += rotations[CARD, k, row] * (faces[pad, k] - frames[CARD, FRAME_POS + k])
        facing = (abs(local[1]) < parameters[CARD_HALF + 1] + parameters[PAD_HALF + 1]
                  and abs(local[2]) < parameters[CARD_HALF + 2] + parameters[PAD_HALF + 2])
        if facing and side * _along_normal(frames, normal, faces[pad]) > 0.0:
            return True
    return False


@njit(cache=True)
def _card_dropped(lifted: bool, frames: np.ndarray, parameters: np.ndarray, rotations: np.ndarray) -> bool:
    """After the card was lifted out of its slot: it slips down the pads fast, or it is below them."""
    if not lifted:
        return False
    pads_vertical_speed = 0.5 * (frames[LEFT, FRAME_LINVEL + 2] + frames[RIGHT, FRAME_LINVEL + 2])
    if frames[CARD, FRAME_LINVEL + 2] - pads_vertical_speed < -SLIP_SPEED:
        return True
    card_top = frames[CARD, FRAME_POS + 2] + _vertical_reach(rotations[CARD], parameters[CARD_HALF:CARD_HALF + 3])
    pad_bottom = min([frames[body, FRAME_POS + 2] - _vertical_reach(rotations[body], parameters[PAD_HALF:PAD_HALF + 3])
                      for body in (LEFT, RIGHT)])
    return card_top < pad_bottom


@njit(cache=True)
def _failure(lifted: bool, frames: np.ndarray, parameters: np.ndarray, rotations: np.ndarray, normal: np.ndarray,
             faces: np.ndarray) -> int:
    """The task failure: 0 none, k FAILURES[k - 1]."""
    if _pads_tunnelled(frames, parameters, rotations, normal, faces):
        return 1
    if _card_dropped(lifted, frames, parameters, rotations):
        return 2
    return 0


@njit(cache=True)
def _kernel(step, rows, parameters, time, qpos, qvel, ctrl, frames, touching, impacts, actions, memory, observations,
            terms, outcome):
    """The task's kernel (:mod:`mechgym.compiled`): observation, reward terms, success and failure."""
    dt = parameters[DT]
    rotations, normal, faces, gaps = np.empty((3, 3, 3)), np.empty(3), np.empty((2, 3)), np.empty(2)
    for i in rows:
        bodies, observation = frames[i], observations[i]
        _geometry(bodies, parameters, rotations, normal, faces)
        card = bodies[CARD]
        left, right = bodies[LEFT], bodies[RIGHT]
        sign = 1.0 if card[FRAME_QUAT] >= 0.0 else -1.0
        for k in range(3):
            observation[k], observation[3 + k] = qpos[i, k], qvel[i, k]
            # the card relative to the midpoint of the pads' centres
            observation[8 + k] = card[FRAME_POS + k] - 0.5 * (left[FRAME_POS + k] + right[FRAME_POS + k])
            observation[15 + k] = card[FRAME_LINVEL + k] - 0.5 * (left[FRAME_LINVEL + k] + right[FRAME_LINVEL + k])
            observation[18 + k] = card[FRAME_ANGVEL + k]
        observation[6], observation[7] = ctrl[i, 0], ctrl[i, 1]
        for k in range(4):
            observation[11 + k] = sign * card[FRAME_QUAT + k]
        observation[21], observation[22] = touching[i, 0], touching[i, 1]
        height = _card_bottom(bodies, parameters, rotations)
        observation[23] = height
        if not step:
            continue
        episode = memory[i]
        failure = _failure(episode[LIFTED_YET] == 1.0, bodies, parameters, rotations, normal, faces)
        if height >= LIFTED:
            episode[LIFTED_YET] = 1.0
        episode[HOLD_SECONDS] = episode[HOLD_SECONDS] + dt if height >= LIFT_GOAL else 0.0
        success = failure == 0 and episode[HOLD_SECONDS] >= HOLD_TIME - 1e-9
        outcome[i, SUCCESS], outcome[i, FAILURE] = success, failure
        if episode[LIFTED_YET] == 1.0:
            terms[i, 0] = 0.0  # reach
        else:
            # |r - r*| plus the two pads' gaps to the card (m) once the pads are within HEIGHT_BAND of the grasp
            # height, else plus two full finger travels: closing pays only where it makes a pinch
            if abs(observation[10] - GRASP_OFFSET[2]) < HEIGHT_BAND:
                _pad_gaps(bodies, parameters, normal, faces, gaps)
                reach = gaps[0] + gaps[1]
            else:
                reach = 2.0 * parameters[FINGER_TRAVEL]
            distance = math.sqrt(sum([(observation[8 + k] - GRASP_OFFSET[k]) ** 2 for k in range(3)]))
            terms[i, 0] = -(distance + reach) / REACH_SCALE * dt
        terms[i, 1] = 1.0 * dt if observation[21] != 0.0 and observation[22] != 0.0 else 0.0  # grasp
        terms[i, 2] = 5.0 * min(max(height, 0.0), LIFT_GOAL) / LIFT_GOAL * dt  # lift
        terms[i, 3] = -0.01 * actions[i, 0] ** 2 * dt  # effort
        terms[i, 4] = 10.0 if success else 0.0  # success


class GripperEnv(CompiledTask):
    __doc__ = __doc__

    scene = "gripper"
    camera = "front"
    default_physics_dt, default_decimation, default_time_limit = 0.002, 10, 4.0
    reward_terms = ("reach", "grasp", "lift", "effort", "success")
    failure_penalty = -10.0
    task_failures = FAILURES
    kernel = _kernel
    observed_bodies = ("card", "left_finger", "right_finger")  # CARD, LEFT, RIGHT
    observed_pairs = (("left_pad", "card"), ("right_pad", "card"))

    def __init__(self, randomize: bool = True, **kwargs):
        super().__init__(**kwargs)
        self.randomize = bool(randomize)
        model = self.sim.model
        joints = [model.joint(name) for name in ("lift", "left_finger", "right_finger")]
        self.read_qpos = np.array([joint.qposadr[0] for joint in joints])
        self.read_qvel = np.array([joint.dofadr[0] for joint in joints])
        self._card_qpos = model.joint("card_free").qposadr[0]
        self._lift = self._actuator("lift")
        self._fingers = [self._actuator("left_finger"), self._actuator("right_finger")]
        self.read_ctrl = np.array([self._lift[0], self._fingers[0][0]])  # the lift's and the fingers' targets
        self.card_half = model.geom("card").size.copy()
        self.pad_half = model.geom("left_pad").size.copy()
        table = model.geom("table")
        self.table_top = float(table.pos[2] + table.size[2])
        self.finger_travel = self._fingers[0][2]  # m: the finger servos' ctrlrange top (0 is open)
        self._parameters = np.array([*self.card_half, *self.pad_half, self.table_top, self.finger_travel, self.dt])

    def scripted_policy(self) -> PickAndLift:
        """The hand-written controller that solves the task from the observations alone."""
        return PickAndLift(FINGER_RATE * self.dt)

    def _action_size(self) -> int:
        return 2

    def _observation_space(self) -> spaces.Box:
        high = np.full(24, np.inf, dtype=np.float32)
        high[11:15] = 1.0
        low = -high
        low[21:23], high[21:23] = 0.0, 1.0
        return spaces.Box(low, high, dtype=np.float32)

    # ----------------------------------------------------------------- episode
    def _initial_state(self, rng):
        model = self.sim.model
        qpos, qvel, ctrl = model.qpos0.copy(), np.zeros(model.nv), np.zeros(model.nu)
        joints = qpos[self.read_qpos]
        if self.randomize:
            joints[0] = rng.uniform(*START_LIFT)
            joints[1:] = rng.uniform(*START_FINGERS, size=2)
            qpos[self._card_qpos + 1] += rng.uniform(-START_SHIFT, START_SHIFT)
        qpos[self.read_qpos] = joints
        ctrl[self._lift[0]] = joints[0]
        for (index, _, _), position in zip(self._fingers, joints[1:], strict=True):
            ctrl[index] = position
        return qpos, qvel, ctrl

    def _begin_episode(self) -> None:
        self._lift_target = float(self.sim.ctrl[self._lift[0]])
        self._finger_target = float(self.sim.ctrl[self._fingers[0][0]])
        self._memory = np.zeros(2)

    def _apply_action(self, action) -> None:
        index, low, high = self._lift
        lift, fingers = action.tolist()
        self._lift_target = min(max(self._lift_target + LIFT_RATE * lift * self.dt, low), high)
        ctrl = self.sim.ctrl
        ctrl[index] = self._lift_target
        _, low, high = self._fingers[0]
        self._finger_target = min(max(self._finger_target + FINGER_RATE * fingers * self.dt, low), high)
        for finger, _, _ in self._fingers:
            ctrl[finger] = self._finger_target

    # ----------------------------------------------------------------- task geometry (the kernel's, for tests)
    @property
    def lifted(self) -> bool:
        """The card has been out of its slot in this episode."""
        return bool(self._memory[LIFTED_YET])

    @lifted.setter
    def lifted(self, value: bool) -> None:
        self._memory[LIFTED_YET] = float(bool(value))

    def _geometry_now(self):
        """(frames, rotations, normal, faces) at the current state (see ``_geometry``)."""
        frames = self._frames_now()
        rotations, normal, faces = np.empty((3, 3, 3)), np.empty(3), np.empty((2, 3))
        _geometry(frames, self._parameters, rotations, normal, faces)
        return frames, rotations, normal, faces

    def card_bottom(self) -> float:
        """Height (m) of the card's lowest point above the table top."""
        frames, rotations, _, _ = self._geometry_now()
        return float(_card_bottom(frames, self._parameters, rotations))

    def pad_gaps(self) -> np.ndarray:
        """Distance (m, >= 0) of each pad's inner face from the card's face on its side, along the card's
        thin axis: (left, right)."""
        frames, _, normal, faces = self._geometry_now()
        gaps = np.empty(2)
        _pad_gaps(frames, self._parameters, normal, faces, gaps)
        return gaps

    def pads_tunnelled(self) -> bool:
        """A pad's inner face on the far side of the card's mid-plane, facing the card."""
        frames, rotations, normal, faces = self._geometry_now()
        return bool(_pads_tunnelled(frames, self._parameters, rotations, normal, faces))

    def card_dropped(self) -> bool:
        """After the card was lifted out of its slot: it slips down the pads fast, or it is below them."""
        frames, rotations, _, _ = self._geometry_now()
        return bool(_card_dropped(self.lifted, frames, self._parameters, rotations))

    def detect_failure(self) -> str | None:
        frames, rotations, normal, faces = self._geometry_now()
        failure = _failure(self.lifted, frames, self._parameters, rotations, normal, faces)
        return FAILURES[failure - 1] if failure else None


class PickAndLift(ScriptedPolicy):
    """Hand-written policy, a state machine read off the observations: with the fingers open, bring the pads
    to 15 mm below the card's top edge; close them gently (the finger target a little ahead of the fingers,
    so that they meet the card slowly); once both pads touch the card and the fingers have stopped, close
    fully, raise the carriage (slowly at first) until the card's lowest point is 12 cm up, and hold it there.

    finger_step: the finger target's change (m) per control step at action 1, to turn a wanted target into
    an action.
    """

    GAIN = 8.0  # 1/s: lift rate per metre of height error
    AT_HEIGHT, SETTLED = 0.002, 0.005  # m, m/s
    LIFT_TO = 0.12  # m: the card's lowest point, above the 0.10 m goal
    MAX_LIFT_ACTION = 0.5  # at most 0.1 m/s while carrying the card
    START_LIFT_ACTION, LIFT_RAMP = 0.15, 20.0  # 0.03 m/s as the card leaves the table, +4 m/s per m risen
    CLOSE_LEAD = 0.0015  # m: finger target ahead of the fingers while closing

    def __init__(self, finger_step: float):
        self.finger_step = finger_step

    def __call__(self, observation: np.ndarray) -> np.ndarray:
        obs = observation.astype(float)
        relative_z, height = obs[10], obs[23]
        touching = obs[21] > 0.5 and obs[22] > 0.5
        settled = np.all(np.abs(obs[4:6]) < self.SETTLED)
        lifted = height > 0.5 * LIFTED
        if lifted or (touching and settled):
            # soft start: the carriage speeds up as the card rises, so that it leaves the table without a jolt
            most = min(self.MAX_LIFT_ACTION, self.START_LIFT_ACTION + self.LIFT_RAMP * max(height, 0.0))
            lift = np.clip(self.GAIN * (self.LIFT_TO - height) / LIFT_RATE, -most, most)
            return np.array([lift, 1.0])
        # pads' height error: the card centre should sit GRASP_OFFSET below the pads' midpoint
        error = relative_z - GRASP_OFFSET[2]
        lift = np.clip(self.GAIN * error / LIFT_RATE, -1.0, 1.0)
        if abs(error) >= self.AT_HEIGHT:
            return np.array([lift, -1.0])
        fingers = min(obs[1], obs[2])
        wanted = fingers + self.CLOSE_LEAD
        return np.array([lift, np.clip((wanted - obs[7]) / self.finger_step, -1.0, 1.0)])
