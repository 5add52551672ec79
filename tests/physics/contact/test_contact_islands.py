"""Islands of the contact solve (``contact.islands``): the touching contacts split into the sets that share no
moving body, checked against a graph search on random sets; bodies apart move exactly as each alone; and the pile
of boxes that one whole-world set could not solve."""

from __future__ import annotations

import importlib.util
from collections import deque
from pathlib import Path

import numpy as np
import pytest

import mechgym
from mechgym.physics.constraints import Rows
from mechgym.physics.contact import ContactSet, Scratch
from mechgym.physics.contact.islands import find_islands

ROOT = Path(__file__).resolve().parents[3]


def _components(bodies: int, links: list[tuple[int, int]]) -> list[int]:
    """The component of each body in the graph whose edges are ``links`` (-1: static, no edge), by breadth-first
    search: each body's label is the smallest body of its component."""
    neighbours = [[] for _ in range(bodies)]
    for a, b in links:
        if a >= 0 and b >= 0:
            neighbours[a].append(b)
            neighbours[b].append(a)
    label = [-1] * bodies
    for start in range(bodies):
        if label[start] < 0:
            label[start], queue = start, deque([start])
            while queue:
                for other in neighbours[queue.popleft()]:
                    if label[other] < 0:
                        label[other] = start
                        queue.append(other)
    return label


@pytest.mark.parametrize("seed", range(40))
def test_islands_are_the_sets_of_touching_contacts_that_joints_and_contacts_link(seed):
    """Random worlds (1-12 bodies, contacts between bodies or with static geometry, some open, some constraint
    rows): every touching contact is in exactly one island, in ascending index within it; two are in one island
    exactly when a chain of touching contacts and rows links their moving bodies; open contacts are in none,
    unless every contact is asked for (the position correction's islands)."""
    rng = np.random.default_rng(seed)
    bodies, capacity, worlds = int(rng.integers(1, 13)), 24, 2
    world = int(rng.integers(worlds))
    contacts = ContactSet.empty(worlds, capacity, 4)
    count = int(rng.integers(0, capacity + 1))
    contacts.count[world] = count
    base = world * capacity
    for i in range(base, base + count):
        a, b = rng.integers(-1, bodies, size=2)
        contacts.body_a[i], contacts.body_b[i] = (a, b) if b >= 0 else (b, a) if a >= 0 else (-1, 0)
        contacts.active[i] = rng.uniform() < 0.7
    pairs = rng.integers(-1, bodies, size=(int(rng.integers(0, 4)), 2))
    rows = Rows.empty()._replace(kind=np.zeros(len(pairs), dtype=np.int64), body_a=pairs[:, 0].copy(),
                                 body_b=pairs[:, 1].copy())
    scratch = Scratch.empty(0, bodies, capacity)
    for every in (False, True):
        chosen = [i for i in range(base, base + count) if every or contacts.active[i]]
        islands = find_islands(rows, world, contacts, scratch, every)
        members = [scratch.island_members[scratch.island_start[k]:scratch.island_start[k + 1]].tolist()
                   for k in range(islands)]
        assert sorted(i for island in members for i in island) == chosen
        assert all(island == sorted(island) and island for island in members)
        label = _components(bodies, [(contacts.body_a[i], contacts.body_b[i]) for i in chosen] + pairs.tolist())
        component = {i: label[contacts.body_b[i]] for i in chosen}
        assert all(len({component[i] for i in island}) == 1 for island in members)
        assert len({component[island[0]] for island in members}) == islands


def _box(name: str, x: float, height: float, euler: str) -> str:
    return (f'<body name="{name}" pos="{x} 0 {height}" euler="{euler}"><freejoint/>'
            f'<geom name="{name}" type="box" size="0.03 0.02 0.015" mass="0.2"/></body>')


