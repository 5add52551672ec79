"""The cells of an evaluation: every policy x evaluation backend x physics step, with a control split.

``hold="control"`` keeps the policy's trained control period (decimation = period / physics_dt, which must
be an integer); ``hold="decimation"`` keeps its trained decimation (the control period then scales with
physics_dt). Each policy's training configuration is always a cell, the reference of its dt margin.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

HOLDS = ("control", "decimation")
# Policies that need no training, by kind: the mechgym.rollout policy each one runs.
BASELINES = {"passive": "zero", "scripted": "scripted"}  # zero actions; the task's hand-written controller


@dataclass(frozen=True)
class Policy:
    """What a cell evaluates: a run folder's policy, or a baseline on an environment (zero actions,
    ``passive``, or the task's hand-written controller, ``scripted``).

    ``backend``, ``physics_dt`` and ``decimation`` are the training configuration (for a baseline: the
    env's defaults, and ``backend`` None: each evaluation backend is its own reference).
    """

    name: str
    kind: str  # "run" or a key of BASELINES
    path: str | None
    fingerprint: str
    env_id: str
    env_kwargs: tuple[tuple[str, Any], ...]  # the training kwargs, sorted by name
    backend: str | None
    physics_dt: float
    decimation: int

    @property
    def control_period(self) -> float:
        return self.physics_dt * self.decimation


@dataclass(frozen=True)
class Cell:
    """One cell: ``episodes`` episodes with seeds ``seed``, ``seed + 1``, ... of ``policy`` on ``backend``."""

    policy: Policy
    backend: str
    physics_dt: float
    decimation: int
    episodes: int
    seed: int

    @property
    def is_reference(self) -> bool:
        p = self.policy
        return self.backend == (p.backend or self.backend) and _same(self.physics_dt, p.physics_dt) \
            and self.decimation == p.decimation

    def env_kwargs(self) -> dict[str, Any]:
        return {**dict(self.policy.env_kwargs), "backend": self.backend, "physics_dt": self.physics_dt,
                "decimation": self.decimation}

    def key(self) -> str:
        """A file-name-safe identity: readable, plus a hash of everything that determines the result."""
        digest = hashlib.sha256(json.dumps(asdict(self), sort_keys=True, default=str).encode()).hexdigest()[:10]
        name = self.policy.name.replace("/", "-").replace(":", "-")
        return f"{name}_{self.backend}_dt{self.physics_dt * 1000:g}ms_x{self.decimation}_{digest}"


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0)


def held_decimation(period: float, physics_dt: float, policy: str) -> int:
    """period / physics_dt when it is an integer (to 1e-9); otherwise ValueError naming the nearest steps
    that divide the period."""
    ratio = period / physics_dt
    n = round(ratio)
    if n >= 1 and abs(ratio - n) <= 1e-9 * n:
        return n
    options = sorted({max(1, math.floor(ratio)), math.ceil(ratio)})
    nearest = " and ".join(f"{period / k:.6g} s (decimation {k})" for k in options)
    raise ValueError(f"--hold control: physics_dt {physics_dt:g} s does not divide {policy}'s control period "
                     f"{period:g} s; the nearest steps that do are {nearest}")


def plan(policies: Sequence[Policy], backends: Sequence[str], dts: Sequence[float], hold: str, episodes: int,
         seed: int) -> list[Cell]:
    """Every policy x backend x dt cell (and each policy's training configuration), in that order."""
    if hold not in HOLDS:
        raise ValueError(f"--hold must be one of {list(HOLDS)}, got {hold!r}")
    if episodes < 1:
        raise ValueError(f"--episodes must be at least 1, got {episodes}")
    for dt in dts:
        if not (math.isfinite(dt) and dt > 0):
            raise ValueError(f"physics steps must be positive and finite, got {dt!r}")
    cells: list[Cell] = []
    steps = sorted(set(dts))
    for policy in policies:
        for backend in backends:
            for dt in steps:
                decimation = held_decimation(policy.control_period, dt, policy.name) if hold == "control" \
                    else policy.decimation
                cells.append(Cell(policy, backend, dt, decimation, episodes, seed))
        reference_backends = [policy.backend] if policy.backend is not None else backends
        for backend in reference_backends:
            reference = Cell(policy, backend, policy.physics_dt, policy.decimation, episodes, seed)
            if reference not in cells:
                cells.append(reference)
    return cells
