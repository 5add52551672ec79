"""CompiledTask: a MechEnv whose observation, reward terms, success and failure are one compiled kernel over
arrays, which the single env calls for its episode and the vector env for a group of episodes at once.

A task written in Python (``_observe``, ``_evaluate``) costs 30-130 µs a control step in NumPy calls on small
arrays, as much as the physics of a control step on the cube drop and a third of it on the gripper; a vector env
pays it for every episode, holding the GIL. A compiled task declares what it reads of the simulator
(``observed_bodies``, ``observed_pairs``, ``impact_geoms``, and the coordinates ``read_qpos``, ``read_qvel``,
``read_ctrl``), which are gathered per episode into :class:`KernelArrays`, and a numba kernel::

    kernel(step, rows, parameters, time, qpos, qvel, ctrl, frames, touching, impacts, actions, memory,
           observations, terms, outcome)

For each episode i in ``rows`` it writes ``observations[i]``; with ``step`` False (a reset) nothing else; with
``step`` True also the task's memory ``memory[i]`` (timers, flags, samples: the episode's state that is not the
simulator's), the reward terms ``terms[i]`` (in ``reward_terms`` order) and ``outcome[i]`` (the columns
``mechgym.steps.SUCCESS``: 1 or 0, and ``FAILURE``: 0, or k for ``task_failures[k - 1]``), from which
``mechgym.steps.settle_steps`` makes the steps' results. An episode whose observation is not finite diverged: what
the kernel wrote of its step is dropped, its memory included (``CompiledTask.conclude_many``). ``parameters`` are the
task's numbers (lengths, thresholds, the control period), the same for every episode of one call; the other arrays
are :class:`KernelArrays`'.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import ClassVar, NamedTuple

import numpy as np

from .env import MechEnv
from .simulator import FRAME_SIZE, Readings, ReadSpec
from .steps import Steps, settle_steps

IMPACT_SPEEDS, IMPACT_SQUARES = 0, 1  # the columns of ``impacts``


class KernelArrays(NamedTuple):
    """A kernel's arrays for n episodes, row i episode i's: its readings of the simulator after a step (time to
    impacts), the clipped actions, and what the kernel reads and writes of the episodes (memory to outcome)."""

    time: np.ndarray          # (n,) s
    qpos: np.ndarray          # (n, len(read_qpos)): the entries of qpos that the task reads, in its order
    qvel: np.ndarray          # (n, len(read_qvel)): likewise of qvel
    ctrl: np.ndarray          # (n, len(read_ctrl)): likewise of ctrl
    frames: np.ndarray        # (n, B, FRAME_SIZE): each observed body's frame (``Simulator.frames``)
    touching: np.ndarray      # (n, P): 1.0 where the observed pair of geoms touches, else 0.0
    impacts: np.ndarray       # (n, G, 2): the sums of the speeds (m/s) and of their squares of the impacts
    #                           involving each impact geom in the step
    actions: np.ndarray       # (n, action size)
    memory: np.ndarray        # (n, memory size)
    observations: np.ndarray  # (n, observation size), float64
    terms: np.ndarray         # (n, len(reward_terms))
    outcome: np.ndarray       # (n, 2) int64: SUCCESS, FAILURE

    def readings(self) -> Readings:
        """The arrays that ``Simulator.read_many`` fills."""
        return Readings(self.time, self.qpos, self.qvel, self.ctrl, self.frames, self.touching)

    @classmethod
    def empty(cls, n: int, task: CompiledTask) -> KernelArrays:
        def rows(*shape, dtype=float):
            return np.zeros((n, *shape), dtype=dtype)

        return cls(rows(), rows(len(task.read_qpos)), rows(len(task.read_qvel)), rows(len(task.read_ctrl)),
                   rows(len(task.observed_bodies), FRAME_SIZE), rows(len(task.observed_pairs)),
                   rows(len(task.impact_geoms), 2), rows(*task.action_space.shape), rows(*task._memory.shape),
                   rows(*task.observation_space.shape), rows(len(task.reward_terms)), rows(2, dtype=np.int64))


class CompiledTask(MechEnv):
    """A task evaluated by its ``kernel`` (see the module docstring). A subclass sets the class attributes below,
    builds ``self._parameters`` (float64) in ``__init__`` and ``self._memory`` (float64, of one size for the
    task's settings) in ``_begin_episode``."""

    kernel: ClassVar  # a numba function with the signature of the module docstring
    observed_bodies: ClassVar[tuple[str, ...]] = ()
    observed_pairs: ClassVar[tuple[tuple[str, str], ...]] = ()  # geom pairs whose touching the kernel reads
    impact_geoms: ClassVar[tuple[str, ...]] = ()  # geoms whose impacts the kernel reads
    # the indices of qpos, qvel and ctrl that the kernel reads (a subclass sets its own in __init__)
    read_qpos = read_qvel = read_ctrl = np.zeros(0, dtype=np.int64)

    _parameters: np.ndarray
    _memory: np.ndarray

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._observed_ids = np.array([self.sim.body_id(name) for name in self.observed_bodies], dtype=np.int64)
        # the kernel's arrays by number of episodes, for the calls that this episode leads (one thread at a time)
        self._arrays: dict[int, KernelArrays] = {}

    @classmethod
    def conclude_many(cls, envs: Sequence[CompiledTask], actions: Sequence[np.ndarray], errors: Sequence[str | None],
                      out: Steps) -> None:
        """``conclude`` of each of ``envs``, into the rows of ``out``, with one call of the kernel for those whose
        physics went through."""
        arrays = cls._run_kernel(envs, [i for i, error in enumerate(errors) if error is None], actions, step=True)
        stepped = settle_steps(envs, arrays.observations, arrays.terms, arrays.outcome, errors, out)
        for i, (env, went_through) in enumerate(zip(envs, stepped.tolist(), strict=True)):
            if went_through:  # (what the kernel wrote of the other episodes is dropped)
                env._observation = arrays.observations[i].copy()
                env._memory[:] = arrays.memory[i]

    def _observe(self) -> np.ndarray:
        return self._run_kernel([self], [0], None, step=False).observations[0].copy()

    @classmethod
    def _run_kernel(cls, envs: Sequence[CompiledTask], rows: list[int], actions: Sequence[np.ndarray] | None,
                    step: bool) -> KernelArrays:
        """The kernel's arrays after it ran for the episodes ``rows`` of ``envs`` (``actions``: theirs, one per
        episode of ``envs``, or None where it does not step)."""
        first, n = envs[0], len(envs)
        arrays = first._arrays.get(n)
        if arrays is None:
            arrays = first._arrays[n] = KernelArrays.empty(n, first)
        type(first.sim).read_many([envs[i].sim for i in rows], first._read_spec, rows, arrays.readings())
        for i in rows:
            env = envs[i]
            if env.impact_geoms:
                env._read_impacts(arrays.impacts[i])
            arrays.memory[i] = env._memory
            if actions is not None:
                arrays.actions[i] = actions[i]
        cls.kernel(step, np.array(rows, dtype=np.int64), first._parameters, *arrays)
        return arrays

    @cached_property
    def _read_spec(self) -> ReadSpec:
        """What the kernel reads of the simulator (``Simulator.read_many``)."""
        pairs = [[self.sim.model.geom(name).id for name in pair] for pair in self.observed_pairs]
        return ReadSpec(*(np.ascontiguousarray(indices, dtype=np.int64) for indices in (
            self._observed_ids, self.read_qpos, self.read_qvel, self.read_ctrl, np.reshape(pairs, (-1, 2)))))

    def _read_impacts(self, impacts: np.ndarray) -> None:
        """Write the sums of the speeds and of their squares of the impacts since the last read that involve each
        impact geom into ``impacts`` (G, 2)."""
        new = self._new_impacts()
        if not new:
            impacts[:] = 0.0
            return
        for impact, geom in zip(impacts, self.impact_geoms, strict=True):
            speeds = [event.speed for event in new if geom in (event.geom1, event.geom2)]
            impact[IMPACT_SPEEDS] = sum(speeds)
            impact[IMPACT_SQUARES] = sum(v * v for v in speeds)

    def _frames_now(self) -> np.ndarray:
        """The observed bodies' frames (B, FRAME_SIZE) at the current state."""
        frames = np.empty((len(self.observed_bodies), FRAME_SIZE))
        self.sim.frames(self._observed_ids, frames)
        return frames
