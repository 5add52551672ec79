"""mechgym/Gripper-v0: the failure detectors' thresholds on constructed states, and a hand-written
pick-and-lift script."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from mechgym.env import ScriptedPolicy
from mechgym.rollout import run_episodes, summary

BACKENDS = ("mechgym", "mujoco")
GRASP_LIFT = -0.075  # m: the lift joint position that puts the pads' centres 15 mm below the card's top


def make(backend: str, **kwargs) -> gym.Env:
    return gym.make("mechgym/Gripper-v0", backend=backend, **kwargs)


def place(env: gym.Env, lift: float, left: float, right: float, card_pos, card_vel=(0.0, 0.0, 0.0)):
    """Set the joints (m) and the card's upright pose (m) and velocity (m/s), everything else at rest."""
    task = env.unwrapped
    qpos = task.sim.model.qpos0.copy()
    qvel = np.zeros(task.sim.model.nv)
    qpos[0:3] = card_pos
    qvel[0:3] = card_vel
    qpos[task.read_qpos] = (lift, left, right)
    task.sim.reset(qpos=qpos, qvel=qvel)


def inner_faces(env: gym.Env) -> tuple[float, float]:
    sim, half = env.unwrapped.sim, env.unwrapped.pad_half[0]
    return sim.body("left_finger").pos[0] + half, sim.body("right_finger").pos[0] - half


@pytest.mark.parametrize("backend", BACKENDS)
def test_tunnelled_means_a_pad_face_beyond_the_cards_mid_plane_while_facing_it(backend):
    env = make(backend)
    env.reset(seed=0)
    task = env.unwrapped
    place(env, GRASP_LIFT, 0.01, 0.0, (0.0, 0.0, 0.04))
    left_face, right_face = inner_faces(env)
    assert left_face == pytest.approx(-0.025)
    for card_x, expected in ((left_face + 1e-4, False), (left_face - 1e-4, True)):
        place(env, GRASP_LIFT, 0.01, 0.0, (card_x, 0.0, 0.04))
        assert task.pads_tunnelled() is expected
        assert task.detect_failure() == ("tunnelled" if expected else None)
    for card_x, expected in ((right_face - 1e-4, False), (right_face + 1e-4, True)):
        place(env, GRASP_LIFT, 0.0, 0.0, (card_x, 0.0, 0.04))
        assert task.pads_tunnelled() is expected
    # beyond the mid-plane but not facing the card: the carriage is up, or the card is off to the side
    place(env, 0.05, 0.01, 0.0, (left_face - 1e-3, 0.0, 0.04))
    assert not task.pads_tunnelled()
    reach = task.card_half[1] + task.pad_half[1]
    for card_y, expected in ((reach - 1e-4, True), (reach + 1e-4, False)):
        place(env, GRASP_LIFT, 0.01, 0.0, (left_face - 1e-3, card_y, 0.04))
        assert task.pads_tunnelled() is expected


@pytest.mark.parametrize("backend", BACKENDS)
def test_dropped_means_falling_or_below_the_pads_once_lifted(backend):
    env = make(backend)
    env.reset(seed=0)
    task = env.unwrapped
    held = (0.0, 0.0, 0.14 - 0.075 + 0.1 - 0.025)  # the card centre 25 mm below the pads' centres, lifted 10 cm
    place(env, GRASP_LIFT + 0.1, 0.0345, 0.0345, held, (0.0, 0.0, -0.26))
    assert task.card_dropped() is False  # never lifted in this episode: a falling card is not a drop
    task.lifted = True
    assert task.detect_failure() == "dropped"
    place(env, GRASP_LIFT + 0.1, 0.0345, 0.0345, held, (0.0, 0.0, -0.24))
    assert task.card_dropped() is False
    pad_bottom = 0.14 + GRASP_LIFT + 0.1 - task.pad_half[2]
    for top, expected in ((pad_bottom + 1e-4, False), (pad_bottom - 1e-4, True)):
        place(env, GRASP_LIFT + 0.1, 0.0, 0.0, (0.0, 0.0, top - task.card_half[2]))
        assert task.card_dropped() is expected


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_observation_reads_the_card_relative_to_the_pads_and_the_contacts(backend):
    env = make(backend, randomize=False)
    observation, _ = env.reset(seed=0)
    np.testing.assert_allclose(observation[8:11], [0.0, 0.0, 0.04 - 0.14], atol=1e-7)
    assert observation[23] == pytest.approx(0.0, abs=1e-6) and not observation[21:23].any()


def test_the_pad_gaps_are_the_finger_travel_left_to_the_touch_at_0_0345_m():
    """The scene's pads touch a centred card at a finger position of 0.0345 m (gripper.xml)."""
    env = make("mujoco", randomize=False)
    env.reset(seed=0)
    card = env.unwrapped.sim.body("card").pos.copy()
    for left, right in ((0.0, 0.0), (0.02, 0.03), (0.0345, 0.0345)):
        place(env, GRASP_LIFT, left, right, card)
        np.testing.assert_allclose(env.unwrapped.pad_gaps(), [0.0345 - left, 0.0345 - right], atol=1e-9)


