"""Fixtures for the debate tests: a small memory written here (no shared data needed)."""

from __future__ import annotations

import pytest

from argnb.debate.memory import Record, Store


def rec(debate: str, turn: int, stance: str, text: str, topic: str = "Motion") -> Record:
    return Record(source="t", debate_id=debate, topic=topic, stance=stance, turn=turn, text=text)


@pytest.fixture
def tiny() -> Store:
    """Six records on two motions with our own labels (for retrieval and priors)."""
    s = Store()
    s.add(
        [
            rec(
                "cars",
                0,
                "pro",
                "Banning cars from the city centre cleans the air children breathe.",
            ),
            rec(
                "cars",
                1,
                "con",
                "A ban on cars hurts disabled drivers and small shops in the centre.",
            ),
            rec("cars", 2, "pro", "Oslo banned cars in its centre and shops kept their customers."),
            rec("cars", 3, "con", "Traffic moves to the ring road when the centre bans cars."),
            rec("school", 0, "pro", "Homework makes tired children and widens the gap at school."),
            rec("school", 1, "con", "Reading homework with parents helps children learn to read."),
        ]
    )
    labels = {
        "t/cars/0.0": {"cause_to_effect": "good", "positive_consequences": "excellent"},
        "t/cars/1.0": {"negative_consequences": "good", "values": "general"},
        "t/cars/2.0": {"example": "good", "positive_consequences": "good"},
        "t/cars/3.0": {"cause_to_effect": "poor"},
        "t/school/0.0": {"cause_to_effect": "general"},
        "t/school/1.0": {},
    }
    for rid, lab in labels.items():
        s.annotate(rid, lab, backend="human", model="tests")
    return s
