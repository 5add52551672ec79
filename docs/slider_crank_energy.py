"""The passive clearance slider-crank (seed 002, frictionless walls, restitution e on every geom, crank motor off):
E(4 s) against the physics step for both backends and the event-driven reference of issue 14, and a plot of the
slider's y and the energy over the first 0.5 s.

    python docs/slider_crank_energy.py      # prints the README's table, writes docs/slider_crank_energy.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import mechgym  # noqa: E402
from mechgym.scene import load_spec  # noqa: E402

RESTITUTIONS = (0.1, 0.3, 0.5)
STEPS = (4e-5, 2e-5, 1e-5)  # s
# Issue 14's reference (exact Newton impacts, DOP853 at rtol 1e-12, persistent-contact mode), J
REFERENCE_TIMES = (0.1, 0.2, 0.5, 1.0, 2.0, 4.0)
REFERENCE = {0.1: (7.3079, 7.1368, 6.5730, 5.8529, 4.6843, 3.2597),
             0.3: (7.3112, 7.1437, 6.5913, 5.8829, 4.7316, 3.3157),
             0.5: (7.3350, 7.1830, 6.7239, 6.1005, 5.0505, 3.6467)}


def passive(restitution: float, backend: str, dt: float) -> mechgym.Simulator:
    spec = load_spec("slider_crank")
    for numeric in spec.numerics:
        if numeric.name.startswith("restitution:"):
            numeric.data = [restitution]
    return mechgym.load(spec, backend=backend, dt=dt)


def final_energy(restitution: float, backend: str, dt: float, duration: float = 4.0) -> float:
    sim = passive(restitution, backend, dt)
    sim.step(round(duration / dt))
    return sim.energy()


def trace(restitution: float, backend: str, dt: float, duration: float = 0.5, every: float = 1e-4):
    """(t, slider y in mm, E in J) sampled every ``every`` seconds."""
    sim = passive(restitution, backend, dt)
    stride = round(every / dt)
    rows = [(0.0, 1e3 * sim.body("slider").pos[1], sim.energy())]
    for _ in range(round(duration / every)):
        sim.step(stride)
        rows.append((sim.time, 1e3 * sim.body("slider").pos[1], sim.energy()))
    return np.array(rows)


def table() -> str:
    lines = ["| e | backend | " + " | ".join(f"{dt * 1e6:g} µs" for dt in STEPS) + " | reference |",
             "|---|---|" + "---|" * (len(STEPS) + 1)]
    for e in RESTITUTIONS:
        for backend in ("mechgym", "mujoco"):
            cells = [f"{final_energy(e, backend, dt):.4f}" for dt in STEPS]
            lines.append(f"| {e} | {backend} | " + " | ".join(cells) + f" | {REFERENCE[e][-1]:.4f} |")
    return "\n".join(lines)


def plot(out: Path, dt: float = 1e-5) -> None:
    fig, axes = plt.subplots(2, len(RESTITUTIONS), figsize=(13, 6), sharex=True)
    for column, e in enumerate(RESTITUTIONS):
        for backend, style in (("mechgym", "-"), ("mujoco", "--")):
            t, y, energy = trace(e, backend, dt).T
            axes[0, column].plot(t, y, style, lw=0.8, label=backend)
            axes[1, column].plot(t, energy, style, lw=0.8, label=backend)
        times = [t for t in REFERENCE_TIMES if t <= 0.5]
        axes[1, column].plot(times, REFERENCE[e][:len(times)], "ko", label="reference")
        axes[0, column].set_title(f"e = {e}, dt = {dt * 1e6:g} µs")
        axes[0, column].axhline(1.0, color="grey", lw=0.5)
        axes[0, column].axhline(-1.0, color="grey", lw=0.5)
        axes[1, column].set_xlabel("t (s)")
    axes[0, 0].set_ylabel("slider y (mm; walls at ±1)")
    axes[1, 0].set_ylabel("energy (J)")
    axes[1, 0].legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("slider_crank_energy.png"))
    args = parser.parse_args()
    print(table())
    plot(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