def test_the_finger_action_is_a_rate_of_the_servo_target():
    env = make("mujoco", randomize=False)
    observation, _ = env.reset(seed=0)
    targets = [observation[7]]
    for action in (1.0, 1.0, 0.5, -1.0, -1.0, -1.0):
        observation, *_ = env.step(np.array([0.0, action]))
        targets.append(observation[7])
    step = 0.1 * env.unwrapped.dt  # m per control step at action 1
    np.testing.assert_allclose(targets, [0.0, step, 2 * step, 2.5 * step, 1.5 * step, 0.5 * step, 0.0], atol=1e-12)


def test_on_mujoco_the_pick_and_lift_script_lifts_the_card_from_every_start():
    env = make("mujoco")
    result = summary(list(run_episodes(env, env.unwrapped.scripted_policy(), first_seed=0, episodes=10)))
    assert result["successes"] == 10, result


def test_on_mujoco_at_5_ms_the_pads_pass_into_the_card():
    """MuJoCo's fingers step through the 1 mm card at physics_dt = 5 ms (the issue's failure case)."""
    env = make("mujoco", physics_dt=0.005, decimation=4)
    result = summary(list(run_episodes(env, env.unwrapped.scripted_policy(), first_seed=0, episodes=3)))
    assert result["failures"] == {"tunnelled": 3}


@pytest.fixture(scope="module")
def engine_episodes():
    env = make("mechgym")
    return list(run_episodes(env, env.unwrapped.scripted_policy(), first_seed=0, episodes=10))


@pytest.mark.slow
def test_on_the_in_house_engine_the_pick_and_lift_script_never_passes_through_or_drops_the_card(engine_episodes):
    """Every episode that the engine completes is a success; any other ends in "diverged", the engine's contact
    solve failing at the pinch or the start of the lift (Engine IV's issue). Measured: 10 of 10 since the
    contact-space solve has Newton's method (before: 8 of 10, seeds 0 and 7 failing at the pinch; which seeds
    fail changed with any change of round-off)."""
    assert all(e.success or e.failure == "diverged" for e in engine_episodes), engine_episodes
    assert sum(e.success for e in engine_episodes) >= 8


@pytest.mark.slow
def test_on_the_in_house_engine_the_pick_and_lift_script_lifts_the_card_from_every_start(engine_episodes):
    assert all(e.success for e in engine_episodes), [e for e in engine_episodes if not e.success]


def _slide_down_the_pads(env: gym.Env, seed: int) -> tuple[bool, float]:
    """One episode of the pick-and-lift script from ``seed``: (success, how far the card slid down the pads (m)
    from the slot exit, its lowest point 11 mm above the table, to the episode's end)."""
    observation, _ = env.reset(seed=seed)
    policy, exit_height = env.unwrapped.scripted_policy(), None
    while True:
        observation, _, terminated, truncated, info = env.step(policy(observation))
        if exit_height is None and observation[23] > 0.011:
            exit_height = observation[10]  # the card's centre relative to the pads' centres
        if terminated or truncated:
            return bool(terminated and info.get("failure") is None), exit_height - observation[10]


@pytest.mark.parametrize("dt", [0.005, 0.01])
def test_on_the_in_house_engine_the_pick_and_lift_script_lifts_the_card_at_5_and_10_ms(dt):
    """At 10 ms the pads closed on nothing: a 50 g pad on its 2000 N/m servo (h omega = 2) jumped between two
    poses across its target for ever, until both halves of the joint damping were implicit
    (``constraints.damper_compliance``); and while the contacts' resting reactions still balanced the dampers as
    explicit forces, the card slipped from the pads in every episode at 4 and 5 ms. While friction held only at
    the velocity level (at the step's end), the card slid 8 mm down the pads between the slot exit and success at
    5 ms and 30 mm at 10 ms, and which seeds succeeded at 10 ms was round-off; with the opening half's contact solve
    (``contact.open_contacts``) it slides 0-0.3 mm at 5 ms and 0-1.1 mm at 10 ms (seeds 0-9, measured; 0 at 1 and
    2 ms). (The control period held at 20 ms, as in the demo.)"""
    env = make("mechgym", physics_dt=dt, decimation=round(0.02 / dt))
    episodes = [_slide_down_the_pads(env, seed) for seed in range(10)]
    assert all(success for success, _ in episodes), episodes
    assert max(slide for _, slide in episodes) < 0.003, episodes


class ShakingCarriage(ScriptedPolicy):
    """The pick-and-lift script with 0.3 sin(2 pi k / 10) added to its lift action at control step k: the
    carriage oscillates at 5 Hz (+-6 cm/s) throughout, through the pinch and the lift, as an exploring
    policy's carriage does."""

    def __init__(self, env: gym.Env):
        self.script = env.unwrapped.scripted_policy()
        self.reset()

    def reset(self) -> None:
        self.script.reset()
        self.step = 0

    def __call__(self, observation: np.ndarray) -> np.ndarray:
        action = self.script(observation).copy()
        action[0] = np.clip(action[0] + 0.3 * np.sin(2 * np.pi * self.step / 10), -1.0, 1.0)
        self.step += 1
        return action


