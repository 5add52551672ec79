"""The two error types mechgym raises beyond the builtin ``ValueError`` for bad arguments, and its one warning."""


class SceneError(Exception):
    """A scene that a backend cannot run.

    ``code`` is a stable, dotted string (for example ``"custom.unknown-geom"``) that callers and tests
    may match on; the message names the element and the feature at fault.
    """

    def __init__(self, code: str, message: str):
        super().__init__(f"[{code}] {message}")
        self.code = code
        self.message = message


class SimulationError(RuntimeError):
    """The simulation itself failed, for example its state became non-finite.

    The simulator that raised it refuses to step until ``reset()`` or ``set_state()``.
    """


class StartWarning(UserWarning):
    """A reset whose initial state a backend had to change: on the in-house engine, whose limits, equalities and ropes
    are hard, a hinge or slide coordinate beyond its joint's range, started at the bound instead, or an equality
    (connect, weld, rod) or rope that the start does not hold, the bodies moved onto it. Issued once per simulator and
    joint, equality or rope; ``warnings.filterwarnings("ignore", category=mechgym.StartWarning)`` silences it."""