def _floor_with(boxes: dict[str, str]) -> str:
    """A floor plane and the ``boxes`` (name: body), the box "a" with restitution 0.5."""
    custom = '<custom><numeric name="restitution:a" data="0.5"/></custom>' if "a" in boxes else ""
    return (f'<mujoco><compiler angle="degree"/>{custom}<worldbody><geom name="floor" type="plane" size="5 5 0.1"/>'
            f'{"".join(boxes.values())}</worldbody></mujoco>')


def test_two_boxes_apart_move_bit_for_bit_as_each_alone():
    """Two tilted boxes 1 m apart dropped on a floor (one bouncing, e = 0.5, one not; 22 impacts in 1.6 s at
    4 ms): no contact links them, so each moves exactly as in a world of its own. Before the islands, the world's
    events gave both boxes' contacts resting reactions when either's were due, and the bouncing box was 2.8 mm
    off its lone path at t = 0.58 s."""
    boxes = {"a": _box("a", 0.0, 0.3, "20 10 0"), "b": _box("b", 1.0, 0.5, "5 30 40")}

    def run(names):
        sim = mechgym.load(_floor_with({n: boxes[n] for n in names}), backend="mechgym", dt=0.004)
        path = {n: [] for n in names}
        for _ in range(400):
            sim.step(1)
            for n in names:
                body = sim.body(n)
                path[n].append(np.concatenate((body.pos, body.quat, body.linvel, body.angvel)))
        return {n: np.array(states) for n, states in path.items()}, len(sim.events)

    together, impacts = run("ab")
    assert impacts >= 20
    for name in "ab":
        alone, _ = run(name)
        assert np.array_equal(together[name], alone[name]), name


def _bench_bin():
    spec = importlib.util.spec_from_file_location("bench_bin", ROOT / "benchmarks" / "bench_bin.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sixty_four_boxes_fall_into_a_bin_and_land_in_columns_without_a_simulation_error():
    """``benchmarks/bench_bin.py``'s bin of 64 cubes in four layers: the layers land on the floor and on each
    other between t = 0.12 and 0.16 s, sixteen columns whose sets of contacts share no body. Solved as one set of
    over 32 contacts on the bodies alone, the sweeps did not converge (t = 0.158 s); island by island every cube
    lands and none goes through the floor, a wall or another cube's face by more than the contact margin."""
    bench_bin = _bench_bin()
    sim = mechgym.load(bench_bin.bin_scene(64), backend="mechgym", dt=bench_bin.DT)
    half = bench_bin.HALF
    sim.step(round(0.2 / bench_bin.DT))
    centres = np.array([sim.body(f"box{i}").pos for i in range(64)])
    assert centres[:, 2].min() >= half - 1e-4
    inner = 2 * bench_bin.SPACING + 0.005  # the bin's inner half width for layers of 4 x 4 (bench_bin.bin_scene)
    assert np.abs(centres[:, :2]).max() <= inner - half + 1e-4
    gaps = np.linalg.norm(centres[:, None] - centres[None], axis=2) + 10 * np.eye(64)
    assert gaps.min() >= 2 * half - 1e-4  # centres of cubes face to face are a side apart


@pytest.mark.parametrize("seed", [1, 2])
def test_touching_stacks_in_a_bin_of_thirty_six_boxes_come_to_rest(seed):
    """``bench_bin.bin_scene(36, seed)``: nine columns of four cubes that lean on each other as they land. A contact
    that formed at rest used to carry its force into the next step's warm start, which kicked the boxes apart again:
    8 or 9 boxes chattered at up to 1.5 m/s (or rad/s) after 3 s at dt = 2 ms (at rest by 2 s at 1 ms). Every box
    is still at 1.5 s and at 2 s."""
    bench_bin = _bench_bin()
    sim = mechgym.load(bench_bin.bin_scene(36, seed), backend="mechgym", dt=bench_bin.DT)
    for seconds in (1.5, 2.0):
        sim.step(round(seconds / bench_bin.DT) - sim.step_count)
        assert np.abs(sim.qvel).max() < 1e-6, (seed, seconds, np.abs(sim.qvel).max())
