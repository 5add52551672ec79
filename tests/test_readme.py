"""The README opens with the two commands, and CI runs the second one verbatim."""

import re
import shlex
from pathlib import Path

import numpy as np
import pytest

from mechgym import cli

ROOT = Path(__file__).resolve().parents[1]


def opening_commands() -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text())[:2]


def test_ci_runs_the_readmes_test_command():
    main_job, tests = opening_commands()
    assert "pytest" in tests and "pip install" in tests
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert tests in ci_lines


def test_the_main_job_is_a_valid_mechgym_command():
    main_job, _ = opening_commands()
    command = shlex.split(main_job.split("&&")[-1])
    assert command[0] == "mechgym"
    args = cli.build_parser().parse_args(command[1:])
    assert args.run is cli._demo


def python_examples() -> list[str]:
    return re.findall(r"```python\n(.+?)\n```", (ROOT / "README.md").read_text(), flags=re.S)


def test_the_readmes_python_examples_run_and_say_what_they_do():
    environment_example, simulator_example = python_examples()
    names: dict = {}
    exec(environment_example, names)
    assert names["info"]["is_success"] and names["info"]["failure"] is None
    assert names["info"]["time"] == pytest.approx(1.84)
    assert "(True, None, 1.84)" in environment_example
    exec(simulator_example, names)
    sim = names["sim"]
    assert sim.time == 0.0 and sim.body("cube").pos[2] == pytest.approx(1.0)
    assert [other.time for other in names["others"]] == [0.02] * 3
    sim.reset()  # the example's push, as the README states its outcome
    sim.apply_force("cube", [0.05, 0, 0], start=0.1, stop=0.3)
    sim.step(500)
    assert sim.time == 1.0
    np.testing.assert_allclose(sim.body("cube").pos, [0.0246, 0.0, 0.325], atol=5e-5)
    assert "2.46 cm off its centre" in simulator_example


def test_the_readmes_confinement_example_holds_its_ball():
    (example,) = re.findall(r"```xml\n(.+?)\n```", (ROOT / "README.md").read_text(), flags=re.S)
    import mechgym

    sim = mechgym.load(f"<mujoco>{example}</mujoco>", backend="mechgym", dt=0.002)
    sim.reset(qvel=[1.0, 2.0, -3.0, 0.0, 0.0, 0.0])
    for _ in range(1000):
        sim.step(1)
        pos = sim.body("ball").pos
        assert np.hypot(pos[0], pos[1]) <= 0.1 - 0.0205 + 1e-12 and abs(pos[2]) <= 0.2 - 0.0205 + 1e-12
    assert len(sim.engine.confinements.body) == 1