def _random_targets_after_the_pinch(seed: int, dt: float = 0.002, seconds: float = 3.0) -> None:
    """The pick-and-lift script from ``seed`` until both pads touch the card and it starts to lift; then the three
    servo targets jump to random values every 20 ms for ``seconds`` s (lift anywhere in its ctrlrange, fingers in
    [0.030, 0.035] m: a half-trained policy's pinch, release and jerks). Raises what the simulator raises, and
    asserts after every 20 ms that the three slides are within their ranges (to 1 mm): a resting reaction
    carried on with half of a wedging impulse pair once sent the card 22 cm in one drift and the pads a metre
    along their slides, without an error."""
    env = make("mechgym", physics_dt=dt)
    observation, _ = env.reset(seed=seed)
    script, sim = env.unwrapped.scripted_policy(), env.unwrapped.sim
    action = script(observation)
    while not (observation[21] > 0.5 and observation[22] > 0.5 and action[1] == 1.0 and action[0] > 0.0):
        observation, *_ = env.step(action)
        action = script(observation)
    rng = np.random.default_rng(seed)
    lift = sim.model.actuator_ctrlrange[0]
    ranges = sim.model.jnt_range[1:]  # lift, left finger, right finger (after the card's free joint)
    for _ in range(round(seconds / 0.02)):
        sim.ctrl = [rng.uniform(*lift), rng.uniform(0.030, 0.035), rng.uniform(0.030, 0.035)]
        sim.step(round(0.02 / dt))
        slides = sim.qpos[-3:]
        assert ((ranges[:, 0] - 1e-3 <= slides) & (slides <= ranges[:, 1] + 1e-3)).all(), (sim.time, slides)


@pytest.mark.slow
def test_on_the_in_house_engine_random_servo_targets_after_the_pinch_run():
    """Engine IV's case (the issue: 2 of 4 seeds failed): eight seeds of ``_random_targets_after_the_pinch``, 3 s
    each at dt = 2 ms, all run. Measured over seeds 0-79: none fails (10 did before a failing step was taken in
    parts and the dampers' residuals were measured against their round-off)."""
    for seed in range(8):
        _random_targets_after_the_pinch(seed)


def test_on_the_in_house_engine_random_servo_targets_after_the_pinch_run_at_5_ms():
    """Sixteen seeds of ``_random_targets_after_the_pinch`` at dt = 5 ms, all run. Nine failed in the constraint
    projection while SHAKE iterated from the drift (a target jump or the contact's warm start, h/2 times the
    card's 100 N reaction on a 50 g pad, sent a pad tens of millimetres off its slide within the drift; SHAKE's
    first iterate is now the linear solve at the step's start, ``constraints.predict_shake``), and 5 of seeds
    0-79 in the contact solve until a failing step was taken in parts (``physics.tolerances.MAX_SUBDIVISION``).
    Measured over seeds 0-79 at 1, 2, 5 and 10 ms: none fails (six did, in the contact solve, until the test below)."""
    for seed in range(16):
        _random_targets_after_the_pinch(seed, dt=0.005)


@pytest.mark.parametrize(("seed", "dt"), [(0, 0.001), (49, 0.001), (65, 0.001), (79, 0.001), (41, 0.01), (45, 0.01),
                                         (494, 0.005)])
def test_on_the_in_house_engine_random_servo_targets_run_where_the_contact_space_solve_stalled(seed, dt):
    """The six runs of seeds 0-79 at 1, 2, 5 and 10 ms that failed in the contact solve, in parts down to dt / 16:
    in each a set of the card's contacts on which every try of Newton's method stalled
    (``tests/physics/contact/test_contact_space_problems.py``). Now seed 79's set is solved exactly by the
    proximal-point iterations, and the last halvings of seeds 0, 49, 65 and 45 take Newton's best point within
    INEXACT_VELOCITY (``sim.inexact_solves``: 44 in the six runs; seed 41's run meets no such set any more). Seed
    494 at 5 ms, the one failure of seeds 320-639 at those four steps, stalled on ten contacts from the sweeps'
    impulses and from zero; the search from the sweeps' start solves its set."""
    _random_targets_after_the_pinch(seed, dt=dt)


def test_on_mujoco_the_script_lifts_the_card_with_a_shaking_carriage():
    env = make("mujoco")
    result = summary(list(run_episodes(env, ShakingCarriage(env), first_seed=1, episodes=3)))
    assert result["successes"] == 3, result


def test_on_the_in_house_engine_a_pinch_while_the_carriage_shakes_does_not_diverge():
    """The scene is feasible (MuJoCo lifts the card in all three episodes, test above); the engine's contact
    solve failed in each, 1.1-1.4 s in, at the pinch, until the contact-space solve had Newton's method
    (``contact.newton``): an exploring policy pinches while its carriage moves."""
    env = make("mechgym")
    episodes = list(run_episodes(env, ShakingCarriage(env), first_seed=1, episodes=3))
    assert not any(e.failure == "diverged" for e in episodes), episodes
