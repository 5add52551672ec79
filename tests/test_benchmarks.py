"""The speed scripts the README quotes still run: each, with a few steps, prints its table (nothing is timed or
compared; a script that no longer runs against the package it measures fails here, not in a user's hands)."""

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.parametrize(("script", "arguments", "expected"), [
    ("bench_engine.py", ["--steps", "20"], ["double pendulum", "gripper lifting its card"]),
    ("bench_dispatch.py", ["--calls", "20"], ["free body (top)", "3-box stack", "double pendulum"]),
])
def test_a_speed_script_runs_and_prints_its_rows(script, arguments, expected):
    run = subprocess.run([sys.executable, str(BENCHMARKS / script), *arguments], capture_output=True, text=True,
                         timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    for row in expected:
        assert row in run.stdout
