"""One rule for loops: an argument's spoken text and the synthesis never say a sentence twice.

What the protocol reasons over -- the argument's rules, whose consequents an attack must name --
is recorded as answered; the turn's text, the map label read from it, and the final answer keep
each sentence once (``argnb.words.drop_repeats``, as in roundtable and debate).
"""

from __future__ import annotations

from argnb.dialectic import Argument, run_dialogue
from argnb.dialectic.examples import camera_reference_answer
from argnb.llm.scripted import Request, ScriptedBackend

CLAIM = "We should buy a. We should buy a. It is the best one."
ANSWER = "Choose camera c. Choose camera c! It is user-friendly and lasts the day."


def test_a_main_argument_is_spoken_once_and_kept_whole_for_the_rules():
    arg = Argument.simple(["a is compact", "a is light"], CLAIM)

    def script(req: Request):
        if req.schema["title"] == "MainArgumentAnswer":
            return {"argument": arg.model_dump()}
        return {"can_defeat": "NO", "attack": "none", "target": "", "argument": None}

    d = run_dialogue(ScriptedBackend(script), "camera")
    argue = next(t for t in d.transcript.turns if t.role == "argue")
    assert argue.text == "We should buy a. It is the best one."
    assert argue.payload.argument.claim == CLAIM, "the rules reason over the answer as given"
    assert d.outcome == "justified" and d.final_answer == "We should buy a. It is the best one."


def test_the_synthesis_says_no_sentence_twice():
    def script(req: Request):
        if req.schema["title"] == "FinalAnswer":
            return {"final_answer": ANSWER}
        return camera_reference_answer(req)

    d = run_dialogue(ScriptedBackend(script), "camera")
    assert d.outcome == "synthesis"
    once = "Choose camera c. It is user-friendly and lasts the day."
    assert d.final_answer == once
    answer = next(t for t in d.transcript.turns if t.role == "answer")
    assert answer.text == once and answer.payload.final_answer == once
    assert d.arguments[answer.payload.arg_id].argument.claim == once
