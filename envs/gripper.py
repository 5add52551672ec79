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

from typing import NamedTuple

import mujoco
import numpy as np
from gymnasium import spaces

from mechgym.env import MechEnv, ScriptedPolicy, StepOutcome
from mechgym.simulator import BodyState

LIFT_RATE = 0.2  # m/s of the lift servo's target at |a| = 1
FINGER_RATE = 0.1  # m/s of the finger servos' target at |a| = 1: the pads meet the card at most this fast
LIFT_GOAL, HOLD_TIME = 0.10, 1.0  # m above the table, s
LIFTED = 0.015  # m: the card's lowest point above the table once out of its 10 mm slot
SLIP_SPEED = 0.25  # m/s down relative to the pads: the card is falling, not held
GRASP_OFFSET = np.array([0.0, 0.0, -0.025])  # m: card centre minus pads' midpoint for a pinch 15 mm below the top
HEIGHT_BAND = 0.01  # m: pads within this of the grasp height count their gaps to the card in the reach term
REACH_SCALE = 0.05  # m of reach distance that cost as much per second as holding a pinch earns
START_LIFT, START_FINGERS, START_SHIFT = (-0.02, 0.03), (0.0, 0.01), 0.01  # m


class _Pad(NamedTuple):
    side: float  # +1 the left pad, -1 the right one
    body: BodyState  # its finger's
    rotation: np.ndarray  # (3, 3)
    face: np.ndarray  # the world position (m) of its inner face's centre


class _Frames(NamedTuple):
    card: BodyState
    card_rotation: np.ndarray  # (3, 3)
    normal: np.ndarray  # the card's thin axis, pointing left -> right
    pads: tuple[_Pad, _Pad]  # left, right


def _box_vertical_reach(rotation: np.ndarray, half: np.ndarray) -> float:
    """Half the vertical extent (m) of a box with these half sizes and world rotation."""
    return float(np.abs(rotation[2]) @ half)


