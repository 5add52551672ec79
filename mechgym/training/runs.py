"""Run folders: what a training run leaves behind, and loading its policy back.

A run folder holds
- ``run.json``: the environment id and its kwargs (backend, physics_dt, decimation, time_limit), the
  algorithm, its hyperparameters, the seed, the timesteps done, the package versions, the latest checkpoint;
- ``model.zip`` (SB3's file) and ``vecnormalize.pkl`` beside it when observations are normalised (the
  statistics are not inside SB3's zip), written when training finishes;
- ``checkpoints/step_<N>.zip`` with ``step_<N>_vecnormalize.pkl``, every so often, and SAC's replay buffer
  of the latest checkpoint.
Every file is written through a temporary file and a rename (:func:`mechgym.files.write_atomic`), so an
interrupted run keeps its last checkpoint whole.

SB3 zips and VecNormalize files hold pickled Python objects: load only run folders you trust.
"""

from __future__ import annotations

import hashlib
import io
import json
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..files import write_atomic

RUN_FILE = "run.json"
MODEL_FILE = "model.zip"
STATS_FILE = "vecnormalize.pkl"
CHECKPOINTS = "checkpoints"
REQUIRED_KEYS = ("env_id", "env_kwargs", "algo", "timesteps_done")
ENV_SETTINGS = ("backend", "physics_dt", "decimation", "time_limit")
SHIPPED = Path(__file__).resolve().parent.parent / "policies"


class RunFolderError(ValueError):
    """A run folder that is missing a file or holds a corrupt one; the message names the file."""


def require_training_extra() -> None:
    """A clear error when stable-baselines3 (the ``train`` extra) is not installed."""
    try:
        import stable_baselines3  # noqa: F401
    except ImportError:
        raise ValueError("trained policies need stable-baselines3: pip install torch==2.13.0 'mechgym[train]'") \
            from None


def checkpoint_paths(step: int) -> tuple[str, str, str]:
    """Model, statistics and replay-buffer paths of the checkpoint at ``step``, relative to the run folder."""
    stem = f"{CHECKPOINTS}/step_{step}"
    return f"{stem}.zip", f"{stem}_vecnormalize.pkl", f"{stem}_replay_buffer.pkl"


def shipped_policies() -> list[str]:
    """Names of the policies shipped in the package (each a run folder under ``mechgym/policies``)."""
    return sorted(path.parent.name for path in SHIPPED.glob(f"*/{RUN_FILE}"))


def resolve(run: str | Path) -> Path:
    """A run folder's path from a path or a shipped policy's name."""
    path = Path(run)
    if path.is_dir():
        return path
    if str(run) in shipped_policies():
        return SHIPPED / str(run)
    raise RunFolderError(f"{run} is neither a run folder nor a shipped policy; shipped policies are "
                         f"{shipped_policies()}")


@dataclass(frozen=True)
class RunFolder:
    """A run folder and its ``run.json``."""

    path: Path
    record: dict[str, Any]

    @classmethod
    def open(cls, run: str | Path) -> RunFolder:
        path = resolve(run)
        record_path = path / RUN_FILE
        if not record_path.is_file():
            raise RunFolderError(f"{record_path} is missing: {path} is not a mechgym run folder")
        try:
            record = json.loads(record_path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise RunFolderError(f"{record_path} is corrupt: {error}") from None
        missing = [key for key in REQUIRED_KEYS if not isinstance(record, dict) or key not in record]
        if missing:
            raise RunFolderError(f"{record_path} lacks {missing}")
        return cls(path, record)

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def env_id(self) -> str:
        return self.record["env_id"]

    @property
    def env_kwargs(self) -> dict[str, Any]:
        return dict(self.record["env_kwargs"])

    @property
    def control_period(self) -> float:
        """The trained control period (s): physics_dt x decimation."""
        return self.env_kwargs["physics_dt"] * self.env_kwargs["decimation"]

    def policy_files(self) -> tuple[Path, Path | None]:
        """The final model and its statistics, or the latest checkpoint's if training has not finished."""
        if self.record.get("finished"):
            model, stats = MODEL_FILE, STATS_FILE
        elif self.record.get("checkpoint") is not None:
            model, stats, _ = checkpoint_paths(int(self.record["checkpoint"]))
        else:
            raise RunFolderError(f"{self.path} has neither a finished model nor a checkpoint yet")
        stats_path = self.path / stats if self.record.get("normalize") is not None else None
        for file in (self.path / model, stats_path):
            if file is not None and not file.is_file():
                raise RunFolderError(f"{file} is missing (named by {self.path / RUN_FILE})")
        return self.path / model, stats_path

    def fingerprint(self) -> str:
        """A short hash of the policy's files: evaluation results are keyed by it."""
        digest = hashlib.sha256()
        for file in self.policy_files():
            if file is not None:
                digest.update(file.read_bytes())
        return digest.hexdigest()[:12]

    def write_record(self, **changes: Any) -> RunFolder:
        record = {**self.record, **changes}
        write_atomic(self.path / RUN_FILE, json.dumps(record, indent=2, sort_keys=True) + "\n")
        return RunFolder(self.path, record)


def save_model(model, path: Path) -> None:
    """SB3's zip, written atomically."""
    buffer = io.BytesIO()
    model.save(buffer)
    write_atomic(path, buffer.getvalue())


def save_pickle(value, path: Path) -> None:
    write_atomic(path, pickle.dumps(value))


def load_stats(path: Path):
    """A pickled VecNormalize (its ``obs_rms``, ``clip_obs``, ``epsilon`` are what evaluation needs)."""
    try:
        with path.open("rb") as handle:
            return pickle.load(handle)
    except Exception as error:  # noqa: BLE001 (any unpickling failure means a corrupt file)
        raise RunFolderError(f"{path} is corrupt: {type(error).__name__}: {error}") from None


class TrainedPolicy:
    """A run's policy as a callable from a raw observation to a deterministic action in [-1, 1].

    Observations are normalised with the run's statistics (frozen) before the network sees them.
    """

    def __init__(self, run: RunFolder):
        require_training_extra()
        from stable_baselines3.common.base_class import BaseAlgorithm

        from .train import algorithm_class

        model_path, stats_path = run.policy_files()
        try:
            self.model: BaseAlgorithm = algorithm_class(run.record["algo"]).load(model_path, device="cpu")
        except Exception as error:  # noqa: BLE001 (SB3 raises many kinds for a bad zip)
            raise RunFolderError(f"{model_path} is corrupt: {type(error).__name__}: {error}") from None
        self.stats = load_stats(stats_path) if stats_path is not None else None

    def __call__(self, observation: np.ndarray) -> np.ndarray:
        if self.stats is not None:
            observation = self.stats.normalize_obs(observation)  # VecNormalize's own, statistics frozen
        action, _ = self.model.predict(observation, deterministic=True)
        return action
