"""One gate on every path (issue 35): the degenerate outputs seen over the class path get the same
marks whatever carries them -- in-process, an OpenAI-compatible server, Ollama's protocol, the
class gateway -- and gated text never becomes anyone's context.

The engine answers what the embedded model was seen to answer over llama.cpp's server (the
first attempt of each request, at temperature 0) and something else on the gate's one retry
(sampled anew: temperature 0.7 and the next seed, :func:`argnb.gate.resample`), so every path
sends it the same requests and must record the same turns.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from argnb.gate import REASONS, strings
from argnb.llm import OllamaBackend, OpenAIBackend, ScriptedBackend
from argnb.llm.scripted import Request
from argnb.llm.testserver import ProtocolServer
from argnb.roundtable import Session, record
from argnb.roundtable.testing import speech, table_backend
from argnb.transcript import Rejected

TOPIC = "Should students be allowed to use AI tools like ChatGPT for homework?"
#: what the class path showed (issue 35), by request; each stopped by the gate
SEEN = {
    "agenda": {
        "scope": "Your task is to answer a JSON with the specified criteria.",
        "criteria": ["maxLength:200", "type:", "string"],
        "welcome": "You are welcome!",
    },
    "step": "{{<text>}",
    "step_retry": (
        f"Your task is to answer the question: {TOPIC} Your response should contain at least 3 "
        "sentences. The response must have exactly 2 paragraphs."
    ),
    "speech": "Your task has been completed. You may now ask for the next step.",
    "analysis": {
        "summary": [
            f"Your task is to answer the question: {TOPIC} Your response should contain at *",
            "multiple sentences with a single JSON object.",
        ],
        "agreements": ["I think that it is very, V"],
        "open_questions": [],
        "argument_map": [],
    },
    "analysis_retry": {
        "summary": ["This answer cannot be used."],
        "agreements": ["The answer is not available."],
        "open_questions": [],
        "argument_map": [],
    },
}
#: words that must never reach a prompt (the gate's own, and the marks of what it stopped)
NEVER = (*REASONS.values(), "cannot be used", "{{<text>}", "Your response should")


def texts(raw: str) -> list[str]:
    """The strings of a recorded answer (a structured one is JSON)."""
    try:
        return [text for _, text in strings(json.loads(raw))]
    except ValueError:
        return [raw]


def retry(req: Request) -> bool:
    return req.options.temperature >= 0.7


def degenerate(req: Request) -> Any:
    """The engine of every path: what the class path showed, then the retry's answer."""
    title = (req.schema or {}).get("title", "")
    if title == "AgendaAnswer":
        return SEEN["agenda"]
    if title == "ModeratorStep":
        names = req.schema["properties"]["next_speaker"]["enum"]
        message = SEEN["step_retry"] if retry(req) else SEEN["step"]
        return {"intent": "invite", "message": message, "next_speaker": names[0]}
    if title == "RoundtableAnalysis":
        return SEEN["analysis_retry"] if retry(req) else SEEN["analysis"]
    who = re.search(r"What do you think, (.+?)\?", req.prompt)
    return speech(who.group(1) if who else "I", 30) if retry(req) else SEEN["speech"]


@contextlib.contextmanager
def paths(engine: ScriptedBackend, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A backend per path, each reaching ``engine``."""
    from tests.classroom.test_gateway import gateway, learner

    with ProtocolServer(engine, models=["m"]) as srv, gateway(srv.url + "/v1", tmp_path) as gw:
        yield {
            "in-process": engine,
            "openai": OpenAIBackend("m", base_url=srv.url + "/v1", api_key="x", max_retries=0),
            "ollama": OllamaBackend("m", host=srv.url, max_retries=0),
            "class gateway": learner(gw[0]),
        }


def run(backend: Any) -> Session:
    s = Session(TOPIC, moderator=backend, deliberators=[backend, backend], analyzer=backend,
                human="You", turns=3, analyze_every=3, word_limit=60)  # fmt: skip
    return s.run(["I use AI to get maths explained, but some friends just copy the answers."])


def marks(s: Session) -> list[tuple[str, str, bool, str]]:
    """Each turn as the record keeps it: speaker, role, valid, and the gate's reason."""
    out = []
    for t in s.transcript.turns:
        gate = t.payload.gate if isinstance(t.payload, Rejected) else ""
        out.append((t.speaker, t.role, t.valid, gate))
    return out


def shown(s: Session) -> list[str]:
    """Every text the record shows as said or found: turns, analysis fields, map labels."""
    tr = s.transcript
    out = [text for _, text in record.said(tr)]
    for a in s.analyses:
        out += [*a.summary, *a.agreements, *a.open_questions]
        for arg in a.arguments:
            out += [arg.claim, *arg.premises]
            out += [x for c in arg.counterarguments for x in (c.objection, c.rebuttal)]
    return out


def test_the_same_outputs_get_the_same_marks_on_every_path(tmp_path) -> None:
    engine = ScriptedBackend(degenerate, model="m")
    with paths(engine, tmp_path) as backends:
        sessions = {name: run(b) for name, b in backends.items()}
    first = marks(sessions["in-process"])
    gated = [m for m in first if m[3]]
    # the agenda, every moderator step, the deliberators' first words and both analyses
    assert {m[1] for m in gated} >= {
        "gated agenda",
        "gated moderator",
        "gated contribution",
        "gated analysis",
    }
    for name, s in sessions.items():
        assert marks(s) == first, name
        for text in shown(s):
            assert not any(x in text for x in NEVER), (name, text)
        assert s.analysis is None  # no usable analysis: none is shown as one
        assert [t for t in s.transcript.turns if t.role == "analysis"][-1].valid is False


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    picks=st.lists(st.integers(0, 9), min_size=40, max_size=40),
    turns=st.integers(2, 5),
)
def test_gated_text_never_enters_a_prompt(picks, turns) -> None:
    """Random sessions on an engine that answers degenerate outputs (or usable ones) at random:
    no request holds a stopped answer's text or any of the gate's own words."""
    calls = iter(picks * 20)
    table = table_backend()._fn  # type: ignore[attr-defined]

    def answer(req: Request) -> Any:
        return degenerate(req) if next(calls) < 6 else table(req)

    engine = ScriptedBackend(answer, model="m")
    s = Session(TOPIC, moderator=engine, deliberators=[engine, engine], analyzer=engine,
                human="You", turns=turns, analyze_every=2, word_limit=60)  # fmt: skip
    s.run(["Copying worries me.", "Rules would help."])
    stopped = [  # each string of each answer the gate stopped
        text
        for t in s.transcript.turns
        if isinstance(t.payload, Rejected) and t.payload.gate
        for text in texts(t.payload.raw)
        if len(text) > 30
    ]
    for req in engine.requests:
        prompt = req.prompt
        assert not any(x in prompt for x in NEVER), prompt[-400:]
        assert not any(raw in prompt for raw in stopped)
