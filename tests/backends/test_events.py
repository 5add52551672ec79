"""The simulators' impact events: ``events_since(k)`` is ``events[k:]``, and a task that reads the new ones each
step sees every impact once."""

from __future__ import annotations

import gymnasium
import pytest

import mechgym

from .test_reset_state import BACKENDS


@pytest.mark.parametrize("backend", BACKENDS)
def test_events_since_an_index_are_the_events_from_that_index_on(backend):
    sim = mechgym.load("slider_crank", backend=backend, dt=1e-4)
    seen = []
    for _ in range(30):
        sim.step(100)
        seen += sim.events_since(len(seen))
    events = sim.events
    assert len(events) >= 3, "the slider never struck its walls"
    assert seen == events
    for start in (0, 1, len(events) - 1, len(events), len(events) + 5):
        assert sim.events_since(start) == events[start:]


@pytest.mark.parametrize("backend", BACKENDS)
def test_touching_names_the_geom_pairs_of_the_contacts(backend):
    """``touching()`` is the set of ``contacts()``' geom pairs at every control step of the gripper's scripted
    pick (the card in its slot, the pads closing on it and lifting it)."""
    env = gymnasium.make("mechgym/Gripper-v0", backend=backend, randomize=False).unwrapped
    policy = env.scripted_policy()
    observation, _ = env.reset(seed=0)
    seen = set()
    for _ in range(120):
        observation = env.step(policy(observation))[0]
        pairs = env.sim.touching()
        assert pairs == {frozenset((c.geom1, c.geom2)) for c in env.sim.contacts()}
        seen |= pairs
    assert {frozenset(("left_pad", "card")), frozenset(("right_pad", "card"))} <= seen
