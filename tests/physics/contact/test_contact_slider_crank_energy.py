"""The passive clearance slider-crank of seed 002 (the bundled ``slider_crank`` scene, frictionless walls,
restitution e on every geom, crank motor off): its energy against an independent event-driven reference (exact
Newton impacts, DOP853 at rtol 1e-12, persistent-contact mode; its energy balance closes to 1e-8 J and E(4 s)
reproduces to 1e-7 J; figures from issue 14, not from this engine). E(0) = 7.495549 J, first impact at
t = 0.0026925 s.

Both top (or both bottom) corners of the level slider meet their wall at once, and the slider's pin is at its
centre of mass, so the exact motion never turns the slider. Its rotation is light (J3 / a^2 = 1e-3 kg against
about 0.1 kg of the mechanism's translation): a slider that hit with one corner a hair ahead of the other would
rock from corner to corner and lose its bounce (a plastic landing), so the engine must treat the two corners as one
impact and keep the slider level to round-off."""

from __future__ import annotations

import numpy as np
import pytest

import mechgym
from mechgym.scene import load_spec

TIMES = (0.1, 0.2, 0.5, 1.0, 2.0, 4.0)  # s
REFERENCE = {  # J, at TIMES
    0.1: (7.3079, 7.1368, 6.5730, 5.8529, 4.6843, 3.2597),
    0.3: (7.3112, 7.1437, 6.5913, 5.8829, 4.7316, 3.3157),
    0.5: (7.3350, 7.1830, 6.7239, 6.1005, 5.0505, 3.6467),
}
E0, FIRST_IMPACT = 7.495549, 0.0026925  # J, s


def passive(restitution: float, dt: float) -> mechgym.Simulator:
    spec = load_spec("slider_crank")
    for numeric in spec.numerics:
        if numeric.name.startswith("restitution:"):
            numeric.data = [restitution]
    return mechgym.load(spec, backend="mechgym", dt=dt)


def energies(restitution: float, dt: float, until: float) -> tuple[list[float], float, mechgym.Simulator]:
    """E at each of TIMES up to ``until`` (J), the slider's largest |angle| seen at those instants (rad)."""
    sim = passive(restitution, dt)
    assert sim.energy() == pytest.approx(E0, abs=1e-6)
    out, tilt, done = [], 0.0, 0
    for t in TIMES:
        if t > until:
            break
        steps = round(t / dt)
        sim.step(steps - done)
        done = steps
        out.append(sim.energy())
        tilt = max(tilt, abs(sim.qpos.sum()))  # absolute slider angle = sum of the relative hinges
    return out, tilt, sim


@pytest.mark.slow
@pytest.mark.parametrize("restitution", [0.1, 0.3, 0.5])
def test_energy_within_1_percent_of_the_reference_over_4_s_at_10_us(restitution):
    measured, tilt, sim = energies(restitution, 1e-5, 4.0)
    np.testing.assert_allclose(measured, REFERENCE[restitution], rtol=0.01)
    assert sim.events[0].time == pytest.approx(FIRST_IMPACT, abs=1e-5)  # within one step
    assert tilt < 1e-9  # the slider stays level (7e-13 rad measured)


@pytest.mark.parametrize("restitution", [0.1, 0.3, 0.5])
def test_the_energy_error_at_half_a_second_falls_with_the_step_at_first_order(restitution):
    errors = [abs(energies(restitution, dt, 0.5)[0][-1] - REFERENCE[restitution][2]) for dt in (4e-5, 2e-5, 1e-5)]
    # measured: e = 0.1: 0.0115, 0.0053, 0.0025 J; e = 0.3: 0.0159, 0.0071, 0.0044 J; e = 0.5: 0.0210, 0.0083,
    # 0.0048 J (5e-5 J is the reference's rounding). With free flight's gap acceleration for the impacts of a
    # slider that the crank presses into its wall, e = 0.5 gave 0.0108, 0.0031, 0.0031, 0.0020 J at 40-5 us: its
    # state after such an impact was off by a first-order term that changed with the impact's place in its step,
    # and a grazing contact at 0.0162 s (a 0.012 m/s impact in the reference) appeared only from dt = 1.25 us
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 0.01 * REFERENCE[restitution][2]
    assert 1.5 < errors[0] / errors[1] < 3.0 and 1.5 < errors[1] / errors[2] < 3.0
