"""Steps: what a step of n episodes of one task returns, in arrays, and ``settle``, which makes it from the task's
evaluation of each episode's new state.

A task's evaluation of a step (in Python, ``MechEnv._observe`` and ``_evaluate``, or in a compiled kernel,
:mod:`mechgym.compiled`) gives each episode's observation, its reward terms and an outcome: success (1 or 0) and a
failure code (0: none, k: the task's ``task_failures[k - 1]``). ``settle`` turns those into what ``step`` returns,
for all the episodes of a call at once: an episode whose simulator failed, or whose observation is not finite,
diverged (``DIVERGED_CODE``: no reward, truncated); a task failure earns the task's penalty and ends the episode,
as success does where it ends the episode; an episode that reached its time limit is truncated; the reward is the
sum of the terms, the penalty last. The single env reads its row as Gymnasium's tuple (``Steps.transition``), the
vector env makes its batch of all the rows at once (``Steps.infos``), without a dict per episode.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from numba import njit

if TYPE_CHECKING:
    from .env import MechEnv

SUCCESS, FAILURE = 0, 1  # the columns of a task's outcome array (n, 2)
DIVERGED = "diverged"  # the failure of an episode whose simulator failed or whose observation became non-finite
DIVERGED_CODE = -1  # its code in Steps.failure (0: no failure, k >= 1: the task's task_failures[k - 1])

# (observation, reward, terminated, truncated, info) of a step
Transition = tuple[np.ndarray, float, bool, bool, dict[str, Any]]


class Steps(NamedTuple):
    """The steps of n episodes of one task, row i episode i's (see the module docstring). An empty row (zeros,
    False, no failure, no error: ``Steps.empty``) is a reset's: its info is the reset's."""

    observations: np.ndarray  # (n, observation size) float32: a diverged episode's last finite one
    rewards: np.ndarray       # (n,): the sum of the row's terms
    terminated: np.ndarray    # (n,) bool
    truncated: np.ndarray     # (n,) bool
    time: np.ndarray          # (n,) simulated time after the step (s)
    terms: np.ndarray         # (n, len(reward_terms) + 1): the reward terms, then the failure penalty
    success: np.ndarray       # (n,) bool
    failure: np.ndarray       # (n,) int64: 0, k for the task's task_failures[k - 1], or DIVERGED_CODE
    error: np.ndarray         # (n,) object: the simulator's failure message, or None

    @classmethod
    def empty(cls, n: int, env: MechEnv) -> Steps:
        return cls(np.zeros((n, *env.observation_space.shape), dtype=np.float32), np.zeros(n), np.zeros(n, dtype=bool),
                   np.zeros(n, dtype=bool), np.zeros(n), np.zeros((n, len(env.reward_terms) + 1)),
                   np.zeros(n, dtype=bool), np.zeros(n, dtype=np.int64), np.full(n, None, dtype=object))

    def rows(self, start: int, stop: int) -> Steps:
        """Rows ``start`` to ``stop`` (views: what is written into them is written into these)."""
        return Steps(*(field[start:stop] for field in self))

    def put(self, rows: np.ndarray, steps: Steps) -> None:
        """Write ``steps`` into the rows ``rows`` (indices)."""
        for mine, theirs in zip(self, steps, strict=True):
            mine[rows] = theirs

    def begin(self, row: int, observation: np.ndarray) -> None:
        """Make row ``row``'s observation and info a reset's (its reward and ends stay: an autoreset in the step)."""
        self.observations[row] = observation
        self.time[row] = self.terms[row] = 0.0
        self.success[row] = False
        self.failure[row] = 0
        self.error[row] = None

    def transition(self, row: int, env: MechEnv) -> Transition:
        """Row ``row`` as ``env.step`` returns it (``env``: one of the episodes, for the settings in the info)."""
        return (self.observations[row].copy(), float(self.rewards[row]), bool(self.terminated[row]),
                bool(self.truncated[row]), self.info(row, env))

    def info(self, row: int, env: MechEnv) -> dict[str, Any]:
        info = {"physics_dt": env.physics_dt, "decimation": env.decimation, "backend": env.backend,
                "time": float(self.time[row]), **dict(zip(env.info_terms, self.terms[row].tolist(), strict=True)),
                "is_success": bool(self.success[row]), "failure": env.failure_names[self.failure[row]]}
        if self.error[row] is not None:
            info["error"] = self.error[row]
        return info

    def infos(self, env: MechEnv, listed: np.ndarray) -> dict[str, Any]:
        """The vector info of the infos of the rows in the mask ``listed``: what Gymnasium's vector envs make of
        ``info(row)`` for each listed row in turn (``VectorEnv._add_info``): per key an array over all rows, zero
        (None for strings) where a row is not listed or lacks the key, and the key's mask ``_key``."""
        n = listed.size
        errors = listed & np.not_equal(self.error, None)
        columns = {**env.settings_info(n), "time": self.time, **dict(zip(env.info_terms, self.terms.T, strict=True)),
                   "is_success": self.success, "failure": env.failure_names[self.failure]}
        if errors.any():
            columns["error"] = self.error
        everyone = listed.all()
        batched: dict[str, Any] = {}
        for key, values in columns.items():
            mask = errors if key == "error" else listed
            if everyone and key != "error":
                array = values.copy()
            else:
                array = np.full(n, None, dtype=object) if values.dtype == object else np.zeros(n, dtype=values.dtype)
                array[mask] = values[mask]
            batched[key], batched[f"_{key}"] = array, mask.copy()
        return batched


