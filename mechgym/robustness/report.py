"""Tables, CSV files and plots for cube-drop sweep results."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from .cube_drop import DropResult

CSV_FIELDS = ("backend", "contact", "dt_s", "dt_ms", "step_cm", "first_overlap_cm", "contact_seen",
              "lowest_cm", "final_cm", "result")


def _cm(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.2f}"


def _outcome(result: DropResult) -> str:
    return "stayed" if result.stayed else "fell"


def _groups(results: Sequence[DropResult]) -> list[tuple[str, str]]:
    return list(dict.fromkeys((r.backend, r.contact) for r in results))


def format_table(results: Sequence[DropResult]) -> str:
    """Seed 003's table, one column group per (backend, contact setting), one row per dt.

    Heights in cm; the lowest centre is shown only where the cube stayed (as in seed 003).
    """
    groups = _groups(results)
    by_key = {r.key: r for r in results}
    dts = list(dict.fromkeys(r.dt for r in results))
    cell = "{:>8} {:>5} {:>7} {:>6}"
    group_width = len(cell.format("", "", "", ""))
    lines = [
        "cube drop onto a 1 cm slab (top 30 cm, mid-plane 29.5 cm); heights of the cube's centre in cm",
        " " * 15 + " | ".join(f"{backend}, {contact}".center(group_width) for backend, contact in groups),
        f"{'dt (ms)':>7} {'step':>6} " + " | ".join(
            cell.format("1st over", "seen", "lowest", "result") for _ in groups),
    ]
    for dt in dts:
        first = by_key[groups[0] + (dt,)]
        row = [f"{1000 * dt:>7g} {_cm(first.step_length):>6}"]
        cells = []
        for group in groups:
            r = by_key.get(group + (dt,))
            cells.append(" " * group_width if r is None else cell.format(
                _cm(r.first_overlap), "yes" if r.contact_seen else "no",
                _cm(r.lowest) if r.stayed else "—", _outcome(r)))
        lines.append(row[0] + " " + " | ".join(cells))
    for backend, contact in groups:
        stayed = sum(r.stayed for r in results if (r.backend, r.contact) == (backend, contact))
        total = sum(1 for r in results if (r.backend, r.contact) == (backend, contact))
        lines.append(f"{backend}, {contact}: stayed at {stayed} of {total} time steps")
    return "\n".join(lines)


def result_row(result: DropResult) -> dict[str, str]:
    return {
        "backend": result.backend, "contact": result.contact, "dt_s": repr(result.dt),
        "dt_ms": f"{1000 * result.dt:g}", "step_cm": _cm(result.step_length),
        "first_overlap_cm": "" if result.first_overlap is None else repr(100 * result.first_overlap),
        "contact_seen": str(result.contact_seen).lower(), "lowest_cm": repr(100 * result.lowest),
        "final_cm": repr(100 * result.final), "result": _outcome(result),
    }


def _from_row(row: dict[str, str]) -> DropResult:
    step_cm = float(row["step_cm"])
    first = row["first_overlap_cm"]
    return DropResult(row["backend"], row["contact"], float(row["dt_s"]), step_cm / 100,
                      None if first == "" else float(first) / 100, row["contact_seen"] == "true",
                      float(row["lowest_cm"]) / 100, float(row["final_cm"]) / 100, row["result"] == "stayed")


class CsvLog:
    """A CSV file that grows one finished run at a time (flushed), and can be read back to resume."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def read(self) -> list[DropResult]:
        if not self.path.exists() or self.path.stat().st_size == 0:
            return []
        with self.path.open(newline="") as handle:
            reader = csv.DictReader(handle)
            if tuple(reader.fieldnames or ()) != CSV_FIELDS:
                raise ValueError(f"{self.path} is not a cube-drop sweep CSV (columns {reader.fieldnames})")
            return [_from_row(row) for row in reader]

    def append(self, result: DropResult) -> None:
        new_file = not self.path.exists() or self.path.stat().st_size == 0
        with self.path.open("a", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=CSV_FIELDS)
            if new_file:
                writer.writeheader()
            writer.writerow(result_row(result))


def plot(results: Sequence[DropResult], path: str | Path) -> None:
    """Centre at the first overlapping step and lowest centre vs dt; filled markers stayed, crosses fell."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    figure, axes = plt.subplots(figsize=(9, 5.5))
    for index, (backend, contact) in enumerate(_groups(results)):
        runs = [r for r in results if (r.backend, r.contact) == (backend, contact)]
        colour = f"C{index}"
        offset = 1 + 0.04 * (index - 0.5)  # spread the groups a little along the log dt axis
        for r in runs:
            if r.first_overlap is not None:
                axes.plot(1000 * r.dt * offset, 100 * r.first_overlap, "o" if r.stayed else "x", color=colour,
                          markersize=7, markerfacecolor=colour if r.stayed else "none")
            else:
                axes.plot(1000 * r.dt * offset, 26.5, "v", color=colour, markerfacecolor="none")
        stayed = [r for r in runs if r.stayed]
        axes.plot([1000 * r.dt * offset for r in stayed], [100 * r.lowest for r in stayed], "_", color=colour,
                  markersize=12, label=f"{backend}, {contact}: {len(stayed)}/{len(runs)} stayed")
    axes.axhline(30.0, color="0.3", lw=0.8)
    axes.axhline(29.5, color="0.3", lw=0.8, ls="--")
    axes.axhline(29.0, color="0.3", lw=0.8)
    axes.text(0.45, 29.55, "slab mid-plane", fontsize=8, color="0.3")
    axes.set_xscale("log")
    axes.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}"))
    axes.set_ylim(26, 33.5)
    axes.set_xlabel("physics time step dt (ms)")
    axes.set_ylabel("cube centre (cm)")
    axes.set_title("Cube drop onto a 1 cm slab: o stayed, x fell at the first overlapping step; "
                   "- lowest centre; v no overlap", fontsize=9)
    axes.legend(fontsize=8, loc="lower left")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
