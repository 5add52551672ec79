"""MechEnv: the Gymnasium environment every mechgym task builds on, over the :class:`Simulator` interface only.

The base class keeps what all tasks share: the backend and its physics step, the control split
(``decimation`` physics steps per action, run in one ``sim.step`` call), the episode length in seconds of
simulated time, action checking and scaling, failure handling, rendering and the ``info`` dict. A task
(one module beside its scene in ``envs/``) supplies the spaces, the initial state, how an action sets the
controls, the observation, and the reward terms, success and failures of a step: in Python (``_observe``,
``_evaluate``), or as one compiled kernel over arrays (:class:`mechgym.compiled.CompiledTask`, as the bundled
tasks are), which a vector env calls once for a group of episodes (``conclude_many``).

Conventions for every task:
- actions lie in [-1, 1]; out-of-range values are clipped, non-finite ones raise ``ValueError``;
- spaces (float32) are the same for every backend, ``physics_dt`` and ``decimation``;
- reward terms that accumulate over time are rates multiplied by the control period ``dt`` (their sum over
  an episode approximates a time integral, comparable across control splits); bonuses and penalties are
  per event;
- ``terminated`` marks a task end (success or one of the task's failures); ``truncated`` the time limit, or
  the simulator failing (``info["failure"] == "diverged"``, no penalty): that is no outcome of the policy's,
  and a penalty would teach policies to keep away from the states where a backend fails instead of doing
  the task there (an evaluation still counts it as a failure).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import logger, spaces

from . import load
from .render import SceneRenderer
from .simulator import Event, Simulator
from .steps import DIVERGED, FAILURE, SUCCESS, Steps, Transition, settle_steps


@dataclass
class StepOutcome:
    """What a task makes of the state after a step: reward terms by name (already multiplied by the
    control period where they are rates), whether the task is achieved, and a named failure or None."""

    terms: dict[str, float]
    success: bool = False
    failure: str | None = None


class ScriptedPolicy(ABC):
    """A hand-written controller: observation in, action in [-1, 1] out; ``reset()`` at each episode's start
    clears whatever it remembers."""

    def reset(self) -> None:  # noqa: B027 (a hook: most controllers keep no memory)
        """Forget the last episode (the default keeps no memory)."""

    @abstractmethod
    def __call__(self, observation: np.ndarray) -> np.ndarray: ...


def _positive_finite(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating) \
            or not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive finite number of seconds, got {value!r}")
    return float(value)


def _positive_integer(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


class MechEnv(gym.Env[np.ndarray, np.ndarray], ABC):
    """Base of the mechgym tasks.

    Arguments (all environments):
        backend:     ``"mechgym"`` (the in-house engine) or ``"mujoco"``.
        physics_dt:  physics time step (s); ``None``: the task's default.
        decimation:  physics steps per action (positive integer); the control period is
                     ``dt = physics_dt * decimation``.
        time_limit:  episode length in seconds of simulated time; the episode is truncated at the first
                     control step at or after it.
        render_mode: ``None`` or ``"rgb_array"`` (headless, through ``mujoco.Renderer``).
        render_size: (width, height) of rendered frames in pixels.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 50}

    scene: ClassVar[str]                  # bundled scene name (envs/<scene>.xml)
    camera: ClassVar[str]                 # the scene's camera that frames the task
    default_physics_dt: ClassVar[float]
    default_decimation: ClassVar[int]
    default_time_limit: ClassVar[float]
    reward_terms: ClassVar[tuple[str, ...]]  # names of the task's terms; "failure" is added by the base
    failure_penalty: ClassVar[float]      # reward of the step that ends in a task failure (negative)
    task_failures: ClassVar[tuple[str, ...]]  # the task's own failure names (besides "diverged")
    success_ends_episode: ClassVar[bool] = True  # False: success is a running condition, the episode goes on

    def __init__(self, backend: str = "mechgym", physics_dt: float | None = None, decimation: int | None = None,
                 time_limit: float | None = None, render_mode: str | None = None,
                 render_size: tuple[int, int] = (640, 480)):
        self.physics_dt = _positive_finite("physics_dt", self.default_physics_dt if physics_dt is None
                                           else physics_dt)
        self.decimation = _positive_integer("decimation", self.default_decimation if decimation is None
                                            else decimation)
        self.time_limit = _positive_finite("time_limit", self.default_time_limit if time_limit is None
                                           else time_limit)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, "
                             f"got {render_mode!r}")
        self.render_mode = render_mode
        self._render_size = tuple(_positive_integer("render_size", n) for n in render_size)
        self.backend = backend
        self.sim: Simulator = load(self.scene, backend=backend, dt=self.physics_dt)
        # Physics steps in an episode: time_limit / physics_dt rounded up (a ratio within 1e-9 of an
        # integer counts as that integer, so 3 s at 2 ms is exactly 1500 steps).
        self._step_limit = math.ceil(round(self.time_limit / self.physics_dt, 9))
        self.metadata = {**self.metadata, "render_fps": round(1.0 / self.dt)}
        self.action_space = spaces.Box(-1.0, 1.0, shape=(self._action_size(),), dtype=np.float32)
        self.observation_space = self._observation_space()
        self._renderer: SceneRenderer | None = None
        self._observation = np.zeros(self.observation_space.shape)
        self._settings_infos: dict[int, dict[str, np.ndarray]] = {}

    # ----------------------------------------------------------------- time
    @property
    def dt(self) -> float:
        """Control period (s): ``physics_dt * decimation``."""
        return self.physics_dt * self.decimation

    @property
    def time(self) -> float:
        """Simulated time of the episode (s)."""
        return self.sim.time

    # ----------------------------------------------------------------- Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        return self.begin(seed), self._reset_step.info(0, self)

    def begin(self, seed: int | None = None) -> np.ndarray:
        """``reset(seed=seed)`` without its info (every reset's is the same: an empty row of ``Steps``): the
        observation."""
        super().reset(seed=seed)
        qpos, qvel, ctrl = self._initial_state(self.np_random)
        self.sim.reset(qpos=qpos, qvel=qvel, ctrl=ctrl)
        self._events_seen = 0
        self._begin_episode()
        self._observation = self._observe()
        return self._observation.astype(np.float32)

    def step(self, action):
        action = self.act(action)
        return self.conclude(action, self.sim.try_step(self.decimation))

    # The parts of a step around its physics, apart so that a vector env (mechgym.vector) can run the physics of
    # many episodes at once between them (``Simulator.step_many``).
    def act(self, action) -> np.ndarray:
        """Check ``action``, clip it to [-1, 1], write it into the controls; the clipped action."""
        action = self._checked_action(action)
        self._apply_action(action)
        return action

    def act_clipped(self, action: np.ndarray) -> None:
        """Write an action that its caller has checked and clipped (float64, shape and values as ``act``
        leaves them) into the controls: a vector env checks all its episodes' actions at once."""
        self._apply_action(action)

    def conclude(self, action: np.ndarray, error: str | None) -> Transition:
        """The step's (observation, reward, terminated, truncated, info) after the control period's physics
        (``decimation`` steps: ``Simulator.try_step``) returned ``error``, for the clipped ``action`` it ran with."""
        steps = self._last_step
        self.conclude_many([self], [action], [error], steps)
        return steps.transition(0, self)

    @cached_property
    def _last_step(self) -> Steps:
        """The single env's ``Steps`` of one row, filled anew by every ``conclude``."""
        return Steps.empty(1, self)

    @cached_property
    def _reset_step(self) -> Steps:
        """An empty ``Steps`` row: a reset's info."""
        return Steps.empty(1, self)

    @classmethod
    def conclude_many(cls, envs: Sequence[MechEnv], actions: Sequence[np.ndarray], errors: Sequence[str | None],
                      out: Steps) -> None:
        """``conclude`` of each of ``envs`` (episodes of this task with the same settings: a vector env's), into
        the rows of ``out`` in order. Here each one's ``_observe`` and ``_evaluate`` in turn; a compiled task
        (:mod:`mechgym.compiled`) evaluates them all in one compiled call."""
        n = len(envs)
        observations = np.zeros((n, *envs[0].observation_space.shape))
        terms = np.zeros((n, len(cls.reward_terms)))
        outcome = np.zeros((n, 2), dtype=np.int64)
        for i, (env, action, error) in enumerate(zip(envs, actions, errors, strict=True)):
            if error is None:
                observations[i] = observation = env._observe()
                if all(map(math.isfinite, observation.tolist())):  # (else settle_steps finds it diverged)
                    env._observation = observation
                    result = env._evaluate(action)
                    if result.terms.keys() != set(cls.reward_terms):
                        raise ValueError(f"{cls.__name__}._evaluate returned the reward terms {list(result.terms)}; "
                                         f"its reward_terms are {list(cls.reward_terms)}")
                    terms[i] = [result.terms[name] for name in cls.reward_terms]
                    outcome[i, SUCCESS], outcome[i, FAILURE] = result.success, env._failure_code(result.failure)
        settle_steps(envs, observations, terms, outcome, errors, out)

    def _failure_code(self, failure: str | None) -> int:
        if failure is None:
            return 0
        if failure not in self.task_failures:
            raise ValueError(f"{type(self).__name__}._evaluate returned the failure {failure!r}, which is not one of "
                             f"its task_failures {self.task_failures}")
        return self.task_failures.index(failure) + 1

    def _non_finite(self) -> str:
        return f"the observation became non-finite at t = {self.sim.time:.6g} s"

    def render(self):
        if self.render_mode is None:
            logger.warn("render() was called without a render_mode; make the env with render_mode='rgb_array'")
            return None
        if self._renderer is None:
            width, height = self._render_size
            self._renderer = SceneRenderer(self.sim, width, height, self.camera)
        return self._renderer.frame()

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None

    # ----------------------------------------------------------------- shared helpers
    @cached_property
    def info_terms(self) -> tuple[str, ...]:
        """The info's keys of the reward terms and the failure penalty, in the order of ``Steps.terms``."""
        return tuple(f"reward_{name}" for name in (*self.reward_terms, "failure"))

    def settings_info(self, n: int) -> dict[str, np.ndarray]:
        """The settings' entries of ``n`` rows' infos (``Steps.infos``), the same for every row (kept: read-only)."""
        kept = self._settings_infos
        if n not in kept:
            kept[n] = {"physics_dt": np.full(n, self.physics_dt), "decimation": np.full(n, self.decimation, dtype=int),
                       "backend": np.full(n, self.backend, dtype=object)}
            for array in kept[n].values():
                array.setflags(write=False)
        return kept[n]

    @cached_property
    def failure_names(self) -> np.ndarray:
        """The failures by their code in ``Steps.failure``: None (0), the task's (1, 2, ...), DIVERGED (-1)."""
        return np.array([None, *self.task_failures, DIVERGED], dtype=object)

    def _checked_action(self, action) -> np.ndarray:
        array = np.asarray(action, dtype=np.float64)
        if array.shape != self.action_space.shape:
            raise ValueError(f"the action must have shape {self.action_space.shape}, got {array.shape}")
        if not all(map(math.isfinite, array.tolist())):  # (a few components: faster than np.isfinite)
            bad = np.flatnonzero(~np.isfinite(array))[0]
            raise ValueError(f"action[{bad}] is {array[bad]}; actions must be finite numbers in [-1, 1]")
        return np.minimum(np.maximum(array, -1.0), 1.0)  # np.clip's values, without its Python layers

    def _new_impacts(self) -> list[Event]:
        """The impacts that the backend recorded since the last call (in this episode)."""
        new = self.sim.events_since(self._events_seen)
        self._events_seen += len(new)
        return new

    def _actuator(self, name: str) -> tuple[int, float, float]:
        """Index and ctrlrange (low, high) of a named actuator of the scene."""
        actuator = self.sim.model.actuator(name)
        low, high = actuator.ctrlrange
        return actuator.id, float(low), float(high)

    @staticmethod
    def _scaled(action: float, low: float, high: float) -> float:
        """Map an action in [-1, 1] linearly onto [low, high]."""
        return low + 0.5 * (action + 1.0) * (high - low)

    # ----------------------------------------------------------------- task hooks
    @abstractmethod
    def _action_size(self) -> int:
        """Number of action components."""

    @abstractmethod
    def _observation_space(self) -> spaces.Box:
        """The float32 observation space, the same for every backend and control split."""

    @abstractmethod
    def _initial_state(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(qpos, qvel, ctrl) of a new episode, drawn from ``rng`` only."""

    def _begin_episode(self) -> None:
        """Reset the task's own memory (timers, flags) after the simulator has been reset."""

    @abstractmethod
    def _apply_action(self, action: np.ndarray) -> None:
        """Write the clipped action into ``self.sim.ctrl``."""

    @abstractmethod
    def _observe(self) -> np.ndarray:
        """The observation of the current state (float64; the base casts it to float32)."""

    def _evaluate(self, action: np.ndarray) -> StepOutcome:
        """Reward terms, success and failure of the step just taken (a task written in Python implements it; a
        compiled task, :class:`mechgym.compiled.CompiledTask`, evaluates its steps in its kernel instead)."""
        raise NotImplementedError(f"{type(self).__name__} implements neither _evaluate nor a compiled kernel")
