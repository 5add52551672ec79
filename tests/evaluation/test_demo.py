"""mechgym demo (the main job) on a reduced grid: every shipped policy evaluated on both backends."""

from __future__ import annotations

import pytest

from mechgym import demo
from mechgym.training.runs import RunFolder, shipped_policies

pytest.importorskip("stable_baselines3")


# Shipped policies not trained on the in-house engine, and why (the README's training table says the same).
TRAINED_ON_MUJOCO = {"Gripper-v0-mujoco": "the start of Gripper-v0's training on the engine, and a policy trained on "
                                          "one backend to evaluate on the other"}


def test_the_demo_covers_every_environment_and_each_shipped_policy_is_trained_on_the_backend_the_readme_names():
    from mechgym.registration import ENVIRONMENTS

    assert set(demo.GRIDS) == set(ENVIRONMENTS)
    shipped = [RunFolder.open(name) for name in shipped_policies()]
    assert {run.env_id for run in shipped if run.path.name not in TRAINED_ON_MUJOCO} == set(ENVIRONMENTS)
    for run in shipped:
        trained_on = "mujoco" if run.path.name in TRAINED_ON_MUJOCO else "mechgym"
        assert run.record["finished"] and run.record["env_kwargs"]["backend"] == trained_on
        assert run.env_id in demo.GRIDS
        period = run.control_period
        for dt in demo.GRIDS[run.env_id]:  # the demo holds the control period: every step must divide it
            assert abs(period / dt - round(period / dt)) < 1e-9


@pytest.mark.slow
def test_the_demo_writes_a_report_for_each_environment(tmp_path, monkeypatch, capsys):
    grids = {env_id: (steps[-1],) for env_id, steps in demo.GRIDS.items()}  # the largest: the fastest
    monkeypatch.setattr(demo, "GRIDS", grids)
    evaluations = demo.run_demo(tmp_path, episodes=1, workers=1, ray=None, with_training=False)
    assert len(evaluations) == len(grids)
    index = (tmp_path / "report.md").read_text()
    for env_id in grids:
        name = env_id.split("/")[-1]
        assert f"## {env_id}" in index and (tmp_path / name / "report.md").is_file()
    assert "dt margin" in capsys.readouterr().out


@pytest.mark.slow
def test_demo_train_trains_a_cube_drop_policy_and_evaluates_it_beside_the_shipped_one(tmp_path, monkeypatch):
    monkeypatch.setattr(demo, "GRIDS", {"mechgym/CubeDrop-v0": (0.002,)})
    monkeypatch.setattr(demo, "TRAIN_TIMESTEPS", 2048)
    monkeypatch.setattr(demo, "shipped_policies", lambda: [n for n in shipped_policies() if "CubeDrop" in n])
    (evaluation,) = demo.run_demo(tmp_path, episodes=1, workers=1, ray=None, with_training=True)
    trained = RunFolder.open(tmp_path / "trained" / "CubeDrop-v0-small")
    assert trained.record["finished"] and trained.record["timesteps_done"] >= 2048
    assert {cell.policy.name for cell in evaluation.cells} == {"CubeDrop-v0", "CubeDrop-v0-small",
                                                              "scripted:mechgym/CubeDrop-v0"}


# The README's claims for each shipped policy on fresh seeds 100-109 (not the demo's 0-9), by backend at the
# policy's training settings: at least this many successes and at most this many failures, each count one
# below the measured one (CubeDrop 10 and 10, SliderCrank 7 and 8, Gripper-v0 10 and 9 with 1 dropped,
# Gripper-v0-mujoco 9 on MuJoCo with 1 dropped) to leave room for another platform's rounding. The
# MuJoCo-trained gripper succeeds in 2 to 4 of 10 on the in-house engine (README), which is no claim to hold.
CLAIMS = {
    "CubeDrop-v0": {"mechgym": (9, 0), "mujoco": (9, 0)},
    "SliderCrank-v0": {"mechgym": (6, 0), "mujoco": (7, 0)},
    "Gripper-v0": {"mechgym": (9, 0), "mujoco": (8, 1)},
    "Gripper-v0-mujoco": {"mujoco": (8, 1)},
}


@pytest.mark.slow
@pytest.mark.parametrize("name", shipped_policies())
def test_each_shipped_policy_does_its_task_on_its_training_configuration(name):
    """Most episodes succeed and few or none fail (the misses are cubes that land but never come to rest
    within the time limit, cranks whose mean speed ends 5-7 % off, a card dropped)."""
    import gymnasium

    from mechgym.rollout import run_episode
    from mechgym.training.runs import TrainedPolicy

    run = RunFolder.open(name)
    policy = TrainedPolicy(run)
    for backend, (successes, failures) in CLAIMS[name].items():
        env = gymnasium.make(run.env_id, **{**run.env_kwargs, "backend": backend})
        episodes = [run_episode(env, policy, seed) for seed in range(100, 110)]
        outcomes = [e.outcome for e in episodes]
        assert sum(e.success for e in episodes) >= successes, (backend, outcomes)
        assert sum(e.failure is not None for e in episodes) <= failures, (backend, outcomes)