def settle_steps(envs: Sequence[MechEnv], observations: np.ndarray, terms: np.ndarray, outcome: np.ndarray,
                 errors: Sequence[str | None], out: Steps) -> np.ndarray:
    """Fill ``out`` (one row per episode of ``envs``) from the task's evaluation of their steps: ``observations``
    (n, size) float64, reward ``terms`` (n, len(reward_terms)) and ``outcome`` (n, 2), read where ``errors`` (the
    simulators' failures) is None; the rows whose simulator failed or whose observation is not finite take the
    episode's last finite observation. Returns the mask of the episodes whose step went through."""
    first = envs[0]
    stepped = np.array([error is None for error in errors])
    at_limit = np.array([env.sim.step_count >= env._step_limit for env in envs])
    _settle(observations, terms, outcome, stepped, at_limit, first.failure_penalty, first.success_ends_episode,
            out.observations, out.rewards, out.terminated, out.truncated, out.terms, out.success, out.failure)
    for i, env in enumerate(envs):
        out.time[i] = env.sim.time
        if not stepped[i]:
            out.observations[i] = env._observation
            out.error[i] = errors[i] if errors[i] is not None else env._non_finite()
        else:
            out.error[i] = None
    return stepped


@njit(cache=True)
def _settle(observations, terms, outcome, stepped, at_limit, failure_penalty, success_ends, out_observations,
            out_rewards, out_terminated, out_truncated, out_terms, out_success, out_failure):
    """``settle_steps``' arithmetic, row by row; a stepped row whose observation is not finite is marked not stepped
    (``stepped`` is written) and its observation left to the caller."""
    count = terms.shape[1]
    for i in range(stepped.size):
        if stepped[i]:
            for value in observations[i]:
                if not np.isfinite(value):
                    stepped[i] = False
        if stepped[i]:  # (element by element: numba compiles an array assignment's shape error, 2 s)
            for k in range(observations.shape[1]):
                out_observations[i, k] = observations[i, k]
            code, success = outcome[i, FAILURE], outcome[i, SUCCESS] != 0
        else:
            code, success = DIVERGED_CODE, False
        for k in range(count):
            out_terms[i, k] = terms[i, k] if stepped[i] else 0.0
        out_terms[i, count] = failure_penalty if code > 0 else 0.0
        reward = 0.0  # (in the terms' order, as sum() adds them)
        for k in range(count + 1):
            reward += out_terms[i, k]
        out_rewards[i] = reward
        out_success[i] = success
        out_failure[i] = code
        out_terminated[i] = code > 0 or (success and success_ends)
        out_truncated[i] = not out_terminated[i] and (code == DIVERGED_CODE or at_limit[i])
