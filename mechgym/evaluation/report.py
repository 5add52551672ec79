"""What an evaluation writes: the tidy table (CSV, JSON, stdout), the dt margins, plots and ``report.md``."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..files import write_atomic
from .grid import Cell
from .stats import Margin, dt_margin

CSV_NAME, JSON_NAME, REPORT_NAME = "cells.csv", "cells.json", "report.md"
SUCCESS_PLOT, RETURN_PLOT, MATRIX_PLOT = "success.png", "return.png", "matrix.png"
GIF_FOLDER = "failures"


def rows(cells: Sequence[Cell], results: dict[Cell, dict[str, Any]]) -> list[dict[str, Any]]:
    """One flat row per cell, sorted by policy, evaluation backend and physics step."""
    kinds = sorted({kind for cell in cells for kind in results[cell]["failures"]})
    table = []
    for cell in sorted(cells, key=lambda c: (c.policy.name, c.backend, c.physics_dt)):
        result, policy = results[cell], cell.policy
        table.append({
            "policy": policy.name, "env_id": policy.env_id, "train_backend": policy.backend or "",
            "train_physics_dt": policy.physics_dt, "train_decimation": policy.decimation,
            "backend": cell.backend, "physics_dt": cell.physics_dt, "decimation": cell.decimation,
            "control_period": cell.physics_dt * cell.decimation, "reference": cell.is_reference,
            "episodes": result["episodes"], "seed": cell.seed, "successes": result["successes"],
            "success_rate": result["success_rate"], "success_low": result["success_low"],
            "success_high": result["success_high"], "return_mean": result["return_mean"],
            "return_std": result["return_std"],
            **{f"failures_{kind}": result["failures"].get(kind, 0) for kind in kinds},
            "mean_length_s": result["mean_length_s"], "sim_per_wall": result["sim_per_wall"],
            "gif": f"{GIF_FOLDER}/{result['gif']}" if result["gif"] else "",
            "outside_outcome": result["outside_outcome"] or "",
        })
    return table


@dataclass(frozen=True)
class Headline:
    """A policy on one evaluation backend: its dt margin against the training configuration's interval."""

    policy: str
    backend: str
    reference: str  # "backend, physics_dt" of the reference cell
    interval: tuple[float, float]
    margin: Margin

    def sentence(self) -> str:
        m = self.margin
        prefix = f"{self.policy} on {self.backend}"
        if m.low is None:
            return (f"{prefix}: no dt margin; already below the reference interval "
                    f"[{self.interval[0]:.2f}, {self.interval[1]:.2f}] at {_ms(m.outside_dt)} ({m.outside})")
        span = f"only {_ms(m.low)}" if m.low == m.high else f"{_ms(m.low)} to {_ms(m.high)}"
        if m.outside_dt is None:
            return f"{prefix}: dt margin {span}, the whole grid"
        ends = [end for end, open_end in (("smallest", m.whole_grid_low), ("largest", m.whole_grid_high)) if open_end]
        grid = f" (to the grid's {ends[0]} step)" if ends else ""
        return f"{prefix}: dt margin {span}{grid}; first outside: {m.outside} at {_ms(m.outside_dt)}"


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:g} ms"


def headlines(table: list[dict[str, Any]]) -> list[Headline]:
    """The dt margin of each policy x evaluation backend, over that backend's cells sorted by physics step."""
    found = []
    for policy in dict.fromkeys(row["policy"] for row in table):
        mine = [row for row in table if row["policy"] == policy]
        for backend in dict.fromkeys(row["backend"] for row in mine):
            # the training configuration's cell; a baseline has none, and each backend is its own reference
            reference_backend = mine[0]["train_backend"] or backend
            ref = next(row for row in mine if row["reference"] and row["backend"] == reference_backend)
            line = sorted((row for row in mine if row["backend"] == backend), key=lambda r: r["physics_dt"])
            interval = (ref["success_low"], ref["success_high"])
            margin = dt_margin([r["physics_dt"] for r in line], [r["success_rate"] for r in line],
                               [r["outside_outcome"] or None for r in line], ref["train_physics_dt"], interval)
            found.append(Headline(policy, backend, f"{ref['backend']}, {_ms(ref['physics_dt'])}", interval, margin))
    return found


def format_table(table: list[dict[str, Any]], lines: list[Headline]) -> str:
    header = (f"{'policy':<32} {'backend':<8} {'dt (ms)':>8} {'x':>4} {'success':>8} {'95% CI':>12} "
              f"{'return':>16} {'len (s)':>8} {'sim/wall':>9}  failures")
    out = [header, "-" * len(header)]
    for row in table:
        failures = ", ".join(f"{k[9:]} {v}" for k, v in row.items() if k.startswith("failures_") and v) or "-"
        mark = "*" if row["reference"] else " "
        out.append(f"{row['policy']:<32} {row['backend']:<8} {row['physics_dt'] * 1000:>7g}{mark} "
                   f"{row['decimation']:>4} {row['successes']:>3}/{row['episodes']:<4} "
                   f"[{row['success_low']:.2f}, {row['success_high']:.2f}] "
                   f"{row['return_mean']:>8.2f} ± {row['return_std']:<5.2f} {row['mean_length_s']:>8.3f} "
                   f"{row['sim_per_wall']:>9.3g}  {failures}")
    out.append("* the training configuration (the reference of the dt margin); x: decimation")
    out.extend(line.sentence() for line in lines)
    return "\n".join(out)


