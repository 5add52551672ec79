"""``backend="mechgym"``: the in-house engine (velocity Verlet + RATTLE + contact)."""

from __future__ import annotations

from ..simulator import Simulator


class MechgymSimulator(Simulator):
    backend_name = "mechgym"

    def __new__(cls, *args, **kwargs):
        raise NotImplementedError(
            "the in-house mechgym engine is not built yet (issue 'Engine I'); use backend='mujoco'"
        )