class GripperEnv(MechEnv):
    __doc__ = __doc__

    scene = "gripper"
    camera = "front"
    default_physics_dt, default_decimation, default_time_limit = 0.002, 10, 4.0
    reward_terms = ("reach", "grasp", "lift", "effort", "success")
    failure_penalty = -10.0
    task_failures = ("tunnelled", "dropped")

    def __init__(self, randomize: bool = True, **kwargs):
        super().__init__(**kwargs)
        self.randomize = bool(randomize)
        model = self.sim.model
        self._joints = [model.joint(name) for name in ("lift", "left_finger", "right_finger")]
        self._qpos_index = np.array([j.qposadr[0] for j in self._joints])
        self._qvel_index = np.array([j.dofadr[0] for j in self._joints])
        self._card_qpos = model.joint("card_free").qposadr[0]
        self._lift = self._actuator("lift")
        self._fingers = [self._actuator("left_finger"), self._actuator("right_finger")]
        self.card_half = model.geom("card").size.copy()
        self.pad_half = model.geom("left_pad").size.copy()
        table = model.geom("table")
        self.table_top = float(table.pos[2] + table.size[2])
        self.finger_travel = self._fingers[0][2]  # m: the finger servos' ctrlrange top (0 is open)
        self._pad_card = (frozenset(("left_pad", "card")), frozenset(("right_pad", "card")))

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
        joints = qpos[self._qpos_index]
        if self.randomize:
            joints[0] = rng.uniform(*START_LIFT)
            joints[1:] = rng.uniform(*START_FINGERS, size=2)
            qpos[self._card_qpos + 1] += rng.uniform(-START_SHIFT, START_SHIFT)
        qpos[self._qpos_index] = joints
        ctrl[self._lift[0]] = joints[0]
        for (index, _, _), position in zip(self._fingers, joints[1:], strict=True):
            ctrl[index] = position
        return qpos, qvel, ctrl

    def _begin_episode(self) -> None:
        self._lift_target = float(self.sim.ctrl[self._lift[0]])
        self._finger_target = float(self.sim.ctrl[self._fingers[0][0]])
        self.lifted = False  # the card has been out of its slot in this episode
        self._hold_time = 0.0

    # ----------------------------------------------------------------- step
    def _apply_action(self, action) -> None:
        index, low, high = self._lift
        self._lift_target = float(np.clip(self._lift_target + LIFT_RATE * action[0] * self.dt, low, high))
        ctrl = self.sim.ctrl
        ctrl[index] = self._lift_target
        _, low, high = self._fingers[0]
        self._finger_target = float(np.clip(self._finger_target + FINGER_RATE * action[1] * self.dt, low, high))
        for finger, _, _ in self._fingers:
            ctrl[finger] = self._finger_target

    def _observe(self) -> np.ndarray:
        sim = self.sim
        qpos, qvel = sim.qpos, sim.qvel
        card = sim.body("card")
        pads_pos, pads_vel = self._pads_midpoint()
        quat = card.quat if card.quat[0] >= 0 else -card.quat
        finger_target = sim.ctrl[self._fingers[0][0]]
        return np.concatenate((
            qpos[self._qpos_index], qvel[self._qvel_index], [self._lift_target, finger_target],
            card.pos - pads_pos, quat, card.linvel - pads_vel, card.angvel, self._pad_contacts(),
            [self.card_bottom()],
        ))

    def _pads_midpoint(self) -> tuple[np.ndarray, np.ndarray]:
        """Position (m) and velocity (m/s) of the midpoint of the two pads' centres, world frame."""
        left, right = (pad.body for pad in self._frames().pads)
        return 0.5 * (left.pos + right.pos), 0.5 * (left.linvel + right.linvel)

    def _evaluate(self, action) -> StepOutcome:
        obs, dt = self._observation, self.dt
        height = obs[23]
        both = bool(obs[21] and obs[22])
        failure = self.detect_failure()
        self.lifted = self.lifted or height >= LIFTED
        self._hold_time = self._hold_time + dt if height >= LIFT_GOAL else 0.0
        success = failure is None and self._hold_time >= HOLD_TIME - 1e-9
        terms = {
            "reach": 0.0 if self.lifted else -self._reach_distance(obs) / REACH_SCALE * dt,
            "grasp": 1.0 * dt if both else 0.0,
            "lift": 5.0 * min(max(height, 0.0), LIFT_GOAL) / LIFT_GOAL * dt,
            "effort": -0.01 * action[0] ** 2 * dt,
            "success": 10.0 if success else 0.0,
        }
        return StepOutcome(terms, success, failure)

    def _reach_distance(self, obs: np.ndarray) -> float:
        """|r - r*| plus the two pads' gaps to the card (m) once the pads are within HEIGHT_BAND of the grasp
        height, else plus two full finger travels: closing pays only where it makes a pinch."""
        at_height = abs(obs[10] - GRASP_OFFSET[2]) < HEIGHT_BAND
        gaps = float(self.pad_gaps().sum()) if at_height else 2.0 * self.finger_travel
        return float(np.linalg.norm(obs[8:11] - GRASP_OFFSET)) + gaps

    # ----------------------------------------------------------------- task geometry
    def _pad_contacts(self) -> np.ndarray:
        touching = self.sim.touching()
        return np.array([1.0 if pair in touching else 0.0 for pair in self._pad_card])

    def card_bottom(self) -> float:
        """Height (m) of the card's lowest point above the table top."""
        frames = self._frames()
        return float(frames.card.pos[2] - _box_vertical_reach(frames.card_rotation, self.card_half) - self.table_top)

    def _frames(self) -> _Frames:
        """The card's and the pads' frames at the current state (computed once per state)."""
        return self.sim.derived(self._read_frames)

    def _read_frames(self) -> _Frames:
        sim = self.sim
        card = sim.body("card")
        rotation = _rotation(card.quat)
        normal = rotation[:, 0] if rotation[0, 0] >= 0 else -rotation[:, 0]
        pads = []
        for finger, side in (("left_finger", 1.0), ("right_finger", -1.0)):
            pad = sim.body(finger)
            pad_rotation = _rotation(pad.quat)
            pads.append(_Pad(side, pad, pad_rotation, pad.pos + pad_rotation[:, 0] * side * self.pad_half[0]))
        return _Frames(card, rotation, normal, tuple(pads))

    def pad_gaps(self) -> np.ndarray:
        """Distance (m, >= 0) of each pad's inner face from the card's face on its side, along the card's
        thin axis: (left, right)."""
        frames = self._frames()
        centre, normal = frames.card.pos, frames.normal
        return np.array([max(-pad.side * float(normal @ (pad.face - centre)) - self.card_half[0], 0.0)
                         for pad in frames.pads])

    def pads_tunnelled(self) -> bool:
        """A pad's inner face on the far side of the card's mid-plane, facing the card."""
        frames = self._frames()
        centre, rotation, normal = frames.card.pos, frames.card_rotation, frames.normal
        for pad in frames.pads:
            local = rotation.T @ (pad.face - centre)
            facing = (abs(local[1]) < self.card_half[1] + self.pad_half[1]
                      and abs(local[2]) < self.card_half[2] + self.pad_half[2])
            if facing and pad.side * float(normal @ (pad.face - centre)) > 0.0:
                return True
        return False

    def card_dropped(self) -> bool:
        """After the card was lifted out of its slot: it slips down the pads fast, or it is below them."""
        if not self.lifted:
            return False
        frames = self._frames()
        card = frames.card
        if card.linvel[2] - self._pads_midpoint()[1][2] < -SLIP_SPEED:
            return True
        card_top = card.pos[2] + _box_vertical_reach(frames.card_rotation, self.card_half)
        pad_bottom = min(pad.body.pos[2] - _box_vertical_reach(pad.rotation, self.pad_half) for pad in frames.pads)
        return bool(card_top < pad_bottom)

    def detect_failure(self) -> str | None:
        if self.pads_tunnelled():
            return "tunnelled"
        if self.card_dropped():
            return "dropped"
        return None


def _rotation(quat: np.ndarray) -> np.ndarray:
    """3x3 rotation matrix of a unit quaternion (w, x, y, z)."""
    matrix = np.empty(9)
    mujoco.mju_quat2Mat(matrix, quat)
    return matrix.reshape(3, 3)


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
