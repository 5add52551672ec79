"""``mechgym sweep cube-drop`` on the mechgym backend: the rigid contact engine keeps the cube on the slab at
every one of seed 003's time steps, at rest where the closed form puts it, and the table prints beside MuJoCo's."""

import pytest

from mechgym import cli
from mechgym.robustness import cube_drop

# Closed form: the slab's top at 0.30 m plus the cube's half size 0.025 m.
REST = 0.325


@pytest.fixture(scope="module")
def results():
    return cube_drop.sweep(["mechgym"], [ms / 1000 for ms in cube_drop.DT_MS])


@pytest.mark.parametrize("contact", list(cube_drop.CONTACT_SETTINGS))
def test_the_cube_stays_on_the_slab_at_every_time_step_and_rests_at_the_closed_form_height(results, contact):
    runs = [r for r in results if r.contact == contact]
    assert [round(1000 * r.dt, 6) for r in runs] == list(cube_drop.DT_MS)
    for run in runs:
        assert run.stayed and run.contact_seen, run
        # exact to round-off (measured: 7e-15 m at rest, never more than 9e-16 m below it)
        assert run.final == pytest.approx(REST, abs=1e-12), run
        assert run.lowest >= REST - 1e-12, run


def test_the_cli_prints_both_backends_side_by_side(capsys):
    assert cli.main(["sweep", "cube-drop", "--backend", "mujoco", "mechgym", "--dt-ms", "10", "25"]) == 0
    printed = capsys.readouterr().out
    header = next(line for line in printed.splitlines() if "mujoco, default" in line)
    assert header.index("mujoco, default") < header.index("mujoco, solref 0.005 1") < header.index(
        "mechgym, default") < header.index("mechgym, solref 0.005 1")
    rows = {line.split()[0]: line for line in printed.splitlines() if line.split() and line.split()[0] in ("10", "25")}
    # MuJoCo loses the cube at both; the engine keeps it on the slab, at rest at 32.50 cm
    for line in rows.values():
        cells = line.split(" | ")
        assert cells[0].endswith("fell") and cells[1].endswith("fell")
        assert cells[2].split()[-2:] == ["32.50", "stayed"] and cells[3].split()[-2:] == ["32.50", "stayed"]
    assert "mechgym, default: stayed at 2 of 2 time steps" in printed
    assert "mechgym, solref 0.005 1: stayed at 2 of 2 time steps" in printed
