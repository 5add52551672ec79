"""The kernel steps many worlds in one call, each exactly as if it ran alone."""

from __future__ import annotations

import numpy as np

from mechgym.physics import OK, State, StepScratch, Windows, advance, build_model
from mechgym.physics.contact import ContactSet, Scratch
from mechgym.physics.state import load_generalized
from mechgym.scene import compile_model

from .scenes import free_body, scene

ACTUATORS = ('<motor joint="b_free" gear="0.3 -0.2 1 0.1 0.2 0.3"/>'
             '<position joint="b_free" gear="1 0 0 0 0 0" kp="5" kv="2"/>')


def test_worlds_stepped_together_equal_worlds_stepped_alone():
    bodies = (free_body(geom='type="box" size="0.15 0.1 0.05" mass="1.3" pos="0.1 0.02 -0.03" euler="10 20 30"')
              + free_body("c", geom='type="capsule" size="0.04 0.2" mass="0.7"', pos="1 0 0"))
    model = compile_model(scene(bodies, actuators=ACTUATORS, option='viscosity="0.1"'))
    engine = build_model(model)
    worlds, rng = 3, np.random.default_rng(3)
    together = State.zeros(worlds, 2)
    for w in range(worlds):
        qpos = model.qpos0 + np.r_[rng.normal(size=3), 0, 0, 0, 0, rng.normal(size=3), 0, 0, 0, 0]
        load_generalized(engine.bodies, engine.free, engine.qposadr, engine.dofadr, qpos, rng.normal(size=12),
                         together, w)
    ctrl = rng.normal(size=(worlds, 2))
    # One window per world on a different body and time span.
    windows = Windows(world=np.arange(worlds), body=np.array([0, 1, 0]), wrench=rng.normal(size=(worlds, 6)),
                      start=np.array([0.0, 0.013, 0.1]), stop=np.array([0.05, 0.2, np.inf]))
    alone = [State(*(a[w:w + 1].copy() for a in together)) for w in range(worlds)]
    status = np.zeros((worlds, 4), dtype=np.int64)
    # no contacts in this scene (engine.env.contacts is off): empty contact sets
    advance(engine.bodies, engine.actuators, engine.env, engine.linkage, engine.geoms, engine.confinements, windows,
            together, ContactSet.empty(worlds, 0, 0), Scratch.empty(0, 0, 0), ctrl, 0, 40, 0.007, status,
            StepScratch.fitting(together, engine.linkage, ContactSet.empty(worlds, 0, 0), engine.confinements))
    assert (status[:, 1] == OK).all() and (status[:, 0] == 40).all()
    for w in range(worlds):
        mine = Windows(np.zeros(1, dtype=np.int64), windows.body[w:w + 1], windows.wrench[w:w + 1],
                       windows.start[w:w + 1], windows.stop[w:w + 1])
        advance(engine.bodies, engine.actuators, engine.env, engine.linkage, engine.geoms, engine.confinements, mine,
                alone[w], ContactSet.empty(1, 0, 0), Scratch.empty(0, 0, 0), ctrl[w:w + 1], 0, 40, 0.007, status[:1],
                StepScratch.fitting(alone[w], engine.linkage, ContactSet.empty(1, 0, 0), engine.confinements))
        for a, b in zip(together, alone[w], strict=True):
            assert np.array_equal(a[w], b[0])
