"""Hyperparameters in rl-zoo3's format: ``hyperparams/<algo>.yml``, one entry per environment id.

An entry holds rl-zoo3's keys (``n_envs``, ``n_timesteps``, ``policy``, ``normalize``, ``policy_kwargs`` as
a Python expression string, ``env_kwargs``) and the algorithm's own keyword arguments. The shipped files
are ``mechgym/training/hyperparams/`` (``training/hyperparams`` in a checkout links to them), so
``python -m rl_zoo3.train --conf-file training/hyperparams/ppo.yml`` reads exactly what ``train.py`` reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

ALGORITHMS = ("ppo", "sac")
# rl-zoo3 keys this trainer does not implement: refused by name rather than silently ignored.
UNSUPPORTED_KEYS = ("env_wrapper", "vec_env_wrapper", "callback", "frame_stack", "noise_type", "noise_std",
                    "monitor_kwargs", "replay_buffer_class", "replay_buffer_kwargs")


def shipped_file(algo: str) -> Path:
    """The package's own ``hyperparams/<algo>.yml``."""
    if algo not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algo!r}; algorithms are {list(ALGORITHMS)}")
    return Path(str(resources.files(__package__) / "hyperparams" / f"{algo}.yml"))


@dataclass
class Hyperparams:
    """One environment's entry, split the way the trainer uses it."""

    env_id: str
    algo: str
    n_envs: int
    n_timesteps: int
    policy: str
    normalize: dict[str, Any] | None  # VecNormalize keyword arguments, or None for no normalisation
    env_kwargs: dict[str, Any]
    algo_kwargs: dict[str, Any]  # everything else, policy_kwargs as written (a string) included
    source: dict[str, Any] = field(default_factory=dict)  # the entry as written, for run.json

    def policy_kwargs(self) -> dict[str, Any]:
        return policy_kwargs(self.algo_kwargs.get("policy_kwargs"))


def policy_kwargs(text: str | dict | None) -> dict[str, Any]:
    """``policy_kwargs`` evaluated as rl-zoo3 does (a ``dict(...)`` expression; ``nn`` is torch.nn)."""
    if text is None:
        return {}
    if isinstance(text, dict):
        return text
    from torch import nn

    # The expression comes from the hyperparameter file, which is trusted like any code one runs.
    return eval(text, {"__builtins__": {}}, {"dict": dict, "nn": nn})  # noqa: S307


def _normalize(value: Any, entry: str) -> dict[str, Any] | None:
    if value is None or value is False:
        return None
    if value is True:
        return {}
    if isinstance(value, str):
        parsed = eval(value, {"__builtins__": {}}, {"dict": dict, "True": True, "False": False})  # noqa: S307
        if isinstance(parsed, dict):
            return parsed
    raise ValueError(f"{entry}: normalize must be true, false or a dict(...) string, got {value!r}")


def read(algo: str, env_id: str, path: str | Path | None = None) -> Hyperparams:
    """The entry for ``env_id`` in ``path`` (default: the shipped ``<algo>.yml``)."""
    path = Path(path) if path is not None else shipped_file(algo)
    try:
        entries = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as error:
        raise ValueError(f"cannot read the hyperparameter file {path}: {error}") from None
    if env_id not in entries:
        raise ValueError(f"{path} has no entry for {env_id!r}; it has {sorted(entries)}")
    entry = dict(entries[env_id])
    name = f"{path}: {env_id}"
    unsupported = sorted(set(entry) & set(UNSUPPORTED_KEYS))
    if unsupported:
        raise ValueError(f"{name}: mechgym's trainer does not support {unsupported}")
    for key in ("n_timesteps", "policy"):
        if key not in entry:
            raise ValueError(f"{name} has no {key!r}")
    source = dict(entry)
    return Hyperparams(
        env_id=env_id, algo=algo,
        n_envs=int(entry.pop("n_envs", 1)),
        n_timesteps=int(float(entry.pop("n_timesteps"))),
        policy=str(entry.pop("policy")),
        normalize=_normalize(entry.pop("normalize", False), name),
        env_kwargs=dict(entry.pop("env_kwargs", None) or {}),
        algo_kwargs=entry,
        source=source,
    )
