"""The protocol on the embedded model (SmolLM2-135M): it must terminate with schema-valid turns.

The model is far too small to argue well; these tests check the machinery, not the answers.
"""

from __future__ import annotations

import json

import pytest

from argnb.dialectic import Argument, call_bound, run_dialogue
from argnb.dialectic.schemas import AttackAnswer, MainArgumentAnswer, strip_computed
from argnb.llm import Options

pytestmark = pytest.mark.model


def test_camera_on_the_embedded_model_terminates_with_schema_valid_turns():
    import argnb

    backend = argnb.connect("local", cache=False)
    # 160 tokens: the model rarely gets an argument through the checks anyway; what is proved
    # is that the dialogue ends and every turn validates or says why it was rejected
    d = run_dialogue(backend, "camera", max_attacks=1, options=Options(max_tokens=160))
    assert d.terminated and d.outcome in ("justified", "synthesis", "none")
    assert d.transcript.outcome["model_calls"] <= call_bound(1)
    for t in d.transcript.turns:
        if not t.valid:
            assert t.payload["problems"], "a rejected turn says why"
            continue
        if "argument" in t.payload:
            Argument.model_validate(strip_computed(t.payload["argument"]))
        if t.role == "argue":
            MainArgumentAnswer.model_validate({"argument": strip_computed(t.payload["argument"])})
        if t.role == "attack":
            AttackAnswer.model_validate(
                {k: t.payload[k] for k in ("can_defeat", "attack", "target")}
                | {"argument": strip_computed(t.payload["argument"])}
            )
    json.dumps(d.summary())  # the CLI's last line
