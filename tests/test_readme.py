"""The README opens with the two commands, and CI runs the second one verbatim."""

import re
import shlex
from pathlib import Path

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
    assert args.backend == ["mujoco", "mechgym"] and args.out == "sweep.csv"