def _csv_text(table: list[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    fields = list(dict.fromkeys(key for row in table for key in row))
    writer = csv.DictWriter(buffer, fieldnames=fields, restval=0, lineterminator="\n")
    writer.writeheader()
    writer.writerows(table)
    return buffer.getvalue()


def _groups(table):
    return list(dict.fromkeys((row["policy"], row["backend"]) for row in table))


def _plot_vs_dt(table: list[dict[str, Any]], path: Path, value: str, spread, ylabel: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    figure, axes = plt.subplots(figsize=(8, 4.8))
    groups = _groups(table)
    for index, (policy, backend) in enumerate(groups):
        line = sorted((r for r in table if (r["policy"], r["backend"]) == (policy, backend)),
                      key=lambda r: r["physics_dt"])
        offset = 1 + 0.03 * (index - (len(groups) - 1) / 2)  # spread the lines a little along the log axis
        x = [1000 * r["physics_dt"] * offset for r in line]
        y = [r[value] for r in line]
        low, high = zip(*(spread(r) for r in line), strict=True)
        colour = f"C{index % 10}"
        axes.errorbar(x, y, yerr=[low, high], color=colour, marker="o", capsize=3, label=f"{policy} on {backend}")
        failed = [(xi, yi) for xi, yi, r in zip(x, y, line, strict=True)
                  if any(v for k, v in r.items() if k.startswith("failures_"))]
        if failed:
            axes.plot(*zip(*failed, strict=True), "x", color="k", markersize=9)
    axes.set_xscale("log")
    axes.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    axes.set_xlabel("physics time step (ms)")
    axes.set_ylabel(ylabel)
    axes.set_title(title, fontsize=10)
    axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _plot_matrix(table: list[dict[str, Any]], path: Path) -> bool:
    """Mean success over the grid for each training backend x evaluation backend; False if there is one
    training backend only."""
    trained = sorted({r["train_backend"] for r in table if r["train_backend"]})
    evaluated = sorted({r["backend"] for r in table})
    if len(trained) < 2:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    values = np.full((len(trained), len(evaluated)), np.nan)
    for i, t in enumerate(trained):
        for j, e in enumerate(evaluated):
            rates = [r["success_rate"] for r in table if r["train_backend"] == t and r["backend"] == e]
            if rates:
                values[i, j] = float(np.mean(rates))
    figure, axes = plt.subplots(figsize=(4.5, 3.6))
    image = axes.imshow(values, vmin=0, vmax=1, cmap="viridis")
    for (i, j), v in np.ndenumerate(values):
        axes.text(j, i, "-" if np.isnan(v) else f"{v:.2f}", ha="center", va="center",
                  color="w" if v < 0.6 else "k")
    axes.set_xticks(range(len(evaluated)), evaluated)
    axes.set_yticks(range(len(trained)), trained)
    axes.set_xlabel("evaluation backend")
    axes.set_ylabel("training backend")
    axes.set_title("mean success over the physics steps", fontsize=9)
    figure.colorbar(image)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True


def write(out: Path, cells: Sequence[Cell], results: dict[Cell, dict[str, Any]], settings: dict[str, Any]) -> str:
    """Write the CSV, JSON, plots and report.md into ``out``; the printed table."""
    table = rows(cells, results)
    lines = headlines(table)
    text = format_table(table, lines)
    write_atomic(out / CSV_NAME, _csv_text(table))
    episodes = {cell.key(): results[cell]["episode_records"] for cell in cells}
    write_atomic(out / JSON_NAME, json.dumps({"settings": settings, "cells": table, "episodes": episodes,
                                              "headlines": [{**asdict(h), "text": h.sentence()} for h in lines]},
                                             indent=1) + "\n")
    _plot_vs_dt(table, out / SUCCESS_PLOT, "success_rate",
                lambda r: (r["success_rate"] - r["success_low"], r["success_high"] - r["success_rate"]),
                "success rate (95 % Wilson interval)", "success vs physics step; x: cells with failures")
    _plot_vs_dt(table, out / RETURN_PLOT, "return_mean", lambda r: (r["return_std"], r["return_std"]),
                "episode return (mean ± sd)", "return vs physics step; x: cells with failures")
    matrix = _plot_matrix(table, out / MATRIX_PLOT)
    write_atomic(out / REPORT_NAME, _markdown(table, lines, text, matrix, settings))
    return text


def _markdown(table, lines: list[Headline], text: str, matrix: bool, settings: dict[str, Any]) -> str:
    parts = ["# mechgym evaluation", "", "```", " ".join(settings.get("command", [])) or "mechgym evaluate", "```",
             "", "## dt margins", ""]
    parts += [f"- {line.sentence()} (reference {line.reference}, interval "
              f"[{line.interval[0]:.2f}, {line.interval[1]:.2f}])" for line in lines]
    parts += ["", f"![success]({SUCCESS_PLOT})", "", f"![return]({RETURN_PLOT})", ""]
    if matrix:
        parts += [f"![train x eval backend]({MATRIX_PLOT})", ""]
    parts += ["## Cells", "", "```", text, "```", ""]
    gifs = [row for row in table if row["gif"]]
    if gifs:
        parts += ["## First failing episode of each cell with failures", ""]
        for row in gifs:
            parts += [f"**{row['policy']} on {row['backend']}, {row['physics_dt'] * 1000:g} ms**: "
                      f"![{row['outside_outcome']}]({row['gif']})", ""]
    return "\n".join(parts)
