"""CompiledTask: a MechEnv whose observation, reward terms, success and failure are one compiled kernel over
arrays, which the single env calls for its episode and the vector env for a group of episodes at once.

A task written in Python (``_observe``, ``_evaluate``) costs 30-130 µs a control step in NumPy calls on small
arrays, as much as the physics of a control step on the cube drop and a third of it on the gripper; a vector env
pays it for every episode, holding the GIL. A compiled task declares what it reads of the simulator
(``observed_bodies``, ``observed_pairs``, ``impact_geoms``, and the coordinates ``read_qpos``, ``read_qvel``,
``read_ctrl``), which :class:`Readings` gathers per episode, and a numba kernel::

    kernel(step, rows, time, qpos, qvel, ctrl, frames, touching, impacts, actions, parameters, memory,
           observations, terms, outcome)

For each episode i in ``rows`` it writes ``observations[i]``; with ``step`` False (a reset) nothing else; with
``step`` True, if the observation is finite, the task's memory ``memory[i]`` (timers, flags, samples: the episode's
state that is not the simulator's), the reward terms ``terms[i]`` (in ``reward_terms`` order) and ``outcome[i]``
(``SUCCESS``: 1 or 0, ``FAILURE``: 0, or k for ``task_failures[k - 1]``). ``outcome[i, FINITE]`` says whether the
observation is finite (it always writes that). ``parameters`` are the task's numbers (lengths, thresholds, the
control period), the same for every episode of one call. The readings' arrays are those of :class:`Readings`;
``actions`` (n, action size) the clipped actions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, NamedTuple

import numpy as np

from .env import MechEnv, StepOutcome, Transition

FINITE, SUCCESS, FAILURE = 0, 1, 2  # the columns of a kernel's ``outcome``
FRAME_POS, FRAME_QUAT, FRAME_LINVEL, FRAME_ANGVEL, FRAME_SIZE = 0, 3, 7, 10, 13  # a body's row of ``frames``
IMPACT_SPEEDS, IMPACT_SQUARES = 0, 1  # the columns of ``impacts``


class Readings(NamedTuple):
    """What a compiled task reads of n episodes' simulators after a step: row i is episode i's."""

    time: np.ndarray      # (n,) s
    qpos: np.ndarray      # (n, len(read_qpos)): the entries of qpos that the task reads, in its order
    qvel: np.ndarray      # (n, len(read_qvel)): likewise of qvel
    ctrl: np.ndarray      # (n, len(read_ctrl)): likewise of ctrl
    frames: np.ndarray    # (n, B, FRAME_SIZE): pos (m), quat, linvel (m/s), angvel (rad/s) of each observed body
    touching: np.ndarray  # (n, P): 1.0 where the observed pair of geoms touches, else 0.0
    impacts: np.ndarray   # (n, G, 2): the sums of the speeds (m/s) and of their squares of the impacts involving
    #                       each impact geom in the step

    @classmethod
    def empty(cls, n: int, task: CompiledTask) -> Readings:
        return cls(np.zeros(n), *(np.zeros((n, len(read))) for read in (task.read_qpos, task.read_qvel,
                                                                         task.read_ctrl)),
                   np.zeros((n, len(task.observed_bodies), FRAME_SIZE)), np.zeros((n, len(task.observed_pairs))),
                   np.zeros((n, len(task.impact_geoms), 2)))


class CompiledTask(MechEnv):
    """A task evaluated by its ``kernel`` (see the module docstring). A subclass sets the class attributes below,
    builds ``self._parameters`` (float64) in ``__init__`` and ``self._memory`` (float64) in ``_begin_episode``."""

    kernel: ClassVar  # a numba function with the signature of the module docstring
    observed_bodies: ClassVar[tuple[str, ...]] = ()
    observed_pairs: ClassVar[tuple[tuple[str, str], ...]] = ()  # geom pairs whose touching the kernel reads
    impact_geoms: ClassVar[tuple[str, ...]] = ()  # geoms whose impacts the kernel reads
    # the indices of qpos, qvel and ctrl that the kernel reads (a subclass sets its own in __init__)
    read_qpos = read_qvel = read_ctrl = np.zeros(0, dtype=np.int64)

    _parameters: np.ndarray
    _memory: np.ndarray

    @classmethod
    def conclude_many(cls, envs: Sequence[CompiledTask], actions: Sequence[np.ndarray],
                      errors: Sequence[str | None]) -> list[Transition]:
        """``conclude`` of each of ``envs`` with one call of the kernel for those whose physics went through."""
        stepped = [i for i, error in enumerate(errors) if error is None]
        observations, terms, outcome, memory = cls._run_kernel(envs, stepped, np.array(actions), step=True)
        transitions = []
        for i, (env, error) in enumerate(zip(envs, errors, strict=True)):
            if error is None and not outcome[i, FINITE]:
                error = env._non_finite()
            if error is None:
                env._observation, env._memory = observations[i], memory[i]
                failure = int(outcome[i, FAILURE])
                result = StepOutcome(dict(zip(cls.reward_terms, terms[i].tolist(), strict=True)),
                                     bool(outcome[i, SUCCESS]), cls.task_failures[failure - 1] if failure else None)
            else:
                result = env._diverged()
            transitions.append(env._transition(result, error))
        return transitions

    def _observe(self) -> np.ndarray:
        observations, _, outcome, _ = self._run_kernel([self], [0], np.zeros((1, *self.action_space.shape)),
                                                       step=False)
        return observations[0]

    @classmethod
    def _run_kernel(cls, envs: Sequence[CompiledTask], rows: list[int], actions: np.ndarray, step: bool):
        """The kernel's (observations, terms, outcome, memory) for the episodes ``rows`` of ``envs``."""
        first, n = envs[0], len(envs)
        readings = Readings.empty(n, first)
        for i in rows:
            envs[i]._read(readings, i)
        memory = np.array([env._memory for env in envs])
        observations = np.zeros((n, *first.observation_space.shape))
        terms = np.zeros((n, len(cls.reward_terms)))
        outcome = np.zeros((n, 3), dtype=np.int64)
        cls.kernel(step, np.array(rows, dtype=np.int64), *readings, actions, first._parameters, memory, observations,
                   terms, outcome)
        return observations, terms, outcome, memory

    def _read(self, readings: Readings, i: int) -> None:
        """Write this episode's readings into row ``i``; the impacts are those since the last read."""
        sim = self.sim
        readings.time[i] = sim.time
        if self.read_qpos.size:
            readings.qpos[i] = sim.qpos[self.read_qpos]
        if self.read_qvel.size:
            readings.qvel[i] = sim.qvel[self.read_qvel]
        if self.read_ctrl.size:
            readings.ctrl[i] = sim.ctrl[self.read_ctrl]
        self._frames_now(readings.frames[i])
        if self.observed_pairs:
            touching = sim.touching()
            readings.touching[i] = [frozenset(pair) in touching for pair in self.observed_pairs]
        if self.impact_geoms:
            new = self._new_impacts()
            for impact, geom in zip(readings.impacts[i], self.impact_geoms, strict=True):
                speeds = [event.speed for event in new if geom in (event.geom1, event.geom2)]
                impact[IMPACT_SPEEDS] = sum(speeds)
                impact[IMPACT_SQUARES] = sum(v * v for v in speeds)

    def _frames_now(self, out: np.ndarray | None = None) -> np.ndarray:
        """The observed bodies' frames (B, FRAME_SIZE) at the current state, into ``out`` if given."""
        frames = np.empty((len(self.observed_bodies), FRAME_SIZE)) if out is None else out
        for frame, name in zip(frames, self.observed_bodies, strict=True):
            body = self.sim.body(name)
            frame[FRAME_POS:FRAME_POS + 3] = body.pos
            frame[FRAME_QUAT:FRAME_QUAT + 4] = body.quat
            frame[FRAME_LINVEL:FRAME_LINVEL + 3] = body.linvel
            frame[FRAME_ANGVEL:FRAME_ANGVEL + 3] = body.angvel
        return frames
