"""mechgym demo (the main job) on a reduced grid: every shipped policy evaluated on both backends."""

from __future__ import annotations

import pytest

from mechgym import demo
from mechgym.training.runs import RunFolder, shipped_policies

pytest.importorskip("stable_baselines3")


def test_every_environment_ships_a_finished_policy_trained_on_the_in_house_engine():
    from mechgym.registration import ENVIRONMENTS

    shipped = {RunFolder.open(name).env_id: RunFolder.open(name) for name in shipped_policies()}
    assert set(shipped) == set(ENVIRONMENTS)
    for env_id, run in shipped.items():
        assert run.record["finished"] and run.record["env_kwargs"]["backend"] == "mechgym"
        assert env_id in demo.GRIDS
        period = run.control_period
        for dt in demo.GRIDS[env_id]:  # the demo holds the control period: every step must divide it
            assert abs(period / dt - round(period / dt)) < 1e-9


@pytest.mark.slow
def test_the_demo_writes_a_report_for_each_environment(tmp_path, monkeypatch, capsys):
    grids = {env_id: (RunFolder.open(name).env_kwargs["physics_dt"],) for name in shipped_policies()
             for env_id in [RunFolder.open(name).env_id]}
    monkeypatch.setattr(demo, "GRIDS", grids)
    evaluations = demo.run_demo(tmp_path, episodes=1, workers=1, ray=None, with_training=False)
    assert len(evaluations) == len(grids)
    index = (tmp_path / "report.md").read_text()
    for env_id in grids:
        name = env_id.split("/")[-1]
        assert f"## {env_id}" in index and (tmp_path / name / "report.md").is_file()
    assert "dt margin" in capsys.readouterr().out
