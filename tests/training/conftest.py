"""Fixtures of the training tests."""

from tests.tiny import tiny_hyperparams  # noqa: F401
