"""Dialectic: structured arguments, rebut and undercut checked in code, a protocol that ends,
synthesis, and Dung semantics on top (Masuo's protocol over Kido & Kurihara's camera example).

>>> from argnb.dialectic import run_dialogue, camera_reference_backend
>>> d = run_dialogue(camera_reference_backend(), "camera")
>>> d.outcome, d.labelling
('synthesis', {'A1': 'OUT', 'A2': 'IN', 'A3': 'OUT', 'A4': 'IN', 'A5': 'IN'})
"""

from __future__ import annotations

from argnb.dialectic.attacks import (
    Attack,
    AttackCheck,
    admissible_kinds,
    check_attack,
    classify,
    defeats,
)
from argnb.dialectic.case import Case, Stance
from argnb.dialectic.examples import EXAMPLES, camera_reference_backend, load_example
from argnb.dialectic.protocol import (
    DialecticProtocol,
    Dialogue,
    call_bound,
    run_dialogue,
    turn_bound,
)
from argnb.dialectic.schemas import (
    Antecedent,
    Argument,
    AttackAnswer,
    Characterized,
    MainArgumentAnswer,
    Rule,
)
from argnb.dialectic.semantics import grounded_extension, grounded_labelling, preferred_extensions

__all__ = [
    "EXAMPLES",
    "Antecedent",
    "Argument",
    "Attack",
    "AttackAnswer",
    "AttackCheck",
    "Case",
    "Characterized",
    "DialecticProtocol",
    "Dialogue",
    "MainArgumentAnswer",
    "Rule",
    "Stance",
    "admissible_kinds",
    "call_bound",
    "camera_reference_backend",
    "check_attack",
    "classify",
    "defeats",
    "grounded_extension",
    "grounded_labelling",
    "load_example",
    "preferred_extensions",
    "run_dialogue",
    "turn_bound",
]
