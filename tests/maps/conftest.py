from __future__ import annotations

import pytest

from argnb.dialectic import camera_reference_backend, run_dialogue
from argnb.maps import ArgumentMap

XSS = "<img src=x onerror=alert(1)>"


@pytest.fixture
def camera_map() -> ArgumentMap:
    """The map of the reference camera dialogue."""
    return run_dialogue(camera_reference_backend(), "camera").to_map()


@pytest.fixture
def small_map() -> ArgumentMap:
    """Every node and edge kind once, with an undercut on an assumption."""
    return build_small_map()


def build_small_map() -> ArgumentMap:
    """The ``small_map`` fixture's map (for module-scoped fixtures)."""
    m = ArgumentMap("Should students clean the school?")
    m.add_move("m1", "Students", "Cleaning teaches responsibility.")
    m.add_move("m2", "Staff", "Detergents are unsafe.")
    m.add_premise("p1", "Cleaning teaches responsibility.", agent="Students", move="m1")
    m.add_assumption("a1", "No evidence that cleaning is unsafe.", agent="Students", move="m1")
    m.add_claim("c1", "Students should clean.", agent="Students", move="m1", status="OUT")
    m.add_argument(
        "A1",
        premises=["p1"],
        assumptions=["a1"],
        conclusion="c1",
        agent="Students",
        move="m1",
        status="OUT",
    )
    m.add_premise("p2", "Detergents can harm children.", agent="Staff", move="m2")
    m.add_claim("c2", "Cleaning is unsafe for students.", agent="Staff", move="m2", status="IN")
    m.add_argument("A2", premises=["p2"], conclusion="c2", agent="Staff", move="m2", status="IN")
    m.add_undercut("A2", "A1", on="a1", move="m2")
    m.add_claim("c3", "Staff should clean.", agent="Staff", move="m2")
    m.add_rebut("c3", "c1", move="m2")
    m.add_support("c2", "c3", move="m2")
    return m
